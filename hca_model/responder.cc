// The responder half of the receive engine: a request packet on an RC, UC or
// UD QP goes through the responder's steps (recv_engine.h), each checking or
// doing one thing and naming the next, as the Linux rxe responder does. What
// the packet carries and asks for is its opcode's row of the wire layer's
// table. A step that waits for a DMA (a receive WQE being fetched, an
// atomic's read) stalls the receive pipeline; the packet then runs through
// the steps again from the start when the DMA is done.
#include <algorithm>
#include <cstring>

#include "core/sim.h"
#include "hca_model/recv_engine.h"
#include "hca_model/send_engine.h"

namespace nicsim::hca {

namespace {
constexpr std::uint32_t kGrhBytes = 40;
constexpr std::uint32_t kLrhBytes = 8;

std::uint8_t rnr_nak(const QpCtx& q) { return static_cast<std::uint8_t>(aeth::kRnrNak | (q.min_rnr_timer & 0x1f)); }
std::uint32_t msn_next(std::uint32_t msn) { return (msn + 1) & 0xffffff; }
}  // namespace

inline RespStep RecvEngine::get_req(Resp& r) {
  const ib::OpcodeInfo& op = r.op;
  if (op.op == ib::Op::Send && !op.invalidate)
    r.kind = Resp::Kind::Send;
  else if (op.op == ib::Op::RdmaWrite)
    r.kind = Resp::Kind::Write;
  else if (op.op == ib::Op::RdmaReadRequest)
    r.kind = Resp::Kind::Read;
  else if (op.atomic)
    r.kind = Resp::Kind::Atomic;
  return is_datagram(r.q.type) ? RespStep::ChkOpValid : RespStep::ChkPsn;
}

// UC has no duplicates: a gap loses the message in progress (no
// completion), and the next first or only packet starts afresh.
inline RespStep RecvEngine::chk_psn(Resp& r) {
  QpCtx& q = r.q;
  if (q.type == QpType::Uc) {
    if (r.psn != q.expected_psn) {
      q.recv_active = false;
      q.write_left = 0;
      if (!r.op.first()) {
        q.expected_psn = psn_add(r.psn, 1);
        return RespStep::Done;
      }
    }
    q.expected_psn = r.psn;
    return RespStep::ChkOpSeq;
  }
  const std::int32_t d = psn_diff(r.psn, q.expected_psn);
  if (d < 0) return RespStep::Duplicate;
  if (d > 0) return RespStep::ErrPsnSeq;
  return RespStep::ChkOpSeq;
}

// IBA 9.8.3.1. A last RDMA write packet with no write in progress passes
// here and fails the length check (unless it carries nothing).
inline RespStep RecvEngine::chk_op_seq(Resp& r) {
  const QpCtx& q = r.q;
  const bool first = r.op.first();
  const bool send = r.kind == Resp::Kind::Send, write = r.kind == Resp::Kind::Write;
  if ((send && !first && !q.recv_active) ||
      (write && r.op.position == ib::Position::Middle && q.write_left == 0 && !q.recv_active) ||
      ((send || write) && first && (q.recv_active || q.write_left)))
    return RespStep::ErrInvalidRequest;
  return RespStep::ChkOpValid;
}

inline RespStep RecvEngine::chk_op_valid(Resp& r) {
  const QpCtx& q = r.q;
  if (is_datagram(q.type))
    return r.kind == Resp::Kind::Send && r.op.position == ib::Position::Only ? RespStep::ChkQkey : RespStep::Drop;
  switch (r.kind) {
    case Resp::Kind::Send:
      return r.op.first() ? RespStep::ChkResource : RespStep::ChkLength;
    case Resp::Kind::Write:
      if (!r.op.first()) return RespStep::ChkLength;
      return (q.access & mpt::kRemoteWrite) ? RespStep::ChkRkey : RespStep::ErrRemoteAccess;
    case Resp::Kind::Read:
      return (q.access & mpt::kRemoteRead) ? RespStep::ChkResource : RespStep::ErrReadAccess;
    case Resp::Kind::Atomic:
      if (atomic_.active) return RespStep::Execute;  // the atomic this packet started, resumed
      return (q.access & mpt::kRemoteAtomic) ? RespStep::ChkRkey : RespStep::ErrRemoteAccess;
    case Resp::Kind::Other:
      break;
  }
  return RespStep::ErrInvalidRequest;
}

// QP0 ignores Q_Keys (IBA 10.2.4).
RespStep RecvEngine::chk_qkey(Resp& r) {
  QpCtx& q = r.q;
  if (q.type != QpType::Qp0 && r.pk.h.ext.deth.q_key != q.qkey) {
    ++hca_.mutable_stats().qkey_violations;
    ++hca_.port_state(q.port).qkey_violations;
    return RespStep::Done;
  }
  return RespStep::ChkResource;
}

// A new message opens a receive WQE, as does the immediate data of an RDMA
// write; a read needs one of the responder's read resources.
RespStep RecvEngine::chk_resource(Resp& r) {
  QpCtx& q = r.q;
  if (r.kind == Resp::Kind::Read)
    return q.reads_in_progress >= std::max<std::uint32_t>(1, q.resp_res) ? RespStep::ErrInvalidRequest
                                                                         : RespStep::ChkRkey;
  if (r.kind == Resp::Kind::Write) {
    // The receive WQE's buffer takes the place of the write's while it
    // opens; the write's comes back if none is there.
    saved_ranges_ = q.recv_ranges;
    r.saved_offset = q.recv_offset;
  }
  bool ok = false;
  if (start_receive(r.pk, q, ok) == Step::Stall) {
    // The packet is processed again from its first step once the WQE is in:
    // a first packet leaves no write in progress behind (ChkRkey opens it
    // again), or ChkOpSeq would take it for a second first packet.
    if (r.kind == Resp::Kind::Write && r.op.first()) q.write_left = 0;
    return RespStep::Stall;
  }
  if (r.kind == Resp::Kind::Write) {
    if (ok) return RespStep::Execute;
    q.recv_ranges = saved_ranges_;
    q.recv_offset = r.saved_offset;
    return RespStep::ErrRnr;
  }
  if (is_datagram(q.type)) return ok ? RespStep::ChkLength : RespStep::ErrRnr;
  if (!ok) return q.recv_length_error ? RespStep::ErrRemoteOp : RespStep::ErrRnr;  // no WQE, or a bad one
  return RespStep::ChkLength;
}

// A send too long for its receive buffer is not scattered, but counted on
// to its end (the CQE says how long it was) before it fails.
inline RespStep RecvEngine::chk_length(Resp& r) {
  QpCtx& q = r.q;
  if (is_datagram(q.type)) {
    // The first 40 bytes of a UD receive buffer hold the GRH (when present).
    r.byte_len = kGrhBytes + r.len;
    return r.byte_len > q.recv_capacity ? RespStep::ErrLength : RespStep::Execute;
  }
  if (r.kind == Resp::Kind::Send) {
    if (q.recv_offset + r.len > q.recv_capacity) q.recv_length_error = true;
    return RespStep::Execute;
  }
  if (r.len > q.write_left) return RespStep::ErrInvalidRequest;
  return r.op.immediate ? RespStep::ChkResource : RespStep::Execute;
}

RespStep RecvEngine::chk_rkey(Resp& r) {
  QpCtx& q = r.q;
  const ib::ExtHeaders& ext = r.pk.h.ext;
  Tpt& tpt = hca_.tpt();
  if (r.kind == Resp::Kind::Write) {
    q.recv_ranges.clear();
    if (tpt.translate(ext.reth.r_key, q.pd, ext.reth.va, ext.reth.dma_len, mpt::kRemoteWrite, q.qpn, q.recv_ranges) !=
        TptResult::Ok)
      return RespStep::ErrRemoteAccess;
    q.write_left = ext.reth.dma_len;
    q.recv_offset = 0;
    return RespStep::ChkLength;
  }
  ranges_.clear();
  if (r.kind == Resp::Kind::Read)
    return tpt.translate(ext.reth.r_key, q.pd, ext.reth.va, ext.reth.dma_len, mpt::kRemoteRead, q.qpn, ranges_) ==
                   TptResult::Ok
               ? RespStep::Execute
               : RespStep::ErrRemoteAccess;
  const ib::AtomicEth& a = ext.atomic_eth;
  if ((a.va & 7) || tpt.translate(a.r_key, q.pd, a.va, 8, mpt::kRemoteAtomic, q.qpn, ranges_) != TptResult::Ok ||
      ranges_.size() != 1)
    return RespStep::ErrRemoteAccess;
  return RespStep::Execute;
}

inline RespStep RecvEngine::execute(Resp& r) {
  QpCtx& q = r.q;
  if (is_datagram(q.type)) {
    const std::uint8_t* bytes = r.pk.pkt->bytes.data();
    if (r.pk.h.grh) scatter(r.pk, q, q.recv_ranges, 0, bytes + kLrhBytes, kGrhBytes);  // the GRH follows the LRH
    scatter(r.pk, q, q.recv_ranges, kGrhBytes, r.payload, r.len);
    hca_.mutable_stats().rx_bytes += r.len;
    return RespStep::Complete;
  }
  switch (r.kind) {
    case Resp::Kind::Send:
      if (!q.recv_length_error) scatter(r.pk, q, q.recv_ranges, q.recv_offset, r.payload, r.len);
      q.recv_offset += r.len;
      hca_.mutable_stats().rx_bytes += r.len;
      if (!q.recv_length_error) return RespStep::Complete;
      r.byte_len = static_cast<std::uint32_t>(q.recv_offset);
      return RespStep::ErrLength;
    case Resp::Kind::Write:
      if (r.op.immediate) {
        scatter(r.pk, q, saved_ranges_, r.saved_offset, r.payload, r.len);
        return RespStep::Complete;
      }
      scatter(r.pk, q, q.recv_ranges, q.recv_offset, r.payload, r.len);
      q.recv_offset += r.len;
      q.write_left -= r.len;
      return RespStep::Complete;
    case Resp::Kind::Read:
      return execute_read(r);
    case Resp::Kind::Atomic:
      return execute_atomic(r);
    case Resp::Kind::Other:
      break;
  }
  return RespStep::ErrInvalidRequest;
}

// The read response goes out with the MSN this read completes.
RespStep RecvEngine::execute_read(Resp& r) {
  QpCtx& q = r.q;
  const std::uint32_t length = r.pk.h.ext.reth.dma_len;
  const std::uint32_t mtu = 128u << q.mtu;
  r.npsn = std::max<std::uint32_t>(1, (length + mtu - 1) / mtu);
  ++q.reads_in_progress;
  q.msn = msn_next(q.msn);
  hca_.send_engine().send_read_response(q, r.psn, std::move(ranges_), length);
  return RespStep::Acknowledge;
}

// Read-modify-write by DMA; no other packet is processed meanwhile, so the
// operation is atomic with respect to this HCA.
RespStep RecvEngine::execute_atomic(Resp& r) {
  if (!atomic_.active) {
    atomic_ = AtomicOp{};
    atomic_.active = true;
    atomic_.host_addr = ranges_[0].addr;
    hca_.bus().dma_read("hca.atomic", atomic_.host_addr, atomic_.old_value, 8,
                        host::DmaDone{member_fn<&RecvEngine::atomic_read>(), this, 0});
    return RespStep::Stall;
  }
  if (!atomic_.done) return RespStep::Stall;
  const ib::AtomicEth& a = r.pk.h.ext.atomic_eth;
  std::uint64_t old;
  std::memcpy(&old, atomic_.old_value, 8);
  const std::uint64_t result =
      r.op.op == ib::Op::CompareSwap ? (old == a.compare ? a.swap_add : old) : old + a.swap_add;
  // The write reads its source at completion time, after the next atomic
  // may have started: each result gets its own staging buffer.
  Hca::Staging* s = hca_.scratch();
  std::memcpy(s->data(), &result, 8);
  s->packet = r.pk.pkt;
  ++r.pk.pkt->device_refs;
  hca_.bus().dma_write("hca.atomic", atomic_.host_addr, s->data(), 8,
                       {member_fn<&RecvEngine::atomic_written>(), this, reinterpret_cast<std::uint64_t>(s)});
  atomic_.active = false;
  r.q.msn = msn_next(r.q.msn);
  hca_.send_engine().send_atomic_ack(r.q, r.psn, r.q.msn, old);
  return RespStep::Acknowledge;
}

void RecvEngine::atomic_written(std::uint64_t arg) {
  auto* s = reinterpret_cast<Hca::Staging*>(arg & ~host::kDmaFailedBit);
  fabric::Packet* p = s->packet;
  hca_.release_scratch(s);
  free_packet(p);
}

void RecvEngine::atomic_read() {
  atomic_.done = true;
  stalled_ = false;
  schedule(now() + hca_.clock_cycles(hca_.params().atomic_cycles));
}

inline RespStep RecvEngine::complete(Resp& r) {
  QpCtx& q = r.q;
  const ib::PacketHeaders& h = r.pk.h;
  constexpr auto kSend = static_cast<std::uint8_t>(cqe::RecvOp::Send);
  if (is_datagram(q.type)) {
    recv_cqe(q, q.recv_wr_id, CqeStatus::Success, kGrhBytes + r.len, &r.pk, kSend, h.bth.se);
    q.recv_active = false;
    return RespStep::Done;
  }
  if (r.kind == Resp::Kind::Send) {
    if (r.op.last()) {
      recv_cqe(q, q.recv_wr_id, CqeStatus::Success, static_cast<std::uint32_t>(q.recv_offset), &r.pk, kSend, h.bth.se);
      q.recv_active = false;
      q.msn = msn_next(q.msn);
    }
    return RespStep::Acknowledge;
  }
  if (r.op.immediate) {
    // RDMA write with immediate consumes a receive WQE for the immediate.
    recv_cqe(q, q.recv_wr_id, CqeStatus::Success, 0, &r.pk, static_cast<std::uint8_t>(cqe::RecvOp::RdmaWriteImm),
             h.bth.se);
    q.recv_active = false;
    q.write_left = 0;
    q.msn = msn_next(q.msn);
  } else if (r.op.last()) {
    q.write_left = 0;
    q.msn = msn_next(q.msn);
  }
  hca_.mutable_stats().rx_bytes += r.len;
  return RespStep::Acknowledge;
}

// A read's response and an atomic's ACK acknowledge them; sends and writes
// are acknowledged when the requester asks or every ack_coalesce packets.
inline RespStep RecvEngine::acknowledge(Resp& r) {
  QpCtx& q = r.q;
  q.expected_psn = psn_add(q.expected_psn, r.kind == Resp::Kind::Read ? r.npsn : 1);
  q.nak_sent = false;
  if (r.kind == Resp::Kind::Read || r.kind == Resp::Kind::Atomic) return RespStep::Done;
  if (q.type == QpType::Rc && (r.pk.h.bth.a || ++q.unacked_packets >= hca_.params().ack_coalesce)) {
    q.unacked_packets = 0;
    hca_.send_engine().send_ack(q, aeth::kAck | aeth::kNoCredits, r.psn, q.msn);
  }
  return RespStep::Done;
}

// The requester retried: reads are executed again; anything else is
// acknowledged again.
RespStep RecvEngine::duplicate(Resp& r) {
  QpCtx& q = r.q;
  SendEngine& se = hca_.send_engine();
  if (r.kind == Resp::Kind::Read) {
    const ib::Reth& reth = r.pk.h.ext.reth;
    std::vector<HostRange> ranges;
    if (hca_.tpt().translate(reth.r_key, q.pd, reth.va, reth.dma_len, mpt::kRemoteRead, q.qpn, ranges) == TptResult::Ok)
      se.send_read_response(q, r.psn, std::move(ranges), reth.dma_len);
    return RespStep::Done;
  }
  se.send_ack(q, aeth::kAck | aeth::kNoCredits, psn_add(q.expected_psn, 0xffffff), q.msn);
  return RespStep::Done;
}

RespStep RecvEngine::err_psn_seq(Resp& r) {
  if (!r.q.nak_sent) {
    r.q.nak_sent = true;
    nak(r.q, aeth::kNakPsnSeq, r.q.expected_psn);
  }
  return RespStep::Done;
}

// Receiver Not Ready: the RC requester retries later; UC loses the message,
// UD the datagram.
RespStep RecvEngine::err_rnr(Resp& r) {
  QpCtx& q = r.q;
  nak(q, rnr_nak(q), r.psn);
  if (r.kind == Resp::Kind::Send && q.type != QpType::Rc) {
    if (q.type == QpType::Uc) q.expected_psn = psn_add(r.psn, 1);
    ++hca_.mutable_stats().rx_dropped;
  }
  return RespStep::Done;
}

RespStep RecvEngine::err_length(Resp& r) {
  QpCtx& q = r.q;
  recv_cqe(q, q.recv_wr_id, CqeStatus::LocalLengthError, r.byte_len, &r.pk,
           static_cast<std::uint8_t>(cqe::RecvOp::Send), false);
  q.recv_active = false;
  if (!is_datagram(q.type)) responder_error(q, Event::WqInvalidRequest, aeth::kNakInvalidReq, r.psn);
  return RespStep::Done;
}

RespStep RecvEngine::err_invalid_request(Resp& r) {
  responder_error(r.q, Event::WqInvalidRequest, aeth::kNakInvalidReq, r.psn);
  return RespStep::Done;
}

RespStep RecvEngine::err_remote_access(Resp& r) {
  responder_error(r.q, Event::WqAccessError, aeth::kNakRemoteAccess, r.psn);
  return RespStep::Done;
}

// A remote access NAK, reported to the consumer as an invalid request.
RespStep RecvEngine::err_read_access(Resp& r) {
  responder_error(r.q, Event::WqInvalidRequest, aeth::kNakRemoteAccess, r.psn);
  return RespStep::Done;
}

RespStep RecvEngine::err_remote_op(Resp& r) {
  responder_error(r.q, Event::WqAccessError, aeth::kNakRemoteOp, r.psn);
  return RespStep::Done;
}

RespStep RecvEngine::drop(Resp&) {
  ++hca_.mutable_stats().rx_dropped;
  return RespStep::Done;
}

// The steps most packets take are inline (above), so the loop's switch runs
// them in place rather than calling each.
RecvEngine::Step RecvEngine::respond(Pending& pk, QpCtx& q) {
  Resp ctx{pk, q, *pk.op, pk.h.bth.psn};
  ctx.payload = pk.pkt->bytes.data() + pk.payload_at;
  ctx.len = static_cast<std::uint32_t>(pk.payload_len);
  const RespStep end = run_steps(
      RespStep::GetReq, RespStep::Done, tracing_steps(hca_.device_id()),
      [&](RespStep step) {
        switch (step) {
          NICSIM_HCA_RESPONDER_STEPS(NICSIM_HCA_STEP_CASE)
          default:
            return step;
        }
      },
      [&](RespStep step) {
        trace_step(hca_.device_id(), "responder", kRespStepNames[static_cast<int>(step)], q.qpn, ctx.psn);
      });
  return end == RespStep::Stall ? Step::Stall : Step::Done;
}

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

}  // namespace nicsim::hca
