// Whole-world tests: scenarios built in-process, programs on simulated
// threads, the management network, deadlock and stop-time reporting, FSM
// coverage of a link, and traffic over generated topologies.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <cstring>
#include <sstream>

#include "core/sim.h"
#include "fabric/raw_nic.h"
#include "fsm/fsm.h"
#include "nicsim/app.h"
#include "world/programs.h"
#include "world/report.h"
#include "world/world.h"

using namespace nicsim;

namespace {

Scenario scenario(const std::string& text) {
  return load_scenario_text(text, "test.textproto",
                            [](std::string_view n) { return ProgramRegistry::instance().find(n) != nullptr; });
}

// Rank 0 sends one 100-byte record to rank 1, which reports when it arrived.
int one_record(int, char**) {
  char buf[100] = {0};
  if (nicsim_workload_rank() == 0) {
    std::memset(buf, 0x5a, sizeof buf);
    return nicsim_mgmt_send(nicsim_workload_node(1), 7, buf, sizeof buf);
  }
  uint32_t from = 99;
  long n = nicsim_mgmt_recv(NICSIM_ANY_NODE, 7, buf, sizeof buf, &from, 0);
  nicsim_result("arrived_ps", static_cast<double>(nicsim_now_ps()), "ps");
  if (n != 100 || from != nicsim_workload_node(0) || buf[0] != 0x5a || buf[99] != 0x5a) return 1;
  return 0;
}
const BuiltinProgram reg_one_record("test_one_record", one_record, "test");

int waits_forever(int, char**) {
  char c;
  nicsim_mgmt_recv(NICSIM_ANY_NODE, 1, &c, 1, nullptr, 0);
  return 0;
}
const BuiltinProgram reg_waits("test_waits_forever", waits_forever, "test");

int sleeps_long(int, char**) {
  nicsim_sleep_ns(10'000'000);
  return 0;
}
const BuiltinProgram reg_sleeps("test_sleeps_long", sleeps_long, "test");

int barrier_twice(int, char**) {
  nicsim_sleep_ns(1000 * (nicsim_workload_rank() + 1));
  if (nicsim_barrier() != 0) return 1;
  const uint64_t t1 = nicsim_now_ns();
  if (nicsim_barrier() != 0) return 1;
  nicsim_result("after_first", static_cast<double>(t1), "ns");
  return 0;
}
const BuiltinProgram reg_barrier("test_barrier_twice", barrier_twice, "test");

const char* kPair = R"(
  name: "pair"
  node { name: "a" nic: "raw" }
  node { name: "b" nic: "raw" }
  link { a: "a" b: "b" }
  management { param { key: "latency" value: "20us" } param { key: "bandwidth" value: "1Gbps" } }
)";

TEST(World, ManagementMessageTimingIsExact) {
  Scenario sc = scenario(std::string(kPair) + R"(workload { program: "test_one_record" nodes: "a" nodes: "b" })");
  Sim sim(sc.seed);
  World world(sc);
  RunStatus st = world.run();
  ASSERT_TRUE(st.ok);
  ASSERT_EQ(world.programs()[1]->results().size(), 1u);
  // Sender: 300 ns api_call + 100 B copied at 8 Gb/s (100 ns). Wire: 164 B at
  // 1 Gb/s (1312 ns) + 20 us. Receiver: wakes on arrival, then the same
  // 400 ns of CPU to take the record.
  EXPECT_EQ(world.programs()[1]->results()[0].value, 400'000 + 1'312'000 + 20'000'000 + 400'000);
  EXPECT_EQ(world.mgmt().messages(), 1u);
}

TEST(World, DeadlockIsReportedWithTheBlockingCall) {
  Scenario sc = scenario(std::string(kPair) + R"(workload { program: "test_waits_forever" nodes: "a" })");
  Sim sim(sc.seed);
  World world(sc);
  RunStatus st = world.run();
  EXPECT_FALSE(st.ok);
  EXPECT_FALSE(st.all_finished);
  ASSERT_EQ(sim.errors().all().size(), 1u);
  EXPECT_NE(sim.errors().all()[0].message.find("deadlock"), std::string::npos);
  EXPECT_NE(sim.errors().all()[0].message.find("nicsim_mgmt_recv"), std::string::npos) << sim.errors().all()[0].message;
}

TEST(World, StopTimeEndsTheRunAndReportsUnfinishedPrograms) {
  Scenario sc =
      scenario(std::string(kPair) + R"(stop_time: "1ms" workload { program: "test_sleeps_long" nodes: "a" })");
  Sim sim(sc.seed);
  World world(sc);
  RunStatus st = world.run();
  EXPECT_EQ(st.end_time, 1 * kMs);
  EXPECT_FALSE(st.ok);
  ASSERT_EQ(sim.errors().all().size(), 1u);
  EXPECT_NE(sim.errors().all()[0].message.find("did not finish by stop_time 1ms"), std::string::npos);
}

