// How a cut link's traffic crosses to another process: a packet's arrival
// at the far port, a credit's return to the sender and a carried reply going
// on, each written as the far port's identity (device id, port number) and
// what the event carries.
#include <fmt/format.h>

#include <algorithm>

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
  if (!d || !d->has_port(number))
    throw std::runtime_error(fmt::format("block exchange: no port {} on device {} in this process", number, device));
  return d->port(number);
}

Port* get_route_entry(Fabric& fabric, ByteReader& in) {
  const auto device = in.get<std::uint32_t>();
  const auto number = in.get<std::uint32_t>();
  Device* d = fabric.device(device);
  if (!d || number == 0 || number > d->num_ports())
    throw std::runtime_error(fmt::format("block exchange: no port {} on device {} in a route", number, device));
  return d->has_port(number) ? &d->port(number) : route_mark(device, number);
}

// A recorded route travels as its ports' identities, with what was summed
// along it. Where a process has no object for a port, the entry is the
// port's mark (route_mark).
void put_route(ByteWriter& out, const Packet& p) {
  const int hops = std::min<int>(p.meta.hops, kRouteSlots);
  for (int i = 0; i < hops; ++i) {
    if (is_route_mark(p.route[i])) {
      out.put(route_mark_device(p.route[i]));
      out.put(route_mark_port(p.route[i]));
    } else {
      put_port(out, *p.route[i]);
    }
  }
  out.put(p.route_latency);
  out.put(p.route_ps_per_byte);
  out.put(p.route_carriers);
  out.put(p.route_link_downs);
}

void get_route(Fabric& fabric, ByteReader& in, Packet& p) {
  const int hops = std::min<int>(p.meta.hops, kRouteSlots);
  for (int i = 0; i < hops; ++i) p.route[i] = get_route_entry(fabric, in);
  p.route_latency = in.get<Tick>();
  p.route_ps_per_byte = in.get<std::uint32_t>();
  p.route_carriers = in.get<std::uint32_t>();
  p.route_link_downs = in.get<std::uint64_t>();
}

// A packet that keeps its route, and every carried reply, takes it along.
void put_packet(ByteWriter& out, const Packet& p, bool with_route) {
  out.put(static_cast<std::uint8_t>(with_route));
  out.put(static_cast<std::uint32_t>(p.bytes.size()));
  out.put_bytes(p.bytes.data(), p.bytes.size());
  out.put(p.meta);
  if (with_route) put_route(out, p);
}

Packet* get_packet(Fabric& fabric, ByteReader& in) {
  const bool with_route = in.get<std::uint8_t>() != 0;
  const auto len = in.get<std::uint32_t>();
  Packet* p = fabric.pool().adopt(len);
  in.get_bytes(p->bytes.data(), len);
  p->meta = in.get<PacketMeta>();
  if (with_route) get_route(fabric, in, *p);
  return p;
}

// The packet leaves this process: what the far port reads of it travels,
// and it goes back to the pool here.
void encode_arrival(void* ctx, void* obj, std::uint64_t arg, ByteWriter& out) {
  auto& fabric = *static_cast<Fabric*>(ctx);
  auto* p = reinterpret_cast<Packet*>(arg);
  put_port(out, *static_cast<Port*>(obj));
  put_packet(out, *p, p->meta.keep_route);
  out.put(p->wire_generation);
  out.put(p->tail_at);
  fabric.pool().put(p);
}

void decode_arrival(void* ctx, ByteReader& in, void*& obj, std::uint64_t& arg) {
  auto& fabric = *static_cast<Fabric*>(ctx);
  obj = &get_port(fabric, in);
  Packet* p = get_packet(fabric, in);
  p->wire_generation = in.get<std::uint32_t>();
  p->tail_at = in.get<Tick>();
  arg = reinterpret_cast<std::uint64_t>(p);
}

// A carried reply going on over a cut link (Port::carried_thunk): the
// reply with the route it walks back and where it is on it.
void encode_carried(void* ctx, void* obj, std::uint64_t arg, ByteWriter& out) {
  auto& fabric = *static_cast<Fabric*>(ctx);
  auto* reply = reinterpret_cast<Packet*>(arg);
  put_port(out, *static_cast<Port*>(obj));
  put_packet(out, *reply, true);
  out.put(reply->carry_for);
  out.put(reply->carry_ser);
  out.put(reply->carry_entered);
  out.put(reply->carry_hop);
  out.put(reply->carry_last_cut);
  fabric.pool().put(reply);
}

void decode_carried(void* ctx, ByteReader& in, void*& obj, std::uint64_t& arg) {
  auto& fabric = *static_cast<Fabric*>(ctx);
  obj = &get_port(fabric, in);
  Packet* reply = get_packet(fabric, in);
  reply->carry_for = in.get<std::uint64_t>();
  reply->carry_ser = in.get<Tick>();
  reply->carry_entered = in.get<Tick>();
  reply->carry_hop = in.get<std::int32_t>();
  reply->carry_last_cut = in.get<std::int32_t>();
  arg = reinterpret_cast<std::uint64_t>(reply);
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
  exchange.register_kind({"carried reply", &Port::carried_thunk, &fabric, &encode_carried, &decode_carried});
}

}  // namespace nicsim::fabric
