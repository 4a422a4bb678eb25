// The figures a scenario file's programs report (nicsim_result), for
// calibration tests: run scenarios/<file> in this process, optionally with
// program arguments replaced or added, every simulation error failing the
// test.
#pragma once
#include <gtest/gtest.h>

#include <cstdio>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "sim/tests/world_run.h"

namespace nicsim::testing {

// `args` are "--key=value": each replaces the workload argument with the
// same "--key=" or is appended.
inline void replace_args(WorkloadSpec& w, const std::vector<std::string>& args) {
  for (const std::string& a : args) {
    const std::string key = a.substr(0, a.find('=') + 1);
    bool replaced = false;
    for (auto& x : w.args)
      if (x.rfind(key, 0) == 0) x = a, replaced = true;
    if (!replaced) w.args.push_back(a);
  }
}

// Every result of every program instance, by name (a later rank's result of
// the same name wins), with `args` as replace_args.
inline std::map<std::string, double> scenario_results(const std::string& scenario_file,
                                                      const std::vector<std::string>& args = {}) {
  Scenario sc = load_scenario_file(std::string(NICSIM_SOURCE_DIR) + "/scenarios/" + scenario_file,
                                   [](std::string_view n) { return ProgramRegistry::instance().find(n) != nullptr; });
  for (auto& w : sc.workloads) replace_args(w, args);
  return run_scenario(sc).results;
}

// One named figure (printed for the log); a failure when it is missing.
inline double scenario_figure(const std::string& scenario_file, const std::vector<std::string>& args,
                              const std::string& name) {
  const std::map<std::string, double> results = scenario_results(scenario_file, args);
  const auto it = results.find(name);
  if (it == results.end()) {
    ADD_FAILURE() << "no result " << name << " from " << scenario_file;
    return 0;
  }
  std::printf("%s %s = %.3f\n", scenario_file.c_str(), name.c_str(), it->second);
  return it->second;
}

}  // namespace nicsim::testing
