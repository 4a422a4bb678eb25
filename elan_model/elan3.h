// The Elan3 NIC model: a fabric device with one network port and an MMIO
// target (the command port) on its node's host bus, built from the engines
// of the Elan3: command port, MMU with its TLB, DMA engine (sender side of
// the link protocol), receive engine (executes incoming packets, answers
// every one with an ack token), event engine, and the interrupt queue.
// Everything runs on the calendar; the only ways in and out are the host bus
// (MMIO in, DMA both ways), the interrupt line and the network port. The
// register, memory and wire formats are elan3_regs.h.
#pragma once
#include <systemc>
#include <tlm>

#include <array>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "core/params.h"
#include "core/sim.h"
#include "core/ring.h"
#include "elan_model/elan3_regs.h"
#include "elan_model/sdram.h"
#include "elite/elite_packets.h"
#include "fabric/fabric.h"
#include "fabric/port.h"
#include "core/inspect.h"
#include "fsm/fsm.h"
#include "host/bus.h"
#include "host/host.h"
#include "trace/trace.h"

namespace nicsim::elan3 {

using pkt::Token;
using pkt::Trans;

struct Elan3Params {
  std::uint64_t clock_hz;
  std::uint32_t max_payload;  // bytes of data per packet
  std::uint32_t tx_window;    // packets of the active DMA awaiting tokens
  std::uint32_t tlb_entries;
  std::uint32_t event_cache_entries;  // events held on the card (see EventEngine)
  std::uint32_t pci_read_bytes;       // largest PCI read of DMA data
  std::uint32_t pci_read_cycles;      // from the end of one data read to the next request
  std::uint32_t dma_buffer;           // DMA data read ahead of the first unacknowledged byte
  // Costs in Elan clock cycles.
  std::uint32_t command_cycles, desc_cycles, tlb_cycles, walk_cycles, tx_packet_cycles, rx_packet_cycles, ack_cycles,
      event_cycles, queue_cycles;
  Tick ack_timeout, retry_backoff, testfail_backoff;
  std::uint32_t retry_limit;
  bool verify_crc_always;      // else only packets the link's error injection touched
  std::uint64_t command_port;  // MMIO window base on the host bus
  std::uint64_t sdram_bytes;   // SDRAM on the card (a power of two)
  std::uint32_t sdram_cycles;  // latency of one SDRAM access, Elan cycles
  std::uint64_t sdram_bps;     // SDRAM data rate, bits/s
  std::uint64_t sdram_bar;     // BAR 1 (the SDRAM window) base on the host bus
};
Elan3Params elan3_params_from(const ParamSet& p);
// The receiver does nothing with a packet before its tail is in, then
// checks and dispatches it: when its port delivers a packet after the tail.
Tick rx_after_tail(const Elan3Params& p);

struct Elan3Stats {
  std::uint64_t tx_packets = 0, tx_bytes = 0, rx_packets = 0, rx_bytes = 0, acks_sent = 0, acks_received = 0;
  std::uint64_t tlb_hits = 0, retransmits = 0;
  std::uint64_t commands = 0, dmas = 0, dmas_done = 0, dmas_failed = 0, dma_requeues = 0, dmas_trapped = 0;
  std::uint64_t ack_timeouts = 0, stale_acks = 0, rx_bad_crc = 0, rx_misrouted = 0;
  std::uint64_t tokens_testfail = 0, tokens_discard = 0, tokens_error = 0;
  std::uint64_t conditions_false = 0;  // network conditionals some node answered false
  std::uint64_t tlb_misses = 0, translation_faults = 0, permission_faults = 0;
  std::uint64_t events_set = 0, events_fired = 0, events_held_sets = 0, interrupts = 0, intq_overflows = 0,
                queue_messages = 0;
};

// A piece of host memory produced by translation.
struct HostPiece {
  std::uint64_t addr;
  std::uint32_t len;
};
struct Translation {
  Fault fault = Fault::None;
  E3Addr fault_addr = 0;
  std::vector<HostPiece> pieces;
};

class Elan3;

// A continuation, typed as calendar events and bus transfers name theirs:
// fn(obj, arg), e.g. Then{member_fn<&RxEngine::queue_read>(), this}. A bus
// transfer's continuation gets arg | host::kDmaFailedBit when it failed.
using Then = host::DmaDone;

// What became of a DMA the engine handed back (Elan3::trap_dma). QueueFull:
// the interrupt queue has no room (the engine keeps the DMA, tries again).
enum class TrapResult : std::uint8_t { Trapped, NoTrapArea, QueueFull };

// The MMU: a fully associative TLB with LRU replacement in front of a flat
// page table in host memory. Every page looked up costs tlb_cycles; a miss
// adds an 8-byte DMA read of the PTE and walk_cycles. Lookups of one
// request run page by page in order; requests are independent.
class Mmu {
 public:
  explicit Mmu(Elan3& elan);
  ~Mmu();
  // Translates [va, va + len) for an access needing `need` into `out`, which
  // must live until `done` runs: when the lookups (and walks) are over.
  void translate(E3Addr va, std::uint32_t len, std::uint32_t need, Translation& out, Then done);
  // The fast path: if every page of the range is in the TLB, translates at
  // once (stats and LRU as translate) and gives the lookup time in `cost`;
  // false, with nothing changed, if any page would miss.
  bool translate_cached(E3Addr va, std::uint32_t len, std::uint32_t need, Translation& out, Tick& cost);
  void flush(E3Addr va);  // kFlushAll: everything
  void set_table(std::uint64_t base, std::uint32_t entries);

