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
#include "ib_fabric/routing.h"
#include "ib_fabric/switch.h"
#include "scenario/loader.h"
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

namespace {

std::string raw_shape(const std::string& shape, const std::string& engine) {
  return "topology { " + shape + " host_prefix: \"h\" nic: \"raw\" switch_param { key: \"routing\" value: \"" + engine +
         "\" } }\n"
         "link_defaults { bandwidth: \"8Gbps\" delay: \"5ns\" }\n"
         "workload { program: \"fabric_traffic\" nodes: \"h*\" args: \"--pattern=permutation\" args: \"--size=2KiB\" "
         "args: \"--load=0.3\" args: \"--duration=100us\" args: \"--drain=300us\" }\n";
}

// Runs a generated shape: every packet sent arrives, and the tables the
// static routing programmed pass the engine's checks.
fabric::routing::RouteCheck run_shape(const std::string& shape, const std::string& engine, std::size_t* switches,
                                      std::size_t* links) {
  fabric::routing::RouteCheck check;
  nicsim::testing::RunOptions o;
  o.inspect = [&](World& world) {
    std::vector<fabric::Device*> sws;
    for (std::uint32_t s = 0; s < world.num_switches(); ++s) sws.push_back(&world.switch_device(s));
    std::vector<fabric::EndpointAddress> eps;
    std::uint64_t tx = 0, rx = 0;
    for (std::uint32_t i = 0; i < world.num_nodes(); ++i) {
      eps.push_back({&world.node(i).nic(), 1, world.node(i).lid()});
      auto* raw = world.node(i).nic_as<fabric::RawNic>();
      tx += raw->stats().tx_packets;
      rx += raw->stats().rx_packets;
    }
    EXPECT_GT(tx, 0u);
    EXPECT_EQ(rx, tx);
    const fabric::routing::Graph g = fabric::routing_graph(sws, eps);
    fabric::routing::Engine e = fabric::routing::Engine::Auto;
    fabric::routing::parse_engine(engine, &e);
    check = fabric::routing::check_routes(g, fabric::routing::compute(g, e));
    *switches = sws.size();
    std::size_t l = 0;
    for (const auto& n : g.nodes)
      for (const auto& p : n.ports) l += p.peer >= 0 ? 1 : 0;
    *links = l / 2;
  };
  nicsim::testing::run_text(raw_shape(shape, engine), o);
  return check;
}

}  // namespace

TEST(IbTopologies, TwoDimensionalTorusRoutedUpDown) {
  std::size_t switches = 0, links = 0;
  auto c = run_shape("torus { dims: 4 dims: 4 hosts_per_switch: 2 }", "updn", &switches, &links);
  EXPECT_EQ(switches, 16u);
  EXPECT_EQ(links, 32u + 32u);  // 2 per switch in the torus, 32 hosts
  EXPECT_EQ(c.unreachable, 0u);
  EXPECT_EQ(c.loops, 0u);
  EXPECT_EQ(c.down_then_up, 0u);
}

TEST(IbTopologies, ThreeDimensionalTorusWithASizeTwoDimension) {
  std::size_t switches = 0, links = 0;
  const auto c = run_shape("torus { dims: 2 dims: 3 dims: 4 hosts_per_switch: 1 }", "updn", &switches, &links);
  EXPECT_EQ(switches, 24u);
  EXPECT_EQ(links, 12u + 24u + 24u + 24u);  // a size-2 dimension has one link per pair
  EXPECT_EQ(c.unreachable + c.loops + c.down_then_up, 0u);
}

TEST(IbTopologies, DragonflyEveryGroupPairJoinedOnce) {
  std::size_t switches = 0, links = 0;
  const auto c =
      run_shape("dragonfly { groups: 9 routers_per_group: 4 hosts_per_router: 2 global_links_per_router: 2 }", "minhop",
                &switches, &links);
  EXPECT_EQ(switches, 36u);
  EXPECT_EQ(links, 72u + 9u * 6u + 36u);  // hosts, all-to-all in each group, one per pair of groups
  EXPECT_EQ(c.unreachable + c.loops + c.longer_than_shortest, 0u);
}

