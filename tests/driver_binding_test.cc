// Drivers find their hardware on the node's host bus: each node's probe
// binds the verbs driver to an InfiniHost function and the Elan3 driver to
// an Elan3 function, and nothing else. On a node without the hardware the
// consumer-facing lookups fail as their specifications say (NULL / no
// device), without a crash and without a simulation error.
#include <gtest/gtest.h>

#include "core/sim.h"
#include "elan_model/driver/elan3_dev.h"
#include "iba/nicsim_ca.h"
#include "nicsim/app.h"
#include "world/programs.h"
#include "world/world.h"

using namespace nicsim;

namespace {

struct Seen {
  const ci_interface_t* ci = nullptr;
  const ci_interface_t* sm_ci = nullptr;
  ib_net64_t guid = 0;
  bool elan = false;
  bool elan_current = false;
};
Seen g_seen[3];

int lookups(int, char**) {
  Seen& s = g_seen[nicsim_workload_rank()];
  s.ci = nicsim_ci_interface();
  s.sm_ci = nicsim_sm_ci_interface();
  s.guid = nicsim_ca_guid();
  s.elan = elan3::Elan3Dev::attach() != nullptr;
  s.elan_current = elan3::Elan3Dev::current() != nullptr;
  return 0;
}
const BuiltinProgram reg("test_driver_lookups", lookups, "test");

}  // namespace

TEST(DriverBinding, EachDriverBindsOnlyItsOwnHardwareAndLookupsElsewhereFailCleanly) {
  Scenario sc = load_scenario_text(R"(
    name: "binding"
    node { name: "ib" nic: "hca" }
    node { name: "el" nic: "elan3" }
    node { name: "raw" nic: "raw" }
    node { name: "el2" nic: "elan3" }
    switch { name: "sw" }
    link { a: "ib" b: "sw" }
    link { a: "raw" b: "sw" }
    link { a: "el" b: "el2" }
    subnet_manager { off: true }
    workload { program: "test_driver_lookups" nodes: "ib" nodes: "el" nodes: "raw" }
  )",
                                   "binding.textproto",
                                   [](std::string_view n) { return ProgramRegistry::instance().find(n) != nullptr; });
  Sim sim(sc.seed);
  World world(sc);
  const RunStatus st = world.run();
  for (const auto& e : sim.errors().all()) ADD_FAILURE() << e.where << ": " << e.message;
  EXPECT_TRUE(st.ok);

  // What each node's probe found on its bus, and what it bound.
  host::HostBus& ib = world.node(0).bus();
  ASSERT_EQ(ib.functions().size(), 1u);
  EXPECT_EQ(ib.functions()[0].vendor, 0x15b3);
  EXPECT_EQ(ib.functions()[0].device, 0x5a44);
  EXPECT_EQ(ib.functions()[0].class_code, 0x0c0600u);
  EXPECT_NE(ib.bound("verbs"), nullptr);
  EXPECT_EQ(ib.bound("elan3"), nullptr);
  host::HostBus& el = world.node(1).bus();
  ASSERT_EQ(el.functions().size(), 1u);
  EXPECT_EQ(el.functions()[0].vendor, 0x14fc);
  EXPECT_EQ(el.functions()[0].device, 0x0000);
  EXPECT_NE(el.bound("elan3"), nullptr);
  EXPECT_EQ(el.bound("verbs"), nullptr);
  EXPECT_TRUE(world.node(2).bus().functions().empty());

  // The HCA node: verbs, no Elan.
  ASSERT_NE(g_seen[0].ci, nullptr);
  EXPECT_EQ(g_seen[0].ci->vend_id, 0x15b3u);
  EXPECT_EQ(g_seen[0].ci->dev_id, 0x5a44);
  EXPECT_NE(g_seen[0].sm_ci, nullptr);
  EXPECT_NE(g_seen[0].guid, 0u);
  EXPECT_FALSE(g_seen[0].elan);
  EXPECT_FALSE(g_seen[0].elan_current);
  // The Elan node and the raw node: no verbs provider (NULL, GUID 0).
  for (int r : {1, 2}) {
    EXPECT_EQ(g_seen[r].ci, nullptr) << r;
    EXPECT_EQ(g_seen[r].sm_ci, nullptr) << r;
    EXPECT_EQ(g_seen[r].guid, 0u) << r;
  }
  EXPECT_TRUE(g_seen[1].elan);
  EXPECT_TRUE(g_seen[1].elan_current);
  EXPECT_FALSE(g_seen[2].elan);
}
