#include "trace/pcap.h"

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <string>

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

namespace {

// A pcap record header for a frame of `len` bytes at `time_ps`, of which
// `captured` are kept.
std::array<std::uint8_t, 16> record_header(Tick time_ps, std::size_t captured, std::size_t len) {
  const std::uint64_t ns = time_ps / kNs;
  std::array<std::uint8_t, 16> rec{};
  le(rec, 0, ns / kNsPerSec, 4);
  le(rec, 4, ns % kNsPerSec, 4);
  le(rec, 8, captured, 4);
  le(rec, 12, len, 4);
  return rec;
}

// ERF record header (Endace ERF types document, "Generic ERF header"):
//   timestamp  8 bytes little-endian, seconds in the upper 32 bits and a
//              binary fraction of a second in the lower 32;
//   type 1, flags 1 (bit 2: varying record length; interface 0),
//   rlen 2 (record length incl. this header), lctr 2 (loss counter),
//   wlen 2 (length on the wire), all big-endian.
// The fraction is rounded to the nearest 2^-32 s, which readers (Wireshark
// rounds too) turn back into exactly the nanosecond of the pcap record.
std::array<std::uint8_t, kErfHeaderSize> erf_header(Tick time_ps, std::uint8_t erf_type, std::size_t body,
                                                    std::size_t len) {
  const std::uint64_t ns = time_ps / kNs;
  const std::uint64_t frac = ((ns % kNsPerSec) * (std::uint64_t{1} << 32) + kNsPerSec / 2) / kNsPerSec;
  std::array<std::uint8_t, kErfHeaderSize> erf{};
  le(erf, 0, ((ns / kNsPerSec) << 32) + frac, 8);
  erf[8] = erf_type;
  erf[9] = 0x04;
  be(erf, 10, kErfHeaderSize + body, 2);
  be(erf, 12, 0, 2);
  be(erf, 14, std::min<std::size_t>(len, 0xFFFF), 2);
  return erf;
}

std::size_t erf_body(std::size_t len) { return std::min<std::size_t>(len, kPcapSnaplen - kErfHeaderSize); }

}  // namespace

void PcapWriter::write(Tick time_ps, const std::uint8_t* bytes, std::size_t len) {
  if (out_ == nullptr) return;
  const std::size_t captured = std::min<std::size_t>(len, kPcapSnaplen);
  const auto rec = record_header(time_ps, captured, len);
  put(rec.data(), rec.size());
  put(bytes, captured);
  ++records_;
}

void PcapWriter::write_erf(Tick time_ps, std::uint8_t erf_type, const std::uint8_t* bytes, std::size_t len) {
  if (out_ == nullptr) return;
  const std::size_t body = erf_body(len);
  const auto rec = record_header(time_ps, kErfHeaderSize + body, kErfHeaderSize + len);
  const auto erf = erf_header(time_ps, erf_type, body, len);
  put(rec.data(), rec.size());
  put(erf.data(), erf.size());
  put(bytes, body);
  ++records_;
}

void PcapWriter::append_record(std::string& out, Tick time_ps, const std::uint8_t* bytes, std::size_t len) {
  const std::size_t captured = std::min<std::size_t>(len, kPcapSnaplen);
  const auto rec = record_header(time_ps, captured, len);
  out.append(reinterpret_cast<const char*>(rec.data()), rec.size());
  out.append(reinterpret_cast<const char*>(bytes), captured);
}

void PcapWriter::append_erf_record(std::string& out, Tick time_ps, std::uint8_t erf_type, const std::uint8_t* bytes,
                                   std::size_t len) {
  const std::size_t body = erf_body(len);
  const auto rec = record_header(time_ps, kErfHeaderSize + body, kErfHeaderSize + len);
  const auto erf = erf_header(time_ps, erf_type, body, len);
  out.append(reinterpret_cast<const char*>(rec.data()), rec.size());
  out.append(reinterpret_cast<const char*>(erf.data()), erf.size());
  out.append(reinterpret_cast<const char*>(bytes), body);
}

