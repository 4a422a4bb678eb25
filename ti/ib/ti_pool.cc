// Resource pools of the IB transport: data elements with their buffers
// (one node-memory allocation, registered once with the instance's PD),
// context areas, synchronous and asynchronous gets (FIFO, partial
// allocation), puts that serve waiting gets.
#include <cstring>

#include "ti/ib/ti_ib.h"

namespace nicsim::ti {
namespace {

constexpr std::uint32_t kMaxElements = 1u << 16;
constexpr std::uint32_t kMaxBufs = 64;

std::uint64_t round_up(std::uint64_t v) { return (v + 63) & ~std::uint64_t{63}; }

bool alloc_buffers(Pool* p, std::uint32_t count, std::uint32_t context_size) {
  std::uint64_t per = 0;
  for (std::uint32_t s : p->sizes) per += round_up(s);
  const std::uint64_t total = per * count;
  if (total) {
    p->buffers = static_cast<unsigned char*>(node()->host.memory().alloc(total, 64));
    if (!p->buffers) return false;
  }
  if (context_size) {
    p->contexts = static_cast<unsigned char*>(node()->host.memory().alloc(round_up(context_size) * count, 64));
    if (!p->contexts) return false;
  }
  return true;
}

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

void lay_out(Pool* p, std::uint32_t count, std::uint32_t context_size) {
  const std::uint32_t per = p->per_element;
  p->elements.assign(count, ti_data_element_t{});
  p->tds.assign(count, ElementTd{});
  p->local.assign(static_cast<std::size_t>(count) * per, ti_local_data_desc_t{});
  if (p->type == TI_RES_POOL_RDMA) p->remote.assign(static_cast<std::size_t>(count) * per, ti_rdma_desc_t{});
  unsigned char* at = p->buffers;
  for (std::uint32_t k = 0; k < count; ++k) {
    ti_data_element_t& e = p->elements[k];
    ElementTd& td = p->tds[k];
    ti_local_data_desc_t* ld = &p->local[static_cast<std::size_t>(k) * per];
    for (std::uint32_t b = 0; b < per; ++b) {
      ld[b].vaddr = p->sizes[b] ? at : nullptr;
      ld[b].lkey = p->sizes[b] && p->mem ? p->mem->mr->lkey : 0;
      ld[b].byte_count = p->sizes[b];
      at += round_up(p->sizes[b]);
    }
    e.num_io_bufs = per;
    e.pool_type = p->type;
    if (p->type == TI_RES_POOL_RDMA) {
      e.rdma_data_desc = &p->remote[static_cast<std::size_t>(k) * per];
      td.rdma_local = ld;
    } else {
      e.local_data_desc = ld;
    }
    e.p_context = context_size ? p->contexts + round_up(context_size) * k : nullptr;
    e.status = TI_SUCCESS;
    e.otd = &td;
    td.element = &e;
    td.pool = p;
    p->free_list.push_back(&e);
  }
}

ti_data_element_t* take(Pool* p, std::uint32_t n) {
  ti_data_element_t *head = nullptr, **tail = &head;
  for (std::uint32_t k = 0; k < n && !p->free_list.empty(); ++k) {
    ti_data_element_t* e = p->free_list.front();
    p->free_list.pop_front();
    ElementTd* td = static_cast<ElementTd*>(e->otd);
    td->in_pool = false;
    e->p_next_msg = nullptr;
    *tail = e;
    tail = &e->p_next_msg;
  }
  return head;
}

// Serves waiting asynchronous gets, oldest first (in the caller's context).
void serve_waiting(Pool* p) {
  while (!p->waiting.empty() && !p->free_list.empty()) {
    PoolRequest& r = p->waiting.front();
    const auto have = static_cast<std::uint32_t>(p->free_list.size());
    if (have < r.wanted && !r.partial) return;
    const std::uint32_t n = have < r.wanted ? have : r.wanted;
    ti_pool_response_t resp{};
    resp.p_context1 = r.context1;
    resp.p_context2 = r.context2;
    resp.p_element_list = take(p, n);
    resp.element_count = n;
    resp.status = TI_SUCCESS;
    const ti_res_pool_cb_t cb = r.cb;
    r.wanted -= n;
    if (!r.wanted) p->waiting.pop_front();
    cb(&resp);
    if (!node()->pools.count(p)) return;  // the callback destroyed the pool
  }
}

}  // namespace

void pool_free(Pool* p) {
  TiNode* n = node();
  if (p->mem) {
    ib_dereg_mr(p->mem->mr);
    delete p->mem;
  }
  if (p->buffers) n->host.memory().free(p->buffers);
  if (p->contexts) n->host.memory().free(p->contexts);
  p->inst->pools.erase(p);
  n->pools.erase(p);
  n->revoke(p);
  delete p;
}

ti_status_t pool_create(ti_handle_t h_ti, ti_res_pool_type_t type, uint32_t count, uint32_t bufs_per_element,
                        uint32_t* sizes, uint32_t context_size, ti_res_pool_handle_t* ph_pool) {
  Instance* i = instance_of(h_ti);
  if (!i) return TI_INVALID_HANDLE;
  if (!ph_pool || !count || count > kMaxElements || !bufs_per_element || bufs_per_element > kMaxBufs || !sizes ||
      (type != TI_RES_POOL_MSG && type != TI_RES_POOL_RDMA) || context_size > (1u << 20))
    return TI_INVALID_PARAMETER;
  if (in_interrupt()) return TI_INVALID_OPERATION;
  auto* p = new Pool;
  p->inst = i;
  p->type = type;
  p->per_element = bufs_per_element;
  p->sizes.assign(sizes, sizes + bufs_per_element);
  std::uint64_t per = 0;
  for (std::uint32_t s : p->sizes) per += round_up(s);
  i->pools.insert(p);
  node()->pools.insert(p);
  if (!alloc_buffers(p, count, context_size) || !register_buffers(p, per * count)) {
    pool_free(p);
    return TI_INSUFFICIENT_RESOURCES;
  }
  lay_out(p, count, context_size);
  node()->issue(p, HandleKind::Pool);
  *ph_pool = handle_of<ti_res_pool_handle_t>(p);
  return TI_SUCCESS;
}

ti_status_t pool_destroy(ti_res_pool_handle_t h_pool) {
  Pool* p = pool_of(h_pool);
  if (!p) return TI_INVALID_HANDLE;
  if (p->free_list.size() != p->elements.size()) return TI_RESOURCE_BUSY;
  pool_free(p);
  return TI_SUCCESS;
}

ti_status_t pool_get(ti_res_pool_handle_t h_pool, uint32_t count, boolean_t partial, ti_res_pool_cb_t cb, void* ctx1,
                     void* ctx2, ti_pool_response_t* resp) {
  Pool* p = pool_of(h_pool);
  if (!p) return TI_INVALID_HANDLE;
  if (!count || count > p->elements.size() || (cb && resp) || (!cb && !resp)) return TI_INVALID_SETTING;
  node()->host.work("ti_op");
  const auto have = static_cast<std::uint32_t>(p->free_list.size());
  if (resp) {
    resp->p_context1 = ctx1;
    resp->p_context2 = ctx2;
    resp->p_element_list = nullptr;
    resp->element_count = 0;
    resp->status = TI_ERROR;
    if (!p->waiting.empty() || !have || (have < count && !partial)) return TI_INSUFFICIENT_RESOURCES;
    const std::uint32_t n = have < count ? have : count;
    resp->p_element_list = take(p, n);
    resp->element_count = n;
    resp->status = TI_SUCCESS;
    return TI_SUCCESS;
  }
  p->waiting.push_back(PoolRequest{count, partial != FALSE, cb, ctx1, ctx2});
  const bool all_now = p->waiting.size() == 1 && have >= count;
  serve_waiting(p);
  return all_now ? TI_SUCCESS : TI_PENDING;
}

ti_status_t pool_put(ti_res_pool_handle_t h_pool, ti_data_element_t* list) {
  Pool* p = pool_of(h_pool);
  if (!p) return TI_INVALID_HANDLE;
  if (!list) return TI_INVALID_PARAMETER;
  std::uint32_t n = 0;
  for (ti_data_element_t* e = list; e; e = e->p_next_msg, ++n) {
    if (!p->owns(e) || n > p->elements.size()) return TI_INVALID_PARAMETER;
    const ElementTd& td = p->tds[static_cast<std::size_t>(e - p->elements.data())];
    if (td.in_pool || td.busy) return TI_INVALID_PARAMETER;
  }
  node()->host.work("ti_op");
  for (ti_data_element_t* e = list; e;) {
    ti_data_element_t* next = e->p_next_msg;
    ElementTd& td = p->tds[static_cast<std::size_t>(e - p->elements.data())];
    td.in_pool = true;
    td.conn = nullptr;
    e->p_next_msg = nullptr;
    p->free_list.push_back(e);
    e = next;
  }
  serve_waiting(p);
  return TI_SUCCESS;
}

}  // namespace nicsim::ti
