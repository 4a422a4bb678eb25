#include "ib_fabric/routing.h"

#include <algorithm>
#include <deque>
#include <map>
#include <set>
#include <stdexcept>
#include <unordered_map>
#include <unordered_set>

#include <fmt/format.h>

#include "ib_fabric/switch.h"

namespace nicsim::fabric {

routing::Graph routing_graph(const std::vector<Device*>& switches, const std::vector<EndpointAddress>& endpoints) {
  routing::Graph g;
  std::unordered_map<std::uint32_t, int> switch_index;  // by device id
  std::map<std::pair<std::uint32_t, std::uint32_t>, int> endpoint_index;
  for (Device* s : switches) {
    switch_index[s->device_id()] = static_cast<int>(g.nodes.size());
    g.nodes.push_back({true, 0, std::vector<routing::Graph::Link>(s->num_ports() + 1u)});
  }
  for (const EndpointAddress& ep : endpoints) {
    endpoint_index[{ep.device->device_id(), ep.port}] = static_cast<int>(g.nodes.size());
    g.nodes.push_back({false, ep.lid, std::vector<routing::Graph::Link>(2)});
  }
  if (switches.empty()) return g;
  const Wiring& wiring = switches.front()->fabric().wiring();
  for (Device* s : switches) {
    const int a = switch_index[s->device_id()];
    for (std::uint32_t p = 1; p <= s->num_ports(); ++p) {
      const PortRef peer = wiring.peer(s->device_id(), p);
      if (!peer.wired()) continue;
      if (auto it = switch_index.find(peer.device); it != switch_index.end()) {
        g.connect(a, p, it->second, peer.port);
      } else if (auto e = endpoint_index.find({peer.device, peer.port}); e != endpoint_index.end()) {
        g.connect(a, p, e->second, 1);
      }
    }
  }
  return g;
}

std::size_t program_unicast_routes(const std::vector<Device*>& switches, const std::vector<EndpointAddress>& endpoints,
                                   routing::Engine engine) {
  const routing::Graph g = routing_graph(switches, endpoints);
  std::vector<bool> keep(switches.size());
  for (std::size_t i = 0; i < switches.size(); ++i) keep[i] = !switches[i]->runs_elsewhere();
  routing::Routes r = routing::compute(g, engine, keep);
  std::size_t entries = 0;
  for (std::size_t i = 0; i < switches.size(); ++i) {
    std::vector<std::uint8_t>& table = r.lft[i];
    if (table.empty()) continue;
    table[0] = 0;  // LID 0 is no address
    for (std::uint8_t& port : table) {
      if (port == routing::kNoRoute) port = 0;
      entries += port != 0;
    }
    local_switch(switches[i]).set_routes(std::move(table));
  }
  return entries;
}

void program_multicast_tree(const std::vector<Device*>& switches, std::uint16_t mlid,
                            const std::vector<EndpointAddress>& members) {
  if (switches.empty()) return;
  const Wiring& wiring = switches.front()->fabric().wiring();
  std::unordered_set<std::uint32_t> is_switch;  // device ids
  for (Device* s : switches) is_switch.insert(s->device_id());
  std::map<std::uint32_t, std::set<std::uint32_t>> ports;  // by switch device id
  std::uint32_t root = 0;
  bool rooted = false;
  for (const EndpointAddress& m : members) {
    const PortRef attach = wiring.peer(m.device->device_id(), m.port);
    if (attach.wired() && is_switch.count(attach.device)) {
      ports[attach.device].insert(attach.port);
      if (!rooted) root = attach.device;
      rooted = true;
    }
  }
  if (!rooted) return;
  const Fabric& fabric = switches.front()->fabric();
  // BFS tree from the root: parent port of every switch.
  std::unordered_map<std::uint32_t, PortRef> parent;  // child -> (parent, port on child)
  std::deque<std::uint32_t> queue{root};
  parent[root] = {};
  while (!queue.empty()) {
    const std::uint32_t s = queue.front();
    queue.pop_front();
    for (std::uint32_t p = 1; p <= fabric.device(s)->num_ports(); ++p) {
      const PortRef peer = wiring.peer(s, p);
      if (peer.wired() && is_switch.count(peer.device) && !parent.count(peer.device)) {
        parent[peer.device] = {s, peer.port};
        queue.push_back(peer.device);
      }
    }
  }
  // Join every member switch to the root along its tree path.
  std::vector<std::uint32_t> member_switches;
  for (auto& [s, _] : ports) member_switches.push_back(s);
  for (std::uint32_t s : member_switches) {
    for (std::uint32_t cur = s; cur != root;) {
      const PortRef up = parent.at(cur);  // up.port: the port on `cur` towards its parent
      ports[cur].insert(up.port);
      ports[up.device].insert(wiring.peer(cur, up.port).port);
      cur = up.device;
    }
  }
  for (Device* s : switches) {
    auto it = ports.find(s->device_id());
    if (it != ports.end() && !s->runs_elsewhere())
      local_switch(s).set_multicast(mlid, {it->second.begin(), it->second.end()});
  }
}

Switch& local_switch(Device* d) {
  auto* s = dynamic_cast<Switch*>(d);
  if (!s) throw std::logic_error(fmt::format("{} is not an IB switch run by this process", d->name()));
  return *s;
}

}  // namespace nicsim::fabric
