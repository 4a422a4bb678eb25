#include "core/units.h"

#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>

namespace nicsim {

namespace {

using U128 = unsigned __int128;
constexpr std::uint64_t kU64Max = std::numeric_limits<std::uint64_t>::max();

struct UnitEntry {
  const char* suffix;
  U128 multiplier;  // base units per one of this unit
};

// Everything a unit-carrying parser needs to know about its kind, so that one
// routine handles time, bandwidth, size and frequency alike.
struct Family {
  const char* what;       // "time", used in "'x' is not a time"
  const char* base_name;  // "picoseconds", used in "fractional picoseconds"
  const char* help;       // "ps, ns, us, ms, s"
  bool bare_is_base;      // a number without a unit means base units
  const UnitEntry* units;
  std::size_t unit_count;
};

constexpr U128 kKi = 1024;

const UnitEntry kTimeUnits[] = {
    {"ps", kPs}, {"ns", kNs}, {"us", kUs}, {"ms", kMs}, {"s", kSec},
};
const UnitEntry kBandwidthUnits[] = {
    {"bps", 1},
    {"Kbps", 1000},
    {"kbps", 1000},
    {"Mbps", 1000000},
    {"Gbps", 1000000000},
    {"Tbps", 1000000000000},
    {"B/s", 8},
    {"KB/s", 8 * U128{1000}},
    {"kB/s", 8 * U128{1000}},
    {"MB/s", 8 * U128{1000000}},
    {"GB/s", 8 * U128{1000000000}},
    {"KiB/s", 8 * kKi},
    {"MiB/s", 8 * kKi* kKi},
    {"GiB/s", 8 * kKi* kKi* kKi},
};
const UnitEntry kSizeUnits[] = {
    {"B", 1},
    {"KB", 1000},
    {"kB", 1000},
    {"MB", 1000000},
    {"GB", 1000000000},
    {"TB", 1000000000000},
    {"KiB", kKi},
    {"MiB", kKi* kKi},
    {"GiB", kKi* kKi* kKi},
    {"TiB", kKi* kKi* kKi* kKi},
};
const UnitEntry kFrequencyUnits[] = {
    {"Hz", 1},
    {"kHz", 1000},
    {"MHz", 1000000},
    {"GHz", 1000000000},
};

const Family kTime{"time", "picoseconds", "ps, ns, us, ms, s", false, kTimeUnits, std::size(kTimeUnits)};
const Family kBandwidth{
    "bandwidth", "bits per second", "bps, Kbps, Mbps, Gbps, Tbps, B/s, KB/s, MB/s, GB/s, KiB/s, MiB/s, GiB/s",
    false,       kBandwidthUnits,   std::size(kBandwidthUnits)};
const Family kSize{"size", "bytes", "B, KB, MB, GB, TB, KiB, MiB, GiB, TiB", true, kSizeUnits, std::size(kSizeUnits)};
const Family kFrequency{"frequency", "hertz", "Hz, kHz, MHz, GHz", false, kFrequencyUnits, std::size(kFrequencyUnits)};

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

std::string_view trim(std::string_view s) {
  while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
  return s;
}

bool is_digit(char c) { return c >= '0' && c <= '9'; }

template <typename T>
std::optional<T> fail(std::string* error, std::string message) {
  if (error) *error = std::move(message);
  return std::nullopt;
}

std::string quoted(std::string_view s) {
  std::string q;
  q.reserve(s.size() + 2);
  q.append(1, '\'').append(s).append(1, '\'');
  return q;
}

// Parses "<digits>[.<digits>]<spaces><unit>" exactly: the decimal is kept as
// an integer mantissa and a count of fraction digits, so "4.096us" becomes
// 4096 * 1e6 / 1e3 ps with no floating point anywhere.
std::optional<std::uint64_t> parse_with_units(std::string_view original, const Family& f, std::string* error) {
  std::string_view text = trim(original);
  if (text.empty()) return fail<std::uint64_t>(error, std::string("empty ") + f.what + " value");
  if (text.front() == '-') {
    return fail<std::uint64_t>(error, std::string("negative ") + f.what + " " + quoted(text) + " is not allowed");
  }
  std::size_t i = 0;
  std::string_view int_digits, frac_digits;
  std::size_t start = i;
  while (i < text.size() && is_digit(text[i])) ++i;
  int_digits = text.substr(start, i - start);
  if (i < text.size() && text[i] == '.') {
    ++i;
    start = i;
    while (i < text.size() && is_digit(text[i])) ++i;
    frac_digits = text.substr(start, i - start);
  }
  if (int_digits.empty() && frac_digits.empty()) {
    return fail<std::uint64_t>(
        error, quoted(text) + " is not a " + f.what + " (expected a number and a unit: " + f.help + ")");
  }
  std::string_view unit = trim(text.substr(i));

  const UnitEntry* entry = nullptr;
  for (std::size_t u = 0; u < f.unit_count; ++u) {
    if (unit == f.units[u].suffix) entry = &f.units[u];
  }
  U128 multiplier = 1;
  if (entry) {
    multiplier = entry->multiplier;
  } else if (unit.empty()) {
    if (!f.bare_is_base) {
      return fail<std::uint64_t>(
          error, std::string("missing ") + f.what + " unit in " + quoted(text) + " (use " + f.help + ")");
    }
  } else {
    return fail<std::uint64_t>(error,
                               std::string("unknown ") + f.what + " unit " + quoted(unit) + " (use " + f.help + ")");
  }

  // Trailing fraction zeros carry no value; dropping them keeps the mantissa
  // small and "1.000000ns" legal.
  while (!frac_digits.empty() && frac_digits.back() == '0') frac_digits.remove_suffix(1);
  const U128 kMantissaCap = static_cast<U128>(10000000000000ULL) * 1000000000000ULL;  // 1e25
  U128 mantissa = 0;
  auto accumulate = [&](std::string_view digits) {
    for (char c : digits) {
      mantissa = mantissa * 10 + static_cast<unsigned>(c - '0');
      if (mantissa > kMantissaCap) return false;
    }
    return true;
  };
  auto overflow = [&] {
    return fail<std::uint64_t>(error, "overflow: " + quoted(text) + " does not fit in 64 bits of " + f.base_name);
  };
  if (!accumulate(int_digits) || !accumulate(frac_digits)) return overflow();
  auto fractional = [&] {
    return fail<std::uint64_t>(error, std::string("fractional ") + f.base_name + ": " + quoted(text) +
                                          " is not a whole number of " + f.base_name);
  };
  // Beyond 30 fraction digits no multiplier here (at most ~2^43) can make the
  // value whole, and 10^30 still fits in 128 bits.
  if (frac_digits.size() > 30) return fractional();
  U128 divisor = 1;
  for (std::size_t d = 0; d < frac_digits.size(); ++d) divisor *= 10;
  U128 scaled = mantissa * multiplier;  // < 1e25 * 2^43 < 2^128
  if (scaled % divisor != 0) return fractional();
  U128 value = scaled / divisor;
  if (value > kU64Max) return overflow();
  return static_cast<std::uint64_t>(value);
}

struct FormatUnit {
  const char* suffix;
  std::uint64_t size;
};

// Largest unit that keeps the number >= 1, rounded half up to 3 decimals. A
// value that rounds up to the next unit ("999.9995us") moves to that unit.
std::string format_scaled(std::uint64_t value, const FormatUnit* units, std::size_t count) {
  std::size_t pick = 0;
  for (std::size_t u = 0; u < count; ++u) {
    if (value >= units[u].size) pick = u;
  }
  auto milli = [&](std::size_t u) { return (static_cast<U128>(value) * 1000 + units[u].size / 2) / units[u].size; };
  U128 m = milli(pick);
  if (pick + 1 < count) {
    U128 next_in_milli = static_cast<U128>(units[pick + 1].size) / units[pick].size * 1000;
    if (m >= next_in_milli) {
      ++pick;
      m = milli(pick);
    }
  }
  U128 whole = m / 1000;
  unsigned frac = static_cast<unsigned>(m % 1000);
  // whole <= value, so it fits in 64 bits.
  std::string out = std::to_string(static_cast<std::uint64_t>(whole));
  if (frac != 0) {
    char buf[5];
    buf[0] = '.';
    buf[1] = static_cast<char>('0' + frac / 100);
    buf[2] = static_cast<char>('0' + frac / 10 % 10);
    buf[3] = static_cast<char>('0' + frac % 10);
    std::size_t len = 4;
    while (buf[len - 1] == '0') --len;
    out.append(buf, len);
  }
  out += units[pick].suffix;
  return out;
}

const FormatUnit kTimeFormat[] = {
    {"ps", kPs}, {"ns", kNs}, {"us", kUs}, {"ms", kMs}, {"s", kSec},
};
const FormatUnit kBandwidthFormat[] = {
    {"bps", 1}, {"Kbps", 1000}, {"Mbps", 1000000}, {"Gbps", 1000000000}, {"Tbps", 1000000000000},
};
const FormatUnit kSizeFormat[] = {
    {"B", 1}, {"KiB", 1ULL << 10}, {"MiB", 1ULL << 20}, {"GiB", 1ULL << 30}, {"TiB", 1ULL << 40},
};
const FormatUnit kFrequencyFormat[] = {
    {"Hz", 1},
    {"kHz", 1000},
    {"MHz", 1000000},
    {"GHz", 1000000000},
};

Tick ceil_div_saturating(U128 numerator, std::uint64_t denominator) {
  if (denominator == 0) return 0;
  if (!(numerator >> 64)) {
    // The usual case: a 64-bit division instead of a 128-bit one.
    const auto n = static_cast<std::uint64_t>(numerator);
    return n / denominator + (n % denominator != 0 ? 1 : 0);
  }
  U128 q = numerator / denominator + (numerator % denominator != 0 ? 1 : 0);
  return q > kU64Max ? kTickMax : static_cast<Tick>(q);
}

}  // namespace

const char* unit_kind_name(UnitKind k) {
  switch (k) {
    case UnitKind::Time:
      return "time";
    case UnitKind::Bandwidth:
      return "bandwidth";
    case UnitKind::Size:
      return "size";
    case UnitKind::Frequency:
      return "frequency";
    case UnitKind::Count:
      return "count";
    case UnitKind::Ratio:
      return "ratio";
    case UnitKind::Text:
      return "text";
    case UnitKind::Bool:
      return "bool";
  }
  return "?";
}

const char* unit_kind_example(UnitKind k) {
  switch (k) {
    case UnitKind::Time:
      return "100ns";
    case UnitKind::Bandwidth:
      return "8Gbps";
    case UnitKind::Size:
      return "2KiB";
    case UnitKind::Frequency:
      return "133MHz";
    case UnitKind::Count:
      return "16";
    case UnitKind::Ratio:
      return "0.9";
    case UnitKind::Text:
      return "pcix-133";
    case UnitKind::Bool:
      return "true";
  }
  return "?";
}

std::optional<Tick> parse_time(std::string_view text, std::string* error) {
  return parse_with_units(text, kTime, error);
}

std::optional<std::uint64_t> parse_bandwidth(std::string_view text, std::string* error) {
  return parse_with_units(text, kBandwidth, error);
}

std::optional<std::uint64_t> parse_size(std::string_view text, std::string* error) {
  return parse_with_units(text, kSize, error);
}

std::optional<std::uint64_t> parse_frequency(std::string_view text, std::string* error) {
  return parse_with_units(text, kFrequency, error);
}

std::optional<std::uint64_t> parse_count(std::string_view original, std::string* error) {
  std::string_view text = trim(original);
  if (text.empty()) return fail<std::uint64_t>(error, "empty count value");
  if (text.front() == '-') {
    return fail<std::uint64_t>(error, "negative count " + quoted(text) + " is not allowed");
  }
  std::uint64_t value = 0;
  for (char c : text) {
    if (!is_digit(c)) {
      return fail<std::uint64_t>(error, quoted(text) + " is not a count (a whole number such as 16)");
    }
    unsigned d = static_cast<unsigned>(c - '0');
    if (value > (kU64Max - d) / 10) {
      return fail<std::uint64_t>(error, "overflow: " + quoted(text) + " does not fit in 64 bits");
    }
    value = value * 10 + d;
  }
  return value;
}

std::optional<double> parse_ratio(std::string_view original, std::string* error) {
  std::string_view text = trim(original);
  if (text.empty()) return fail<double>(error, "empty ratio value");
  if (text.front() == '-') {
    return fail<double>(error, "negative ratio " + quoted(text) + " is not allowed");
  }
  double value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec == std::errc::result_out_of_range) {
    return fail<double>(error, "overflow: ratio " + quoted(text) + " is out of range");
  }
  if (ec != std::errc() || end != text.data() + text.size()) {
    return fail<double>(error, quoted(text) + " is not a ratio (a real number such as 0.9 or 1e-9)");
  }
  if (!std::isfinite(value)) {
    return fail<double>(error, "ratio " + quoted(text) + " is not a finite number");
  }
  return value;
}

std::optional<bool> parse_bool(std::string_view original, std::string* error) {
  std::string_view text = trim(original);
  if (text == "true") return true;
  if (text == "false") return false;
  return fail<bool>(error, quoted(text) + " is not a bool (use true or false)");
}

std::string format_time(Tick t) { return format_scaled(t, kTimeFormat, std::size(kTimeFormat)); }

std::string format_bandwidth(std::uint64_t bits_per_second) {
  return format_scaled(bits_per_second, kBandwidthFormat, std::size(kBandwidthFormat));
}

std::string format_size(std::uint64_t bytes) { return format_scaled(bytes, kSizeFormat, std::size(kSizeFormat)); }

std::string format_frequency(std::uint64_t hz) {
  return format_scaled(hz, kFrequencyFormat, std::size(kFrequencyFormat));
}

Tick serialization_time_wide(std::uint64_t bytes, std::uint64_t bits_per_second) {
  return ceil_div_saturating(static_cast<U128>(bytes) * 8 * kSec, bits_per_second);
}

Tick cycles_time_wide(std::uint64_t cycles, std::uint64_t hz) {
  return ceil_div_saturating(static_cast<U128>(cycles) * kSec, hz);
}

}  // namespace nicsim
