#include "ib_fabric/routing.h"

#include <algorithm>
#include <deque>
#include <map>
#include <set>
#include <unordered_map>

#include "ib_fabric/switch.h"

namespace nicsim::fabric {

namespace {

Switch* as_switch(Device* d) { return dynamic_cast<Switch*>(d); }

// Hop distances (in switch-to-switch links) from `start` to every switch.
std::unordered_map<const Switch*, int> bfs(Switch* start) {
  std::unordered_map<const Switch*, int> dist{{start, 0}};
  std::deque<Switch*> queue{start};
  while (!queue.empty()) {
    Switch* s = queue.front();
    queue.pop_front();
    for (std::uint32_t p = 1; p <= s->num_ports(); ++p) {
      Port* peer = s->port(p).peer();
      if (!peer) continue;
      Switch* n = as_switch(&peer->owner());
      if (n && !dist.count(n)) {
        dist[n] = dist[s] + 1;
        queue.push_back(n);
      }
    }
  }
  return dist;
}

}  // namespace

std::size_t program_unicast_routes(const std::vector<Switch*>& switches,
                                   const std::vector<EndpointAddress>& endpoints) {
  std::size_t entries = 0;
  for (const EndpointAddress& ep : endpoints) {
    Port* attach = ep.device->port(ep.port).peer();
    if (!attach) continue;
    Switch* edge = as_switch(&attach->owner());
    if (!edge) continue;  // a direct host-to-host link needs no routes
    edge->set_route(ep.lid, attach->number());
    ++entries;
    auto dist = bfs(edge);
    for (Switch* s : switches) {
      if (s == edge) continue;
      auto it = dist.find(s);
      if (it == dist.end()) continue;  // disconnected from the endpoint
      std::vector<std::uint32_t> candidates;
      for (std::uint32_t p = 1; p <= s->num_ports(); ++p) {
        Port* peer = s->port(p).peer();
        if (!peer) continue;
        Switch* n = as_switch(&peer->owner());
        if (n) {
          auto d = dist.find(n);
          if (d != dist.end() && d->second == it->second - 1) candidates.push_back(p);
        }
      }
      if (candidates.empty()) continue;
      s->set_route(ep.lid, candidates[ep.lid % candidates.size()]);
      ++entries;
    }
  }
  return entries;
}

void program_multicast_tree(const std::vector<Switch*>& switches, std::uint16_t mlid,
                            const std::vector<EndpointAddress>& members) {
  std::map<Switch*, std::set<std::uint32_t>> ports;
  Switch* root = nullptr;
  for (const EndpointAddress& m : members) {
    Port* attach = m.device->port(m.port).peer();
    if (!attach) continue;
    if (Switch* s = as_switch(&attach->owner())) {
      ports[s].insert(attach->number());
      if (!root) root = s;
    }
  }
  if (!root) return;
  // BFS tree from the root: parent port of every switch.
  std::unordered_map<const Switch*, std::pair<Switch*, std::uint32_t>> parent;  // (parent, port on child)
  std::deque<Switch*> queue{root};
  parent[root] = {nullptr, 0};
  while (!queue.empty()) {
    Switch* s = queue.front();
    queue.pop_front();
    for (std::uint32_t p = 1; p <= s->num_ports(); ++p) {
      Port* peer = s->port(p).peer();
      if (!peer) continue;
      Switch* n = as_switch(&peer->owner());
      if (n && !parent.count(n)) {
        parent[n] = {s, peer->number()};
        queue.push_back(n);
      }
    }
  }
  // Join every member switch to the root along its tree path.
  std::vector<Switch*> member_switches;
  for (auto& [s, _] : ports) member_switches.push_back(s);
  for (Switch* s : member_switches) {
    Switch* cur = s;
    while (cur != root) {
      auto [up, child_port] = parent.at(cur);
      ports[cur].insert(child_port);
      ports[up].insert(cur->port(child_port).peer()->number());
      cur = up;
    }
  }
  for (Switch* s : switches) {
    auto it = ports.find(s);
    if (it != ports.end()) s->set_multicast(mlid, {it->second.begin(), it->second.end()});
  }
}

}  // namespace nicsim::fabric
