// Elan Kernel Comms internals: the per-node state (EpNode) and the objects
// behind the public opaque handles. Design: docs/ep.md.
#pragma once
#include <elan3/elancomm.h>

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "host/api_call.h"
#include "elan_model/driver/elan3_dev.h"
#include "core/inspect.h"
#include "fsm/fsm.h"
#include "host/host.h"

namespace nicsim::ep {

struct EpNode;

// Handle tags: a handle whose tag does not match is "a bad handle" (EINVAL
// where the call returns a status, an error report where it returns void).
inline constexpr std::uint32_t kRcvrTag = 0x52435652;    // "RCVR"
inline constexpr std::uint32_t kXmtrTag = 0x584d5452;    // "XMTR"
inline constexpr std::uint32_t kTxdTag = 0x54584420;     // "TXD "
inline constexpr std::uint32_t kRxdTag = 0x52584420;     // "RXD "
inline constexpr std::uint32_t kStateTag = 0x444d4153;   // "DMAS"
inline constexpr std::uint32_t kHandleTag = 0x444d4148;  // "DMAH"

// The fixed Elan address of every node's service table: 256 E3_Queue
// descriptors, one per service (docs/ep.md "Addresses").
inline constexpr elan3::E3Addr kServiceTable = 0x00100000;
inline elan3::E3Addr service_queue_addr(int service) {
  return kServiceTable + static_cast<elan3::E3Addr>(service) * elan3::queue::kSize;
}

// Multicast by hardware broadcast (docs/ep.md "Multicast by hardware
// broadcast"): on every node, at the same Elan addresses, two lanes per
// sender, each a 64-bit busy word (a page of the card's SDRAM) and a data
// area (node memory, ep.hw_broadcast_bytes, page aligned). A sender's
// broadcast on a lane writes its busy word and its area on every node of
// the range; the receiver clears the word once it has copied the data out.
inline constexpr elan3::E3Addr kBcastFlags = 0x03ffe000;
inline constexpr elan3::E3Addr kBcastArea = 0x04000000;
inline constexpr int kBcastLanes = 2;
// DMA source cookies of the lanes' DMAs (never a txd's index).
inline constexpr std::uint16_t kBcastCookie = 0x7ffe;  // lane i: kBcastCookie + i

// Small-message slot header (16 bytes, little-endian).
struct SmallHeader {
  std::uint32_t magic;    // kSmallMagic | kind
  std::uint16_t node;     // sender
  std::uint16_t len;      // data bytes
  std::uint32_t circuit;  // sender's incarnation of the circuit (0 for special)
  std::uint32_t seq;      // sender's message number (special: duplicate detection)
};
static_assert(sizeof(SmallHeader) == 16);
inline constexpr std::uint32_t kSmallMagic = 0x53000000u;  // 'S' << 24
enum SmallKind : std::uint32_t { kSmallData = 1, kSpecialData = 2 };

// Control messages on service EP_SVC_KCOMMS (special-message slots).
enum class Control : std::uint32_t {
  Connect = 1,
  ConnectAck = 2,
  Heartbeat = 3,
  Probe = 4,
  ProbeAck = 5,
  Reset = 6,
  Abort = 7
};
struct ControlMsg {
  std::uint32_t op;
  std::uint32_t from;
  std::uint32_t incarnation;  // Connect/ConnectAck: the sender's new incarnation; Abort: the Xid
  std::uint32_t peer_incarnation;
};

// ---- virtual circuits ---------------------------------------------------------
// FSM "ep.circuit". Connect: our first transmit starts the handshake
// (ConnectSelf: to our own node, none needed). PeerConnect: the peer's
// Connect; ConnectAck: the answer to ours; NoAnswer: none within the
// heartbeat timeout. The circuit fails when the node is Unreachable (link
// down, network error, heartbeat timeout), on a PeerReset (its Reset, or its
// Connect for a new circuit) or when a reply we ran for the peer failed
// (ReplyFailed). ResetDone: a failed circuit may be used again.
#define NICSIM_EP_CIRCUIT_STATES(X) X(Disconnected) X(Connecting) X(Connected) X(Failed)
#define NICSIM_EP_CIRCUIT_EVENTS(X) \
  X(Connect)                        \
  X(ConnectSelf) X(PeerConnect) X(ConnectAck) X(NoAnswer) X(Unreachable) X(PeerReset) X(ReplyFailed) X(ResetDone)
NICSIM_FSM_ENUM(CircuitState, NICSIM_EP_CIRCUIT_STATES)
NICSIM_FSM_ENUM(CircuitEvent, NICSIM_EP_CIRCUIT_EVENTS)
struct CircuitMachine {
  using State = CircuitState;
  using Event = CircuitEvent;
  static const FsmType& type();
};

struct Circuit {
  Circuit(EpNode& node, std::uint32_t peer);
  Fsm<CircuitMachine> fsm;
  std::uint32_t peer;
  std::uint32_t incarnation = 0;       // ours, new on every connect
  std::uint32_t peer_incarnation = 0;  // the peer's, from its Connect/ConnectAck
  Tick last_heard = 0;
  Tick last_sent = 0;
  Tick failed_at = 0;
  Tick connect_started = 0;
  std::deque<struct ::ep_txd*> waiting;  // transmits queued while Connecting
  // Multicast tree edges queued while Connecting: called with true when the
  // circuit is up, false when it is refused or fails.
  std::vector<std::function<void(bool)>> waiting_edges;
  std::unique_ptr<host::Timer> connect_timer;
  CircuitState state() const { return fsm.state(); }
  Inspectable inspectable;  // what the debugger shows (ep_circuit.cc)
  static void inspect(const void* circuit, InspectRows& rows);
};

// A multicast node's edges to its children in the forwarding tree (the
// root's txd or an interior node's rxd). Each edge is a message on the
// circuit to that child: its own copy of the envelope (the child's circuit
// incarnation, its own completion event) and an edge event that the child
// sets when its subtree is done; the edge event chains to the owner's
// count event (the root's TxdDone, an interior node's subtree event). A
// circuit failure to a child whose edge has not fired sets the edge here,
// and the failure is recorded (docs/ep.md "Multicast").
struct Fanout {
  std::vector<int> children;
  std::vector<elan3::ElanMem> edge;  // per child slot (kArity), RemoteEvent
  std::vector<bool> failed;          // per child: completed by a failure here
  elan3::ElanMem envs;               // per child envelope copies (kArity slots)
  std::uint32_t bytes = 0;           // envelope + bitmap bytes sent
  int service = 0;
  std::uint16_t cookie = 0;        // DMA source cookie of the owner
  std::uint32_t gen = 0;           // new per multicast: stale waiters do nothing
  bool dirty = false;              // an edge failed: its memory may still be hit
  struct ::ep_txd* txd = nullptr;  // owner: the root's transmit
  struct ::ep_rxd* rxd = nullptr;  // owner: an interior node's receive
  int slot_of(int child) const {
    for (std::size_t i = 0; i < children.size(); ++i)
      if (children[i] == child) return static_cast<int>(i);
    return -1;
  }
};

}  // namespace nicsim::ep

