// The completer half of the send engine: what the responder's ACKs, NAKs,
// read responses and atomic ACKs do to the requester's WQEs, the local ACK
// timer, go-back-N retransmission, RNR waits; and the responder's output
// queue (ACKs, NAKs, read responses, atomic ACKs).
#include <fmt/format.h>

#include <algorithm>

#include "core/sim.h"
#include "fabric/fabric.h"
#include "hca_model/send_engine.h"
#include "trace/trace.h"

namespace nicsim::hca {

namespace {
// RNR NAK timer codes (IBA 9.7.5.2.8, table 45), in units of 10 us.
constexpr std::uint32_t kRnrTimer10us[32] = {65536, 1,    2,    3,    4,    6,     8,     12,    16,    24,   32,
                                             48,    64,   96,   128,  192,  256,   384,   512,   768,   1024, 1536,
                                             2048,  3072, 4096, 6144, 8192, 12288, 16384, 24576, 32768, 49152};

bool read_like(swqe::Op op) { return op == swqe::Op::RdmaRead || op == swqe::Op::AtomicCs || op == swqe::Op::AtomicFa; }
}  // namespace

// Armed while requests await acknowledgement, re-armed on every one: a
// Timer keeps one calendar event for all those armings.
void SendEngine::arm_timer(QpCtx& q) {
  if (q.local_ack_timeout == 0) return;  // 0: wait forever (IBA 11.2.4.2)
  q.ack_timer.arm(now() + ((4096 * kNs) << std::min<std::uint8_t>(q.local_ack_timeout, 31)));
}

// The oldest request in flight got its answer: the timer starts again for
// the next one, if any is all sent.
void SendEngine::restart_timer(QpCtx& q) {
  q.ack_timer.cancel();
  if (!q.wqes.empty() && q.wqes.front().all_sent) arm_timer(q);
}

void SendEngine::ack_timer_expired(std::uint64_t qpn) {
  if (QpCtx* q = hca_.qp(static_cast<std::uint32_t>(qpn))) timer_expired(*q);
}

void SendEngine::rnr_wait_over(std::uint64_t qpn) {
  if (QpCtx* q = hca_.qp(static_cast<std::uint32_t>(qpn))) retransmit_from(*q, q->rnr_psn);
}

void SendEngine::timer_expired(QpCtx& q) {
  if (q.wqes.empty() || q.state() == QpState::Error) return;
  ++hca_.mutable_stats().timeouts;
  if (q.retries_left == 0) {
    fail_qp(q, q.wqes.front(), CqeStatus::RetryExceeded);
    return;
  }
  --q.retries_left;
  q.read_gap_pending = false;
  const SendWqe& w = q.wqes.front();
  // A read resumes at its first missing response; anything else from its start.
  const std::uint32_t done_psns =
      w.op == swqe::Op::RdmaRead && w.all_sent ? static_cast<std::uint32_t>(w.read_done / mtu_bytes(q)) : 0;
  retransmit_from(q, psn_add(w.first_psn, done_psns));
}

void SendEngine::retransmit_from(QpCtx& q, std::uint32_t psn) {
  // Go back N: find the WQE holding `psn`; everything from there is resent.
  std::size_t i = 0;
  for (; i < q.wqes.size(); ++i) {
    const SendWqe& w = q.wqes[i];
    if (!w.all_sent && w.sent == 0) break;
    if (psn_diff(psn, w.first_psn) >= 0 && (!w.all_sent || psn_diff(psn, w.last_psn) <= 0)) break;
  }
  if (i >= q.wqes.size()) return;
  std::uint32_t from = psn;
  for (std::size_t j = i; j < q.wqes.size(); ++j) {
    SendWqe& w = q.wqes[j];
    if (w.completed) continue;
    if (read_like(w.op)) {
      if (w.all_sent && q.reads_outstanding) --q.reads_outstanding;
      // A read is requested again from `psn` when that is one of its
      // responses (the data before it has landed), else whole.
      const bool resume = j == i && w.op == swqe::Op::RdmaRead && w.all_sent && psn_diff(psn, w.first_psn) > 0 &&
                          psn_diff(psn, w.last_psn) <= 0;
      if (j == i && !resume) from = w.first_psn;
      w.read_done = resume ? static_cast<std::uint64_t>(psn_diff(psn, w.first_psn)) * mtu_bytes(q) : 0;
      w.all_sent = false;
      w.sent = 0;
    } else if (j == i && psn_diff(psn, w.first_psn) > 0) {
      w.sent = static_cast<std::uint64_t>(psn_diff(psn, w.first_psn)) * mtu_bytes(q);
      w.all_sent = false;
    } else {
      w.sent = 0;
      w.all_sent = false;
    }
  }
  q.tx_index = i;
  hca_.mutable_stats().retransmits += static_cast<std::uint64_t>(std::max(0, psn_diff(q.next_psn, from)));
  q.next_psn = from;
  if (Sim::get().tracer().on(hca_.device_id(), Component::nic))
    Sim::get().tracer().record(now(), hca_.device_id(), Component::nic, "retransmit", {{"qp", q.qpn}, {"psn", from}});
  arm_timer(q);
  kick(q, 0);
}

// ---- the completer ---------------------------------------------------------------

void SendEngine::on_response(QpCtx& q, const ib::PacketHeaders& h, const ib::OpcodeInfo& op,
                             const std::uint8_t* payload, std::size_t len, fabric::Packet* holder) {
  Comp ctx{q, h, op, h.bth.psn, payload, len, holder};
  run_steps(
      CompStep::GetAck, CompStep::Done, tracing_steps(hca_.device_id()),
      [&](CompStep step) {
        switch (step) {
          NICSIM_HCA_COMPLETER_STEPS(NICSIM_HCA_STEP_CASE)
          default:
            return step;
        }
      },
      [&](CompStep step) {
        trace_step(hca_.device_id(), "completer", kCompStepNames[static_cast<int>(step)], q.qpn, ctx.psn);
      });
}

CompStep SendEngine::get_ack(Comp& c) {
  const QpCtx& q = c.q;
  if (q.type != QpType::Rc || q.state() == QpState::Error || q.state() == QpState::Reset) return CompStep::Done;
  return c.op.op == ib::Op::Acknowledge ? CompStep::AckWqes : CompStep::ImplicitAck;
}

// A NAK names the PSN that failed; everything before it is acknowledged.
// A response that acknowledges a packet not acknowledged before is forward
// progress, and the retry counter starts again: it counts retries in a row
// without progress, so a long message that crosses several lost packets
// (each fixed by a PSN-sequence NAK or a timeout) is not failed for them.
CompStep SendEngine::ack_wqes(Comp& c) {
  QpCtx& q = c.q;
  const bool ack = (c.h.ext.aeth.syndrome & aeth::kKindMask) == aeth::kAck;
  const std::uint32_t acked = ack ? c.psn : psn_add(c.psn, 0xffffff);
  bool progress = psn_diff(acked, q.oldest_unacked) >= 0;
  if (progress) q.oldest_unacked = psn_add(acked, 1);
  for (auto& w : q.wqes) {
    if (w.completed) continue;
    if (!w.all_sent || psn_diff(w.last_psn, acked) > 0) break;
    if (read_like(w.op)) {
      // Acknowledged past a read that got no response: re-request it.
      if (ack) retransmit_from(q, w.first_psn);
      break;
    }
    complete(q, w, CqeStatus::Success);
    progress = true;
  }
  if (progress) q.retries_left = q.retry_cnt;
  retire_completed(q);
  return CompStep::ChkAck;
}

CompStep SendEngine::chk_ack(Comp& c) {
  const std::uint8_t syn = c.h.ext.aeth.syndrome;
  switch (syn & aeth::kKindMask) {
    case aeth::kAck:
      c.q.rnr_retries_left = c.q.rnr_retry;
      return CompStep::UpdateComp;
    case aeth::kRnrNak:
      return CompStep::RnrRetry;
    default:
      return syn == aeth::kNakPsnSeq ? CompStep::ErrorRetry : CompStep::Error;
  }
}

// Sends and writes before a read response or an atomic ACK are acknowledged
// by it (the response to a read or atomic comes after theirs); then the
// oldest unfinished read or atomic is the one it answers.
CompStep SendEngine::implicit_ack(Comp& c) {
  QpCtx& q = c.q;
  for (auto& w : q.wqes) {
    if (w.completed) continue;
    if (read_like(w.op)) {
      c.wqe = &w;
      break;
    }
    if (!w.all_sent || psn_diff(w.last_psn, c.psn) >= 0) return CompStep::Done;
    complete(q, w, CqeStatus::Success);
  }
  return CompStep::ChkWqe;
}

CompStep SendEngine::chk_wqe(Comp& c) {
  const SendWqe* w = c.wqe;
  if (c.op.op == ib::Op::RdmaReadResponse)
    return w && w->op == swqe::Op::RdmaRead && w->all_sent ? CompStep::ChkPsn : CompStep::Retire;
  return w && w->op != swqe::Op::RdmaRead && c.psn == w->first_psn ? CompStep::Atomic : CompStep::Retire;
}

// Read responses come in PSN order; one ahead of the next expected means
// one was lost: the rest of the read is requested again from the missing
// response (its PSN, address and length), once per gap.
CompStep SendEngine::chk_response_psn(Comp& c) {
  const SendWqe& w = *c.wqe;
  QpCtx& q = c.q;
  const std::uint32_t expect = psn_add(w.first_psn, static_cast<std::uint32_t>(w.read_done / mtu_bytes(q)));
  if (c.psn == expect) {
    q.read_gap_pending = false;
    return CompStep::ChkLength;
  }
  if (psn_diff(c.psn, expect) > 0 && !(q.read_gap_pending && q.read_gap_psn == expect)) {
    q.read_gap_pending = true;
    q.read_gap_psn = expect;
    retransmit_from(q, expect);
  }
  return CompStep::Done;
}

CompStep SendEngine::chk_read_length(Comp& c) {
  if (c.wqe->read_done + c.len <= c.wqe->length) return CompStep::Read;
  fail_qp(c.q, *c.wqe, CqeStatus::BadResponseError);
  return CompStep::Done;
}

// Scatter into the local buffers through the TPT (local write access), by
// DMA straight from the packet.
CompStep SendEngine::read_data(Comp& c) {
  QpCtx& q = c.q;
  SendWqe& read = *c.wqe;
  std::vector<HostRange> ranges;
  std::uint64_t skip = read.read_done, want = c.len;
  for (const auto& d : read.ds) {
    const std::uint32_t dlen = static_cast<std::uint32_t>(d[1]);
    if (skip >= dlen) {
      skip -= dlen;
      continue;
    }
    const std::uint64_t piece = std::min<std::uint64_t>(dlen - skip, want);
    if (hca_.tpt().translate(static_cast<std::uint32_t>(d[1] >> 32), q.pd, d[0] + skip, piece, mpt::kLocalWrite, q.qpn,
                             ranges) != TptResult::Ok) {
      fail_qp(q, read, CqeStatus::LocalProtectionError);
      return CompStep::Done;
    }
    want -= piece;
    skip = 0;
    if (want == 0) break;
  }
  const std::uint8_t* src = c.payload;
  for (const HostRange& r : ranges) {
    ++c.holder->device_refs;
    hca_.bus().dma_write(
        "hca.read_data", r.addr, src, r.len,
        host::DmaDone{member_fn<&SendEngine::packet_dma_done>(), this, reinterpret_cast<std::uint64_t>(c.holder)});
    src += r.len;
  }
  read.read_done += c.len;
  q.retries_left = q.retry_cnt;
  return c.op.last() ? CompStep::CompWqe : CompStep::Done;
}

// The original value lands in the local buffer (host byte order), then the
// CQE (the bus keeps that order).
CompStep SendEngine::atomic_data(Comp& c) {
  QpCtx& q = c.q;
  std::vector<HostRange> ranges;
  const auto& d = c.wqe->ds.front();
  if (hca_.tpt().translate(static_cast<std::uint32_t>(d[1] >> 32), q.pd, d[0], 8, mpt::kLocalWrite, q.qpn, ranges) !=
      TptResult::Ok) {
    fail_qp(q, *c.wqe, CqeStatus::LocalProtectionError);
    return CompStep::Done;
  }
  Hca::Staging* s = hca_.scratch();
  std::memcpy(s->data(), &c.h.ext.atomic_ack_eth.orig_remote_data, 8);
  s->writes = static_cast<std::uint32_t>(ranges.size());
  const std::uint8_t* src = s->data();
  for (const HostRange& r : ranges) {
    hca_.bus().dma_write("hca.atomic_data", r.addr, src, r.len,
                         {member_fn<&SendEngine::atomic_data_written>(), this, reinterpret_cast<std::uint64_t>(s)});
    src += r.len;
  }
  return CompStep::CompWqe;
}

// The staging buffer of the value goes back once all its writes landed.
void SendEngine::atomic_data_written(std::uint64_t arg) {
  auto* s = reinterpret_cast<Hca::Staging*>(arg & ~host::kDmaFailedBit);
  if (--s->writes == 0) hca_.release_scratch(s);
}

CompStep SendEngine::comp_wqe(Comp& c) {
  QpCtx& q = c.q;
  SendWqe& w = *c.wqe;
  if (w.op == swqe::Op::RdmaRead && w.read_done != w.length) {
    fail_qp(q, w, CqeStatus::BadResponseError);
    return CompStep::Done;
  }
  complete(q, w, CqeStatus::Success);
  if (q.reads_outstanding) --q.reads_outstanding;
  retire_completed(q);
  q.retries_left = q.retry_cnt;
  return CompStep::UpdateComp;
}

CompStep SendEngine::update_comp(Comp& c) {
  restart_timer(c.q);
  kick(c.q, 0);
  return CompStep::Done;
}

// RNR retry 7 means retry forever.
CompStep SendEngine::rnr_retry(Comp& c) {
  QpCtx& q = c.q;
  if (q.rnr_retry != 7) {
    if (q.rnr_retries_left == 0) {
      for (auto& w : q.wqes)
        if (!w.completed) {
          fail_qp(q, w, CqeStatus::RnrRetryExceeded);
          break;
        }
      return CompStep::Done;
    }
    --q.rnr_retries_left;
  }
  q.ack_timer.cancel();
  q.rnr_psn = c.psn;
  q.rnr_timer.rearm(now() + static_cast<Tick>(kRnrTimer10us[c.h.ext.aeth.syndrome & 0x1f]) * 10 * kUs);
  return CompStep::Done;
}

CompStep SendEngine::error_retry(Comp& c) {
  QpCtx& q = c.q;
  if (q.retries_left == 0) {
    if (!q.wqes.empty()) fail_qp(q, q.wqes.front(), CqeStatus::RetryExceeded);
    return CompStep::Done;
  }
  --q.retries_left;
  retransmit_from(q, c.psn);
  return CompStep::Done;
}

CompStep SendEngine::comp_error(Comp& c) {
  const std::uint8_t syn = c.h.ext.aeth.syndrome;
  const CqeStatus st = syn == aeth::kNakRemoteAccess ? CqeStatus::RemoteAccessError
                       : syn == aeth::kNakRemoteOp   ? CqeStatus::RemoteOperationalError
                                                     : CqeStatus::RemoteInvalidRequestError;
  for (auto& w : c.q.wqes)
    if (!w.completed) {
      fail_qp(c.q, w, st);
      break;
    }
  return CompStep::Done;
}

CompStep SendEngine::retire(Comp& c) {
  retire_completed(c.q);
  return CompStep::Done;
}

void SendEngine::packet_dma_done(std::uint64_t packet) {
  auto* p = reinterpret_cast<fabric::Packet*>(packet & ~host::kDmaFailedBit);
  if (--p->device_refs == 0) hca_.fabric().pool().put(p);
}

CqeStatus SendEngine::bind_window(QpCtx& q, const std::uint8_t* b) {
  // Binding is a send-queue operation, ordered with the QP's other work.
  Tpt& tpt = hca_.tpt();
  const auto mw_key = static_cast<std::uint32_t>(get(b, swqe::bind_mw_key));
  const auto mr_key = static_cast<std::uint32_t>(get(b, swqe::bind_mr_key));
  const auto access = static_cast<std::uint32_t>(get(b, swqe::bind_access));
  const std::uint64_t length = get(b, swqe::bind_length);
  const std::uint64_t va = get(b, swqe::remote_va);
  const auto new_rkey = static_cast<std::uint32_t>(get(b, swqe::bind_new_rkey));
  Mpt* mw = tpt.entry(mw_key);
  Mpt* mr = tpt.entry(mr_key);
  if (!mw || !mw->valid || !(mw->flags & mpt::kIsWindow) || mw->key != mw_key) return CqeStatus::MwBindError;
  if (!mr || !mr->valid || mr->key != mr_key || (mr->flags & mpt::kIsWindow)) return CqeStatus::MwBindError;
  if (!(mr->flags & mpt::kMwBind) || mr->pd != q.pd || mw->pd != q.pd) return CqeStatus::MwBindError;
  if (length && (va < mr->start || va - mr->start > mr->length || length > mr->length - (va - mr->start)))
    return CqeStatus::MwBindError;
  if (mpt_index(new_rkey) != mpt_index(mw_key)) return CqeStatus::MwBindError;
  if (mw->parent_key) {
    if (Mpt* old = tpt.entry(mw->parent_key); old && old->windows_bound) --old->windows_bound;
  }
  mw->key = new_rkey;
  mw->start = va;
  mw->length = length;
  mw->flags = mpt::kIsWindow | mpt::kValid | (access & (mpt::kRemoteRead | mpt::kRemoteWrite | mpt::kRemoteAtomic));
  mw->parent_key = length ? mr_key : 0;
  mw->bound_qpn = q.qpn;
  if (length) ++mr->windows_bound;
  return CqeStatus::Success;
}

// ---- responder output --------------------------------------------------------

void SendEngine::send_ack(QpCtx& q, std::uint8_t syndrome, std::uint32_t psn, std::uint32_t msn) {
  // Coalesce: a plain ACK still waiting in the queue for this QP is advanced
  // instead of queueing another.
  if (!responses_.empty()) {
    Response& last = responses_.back();
    if (last.kind == Response::Kind::Ack && last.qpn == q.qpn && (last.syndrome & 0xe0) == 0 &&
        (syndrome & 0xe0) == 0) {
      last.psn = psn;
      last.msn = msn;
      return;
    }
  }
  Response r;
  r.kind = Response::Kind::Ack;
  r.qpn = q.qpn;
  r.syndrome = syndrome;
  r.psn = psn;
  r.msn = msn;
  responses_.push_back(std::move(r));
  schedule(now() + hca_.clock_cycles(hca_.params().ack_cycles));
}

void SendEngine::send_read_response(QpCtx& q, std::uint32_t first_psn, std::vector<HostRange> ranges,
                                    std::uint64_t length) {
  Response r;
  r.kind = Response::Kind::ReadData;
  r.qpn = q.qpn;
  r.next_psn = first_psn;
  r.msn = q.msn;
  r.ranges = std::move(ranges);
  r.length = length;
  if (length == 0) {
    // A zero-length read still gets one (empty) RDMA READ response only.
    r.length = 0;
  }
  responses_.push_back(std::move(r));
  schedule(now());
}

void SendEngine::send_atomic_ack(QpCtx& q, std::uint32_t psn, std::uint32_t msn, std::uint64_t original) {
  Response r;
  r.kind = Response::Kind::AtomicAck;
  r.qpn = q.qpn;
  r.psn = psn;
  r.msn = msn;
  r.value = original;
  responses_.push_back(std::move(r));
  schedule(now());
}

}  // namespace nicsim::hca
