// Static routing for a fabric without a subnet manager: min-hop unicast
// routes with destination-modulo spreading over equal-cost ports (D-mod-k),
// and one spanning tree per multicast group. The IB subnet manager (a later
// layer) computes and programs the same tables through SMPs instead.
#pragma once
#include <cstdint>
#include <vector>

#include "fabric/fabric.h"

namespace nicsim::fabric {

struct EndpointAddress {
  Device* device;
  std::uint32_t port;
  std::uint16_t lid;
};

// Programs every switch's linear forwarding table so that each endpoint LID
// is reached by a shortest path. Returns the number of (switch, LID) entries.
std::size_t program_unicast_routes(const std::vector<Switch*>& switches, const std::vector<EndpointAddress>& endpoints);

// Programs the multicast forwarding tables of the switches on a tree that
// spans `members` (rooted at the switch of the first member).
void program_multicast_tree(const std::vector<Switch*>& switches, std::uint16_t mlid,
                            const std::vector<EndpointAddress>& members);

}  // namespace nicsim::fabric
