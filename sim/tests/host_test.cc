// Host model: threads, synchronisation, interrupts, timers, CPU costs, memory.
// Each test runs in its own process (fresh SystemC kernel) and calls sc_start once.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "core/params.h"
#include "core/sim.h"
#include "host/host.h"

namespace nicsim::host {
namespace {

ParamSet host_params() { return ParamSet(*ParamRegistry::instance().find("host")); }

bool has_error(const std::string& needle) {
  for (const SimError& e : Sim::get().errors().all())
    if (e.message.find(needle) != std::string::npos) return true;
  return false;
}

std::string all_errors() {
  std::string s;
  for (const SimError& e : Sim::get().errors().all()) s += e.where + ": " + e.message + "\n";
  return s;
}

TEST(HostTest, SpawnJoinSleepTimingIsExact) {
  Sim sim(1);
  Host host("h0", 0, host_params());
  Tick a_done = 0, c_start = 0, joined = 0;
  bool current_ok = false, current_host_ok = false;
  HostThread* a = host.spawn("a", [&] {
    host.sleep(10 * kUs);
    a_done = now();
  });
  host.spawn("b", [&] {
    current_ok = host.current() && host.current()->name() == "b";
    current_host_ok = Host::current_host() == &host;
    host.sleep(5 * kUs);
    // Spawned while running: the child pays cost.thread_spawn before its body.
    HostThread* c = host.spawn("c", [&] {
      c_start = now();
      host.sleep(1 * kUs);
    });
    EXPECT_TRUE(host.join(c));
    EXPECT_TRUE(host.join(a));
    joined = now();
  });
  EXPECT_EQ(host.current(), nullptr);  // not during elaboration
  EXPECT_EQ(Host::current_host(), nullptr);
  sc_core::sc_start();
  EXPECT_EQ(a_done, 10 * kUs);
  Tick spawn_cost = host.cost_of("thread_spawn");
  EXPECT_EQ(spawn_cost, 15 * kUs);
  EXPECT_EQ(c_start, 5 * kUs + spawn_cost);
  EXPECT_EQ(joined, 5 * kUs + spawn_cost + 1 * kUs);
  EXPECT_TRUE(current_ok);
  EXPECT_TRUE(current_host_ok);
  ASSERT_EQ(host.threads().size(), 3u);
  for (const auto& t : host.threads()) EXPECT_TRUE(t->finished()) << t->name();
  EXPECT_TRUE(sim.errors().empty()) << all_errors();
}

TEST(HostTest, DuplicateThreadNamesAreAllowed) {
  Sim sim(1);
  Host h0("h0", 0, host_params());
  Host h1("h1", 1, host_params());
  int ran = 0;
  for (int i = 0; i < 3; ++i) {
    h0.spawn("main", [&] { ++ran; });
    h1.spawn("main thread", [&] { ++ran; });
  }
  sc_core::sc_start();
  EXPECT_EQ(ran, 6);
}

TEST(HostTest, MutexHandsOffInFifoOrderAtUnlockTime) {
  Sim sim(1);
  Host host("h0", 0, host_params());
  Mutex m(host);
  std::vector<std::pair<std::string, Tick>> acquired;
  const char* blocked_b_at_120 = nullptr;
  auto holder = [&](const char* name, Tick request_at, Tick hold) {
    return [&, name, request_at, hold] {
      host.sleep(request_at);
      EXPECT_TRUE(m.lock());
      acquired.emplace_back(name, now());
      host.sleep(hold);
      m.unlock();
    };
  };
  host.spawn("A", holder("A", 0, 100 * kNs));
  // Created in another order than they ask: the queue is by request time.
  host.spawn("D", holder("D", 30 * kNs, 50 * kNs));
  HostThread* c = host.spawn("C", holder("C", 10 * kNs, 50 * kNs));
  HostThread* b = host.spawn("B", holder("B", 20 * kNs, 50 * kNs));
  host.spawn("observer", [&] {
    host.sleep(120 * kNs);
    blocked_b_at_120 = b->blocked_in();
    EXPECT_FALSE(m.try_lock());
  });
  sc_core::sc_start();
  std::vector<std::pair<std::string, Tick>> want = {{"A", 0}, {"C", 100 * kNs}, {"B", 150 * kNs}, {"D", 200 * kNs}};
  EXPECT_EQ(acquired, want);
  ASSERT_NE(blocked_b_at_120, nullptr);
  EXPECT_STREQ(blocked_b_at_120, "mutex_lock");
  EXPECT_FALSE(m.locked());
  EXPECT_EQ(c->blocked_in(), nullptr);
  EXPECT_TRUE(sim.errors().empty()) << all_errors();
}

TEST(HostTest, MutexMisuseIsReported) {
  Sim sim(1);
  Host host("h0", 0, host_params());
  Mutex m(host);
  bool relock = true;
  host.spawn("t", [&] {
    m.unlock();  // not held
    m.lock();
    relock = m.lock();
    m.unlock();
  });
  sc_core::sc_start();
  EXPECT_FALSE(relock);
  EXPECT_TRUE(has_error("mutex unlock by thread 't' which does not hold it")) << all_errors();
  EXPECT_TRUE(has_error("self-deadlock")) << all_errors();
}

TEST(HostTest, WaitQueueTimesOutAndWakes) {
  Sim sim(1);
  Host host("h0", 0, host_params());
  Mutex m(host);
  WaitQueue wq(host);
  bool first = true, second = false, third = false;
  Tick first_at = 0, second_at = 0, third_at = 0;
  int condition = 0;
  host.spawn("waiter", [&] {
    m.lock();
    first = wq.wait_until(m, 50 * kUs);
    first_at = now();
    EXPECT_TRUE(m.locked());
    second = wq.wait_until(m, now() + 100 * kUs);
    second_at = now();
    EXPECT_EQ(condition, 1);
    m.unlock();
    third = wq.wait();  // no mutex; woken by the interrupt handler
    third_at = now();
  });
  int vec = host.irq().attach("dev", [&] { wq.notify_all(); });
  host.spawn("notifier", [&] {
    host.sleep(70 * kUs);
    m.lock();
    condition = 1;
    wq.notify_one();
    host.sleep(2 * kUs);  // the waiter needs the mutex back: it gets it at 72us
    m.unlock();
    host.sleep(8 * kUs);
    host.irq().raise(vec);
  });
  sc_core::sc_start();
  EXPECT_FALSE(first);
  EXPECT_EQ(first_at, 50 * kUs);
  EXPECT_TRUE(second);
  EXPECT_EQ(second_at, 72 * kUs);
  EXPECT_TRUE(third);
  EXPECT_EQ(third_at, 80 * kUs + host.cost_of("interrupt_entry"));
  EXPECT_EQ(wq.waiters(), 0u);
  EXPECT_TRUE(sim.errors().empty()) << all_errors();
}

TEST(HostTest, TimersFireInInterruptContext) {
  Sim sim(1);
  Host host("h0", 0, host_params());
  std::vector<Tick> fired;
  bool in_irq = false, no_thread = false, right_host = false;
  Timer t(host, "tick", [&] {
    fired.push_back(now());
    in_irq = host.in_interrupt();
    no_thread = host.current() == nullptr;
    right_host = Host::current_host() == &host;
  });
  int cancelled_fired = 0;
  Timer never(host, "never", [&] { ++cancelled_fired; });
  bool thread_in_irq = true;
  host.spawn("arm", [&] {
    t.start(5 * kUs);
    t.start(10 * kUs);  // re-arming replaces the 5us expiry
    never.start(3 * kUs);
    EXPECT_TRUE(never.armed());
    never.cancel();
    host.sleep(30 * kUs);
    thread_in_irq = host.in_interrupt();
    EXPECT_FALSE(t.armed());
    t.start(1 * kUs);
  });
  sc_core::sc_start();
  Tick entry = host.cost_of("interrupt_entry");
  EXPECT_EQ(entry, 1500 * kNs);
  std::vector<Tick> want = {10 * kUs + entry, 31 * kUs + entry};
  EXPECT_EQ(fired, want);
  EXPECT_EQ(cancelled_fired, 0);
  EXPECT_TRUE(in_irq);
  EXPECT_TRUE(no_thread);
  EXPECT_TRUE(right_host);
  EXPECT_FALSE(thread_in_irq);
  EXPECT_FALSE(host.in_interrupt());
}

TEST(HostTest, BlockingInInterruptContextIsReportedWithTheCallSite) {
  Sim sim(1);
  Host host("h0", 0, host_params());
  Mutex m(host);
  bool slept = true, locked = true, charged = true;
  int sleep_line = 0, lock_line = 0, charge_line = 0;
  Tick handler_at = 0;
  int vec = host.irq().attach("nic0", [&] {
    handler_at = now();
    sleep_line = __LINE__ + 1;
    slept = host.sleep(1 * kUs);
    lock_line = __LINE__ + 1;
    locked = m.lock();
    charge_line = __LINE__ + 1;
    charged = host.charge("api_call");
  });
  Tick after = 0;
  host.spawn("t", [&] {
    host.sleep(1 * kUs);
    host.irq().raise(vec);
    host.sleep(100 * kUs);  // the run goes on after the errors
    after = now();
  });
  sc_core::sc_start();
  EXPECT_FALSE(slept);
  EXPECT_FALSE(locked);
  EXPECT_FALSE(charged);
  EXPECT_FALSE(m.locked());
  EXPECT_EQ(handler_at, 1 * kUs + host.cost_of("interrupt_entry"));
  EXPECT_EQ(after, 101 * kUs);
  EXPECT_EQ(host.irq().delivered(vec), 1u);
  std::string file = __FILE__;
  EXPECT_TRUE(has_error("blocking call sleep in interrupt context at " + file + ":" + std::to_string(sleep_line)))
      << all_errors();
  EXPECT_TRUE(has_error("blocking call mutex_lock in interrupt context at " + file + ":" + std::to_string(lock_line)))
      << all_errors();
  EXPECT_TRUE(has_error("blocking call charge in interrupt context at " + file + ":" + std::to_string(charge_line)))
      << all_errors();
  EXPECT_TRUE(has_error("(handler nic0)")) << all_errors();
  ASSERT_EQ(sim.errors().all().size(), 3u) << all_errors();
  EXPECT_EQ(sim.errors().all()[0].where, "h0");
  EXPECT_EQ(sim.errors().all()[0].time, handler_at);
}

TEST(HostTest, BlockingOutsideAThreadIsReported) {
  Sim sim(1);
  Host host("h0", 0, host_params());
  bool slept = true;
  struct Ctx {
    Host* host;
    bool* slept;
  } ctx{&host, &slept};
  sim.calendar().at(
      5 * kUs,
      [](void* o, std::uint64_t) {
        auto* c = static_cast<Ctx*>(o);
        *c->slept = c->host->sleep(1 * kUs);
      },
      &ctx);
  sc_core::sc_start();
  EXPECT_FALSE(slept);
  EXPECT_TRUE(has_error("blocking call sleep outside a thread of h0 at")) << all_errors();
}

TEST(HostTest, InterruptsAreDeliveredInOrderAndCoalesced) {
  Sim sim(1);
  Host host("h0", 0, host_params());
  std::vector<std::pair<std::string, Tick>> log;
  int a = host.irq().attach("a", [&] { log.emplace_back("a", now()); });
  int b = host.irq().attach("b", [&] {
    log.emplace_back("b", now());
    EXPECT_EQ(host.irq().running(), "b");
  });
  host.spawn("dev", [&] {
    host.irq().raise(a);
    host.irq().raise(b);
    host.irq().raise(a);  // still pending: coalesced
    host.sleep(10 * kUs);
    host.irq().raise(b);
  });
  sc_core::sc_start();
  Tick e = host.cost_of("interrupt_entry");
  std::vector<std::pair<std::string, Tick>> want = {{"a", e}, {"b", 2 * e}, {"b", 10 * kUs + e}};
  EXPECT_EQ(log, want);
  EXPECT_EQ(host.irq().delivered(a), 1u);
  EXPECT_EQ(host.irq().delivered(b), 2u);
  EXPECT_EQ(host.irq().running(), "");
}

TEST(HostTest, ChargeSerialisesThreadsOnTheCpus) {
  Sim sim(1);
  ParamSet ps = host_params();
  ASSERT_EQ(ps.set("cost.api_call", "10us"), "");
  Host host("h0", 0, ps);
  EXPECT_EQ(host.cpus(), 2u);
  // Per-byte copy cost at copy_bandwidth (8 Gb/s = 1 byte per ns).
  EXPECT_EQ(host.cost_of("api_call", 1000), 10 * kUs + 1000 * kNs);
  EXPECT_EQ(host.cost_of("syscall"), 700 * kNs);
  // Checked before sc_start: ASan misreads a throw after coroutine switches.
  EXPECT_THROW(host.cost_of("no_such_class"), std::logic_error);
  std::vector<std::pair<std::string, Tick>> done;
  for (const char* name : {"t0", "t1", "t2"}) {
    host.spawn(name, [&, name] {
      EXPECT_TRUE(host.charge("api_call"));
      done.emplace_back(name, now());
    });
  }
  const char* waiting = nullptr;
  host.spawn("observer", [&] {
    host.sleep(5 * kUs);
    EXPECT_EQ(host.cpus_busy(), 2u);
    for (const auto& t : host.threads())
      if (t->blocked_in()) waiting = t->blocked_in();
  });
  sc_core::sc_start();
  ASSERT_EQ(done.size(), 3u);
  // Two run at once; the third gets a CPU when the first is released.
  EXPECT_EQ(done[0].second, 10 * kUs);
  EXPECT_EQ(done[1].second, 10 * kUs);
  EXPECT_EQ(done[2].second, 20 * kUs);
  ASSERT_NE(waiting, nullptr);
  EXPECT_STREQ(waiting, "cpu");
  EXPECT_EQ(host.cpus_busy(), 0u);
}

// Threads of different nodes that sleep until the same picosecond resume in
// the order they went to sleep, whatever else is pending: hardware events
// that do nothing (before, at and after the wake-up time) and SystemC timed
// notifications. Their number is the parameter; with SystemC's own timed
// queue deciding, the order changed with it.
class SameInstantWakeUps : public ::testing::TestWithParam<int> {};

TEST_P(SameInstantWakeUps, ResumeInTheOrderTheyWentToSleep) {
  Sim sim(1);
  const int noise = GetParam();
  static constexpr Tick kWake = 10 * kUs;
  // Thread k goes to sleep (until kWake) at went_to_sleep[k] ns: order 1 3 4 2 0 5.
  const std::vector<Tick> went_to_sleep = {500, 100, 400, 200, 300, 600};
  std::vector<std::unique_ptr<Host>> hosts;
  std::vector<int> resumed;
  for (std::size_t k = 0; k < went_to_sleep.size(); ++k) {
    const std::string name = "h" + std::to_string(k);
    hosts.push_back(std::make_unique<Host>(name.c_str(), static_cast<std::uint32_t>(k), host_params()));
    Host& h = *hosts.back();
    h.spawn("sleeper", [&h, &resumed, &went_to_sleep, k] {
      h.sleep(went_to_sleep[k] * kNs);
      h.sleep(kWake - now());
      EXPECT_EQ(now(), kWake);
      resumed.push_back(static_cast<int>(k));
    });
  }
  auto nothing = [](void*, std::uint64_t) {};
  std::vector<sc_core::sc_event> unrelated(static_cast<std::size_t>(noise));
  for (int i = 0; i < noise; ++i) {
    const Tick at = i % 3 == 0 ? kWake : (i * 7919 % 12000) * kNs;
    sim.calendar().at(at, nothing, nullptr);
    unrelated[static_cast<std::size_t>(i)].notify(Calendar::to_sc((i * 104729 % 11000) * kNs));
  }
  sc_core::sc_start();
  EXPECT_EQ(resumed, (std::vector<int>{1, 3, 4, 2, 0, 5}));
  EXPECT_TRUE(sim.errors().empty()) << all_errors();
}

INSTANTIATE_TEST_SUITE_P(Noise, SameInstantWakeUps, ::testing::Values(0, 1, 2, 5, 17, 64));

TEST(HostTest, MemoryLimitContainsAndPin) {
  Sim sim(1);
  ParamSet ps = host_params();
  ASSERT_EQ(ps.set("memory", "1MiB"), "");
  Host host("h0", 0, ps);
  HostMemory& mem = host.memory();
  EXPECT_EQ(mem.limit(), 1u << 20);
  void* a = mem.alloc(512 * 1024);
  void* b = mem.alloc(512 * 1024, 4096);
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(a) % 64, 0u);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(b) % 4096, 0u);
  EXPECT_EQ(static_cast<unsigned char*>(a)[1000], 0);  // zero-filled
  EXPECT_EQ(mem.bytes_in_use(), 1u << 20);
  EXPECT_EQ(mem.alloc(64), nullptr);      // over the limit
  EXPECT_EQ(mem.alloc(64, 48), nullptr);  // not a power of two
  auto addr = reinterpret_cast<std::uint64_t>(a);
  EXPECT_TRUE(mem.contains(addr, 512 * 1024));
  EXPECT_TRUE(mem.contains(addr + 100, 200));
  EXPECT_FALSE(mem.contains(addr + 100, 512 * 1024));
  EXPECT_FALSE(mem.contains(addr - 1, 2));
  EXPECT_TRUE(mem.free_checked(a));
  EXPECT_FALSE(mem.contains(addr, 1));
  EXPECT_EQ(mem.bytes_in_use(), 512u * 1024);
  EXPECT_NE(mem.alloc(64), nullptr);

