// RC across a spine switch that fails and returns, short
// (scenarios/ib_switch_soak.textproto with 2,000 messages a pair instead of
// 250,000): four RC pairs on a 4-ary 2-tree whose messages cross sw1_0,
// the subnet manager re-routing after each switch fault. Two pairs ride
// through on RC's retransmissions; two, with a 33 us ACK timeout, see
// their QPs fail and connect again. Every message must be delivered once
// or reported failed, never corrupted, duplicated or lost unheard.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "sim/tests/scenario_soak.h"
#include "trace/stats.h"

using namespace nicsim;
using nicsim::testing::SoakOutcome;

namespace {

using Counts = std::map<std::string, double>;

struct SwitchSoak {
  SoakOutcome outcome;
  std::vector<Counts> clients;    // each pair's client, in scenario order
  std::uint64_t spine_drops = 0;  // packets lost on sw1_0's links while it was down
};

SwitchSoak run(const std::vector<std::string>& args) {
  SwitchSoak s;
  s.outcome = nicsim::testing::run_soak({"ib_switch_soak.textproto", {}, "ib_rc_soak", args, [&](World& w) {
                                           for (const auto& l : w.fabric().links())
                                             if (l->b().owner().name() == "sw1_0")
                                               s.spine_drops +=
                                                   l->a().stats().drops_link_down + l->b().stats().drops_link_down;
                                         }});
  for (const Counts& p : s.outcome.programs)
    if (p.count("sent")) s.clients.push_back(p);
  for (std::size_t i = 0; i < s.clients.size(); ++i)
    for (const auto& [k, v] : s.clients[i]) std::printf("pair %zu %s = %g\n", i, k.c_str(), v);
  return s;
}

double at(const Counts& c, const std::string& name) {
  const auto it = c.find(name);
  EXPECT_NE(it, c.end()) << name;
  return it == c.end() ? -1 : it->second;
}

void expect_promise_kept(const Counts& c) {
  EXPECT_EQ(at(c, "corrupted"), 0);
  EXPECT_EQ(at(c, "duplicated"), 0);
  EXPECT_EQ(at(c, "out_of_order"), 0);
  EXPECT_EQ(at(c, "lost_unreported"), 0);
  EXPECT_EQ(at(c, "delivered") + at(c, "gave_up"), at(c, "sent"));
}

// What each pair's client reported: sent, delivered, failed, retry_exceeded,
// reconnects, resent, gave_up.
struct PairCounts {
  double sent, delivered, failed, retry_exceeded, reconnects, resent, gave_up;
};

void expect_counts(const Counts& c, const PairCounts& want, int pair) {
  SCOPED_TRACE("pair " + std::to_string(pair));
  expect_promise_kept(c);
  EXPECT_EQ(at(c, "sent"), want.sent);
  EXPECT_EQ(at(c, "delivered"), want.delivered);
  EXPECT_EQ(at(c, "failed"), want.failed);
  EXPECT_EQ(at(c, "retry_exceeded"), want.retry_exceeded);
  EXPECT_EQ(at(c, "reconnects"), want.reconnects);
  EXPECT_EQ(at(c, "resent"), want.resent);
  EXPECT_EQ(at(c, "gave_up"), want.gave_up);
  if (want.failed) {
    EXPECT_EQ(at(c, "failed_status"), 10);  // IB_WCS_TIMEOUT_RETRY_ERR first
  }
}

// Pairs 0 and 1 (67 ms ACK timeout) ride through: the SM re-routed 0.6 ms
// after the failure, long before the first resend. Pairs 2 and 3 (33 us)
// run out of retries first: 1 send completes IB_WCS_TIMEOUT_RETRY_ERR and
// the 15 behind it are flushed; the client connects again and resumes at
// the server's first missing message. Pair 2 lost messages (they crossed
// sw1_0) and sends them again; pair 3 lost only acknowledgements, so the
// server had all 16 and nothing is sent twice.
TEST(SwitchSoak, SpineFailureEveryMessageDeliveredOnceOrReportedAndResent) {
  const SwitchSoak s = run({"--iters=2000"});
  EXPECT_TRUE(s.outcome.ok);
  ASSERT_EQ(s.clients.size(), 4u);
  EXPECT_GT(s.spine_drops, 0u);  // the failure caught packets on their way
  const PairCounts want[4] = {{2000, 2000, 0, 0, 0, 0, 0},
                              {2000, 2000, 0, 0, 0, 0, 0},
                              {2000, 2000, 16, 1, 1, 16, 0},
                              {2000, 2000, 16, 1, 1, 0, 0}};
  for (int i = 0; i < 4; ++i) expect_counts(s.clients[i], want[i], i);
}

// Without reconnecting, a failed QP ends the pair: both stop at message
// 401. Pair 2's 16 failed sends never arrived (gave_up); pair 3's had all
// been delivered, only their acknowledgements were lost, which RC's sender
// cannot tell: reported failed, not lost.
TEST(SwitchSoak, SpineFailureWithoutReconnectsIsReportedNotLost) {
  const SwitchSoak s = run({"--iters=2000", "--reconnects=0", "--timeout-ms=200"});
  ASSERT_EQ(s.clients.size(), 4u);
  const PairCounts want[4] = {{2000, 2000, 0, 0, 0, 0, 0},
                              {2000, 2000, 0, 0, 0, 0, 0},
                              {401, 385, 16, 1, 0, 0, 16},
                              {401, 401, 16, 1, 0, 0, 0}};
  for (int i = 0; i < 4; ++i) expect_counts(s.clients[i], want[i], i);
}

}  // namespace

namespace {

std::uint64_t stat(const std::string& object, const std::string& name) {
  for (const auto& s : Sim::get().stats().scalars())
    if (s.object == object && s.name == name) return static_cast<std::uint64_t>(s.read());
  ADD_FAILURE() << "no statistic " << object << " " << name;
  return 0;
}

// A spine fails and returns before any traffic: the SM forgot what it wrote
// to the lost switch, so the sweep after its return writes its LFT block
// and LinearFDBTop again (a switch that restarted would have lost them);
// then data crosses the fabric. sw1_0's management port handles 127 SMPs
// over the run (its own and those it forwards by directed route); 125
// without the forgetting, which leaves out the LFT block and SwitchInfo.
TEST(SwitchSoak, AReturningSpineHasItsForwardingTableWrittenAgain) {
  std::uint64_t spine_smps = 0, spine_down_drops = 0;
  nicsim::testing::RunOptions o;
  o.inspect = [&](World&) {
    spine_smps = stat("sw1_0.sma", "smps");
    spine_down_drops = stat("sw0_0", "dropped_port_state");
  };
  const nicsim::testing::RunResult r = nicsim::testing::run_text(R"(
    topology { fat_tree { k: 2 n: 2 } nic: "hca" }
    fault { at: "2ms" switch: "sw1_0" link_down: true }
    fault { at: "3ms" switch: "sw1_0" link_up: true }
    workload { program: "ib_send_lat" nodes: "h0" nodes: "h3" start: "5ms" args: "--sizes=8" args: "--iters=10" })",
                                                                 o);
  EXPECT_TRUE(r.ok);
  EXPECT_EQ(spine_smps, 127u);
  EXPECT_EQ(spine_down_drops, 0u);
}

}  // namespace
