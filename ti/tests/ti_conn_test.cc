// Two-sided tests of the TI's connection edges: the listener's
// connect_request_timeout (a late accept or reject is TI_TIMEOUT, the
// client hears a reject), a reject whose private data the client reads,
// and a link failure in the middle of a stream (every outstanding element
// back once with an error status, the error callback once, the link
// device events on the node that lost its link).
#include <gtest/gtest.h>

#include <cstring>
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

constexpr ti_port_t kPort = 5200;
const char kNoRoom[] = "no room at this inn";

Peer g_srv, g_cli;

void ignore(ti_cq_handle_t, ti_data_element_t*) {}

void leak_check(World& w) {
  for (std::uint32_t i = 1; i < w.num_nodes(); ++i)
    if (TiNode* n = node_if_started(w.node(i).host())) {
      EXPECT_EQ(n->counters().total(), 0u) << w.node(i).name();
    }
}

// ---- the listen timeout and a reject with private data ----------------------------

struct TimeoutSeen {
  ti_status_t late_accept = TI_SUCCESS, late_reject = TI_SUCCESS, reject = TI_ERROR;
  std::vector<std::uint16_t> cb_types;
  std::vector<ti_status_t> statuses;
  std::string reject_private;
  int handles_gone = 0;
};
TimeoutSeen g_timeout;

void timeout_server() {
  Peer& s = g_srv;
  peer_open(s, nicsim_workload_node(1), kPort, 8, 256);
  ti_conn_attr_t attr = default_attr();
  attr.connect_request_timeout = 1;  // ms, twice: the request expires 2 ms after it came
  attr.connect_request_retries = 2;
  ti_conn_info_t info = peer_info(s, peer_keep_request, false);
  ASSERT_EQ(s.ops->listen(s.ti, &attr, &info, nullptr, &s.listen_conn), TI_SUCCESS);
  nicsim_barrier();
  ti_comp_info_t comp = peer_comp(s, ignore, ignore);
  // 1: accepted too late.
  ASSERT_TRUE(wait_until(s.requests, 1));
  nicsim_sleep_ns(3000000);
  ti_conn_request_t late = s.req;
  g_timeout.late_accept = s.ops->accept(&late, 0, &comp, nullptr);
  g_timeout.handles_gone += s.ops->msg_recv(late.conn_handle, nullptr) == TI_INVALID_HANDLE;
  nicsim_barrier();
  // 2: rejected too late.
  ASSERT_TRUE(wait_until(s.requests, 2));
  nicsim_sleep_ns(3000000);
  late = s.req;
  g_timeout.late_reject = s.ops->reject(&late);
  g_timeout.handles_gone += s.ops->msg_recv(late.conn_handle, nullptr) == TI_INVALID_HANDLE;
  nicsim_barrier();
  // 3: rejected in time, with a reason.
  ASSERT_TRUE(wait_until(s.requests, 3));
  ti_conn_request_t now = s.req;
  now.private_data = const_cast<char*>(kNoRoom);
  now.private_data_len = sizeof kNoRoom;
  g_timeout.reject = s.ops->reject(&now);
  nicsim_barrier();
  EXPECT_EQ(s.ops->disconnect(s.listen_conn, nullptr, nullptr), TI_SUCCESS);
  EXPECT_EQ(s.ops->res_pool_destroy(s.pool), TI_SUCCESS);
  peer_close(s);
}

void timeout_client_cb(ti_conn_request_t* r) {
  g_timeout.cb_types.push_back(r->cb_type);
  g_timeout.statuses.push_back(r->status);
  if (r->cb_type == CN_REJECT && r->private_data && r->private_data_len >= sizeof kNoRoom)
    g_timeout.reject_private.assign(static_cast<const char*>(r->private_data), sizeof kNoRoom - 1);
  if (r->cb_type != CN_MRA) g_cli.replies = g_cli.replies + 1;  // an MRA is no answer
}

