#include "ib_wire/ib_crc.h"

#include <algorithm>
#include <array>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "ib_wire/ib_headers.h"

namespace nicsim::ib {
namespace {

// Table-driven reflected CRC, eight bytes per step ("slicing by 8"): table k
// holds the register contribution of a byte followed by k zero bytes, so
// eight lookups replace eight dependent byte steps. Tables are built at
// compile time from the polynomial alone. This is the portable path, and the
// one for short pieces and for the tail of the folded path below.
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
      for (unsigned i = 0; i < 256; ++i) t[k][i] = static_cast<Reg>((t[k - 1][i] >> 8) ^ t[0][t[k - 1][i] & 0xFFu]);
    return t;
  }();

  static Reg step(Reg reg, std::uint8_t byte) {
    return static_cast<Reg>((reg >> 8) ^ kTables[0][(reg ^ byte) & 0xFFu]);
  }

  // The register after the eight bytes of `w` (little-endian) from a zero register.
  static Reg block(std::uint64_t w) {
    Reg r = 0;
    for (unsigned i = 0; i < 8; ++i) r ^= kTables[7 - i][(w >> (8 * i)) & 0xFFu];
    return r;
  }

  static Reg update(Reg reg, const std::uint8_t* p, std::size_t n) {
    while (n >= 8) {
      std::uint64_t w = 0;
      for (int i = 7; i >= 0; --i) w = (w << 8) | p[i];  // little-endian load
      w ^= reg;                                          // the register lines up with the first bytes of the block
      reg = block(w);
      p += 8;
      n -= 8;
    }
    while (n--) reg = step(reg, *p++);
    return reg;
  }
};

#if defined(__x86_64__)
// Carry-less multiplication folding (PCLMULQDQ), for any reflected CRC of
// width W <= 32 with polynomial P (normal form, without the x^W term).
//
// Sixteen message bytes loaded little-endian into a 128-bit lane put the
// message's i-th bit (in sending order) at lane bit i; read as a polynomial
// with lane bit i standing for x^(127-i), the lane is the message block with
// its first bit as the highest coefficient. Such a lane A followed by a lane
// B is A*x^128 + B, and modulo P that equals A_hi*x^192 + A_lo*x^128 + B,
// where A_hi is the low quadword (x^127..x^64) and A_lo the high one. A
// carry-less product of two quadwords in this bit order comes out as the
// product times x in the 128-bit order, so the folding constants are
// K_hi = x^(D+63) mod P and K_lo = x^(D-1) mod P for a fold over D bits;
// the folded value has degree below 96 and is again a lane. Four running
// lanes fold 64 bytes per step, then fold into one lane R whose polynomial is
// congruent to the message's so far, so that the CRC register is that of
// R's sixteen bytes fed to the table-driven CRC from a zero register; the
// bytes after the last whole lane follow through the tables as well. The
// register's preset enters as the table code does it: XORed into the first
// W bits of the message.
template <unsigned W, std::uint32_t kPoly>
struct FoldedCrc {
  // x^k mod P, as a polynomial in the low W bits (bit d: coefficient of x^d).
  static constexpr std::uint64_t x_pow_mod(unsigned k) {
    std::uint64_t r = 1;
    const std::uint64_t top = std::uint64_t{1} << W;
    for (unsigned i = 0; i < k; ++i) {
      r <<= 1;
      if (r & top) r ^= top | kPoly;
    }
    return r;
  }
  // A polynomial of degree < 64 in quadword order (bit j: coefficient of x^(63-j)).
  static constexpr std::uint64_t quad(std::uint64_t poly) {
    std::uint64_t q = 0;
    for (unsigned d = 0; d < 64; ++d)
      if (poly >> d & 1) q |= std::uint64_t{1} << (63 - d);
    return q;
  }
  static constexpr std::uint64_t kFold2048Hi = quad(x_pow_mod(2048 + 63)), kFold2048Lo = quad(x_pow_mod(2048 - 1));
  static constexpr std::uint64_t kFold512Hi = quad(x_pow_mod(512 + 63)), kFold512Lo = quad(x_pow_mod(512 - 1));
  static constexpr std::uint64_t kFold128Hi = quad(x_pow_mod(128 + 63)), kFold128Lo = quad(x_pow_mod(128 - 1));
  // For the last lane's reduction (lane_register): x^(63+W) mod P.
  static constexpr std::uint64_t kLaneHi = quad(x_pow_mod(63 + W));
};

