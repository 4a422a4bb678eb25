#include "scenario/shapes.h"

namespace nicsim::topology {

namespace {

namespace pb = nicsim::scenario;

bool fail(ShapeError* error, std::string field, std::string message) {
  *error = {std::move(field), std::move(message)};
  return false;
}

std::string copy_suffix(std::uint32_t copy, std::uint32_t copies) {
  std::string suffix;
  if (copies > 1) suffix.append("#").append(std::to_string(copy));
  return suffix;
}

bool star(const pb::Star& s, const std::string& prefix, Generated* g, ShapeError* error) {
  if (s.hosts() == 0) return fail(error, "hosts", "star needs at least 1 host");
  if (s.hosts() > g->max_hosts) {
    return fail(
        error, "hosts",
        "star has " + std::to_string(s.hosts()) + " hosts, more than the limit " + std::to_string(g->max_hosts));
  }
  if (!links_fit(*g, s.hosts(), "star", error)) return false;
  add_hosts(g, prefix, s.hosts());
  g->switches.push_back({s.switch_name().empty() ? "sw0" : s.switch_name(), s.hosts()});
  for (std::uint32_t h = 0; h < s.hosts(); ++h) connect(g, {true, h, 1}, {false, 0, h + 1}, "");
  return true;
}

bool leaf_spine(const pb::LeafSpine& s, const std::string& prefix, Generated* g, ShapeError* error) {
  if (s.leaves() == 0) return fail(error, "leaves", "leaf_spine needs at least 1 leaf");
  if (s.hosts_per_leaf() == 0) {
    return fail(error, "hosts_per_leaf", "leaf_spine needs at least 1 host per leaf");
  }
  if (s.spines() == 0) return fail(error, "spines", "leaf_spine needs at least 1 spine");
  const std::uint64_t copies = s.links_per_spine() == 0 ? 1 : s.links_per_spine();
  const std::uint64_t hosts = std::uint64_t{s.leaves()} * s.hosts_per_leaf();
  if (hosts > g->max_hosts) {
    return fail(
        error, "",
        "leaf_spine has " + std::to_string(hosts) + " hosts, more than the limit " + std::to_string(g->max_hosts));
  }
  // Port counts above any real switch are caught by the "switch" scope's
  // range check; this only keeps the arithmetic below in 32 bits.
  const std::uint64_t leaf_ports = s.hosts_per_leaf() + std::uint64_t{s.spines()} * copies;
  const std::uint64_t spine_ports = std::uint64_t{s.leaves()} * copies;
  if (leaf_ports > kMaxHosts || spine_ports > kMaxHosts || s.spines() > kMaxHosts) {
    return fail(error, "", "leaf_spine needs more than " + std::to_string(kMaxHosts) + " ports on a switch");
  }
  if (!links_fit(*g, hosts + std::uint64_t{s.leaves()} * s.spines() * copies, "leaf_spine", error)) return false;
  add_hosts(g, prefix, hosts);
  for (std::uint32_t i = 0; i < s.leaves(); ++i) {
    g->switches.push_back({"leaf" + std::to_string(i), static_cast<std::uint32_t>(leaf_ports)});
  }
  for (std::uint32_t j = 0; j < s.spines(); ++j) {
    g->switches.push_back({"spine" + std::to_string(j), static_cast<std::uint32_t>(spine_ports)});
  }
  const std::uint32_t hpl = s.hosts_per_leaf();
  const auto c_max = static_cast<std::uint32_t>(copies);
  for (std::uint32_t i = 0; i < s.leaves(); ++i) {
    for (std::uint32_t h = 0; h < hpl; ++h) {
      connect(g, {true, i * hpl + h, 1}, {false, i, h + 1}, "");
    }
  }
  for (std::uint32_t i = 0; i < s.leaves(); ++i) {
    for (std::uint32_t j = 0; j < s.spines(); ++j) {
      for (std::uint32_t c = 0; c < c_max; ++c) {
        End leaf{false, i, hpl + 1 + j * c_max + c};
        End spine{false, s.leaves() + j, 1 + i * c_max + c};
        connect(g, leaf, spine, copy_suffix(c, c_max));
      }
    }
  }
  return true;
}

// k-ary n-tree (Petrini and Vanneschi). A switch index at any level is a
// number of n-1 base-k digits. Switch s at level L connects up to the k
// switches of level L+1 whose index differs from s only in digit L: up
// port k+1+u reaches the one whose digit L is u, and arrives on that
// switch's down port (digit L of s) + 1. Host h sits on leaf h / k, port
// h % k + 1. Every pair of switches has at most one link.
bool fat_tree(const pb::FatTree& t, const std::string& prefix, Generated* g, ShapeError* error) {
  if (t.k() < 2) return fail(error, "k", "fat_tree needs k >= 2");
  if (t.n() < 1) return fail(error, "n", "fat_tree needs n >= 1");
  const std::uint64_t k = t.k();
  const std::uint32_t n = t.n();
  std::uint64_t hosts = 1;
  for (std::uint32_t i = 0; i < n; ++i) {
    hosts *= k;
    if (hosts > g->max_hosts) {
      return fail(error, "",
                  "fat_tree with k=" + std::to_string(k) + " n=" + std::to_string(n) + " has more than the limit of " +
                      std::to_string(g->max_hosts) + " hosts");
    }
  }
  const std::uint64_t per_level = hosts / k;                       // k^(n-1)
  if (!links_fit(*g, n * hosts, "fat_tree", error)) return false;  // k^n at each level
  add_hosts(g, prefix, hosts);
  for (std::uint32_t level = 0; level < n; ++level) {
    const std::uint64_t ports = level + 1 < n ? 2 * k : k;
    for (std::uint64_t s = 0; s < per_level; ++s) {
      g->switches.push_back(
          {"sw" + std::to_string(level) + "_" + std::to_string(s), static_cast<std::uint32_t>(ports)});
    }
  }
  auto switch_at = [&](std::uint32_t level, std::uint64_t s) {
    return static_cast<std::uint32_t>(level * per_level + s);
  };
  const auto k32 = static_cast<std::uint32_t>(k);
  for (std::uint64_t h = 0; h < hosts; ++h) {
    connect(g, {true, static_cast<std::uint32_t>(h), 1},
            {false, switch_at(0, h / k), static_cast<std::uint32_t>(h % k) + 1}, "");
  }
  std::uint64_t digit_weight = 1;  // k^L
  for (std::uint32_t level = 0; level + 1 < n; ++level, digit_weight *= k) {
    for (std::uint64_t s = 0; s < per_level; ++s) {
      const std::uint64_t digit = s / digit_weight % k;
      const std::uint64_t base = s - digit * digit_weight;
      for (std::uint32_t u = 0; u < k32; ++u) {
        const std::uint64_t upper = base + u * digit_weight;
        connect(g, {false, switch_at(level, s), k32 + 1 + u},
                {false, switch_at(level + 1, upper), static_cast<std::uint32_t>(digit) + 1}, "");
      }
    }
  }
  return true;
}

}  // namespace

namespace {
std::string end_name(const Generated& g, const End& e) { return e.host ? g.hosts[e.index] : g.switches[e.index].name; }

}  // namespace

void connect(Generated* g, End a, End b, const std::string& suffix) {
  g->links.push_back({end_name(*g, a) + "--" + end_name(*g, b) + suffix, a, b});
}

bool links_fit(const Generated& g, std::uint64_t links, const std::string& shape, ShapeError* error) {
  if (links <= g.max_links) return true;
  *error = {"", shape + " has " + std::to_string(links) + " links, more than the limit " + std::to_string(g.max_links)};
  return false;
}

void add_hosts(Generated* g, const std::string& prefix, std::uint64_t count) {
  g->hosts.reserve(count);
  for (std::uint64_t i = 0; i < count; ++i) g->hosts.push_back(prefix + std::to_string(i));
}

bool expand(const pb::Topology& topo, const std::string& host_prefix, Generated* out, ShapeError* error) {
  switch (topo.shape_case()) {
    case pb::Topology::kStar:
      return star(topo.star(), host_prefix, out, error);
    case pb::Topology::kLeafSpine:
      return leaf_spine(topo.leaf_spine(), host_prefix, out, error);
    case pb::Topology::kFatTree:
      return fat_tree(topo.fat_tree(), host_prefix, out, error);
    case pb::Topology::SHAPE_NOT_SET:
      break;
  }
  return fail(error, "", "topology has no shape");
}

}  // namespace nicsim::topology
