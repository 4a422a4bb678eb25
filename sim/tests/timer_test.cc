// Timer: a re-armable timer on the calendar runs its callback once per
// deadline it reaches while armed, in the place an event scheduled at the
// arming would have had, and keeps at most one event in the calendar.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <iterator>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "core/sim.h"

using namespace nicsim;

namespace {

// Records every callback with its time.
struct Log {
  std::vector<std::pair<std::string, Tick>> fired;
  void add(std::string what) { fired.push_back({std::move(what), Calendar::now()}); }
};

struct Probe {
  Log* log;
  std::string name;
  void expire() { log->add(name); }
};

// Runs fn() at time t from a calendar event.
template <class F>
void at(Calendar& c, Tick t, F fn) {
  auto* f = new F(std::move(fn));
  c.at(
      t,
      [](void* p, std::uint64_t) {
        auto* g = static_cast<F*>(p);
        (*g)();
        delete g;
      },
      f);
}

TEST(Timer, FiresOnceAtItsDeadline) {
  Sim sim{1};
  Calendar& c = sim.calendar();
  Log log;
  Probe probe{&log, "timer"};
  Timer timer(c, member_fn<&Probe::expire>(), &probe);
  timer.arm(100 * kNs);
  EXPECT_TRUE(timer.armed());
  EXPECT_EQ(timer.deadline(), 100 * kNs);
  timer.arm(50 * kNs);  // armed already: the first arming stands
  EXPECT_EQ(timer.deadline(), 100 * kNs);
  sc_core::sc_start();
  ASSERT_EQ(log.fired.size(), 1u);
  EXPECT_EQ(log.fired[0].second, 100 * kNs);
  EXPECT_FALSE(timer.armed());
  EXPECT_FALSE(timer.has_event());
}

TEST(Timer, RearmedLaterFiresOnlyAtTheLaterDeadline) {
  Sim sim{1};
  Calendar& c = sim.calendar();
  Log log;
  Probe probe{&log, "timer"};
  Timer timer(c, member_fn<&Probe::expire>(), &probe);
  timer.arm(100 * kNs);
  at(c, 50 * kNs, [&] { timer.rearm(1 * kUs); });
  at(c, 70 * kNs, [&] { timer.rearm(2 * kUs); });
  sc_core::sc_start();
  ASSERT_EQ(log.fired.size(), 1u);
  EXPECT_EQ(log.fired[0].second, 2 * kUs);
}

TEST(Timer, RearmedEarlierFiresOnlyAtTheEarlierDeadlineAndWithdrawsItsEvent) {
  Sim sim{1};
  Calendar& c = sim.calendar();
  Log log;
  Probe probe{&log, "timer"};
  Timer timer(c, member_fn<&Probe::expire>(), &probe);
  timer.arm(5 * kUs);
  at(c, 10 * kNs, [&] {
    timer.rearm(300 * kNs);
    EXPECT_EQ(c.pending(), 1u);  // the one for 5 us is gone
  });
  sc_core::sc_start();
  ASSERT_EQ(log.fired.size(), 1u);
  EXPECT_EQ(log.fired[0].second, 300 * kNs);
  EXPECT_EQ(sc_core::sc_time_stamp().value(), 300 * kNs);  // nothing was left to run till 5 us
}

TEST(Timer, CancelledLeavesNothingThatFires) {
  Sim sim{1};
  Calendar& c = sim.calendar();
  Log log;
  Probe probe{&log, "timer"};
  Timer timer(c, member_fn<&Probe::expire>(), &probe);
  timer.arm(100 * kNs);
  at(c, 20 * kNs, [&] { timer.cancel(); });
  // Armed again after the cancel, then cancelled again before the deadline.
  at(c, 40 * kNs, [&] { timer.arm(300 * kNs); });
  at(c, 200 * kNs, [&] { timer.cancel(); });
  sc_core::sc_start();
  EXPECT_TRUE(log.fired.empty());
  EXPECT_FALSE(timer.armed());
  EXPECT_EQ(c.pending(), 0u);
}

TEST(Timer, DestroyedWithdrawsItsEvent) {
  Sim sim{1};
  Calendar& c = sim.calendar();
  Log log;
  Probe probe{&log, "timer"};
  auto timer = std::make_unique<Timer>(c, member_fn<&Probe::expire>(), &probe);
  timer->arm(100 * kNs);
  EXPECT_EQ(c.pending(), 1u);
  timer.reset();
  EXPECT_EQ(c.pending(), 0u);
  sc_core::sc_start();
  EXPECT_TRUE(log.fired.empty());
}

TEST(Timer, RunsInTheOrderOfAFreshEventPerArmingAmongSameTimeEvents) {
  Sim sim{1};
  Calendar& c = sim.calendar();
  Log log;
  Probe a{&log, "a"}, b{&log, "b"}, t1{&log, "t1"}, t2{&log, "t2"};
  Timer timer1(c, member_fn<&Probe::expire>(), &t1);
  Timer timer2(c, member_fn<&Probe::expire>(), &t2);
  const Tick t = 1 * kUs;
  // timer1 keeps an early event and moves it on; timer2 is armed once. Both
  // must run between the events scheduled before and after their armings.
  timer1.arm(100 * kNs);
  timer2.arm(t);
  at(c, 10 * kNs, [&] {
    c.at_member<&Probe::expire>(t, &a);
    timer1.rearm(t);
    c.at_member<&Probe::expire>(t, &b);
  });
  sc_core::sc_start();
  ASSERT_EQ(log.fired.size(), 4u);
  EXPECT_EQ(log.fired[0].first, "t2");
  EXPECT_EQ(log.fired[1].first, "a");
  EXPECT_EQ(log.fired[2].first, "t1");
  EXPECT_EQ(log.fired[3].first, "b");
  for (const auto& f : log.fired) EXPECT_EQ(f.second, t);
}

TEST(Timer, ManyRearmingsKeepOneEventInTheCalendar) {
  Sim sim{1};
  Calendar& c = sim.calendar();
  Log log;
  Probe probe{&log, "timer"};
  Timer timer(c, member_fn<&Probe::expire>(), &probe);
  std::size_t most_pending = 0;
  // Every 10 ns for 100 us: re-armed 2 us ahead, now and then 1 us (earlier
  // than the last arming) or cancelled and armed again.
  std::function<void(int)> step = [&](int i) {
    if (i % 7 == 3) {
      timer.cancel();
      timer.arm(Calendar::now() + 2 * kUs);
    } else {
      timer.rearm(Calendar::now() + (i % 5 == 0 ? 1 * kUs : 2 * kUs));
    }
    most_pending = std::max(most_pending, c.pending());
    if (i < 10000) at(c, Calendar::now() + 10 * kNs, [&step, i] { step(i + 1); });
  };
  at(c, 0, [&] { step(0); });
  sc_core::sc_start();
  EXPECT_LE(most_pending, 2u);  // the timer's event and the next step
  ASSERT_EQ(log.fired.size(), 1u);
  EXPECT_EQ(log.fired[0].second, 10000 * 10 * kNs + 1 * kUs);  // step 10000 re-armed it 1 us ahead
}

// Random armings, re-armings and cancels of several timers from events, each
// arming shadowed by a fresh cancellable event scheduled right after it
// (so its place is the arming's, plus one): every callback must come
// immediately before its shadow, and the shadows of superseded or cancelled
// armings are withdrawn, so callbacks and shadows pair up exactly.
struct Shadowed {
  Calendar& c;
  std::mt19937_64 rng{7};
  std::vector<std::unique_ptr<Timer>> timers;
  std::vector<std::uint64_t> shadow;  // by timer: the live shadow's handle, 0 when none
  std::vector<std::int64_t> log;      // timer i's callback: i; its shadow: ~i
  int budget = 20000;

