// Routing at scale, end to end: a 256-host 4-ary 4-tree of IB switches with
// raw NICs, statically routed (the fat-tree engine by default), under a
// random permutation at 20% offered load of 2 KiB packets. A k-ary n-tree
// has full bisection bandwidth, so the latency stays near the zero-load
// latency of the longest path: 2.048 us on the wire + 7 switches x 200 ns +
// 8 cables x 5 ns = 3.488 us. Before the routing engines every level chose
// its up port by the same LID digit and 4 of the 64 top switches carried
// everything (p50 151 us).
#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "fabric/raw_nic.h"
#include "ib_fabric/switch.h"
#include "sim/tests/world_run.h"

using namespace nicsim;

namespace {

std::string permutation_on_fat_tree(int n, double load, const std::string& switch_params = "") {
  return "topology { fat_tree { k: 4 n: " + std::to_string(n) + " } host_prefix: \"h\" nic: \"raw\" " + switch_params +
         "}\n"
         "link_defaults { bandwidth: \"8Gbps\" delay: \"5ns\" }\n"
         "workload { program: \"fabric_traffic\" nodes: \"h*\" args: \"--pattern=permutation\" args: \"--size=2KiB\" "
         "args: \"--load=" +
         std::to_string(load) + "\" args: \"--duration=200us\" args: \"--drain=50us\" }\n";
}

struct Seen {
  Histogram latency;
  int top_switches = 0, top_used = 0;
};

Seen run(const std::string& text) {
  Seen seen;
  nicsim::testing::RunOptions o;
  o.inspect = [&](World& world) {
    for (std::uint32_t i = 0; i < world.num_nodes(); ++i)
      if (auto* raw = world.node(i).nic_as<fabric::RawNic>()) seen.latency.merge(raw->latency());
    for (std::uint32_t s = 0; s < world.num_switches(); ++s) {
      auto* sw = world.switch_as<fabric::Switch>(s);
      ASSERT_NE(sw, nullptr);
      if (sw->name().rfind("sw3_", 0) != 0) continue;
      ++seen.top_switches;
      if (sw->stats().forwarded > 0) ++seen.top_used;
    }
  };
  nicsim::testing::run_text(text, o);
  return seen;
}

constexpr double kZeroLoadUs = 3.488;

}  // namespace

TEST(IbFabricAtScale, PermutationAtTwentyPercentOn256HostsStaysNearZeroLoadLatency) {
  const Seen s = run(permutation_on_fat_tree(4, 0.2));
  const double p50 = static_cast<double>(s.latency.percentile(50)) / 1e6;
  const double p99 = static_cast<double>(s.latency.percentile(99)) / 1e6;
  std::printf("256 hosts, 20%%: p50 %.3f us, p99 %.3f us; top switches carrying traffic %d of %d\n", p50, p99,
              s.top_used, s.top_switches);
  EXPECT_GT(s.latency.count(), 5000u);
  EXPECT_LE(p50, kZeroLoadUs * 1.1);
  EXPECT_LE(p99, kZeroLoadUs * 2.5);
  EXPECT_EQ(s.top_switches, 64);
  EXPECT_GE(s.top_used, 60);
}
