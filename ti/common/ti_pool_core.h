// Resource pools as both transport providers keep them: elements with
// their buffers in one node-memory allocation, context areas, synchronous
// and asynchronous gets (FIFO, partial allocation), puts that serve the
// waiting gets. Nothing here knows the transport: a provider's Pool type
// has the fields used below, its element transport data (Pool::Td) has
// rdma_local, element, pool, conn, in_pool and busy, and the provider
// registers the buffers its own way.
#pragma once
#include <sdp_ti.h>

#include <cstdint>
#include <deque>
#include <vector>

#include "host/host.h"

namespace nicsim::ti_core {

constexpr std::uint32_t kMaxPoolElements = 1u << 16;
constexpr std::uint32_t kMaxPoolBufs = 64;

struct PoolRequest {
  std::uint32_t wanted = 0;
  bool partial = false;
  ti_res_pool_cb_t cb = nullptr;
  void *context1 = nullptr, *context2 = nullptr;
};

inline std::uint64_t round_up(std::uint64_t v) { return (v + 63) & ~std::uint64_t{63}; }

// pool_create's arguments, checked alike by every provider.
inline bool pool_args_ok(ti_res_pool_type_t type, std::uint32_t count, std::uint32_t per, const std::uint32_t* sizes,
                         std::uint32_t context_size, const void* ph) {
  return ph && count && count <= kMaxPoolElements && per && per <= kMaxPoolBufs && sizes &&
         (type == TI_RES_POOL_MSG || type == TI_RES_POOL_RDMA) && context_size <= (1u << 20);
}

// Bytes of one element's buffers (each rounded to a cache line).
template <class P>
std::uint64_t element_bytes(const P* p) {
  std::uint64_t per = 0;
  for (std::uint32_t s : p->sizes) per += round_up(s);
  return per;
}

template <class P>
bool alloc_buffers(P* p, host::Host& h, std::uint32_t count, std::uint32_t context_size) {
  const std::uint64_t total = element_bytes(p) * count;
  if (total && !(p->buffers = static_cast<unsigned char*>(h.memory().alloc(total, 64)))) return false;
  if (context_size &&
      !(p->contexts = static_cast<unsigned char*>(h.memory().alloc(round_up(context_size) * count, 64))))
    return false;
  return true;
}

template <class P>
void free_buffers(P* p, host::Host& h) {
  if (p->buffers) h.memory().free(p->buffers);
  if (p->contexts) h.memory().free(p->contexts);
  p->buffers = p->contexts = nullptr;
}

// Elements, their descriptors and transport data; every local buffer
// carries `lkey`.
template <class P>
void lay_out(P* p, std::uint32_t count, std::uint32_t context_size, std::uint32_t lkey) {
  const std::uint32_t per = p->per_element;
  p->elements.assign(count, ti_data_element_t{});
  p->tds.assign(count, typename P::Td{});
  p->local.assign(static_cast<std::size_t>(count) * per, ti_local_data_desc_t{});
  if (p->type == TI_RES_POOL_RDMA) p->remote.assign(static_cast<std::size_t>(count) * per, ti_rdma_desc_t{});
  unsigned char* at = p->buffers;
  for (std::uint32_t k = 0; k < count; ++k) {
    ti_data_element_t& e = p->elements[k];
    auto& td = p->tds[k];
    ti_local_data_desc_t* ld = &p->local[static_cast<std::size_t>(k) * per];
    for (std::uint32_t b = 0; b < per; ++b) {
      ld[b].vaddr = p->sizes[b] ? at : nullptr;
      ld[b].lkey = p->sizes[b] ? lkey : 0;
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

template <class P>
ti_data_element_t* take(P* p, std::uint32_t n) {
  ti_data_element_t *head = nullptr, **tail = &head;
  for (std::uint32_t k = 0; k < n && !p->free_list.empty(); ++k) {
    ti_data_element_t* e = p->free_list.front();
    p->free_list.pop_front();
    static_cast<typename P::Td*>(e->otd)->in_pool = false;
    e->p_next_msg = nullptr;
    *tail = e;
    tail = &e->p_next_msg;
  }
  return head;
}

// Serves waiting asynchronous gets, oldest first (in the caller's
// context); `alive(p)` says whether a callback left the pool standing.
template <class P, class Alive>
void serve_waiting(P* p, Alive alive) {
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
    if (!alive(p)) return;
  }
}

// res_pool_get on a live pool.
template <class P, class Alive>
ti_status_t get(P* p, std::uint32_t count, boolean_t partial, ti_res_pool_cb_t cb, void* ctx1, void* ctx2,
                ti_pool_response_t* resp, Alive alive) {
  if (!count || count > p->elements.size() || (cb && resp) || (!cb && !resp)) return TI_INVALID_SETTING;
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
  serve_waiting(p, alive);
  return all_now ? TI_SUCCESS : TI_PENDING;
}

// Whether every element of the list is the pool's and out of it, idle.
template <class P>
bool put_ok(const P* p, const ti_data_element_t* list) {
  if (!list) return false;
  std::uint32_t n = 0;
  for (const ti_data_element_t* e = list; e; e = e->p_next_msg, ++n) {
    if (!p->owns(e) || n > p->elements.size()) return false;
    const auto& td = p->tds[static_cast<std::size_t>(e - p->elements.data())];
    if (td.in_pool || td.busy) return false;
  }
  return true;
}

// res_pool_put of a checked list.
template <class P, class Alive>
void put(P* p, ti_data_element_t* list, Alive alive) {
  for (ti_data_element_t* e = list; e;) {
    ti_data_element_t* next = e->p_next_msg;
    auto& td = p->tds[static_cast<std::size_t>(e - p->elements.data())];
    td.in_pool = true;
    td.conn = nullptr;
    e->p_next_msg = nullptr;
    p->free_list.push_back(e);
    e = next;
  }
  serve_waiting(p, alive);
}

}  // namespace nicsim::ti_core
