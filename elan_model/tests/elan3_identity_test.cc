// The Elan3 driver learns its node id and the machine size from the Elan's
// own registers (node_id, machine_size), which the world sets from the
// network position the scenario gives each Elan; it reads them by MMIO at
// attach and never looks at another node.
#include <gtest/gtest.h>

#include "elan_model/tests/elan3_harness.h"

using namespace nicsim;
using namespace nicsim::elan3;
using namespace nicsim::elan3::testing;

namespace {

struct Identity {
  std::uint32_t node = ~0u, machine = ~0u;
  Tick busy_before = 0, busy_after = 0;
};
Identity g_id[2];

int identity(int, char**) {
  Identity& id = g_id[nicsim_workload_rank()];
  id.busy_before = this_elan().bus().busy_time();
  Elan3Dev* d = Elan3Dev::attach();
  EXPECT_NE(d, nullptr);
  if (!d) return 1;
  id.node = d->node_id();
  id.machine = d->num_nodes();
  id.busy_after = this_elan().bus().busy_time();
  return 0;
}
const BuiltinProgram reg("elan3_test_identity", identity, "test");

void run(World& world) {
  const RunStatus st = world.run();
  for (const auto& e : Sim::get().errors().all()) ADD_FAILURE() << e.where << ": " << e.message;
  EXPECT_TRUE(st.ok);
}

}  // namespace

TEST(Elan3Identity, TheDriverReportsWhatTheWorldGaveTheElan) {
  const Scenario sc = two_elans("elan3_test_identity");
  Sim sim(sc.seed);
  World world(sc);
  run(world);
  EXPECT_EQ(g_id[0].node, 0u);
  EXPECT_EQ(g_id[1].node, 1u);
  EXPECT_EQ(g_id[0].machine, 2u);
  EXPECT_EQ(g_id[1].machine, 2u);
  EXPECT_GT(g_id[0].busy_after, g_id[0].busy_before) << "attach reads the registers over the bus";
}

TEST(Elan3Identity, ChangedRegistersAreWhatTheDriverReports) {
  const Scenario sc = two_elans("elan3_test_identity");
  Sim sim(sc.seed);
  World world(sc);
  // As if the network had placed the two Elans at positions 5 and 9 of a
  // 12-node machine: only the Elans' own registers say so.
  world.node(0).nic().assign_address(1, 5);
  world.node(1).nic().assign_address(1, 9);
  for (std::uint32_t i = 0; i < 2; ++i) world.node(i).nic().assign_network_size(12);
  run(world);
  EXPECT_EQ(g_id[0].node, 5u);
  EXPECT_EQ(g_id[1].node, 9u);
  EXPECT_EQ(g_id[0].machine, 12u);
  EXPECT_EQ(g_id[1].machine, 12u);
}

TEST(Elan3Identity, OnAnEliteTreeTheMachineSizeIsItsNodePositions) {
  const Scenario sc = load_scenario_text(
      R"(
    name: "identity"
    topology { elite_fat_tree { nodes: 5 } node_param { key: "bus.profile" value: "pci-66" } }
    workload { program: "elan3_test_identity" nodes: "h3" nodes: "h4" }
  )",
      "identity.textproto", [](std::string_view n) { return ProgramRegistry::instance().find(n) != nullptr; });
  Sim sim(sc.seed);
  World world(sc);
  run(world);
  EXPECT_EQ(g_id[0].node, 3u);
  EXPECT_EQ(g_id[1].node, 4u);
  EXPECT_EQ(g_id[0].machine, 5u);
  EXPECT_EQ(g_id[1].machine, 5u);
}

// An Elan3 has one port and no `ports` setting: the field is bad input.
TEST(Elan3Identity, ThePortsFieldIsAnErrorOnAnElan) {
  try {
    load_scenario_text(R"(node { name: "a" nic: "elan3" ports: 2 })", "ports.textproto", nullptr);
    FAIL() << "accepted";
  } catch (const ScenarioError& e) {
    EXPECT_EQ(e.loc().line, 1);
    EXPECT_EQ(e.loc().column, 31);
    EXPECT_EQ(e.message(), "NIC kind 'elan3' has no ports setting");
  }
}
