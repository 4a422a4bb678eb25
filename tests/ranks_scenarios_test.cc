// The project's scenarios (but the three large IB trees, which
// Ranks.RawTraffic... stands for), each shortened by its arguments, give the same
// outputs in one process and on 1, 2 and 4 ranks (4 partition blocks,
// whatever the scenario's size). Built twice: the default test set runs
// one scenario of each stack the other rank tests leave out; the test
// Ranks.EveryScenario (label bench) runs them all.
#include <gtest/gtest.h>

#include <ostream>
#include <string>
#include <vector>

#include "tests/ranks_runs.h"

namespace {

struct ScenarioRun {
  const char* scenario;  // scenarios/<scenario>.textproto
  const char* args;      // what shortens it
  bool in_default_set;
};

const ScenarioRun kRuns[] = {
    {"bench_fabric64", "--arg --duration=100us", false},
    {"cm_connect_rate", "--arg --connects=20", false},
    {"dapl_limit", "", false},
    {"dapl_perf", "--arg --iters=20", false},
    {"dapl_soak", "--arg --iters=300", false},
    {"dapl_transaction", "--arg --iters=20", true},
    {"eip_bcast", "--arg --iters=3", false},
    {"eip_ping", "--arg --iters=10", false},
    {"eip_ping16", "--arg --iters=1 --arg --sizes=64,8192", true},
    {"eip_stream", "--arg --iters=20", false},
    {"eip_stream16", "--arg --iters=4", false},
    {"elan3_barrier", "--arg --iters=10", false},
    {"elan3_bcast", "--arg --iters=2", false},
    {"elan3_put", "--arg --iters=10", false},
    {"elite_64", "--arg --duration=30us --arg --drain=50us", false},
    {"elite_64_ep_lat", "--arg --iters=30", false},
    {"ep_large_bw", "--arg --iters=32", false},
    {"ep_rpc_lat", "--arg --iters=20", false},
    {"ep_small_lat", "--arg --iters=50", false},
    {"ep_soak", "--arg --iters=100", false},
    {"ib_atomic_lat", "--arg --iters=100", false},
    {"ib_rc_soak", "--arg --iters=500", false},
    {"ib_read_bw", "--arg --iters=50", false},
    {"ib_read_lat", "--arg --iters=30", false},
    {"ib_saturation", "--arg --duration=300us --arg --warmup=50us", false},
    {"ib_send_bw", "--arg --iters=50", false},
    {"ib_switch_soak", "--arg --iters=2000", false},
    {"ib_ud_soak", "--arg --iters=1000", false},
    {"ib_write_bw", "--arg --iters=50", false},
    {"ib_write_lat", "--arg --iters=30", false},
    {"quickstart", "", true},
    {"sdp_pingpong", "--arg --iters=3", true},
    {"sdp_pingpong_elan", "--arg --iters=3", true},
    {"sdp_soak", "--arg --iters=200", false},
    {"sdp_stream", "--arg --bytes=262144", false},
    {"sdp_stream_elan", "--arg --bytes=262144", false},
};

void PrintTo(const ScenarioRun& run, std::ostream* os) { *os << run.scenario << ' ' << run.args; }

class RanksScenario : public ::testing::TestWithParam<ScenarioRun> {};

TEST_P(RanksScenario, IsTheSameOnOneTwoAndFourRanks) {
  const ScenarioRun& run = GetParam();
  const std::string args =
      std::string(NICSIM_SOURCE_DIR) + "/scenarios/" + run.scenario + ".textproto --blocks=4 " + run.args;
  const std::string summary = nicsim::testing::ranks::same_on_every_rank_count(run.scenario, args);
  EXPECT_NE(summary.find(": ok after "), std::string::npos) << summary;
  EXPECT_NE(summary.find("partition: 4 blocks, "), std::string::npos) << summary;
  EXPECT_EQ(summary.find(" Failed"), std::string::npos) << summary;
}

std::vector<ScenarioRun> runs_here() {
  std::vector<ScenarioRun> runs;
  for (const ScenarioRun& r : kRuns)
    if (r.in_default_set || NICSIM_EVERY_SCENARIO) runs.push_back(r);
  return runs;
}

INSTANTIATE_TEST_SUITE_P(Scenarios, RanksScenario, ::testing::ValuesIn(runs_here()),
                         [](const ::testing::TestParamInfo<ScenarioRun>& info) {
                           return std::string(info.param.scenario);
                         });

}  // namespace
