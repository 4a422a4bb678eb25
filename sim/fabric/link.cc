#include "fabric/link.h"

#include <fmt/format.h>

#include <cmath>
#include <stdexcept>

#include "core/sim.h"
#include "fabric/fabric.h"
#include "trace/trace.h"

namespace nicsim::fabric {

void Link::inspect(const void* self, InspectRows& rows) {
  const Link& l = *static_cast<const Link*>(self);
  add_row(rows, "state", l.fsm_.state_name());
  add_row(rows, "ends", fmt::format("{} <-> {}", l.a_.path(), l.b_.path()));
  add_row(rows, "bandwidth", format_bandwidth(l.bps_));
  add_row(rows, "delay", format_time(l.delay_));
  l.a_.inspect(rows);
  l.b_.inspect(rows);
}

const FsmType& LinkMachine::type() {
  using S = LinkState;
  using E = LinkEvent;
  static const FsmType type =
      make_fsm_type<LinkMachine>("link", {{S::Up, E::Down, S::Down, "link_down"}, {S::Down, E::Up, S::Up, "link_up"}});
  return type;
}

Link::Link(std::string name, std::uint32_t index, Port& a, Port& b, const ParamSet& params, std::uint64_t seed)
    : name_(std::move(name)),
      index_(index),
      a_(a),
      b_(b),
      bps_(params.bandwidth("bandwidth")),
      delay_(params.time("delay")),
      vls_(static_cast<int>(params.count("vls"))),
      vl_blocks_(static_cast<std::uint32_t>(params.size("vl_buffer") / kCreditBlock)),
      vl15_packets_(static_cast<std::uint32_t>(params.count("vl15_buffer"))),
      drop_rate_(params.ratio("drop_rate")),
      ber_(params.ratio("bit_error_rate")),
      rng_(seed, "link:" + name_),
      rng_ba_(seed, "link:" + name_ + ":b-a"),
      fsm_(name_, a.owner().device_id(), LinkState::Up),
      inspectable_("link", name_, &Link::inspect, this) {
  Sim::get().fsm().declare<LinkMachine>();
  a_.connect(*this, b_);
  b_.connect(*this, a_);
  mirror();
}

void Link::mirror() {
  const bool injects = drop_rate_ > 0 || ber_ > 0;
  if (injects != injecting_) a_.owner().fabric().count_injecting(injects ? 1 : -1);
  injecting_ = injects;
  for (Port* p : {&a_, &b_}) {
    p->up_ = up();
    p->injects_ = injects;
    p->generation_ = generation_;
  }
}

void Link::set_drop_rate(double r) {
  drop_rate_ = r;
  mirror();
}

void Link::set_bit_error_rate(double ber) {
  ber_ = ber;
  mirror();
}

void Link::set_up(bool up, std::string_view cause) {
  if (up == this->up()) return;
  if (!fsm_.fire(up ? LinkEvent::Up : LinkEvent::Down, cause)) return;
  // Packets on the wire when the link goes down are lost; their credits come
  // back to the sender (the receiver never held them), and packets still in
  // a receiver's buffer return theirs when it frees them. So the credit
  // count stays exact across down/up with no resynchronisation.
  if (!up) {
    ++generation_;
    last_down_ = now();
    a_.down_at_ = b_.down_at_ = last_down_;
    a_.owner().fabric().link_went_down();
  } else {
    a_.owner().fabric().link_came_up();
  }
  mirror();
  for (Port* p : {&a_, &b_}) tell_end(*p, up);
}

void Link::tell_end(Port& end, bool up) {
  // Each end changes as its own block: what its device schedules then
  // takes that block's places, wherever the change came from.
  Calendar::BlockScope as_end(Sim::get().calendar(), end.owner().block());
  if (end.trace_on)
    Sim::get().tracer().record(now(), end.owner().device_id(), Component::fault, up ? "link_up" : "link_down",
                               {{"port", end.number()}, {"link", name_}});
  end.owner().link_state_changed(end, up);
  end.pump();  // a down link discards what is queued on it
}

void Link::set_end_up(Port& end, bool up, std::string_view cause) {
  if (end.up_ == up) return;
  if (&end == &a_) {
    if (!fsm_.fire(up ? LinkEvent::Up : LinkEvent::Down, cause)) return;
    if (!up) {
      ++generation_;
      last_down_ = now();
      a_.owner().fabric().link_went_down();
    } else {
      a_.owner().fabric().link_came_up();
    }
  }
  end.up_ = up;
  if (!up) {
    ++end.generation_;
    end.down_at_ = now();
  }
  tell_end(end, up);
}

void Link::set_end_rates(Port& end, double drop_rate, double bit_error_rate) {
  drop_rate_ = drop_rate;
  ber_ = bit_error_rate;
  const bool injects = drop_rate_ > 0 || ber_ > 0;
  if (&end == &a_ && injects != injecting_) {
    a_.owner().fabric().count_injecting(injects ? 1 : -1);
    injecting_ = injects;
  }
  mirror_end(end);
}

void Link::mirror_end(Port& end) const { end.injects_ = drop_rate_ > 0 || ber_ > 0; }

void Link::set_cut() {
  if (cut_) return;
  cut_ = true;
  a_.cut_ = b_.cut_ = true;
  a_.owner().fabric().count_cut_link();
}

bool Link::pass_injecting(Packet& p, Rng& rng) {
  if (drop_rate_ > 0 && rng.chance(drop_rate_)) return false;
  if (ber_ > 0) {
    const double bits = static_cast<double>(p.bytes.size()) * 8.0;
    const double p_error = -std::expm1(bits * std::log1p(-ber_));
    if (rng.chance(p_error)) {
      const std::uint64_t bit = rng.below(p.bytes.size() * 8);
      p.bytes[bit / 8] ^= static_cast<std::uint8_t>(1u << (bit % 8));
      ++p.meta.bit_errors;
    }
  }
  return true;
}

void Fabric::add_device(Device* d) {
  if (devices_.size() <= d->device_id()) devices_.resize(d->device_id() + 1, nullptr);
  devices_[d->device_id()] = d;
}

void Wiring::place(PortRef end, PortRef peer) {
  if (end.port == 0) throw std::logic_error(fmt::format("wiring: device {} has no port 0", end.device));
  if (peers_.size() <= end.device) peers_.resize(end.device + 1);
  std::vector<PortRef>& ports = peers_[end.device];
  if (ports.size() < end.port) ports.resize(end.port);
  ports[end.port - 1] = peer;
}

void Wiring::connect(PortRef a, PortRef b) {
  place(a, b);
  place(b, a);
}

PortRef Wiring::peer(std::uint32_t device, std::uint32_t port) const {
  if (device >= peers_.size() || port == 0 || port > peers_[device].size()) return {};
  return peers_[device][port - 1];
}

Link& Fabric::connect(std::string name, Port& a, Port& b, const ParamSet& params, std::uint64_t seed) {
  wiring_.connect({a.owner().device_id(), a.number()}, {b.owner().device_id(), b.number()});
  links_.push_back(
      std::make_unique<Link>(std::move(name), static_cast<std::uint32_t>(links_.size()), a, b, params, seed));
  return *links_.back();
}

Link* Fabric::link(std::string_view name) const {
  for (auto& l : links_)
    if (l->name() == name) return l.get();
  return nullptr;
}

}  // namespace nicsim::fabric
