// The scenario's subnet_manager setting: validation and defaults. Internal
// to the scenario loader.
#pragma once
#include "scenario.pb.h"
#include "scenario/locator.h"

namespace nicsim::scenario_detail {

// Fills sc.subnet_manager from msg (after nodes and multicast groups are
// loaded). Throws ScenarioError naming the field and the rule broken.
void load_subnet_manager(const nicsim::scenario::Scenario& msg, const Locator& root, Scenario& sc);

}  // namespace nicsim::scenario_detail
