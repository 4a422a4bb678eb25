// One node's side of a two-sided TI test: its transport objects, its
// callbacks' counters, and the steps every test repeats (open, listen,
// connect, close). The callbacks find their side through the CQ handle or
// the context the test gave.
#pragma once
#include <gtest/gtest.h>
#include <sdp_ti.h>

#include <cstdint>

#include "ti/tests/ti_probe.h"

namespace nicsim::ti::testing {

struct Peer {
  ti_ops_t* ops = nullptr;
  ti_handle_t ti = nullptr;
  ti_endpoint_handle_t me = nullptr, peer = nullptr;
  ti_pd_handle_t pd = nullptr;
  ti_cq_handle_t cq = nullptr;
  ti_res_pool_handle_t pool = nullptr;
  ti_conn_handle_t conn = nullptr, listen_conn = nullptr;
  ti_conn_request_t req{};  // the last connection request callback's (copied)
  volatile int requests = 0, replies = 0, errors = 0, destroyed = 0, disconnected = 0;
  ti_status_t error_code = TI_SUCCESS;
  unsigned char req_private[256] = {};  // the last request's private data (copied)
  ElementQueue sent, received;
};

// Waits in simulated time until `done()` holds or `budget_us` passes.
template <class F>
bool wait_for(F done, std::uint64_t budget_us = 200000) {
  for (std::uint64_t t = 0; !done() && t < budget_us; ++t) nicsim_sleep_ns(1000);
  return done();
}

inline void peer_counted(void* ctx) {
  auto* flag = static_cast<volatile int*>(ctx);
  *flag = *flag + 1;
}

inline void peer_error(ti_err_rec_t* rec) {
  Peer* p = static_cast<Peer*>(rec->context);
  p->error_code = rec->code;
  p->errors = p->errors + 1;
}

// The last request, kept beyond the callback (its private data copied).
inline void peer_keep_request(ti_conn_request_t* r) {
  Peer* p = static_cast<Peer*>(r->context);
  p->req = *r;
  const std::uint32_t n = r->private_data_len < sizeof p->req_private ? r->private_data_len : sizeof p->req_private;
  if (r->private_data) std::memcpy(p->req_private, r->private_data, n);
  p->req.private_data = p->req_private;
  p->req.private_data_len = r->private_data ? n : 0;
  if (r->cb_type == CN_REQUEST)
    p->requests = p->requests + 1;
  else
    p->replies = p->replies + 1;
}

// create_ti, endpoints (this node and `peer_node`), PD, a CQ and a message
// pool of `elements` single buffers of `buf` bytes (with `context` bytes of
// context each), on the transport `load` brings up.
inline void peer_open(Peer& p, std::uint32_t peer_node, ti_port_t port, std::uint32_t elements, std::uint32_t buf,
                      std::uint32_t context = 0, ti_ops_t* (*load)(void) = ti_ib_transport_load) {
  p.ops = load();
  ASSERT_NE(p.ops, nullptr);
  ASSERT_EQ(p.ops->create_ti(&p.ti), TI_SUCCESS);
  ti_inet_addr_t me = ip_of_node(nicsim_node_id()), peer = ip_of_node(peer_node);
  ASSERT_EQ(p.ops->create_endpoint(p.ti, &me, port, &p.me), TI_SUCCESS);
  ASSERT_EQ(p.ops->create_endpoint(p.ti, &peer, port, &p.peer), TI_SUCCESS);
  ASSERT_EQ(p.ops->create_pd(p.ti, p.me, &p.pd), TI_SUCCESS);
  ASSERT_EQ(p.ops->create_cq(p.ti, p.pd, 64, &p.cq), TI_SUCCESS);
  ASSERT_EQ(p.ops->res_pool_create(p.ti, TI_RES_POOL_MSG, elements, 1, &buf, context, &p.pool), TI_SUCCESS);
}

inline ti_conn_info_t peer_info(Peer& p, ti_conn_req_cb_t cb, bool active) {
  ti_conn_info_t info{};
  info.src_ep = p.me;
  info.dst_ep = active ? p.peer : nullptr;
  info.pdh = p.pd;
  info.send_cqh = info.recv_cqh = active ? p.cq : nullptr;
  info.conn_request_cb = cb;
  info.context = &p;
  return info;
}

inline ti_comp_info_t peer_comp(Peer& p, ti_xfer_cb_t send_cb, ti_xfer_cb_t recv_cb) {
  ti_comp_info_t c{};
  c.h_send_cq = c.h_recv_cq = p.cq;
  c.pfn_send_cb = send_cb;
  c.pfn_recv_cb = recv_cb;
  c.pfn_rdma_cb = send_cb;
  c.pfn_err_cb = peer_error;
  c.p_err_context = &p;
  return c;
}

inline ti_data_element_t* peer_get(Peer& p, std::uint32_t n) {
  ti_pool_response_t r{};
  EXPECT_EQ(p.ops->res_pool_get(p.pool, n, FALSE, nullptr, nullptr, nullptr, &r), TI_SUCCESS);
  EXPECT_EQ(r.element_count, n);
  return r.p_element_list;
}

inline void peer_put_all(Peer& p, ElementQueue& q) {
  for (int i = 0; i < q.count && i < 256; ++i) EXPECT_EQ(p.ops->res_pool_put(p.pool, q.items[i]), TI_SUCCESS);
  q.count = 0;
}

// destroy_ti and its callback; the handle is gone afterwards.
inline void peer_close(Peer& p) {
  ASSERT_EQ(p.ops->destroy_ti(p.ti, peer_counted, const_cast<int*>(&p.destroyed)), TI_SUCCESS);
  EXPECT_TRUE(wait_until(p.destroyed, 1));
  EXPECT_EQ(p.ops->create_pd(p.ti, p.me, &p.pd), TI_INVALID_HANDLE);
}

}  // namespace nicsim::ti::testing
