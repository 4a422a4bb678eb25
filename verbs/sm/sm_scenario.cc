#include "verbs/sm/sm_scenario.h"

#include <fmt/format.h>

#include "verbs/sm/sm.h"
#include "verbs/sm/sm_scenario.pb.h"
#include "world/network_kinds.h"
#include "world/world.h"

namespace nicsim::sm {

namespace {

constexpr const char* kExtension = "subnet_manager";

// The default SM arguments of the scenario's multicast groups.
void add_multicast_args(const Scenario& sc, ScenarioSpec& spec) {
  for (const MulticastGroupSpec& g : sc.multicast) {
    std::string arg = fmt::format("--mcast={}:", g.mlid);
    for (std::size_t k = 0; k < g.members.size(); ++k) arg += (k ? "," : "") + sc.nodes[g.members[k]].name;
    if (!g.members.empty()) spec.args.push_back(std::move(arg));
  }
}

// Runs after nodes and multicast groups are loaded. Throws ScenarioError
// naming the field and the rule broken.
void load(ScenarioContext& c) {
  const Locator where = c.root.in(kExtension);
  SubnetManagerSetting m;
  const bool written = ScenarioContext::field(c.file, kExtension, &m);
  ScenarioSpec spec;
  spec.loc = where.self();
  bool all_hca = !c.sc.nodes.empty();
  for (const NodeSpec& n : c.sc.nodes) all_hca = all_hca && n.nic == "hca";
  if (m.off()) {
    if (!m.node().empty())
      throw ScenarioError(where.at("node"), "subnet_manager: 'node' and 'off: true' exclude each other");
    if (m.args_size())
      throw ScenarioError(where.at("args"), "subnet_manager: 'args' and 'off: true' exclude each other");
    return;
  }
  if (!written && !all_hca) return;  // default: only on all-HCA fabrics
  if (!all_hca)
    throw ScenarioError(where.self(),
                        "subnet_manager: every node must have nic \"hca\" (an SM cannot manage other NICs); "
                        "use 'off: true' for static addressing");
  if (!m.node().empty()) {
    const auto idx = c.sc.node_index(m.node());
    if (!idx) throw ScenarioError(where.at("node"), fmt::format("subnet_manager: unknown node '{}'", m.node()));
    spec.node = *idx;
  }
  for (int i = 0; i < m.args_size(); ++i) spec.args.push_back(m.args(i));
  add_multicast_args(c.sc, spec);
  std::vector<std::string> argv_text{"subnet_manager"};
  argv_text.insert(argv_text.end(), spec.args.begin(), spec.args.end());
  std::vector<char*> argv;
  for (auto& a : argv_text) argv.push_back(a.data());
  SmOptions opts;
  if (std::string err = parse_options(static_cast<int>(argv.size()), argv.data(), opts); !err.empty())
    throw ScenarioError(where.at("args"), "subnet_manager: " + err);
  c.sc.extensions[kExtension] = std::move(spec);
}

// No static addresses or routes: every device is marked managed (IB ports
// wait in Init for the SM), and the SM program runs on its node from time 0
// as a daemon the run does not wait for.
bool manage_fabric(World& world) {
  const ScenarioSpec* spec = scenario_spec(world.scenario());
  if (!spec) return false;
  for (std::uint32_t i = 0; i < world.num_nodes(); ++i) world.node(i).nic().set_managed(true);
  for (std::uint32_t i = 0; i < world.num_switches(); ++i) world.switch_device(i).set_managed(true);
  world.start_daemon("subnet_manager", spec->node, spec->args, spec->loc);
  return true;
}

const bool registered = [] {
  NetworkKinds& kinds = NetworkKinds::instance();
  kinds.add_schema_field({"Scenario", "", kExtension, 15, SubnetManagerSetting::descriptor(), false});
  kinds.add_scenario_rule({kExtension, ScenarioRule::Stage::Parsed, load});
  kinds.add_world_hook({kExtension, manage_fabric});
  return true;
}();

}  // namespace

const ScenarioSpec* scenario_spec(const Scenario& sc) {
  auto it = sc.extensions.find(kExtension);
  return it == sc.extensions.end() ? nullptr : std::any_cast<ScenarioSpec>(&it->second);
}

}  // namespace nicsim::sm
