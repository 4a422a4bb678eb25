// Running a shell command from a test (the nicsim CLI, tshark) and reading
// what it printed: one helper for every test that checks a real reader or
// the real binary.
#pragma once
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
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

}  // namespace nicsim::testing
