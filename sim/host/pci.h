// PCI functions on a node's host bus, their configuration space, and the
// binding of host drivers to them.
//
// A device model presents itself to its bus as one PCI function
// (HostBus::add_function): identity, BARs (register windows), and an
// interrupt pin that the platform wires to a line of the node's interrupt
// controller. The bus keeps a type 0 configuration header for it. Software
// learns about devices only by reading those headers with configuration
// transactions (HostBus::config_read/config_write), which cost bus time as
// MMIO reads do: HostBus::enumerate() is a kernel's PCI scan.
//
// Drivers register a match table of (vendor, device) ids in the process-wide
// DriverRegistry. When a node's bus is probed (HostBus::bind_drivers, once
// per node), every function found is offered to the first driver whose
// table holds its ids; the driver's bind function gets the bus, the function
// record the probe read, and the host, and returns its per-function
// instance, which the bus keeps for the node's lifetime. Binding only
// creates the instance: a driver initialises its hardware on first use.
#pragma once
#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/fields.h"

namespace nicsim::host {

class Host;
class HostBus;

namespace pci {

// Type 0 configuration header (PCI Local Bus 2.2, section 6.1): the fields
// this model keeps. Little-endian, as on the bus.
#define NICSIM_PCI_HEADER(F)      \
  F(vendor_id, 0x00, 2)           \
  F(device_id, 0x02, 2)           \
  F(command, 0x04, 2)             \
  F(status, 0x06, 2)              \
  F(revision_id, 0x08, 1)         \
  F(class_code, 0x09, 3)          \
  F(header_type, 0x0e, 1)         \
  F(bar0, 0x10, 4)                \
  F(subsystem_vendor_id, 0x2c, 2) \
  F(subsystem_id, 0x2e, 2)        \
  F(interrupt_line, 0x3c, 1)      \
  F(interrupt_pin, 0x3d, 1)
#define NICSIM_PCI_FIELD(name, offset, width) inline constexpr Field name{offset, width, #name};
NICSIM_PCI_HEADER(NICSIM_PCI_FIELD)
#undef NICSIM_PCI_FIELD

inline constexpr std::uint32_t kConfigSize = 256;         // bytes of configuration space per function
inline constexpr std::uint32_t kDevices = 32;             // device numbers on one bus (IDSEL lines)
inline constexpr std::uint32_t kBars = 6;                 // BARs of a type 0 header, 4 bytes apart from bar0
inline constexpr std::uint16_t kNoVendor = 0xffff;        // what a read of an empty slot returns
inline constexpr std::uint16_t kCommandMemory = 1u << 1;  // memory space decoding
inline constexpr std::uint16_t kCommandMaster = 1u << 2;  // bus master (DMA)
inline constexpr std::uint32_t kBarFlagsMask = 0xf;       // memory BAR: type and prefetch bits
inline constexpr std::uint8_t kIntA = 1;                  // interrupt_pin: INTA#
inline constexpr std::uint8_t kNoLine = 0xff;             // interrupt_line: not connected
inline constexpr std::uint32_t bar_offset(std::uint32_t i) { return bar0.offset + 4 * i; }

// What a device declares of itself (its header's read-only identity).
struct Identity {
  std::uint16_t vendor = kNoVendor;
  std::uint16_t device = 0;
  std::uint8_t revision = 0;
  std::uint32_t class_code = 0;  // base class << 16 | subclass << 8 | programming interface
};

// One memory BAR: a 32-bit, non-prefetchable register window. size is a
// power of two of at least 16 bytes and base a multiple of it.
struct Bar {
  std::uint64_t base = 0;
  std::uint64_t size = 0;  // 0: BAR not implemented
};

// One function as a probe read it from configuration space.
struct Function {
  std::uint32_t slot = 0;  // device number on the bus
  std::uint16_t vendor = kNoVendor, device = 0;
  std::uint8_t revision = 0;
  std::uint32_t class_code = 0;
  std::array<Bar, kBars> bars{};
  std::uint8_t irq_line = kNoLine;
  std::uint8_t irq_pin = 0;
  // The device's name on this bus, for traces and messages (a kernel names
  // a function by bus/device/function; this is not configuration data).
  std::string name;
};

struct DeviceId {
  std::uint16_t vendor = 0, device = 0;
};

}  // namespace pci

// A driver's instance bound to one function. Drivers derive from it.
class BoundDriver {
 public:
  virtual ~BoundDriver() = default;
};

// All a driver gets when it is bound: the bus it reaches the device
// through, what the probe read of the function, and the node's host.
struct DriverContext {
  HostBus& bus;
  const pci::Function& function;
  Host& host;
};

struct Driver {
  std::string name;
  std::vector<pci::DeviceId> ids;  // the functions it drives
  std::function<std::unique_ptr<BoundDriver>(const DriverContext&)> bind;
};

// Host drivers by name, filled at load time from each driver's layer.
class DriverRegistry {
 public:
  static DriverRegistry& instance();
  // False (nothing added) for an empty name, a name already registered, or
  // no bind function.
  bool add(Driver driver);
  // The first driver (in registration order) whose table holds the ids.
  const Driver* match(std::uint16_t vendor, std::uint16_t device) const;

 private:
  std::vector<Driver> drivers_;
};

// The instance of driver `name` bound on `host`'s bus, binding the node's
// drivers first if its bus has not been probed yet (that probe needs a
// thread of the node: see HostBus::bind_drivers). nullptr when the node has
// no bus, no function that driver drives, or the probe cannot run here.
BoundDriver* bound_driver(Host& host, std::string_view name);
// The same without probing: nullptr until the node's probe has finished.
BoundDriver* find_bound_driver(const Host& host, std::string_view name);

}  // namespace nicsim::host
