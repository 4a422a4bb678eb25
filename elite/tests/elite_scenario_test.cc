// Elite networks in scenario files: the elite_fat_tree helper, explicit
// Elite switches, Elan node ids, the Elite link defaults, the errors for bad
// shapes and wirings (file:line:column), and a whole world running traffic
// over an Elite fat tree.
#include <gtest/gtest.h>

#include <ostream>

#include "core/sim.h"
#include "elite/elite_layout.h"
#include "elite/elite_switch.h"
#include "fabric/raw_nic.h"
#include "scenario/loader.h"
#include "world/programs.h"
#include "world/world.h"

namespace nicsim {
namespace {

bool known_program(std::string_view name) { return ProgramRegistry::instance().find(name) != nullptr; }

Scenario load(const std::string& text) { return load_scenario_text(text, "t.textproto", known_program); }

const elite::Place& place(const SwitchSpec& s) { return std::any_cast<const elite::SwitchPlace&>(s.kind_data).place; }

// Node positions of the scenario's Elite network; 0 without Elite switches.
std::uint32_t elite_nodes(const Scenario& s) {
  for (const SwitchSpec& sw : s.switches)
    if (sw.kind == "elite") return std::any_cast<const elite::SwitchPlace&>(sw.kind_data).nodes;
  return 0;
}

TEST(EliteScenario, FatTreeOf64) {
  Scenario s = load(R"(topology { elite_fat_tree { nodes: 64 } nic: "raw" })");
  ASSERT_EQ(s.nodes.size(), 64u);
  ASSERT_EQ(s.switches.size(), 48u);
  ASSERT_EQ(s.links.size(), 192u);
  EXPECT_EQ(elite_nodes(s), 64u);
  for (std::uint32_t i = 0; i < 64; ++i) EXPECT_EQ(s.nodes[i].address, i);
  for (const SwitchSpec& sw : s.switches) {
    EXPECT_EQ(sw.kind, "elite");
    EXPECT_EQ(sw.ports, 8u);
  }
  // el1_6: level 1, index 6 -> subtree 16..31.
  auto el1_6 = s.switch_index("el1_6");
  ASSERT_TRUE(el1_6);
  EXPECT_EQ(place(s.switches[*el1_6]).level, 1u);
  EXPECT_EQ(place(s.switches[*el1_6]).base, 16u);
  EXPECT_EQ(place(s.switches[*s.switch_index("el2_9")]).level, 2u);
  EXPECT_EQ(place(s.switches[*s.switch_index("el2_9")]).base, 0u);
  // Elite link defaults: 400 MB/s, 2 virtual channels.
  for (const LinkSpec& l : s.links) {
    EXPECT_EQ(l.params.bandwidth("bandwidth"), 3'200'000'000u) << l.name;
    EXPECT_EQ(l.params.count("vls"), 2u) << l.name;
  }
  auto link = s.link_index("el0_5--el1_5");
  ASSERT_TRUE(link);
  // Up port 5 + u reaches the switch whose digit 0 is u (el1_5: u = 1), on
  // its down port (digit 0 of el0_5's index 5 = 1) + 1.
  EXPECT_EQ(s.links[*link].a.port, 6u);
  EXPECT_EQ(s.links[*link].b.port, 2u);
}

TEST(EliteScenario, LinkDefaultsOverrideEliteDefaults) {
  Scenario s = load(R"(topology { elite_fat_tree { nodes: 5 } nic: "raw" }
link_defaults { bandwidth: "1GB/s" delay: "20ns" })");
  EXPECT_EQ(s.switches.size(), 6u);
  for (const LinkSpec& l : s.links) {
    EXPECT_EQ(l.params.bandwidth("bandwidth"), 8'000'000'000u);
    EXPECT_EQ(l.params.time("delay"), 20 * kNs);
    EXPECT_EQ(l.params.count("vls"), 2u);
  }
}

TEST(EliteScenario, ExplicitSwitchesArePlacedFromTheirWiring) {
  Scenario s = load(R"(node { name: "a" } node { name: "b" } node { name: "c" }
node { name: "d" } node { name: "e" } node { name: "ib" }
switch { name: "top" kind: "elite" param { key: "hop_latency" value: "40ns" } }
switch { name: "e0" kind: "elite" }
switch { name: "e1" kind: "elite" }
switch { name: "s" }
link { a: "e" b: "e1:1" }
link { a: "d" b: "e0:4" } link { a: "c" b: "e0:3" } link { a: "b" b: "e0:2" } link { a: "a" b: "e0:1" }
link { a: "e0:5" b: "top:1" }
link { a: "e1:5" b: "top:2" }
link { a: "ib" b: "s" })");
  EXPECT_EQ(elite_nodes(s), 5u);
  const char* names[] = {"a", "b", "c", "d", "e"};
  for (std::int64_t i = 0; i < 5; ++i) EXPECT_EQ(s.nodes[*s.node_index(names[i])].address, i);
  EXPECT_EQ(s.nodes[*s.node_index("ib")].address, -1);
  const SwitchSpec& top = s.switches[*s.switch_index("top")];
  EXPECT_EQ(place(top).level, 1u);
  EXPECT_EQ(top.params.time("hop_latency"), 40 * kNs);
  EXPECT_EQ(place(s.switches[*s.switch_index("e1")]).base, 4u);
  EXPECT_EQ(s.switches[*s.switch_index("s")].kind, "ib");
  // The IB side keeps the IB link defaults.
  EXPECT_EQ(s.links[*s.link_index("ib:1--s:1")].params.count("vls"), 1u);
}

TEST(EliteScenario, TreeHostsDefaultToElan3) {
  Scenario s = load(R"(topology { elite_fat_tree { nodes: 6 } })");
  for (std::uint32_t i = 0; i < 6; ++i) {
    EXPECT_EQ(s.nodes[i].nic, "elan3");
    EXPECT_EQ(s.nodes[i].address, i);
  }
}

TEST(EliteScenario, Elan3NodesWithoutEliteAreNumberedInScenarioOrder) {
  Scenario s = load(R"(node { name: "x" }
node { name: "b" nic: "elan3" }
node { name: "a" nic: "elan3" }
node { name: "y" }
link { a: "a" b: "b" }
link { a: "x" b: "y" })");
  EXPECT_EQ(elite_nodes(s), 0u);
  EXPECT_EQ(s.nodes[*s.node_index("b")].address, 0);
  EXPECT_EQ(s.nodes[*s.node_index("a")].address, 1);
  EXPECT_EQ(s.nodes[*s.node_index("x")].address, -1);
}

// ------------------------------------------------------------------ errors

struct ErrorCase {
  const char* name;
  const char* text;
  int line;
  int column;
  const char* message;
};

const ErrorCase kErrorCases[] = {
    {"TreeZeroNodes", R"(topology { elite_fat_tree { nodes: 0 } nic: "raw" })", 1, 29,
     "elite_fat_tree needs at least 1 node"},
    {"TreeWithoutNodes", R"(topology { elite_fat_tree { } nic: "raw" })", 1, 12,
     "elite_fat_tree needs at least 1 node"},
    {"TreeTooManyNodes", R"(topology { elite_fat_tree { nodes: 5000 } nic: "raw" })", 1, 29,
     "elite_fat_tree has 5000 nodes, more than the Elite limit of 4096"},
    {"TreeWithIbSwitchSetting",
     R"(topology { elite_fat_tree { nodes: 8 } nic: "raw" switch_param { key: "mode" value: "cut_through" } })", 1, 66,
     "'mode' is an IB switch setting; an Elite switch has 8 fixed ports"},
    {"TreeUnknownSwitchKey",
     R"(topology { elite_fat_tree { nodes: 8 } nic: "raw" switch_param { key: "speed" value: "1" } })", 1, 66,
     "switch.elite"},
    {"TreeWithHcaNodes", R"(topology { elite_fat_tree { nodes: 2 } nic: "hca" })", 1, 1,
     "node 'h0' (NIC kind 'hca') is linked to Elite switch 'el0_0': only elan3 and raw NICs"},
    {"EliteSwitchWithPorts", R"(node { name: "a" }
switch { name: "e0" kind: "elite" param { key: "ports" value: "4" } })",
     2, 43, "'ports' is an IB switch setting"},
    {"UnknownSwitchKind", R"(switch { name: "m0" kind: "myrinet" })", 1, 21,
     "unknown switch kind 'myrinet' (use ib or elite)"},
    {"IbSwitchMixedIntoTree", R"(topology { elite_fat_tree { nodes: 4 } nic: "raw" }
switch { name: "s0" }
link { a: "s0" b: "el0_0" })",
     3, 1, "link 's0:1--el0_0:5' joins Elite switch 'el0_0' to IB switch 's0'"},
    {"EliteLinkWithOneVc", R"(topology { elite_fat_tree { nodes: 4 } nic: "raw" }
node { name: "x" }
link { a: "x" b: "el0_0" param { key: "vls" value: "1" } })",
     3, 1, "link 'x:1--el0_0:5' touches Elite switch 'el0_0': Elite links carry 2 virtual channels"},
    {"Elan3NodeOffTheEliteNetwork", R"(topology { elite_fat_tree { nodes: 2 } }
node { name: "p" nic: "elan3" }
node { name: "q" nic: "elan3" }
link { a: "p" b: "q" })",
     2, 8, "elan3 node 'p' is not on the Elite network"},
    {"IbMulticastOnElite", R"(topology { elite_fat_tree { nodes: 4 } nic: "raw" }
multicast { mlid: 49152 members: "h*" })",
     2, 1, "multicast group member 'h0' is on the Elite network"},
    {"Elan3OnIbSwitch", R"(topology { star { hosts: 2 } nic: "elan3" })", 1, 1,
     "link 'h0--sw0' joins elan3 node 'h0' to IB switch 'sw0'"},
    {"NodeOnUpPort", R"(node { name: "a" }
switch { name: "e0" kind: "elite" }
link { a: "a" b: "e0:6" })",
     3, 1, "node 'a' is on up port 6 of Elite switch 'e0'"},
    {"GapInPositions", R"(node { name: "a" }
node { name: "b" }
switch { name: "e0" kind: "elite" }
link { a: "a" b: "e0:1" }
link { a: "b" b: "e0:3" })",
     2, 8, "node 'b' is at position 2 but position 1 is empty"},
    {"DownPortToDownPort", R"(node { name: "a" }
node { name: "b" }
switch { name: "e0" kind: "elite" }
switch { name: "e1" kind: "elite" }
link { a: "a" b: "e0:1" }
link { a: "b" b: "e1:1" }
link { a: "e0:2" b: "e1:2" })",
     7, 1, "link joins down port 2 of Elite switch 'e0' to down port 2 of 'e1'"},
    {"TwoSeparateTrees", R"(node { name: "a" }
node { name: "b" }
switch { name: "e0" kind: "elite" }
switch { name: "e1" kind: "elite" }
link { a: "a" b: "e0:1" }
link { a: "b" b: "e1:1" })",
     2, 8, "nodes 'a' and 'b' both sit at Elite position 0"},
    {"EliteSwitchWithNothingBelow", R"(node { name: "a" }
node { name: "b" }
link { a: "a" b: "b" }
switch { name: "e0" kind: "elite" })",
     4, 10, "Elite switch 'e0' has nothing on its down ports 1-4"},
};

