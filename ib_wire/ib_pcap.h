// Capturing InfiniBand packets, and what Wireshark makes of them (checked
// with tshark 4.0.17, Debian 12):
// - LINKTYPE_INFINIBAND (247, raw packets starting with the LRH) is the
//   registered link type, but Wireshark has no reader for it: tshark refuses
//   the file ("pcap: network type 247 unknown or unsupported").
// - LINKTYPE_ERF (197) with an ERF record of type 21 (INFINIBAND) in front
//   of each packet is dissected as `infiniband` with no options at all, in
//   tshark and in the Wireshark GUI. This is the format IB links are
//   captured in: PcapWriter::open(path, kLinktypeErf) and
//   write_erf(..., kErfTypeInfiniband).
// - LINKTYPE_USER0 (147) with raw packets also works, but only when the
//   reader maps it: tshark -o 'uat:user_dlts:"User 0 (DLT=147)","infiniband","0","","0",""'
// The dissector shows the ICRC and VCRC fields (infiniband.invariant.crc,
// infiniband.variant.crc) but has no preference that checks them.
#pragma once
#include <cstdint>

#include "trace/pcap.h"

namespace nicsim {

inline constexpr std::uint32_t kLinktypeInfiniband = 247;
// ERF record types (Endace ERF types document): 21 = InfiniBand, the packet
// starting with the LRH.
inline constexpr std::uint8_t kErfTypeInfiniband = 21;

}  // namespace nicsim
