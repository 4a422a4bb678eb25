// Partition blocks and the Elite fabric (docs/partition.md): an Elan
// acknowledgement walks its route back at once inside a block and goes on
// as an event of the far block where its route crosses a cut link.
#include <gtest/gtest.h>

#include <string>

#include "sim/tests/test_shell.h"

namespace {

std::string figures(const std::string& out) {
  const auto from = out.find("lat_8 ");
  return from == std::string::npos ? std::string() : out.substr(from, out.find("link utilisation") - from);
}

// Light traffic: every figure is the same whether or not the switch's links
// are cut (two blocks: one node and the switch, the other node).
TEST(ElitePartition, KernelCommsLatencyIsTheSameWithTheFabricCut) {
  const std::string scenario = std::string(NICSIM_SOURCE_DIR) + "/scenarios/ep_small_lat.textproto";
  const auto whole = nicsim::testing::run_nicsim("run " + scenario);
  const auto cut = nicsim::testing::run_nicsim("run " + scenario + " --blocks=2");
  ASSERT_EQ(whole.exit_code, 0) << whole.out;
  ASSERT_EQ(cut.exit_code, 0) << cut.out;
  EXPECT_NE(cut.out.find("partition: 2 blocks, 1 cut links, lookahead 10ns"), std::string::npos) << cut.out;
  EXPECT_FALSE(figures(whole.out).empty()) << whole.out;
  EXPECT_EQ(figures(cut.out), figures(whole.out));
}

// Network conditionals across cuts: the joined acknowledgements of a
// barrier's broadcast cross blocks on their way back, and every barrier
// completes in the same time as uncut.
TEST(ElitePartition, HardwareBarrierTimesAreTheSameWithTheFabricCutIntoFourBlocks) {
  const std::string scenario = std::string(NICSIM_SOURCE_DIR) + "/scenarios/elan3_barrier.textproto --arg --iters=20";
  const auto whole = nicsim::testing::run_nicsim("run " + scenario);
  const auto cut = nicsim::testing::run_nicsim("run " + scenario + " --blocks=4");
  ASSERT_EQ(whole.exit_code, 0) << whole.out;
  ASSERT_EQ(cut.exit_code, 0) << cut.out;
  const auto barrier = [](const std::string& out) { return out.substr(out.find("workload 0"), 400); };
  EXPECT_NE(cut.out.find("partition: 4 blocks, 48 cut links, lookahead 10ns, imbalance 1.00"), std::string::npos)
      << cut.out;
  EXPECT_NE(whole.out.find("barrier_us"), std::string::npos) << whole.out;
  EXPECT_EQ(barrier(cut.out).substr(0, barrier(cut.out).find("link utilisation")),
            barrier(whole.out).substr(0, barrier(whole.out).find("link utilisation")));
}

}  // namespace
