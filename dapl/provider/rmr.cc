// Remote memory regions: memory windows of the kernel verbs (ib_alloc_mw),
// bound to part of an LMR by a bind work request on a connected EP's QP
// (ib_bind_mw). After a bind the RMR's rmr_context is the window's new
// rkey; the one it had before is refused by the peer's HCA from then on
// (a remote access error), as is every rkey of an unbound or freed RMR.
#include "dapl/provider/dapl.h"
#include "dapl/provider/kib.h"
#include "host/host.h"

namespace nicsim::dapl {
namespace {

constexpr DAT_MEM_PRIV_FLAGS kWindowPrivileges =
    static_cast<DAT_MEM_PRIV_FLAGS>(DAT_MEM_PRIV_REMOTE_READ_FLAG | DAT_MEM_PRIV_REMOTE_WRITE_FLAG);

int window_access(DAT_MEM_PRIV_FLAGS p) {
  return ((p & DAT_MEM_PRIV_REMOTE_READ_FLAG) ? kib::IB_ACCESS_REMOTE_READ : 0) |
         ((p & DAT_MEM_PRIV_REMOTE_WRITE_FLAG) ? kib::IB_ACCESS_REMOTE_WRITE : 0);
}

// The LMR a bind names, checked against the RMR (PZ), its bounds and its
// privileges; nullptr with *rc set when it is not right.
Lmr* bind_target(Node& n, const Rmr& rmr, const DAT_LMR_TRIPLET& t, DAT_MEM_PRIV_FLAGS priv, DAT_RETURN& rc) {
  auto it = n.lmrs_by_context.find(t.lmr_context);
  if (it == n.lmrs_by_context.end()) {
    rc = bad_arg(2);
    return nullptr;
  }
  Lmr& lmr = *it->second;
  const DAT_VADDR start = lmr.param.registered_address;
  rc = DAT_SUCCESS;
  if (lmr.pz != rmr.pz)
    rc = err(DAT_PROTECTION_VIOLATION);
  else if (t.virtual_address < start || t.segment_length > lmr.param.registered_size ||
           t.virtual_address - start > lmr.param.registered_size - t.segment_length)
    rc = err(DAT_LENGTH_ERROR);
  else if ((priv & DAT_MEM_PRIV_REMOTE_WRITE_FLAG) && !(lmr.param.mem_priv & DAT_MEM_PRIV_REMOTE_WRITE_FLAG))
    rc = err(DAT_PRIVILEGES_VIOLATION, DAT_PRIVILEGES_RDMA_WRITE);
  else if ((priv & DAT_MEM_PRIV_REMOTE_READ_FLAG) && !(lmr.param.mem_priv & DAT_MEM_PRIV_REMOTE_READ_FLAG))
    rc = err(DAT_PRIVILEGES_VIOLATION, DAT_PRIVILEGES_RDMA_READ);
  return rc == DAT_SUCCESS ? &lmr : nullptr;
}

void rebind(Rmr& rmr, Lmr* lmr) {
  if (rmr.lmr) --rmr.lmr->refs;
  rmr.lmr = lmr;
  if (lmr) ++lmr->refs;
}

}  // namespace

DAT_RETURN rmr_free_all(Node& n, Rmr& rmr) {
  if (kib::ib_dealloc_mw(rmr.mw)) return err(DAT_INTERNAL_ERROR);
  rebind(rmr, nullptr);
  --rmr.pz->refs;
  --n.counters_mut().rmrs;
  n.remove(&rmr);
  return DAT_SUCCESS;
}

}  // namespace nicsim::dapl

using namespace nicsim;
using namespace nicsim::dapl;

