// Two-sided tests of the SDP Transport Interface over IB: a server node
// (h1) and a client node (h2) over the simulated fabric, the SA on h0.
// Every payload byte is checked where it lands; every element posted must
// come back to its owner exactly once.
#include <gtest/gtest.h>

#include <cstring>

#include "host/host.h"
#include "tests/world_run.h"
#include "ti/ib/ti_ib.h"
#include "ti/tests/ti_probe.h"
#include "world/node.h"
#include "world/programs.h"

namespace nicsim::ti {
namespace {

using namespace nicsim::ti::testing;

constexpr ti_port_t kPort = 5000;
constexpr std::uint32_t kRegion = 65536;

// ---- one side's resources -----------------------------------------------------
struct Side {
  ti_ops_t* ops = nullptr;
  ti_handle_t ti = nullptr;
  ti_endpoint_handle_t me = nullptr, peer = nullptr;
  ti_pd_handle_t pd = nullptr;
  ti_cq_handle_t cq = nullptr;
  ti_res_pool_handle_t msgs = nullptr, rdmas = nullptr;
  ti_conn_handle_t conn = nullptr, listen_conn = nullptr;
  ti_conn_request_t req{};
  volatile int requests = 0, replies = 0, destroyed = 0, disconnected = 0, errors = 0;
  ti_status_t last_error = TI_SUCCESS;
  ElementQueue sent, received, rdma_done;
  unsigned char* region = nullptr;
  ti_rdma_desc_t region_desc{};
  ti_mem_handle_t region_mem = nullptr;
  unsigned char reply_private[64] = {};
};
Side g_server, g_client;

Side& side_of_cq(ti_cq_handle_t cq) { return cq == g_server.cq ? g_server : g_client; }
void on_send(ti_cq_handle_t cq, ti_data_element_t* list) { side_of_cq(cq).sent.add_list(list); }
void on_recv(ti_cq_handle_t cq, ti_data_element_t* list) { side_of_cq(cq).received.add_list(list); }
void on_rdma(ti_cq_handle_t cq, ti_data_element_t* list) { side_of_cq(cq).rdma_done.add_list(list); }
void on_error(ti_err_rec_t* rec) {
  Side* s = static_cast<Side*>(rec->context);
  s->last_error = rec->code;
  s->errors = s->errors + 1;
}
void on_destroyed(void* ctx) {
  Side* s = static_cast<Side*>(ctx);
  s->destroyed = s->destroyed + 1;
}
void on_disconnected(void* ctx) {
  Side* s = static_cast<Side*>(ctx);
  s->disconnected = s->disconnected + 1;
}

ti_comp_info_t comp_of(Side& s) {
  ti_comp_info_t c{};
  c.h_send_cq = c.h_recv_cq = s.cq;
  c.pfn_send_cb = on_send;
  c.pfn_recv_cb = on_recv;
  c.pfn_rdma_cb = on_rdma;
  c.pfn_err_cb = on_error;
  c.p_err_context = &s;
  return c;
}

void open_side(Side& s, std::uint32_t peer_node) {
  s.ops = ti_ib_transport_load();
  ASSERT_NE(s.ops, nullptr);
  ASSERT_EQ(s.ops->create_ti(&s.ti), TI_SUCCESS);
  ti_inet_addr_t me = ip_of_node(nicsim_node_id()), peer = ip_of_node(peer_node);
  ASSERT_EQ(s.ops->create_endpoint(s.ti, &me, kPort, &s.me), TI_SUCCESS);
  ASSERT_EQ(s.ops->create_endpoint(s.ti, &peer, kPort, &s.peer), TI_SUCCESS);
  ASSERT_EQ(s.ops->create_pd(s.ti, s.me, &s.pd), TI_SUCCESS);
  ASSERT_EQ(s.ops->create_cq(s.ti, s.pd, 64, &s.cq), TI_SUCCESS);
  uint32_t sizes[2] = {1024, 512};
  ASSERT_EQ(s.ops->res_pool_create(s.ti, TI_RES_POOL_MSG, 24, 2, sizes, 16, &s.msgs), TI_SUCCESS);
  uint32_t rsize = 8192;
  ASSERT_EQ(s.ops->res_pool_create(s.ti, TI_RES_POOL_RDMA, 4, 1, &rsize, 0, &s.rdmas), TI_SUCCESS);
  s.region = static_cast<unsigned char*>(nicsim_alloc(kRegion, 64));
  ASSERT_EQ(s.ops->reg_virt_mem(s.ti, s.pd, s.region, kRegion, TI_MEM_READ_WRITE, &s.region_desc, &s.region_mem),
            TI_SUCCESS);
}

ti_data_element_t* get(Side& s, ti_res_pool_handle_t pool, uint32_t n) {
  ti_pool_response_t r{};
  EXPECT_EQ(s.ops->res_pool_get(pool, n, FALSE, nullptr, nullptr, nullptr, &r), TI_SUCCESS);
  EXPECT_EQ(r.element_count, n);
  return r.p_element_list;
}

void put_all(Side& s, ElementQueue& q, ti_res_pool_handle_t pool) {
  for (int i = 0; i < q.count && i < 256; ++i) EXPECT_EQ(s.ops->res_pool_put(pool, q.items[i]), TI_SUCCESS);
  q.count = 0;
}

void close_side(Side& s) {
  ASSERT_EQ(s.ops->destroy_ti(s.ti, on_destroyed, &s), TI_SUCCESS);
  EXPECT_TRUE(wait_until(s.destroyed, 1));
  EXPECT_EQ(s.ops->create_pd(s.ti, s.me, &s.pd), TI_INVALID_HANDLE);  // the handle is gone
  nicsim_free(s.region);
}

// ---- the server ---------------------------------------------------------------
void server_request(ti_conn_request_t* r) {
  g_server.req = *r;  // deferred: the main thread accepts
  g_server.requests = g_server.requests + 1;
}

void server_main() {
  Side& s = g_server;
  open_side(s, nicsim_workload_node(1));
  for (std::uint32_t i = 0; i < kRegion; ++i) s.region[i] = pattern(9, i);
  std::uint64_t five = 5;
  std::memcpy(s.region + kRegion - 8, &five, 8);
  ti_conn_attr_t attr = default_attr();
  ti_conn_info_t info{};
  info.src_ep = s.me;
  info.pdh = s.pd;
  info.conn_request_cb = server_request;
  info.context = &s;
  ASSERT_EQ(s.ops->listen(s.ti, &attr, &info, nullptr, &s.listen_conn), TI_SUCCESS);
  nicsim_barrier();
  ASSERT_TRUE(wait_until(s.requests, 1));
  EXPECT_EQ(s.req.cb_type, CN_REQUEST);
  EXPECT_EQ(s.req.caller, 1);
  EXPECT_EQ(s.req.context, &s);
  ASSERT_NE(s.req.private_data, nullptr);
  EXPECT_EQ(std::memcmp(s.req.private_data, "hello, server", 13), 0);
  // The reply's private data: the region's RDMA descriptor.
  std::memcpy(s.reply_private, &s.region_desc, sizeof s.region_desc);
  s.req.private_data = s.reply_private;
  s.req.private_data_len = sizeof s.region_desc;
  ti_comp_info_t comp = comp_of(s);
  EXPECT_EQ(s.ops->msg_send(s.req.conn_handle, get(s, s.msgs, 1)), TI_INVALID_OPERATION);  // not yet
  ASSERT_EQ(s.ops->accept(&s.req, 0, &comp, get(s, s.msgs, 8)), TI_SUCCESS);
  s.conn = s.req.conn_handle;
  // Three messages, then the bundled one (after an RDMA write).
  ASSERT_TRUE(wait_until(s.received.count, 4));
  for (int k = 0; k < 3; ++k) {
    ti_data_element_t* e = s.received.items[k];
    EXPECT_EQ(e->status, TI_SUCCESS);
    EXPECT_EQ(e->recv_byte_count, 1024u + 200u);
    bool ok = true;
    for (std::size_t i = 0; i < 1024; ++i)
      ok = ok && static_cast<unsigned char*>(e->local_data_desc[0].vaddr)[i] == pattern(k, i);
    for (std::size_t i = 0; i < 200; ++i)
      ok = ok && static_cast<unsigned char*>(e->local_data_desc[1].vaddr)[i] == pattern(k, 1024 + i);
    EXPECT_TRUE(ok) << "message " << k;
    EXPECT_EQ(e->oob_data_len, k == 1 ? 4u : 0u);
    if (k == 1) {
      EXPECT_EQ(e->oob_data, 0xdeadbeefu);
    }
  }
  // The bundled message found the RDMA write's bytes already in place.
  EXPECT_EQ(s.received.items[3]->recv_byte_count, 8u);
  for (std::size_t i = 0; i < 100; ++i) EXPECT_EQ(s.region[32768 + i], pattern(5, i)) << i;
  for (std::size_t i = 0; i < 8192; ++i)
    if (s.region[i] != pattern(4, i)) ADD_FAILURE() << "RDMA write byte " << i;
  std::uint64_t word;
  nicsim_sleep_ns(50000);  // the client's atomics
  std::memcpy(&word, s.region + kRegion - 8, 8);
  EXPECT_EQ(word, 42u);
  ASSERT_TRUE(wait_until(s.errors, 1));  // the client disconnected
  EXPECT_EQ(s.last_error, TI_CANCELED);
  // Every posted receive came back once: 4 messages, 4 flushed.
  ASSERT_TRUE(wait_until(s.received.count, 8));
  EXPECT_EQ(s.received.count, 8);
  for (int k = 4; k < 8; ++k) EXPECT_EQ(s.received.items[k]->status, TI_CANCELED);
  put_all(s, s.received, s.msgs);
  EXPECT_EQ(s.ops->disconnect(s.conn, on_disconnected, &s), TI_SUCCESS);
  EXPECT_EQ(s.ops->disconnect(s.listen_conn, nullptr, nullptr), TI_SUCCESS);
  EXPECT_TRUE(wait_until(s.disconnected, 1));
  // One element is still out (the refused msg_send's): destroy_ti takes it.
  EXPECT_EQ(s.ops->res_pool_destroy(s.msgs), TI_RESOURCE_BUSY);
  close_side(s);
}

// ---- the client ---------------------------------------------------------------
void client_reply(ti_conn_request_t* r) {
  Side& c = g_client;
  if (r->cb_type == CN_REPLY && r->status == TI_SUCCESS) {
    std::memcpy(c.reply_private, r->private_data, sizeof c.region_desc);
    ti_comp_info_t comp = comp_of(c);
    ti_pool_response_t pr{};
    c.ops->res_pool_get(c.msgs, 2, FALSE, nullptr, nullptr, nullptr, &pr);
    EXPECT_EQ(c.ops->accept(r, 0, &comp, pr.p_element_list), TI_SUCCESS);
  }
  c.replies = c.replies + 1;
}

void fill_message(ti_data_element_t* e, int k) {
  for (std::size_t i = 0; i < 1024; ++i) static_cast<unsigned char*>(e->local_data_desc[0].vaddr)[i] = pattern(k, i);
  for (std::size_t i = 0; i < 200; ++i)
    static_cast<unsigned char*>(e->local_data_desc[1].vaddr)[i] = pattern(k, 1024 + i);
  e->local_data_desc[0].byte_count = 1024;
  e->local_data_desc[1].byte_count = 200;
  e->msg_opt = TI_OPT_SIGNALED | TI_OPT_SOLICITED;
  e->oob_data_len = k == 1 ? 4 : 0;
  e->oob_data = k == 1 ? 0xdeadbeefu : 0;
}

void client_rdma(Side& c, const ti_rdma_desc_t& remote) {
  ti_data_element_t* w = get(c, c.rdmas, 1);
  ti_local_data_desc_t* l = TI_RDMA_LOCAL_DESC(w);
  for (std::size_t i = 0; i < 8192; ++i) static_cast<unsigned char*>(l[0].vaddr)[i] = pattern(4, i);
  w->rdma_data_desc[0] = remote;
  ASSERT_EQ(c.ops->rdma_write(c.conn, w), TI_SUCCESS);
  ti_data_element_t* r = get(c, c.rdmas, 1);
  TI_RDMA_LOCAL_DESC(r)[0].byte_count = 4096;
  r->rdma_data_desc[0] = {remote.vaddr + 16384, remote.rkey};
  ASSERT_EQ(c.ops->rdma_read(c.conn, r), TI_SUCCESS);
  ASSERT_TRUE(wait_until(c.rdma_done.count, 2));
  for (std::size_t i = 0; i < 4096; ++i)
    if (static_cast<unsigned char*>(TI_RDMA_LOCAL_DESC(r)[0].vaddr)[i] != pattern(9, 16384 + i))
      ADD_FAILURE() << "RDMA read byte " << i;
  EXPECT_EQ(w->status, TI_SUCCESS);
  EXPECT_EQ(r->status, TI_SUCCESS);
  put_all(c, c.rdma_done, c.rdmas);
}

void client_atomics(Side& c, const ti_rdma_desc_t& remote) {
  ti_data_element_t* a = get(c, c.rdmas, 1);
  unsigned char* buf = static_cast<unsigned char*>(TI_RDMA_LOCAL_DESC(a)[0].vaddr);
  std::uint64_t ops[2] = {3, 0};
  std::memcpy(buf, ops, 16);
  a->rdma_data_desc[0] = {remote.vaddr + kRegion - 8, remote.rkey};
  ASSERT_EQ(c.ops->atomic_op(c.conn, TI_ATOMIC_FETCH_ADD, a), TI_SUCCESS);
  ASSERT_TRUE(wait_until(c.rdma_done.count, 1));
  std::uint64_t old;
  std::memcpy(&old, buf, 8);
  EXPECT_EQ(old, 5u);
  put_all(c, c.rdma_done, c.rdmas);
  a = get(c, c.rdmas, 1);
  buf = static_cast<unsigned char*>(TI_RDMA_LOCAL_DESC(a)[0].vaddr);
  std::uint64_t cs[2] = {8, 42};
  std::memcpy(buf, cs, 16);
  a->rdma_data_desc[0] = {remote.vaddr + kRegion - 8, remote.rkey};
  ASSERT_EQ(c.ops->atomic_op(c.conn, TI_ATOMIC_COMPARE_SWAP, a), TI_SUCCESS);
  ASSERT_TRUE(wait_until(c.rdma_done.count, 1));
  std::memcpy(&old, buf, 8);
  EXPECT_EQ(old, 8u);
  EXPECT_EQ(c.ops->atomic_op(c.conn, static_cast<ti_atomic_op_t>(7), a), TI_INVALID_PARAMETER);
  put_all(c, c.rdma_done, c.rdmas);
}

void client_main() {
  Side& c = g_client;
  open_side(c, nicsim_workload_node(0));
  nicsim_barrier();
  ti_conn_attr_t attr = default_attr();
  ti_conn_info_t info{};
  char hello[] = "hello, server";
  info.src_ep = c.me;
  info.dst_ep = c.peer;
  info.pdh = c.pd;
  info.send_cqh = info.recv_cqh = c.cq;
  info.private_data = hello;
  info.private_data_len = sizeof hello;
  info.conn_request_cb = client_reply;
  info.context = &c;
  ti_conn_request_t req{};
  ASSERT_EQ(c.ops->connect(c.ti, &attr, &info, &req, &c.conn), TI_SUCCESS);
  ASSERT_TRUE(wait_until(c.replies, 1));
  EXPECT_EQ(req.cb_type, CN_REPLY);
  EXPECT_EQ(req.status, TI_SUCCESS);
  EXPECT_EQ(req.conn_handle, c.conn);  // connect's handle, the same
  ti_rdma_desc_t remote;
  std::memcpy(&remote, c.reply_private, sizeof remote);
  // Three messages in one chain, two buffers each, the second with OOB data.
  ti_data_element_t* chain = get(c, c.msgs, 3);
  int k = 0;
  for (ti_data_element_t* e = chain; e; e = e->p_next_msg) fill_message(e, k++);
  // TI_PENDING while the server's first credits are on their way.
  const ti_status_t sent = c.ops->msg_send(c.conn, chain);
  ASSERT_TRUE(sent == TI_SUCCESS || sent == TI_PENDING) << sent;
  ASSERT_TRUE(wait_until(c.sent.count, 3));
  for (int i = 0; i < 3; ++i) EXPECT_EQ(c.sent.items[i]->status, TI_SUCCESS);
  put_all(c, c.sent, c.msgs);
  client_rdma(c, remote);
  // An RDMA write with its message: the message lands after the bytes.
  ti_data_element_t* w = get(c, c.rdmas, 1);
  TI_RDMA_LOCAL_DESC(w)[0].byte_count = 100;
  for (std::size_t i = 0; i < 100; ++i) static_cast<unsigned char*>(TI_RDMA_LOCAL_DESC(w)[0].vaddr)[i] = pattern(5, i);
  w->rdma_data_desc[0] = {remote.vaddr + 32768, remote.rkey};
  ti_data_element_t* m = get(c, c.msgs, 1);
  m->local_data_desc[0].byte_count = 8;
  m->local_data_desc[1].byte_count = 0;
  m->num_io_bufs = 1;
  ASSERT_EQ(c.ops->rdma_write_send(c.conn, w, m), TI_SUCCESS);
  ASSERT_TRUE(wait_until(c.sent.count, 1));
  ASSERT_TRUE(wait_until(c.rdma_done.count, 1));
  m->num_io_bufs = 2;
  put_all(c, c.sent, c.msgs);
  put_all(c, c.rdma_done, c.rdmas);
  client_atomics(c, remote);
  ti_conn_profile_t prof{};
  prof.conn_handle = c.conn;
  uint32_t bytes = sizeof prof;
  EXPECT_EQ(c.ops->io_ctl(c.ti, TI_GET_CONN_PROFILE, &bytes, &prof), TI_SUCCESS);
  EXPECT_EQ(prof.path_mtu, 2048u);
  EXPECT_EQ(prof.remote_port, kPort);
  ASSERT_EQ(c.ops->disconnect(c.conn, on_disconnected, &c), TI_SUCCESS);
  ASSERT_TRUE(wait_until(c.disconnected, 1));
  // The two receives accept posted come back flushed.
  ASSERT_TRUE(wait_until(c.received.count, 2));
  for (int i = 0; i < 2; ++i) EXPECT_EQ(c.received.items[i]->status, TI_CANCELED);
  put_all(c, c.received, c.msgs);
  EXPECT_EQ(c.ops->msg_send(c.conn, get(c, c.msgs, 1)), TI_INVALID_HANDLE);  // the handle is gone
  close_side(c);
}

int ops_probe(int, char**) {
  if (nicsim_workload_rank() == 0)
    server_main();
  else
    client_main();
  nicsim_barrier();
  return 0;
}
const BuiltinProgram reg_ops("ti_ops_probe", ops_probe, "test: every TI operation between two nodes");

Counters counters_of(World& w, const std::string& name) {
  for (std::uint32_t i = 0; i < w.num_nodes(); ++i)
    if (w.node(i).name() == name)
      if (TiNode* n = node_if_started(w.node(i).host())) return n->counters();
  ADD_FAILURE() << name << " has no transport";
  return {};
}

TEST(Ti, EveryOperationBetweenTwoNodesWithPayloadChecked) {
  nicsim::testing::RunOptions o;
  o.inspect = [](World& w) {
    EXPECT_EQ(counters_of(w, "h1").total(), 0u);
    EXPECT_EQ(counters_of(w, "h2").total(), 0u);
  };
  nicsim::testing::run_text(scenario(3, "ti_ops_probe", "nodes: \"h1\" nodes: \"h2\""), o);
}

}  // namespace
}  // namespace nicsim::ti