 private:
  static void inspect(const void* self, InspectRows& rows);
  struct Walk;
  struct Entry {
    std::uint32_t vpn = 0;
    std::uint64_t pte = 0;
    std::uint64_t used = 0;  // LRU stamp; 0 = empty
  };
  Walk* new_walk();
  void step(Walk* w);
  void read_pte(std::uint64_t walk);
  void pte_read(std::uint64_t arg);
  void finish(std::uint64_t walk);
  Entry* lookup(std::uint32_t vpn);
  // The entry holding `vpn` that a search of the TLB from its front
  // (first_entry) or from its back (last_entry) finds, or nullptr; neither
  // touches the LRU stamps. The two differ only when a page is in twice.
  Entry* first_entry(std::uint32_t vpn);
  Entry* last_entry(std::uint32_t vpn);
  Entry* remembered(std::uint32_t vpn);
  void insert(std::uint32_t vpn, std::uint64_t pte);
  void recount_twice();  // sets may_hold_twice_ from what the TLB holds
  Elan3& elan_;
  std::vector<Entry> tlb_;
  // Hot: every page looked up. Where each page was last found, by vpn
  // modulo kHints (a hint, checked against the entry before use), so that a
  // lookup seldom searches tlb_. Used only while no page is in twice
  // (`may_hold_twice_`: set when a refill finds its page already in, counted
  // again when an entry goes).
  static constexpr std::uint32_t kHints = 16;
  std::array<std::uint16_t, kHints> where_{};
  bool may_hold_twice_ = false;
  std::vector<std::uint32_t> vpns_;  // recount_twice's scratch
  std::uint64_t stamp_ = 0, generation_ = 0;
  std::uint64_t pt_base_ = 0;
  std::uint32_t pt_entries_ = 0;
  std::vector<std::unique_ptr<Walk>> walks_;  // every walk made; those not under way in free_walks_
  std::vector<Walk*> free_walks_;
  Inspectable inspectable_;  // the table and the TLB as the debugger shows them
};

// FSM "elan3.dma", one per descriptor: Start (the engine takes it from the
// run queue), Nak (a packet refused) or AckTimeout (no token) stop new
// packets; with every packet answered it is resolved: Retry (backoff, then
// Resend), TestFail (back on the run queue), Trap (to the driver), Acked,
// LocalFault or NetworkError; a network conditional answered false by some
// node ends with ConditionFalse (Done, its destEvent set).
#define NICSIM_ELAN3_DMA_FSM_STATES(X) \
  X(Queued) X(Active) X(Draining) X(Backoff) X(Requeued) X(Done) X(Failed) X(Trapped)
#define NICSIM_ELAN3_DMA_FSM_EVENTS(X) \
  X(Start)                             \
  X(Nak) X(AckTimeout) X(Retry) X(Resend) X(TestFail) X(Trap) X(Acked) X(LocalFault) X(NetworkError) X(ConditionFalse)
NICSIM_FSM_ENUM(DmaFsmState, NICSIM_ELAN3_DMA_FSM_STATES)
NICSIM_FSM_ENUM(DmaFsmEvent, NICSIM_ELAN3_DMA_FSM_EVENTS)
struct DmaMachine {
  using State = DmaFsmState;
  using Event = DmaFsmEvent;
  static const FsmType& type();
};
// FSM "elan3.stream", one per destination: a sync packet acknowledged puts
// the sequence numbers in step; a network error loses the step.
#define NICSIM_ELAN3_STREAM_FSM_STATES(X) X(Unsynced) X(InSync)
#define NICSIM_ELAN3_STREAM_FSM_EVENTS(X) X(SyncAcked) X(NetworkError)
NICSIM_FSM_ENUM(StreamFsmState, NICSIM_ELAN3_STREAM_FSM_STATES)
NICSIM_FSM_ENUM(StreamFsmEvent, NICSIM_ELAN3_STREAM_FSM_EVENTS)
struct StreamMachine {
  using State = StreamFsmState;
  using Event = StreamFsmEvent;
  static const FsmType& type();
};

// One DMA on the run queue.
struct Desc {
  Desc(Elan3& elan, std::uint64_t id);
  Fsm<DmaMachine> fsm;
  E3Addr addr = 0;  // where it was fetched from (0: came in a read request)
  dma::Type type;
  std::uint32_t size = 0;
  E3Addr source = 0, dest = 0, dest_event = 0, src_event = 0;
  std::uint32_t dest_cv = 0, src_cv = 0;
  std::uint32_t node = 0;
  std::uint32_t node_last = 0;  // broadcast: last node of the range [node, node_last]
  bool broadcast = false;
  bool conditional = false;  // ConditionalBroadcast
  std::uint32_t done = 0;    // bytes acknowledged Ok, in order
  std::uint32_t high = 0;    // end of the furthest packet ever sent (resends start below it)
  std::uint32_t retries = 0, testfails = 0;
  Tick not_before = 0;
  DmaFsmState state() const { return fsm.state(); }
};

// The sender: descriptors in order, packets of the active one in a window,
// tokens, retransmission, requeue on test-fail, network errors.
class DmaEngine {
 public:
  explicit DmaEngine(Elan3& elan);
  ~DmaEngine();
  // Fetch the descriptor at `addr` (run_dma or an event of type Dma) and
  // queue it. Fetches complete in the order they were asked for.
  void fetch(E3Addr addr, bool from_command);
  // A descriptor that came in a read request (already checked).
  void enqueue_remote(const std::uint8_t* desc);
  // A token answering for `count` nodes from `from_node` on (elan3_regs.h ack_count).
  void token(std::uint32_t from_node, std::uint16_t seq, std::uint16_t expect, Token t, std::uint32_t count);
  std::uint32_t fetched() const { return fetched_; }

