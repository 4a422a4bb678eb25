// The Elite part of scenario loading: rules for Elite switch settings, the
// defaults of links that touch an Elite switch, and the placement of Elite
// switches and Elan node ids (elan_model/elite/elite_tree.h). Internal to the
// scenario loader; errors are ScenarioErrors at the offending switch, link or
// node.
#pragma once
#include <string>

#include "scenario/loader.h"

namespace nicsim::scenario_detail {

// Empty when `key` may be set on an Elite switch; else why not (an IB-only
// setting such as "ports" or "mode", or an unknown key).
std::string elite_switch_key_error(const std::string& key);

// After links are placed: applies the Elite link defaults (400 MB/s, 2 VCs)
// where neither link_defaults nor the link set them, places every Elite
// switch, and gives Elan node ids (leaf positions on the Elite network; the
// scenario order of elan3 nodes when there is no Elite switch).
void place_elite_network(Scenario& sc);

}  // namespace nicsim::scenario_detail
