// The perftest-style programs (verbs/perftest): each runs in-process on two
// HCA nodes through one switch (8 Gb/s links, PCI-X 133 host buses) with a
// small sweep, and its figures must be physically sane: small-message
// latencies between 1 us and 50 us, growing with size; bandwidths above 0
// and never above the link (1000 MB/s) nor the PCI-X bus peak (1064 MB/s).
// The programs check payload bytes, read data and atomic results
// themselves and fail on any mismatch or completion error, so a run that
// is ok has moved correct data.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "core/sim.h"
#include "verbs/perftest/perftest.h"
#include "world/programs.h"
#include "world/world.h"

using namespace nicsim;

namespace {

constexpr double kLinkMBps = 1000.0;  // 8 Gb/s of data
constexpr double kBusMBps = 1064.0;   // PCI-X 64 bit / 133 MHz peak

struct Outcome {
  bool ok = false;
  std::map<std::string, double> client, server;  // results by name
};

Outcome run(const std::string& program, const std::vector<std::string>& args) {
  std::string text = R"(
    name: "perftest"
    topology { star { hosts: 2 } nic: "hca" }
    link_defaults { bandwidth: "8Gbps" delay: "5ns" }
    workload { program: ")" +
                     program + R"(" nodes: "h0" nodes: "h1")";
  for (const auto& a : args) text += " args: \"" + a + "\"";
  text += " }";
  Scenario sc = load_scenario_text(text, "perftest.textproto",
                                   [](std::string_view n) { return ProgramRegistry::instance().find(n) != nullptr; });
  Sim sim(sc.seed);
  World world(sc);
  Outcome out;
  out.ok = world.run().ok;
  for (const auto& e : sim.errors().all()) ADD_FAILURE() << e.where << ": " << e.message;
  for (const auto& p : world.programs()) {
    EXPECT_EQ(p->exit_code(), 0) << "rank " << p->rank() << ": " << p->failure();
    for (const auto& r : p->results()) (p->rank() == 0 ? out.client : out.server)[r.name] = r.value;
  }
  return out;
}

double get(const std::map<std::string, double>& m, const std::string& name) {
  auto it = m.find(name);
  if (it == m.end()) {
    ADD_FAILURE() << "no result " << name;
    return -1;
  }
  return it->second;
}

// Latencies of every size are in (1 us, 50 us), the median is no more than
// the mean's neighbourhood, and larger messages never take less time.
void expect_sane_latency(const Outcome& o, const std::vector<int>& sizes) {
  ASSERT_TRUE(o.ok);
  double previous = 0;
  for (int s : sizes) {
    const std::string n = "lat_" + std::to_string(s);
    const double typical = get(o.client, n + "_typical"), avg = get(o.client, n + "_avg");
    EXPECT_GT(typical, 1.0) << n;
    EXPECT_LT(typical, 50.0) << n;
    EXPECT_GT(avg, 1.0) << n;
    EXPECT_LT(avg, 50.0) << n;
    EXPECT_GE(typical, previous) << n;
    previous = typical;
  }
}

void expect_sane_bandwidth(const std::map<std::string, double>& r, const std::vector<int>& sizes) {
  double previous = 0;
  for (int s : sizes) {
    const std::string n = "bw_" + std::to_string(s);
    const double bw = get(r, n);
    EXPECT_GT(bw, 0.0) << n;
    EXPECT_LE(bw, kLinkMBps) << n;
    EXPECT_LE(bw, kBusMBps) << n;
    EXPECT_GE(bw, previous * 0.95) << n << " (bandwidth should grow with size)";
    previous = bw;
  }
}

const std::vector<int> kLatSizes = {2, 64, 512, 4096};
const std::vector<int> kBwSizes = {2, 64, 4096, 65536};

}  // namespace

// The payload pattern the programs check: every corrupted byte is found,
// and messages of other iterations, sizes or senders do not pass.
TEST(PerftestPattern, DetectsCorruptionAndStaleMessages) {
  std::vector<uint8_t> buf(4096);
  pt_fill(buf.data(), 4096, 4096, 7);
  EXPECT_EQ(pt_check(buf.data(), 4096, 4096, 7), -1);
  for (uint32_t k : {0u, 1u, 2047u, 4095u}) {
    buf[k] ^= 0x10;
    EXPECT_EQ(pt_check(buf.data(), 4096, 4096, 7), static_cast<long>(k));
    buf[k] ^= 0x10;
  }
  EXPECT_NE(pt_check(buf.data(), 4096, 4096, 8), -1);                // the previous iteration's data
  EXPECT_NE(pt_check(buf.data(), 4096, 2048, 7), -1);                // another size's
  EXPECT_NE(pt_check(buf.data(), 4096, 4096, 7 | 0x80000000u), -1);  // the other sender's
  // Short messages too: a 2-byte message of the next iteration differs.
  for (uint32_t i = 0; i < 1000; ++i)
    EXPECT_TRUE(pt_pattern(2, i, 0) != pt_pattern(2, i + 1, 0) || pt_pattern(2, i, 1) != pt_pattern(2, i + 1, 1)) << i;
}

TEST(PerftestSendLat, PingPongLatencyIsSane) {
  const Outcome o = run("ib_send_lat", {"--sizes=2,64,512,4096", "--iters=100"});
  expect_sane_latency(o, kLatSizes);
  // The model's register-level half round trip is 3.15 us; the verbs add
  // CPU time on both sides, and inline small sends save a DMA read.
  EXPECT_GT(get(o.client, "lat_2_typical"), 3.0);
  EXPECT_LT(get(o.client, "lat_2_typical"), 6.0);
  EXPECT_TRUE(o.server.empty());
}

