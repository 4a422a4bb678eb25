// The Elan3 kernel-level device driver: what Elan Kernel Comms (ep/) and
// other kernel services are built on. One instance per node, reached with
// Elan3Dev::attach(). It talks to the Elan only through the host bus: MMIO
// writes to the command port (elan_model/elan3_regs.h), the page table in
// node memory, and DMA descriptors, events, input queues and the interrupt
// queue in the card's SDRAM (written by PIO, read from their copies in the
// mirrored window; elan3_regs.h "Elan SDRAM"). Callers never touch
// registers or the page table themselves.
//
// Contexts. "thread" = a simulated host thread of the node (HostThread);
// "interrupt" = the node's interrupt thread, where every handler registered
// here runs. Calls marked "any" work from both; calls marked "may block"
// block only from a thread and take the non-blocking path (documented per
// call) in interrupt context. Every call charges host CPU time from the cost
// table (host scope, cost.elan3_<name>; see driver/elan3_costs.cc), so
// driver work is part of every latency.
//
// Completion model (as on the real Elan): a DMA completes by setting events.
// dma_srcEvent is set on the issuing node when every packet was
// acknowledged Ok; dma_destEvent is set on the destination node after the
// last byte landed. A DMA that fails on the network (retries exhausted) sets
// neither: the issuing node's driver gets a NetworkError interrupt carrying
// the DMA's source cookie and descriptor address, and calls the error
// handlers. Local faults (bad source address, missing LocalRead) come as
// DmaError the same way.
//
// Full input queues (test-fail). Every descriptor carries failCount =
// elan3.dma_fail_count: the Elan re-runs a refused DMA that many times,
// behind the DMAs queued after it, then traps it (DmaTrap) and goes on with
// the next. The driver keeps trapped DMAs on its retry list and runs each
// again after a back-off: elan3.dma_retry_first after its first trap,
// doubling with each trap in a row of the same descriptor up to
// elan3.dma_retry_max. So a full queue delays only the DMAs it refuses; it
// never holds back the others of this node. A refused DMA loses its place:
// DMAs issued after it (to the same queue too) may land first. A DMA is
// retried until it is taken or the retry filter (set_retry_filter) drops it. To wait for an event, prime it with irq =
// true (any cookie, kWaitCookie if nobody else needs the interrupt) and call wait_event; or poll it with event_fired.
#pragma once
#include <array>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "core/units.h"
#include "elan_model/elan3_regs.h"
#include "host/pci.h"

namespace nicsim::host {
class Host;
class HostBus;
class Timer;
class WaitQueue;
}  // namespace nicsim::host

