// Same Elan scenario and seed give byte-identical trace, timeline and
// results: the Elan model, its driver and Kernel Comms trace no host
// pointers (they differ from run to run) and make no order-dependent choices.
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace {

namespace fs = std::filesystem;

int run_nicsim(const std::string& args) {
  const std::string cmd = std::string(NICSIM_BIN) + " " + args + " >/dev/null 2>&1";
  const int status = std::system(cmd.c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(EpDeterminism, SameScenarioAndSeedGiveIdenticalTraceTimelineAndResults) {
  const fs::path dir = fs::temp_directory_path() / ("nicsim_ep_det_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const fs::path scenario = dir / "ep_det.textproto";
  std::ofstream(scenario) << R"(name: "ep_det"
seed: 3
topology { elite_fat_tree { nodes: 2 } node_param { key: "bus.profile" value: "pci-66" } }
link_defaults { delay: "10ns" }
workload { program: "ep_small_lat" nodes: "h0" nodes: "h1" args: "--sizes=8,256" args: "--iters=20" }
outputs { trace { device: "*" component: "*" } timeline: true }
)";
  for (const char* run : {"a", "b"})
    ASSERT_EQ(run_nicsim("run " + scenario.string() + " --out " + (dir / run).string()), 0) << run;
  for (const char* f : {"trace.jsonl", "timeline.json", "results.json", "summary.txt"}) {
    const std::string a = slurp(dir / "a" / f);
    EXPECT_FALSE(a.empty()) << f;
    EXPECT_EQ(a, slurp(dir / "b" / f)) << f << " differs between identical runs";
  }
  // The trace covers the Elan command port, whose address registers are
  // traced as node-memory regions.
  EXPECT_NE(slurp(dir / "a" / "trace.jsonl").find("\"value\":\"r"), std::string::npos);
  fs::remove_all(dir);
}

}  // namespace
