// The host bus of one node (PCI / PCI-X). A single shared, half-duplex
// resource: MMIO from host threads to device registers, and DMA from device
// engines to host memory, all serialised in request order, so devices and
// engines on one bus contend with each other.
//
// Timing of one transaction of `n` bytes that is granted the bus at `start`:
//   occupancy = (transaction_overhead + ceil(n / (width/8))) cycles / efficiency
//   bus busy until start + occupancy
//   DMA write (posted):   completes at start + occupancy + write_latency
//   DMA read (split):     completes at start + read_latency + occupancy
//   MMIO write (posted):  reaches the device at start + occupancy + mmio_write_latency
//   MMIO read:            returns at start + occupancy + mmio_read_latency
// with start = max(request time, bus free time). Profiles set the defaults
// (parameter "profile"); any field may be overridden.
//
// Arithmetic is exact integers: efficiency is resolved to parts per million
// and applied as occupancy_cycles = ceil(cycles * 1e6 / efficiency_ppm), so
// the bus is held for a whole number of cycles; cycles become picoseconds
// with cycles_time() (rounded up). Efficiency stands for what a real bus
// loses per transaction beyond the fixed overhead: arbitration, disconnects
// at allowable disconnect boundaries, retries, wait states.
//
// An MMIO read reaches the device one way (start + occupancy +
// mmio_write_latency, or mmio_read_latency if that is smaller): the
// target's b_transport runs then, so it sees every earlier posted write
// first (PCI ordering: a read does not pass posted writes). The data is
// back in the thread at start + occupancy + mmio_read_latency plus any delay
// the target annotated.
#pragma once
#include <systemc>
#include <tlm>

#include <array>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/calendar.h"
#include "core/params.h"
#include "host/host.h"
#include "host/pci.h"

namespace nicsim::host {

// Bus profiles: the defaults of every "bus" parameter (host_params.cc
// registers the first as the registry's defaults; HostBus takes a field from
// the chosen profile unless the scenario set it). Values are text in the
// parameter's unit syntax so that `nicsim params` and this table agree.
//
// Peak = width/8 x clock. A stream of 2 KiB DMA writes achieves
// 2048 / (ceil((overhead + 2048/(width/8)) / efficiency) cycles):
//   pcix-133  64 bit 133 MHz     peak 1064 MB/s  2 KiB writes 949 MB/s (89%)
//   pcix-66   64 bit 66.666 MHz  peak  533 MB/s  2 KiB writes 476 MB/s (89%)
//   pci-66    64 bit 66.666 MHz  peak  533 MB/s  2 KiB writes 441 MB/s (83%)
//   pci-33    32 bit 33.333 MHz  peak  133 MB/s  2 KiB writes 112 MB/s (84%)
// PCI-X: 8 overhead cycles (address + attribute phases, target decode,
// turnaround); split transactions keep reads off the bus while memory
// answers, so read latency is the chipset's (~0.75 us on ServerWorks GC /
// Intel E7501 class chipsets of 2003). Conventional PCI has a shorter
// header but uses delayed transactions with retries: lower efficiency and
// longer read latencies. pci-66 read latency 600 ns: the host bridge needs
// ~450 ns to start returning memory data to a bus master (Myricom measures
// hosts, ServerWorks GC among them, delaying a DMA read ~60 clocks at
// 133 MHz: myri.com/scs/performance/PCIX_motherboards), plus the delayed
// transaction: the bridge retries the master after the 16-clock target
// initial latency (PCI 2.2, 240 ns at 66 MHz) and the data is returned on
// a later retry, about 150 ns more on average. MMIO (PIO) writes are posted through the host
// bridge (~0.25 us to reach the device); PIO reads stall the CPU ~1 us.
struct BusProfile {
  const char* name;
  const char* width;  // bits
  const char* clock;
  const char* efficiency;
  const char* transaction_overhead;  // cycles
  const char* read_latency;
  const char* write_latency;
  const char* mmio_write_latency;
  const char* mmio_read_latency;
  const char* max_read_request;  // bytes per read transaction (PCI-X MMRBC)
};
inline constexpr BusProfile kBusProfiles[] = {
    {"pcix-133", "64", "133MHz", "0.92", "8", "750ns", "200ns", "250ns", "1us", "512B"},
    {"pcix-66", "64", "66.666MHz", "0.92", "8", "800ns", "200ns", "300ns", "1.1us", "512B"},
    {"pci-66", "64", "66.666MHz", "0.85", "6", "600ns", "200ns", "300ns", "1.2us", "4KiB"},
    {"pci-33", "32", "33.333MHz", "0.85", "6", "1.2us", "250ns", "350ns", "1.5us", "4KiB"},
};
const BusProfile* find_bus_profile(std::string_view name);

// Completion callback of an asynchronous DMA: ok=false on a master abort.
struct DmaDone {
  EventFn fn = nullptr;  // fn(obj, arg | (ok ? 0 : kDmaFailedBit))
  void* obj = nullptr;
  std::uint64_t arg = 0;
};
inline constexpr std::uint64_t kDmaFailedBit = 1ULL << 63;

class HostBus : public sc_core::sc_module {
 public:
  // `params` is the node's "bus" scope.
  HostBus(sc_core::sc_module_name name, Host& host, const ParamSet& params);
  ~HostBus() override;

