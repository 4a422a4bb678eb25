#include "world/world.h"

#include <fmt/format.h>

#include <cmath>
#include <cstring>
#include <map>

#include "core/sanitizer.h"
#include "core/sim.h"
#include "host/api_call.h"
#include "fabric/raw_nic.h"
#include "fabric/remote_device.h"
#include "trace/timeline.h"
#include "trace/trace.h"

namespace nicsim {

// One port's tap: what it feeds (the capture, the fingerprint) and the
// port's identity in the fingerprint.
struct World::PortWatch {
  World* world;
  fabric::Port* port;
  std::string link;
  std::uint64_t key;  // device id and port number
  bool capture = false;
};

namespace {
World* g_world = nullptr;
}  // namespace

World* World::current() { return g_world; }

World::World(const Scenario& scenario, RankTransport* transport) : transport_(transport), scenario_(scenario) {
  if (g_world) throw std::logic_error("a second World in one process");
  g_world = this;
  try {
    build();
  } catch (...) {
    g_world = nullptr;  // a world that failed to build is no world
    throw;
  }
}

void World::build() {
  partition_ = plan_partition(scenario_);
  Sim::get().calendar().set_blocks(partition_.blocks);
  fabric_.pool().set_blocks(partition_.blocks);
  if (transport_) set_up_distributed(*transport_);
  build_devices();
  build_links();
  assign_addresses_and_routes();
  std::vector<Node*> nodes;
  for (auto& n : nodes_) nodes.push_back(n.get());
  mgmt_ = std::make_unique<MgmtNet>(scenario_.mgmt, nodes);
  if (exchange_) {
    fabric::Port::register_cross_events(fabric_, *exchange_);
    mgmt_->register_cross_events(*exchange_);
  }
  for (std::uint32_t w = 0; w < scenario_.workloads.size(); ++w) {
    const WorkloadSpec& spec = scenario_.workloads[w];
    const ProgramInfo* info = ProgramRegistry::instance().find(spec.program);
    if (!info) throw std::logic_error(fmt::format("program '{}' vanished after validation", spec.program));
    for (std::uint32_t rank = 0; rank < spec.nodes.size(); ++rank)
      programs_.push_back(std::make_unique<ProgramInstance>(*info, spec, w, rank, *nodes_[spec.nodes[rank]]));
  }
}

// What the world built goes in this order: first the threads of its nodes,
// wherever they are blocked (their stacks unwind while everything they use
// still exists), then the members, newest first. A calendar that ran is
// stopped first, so that no hardware event fires while the threads end (a
// run cut at its stop time may have some due at that very time).
World::~World() {
  if (timeline_api_slot_) host::ApiCalls::remove(*timeline_api_slot_);
  if (Sim::exists() && sc_core::sc_get_status() == sc_core::SC_PAUSED) Sim::get().calendar().request_stop();
  std::vector<host::Host*> hosts;
  for (auto& n : nodes_)
    if (n->runs_here()) hosts.push_back(&n->host());
  host::Host::end_threads(hosts);
  g_world = nullptr;
}

void World::build_devices() {
  const auto n = static_cast<std::uint32_t>(scenario_.nodes.size());
  Calendar& calendar = Sim::get().calendar();
  StatsRegistry& stats = Sim::get().stats();
  for (std::uint32_t i = 0; i < n; ++i) {
    const std::uint32_t block = partition_.device_block[i];
    Calendar::BlockScope as_node(calendar, block);
    stats.set_device(i);
    nodes_.push_back(std::make_unique<Node>(scenario_.nodes[i], i, fabric_, runs_device(i)));
    nodes_.back()->set_block(block);
    device_names_.push_back(scenario_.nodes[i].name);
  }
  for (std::uint32_t j = 0; j < scenario_.switches.size(); ++j) {
    const SwitchSpec& s = scenario_.switches[j];
    const SwitchKind* kind = NetworkKinds::instance().switch_kind(s.kind);
    if (!kind) throw std::logic_error(fmt::format("switch kind '{}' vanished after validation", s.kind));
    const std::uint32_t block = partition_.device_block[n + j];
    Calendar::BlockScope as_switch(calendar, block);
    const bool here = runs_device(n + j);
    stats.set_device(n + j);
    if (here)
      switches_.push_back(kind->make(fabric_, n + j, s, scenario_));
    else
      switches_.push_back(std::make_unique<fabric::RemoteDevice>(fabric_, n + j, s.name, s.ports, s.params));
    switches_.back()->set_block(block);
    device_names_.push_back(s.name);
  }
  stats.set_device(std::nullopt);
  Sim& sim = Sim::get();
  sim.tracer().set_devices(device_names_);
  sim.timeline().set_devices(device_names_);
}

// A process that runs part of the world builds the links with an end on
// its own devices, with stand-ins for their far ends that other processes
// run; of the rest it keeps only who is wired to whom (fabric::Wiring).
std::pair<std::uint32_t, std::uint32_t> World::link_ends(std::uint32_t scenario_index) const {
  const LinkSpec& l = scenario_.links.at(scenario_index);
  const auto nodes = static_cast<std::uint32_t>(scenario_.nodes.size());
  auto device_of = [&](const LinkEnd& e) { return e.kind == LinkEnd::Kind::Node ? e.index : nodes + e.index; };
  return {device_of(l.a), device_of(l.b)};
}

void World::build_links() {
  auto port_of = [&](const LinkEnd& e) -> fabric::Port& {
    if (e.kind == LinkEnd::Kind::Node) {
      Node& node = *nodes_[e.index];
      return node.runs_here() ? node.nic().port(e.port) : node.stand_in_port(e.port);
    }
    if (auto* remote = dynamic_cast<fabric::RemoteDevice*>(switches_[e.index].get())) return remote->stand_in(e.port);
    return switches_[e.index]->port(e.port);
  };
  for (std::uint32_t i = 0; i < scenario_.links.size(); ++i) {
    const LinkSpec& l = scenario_.links[i];
    const auto [a, b] = link_ends(i);
    if (!runs_device(a) && !runs_device(b)) {
      fabric_.add_unbuilt_link({a, l.a.port}, {b, l.b.port});
      links_.push_back(nullptr);
      continue;
    }
    links_.push_back(&fabric_.connect(l.name, port_of(l.a), port_of(l.b), l.params, Sim::get().seed()));
  }
  for (std::uint32_t i : partition_.cut_links)
    if (links_[i]) links_[i]->set_cut();
}

// A network kind that manages its fabric (a subnet manager) addresses and
// routes it on the wire. Otherwise: addresses in scenario order (node 0
// port 1 is 1, then its other ports, then the next node), except for nodes
// whose network gave them a fixed address; then static routes.
void World::assign_addresses_and_routes() {
  for (const WorldHook& h : NetworkKinds::instance().world_hooks())
    if (h.manage_fabric && h.manage_fabric(*this)) return;
  std::vector<EndpointAddress> endpoints;
  std::uint16_t next = 1;
  for (auto& node : nodes_) {
    if (node->spec().address >= 0) {
      node->set_lid(1, static_cast<std::uint16_t>(node->spec().address));
      node->nic().assign_network_size(node->spec().network_size);
      continue;
    }
    for (std::uint32_t p = 1; p <= node->nic().num_ports(); ++p) {
      if (next >= fabric::kMulticastLidBase)
        throw std::runtime_error(
            fmt::format("the scenario has more node ports than unicast addresses ({}); node '{}' port {} gets none",
                        fabric::kMulticastLidBase - 1, node->name(), p));
      node->set_lid(p, next);
      endpoints.push_back({&node->nic(), p, next});
      ++next;
    }
  }
  program_static_routes(endpoints);
}

// Each switch kind programs its own switches; multicast groups span the
// members' first ports.
void World::program_static_routes(const std::vector<EndpointAddress>& endpoints) {
  std::map<std::string, std::vector<fabric::Device*>> by_kind;
  for (std::uint32_t j = 0; j < switches_.size(); ++j)
    by_kind[scenario_.switches[j].kind].push_back(switches_[j].get());
  for (const auto& [name, switches] : by_kind) {
    const SwitchKind* kind = NetworkKinds::instance().switch_kind(name);
    if (kind->program_routes) kind->program_routes(switches, endpoints);
  }
  for (const MulticastGroupSpec& g : scenario_.multicast) {
    std::vector<EndpointAddress> members;
    for (std::uint32_t m : g.members) {
      Node& node = *nodes_[m];
      members.push_back({&node.nic(), 1, node.lid(1)});
      if (auto* raw = node.nic_as<fabric::RawNic>()) raw->join_multicast(static_cast<std::uint16_t>(g.mlid));
    }
    for (const auto& [name, switches] : by_kind) {
      const SwitchKind* kind = NetworkKinds::instance().switch_kind(name);
      if (kind->program_multicast) kind->program_multicast(switches, static_cast<std::uint16_t>(g.mlid), members);
    }
  }
}

void World::start_daemon(const std::string& program, std::uint32_t node, std::vector<std::string> args,
                         const SourceLoc& loc) {
  const ProgramInfo* info = ProgramRegistry::instance().find(program);
  if (!info) throw std::logic_error(fmt::format("the {} program is not registered", program));
  WorkloadSpec& spec = daemon_workloads_.emplace_back();
  spec.program = program;
  spec.nodes = {node};
  spec.start = 0;
  spec.args = std::move(args);
  spec.loc = loc;
  const auto index = static_cast<std::uint32_t>(scenario_.workloads.size() + daemon_workloads_.size() - 1);
  programs_.push_back(std::make_unique<ProgramInstance>(*info, spec, index, 0, *nodes_[node]));
  programs_.back()->daemon = true;
}

void World::gather_outputs() {
  if (!exchange_) return;
  Sim& sim = Sim::get();
  RankTransport& t = exchange_->transport();
  for (const std::string& part : gather_in_pieces(t, sim.tracer().export_held())) sim.tracer().import_held(part);
  for (const std::string& part : gather_in_pieces(t, sim.timeline().export_held())) sim.timeline().import_held(part);
  if (held_capture_)
    for (std::string& part : gather_in_pieces(t, held_capture_->export_held()))
      if (!held_capture_->import_held(std::move(part))) throw std::logic_error("a rank's capture records were cut");
  if (!block_fingerprints_.empty()) {
    // Each rank's blocks' hashes, as (block, value) pairs.
    std::string mine;
    for (std::uint32_t b = 0; b < block_fingerprints_.size(); ++b) {
      if (!exchange_->local(b)) continue;
      const std::uint64_t pair[2] = {b, block_fingerprints_[b].value()};
      mine.append(reinterpret_cast<const char*>(pair), sizeof pair);
    }
    for (const std::string& part : t.gather(mine))
      for (std::size_t at = 0; at + 16 <= part.size(); at += 16) {
        std::uint64_t pair[2];
        std::memcpy(pair, part.data() + at, sizeof pair);
        block_fingerprints_.at(pair[0]) = Fingerprint(pair[1]);
      }
  }
}

void World::close_outputs() {
  if (timeline_api_slot_) host::ApiCalls::remove(*timeline_api_slot_);
  timeline_api_slot_.reset();
  Sim::get().tracer().close();
  Sim::get().timeline().close();
  if (held_capture_ && pcap_) held_capture_->write_to(*pcap_);
  held_capture_.reset();
  if (pcap_) pcap_->close();
}

void World::open_outputs(const std::string& trace_path, const std::string& timeline_path,
                         const std::string& pcap_path) {
  Sim& sim = Sim::get();
  // Rank 0 writes what every rank held (gather_outputs).
  const bool writes = !exchange_ || exchange_->rank() == 0;
  if (partition_.blocks > 1) {
    sim.tracer().hold_in_device_order(writes);
    sim.timeline().hold_in_device_order(writes);
  }
  if (!pcap_path.empty() && !scenario_.outputs.pcap_links.empty()) {
    const PcapFormat* format = NetworkKinds::instance().pcap_format(scenario_.outputs.pcap_format);
    if (!format) throw std::logic_error(fmt::format("capture format '{}' vanished", scenario_.outputs.pcap_format));
    pcap_erf_type_ = format->erf_type;
    if (writes) {
      pcap_ = std::make_unique<PcapWriter>();
      if (!pcap_->open(pcap_path, format->link_type))
        throw std::runtime_error(fmt::format("cannot write {}", pcap_path));
    }
    if (partition_.blocks > 1) held_capture_ = std::make_unique<HeldCapture>(pcap_erf_type_);
    install_port_taps();
    for (auto& watch : port_watches_)
      for (const auto& g : scenario_.outputs.pcap_links) watch->capture = watch->capture || glob_match(g, watch->link);
    install_port_taps();
  }
  if (!trace_path.empty() && !scenario_.outputs.trace.empty()) {
    for (const TraceSelect& t : scenario_.outputs.trace)
      sim.tracer().enable(t.device, t.component == "*" ? std::nullopt : trace_component_from_name(t.component));
    if (!sim.tracer().open(trace_path)) throw std::runtime_error(fmt::format("cannot write {}", trace_path));
  }
  const bool timeline = !timeline_path.empty() && scenario_.outputs.timeline;
  if (timeline) {
    // A device's tracks are numbered where it runs, by its links' order
    // there; a stand-in's port sends nothing and has none.
    for (auto& l : fabric_.links())
      for (fabric::Port* p : {&l->a(), &l->b()})
        if (!p->owner().runs_elsewhere())
          p->timeline_track = sim.timeline().track(p->owner().device_id(), fmt::format("port {} tx", p->number()));
    if (!sim.timeline().open(timeline_path, scenario_.outputs.timeline_max_events))
      throw std::runtime_error(fmt::format("cannot write {}", timeline_path));
    timeline_api_slot_ = host::ApiCalls::add(&World::api_call_on_timeline, this);
  }
  // A stand-in's port sends nothing here: tracing it would only cost the
  // carried replies their fast path.
  for (auto& l : fabric_.links())
    for (fabric::Port* p : {&l->a(), &l->b()}) {
      if (p->owner().runs_elsewhere()) continue;
      p->trace_on = sim.tracer().on(p->owner().device_id(), Component::fabric);
      if (p->trace_on) fabric_.watch_ports();
    }
  if (timeline || !trace_path.empty()) {
    sim.fsm().listen([&sim](const FsmTransitionEvent& ev) {
      const auto& type = ev.fsm.type();
      if (sim.tracer().on(ev.fsm.device(), Component::fsm))
        sim.tracer().record(ev.time, ev.fsm.device(), Component::fsm, "transition",
                            {{"fsm", type.name()},
                             {"object", ev.fsm.object()},
                             {"from", type.state_name(ev.from)},
                             {"to", type.state_name(ev.to)},
                             {"event", type.event_name(ev.event)},
                             {"cause", ev.cause}});
      if (sim.timeline().enabled()) {
        auto track = sim.timeline().track(ev.fsm.device(), fmt::format("fsm {}", ev.fsm.object()));
        sim.timeline().instant(
            ev.fsm.device(), track,
            fmt::format("{}: {} -> {}", type.event_name(ev.event), type.state_name(ev.from), type.state_name(ev.to)),
            ev.time);
      }
    });
  }
}

void World::api_call_on_timeline(void*, host::Host* node, const char* name) {
  Timeline& tl = Sim::get().timeline();
  if (!node || !tl.enabled()) return;
  const host::HostThread* thread = node->current();
  const std::uint32_t device = node->node_id();
  const std::uint32_t track = tl.track(device, thread ? "thread " + thread->name() : std::string("interrupts"));
  tl.instant(device, track, name, now());
}

void World::install_port_taps() {
  if (port_watches_.empty())
    for (auto& l : fabric_.links())
      for (fabric::Port* p : {&l->a(), &l->b()})
        port_watches_.push_back(std::make_unique<PortWatch>(
            PortWatch{this, p, l->name(), std::uint64_t{p->owner().device_id()} << 16 | p->number()}));
  for (auto& watch : port_watches_)
    if (watch->capture || fingerprint_) watch->port->set_tap(&World::port_tap, watch.get());
}

void World::port_tap(void* ctx, const fabric::Packet& pkt, Tick start) {
  const auto* watch = static_cast<const PortWatch*>(ctx);
  World& w = *watch->world;
  if (w.fingerprint_) {
    // What the fabric knows of the packet, not its bytes: a NIC may put
    // host addresses of the simulator's own process on the wire (RDMA
    // virtual addresses), and those move from run to run.
    const fabric::PacketMeta& m = pkt.meta;
    Fingerprint& f = w.trajectory_hash();
    f.add(watch->key);
    f.add(start);
    f.add(pkt.bytes.size());
    f.add(std::uint64_t{m.src_node} << 32 | std::uint64_t{m.slid} << 16 | m.dlid);
    f.add(std::uint64_t{m.dlid_hi} << 32 | std::uint64_t{m.vl} << 24 | std::uint64_t{m.kind} << 16 | m.hops);
    f.add(m.created);
  }
  if (watch->capture) {
    if (w.held_capture_)
      w.held_capture_->add(start, static_cast<std::uint32_t>(watch->key >> 16), pkt.bytes.data(), pkt.bytes.size());
    else if (w.pcap_erf_type_ < 0)
      w.pcap_->write(start, pkt.bytes.data(), pkt.bytes.size());
    else
      w.pcap_->write_erf(start, static_cast<std::uint8_t>(w.pcap_erf_type_), pkt.bytes.data(), pkt.bytes.size());
  }
}

void World::enable_fingerprint() {
  if (fingerprint_) return;
  fingerprint_ = std::make_unique<Fingerprint>();
  if (partition_.blocks > 1) block_fingerprints_.assign(partition_.blocks + 1, Fingerprint());
  install_port_taps();
  Sim::get().fsm().listen([this](const FsmTransitionEvent& ev) {
    const FsmType& type = ev.fsm.type();
    Fingerprint& f = trajectory_hash();
    f.add(ev.time);
    f.add(type.name());
    f.add(ev.fsm.object());
    f.add(type.state_name(ev.from));
    f.add(type.event_name(ev.event));
    f.add(type.state_name(ev.to));
  });
}

Fingerprint& World::trajectory_hash() {
  if (block_fingerprints_.empty()) return *fingerprint_;
  return block_fingerprints_[Sim::get().calendar().current_block()];
}

// With several blocks: the block count, then each block's hash in block
// order (the world's own last).
std::string World::fingerprint() const {
  if (!fingerprint_) return {};
  if (block_fingerprints_.empty()) return fingerprint_->hex();
  Fingerprint run;
  run.add(block_fingerprints_.size());
  for (const Fingerprint& b : block_fingerprints_) run.add(b.value());
  return run.hex();
}

void World::schedule_faults() {
  if (partition_.blocks > 1) return schedule_end_faults();
  flap_rngs_.clear();
  for (std::size_t i = 0; i < scenario_.faults.size(); ++i) {
    flap_rngs_.push_back(Sim::get().stream(fmt::format("fault.flaps.{}", i)));
    Sim::get().calendar().at(scenario_.faults[i].at, &World::fault_thunk, this, i);
  }
}

void World::flap_down(std::size_t index) {
  const FaultSpec& f = scenario_.faults[index];
  links_[f.link]->set_up(false, "flap");
  Sim::get().calendar().at(now() + f.down_for, &World::flap_up_thunk, this, index);
}

void World::flap_up_thunk(void* self, std::uint64_t index) {
  auto* w = static_cast<World*>(self);
  const FaultSpec& f = w->scenario_.faults[index];
  w->links_[f.link]->set_up(true, "flap");
  // Exponential gaps between flaps (a Poisson process of failures).
  const double gap = -std::log1p(-w->flap_rngs_[index].uniform()) * static_cast<double>(f.mean_interval);
  const Tick next = now() + static_cast<Tick>(gap) + 1;
  if (next < f.until) Sim::get().calendar().at(next, &World::fault_thunk, self, index);
}

void World::fault_thunk(void* self, std::uint64_t index) {
  auto* w = static_cast<World*>(self);
  const FaultSpec& f = w->scenario_.faults[index];
  fabric::Link& link = *w->links_[f.link];
  Sim& sim = Sim::get();
  const std::uint32_t dev = link.a().owner().device_id();
  const char* what = "";
  switch (f.kind) {
    case FaultSpec::Kind::LinkDown:
      link.set_up(false, "fault");
      what = "link_down";
      break;
    case FaultSpec::Kind::LinkUp:
      link.set_up(true, "fault");
      what = "link_up";
      break;
    case FaultSpec::Kind::DropRate:
      link.set_drop_rate(f.value);
      what = "drop_rate";
      break;
    case FaultSpec::Kind::BitErrorRate:
      link.set_bit_error_rate(f.value);
      what = "bit_error_rate";
      break;
    case FaultSpec::Kind::Flaps:
      w->flap_down(index);
      what = "flap";
      break;
  }
  if (sim.tracer().on(dev, Component::fault))
    sim.tracer().record(now(), dev, Component::fault, what, {{"link", link.name()}, {"value", f.value}});
}

void World::program_finished(const ProgramInstance& program) {
  if (program.daemon || !runs_device(program.node().id())) return;
  --unfinished_here_;
  // With blocks, the run's windows check for the end (run_blocks).
  if (unfinished_here_ == 0 && partition_.blocks == 1) Sim::get().calendar().at(now(), &World::idle_check, this);
}

void World::idle_check(void* self, std::uint64_t) {
  auto* w = static_cast<World*>(self);
  bool idle = w->fabric_.pool().live() == 0;
  for (auto& n : w->nodes_) idle = idle && n->bus().in_flight() == 0;
  if (idle)
    Sim::get().calendar().request_stop();
  else
    Sim::get().calendar().after(1 * kUs, &World::idle_check, w);
}

RunStatus World::run() {
  // Nodes come up before the run: each probes its bus and binds its drivers
  // (host/pci.h), so that time 0 finds them booted.
  Calendar& calendar = Sim::get().calendar();
  for (auto& n : nodes_) {
    if (!n->runs_here()) continue;
    Calendar::BlockScope as_node(calendar, n->block());
    n->bus().bind_drivers();
  }
  for (auto& p : programs_) {
    if (!p->node().runs_here()) continue;
    Calendar::BlockScope as_node(calendar, p->node().block());
    p->start();
    if (!p->daemon) ++unfinished_here_;
  }
  schedule_faults();
  if (partition_.blocks > 1) return run_blocks();
  const Tick stop = scenario_.stop_time;
  if (stop) Calendar::set_horizon(stop);
  if (stop)
    sc_core::sc_start(Calendar::to_sc(stop), sc_core::SC_EXIT_ON_STARVATION);
  else
    sc_core::sc_start();
  Calendar::check_threads_synced();
  // Exit-on-starvation stops at the last activity before the stop time; if
  // anything is still pending the run was cut by the stop time, so the
  // clock moves on to it (nothing is due before it).
  const bool cut = stop && !Sim::get().calendar().stop_requested() && sc_core::sc_pending_activity();
  if (cut && now() < stop) sc_core::sc_start(Calendar::to_sc(stop - now()), sc_core::SC_RUN_TO_TIME);
  sanitizer_on_main_stack();
  RunStatus status;
  status.end_time = now();
  for (auto& p : programs_)
    if (!p->daemon && (p->state() == ProgramState::Pending || p->state() == ProgramState::Running))
      status.all_finished = false;
  if (!status.all_finished) explain_unfinished(cut);
  status.ok = status.all_finished && Sim::get().errors().empty();
  for (auto& p : programs_)
    if (p->state() == ProgramState::Failed) status.ok = false;
  return status;
}

void World::explain_unfinished(bool stopped_by_time) {
  for (auto& p : programs_) {
    if (p->daemon || (p->state() != ProgramState::Pending && p->state() != ProgramState::Running)) continue;
    if (!runs_device(p->node().id())) continue;  // its own process explains it
    host::HostThread* t = p->main_thread();
    std::string where = fmt::format("{}.{}", p->node().name(), p->info().name);
    if (stopped_by_time)
      Sim::get().error(where, fmt::format("did not finish by stop_time {}", format_time(scenario_.stop_time)));
    else
      Sim::get().error(where, fmt::format("deadlock: nothing left to simulate while the program is blocked in {}",
                                          t && t->blocked_in() ? t->blocked_in() : "an unknown wait"));
  }
}

}  // namespace nicsim
