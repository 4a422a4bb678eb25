// The kernel verbs over ci_interface_t: completion queue polling and
// arming, queue pairs (create, the 2.6.13 modify with an attribute mask,
// query, destroy), the DMA memory region, and posting work requests.
#include <cstring>
#include <type_traits>
#include <vector>

#include "cm/kverbs/kverbs_impl.h"

namespace nicsim::kverbs {
namespace {

kv::ib_wc_status status_of(ib_wc_status_t s) {
  switch (s) {
    case IB_WCS_SUCCESS:
      return kv::IB_WC_SUCCESS;
    case IB_WCS_LOCAL_LEN_ERR:
      return kv::IB_WC_LOC_LEN_ERR;
    case IB_WCS_LOCAL_OP_ERR:
      return kv::IB_WC_LOC_QP_OP_ERR;
    case IB_WCS_LOCAL_PROTECTION_ERR:
      return kv::IB_WC_LOC_PROT_ERR;
    case IB_WCS_WR_FLUSHED_ERR:
      return kv::IB_WC_WR_FLUSH_ERR;
    case IB_WCS_MEM_WINDOW_BIND_ERR:
      return kv::IB_WC_MW_BIND_ERR;
    case IB_WCS_REM_ACCESS_ERR:
      return kv::IB_WC_REM_ACCESS_ERR;
    case IB_WCS_REM_OP_ERR:
      return kv::IB_WC_REM_OP_ERR;
    case IB_WCS_RNR_RETRY_ERR:
      return kv::IB_WC_RNR_RETRY_EXC_ERR;
    case IB_WCS_TIMEOUT_RETRY_ERR:
      return kv::IB_WC_RETRY_EXC_ERR;
    case IB_WCS_REM_INVALID_REQ_ERR:
      return kv::IB_WC_REM_INV_REQ_ERR;
    default:
      return kv::IB_WC_GENERAL_ERR;
  }
}

kv::ib_wc_opcode opcode_of(ib_wc_type_t t) {
  switch (t) {
    case ::IB_WC_RDMA_WRITE:
      return kv::IB_WC_RDMA_WRITE;
    case ::IB_WC_RECV:
      return kv::IB_WC_RECV;
    case ::IB_WC_RDMA_READ:
      return kv::IB_WC_RDMA_READ;
    case ::IB_WC_MW_BIND:
      return kv::IB_WC_BIND_MW;
    case ::IB_WC_FETCH_ADD:
      return kv::IB_WC_FETCH_ADD;
    case ::IB_WC_COMPARE_SWAP:
      return kv::IB_WC_COMP_SWAP;
    case ::IB_WC_RECV_RDMA_WRITE:
      return kv::IB_WC_RECV_RDMA_WITH_IMM;
    default:
      return kv::IB_WC_SEND;
  }
}

void convert_wc(const ib_wc_t& w, kv::ib_wc& k, std::uint32_t qp_num) {
  std::memset(&k, 0, sizeof k);
  k.wr_id = w.wr_id;
  k.status = status_of(w.status);
  k.opcode = opcode_of(w.wc_type);
  k.vendor_err = static_cast<std::uint32_t>(w.vendor_specific);
  k.byte_len = w.length;
  k.qp_num = qp_num;
  if (w.wc_type == ::IB_WC_RECV || w.wc_type == ::IB_WC_RECV_RDMA_WRITE) {
    const auto& u = w.recv.ud;
    if (u.recv_opt & IB_RECV_OPT_IMMEDIATE) k.wc_flags |= kv::IB_WC_WITH_IMM;
    if (u.recv_opt & IB_RECV_OPT_GRH_VALID) k.wc_flags |= kv::IB_WC_GRH;
    k.imm_data = u.immediate_data;
    k.src_qp = cl_ntoh32(u.remote_qp);
    k.slid = cl_ntoh16(u.remote_lid);
    k.pkey_index = u.pkey_index;
    k.sl = u.remote_sl;
    k.dlid_path_bits = u.path_bits;
  }
}

ib_access_t access_of(int flags) {
  ib_access_t a = 0;
  if (flags & kv::IB_ACCESS_LOCAL_WRITE) a |= IB_AC_LOCAL_WRITE;
  if (flags & kv::IB_ACCESS_REMOTE_WRITE) a |= IB_AC_RDMA_WRITE;
  if (flags & kv::IB_ACCESS_REMOTE_READ) a |= IB_AC_RDMA_READ;
  if (flags & kv::IB_ACCESS_REMOTE_ATOMIC) a |= IB_AC_ATOMIC;
  if (flags & kv::IB_ACCESS_MW_BIND) a |= IB_AC_MW_BIND;
  return a;
}

void av_of(const kv::ib_ah_attr& ah, const kv::ib_qp_attr& a, int mask, ib_av_attr_t& av) {
  av.port_num = ah.port_num;
  av.sl = ah.sl;
  av.dlid = cl_hton16(ah.dlid);
  av.path_bits = ah.src_path_bits;
  av.static_rate = ah.static_rate;
  av.conn.path_mtu = static_cast<std::uint8_t>(bits_of(a.path_mtu));
  av.conn.local_ack_timeout = a.timeout;
  av.conn.seq_err_retry_cnt = a.retry_cnt;
  av.conn.rnr_retry_cnt = a.rnr_retry;
  (void)mask;
}

// The attributes of one 2.6.13 modify as the ci_interface_t state block of
// its target state; -EINVAL for a state the table does not reach.
int build_mod(const KQp& qp, const kv::ib_qp_attr& a, int mask, ib_qp_mod_t& m) {
  std::memset(&m, 0, sizeof m);
  const bool ud = qp.pub.qp_type == kv::IB_QPT_UD || qp.pub.qp_type == kv::IB_QPT_GSI;
  switch (bits_of(a.qp_state)) {
    case kv::IB_QPS_RESET:
      m.req_state = kCiReset;
      return 0;
    case kv::IB_QPS_ERR:
      m.req_state = IB_QPS_ERROR;
      return 0;
    case kv::IB_QPS_INIT: {
      m.req_state = kCiInit;
      auto& s = m.state.init;
      s.primary_port = (mask & kv::IB_QP_PORT) ? a.port_num : qp.init.port_num;
      s.pkey_index = a.pkey_index;
      s.qkey = cl_hton32(a.qkey);
      s.access_ctrl = access_of(a.qp_access_flags);
      if (!ud && !(mask & kv::IB_QP_ACCESS_FLAGS)) return -EINVAL;
      return 0;
    }
    case kv::IB_QPS_RTR: {
      m.req_state = kCiRtr;
      auto& s = m.state.rtr;
      s.rq_psn = cl_hton32(a.rq_psn);
      s.dest_qp = cl_hton32(a.dest_qp_num);
      s.resp_res = a.max_dest_rd_atomic;
      s.rnr_nak_timeout = a.min_rnr_timer;
      const int mtu = bits_of(a.path_mtu);
      if ((mask & kv::IB_QP_PATH_MTU) && (mtu < kv::IB_MTU_256 || mtu > kv::IB_MTU_4096)) return -EINVAL;
      if (mask & kv::IB_QP_AV) av_of(a.ah_attr, a, mask, s.primary_av);
      if (mask & kv::IB_QP_QKEY) s.opts |= IB_MOD_QP_QKEY, s.qkey = cl_hton32(a.qkey);
      if (mask & kv::IB_QP_ACCESS_FLAGS) s.opts |= IB_MOD_QP_ACCESS_CTRL, s.access_ctrl = access_of(a.qp_access_flags);
      if (mask & kv::IB_QP_PKEY_INDEX) s.opts |= IB_MOD_QP_PKEY, s.pkey_index = a.pkey_index;
      const int need = kv::IB_QP_AV | kv::IB_QP_PATH_MTU | kv::IB_QP_DEST_QPN | kv::IB_QP_RQ_PSN;
      if (!ud && (mask & need) != need) return -EINVAL;
      return 0;
    }
    case kv::IB_QPS_RTS: {
      m.req_state = kCiRts;
      auto& s = m.state.rts;
      s.sq_psn = cl_hton32(a.sq_psn);
      s.retry_cnt = a.retry_cnt;
      s.rnr_retry_cnt = a.rnr_retry;
      s.local_ack_timeout = a.timeout;
      s.init_depth = a.max_rd_atomic;
      if (mask & kv::IB_QP_MIN_RNR_TIMER) s.opts |= IB_MOD_QP_RNR_NAK_TIMEOUT, s.rnr_nak_timeout = a.min_rnr_timer;
      if (mask & kv::IB_QP_QKEY) s.opts |= IB_MOD_QP_QKEY, s.qkey = cl_hton32(a.qkey);
      if (mask & kv::IB_QP_ACCESS_FLAGS) s.opts |= IB_MOD_QP_ACCESS_CTRL, s.access_ctrl = access_of(a.qp_access_flags);
      if (!(mask & kv::IB_QP_SQ_PSN)) return -EINVAL;
      return 0;
    }
    default:
      return -EINVAL;
  }
}

KQp* live_qp(KDevice* d, kv::ib_qp* qp) {
  auto* k = reinterpret_cast<KQp*>(qp);
  return d && d->qps.count(k) ? k : nullptr;
}

// The ci data segments of a kernel SGE list (DMA MR keys translated).
bool sges_of(KDevice& d, const kv::ib_sge* sg, int n, std::vector<ib_local_ds_t>& out) {
  out.resize(static_cast<std::size_t>(n > 0 ? n : 0));
  if (n < 0 || (n && !sg)) return false;
  for (int i = 0; i < n; ++i) {
    ib_local_ds_t& ds = out[static_cast<std::size_t>(i)];
    ds.vaddr = reinterpret_cast<void*>(sg[i].addr);
    ds.length = sg[i].length;
    ds.lkey = sg[i].lkey;
    if (KMr* mr = dma_mr_of(d, sg[i].lkey)) {
      ds.lkey = dma_lkey(d, *mr, sg[i].addr, sg[i].length);
      if (!ds.lkey) return false;
    }
  }
  return true;
}

ib_wr_type_t wr_type_of(kv::ib_wr_opcode op, bool& imm) {
  imm = op == kv::IB_WR_SEND_WITH_IMM || op == kv::IB_WR_RDMA_WRITE_WITH_IMM;
  switch (op) {
    case kv::IB_WR_RDMA_WRITE:
    case kv::IB_WR_RDMA_WRITE_WITH_IMM:
      return WR_RDMA_WRITE;
    case kv::IB_WR_RDMA_READ:
      return WR_RDMA_READ;
    case kv::IB_WR_ATOMIC_CMP_AND_SWP:
      return WR_COMPARE_SWAP;
    case kv::IB_WR_ATOMIC_FETCH_AND_ADD:
      return WR_FETCH_ADD;
    default:
      return WR_SEND;
  }
}

int convert_send(KDevice& d, const kv::ib_send_wr& w, ib_send_wr_t& c, std::vector<ib_local_ds_t>& ds) {
  const int op = bits_of(w.opcode);
  if (w.num_sge < 0 || (w.num_sge && !w.sg_list) || op < kv::IB_WR_RDMA_WRITE || op > kv::IB_WR_ATOMIC_FETCH_AND_ADD)
    return -EINVAL;  // an opcode outside the enum was sent as a send
  if (!sges_of(d, w.sg_list, w.num_sge, ds)) return -ENOMEM;
  std::memset(&c, 0, sizeof c);
  bool imm = false;
  c.wr_id = w.wr_id;
  c.wr_type = wr_type_of(w.opcode, imm);
  c.num_ds = static_cast<std::uint32_t>(ds.size());
  c.ds_array = ds.empty() ? nullptr : ds.data();
  c.immediate_data = w.imm_data;
  if (imm) c.send_opt |= IB_SEND_OPT_IMMEDIATE;
  if (w.send_flags & kv::IB_SEND_FENCE) c.send_opt |= IB_SEND_OPT_FENCE;
  if (w.send_flags & kv::IB_SEND_SIGNALED) c.send_opt |= IB_SEND_OPT_SIGNALED;
  if (w.send_flags & kv::IB_SEND_SOLICITED) c.send_opt |= IB_SEND_OPT_SOLICITED;
  if (w.send_flags & kv::IB_SEND_INLINE) c.send_opt |= IB_SEND_OPT_INLINE;
  return 0;
}

}  // namespace

bool qp_live_impl(kv::ib_qp* qp) { return live_qp(current(), qp) != nullptr; }

int qp_state_impl(kv::ib_qp* qp) {
  KDevice* d = current();
  KQp* k = live_qp(d, qp);
  if (!k) return -1;
  ib_qp_attr_t a{};
  if (d->ci->query_qp(k->h, &a, nullptr) != IB_SUCCESS) return -1;
  if (a.state & IB_QPS_ERROR) return kv::IB_QPS_ERR;
  if (a.state & IB_QPS_SQERR) return kv::IB_QPS_SQE;
  if (a.state & kCiSqd) return kv::IB_QPS_SQD;
  if (a.state & kCiRts) return kv::IB_QPS_RTS;
  if (a.state & kCiRtr) return kv::IB_QPS_RTR;
  if (a.state & kCiInit) return kv::IB_QPS_INIT;
  return kv::IB_QPS_RESET;
}

}  // namespace nicsim::kverbs

