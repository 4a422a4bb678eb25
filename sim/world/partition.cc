#include "world/partition.h"

#include <fmt/format.h>

#include <algorithm>
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
  Graph g{std::vector<std::vector<Edge>>(n), std::vector<double>(n)};
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
// nodes (so that a block on a tree fills the subtrees it reaches, nodes
// included, before it climbs), then the largest gain (its links into the
// block less its links to switches not yet placed: what taking it saves
// in cut links; a node follows its switch, so it costs nothing), then the
// lowest device id.
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

class Grower {
 public:
  static constexpr std::uint32_t kNone = ~0u;
  static constexpr std::uint32_t kLater = kNone - 1;  // placed after the growing (place_tops)

  Grower(const Graph& g, std::vector<std::uint32_t>& block_of) : g_(g), block_of_(block_of) {}

  // Grows block `b` from what is pinned to it (or the lowest unplaced
  // device) until its load reaches `target`; returns the load.
  double grow(std::uint32_t b, double target) {
    queue_ = {};
    double load = 0;
    for (std::uint32_t d = 0; d < block_of_.size(); ++d)
      if (block_of_[d] == b) load += absorb(d, b);
    while (load < target) {
      const std::uint32_t d = next_device(b);
      if (d == kNone) break;
      block_of_[d] = b;
      load += absorb(d, b);
    }
    return load;
  }

 private:
  Candidate rate(std::uint32_t d, std::uint32_t b) const {
    Candidate c{0, kTickMax, g_.height[d], d};
    for (const Edge& e : g_.adj[d]) {
      if (block_of_[e.peer] == b) {
        ++c.gain;
        c.shortest = std::min(c.shortest, e.delay);
      } else if (block_of_[e.peer] == kNone && g_.height[e.peer] != 0) {
        --c.gain;
      }
    }
    return c;
  }
  double absorb(std::uint32_t d, std::uint32_t b) {
    for (const Edge& e : g_.adj[d])
      if (block_of_[e.peer] == kNone) queue_.push(rate(e.peer, b));
    return g_.weight[d];
  }
  // The best unplaced neighbour (entries rated before their neighbours moved
  // are rated again), else the lowest unplaced device: a block may span
  // parts the links do not join.
  std::uint32_t next_device(std::uint32_t b) {
    while (!queue_.empty()) {
      const Candidate c = queue_.top();
      queue_.pop();
      if (block_of_[c.device] != kNone) continue;
      const Candidate now = rate(c.device, b);
      if (now.gain == c.gain && now.shortest == c.shortest) return c.device;
      queue_.push(now);
    }
    for (std::uint32_t d = 0; d < block_of_.size(); ++d)
      if (block_of_[d] == kNone) return d;
    return kNone;
  }

  const Graph& g_;
  std::vector<std::uint32_t>& block_of_;
  std::priority_queue<Candidate> queue_;
};

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

namespace {

// The top of a tree: the switches farthest from any node, when that is two
// hops or more. Grown blocks leave them alone (each takes whole subtrees),
// and they are placed afterwards, each where it has the most links, else
// where the load is least, so that every block takes its share of them.
void defer_tops(const Graph& g, std::vector<std::uint32_t>& block_of) {
  std::uint32_t top = 0;
  for (std::uint32_t h : g.height)
    if (h != ~0u) top = std::max(top, h);
  if (top < 2) return;
  for (std::uint32_t d = 0; d < block_of.size(); ++d)
    if (g.height[d] == top && block_of[d] == Grower::kNone) block_of[d] = Grower::kLater;
}

void place_tops(const Graph& g, PartitionPlan& plan) {
  std::vector<std::uint32_t> links(plan.blocks);
  for (std::uint32_t d = 0; d < plan.device_block.size(); ++d) {
    if (plan.device_block[d] != Grower::kLater) continue;
    std::fill(links.begin(), links.end(), 0);
    for (const Edge& e : g.adj[d])
      if (plan.device_block[e.peer] < plan.blocks) ++links[plan.device_block[e.peer]];
    std::uint32_t best = 0;
    for (std::uint32_t b = 1; b < plan.blocks; ++b)
      if (links[b] > links[best] || (links[b] == links[best] && plan.block_load[b] < plan.block_load[best])) best = b;
    plan.device_block[d] = best;
    plan.block_load[best] += g.weight[d];
  }
}

}  // namespace

PartitionPlan plan_partition(const Scenario& s) {
  PartitionPlan plan;
  plan.blocks = s.partition.blocks;
  const Graph g = build_graph(s);
  plan.device_block.assign(g.weight.size(), Grower::kNone);
  for (const PartitionSpec::Pin& p : s.partition.pins) plan.device_block.at(p.device) = p.block;
  if (plan.blocks > 1) defer_tops(g, plan.device_block);
  double remaining = 0;
  for (std::uint32_t d = 0; d < g.weight.size(); ++d)
    if (plan.device_block[d] != Grower::kLater) remaining += g.weight[d];
  plan.block_load.assign(plan.blocks, 0.0);
  Grower grower(g, plan.device_block);
  for (std::uint32_t b = 0; b < plan.blocks; ++b) {
    // Each block aims at an even share of what the blocks after it leave;
    // the last takes the rest.
    const double target = b + 1 == plan.blocks ? remaining + 1 : remaining / (plan.blocks - b);
    plan.block_load[b] = grower.grow(b, target);
    remaining -= plan.block_load[b];
  }
  place_tops(g, plan);
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
    ++(d < nodes ? node_count : switch_count)[plan.device_block[d]];
  std::string text;
  for (std::uint32_t b = 0; b < plan.blocks; ++b)
    text += fmt::format("block {}: {} nodes, {} switches, load {:g}\n", b, node_count[b], switch_count[b],
                        plan.block_load[b]);
  return text;
}

}  // namespace nicsim
