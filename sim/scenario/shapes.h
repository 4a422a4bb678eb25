// The core's own topology shapes (star, leaf_spine, fat_tree of
// scenario.proto's Topology). Internal to the scenario loader.
#pragma once
#include <string>

#include "scenario.pb.h"
#include "scenario/topology.h"

namespace nicsim::topology {

// Fills `out` (host names use `host_prefix`). Returns false and sets *error
// when the shape's numbers are out of range. The shape must be set.
bool expand(const nicsim::scenario::Topology& topo, const std::string& host_prefix, Generated* out, ShapeError* error);

}  // namespace nicsim::topology
