// Queue pairs: creation (QPN, work queue rings), special QPs, query,
// destruction, and multicast attachment. State changes are qp_modify.cc.
#include <algorithm>
#include <cstring>

#include "verbs/driver/driver.h"

namespace nicsim::verbs {

namespace {

// Send WQE: the header plus one 16-byte data segment per SGE, a power of
// two of at least 128 bytes. Receive WQE: 16-byte header plus segments.
std::uint8_t sq_stride_log(std::uint32_t sge) {
  return static_cast<std::uint8_t>(
      log2_of(next_pow2(std::max<std::uint32_t>(128, hca::swqe::kHeaderBytes + 16 * sge))));
}
std::uint8_t rq_stride_log(std::uint32_t sge) {
  return static_cast<std::uint8_t>(log2_of(next_pow2(std::max<std::uint32_t>(16, hca::rwqe::kHeaderBytes + 16 * sge))));
}
constexpr unsigned kMaxStrideLog = 12;  // the HCA's limit (4 KiB WQEs)

bool alloc_queue(Device& d, WorkQueue& wq, std::uint32_t depth, std::uint32_t sge, std::uint8_t stride_log, bool send) {
  wq.depth = depth;
  wq.max_sge = sge;
  wq.stride_log = stride_log;
  wq.entries = next_pow2(std::max<std::uint32_t>(1, depth));
  wq.ring = d.alloc_dma(static_cast<std::size_t>(wq.entries) << stride_log);
  if (send) {
    wq.signaled.assign(wq.entries, 0);
    wq.wr_ids.assign(wq.entries, 0);
  }
  return wq.ring != nullptr;
}

void free_queues(Device& d, Qp& qp) {
  d.free_dma(qp.sq.ring);
  d.free_dma(qp.rq.ring);
  qp.sq.ring = qp.rq.ring = nullptr;
}

// Checks shared by create_qp and create_spl_qp; fills the new QP's queues.
ib_api_status_t check_create(Device& d, const ib_qp_create_t& a, Cq*& scq, Cq*& rcq) {
  scq = d.find<Cq>(a.h_sq_cq);
  rcq = d.find<Cq>(a.h_rq_cq);
  if (!scq || !rcq) return IB_INVALID_CQ_HANDLE;
  const Caps& c = d.caps();
  if (a.sq_depth > c.max_qp_wr || a.rq_depth > c.max_qp_wr) return IB_INVALID_MAX_WRS;
  if (a.sq_sge > c.max_sge || a.rq_sge > c.max_sge || sq_stride_log(a.sq_sge) > kMaxStrideLog ||
      rq_stride_log(a.rq_sge) > kMaxStrideLog)
    return IB_INVALID_MAX_SGE;
  return IB_SUCCESS;
}

Qp* build_qp(Device& d, Pd* pd, Cq* scq, Cq* rcq, const void* context, const ib_qp_create_t& a) {
  Qp* qp = d.make<Qp>();
  qp->pd = pd;
  qp->send_cq = scq;
  qp->recv_cq = rcq;
  qp->context = context;
  qp->type = a.qp_type;
  qp->sq_signaled = a.sq_signaled != 0;
  if (!alloc_queue(d, qp->sq, a.sq_depth, a.sq_sge, sq_stride_log(a.sq_sge), true) ||
      !alloc_queue(d, qp->rq, a.rq_depth, a.rq_sge, rq_stride_log(a.rq_sge), false)) {
    free_queues(d, *qp);
    d.kill(qp);
    return nullptr;
  }
  return qp;
}

void attach(Qp& qp) {
  ++qp.pd->users;
  ++qp.send_cq->qps;
  ++qp.recv_cq->qps;
  qp.dev->qp_by_num[qp.qpn] = &qp;
}

}  // namespace

void fill_qp_attr(const Qp& qp, ib_qp_attr_t* a) {
  std::memset(a, 0, sizeof *a);
  a->h_pd = qp.pd->handle();
  a->qp_type = qp.type;
  a->access_ctrl = qp.access;
  a->pkey_index = qp.pkey_index;
  a->sq_depth = qp.sq.depth;
  a->rq_depth = qp.rq.depth;
  a->sq_sge = qp.sq.max_sge;
  a->rq_sge = qp.rq.max_sge;
  a->init_depth = qp.init_depth;
  a->resp_res = qp.resp_res;
  a->h_sq_cq = qp.send_cq->handle();
  a->h_rq_cq = qp.recv_cq->handle();
  a->h_rdd = nullptr;
  a->sq_signaled = qp.sq_signaled ? TRUE : FALSE;
  a->state = ib_state(qp.state);
  a->num = cl_hton32(qp.wire_qpn);
  a->dest_num = cl_hton32(qp.dest_qpn);
  a->qkey = cl_hton32(qp.qkey);
  a->sq_psn = cl_hton32(qp.sq_psn);
  a->rq_psn = cl_hton32(qp.rq_psn);
  a->primary_port = qp.special_port ? qp.special_port : qp.port;
  a->alternate_port = 0;
  a->primary_av = qp.av;
  a->apm_state = IB_APM_MIGRATED;  // no alternate path: always "migrated"
}

ib_api_status_t create_qp(const ib_pd_handle_t h_pd, const void* qp_context, const ib_qp_create_t* p_create_attr,
                          ib_qp_attr_t* p_qp_attr, ib_qp_handle_t* ph_qp, ci_umv_buf_t*) {
  NICSIM_API_CALL_NAMED("ci_create_qp");
  Pd* pd = lookup<Pd>(h_pd);
  if (!pd) return IB_INVALID_PD_HANDLE;
  if (!p_create_attr || !p_qp_attr || !ph_qp) return IB_INVALID_PARAMETER;
  const ib_qp_create_t& a = *p_create_attr;
  hca::QpType hw;
  switch (raw_enum(a.qp_type)) {
    case IB_QPT_RELIABLE_CONN:
      hw = hca::QpType::Rc;
      break;
    case IB_QPT_UNRELIABLE_CONN:
      hw = hca::QpType::Uc;
      break;
    case IB_QPT_UNRELIABLE_DGRM:
      hw = hca::QpType::Ud;
      break;
    case IB_QPT_RELIABLE_DGRM:
      return IB_UNSUPPORTED;  // no RD on this HCA
    default:
      return IB_INVALID_SERVICE_TYPE;  // special QPs: create_spl_qp
  }
  Device& d = *pd->dev;
  Cq *scq, *rcq;
  if (ib_api_status_t s = check_create(d, a, scq, rcq); s != IB_SUCCESS) return s;
  std::uint32_t qpn;
  if (!d.alloc_qpn(qpn)) return IB_INSUFFICIENT_RESOURCES;
  d.cpu("verbs_create_qp");
  Qp* qp = build_qp(d, pd, scq, rcq, qp_context, a);
  if (!qp) {
    d.release_qpn(qpn);
    return IB_INSUFFICIENT_RESOURCES;
  }
  qp->hw_type = hw;
  qp->qpn = qp->wire_qpn = qpn;
  attach(*qp);
  fill_qp_attr(*qp, p_qp_attr);
  *ph_qp = qp->handle();
  return IB_SUCCESS;
}

ib_api_status_t create_spl_qp(const ib_pd_handle_t h_pd, const uint8_t port_num, const void* qp_context,
                              const ib_qp_create_t* p_create_attr, ib_qp_attr_t* p_qp_attr, ib_qp_handle_t* ph_qp) {
  NICSIM_API_CALL_NAMED("ci_create_spl_qp");
  Pd* pd = lookup<Pd>(h_pd);
  if (!pd) return IB_INVALID_PD;
  if (!p_create_attr || !p_qp_attr || !ph_qp) return IB_INVALID_PARAMETER;
  Device& d = *pd->dev;
  if (port_num < 1 || port_num > d.caps().num_ports) return IB_INVALID_PORT;
  const ib_qp_create_t& a = *p_create_attr;
  bool gsi;
  switch (raw_enum(a.qp_type)) {
    case IB_QPT_QP0:
      gsi = false;
      break;
    case IB_QPT_QP1:
      gsi = true;
      break;
    case IB_QPT_RAW_IPV6:
    case IB_QPT_RAW_ETHER:
      return IB_UNSUPPORTED;
    default:
      return IB_INVALID_PARAMETER;
  }
  Cq *scq, *rcq;
  if (ib_api_status_t s = check_create(d, a, scq, rcq); s != IB_SUCCESS) return s;
  // The HCA was told the special QPNs of each port at load (CONF_SPECIAL_QP).
  const std::uint32_t qpn = d.special_qpn(port_num, gsi);
  if (d.qp_by_num.count(qpn)) return IB_RESOURCE_BUSY;
  d.cpu("verbs_create_qp");
  Qp* qp = build_qp(d, pd, scq, rcq, qp_context, a);
  if (!qp) return IB_INSUFFICIENT_RESOURCES;
  qp->hw_type = gsi ? hca::QpType::Qp1 : hca::QpType::Qp0;
  qp->qpn = qpn;
  qp->wire_qpn = gsi ? 1 : 0;
  qp->special_port = port_num;
  qp->port = port_num;
  attach(*qp);
  fill_qp_attr(*qp, p_qp_attr);
  *ph_qp = qp->handle();
  return IB_SUCCESS;
}

ib_api_status_t query_qp(const ib_qp_handle_t h_qp, ib_qp_attr_t* const p_qp_attr, ci_umv_buf_t*) {
  NICSIM_API_CALL_NAMED("ci_query_qp");
  Qp* qp = lookup<Qp>(h_qp);
  if (!qp) return IB_INVALID_QP_HANDLE;
  if (!p_qp_attr) return IB_INVALID_PARAMETER;
  Device& d = *qp->dev;
  d.cpu("verbs_query_qp");
  if (qp->has_context) {
    // The HCA's view: it changes state (SQE, Error) and PSNs by itself.
    std::uint8_t q[hca::qpc::kSize];
    const CmdResult r = d.command(hca::Command::QUERY_QP, qp->qpn, nullptr, 0, q, sizeof q);
    if (!r.ok()) return status_of(r);
    qp->state = static_cast<hca::QpState>(hca::get(q, hca::qpc::to_state));
    qp->sq_psn = static_cast<std::uint32_t>(hca::get(q, hca::qpc::sq_psn));
    qp->rq_psn = static_cast<std::uint32_t>(hca::get(q, hca::qpc::rq_psn));
    fill_qp_attr(*qp, p_qp_attr);
    if (qp->state == hca::QpState::Sqd)
      p_qp_attr->state = hca::get(q, hca::qpc::sq_draining) ? IB_QPS_SQD_DRAINING : IB_QPS_SQD_DRAINED;
    return IB_SUCCESS;
  }
  fill_qp_attr(*qp, p_qp_attr);
  return IB_SUCCESS;
}

ib_api_status_t destroy_qp(const ib_qp_handle_t h_qp, ci_umv_buf_t*) {
  NICSIM_API_CALL_NAMED("ci_destroy_qp");
  Qp* qp = lookup<Qp>(h_qp);
  if (!qp) return IB_INVALID_QP_HANDLE;
  Device& d = *qp->dev;
  // Not from a CI callback (the seed): the host reports it with the call site.
  if (!d.host().may_block("ci_destroy_qp", std::source_location::current())) return IB_RESOURCE_BUSY;
  if (!(qp = lookup_charged<Qp>(h_qp, "verbs_destroy_qp"))) return IB_INVALID_QP_HANDLE;
  if (qp->mcasts) return IB_RESOURCE_BUSY;
  if (qp->has_context && qp->state != hca::QpState::Reset) {
    // To RESET: the HCA drops every WQE without a completion, so nothing
    // is completed for this QP after we return.
    std::uint8_t q[hca::qpc::kSize] = {};
    for (int attempt = 0; attempt < 2; ++attempt) {
      std::memset(q, 0, sizeof q);
      hca::put(q, hca::qpc::from_state, static_cast<std::uint8_t>(qp->state));
      hca::put(q, hca::qpc::to_state, static_cast<std::uint8_t>(hca::QpState::Reset));
      hca::put(q, hca::qpc::qp_type, static_cast<std::uint8_t>(qp->hw_type));
      const CmdResult r = d.command(hca::Command::MODIFY_QP, qp->qpn, q, sizeof q);
      if (r.ok()) break;
      if (!r.issued || r.status != hca::CmdStatus::BAD_QP_STATE || attempt) return status_of(r);
      refresh_state(*qp);  // the HCA moved it meanwhile; try from there
      if (qp->state == hca::QpState::Reset) break;
    }
  }
  free_queues(d, *qp);
  --qp->pd->users;
  --qp->send_cq->qps;
  --qp->recv_cq->qps;
  d.qp_by_num.erase(qp->qpn);
  if (!qp->special_port) d.release_qpn(qp->qpn);
  d.kill(qp);
  return IB_SUCCESS;
}

// ---- multicast -----------------------------------------------------------------

ib_api_status_t attach_mcast(const ib_qp_handle_t h_qp, const ib_gid_t* p_mcast_gid, const ib_net16_t mcast_lid,
                             ib_mcast_handle_t* ph_mcast, ci_umv_buf_t*) {
  NICSIM_API_CALL_NAMED("ci_attach_mcast");
  Qp* qp = lookup<Qp>(h_qp);
  if (!qp) return IB_INVALID_QP_HANDLE;
  if (!p_mcast_gid || !ph_mcast) return IB_INVALID_PARAMETER;
  if (qp->type != IB_QPT_UNRELIABLE_DGRM) return IB_INVALID_SERVICE_TYPE;
  if (p_mcast_gid->raw[0] != 0xff) return IB_INVALID_GID;
  const std::uint16_t mlid = cl_ntoh16(mcast_lid);
  if (mlid < IB_LID_MCAST_START_HO || mlid > IB_LID_MCAST_END_HO) return IB_INVALID_LID;
  // The HCA knows the QP only from its first transition to INIT on.
  if (!qp->has_context) return IB_INVALID_QP_STATE;
  Device& d = *qp->dev;
  d.cpu("verbs_mcast");
  std::uint8_t e[hca::mcg::kSize] = {};
  hca::put_bytes(e, hca::mcg::mgid, p_mcast_gid->raw);
  hca::put(e, hca::mcg::mlid, mlid);
  const CmdResult r = d.command(hca::Command::ATTACH_MCG, qp->qpn, e, sizeof e);
  if (r.issued && r.status == hca::CmdStatus::RESOURCE_BUSY) return IB_INVALID_PARAMETER;  // already attached
  if (!r.ok()) return status_of(r);
  Mcast* mc = d.make<Mcast>();
  mc->qp = qp;
  mc->gid = *p_mcast_gid;
  mc->mlid = mlid;
  ++qp->mcasts;
  *ph_mcast = mc->handle();
  return IB_SUCCESS;
}

ib_api_status_t detach_mcast(const ib_mcast_handle_t h_mcast, ci_umv_buf_t*) {
  NICSIM_API_CALL_NAMED("ci_detach_mcast");
  Mcast* mc = lookup_charged<Mcast>(h_mcast, "verbs_mcast");
  if (!mc) return IB_INVALID_MCAST_HANDLE;
  Device& d = *mc->dev;
  std::uint8_t e[hca::mcg::kSize] = {};
  hca::put_bytes(e, hca::mcg::mgid, mc->gid.raw);
  hca::put(e, hca::mcg::mlid, mc->mlid);
  const CmdResult r = d.command(hca::Command::DETACH_MCG, mc->qp->qpn, e, sizeof e);
  // BAD_RESOURCE: the HCA no longer has the attachment (the QP was reset);
  // the group membership is gone either way.
  if (!r.ok() && !(r.issued && r.status == hca::CmdStatus::BAD_RESOURCE)) return status_of(r);
  --mc->qp->mcasts;
  d.kill(mc);
  return IB_SUCCESS;
}

}  // namespace nicsim::verbs
