// The two InfiniBand packet CRCs (IBA vol. 1 §7.8).
//
// ICRC (§7.8.1): CRC-32 with the Ethernet polynomial 0x04C11DB7, processed
// least significant bit of each byte first (the reflected form, 0xEDB88320),
// register preset to all ones, remainder inverted. It covers the packet from
// the first byte of the LRH to the last pad byte, with the fields that
// switches and routers may change replaced by ones:
//   local packet (LNH = IBA local):  LRH VL (4 bits), BTH resv8a (8 bits);
//   global packet (LNH = IBA global): the whole LRH (8 bytes), GRH TClass,
//     FlowLabel and HopLmt, BTH resv8a.
// The remainder goes on the wire coefficient of x^31 first, which for a
// reflected register means its least significant byte first. The spec writes
// the ICRC as the number those four bytes spell in big-endian order
// (0x9625B75A for the sample packet of its ICRC example table), and so does
// Wireshark; that is the value these functions return and take.
//
// VCRC (§7.8.2): CRC-16 with polynomial 0x100B (x^16+x^12+x^3+x+1), reflected
// like the ICRC, preset to all ones, remainder inverted, over every byte from
// the LRH through the ICRC (nothing masked: it is recomputed on every link),
// sent least significant byte first. The value is likewise the big-endian
// reading of the two wire bytes.
#pragma once
#include <cstddef>
#include <cstdint>
#include <span>

namespace nicsim::ib {

// A reflected CRC register; `update` may be called on consecutive pieces.
class Crc32 {
 public:
  void update(std::span<const std::uint8_t> bytes);
  void update(std::uint8_t byte);
  // The inverted remainder as a number (e.g. 0xCBF43926 for "123456789").
  std::uint32_t value() const { return ~reg_; }

 private:
  std::uint32_t reg_ = 0xFFFFFFFFu;
};

class Crc16Vcrc {
 public:
  void update(std::span<const std::uint8_t> bytes);
  void update(std::uint8_t byte);
  std::uint16_t value() const { return static_cast<std::uint16_t>(~reg_); }

 private:
  std::uint16_t reg_ = 0xFFFFu;
};

// The plain checks, for known-answer tests: CRC-32 ("123456789" -> 0xCBF43926)
// and the VCRC polynomial over arbitrary bytes, as register values.
std::uint32_t crc32(std::span<const std::uint8_t> bytes);
std::uint16_t crc16_vcrc(std::span<const std::uint8_t> bytes);

// ICRC of a packet whose bytes run from the LRH through the last pad byte
// (i.e. the wire image without ICRC and VCRC). The LRH's LNH field picks the
// masking; `packet` must hold at least the LRH, [GRH,] and BTH, otherwise 0 is
// returned. Result in the spec's notation (see above).
std::uint32_t compute_icrc(std::span<const std::uint8_t> packet);
// VCRC over `packet` (LRH through ICRC). Result in the spec's notation.
std::uint16_t compute_vcrc(std::span<const std::uint8_t> packet);

// The two ways the registers are updated, for the tests that check they
// agree. `table`: portable, table-driven (slicing by 8). `folded`: carry-less
// multiplication folding (x86-64 PCLMULQDQ) for pieces of 64 bytes and more,
// the table for the rest; the same as `table` where the CPU lacks the
// instruction (folded_available() false); 512 bits at a time where it has
// VPCLMULQDQ and AVX-512 (wide_folded_available()), `folded_narrow` never.
// Crc32/Crc16Vcrc use `folded`. Registers as in the classes above (preset
// all ones, not yet inverted).
namespace crc_engines {
bool folded_available();
bool wide_folded_available();
std::uint32_t crc32_folded_narrow(std::uint32_t reg, std::span<const std::uint8_t> bytes);
std::uint16_t crc16_folded_narrow(std::uint16_t reg, std::span<const std::uint8_t> bytes);
// The 128-bit folding, as `folded_narrow`.
std::uint32_t crc32_folded_sse(std::uint32_t reg, std::span<const std::uint8_t> bytes);
std::uint16_t crc16_folded_sse(std::uint16_t reg, std::span<const std::uint8_t> bytes);
std::uint32_t crc32_table(std::uint32_t reg, std::span<const std::uint8_t> bytes);
std::uint32_t crc32_folded(std::uint32_t reg, std::span<const std::uint8_t> bytes);
std::uint16_t crc16_table(std::uint16_t reg, std::span<const std::uint8_t> bytes);
std::uint16_t crc16_folded(std::uint16_t reg, std::span<const std::uint8_t> bytes);
}  // namespace crc_engines

// Big-endian store/load of the spec-notation values.
inline void store_icrc(std::uint8_t* p, std::uint32_t icrc) {
  p[0] = static_cast<std::uint8_t>(icrc >> 24);
  p[1] = static_cast<std::uint8_t>(icrc >> 16);
  p[2] = static_cast<std::uint8_t>(icrc >> 8);
  p[3] = static_cast<std::uint8_t>(icrc);
}
inline std::uint32_t load_icrc(const std::uint8_t* p) {
  return std::uint32_t{p[0]} << 24 | std::uint32_t{p[1]} << 16 | std::uint32_t{p[2]} << 8 | p[3];
}
inline void store_vcrc(std::uint8_t* p, std::uint16_t vcrc) {
  p[0] = static_cast<std::uint8_t>(vcrc >> 8);
  p[1] = static_cast<std::uint8_t>(vcrc);
}
inline std::uint16_t load_vcrc(const std::uint8_t* p) { return static_cast<std::uint16_t>(p[0] << 8 | p[1]); }

// Recomputes and stores the VCRC of a complete wire image (LRH through VCRC),
// as a switch does after changing the VL (§7.8.2). False if shorter than a
// VCRC.
bool refresh_vcrc(std::span<std::uint8_t> packet);

}  // namespace nicsim::ib
