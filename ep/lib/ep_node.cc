// The per-node Kernel Comms state: creation on first use, the service table,
// input queues and their interrupts, transmit descriptors, completion, and
// the failure reports of the driver. Design: docs/ep.md.
#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "core/sim.h"
#include "ep/lib/ep_internal.h"

namespace nicsim::ep {
namespace {

// Initial descriptors per transmitter; EP_NO_ALLOC transmits use only these
// (and those freed since), others grow the pool up to kMaxTxds.
constexpr std::size_t kInitialTxds = 16;
constexpr std::size_t kMaxTxds = 4096;
// A txd's index is a DMA source cookie without kRxCookie; kBcastCookie and
// above are the hardware broadcast's lanes'.
constexpr std::size_t kMaxTxdIndex = kBcastCookie - 1;

// Kernel Comms' liveness messages (heartbeats, probes and their answers)
// go ahead of the Elan's queued data: behind a node's pull replies they
// would arrive later than the heartbeat timeout (docs/ep.md "Node
// membership").
bool liveness_message(const EpNode& n, const ep_txd* t) {
  if (t->xmtr != n.control_xmtr || t->buf_len < sizeof(SmallHeader) + sizeof(ControlMsg)) return false;
  ControlMsg m;
  std::memcpy(&m, static_cast<const std::uint8_t*>(t->buf.host) + sizeof(SmallHeader), sizeof m);
  const auto op = static_cast<Control>(m.op);
  return op == Control::Heartbeat || op == Control::Probe || op == Control::ProbeAck;
}

}  // namespace

EpNode* EpNode::current() {
  host::Host* h = host::Host::current_host();
  return h ? h->software<EpNode>() : nullptr;
}

EpNode* EpNode::get() {
  if (EpNode* n = current()) return n;
  host::Host* h = host::Host::current_host();
  if (!h || h->in_interrupt()) return nullptr;
  elan3::Elan3Dev* dev = elan3::Elan3Dev::attach();
  if (!dev) return nullptr;
  auto node = std::make_unique<EpNode>(*dev);
  if (!node->table_host) return nullptr;  // reported
  EpNode& n = h->add_software(std::move(node));
  n.start();
  return &n;
}

EpNode::EpNode(elan3::Elan3Dev& d) : dev(d), host(d.host()) {
  self = dev.node_id();
  nnodes = dev.num_nodes();
  const ParamSet& p = host.params();
  heartbeat_period = p.time("ep.heartbeat_period");
  heartbeat_timeout = p.time("ep.heartbeat_timeout");
  connect_timeout = p.time("ep.connect_timeout");
  reset_hold = p.time("ep.reset_hold");
  special_resend = p.time("ep.special_resend");
  txd_poll = p.time("ep.txd_poll");
  hw_broadcast = p.count("ep.hw_broadcast") != 0;

  // The service table: one page of the card's SDRAM at the fixed address
  // (the Elan reads a queue's descriptor there for every arrival), every
  // slot locked until a receiver is installed.
  const std::uint32_t perms = elan3::perm::kLocalRead | elan3::perm::kLocalWrite | elan3::perm::kRemoteWrite;
  elan3::ElanMem table;
  if (dev.map_card(1, perms, elan3::attr::kLittleEndian, kServiceTable, &table_range, &table) != elan3::DevStatus::Ok ||
      table.elan != kServiceTable) {
    error(fmt::format("cannot map the service table at Elan address {:#x}", kServiceTable));
    return;
  }
  table_host = static_cast<std::uint8_t*>(table.host);
  // Every service slot starts as an empty locked queue: arrivals for a
  // service with no receiver are refused with test-fail, never written.
  for (int s = 0; s < EP_NUM_SERVICES; ++s) lock_service(s);

  live.assign(BT_BITOUL(nnodes), 0);
  bt_fill(live.data(), static_cast<int>(nnodes));
  for (std::uint32_t n = 0; n < nnodes; ++n) circuits.push_back(std::make_unique<Circuit>(*this, n));
  if (hw_broadcast) setup_broadcast();
}

EpNode::~EpNode() = default;

void EpNode::start() {
  dev.add_error_handler([this](const elan3::DmaFailure& f) { dma_failure(f); });
  dev.set_retry_filter([this](const elan3::DmaFailure& f) { return retry_wanted(f); });
  dev.add_link_handler([this](bool up) { link_changed(up); });
  control_rcvr = install_control();
  control_xmtr = new_xmtr(false, EP_SVC_TYPE_SPECIAL, sizeof(ControlMsg));
  heartbeat = std::make_unique<host::Timer>(host, "ep.heartbeat", [this] { tick(); });
  heartbeat->start(heartbeat_period);
}

void EpNode::cpu(std::string_view cls, std::uint64_t bytes) {
  // Work started by the Elan's own callbacks (neither a thread nor a
  // handler of this node) costs no host CPU.
  if (host.in_interrupt() || host.current()) host.work(cls, bytes);
}

void EpNode::error(const std::string& msg) { Sim::get().error(fmt::format("{}.ep", host.name()), msg); }

// ---- input queues ----------------------------------------------------------------

bool EpNode::install_queue(ep_rcvr* r, std::uint32_t nslots, std::uint32_t slot_size) {
  r->queue_event = dev.alloc_event(false);
  if (!r->queue_event) return false;
  r->cookie = dev.add_event_handler([this, r](std::uint32_t, elan3::E3Addr ev) { rcvr_event(r, ev); });
  if (!r->cookie) {
    dev.free_mem(r->queue_event);
    return false;
  }
  if (dev.init_queue(table_slot(r->service), nslots, slot_size, r->queue_event.elan, &r->queue, true) !=
      elan3::DevStatus::Ok) {
    dev.remove_event_handler(r->cookie);
    dev.free_mem(r->queue_event);
    return false;
  }
  dev.prime_event(r->queue_event, 1, elan3::event::Type::None, 0, 0, true, r->cookie);
  services[r->service] = r;
  return true;
}

// An empty locked descriptor whose slot size admits any packet, so that the
// Elan answers test-fail (the size is checked before the lock).
void EpNode::lock_service(int service) {
  elan3::InputQueue unused;
  dev.init_queue(table_slot(service), 0, dev.max_packet_payload() & ~7u, 0, &unused, true);
}

void EpNode::remove_queue(ep_rcvr* r) {
  lock_service(r->service);
  services[r->service] = nullptr;
  dev.remove_event_handler(r->cookie);
  // The slots and the event may still be the target of a packet in flight
  // that passed the lock check: they are retired, never reused.
  retired.push_back(r->queue.slots);
  retired.push_back(r->queue_event);
}

elan3::ElanMem EpNode::table_slot(int service) const {
  const std::uint32_t off = static_cast<std::uint32_t>(service) * elan3::queue::kSize;
  return elan3::ElanMem{table_host + off, kServiceTable + off, elan3::queue::kSize, table_range.perm, true};
}

// Messages in the queue not yet handed out: the Elan advances q_bptr after
// writing a message (elan3_regs.h queue::), software q_fptr.
std::uint32_t EpNode::queued(const ep_rcvr* r) const {
  const std::uint8_t* d = static_cast<const std::uint8_t*>(r->queue.desc.host);
  const auto bptr = static_cast<elan3::E3Addr>(elan3::get(d, elan3::queue::q_bptr));
  const auto fptr = static_cast<elan3::E3Addr>(elan3::get(d, elan3::queue::q_fptr));
  const std::uint32_t b = (bptr - r->queue.slots.elan) / r->queue.slot_size;
  const std::uint32_t f = (fptr - r->queue.slots.elan) / r->queue.slot_size;
  return (b + r->queue.nslots - f) % r->queue.nslots;
}

const std::uint8_t* EpNode::slot(const ep_rcvr* r, std::uint32_t nth) const {
  const std::uint8_t* d = static_cast<const std::uint8_t*>(r->queue.desc.host);
  const auto fptr = static_cast<elan3::E3Addr>(elan3::get(d, elan3::queue::q_fptr));
  const std::uint32_t f = (fptr - r->queue.slots.elan) / r->queue.slot_size;
  const std::uint32_t i = (f + nth) % r->queue.nslots;
  return static_cast<const std::uint8_t*>(r->queue.slots.host) + i * r->queue.slot_size;
}

void EpNode::rcvr_event(ep_rcvr* r, elan3::E3Addr ev) {
  if (ev == r->queue_event.elan) {
    service_queue(r);
    return;
  }
  rx_event(r, ev);
}

// Drain, re-arm, drain again: an arrival between the firing and the re-arm
// sets no interrupt (elan3_dev.h alloc_queue); the driver's prime keeps a
// set already in flight from overwriting the new count.
void EpNode::service_queue(ep_rcvr* r) {
  if (r->removed) return;
  drain(r);
  dev.prime_event(r->queue_event, 1, elan3::event::Type::None, 0, 0, true, r->cookie);
  drain(r);
}

void EpNode::drain(ep_rcvr* r) {
  if (r->large)
    envelope_arrived(r);
  else
    small_arrived(r);
}

// ---- transmitters and descriptors ------------------------------------------------

ep_xmtr* EpNode::new_xmtr(bool large, int type, int msgsize) {
  auto owned = std::make_unique<ep_xmtr>();
  ep_xmtr* x = owned.get();
  x->node = this;
  x->large = large;
  x->type = type;
  x->msgsize = msgsize;
  x->dma_state.node = this;
  x->free_waiters = std::make_unique<host::WaitQueue>(host);
  x->cookie = dev.add_event_handler([this, x](std::uint32_t, elan3::E3Addr ev) { tx_event(x, ev); });
  for (std::size_t i = 0; i < kInitialTxds; ++i)
    if (!grow(x, true)) break;
  if (!x->cookie || x->pool.empty()) {
    if (x->cookie) dev.remove_event_handler(x->cookie);
    return nullptr;
  }
  xmtrs.push_back(x);
  all_xmtrs.push_back(std::move(owned));
  return x;
}

bool EpNode::grow(ep_xmtr* x, bool wait) {
  if (x->pool.size() >= kMaxTxds || txd_table.size() >= kMaxTxdIndex) return false;
  auto t = std::make_unique<ep_txd>();
  t->xmtr = x;
  t->index = static_cast<std::uint32_t>(txd_table.size()) + 1;
  const std::uint32_t buf_bytes =
      x->large ? large_slot_size(*this) : static_cast<std::uint32_t>((sizeof(SmallHeader) + x->msgsize + 7) & ~7u);
  t->done = dev.alloc_event(true, wait);
  // A small message's header and data go to the card's SDRAM by PIO
  // (issue), so the Elan reads them there; a large envelope stays in node
  // memory.
  t->buf = x->large ? dev.alloc_mem(buf_bytes, elan3::kBlockSize, 0, wait)
                    : dev.alloc_card(buf_bytes, elan3::kBlockSize, 0, wait);
  if (x->large) t->status_blk = dev.alloc_mem(EP_STATUSBLK_SIZE, elan3::kBlockSize, elan3::perm::kRemoteWrite, wait);
  if (!t->done || !t->buf || (x->large && !t->status_blk)) {
    if (t->done) dev.free_mem(t->done);
    if (t->buf) dev.free_mem(t->buf);
    if (t->status_blk) dev.free_mem(t->status_blk);
    return false;
  }
  txd_table.push_back(t.get());
  x->free.push_back(t.get());
  x->pool.push_back(std::move(t));
  return true;
}

int EpNode::get_txd(ep_xmtr* x, int flags, ep_txd** out) {
  poll(x);  // manual 2.1.5: polled transmits are collected on every new transmit
  while (x->free.empty()) {
    const bool may_sleep = !(flags & EP_NO_SLEEP) && host.current() && !host.in_interrupt();
    if (!(flags & EP_NO_ALLOC) && grow(x, may_sleep)) break;
    if (!may_sleep) return ENOMEM;
    // Wait for a transmit to complete; polled ones need a poll to free.
    if (poll(x) == 0) x->free_waiters->wait_until(Calendar::now() + txd_poll);
  }
  ep_txd* t = x->free.front();
  x->free.pop_front();
  t->active = true;
  t->forced = false;
  t->starting = true;
  t->dest = -1;  // not the last message's: a failure of that circuit is not this one's
  t->sent = false;
  t->status = ESUCCESS;
  t->generation = (t->generation + 1) & 0x7fff;
  t->deadline = 0;
  x->active.push_back(t);
  *out = t;
  return ESUCCESS;
}

void EpNode::put_txd(ep_txd* t) {
  ep_xmtr* x = t->xmtr;
  t->active = false;
  t->finishing = false;
  if (t->timer) t->timer->cancel();
  if (t->retry) t->retry->cancel();
  x->active.erase(std::remove(x->active.begin(), x->active.end(), t), x->active.end());
  if (t->fan) {
    // Edges still waiting for a circuit or a re-send belong to this
    // multicast only; after a forced end its edge events may still be set.
    ++t->fan->gen;
    t->fan->dirty |= t->forced;
  }
  if (t->forced) {
    // The Elan may still set the old event or write the old status block
    // (a timed-out or reset transmit): retire them, take fresh ones; and it
    // may still report the old DMA failed: take another index.
    if (t->sent) renumber(t);
    retired.push_back(t->done);
    t->done = dev.alloc_event(true, false);
    if (x->large) {
      retired.push_back(t->status_blk);
      t->status_blk = dev.alloc_mem(EP_STATUSBLK_SIZE, elan3::kBlockSize, elan3::perm::kRemoteWrite, false);
    }
    if (!t->done || (x->large && !t->status_blk)) return;  // lost to the pool (out of memory)
  }
  x->free.push_back(t);
  x->free_waiters->notify_one();
}

// The Elan names a failed DMA by its source cookie, the txd's index. A
// transmit forced to complete (its circuit failed, or its time ran out)
// may still have its envelope queued on the Elan, behind DMAs to a dead
// node; that DMA's failure, reported later, failed whatever message the
// txd carried by then, elsewhere, and its caller reused the buffer while
// that destination still pulled it (a corrupted delivery; the soak's
// EpSoak tests). So the txd takes a fresh index, and the old one names
// nothing until no report of it can still come: a second at least, far
// beyond the Elan's retries. With every index in use a quarantined one
// is reused early (the oldest).
void EpNode::renumber(ep_txd* t) {
  constexpr Tick kQuarantine = 1000 * kMs;
  const Tick now = Calendar::now();
  txd_table[t->index - 1] = nullptr;
  quarantined.push_back({t->index, now});
  if (now - quarantined.front().since < kQuarantine && txd_table.size() < kMaxTxdIndex) {
    txd_table.push_back(t);
    t->index = static_cast<std::uint32_t>(txd_table.size());
    return;
  }
  t->index = quarantined.front().index;
  quarantined.pop_front();
  txd_table[t->index - 1] = t;
}

ep_txd* EpNode::txd_of_cookie(std::uint16_t cookie) const {
  if (cookie == 0 || (cookie & kRxCookie) || cookie > txd_table.size()) return nullptr;
  return txd_table[cookie - 1];
}

// Runs the handler of a finished transmit and recycles it. Interrupt
// transmits finish where the event or failure is seen; polled ones only in
// poll() (or when callbacks were enabled).
void EpNode::finish(ep_txd* t) {
  // Claimed first: the charge below and the handler are waits during which
  // a poll in another context (thread or interrupt) may look at t again.
  if (t->finishing) return;
  t->finishing = true;
  cpu("ep_complete");
  // A multicast subtree that failed below the root's children wrote its
  // status into the root's status block (docs/ep.md "Multicast").
  if (t->kind == TxKind::Multicast && t->status == ESUCCESS && t->status_blk) {
    const auto* blk = static_cast<const EP_STATUSBLK*>(t->status_blk.host);
    if (blk->Data[0] != 0) t->status = static_cast<int>(blk->Data[0]);
  }
  EP_TXH* h = t->handler;
  void* arg = t->arg;
  const int status = t->status;
  if (h) h(t, arg, status);
  put_txd(t);
}

bool EpNode::finished(ep_txd* t) {
  if (t->forced) return true;
  if (!t->sent) return false;
  return dev.event_fired(t->done);
}

int EpNode::poll(ep_xmtr* x) {
  int n = 0;
  // Copy: handlers may start new transmits on this transmitter.
  std::vector<ep_txd*> active = x->active;
  for (ep_txd* t : active) {
    if (!t->active || t->irq || t->finishing) continue;
    cpu("ep_poll");
    if (!t->active || t->irq || t->finishing) continue;  // finished meanwhile in another context
    if (finished(t)) {
      finish(t);
      ++n;
    }
  }
  return n;
}

void EpNode::force(ep_txd* t, int status) {
  if (!t->active || t->forced) return;
  t->forced = true;
  t->status = status;
  if (t->starting) return;  // its call is still filling it in: launch() tells the call
  if (t->irq || t->xmtr->txcallbacks) finish(t);
}

// A transmit call's CPU charges (and PIO writes) let interrupts run while it
// fills in its txd. The txd is active from get_txd, so a circuit failing
// meanwhile may force it; completing it then would run its handler and
// recycle it while the call goes on to send it (its buffer reused by the
// caller while the destination still pulls it, a txd both free and in
// flight). So a forced starting txd is only marked, and the call, at the
// point where it hands the txd over (to its circuit, the Elan or a
// fan-out), learns here that it must fail with ENETRESET instead ("the
// virtual circuit to the destination is being broken").
bool EpNode::launch(ep_txd* t) {
  t->starting = false;
  return !t->forced;
}

void EpNode::tx_event(ep_xmtr* x, elan3::E3Addr ev) {
  for (ep_txd* t : x->active) {
    if (t->done.elan != ev) continue;
    if (t->active && t->irq && !t->forced && dev.event_fired(t->done)) finish(t);
    return;
  }
}

// ep_enable_txcallbacks / ep_disable_txcallbacks (manual 2.1.5): the
// events of the transmitter's polled transmits get their interrupt turned
// on (off) by the Elan's event_irq command, which applies the sets in
// flight first and interrupts at once for an event that already fired; so
// each completion raises its interrupt and its callback runs in the
// handler, and nothing polls on a timer.
void EpNode::set_txcallbacks(ep_xmtr* x, bool on) {
  x->txcallbacks = on;
  for (ep_txd* t : x->active) {
    if (!t->active || !t->polled || t->irq == on || t->forced) continue;
    t->irq = on;
    dev.event_interrupt(t->done, on, x->cookie);
  }
}

// ---- sending ----------------------------------------------------------------------

int EpNode::send_on_circuit(ep_txd* t) {
  Circuit& c = circuit(static_cast<std::uint32_t>(t->dest));
  switch (c.state()) {
    case CircuitState::Connected:
      issue(t);
      return ESUCCESS;
    case CircuitState::Connecting:
      c.waiting.push_back(t);
      return ESUCCESS;
    case CircuitState::Failed:
      if (Calendar::now() - c.failed_at < reset_hold) return ENETRESET;
      c.fsm.fire(CircuitEvent::ResetDone, "reset hold over");
      [[fallthrough]];
    case CircuitState::Disconnected:
      if (!is_live(c.peer)) return ECONNREFUSED;
      connect(c);
      c.waiting.push_back(t);
      return ESUCCESS;
  }
  return ECONNREFUSED;
}

void EpNode::issue(ep_txd* t) {
  elan3::DmaRequest req;
  req.direction = elan3::dma::Direction::Write;
  req.opcode = elan3::dma::OpCode::Queued;
  req.size = t->buf_len;
  req.source = t->buf.elan;
  req.dest = service_queue_addr(t->service);
  req.dest_node = static_cast<std::uint32_t>(t->dest);
  req.src_cookie = static_cast<std::uint16_t>(t->index);
  req.dest_cookie = static_cast<std::uint16_t>(t->generation);  // for the retry filter
  req.priority = liveness_message(*this, t);
  const bool small = t->kind == TxKind::Small || t->kind == TxKind::Special;
  if (small) {
    // A small message is delivered when its one packet is acknowledged.
    auto* h = static_cast<SmallHeader*>(t->buf.host);
    h->circuit = t->kind == TxKind::Small ? circuit(t->dest).incarnation : 0;
    dev.store(t->buf, 0, t->buf.host, t->buf_len);
    req.src_event = t->done.elan;
  } else {
    auto* env = static_cast<EP_ENVELOPE*>(t->buf.host);
    env->Circuit = circuit(t->dest).incarnation;
  }
  t->circuit = circuit(t->dest).incarnation;
  circuit(t->dest).last_sent = Calendar::now();
  t->sent = true;
  if (dev.issue_dma(req) != elan3::DevStatus::Ok) force(t, ENETRESET);
}

// ---- failures reported by the Elan -------------------------------------------------

// A message a full queue refused is on the driver's retry list (elan3_dev.h):
// it is run again while its transmit (or multicast edge) is still the one
// that sent it. The destination cookie carries the transmit's generation
// (the fan-out's for an edge), so a txd reused after a timeout or a reset
// never has its old message sent again with its new bytes. (A hardware
// broadcast is never trapped: the Elan retries it itself.)
bool EpNode::retry_wanted(const elan3::DmaFailure& f) {
  if (Fanout* fan = fanout_of_cookie(f.src_cookie)) {
    const int i = fan->slot_of(static_cast<int>(f.node));
    return i >= 0 && (fan->gen & 0xffffu) == f.dest_cookie && !fan->failed[static_cast<std::size_t>(i)];
  }
  const ep_txd* t = txd_of_cookie(f.src_cookie);
  return t && t->active && !t->forced && t->generation == f.dest_cookie;
}

void EpNode::dma_failure(const elan3::DmaFailure& f) {
  using elan3::pkt::Token;
  if (bcast && broadcast_failure(f)) return;
  if (Fanout* fan = f.cause == elan3::intq::Cause::NetworkError ? fanout_of_cookie(f.src_cookie) : nullptr) {
    // A multicast envelope to a child: refused with an error, that child's
    // edge fails; no answer at all fails the circuit, which fails the edge.
    // (Refused by a full queue, it is on the driver's retry list.)
    const int i = fan->slot_of(static_cast<int>(f.node));
    if (i < 0) return;
    if (f.detail == static_cast<std::uint8_t>(Token::Error)) {
      fail_edge(*fan, i);
    } else if (f.node < nnodes) {
      circuit_failed(circuit(f.node), CircuitEvent::Unreachable, "network error");
      fail_edge(*fan, i);
    }
    return;
  }
  if (f.cause == elan3::intq::Cause::DmaError) {
    error(fmt::format("local DMA fault {} at Elan address {:#x} (cookie {:#x})", elan3::fault_name(f.detail), f.addr,
                      f.src_cookie));
    fail_cookie(f.src_cookie, ENETRESET);
    return;
  }
  if (f.cause == elan3::intq::Cause::NetworkError && f.addr == 0) {
    // The failed DMA was a read request's reply, run here for another node:
    // its cookie is that node's, not ours. The messages it belonged to are
    // the peer's and ours on that circuit: the circuit fails on both sides.
    if (f.node < nnodes) circuit_failed(circuit(f.node), CircuitEvent::ReplyFailed, "network error on a reply");
    return;
  }
  if (f.detail == static_cast<std::uint8_t>(Token::Error)) {
    // A translation or permission fault at the destination: that message
    // fails, the circuit stays.
    fail_cookie(f.src_cookie, ENETRESET);
    return;
  }
  // Retries exhausted (no answer, discards): the node is unreachable.
  if (f.node < nnodes) circuit_failed(circuit(f.node), CircuitEvent::Unreachable, "network error");
  if (ep_txd* t = txd_of_cookie(f.src_cookie)) {
    if (t->active && !t->forced && t->kind == TxKind::Special && Calendar::now() + special_resend < t->deadline) {
      // A special message is sent again while its timeout allows: if the
      // first copy was executed and only its ack was lost, the receiver
      // gets it twice (manual 2.1.4).
      t->retry = std::make_unique<host::Timer>(host, "ep.resend", [this, t, gen = t->generation] {
        if (t->active && !t->forced && t->generation == gen) issue(t);
      });
      t->retry->start(special_resend);
      return;
    }
  }
  fail_cookie(f.src_cookie, ENETRESET);
}

void EpNode::fail_cookie(std::uint16_t cookie, int status) {
  if (cookie == 0) return;
  if (cookie & kRxCookie) {
    const std::uint32_t i = cookie & ~kRxCookie;
    if (i >= 1 && i <= rxd_table.size()) fail_rxd(rxd_table[i - 1], status);
    return;
  }
  if (ep_txd* t = txd_of_cookie(cookie); t && t->active) force(t, status);
}

void EpNode::link_changed(bool up) {
  if (up) return;  // nodes come back through probes (membership)
  for (auto& c : circuits)
    if (c->peer != self) circuit_failed(*c, CircuitEvent::Unreachable, "link down");
}

}  // namespace nicsim::ep

// ---- identity ---------------------------------------------------------------------------

extern "C" int ep_nodeid(void) {
  NICSIM_API_CALL();
  nicsim::ep::EpNode* n = nicsim::ep::EpNode::get();
  return n ? static_cast<int>(n->self) : -1;
}

extern "C" int ep_numnodes(void) {
  NICSIM_API_CALL();
  nicsim::ep::EpNode* n = nicsim::ep::EpNode::get();
  return n ? static_cast<int>(n->nnodes) : 0;
}
