// One scenario over several processes (docs/partition.md): the same
// scenario, seed and blocks give byte-identical results.json, summary.txt,
// trace.jsonl, timeline.json and packets.pcap in one process and under
// mpirun on 1, 2 and 4 ranks. These
// run the nicsim command under mpirun (--oversubscribe: the machine may
// have fewer cores than ranks); they are built only with the MPI engine.
#include <gtest/gtest.h>
#include <fmt/format.h>

#include <filesystem>
#include <fstream>

#include "sim/tests/test_shell.h"
#include "tests/ranks_runs.h"

namespace {

namespace fs = std::filesystem;
using nicsim::testing::run_command;
using nicsim::testing::slurp;
using nicsim::testing::ranks::kMpirun;
using nicsim::testing::ranks::same_on_every_rank_count;
using nicsim::testing::ranks::write_scenario;

// The verbs latency test with its switch pinned to a block of its own, so
// that both hosts' links are cut.
TEST(Ranks, VerbsSendLatencyIsTheSameOnOneTwoAndFourRanks) {
  const fs::path scenario = write_scenario("send_lat", R"(
    name: "ib_send_lat"
    seed: 1
    topology { star { hosts: 2 } nic: "hca" }
    link_defaults { bandwidth: "8Gbps" delay: "5ns" }
    partition { blocks: 4 pin { device: "sw0" block: 2 } }
    workload { program: "ib_send_lat" nodes: "h0" nodes: "h1"
               args: "--sizes=8,4096" args: "--iters=200" args: "--inline=128" args: "--poll=busy" }
  )");
  const std::string summary = same_on_every_rank_count("send_lat", scenario.string());
  EXPECT_NE(summary.find("partition: 4 blocks, 2 cut links, lookahead 5ns"), std::string::npos) << summary;
  EXPECT_NE(summary.find("2 Finished"), std::string::npos) << summary;
}

// Connection management, the SA and management-network messages cross
// between ranks.
TEST(Ranks, CmaConnectExchangeAndDisconnectAreTheSameOnOneTwoAndFourRanks) {
  const std::string summary =
      same_on_every_rank_count("cma", std::string(NICSIM_SOURCE_DIR) + "/scenarios/cma_pingpong.textproto --blocks=4");
  EXPECT_NE(summary.find("cycles_ok          10 cycles"), std::string::npos) << summary;
}

// Bit errors and drops on links cut between ranks: each direction draws
// from its own stream, and a link's change applies to each end as its own.
TEST(Ranks, RcOverFaultyCutLinksIsTheSameOnOneTwoAndFourRanks) {
  const fs::path scenario = write_scenario("rc", R"(
    name: "ranks_rc"
    seed: 5
    topology { star { hosts: 2 } nic: "hca" }
    link_defaults { bandwidth: "8Gbps" delay: "5ns" }
    fault { at: "0ns" link: "h0--sw0" bit_error_rate: "1e-6" }
    fault { at: "0ns" link: "h1--sw0" bit_error_rate: "1e-6" }
    fault { at: "300us" link: "h1--sw0" drop_rate: "0.01" }
    workload { program: "ib_rc_soak" nodes: "h0" nodes: "h1" args: "--iters=600" }
  )");
  const std::string summary = same_on_every_rank_count("rc", scenario.string() + " --blocks=4");
  EXPECT_NE(summary.find("acked              600 messages"), std::string::npos) << summary;
}

// Raw traffic on a fat tree cut into pods: many cut links, credits both
// ways, a lossy link; every device traced and on the timeline.
TEST(Ranks, RawTrafficOnAFatTreeWithItsTraceAndTimelineIsTheSameOnOneTwoAndFourRanks) {
  const fs::path scenario = write_scenario("fat_tree", R"(
    name: "ranks_fat_tree"
    topology { fat_tree { k: 2 n: 3 } }
    workload { program: "fabric_traffic" nodes: "*"
               args: "--pattern=uniform" args: "--size=1KiB" args: "--load=0.6" args: "--duration=20us" }
    fault { at: "3us" link: "h0--sw0_0" drop_rate: "0.1" }
    outputs { trace { device: "*" } timeline: true }
  )");
  const std::string summary =
      same_on_every_rank_count("fat_tree", scenario.string() + " --blocks=4", true, 0, nullptr, true);
  EXPECT_NE(summary.find("latency raw_packet_latency"), std::string::npos) << summary;
}

// A timeline cut short by its event limit: each rank keeps only what could
// still be among the first events written, and says how many it dropped.
TEST(Ranks, ATimelineCutShortByItsLimitIsTheSameOnOneTwoAndFourRanks) {
  const fs::path scenario = write_scenario("timeline_cap", R"(
    name: "ranks_timeline_cap"
    topology { fat_tree { k: 2 n: 3 } }
    workload { program: "fabric_traffic" nodes: "*"
               args: "--pattern=uniform" args: "--size=1KiB" args: "--load=0.6" args: "--duration=20us" }
    outputs { timeline: true timeline_max_events: "200" }
  )");
  fs::path dir;
  same_on_every_rank_count("timeline_cap", scenario.string() + " --blocks=4", false, 0, &dir);
  const std::string timeline = slurp(dir / "ranks2" / "timeline.json");
  auto count = [&timeline](const std::string& what) {
    std::size_t n = 0;
    for (auto at = timeline.find(what); at != std::string::npos; at = timeline.find(what, at + 1)) ++n;
    return n;
  };
  EXPECT_EQ(count("\"ph\":\"X\"") + count("\"ph\":\"i\""), 200u);
  EXPECT_EQ(count("\"name\":\"nicsim_dropped_events\""), 1u);
}

// A run cut by its stop time: each rank explains its own unfinished
// programs, and the errors merge in the one-process order.
TEST(Ranks, ARunCutByItsStopTimeReportsTheSameUnfinishedProgramsOnEveryRankCount) {
  const fs::path scenario = write_scenario("stop", R"(
    name: "ranks_stop"
    stop_time: "5us"
    topology { fat_tree { k: 2 n: 3 } }
    workload { program: "fabric_traffic" nodes: "*"
               args: "--pattern=uniform" args: "--size=1KiB" args: "--load=0.6" args: "--duration=20us" }
  )");
  const std::string summary = same_on_every_rank_count("stop", scenario.string() + " --blocks=4", false, 1);
  EXPECT_NE(summary.find("failed after 5us simulated"), std::string::npos) << summary;
  EXPECT_NE(summary.find("8 error(s)"), std::string::npos) << summary;
}

// The Elan fabric cut into four blocks: acknowledgements carried back
// across cut links, Kernel Comms' multicast tree and its broadcasts.
TEST(Ranks, KernelCommsMulticastOnAnEliteTreeIsTheSameOnOneTwoAndFourRanks) {
  const std::string summary = same_on_every_rank_count(
      "ep_mcast", std::string(NICSIM_SOURCE_DIR) + "/scenarios/ep_mcast64.textproto --blocks=4 --arg --iters=4");
  EXPECT_NE(summary.find("partition: 4 blocks, 48 cut links, lookahead 10ns, imbalance 1.00"), std::string::npos)
      << summary;
  EXPECT_NE(summary.find("64 Finished"), std::string::npos) << summary;
}

// Links to three of the four nodes are cut, and two of them flap: data,
// acknowledgements and their losses cross between ranks; every message is
// accounted for. The scenario file's soak with its flaps 6-8 times as
// frequent, so that a short run (36 ms simulated) meets many of them.
TEST(Ranks, ElanSoakWithFlappingCutLinksIsTheSameOnOneTwoAndFourRanks) {
  const fs::path scenario = write_scenario("ep_soak", R"(
    name: "ep_soak_fast_flaps"
    seed: 1
    topology {
      elite_fat_tree { nodes: 4 }
      node_param { key: "bus.profile" value: "pci-66" }
    }
    link_defaults { delay: "10ns" }
    fault {
      at: "1ms" link: "h1--el0_0"
      flaps { mean_interval: "6ms" down_for: "1ms" until: "1000s" }
    }
    fault {
      at: "1ms" link: "h2--el0_0"
      flaps { mean_interval: "5ms" down_for: "1ms" until: "1000s" }
    }
    workload { program: "ep_soak" nodes: "h0" nodes: "h1" nodes: "h2" nodes: "h3" args: "--iters=100" }
  )");
  const std::string summary = same_on_every_rank_count("ep_soak", scenario.string() + " --blocks=4");
  EXPECT_NE(summary.find("partition: 4 blocks, 3 cut links"), std::string::npos) << summary;
  EXPECT_NE(summary.find("failed_reset       18 "), std::string::npos) << summary;
  for (const char* zero : {"corrupted          0 ", "duplicated         0 ", "lost_unreported    0 "})
    EXPECT_NE(summary.find(zero), std::string::npos) << zero << "\n" << summary;
  EXPECT_EQ(summary.find("failed_reset       0 "), std::string::npos) << "the flaps lost nothing:\n" << summary;
}

TEST(Ranks, MoreRanksThanBlocksIsAClearError) {
  const auto r = run_command(fmt::format("{}2 {} run {}/scenarios/ib_send_lat.textproto --blocks=1 2>&1", kMpirun,
                                         NICSIM_BIN, NICSIM_SOURCE_DIR));
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.output.find("2 processes need at least as many partition blocks; the scenario has 1"), std::string::npos)
      << r.output;
}

