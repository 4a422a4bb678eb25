// The debugger on TI connections: a scripted session (tests/debug/ti_conn.cmds
// says what it checks) over the SDP ping-pong scenario that breaks when a
// connection is established, shows both ends, stops at a TI call and watches
// the connection's sends, then goes back to the call.
#include <string>

#include "tests/test_shell.h"

namespace nicsim::ti {
namespace {

TEST(DebuggerScript, TiConnectionsListedShownAtTheirCallsAndWatched) {
  const std::string root = std::string(NICSIM_SOURCE_DIR);
  const testing::CliResult r = testing::run_nicsim("debug " + root + "/scenarios/sdp_pingpong.textproto --script " +
                                                   root + "/ti/tests/debug/ti_conn.cmds");
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("remote        10.0.0.2:5001"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace nicsim::ti
