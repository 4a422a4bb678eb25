// The routing engines on graphs built here: k-ary n-trees (wired as the
// fat_tree topology helper wires them), a 2-D torus of switches and an
// irregular graph. Every engine's tables reach every destination without a
// loop; minhop and ftree by shortest paths; updn never turns from down to
// up; on a fat tree the routes through a switch's up ports are balanced
// (within one of the mean), and ftree spreads a permutation over every top
// switch, where choosing the up port by the same LID digit at every level
// (as the engines' predecessor did) reaches only a few.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <numeric>
#include <random>
#include <set>

#include "ib_fabric/routing_engine.h"

using namespace nicsim::fabric::routing;

namespace {

// k^n hosts (lids 1..) then n levels of k^(n-1) switches; host h on leaf
// h / k port h % k + 1; up port k+1+u of switch s at level l joins the level
// l+1 switch whose index is s with digit l set to u, at its down port
// (digit l of s) + 1.
Graph k_ary_n_tree(int k, int n) {
  Graph g;
  int hosts = 1;
  for (int i = 0; i < n; ++i) hosts *= k;
  const int per_level = hosts / k;
  for (int h = 0; h < hosts; ++h) g.nodes.push_back({false, static_cast<std::uint16_t>(h + 1), {}});
  for (int s = 0; s < n * per_level; ++s) g.nodes.push_back({true, 0, {}});
  auto sw = [&](int level, int s) { return hosts + level * per_level + s; };
  for (int h = 0; h < hosts; ++h) g.connect(h, 1, sw(0, h / k), static_cast<std::uint32_t>(h % k + 1));
  int weight = 1;
  for (int level = 0; level + 1 < n; ++level, weight *= k)
    for (int s = 0; s < per_level; ++s) {
      const int digit = s / weight % k;
      for (int u = 0; u < k; ++u)
        g.connect(sw(level, s), static_cast<std::uint32_t>(k + 1 + u), sw(level + 1, s - digit * weight + u * weight),
                  static_cast<std::uint32_t>(digit + 1));
    }
  return g;
}

// A w x w torus of switches, `per` hosts on each (ports 1..per), the four
// neighbours on ports per+1..per+4.
Graph torus(int w, int per) {
  Graph g;
  const int hosts = w * w * per;
  for (int h = 0; h < hosts; ++h) g.nodes.push_back({false, static_cast<std::uint16_t>(h + 1), {}});
  for (int s = 0; s < w * w; ++s) g.nodes.push_back({true, 0, {}});
  auto sw = [&](int x, int y) { return hosts + ((y + w) % w) * w + (x + w) % w; };
  for (int h = 0; h < hosts; ++h) g.connect(h, 1, hosts + h / per, static_cast<std::uint32_t>(h % per + 1));
  const auto p = static_cast<std::uint32_t>(per);
  for (int y = 0; y < w; ++y)
    for (int x = 0; x < w; ++x) {
      g.connect(sw(x, y), p + 1, sw(x + 1, y), p + 2);  // east to west
      g.connect(sw(x, y), p + 3, sw(x, y + 1), p + 4);  // north to south
    }
  return g;
}

void expect_sound(const Graph& g, Engine e, bool shortest) {
  const RouteCheck c = check_routes(g, compute(g, e));
  EXPECT_GT(c.pairs, 0u);
  EXPECT_EQ(c.unreachable, 0u) << engine_name(e);
  EXPECT_EQ(c.loops, 0u) << engine_name(e);
  if (shortest) {
    EXPECT_EQ(c.longer_than_shortest, 0u) << engine_name(e);
  }
}

// The top switches a random permutation's paths cross.
std::size_t top_switches_used(const Graph& g, const Routes& r, int hosts, int top_first) {
  std::vector<int> dest(static_cast<std::size_t>(hosts));
  std::iota(dest.begin(), dest.end(), 0);
  std::mt19937 rng(7);
  std::shuffle(dest.begin(), dest.end(), rng);
  std::set<int> used;
  for (int s = 0; s < hosts; ++s) {
    const std::uint16_t lid = g.nodes[static_cast<std::size_t>(dest[static_cast<std::size_t>(s)])].lid;
    int cur = g.nodes[static_cast<std::size_t>(s)].ports[1].peer;
    for (int hop = 0; hop < 16 && g.nodes[static_cast<std::size_t>(cur)].is_switch; ++hop) {
      if (cur >= top_first) used.insert(cur);
      cur = g.nodes[static_cast<std::size_t>(cur)].ports[r.lft[static_cast<std::size_t>(cur)][lid]].peer;
    }
  }
  return used.size();
}

}  // namespace

