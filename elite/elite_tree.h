// The shape of an Elite network: a quaternary fat tree of 8-port Elite
// switches. Two things live here, both pure (no SystemC, no fabric):
//
//  - build_tree(N): the tree the scenario helper `elite_fat_tree { nodes: N }`
//    generates for any node count;
//  - place(wiring): the level and subtree of every Elite switch, and the Elan
//    node id of every node, derived from how switches and nodes are wired
//    (generated or explicit), with the rule broken when the wiring is not a
//    quaternary fat tree.
//
// Numbering (the same for generated and hand-wired trees):
//  - Level 0 switches (leaves) have nodes on their down ports; a level-L
//    switch has level L-1 switches on its down ports. The top level is
//    levels-1; levels = max(1, ceil(log4 N)).
//  - Ports 1..4 go down, ports 5..8 go up. A level-L switch covers a subtree
//    of 4^(L+1) node positions starting at its `base`; down port q+1 leads to
//    the 4^L positions base + q*4^L .. base + (q+1)*4^L - 1. So the down port
//    toward node d is digit L of d (base 4), plus 1.
//  - A node's Elan node id is its leaf position: base of its leaf switch plus
//    (down port - 1). Ids must be exactly 0..N-1.
//  - Generated trees follow the k-ary n-tree wiring of the `fat_tree` helper
//    with k = 4: switch index t at level L is n-1 base-4 digits; its up port
//    5+u reaches the level L+1 switch whose index is t with digit L set to u,
//    on that switch's down port (digit L of t) + 1. Switch t at level L
//    exists only when its subtree holds a node (first position
//    (t / 4^L) * 4^(L+1) < N), so a partial tree keeps full bisection for
//    the nodes it has and no switch without nodes below it. Switches are
//    named el<L>_<t>, links "<lower>--<upper>".
#pragma once
#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace nicsim::elite {

inline constexpr std::uint32_t kArity = 4;        // down ports = up ports per switch
inline constexpr std::uint32_t kPorts = 8;        // Elite: 8 bidirectional ports
inline constexpr std::uint32_t kFirstUpPort = 5;  // ports 1..4 down, 5..8 up
inline constexpr std::uint32_t kVcs = 2;          // virtual channels per link
// QsNet's largest machines had 4096 nodes (6 levels of Elite switches).
inline constexpr std::uint32_t kMaxNodes = 4096;
// Defaults of links that touch an Elite switch (when neither link_defaults
// nor the link sets them): 400 MB/s per direction, the 2 virtual channels.
inline constexpr const char* kLinkBandwidth = "400MB/s";

// max(1, ceil(log4 nodes)).
std::uint32_t levels_for(std::uint32_t nodes);
// 4^e.
inline std::uint64_t pow4(std::uint32_t e) { return std::uint64_t{1} << (2 * e); }

// ------------------------------------------------------------ generated tree
struct TreeSwitch {
  std::string name;  // el<level>_<index>
  std::uint32_t level = 0;
  std::uint32_t index = 0;  // t: n-1 base-4 digits
};

struct TreeLink {
  bool lower_is_node = false;  // lower end: node `lower`, else switch `lower`
  std::uint32_t lower = 0;
  std::uint32_t lower_port = 1;
  std::uint32_t upper = 0;  // switch index into Tree::switches
  std::uint32_t upper_port = 1;
};

struct Tree {
  std::uint32_t nodes = 0;
  std::uint32_t levels = 0;
  std::vector<TreeSwitch> switches;  // level 0 first, index order within a level
  std::vector<TreeLink> links;       // node links first (node order), then level by level
};

// The tree for `nodes` (1..kMaxNodes) nodes; node i is on leaf i/4, port i%4+1.
Tree build_tree(std::uint32_t nodes);

// --------------------------------------------------- placement from a wiring
// What is on the other side of one Elite switch port.
struct Peer {
  enum class Kind : std::uint8_t { None, Node, Elite, Other } kind = Kind::None;
  std::uint32_t index = 0;  // node index, Elite switch index (into Wiring::ports), or other device
  std::uint32_t port = 0;   // the peer's port
  std::uint32_t link = 0;   // the link (caller's numbering), for error reports
};

struct Wiring {
  std::vector<std::array<Peer, kPorts>> ports;  // per Elite switch, ports 1..8 at [0..7]
  std::uint32_t node_count = 0;                 // nodes in the scenario (any kind)
};

struct Place {
  std::uint32_t level = 0;
  std::uint32_t base = 0;  // first node position of its subtree
};

struct Placement {
  std::uint32_t nodes = 0;  // N: Elan node ids are 0..N-1
  std::uint32_t levels = 0;
  std::vector<Place> switches;        // per Elite switch
  std::vector<std::int64_t> node_id;  // per node; -1: not on the Elite network
};

struct PlaceError {
  enum class Subject { Switch, Link, Node } subject = Subject::Switch;
  std::uint32_t index = 0;  // Elite switch index, link number or node index
  std::string message;
};

// Places every Elite switch and node; false and *error on a wiring that is
// not a quaternary fat tree (see the rules at the top of this file).
bool place(const Wiring& wiring, const std::vector<std::string>& switch_names,
           const std::vector<std::string>& node_names, Placement* out, PlaceError* error);

}  // namespace nicsim::elite
