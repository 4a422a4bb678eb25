// An Elan run cut by the stop time with traffic in flight ends with nothing
// left (the sanitizer build's leak check is what proves it).
#include <gtest/gtest.h>

#include <string>

#include "sim/tests/test_shell.h"

namespace nicsim {
namespace {

using testing::run_cuts;

// The IP driver streams datagrams over Kernel Comms large messages: MMU
// walks, event updates and bus transfers under way at the cut.
TEST(WorldEnd, ElanRunsCutMidTransferEndWithNothingLeft) {
  run_cuts("elan", R"(
    name: "elan_cut"
    topology { elite_fat_tree { nodes: 2 } node_param { key: "bus.profile" value: "pci-66" } }
    workload { program: "eip_stream" nodes: "h0" nodes: "h1" args: "--sizes=1500,9000,65000" args: "--iters=200" }
  )",
           {"100us", "1ms", "1100us", "1234567ns", "2ms"});
}

}  // namespace
}  // namespace nicsim
