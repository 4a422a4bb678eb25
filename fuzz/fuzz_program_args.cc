// libFuzzer target: arbitrary arguments through every built-in program's
// argument check, the parser the scenario loader runs on a workload's
// arguments before anything is built. An input is lines: the first names
// the program, each further line (or NUL-separated piece) is one argument.
// A finding is a crash or sanitizer report in a parser (they are C, with
// fixed-size buffers), a check that calls what only a running program may,
// a refusal that gives no reason, or a check whose answer changes when it
// is asked again (a check must keep no state).
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "world/programs.h"

namespace {

constexpr std::size_t kMaxArgs = 64;

// The input's program name and arguments.
struct Invocation {
  std::string program;
  std::vector<std::string> args;
};

Invocation split(const std::uint8_t* data, std::size_t size) {
  Invocation in;
  std::string word;
  bool named = false;
  auto end_word = [&] {
    if (!named) {
      in.program = word;
      named = true;
    } else if (in.args.size() < kMaxArgs) {
      in.args.push_back(word);
    }
    word.clear();
  };
  for (std::size_t i = 0; i < size; ++i) {
    const char c = static_cast<char>(data[i]);
    if (c == '\n' || c == '\0') {
      end_word();
    } else {
      word += c;
    }
  }
  end_word();
  return in;
}

[[noreturn]] void finding(const Invocation& in, const char* what, const std::string& detail) {
  std::fprintf(stderr, "%s: %s (%s, %zu arguments)\n", in.program.c_str(), what, detail.c_str(), in.args.size());
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const Invocation in = split(data, size);
  const nicsim::ProgramInfo* program = nicsim::ProgramRegistry::instance().find(in.program);
  if (!program || !program->check) return 0;
  const std::string reason = nicsim::ProgramRegistry::check_args(*program, in.args);
  if (reason.rfind("its argument check called ", 0) == 0) finding(in, "a call only a running program may make", reason);
  // Both texts are ProgramRegistry::check_args's own; a parser's reason
  // that quotes an argument starts with the option's key or another word.
  if (reason.rfind("its argument check returned ", 0) == 0) finding(in, "a refusal without a reason", reason);
  const std::string again = nicsim::ProgramRegistry::check_args(*program, in.args);
  if (again != reason) finding(in, "a different answer the second time", reason + " / " + again);
  return 0;
}
