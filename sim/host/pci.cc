// PCI functions on the host bus: configuration space, the probe, and the
// binding of drivers (host/pci.h).
#include "host/pci.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "core/sim.h"
#include "host/bus.h"
#include "trace/trace.h"

namespace nicsim::host {

// ---- driver registry --------------------------------------------------------------

DriverRegistry& DriverRegistry::instance() {
  static DriverRegistry registry;
  return registry;
}

bool DriverRegistry::add(Driver driver) {
  if (driver.name.empty() || !driver.bind) return false;
  for (const Driver& d : drivers_)
    if (d.name == driver.name) return false;
  drivers_.push_back(std::move(driver));
  return true;
}

const Driver* DriverRegistry::match(std::uint16_t vendor, std::uint16_t device) const {
  for (const Driver& d : drivers_)
    for (const pci::DeviceId& id : d.ids)
      if (id.vendor == vendor && id.device == device) return &d;
  return nullptr;
}

BoundDriver* bound_driver(Host& host, std::string_view name) {
  HostBus* bus = host.bus();
  if (!bus || !bus->bind_drivers()) return nullptr;
  return bus->bound(name);
}

BoundDriver* find_bound_driver(const Host& host, std::string_view name) {
  const HostBus* bus = host.bus();
  return bus && bus->probed() ? bus->bound(name) : nullptr;
}

// ---- functions and their configuration headers -------------------------------------

bool HostBus::bad_function(const std::string& name, const std::vector<BarWindow>& bars) const {
  auto bad = [&](const std::string& why) {
    Sim::get().error(this->name(), fmt::format("PCI function {}: {}", name, why));
    return true;
  };
  if (pci_slots_.size() >= pci::kDevices)
    return bad(fmt::format("the bus has no free device number (of {})", pci::kDevices));
  if (bars.size() > pci::kBars) return bad(fmt::format("{} BARs (a type 0 header has {})", bars.size(), pci::kBars));
  for (std::size_t i = 0; i < bars.size(); ++i) {
    const BarWindow& b = bars[i];
    if (!b.size) continue;
    // 32-bit memory BARs only: the size is a power of two, the base aligned to it.
    if (b.size < 16 || (b.size & (b.size - 1)) || b.base % b.size || b.base + b.size > (1ull << 32) || !b.target)
      return bad(fmt::format("BAR {} [{:#x}, +{:#x}) is not a 32-bit memory BAR", i, b.base, b.size));
  }
  return false;
}

int HostBus::add_function(std::string name, const pci::Identity& id, const std::vector<BarWindow>& bars) {
  if (bad_function(name, bars)) return -1;
  for (const BarWindow& b : bars)
    if (b.size && !map_device(b.name, b.base, b.size, *b.target)) return -1;
  PciSlot s;
  s.name = name;
  std::uint8_t* c = s.config.data();
  put(c, pci::vendor_id, id.vendor);
  put(c, pci::device_id, id.device);
  // The platform firmware assigned the BARs and enabled decoding and bus
  // mastering, as PC firmware does for the devices it configures.
  put(c, pci::command, pci::kCommandMemory | pci::kCommandMaster);
  put(c, pci::revision_id, id.revision);
  put(c, pci::class_code, id.class_code);
  put(c, pci::header_type, 0);
  for (std::size_t i = 0; i < bars.size(); ++i) {
    s.bar_base[i] = static_cast<std::uint32_t>(bars[i].size ? bars[i].base : 0);
    s.bar_size[i] = static_cast<std::uint32_t>(bars[i].size);
    put(c, Field{pci::bar_offset(static_cast<std::uint32_t>(i)), 4, "bar"}, s.bar_base[i]);
  }
  const int line = host_.irq().attach(name, nullptr);
  put(c, pci::interrupt_line, line >= 0 && line < pci::kNoLine ? line : pci::kNoLine);
  put(c, pci::interrupt_pin, pci::kIntA);
  pci_slots_.push_back(std::move(s));
  return static_cast<int>(pci_slots_.size() - 1);
}

// ---- configuration transactions -------------------------------------------------

bool HostBus::config_ok(const char* what, std::uint32_t slot, std::uint32_t offset, std::uint32_t width) const {
  const char* why = nullptr;
  if (!before_run() &&
      (sc_core::sc_get_status() != sc_core::SC_RUNNING ||
       sc_core::sc_get_current_process_handle().proc_kind() != sc_core::SC_THREAD_PROC_ || Calendar::dispatching()))
    why = "outside a thread (the caller must wait for the bus)";
  else if (slot >= pci::kDevices)
    why = "beyond the bus's device numbers";
  else if ((width != 1 && width != 2 && width != 4) || offset % width || offset + width > pci::kConfigSize)
    why = "not a naturally aligned 1, 2 or 4 byte access within the 256-byte space";
  if (!why) return true;
  Sim::get().error(name(), fmt::format("{} of {} bytes at device {} offset {:#x}: {}", what, width, slot, offset, why));
  return false;
}

// The bus is held as for an MMIO access of `width` bytes (the overhead
// cycles only when no device answers: a master abort); the CPU waits for
// the completion, as for an MMIO read. Before the run the same time goes on
// the boot clock instead (see before_run()).
void HostBus::config_cycle(const char* what, std::uint32_t slot, std::uint32_t offset, std::uint32_t width,
                           bool present) {
  const Tick occ = occupancy(present ? width : 0);
  if (before_run()) {
    boot_probe_time_ += occ + mmio_read_latency_;
    return;
  }
  const Tick start = grant(occ);
  const Tick back = start + occ + mmio_read_latency_;
  Tracer& tr = Sim::get().tracer();
  if (tr.on(node_id_, Component::bus))
    tr.record(now(), node_id_, Component::bus, what,
              {{"device", slot},
               {"offset", offset},
               {"bytes", width},
               {"start", start},
               {"return", back},
               {"master_abort", present ? 0 : 1}});
  BlockScope scope(host_, what);
  Sim::get().calendar().thread_wait_until(back);
}

std::uint32_t HostBus::config_read(std::uint32_t slot, std::uint32_t offset, std::uint32_t width) {
  const std::uint32_t ones = width >= 4 ? ~0u : (1u << (8 * width)) - 1;
  if (!config_ok("config_read", slot, offset, width)) return ~0u;
  const bool present = slot < pci_slots_.size();
  config_cycle("config_read", slot, offset, width, present);
  if (!present) return ones;
  std::uint32_t v = 0;
  std::memcpy(&v, pci_slots_[slot].config.data() + offset, width);
  return v;
}

bool HostBus::config_write(std::uint32_t slot, std::uint32_t offset, std::uint32_t width, std::uint32_t value) {
  if (!config_ok("config_write", slot, offset, width)) return false;
  const bool present = slot < pci_slots_.size();
  config_cycle("config_write", slot, offset, width, present);
  if (!present) return true;  // nobody claimed it: the write goes nowhere
  PciSlot& s = pci_slots_[slot];
  if (offset >= pci::command.offset && offset + width <= pci::command.offset + pci::command.width) {
    std::memcpy(s.config.data() + offset, &value, width);
  } else if (width == 4 && offset >= pci::bar0.offset && offset < pci::bar_offset(pci::kBars)) {
    const std::uint32_t i = (offset - pci::bar0.offset) / 4;
    const std::uint32_t v = value == ~0u ? ~(s.bar_size[i] - 1) & ~pci::kBarFlagsMask : s.bar_base[i];
    put(s.config.data(), Field{offset, 4, "bar"}, s.bar_size[i] ? v : 0);
  }
  return true;
}

pci::Bar HostBus::size_bar(std::uint32_t slot, std::uint32_t bar) {
  const std::uint32_t off = pci::bar_offset(bar);
  const std::uint32_t base = config_read(slot, off, 4);
  config_write(slot, off, 4, ~0u);
  const std::uint32_t mask = config_read(slot, off, 4) & ~pci::kBarFlagsMask;
  config_write(slot, off, 4, base);
  if (!mask) return {};
  return pci::Bar{base & ~pci::kBarFlagsMask, static_cast<std::uint32_t>(~mask + 1)};
}

std::vector<pci::Function> HostBus::enumerate() {
  std::vector<pci::Function> out;
  for (std::uint32_t slot = 0; slot < pci::kDevices; ++slot) {
    const std::uint32_t ids = config_read(slot, pci::vendor_id.offset, 4);
    if ((ids & 0xffff) == pci::kNoVendor) continue;
    // Bridges and cardbus headers are not modelled: a type 0 header only.
    if ((config_read(slot, 0x0c, 4) >> 16 & 0x7f) != 0) continue;
    const std::uint32_t class_rev = config_read(slot, pci::revision_id.offset, 4);
    const std::uint32_t irq = config_read(slot, pci::interrupt_line.offset, 4);
    pci::Function f;
    f.slot = slot;
    f.vendor = static_cast<std::uint16_t>(ids);
    f.device = static_cast<std::uint16_t>(ids >> 16);
    f.revision = static_cast<std::uint8_t>(class_rev);
    f.class_code = class_rev >> 8;
    f.irq_line = static_cast<std::uint8_t>(irq);
    f.irq_pin = static_cast<std::uint8_t>(irq >> 8);
    for (std::uint32_t i = 0; i < pci::kBars; ++i) f.bars[i] = size_bar(slot, i);
    f.name = slot < pci_slots_.size() ? pci_slots_[slot].name : fmt::format("device{}", slot);
    out.push_back(std::move(f));
  }
  return out;
}

// ---- binding ----------------------------------------------------------------------

bool HostBus::bind_drivers() {
  if (probe_ == Probe::Done) return true;
  // In the run the probe needs a thread of this node: it waits for the bus.
  if (!before_run() && (Host::current_host() != &host_ || host_.in_interrupt() || !host_.current())) return false;
  if (probe_ == Probe::Running) {
    while (probe_ == Probe::Running)
      if (!probe_done_->wait()) return false;
    return probe_ == Probe::Done;
  }
  probe_ = Probe::Running;
  found_ = enumerate();
  bind_found();
  probe_ = Probe::Done;
  if (!before_run()) probe_done_->notify_all();
  return true;
}

void HostBus::bind_found() {
  Tracer& tr = Sim::get().tracer();
  for (const pci::Function& f : found_) {
    const Driver* d = DriverRegistry::instance().match(f.vendor, f.device);
    std::unique_ptr<BoundDriver> instance = d ? d->bind(DriverContext{*this, f, host_}) : nullptr;
    if (tr.on(node_id_, Component::bus))
      tr.record(now(), node_id_, Component::bus, instance ? "bind" : "unclaimed",
                {{"device", f.slot},
                 {"name", f.name},
                 {"driver", d ? d->name : std::string()},
                 {"boot_probe_time", boot_probe_time_}});
    if (instance) bindings_.push_back(Binding{d->name, std::move(instance)});
  }
}

BoundDriver* HostBus::bound(std::string_view driver) const {
  for (const Binding& b : bindings_)
    if (b.driver == driver) return b.instance.get();
  return nullptr;
}

}  // namespace nicsim::host