 private:
  struct TxPkt {
    Calendar::Place timeout;        // sent: where its ack timeout falls
    fabric::Packet* pkt = nullptr;  // built and not yet sent
    std::uint32_t offset = 0, len = 0;
    // Broadcast: tokens still awaited (who answered: bcast_answered_), and
    // the worst token so far.
    std::uint32_t tokens_left = 1;
    std::uint16_t seq = 0;
    enum class St : std::uint8_t { Building, Ready, Sent, Answered } st = St::Building;
    Token token = Token::Ok;
    bool timed_out = false, sync = false, retry = false;
    Token worst = Token::Ok;
  };
  struct Stream {
    std::unique_ptr<Fsm<StreamMachine>> fsm;
    std::uint16_t next_seq = 0;
  };
  struct Fetch {
    E3Addr addr;
    bool done = false, ok = false, from_command = false;
    Translation t;
    std::array<std::uint8_t, dma::kSize> bytes{};
  };
  void read_descriptor(std::uint64_t fetch);
  void descriptor_translated(std::uint64_t fetch);
  void descriptor_read(std::uint64_t arg);
  void fetch_done();
  bool accept(const std::uint8_t* d, E3Addr addr, bool remote);
  void enqueue(std::unique_ptr<Desc> d);
  void pump();
  void pump_due(std::uint64_t at);
  void start_due(std::uint64_t desc);
  void start(Desc* d);
  void build_next();
  void built(TxPkt& pk, Fault f, E3Addr fault_addr, fabric::Packet* p);
  // The data reader (see dma_engine.cc): one PCI read at a time into the
  // DMA buffer, packets built from it.
  void fill_packets();
  void read_more();
  void read_translated();
  void issue_read(std::uint64_t gen, std::uint32_t off, std::uint32_t n, const Translation& t, Tick at);
  void start_read();
  void read_done(std::uint64_t arg);
  void reset_reader(std::uint32_t from);
  void clear_window();  // drops the window, returning built packets to the pool
  void send_ready();
  void ack_timeout();
  void timeout(TxPkt& pk);
  void follow_oldest_sent();
  void maybe_resolve();
  void resend(std::uint64_t desc);
  void finish(bool ok, std::uint8_t detail);
  void finish_condition_false();
  bool broadcast_answered(TxPkt& pk, std::uint32_t first, std::uint32_t count, Token t);
  TrapResult trap(Desc& d);
  Stream& stream(std::uint32_t node) {
    if (node < streams_.size() && streams_[node].fsm) return streams_[node];
    return new_stream(node);
  }
  Stream& new_stream(std::uint32_t node);
  void schedule_pump(Tick at);
  Elan3& elan_;
  std::unique_ptr<Desc> active_;
  // Packets of the active DMA in order (a ring: no allocation per packet;
  // references into it hold only until the next push_back).
  Ring<TxPkt> window_;
  std::uint32_t next_offset_ = 0;
  bool sent_empty_ = false;  // size-0 DMA: its one packet was built
  bool draining_ = false;
  Fault local_fault_ = Fault::None;
  std::uint16_t last_expect_ = 0;
  Tick tx_free_ = 0;  // the packet builder is busy until then
  // DMA buffer: bytes [buf_from_, read_next_) of the active DMA's source,
  // at offset % dma_buffer; one read in flight at most.
  std::uint32_t buf_from_ = 0, read_next_ = 0, read_end_ = 0;
  bool read_busy_ = false;
  Fault read_fault_ = Fault::None;
  std::uint64_t read_gen_ = 0;  // bumped when the DMA or its resend point changes
  Tick read_free_ = 0;          // the next read may be requested from then
  std::vector<std::uint8_t> buf_;
  // The ack timeout of the oldest packet awaiting its token (armed while
  // one does). Every packet takes its place in the calendar's order when it
  // is sent (TxPkt::timeout), and their times never decrease, so the timer
  // moves from one packet's place to the next as tokens come: timeouts fire
  // at the same time and in the same order as with one event per packet,
  // with one calendar event per engine instead of one per packet sent in the
  // last ack_timeout (hundreds in a 64-node multicast).
  Timer ack_timer_;
  std::vector<Stream> streams_;
  Translation read_t_;  // reused by the reader's lookups
  struct Read {
    std::uint64_t gen;
    std::uint32_t off, n;
    std::vector<HostPiece> pieces;
    std::uint32_t left = 0;
    bool ok = true;
  };
  Read read_{};  // the one read in flight (read_busy_), reused
  std::deque<std::unique_ptr<Fetch>> fetches_;
  std::uint32_t fetched_ = 0;
  std::deque<std::unique_ptr<Desc>> runq_;
  E3Addr local_fault_addr_ = 0;
  std::uint32_t read_fault_off_ = 0;
  E3Addr read_fault_addr_ = 0;
  std::uint16_t bcast_seq_ = 0;  // the broadcast stream's next number
  // The nodes of the range that answered the broadcast packet in the window
  // (a broadcast has one packet out at a time).
  std::vector<std::uint8_t> bcast_answered_;
  Tick pump_at_ = kTickMax;
  std::uint64_t next_desc_id_ = 1;
  Inspectable inspectable_;  // the DMA queue as the debugger shows it
  static void inspect(const void* engine, InspectRows& rows);
};

// The receiver: one packet at a time, in arrival order.
class RxEngine {
 public:
  explicit RxEngine(Elan3& elan);
  void packet(fabric::Port* in, fabric::Packet* p);
  // An ack token for one of our packets, its tail here at `tail`.
  void reply(fabric::Packet* token, Tick tail);

