#include "core/sim.h"

#include <cstdio>
#include <cstdlib>

#include "fsm/fsm.h"
#include "trace/stats.h"
#include "trace/timeline.h"
#include "trace/trace.h"

namespace nicsim {

Sim::Sim(std::uint64_t seed)
    : seed_(seed),
      calendar_(std::make_unique<Calendar>("calendar")),
      tracer_(std::make_unique<Tracer>()),
      timeline_(std::make_unique<Timeline>()),
      stats_(std::make_unique<StatsRegistry>()),
      fsm_(std::make_unique<FsmRegistry>()) {
  if (current_) {
    std::fprintf(stderr, "nicsim: a second Sim was created in one process\n");
    std::abort();
  }
  current_ = this;
  // SystemC's own informational messages ("Simulation stopped by user")
  // would mix into nicsim's output; warnings and errors still show.
  sc_core::sc_report_handler::set_actions(sc_core::SC_INFO, sc_core::SC_DO_NOTHING);
}

Sim::~Sim() { current_ = nullptr; }

void Sim::no_context() {
  std::fprintf(stderr, "nicsim: no simulation context (create a nicsim::Sim first)\n");
  std::abort();
}

void Sim::error(std::string where, std::string message) { errors_.report(now(), std::move(where), std::move(message)); }

void SimErrors::report(Tick time, std::string where, std::string message) {
  errors_.push_back(SimError{time, std::move(where), std::move(message)});
  if (observer_) observer_(observer_ctx_, errors_.back());
}

}  // namespace nicsim