namespace nicsim::elan3 {

// Results of the driver calls (the ep layer maps them to DDI_* / errno).
enum class DevStatus : std::uint8_t {
  Ok = 0,
  NoResource,   // no Elan address space / descriptor slot / node memory (and may not or will not wait)
  NoMapping,    // the host range is not node memory, or an E3_Addr is not one we handed out
  BadArgument,  // out-of-range value (size, page index, node id, alignment...)
};
const char* dev_status_name(DevStatus s);

// A range of Elan address space reserved by reserve() or map(): `npages`
// Elan pages from `base` (page aligned), with the permissions and
// attributes every page loaded into it gets. A plain value the caller keeps
// (ep stores it in its ELAN3_DMA_HANDLE).
struct ElanRange {
  E3Addr base = 0;
  std::uint32_t npages = 0;
  std::uint32_t perm = 0;  // perm:: bits
  std::uint32_t attr = 0;  // attr:: bits
  bool valid() const { return base != 0 && npages != 0; }
};

// A piece of memory the Elan can reach, at E3_Addr `elan`. In node memory
// (card = false) `host` is the CPU's pointer to it. In the card's SDRAM
// (card = true) `host` is the CPU's pointer to its copy in the mirrored
// window (elan3_regs.h): read it there; write it only with Elan3Dev::store
// (a PIO store to the card and the copy).
struct ElanMem {
  void* host = nullptr;
  E3Addr elan = 0;
  std::uint32_t bytes = 0;
  std::uint32_t perm = 0;
  bool card = false;
  explicit operator bool() const { return host != nullptr; }
};

// What issue_dma() puts in an E3_DMA descriptor (see elan3_regs.h dma::).
struct DmaRequest {
  dma::Direction direction = dma::Direction::Write;
  dma::OpCode opcode = dma::OpCode::Normal;
  dma::DataType data_type = dma::DataType::Byte;
  std::uint32_t size = 0;            // bytes; 0 with Normal/Write = a remote set-event of dest_event
  E3Addr source = 0;                 // Write: local (LocalRead). Read: on dest_node (RemoteRead there)
  E3Addr dest = 0;                   // Write: on dest_node (RemoteWrite there; Queued: its E3_Queue).
                                     // Read: local landing address (RemoteWrite here)
  E3Addr dest_event = 0;             // Write: an event on dest_node (RemoteEvent there), set after the
                                     // last byte landed. Read: a local event, set when the data is here
                                     // (it comes back as a remote write: RemoteEvent here too)
  E3Addr src_event = 0;              // Write: a local event, set when every packet was acked Ok.
                                     // Read: an event on dest_node, set when it finished sending
  std::uint32_t dest_node = 0;       // destination (first node of a broadcast range)
  std::uint32_t dest_node_last = 0;  // broadcast opcodes only: last node of the range
  std::uint16_t dest_cookie = 0;     // carried to the destination (trace), unicast only
  std::uint16_t src_cookie = 0;      // reported back in NetworkError / DmaError interrupts
  bool priority = false;             // ahead of the run queue's other DMAs (dma::Type priority)
};

// A network or local DMA failure reported by the Elan (intq causes
// NetworkError and DmaError), or a trapped DMA (DmaTrap, for the retry
// filter only).
struct DmaFailure {
  intq::Cause cause = intq::Cause::NetworkError;
  std::uint8_t detail = 0;  // NetworkError: pkt::Token of the last refusal, or intq::kDetailTimeout;
                            // DmaError: Fault
  std::uint32_t node = 0;   // destination node of the failed DMA
  std::uint16_t src_cookie = 0;
  E3Addr addr = 0;                // NetworkError, DmaTrap: the descriptor's E3_Addr; DmaError: the faulting address
  std::uint16_t dest_cookie = 0;  // DmaTrap: the descriptor's destination cookie (broadcasts never trap)
};

// An input queue made by alloc_queue(): the E3_Queue descriptor and its
// slots, in the card's SDRAM (mirrored window) with RemoteWrite permission;
// the CPU reads them in their copies. Senders name it by
// `desc.elan` (a Queued DMA's dest).
struct InputQueue {
  ElanMem desc;
  bool own_desc = false;  // desc was allocated by alloc_queue (free_queue frees it)
  ElanMem slots;
  std::uint32_t slot_size = 0;
  std::uint32_t nslots = 0;  // holds nslots - 1 messages (elan3_regs.h queue::)
};

class Elan3Dev : public host::BoundDriver {
 public:
  // ---- attach ------------------------------------------------------------
  // The calling node's driver instance, loading it on first use (after the
  // node's bus probe, which this runs if the node has not yet): reads the
  // node id and machine size registers, allocates and installs the page
  // table and the interrupt queue, takes the function's interrupt line,
  // enables the network interface. Thread context, may block (bus round
  // trips); from interrupt context it only returns an already loaded
  // instance. nullptr if no Elan3 function is on the node's bus (or loading
  // failed: an error names the reason).
  static Elan3Dev* attach();
  // The calling node's instance if it is loaded (any context), else nullptr.
  static Elan3Dev* current();

  // ---- identity ------------------------------------------------------------
  // This Elan's node id (its network position) and the number of node ids
  // in the network (the machine size), both read from the Elan's registers
  // at attach. Any context, no cost.
  std::uint32_t node_id() const { return node_id_; }
  std::uint32_t num_nodes() const { return num_nodes_; }
  // The link state as of the last LinkState interrupt (initially read from
  // the link_state register at attach). Any context, no cost.
  bool link_up() const { return link_up_; }
  host::Host& host() const { return host_; }

