// nicsim: the command-line front end.
//   nicsim run SCENARIO [--seed N] [--out DIR] [--plugin LIB.so]... [-v]
//              [--arg --key=value]... [--param scope.name=value]... [--fingerprint]
//   nicsim bench SUITE... [options]   (cli/bench_main.cc)
//   nicsim report RESULTS_DIR         (cli/report_main.cc)
//   nicsim validate SCENARIO [--plugin LIB.so]...
//   nicsim debug SCENARIO [--seed N] [--script FILE] [--listen HOST:PORT [--allow-remote]] [--plugin LIB.so]...
//   nicsim attach HOST:PORT --token TOKEN [--script FILE]
//   nicsim params | nicsim list | nicsim --help | nicsim --version
// Exit codes: 0 success, 1 a workload failed or the simulation hit an error,
// 2 bad input (command line, scenario, plugin).
#include <utility>  // before boost (Boost 1.74 with C++20)

#include <boost/program_options.hpp>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string_view>
#include <systemc>
#include <thread>

#include "cli/bench.h"
#include "cli/mpi_engine.h"
#include "cli/run_overrides.h"
#include "core/params.h"
#include "core/sim.h"
#include "debug/remote.h"
#include "debug/repl.h"
#include "scenario/loader.h"
#include "trace/timeline.h"
#include "trace/trace.h"
#include "world/network_kinds.h"
#include "world/partition.h"
#include "world/programs.h"
#include "world/report.h"
#include "world/world.h"

namespace po = boost::program_options;
using namespace nicsim;

