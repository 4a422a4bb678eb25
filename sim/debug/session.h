// A debugging session over one scenario: the simulation runs in a child
// process (SystemC runs once per process), paused in the debugger, and the
// session sends it commands. Going backwards re-runs the scenario from the
// start in a fresh child, with the same seed and the same breakpoints, to
// an earlier position: the previous event (reverse-step) or the previous
// breakpoint hit (reverse-continue, which first re-runs to record the hits
// before the current position). The simulation is deterministic, so the
// state shown there is the state the forward run had.
#pragma once
#include <sys/types.h>

#include <string>
#include <vector>

#include "debug/debugger.h"
#include "scenario/loader.h"

namespace nicsim::debug {

struct SessionReply {
  bool ok = true;
  std::string text;      // what the command printed
  bool stopped = false;  // the run moved and stopped again (`stop` says where)
  bool quit = false;
};

class Session {
 public:
  explicit Session(Scenario scenario);
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  // Starts the first child; false (with `error()`) when it cannot.
  bool start();
  const std::string& error() const { return error_; }
  SessionReply command(const std::string& line);
  const Stop& stop() const { return stop_; }
  // Object and command names for completion (refreshed at every stop).
  const std::vector<std::string>& object_names() const { return names_; }
  // The stop as people read it: "stopped at event 42, 1.5us: breakpoint 1: ...".
  static std::string describe(const Stop& s);

 private:
  bool start_zygote();
  bool spawn();
  void end_child();
  bool send(const std::string& text);
  bool receive(std::string& frame);
  // Sends a command to the child and reads its answer.
  SessionReply ask(const std::string& line);
  bool restart_to(const Position& target, bool record, SessionReply& out);
  SessionReply reverse_step();
  SessionReply reverse_continue();
  void refresh_names();

  Scenario scenario_;
  pid_t zygote_ = -1;  // forks the children (session.cc)
  int zygote_fd_ = -1;
  pid_t child_ = -1;
  int fd_ = -1;
  Stop stop_;
  std::vector<Stop> recorded_;
  std::vector<std::string> names_;
  std::string error_;
};

// The child's side: builds the world, attaches a debugger and serves the
// session's commands on `fd` at every pause. Does not return.
[[noreturn]] void serve_child(const Scenario& scenario, int fd);

}  // namespace nicsim::debug
