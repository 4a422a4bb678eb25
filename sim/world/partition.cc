#include "world/partition.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <queue>

namespace nicsim {

namespace {

struct Edge {
  std::uint32_t peer;
  Tick delay;
};

struct Graph {
  std::vector<std::vector<Edge>> adj;  // by device id
  std::vector<double> weight;
  // Hops to the nearest node (0 for a node; a switch no node reaches has
  // the largest): on a tree, a switch's level.
  std::vector<std::uint32_t> height;
};

void measure_heights(Graph& g, std::size_t nodes) {
  g.height.assign(g.adj.size(), ~0u);
  std::queue<std::uint32_t> frontier;
  for (std::uint32_t d = 0; d < nodes; ++d) {
    g.height[d] = 0;
    frontier.push(d);
  }
  while (!frontier.empty()) {
    const std::uint32_t d = frontier.front();
    frontier.pop();
    for (const Edge& e : g.adj[d])
      if (g.height[e.peer] == ~0u) {
        g.height[e.peer] = g.height[d] + 1;
        frontier.push(e.peer);
      }
  }
}

std::uint32_t device_of(const Scenario& s, const LinkEnd& end) {
  return end.kind == LinkEnd::Kind::Node ? end.index : static_cast<std::uint32_t>(s.nodes.size()) + end.index;
}

// Load: where the scenario gives no weight, a device's port count (its
// share of the fabric's work) plus one for the device itself.
Graph build_graph(const Scenario& s) {
  const std::size_t n = s.nodes.size() + s.switches.size();
  Graph g{std::vector<std::vector<Edge>>(n), std::vector<double>(n), {}};
  for (std::size_t i = 0; i < s.nodes.size(); ++i) g.weight[i] = 1.0 + s.nodes[i].ports;
  for (std::size_t j = 0; j < s.switches.size(); ++j) g.weight[s.nodes.size() + j] = 1.0 + s.switches[j].ports;
  for (const PartitionSpec::Weight& w : s.partition.weights) g.weight.at(w.device) = w.weight;
  for (const LinkSpec& l : s.links) {
    const std::uint32_t a = device_of(s, l.a), b = device_of(s, l.b);
    const Tick delay = l.params.time("delay");
    g.adj[a].push_back({b, delay});
    g.adj[b].push_back({a, delay});
  }
  measure_heights(g, s.nodes.size());
  return g;
}

// A candidate for the growing block: the shortest link into the block
// first (so the links cut are the long ones), then the one nearest the
// nodes (so that on a tree a block fills the subtrees it reaches before it
// climbs), then the largest gain (its links into the block less its links
// to switches the block has not reached: a node costs nothing, it is
// reached through its switch), then the lowest device id.
struct Candidate {
  int gain;
  Tick shortest;
  std::uint32_t height;
  std::uint32_t device;
  bool operator<(const Candidate& o) const {  // priority_queue: the top is the largest
    if (shortest != o.shortest) return shortest > o.shortest;
    if (height != o.height) return height > o.height;
    if (gain != o.gain) return gain < o.gain;
    return device > o.device;
  }
};

inline constexpr std::uint32_t kNone = ~0u;

// Grows each block's nodes through the switches: a block passes through
// switches (whichever block they end up in) to reach the nodes nearest the
// ones it holds, and takes nodes until their load reaches its target.
class NodeGrower {
 public:
  NodeGrower(const Graph& g, std::size_t nodes, std::vector<std::uint32_t>& block_of)
      : g_(g), nodes_(nodes), block_of_(block_of), reached_(block_of.size(), kNone) {}

  // Grows block `b` from what is pinned to it (or the lowest unplaced
  // node) until its nodes' load reaches `target`; returns that load.
  double grow(std::uint32_t b, double target) {
    queue_ = {};
    double load = 0;
    for (std::uint32_t d = 0; d < block_of_.size(); ++d)
      if (block_of_[d] == b) load += enter(d, b);
    while (load < target) {
      const std::uint32_t d = next_device(b);
      if (d == kNone) break;
      if (is_node(d)) block_of_[d] = b;
      load += enter(d, b);
    }
    return load;
  }

