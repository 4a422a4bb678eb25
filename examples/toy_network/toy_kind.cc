// The toy network as a network kind, registered when nicsim loads the
// plugin: NIC kind "toy", switch kind "toy_ring", the topology helper
// `toy_ring { nodes: N }`, packet kind 42, a capture format, and the
// scenario rule that numbers the ring and tells each switch its host.
#include <any>
#include <string>

#include "nicsim/app.h"
#include "scenario/loader.h"
#include "toy_network.pb.h"
#include "toy_nic.h"
#include "toy_switch.h"
#include "world/network_kinds.h"
#include "world/node.h"

namespace toy {

namespace {

constexpr std::uint32_t kMaxRing = 256;

bool expand_ring(const google::protobuf::Message& shape, const std::string& prefix, nicsim::topology::Generated* g,
                 nicsim::topology::ShapeError* error) {
  ToyRing ring;
  ring.ParseFromString(shape.SerializeAsString());
  if (ring.nodes() < 2 || ring.nodes() > kMaxRing) {
    *error = {"nodes", "toy_ring needs 2.." + std::to_string(kMaxRing) + " nodes, not " + std::to_string(ring.nodes())};
    return false;
  }
  nicsim::topology::add_hosts(g, prefix, ring.nodes());
  for (std::uint32_t i = 0; i < ring.nodes(); ++i) g->switches.push_back({"ring" + std::to_string(i), 3});
  for (std::uint32_t i = 0; i < ring.nodes(); ++i) {
    nicsim::topology::connect(g, {true, i, 1}, {false, i, 1}, "");
    nicsim::topology::connect(g, {false, i, 2}, {false, (i + 1) % ring.nodes(), 3}, "");
  }
  return true;
}

// Toy NICs get addresses 1..N in scenario order; each ring switch learns the
// address of the toy NIC on its port 1. A toy NIC anywhere but on a ring
// switch's port 1 is an error at the NIC's node.
void number_ring(nicsim::ScenarioContext& c) {
  nicsim::Scenario& sc = c.sc;
  std::uint32_t toys = 0;
  for (nicsim::NodeSpec& n : sc.nodes)
    if (n.nic == "toy") n.address = ++toys;
  for (nicsim::NodeSpec& n : sc.nodes)
    if (n.nic == "toy") n.network_size = toys;
  for (const nicsim::LinkSpec& l : sc.links) {
    for (const auto& [node, other] : {std::pair{l.a, l.b}, std::pair{l.b, l.a}}) {
      if (node.kind != nicsim::LinkEnd::Kind::Node || sc.nodes[node.index].nic != "toy") continue;
      const bool on_ring =
          other.kind == nicsim::LinkEnd::Kind::Switch && sc.switches[other.index].kind == "toy_ring" && other.port == 1;
      if (!on_ring)
        throw nicsim::ScenarioError(l.loc, "link '" + l.name + "': a toy NIC attaches to port 1 of a toy_ring switch");
      sc.switches[other.index].kind_data = static_cast<std::uint16_t>(sc.nodes[node.index].address);
    }
  }
  for (const nicsim::SwitchSpec& s : sc.switches)
    if (s.kind == "toy_ring" && !s.kind_data.has_value())
      throw nicsim::ScenarioError(s.loc, "toy_ring switch '" + s.name + "' has no toy NIC on its port 1");
}

void register_toy_network() {
  nicsim::NicRegistry::instance().add(
      "toy",
      [](nicsim::NicContext& c) -> std::unique_ptr<nicsim::fabric::Device> {
        return std::make_unique<ToyNic>(c.fabric, c.device_id, c.name, c.params);
      },
      // A process that does not run the NIC still delivers to it as it does.
      [](nicsim::fabric::Port& stand_in, const nicsim::ParamSet&) { stand_in.deliver_after_tail(0); });
  nicsim::NetworkKinds& kinds = nicsim::NetworkKinds::instance();
  kinds.add_packet_kind(kPacketToy, "toy");
  kinds.add_pcap_format({"toy", 149 /* LINKTYPE_USER2: raw frames */, -1});
  kinds.set_nic_pcap_format("toy", "toy");
  nicsim::SwitchKind ring;
  ring.name = "toy_ring";
  ring.param_scope = "switch.toy_ring";
  ring.fixed_ports = 3;
  ring.pcap_format = "toy";
  ring.make = [](nicsim::fabric::Fabric& fabric, std::uint32_t id, const nicsim::SwitchSpec& spec,
                 const nicsim::Scenario&) -> std::unique_ptr<nicsim::fabric::Device> {
    return std::make_unique<ToySwitch>(fabric, id, spec.name, spec.params,
                                       std::any_cast<std::uint16_t>(spec.kind_data));
  };
  kinds.add_switch_kind(std::move(ring));
  kinds.add_schema_field({"Topology", "shape", "toy_ring", 100, ToyRing::descriptor(), false});
  kinds.add_topology_helper({"toy_ring", "toy", "toy_ring", expand_ring});
  kinds.add_scenario_rule({"toy.ring", nicsim::ScenarioRule::Stage::LinksPlaced, number_ring});
}

}  // namespace

}  // namespace toy

extern "C" int nicsim_plugin_init(void) {
  toy::register_toy_network();
  return 0;
}