TEST(World, BarrierReleasesEveryRankTogether) {
  Scenario sc = scenario(R"(
    topology { star { hosts: 4 } }
    workload { program: "test_barrier_twice" nodes: "*" }
  )");
  Sim sim(sc.seed);
  World world(sc);
  ASSERT_TRUE(world.run().ok);
  // Nobody leaves the first barrier before the last rank arrived (4 us) and
  // its record crossed the 50 us management network to rank 0; the others
  // also wait for the release to come back.
  for (auto& p : world.programs())
    EXPECT_GT(p->results()[0].value, 4000 + (p->rank() == 0 ? 1 : 2) * 50000) << p->rank();
}

TEST(World, UniformTrafficOverAFatTreeArrivesIntact) {
  Scenario sc = scenario(R"(
    topology { fat_tree { k: 2 n: 3 } }
    workload { program: "fabric_traffic" nodes: "*"
               args: "--pattern=uniform" args: "--size=1KiB" args: "--load=0.3" args: "--duration=50us" }
  )");
  Sim sim(sc.seed);
  World world(sc);
  ASSERT_TRUE(world.run().ok);
  std::uint64_t tx = 0, rx = 0;
  for (std::uint32_t i = 0; i < world.num_nodes(); ++i) {
    auto* nic = world.node(i).nic_as<fabric::RawNic>();
    tx += nic->stats().tx_packets;
    rx += nic->stats().rx_packets;
    EXPECT_EQ(nic->stats().rx_corrupt, 0u);
  }
  EXPECT_EQ(world.num_nodes(), 8u);
  EXPECT_EQ(world.num_switches(), 12u);
  EXPECT_GT(tx, 8u * 10);
  EXPECT_EQ(tx, rx);
}

TEST(World, LinkFaultsFromTheScenario) {
  Scenario sc = scenario(R"(
    topology { star { hosts: 2 } }
    workload { program: "fabric_traffic" nodes: "*"
               args: "--pattern=permutation" args: "--load=0.5" args: "--duration=60us" }
    # The start barrier releases h0 (rank 0) at ~51 us and h1 at ~102 us, so
    # h1's stream to h0 (102..162 us) crosses the fault window.
    fault { at: "120us" link: "h0--sw0" link_down: true }
    fault { at: "140us" link: "h0--sw0" link_up: true }
  )");
  Sim sim(sc.seed);
  World world(sc);
  ASSERT_TRUE(world.run().ok);
  fabric::Link& l = *world.link(*sc.link_index("h0--sw0"));
  EXPECT_TRUE(l.up());
  auto* h0 = world.node(0).nic_as<fabric::RawNic>();
  auto* h1 = world.node(1).nic_as<fabric::RawNic>();
  // h1's packets for h0 were discarded at the switch while h0's link was
  // down (about 20 us / 4.096 us of them); everything else arrived.
  const auto dropped = world.switch_device(0).port(1).stats().drops_link_down;
  EXPECT_GE(dropped, 4u);
  EXPECT_LE(dropped, 6u);
  EXPECT_EQ(h0->stats().rx_packets + dropped, h1->stats().tx_packets);
  EXPECT_EQ(h1->stats().rx_packets, h0->stats().tx_packets);
  bool found = false;
  for (auto& c : sim.fsm().coverage())
    if (c.type->name() == "link") {
      found = true;
      EXPECT_EQ(c.taken, (std::vector<std::uint64_t>{1, 1}));
    }
  EXPECT_TRUE(found);
}

}  // namespace

