#include "elite/elite_switch.h"

#include "elite/elite_packets.h"

#include <fmt/format.h>

#include <algorithm>

#include "core/sim.h"
#include "fabric/fabric.h"
#include "trace/stats.h"
#include "trace/trace.h"

namespace nicsim::elite {

namespace {

using fabric::Packet;
using fabric::Port;

// Published Elite figures: an 8x8 crossbar with 2 virtual channels, about
// 35 ns per switch; links of 400 MB/s per direction (elite_tree.h).
const ParamRegistration elite_switch_params(
    "switch.elite", "a Quadrics Elite switch: 8 ports (1-4 down, 5-8 up), 2 virtual channels, cut-through",
    {
        {"hop_latency",
         UnitKind::Time,
         "35ns",
         "0ps",
         "100us",
         {},
         "head in to head out through the crossbar (wormhole/cut-through)"},
        {"adaptive",
         UnitKind::Bool,
         "true",
         "",
         "",
         {},
         "choose the up port by load (false: digit <level> of the destination, fixed)"},
        {"sticky",
         UnitKind::Bool,
         "true",
         "",
         "",
         {},
         "an Elan packet follows its (source, destination) pair's packets still queued here for an up port"},
        {"combine",
         UnitKind::Bool,
         "true",
         "",
         "",
         {},
         "join the replies of a broadcast's copies into one on the way back (network conditionals); false: "
         "each node's reply returns to the sender alone"},
        {"combine_hold",
         UnitKind::Time,
         "1ms",
         "1us",
         "1s",
         {},
         "how long a copied broadcast waits for the rest of its copies' replies (one lost on the way never "
         "comes; the sender's timer resends)"},
    });

}  // namespace

EliteSwitch::EliteSwitch(fabric::Fabric& fabric, std::uint32_t device_id, std::string name, const ParamSet& params,
                         Place place, std::uint32_t nodes)
    : Device(fabric, device_id, std::move(name)),
      place_(place),
      hop_latency_(params.time("hop_latency")),
      nodes_(nodes),
      adaptive_(params.flag("adaptive")),
      sticky_(params.flag("sticky")),
      combine_(params.flag("combine")) {
  combine_hold_ = params.time("combine_hold");
  add_ports(kPorts);
  for (std::uint32_t i = 1; i <= kPorts; ++i) port(i).send_vl0_only();
  auto& stats = Sim::get().stats();
  const std::string& me = this->name();
  stats.counter(me, "forwarded", "packets", &stats_.forwarded, "unicast packets sent on");
  stats.counter(me, "broadcasts", "packets", &stats_.broadcasts, "broadcast packets handled");
  stats.counter(me, "broadcast_copies", "packets", &stats_.broadcast_copies, "broadcast copies sent down");
  for (std::uint32_t u = 0; u < kArity; ++u)
    stats.counter(me, fmt::format("up_port{}", kFirstUpPort + u), "packets", &stats_.up_choices[u],
                  "packets sent up this port (adaptive choice)");
  stats.counter(me, "unroutable", "packets", &stats_.unroutable,
                "destination or broadcast range outside the machine (discarded)");
  stats.counter(me, "dead_route", "packets", &stats_.dead_route,
                "discarded: the route's link is down, or every up link is");
  stats.counter(me, "broadcast_lost", "packets", &stats_.broadcast_lost,
                "broadcast copies not sent because their down link is down");
  stats.counter(me, "sticky", "packets", &stats_.sticky,
                "up packets that followed their pair's packets queued on an up port");
  stats.counter(me, "replies_combined", "replies", &stats_.replies_combined,
                "replies of broadcast copies joined into another on the way back");
  stats.counter(me, "combinations_expired", "packets", &stats_.combinations_expired,
                "copied broadcasts whose copies' replies did not all come back within combine_hold");
}

void EliteSwitch::unicast(Port& in, Packet* p, Tick ready) {
  const std::uint32_t d = p->meta.dlid;
  if (d >= nodes_) {
    discard(in, p, &EliteSwitchStats::unroutable, "destination outside the machine");
    return;
  }
  std::uint32_t out;
  if (in_subtree(d, d)) {
    out = down_port(d);
    if (!alive(out)) {
      discard(in, p, &EliteSwitchStats::dead_route, "down link is down");
      return;
    }
  } else {
    if (in.number() >= kFirstUpPort) {
      // Came down into a subtree that does not hold the destination.
      discard(in, p, &EliteSwitchStats::unroutable, "misrouted: destination not below");
      return;
    }
    out = choose_up(*p);
    if (out == 0) {
      discard(in, p, &EliteSwitchStats::dead_route, "every up link is down");
      return;
    }
  }
  ++stats_.forwarded;
  send(in, p, out, ready, "forward");
}

void EliteSwitch::receive(Port& in, Packet* p) {
  const Tick ready = now() + hop_latency_;
  if (p->meta.keep_route) {
    // A reply comes back through this switch in the same time (carry_through).
    p->route_latency += hop_latency_;
    ++p->route_carriers;
  }
  if (p->meta.dlid_hi == 0)
    unicast(in, p, ready);
  else
    broadcast(in, p, ready);
}

void EliteSwitch::broadcast(Port& in, Packet* p, Tick ready) {
  const std::uint32_t lo = p->meta.dlid, hi = p->meta.dlid_hi;
  if (lo > hi || hi >= nodes_) {
    discard(in, p, &EliteSwitchStats::unroutable, "broadcast range outside the machine");
    return;
  }
  ++stats_.broadcasts;
  const bool from_below = in.number() < kFirstUpPort;
  if (from_below && !in_subtree(lo, hi)) {
    const std::uint32_t out = choose_up(*p);
    if (out == 0) {
      discard(in, p, &EliteSwitchStats::dead_route, "every up link is down");
      return;
    }
    send(in, p, out, ready, "broadcast_up");
    return;
  }
  broadcast_down(in, p, ready);
}

void EliteSwitch::broadcast_down(Port& in, Packet* p, Tick ready) {
  const std::uint32_t lo = p->meta.dlid, hi = p->meta.dlid_hi;
  const std::uint64_t child = pow4(place_.level);
  std::array<std::uint32_t, kArity> outs{};
  std::uint32_t copies = 0;
  for (std::uint32_t q = 0; q < kArity; ++q) {
    const std::uint64_t first = place_.base + q * child, last = first + child - 1;
    if (last < lo || first > hi || first >= nodes_) continue;
    if (!alive(q + 1)) {
      ++stats_.broadcast_lost;
      if (in.trace_on)
        Sim::get().tracer().record(now(), device_id(), Component::fabric, "no_route",
                                   {{"port", q + 1}, {"pkt", p->meta.id}, {"why", "broadcast down link is down"}});
      continue;
    }
    outs[copies++] = q + 1;
  }
  if (copies == 0) {
    // Nothing of the range lies below (or every way down is dead).
    if (hi < place_.base || lo >= place_.base + span())
      discard(in, p, &EliteSwitchStats::unroutable, "misrouted: broadcast range not below");
    else
      discard(in, p, &EliteSwitchStats::dead_route, "every down link of the range is down");
    return;
  }
  stats_.broadcast_copies += copies;
  if (copies == 1) {
    send(in, p, outs[0], ready, "broadcast_down");
    return;
  }
  if (combine_ && p->meta.combine_replies) open_combination(*p, copies);
  p->copies_left = copies;
  for (std::uint32_t i = 0; i < copies; ++i) {
    Packet* c = fabric().pool().clone(*p);
    c->parent = p;
    c->tail_at = p->tail_at;
    send(in, c, outs[i], ready, "broadcast_down");
  }
}

bool EliteSwitch::sticky_kind(const Packet& p) { return p.meta.dlid_hi == 0 && p.meta.kind == fabric::kPacketElan; }

std::uint32_t EliteSwitch::choose_up(const Packet& p) {
  if (!adaptive_) {
    const std::uint32_t out = kFirstUpPort + static_cast<std::uint32_t>(p.meta.dlid / pow4(place_.level) % kArity);
    return alive(out) ? out : 0;
  }
  if (!sticky_ || !sticky_kind(p)) return choose_up_by_load();
  Flow& f = flow(flow_key(p));
  // (A pair never seen has port 0, which alive() must not be asked about.)
  if (((f.queued > 0 && port(f.port).queued() > 0) || f.starts_at > now()) && alive(f.port)) {
    ++stats_.sticky;
  } else {
    f.port = choose_up_by_load();
    f.queued = 0;
    f.starts_at = 0;
    if (f.port == 0) return 0;
  }
  ++f.queued;
  return f.port;
}

std::uint32_t EliteSwitch::choose_up_by_load() {
  std::uint32_t best = 0;
  std::uint32_t best_queued = 0;
  Tick best_free = 0;
  const Tick t = now();
  for (std::uint32_t i = 0; i < kArity; ++i) {
    const std::uint32_t out = kFirstUpPort + (rotate_ + i) % kArity;
    if (!alive(out)) continue;
    const fabric::Port& o = port(out);
    const std::uint32_t queued = o.queued();
    const Tick free = std::max(o.busy_until(), t);
    if (best == 0 || queued < best_queued || (queued == best_queued && free < best_free)) {
      best = out;
      best_queued = queued;
      best_free = free;
    }
  }
  if (best) rotate_ = static_cast<std::uint8_t>((best - kFirstUpPort + 1) % kArity);
  return best;
}

std::size_t EliteSwitch::flow_slot(std::uint32_t key) const {
  // Fibonacci hashing: the top bits of key * 2^32/phi.
  const std::size_t mask = flow_slots_ - 1;
  std::size_t i = static_cast<std::size_t>((key * 0x9E3779B97F4A7C15ull) >> 32) & mask;
  while (flows_[i].used && flows_[i].key != key) i = (i + 1) & mask;
  return i;
}

EliteSwitch::Flow* EliteSwitch::find_flow(std::uint32_t key) {
  if (flow_count_ == 0) return nullptr;
  FlowSlot& s = flows_[flow_slot(key)];
  return s.used ? &s.flow : nullptr;
}

EliteSwitch::Flow& EliteSwitch::flow(std::uint32_t key) {
  if (2 * (flow_count_ + 1) > flow_slots_) {
    const std::uint32_t old_slots = flow_slots_;
    const std::unique_ptr<FlowSlot[]> old = std::move(flows_);
    flow_slots_ = old_slots == 0 ? 32 : 2 * old_slots;
    flows_ = std::make_unique<FlowSlot[]>(flow_slots_);
    for (std::uint32_t i = 0; i < old_slots; ++i)
      if (old[i].used) flows_[flow_slot(old[i].key)] = old[i];
  }
  FlowSlot& s = flows_[flow_slot(key)];
  if (!s.used) {
    s.used = true;
    s.key = key;
    s.flow = Flow{};
    ++flow_count_;
  }
  return s.flow;
}

void EliteSwitch::transmitted(Port& port, const Packet& p, Tick start, Tick end) {
  if (port.number() < kFirstUpPort || flow_count_ == 0 || !sticky_kind(p)) return;
  Flow* f = find_flow(flow_key(p));
  if (!f || f->port != port.number()) return;
  if (f->queued > 0) --f->queued;
  f->starts_at = start;
}

void EliteSwitch::link_state_changed(Port& port, bool up) {
  // Packets queued on a dead up link are dropped by the port (counted
  // there): their pairs choose again.
  if (up || port.number() < kFirstUpPort) return;
  for (std::uint32_t i = 0; i < flow_slots_; ++i)
    if (flows_[i].used && flows_[i].flow.port == port.number()) flows_[i].flow = Flow{};
}

void EliteSwitch::send(Port& in, Packet* p, std::uint32_t out, Tick ready, const char* what) {
  Port& o = port(out);
  if (out >= kFirstUpPort) ++stats_.up_choices[out - kFirstUpPort];
  p->ready_at = ready;
  if (in.trace_on)
    Sim::get().tracer().record(now(), device_id(), Component::fabric, what,
                               {{"in", in.number()}, {"out", out}, {"pkt", p->meta.id}});
  o.send(p);
}

Tick EliteSwitch::carry_through(Port& in, Port& out, const Packet& reply, Tick at) {
  if (in.trace_on)
    Sim::get().tracer().record(at, device_id(), Component::fabric, "token",
                               {{"in", in.number()}, {"out", out.number()}, {"pkt", reply.meta.id}});
  return hop_latency_;
}

void EliteSwitch::open_combination(const Packet& p, std::uint32_t copies) {
  const fabric::ReplyCombiner join = fabric::reply_combiner(p.meta.kind);
  if (!join) return;
  // A combination still open after combine_hold lost a reply on the way.
  const Tick t = now();
  while (!combinations_.empty() && combinations_.front().opened + combine_hold_ < t) {
    if (combinations_.front().reply) fabric().pool().put(combinations_.front().reply);
    ++stats_.combinations_expired;
    combinations_.erase(combinations_.begin());
  }
  combinations_.push_back({p.meta.id, join, copies, nullptr, 0, 0, t});
}

bool EliteSwitch::combine_reply(Port& in, Packet* reply, std::uint64_t packet_id, int hop, Tick at, Tick ser) {
  auto it = std::find_if(combinations_.begin(), combinations_.end(),
                         [packet_id](const Combination& c) { return c.packet == packet_id; });
  if (it == combinations_.end()) return false;
  if (in.trace_on)
    Sim::get().tracer().record(at, device_id(), Component::fabric, "token_combine",
                               {{"in", in.number()}, {"pkt", reply->meta.id}, {"for", packet_id}, {"left", it->left}});
  if (it->reply) {
    it->join(*it->reply, *reply);
    fabric().pool().put(reply);
    ++stats_.replies_combined;
  } else {
    it->reply = reply;
  }
  it->head = std::max(it->head, at);
  it->ser = std::max(it->ser, ser);
  if (--it->left > 0) return true;
  const Combination done = *it;
  combinations_.erase(it);
  Port::carry_on(done.reply, packet_id, hop, done.head, done.ser);
  return true;
}

void EliteSwitch::discard(Port& in, Packet* p, std::uint64_t EliteSwitchStats::*counter, const char* why) {
  ++(stats_.*counter);
  if (in.trace_on)
    Sim::get().tracer().record(now(), device_id(), Component::fabric, "no_route",
                               {{"port", in.number()},
                                {"pkt", p->meta.id},
                                {"dlid", static_cast<unsigned>(p->meta.dlid)},
                                {"dlid_hi", static_cast<unsigned>(p->meta.dlid_hi)},
                                {"why", why}});
  in.release(*p, now());
  fabric().pool().put(p);
}

}  // namespace nicsim::elite