  explicit Shadowed(Calendar& cal, int n) : c(cal), shadow(n, 0) {
    for (int i = 0; i < n; ++i)
      timers.push_back(std::make_unique<Timer>(c, &Shadowed::expired, this, static_cast<std::uint64_t>(i)));
  }
  Tick pick() {
    static constexpr Tick kAhead[] = {0, 1, 10 * kNs, 100 * kNs, 250 * kNs, 1 * kUs, 20 * kUs};
    return Calendar::now() + kAhead[rng() % std::size(kAhead)];
  }
  void withdraw(std::size_t i) {
    if (shadow[i]) c.cancel(shadow[i]);
    shadow[i] = 0;
  }
  void arm(std::size_t i, bool replace) {
    if (!replace && timers[i]->armed()) return;
    withdraw(i);
    timers[i]->rearm(pick());
    shadow[i] = c.at_cancellable(timers[i]->deadline(), &Shadowed::shadow_fired, this, i);
  }
  void act() {
    if (--budget <= 0) return;
    const std::size_t i = rng() % timers.size();
    switch (rng() % 4) {
      case 0:
        arm(i, false);
        break;
      case 1:
      case 2:
        arm(i, true);
        break;
      default:
        timers[i]->cancel();
        withdraw(i);
    }
    c.at(pick(), &Shadowed::driver, this);
  }
  static void driver(void* self, std::uint64_t) { static_cast<Shadowed*>(self)->act(); }
  static void expired(void* self, std::uint64_t i) {
    auto* s = static_cast<Shadowed*>(self);
    s->log.push_back(static_cast<std::int64_t>(i));
    s->shadow[i] = 0;                        // it fires next: left alone
    if (s->rng() % 3 == 0) s->arm(i, true);  // re-armed from its own callback
  }
  static void shadow_fired(void* self, std::uint64_t i) {
    auto* s = static_cast<Shadowed*>(self);
    s->log.push_back(~static_cast<std::int64_t>(i));
  }
};

TEST(Timer, EveryCallbackComesExactlyWhereAFreshEventPerArmingWould) {
  Sim sim{1};
  Shadowed s(sim.calendar(), 6);
  for (int i = 0; i < 8; ++i) sim.calendar().at(0, &Shadowed::driver, &s);
  sc_core::sc_start();
  ASSERT_GT(s.log.size(), 1000u);
  ASSERT_EQ(s.log.size() % 2, 0u);
  std::size_t bad = 0;
  for (std::size_t k = 0; k + 1 < s.log.size(); k += 2)
    if (s.log[k] < 0 || s.log[k + 1] != ~s.log[k]) ++bad;
  EXPECT_EQ(bad, 0u);
}

}  // namespace
