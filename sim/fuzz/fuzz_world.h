// A world kept up across the inputs of a libFuzzer target. SystemC has one
// kernel per process and cannot start it again once it stopped, so a target
// builds its world once, from a scenario with a stop_time and no workloads,
// starts its setup programs as daemons (they keep running: the run neither
// waits for them nor stops when they end), runs to the stop time, and then
// goes on in short spans, one or a few per input (run_for). What an input
// leaves behind is seen by the next, so the setup programs put the state the
// inputs hit back as it was before each one (docs/fuzzing.md). Nothing here
// names a network kind.
#pragma once
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "core/sanitizer.h"
#include "core/sim.h"
#include "scenario/loader.h"
#include "world/programs.h"
#include "world/world.h"

namespace nicsim::fuzzing {

struct Daemon {
  std::string program;
  std::uint32_t node = 0;
};

// For LLVMFuzzerInitialize: the targets' options, with libFuzzer's leak
// check after each input turned off. LeakSanitizer does not scan the stacks
// of SystemC's threads, so what a program that is still running holds
// only from its locals would look leaked. The check at exit stays: the
// world is taken down first (its threads end), and anything left then is
// a leak.
inline void leak_check_at_exit_only(int* argc, char*** argv) {
  static std::vector<char*> args;
  static char flag[] = "-detect_leaks=0";
  args.assign(*argv, *argv + *argc);
  args.insert(args.begin() + 1, flag);
  args.push_back(nullptr);
  *argc = static_cast<int>(args.size() - 1);
  *argv = args.data();
}

// Putting state back before an input: the input side asks (PersistentWorld::
// put_back), a daemon of the world does it in simulated time (serve_put_back)
// and says when it is done.
struct PutBackRequests {
  std::uint64_t wanted = 0, done = 0;
};
inline PutBackRequests g_put_back;

// A daemon's loop, in thread context on `host`: whenever an input asks,
// calls `put_back()` (which may block, as driver calls do); looks every µs.
template <class HostT, class F>
[[noreturn]] void serve_put_back(HostT& host, F put_back) {
  for (;;) {
    if (g_put_back.done != g_put_back.wanted) {
      put_back();
      g_put_back.done = g_put_back.wanted;
    }
    host.sleep(1 * kUs);
  }
}

class PersistentWorld {
 public:
  PersistentWorld(const std::string& text, const std::vector<Daemon>& daemons)
      : sim_(1), scenario_(load(text)), world_(scenario_) {
    for (const Daemon& d : daemons) world_.start_daemon(d.program, d.node, {}, SourceLoc{"fuzz", 0, 0});
    world_.run();
    if (!sim_.errors().empty()) {
      for (const auto& e : sim_.errors().all()) std::fprintf(stderr, "%s: %s\n", e.where.c_str(), e.message.c_str());
      std::abort();
    }
  }
  PersistentWorld(const PersistentWorld&) = delete;

  World& world() { return world_; }
  Sim& sim() { return sim_; }

  // Simulates `span` more.
  void run_for(Tick span) {
    Calendar::set_horizon(now() + span);
    sc_core::sc_start(Calendar::to_sc(span), sc_core::SC_RUN_TO_TIME);
    Calendar::check_threads_synced();
    sanitizer_on_main_stack();
  }

  // Runs in steps of `step` until `done()` or `limit` has passed; whether
  // it was done.
  template <class F>
  bool run_until(F done, Tick step, Tick limit) {
    for (Tick spent = 0; !done(); spent += step) {
      if (spent >= limit) return false;
      run_for(step);
    }
    return true;
  }

  // Asks the world's daemon to put the state back (serve_put_back) and runs
  // until it has; a daemon that has not within 5 ms of simulated time is a
  // finding (`what` names the state).
  void put_back(const char* what) {
    ++g_put_back.wanted;
    if (!run_until([] { return g_put_back.done == g_put_back.wanted; }, 1 * kUs, 5 * kMs)) {
      std::fprintf(stderr, "%s were not put back within 5 ms\n", what);
      std::abort();
    }
  }

  // Errors that bad input made are the models' normal answer to it; they
  // are not kept from one input to the next.
  void forget_errors() { sim_.errors().clear(); }

 private:
  static Scenario load(const std::string& text) {
    return load_scenario_text(text, "fuzz.textproto",
                              [](std::string_view n) { return ProgramRegistry::instance().find(n) != nullptr; });
  }
  Sim sim_;
  Scenario scenario_;
  World world_;
};

}  // namespace nicsim::fuzzing

// libFuzzer's initialise hook, for every target that keeps a world up (each
// includes this header from its one source file): SystemC's banner off,
// the leak check at exit only.
extern "C" int LLVMFuzzerInitialize(int* argc, char*** argv) {
  setenv("SC_COPYRIGHT_MESSAGE", "DISABLE", 0);
  nicsim::fuzzing::leak_check_at_exit_only(argc, argv);
  return 0;
}
