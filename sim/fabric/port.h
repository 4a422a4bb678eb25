// Fabric ports and the devices that own them.
//
// A Port is one end of a link. Its transmit side holds per-VL output queues,
// the credits it has for the peer's per-VL input buffers (in 64-byte blocks),
// and the serialiser; its receive side is the input buffer whose space the
// owning device gives back with release(). Credits travel back over the link
// with its propagation delay.
//
// Events per packet per hop: one, its arrival at the next device. With a
// single VL the output queue is strictly FIFO, so a head packet's start time
// is fixed as soon as the credits it needs are known to arrive: the port
// commits transmissions ahead (start = max(wire free, credits back, packet
// ready)) and needs no wake-ups. With several VLs the arbiter must choose at
// the moment the wire frees, so the port wakes then (and when a stalled VL
// gets credits back).
#pragma once
#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/inspect.h"
#include "core/ring.h"
#include "core/rng.h"
#include "core/units.h"
#include "fabric/packet.h"

namespace nicsim {
class BlockExchange;
}

namespace nicsim::fabric {

class Fabric;
class Link;

inline constexpr int kMaxVls = 15;
inline constexpr std::uint32_t kAtHead = ~0u;  // Port::after_tail_: deliver at the head's arrival
// VL15 is the management lane: it has priority over the data VLs and no
// flow control; a receiver whose VL15 buffer is full drops the packet.
inline constexpr int kVl15 = 15;

// Anything with fabric ports: a switch or a NIC.
class Device {
 public:
  Device(Fabric& fabric, std::uint32_t device_id, std::string name);
  virtual ~Device();
  Fabric& fabric() const { return fabric_; }
  std::uint32_t device_id() const { return device_id_; }
  const std::string& name() const { return name_; }
  // The partition block the device belongs to (Calendar::BlockScope); a
  // NIC's is its node's.
  std::uint32_t block() const { return block_; }
  void set_block(std::uint32_t block) { block_ = block; }
  // In a run over several processes: another process runs this device,
  // and this one has only a RemoteDevice for it (docs/partition.md).
  virtual bool runs_elsewhere() const { return false; }
  // Ports are numbered from 1; port(0) does not exist. A RemoteDevice
  // builds only the ports of links that reach this process's devices;
  // asking it for another is a std::logic_error.
  Port& port(std::uint32_t number) {
    Port* p = ports_.at(number - 1).get();
    if (!p) [[unlikely]]
      not_built(number);
    return *p;
  }
  bool has_port(std::uint32_t number) const {
    return number >= 1 && number <= ports_.size() && ports_[number - 1] != nullptr;
  }
  std::uint32_t num_ports() const { return static_cast<std::uint32_t>(ports_.size()); }

  // The head of `p` has arrived on `in` (now). The device owns p from here:
  // it must eventually release() the input buffer and hand the packet on,
  // or release and free it.
  virtual void receive(Port& in, Packet* p) = 0;
  // The fabric address of one of this device's ports (assigned by the world's
  // static addressing, or later on the wire by a management agent).
  virtual void assign_address(std::uint32_t port, std::uint16_t address) {}
  // How many addresses the device's network has, for a network that numbers
  // its endpoints densely from 0 and tells each device the count (assigned
  // by the world's static addressing with the address).
  virtual void assign_network_size(std::uint32_t addresses) {}
  // A management agent configures the fabric on the wire: ports wait for
  // it to activate them (otherwise they go active as soon as the link is up).
  virtual void set_managed(bool managed) {}
  // The link behind `port` changed state (up or down).
  virtual void link_state_changed(Port& port, bool up) {}
  // `port` committed `p` to the wire: its first bit leaves at `start`, its
  // tail at `end` (both >= now: a port that commits ahead tells at once).
  // Devices that pace their injection (NICs) or balance load (switches)
  // override this.
  virtual void transmitted(Port& port, const Packet& p, Tick start, Tick end) {}
  // A reply carried back along a route (Port::carry_back) passes through
  // this device, its head arriving on `in` at `at` and leaving by `out`:
  // the time it spends here, head in to head out. Switches of fabrics whose
  // NICs carry replies implement it; on any other device a route through it
  // is a wiring error (std::logic_error).
  virtual Tick carry_through(Port& in, Port& out, const Packet& reply, Tick at);
  // Combining the replies of a packet's copies (network conditionals): a
  // reply whose packet asked for it (meta.combine_replies) is offered to
  // each device it passes, head arriving on `in` at `at`, having crossed
  // `hop` + 1 of its route's links back (reply->route[hop] is `in`) with
  // serialisation `ser` on the slowest. A device that copied the packet
  // keeps the reply (returns true) until the replies of all its copies are
  // in, then sends the combined one on with Port::carry_on from `hop`.
  // `packet_id`: the packet answered (its copies share it).
  virtual bool combine_reply(Port& in, Packet* reply, std::uint64_t packet_id, int hop, Tick at, Tick ser) {
    return false;
  }
  // A carried reply reached this device on `at`, its tail at
  // reply->tail_at (>= now); the device owns it from here. NICs that answer
  // with carried replies implement it; any other device reports an error
  // and frees the reply.
  virtual void take_reply(Port& at, Packet* reply);

