// Local memory regions (kernel verbs ib_reg_phys_mr: an lkey for local
// IOVs and an rkey a peer's RDMA can use; RMRs may be bound to any part of
// one), dat_strerror.
#include <cstring>

#include "dapl/provider/dapl.h"
#include "dapl/provider/kib.h"
#include "host/host.h"

using namespace nicsim;
using namespace nicsim::dapl;

namespace {

int access_of(DAT_MEM_PRIV_FLAGS p) {
  int a = kib::IB_ACCESS_MW_BIND;
  if (p & (DAT_MEM_PRIV_LOCAL_WRITE_FLAG | DAT_MEM_PRIV_REMOTE_WRITE_FLAG)) a |= kib::IB_ACCESS_LOCAL_WRITE;
  if (p & DAT_MEM_PRIV_REMOTE_WRITE_FLAG) a |= kib::IB_ACCESS_REMOTE_WRITE;
  if (p & DAT_MEM_PRIV_REMOTE_READ_FLAG) a |= kib::IB_ACCESS_REMOTE_READ;
  return a;
}

// The region a DAT_REGION_DESCRIPTION names: [addr, addr+len) of node memory.
DAT_RETURN region_of(Node& n, DAT_MEM_TYPE type, DAT_REGION_DESCRIPTION desc, DAT_VLEN length, DAT_VADDR& addr) {
  if (type == DAT_MEM_TYPE_VIRTUAL) {
    addr = reinterpret_cast<DAT_VADDR>(desc.for_va);
  } else if (type == DAT_MEM_TYPE_LMR) {
    Lmr* other = n.find_as<Lmr>(desc.for_lmr_handle, Kind::Lmr);
    if (!other) return bad_handle(DAT_INVALID_HANDLE_LMR);
    addr = other->param.registered_address;
    if (length > other->param.registered_size) return err(DAT_LENGTH_ERROR);
  } else {
    return bad_arg(2);
  }
  if (!addr) return bad_arg(3);
  if (!length || length > 0xffffffffu) return bad_arg(4);
  if (!n.host().memory().contains(addr, static_cast<std::size_t>(length))) return err(DAT_PROTECTION_VIOLATION);
  return DAT_SUCCESS;
}

}  // namespace

