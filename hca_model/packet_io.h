// The HCA engines' view of the IB wire format: the fields they set on an
// outgoing packet and read from an incoming one. Implemented over the wire
// library (hca_model/wire), which owns the exact bit layouts and CRCs.
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>

namespace nicsim::hca {

// IB opcodes used by the engines (IBA 1.1 §9.2: transport in bits 7..5).
namespace opc {
inline constexpr std::uint8_t kRc = 0x00, kUc = 0x20, kUd = 0x60;
inline constexpr std::uint8_t kSendFirst = 0x00, kSendMiddle = 0x01, kSendLast = 0x02, kSendLastImm = 0x03,
                              kSendOnly = 0x04, kSendOnlyImm = 0x05, kWriteFirst = 0x06, kWriteMiddle = 0x07,
                              kWriteLast = 0x08, kWriteLastImm = 0x09, kWriteOnly = 0x0a, kWriteOnlyImm = 0x0b,
                              kReadRequest = 0x0c, kReadRespFirst = 0x0d, kReadRespMiddle = 0x0e,
                              kReadRespLast = 0x0f, kReadRespOnly = 0x10, kAck = 0x11, kAtomicAck = 0x12,
                              kCompareSwap = 0x13, kFetchAdd = 0x14;
}  // namespace opc

// AETH syndromes (IBA 9.7.5.2.1).
namespace aeth {
inline constexpr std::uint8_t kAck = 0x00;          // | credit count (0x1f: invalid/none)
inline constexpr std::uint8_t kRnrNak = 0x20;       // | RNR timer code
inline constexpr std::uint8_t kNakPsnSeq = 0x60;
inline constexpr std::uint8_t kNakInvalidReq = 0x61;
inline constexpr std::uint8_t kNakRemoteAccess = 0x62;
inline constexpr std::uint8_t kNakRemoteOp = 0x63;
inline constexpr std::uint8_t kNakInvalidRd = 0x64;
inline constexpr std::uint8_t kNoCredits = 0x1f;
}  // namespace aeth

struct PacketFields {
  // LRH
  std::uint8_t vl = 0, sl = 0;
  std::uint16_t dlid = 0, slid = 0;
  // GRH
  bool grh = false;
  std::uint8_t tclass = 0, hop_limit = 0;
  std::uint32_t flow_label = 0;
  std::array<std::uint8_t, 16> sgid{}, dgid{};
  // BTH
  std::uint8_t opcode = 0;
  bool solicited = false, ack_req = false;
  std::uint16_t pkey = 0xffff;
  std::uint32_t dest_qp = 0, psn = 0;
  // Extension headers: which are present follows from the opcode.
  std::uint64_t reth_va = 0;
  std::uint32_t reth_rkey = 0, reth_len = 0;
  std::uint32_t deth_qkey = 0, deth_src_qp = 0;
  std::uint8_t aeth_syndrome = 0;
  std::uint32_t aeth_msn = 0;
  std::uint64_t atomic_va = 0, atomic_swap_add = 0, atomic_compare = 0;
  std::uint32_t atomic_rkey = 0;
  std::uint64_t atomic_ack_orig = 0;
  std::uint32_t imm = 0;  // as on the wire (big-endian value in host integer)
  bool has_imm = false;
};

enum class RxVerdict : std::uint8_t { Ok, Truncated, BadVcrc, BadIcrc, BadOpcode, BadHeader };

// Total wire length for a payload of `payload` bytes (pad to 4, ICRC, VCRC).
std::size_t wire_bytes(std::uint8_t opcode, bool grh, std::size_t payload);
// Writes the headers (LRH PktLen and BTH PadCnt from `payload`) at buf[0..)
// and returns their length: the payload goes there. Pad bytes are zeroed; the
// payload's bytes are left as they are (the caller writes all of them, by
// DMA or a copy, before sealing).
// `wire_len` is the buffer's size, wire_bytes() of the same packet.
std::size_t encode_headers(const PacketFields& f, std::size_t payload, std::uint8_t* buf, std::size_t wire_len);
// Computes and stores ICRC and VCRC once the payload is in place.
void seal(std::uint8_t* buf, std::size_t wire_len);
// Parses and checks a received packet; on Ok fills `f`, payload offset/len.
// `check_crcs` false: the caller knows the bytes are as the sender sealed them.
RxVerdict decode(const std::uint8_t* buf, std::size_t len, PacketFields& f, std::size_t& payload_offset,
                 std::size_t& payload_len, bool check_crcs = true);
const char* verdict_name(RxVerdict v);
const char* opcode_name(std::uint8_t opcode);

}  // namespace nicsim::hca
