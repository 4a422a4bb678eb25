#include "hca_model/recv_engine.h"

#include <fmt/format.h>

#include <algorithm>

#include "core/sim.h"
#include "fabric/fabric.h"
#include "hca_model/send_engine.h"
#include "trace/trace.h"

namespace nicsim::hca {

namespace {
constexpr std::uint32_t kGrhBytes = 40;
constexpr std::uint32_t kLrhBytes = 8;
bool is_response(std::uint8_t code) { return code >= opc::kReadRespFirst && code <= opc::kAtomicAck; }
}  // namespace

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
  Sim::get().calendar().at(at, &RecvEngine::run_thunk, this);
}

void RecvEngine::run_thunk(void* self, std::uint64_t) {
  auto* e = static_cast<RecvEngine*>(self);
  if (now() >= e->scheduled_) e->scheduled_ = kTickMax;
  e->run();
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
  // The packet leaves the input buffer once processed.
  pk.port->release(*pk.pkt, n);
  free_packet(pk.pkt);
  queue_.pop_front();
  free_at_ = n + hca_.clock_cycles(hca_.params().rx_packet_cycles);
  if (!queue_.empty()) schedule(free_at_);
}

RecvEngine::Step RecvEngine::process(Pending& pk) {
  HcaStats& st = hca_.mutable_stats();
  Sim& sim = Sim::get();
  if (!pk.decoded) {
    // Only the links' error injection changes bytes between the sender's
    // seal and here, and it marks what it touches: untouched packets carry
    // the CRCs they were sealed with, so recomputing them would change
    // nothing. verify_crc=always checks every packet anyway.
    const bool check = hca_.params().verify_crc_always || pk.pkt->meta.bit_errors != 0;
    const RxVerdict v =
        decode(pk.pkt->bytes.data(), pk.pkt->bytes.size(), pk.f, pk.payload_at, pk.payload_len, check);
    pk.decoded = true;
    if (v != RxVerdict::Ok) {
      if (v == RxVerdict::BadIcrc || v == RxVerdict::BadVcrc) ++st.rx_bad_crc; else ++st.rx_dropped;
      if (sim.tracer().on(hca_.device_id(), Component::nic))
        sim.tracer().record(now(), hca_.device_id(), Component::nic, "rx_drop",
                            {{"pkt", pk.pkt->meta.id}, {"why", verdict_name(v)}});
      return Step::Done;
    }
    ++st.rx_packets;
    if (sim.tracer().on(hca_.device_id(), Component::nic))
      sim.tracer().record(now(), hca_.device_id(), Component::nic, "rx",
                          {{"qp", pk.f.dest_qp}, {"op", opcode_name(pk.f.opcode)}, {"psn", pk.f.psn},
                           {"len", pk.payload_len}});
  }
  const std::uint32_t port = pk.port->number();
  if (pk.f.dest_qp == 0 || pk.pkt->meta.vl == fabric::kVl15) {
    // Subnet management: the firmware SMA, or the QP0 of software.
    QpCtx* q0 = hca_.smi_receive(*pk.port, *pk.pkt);
    return q0 ? deliver(pk, *q0) : Step::Done;
  }
  if (!hca_.port_active(port)) {
    ++st.rx_dropped;
    return Step::Done;
  }
  if (pk.f.dlid >= fabric::kMulticastLidBase && pk.f.dlid != fabric::kPermissiveLid) {
    auto it = hca_.mcgs().find(pk.f.dlid);
    if (it == hca_.mcgs().end() || (pk.f.opcode & 0xe0) != opc::kUd || pk.f.dest_qp != kMaxQpn) {
      ++st.rx_dropped;
      return Step::Done;
    }
    const auto members = it->second;  // delivery may stall; the list is re-read on resume
    for (; pk.mcast_next < members.size(); ++pk.mcast_next) {
      QpCtx* q = hca_.qp(members[pk.mcast_next]);
      if (!q || (q->state() != QpState::Rtr && q->state() != QpState::Rts && q->state() != QpState::Sqd &&
                 q->state() != QpState::Sqe))
        continue;
      // A node does not receive its own multicast on the QP that sent it.
      if (pk.f.slid == hca_.port_lid(port) && pk.f.deth_src_qp == q->qpn) continue;
      if (ud_request(pk, *q) == Step::Stall) return Step::Stall;
    }
    return Step::Done;
  }
  if (pk.f.dlid != hca_.port_lid(port) && pk.f.dlid != fabric::kPermissiveLid) {
    ++st.rx_dropped;
    return Step::Done;
  }
  std::uint32_t qpn = pk.f.dest_qp;
  if (qpn <= 1) qpn = hca_.special_qp_base()[port - 1] + qpn;
  QpCtx* q = hca_.qp(qpn);
  if (!q || q->state() == QpState::Reset || q->state() == QpState::Init) {
    ++st.rx_bad_qp;
    ++st.rx_dropped;
    return Step::Done;
  }
  return deliver(pk, *q);
}

