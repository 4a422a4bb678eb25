// The HCA engines' use of the IB wire layer (ib_wire): headers are
// ib::PacketHeaders, what an opcode carries is its ib::OpcodeInfo row, and
// the exact bit layouts and CRCs are the wire layer's.
#pragma once
#include <cstddef>
#include <cstdint>

#include "ib_wire/ib_wire.h"

namespace nicsim::hca {

// AETH syndromes (IBA 9.7.5.2.1).
namespace aeth {
inline constexpr std::uint8_t kAck = 0x00;     // | credit count (0x1f: invalid/none)
inline constexpr std::uint8_t kRnrNak = 0x20;  // | RNR timer code
inline constexpr std::uint8_t kNakPsnSeq = 0x60;
inline constexpr std::uint8_t kNakInvalidReq = 0x61;
inline constexpr std::uint8_t kNakRemoteAccess = 0x62;
inline constexpr std::uint8_t kNakRemoteOp = 0x63;
inline constexpr std::uint8_t kNakInvalidRd = 0x64;
inline constexpr std::uint8_t kNoCredits = 0x1f;
inline constexpr std::uint8_t kKindMask = 0xe0;  // ACK, RNR NAK or NAK (with its code)
}  // namespace aeth

constexpr std::uint8_t code(ib::Opcode o) { return static_cast<std::uint8_t>(o); }

// Headers for a packet the HCA sends: what every one of its packets has in
// common (no path migration, so MigReq says "migrated"; the default P_Key).
inline ib::PacketHeaders outgoing_headers() {
  ib::PacketHeaders h;
  h.bth.m = 1;
  h.bth.p_key = 0xffff;
  return h;
}

// Writes the headers (LRH PktLen and BTH PadCnt from `payload`) at buf[0..)
// and returns their length: the payload goes there. Pad bytes are zeroed; the
// payload's bytes are left as they are (the caller writes all of them, by
// DMA or a copy, before sealing).
// `wire_len` is the buffer's size, ib::packet_size() of the same packet.
std::size_t encode_headers(const ib::PacketHeaders& h, std::size_t payload, std::uint8_t* buf, std::size_t wire_len);
// Computes and stores ICRC and VCRC once the payload is in place.
void seal(std::uint8_t* buf, std::size_t wire_len);
// Why a received packet is dropped, for traces: "bad_icrc", ...
const char* drop_reason(ib::Verdict v);

}  // namespace nicsim::hca
