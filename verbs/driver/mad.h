// Subnet management packets the driver itself sends through MAD_IFC to
// learn port and node facts (IBA 14.2.5). MAD fields are big-endian.
#pragma once
#include <cstdint>

#include "iba/ib_types.h"

namespace nicsim::verbs {

class Device;

inline constexpr std::uint32_t kMadBytes = 256;
inline constexpr std::uint32_t kSmpData = 64;  // SMP data offset (LID-routed)

namespace mad_attr {
inline constexpr std::uint16_t kNodeInfo = 0x0011;
inline constexpr std::uint16_t kGuidInfo = 0x0014;
inline constexpr std::uint16_t kPortInfo = 0x0015;
inline constexpr std::uint16_t kPkeyTable = 0x0016;
}  // namespace mad_attr

inline std::uint64_t be(const std::uint8_t* p, unsigned bytes) {
  std::uint64_t v = 0;
  for (unsigned i = 0; i < bytes; ++i) v = (v << 8) | p[i];
  return v;
}

// A LID-routed SubnGet(attr, modifier) to the local SMA of `port`; `resp`
// gets the 256-byte response. IB_SUCCESS only if the SMA answered with
// MAD status 0.
ib_api_status_t smp_get(Device& dev, std::uint8_t port, std::uint16_t attr, std::uint32_t modifier, std::uint8_t* resp);

}  // namespace nicsim::verbs
