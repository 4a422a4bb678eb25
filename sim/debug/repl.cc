// `nicsim debug`: the interactive prompt (libedit: line editing, history,
// completion of commands and object names) and the replay of a command
// script.
#include "debug/repl.h"

#include <editline/readline.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <map>

#include "debug/remote.h"
#include "debug/session.h"

namespace nicsim::debug {

namespace {

constexpr int kExitOk = 0, kExitFailed = 1, kExitBadInput = 2;
const Session* completing = nullptr;  // the session whose names complete

char* complete_word(const char* text, int state) {
  static std::vector<std::string> matches;
  static std::size_t next = 0;
  if (state == 0) {
    matches.clear();
    next = 0;
    const std::size_t n = std::strlen(text);
    std::vector<std::string> words = Debugger::command_names();
    if (completing)
      for (const std::string& s : completing->object_names()) words.push_back(s);
    for (const std::string& w : words)
      if (w.compare(0, n, text) == 0) matches.push_back(w);
  }
  return next < matches.size() ? strdup(matches[next++].c_str()) : nullptr;
}

char** complete(const char* text, int, int) {
  rl_attempted_completion_over = 1;
  return rl_completion_matches(text, complete_word);
}

std::string history_file() {
  const char* home = std::getenv("HOME");
  return home ? std::string(home) + "/.nicsim_debug_history" : std::string();
}

int interactive(Session& session) {
  completing = &session;
  rl_attempted_completion_function = complete;
  rl_readline_name = "nicsim";
  const std::string hist = history_file();
  using_history();
  if (!hist.empty()) read_history(hist.c_str());
  std::cout << "nicsim debug: `help` lists the commands; tab completes commands and object names\n";
  while (char* raw = readline("(nicsim) ")) {
    std::string line = raw;
    std::free(raw);
    if (line.find_first_not_of(" \t") == std::string::npos) continue;
    add_history(line.c_str());
    const SessionReply r = session.command(line);
    std::cout << (r.ok ? "" : "error: ") << r.text << std::flush;
    if (r.quit) break;
  }
  if (!hist.empty()) write_history(hist.c_str());
  return kExitOk;
}

// Script lines: commands as typed; `! COMMAND` expects the command to fail;
// `expect TEXT` requires TEXT in the last command's output; `remember NAME`
// keeps the last output and `expect-same NAME` requires the last output to
// be exactly that; `echo TEXT` prints TEXT. The first unexpected failure
// ends the script (exit 1).
int replay(Session& session, const std::string& path) {
  std::ifstream f(path);
  if (!f) {
    std::cerr << "nicsim: cannot read script " << path << "\n";
    return kExitBadInput;
  }
  std::string last;
  std::map<std::string, std::string> remembered;
  int n = 0;
  for (std::string line; std::getline(f, line);) {
    ++n;
    const std::size_t start = line.find_first_not_of(" \t");
    if (start == std::string::npos || line[start] == '#') continue;
    line = line.substr(start);
    const std::string where = fmt::format("{}:{}", path, n);
    if (line.rfind("echo", 0) == 0 && (line.size() == 4 || line[4] == ' ')) {
      std::cout << (line.size() > 5 ? line.substr(5) : "") << "\n";
      continue;
    }
    if (line.rfind("remember ", 0) == 0) {
      remembered[line.substr(9)] = last;
      continue;
    }
    if (line.rfind("expect-same ", 0) == 0) {
      const auto it = remembered.find(line.substr(12));
      if (it == remembered.end() || it->second != last) {
        std::cout << fmt::format("{}: the output above differs from '{}':\n{}", where, line.substr(12),
                                 it == remembered.end() ? "(nothing remembered by that name)\n" : it->second);
        return kExitFailed;
      }
      continue;
    }
    if (line.rfind("expect ", 0) == 0) {
      const std::string want = line.substr(7);
      if (last.find(want) == std::string::npos) {
        std::cout << fmt::format("{}: expected '{}' in the output above\n", where, want);
        return kExitFailed;
      }
      continue;
    }
    const bool must_fail = line[0] == '!';
    if (must_fail) line = line.substr(line.find_first_not_of(" \t", 1));
    std::cout << "(nicsim) " << line << "\n";
    const SessionReply r = session.command(line);
    last = r.text;
    std::cout << (r.ok ? "" : "error: ") << r.text << std::flush;
    if (r.ok == must_fail) {
      std::cout << fmt::format("{}: {}\n", where,
                               must_fail ? "the command was expected to fail" : "the command failed");
      return kExitFailed;
    }
    if (r.quit) return kExitOk;
  }
  session.command("quit");
  return kExitOk;
}

}  // namespace

int debug_main(const Scenario& scenario, const DebugOptions& options) {
  Session session(scenario);
  if (!session.start()) {
    std::cerr << "nicsim: " << session.error() << "\n";
    return kExitFailed;
  }
  std::cout << Session::describe(session.stop());
  if (!options.listen.empty()) return serve_remote(session, options.listen, options.allow_remote);
  if (!options.script.empty()) return replay(session, options.script);
  if (!isatty(STDIN_FILENO)) {
    // Commands from a pipe: one a line, no prompt.
    for (std::string line; std::getline(std::cin, line);) {
      const SessionReply r = session.command(line);
      std::cout << (r.ok ? "" : "error: ") << r.text << std::flush;
      if (r.quit) break;
    }
    return kExitOk;
  }
  return interactive(session);
}

}  // namespace nicsim::debug
