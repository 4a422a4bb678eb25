// Timing of the Elan3 model (simulated, deterministic, asserted exactly):
// TLB hit and miss, the one-way latency of a 64-byte remote write, a
// polled ping-pong, the bandwidth of a 1 MiB DMA; and NIC kind "elan3"
// loaded from a scenario file.
#include <gtest/gtest.h>

#include <vector>

#include "elan_model/tests/elan3_harness.h"

using namespace nicsim;
using namespace nicsim::elan3;
using namespace nicsim::elan3::testing;

namespace {

bool is_sender() { return nicsim_workload_rank() == 0; }

// Polled 8-byte put, half round trip (docs/elan3.md "Where the time goes"):
// with the buffers in node memory the put's 8 bytes cross PCI in a read
// (0.735 us) that SDRAM buffers do without; the published user-level put
// is under 2 us (goal 1.8-2.3 us).
constexpr Tick kPingPongHostPs = 2581004;
constexpr Tick kPingPongCardPs = 2048505;

// TLB: a lookup costs tlb_cycles (1 cycle, 10 ns at 100 MHz); a miss adds
// the PTE read over the idle PCI bus (pci-66 read latency 600 ns, see
// host/bus.h, plus the occupancy of an 8-byte read: (6 overhead + 1 data)
// cycles / 0.85 efficiency = 9 cycles of 66.666 MHz = 135.002 ns) and
// walk_cycles (4 cycles, 40 ns): 10 + 600 + 135.002 + 40 = 785.002 ns.
// Sixteen entries, LRU.
int tlb(int, char**) {
  if (!is_sender()) return 0;
  Elan3Dev* d = Elan3Dev::attach();
  if (!d) return 1;
  E3Addr e = 0;
  mapped(*d, 20 * kPageSize, perm::kLocalRead, &e);
  nicsim_sleep_ns(100000);  // let the bus go idle
  Mmu& mmu = this_elan().mmu();
  const Elan3Stats& st = this_elan().stats();
  struct Lookup {
    Translation t;
    Tick done = 0;
    static void translated(void* self, std::uint64_t) {
      auto* l = static_cast<Lookup*>(self);
      EXPECT_EQ(l->t.fault, Fault::None);
      l->done = Calendar::now();
    }
  };
  auto timed = [&](E3Addr a) {
    Lookup l;
    const Tick t0 = Calendar::now();
    mmu.translate(a, 4, perm::kLocalRead, l.t, {&Lookup::translated, &l});
    nicsim_sleep_ns(5000);
    EXPECT_NE(l.done, 0u);
    return l.done - t0;
  };
  const host::HostBus& bus = this_elan().bus();
  const Tick miss_expect = this_elan().cycles(1) + bus.read_latency() + bus.read_occupancy(8) + this_elan().cycles(4);
  EXPECT_EQ(miss_expect, 785002u);
  const std::uint64_t m0 = st.tlb_misses;
  EXPECT_EQ(timed(e), miss_expect);
  EXPECT_EQ(timed(e + 100), 10000u);  // same page: a hit, one cycle
  EXPECT_EQ(st.tlb_misses, m0 + 1);
  // Fill the TLB: pages 1..15 miss (page 0 is in), then all 16 hit.
  for (std::uint32_t p = 1; p < 16; ++p) EXPECT_EQ(timed(e + p * kPageSize), miss_expect) << p;
  for (std::uint32_t p = 0; p < 16; ++p) EXPECT_EQ(timed(e + p * kPageSize), 10000u) << p;
  // A 17th page evicts the least recently used (page 0), which then misses.
  EXPECT_EQ(timed(e + 16 * kPageSize), miss_expect);
  EXPECT_EQ(timed(e + 1 * kPageSize), 10000u);
  EXPECT_EQ(timed(e), miss_expect);
  return ::testing::Test::HasFailure() ? 1 : 0;
}
const BuiltinProgram reg_tlb("t_elan_tlb", tlb, "test");

// One-way latency of a 64-byte remote write, from the sender's issue_dma
// call to the receiver's event handler, with the pages already in both TLBs
// (a warm-up write first). Printed and asserted; docs/elan3.md explains it.
int latency(int, char**) {
  Elan3Dev* d = Elan3Dev::attach();
  if (!d) return 1;
  E3Addr buf_e = 0;
  std::uint8_t* buf = mapped(*d, 4096, is_sender() ? perm::kLocalRead : perm::kRemoteWrite, &buf_e);
  Tick arrived = 0;
  const std::uint32_t cookie = d->add_event_handler([&](std::uint32_t, E3Addr) { arrived = Calendar::now(); });
  ElanMem ev = d->alloc_event(true);
  Peer peer = exchange(Peer{d->node_id(), buf_e, ev.elan, 0, 0});
  Tick t0[2] = {0, 0};
  for (int round = 0; round < 2; ++round) {
    if (!is_sender()) d->prime_event(ev, 1, event::Type::None, 0, 0, true, cookie);
    nicsim_barrier();
    if (is_sender()) {
      fill(buf, 64, round);
      DmaRequest r;
      r.size = 64;
      r.source = buf_e;
      r.dest = peer.buf;
      r.dest_event = peer.event;
      r.dest_node = peer.node;
      t0[round] = Calendar::now();
      EXPECT_EQ(d->issue_dma(r), DevStatus::Ok);
      nicsim_mgmt_send(nicsim_workload_node(1), 0x300, &t0[round], sizeof(Tick));
    } else {
      Tick start = 0;
      nicsim_mgmt_recv(nicsim_workload_node(0), 0x300, &start, sizeof start, nullptr, 0);
      EXPECT_TRUE(d->wait_event(ev, 1 * kMs));
      std::vector<std::uint8_t> expect(64);
      fill(expect.data(), 64, round);
      EXPECT_EQ(std::memcmp(buf, expect.data(), 64), 0);
      if (round == 1) {
        // Both destination event sets took the held (primed) event: no
        // read of the event over the bus.
        EXPECT_EQ(this_elan().stats().events_held_sets, 2u);
        const Tick one_way = arrived - start;
        nicsim_result("write64_one_way", static_cast<double>(one_way) / kNs, "ns");
        std::printf("64-byte remote write, issue to handler: %llu ps\n", static_cast<unsigned long long>(one_way));
        // docs/elan3.md has the step-by-step table: the descriptor comes
        // from SDRAM (written there by PIO) instead of a PCI read.
        EXPECT_EQ(one_way, 4762014u);
      }
    }
    nicsim_barrier();
  }
  return ::testing::Test::HasFailure() ? 1 : 0;
}
const BuiltinProgram reg_lat("t_elan_latency", latency, "test");

// Ping-pong of 8-byte writes, both sides polling their event (no
// interrupts): half the round trip. Each side issues its put as soon as it
// sees the peer's arrive, then re-primes its event for the next (the peer's
// next put comes a whole round trip later), as a polled put loop is written.
// With the argument "card" the buffers are in the card's SDRAM (the put
// reads its 8 bytes there and lands them there), else in node memory.
// 4 KiB the put reads at 0 and lands at 64: in SDRAM (card) or node memory.
ElanMem pingpong_buffer(Elan3Dev& d, bool card) {
  ElanMem m;
  ElanRange range;
  if (card) {
    EXPECT_EQ(d.map_card(1, perm::kLocalRead | perm::kRemoteWrite, 0, 0, &range, &m), DevStatus::Ok);
    return m;
  }
  m.host = mapped(d, 4096, perm::kLocalRead | perm::kRemoteWrite, &m.elan);
  m.bytes = 4096;
  return m;
}

int pingpong(int argc, char** argv) {
  Elan3Dev* d = Elan3Dev::attach();
  if (!d) return 1;
  const bool card = argc > 1 && std::string(argv[1]) == "card";
  const ElanMem mem = pingpong_buffer(*d, card);
  const E3Addr buf_e = mem.elan;
  const auto* buf = static_cast<const std::uint8_t*>(mem.host);
  auto put_word = [&](int v) { d->store(mem, 0, &v, 4); };
  ElanMem ev = d->alloc_event(true);
  d->prime_event(ev, 1, event::Type::None, 0, 0, false);
  Peer peer = exchange(Peer{d->node_id(), buf_e, ev.elan, 0, 0});
  nicsim_barrier();
  DmaRequest r;
  r.size = 8;
  r.source = buf_e;
  r.dest = peer.buf + 64;
  r.dest_event = peer.event;
  r.dest_node = peer.node;
  constexpr int kIters = 20;
  Tick start = 0, end = 0;
  if (is_sender()) {
    put_word(0);
    d->issue_dma(r);
  }
  // The sender's put i + 1 follows the echo of put i; timed from put 2 (two
  // warm-up round trips) to the echo of the last.
  for (int i = 0; i < kIters + 2; ++i) {
    while (!d->event_fired(ev)) {
    }
    if (i == kIters + 1) end = Calendar::now();
    int got = -1;
    std::memcpy(&got, buf + 64, 4);
    EXPECT_EQ(got, i);
    if (!is_sender() || i + 1 < kIters + 2) {
      if (is_sender() && i == 1) start = Calendar::now();
      put_word(is_sender() ? i + 1 : i);
      d->issue_dma(r);
    }
    d->prime_event(ev, 1, event::Type::None, 0, 0, false);
  }
  if (is_sender()) {
    const Tick half = (end - start) / (2 * kIters);
    nicsim_result(card ? "pingpong_card_half_rtt" : "pingpong_half_rtt", static_cast<double>(half) / kNs, "ns");
    std::printf("8-byte polled ping-pong (%s buffers), half round trip: %llu ps\n", card ? "SDRAM" : "node memory",
                static_cast<unsigned long long>(half));
    EXPECT_EQ(half, card ? kPingPongCardPs : kPingPongHostPs);
    if (card) {
      EXPECT_GE(half, 1800 * kNs);
      EXPECT_LE(half, 2300 * kNs);
    }
  }
  nicsim_barrier();
  return ::testing::Test::HasFailure() ? 1 : 0;
}
const BuiltinProgram reg_pp("t_elan_pingpong", pingpong, "test");

// Bandwidth of one 1 MiB DMA: issue to source event (all packets acked).
int bandwidth(int, char**) {
  Elan3Dev* d = Elan3Dev::attach();
  if (!d) return 1;
  constexpr std::uint32_t kSize = 1 << 20;
  E3Addr buf_e = 0;
  std::uint8_t* buf = mapped(*d, kSize, is_sender() ? perm::kLocalRead : perm::kRemoteWrite, &buf_e);
  ElanMem ev = d->alloc_event(true);
  d->prime_event(ev, 1, event::Type::None, 0, 0, true, Elan3Dev::kWaitCookie);
  Peer peer = exchange(Peer{d->node_id(), buf_e, ev.elan, 0, 0});
  if (is_sender()) {
    fill(buf, kSize, 1);
    DmaRequest r;
    r.size = kSize;
    r.source = buf_e;
    r.dest = peer.buf;
    r.dest_node = peer.node;
    r.dest_event = peer.event;
    r.src_event = ev.elan;
    const Tick t0 = Calendar::now();
    EXPECT_EQ(d->issue_dma(r), DevStatus::Ok);
    EXPECT_TRUE(d->wait_event(ev, 100 * kMs));
    const Tick t = Calendar::now() - t0;
    const double mbs = static_cast<double>(kSize) / (static_cast<double>(t) / kSec) / 1e6;
    nicsim_result("dma_1mib_bandwidth", mbs, "MB/s");
    std::printf("1 MiB DMA: %llu ps, %.1f MB/s\n", static_cast<unsigned long long>(t), mbs);
    EXPECT_LE(mbs, 400.0);                // the link
    EXPECT_LE(mbs, 400.0 * 320.0 / 348);  // 320 data bytes in 348 wire bytes per packet
    // The host's PCI read throughput is the limit (docs/elan3.md "DMA data
    // reads"): 1 KiB reads one at a time, each 600 ns read latency + 158
    // bus cycles, and a short read at every Elan page end: 3.169097 ms,
    // 330.9 MB/s (the descriptor from SDRAM); published Elan3 point to
    // point about 335 MB/s, the goal within 5%.
    EXPECT_LE(mbs, 335.0);
    EXPECT_GE(mbs, 335.0 * 0.95);
    EXPECT_EQ(t, 3169096855u);
  } else {
    EXPECT_TRUE(d->wait_event(ev, 100 * kMs));
    std::vector<std::uint8_t> expect(kSize);
    fill(expect.data(), kSize, 1);
    EXPECT_EQ(std::memcmp(buf, expect.data(), kSize), 0);
  }
  nicsim_barrier();
  return ::testing::Test::HasFailure() ? 1 : 0;
}
const BuiltinProgram reg_bw("t_elan_bandwidth", bandwidth, "test");

}  // namespace

