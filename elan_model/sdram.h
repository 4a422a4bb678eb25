// The Elan's SDRAM: the bytes, kept in chunks made on first write (a 64 MiB
// card costs host memory only for what it holds; unwritten bytes read 0),
// and the timing of the Elan's own accesses: one at a time, each the
// access latency plus its bytes at the data rate. The host reaches the
// same bytes through BAR 1 (Elan3::CardBar), timed by the host bus.
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

#include "core/units.h"

namespace nicsim::elan3 {

class Sdram {
 public:
  Sdram(std::uint64_t bytes, Tick latency, std::uint64_t bits_per_second);
  std::uint64_t size() const { return bytes_; }
  bool contains(std::uint64_t off, std::uint64_t len) const { return off <= bytes_ && len <= bytes_ - off; }
  // Copies at once (the caller has checked contains()).
  void read(std::uint64_t off, void* to, std::uint64_t len) const;
  void write(std::uint64_t off, const void* from, std::uint64_t len);
  // When an access of `len` bytes the Elan asks for at `now` completes; the
  // memory is busy with its data until then less the latency.
  Tick access(Tick now, std::uint64_t len);

 private:
  static constexpr std::uint64_t kChunk = 64 * 1024;
  std::uint8_t* chunk(std::uint64_t index);
  std::uint64_t bytes_;
  Tick latency_;
  std::uint64_t bps_;
  Tick free_at_ = 0;
  std::vector<std::unique_ptr<std::uint8_t[]>> chunks_;
};

}  // namespace nicsim::elan3
