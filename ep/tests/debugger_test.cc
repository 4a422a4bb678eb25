// The debugger on the Elan: a scripted session (tests/debug/ep_pingpong.cmds
// says what it checks) that breaks when a virtual circuit connects, shows
// it and the DMA queue, steps to an ack token and goes back.
#include <string>

#include "tests/test_shell.h"

namespace nicsim::ep {
namespace {

TEST(DebuggerScript, EpCircuitAndElanDmaQueueInspectedSteppedAndReversed) {
  const std::string dir = std::string(NICSIM_SOURCE_DIR) + "/ep/tests/debug/";
  const testing::CliResult r =
      testing::run_nicsim("debug " + dir + "ep_pingpong.textproto --script " + dir + "ep_pingpong.cmds");
  EXPECT_EQ(r.exit_code, 0) << r.out;
}

}  // namespace
}  // namespace nicsim::ep
