#include "scenario/ipv4_spec.h"

#include <fmt/format.h>

#include <cstdio>
#include <map>
#include <utility>

namespace nicsim::scenario_detail {
namespace {

bool parse(const std::string& text, std::uint32_t& out) {
  unsigned a, b, c, d;
  char tail;
  if (std::sscanf(text.c_str(), "%u.%u.%u.%u%c", &a, &b, &c, &d, &tail) != 4) return false;
  if (a > 255 || b > 255 || c > 255 || d > 255) return false;
  out = (a << 24) | (b << 16) | (c << 8) | d;
  return true;
}

std::string dotted(std::uint32_t ip) {
  return fmt::format("{}.{}.{}.{}", ip >> 24, (ip >> 16) & 255, (ip >> 8) & 255, ip & 255);
}

}  // namespace

void load_ipv4(const nicsim::scenario::Scenario& msg, const Locator& root, Scenario& sc) {
  std::vector<std::vector<SourceLoc>> locs(sc.nodes.size());
  for (std::uint32_t i = 0; i < sc.nodes.size(); ++i) {
    NodeSpec& n = sc.nodes[i];
    n.ipv4.clear();
    for (std::uint32_t p = 1; p <= n.ports; ++p) n.ipv4.push_back(0x0a000000u + ((p - 1) << 23) + i + 1);
    locs[i].assign(n.ports, n.loc);
  }
  for (int k = 0; k < msg.node_size(); ++k) {
    const auto& m = msg.node(k);
    const auto idx = sc.node_index(m.name());
    if (!idx) continue;
    NodeSpec& n = sc.nodes[*idx];
    const Locator where = root.in("node", k);
    if (static_cast<std::uint32_t>(m.ipv4_size()) > n.ports)
      throw ScenarioError(where.at("ipv4", n.ports), fmt::format("node '{}' has {} port(s) but {} ipv4 addresses",
                                                                 n.name, n.ports, m.ipv4_size()));
    for (int p = 0; p < m.ipv4_size(); ++p) {
      if (!parse(m.ipv4(p), n.ipv4[static_cast<std::size_t>(p)]))
        throw ScenarioError(where.at("ipv4", p), fmt::format("ipv4: '{}' is not an IPv4 address (A.B.C.D)", m.ipv4(p)));
      locs[*idx][static_cast<std::size_t>(p)] = where.at("ipv4", p);
    }
  }
  std::map<std::uint32_t, std::pair<std::uint32_t, std::uint32_t>> owner;  // address -> (node, port)
  for (std::uint32_t i = 0; i < sc.nodes.size(); ++i) {
    for (std::uint32_t p = 0; p < sc.nodes[i].ipv4.size(); ++p) {
      const auto [it, fresh] = owner.emplace(sc.nodes[i].ipv4[p], std::make_pair(i, p));
      if (fresh) continue;
      const auto [j, q] = it->second;
      throw ScenarioError(locs[i][p], fmt::format("ipv4: {} of node '{}' port {} is already node '{}' port {}'s ({})",
                                                  dotted(sc.nodes[i].ipv4[p]), sc.nodes[i].name, p + 1,
                                                  sc.nodes[j].name, q + 1, locs[j][q].str()));
    }
  }
}

}  // namespace nicsim::scenario_detail