using Crc32Fold = FoldedCrc<32, 0x04C11DB7u>;
using Crc16Fold = FoldedCrc<16, 0x100Bu>;

#define NICSIM_FOLD_INLINE __attribute__((target("pclmul,sse4.1"))) inline
NICSIM_FOLD_INLINE __m128i fold(__m128i acc, __m128i k, __m128i next) {
  return _mm_xor_si128(_mm_xor_si128(_mm_clmulepi64_si128(acc, k, 0x00), _mm_clmulepi64_si128(acc, k, 0x11)), next);
}
NICSIM_FOLD_INLINE __m128i load128(const std::uint8_t* q) {
  return _mm_loadu_si128(reinterpret_cast<const __m128i*>(q));
}

// Sixty-four zero bytes: the OR mask of a plain CRC (see fold_lanes).
constexpr std::uint8_t kNoMask[64] = {};

// Folds p[0..n) (n >= 64, any alignment) starting from register `reg` and
// returns the 16 bytes of the folded lane (to be run through the tables from a
// zero register) and, via `used`, how many bytes it consumed (a multiple of 16).
// The first 64 message bytes are taken ORed with mask[0..64) (the ICRC's
// variant fields read as ones; kNoMask for a plain CRC).
template <class Fold, typename Reg>
__attribute__((target("pclmul,sse4.1"))) __m128i fold_lanes(Reg reg, const std::uint8_t* p, std::size_t n,
                                                            const std::uint8_t* mask, std::size_t* used) {
  __m128i x0 = _mm_xor_si128(_mm_or_si128(load128(p), load128(mask)),
                             _mm_cvtsi32_si128(static_cast<int>(static_cast<std::uint32_t>(reg))));
  __m128i x1 = _mm_or_si128(load128(p + 16), load128(mask + 16));
  __m128i x2 = _mm_or_si128(load128(p + 32), load128(mask + 32));
  __m128i x3 = _mm_or_si128(load128(p + 48), load128(mask + 48));
  // Pointer loops against precomputed limits: one compare per step.
  const std::uint8_t* q = p + 64;
  const std::uint8_t* const last64 = p + n - 64;  // the last start of a whole 64-byte block
  const __m128i k512 =
      _mm_set_epi64x(static_cast<long long>(Fold::kFold512Lo), static_cast<long long>(Fold::kFold512Hi));
  for (; q <= last64; q += 64) {
    x0 = fold(x0, k512, load128(q));
    x1 = fold(x1, k512, load128(q + 16));
    x2 = fold(x2, k512, load128(q + 32));
    x3 = fold(x3, k512, load128(q + 48));
  }
  const __m128i k128 =
      _mm_set_epi64x(static_cast<long long>(Fold::kFold128Lo), static_cast<long long>(Fold::kFold128Hi));
  __m128i x = fold(fold(fold(x0, k128, x1), k128, x2), k128, x3);
  for (const std::uint8_t* const last16 = p + n - 16; q <= last16; q += 16) x = fold(x, k128, load128(q));
  *used = static_cast<std::size_t>(q - p);
  return x;
}

// Sixteen lanes in four 512-bit registers (VPCLMULQDQ): each step folds
// 256 bytes with one load, two multiplications and one three-way XOR per
// register, the four independent so that the multiplications overlap. The
// registers then fold into one (64 bytes apart), its lanes into one lane.
// For n >= 256.
#define NICSIM_WIDE_TARGET __attribute__((target("avx512f,vpclmulqdq,pclmul,sse4.1")))
NICSIM_WIDE_TARGET inline __m512i load512(const std::uint8_t* q) { return _mm512_loadu_si512(q); }
NICSIM_WIDE_TARGET inline __m512i constant512(std::uint64_t hi, std::uint64_t lo) {
  const auto h = static_cast<long long>(hi), l = static_cast<long long>(lo);
  return _mm512_set_epi64(l, h, l, h, l, h, l, h);
}
NICSIM_WIDE_TARGET inline __m512i fold512(__m512i acc, __m512i k, __m512i next) {
  return _mm512_ternarylogic_epi64(_mm512_clmulepi64_epi128(acc, k, 0x00), _mm512_clmulepi64_epi128(acc, k, 0x11), next,
                                   0x96);
}

