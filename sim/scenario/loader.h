// Loads a scenario file (protobuf text format, schema sim/proto/scenario.proto),
// expands topology helpers, resolves names, parses every unit-carrying value
// through core/units and every override through the parameter registry, and
// returns a fully validated Scenario. Any problem is a ScenarioError whose
// what() is "file:line:col: message" (1-based line and column) and the CLI
// exits 2 on it. Nothing here touches SystemC.
#pragma once
#include <any>
#include <cstdint>
#include <map>
#include <functional>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "core/params.h"
#include "core/units.h"

namespace nicsim {

struct SourceLoc {
  std::string file;
  int line = 0;             // 1-based; 0 = unknown
  int column = 0;           // 1-based
  std::string str() const;  // "file:line:col"
};

class ScenarioError : public std::runtime_error {
 public:
  ScenarioError(const SourceLoc& loc, const std::string& message);
  const SourceLoc& loc() const { return loc_; }
  const std::string& message() const { return message_; }

 private:
  SourceLoc loc_;
  std::string message_;
};

struct NodeSpec {
  std::string name;
  std::string nic;          // NIC kind; "nic.<kind>" is a registered param scope
  ParamSet host;            // scope "host"   (keys "host.<name>" in the file)
  ParamSet bus;             // scope "bus"    (keys "bus.<name>")
  ParamSet nic_params;      // scope "nic.<kind>" (keys "nic.<name>")
  std::uint32_t ports = 1;  // = nic_params.count("ports")
  SourceLoc loc;
  // A fixed address its network kind gave it (a position that network
  // numbers densely from 0, with network_size positions); -1: the world's
  // sequential addressing.
  std::int64_t address = -1;
  std::uint32_t network_size = 0;
  std::vector<std::uint32_t> ipv4;  // per port, host order (Node.ipv4 or the default scheme)
};

struct SwitchSpec {
  std::string name;
  ParamSet params;          // the scope of its kind
  std::uint32_t ports = 0;  // = params.count("ports"), or the kind's fixed count
  SourceLoc loc;
  std::string kind;    // a registered switch kind (world/network_kinds.h)
  std::any kind_data;  // what the kind's scenario rules worked out for it
};

// One end of a link: a node's or a switch's port (ports are numbered from 1).
struct LinkEnd {
  enum class Kind { Node, Switch } kind = Kind::Node;
  std::uint32_t index = 0;  // into Scenario::nodes or Scenario::switches
  std::uint32_t port = 1;
};

struct LinkSpec {
  std::string name;  // explicit, or "<a>:<port>--<b>:<port>"
  LinkEnd a, b;
  ParamSet params;  // scope "link": bandwidth, delay, vls, vl_buffer, drop_rate, ...
  SourceLoc loc;
};

struct WorkloadSpec {
  std::string program;
  std::vector<std::uint32_t> nodes;  // node indices, in scenario order, no duplicates
  Tick start = 0;
  std::vector<std::string> args;  // argv[1..]; argv[0] is the program name
  SourceLoc loc;
};

struct FaultSpec {
  enum class Kind { LinkDown, LinkUp, DropRate, BitErrorRate, Flaps };
  Tick at = 0;
  std::uint32_t link = 0;  // index into Scenario::links
  Kind kind = Kind::LinkDown;
  double value = 0;                                 // the rate for DropRate / BitErrorRate
  Tick mean_interval = 0, down_for = 0, until = 0;  // Flaps
  SourceLoc loc;
};

struct MulticastGroupSpec {
  std::string name;
  std::uint32_t mlid = 0;              // 0xC000..0xFFFE
  std::vector<std::uint32_t> members;  // node indices
  SourceLoc loc;
};

struct TraceSelect {
  std::string device = "*";     // glob over node and switch names
  std::string component = "*";  // "*" or a trace component name (see trace/trace.h)
};

struct OutputSpec {
  std::vector<TraceSelect> trace;  // empty = no structured trace
  bool timeline = false;
  std::uint64_t timeline_max_events = 1000000;
  std::vector<std::string> pcap_links;  // globs over link names
  // The capture format of the chosen links (world/network_kinds.h
  // PcapFormat): one file holds one link type, so they share one format.
  std::string pcap_format;
};

// Partition blocks (world/partition.h). Devices by id: nodes in scenario
// order, then switches.
struct PartitionSpec {
  std::uint32_t blocks = 1;
  struct Pin {
    std::uint32_t device;
    std::uint32_t block;
  };
  std::vector<Pin> pins;
  struct Weight {
    std::uint32_t device;
    double weight;
  };
  std::vector<Weight> weights;
  SourceLoc loc;
};

struct Scenario {
  std::string file;
  std::string name;
  std::string description;
  std::uint64_t seed = 1;
  Tick stop_time = 0;  // 0 = run until all workloads end and the fabric is idle
  std::vector<NodeSpec> nodes;
  std::vector<SwitchSpec> switches;
  std::vector<LinkSpec> links;
  std::vector<WorkloadSpec> workloads;
  std::vector<FaultSpec> faults;
  std::vector<MulticastGroupSpec> multicast;
  ParamSet mgmt;  // scope "mgmt": the management network
  OutputSpec outputs;
  PartitionSpec partition;
  // What network kinds' scenario rules worked out, by the rule's name.
  std::map<std::string, std::any, std::less<>> extensions;

  std::optional<std::uint32_t> node_index(std::string_view name) const;
  std::optional<std::uint32_t> switch_index(std::string_view name) const;
  std::optional<std::uint32_t> link_index(std::string_view name) const;
};

// What the loader asks of the programs a scenario's workloads name.
struct ProgramLookup {
  ProgramLookup() = default;
  ProgramLookup(std::nullptr_t) {}
  template <class Known>
  requires std::is_invocable_r_v<bool, Known, std::string_view> ProgramLookup(Known k) : known(std::move(k)) {}
  // Whether a program name is known (registered built-in or from a
  // plugin); absent: any name is.
  std::function<bool(std::string_view)> known;
  // "" when the program takes a workload's arguments, else the reason;
  // absent: arguments are checked only when the programs run.
  std::function<std::string(std::string_view program, const std::vector<std::string>& args)> check_args;
};

// Bounds a caller may set below the loader's own on what a topology helper
// generates. The scenario fuzz target keeps them small, so that each input
// loads in milliseconds under the sanitizers.
struct LoadLimits {
  std::uint64_t topology_hosts = std::numeric_limits<std::uint64_t>::max();
  std::uint64_t topology_links = std::numeric_limits<std::uint64_t>::max();
};

Scenario load_scenario_file(const std::string& path, const ProgramLookup& known_program);
Scenario load_scenario_text(const std::string& text, const std::string& file_name, const ProgramLookup& known_program,
                            const LoadLimits& limits = {});

}  // namespace nicsim
