// A fingerprint of a run's event trajectory: one 64-bit hash folded over
// the protocol events in the order they happen (state-machine transitions,
// packets put on a wire), each with its simulated time. Two runs with the
// same model, scenario and seed give the same value; a change to any cost,
// protocol step or packet byte the model produces changes it. The hash is
// not cryptographic: it detects change, it does not resist forgery.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace nicsim {

class Fingerprint {
 public:
  Fingerprint() = default;
  // Goes on from another's value (a block's hash taken from another process).
  explicit Fingerprint(std::uint64_t value) : state_(value) {}
  void add(std::uint64_t value);
  void add(std::string_view text);
  void add_bytes(const std::uint8_t* data, std::size_t size);
  std::uint64_t value() const { return state_; }
  std::string hex() const;  // 16 lower-case hex digits

 private:
  std::uint64_t state_ = 0x6a09e667f3bcc909ull;  // any fixed start
};

}  // namespace nicsim