template <class Fold, typename Reg>
NICSIM_WIDE_TARGET __m128i fold_lanes_wide(Reg reg, const std::uint8_t* p, std::size_t n, const std::uint8_t* mask,
                                           std::size_t* used) {
  const auto load = load512;
  const auto constant = constant512;
  __m512i x0 = _mm512_xor_si512(_mm512_or_si512(load(p), load(mask)),
                                _mm512_set_epi64(0, 0, 0, 0, 0, 0, 0, static_cast<long long>(std::uint64_t{reg})));
  __m512i x1 = load(p + 64), x2 = load(p + 128), x3 = load(p + 192);
  const __m512i k2048 = constant(Fold::kFold2048Hi, Fold::kFold2048Lo);
  std::size_t at = 256;
  for (; n - at >= 256; at += 256) {
    x0 = fold512(x0, k2048, load(p + at));
    x1 = fold512(x1, k2048, load(p + at + 64));
    x2 = fold512(x2, k2048, load(p + at + 128));
    x3 = fold512(x3, k2048, load(p + at + 192));
  }
  const __m512i k512 = constant(Fold::kFold512Hi, Fold::kFold512Lo);
  __m512i x = fold512(fold512(fold512(x0, k512, x1), k512, x2), k512, x3);
  for (; n - at >= 64; at += 64) x = fold512(x, k512, load(p + at));
  const __m128i k128 =
      _mm_set_epi64x(static_cast<long long>(Fold::kFold128Lo), static_cast<long long>(Fold::kFold128Hi));
  alignas(64) __m128i lane[4];
  _mm512_store_si512(lane, x);
  __m128i r = fold(fold(fold(lane[0], k128, lane[1]), k128, lane[2]), k128, lane[3]);
  for (; n - at >= 16; at += 16) r = fold(r, k128, _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + at)));
  *used = at;
  return r;
}

// What the CPU offers, found once when the library loads. Anything that
// computes a CRC before then sees all false and takes the table path: the
// same result.
struct CpuFolding {
  bool clmul = false, wide = false;
};
CpuFolding detect_folding() {
  __builtin_cpu_init();  // needed before __builtin_cpu_supports in a static initialiser
  CpuFolding c;
  c.clmul = __builtin_cpu_supports("pclmul") && __builtin_cpu_supports("sse4.1");
  c.wide = c.clmul && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("vpclmulqdq");
  return c;
}
const CpuFolding kCpuFolding = detect_folding();

bool have_clmul() { return kCpuFolding.clmul; }
bool have_wide_clmul() { return kCpuFolding.wide; }

// The register of a folded lane's sixteen bytes from a zero register (what
// Table::update(0, lane, 16) gives), with one table block instead of two.
// The lane is L = H*x^64 + Lo (H its low quadword); the register is that of
// L*x^W mod P. H*x^(64+W) is congruent to H*(x^(63+W) mod P)*x, one carry-less
// product (which comes out times x, see above); Lo*x^W is Lo moved W bits
// down the lane. Their sum S has degree below 64+W: S = S1*x^W + S0, and
// S mod P = (S1*x^W mod P) + S0, where S1*x^W mod P is the table register of
// S1's eight bytes and S0 is already reduced (its W bits, in the register's
// reflected order, are the lane's top W bits).
template <class Table, class Fold, unsigned W, typename Reg>
__attribute__((target("pclmul,sse4.1"))) Reg lane_register(__m128i lane) {
  static_assert(W % 8 == 0 && W <= 32);
  const __m128i k = _mm_set_epi64x(0, static_cast<long long>(Fold::kLaneHi));
  const __m128i lo_down = _mm_srli_si128(_mm_unpackhi_epi64(_mm_setzero_si128(), lane), W / 8);
  const __m128i sum = _mm_xor_si128(_mm_clmulepi64_si128(lane, k, 0x00), lo_down);
  const auto s1 = static_cast<std::uint64_t>(_mm_cvtsi128_si64(_mm_srli_si128(sum, (64 - W) / 8)));
  const auto s0 = static_cast<Reg>(static_cast<std::uint64_t>(_mm_extract_epi64(sum, 1)) >> (64 - W));
  return static_cast<Reg>(Table::block(s1) ^ s0);
}