  // ---- Elan address space (backs elan3_dma_* / elan3_dvma_*) ------------
  // Reserve `npages` pages of Elan address space with no host memory behind
  // them yet (PTEs invalid). want != 0 asks for that page-aligned address
  // (NoResource if any page of it is taken). wait = true blocks until space
  // is released (thread context; in interrupt context it is NoResource).
  // Charges cost.elan3_reserve.
  DevStatus reserve(std::uint32_t npages, std::uint32_t perm, std::uint32_t attr, E3Addr want, bool wait,
                    ElanRange* out);
  // Unload every page of a reserved range and free its address space.
  // BadArgument (and an error naming the range) if it is not a live range.
  DevStatus release(const ElanRange& r);
  // Map host memory [host_addr, host_addr+len) (any alignment, must be node
  // memory: else NoMapping) at page `index` of the range, with the range's
  // permissions: writes the PTEs in node memory and flushes those TLB
  // entries (MMIO). *out = the E3_Addr of host_addr: page `index` starts
  // at the 64-byte block holding host_addr and each page covers the next
  // 8 KiB of node memory (elan3_regs.h pte). BadArgument if it does not fit
  // the range. Any context;
  // charges cost.elan3_map plus cost.elan3_pte per page.
  DevStatus load(const ElanRange& r, std::uint32_t index, const void* host_addr, std::size_t len, E3Addr* out);
  // Invalidate pages [index, index+npages) of the range (beyond its end is
  // ignored, as elan3_dvma_unload allows) and flush their TLB entries. After
  // it returns, the Elan's next access to those pages faults. Any context.
  DevStatus unload(const ElanRange& r, std::uint32_t index, std::uint32_t npages);
  // reserve + load in one: the range covers exactly the pages of the host
  // range. *addr = the E3_Addr of host_addr.
  DevStatus map(const void* host_addr, std::size_t len, std::uint32_t perm, std::uint32_t attr, E3Addr want, bool wait,
                ElanRange* out, E3Addr* addr);
  DevStatus unmap(const ElanRange& r) { return release(r); }

  // ---- Elan-visible driver memory (events, queues, descriptors) ----------
  // `bytes` of zeroed node memory, mapped with `perm` (perm:: bits; LocalRead
  // and LocalWrite are always added), aligned to `align` (power of two,
  // <= 8 KiB) in both host and Elan address. Small pieces share pages with
  // others of the same permissions. wait as reserve(). Charges
  // cost.elan3_alloc.
  ElanMem alloc_mem(std::uint32_t bytes, std::uint32_t align, std::uint32_t perm, bool wait = true);
  // The same in the card's SDRAM, inside the mirrored window (ElanMem::card):
  // the Elan reaches it at SDRAM speed, the CPU reads its copy in node
  // memory and writes it with store(). Events, queues and descriptors live
  // here. Charges cost.elan3_alloc.
  ElanMem alloc_card(std::uint32_t bytes, std::uint32_t align, std::uint32_t perm, bool wait = true);
  void free_mem(const ElanMem& m);
  // `npages` pages of SDRAM in the mirrored window mapped at `want` (page
  // aligned, 0: anywhere) with `perm`; *mem covers them all. NoResource if
  // the window or the address space has no room. Thread context.
  DevStatus map_card(std::uint32_t npages, std::uint32_t perm, std::uint32_t attr, E3Addr want, ElanRange* out,
                     ElanMem* mem);
  // Write `len` bytes at `off` of `m`: for card memory one posted PIO write
  // through BAR 1 (the CPU waits for the bus only) and the same bytes into
  // its copy; for node memory a CPU store. `data` may be the copy itself
  // (m.host + off): what the CPU wrote there goes to the card. No cost
  // class of its own (the callers' include it). Any context.
  void store(const ElanMem& m, std::uint32_t off, const void* data, std::uint32_t len);

