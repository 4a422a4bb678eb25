// The Elan's SDRAM (sdram.h).
#include "elan_model/sdram.h"

#include <algorithm>
#include <cstring>

namespace nicsim::elan3 {

Sdram::Sdram(std::uint64_t bytes, Tick latency, std::uint64_t bits_per_second)
    : bytes_(bytes), latency_(latency), bps_(bits_per_second), chunks_((bytes + kChunk - 1) / kChunk) {}

std::uint8_t* Sdram::chunk(std::uint64_t index) {
  auto& c = chunks_[index];
  if (!c) c = std::make_unique<std::uint8_t[]>(kChunk);  // zeroed
  return c.get();
}

void Sdram::read(std::uint64_t off, void* to, std::uint64_t len) const {
  auto* out = static_cast<std::uint8_t*>(to);
  while (len) {
    const std::uint64_t in = off % kChunk;
    const std::uint64_t n = std::min(len, kChunk - in);
    const auto& c = chunks_[off / kChunk];
    if (c)
      std::memcpy(out, c.get() + in, n);
    else
      std::memset(out, 0, n);
    out += n;
    off += n;
    len -= n;
  }
}

void Sdram::write(std::uint64_t off, const void* from, std::uint64_t len) {
  const auto* in_bytes = static_cast<const std::uint8_t*>(from);
  while (len) {
    const std::uint64_t in = off % kChunk;
    const std::uint64_t n = std::min(len, kChunk - in);
    std::memcpy(chunk(off / kChunk) + in, in_bytes, n);
    in_bytes += n;
    off += n;
    len -= n;
  }
}

Tick Sdram::access(Tick now, std::uint64_t len) {
  const Tick start = std::max(now, free_at_);
  const Tick data = serialization_time(len, bps_);
  free_at_ = start + data;
  return start + latency_ + data;
}

}  // namespace nicsim::elan3
