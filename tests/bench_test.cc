// `nicsim bench` and `nicsim report` as a user runs them: the gate fails
// with a clear diff on a one-cycle change to an HCA engine cost, the
// fingerprint is stable and moves with the model, bad suites and baselines
// are exit 2 with file:line, the calibration table is generated, and the
// HTML report renders in a real browser.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <string>

#include "sim/tests/test_shell.h"

namespace nicsim::testing {
namespace {

const std::string kSrc = NICSIM_SOURCE_DIR;
const std::string kSuites = kSrc + "/bench/suites";
const std::string kBaselines = kSrc + "/bench/baselines";

std::string fingerprint_of(const std::filesystem::path& dir) {
  const std::string json = slurp(dir / "results.json");
  std::smatch m;
  if (!std::regex_search(json, m, std::regex("\"fingerprint\": \"([0-9a-f]{16})\""))) return {};
  return m[1];
}

TEST(BenchFingerprint, SameOnEveryRunAndMovesWithTheModel) {
  const auto dir = temp_dir("bench_fingerprint");
  const std::string scenario = kSrc + "/scenarios/ib_send_lat.textproto --arg=--sizes=8 --arg=--iters=20";
  std::string fp[3];
  for (int i = 0; i < 3; ++i) {
    const std::string extra = i == 2 ? " --param=nic.wqe_cycles=151" : "";
    const auto out = dir / std::to_string(i);
    const CliResult r = run_nicsim("run " + scenario + " --fingerprint --out " + out.string() + extra);
    ASSERT_EQ(r.exit_code, 0) << r.out;
    fp[i] = fingerprint_of(out);
    ASSERT_EQ(fp[i].size(), 16u) << slurp(out / "results.json");
  }
  EXPECT_EQ(fp[0], fp[1]);
  EXPECT_NE(fp[0], fp[2]);
  std::filesystem::remove_all(dir);
}

TEST(BenchRunOverrides, BadArgumentsAndParametersAreExitTwoWithTheRule) {
  const std::string run = "run " + kSrc + "/scenarios/ib_atomic_lat.textproto ";
  const CliResult bad_arg = run_nicsim(run + "--arg=sizes");
  EXPECT_EQ(bad_arg.exit_code, 2) << bad_arg.out;
  EXPECT_NE(bad_arg.out.find("--arg 'sizes': expected --key=value, --flag, or PROGRAM:--key=value"), std::string::npos)
      << bad_arg.out;
  const CliResult unknown = run_nicsim(run + "--param=nic.nonesuch=1");
  EXPECT_EQ(unknown.exit_code, 2) << unknown.out;
  EXPECT_NE(unknown.out.find("no node in this scenario has the parameter nonesuch"), std::string::npos) << unknown.out;
  const CliResult range = run_nicsim(run + "--param=nic.wqe_cycles=-3");
  EXPECT_EQ(range.exit_code, 2) << range.out;
  EXPECT_NE(range.out.find("--param 'nic.wqe_cycles=-3': "), std::string::npos) << range.out;
  const CliResult scope = run_nicsim(run + "--param=mgmt.latency=1us");
  EXPECT_EQ(scope.exit_code, 2) << scope.out;
  EXPECT_NE(scope.out.find("the scope must be host, bus, nic or link"), std::string::npos) << scope.out;
}

TEST(BenchGate, OneCycleChangeToAnHcaEngineCostFailsWithAClearDiff) {
  const auto dir = temp_dir("bench_one_cycle");
  const CliResult same = run_nicsim("bench " + kSuites + "/verbs.textproto --filter '^verbs/send_lat$' --baseline " +
                                    kBaselines + " --out " + (dir / "same").string());
  ASSERT_EQ(same.exit_code, 0) << same.out;
  EXPECT_NE(same.out.find("no differences"), std::string::npos) << same.out;
  // One more HCA cycle (6 ns at 166 MHz) to parse each WQE.
  const CliResult moved = run_nicsim("bench " + kSuites + "/verbs.textproto --filter '^verbs/send_lat$' --baseline " +
                                     kBaselines + " --param nic.wqe_cycles=151 --out " + (dir / "moved").string());
  EXPECT_EQ(moved.exit_code, 1) << moved.out;
  EXPECT_TRUE(std::regex_search(moved.out, std::regex("verbs: [0-9]+ differences from .*verbs.textproto")))
      << moved.out;
  EXPECT_TRUE(
      std::regex_search(moved.out, std::regex("send_lat +fingerprint +baseline [0-9a-f]{16} +now [0-9a-f]{16}")))
      << moved.out;
  // The cycle shows in the figures too (the SMPs of the first sweep and the
  // 4 KiB average pass through the WQE parser), each with its change.
  const std::regex figure("send_lat +[a-z0-9_]+ +baseline [0-9.]+ +now [0-9.]+ +change \\+[0-9.]+% \\(exact\\)");
  EXPECT_TRUE(std::regex_search(moved.out, figure)) << moved.out;
  EXPECT_TRUE(std::regex_search(slurp(dir / "moved" / "diff.txt"), figure)) << "the diff is also in OUT/diff.txt";
  std::filesystem::remove_all(dir);
}

TEST(BenchBaseline, UpdateRewritesTheBaselineAndAsksForTheReason) {
  const auto dir = temp_dir("bench_update");
  std::filesystem::copy(kBaselines + "/verbs.textproto", dir / "verbs.textproto");
  const std::string cmd = "bench " + kSuites + "/verbs.textproto --filter '^verbs/send_lat$' --baseline " +
                          (dir / "verbs.textproto").string() + " --param nic.wqe_cycles=151 --update-baseline --out " +
                          (dir / "out").string();
  const CliResult no_reason = run_nicsim(cmd);
  EXPECT_EQ(no_reason.exit_code, 2) << no_reason.out;
  EXPECT_NE(no_reason.out.find("needs --reason"), std::string::npos) << no_reason.out;
  const CliResult updated = run_nicsim(cmd + " --reason 'WQE parsing one cycle slower'");
  ASSERT_EQ(updated.exit_code, 0) << updated.out;
  const std::string text = slurp(dir / "verbs.textproto");
  EXPECT_NE(text.find("WQE parsing one cycle slower"), std::string::npos);
  EXPECT_NE(text.find("anchor"), std::string::npos) << "the anchors are kept";
  const CliResult now_same =
      run_nicsim("bench " + kSuites + "/verbs.textproto --filter '^verbs/send_lat$' --baseline " +
                 (dir / "verbs.textproto").string() + " --param nic.wqe_cycles=151 --out " + (dir / "out2").string());
  EXPECT_EQ(now_same.exit_code, 0) << now_same.out;
  std::filesystem::remove_all(dir);
}

TEST(BenchCalibration, AFigureLeavingItsPublishedToleranceFailsTheGate) {
  const auto dir = temp_dir("bench_calibration");
  std::string text = slurp(kBaselines + "/verbs.textproto");
  // Keep the figures, move the published anchor of the 2-byte send far away.
  const std::size_t point = text.find("name: \"send_lat\"");
  const std::size_t at = text.find("published: ", point) + std::string("published: ").size();
  ASSERT_NE(point, std::string::npos);
  text.replace(at, text.find('\n', at) - at, "2.5");
  std::ofstream(dir / "verbs.textproto") << text;
  const CliResult r = run_nicsim("bench " + kSuites + "/verbs.textproto --filter '^verbs/send_lat$' --baseline " +
                                 (dir / "verbs.textproto").string() + " --out " + (dir / "out").string());
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_NE(r.out.find("calibrated figures outside their tolerance"), std::string::npos) << r.out;
  EXPECT_TRUE(std::regex_search(r.out, std::regex("published 2.5 us .*error \\+[0-9.]+% outside"))) << r.out;
  std::filesystem::remove_all(dir);
}

TEST(BenchCalibration, TheTableInBenchAndReadmeIsGeneratedFromTheBaselines) {
  const CliResult r = run_nicsim("bench --baseline " + kBaselines + " --calibration-md -");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("| figure | published | nicsim |"), std::string::npos) << r.out;
  const std::string md = slurp(kSrc + "/bench/calibration.md");
  EXPECT_NE(md.find(r.out), std::string::npos) << "regenerate: nicsim bench --baseline bench/baselines "
                                                  "--calibration-md bench/calibration.md";
  EXPECT_NE(slurp(kSrc + "/README.md").find(r.out), std::string::npos) << "README carries the same table";
}

struct BadInput {
  const char* name;
  const char* suite;     // text of a suite file named bad.textproto
  const char* baseline;  // text of its baseline, or nullptr
  const char* expected;  // a regular expression over the output
};

void PrintTo(const BadInput& in, std::ostream* os) { *os << in.name; }

class BenchBadInput : public ::testing::TestWithParam<BadInput> {};

TEST_P(BenchBadInput, IsExitTwoNamingFileLineAndRule) {
  const BadInput& in = GetParam();
  const auto dir = temp_dir(std::string("bench_bad_") + in.name);
  std::filesystem::copy(kSrc + "/scenarios/ib_send_lat.textproto", dir / "s.textproto");
  std::ofstream(dir / "bad.textproto") << in.suite;
  std::string args = "bench " + (dir / "bad.textproto").string() + " --out " + (dir / "out").string();
  if (in.baseline) {
    std::filesystem::create_directories(dir / "base");
    std::ofstream(dir / "base" / "bad.textproto") << in.baseline;
    args += " --baseline " + (dir / "base").string();
  }
  const CliResult r = run_nicsim(args);
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_TRUE(std::regex_search(r.out, std::regex(in.expected))) << r.out;
  std::filesystem::remove_all(dir);
}

INSTANTIATE_TEST_SUITE_P(
    Files, BenchBadInput,
    ::testing::Values(
        BadInput{"syntax", "name: \"bad\"\npoint { name: \"a\" scenario: \"s.textproto\"\n", nullptr,
                 "bad.textproto:3:1: "},
        BadInput{"unknown_field", "name: \"bad\"\npoint { name: \"a\" scenari: \"s.textproto\" }\n", nullptr,
                 "bad.textproto:2:[0-9]+: .*scenari"},
        BadInput{"twice",
                 "name: \"bad\"\npoint { name: \"a\" scenario: \"s.textproto\" }\n"
                 "point { name: \"a\" scenario: \"s.textproto\" }\n",
                 nullptr, "bad.textproto:3: point 'a' is defined twice"},
        BadInput{"no_scenario", "name: \"bad\"\n\npoint { name: \"a\" scenario: \"nope.textproto\" }\n", nullptr,
                 "bad.textproto:3: point 'a': no scenario file nope.textproto"},
        BadInput{"bad_arg", "name: \"bad\"\npoint { name: \"a\" scenario: \"s.textproto\" args: \"sizes\" }\n", nullptr,
                 "bad.textproto:2: point 'a': argument 'sizes' is not --key=value or --flag"},
        BadInput{"wrong_name", "name: \"other\"\n", nullptr, "bad.textproto:1: the suite's name must be"},
        BadInput{"replace_missing",
                 "name: \"bad\"\npoint { name: \"a\" scenario: \"s.textproto\" replace { text: \"nodes: 99\" } }\n",
                 nullptr, "bad.textproto:2: point 'a': replace text 'nodes: 99' must occur exactly once"},
        BadInput{"bad_param",
                 "name: \"bad\"\npoint { name: \"a\" scenario: \"s.textproto\" params: \"host.nonesuch=1\" }\n",
                 nullptr, "bad.textproto:2: point 'a': nicsim run rejected its input:[\\s\\S]*nonesuch"},
        BadInput{"bad_plot",
                 "name: \"bad\"\npoint { name: \"a\" scenario: \"s.textproto\" }\n\n"
                 "plot { name: \"p\" series { label: \"x\" points: \"(\" metric: \"m\" } }\n",
                 nullptr, "bad.textproto:4: plot 'p', series 'x': bad regular expression"},
        BadInput{"baseline_no_reason", "name: \"bad\"\npoint { name: \"a\" scenario: \"s.textproto\" }\n",
                 "suite: \"bad\"\npoint {\n  name: \"a\"\n  fingerprint: \"0123456789abcdef\"\n}\n",
                 "base/bad.textproto:2: point 'a' gives no reason for its figures"},
        BadInput{"baseline_fingerprint", "name: \"bad\"\npoint { name: \"a\" scenario: \"s.textproto\" }\n",
                 "suite: \"bad\"\n\npoint { name: \"a\" reason: \"r\" fingerprint: \"xyz\" }\n",
                 "base/bad.textproto:3: point 'a': the fingerprint must be 16 hex digits"}),
    [](const auto& info) { return std::string(info.param.name); });

// The report of a small run opened in headless Chromium: a screenshot is
// taken, and the page's own load handler records how many images decoded and
// how many tables it holds.
TEST(BenchReport, RendersInHeadlessChromium) {
  if (run_command("chromium --version 2>&1").status != 0) GTEST_SKIP() << "chromium is not installed";
  const auto dir = temp_dir("bench_report");
  const auto out = dir / "out";
  const CliResult bench = run_nicsim("bench " + kSuites + "/verbs.textproto " + kSuites +
                                     "/elan3.textproto --filter '^(verbs/(send|write)_lat|elan3/barrier_(2|16))$' "
                                     "--baseline " +
                                     kBaselines + " --out " + out.string());
  ASSERT_EQ(bench.exit_code, 0) << bench.out;
  const CliResult report = run_nicsim("report " + out.string());
  ASSERT_EQ(report.exit_code, 0) << report.out;
  const std::string html = slurp(out / "report.html");
  EXPECT_NE(html.find("data:image/svg+xml;base64,"), std::string::npos);
  EXPECT_TRUE(std::filesystem::exists(out / "plots" / "verbs_latency.svg"));
  const std::string chromium = "chromium --headless --no-sandbox --disable-gpu --window-size=1280,2400 ";
  const std::string url = "file://" + (out / "report.html").string();
  const CommandResult shot = run_command(
      chromium + "--enable-logging=stderr --v=0 --screenshot=" + (dir / "report.png").string() + " " + url + " 2>&1");
  ASSERT_EQ(shot.status, 0) << shot.output;
  EXPECT_EQ(shot.output.find("CONSOLE"), std::string::npos) << "console messages:\n" << shot.output;
  EXPECT_EQ(shot.output.find("Uncaught"), std::string::npos) << shot.output;
  ASSERT_TRUE(std::filesystem::exists(dir / "report.png"));
  EXPECT_GT(std::filesystem::file_size(dir / "report.png"), 20000u) << "a blank page is a few KiB";
  const CommandResult dom = run_command(chromium + "--dump-dom " + url + " 2>/dev/null");
  std::smatch m;
  ASSERT_TRUE(std::regex_search(dom.output, m,
                                std::regex("data-images=\"([0-9]+)\" data-images-loaded=\"([0-9]+)\" "
                                           "data-tables=\"([0-9]+)\"")))
      << dom.output.substr(0, 2000);
  EXPECT_GE(std::stoi(m[1]), 3) << "plots: verbs latency, elan3 barrier, elan3 broadcast (no points: not drawn)";
  EXPECT_EQ(m[1], m[2]) << "every image decoded";
  EXPECT_GE(std::stoi(m[3]), 3) << "calibration table and one table per suite";
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace nicsim::testing
