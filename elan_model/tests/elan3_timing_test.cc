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
        // docs/elan3.md has the step-by-step table. Against the former
        // 7.232016 us: the descriptor and payload reads each 400 ns shorter
        // (pci-66 read latency 600 ns, was 1 us): -0.8 us; the destination
        // event set from the event the engine holds since its prime, with no
        // read-modify-write over the bus (1.465 us -> 0.070 us after the
        // packet's check): -1.395 us; the interrupt queue entry now waits on
        // the bus behind the payload and count writes: +0.205 us;
        // 7.232016 - 0.8 - 1.395 + 0.205 = 5.242016 us, 5.242014 with the
        // bus cycles rounded to picoseconds.
        EXPECT_EQ(one_way, 5242014u);
      }
    }
    nicsim_barrier();
  }
  return ::testing::Test::HasFailure() ? 1 : 0;
}
const BuiltinProgram reg_lat("t_elan_latency", latency, "test");

// Ping-pong of 8-byte writes, both sides polling their event (no
// interrupts): half the round trip.
int pingpong(int, char**) {
  Elan3Dev* d = Elan3Dev::attach();
  if (!d) return 1;
  E3Addr buf_e = 0;
  std::uint8_t* buf = mapped(*d, 4096, perm::kLocalRead | perm::kRemoteWrite, &buf_e);
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
  Tick start = 0;
  for (int i = 0; i < kIters + 2; ++i) {
    if (i == 2) start = Calendar::now();  // two warm-up round trips
    if (is_sender()) {
      std::memcpy(buf, &i, 4);
      d->issue_dma(r);
    }
    while (!d->event_fired(ev)) {
    }
    d->prime_event(ev, 1, event::Type::None, 0, 0, false);
    int got = -1;
    std::memcpy(&got, buf + 64, 4);
    EXPECT_EQ(got, i);
    if (!is_sender()) {
      std::memcpy(buf, &i, 4);
      d->issue_dma(r);
    }
  }
  if (is_sender()) {
    const Tick half = (Calendar::now() - start) / (2 * kIters);
    nicsim_result("pingpong_half_rtt", static_cast<double>(half) / kNs, "ns");
    std::printf("8-byte polled ping-pong, half round trip: %llu ps\n", static_cast<unsigned long long>(half));
    // Against the former 5.256002 us: descriptor and payload reads 400 ns
    // shorter each (pci-66 read latency 600 ns, was 1 us): -0.8 us; the
    // event set without its 16-byte read (1 us latency + 150 ns occupancy
    // and its wait behind the payload write on the bus): -1.2 us.
    EXPECT_EQ(half, 3256002u);
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
    // bus cycles, and a short read at every Elan page end: 2.862072 ms
    // (366.4 MB/s, link-limited, when the payload of each packet was read
    // on its own with reads overlapping) -> 3.169577 ms, 330.8 MB/s; published
    // Elan3 point to point about 335 MB/s.
    EXPECT_LE(mbs, 335.0);
    EXPECT_EQ(t, 3169576855u);
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
TEST(Elan3Timing, OneMiBDmaBandwidth) { run_ok(two_elans("t_elan_bandwidth")); }

TEST(Elan3Scenario, NicKindElan3LoadsFromScenarioFileBackToBack) {
  const Scenario sc =
      load_scenario_file(std::string(NICSIM_SOURCE_DIR) + "/elan_model/tests/elan3_pair.textproto",
                         [](std::string_view n) { return ProgramRegistry::instance().find(n) != nullptr; });
  ASSERT_EQ(sc.nodes.size(), 2u);
  run_ok(sc);
}
