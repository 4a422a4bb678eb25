// Built-in program `fabric_traffic`: raw packets between the nodes of its
// workload (all must have raw NICs), with a uniform-random or a fixed
// permutation pattern, fixed packet size and an offered load relative to
// the node's link rate, on one VL or spread over several (by destination or
// at random). Each node's NIC generates in hardware (no software per
// packet); the program configures it, waits, and reports, among others the
// accepted load: what arrived between the warm-up and the end of
// generation, as a share of the link rate (a saturation throughput when the
// offered load is 1).
#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <string_view>

#include "core/sim.h"
#include "core/units.h"
#include "fabric/link.h"
#include "fabric/raw_nic.h"
#include "nicsim/app.h"
#include "world/programs.h"
#include "world/world.h"

namespace nicsim {
namespace {

struct TrafficArgs {
  std::string pattern = "uniform";
  std::uint64_t size = 2048;
  double load = 0.5;
  Tick duration = 100 * kUs;
  Tick drain = 100 * kUs;
  bool poisson = false;
  std::uint64_t vl = 0;
  std::uint64_t vls = 1;
  bool vl_by_destination = true;
  Tick warmup = 0;
};

// "--name=value" arguments; returns "" or an error.
std::string parse_args(int argc, char** argv, TrafficArgs& a) {
  std::string err;
  for (int i = 1; i < argc; ++i) {
    std::string_view arg = argv[i];
    auto eq = arg.find('=');
    if (arg.substr(0, 2) != "--" || eq == std::string_view::npos)
      return fmt::format("argument '{}': expected --name=value", arg);
    std::string_view key = arg.substr(2, eq - 2), val = arg.substr(eq + 1);
    bool ok = true;
    if (key == "pattern") {
      a.pattern = val;
      ok = a.pattern == "uniform" || a.pattern == "permutation" || a.pattern == "alltoall";
      if (!ok) err = "use uniform, permutation or alltoall";
    } else if (key == "size") {
      auto v = parse_size(val, &err);
      ok = v && *v >= fabric::kRawHeaderBytes && *v <= 1024 * 1024;
      if (v && !ok) err = fmt::format("between {} bytes and 1MiB", fabric::kRawHeaderBytes);
      if (ok) a.size = *v;
    } else if (key == "load") {
      auto v = parse_ratio(val, &err);
      ok = v && *v > 0 && *v <= 1;
      if (v && !ok) err = "must be in (0, 1]";
      if (ok) a.load = *v;
    } else if (key == "duration" || key == "drain" || key == "warmup") {
      auto v = parse_time(val, &err);
      ok = v && *v <= 3600 * kSec && (key != "duration" || *v > 0);
      if (v && !ok) err = key == "duration" ? "must be above 0 and at most 1 hour" : "at most 1 hour";
      if (ok) (key == "duration" ? a.duration : key == "drain" ? a.drain : a.warmup) = *v;
    } else if (key == "arrival") {
      ok = val == "fixed" || val == "poisson";
      a.poisson = val == "poisson";
      if (!ok) err = "use fixed or poisson";
    } else if (key == "vl") {
      auto v = parse_count(val, &err);
      ok = v && *v < 15;
      if (v && !ok) err = "a data VL, 0 to 14";
      if (ok) a.vl = *v;
    } else if (key == "vls") {
      auto v = parse_count(val, &err);
      ok = v && *v >= 1 && *v <= 15;
      if (v && !ok) err = "between 1 and 15";
      if (ok) a.vls = *v;
    } else if (key == "spread") {
      ok = val == "destination" || val == "random";
      a.vl_by_destination = val == "destination";
      if (!ok) err = "use destination or random";
    } else {
      return fmt::format(
          "unknown argument --{} (pattern, size, load, duration, drain, warmup, arrival, vl, vls, spread)", key);
    }
    if (!ok) return fmt::format("--{}={}: {}", key, val, err);
  }
  if (a.warmup >= a.duration)
    return fmt::format("--warmup={}: must be shorter than --duration={}", format_time(a.warmup),
                       format_time(a.duration));
  return {};
}

// The same permutation on every node: a single cycle (Sattolo), so no node
// sends to itself, drawn from the scenario seed.
std::vector<std::uint32_t> permutation(std::uint32_t n) {
  std::vector<std::uint32_t> perm(n);
  for (std::uint32_t i = 0; i < n; ++i) perm[i] = i;
  Rng rng = Sim::get().stream("fabric_traffic:permutation");
  for (std::uint32_t i = n - 1; i > 0; --i) std::swap(perm[i], perm[rng.below(i)]);
  return perm;
}

int check_args(int argc, char** argv) {
  TrafficArgs args;
  if (std::string err = parse_args(argc, argv, args); !err.empty()) {
    nicsim_fail(err.c_str());
    return -1;
  }
  return 0;
}

int fabric_traffic(int argc, char** argv) {
  TrafficArgs args;
  if (std::string err = parse_args(argc, argv, args); !err.empty()) {
    nicsim_fail(err.c_str());
    return 2;
  }
  ProgramInstance* self = current_program();
  Node& node = self->node();
  auto* nic = node.nic_as<fabric::RawNic>();
  if (!nic) {
    nicsim_fail(
        fmt::format("node {} has a '{}' NIC; fabric_traffic needs 'raw'", node.name(), node.spec().nic).c_str());
    return 2;
  }
  const auto& members = self->workload().nodes;
  const auto n = static_cast<std::uint32_t>(members.size());
  World& world = *World::current();
  fabric::TrafficConfig cfg;
  cfg.packet_bytes = static_cast<std::uint32_t>(args.size);
  cfg.vl = static_cast<std::uint8_t>(args.vl);
  cfg.vls = static_cast<std::uint8_t>(args.vls);
  cfg.vl_by_destination = args.vl_by_destination;
  if (args.pattern == "permutation") {
    if (n > 1) cfg.destinations.push_back(world.node(members[permutation(n)[self->rank()]]).lid());
  } else if (args.pattern == "alltoall") {
    // The shifted exchange: rank r sends to r+1, r+2, ... r+n-1 (mod n) in
    // turn, so at each step every node sends to a different one.
    cfg.in_turn = true;
    for (std::uint32_t k = 1; k < n; ++k) cfg.destinations.push_back(world.node(members[(self->rank() + k) % n]).lid());
  } else {
    for (std::uint32_t r = 0; r < n; ++r)
      if (r != self->rank()) cfg.destinations.push_back(world.node(members[r]).lid());
  }
  fabric::Port& port = nic->port(1);
  if (!port.link()) {
    nicsim_fail("port 1 is not connected");
    return 2;
  }
  if (args.vl + args.vls > static_cast<std::uint64_t>(port.link()->vls())) {
    nicsim_fail(fmt::format("--vl={} --vls={}: the link has {} VL(s)", args.vl, args.vls, port.link()->vls()).c_str());
    return 2;
  }
  if (args.size > std::uint64_t{port.link()->vl_buffer_blocks()} * fabric::kCreditBlock) {
    nicsim_fail(fmt::format("--size={}: larger than the link's VL buffer ({})", format_size(args.size),
                            format_size(std::uint64_t{port.link()->vl_buffer_blocks()} * fabric::kCreditBlock))
                    .c_str());
    return 2;
  }
  const Tick ser = serialization_time(args.size, port.link()->bits_per_second());
  cfg.interval = static_cast<Tick>(static_cast<double>(ser) / args.load);
  cfg.poisson = args.poisson;
  // Start together: the barrier crosses the management network.
  if (nicsim_barrier() != 0) return 1;
  cfg.stop = now() + args.duration;
  cfg.measure_from = now() + args.warmup;
  nic->start_traffic(cfg);
  nicsim_sleep_ps(args.duration);
  while (nic->queued() > 0) nicsim_sleep_ps(ser);
  nicsim_sleep_ps(args.drain);
  nicsim_barrier();

  const auto& st = nic->stats();
  const double seconds = static_cast<double>(args.duration) / 1e12;
  nicsim_result("tx_packets", static_cast<double>(st.tx_packets), "packets");
  nicsim_result("rx_packets", static_cast<double>(st.rx_packets), "packets");
  nicsim_result("rx_corrupt", static_cast<double>(st.rx_corrupt), "packets");
  nicsim_result("source_overflow", static_cast<double>(st.source_overflow), "packets");
  nicsim_result("offered_load", args.load, "ratio");
  const double window_bits =
      static_cast<double>(port.link()->bits_per_second()) * static_cast<double>(args.duration - args.warmup) / 1e12;
  nicsim_result("accepted_load", static_cast<double>(st.accepted_bytes) * 8 / window_bits, "ratio");
  nicsim_result("rx_throughput", static_cast<double>(st.rx_bytes) * 8 / seconds / 1e9, "Gb/s");
  return 0;
}

const BuiltinProgram registration(
    "fabric_traffic", fabric_traffic,
    "raw fabric traffic between the workload's nodes (raw NICs): --pattern=uniform|permutation|alltoall "
    "--size=2KiB --load=0.9 --duration=100us --drain=100us --warmup=0 --arrival=fixed|poisson --vl=0 --vls=1 "
    "--spread=destination|random",
    check_args);

}  // namespace
}  // namespace nicsim
