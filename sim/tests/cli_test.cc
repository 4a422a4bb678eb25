// The nicsim command line, run as a separate process: exit codes, error
// locations, and byte-identical outputs for the same scenario and seed.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <cstdio>
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
fs::path temp_dir(const std::string& name) { return nicsim::testing::temp_dir("cli_" + name); }

std::string write(const fs::path& p, const std::string& text) {
  std::ofstream(p) << text;
  return p.string();
}

const std::string kQuickstart = std::string(NICSIM_SOURCE_DIR) + "/scenarios/quickstart.textproto";

TEST(Cli, HelpVersionAndUnknownCommand) {
  EXPECT_EQ(run("--help").exit_code, 0);
  Result v = run("--version");
  EXPECT_EQ(v.exit_code, 0);
  EXPECT_NE(v.out.find("nicsim "), std::string::npos);
  Result u = run("frobnicate");
  EXPECT_EQ(u.exit_code, 2);
  EXPECT_NE(u.out.find("unknown command 'frobnicate'"), std::string::npos);
  EXPECT_EQ(run("run").exit_code, 2);
  EXPECT_EQ(run("run " + kQuickstart + " --no-such-option").exit_code, 2);
}

TEST(Cli, ParamsListsEveryParameterWithUnitAndDefault) {
  Result r = run("params");
  ASSERT_EQ(r.exit_code, 0);
  for (const char* s : {"[link]", "[switch]", "[host]", "[bus]", "[mgmt]", "[nic.raw]", "bandwidth", "8Gbps",
                        "hop_latency", "cost.api_call", "pcix-133"})
    EXPECT_NE(r.out.find(s), std::string::npos) << s;
}

TEST(Cli, ListShowsProgramsAndNicKinds) {
  Result r = run("list");
  ASSERT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("fabric_traffic"), std::string::npos);
  EXPECT_NE(r.out.find("raw"), std::string::npos);
}

TEST(Cli, ValidateAcceptsQuickstart) {
  Result r = run("validate " + kQuickstart);
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("ok: 8 nodes, 3 switches, 8 links, 3 workloads"), std::string::npos) << r.out;
}

// With blocks, validate lists what each block holds: the 64-host
// leaf/spine fabric in four equal parts, each with one of the spines.
TEST(Cli, ValidateListsEachBlock) {
  Result r = run("validate " + std::string(NICSIM_SOURCE_DIR) + "/scenarios/bench_fabric64.textproto --blocks=4");
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("4 blocks, 24 cut links"), std::string::npos) << r.out;
  for (int b = 0; b < 4; ++b)
    EXPECT_NE(r.out.find(fmt::format("block {}: 16 nodes, 3 switches, load ", b)), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("block 4"), std::string::npos) << r.out;
}

