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
  Result quiet = run("run " + dir + "quickstart.textproto --arg ep_small_lat:--bogus");
  EXPECT_EQ(quiet.exit_code, 1) << quiet.out;
  EXPECT_NE(quiet.out.find("el0 failed: exited with status 1; its last log line: unknown argument '--bogus'"),
            std::string::npos)
      << quiet.out;
}

// Each stack's programs, one bad value each: the reason names the argument
// and what it takes, where a number once wrapped (--bytes=-1 as 2^64-1), was
// cut short (--sizes=4096,x as 4096) or ran out of node memory unexplained
// (a 2 GiB Kernel Comms message).
TEST(ProgramArguments, EveryStacksProgramsNameTheirBadValues) {
  const std::string dir = std::string(NICSIM_SOURCE_DIR) + "/scenarios/";
  const struct {
    const char* scenario;
    const char* arg;
    const char* reason;
  } cases[] = {
      {"ep_large_bw", "--sizes=2147483648",
       "--sizes=2147483648: expected 1 to 16 numbers separated by commas, each a whole number from 1 to 67108864"},
      {"ep_large_bw", "--sizes=0",
       "--sizes=0: expected 1 to 16 numbers separated by commas, each a whole number from 1"},
      {"ep_small_lat", "--sizes=4096", "cannot install the receiver or allocate the transmitter: a small message and"},
      {"ep_large_bw", "--window=0", "--window=0: expected a whole number from 1 to 4096"},
      {"sdp_stream", "--bytes=-1", "--bytes=-1: expected a whole number from 1 to 1099511627776"},
      {"sdp_stream", "--sizes=4096,x", "--sizes=4096,x: expected 1 to 16 numbers separated by commas"},
      {"sdp_soak", "--port=70000", "--port=70000: expected a whole number from 1 to 65535"},
      {"dapl_soak", "--window=3", "dapl_soak: --window must be even"},
      {"dapl_transaction", "--ops=x", "dapl_transaction: --ops takes one to three of s, w and r"},
      {"dapl_transaction", "--eps=0", "--eps=0: expected a whole number from 1 to"},
      {"dapl_limit", "--max=abc", "--max=abc: expected a whole number from 1 to 1048576"},
      {"ib_ud_soak", "--mlid=+49152", "ib_ud_soak: --mlid must be a multicast LID (0xc000-0xfffe)"},
  };
  for (const auto& c : cases) {
    Result r = run("run " + dir + c.scenario + ".textproto --arg " + c.arg);
    EXPECT_EQ(r.exit_code, 1) << c.scenario << " " << c.arg << "\n" << r.out;
    EXPECT_NE(r.out.find(std::string(" failed: ") + c.reason), std::string::npos) << c.scenario << " " << c.arg << "\n"
                                                                                  << r.out;
  }
}

}  // namespace
