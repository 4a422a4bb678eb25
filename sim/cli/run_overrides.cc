#include "cli/run_overrides.h"

#include <fmt/format.h>

namespace nicsim {

std::string override_program_args(Scenario& scenario, const std::vector<std::string>& args) {
  for (const std::string& a : args) {
    const std::size_t eq = a.find('=');
    if (a.rfind("--", 0) != 0 || a.size() < 3 || eq == 2)
      return fmt::format("--arg '{}': expected --key=value or --flag", a);
    const std::string key = eq == std::string::npos ? a : a.substr(0, eq + 1);
    for (WorkloadSpec& w : scenario.workloads) {
      bool replaced = false;
      for (std::string& x : w.args)
        if (eq == std::string::npos ? x == key : x.rfind(key, 0) == 0) x = a, replaced = true;
      if (!replaced) w.args.push_back(a);
    }
  }
  return {};
}

namespace {

// Sets `name` in `set` when its scope declares it: 1 if set, 0 if the scope
// has no such parameter; a bad value is an error in `error`.
int set_if_declared(ParamSet& set, const std::string& name, const std::string& value, std::string& error) {
  if (set.scope() == nullptr || set.scope()->find(name) == nullptr) return 0;
  if (std::string e = set.set(name, value); !e.empty()) {
    error = e;
    return 0;
  }
  return 1;
}

int override_one(Scenario& scenario, const std::string& scope, const std::string& name, const std::string& value,
                 std::string& error) {
  int taken = 0;
  if (scope == "link") {
    for (LinkSpec& l : scenario.links) taken += set_if_declared(l.params, name, value, error);
    return taken;
  }
  for (NodeSpec& n : scenario.nodes) {
    if (scope == "host") taken += set_if_declared(n.host, name, value, error);
    if (scope == "bus") taken += set_if_declared(n.bus, name, value, error);
    if (scope == "nic") taken += set_if_declared(n.nic_params, name, value, error);
  }
  return taken;
}

}  // namespace

std::string override_params(Scenario& scenario, const std::vector<std::string>& params) {
  for (const std::string& p : params) {
    const std::size_t dot = p.find('.'), eq = p.find('=');
    if (dot == std::string::npos || eq == std::string::npos || dot > eq)
      return fmt::format("--param '{}': expected scope.name=value", p);
    const std::string scope = p.substr(0, dot), name = p.substr(dot + 1, eq - dot - 1), value = p.substr(eq + 1);
    if (scope != "host" && scope != "bus" && scope != "nic" && scope != "link")
      return fmt::format("--param '{}': the scope must be host, bus, nic or link", p);
    std::string error;
    const int taken = override_one(scenario, scope, name, value, error);
    if (!error.empty()) return fmt::format("--param '{}': {}", p, error);
    if (taken == 0)
      return fmt::format("--param '{}': no {} in this scenario has the parameter {}", p,
                         scope == "link" ? "link" : "node", name);
  }
  return {};
}

}  // namespace nicsim
