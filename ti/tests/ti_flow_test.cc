// Two-sided tests of the TI's flow paths: a sender far ahead of a slow
// receiver (nothing lost, every byte checked), and its pool running dry so
// that asynchronous gets (ti_res_pool_cb_t) are served later, some by
// partial answers, when completions bring elements back. With
// msg_flow_control the provider's credits hold the sends (no RNR NAK on
// the wire); without, the hardware's RNR NAKs and retries do (the HCA
// counts them), and still nothing is lost.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>

#include "core/sim.h"
#include "tests/world_run.h"
#include "trace/stats.h"
#include "ti/ib/ti_ib.h"
#include "ti/tests/ti_peer.h"
#include "world/node.h"
#include "world/programs.h"

namespace nicsim::ti {
namespace {

using namespace nicsim::ti::testing;

constexpr ti_port_t kPort = 5100;
constexpr int kMessages = 64;
constexpr std::uint32_t kBytes = 1000;
constexpr std::uint32_t kRecvBufs = 2;      // the receiver's posted buffers
constexpr std::uint32_t kSendElements = 6;  // the sender's pool
constexpr std::uint64_t kReceiverPauseNs = 20000;

Peer g_rx, g_tx;
bool g_flow_control = true;  // both sides' msg_flow_control

struct FlowStats {
  volatile int answers = 0, partial_answers = 0, pending_gets = 0, delivered = 0, requested = 0;
  volatile int posted = 0, completed = 0, max_outstanding = 0, bad_sends = 0, refused_sync_gets = 0;
  ti_data_element_t* ready[128] = {};  // elements the gets delivered, not yet used
  volatile int ready_count = 0;
  std::uint64_t first_rx_ns = 0, last_rx_ns = 0, last_post_ns = 0;
};
FlowStats g_flow;

void rx_recv(ti_cq_handle_t, ti_data_element_t* list) { g_rx.received.add_list(list); }
void rx_send(ti_cq_handle_t, ti_data_element_t* list) { g_rx.sent.add_list(list); }

// Send completions go straight back to the pool (interrupt context); the
// put serves the waiting gets.
void tx_sent(ti_cq_handle_t, ti_data_element_t* list) {
  while (list) {
    ti_data_element_t* next = list->p_next_msg;
    list->p_next_msg = nullptr;
    if (list->status != TI_SUCCESS) g_flow.bad_sends = g_flow.bad_sends + 1;
    g_flow.completed = g_flow.completed + 1;
    EXPECT_EQ(g_tx.ops->res_pool_put(g_tx.pool, list), TI_SUCCESS);
    list = next;
  }
}

void tx_pool_answer(ti_pool_response_t* r) {
  EXPECT_EQ(r->status, TI_SUCCESS);
  EXPECT_EQ(r->p_context1, &g_flow);
  g_flow.answers = g_flow.answers + 1;
  if (r->element_count < 3) g_flow.partial_answers = g_flow.partial_answers + 1;
  std::uint32_t n = 0;
  for (ti_data_element_t* e = r->p_element_list; e; e = e->p_next_msg, ++n) {
    if (g_flow.ready_count < 128) g_flow.ready[g_flow.ready_count] = e;
    g_flow.ready_count = g_flow.ready_count + 1;
  }
  EXPECT_EQ(n, r->element_count);
  g_flow.delivered = g_flow.delivered + static_cast<int>(n);
}

void flow_server() {
  Peer& s = g_rx;
  peer_open(s, nicsim_workload_node(1), kPort, 4, 1024);
  ti_conn_attr_t attr = default_attr();
  attr.msg_flow_control = g_flow_control ? TRUE : FALSE;
  ti_conn_info_t info = peer_info(s, peer_keep_request, false);
  ASSERT_EQ(s.ops->listen(s.ti, &attr, &info, nullptr, &s.listen_conn), TI_SUCCESS);
  nicsim_barrier();
  ASSERT_TRUE(wait_until(s.requests, 1));
  ti_comp_info_t comp = peer_comp(s, rx_send, rx_recv);
  ASSERT_EQ(s.ops->accept(&s.req, 0, &comp, peer_get(s, kRecvBufs)), TI_SUCCESS);
  s.conn = s.req.conn_handle;
  EXPECT_EQ(s.ops->disconnect(s.listen_conn, nullptr, nullptr), TI_SUCCESS);
  for (int k = 0; k < kMessages; ++k) {
    ASSERT_TRUE(wait_until(s.received.count, k + 1)) << "message " << k;
    ti_data_element_t* e = s.received.items[k];
    if (k == 0) g_flow.first_rx_ns = nicsim_now_ns();
    EXPECT_EQ(e->status, TI_SUCCESS);
    EXPECT_EQ(e->recv_byte_count, kBytes);
    const auto* b = static_cast<const unsigned char*>(e->local_data_desc[0].vaddr);
    int wrong = 0;
    for (std::uint32_t i = 0; i < kBytes; ++i) wrong += b[i] != pattern(k, i);
    EXPECT_EQ(wrong, 0) << "message " << k;
    nicsim_sleep_ns(kReceiverPauseNs);  // the slow receiver
    ASSERT_EQ(s.ops->msg_recv(s.conn, e), TI_SUCCESS);
  }
  g_flow.last_rx_ns = nicsim_now_ns();
  // The sender disconnects: the two reposted receives come back flushed.
  ASSERT_TRUE(wait_until(s.errors, 1));
  EXPECT_EQ(s.error_code, TI_CANCELED);
  ASSERT_TRUE(wait_until(s.received.count, kMessages + static_cast<int>(kRecvBufs)));
  for (int k = kMessages; k < s.received.count; ++k) EXPECT_EQ(s.received.items[k]->status, TI_CANCELED);
  EXPECT_EQ(s.received.count, kMessages + static_cast<int>(kRecvBufs));
  for (int k = kMessages; k < s.received.count; ++k)  // the earlier entries were reposted
    EXPECT_EQ(s.ops->res_pool_put(s.pool, s.received.items[k]), TI_SUCCESS);
  EXPECT_EQ(s.ops->disconnect(s.conn, peer_counted, const_cast<int*>(&s.disconnected)), TI_SUCCESS);
  EXPECT_TRUE(wait_until(s.disconnected, 1));
  EXPECT_EQ(s.ops->res_pool_destroy(s.pool), TI_SUCCESS);
  peer_close(s);
}

void flow_client_reply(ti_conn_request_t* r) {
  peer_keep_request(r);
  ti_comp_info_t comp = peer_comp(g_tx, tx_sent, tx_sent);
  EXPECT_EQ(g_tx.ops->accept(r, 0, &comp, nullptr), TI_SUCCESS);
}

// The next element to send: one the gets delivered, else a new
// asynchronous get of three (partial allocation allowed) and a wait.
ti_data_element_t* next_element(Peer& c, int& used) {
  if (used == g_flow.ready_count && g_flow.delivered == g_flow.requested) {
    g_flow.requested = g_flow.requested + 3;
    const ti_status_t s = c.ops->res_pool_get(c.pool, 3, TRUE, tx_pool_answer, &g_flow, nullptr, nullptr);
    EXPECT_TRUE(s == TI_SUCCESS || s == TI_PENDING) << s;
    if (s == TI_PENDING) {
      g_flow.pending_gets = g_flow.pending_gets + 1;
      // A synchronous get must not jump the queue of waiting gets.
      ti_pool_response_t r{};
      if (c.ops->res_pool_get(c.pool, 1, TRUE, nullptr, nullptr, nullptr, &r) == TI_INSUFFICIENT_RESOURCES)
        g_flow.refused_sync_gets = g_flow.refused_sync_gets + 1;
    }
  }
  if (!wait_until(g_flow.ready_count, used + 1)) return nullptr;
  return g_flow.ready[used++];
}

void flow_client() {
  Peer& c = g_tx;
  peer_open(c, nicsim_workload_node(0), kPort, kSendElements, 1024);
  nicsim_barrier();
  ti_conn_attr_t attr = default_attr();
  attr.msg_flow_control = g_flow_control ? TRUE : FALSE;
  ti_conn_info_t info = peer_info(c, flow_client_reply, true);
  ASSERT_EQ(c.ops->connect(c.ti, &attr, &info, &c.req, &c.conn), TI_SUCCESS);
  ASSERT_TRUE(wait_until(c.replies, 1));
  int used = 0;
  for (int k = 0; k < kMessages; ++k) {
    ti_data_element_t* e = next_element(c, used);
    ASSERT_NE(e, nullptr) << "message " << k;
    auto* b = static_cast<unsigned char*>(e->local_data_desc[0].vaddr);
    for (std::uint32_t i = 0; i < kBytes; ++i) b[i] = pattern(k, i);
    e->local_data_desc[0].byte_count = kBytes;
    e->msg_opt = TI_OPT_SIGNALED;
    e->p_next_msg = nullptr;
    const ti_status_t s = c.ops->msg_send(c.conn, e);
    ASSERT_TRUE(s == TI_SUCCESS || s == TI_PENDING) << s;
    g_flow.posted = g_flow.posted + 1;
    const int outstanding = g_flow.posted - g_flow.completed;
    if (outstanding > g_flow.max_outstanding) g_flow.max_outstanding = outstanding;
  }
  g_flow.last_post_ns = nicsim_now_ns();
  ASSERT_TRUE(wait_until(g_flow.completed, kMessages, 2000000));
  // The last answer's unused elements go back too.
  ASSERT_TRUE(wait_until(g_flow.delivered, g_flow.requested));
  for (int k = used; k < g_flow.ready_count; ++k) EXPECT_EQ(c.ops->res_pool_put(c.pool, g_flow.ready[k]), TI_SUCCESS);
  EXPECT_EQ(c.errors, 0);
  ASSERT_EQ(c.ops->disconnect(c.conn, peer_counted, const_cast<int*>(&c.disconnected)), TI_SUCCESS);
  ASSERT_TRUE(wait_until(c.disconnected, 1));
  // Every element the gets delivered went back: the pool is whole.
  EXPECT_EQ(c.ops->res_pool_destroy(c.pool), TI_SUCCESS);
  peer_close(c);
}

int flow_probe(int, char**) {
  if (nicsim_workload_rank() == 0)
    flow_server();
  else
    flow_client();
  nicsim_barrier();
  return 0;
}
const BuiltinProgram reg_flow("ti_flow_probe", flow_probe, "test: slow receiver, flow control, async pool gets");

std::uint64_t g_rnr_naks = 0;

// Runs the slow receiver's scenario; g_rnr_naks: the RNR NAKs every HCA sent.
void run_flow() {
  nicsim::testing::RunOptions o;
  o.inspect = [](World& w) {
    for (std::uint32_t i = 1; i < w.num_nodes(); ++i)
      if (TiNode* n = node_if_started(w.node(i).host())) {
        EXPECT_EQ(n->counters().total(), 0u) << i;
      }
    g_rnr_naks = 0;
    for (const auto& s : Sim::get().stats().scalars())
      if (s.name == "rnr_naks_sent") g_rnr_naks += static_cast<std::uint64_t>(s.read());
  };
  nicsim::testing::run_text(scenario(3, "ti_flow_probe", "nodes: \"h1\" nodes: \"h2\""), o);
}

TEST(Ti, SlowReceiverWithFlowControlLosesNothingAndAsyncGetsServeTheSender) {
  run_flow();
  // The credits held the sender: the receiver's HCA never refused a send.
  EXPECT_EQ(g_rnr_naks, 0u);
  // The sender ran ahead of the receiver's two buffers by its whole pool.
  EXPECT_EQ(g_flow.max_outstanding, static_cast<int>(kSendElements));
  EXPECT_EQ(g_flow.bad_sends, 0);
  EXPECT_EQ(g_flow.completed, kMessages);
  // The receiver set the pace: one message per pause, none lost.
  EXPECT_GE(g_flow.last_rx_ns - g_flow.first_rx_ns, (kMessages - 1) * kReceiverPauseNs);
  EXPECT_LT(g_flow.last_post_ns, g_flow.last_rx_ns);
  // The pool ran dry: gets waited, were answered later (some partially),
  // and a synchronous get never jumped their queue.
  EXPECT_GT(g_flow.pending_gets, 0);
  EXPECT_GT(g_flow.partial_answers, 0);
  EXPECT_EQ(g_flow.refused_sync_gets, g_flow.pending_gets);
  EXPECT_EQ(g_flow.delivered, g_flow.requested);
  EXPECT_GE(g_flow.delivered, kMessages);
}

// Without msg_flow_control the sender overruns the two buffers: the
// receiver's HCA answers RNR NAKs, the sender's retries (without end) wait
// for the reposted buffers, and every message still arrives intact, in
// order, at the receiver's pace.
TEST(Ti, SlowReceiverWithoutFlowControlSeesRnrNaksAndLosesNothing) {
  g_flow_control = false;
  run_flow();
  EXPECT_GT(g_rnr_naks, 0u);
  EXPECT_EQ(g_flow.bad_sends, 0);
  EXPECT_EQ(g_flow.completed, kMessages);
  EXPECT_GE(g_flow.last_rx_ns - g_flow.first_rx_ns, (kMessages - 1) * kReceiverPauseNs);
  std::printf("RNR NAKs without flow control: %llu\n", static_cast<unsigned long long>(g_rnr_naks));
}

}  // namespace
}  // namespace nicsim::ti