  // ---- events ----------------------------------------------------------------
  // A 16-byte E3_Event. remote = true gives it RemoteEvent permission, so a
  // DMA's dest_event or a remote set-event from another node may set it.
  // In the card's SDRAM (alloc_card).
  ElanMem alloc_event(bool remote, bool wait = true) {
    return alloc_card(event::kSize, 16, remote ? perm::kRemoteEvent : 0, wait);
  }
  // Write an event (a PIO store to the card and its copy; cost.elan3_event): count,
  // action and its addresses, and whether firing interrupts with `cookie`
  // (24 bits); then the count once more through the command port
  // (prime_event), so that a set the Elan had in flight when the CPU wrote
  // cannot overwrite the new count: sets issued before the prime do not
  // count against it, sets after it do. Any context.
  void prime_event(const ElanMem& ev, std::int32_t count, event::Type type = event::Type::None, E3Addr source = 0,
                   E3Addr dest = 0, bool irq = false, std::uint32_t cookie = kWaitCookie);
  // Turn the interrupt of a primed event on (with `cookie`) or off without
  // touching its count or action (MMIO event_irq; cost.elan3_event): sets
  // the Elan has in flight are applied before the change, and an event
  // that already fired interrupts at once when turned on. Any context.
  void event_interrupt(const ElanMem& ev, bool irq, std::uint32_t cookie = kWaitCookie);
  // The event's current count (CPU load from its copy in node memory, which
  // the Elan writes through; cost.elan3_poll).
  std::int32_t event_count(const ElanMem& ev);
  bool event_fired(const ElanMem& ev) { return event_count(ev) <= 0; }
  // Set (decrement) a local event through the command port (MMIO). Any context.
  void set_event(E3Addr ev);
  // Block until event_fired(ev) or `timeout` passes (0 = forever); true if
  // fired. The event must have been primed with irq = true: every Event
  // interrupt wakes the waiters to look again. Thread context only (from
  // interrupt context: an error naming the call site, returns false).
  bool wait_event(const ElanMem& ev, Tick timeout = 0);

  // ---- DMA ---------------------------------------------------------------------
  // Build an E3_DMA descriptor from `req`, store it by PIO into a driver
  // descriptor slot in SDRAM and hand its address to run_dma (MMIO; the
  // store lands before the command). Returns when the command is posted
  // (the Elan fetches and runs it later, in order with earlier DMAs).
  // Checks: size <= dma::kMaxSize, node ids < num_nodes(), a Queued DMA not
  // larger than one packet, a Read not Queued or broadcast; else
  // BadArgument. Slots are reused once the Elan has fetched them; if all are
  // waiting to be fetched, a thread sleeps until one frees, interrupt context
  // gets NoResource. *desc = the descriptor's E3_Addr (what NetworkError
  // reports), may be null. Charges cost.elan3_dma.
  DevStatus issue_dma(const DmaRequest& req, E3Addr* desc = nullptr);
  // Write a descriptor into caller-owned Elan memory (32 bytes, 8-aligned,
  // e.g. from alloc_card, written by PIO, or alloc_mem) without running it: for an event of type Dma
  // (chained DMA). Same checks as issue_dma. Any context.
  DevStatus write_descriptor(const ElanMem& where, const DmaRequest& req);
  // The largest payload of one network packet (nic.elan3.max_payload): the
  // largest Queued DMA.
  std::uint32_t max_packet_payload() const { return max_payload_; }