 private:
  void run();
  void process(fabric::Packet* p);
  void done(Token t);
  void answer(const fabric::Packet& p, Token t);
  void write_block(const std::uint8_t* h, std::uint32_t len);
  void queued_write(const std::uint8_t* h, std::uint32_t len);
  void read_request(const std::uint8_t* payload, std::uint32_t len);
  void remote_event(E3Addr ev);
  // A network conditional's test (TestWord): the word read, then compared.
  void test_word(const std::uint8_t* h, const std::uint8_t* payload, std::uint32_t len);
  void test_translated();
  void test_read(std::uint64_t arg);
  // What a packet's execution goes on with once its destination event is
  // checked (check_event).
  enum class AfterEvent : std::uint8_t { WriteBlock, QueuedWrite, SetEvent };
  // The destination event `ev` (0: none) must allow remote setting; then
  // `then` (event_checked).
  void check_event(E3Addr ev, AfterEvent then);
  void event_translated();
  void event_checked(bool ok);
  void block_translated();
  void block_event();
  void queue_translated();
  void queue_read(std::uint64_t arg);
  void queue_decide();
  void slot_translated();
  void queue_put();
  void request_translated();
  void post_payload();
  void schedule_run(Tick at);
  void start_next();  // the engine is free: starts the next queued packet, if any
  void token_in(std::uint64_t token);
  void write_payload();
  void payload_written(std::uint64_t arg);
  void refuse() { done(Token::Error); }
  void release(fabric::Packet* p);
  Elan3& elan_;
  struct Pending {
    fabric::Port* in;
    fabric::Packet* p;
  };
  Ring<Pending> queue_;
  Tick free_since_ = 0;  // when the engine last finished a packet
  bool busy_ = false;
  bool replay_ = false;    // the packet being answered was executed before
  bool testing_ = false;   // it is a test: answered false, it was executed all the same
  bool bcast_ = false;     // the packet being handled is a broadcast
  std::uint16_t seq_ = 0;  // and its number
  // The packet being executed: its payload's host pieces and destination
  // event, and where check_event goes on.
  E3Addr pending_event_ = 0;
  std::vector<HostPiece> pieces_;
  AfterEvent after_event_ = AfterEvent::WriteBlock;
  // A queued write: the input queue, its descriptor as read, the slot.
  struct QueueWrite {
    E3Addr addr = 0, ev = 0;
    std::uint32_t len = 0;
    std::uint64_t host = 0;
    std::uint32_t state = 0, qsize = 0;
    E3Addr bptr = 0, fptr = 0, base = 0, top = 0, qev = 0, next = 0;
  };
  QueueWrite qw_;
  std::array<std::uint8_t, queue::kSize> qdesc_{};
  // A test's value and condition, and the word it compares.
  std::uint64_t test_value_ = 0;
  dma::Condition test_condition_ = dma::Condition::Equal;
  std::array<std::uint8_t, 8> test_word_{};
  std::vector<std::uint16_t> expected_;   // per source node
  std::vector<std::uint16_t> bexpected_;  // per source node, its broadcast stream
  Translation t_, te_;                    // the payload's and the event's lookups
};

// The event engine: sets are serialised (read-modify-write of ev_Count).
class EventEngine {
 public:
  explicit EventEngine(Elan3& elan);
  // need: the permission the setter must have on the event's page.
  void set(E3Addr ev, std::uint32_t need);
  // Write ev_Count = count, in order with the sets queued before it.
  void prime(E3Addr ev, std::int32_t count);
  // Set or clear the event's interrupt flag and cookie, in order with the
  // sets queued before it; a fired event with the interrupt now on
  // interrupts at once.
  void interrupt(E3Addr ev, bool on, std::uint32_t cookie);

