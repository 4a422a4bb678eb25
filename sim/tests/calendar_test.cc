// Calendar ordering: events fire at their times, equal times in scheduling
// order, wherever the calendar holds them (the sorted run of near events,
// the heap of far events, or the heap when the run is full); withdrawn
// events never fire.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <set>
#include <span>
#include <utility>
#include <vector>

#include "core/sim.h"

using namespace nicsim;

namespace {

// Distances an event is scheduled ahead of now(): ties at now, hops, both
// sides of the near/far boundary, bus completions, timeouts and timers.
constexpr Tick kDistances[] = {0,         1,         7 * kNs, 100 * kNs, 249 * kNs, 250 * kNs,
                               251 * kNs, 800 * kNs, 1 * kUs, 7 * kUs,   20 * kUs,  1 * kMs};

// Near-event bursts: many events due within the near distance (250 ns) at
// once, more than the sorted run holds, so some wait in the heap among
// later ones; ties at now and one picosecond apart.
constexpr Tick kNearDistances[] = {0, 0, 1, 2, 3 * kNs, 50 * kNs, 120 * kNs, 249 * kNs, 250 * kNs, 2 * kUs};

// Schedules random events from random events and checks every firing
// against an ordered set of what is pending: (time, scheduling order).
// Some events take their place in the order early (reserve_seq) and are
// scheduled later, from another event (at_reserved).
struct OrderCheck {
  Calendar& calendar;
  std::span<const Tick> distances;
  int max_children;
  std::mt19937_64 rng{12345};
  std::set<std::pair<Tick, std::uint64_t>> pending;  // (time, id); ids grow in scheduling (reservation) order
  std::vector<Tick> time_of;                         // by id
  std::vector<std::uint64_t> handle_of;              // by id; 0 when not cancellable
  std::vector<std::pair<std::uint64_t, std::uint64_t>> reserved;  // (id, seq) not yet scheduled
  std::uint64_t fired = 0;
  std::uint64_t cancelled = 0;
  std::uint64_t scheduled_reserved = 0;
  std::size_t most_pending_near = 0;  // the most events pending within 250 ns of now
  std::uint64_t budget = 20000;       // events still to schedule
  std::vector<std::uint64_t> failures;

  OrderCheck(Calendar& c, std::span<const Tick> d, int children) : calendar(c), distances(d), max_children(children) {}

  Tick pick_time() { return Calendar::now() + distances[rng() % distances.size()]; }

  void schedule() {
    --budget;
    if (rng() % 16 == 0) {
      reserved.push_back({time_of.size(), calendar.reserve_seq()});
      time_of.push_back(kTickMax);
      handle_of.push_back(0);
      return;
    }
    const Tick t = pick_time();
    const std::uint64_t id = time_of.size();
    time_of.push_back(t);
    pending.insert({t, id});
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
    // Schedule an event whose place was reserved earlier, now and then.
    if (!reserved.empty() && rng() % 2 == 0) {
      const std::size_t pick = rng() % reserved.size();
      const auto [rid, seq] = reserved[pick];
      reserved.erase(reserved.begin() + static_cast<std::ptrdiff_t>(pick));
      time_of[rid] = pick_time();
      pending.insert({time_of[rid], rid});
      calendar.at_reserved(time_of[rid], seq, &OrderCheck::fire, this, rid);
      ++scheduled_reserved;
    }
    const int children = static_cast<int>(rng() % static_cast<std::uint64_t>(max_children + 1));
    for (int i = 0; i < children && budget > 0; ++i) schedule();
    std::size_t near = 0;
    for (auto it = pending.begin(); it != pending.end() && it->first < Calendar::now() + 250 * kNs; ++it) ++near;
    most_pending_near = std::max(most_pending_near, near);
  }

  void expect_all_fired_in_order() const {
    EXPECT_TRUE(failures.empty()) << failures.size() << " events fired out of order or off time, first id "
                                  << failures.front();
    EXPECT_TRUE(pending.empty()) << pending.size() << " events never fired";
    EXPECT_EQ(fired + cancelled + reserved.size(), time_of.size());
    EXPECT_GT(cancelled, 100u);
    EXPECT_GT(scheduled_reserved, 100u);
    EXPECT_GT(time_of.size(), 10000u);
  }
};

TEST(Calendar, FiresInTimeThenSchedulingOrderAcrossNearAndFarEvents) {
  Sim sim{1};
  OrderCheck check(sim.calendar(), kDistances, 3);
  for (int i = 0; i < 64; ++i) check.schedule();
  sc_core::sc_start();
  check.expect_all_fired_in_order();
}

TEST(Calendar, FiresInOrderWhenNearEventsOverflowTheSortedRun) {
  Sim sim{1};
  OrderCheck check(sim.calendar(), kNearDistances, 12);
  for (int i = 0; i < 64; ++i) check.schedule();
  sc_core::sc_start();
  check.expect_all_fired_in_order();
  // More near events than the sorted run holds (32) were pending at once.
  EXPECT_GT(check.most_pending_near, 64u);
}

// The debugger's pause point: the hook runs after the n-th event, before
// the next, as often as the pause point is set again; unset, never.
TEST(Calendar, PausePointRunsTheHookAfterTheNthEventOnly) {
  Sim sim{1};
  Calendar& cal = sim.calendar();
  struct Log {
    Calendar* cal;
    std::vector<std::uint64_t> fired_at_pause;
    std::vector<Tick> times;
  } log{&cal, {}, {}};
  for (Tick t = 1; t <= 10; ++t)
    cal.at(
        t * kNs, [](void* l, std::uint64_t) { static_cast<Log*>(l)->times.push_back(now()); }, &log);
  cal.set_pause_after(3);  // no hook yet: no pause point
  EXPECT_EQ(cal.pause_after(), Calendar::kNoPause);
  cal.set_pause_hook(
      [](void* l) {
        auto& log = *static_cast<Log*>(l);
        log.fired_at_pause.push_back(log.cal->events_fired());
        EXPECT_EQ(log.times.size(), log.cal->events_fired());  // between events
        log.cal->set_pause_after(log.cal->events_fired() == 3 ? 7 : Calendar::kNoPause);
      },
      &log);
  cal.set_pause_after(3);
  sc_core::sc_start();
  EXPECT_EQ(log.fired_at_pause, (std::vector<std::uint64_t>{3, 7}));
  EXPECT_EQ(log.times.size(), 10u);
}

}  // namespace
