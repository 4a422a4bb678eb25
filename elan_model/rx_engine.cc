// The Elan3 receive side: network packets are checked (CRC, route,
// sequence) and executed one at a time in arrival order, each holding its
// input buffer until done (so a slow host bus back-pressures the link), and
// each answered with one ack token. Every access to host memory goes through
// the MMU with the permission the packet's transaction needs; a fault is
// answered with the error token and writes nothing. Ack tokens coming back
// for our own packets go straight to the DMA engine.
#include <fmt/format.h>

#include "core/sim.h"
#include "fabric/link.h"
#include "elan_model/elan3.h"

namespace nicsim::elan3 {

namespace {
bool seq_before(std::uint16_t a, std::uint16_t b) { return static_cast<std::int16_t>(a - b) < 0; }
// The CRC in the last bytes of a packet or token of `size` bytes (at least
// the CRC's) is that of the bytes before it.
bool crc_matches(const std::uint8_t* b, std::size_t size) {
  std::uint32_t crc;
  std::memcpy(&crc, b + size - pkt::kCrcSize, pkt::kCrcSize);
  return crc == pkt::crc32(b, size - pkt::kCrcSize);
}

// The tokens of a broadcast's copies, joined by the switch that copied it
// (elan3_regs.h ack_count). A token hit by a bit error on the way keeps
// its bad CRC in the join, so the sender drops the joined one.
void join_tokens(fabric::Packet& into, const fabric::Packet& other) {
  into.meta.bit_errors += other.meta.bit_errors;
  if (into.bytes.size() != pkt::kAckSize || other.bytes.size() != pkt::kAckSize) {
    into.bytes.resize(1);  // malformed: the sender drops it as such
    return;
  }
  std::uint8_t* a = into.bytes.data();
  const std::uint8_t* b = other.bytes.data();
  put(a, pkt::ack_token,
      static_cast<std::uint8_t>(
          pkt::worse(static_cast<Token>(get(a, pkt::ack_token)), static_cast<Token>(get(b, pkt::ack_token)))));
  put(a, pkt::ack_src_node, std::min(get(a, pkt::ack_src_node), get(b, pkt::ack_src_node)));
  put(a, pkt::ack_count, get(a, pkt::ack_count) + get(b, pkt::ack_count));
  if (into.meta.bit_errors > 0) return;
  const std::uint32_t crc = pkt::crc32(a, pkt::kAckSize - pkt::kCrcSize);
  std::memcpy(a + pkt::kAckSize - pkt::kCrcSize, &crc, pkt::kCrcSize);
}

[[maybe_unused]] const bool tokens_join = [] {
  fabric::register_reply_combiner(fabric::kPacketElan, &join_tokens);
  return true;
}();
}  // namespace

RxEngine::RxEngine(Elan3& elan) : elan_(elan) {}

// Packets are held by reference count (Packet::device_refs): the pipeline
// holds one, every posted write of its payload another, so the payload is
// written from the packet itself and the packet goes back to the pool when
// the last write has landed.
void RxEngine::release(fabric::Packet* p) {
  if (--p->device_refs == 0) elan_.fabric().pool().put(p);
}

void RxEngine::packet(fabric::Port* in, fabric::Packet* p) {
  if (p->meta.kind != fabric::kPacketElan) {
    Sim::get().error(elan_.obj(), fmt::format("received a packet of kind {} (not an Elan packet): dropped",
                                              static_cast<unsigned>(p->meta.kind)));
    if (in) in->release(*p, Elan3::now());
    elan_.fabric().pool().put(p);
    return;
  }
  ++p->device_refs;
  queue_.push_back({in, p});
  if (busy_) return;
  busy_ = true;
  const Tick setup = elan_.cycles(elan_.params().rx_packet_cycles);
  if (!in) {
    schedule_run(Elan3::now() + setup);  // looped back inside the Elan: all of it is here
    return;
  }
  // The port delivers `setup` after the tail (Port::deliver_after_tail):
  // the engine starts now, or `setup` after it finished the packet before
  // when that was later (it was still busy when this one's tail came in).
  const Tick start = std::max(Elan3::now(), free_since_ + setup);
  if (start == Elan3::now())
    run();
  else
    schedule_run(start);
}

// Tokens take the short path: checked and handed to the DMA engine. One
// comes back along its packet's route (fabric::Port::carry_back), or turns
// round inside the Elan for a packet to this node.
void RxEngine::reply(fabric::Packet* token, Tick tail) {
  Sim::get().calendar().at_member<&RxEngine::token_in>(tail + elan_.cycles(elan_.params().ack_cycles), this,
                                                       reinterpret_cast<std::uint64_t>(token));
}

void RxEngine::token_in(std::uint64_t token) {
  auto* p = reinterpret_cast<fabric::Packet*>(token);
  Elan3& elan = elan_;
  if (!fabric::Port::route_intact(*p)) {
    // A link of its route went down while it was on the way: the sender's
    // ack timer resends, as for any lost token.
    elan.trace("rx_token_lost", {{"pkt", p->meta.id}});
    elan.fabric().pool().put(p);
    return;
  }
  const std::uint8_t* b = p->bytes.data();
  const bool check = elan.params().verify_crc_always || p->meta.bit_errors > 0;
  if (p->bytes.size() != pkt::kAckSize || (check && !crc_matches(b, pkt::kAckSize))) {
    ++elan.mutable_stats().rx_bad_crc;
    elan.trace("rx_bad_token", {{"bytes", static_cast<unsigned>(p->bytes.size())}});
  } else {
    elan.dma().token(static_cast<std::uint32_t>(get(b, pkt::ack_src_node)),
                     static_cast<std::uint16_t>(get(b, pkt::ack_seq)),
                     static_cast<std::uint16_t>(get(b, pkt::ack_expect)), static_cast<Token>(get(b, pkt::ack_token)),
                     static_cast<std::uint32_t>(get(b, pkt::ack_count)));
  }
  elan.fabric().pool().put(p);
}

void RxEngine::schedule_run(Tick at) { Sim::get().calendar().at_member<&RxEngine::run>(at, this); }

void RxEngine::run() {
  busy_ = true;
  process(queue_.front().p);
}

void RxEngine::done(Token t) {
  Pending pk = queue_.front();
  queue_.pop_front();
  const std::uint8_t* h = pk.p->bytes.data();
  const auto src = static_cast<std::uint32_t>(get(h, pkt::src_node));
  const auto len = static_cast<std::uint32_t>(get(h, pkt::length));
  if ((t == Token::Ok || (t == Token::TestFail && testing_)) && !replay_) {
    if (bcast_)
      bexpected_[src] = static_cast<std::uint16_t>(seq_ + 1);
    else
      ++expected_[src];
    ++elan_.mutable_stats().rx_packets;
    elan_.mutable_stats().rx_bytes += len;
  }
  replay_ = testing_ = false;
  answer(*pk.p, t);
  if (pk.in) pk.in->release(*pk.p, Elan3::now());
  release(pk.p);
  start_next();
}

// Every queued packet is all here (the port delivers after the tail), so
// the next one starts its set-up now.
void RxEngine::start_next() {
  busy_ = false;
  free_since_ = Elan3::now();
  if (queue_.empty()) return;
  busy_ = true;
  schedule_run(free_since_ + elan_.cycles(elan_.params().rx_packet_cycles));
}

void RxEngine::answer(const fabric::Packet& in, Token t) {
  const std::uint8_t* h = in.bytes.data();
  const auto src = static_cast<std::uint32_t>(get(h, pkt::src_node));
  auto& st = elan_.mutable_stats();
  ++st.acks_sent;
  if (t == Token::TestFail) ++st.tokens_testfail;
  if (t == Token::Discard) ++st.tokens_discard;
  if (t == Token::Error) ++st.tokens_error;
  fabric::Packet* a = elan_.fabric().pool().get(pkt::kAckSize);
  std::uint8_t* b = a->bytes.data();
  std::memset(b, 0, pkt::kAckSize);
  put(b, pkt::ack_route, src);
  put(b, pkt::ack_token, static_cast<std::uint8_t>(t));
  put(b, pkt::ack_vc, in.meta.vl);
  put(b, pkt::ack_seq, get(h, pkt::seq));
  put(b, pkt::ack_src_node, elan_.node_id());
  const std::vector<std::uint16_t>& exp = bcast_ ? bexpected_ : expected_;
  put(b, pkt::ack_expect, src < exp.size() ? exp[src] : 0);
  put(b, pkt::ack_count, 1);
  const std::uint32_t crc = pkt::crc32(b, pkt::kAckSize - pkt::kCrcSize);
  std::memcpy(b + pkt::kAckSize - pkt::kCrcSize, &crc, 4);
  a->meta.kind = fabric::kPacketElanAck;
  a->meta.slid = static_cast<std::uint16_t>(elan_.node_id());
  a->meta.dlid = static_cast<std::uint16_t>(in.meta.slid);
  a->meta.dlid_hi = 0;
  a->meta.src_node = elan_.device_id();
  a->meta.created = Elan3::now();
  if (elan_.tracing())
    elan_.trace("token_sent", {{"node", src},
                               {"seq", static_cast<unsigned>(get(h, pkt::seq))},
                               {"token", pkt::token_name(static_cast<std::uint32_t>(t))}});
  const Tick start = Elan3::now() + elan_.cycles(elan_.params().ack_cycles);
  if (in.meta.hops == 0) {
    // A packet to this node turned round inside the Elan; so does its token,
    // after the time its bytes take through the link interface.
    reply(a, start + elan_.cycles((pkt::kAckSize + 7) / 8));
    return;
  }
  // Lost on the way (a link down, an injected drop): counted by the fabric;
  // the sender's ack timer resends.
  fabric::Port::carry_back(elan_.net_port(), in, a, start);
}

void RxEngine::process(fabric::Packet* p) {
  const std::uint8_t* h = p->bytes.data();
  const std::size_t size = p->bytes.size();
  const bool check = elan_.params().verify_crc_always || p->meta.bit_errors > 0;
  const bool crc_ok = size >= pkt::kHeaderSize + pkt::kCrcSize && (!check || crc_matches(h, size)) &&
                      get(h, pkt::length) == size - pkt::kHeaderSize - pkt::kCrcSize;
  if (!crc_ok) {
    // Nothing in the packet can be trusted, not even who sent it: no token.
    ++elan_.mutable_stats().rx_bad_crc;
    elan_.trace("rx_bad_crc", {{"bytes", static_cast<unsigned>(size)}, {"bit_errors", p->meta.bit_errors}});
    Pending pk = queue_.front();
    queue_.pop_front();
    if (pk.in) pk.in->release(*pk.p, Elan3::now());
    release(pk.p);
    start_next();
    return;
  }
  const auto src = static_cast<std::uint32_t>(get(h, pkt::src_node));
  const auto seq = static_cast<std::uint16_t>(get(h, pkt::seq));
  const auto flags = static_cast<std::uint8_t>(get(h, pkt::flags));
  const auto trans = static_cast<std::uint32_t>(get(h, pkt::trans));
  const auto len = static_cast<std::uint32_t>(get(h, pkt::length));
  const auto first = static_cast<std::uint32_t>(get(h, pkt::route_first));
  const auto last = static_cast<std::uint32_t>(get(h, pkt::route_last));
  bcast_ = last != 0;
  seq_ = seq;
  if (bcast_ ? elan_.node_id() < first || elan_.node_id() > last : first != elan_.node_id()) {
    ++elan_.mutable_stats().rx_misrouted;
    Sim::get().error(elan_.obj(), fmt::format("packet for node {} from node {} arrived at node {}: discarded",
                                              get(h, pkt::route_first), src, elan_.node_id()));
    done(Token::Discard);
    return;
  }
  if (src >= expected_.size()) {
    expected_.resize(src + 1, 0);
    bexpected_.resize(src + 1, 0);
  }
  if (!bcast_ && (flags & pkt::kFlagSync)) expected_[src] = seq;
  if (elan_.tracing())
    elan_.trace("rx", {{"node", src},
                       {"seq", static_cast<unsigned>(seq)},
                       {"trans", pkt::trans_name(trans)},
                       {"len", len},
                       {"expected", static_cast<unsigned>(expected_[src])}});
  if (!elan_.enabled()) {
    done(Token::Discard);
    return;
  }
  if (bcast_) {
    // A source's broadcasts go one at a time, to changing ranges: any
    // number from the expected one on is new, an earlier one a repeat.
    if (seq_before(seq, bexpected_[src])) {
      replay_ = true;
      // A test changes nothing: a repeat is tested again.
      if (static_cast<Trans>(trans) != Trans::TestWord) {
        done(Token::Ok);
        return;
      }
    }
  } else if (seq != expected_[src]) {
    if (seq_before(seq, expected_[src])) {
      replay_ = true;  // executed before; its token was lost
      done(Token::Ok);
    } else {
      done(Token::Discard);
    }
    return;
  }
  const std::uint8_t* payload = h + pkt::kHeaderSize;
  switch (static_cast<Trans>(trans)) {
    case Trans::WriteBlock:
      write_block(h, len);
      return;
    case Trans::QueuedWrite:
      queued_write(h, len);
      return;
    case Trans::ReadRequest:
      read_request(payload, len);
      return;
    case Trans::SetEvent:
      remote_event(static_cast<E3Addr>(get(h, pkt::addr)));
      return;
    case Trans::TestWord:
      test_word(h, payload, len);
      return;
  }
  Sim::get().error(elan_.obj(), fmt::format("packet from node {} has unknown transaction {}: error token", src, trans));
  done(Token::Error);
}

void RxEngine::test_word(const std::uint8_t* h, const std::uint8_t* payload, std::uint32_t len) {
  const auto condition = len == dma::kTestSize ? static_cast<std::uint32_t>(get(payload, dma::test_condition)) : 0;
  if (len != dma::kTestSize || condition >= dma::kConditions) {
    Sim::get().error(elan_.obj(), fmt::format("test from node {}: {} bytes, condition {}: error token",
                                              get(h, pkt::src_node), len, condition));
    done(Token::Error);
    return;
  }
  testing_ = true;
  test_value_ = get(payload, dma::test_value);
  test_condition_ = static_cast<dma::Condition>(condition);
  elan_.mmu().translate(static_cast<E3Addr>(get(h, pkt::addr)), sizeof test_word_, perm::kRemoteRead, t_,
                        {member_fn<&RxEngine::test_translated>(), this});
}

void RxEngine::test_translated() {
  if (t_.fault != Fault::None) {
    done(Token::Error);
    return;
  }
  pieces_.swap(t_.pieces);
  elan_.read_pieces(pieces_, test_word_.data(), {member_fn<&RxEngine::test_read>(), this});
}

void RxEngine::test_read(std::uint64_t arg) {
  if (arg & host::kDmaFailedBit) {
    done(Token::Error);
    return;
  }
  std::uint64_t word = 0;
  std::memcpy(&word, test_word_.data(), sizeof word);
  done(dma::test_holds(word, test_value_, test_condition_) ? Token::Ok : Token::TestFail);
}

// The destination event of a packet (0: none) must allow remote setting;
// checked before the packet is accepted so a bad event refuses it whole.
void RxEngine::check_event(E3Addr ev, AfterEvent then) {
  pending_event_ = ev;
  after_event_ = then;
  if (!ev) {
    event_checked(true);
    return;
  }
  elan_.mmu().translate(ev, event::kSize, perm::kRemoteEvent, te_, {member_fn<&RxEngine::event_translated>(), this});
}

void RxEngine::event_translated() { event_checked(te_.fault == Fault::None); }

void RxEngine::event_checked(bool ok) {
  if (!ok) {
    done(Token::Error);
    return;
  }
  switch (after_event_) {
    case AfterEvent::WriteBlock:
      write_payload();
      return;
    case AfterEvent::QueuedWrite:
      queue_put();
      return;
    case AfterEvent::SetEvent:
      if (!pending_event_) {
        done(Token::Error);
        return;
      }
      elan_.events().set(pending_event_, perm::kRemoteEvent);
      done(Token::Ok);
      return;
  }
}

// The payload of the packet being executed to its host pieces (pieces_),
// written from the packet itself.
void RxEngine::post_payload() {
  fabric::Packet* p = queue_.front().p;
  const std::uint8_t* payload = p->bytes.data() + pkt::kHeaderSize;
  std::uint32_t off = 0;
  for (const HostPiece& piece : pieces_) {
    ++p->device_refs;
    elan_.write_from(piece.addr, payload + off, piece.len,
                     {member_fn<&RxEngine::payload_written>(), this, reinterpret_cast<std::uint64_t>(p)});
    off += piece.len;
  }
}

void RxEngine::write_payload() {
  post_payload();
  if (pending_event_) elan_.events().set(pending_event_, perm::kRemoteEvent);
  done(Token::Ok);
}

void RxEngine::payload_written(std::uint64_t arg) {
  release(reinterpret_cast<fabric::Packet*>(arg & ~host::kDmaFailedBit));
}

void RxEngine::write_block(const std::uint8_t* h, std::uint32_t len) {
  const auto addr = static_cast<E3Addr>(get(h, pkt::addr));
  const auto ev = static_cast<E3Addr>(get(h, pkt::event));
  // Every page (and the event's) in the TLB: the lookups' time, then the
  // writes. Same timing as the walks, without their events.
  t_.fault = te_.fault = Fault::None;
  Tick cost = 0, cost_ev = 0;
  Mmu& mmu = elan_.mmu();
  if (mmu.translate_cached(addr, len, perm::kRemoteWrite, t_, cost) && t_.fault == Fault::None &&
      (!ev || (mmu.translate_cached(ev, event::kSize, perm::kRemoteEvent, te_, cost_ev) && te_.fault == Fault::None))) {
    pieces_.swap(t_.pieces);
    pending_event_ = ev;
    Sim::get().calendar().at_member<&RxEngine::write_payload>(Elan3::now() + cost + cost_ev, this);
    return;
  }
  if (t_.fault != Fault::None || te_.fault != Fault::None) {
    Sim::get().calendar().at_member<&RxEngine::refuse>(add_saturating(Elan3::now(), cost + cost_ev), this);
    return;
  }
  pending_event_ = ev;
  if (cost) {
    // The data hit and the event missed: go on with the event's walk.
    pieces_.swap(t_.pieces);
    Sim::get().calendar().at_member<&RxEngine::block_event>(add_saturating(Elan3::now(), cost), this);
    return;
  }
  mmu.translate(addr, len, perm::kRemoteWrite, t_, {member_fn<&RxEngine::block_translated>(), this});
}

void RxEngine::block_translated() {
  if (t_.fault != Fault::None) {
    done(Token::Error);
    return;
  }
  pieces_.swap(t_.pieces);
  check_event(pending_event_, AfterEvent::WriteBlock);
}

void RxEngine::block_event() { check_event(pending_event_, AfterEvent::WriteBlock); }

// A queued write: the input queue's descriptor is read and checked, the
// message goes into the slot at its back pointer, then the pointer moves on.
void RxEngine::queued_write(const std::uint8_t* h, std::uint32_t len) {
  qw_ = QueueWrite{};
  qw_.addr = static_cast<E3Addr>(get(h, pkt::addr));
  qw_.ev = static_cast<E3Addr>(get(h, pkt::event));
  qw_.len = len;
  elan_.mmu().translate(qw_.addr, queue::kSize, perm::kRemoteWrite, t_,
                        {member_fn<&RxEngine::queue_translated>(), this});
}

void RxEngine::queue_translated() {
  if (t_.fault != Fault::None || t_.pieces.size() != 1) {
    done(Token::Error);
    return;
  }
  qw_.host = t_.pieces.front().addr;
  elan_.bus_read(qw_.host, qdesc_.data(), queue::kSize, {member_fn<&RxEngine::queue_read>(), this});
}

void RxEngine::queue_read(std::uint64_t arg) {
  if (arg & host::kDmaFailedBit) {
    done(Token::Error);
    return;
  }
  const std::uint8_t* q = qdesc_.data();
  qw_.state = static_cast<std::uint32_t>(get(q, queue::q_state));
  qw_.bptr = static_cast<E3Addr>(get(q, queue::q_bptr));
  qw_.fptr = static_cast<E3Addr>(get(q, queue::q_fptr));
  qw_.qsize = static_cast<std::uint32_t>(get(q, queue::q_size));
  qw_.base = static_cast<E3Addr>(get(q, queue::q_base));
  qw_.top = static_cast<E3Addr>(get(q, queue::q_top));
  qw_.qev = static_cast<E3Addr>(get(q, queue::q_event));
  Sim::get().calendar().at_member<&RxEngine::queue_decide>(
      add_saturating(Elan3::now(), elan_.cycles(elan_.params().queue_cycles)), this);
}

void RxEngine::queue_decide() {
  const QueueWrite& w = qw_;
  if (w.qsize == 0 || w.len > w.qsize || w.bptr < w.base || w.bptr > w.top || (w.bptr - w.base) % w.qsize != 0) {
    Sim::get().error(elan_.obj(), fmt::format("input queue at {:#x}: message of {} bytes does not fit "
                                              "(q_size {}, q_bptr {:#x}, q_base {:#x}, q_top {:#x})",
                                              w.addr, w.len, w.qsize, w.bptr, w.base, w.top));
    done(Token::Error);
    return;
  }
  qw_.next = queue::next_slot(w.bptr, w.base, w.top, w.qsize);
  if ((w.state & queue::kStateLocked) || w.next == w.fptr) {
    if (!(w.state & queue::kStateFull)) {
      const std::uint32_t v = w.state | queue::kStateFull;
      elan_.bus_write(w.host + queue::q_state.offset, &v, 4);
    }
    elan_.trace("queue_full", {{"queue", static_cast<unsigned>(w.addr)}, {"locked", w.state & queue::kStateLocked}});
    done(Token::TestFail);
    return;
  }
  elan_.mmu().translate(w.bptr, w.len, perm::kRemoteWrite, t_, {member_fn<&RxEngine::slot_translated>(), this});
}

void RxEngine::slot_translated() {
  if (t_.fault != Fault::None) {
    done(Token::Error);
    return;
  }
  pieces_.swap(t_.pieces);
  check_event(qw_.ev, AfterEvent::QueuedWrite);
}

void RxEngine::queue_put() {
  const QueueWrite& w = qw_;
  post_payload();
  // The new back pointer (and a cleared full bit) after the message:
  // software that sees it sees the message.
  std::uint8_t b[8];
  const std::uint32_t state = w.state & ~queue::kStateFull;
  std::memcpy(b, &state, 4);
  std::memcpy(b + 4, &w.next, 4);
  elan_.bus_write(w.host + queue::q_state.offset, b, 8);
  ++elan_.mutable_stats().queue_messages;
  elan_.trace("queue_put",
              {{"queue", static_cast<unsigned>(w.addr)}, {"slot", static_cast<unsigned>(w.bptr)}, {"len", w.len}});
  if (w.qev) elan_.events().set(w.qev, perm::kLocalWrite);
  if (w.ev) elan_.events().set(w.ev, perm::kRemoteEvent);
  done(Token::Ok);
}

void RxEngine::read_request(const std::uint8_t* payload, std::uint32_t len) {
  if (len != dma::kSize) {
    done(Token::Error);
    return;
  }
  const auto source = static_cast<E3Addr>(get(payload, dma::dma_source));
  const auto size = static_cast<std::uint32_t>(get(payload, dma::dma_size));
  // The whole source must be readable from the network before we accept.
  elan_.mmu().translate(source, size, perm::kRemoteRead, t_, {member_fn<&RxEngine::request_translated>(), this});
}

void RxEngine::request_translated() {
  if (t_.fault != Fault::None) {
    done(Token::Error);
    return;
  }
  elan_.dma().enqueue_remote(queue_.front().p->bytes.data() + pkt::kHeaderSize);
  done(Token::Ok);
}

void RxEngine::remote_event(E3Addr ev) { check_event(ev, AfterEvent::SetEvent); }

}  // namespace nicsim::elan3