 private:
  struct Op {
    E3Addr ev;
    std::uint32_t need;
    bool prime = false;
    std::int32_t count = 0;
    bool retype = false;  // an event_irq command: irq_word is the new flag and cookie
    std::uint32_t irq_word = 0;
  };
  void retype(const Op& op, std::uint64_t host);
  void retype_read(std::uint64_t arg);
  void retype_write(std::uint32_t type, std::int32_t count);
  void retype_written();
  void run();
  void translated();
  void prime_read(std::uint64_t arg);
  void set_read(std::uint64_t arg);
  // An event held on the card: its count lives here (written through to
  // the event in memory, SDRAM and its copy, for the CPU's polls), with the
  // action words read once when it was primed.
  struct Held {
    E3Addr ev = 0;
    std::int32_t count = 0;
    std::uint32_t type = 0;
    E3Addr src = 0, dst = 0;
    std::uint64_t used = 0;  // LRU stamp; 0 = free
  };
  Held* held(E3Addr ev);
  void hold(E3Addr ev, std::int32_t count, const std::uint8_t* words);
  void update(std::uint64_t host, std::int32_t count, std::uint32_t type, E3Addr src, E3Addr dst);
  void write_count();
  // The set in progress (update): the event's host address, its new count and
  // its action words.
  struct Update {
    std::uint64_t host = 0;
    std::int32_t count = 0;
    std::uint32_t type = 0;
    E3Addr src = 0, dst = 0;
  };
  Update update_;
  void fired(E3Addr ev, std::uint32_t type, E3Addr src, E3Addr dst);
  // The fired event whose action is under way, and the block it copies.
  struct Fired {
    E3Addr ev = 0;
    std::uint32_t type = 0;
    E3Addr src = 0, dst = 0;
  };
  Fired fired_;
  std::array<std::uint8_t, kBlockSize> block_{};
  void done_word_translated();
  void copy_from_translated();
  void copy_read(std::uint64_t arg);
  void copy_to_translated();
  // The interrupt of a fired event with kEvIrq (type's flag and cookie).
  void raise(E3Addr ev, std::uint32_t type);
  // The same once an action's write has landed: a continuation for that
  // write ({} without kEvIrq). Pending ones wait in irqs_ by slot.
  Then irq_after(const Fired& f);
  void irq_written(std::uint64_t arg);
  struct Irq {
    E3Addr ev = 0;
    std::uint32_t type = 0;
  };
  std::vector<Irq> irqs_;
  std::vector<std::uint32_t> free_irqs_;
  void next();
  void fault(Fault f, E3Addr at);
  Elan3& elan_;
  std::deque<Op> queue_;
  bool busy_ = false;
  Translation t_;                                // the lookup of the op at the head of the queue
  std::uint64_t host_ = 0;                       // and its event's host address
  std::array<std::uint8_t, event::kSize> ev_{};  // the event as read
  std::vector<Held> held_;
  std::uint64_t stamp_ = 0;
};

class Elan3 : public fabric::Device, public tlm::tlm_fw_transport_if<> {
 public:
  Elan3(fabric::Fabric& fabric, std::uint32_t device_id, std::string name, host::Host& host, host::HostBus& bus,
        const ParamSet& params);
  ~Elan3() override;