 protected:
  void add_ports(std::uint32_t count);
  // `count` port numbers with no Port yet; build_port makes one.
  void add_port_slots(std::uint32_t count);
  Port& build_port(std::uint32_t number);

 private:
  [[noreturn]] void not_built(std::uint32_t number) const;
  Fabric& fabric_;
  std::uint32_t device_id_;
  std::uint32_t block_ = 0;
  std::string name_;
  std::vector<std::unique_ptr<Port>> ports_;
};

// A port's counters. The Port keeps them by use (the ones a hop updates sit
// in the lines the hop touches anyway) and assembles this view on request.
struct PortStats {
  std::uint64_t rx_packets = 0, rx_bytes = 0;
  std::uint64_t tx_packets = 0, tx_bytes = 0;
  Tick tx_busy = 0;                 // time the serialiser was sending
  std::uint64_t credit_stalls = 0;  // times a packet could not start for lack of credits
  std::uint64_t drops_link_down = 0, drops_injected = 0, bit_errors = 0;
  std::uint64_t drops_vl15_full = 0;  // VL15 packets dropped: the receiver's VL15 buffer was full
};

// A Port's fields are laid out by the roles a port plays in a hop (the
// multicast's 448 ports do not fit a 32 KiB L1, so each line a hop touches
// is a likely miss): receiving a packet reads line 0 only (and the switches
// read number() there); the transmit side reads lines 0-3;
// taking back a credit reads lines 1 and 3. Neither the Link nor anything
// below line 3 is read on a hop. The link's state, fault injection and
// generation are mirrored here by the Link when they change.
class alignas(64) Port {
 public:
  Port(Device& owner, std::uint32_t number);
  Port(const Port&) = delete;
  Device& owner() const { return *owner_; }
  std::uint32_t number() const { return number_; }
  std::string path() const;  // "leaf0.port3"
  Link* link() const { return link_; }
  Port* peer() const { return peer_; }
  bool connected() const { return peer_ != nullptr; }
  bool up() const { return up_; }
  bool cut() const { return cut_; }

  // Transmit side. Queues `p` on VL p->meta.vl; it leaves no earlier than
  // p->ready_at and, cut-through, not before its tail could have arrived.
  void send(Packet* p);
  // The owner sends data on VL 0 only (a NIC whose link has a second
  // virtual channel it never uses for data): with nothing to arbitrate the port commits
  // each packet's start as it queues, as on a one-VL link, with no wake-up
  // when the wire frees. The first packet on another VL makes it arbitrate
  // from then on (packets committed before it keep their places).
  void send_vl0_only();
  std::uint32_t queued() const { return queued_; }
  // Credits for the peer's VL buffer that have reached this port by now
  // (returns are applied lazily, so this adds the ones not yet absorbed).
  std::uint32_t credits(int vl) const;
  Tick busy_until() const { return busy_until_; }

  // Receive side: the owner frees the input buffer of `p` at time `when`
  // (>= now; the credit reaches the peer one link delay later).
  void release(const Packet& p, Tick when);
  // Receive side: the owner takes packets (Device::receive) `extra` after
  // their tail is in instead of when their head arrives. For a NIC that does
  // nothing with a packet before it has all of it (and then needs `extra`
  // to start): one event per packet instead of two. A link that goes down
  // before then loses the packet. `extra` is at most 4 ms.
  void deliver_after_tail(Tick extra);