TEST(Ranks, TheDebuggerSaysItRunsInOneProcess) {
  const auto r = run_command(
      fmt::format("{}2 {} debug {}/scenarios/ib_send_lat.textproto 2>&1", kMpirun, NICSIM_BIN, NICSIM_SOURCE_DIR));
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.output.find("the step debugger runs a scenario in one process"), std::string::npos) << r.output;
}

// Every link captured, cut or not, and the run's fingerprint: rank 0 writes
// the records every rank held in the order (time, device, the device's own
// count), and folds each block's hash in block order.
TEST(Ranks, ACaptureOfCutLinksAndTheFingerprintAreTheSameOnOneTwoAndFourRanks) {
  const fs::path scenario = write_scenario("capture", R"(
    name: "ranks_capture"
    seed: 5
    topology { star { hosts: 4 } nic: "hca" }
    link_defaults { bandwidth: "8Gbps" delay: "5ns" }
    fault { at: "0ns" link: "h0--sw0" bit_error_rate: "1e-6" }
    fault { at: "50us" link: "h3--sw0" drop_rate: "0.01" }
    workload { program: "ib_rc_soak" nodes: "h0" nodes: "h1" args: "--iters=200" }
    workload { program: "ib_rc_soak" nodes: "h2" nodes: "h3" args: "--iters=200" }
    outputs { pcap: "*" }
  )");
  fs::path dir;
  const std::string summary =
      same_on_every_rank_count("capture", scenario.string() + " --blocks=4 --fingerprint", false, 0, &dir);
  EXPECT_NE(summary.find("partition: 4 blocks, 3 cut links"), std::string::npos) << summary;
  EXPECT_NE(summary.find("acked              200 messages"), std::string::npos) << summary;
  // Both directions of every link: a record per frame put on a wire, in
  // time order (a ns timestamp in each record header).
  const std::string pcap = slurp(dir / "ranks2" / "packets.pcap");
  ASSERT_GT(pcap.size(), 24u + 1000 * 16);
  auto u32 = [&pcap](std::size_t at) {
    std::uint32_t v = 0;
    for (int i = 0; i < 4; ++i) v |= std::uint32_t{static_cast<unsigned char>(pcap[at + i])} << (8 * i);
    return v;
  };
  std::size_t records = 0;
  std::uint64_t last_ns = 0;
  bool ordered = true;
  for (std::size_t at = 24; at + 16 <= pcap.size(); at += 16 + u32(at + 8), ++records) {
    const std::uint64_t ns = std::uint64_t{u32(at)} * 1000000000 + u32(at + 4);
    ordered = ordered && ns >= last_ns;
    last_ns = ns;
  }
  EXPECT_GT(records, 1000u);
  EXPECT_TRUE(ordered);
  const std::string results = slurp(dir / "ranks4_env" / "results.json");
  const std::size_t at = results.find("\"fingerprint\": \"");
  ASSERT_NE(at, std::string::npos) << results.substr(0, 400);
  const std::string value = results.substr(at + 16, 17);
  EXPECT_EQ(value.find_first_not_of("0123456789abcdef"), 16u) << value;
}

// Rank 0 alone creates the output files: when it cannot, every rank ends
// (the others do not wait for it in the run's first window).
TEST(Ranks, AnOutputDirectoryRankZeroCannotCreateEndsEveryRank) {
  const auto r =
      run_command(fmt::format("timeout 60 sh -c '{}2 {} run {}/scenarios/cma_pingpong.textproto --blocks=2 "
                              "--out /proc/nicsim_no_such_dir' 2>&1",
                              kMpirun, NICSIM_BIN, NICSIM_SOURCE_DIR));
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_NE(r.output.find("nicsim: --out /proc/nicsim_no_such_dir: cannot make the results directory"),
            std::string::npos)
      << r.output;
}

}  // namespace
