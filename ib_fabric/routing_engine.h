// Unicast routing engines for InfiniBand fabrics, on an abstract graph both
// users build: the world's static routing (from the devices it wired) and the
// subnet manager (from the graph its sweep discovered). Each computes one
// linear forwarding table per switch:
//
//  - minhop: shortest paths; among equal-cost ports the one with the fewest
//    routes assigned so far (as OpenSM's minhop balances);
//  - ftree: shortest paths on a fat tree; going up, the port is chosen by
//    the destination's digits level by level (D-mod-k: at level l, digit
//    (index / stride_l) mod up-ports, the index being the destination's place
//    in the tree), so that the paths to different destinations spread over
//    the top of the tree; going down there is one way;
//  - updn: up*/down* for any topology: ranks by distance from a root switch,
//    and no route turns from a down link to an up link, so there is no cycle
//    of channel dependencies (deadlock-free without VLs); balanced as minhop
//    among the legal shortest ways.
//
// auto picks ftree when the graph is a fat tree (every switch-to-switch link
// joins adjacent levels, counted from the switches the endpoints attach to)
// and minhop otherwise.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace nicsim::fabric::routing {

#define NICSIM_ROUTING_ENGINES(X)                                          \
  X(Auto, "auto", "ftree on a fat tree, minhop otherwise")                 \
  X(MinHop, "minhop", "shortest paths, equal-cost ports balanced by load") \
  X(FatTree, "ftree", "fat tree: up by destination digits (D-mod-k)")      \
  X(UpDown, "updn", "up*/down*: deadlock-free on any topology")
enum class Engine : std::uint8_t {
#define NICSIM_X(name, text, doc) name,
  NICSIM_ROUTING_ENGINES(NICSIM_X)
#undef NICSIM_X
};
const char* engine_name(Engine e);
bool parse_engine(std::string_view text, Engine* out);  // false: unknown name
std::string engine_names();                             // "auto, minhop, ftree, updn"

inline constexpr std::uint8_t kNoRoute = 0xff;

// Nodes are switches and channel adapters; a link joins (node, port) pairs.
// Port numbers index `ports` (ports[0] is a switch's management port, never
// linked). A node with lid 0 is not a destination.
struct Graph {
  struct Link {
    int peer = -1;  // -1: nothing (or the link is down)
    std::uint32_t peer_port = 0;
  };
  struct Node {
    bool is_switch = false;
    std::uint16_t lid = 0;
    std::vector<Link> ports;
  };
  std::vector<Node> nodes;
  void connect(int a, std::uint32_t pa, int b, std::uint32_t pb);
};

struct Routes {
  Engine engine = Engine::MinHop;  // the one used (never Auto)
  // By node index: a switch's out port for each LID up to the highest
  // (kNoRoute: unreachable; 0: the switch itself); empty for adapters.
  std::vector<std::vector<std::uint8_t>> lft;
};

// `keep`: by node index, the switches whose tables are wanted (the rest are
// computed through, for the balance, but not stored: a process of a run
// over several keeps only its own switches'); empty keeps every one.
Routes compute(const Graph& g, Engine engine, const std::vector<bool>& keep = {});
bool is_fat_tree(const Graph& g);

// What a set of tables does, for tests and benchmarks: following the LFTs
// from every switch-attached adapter to every destination.
struct RouteCheck {
  std::size_t pairs = 0, unreachable = 0, loops = 0;
  std::size_t longer_than_shortest = 0;  // paths above the graph distance
  std::size_t down_then_up = 0;          // updn turns (ranked as compute's updn does)
  // Per switch-to-switch port, the destinations routed through it; the
  // largest excess over the mean of the up ports of one switch.
  double max_up_port_excess = 0;
};
RouteCheck check_routes(const Graph& g, const Routes& r);

}  // namespace nicsim::fabric::routing
