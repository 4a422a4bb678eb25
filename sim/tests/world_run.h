// The one way tests run a scenario: load its text, build the world, run it,
// and collect what came out (simulation errors, the programs' exit codes and
// results), with a look at the world before it ends. Every layer's tests use
// it; the layer helpers (two-node scenarios, consumer conveniences) sit on
// top.
//
// NICSIM_TEST_TRACE=<file> writes the run's trace (every device and
// component) there, for a look at a failing test.
#pragma once
#include <gtest/gtest.h>

#include <cstdlib>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "core/sim.h"
#include "world/programs.h"
#include "world/world.h"

namespace nicsim::testing {

struct RunOptions {
  std::string file = "test.textproto";               // the name errors locate in
  bool expect_clean = true;                          // every simulation error fails the test
  bool expect_programs_ok = true;                    // every program instance must end with exit code 0, not Failed
  std::string trace_path, timeline_path, pcap_path;  // outputs to open (empty: none)
  std::function<void(World&)> inspect;               // sees the world after the run, before it ends
};

struct RunResult {
  RunStatus status;
  bool ok = false;  // = status.ok
  Tick end = 0;
  std::vector<std::string> errors;        // "where: message"
  std::vector<int> exit_codes;            // per program instance, in world order
  std::map<std::string, double> results;  // every program's results by name (a later rank's wins)
};

inline Scenario load_text(const std::string& text, const std::string& file = "test.textproto") {
  return load_scenario_text(text, file,
                            [](std::string_view n) { return ProgramRegistry::instance().find(n) != nullptr; });
}

inline RunResult run_scenario(const Scenario& sc, const RunOptions& o = {}) {
  Sim sim(sc.seed);
  World world(sc);
  const char* env_trace = std::getenv("NICSIM_TEST_TRACE");
  const std::string trace = o.trace_path.empty() && env_trace ? env_trace : o.trace_path;
  if (!trace.empty() || !o.timeline_path.empty() || !o.pcap_path.empty())
    world.open_outputs(trace, o.timeline_path, o.pcap_path);
  RunResult r;
  r.status = world.run();
  r.ok = r.status.ok;
  r.end = Calendar::now();
  world.close_outputs();
  for (const auto& e : sim.errors().all()) {
    r.errors.push_back(e.where + ": " + e.message);
    if (o.expect_clean) ADD_FAILURE() << e.where << ": " << e.message;
  }
  for (const auto& p : world.programs()) {
    r.exit_codes.push_back(p->exit_code());
    for (const auto& res : p->results()) r.results[res.name] = res.value;
    if (!o.expect_programs_ok) continue;
    EXPECT_EQ(p->exit_code(), 0) << p->node().name() << " rank " << p->rank() << ": " << p->failure();
    EXPECT_NE(p->state(), ProgramState::Failed) << p->node().name() << " rank " << p->rank() << ": " << p->failure();
  }
  if (o.expect_clean && o.expect_programs_ok) {
    EXPECT_TRUE(r.ok) << "the run did not finish cleanly";
  }
  if (o.inspect) o.inspect(world);
  return r;
}

// With NICSIM_TEST_TRACE set, every device and component is traced.
inline RunResult run_text(const std::string& text, const RunOptions& o = {}) {
  const bool env_trace = std::getenv("NICSIM_TEST_TRACE") && o.trace_path.empty();
  return run_scenario(
      load_text(env_trace ? text + R"(outputs { trace { device: "*" component: "*" } })" : text, o.file), o);
}

}  // namespace nicsim::testing