RecvEngine::Step RecvEngine::deliver(Pending& pk, QpCtx& q) {
  const std::uint8_t transport = pk.f.opcode & 0xe0;
  const std::uint8_t code = pk.f.opcode & 0x1f;
  const std::uint8_t want = q.type == QpType::Rc ? opc::kRc : q.type == QpType::Uc ? opc::kUc : opc::kUd;
  const bool special = q.type == QpType::Qp0 || q.type == QpType::Qp1;
  if ((special ? opc::kUd : want) != transport) {
    ++hca_.mutable_stats().rx_dropped;
    return Step::Done;
  }
  if (transport == opc::kRc && is_response(code)) {
    SendEngine& se = hca_.send_engine();
    if (code == opc::kAck) se.on_ack(q, pk.f);
    else if (code == opc::kAtomicAck) se.on_atomic_ack(q, pk.f);
    else {
      // Read-response data is AETH-acknowledged as well: the payload goes
      // to the requester's buffers by DMA straight from this packet.
      se.on_read_response(q, pk.f, pk.pkt->bytes.data() + pk.payload_at, pk.payload_len, pk.pkt);
    }
    return Step::Done;
  }
  if (q.state() == QpState::Error) return Step::Done;
  if (!established_[q.qpn] && q.state() == QpState::Rtr) {
    established_[q.qpn] = true;
    hca_.post_event(Event::CommEstablished, q.qpn);
  }
  if (q.type == QpType::Rc) return rc_request(pk, q);
  if (q.type == QpType::Uc) return uc_request(pk, q);
  return ud_request(pk, q);
}

// ---- receive WQEs ------------------------------------------------------------

void RecvEngine::rq_doorbell(QpCtx& q) { prefetch(q); }

void RecvEngine::prefetch(QpCtx& q) {
  Prefetch& pf = prefetch_[q.qpn];
  if (pf.state != Prefetch::State::Empty || q.rq.entries == 0 || q.rq.consumer == q.rq.producer) return;
  if (q.state() == QpState::Reset) return;
  pf.state = Prefetch::State::Fetching;
  pf.epoch = q.epoch;
  pf.buf.assign(q.rq.stride(), 0);
  const std::uint64_t arg = (static_cast<std::uint64_t>(q.epoch) << 32) | q.qpn;
  hca_.bus().dma_read("hca.rwqe", q.rq.addr(q.rq.consumer), pf.buf.data(), pf.buf.size(),
                      host::DmaDone{[](void* o, std::uint64_t a) {
                                      static_cast<RecvEngine*>(o)->rq_fetched(
                                          static_cast<std::uint32_t>(a & kMaxQpn),
                                          static_cast<std::uint32_t>((a & ~host::kDmaFailedBit) >> 32),
                                          !(a & host::kDmaFailedBit));
                                    },
                                    this, arg});
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
    if (good && hca_.tpt().translate(static_cast<std::uint32_t>(d[1] >> 32), q.pd, d[0], len, mpt::kLocalWrite,
                                     q.qpn, q.recv_ranges) != TptResult::Ok)
      good = false;
    q.recv_capacity += len;
  }
  prefetch(q);  // the next one, in the background
  ok = true;
  if (!good) {
    q.recv_active = false;
    recv_cqe(q, q.recv_wr_id, CqeStatus::LocalProtectionError, 0, &pk.f, static_cast<std::uint8_t>(cqe::RecvOp::Send),
             false);
    ok = false;
    q.recv_length_error = true;  // tells the caller the WQE was consumed by an error
  }
  return Step::Done;
}

