// InfiniBand packet headers as tables of bit fields, per the InfiniBand
// Architecture Specification vol. 1 (IBA), release 1.1/1.2.
//
// Every header is one field list (an X-macro): member name, first bit, width.
// Bits are numbered from the most significant bit of the header's first byte
// (bit 0) onwards, which is how the IBA figures draw them, and every
// multi-byte field is big-endian on the wire (IBA vol. 1 chapter 5, data
// packet format). The same list declares the struct members, encodes, decodes,
// checks ranges and prints, so a layout is written exactly once. Bits that no
// field covers are reserved: written as 0 and ignored on receipt.
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <type_traits>

namespace nicsim::ib {

// Smallest unsigned type holding `Width` bits.
template <unsigned Width>
using UintFor = std::conditional_t<
    (Width <= 8), std::uint8_t,
    std::conditional_t<(Width <= 16), std::uint16_t, std::conditional_t<(Width <= 32), std::uint32_t, std::uint64_t>>>;

// Reads/writes `width` bits starting at big-endian bit `bit` of `p`. A field
// may span at most 8 bytes (checked where the tables are expanded).
constexpr std::uint64_t get_bits(const std::uint8_t* p, unsigned bit, unsigned width) {
  const unsigned first = bit / 8;
  const unsigned last = (bit + width - 1) / 8;
  std::uint64_t acc = 0;
  for (unsigned i = first; i <= last; ++i) acc = (acc << 8) | p[i];
  acc >>= (last + 1) * 8 - (bit + width);
  return width == 64 ? acc : acc & ((std::uint64_t{1} << width) - 1);
}

constexpr void put_bits(std::uint8_t* p, unsigned bit, unsigned width, std::uint64_t value) {
  const unsigned first = bit / 8;
  const unsigned last = (bit + width - 1) / 8;
  const unsigned shift = (last + 1) * 8 - (bit + width);
  const std::uint64_t mask = width == 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << width) - 1;
  std::uint64_t acc = 0;
  for (unsigned i = first; i <= last; ++i) acc = (acc << 8) | p[i];
  acc = (acc & ~(mask << shift)) | ((value & mask) << shift);
  for (unsigned i = last + 1; i-- > first;) {
    p[i] = static_cast<std::uint8_t>(acc);
    acc >>= 8;
  }
}

constexpr bool field_fits_in_8_bytes(unsigned bit, unsigned width) {
  return width >= 1 && width <= 64 && (bit % 8) + width <= 64;
}

// ---------------------------------------------------------------------------
// Field tables. F(member, first_bit, width) for numbers, B(member, byte, len)
// for byte strings (GIDs).
// ---------------------------------------------------------------------------

// Local Route Header, 8 bytes (IBA §7.7).
#define NICSIM_IB_LRH_FIELDS(F, B)                                \
  F(vl, 0, 4)        /* Virtual Lane */                           \
  F(lver, 4, 4)      /* Link Version, 0 */                        \
  F(sl, 8, 4)        /* Service Level */                          \
  F(lnh, 14, 2)      /* Link Next Header (bits 12-13 reserved) */ \
  F(dlid, 16, 16)    /* Destination LID */                        \
  F(pkt_len, 37, 11) /* LRH..ICRC in 4-byte words (32-36 rsvd) */ \
  F(slid, 48, 16)    /* Source LID */

// Global Route Header, 40 bytes (IBA §8.3); IPv6-shaped.
#define NICSIM_IB_GRH_FIELDS(F, B)                              \
  F(ipver, 0, 4)        /* IP Version, 6 */                     \
  F(tclass, 4, 8)       /* Traffic Class */                     \
  F(flow_label, 12, 20) /* Flow Label */                        \
  F(pay_len, 32, 16)    /* bytes after the GRH through ICRC */  \
  F(nxt_hdr, 48, 8)     /* Next Header, 0x1B = IBA transport */ \
  F(hop_lmt, 56, 8)     /* Hop Limit */                         \
  B(sgid, 8, 16)        /* Source GID */                        \
  B(dgid, 24, 16)       /* Destination GID */

