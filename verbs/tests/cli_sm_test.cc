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

struct Result {
  int exit_code;
  std::string out;  // stdout and stderr
};

Result run(const std::string& args) {
  nicsim::testing::CommandResult r = nicsim::testing::run_command(std::string(NICSIM_BIN) + " " + args + " 2>&1");
  return {r.status, std::move(r.output)};
}

fs::path temp_dir(const std::string& name) {
  fs::path d = fs::temp_directory_path() / ("nicsim_cli_sm_" + name + "_" + std::to_string(getpid()));
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

std::string slurp(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

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
