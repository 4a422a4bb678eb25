#include "scenario/subnet_manager_spec.h"

#include <fmt/format.h>

#include "verbs/sm/sm.h"

namespace nicsim::scenario_detail {

void load_subnet_manager(const nicsim::scenario::Scenario& msg, const Locator& root, Scenario& sc) {
  const Locator where = root.in("subnet_manager");
  const auto& m = msg.subnet_manager();
  SubnetManagerSpec& spec = sc.subnet_manager;
  spec.loc = where.self();
  bool all_hca = !sc.nodes.empty();
  for (const NodeSpec& n : sc.nodes) all_hca = all_hca && n.nic == "hca";
  if (m.off()) {
    if (!m.node().empty())
      throw ScenarioError(where.at("node"), "subnet_manager: 'node' and 'off: true' exclude each other");
    if (m.args_size())
      throw ScenarioError(where.at("args"), "subnet_manager: 'args' and 'off: true' exclude each other");
    return;
  }
  if (!msg.has_subnet_manager() && !all_hca) return;  // default: only on all-HCA fabrics
  if (!all_hca)
    throw ScenarioError(where.self(),
                        "subnet_manager: every node must have nic \"hca\" (an SM cannot manage other NICs); "
                        "use 'off: true' for static addressing");
  if (!m.node().empty()) {
    const auto idx = sc.node_index(m.node());
    if (!idx) throw ScenarioError(where.at("node"), fmt::format("subnet_manager: unknown node '{}'", m.node()));
    spec.node = *idx;
  }
  for (int i = 0; i < m.args_size(); ++i) spec.args.push_back(m.args(i));
  for (const MulticastGroupSpec& g : sc.multicast) {
    std::string arg = fmt::format("--mcast={}:", g.mlid);
    for (std::size_t k = 0; k < g.members.size(); ++k) arg += (k ? "," : "") + sc.nodes[g.members[k]].name;
    if (!g.members.empty()) spec.args.push_back(std::move(arg));
  }
  std::vector<std::string> argv_text{"subnet_manager"};
  argv_text.insert(argv_text.end(), spec.args.begin(), spec.args.end());
  std::vector<char*> argv;
  for (auto& a : argv_text) argv.push_back(a.data());
  sm::SmOptions opts;
  if (std::string err = sm::parse_options(static_cast<int>(argv.size()), argv.data(), opts); !err.empty())
    throw ScenarioError(where.at("args"), "subnet_manager: " + err);
  spec.enabled = true;
}

}  // namespace nicsim::scenario_detail
