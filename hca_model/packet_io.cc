// The engines' packet interface over the wire library.
#include "hca_model/packet_io.h"

#include <stdexcept>
#include <string>

namespace nicsim::hca {

std::size_t encode_headers(const ib::PacketHeaders& h, std::size_t payload, std::uint8_t* buf, std::size_t wire_len) {
  std::size_t written = 0, payload_at = 0;
  const ib::BuildStatus s =
      ib::build_headers(h, payload, std::span<std::uint8_t>(buf, wire_len), &written, &payload_at);
  if (s != ib::BuildStatus::Ok)
    throw std::logic_error(std::string("HCA built an invalid packet: ") + ib::build_status_text(s));
  return payload_at;
}

void seal(std::uint8_t* buf, std::size_t wire_len) {
  const std::size_t icrc_at = wire_len - ib::kIcrcSize - ib::kVcrcSize;
  ib::store_icrc(buf + icrc_at, ib::compute_icrc(std::span<const std::uint8_t>(buf, icrc_at)));
  ib::store_vcrc(buf + wire_len - ib::kVcrcSize,
                 ib::compute_vcrc(std::span<const std::uint8_t>(buf, wire_len - ib::kVcrcSize)));
}

const char* drop_reason(ib::Verdict v) {
  switch (v) {
    case ib::Verdict::Truncated:
      return "truncated";
    case ib::Verdict::BadVcrc:
      return "bad_vcrc";
    case ib::Verdict::BadIcrc:
      return "bad_icrc";
    case ib::Verdict::UnknownOpcode:
      return "bad_opcode";
    default:
      return "bad_header";
  }
}

}  // namespace nicsim::hca