namespace nicsim::ti {
namespace {

TEST(Sdp, PingpongBySizeEveryByteChecked) {
  const auto r = nicsim::testing::run_text(
      testing::scenario(3, "sdp_pingpong", "nodes: \"h1\" nodes: \"h2\"", " args: \"--iters=4\""));
  EXPECT_EQ(r.results.at("bytes_ok"), 2.0 * 4 * (1 + 64 + 1024 + 4096 + 16384 + 65536));
  EXPECT_GT(r.results.at("sdp_pingpong_1_ns"), 0);
}

// 200 round trips a size: at most two (1%) are slower than the p99 (nearest
// rank, the 198th), so the mean lies under (198 p99 + 2 max) / 200 (within
// the mean's nanosecond clock); the slowest, the first 64 KiB round trip
// (zero-copy's first use of the buffers), lies well beyond the p99.
TEST(Sdp, PingpongReportsItsTail) {
  const auto r = nicsim::testing::run_text(testing::scenario(3, "sdp_pingpong", "nodes: \"h1\" nodes: \"h2\"",
                                                             " args: \"--sizes=1,65536\" args: \"--iters=200\""));
  for (const char* size : {"1", "65536"}) {
    const std::string name = std::string("sdp_pingpong_") + size + "_ns";
    const double mean = r.results.at(name), p99 = r.results.at(name + "_p99"), max = r.results.at(name + "_max");
    EXPECT_GT(p99, 0) << size;
    EXPECT_GE(max, p99) << size;
    EXPECT_GE(max, mean) << size;
    EXPECT_LE(mean, (198 * p99 + 2 * max) / 200 + 0.01) << size;
  }
  EXPECT_GT(r.results.at("sdp_pingpong_65536_ns_max"), 1.2 * r.results.at("sdp_pingpong_65536_ns_p99"));
}

}  // namespace
}  // namespace nicsim::ti