  // Replies carried back along a route: a NIC answering a packet with a
  // short reply that travels the packet's route backwards, through the same
  // links and switches (an acknowledgement token that the switches return
  // along the route the packet opened), calls carry_back;
  // the packet must have been sent with meta.keep_route.
  // The reply's head leaves the answering NIC's port at `start` and reaches
  // the packet's source after each link's propagation delay and each
  // switch's carry_through time; its tail arrives one serialisation later
  // (cut-through). It travels as link control symbols interleaved with the
  // data going the other way: it neither waits for nor holds the wire,
  // takes no buffer or credit, and is not counted in the ports' packet and
  // byte counters. So it costs no calendar event per hop (one at the
  // source, scheduled by the caller), and when no link is down or injects
  // faults and no port is traced or captured, nothing of the links is read
  // (the packet summed the route's latency on its way out). Otherwise each
  // link's loss and bit-error injection apply to it, a link that is down
  // loses it, and traces and captures show it on every link.
  // A link cut between partition blocks ends the walk: the reply goes on
  // as an event of the far block when its head arrives there
  // (carried_thunk), which reads that block's switches and links then.
  // Returns the port it reached (the data's source's) after calling
  // take_reply there, with reply->tail_at set; nullptr when it was lost
  // (counted and traced as a drop on the port that sent it) or `data` has
  // no recorded route, the reply then freed, or when it went on over a cut.
  // `at`: the answering device's port the data came in by.
  static Port* carry_back(Port& at, const Packet& data, Packet* reply, Tick start);
  // A reply a device kept to combine (Device::combine_reply) goes on from
  // there: its head leaves that device on reply->route[hop] at `head`
  // (after carry_through there), `ser` its serialisation so far. Returns as
  // carry_back does.
  static Port* carry_on(Packet* reply, std::uint64_t packet_id, int hop, Tick head, Tick ser);
  // False, with the loss counted and traced, when a link of a carried
  // reply's route went down after carry_back sent the reply (it is then
  // lost on that link); the source asks when it takes the reply in.
  static bool route_intact(const Packet& reply);

  PortStats stats() const;
  // Packet capture: called for every packet this port puts on the wire, with
  // the time its first bit leaves.
  using Tap = void (*)(void* ctx, const Packet& p, Tick start);
  void set_tap(Tap tap, void* ctx);
  // For the debugger: the port's queues and credits as rows, and the
  // packets it holds: queued to send (by VL) and on the wire towards its peer.
  void inspect(InspectRows& rows) const;
  std::vector<const Packet*> queued_packets() const;
  std::vector<const Packet*> on_the_wire() const;
  Tap tap() const { return tap_; }
  void* tap_context() const { return tap_ctx_; }
  // A run over several processes: how a packet's arrival and a credit's
  // return over a cut link travel to the process of the other end
  // (fabric/cross_block.cc).
  static void register_cross_events(Fabric& fabric, BlockExchange& exchange);

 private:
  friend class Link;
  struct CreditReturn {
    Tick at;
    std::uint8_t vl;
    std::uint32_t blocks;
  };
  // One data VL's output queue and the credits held for the peer's buffer.
  struct VlQueue {
    Packet* head = nullptr;
    Packet* tail = nullptr;
    std::uint32_t credits = 0;
  };
  // VLs held inside the Port; a link with more gets them from the heap.
  static constexpr int kInlineVls = 2;
  void pump();
  // Inlined into pump(), their only caller: a call per pump costs more
  // than the code (register saves and restores).
  [[gnu::always_inline]] void pump_fifo(Tick now, bool is_up);
  [[gnu::always_inline]] void pump_arbitrated(Tick now, bool is_up);
  bool credits_by(int vl, std::uint32_t need, Tick& at);
  Packet* pop(int vl);
  void absorb_credits(Tick now);
  void schedule_wake(Tick at);
  [[gnu::always_inline]] void deliver(Packet* p);  // the body of arrive_thunk
  // Over a cut link the sender's block timed the arrival by what it has of
  // this port (another process's stand-in): std::logic_error unless that
  // agrees with when this port takes packets.
  void check_cut_arrival(const Packet& p) const;
  void transmit(Packet* p, Tick earliest);
  void drop(Packet* p, std::uint64_t Port::*counter, const char* why);
  void lose_reply(const Packet* reply, std::uint64_t Port::*counter, const char* why, Tick when);
  static Port* carry_from(Packet* reply, std::uint64_t packet_id, int from, Tick head, Tick ser);
  static Port* reached(Packet* reply, std::uint64_t packet_id, int hop, Tick head, Tick ser);
  static bool route_has_cut(const Packet& data);
  static void cross_cut(Packet* reply, std::uint64_t packet_id, int hop, Tick entered, Tick head, Tick ser);

 public:
  // A carried reply's head reaching `self` (reply->route[reply->carry_hop])
  // over a cut link, as an event of that port's block.
  static void carried_thunk(void* self, std::uint64_t reply);

