#include "fabric/port.h"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

#include "core/sim.h"
#include "fabric/fabric.h"
#include "fabric/link.h"
#include "trace/timeline.h"
#include "trace/trace.h"

namespace nicsim::fabric {

Device::Device(Fabric& fabric, std::uint32_t device_id, std::string name)
    : fabric_(fabric), device_id_(device_id), name_(std::move(name)) {
  fabric_.add_device(this);
}

Device::~Device() = default;

void Device::add_ports(std::uint32_t count) {
  for (std::uint32_t i = 0; i < count; ++i)
    ports_.push_back(std::make_unique<Port>(*this, static_cast<std::uint32_t>(ports_.size() + 1)));
}

void Device::add_port_slots(std::uint32_t count) { ports_.resize(ports_.size() + count); }

Port& Device::build_port(std::uint32_t number) {
  std::unique_ptr<Port>& slot = ports_.at(number - 1);
  if (!slot) slot = std::make_unique<Port>(*this, number);
  return *slot;
}

void Device::not_built(std::uint32_t number) const {
  throw std::logic_error(
      fmt::format("{}.port{}: another process runs {} and no link from this process's devices "
                  "reaches that port, so this process has no stand-in for it",
                  name_, number, name_));
}

Port::Port(Device& owner, std::uint32_t number) : owner_(&owner), number_(number) {}

PortStats Port::stats() const {
  PortStats s;
  s.rx_packets = rx_packets_;
  s.rx_bytes = rx_bytes_;
  s.tx_packets = tx_packets_;
  s.tx_bytes = tx_bytes_;
  s.tx_busy = tx_busy_;
  s.credit_stalls = credit_stalls_;
  s.drops_link_down = drops_link_down_;
  s.drops_injected = drops_injected_;
  s.bit_errors = bit_errors_;
  s.drops_vl15_full = drops_vl15_full_;
  return s;
}

std::string Port::path() const { return fmt::format("{}.port{}", owner_->name(), number_); }

void Port::connect(Link& link, Port& peer) {
  link_ = &link;
  peer_ = &peer;
  bits_per_second_ = link.bits_per_second();
  // Whole picoseconds per byte: the serialisation time is then a product,
  // the same as the rounded-up quotient serialization_time() computes.
  constexpr Tick kBitPs = 8 * kSec;
  // (Kept in 32 bits, as every link faster than 1,863 bit/s has it.)
  const Tick per_byte = bits_per_second_ != 0 && kBitPs % bits_per_second_ == 0 ? kBitPs / bits_per_second_ : 0;
  ps_per_byte_ = per_byte <= UINT32_MAX ? static_cast<std::uint32_t>(per_byte) : 0;
  delay_ = link.delay();
  vls_ = static_cast<std::uint8_t>(link.vls());
  fifo_ = vls_ == 1 || vl0_only_;
  if (vls_ > kInlineVls) {
    more_vls_ = std::make_unique<VlQueue[]>(vls_);
    vl_ = more_vls_.get();
  }
  vl_blocks_ = link.vl_buffer_blocks();
  vl15_slots_ = link.vl15_buffer_packets();
  reset_credits();
}

void Port::deliver_after_tail(Tick extra) {
  if (extra >= kAtHead)
    throw std::invalid_argument(
        fmt::format("{}: deliver_after_tail({} ps): at most {} ps", path(), extra, kAtHead - 1));
  after_tail_ = static_cast<std::uint32_t>(extra);
}

void Port::set_tap(Tap tap, void* ctx) {
  tap_ = tap;
  tap_ctx_ = ctx;
  tapped_ = tap != nullptr;
  if (tapped_) owner_->fabric().watch_ports();
}

void Port::send_vl0_only() {
  vl0_only_ = true;
  if (vls_ > 0 && queued_ == 0) fifo_ = true;
}

void Port::send(Packet* p) {
  const int vl = p->meta.vl;
  // The common case in one test (vls_ is 0 on an unconnected port, and
  // VL15 is never below it); anything else is checked in full.
  if (vl < vls_ && p->blocks() <= vl_blocks_) [[likely]] {
    if (vl != 0) fifo_ = vl0_only_ = false;  // (a one-VL link has only VL 0)
    p->next = nullptr;
    VlQueue& q = vl_[vl];
    if (q.tail)
      q.tail->next = p;
    else
      q.head = p;
    q.tail = p;
    ++queued_;
    pump();
    return;
  }
  send_checked(p);
}

void Port::send_checked(Packet* p) {
  const int vl = p->meta.vl;
  if (!peer_) {
    Sim::get().error(path(), fmt::format("packet {} sent on an unconnected port", p->meta.id));
    drop(p, &Port::drops_link_down_, "unconnected");
    return;
  }
  if (vl == kVl15) {
    // Management packets queue apart: no credits, ahead of the data VLs.
    p->next = nullptr;
    if (vl15_tail_)
      vl15_tail_->next = p;
    else
      vl15_head_ = p;
    vl15_tail_ = p;
    ++queued_;
    pump();
    return;
  }
  if (vl >= vls_) {
    Sim::get().error(path(), fmt::format("packet {} on VL {} but the link has {} VL(s)", p->meta.id, vl, vls_));
    drop(p, &Port::drops_link_down_, "bad_vl");
    return;
  }
  Sim::get().error(path(), fmt::format("packet {} of {} B is larger than the peer's VL buffer ({} B)", p->meta.id,
                                       p->bytes.size(), vl_blocks_ * kCreditBlock));
  drop(p, &Port::drops_link_down_, "too_big");
}

// Inlined into pump_arbitrated(), its only caller.
[[gnu::always_inline]] inline void Port::absorb_credits(Tick now) {
  std::size_t n = 0;
  while (n < pending_credits_.size() && pending_credits_[n].at <= now) {
    const CreditReturn& c = pending_credits_[n];
    add_credits(c.vl, c.blocks);
    ++n;
  }
  if (n) pending_credits_.pop_front(n);
}

namespace {

// More credits than buffer: an accounting bug somewhere. Say so, and keep the
// sender within the real buffer.
[[gnu::cold, gnu::noinline]] void clamp_credits(const Port& port, int vl, std::uint32_t& credits,
                                                std::uint32_t buffer_blocks) {
  Sim::get().error(port.path(),
                   fmt::format("VL {} credits {} exceed the peer's buffer of {} blocks", vl, credits, buffer_blocks));
  credits = buffer_blocks;
}

}  // namespace

inline void Port::add_credits(int vl, std::uint32_t blocks) {
  std::uint32_t& c = vl_[vl].credits;
  c += blocks;
  if (c > vl_blocks_) clamp_credits(*this, vl, c, vl_blocks_);
}

std::uint32_t Port::credits(int vl) const {
  if (vl < 0 || vl >= vls_) return 0;
  std::uint32_t c = vl_[vl].credits;
  for (std::size_t i = 0; i < pending_credits_.size(); ++i) {
    const CreditReturn& r = pending_credits_[i];
    if (r.at <= Calendar::now() && r.vl == vl) c += r.blocks;
  }
  return link_ ? std::min(c, vl_blocks_) : c;
}

void Port::schedule_wake(Tick at) {
  if (at >= wake_at_) return;  // an earlier wake is already pending
  wake_at_ = at;
  Sim::get().calendar().at(at, &Port::wake_thunk, this);
}

void Port::wake_thunk(void* self, std::uint64_t) {
  auto* port = static_cast<Port*>(self);
  if (Calendar::now() >= port->wake_at_) port->wake_at_ = kTickMax;
  port->pump();
}

void Port::pump() {
  if (pumping_) return;  // re-entered from a transmitted() hook: the loop below continues
  pumping_ = true;
  const Tick now = Calendar::now();
  const bool is_up = up_;
  while (vl15_head_) {
    Packet* p = vl15_head_;
    vl15_head_ = p->next;
    if (!vl15_head_) vl15_tail_ = nullptr;
    p->next = nullptr;
    --queued_;
    if (!is_up)
      drop(p, &Port::drops_link_down_, "link_down");
    else
      transmit(p, std::max(now, busy_until_));
  }
  if (fifo_)
    pump_fifo(now, is_up);
  else
    pump_arbitrated(now, is_up);
  pumping_ = false;
}

Packet* Port::pop(int vl) {
  VlQueue& q = vl_[vl];
  Packet* p = q.head;
  q.head = p->next;
  if (!q.head) q.tail = nullptr;
  p->next = nullptr;
  --queued_;
  return p;
}

bool Port::credits_by(int vl, std::uint32_t need, Tick& at) {
  // Credits on hand, else the earliest time enough of the pending returns
  // will have arrived (they are then counted as held from that time on).
  at = 0;
  if (vl_[vl].credits >= need) return true;
  if (fifo_) {
    // One data VL in use: every pending return is for it (VL15 takes no
    // credits), and those taken are the first n.
    std::uint32_t have = vl_[vl].credits;
    std::size_t n = 0;
    const std::size_t pending = pending_credits_.size();
    while (n < pending && have < need) have += pending_credits_[n++].blocks;
    if (have < need) return false;
    at = pending_credits_[n - 1].at;
    for (std::size_t i = 0; i < n; ++i) add_credits(vl, pending_credits_[i].blocks);
    pending_credits_.pop_front(n);
    return true;
  }
  std::uint32_t have = vl_[vl].credits;
  std::size_t n = 0;
  bool other_vls = false;
  for (; n < pending_credits_.size() && have < need; ++n) {
    if (pending_credits_[n].vl == vl)
      have += pending_credits_[n].blocks;
    else
      other_vls = true;
  }
  if (have < need) return false;
  at = pending_credits_[n - 1].at;
  for (std::size_t i = 0; i < n; ++i)
    if (pending_credits_[i].vl == vl) add_credits(vl, pending_credits_[i].blocks);
  if (!other_vls) {
    pending_credits_.pop_front(n);
    return true;
  }
  std::size_t kept = 0;
  for (std::size_t i = 0; i < pending_credits_.size(); ++i)
    if (i >= n || pending_credits_[i].vl != vl) pending_credits_[kept++] = pending_credits_[i];
  pending_credits_.truncate(kept);
  return true;
}

inline void Port::pump_fifo(Tick now, bool is_up) {
  // Returns that have arrived are taken now, so that a port committing
  // ahead (it takes credits only when it runs short) keeps few pending.
  if (vl_[0].head) absorb_credits(now);
  while (vl_[0].head) {
    if (!is_up) {
      drop(pop(0), &Port::drops_link_down_, "link_down");
      continue;
    }
    Tick credit_at;
    if (!credits_by(0, vl_[0].head->blocks(), credit_at)) return;  // a credit return pumps again
    const Tick free = std::max(now, busy_until_);
    if (credit_at > free) ++credit_stalls_;  // the wire was free; credits were not
    rr_next_ = vls_ > 1 ? 1 : 0;             // where the round robin would go next after VL 0
    transmit(pop(0), std::max(free, credit_at));
  }
}

inline void Port::pump_arbitrated(Tick now, bool is_up) {
  while (queued_ > 0) {
    if (busy_until_ > now) {
      schedule_wake(busy_until_);
      return;
    }
    absorb_credits(now);
    int chosen = -1;
    bool stalled = false;
    for (int i = 0; i < vls_; ++i) {
      int vl = rr_next_ + i;  // modulo vls_, without a division
      if (vl >= vls_) vl -= vls_;
      Packet* h = vl_[vl].head;
      if (!h) continue;
      if (!is_up || vl_[vl].credits >= h->blocks()) {
        chosen = vl;
        break;
      }
      stalled = true;
    }
    if (chosen < 0) {
      if (stalled) {
        if (!stalled_) ++credit_stalls_;
        stalled_ = true;
        if (!pending_credits_.empty()) schedule_wake(pending_credits_.front().at);
      }
      return;
    }
    stalled_ = false;
    rr_next_ = static_cast<std::uint8_t>(chosen + 1 == vls_ ? 0 : chosen + 1);
    Packet* p = pop(chosen);
    if (!is_up) {
      drop(p, &Port::drops_link_down_, "link_down");
      continue;
    }
    transmit(p, now);
  }
}

void Port::transmit(Packet* p, Tick earliest) {
  const Tick ser = serialization(p->bytes.size());
  // Cut-through: the first bit leaves once the device is ready, but never so
  // early that the tail would leave before it has arrived.
  Tick start = std::max(earliest, p->ready_at);
  if (p->tail_at > start + ser) start = p->tail_at - ser;
  const Tick end = start + ser;
  const int vl = p->meta.vl;
  busy_until_ = end;
  if (vl != kVl15) vl_[vl].credits -= p->blocks();
  tx_busy_ += ser;
  ++tx_packets_;
  tx_bytes_ += p->bytes.size();
  owner_->fabric().count_hop();
  if (p->meta.hops == 0) p->meta.injected = start;
  leave_buffer(p, end);

  Sim& sim = Sim::get();
  if (trace_on)
    sim.tracer().record(start, owner_->device_id(), Component::fabric, "tx",
                        {{"port", number_},
                         {"pkt", p->meta.id},
                         {"len", p->bytes.size()},
                         {"vl", vl},
                         {"dlid", static_cast<unsigned>(p->meta.dlid)},
                         {"end", end}});
  if (sim.timeline().enabled())
    sim.timeline().span(owner_->device_id(), timeline_track, fmt::format("pkt {}", p->meta.id), start, ser,
                        fmt::format("{{\"len\":{},\"vl\":{},\"dlid\":{}}}", p->bytes.size(), vl, p->meta.dlid));
  owner_->transmitted(*this, *p, start, end);
  if (tapped_) tap_(tap_ctx_, *p, start);

  if (injects_ && !link_->pass(*p, *this)) {
    // Lost on the wire: the peer's buffer never fills, so the credit comes back.
    if (vl != kVl15) credit_return(end, vl, p->blocks());
    drop(p, &Port::drops_injected_, "injected_drop");
    return;
  }
  if (p->meta.bit_errors) ++bit_errors_;
  if (p->meta.keep_route) {
    if (p->meta.hops < kRouteSlots) p->route[p->meta.hops] = this;
    p->route_latency += delay_;
    p->route_ps_per_byte = ps_per_byte_ == 0 ? kRouteInexact : std::max(p->route_ps_per_byte, ps_per_byte_);
  }
  ++p->meta.hops;
  p->wire_generation = generation_;
  p->ready_at = 0;
  p->tail_at = end + delay_;
  const std::uint32_t after_tail = peer_->after_tail_;
  const Tick arrive = after_tail == kAtHead ? start + delay_ : p->tail_at + after_tail;
  if (cut_) [[unlikely]]
    sim.calendar().at_on(peer_->owner_->block(), arrive, &Port::arrive_thunk, peer_,
                         reinterpret_cast<std::uint64_t>(p));
  else
    sim.calendar().at(arrive, &Port::arrive_thunk, peer_, reinterpret_cast<std::uint64_t>(p));
}

void Port::arrive_thunk(void* self, std::uint64_t packet) {
  static_cast<Port*>(self)->deliver(reinterpret_cast<Packet*>(packet));
}

inline void Port::deliver(Packet* p) {
  if (p->wire_generation != generation_) {
    // The link went down while the packet was on it. Over a cut link the
    // sender's block learns of it one link delay later, and the loss is
    // counted here.
    if (cut_) {
      if (p->meta.vl != kVl15) return_credit_across(Calendar::now() + delay_, p->meta.vl, p->blocks());
      drop(p, &Port::drops_link_down_, "lost_in_flight");
      return;
    }
    if (p->meta.vl != kVl15) peer_->credit_return(Calendar::now(), p->meta.vl, p->blocks());
    peer_->drop(p, &Port::drops_link_down_, "lost_in_flight");
    return;
  }
  if (cut_) [[unlikely]]
    check_cut_arrival(*p);
  if (p->meta.vl == kVl15 && !vl15_accept(Calendar::now())) {
    // No credits protect VL15: a full buffer loses the packet.
    ++drops_vl15_full_;
    if (trace_on)
      Sim::get().tracer().record(Calendar::now(), owner_->device_id(), Component::fabric, "drop",
                                 {{"port", number_}, {"pkt", p->meta.id}, {"why", "vl15_full"}});
    owner_->fabric().pool().put(p);
    return;
  }
  ++rx_packets_;
  rx_bytes_ += p->bytes.size();
  p->holder = this;
  p->held_vl = p->meta.vl;
  if (trace_on)
    Sim::get().tracer().record(Calendar::now(), owner_->device_id(), Component::fabric, "rx",
                               {{"port", number_},
                                {"pkt", p->meta.id},
                                {"len", p->bytes.size()},
                                {"hops", static_cast<unsigned>(p->meta.hops)}});
  owner_->receive(*this, p);
}

void Port::check_cut_arrival(const Packet& p) const {
  const Tick now = Calendar::now();
  if (after_tail_ == kAtHead ? now <= p.tail_at : now == p.tail_at + after_tail_) return;
  throw std::logic_error(fmt::format(
      "{}: a packet from another block arrived at {} ps, not when this port takes it (tail at {} ps): its NIC "
      "kind registers no set-up for the ports of the devices other processes stand in for",
      path(), now, p.tail_at));
}

void Port::leave_buffer(Packet* p, Tick when) {
  if (Packet* parent = p->parent) {
    // A multicast copy: the original holds the input buffer until the last
    // copy's tail has left.
    p->parent = nullptr;
    parent->release_at = std::max(parent->release_at, when);
    if (--parent->copies_left == 0) {
      if (parent->holder) parent->holder->release(*parent, parent->release_at);
      owner_->fabric().pool().put(parent);
    }
  } else if (p->holder) {
    p->holder->release(*p, when);
  }
  p->holder = nullptr;
}

bool Port::vl15_accept(Tick now) {
  std::erase_if(vl15_busy_, [now](Tick t) { return t <= now; });
  if (vl15_busy_.size() >= vl15_slots_) return false;
  vl15_busy_.push_back(kTickMax);  // held until release() says when it leaves
  return true;
}

void Port::release(const Packet& p, Tick when) {
  if (p.held_vl == kVl15) {
    // The slot frees at `when`; no credit goes back to the sender.
    auto it = std::find(vl15_busy_.begin(), vl15_busy_.end(), kTickMax);
    if (it != vl15_busy_.end()) *it = std::max(when, Calendar::now());
    return;
  }
  if (!peer_) return;
  const Tick at = std::max(when, Calendar::now()) + delay_;
  if (cut_) [[unlikely]]
    return_credit_across(at, p.held_vl, p.blocks());
  else
    peer_->credit_return(at, p.held_vl, p.blocks());
}

// A cut link's credit is an event of the sender's block at its arrival: the
// sender cannot see the receiver's buffer before then.
void Port::return_credit_across(Tick at, int vl, std::uint32_t blocks) {
  Sim::get().calendar().at_on(peer_->owner_->block(), at, &Port::credit_thunk, peer_,
                              std::uint64_t{blocks} << 8 | static_cast<std::uint64_t>(vl));
}

void Port::credit_thunk(void* self, std::uint64_t vl_and_blocks) {
  static_cast<Port*>(self)->credit_return(Calendar::now(), static_cast<int>(vl_and_blocks & 0xff),
                                          static_cast<std::uint32_t>(vl_and_blocks >> 8));
}

inline void Port::credit_return(Tick at, int vl, std::uint32_t blocks) {
  CreditReturn c{at, static_cast<std::uint8_t>(vl), blocks};
  pending_credits_.push_back();
  std::size_t i = pending_credits_.size() - 1;
  for (; i > 0 && pending_credits_[i - 1].at > at; --i) pending_credits_[i] = pending_credits_[i - 1];
  pending_credits_[i] = c;
  if (queued_ == 0) return;
  if (fifo_)
    pump();  // commits the stalled head at the credit's arrival time
  else
    schedule_wake(std::max(at, busy_until_));
}

void Port::reset_credits() {
  pending_credits_.clear();
  vl15_busy_.clear();
  for (int vl = 0; vl < vls_; ++vl) vl_[vl].credits = vl_blocks_;
}

void Port::drop(Packet* p, std::uint64_t Port::*counter, const char* why) {
  ++(this->*counter);
  leave_buffer(p, Calendar::now());
  if (trace_on)
    Sim::get().tracer().record(Calendar::now(), owner_->device_id(), Component::fabric, "drop",
                               {{"port", number_}, {"pkt", p->meta.id}, {"why", why}});
  owner_->fabric().pool().put(p);
}

}  // namespace nicsim::fabric
