// The Elan3's hardware/software interface: the contract between the Elan3
// device driver (elan_model/driver/) and the Elan3 model (elan_model/), and
// the format of Elan packets on the wire between two Elans. Nothing else
// crosses: the driver writes the command port by MMIO and leaves page
// tables, DMA descriptors, events and input queues in host memory; the Elan
// DMA-reads and DMA-writes them through its MMU and raises its interrupt.
//
// What follows the public record (Quadrics Elan3 / QsNet, 2001-2003):
// 32-bit Elan virtual addresses (E3_Addr), 8 KiB pages, 64-byte blocks
// (E3_BLK_SIZE), the 32-byte E3_DMA descriptor and its field names, the
// E3_DmaType sub-fields (data type, direction, opcode, fail count, remote),
// events that fire when their count reaches zero (block copy, chained DMA,
// interrupt with a cookie), input queues (q_state, q_bptr, q_fptr, q_size,
// q_base, q_top, q_event), and end-to-end acknowledgement tokens
// (ok / test-fail / discard / error). Bit positions, register offsets,
// packet layout and everything marked "(choice)" are this model's own: the
// public record does not give them. Every field is little-endian.
//
// Differences from the real Elan3 that matter to readers:
// - The real Elan3 keeps descriptors, events, queues and page tables in the
//   card's SDRAM; here they live in host memory, so every access the Elan
//   makes to them is a DMA over the host bus (and costs what that costs).
// - One kernel context only: a descriptor's "virtual process" is simply the
//   destination Elan node id (kernel comms addresses nodes, not processes).
// - A flat single-level page table (choice); a TLB miss costs one 8-byte
//   DMA read of the PTE.
#pragma once
#include <cstdint>
#include <cstring>

#include "core/fields.h"

