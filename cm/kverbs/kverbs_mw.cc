// The kernel verbs' memory windows over ci_interface_t's: a window is a
// ci window of the PD; binding posts the ci bind work request on the QP's
// send queue (its completion is an IB_WC_BIND_MW on the send CQ) and gives
// the window its new rkey at once, so the old one is refused from then on.
#include "cm/kverbs/kverbs_impl.h"

namespace nicsim::kverbs {
namespace {

ib_access_t window_access(int flags) {
  ib_access_t a = 0;
  if (flags & kv::IB_ACCESS_REMOTE_WRITE) a |= IB_AC_RDMA_WRITE;
  if (flags & kv::IB_ACCESS_REMOTE_READ) a |= IB_AC_RDMA_READ;
  if (flags & kv::IB_ACCESS_REMOTE_ATOMIC) a |= IB_AC_ATOMIC;
  return a;
}

int errno_of_bind(ib_api_status_t s) { return s == IB_INVALID_PERMISSION ? -EACCES : errno_of(s); }

}  // namespace
}  // namespace nicsim::kverbs

namespace kv {

using namespace nicsim::kverbs;

ib_mw* ib_alloc_mw(ib_pd* pd) {
  NICSIM_API_CALL();
  KDevice* d = current();
  auto* kpd = reinterpret_cast<KPd*>(pd);
  if (!d || !d->pds.count(kpd) || in_interrupt()) return nullptr;
  auto* mw = new KMw;
  if (d->ci->create_mw(kpd->h, &mw->pub.rkey, &mw->h, nullptr) != IB_SUCCESS) {
    delete mw;
    return nullptr;
  }
  mw->pub.device = pd->device;
  mw->pub.pd = pd;
  use(pd->usecnt);
  d->mws.insert(mw);
  return &mw->pub;
}

int ib_bind_mw(ib_qp* qp, ib_mw* mw, ib_mw_bind* mw_bind) {
  NICSIM_API_CALL();
  KDevice* d = current();
  auto* kmw = reinterpret_cast<KMw*>(mw);
  auto* kqp = reinterpret_cast<KQp*>(qp);
  if (!d || !d->mws.count(kmw) || !d->qps.count(kqp) || !mw_bind) return -EINVAL;
  auto* kmr = reinterpret_cast<KMr*>(mw_bind->mr);
  if (mw_bind->length && (!d->mrs.count(kmr) || !kmr->h)) return -EINVAL;  // the DMA MR has no region to bind to
  ib_bind_wr_t b{};
  b.wr_id = mw_bind->wr_id;
  if (mw_bind->send_flags & IB_SEND_SIGNALED) b.send_opt |= IB_SEND_OPT_SIGNALED;
  if (mw_bind->send_flags & IB_SEND_FENCE) b.send_opt |= IB_SEND_OPT_FENCE;
  b.h_mr = mw_bind->length ? kmr->h : nullptr;
  b.access_ctrl = window_access(mw_bind->mw_access_flags);
  b.current_rkey = mw->rkey;
  b.local_ds.vaddr = reinterpret_cast<void*>(static_cast<std::uintptr_t>(mw_bind->addr));
  b.local_ds.length = mw_bind->length;
  b.local_ds.lkey = mw_bind->length ? kmr->pub.lkey : 0;
  std::uint32_t rkey = 0;
  if (int rc = errno_of_bind(d->ci->bind_mw(kmw->h, kqp->h, &b, &rkey))) return rc;
  mw->rkey = rkey;
  return 0;
}

int ib_dealloc_mw(ib_mw* mw) {
  NICSIM_API_CALL();
  KDevice* d = current();
  auto* k = reinterpret_cast<KMw*>(mw);
  if (!d || !d->mws.count(k)) return -EINVAL;
  if (in_interrupt()) return -EBUSY;
  if (int rc = errno_of(d->ci->destroy_mw(k->h, nullptr))) return rc;
  unuse(mw->pd->usecnt);
  d->mws.erase(k);
  delete k;
  return 0;
}

}  // namespace kv