// Base Transport Header, 12 bytes (IBA §9.2).
#define NICSIM_IB_BTH_FIELDS(F, B)                                   \
  F(opcode, 0, 8)    /* OpCode (ib_opcodes.h) */                     \
  F(se, 8, 1)        /* Solicited Event */                           \
  F(m, 9, 1)         /* MigReq */                                    \
  F(pad_cnt, 10, 2)  /* Pad Count: bytes padding the payload to 4 */ \
  F(tver, 12, 4)     /* Transport Header Version, 0 */               \
  F(p_key, 16, 16)   /* Partition Key */                             \
  F(resv8a, 32, 8)   /* reserved, variant: masked out of the ICRC */ \
  F(dest_qp, 40, 24) /* Destination QP */                            \
  F(a, 64, 1)        /* Acknowledge Request (65-71 reserved) */      \
  F(psn, 72, 24)     /* Packet Sequence Number */

// Reliable Datagram Extended Transport Header (RDETH), 4 bytes (IBA §9.3).
#define NICSIM_IB_RDETH_FIELDS(F, B) F(ee_context, 8, 24) /* EE-Context (bits 0-7 reserved) */

// Datagram Extended Transport Header (DETH), 8 bytes (IBA §9.3).
#define NICSIM_IB_DETH_FIELDS(F, B) \
  F(q_key, 0, 32)   /* Queue Key */ \
  F(src_qp, 40, 24) /* Source QP (bits 32-39 reserved) */

// RDMA Extended Transport Header (RETH), 16 bytes (IBA §9.3).
#define NICSIM_IB_RETH_FIELDS(F, B)        \
  F(va, 0, 64)       /* Virtual Address */ \
  F(r_key, 64, 32)   /* Remote Key */      \
  F(dma_len, 96, 32) /* DMA Length, bytes */

// Atomic Extended Transport Header (AtomicETH), 28 bytes (IBA §9.3).
#define NICSIM_IB_ATOMIC_ETH_FIELDS(F, B)      \
  F(va, 0, 64)        /* Virtual Address */    \
  F(r_key, 64, 32)    /* Remote Key */         \
  F(swap_add, 96, 64) /* Swap (or Add) Data */ \
  F(compare, 160, 64) /* Compare Data */

// ACK Extended Transport Header (AETH), 4 bytes (IBA §9.3).
#define NICSIM_IB_AETH_FIELDS(F, B)                                       \
  F(syndrome, 0, 8) /* ACK/RNR NAK/NAK type and credits, timer or code */ \
  F(msn, 8, 24)     /* Message Sequence Number */

// Atomic ACK Extended Transport Header (AtomicAckETH), 8 bytes (IBA §9.3).
#define NICSIM_IB_ATOMIC_ACK_ETH_FIELDS(F, B) F(orig_remote_data, 0, 64) /* value at the address before the atomic */

// Immediate Data Extended Transport Header (ImmDt), 4 bytes (IBA §9.3).
// Opaque to the transport.
#define NICSIM_IB_IMM_DT_FIELDS(F, B) F(imm, 0, 32)

// Invalidate Extended Transport Header (IETH), 4 bytes (IBA 1.2 §9.3; send
// with invalidate).
#define NICSIM_IB_IETH_FIELDS(F, B) F(r_key, 0, 32)

