// Topology helpers of scenario files (star, leaf_spine, fat_tree, and those
// network kinds register): turns a shape into named hosts, switches and
// port-to-port links. It knows nothing of parameters or source locations.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

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

// Hard caps on generated hosts and links, so that a typo like `k: 40 n: 6`
// is an error rather than an attempt to allocate billions of devices. The
// binary fat tree with kMaxHosts hosts (k 2, n 16) has exactly kMaxLinks.
inline constexpr std::uint64_t kMaxHosts = 65536;
inline constexpr std::uint64_t kMaxLinks = 1 << 20;

struct Generated {
  std::vector<std::string> hosts;
  std::vector<Switch> switches;
  std::vector<Link> links;
  // What a helper may generate: the caps above, or less where the caller
  // says so (the loader's LoadLimits). Helpers check before they generate.
  std::uint64_t max_hosts = kMaxHosts;
  std::uint64_t max_links = kMaxLinks;
};

// What is wrong with a shape: `field` names the offending field of the shape
// message (empty = the shape as a whole).
struct ShapeError {
  std::string field;
  std::string message;
};

// For topology helpers, before they generate: whether `links` links fit
// g.max_links; if not, *error says so, naming the shape.
bool links_fit(const Generated& g, std::uint64_t links, const std::string& shape, ShapeError* error);

// For topology helpers: hosts prefix0..prefix<count-1>, and a link from `a`
// (the lower end) to `b` named "<a>--<b><suffix>".
void add_hosts(Generated* g, const std::string& prefix, std::uint64_t count);
void connect(Generated* g, End a, End b, const std::string& suffix);

}  // namespace nicsim::topology
