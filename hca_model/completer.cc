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
constexpr std::uint32_t kRnrTimer10us[32] = {65536, 1,   2,   3,   4,   6,    8,    12,   16,   24,   32,
                                             48,    64,  96,  128, 192, 256,  384,  512,  768,  1024, 1536,
                                             2048,  3072, 4096, 6144, 8192, 12288, 16384, 24576, 32768, 49152};

bool read_like(swqe::Op op) {
  return op == swqe::Op::RdmaRead || op == swqe::Op::AtomicCs || op == swqe::Op::AtomicFa;
}
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
  retransmit_from(q, q.wqes.front().first_psn);
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
      if (j == i) from = w.first_psn;  // a read is re-requested whole
      w.read_done = 0;
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

void SendEngine::on_ack(QpCtx& q, const ib::PacketHeaders& h) {
  if (q.type != QpType::Rc || q.state() == QpState::Error || q.state() == QpState::Reset) return;
  const std::uint32_t psn = h.bth.psn;
  const std::uint8_t syn = h.ext.aeth.syndrome;
  const std::uint8_t kind = syn & 0xe0;
  // A NAK names the PSN that failed; everything before it is acknowledged.
  const std::uint32_t acked = kind == 0x00 ? psn : psn_add(psn, 0xffffff);
  bool progress = false;
  for (auto& w : q.wqes) {
    if (w.completed) continue;
    if (!w.all_sent || psn_diff(w.last_psn, acked) > 0) break;
    if (read_like(w.op)) {
      // Acknowledged past a read that got no response: re-request it.
      if (kind == 0x00) retransmit_from(q, w.first_psn);
      break;
    }
    complete(q, w, CqeStatus::Success);
    progress = true;
  }
  if (progress) q.retries_left = q.retry_cnt;
  retire_completed(q);
  if (kind == 0x00) {
    q.rnr_retries_left = q.rnr_retry;
    restart_timer(q);
    kick(q, 0);
    return;
  }
  if (kind == aeth::kRnrNak) {
    if (q.rnr_retry != 7) {  // 7 means retry forever
      if (q.rnr_retries_left == 0) {
        for (auto& w : q.wqes)
          if (!w.completed) {
            fail_qp(q, w, CqeStatus::RnrRetryExceeded);
            return;
          }
        return;
      }
      --q.rnr_retries_left;
    }
    q.ack_timer.cancel();
    q.rnr_psn = psn;
    q.rnr_timer.rearm(now() + static_cast<Tick>(kRnrTimer10us[syn & 0x1f]) * 10 * kUs);
    return;
  }
  if (syn == aeth::kNakPsnSeq) {
    if (q.retries_left == 0) {
      if (!q.wqes.empty()) fail_qp(q, q.wqes.front(), CqeStatus::RetryExceeded);
      return;
    }
    --q.retries_left;
    retransmit_from(q, psn);
    return;
  }
  const CqeStatus st = syn == aeth::kNakRemoteAccess ? CqeStatus::RemoteAccessError
                       : syn == aeth::kNakRemoteOp   ? CqeStatus::RemoteOperationalError
                                                     : CqeStatus::RemoteInvalidRequestError;
  for (auto& w : q.wqes)
    if (!w.completed) {
      fail_qp(q, w, st);
      return;
    }
}