namespace nicsim::elan3 {

using E3Addr = std::uint32_t;  // E3_Addr: an Elan virtual address

inline constexpr std::uint32_t kPageShift = 13;  // Elan3 pages are 8 KiB
inline constexpr std::uint32_t kPageSize = 1u << kPageShift;
inline constexpr std::uint32_t kBlockSize = 64;  // E3_BLK_SIZE: the DMA engine's unit

using nicsim::Field;
using nicsim::get;
using nicsim::put;

#define NICSIM_ELAN3_FIELD(name, offset, width) inline constexpr Field name{offset, width, #name};

// ---------------------------------------------------------------------------
// Command port: one 4 KiB MMIO window per Elan on its node's host bus.
// Reads of write-only registers and writes of read-only ones are errors
// (TLM address error response, and a SimError naming the register).
// ---------------------------------------------------------------------------
inline constexpr std::uint64_t kCommandPortSize = 0x1000;

namespace reg {
// X(name, offset, width, access, doc). access: R read-only, W write-only, RW.
#define NICSIM_ELAN3_REGS(X)                                                                                 \
  X(id_vendor, 0x000, 4, R, "PCI vendor id of Quadrics, 0x14fc")                                             \
  X(id_device, 0x004, 4, R, "device id: 0x0000 = Elan3 (choice: the public record lists Elan3 as device 0)") \
  X(id_revision, 0x008, 4, R, "chip revision (choice: 1)")                                                   \
  X(node_id, 0x00c, 4, R, "this Elan's network position (node id), set when the network was probed")         \
  X(machine_size, 0x048, 4, R, "node ids in the network (they are 0..machine_size-1), set with node_id")     \
  X(link_state, 0x010, 4, R, "bit 0: the link is up")                                                        \
  X(dma_fetched, 0x014, 4, R,                                                                                \
    "descriptors taken from run_dma since reset (mod 2^32): the driver reuses "                              \
    "descriptor memory once the Elan has fetched it")                                                        \
  X(max_payload, 0x01c, 4, R, "data bytes per network packet (the largest queued DMA)")                      \
  X(control, 0x018, 4, RW,                                                                                   \
    "bit 0: enable the network interface (packets arriving while disabled get "                              \
    "the discard token)")                                                                                    \
  X(pt_base, 0x020, 8, RW,                                                                                   \
    "host address of the page table (8-byte PTEs, one per Elan page); writing it "                           \
    "flushes the whole TLB")                                                                                 \
  X(pt_entries, 0x028, 4, RW, "PTEs in the table; an address beyond it is a translation fault")              \
  X(tlb_flush, 0x02c, 4, W, "E3_Addr whose page's TLB entry is dropped; 0xffffffff drops all")               \
  X(intq_base, 0x030, 8, RW,                                                                                 \
    "address of the interrupt queue (16-byte entries, see intq::), followed by the "                         \
    "DMA trap area (one 32-byte E3_DMA per entry): kCardAddr | SDRAM offset, or a host address")             \
  X(intq_entries, 0x038, 4, RW, "entries in the interrupt queue (writing it resets producer and consumer)")  \
  X(intq_consumer, 0x03c, 4, RW,                                                                             \
    "entries the driver has consumed (mod 2^32); writing it re-arms the "                                    \
    "interrupt line if entries remain unread")                                                               \
  X(irq_vector, 0x044, 4, RW,                                                                                \
    "host interrupt vector the Elan raises (the node's interrupt controller "                                \
    "line the driver attached); -1 = none")                                                                  \
  X(int_status, 0x040, 4, R,                                                                                 \
    "bit 0: interrupt queue overflowed (entries lost); bit 1: a cause arrived "                              \
    "before the queue was installed; both cleared by reading")                                               \
  X(sdram_bytes, 0x04c, 4, R, "bytes of SDRAM on the card (nic.elan3.sdram_size); BAR 1 maps all of it")     \
  X(mirror_host, 0x050, 8, RW,                                                                               \
    "host address of the mirror of the SDRAM window [mirror_base, mirror_base + mirror_bytes): "             \
    "every write the Elan makes into the window is also posted to the same offset here")                     \
  X(mirror_base, 0x058, 4, RW, "SDRAM offset of the mirrored window (a multiple of 8 KiB)")                  \
  X(mirror_bytes, 0x05c, 4, RW, "bytes of the mirrored window (0: none)")                                    \
  X(run_dma, 0x100, 4, W,                                                                                    \
    "E3_Addr of an E3_DMA descriptor: the Elan fetches it and queues it at the tail "                        \
    "of its DMA run queue")                                                                                  \
  X(set_event, 0x108, 4, W, "E3_Addr of an E3_Event: the event engine sets (decrements) it")                 \
  X(prime_event, 0x110, 8, W,                                                                                \
    "low word: E3_Addr of an E3_Event, high word: a count. The event engine "                                \
    "writes ev_Count in order with the sets queued before it, so a set in flight "                           \
    "cannot overwrite a count software just primed")                                                         \
  X(event_irq, 0x118, 8, W,                                                                                  \
    "low word: E3_Addr of an E3_Event, high word: bit 31 interrupt on (1) or off "                           \
    "(0), bits 23..0 the cookie. The event engine sets the event's interrupt flag and "                      \
    "cookie (count and action stay), in order with the sets queued before it; if the "                       \
    "event has already fired and the interrupt is now on, it interrupts at once")
enum class Access : std::uint8_t { R, W, RW };
#define NICSIM_X(name, offset, width, access, doc) inline constexpr Field name{offset, width, #name};
NICSIM_ELAN3_REGS(NICSIM_X)
#undef NICSIM_X
inline constexpr std::uint32_t kVendorQuadrics = 0x14fc;
inline constexpr std::uint32_t kDeviceElan3 = 0x0000;
inline constexpr std::uint32_t kRevision = 1;
// PCI class code: network controller, other (choice: the public record
// does not give the Elan3's).
inline constexpr std::uint32_t kClassNetworkOther = 0x028000;
inline constexpr std::uint32_t kControlEnable = 1u << 0;
inline constexpr std::uint32_t kStatusIntqOverflow = 1u << 0;
inline constexpr std::uint32_t kStatusUnconfigured = 1u << 1;  // a cause came before the queue was installed
inline constexpr E3Addr kFlushAll = 0xffffffffu;
inline constexpr std::uint32_t kEventIrqOn = 1u << 31;  // event_irq high word
}  // namespace reg

// ---------------------------------------------------------------------------
// Elan SDRAM. The card's own memory (nic.elan3.sdram_size), mapped whole on
// the host bus as BAR 1: host stores are posted PIO writes, host loads are
// PIO reads that cross the bus and back. Inside the Elan a "card address"
// is an SDRAM offset with kCardAddr set: PTEs, intq_base and the engines'
// addresses carry it, and the Elan reaches it at its own latency and
// bandwidth (sdram_cycles, sdram_bandwidth) instead of over the host bus.
// Host memory addresses never have bit 62 set.
// The mirrored window (mirror_*): the driver keeps the structures the CPU
// reads often (event counts, queue pointers and slots, the interrupt
// queue) in SDRAM inside this window; every Elan write there also goes to
// host memory over the bus (posted, as the Elan's writes to the host
// always are), so the CPU reads a cached copy instead of a slow PIO read,
// and writes with PIO (and its own copy).
// (choice: stands for the main-memory copies the Quadrics libraries kept
// of what they polled -- done words written by block-copy events.)
// ---------------------------------------------------------------------------
inline constexpr std::uint64_t kCardAddr = 1ull << 62;
inline constexpr bool is_card(std::uint64_t a) { return (a & kCardAddr) != 0; }
inline constexpr std::uint64_t card_offset(std::uint64_t a) { return a & ~kCardAddr; }

// ---------------------------------------------------------------------------
// Page table entry (8 bytes, little-endian u64), one per Elan page, at
// pt_base + (E3_Addr >> 13) * 8. Entry 0 (E3_Addr page 0) is never valid:
// E3_Addr 0 means "no address" in descriptors and events.
//   bit 0        valid
//   bits 1..5    permissions (perm:: bits)
//   bits 6..63   host address where the Elan page's 8 KiB start (64-byte
//                aligned; the 8 KiB are contiguous host memory), or
//                kCardAddr | the SDRAM offset of the page (8 KiB aligned)
// (choice: the real Elan3 PTE is a 32-bit word in SDRAM naming a physical
// page, with a permission level. Here an Elan page may start anywhere in
// node memory on a 64-byte boundary, so the Elan address of a buffer sits
// at the same offset within its page as the buffer within its 64-byte
// block: where page boundaries fall in a buffer, and so the timing, does
// not depend on where the host allocator placed it. The PTE_LOAD_*
// attributes are kept by the driver only: this model is little-endian
// throughout and streaming has no timing effect.)
// ---------------------------------------------------------------------------
namespace pte {
inline constexpr std::uint64_t kValid = 1ull << 0;
inline constexpr std::uint32_t kPermShift = 1;
inline constexpr std::uint64_t kAddrMask = ~static_cast<std::uint64_t>(63);
}  // namespace pte
namespace perm {
// Which Elan accesses a page allows. Local: by this Elan's own DMA engine
// and event engine for work issued on this node. Remote: on behalf of a
// packet from another node.
#define NICSIM_ELAN3_PERMS(X)                                                           \
  X(LocalRead, 0, "DMA source, descriptor and event reads for local work")              \
  X(LocalWrite, 1, "event updates, block-copy and done-word targets, read-DMA landing") \
  X(RemoteRead, 2, "source of a DMA a remote node asked for (read request)")            \
  X(RemoteWrite, 3, "target of remote writes and queued writes (queue and slots)")      \
  X(RemoteEvent, 4, "event a remote node may set")
#define NICSIM_X(name, bit, doc) inline constexpr std::uint32_t k##name = 1u << bit;
NICSIM_ELAN3_PERMS(NICSIM_X)
#undef NICSIM_X
inline constexpr std::uint32_t kAll = 0x1f;
const char* names(std::uint32_t bits);  // "LocalRead|RemoteWrite"
}  // namespace perm
namespace attr {
inline constexpr std::uint32_t kLittleEndian = 1u << 0;  // PTE_LOAD_LITTLE_ENDIAN
inline constexpr std::uint32_t kBigEndian = 1u << 1;     // PTE_LOAD_BIG_ENDIAN
inline constexpr std::uint32_t kStreamable = 1u << 2;    // PTE_LOAD_STREAMABLE
}  // namespace attr
inline constexpr std::uint64_t make_pte(std::uint64_t host, std::uint32_t perms) {
  return (host & pte::kAddrMask) | (static_cast<std::uint64_t>(perms & perm::kAll) << pte::kPermShift) | pte::kValid;
}

// ---------------------------------------------------------------------------
// E3_DMA: the 32-byte DMA descriptor (field names as the public record).
// The descriptor lives at an E3_Addr with LocalRead permission, 8-byte
// aligned; run_dma fetches it. A cookie/vproc word is
// (cookie << 16) | vproc, where vproc is the destination node id (choice).
// For a broadcast opcode, dma_destCookieVProc is (last_node << 16) |
// first_node instead (no destination cookie).
// ---------------------------------------------------------------------------
namespace dma {
#define NICSIM_ELAN3_DMA(F)       \
  F(dma_type, 0x00, 4)            \
  F(dma_size, 0x04, 4)            \
  F(dma_source, 0x08, 4)          \
  F(dma_dest, 0x0c, 4)            \
  F(dma_destEvent, 0x10, 4)       \
  F(dma_destCookieVProc, 0x14, 4) \
  F(dma_srcEvent, 0x18, 4)        \
  F(dma_srcCookieVProc, 0x1c, 4)
NICSIM_ELAN3_DMA(NICSIM_ELAN3_FIELD)
inline constexpr std::uint32_t kSize = 0x20;

// E3_DmaType sub-fields (bit positions are a choice, the widths follow the
// public record): dataType bits 0-1, direction 2-4, opCode 5-8,
// failCount 9-14, isRemote 15; priority 29 is this model's (the public
// record leaves bits 29-31 unused). failCount, written by software, is how many
// test-fail refusals the DMA engine absorbs itself: each refusal with
// failCount > 0 decrements it and puts the DMA at the tail of the run queue
// (re-run after testfail_backoff, later DMAs go first); a refusal at
// failCount 0 traps the DMA to the driver (intq DmaTrap, descriptor in the
// trap area) and the engine goes on with the next one. A priority DMA
// joins the run queue behind the other priority DMAs, ahead of every
// other one (the DMA running finishes first): the driver sets it for the
// kernel's liveness messages, which must not wait behind bulk data
// (docs/ep.md "Node membership").
#define NICSIM_ELAN3_DATA_TYPES(X) X(Byte, 0) X(HalfWord, 1) X(Word, 2) X(DoubleWord, 3)
#define NICSIM_ELAN3_DIRECTIONS(X)                                                             \
  X(Write, 0, "send local dma_source to dma_dest on the destination node")                     \
  X(Read, 1, "ask the destination node to send its dma_source to our dma_dest (read request)") \
  X(ReadRequeue, 2, "a read request the Elan re-queued after a test-fail (set by hardware)")
#define NICSIM_ELAN3_OPCODES(X)                                                                \
  X(Normal, 0, "remote write (or remote set-event when dma_size is 0)")                        \
  X(Queued, 1, "write one message into the input queue (E3_Queue) at dma_dest")                \
  X(NormalBroadcast, 2, "remote write to every node of a range")                               \
  X(QueuedBroadcast, 3, "queued write to every node of a range")                               \
  X(ConditionalBroadcast, 4,                                                                   \
    "network conditional: test a word on every node of a range (dma_source: a 16-byte test); " \
    "srcEvent is set when it held on every node, destEvent (an event of this node) when it did not")
enum class DataType : std::uint8_t {
#define NICSIM_X(name, v) name = v,
  NICSIM_ELAN3_DATA_TYPES(NICSIM_X)
#undef NICSIM_X
};
enum class Direction : std::uint8_t {
#define NICSIM_X(name, v, doc) name = v,
  NICSIM_ELAN3_DIRECTIONS(NICSIM_X)
#undef NICSIM_X
};
enum class OpCode : std::uint8_t {
#define NICSIM_X(name, v, doc) name = v,
  NICSIM_ELAN3_OPCODES(NICSIM_X)
#undef NICSIM_X
};
inline constexpr bool is_broadcast(OpCode op) {
  return op == OpCode::NormalBroadcast || op == OpCode::QueuedBroadcast || op == OpCode::ConditionalBroadcast;
}
// The test a ConditionalBroadcast carries (its dma_source, dma_size 16):
// every node of the range compares the 64-bit little-endian word at
// dma_dest (RemoteRead there) with `value` under `condition` (choice: the
// layout; the public record names the Elan3's test transactions GTE, LT,
// EQ and NEQ). Nothing is written anywhere: the answer is the token.
#define NICSIM_ELAN3_TEST(F) \
  F(test_value, 0x00, 8)     \
  F(test_condition, 0x08, 4) \
  F(test_pad, 0x0c, 4)
NICSIM_ELAN3_TEST(NICSIM_ELAN3_FIELD)
inline constexpr std::uint32_t kTestSize = 0x10;
#define NICSIM_ELAN3_CONDITIONS(X)                              \
  X(GreaterOrEqual, 0, "word >= value (unsigned): the barrier") \
  X(Less, 1, "word < value (unsigned)")                         \
  X(Equal, 2, "word == value")                                  \
  X(NotEqual, 3, "word != value")
enum class Condition : std::uint8_t {
#define NICSIM_X(name, v, doc) name = v,
  NICSIM_ELAN3_CONDITIONS(NICSIM_X)
#undef NICSIM_X
};
inline constexpr std::uint32_t kConditions = 4;
inline constexpr bool test_holds(std::uint64_t word, std::uint64_t value, Condition c) {
  switch (c) {
    case Condition::GreaterOrEqual:
      return word >= value;
    case Condition::Less:
      return word < value;
    case Condition::Equal:
      return word == value;
    case Condition::NotEqual:
      return word != value;
  }
  return false;
}
const char* direction_name(std::uint32_t v);  // "?" when unknown
const char* opcode_name(std::uint32_t v);

struct Type {
  std::uint32_t data_type = 0, direction = 0, opcode = 0, fail_count = 0, is_remote = 0, priority = 0;
  static Type decode(std::uint32_t w) {
    return {w & 3u, (w >> 2) & 7u, (w >> 5) & 15u, (w >> 9) & 63u, (w >> 15) & 1u, (w >> 29) & 1u};
  }
  std::uint32_t encode() const {
    return (data_type & 3u) | ((direction & 7u) << 2) | ((opcode & 15u) << 5) | ((fail_count & 63u) << 9) |
           ((is_remote & 1u) << 15) | ((priority & 1u) << 29);
  }
};
inline constexpr std::uint32_t cookie_vproc(std::uint32_t cookie, std::uint32_t vproc) {
  return (cookie << 16) | (vproc & 0xffffu);
}
inline constexpr std::uint32_t vproc_of(std::uint32_t w) { return w & 0xffffu; }
inline constexpr std::uint32_t cookie_of(std::uint32_t w) { return w >> 16; }
// Largest dma_size: 2^31 - 1 bytes (choice; E3_Addr space is 4 GiB).
inline constexpr std::uint32_t kMaxSize = 0x7fffffffu;
}  // namespace dma

// ---------------------------------------------------------------------------
// E3_Event (16 bytes, 8-byte aligned). Setting an event decrements ev_Count
// (a read-modify-write by the event engine, serialised in the Elan); when
// the result is exactly 0 the event fires and performs its action. Software
// re-arms an event by writing a new count. A count that goes below zero
// does nothing more (an extra set is harmless and visible).
//   ev_Type bits 31..28: action (EventType)
//   ev_Type bit 27:      also interrupt when fired (kEvIrq), with the
//                        24-bit cookie in ev_Type bits 23..0
// (choice: the real E3_Event is 8 bytes with the block-copy addresses in a
// following E3_BlockCopyEvent; here every event has both address words.)
// ---------------------------------------------------------------------------
namespace event {
#define NICSIM_ELAN3_EVENT(F) \
  F(ev_Count, 0x00, 4)        \
  F(ev_Type, 0x04, 4)         \
  F(ev_Source, 0x08, 4)       \
  F(ev_Dest, 0x0c, 4)
NICSIM_ELAN3_EVENT(NICSIM_ELAN3_FIELD)
inline constexpr std::uint32_t kSize = 0x10;
#define NICSIM_ELAN3_EVENT_TYPES(X)                                                              \
  X(None, 0, "count only (pollable)")                                                            \
  X(BlockCopy, 1, "copy the 64-byte block at ev_Source to ev_Dest (both local E3_Addr)")         \
  X(DoneWord, 2, "write the 32-bit value ev_Source to the word at E3_Addr ev_Dest")              \
  X(Dma, 3, "chain to a DMA: queue the E3_DMA descriptor at ev_Source on this Elan's run queue") \
  X(Chain, 4, "set (decrement) the event at ev_Source")
enum class Type : std::uint8_t {
#define NICSIM_X(name, v, doc) name = v,
  NICSIM_ELAN3_EVENT_TYPES(NICSIM_X)
#undef NICSIM_X
};
const char* type_name(std::uint32_t v);
inline constexpr std::uint32_t kTypeShift = 28;
inline constexpr std::uint32_t kEvIrq = 1u << 27;
inline constexpr std::uint32_t kCookieMask = 0x00ffffffu;
inline constexpr std::uint32_t make_type(Type t, bool irq = false, std::uint32_t cookie = 0) {
  return (static_cast<std::uint32_t>(t) << kTypeShift) | (irq ? kEvIrq : 0u) | (cookie & kCookieMask);
}
}  // namespace event

// ---------------------------------------------------------------------------
// E3_Queue: an input queue descriptor (32 bytes, at an E3_Addr with
// RemoteWrite permission; the slots too). Slots are q_size bytes each, from
// q_base to q_top inclusive (q_top is the address of the last slot). The
// queue is empty when q_fptr == q_bptr and full when the slot after q_bptr
// is q_fptr, so it holds (slots - 1) messages. For each arriving queued
// message the Elan reads the descriptor, and if there is room writes the
// message into the slot at q_bptr, advances q_bptr (a 4-byte write after
// the message, so software that sees the new q_bptr sees the message), and
// sets q_event. If the queue is full or locked it writes nothing and
// answers test-fail: the sender's engine retries the DMA later (failCount
// times, behind the DMAs queued after it), then traps it to its driver.
// Software consumes at q_fptr and advances q_fptr itself.
// ---------------------------------------------------------------------------
namespace queue {
#define NICSIM_ELAN3_QUEUE(F) \
  F(q_state, 0x00, 4)         \
  F(q_bptr, 0x04, 4)          \
  F(q_fptr, 0x08, 4)          \
  F(q_size, 0x0c, 4)          \
  F(q_base, 0x10, 4)          \
  F(q_top, 0x14, 4)           \
  F(q_event, 0x18, 4)
NICSIM_ELAN3_QUEUE(NICSIM_ELAN3_FIELD)
inline constexpr std::uint32_t kSize = 0x20;
inline constexpr std::uint32_t kStateFull = 1u << 0;    // set by the Elan when it refused a message
inline constexpr std::uint32_t kStateLocked = 1u << 1;  // set by software: refuse (test-fail) all arrivals
inline constexpr E3Addr next_slot(E3Addr p, E3Addr base, E3Addr top, std::uint32_t size) {
  return p == top ? base : p + size;
}
}  // namespace queue

// ---------------------------------------------------------------------------
// Interrupt queue: a ring of 16-byte entries at intq_base (the driver puts it
// in the mirrored SDRAM window), intq_entries long. The Elan writes entry (producer % entries) with
// seq = producer + 1 (never 0), then raises its interrupt line if armed.
// The driver consumes entries whose seq matches its own count + 1 and
// writes intq_consumer, which re-arms the line. If the ring is full the
// entry is lost and int_status reports the overflow. The DMA trap area
// follows the ring (intq_base + 16 x intq_entries): one 32-byte E3_DMA per
// entry, written before a DmaTrap entry at the same index (so it is never
// overwritten before the driver consumed that entry); a DMA that would
// trap while the ring is full stays on the run queue.
// ---------------------------------------------------------------------------
namespace intq {
#define NICSIM_ELAN3_INTQ(F) \
  F(seq, 0x00, 4)            \
  F(cause, 0x04, 1)          \
  F(detail, 0x05, 1)         \
  F(node, 0x06, 2)           \
  F(cookie, 0x08, 4)         \
  F(data, 0x0c, 4)
NICSIM_ELAN3_INTQ(NICSIM_ELAN3_FIELD)
inline constexpr std::uint32_t kSize = 0x10;
#define NICSIM_ELAN3_CAUSES(X)                                                                      \
  X(Event, 1, "an event with kEvIrq fired: cookie = its 24-bit cookie, data = the event's E3_Addr") \
  X(NetworkError, 2,                                                                                \
    "a DMA failed on the network after its retries: detail = the last Token (or 0xff "              \
    "for an ack timeout), node = destination, cookie = the source cookie, data = the "              \
    "descriptor's E3_Addr (0 for a read-request descriptor that came from the network)")            \
  X(DmaError, 3,                                                                                    \
    "a local fault on a DMA or event: detail = Fault, cookie = the source cookie, data = the "      \
    "E3_Addr that faulted")                                                                         \
  X(LinkState, 4, "the link changed state: detail = 1 up / 0 down")                                 \
  X(CommandError, 5, "a command port access the Elan refused: data = register offset")              \
  X(DmaTrap, 6,                                                                                     \
    "a DMA refused with test-fail at failCount 0 was taken off the run queue: detail = the "        \
    "Token, node = destination, cookie = the source cookie, data = the descriptor's E3_Addr; "      \
    "the descriptor as it stands (what is left to send, failCount 0) is in the trap area at "       \
    "intq_base + 16 x intq_entries + 32 x this entry's index, for the driver to run again")
enum class Cause : std::uint8_t {
#define NICSIM_X(name, v, doc) name = v,
  NICSIM_ELAN3_CAUSES(NICSIM_X)
#undef NICSIM_X
};
const char* cause_name(std::uint32_t v);
inline constexpr std::uint8_t kDetailTimeout = 0xff;
}  // namespace intq

// Local faults (intq detail for DmaError).
#define NICSIM_ELAN3_FAULTS(X)                                            \
  X(None, 0, "no fault")                                                  \
  X(Translation, 1, "E3_Addr beyond the page table or its PTE not valid") \
  X(Permission, 2, "the PTE does not allow the access")                   \
  X(BusError, 3, "the host bus refused the DMA (master abort)")           \
  X(BadDescriptor, 4, "an E3_DMA field is out of range")                  \
  X(BadEvent, 5, "an E3_Event type is unknown")                           \
  X(TooBig, 6, "a queued DMA larger than one packet or the queue's slots")
enum class Fault : std::uint8_t {
#define NICSIM_X(name, v, doc) name = v,
  NICSIM_ELAN3_FAULTS(NICSIM_X)
#undef NICSIM_X
};
const char* fault_name(std::uint32_t v);

// ---------------------------------------------------------------------------
// Network packets (fabric::Packet::bytes; meta.kind kPacketElan). Header,
// payload, CRC-32C (Castagnoli polynomial 0x1edc6f41, reflected, init and
// final xor 0xffffffff; check value 0xe3069283) over header and payload
// (choice: the real Elan3 uses its own link-level CRC and parity). meta.slid/dlid/dlid_hi mirror the route word
// for the fabric; the bytes are what the receiving Elan trusts.
// Every packet is answered by one ack token (meta.kind kPacketElanAck).
// A DMA becomes packets of at most `max_payload` bytes (parameter, default
// 320 = 5 blocks: QsNet's DMA packets carry up to 320 bytes of data); the
// payload of each packet but the last is a whole number of 64-byte blocks.
// Packets of one stream (source -> destination; broadcasts from one source
// are a stream of their own) carry consecutive 16-bit sequence numbers. The
// receiver executes a packet only if it is the next it expects; a packet it
// already executed (an earlier number, in 16-bit serial arithmetic) is
// answered Ok again without executing it; anything later is answered
// Discard carrying the number the receiver expects (go-back-N). Only an
// executed packet advances the expected number, so after TestFail or Error
// the sender numbers its next packet to that node with the refused number.
// A packet whose CRC fails is dropped unanswered (nothing in it can be
// trusted), as is an ack token whose CRC fails: the sender's ack timer
// (ack_timeout) resends. A packet with kFlagSync sets the receiver's
// expected number to its own: the sender marks the first packet to a node,
// and the first after a network error to that node (whose fate it cannot
// know), so such a packet may execute twice if its token is lost - the
// "possibly delivered more than once under faults" of the manual.
// ---------------------------------------------------------------------------
namespace pkt {
#define NICSIM_ELAN3_PKT_HEADER(F) \
  F(route_first, 0x00, 2)          \
  F(route_last, 0x02, 2)           \
  F(trans, 0x04, 1)                \
  F(flags, 0x05, 1)                \
  F(seq, 0x06, 2)                  \
  F(src_node, 0x08, 2)             \
  F(length, 0x0a, 2)               \
  F(addr, 0x0c, 4)                 \
  F(event, 0x10, 4)                \
  F(cookie, 0x14, 4)
NICSIM_ELAN3_PKT_HEADER(NICSIM_ELAN3_FIELD)
inline constexpr std::uint32_t kHeaderSize = 0x18;
inline constexpr std::uint32_t kCrcSize = 4;
// route_last == 0: unicast to route_first; else broadcast to the node range
// [route_first, route_last].
// Transactions (trans). `addr`, `event`, payload per transaction:
#define NICSIM_ELAN3_TRANS(X)                                                                              \
  X(WriteBlock, 1, "write payload at E3_Addr addr (RemoteWrite); on the last packet set event (if not 0)") \
  X(QueuedWrite, 2, "put payload (one whole message) into the E3_Queue at addr; event as WriteBlock")      \
  X(ReadRequest, 3,                                                                                        \
    "payload: a 32-byte E3_DMA the receiver runs as a write back to src_node; its "                        \
    "dma_source range needs RemoteRead, checked before the token is sent")                                 \
  X(SetEvent, 4, "set the event at addr (RemoteEvent); no payload")                                        \
  X(TestWord, 5,                                                                                           \
    "payload: a dma:: test; compare the word at addr (RemoteRead) with it: Ok when it holds, TestFail "    \
    "when not (the test counts as executed either way, and a repeat is tested again); writes nothing")
enum class Trans : std::uint8_t {
#define NICSIM_X(name, v, doc) name = v,
  NICSIM_ELAN3_TRANS(NICSIM_X)
#undef NICSIM_X
};
const char* trans_name(std::uint32_t v);
inline constexpr std::uint8_t kFlagLast = 1u << 0;   // last packet of its DMA: set `event` after it
inline constexpr std::uint8_t kFlagFirst = 1u << 1;  // first packet of its DMA
inline constexpr std::uint8_t kFlagRetry = 1u << 2;  // a retransmission (trace only)
inline constexpr std::uint8_t kFlagSync = 1u << 3;   // the receiver takes seq as the expected number

// Ack token packet (meta.kind kPacketElanAck), routed to the packet's source.
#define NICSIM_ELAN3_ACK(F) \
  F(ack_route, 0x00, 2)     \
  F(ack_token, 0x02, 1)     \
  F(ack_vc, 0x03, 1)        \
  F(ack_seq, 0x04, 2)       \
  F(ack_src_node, 0x06, 2)  \
  F(ack_expect, 0x08, 2)    \
  F(ack_count, 0x0a, 2)
NICSIM_ELAN3_ACK(NICSIM_ELAN3_FIELD)
// ack_seq: the number of the packet answered; ack_expect: the number the
// receiver expects next from this source after handling it. ack_count: the
// nodes the token answers for, from ack_src_node on: 1 from a receiver; an
// Elite switch that copied a broadcast joins its copies' tokens into one
// (network conditionals: the worst token, the lowest node, the counts
// added; the copies reach adjacent subtrees, so the nodes stay contiguous).
inline constexpr std::uint32_t kAckSize = 0x0c + kCrcSize;
#define NICSIM_ELAN3_TOKENS(X)                                                                             \
  X(Ok, 0, "executed (or a repeat of an executed packet); ack_seq = the packet's number")                  \
  X(TestFail, 1, "input queue full or locked: nothing written; retry later (back-pressure)")               \
  X(Discard, 2, "not executed: out of sequence or receiver disabled (the sender resends from ack_expect)") \
  X(Error, 3, "not executed: translation or permission fault at the receiver (the sender's DMA fails)")
enum class Token : std::uint8_t {
#define NICSIM_X(name, v, doc) name = v,
  NICSIM_ELAN3_TOKENS(NICSIM_X)
#undef NICSIM_X
};
const char* token_name(std::uint32_t v);
// The token that answers for two: the worse of them (the order above:
// an error ends the DMA, a discard resends, a test-fail backs off or is a
// conditional's "false").
inline constexpr Token worse(Token a, Token b) {
  return static_cast<std::uint8_t>(a) >= static_cast<std::uint8_t>(b) ? a : b;
}

std::uint32_t crc32(const std::uint8_t* data, std::size_t len);         // CRC-32C, the fastest way
std::uint32_t crc32_sliced(const std::uint8_t* data, std::size_t len);  // the same, by tables only
}  // namespace pkt

}  // namespace nicsim::elan3