// Which folding serves: the best the CPU has, or (for the tests) a narrower one.
enum class FoldWidth { Best, Narrow };

// The register after p[0..n) from `reg`; the first 64 bytes are ORed with
// mask[0..64) first (see fold_lanes; only used when n >= 64: shorter input
// comes here already masked, with kNoMask).
template <class Table, class Fold, typename Reg>
Reg update_fast(Reg reg, const std::uint8_t* p, std::size_t n, FoldWidth width = FoldWidth::Best,
                const std::uint8_t* mask = kNoMask) {
  if (n < 64 || !have_clmul()) return Table::update(reg, p, n);
  std::size_t used = 0;
  const __m128i folded = width == FoldWidth::Best && n >= 256 && have_wide_clmul()
                             ? fold_lanes_wide<Fold>(reg, p, n, mask, &used)
                             : fold_lanes<Fold>(reg, p, n, mask, &used);
  return Table::update(lane_register<Table, Fold, 8 * sizeof(Reg), Reg>(folded), p + used, n - used);
}
#endif

// 0x04C11DB7 and 0x100B with their bit order reversed.
using Crc32Impl = ReflectedCrc<std::uint32_t, 0xEDB88320u>;
using Crc16Impl = ReflectedCrc<std::uint16_t, 0xD008u>;

std::uint32_t byteswap32(std::uint32_t v) {
  return (v >> 24) | ((v >> 8) & 0xFF00u) | ((v << 8) & 0xFF0000u) | (v << 24);
}
std::uint16_t byteswap16(std::uint16_t v) { return static_cast<std::uint16_t>((v >> 8) | (v << 8)); }

}  // namespace

namespace crc_engines {

std::uint32_t crc32_table(std::uint32_t reg, std::span<const std::uint8_t> bytes) {
  return Crc32Impl::update(reg, bytes.data(), bytes.size());
}
std::uint16_t crc16_table(std::uint16_t reg, std::span<const std::uint8_t> bytes) {
  return Crc16Impl::update(reg, bytes.data(), bytes.size());
}
#if defined(__x86_64__)
bool folded_available() { return have_clmul(); }
bool wide_folded_available() { return have_wide_clmul(); }
std::uint32_t crc32_folded_narrow(std::uint32_t reg, std::span<const std::uint8_t> bytes) {
  return update_fast<Crc32Impl, Crc32Fold>(reg, bytes.data(), bytes.size(), FoldWidth::Narrow);
}
std::uint16_t crc16_folded_narrow(std::uint16_t reg, std::span<const std::uint8_t> bytes) {
  return update_fast<Crc16Impl, Crc16Fold>(reg, bytes.data(), bytes.size(), FoldWidth::Narrow);
}
std::uint32_t crc32_folded_sse(std::uint32_t reg, std::span<const std::uint8_t> bytes) {
  return update_fast<Crc32Impl, Crc32Fold>(reg, bytes.data(), bytes.size(), FoldWidth::Narrow);
}
std::uint16_t crc16_folded_sse(std::uint16_t reg, std::span<const std::uint8_t> bytes) {
  return update_fast<Crc16Impl, Crc16Fold>(reg, bytes.data(), bytes.size(), FoldWidth::Narrow);
}
std::uint32_t crc32_folded(std::uint32_t reg, std::span<const std::uint8_t> bytes) {
  return update_fast<Crc32Impl, Crc32Fold>(reg, bytes.data(), bytes.size());
}
std::uint16_t crc16_folded(std::uint16_t reg, std::span<const std::uint8_t> bytes) {
  return update_fast<Crc16Impl, Crc16Fold>(reg, bytes.data(), bytes.size());
}
#else
bool folded_available() { return false; }
bool wide_folded_available() { return false; }
std::uint32_t crc32_folded_narrow(std::uint32_t reg, std::span<const std::uint8_t> bytes) {
  return crc32_table(reg, bytes);
}
std::uint16_t crc16_folded_narrow(std::uint16_t reg, std::span<const std::uint8_t> bytes) {
  return crc16_table(reg, bytes);
}
std::uint32_t crc32_folded_sse(std::uint32_t reg, std::span<const std::uint8_t> bytes) {
  return crc32_table(reg, bytes);
}
std::uint16_t crc16_folded_sse(std::uint16_t reg, std::span<const std::uint8_t> bytes) {
  return crc16_table(reg, bytes);
}
std::uint32_t crc32_folded(std::uint32_t reg, std::span<const std::uint8_t> bytes) { return crc32_table(reg, bytes); }
std::uint16_t crc16_folded(std::uint16_t reg, std::span<const std::uint8_t> bytes) { return crc16_table(reg, bytes); }
#endif

}  // namespace crc_engines