  const Elan3Params& params() const { return p_; }
  const Elan3Stats& stats() const { return stats_; }
  Elan3Stats& mutable_stats() { return stats_; }
  std::uint64_t command_port() const { return p_.command_port; }
  std::uint32_t node_id() const { return node_id_; }
  void assign_address(std::uint32_t port, std::uint16_t lid) override { node_id_ = lid; }
  void assign_network_size(std::uint32_t addresses) override { machine_size_ = addresses; }
  bool link_up();
  fabric::Port& net_port() { return port(1); }
  bool enabled() const { return control_ & reg::kControlEnable; }
  host::Host& host() { return host_; }
  host::HostBus& bus() { return bus_; }
  Mmu& mmu() { return *mmu_; }
  DmaEngine& dma() { return *dma_; }
  EventEngine& events() { return *events_; }
  // n Elan cycles.
  Tick cycles(std::uint32_t n) const { return cycles_time(n, p_.clock_hz); }
  const std::string& obj() const { return obj_; }

  // TLM-2.0 target: MMIO from the host bus (offset within the command port).
  void b_transport(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay) override;
  bool get_direct_mem_ptr(tlm::tlm_generic_payload&, tlm::tlm_dmi&) override { return false; }
  unsigned int transport_dbg(tlm::tlm_generic_payload&) override { return 0; }
  tlm::tlm_sync_enum nb_transport_fw(tlm::tlm_generic_payload&, tlm::tlm_phase&, sc_core::sc_time&) override {
    return tlm::TLM_COMPLETED;
  }