// ---- the objects behind the public handles ------------------------------------------
struct elan3_dma_state {
  std::uint32_t tag = nicsim::ep::kStateTag;
  nicsim::ep::EpNode* node = nullptr;
};

struct elan3_dma_handle {
  std::uint32_t tag = nicsim::ep::kHandleTag;
  nicsim::elan3::ElanRange range;
  nicsim::elan3::E3Addr addr = 0;  // map(): the object's Elan address
  bool reserved = false;           // reserve() (kaddr_load/unload) vs map()
};

enum class TxKind : std::uint8_t { Small, Special, Large, Rpc, Multicast };

struct ep_txd {
  std::uint32_t tag = nicsim::ep::kTxdTag;
  struct ep_xmtr* xmtr = nullptr;
  std::uint32_t index = 0;
  std::uint32_t generation = 0;
  TxKind kind = TxKind::Small;
  bool active = false;
  bool irq = false;        // its event interrupts on completion (no EP_NO_INTERRUPT, or txcallbacks)
  bool polled = false;     // started with EP_NO_INTERRUPT
  bool sent = false;       // envelope DMA issued
  int status = ESUCCESS;   // set before completion (ENETRESET, ETIMEDOUT, ...)
  bool forced = false;     // completed by software (failure/timeout), not by the event
  bool starting = false;   // its transmit call has not handed it over yet (EpNode::launch)
  bool finishing = false;  // finish() has begun (its CPU charge and handler may let others run)
  int dest = 0;
  int service = 0;
  int flags = 0;
  EP_TXH* handler = nullptr;
  void* arg = nullptr;
  nicsim::elan3::ElanMem done;                 // TxdDone event (RemoteEvent)
  nicsim::elan3::ElanMem buf;                  // envelope or small message (LocalRead)
  nicsim::elan3::ElanMem status_blk;           // RPC status block (RemoteWrite)
  std::uint32_t buf_len = 0;                   // bytes of buf to send
  std::uint32_t circuit = 0;                   // incarnation it was sent on
  nicsim::Tick deadline = 0;                   // special: absolute timeout (0 = none)
  std::unique_ptr<nicsim::host::Timer> timer;  // special: the timeout
  std::unique_ptr<nicsim::host::Timer> retry;  // re-send of a special message lost on the network
  std::unique_ptr<nicsim::ep::Fanout> fan;     // tree multicast: edges to the root's children
  std::uint32_t id() const { return (generation << 16) | index; }
};

