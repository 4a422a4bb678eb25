// ci_modify_qp: the QP state transition table with the attributes each
// transition requires and allows per QP type (IBA 1.1 §11.2.4.2, table 79;
// arranged as the Linux IB core's qp_state_table), then the mapping of the
// consumer's ib_qp_mod_t onto a MODIFY_QP mailbox. Checking, building and
// applying are separate steps.
#include <array>
#include <cstring>

#include "verbs/driver/driver.h"

namespace nicsim::verbs {

namespace {

using hca::QpState;

// QP attributes, as the table names them.
enum Attr : std::uint32_t {
  kPort = 1u << 0,
  kPkey = 1u << 1,
  kQkey = 1u << 2,
  kAccess = 1u << 3,
  kAv = 1u << 4,
  kMtu = 1u << 5,
  kDestQpn = 1u << 6,
  kRqPsn = 1u << 7,
  kRespRes = 1u << 8,  // responder resources (max_dest_rd_atomic)
  kMinRnr = 1u << 9,   // RNR NAK timer
  kSqPsn = 1u << 10,
  kTimeout = 1u << 11,  // local ACK timeout
  kRetry = 1u << 12,
  kRnrRetry = 1u << 13,
  kInitDepth = 1u << 14,  // initiator depth (max_rd_atomic)
  kAltPath = 1u << 15,
  kApm = 1u << 16,
  kCurState = 1u << 17,
  kSqdEvent = 1u << 18,
};

// Columns of the table.
enum TypeClass : std::uint8_t { kUd, kUc, kRc, kSmi, kGsi, kClasses };

struct Transition {
  QpState from, to;
  std::array<std::uint32_t, kClasses> req, opt;
  std::uint8_t invalid_for = 0;  // bit per TypeClass for which the transition does not exist
};

constexpr std::uint32_t kUdInit = kPkey | kPort | kQkey;
constexpr std::uint32_t kConnInit = kPkey | kPort | kAccess;
constexpr std::uint32_t kSpecialInit = kPkey | kQkey;
constexpr std::uint32_t kUdRts = kCurState | kQkey;
constexpr std::uint32_t kUcRts = kCurState | kAltPath | kAccess | kApm;
constexpr std::uint32_t kRcRts = kCurState | kAltPath | kAccess | kMinRnr | kApm;
constexpr std::array<std::uint32_t, kClasses> kNone{};

constexpr Transition kTable[] = {
    // from, to, required {UD, UC, RC, SMI, GSI}, optional {UD, UC, RC, SMI, GSI}
    {QpState::Reset, QpState::Reset, kNone, kNone},
    {QpState::Reset, QpState::Init, {kUdInit, kConnInit, kConnInit, kSpecialInit, kSpecialInit}, kNone},
    {QpState::Reset, QpState::Error, kNone, kNone},
    {QpState::Init, QpState::Reset, kNone, kNone},
    {QpState::Init, QpState::Error, kNone, kNone},
    {QpState::Init, QpState::Init, kNone, {kUdInit, kConnInit, kConnInit, kSpecialInit, kSpecialInit}},
    {QpState::Init,
     QpState::Rtr,
     {0, kAv | kMtu | kDestQpn | kRqPsn, kAv | kMtu | kDestQpn | kRqPsn | kRespRes | kMinRnr, 0, 0},
     {kPkey | kQkey, kAltPath | kAccess | kPkey, kAltPath | kAccess | kPkey, kPkey | kQkey, kPkey | kQkey}},
    {QpState::Rtr, QpState::Reset, kNone, kNone},
    {QpState::Rtr, QpState::Error, kNone, kNone},
    {QpState::Rtr,
     QpState::Rts,
     {kSqPsn, kSqPsn, kTimeout | kRetry | kRnrRetry | kSqPsn | kInitDepth, kSqPsn, kSqPsn},
     {kUdRts, kUcRts, kRcRts, kUdRts, kUdRts}},
    {QpState::Rts, QpState::Reset, kNone, kNone},
    {QpState::Rts, QpState::Error, kNone, kNone},
    {QpState::Rts, QpState::Rts, kNone, {kUdRts, kUcRts, kRcRts, kUdRts, kUdRts}},
    {QpState::Rts, QpState::Sqd, kNone, {kSqdEvent, kSqdEvent, kSqdEvent, kSqdEvent, kSqdEvent}},
    {QpState::Sqd, QpState::Reset, kNone, kNone},
    {QpState::Sqd, QpState::Error, kNone, kNone},
    {QpState::Sqd, QpState::Rts, kNone, {kUdRts, kUcRts, kRcRts, kUdRts, kUdRts}},
    {QpState::Sqd,
     QpState::Sqd,
     kNone,
     {kPkey | kQkey, kAv | kAltPath | kAccess | kPkey | kApm,
      kPort | kAv | kTimeout | kRetry | kRnrRetry | kInitDepth | kRespRes | kAltPath | kAccess | kPkey | kMinRnr | kApm,
      kPkey | kQkey, kPkey | kQkey}},
    {QpState::Sqe, QpState::Reset, kNone, kNone},
    {QpState::Sqe, QpState::Error, kNone, kNone},
    // A reliable connection never enters SQE (its errors go to Error).
    {QpState::Sqe, QpState::Rts, kNone, {kUdRts, kCurState | kAccess, 0, kUdRts, kUdRts}, 1u << kRc},
    {QpState::Error, QpState::Reset, kNone, kNone},
    {QpState::Error, QpState::Error, kNone, kNone},
};

// ib_qp_mod_t option flags and the attribute each carries.
constexpr struct {
  ib_qp_opts_t flag;
  std::uint32_t attr;
} kOptAttrs[] = {
    {IB_MOD_QP_PKEY, kPkey},
    {IB_MOD_QP_PRIMARY_AV, kAv},
    {IB_MOD_QP_RNR_NAK_TIMEOUT, kMinRnr},
    {IB_MOD_QP_RESP_RES, kRespRes},
    {IB_MOD_QP_INIT_DEPTH, kInitDepth},
    {IB_MOD_QP_PRIMARY_PORT, kPort},
    {IB_MOD_QP_ACCESS_CTRL, kAccess},
    {IB_MOD_QP_QKEY, kQkey},
    {IB_MOD_QP_CURRENT_STATE, kCurState},
    {IB_MOD_QP_RETRY_CNT, kRetry},
    {IB_MOD_QP_LOCAL_ACK_TIMEOUT, kTimeout},
    {IB_MOD_QP_RNR_RETRY_CNT, kRnrRetry},
    {IB_MOD_QP_ALTERNATE_AV, kAltPath},
    {IB_MOD_QP_APM_STATE, kApm},
};
// The HCA has no alternate path (so no migration) and cannot resize work
// queues (query_ca: apm_support and modify_wr_depth are FALSE).
constexpr ib_qp_opts_t kUnsupportedOpts =
    IB_MOD_QP_ALTERNATE_AV | IB_MOD_QP_APM_STATE | IB_MOD_QP_SQ_DEPTH | IB_MOD_QP_RQ_DEPTH;
constexpr ib_qp_opts_t kKnownOpts = 0xffffu;

// Attribute -> MODIFY_QP opt_mask bits.
constexpr struct {
  std::uint32_t attr;
  std::uint32_t mask;
} kMaskOf[] = {
    {kPort, hca::qp_mask::kPort},
    {kPkey, hca::qp_mask::kPkeyIndex},
    {kQkey, hca::qp_mask::kQkey},
    {kAccess, hca::qp_mask::kAccess},
    {kAv, hca::qp_mask::kAv},
    {kMtu, hca::qp_mask::kMtu},
    {kDestQpn, hca::qp_mask::kDestQpn},
    {kRqPsn, hca::qp_mask::kRqPsn},
    {kRespRes, hca::qp_mask::kRespRes},
    {kMinRnr, hca::qp_mask::kMinRnrTimer},
    {kSqPsn, hca::qp_mask::kSqPsn},
    {kTimeout, hca::qp_mask::kLocalAckTimeout},
    {kRetry, hca::qp_mask::kRetryCnt},
    {kRnrRetry, hca::qp_mask::kRnrRetry},
    {kInitDepth, hca::qp_mask::kInitDepth},
    {kSqdEvent, hca::qp_mask::kSqDrainEvent},
};

TypeClass class_of(const Qp& qp) {
  switch (qp.type) {
    case IB_QPT_UNRELIABLE_DGRM:
      return kUd;
    case IB_QPT_UNRELIABLE_CONN:
      return kUc;
    case IB_QPT_QP0:
      return kSmi;
    case IB_QPT_QP1:
      return kGsi;
    default:
      return kRc;
  }
}

const Transition* find_transition(QpState from, QpState to, TypeClass c) {
  for (const Transition& t : kTable)
    if (t.from == from && t.to == to) return (t.invalid_for >> c) & 1 ? nullptr : &t;
  return nullptr;
}

// The attribute values of one modify, collected from ib_qp_mod_t.
struct Values {
  std::uint8_t port = 0;
  std::uint16_t pkey_index = 0;
  std::uint32_t qkey = 0;
  ib_access_t access = 0;
  const ib_av_attr_t* av = nullptr;
  std::uint32_t dest_qpn = 0, rq_psn = 0, sq_psn = 0;
  std::uint8_t resp_res = 0, min_rnr = 0, timeout = 0, retry = 0, rnr_retry = 0, init_depth = 0;
  hca::QpState cur_state = hca::QpState::Reset;
  bool sqd_event = false;
};

// Reads the attribute values of a modify to `to` from the member of
// ib_qp_mod_t that carries that transition.
void collect(const ib_qp_mod_t& m, QpState to, Values& v) {
  switch (to) {
    case QpState::Init: {
      const auto& s = m.state.init;
      v.port = s.primary_port;
      v.qkey = cl_ntoh32(s.qkey);
      v.pkey_index = s.pkey_index;
      v.access = s.access_ctrl;
      break;
    }
    case QpState::Rtr: {
      const auto& s = m.state.rtr;
      v.rq_psn = cl_ntoh32(s.rq_psn);
      v.dest_qpn = cl_ntoh32(s.dest_qp);
      v.av = &s.primary_av;
      v.resp_res = s.resp_res;
      v.qkey = cl_ntoh32(s.qkey);
      v.pkey_index = s.pkey_index;
      v.access = s.access_ctrl;
      v.min_rnr = s.rnr_nak_timeout;
      break;
    }
    case QpState::Rts: {
      const auto& s = m.state.rts;
      v.sq_psn = cl_ntoh32(s.sq_psn);
      v.retry = s.retry_cnt;
      v.rnr_retry = s.rnr_retry_cnt;
      v.min_rnr = s.rnr_nak_timeout;
      v.timeout = s.local_ack_timeout;
      v.init_depth = s.init_depth;
      v.qkey = cl_ntoh32(s.qkey);
      v.access = s.access_ctrl;
      v.resp_res = s.resp_res;
      v.av = &s.primary_av;
      v.port = s.primary_port;
      v.pkey_index = s.pkey_index;
      break;
    }
    case QpState::Sqd:
      v.sqd_event = m.state.sqd.sqd_event != 0;
      break;
    default:
      break;
  }
}

// A required attribute with an unusable value counts as missing.
ib_api_status_t check(const Device& d, std::uint32_t attrs, const Values& v) {
  const Caps& c = d.caps();
  if ((attrs & kPort) && (v.port < 1 || v.port > c.num_ports)) return IB_INVALID_PARAMETER;
  if ((attrs & kPkey) && v.pkey_index >= c.partition_cap) return IB_INVALID_PKEY;
  if ((attrs & kAccess) &&
      (v.access & ~(IB_AC_RDMA_READ | IB_AC_RDMA_WRITE | IB_AC_ATOMIC | IB_AC_LOCAL_WRITE | IB_AC_MW_BIND)))
    return IB_INVALID_PARAMETER;
  if (attrs & (kAv | kMtu)) {
    if (!v.av) return IB_INVALID_PARAMETER;
    const std::uint16_t dlid = cl_ntoh16(v.av->dlid);
    if ((attrs & kAv) && (dlid == 0 || dlid > IB_LID_UCAST_END_HO || v.av->sl > 15)) return IB_INVALID_PARAMETER;
    if ((attrs & kMtu) && (v.av->conn.path_mtu < IB_MTU_256 || v.av->conn.path_mtu > c.max_mtu))
      return IB_INVALID_PARAMETER;
  }
  if ((attrs & kDestQpn) && (v.dest_qpn == 0 || v.dest_qpn > hca::kMaxQpn)) return IB_INVALID_PARAMETER;
  if ((attrs & kRqPsn) && v.rq_psn > 0xffffff) return IB_INVALID_PARAMETER;
  if ((attrs & kSqPsn) && v.sq_psn > 0xffffff) return IB_INVALID_PARAMETER;
  if ((attrs & kRespRes) && v.resp_res > c.max_resp_rd_atom) return IB_INVALID_PARAMETER;
  if ((attrs & kInitDepth) && v.init_depth > c.max_init_rd_atom) return IB_INVALID_PARAMETER;
  if ((attrs & kMinRnr) && v.min_rnr > 31) return IB_INVALID_PARAMETER;
  if ((attrs & kTimeout) && v.timeout > 31) return IB_INVALID_PARAMETER;
  if ((attrs & kRetry) && v.retry > 7) return IB_INVALID_PARAMETER;
  if ((attrs & kRnrRetry) && v.rnr_retry > 7) return IB_INVALID_PARAMETER;
  return IB_SUCCESS;
}

void put_av(std::uint8_t* q, const ib_av_attr_t& av) {
  using namespace hca;
  put(q, qpc::av_dlid, cl_ntoh16(av.dlid));
  put(q, qpc::av_sl, av.sl);
  put(q, qpc::av_path_bits, av.path_bits);
  put(q, qpc::av_static_rate, av.static_rate);
  put(q, qpc::av_grh, av.grh_valid ? 1 : 0);
  if (av.grh_valid) {
    const std::uint32_t vcf = cl_ntoh32(av.grh.ver_class_flow);
    put(q, qpc::av_hop_limit, av.grh.hop_limit);
    put(q, qpc::av_sgid_index, 0);  // one GID per port
    put(q, qpc::av_tclass, (vcf >> 20) & 0xff);
    put(q, qpc::av_flow_label, vcf & 0xfffff);
    put_bytes(q, qpc::av_dgid, av.grh.dest_gid.raw);
  }
}

// The MODIFY_QP mailbox for `attrs` with values `v`.
void build(const Qp& qp, QpState from, QpState to, std::uint32_t attrs, const Values& v, std::uint8_t* q) {
  using namespace hca;
  std::uint32_t mask = 0;
  for (const auto& m : kMaskOf)
    if (attrs & m.attr) mask |= m.mask;
  if ((attrs & kSqdEvent) && !v.sqd_event) mask &= ~qp_mask::kSqDrainEvent;
  put(q, qpc::from_state, static_cast<std::uint8_t>(from));
  put(q, qpc::to_state, static_cast<std::uint8_t>(to));
  put(q, qpc::qp_type, static_cast<std::uint8_t>(qp.hw_type));
  if (from == QpState::Reset && to == QpState::Init) {
    // The HCA learns the queues and CQs with the first transition.
    mask |= qp_mask::kQueues;
    put(q, qpc::pd, qp.pd->pdn);
    put(q, qpc::send_cqn, qp.send_cq->cqn);
    put(q, qpc::recv_cqn, qp.recv_cq->cqn);
    put(q, qpc::sq_base, reinterpret_cast<std::uint64_t>(qp.sq.ring));
    put(q, qpc::sq_entries, qp.sq.entries);
    put(q, qpc::sq_stride_log, qp.sq.stride_log);
    put(q, qpc::rq_base, reinterpret_cast<std::uint64_t>(qp.rq.ring));
    put(q, qpc::rq_entries, qp.rq.entries);
    put(q, qpc::rq_stride_log, qp.rq.stride_log);
    put(q, qpc::sig_all, qp.sq_signaled ? 1 : 0);
    if (qp.special_port) {
      // A special QP belongs to its port; MADs fit a 256-byte MTU.
      mask |= qp_mask::kPort | qp_mask::kMtu;
      put(q, qpc::port, qp.special_port);
      put(q, qpc::mtu, IB_MTU_256);
    } else if (qp.type == IB_QPT_UNRELIABLE_DGRM) {
      mask |= qp_mask::kMtu;  // a UD message is at most the port's MTU
      put(q, qpc::mtu, qp.dev->caps().max_mtu);
    }
  }
  put(q, qpc::opt_mask, mask);
  if (attrs & kPort) put(q, qpc::port, v.port);
  if (attrs & kPkey) put(q, qpc::pkey_index, v.pkey_index);
  if (attrs & kQkey) put(q, qpc::qkey, v.qkey);
  if (attrs & kAccess) put(q, qpc::access, mpt_access(v.access));
  if (attrs & kAv) put_av(q, *v.av);
  if (attrs & kMtu) put(q, qpc::mtu, v.av->conn.path_mtu);
  if (attrs & kDestQpn) put(q, qpc::dest_qpn, v.dest_qpn);
  if (attrs & kRqPsn) put(q, qpc::rq_psn, v.rq_psn);
  if (attrs & kSqPsn) put(q, qpc::sq_psn, v.sq_psn);
  if (attrs & kRespRes) put(q, qpc::resp_res, v.resp_res);
  if (attrs & kMinRnr) put(q, qpc::min_rnr_timer, v.min_rnr);
  if (attrs & kTimeout) put(q, qpc::local_ack_timeout, v.timeout);
  if (attrs & kRetry) put(q, qpc::retry_cnt, v.retry);
  if (attrs & kRnrRetry) put(q, qpc::rnr_retry, v.rnr_retry);
  if (attrs & kInitDepth) put(q, qpc::init_depth, v.init_depth);
}

// Keeps the driver's copy of the attributes the HCA accepted.
void apply(Qp& qp, QpState to, std::uint32_t attrs, const Values& v) {
  if (attrs & kPort) qp.port = v.port;
  if (attrs & kPkey) qp.pkey_index = v.pkey_index;
  if (attrs & kQkey) qp.qkey = v.qkey;
  if (attrs & kAccess) qp.access = v.access;
  if (attrs & kAv) qp.av = *v.av;
  if (attrs & kMtu) qp.av.conn.path_mtu = v.av->conn.path_mtu;
  if (attrs & kDestQpn) qp.dest_qpn = v.dest_qpn;
  if (attrs & kRqPsn) qp.rq_psn = v.rq_psn;
  if (attrs & kSqPsn) qp.sq_psn = v.sq_psn;
  if (attrs & kRespRes) qp.resp_res = v.resp_res;
  if (attrs & kInitDepth) qp.init_depth = v.init_depth;
  qp.has_context = true;  // every MODIFY_QP leaves a context in the HCA
  if (to == QpState::Reset) {
    // The HCA discards both queues and restarts their counts.
    qp.sq.head = qp.sq.tail = 0;
    qp.rq.head = qp.rq.tail = 0;
  }
  qp.state = to;
}

}  // namespace

void refresh_state(Qp& qp) {
  if (!qp.has_context) return;
  std::uint8_t q[hca::qpc::kSize];
  const CmdResult r = qp.dev->command(hca::Command::QUERY_QP, qp.qpn, nullptr, 0, q, sizeof q);
  if (r.ok()) qp.state = static_cast<QpState>(hca::get(q, hca::qpc::to_state));
}

ib_api_status_t modify_qp(const ib_qp_handle_t h_qp, const ib_qp_mod_t* p_modify_attr, ib_qp_attr_t* p_qp_attr,
                          ci_umv_buf_t*) {
  NICSIM_API_CALL_NAMED("ci_modify_qp");
  Qp* qp = lookup<Qp>(h_qp);
  if (!qp) return IB_INVALID_QP_HANDLE;
  // p_qp_attr is a required output (only p_umv_buf is OPTIONAL in the
  // seed's synopsis); its seed list has IB_INVALID_PARAMETER for a bad
  // argument. Nothing is changed.
  if (!p_modify_attr || !p_qp_attr) return IB_INVALID_PARAMETER;
  const ib_qp_mod_t& m = *p_modify_attr;
  bool known = false;
  const QpState to = hw_state(m.req_state, known);
  if (!known) return IB_INVALID_PARAMETER;
  // 1. The option flags: known, supported, and allowed by the table.
  const ib_qp_opts_t opts = to == QpState::Init  ? m.state.init.opts
                            : to == QpState::Rtr ? m.state.rtr.opts
                            : to == QpState::Rts ? m.state.rts.opts
                                                 : 0;
  if (opts & ~kKnownOpts) return IB_INVALID_PARAMETER;
  if (opts & kUnsupportedOpts) return IB_UNSUPPORTED;
  std::uint32_t flagged = 0;
  for (const auto& o : kOptAttrs)
    if (opts & o.flag) flagged |= o.attr;
  QpState from = qp->state;
  // Only the RTS block carries a current state; elsewhere the flag fails
  // the table check below.
  if ((flagged & kCurState) && to == QpState::Rts) {
    bool ok = false;
    from = hw_state(m.state.rts.current_state, ok);
    if (!ok || (from != QpState::Rtr && from != QpState::Rts && from != QpState::Sqd && from != QpState::Sqe))
      return IB_INVALID_PARAMETER;
  }
  // 2. The transition from the current state.
  const TypeClass c = class_of(*qp);
  const Transition* t = find_transition(from, to, c);
  if (!t) return IB_INVALID_QP_STATE;
  if (flagged & ~(t->req[c] | t->opt[c])) return IB_INVALID_PARAMETER;
  std::uint32_t attrs = (t->req[c] | flagged) & ~kCurState;
  if (to == QpState::Sqd && from == QpState::Rts) attrs |= kSqdEvent;
  // 3. The values: required ones must be usable.
  Values v;
  collect(m, to, v);
  if (ib_api_status_t s = check(*qp->dev, attrs, v); s != IB_SUCCESS) return s;
  // 4. The hardware transition.
  Device& d = *qp->dev;
  d.cpu("verbs_modify_qp");
  std::uint8_t q[hca::qpc::kSize] = {};
  build(*qp, from, to, attrs, v, q);
  const CmdResult r = d.command(hca::Command::MODIFY_QP, qp->qpn, q, sizeof q);
  if (r.issued && r.status == hca::CmdStatus::BAD_QP_STATE) {
    refresh_state(*qp);
    return IB_INVALID_QP_STATE;
  }
  if (!r.ok()) return status_of(r);
  // 5. The driver's copy.
  qp->state = from;
  apply(*qp, to, attrs, v);
  fill_qp_attr(*qp, p_qp_attr);
  return IB_SUCCESS;
}

}  // namespace nicsim::verbs
