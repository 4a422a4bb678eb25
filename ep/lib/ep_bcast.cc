// Multicast by hardware broadcast (docs/ep.md "Multicast by hardware
// broadcast"): a multicast whose destination set is a whole contiguous range
// goes out as Elan broadcasts chained on the Elan by events: this sender's
// busy word, the data into every receiver's area for this sender and the
// envelope into every receiver's queue. The envelope's joined token tells
// the sender that every node took the message; each receiver copies the
// data from its area into the buffer it binds and frees the area; a network
// conditional (every busy word is 0 again) completes the multicast.
#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "ep/lib/ep_internal.h"

namespace elan3 = nicsim::elan3;

namespace nicsim::ep {
namespace {

constexpr std::uint32_t kDescBytes = 32;
// Descriptor slots: the busy word, up to EP_MAXFRAG fragments, the envelope.
constexpr std::uint32_t kDescs = EP_MAXFRAG + 2;

elan3::ElanMem part(const elan3::ElanMem& m, std::uint32_t off, std::uint32_t bytes) {
  return elan3::ElanMem{static_cast<std::uint8_t*>(m.host) + off, m.elan + off, bytes, m.perm, m.card};
}

elan3::DmaRequest broadcast_write(const BcastJob& j, elan3::dma::OpCode op, std::uint32_t size, elan3::E3Addr source,
                                  elan3::E3Addr dest, elan3::E3Addr src_event) {
  elan3::DmaRequest r;
  r.direction = elan3::dma::Direction::Write;
  r.opcode = op;
  r.size = size;
  r.source = source;
  r.dest = dest;
  r.src_event = src_event;
  r.dest_node = j.lo;
  r.dest_node_last = j.hi;
  r.src_cookie = kBcastCookie;
  return r;
}

}  // namespace

// The busy words (one SDRAM page) and the data areas (node memory) at their
// fixed Elan addresses, and the sender's own conditional and chain. False
// (reported) leaves the node without hardware broadcast: every multicast
// goes by the tree.
bool EpNode::setup_broadcast() {
  auto b = std::make_unique<Broadcaster>();
  const ParamSet& p = host.params();
  b->area_bytes = static_cast<std::uint32_t>(p.size("ep.hw_broadcast_bytes"));
  b->stride = (b->area_bytes + elan3::kPageSize - 1) / elan3::kPageSize * elan3::kPageSize;
  b->retest = p.time("ep.hw_broadcast_retest");
  const std::uint32_t remote = elan3::perm::kRemoteRead | elan3::perm::kRemoteWrite;
  if (nnodes * 8 > elan3::kPageSize ||
      dev.map_card(1, elan3::perm::kLocalRead | elan3::perm::kLocalWrite | remote, elan3::attr::kLittleEndian,
                   kBcastFlags, &b->flags_range, &b->flags) != elan3::DevStatus::Ok ||
      b->flags.elan != kBcastFlags) {
    error(fmt::format("hardware broadcast off: cannot map the busy words at Elan address {:#x}", kBcastFlags));
    return false;
  }
  const std::size_t area = static_cast<std::size_t>(b->stride) * nnodes;
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
  b->busy = dev.alloc_card(8, 8, 0);
  b->descs = dev.alloc_card(kDescBytes * kDescs, kDescBytes, 0);
  b->yes = dev.alloc_event(false);
  b->no = dev.alloc_event(false);
  b->acked = dev.alloc_event(false);
  for (std::uint32_t i = 0; i + 1 < kDescs; ++i) b->chain.push_back(dev.alloc_event(false));
  bool ok = b->test && b->busy && b->descs && b->yes && b->no && b->acked;
  for (const auto& e : b->chain) ok = ok && e;
  b->cookie = ok ? dev.add_event_handler([this](std::uint32_t, elan3::E3Addr ev) { broadcast_event(ev); }) : 0;
  if (!b->cookie) {
    error("hardware broadcast off: no Elan memory for its events and descriptors");
    return false;
  }
  // The test: "the 64-bit word is 0" (this sender's area is free).
  std::uint8_t block[elan3::dma::kTestSize] = {};
  const auto cond = static_cast<std::uint32_t>(elan3::dma::Condition::Equal);
  std::memcpy(block + 8, &cond, sizeof cond);
  dev.store(b->test, 0, block, sizeof block);
  b->timer = std::make_unique<host::Timer>(host, "ep.bcast_retest", [this] { broadcast_drained_test(); });
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

// Starts the oldest waiting job whose transmit is still its own (a txd
// completed meanwhile, e.g. by ep_free_xmtr, is skipped): writes the
// chain's descriptors, primes its events and issues its first DMA. Every
// area of the range is free: the sender's last multicast ended when every
// receiver had freed its area, or by a failure that reset them.
void EpNode::broadcast_next() {
  Broadcaster& b = *bcast;
  while (b.state == BcastState::Idle && !b.waiting.empty()) {
    b.job = b.waiting.front();
    b.waiting.pop_front();
    const ep_txd* t = b.job.t;
    if (!t->active || t->forced || t->generation != b.job.generation) continue;
    const std::uint64_t seq = b.job.seq;
    dev.store(b.busy, 0, &seq, sizeof seq);
    std::vector<elan3::DmaRequest> steps;
    steps.push_back(broadcast_write(b.job, elan3::dma::OpCode::NormalBroadcast, 8, b.busy.elan, b.flag_addr(self), 0));
    std::uint32_t off = 0;
    for (int i = 0; i < b.job.nfrags; ++i) {
      const EP_IOVEC& f = b.job.frags[i];
      if (f.Len == 0) continue;
      steps.push_back(
          broadcast_write(b.job, elan3::dma::OpCode::NormalBroadcast, f.Len, f.Base, b.data_addr(self) + off, 0));
      off += f.Len;
    }
    steps.push_back(broadcast_write(b.job, elan3::dma::OpCode::QueuedBroadcast, t->buf_len, t->buf.elan,
                                    service_queue_addr(t->service), b.acked.elan));
    // Each step but the last sets the event that queues the next one.
    for (std::size_t i = 0; i + 1 < steps.size(); ++i) {
      steps[i].src_event = b.chain[i].elan;
      dev.prime_event(b.chain[i], 1, elan3::event::Type::Dma, b.descs.elan + (i + 1) * kDescBytes);
    }
    bool written = true;
    for (std::size_t i = 1; i < steps.size(); ++i)
      written =
          written && dev.write_descriptor(part(b.descs, i * kDescBytes, kDescBytes), steps[i]) == elan3::DevStatus::Ok;
    dev.prime_event(b.acked, 1, elan3::event::Type::None, 0, 0, true, b.cookie);
    cpu("ep_transmit");
    b.state = BcastState::Sending;
    if (!written || dev.issue_dma(steps[0]) != elan3::DevStatus::Ok) broadcast_end(ENETRESET);
  }
}

// The network conditional over the range: held, `yes` interrupts and the
// multicast is complete; not held, `no` interrupts and the test is sent
// again, after ep.hw_broadcast_retest doubling each time (a receiver with
// no buffer posted may hold its area for long).
void EpNode::broadcast_drained_test() {
  Broadcaster& b = *bcast;
  if (b.state != BcastState::Draining) return;
  cpu("ep_poll");
  dev.prime_event(b.yes, 1, elan3::event::Type::None, 0, 0, true, b.cookie);
  dev.prime_event(b.no, 1, elan3::event::Type::None, 0, 0, true, b.cookie);
  elan3::DmaRequest r = broadcast_write(b.job, elan3::dma::OpCode::ConditionalBroadcast, elan3::dma::kTestSize,
                                        b.test.elan, b.flag_addr(self), b.yes.elan);
  r.dest_event = b.no.elan;
  if (dev.issue_dma(r) != elan3::DevStatus::Ok) broadcast_end(ENETRESET);
}

void EpNode::broadcast_event(elan3::E3Addr ev) {
  constexpr Tick kMaxRetest = 64;
  Broadcaster& b = *bcast;
  if (b.state == BcastState::Sending && ev == b.acked.elan && dev.event_fired(b.acked)) {
    b.state = BcastState::Draining;
    b.wait = b.retest;
    broadcast_drained_test();
  } else if (b.state == BcastState::Draining && ev == b.no.elan && dev.event_fired(b.no)) {
    ++b.retests;
    b.timer->start(b.wait);
    b.wait = std::min(b.wait * 2, kMaxRetest * b.retest);
  } else if (b.state == BcastState::Draining && ev == b.yes.elan && dev.event_fired(b.yes)) {
    broadcast_end(ESUCCESS);
  }
}

// A broadcast DMA ended with a network error (a node of the range did not
// answer: dead, or its link down) or a local fault. Whatever a receiver
// took, the sender completes ENETRESET ("may or may not have been
// delivered"). The busy words left set need no reset: the sender's next
// broadcast to any of those nodes writes its own number there first, and a
// node still holding this message's envelope then finds the number changed
// when it copies the data out (ENETRESET there).
bool EpNode::broadcast_failure(const elan3::DmaFailure& f) {
  if (f.src_cookie != kBcastCookie) return false;
  Broadcaster& b = *bcast;
  if (b.state == BcastState::Idle) return true;
  // The joined token does not say which node failed: circuits to the
  // range's nodes find out (a connect or a heartbeat unanswered marks the
  // node dead), so that the next multicast leaves it out and goes by the
  // tree.
  for (std::uint32_t n = b.job.lo; n <= b.job.hi && n < nnodes; ++n)
    if (n != self && is_live(n) && circuit(n).state() == CircuitState::Disconnected) connect(circuit(n));
  broadcast_end(ENETRESET);
  return true;
}

// The job is over: its transmit completes through its own event (ESUCCESS)
// or is forced, and the next job starts.
void EpNode::broadcast_end(int status) {
  Broadcaster& b = *bcast;
  b.timer->cancel();
  b.state = BcastState::Idle;
  ++(status == ESUCCESS ? b.sent : b.failed);
  ep_txd* t = b.job.t;
  if (t->active && !t->forced && t->generation == b.job.generation) {
    if (status == ESUCCESS)
      dev.set_event(t->done.elan);
    else
      force(t, status);
  }
  broadcast_next();
}

// A receiver is done with its area (the data copied out, or not taken):
// it frees the area if the busy word still holds this message's number.
// False if it does not (the sender reset it after a failure, or a later
// broadcast is writing the area): the copied data cannot be trusted.
bool EpNode::broadcast_release(ep_rxd* d) {
  const std::uint32_t sender = d->envelope.NodeId;
  if (!bcast || sender >= nnodes) return false;
  std::uint64_t busy = 0;
  std::memcpy(&busy, static_cast<const std::uint8_t*>(bcast->flags.host) + sender * 8, sizeof busy);
  if (busy != d->envelope.BcastSeq) return false;
  const std::uint64_t free_word = 0;
  dev.store(bcast->flags, sender * 8, &free_word, sizeof free_word);
  return true;
}

}  // namespace nicsim::ep
