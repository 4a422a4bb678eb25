// What travels on an Elite network: Elan3 packets, captured raw under
// LINKTYPE_USER1 (Wireshark has no Elan3 dissector; the layout is the
// model's own, elan_model/elan3_regs.h) and dissected by
//   tshark -X lua_script:tools/wireshark/nicsim_elan3.lua -r packets.pcap
#pragma once
#include <cstdint>

#include "trace/pcap.h"

namespace nicsim {

inline constexpr std::uint32_t kLinktypeElan3 = kLinktypeUser1;

}  // namespace nicsim

namespace nicsim::fabric {

// PacketMeta::kind: an Elan3 network packet (routed by Elite switches), and
// the acknowledgement token travelling back to its sender.
inline constexpr std::uint8_t kPacketElan = 2;
inline constexpr std::uint8_t kPacketElanAck = 3;

}  // namespace nicsim::fabric
