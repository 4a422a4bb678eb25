// The IB fabric's topology helpers: torus (2-D, 3-D) and dragonfly
// (ib_topologies.proto), registered as shapes of a scenario's topology.
#include <string>

#include "ib_fabric/ib_topologies.pb.h"
#include "world/network_kinds.h"

namespace nicsim::fabric {

namespace {

using topology::End;
using topology::Generated;
using topology::ShapeError;

bool fail(ShapeError* error, std::string field, std::string message) {
  *error = {std::move(field), std::move(message)};
  return false;
}

std::string torus_name(const std::vector<std::uint32_t>& c) {
  std::string name = "t";
  for (std::size_t d = 0; d < c.size(); ++d) name += (d ? "_" : "") + std::to_string(c[d]);
  return name;
}

bool expand_torus(const google::protobuf::Message& shape, const std::string& prefix, Generated* g, ShapeError* error) {
  ib::Torus t;
  t.ParseFromString(shape.SerializeAsString());
  const std::vector<std::uint32_t> dims(t.dims().begin(), t.dims().end());
  if (dims.size() < 2 || dims.size() > 3) return fail(error, "dims", "torus needs 2 or 3 dimensions");
  std::uint64_t switches = 1;
  for (std::uint32_t d : dims) {
    if (d < 2 || d > 64) return fail(error, "dims", "a torus dimension is 2 to 64 switches");
    switches *= d;
  }
  const std::uint32_t per = t.hosts_per_switch();
  if (per == 0 || per > 64) return fail(error, "hosts_per_switch", "torus needs 1 to 64 hosts per switch");
  if (switches * per > g->max_hosts)
    return fail(error, "", "torus has more than " + std::to_string(g->max_hosts) + " hosts");
  std::uint64_t links = switches * per;
  for (std::uint32_t d : dims) links += d == 2 ? switches / 2 : switches;  // a ring of 2 is one link
  if (!topology::links_fit(*g, links, "torus", error)) return false;
  topology::add_hosts(g, prefix, switches * per);
  const auto ports = static_cast<std::uint32_t>(per + 2 * dims.size());
  std::vector<std::uint32_t> c(dims.size(), 0);
  auto index = [&](const std::vector<std::uint32_t>& at) {
    std::uint32_t i = 0;
    for (std::size_t d = dims.size(); d-- > 0;) i = i * dims[d] + at[d];
    return i;
  };
  for (std::uint32_t s = 0; s < switches; ++s) {
    for (std::size_t d = 0, rest = s; d < dims.size(); rest /= dims[d], ++d)
      c[d] = static_cast<std::uint32_t>(rest % dims[d]);
    g->switches.push_back({torus_name(c), ports});
  }
  for (std::uint32_t s = 0; s < switches; ++s)
    for (std::uint32_t h = 0; h < per; ++h) topology::connect(g, {true, s * per + h, 1}, {false, s, h + 1}, "");
  for (std::uint32_t s = 0; s < switches; ++s) {
    for (std::size_t d = 0, rest = s; d < dims.size(); rest /= dims[d], ++d)
      c[d] = static_cast<std::uint32_t>(rest % dims[d]);
    for (std::size_t d = 0; d < dims.size(); ++d) {
      if (dims[d] == 2 && c[d] == 1) continue;  // one link between the two
      std::vector<std::uint32_t> next = c;
      next[d] = (c[d] + 1) % dims[d];
      const auto plus = static_cast<std::uint32_t>(per + 2 * d + 1);
      topology::connect(g, {false, s, plus}, {false, index(next), plus + 1}, "");
    }
  }
  return true;
}

bool expand_dragonfly(const google::protobuf::Message& shape, const std::string& prefix, Generated* g,
                      ShapeError* error) {
  ib::Dragonfly f;
  f.ParseFromString(shape.SerializeAsString());
  const std::uint32_t groups = f.groups(), a = f.routers_per_group(), p = f.hosts_per_router(),
                      h = f.global_links_per_router();
  if (a == 0 || a > 64) return fail(error, "routers_per_group", "dragonfly needs 1 to 64 routers per group");
  if (p == 0 || p > 64) return fail(error, "hosts_per_router", "dragonfly needs 1 to 64 hosts per router");
  if (h == 0 || h > 64)
    return fail(error, "global_links_per_router",
                "dragonfly needs 1 to 64 global links per router (its groups are joined by them)");
  if (groups < 2 || groups > a * h + 1)
    return fail(error, "groups",
                "dragonfly needs 2 to routers_per_group x global_links_per_router + 1 = " + std::to_string(a * h + 1) +
                    " groups (one global link between every two)");
  if (std::uint64_t{groups} * a * p > g->max_hosts)
    return fail(error, "", "dragonfly has more than " + std::to_string(g->max_hosts) + " hosts");
  const std::uint64_t links = std::uint64_t{groups} * a * p + std::uint64_t{groups} * a * (a - 1) / 2 +
                              std::uint64_t{groups} * (groups - 1) / 2;
  if (!topology::links_fit(*g, links, "dragonfly", error)) return false;
  topology::add_hosts(g, prefix, std::uint64_t{groups} * a * p);
  for (std::uint32_t i = 0; i < groups; ++i)
    for (std::uint32_t r = 0; r < a; ++r)
      g->switches.push_back({"g" + std::to_string(i) + "_r" + std::to_string(r), p + (a - 1) + h});
  auto router = [a](std::uint32_t i, std::uint32_t r) { return i * a + r; };
  for (std::uint32_t s = 0; s < groups * a; ++s)
    for (std::uint32_t k = 0; k < p; ++k) topology::connect(g, {true, s * p + k, 1}, {false, s, k + 1}, "");
  auto local_port = [p](std::uint32_t from, std::uint32_t to) { return p + 1 + (to < from ? to : to - 1); };
  for (std::uint32_t i = 0; i < groups; ++i)
    for (std::uint32_t r = 0; r < a; ++r)
      for (std::uint32_t q = r + 1; q < a; ++q)
        topology::connect(g, {false, router(i, r), local_port(r, q)}, {false, router(i, q), local_port(q, r)}, "");
  auto global_end = [&](std::uint32_t group, std::uint32_t j) {
    return End{false, router(group, j / h), p + a + j % h};
  };
  for (std::uint32_t i = 0; i < groups; ++i)
    for (std::uint32_t t = i + 1; t < groups; ++t) topology::connect(g, global_end(i, t - 1), global_end(t, i), "");
  return true;
}

void register_topologies() {
  NetworkKinds& kinds = NetworkKinds::instance();
  kinds.add_schema_field({"Topology", "shape", "torus", 10, ib::Torus::descriptor(), false});
  kinds.add_schema_field({"Topology", "shape", "dragonfly", 11, ib::Dragonfly::descriptor(), false});
  kinds.add_topology_helper({"torus", "raw", "ib", expand_torus});
  kinds.add_topology_helper({"dragonfly", "raw", "ib", expand_dragonfly});
}

const bool registered = (register_topologies(), true);

}  // namespace
}  // namespace nicsim::fabric
