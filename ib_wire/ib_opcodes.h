// The BTH OpCode table as data (IBA vol. 1 §9.2, OpCode field, and the
// extended transport headers of §9.3): one row per opcode, from which every
// other view (the enum, names, which extended transport headers follow the
// BTH and where, what the packet carries) is generated. The upper 3 bits of
// an opcode select the transport service and the lower 5 the operation
// (§9.2); values not listed here are reserved (or manufacturer specific,
// 0xC0-0xFF) and have no descriptor.
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>

#include "ib_wire/ib_headers.h"

namespace nicsim::ib {

#define NICSIM_IB_TRANSPORTS(X) X(RC) X(UC) X(RD) X(UD)
#define NICSIM_IB_OPS(X) \
  X(Send)                \
  X(RdmaWrite)           \
  X(RdmaReadRequest) X(RdmaReadResponse) X(Acknowledge) X(AtomicAcknowledge) X(CompareSwap) X(FetchAdd) X(Resync)
#define NICSIM_IB_POSITIONS(X) X(First) X(Middle) X(Last) X(Only)
// Extended transport headers in the order they follow the BTH whenever
// several are present (IBA chapter 5 packet format; §9.3).
#define NICSIM_IB_EXTS(X) X(Rdeth) X(Deth) X(Reth) X(AtomicEth) X(Aeth) X(AtomicAckEth) X(ImmDt) X(Ieth)

#define NICSIM_IB_ENUMERATOR(name) name,
enum class Transport : std::uint8_t { NICSIM_IB_TRANSPORTS(NICSIM_IB_ENUMERATOR) };
enum class Op : std::uint8_t { NICSIM_IB_OPS(NICSIM_IB_ENUMERATOR) };
enum class Position : std::uint8_t { NICSIM_IB_POSITIONS(NICSIM_IB_ENUMERATOR) };
enum class Ext : std::uint8_t { NICSIM_IB_EXTS(NICSIM_IB_ENUMERATOR) };
#undef NICSIM_IB_ENUMERATOR

inline constexpr std::size_t kNumExt = 0
#define NICSIM_IB_PLUS_ONE(name) +1
    NICSIM_IB_EXTS(NICSIM_IB_PLUS_ONE);
#undef NICSIM_IB_PLUS_ONE

const char* transport_name(Transport t);  // "RC"
const char* op_name(Op o);                // "RdmaWrite"
const char* position_name(Position p);    // "First"
const char* ext_name(Ext e);              // "RETH" (the header's display name)

// Byte size of each extended header, indexed by Ext.
inline constexpr std::array<std::uint8_t, kNumExt> kExtSize{
#define NICSIM_IB_EXT_SIZE(name) std::uint8_t{name::kSize},
    NICSIM_IB_EXTS(NICSIM_IB_EXT_SIZE)
#undef NICSIM_IB_EXT_SIZE
};

// Sets of extended headers, for the opcode table.
using ExtMask = std::uint8_t;
namespace eh {
inline constexpr ExtMask NONE = 0;
inline constexpr ExtMask RDETH = 1u << static_cast<unsigned>(Ext::Rdeth);
inline constexpr ExtMask DETH = 1u << static_cast<unsigned>(Ext::Deth);
inline constexpr ExtMask RETH = 1u << static_cast<unsigned>(Ext::Reth);
inline constexpr ExtMask ATOMIC_ETH = 1u << static_cast<unsigned>(Ext::AtomicEth);
inline constexpr ExtMask AETH = 1u << static_cast<unsigned>(Ext::Aeth);
inline constexpr ExtMask ATOMIC_ACK_ETH = 1u << static_cast<unsigned>(Ext::AtomicAckEth);
inline constexpr ExtMask IMMDT = 1u << static_cast<unsigned>(Ext::ImmDt);
inline constexpr ExtMask IETH = 1u << static_cast<unsigned>(Ext::Ieth);
}  // namespace eh

// X(NAME, value, transport, operation, position in message, extended headers)
// "Only" also marks single-packet operations (read request, ACKs, atomics).
// Header sets are those of the IBA §9.2 OpCode table with the §9.3 header
// descriptions (which packets carry each extended header).
#define NICSIM_IB_OPCODES(X)                                                                                   \
  /* Reliable Connection, 0x00-0x1F */                                                                         \
  X(RC_SEND_FIRST, 0x00, RC, Send, First, eh::NONE)                                                            \
  X(RC_SEND_MIDDLE, 0x01, RC, Send, Middle, eh::NONE)                                                          \
  X(RC_SEND_LAST, 0x02, RC, Send, Last, eh::NONE)                                                              \
  X(RC_SEND_LAST_WITH_IMMEDIATE, 0x03, RC, Send, Last, eh::IMMDT)                                              \
  X(RC_SEND_ONLY, 0x04, RC, Send, Only, eh::NONE)                                                              \
  X(RC_SEND_ONLY_WITH_IMMEDIATE, 0x05, RC, Send, Only, eh::IMMDT)                                              \
  X(RC_RDMA_WRITE_FIRST, 0x06, RC, RdmaWrite, First, eh::RETH)                                                 \
  X(RC_RDMA_WRITE_MIDDLE, 0x07, RC, RdmaWrite, Middle, eh::NONE)                                               \
  X(RC_RDMA_WRITE_LAST, 0x08, RC, RdmaWrite, Last, eh::NONE)                                                   \
  X(RC_RDMA_WRITE_LAST_WITH_IMMEDIATE, 0x09, RC, RdmaWrite, Last, eh::IMMDT)                                   \
  X(RC_RDMA_WRITE_ONLY, 0x0A, RC, RdmaWrite, Only, eh::RETH)                                                   \
  X(RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE, 0x0B, RC, RdmaWrite, Only, eh::RETH | eh::IMMDT)                        \
  X(RC_RDMA_READ_REQUEST, 0x0C, RC, RdmaReadRequest, Only, eh::RETH)                                           \
  X(RC_RDMA_READ_RESPONSE_FIRST, 0x0D, RC, RdmaReadResponse, First, eh::AETH)                                  \
  X(RC_RDMA_READ_RESPONSE_MIDDLE, 0x0E, RC, RdmaReadResponse, Middle, eh::NONE)                                \
  X(RC_RDMA_READ_RESPONSE_LAST, 0x0F, RC, RdmaReadResponse, Last, eh::AETH)                                    \
  X(RC_RDMA_READ_RESPONSE_ONLY, 0x10, RC, RdmaReadResponse, Only, eh::AETH)                                    \
  X(RC_ACKNOWLEDGE, 0x11, RC, Acknowledge, Only, eh::AETH)                                                     \
  X(RC_ATOMIC_ACKNOWLEDGE, 0x12, RC, AtomicAcknowledge, Only, eh::AETH | eh::ATOMIC_ACK_ETH)                   \
  X(RC_COMPARE_SWAP, 0x13, RC, CompareSwap, Only, eh::ATOMIC_ETH)                                              \
  X(RC_FETCH_ADD, 0x14, RC, FetchAdd, Only, eh::ATOMIC_ETH)                                                    \
  /* IBA 1.2 additions (send with invalidate), carried for completeness */                                     \
  X(RC_SEND_LAST_WITH_INVALIDATE, 0x16, RC, Send, Last, eh::IETH)                                              \
  X(RC_SEND_ONLY_WITH_INVALIDATE, 0x17, RC, Send, Only, eh::IETH)                                              \
  /* Unreliable Connection, 0x20-0x3F: sends and RDMA writes only */                                           \
  X(UC_SEND_FIRST, 0x20, UC, Send, First, eh::NONE)                                                            \
  X(UC_SEND_MIDDLE, 0x21, UC, Send, Middle, eh::NONE)                                                          \
  X(UC_SEND_LAST, 0x22, UC, Send, Last, eh::NONE)                                                              \
  X(UC_SEND_LAST_WITH_IMMEDIATE, 0x23, UC, Send, Last, eh::IMMDT)                                              \
  X(UC_SEND_ONLY, 0x24, UC, Send, Only, eh::NONE)                                                              \
  X(UC_SEND_ONLY_WITH_IMMEDIATE, 0x25, UC, Send, Only, eh::IMMDT)                                              \
  X(UC_RDMA_WRITE_FIRST, 0x26, UC, RdmaWrite, First, eh::RETH)                                                 \
  X(UC_RDMA_WRITE_MIDDLE, 0x27, UC, RdmaWrite, Middle, eh::NONE)                                               \
  X(UC_RDMA_WRITE_LAST, 0x28, UC, RdmaWrite, Last, eh::NONE)                                                   \
  X(UC_RDMA_WRITE_LAST_WITH_IMMEDIATE, 0x29, UC, RdmaWrite, Last, eh::IMMDT)                                   \
  X(UC_RDMA_WRITE_ONLY, 0x2A, UC, RdmaWrite, Only, eh::RETH)                                                   \
  X(UC_RDMA_WRITE_ONLY_WITH_IMMEDIATE, 0x2B, UC, RdmaWrite, Only, eh::RETH | eh::IMMDT)                        \
  /* Reliable Datagram, 0x40-0x5F: RDETH on every packet, DETH on requests */                                  \
  X(RD_SEND_FIRST, 0x40, RD, Send, First, eh::RDETH | eh::DETH)                                                \
  X(RD_SEND_MIDDLE, 0x41, RD, Send, Middle, eh::RDETH | eh::DETH)                                              \
  X(RD_SEND_LAST, 0x42, RD, Send, Last, eh::RDETH | eh::DETH)                                                  \
  X(RD_SEND_LAST_WITH_IMMEDIATE, 0x43, RD, Send, Last, eh::RDETH | eh::DETH | eh::IMMDT)                       \
  X(RD_SEND_ONLY, 0x44, RD, Send, Only, eh::RDETH | eh::DETH)                                                  \
  X(RD_SEND_ONLY_WITH_IMMEDIATE, 0x45, RD, Send, Only, eh::RDETH | eh::DETH | eh::IMMDT)                       \
  X(RD_RDMA_WRITE_FIRST, 0x46, RD, RdmaWrite, First, eh::RDETH | eh::DETH | eh::RETH)                          \
  X(RD_RDMA_WRITE_MIDDLE, 0x47, RD, RdmaWrite, Middle, eh::RDETH | eh::DETH)                                   \
  X(RD_RDMA_WRITE_LAST, 0x48, RD, RdmaWrite, Last, eh::RDETH | eh::DETH)                                       \
  X(RD_RDMA_WRITE_LAST_WITH_IMMEDIATE, 0x49, RD, RdmaWrite, Last, eh::RDETH | eh::DETH | eh::IMMDT)            \
  X(RD_RDMA_WRITE_ONLY, 0x4A, RD, RdmaWrite, Only, eh::RDETH | eh::DETH | eh::RETH)                            \
  X(RD_RDMA_WRITE_ONLY_WITH_IMMEDIATE, 0x4B, RD, RdmaWrite, Only, eh::RDETH | eh::DETH | eh::RETH | eh::IMMDT) \
  X(RD_RDMA_READ_REQUEST, 0x4C, RD, RdmaReadRequest, Only, eh::RDETH | eh::DETH | eh::RETH)                    \
  X(RD_RDMA_READ_RESPONSE_FIRST, 0x4D, RD, RdmaReadResponse, First, eh::RDETH | eh::AETH)                      \
  X(RD_RDMA_READ_RESPONSE_MIDDLE, 0x4E, RD, RdmaReadResponse, Middle, eh::RDETH)                               \
  X(RD_RDMA_READ_RESPONSE_LAST, 0x4F, RD, RdmaReadResponse, Last, eh::RDETH | eh::AETH)                        \
  X(RD_RDMA_READ_RESPONSE_ONLY, 0x50, RD, RdmaReadResponse, Only, eh::RDETH | eh::AETH)                        \
  X(RD_ACKNOWLEDGE, 0x51, RD, Acknowledge, Only, eh::RDETH | eh::AETH)                                         \
  X(RD_ATOMIC_ACKNOWLEDGE, 0x52, RD, AtomicAcknowledge, Only, eh::RDETH | eh::AETH | eh::ATOMIC_ACK_ETH)       \
  X(RD_COMPARE_SWAP, 0x53, RD, CompareSwap, Only, eh::RDETH | eh::DETH | eh::ATOMIC_ETH)                       \
  X(RD_FETCH_ADD, 0x54, RD, FetchAdd, Only, eh::RDETH | eh::DETH | eh::ATOMIC_ETH)                             \
  X(RD_RESYNC, 0x55, RD, Resync, Only, eh::RDETH | eh::DETH)                                                   \
  /* Unreliable Datagram, 0x60-0x7F: single-packet sends */                                                    \
  X(UD_SEND_ONLY, 0x64, UD, Send, Only, eh::DETH)                                                              \
  X(UD_SEND_ONLY_WITH_IMMEDIATE, 0x65, UD, Send, Only, eh::DETH | eh::IMMDT)

enum class Opcode : std::uint8_t {
#define NICSIM_IB_OPCODE_ENUM(name, value, t, o, p, h) name = value,
  NICSIM_IB_OPCODES(NICSIM_IB_OPCODE_ENUM)
#undef NICSIM_IB_OPCODE_ENUM
};

inline constexpr std::uint8_t kNoExt = 0xFF;  // OpcodeInfo::offset of an absent header

// Everything the transport needs to know about one opcode.
struct OpcodeInfo {
  std::uint8_t code;
  const char* name;  // "RC_SEND_FIRST", from the table row
  Transport transport;
  Op op;
  Position position;
  ExtMask exts;                              // which extended headers follow the BTH
  std::uint8_t num_exts;                     // how many
  std::array<Ext, 4> order;                  // the first num_exts entries, wire order
  std::array<std::uint8_t, kNumExt> offset;  // byte offset after the BTH, or kNoExt
  std::uint8_t ext_len;                      // bytes of extended headers
  bool payload;                              // may carry payload (sends, RDMA writes, read responses)
  bool request;                              // sent by a requester (everything but responses and ACKs)
  bool immediate;                            // carries ImmDt
  bool acked;                                // reliable request: the responder acknowledges it (RC, RD)
  bool atomic;                               // CmpSwap / FetchAdd
  bool rdma_read;                            // read request or read response
  bool rdma_write;                           // RDMA write packet
  bool invalidate;                           // carries IETH

