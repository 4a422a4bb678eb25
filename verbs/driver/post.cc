// Work requests: post_send, post_recv and the bind WQE of ci_bind_mw. WQEs
// are written by the CPU into the rings in node memory (hca_regs.h formats),
// then one doorbell tells the HCA the new producer count.
#include <algorithm>
#include <cstring>
#include <iterator>

#include "verbs/driver/driver.h"

namespace nicsim::verbs {

namespace {

using Op = hca::swqe::Op;

// QP types as bits, for the table of work request types.
constexpr std::uint8_t kRc = 1, kUc = 2, kUd = 4, kSpecial = 8;

std::uint8_t type_bit(const Qp& qp) {
  switch (qp.type) {
    case IB_QPT_RELIABLE_CONN:
      return kRc;
    case IB_QPT_UNRELIABLE_CONN:
      return kUc;
    case IB_QPT_UNRELIABLE_DGRM:
      return kUd;
    default:
      return kSpecial;
  }
}

// Which send operations each QP type supports (IBA 1.1 table 81), and their
// opcodes without and with immediate data.
constexpr struct {
  ib_wr_type_t type;
  Op op, op_imm;
  std::uint8_t qp_types;
  bool imm;
  bool carries_data;  // inline data applies
} kWrTypes[] = {
    {WR_SEND, Op::Send, Op::SendImm, kRc | kUc | kUd | kSpecial, true, true},
    {WR_RDMA_WRITE, Op::RdmaWrite, Op::RdmaWriteImm, kRc | kUc, true, true},
    {WR_RDMA_READ, Op::RdmaRead, Op::RdmaRead, kRc, false, false},
    {WR_COMPARE_SWAP, Op::AtomicCs, Op::AtomicCs, kRc, false, false},
    {WR_FETCH_ADD, Op::AtomicFa, Op::AtomicFa, kRc, false, false},
};

bool send_state_ok(hca::QpState s) {
  // The seed: posting sends in Reset, Init, RTR or Error is invalid.
  return s == hca::QpState::Rts || s == hca::QpState::Sqd || s == hca::QpState::Sqe;
}

bool recv_state_ok(hca::QpState s) {
  // Receives may be posted from Init on (IBA 1.1 errata to the seed's
  // "reset or init"), so that they are there when the first message comes;
  // in Error they are taken and complete with a flush error (IBA 10.8.3).
  return s != hca::QpState::Reset;
}

std::uint32_t max_inline(const Qp& qp) {
  return std::min<std::uint32_t>((1u << qp.sq.stride_log) - hca::swqe::kHeaderBytes, qp.dev->caps().max_inline);
}

void put_av(std::uint8_t* w, const ib_av_attr_t& av) {
  using namespace hca;
  put(w, swqe::ud_dlid, cl_ntoh16(av.dlid));
  put(w, swqe::ud_sl, av.sl);
  put(w, swqe::ud_path_bits, av.path_bits);
  put(w, swqe::ud_static_rate, av.static_rate);
  put(w, swqe::ud_grh, av.grh_valid ? 1 : 0);
  if (av.grh_valid) {
    const std::uint32_t vcf = cl_ntoh32(av.grh.ver_class_flow);
    put(w, swqe::ud_hop_limit, av.grh.hop_limit);
    put(w, swqe::ud_sgid_index, 0);  // one GID per port
    put(w, swqe::ud_tclass, (vcf >> 20) & 0xff);
    put(w, swqe::ud_flow_label, vcf & 0xfffff);
    put_bytes(w, swqe::ud_dgid, av.grh.dest_gid.raw);
  }
}

void put_ds(std::uint8_t* seg, const ib_local_ds_t& ds) {
  hca::put(seg, hca::ds::addr, reinterpret_cast<std::uint64_t>(ds.vaddr));
  hca::put(seg, hca::ds::length, ds.length);
  hca::put(seg, hca::ds::lkey, ds.lkey);
}

// Checks one send WR against the QP; on success `op` is its opcode.
ib_api_status_t check_send(const Qp& qp, const ib_send_wr_t& wr, Op& op, const Av*& av, bool& inl,
                           std::uint32_t& inline_len) {
  const auto type = raw_enum(wr.wr_type);
  const auto* t =
      std::find_if(std::begin(kWrTypes), std::end(kWrTypes), [&](const auto& e) { return raw_enum(e.type) == type; });
  if (t == std::end(kWrTypes) || !(t->qp_types & type_bit(qp))) return IB_INVALID_WR_TYPE;
  const bool imm = wr.send_opt & IB_SEND_OPT_IMMEDIATE;
  if (imm && !t->imm) return IB_INVALID_WR_TYPE;
  op = imm ? t->op_imm : t->op;
  if (wr.num_ds && !wr.ds_array) return IB_INVALID_PARAMETER;
  inl = (wr.send_opt & IB_SEND_OPT_INLINE) && t->carries_data;
  if (inl) {
    std::uint64_t total = 0;
    for (std::uint32_t i = 0; i < wr.num_ds; ++i) {
      if (wr.ds_array[i].length && !wr.ds_array[i].vaddr) return IB_INVALID_PARAMETER;
      total += wr.ds_array[i].length;
    }
    if (total > max_inline(qp)) return IB_INVALID_PARAMETER;
    inline_len = static_cast<std::uint32_t>(total);
  } else if (wr.num_ds > qp.sq.max_sge) {
    return IB_INVALID_MAX_SGE;
  }
  av = nullptr;
  if (type_bit(qp) & (kUd | kSpecial)) {
    av = qp.dev->find<Av>(wr.dgrm.ud.h_av);
    if (!av || av->pd != qp.pd) return IB_INVALID_ADDR_HANDLE;
  }
  return IB_SUCCESS;
}

// Writes one send WQE at the SQ head; returns the bytes the CPU wrote.
std::uint32_t write_send(Qp& qp, const ib_send_wr_t& wr, Op op, const Av* av, bool inl, std::uint32_t inline_len) {
  using namespace hca;
  WorkQueue& sq = qp.sq;
  std::uint8_t* w = sq.slot(sq.head);
  std::memset(w, 0, swqe::kHeaderBytes);
  const bool signaled = qp.sq_signaled || (wr.send_opt & IB_SEND_OPT_SIGNALED);
  std::uint8_t flags = signaled ? swqe::kSignaled : 0;
  if (wr.send_opt & IB_SEND_OPT_SOLICITED) flags |= swqe::kSolicited;
  if (wr.send_opt & IB_SEND_OPT_FENCE) flags |= swqe::kFence;
  if (inl) flags |= swqe::kInline;
  put(w, swqe::opcode, static_cast<std::uint8_t>(op));
  put(w, swqe::flags, flags);
  put(w, swqe::wr_id, wr.wr_id);
  // Immediate data, rkeys and atomic operands arrive in wire order; the
  // WQE holds values.
  put(w, swqe::imm, cl_ntoh32(wr.immediate_data));
  put(w, swqe::rkey, cl_ntoh32(wr.remote_ops.rkey));
  put(w, swqe::remote_va, wr.remote_ops.vaddr);
  if (op == Op::AtomicCs) {
    put(w, swqe::atomic_compare, cl_ntoh64(wr.remote_ops.atomic1));
    put(w, swqe::atomic_swap_add, cl_ntoh64(wr.remote_ops.atomic2));
  } else if (op == Op::AtomicFa) {
    put(w, swqe::atomic_swap_add, cl_ntoh64(wr.remote_ops.atomic1));
  }
  if (av) {
    put(w, swqe::ud_dqpn, cl_ntoh32(wr.dgrm.ud.remote_qp) & kMaxQpn);
    // A Q_Key with the high bit set means "use the QP's own" (IBA 10.2.4).
    const std::uint32_t qkey = cl_ntoh32(wr.dgrm.ud.remote_qkey);
    put(w, swqe::ud_qkey, (qkey & 0x80000000u) ? qp.qkey : qkey);
    put_av(w, av->attr);
  }
  std::uint32_t bytes = swqe::kHeaderBytes;
  if (inl) {
    put(w, swqe::inline_len, inline_len);
    std::uint8_t* dst = w + swqe::kHeaderBytes;
    for (std::uint32_t i = 0; i < wr.num_ds; ++i) {
      std::memcpy(dst, wr.ds_array[i].vaddr, wr.ds_array[i].length);
      dst += wr.ds_array[i].length;
    }
    bytes += inline_len;
  } else {
    put(w, swqe::num_ds, wr.num_ds);
    for (std::uint32_t i = 0; i < wr.num_ds; ++i) put_ds(w + swqe::kHeaderBytes + i * ds::kSize, wr.ds_array[i]);
    bytes += wr.num_ds * ds::kSize;
  }
  const std::uint32_t slot = sq.head & (sq.entries - 1);
  sq.signaled[slot] = signaled;
  sq.wr_ids[slot] = wr.wr_id;
  ++sq.head;
  return bytes;
}

}  // namespace

ib_api_status_t post_send(const ib_qp_handle_t h_qp, ib_send_wr_t* const p_send_wr, ib_send_wr_t** pp_failed) {
  NICSIM_API_CALL_NAMED("ci_post_send");
  Qp* qp = lookup<Qp>(h_qp);
  if (!qp) return IB_INVALID_QP_HANDLE;
  if (pp_failed) *pp_failed = nullptr;
  if (!p_send_wr) return IB_INVALID_PARAMETER;
  Device& d = *qp->dev;
  ib_api_status_t status = IB_SUCCESS;
  std::uint64_t bytes = 0;
  std::uint32_t posted = 0;
  for (ib_send_wr_t* wr = p_send_wr; wr; wr = wr->p_next) {
    Op op;
    const Av* av;
    bool inl = false;
    std::uint32_t inline_len = 0;
    if (!send_state_ok(qp->state))
      status = IB_INVALID_QP_STATE;
    else if (qp->sq.outstanding() >= qp->sq.depth)
      status = IB_INSUFFICIENT_RESOURCES;
    else
      status = check_send(*qp, *wr, op, av, inl, inline_len);
    if (status != IB_SUCCESS) {
      if (pp_failed) *pp_failed = wr;
      break;
    }
    bytes += write_send(*qp, *wr, op, av, inl, inline_len);
    ++posted;
  }
  if (!posted) return status;
  // Building the WQEs is CPU work; the HCA sees none of them until the
  // doorbell.
  static const host::CostClass kPostSend{"verbs_post_send"};
  d.cpu(kPostSend, bytes);
  if (d.find<Qp>(h_qp) == qp) d.doorbell(hca::reg::db_send, qp->qpn, qp->sq.head);
  return status;
}

ib_api_status_t post_recv(const ib_qp_handle_t h_qp, ib_recv_wr_t* const p_recv_wr, ib_recv_wr_t** pp_failed) {
  NICSIM_API_CALL_NAMED("ci_post_recv");
  Qp* qp = lookup<Qp>(h_qp);
  if (!qp) return IB_INVALID_QP_HANDLE;
  if (pp_failed) *pp_failed = nullptr;
  if (!p_recv_wr) return IB_INVALID_PARAMETER;
  Device& d = *qp->dev;
  WorkQueue& rq = qp->rq;
  ib_api_status_t status = IB_SUCCESS;
  std::uint64_t bytes = 0;
  std::uint32_t posted = 0;
  for (ib_recv_wr_t* wr = p_recv_wr; wr; wr = wr->p_next) {
    if (!recv_state_ok(qp->state))
      status = IB_INVALID_QP_STATE;
    else if (rq.outstanding() >= rq.depth)
      status = IB_INSUFFICIENT_RESOURCES;
    else if (wr->num_ds > rq.max_sge)
      status = IB_INVALID_MAX_SGE;
    else if (wr->num_ds && !wr->ds_array)
      status = IB_INVALID_PARAMETER;
    if (status != IB_SUCCESS) {
      if (pp_failed) *pp_failed = wr;
      break;
    }
    std::uint8_t* w = rq.slot(rq.head);
    std::memset(w, 0, hca::rwqe::kHeaderBytes);
    hca::put(w, hca::rwqe::num_ds, wr->num_ds);
    hca::put(w, hca::rwqe::wr_id, wr->wr_id);
    for (std::uint32_t i = 0; i < wr->num_ds; ++i)
      put_ds(w + hca::rwqe::kHeaderBytes + i * hca::ds::kSize, wr->ds_array[i]);
    bytes += hca::rwqe::kHeaderBytes + wr->num_ds * hca::ds::kSize;
    ++rq.head;
    ++posted;
  }
  if (!posted) return status;
  static const host::CostClass kPostRecv{"verbs_post_recv"};
  d.cpu(kPostRecv, bytes);
  if (d.find<Qp>(h_qp) == qp) d.doorbell(hca::reg::db_recv, qp->qpn, rq.head);
  return status;
}

ib_api_status_t post_bind(Qp& qp, const ib_bind_wr_t& b, std::uint32_t window_key, std::uint32_t new_key,
                          std::uint32_t mr_key, std::uint32_t access_flags) {
  using namespace hca;
  if (!send_state_ok(qp.state)) return IB_INVALID_QP_STATE;
  WorkQueue& sq = qp.sq;
  if (sq.outstanding() >= sq.depth) return IB_INSUFFICIENT_RESOURCES;
  std::uint8_t* w = sq.slot(sq.head);
  std::memset(w, 0, swqe::kHeaderBytes);
  const bool signaled = qp.sq_signaled || (b.send_opt & IB_SEND_OPT_SIGNALED);
  std::uint8_t flags = signaled ? swqe::kSignaled : 0;
  if (b.send_opt & IB_SEND_OPT_FENCE) flags |= swqe::kFence;
  put(w, swqe::opcode, static_cast<std::uint8_t>(Op::BindMw));
  put(w, swqe::flags, flags);
  put(w, swqe::wr_id, b.wr_id);
  put(w, swqe::bind_mw_key, window_key);
  put(w, swqe::bind_new_rkey, new_key);
  put(w, swqe::bind_mr_key, mr_key);
  put(w, swqe::bind_access, access_flags);
  put(w, swqe::bind_length, b.local_ds.length);
  put(w, swqe::remote_va, reinterpret_cast<std::uint64_t>(b.local_ds.vaddr));  // the window's start
  const std::uint32_t slot = sq.head & (sq.entries - 1);
  sq.signaled[slot] = signaled;
  sq.wr_ids[slot] = b.wr_id;
  ++sq.head;
  Device& d = *qp.dev;
  d.cpu("verbs_bind_mw", swqe::kHeaderBytes);
  if (d.find<Qp>(qp.handle_key) == &qp) d.doorbell(reg::db_send, qp.qpn, sq.head);
  return IB_SUCCESS;
}

}  // namespace nicsim::verbs