TEST(IbTopologies, BadShapesAreScenarioErrors) {
  for (const char* shape : {"torus { dims: 4 hosts_per_switch: 1 }", "torus { dims: 1 dims: 4 hosts_per_switch: 1 }",
                            "dragonfly { groups: 20 routers_per_group: 2 hosts_per_router: 1 "
                            "global_links_per_router: 2 }"}) {
    try {
      nicsim::testing::load_text(raw_shape(shape, "updn"));
      ADD_FAILURE() << shape << " was accepted";
    } catch (const ScenarioError& e) {
      EXPECT_NE(std::string(e.what()).find("test.textproto:1:"), std::string::npos) << e.what();
    }
  }
}

namespace {

// 8 hosts on one switch, uniform random 2 KiB packets at 95% load: with FIFO
// inputs packets wait for the one ahead of them on their input to cross,
// though their own output may be free (head-of-line blocking), and the last
// delivery comes later: 95% is further beyond the FIFO switch's saturation
// (about 63% per port, saturation_test.cc) than the other's (about 83%).
struct HolRun {
  std::uint64_t waits = 0;
  Tick max_latency = 0;
};

HolRun run_hol(const char* mode) {
  HolRun h;
  nicsim::testing::RunOptions o;
  o.inspect = [&](World& world) {
    h.waits = world.switch_as<fabric::Switch>(0)->stats().head_of_line_waits;
    for (std::uint32_t i = 0; i < world.num_nodes(); ++i)
      h.max_latency = std::max(h.max_latency, world.node(i).nic_as<fabric::RawNic>()->latency().max());
  };
  nicsim::testing::run_text(
      std::string("topology { star { hosts: 8 } host_prefix: \"h\" nic: \"raw\" switch_param { key: "
                  "\"input_queue\" value: \"") +
          mode +
          "\" } }\n"
          "link_defaults { bandwidth: \"8Gbps\" delay: \"5ns\" }\n"
          "workload { program: \"fabric_traffic\" nodes: \"h*\" args: \"--pattern=uniform\" args: \"--size=2KiB\" "
          "args: \"--load=0.95\" args: \"--duration=200us\" args: \"--drain=500us\" args: \"--arrival=poisson\" }\n",
      o);
  return h;
}

}  // namespace

TEST(IbSwitchInputs, FifoInputsBlockBehindTheirHead) {
  const HolRun h = run_hol("fifo");
  EXPECT_EQ(h.waits, 728u);
  EXPECT_EQ(h.max_latency, Tick{128484152});
}

TEST(IbSwitchInputs, AnyOrderInputsNeverWait) {
  const HolRun h = run_hol("any");
  EXPECT_EQ(h.waits, 0u);
  EXPECT_LT(h.max_latency, Tick{128484152});
}

namespace {

// The all-to-all exchange on a 64-host fat tree: each node sends to every
// other in turn, so every node sends and receives exactly the same number
// of packets, with none corrupted (uniform random destinations would not
// give equal counts).
TEST(IbFabricAtScale, AllToAllExchangeSendsToEveryNodeInTurn) {
  std::string text = permutation_on_fat_tree(3, 0.5);
  text.replace(text.find("--pattern=permutation"), std::string("--pattern=permutation").size(), "--pattern=alltoall");
  std::vector<std::uint64_t> tx, rx;
  std::uint64_t corrupt = 0;
  nicsim::testing::RunOptions o;
  o.inspect = [&](World& world) {
    for (std::uint32_t i = 0; i < world.num_nodes(); ++i)
      if (auto* raw = world.node(i).nic_as<fabric::RawNic>()) {
        tx.push_back(raw->stats().tx_packets);
        rx.push_back(raw->stats().rx_packets);
        corrupt += raw->stats().rx_corrupt;
      }
  };
  nicsim::testing::run_text(text, o);
  ASSERT_EQ(rx.size(), 64u);
  EXPECT_EQ(tx.front(), 49u);  // 200 us at half the 2.048 us serialisation rate
  for (std::size_t i = 0; i < rx.size(); ++i) {
    EXPECT_EQ(tx[i], tx.front()) << "node " << i;
    EXPECT_EQ(rx[i], tx.front()) << "node " << i;
  }
  EXPECT_EQ(corrupt, 0u);
}

}  // namespace