extern "C" {

DAT_RETURN dat_rmr_create(DAT_PZ_HANDLE pz_handle, DAT_RMR_HANDLE* rmr_handle) {
  NICSIM_API_CALL();
  Node* n = Node::current();
  Pz* pz = n ? n->find_as<Pz>(pz_handle, Kind::Pz) : nullptr;
  if (!pz) return bad_handle(DAT_INVALID_HANDLE_PZ);
  if (!rmr_handle) return bad_arg(2);
  Pin pin(*n, *pz);
  charge_call(*n);
  if (pz->dead) return bad_handle(DAT_INVALID_HANDLE_PZ);  // freed by another thread meanwhile
  kib::ib_mw* mw = kib::ib_alloc_mw(pz->pd);
  if (!mw) return err(DAT_INSUFFICIENT_RESOURCES, DAT_RESOURCE_MEMORY_REGION);
  auto rmr = std::make_unique<Rmr>(Kind::Rmr, pz->ia);
  rmr->mw = mw;
  rmr->pz = pz;
  ++pz->refs;
  rmr->param.ia_handle = to_handle(pz->ia);
  rmr->param.pz_handle = pz_handle;
  *rmr_handle = to_handle(n->add(std::move(rmr)));
  ++n->counters_mut().rmrs;
  return DAT_SUCCESS;
}

DAT_RETURN dat_rmr_query(DAT_RMR_HANDLE rmr_handle, DAT_RMR_PARAM_MASK, DAT_RMR_PARAM* rmr_param) {
  NICSIM_API_CALL();
  Node* n = Node::current();
  Rmr* rmr = n ? n->find_as<Rmr>(rmr_handle, Kind::Rmr) : nullptr;
  if (!rmr) return bad_handle(DAT_INVALID_HANDLE_RMR);
  if (!rmr_param) return bad_arg(3);
  *rmr_param = rmr->param;
  return DAT_SUCCESS;
}

DAT_RETURN dat_rmr_bind(DAT_RMR_HANDLE rmr_handle, const DAT_LMR_TRIPLET* lmr_triplet,
                        DAT_MEM_PRIV_FLAGS mem_privileges, DAT_EP_HANDLE ep_handle, DAT_RMR_COOKIE user_cookie,
                        DAT_COMPLETION_FLAGS completion_flags, DAT_RMR_CONTEXT* rmr_context) {
  NICSIM_API_CALL();
  Node* n = Node::current();
  Rmr* rmr = n ? n->find_as<Rmr>(rmr_handle, Kind::Rmr) : nullptr;
  if (!rmr) return bad_handle(DAT_INVALID_HANDLE_RMR);
  if (!lmr_triplet) return bad_arg(2);
  if (mem_privileges & ~kWindowPrivileges) return bad_arg(3);
  Ep* ep = n->find_as<Ep>(ep_handle, Kind::Ep);
  if (!ep) return bad_handle(DAT_INVALID_HANDLE_EP);
  if (!rmr_context) return bad_arg(7);
  Pin pin_rmr(*n, *rmr), pin_ep(*n, *ep);
  charge_call(*n);
  if (rmr->dead) return bad_handle(DAT_INVALID_HANDLE_RMR);
  if (ep->dead) return bad_handle(DAT_INVALID_HANDLE_EP);
  if (ep->fsm.state() != EpState::Connected || !ep->qp) return bad_ep_state(*ep);
  if (ep->pz != rmr->pz) return err(DAT_PROTECTION_VIOLATION);
  const bool unbind = lmr_triplet->segment_length == 0;
  DAT_RETURN rc = DAT_SUCCESS;
  Lmr* lmr = unbind ? nullptr : bind_target(*n, *rmr, *lmr_triplet, mem_privileges, rc);
  if (rc) return rc;
  kib::ib_mw_bind b{};
  b.mr = lmr ? lmr->mr : nullptr;
  b.addr = unbind ? 0 : lmr_triplet->virtual_address;
  b.length = static_cast<kib::u32>(unbind ? 0 : lmr_triplet->segment_length);
  b.mw_access_flags = window_access(mem_privileges);
  const bool signalled = !(completion_flags & DAT_COMPLETION_SUPPRESS_FLAG);
  if (DAT_RETURN r = ep_post_bind(*n, *ep, *rmr, b, user_cookie, signalled)) return r;
  rebind(*rmr, lmr);
  rmr->param.lmr_triplet = unbind ? DAT_LMR_TRIPLET{} : *lmr_triplet;
  rmr->param.mem_priv = unbind ? DAT_MEM_PRIV_NONE_FLAG : mem_privileges;
  rmr->param.rmr_context = unbind ? 0 : rmr->mw->rkey;
  *rmr_context = rmr->param.rmr_context;
  return DAT_SUCCESS;
}

DAT_RETURN dat_rmr_free(DAT_RMR_HANDLE rmr_handle) {
  NICSIM_API_CALL();
  Node* n = Node::current();
  Rmr* rmr = n ? n->find_as<Rmr>(rmr_handle, Kind::Rmr) : nullptr;
  if (!rmr) return bad_handle(DAT_INVALID_HANDLE_RMR);
  Pin pin(*n, *rmr);
  charge_call(*n);
  if (rmr->dead) return bad_handle(DAT_INVALID_HANDLE_RMR);  // freed by another thread meanwhile
  return rmr_free_all(*n, *rmr);
}

}  // extern "C"
