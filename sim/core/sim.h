// The process-wide simulation context. SystemC itself has one kernel per
// process, so nicsim has one Sim per process too: the calendar, the seed, the
// error log, the tracer, the timeline, the statistics and the FSM registry.
// Tests create a fresh one per process (gtest_discover_tests runs one test
// per process).
#pragma once
#include <cstdint>
#include <memory>
#include <string>

#include "core/calendar.h"
#include "core/errors.h"
#include "core/rng.h"

namespace nicsim {

class Tracer;
class Timeline;
class StatsRegistry;
class FsmRegistry;

class Sim {
 public:
  explicit Sim(std::uint64_t seed);
  ~Sim();
  Sim(const Sim&) = delete;
  Sim& operator=(const Sim&) = delete;

  // The current context; aborts with a message if none. Inline: hardware
  // handlers ask for it on every packet.
  static Sim& get() {
    if (!current_) [[unlikely]]
      no_context();
    return *current_;
  }
  static bool exists() { return current_ != nullptr; }

  std::uint64_t seed() const { return seed_; }
  Rng stream(std::string_view name) const { return Rng(seed_, name); }
  Calendar& calendar() { return *calendar_; }
  SimErrors& errors() { return errors_; }
  Tracer& tracer() { return *tracer_; }
  Timeline& timeline() { return *timeline_; }
  StatsRegistry& stats() { return *stats_; }
  FsmRegistry& fsm() { return *fsm_; }

  // Convenience: report an error at the current simulated time.
  void error(std::string where, std::string message);

 private:
  [[noreturn]] static void no_context();
  static inline Sim* current_ = nullptr;
  std::uint64_t seed_;
  std::unique_ptr<Calendar> calendar_;
  SimErrors errors_;
  std::unique_ptr<Tracer> tracer_;
  std::unique_ptr<Timeline> timeline_;
  std::unique_ptr<StatsRegistry> stats_;
  std::unique_ptr<FsmRegistry> fsm_;
};

inline Tick now() { return Calendar::now(); }

}  // namespace nicsim
