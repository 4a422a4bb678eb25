// Elan Kernel Comms on a node whose bus holds no Elan3: the node's probe
// binds no Elan3 driver, and every call fails as the interface says (no
// node number, no node count, no transmitter or receiver) without a crash
// or a simulation error.
#include "ep/tests/ep_test_util.h"

using namespace nicsim;
using namespace nicsim::ep::testing;

namespace {

int g_nodeid = 0, g_numnodes = 0;
bool g_xmtr = true, g_rcvr = true;

int no_elan(int, char**) {
  g_nodeid = ep_nodeid();
  g_numnodes = ep_numnodes();
  g_xmtr = ep_alloc_small_xmtr(0, EP_SVC_TYPE_SMALL, 64) != nullptr;
  g_rcvr = ep_install_small_rcvr(0, EP_SVC_FIRST_FREE, EP_SVC_TYPE_SMALL, 64, 4, nullptr, nullptr) != nullptr;
  return 0;
}
const BuiltinProgram reg("ep_test_no_elan", no_elan, "test");

}  // namespace

TEST(EpNoElan, CallsOnANodeWithoutAnElanFailCleanly) {
  run_text(R"(
    name: "ep_no_elan"
    node { name: "ib" nic: "hca" }
    node { name: "raw" nic: "raw" }
    switch { name: "sw" }
    link { a: "ib" b: "sw" }
    link { a: "raw" b: "sw" }
    subnet_manager { off: true }
    workload { program: "ep_test_no_elan" nodes: "ib" }
  )");
  EXPECT_EQ(g_nodeid, -1);
  EXPECT_FALSE(g_xmtr);
  EXPECT_FALSE(g_rcvr);
  EXPECT_EQ(g_numnodes, 0);
}
