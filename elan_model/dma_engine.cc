// The Elan3 DMA engine: descriptors fetched in command order onto a run
// queue and run one at a time. The active DMA is cut into packets of at
// most max_payload bytes (whole 64-byte blocks but the last), each built
// from host memory read through the MMU, sent in order, and kept in a
// window of tx_window packets awaiting ack tokens. Any refusal (or a lost
// token) stops new packets; once every packet on the wire is answered the
// DMA is resolved: a test-fail (full input queue) with failCount left puts
// it at the tail of the run queue to re-run after testfail_backoff (the
// DMAs queued after it, to any node, go first), and at failCount 0 traps it
// to the driver (DmaTrap: the descriptor in the trap area, the engine goes
// on with the next one; the driver runs it again later; a broadcast is
// retried here, ahead of later broadcasts, keeping its number); a discard or a
// timeout resends from the first unacknowledged byte (bounded by
// retry_limit); an error token or exhausted retries end it with a network
// error interrupt. Descriptor lifecycle: FSM "elan3.dma"; per destination
// sequence synchronisation: FSM "elan3.stream".
#include <fmt/format.h>

#include <algorithm>

#include "core/sim.h"
#include "elan_model/elan3.h"

namespace nicsim::elan3 {

const FsmType& DmaMachine::type() {
  using S = DmaFsmState;
  using E = DmaFsmEvent;
  static const FsmType type =
      make_fsm_type<DmaMachine>("elan3.dma", {{S::Queued, E::Start, S::Active, "start"},
                                              {S::Requeued, E::Start, S::Active, "start"},
                                              {S::Active, E::Nak, S::Draining, "refused"},
                                              {S::Active, E::AckTimeout, S::Draining, "refused"},
                                              {S::Draining, E::Retry, S::Backoff, "resend_later"},
                                              {S::Backoff, E::Resend, S::Active, "resend"},
                                              {S::Draining, E::TestFail, S::Requeued, "testfail"},
                                              {S::Draining, E::Trap, S::Trapped, "trap"},
                                              {S::Active, E::Acked, S::Done, "acked"},
                                              {S::Active, E::LocalFault, S::Failed, "local_fault"},
                                              // A local fault after a refusal: the fault is what ends it.
                                              {S::Draining, E::LocalFault, S::Failed, "local_fault"},
                                              {S::Draining, E::NetworkError, S::Failed, "network_error"},
                                              // A network conditional some node answered false.
                                              {S::Draining, E::ConditionFalse, S::Done, "condition_false"}});
  return type;
}

const FsmType& StreamMachine::type() {
  using S = StreamFsmState;
  using E = StreamFsmEvent;
  static const FsmType type =
      make_fsm_type<StreamMachine>("elan3.stream", {{S::Unsynced, E::SyncAcked, S::InSync, "sync_acked"},
                                                    {S::InSync, E::NetworkError, S::Unsynced, "network_error"}});
  return type;
}

Desc::Desc(Elan3& elan, std::uint64_t id)
    : fsm(fmt::format("{}.dma{}", elan.obj(), id), elan.device_id(), DmaFsmState::Queued) {}

DmaEngine::DmaEngine(Elan3& elan)
    : elan_(elan),
      ack_timer_(Sim::get().calendar(), member_fn<&DmaEngine::ack_timeout>(), this),
      inspectable_("elan3.dma_queue", elan.obj() + ".dma", &DmaEngine::inspect, this) {}

void DmaEngine::inspect(const void* object, InspectRows& rows) {
  const DmaEngine& e = *static_cast<const DmaEngine*>(object);
  auto describe = [](const Desc& d) {
    return fmt::format("{} {}, {} bytes to node {}{}, {} acknowledged, retries {}{}", d.fsm.object(),
                       d.fsm.state_name(), d.size, d.node,
                       d.broadcast ? fmt::format("..{}", d.node_last) : std::string(), d.done, d.retries,
                       d.type.priority ? ", priority" : "");
  };
  add_row(rows, "active", e.active_ ? describe(*e.active_) : "none");
  add_row(rows, "window_packets", std::to_string(e.window_.size()));
  add_row(rows, "next_offset", std::to_string(e.next_offset_));
  add_row(rows, "ack_timer", e.ack_timer_.armed() ? format_time(e.ack_timer_.deadline()) : "off");
  add_row(rows, "fetches_pending", std::to_string(e.fetches_.size()));
  add_row(rows, "descriptors_fetched", std::to_string(e.fetched_));
  add_row(rows, "run_queue", std::to_string(e.runq_.size()));
  for (std::size_t i = 0; i < e.runq_.size(); ++i) add_row(rows, fmt::format("queued[{}]", i), describe(*e.runq_[i]));
  for (std::size_t n = 0; n < e.streams_.size(); ++n)
    if (e.streams_[n].fsm)
      add_row(rows, fmt::format("stream[{}]", n),
              fmt::format("{}, next seq {}", e.streams_[n].fsm->state_name(), e.streams_[n].next_seq));
}
DmaEngine::~DmaEngine() = default;

DmaEngine::Stream& DmaEngine::new_stream(std::uint32_t node) {
  if (node >= streams_.size()) streams_.resize(node + 1);
  Stream& s = streams_[node];
  if (!s.fsm)
    s.fsm = std::make_unique<Fsm<StreamMachine>>(fmt::format("{}.stream{}", elan_.obj(), node), elan_.device_id(),
                                                 StreamFsmState::Unsynced);
  return s;
}

// ---- fetching ------------------------------------------------------------------

void DmaEngine::fetch(E3Addr addr, bool from_command) {
  fetches_.push_back(std::make_unique<Fetch>());
  Fetch* f = fetches_.back().get();
  f->addr = addr;
  f->from_command = from_command;
  Sim::get().calendar().at_member<&DmaEngine::read_descriptor>(
      add_saturating(Elan3::now(), elan_.cycles(elan_.params().command_cycles)), this,
      reinterpret_cast<std::uint64_t>(f));
}

void DmaEngine::read_descriptor(std::uint64_t fetch) {
  auto* f = reinterpret_cast<Fetch*>(fetch);
  if (f->addr % 8 != 0) {
    elan_.post_interrupt(intq::Cause::DmaError, static_cast<std::uint8_t>(Fault::BadDescriptor), elan_.node_id(), 0,
                         f->addr);
    f->done = true;
    fetch_done();
    return;
  }
  elan_.mmu().translate(f->addr, dma::kSize, perm::kLocalRead, f->t,
                        {member_fn<&DmaEngine::descriptor_translated>(), this, fetch});
}

void DmaEngine::descriptor_translated(std::uint64_t fetch) {
  auto* f = reinterpret_cast<Fetch*>(fetch);
  if (f->t.fault != Fault::None) {
    elan_.post_interrupt(intq::Cause::DmaError, static_cast<std::uint8_t>(f->t.fault), elan_.node_id(), 0,
                         f->t.fault_addr);
    f->done = true;
    fetch_done();
    return;
  }
  elan_.read_pieces(f->t.pieces, f->bytes.data(), {member_fn<&DmaEngine::descriptor_read>(), this, fetch});
}

void DmaEngine::descriptor_read(std::uint64_t arg) {
  auto* f = reinterpret_cast<Fetch*>(arg & ~host::kDmaFailedBit);
  const bool ok = !(arg & host::kDmaFailedBit);
  if (!ok)
    elan_.post_interrupt(intq::Cause::DmaError, static_cast<std::uint8_t>(Fault::BusError), elan_.node_id(), 0,
                         f->addr);
  f->ok = ok;
  f->done = true;
  fetch_done();
}

void DmaEngine::fetch_done() {
  while (!fetches_.empty() && fetches_.front()->done) {
    std::unique_ptr<Fetch> f = std::move(fetches_.front());
    fetches_.pop_front();
    if (f->from_command) ++fetched_;
    if (f->ok) accept(f->bytes.data(), f->addr, false);
  }
}

void DmaEngine::enqueue_remote(const std::uint8_t* desc) { accept(desc, 0, true); }

bool DmaEngine::accept(const std::uint8_t* d, E3Addr addr, bool remote) {
  auto desc = std::make_unique<Desc>(elan_, next_desc_id_++);
  desc->addr = addr;
  desc->type = dma::Type::decode(static_cast<std::uint32_t>(get(d, dma::dma_type)));
  desc->size = static_cast<std::uint32_t>(get(d, dma::dma_size));
  desc->source = static_cast<E3Addr>(get(d, dma::dma_source));
  desc->dest = static_cast<E3Addr>(get(d, dma::dma_dest));
  desc->dest_event = static_cast<E3Addr>(get(d, dma::dma_destEvent));
  desc->dest_cv = static_cast<std::uint32_t>(get(d, dma::dma_destCookieVProc));
  desc->src_event = static_cast<E3Addr>(get(d, dma::dma_srcEvent));
  desc->src_cv = static_cast<std::uint32_t>(get(d, dma::dma_srcCookieVProc));
  desc->node = dma::vproc_of(desc->dest_cv);
  const auto opc = static_cast<dma::OpCode>(desc->type.opcode);
  desc->broadcast = dma::is_broadcast(opc);
  desc->conditional = opc == dma::OpCode::ConditionalBroadcast;
  if (desc->broadcast) desc->node_last = dma::cookie_of(desc->dest_cv);
  desc->type.is_remote = remote ? 1 : 0;
  const auto dir = static_cast<dma::Direction>(desc->type.direction);
  const auto op = static_cast<dma::OpCode>(desc->type.opcode);
  Fault bad = Fault::None;
  if (desc->size > dma::kMaxSize || (dir != dma::Direction::Write && dir != dma::Direction::Read) ||
      static_cast<std::uint32_t>(op) > static_cast<std::uint32_t>(dma::OpCode::ConditionalBroadcast) ||
      (desc->conditional && (dir != dma::Direction::Write || desc->size != dma::kTestSize)) ||
      (dir == dma::Direction::Read && (op != dma::OpCode::Normal || remote)) ||
      (desc->broadcast && (desc->node_last < desc->node || desc->node_last == 0)))
    bad = Fault::BadDescriptor;
  else if ((op == dma::OpCode::Queued || op == dma::OpCode::QueuedBroadcast) &&
           (desc->size > elan_.params().max_payload || desc->size == 0))
    bad = Fault::TooBig;
  ++elan_.mutable_stats().dmas;
  elan_.trace("dma_queued", {{"dma", desc->fsm.object()},
                             {"dir", dma::direction_name(desc->type.direction)},
                             {"op", dma::opcode_name(desc->type.opcode)},
                             {"size", desc->size},
                             {"node", desc->node},
                             {"remote", static_cast<unsigned>(remote)}});
  if (bad != Fault::None) {
    Sim::get().error(elan_.obj(),
                     fmt::format("DMA descriptor at {:#x} refused: {} (direction {}, opcode {}, size {})", addr,
                                 fault_name(static_cast<std::uint32_t>(bad)), dma::direction_name(desc->type.direction),
                                 dma::opcode_name(desc->type.opcode), desc->size));
    ++elan_.mutable_stats().dmas_failed;
    elan_.post_interrupt(intq::Cause::DmaError, static_cast<std::uint8_t>(bad), desc->node,
                         dma::cookie_of(desc->src_cv), addr);
    return false;
  }
  enqueue(std::move(desc));
  pump();
  return true;
}

// A priority DMA goes behind the other priority DMAs, ahead of the rest.
void DmaEngine::enqueue(std::unique_ptr<Desc> d) {
  auto it = runq_.end();
  if (d->type.priority) {
    it = runq_.begin();
    while (it != runq_.end() && (*it)->type.priority) ++it;
  }
  runq_.insert(it, std::move(d));
}

// ---- running -----------------------------------------------------------------------

void DmaEngine::schedule_pump(Tick at) {
  if (at >= pump_at_) return;
  pump_at_ = at;
  Sim::get().calendar().at_member<&DmaEngine::pump_due>(at, this, at);
}

void DmaEngine::pump_due(std::uint64_t at) {
  if (pump_at_ == at) pump_at_ = kTickMax;
  pump();
}

void DmaEngine::pump() {
  if (active_) return;
  const Tick n = Elan3::now();
  Tick earliest = kTickMax;
  // The first DMA not waiting out a test-fail backoff runs; a broadcast
  // waiting out its backoff holds back the broadcasts after it.
  bool broadcast_waits = false;
  for (auto it = runq_.begin(); it != runq_.end(); ++it) {
    if ((*it)->broadcast && broadcast_waits) continue;
    if ((*it)->not_before <= n) {
      active_ = std::move(*it);
      runq_.erase(it);
      Sim::get().calendar().at_member<&DmaEngine::start_due>(
          add_saturating(n, elan_.cycles(elan_.params().desc_cycles)), this,
          reinterpret_cast<std::uint64_t>(active_.get()));
      return;
    }
    broadcast_waits |= (*it)->broadcast;
    earliest = std::min(earliest, (*it)->not_before);
  }
  if (earliest != kTickMax) schedule_pump(earliest);
}

void DmaEngine::start_due(std::uint64_t desc) { start(reinterpret_cast<Desc*>(desc)); }

void DmaEngine::start(Desc* d) {
  d->fsm.fire(DmaFsmEvent::Start, "start");
  next_offset_ = d->done;
  sent_empty_ = false;
  draining_ = false;
  local_fault_ = Fault::None;
  clear_window();
  reset_reader(d->done);
  build_next();
}

namespace {
bool data_dma(const Desc& d) {
  return static_cast<dma::Direction>(d.type.direction) == dma::Direction::Write && d.size > 0;
}
}  // namespace

void DmaEngine::build_next() {
  Desc* d = active_.get();
  while (!draining_ && window_.size() < elan_.params().tx_window) {
    const bool more = data_dma(*d) ? next_offset_ < d->size : !sent_empty_;
    if (!more) break;
    // A broadcast has one packet on the wire at a time (each needs a token
    // from every node of the range, and receivers take any later number
    // from it); the window's others are read meanwhile (send_ready holds
    // them).
    Stream& s = stream(d->node);
    // Until a sync packet is acknowledged, one packet at a time: a second
    // one carrying the sync flag would be taken in sequence even if the
    // first was refused.
    const bool unsynced = !d->broadcast && s.fsm->state() == StreamFsmState::Unsynced;
    if (unsynced && !window_.empty()) break;
    TxPkt& pk = window_.push_back();
    pk = TxPkt{};
    pk.seq = d->broadcast ? bcast_seq_++ : s.next_seq++;
    pk.offset = next_offset_;
    pk.len = data_dma(*d) ? std::min(elan_.params().max_payload, d->size - next_offset_) : 0;
    pk.sync = unsynced;
    pk.retry = pk.offset < d->high || (!data_dma(*d) && d->retries > 0);
    next_offset_ += pk.len;
    sent_empty_ = true;
    // A data packet is built from the DMA buffer once the reader has its bytes.
    if (!data_dma(*d)) {
      const bool read = static_cast<dma::Direction>(d->type.direction) == dma::Direction::Read;
      built(pk, Fault::None, 0, elan_.fabric().pool().get(pkt::kHeaderSize + pkt::kCrcSize + (read ? dma::kSize : 0)));
    }
  }
  if (d->broadcast) send_ready();
  if (active_.get() == d && data_dma(*d)) fill_packets();
}

// ---- the data reader ---------------------------------------------------------------
//
// DMA data comes over the host bus in PCI reads of up to pci_read_bytes
// (never across an Elan page, whose host memory is contiguous), one at a
// time: conventional PCI has no split transactions, and the host bridge
// serves a master's read as a delayed transaction, so every read pays the
// bus's read latency and the next is requested pci_read_cycles after the
// last one's data came. The bytes go into the DMA buffer (dma_buffer bytes
// from the first unacknowledged one: resends come from it), and packets are
// built from it in order. This is what limits a stream to the host's PCI
// read throughput rather than the link's.

void DmaEngine::reset_reader(std::uint32_t from) {
  ++read_gen_;
  buf_from_ = read_next_ = read_end_ = from;
  read_fault_ = Fault::None;
}

void DmaEngine::fill_packets() {
  Desc* d = active_.get();
  const std::uint32_t cap = elan_.params().dma_buffer;
  for (std::size_t i = 0; i < window_.size(); ++i) {
    TxPkt& pk = window_[i];
    if (pk.st != TxPkt::St::Building) continue;
    if (read_fault_ != Fault::None && pk.offset + pk.len > read_fault_off_) {
      built(pk, read_fault_, read_fault_addr_, nullptr);
      return;
    }
    if (pk.offset + pk.len > read_end_) break;
    fabric::Packet* p = elan_.fabric().pool().get(pkt::kHeaderSize + pk.len + pkt::kCrcSize);
    const std::uint32_t at = pk.offset % cap, first = std::min(pk.len, cap - at);
    std::memcpy(p->bytes.data() + pkt::kHeaderSize, buf_.data() + at, first);
    if (first < pk.len) std::memcpy(p->bytes.data() + pkt::kHeaderSize + first, buf_.data(), pk.len - first);
    built(pk, Fault::None, 0, p);
    if (active_.get() != d) return;
  }
  read_more();
}

void DmaEngine::read_more() {
  Desc* d = active_.get();
  if (!d || !data_dma(*d) || read_busy_ || read_fault_ != Fault::None || read_next_ >= d->size) return;
  const Elan3Params& ep = elan_.params();
  // The ring, plus room for a read that runs past its end (moved to the
  // front when it lands), so reads land in place.
  if (buf_.size() != ep.dma_buffer + ep.pci_read_bytes) buf_.assign(ep.dma_buffer + ep.pci_read_bytes, 0);
  const std::uint32_t space = buf_from_ + ep.dma_buffer - read_next_;
  if (space == 0) return;
  const E3Addr va = d->source + read_next_;
  const std::uint32_t to_page = kPageSize - (va & (kPageSize - 1));
  const std::uint32_t n = std::min({ep.pci_read_bytes, d->size - read_next_, space, to_page});
  const std::uint32_t off = read_next_;
  const std::uint64_t gen = read_gen_;
  read_busy_ = true;
  read_next_ += n;
  const std::uint32_t need = d->type.is_remote ? perm::kRemoteRead : perm::kLocalRead;
  const Tick now = Elan3::now();
  Tick cost = 0;
  if (elan_.mmu().translate_cached(va, n, need, read_t_, cost)) {
    issue_read(gen, off, n, read_t_, std::max(now + cost, read_free_));
    return;
  }
  read_.gen = gen;
  read_.off = off;
  read_.n = n;
  elan_.mmu().translate(va, n, need, read_t_, {member_fn<&DmaEngine::read_translated>(), this});
}

void DmaEngine::read_translated() {
  issue_read(read_.gen, read_.off, read_.n, read_t_, std::max(Elan3::now(), read_free_));
}

void DmaEngine::issue_read(std::uint64_t gen, std::uint32_t off, std::uint32_t n, const Translation& t, Tick at) {
  if (t.fault != Fault::None) {
    read_busy_ = false;
    if (gen == read_gen_) {
      read_fault_ = t.fault;
      read_fault_off_ = off;
      read_fault_addr_ = t.fault_addr;
    }
    fill_packets();
    return;
  }
  Read& r = read_;  // read_busy_: the only one in flight
  r.gen = gen;
  r.off = off;
  r.n = n;
  r.pieces.assign(t.pieces.begin(), t.pieces.end());
  r.ok = true;
  Sim::get().calendar().at_member<&DmaEngine::start_read>(at, this);
}

void DmaEngine::start_read() {
  Read& r = read_;
  r.left = static_cast<std::uint32_t>(r.pieces.size());
  std::uint8_t* to = buf_.data() + r.off % elan_.params().dma_buffer;
  for (const HostPiece& h : r.pieces) {
    elan_.bus_read(h.addr, to, h.len, {member_fn<&DmaEngine::read_done>(), this, 0});
    to += h.len;
  }
}

void DmaEngine::read_done(std::uint64_t arg) {
  Read& r = read_;
  r.ok = r.ok && !(arg & host::kDmaFailedBit);
  if (--r.left) return;
  read_busy_ = false;
  read_free_ = Elan3::now() + elan_.cycles(elan_.params().pci_read_cycles);
  if (r.gen == read_gen_) {
    if (!r.ok) {
      read_fault_ = Fault::BusError;
      read_fault_off_ = r.off;
      read_fault_addr_ = active_->source + r.off;
    } else {
      // The bytes landed at off % cap; those past the ring's end go to its front.
      const std::uint32_t cap = elan_.params().dma_buffer;
      const std::uint32_t at = r.off % cap;
      if (at + r.n > cap) std::memcpy(buf_.data(), buf_.data() + cap, at + r.n - cap);
      read_end_ = r.off + r.n;
    }
  }
  fill_packets();
}

void DmaEngine::clear_window() {
  for (std::size_t i = 0; i < window_.size(); ++i) {
    TxPkt& pk = window_[i];
    if (pk.pkt) {
      elan_.fabric().pool().put(pk.pkt);
      pk.pkt = nullptr;
    }
  }
  window_.clear();
  ack_timer_.cancel();
}

void DmaEngine::built(TxPkt& pkt, Fault f, E3Addr fault_addr, fabric::Packet* p) {
  TxPkt* pk = &pkt;  // a packet of the window still Building
  Desc* d = active_.get();
  if (f != Fault::None) {
    if (p) elan_.fabric().pool().put(p);
    pk->st = TxPkt::St::Answered;
    pk->token = Token::Error;
    if (local_fault_ == Fault::None) {
      local_fault_ = f;
      local_fault_addr_ = fault_addr ? fault_addr : d->source + pk->offset;
    }
    draining_ = true;
    maybe_resolve();
    return;
  }
  const auto dir = static_cast<dma::Direction>(d->type.direction);
  const auto op = static_cast<dma::OpCode>(d->type.opcode);
  Trans trans = Trans::WriteBlock;
  E3Addr addr = d->dest + pk->offset;
  E3Addr event = 0;
  std::uint32_t payload = pk->len;
  std::uint8_t* w = p->bytes.data();
  std::uint8_t* req = w + pkt::kHeaderSize;
  if (dir == dma::Direction::Read) {
    // The remote runs this as a write back to us.
    trans = Trans::ReadRequest;
    addr = 0;
    payload = dma::kSize;
    dma::Type t;
    t.data_type = d->type.data_type;
    t.direction = static_cast<std::uint32_t>(dma::Direction::Write);
    put(req, dma::dma_type, t.encode());
    put(req, dma::dma_size, d->size);
    put(req, dma::dma_source, d->source);
    put(req, dma::dma_dest, d->dest);
    put(req, dma::dma_destEvent, d->dest_event);
    put(req, dma::dma_destCookieVProc, dma::cookie_vproc(dma::cookie_of(d->dest_cv), elan_.node_id()));
    put(req, dma::dma_srcEvent, d->src_event);
    put(req, dma::dma_srcCookieVProc, dma::cookie_vproc(dma::cookie_of(d->src_cv), d->node));
  } else if (d->size == 0) {
    trans = Trans::SetEvent;
    addr = d->dest_event;
  } else if (d->conditional) {
    trans = Trans::TestWord;
  } else {
    if (op == dma::OpCode::Queued || op == dma::OpCode::QueuedBroadcast) {
      trans = Trans::QueuedWrite;
      addr = d->dest;
    }
    if (pk->offset + pk->len == d->size) event = d->dest_event;
  }
  const std::uint32_t len = pkt::kHeaderSize + payload + pkt::kCrcSize;
  std::uint8_t flags = 0;
  if (pk->offset == 0) flags |= pkt::kFlagFirst;
  if (pk->offset + pk->len == d->size) flags |= pkt::kFlagLast;
  if (pk->retry) flags |= pkt::kFlagRetry;
  if (pk->sync) flags |= pkt::kFlagSync;
  put(w, pkt::route_first, d->node);
  put(w, pkt::route_last, d->broadcast ? d->node_last : 0);
  put(w, pkt::trans, static_cast<std::uint8_t>(trans));
  put(w, pkt::flags, flags);
  put(w, pkt::seq, pk->seq);
  put(w, pkt::src_node, elan_.node_id());
  put(w, pkt::length, payload);
  put(w, pkt::addr, addr);
  put(w, pkt::event, event);
  put(w, pkt::cookie, d->dest_cv);
  const std::uint32_t crc = pkt::crc32(w, len - pkt::kCrcSize);
  std::memcpy(w + len - pkt::kCrcSize, &crc, pkt::kCrcSize);
  pk->st = TxPkt::St::Ready;
  pk->pkt = p;
  send_ready();
}

void DmaEngine::send_ready() {
  Desc* d = active_.get();
  for (std::size_t i = 0; i < window_.size(); ++i) {
    TxPkt& pk = window_[i];
    if (pk.st == TxPkt::St::Building) return;  // keep wire order
    if (pk.st != TxPkt::St::Ready) continue;
    if (d->broadcast) {
      if (i > 0 && window_[i - 1].st == TxPkt::St::Sent) return;  // one on the wire
      pk.tokens_left = d->node_last - d->node + 1;
      bcast_answered_.assign(pk.tokens_left, 0);
    }
    pk.st = TxPkt::St::Sent;
    const Tick at = std::max(Elan3::now(), tx_free_) + elan_.cycles(elan_.params().tx_packet_cycles);
    tx_free_ = at;
    fabric::Packet* p = pk.pkt;
    pk.pkt = nullptr;
    p->meta.kind = fabric::kPacketElan;
    p->meta.slid = static_cast<std::uint16_t>(elan_.node_id());
    p->meta.dlid = static_cast<std::uint16_t>(d->node);
    p->meta.dlid_hi = static_cast<std::uint16_t>(d->broadcast ? d->node_last : 0);
    p->meta.vl = 0;
    p->meta.keep_route = true;  // for its ack token
    p->meta.combine_replies = d->broadcast;
    p->meta.src_node = elan_.device_id();
    p->meta.created = Elan3::now();
    auto& st = elan_.mutable_stats();
    ++st.tx_packets;
    st.tx_bytes += pk.len;
    if (pk.retry) ++st.retransmits;
    if (pk.offset + pk.len > d->high) d->high = pk.offset + pk.len;
    if (elan_.tracing())
      elan_.trace("tx", {{"dma", d->fsm.object()},
                         {"seq", static_cast<unsigned>(pk.seq)},
                         {"offset", pk.offset},
                         {"len", pk.len},
                         {"node", d->node},
                         {"retry", static_cast<unsigned>(pk.retry)}});
    elan_.transmit_at(at, p);
    pk.timeout = Sim::get().calendar().place(add_saturating(at, elan_.params().ack_timeout));
    if (!ack_timer_.armed()) ack_timer_.rearm(pk.timeout);  // else an older packet awaits its token
  }
}

// The timer follows the oldest packet awaiting its token, or is disarmed.
void DmaEngine::follow_oldest_sent() {
  for (std::size_t i = 0; i < window_.size(); ++i) {
    if (window_[i].st == TxPkt::St::Sent) {
      ack_timer_.rearm(window_[i].timeout);
      return;
    }
  }
  ack_timer_.cancel();
}

// The oldest packet awaiting a token timed out. The timer moves on to the
// next one first, as an event per packet would already be waiting there.
void DmaEngine::ack_timeout() {
  std::size_t i = 0;
  while (i < window_.size() && window_[i].st != TxPkt::St::Sent) ++i;
  if (i == window_.size()) return;
  for (std::size_t j = i + 1; j < window_.size(); ++j) {
    if (window_[j].st == TxPkt::St::Sent) {
      ack_timer_.rearm(window_[j].timeout);
      break;
    }
  }
  timeout(window_[i]);
}

// ---- tokens and resolution -------------------------------------------------------------

// A broadcast's tokens answer for contiguous nodes of its range (one each
// from the receivers, or joined by the switches); the packet is answered
// when every node of the range has been, by the worst token. False: a
// node answered twice (a late token of an earlier sending).
bool DmaEngine::broadcast_answered(TxPkt& pk, std::uint32_t first, std::uint32_t count, Token t) {
  const std::uint32_t from = first - active_->node;
  if (count == 0 || from + count > bcast_answered_.size()) return false;
  for (std::uint32_t i = from; i < from + count; ++i)
    if (bcast_answered_[i]) return false;
  std::fill_n(bcast_answered_.begin() + from, count, std::uint8_t{1});
  pk.worst = pkt::worse(pk.worst, t);
  pk.tokens_left -= count;
  return true;
}

void DmaEngine::token(std::uint32_t from, std::uint16_t seq, std::uint16_t expect, Token t, std::uint32_t count) {
  Desc* d = active_.get();
  TxPkt* pk = nullptr;
  const bool from_dest = d && (d->broadcast ? from >= d->node && from <= d->node_last : d->node == from);
  if (from_dest && d->state() != DmaFsmState::Backoff)
    for (std::size_t i = 0; i < window_.size(); ++i)
      if (window_[i].seq == seq && window_[i].st == TxPkt::St::Sent) pk = &window_[i];
  if (pk && d->broadcast) {
    if (!broadcast_answered(*pk, from, count, t)) {
      pk = nullptr;
    } else {
      if (pk->tokens_left > 0) {
        ++elan_.mutable_stats().acks_received;
        return;
      }
      t = pk->worst;
    }
  }
  if (!pk) {
    ++elan_.mutable_stats().stale_acks;
    elan_.trace("stale_token", {{"node", from},
                                {"seq", static_cast<unsigned>(seq)},
                                {"token", pkt::token_name(static_cast<std::uint32_t>(t))}});
    return;
  }
  ++elan_.mutable_stats().acks_received;
  pk->st = TxPkt::St::Answered;
  pk->token = t;
  if (ack_timer_.armed() && pk->timeout == ack_timer_.place()) follow_oldest_sent();
  last_expect_ = expect;
  if (elan_.tracing())
    elan_.trace("token", {{"dma", d->fsm.object()},
                          {"seq", static_cast<unsigned>(seq)},
                          {"token", pkt::token_name(static_cast<std::uint32_t>(t))}});
  if (t == Token::Ok) {
    d->retries = 0;  // retry_limit counts failures in a row, not per DMA
    Stream& s = stream(d->node);
    if (!d->broadcast && pk->sync && s.fsm->state() == StreamFsmState::Unsynced)
      s.fsm->fire(StreamFsmEvent::SyncAcked, "sync_acked");
    while (!window_.empty() && window_.front().st == TxPkt::St::Answered && window_.front().token == Token::Ok) {
      d->done += window_.front().len;
      window_.pop_front();
    }
    if (d->done > buf_from_) buf_from_ = std::min(d->done, read_end_);
  } else if (!draining_) {
    draining_ = true;
    d->fsm.fire(DmaFsmEvent::Nak, pkt::token_name(static_cast<std::uint32_t>(t)));
  }
  if (draining_) {
    maybe_resolve();
    return;
  }
  const bool more = data_dma(*d) ? next_offset_ < d->size : !sent_empty_;
  if (!more && window_.empty()) {
    finish(true, 0);
    return;
  }
  build_next();
}

void DmaEngine::timeout(TxPkt& pk) {
  ++elan_.mutable_stats().ack_timeouts;
  pk.st = TxPkt::St::Answered;
  pk.token = Token::Discard;
  pk.timed_out = true;
  elan_.trace("ack_timeout", {{"dma", active_->fsm.object()}, {"seq", static_cast<unsigned>(pk.seq)}});
  if (!draining_) {
    draining_ = true;
    active_->fsm.fire(DmaFsmEvent::AckTimeout, "ack_timeout");
  }
  maybe_resolve();
}

void DmaEngine::maybe_resolve() {
  Desc* d = active_.get();
  if (d->state() == DmaFsmState::Active && local_fault_ != Fault::None) {
    // A local fault before anything was refused: stop here too.
    for (std::size_t i = 0; i < window_.size(); ++i)
      if (window_[i].st == TxPkt::St::Sent) return;
    finish(false, 0);
    return;
  }
  for (std::size_t i = 0; i < window_.size(); ++i)
    if (window_[i].st == TxPkt::St::Sent) return;  // tokens still to come
  bool error = false, testfail = false, timed_out = false;
  std::uint16_t first_seq = 0;
  bool have_first = false;
  Token last = Token::Discard;
  for (std::size_t i = 0; i < window_.size(); ++i) {
    const TxPkt& p = window_[i];
    if (p.st != TxPkt::St::Answered || p.token == Token::Ok) continue;
    if (!have_first) {
      first_seq = p.seq;
      have_first = true;
    }
    error |= p.token == Token::Error;
    testfail |= p.token == Token::TestFail;
    timed_out |= p.timed_out;
    if (!p.timed_out) last = p.token;
  }
  // A network conditional some node answered false was executed everywhere.
  const bool condition_false = d->conditional && testfail && !error && !timed_out;
  // A broadcast that ends here without being resent keeps its numbers used:
  // the nodes that executed a packet would take the next broadcast under
  // the same number for a repeat and answer it Ok without executing it.
  const std::uint16_t bcast_after = bcast_seq_;
  const auto abandon = [&] {
    if (d->broadcast) bcast_seq_ = bcast_after;
  };
  if (have_first && !condition_false) {
    if (d->broadcast)
      bcast_seq_ = first_seq;
    else
      stream(d->node).next_seq = first_seq;
  }
  clear_window();
  if (local_fault_ != Fault::None) {
    abandon();
    finish(false, 0);
    return;
  }
  if (error) {
    abandon();
    finish(false, static_cast<std::uint8_t>(Token::Error));
    return;
  }
  if (condition_false) {
    finish_condition_false();
    return;
  }
  if (testfail && d->broadcast) {
    // Nodes of the range that took the packet answer its resend Ok without
    // taking it again only if it keeps its number, so a refused broadcast
    // is not trapped (the driver's re-run would take a new number): it goes
    // back to the head, later broadcasts wait for it, unicast DMAs go on.
    ++d->testfails;
    ++elan_.mutable_stats().dma_requeues;
    d->fsm.fire(DmaFsmEvent::TestFail, "testfail");
    d->not_before =
        add_saturating(Elan3::now(), elan_.params().testfail_backoff * std::min<std::uint32_t>(d->testfails, 8));
    runq_.push_front(std::move(active_));
    pump();
    return;
  }
  if (testfail) {
    ++d->testfails;
    if (d->type.fail_count == 0) {
      switch (trap(*d)) {
        case TrapResult::Trapped:
          return;
        case TrapResult::NoTrapArea:
          finish(false, static_cast<std::uint8_t>(Token::TestFail));
          return;
        case TrapResult::QueueFull:
          break;  // kept here until the driver makes room
      }
    } else {
      --d->type.fail_count;
    }
    ++elan_.mutable_stats().dma_requeues;
    d->fsm.fire(DmaFsmEvent::TestFail, "testfail");
    d->not_before = add_saturating(Elan3::now(), elan_.params().testfail_backoff);
    enqueue(std::move(active_));
    pump();
    return;
  }
  ++d->retries;
  if (d->retries > elan_.params().retry_limit) {
    abandon();
    finish(false, timed_out && last == Token::Discard ? intq::kDetailTimeout : static_cast<std::uint8_t>(last));
    return;
  }
  d->fsm.fire(DmaFsmEvent::Retry, "resend_later");
  Sim::get().calendar().at_member<&DmaEngine::resend>(
      add_saturating(Elan3::now(), elan_.params().retry_backoff * d->retries), this,
      reinterpret_cast<std::uint64_t>(d));
}

// The backoff of the DMA `desc` is over: it resends from its first
// unacknowledged byte, if it is still the active one.
void DmaEngine::resend(std::uint64_t desc) {
  Desc* d = active_.get();
  if (reinterpret_cast<std::uint64_t>(d) != desc) return;
  d->fsm.fire(DmaFsmEvent::Resend, "resend");
  draining_ = false;
  next_offset_ = d->done;
  sent_empty_ = false;
  build_next();
}

// The descriptor as it stands (what is left of it, failCount 0) goes to the
// driver; the engine goes on.
TrapResult DmaEngine::trap(Desc& d) {
  std::uint8_t b[dma::kSize];
  const bool queued = static_cast<dma::OpCode>(d.type.opcode) == dma::OpCode::Queued ||
                      static_cast<dma::OpCode>(d.type.opcode) == dma::OpCode::QueuedBroadcast;
  dma::Type t = d.type;
  t.is_remote = 0;
  put(b, dma::dma_type, t.encode());
  put(b, dma::dma_size, d.size - d.done);
  put(b, dma::dma_source, d.source + d.done);
  put(b, dma::dma_dest, queued ? d.dest : d.dest + d.done);
  put(b, dma::dma_destEvent, d.dest_event);
  put(b, dma::dma_destCookieVProc, d.dest_cv);
  put(b, dma::dma_srcEvent, d.src_event);
  put(b, dma::dma_srcCookieVProc, d.src_cv);
  const TrapResult r =
      elan_.trap_dma(b, static_cast<std::uint8_t>(Token::TestFail), d.node, dma::cookie_of(d.src_cv), d.addr);
  if (r != TrapResult::Trapped) return r;
  ++elan_.mutable_stats().dmas_trapped;
  d.fsm.fire(DmaFsmEvent::Trap, "trap");
  active_.reset();
  pump();
  return r;
}

void DmaEngine::finish_condition_false() {
  std::unique_ptr<Desc> d = std::move(active_);
  d->fsm.fire(DmaFsmEvent::ConditionFalse, "condition_false");
  ++elan_.mutable_stats().dmas_done;
  ++elan_.mutable_stats().conditions_false;
  if (d->dest_event) elan_.events().set(d->dest_event, perm::kLocalWrite);
  pump();
}

void DmaEngine::finish(bool ok, std::uint8_t detail) {
  std::unique_ptr<Desc> d = std::move(active_);
  clear_window();
  auto& st = elan_.mutable_stats();
  if (ok) {
    d->fsm.fire(DmaFsmEvent::Acked, "acked");
    ++st.dmas_done;
    const bool write = static_cast<dma::Direction>(d->type.direction) == dma::Direction::Write;
    if (write && d->src_event)
      elan_.events().set(d->src_event, d->type.is_remote ? perm::kRemoteEvent : perm::kLocalWrite);
  } else {
    ++st.dmas_failed;
    const std::uint32_t cookie = dma::cookie_of(d->src_cv);
    if (local_fault_ != Fault::None) {
      d->fsm.fire(DmaFsmEvent::LocalFault, fault_name(static_cast<std::uint32_t>(local_fault_)));
      elan_.post_interrupt(intq::Cause::DmaError, static_cast<std::uint8_t>(local_fault_), d->node, cookie,
                           local_fault_addr_);
    } else {
      d->fsm.fire(DmaFsmEvent::NetworkError, "network_error");
      Stream& s = stream(d->node);
      if (!d->broadcast && s.fsm->state() == StreamFsmState::InSync)
        s.fsm->fire(StreamFsmEvent::NetworkError, "network_error");
      elan_.post_interrupt(intq::Cause::NetworkError, detail, d->node, cookie, d->addr);
    }
  }
  local_fault_ = Fault::None;
  pump();
}

}  // namespace nicsim::elan3