namespace {

int barrier_once(int, char**) {
  if (nicsim_barrier() != 0) return 1;
  nicsim_result("left_ns", static_cast<double>(nicsim_now_ns()), "ns");
  return 0;
}
const BuiltinProgram reg_barrier_once("test_barrier_once", barrier_once, "test");

int bad_mgmt_calls(int, char**) {
  // NULL buffers with a length are refused, not dereferenced.
  if (nicsim_mgmt_send(nicsim_workload_node(0), 1, nullptr, 5) != -1) return 1;
  if (nicsim_mgmt_recv(NICSIM_ANY_NODE, 1, nullptr, 16, nullptr, 1) != -1) return 2;
  return 0;
}
const BuiltinProgram reg_bad_mgmt("test_bad_mgmt_calls", bad_mgmt_calls, "test");

int sleeps_forever(int, char**) {
  nicsim_sleep_ns(~0ULL);  // beyond the end of time: must not wrap to a short sleep
  return 0;
}
const BuiltinProgram reg_forever("test_sleeps_forever", sleeps_forever, "test");

TEST(World, BarriersOfTwoWorkloadsOnOneNodeDoNotMix) {
  Scenario sc = scenario(R"(
    topology { star { hosts: 3 } }
    workload { program: "test_barrier_once" nodes: "h0" nodes: "h1" }
    workload { program: "test_barrier_once" nodes: "h0" nodes: "h2" start: "200us" }
  )");
  Sim sim(sc.seed);
  World world(sc);
  ASSERT_TRUE(world.run().ok);
  // The second workload starts at 200 us: none of its members may leave its
  // barrier before then, and the first workload is not held up by it (its
  // barrier takes two 50 us management hops).
  ASSERT_EQ(world.programs().size(), 4u);
  for (auto& p : world.programs()) {
    ASSERT_EQ(p->state(), ProgramState::Finished);
    const double left = p->results().at(0).value;
    if (p->workload_index() == 0)
      EXPECT_LT(left, 150'000) << "workload 0 rank " << p->rank();
    else
      EXPECT_GT(left, 250'000) << "workload 1 rank " << p->rank();
  }
  EXPECT_TRUE(sim.errors().empty());
}

TEST(World, NullManagementBuffersAreRefused) {
  Scenario sc = scenario(std::string(kPair) + R"(workload { program: "test_bad_mgmt_calls" nodes: "a" })");
  Sim sim(sc.seed);
  World world(sc);
  EXPECT_TRUE(world.run().ok);
}

TEST(World, SleepBeyondTheEndOfTimeNeverReturns) {
  Scenario sc = scenario(std::string(kPair) + R"(workload { program: "test_sleeps_forever" nodes: "a" })");
  Sim sim(sc.seed);
  World world(sc);
  RunStatus st = world.run();
  EXPECT_FALSE(st.all_finished);
  ASSERT_EQ(sim.errors().all().size(), 1u);
  EXPECT_NE(sim.errors().all()[0].message.find("blocked in sleep"), std::string::npos) << sim.errors().all()[0].message;
}

// 200 samples, 1..200 ns in ps, shuffled: the tail is the 198th smallest
// (nearest rank) and the largest, in ns; the samples stay as given, no CPU
// time is charged, and no samples report nothing.
int reports_tail(int, char**) {
  uint64_t s[200];
  for (uint32_t i = 0; i < 200; ++i) s[i] = ((i * 37) % 200 + 1) * 1000ull;
  const uint64_t t0 = nicsim_now_ps();
  nicsim_result_tail("lat", s, 200, 1000.0, "ns");
  nicsim_result_tail("none", s, 0, 1000.0, "ns");
  for (uint32_t i = 0; i < 200; ++i)
    if (s[i] != ((i * 37) % 200 + 1) * 1000ull) return 1;
  return nicsim_now_ps() == t0 ? 0 : 2;
}
const BuiltinProgram reg_tail("test_reports_tail", reports_tail, "test");

TEST(World, ResultTailIsTheNearestRankP99AndTheMax) {
  Scenario sc = scenario(std::string(kPair) + R"(workload { program: "test_reports_tail" nodes: "a" })");
  Sim sim(sc.seed);
  World world(sc);
  ASSERT_TRUE(world.run().ok);
  ASSERT_EQ(world.programs().at(0)->state(), ProgramState::Finished);
  const auto& r = world.programs().at(0)->results();
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r[0].name, "lat_p99");
  EXPECT_EQ(r[0].value, 198.0);
  EXPECT_EQ(r[0].unit, "ns");
  EXPECT_EQ(r[1].name, "lat_max");
  EXPECT_EQ(r[1].value, 200.0);
}

}  // namespace

// results.json is written an array element at a time; the text must be what
// protobuf's converter writes for the whole message, and the message must
// come back whole.
TEST(Report, StreamedJsonIsTheConvertersTextAndLeavesTheMessageWhole) {
  results::Results r;
  r.set_scenario("s \"quoted\"\nline");
  r.set_seed(7);
  for (int i = 0; i < 3; ++i) {
    results::ProgramResult& p = *r.add_programs();
    p.set_program("prog");
    p.set_node(fmt::format("h{}", i));
    for (int j = 0; j < i; ++j) {
      results::Value& v = *p.add_results();
      v.set_object("h");
      v.set_name(fmt::format("v{}", j));
      v.set_value(0.1 * j);
    }
  }
  results::LinkResult& l = *r.add_links();
  l.set_name("l0");
  l.mutable_a_to_b()->set_packets(12);
  results::FsmCoverage& f = *r.add_fsm();
  f.set_type("ib.qp");
  f.add_transitions()->set_from("RESET");
  r.mutable_partition()->set_blocks(2);
  const std::string before = r.SerializeAsString();
  std::ostringstream streamed;
  write_json(streamed, r);
  EXPECT_EQ(streamed.str(), to_json(r));
  EXPECT_NE(streamed.str().find("\"errors\": []"), std::string::npos);
  EXPECT_EQ(r.SerializeAsString(), before);
  results::Results empty;
  std::ostringstream none;
  write_json(none, empty);
  EXPECT_EQ(none.str(), to_json(empty));
}
