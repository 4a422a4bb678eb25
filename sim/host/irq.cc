// The interrupt controller: one SC_THREAD per node delivers raised lines and
// expired timers in order, each after the interrupt entry cost.
#include <fmt/format.h>

#include "core/sim.h"
#include "host/host.h"
#include "trace/trace.h"

namespace nicsim::host {

const std::string InterruptController::kNone;

InterruptController::InterruptController(Host& host) : host_(host) {}

int InterruptController::attach(std::string name, Handler handler) {
  lines_.push_back(Line{std::move(name), std::move(handler)});
  return static_cast<int>(lines_.size() - 1);
}

bool InterruptController::request(int vector, std::string name, Handler handler) {
  if (vector < 0 || static_cast<std::size_t>(vector) >= lines_.size() || lines_[vector].handler || !handler) {
    Sim::get().error(host_.name(),
                     fmt::format("request of interrupt line {} by {}: {}", vector, name,
                                 vector < 0 || static_cast<std::size_t>(vector) >= lines_.size() ? "no such line"
                                 : handler                                                       ? "already taken"
                                                                                                 : "no handler"));
    return false;
  }
  lines_[vector].name = std::move(name);
  lines_[vector].handler = std::move(handler);
  return true;
}

void InterruptController::detach(int vector) {
  if (vector < 0 || static_cast<std::size_t>(vector) >= lines_.size()) {
    Sim::get().error(host_.name(), fmt::format("detach of unknown interrupt vector {}", vector));
    return;
  }
  lines_[vector].handler = nullptr;
}

void InterruptController::raise(int vector) {
  if (vector < 0 || static_cast<std::size_t>(vector) >= lines_.size()) {
    Sim::get().error(host_.name(), fmt::format("raise of unknown interrupt vector {}", vector));
    return;
  }
  Line& line = lines_[vector];
  Tracer& tr = Sim::get().tracer();
  bool traced = tr.on(host_.node_id(), Component::host);
  if (!line.handler) {
    // Hardware raising a line nobody listens to: a spurious interrupt. Not
    // an error of the simulation, but never silent.
    if (traced)
      tr.record(now(), host_.node_id(), Component::host, "irq_spurious", {{"vector", vector}, {"line", line.name}});
    return;
  }
  if (traced)
    tr.record(now(), host_.node_id(), Component::host, "irq_raise",
              {{"vector", vector}, {"line", line.name}, {"coalesced", line.pending ? 1 : 0}});
  if (line.pending) return;
  line.pending = true;
  queue_.push_back(Pending{vector, 0});
  Calendar::notify_now(kick_);
}

std::uint64_t InterruptController::delivered(int vector) const {
  if (vector < 0 || static_cast<std::size_t>(vector) >= lines_.size()) return 0;
  return lines_[vector].delivered;
}

void InterruptController::post_timer(std::uint64_t timer_id) {
  queue_.push_back(Pending{-1, timer_id});
  Calendar::notify_now(kick_);
}

void InterruptController::run_handler(const std::string& name, const Handler& handler) {
  running_ = &name;
  host_.in_interrupt_ = true;
  handler();
  host_.in_interrupt_ = false;
  running_ = &kNone;
}

void InterruptController::thread_body() {
  for (;;) {
    if (queue_.empty()) Calendar::sync_thread();
    while (queue_.empty()) sc_core::wait(kick_);
    Pending p = queue_.front();
    queue_.pop_front();
    Tick entry = host_.cost_of("interrupt_entry");
    if (entry) Sim::get().calendar().thread_wait_until(now() + entry);
    Tracer& tr = Sim::get().tracer();
    bool traced = tr.on(host_.node_id(), Component::host);
    if (p.vector < 0) {
      auto it = host_.timers_.find(p.timer_id);
      if (it == host_.timers_.end()) continue;  // cancelled or destroyed since it expired
      Timer* timer = it->second;
      host_.timers_.erase(it);
      timer->armed_ = false;
      // Copies: the callback may re-arm, rename or destroy its own timer.
      std::string name = timer->name_;
      Handler callback = timer->callback_;
      if (traced) tr.record(now(), host_.node_id(), Component::host, "timer_fire", {{"timer", name}});
      run_handler(name, callback);
      continue;
    }
    Line& line = lines_[p.vector];
    // Cleared only now: raises during the entry cost are served by this
    // delivery, as with a level-triggered line.
    line.pending = false;
    if (!line.handler) continue;  // detached while pending: the driver no longer wants it
    ++line.delivered;
    if (traced)
      tr.record(now(), host_.node_id(), Component::host, "irq_deliver", {{"vector", p.vector}, {"line", line.name}});
    Handler handler = line.handler;  // detach() from inside the handler must not destroy it
    run_handler(line.name, handler);
  }
}

}  // namespace nicsim::host