  // --- MMIO (host software -> device registers) -------------------------
  // A device maps a register window. Its target receives TLM-2.0 generic
  // payloads (b_transport) at the time the access reaches it; address is
  // the offset within the window. Writes are delivered from the calendar
  // (not a thread): b_transport must not wait(); for posted writes nobody
  // waits, so an annotated delay has no effect. Overlapping windows are
  // refused with an error (false).
  bool map_device(std::string name, std::uint64_t base, std::uint64_t size, tlm::tlm_fw_transport_if<>& target);
  // Blocking, from a HostThread (or the interrupt thread: handlers touch
  // device registers; that stalls the handler, it is not a "blocking call"):
  // writes are posted (the thread waits only for the bus grant and
  // occupancy), reads wait for the round trip. Return false on an unmapped
  // address (reported as an error naming the address), when called outside
  // an SC_THREAD, or when the target answers with an error response.
  bool mmio_write(std::uint64_t addr, const void* data, std::size_t bytes);
  bool mmio_read(std::uint64_t addr, void* data, std::size_t bytes);

  // --- PCI functions and configuration space (host/pci.h, pci.cc) -------
  struct BarWindow {
    std::string name;  // the window's name in traces and errors
    std::uint64_t base = 0, size = 0;
    tlm::tlm_fw_transport_if<>* target = nullptr;
  };
  // A device presents itself as one PCI function: the bus gives it the next
  // device number, maps each BAR (bars[i] is BAR i) as map_device() does,
  // and wires its INTA# to a new line of the node's interrupt controller
  // (named `name` until a driver takes it), as platform firmware would;
  // the configuration header records all of it. The device raises that
  // line when a driver has programmed it to. Returns the device number, or
  // -1 (reported) when the bus is full or a BAR is malformed or overlaps.
  int add_function(std::string name, const pci::Identity& id, const std::vector<BarWindow>& bars);
  // Configuration transactions (type 0, through the host bridge) from a
  // thread, or before the simulation runs (see before_run()): width 1, 2
  // or 4 bytes, naturally aligned, within the 256-byte space. A read is
  // timed like mmio_read; a write is not posted and takes as long. A read
  // of an empty device number ends in a master abort that returns all
  // ones: that is how a probe finds empty slots, not an error.
  // Writable: the command register and the BARs (writing all ones to a BAR
  // makes it read back its size mask, the sizing protocol; any other value
  // puts back the base the platform assigned, since windows do not move).
  // Other writes are ignored, as read-only registers ignore them. A
  // malformed access is an error and reads all ones.
  std::uint32_t config_read(std::uint32_t slot, std::uint32_t offset, std::uint32_t width);
  bool config_write(std::uint32_t slot, std::uint32_t offset, std::uint32_t width, std::uint32_t value);
  // A kernel's scan of the bus from a thread, paying for every transaction:
  // each device number's id; for a function, its header type, class and
  // revision, interrupt line and pin, and each BAR sized by writing all
  // ones and putting the base back.
  std::vector<pci::Function> enumerate();
  // Probes the bus once per node (enumerate) and binds each function found
  // to the first registered driver that drives it. The world does this for
  // every node as it starts it, before the run; otherwise the first caller
  // from a thread of this node does it (paying the bus time) and a second
  // caller waits for it. False in the run outside such a thread (interrupt
  // context included) while no probe has finished.
  bool bind_drivers();
  // Before the simulation runs (elaboration), configuration transactions
  // are the node's boot: the firmware and the kernel scanned the bus before
  // the scenario's time 0, as a cluster's nodes are up long before a job
  // starts. They take the same time, counted on a clock of their own
  // (boot_probe_time), and leave the run's bus free and its clock at 0.
  static bool before_run() { return sc_core::sc_get_status() == sc_core::SC_ELABORATION; }
  Tick boot_probe_time() const { return boot_probe_time_; }
  bool probed() const { return probe_ == Probe::Done; }
  // After the probe: the functions it found, and the instance driver
  // `driver` bound (its first function), or nullptr.
  const std::vector<pci::Function>& functions() const { return found_; }
  BoundDriver* bound(std::string_view driver) const;

