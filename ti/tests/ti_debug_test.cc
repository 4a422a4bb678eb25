// debug_svc sets what the provider logs (to the trace, component "api",
// event "ti_log"): a client at TI_DBG_DEBUG shows routine entry and exit
// and its connection's steps, a server at the default level shows nothing
// of a failed call until it raises its level to TI_DBG_STD, and then only
// failures.
#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <vector>

#include "tests/world_run.h"
#include "ti/tests/ti_peer.h"
#include "world/programs.h"

namespace nicsim::ti {
namespace {

using namespace nicsim::ti::testing;

constexpr ti_port_t kPort = 5150;
constexpr std::uint32_t kBytes = 700;

Peer g_srv, g_cli;
struct DebugSeen {
  ti_status_t bad_level = TI_SUCCESS, raise = TI_ERROR, bad_accept_off = TI_SUCCESS, bad_accept_std = TI_SUCCESS;
  int wrong = -1;
} g_seen;

void srv_recv(ti_cq_handle_t, ti_data_element_t* list) { g_srv.received.add_list(list); }
void cli_sent(ti_cq_handle_t, ti_data_element_t* list) { g_cli.sent.add_list(list); }

void debug_server() {
  Peer& s = g_srv;
  peer_open(s, nicsim_workload_node(1), kPort, 4, 1024);
  ti_conn_attr_t attr = default_attr();
  ti_conn_info_t info = peer_info(s, peer_keep_request, false);
  ASSERT_EQ(s.ops->listen(s.ti, &attr, &info, nullptr, &s.listen_conn), TI_SUCCESS);
  nicsim_barrier();
  ASSERT_TRUE(wait_until(s.requests, 1));
  // The same failure at the default level (not shown), then at TI_DBG_STD.
  g_seen.bad_accept_off = s.ops->accept(&s.req, 0, nullptr, nullptr);
  g_seen.raise = s.ops->debug_svc(s.ti, TI_DBG_STD);
  g_seen.bad_accept_std = s.ops->accept(&s.req, 0, nullptr, nullptr);
  ti_comp_info_t comp = peer_comp(s, srv_recv, srv_recv);
  ASSERT_EQ(s.ops->accept(&s.req, 0, &comp, peer_get(s, 2)), TI_SUCCESS);
  s.conn = s.req.conn_handle;
  EXPECT_EQ(s.ops->disconnect(s.listen_conn, nullptr, nullptr), TI_SUCCESS);
  ASSERT_TRUE(wait_until(s.received.count, 1));
  const ti_data_element_t* e = s.received.items[0];
  EXPECT_EQ(e->recv_byte_count, kBytes);
  const auto* b = static_cast<const unsigned char*>(e->local_data_desc[0].vaddr);
  g_seen.wrong = 0;
  for (std::uint32_t i = 0; i < kBytes; ++i) g_seen.wrong += b[i] != pattern(5, i);
  ASSERT_TRUE(wait_until(s.errors, 1));  // the client disconnected
  ASSERT_TRUE(wait_until(s.received.count, 2));
  peer_put_all(s, s.received);
  EXPECT_EQ(s.ops->disconnect(s.conn, peer_counted, const_cast<int*>(&s.disconnected)), TI_SUCCESS);
  EXPECT_TRUE(wait_until(s.disconnected, 1));
  peer_close(s);
}

// The reply is counted once it is accepted: the client's thread, waiting
// for the count, sends as soon as it sees it.
void cli_reply(ti_conn_request_t* r) {
  ti_comp_info_t comp = peer_comp(g_cli, cli_sent, cli_sent);
  EXPECT_EQ(g_cli.ops->accept(r, 0, &comp, nullptr), TI_SUCCESS);
  peer_keep_request(r);
}

void debug_client() {
  Peer& c = g_cli;
  peer_open(c, nicsim_workload_node(0), kPort, 2, 1024);
  g_seen.bad_level = c.ops->debug_svc(c.ti, static_cast<ti_debug_level_t>(TI_DBG_DEBUG + 1));
  ASSERT_EQ(c.ops->debug_svc(c.ti, TI_DBG_DEBUG), TI_SUCCESS);
  nicsim_barrier();
  ti_conn_attr_t attr = default_attr();
  ti_conn_info_t info = peer_info(c, cli_reply, true);
  ASSERT_EQ(c.ops->connect(c.ti, &attr, &info, &c.req, &c.conn), TI_SUCCESS);
  ASSERT_TRUE(wait_until(c.replies, 1));
  ti_data_element_t* e = peer_get(c, 1);
  auto* b = static_cast<unsigned char*>(e->local_data_desc[0].vaddr);
  for (std::uint32_t i = 0; i < kBytes; ++i) b[i] = pattern(5, i);
  e->local_data_desc[0].byte_count = kBytes;
  e->msg_opt = TI_OPT_SIGNALED;
  const ti_status_t sent = c.ops->msg_send(c.conn, e);  // TI_PENDING: no credits yet
  ASSERT_TRUE(sent == TI_SUCCESS || sent == TI_PENDING) << sent;
  ASSERT_TRUE(wait_until(c.sent.count, 1));
  EXPECT_EQ(c.sent.items[0]->status, TI_SUCCESS);
  peer_put_all(c, c.sent);
  ASSERT_EQ(c.ops->disconnect(c.conn, peer_counted, const_cast<int*>(&c.disconnected)), TI_SUCCESS);
  ASSERT_TRUE(wait_until(c.disconnected, 1));
  peer_close(c);
}

int debug_probe(int, char**) {
  if (nicsim_workload_rank() == 0)
    debug_server();
  else
    debug_client();
  nicsim_barrier();
  return 0;
}
const BuiltinProgram reg_debug("ti_debug_probe", debug_probe, "test: debug_svc levels and the provider's log");

struct LogLine {
  std::string dev, level, text;
};

std::string field(const std::string& line, const std::string& key) {
  const std::string k = "\"" + key + "\":\"";
  const auto at = line.find(k);
  if (at == std::string::npos) return {};
  const auto end = line.find('"', at + k.size());
  return line.substr(at + k.size(), end - at - k.size());
}

std::vector<LogLine> provider_log(const std::string& path) {
  std::vector<LogLine> out;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);)
    if (line.find("\"ev\":\"ti_log\"") != std::string::npos)
      out.push_back({field(line, "dev"), field(line, "level"), field(line, "text")});
  return out;
}

