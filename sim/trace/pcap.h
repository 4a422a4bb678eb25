// Packet capture files in the classic libpcap format with nanosecond
// timestamps (magic 0xa1b23c4d, version 2.4, snaplen 65535), readable by
// tcpdump, Wireshark and tshark. Simulated time is in picoseconds; records
// carry it truncated to the nanosecond. Files are byte-for-byte deterministic
// (no wall-clock anywhere).
//
// Each network kind registers the format its links are captured in
// (world/network_kinds.h PcapFormat): a link type and, for ERF, the record
// type; its layer documents how to dissect it.
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
inline constexpr std::uint32_t kLinktypeUser1 = 148;
inline constexpr std::uint32_t kLinktypeErf = 197;
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