namespace {

constexpr int kExitOk = 0, kExitFailed = 1, kExitBadInput = 2;

// SystemC gives every simulated thread a stack of its own, and each stack
// is two of the process's memory maps (the stack and its guard page), so a
// world of many nodes can run out of maps long before memory. SystemC's own
// message does not say which limit it met.
void explain_stack_failure(const std::exception& e) {
  const auto* report = dynamic_cast<const sc_core::sc_report*>(&e);
  if (!report || std::string_view(report->get_msg_type()).find("stack setup failed") == std::string_view::npos) return;
  long limit = 0;
  std::ifstream("/proc/sys/vm/max_map_count") >> limit;
  std::cerr << fmt::format(
      "nicsim: a simulated thread got no stack: each one (a node's interrupt thread and its programs' threads) "
      "takes two memory maps, and a process may have {} (vm.max_map_count). Raise the limit (sysctl -w "
      "vm.max_map_count=262144) or run over several processes, each of which starts only its own nodes' threads "
      "(docs/partition.md)\n",
      limit);
}

const char* kUsage =
    "usage: nicsim <command> [options]\n"
    "commands:\n"
    "  run SCENARIO       simulate a scenario and print a summary\n"
    "  validate SCENARIO  check a scenario file without running it\n"
    "  debug SCENARIO     step-debug a scenario: breakpoints, stepping, inspection (docs/debugger.md)\n"
    "  attach HOST:PORT   drive a debugging session served with debug --listen\n"
    "  params             list every parameter: scope, name, unit, default, range, doc\n"
    "  list               list the registered programs, NIC and switch kinds, topology helpers\n"
    "  bench SUITE...     run benchmark suites, compare with a baseline (nicsim bench --help)\n"
    "  report RESULTS_DIR render a bench run as one HTML page (nicsim report --help)\n"
    "options:\n";

bool write_file(const std::filesystem::path& p, const std::string& text) {
  std::ofstream f(p, std::ios::binary);
  f << text;
  return bool(f);
}

bool write_json_file(const std::filesystem::path& p, google::protobuf::Message& m) {
  std::ofstream f(p, std::ios::binary);
  write_json(f, m);
  return bool(f);
}

int print_params() {
  for (const ParamScope* scope : ParamRegistry::instance().scopes()) {
    std::cout << fmt::format("[{}] {}\n", scope->name, scope->doc);
    for (const ParamDef& d : scope->defs) {
      std::string range;
      if (!d.choices.empty()) {
        for (auto& c : d.choices) range += (range.empty() ? "" : "|") + c;
      } else if (!d.min.empty() || !d.max.empty()) {
        range = fmt::format("{}..{}", d.min, d.max);
      }
      if (!d.step.empty()) range += " step " + d.step;
      std::cout << fmt::format("  {:<24} {:<10} default {:<12} {:<22} {}\n", d.name, unit_kind_name(d.kind),
                               d.default_value, range, d.doc);
    }
  }
  return kExitOk;
}

int print_list() {
  std::cout << "programs:\n";
  for (const ProgramInfo* p : ProgramRegistry::instance().all())
    std::cout << fmt::format("  {:<20} {}{}\n", p->name, p->doc,
                             p->origin == "built-in" ? "" : fmt::format(" [{}]", p->origin));
  std::cout << "nic kinds:\n";
  for (const ParamScope* scope : ParamRegistry::instance().scopes())
    if (scope->name.rfind("nic.", 0) == 0) std::cout << fmt::format("  {:<20} {}\n", scope->name.substr(4), scope->doc);
  const NetworkKinds& kinds = NetworkKinds::instance();
  std::cout << "switch kinds:\n";
  for (const SwitchKind& k : kinds.switch_kinds()) {
    const ParamScope* scope = ParamRegistry::instance().find(k.param_scope);
    std::cout << fmt::format("  {:<20} {}{} (parameters: scope {})\n", k.name, scope ? scope->doc : "",
                             k.is_default ? ", the default" : "", k.param_scope);
  }
  std::cout << "topology helpers:\n  star, leaf_spine, fat_tree";
  for (const TopologyHelper& h : kinds.topology_helpers()) std::cout << ", " << h.field;
  std::cout << "\n";
  return kExitOk;
}

// A one-line progress indicator on a terminal, for runs longer than a second.
class Progress {
 public:
  explicit Progress(bool enabled) {
    if (!enabled) return;
    thread_ = std::thread([this] {
      const auto start = std::chrono::steady_clock::now();
      std::uint64_t last_events = 0;
      auto last = start;
      bool shown = false;
      while (!done_.load()) {
        std::this_thread::sleep_for(std::chrono::milliseconds(250));
        const auto t = std::chrono::steady_clock::now();
        if (t - start < std::chrono::seconds(1)) continue;
        const std::uint64_t ev = Calendar::progress_events.load(std::memory_order_relaxed);
        const double dt = std::chrono::duration<double>(t - last).count();
        std::fprintf(stderr, "\r\033[Knicsim: simulated %s, %.3g events/s, wall %.1f s",
                     format_time(Calendar::progress_ps.load(std::memory_order_relaxed)).c_str(),
                     static_cast<double>(ev - last_events) / dt, std::chrono::duration<double>(t - start).count());
        last_events = ev;
        last = t;
        shown = true;
      }
      if (shown) std::fprintf(stderr, "\r\033[K");
    });
  }
  ~Progress() {
    done_ = true;
    if (thread_.joinable()) thread_.join();
  }

