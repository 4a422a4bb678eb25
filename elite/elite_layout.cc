#include "elite/elite_layout.h"

#include <fmt/format.h>

#include "core/params.h"
#include "world/network_kinds.h"

namespace nicsim::elite {

namespace {

constexpr const char* kElan3 = "elan3";

std::string known_keys(const ParamScope& scope) {
  std::string keys;
  for (const ParamDef& d : scope.defs) keys += (keys.empty() ? "" : ", ") + d.name;
  return keys;
}

}  // namespace

std::string switch_key_error(const std::string& key) {
  const ParamScope* elite = ParamRegistry::instance().find("switch.elite");
  if (!elite || elite->find(key)) return {};
  const SwitchKind* other = NetworkKinds::instance().default_switch_kind();
  const ParamScope* ib = other ? ParamRegistry::instance().find(other->param_scope) : nullptr;
  if (ib && ib->find(key))
    return fmt::format(
        "'{}' is an IB switch setting; an Elite switch has 8 fixed ports and cut-through forwarding "
        "(its keys, scope switch.elite: {})",
        key, known_keys(*elite));
  return {};  // unknown everywhere: the parameter set reports it with the scope's keys
}

void place_network(Scenario& sc) {
  // Elan3 NICs speak the Elan link protocol: to an Elite switch or to
  // another Elan3 back to back, never to an IB switch.
  for (const LinkSpec& l : sc.links) {
    for (const auto& [node, other] : {std::pair{l.a, l.b}, std::pair{l.b, l.a}}) {
      if (node.kind != LinkEnd::Kind::Node || other.kind != LinkEnd::Kind::Switch) continue;
      const SwitchSpec& s = sc.switches[other.index];
      if (sc.nodes[node.index].nic == kElan3 && s.kind != "elite")
        throw ScenarioError(l.loc, fmt::format("link '{}' joins elan3 node '{}' to IB switch '{}': an Elan3 NIC "
                                               "connects to an Elite switch or to another Elan3",
                                               l.name, sc.nodes[node.index].name, s.name));
    }
  }
  std::vector<std::uint32_t> elite_index(sc.switches.size(), UINT32_MAX);
  std::vector<std::uint32_t> elite_switches;
  for (std::uint32_t s = 0; s < sc.switches.size(); ++s) {
    if (sc.switches[s].kind != "elite") continue;
    elite_index[s] = static_cast<std::uint32_t>(elite_switches.size());
    elite_switches.push_back(s);
  }
  if (elite_switches.empty()) {
    std::int64_t next = 0;
    for (NodeSpec& n : sc.nodes)
      if (n.nic == kElan3) n.address = next++;
    for (NodeSpec& n : sc.nodes)
      if (n.address >= 0) n.network_size = static_cast<std::uint32_t>(next);
    return;
  }

  auto is_elite = [&](const LinkEnd& e) {
    return e.kind == LinkEnd::Kind::Switch && elite_index[e.index] != UINT32_MAX;
  };
  auto end_name = [&](const LinkEnd& e) {
    return e.kind == LinkEnd::Kind::Switch ? sc.switches[e.index].name : sc.nodes[e.index].name;
  };
  Wiring wiring;
  wiring.node_count = static_cast<std::uint32_t>(sc.nodes.size());
  wiring.ports.resize(elite_switches.size());
  for (std::uint32_t li = 0; li < sc.links.size(); ++li) {
    LinkSpec& l = sc.links[li];
    if (!is_elite(l.a) && !is_elite(l.b)) continue;
    const LinkEnd& e = is_elite(l.a) ? l.a : l.b;
    const LinkEnd& other = is_elite(l.a) ? l.b : l.a;
    if (other.kind == LinkEnd::Kind::Switch && !is_elite(other))
      throw ScenarioError(l.loc, fmt::format("link '{}' joins Elite switch '{}' to IB switch '{}': an Elite network "
                                             "holds only Elite switches and nodes",
                                             l.name, end_name(e), end_name(other)));
    if (l.params.is_set("vls") && l.params.count("vls") != kVcs)
      throw ScenarioError(l.loc, fmt::format("link '{}' touches Elite switch '{}': Elite links carry {} virtual "
                                             "channels (vls {} is not allowed)",
                                             l.name, end_name(e), kVcs, l.params.raw("vls")));
    if (!l.params.is_set("vls")) (void)l.params.set("vls", std::to_string(kVcs));
    if (!l.params.is_set("bandwidth")) (void)l.params.set("bandwidth", kLinkBandwidth);
    if (other.kind == LinkEnd::Kind::Node) {
      const NodeSpec& n = sc.nodes[other.index];
      if (n.nic != kElan3 && n.nic != "raw")
        throw ScenarioError(n.loc, fmt::format("node '{}' (NIC kind '{}') is linked to Elite switch '{}': only elan3 "
                                               "and raw NICs attach to an Elite network",
                                               n.name, n.nic, end_name(e)));
      if (n.ports != 1)
        throw ScenarioError(
            n.loc, fmt::format("node '{}' on the Elite network has {} ports (an Elan node has one)", n.name, n.ports));
    }
    auto peer_of = [&](const LinkEnd& x) {
      Peer p;
      p.kind = x.kind == LinkEnd::Kind::Node ? Peer::Kind::Node : is_elite(x) ? Peer::Kind::Elite : Peer::Kind::Other;
      p.index = p.kind == Peer::Kind::Elite ? elite_index[x.index] : x.index;
      p.port = x.port;
      p.link = li;
      return p;
    };
    if (is_elite(l.a)) wiring.ports[elite_index[l.a.index]][l.a.port - 1] = peer_of(l.b);
    if (is_elite(l.b)) wiring.ports[elite_index[l.b.index]][l.b.port - 1] = peer_of(l.a);
  }

  std::vector<std::string> switch_names, node_names;
  for (std::uint32_t s : elite_switches) switch_names.push_back(sc.switches[s].name);
  for (const NodeSpec& n : sc.nodes) node_names.push_back(n.name);
  Placement placement;
  PlaceError error;
  if (!place(wiring, switch_names, node_names, &placement, &error)) {
    const SourceLoc& loc = error.subject == PlaceError::Subject::Switch ? sc.switches[elite_switches[error.index]].loc
                           : error.subject == PlaceError::Subject::Link ? sc.links[error.index].loc
                                                                        : sc.nodes[error.index].loc;
    throw ScenarioError(loc, error.message);
  }
  for (std::uint32_t i = 0; i < elite_switches.size(); ++i) {
    sc.switches[elite_switches[i]].kind_data = SwitchPlace{placement.switches[i], placement.nodes};
  }
  for (std::uint32_t n = 0; n < sc.nodes.size(); ++n) {
    NodeSpec& node = sc.nodes[n];
    node.address = placement.node_id[n];
    if (node.address >= 0) node.network_size = placement.nodes;
    if (node.nic == kElan3 && node.address < 0)
      throw ScenarioError(node.loc, fmt::format("elan3 node '{}' is not on the Elite network (with Elite switches in "
                                                "the scenario, every elan3 node attaches to one)",
                                                node.name));
  }
}

void check_multicast(const Scenario& sc) {
  bool elite_network = false;
  for (const SwitchSpec& s : sc.switches) elite_network = elite_network || s.kind == "elite";
  if (!elite_network) return;
  for (const MulticastGroupSpec& g : sc.multicast)
    for (std::uint32_t n : g.members)
      if (sc.nodes[n].address >= 0)
        throw ScenarioError(g.loc, "multicast group member '" + sc.nodes[n].name +
                                       "' is on the Elite network, which has no multicast tables (Elite "
                                       "broadcasts to a node range instead)");
}

}  // namespace nicsim::elite
