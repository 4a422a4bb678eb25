// The Elan3 NIC model over an Elite switch: elan-hw's two-sided remote-write
// program (t_elan_write: every size class, payload checked byte by byte,
// ack tokens for every packet) between two elan3 nodes of an
// elite_fat_tree, instead of back to back.
#include <gtest/gtest.h>

#include "elite/elite_switch.h"
#include "elan_model/tests/elan3_harness.h"

using namespace nicsim;

namespace {

TEST(EliteElan3, RemoteWritesThroughAnEliteSwitch) {
  const Scenario sc = load_scenario_text(
      R"(topology { elite_fat_tree { nodes: 2 } node_param { key: "bus.profile" value: "pci-66" } }
workload { program: "t_elan_write" nodes: "*" })",
      "test.textproto", [](std::string_view n) { return ProgramRegistry::instance().find(n) != nullptr; });
  ASSERT_EQ(sc.nodes[0].nic, "elan3");  // the helper's default NIC kind
  Sim sim(sc.seed);
  World world(sc);
  EXPECT_EQ(world.node(0).lid(1), 0u);
  EXPECT_EQ(world.node(1).lid(1), 1u);
  const RunStatus st = world.run();
  for (auto& e : sim.errors().all()) ADD_FAILURE() << e.where << ": " << e.message;
  for (auto& p : world.programs()) EXPECT_EQ(p->state(), ProgramState::Finished) << p->failure();
  EXPECT_TRUE(st.ok);
  elite::EliteSwitch* sw = world.switch_as<elite::EliteSwitch>(0);
  ASSERT_NE(sw, nullptr);
  EXPECT_GT(sw->stats().forwarded, 1000u);
  EXPECT_EQ(sw->stats().unroutable + sw->stats().dead_route, 0u);
}

}  // namespace
