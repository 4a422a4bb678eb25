// How a cut link's traffic crosses to another process: a packet's arrival
// at the far port and a credit's return to the sender, each written as the
// far port's identity (device id, port number) and what the event carries.
#include <fmt/format.h>

#include "core/block_exchange.h"
#include "fabric/fabric.h"
#include "fabric/port.h"

namespace nicsim::fabric {

namespace {

void put_port(ByteWriter& out, const Port& port) {
  out.put(port.owner().device_id());
  out.put(port.number());
}

Port& get_port(Fabric& fabric, ByteReader& in) {
  const auto device = in.get<std::uint32_t>();
  const auto number = in.get<std::uint32_t>();
  Device* d = fabric.device(device);
  if (!d || number == 0 || number > d->num_ports())
    throw std::runtime_error(fmt::format("block exchange: no port {} on device {}", number, device));
  return d->port(number);
}

// The packet leaves this process: what the far port reads of it travels,
// and it goes back to the pool here.
void encode_arrival(void* ctx, void* obj, std::uint64_t arg, ByteWriter& out) {
  auto& fabric = *static_cast<Fabric*>(ctx);
  auto* p = reinterpret_cast<Packet*>(arg);
  if (p->meta.keep_route)
    throw std::logic_error(fmt::format("packet {} keeps its route and cannot cross to another process", p->meta.id));
  put_port(out, *static_cast<Port*>(obj));
  out.put(static_cast<std::uint32_t>(p->bytes.size()));
  out.put_bytes(p->bytes.data(), p->bytes.size());
  out.put(p->meta);
  out.put(p->wire_generation);
  out.put(p->tail_at);
  fabric.pool().put(p);
}

void decode_arrival(void* ctx, ByteReader& in, void*& obj, std::uint64_t& arg) {
  auto& fabric = *static_cast<Fabric*>(ctx);
  obj = &get_port(fabric, in);
  const auto len = in.get<std::uint32_t>();
  Packet* p = fabric.pool().adopt(len);
  in.get_bytes(p->bytes.data(), len);
  p->meta = in.get<PacketMeta>();
  p->wire_generation = in.get<std::uint32_t>();
  p->tail_at = in.get<Tick>();
  arg = reinterpret_cast<std::uint64_t>(p);
}

void encode_credit(void*, void* obj, std::uint64_t arg, ByteWriter& out) {
  put_port(out, *static_cast<Port*>(obj));
  out.put(arg);
}

void decode_credit(void* ctx, ByteReader& in, void*& obj, std::uint64_t& arg) {
  obj = &get_port(*static_cast<Fabric*>(ctx), in);
  arg = in.get<std::uint64_t>();
}

}  // namespace

void Port::register_cross_events(Fabric& fabric, BlockExchange& exchange) {
  exchange.register_kind({"packet arrival", &Port::arrive_thunk, &fabric, &encode_arrival, &decode_arrival});
  exchange.register_kind({"credit return", &Port::credit_thunk, &fabric, &encode_credit, &decode_credit});
}

}  // namespace nicsim::fabric