extern "C" {

DAT_RETURN dat_lmr_create(DAT_IA_HANDLE ia_handle, DAT_MEM_TYPE mem_type, DAT_REGION_DESCRIPTION region_description,
                          DAT_VLEN length, DAT_PZ_HANDLE pz_handle, DAT_MEM_PRIV_FLAGS privileges,
                          DAT_LMR_HANDLE* lmr_handle, DAT_LMR_CONTEXT* lmr_context, DAT_RMR_CONTEXT* rmr_context,
                          DAT_VLEN* registered_length, DAT_VADDR* registered_address) {
  NICSIM_API_CALL();
  Node* n = Node::current();
  Ia* ia = n ? n->find_as<Ia>(ia_handle, Kind::Ia) : nullptr;
  if (!ia) return bad_handle(DAT_INVALID_HANDLE_IA);
  Pin pin(*n, *ia);
  charge_call(*n);
  if (ia->dead) return bad_handle(DAT_INVALID_HANDLE_IA);  // freed by another thread meanwhile
  DAT_VADDR addr = 0;
  if (DAT_RETURN rc = region_of(*n, mem_type, region_description, length, addr)) return rc;
  Pz* pz = n->find_as<Pz>(pz_handle, Kind::Pz);
  if (!pz) return bad_handle(DAT_INVALID_HANDLE_PZ);
  if (privileges & ~DAT_MEM_PRIV_ALL_FLAG) return bad_arg(6);
  if (!lmr_handle) return bad_arg(7);
  if (!lmr_context) return bad_arg(8);
  kib::ib_phys_buf buf{addr, length};
  kib::u64 iova = addr;
  kib::ib_mr* mr = kib::ib_reg_phys_mr(pz->pd, &buf, 1, access_of(privileges), &iova);
  if (!mr) return err(DAT_INSUFFICIENT_RESOURCES, DAT_RESOURCE_MEMORY_REGION);
  auto lmr = std::make_unique<Lmr>(Kind::Lmr, ia);
  lmr->mr = mr;
  lmr->pz = pz;
  ++pz->refs;
  lmr->param = {ia_handle,  mem_type, region_description, length, pz_handle,
                privileges, mr->lkey, mr->rkey,           length, addr};
  Lmr* raw = n->add(std::move(lmr));
  n->lmrs_by_context[mr->lkey] = raw;
  ++n->counters_mut().lmrs;
  *lmr_handle = to_handle(raw);
  *lmr_context = mr->lkey;
  if (rmr_context) *rmr_context = mr->rkey;
  if (registered_length) *registered_length = length;
  if (registered_address) *registered_address = addr;
  return DAT_SUCCESS;
}

DAT_RETURN dat_lmr_query(DAT_LMR_HANDLE lmr_handle, DAT_LMR_PARAM_MASK, DAT_LMR_PARAM* lmr_param) {
  NICSIM_API_CALL();
  Node* n = Node::current();
  Lmr* lmr = n ? n->find_as<Lmr>(lmr_handle, Kind::Lmr) : nullptr;
  if (!lmr) return bad_handle(DAT_INVALID_HANDLE_LMR);
  if (!lmr_param) return bad_arg(3);
  *lmr_param = lmr->param;
  return DAT_SUCCESS;
}

DAT_RETURN dat_lmr_free(DAT_LMR_HANDLE lmr_handle) {
  NICSIM_API_CALL();
  Node* n = Node::current();
  Lmr* lmr = n ? n->find_as<Lmr>(lmr_handle, Kind::Lmr) : nullptr;
  if (!lmr) return bad_handle(DAT_INVALID_HANDLE_LMR);
  Pin pin(*n, *lmr);
  charge_call(*n);
  if (lmr->dead) return bad_handle(DAT_INVALID_HANDLE_LMR);  // freed by another thread meanwhile
  if (lmr->refs > 0 || kib::ib_dereg_mr(lmr->mr)) return err(DAT_INVALID_STATE, DAT_INVALID_STATE_LMR_IN_USE);
  n->lmrs_by_context.erase(lmr->param.lmr_context);
  --lmr->pz->refs;
  --n->counters_mut().lmrs;
  n->remove(lmr);
  return DAT_SUCCESS;
}

DAT_RETURN dat_strerror(DAT_RETURN value, const char** major_message, const char** minor_message) {
  NICSIM_API_CALL();
  static const char* const kTypes[] = {"DAT_SUCCESS",
                                       "DAT_ABORT",
                                       "DAT_CONN_QUAL_IN_USE",
                                       "DAT_INSUFFICIENT_RESOURCES",
                                       "DAT_INTERNAL_ERROR",
                                       "DAT_INVALID_HANDLE",
                                       "DAT_INVALID_PARAMETER",
                                       "DAT_INVALID_STATE",
                                       "DAT_LENGTH_ERROR",
                                       "DAT_MODEL_NOT_SUPPORTED",
                                       "DAT_PROVIDER_NOT_FOUND",
                                       "DAT_PRIVILEGES_VIOLATION",
                                       "DAT_PROTECTION_VIOLATION",
                                       "DAT_QUEUE_EMPTY",
                                       "DAT_QUEUE_FULL",
                                       "DAT_TIMEOUT_EXPIRED",
                                       "DAT_PROVIDER_ALREADY_REGISTERED",
                                       "DAT_PROVIDER_IN_USE",
                                       "DAT_INVALID_ADDRESS",
                                       "DAT_INTERRUPTED_CALL",
                                       "DAT_CONN_QUAL_UNAVAILABLE"};
  const DAT_UINT32 type = DAT_GET_TYPE(value) >> 16;
  const char* major = type < sizeof kTypes / sizeof *kTypes        ? kTypes[type]
                      : DAT_GET_TYPE(value) == DAT_NOT_IMPLEMENTED ? "DAT_NOT_IMPLEMENTED"
                                                                   : nullptr;
  if (!major) return bad_arg(1);
  if (major_message) *major_message = major;
  if (minor_message) *minor_message = DAT_GET_SUBTYPE(value) ? "see DAT_RETURN_SUBTYPE" : "DAT_NO_SUBTYPE";
  return DAT_SUCCESS;
}

}  // extern "C"