void SendEngine::on_read_response(QpCtx& q, const ib::PacketHeaders& h, const ib::OpcodeInfo& op,
                                  const std::uint8_t* payload, std::size_t len, fabric::Packet* holder) {
  const std::uint32_t psn = h.bth.psn;
  if (q.type != QpType::Rc || q.state() == QpState::Error || q.state() == QpState::Reset) return;
  // Earlier sends and writes are implicitly acknowledged by a read response.
  SendWqe* read = nullptr;
  for (auto& w : q.wqes) {
    if (w.completed) continue;
    if (read_like(w.op)) {
      read = &w;
      break;
    }
    if (!w.all_sent || psn_diff(w.last_psn, psn) >= 0) return;
    complete(q, w, CqeStatus::Success);
  }
  if (!read || read->op != swqe::Op::RdmaRead || !read->all_sent) {
    retire_completed(q);
    return;
  }
  const std::uint32_t mtu = mtu_bytes(q);
  const std::uint32_t expect = psn_add(read->first_psn, static_cast<std::uint32_t>(read->read_done / mtu));
  if (psn != expect) {
    if (psn_diff(psn, expect) > 0) retransmit_from(q, read->first_psn);  // a response was lost
    return;
  }
  if (read->read_done + len > read->length) {
    fail_qp(q, *read, CqeStatus::BadResponseError);
    return;
  }
  // Scatter into the local buffers through the TPT (local write access).
  std::vector<HostRange> ranges;
  std::uint64_t skip = read->read_done, want = len;
  for (const auto& d : read->ds) {
    const std::uint32_t dlen = static_cast<std::uint32_t>(d[1]);
    if (skip >= dlen) {
      skip -= dlen;
      continue;
    }
    const std::uint64_t piece = std::min<std::uint64_t>(dlen - skip, want);
    if (hca_.tpt().translate(static_cast<std::uint32_t>(d[1] >> 32), q.pd, d[0] + skip, piece, mpt::kLocalWrite,
                             q.qpn, ranges) != TptResult::Ok) {
      fail_qp(q, *read, CqeStatus::LocalProtectionError);
      return;
    }
    want -= piece;
    skip = 0;
    if (want == 0) break;
  }
  const std::uint8_t* src = payload;
  for (const HostRange& r : ranges) {
    ++holder->device_refs;
    hca_.bus().dma_write("hca.read_data", r.addr, src, r.len,
                         host::DmaDone{[](void* o, std::uint64_t a) {
                                         static_cast<SendEngine*>(o)->packet_dma_done(
                                             reinterpret_cast<fabric::Packet*>(a & ~host::kDmaFailedBit));
                                       },
                                       this, reinterpret_cast<std::uint64_t>(holder)});
    src += r.len;
  }
  read->read_done += len;
  q.retries_left = q.retry_cnt;
  if (op.last()) {
    if (read->read_done != read->length) {
      fail_qp(q, *read, CqeStatus::BadResponseError);
      return;
    }
    complete(q, *read, CqeStatus::Success);
    if (q.reads_outstanding) --q.reads_outstanding;
    retire_completed(q);
    restart_timer(q);
    kick(q, 0);
  }
}

void SendEngine::on_atomic_ack(QpCtx& q, const ib::PacketHeaders& h) {
  if (q.type != QpType::Rc || q.state() == QpState::Error || q.state() == QpState::Reset) return;
  const std::uint32_t psn = h.bth.psn;
  SendWqe* atomic = nullptr;
  for (auto& w : q.wqes) {
    if (w.completed) continue;
    if (read_like(w.op)) {
      atomic = &w;
      break;
    }
    if (!w.all_sent || psn_diff(w.last_psn, psn) >= 0) return;
    complete(q, w, CqeStatus::Success);
  }
  if (!atomic || atomic->op == swqe::Op::RdmaRead || psn != atomic->first_psn) {
    retire_completed(q);
    return;
  }
  std::vector<HostRange> ranges;
  const auto& d = atomic->ds.front();
  if (hca_.tpt().translate(static_cast<std::uint32_t>(d[1] >> 32), q.pd, d[0], 8, mpt::kLocalWrite, q.qpn, ranges) !=
      TptResult::Ok) {
    fail_qp(q, *atomic, CqeStatus::LocalProtectionError);
    return;
  }
  // The original value lands in the local buffer (host byte order), then the
  // CQE (the bus keeps that order).
  std::uint8_t* buf = hca_.scratch();
  std::memcpy(buf, &h.ext.atomic_ack_eth.orig_remote_data, 8);
  const std::uint8_t* src = buf;
  std::uint32_t left = 8;
  for (const HostRange& r : ranges) {
    const bool last = left == r.len;
    hca_.bus().dma_write("hca.atomic_data", r.addr, src, r.len,
                         host::DmaDone{[](void* o, std::uint64_t a) {
                                         if (a & 1) static_cast<Hca*>(o)->release_scratch(
                                                        reinterpret_cast<std::uint8_t*>((a & ~host::kDmaFailedBit) - 1));
                                       },
                                       &hca_, last ? reinterpret_cast<std::uint64_t>(buf) + 1 : 0});
    src += r.len;
    left -= r.len;
  }
  complete(q, *atomic, CqeStatus::Success);
  if (q.reads_outstanding) --q.reads_outstanding;
  retire_completed(q);
  q.retries_left = q.retry_cnt;
  restart_timer(q);
  kick(q, 0);
}

void SendEngine::packet_dma_done(fabric::Packet* p) {
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