extern "C" {
int nicsim_kverbs_qp_live(kv::ib_qp* qp) { return nicsim::kverbs::qp_live_impl(qp); }
int nicsim_kverbs_qp_state(kv::ib_qp* qp) { return nicsim::kverbs::qp_state_impl(qp); }
}

namespace kv {

using namespace nicsim::kverbs;

int ib_destroy_cq(ib_cq* cq) {
  NICSIM_API_CALL();
  KDevice* d = current();
  auto* k = reinterpret_cast<KCq*>(cq);
  if (!d || !d->cqs.count(k)) return -EINVAL;
  if (atomic_read(&cq->usecnt) || in_interrupt()) return -EBUSY;
  if (int rc = errno_of(d->ci->destroy_cq(k->h, nullptr))) return rc;
  d->ci->deallocate_pd(k->own_pd, nullptr);
  d->cqs.erase(k);
  delete k;
  return 0;
}

int ib_req_notify_cq(ib_cq* cq, ib_cq_notify cq_notify) {
  NICSIM_API_CALL();
  KDevice* d = current();
  auto* k = reinterpret_cast<KCq*>(cq);
  if (!d || !d->cqs.count(k) || (bits_of(cq_notify) != IB_CQ_SOLICITED && bits_of(cq_notify) != IB_CQ_NEXT_COMP))
    return -EINVAL;
  return errno_of(d->ci->enable_cq_notify(k->h, cq_notify == IB_CQ_SOLICITED ? TRUE : FALSE));
}

int ib_poll_cq(ib_cq* cq, int num_entries, ib_wc* wc) {
  NICSIM_API_CALL();
  KDevice* d = current();
  auto* k = reinterpret_cast<KCq*>(cq);
  if (!d || !d->cqs.count(k) || num_entries < 0 || (num_entries && !wc)) return -EINVAL;
  std::uint32_t sole_qpn = 0;
  for (KQp* q : d->qps)
    if (q->pub.send_cq == cq || q->pub.recv_cq == cq) sole_qpn = sole_qpn ? 0 : q->pub.qp_num;
  int n = 0;
  while (n < num_entries) {
    ib_wc_t w[8];
    const int want = std::min(num_entries - n, 8);
    for (int i = 0; i < want; ++i) w[i].p_next = i + 1 < want ? &w[i + 1] : nullptr;
    ib_wc_t* free_list = w;
    ib_wc_t* done = nullptr;
    const ib_api_status_t s = d->ci->poll_cq(k->h, &free_list, &done);
    if (s == IB_NOT_FOUND || !done) break;
    if (s != IB_SUCCESS) return n ? n : errno_of(s);
    for (ib_wc_t* p = done; p; p = p->p_next) convert_wc(*p, wc[n++], sole_qpn);
  }
  return n;
}

ib_qp* ib_create_qp(ib_pd* pd, ib_qp_init_attr* ia) {
  NICSIM_API_CALL();
  KDevice* d = current();
  auto* kpd = reinterpret_cast<KPd*>(pd);
  if (!d || !d->pds.count(kpd) || !ia) return nullptr;
  auto* scq = reinterpret_cast<KCq*>(ia->send_cq);
  auto* rcq = reinterpret_cast<KCq*>(ia->recv_cq);
  if (!d->cqs.count(scq) || !d->cqs.count(rcq)) return nullptr;
  ib_qp_create_t c{};
  switch (bits_of(ia->qp_type)) {
    case IB_QPT_RC:
      c.qp_type = IB_QPT_RELIABLE_CONN;
      break;
    case IB_QPT_UC:
      c.qp_type = IB_QPT_UNRELIABLE_CONN;
      break;
    case IB_QPT_UD:
      c.qp_type = IB_QPT_UNRELIABLE_DGRM;
      break;
    case IB_QPT_GSI:
      c.qp_type = IB_QPT_QP1;
      break;
    default:
      return nullptr;
  }
  c.sq_depth = ia->cap.max_send_wr;
  c.rq_depth = ia->cap.max_recv_wr;
  c.sq_sge = ia->cap.max_send_sge;
  c.rq_sge = ia->cap.max_recv_sge;
  c.h_sq_cq = scq->h;
  c.h_rq_cq = rcq->h;
  c.sq_signaled = ia->sq_sig_type == IB_SIGNAL_ALL_WR ? TRUE : FALSE;
  auto* qp = new KQp;
  ib_qp_attr_t a{};
  const ib_api_status_t s = ia->qp_type == IB_QPT_GSI ? d->ci->create_spl_qp(kpd->h, ia->port_num, qp, &c, &a, &qp->h)
                                                      : d->ci->create_qp(kpd->h, qp, &c, &a, &qp->h, nullptr);
  if (s != IB_SUCCESS) {
    delete qp;
    return nullptr;
  }
  qp->init = *ia;
  qp->pub.device = pd->device;
  qp->pub.pd = pd;
  qp->pub.send_cq = ia->send_cq;
  qp->pub.recv_cq = ia->recv_cq;
  qp->pub.event_handler = ia->event_handler;
  qp->pub.qp_context = ia->qp_context;
  qp->pub.qp_num = cl_ntoh32(a.num);
  qp->pub.qp_type = ia->qp_type;
  use(pd->usecnt);
  use(ia->send_cq->usecnt);
  use(ia->recv_cq->usecnt);
  d->qps.insert(qp);
  return &qp->pub;
}

int ib_modify_qp(ib_qp* qp, ib_qp_attr* qp_attr, int qp_attr_mask) {
  NICSIM_API_CALL();
  KDevice* d = current();
  KQp* k = live_qp(d, qp);
  if (!k || !qp_attr || !(qp_attr_mask & IB_QP_STATE) || in_interrupt()) return -EINVAL;
  ib_qp_mod_t m;
  if (int rc = build_mod(*k, *qp_attr, qp_attr_mask, m)) return rc;
  ib_qp_attr_t out{};
  return errno_of(d->ci->modify_qp(k->h, &m, &out, nullptr));
}

int ib_query_qp(ib_qp* qp, ib_qp_attr* qp_attr, int qp_attr_mask, ib_qp_init_attr* qp_init_attr) {
  NICSIM_API_CALL();
  KDevice* d = current();
  KQp* k = live_qp(d, qp);
  if (!k || !qp_attr) return -EINVAL;
  ib_qp_attr_t a{};
  if (int rc = errno_of(d->ci->query_qp(k->h, &a, nullptr))) return rc;
  std::memset(qp_attr, 0, sizeof *qp_attr);
  qp_attr->qp_state = static_cast<ib_qp_state>(qp_state_impl(qp));
  qp_attr->cur_qp_state = qp_attr->qp_state;
  qp_attr->qkey = cl_ntoh32(a.qkey);
  qp_attr->rq_psn = cl_ntoh32(a.rq_psn);
  qp_attr->sq_psn = cl_ntoh32(a.sq_psn);
  qp_attr->dest_qp_num = cl_ntoh32(a.dest_num);
  qp_attr->pkey_index = a.pkey_index;
  qp_attr->port_num = a.primary_port;
  qp_attr->max_rd_atomic = a.init_depth;
  qp_attr->max_dest_rd_atomic = a.resp_res;
  qp_attr->cap.max_send_wr = a.sq_depth;
  qp_attr->cap.max_recv_wr = a.rq_depth;
  qp_attr->cap.max_send_sge = a.sq_sge;
  qp_attr->cap.max_recv_sge = a.rq_sge;
  qp_attr->ah_attr.dlid = cl_ntoh16(a.primary_av.dlid);
  qp_attr->ah_attr.sl = a.primary_av.sl;
  qp_attr->ah_attr.port_num = a.primary_av.port_num;
  qp_attr->path_mtu = static_cast<ib_mtu>(a.primary_av.conn.path_mtu);
  qp_attr->timeout = a.primary_av.conn.local_ack_timeout;
  qp_attr->retry_cnt = a.primary_av.conn.seq_err_retry_cnt;
  qp_attr->rnr_retry = a.primary_av.conn.rnr_retry_cnt;
  (void)qp_attr_mask;
  if (qp_init_attr) *qp_init_attr = k->init;
  return 0;
}

int ib_destroy_qp(ib_qp* qp) {
  NICSIM_API_CALL();
  KDevice* d = current();
  KQp* k = live_qp(d, qp);
  if (!k) return -EINVAL;
  if (in_interrupt()) return -EBUSY;
  if (int rc = errno_of(d->ci->destroy_qp(k->h, nullptr))) return rc;
  unuse(qp->pd->usecnt);
  unuse(qp->send_cq->usecnt);
  unuse(qp->recv_cq->usecnt);
  d->qps.erase(k);
  delete k;
  return 0;
}

ib_mr* ib_get_dma_mr(ib_pd* pd, int mr_access_flags) {
  NICSIM_API_CALL();
  KDevice* d = current();
  auto* kpd = reinterpret_cast<KPd*>(pd);
  if (!d || !d->pds.count(kpd)) return nullptr;
  auto* mr = new KMr;
  mr->access = mr_access_flags;
  mr->pub.device = pd->device;
  mr->pub.pd = pd;
  // A key no provider region has (theirs are small indices): posts
  // translate it per buffer.
  mr->pub.lkey = mr->pub.rkey = 0xff000000u | (d->next_dma_key++ & 0xffffffu);
  use(pd->usecnt);
  d->mrs.insert(mr);
  return &mr->pub;
}

ib_mr* ib_reg_phys_mr(ib_pd* pd, ib_phys_buf* phys_buf_array, int num_phys_buf, int mr_access_flags, u64* iova_start) {
  NICSIM_API_CALL();
  KDevice* d = current();
  auto* kpd = reinterpret_cast<KPd*>(pd);
  if (!d || !d->pds.count(kpd) || !phys_buf_array || num_phys_buf < 1 || !iova_start || in_interrupt()) return nullptr;
  u64 length = 0;
  for (int i = 0; i < num_phys_buf; ++i) {
    if (phys_buf_array[i].addr != phys_buf_array[0].addr + length) return nullptr;  // not contiguous
    length += phys_buf_array[i].size;
  }
  if (*iova_start != phys_buf_array[0].addr || length == 0 || length > 0xffffffffu) return nullptr;
  ib_mr_create_t mc{};
  mc.vaddr = reinterpret_cast<void*>(phys_buf_array[0].addr);
  mc.length = length;
  mc.access_ctrl = nicsim::kverbs::access_of(mr_access_flags);
  auto* mr = new KMr;
  if (d->ci->register_mr(kpd->h, &mc, &mr->pub.lkey, &mr->pub.rkey, &mr->h, nullptr) != IB_SUCCESS) {
    delete mr;
    return nullptr;
  }
  mr->access = mr_access_flags;
  mr->pub.device = pd->device;
  mr->pub.pd = pd;
  use(pd->usecnt);
  d->mrs.insert(mr);
  return &mr->pub;
}

int ib_dereg_mr(ib_mr* mr) {
  NICSIM_API_CALL();
  KDevice* d = current();
  auto* k = reinterpret_cast<KMr*>(mr);
  if (!d || !d->mrs.count(k)) return -EINVAL;
  if (in_interrupt()) return -EBUSY;
  for (auto& [range, reg] : k->regs) {
    d->ci->deregister_mr(reg.h, nullptr);
    --d->dma_regs;
  }
  k->regs.clear();
  if (k->h) d->ci->deregister_mr(k->h, nullptr);
  unuse(mr->pd->usecnt);
  d->mrs.erase(k);
  delete k;
  return 0;
}

int ib_post_send(ib_qp* qp, ib_send_wr* send_wr, ib_send_wr** bad_send_wr) {
  NICSIM_API_CALL();
  KDevice* d = current();
  KQp* k = live_qp(d, qp);
  if (!k || !send_wr) return -EINVAL;
  for (ib_send_wr* w = send_wr; w; w = w->next) {
    std::vector<ib_local_ds_t> ds;
    ib_send_wr_t c;
    int rc = convert_send(*d, *w, c, ds);
    // wr.ud and wr.rdma share their storage: the AH is only read on UD QPs.
    const bool ud = qp->qp_type == IB_QPT_UD || qp->qp_type == IB_QPT_GSI;
    if (!rc && ud && w->wr.ud.ah && !d->ahs.count(reinterpret_cast<KAh*>(w->wr.ud.ah))) rc = -EINVAL;
    if (!rc && ud && w->wr.ud.ah) {
      c.dgrm.ud.remote_qp = cl_hton32(w->wr.ud.remote_qpn);
      c.dgrm.ud.remote_qkey = cl_hton32(w->wr.ud.remote_qkey);
      c.dgrm.ud.h_av = reinterpret_cast<KAh*>(w->wr.ud.ah)->h;
    } else if (!rc) {
      c.remote_ops.vaddr = w->wr.rdma.remote_addr;
      c.remote_ops.rkey = w->wr.rdma.rkey;
      if (w->opcode == IB_WR_ATOMIC_CMP_AND_SWP || w->opcode == IB_WR_ATOMIC_FETCH_AND_ADD) {
        c.remote_ops.vaddr = w->wr.atomic.remote_addr;
        c.remote_ops.rkey = w->wr.atomic.rkey;
        c.remote_ops.atomic1 = cl_hton64(w->wr.atomic.compare_add);
        c.remote_ops.atomic2 = cl_hton64(w->wr.atomic.swap);
      }
    }
    ib_send_wr_t* bad = nullptr;
    if (!rc) rc = errno_of(d->ci->post_send(k->h, &c, &bad));
    if (rc) {
      if (bad_send_wr) *bad_send_wr = w;
      return rc;
    }
  }
  return 0;
}

int ib_post_recv(ib_qp* qp, ib_recv_wr* recv_wr, ib_recv_wr** bad_recv_wr) {
  NICSIM_API_CALL();
  KDevice* d = current();
  KQp* k = live_qp(d, qp);
  if (!k || !recv_wr) return -EINVAL;
  for (ib_recv_wr* w = recv_wr; w; w = w->next) {
    std::vector<ib_local_ds_t> ds;
    int rc = w->num_sge < 0 || (w->num_sge && !w->sg_list) ? -EINVAL
             : sges_of(*d, w->sg_list, w->num_sge, ds)     ? 0
                                                           : -ENOMEM;
    ib_recv_wr_t c{};
    c.wr_id = w->wr_id;
    c.num_ds = static_cast<std::uint32_t>(ds.size());
    c.ds_array = ds.empty() ? nullptr : ds.data();
    ib_recv_wr_t* bad = nullptr;
    if (!rc) rc = errno_of(d->ci->post_recv(k->h, &c, &bad));
    if (rc) {
      if (bad_recv_wr) *bad_recv_wr = w;
      return rc;
    }
  }
  return 0;
}

}  // namespace kv
