#include "ib_fabric/switch.h"

#include <fmt/format.h>

#include "core/sim.h"
#include "fabric/fabric.h"
#include "ib_fabric/switch_sma.h"
#include "trace/stats.h"
#include "trace/trace.h"

namespace nicsim::fabric {

Switch::Switch(Fabric& fabric, std::uint32_t device_id, std::string name, const ParamSet& params)
    : Device(fabric, device_id, std::move(name)),
      hop_latency_(params.time("hop_latency")),
      store_and_forward_(params.text("mode") == "store_and_forward"),
      fifo_inputs_(params.text("input_queue") == "fifo"),
      inspectable_("ib.switch", this->name(), &Switch::inspect, this) {
  routing::parse_engine(params.text("routing"), &routing_engine_);  // the parameter's choices are the engines
  add_ports(static_cast<std::uint32_t>(params.count("ports")));
  if (fifo_inputs_) {
    inputs_.resize(num_ports() * kDataVls);
    heads_on_.resize(num_ports() + 1u);
  }
  sma_ = std::make_unique<SwitchSma>(*this, params.time("sma_latency"));
  auto& stats = Sim::get().stats();
  stats.counter(this->name(), "forwarded", "packets", &stats_.forwarded, "unicast packets sent on");
  stats.counter(this->name(), "replicated", "packets", &stats_.replicated, "multicast copies made");
  stats.counter(this->name(), "dropped_no_route", "packets", &stats_.dropped_no_route,
                "no forwarding entry, or routed back out of its input port");
  stats.counter(this->name(), "dropped_port_state", "packets", &stats_.dropped_port_state,
                "data through a port that is not Active (subnet manager not done)");
  stats.counter(this->name(), "head_of_line_waits", "packets", &stats_.head_of_line_waits,
                "unicast packets that waited for the one ahead of them on their input VL to cross (input_queue fifo)");
}

Switch::~Switch() = default;

void Switch::link_state_changed(Port& port, bool up) {
  sma_->link_changed(port.number(), up);
  if (up || inputs_.empty()) return;
  // The heads queued for a link that went down were dropped with its queue.
  auto& heads = heads_on_[port.number()];
  const auto gone = heads;
  heads.clear();
  for (const auto& [p, slot] : gone) head_left(slot);
}

void Switch::set_managed(bool managed) { sma_->set_managed(managed); }

void Switch::set_route(std::uint16_t dlid, std::uint32_t port) {
  if (dlid >= kMulticastLidBase) throw std::logic_error("unicast route for a multicast LID");
  if (port > num_ports()) throw std::logic_error(fmt::format("{}: route to port {} of {}", name(), port, num_ports()));
  if (lft_.size() <= dlid) lft_.resize(dlid + 1u, 0);
  lft_[dlid] = static_cast<std::uint8_t>(port);
}

void Switch::set_routes(std::vector<std::uint8_t> table) {
  if (table.size() > kMulticastLidBase) throw std::logic_error("unicast routes for multicast LIDs");
  for (std::uint8_t port : table)
    if (port > num_ports())
      throw std::logic_error(fmt::format("{}: route to port {} of {}", name(), port, num_ports()));
  lft_ = std::move(table);
}

void Switch::set_multicast(std::uint16_t mlid, std::vector<std::uint32_t> ports) {
  if (mlid < kMulticastLidBase) throw std::logic_error("multicast route for a unicast LID");
  std::size_t i = mlid - kMulticastLidBase;
  if (mft_.size() <= i) mft_.resize(i + 1);
  mft_[i] = std::move(ports);
}

const std::vector<std::uint32_t>& Switch::multicast_ports(std::uint16_t mlid) const {
  static const std::vector<std::uint32_t> none;
  std::size_t i = mlid - kMulticastLidBase;
  return mlid >= kMulticastLidBase && i < mft_.size() ? mft_[i] : none;
}

bool Switch::forward_unicast(Port& in, Packet* p) {
  const bool managed = sma_->managed();
  const std::uint32_t out = route(p->meta.dlid);
  if (out == 0 || out == in.number()) {
    drop_unroutable(in, p);
    return false;
  }
  if (managed && !sma_->port_active(out)) {
    ++stats_.dropped_port_state;
    in.release(*p, now());
    fabric().pool().put(p);
    return false;
  }
  ++stats_.forwarded;
  if (in.trace_on)
    Sim::get().tracer().record(now(), device_id(), Component::fabric, "forward",
                               {{"in", in.number()}, {"out", out}, {"pkt", p->meta.id}});
  // A packet for a link that is down is dropped by its port at once: it
  // holds nothing back.
  if (fifo_inputs_ && p->meta.vl < kDataVls && port(out).up()) {
    const std::uint32_t slot = input_slot(in, p->meta.vl);
    inputs_[slot].head = p;
    heads_on_[out].push_back({p, slot});
  }
  port(out).send(p);
  return true;
}

// An input's head was committed to its output: it crosses from `start` to
// `end`, and the packet behind it may go once its tail has left.
void Switch::transmitted(Port& port, const Packet& p, Tick, Tick end) {
  if (!fifo_inputs_) return;
  auto& heads = heads_on_[port.number()];
  for (std::size_t i = 0; i < heads.size(); ++i) {
    if (heads[i].first != &p) continue;
    const std::uint32_t slot = heads[i].second;
    heads[i] = heads.back();
    heads.pop_back();
    inputs_[slot].free_at = end;
    head_left(slot);
    return;
  }
}

// The head no longer holds its input VL (it was committed, or lost with its
// link): the packet behind it goes when the input is free.
void Switch::head_left(std::uint32_t slot) {
  InputQueue& q = inputs_[slot];
  q.head = nullptr;
  if (q.first) Sim::get().calendar().at_member<&Switch::next_from_input>(std::max(q.free_at, now()), this, slot);
}

void Switch::next_from_input(std::uint64_t slot) {
  InputQueue& q = inputs_[slot];
  Port& in = port(static_cast<std::uint32_t>(slot / kDataVls) + 1);
  while (q.first && !q.head && q.free_at <= now()) {
    Packet* p = q.first;
    q.first = p->next;
    if (!q.first) q.last = nullptr;
    p->next = nullptr;
    p->ready_at = std::max(p->ready_at, now());
    forward_unicast(in, p);
  }
}

void Switch::drop_unroutable(Port& in, Packet* p) {
  ++stats_.dropped_no_route;
  if (in.trace_on)
    Sim::get().tracer().record(
        now(), device_id(), Component::fabric, "no_route",
        {{"port", in.number()}, {"pkt", p->meta.id}, {"dlid", static_cast<unsigned>(p->meta.dlid)}});
  in.release(*p, now());
  fabric().pool().put(p);
}

void Switch::receive(Port& in, Packet* p) {
  if (p->meta.vl == kVl15) {
    sma_->receive(in, p);  // subnet management: the SMA's business
    return;
  }
  const bool managed = sma_->managed();
  if (managed && !sma_->port_active(in.number())) {
    ++stats_.dropped_port_state;
    in.release(*p, now());
    fabric().pool().put(p);
    return;
  }
  const Tick ready = (store_and_forward_ ? p->tail_at : now()) + hop_latency_;
  const std::uint16_t dlid = p->meta.dlid;
  if (dlid < kMulticastLidBase) {
    p->ready_at = ready;
    if (fifo_inputs_ && p->meta.vl < kDataVls) {
      const std::uint32_t slot = input_slot(in, p->meta.vl);
      InputQueue& q = inputs_[slot];
      // Behind a head, or behind packets already waiting (whose wake-up is
      // pending), or ready before the last head's tail has crossed. (A packet
      // ready no earlier goes to its output now, as any packet does ahead of
      // its routing delay.)
      if (q.head || q.first || q.free_at > ready) {
        ++stats_.head_of_line_waits;
        const bool wake = !q.head && !q.first;
        p->next = nullptr;
        (q.last ? q.last->next : q.first) = p;
        q.last = p;
        if (wake) Sim::get().calendar().at_member<&Switch::next_from_input>(q.free_at, this, slot);
        return;
      }
    }
    forward_unicast(in, p);
    return;
  }
  // Multicast: one copy per member port except the one it came in on; the
  // original keeps the input buffer until the last copy has left.
  const auto& ports = multicast_ports(dlid);
  std::uint32_t copies = 0;
  for (std::uint32_t out : ports)
    if (out != in.number() && (!managed || sma_->port_active(out))) ++copies;
  if (copies == 0) {
    drop_unroutable(in, p);
    return;
  }
  p->copies_left = copies;
  for (std::uint32_t out : ports) {
    if (out == in.number() || (managed && !sma_->port_active(out))) continue;
    Packet* c = fabric().pool().clone(*p);
    c->parent = p;
    c->ready_at = ready;
    c->tail_at = p->tail_at;
    ++stats_.replicated;
    if (in.trace_on)
      Sim::get().tracer().record(now(), device_id(), Component::fabric, "replicate",
                                 {{"in", in.number()}, {"out", out}, {"pkt", p->meta.id}});
    port(out).send(c);
  }
}

// The settings, the counters, then the linear forwarding table (routed
// LIDs only) and the multicast one.
void Switch::inspect(const void* self, InspectRows& rows) {
  const Switch& sw = *static_cast<const Switch*>(self);
  add_row(rows, "ports", std::to_string(sw.num_ports()));
  add_row(rows, "mode", sw.store_and_forward_ ? "store_and_forward" : "cut_through");
  add_row(rows, "hop_latency", format_time(sw.hop_latency_));
  add_row(rows, "input_queue", sw.fifo_inputs_ ? "fifo" : "any");
  add_row(rows, "routing", routing::engine_name(sw.routing_engine_));
  add_row(rows, "forwarded", std::to_string(sw.stats_.forwarded));
  add_row(rows, "replicated", std::to_string(sw.stats_.replicated));
  add_row(rows, "dropped_no_route", std::to_string(sw.stats_.dropped_no_route));
  add_row(rows, "dropped_port_state", std::to_string(sw.stats_.dropped_port_state));
  add_row(rows, "head_of_line_waits", std::to_string(sw.stats_.head_of_line_waits));
  std::size_t routed = 0;
  for (std::size_t lid = 1; lid < sw.lft_.size(); ++lid)
    if (sw.lft_[lid]) {
      ++routed;
      add_row(rows, fmt::format("lft[{}]", lid), fmt::format("port {}", sw.lft_[lid]));
    }
  add_row(rows, "lft_routed", std::to_string(routed));
  for (std::size_t i = 0; i < sw.mft_.size(); ++i) {
    if (sw.mft_[i].empty()) continue;
    std::string ports;
    for (std::uint32_t p : sw.mft_[i]) ports += (ports.empty() ? "" : " ") + std::to_string(p);
    add_row(rows, fmt::format("mft[{:#x}]", 0xC000 + i), "ports " + ports);
  }
}

}  // namespace nicsim::fabric