 private:
  std::atomic<bool> done_{false};
  std::thread thread_;
};

// The results directory, made (and summary.txt in it opened) before the run
// so that a long run never ends with nowhere to write; a failure names the
// option and the reason.
void make_out_dir(const std::string& out_dir) {
  std::error_code ec;
  std::filesystem::create_directories(out_dir, ec);
  if (!ec && !std::filesystem::is_directory(out_dir, ec)) ec = std::make_error_code(std::errc::not_a_directory);
  if (ec)
    throw std::runtime_error(fmt::format("--out {}: cannot make the results directory: {}", out_dir, ec.message()));
  const std::filesystem::path probe = std::filesystem::path(out_dir) / "summary.txt";
  if (!std::ofstream(probe))
    throw std::runtime_error(
        fmt::format("--out {}: cannot write {}: {}", out_dir, probe.string(), std::strerror(errno)));
}

// One rank's run. With a transport the run is spread over processes: each
// builds the devices of its blocks (and stands for the others by their
// ports) and runs them, and rank 0 merges the results and alone prints and
// writes them.
int run(const Scenario& scenario, const std::string& out_dir, bool verbose, bool fingerprint,
        RankTransport* transport) {
  const bool rank0 = !transport || transport->rank() == 0;
  const bool several = transport && transport->ranks() > 1;
  Sim sim(scenario.seed);
  std::unique_ptr<World> world;
  std::uint64_t set_up = 0;
  std::string failure;
  try {
    world = std::make_unique<World>(scenario, transport);
    if (fingerprint) world->enable_fingerprint();
    if (!out_dir.empty() && rank0) make_out_dir(out_dir);
    if (!out_dir.empty())
      world->open_outputs((std::filesystem::path(out_dir) / "trace.jsonl").string(),
                          (std::filesystem::path(out_dir) / "timeline.json").string(),
                          (std::filesystem::path(out_dir) / "packets.pcap").string());
    set_up = 1;
  } catch (const std::exception& e) {
    failure = e.what();
  }
  // A rank that could not set up (rank 0 alone creates the output files)
  // ends every rank, rather than leaving the others waiting for it. Rank 0
  // says why; another rank only when rank 0 set up.
  std::uint64_t all_set_up[2] = {set_up, rank0 ? set_up : 1};
  if (several) transport->all_reduce(all_set_up, 2, RankTransport::Op::Min);
  if (!set_up && (rank0 || all_set_up[1]))
    std::cerr << (rank0 ? std::string("nicsim: ") : fmt::format("nicsim: rank {}: ", transport->rank())) << failure
              << "\n";
  if (!all_set_up[0]) return kExitBadInput;
  if (verbose) setenv("NICSIM_VERBOSE", "1", 1);
  RunStatus status;
  const auto t0 = std::chrono::steady_clock::now();
  try {
    Progress progress(rank0 && isatty(STDERR_FILENO));
    status = world->run();
  } catch (const std::exception& e) {
    explain_stack_failure(e);
    if (!several) throw;
    std::cerr << fmt::format("nicsim: rank {}: {}\n", transport->rank(), e.what());
    transport->abort(kExitFailed);
  }
  const double wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  world->gather_outputs();
  world->close_outputs();
  results::Results results = collect_rank_results(*world, status);
  results::WallClock wall = collect_wall(*world, wall_s);
  const std::vector<std::uint64_t> rss = gather_peak_rss(*world);
  if (!rank0) return status.ok ? kExitOk : kExitFailed;
  wall.set_windows(world->windows());
  wall.set_sync_seconds(world->sync_seconds());
  if (transport) {
    wall.set_ranks(static_cast<std::uint32_t>(transport->ranks()));
    for (std::uint64_t b : rss) wall.add_peak_rss_bytes_per_rank(b);
  }
  std::ostringstream summary;
  print_summary(summary, results, nullptr);
  std::cout << summary.str();
  std::cout << fmt::format(
      "wall {:.3f} s: {:.3g} events/s, {:.3g} packet-hops/s, peak RSS {}{}\n", wall.wall_seconds(),
      wall.events_per_second(), wall.packet_hops_per_second(), format_size(wall.peak_rss_bytes()),
      several ? fmt::format(" (rank 0 of {}, the largest rank {}); {} windows, {:.0f}% of the wall time exchanging",
                            transport->ranks(), format_size(*std::max_element(rss.begin(), rss.end())), wall.windows(),
                            100 * wall.sync_seconds() / std::max(wall.wall_seconds(), 1e-9))
              : std::string());
  if (!out_dir.empty()) {
    const std::filesystem::path dir(out_dir);
    bool ok = write_json_file(dir / "results.json", results) && write_file(dir / "summary.txt", summary.str()) &&
              write_file(dir / "wall.json", to_json(wall));
    if (!ok) {
      std::cerr << "nicsim: cannot write results to " << out_dir << "\n";
      return kExitFailed;
    }
  }
  return status.ok ? kExitOk : kExitFailed;
}

std::string apply_overrides(Scenario& scenario, const po::variables_map& vm) {
  std::vector<std::string> none;
  const auto& args = vm.count("arg") ? vm["arg"].as<std::vector<std::string>>() : none;
  const auto& params = vm.count("param") ? vm["param"].as<std::vector<std::string>>() : none;
  if (std::string err = override_program_args(scenario, args); !err.empty()) return err;
  if (!args.empty()) {
    const ProgramLookup lookup = registered_programs();
    for (const WorkloadSpec& w : scenario.workloads)
      if (std::string reason = lookup.check_args(w.program, w.args); !reason.empty())
        return fmt::format("{}: with --arg, program '{}' does not take its arguments: {}", w.loc.str(), w.program,
                           reason);
  }
  if (vm.count("blocks")) {
    const std::string& given = vm["blocks"].as<std::string>();
    std::uint64_t number = 0;
    if (!parse_whole_number(given, number) || number == 0 || number > 4095)
      return fmt::format("--blocks={}: expected a whole number of blocks, 1 to 4095", given);
    const auto blocks = static_cast<std::uint32_t>(number);
    for (const PartitionSpec::Pin& pin : scenario.partition.pins)
      if (pin.block >= blocks)
        return fmt::format("--blocks={}: the scenario pins a device to block {}", blocks, pin.block);
    scenario.partition.blocks = blocks;
  }
  return override_params(scenario, params);
}

}  // namespace