// Every header: X(Type, FIELDS macro, size in bytes, display name).
#define NICSIM_IB_HEADERS(X)                                          \
  X(Lrh, NICSIM_IB_LRH_FIELDS, 8, "LRH")                              \
  X(Grh, NICSIM_IB_GRH_FIELDS, 40, "GRH")                             \
  X(Bth, NICSIM_IB_BTH_FIELDS, 12, "BTH")                             \
  X(Rdeth, NICSIM_IB_RDETH_FIELDS, 4, "RDETH")                        \
  X(Deth, NICSIM_IB_DETH_FIELDS, 8, "DETH")                           \
  X(Reth, NICSIM_IB_RETH_FIELDS, 16, "RETH")                          \
  X(AtomicEth, NICSIM_IB_ATOMIC_ETH_FIELDS, 28, "AtomicETH")          \
  X(Aeth, NICSIM_IB_AETH_FIELDS, 4, "AETH")                           \
  X(AtomicAckEth, NICSIM_IB_ATOMIC_ACK_ETH_FIELDS, 8, "AtomicAckETH") \
  X(ImmDt, NICSIM_IB_IMM_DT_FIELDS, 4, "ImmDt")                       \
  X(Ieth, NICSIM_IB_IETH_FIELDS, 4, "IETH")

// One numeric field of a header, for generic code (printing, tests).
struct FieldInfo {
  const char* name;
  std::uint16_t bit;
  std::uint8_t width;
};

#define NICSIM_IB_MEMBER(name, bit, width) UintFor<width> name{};
#define NICSIM_IB_BYTES_MEMBER(name, offset, len) std::array<std::uint8_t, len> name{};
#define NICSIM_IB_FIELD_INFO(name, bit, width) FieldInfo{#name, bit, width},
#define NICSIM_IB_NO_BYTES(name, offset, len)
#define NICSIM_IB_COUNT_FIELD(name, bit, width) +1

// Declares a header struct: members from its table plus
//   encode(out)  writes kSize bytes (reserved bits 0; values masked to width);
//   decode(in)   nullopt when `in` is shorter than kSize;
//   fits()       every value within its field width (encode would not drop bits);
//   to_string()  "name=value ..." in hex, for traces and test failures.
#define NICSIM_IB_DECLARE_HEADER(Type, FIELDS, SIZE, DISPLAY)                                            \
  struct Type {                                                                                          \
    static constexpr std::size_t kSize = SIZE;                                                           \
    static constexpr const char* kName = DISPLAY;                                                        \
    static constexpr std::array<FieldInfo, 0 FIELDS(NICSIM_IB_COUNT_FIELD, NICSIM_IB_NO_BYTES)> kFields{ \
        {FIELDS(NICSIM_IB_FIELD_INFO, NICSIM_IB_NO_BYTES)}};                                             \
    FIELDS(NICSIM_IB_MEMBER, NICSIM_IB_BYTES_MEMBER)                                                     \
    void encode(std::span<std::uint8_t, kSize> out) const;                                               \
    void encode(std::uint8_t* out) const { encode(std::span<std::uint8_t, kSize>(out, kSize)); }         \
    static std::optional<Type> decode(std::span<const std::uint8_t> in);                                 \
    bool fits() const;                                                                                   \
    std::string to_string() const;                                                                       \
    bool operator==(const Type&) const = default;                                                        \
  };

NICSIM_IB_HEADERS(NICSIM_IB_DECLARE_HEADER)

// Values with a meaning fixed by the spec.
inline constexpr std::uint8_t kLnhRaw = 0;           // §7.7: raw packet, no IBA transport
inline constexpr std::uint8_t kLnhIpv6Raw = 1;       // raw IPv6 packet
inline constexpr std::uint8_t kLnhIbaLocal = 2;      // BTH follows the LRH
inline constexpr std::uint8_t kLnhIbaGlobal = 3;     // GRH follows the LRH
inline constexpr std::uint8_t kGrhNxtHdrIba = 0x1B;  // §8.3: BTH follows the GRH
inline constexpr std::uint8_t kGrhIpVer = 6;
inline constexpr std::size_t kIcrcSize = 4;  // §7.8.1
inline constexpr std::size_t kVcrcSize = 2;  // §7.8.2

}  // namespace nicsim::ib
