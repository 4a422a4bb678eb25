// Parameter scopes "host" and "bus". Host defaults describe a 2003 cluster
// node: a dual 2.4 GHz Xeon (533 MHz FSB, DDR266) running Linux 2.4/2.6.
// The bus defaults come from the first bus profile (host/bus.h), which also
// documents every profile's figures.
#include "core/params.h"
#include "host/bus.h"

namespace nicsim::host {
namespace {

const ParamRegistration host_params(
    "host", "host side of a node: CPUs, memory, software threads, CPU cost table",
    {
        {"cpus",
         UnitKind::Count,
         "2",
         "1",
         "64",
         {},
         "CPUs per node; charge() queues FIFO for one when all are busy (dual Xeon)"},
        {"memory",
         UnitKind::Size,
         "256MiB",
         "1MiB",
         "64GiB",
         {},
         "host memory a node may allocate (HostMemory limit; pinned buffers do not count)"},
        {"thread_stack",
         UnitKind::Size,
         "256KiB",
         "16KiB",
         "64MiB",
         {},
         "stack of every host thread and of the interrupt thread; consumer C code with "
         "local arrays runs on it; an overflow is reported by thread name"},
        {"copy_bandwidth",
         UnitKind::Bandwidth,
         "8Gbps",
         "1Mbps",
         "10Tbps",
         {},
         "memcpy throughput charged per byte by charge(class, bytes): ~1 GB/s out of "
         "cache on a 2.4 GHz Xeon with a 533 MHz FSB and DDR266"},
        {"cost.api_call",
         UnitKind::Time,
         "300ns",
         "0ps",
         "1s",
         {},
         "fixed CPU time of a user-level library call (argument checks, locking, "
         "descriptor build): ~700 instructions at 2.4 GHz"},
        {"cost.syscall",
         UnitKind::Time,
         "700ns",
         "0ps",
         "1s",
         {},
         "null system call round trip through int 0x80 on a Pentium 4 Xeon"},
        {"cost.interrupt_entry",
         UnitKind::Time,
         "1.5us",
         "0ps",
         "1s",
         {},
         "from a raised line to the handler's first instruction: APIC delivery, "
         "vectoring, do_IRQ entry, and the exit path; charged before every handler "
         "and timer callback"},
        {"cost.context_switch",
         UnitKind::Time,
         "3us",
         "0ps",
         "1s",
         {},
         "switching to a woken thread, including cache refill (lmbench lat_ctx on a "
         "2003 Xeon); charged by layers that sleep and wake a thread"},
        {"cost.thread_spawn",
         UnitKind::Time,
         "15us",
         "0ps",
         "1s",
         {},
         "pthread_create (NPTL/LinuxThreads); charged to a thread spawned during the "
         "run before its body starts"},
    });

constexpr const BusProfile& kDefault = kBusProfiles[0];

const ParamRegistration bus_params(
    "bus", "host bus (PCI / PCI-X) of a node: timing of MMIO and DMA; see host/bus.h",
    {
        {"profile",
         UnitKind::Text,
         kDefault.name,
         "",
         "",
         {"pcix-133", "pcix-66", "pci-66", "pci-33"},
         "bus type; gives the default of every other bus parameter: pcix-133 (64 bit "
         "133 MHz, 1064 MB/s peak), pcix-66 (64/66, 533 MB/s), pci-66 (64/66 conventional "
         "PCI, 533 MB/s), pci-33 (32/33, 133 MB/s)"},
        {"width",
         UnitKind::Count,
         kDefault.width,
         "8",
         "128",
         {},
         "data path width in bits, a multiple of 8 (default from profile)",
         "8"},
        {"clock", UnitKind::Frequency, kDefault.clock, "1MHz", "2GHz", {}, "bus clock (default from profile)"},
        {"efficiency",
         UnitKind::Ratio,
         kDefault.efficiency,
         "0.01",
         "1",
         {},
         "fraction of cycles a transaction gets beyond its overhead (arbitration, "
         "disconnects, retries); occupancy = ceil(cycles / efficiency) (default from profile)"},
        {"transaction_overhead",
         UnitKind::Count,
         kDefault.transaction_overhead,
         "0",
         "1024",
         {},
         "cycles per transaction besides data: address/attribute phases, decode, "
         "turnaround (default from profile)"},
        {"read_latency",
         UnitKind::Time,
         kDefault.read_latency,
         "0ps",
         "1ms",
         {},
         "DMA read: from bus grant to the first data of the split completion (memory "
         "and chipset latency) (default from profile)"},
        {"write_latency",
         UnitKind::Time,
         kDefault.write_latency,
         "0ps",
         "1ms",
         {},
         "DMA write: from the end of the bus transfer until the data is in host memory "
         "(default from profile)"},
        {"mmio_write_latency",
         UnitKind::Time,
         kDefault.mmio_write_latency,
         "0ps",
         "1ms",
         {},
         "posted MMIO write: from the end of the bus transfer until the device register "
         "sees it (default from profile)"},
        {"mmio_read_latency",
         UnitKind::Time,
         kDefault.mmio_read_latency,
         "0ps",
         "1ms",
         {},
         "MMIO read: from the end of the request until the data is back in the CPU "
         "(default from profile)"},
        {"max_read_request",
         UnitKind::Size,
         kDefault.max_read_request,
         "64B",
         "64KiB",
         {},
         "largest DMA read transaction: PCI-X's Maximum Memory Read Byte Count (512 B by "
         "default); longer reads are split, each part paying the transaction overhead "
         "(default from profile)"},
    });

}  // namespace
}  // namespace nicsim::host