  // --- DMA (device engines -> host memory) ------------------------------
  // Asynchronous, callable from any context. Host memory is read (for
  // reads) or written (for writes) at the completion time, then `done`
  // runs (from the calendar; done.fn may be null). `buf` and `initiator`
  // must stay valid until then. Ranges outside the node's HostMemory are
  // master aborts: nothing is copied, done gets the failed bit, and an
  // error names the device and address. The range is checked again at
  // completion, so memory freed while a DMA is in flight aborts too. A
  // master abort holds the bus for the overhead cycles only and completes
  // at the end of that occupancy.
  void dma_read(const char* initiator, std::uint64_t host_addr, void* buf, std::size_t bytes, DmaDone done) {
    dma(true, initiator, host_addr, buf, nullptr, bytes, done);
  }
  void dma_write(const char* initiator, std::uint64_t host_addr, const void* buf, std::size_t bytes, DmaDone done) {
    dma(false, initiator, host_addr, nullptr, buf, bytes, done);
  }
  // The completion time a transaction requested now would get (no side effects).
  Tick quote(bool is_read, std::size_t bytes) const;

  // The time the bus is held by a transaction of `bytes` (formula above).
  Tick occupancy(std::size_t bytes) const;
  // A DMA read is split into transactions of at most max_read_request
  // bytes, each paying the transaction overhead.
  Tick read_occupancy(std::size_t bytes) const;

  // Resolved timing (profile defaults or overrides), for reports and tests.
  std::uint64_t width_bits() const { return width_bytes_ * 8; }
  std::uint64_t clock_hz() const { return clock_hz_; }
  std::uint64_t efficiency_ppm() const { return efficiency_ppm_; }
  std::uint64_t overhead_cycles() const { return overhead_cycles_; }
  Tick read_latency() const { return read_latency_; }
  Tick write_latency() const { return write_latency_; }
  Tick mmio_write_latency() const { return mmio_write_latency_; }
  Tick mmio_read_latency() const { return mmio_read_latency_; }

  // Transactions issued and not yet completed.
  std::size_t in_flight() const { return dmas_in_flight_ + (posts_.size() - free_posts_.size()); }

  // Statistics: DMA payload bytes, and the time the bus was held by any
  // transaction.
  std::uint64_t bytes_read() const { return bytes_read_; }
  std::uint64_t bytes_written() const { return bytes_written_; }
  Tick busy_time() const { return busy_time_; }

