// CN_MRA: a server that takes longer than the CM's cm.mra_after to accept
// makes its CM send an MRA; the client's connect callback hears CN_MRA
// (TI_PENDING, nothing to answer) before CN_REPLY, and the connection then
// carries its message intact. A prompt accept gives no CN_MRA.
#include <gtest/gtest.h>

#include <vector>

#include "tests/world_run.h"
#include "ti/ib/ti_ib.h"
// after ti_ib.h: the CM's header needs the kernel verbs' types first
#include "cm/core/cm_node.h"
#include "ti/tests/ti_peer.h"
#include "world/node.h"
#include "world/programs.h"

namespace nicsim::ti {
namespace {

using namespace nicsim::ti::testing;

constexpr ti_port_t kPort = 5160;
constexpr std::uint32_t kBytes = 900;
constexpr std::uint64_t kSlowAcceptNs = 1000000;  // beyond cm.mra_after (400 us), within the MRA's 16 ms

Peer g_srv, g_cli;

// One connect of the client and what its callback heard.
struct Attempt {
  ti_conn_handle_t conn = nullptr;
  std::vector<std::uint16_t> cb_types;
  std::vector<ti_status_t> statuses;
  volatile int replies = 0;
  bool mra_named_the_connection = true;
  int wrong = -1;
};
Attempt g_slow, g_prompt;
std::uint64_t g_server_mras = 0;

void srv_recv(ti_cq_handle_t, ti_data_element_t* list) { g_srv.received.add_list(list); }
void cli_sent(ti_cq_handle_t, ti_data_element_t* list) { g_cli.sent.add_list(list); }

void cli_callback(ti_conn_request_t* r) {
  auto* a = static_cast<Attempt*>(r->context);
  a->cb_types.push_back(r->cb_type);
  a->statuses.push_back(r->status);
  if (r->cb_type == CN_MRA) {
    a->mra_named_the_connection = a->mra_named_the_connection && r->conn_handle == a->conn && r->caller == 0;
    return;  // information only: nothing to accept or reject
  }
  if (r->cb_type == CN_REPLY && r->status == TI_SUCCESS) {
    ti_comp_info_t comp = peer_comp(g_cli, cli_sent, cli_sent);
    EXPECT_EQ(g_cli.ops->accept(r, 0, &comp, nullptr), TI_SUCCESS);
  }
  a->replies = a->replies + 1;
}

// Accepts the next request after `delay_ns`, then checks its message.
ti_conn_handle_t serve(Peer& s, int nth, std::uint64_t delay_ns, int seed, Attempt& seen) {
  if (!wait_until(s.requests, nth)) return nullptr;
  nicsim_sleep_ns(delay_ns);
  ti_comp_info_t comp = peer_comp(s, srv_recv, srv_recv);
  if (s.ops->accept(&s.req, 0, &comp, peer_get(s, 2)) != TI_SUCCESS) return nullptr;
  const ti_conn_handle_t conn = s.req.conn_handle;
  const int before = s.received.count;
  if (!wait_until(s.received.count, before + 1)) return nullptr;
  const ti_data_element_t* e = s.received.items[before];
  EXPECT_EQ(e->recv_byte_count, kBytes);
  const auto* b = static_cast<const unsigned char*>(e->local_data_desc[0].vaddr);
  seen.wrong = 0;
  for (std::uint32_t i = 0; i < kBytes; ++i) seen.wrong += b[i] != pattern(seed, i);
  return conn;
}

void mra_server() {
  Peer& s = g_srv;
  peer_open(s, nicsim_workload_node(1), kPort, 8, 1024);
  ti_conn_attr_t attr = default_attr();
  ti_conn_info_t info = peer_info(s, peer_keep_request, false);
  ASSERT_EQ(s.ops->listen(s.ti, &attr, &info, nullptr, &s.listen_conn), TI_SUCCESS);
  nicsim_barrier();
  const ti_conn_handle_t slow = serve(s, 1, kSlowAcceptNs, 1, g_slow);
  const ti_conn_handle_t prompt = serve(s, 2, 0, 2, g_prompt);
  ASSERT_NE(slow, nullptr);
  ASSERT_NE(prompt, nullptr);
  ASSERT_TRUE(wait_until(s.errors, 2));          // the client disconnected both
  ASSERT_TRUE(wait_until(s.received.count, 4));  // the unused receive of each came back
  peer_put_all(s, s.received);
  for (ti_conn_handle_t c : {slow, prompt, s.listen_conn})
    EXPECT_EQ(s.ops->disconnect(c, nullptr, nullptr), TI_SUCCESS);
  peer_close(s);
}

void send_one(Peer& c, ti_conn_handle_t conn, int seed) {
  ti_data_element_t* e = peer_get(c, 1);
  auto* b = static_cast<unsigned char*>(e->local_data_desc[0].vaddr);
  for (std::uint32_t i = 0; i < kBytes; ++i) b[i] = pattern(seed, i);
  e->local_data_desc[0].byte_count = kBytes;
  e->msg_opt = TI_OPT_SIGNALED;
  const int before = c.sent.count;
  const ti_status_t sent = c.ops->msg_send(conn, e);  // TI_PENDING: no credits yet
  ASSERT_TRUE(sent == TI_SUCCESS || sent == TI_PENDING) << sent;
  ASSERT_TRUE(wait_until(c.sent.count, before + 1));
  EXPECT_EQ(c.sent.items[before]->status, TI_SUCCESS);
}

void connect_and_send(Peer& c, Attempt& a, int seed) {
  ti_conn_attr_t attr = default_attr();
  ti_conn_info_t info = peer_info(c, cli_callback, true);
  info.context = &a;
  ti_conn_request_t req{};
  ASSERT_EQ(c.ops->connect(c.ti, &attr, &info, &req, &a.conn), TI_SUCCESS);
  ASSERT_TRUE(wait_until(a.replies, 1, 100000));
  send_one(c, a.conn, seed);
}

void mra_client() {
  Peer& c = g_cli;
  peer_open(c, nicsim_workload_node(0), kPort, 4, 1024);
  nicsim_barrier();
  connect_and_send(c, g_slow, 1);
  connect_and_send(c, g_prompt, 2);
  peer_put_all(c, c.sent);
  for (Attempt* a : {&g_slow, &g_prompt}) {
    c.disconnected = 0;
    ASSERT_EQ(c.ops->disconnect(a->conn, peer_counted, const_cast<int*>(&c.disconnected)), TI_SUCCESS);
    ASSERT_TRUE(wait_until(c.disconnected, 1));
  }
  peer_close(c);
}

int mra_probe(int, char**) {
  if (nicsim_workload_rank() == 0)
    mra_server();
  else
    mra_client();
  nicsim_barrier();
  return 0;
}
const BuiltinProgram reg_mra("ti_mra_probe", mra_probe, "test: CN_MRA from a slow accept");

TEST(Ti, SlowAcceptGivesTheClientCnMraBeforeCnReplyAndPromptOneNone) {
  nicsim::testing::RunOptions o;
  o.inspect = [](World& w) {
    if (cm::CmNode* n = cm::node_cm_if_started(w.node(1).host())) g_server_mras = n->counters().mras_sent;
    for (std::uint32_t i = 1; i < w.num_nodes(); ++i)
      if (TiNode* n = node_if_started(w.node(i).host())) {
        EXPECT_EQ(n->counters().total(), 0u) << w.node(i).name();
      }
  };
  nicsim::testing::run_text(scenario(3, "ti_mra_probe", "nodes: \"h1\" nodes: \"h2\""), o);
  EXPECT_EQ(g_server_mras, 1u) << "the server's CM sent one MRA, for the slow accept";
  const std::vector<std::uint16_t> slow_types = {CN_MRA, CN_REPLY};
  const std::vector<ti_status_t> slow_statuses = {TI_PENDING, TI_SUCCESS};
  EXPECT_EQ(g_slow.cb_types, slow_types);
  EXPECT_EQ(g_slow.statuses, slow_statuses);
  EXPECT_TRUE(g_slow.mra_named_the_connection);
  EXPECT_EQ(g_slow.wrong, 0);
  const std::vector<std::uint16_t> prompt_types = {CN_REPLY};
  EXPECT_EQ(g_prompt.cb_types, prompt_types);
  EXPECT_EQ(g_prompt.wrong, 0);
}

}  // namespace
}  // namespace nicsim::ti
