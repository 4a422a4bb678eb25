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
  std::unordered_map<const Device*, int> switch_index;
  std::map<std::pair<const Device*, std::uint32_t>, int> endpoint_index;
  for (Device* s : switches) {
    switch_index[s] = static_cast<int>(g.nodes.size());
    g.nodes.push_back({true, 0, std::vector<routing::Graph::Link>(s->num_ports() + 1u)});
  }
  for (const EndpointAddress& ep : endpoints) {
    endpoint_index[{ep.device, ep.port}] = static_cast<int>(g.nodes.size());
    g.nodes.push_back({false, ep.lid, std::vector<routing::Graph::Link>(2)});
  }
  for (Device* s : switches) {
    const int a = switch_index[s];
    for (std::uint32_t p = 1; p <= s->num_ports(); ++p) {
      Port* peer = s->port(p).peer();
      if (!peer) continue;
      if (auto it = switch_index.find(&peer->owner()); it != switch_index.end()) {
        g.connect(a, p, it->second, peer->number());
      } else if (auto e = endpoint_index.find({&peer->owner(), peer->number()}); e != endpoint_index.end()) {
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
  const std::unordered_set<const Device*> is_switch(switches.begin(), switches.end());
  std::map<Device*, std::set<std::uint32_t>> ports;
  Device* root = nullptr;
  for (const EndpointAddress& m : members) {
    Port* attach = m.device->port(m.port).peer();
    if (!attach) continue;
    if (Device* s = &attach->owner(); is_switch.count(s)) {
      ports[s].insert(attach->number());
      if (!root) root = s;
    }
  }
  if (!root) return;
  // BFS tree from the root: parent port of every switch.
  std::unordered_map<const Device*, std::pair<Device*, std::uint32_t>> parent;  // (parent, port on child)
  std::deque<Device*> queue{root};
  parent[root] = {nullptr, 0};
  while (!queue.empty()) {
    Device* s = queue.front();
    queue.pop_front();
    for (std::uint32_t p = 1; p <= s->num_ports(); ++p) {
      Port* peer = s->port(p).peer();
      if (!peer) continue;
      Device* n = &peer->owner();
      if (is_switch.count(n) && !parent.count(n)) {
        parent[n] = {s, peer->number()};
        queue.push_back(n);
      }
    }
  }
  // Join every member switch to the root along its tree path.
  std::vector<Device*> member_switches;
  for (auto& [s, _] : ports) member_switches.push_back(s);
  for (Device* s : member_switches) {
    Device* cur = s;
    while (cur != root) {
      auto [up, child_port] = parent.at(cur);
      ports[cur].insert(child_port);
      ports[up].insert(cur->port(child_port).peer()->number());
      cur = up;
    }
  }
  for (Device* s : switches) {
    auto it = ports.find(s);
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
