#include "trace/fingerprint.h"

#include <fmt/format.h>

namespace nicsim {

namespace {
// A 64-bit finaliser (xor-shift, multiply): every input bit reaches every
// output bit, so folding values in order keeps their order in the hash.
std::uint64_t mix(std::uint64_t x) {
  x ^= x >> 31;
  x *= 0x7fb5d329728ea185ull;
  x ^= x >> 27;
  x *= 0x81dadef4bc2dd44dull;
  x ^= x >> 33;
  return x;
}
}  // namespace

void Fingerprint::add(std::uint64_t value) { state_ = mix(state_ ^ mix(value + 0x9e3779b97f4a7c15ull)); }

void Fingerprint::add(std::string_view text) {
  add_bytes(reinterpret_cast<const std::uint8_t*>(text.data()), text.size());
}

void Fingerprint::add_bytes(const std::uint8_t* data, std::size_t size) {
  add(size);
  std::size_t i = 0;
  for (; i + 8 <= size; i += 8) {
    std::uint64_t word = 0;
    for (int b = 0; b < 8; ++b) word |= std::uint64_t{data[i + b]} << (8 * b);
    add(word);
  }
  std::uint64_t tail = 0;
  for (int b = 0; i < size; ++i, ++b) tail |= std::uint64_t{data[i]} << (8 * b);
  add(tail);
}

std::string Fingerprint::hex() const { return fmt::format("{:016x}", state_); }

}  // namespace nicsim
