// InfiniBand wire format: whole packets (IBA vol. 1 chapter 5, data packet
// format).
//
//   LRH [GRH] BTH [RDETH] [DETH] [RETH] [AtomicETH] [AETH] [AtomicAckETH]
//   [ImmDt] [IETH] payload pad ICRC VCRC
//
// build_packet() lays out a packet from headers and payload, choosing the
// extended headers from the opcode table and filling every derived field:
// LRH LNH and PktLen, GRH PayLen and NxtHdr, BTH PadCnt, ICRC and VCRC.
// parse_packet() checks a wire image in the order a port and a transport
// would (length, VCRC, link next header, versions, ICRC, opcode, header and
// payload lengths) and returns the decoded headers with a verdict. It never
// reads outside the given bytes.
//
// Headers: ib_headers.h (field tables), ib_opcodes.h (opcode table),
// ib_crc.h (ICRC/VCRC).
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "ib_wire/ib_crc.h"
#include "ib_wire/ib_headers.h"
#include "ib_wire/ib_opcodes.h"

namespace nicsim::ib {

inline constexpr std::size_t kMaxPayload = 4096;  // largest path MTU
// LRH PktLen counts LRH through ICRC in 4-byte words in 11 bits (§7.7).
inline constexpr std::size_t kMaxPktLenWords = 2047;
// Smallest IBA packets: LRH BTH ICRC VCRC, and with a GRH.
inline constexpr std::size_t kMinLocalPacket = Lrh::kSize + Bth::kSize + kIcrcSize + kVcrcSize;
inline constexpr std::size_t kMinGlobalPacket = kMinLocalPacket + Grh::kSize;

// The extended transport headers a packet may carry; which ones are on the
// wire is decided by the opcode (OpcodeInfo::exts).
struct ExtHeaders {
  Rdeth rdeth;
  Deth deth;
  Reth reth;
  AtomicEth atomic_eth;
  Aeth aeth;
  AtomicAckEth atomic_ack_eth;
  ImmDt imm_dt;
  Ieth ieth;
  bool operator==(const ExtHeaders&) const = default;
};

struct PacketHeaders {
  Lrh lrh;
  std::optional<Grh> grh;  // present: a global packet (LNH = IBA global)
  Bth bth;
  ExtHeaders ext;
  bool operator==(const PacketHeaders&) const = default;
};

#define NICSIM_IB_BUILD_STATUSES(X)                               \
  X(Ok, "ok")                                                     \
  X(UnknownOpcode, "BTH opcode is reserved")                      \
  X(PayloadNotAllowed, "opcode carries no payload")               \
  X(PayloadTooLong, "payload longer than 4096 bytes")             \
  X(FieldOutOfRange, "a header field does not fit its bit width") \
  X(BufferTooSmall, "output buffer smaller than the packet")

#define NICSIM_IB_VERDICTS(X)                                                  \
  X(Ok, "ok")                                                                  \
  X(Truncated, "fewer bytes than the minimum packet or than LRH PktLen says")  \
  X(BadLength, "more bytes than LRH PktLen says, or PktLen below the minimum") \
  X(BadVcrc, "VCRC mismatch")                                                  \
  X(NotIba, "raw packet (LNH raw, or GRH NxtHdr not IBA transport)")           \
  X(BadVersion, "LRH LVer, GRH IPVer or BTH TVer not supported")               \
  X(BadGrhLength, "GRH PayLen disagrees with LRH PktLen")                      \
  X(BadIcrc, "ICRC mismatch")                                                  \
  X(UnknownOpcode, "BTH opcode is reserved")                                   \
  X(ShortForOpcode, "packet too short for the extended headers of its opcode") \
  X(BadPayloadLength, "payload on an opcode without payload, or PadCnt > payload")

#define NICSIM_IB_STATUS_ENUM(name, text) name,
enum class BuildStatus : std::uint8_t { NICSIM_IB_BUILD_STATUSES(NICSIM_IB_STATUS_ENUM) };
enum class Verdict : std::uint8_t { NICSIM_IB_VERDICTS(NICSIM_IB_STATUS_ENUM) };
#undef NICSIM_IB_STATUS_ENUM

const char* build_status_name(BuildStatus s);  // "PayloadNotAllowed"
const char* build_status_text(BuildStatus s);  // "opcode carries no payload"
const char* verdict_name(Verdict v);           // "BadIcrc"
const char* verdict_text(Verdict v);           // "ICRC mismatch"

// Bytes of the wire image for these headers and payload length (LRH through
// VCRC), or 0 when the opcode is reserved.
std::size_t packet_size(const PacketHeaders& h, std::size_t payload_len);
// The same from the opcode and whether a GRH is present (all that decides it).
std::size_t packet_size(std::uint8_t opcode, bool global, std::size_t payload_len);

// Builds into `out` (resized to the packet). On error `out` is left empty.
// The derived fields of `h` (LNH, PktLen, PayLen, NxtHdr, PadCnt) are
// ignored and computed; every other field is taken as given, versions
// included, so tests can build deliberately bad packets.
BuildStatus build_packet(const PacketHeaders& h, std::span<const std::uint8_t> payload, std::vector<std::uint8_t>& out);
// Same, into a caller buffer; `*written` gets the packet size on success.
// `with_crcs` false leaves ICRC and VCRC zero, for a caller that fills the
// payload later and then seals the packet (compute_icrc/compute_vcrc).
BuildStatus build_packet(const PacketHeaders& h, std::span<const std::uint8_t> payload, std::span<std::uint8_t> out,
                         std::size_t* written, bool with_crcs = true);

// build_packet without the payload: every byte but the payload's (pad, ICRC
// and VCRC zero), for a caller that writes the payload itself (e.g. by DMA)
// and then seals the packet. `*payload_at` gets where the payload goes.
BuildStatus build_headers(const PacketHeaders& h, std::size_t payload_len, std::span<std::uint8_t> out,
                          std::size_t* written, std::size_t* payload_at);

struct ParsedPacket {
  Verdict verdict = Verdict::Truncated;
  // Filled as far as parsing got: headers decoded before a failed check are
  // valid (e.g. the LRH of a packet with a bad VCRC).
  PacketHeaders hdr;
  const OpcodeInfo* op = nullptr;
  std::span<const std::uint8_t> payload;  // without pad; points into the input
  std::uint8_t pad = 0;
  std::uint32_t icrc = 0;  // as found on the wire, spec notation
  std::uint16_t vcrc = 0;
  bool ok() const { return verdict == Verdict::Ok; }
};

// `bytes` is one wire image, LRH through VCRC; the result's payload span
// refers into it. `check_crcs` false skips recomputing VCRC and ICRC (the
// stored values are still read): for callers that know the bytes are
// exactly as sealed.
ParsedPacket parse_packet(std::span<const std::uint8_t> bytes, bool check_crcs = true);

}  // namespace nicsim::ib

namespace nicsim::fabric {

// PacketMeta::kind of InfiniBand packets (LRH...VCRC in bytes).
inline constexpr std::uint8_t kPacketIb = 1;

}  // namespace nicsim::fabric