TEST(RoutingEngines, EveryEngineIsSoundOnFatTrees) {
  for (const auto& [k, n] : {std::pair{4, 2}, std::pair{4, 3}, std::pair{2, 4}}) {
    const Graph g = k_ary_n_tree(k, n);
    EXPECT_TRUE(is_fat_tree(g));
    expect_sound(g, Engine::MinHop, true);
    expect_sound(g, Engine::FatTree, true);
    expect_sound(g, Engine::UpDown, false);
    EXPECT_EQ(compute(g, Engine::Auto).engine, Engine::FatTree);
  }
}

TEST(RoutingEngines, UpPortsCarryBalancedRouteCountsOnAFatTree) {
  const Graph g = k_ary_n_tree(4, 4);  // 256 hosts
  EXPECT_LE(check_routes(g, compute(g, Engine::FatTree)).max_up_port_excess, 1.0);
  EXPECT_LE(check_routes(g, compute(g, Engine::MinHop)).max_up_port_excess, 1.0);
}

TEST(RoutingEngines, FatTreeEngineSpreadsAPermutationOverEveryTopSwitch) {
  const Graph g = k_ary_n_tree(4, 4);
  const int hosts = 256, top_first = hosts + 3 * 64;
  const std::size_t ftree = top_switches_used(g, compute(g, Engine::FatTree), hosts, top_first);
  std::printf("top switches a permutation crosses: ftree %zu of 64\n", ftree);
  EXPECT_GE(ftree, 60u);
  // The old choice: candidates[lid % count] at every level picks by the
  // same digit everywhere, so paths converge on a few top switches.
  Routes same_digit = compute(g, Engine::MinHop);
  for (std::size_t u = 0; u < g.nodes.size(); ++u) {
    if (!g.nodes[u].is_switch || u >= static_cast<std::size_t>(top_first)) continue;
    for (std::uint16_t lid = 1; lid <= hosts; ++lid) {
      const std::uint8_t out = same_digit.lft[u][lid];
      if (out > 4) same_digit.lft[u][lid] = static_cast<std::uint8_t>(5 + lid % 4);
    }
  }
  const std::size_t old = top_switches_used(g, same_digit, hosts, top_first);
  std::printf("the same digit at every level: %zu of 64\n", old);
  EXPECT_LE(old, 8u);
}

TEST(RoutingEngines, UpDownIsLoopFreeAndNeverTurnsDownThenUpOnATorus) {
  const Graph g = torus(4, 2);
  EXPECT_FALSE(is_fat_tree(g));
  EXPECT_EQ(compute(g, Engine::Auto).engine, Engine::MinHop);
  const RouteCheck updn = check_routes(g, compute(g, Engine::UpDown));
  EXPECT_EQ(updn.unreachable, 0u);
  EXPECT_EQ(updn.loops, 0u);
  EXPECT_EQ(updn.down_then_up, 0u);
  // Minhop takes the shortest ways, and on a torus they turn down-then-up:
  // the check can fail.
  const RouteCheck minhop = check_routes(g, compute(g, Engine::MinHop));
  EXPECT_EQ(minhop.longer_than_shortest, 0u);
  std::printf("minhop on the torus: %zu of %zu paths turn down then up\n", minhop.down_then_up, minhop.pairs);
  EXPECT_GT(minhop.down_then_up, 0u);
}

TEST(RoutingEngines, IrregularGraphAndDownLinks) {
  // A ring of 6 switches with two chords and one host each; one ring link
  // missing (down): everything is still reached, loop-free, by every engine.
  Graph g;
  for (int h = 0; h < 6; ++h) g.nodes.push_back({false, static_cast<std::uint16_t>(h + 1), {}});
  for (int s = 0; s < 6; ++s) g.nodes.push_back({true, static_cast<std::uint16_t>(100 + s), {}});
  for (int h = 0; h < 6; ++h) g.connect(h, 1, 6 + h, 1);
  for (int s = 0; s < 5; ++s) g.connect(6 + s, 2, 6 + (s + 1) % 6, 3);
  g.connect(6, 4, 9, 4);
  g.connect(7, 5, 10, 5);
  for (Engine e : {Engine::MinHop, Engine::UpDown, Engine::FatTree}) expect_sound(g, e, e != Engine::UpDown);
  const Routes r = compute(g, Engine::MinHop);
  EXPECT_EQ(r.lft[6][100], 0);  // a switch's own LID: its management port
}

TEST(RoutingEngines, NamesParseAndUnknownIsRefused) {
  Engine e = Engine::Auto;
  EXPECT_TRUE(parse_engine("updn", &e));
  EXPECT_EQ(e, Engine::UpDown);
  EXPECT_FALSE(parse_engine("lash", &e));
  EXPECT_EQ(engine_names(), "auto, minhop, ftree, updn");
}