void PrintTo(const ErrorCase& c, std::ostream* os) { *os << c.name; }

class EliteScenarioErrors : public ::testing::TestWithParam<ErrorCase> {};

TEST_P(EliteScenarioErrors, ReportsRuleAndLocation) {
  const ErrorCase& c = GetParam();
  try {
    load(c.text);
    ADD_FAILURE() << "scenario loaded without error:\n" << c.text;
  } catch (const ScenarioError& e) {
    EXPECT_EQ(e.loc().file, "t.textproto");
    EXPECT_EQ(e.loc().line, c.line) << e.what();
    EXPECT_EQ(e.loc().column, c.column) << e.what();
    EXPECT_NE(e.message().find(c.message), std::string::npos) << e.what();
  }
}

INSTANTIATE_TEST_SUITE_P(All, EliteScenarioErrors, ::testing::ValuesIn(kErrorCases),
                         [](const ::testing::TestParamInfo<ErrorCase>& info) { return std::string(info.param.name); });

// ------------------------------------------------------------------- world

TEST(EliteWorld, PermutationTrafficOverAnEliteFatTree) {
  Scenario sc = load(R"(seed: 5
topology { elite_fat_tree { nodes: 16 } nic: "raw" }
workload { program: "fabric_traffic" nodes: "h*"
           args: "--pattern=permutation" args: "--size=256B" args: "--load=0.5" args: "--duration=20us" })");
  Sim sim(sc.seed);
  World world(sc);
  ASSERT_EQ(world.num_switches(), 4u + 4u);
  for (std::uint32_t i = 0; i < 16; ++i) EXPECT_EQ(world.node(i).lid(1), i);
  EXPECT_NE(world.switch_as<elite::EliteSwitch>(0), nullptr);
  const RunStatus st = world.run();
  EXPECT_TRUE(st.ok);
  std::uint64_t rx = 0, tx = 0, forwarded = 0, up = 0;
  for (std::uint32_t i = 0; i < 16; ++i) {
    auto* nic = world.node(i).nic_as<fabric::RawNic>();
    ASSERT_NE(nic, nullptr);
    rx += nic->stats().rx_packets;
    tx += nic->stats().tx_packets;
    EXPECT_EQ(nic->stats().rx_corrupt, 0u);
  }
  for (std::uint32_t s = 0; s < world.num_switches(); ++s) {
    elite::EliteSwitch* e = world.switch_as<elite::EliteSwitch>(s);
    ASSERT_NE(e, nullptr);
    forwarded += e->stats().forwarded;
    for (auto u : e->stats().up_choices) up += u;
    EXPECT_EQ(e->stats().unroutable + e->stats().dead_route, 0u);
  }
  // 256 B at 400 MB/s = 640 ns; half load: one packet per 1.28 us for 20 us.
  EXPECT_GE(tx, 16u * 15);
  EXPECT_EQ(rx, tx);
  EXPECT_GT(up, 0u);
  EXPECT_GE(forwarded, rx);
}

TEST(EliteWorld, ShippedElite64ScenarioRuns) {
  Scenario sc = load_scenario_file(std::string(NICSIM_SOURCE_DIR) + "/scenarios/elite_64.textproto", known_program);
  ASSERT_EQ(elite_nodes(sc), 64u);
  for (auto& w : sc.workloads)
    for (auto& a : w.args)
      if (a.rfind("--duration=", 0) == 0) a = "--duration=20us";  // a short run
  Sim sim(sc.seed);
  World world(sc);
  EXPECT_TRUE(world.run().ok);
  std::uint64_t rx = 0, tx = 0;
  for (std::uint32_t i = 0; i < 64; ++i) {
    const auto& st = world.node(i).nic_as<fabric::RawNic>()->stats();
    rx += st.rx_packets;
    tx += st.tx_packets;
    EXPECT_EQ(st.rx_corrupt, 0u);
  }
  EXPECT_GT(tx, 0u);
  EXPECT_EQ(rx, tx);
  EXPECT_EQ(world.fabric().pool().live(), 0u);
}

}  // namespace
}  // namespace nicsim
