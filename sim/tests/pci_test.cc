// PCI functions on the host bus: what a probe reads from configuration
// space (ids, BARs, interrupt line), the bus time configuration
// transactions take, the boot probe before the run, and drivers bound only
// to the functions their id tables name. Each test runs in its own process
// and calls sc_start at most once.
#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "core/params.h"
#include "core/sim.h"
#include "host/bus.h"
#include "host/host.h"
#include "host/pci.h"

namespace nicsim::host {
namespace {

ParamSet scope_params(const char* scope) { return ParamSet(*ParamRegistry::instance().find(scope)); }

std::string all_errors() {
  std::string s;
  for (const SimError& e : Sim::get().errors().all()) s += e.where + ": " + e.message + "\n";
  return s;
}

// A register window that answers every byte of a read with its offset's low
// byte and counts the accesses.
class Regs : public tlm::tlm_fw_transport_if<> {
 public:
  int accesses = 0;
  void b_transport(tlm::tlm_generic_payload& gp, sc_core::sc_time&) override {
    ++accesses;
    if (gp.is_read()) std::memset(gp.get_data_ptr(), static_cast<int>(gp.get_address() & 0xff), gp.get_data_length());
    gp.set_response_status(tlm::TLM_OK_RESPONSE);
  }
  tlm::tlm_sync_enum nb_transport_fw(tlm::tlm_generic_payload&, tlm::tlm_phase&, sc_core::sc_time&) override {
    return tlm::TLM_COMPLETED;
  }
  bool get_direct_mem_ptr(tlm::tlm_generic_payload&, tlm::tlm_dmi&) override { return false; }
  unsigned int transport_dbg(tlm::tlm_generic_payload&) override { return 0; }
};

// PCI-X 64/133 (the default profile), efficiency 0.92, 8 overhead cycles:
// a 4-byte configuration transaction holds the bus ceil(9 / 0.92) = 10
// cycles, a master abort ceil(8 / 0.92) = 9; the CPU waits mmio_read_latency
// (1 us) more for the completion.
constexpr std::uint64_t kHz = 133'000'000;
const Tick kOcc4 = cycles_time(10, kHz);
const Tick kOccAbort = cycles_time(9, kHz);
constexpr Tick kReadLatency = 1 * kUs;
// What enumerate() does: per function the id, header type, class and
// revision, interrupt dwords and 4 transactions to size each of 6 BARs; per
// empty device number one read that aborts.
constexpr int kPerFunction = 4 + 6 * 4;

// Node "h0" with two functions: slot 0 has BAR 0 only; slot 1 has BARs 0
// and 2 (BAR 1 not implemented).
struct Node {
  Sim sim{1};
  Host host{"h0", 0, scope_params("host")};
  std::unique_ptr<HostBus> bus = std::make_unique<HostBus>("bus", host, scope_params("bus"));
  Regs a, b0, b2;
  Node() {
    EXPECT_EQ(bus->add_function("nicA", {0x1234, 0x0001, 0x07, 0x020000}, {{"nicA.bar0", 0xf0000000, 0x1000, &a}}), 0);
    EXPECT_EQ(bus->add_function("nicB", {0x5678, 0x00ff, 0x02, 0x0c0600},
                                {{"nicB.bar0", 0xf0100000, 0x100000, &b0}, {}, {"nicB.bar2", 0xf0010000, 0x4000, &b2}}),
              1);
  }
};

TEST(PciTest, EnumerationListsEachFunctionWithItsIdsBarsAndInterruptLine) {
  Node n;
  std::vector<pci::Function> found;
  Tick took = 0, busy = 0;
  std::uint32_t v = 0, bar2_after = 0;
  n.host.spawn("kernel", [&] {
    found = n.bus->enumerate();
    took = now();
    busy = n.bus->busy_time();
    bar2_after = n.bus->config_read(1, pci::bar_offset(2), 4);
    EXPECT_TRUE(n.bus->mmio_read(found.at(1).bars[2].base + 4, &v, 4));
  });
  sc_core::sc_start();
  ASSERT_EQ(found.size(), 2u);
  const pci::Function& a = found[0];
  EXPECT_EQ(a.slot, 0u);
  EXPECT_EQ(a.vendor, 0x1234);
  EXPECT_EQ(a.device, 0x0001);
  EXPECT_EQ(a.revision, 0x07);
  EXPECT_EQ(a.class_code, 0x020000u);
  EXPECT_EQ(a.bars[0].base, 0xf0000000u);
  EXPECT_EQ(a.bars[0].size, 0x1000u);
  for (std::uint32_t i = 1; i < pci::kBars; ++i) EXPECT_EQ(a.bars[i].size, 0u) << i;
  EXPECT_EQ(a.irq_line, 0);  // the first lines of the node's interrupt controller
  EXPECT_EQ(a.irq_pin, pci::kIntA);
  EXPECT_EQ(a.name, "nicA");
  const pci::Function& b = found[1];
  EXPECT_EQ(b.slot, 1u);
  EXPECT_EQ(b.vendor, 0x5678);
  EXPECT_EQ(b.device, 0x00ff);
  EXPECT_EQ(b.class_code, 0x0c0600u);
  EXPECT_EQ(b.bars[0].base, 0xf0100000u);
  EXPECT_EQ(b.bars[0].size, 0x100000u);
  EXPECT_EQ(b.bars[1].size, 0u);
  EXPECT_EQ(b.bars[2].base, 0xf0010000u);
  EXPECT_EQ(b.bars[2].size, 0x4000u);
  EXPECT_EQ(b.irq_line, 1);
  // Sizing put every base back; the BAR found reaches the device.
  EXPECT_EQ(bar2_after, 0xf0010000u);
  EXPECT_EQ(v, 0x04040404u);
  EXPECT_EQ(n.b2.accesses, 1);
  // Every transaction of the scan paid for the bus and the round trip.
  const int empty = static_cast<int>(pci::kDevices) - 2;
  EXPECT_EQ(took, 2 * kPerFunction * (kOcc4 + kReadLatency) + empty * (kOccAbort + kReadLatency));
  EXPECT_EQ(busy, 2 * kPerFunction * kOcc4 + empty * kOccAbort);
  EXPECT_TRUE(n.sim.errors().empty()) << all_errors();
}

TEST(PciTest, ConfigurationTransactionsCostBusTimeLikeMmioReads) {
  Node n;
  std::uint32_t ids = 0, empty = 0, vendor16 = 0, class8 = 0, command = 0, mask = 0, restored = 0, bad = 0;
  Tick t_ids = 0, t_empty = 0, t_write = 0;
  n.host.spawn("kernel", [&] {
    Tick t = now();
    ids = n.bus->config_read(0, pci::vendor_id.offset, 4);
    t_ids = now() - t;
    t = now();
    empty = n.bus->config_read(7, pci::vendor_id.offset, 4);
    t_empty = now() - t;
    vendor16 = n.bus->config_read(1, pci::vendor_id.offset, 2);
    class8 = n.bus->config_read(1, 0x0b, 1);  // base class
    t = now();
    EXPECT_TRUE(n.bus->config_write(0, pci::command.offset, 2, pci::kCommandMemory));
    t_write = now() - t;
    command = n.bus->config_read(0, pci::command.offset, 2);
    EXPECT_TRUE(n.bus->config_write(0, pci::vendor_id.offset, 2, 0xabcd));  // read-only: ignored
    EXPECT_TRUE(n.bus->config_write(0, pci::bar_offset(0), 4, ~0u));
    mask = n.bus->config_read(0, pci::bar_offset(0), 4);
    EXPECT_TRUE(n.bus->config_write(0, pci::bar_offset(0), 4, 0x12345000));  // windows do not move
    restored = n.bus->config_read(0, pci::bar_offset(0), 4);
    bad = n.bus->config_read(0, 1, 4);  // misaligned
  });
  sc_core::sc_start();
  EXPECT_EQ(ids, 0x00011234u);
  EXPECT_EQ(t_ids, kOcc4 + kReadLatency);
  EXPECT_EQ(empty, 0xffffffffu) << "an empty slot reads all ones";
  EXPECT_EQ(t_empty, kOccAbort + kReadLatency);
  EXPECT_EQ(vendor16, 0x5678u);
  EXPECT_EQ(class8, 0x0cu);
  EXPECT_EQ(t_write, kOcc4 + kReadLatency) << "configuration writes are not posted";
  EXPECT_EQ(command, pci::kCommandMemory);
  EXPECT_EQ(mask, 0xfffff000u);
  EXPECT_EQ(restored, 0xf0000000u);
  EXPECT_EQ(bad, 0xffffffffu);
  ASSERT_EQ(n.sim.errors().all().size(), 1u) << all_errors();
  EXPECT_NE(n.sim.errors().all()[0].message.find("naturally aligned"), std::string::npos);
  // Ten transactions of 1 to 4 bytes (one bus cycle of data each) and the
  // abort; the malformed read never reached the bus.
  EXPECT_EQ(n.bus->busy_time(), 10 * kOcc4 + kOccAbort);
}

TEST(PciTest, TheBootProbeBeforeTheRunLeavesTheRunsBusAndClockAlone) {
  Node n;
  ASSERT_TRUE(n.bus->bind_drivers());
  EXPECT_TRUE(n.bus->probed());
  EXPECT_EQ(n.bus->functions().size(), 2u);
  const int empty = static_cast<int>(pci::kDevices) - 2;
  EXPECT_EQ(n.bus->boot_probe_time(), 2 * kPerFunction * (kOcc4 + kReadLatency) + empty * (kOccAbort + kReadLatency));
  EXPECT_EQ(n.bus->busy_time(), 0u);
  Tick back = 0;
  n.host.spawn("driver", [&] {
    std::uint32_t v = 0;
    EXPECT_TRUE(n.bus->mmio_read(0xf0000000, &v, 4));
    back = now();
  });
  sc_core::sc_start();
  EXPECT_EQ(back, kOcc4 + kReadLatency) << "the first MMIO of the run finds the bus free at time 0";
  EXPECT_TRUE(n.sim.errors().empty()) << all_errors();
}

// A driver instance that keeps what binding handed it.
struct Bound : BoundDriver {
  Bound(const DriverContext& c, bool* gone) : bus(&c.bus), host(&c.host), function(c.function), gone(gone) {}
  ~Bound() override { *gone = true; }
  HostBus* bus;
  Host* host;
  pci::Function function;
  bool* gone;
};

TEST(PciTest, DriversBindOnlyToTheFunctionsTheirTablesName) {
  bool gone = false;
  auto bind = [&gone](const DriverContext& c) -> std::unique_ptr<BoundDriver> {
    return std::make_unique<Bound>(c, &gone);
  };
  DriverRegistry& reg = DriverRegistry::instance();
  ASSERT_TRUE(reg.add(Driver{"test.a", {{0x1111, 0x0001}, {0x1234, 0x0001}}, bind}));
  ASSERT_TRUE(reg.add(Driver{"test.other_device", {{0x1234, 0x0002}}, bind}));
  ASSERT_TRUE(reg.add(Driver{"test.other_vendor", {{0x9999, 0x0001}}, bind}));
  EXPECT_FALSE(reg.add(Driver{"test.a", {{0x5678, 0x00ff}}, bind})) << "names are unique";
  Node n;
  BoundDriver *first = nullptr, *second = nullptr, *other_device = nullptr, *other_vendor = nullptr;
  BoundDriver* before = nullptr;
  Tick first_at = 0, second_at = 0;
  n.host.spawn("consumer1", [&] {
    before = find_bound_driver(n.host, "test.a");
    first = bound_driver(n.host, "test.a");  // probes: this thread pays
    first_at = now();
    other_device = bound_driver(n.host, "test.other_device");
    other_vendor = bound_driver(n.host, "test.other_vendor");
  });
  n.host.spawn("consumer2", [&] {
    second = bound_driver(n.host, "test.a");  // waits for the probe already running
    second_at = now();
  });
  sc_core::sc_start();
  EXPECT_EQ(before, nullptr);
  ASSERT_NE(first, nullptr);
  EXPECT_EQ(second, first);
  EXPECT_EQ(second_at, first_at);
  EXPECT_EQ(other_device, nullptr);
  EXPECT_EQ(other_vendor, nullptr);
  const auto* b = static_cast<Bound*>(first);
  EXPECT_EQ(b->bus, n.bus.get());
  EXPECT_EQ(b->host, &n.host);
  EXPECT_EQ(b->function.slot, 0u);
  EXPECT_EQ(b->function.bars[0].base, 0xf0000000u);
  EXPECT_EQ(b->function.irq_line, 0);
  const int empty = static_cast<int>(pci::kDevices) - 2;
  EXPECT_EQ(first_at, 2 * kPerFunction * (kOcc4 + kReadLatency) + empty * (kOccAbort + kReadLatency));
  EXPECT_EQ(n.bus->functions().size(), 2u) << "nicB is found, and left unclaimed";
  EXPECT_EQ(find_bound_driver(n.host, "test.a"), first);
  n.bus.reset();
  EXPECT_TRUE(gone) << "the bus owns its drivers' instances";
  EXPECT_EQ(n.host.bus(), nullptr);
  EXPECT_EQ(bound_driver(n.host, "test.a"), nullptr);
  EXPECT_TRUE(n.sim.errors().empty()) << all_errors();
}

TEST(PciTest, MalformedFunctionsAreRefused) {
  Sim sim(1);
  Host host("h0", 0, scope_params("host"));
  HostBus bus("bus", host, scope_params("bus"));
  Regs r;
  EXPECT_EQ(bus.add_function("odd", {0x1, 0x2, 0, 0}, {{"odd.bar0", 0xf0000000, 0x1800, &r}}), -1);
  EXPECT_EQ(bus.add_function("unaligned", {0x1, 0x2, 0, 0}, {{"u.bar0", 0xf0000800, 0x1000, &r}}), -1);
  EXPECT_EQ(bus.add_function("high", {0x1, 0x2, 0, 0}, {{"h.bar0", 0x100000000ull, 0x1000, &r}}), -1);
  EXPECT_EQ(bus.add_function("ok", {0x1, 0x2, 0, 0}, {{"ok.bar0", 0xf0000000, 0x1000, &r}}), 0);
  EXPECT_EQ(bus.add_function("overlap", {0x1, 0x3, 0, 0}, {{"o.bar0", 0xf0000000, 0x1000, &r}}), -1);
  EXPECT_EQ(sim.errors().all().size(), 4u) << all_errors();
}

}  // namespace
}  // namespace nicsim::host