void timeout_client() {
  Peer& c = g_cli;
  peer_open(c, nicsim_workload_node(0), kPort, 8, 256);
  nicsim_barrier();
  for (int k = 0; k < 3; ++k) {
    ti_conn_attr_t attr = default_attr();
    ti_conn_info_t info = peer_info(c, timeout_client_cb, true);
    char hello[16] = "attempt 0";
    hello[8] = static_cast<char>('0' + k);
    info.private_data = hello;
    info.private_data_len = sizeof hello;
    ti_conn_request_t req{};
    ti_conn_handle_t h = nullptr;
    ASSERT_EQ(c.ops->connect(c.ti, &attr, &info, &req, &h), TI_SUCCESS);
    ASSERT_TRUE(wait_until(c.replies, k + 1, 20000)) << "attempt " << k;
    EXPECT_EQ(req.cb_type, CN_REJECT);  // connect's OUT request holds the answer
    // A refused connection's handle is gone.
    EXPECT_EQ(c.ops->disconnect(h, nullptr, nullptr), TI_INVALID_HANDLE);
    nicsim_barrier();
  }
  EXPECT_EQ(c.ops->res_pool_destroy(c.pool), TI_SUCCESS);
  peer_close(c);
}

int timeout_probe(int, char**) {
  if (nicsim_workload_rank() == 0)
    timeout_server();
  else
    timeout_client();
  return 0;
}
const BuiltinProgram reg_timeout("ti_timeout_probe", timeout_probe, "test: listen timeout, reject with private data");

TEST(Ti, ListenTimeoutMakesLateAcceptAndRejectTimeOutAndARejectCarriesPrivateData) {
  nicsim::testing::RunOptions o;
  o.inspect = leak_check;
  nicsim::testing::run_text(scenario(3, "ti_timeout_probe", "nodes: \"h1\" nodes: \"h2\""), o);
  EXPECT_EQ(g_timeout.late_accept, TI_TIMEOUT);
  EXPECT_EQ(g_timeout.late_reject, TI_TIMEOUT);
  EXPECT_EQ(g_timeout.reject, TI_SUCCESS);
  EXPECT_EQ(g_timeout.handles_gone, 2);
  // The client: three rejects, the last with the server's reason; the two
  // requests the server left unanswered beyond cm.mra_after (400 us) were
  // acknowledged by an MRA first.
  const std::vector<std::uint16_t> types = {CN_MRA, CN_REJECT, CN_MRA, CN_REJECT, CN_REJECT};
  const std::vector<ti_status_t> statuses = {TI_PENDING, TI_REJECTED, TI_PENDING, TI_REJECTED, TI_REJECTED};
  EXPECT_EQ(g_timeout.cb_types, types);
  EXPECT_EQ(g_timeout.statuses, statuses);
  EXPECT_EQ(g_timeout.reject_private, std::string(kNoRoom));
}

// ---- a link failure mid-stream ----------------------------------------------------

constexpr int kMaxMessages = 4000;
constexpr std::uint32_t kStreamBytes = 2000;

struct LinkSeen {
  std::vector<int> returned;  // per message number: completions seen
  int ok = 0, failed = 0, canceled = 0, posted = 0, queued = 0;
  std::vector<ti_event_t> server_events, client_events;
  int server_messages = 0, server_wrong = 0, server_flushed = 0, server_recv_errors = 0;
  ti_status_t first_failure = TI_SUCCESS;
};
LinkSeen g_link;

void link_event(const ti_event_t ev, const void*, const void* ctx) {
  static_cast<std::vector<ti_event_t>*>(const_cast<void*>(ctx))->push_back(ev);
}

