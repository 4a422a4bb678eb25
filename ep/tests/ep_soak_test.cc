// Kernel Comms under node deaths and returns, short (scenarios/ep_soak.textproto
// with a few thousand messages instead of 10^5): h0 sends 64 KiB large
// messages and RPCs to h1, h2 and h3 in turn while h1's and h2's links go
// down and come back. The program checks every byte and accounts for every
// message; here the counts must show the manual's promise kept (delivered
// once on ESUCCESS, ENETRESET or a refused call otherwise, nothing corrupted,
// duplicated or lost without a report) and the faults must have done
// something (refused calls, ENETRESET completions, receives ended by a
// failure).
//
// Two model bugs made the runs of 3,000 messages fail (docs/soak.md): a
// circuit failing while a transmit call was filling in its txd completed
// the txd under the call (seeds 1 to 16 all failed); a DMA failure reported
// after its transmit had been completed otherwise failed the txd's next
// message (5 of the 16 seeds failed, seed 5 among them).
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "sim/tests/scenario_figures.h"

using namespace nicsim;

namespace {

std::map<std::string, double> run_soak(int seed, int iters) {
  Scenario sc = load_scenario_file(std::string(NICSIM_SOURCE_DIR) + "/scenarios/ep_soak.textproto",
                                   [](std::string_view n) { return ProgramRegistry::instance().find(n) != nullptr; });
  sc.seed = static_cast<std::uint64_t>(seed);
  for (auto& w : sc.workloads)
    for (auto& a : w.args)
      if (a.rfind("--iters=", 0) == 0) a = "--iters=" + std::to_string(iters);
  return nicsim::testing::run_scenario(sc).results;  // fails the test if a program failed
}

double get(const std::map<std::string, double>& r, const std::string& name) {
  const auto it = r.find(name);
  EXPECT_NE(it, r.end()) << name;
  return it == r.end() ? -1 : it->second;
}

void expect_promise_kept(int seed, int iters) {
  const auto r = run_soak(seed, iters);
  EXPECT_EQ(get(r, "sent") + get(r, "refused"), iters);
  EXPECT_EQ(get(r, "completed_ok") + get(r, "failed_reset"), get(r, "sent"));
  EXPECT_EQ(get(r, "failed_other"), 0);
  EXPECT_EQ(get(r, "delivered"), get(r, "completed_ok") + get(r, "delivered_after_reset"));
  EXPECT_EQ(get(r, "corrupted"), 0);
  EXPECT_EQ(get(r, "duplicated"), 0);
  EXPECT_EQ(get(r, "lost_unreported"), 0);
  EXPECT_EQ(get(r, "unsent_delivered"), 0);
  EXPECT_EQ(get(r, "unstarted"), 0);
  // The faults were there: calls refused, transmits and receives reset.
  EXPECT_GT(get(r, "refused"), 0);
  EXPECT_GT(get(r, "failed_reset"), 0);
  EXPECT_GT(get(r, "rx_reset"), 0);
}

TEST(EpSoak, NodeDeathsAndReturnsEveryMessageOnceOrReported) { expect_promise_kept(1, 600); }

// A circuit failing during a transmit call's CPU charge completed the txd
// the call was filling in: the caller reused the buffer while the
// destination still pulled it, and the txd went out while on the free list.
TEST(EpSoak, ACircuitFailingDuringATransmitCallFailsTheCall) { expect_promise_kept(2, 3000); }

// A failure the Elan reported for a forced transmit's envelope, queued
// behind DMAs to a dead node, failed the txd's next message (elsewhere).
TEST(EpSoak, ALateDmaFailureDoesNotFailTheTxdsNextMessage) { expect_promise_kept(5, 3000); }

}  // namespace