 private:
  bool is_node(std::uint32_t d) const { return d < nodes_; }
  bool inside(std::uint32_t d, std::uint32_t b) const { return is_node(d) ? block_of_[d] == b : reached_[d] == b; }
  bool open(std::uint32_t d, std::uint32_t b) const { return is_node(d) ? block_of_[d] == kNone : reached_[d] != b; }
  Candidate rate(std::uint32_t d, std::uint32_t b) const {
    Candidate c{0, kTickMax, g_.height[d], d};
    for (const Edge& e : g_.adj[d]) {
      if (inside(e.peer, b)) {
        ++c.gain;
        c.shortest = std::min(c.shortest, e.delay);
      } else if (!is_node(e.peer) && open(e.peer, b)) {
        --c.gain;
      }
    }
    return c;
  }
  // The node's load, or 0 for a switch the block passes through.
  double enter(std::uint32_t d, std::uint32_t b) {
    if (!is_node(d)) reached_[d] = b;
    for (const Edge& e : g_.adj[d])
      if (open(e.peer, b)) queue_.push(rate(e.peer, b));
    return is_node(d) ? g_.weight[d] : 0.0;
  }
  // The best open neighbour (entries rated before their neighbours moved
  // are rated again), else the lowest unplaced node: a block may span
  // parts the links do not join.
  std::uint32_t next_device(std::uint32_t b) {
    while (!queue_.empty()) {
      const Candidate c = queue_.top();
      queue_.pop();
      if (!open(c.device, b)) continue;
      const Candidate now = rate(c.device, b);
      if (now.gain == c.gain && now.shortest == c.shortest) return c.device;
      queue_.push(now);
    }
    for (std::uint32_t d = 0; d < nodes_; ++d)
      if (block_of_[d] == kNone) return d;
    return kNone;
  }

