// A world split into partition blocks runs in windows (docs/partition.md):
// every process runs the events of its blocks up to the window's end, then
// the processes exchange the events that cross to another's blocks, and
// agree on the next window or on the end of the run. With one process the
// windows are only where the run may end.
#include <fmt/format.h>

#include <chrono>
#include <cmath>

#include "core/sim.h"
#include "trace/trace.h"
#include "world/world.h"

namespace nicsim {

namespace {

// A run split into blocks ends at a multiple of this, the first after its
// last program finished at which nothing is in flight (no packet, no host
// bus transaction), so that where it ends does not depend on which
// process saw what first.
constexpr Tick kEndCheck = 1 * kUs;

Tick grid_after(Tick t) { return (t / kEndCheck + 1) * kEndCheck; }
Tick grid_at_or_after(Tick t) { return (t + kEndCheck - 1) / kEndCheck * kEndCheck; }

// Runs the kernel until just before `end`: every event before it fires,
// none at it (SystemC leaves activity at the end time pending).
void run_until(Tick end) {
  Calendar::set_horizon(end);
  sc_core::sc_start(Calendar::to_sc(end - Calendar::sc_clock()), sc_core::SC_RUN_TO_TIME);
  Calendar::check_threads_synced();
}

}  // namespace

struct World::BlockTotals {
  Tick next = kTickMax;      // the earliest pending event anywhere
  Tick last_active = 0;      // the latest window start in which an event fired
  bool all_finished = true;  // no program anywhere is pending or running
  bool idle = true;          // nothing in flight anywhere
};

void World::set_up_distributed(RankTransport& transport) {
  const auto ranks = static_cast<std::uint32_t>(transport.ranks());
  if (partition_.blocks < ranks)
    throw std::runtime_error(
        fmt::format("{} processes need at least as many partition blocks; the scenario has {} "
                    "(nicsim run --blocks=N)",
                    ranks, partition_.blocks));
  // Consecutive blocks to each rank: neighbouring blocks (grown one after
  // another) share their cut links within a process.
  std::vector<int> rank_of_block(partition_.blocks + 1, 0);
  for (std::uint32_t b = 0; b < partition_.blocks; ++b)
    rank_of_block[b] = static_cast<int>(std::uint64_t{b} * ranks / partition_.blocks);
  exchange_ = std::make_unique<BlockExchange>(transport, rank_of_block);
  std::vector<bool> local(rank_of_block.size());
  for (std::size_t b = 0; b < local.size(); ++b) local[b] = exchange_->local(static_cast<std::uint32_t>(b));
  Sim::get().calendar().set_exchange(exchange_.get(), local);
  std::vector<bool> devices(partition_.device_block.size());
  for (std::size_t d = 0; d < devices.size(); ++d) devices[d] = local[partition_.device_block[d]];
  Sim::get().fsm().count_only(std::move(devices));
}

bool World::runs_device(std::uint32_t id) const {
  return !exchange_ || exchange_->local(partition_.device_block.at(id));
}

void World::schedule_end_faults() {
  flap_rngs_.clear();
  Calendar& calendar = Sim::get().calendar();
  for (std::size_t i = 0; i < scenario_.faults.size(); ++i) {
    // A link with no end here is not built here: other processes fault it.
    const fabric::Link* link = links_[scenario_.faults[i].link];
    for (std::uint64_t end = 0; end < 2; ++end) {
      // Both ends draw the same stream, each its own copy.
      flap_rngs_.push_back(Sim::get().stream(fmt::format("fault.flaps.{}", i)));
      if (!link) continue;
      Calendar::BlockScope as_end(calendar, (end ? link->b() : link->a()).owner().block());
      calendar.at(scenario_.faults[i].at, &World::end_fault_thunk, this, i * 2 + end);
    }
  }
}

void World::end_fault_thunk(void* self, std::uint64_t fault_and_end) {
  auto* w = static_cast<World*>(self);
  const FaultSpec& f = w->scenario_.faults[fault_and_end / 2];
  fabric::Link& link = *w->links_[f.link];
  fabric::Port& end = fault_and_end % 2 ? link.b() : link.a();
  const char* what = "";
  switch (f.kind) {
    case FaultSpec::Kind::LinkDown:
      link.set_end_up(end, false, "fault");
      what = "link_down";
      break;
    case FaultSpec::Kind::LinkUp:
      link.set_end_up(end, true, "fault");
      what = "link_up";
      break;
    case FaultSpec::Kind::DropRate:
      link.set_end_rates(end, f.value, link.bit_error_rate());
      what = "drop_rate";
      break;
    case FaultSpec::Kind::BitErrorRate:
      link.set_end_rates(end, link.drop_rate(), f.value);
      what = "bit_error_rate";
      break;
    case FaultSpec::Kind::Flaps:
      link.set_end_up(end, false, "flap");
      Sim::get().calendar().at(now() + f.down_for, &World::end_flap_up_thunk, self, fault_and_end);
      what = "flap";
      break;
  }
  Sim& sim = Sim::get();
  const std::uint32_t dev = link.a().owner().device_id();
  if (&end == &link.a() && sim.tracer().on(dev, Component::fault))
    sim.tracer().record(now(), dev, Component::fault, what, {{"link", link.name()}, {"value", f.value}});
}

void World::end_flap_up_thunk(void* self, std::uint64_t fault_and_end) {
  auto* w = static_cast<World*>(self);
  const FaultSpec& f = w->scenario_.faults[fault_and_end / 2];
  fabric::Link& link = *w->links_[f.link];
  link.set_end_up(fault_and_end % 2 ? link.b() : link.a(), true, "flap");
  const double gap = -std::log1p(-w->flap_rngs_[fault_and_end].uniform()) * static_cast<double>(f.mean_interval);
  const Tick next = now() + static_cast<Tick>(gap) + 1;
  if (next < f.until) Sim::get().calendar().at(next, &World::end_fault_thunk, self, fault_and_end);
}

// A window's end: what every process has left, reduced over them in the
// exchange that delivers the events crossing between them (each entry a
// minimum). What a process is about to send counts as pending and in flight.
World::BlockTotals World::end_window(Tick last_active) {
  Calendar& calendar = Sim::get().calendar();
  Tick next = calendar.next_time();
  if (sc_core::sc_pending_activity())
    next = std::min<Tick>(next, Calendar::sc_clock() + sc_core::sc_time_to_pending_activity().value());
  const bool finished = unfinished_here_ == 0;
  // Whether anything is in flight matters only once every program ended
  // (the run's end waits for both), so the buses are counted only then.
  std::uint64_t busy = fabric_.pool().live();
  if (finished)
    for (auto& n : nodes_)
      if (runs_device(n->id())) busy += n->bus().in_flight();
  if (exchange_) {
    next = std::min(next, exchange_->outgoing_earliest());
    busy += exchange_->outgoing();
  }
  std::uint64_t v[4] = {next, ~last_active, finished ? 1u : 0u, busy == 0 ? 1u : 0u};
  if (exchange_) {
    const auto t0 = std::chrono::steady_clock::now();
    exchange_->exchange(calendar, v, 4);
    sync_seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }
  ++windows_;
  return BlockTotals{v[0], ~v[1], v[2] == 1, v[3] == 1};
}

RunStatus World::run_blocks() {
  Calendar& calendar = Sim::get().calendar();
  const Tick stop = scenario_.stop_time ? scenario_.stop_time : kTickMax;
  const bool several = exchange_ && exchange_->transport().ranks() > 1;
  // Nothing one block does reaches another sooner than the lookahead.
  const Tick window = several ? std::max<Tick>(1, std::min<Tick>(partition_.lookahead, kEndCheck)) : kEndCheck;
  Tick reached = 0, last_active = 0, end = 0;
  std::uint64_t fired = calendar.events_fired();
  bool by_time = false;
  // Before the first window the kernel has not started the threads, so it
  // knows of no activity yet: the first window starts at 0.
  BlockTotals t{0, 0, false, false};
  for (;;) {
    if (t.all_finished && t.idle) {
      // Nothing changes before the next event: the run ends at the first
      // end check from here if nothing happens first.
      const Tick check = std::min(grid_at_or_after(reached), stop);
      if (t.next >= check) {
        end = check;
        break;
      }
    }
    if (t.next == kTickMax) {
      end = std::min(stop, std::max(reached, grid_after(t.last_active)));
      break;
    }
    if (t.next >= stop) {
      by_time = true;
      end = stop;
      break;
    }
    const Tick start = std::max(reached, t.next);
    const Tick until = std::min({start + window, grid_after(start), stop});
    run_until(until);
    if (calendar.events_fired() != fired) last_active = start;
    fired = calendar.events_fired();
    reached = until;
    write_capture_before(reached);
    t = end_window(last_active);
  }
  if (end > reached) run_until(end);
  RunStatus status;
  status.end_time = end;
  finish_blocks(status, by_time);
  return status;
}

// A process that runs every block writes the capture records no frame can
// still come before (each is stamped when its frame is put on the wire,
// never earlier than then) as the run goes, instead of holding them all.
void World::write_capture_before(Tick before) {
  if (held_capture_ && pcap_ && (!exchange_ || exchange_->transport().ranks() == 1))
    held_capture_->write_before(*pcap_, before);
}

void World::finish_blocks(RunStatus& status, bool stopped_by_time) {
  bool finished = true, failed = false;
  for (auto& p : programs_) {
    if (p->daemon || !runs_device(p->node().id())) continue;
    if (p->state() == ProgramState::Pending || p->state() == ProgramState::Running) finished = false;
    if (p->state() == ProgramState::Failed) failed = true;
  }
  if (!finished) explain_unfinished(stopped_by_time);
  std::uint64_t v[2] = {finished ? 1u : 0u, !failed && Sim::get().errors().empty() ? 1u : 0u};
  if (exchange_) exchange_->transport().all_reduce(v, 2, RankTransport::Op::Min);
  status.all_finished = v[0] != 0;
  status.ok = status.all_finished && v[1] != 0;
}

}  // namespace nicsim