  // ---- input queues ----------------------------------------------------------------
  // An input queue of `nslots` slots (>= 2) of `slot_size` bytes (multiple of
  // 8, <= max_packet_payload()), empty, unlocked, with `event` (0 = none) as
  // q_event: the Elan sets it on every arrival. Usual pattern: an event with
  // count 1, irq and a cookie whose handler drains the queue, re-primes the
  // event, then drains again (arrivals between firing and re-priming set no
  // interrupt). Charges cost.elan3_alloc.
  DevStatus alloc_queue(std::uint32_t nslots, std::uint32_t slot_size, E3Addr event, InputQueue* out, bool wait = true);
  // The same with the E3_Queue descriptor in caller-owned memory `desc`
  // (32 bytes, 8-aligned, inside a mapping with RemoteWrite|LocalRead|
  // LocalWrite, e.g. a table of per-service queues at a fixed E3_Addr): the
  // driver allocates only the slots and writes the descriptor. nslots == 0
  // writes an empty, locked descriptor with no slots (every arrival is
  // answered test-fail). free_queue() then frees only the slots.
  DevStatus init_queue(const ElanMem& desc, std::uint32_t nslots, std::uint32_t slot_size, E3Addr event,
                       InputQueue* out, bool wait = true);
  void free_queue(InputQueue& q);
  // The oldest unconsumed message (a pointer into its slot's copy in node memory),
  // or nullptr if the queue is empty. A descriptor whose front or back
  // pointer names none of the queue's slots (overwritten: other nodes may
  // write it) is reported as a simulation error and the queue taken as
  // empty. Any context; cost.elan3_queue.
  const void* queue_peek(const InputQueue& q);
  // Free the oldest message's slot (advance q_fptr); the Elan may then fill
  // it. Any context; cost.elan3_queue.
  void queue_consume(const InputQueue& q);
  // Lock (all arrivals are refused with test-fail) or unlock the queue.
  void queue_lock(const InputQueue& q, bool locked);

  // ---- interrupts ------------------------------------------------------------------
  // Handlers run in interrupt context, in registration order, one interrupt
  // queue entry at a time (cost.elan3_intr per entry).
  static constexpr std::uint32_t kWaitCookie = 0;  // event interrupt that only wakes wait_event
  // A fresh nonzero 24-bit cookie whose Event interrupts call `fn(cookie,
  // event E3_Addr)`. 0 when all cookies are taken.
  std::uint32_t add_event_handler(std::function<void(std::uint32_t cookie, E3Addr event)> fn);
  void remove_event_handler(std::uint32_t cookie);
  // Called for every NetworkError and DmaError. Returns an id for removal.
  int add_error_handler(std::function<void(const DmaFailure&)> fn);
  // Called when the link goes down or comes back up.
  int add_link_handler(std::function<void(bool up)> fn);
  // Asked for every trapped DMA (a DmaFailure with cause DmaTrap: node,
  // source cookie, descriptor address) when it traps and again just before
  // the driver runs it again; false drops it for good (its sender no longer
  // wants it, e.g. the message timed out or its circuit was reset). Runs in
  // interrupt context. One filter per driver; a new one replaces it.
  void set_retry_filter(std::function<bool(const DmaFailure&)> keep) { retry_filter_ = std::move(keep); }
  void remove_handler(int id);

  // ---- statistics (any context, no cost) ------------------------------------------
  struct Stats {
    std::uint64_t dmas = 0, interrupts = 0, network_errors = 0, dma_errors = 0, event_irqs = 0, pages_loaded = 0,
                  pages_unloaded = 0, tlb_flushes = 0;
    std::uint64_t dma_traps = 0, dma_retries = 0, dma_retries_dropped = 0;
  };
  const Stats& stats() const { return stats_; }

  // Bound to the Elan's PCI function when the node probes its bus (host/pci.h);
  // attach() initialises it.
  Elan3Dev(host::Host& host, host::HostBus& bus, const host::pci::Function& function);
  ~Elan3Dev() override;
  Elan3Dev(const Elan3Dev&) = delete;
  Elan3Dev& operator=(const Elan3Dev&) = delete;

 private:
  bool init();
  // Charges CPU time: queues for a CPU from a thread; in interrupt context
  // the handler already holds one and just stalls.
  void cpu(const char* cost_class, std::uint64_t bytes = 0);
  void mmio_write32(std::uint64_t offset, std::uint32_t v);
  void mmio_write64(std::uint64_t offset, std::uint64_t v);
  std::uint32_t mmio_read32(std::uint64_t offset);
  void interrupt();
  void dispatch(const std::uint8_t* entry, std::uint32_t index);
  void trapped(const std::uint8_t* entry, std::uint32_t index);
  void run_retries();
  bool run_descriptor(const std::uint8_t* desc);
  bool encode(const DmaRequest& req, std::uint8_t* out, const char* who);
  void write_ptes(std::uint32_t first_page, std::uint32_t npages, const std::uint64_t* ptes);
  void flush_tlb(E3Addr page_addr, std::uint32_t npages);
  bool alloc_pages(std::uint32_t npages, E3Addr want, std::uint32_t& first);
  bool alloc_card_pages(std::uint32_t npages, std::uint32_t& first);
  ElanMem alloc_from_pools(std::uint32_t bytes, std::uint32_t align, std::uint32_t perm, bool card, bool wait);
  bool init_card();
  bool block_for_space(bool wait);

