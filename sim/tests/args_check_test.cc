// Programs' argument checks: a program's own parser, run on a workload's
// arguments when the scenario is loaded, so that a bad argument is an error
// at its place in the file before anything is built.
#include <gtest/gtest.h>

#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "nicsim/app.h"
#include "scenario/loader.h"
#include "world/programs.h"

using namespace nicsim;

namespace {

// --count=1..10 and --low=N --high=N with low <= high; every other
// argument is unknown.
int probe_parse(int argc, char** argv, uint64_t* count) {
  uint64_t low = 0, high = 100;
  for (int i = 1; i < argc; ++i) {
    int got = nicsim_arg_u64(argv[i], "--count=", 1, 10, count);
    if (got == 0) got = nicsim_arg_u64(argv[i], "--low=", 0, 1000, &low);
    if (got == 0) got = nicsim_arg_u64(argv[i], "--high=", 0, 1000, &high);
    if (got < 0) return -1;
    if (got == 0) {
      nicsim_log("args_probe: unknown argument %s", argv[i]);
      return -1;
    }
  }
  if (low > high) {
    nicsim_fail("args_probe: --low is above --high");
    return -1;
  }
  return 0;
}

int probe_check(int argc, char** argv) {
  uint64_t count = 1;
  return probe_parse(argc, argv, &count);
}

int probe_main(int argc, char** argv) {
  uint64_t count = 1;
  return probe_parse(argc, argv, &count) ? 2 : 0;
}

// Needs --count: even no arguments are refused.
int needs_count_check(int argc, char** argv) {
  uint64_t count = 0;
  if (probe_parse(argc, argv, &count)) return -1;
  if (count == 0) nicsim_fail("--count is required");
  return count == 0 ? -1 : 0;
}

// Reads the workload's size: only a running program may.
int misuse_check(int, char**) { return nicsim_workload_size() == 2 ? 0 : -1; }

int silent_check(int argc, char**) { return argc > 1 ? 3 : 0; }

// Changes its argv, as a parser that splits "--key=value" in place may.
int writes_check(int argc, char** argv) {
  for (int i = 1; i < argc; ++i)
    if (char* eq = std::strchr(argv[i], '=')) *eq = '\0';
  return 0;
}

// A C++ check, as a plugin's may be, that throws.
int throws_check(int, char**) { throw std::runtime_error("a plugin's parser gave up"); }

struct Registered {
  Registered() {
    nicsim_register_program_checked("args_probe", probe_main, probe_check, "test");
    nicsim_register_program_checked("args_needs_count", probe_main, needs_count_check, "test");
    nicsim_register_program_checked("args_misuse", probe_main, misuse_check, "test");
    nicsim_register_program_checked("args_silent", probe_main, silent_check, "test");
    nicsim_register_program_checked("args_writes", probe_main, writes_check, "test");
    nicsim_register_program_checked("args_throws", probe_main, throws_check, "test");
    nicsim_register_program("args_unchecked", probe_main, "test");
  }
} registered;

std::string check(const char* program, std::vector<std::string> args) {
  const ProgramInfo* info = ProgramRegistry::instance().find(program);
  EXPECT_NE(info, nullptr) << program;
  return info ? ProgramRegistry::check_args(*info, args) : "no such program";
}

TEST(ArgsCheck, ReasonsComeFromTheProgramsOwnParser) {
  EXPECT_EQ(check("args_probe", {}), "");
  EXPECT_EQ(check("args_probe", {"--count=3", "--low=2", "--high=5"}), "");
  EXPECT_EQ(check("args_probe", {"--count=11"}), "--count=11: expected a whole number from 1 to 10");
  // The last log line when nicsim_fail said nothing; the program's name,
  // which the caller gives, is taken off the front.
  EXPECT_EQ(check("args_probe", {"--colour=red"}), "unknown argument --colour=red");
  EXPECT_EQ(check("args_probe", {"--low=9", "--high=3"}), "--low is above --high");
  EXPECT_EQ(check("args_silent", {"--x"}), "its argument check returned 3 without saying why");
  EXPECT_EQ(check("args_needs_count", {}), "--count is required");
}

TEST(ArgsCheck, CallsOnlyARunningProgramMayMakeAreTheProgramsError) {
  EXPECT_EQ(check("args_misuse", {}),
            "its argument check called nicsim_workload_size, which only a running program may call");
  EXPECT_EQ(current_args_check(), nullptr);  // nothing left behind for the next call
}

TEST(ArgsCheck, AThrowingCheckIsARefusalAndLeavesNoReportBehind) {
  EXPECT_EQ(check("args_throws", {}), "its argument check threw: a plugin's parser gave up");
  EXPECT_EQ(current_args_check(), nullptr);
  EXPECT_EQ(check("args_probe", {"--count=2"}), "");
}

TEST(ArgsCheck, AProgramWithoutACheckTakesAnyArguments) { EXPECT_EQ(check("args_unchecked", {"--anything"}), ""); }

std::string scenario_text(const std::string& program, const std::string& args) {
  return "node { name: \"a\" }\nnode { name: \"b\" }\nlink { a: \"a\" b: \"b\" }\nworkload {\n  program: \"" + program +
         "\"\n  nodes: \"a\"\n" + args + "}\n";
}

// The error (file:line:column, the message) for a workload with `args`.
std::string load_error(const std::string& program, const std::string& args) {
  try {
    load_scenario_text(scenario_text(program, args), "args.textproto", registered_programs());
  } catch (const ScenarioError& e) {
    return e.what();
  }
  return "";
}

TEST(ArgsCheck, TheLoaderPlacesTheErrorAtTheArgument) {
  EXPECT_EQ(load_error("args_probe", "  args: \"--count=2\"\n"), "");
  EXPECT_EQ(load_error("args_probe", "  args: \"--count=2\"\n  args: \"--count=0\"\n"),
            "args.textproto:8:3: args: program 'args_probe' does not take these arguments: --count=0: expected a "
            "whole number from 1 to 10");
  // A rule between arguments is placed at the one that breaks it.
  EXPECT_EQ(load_error("args_probe", "  args: \"--low=9\"\n  args: \"--count=1\"\n  args: \"--high=3\"\n"),
            "args.textproto:9:3: args: program 'args_probe' does not take these arguments: --low is above --high");
  // The bad one first: placed there, not at the last.
  EXPECT_EQ(load_error("args_probe", "  args: \"--count=0\"\n  args: \"--count=2\"\n"),
            "args.textproto:7:3: args: program 'args_probe' does not take these arguments: --count=0: expected a "
            "whole number from 1 to 10");
  // --low=200 alone is refused against the default --high=100, which the
  // next argument raises: the error is the last argument's.
  EXPECT_EQ(load_error("args_probe", "  args: \"--low=200\"\n  args: \"--high=300\"\n  args: \"--count=11\"\n"),
            "args.textproto:9:3: args: program 'args_probe' does not take these arguments: --count=11: expected a "
            "whole number from 1 to 10");
  // Refused with no arguments at all: placed at the workload; a required
  // option given a bad value: placed at it.
  EXPECT_EQ(load_error("args_needs_count", ""),
            "args.textproto:4:1: program 'args_needs_count' does not take these arguments: --count is required");
  EXPECT_EQ(load_error("args_needs_count", "  args: \"--count=0\"\n"),
            "args.textproto:7:3: args: program 'args_needs_count' does not take these arguments: --count=0: "
            "expected a whole number from 1 to 10");
}

// A check that writes into its argv leaves the scenario's arguments as
// they were written.
TEST(ArgsCheck, TheScenarioKeepsTheArgumentsAParserWroteInto) {
  const Scenario sc = load_scenario_text(scenario_text("args_writes", "  args: \"--a=1\"\n  args: \"--b=2\"\n"),
                                         "args.textproto", registered_programs());
  EXPECT_EQ(sc.workloads.at(0).args, (std::vector<std::string>{"--a=1", "--b=2"}));
}

}  // namespace
