// Replies carried back along a packet's route (Port::carry_back): the
// Elan3's acknowledgement tokens. See port.h for the model.
#include <fmt/format.h>

#include <stdexcept>

#include "core/sim.h"
#include "fabric/fabric.h"
#include "fabric/link.h"
#include "fabric/port.h"
#include "trace/trace.h"

namespace nicsim::fabric {

Tick Device::carry_through(Port& in, Port& out, const Packet& reply, Tick) {
  throw std::logic_error(fmt::format("{}: a reply (packet {}) was carried back through this device from port {} "
                                     "to port {}, but it does not carry replies (only Elite switches do)",
                                     name(), reply.meta.id, in.number(), out.number()));
}

void Device::take_reply(Port& at, Packet* reply) {
  Sim::get().error(name(), fmt::format("a reply (packet {}, kind {}) was carried back to port {}, but this "
                                       "device takes no replies: dropped",
                                       reply->meta.id, static_cast<unsigned>(reply->meta.kind), at.number()));
  fabric().pool().put(reply);
}

Port* Port::carry_back(const Packet& data, Packet* reply, Tick start) {
  const int hops = data.meta.hops;
  if (hops == 0) throw std::logic_error(fmt::format("carry_back: packet {} crossed no link", data.meta.id));
  Fabric& fabric = data.route[0]->owner_->fabric();
  PacketPool& pool = fabric.pool();
  if (hops > kRouteSlots) {
    Sim::get().error(data.route[0]->owner_->name(),
                     fmt::format("packet {} crossed {} links, more than the {} a route is recorded for: its reply "
                                 "cannot be carried back and is dropped",
                                 data.meta.id, hops, kRouteSlots));
    pool.put(reply);
    return nullptr;
  }
  const std::size_t size = reply->bytes.size();
  Sim& sim = Sim::get();
  reply->meta.hops = 0;
  reply->meta.injected = start;
  reply->route_link_downs = fabric.link_downs();
  Tick head = start;  // the reply's head leaving the current port
  Tick ser = 0;       // its serialisation on the slowest link so far
  for (int i = hops - 1; i >= 0; --i) {
    Port* rx = data.route[i];  // sent the data over link i; receives the reply
    Port* tx = rx->peer_;      // received the data; sends the reply back
    if (!tx || !tx->up_) {
      if (tx) tx->lose_reply(reply, &Port::drops_link_down_, "link_down", head);
      pool.put(reply);
      return nullptr;
    }
    if (tx->injects_ && !tx->link_->pass(*reply)) {
      tx->lose_reply(reply, &Port::drops_injected_, "injected_drop", head);
      pool.put(reply);
      return nullptr;
    }
    if (reply->meta.bit_errors) ++tx->bit_errors_;
    const Tick link_ser = tx->serialization(size);
    ser = std::max(ser, link_ser);
    ++tx->tx_packets_;
    tx->tx_bytes_ += size;
    tx->tx_busy_ += link_ser;
    fabric.count_hop();
    if (tx->trace_on)
      sim.tracer().record(head, tx->owner_->device_id(), Component::fabric, "tx_reply",
                          {{"port", tx->number_}, {"pkt", reply->meta.id}, {"len", size}, {"for", data.meta.id}});
    if (tx->tapped_) tx->tap_(tx->tap_ctx_, *reply, head);
    reply->route[reply->meta.hops] = tx;
    reply->route_gen[reply->meta.hops] = tx->generation_;
    ++reply->meta.hops;
    head += tx->delay_;
    ++rx->rx_packets_;
    rx->rx_bytes_ += size;
    if (i > 0) head += rx->owner_->carry_through(*rx, *data.route[i - 1]->peer_, *reply, head);
  }
  Port* source = data.route[0];
  reply->tail_at = head + ser;
  source->owner_->take_reply(*source, reply);
  return source;
}

bool Port::route_intact(const Packet& reply) {
  const int hops = reply.meta.hops;
  if (hops == 0 || reply.route[0]->owner_->fabric().link_downs() == reply.route_link_downs) return true;
  for (int i = 0; i < hops; ++i) {
    Port* tx = reply.route[i];
    if (tx->generation_ == reply.route_gen[i]) continue;
    tx->lose_reply(&reply, &Port::drops_link_down_, "lost_in_flight", Calendar::now());
    return false;
  }
  return true;
}

void Port::lose_reply(const Packet* reply, std::uint64_t Port::*counter, const char* why, Tick when) {
  ++(this->*counter);
  if (trace_on)
    Sim::get().tracer().record(when, owner_->device_id(), Component::fabric, "drop",
                               {{"port", number_}, {"pkt", reply->meta.id}, {"why", why}});
}

}  // namespace nicsim::fabric