  constexpr bool has(Ext e) const { return (exts >> static_cast<unsigned>(e)) & 1u; }
  constexpr bool first() const { return position == Position::First || position == Position::Only; }
  constexpr bool last() const { return position == Position::Last || position == Position::Only; }
};

namespace detail {
constexpr OpcodeInfo make_opcode(std::uint8_t code, const char* name, Transport t, Op o, Position p, ExtMask exts) {
  OpcodeInfo info{};
  info.code = code;
  info.name = name;
  info.transport = t;
  info.op = o;
  info.position = p;
  info.exts = exts;
  info.offset.fill(kNoExt);
  std::uint8_t at = 0;
  for (std::size_t e = 0; e < kNumExt; ++e) {
    if (!((exts >> e) & 1u)) continue;
    info.order[info.num_exts++] = static_cast<Ext>(e);
    info.offset[e] = at;
    at = static_cast<std::uint8_t>(at + kExtSize[e]);
  }
  info.ext_len = at;
  info.payload = o == Op::Send || o == Op::RdmaWrite || o == Op::RdmaReadResponse;
  info.request = !(o == Op::RdmaReadResponse || o == Op::Acknowledge || o == Op::AtomicAcknowledge);
  info.immediate = (exts & eh::IMMDT) != 0;
  info.acked = info.request && (t == Transport::RC || t == Transport::RD);
  info.atomic = o == Op::CompareSwap || o == Op::FetchAdd;
  info.rdma_read = o == Op::RdmaReadRequest || o == Op::RdmaReadResponse;
  info.rdma_write = o == Op::RdmaWrite;
  info.invalidate = (exts & eh::IETH) != 0;
  return info;
}
}  // namespace detail

inline constexpr std::array kOpcodes{
#define NICSIM_IB_OPCODE_ROW(name, value, t, o, p, h) \
  detail::make_opcode(value, #name, Transport::t, Op::o, Position::p, h),
    NICSIM_IB_OPCODES(NICSIM_IB_OPCODE_ROW)
#undef NICSIM_IB_OPCODE_ROW
};

namespace detail {
constexpr std::array<std::int16_t, 256> make_opcode_index() {
  std::array<std::int16_t, 256> index{};
  index.fill(-1);
  for (std::size_t i = 0; i < kOpcodes.size(); ++i) index[kOpcodes[i].code] = static_cast<std::int16_t>(i);
  return index;
}
inline constexpr std::array<std::int16_t, 256> kOpcodeIndex = make_opcode_index();

// The table is consistent with the opcode numbering of §9.2: the top three
// bits name the transport, rows are sorted and unique.
constexpr bool opcode_table_is_consistent() {
  for (std::size_t i = 0; i < kOpcodes.size(); ++i) {
    if ((kOpcodes[i].code >> 5) != static_cast<unsigned>(kOpcodes[i].transport)) return false;
    if (i > 0 && kOpcodes[i - 1].code >= kOpcodes[i].code) return false;
  }
  return true;
}
static_assert(opcode_table_is_consistent());
}  // namespace detail

// The descriptor of an opcode, or nullptr for a reserved value.
constexpr const OpcodeInfo* opcode_info(std::uint8_t code) {
  const std::int16_t i = detail::kOpcodeIndex[code];
  return i < 0 ? nullptr : &kOpcodes[static_cast<std::size_t>(i)];
}
constexpr const OpcodeInfo& opcode_info(Opcode code) {
  return kOpcodes[static_cast<std::size_t>(detail::kOpcodeIndex[static_cast<std::uint8_t>(code)])];
}
// The opcode a transport gives an operation at a position in its message,
// with or without immediate data (send with invalidate is never chosen):
// what a requester sends, looked up in the table rather than listed again.
// -1 when the transport has no such opcode.
namespace detail {
constexpr std::size_t opcode_for_index(Transport t, Op o, Position p, bool immediate) {
  constexpr std::size_t kOps = 0
#define NICSIM_IB_PLUS_ONE(name) +1
      NICSIM_IB_OPS(NICSIM_IB_PLUS_ONE);
#undef NICSIM_IB_PLUS_ONE
  return ((static_cast<std::size_t>(t) * kOps + static_cast<std::size_t>(o)) * 4 + static_cast<std::size_t>(p)) * 2 +
         (immediate ? 1 : 0);
}
constexpr auto make_opcode_for() {
  std::array<std::int16_t, opcode_for_index(Transport::UD, Op::Resync, Position::Only, true) + 1> index{};
  index.fill(-1);
  for (const OpcodeInfo& info : kOpcodes) {
    if (info.invalidate) continue;
    std::int16_t& slot = index[opcode_for_index(info.transport, info.op, info.position, info.immediate)];
    if (slot != -1) throw "two opcodes for one transport, operation, position and immediate";
    slot = info.code;
  }
  return index;
}
inline constexpr auto kOpcodeFor = make_opcode_for();
}  // namespace detail
constexpr int opcode_for(Transport t, Op o, Position p, bool immediate = false) {
  return detail::kOpcodeFor[detail::opcode_for_index(t, o, p, immediate)];
}
// The position of a packet in a message: whether it is the first and the last.
constexpr Position position_of(bool first, bool last) {
  return first ? (last ? Position::Only : Position::First) : (last ? Position::Last : Position::Middle);
}

// "RC_SEND_FIRST", or "RESERVED" for a reserved value.
constexpr const char* opcode_name(std::uint8_t code) {
  const OpcodeInfo* info = opcode_info(code);
  return info ? info->name : "RESERVED";
}

}  // namespace nicsim::ib
