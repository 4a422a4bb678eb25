// Replies carried back along a packet's route (Port::carry_back), such as
// acknowledgement tokens. See port.h for the model.
#include <fmt/format.h>

#include <stdexcept>

#include "core/sim.h"
#include "fabric/fabric.h"
#include "fabric/link.h"
#include "fabric/port.h"
#include "trace/trace.h"

namespace nicsim::fabric {

Tick Device::carry_through(Port& in, Port& out, const Packet& reply, Tick) {
  throw std::logic_error(
      fmt::format("{}: a reply (packet {}) was carried back through this device from port {} "
                  "to port {}, but it does not carry replies",
                  name(), reply.meta.id, in.number(), out.number()));
}

void Device::take_reply(Port& at, Packet* reply) {
  Sim::get().error(name(), fmt::format("a reply (packet {}, kind {}) was carried back to port {}, but this "
                                       "device takes no replies: dropped",
                                       reply->meta.id, static_cast<unsigned>(reply->meta.kind), at.number()));
  fabric().pool().put(reply);
}

bool Port::route_has_cut(const Packet& data) {
  // A mark names a port of another process: the route crossed to it.
  for (int i = 0; i < data.meta.hops; ++i)
    if (is_route_mark(data.route[i]) || data.route[i]->cut_) return true;
  return false;
}

Port* Port::carry_back(Port& at, const Packet& data, Packet* reply, Tick start) {
  const int hops = data.meta.hops;
  if (hops == 0) throw std::logic_error(fmt::format("carry_back: packet {} crossed no link", data.meta.id));
  if (!data.meta.keep_route)
    throw std::logic_error(fmt::format("carry_back: packet {} was sent without meta.keep_route", data.meta.id));
  Fabric& fabric = at.owner_->fabric();
  if (hops > kRouteSlots) {
    Sim::get().error(at.owner_->name(),
                     fmt::format("packet {} crossed {} links, more than the {} a route is recorded for: its reply "
                                 "cannot be carried back and is dropped",
                                 data.meta.id, hops, kRouteSlots));
    fabric.pool().put(reply);
    return nullptr;
  }
  const bool cut = fabric.cut_links() != 0 && route_has_cut(data);
  reply->meta.hops = static_cast<std::uint16_t>(hops);
  reply->carry_last_cut = -1;
  reply->meta.injected = start;
  reply->meta.combine_replies = data.meta.combine_replies;
  reply->route_link_downs = fabric.link_downs();
  std::copy_n(data.route, hops, reply->route);
  if (!cut && data.route_carriers == static_cast<std::uint32_t>(hops - 1) && data.route_ps_per_byte != kRouteInexact &&
      !data.meta.combine_replies && fabric.links_plain()) {
    // Every link is up and clean and nobody watches: the route's latency was
    // summed on the way out; nothing of the links needs reading. With no
    // cut on the route the source is in this process.
    Port* source = data.route[0];
    reply->tail_at = start + data.route_latency + reply->bytes.size() * Tick{data.route_ps_per_byte};
    fabric.count_hops(hops);
    source->owner_->take_reply(*source, reply);
    return source;
  }
  return carry_from(reply, data.meta.id, hops - 1, start, 0);
}

Port* Port::carry_on(Packet* reply, std::uint64_t packet_id, int hop, Tick head, Tick ser) {
  Port* rx = reply->route[hop];
  head += rx->owner_->carry_through(*rx, *reply->route[hop - 1]->peer_, *reply, head);
  return carry_from(reply, packet_id, hop - 1, head, ser);
}

// Sends the reply back over link `from` and on towards the source.
Port* Port::carry_from(Packet* reply, std::uint64_t packet_id, int from, Tick head, Tick ser) {
  Port* rx = reply->route[from];  // sent the data over link `from`; receives the reply
  Port* tx = rx->peer_;           // received the data; sends the reply back
  Fabric& fabric = rx->owner_->fabric();
  if (!tx || !tx->up_) {
    if (tx) tx->lose_reply(reply, &Port::drops_link_down_, "link_down", head);
    fabric.pool().put(reply);
    return nullptr;
  }
  if (tx->injects_ && !tx->link_->pass(*reply, *tx)) {
    tx->lose_reply(reply, &Port::drops_injected_, "injected_drop", head);
    fabric.pool().put(reply);
    return nullptr;
  }
  const std::size_t size = reply->bytes.size();
  ser = std::max(ser, tx->serialization(size));
  fabric.count_hop();
  if (tx->trace_on)
    Sim::get().tracer().record(head, tx->owner_->device_id(), Component::fabric, "tx_reply",
                               {{"port", tx->number_}, {"pkt", reply->meta.id}, {"len", size}, {"for", packet_id}});
  if (tx->tapped_) tx->tap_(tx->tap_ctx_, *reply, head);
  if (tx->cut_) {
    cross_cut(reply, packet_id, from, head, head + tx->delay_, ser);
    return nullptr;
  }
  return reached(reply, packet_id, from, head + tx->delay_, ser);
}

// The reply's head reached route[hop] at `head`: taken in at the source,
// kept to combine, or carried through towards it.
Port* Port::reached(Packet* reply, std::uint64_t packet_id, int hop, Tick head, Tick ser) {
  Port* rx = reply->route[hop];
  if (hop == 0) {
    reply->tail_at = head + ser;
    rx->owner_->take_reply(*rx, reply);
    return rx;
  }
  if (reply->meta.combine_replies && rx->owner_->combine_reply(*rx, reply, packet_id, hop, head, ser)) return nullptr;
  return carry_on(reply, packet_id, hop, head, ser);
}

// Over a cut link the reply becomes an event of the far block, at its
// head's arrival: at least the link's delay ahead, so within the lookahead.
void Port::cross_cut(Packet* reply, std::uint64_t packet_id, int hop, Tick entered, Tick head, Tick ser) {
  Port* rx = reply->route[hop];
  reply->carry_for = packet_id;
  reply->carry_hop = hop;
  reply->carry_ser = ser;
  reply->carry_entered = entered;
  Sim::get().calendar().at_on(rx->owner_->block(), head, &Port::carried_thunk, rx,
                              reinterpret_cast<std::uint64_t>(reply));
}

void Port::carried_thunk(void* self, std::uint64_t reply_word) {
  auto* rx = static_cast<Port*>(self);
  auto* reply = reinterpret_cast<Packet*>(reply_word);
  const Tick t = now();
  // This end of the link went down while the reply was on it: lost there.
  if (!rx->up_ || (rx->down_at_ != kTickMax && rx->down_at_ >= reply->carry_entered)) {
    rx->lose_reply(reply, &Port::drops_link_down_, "lost_in_flight", t);
    rx->owner_->fabric().pool().put(reply);
    return;
  }
  reply->carry_last_cut = reply->carry_hop;
  reached(reply, reply->carry_for, reply->carry_hop, t, reply->carry_ser);
}

bool Port::route_intact(const Packet& reply) {
  if (reply.carry_last_cut >= 0) {
    // It crossed a cut: the links from the last one to the source are this
    // block's, checked by their receiving ends (the cut links were checked
    // as the reply arrived over them).
    for (int i = reply.carry_last_cut - 1; i >= 0; --i) {
      Port* rx = reply.route[i];
      if (rx->down_at_ == kTickMax || rx->down_at_ < reply.meta.injected) continue;
      if (Port* tx = rx->peer_) tx->lose_reply(&reply, &Port::drops_link_down_, "lost_in_flight", rx->down_at_);
      return false;
    }
    return true;
  }
  const int hops = reply.meta.hops;
  if (hops == 0 || reply.route[0]->owner_->fabric().link_downs() == reply.route_link_downs) return true;
  for (int i = hops - 1; i >= 0; --i) {
    Port* rx = reply.route[i];
    const Tick down = rx->link_->last_down();
    if (down == kTickMax || down < reply.meta.injected) continue;
    // The link failed after the reply was sent over its route: lost there.
    if (Port* tx = rx->peer_) tx->lose_reply(&reply, &Port::drops_link_down_, "lost_in_flight", down);
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
