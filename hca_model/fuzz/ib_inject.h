// InfiniBand wire images from fuzz input, put on the link to a node's HCA
// (for the libFuzzer targets of hca_model/fuzz and cm/fuzz).
#pragma once
#include <algorithm>
#include <cstdint>
#include <span>
#include <vector>

#include "core/sim.h"
#include "fabric/fabric.h"
#include "fabric/port.h"
#include "hca_model/hca.h"
#include "ib_wire/ib_wire.h"
#include "world/node.h"

namespace nicsim::hca::fuzzing {

// Whole 4-byte words from the LRH through the ICRC, at most PktLen's.
inline constexpr std::size_t kMaxSealedBody = ib::kMaxPktLenWords * 4;

// Makes `b` a packet every check before the transport's accepts as far as
// lengths and CRCs go: pads the LRH..ICRC part to whole words (at least the
// smallest packet), sets LRH PktLen and, on a global packet, GRH PayLen to
// its length, and recomputes the ICRC and the VCRC.
inline void seal(std::vector<std::uint8_t>& b) {
  std::size_t body = b.size() >= ib::kVcrcSize ? b.size() - ib::kVcrcSize : 0;
  body = std::clamp<std::size_t>((body + 3) & ~std::size_t{3}, ib::kMinLocalPacket - ib::kVcrcSize, kMaxSealedBody);
  b.resize(body + ib::kVcrcSize);
  std::uint8_t* p = b.data();
  ib::put_bits(p, 37, 11, body / 4);  // LRH PktLen
  constexpr std::uint64_t kLnhGlobal = 3;
  constexpr std::size_t kGrhAt = ib::Lrh::kSize;
  if (ib::get_bits(p, 14, 2) == kLnhGlobal && body >= kGrhAt + ib::Grh::kSize)
    ib::put_bits(p + kGrhAt, 32, 16, body - kGrhAt - ib::Grh::kSize);  // GRH PayLen
  ib::store_icrc(p + body - ib::kIcrcSize, ib::compute_icrc(std::span(p, body - ib::kIcrcSize)));
  ib::store_vcrc(p + body, ib::compute_vcrc(std::span(p, body)));
}

// The LID of port 1 of a node's HCA.
inline std::uint16_t port1_lid(Node& node) { return node.nic_as<Hca>()->port_lid(1); }

// Sends `bytes` from `from` (the far end of the link to the HCA under test)
// as an InfiniBand packet, addressed as its LRH says. The packet is marked
// as touched on the way, so that the receiver checks its CRCs.
inline void send_ib(fabric::Fabric& fabric, fabric::Port& from, std::uint32_t src_device,
                    std::span<const std::uint8_t> bytes) {
  fabric::Packet* p = fabric.pool().get(bytes.size());
  std::copy(bytes.begin(), bytes.end(), p->bytes.begin());
  p->meta.src_node = src_device;
  if (bytes.size() >= ib::Lrh::kSize) {
    p->meta.dlid = static_cast<std::uint16_t>(ib::get_bits(bytes.data(), 16, 16));
    p->meta.slid = static_cast<std::uint16_t>(ib::get_bits(bytes.data(), 48, 16));
    p->meta.vl = ib::get_bits(bytes.data(), 0, 4) == fabric::kVl15 ? fabric::kVl15 : 0;
  }
  p->meta.kind = fabric::kPacketIb;
  p->meta.bit_errors = 1;
  p->meta.created = now();
  p->ready_at = now();
  from.send(p);
}

}  // namespace nicsim::hca::fuzzing
