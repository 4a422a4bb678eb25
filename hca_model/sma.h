// The HCA's subnet management agent: answers subnet management packets
// (SMPs, management class 0x01 LID-routed and 0x81 directed-route) for the
// attributes a CA must support: NodeDescription, NodeInfo, GUIDInfo,
// PortInfo and P_KeyTable. Used by MAD_IFC (local MADs from the driver) and
// by QP0 for SMPs arriving over the fabric. MAD fields are big-endian.
#pragma once
#include <cstdint>

namespace nicsim::hca {

class Hca;

inline constexpr std::uint32_t kMadSize = 256;
inline constexpr std::uint32_t kSmpDataOffset = 64;

namespace mad {
inline constexpr std::uint8_t kClassSmpLid = 0x01;
inline constexpr std::uint8_t kClassSmpDirected = 0x81;
inline constexpr std::uint8_t kMethodGet = 0x01;
inline constexpr std::uint8_t kMethodSet = 0x02;
inline constexpr std::uint8_t kMethodGetResp = 0x81;
inline constexpr std::uint16_t kAttrNodeDescription = 0x0010;
inline constexpr std::uint16_t kAttrNodeInfo = 0x0011;
inline constexpr std::uint16_t kAttrGuidInfo = 0x0014;
inline constexpr std::uint16_t kAttrPortInfo = 0x0015;
inline constexpr std::uint16_t kAttrPkeyTable = 0x0016;
// MAD status: invalid-field code in bits 4..2 (IBA 13.4.7).
inline constexpr std::uint16_t kStatusBadVersion = 1 << 2;
inline constexpr std::uint16_t kStatusBadMethod = 2 << 2;
inline constexpr std::uint16_t kStatusBadMethodAttr = 3 << 2;
inline constexpr std::uint16_t kStatusBadValue = 7 << 2;
}  // namespace mad

// Big-endian field access for MADs.
std::uint64_t be_get(const std::uint8_t* p, unsigned bytes);
void be_put(std::uint8_t* p, unsigned bytes, std::uint64_t v);

// Processes one SMP for `port`; writes the 256-byte response. Returns false
// only if `in` is not an SMP at all (wrong class): the caller reports that.
bool process_local_mad(Hca& hca, std::uint32_t port, const std::uint8_t* in, std::uint8_t* out);

}  // namespace nicsim::hca
