// Bad input to every TI operation (NULL, stale, wrong-type, invented and
// other-node handles, bad parameters: the status the interface lists, nothing
// crashes, nothing changes), the connection state machine's table, and the
// sdp_pingpong figures of its scenario (simulated time is deterministic).
#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "sim/tests/scenario_figures.h"
#include "tests/world_run.h"
#include "ti/ib/ti_ib.h"
#include "ti/tests/ti_input_rows.h"
#include "ti/tests/ti_peer.h"
#include "world/node.h"
#include "world/programs.h"

namespace nicsim::ti {
namespace {

using namespace nicsim::ti::testing;

using namespace nicsim::ti::testing::input;

struct InputSeen {
  std::vector<std::string> wrong;  // "row: got X, want Y"
  int rows = 0;
  bool unchanged = false, still_works = false, strings_ok = false;
};
InputSeen g_input;

bool strings_survive() {
  char buf[64];
  const std::string unknown = ti_status_to_str(static_cast<ti_status_t>(999));
  const std::string negative = ti_status_to_str(static_cast<ti_status_t>(-7));
  ti_event_to_str(static_cast<ti_event_t>(500), nullptr, buf, sizeof buf);
  const std::string event = buf;
  const char* none = ti_event_to_str(TI_EVENT_NETDEV_DOWN, nullptr, nullptr, 0);
  mk_inet_addr_p(nullptr, buf);
  return unknown == "Unknown Status" && negative == "Unknown Status" && event == "TI_EVENT_UNKNOWN" && !none &&
         buf[0] == 0 && std::string(ti_status_to_str(TI_TIMEOUT)) == "Timeout";
}

// The second node opens the same objects and keeps them while the first
// tries them.
int other_node(Handles& h) {
  open_handles(h, ti_ib_transport_load);
  if (::testing::Test::HasFatalFailure()) return 1;
  nicsim_barrier();
  nicsim_barrier();
  volatile int gone = 0;
  EXPECT_EQ(h.o->destroy_ti(h.ti, peer_counted, const_cast<int*>(&gone)), TI_SUCCESS);
  EXPECT_TRUE(wait_until(gone, 1));
  free_handles(h);
  return 0;
}

int input_probe(int, char**) {
  if (nicsim_workload_rank() == 1) return other_node(g_other);
  Handles h;
  open_handles(h, ti_ib_transport_load);
  if (::testing::Test::HasFatalFailure()) return 1;
  nicsim_barrier();  // the other node's objects are there
  TiNode* n = node();
  const Counters before = n->counters();
  std::vector<Row> rows;
  handle_rows(rows);
  parameter_rows(rows);
  for (const Row& r : rows) {
    const ti_status_t got = r.call(h);
    if (got != r.want)
      g_input.wrong.push_back(r.what + ": got " + ti_status_to_str(got) + ", want " + ti_status_to_str(r.want));
  }
  g_input.rows = static_cast<int>(rows.size());
  const Counters after = n->counters();
  g_input.unchanged = std::memcmp(&before, &after, sizeof before) == 0;
  // The live objects still work after all that.
  ti_pool_response_t r{};
  g_input.still_works = h.o->res_pool_get(h.pool, 4, FALSE, nullptr, nullptr, nullptr, &r) == TI_SUCCESS &&
                        r.element_count == 4 && h.o->res_pool_put(h.pool, r.p_element_list) == TI_SUCCESS;
  g_input.strings_ok = strings_survive();
  nicsim_barrier();
  volatile int gone = 0;
  EXPECT_EQ(h.o->destroy_ti(h.ti, peer_counted, const_cast<int*>(&gone)), TI_SUCCESS);
  EXPECT_TRUE(wait_until(gone, 1));
  free_handles(h);
  return 0;
}
const BuiltinProgram reg_input("ti_input_probe", input_probe, "test: bad input to every TI operation");

TEST(Ti, BadInputToEveryOperationIsAStatusNeverACrash) {
  nicsim::testing::RunOptions o;
  o.inspect = [](World& w) {
    if (TiNode* n = node_if_started(w.node(1).host())) {
      EXPECT_EQ(n->counters().total(), 0u);
    }
  };
  nicsim::testing::run_text(scenario(3, "ti_input_probe", "nodes: \"h1\" nodes: \"h2\""), o);
  EXPECT_EQ(g_input.rows, 34 * 5 + 40);  // 34 handle-taking operations x 5 bad handles, 40 bad parameters
  for (const std::string& w : g_input.wrong) ADD_FAILURE() << w;
  EXPECT_TRUE(g_input.unchanged);
  EXPECT_TRUE(g_input.still_works);
  EXPECT_TRUE(g_input.strings_ok);
}

// ---- the connection state machine -------------------------------------------------

TEST(Ti, ConnectionMachineTableIsTheOneDocumented) {
  using S = TiConnState;
  using E = TiConnEvent;
  struct T {
    S from;
    E event;
    S to;
  };
  const std::vector<T> table = {
      {S::Idle, E::Connect, S::Connecting},
      {S::Idle, E::Listen, S::Listening},
      {S::Idle, E::RequestArrived, S::Requested},
      {S::Listening, E::Disconnect, S::Closed},
      {S::Listening, E::Released, S::Closed},
      {S::Connecting, E::ReplyArrived, S::ReplyReceived},
      {S::Connecting, E::MraArrived, S::Connecting},
      {S::Connecting, E::Rejected, S::Closed},
      {S::Connecting, E::Unreachable, S::Closed},
      {S::Connecting, E::Disconnect, S::Canceling},
      {S::Connecting, E::Released, S::Closed},
      {S::Canceling, E::ReplyArrived, S::Disconnecting},
      {S::Canceling, E::MraArrived, S::Canceling},
      {S::Canceling, E::Rejected, S::Closed},
      {S::Canceling, E::Unreachable, S::Closed},
      {S::Canceling, E::Released, S::Closed},
      {S::ReplyReceived, E::Accept, S::Established},
      {S::ReplyReceived, E::Reject, S::Disconnecting},
      {S::ReplyReceived, E::Timeout, S::Disconnecting},
      {S::ReplyReceived, E::Disconnect, S::Disconnecting},
      {S::ReplyReceived, E::PeerDisconnected, S::Closed},
      {S::ReplyReceived, E::Released, S::Closed},
      {S::Requested, E::Accept, S::Accepting},
      {S::Requested, E::Reject, S::Closed},
      {S::Requested, E::Timeout, S::Closed},
      {S::Requested, E::Disconnect, S::Closed},
      {S::Requested, E::Released, S::Closed},
      {S::Accepting, E::Established, S::Established},
      {S::Accepting, E::Unreachable, S::Closed},
      {S::Accepting, E::PeerDisconnected, S::Closed},
      {S::Accepting, E::Released, S::Closed},
      {S::Established, E::Disconnect, S::Disconnecting},
      {S::Established, E::PeerDisconnected, S::Closed},
      {S::Established, E::Released, S::Closed},
      {S::Disconnecting, E::PeerDisconnected, S::Closed},
      {S::Disconnecting, E::Released, S::Closed},
      {S::Closed, E::Released, S::Closed},
  };
  const FsmType& type = TiConnMachine::type();
  EXPECT_EQ(type.name(), "ti.conn");
  EXPECT_EQ(type.rows().size(), table.size());
  const int states = static_cast<int>(type.states().size()), events = static_cast<int>(type.events().size());
  for (int s = 0; s < states; ++s)
    for (int e = 0; e < events; ++e) {
      const auto got = Fsm<TiConnMachine>::next(static_cast<S>(s), static_cast<E>(e));
      const T* want = nullptr;
      for (const T& t : table)
        if (t.from == static_cast<S>(s) && t.event == static_cast<E>(e)) want = &t;
      const std::string pair = type.state_name(s) + " + " + type.event_name(e);
      if (!want) {
        EXPECT_FALSE(got.has_value()) << pair << " must not be handled";
      } else {
        ASSERT_TRUE(got.has_value()) << pair;
        EXPECT_EQ(*got, want->to) << pair;
      }
    }
}

// ---- sdp_pingpong's figures --------------------------------------------------------

TEST(Sdp, PingpongFiguresOfItsScenario) {
  const auto r = nicsim::testing::scenario_results("sdp_pingpong.textproto");
  // 64 KiB is at the zero-copy threshold: it moves by RDMA (copied, it
  // takes 124.2 us).
  const std::vector<std::pair<const char*, double>> want = {
      {"sdp_pingpong_1_ns", 9387.225},    {"sdp_pingpong_64_ns", 9613},         {"sdp_pingpong_1024_ns", 13660.775},
      {"sdp_pingpong_4096_ns", 24375.95}, {"sdp_pingpong_16384_ns", 50056.675}, {"sdp_pingpong_65536_ns", 101097.925},
  };
  for (const auto& [name, value] : want) {
    ASSERT_TRUE(r.count(name)) << name;
    EXPECT_DOUBLE_EQ(r.at(name), value) << name;
  }
  EXPECT_EQ(r.at("bytes_ok"), 2.0 * 20 * (1 + 64 + 1024 + 4096 + 16384 + 65536));
}

}  // namespace
}  // namespace nicsim::ti