TEST(Cli, BadScenarioExits2WithFileLineColumn) {
  fs::path d = temp_dir("bad");
  std::string f = write(d / "bad.textproto",
                        "name: \"bad\"\n"
                        "node { name: \"a\" nic: \"raw\" }\n"
                        "link { a: \"a\" b: \"nowhere\" }\n");
  for (const char* cmd : {"validate ", "run "}) {
    Result r = run(cmd + f);
    EXPECT_EQ(r.exit_code, 2) << r.out;
    EXPECT_NE(r.out.find(f + ":3:"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("nowhere"), std::string::npos) << r.out;
  }
  Result missing = run("run " + (d / "absent.textproto").string());
  EXPECT_EQ(missing.exit_code, 2);
  fs::remove_all(d);
}

// --arg reaches every workload, or with PROGRAM: only that program's: the
// quickstart mixes three programs, and fabric_traffic refuses --iters
// before anything runs.
TEST(Cli, ArgReachesEveryWorkloadOrOneProgramsWorkloads) {
  Result every = run("run " + kQuickstart + " --arg --iters=10");
  EXPECT_EQ(every.exit_code, 2) << every.out;
  EXPECT_NE(every.out.find("with --arg, program 'fabric_traffic' does not take its arguments: unknown argument "
                           "--iters"),
            std::string::npos)
      << every.out;
  EXPECT_EQ(every.out.find("scenario 'quickstart'"), std::string::npos) << every.out;  // nothing ran
  Result one = run("run " + kQuickstart + " --arg ib_send_lat:--iters=10 --arg ep_small_lat:--sizes=8");
  EXPECT_EQ(one.exit_code, 0) << one.out;
  EXPECT_NE(one.out.find("lat_8_typical"), std::string::npos) << one.out;
  EXPECT_EQ(one.out.find("lat_256"), std::string::npos) << one.out;           // ep_small_lat ran 8 B only
  EXPECT_NE(one.out.find("lat_4096_typical"), std::string::npos) << one.out;  // ib_send_lat kept its sizes
  Result none = run("run " + kQuickstart + " --arg no_such_program:--iters=10");
  EXPECT_EQ(none.exit_code, 2) << none.out;
  EXPECT_NE(none.out.find("no workload of the scenario runs program 'no_such_program'"), std::string::npos) << none.out;
}

TEST(Cli, UnusableOutDirectoryOrMisspeltParamExits2BeforeRunning) {
  Result out = run("run " + kQuickstart + " --out /proc/no_such_dir");
  EXPECT_EQ(out.exit_code, 2) << out.out;
  EXPECT_NE(out.out.find("--out /proc/no_such_dir: cannot make the results directory"), std::string::npos) << out.out;
  EXPECT_EQ(out.out.find("scenario 'quickstart'"), std::string::npos) << out.out;  // nothing ran
  Result seed = run("run " + kQuickstart + " --seed -1");
  EXPECT_EQ(seed.exit_code, 2) << seed.out;
  EXPECT_NE(seed.out.find("--seed -1: expected a whole number"), std::string::npos) << seed.out;
  Result blocks = run("run " + kQuickstart + " --blocks=-4294967294");
  EXPECT_EQ(blocks.exit_code, 2) << blocks.out;
  EXPECT_NE(blocks.out.find("--blocks=-4294967294: expected a whole number of blocks, 1 to 4095"), std::string::npos)
      << blocks.out;
  Result empty = run("run " + kQuickstart + " --out ''");
  EXPECT_EQ(empty.exit_code, 2) << empty.out;
  Result param = run("run " + kQuickstart + " --param host.cpuz=2");
  EXPECT_EQ(param.exit_code, 2) << param.out;
  EXPECT_NE(param.out.find("has the parameter cpuz (did you mean host.cpus?)"), std::string::npos) << param.out;
}

// A workload that fails when it runs: it asks for more VLs than its links
// have, which only the built world knows.
TEST(Cli, FailedWorkloadExits1) {
  fs::path d = temp_dir("fail");
  std::string f = write(d / "fail.textproto",
                        "name: \"fail\"\n"
                        "topology { star { hosts: 2 } }\n"
                        "workload { program: \"fabric_traffic\" nodes: \"*\" args: \"--vl=14\" }\n");
  Result r = run("run " + f);
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_NE(r.out.find("failed: --vl=14 --vls=1: the link has 1 VL(s)"), std::string::npos) << r.out;
  fs::remove_all(d);
}

// An argument the program's own parser refuses is a scenario error, at
// itself, before anything is built.
TEST(Cli, BadProgramArgumentInTheFileExits2AtItself) {
  fs::path d = temp_dir("bad_arg");
  std::string f = write(d / "bad_arg.textproto",
                        "name: \"bad_arg\"\n"
                        "topology { star { hosts: 2 } }\n"
                        "workload { program: \"fabric_traffic\" nodes: \"*\" args: \"--load=7\" }\n");
  for (const char* cmd : {"validate ", "run "}) {
    Result r = run(cmd + f);
    EXPECT_EQ(r.exit_code, 2) << r.out;
    EXPECT_NE(r.out.find(f + ":3:49: args: program 'fabric_traffic' does not take these arguments: --load=7: must "
                             "be in (0, 1]"),
              std::string::npos)
        << r.out;
  }
  fs::remove_all(d);
}

TEST(Cli, TraceRecordsAreInTimeOrder) {
  // Switches and NICs log a transmission when they schedule it, ahead of its
  // time; the file still reads in simulated-time order.
  fs::path d = temp_dir("order");
  ASSERT_EQ(run("run " + kQuickstart + " --out " + d.string()).exit_code, 0);
  std::ifstream in(d / "trace.jsonl");
  std::string line;
  std::uint64_t previous = 0, records = 0, switch_tx = 0;
  while (std::getline(in, line)) {
    ASSERT_EQ(line.rfind("{\"t\":", 0), 0u) << line;
    const std::uint64_t t = std::stoull(line.substr(5));
    ASSERT_GE(t, previous) << "record " << records << " goes back in time: " << line;
    previous = t;
    ++records;
    if (line.find("\"dev\":\"sw0\",\"comp\":\"fabric\",\"ev\":\"tx\"") != std::string::npos) ++switch_tx;
  }
  EXPECT_GT(records, 10000u);
  EXPECT_GT(switch_tx, 100u);
  fs::remove_all(d);
}

TEST(Cli, FsmTransitionsCarryTheirEventInEveryOutput) {
  fs::path d = temp_dir("fsm");
  ASSERT_EQ(run("run " + kQuickstart + " --out " + d.string()).exit_code, 0);
  EXPECT_NE(slurp(d / "trace.jsonl")
                .find("\"comp\":\"fsm\",\"ev\":\"transition\",\"fsm\":\"program\",\"object\":\"h0.fabric_traffic[0]\","
                      "\"from\":\"Pending\",\"to\":\"Running\",\"event\":\"Start\",\"cause\":\"start\""),
            std::string::npos);
  EXPECT_NE(slurp(d / "timeline.json").find("\"name\":\"Start: Pending -> Running\""), std::string::npos);
  std::string results = slurp(d / "results.json");
  std::erase_if(results, [](char c) { return c == ' ' || c == '\n'; });
  EXPECT_NE(results.find("{\"from\":\"Pending\",\"event\":\"Start\",\"to\":\"Running\",\"name\":\"start\""),
            std::string::npos);
  EXPECT_NE(slurp(d / "summary.txt").find("fsm transitions taken/declared: "), std::string::npos);
  fs::remove_all(d);
}

TEST(Cli, SameScenarioAndSeedGiveIdenticalFiles) {
  fs::path a = temp_dir("det_a"), b = temp_dir("det_b"), c = temp_dir("det_c");
  ASSERT_EQ(run("run " + kQuickstart + " --out " + a.string()).exit_code, 0);
  ASSERT_EQ(run("run " + kQuickstart + " --out " + b.string()).exit_code, 0);
  ASSERT_EQ(run("run " + kQuickstart + " --seed 99 --out " + c.string()).exit_code, 0);
  int compared = 0;
  for (const auto& entry : fs::directory_iterator(a)) {
    const std::string name = entry.path().filename().string();
    ASSERT_TRUE(fs::exists(b / name)) << name;
    if (name.find("wall") != std::string::npos) continue;  // wall-clock figures only
    EXPECT_EQ(slurp(entry.path()), slurp(b / name)) << name << " differs between identical runs";
    ++compared;
  }
  for (const char* f : {"results.json", "summary.txt", "trace.jsonl", "timeline.json", "packets.pcap", "wall.json"})
    EXPECT_TRUE(fs::exists(a / f)) << f;
  EXPECT_EQ(compared, 5);
  EXPECT_GT(slurp(a / "trace.jsonl").size(), 1000u);
  // A different seed draws a different permutation, so the trace differs.
  EXPECT_NE(slurp(a / "trace.jsonl"), slurp(c / "trace.jsonl"));
  EXPECT_NE(slurp(a / "wall.json").find("packet_hops_per_second"), std::string::npos);
  for (auto& d : {a, b, c}) fs::remove_all(d);
}

}  // namespace
