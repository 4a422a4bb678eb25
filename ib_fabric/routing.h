// Static routing for a fabric without a subnet manager: unicast routes by
// one of the routing engines (routing_engine.h) on the wired graph, and one
// spanning tree per multicast group. The IB subnet manager (a later layer)
// computes the same tables with the same engines from its sweep and
// programs them through SMPs instead.
#pragma once
#include <cstdint>
#include <vector>

#include "fabric/fabric.h"
#include "ib_fabric/routing_engine.h"

namespace nicsim::fabric {

struct EndpointAddress {
  Device* device;
  std::uint32_t port;
  std::uint16_t lid;
};

// `switches` are the fabric's IB switches in scenario order. In a run over
// several processes those another process runs are fabric::RemoteDevice
// (names and port numbers): every process computes the whole fabric's
// routes from the same wiring (Fabric::wiring) and programs the switches
// it runs.

// The switches and endpoints as a routing graph: switches first (in the
// order given), then one adapter node per endpoint (device, port).
routing::Graph routing_graph(const std::vector<Device*>& switches, const std::vector<EndpointAddress>& endpoints);

// Programs the linear forwarding table of every switch this process runs
// by `engine` so that each endpoint LID is reached. Returns the number of
// (switch, LID) entries.
std::size_t program_unicast_routes(const std::vector<Device*>& switches, const std::vector<EndpointAddress>& endpoints,
                                   routing::Engine engine = routing::Engine::Auto);

// Programs the multicast forwarding tables of the switches this process
// runs on a tree that spans `members` (rooted at the switch of the first
// member).
void program_multicast_tree(const std::vector<Device*>& switches, std::uint16_t mlid,
                            const std::vector<EndpointAddress>& members);

// A switch this process runs, as a Switch (std::logic_error otherwise).
Switch& local_switch(Device* d);

}  // namespace nicsim::fabric
