#include "cli/run_overrides.h"

#include <fmt/format.h>

#include <charconv>
#include <system_error>

namespace nicsim {

bool parse_whole_number(const std::string& text, std::uint64_t& out) {
  if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos) return false;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc() && end == text.data() + text.size();
}

std::string override_program_args(Scenario& scenario, const std::vector<std::string>& args) {
  for (const std::string& given : args) {
    // "PROGRAM:--key=value" reaches only the workloads running PROGRAM.
    const std::size_t colon = given.rfind("--", 0) == 0 ? std::string::npos : given.find(":--");
    const std::string program = colon == std::string::npos ? std::string() : given.substr(0, colon);
    const std::string a = colon == std::string::npos ? given : given.substr(colon + 1);
    const std::size_t eq = a.find('=');
    if (a.rfind("--", 0) != 0 || a.size() < 3 || eq == 2)
      return fmt::format("--arg '{}': expected --key=value, --flag, or PROGRAM:--key=value", given);
    const std::string key = eq == std::string::npos ? a : a.substr(0, eq + 1);
    bool matched = false;
    for (WorkloadSpec& w : scenario.workloads) {
      if (!program.empty() && w.program != program) continue;
      matched = true;
      bool replaced = false;
      for (std::string& x : w.args)
        if (eq == std::string::npos ? x == key : x.rfind(key, 0) == 0) x = a, replaced = true;
      if (!replaced) w.args.push_back(a);
    }
    if (!matched && !program.empty())
      return fmt::format("--arg '{}': no workload of the scenario runs program '{}'", given, program);
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

// " (did you mean scope.x?)" when a node's or link's parameters of `scope`
// declare a name near `name`.
std::string suggestion(const Scenario& scenario, const std::string& scope, const std::string& name) {
  auto near = [&](const ParamSet& set) {
    const std::string match = set.scope() ? set.scope()->close_match(name) : std::string();
    return match.empty() ? match : fmt::format(" (did you mean {}.{}?)", scope, match);
  };
  if (scope == "link") {
    for (const LinkSpec& l : scenario.links)
      if (std::string s = near(l.params); !s.empty()) return s;
    return {};
  }
  for (const NodeSpec& n : scenario.nodes)
    if (std::string s = near(scope == "host" ? n.host : scope == "bus" ? n.bus : n.nic_params); !s.empty()) return s;
  return {};
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
      return fmt::format("--param '{}': no {} in this scenario has the parameter {}{}", p,
                         scope == "link" ? "link" : "node", name, suggestion(scenario, scope, name));
  }
  return {};
}

}  // namespace nicsim
