// Programs' arguments as the command line and scenarios give them, over
// the stacks' own programs (so outside the core's tests, which name no
// network).
#include <gtest/gtest.h>

#include <string>

#include "sim/tests/test_shell.h"

namespace {

using nicsim::testing::CliResult;
using Result = CliResult;

Result run(const std::string& args) { return nicsim::testing::run_nicsim(args); }

// Programs' numbers are whole and in range (nicsim_arg_u64): a sign or a
// stray character is the program's failure, named, not a wrapped value;
// a program that exits with an error without saying why is reported with
// its last log line.
TEST(ProgramArguments, AreCheckedAndFailuresSayWhy) {
  const std::string dir = std::string(NICSIM_SOURCE_DIR) + "/scenarios/";
  Result late = run("run " + dir + "elan3_barrier.textproto --arg --late=-1");
  EXPECT_EQ(late.exit_code, 1) << late.out;
  EXPECT_NE(late.out.find("h0 failed: --late=-1: expected a whole number from 0 to 1000000000"), std::string::npos)
      << late.out;
  Result sizes = run("run " + dir + "elan3_bcast.textproto --arg --sizes=8,,64");
  EXPECT_EQ(sizes.exit_code, 1) << sizes.out;
  EXPECT_NE(sizes.out.find("--sizes=8,,64: expected 1 to 64 numbers separated by commas, each a whole number from 1"),
            std::string::npos)
      << sizes.out;
  Result quiet = run("run " + dir + "quickstart.textproto --arg ep_small_lat:--sizes=abc");
  EXPECT_EQ(quiet.exit_code, 1) << quiet.out;
  EXPECT_NE(quiet.out.find("el0 failed: exited with status 1; its last log line: bad --sizes 'abc'"), std::string::npos)
      << quiet.out;
}

}  // namespace