struct ep_xmtr {
  std::uint32_t tag = nicsim::ep::kXmtrTag;
  nicsim::ep::EpNode* node = nullptr;
  bool large = false;
  int type = 0;              // small: EP_SVC_TYPE_*
  int msgsize = 0;           // small: max message bytes
  std::uint32_t cookie = 0;  // event interrupts of this transmitter's txds
  std::vector<std::unique_ptr<ep_txd>> pool;
  std::deque<ep_txd*> free;
  std::vector<ep_txd*> active;
  bool txcallbacks = false;  // ep_enable_txcallbacks in force
  std::unique_ptr<nicsim::host::WaitQueue> free_waiters;
  elan3_dma_state dma_state;
};

enum class RxState : std::uint8_t { Free, Queued, Pulling, Forwarding, Done, Completing };

struct ep_rxd {
  std::uint32_t tag = nicsim::ep::kRxdTag;
  struct ep_rcvr* rcvr = nullptr;
  RxState state = RxState::Queued;
  EP_RXH* handler = nullptr;
  void* arg = nullptr;
  E3_Addr buffer = 0;
  E3_uint32 size = 0;
  int status = ESUCCESS;
  int len = 0;
  int node = -1;
  EP_ENVELOPE envelope{};
  std::vector<std::uint8_t> bitmap_trailer;  // multicast bitmap (network order)
  nicsim::elan3::ElanMem done;               // data landed (count = fragments)
  nicsim::elan3::ElanMem subtree;            // multicast: children completed
  nicsim::elan3::ElanMem reply_done;         // RPC: status block acknowledged
  EP_RXH* reply_handler = nullptr;
  void* reply_arg = nullptr;
  nicsim::elan3::ElanMem reply_blk;         // RPC status block staging (LocalRead)
  std::unique_ptr<nicsim::ep::Fanout> fan;  // multicast: edges to this node's children
  std::uint32_t index = 0;                  // cookie = kRxCookie | index
  int pulls = 0;                            // fragments being read
};

