#include "hca_model/wire/ib_crc.h"

#include <algorithm>
#include <array>

#include "hca_model/wire/ib_headers.h"

namespace nicsim::ib {
namespace {

// Table-driven reflected CRC, eight bytes per step ("slicing by 8"): table k
// holds the register contribution of a byte followed by k zero bytes, so
// eight lookups replace eight dependent byte steps. Tables are built at
// compile time from the polynomial alone.
template <typename Reg, Reg kReflectedPoly>
struct ReflectedCrc {
  static constexpr std::array<std::array<Reg, 256>, 8> kTables = [] {
    std::array<std::array<Reg, 256>, 8> t{};
    for (unsigned i = 0; i < 256; ++i) {
      Reg c = static_cast<Reg>(i);
      for (int bit = 0; bit < 8; ++bit)
        c = (c & 1u) ? static_cast<Reg>((c >> 1) ^ kReflectedPoly) : static_cast<Reg>(c >> 1);
      t[0][i] = c;
    }
    for (unsigned k = 1; k < 8; ++k)
      for (unsigned i = 0; i < 256; ++i)
        t[k][i] = static_cast<Reg>((t[k - 1][i] >> 8) ^ t[0][t[k - 1][i] & 0xFFu]);
    return t;
  }();

  static Reg step(Reg reg, std::uint8_t byte) {
    return static_cast<Reg>((reg >> 8) ^ kTables[0][(reg ^ byte) & 0xFFu]);
  }

  static Reg update(Reg reg, const std::uint8_t* p, std::size_t n) {
    while (n >= 8) {
      std::uint64_t w = 0;
      for (int i = 7; i >= 0; --i) w = (w << 8) | p[i];  // little-endian load
      w ^= reg;  // the register lines up with the first bytes of the block
      Reg r = 0;
      for (unsigned i = 0; i < 8; ++i) r ^= kTables[7 - i][(w >> (8 * i)) & 0xFFu];
      reg = r;
      p += 8;
      n -= 8;
    }
    while (n--) reg = step(reg, *p++);
    return reg;
  }
};

// 0x04C11DB7 and 0x100B with their bit order reversed.
using Crc32Impl = ReflectedCrc<std::uint32_t, 0xEDB88320u>;
using Crc16Impl = ReflectedCrc<std::uint16_t, 0xD008u>;

std::uint32_t byteswap32(std::uint32_t v) {
  return (v >> 24) | ((v >> 8) & 0xFF00u) | ((v << 8) & 0xFF0000u) | (v << 24);
}
std::uint16_t byteswap16(std::uint16_t v) { return static_cast<std::uint16_t>((v >> 8) | (v << 8)); }

}  // namespace

void Crc32::update(std::span<const std::uint8_t> bytes) {
  reg_ = Crc32Impl::update(reg_, bytes.data(), bytes.size());
}
void Crc32::update(std::uint8_t byte) { reg_ = Crc32Impl::step(reg_, byte); }

void Crc16Vcrc::update(std::span<const std::uint8_t> bytes) {
  reg_ = Crc16Impl::update(reg_, bytes.data(), bytes.size());
}
void Crc16Vcrc::update(std::uint8_t byte) { reg_ = Crc16Impl::step(reg_, byte); }

std::uint32_t crc32(std::span<const std::uint8_t> bytes) {
  Crc32 c;
  c.update(bytes);
  return c.value();
}

std::uint16_t crc16_vcrc(std::span<const std::uint8_t> bytes) {
  Crc16Vcrc c;
  c.update(bytes);
  return c.value();
}

std::uint32_t compute_icrc(std::span<const std::uint8_t> packet) {
  if (packet.size() < Lrh::kSize) return 0;
  const std::uint8_t lnh = packet[1] & 0x3u;
  if (lnh != kLnhIbaLocal && lnh != kLnhIbaGlobal) return 0;
  const bool global = lnh == kLnhIbaGlobal;
  const std::size_t bth_at = Lrh::kSize + (global ? Grh::kSize : 0);
  const std::size_t headers = bth_at + Bth::kSize;
  if (packet.size() < headers) return 0;

  // The variant fields live in the first 60 bytes at most; mask a copy of
  // them and run the rest of the packet straight from the caller's buffer.
  std::array<std::uint8_t, Lrh::kSize + Grh::kSize + Bth::kSize> head{};
  std::copy_n(packet.begin(), headers, head.begin());
  if (global) {
    std::fill_n(head.begin(), Lrh::kSize, 0xFF);  // a router rewrites all of the LRH
    std::uint8_t* grh = head.data() + Lrh::kSize;
    grh[0] |= 0x0F;  // TClass, upper nibble (IPVer stays)
    grh[1] = 0xFF;   // TClass, lower nibble, and FlowLabel
    grh[2] = 0xFF;
    grh[3] = 0xFF;
    grh[7] = 0xFF;  // HopLmt
  } else {
    head[0] |= 0xF0;  // VL (LVer stays)
  }
  head[bth_at + 4] = 0xFF;  // BTH resv8a

  Crc32 c;
  c.update(std::span<const std::uint8_t>(head.data(), headers));
  c.update(packet.subspan(headers));
  return byteswap32(c.value());
}

std::uint16_t compute_vcrc(std::span<const std::uint8_t> packet) { return byteswap16(crc16_vcrc(packet)); }

bool refresh_vcrc(std::span<std::uint8_t> packet) {
  if (packet.size() < kVcrcSize) return false;
  const std::size_t at = packet.size() - kVcrcSize;
  store_vcrc(packet.data() + at, compute_vcrc(packet.first(at)));
  return true;
}

}  // namespace nicsim::ib
