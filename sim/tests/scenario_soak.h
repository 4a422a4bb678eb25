// Fault soaks in the tests: run scenarios/<file> (a long soak) shortened by
// replaced program arguments, with more lines (faults) appended to its text,
// and collect each program's counts and what the links' faults did.
#pragma once
#include <gtest/gtest.h>

#include <cstdint>
#include <fstream>
#include <functional>
#include <iterator>
#include <map>
#include <string>
#include <vector>

#include "fabric/link.h"
#include "sim/tests/scenario_figures.h"
#include "world/world.h"

namespace nicsim::testing {

struct SoakRun {
  std::string file;                     // under scenarios/
  std::vector<std::string> extra;       // lines appended to the file's text (more faults)
  std::string program;                  // the workloads whose arguments change (empty: every one)
  std::vector<std::string> args;        // as replace_args
  std::function<void(World&)> inspect;  // also sees the world after the run
};

struct SoakOutcome {
  std::map<std::string, double> results;                // by name (a later program's wins)
  std::vector<std::map<std::string, double>> programs;  // each program instance's, in world order
  std::uint64_t bit_errors = 0;                         // bits the links flipped, both directions
  bool ok = false;

  // One result; a test failure when no program reported it.
  double get(const std::string& name) const {
    const auto it = results.find(name);
    EXPECT_NE(it, results.end()) << name;
    return it == results.end() ? -1 : it->second;
  }
  // A result added up over the program instances that report it.
  double sum(const std::string& name) const {
    double total = 0;
    bool any = false;
    for (const auto& p : programs)
      if (const auto it = p.find(name); it != p.end()) total += it->second, any = true;
    EXPECT_TRUE(any) << name;
    return total;
  }
};

// Bits the links flipped, both directions of every link.
inline std::uint64_t link_bit_errors(World& w) {
  std::uint64_t n = 0;
  for (const auto& l : w.fabric().links()) n += l->a().stats().bit_errors + l->b().stats().bit_errors;
  return n;
}

inline SoakOutcome run_soak(const SoakRun& run) {
  std::string text;
  {
    std::ifstream f(std::string(NICSIM_SOURCE_DIR) + "/scenarios/" + run.file);
    text.assign(std::istreambuf_iterator<char>(f), {});
  }
  EXPECT_FALSE(text.empty()) << "no scenarios/" << run.file;
  for (const std::string& line : run.extra) text += line + "\n";
  Scenario sc = load_text(text, run.file);
  for (auto& w : sc.workloads)
    if (run.program.empty() || w.program == run.program) replace_args(w, run.args);
  SoakOutcome out;
  RunOptions o;
  o.inspect = [&](World& w) {
    out.bit_errors = link_bit_errors(w);
    for (const auto& p : w.programs()) {
      std::map<std::string, double> mine;
      for (const auto& r : p->results()) mine[r.name] = r.value;
      out.programs.push_back(std::move(mine));
    }
    if (run.inspect) run.inspect(w);
  };
  const RunResult r = run_scenario(sc, o);
  out.results = r.results;
  out.ok = r.ok;
  for (const auto& [k, v] : out.results) std::printf("RESULT %s = %g\n", k.c_str(), v);
  std::printf("RESULT bit_errors = %llu\n", (unsigned long long)out.bit_errors);
  return out;
}

}  // namespace nicsim::testing
