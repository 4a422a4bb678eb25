// Partition blocks: how a world is split into parts that may run in
// different processes (docs/partition.md).
//
// A scenario names how many blocks it has (partition.blocks, default 1) and
// may pin devices to blocks; the rest are placed by a deterministic graph
// growing that balances load and keeps short links inside blocks, so that
// the links it cuts are the longest. Nodes and switches are never split:
// only links are cut. Results depend on the scenario, its seed and its
// blocks, never on how many processes run them.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "core/units.h"
#include "scenario/loader.h"

namespace nicsim {

struct PartitionPlan {
  std::uint32_t blocks = 1;
  // By device id: nodes in scenario order, then switches.
  std::vector<std::uint32_t> device_block;
  // Scenario link indices whose two ends are in different blocks.
  std::vector<std::uint32_t> cut_links;
  // The load each block carries (sum of its devices' weights).
  std::vector<double> block_load;
  // How far one block can run ahead of another: the smallest propagation
  // delay of a cut link, or the management network's latency if smaller
  // (kTickMax with one block).
  Tick lookahead = kTickMax;

  std::uint32_t node_block(std::uint32_t node) const { return device_block.at(node); }
  // The spread of the load: the heaviest block over the mean (1 is even).
  double imbalance() const;
};

// Places every device of `scenario` in a block. Throws ScenarioError (at
// the partition's location) when a cut link has no propagation delay: a
// block could then not run ahead of its neighbour at all.
PartitionPlan plan_partition(const Scenario& scenario);

// One line for the summary: "4 blocks, 12 cut links, lookahead 5 ns,
// imbalance 1.03".
std::string describe(const PartitionPlan& plan);
// A line per block, for `nicsim validate`: "block 0: 32 nodes, 24
// switches, load 280" (`nodes`: the scenario's node count; devices are
// numbered nodes first).
std::string describe_blocks(const PartitionPlan& plan, std::size_t nodes);

}  // namespace nicsim
