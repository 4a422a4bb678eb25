// The IPv4 addresses of node ports (Node.ipv4): parsing, the default
// scheme, duplicates. Internal to the scenario loader.
#pragma once
#include "scenario.pb.h"
#include "scenario/locator.h"

namespace nicsim::scenario_detail {

// Fills every NodeSpec.ipv4 (one per port): the node's ipv4 entries where
// given, else 10.0.0.0 + node index + 1 for port 1 and 10.128.0.0 + node
// index + 1 for port 2. Throws ScenarioError at the entry for an address
// that does not parse, more entries than ports, or an address two ports
// share.
void load_ipv4(const nicsim::scenario::Scenario& msg, const Locator& root, Scenario& sc);

}  // namespace nicsim::scenario_detail
