// The nicsim command line on an InfiniBand scenario, run as a separate
// process.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>

#include "sim/tests/test_shell.h"

namespace fs = std::filesystem;

namespace {

using nicsim::testing::slurp;
using Result = nicsim::testing::CliResult;

Result run(const std::string& args) { return nicsim::testing::run_nicsim(args); }
fs::path temp_dir(const std::string& name) { return nicsim::testing::temp_dir("cli_sm_" + name); }

// The HCA stack with the subnet manager: perftest, verbs driver, HCA and SM
// traced in full give byte-identical files (no host pointers in any record).
TEST(Cli, IbScenarioWithSubnetManagerGivesIdenticalTraces) {
  fs::path dir = temp_dir("det_ib");
  const fs::path scenario = dir / "ib_det.textproto";
  std::ofstream(scenario) << R"(name: "ib_det"
topology { star { hosts: 2 } nic: "hca" }
workload { program: "ib_send_lat" nodes: "h0" nodes: "h1" args: "--sizes=2,4096" args: "--iters=20" }
outputs { trace { device: "*" component: "*" } timeline: true }
)";
  for (const char* r : {"a", "b"})
    ASSERT_EQ(run("run " + scenario.string() + " --out " + (dir / r).string()).exit_code, 0) << r;
  for (const char* f : {"trace.jsonl", "timeline.json", "results.json", "summary.txt"}) {
    const std::string a = slurp(dir / "a" / f);
    EXPECT_FALSE(a.empty()) << f;
    EXPECT_EQ(a, slurp(dir / "b" / f)) << f << " differs between identical runs";
  }
  EXPECT_NE(slurp(dir / "a" / "trace.jsonl").find("subnet_manager"), std::string::npos);
  fs::remove_all(dir);
}

}  // namespace
