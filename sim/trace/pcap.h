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
#include <vector>

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
  // Records encoded as write() and write_erf() write them (a record header,
  // then the frame), appended to `out`; and such a record written as it is.
  static void append_record(std::string& out, Tick time_ps, const std::uint8_t* bytes, std::size_t len);
  static void append_erf_record(std::string& out, Tick time_ps, std::uint8_t erf_type, const std::uint8_t* bytes,
                                std::size_t len);
  void write_encoded(const char* record, std::size_t len);
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

// The capture of a world split into blocks (docs/partition.md): records are
// held with their place, the frame's time and then the capturing device and
// its own count of captures, and written in that order at the end, which no
// other block changes. Each record costs its encoded bytes plus 16 for its
// place and 32 for its index entry. A process of a run over several holds
// its devices' records and exports them; rank 0 imports every part.
class HeldCapture {
 public:
  // `erf_type` as PcapFormat's: the ERF record type, or -1 for raw frames.
  explicit HeldCapture(int erf_type) : erf_type_(erf_type) {}
  void add(Tick time_ps, std::uint32_t device, const std::uint8_t* bytes, std::size_t len);
  std::uint64_t records() const { return index_.size(); }
  // This process's records as bytes (given away: nothing is held after),
  // and another process's part taken over as it is.
  std::string export_held();
  // False when `bytes` does not hold whole records.
  bool import_held(std::string bytes);
  // Every held record, in place order; nothing is held after.
  void write_to(PcapWriter& out);
  // The held records earlier than `before`, in place order: a process that
  // holds every block's records (one process) writes them as the run goes,
  // once no frame can still leave before `before`. A record added later
  // that is earlier than `before` is a logic error.
  void write_before(PcapWriter& out, Tick before);

 private:
  struct Entry {
    Tick t;
    std::uint64_t seq;  // device << 40 | the device's count
    std::uint32_t chunk;
    std::uint64_t at;  // the record's offset in its chunk (after its place)
  };
  bool index_chunk(std::uint32_t chunk);
  void write_entries(PcapWriter& out, std::vector<Entry>::iterator end);
  int erf_type_;
  Tick written_before_ = 0;
  std::vector<std::string> chunks_;  // chunk 0: this process's records, as [time][seq][record]
  std::vector<Entry> index_;
  std::vector<std::uint64_t> device_captures_;
};

}  // namespace nicsim
