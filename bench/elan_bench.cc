// Elan speed benchmark. Runs an Elan Kernel Comms scenario and
// reports simulated Elan network packets (data and ack tokens) and
// Kernel Comms messages per wall second, wall ns per packet, calendar events
// per packet and peak RSS. Two workloads:
//   stream    scenarios/ep_large_bw.textproto: 64 KiB large messages, 2 nodes
//   multicast scenarios/ep_mcast64.textproto: 64 KiB multicasts to 63 nodes
// Usage: elan_bench [--workload stream|multicast] [--scenario FILE]
//                   [--arg --name=value]... [--json FILE]
// --arg replaces (or adds) a program argument of every workload, e.g.
// `--arg --iters=4096` for a longer stream. For instructions per packet run
// it under `valgrind --tool=callgrind` and divide by the packets printed.
#include <fmt/format.h>

#include <chrono>
#include <cstring>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "core/sim.h"
#include "elan_model/elan3.h"
#include "scenario/loader.h"
#include "world/programs.h"
#include "world/report.h"
#include "world/world.h"

using namespace nicsim;

namespace {
constexpr double kTargetPacketsPerSecond = 1e6;  // the goal: >= 1 M Elan packets per wall second
}  // namespace

int sc_main(int argc, char** argv) {
  std::string workload = "stream";
  std::string scenario_path;
  std::string json_path;
  std::vector<std::string> overrides;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--workload"))
      workload = argv[i + 1];
    else if (!std::strcmp(argv[i], "--scenario"))
      scenario_path = argv[i + 1];
    else if (!std::strcmp(argv[i], "--json"))
      json_path = argv[i + 1];
    else if (!std::strcmp(argv[i], "--arg"))
      overrides.push_back(argv[i + 1]);
    else {
      std::cerr << "usage: elan_bench [--workload stream|multicast] [--scenario FILE] [--arg --name=value]... "
                   "[--json FILE]\n";
      return 2;
    }
  }
  if (scenario_path.empty()) {
    if (workload != "stream" && workload != "multicast") {
      std::cerr << "elan_bench: --workload must be stream or multicast, not '" << workload << "'\n";
      return 2;
    }
    scenario_path = std::string(NICSIM_SOURCE_DIR) + "/scenarios/" +
                    (workload == "stream" ? "ep_large_bw.textproto" : "ep_mcast64.textproto");
  }
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
      if (!replaced) w.args.push_back(o);
    }
  Sim sim(sc.seed);
  World world(sc);
  const auto t0 = std::chrono::steady_clock::now();
  const RunStatus st = world.run();
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::uint64_t packets = 0, tokens = 0;
  for (std::uint32_t i = 0; i < world.num_nodes(); ++i)
    if (auto* e = world.node(i).nic_as<elan3::Elan3>()) {
      packets += e->stats().tx_packets;
      tokens += e->stats().rx_packets;  // every packet received is answered by one token
    }
  double messages = 0;
  std::string figures;
  for (auto& p : world.programs())
    for (auto& r : p->results()) {
      if (r.name == "messages")
        messages += r.value;
      else
        figures += fmt::format("  {:<20} {:.3f} {}\n", r.name, r.value, r.unit);
    }
  const double events = static_cast<double>(sim.calendar().events_fired());
  const std::uint64_t rss = peak_rss_bytes();
  const double rate = static_cast<double>(packets) / wall;
  std::cout << fmt::format(
      "elan_bench: {} ({} nodes), run {}\n{}"
      "  Elan packets         {} data + {} ack tokens\n"
      "  wall                 {:.3f} s\n"
      "  packets / wall s     {:.3g}   (target {:.3g}: {:.2f}x), with tokens {:.3g}\n"
      "  wall ns / packet     {:.1f}\n"
      "  messages / wall s    {:.3g}   ({:.0f} messages)\n"
      "  events / packet      {:.2f}\n"
      "  peak RSS             {} (baseline {})\n",
      sc.name, world.num_nodes(), st.ok ? "ok" : "FAILED", figures, packets, tokens, wall, rate,
      kTargetPacketsPerSecond, rate / kTargetPacketsPerSecond, static_cast<double>(packets + tokens) / wall,
      wall * 1e9 / static_cast<double>(packets ? packets : 1), messages / wall, messages,
      events / static_cast<double>(packets ? packets : 1), format_size(rss), format_size(baseline_rss));
  if (!json_path.empty())
    std::ofstream(json_path) << fmt::format(
        "{{\"scenario\":\"{}\",\"packets\":{},\"tokens\":{},\"messages\":{:.0f},\"wall_seconds\":{:.6f},"
        "\"packets_per_second\":{:.1f},\"messages_per_second\":{:.1f},\"peak_rss_bytes\":{}}}\n",
        sc.name, packets, tokens, messages, wall, rate, messages / wall, rss);
  return st.ok && packets > 0 ? 0 : 1;
}

int main(int argc, char** argv) {
  setenv("SC_COPYRIGHT_MESSAGE", "DISABLE", 0);
  return sc_core::sc_elab_and_sim(argc, argv);
}
