#include "hca_model/recv_engine.h"

#include <fmt/format.h>

#include <algorithm>

#include "core/sim.h"
#include "fabric/fabric.h"
#include "hca_model/send_engine.h"
#include "trace/trace.h"

namespace nicsim::hca {

RecvEngine::RecvEngine(Hca& hca) : hca_(hca) {}

RecvEngine::~RecvEngine() {
  for (std::size_t i = 0; i < queue_.size(); ++i) hca_.fabric().pool().put(queue_[i].pkt);
}

void RecvEngine::packet(fabric::Port& in, fabric::Packet* p) {
  ++p->device_refs;  // the pipeline's own reference
  Pending& pk = queue_.push_back();
  // Every field but the header fields: decode() assigns all of those before
  // anything reads them (a packet that fails to decode is dropped unread).
  pk.port = &in;
  pk.pkt = p;
  pk.decoded = false;
  pk.payload_at = pk.payload_len = 0;
  pk.mcast_next = 0;
  if (!stalled_) schedule(std::max(now(), free_at_) + hca_.clock_cycles(hca_.params().rx_packet_cycles));
}

void RecvEngine::schedule(Tick at) {
  if (at >= scheduled_) return;
  scheduled_ = at;
  Sim::get().calendar().at_member<&RecvEngine::run_due>(at, this);
}

void RecvEngine::run_due() {
  if (now() >= scheduled_) scheduled_ = kTickMax;
  run();
}

void RecvEngine::free_packet(fabric::Packet* p) {
  if (--p->device_refs == 0) hca_.fabric().pool().put(p);
}

void RecvEngine::run() {
  if (stalled_ || queue_.empty()) return;
  const Tick n = now();
  if (free_at_ > n) {
    schedule(free_at_);
    return;
  }
  Pending& pk = queue_.front();
  if (process(pk) == Step::Stall) {
    stalled_ = true;  // a DMA completion resumes the pipeline
    return;
  }
  // The packet leaves the input buffer once processed (a looped-back
  // packet held none).
  if (pk.pkt->holder) {
    pk.pkt->holder->release(*pk.pkt, n);
    pk.pkt->holder = nullptr;
  }
  free_packet(pk.pkt);
  queue_.pop_front();
  free_at_ = n + hca_.clock_cycles(hca_.params().rx_packet_cycles);
  if (!queue_.empty()) schedule(free_at_);
}

RecvEngine::Step RecvEngine::process(Pending& pk) {
  if (!pk.decoded && !decode(pk)) return Step::Done;
  HcaStats& st = hca_.mutable_stats();
  const std::uint32_t port = pk.port->number();
  if (pk.h.bth.dest_qp == 0 || pk.pkt->meta.vl == fabric::kVl15) {
    // Subnet management: the firmware SMA, or the QP0 of software.
    QpCtx* q0 = hca_.smi_receive(*pk.port, *pk.pkt);
    return q0 ? deliver(pk, *q0) : Step::Done;
  }
  if (!hca_.port_active(port)) {
    ++st.rx_dropped;
    return Step::Done;
  }
  const std::uint16_t dlid = pk.h.lrh.dlid;
  if (dlid >= fabric::kMulticastLidBase && dlid != fabric::kPermissiveLid) return multicast(pk, port);
  if (dlid != hca_.port_lid(port) && dlid != fabric::kPermissiveLid) {
    ++st.rx_dropped;
    return Step::Done;
  }
  std::uint32_t qpn = pk.h.bth.dest_qp;
  if (qpn <= 1) qpn = hca_.special_qp_base()[port - 1] + qpn;
  QpCtx* q = hca_.qp(qpn);
  if (!q || q->state() == QpState::Reset || q->state() == QpState::Init) {
    ++st.rx_bad_qp;
    ++st.rx_dropped;
    return Step::Done;
  }
  return deliver(pk, *q);
}

// Parses and checks the packet; false when it is dropped. Only the links'
// error injection changes bytes between the sender's seal and here, and it
// marks what it touches: untouched packets carry the CRCs they were sealed
// with, so recomputing them would change nothing. verify_crc=always checks
// every packet anyway.
bool RecvEngine::decode(Pending& pk) {
  HcaStats& st = hca_.mutable_stats();
  Sim& sim = Sim::get();
  const bool check = hca_.params().verify_crc_always || pk.pkt->meta.bit_errors != 0;
  const std::uint8_t* bytes = pk.pkt->bytes.data();
  const ib::ParsedPacket parsed = ib::parse_packet(std::span(bytes, pk.pkt->bytes.size()), check);
  pk.decoded = true;
  if (!parsed.ok()) {
    const ib::Verdict v = parsed.verdict;
    if (v == ib::Verdict::BadIcrc || v == ib::Verdict::BadVcrc)
      ++st.rx_bad_crc;
    else
      ++st.rx_dropped;
    if (sim.tracer().on(hca_.device_id(), Component::nic))
      sim.tracer().record(now(), hca_.device_id(), Component::nic, "rx_drop",
                          {{"pkt", pk.pkt->meta.id}, {"why", drop_reason(v)}});
    return false;
  }
  pk.h = parsed.hdr;
  pk.op = parsed.op;
  pk.payload_at = static_cast<std::size_t>(parsed.payload.data() - bytes);
  pk.payload_len = parsed.payload.size();
  ++st.rx_packets;
  if (sim.tracer().on(hca_.device_id(), Component::nic))
    sim.tracer().record(
        now(), hca_.device_id(), Component::nic, "rx",
        {{"qp", pk.h.bth.dest_qp}, {"op", pk.op->name}, {"psn", pk.h.bth.psn}, {"len", pk.payload_len}});
  return true;
}

// A UD send to a multicast group goes to every member QP of this port's
// group that may receive.
RecvEngine::Step RecvEngine::multicast(Pending& pk, std::uint32_t port) {
  auto it = hca_.mcgs().find(pk.h.lrh.dlid);
  if (it == hca_.mcgs().end() || pk.op->transport != ib::Transport::UD || pk.h.bth.dest_qp != kMaxQpn) {
    ++hca_.mutable_stats().rx_dropped;
    return Step::Done;
  }
  const auto members = it->second;  // delivery may stall; the list is re-read on resume
  for (; pk.mcast_next < members.size(); ++pk.mcast_next) {
    QpCtx* q = hca_.qp(members[pk.mcast_next]);
    if (!q || (q->state() != QpState::Rtr && q->state() != QpState::Rts && q->state() != QpState::Sqd &&
               q->state() != QpState::Sqe))
      continue;
    // A node does not receive its own multicast on the QP that sent it.
    if (pk.h.lrh.slid == hca_.port_lid(port) && pk.h.ext.deth.src_qp == q->qpn) continue;
    if (respond(pk, *q) == Step::Stall) return Step::Stall;
  }
  return Step::Done;
}

RecvEngine::Step RecvEngine::deliver(Pending& pk, QpCtx& q) {
  const ib::OpcodeInfo& op = *pk.op;
  if (transport_of(q.type) != op.transport) {
    ++hca_.mutable_stats().rx_dropped;
    return Step::Done;
  }
  if (op.transport == ib::Transport::RC && !op.request) {
    hca_.send_engine().on_response(q, pk.h, op, pk.pkt->bytes.data() + pk.payload_at, pk.payload_len, pk.pkt);
    return Step::Done;
  }
  if (q.state() == QpState::Error) return Step::Done;
  if (!established_[q.qpn] && q.state() == QpState::Rtr) {
    established_[q.qpn] = true;
    hca_.post_event(Event::CommEstablished, q.qpn);
  }
  return respond(pk, q);
}

// ---- receive WQEs ------------------------------------------------------------

// A receive posted to a QP in Error is flushed as soon as it is read.
void RecvEngine::rq_doorbell(QpCtx& q) {
  if (q.state() != QpState::Error) {
    prefetch(q);
    return;
  }
  Prefetch& pf = prefetch_[q.qpn];
  if (pf.flushing) return;  // the flush under way reaches it
  pf.flushing = true;
  flush_next(q.qpn);
}

void RecvEngine::prefetch(QpCtx& q) {
  Prefetch& pf = prefetch_[q.qpn];
  if (pf.state != Prefetch::State::Empty || q.rq.entries == 0 || q.rq.consumer == q.rq.producer) return;
  if (q.state() == QpState::Reset) return;
  pf.state = Prefetch::State::Fetching;
  pf.epoch = q.epoch;
  pf.buf.assign(q.rq.stride(), 0);
  const std::uint64_t arg = (static_cast<std::uint64_t>(q.epoch) << 32) | q.qpn;
  hca_.bus().dma_read("hca.rwqe", q.rq.addr(q.rq.consumer), pf.buf.data(), pf.buf.size(),
                      host::DmaDone{member_fn<&RecvEngine::rwqe_read>(), this, arg});
}

// arg: the QP's epoch when the read was asked for, and its QPN.
void RecvEngine::rwqe_read(std::uint64_t arg) {
  rq_fetched(static_cast<std::uint32_t>(arg & kMaxQpn), static_cast<std::uint32_t>((arg & ~host::kDmaFailedBit) >> 32),
             !(arg & host::kDmaFailedBit));
}

void RecvEngine::rq_fetched(std::uint32_t qpn, std::uint32_t epoch, bool ok) {
  QpCtx* q = hca_.qp(qpn);
  auto it = prefetch_.find(qpn);
  if (!q || it == prefetch_.end() || it->second.epoch != epoch || q->epoch != epoch) return;
  Prefetch& pf = it->second;
  const std::uint8_t* b = pf.buf.data();
  pf.wqe = RecvWqe{};
  pf.wqe.wr_id = get(b, rwqe::wr_id);
  const auto n = static_cast<std::uint32_t>(get(b, rwqe::num_ds));
  pf.ok = ok && n <= (q->rq.stride() - rwqe::kHeaderBytes) / ds::kSize;
  for (std::uint32_t i = 0; pf.ok && i < n; ++i) {
    const std::uint8_t* d = b + rwqe::kHeaderBytes + i * ds::kSize;
    pf.wqe.ds.push_back({get(d, ds::addr), (get(d, ds::lkey) << 32) | get(d, ds::length)});
  }
  ++q->rq.consumer;
  pf.state = Prefetch::State::Ready;
  if (pf.flushing) {
    flush_next(qpn);
    return;
  }
  if (stalled_) {
    stalled_ = false;
    schedule(now());
  }
}

// Opens the next receive WQE for a message: translates its buffers.
RecvEngine::Step RecvEngine::start_receive(Pending& pk, QpCtx& q, bool& ok) {
  Prefetch& pf = prefetch_[q.qpn];
  if (pf.state == Prefetch::State::Empty) prefetch(q);
  if (pf.state == Prefetch::State::Fetching) return Step::Stall;
  if (pf.state == Prefetch::State::Empty) {
    ok = false;  // no receive WQE posted
    return Step::Done;
  }
  pf.state = Prefetch::State::Empty;
  q.recv_wr_id = pf.wqe.wr_id;
  q.recv_ranges.clear();
  q.recv_offset = 0;
  q.recv_capacity = 0;
  q.recv_length_error = false;
  q.recv_active = true;
  bool good = pf.ok;
  for (const auto& d : pf.wqe.ds) {
    const auto len = static_cast<std::uint32_t>(d[1]);
    if (good && hca_.tpt().translate(static_cast<std::uint32_t>(d[1] >> 32), q.pd, d[0], len, mpt::kLocalWrite, q.qpn,
                                     q.recv_ranges) != TptResult::Ok)
      good = false;
    q.recv_capacity += len;
  }
  prefetch(q);  // the next one, in the background
  ok = true;
  if (!good) {
    q.recv_active = false;
    recv_cqe(q, q.recv_wr_id, CqeStatus::LocalProtectionError, 0, &pk, static_cast<std::uint8_t>(cqe::RecvOp::Send),
             false);
    ok = false;
    q.recv_length_error = true;  // tells the caller the WQE was consumed by an error
  }
  return Step::Done;
}

void RecvEngine::write_bytes(Pending& pk, std::uint64_t addr, const std::uint8_t* data, std::size_t len) {
  ++pk.pkt->device_refs;
  hca_.bus().dma_write(
      "hca.rx", addr, data, len,
      host::DmaDone{member_fn<&RecvEngine::payload_written>(), this, reinterpret_cast<std::uint64_t>(pk.pkt)});
}

void RecvEngine::payload_written(std::uint64_t packet) {
  free_packet(reinterpret_cast<fabric::Packet*>(packet & ~host::kDmaFailedBit));
}

// Writes data at `offset` of the buffer described by `ranges`. False if it
// does not fit.
bool RecvEngine::scatter(Pending& pk, QpCtx&, const std::vector<HostRange>& ranges, std::uint64_t offset,
                         const std::uint8_t* data, std::size_t len) {
  for (const HostRange& r : ranges) {
    if (len == 0) return true;
    if (offset >= r.len) {
      offset -= r.len;
      continue;
    }
    const std::size_t piece = std::min<std::size_t>(r.len - offset, len);
    write_bytes(pk, r.addr + offset, data, piece);
    data += piece;
    len -= piece;
    offset = 0;
  }
  return len == 0;
}

void RecvEngine::recv_cqe(QpCtx& q, std::uint64_t wr_id, CqeStatus status, std::uint32_t byte_len, const Pending* pk,
                          std::uint8_t opcode, bool solicited) {
  Hca::Staging* s = hca_.scratch();
  std::uint8_t* c = s->data();
  put(c, cqe::wr_id, wr_id);
  put(c, cqe::qpn, q.qpn);
  put(c, cqe::byte_len, byte_len);
  put(c, cqe::opcode, opcode);
  put(c, cqe::status, static_cast<std::uint8_t>(status));
  std::uint8_t flags = cqe::kIsRecv;
  if (pk) {
    const ib::PacketHeaders& h = pk->h;
    put(c, cqe::src_qp, h.ext.deth.src_qp);
    put(c, cqe::slid, h.lrh.slid);
    put(c, cqe::sl, h.lrh.sl);
    put(c, cqe::path_bits, h.lrh.dlid & 0x7f);
    if (pk->op->immediate) {
      put(c, cqe::imm, h.ext.imm_dt.imm);
      flags |= cqe::kImm;
    }
    if (h.grh && q.type == QpType::Ud) flags |= cqe::kGrh;
  }
  put(c, cqe::flags, flags);
  if (!hca_.write_cqe(q.recv_cqn, s, solicited)) hca_.release_scratch(s);
}

// ---- flush and reset ---------------------------------------------------------

void RecvEngine::flush(QpCtx& q) {
  if (q.recv_active) {
    recv_cqe(q, q.recv_wr_id, CqeStatus::WrFlushError, 0, nullptr, static_cast<std::uint8_t>(cqe::RecvOp::Send), false);
    q.recv_active = false;
  }
  q.write_left = 0;
  Prefetch& pf = prefetch_[q.qpn];
  pf.flushing = true;
  if (pf.state == Prefetch::State::Fetching) return;  // rq_fetched continues the flush
  flush_next(q.qpn);
}

void RecvEngine::flush_next(std::uint32_t qpn) {
  QpCtx* q = hca_.qp(qpn);
  if (!q) return;
  Prefetch& pf = prefetch_[qpn];
  if (pf.state == Prefetch::State::Ready) {
    recv_cqe(*q, pf.wqe.wr_id, CqeStatus::WrFlushError, 0, nullptr, static_cast<std::uint8_t>(cqe::RecvOp::Send),
             false);
    pf.state = Prefetch::State::Empty;
  }
  if (q->rq.consumer != q->rq.producer && q->state() == QpState::Error) {
    prefetch(*q);  // completes through rq_fetched -> flush_next
    return;
  }
  pf.flushing = false;
}

void RecvEngine::reset(QpCtx& q) {
  prefetch_.erase(q.qpn);
  established_.erase(q.qpn);
  q.recv_active = false;
  q.write_left = 0;
  q.recv_ranges.clear();
  q.expected_psn = 0;
  q.msn = 0;
  q.nak_sent = false;
  q.unacked_packets = 0;
  q.reads_in_progress = 0;
}

}  // namespace nicsim::hca
