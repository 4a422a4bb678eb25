// Resource pools of the Elan transport: the shared pool core
// (ti/common/ti_pool_core.h) with the buffers mapped once into the Elan's
// address space (remote read and write), so messages and RDMAs move them
// without a copy.
#include "ti/elan/ti_elan.h"

namespace nicsim::ti_elan {
namespace {

bool pool_alive(Pool* p) { return node()->lookup(handle_of<void*>(p), Kind::Pool) == p; }

}  // namespace

void pool_free(Pool* p) {
  ElanTiNode* n = node();
  for (Td& td : p->tds) bounce_free(&td);
  if (p->mem) unmap(p->mem);
  ti_core::free_buffers(p, n->host);
  n->drop(p);
}

Td* td_of(ti_data_element_t* e) {
  ElanTiNode* n = node();
  if (!n || !e) return nullptr;
  // The element is looked up in the live pools, its otd never trusted.
  for (Obj* o : n->all(Kind::Pool)) {
    auto* p = static_cast<Pool*>(o);
    if (p->owns(e)) return &p->tds[static_cast<std::size_t>(e - p->elements.data())];
  }
  return nullptr;
}

ti_status_t pool_create(ti_handle_t h_ti, ti_res_pool_type_t type, uint32_t count, uint32_t per, uint32_t* sizes,
                        uint32_t context_size, ti_res_pool_handle_t* ph) {
  Instance* i = as<Instance>(h_ti, Kind::Instance);
  if (!i) return TI_INVALID_HANDLE;
  if (!ti_core::pool_args_ok(type, count, per, sizes, context_size, ph)) return TI_INVALID_PARAMETER;
  host::Host* h = host::Host::current_host();
  if (h->in_interrupt()) return TI_INVALID_OPERATION;
  ElanTiNode* n = node();
  Pool* p = n->make<Pool>(Kind::Pool, i);
  p->type = type;
  p->per_element = per;
  p->sizes.assign(sizes, sizes + per);
  const std::uint64_t total = ti_core::element_bytes(p) * count;
  if (!ti_core::alloc_buffers(p, *h, count, context_size) || total > 0xffffffffu ||
      (total && !(p->mem = map_range(i, p->buffers, static_cast<std::uint32_t>(total))))) {
    pool_free(p);
    return TI_INSUFFICIENT_RESOURCES;
  }
  ti_core::lay_out(p, count, context_size, p->mem ? p->mem->eaddr : 0);
  *ph = handle_of<ti_res_pool_handle_t>(p);
  return TI_SUCCESS;
}

ti_status_t pool_destroy(ti_res_pool_handle_t h) {
  Pool* p = as<Pool>(h, Kind::Pool);
  if (!p) return TI_INVALID_HANDLE;
  if (p->free_list.size() != p->elements.size()) return TI_RESOURCE_BUSY;
  pool_free(p);
  return TI_SUCCESS;
}

ti_status_t pool_get(ti_res_pool_handle_t h, uint32_t count, boolean_t partial, ti_res_pool_cb_t cb, void* ctx1,
                     void* ctx2, ti_pool_response_t* resp) {
  Pool* p = as<Pool>(h, Kind::Pool);
  if (!p) return TI_INVALID_HANDLE;
  node()->host.work("ti_op");
  return ti_core::get(p, count, partial, cb, ctx1, ctx2, resp, pool_alive);
}

ti_status_t pool_put(ti_res_pool_handle_t h, ti_data_element_t* list) {
  Pool* p = as<Pool>(h, Kind::Pool);
  if (!p) return TI_INVALID_HANDLE;
  if (!ti_core::put_ok(p, list)) return TI_INVALID_PARAMETER;
  node()->host.work("ti_op");
  ti_core::put(p, list, pool_alive);
  return TI_SUCCESS;
}

}  // namespace nicsim::ti_elan