void stream_sent(ti_cq_handle_t, ti_data_element_t* list) {
  while (list) {
    ti_data_element_t* next = list->p_next_msg;
    list->p_next_msg = nullptr;
    const int k = static_cast<int>(*static_cast<std::uint32_t*>(list->p_context));
    if (k >= 0 && k < kMaxMessages) ++g_link.returned[static_cast<std::size_t>(k)];
    if (list->status == TI_SUCCESS) {
      ++g_link.ok;
    } else {
      if (g_link.first_failure == TI_SUCCESS) g_link.first_failure = list->status;
      list->status == TI_CANCELED ? ++g_link.canceled : ++g_link.failed;
    }
    EXPECT_EQ(g_cli.ops->res_pool_put(g_cli.pool, list), TI_SUCCESS);
    list = next;
  }
}

void stream_received(ti_cq_handle_t, ti_data_element_t* list) {
  while (list) {
    ti_data_element_t* next = list->p_next_msg;
    list->p_next_msg = nullptr;
    if (list->status == TI_SUCCESS) {
      const auto* b = static_cast<const unsigned char*>(list->local_data_desc[0].vaddr);
      const int k = g_link.server_messages++;
      for (std::uint32_t i = 0; i < kStreamBytes; ++i) g_link.server_wrong += b[i] != pattern(k, i);
      EXPECT_EQ(g_srv.ops->msg_recv(g_srv.conn, list), TI_SUCCESS);
    } else {
      list->status == TI_CANCELED ? ++g_link.server_flushed : ++g_link.server_recv_errors;
      EXPECT_EQ(g_srv.ops->res_pool_put(g_srv.pool, list), TI_SUCCESS);
    }
    list = next;
  }
}

void link_server() {
  Peer& s = g_srv;
  peer_open(s, nicsim_workload_node(1), kPort, 16, 4096);
  ASSERT_EQ(s.ops->events_register(&g_link.server_events, link_event), TI_SUCCESS);
  ti_conn_attr_t attr = default_attr();
  ti_conn_info_t info = peer_info(s, peer_keep_request, false);
  ASSERT_EQ(s.ops->listen(s.ti, &attr, &info, nullptr, &s.listen_conn), TI_SUCCESS);
  nicsim_barrier();
  ASSERT_TRUE(wait_until(s.requests, 1));
  ti_comp_info_t comp = peer_comp(s, ignore, stream_received);
  ASSERT_EQ(s.ops->accept(&s.req, 0, &comp, peer_get(s, 16)), TI_SUCCESS);
  s.conn = s.req.conn_handle;
  EXPECT_EQ(s.ops->disconnect(s.listen_conn, nullptr, nullptr), TI_SUCCESS);
  // The link goes down under the stream; the server gives up the
  // connection, its DREQ finds no way out and the CM declares it gone.
  ASSERT_TRUE(wait_for([] { return g_link.server_events.size() >= 3; }, 20000));
  EXPECT_EQ(s.ops->disconnect(s.conn, peer_counted, const_cast<int*>(&s.disconnected)), TI_SUCCESS);
  ASSERT_TRUE(wait_until(s.disconnected, 1, 1000000));
  EXPECT_EQ(g_link.server_flushed, 16);
  EXPECT_EQ(s.ops->events_deregister(&g_link.server_events, link_event), TI_SUCCESS);
  EXPECT_EQ(s.ops->res_pool_destroy(s.pool), TI_SUCCESS);
  peer_close(s);
}

void link_client_reply(ti_conn_request_t* r) {
  peer_keep_request(r);
  ti_comp_info_t comp = peer_comp(g_cli, stream_sent, ignore);
  EXPECT_EQ(g_cli.ops->accept(r, 0, &comp, nullptr), TI_SUCCESS);
}