struct ep_rcvr {
  std::uint32_t tag = nicsim::ep::kRcvrTag;
  nicsim::ep::EpNode* node = nullptr;
  bool large = false;
  int service = 0;
  int type = 0;               // small: EP_SVC_TYPE_*
  int msgsize = 0;            // small
  EP_RCV* handler = nullptr;  // small
  void* arg = nullptr;
  nicsim::elan3::InputQueue queue;
  nicsim::elan3::ElanMem queue_event;
  bool draining = false;     // a context is taking messages from the queue
  bool drain_again = false;  // another context found it busy: look again
  std::uint32_t cookie = 0;
  // Small receivers with no handler: messages handed to a waiter and not
  // yet consumed (pointers into the queue slots).
  std::deque<const std::uint8_t*> delivered;  // handed out, oldest first
  std::vector<const std::uint8_t*> consumed;  // consumed out of order, not yet freed
  std::vector<const std::uint8_t*> taken;     // returned by ep_waitfor_small_message, not consumed
  std::unique_ptr<nicsim::host::WaitQueue> waiters;
  // Large receivers.
  std::vector<std::unique_ptr<ep_rxd>> rxds;
  std::deque<ep_rxd*> posted;     // buffers waiting for a message
  std::deque<ep_rxd*> completed;  // for ep_waitfor_large_receive
  std::deque<ep_rxd*> spare;      // completed with ep_complete_receive
  bool removed = false;
  elan3_dma_state dma_state;
};

namespace nicsim::ep {

// A multicast waiting for, or being sent by, the node's hardware broadcast.
struct BcastJob {
  struct ::ep_txd* t = nullptr;
  std::uint32_t generation = 0;  // of t when queued: a txd reused since is not this job's
  std::uint32_t lo = 0, hi = 0;  // the range
  std::uint32_t seq = 0;         // the busy word while receivers hold the data; its low bit is the lane
  int nfrags = 0;
  EP_IOVEC frags[EP_MAXFRAG] = {};
};

// One lane of the sender's side. Idle: nothing out. Sending: the Elan runs
// the lane's broadcasts as a chain of DMAs, each started by the event of
// the one before (busy word, data fragments, envelope), with no host work;
// the host sees the end, `acked` (every node of the range took the
// envelope: its joined token) or a network error (reported with the
// lane's cookie). Draining: the network conditional "every node's busy
// word of this lane is 0" (every receiver copied the data out of its area)
// is out, or waits to be sent again; when it holds, the multicast
// completes and the lane takes the next one. Two lanes let a broadcast go
// out while the receivers copy the last one.
enum class BcastState : std::uint8_t { Idle, Sending, Draining };
struct BcastLane {
  int index = 0;
  BcastState state = BcastState::Idle;
  BcastJob job;
  Tick wait = 0;                       // the next re-test's delay
  elan3::ElanMem busy, descs;          // the busy value; the chained descriptors
  elan3::ElanMem yes, no, acked;       // conditional held / did not; envelope acknowledged
  std::vector<elan3::ElanMem> chain;   // after the busy word and each fragment: the next DMA
  std::unique_ptr<host::Timer> timer;  // the re-test
};
struct Broadcaster {
  std::uint32_t area_bytes = 0;  // data bytes per area (ep.hw_broadcast_bytes)
  std::uint32_t stride = 0;      // area_bytes rounded up to whole Elan pages
  Tick retest = 0;               // ep.hw_broadcast_retest
  elan3::ElanRange flags_range, area_range;
  elan3::ElanMem flags;      // this node's busy words, kBcastLanes per sender
  elan3::ElanMem test;       // the conditional's test: "the word is 0"
  std::uint32_t cookie = 0;  // interrupts of the lanes' `yes`, `no` and `acked`
  BcastLane lanes[kBcastLanes];
  std::deque<BcastJob> waiting;
  std::uint32_t next_seq = 1;
  std::uint64_t sent = 0, failed = 0, retests = 0;  // jobs ended each way; conditionals that did not hold
  static std::uint32_t word(std::uint32_t sender, std::uint32_t lane) { return sender * kBcastLanes + lane; }
  elan3::E3Addr flag_addr(std::uint32_t sender, std::uint32_t lane) const {
    return kBcastFlags + word(sender, lane) * 8;
  }
  elan3::E3Addr data_addr(std::uint32_t sender, std::uint32_t lane) const {
    return kBcastArea + word(sender, lane) * stride;
  }
};

// One node's Kernel Comms.
inline constexpr std::uint16_t kRxCookie = 0x8000;     // DMA source cookies: rxd (else txd index)
inline constexpr std::uint32_t kLargeSlotBytes = 320;  // envelope + multicast bitmap (1024 nodes)
std::uint32_t large_slot_size(const EpNode& node);

// Kept by the node's host: it goes, with everything below, when the
// node's software does.
struct EpNode : host::HostSoftware {
  static EpNode* get();      // the calling node's, created on first use (thread)
  static EpNode* current();  // the calling node's if it exists