void RecvEngine::write_bytes(Pending& pk, std::uint64_t addr, const std::uint8_t* data, std::size_t len) {
  ++pk.pkt->device_refs;
  hca_.bus().dma_write("hca.rx", addr, data, len,
                       host::DmaDone{[](void* o, std::uint64_t a) {
                                       static_cast<RecvEngine*>(o)->free_packet(
                                           reinterpret_cast<fabric::Packet*>(a & ~host::kDmaFailedBit));
                                     },
                                     this, reinterpret_cast<std::uint64_t>(pk.pkt)});
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

void RecvEngine::recv_cqe(QpCtx& q, std::uint64_t wr_id, CqeStatus status, std::uint32_t byte_len,
                          const PacketFields* f, std::uint8_t opcode, bool solicited) {
  std::uint8_t* c = hca_.scratch();
  std::memset(c, 0, cqe::kSize);
  put(c, cqe::wr_id, wr_id);
  put(c, cqe::qpn, q.qpn);
  put(c, cqe::byte_len, byte_len);
  put(c, cqe::opcode, opcode);
  put(c, cqe::status, static_cast<std::uint8_t>(status));
  std::uint8_t flags = cqe::kIsRecv;
  if (f) {
    put(c, cqe::src_qp, f->deth_src_qp);
    put(c, cqe::slid, f->slid);
    put(c, cqe::sl, f->sl);
    put(c, cqe::path_bits, f->dlid & 0x7f);
    if (f->has_imm) {
      put(c, cqe::imm, f->imm);
      flags |= cqe::kImm;
    }
    if (f->grh && q.type == QpType::Ud) flags |= cqe::kGrh;
  }
  put(c, cqe::flags, flags);
  if (!hca_.write_cqe(q.recv_cqn, c, solicited)) hca_.release_scratch(c);
}

// ---- transports --------------------------------------------------------------

void RecvEngine::nak(QpCtx& q, std::uint8_t syndrome, std::uint32_t psn) {
  if (q.type == QpType::Rc) hca_.send_engine().send_ack(q, syndrome, psn, q.msn);
}

void RecvEngine::responder_error(QpCtx& q, Event event, std::uint8_t syndrome, std::uint32_t psn) {
  if (q.type != QpType::Rc) {
    // UC has no NAKs: the message is silently dropped (IBA 9.9.2).
    q.recv_active = false;
    q.write_left = 0;
    ++hca_.mutable_stats().rx_dropped;
    return;
  }
  nak(q, syndrome, psn);
  hca_.post_event(event, q.qpn);
  hca_.qp_to_error(q, "responder_error");
}

RecvEngine::Step RecvEngine::rc_request(Pending& pk, QpCtx& q) {
  PacketFields& f = pk.f;
  const std::uint8_t code = f.opcode & 0x1f;
  const std::int32_t d = psn_diff(f.psn, q.expected_psn);
  SendEngine& se = hca_.send_engine();
  if (d < 0) {
    // Duplicate: the requester retried. Reads are executed again; anything
    // else is acknowledged again.
    if (code == opc::kReadRequest) {
      std::vector<HostRange> ranges;
      if (hca_.tpt().translate(f.reth_rkey, q.pd, f.reth_va, f.reth_len, mpt::kRemoteRead, q.qpn, ranges) ==
          TptResult::Ok)
        se.send_read_response(q, f.psn, std::move(ranges), f.reth_len);
      return Step::Done;
    }
    se.send_ack(q, aeth::kAck | aeth::kNoCredits, psn_add(q.expected_psn, 0xffffff), q.msn);
    return Step::Done;
  }
  if (d > 0) {
    if (!q.nak_sent) {
      q.nak_sent = true;
      nak(q, aeth::kNakPsnSeq, q.expected_psn);
    }
    return Step::Done;
  }
  const bool send_first = code == opc::kSendFirst || code == opc::kSendOnly || code == opc::kSendOnlyImm;
  const bool send_cont = code == opc::kSendMiddle || code == opc::kSendLast || code == opc::kSendLastImm;
  const bool write_first = code == opc::kWriteFirst || code == opc::kWriteOnly || code == opc::kWriteOnlyImm;
  const bool write_cont = code == opc::kWriteMiddle || code == opc::kWriteLast || code == opc::kWriteLastImm;
  // Opcode sequence (IBA 9.8.3.1): middles and lasts continue a message.
  if ((send_cont && !q.recv_active) || (write_cont && q.write_left == 0 && !q.recv_active && code == opc::kWriteMiddle) ||
      ((send_first || write_first) && (q.recv_active || q.write_left))) {
    responder_error(q, Event::WqInvalidRequest, aeth::kNakInvalidReq, f.psn);
    return Step::Done;
  }
  const std::uint8_t* payload = pk.pkt->bytes.data() + pk.payload_at;
  const bool imm_last = code == opc::kSendLastImm || code == opc::kSendOnlyImm || code == opc::kWriteLastImm ||
                        code == opc::kWriteOnlyImm;
  if (send_first) {
    bool ok = false;
    if (start_receive(pk, q, ok) == Step::Stall) return Step::Stall;
    if (!ok && !q.recv_length_error) {
      // No receive WQE: Receiver Not Ready; the requester retries later
      // (UC just loses the message).
      nak(q, static_cast<std::uint8_t>(aeth::kRnrNak | (q.min_rnr_timer & 0x1f)), f.psn);
      if (q.type != QpType::Rc) {
        q.expected_psn = psn_add(f.psn, 1);
        ++hca_.mutable_stats().rx_dropped;
      }
      return Step::Done;
    }
    if (!ok) {
      responder_error(q, Event::WqAccessError, aeth::kNakRemoteOp, f.psn);
      return Step::Done;
    }
  }
  if (send_first || send_cont) {
    if (q.recv_offset + pk.payload_len > q.recv_capacity) {
      q.recv_length_error = true;
    } else {
      scatter(pk, q, q.recv_ranges, q.recv_offset, payload, pk.payload_len);
    }
    q.recv_offset += pk.payload_len;
    hca_.mutable_stats().rx_bytes += pk.payload_len;
    const bool last = code == opc::kSendOnly || code == opc::kSendOnlyImm || code == opc::kSendLast ||
                      code == opc::kSendLastImm;
    if (q.recv_length_error) {
      recv_cqe(q, q.recv_wr_id, CqeStatus::LocalLengthError, static_cast<std::uint32_t>(q.recv_offset), &f,
               static_cast<std::uint8_t>(cqe::RecvOp::Send), false);
      q.recv_active = false;
      responder_error(q, Event::WqInvalidRequest, aeth::kNakInvalidReq, f.psn);
      return Step::Done;
    }
    if (last) {
      recv_cqe(q, q.recv_wr_id, CqeStatus::Success, static_cast<std::uint32_t>(q.recv_offset), &f,
               static_cast<std::uint8_t>(cqe::RecvOp::Send), f.solicited);
      q.recv_active = false;
      q.msn = (q.msn + 1) & 0xffffff;
    }
  } else if (write_first || write_cont) {
    if (write_first) {
      if (!(q.access & mpt::kRemoteWrite)) {
        responder_error(q, Event::WqAccessError, aeth::kNakRemoteAccess, f.psn);
        return Step::Done;
      }
      q.recv_ranges.clear();
      if (hca_.tpt().translate(f.reth_rkey, q.pd, f.reth_va, f.reth_len, mpt::kRemoteWrite, q.qpn, q.recv_ranges) !=
          TptResult::Ok) {
        responder_error(q, Event::WqAccessError, aeth::kNakRemoteAccess, f.psn);
        return Step::Done;
      }
      q.write_left = f.reth_len;
      q.recv_offset = 0;
    }
    if (pk.payload_len > q.write_left) {
      responder_error(q, Event::WqInvalidRequest, aeth::kNakInvalidReq, f.psn);
      return Step::Done;
    }
    if (imm_last) {
      // RDMA write with immediate consumes a receive WQE for the immediate.
      bool ok = false;
      const auto ranges = q.recv_ranges;
      const std::uint64_t off = q.recv_offset;
      if (start_receive(pk, q, ok) == Step::Stall) return Step::Stall;
      if (!ok) {
        nak(q, static_cast<std::uint8_t>(aeth::kRnrNak | (q.min_rnr_timer & 0x1f)), f.psn);
        q.recv_ranges = ranges;
        q.recv_offset = off;
        return Step::Done;
      }
      scatter(pk, q, ranges, off, payload, pk.payload_len);
      recv_cqe(q, q.recv_wr_id, CqeStatus::Success, 0, &f, static_cast<std::uint8_t>(cqe::RecvOp::RdmaWriteImm),
               f.solicited);
      q.recv_active = false;
      q.write_left = 0;
      q.msn = (q.msn + 1) & 0xffffff;
    } else {
      scatter(pk, q, q.recv_ranges, q.recv_offset, payload, pk.payload_len);
      q.recv_offset += pk.payload_len;
      q.write_left -= pk.payload_len;
      if (code == opc::kWriteOnly || code == opc::kWriteLast) {
        q.write_left = 0;
        q.msn = (q.msn + 1) & 0xffffff;
      }
    }
    hca_.mutable_stats().rx_bytes += pk.payload_len;
  } else if (code == opc::kReadRequest) {
    if (!(q.access & mpt::kRemoteRead) || q.reads_in_progress >= std::max<std::uint32_t>(1, q.resp_res)) {
      responder_error(q, Event::WqInvalidRequest,
                      (q.access & mpt::kRemoteRead) ? aeth::kNakInvalidReq : aeth::kNakRemoteAccess, f.psn);
      return Step::Done;
    }
    std::vector<HostRange> ranges;
    if (hca_.tpt().translate(f.reth_rkey, q.pd, f.reth_va, f.reth_len, mpt::kRemoteRead, q.qpn, ranges) !=
        TptResult::Ok) {
      responder_error(q, Event::WqAccessError, aeth::kNakRemoteAccess, f.psn);
      return Step::Done;
    }
    const std::uint32_t mtu = 128u << q.mtu;
    const std::uint32_t npsn = std::max<std::uint32_t>(1, (f.reth_len + mtu - 1) / mtu);
    ++q.reads_in_progress;
    q.msn = (q.msn + 1) & 0xffffff;
    se.send_read_response(q, f.psn, std::move(ranges), f.reth_len);
    q.expected_psn = psn_add(q.expected_psn, npsn);
    q.nak_sent = false;
    return Step::Done;
  } else if (code == opc::kCompareSwap || code == opc::kFetchAdd) {
    return atomic(pk, q);
  } else {
    responder_error(q, Event::WqInvalidRequest, aeth::kNakInvalidReq, f.psn);
    return Step::Done;
  }
  q.expected_psn = psn_add(q.expected_psn, 1);
  q.nak_sent = false;
  if (q.type == QpType::Rc && (f.ack_req || ++q.unacked_packets >= hca_.params().ack_coalesce)) {
    q.unacked_packets = 0;
    se.send_ack(q, aeth::kAck | aeth::kNoCredits, f.psn, q.msn);
  }
  return Step::Done;
}

RecvEngine::Step RecvEngine::atomic(Pending& pk, QpCtx& q) {
  PacketFields& f = pk.f;
  if (!atomic_.active) {
    std::vector<HostRange> ranges;
    if (!(q.access & mpt::kRemoteAtomic) || (f.atomic_va & 7) ||
        hca_.tpt().translate(f.atomic_rkey, q.pd, f.atomic_va, 8, mpt::kRemoteAtomic, q.qpn, ranges) !=
            TptResult::Ok ||
        ranges.size() != 1) {
      responder_error(q, Event::WqAccessError, aeth::kNakRemoteAccess, f.psn);
      return Step::Done;
    }
    // Read-modify-write by DMA; no other packet is processed meanwhile, so
    // the operation is atomic with respect to this HCA.
    atomic_ = AtomicOp{};
    atomic_.active = true;
    atomic_.host_addr = ranges[0].addr;
    hca_.bus().dma_read("hca.atomic", atomic_.host_addr, atomic_.old_value, 8,
                        host::DmaDone{[](void* o, std::uint64_t) {
                                        auto* e = static_cast<RecvEngine*>(o);
                                        e->atomic_.done = true;
                                        e->stalled_ = false;
                                        e->schedule(now() + e->hca_.clock_cycles(e->hca_.params().atomic_cycles));
                                      },
                                      this, 0});
    return Step::Stall;
  }
  if (!atomic_.done) return Step::Stall;
  std::uint64_t old;
  std::memcpy(&old, atomic_.old_value, 8);
  const std::uint64_t result = (f.opcode & 0x1f) == opc::kCompareSwap
                                   ? (old == f.atomic_compare ? f.atomic_swap_add : old)
                                   : old + f.atomic_swap_add;
  // The write reads its source at completion time, after the next atomic
  // may have started: each result gets its own staging buffer.
  std::uint8_t* value = hca_.scratch();
  std::memcpy(value, &result, 8);
  struct Write {
    RecvEngine* engine;
    fabric::Packet* pkt;
    std::uint8_t* value;
    InFlight in_flight{};
  };
  ++pk.pkt->device_refs;
  hca_.bus().dma_write("hca.atomic", atomic_.host_addr, value, 8,
                       host::DmaDone{[](void* o, std::uint64_t) {
                                       auto* w = static_cast<Write*>(o);
                                       w->engine->hca_.release_scratch(w->value);
                                       w->engine->free_packet(w->pkt);
                                       delete w;
                                     },
                                     hca_.in_flight_.add(new Write{this, pk.pkt, value}), 0});
  atomic_.active = false;
  q.msn = (q.msn + 1) & 0xffffff;
  hca_.send_engine().send_atomic_ack(q, f.psn, q.msn, old);
  q.expected_psn = psn_add(q.expected_psn, 1);
  q.nak_sent = false;
  return Step::Done;
}

RecvEngine::Step RecvEngine::uc_request(Pending& pk, QpCtx& q) {
  PacketFields& f = pk.f;
  const std::uint8_t code = f.opcode & 0x1f;
  const bool first = code == opc::kSendFirst || code == opc::kSendOnly || code == opc::kSendOnlyImm ||
                     code == opc::kWriteFirst || code == opc::kWriteOnly || code == opc::kWriteOnlyImm;
  if (f.psn != q.expected_psn) {
    // A lost packet: the message in progress is dropped silently (no
    // completion); the next first/only packet starts afresh.
    q.recv_active = false;
    q.write_left = 0;
    if (!first) {
      q.expected_psn = psn_add(f.psn, 1);
      return Step::Done;
    }
  }
  // In sequence now: the RC steps apply, minus everything that answers the
  // requester (nak() and responder_error() know UC sends nothing back).
  q.expected_psn = f.psn;
  return rc_request(pk, q);
}

RecvEngine::Step RecvEngine::ud_request(Pending& pk, QpCtx& q) {
  PacketFields& f = pk.f;
  const std::uint8_t code = f.opcode & 0x1f;
  if (code != opc::kSendOnly && code != opc::kSendOnlyImm) {
    ++hca_.mutable_stats().rx_dropped;
    return Step::Done;
  }
  if (q.type != QpType::Qp0 && f.deth_qkey != q.qkey) {  // QP0 ignores Q_Keys (IBA 10.2.4)
    ++hca_.mutable_stats().qkey_violations;
    ++hca_.port_state(q.port).qkey_violations;
    return Step::Done;
  }
  bool ok = false;
  if (start_receive(pk, q, ok) == Step::Stall) return Step::Stall;
  if (!ok) {
    // UD has no RNR: without a receive WQE the datagram is dropped.
    ++hca_.mutable_stats().rx_dropped;
    return Step::Done;
  }
  // The first 40 bytes of a UD receive buffer hold the GRH (when present).
  const std::uint32_t total = kGrhBytes + static_cast<std::uint32_t>(pk.payload_len);
  if (total > q.recv_capacity) {
    recv_cqe(q, q.recv_wr_id, CqeStatus::LocalLengthError, total, &f, static_cast<std::uint8_t>(cqe::RecvOp::Send),
             false);
    q.recv_active = false;
    return Step::Done;
  }
  if (f.grh) scatter(pk, q, q.recv_ranges, 0, pk.pkt->bytes.data() + kLrhBytes, kGrhBytes);  // GRH follows the LRH
  scatter(pk, q, q.recv_ranges, kGrhBytes, pk.pkt->bytes.data() + pk.payload_at, pk.payload_len);
  hca_.mutable_stats().rx_bytes += pk.payload_len;
  recv_cqe(q, q.recv_wr_id, CqeStatus::Success, total, &f, static_cast<std::uint8_t>(cqe::RecvOp::Send), f.solicited);
  q.recv_active = false;
  return Step::Done;
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