  host::Host& host_;
  host::HostBus& bus_;
  std::uint64_t port_ = 0;       // command port base on the host bus (BAR 0)
  std::uint64_t sdram_bar_ = 0;  // SDRAM window base on the host bus (BAR 1)
  // The mirrored SDRAM window [0, mirror_bytes_) and its copy in node
  // memory; SDRAM pages of it handed out in order.
  std::uint8_t* mirror_ = nullptr;
  std::uint32_t mirror_bytes_ = 0, card_pages_used_ = 0;
  std::uint8_t irq_line_;
  std::string function_name_;  // names the interrupt line
  enum class Load : std::uint8_t { NotYet, Loading, Ready, Failed } load_ = Load::NotYet;
  std::uint32_t node_id_ = 0, num_nodes_ = 0, max_payload_ = 0;
  bool link_up_ = false;
  // Page table: one PTE per Elan page, in node memory.
  std::uint64_t* page_table_ = nullptr;
  std::uint32_t pt_entries_ = 0;
  std::map<std::uint32_t, std::uint32_t> free_pages_;  // first page -> count
  std::map<E3Addr, ElanRange> ranges_;                 // live ranges by base
  std::unique_ptr<host::WaitQueue> space_waiters_;
  // Driver memory pools: per permission set (and kCardPools for SDRAM),
  // pages carved first-fit.
  struct Pool {
    bool card = false;
    std::uint32_t fresh_from = 0;  // SDRAM pools: nothing at or beyond this offset was ever handed out
    std::uint8_t* host = nullptr;
    E3Addr elan = 0;
    std::uint32_t bytes = 0;
    ElanRange range;
    std::map<std::uint32_t, std::uint32_t> free;  // offset -> bytes
  };
  std::map<std::uint32_t, std::vector<std::unique_ptr<Pool>>> pools_;
  // Descriptor slots for issue_dma.
  ElanMem desc_ring_;
  std::uint32_t desc_slots_ = 0, desc_issued_ = 0, desc_fetched_ = 0;
  std::unique_ptr<host::WaitQueue> desc_waiters_;
  // Interrupt queue.
  std::uint8_t* intq_ = nullptr;
  std::uint32_t intq_entries_ = 0, intq_consumed_ = 0;
  int irq_vector_ = -1;
  std::unique_ptr<host::WaitQueue> event_waiters_;
  std::map<std::uint32_t, std::function<void(std::uint32_t, E3Addr)>> event_handlers_;
  std::uint32_t next_cookie_ = 1;
  std::map<int, std::function<void(const DmaFailure&)>> error_handlers_;
  std::map<int, std::function<void(bool)>> link_handlers_;
  int next_handler_ = 1;
  // DMA retry list: trapped descriptors waiting for their time, in trap
  // order; the back-off of each descriptor (by its bytes) and its last trap.
  struct Retry {
    Tick due = 0;
    std::array<std::uint8_t, dma::kSize> desc{};
    DmaFailure what;
  };
  struct Backoff {
    Tick delay = 0, last = 0;
  };
  std::deque<Retry> retries_;
  std::map<std::array<std::uint8_t, dma::kSize>, Backoff> backoff_;
  std::unique_ptr<host::Timer> retry_timer_;
  std::function<bool(const DmaFailure&)> retry_filter_;
  std::uint32_t fail_count_ = 0;
  Tick retry_first_ = 0, retry_max_ = 0;
  std::uint8_t* trap_area_ = nullptr;
  Stats stats_;
};

}  // namespace nicsim::elan3
