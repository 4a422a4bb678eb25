// A packet on the fabric: real bytes (what a NIC put on the wire) plus a
// small metadata block the fabric needs to route and measure it. The bytes
// are never interpreted by links or switches; NIC models and consumers read
// them. Packets come from a pool and keep their buffer capacity when
// recycled, so the steady state allocates nothing per packet.
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

#include "core/units.h"

namespace nicsim::fabric {

class Port;

inline constexpr std::uint16_t kMulticastLidBase = 0xC000;
inline constexpr std::uint16_t kPermissiveLid = 0xFFFF;
inline constexpr std::uint32_t kCreditBlock = 64;  // bytes per flow-control credit
// Links a packet's route is recorded for (Packet::route): up and down an
// 8-level tree.
inline constexpr int kRouteSlots = 16;
inline constexpr std::uint32_t kRouteInexact = ~0u;

// Who made a packet (PacketMeta::kind); NIC models and switches dispatch on
// it. The core's own is the raw traffic generator's; each network layer
// defines and registers its kinds (world/network_kinds.h).
inline constexpr std::uint8_t kPacketRaw = 0;

struct PacketMeta {
  std::uint64_t id = 0;  // unique per simulation, in creation order
  std::uint32_t src_node = 0;
  std::uint16_t slid = 0;          // fabric source address
  std::uint16_t dlid = 0;          // fabric destination; >= kMulticastLidBase is a multicast group
  std::uint16_t dlid_hi = 0;       // broadcast to an address range [dlid, dlid_hi]; 0 = unicast
  std::uint8_t vl = 0;             // virtual lane
  std::uint8_t kind = kPacketRaw;  // a registered packet kind
  std::uint16_t hops = 0;          // links crossed so far
  bool keep_route = false;         // record the route (Packet::route) for a reply carried back
  bool combine_replies = false;    // a device that copies it combines its copies' replies into one
  std::uint32_t bit_errors = 0;    // injected on the way (for statistics; NICs detect by CRC)
  Tick created = 0;                // made by the source
  Tick injected = 0;               // first bit on the first wire
};

// Laid out by use: a hop reads and writes the first two cache lines only
// (the wire image's bounds and the forwarding state, then the metadata).
struct alignas(64) Packet {
  std::vector<std::uint8_t> bytes;  // the wire image; its size is the wire length

  // Forwarding state, owned by the fabric.
  Packet* next = nullptr;    // intrusive queue link
  Port* holder = nullptr;    // input buffer the packet occupies, if any
  Tick ready_at = 0;         // earliest first bit out of the current holder
  Tick tail_at = 0;          // when the tail reaches the current holder
  Packet* parent = nullptr;  // multicast copy: the original holding the buffer

  PacketMeta meta;
  std::uint8_t held_vl = 0;           // VL of the input buffer the packet occupies
  std::uint32_t wire_generation = 0;  // link generation when put on the wire
  std::uint32_t copies_left = 0;      // multicast original: copies not yet sent
  std::uint32_t device_refs = 0;      // owner-defined: e.g. DMA transfers still reading the bytes
  Tick release_at = 0;                // multicast original: latest copy tail-out so far

  // The route, for a reply carried back along it (Port::carry_back), when
  // meta.keep_route. route[i]: the port that put the packet on its i-th
  // link (not cleared between uses: the first meta.hops entries are this
  // packet's; a carried reply holds its packet's). route_latency: the links' propagation delays
  // and the carrying switches' latencies so far; route_ps_per_byte: the
  // slowest link's serialisation (kRouteInexact when a link's is not a
  // whole number of picoseconds per byte); route_carriers: switches passed
  // that carry replies. route_link_downs: for a reply, the fabric's count of
  // link failures when it was sent.
  Tick route_latency = 0;
  std::uint32_t route_ps_per_byte = 0;
  std::uint32_t route_carriers = 0;
  std::uint64_t route_link_downs = 0;
  // An entry of a port this process built no object for is a mark
  // (route_mark), not an address.
  Port* route[kRouteSlots];

