// General MADs as the wire carries them (IBA 13.4): the common header, the
// Communication Management class's messages (IBA 12.6) and the Subnet
// Administration class's header and records (IBA 15.2). Every layout is a
// table of byte offsets from the start of the 256-byte MAD; fields are
// big-endian, sub-byte fields are (offset, first bit from the MSB, width).
#pragma once
#include <cstdint>
#include <cstring>

namespace nicsim::cm::mad {

inline constexpr std::uint32_t kBytes = 256;
inline constexpr std::uint32_t kGsiQkey = 0x80010000u;
inline constexpr std::uint16_t kDefaultPkey = 0xffff;

// ---- common header ---------------------------------------------------------
inline constexpr std::uint32_t kBaseVersion = 0, kMgmtClass = 1, kClassVersion = 2, kMethod = 3, kStatus = 4,
                               kClassSpecific = 6, kTid = 8, kAttrId = 16, kAttrMod = 20, kData = 24;

inline constexpr std::uint8_t kClassSa = 0x03, kClassCm = 0x07;
inline constexpr std::uint8_t kCmClassVersion = 2, kSaClassVersion = 2;
inline constexpr std::uint8_t kMethodGet = 0x01, kMethodSet = 0x02, kMethodSend = 0x03, kMethodGetResp = 0x81,
                              kMethodGetTable = 0x12, kMethodGetTableResp = 0x92, kMethodDelete = 0x15,
                              kMethodDeleteResp = 0x95;

// ---- field access ----------------------------------------------------------
inline std::uint64_t get(const std::uint8_t* p, unsigned bytes) {
  std::uint64_t v = 0;
  for (unsigned i = 0; i < bytes; ++i) v = (v << 8) | p[i];
  return v;
}
inline void put(std::uint8_t* p, unsigned bytes, std::uint64_t v) {
  for (unsigned i = bytes; i-- > 0; v >>= 8) p[i] = static_cast<std::uint8_t>(v);
}
// Bits [bit, bit+width) of the big-endian word of `bytes` bytes at p, bit 0
// being its most significant bit.
inline std::uint32_t get_bits(const std::uint8_t* p, unsigned bytes, unsigned bit, unsigned width) {
  const std::uint64_t w = get(p, bytes);
  return static_cast<std::uint32_t>((w >> (bytes * 8 - bit - width)) & ((1ull << width) - 1));
}
inline void put_bits(std::uint8_t* p, unsigned bytes, unsigned bit, unsigned width, std::uint64_t v) {
  const unsigned shift = bytes * 8 - bit - width;
  const std::uint64_t mask = ((1ull << width) - 1) << shift;
  put(p, bytes, (get(p, bytes) & ~mask) | ((v << shift) & mask));
}

// A MAD header for `cls`.
inline void header(std::uint8_t* m, std::uint8_t cls, std::uint8_t version, std::uint8_t method, std::uint16_t attr,
                   std::uint64_t tid, std::uint32_t attr_mod = 0) {
  std::memset(m, 0, kBytes);
  m[kBaseVersion] = 1;
  m[kMgmtClass] = cls;
  m[kClassVersion] = version;
  m[kMethod] = method;
  put(m + kTid, 8, tid);
  put(m + kAttrId, 2, attr);
  put(m + kAttrMod, 4, attr_mod);
}

// ---- Communication Management (class 0x07) -----------------------------------
namespace cm {
inline constexpr std::uint16_t kReq = 0x0010, kMra = 0x0011, kRej = 0x0012, kRep = 0x0013, kRtu = 0x0014,
                               kDreq = 0x0015, kDrep = 0x0016;
// Every message starts with the sender's and the receiver's comm IDs.
inline constexpr std::uint32_t kLocalCommId = 24, kRemoteCommId = 28;

// REQ (IBA 12.6.5). Offsets of 32-bit words holding sub-byte fields.
namespace req {
inline constexpr std::uint32_t kServiceId = 32, kLocalCaGuid = 40, kLocalQkey = 52;
inline constexpr std::uint32_t kW1 = 56;  // Local QPN (24) | Responder Resources (8)
inline constexpr std::uint32_t kW2 = 60;  // Local EECN (24) | Initiator Depth (8)
inline constexpr std::uint32_t kW3 = 64;  // Remote EECN (24) | Remote CM Resp TO (5) | Transport (2) | E2E FC (1)
inline constexpr std::uint32_t kW4 = 68;  // Starting PSN (24) | Local CM Resp TO (5) | Retry Count (3)
inline constexpr std::uint32_t kPkey = 72;
inline constexpr std::uint32_t kB1 = 74;  // Path MTU (4) | RDC Exists (1) | RNR Retry Count (3)
inline constexpr std::uint32_t kB2 = 75;  // Max CM Retries (4) | SRQ (1) | reserved (3)
inline constexpr std::uint32_t kPrimaryLocalLid = 76, kPrimaryRemoteLid = 78, kPrimaryLocalGid = 80,
                               kPrimaryRemoteGid = 96;
inline constexpr std::uint32_t kFlowRate = 112;  // Flow Label (20) | reserved (6) | Packet Rate (6)
inline constexpr std::uint32_t kTrafficClass = 116, kHopLimit = 117;
inline constexpr std::uint32_t kSlSubnet = 118;    // SL (4) | Subnet Local (1) | reserved (3)
inline constexpr std::uint32_t kAckTimeout = 119;  // Local ACK Timeout (5) | reserved (3)
inline constexpr std::uint32_t kPrivate = 164, kPrivateBytes = 92;
}  // namespace req

namespace mra {
inline constexpr std::uint32_t kMsgMraed = 32;  // Message MRAed (2) | reserved (6)
inline constexpr std::uint32_t kTimeout = 33;   // Service Timeout (5) | reserved (3)
inline constexpr std::uint32_t kPrivate = 34, kPrivateBytes = 222;
inline constexpr std::uint8_t kReqMsg = 0, kRepMsg = 1, kLapMsg = 2;
}  // namespace mra

namespace rej {
inline constexpr std::uint32_t kMsgRejected = 32;  // Message REJected (2) | reserved (6)
inline constexpr std::uint32_t kInfoLength = 33;   // Reject Info Length (7) | reserved (1)
inline constexpr std::uint32_t kReason = 34, kAri = 36;
inline constexpr std::uint32_t kPrivate = 108, kPrivateBytes = 148;
inline constexpr std::uint8_t kReqMsg = 0, kRepMsg = 1, kOther = 2;
inline constexpr std::uint16_t kTimeout = 1, kInvalidServiceId = 8, kStaleConn = 10, kInvalidPathMtu = 26,
                               kConsumerReject = 28;
}  // namespace rej

namespace rep {
inline constexpr std::uint32_t kLocalQkey = 32;
inline constexpr std::uint32_t kLocalQpn = 36;  // QPN (24) | reserved (8)
inline constexpr std::uint32_t kLocalEecn = 40;
inline constexpr std::uint32_t kStartingPsn = 44;  // PSN (24) | reserved (8)
inline constexpr std::uint32_t kRespResources = 48, kInitDepth = 49;
inline constexpr std::uint32_t kB1 = 50;  // Target ACK Delay (5) | Failover (2) | E2E FC (1)
inline constexpr std::uint32_t kB2 = 51;  // RNR Retry Count (3) | SRQ (1) | reserved (4)
inline constexpr std::uint32_t kLocalCaGuid = 52;
inline constexpr std::uint32_t kPrivate = 60, kPrivateBytes = 196;
}  // namespace rep

namespace rtu {
inline constexpr std::uint32_t kPrivate = 32, kPrivateBytes = 224;
}
namespace dreq {
inline constexpr std::uint32_t kRemoteQpn = 32;  // Remote QPN/EECN (24) | reserved (8)
inline constexpr std::uint32_t kPrivate = 36, kPrivateBytes = 220;
}  // namespace dreq
namespace drep {
inline constexpr std::uint32_t kPrivate = 32, kPrivateBytes = 224;
}
}  // namespace cm

// ---- Subnet Administration (class 0x03) --------------------------------------
namespace sa {
inline constexpr std::uint16_t kServiceRecord = 0x0031, kPathRecord = 0x0035;
// RMPP header, SA header.
inline constexpr std::uint32_t kRmppVersion = 24, kRmppType = 25, kRmppFlags = 26, kRmppStatus = 27, kRmppSegment = 28,
                               kRmppLength = 32;
inline constexpr std::uint32_t kSmKey = 36, kAttrOffset = 44, kCompMask = 48, kData = 56;
inline constexpr std::uint16_t kStatusNoRecords = 0x0300;  // ERR_NO_RECORDS in the class-specific status bits

namespace path {
inline constexpr std::uint32_t kBytes = 64;
inline constexpr std::uint32_t kDgid = 8, kSgid = 24, kDlid = 40, kSlid = 42;
inline constexpr std::uint32_t kFlowHop = 44;  // RawTraffic (1) | reserved (3) | FlowLabel (20) | HopLimit (8)
inline constexpr std::uint32_t kTclass = 48, kNumbPath = 49, kPkey = 50;
inline constexpr std::uint32_t kSl = 52;  // QoSClass (12) | SL (4)
inline constexpr std::uint32_t kMtu = 54, kRate = 55, kLifetime = 56, kPreference = 57;
// Component mask bits.
inline constexpr std::uint64_t kMaskDgid = 1ull << 2, kMaskSgid = 1ull << 3, kMaskNumbPath = 1ull << 12;
}  // namespace path

namespace service {
inline constexpr std::uint32_t kBytes = 176;
inline constexpr std::uint32_t kId = 0, kGid = 8, kPkey = 24, kLease = 28, kKey = 32, kName = 48, kData8 = 112;
inline constexpr std::uint64_t kMaskId = 1ull << 0, kMaskGid = 1ull << 1;
// ServiceData8 bytes 12..15 (mask bits 19..22) hold the IPv4 address.
inline constexpr std::uint32_t kIpv4 = kData8 + 12;
inline constexpr std::uint64_t kMaskIpv4 = (1ull << 19) | (1ull << 20) | (1ull << 21) | (1ull << 22);
// The address translation service DAPL's ATS registered ("ATS" in its low
// bytes) and its name.
inline constexpr std::uint64_t kAtsServiceId = 0x10000ce100415453ull;
inline constexpr const char* kAtsName = "DAPL Address Translation Service";
}  // namespace service
}  // namespace sa

}  // namespace nicsim::cm::mad
