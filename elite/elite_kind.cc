// The Elite network as a network kind: the switch kind "elite", the
// topology helper elite_fat_tree, its packets and capture format, and the
// scenario rules that place the switches and give nodes their Elan ids.
#include "elite/elite_kind.h"

#include "elite/elite_layout.h"
#include "elite/elite_packets.h"
#include "elite/elite_scenario.pb.h"
#include "elite/elite_switch.h"
#include "world/network_kinds.h"

namespace nicsim::elite {

namespace {

bool expand_fat_tree(const google::protobuf::Message& shape, const std::string& prefix, topology::Generated* g,
                     topology::ShapeError* error) {
  EliteFatTree t;
  t.ParseFromString(shape.SerializeAsString());
  if (t.nodes() == 0) {
    *error = {"nodes", "elite_fat_tree needs at least 1 node"};
    return false;
  }
  if (t.nodes() > kMaxNodes) {
    *error = {"nodes", "elite_fat_tree has " + std::to_string(t.nodes()) + " nodes, more than the Elite limit of " +
                           std::to_string(kMaxNodes)};
    return false;
  }
  if (t.nodes() > g->max_hosts) {
    *error = {"nodes", "elite_fat_tree has " + std::to_string(t.nodes()) + " nodes, more than the limit of " +
                           std::to_string(g->max_hosts)};
    return false;
  }
  const Tree tree = build_tree(t.nodes());
  if (!topology::links_fit(*g, tree.links.size(), "elite_fat_tree", error)) return false;
  topology::add_hosts(g, prefix, tree.nodes);
  for (const TreeSwitch& s : tree.switches) g->switches.push_back({s.name, kPorts});
  for (const TreeLink& l : tree.links)
    topology::connect(g, {l.lower_is_node, l.lower, l.lower_port}, {false, l.upper, l.upper_port}, "");
  return true;
}

std::unique_ptr<fabric::Device> make_switch(fabric::Fabric& fabric, std::uint32_t id, const SwitchSpec& spec,
                                            const Scenario&) {
  const auto& where = std::any_cast<const SwitchPlace&>(spec.kind_data);
  return std::make_unique<EliteSwitch>(fabric, id, spec.name, spec.params, where.place, where.nodes);
}

}  // namespace

void register_network_kind() {
  NetworkKinds& kinds = NetworkKinds::instance();
  kinds.add_packet_kind(fabric::kPacketElan, "elan3");
  kinds.add_packet_kind(fabric::kPacketElanAck, "elan3.ack");
  kinds.add_pcap_format({"elan3", kLinktypeElan3, -1});
  SwitchKind sw;
  sw.name = "elite";
  sw.param_scope = "switch.elite";
  sw.fixed_ports = kPorts;
  sw.pcap_format = "elan3";
  sw.key_error = switch_key_error;
  sw.make = make_switch;
  kinds.add_switch_kind(std::move(sw));
  kinds.add_schema_field({"Topology", "shape", "elite_fat_tree", 8, EliteFatTree::descriptor(), false});
  kinds.add_topology_helper({"elite_fat_tree", "elan3", "elite", expand_fat_tree});
  kinds.add_scenario_rule(
      {"elite.place", ScenarioRule::Stage::LinksPlaced, [](ScenarioContext& c) { place_network(c.sc); }});
  kinds.add_scenario_rule(
      {"elite.multicast", ScenarioRule::Stage::Parsed, [](ScenarioContext& c) { check_multicast(c.sc); }});
}

namespace {
const bool registered = (register_network_kind(), true);
}

}  // namespace nicsim::elite
