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

// Carried replies walk their route back at once, reading every switch and
// link on it: they cannot cross partition blocks.
bool Port::crosses_cut(const Packet& data, Packet* reply) {
  for (int i = 0; i < data.meta.hops; ++i) {
    const Port* hop = data.route[i];
    if (!hop->cut_) continue;
    Sim::get().error(hop->path(), fmt::format("the reply to packet {} would be carried back over cut link {}: "
                                              "carried replies do not cross partition blocks",
                                              data.meta.id, hop->link_->name()));
    hop->owner_->fabric().pool().put(reply);
    return true;
  }
  return false;
}

Port* Port::carry_back(const Packet& data, Packet* reply, Tick start) {
  const int hops = data.meta.hops;
  if (hops == 0) throw std::logic_error(fmt::format("carry_back: packet {} crossed no link", data.meta.id));
  if (!data.meta.keep_route)
    throw std::logic_error(fmt::format("carry_back: packet {} was sent without meta.keep_route", data.meta.id));
  Port* source = data.route[0];
  Fabric& fabric = source->owner_->fabric();
  if (hops > kRouteSlots) {
    Sim::get().error(source->owner_->name(),
                     fmt::format("packet {} crossed {} links, more than the {} a route is recorded for: its reply "
                                 "cannot be carried back and is dropped",
                                 data.meta.id, hops, kRouteSlots));
    fabric.pool().put(reply);
    return nullptr;
  }
  if (fabric.cut_links() != 0 && crosses_cut(data, reply)) return nullptr;
  reply->meta.hops = static_cast<std::uint16_t>(hops);
  reply->meta.injected = start;
  reply->meta.combine_replies = data.meta.combine_replies;
  reply->route_link_downs = fabric.link_downs();
  std::copy_n(data.route, hops, reply->route);
  if (data.route_carriers == static_cast<std::uint32_t>(hops - 1) && data.route_ps_per_byte != kRouteInexact &&
      !data.meta.combine_replies && fabric.links_plain()) {
    // Every link is up and clean and nobody watches: the route's latency was
    // summed on the way out; nothing of the links needs reading.
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

Port* Port::carry_from(Packet* reply, std::uint64_t packet_id, int from, Tick head, Tick ser) {
  Port* source = reply->route[0];
  Fabric& fabric = source->owner_->fabric();
  Sim& sim = Sim::get();
  const std::size_t size = reply->bytes.size();
  for (int i = from; i >= 0; --i) {
    Port* rx = reply->route[i];  // sent the data over link i; receives the reply
    Port* tx = rx->peer_;        // received the data; sends the reply back
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
    ser = std::max(ser, tx->serialization(size));
    fabric.count_hop();
    if (tx->trace_on)
      sim.tracer().record(head, tx->owner_->device_id(), Component::fabric, "tx_reply",
                          {{"port", tx->number_}, {"pkt", reply->meta.id}, {"len", size}, {"for", packet_id}});
    if (tx->tapped_) tx->tap_(tx->tap_ctx_, *reply, head);
    head += tx->delay_;
    if (i == 0) break;
    if (reply->meta.combine_replies && rx->owner_->combine_reply(*rx, reply, packet_id, i, head, ser)) return nullptr;
    head += rx->owner_->carry_through(*rx, *reply->route[i - 1]->peer_, *reply, head);
  }
  reply->tail_at = head + ser;
  source->owner_->take_reply(*source, reply);
  return source;
}

bool Port::route_intact(const Packet& reply) {
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