  const Graph& g_;
  std::size_t nodes_;
  std::vector<std::uint32_t>& block_of_;
  std::vector<std::uint32_t> reached_;  // by device: the last block that passed through a switch
  std::priority_queue<Candidate> queue_;
};

// Which block a switch joins: among the blocks it links to, the one behind
// its shortest link, then one its load still fits in (`cap`), then among
// those that fit the one it has most links into, among those that do not
// the least loaded; then the lowest. A switch linked to no block joins the
// least loaded.
std::uint32_t choose_block(const Graph& g, std::uint32_t sw, const PartitionPlan& plan, double cap) {
  struct Pull {
    std::uint32_t links = 0;
    Tick shortest = kTickMax;
  };
  std::vector<Pull> pull(plan.blocks);
  for (const Edge& e : g.adj[sw])
    if (const std::uint32_t b = plan.device_block[e.peer]; b < plan.blocks) {
      ++pull[b].links;
      pull[b].shortest = std::min(pull[b].shortest, e.delay);
    }
  const auto fits = [&](std::uint32_t b) { return plan.block_load[b] + g.weight[sw] <= cap; };
  const auto better = [&](std::uint32_t a, std::uint32_t b) {  // a before b
    if ((pull[a].links > 0) != (pull[b].links > 0)) return pull[a].links > 0;
    if (pull[a].shortest != pull[b].shortest) return pull[a].shortest < pull[b].shortest;
    if (fits(a) != fits(b)) return fits(a);
    const bool more_links = pull[a].links > pull[b].links, less_load = plan.block_load[a] < plan.block_load[b];
    if (pull[a].links == pull[b].links) return less_load;
    if (plan.block_load[a] == plan.block_load[b] || fits(a)) return more_links;
    return less_load;
  };
  std::uint32_t best = 0;
  for (std::uint32_t b = 1; b < plan.blocks; ++b)
    if (better(b, best)) best = b;
  return best;
}

// The switches, nearest the nodes first (on a tree: level by level from
// the leaves), each where choose_block puts it.
void place_switches(const Graph& g, std::size_t nodes, PartitionPlan& plan) {
  double total = 0;
  for (double w : g.weight) total += w;
  // A little above the even share, so that a switch may follow its links
  // where the share is all but reached.
  const double cap = total / plan.blocks * 1.02;
  std::vector<std::uint32_t> order;
  for (std::uint32_t d = static_cast<std::uint32_t>(nodes); d < plan.device_block.size(); ++d)
    if (plan.device_block[d] == kNone) order.push_back(d);
  std::stable_sort(order.begin(), order.end(),
                   [&](std::uint32_t a, std::uint32_t b) { return g.height[a] < g.height[b]; });
  for (std::uint32_t d : order) {
    const std::uint32_t b = choose_block(g, d, plan, cap);
    plan.device_block[d] = b;
    plan.block_load[b] += g.weight[d];
  }
}

void find_cuts(const Scenario& s, PartitionPlan& plan) {
  plan.lookahead = kTickMax;
  for (std::uint32_t i = 0; i < s.links.size(); ++i) {
    const LinkSpec& l = s.links[i];
    if (plan.device_block[device_of(s, l.a)] == plan.device_block[device_of(s, l.b)]) continue;
    const Tick delay = l.params.time("delay");
    if (delay == 0)
      throw ScenarioError(
          l.loc, fmt::format("link {} joins blocks {} and {} but has no propagation delay: a "
                             "cut link needs link.delay > 0 (pin its ends to one block)",
                             l.name, plan.device_block[device_of(s, l.a)], plan.device_block[device_of(s, l.b)]));
    plan.cut_links.push_back(i);
    plan.lookahead = std::min(plan.lookahead, delay);
  }
  if (!plan.cut_links.empty() || plan.blocks > 1) {
    const Tick mgmt = s.mgmt.time("latency");
    if (mgmt == 0)
      throw ScenarioError(s.partition.loc,
                          "a world of several blocks needs mgmt.latency > 0 (the management "
                          "network crosses blocks)");
    plan.lookahead = std::min(plan.lookahead, mgmt);
  }
}

}  // namespace

double PartitionPlan::imbalance() const {
  double total = 0, most = 0;
  for (double l : block_load) {
    total += l;
    most = std::max(most, l);
  }
  return total > 0 ? most * static_cast<double>(block_load.size()) / total : 1.0;
}

PartitionPlan plan_partition(const Scenario& s) {
  PartitionPlan plan;
  plan.blocks = s.partition.blocks;
  const Graph g = build_graph(s);
  const std::size_t nodes = s.nodes.size();
  plan.device_block.assign(g.weight.size(), kNone);
  for (const PartitionSpec::Pin& p : s.partition.pins) plan.device_block.at(p.device) = p.block;
  plan.block_load.assign(plan.blocks, 0.0);
  double remaining = 0;
  for (std::uint32_t d = 0; d < nodes; ++d) remaining += g.weight[d];
  NodeGrower grower(g, nodes, plan.device_block);
  for (std::uint32_t b = 0; b < plan.blocks; ++b) {
    // Each block aims at an even share of the nodes' load the blocks after
    // it leave; the last takes the rest.
    const double target =
        b + 1 == plan.blocks ? std::numeric_limits<double>::infinity() : remaining / (plan.blocks - b);
    plan.block_load[b] = grower.grow(b, target);
    remaining -= plan.block_load[b];
  }
  for (std::uint32_t d = static_cast<std::uint32_t>(nodes); d < plan.device_block.size(); ++d)
    if (plan.device_block[d] != kNone) plan.block_load[plan.device_block[d]] += g.weight[d];
  place_switches(g, nodes, plan);
  find_cuts(s, plan);
  return plan;
}

std::string describe(const PartitionPlan& plan) {
  if (plan.blocks == 1) return "1 block";
  return fmt::format("{} blocks, {} cut links, lookahead {}, imbalance {:.2f}", plan.blocks, plan.cut_links.size(),
                     format_time(plan.lookahead), plan.imbalance());
}

std::string describe_blocks(const PartitionPlan& plan, std::size_t nodes) {
  std::vector<std::size_t> node_count(plan.blocks), switch_count(plan.blocks);
  for (std::size_t d = 0; d < plan.device_block.size(); ++d)
    if (plan.device_block[d] < plan.blocks) ++(d < nodes ? node_count : switch_count)[plan.device_block[d]];
  std::string text;
  for (std::uint32_t b = 0; b < plan.blocks; ++b)
    text += fmt::format("block {}: {} nodes, {} switches, load {:g}\n", b, node_count[b], switch_count[b],
                        plan.block_load[b]);
  return text;
}

}  // namespace nicsim
