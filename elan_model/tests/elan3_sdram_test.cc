// The Elan's SDRAM: reached by the host through BAR 1 (a store is posted
// and costs the CPU only the bus occupancy; a load crosses the bus and
// back), by the Elan at SDRAM speed through PTEs that name card pages; DMA
// between SDRAM and node memory in both directions, bytes exact; the size
// parameter.
#include <gtest/gtest.h>

#include <vector>

#include "elan_model/tests/elan3_harness.h"

using namespace nicsim;
using namespace nicsim::elan3;
using namespace nicsim::elan3::testing;

namespace {

bool is_sender() { return nicsim_workload_rank() == 0; }

// Store and load through BAR 1 on an idle pci-66 bus: the store returns
// after the bus occupancy of 32 bytes ((6 + 4) cycles / 0.85 = 12 cycles of
// 66.666 MHz = 180.002 ns); the load after its occupancy and the 1.2 us PIO
// read latency, and sees the stored bytes.
int pio(int, char**) {
  Elan3Dev* d = Elan3Dev::attach();
  if (!d) return 1;
  if (is_sender()) {
    ElanRange range;
    ElanMem m;
    EXPECT_EQ(d->map_card(1, perm::kLocalRead, 0, 0, &range, &m), DevStatus::Ok);
    EXPECT_TRUE(m.card);
    nicsim_sleep_ns(100000);
    std::uint8_t data[32];
    fill(data, sizeof data, 3);
    const Tick t0 = Calendar::now();
    d->store(m, 64, data, sizeof data);
    const Tick stored = Calendar::now() - t0;
    host::HostBus& bus = this_elan().bus();
    EXPECT_EQ(stored, bus.occupancy(32));
    EXPECT_EQ(stored, 180002u);
    nicsim_sleep_ns(10000);
    std::uint8_t back[32] = {};
    // The Elan's view: the page's PTE names kCardAddr | its SDRAM offset.
    Translation t;
    struct Done {
      bool fired = false;
      static void fn(void* s, std::uint64_t) { static_cast<Done*>(s)->fired = true; }
    } done;
    this_elan().mmu().translate(m.elan + 64, 32, perm::kLocalRead, t, {&Done::fn, &done});
    nicsim_sleep_ns(5000);
    EXPECT_TRUE(done.fired);
    EXPECT_EQ(t.fault, Fault::None);
    if (t.pieces.size() != 1 || !is_card(t.pieces[0].addr)) {
      ADD_FAILURE() << "the page does not name SDRAM";
      return 1;
    }
    const Tick t1 = Calendar::now();
    EXPECT_TRUE(bus.mmio_read(this_elan().params().sdram_bar + card_offset(t.pieces[0].addr), back, sizeof back));
    EXPECT_EQ(Calendar::now() - t1, bus.occupancy(32) + bus.mmio_read_latency());
    EXPECT_EQ(std::memcmp(back, data, sizeof data), 0);
    EXPECT_EQ(std::memcmp(static_cast<std::uint8_t*>(m.host) + 64, data, sizeof data), 0);  // the copy
  }
  return ::testing::Test::HasFailure() ? 1 : 0;
}
const BuiltinProgram reg_pio("t_elan_sdram_pio", pio, "test");

// A 20,000-byte DMA from the sender's SDRAM (filled by PIO) into the
// receiver's node memory, then the receiver sends it back from there into
// the sender's SDRAM: every byte checked at both ends, in SDRAM through a
// PIO load and in the window's copy in node memory.
int dma(int, char**) {
  Elan3Dev* d = Elan3Dev::attach();
  if (!d) return 1;
  constexpr std::uint32_t kSize = 20000;
  ElanRange range;
  ElanMem card;
  EXPECT_EQ(d->map_card(3, perm::kLocalRead | perm::kRemoteWrite, 0, 0, &range, &card), DevStatus::Ok);
  E3Addr host_e = 0;
  std::uint8_t* host_buf = mapped(*d, kSize, perm::kLocalRead | perm::kRemoteWrite, &host_e);
  ElanMem ev = d->alloc_event(true);
  d->prime_event(ev, 1, event::Type::None, 0, 0, true, Elan3Dev::kWaitCookie);
  Peer peer = exchange(Peer{d->node_id(), host_e, ev.elan, card.elan, 0});
  std::vector<std::uint8_t> expect(kSize);
  fill(expect.data(), kSize, 9);
  DmaRequest r;
  r.size = kSize;
  r.dest_event = peer.event;
  r.dest_node = peer.node;
  if (is_sender()) {
    d->store(card, 0, expect.data(), kSize);
    r.source = card.elan;
    r.dest = peer.buf;  // the receiver's node memory
    EXPECT_EQ(d->issue_dma(r), DevStatus::Ok);
    EXPECT_TRUE(d->wait_event(ev, 10 * kMs)) << "the data never came back";
    EXPECT_EQ(std::memcmp(card.host, expect.data(), kSize), 0) << "the copy of the window";
    std::vector<std::uint8_t> back(kSize);
    // Back in SDRAM: a PIO load of the last 256 bytes.
    Translation t;
    struct Done {
      static void fn(void*, std::uint64_t) {}
    };
    this_elan().mmu().translate(card.elan + kSize - 256, 256, perm::kLocalRead, t, {&Done::fn, nullptr});
    nicsim_sleep_ns(5000);
    if (t.pieces.size() != 1) {
      ADD_FAILURE() << "the range is not one SDRAM piece";
      return 1;
    }
    EXPECT_TRUE(
        this_elan().bus().mmio_read(this_elan().params().sdram_bar + card_offset(t.pieces[0].addr), back.data(), 256));
    EXPECT_EQ(std::memcmp(back.data(), expect.data() + kSize - 256, 256), 0);
  } else {
    EXPECT_TRUE(d->wait_event(ev, 10 * kMs));
    EXPECT_EQ(std::memcmp(host_buf, expect.data(), kSize), 0);
    r.source = host_e;
    r.dest = peer.queue;  // the sender's SDRAM
    EXPECT_EQ(d->issue_dma(r), DevStatus::Ok);
  }
  nicsim_barrier();
  return ::testing::Test::HasFailure() ? 1 : 0;
}
const BuiltinProgram reg_dma("t_elan_sdram_dma", dma, "test");

int size(int, char**) {
  Elan3Dev* d = Elan3Dev::attach();
  if (!d) return 1;
  EXPECT_EQ(this_elan().sdram().size(), 16u << 20);
  EXPECT_EQ(this_elan().params().sdram_bytes, 16u << 20);
  return ::testing::Test::HasFailure() ? 1 : 0;
}
const BuiltinProgram reg_size("t_elan_sdram_size", size, "test");

}  // namespace

TEST(Elan3Sdram, PioStoreIsPostedLoadCrossesTheBusAndSeesIt) { run_ok(two_elans("t_elan_sdram_pio")); }
TEST(Elan3Sdram, DmaFromSdramToNodeMemoryAndBackBytesExact) { run_ok(two_elans("t_elan_sdram_dma")); }
TEST(Elan3Sdram, SizeParameterSizesTheCardRoundedToAPowerOfTwo) {
  const std::string p = R"(param { key: "nic.sdram_size" value: "24MiB" })";
  const Scenario sc = load_scenario_text(
      "node { name: \"a\" nic: \"elan3\" " + p + " }\nnode { name: \"b\" nic: \"elan3\" " + p +
          " }\nlink { name: \"ab\" a: \"a\" b: \"b\" }\nworkload { program: \"t_elan_sdram_size\" nodes: \"*\" }\n",
      "test.textproto", [](std::string_view n) { return ProgramRegistry::instance().find(n) != nullptr; });
  run_ok(sc);
}
