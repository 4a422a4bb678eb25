// The Elite fat tree's shape: levels and switch counts for any node count,
// placement (levels, subtree bases, node ids) derived from a wiring, and the
// rules a hand-made wiring must follow.
#include <gtest/gtest.h>

#include "elite/elite_tree.h"

using namespace nicsim::elite;

namespace {

Wiring wiring_of(const Tree& t) {
  Wiring w;
  w.node_count = t.nodes;
  w.ports.resize(t.switches.size());
  for (std::uint32_t i = 0; i < t.links.size(); ++i) {
    const TreeLink& l = t.links[i];
    w.ports[l.upper][l.upper_port - 1] = {l.lower_is_node ? Peer::Kind::Node : Peer::Kind::Elite, l.lower, l.lower_port,
                                          i};
    if (!l.lower_is_node) w.ports[l.lower][l.lower_port - 1] = {Peer::Kind::Elite, l.upper, l.upper_port, i};
  }
  return w;
}

std::vector<std::string> names(std::size_t n, const char* prefix) {
  std::vector<std::string> v;
  for (std::size_t i = 0; i < n; ++i) v.push_back(prefix + std::to_string(i));
  return v;
}

TEST(EliteTree, LevelsAreCeilLog4) {
  EXPECT_EQ(levels_for(1), 1u);
  EXPECT_EQ(levels_for(4), 1u);
  EXPECT_EQ(levels_for(5), 2u);
  EXPECT_EQ(levels_for(16), 2u);
  EXPECT_EQ(levels_for(17), 3u);
  EXPECT_EQ(levels_for(64), 3u);
  EXPECT_EQ(levels_for(65), 4u);
  EXPECT_EQ(levels_for(4096), 6u);
}

TEST(EliteTree, SwitchesOnlyWhereNeeded) {
  // 64 nodes: 3 full levels of 16 switches; 64 node links + 2 x 64 up links.
  Tree t64 = build_tree(64);
  EXPECT_EQ(t64.levels, 3u);
  EXPECT_EQ(t64.switches.size(), 48u);
  EXPECT_EQ(t64.links.size(), 64u + 128u);
  EXPECT_EQ(t64.switches[0].name, "el0_0");
  EXPECT_EQ(t64.switches[47].name, "el2_15");
  // 5 nodes: 2 leaves, each with 4 up links to the 4 top switches.
  Tree t5 = build_tree(5);
  EXPECT_EQ(t5.switches.size(), 6u);
  EXPECT_EQ(t5.links.size(), 5u + 8u);
  // 17 nodes: 5 leaves; level 1 only over subtrees 0-15 and 16-31 (8
  // switches); all 16 top switches.
  Tree t17 = build_tree(17);
  EXPECT_EQ(t17.levels, 3u);
  EXPECT_EQ(t17.switches.size(), 5u + 8u + 16u);
  EXPECT_EQ(t17.links.size(), 17u + 5u * 4 + 8u * 4);
  // 1 node: one switch.
  Tree t1 = build_tree(1);
  EXPECT_EQ(t1.switches.size(), 1u);
  ASSERT_EQ(t1.links.size(), 1u);
  EXPECT_EQ(t1.links[0].upper_port, 1u);
}

TEST(EliteTree, PlacementFollowsBase4Digits) {
  for (std::uint32_t n : {1u, 3u, 5u, 16u, 17u, 64u, 100u, 257u}) {
    Tree t = build_tree(n);
    Wiring w = wiring_of(t);
    Placement p;
    PlaceError e;
    ASSERT_TRUE(place(w, names(t.switches.size(), "s"), names(n, "h"), &p, &e)) << n << ": " << e.message;
    EXPECT_EQ(p.nodes, n);
    EXPECT_EQ(p.levels, t.levels);
    for (std::uint32_t i = 0; i < n; ++i) EXPECT_EQ(p.node_id[i], i) << n;
    for (std::uint32_t s = 0; s < t.switches.size(); ++s) {
      const TreeSwitch& ts = t.switches[s];
      EXPECT_EQ(p.switches[s].level, ts.level);
      EXPECT_EQ(p.switches[s].base, ts.index / pow4(ts.level) * pow4(ts.level + 1)) << ts.name;
    }
  }
}

// One leaf switch with nodes on the given down ports.
Wiring leaf(std::initializer_list<std::uint32_t> ports, std::uint32_t node_count) {
  Wiring w;
  w.node_count = node_count;
  w.ports.resize(1);
  std::uint32_t node = 0, link = 0;
  for (std::uint32_t p : ports) w.ports[0][p - 1] = {Peer::Kind::Node, node++, 1, link++};
  return w;
}

std::string error_of(const Wiring& w) {
  Placement p;
  PlaceError e;
  EXPECT_FALSE(place(w, names(w.ports.size(), "s"), names(w.node_count, "h"), &p, &e));
  return e.message;
}

TEST(EliteTree, WiringRules) {
  EXPECT_NE(error_of(leaf({1, 5}, 2)).find("node 'h1' is on up port 5 of Elite switch 's0'"), std::string::npos);
  EXPECT_NE(error_of(leaf({1, 3}, 2)).find("node 'h1' is at position 2 but position 1 is empty"), std::string::npos);
  Wiring ib = leaf({1, 2}, 2);
  ib.ports[0][4] = {Peer::Kind::Other, 0, 1, 7};
  EXPECT_NE(error_of(ib).find("linked to an IB switch"), std::string::npos);
  // Two switches joined down port to down port.
  Wiring dd = leaf({1}, 2);
  dd.ports.resize(2);
  dd.ports[1][0] = {Peer::Kind::Node, 1, 1, 1};
  dd.ports[0][3] = {Peer::Kind::Elite, 1, 4, 2};
  dd.ports[1][3] = {Peer::Kind::Elite, 0, 4, 2};
  EXPECT_NE(error_of(dd).find("link joins down port 4 of Elite switch 's0' to down port 4 of 's1'"), std::string::npos);
  // Two separate leaves: both claim positions from 0.
  Wiring two = leaf({1}, 2);
  two.ports.resize(2);
  two.ports[1][0] = {Peer::Kind::Node, 1, 1, 1};
  EXPECT_NE(error_of(two).find("both sit at Elite position 0"), std::string::npos);
  // A switch with nothing below it.
  Wiring empty;
  empty.node_count = 0;
  empty.ports.resize(1);
  EXPECT_NE(error_of(empty).find("has nothing on its down ports 1-4"), std::string::npos);
}

}  // namespace
