// Host bus: contention arithmetic, DMA and MMIO timing, master aborts,
// profiles. Each test runs in its own process and calls sc_start once.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cstring>
#include <iterator>
#include <string>
#include <vector>

#include "core/params.h"
#include "core/sim.h"
#include "host/bus.h"
#include "host/host.h"
#include "trace/trace.h"

namespace nicsim::host {
namespace {

ParamSet scope_params(const char* scope) { return ParamSet(*ParamRegistry::instance().find(scope)); }

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

// Records completions: (time, arg) per callback.
struct Completions {
  std::vector<std::pair<Tick, std::uint64_t>> seen;
  static void on_done(void* self, std::uint64_t arg) { static_cast<Completions*>(self)->seen.emplace_back(now(), arg); }
  DmaDone done(std::uint64_t arg) { return DmaDone{&Completions::on_done, this, arg}; }
};

// A register file behind the bus: records every access, answers reads.
class RegTarget : public tlm::tlm_fw_transport_if<> {
 public:
  struct Access {
    Tick t;
    tlm::tlm_command cmd;
    std::uint64_t offset;
    std::vector<unsigned char> data;
  };
  std::vector<Access> log;
  unsigned char regs[256] = {};

  void b_transport(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay) override {
    unsigned char* p = gp.get_data_ptr();
    unsigned len = gp.get_data_length();
    std::uint64_t off = gp.get_address();
    if (off + len > sizeof regs) {
      gp.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
      return;
    }
    if (gp.is_write())
      std::memcpy(regs + off, p, len);
    else
      std::memcpy(p, regs + off, len);
    log.push_back(Access{now(), gp.get_command(), off, std::vector<unsigned char>(p, p + len)});
    gp.set_response_status(tlm::TLM_OK_RESPONSE);
  }
  tlm::tlm_sync_enum nb_transport_fw(tlm::tlm_generic_payload&, tlm::tlm_phase&, sc_core::sc_time&) override {
    return tlm::TLM_COMPLETED;
  }
  bool get_direct_mem_ptr(tlm::tlm_generic_payload&, tlm::tlm_dmi&) override { return false; }
  unsigned int transport_dbg(tlm::tlm_generic_payload&) override { return 0; }
};

// PCI-X 64/133, efficiency 0.92, 8 overhead cycles:
//   2 KiB: ceil((8 + 2048/8) / 0.92) = ceil(286.96) = 287 cycles
//          = ceil(287 / 133 MHz) = 2157895 ps
//   64 B:  ceil((8 + 8) / 0.92) = 18 cycles; 4 B: ceil(9 / 0.92) = 10 cycles
constexpr Tick kOcc2K = 2157895;
constexpr std::uint64_t kHz = 133'000'000;

TEST(BusTest, ContendingDmaWritesCompleteExactlyOneOccupancyApart) {
  Sim sim(1);
  sim.tracer().set_devices({"h0"});
  sim.tracer().enable("*", Component::bus);
  Host host("h0", 0, scope_params("host"));
  HostBus bus("bus", host, scope_params("bus"));
  ASSERT_EQ(bus.occupancy(2048), kOcc2K);
  ASSERT_EQ(bus.occupancy(2048), cycles_time(287, kHz));
  auto* mem = static_cast<unsigned char*>(host.memory().alloc(3 * 2048));
  std::vector<unsigned char> src(2048);
  for (std::size_t i = 0; i < src.size(); ++i) src[i] = static_cast<unsigned char>(i * 7 + 1);
  auto base = reinterpret_cast<std::uint64_t>(mem);
  Completions c;
  Tick quoted = 0;
  unsigned char before_completion = 0xff;
  host.spawn("engine", [&] {
    quoted = bus.quote(false, 2048);
    bus.dma_write("nic0.dma", base, src.data(), 2048, c.done(1));
    bus.dma_write("nic0.dma", base + 2048, src.data(), 2048, c.done(2));
    host.sleep(kOcc2K + 200 * kNs - 1);
    before_completion = mem[0];  // one picosecond before the first completes
    host.sleep(100 * kUs);
    // The bus has been idle: a new request starts at once.
    bus.dma_write("nic0.dma", base + 4096, src.data(), 2048, c.done(3));
  });
  sc_core::sc_start();
  Tick w = bus.write_latency();
  EXPECT_EQ(w, 200 * kNs);
  EXPECT_EQ(quoted, kOcc2K + w);
  ASSERT_EQ(c.seen.size(), 3u);
  EXPECT_EQ(c.seen[0], std::make_pair(kOcc2K + w, std::uint64_t{1}));
  EXPECT_EQ(c.seen[1], std::make_pair(2 * kOcc2K + w, std::uint64_t{2}));
  EXPECT_EQ(c.seen[1].first - c.seen[0].first, kOcc2K);
  Tick third_start = kOcc2K + 200 * kNs - 1 + 100 * kUs;
  EXPECT_EQ(c.seen[2].first, third_start + kOcc2K + w);
  EXPECT_EQ(before_completion, 0);
  EXPECT_EQ(std::memcmp(mem, src.data(), 2048), 0);
  EXPECT_EQ(std::memcmp(mem + 2048, src.data(), 2048), 0);
  EXPECT_EQ(std::memcmp(mem + 4096, src.data(), 2048), 0);
  EXPECT_EQ(bus.bytes_written(), 3u * 2048);
  EXPECT_EQ(bus.busy_time(), 3 * kOcc2K);
  EXPECT_EQ(sim.tracer().records(), 3u);
  EXPECT_TRUE(sim.errors().empty()) << all_errors();
}

TEST(BusTest, ReadAndWriteLatenciesDiffer) {
  Sim sim(1);
  Host host("h0", 0, scope_params("host"));
  HostBus bus("bus", host, scope_params("bus"));
  auto* mem = static_cast<unsigned char*>(host.memory().alloc(64));
  for (int i = 0; i < 64; ++i) mem[i] = static_cast<unsigned char>(100 + i);
  auto base = reinterpret_cast<std::uint64_t>(mem);
  unsigned char rbuf[64] = {};
  unsigned char wbuf[64];
  std::memset(wbuf, 0x5a, sizeof wbuf);
  Completions c;
  Tick occ64 = cycles_time(18, kHz);
  host.spawn("engine", [&] {
    bus.dma_read("nic0.fetch", base, rbuf, 64, c.done(1));
    host.sleep(10 * kUs);
    bus.dma_write("nic0.cqe", base, wbuf, 64, c.done(2));
  });
  sc_core::sc_start();
  EXPECT_EQ(bus.occupancy(64), occ64);
  ASSERT_EQ(c.seen.size(), 2u);
  EXPECT_EQ(c.seen[0].first, 750 * kNs + occ64);             // split read: latency, then data
  EXPECT_EQ(c.seen[1].first, 10 * kUs + occ64 + 200 * kNs);  // posted write
  EXPECT_EQ(rbuf[0], 100);
  EXPECT_EQ(rbuf[63], 163);
  EXPECT_EQ(mem[10], 0x5a);
  EXPECT_EQ(bus.bytes_read(), 64u);
}

TEST(BusTest, MmioWriteReachesTheTargetAtTheExactTimeWithItsBytes) {
  Sim sim(1);
  Host host("h0", 0, scope_params("host"));
  HostBus bus("bus", host, scope_params("bus"));
  RegTarget dev;
  constexpr std::uint64_t kBase = 0xf000'0000;
  bus.map_device("hca0.uar", kBase, 0x100, dev);
  Tick returned1 = 0, returned2 = 0;
  host.spawn("driver", [&] {
    std::uint32_t v = 0xdeadbeef;
    EXPECT_TRUE(bus.mmio_write(kBase + 0x40, &v, 4));
    returned1 = now();
    v = 0x01020304;  // posted: the first write keeps its own copy
    EXPECT_TRUE(bus.mmio_write(kBase + 0x44, &v, 4));
    returned2 = now();
  });
  sc_core::sc_start();
  Tick occ4 = cycles_time(10, kHz);
  EXPECT_EQ(bus.occupancy(4), occ4);
  EXPECT_EQ(returned1, occ4);  // the thread waits for the bus only
  EXPECT_EQ(returned2, 2 * occ4);
  ASSERT_EQ(dev.log.size(), 2u);
  EXPECT_EQ(dev.log[0].t, occ4 + 250 * kNs);
  EXPECT_EQ(dev.log[0].cmd, tlm::TLM_WRITE_COMMAND);
  EXPECT_EQ(dev.log[0].offset, 0x40u);
  std::vector<unsigned char> want1 = {0xef, 0xbe, 0xad, 0xde};
  EXPECT_EQ(dev.log[0].data, want1);
  EXPECT_EQ(dev.log[1].t, 2 * occ4 + 250 * kNs);
  std::vector<unsigned char> want2 = {0x04, 0x03, 0x02, 0x01};
  EXPECT_EQ(dev.log[1].data, want2);
  EXPECT_TRUE(sim.errors().empty()) << all_errors();
}

TEST(BusTest, MmioReadRoundTripAndOrderingAfterPostedWrites) {
  Sim sim(1);
  Host host("h0", 0, scope_params("host"));
  HostBus bus("bus", host, scope_params("bus"));
  RegTarget dev;
  constexpr std::uint64_t kBase = 0xf000'0000;
  bus.map_device("nic0.regs", kBase, 0x100, dev);
  std::uint32_t got = 0, got_after_write = 0;
  Tick t_read = 0, t_start2 = 0, t_read2 = 0;
  host.spawn("driver", [&] {
    std::uint32_t init = 0x11223344;
    std::memcpy(dev.regs + 8, &init, 4);
    EXPECT_TRUE(bus.mmio_read(kBase + 8, &got, 4));
    t_read = now();
    std::uint32_t v = 0xcafef00d;
    EXPECT_TRUE(bus.mmio_write(kBase + 8, &v, 4));
    t_start2 = now();
    // Reads do not pass posted writes: this read sees the value just written.
    EXPECT_TRUE(bus.mmio_read(kBase + 8, &got_after_write, 4));
    t_read2 = now();
  });
  sc_core::sc_start();
  Tick occ4 = cycles_time(10, kHz);
  EXPECT_EQ(got, 0x11223344u);
  EXPECT_EQ(t_read, occ4 + 1 * kUs);
  ASSERT_EQ(dev.log.size(), 3u);
  EXPECT_EQ(dev.log[0].cmd, tlm::TLM_READ_COMMAND);
  EXPECT_EQ(dev.log[0].t, occ4 + 250 * kNs);  // one way: the request reaches the device
  EXPECT_EQ(got_after_write, 0xcafef00du);
  EXPECT_EQ(t_start2, t_read + occ4);
  EXPECT_EQ(t_read2, t_start2 + occ4 + 1 * kUs);
  EXPECT_LT(dev.log[1].t, dev.log[2].t);
  EXPECT_TRUE(sim.errors().empty()) << all_errors();
}

TEST(BusTest, UnmappedMmioAndTargetErrorsAreReported) {
  Sim sim(1);
  Host host("h0", 0, scope_params("host"));
  HostBus bus("bus", host, scope_params("bus"));
  RegTarget dev;
  bus.map_device("dev", 0x1000, 0x1000, dev);
  RegTarget other;
  bus.map_device("overlap", 0x1800, 0x1000, other);  // refused
  bool w = true, r = true, tail = true, bad = true;
  host.spawn("driver", [&] {
    std::uint32_t v = 1;
    w = bus.mmio_write(0x9000, &v, 4);
    r = bus.mmio_read(0x9000, &v, 4);
    tail = bus.mmio_write(0x1ffe, &v, 4);        // crosses the end of the window
    bad = bus.mmio_read(0x1000 + 0x200, &v, 4);  // inside the window, past the registers
  });
  sc_core::sc_start();
  EXPECT_FALSE(w);
  EXPECT_FALSE(r);
  EXPECT_FALSE(tail);
  EXPECT_FALSE(bad);
  EXPECT_TRUE(has_error("mmio_write of 4 bytes to unmapped address 0x9000")) << all_errors();
  EXPECT_TRUE(has_error("mmio_read of 4 bytes from unmapped address 0x9000")) << all_errors();
  EXPECT_TRUE(has_error("to unmapped address 0x1ffe")) << all_errors();
  EXPECT_TRUE(has_error("MMIO window overlap")) << all_errors();
  EXPECT_TRUE(has_error("mmio_read from dev offset 0x200 failed")) << all_errors();
}

TEST(BusTest, MasterAbortReportsAndLeavesMemoryUntouched) {
  Sim sim(1);
  Host host("h0", 0, scope_params("host"));
  HostBus bus("bus", host, scope_params("bus"));
  unsigned char outside[128];
  std::memset(outside, 0x33, sizeof outside);
  auto addr = reinterpret_cast<std::uint64_t>(outside);
  unsigned char src[128];
  std::memset(src, 0xee, sizeof src);
  unsigned char dst[128];
  std::memset(dst, 0x77, sizeof dst);
  auto* mem = static_cast<unsigned char*>(host.memory().alloc(64));
  Completions c;
  host.spawn("engine", [&] {
    bus.dma_write("hca0.rx", addr, src, 128, c.done(5));
    bus.dma_read("hca0.tx", addr, dst, 128, c.done(6));
    // Starts inside an allocation but runs past its end.
    bus.dma_write("hca0.rx", reinterpret_cast<std::uint64_t>(mem) + 32, src, 64, c.done(7));
  });
  sc_core::sc_start();
  Tick occ0 = cycles_time(9, kHz);  // ceil(8 / 0.92) = 9 cycles: address phase only
  EXPECT_EQ(bus.occupancy(0), occ0);
  ASSERT_EQ(c.seen.size(), 3u);
  EXPECT_EQ(c.seen[0], std::make_pair(occ0, 5 | kDmaFailedBit));
  EXPECT_EQ(c.seen[1], std::make_pair(2 * occ0, 6 | kDmaFailedBit));
  EXPECT_EQ(c.seen[2].second, 7 | kDmaFailedBit);
  for (unsigned char b : outside) ASSERT_EQ(b, 0x33);
  for (unsigned char b : dst) ASSERT_EQ(b, 0x77);
  for (int i = 0; i < 64; ++i) ASSERT_EQ(mem[i], 0);
  EXPECT_EQ(bus.bytes_written(), 0u);
  EXPECT_EQ(bus.bytes_read(), 0u);
  ASSERT_EQ(sim.errors().all().size(), 3u) << all_errors();
  EXPECT_EQ(sim.errors().all()[0].where, "bus");
  // Addresses are named relative to node memory regions (process addresses
  // differ between runs and would break byte-identical outputs).
  EXPECT_TRUE(has_error("master abort: hca0.rx DMA write of 128 bytes at host address unmapped")) << all_errors();
  EXPECT_TRUE(has_error("master abort: hca0.tx DMA read of 128 bytes at host address unmapped")) << all_errors();
  EXPECT_TRUE(has_error("master abort: hca0.rx DMA write of 64 bytes at host address r0+0x20")) << all_errors();
}

TEST(BusTest, PinnedMemoryIsDmaAbleAndFreeingInFlightAborts) {
  Sim sim(1);
  Host host("h0", 0, scope_params("host"));
  HostBus bus("bus", host, scope_params("bus"));
  unsigned char user_buf[32] = {};
  unsigned char src[32];
  std::memset(src, 0x42, sizeof src);
  ASSERT_TRUE(host.memory().pin(user_buf, sizeof user_buf));
  void* doomed = host.memory().alloc(32);
  Completions c;
  host.spawn("engine", [&] {
    bus.dma_write("nic", reinterpret_cast<std::uint64_t>(user_buf), src, 32, c.done(1));
    bus.dma_write("nic", reinterpret_cast<std::uint64_t>(doomed), src, 32, c.done(2));
    host.memory().free(doomed);  // before the write lands
  });
  sc_core::sc_start();
  ASSERT_EQ(c.seen.size(), 2u);
  EXPECT_EQ(c.seen[0].second, 1u);
  EXPECT_EQ(c.seen[1].second, 2 | kDmaFailedBit);
  EXPECT_EQ(user_buf[31], 0x42);
  EXPECT_TRUE(has_error("master abort: nic DMA write of 32 bytes")) << all_errors();
}

TEST(BusTest, ProfileDefaultsAndOverrides) {
  Sim sim(1);
  Host host("h0", 0, scope_params("host"));
  HostBus pcix("pcix", host, scope_params("bus"));
  EXPECT_EQ(pcix.width_bits(), 64u);
  EXPECT_EQ(pcix.clock_hz(), 133'000'000u);
  EXPECT_EQ(pcix.efficiency_ppm(), 920'000u);
  EXPECT_EQ(pcix.overhead_cycles(), 8u);
  EXPECT_EQ(pcix.read_latency(), 750 * kNs);
  EXPECT_EQ(pcix.mmio_write_latency(), 250 * kNs);
  EXPECT_EQ(pcix.mmio_read_latency(), 1 * kUs);

  ParamSet p33 = scope_params("bus");
  ASSERT_EQ(p33.set("profile", "pci-33"), "");
  HostBus pci33("pci33", host, p33);
  EXPECT_EQ(pci33.width_bits(), 32u);
  EXPECT_EQ(pci33.clock_hz(), 33'333'000u);
  EXPECT_EQ(pci33.efficiency_ppm(), 850'000u);
  EXPECT_EQ(pci33.read_latency(), 1200 * kNs);
  // 2 KiB: ceil((6 + 512) / 0.85) = ceil(609.4) = 610 cycles.
  EXPECT_EQ(pci33.occupancy(2048), cycles_time(610, 33'333'000));

  ParamSet p66 = scope_params("bus");
  ASSERT_EQ(p66.set("profile", "pci-66"), "");
  ASSERT_EQ(p66.set("clock", "100MHz"), "");
  ASSERT_EQ(p66.set("efficiency", "0.5"), "");
  ASSERT_EQ(p66.set("mmio_read_latency", "2us"), "");
  HostBus custom("custom", host, p66);
  EXPECT_EQ(custom.clock_hz(), 100'000'000u);  // overridden
  EXPECT_EQ(custom.mmio_read_latency(), 2 * kUs);
  EXPECT_EQ(custom.width_bits(), 64u);  // still from pci-66
  EXPECT_EQ(custom.overhead_cycles(), 6u);
  // Still from pci-66: 600 ns (host/bus.h: ~450 ns host bridge fetch + ~150 ns delayed-transaction retry).
  EXPECT_EQ(custom.read_latency(), 600 * kNs);
  // (6 + 8) / 0.5 = 28 cycles of 10 ns.
  EXPECT_EQ(custom.occupancy(64), 280 * kNs);

  ParamSet bad = scope_params("bus");
  EXPECT_NE(bad.set("profile", "isa"), "");
  EXPECT_NE(bad.set("efficiency", "1.5"), "");

  // Every profile in the table is a legal choice of the parameter.
  const ParamDef* def = ParamRegistry::instance().find("bus")->find("profile");
  ASSERT_NE(def, nullptr);
  ASSERT_EQ(def->choices.size(), std::size(kBusProfiles));
  for (const BusProfile& p : kBusProfiles) {
    ParamSet ps = scope_params("bus");
    EXPECT_EQ(ps.set("profile", p.name), "") << p.name;
  }
}

}  // namespace
}  // namespace nicsim::host
