// Resource pools of the IB transport: the shared pool core
// (ti/common/ti_pool_core.h) with the buffers registered once with the
// instance's PD.
#include <cstring>

#include "ti/common/ti_pool_core.h"
#include "ti/ib/ti_ib.h"

namespace nicsim::ti {
namespace {

bool pool_alive(Pool* p) { return node()->pools.count(p) != 0; }

bool register_buffers(Pool* p, std::uint64_t total) {
  if (!total) return true;
  ib_phys_buf buf{reinterpret_cast<std::uint64_t>(p->buffers), total};
  u64 iova = buf.addr;
  const int access = IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_READ | IB_ACCESS_REMOTE_ATOMIC;
  ib_mr* mr = ib_reg_phys_mr(p->inst->pd, &buf, 1, access, &iova);
  if (!mr) return false;
  p->mem = new Mem;
  p->mem->inst = p->inst;
  p->mem->mr = mr;
  return true;
}

}  // namespace

void pool_free(Pool* p) {
  TiNode* n = node();
  if (p->mem) {
    ib_dereg_mr(p->mem->mr);
    delete p->mem;
  }
  ti_core::free_buffers(p, n->host);
  p->inst->pools.erase(p);
  n->pools.erase(p);
  n->revoke(p);
  delete p;
}

ti_status_t pool_create(ti_handle_t h_ti, ti_res_pool_type_t type, uint32_t count, uint32_t bufs_per_element,
                        uint32_t* sizes, uint32_t context_size, ti_res_pool_handle_t* ph_pool) {
  Instance* i = instance_of(h_ti);
  if (!i) return TI_INVALID_HANDLE;
  if (!ti_core::pool_args_ok(type, count, bufs_per_element, sizes, context_size, ph_pool)) return TI_INVALID_PARAMETER;
  if (in_interrupt()) return TI_INVALID_OPERATION;
  auto* p = new Pool;
  p->inst = i;
  p->type = type;
  p->per_element = bufs_per_element;
  p->sizes.assign(sizes, sizes + bufs_per_element);
  i->pools.insert(p);
  node()->pools.insert(p);
  if (!ti_core::alloc_buffers(p, node()->host, count, context_size) ||
      !register_buffers(p, ti_core::element_bytes(p) * count)) {
    pool_free(p);
    return TI_INSUFFICIENT_RESOURCES;
  }
  ti_core::lay_out(p, count, context_size, p->mem ? p->mem->mr->lkey : 0);
  node()->issue(p, HandleKind::Pool);
  *ph_pool = handle_of<ti_res_pool_handle_t>(p);
  return TI_SUCCESS;
}

ti_status_t pool_destroy(ti_res_pool_handle_t h_pool) {
  Pool* p = pool_of(h_pool);
  if (!p) return TI_INVALID_HANDLE;
  if (p->free_list.size() != p->elements.size()) return TI_RESOURCE_BUSY;
  if (in_interrupt()) return TI_INVALID_OPERATION;  // deregistering its memory would block
  pool_free(p);
  return TI_SUCCESS;
}

ti_status_t pool_get(ti_res_pool_handle_t h_pool, uint32_t count, boolean_t partial, ti_res_pool_cb_t cb, void* ctx1,
                     void* ctx2, ti_pool_response_t* resp) {
  Pool* p = pool_of(h_pool);
  if (!p) return TI_INVALID_HANDLE;
  node()->host.work("ti_op");
  return ti_core::get(p, count, partial, cb, ctx1, ctx2, resp, pool_alive);
}

ti_status_t pool_put(ti_res_pool_handle_t h_pool, ti_data_element_t* list) {
  Pool* p = pool_of(h_pool);
  if (!p) return TI_INVALID_HANDLE;
  if (!ti_core::put_ok(p, list)) return TI_INVALID_PARAMETER;
  node()->host.work("ti_op");
  ti_core::put(p, list, pool_alive);
  return TI_SUCCESS;
}

}  // namespace nicsim::ti