  explicit EpNode(elan3::Elan3Dev& dev);
  ~EpNode();
  void start();
  elan3::Elan3Dev& dev;
  host::Host& host;
  std::uint32_t self = 0;
  std::uint32_t nnodes = 0;

  // Service table (docs/ep.md).
  std::uint8_t* table_host = nullptr;
  elan3::ElanRange table_range;
  ep_rcvr* services[EP_NUM_SERVICES] = {};

  // Circuits and membership.
  std::vector<std::unique_ptr<Circuit>> circuits;
  std::vector<bitmap_t> live;  // ep_numnodes() bits
  std::uint32_t next_incarnation = 1;
  std::uint32_t special_seq = 0;
  std::unique_ptr<host::Timer> heartbeat;
  ep_rcvr* control_rcvr = nullptr;
  ep_xmtr* control_xmtr = nullptr;
  std::vector<ep_xmtr*> xmtrs;  // those not freed
  // Every receiver and transmitter made here, removed and freed ones too:
  // their handles stay allocated (a later use is a bad handle, not a use
  // after free) until the node's software goes.
  std::vector<std::unique_ptr<ep_rcvr>> all_rcvrs;
  std::vector<std::unique_ptr<ep_xmtr>> all_xmtrs;
  // Mappings and reservations (elan3_dma_*) until unmapped or released.
  std::unordered_map<const elan3_dma_handle*, std::unique_ptr<elan3_dma_handle>> dma_handles;
  std::vector<ep_txd*> txd_table;  // by src cookie - 1 (null: an index in quarantine, see renumber)
  struct QuarantinedIndex {
    std::uint32_t index;
    Tick since;
  };
  std::deque<QuarantinedIndex> quarantined;  // oldest first
  std::vector<ep_rxd*> rxd_table;            // by (cookie & ~kRxCookie) - 1
  // Elan memory a late packet or event set may still reach: never reused.
  std::vector<elan3::ElanMem> retired;

  // Parameters (host scope, ep.*).
  Tick heartbeat_period = 0, heartbeat_timeout = 0, connect_timeout = 0, reset_hold = 0, special_resend = 0,
       txd_poll = 0;
  bool hw_broadcast = false;
  std::unique_ptr<Broadcaster> bcast;  // when ep.hw_broadcast is on and its areas are mapped

  // CPU charging that works in interrupt context too.
  void cpu(std::string_view cls, std::uint64_t bytes = 0);
  void error(const std::string& msg);

  // Queues.
  elan3::ElanMem table_slot(int service) const;
  void lock_service(int service);
  bool install_queue(ep_rcvr* r, std::uint32_t nslots, std::uint32_t slot_size);
  void remove_queue(ep_rcvr* r);
  std::uint32_t queued(const ep_rcvr* r) const;
  const std::uint8_t* slot(const ep_rcvr* r, std::uint32_t nth) const;
  void rcvr_event(ep_rcvr* r, elan3::E3Addr ev);
  void service_queue(ep_rcvr* r);
  void drain(ep_rcvr* r);
  void small_arrived(ep_rcvr* r);
  void deliver_small(ep_rcvr* r);
  ep_rcvr* install_control();