  // Fabric.
  void receive(fabric::Port& in, fabric::Packet* p) override;
  void take_reply(fabric::Port& at, fabric::Packet* reply) override;
  void link_state_changed(fabric::Port& port, bool up) override;

  // Services for the engines: a transfer to or from host memory over the
  // host bus, or to or from SDRAM for a card address (kCardAddr), `done`
  // (if any) run when the transfer is over. A write takes a copy of `data`
  // (a write into the mirrored window goes to host memory too, and is over
  // when both are); a read fills `to`, which must live until then.
  void bus_read(std::uint64_t addr, void* to, std::uint32_t len, Then done);
  void bus_write(std::uint64_t addr, const void* data, std::uint32_t len, Then done = {});
  // A write of data that stays put until `done` (a packet's payload): no
  // copy on the way to host memory.
  void write_from(std::uint64_t addr, const std::uint8_t* data, std::uint32_t len, Then done);
  Sdram& sdram() { return *sdram_; }
  // Scatter/gather over translated pieces: `done` once every piece is over
  // (failed if any failed).
  void read_pieces(const std::vector<HostPiece>& pieces, std::uint8_t* to, Then done);
  void write_pieces(const std::vector<HostPiece>& pieces, const std::uint8_t* data, Then done = {});
  // Puts a packet on the wire (or loops it back to ourselves), now or at `t`.
  // transmit_at queues a packet for the network on the port at once, ready
  // at `t` (the port starts it then or when its wire frees), so it costs
  // no event of its own; only a loopback waits for `t` by an event.
  void transmit(fabric::Packet* p);
  void transmit_at(Tick t, fabric::Packet* p);
  void post_interrupt(intq::Cause cause, std::uint8_t detail, std::uint32_t node, std::uint32_t cookie,
                      std::uint32_t data);
  // Hands a DMA back to the driver: the descriptor into the trap area slot
  // of the next interrupt entry (elan3_regs.h intq::), then a DmaTrap entry.
  TrapResult trap_dma(const std::uint8_t* desc, std::uint8_t detail, std::uint32_t node, std::uint32_t cookie,
                      E3Addr addr);
  void trace(const char* event, std::initializer_list<TraceField> fields);
  bool tracing() const { return Sim::get().tracer().on(device_id(), Component::nic); }
  static Tick now() { return Calendar::now(); }