void link_client() {
  Peer& c = g_cli;
  peer_open(c, nicsim_workload_node(0), kPort, 24, 4096, sizeof(std::uint32_t));
  g_link.returned.assign(kMaxMessages, 0);
  ASSERT_EQ(c.ops->events_register(&g_link.client_events, link_event), TI_SUCCESS);
  nicsim_barrier();
  ti_conn_attr_t attr = default_attr();
  attr.max_transfer_depth = 8;  // beyond it sends wait in the transport
  attr.max_send_retries = 1;
  ti_conn_info_t info = peer_info(c, link_client_reply, true);
  ASSERT_EQ(c.ops->connect(c.ti, &attr, &info, &c.req, &c.conn), TI_SUCCESS);
  ASSERT_TRUE(wait_until(c.replies, 1));
  for (int k = 0; k < kMaxMessages && !c.errors; ++k) {
    ti_pool_response_t r{};
    while (c.ops->res_pool_get(c.pool, 1, FALSE, nullptr, nullptr, nullptr, &r) != TI_SUCCESS && !c.errors)
      nicsim_sleep_ns(1000);
    if (!r.p_element_list) break;
    ti_data_element_t* e = r.p_element_list;
    *static_cast<std::uint32_t*>(e->p_context) = static_cast<std::uint32_t>(k);
    auto* b = static_cast<unsigned char*>(e->local_data_desc[0].vaddr);
    for (std::uint32_t i = 0; i < kStreamBytes; ++i) b[i] = pattern(k, i);
    e->local_data_desc[0].byte_count = kStreamBytes;
    const ti_status_t s = c.ops->msg_send(c.conn, e);
    ASSERT_TRUE(s == TI_SUCCESS || s == TI_PENDING) << s;
    g_link.queued += s == TI_PENDING;
    ++g_link.posted;
  }
  ASSERT_TRUE(wait_until(c.errors, 1, 2000000));
  EXPECT_EQ(c.error_code, TI_ERROR);
  bool all_back = wait_for([] { return g_link.ok + g_link.failed + g_link.canceled >= g_link.posted; });
  ASSERT_TRUE(all_back);
  ASSERT_EQ(c.ops->disconnect(c.conn, peer_counted, const_cast<int*>(&c.disconnected)), TI_SUCCESS);
  ASSERT_TRUE(wait_until(c.disconnected, 1, 1000000));
  EXPECT_EQ(c.errors, 1);  // reported once
  EXPECT_EQ(c.ops->events_deregister(&g_link.client_events, link_event), TI_SUCCESS);
  EXPECT_EQ(c.ops->res_pool_destroy(c.pool), TI_SUCCESS);
  peer_close(c);
}

int link_probe(int, char**) {
  if (nicsim_workload_rank() == 0)
    link_server();
  else
    link_client();
  return 0;
}
const BuiltinProgram reg_link("ti_link_probe", link_probe, "test: a link failure in the middle of a stream");

TEST(Ti, LinkFailureMidStreamReturnsEveryElementOnceWithAnErrorAndReportsTheLink) {
  nicsim::testing::RunOptions o;
  o.inspect = leak_check;
  nicsim::testing::run_text(scenario(3, "ti_link_probe", "nodes: \"h1\" nodes: \"h2\"", "",
                                     "fault { at: \"3ms\" link: \"h1--sw0\" link_down: true }\n"),
                            o);
  // Some messages went through before the link fell, and not all.
  EXPECT_GT(g_link.ok, 100);
  EXPECT_LT(g_link.posted, kMaxMessages);
  EXPECT_GT(g_link.queued, 0);  // some waited beyond max_transfer_depth
  // Every posted element came back exactly once; the first failure is an
  // error (retries spent), the rest are flushed.
  EXPECT_EQ(g_link.ok + g_link.failed + g_link.canceled, g_link.posted);
  for (int k = 0; k < g_link.posted; ++k) EXPECT_EQ(g_link.returned[static_cast<std::size_t>(k)], 1) << k;
  EXPECT_EQ(g_link.first_failure, TI_ERROR);
  EXPECT_GE(g_link.failed, 1);
  // What arrived arrived intact and in order: a prefix of the stream, every
  // acknowledged message and perhaps some whose acknowledgement the link
  // lost (reported failed to the sender, as RC may).
  EXPECT_EQ(g_link.server_wrong, 0);
  EXPECT_GE(g_link.server_messages, 100);
  EXPECT_GE(g_link.server_messages, g_link.ok);
  EXPECT_LE(g_link.server_messages, g_link.ok + g_link.failed);
  EXPECT_EQ(g_link.server_recv_errors, 0);
  // The link device events: the server's port left Active.
  const std::vector<ti_event_t> want = {TI_EVENT_NETDEV_ONLINE, TI_EVENT_NETDEV_GOING_DOWN, TI_EVENT_NETDEV_DOWN};
  EXPECT_EQ(g_link.server_events, want);
  EXPECT_EQ(g_link.client_events, std::vector<ti_event_t>{TI_EVENT_NETDEV_ONLINE});
}