  // Transmit plumbing.
  ep_xmtr* new_xmtr(bool large, int type, int msgsize);
  bool grow(ep_xmtr* x, bool wait);
  int get_txd(ep_xmtr* x, int flags, ep_txd** out);
  void put_txd(ep_txd* t);
  void finish(ep_txd* t);
  bool finished(ep_txd* t);
  void force(ep_txd* t, int status);
  bool launch(ep_txd* t);
  void renumber(ep_txd* t);
  ep_txd* txd_of_cookie(std::uint16_t cookie) const;
  int poll(ep_xmtr* x);
  void tx_event(ep_xmtr* x, elan3::E3Addr ev);
  void set_txcallbacks(ep_xmtr* x, bool on);
  int send_on_circuit(ep_txd* t);
  void issue(ep_txd* t);
  void dma_failure(const elan3::DmaFailure& f);
  void fail_cookie(std::uint16_t cookie, int status);
  void link_changed(bool up);

  // Circuits and membership.
  Circuit& circuit(std::uint32_t peer) { return *circuits[peer]; }
  void connect(Circuit& c);
  // `event`: PeerConnect or ConnectAck.
  void circuit_up(Circuit& c, CircuitEvent event);
  // `event`: Unreachable (the node leaves the live map), PeerReset or
  // ReplyFailed (it stays live). Nothing happens unless the circuit is
  // Connecting or Connected.
  void circuit_failed(Circuit& c, CircuitEvent event, const char* cause);
  void control(const ControlMsg& m);
  void send_control(std::uint32_t dest, Control op, std::uint32_t inc, std::uint32_t peer_inc);
  void heard_from(std::uint32_t n);
  void tick();
  bool is_live(std::uint32_t n) const { return n < nnodes && BT_TEST(live.data(), n); }

  // Large receive side.
  void envelope_arrived(ep_rcvr* r);
  void bind_envelopes(ep_rcvr* r);
  void start_pull(ep_rxd* d);
  void rx_event(ep_rcvr* r, elan3::E3Addr ev);
  void fail_rxd(ep_rxd* d, int status);
  void finish_rx(ep_rxd* d);
  void set_remote_event(std::uint32_t node, elan3::E3Addr ev, int times);
  ep_rxd* new_rxd(ep_rcvr* r, int flags);

  // Multicast.
  void forward(ep_rxd* d);
  void subtree_done(ep_rxd* d);
  void mark_multicast_failure(ep_rxd* d);
  bool prepare_fanout(Fanout& f, elan3::ElanMem target, bool irq, std::uint32_t cookie);
  void start_fanout(Fanout& f, const EP_ENVELOPE& env, const std::uint8_t* trailer, std::size_t trailer_bytes);
  void send_edge(Fanout& f, int slot);
  void fail_edge(Fanout& f, int slot);
  void fail_edges_to(std::uint32_t peer);
  Fanout* fanout_of_cookie(std::uint16_t cookie);
  bool retry_wanted(const elan3::DmaFailure& f);

  // Multicast by hardware broadcast (ep_bcast.cc).
  bool setup_broadcast();
  bool broadcast_fits(const std::vector<int>& members, std::uint64_t total) const;
  void broadcast_submit(const BcastJob& job);
  void broadcast_next();
  bool broadcast_start(BcastLane& lane);
  void broadcast_drained_test(BcastLane& lane);
  void broadcast_event(elan3::E3Addr ev);
  bool broadcast_failure(const elan3::DmaFailure& f);
  void broadcast_end(BcastLane& lane, int status);
  bool broadcast_release(ep_rxd* d);
};

// Perm/attr translation from the public ELAN_PERM_* levels and PTE_* bits.
std::uint32_t perm_bits(u_int perm);
std::uint32_t attr_bits(u_int attr);

}  // namespace nicsim::ep
