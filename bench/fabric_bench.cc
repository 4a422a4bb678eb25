// Fabric speed benchmark. Runs a scenario (default: the 64-node
// leaf/spine permutation benchmark) with the traffic duration given on the
// command line and reports
//   - packet-hops per wall second and wall ns per packet-hop,
//   - calendar events per wall second,
//   - peak RSS, and RSS per simulated node above the process baseline,
//   - the ratio to a reference rate (ns-3 3.37 on this topology: 135 k/s).
// Usage: fabric_bench [--scenario FILE] [--duration 20ms] [--arg --name=value]...
//                     [--json FILE]
// --arg replaces (or adds) a program argument of every workload, e.g.
// `--scenario scenarios/ib_write_bw.textproto --arg --bytes=1GiB`. For HCA
// scenarios it also reports simulated IB packets (every packet an HCA sent,
// acknowledgements included) per wall second against the 1 M/s target, and
// calendar events per IB packet; bench/hca_instructions.sh gives the
// instructions per IB packet (callgrind, two run lengths).
// A run of a few milliseconds of simulated time is the CI smoke version; the
// reported figures come from the default 20 ms run.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <chrono>
#include <cstring>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "core/sim.h"
#include "hca_model/hca.h"
#include "scenario/loader.h"
#include "world/programs.h"
#include "world/report.h"
#include "world/world.h"

using namespace nicsim;

namespace {
constexpr double kNs3PacketHopsPerSecond = 135e3;
constexpr double kTargetPacketHopsPerSecond = 2e6;
constexpr double kTargetIbPacketsPerSecond = 1e6;
}  // namespace

int sc_main(int argc, char** argv) {
  std::string scenario_path = std::string(NICSIM_SOURCE_DIR) + "/scenarios/bench_fabric64.textproto";
  std::string duration = "20ms";
  std::string json_path;
  std::vector<std::string> overrides;
  bool duration_given = false;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--scenario"))
      scenario_path = argv[i + 1];
    else if (!std::strcmp(argv[i], "--duration"))
      duration = argv[i + 1], duration_given = true;
    else if (!std::strcmp(argv[i], "--json"))
      json_path = argv[i + 1];
    else if (!std::strcmp(argv[i], "--arg"))
      overrides.push_back(argv[i + 1]);
    else {
      std::cerr << "usage: fabric_bench [--scenario FILE] [--duration 20ms] [--arg --name=value]... [--json FILE]\n";
      return 2;
    }
  }
  if (duration_given || overrides.empty()) overrides.push_back("--duration=" + duration);
  const std::uint64_t baseline_rss = peak_rss_bytes();
  Scenario sc;
  try {
    sc = load_scenario_file(scenario_path,
                            [](std::string_view n) { return ProgramRegistry::instance().find(n) != nullptr; });
  } catch (const ScenarioError& e) {
    std::cerr << e.what() << "\n";
    return 2;
  }
  for (auto& w : sc.workloads)
    for (const std::string& o : overrides) {
      const std::string key = o.substr(0, o.find('=') + 1);
      bool replaced = false;
      for (auto& a : w.args)
        if (a.rfind(key, 0) == 0) a = o, replaced = true;
      // --duration only applies where the program takes it.
      if (!replaced && key != "--duration=") w.args.push_back(o);
    }
  Sim sim(sc.seed);
  World world(sc);
  const auto t0 = std::chrono::steady_clock::now();
  const RunStatus st = world.run();
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const double hops = static_cast<double>(world.fabric().packet_hops());
  const double events = static_cast<double>(sim.calendar().events_fired());
  std::uint64_t ib_packets = 0;
  for (std::uint32_t i = 0; i < world.num_nodes(); ++i)
    if (auto* h = world.node(i).nic_as<hca::Hca>()) ib_packets += h->stats().tx_packets;
  const std::uint64_t rss = peak_rss_bytes();
  const double per_node = static_cast<double>(rss - baseline_rss) / static_cast<double>(world.num_nodes());
  const double rate = hops / wall;
  std::cout << fmt::format(
      "fabric_bench: {} ({} nodes, {} switches, {} links), arguments {}, run {}\n"
      "  packet-hops          {:.0f}\n"
      "  wall                 {:.3f} s\n"
      "  packet-hops / wall s {:.3g}   (target {:.3g}: {:.2f}x; ns-3 reference {:.3g}: {:.1f}x)\n"
      "  wall ns / packet-hop {:.1f}\n"
      "  events / wall s      {:.3g}   ({:.2f} events per packet-hop)\n"
      "  peak RSS             {} (baseline {}), {:.1f} KiB per node\n",
      sc.name, world.num_nodes(), world.num_switches(), world.fabric().links().size(),
      fmt::format("{}", fmt::join(overrides, " ")), st.ok ? "ok" : "FAILED", hops, wall, rate,
      kTargetPacketHopsPerSecond, rate / kTargetPacketHopsPerSecond, kNs3PacketHopsPerSecond,
      rate / kNs3PacketHopsPerSecond, wall * 1e9 / hops, events / wall, events / hops, format_size(rss),
      format_size(baseline_rss), per_node / 1024.0);
  const double ib = static_cast<double>(ib_packets);
  if (ib_packets)
    std::cout << fmt::format(
        "  IB packets sent      {} ({:.3g} per wall s, target {:.3g}: {:.2f}x; {:.0f} wall ns each;"
        " {:.2f} calendar events each)\n",
        ib_packets, ib / wall, kTargetIbPacketsPerSecond, ib / wall / kTargetIbPacketsPerSecond, wall * 1e9 / ib,
        events / ib);
  if (!json_path.empty()) {
    std::ofstream(json_path) << fmt::format(
        "{{\"scenario\":\"{}\",\"duration\":\"{}\",\"packet_hops\":{:.0f},\"wall_seconds\":{:.6f},"
        "\"packet_hops_per_second\":{:.1f},\"wall_ns_per_packet_hop\":{:.2f},\"events_per_second\":{:.1f},"
        "\"peak_rss_bytes\":{},\"rss_bytes_per_node\":{:.0f},\"ib_packets\":{},\"ib_packets_per_second\":{:.1f}}}\n",
        sc.name, duration, hops, wall, rate, wall * 1e9 / hops, events / wall, rss, per_node, ib_packets,
        ib_packets ? ib / wall : 0.0);
  }
  return st.ok && hops > 0 ? 0 : 1;
}

int main(int argc, char** argv) {
  setenv("SC_COPYRIGHT_MESSAGE", "DISABLE", 0);
  return sc_core::sc_elab_and_sim(argc, argv);
}
