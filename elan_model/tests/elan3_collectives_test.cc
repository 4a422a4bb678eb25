// Network conditionals and hardware broadcast on Elite fat trees of 2 to 64
// nodes, by the driver-level programs elan3_barrier and elan3_bcast
// (elan_model/programs/elan3_collectives.cc): the Elite switches join the
// tokens of a broadcast's copies, a test answered false by one node is
// false for the machine, and every node gets every byte.
#include <gtest/gtest.h>

#include <ostream>
#include <string>

#include "elan_model/elan3.h"
#include "elite/elite_switch.h"
#include "sim/tests/scenario_figures.h"
#include "sim/tests/world_run.h"

using namespace nicsim;
using namespace nicsim::elan3;

namespace {

std::string tree(std::uint32_t nodes, const std::string& program, const std::string& args,
                 const std::string& switch_params = "") {
  std::string text = "topology { elite_fat_tree { nodes: " + std::to_string(nodes) + " }\n" +
                     "  node_param { key: \"bus.profile\" value: \"pci-66\" }\n" + switch_params + "}\n" +
                     "link_defaults { delay: \"10ns\" }\n" + "workload { program: \"" + program + "\" nodes: \"h*\" ";
  for (std::size_t at = 0; at < args.size();) {
    const std::size_t end = std::min(args.find(' ', at), args.size());
    text += "args: \"" + args.substr(at, end - at) + "\" ";
    at = end + 1;
  }
  return text + "}\n";
}

struct Totals {
  std::uint64_t root_acks = 0, combined = 0, conditions_false = 0, switch_broadcasts = 0;
};

nicsim::testing::RunResult run_tree(std::uint32_t nodes, const std::string& program, const std::string& args, Totals* t,
                                    const std::string& switch_params = "") {
  nicsim::testing::RunOptions o;
  o.inspect = [&](World& world) {
    if (!t) return;
    const Elan3Stats& root = world.node(0).nic_as<Elan3>()->stats();
    t->root_acks = root.acks_received;
    t->conditions_false = root.conditions_false;
    for (std::uint32_t s = 0; s < world.num_switches(); ++s) {
      const elite::EliteSwitch* e = world.switch_as<elite::EliteSwitch>(s);
      ASSERT_NE(e, nullptr);
      t->combined += e->stats().replies_combined;
      t->switch_broadcasts += e->stats().broadcasts;
    }
  };
  return nicsim::testing::run_text(tree(nodes, program, args, switch_params), o);
}

}  // namespace

// The barrier's time at the root, exactly, as the tree grows by levels: one
// test and one release per barrier when every node is there in time.
struct BarrierCase {
  std::uint32_t nodes;
  double us;
};
void PrintTo(const BarrierCase& c, std::ostream* os) { *os << c.nodes << " nodes"; }
class ElanBarrier : public ::testing::TestWithParam<BarrierCase> {};

TEST_P(ElanBarrier, TimeAtTheRootAndOneTestPerBarrier) {
  const nicsim::testing::RunResult r = run_tree(GetParam().nodes, "elan3_barrier", "--iters=20", nullptr);
  EXPECT_NEAR(r.results.at("barrier_us"), GetParam().us, 0.00001);
  EXPECT_EQ(r.results.at("tests_per_barrier"), 1.0);
}
INSTANTIATE_TEST_SUITE_P(Nodes, ElanBarrier,
                         ::testing::Values(BarrierCase{2, 5.54403}, BarrierCase{4, 5.54403}, BarrierCase{16, 5.78403},
                                           BarrierCase{64, 6.02403}),
                         [](const auto& info) { return std::to_string(info.param.nodes); });

// The published QsNet figure: about 6 us on 64 nodes (Frachtenberg and
// Petrini, 64-node AlphaServer); the goal is within 20%.
TEST(ElanCollectives, SixtyFourNodeBarrierWithinTwentyPercentOfThePublishedFigure) {
  const double us = nicsim::testing::scenario_figure("elan3_barrier.textproto", {"--iters=20"}, "barrier_us");
  EXPECT_GE(us, 6.0 * 0.8);
  EXPECT_LE(us, 6.0 * 1.2);
}

// Joining tokens in the switches changes how many reach the root, never
// when the last one does: a joined token leaves each switch when its
// slowest copy's arrives, as the last of the separate ones would. The same
// 10 barriers on 16 nodes (45 broadcasts from the root: 10 releases, 35
// tests) end at the same picosecond either way.
constexpr Tick kSixteenNodeBarriersEnd = 383715122;

TEST(ElanCollectives, SwitchesJoinTheTokensOfEachBroadcastIntoOne) {
  Totals t;
  const nicsim::testing::RunResult r = run_tree(16, "elan3_barrier", "--iters=10", &t);
  EXPECT_EQ(r.end, kSixteenNodeBarriersEnd);
  EXPECT_EQ(t.root_acks, 45u);       // one token per broadcast
  EXPECT_EQ(t.combined, 45u * 15u);  // the other 15 of each joined on the way
}

TEST(ElanCollectives, WithoutJoiningEveryNodesTokenComesBackAtTheSameTime) {
  Totals t;
  const nicsim::testing::RunResult r =
      run_tree(16, "elan3_barrier", "--iters=10", &t, "switch_param { key: \"combine\" value: \"false\" }\n");
  EXPECT_EQ(r.end, kSixteenNodeBarriersEnd);
  EXPECT_EQ(t.root_acks, 45u * 16u);
  EXPECT_EQ(t.combined, 0u);
}

// One node late: the tests before it arrives are answered false (its word
// is behind), and the barrier waits for it.
TEST(ElanCollectives, LateNodeMakesTheConditionFalseUntilItArrives) {
  Totals t;
  const nicsim::testing::RunResult r = run_tree(16, "elan3_barrier", "--iters=10 --late=20000", &t);
  EXPECT_GT(r.results.at("tests_per_barrier"), 2.0);
  EXPECT_GT(t.conditions_false, 10u);
  EXPECT_GT(r.results.at("barrier_us"), 20.0);
}

// Every node gets every byte of each size (the program checks them and
// fails otherwise); the figures are exact.
TEST(ElanCollectives, BroadcastReachesEveryNodeByteForByte) {
  Totals t;
  const nicsim::testing::RunResult r = run_tree(16, "elan3_bcast", "--sizes=8,256,4096,65536 --iters=5 --stream=4", &t);
  EXPECT_NEAR(r.results.at("lat_8"), 2.737, 0.001);
  EXPECT_NEAR(r.results.at("lat_256"), 4.42116, 0.001);
  EXPECT_GT(r.results.at("bw_65536"), 150.0);
  EXPECT_LE(r.results.at("bw_65536"), 400.0);  // never above the link
  EXPECT_GT(t.combined, 0u);
}

// The 64-node broadcast figures beside the published ones (13 us for up to
// 256 bytes with libelan, 288 MB/s sustained): below both, for the reasons
// in docs/elan3.md; guarded where they are.
TEST(ElanCollectives, SixtyFourNodeBroadcastGuarded) {
  const std::map<std::string, double> r =
      nicsim::testing::scenario_results("elan3_bcast.textproto", {"--sizes=256,65536", "--iters=5", "--stream=16"});
  EXPECT_NEAR(r.at("lat_256"), 4.51104, 0.00001);  // mean of 5 (the scenario's 20: 4.506)
  EXPECT_NEAR(r.at("bw_65536"), 201.646, 0.001);
}