// ---- destroy_ti with a live connection ---------------------------------------------

struct DestroySeen {
  int server_events_after = 0;
  ti_status_t stale_send = TI_SUCCESS;
};
DestroySeen g_destroy;

void destroy_server() {
  Peer& s = g_srv;
  peer_open(s, nicsim_workload_node(1), kPort, 8, 1024);
  ti_conn_attr_t attr = default_attr();
  ti_conn_info_t info = peer_info(s, peer_keep_request, false);
  ASSERT_EQ(s.ops->listen(s.ti, &attr, &info, nullptr, &s.listen_conn), TI_SUCCESS);
  nicsim_barrier();
  ASSERT_TRUE(wait_until(s.requests, 1));
  ti_comp_info_t comp = peer_comp(s, ignore, ignore);
  ASSERT_EQ(s.ops->accept(&s.req, 0, &comp, peer_get(s, 4)), TI_SUCCESS);
  s.conn = s.req.conn_handle;
  nicsim_barrier();  // both sides established
  // Everything at once: the listen, the connection with its posted
  // receives, the pool, the CQ, the PD, the endpoints.
  peer_close(s);
  g_destroy.stale_send = s.ops->msg_send(s.conn, nullptr);
  nicsim_barrier();
  nicsim_sleep_ns(1000000);  // the CM's timewait (200 us) ends
}

void destroy_client_reply(ti_conn_request_t* r) {
  peer_keep_request(r);
  ti_comp_info_t comp = peer_comp(g_cli, ignore, ignore);
  EXPECT_EQ(g_cli.ops->accept(r, 0, &comp, nullptr), TI_SUCCESS);
}

void destroy_client() {
  Peer& c = g_cli;
  peer_open(c, nicsim_workload_node(0), kPort, 8, 1024);
  nicsim_barrier();
  ti_conn_attr_t attr = default_attr();
  ti_conn_info_t info = peer_info(c, destroy_client_reply, true);
  ASSERT_EQ(c.ops->connect(c.ti, &attr, &info, &c.req, &c.conn), TI_SUCCESS);
  ASSERT_TRUE(wait_until(c.replies, 1));
  nicsim_barrier();
  peer_close(c);
  nicsim_barrier();
  nicsim_sleep_ns(1000000);
}

int destroy_probe(int, char**) {
  if (nicsim_workload_rank() == 0)
    destroy_server();
  else
    destroy_client();
  return 0;
}
const BuiltinProgram reg_destroy("ti_destroy_probe", destroy_probe, "test: destroy_ti with a live connection");

TEST(Ti, DestroyTiWithALiveConnectionLeavesNothingOnEitherNode) {
  nicsim::testing::RunOptions o;
  o.inspect = [](World& w) {
    leak_check(w);
    for (std::uint32_t i = 1; i < w.num_nodes(); ++i)
      if (cm::CmNode* n = cm::node_cm_if_started(w.node(i).host())) {
        EXPECT_EQ(n->counters().live_conns, 0u) << w.node(i).name();
      }
  };
  nicsim::testing::run_text(scenario(3, "ti_destroy_probe", "nodes: \"h1\" nodes: \"h2\""), o);
  EXPECT_EQ(g_destroy.stale_send, TI_INVALID_HANDLE);
}

}  // namespace
}  // namespace nicsim::ti