TEST(Elan3Mmu, TlbHitAndMissTimingExactAndLruEviction) { run_ok(two_elans("t_elan_tlb")); }
TEST(Elan3Timing, RemoteWrite64BytesOneWayLatencyExact) { run_ok(two_elans("t_elan_latency")); }
TEST(Elan3Timing, PolledPingPongHalfRoundTripExact) { run_ok(two_elans("t_elan_pingpong")); }
TEST(Elan3Timing, PolledPutSdramHalfRoundTripInThePublishedRange) {
  run_ok(two_elans("t_elan_pingpong", "", "", R"(args: "card")"));
}
TEST(Elan3Timing, OneMiBDmaBandwidth) { run_ok(two_elans("t_elan_bandwidth")); }

TEST(Elan3Scenario, NicKindElan3LoadsFromScenarioFileBackToBack) {
  const Scenario sc =
      load_scenario_file(std::string(NICSIM_SOURCE_DIR) + "/elan_model/tests/elan3_pair.textproto",
                         [](std::string_view n) { return ProgramRegistry::instance().find(n) != nullptr; });
  ASSERT_EQ(sc.nodes.size(), 2u);
  run_ok(sc);
}

namespace {

// The elan3_put program back to back: the same put as the test program
// above, plus an 8-byte pattern store and its check per round.
TEST(Elan3Put, ProgramTimesThePolledPutAndChecksEveryByte) {
  const auto r =
      nicsim::testing::run_scenario(two_elans("elan3_put", "", "", R"(args: "--sizes=8,4096" args: "--iters=20")"));
  ASSERT_TRUE(r.ok);
  EXPECT_NEAR(r.results.at("put_lat_8"), 2057.13, 0.01);
  EXPECT_GT(r.results.at("put_lat_8"), static_cast<double>(kPingPongCardPs) / kNs);
  EXPECT_GT(r.results.at("put_lat_4096"), r.results.at("put_lat_8"));
}

TEST(Elan3Put, BadArgumentsAreRefused) {
  nicsim::testing::RunOptions o;
  o.expect_programs_ok = false;
  o.expect_clean = false;
  const auto r = nicsim::testing::run_scenario(two_elans("elan3_put", "", "", R"(args: "--sizes=8,5000")"), o);
  EXPECT_EQ(r.exit_codes, (std::vector<int>{2, 2}));
}

}  // namespace