// Lines of `dev` at `level` whose text starts with `prefix` and contains `part`.
int count(const std::vector<LogLine>& log, const std::string& dev, const std::string& level, const std::string& prefix,
          const std::string& part = "") {
  int n = 0;
  for (const LogLine& l : log)
    n += l.dev == dev && l.level == level && l.text.rfind(prefix, 0) == 0 && l.text.find(part) != std::string::npos;
  return n;
}

TEST(Ti, DebugSvcLevelDecidesWhatTheProviderLogs) {
  nicsim::testing::RunOptions o;
  o.trace_path = ::testing::TempDir() + "ti_debug.trace";
  nicsim::testing::run_text(scenario(3, "ti_debug_probe", "nodes: \"h1\" nodes: \"h2\"", "",
                                     "outputs { trace { device: \"*\" component: \"api\" } }\n"),
                            o);
  EXPECT_EQ(g_seen.bad_level, TI_INVALID_PARAMETER);
  EXPECT_EQ(g_seen.raise, TI_SUCCESS);
  EXPECT_EQ(g_seen.bad_accept_off, TI_INVALID_PARAMETER);
  EXPECT_EQ(g_seen.bad_accept_std, TI_INVALID_PARAMETER);
  EXPECT_EQ(g_seen.wrong, 0);
  const auto log = provider_log(o.trace_path);
  // The client, at TI_DBG_DEBUG: entry and exit of its calls, its
  // connection's steps and its pool's registration.
  EXPECT_EQ(count(log, "h2", "debug", "connect: entry"), 1);
  EXPECT_EQ(count(log, "h2", "debug", "msg_send: exit"), 1);
  EXPECT_EQ(count(log, "h2", "info", "connection ", "Connecting -> ReplyReceived"), 1);
  EXPECT_EQ(count(log, "h2", "info", "connection ", "ReplyReceived -> Established"), 1);
  EXPECT_EQ(count(log, "h2", "info", "registered"), 0) << "registered before the level was raised";
  // Its bad debug_svc came at the default level: not shown.
  EXPECT_EQ(count(log, "h2", "error", "debug_svc failed"), 0);
  // The server: only the failure made at TI_DBG_STD, nothing else.
  EXPECT_EQ(count(log, "h1", "error", "accept failed: Invalid Parameter"), 1);
  EXPECT_EQ(count(log, "h1", "info", ""), 0);
  EXPECT_EQ(count(log, "h1", "debug", ""), 0);
  EXPECT_EQ(count(log, "h1", "fatal", ""), 0);
}

}  // namespace
}  // namespace nicsim::ti