 private:
  void command(std::uint64_t offset, std::uint64_t value);
  std::uint64_t read_register(std::uint64_t offset);
  void set_event_command(std::uint64_t ev);
  void prime_event_command(std::uint64_t value);
  void event_irq_command(std::uint64_t value);
  void loop_back(std::uint64_t packet);
  void loop_in(std::uint64_t packet);
  // The copy of a bus write's data, kept until it has landed.
  struct Staged;
  void staged_written(std::uint64_t staged);
  // SDRAM accesses of the engines (card addresses), and the host's through
  // BAR 1.
  struct CardRead {
    std::uint64_t off = 0;
    void* to = nullptr;
    std::uint32_t len = 0;
    Then done;
  };
  void card_read(std::uint64_t off, void* to, std::uint32_t len, Then done);
  void card_read_done(std::uint64_t slot);
  void card_write(Staged* w, std::uint64_t off, std::uint32_t len);
  void card_written(std::uint64_t staged);
  void card_fault(const char* what, std::uint64_t off, std::uint32_t len, Then done);
  void pio(tlm::tlm_generic_payload& gp);
  class CardBar : public tlm::tlm_fw_transport_if<> {
   public:
    explicit CardBar(Elan3& elan) : elan_(elan) {}
    void b_transport(tlm::tlm_generic_payload& gp, sc_core::sc_time&) override { elan_.pio(gp); }
    bool get_direct_mem_ptr(tlm::tlm_generic_payload&, tlm::tlm_dmi&) override { return false; }
    unsigned int transport_dbg(tlm::tlm_generic_payload&) override { return 0; }
    tlm::tlm_sync_enum nb_transport_fw(tlm::tlm_generic_payload&, tlm::tlm_phase&, sc_core::sc_time&) override {
      return tlm::TLM_COMPLETED;
    }

   private:
    Elan3& elan_;
  };
  // The pieces of one read_pieces or write_pieces still to come, by slot.
  struct Group {
    std::uint32_t left = 0;
    bool failed = false;
    Then done;
  };
  Then group(std::size_t pieces, Then done);
  void piece_done(std::uint64_t arg);
  void raise_if_pending();
  Elan3Params p_;
  host::Host& host_;
  host::HostBus& bus_;
  std::unique_ptr<Mmu> mmu_;
  std::unique_ptr<DmaEngine> dma_;
  std::unique_ptr<RxEngine> rx_;
  std::unique_ptr<EventEngine> events_;
  std::unique_ptr<Sdram> sdram_;
  CardBar card_bar_{*this};
  std::vector<CardRead> card_reads_;
  std::vector<std::uint32_t> free_card_reads_;
  std::uint64_t mirror_host_ = 0;
  std::uint32_t mirror_base_ = 0, mirror_bytes_ = 0;
  std::uint32_t node_id_ = 0;
  std::uint32_t machine_size_ = 0;
  std::uint32_t control_ = 0;
  std::string obj_;
  Elan3Stats stats_;
  std::uint64_t pt_base_ = 0, intq_base_ = 0;
  std::uint32_t pt_entries_ = 0, intq_entries_ = 0, intq_producer_ = 0, intq_consumer_ = 0, int_status_ = 0;
  std::int32_t irq_vector_ = -1;
  bool irq_armed_ = true;
  std::vector<std::unique_ptr<Staged>> staged_;  // every one made; those not in use in free_staged_
  std::vector<Staged*> free_staged_;
  std::vector<Group> groups_;
  std::vector<std::uint32_t> free_groups_;
  friend class RxEngine;
};

}  // namespace nicsim::elan3