void Crc32::update(std::span<const std::uint8_t> bytes) { reg_ = crc_engines::crc32_folded(reg_, bytes); }
void Crc32::update(std::uint8_t byte) { reg_ = Crc32Impl::step(reg_, byte); }

void Crc16Vcrc::update(std::span<const std::uint8_t> bytes) { reg_ = crc_engines::crc16_folded(reg_, bytes); }
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

namespace {

// The CRC-32 register (preset all ones) of `bytes` with their first 64 bytes
// ORed with mask[0..64).
std::uint32_t crc32_masked(std::span<const std::uint8_t> bytes, const std::uint8_t* mask) {
#if defined(__x86_64__)
  if (bytes.size() >= 64 && have_clmul())
    return update_fast<Crc32Impl, Crc32Fold>(0xFFFFFFFFu, bytes.data(), bytes.size(), FoldWidth::Best, mask);
#endif
  const std::size_t head = std::min<std::size_t>(bytes.size(), 64);
  std::array<std::uint8_t, 64> masked;
  for (std::size_t i = 0; i < head; ++i) masked[i] = bytes[i] | mask[i];
  return crc_engines::crc32_folded(Crc32Impl::update(0xFFFFFFFFu, masked.data(), head), bytes.subspan(head));
}

}  // namespace

std::uint32_t compute_icrc(std::span<const std::uint8_t> packet) {
  if (packet.size() < Lrh::kSize) return 0;
  const std::uint8_t lnh = packet[1] & 0x3u;
  if (lnh != kLnhIbaLocal && lnh != kLnhIbaGlobal) return 0;
  const bool global = lnh == kLnhIbaGlobal;
  const std::size_t bth_at = Lrh::kSize + (global ? Grh::kSize : 0);
  const std::size_t headers = bth_at + Bth::kSize;
  if (packet.size() < headers) return 0;

  // The variant fields live in the first 60 bytes at most: they are read as
  // ones through a 64-byte OR mask, applied as the bytes are loaded.
  std::array<std::uint8_t, 64> mask{};
  if (global) {
    std::fill_n(mask.begin(), Lrh::kSize, 0xFF);  // a router rewrites all of the LRH
    std::uint8_t* grh = mask.data() + Lrh::kSize;
    grh[0] = 0x0F;  // TClass, upper nibble (IPVer stays)
    grh[1] = 0xFF;  // TClass, lower nibble, and FlowLabel
    grh[2] = 0xFF;
    grh[3] = 0xFF;
    grh[7] = 0xFF;  // HopLmt
  } else {
    mask[0] = 0xF0;  // VL (LVer stays)
  }
  mask[bth_at + 4] = 0xFF;  // BTH resv8a
  return byteswap32(~crc32_masked(packet, mask.data()));
}

std::uint16_t compute_vcrc(std::span<const std::uint8_t> packet) { return byteswap16(crc16_vcrc(packet)); }

bool refresh_vcrc(std::span<std::uint8_t> packet) {
  if (packet.size() < kVcrcSize) return false;
  const std::size_t at = packet.size() - kVcrcSize;
  store_vcrc(packet.data() + at, compute_vcrc(packet.first(at)));
  return true;
}

}  // namespace nicsim::ib