  // A carried reply crossing a cut link continues in the far block as an
  // event (Port::carried_thunk): the packet it answers, the route index of
  // the link it crossed, its serialisation so far, when its head entered
  // that link; and the lowest route index of a cut it crossed (-1: none),
  // below which the source's block checks the route (route_intact).
  std::uint64_t carry_for = 0;
  Tick carry_ser = 0;
  Tick carry_entered = 0;
  std::int32_t carry_hop = 0;
  std::int32_t carry_last_cut = -1;

  std::uint32_t blocks() const { return static_cast<std::uint32_t>((bytes.size() + kCreditBlock - 1) / kCreditBlock); }
};

// A route entry for a port this process has no object for (a run over
// several processes builds only the ports of the links that reach its own
// devices; docs/partition.md): the port's identity, in a word whose low
// bit no Port's address has (Ports are 64-byte aligned). A reply's walk
// back never reaches such an entry here: the link it names has no end in
// this process, so the walk crossed to another first. The entry is only
// carried on to the process that has the port.
static_assert(sizeof(std::uintptr_t) == 8, "a route mark holds a device id and a port number in one pointer");
inline Port* route_mark(std::uint32_t device, std::uint32_t port) {
  return reinterpret_cast<Port*>((std::uintptr_t{device} << 32 | port) << 1 | 1);
}
inline bool is_route_mark(const Port* entry) { return (reinterpret_cast<std::uintptr_t>(entry) & 1) != 0; }
inline std::uint32_t route_mark_device(const Port* entry) {
  return static_cast<std::uint32_t>(reinterpret_cast<std::uintptr_t>(entry) >> 33);
}
inline std::uint32_t route_mark_port(const Port* entry) {
  return static_cast<std::uint32_t>(reinterpret_cast<std::uintptr_t>(entry) >> 1);
}

// How the replies of one packet kind combine when a device that copied
// their packet joins them (Device::combine_reply; network conditionals):
// `into` becomes the combination of itself and `other`. A network layer
// registers one for its reply kind; a kind with none is never combined.
using ReplyCombiner = void (*)(Packet& into, const Packet& other);
void register_reply_combiner(std::uint8_t reply_kind, ReplyCombiner combine);
ReplyCombiner reply_combiner(std::uint8_t reply_kind);

class PacketPool {
 public:
  PacketPool() = default;
  PacketPool(const PacketPool&) = delete;
  ~PacketPool();
  // A packet with `len` zero-filled-or-stale bytes (callers write them all)
  // and fresh metadata with a new id.
  Packet* get(std::size_t len);
  Packet* clone(const Packet& p);  // same bytes and metadata (same id)
  // A packet with `len` bytes and fresh metadata but no id: one that came
  // from another process, whose metadata the caller restores.
  Packet* adopt(std::size_t len) { return take(len); }
  void put(Packet* p);
  std::uint64_t live() const { return live_; }
  // With several partition blocks each block numbers its packets itself
  // (block << 40 | its count), so that ids do not depend on which blocks
  // share a process.
  void set_blocks(std::uint32_t blocks) { block_ids_.assign(blocks > 1 ? blocks + 1 : 0, 0); }
  std::uint64_t allocated() const { return allocated_; }

 private:
  // Every packet the pool made: those in flight, held by a device or named
  // by a pending event when the fabric goes are freed with the rest.
  std::vector<std::unique_ptr<Packet>> made_;
  std::vector<Packet*> free_;
  Packet* take(std::size_t len);  // a fresh packet without an id
  std::uint64_t new_id() { return block_ids_.empty() ? next_id_++ : new_block_id(); }
  std::uint64_t new_block_id();
  std::uint64_t next_id_ = 1;
  std::vector<std::uint64_t> block_ids_;  // by block, with several
  std::uint64_t live_ = 0;
  std::uint64_t allocated_ = 0;
};

}  // namespace nicsim::fabric
