// Programs' arguments as the command line and scenarios give them, over
// the stacks' own programs (so outside the core's tests, which name no
// network).
#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "sim/tests/test_shell.h"

namespace {

using nicsim::testing::CliResult;
using Result = CliResult;

Result run(const std::string& args) { return nicsim::testing::run_nicsim(args); }

// Programs' numbers are whole and in range (nicsim_arg_u64): a sign or a
// stray character is refused, named, not a wrapped value. Each stack's
// programs check their arguments when the scenario is loaded, so a bad one
// ends the run before anything is built: exit 2, at its workload.
TEST(ProgramArguments, AreCheckedBeforeTheRun) {
  const std::string dir = std::string(NICSIM_SOURCE_DIR) + "/scenarios/";
  Result late = run("run " + dir + "elan3_barrier.textproto --arg --late=-1");
  EXPECT_EQ(late.exit_code, 2) << late.out;
  EXPECT_NE(late.out.find("elan3_barrier.textproto:18:1: with --arg, program 'elan3_barrier' does not take its "
                          "arguments: --late=-1: expected a whole number from 0 to 1000000000"),
            std::string::npos)
      << late.out;
  Result sizes = run("validate " + dir + "elan3_bcast.textproto --arg --sizes=8,,64");
  EXPECT_EQ(sizes.exit_code, 2) << sizes.out;
  EXPECT_NE(sizes.out.find("--sizes=8,,64: expected 1 to 64 numbers separated by commas, each a whole number from 1"),
            std::string::npos)
      << sizes.out;
  // A reason the parser only logged.
  Result quiet = run("run " + dir + "quickstart.textproto --arg ep_small_lat:--bogus");
  EXPECT_EQ(quiet.exit_code, 2) << quiet.out;
  EXPECT_NE(quiet.out.find("program 'ep_small_lat' does not take its arguments: unknown argument '--bogus'"),
            std::string::npos)
      << quiet.out;
}

// A bad argument written in the file is placed at itself.
TEST(ProgramArguments, AFilesBadArgumentIsPlacedAtItself) {
  const auto dir = nicsim::testing::temp_dir("program_args_file");
  const std::string file = (dir / "bad.textproto").string();
  std::ofstream(file) << "topology { elite_fat_tree { nodes: 2 } }\n"
                         "workload {\n  program: \"ep_large_bw\"\n  nodes: \"h0\"\n  nodes: \"h1\"\n"
                         "  args: \"--iters=4\"\n  args: \"--window=0\"\n}\n";
  Result r = run("validate " + file);
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.out.find("bad.textproto:7:3: args: program 'ep_large_bw' does not take these arguments: --window=0: "
                       "expected a whole number from 1 to 4096"),
            std::string::npos)
      << r.out;
}

// Each stack's programs, one bad value each: the reason names the argument
// and what it takes, where a number once wrapped (--bytes=-1 as 2^64-1), was
// cut short (--sizes=4096,x as 4096) or ran out of node memory unexplained
// (a 2 GiB Kernel Comms message). What depends on the NIC (a small message
// must fit one Elan3 packet) is found when the program runs: exit 1.
TEST(ProgramArguments, EveryStacksProgramsNameTheirBadValues) {
  const std::string dir = std::string(NICSIM_SOURCE_DIR) + "/scenarios/";
  const struct {
    const char* scenario;
    const char* arg;
    const char* reason;
    int exit_code;
  } cases[] = {
      {"ep_large_bw", "--sizes=2147483648",
       "--sizes=2147483648: expected 1 to 16 numbers separated by commas, each a whole number from 1 to 67108864", 2},
      {"ep_large_bw", "--sizes=0",
       "--sizes=0: expected 1 to 16 numbers separated by commas, each a whole number from 1", 2},
      {"ep_small_lat", "--sizes=4096", "failed: cannot install the receiver or allocate the transmitter: a small", 1},
      {"ep_large_bw", "--window=0", "--window=0: expected a whole number from 1 to 4096", 2},
      {"ep_mcast64", "--sizes=8,16", "ep_mcast_bw takes one message size", 2},
      {"eip_ping", "--sizes=65253",
       "--sizes=65253: expected 1 to 16 numbers separated by commas, each a whole "
       "number from 4 to 65252",
       2},
      {"sdp_stream", "--bytes=-1", "--bytes=-1: expected a whole number from 1 to 1099511627776", 2},
      {"sdp_stream", "--sizes=4096,x", "--sizes=4096,x: expected 1 to 16 numbers separated by commas", 2},
      {"sdp_soak", "--port=70000", "--port=70000: expected a whole number from 1 to 65535", 2},
      {"dapl_soak", "--window=3", "--window must be even", 2},
      {"dapl_transaction", "--ops=x", "--ops takes one to three of s, w and r", 2},
      {"dapl_transaction", "--eps=0", "--eps=0: expected a whole number from 1 to", 2},
      {"dapl_limit", "--max=abc", "--max=abc: expected a whole number from 1 to 1048576", 2},
      {"dapl_perf", "--sizes=8,x", "--sizes=8,x: expected 1 to 16 numbers separated by commas", 2},
      {"dapl_perf", "--ops=rx", "--ops takes r (RDMA read), w (RDMA write) or both", 2},
      {"ib_ud_soak", "--mlid=+49152", "--mlid must be a multicast LID (0xc000-0xfffe)", 2},
      {"ib_rc_soak", "--sizes=8,16", "ib_rc_soak takes one message size", 2},
      {"ib_send_lat", "--poll=spin", "bad value in '--poll=spin'", 2},
      {"cma_pingpong", "--dst=10.0.0.1x", "unknown argument --dst=10.0.0.1x", 2},
      {"elan3_put", "--iters=5x", "--iters=5x: expected a whole number from 1 to 1000000", 2},
      {"bench_fabric64", "--load=2", "--load=2: must be in (0, 1]", 2},
  };
  for (const auto& c : cases) {
    Result r = run("run " + dir + c.scenario + ".textproto --arg " + c.arg);
    EXPECT_EQ(r.exit_code, c.exit_code) << c.scenario << " " << c.arg << "\n" << r.out;
    const std::string said = c.exit_code == 2 ? std::string("does not take its arguments: ") + c.reason : c.reason;
    EXPECT_NE(r.out.find(said), std::string::npos) << c.scenario << " " << c.arg << "\n" << r.out;
  }
}

}  // namespace
