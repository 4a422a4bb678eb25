// Running a shell command from a test (the nicsim CLI, tshark) and reading
// what it printed: one helper for every test that checks a real reader or
// the real binary.
#pragma once
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <sstream>
#include <utility>
#include <fstream>
#include <initializer_list>
#include <string>

namespace nicsim::testing {

struct CommandResult {
  int status = -1;     // exit status, or -1 if it could not run or did not exit normally
  std::string output;  // its standard output (redirect 2>&1 in `command` to add stderr)
};

inline CommandResult run_command(const std::string& command) {
  CommandResult r;
  std::FILE* p = ::popen(command.c_str(), "r");
  if (p == nullptr) return r;
  std::array<char, 4096> buf;
  std::size_t n;
  while ((n = std::fread(buf.data(), 1, buf.size(), p)) > 0) r.output.append(buf.data(), n);
  const int raw = ::pclose(p);
  r.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
  return r;
}

// The nicsim command (NICSIM_BIN) with `args`, its stdout and stderr.
struct CliResult {
  int exit_code;
  std::string out;
};
inline CliResult run_nicsim(const std::string& args) {
  CommandResult r = run_command(std::string(NICSIM_BIN) + " " + args + " 2>&1");
  return {r.status, std::move(r.output)};
}

// A fresh scratch folder for this process: <tmp>/nicsim_<name>_<pid>.
inline std::filesystem::path temp_dir(const std::string& name) {
  std::filesystem::path d =
      std::filesystem::temp_directory_path() / ("nicsim_" + name + "_" + std::to_string(getpid()));
  std::filesystem::remove_all(d);
  std::filesystem::create_directories(d);
  return d;
}

inline std::string slurp(const std::filesystem::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

// Occurrences of `what` in `text` (overlapping ones included).
inline std::size_t count_of(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// A fatal failure of the calling test (use ASSERT_NO_FATAL_FAILURE) when
// tshark cannot be run: capture formats are only proven by a real reader,
// so these tests fail rather than skip.
inline void require_tshark() {
  const CommandResult r = run_command("tshark --version 2>&1");
  ASSERT_TRUE(r.status == 0 && r.output.find("TShark") != std::string::npos)
      << "tshark is required for this test and could not be run (exit " << r.status << "): " << r.output
      << "\nInstall it: DEBIAN_FRONTEND=noninteractive apt-get install -y tshark";
}

// Runs `scenario_text` cut at each of `stop_times` with the nicsim command
// (NICSIM_BIN), each in a process of its own: what is pending at the cut
// (packets, continuations, DMAs, driver objects) goes with the world, and the sanitizer build checks for leaks when
// that process exits (and exits with LeakSanitizer's status, not 1, if it
// finds one). What is pending at a cut depends on its exact time, hence
// several.
inline void run_cuts(const std::string& name, const std::string& scenario_text,
                     std::initializer_list<const char*> stop_times) {
  const std::string path = ::testing::TempDir() + "nicsim_world_end_" + name + "_" + std::to_string(getpid());
  for (const char* t : stop_times) {
    std::ofstream(path) << scenario_text << "\nstop_time: \"" << t << "\"\n";
    const CommandResult r = run_command(std::string(NICSIM_BIN) + " run " + path + " 2>&1");
    EXPECT_EQ(r.status, 1) << "cut at " << t << ":\n" << r.output;
    EXPECT_NE(r.output.find("did not finish by stop_time"), std::string::npos) << r.output;
  }
  std::remove(path.c_str());
}

}  // namespace nicsim::testing
