// The debugger on DAT endpoints: a scripted session (tests/debug/dat_ep.cmds
// says what it checks) that breaks when an EP connects, stops at DAT calls
// and watches a request stay outstanding on its EP until it completes.
#include <string>

#include "tests/test_shell.h"

namespace nicsim::dapl {
namespace {

TEST(DebuggerScript, DatEndpointsListedShownAtTheirCallsAndWatched) {
  const std::string dir = std::string(NICSIM_SOURCE_DIR) + "/dapl/tests/debug/";
  const testing::CliResult r =
      testing::run_nicsim("debug " + dir + "dapl_transaction.textproto --script " + dir + "dat_ep.cmds");
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("request[0]                   dto 0x2, 9 bytes"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace nicsim::dapl
