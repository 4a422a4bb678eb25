#include "core/sim.h"

#include <cstdio>
#include <cstdlib>

#include "fsm/fsm.h"
#include "trace/stats.h"
#include "trace/timeline.h"
#include "trace/trace.h"

namespace nicsim {

namespace {
Sim* g_current = nullptr;
}

Sim::Sim(std::uint64_t seed)
    : seed_(seed),
      calendar_(std::make_unique<Calendar>("calendar")),
      tracer_(std::make_unique<Tracer>()),
      timeline_(std::make_unique<Timeline>()),
      stats_(std::make_unique<StatsRegistry>()),
      fsm_(std::make_unique<FsmRegistry>()) {
  if (g_current) {
    std::fprintf(stderr, "nicsim: a second Sim was created in one process\n");
    std::abort();
  }
  g_current = this;
  // SystemC's own informational messages ("Simulation stopped by user")
  // would mix into nicsim's output; warnings and errors still show.
  sc_core::sc_report_handler::set_actions(sc_core::SC_INFO, sc_core::SC_DO_NOTHING);
}

Sim::~Sim() { g_current = nullptr; }

Sim& Sim::get() {
  if (!g_current) {
    std::fprintf(stderr, "nicsim: no simulation context (create a nicsim::Sim first)\n");
    std::abort();
  }
  return *g_current;
}

bool Sim::exists() { return g_current != nullptr; }

void Sim::error(std::string where, std::string message) {
  errors_.report(now(), std::move(where), std::move(message));
}

void SimErrors::report(Tick time, std::string where, std::string message) {
  errors_.push_back(SimError{time, std::move(where), std::move(message)});
}

}  // namespace nicsim
