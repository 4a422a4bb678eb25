// The end of a world, whatever state its programs left it in. Threads left
// blocked: Host::end_threads unwinds them wherever they wait (the
// destructors of their frames run, the queues they waited in forget them,
// SystemC frees their stacks), and a World does it when it ends. (Runs cut
// by the stop time with traffic in flight are each stack's own tests, with
// testing::run_cuts.)
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <initializer_list>
#include <string>
#include <vector>

#include "core/params.h"
#include "core/sim.h"
#include "host/host.h"
#include "nicsim/app.h"
#include "sim/tests/test_shell.h"
#include "world/programs.h"
#include "world/world.h"

namespace nicsim {
namespace {

// Counts the frames unwound; names the processes to look for afterwards.
int g_unwound = 0;
std::vector<std::string> g_processes;

struct Frame {
  Frame() { g_processes.push_back(sc_core::sc_get_current_process_handle().name()); }
  ~Frame() { ++g_unwound; }
};

Scenario scenario(const std::string& text) {
  return load_scenario_text(text, "test.textproto",
                            [](std::string_view n) { return ProgramRegistry::instance().find(n) != nullptr; });
}

bool any_process_left() {
  for (const std::string& name : g_processes)
    if (sc_core::sc_find_object(name.c_str())) return true;
  return false;
}

TEST(ThreadEnd, BlockedThreadsAreUnwoundWhereverTheyWait) {
  Sim sim(1);
  ParamSet params(*ParamRegistry::instance().find("host"));
  ASSERT_EQ(params.set("cpus", "1"), "");
  ASSERT_EQ(params.set("cost.api_call", "1ms"), "");
  host::Host host("h0", 0, params);
  host::Mutex mutex(host);
  host::WaitQueue queue(host);
  host::HostThread* holder = host.spawn("holder", [&] {
    Frame f;
    mutex.lock();
    host.sleep(kTickMax);
  });
  host.spawn("locker", [&] {
    Frame f;
    mutex.lock();
  });
  host.spawn("waiter", [&] {
    Frame f;
    queue.wait();
  });
  host.spawn("joiner", [&] {
    Frame f;
    host.join(holder);
  });
  // One CPU: the first charges for 1 ms, the second queues for the CPU.
  for (const char* name : {"busy", "queued"})
    host.spawn(name, [&] {
      Frame f;
      host.charge("api_call");
    });
  sc_core::sc_start(sc_core::sc_time(100, sc_core::SC_US));
  ASSERT_EQ(g_unwound, 0);
  ASSERT_EQ(queue.waiters(), 1u);

  host::Host::end_threads({&host});
  EXPECT_EQ(g_unwound, 6);
  EXPECT_EQ(queue.waiters(), 0u);
  for (const auto& t : host.threads()) EXPECT_TRUE(t->finished()) << t->name();
  EXPECT_FALSE(any_process_left());
  EXPECT_TRUE(sim.errors().empty());
}

int blocked_program(int, char**) {
  Frame f;
  if (nicsim_workload_rank() == 0) {
    char c;
    nicsim_mgmt_recv(NICSIM_ANY_NODE, 1, &c, 1, nullptr, 0);
  } else {
    nicsim_sleep_ns(1'000'000'000);
  }
  return 0;
}
const BuiltinProgram reg_blocked("test_blocked_at_the_end", blocked_program, "test");

TEST(ThreadEnd, AWorldEndsTheThreadsItsProgramsLeftBlocked) {
  const Scenario sc = scenario(R"(
    stop_time: "1ms"
    node { name: "a" nic: "raw" }
    node { name: "b" nic: "raw" }
    link { a: "a" b: "b" }
    workload { program: "test_blocked_at_the_end" nodes: "a" nodes: "b" }
  )");
  {
    Sim sim(sc.seed);
    World world(sc);
    EXPECT_FALSE(world.run().all_finished);
    EXPECT_EQ(g_unwound, 0);
  }
  EXPECT_EQ(g_unwound, 2);
  EXPECT_EQ(g_processes.size(), 2u);
  EXPECT_FALSE(any_process_left());
}

}  // namespace
}  // namespace nicsim