 private:
  void leave_buffer(Packet* p, Tick when);
  [[gnu::always_inline]] void credit_return(Tick at, int vl, std::uint32_t blocks);  // inlined into release()
  void send_checked(Packet* p);
  void connect(Link& link, Port& peer);
  void reset_credits();
  bool vl15_accept(Tick now);
  void add_credits(int vl, std::uint32_t blocks);
  Tick serialization(std::size_t bytes) const;
  static void wake_thunk(void* self, std::uint64_t);
  static void arrive_thunk(void* self, std::uint64_t packet);
  // A credit return over a cut link, as an event of the sender's block.
  static void credit_thunk(void* self, std::uint64_t vl_and_blocks);
  void return_credit_across(Tick at, int vl, std::uint32_t blocks);

  // ---- line 0: the receive side, and what both ends of a hop read -------
  Device* owner_;
  Port* peer_ = nullptr;
  Tick delay_ = 0;
  std::uint64_t rx_packets_ = 0, rx_bytes_ = 0;
  std::uint64_t credit_stalls_ = 0;  // times a packet could not start for lack of credits
  std::uint32_t generation_ = 0;     // the link's, bumped on every down transition
  std::uint32_t number_;
  std::uint32_t after_tail_ = kAtHead;  // deliver_after_tail's `extra`, in ps
  bool up_ = false;                     // connected and the link is up

 public:
  bool trace_on = false;  // fabric tracing enabled for the owner

 private:
  // ---- line 1: the transmit side's control word, transmit counters -------
  VlQueue* vl_ = inline_vl_;  // vls_ entries
  Tick busy_until_ = 0;
  Tick wake_at_ = kTickMax;        // pending wake of a multi-VL port, if any
  std::uint32_t ps_per_byte_ = 0;  // serialisation time per byte when exact, else 0
  std::uint32_t queued_ = 0;
  std::uint32_t vl_blocks_ = 0;  // the peer's buffer per VL, in credit blocks
  std::uint8_t vls_ = 0;         // data VLs; 0 until connected (so send() tests one thing)
  bool injects_ = false;         // the link may drop packets or flip bits
  bool tapped_ = false;
  bool pumping_ = false;
  bool stalled_ = false;
  bool fifo_ = false;         // pumped as one FIFO: a single data VL, or only VL 0 used (send_vl0_only)
  bool cut_ = false;          // the link joins two partition blocks (Link::set_cut)
  std::uint8_t rr_next_ = 0;  // round-robin VL arbitration
  std::uint64_t tx_packets_ = 0, tx_bytes_ = 0;

  // ---- line 2: the first two VLs' queues and credits -----------------------
  VlQueue inline_vl_[kInlineVls];
  Tick tx_busy_ = 0;             // time the serialiser was sending
  Packet* vl15_head_ = nullptr;  // VL15 output queue (sent before any data VL)

  // ---- line 3: credit returns on their way back ------------------------------
  // Sorted by `at`, taken from the front. Two slots inside the Port: in the
  // 64-node multicast 83% of returns find none pending and 1% two or more,
  // so taking and giving credits nearly never reads a line outside the Port.
  alignas(64) Ring<CreditReturn, 2> pending_credits_;

  // ---- cold: set-up, VL15, capture, rare counters ----------------------------
  Link* link_ = nullptr;
  std::uint64_t bits_per_second_ = 0;
  std::uint32_t vl15_slots_ = 2;  // receive side: VL15 buffer, in packets
  bool vl0_only_ = false;         // send_vl0_only() was asked and still holds
  Packet* vl15_tail_ = nullptr;
  std::vector<Tick> vl15_busy_;          // receive side: when each held VL15 packet leaves the buffer
  std::unique_ptr<VlQueue[]> more_vls_;  // a link with more than kInlineVls VLs
  Tap tap_ = nullptr;
  void* tap_ctx_ = nullptr;
  std::uint64_t drops_link_down_ = 0, drops_injected_ = 0, bit_errors_ = 0;
  Tick down_at_ = kTickMax;            // when this end last went down (kTickMax: never)
  std::uint64_t drops_vl15_full_ = 0;  // VL15 packets dropped: the receiver's VL15 buffer was full

 public:
  std::uint32_t timeline_track = 0;  // tx spans
};

inline Tick Port::serialization(std::size_t bytes) const {
  // Packets are far smaller than the bound; it keeps the product exact.
  if (ps_per_byte_ != 0 && bytes <= kTickMax / (8 * kSec)) return bytes * Tick{ps_per_byte_};
  return serialization_time(bytes, bits_per_second_);
}

}  // namespace nicsim::fabric
