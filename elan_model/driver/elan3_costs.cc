// CPU cost classes of the Elan3 device driver, in the "host" scope as
// cost.elan3_<name> (charged with Host::charge). Defaults describe the 2002
// node of host_params.cc running the Quadrics kernel driver (elan3 module):
// the fast paths (issue a DMA, prime or poll an event, peek a queue) are a
// few hundred instructions and a cache miss on memory the Elan wrote;
// mapping costs a PTE store per page.
#include "core/params.h"

namespace nicsim::elan3 {
namespace {

const ParamRegistration elan3_costs(
    "host", "",
    {
        {"cost.elan3_attach",
         UnitKind::Time,
         "50us",
         "0ps",
         "1s",
         {},
         "loading the driver: device probe, page table and interrupt queue set-up"},
        {"cost.elan3_reserve",
         UnitKind::Time,
         "400ns",
         "0ps",
         "1s",
         {},
         "reserve Elan address space (extent search and bookkeeping)"},
        {"cost.elan3_map", UnitKind::Time, "300ns", "0ps", "1s", {}, "load or unload a mapping, per call"},
        {"cost.elan3_pte", UnitKind::Time, "40ns", "0ps", "1s", {}, "one PTE written or cleared"},
        {"cost.elan3_alloc",
         UnitKind::Time,
         "300ns",
         "0ps",
         "1s",
         {},
         "allocate Elan-visible driver memory (events, queues, descriptors)"},
        {"cost.elan3_event", UnitKind::Time, "60ns", "0ps", "1s", {}, "prime an event, or set one by command"},
        {"cost.elan3_poll",
         UnitKind::Time,
         "80ns",
         "0ps",
         "1s",
         {},
         "read an event count the Elan wrote (a cache miss)"},
        {"cost.elan3_dma",
         UnitKind::Time,
         "150ns",
         "0ps",
         "1s",
         {},
         "issue a DMA: checks, the 32-byte descriptor (its bytes at copy_bandwidth on top), the command"},
        {"cost.elan3_queue",
         UnitKind::Time,
         "80ns",
         "0ps",
         "1s",
         {},
         "input queue pointer read or update (a cache miss on the descriptor)"},
        {"cost.elan3_intr",
         UnitKind::Time,
         "200ns",
         "0ps",
         "1s",
         {},
         "interrupt handler, per interrupt queue entry: read, decode, dispatch"},
        // Driver settings (not costs): the DMA retry list (elan3_dev.h).
        {"elan3.dma_fail_count",
         UnitKind::Count,
         "2",
         "0",
         "63",
         {},
         "failCount written into every descriptor: test-fail refusals the Elan retries itself (each after "
         "nic.elan3.testfail_backoff, behind later DMAs) before it traps the DMA to the driver"},
        {"elan3.dma_retry_first",
         UnitKind::Time,
         "20us",
         "100ns",
         "1s",
         {},
         "a trapped DMA is run again this long after its first trap"},
        {"elan3.dma_retry_max",
         UnitKind::Time,
         "320us",
         "100ns",
         "1s",
         {},
         "the back-off doubles with each trap in a row of the same descriptor, up to this"},
    });

}  // namespace
}  // namespace nicsim::elan3