int sc_main(int argc, char** argv) {
  if (argc >= 2 && std::string_view(argv[1]) == "bench") return bench_main(argc - 1, argv + 1);
  if (argc >= 2 && std::string_view(argv[1]) == "report") return report_main(argc - 1, argv + 1);
  po::options_description opts;
  opts.add_options()("help,h", "show this help")("version", "print the version")("seed", po::value<std::string>(),
                                                                                 "override the scenario's seed")(
      "out", po::value<std::string>(),
      "write results.json, summary.txt, wall.json, trace.jsonl, timeline.json, packets.pcap here")(
      "plugin", po::value<std::vector<std::string>>()->composing(), "load programs from a plugin (repeatable)")(
      "verbose,v", "echo program logs to stderr")(
      "arg", po::value<std::vector<std::string>>()->composing(),
      "--key=value: replace (or add) a program argument of every workload; PROGRAM:--key=value: of the workloads "
      "running PROGRAM (repeatable)")(
      "param", po::value<std::vector<std::string>>()->composing(),
      "scope.name=value: set a host, bus, nic or link parameter on every node or link (repeatable)")(
      "fingerprint", "hash the run's event trajectory into results.json (fingerprint)")(
      "blocks", po::value<std::string>(), "split the world into this many partition blocks (docs/partition.md)")(
      "script", po::value<std::string>(), "debug, attach: replay this command file instead of prompting")(
      "listen", po::value<std::string>(), "debug: serve the session to remote clients on HOST:PORT")(
      "allow-remote", "debug: allow --listen on an address other than loopback")(
      "token", po::value<std::string>(), "attach: the session token the server printed");
  po::options_description hidden;
  hidden.add_options()("command", po::value<std::string>())("scenario", po::value<std::string>());
  po::options_description all;
  all.add(opts).add(hidden);
  po::positional_options_description pos;
  pos.add("command", 1).add("scenario", 1);
  po::variables_map vm;
  try {
    po::store(po::command_line_parser(argc, argv).options(all).positional(pos).run(), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    std::cerr << "nicsim: " << e.what() << "\n" << kUsage << opts;
    return kExitBadInput;
  }
  if (vm.count("help")) {
    std::cout << kUsage << opts;
    return kExitOk;
  }
  if (vm.count("version")) {
    std::cout << "nicsim " << NICSIM_VERSION << " (SystemC " << sc_core::sc_release() << ")\n";
    return kExitOk;
  }
  if (!vm.count("command")) {
    std::cerr << kUsage << opts;
    return kExitBadInput;
  }
  if (vm.count("plugin"))
    for (const auto& path : vm["plugin"].as<std::vector<std::string>>())
      if (std::string err = ProgramRegistry::instance().load_plugin(path); !err.empty()) {
        std::cerr << "nicsim: " << err << "\n";
        return kExitBadInput;
      }
  const std::string command = vm["command"].as<std::string>();
  if (command == "params") return print_params();
  if (command == "list") return print_list();
  if (command == "attach") {
    if (!vm.count("scenario") || !vm.count("token")) {
      std::cerr << "nicsim: attach needs HOST:PORT and --token\n";
      return kExitBadInput;
    }
    return debug::attach_main(vm["scenario"].as<std::string>(), vm["token"].as<std::string>(),
                              vm.count("script") ? vm["script"].as<std::string>() : std::string());
  }
  if (command != "run" && command != "validate" && command != "debug") {
    std::cerr << "nicsim: unknown command '" << command << "'\n" << kUsage << opts;
    return kExitBadInput;
  }
  if (!vm.count("scenario")) {
    std::cerr << "nicsim: " << command << " needs a scenario file\n";
    return kExitBadInput;
  }
  Scenario scenario;
  try {
    scenario = load_scenario_file(vm["scenario"].as<std::string>(), registered_programs());
  } catch (const ScenarioError& e) {
    std::cerr << e.what() << "\n";
    return kExitBadInput;
  }
  if (vm.count("seed") && !parse_whole_number(vm["seed"].as<std::string>(), scenario.seed)) {
    std::cerr << "nicsim: --seed " << vm["seed"].as<std::string>()
              << ": expected a whole number, 0 to 18446744073709551615\n";
    return kExitBadInput;
  }
  if (std::string err = apply_overrides(scenario, vm); !err.empty()) {
    std::cerr << "nicsim: " << err << "\n";
    return kExitBadInput;
  }
  PartitionPlan partition;
  try {
    partition = plan_partition(scenario);
  } catch (const ScenarioError& e) {
    std::cerr << e.what() << "\n";
    return kExitBadInput;
  }
  if (command == "validate") {
    std::cout << fmt::format("{}: ok: {} nodes, {} switches, {} links, {} workloads, {} faults{}\n", scenario.file,
                             scenario.nodes.size(), scenario.switches.size(), scenario.links.size(),
                             scenario.workloads.size(), scenario.faults.size(),
                             partition.blocks > 1 ? "; " + describe(partition) : std::string());
    if (partition.blocks > 1) std::cout << describe_blocks(partition, scenario.nodes.size());
    return kExitOk;
  }
  if (command == "debug") {
    if (const char* size = std::getenv("OMPI_COMM_WORLD_SIZE"); size && std::atoi(size) > 1) {
      if (std::string_view(std::getenv("OMPI_COMM_WORLD_RANK") ? std::getenv("OMPI_COMM_WORLD_RANK") : "0") == "0")
        std::cerr << "nicsim: the step debugger runs a scenario in one process: start it without mpirun, or with "
                     "-np 1 (its blocks then run in that one process, in the same order)\n";
      return kExitBadInput;
    }
    debug::DebugOptions options;
    if (vm.count("script")) options.script = vm["script"].as<std::string>();
    if (vm.count("listen")) options.listen = vm["listen"].as<std::string>();
    options.allow_remote = vm.count("allow-remote") > 0;
    return debug::debug_main(scenario, options);
  }
  std::unique_ptr<RankTransport> transport;
  if (launched_by_mpi()) {
    std::string error;
    transport = load_mpi_engine(&argc, &argv, error);
    if (!transport) {
      std::cerr << "nicsim: " << error << "\n";
      return kExitBadInput;
    }
    // Each process runs at least one block of its own.
    const auto ranks = static_cast<std::uint32_t>(transport->ranks());
    if (!vm.count("blocks") && scenario.partition.blocks < ranks) scenario.partition.blocks = ranks;
  }
  if (vm.count("out") && vm["out"].as<std::string>().empty()) {
    std::cerr << "nicsim: --out: the results directory's name is empty\n";
    return kExitBadInput;
  }
  return run(scenario, vm.count("out") ? vm["out"].as<std::string>() : std::string(), vm.count("verbose") > 0,
             vm.count("fingerprint") > 0, transport.get());
}

// SystemC prints its banner when its kernel context is created, which happens
// before sc_main; our own main() silences it and then enters SystemC as
// libsystemc's main() would.
int main(int argc, char** argv) {
  setenv("SC_COPYRIGHT_MESSAGE", "DISABLE", 0);
  return sc_core::sc_elab_and_sim(argc, argv);
}
