// The debugger on InfiniBand: scripted sessions of `nicsim debug` (each
// script in tests/debug/ says what it checks; a failed `expect` ends it with
// exit 1 naming the line) and the debugger driven through its C++ API.
#include <deque>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "debug/debugger.h"
#include "tests/test_shell.h"
#include "tests/world_run.h"

namespace nicsim::cm {
namespace {

using testing::run_nicsim;

const std::string kDir = std::string(NICSIM_SOURCE_DIR) + "/cm/tests/debug/";

// Runs `script` against `scenario` (both in cm/tests/debug).
testing::CliResult run_script(const std::string& scenario, const std::string& script) {
  return run_nicsim("debug " + kDir + scenario + " --script " + kDir + script);
}

TEST(DebuggerScript, RcWriteBreaksOnRtsStepsPacketsSeesPsnAndCqeAndStepsBackToTheSameState) {
  const testing::CliResult r = run_script("rc_write.textproto", "rc_write.cmds");
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("opcode=RC_RDMA_WRITE_LAST qpn=64 psn=2592193"), std::string::npos) << r.out;
}

TEST(DebuggerScript, BreaksOnACmTransitionAndShowsTheConnection) {
  const testing::CliResult r = run_script("cma_pingpong.textproto", "cma_pingpong.cmds");
  EXPECT_EQ(r.exit_code, 0) << r.out;
}

TEST(DebuggerScript, BadCommandsAreNamedHelpExplainsAndBreakpointSetsAreSavedAndLoaded) {
  const std::filesystem::path dir = testing::temp_dir("debugger_commands");
  const testing::CommandResult r = testing::run_command("cd " + dir.string() + " && " + NICSIM_BIN + " debug " + kDir +
                                                        "rc_write.textproto --script " + kDir + "commands.cmds 2>&1");
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_NE(testing::slurp(dir / "debug_breakpoints.txt").find("break time 1ms"), std::string::npos);
}

TEST(DebuggerScript, ApiCallBreakpointsAndWatchpointsStopGoBackAndAreSaved) {
  const std::filesystem::path dir = testing::temp_dir("debugger_calls_watches");
  const testing::CommandResult r =
      testing::run_command("cd " + dir.string() + " && " + NICSIM_BIN + " debug " + kDir +
                           "rc_write.textproto --script " + kDir + "calls_watches.cmds 2>&1");
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_NE(testing::slurp(dir / "calls.txt").find("break watch object=h0.qp64 field=next_psn"), std::string::npos);
}

TEST(DebuggerScript, AFailedExpectationEndsTheScriptNamingItsLine) {
  const std::filesystem::path dir = testing::temp_dir("debugger_expect");
  {
    std::ofstream f(dir / "s.cmds");
    f << "where\nexpect somewhere else\nwhere\n";
  }
  const testing::CliResult r = run_nicsim("debug " + kDir + "rc_write.textproto --script " + (dir / "s.cmds").string());
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_NE(r.out.find("s.cmds:2: expected 'somewhere else' in the output above"), std::string::npos) << r.out;
  EXPECT_EQ(testing::count_of(r.out, "(nicsim) where"), 1u) << r.out;
}

TEST(DebuggerScript, AMissingScriptIsBadInput) {
  const testing::CliResult r = run_nicsim("debug " + kDir + "rc_write.textproto --script /nonexistent/s.cmds");
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.out.find("cannot read script /nonexistent/s.cmds"), std::string::npos) << r.out;
}

// The debugger in this process: a pause handler runs the commands.
TEST(DebuggerApi, StopsWhereAskedAndShowsTheQpInProcess) {
  const Scenario sc = testing::load_text(testing::slurp(kDir + "rc_write.textproto"));
  Sim sim(sc.seed);
  World world(sc);
  debug::Debugger debugger(world);
  std::deque<std::string> commands = {"break fsm machine=hca.qp object=h0.qp64 from=Rtr to=Rts",
                                      "continue",
                                      "show h0.qp64",
                                      "step 3",
                                      "where",
                                      "reverse-step",
                                      "delete 1",
                                      "continue"};
  std::vector<std::string> stops, outputs;
  debugger.set_pause_handler([&](debug::Debugger& d, const debug::Stop& s) {
    stops.push_back(s.position.str() + ": " + s.reason);
    while (!commands.empty()) {
      const debug::Reply r = d.execute(commands.front());
      commands.pop_front();
      outputs.push_back((r.ok ? "" : "error: ") + r.text);
      if (r.resumes) return;
    }
  });
  EXPECT_TRUE(debugger.run());
  ASSERT_EQ(stops.size(), 4u);
  EXPECT_EQ(stops[0], "event 0: start: the run has not begun");
  EXPECT_EQ(stops[1], "event 2698 transition 27: breakpoint 1 hca.qp: h0.qp64 Rtr -> Rts (Rtr2Rts, modify_qp)");
  EXPECT_EQ(stops[2], "event 2701: step");
  EXPECT_NE(stops[3].find("end: the run ended"), std::string::npos);
  ASSERT_EQ(outputs.size(), 8u);
  EXPECT_NE(outputs[2].find("next_psn          2592192"), std::string::npos) << outputs[2];
  EXPECT_EQ(outputs[4], "event 2701 at 851.836us: step\n");
  EXPECT_NE(outputs[5].find("error: reverse-step needs a session"), std::string::npos) << outputs[5];
}

}  // namespace
}  // namespace nicsim::cm
