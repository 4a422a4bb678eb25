// The world of one simulation: nodes, switches and links built from a
// validated Scenario, static routes, faults on the calendar, program
// instances, and the management network. One World per process.
#pragma once
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/block_exchange.h"
#include "core/rng.h"
#include "fabric/fabric.h"
#include "scenario/loader.h"
#include "trace/fingerprint.h"
#include "trace/pcap.h"
#include "world/mgmt.h"
#include "world/node.h"
#include "world/network_kinds.h"
#include "world/partition.h"
#include "world/programs.h"

namespace nicsim {

struct RunStatus {
  Tick end_time = 0;
  bool all_finished = true;  // every program instance ran to completion
  bool ok = true;            // all finished, none failed, no simulation errors
};

class World {
 public:
  // A Sim must exist. With a transport the world is one rank of a run over
  // several processes: it runs the blocks the transport's rank is given
  // (docs/partition.md).
  explicit World(const Scenario& scenario, RankTransport* transport = nullptr);
  ~World();
  World(const World&) = delete;
  static World* current();

  const Scenario& scenario() const { return scenario_; }
  fabric::Fabric& fabric() { return fabric_; }
  std::size_t num_nodes() const { return nodes_.size(); }
  Node& node(std::uint32_t i) { return *nodes_.at(i); }
  // Switch i in scenario order, of any kind; switch_as<T>() is nullptr when
  // it is not a T.
  fabric::Device& switch_device(std::uint32_t i) { return *switches_.at(i); }
  template <class T>
  T* switch_as(std::uint32_t i) {
    return dynamic_cast<T*>(switches_.at(i).get());
  }
  std::size_t num_switches() const { return switches_.size(); }
  // nullptr for a link this process did not build: in a run over several
  // processes, one with no end on the devices it runs.
  fabric::Link* link(std::uint32_t scenario_index) { return links_.at(scenario_index); }
  // The device ids of a scenario link's ends.
  std::pair<std::uint32_t, std::uint32_t> link_ends(std::uint32_t scenario_index) const;
  MgmtNet& mgmt() { return *mgmt_; }
  const std::vector<std::unique_ptr<ProgramInstance>>& programs() const { return programs_; }
  const std::vector<std::string>& device_names() const { return device_names_; }
  const PartitionPlan& partition() const { return partition_; }
  // In a run over several processes: what moves events between them.
  BlockExchange* exchange() { return exchange_.get(); }
  // A run split into blocks: the windows it ran, and the wall time this
  // process spent exchanging events and totals with the others.
  std::uint64_t windows() const { return windows_; }
  double sync_seconds() const { return sync_seconds_; }
  // Whether this process runs device `id` (every device with one process).
  bool runs_device(std::uint32_t id) const;
  // Starts `program` on node `node` at time 0 as a daemon the run does not
  // wait for (a management agent: a network kind's WorldHook calls it).
  void start_daemon(const std::string& program, std::uint32_t node, std::vector<std::string> args,
                    const SourceLoc& loc);

  // Opens the structured trace, the timeline and the packet capture (paths
  // may be empty).
  void open_outputs(const std::string& trace_path, const std::string& timeline_path, const std::string& pcap_path = {});
  void close_outputs();
  // A run over several processes: rank 0 takes every rank's trace records,
  // timeline events and capture records, to write them in order at
  // close_outputs, and each block's fingerprint from the rank that ran it.
  void gather_outputs();
  // Hashes the run's event trajectory (every state-machine transition and
  // every packet put on a wire, with their times) into fingerprint(). Call
  // before run(); off by default, as it watches every port. With several
  // blocks each block hashes what happens as it, in its own order, and the
  // run's hash folds the blocks' in block order (gather_outputs brings them
  // to rank 0), so that it does not depend on which blocks share a process.
  void enable_fingerprint();
  // The trajectory hash as 16 hex digits, or "" when not enabled.
  std::string fingerprint() const;
  // Starts the programs, schedules the faults, runs the SystemC kernel until
  // the stop time or until nothing is left to do, and checks the outcome.
  RunStatus run();

 private:
  void build();  // everything the constructor makes
  void build_devices();
  void build_links();
  void assign_addresses_and_routes();
  void program_static_routes(const std::vector<EndpointAddress>& endpoints);
  // With a timeline: each API call as an instant on its thread's track.
  static void api_call_on_timeline(void* self, host::Host* node, const char* name);
  std::optional<std::size_t> timeline_api_slot_;  // among the API-call observers
  void schedule_faults();
  static void fault_thunk(void* self, std::uint64_t index);
  // With several blocks (world/block_run.cc): each end of a faulty link
  // changes as its own block, and the run goes in windows.
  void schedule_end_faults();
  static void end_fault_thunk(void* self, std::uint64_t fault_and_end);
  static void end_flap_up_thunk(void* self, std::uint64_t fault_and_end);
  void set_up_distributed(RankTransport& transport);
  RunStatus run_blocks();
  struct BlockTotals;
  BlockTotals end_window(Tick last_active);
  std::uint64_t windows_ = 0;
  double sync_seconds_ = 0;
  void finish_blocks(RunStatus& status, bool stopped_by_time);
  void write_capture_before(Tick before);
  std::unique_ptr<BlockExchange> exchange_;
  RankTransport* transport_ = nullptr;
  // A flaps fault: the link goes down now, up after down_for, and down
  // again at a random time (flap_next).
  void flap_down(std::size_t fault);
  static void flap_up_thunk(void* self, std::uint64_t fault);
  std::vector<Rng> flap_rngs_;  // by fault index (a stream per flaps fault); with blocks, by 2 * fault + end
  // When every program has finished: stop as soon as no packet is in flight
  // and no host bus has a transaction outstanding (stale timers and idle
  // generators do not keep the run alive).
  static void idle_check(void* self, std::uint64_t);

 public:
  // A program instance ended (finished or failed), or became a daemon.
  void program_finished(const ProgramInstance& program);

 private:
  void explain_unfinished(bool stopped_by_time);
  // Packet capture and the fingerprint share one tap per port.
  struct PortWatch;
  void install_port_taps();
  static void port_tap(void* watch, const fabric::Packet& p, Tick start);
  // What the running code's events are hashed into: the one hash with one
  // block, else its block's.
  Fingerprint& trajectory_hash();

  const Scenario& scenario_;
  PartitionPlan partition_;
  fabric::Fabric fabric_;
  std::vector<std::unique_ptr<Node>> nodes_;
  std::vector<std::unique_ptr<fabric::Device>> switches_;  // of every kind, scenario order
  std::vector<fabric::Link*> links_;
  std::vector<std::string> device_names_;
  std::unique_ptr<MgmtNet> mgmt_;
  std::vector<std::unique_ptr<ProgramInstance>> programs_;
  // This process's programs (not daemons) that have not ended: what the
  // end of a run waits for, kept as they end so that no check scans them.
  std::size_t unfinished_here_ = 0;
  std::deque<WorkloadSpec> daemon_workloads_;  // the daemons' (ProgramInstance keeps a reference)
  std::unique_ptr<PcapWriter> pcap_;           // with several processes, rank 0's only
  std::unique_ptr<HeldCapture> held_capture_;  // with several blocks: the records, in place order at the end
  int pcap_erf_type_ = -1;                     // the capture format's ERF record type, or -1: raw frames
  std::vector<std::unique_ptr<PortWatch>> port_watches_;
  std::unique_ptr<Fingerprint> fingerprint_;
  std::vector<Fingerprint> block_fingerprints_;  // with several blocks: each block's, the world's last
};

}  // namespace nicsim
