// The Elite network's part of scenario loading: rules for Elite switch
// settings, the defaults of links that touch an Elite switch, and the
// placement of Elite switches and Elan node ids (elite/elite_tree.h). Errors
// are ScenarioErrors at the offending switch, link or node.
#pragma once
#include <string>

#include "elite/elite_tree.h"
#include "scenario/loader.h"

namespace nicsim::elite {

// What the placement gives each Elite switch (SwitchSpec::kind_data).
struct SwitchPlace {
  Place place;
  std::uint32_t nodes = 0;  // node positions of the network
};

// Empty when `key` may be set on an Elite switch; else why not (a setting
// of the default switch kind such as "ports" or "mode").
std::string switch_key_error(const std::string& key);

// After links are placed: applies the Elite link defaults (400 MB/s, 2 VCs)
// where neither link_defaults nor the link set them, places every Elite
// switch, and gives Elan node ids (leaf positions on the Elite network; the
// scenario order of elan3 nodes when there is no Elite switch) as the
// nodes' fixed addresses.
void place_network(Scenario& sc);

// Elite switches broadcast to a node range and have no multicast tables:
// a multicast group with a member on the Elite network is an error.
void check_multicast(const Scenario& sc);

}  // namespace nicsim::elite
