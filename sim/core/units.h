// Physical units used everywhere in nicsim: simulated time in integer
// picoseconds, bandwidth in bits per second, sizes in bytes, clocks in hertz.
// Integer units keep simulated time exact and runs deterministic.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace nicsim {

using Tick = std::uint64_t;  // simulated time, picoseconds
inline constexpr Tick kPs = 1;
inline constexpr Tick kNs = 1000;
inline constexpr Tick kUs = 1000 * kNs;
inline constexpr Tick kMs = 1000 * kUs;
inline constexpr Tick kSec = 1000 * kMs;
inline constexpr Tick kTickMax = ~Tick{0};

// What a parameter's number means. Every parameter has exactly one kind.
enum class UnitKind {
  Time,       // "100ns", "4.096us", "1ms"; stored as Tick (ps)
  Bandwidth,  // "8Gbps", "400MB/s", "1GiB/s"; stored as bits per second
  Size,       // "2KiB", "64B", "1MB"; stored as bytes
  Frequency,  // "133MHz"; stored as hertz
  Count,      // plain unsigned integer, "16"
  Ratio,      // real number, "0.9", "1e-12"
  Text,       // free text or one of a list of choices
  Bool,       // "true" / "false"
};
const char* unit_kind_name(UnitKind k);     // "time", "bandwidth", ...
const char* unit_kind_example(UnitKind k);  // "100ns", "8Gbps", ...

// Parsers return nullopt and set *error to a message that names the rule
// broken (e.g. "unknown time unit 'nx' (use ps, ns, us, ms, s)").
// Decimal fractions are allowed ("4.096us", "1.5GiB") when the result is
// a whole number of the base unit; a fractional base unit is an error.
// Negative values and overflow are errors.
std::optional<Tick> parse_time(std::string_view text, std::string* error);
// Accepts bps, Kbps, Mbps, Gbps, Tbps (decimal powers of ten, bits) and
// B/s, KB/s, MB/s, GB/s (decimal, bytes), KiB/s, MiB/s, GiB/s (binary).
std::optional<std::uint64_t> parse_bandwidth(std::string_view text, std::string* error);
// Accepts B, KB, MB, GB (decimal), KiB, MiB, GiB (binary); a bare number is bytes.
std::optional<std::uint64_t> parse_size(std::string_view text, std::string* error);
// Accepts Hz, kHz, MHz, GHz.
std::optional<std::uint64_t> parse_frequency(std::string_view text, std::string* error);
std::optional<std::uint64_t> parse_count(std::string_view text, std::string* error);
std::optional<double> parse_ratio(std::string_view text, std::string* error);
std::optional<bool> parse_bool(std::string_view text, std::string* error);

// a + b, saturating at kTickMax ("forever") instead of wrapping.
inline Tick add_saturating(Tick a, Tick b) { return b > kTickMax - a ? kTickMax : a + b; }
inline Tick mul_saturating(Tick a, Tick b) { return a != 0 && b > kTickMax / a ? kTickMax : a * b; }

// Human formatting with the largest unit that keeps the number >= 1,
// up to 3 decimals, trailing zeros dropped: "2.048us", "8Gbps", "2KiB".
std::string format_time(Tick t);
std::string format_bandwidth(std::uint64_t bits_per_second);
std::string format_size(std::uint64_t bytes);
std::string format_frequency(std::uint64_t hz);

// Time to put `bytes` on a wire of `bits_per_second`, rounded up to a whole
// picosecond. Exact integer arithmetic (128-bit intermediate). A rate of 0
// means "no limit" (0bps is the conventional unlimited default) and gives 0;
// a result beyond kTickMax saturates to kTickMax.
// Inline for the usual case (a rate, a product that fits in 64 bits: up to
// about 2 MB); the rest, out of line, gives the same result for it.
Tick serialization_time_wide(std::uint64_t bytes, std::uint64_t bits_per_second);
inline Tick serialization_time(std::uint64_t bytes, std::uint64_t bits_per_second) {
  if (bits_per_second == 0 || bytes > kTickMax / (8 * kSec)) return serialization_time_wide(bytes, bits_per_second);
  const std::uint64_t n = bytes * 8 * kSec;
  return n / bits_per_second + (n % bits_per_second != 0 ? 1 : 0);
}
// Duration of `cycles` cycles of a clock of `hz`, rounded up to a picosecond.
// hz == 0 gives 0 and overflow saturates, as for serialization_time.
Tick cycles_time_wide(std::uint64_t cycles, std::uint64_t hz);
inline Tick cycles_time(std::uint64_t cycles, std::uint64_t hz) {
  if (hz == 0 || cycles > kTickMax / kSec) return cycles_time_wide(cycles, hz);
  const std::uint64_t n = cycles * kSec;
  return n / hz + (n % hz != 0 ? 1 : 0);
}

}  // namespace nicsim
