// The scenario's subnet_manager setting (verbs/sm/sm_scenario.proto) as a
// network kind's rule and world hook: validation and defaults when the
// scenario loads, and, when a subnet manager runs, the world set-up for it.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "scenario/loader.h"

namespace nicsim::sm {

struct ScenarioSpec {
  std::uint32_t node = 0;         // node index
  std::vector<std::string> args;  // argv[1..] (scenario args, then one --mcast per group)
  SourceLoc loc;
};

// The subnet manager the world starts for `sc`; nullptr when none runs.
const ScenarioSpec* scenario_spec(const Scenario& sc);

}  // namespace nicsim::sm