 private:
  struct Window {
    std::string name;
    std::uint64_t base, size;
    tlm::tlm_fw_transport_if<>* target;
  };
  // One DMA in flight, in a reusable slot (one cache line); calendar events
  // carry the slot index. Free slots form a list through `next_free`.
  struct alignas(64) Txn {
    std::uint64_t addr = 0;  // host address
    void* buf = nullptr;     // read: the destination; write: the source
    std::size_t bytes = 0;
    const char* initiator = nullptr;
    DmaDone done;
    bool is_read = false;
    bool aborted = false;
    std::uint32_t next_free = kNoTxn;
  };
  static constexpr std::uint32_t kNoTxn = ~0u;
  // One posted MMIO write on its way to the device.
  struct Post {
    const Window* window = nullptr;
    std::uint64_t offset = 0;         // within the window
    std::vector<unsigned char> data;  // the caller's buffer may change before arrival
  };
  // The last transaction size asked for and its occupancy (most transfers
  // repeat the size of the one before; the timing parameters never change).
  struct OccupancyMemo {
    std::size_t bytes = ~std::size_t{0};
    Tick occupancy = 0;
  };
  // One device number in use: its configuration header and, per BAR, the
  // size and the base the platform assigned.
  struct PciSlot {
    std::string name;
    std::array<std::uint8_t, pci::kConfigSize> config{};
    std::array<std::uint32_t, pci::kBars> bar_base{}, bar_size{};
  };
  struct Binding {
    std::string driver;
    std::unique_ptr<BoundDriver> instance;
  };
  enum class Probe : std::uint8_t { NotYet, Running, Done };
  bool bad_function(const std::string& name, const std::vector<BarWindow>& bars) const;
  void config_cycle(const char* what, std::uint32_t slot, std::uint32_t offset, std::uint32_t width, bool present);
  bool config_ok(const char* what, std::uint32_t slot, std::uint32_t offset, std::uint32_t width) const;
  pci::Bar size_bar(std::uint32_t slot, std::uint32_t bar);
  void bind_found();
  Tick compute_occupancy(std::size_t bytes) const;
  Tick grant(Tick occupancy);  // returns the start time and books the bus
  std::uint32_t new_txn();
  std::uint32_t add_txn();
  const Window* find_window(std::uint64_t addr, std::size_t bytes) const;
  bool on_thread(const char* what, std::uint64_t addr) const;
  void dma(bool is_read, const char* initiator, std::uint64_t host_addr, void* dst, const void* src, std::size_t bytes,
           DmaDone done);
  static void dma_complete(void* bus, std::uint64_t slot);
  static void mmio_arrive(void* bus, std::uint64_t slot);
  Host& host_;
  std::uint64_t width_bytes_;
  std::uint64_t clock_hz_;
  std::uint64_t efficiency_ppm_;
  std::uint64_t overhead_cycles_;
  std::uint64_t max_read_request_;
  Tick mmio_write_latency_, mmio_read_latency_;
  std::deque<Window> windows_;  // a deque: in-flight writes point at their window
  std::vector<Post> posts_;
  std::vector<std::uint32_t> free_posts_;
  // What a DMA touches, together: in a many-node run every node's bus is
  // cold when its next DMA comes, so each line here is a cache miss.
  alignas(64) Tick free_at_ = 0;
  Tick read_latency_, write_latency_;
  mutable OccupancyMemo memo_, read_memo_;
  HostMemory* memory_;  // the host's, which lives as long as the host
  std::vector<Txn> txns_;
  std::uint32_t free_txn_ = kNoTxn;
  std::uint32_t dmas_in_flight_ = 0;
  std::uint32_t node_id_;
  std::uint64_t bytes_read_ = 0, bytes_written_ = 0;
  Tick busy_time_ = 0;
  std::vector<PciSlot> pci_slots_;  // device numbers 0, 1, ... in order of add_function
  Probe probe_ = Probe::NotYet;
  Tick boot_probe_time_ = 0;
  std::unique_ptr<WaitQueue> probe_done_;
  std::vector<pci::Function> found_;
  // Last: drivers go before anything of the bus they use.
  std::vector<Binding> bindings_;
};

}  // namespace nicsim::host
