// Packet capture files in the classic libpcap format with nanosecond
// timestamps (magic 0xa1b23c4d, version 2.4, snaplen 65535), readable by
// tcpdump, Wireshark and tshark. Simulated time is in picoseconds; records
// carry it truncated to the nanosecond. Files are byte-for-byte deterministic
// (no wall-clock anywhere).
//
// InfiniBand and Wireshark (checked with tshark 4.0.17, Debian 12):
// - LINKTYPE_INFINIBAND (247, raw packets starting with the LRH) is the
//   registered link type, but Wireshark has no reader for it: tshark refuses
//   the file ("pcap: network type 247 unknown or unsupported").
// - LINKTYPE_ERF (197) with an ERF record of type 21 (INFINIBAND) in front
//   of each packet is dissected as `infiniband` with no options at all, in
//   tshark and in the Wireshark GUI. This is what the simulator writes for
//   IB traces: open(path, kLinktypeErf) and write_erf(..., kErfTypeInfiniband).
// - LINKTYPE_USER0 (147) with raw packets also works, but only when the
//   reader maps it: tshark -o 'uat:user_dlts:"User 0 (DLT=147)","infiniband","0","","0",""'
// The dissector shows the ICRC and VCRC fields (infiniband.invariant.crc,
// infiniband.variant.crc) but has no preference that checks them.
//
// Elan3 traces: Wireshark has no dissector for the Elan3 (the packet layout
// is this model's own, elan_model/elan3_regs.h), so Elan packets and ack
// tokens are written raw under LINKTYPE_USER1 (kLinktypeElan3) and
// dissected by the Lua dissector tools/wireshark/nicsim_elan3.lua:
//   tshark -X lua_script:tools/wireshark/nicsim_elan3.lua -r packets.pcap
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>

#include "core/units.h"

namespace nicsim {

inline constexpr std::uint32_t kPcapMagicNs = 0xa1b23c4d;
inline constexpr std::uint32_t kPcapSnaplen = 65535;
inline constexpr std::uint32_t kLinktypeUser0 = 147;
inline constexpr std::uint32_t kLinktypeElan3 = 148;  // LINKTYPE_USER1
inline constexpr std::uint32_t kLinktypeErf = 197;
inline constexpr std::uint32_t kLinktypeInfiniband = 247;
// ERF record types (Endace ERF types document): 21 = InfiniBand, the packet
// starting with the LRH.
inline constexpr std::uint8_t kErfTypeInfiniband = 21;
inline constexpr std::size_t kErfHeaderSize = 16;

class PcapWriter {
 public:
  PcapWriter() = default;
  PcapWriter(const PcapWriter&) = delete;
  PcapWriter& operator=(const PcapWriter&) = delete;
  ~PcapWriter() { close(); }

  // Creates (truncates) the file and writes the global header. False with
  // error() set if the file cannot be written.
  bool open(const std::string& path, std::uint32_t linktype);
  // One record; `bytes` is the link-layer frame for the file's link type.
  // Frames longer than the snaplen are cut and keep their original length.
  void write(Tick time_ps, const std::uint8_t* bytes, std::size_t len);
  // One record of a kLinktypeErf file: an ERF header of `erf_type` (with the
  // same timestamp, interface 0) followed by `bytes`.
  void write_erf(Tick time_ps, std::uint8_t erf_type, const std::uint8_t* bytes, std::size_t len);
  void close();

  bool is_open() const { return out_ != nullptr; }
  // Empty while every write succeeded.
  const std::string& error() const { return error_; }
  std::uint64_t records() const { return records_; }
  std::uint32_t linktype() const { return linktype_; }

 private:
  void put(const void* data, std::size_t len);

  std::FILE* out_ = nullptr;
  std::string path_;
  std::string error_;
  std::uint64_t records_ = 0;
  std::uint32_t linktype_ = 0;
};

}  // namespace nicsim