  char stack_buf[256];
  auto sb = reinterpret_cast<std::uint64_t>(stack_buf);
  EXPECT_FALSE(mem.contains(sb, 16));
  EXPECT_TRUE(mem.pin(stack_buf, sizeof stack_buf));
  EXPECT_FALSE(mem.pin(stack_buf + 10, 10));  // overlaps
  EXPECT_TRUE(mem.contains(sb + 16, 240));
  EXPECT_FALSE(mem.contains(sb + 16, 241));
  EXPECT_EQ(mem.bytes_in_use(), 512u * 1024 + 64);  // pins are not charged
  EXPECT_FALSE(mem.free_checked(stack_buf));        // pinned, not allocated
  EXPECT_TRUE(mem.unpin(stack_buf));
  EXPECT_FALSE(mem.contains(sb, 16));
  EXPECT_FALSE(mem.unpin(b));  // allocated, not pinned

  int local = 0;
  mem.free(&local);
  EXPECT_TRUE(has_error("which the node did not allocate")) << all_errors();
}

// Deep enough to overflow any stack the parameter allows.
void recurse(int depth) {
  volatile char frame[4096];
  frame[0] = static_cast<char>(depth);
  if (depth < (1 << 20)) recurse(depth + 1);
  frame[1] = frame[0];
}

TEST(HostDeathTest, StackOverflowNamesTheThread) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(
      {
        Sim sim(1);
        ParamSet ps = host_params();
        ps.set("thread_stack", "64KiB");
        Host host("h0", 0, ps);
        host.spawn("deep", [] { recurse(0); });
        sc_core::sc_start();
      },
      "stack overflow in host thread 'deep' of node 0 .*thread_stack");
}

}  // namespace
}  // namespace nicsim::host
