// Topology helpers of scenario files (star, leaf_spine, fat_tree): turns a
// shape into named hosts, switches and port-to-port links. Internal to the
// scenario loader; it knows nothing of parameters or source locations.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "scenario.pb.h"

namespace nicsim::topology {

struct Switch {
  std::string name;
  std::uint32_t ports = 0;  // exactly the ports its links use
};

struct End {
  bool host = false;        // host index, else switch index
  std::uint32_t index = 0;  // into Generated::hosts or Generated::switches
  std::uint32_t port = 1;
};

struct Link {
  std::string name;  // "<lower>--<upper>", "#<copy>" when there are parallel links
  End a;             // the lower-level end (host or lower switch)
  End b;             // the upper-level end
};

struct Generated {
  std::vector<std::string> hosts;
  std::vector<Switch> switches;
  std::vector<Link> links;
};

// What is wrong with a shape: `field` names the offending field of the shape
// message (empty = the shape as a whole).
struct ShapeError {
  std::string field;
  std::string message;
};

// Hard cap on generated hosts, so that a typo like `k: 40 n: 6` is an error
// rather than an attempt to allocate billions of devices.
inline constexpr std::uint64_t kMaxHosts = 65536;

// Fills `out` (host names use `host_prefix`). Returns false and sets *error
// when the shape's numbers are out of range. The shape must be set.
bool expand(const nicsim::scenario::Topology& topo, const std::string& host_prefix, Generated* out, ShapeError* error);

}  // namespace nicsim::topology