void PcapWriter::write_encoded(const char* record, std::size_t len) {
  if (out_ == nullptr) return;
  put(record, len);
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

namespace {
constexpr std::size_t kPlaceSize = 16;  // a held record's time and sequence
constexpr std::size_t kRecordHeaderSize = 16;

std::uint64_t load64(const std::string& s, std::uint64_t at) {
  std::uint64_t v = 0;
  std::memcpy(&v, s.data() + at, sizeof v);
  return v;
}

// A pcap record's length from its header's captured length.
std::uint64_t record_length(const std::string& s, std::uint64_t at) {
  std::uint32_t captured = 0;
  for (int i = 0; i < 4; ++i) captured |= std::uint32_t{static_cast<std::uint8_t>(s[at + 8 + i])} << (8 * i);
  return kRecordHeaderSize + captured;
}
}  // namespace

void HeldCapture::add(Tick time_ps, std::uint32_t device, const std::uint8_t* bytes, std::size_t len) {
  if (time_ps < written_before_)
    throw std::logic_error("a frame captured at " + std::to_string(time_ps) +
                           " ps, before the records already written (" + std::to_string(written_before_) + " ps)");
  if (chunks_.empty()) chunks_.emplace_back();
  if (device >= device_captures_.size()) device_captures_.resize(device + 1, 0);
  const std::uint64_t seq = std::uint64_t{device} << 40 | device_captures_[device]++;
  std::string& own = chunks_.front();
  own.append(reinterpret_cast<const char*>(&time_ps), sizeof time_ps);
  own.append(reinterpret_cast<const char*>(&seq), sizeof seq);
  index_.push_back({time_ps, seq, 0, own.size()});
  if (erf_type_ < 0)
    PcapWriter::append_record(own, time_ps, bytes, len);
  else
    PcapWriter::append_erf_record(own, time_ps, static_cast<std::uint8_t>(erf_type_), bytes, len);
}

std::string HeldCapture::export_held() {
  std::string out = chunks_.empty() ? std::string() : std::move(chunks_.front());
  chunks_.clear();
  index_.clear();
  return out;
}

bool HeldCapture::import_held(std::string bytes) {
  if (chunks_.empty()) chunks_.emplace_back();
  chunks_.push_back(std::move(bytes));
  return index_chunk(static_cast<std::uint32_t>(chunks_.size() - 1));
}

bool HeldCapture::index_chunk(std::uint32_t chunk) {
  const std::string& s = chunks_[chunk];
  std::uint64_t at = 0;
  while (at < s.size()) {
    if (s.size() - at < kPlaceSize + kRecordHeaderSize) return false;
    const Tick t = load64(s, at);
    const std::uint64_t seq = load64(s, at + 8);
    at += kPlaceSize;
    const std::uint64_t len = record_length(s, at);
    if (s.size() - at < len) return false;
    index_.push_back({t, seq, chunk, at});
    at += len;
  }
  return true;
}

void HeldCapture::write_entries(PcapWriter& out, std::vector<Entry>::iterator end) {
  std::sort(index_.begin(), end, [](const Entry& a, const Entry& b) { return a.t != b.t ? a.t < b.t : a.seq < b.seq; });
  for (auto e = index_.begin(); e != end; ++e) {
    const std::string& s = chunks_[e->chunk];
    out.write_encoded(s.data() + e->at, record_length(s, e->at));
  }
}

void HeldCapture::write_to(PcapWriter& out) {
  write_entries(out, index_.end());
  index_.clear();
  chunks_.clear();
}

// The records kept move to a new own chunk, so that what a process holds
// is what it has not written.
void HeldCapture::write_before(PcapWriter& out, Tick before) {
  const auto due = std::partition(index_.begin(), index_.end(), [before](const Entry& e) { return e.t < before; });
  write_entries(out, due);
  std::string kept;
  std::vector<Entry> rest;
  for (auto e = due; e != index_.end(); ++e) {
    if (e->chunk != 0) {
      rest.push_back(*e);
      continue;
    }
    const std::string& own = chunks_.front();
    kept.append(own, e->at - kPlaceSize, kPlaceSize + record_length(own, e->at));
    rest.push_back({e->t, e->seq, 0, kept.size() - record_length(own, e->at)});
  }
  if (!chunks_.empty()) chunks_.front() = std::move(kept);
  index_ = std::move(rest);
  written_before_ = std::max(written_before_, before);
}

}  // namespace nicsim
