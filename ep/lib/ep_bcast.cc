// Multicast by hardware broadcast (docs/ep.md "Multicast by hardware
// broadcast"): a multicast whose destination set is a whole contiguous range
// goes out on one of the sender's two lanes as Elan broadcasts chained on
// the Elan by events: the lane's busy word, the data into every receiver's
// area of the lane and the envelope into every receiver's queue. The
// envelope's joined token tells the sender that every node took the
// message; each receiver copies the data from its area into the buffer it
// binds and frees the area; a network conditional (every busy word of the
// lane is 0 again) completes the multicast and frees the lane.
#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "ep/lib/ep_internal.h"

namespace elan3 = nicsim::elan3;

namespace nicsim::ep {
namespace {

constexpr std::uint32_t kDescBytes = 32;
// Descriptor slots of a lane: the busy word, up to EP_MAXFRAG fragments, the
// envelope.
constexpr std::uint32_t kDescs = EP_MAXFRAG + 2;
constexpr Tick kMaxRetest = 64;  // the re-test's wait doubles up to this many ep.hw_broadcast_retest

elan3::ElanMem part(const elan3::ElanMem& m, std::uint32_t off, std::uint32_t bytes) {
  return elan3::ElanMem{static_cast<std::uint8_t*>(m.host) + off, m.elan + off, bytes, m.perm, m.card};
}

elan3::DmaRequest broadcast_write(const BcastLane& lane, elan3::dma::OpCode op, std::uint32_t size,
                                  elan3::E3Addr source, elan3::E3Addr dest, elan3::E3Addr src_event) {
  elan3::DmaRequest r;
  r.direction = elan3::dma::Direction::Write;
  r.opcode = op;
  r.size = size;
  r.source = source;
  r.dest = dest;
  r.src_event = src_event;
  r.dest_node = lane.job.lo;
  r.dest_node_last = lane.job.hi;
  r.src_cookie = static_cast<std::uint16_t>(kBcastCookie + lane.index);
  return r;
}

}  // namespace

// The busy words (one SDRAM page) and the data areas (node memory) at their
// fixed Elan addresses, and each lane's conditional and chain. False
// (reported) leaves the node without hardware broadcast: every multicast
// goes by the tree.
bool EpNode::setup_broadcast() {
  auto b = std::make_unique<Broadcaster>();
  const ParamSet& p = host.params();
  b->area_bytes = static_cast<std::uint32_t>(p.size("ep.hw_broadcast_bytes"));
  b->stride = (b->area_bytes + elan3::kPageSize - 1) / elan3::kPageSize * elan3::kPageSize;
  b->retest = p.time("ep.hw_broadcast_retest");
  const std::uint32_t remote = elan3::perm::kRemoteRead | elan3::perm::kRemoteWrite;
  if (nnodes * kBcastLanes * 8 > elan3::kPageSize ||
      dev.map_card(1, elan3::perm::kLocalRead | elan3::perm::kLocalWrite | remote, elan3::attr::kLittleEndian,
                   kBcastFlags, &b->flags_range, &b->flags) != elan3::DevStatus::Ok ||
      b->flags.elan != kBcastFlags) {
    error(fmt::format("hardware broadcast off: cannot map the busy words at Elan address {:#x}", kBcastFlags));
    return false;
  }
  const std::size_t area = static_cast<std::size_t>(b->stride) * nnodes * kBcastLanes;
  void* host_area = host.memory().alloc(area, elan3::kPageSize);
  elan3::E3Addr at = 0;
  if (!host_area ||
      dev.map(host_area, area, remote, elan3::attr::kLittleEndian, kBcastArea, true, &b->area_range, &at) !=
          elan3::DevStatus::Ok ||
      at != kBcastArea) {
    error(fmt::format("hardware broadcast off: cannot map {} bytes of broadcast areas at Elan address {:#x}", area,
                      kBcastArea));
    return false;
  }
  b->test = dev.alloc_card(elan3::dma::kTestSize, 16, 0);
  bool ok = static_cast<bool>(b->test);
  for (int i = 0; i < kBcastLanes; ++i) {
    BcastLane& l = b->lanes[i];
    l.index = i;
    l.busy = dev.alloc_card(8, 8, 0);
    l.descs = dev.alloc_card(kDescBytes * kDescs, kDescBytes, 0);
    l.yes = dev.alloc_event(false);
    l.no = dev.alloc_event(false);
    l.acked = dev.alloc_event(false);
    for (std::uint32_t k = 0; k + 1 < kDescs; ++k) l.chain.push_back(dev.alloc_event(false));
    ok = ok && l.busy && l.descs && l.yes && l.no && l.acked;
    for (const auto& e : l.chain) ok = ok && e;
    l.timer = std::make_unique<host::Timer>(host, "ep.bcast_retest", [this, &l] { broadcast_drained_test(l); });
  }
  b->cookie = ok ? dev.add_event_handler([this](std::uint32_t, elan3::E3Addr ev) { broadcast_event(ev); }) : 0;
  if (!b->cookie) {
    error("hardware broadcast off: no Elan memory for its events and descriptors");
    return false;
  }
  // The test: "the 64-bit word is 0" (the area is free).
  std::uint8_t block[elan3::dma::kTestSize] = {};
  const auto cond = static_cast<std::uint32_t>(elan3::dma::Condition::Equal);
  std::memcpy(block + 8, &cond, sizeof cond);
  dev.store(b->test, 0, block, sizeof block);
  bcast = std::move(b);
  return true;
}

// The set is the whole range [front, back], of more than one node, and the
// data fit in one area.
bool EpNode::broadcast_fits(const std::vector<int>& members, std::uint64_t total) const {
  return bcast && members.size() > 1 && members.back() - members.front() + 1 == static_cast<int>(members.size()) &&
         total <= bcast->area_bytes;
}

void EpNode::broadcast_submit(const BcastJob& job) {
  bcast->waiting.push_back(job);
  broadcast_next();
}

// Gives the oldest waiting jobs to idle lanes. A job whose transmit is no
// longer its own (completed meanwhile, e.g. by ep_free_xmtr) is dropped.
// Every area of an idle lane is free: the lane's last multicast ended when
// every receiver had freed its area, or by a failure (then the next
// broadcast on it writes its own number into the busy words first).
void EpNode::broadcast_next() {
  Broadcaster& b = *bcast;
  for (BcastLane& l : b.lanes) {
    while (l.state == BcastState::Idle && !b.waiting.empty()) {
      l.job = b.waiting.front();
      b.waiting.pop_front();
      const ep_txd* t = l.job.t;
      if (!t->active || t->forced || t->generation != l.job.generation) continue;
      if (!broadcast_start(l)) broadcast_end(l, ENETRESET);
    }
  }
}

// The lane's number into the envelope, the chain's descriptors written and
// its events primed, then its first DMA.
bool EpNode::broadcast_start(BcastLane& l) {
  Broadcaster& b = *bcast;
  ep_txd* t = l.job.t;
  l.job.seq = (b.next_seq << 1) | static_cast<std::uint32_t>(l.index);
  b.next_seq = (b.next_seq + 1) & 0x7fffffffu;
  if (b.next_seq == 0) b.next_seq = 1;  // a number is never 0, "free"
  auto* env = static_cast<EP_ENVELOPE*>(t->buf.host);
  env->BcastSeq = l.job.seq;
  env->Frags[0].Base = b.data_addr(self, static_cast<std::uint32_t>(l.index));
  const std::uint64_t seq = l.job.seq;
  dev.store(l.busy, 0, &seq, sizeof seq);
  const auto lane = static_cast<std::uint32_t>(l.index);
  std::vector<elan3::DmaRequest> steps;
  steps.push_back(broadcast_write(l, elan3::dma::OpCode::NormalBroadcast, 8, l.busy.elan, b.flag_addr(self, lane), 0));
  std::uint32_t off = 0;
  for (int i = 0; i < l.job.nfrags; ++i) {
    const EP_IOVEC& f = l.job.frags[i];
    if (f.Len == 0) continue;
    steps.push_back(
        broadcast_write(l, elan3::dma::OpCode::NormalBroadcast, f.Len, f.Base, b.data_addr(self, lane) + off, 0));
    off += f.Len;
  }
  steps.push_back(broadcast_write(l, elan3::dma::OpCode::QueuedBroadcast, t->buf_len, t->buf.elan,
                                  service_queue_addr(t->service), l.acked.elan));
  // Each step but the last sets the event that queues the next one.
  for (std::size_t i = 0; i + 1 < steps.size(); ++i) {
    steps[i].src_event = l.chain[i].elan;
    dev.prime_event(l.chain[i], 1, elan3::event::Type::Dma, l.descs.elan + (i + 1) * kDescBytes);
  }
  for (std::size_t i = 1; i < steps.size(); ++i)
    if (dev.write_descriptor(part(l.descs, i * kDescBytes, kDescBytes), steps[i]) != elan3::DevStatus::Ok) return false;
  dev.prime_event(l.acked, 1, elan3::event::Type::None, 0, 0, true, b.cookie);
  cpu("ep_transmit");
  l.state = BcastState::Sending;
  return dev.issue_dma(steps[0]) == elan3::DevStatus::Ok;
}

// The network conditional over the lane's range: held, `yes` interrupts and
// the multicast is complete; not held, `no` interrupts and the test is sent
// again, after ep.hw_broadcast_retest doubling each time (a receiver with
// no buffer posted may hold its area for long).
void EpNode::broadcast_drained_test(BcastLane& l) {
  Broadcaster& b = *bcast;
  if (l.state != BcastState::Draining) return;
  cpu("ep_poll");
  dev.prime_event(l.yes, 1, elan3::event::Type::None, 0, 0, true, b.cookie);
  dev.prime_event(l.no, 1, elan3::event::Type::None, 0, 0, true, b.cookie);
  elan3::DmaRequest r = broadcast_write(l, elan3::dma::OpCode::ConditionalBroadcast, elan3::dma::kTestSize, b.test.elan,
                                        b.flag_addr(self, static_cast<std::uint32_t>(l.index)), l.yes.elan);
  r.dest_event = l.no.elan;
  if (dev.issue_dma(r) != elan3::DevStatus::Ok) broadcast_end(l, ENETRESET);
}

void EpNode::broadcast_event(elan3::E3Addr ev) {
  Broadcaster& b = *bcast;
  for (BcastLane& l : b.lanes) {
    if (l.state == BcastState::Sending && ev == l.acked.elan && dev.event_fired(l.acked)) {
      l.state = BcastState::Draining;
      l.wait = b.retest;
      broadcast_drained_test(l);
    } else if (l.state == BcastState::Draining && ev == l.no.elan && dev.event_fired(l.no)) {
      ++b.retests;
      l.timer->start(l.wait);
      l.wait = std::min(l.wait * 2, kMaxRetest * b.retest);
    } else if (l.state == BcastState::Draining && ev == l.yes.elan && dev.event_fired(l.yes)) {
      broadcast_end(l, ESUCCESS);
    } else {
      continue;
    }
    return;
  }
}

// A lane's broadcast DMA ended with a network error (a node of the range did
// not answer: dead, or its link down) or a local fault. Whatever a receiver
// took, the sender completes ENETRESET ("may or may not have been
// delivered"). The busy words left set need no reset: the next broadcast on
// the lane writes its own number there first, and a node still holding
// this message's envelope then finds the number changed when it copies the
// data out (ENETRESET there).
bool EpNode::broadcast_failure(const elan3::DmaFailure& f) {
  if (f.src_cookie < kBcastCookie || f.src_cookie >= kBcastCookie + kBcastLanes) return false;
  Broadcaster& b = *bcast;
  BcastLane& l = b.lanes[f.src_cookie - kBcastCookie];
  if (l.state == BcastState::Idle) return true;
  // The joined token does not say which node failed: circuits to the
  // range's nodes find out (a connect or a heartbeat unanswered marks the
  // node dead), so that the next multicast leaves it out and goes by the
  // tree.
  for (std::uint32_t n = l.job.lo; n <= l.job.hi && n < nnodes; ++n)
    if (n != self && is_live(n) && circuit(n).state() == CircuitState::Disconnected) connect(circuit(n));
  broadcast_end(l, ENETRESET);
  return true;
}

// The lane's job is over: its transmit completes through its own event
// (ESUCCESS) or is forced, and the lane takes the next job.
void EpNode::broadcast_end(BcastLane& l, int status) {
  Broadcaster& b = *bcast;
  l.timer->cancel();
  l.state = BcastState::Idle;
  ++(status == ESUCCESS ? b.sent : b.failed);
  ep_txd* t = l.job.t;
  if (t->active && !t->forced && t->generation == l.job.generation) {
    if (status == ESUCCESS)
      dev.set_event(t->done.elan);
    else
      force(t, status);
  }
  broadcast_next();
}

// A receiver is done with its area (the data copied out, or not taken):
// it frees the area if the busy word still holds this message's number.
// False if it does not (a later broadcast on the lane is writing the area):
// the copied data cannot be trusted.
bool EpNode::broadcast_release(ep_rxd* d) {
  const std::uint32_t sender = d->envelope.NodeId;
  if (!bcast || sender >= nnodes) return false;
  const std::uint32_t off = Broadcaster::word(sender, d->envelope.BcastSeq & 1u) * 8;
  std::uint64_t busy = 0;
  std::memcpy(&busy, static_cast<const std::uint8_t*>(bcast->flags.host) + off, sizeof busy);
  if (busy != d->envelope.BcastSeq) return false;
  const std::uint64_t free_word = 0;
  dev.store(bcast->flags, off, &free_word, sizeof free_word);
  return true;
}

}  // namespace nicsim::ep