TEST(PerftestSendLat, EventPollingAddsTheInterruptPath) {
  const Outcome o = run("ib_send_lat", {"--sizes=2", "--iters=50", "--poll=event"});
  expect_sane_latency(o, {2});
  // Interrupt entry (1.5 us) and the event queue handler come on top of
  // the busy-polled ~3.7 us.
  EXPECT_GT(get(o.client, "lat_2_typical"), 4.5);
}

TEST(PerftestWriteLat, PingPongLatencyIsSane) {
  const Outcome o = run("ib_write_lat", {"--sizes=2,64,512,4096", "--iters=100"});
  expect_sane_latency(o, kLatSizes);
}

TEST(PerftestReadLat, ReadLatencyIsSane) {
  const Outcome o = run("ib_read_lat", {"--sizes=2,64,512,4096", "--iters=100"});
  expect_sane_latency(o, kLatSizes);
}

TEST(PerftestAtomicLat, FetchAndAddLatencyIsSaneAndCounterIsExact) {
  const Outcome o = run("ib_atomic_lat", {"--iters=200"});
  expect_sane_latency(o, {8});
  EXPECT_EQ(get(o.client, "atomic_final"), 200.0);
}

TEST(PerftestAtomicLat, CompareAndSwapCounterIsExact) {
  const Outcome o = run("ib_atomic_lat", {"--iters=50", "--atomic=cswap", "--poll=event"});
  expect_sane_latency(o, {8});
  EXPECT_EQ(get(o.client, "atomic_final"), 50.0);
}

TEST(PerftestSendBw, BandwidthIsSane) {
  const Outcome o = run("ib_send_bw", {"--sizes=2,64,4096,65536", "--iters=64", "--tx-depth=32", "--cq-mod=8"});
  ASSERT_TRUE(o.ok);
  expect_sane_bandwidth(o.client, kBwSizes);
  // 64 KiB messages stream near the bus limit (README: 843 MB/s register level).
  EXPECT_GT(get(o.client, "bw_65536"), 600.0);
}

TEST(PerftestSendBw, BidirectionalSharesTheBus) {
  const Outcome o = run("ib_send_bw", {"--sizes=2,4096,65536", "--iters=48", "--bidirectional", "--poll=event"});
  ASSERT_TRUE(o.ok);
  const std::vector<int> sizes = {2, 4096, 65536};
  expect_sane_bandwidth(o.client, sizes);
  expect_sane_bandwidth(o.server, sizes);
  for (int s : sizes) {
    const std::string n = "bw_" + std::to_string(s);
    const double total = get(o.client, n + "_total");
    EXPECT_NEAR(total, get(o.client, n) + get(o.server, n), 1e-6 * total) << n;
    // Each node's half-duplex bus carries both directions.
    EXPECT_LE(total, kBusMBps) << n;
  }
}

TEST(PerftestWriteBw, BandwidthIsSane) {
  const Outcome o = run("ib_write_bw", {"--sizes=2,64,4096,65536", "--iters=64"});
  ASSERT_TRUE(o.ok);
  expect_sane_bandwidth(o.client, kBwSizes);
  EXPECT_GT(get(o.client, "bw_65536"), 600.0);
  EXPECT_TRUE(o.server.empty());
}

TEST(PerftestWriteBw, BidirectionalSharesTheBus) {
  const Outcome o = run("ib_write_bw", {"--sizes=4096,65536", "--iters=48", "--bidirectional"});
  ASSERT_TRUE(o.ok);
  for (int s : {4096, 65536}) {
    const std::string n = "bw_" + std::to_string(s);
    EXPECT_GT(get(o.server, n), 0.0);
    EXPECT_LE(get(o.client, n + "_total"), kBusMBps) << n;
    EXPECT_GT(get(o.client, n + "_total"), get(o.client, n)) << n;
  }
}

TEST(PerftestReadBw, BandwidthIsSane) {
  const Outcome o = run("ib_read_bw", {"--sizes=2,64,4096,65536", "--iters=64"});
  ASSERT_TRUE(o.ok);
  expect_sane_bandwidth(o.client, kBwSizes);
  EXPECT_GT(get(o.client, "bw_65536"), 600.0);
}

TEST(PerftestArgs, BadArgumentsAndLoneNodesFail) {
  Scenario sc = load_scenario_text(R"(
    name: "perftest"
    topology { star { hosts: 2 } nic: "hca" }
    workload { program: "ib_send_lat" nodes: "h0" nodes: "h1" args: "--bogus=1" }
    workload { program: "ib_write_bw" nodes: "h0" }
  )",
                                   "perftest.textproto",
                                   [](std::string_view n) { return ProgramRegistry::instance().find(n) != nullptr; });
  Sim sim(sc.seed);
  World world(sc);
  EXPECT_FALSE(world.run().ok);
  ASSERT_EQ(world.programs().size(), 4u);  // the two workloads and the subnet manager
  for (const auto& p : world.programs()) {
    if (p->daemon) {
      EXPECT_EQ(p->info().name, "subnet_manager");
      continue;
    }
    EXPECT_NE(p->exit_code(), 0);
    const bool lone = p->info().name == "ib_write_bw";
    EXPECT_NE(p->failure().find(lone ? "exactly two nodes" : "unknown argument '--bogus=1'"), std::string::npos)
        << p->failure();
  }
}
