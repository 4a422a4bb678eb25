// Calendar ordering: events fire at their times, equal times in scheduling
// order, whichever of the calendar's heaps (near events, far events) holds
// them; withdrawn events never fire.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <set>
#include <utility>
#include <vector>

#include "core/sim.h"

using namespace nicsim;

namespace {

// Distances an event is scheduled ahead of now(): ties at now, hops, both
// sides of the near/far boundary, bus completions, timeouts and timers.
constexpr Tick kDistances[] = {0,        1,        7 * kNs,   100 * kNs, 249 * kNs, 250 * kNs, 251 * kNs,
                               800 * kNs, 1 * kUs, 7 * kUs,   20 * kUs,  1 * kMs};

// Schedules random events from random events and checks every firing
// against an ordered set of what is pending: (time, scheduling order).
struct OrderCheck {
  Calendar& calendar;
  std::mt19937_64 rng{12345};
  std::set<std::pair<Tick, std::uint64_t>> pending;  // (time, id); ids grow in scheduling order
  std::vector<Tick> time_of;                         // by id
  std::vector<std::uint64_t> handle_of;              // by id; 0 when not cancellable
  std::uint64_t fired = 0;
  std::uint64_t cancelled = 0;
  std::uint64_t budget = 20000;  // events still to schedule
  std::vector<std::uint64_t> failures;

  explicit OrderCheck(Calendar& c) : calendar(c) {}

  void schedule() {
    const Tick t = Calendar::now() + kDistances[rng() % std::size(kDistances)];
    const std::uint64_t id = time_of.size();
    time_of.push_back(t);
    pending.insert({t, id});
    --budget;
    if (rng() % 8 == 0) {
      handle_of.push_back(calendar.at_cancellable(t, &OrderCheck::fire, this, id));
    } else {
      handle_of.push_back(0);
      calendar.at(t, &OrderCheck::fire, this, id);
    }
  }

  static void fire(void* self, std::uint64_t id) { static_cast<OrderCheck*>(self)->fired_event(id); }

  void fired_event(std::uint64_t id) {
    ++fired;
    if (pending.empty() || pending.begin()->second != id || Calendar::now() != time_of[id]) {
      failures.push_back(id);
    }
    pending.erase({time_of[id], id});
    // Withdraw a pending cancellable event now and then, and sometimes one
    // that has already fired (which must do nothing).
    if (rng() % 4 == 0) {
      const std::uint64_t other = rng() % time_of.size();
      if (handle_of[other] != 0) {
        if (pending.erase({time_of[other], other}) == 1) ++cancelled;
        calendar.cancel(handle_of[other]);
      }
    }
    const int children = static_cast<int>(rng() % 4);
    for (int i = 0; i < children && budget > 0; ++i) schedule();
  }
};

TEST(Calendar, FiresInTimeThenSchedulingOrderAcrossNearAndFarEvents) {
  Sim sim{1};
  OrderCheck check(sim.calendar());
  for (int i = 0; i < 64; ++i) check.schedule();
  sc_core::sc_start();
  EXPECT_TRUE(check.failures.empty()) << check.failures.size() << " events fired out of order or off time, first id "
                                      << check.failures.front();
  EXPECT_TRUE(check.pending.empty()) << check.pending.size() << " events never fired";
  EXPECT_EQ(check.fired + check.cancelled, check.time_of.size());
  EXPECT_GT(check.cancelled, 100u);
  EXPECT_GT(check.time_of.size(), 10000u);
}

}  // namespace
