#include "ib_wire/ib_headers.h"

#include <algorithm>
#include <cstdio>

namespace nicsim::ib {
namespace {

void append_field(std::string& s, const char* name, std::uint64_t value) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%s%s=0x%llx", s.empty() ? "" : " ", name, static_cast<unsigned long long>(value));
  s += buf;
}

template <std::size_t N>
void append_bytes(std::string& s, const char* name, const std::array<std::uint8_t, N>& bytes) {
  s += s.empty() ? "" : " ";
  s += name;
  s += '=';
  static constexpr char kHex[] = "0123456789abcdef";
  for (std::size_t i = 0; i < N; ++i) {
    if (i > 0 && i % 2 == 0) s += ':';
    s += kHex[bytes[i] >> 4];
    s += kHex[bytes[i] & 0xF];
  }
}

constexpr std::uint64_t max_of(unsigned width) {
  return width == 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << width) - 1;
}

}  // namespace

// Each table row becomes one statement in each method; a field that would
// span more than 8 bytes, or run past the header, fails to compile.
#define NICSIM_IB_CHECK(name, bit, width)                  \
  static_assert(field_fits_in_8_bytes(bit, width), #name); \
  static_assert((bit) + (width) <= 8 * kSize, #name);
#define NICSIM_IB_CHECK_BYTES(name, offset, len) static_assert((offset) + (len) <= kSize, #name);
#define NICSIM_IB_PUT(name, bit, width) put_bits(out.data(), bit, width, name);
#define NICSIM_IB_PUT_BYTES(name, offset, len) std::copy(name.begin(), name.end(), out.begin() + (offset));
#define NICSIM_IB_GET(name, bit, width) h.name = static_cast<decltype(h.name)>(get_bits(in.data(), bit, width));
#define NICSIM_IB_GET_BYTES(name, offset, len) std::copy_n(in.begin() + (offset), len, h.name.begin());
#define NICSIM_IB_FITS(name, bit, width) ok = ok && std::uint64_t{name} <= max_of(width);
#define NICSIM_IB_PRINT(name, bit, width) append_field(s, #name, name);
#define NICSIM_IB_PRINT_BYTES(name, offset, len) append_bytes(s, #name, name);

#define NICSIM_IB_DEFINE_HEADER(Type, FIELDS, SIZE, DISPLAY)           \
  void Type::encode(std::span<std::uint8_t, kSize> out) const {        \
    FIELDS(NICSIM_IB_CHECK, NICSIM_IB_CHECK_BYTES)                     \
    std::fill(out.begin(), out.end(), std::uint8_t{0});                \
    FIELDS(NICSIM_IB_PUT, NICSIM_IB_PUT_BYTES)                         \
  }                                                                    \
  std::optional<Type> Type::decode(std::span<const std::uint8_t> in) { \
    if (in.size() < kSize) return std::nullopt;                        \
    Type h;                                                            \
    FIELDS(NICSIM_IB_GET, NICSIM_IB_GET_BYTES)                         \
    return h;                                                          \
  }                                                                    \
  bool Type::fits() const {                                            \
    bool ok = true;                                                    \
    FIELDS(NICSIM_IB_FITS, NICSIM_IB_NO_BYTES)                         \
    return ok;                                                         \
  }                                                                    \
  std::string Type::to_string() const {                                \
    std::string s;                                                     \
    FIELDS(NICSIM_IB_PRINT, NICSIM_IB_PRINT_BYTES)                     \
    return s;                                                          \
  }

NICSIM_IB_HEADERS(NICSIM_IB_DEFINE_HEADER)

}  // namespace nicsim::ib
