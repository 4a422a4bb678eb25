#include "trace/pcap.h"

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>

namespace nicsim {
namespace {

// pcap headers are in the writer's byte order, flagged by the magic; we
// always write little-endian so files do not depend on the host.
template <std::size_t N>
void le(std::array<std::uint8_t, N>& buf, std::size_t at, std::uint64_t v, std::size_t bytes) {
  for (std::size_t i = 0; i < bytes; ++i) buf[at + i] = static_cast<std::uint8_t>(v >> (8 * i));
}
template <std::size_t N>
void be(std::array<std::uint8_t, N>& buf, std::size_t at, std::uint64_t v, std::size_t bytes) {
  for (std::size_t i = 0; i < bytes; ++i) buf[at + i] = static_cast<std::uint8_t>(v >> (8 * (bytes - 1 - i)));
}

constexpr std::uint64_t kNsPerSec = 1'000'000'000;

}  // namespace

bool PcapWriter::open(const std::string& path, std::uint32_t linktype) {
  close();
  error_.clear();
  records_ = 0;
  path_ = path;
  linktype_ = linktype;
  out_ = std::fopen(path.c_str(), "wb");
  if (out_ == nullptr) {
    error_ = "cannot create " + path + ": " + std::strerror(errno);
    return false;
  }
  // Global header: magic, version 2.4, thiszone 0, sigfigs 0, snaplen, link type.
  std::array<std::uint8_t, 24> h{};
  le(h, 0, kPcapMagicNs, 4);
  le(h, 4, 2, 2);
  le(h, 6, 4, 2);
  le(h, 16, kPcapSnaplen, 4);
  le(h, 20, linktype, 4);
  put(h.data(), h.size());
  return error_.empty();
}

void PcapWriter::write(Tick time_ps, const std::uint8_t* bytes, std::size_t len) {
  if (out_ == nullptr) return;
  const std::uint64_t ns = time_ps / kNs;
  const std::size_t captured = std::min<std::size_t>(len, kPcapSnaplen);
  std::array<std::uint8_t, 16> rec{};
  le(rec, 0, ns / kNsPerSec, 4);
  le(rec, 4, ns % kNsPerSec, 4);
  le(rec, 8, captured, 4);
  le(rec, 12, len, 4);
  put(rec.data(), rec.size());
  put(bytes, captured);
  ++records_;
}

void PcapWriter::write_erf(Tick time_ps, std::uint8_t erf_type, const std::uint8_t* bytes, std::size_t len) {
  if (out_ == nullptr) return;
  // ERF record header (Endace ERF types document, "Generic ERF header"):
  //   timestamp  8 bytes little-endian, seconds in the upper 32 bits and a
  //              binary fraction of a second in the lower 32;
  //   type 1, flags 1 (bit 2: varying record length; interface 0),
  //   rlen 2 (record length incl. this header), lctr 2 (loss counter),
  //   wlen 2 (length on the wire), all big-endian.
  // The fraction is rounded to the nearest 2^-32 s, which readers (Wireshark
  // rounds too) turn back into exactly the nanosecond of the pcap record.
  const std::uint64_t ns = time_ps / kNs;
  const std::uint64_t frac = ((ns % kNsPerSec) * (std::uint64_t{1} << 32) + kNsPerSec / 2) / kNsPerSec;
  const std::size_t body = std::min<std::size_t>(len, kPcapSnaplen - kErfHeaderSize);
  std::array<std::uint8_t, kErfHeaderSize> erf{};
  le(erf, 0, ((ns / kNsPerSec) << 32) + frac, 8);
  erf[8] = erf_type;
  erf[9] = 0x04;
  be(erf, 10, kErfHeaderSize + body, 2);
  be(erf, 12, 0, 2);
  be(erf, 14, std::min<std::size_t>(len, 0xFFFF), 2);

  std::array<std::uint8_t, 16> rec{};
  le(rec, 0, ns / kNsPerSec, 4);
  le(rec, 4, ns % kNsPerSec, 4);
  le(rec, 8, kErfHeaderSize + body, 4);
  le(rec, 12, kErfHeaderSize + len, 4);
  put(rec.data(), rec.size());
  put(erf.data(), erf.size());
  put(bytes, body);
  ++records_;
}

void PcapWriter::close() {
  if (out_ == nullptr) return;
  if (std::fclose(out_) != 0 && error_.empty()) error_ = "cannot write " + path_ + ": " + std::strerror(errno);
  out_ = nullptr;
}

void PcapWriter::put(const void* data, std::size_t len) {
  if (len == 0) return;
  if (std::fwrite(data, 1, len, out_) != len && error_.empty())
    error_ = "cannot write " + path_ + ": " + std::strerror(errno);
}

}  // namespace nicsim
