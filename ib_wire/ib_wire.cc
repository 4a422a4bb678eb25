#include "ib_wire/ib_wire.h"

#include <algorithm>

namespace nicsim::ib {
namespace {

// Which ExtHeaders member holds each extended header.
#define NICSIM_IB_EXT_MEMBERS(X) \
  X(Rdeth, rdeth)                \
  X(Deth, deth)                  \
  X(Reth, reth) X(AtomicEth, atomic_eth) X(Aeth, aeth) X(AtomicAckEth, atomic_ack_eth) X(ImmDt, imm_dt) X(Ieth, ieth)

void encode_ext(const ExtHeaders& ext, Ext e, std::uint8_t* out) {
  switch (e) {
#define NICSIM_IB_ENCODE_EXT(type, member) \
  case Ext::type:                          \
    ext.member.encode(out);                \
    return;
    NICSIM_IB_EXT_MEMBERS(NICSIM_IB_ENCODE_EXT)
#undef NICSIM_IB_ENCODE_EXT
  }
}

// `in` holds at least the header's size (checked by the caller against the
// opcode's ext_len).
void decode_ext(std::span<const std::uint8_t> in, Ext e, ExtHeaders& ext) {
  switch (e) {
#define NICSIM_IB_DECODE_EXT(type, member) \
  case Ext::type:                          \
    ext.member = *type::decode(in);        \
    return;
    NICSIM_IB_EXT_MEMBERS(NICSIM_IB_DECODE_EXT)
#undef NICSIM_IB_DECODE_EXT
  }
}

bool ext_fits(const ExtHeaders& ext, Ext e) {
  switch (e) {
#define NICSIM_IB_EXT_FITS(type, member) \
  case Ext::type:                        \
    return ext.member.fits();
    NICSIM_IB_EXT_MEMBERS(NICSIM_IB_EXT_FITS)
#undef NICSIM_IB_EXT_FITS
  }
  return false;
}

constexpr std::size_t pad_for(std::size_t payload_len) { return (4 - payload_len % 4) % 4; }

// parse_packet's checks: the verdict, with `r` filled as far as they got.
Verdict parse_into(std::span<const std::uint8_t> bytes, bool check_crcs, ParsedPacket& r);

}  // namespace

#define NICSIM_IB_NAME_CASE(name, text) \
  case name:                            \
    return #name;
#define NICSIM_IB_TEXT_CASE(name, text) \
  case name:                            \
    return text;

const char* build_status_name(BuildStatus s) {
  using enum BuildStatus;
  switch (s) { NICSIM_IB_BUILD_STATUSES(NICSIM_IB_NAME_CASE) }
  return "?";
}
const char* build_status_text(BuildStatus s) {
  using enum BuildStatus;
  switch (s) { NICSIM_IB_BUILD_STATUSES(NICSIM_IB_TEXT_CASE) }
  return "?";
}
const char* verdict_name(Verdict v) {
  using enum Verdict;
  switch (v) { NICSIM_IB_VERDICTS(NICSIM_IB_NAME_CASE) }
  return "?";
}
const char* verdict_text(Verdict v) {
  using enum Verdict;
  switch (v) { NICSIM_IB_VERDICTS(NICSIM_IB_TEXT_CASE) }
  return "?";
}

namespace {
std::size_t packet_size(const OpcodeInfo& op, bool global, std::size_t payload_len) {
  return Lrh::kSize + (global ? Grh::kSize : 0) + Bth::kSize + op.ext_len + payload_len + pad_for(payload_len) +
         kIcrcSize + kVcrcSize;
}
}  // namespace

std::size_t packet_size(std::uint8_t opcode, bool global, std::size_t payload_len) {
  const OpcodeInfo* op = opcode_info(opcode);
  return op == nullptr ? 0 : packet_size(*op, global, payload_len);
}

std::size_t packet_size(const PacketHeaders& h, std::size_t payload_len) {
  return packet_size(static_cast<std::uint8_t>(h.bth.opcode), h.grh.has_value(), payload_len);
}

BuildStatus build_headers(const PacketHeaders& h, std::size_t payload_len, std::span<std::uint8_t> out,
                          std::size_t* written, std::size_t* payload_at) {
  const OpcodeInfo* op = opcode_info(h.bth.opcode);
  if (op == nullptr) return BuildStatus::UnknownOpcode;
  if (!op->payload && payload_len != 0) return BuildStatus::PayloadNotAllowed;
  if (payload_len > kMaxPayload) return BuildStatus::PayloadTooLong;
  bool fits = h.lrh.fits() && h.bth.fits() && (!h.grh || h.grh->fits());
  for (std::size_t i = 0; i < op->num_exts; ++i) fits = fits && ext_fits(h.ext, op->order[i]);
  if (!fits) return BuildStatus::FieldOutOfRange;
  const std::size_t size = packet_size(*op, h.grh.has_value(), payload_len);
  if (out.size() < size) return BuildStatus::BufferTooSmall;

  std::uint8_t* p = out.data();
  Lrh lrh = h.lrh;
  lrh.lnh = h.grh ? kLnhIbaGlobal : kLnhIbaLocal;
  lrh.pkt_len = static_cast<std::uint16_t>((size - kVcrcSize) / 4);
  lrh.encode(p);
  p += Lrh::kSize;
  if (h.grh) {
    Grh grh = *h.grh;
    grh.nxt_hdr = kGrhNxtHdrIba;
    grh.pay_len = static_cast<std::uint16_t>(size - Lrh::kSize - Grh::kSize - kVcrcSize);
    grh.encode(p);
    p += Grh::kSize;
  }
  Bth bth = h.bth;
  bth.pad_cnt = static_cast<std::uint8_t>(pad_for(payload_len));
  bth.encode(p);
  p += Bth::kSize;
  for (std::size_t i = 0; i < op->num_exts; ++i) {
    encode_ext(h.ext, op->order[i], p);
    p += kExtSize[static_cast<std::size_t>(op->order[i])];
  }
  *payload_at = static_cast<std::size_t>(p - out.data());
  std::fill_n(p + payload_len, pad_for(payload_len) + kIcrcSize + kVcrcSize, std::uint8_t{0});
  *written = size;
  return BuildStatus::Ok;
}

BuildStatus build_packet(const PacketHeaders& h, std::span<const std::uint8_t> payload, std::span<std::uint8_t> out,
                         std::size_t* written, bool with_crcs) {
  std::size_t payload_at = 0;
  const BuildStatus s = build_headers(h, payload.size(), out, written, &payload_at);
  if (s != BuildStatus::Ok) return s;
  std::copy(payload.begin(), payload.end(), out.begin() + static_cast<std::ptrdiff_t>(payload_at));
  if (with_crcs) {
    const std::size_t icrc_at = *written - kIcrcSize - kVcrcSize;
    std::uint8_t* p = out.data() + icrc_at;
    store_icrc(p, compute_icrc(out.first(icrc_at)));
    store_vcrc(p + kIcrcSize, compute_vcrc(out.first(icrc_at + kIcrcSize)));
  }
  return BuildStatus::Ok;
}

BuildStatus build_packet(const PacketHeaders& h, std::span<const std::uint8_t> payload,
                         std::vector<std::uint8_t>& out) {
  out.resize(packet_size(h, payload.size()));
  std::size_t written = 0;
  const BuildStatus s = build_packet(h, payload, std::span<std::uint8_t>(out), &written);
  if (s != BuildStatus::Ok) out.clear();
  return s;
}

ParsedPacket parse_packet(std::span<const std::uint8_t> bytes, bool check_crcs) {
  ParsedPacket r;  // returned in place: the checks below fill it by reference
  r.verdict = parse_into(bytes, check_crcs, r);
  return r;
}

namespace {

Verdict parse_into(std::span<const std::uint8_t> bytes, bool check_crcs, ParsedPacket& r) {
  const std::size_t size = bytes.size();
  if (size < kMinLocalPacket) return Verdict::Truncated;

  // Link layer (§7.7, §7.8.2): length, VCRC, what follows the LRH.
  r.hdr.lrh = *Lrh::decode(bytes);
  const Lrh& lrh = r.hdr.lrh;
  const std::size_t stated = std::size_t{lrh.pkt_len} * 4 + kVcrcSize;
  if (stated > size) return Verdict::Truncated;
  if (stated < size) return Verdict::BadLength;
  const std::size_t vcrc_at = size - kVcrcSize;
  r.vcrc = load_vcrc(bytes.data() + vcrc_at);
  if (check_crcs && compute_vcrc(bytes.first(vcrc_at)) != r.vcrc) return Verdict::BadVcrc;
  if (lrh.lnh != kLnhIbaLocal && lrh.lnh != kLnhIbaGlobal) return Verdict::NotIba;
  if (lrh.lver != 0) return Verdict::BadVersion;

  // Network layer (§8.3).
  std::size_t at = Lrh::kSize;
  if (lrh.lnh == kLnhIbaGlobal) {
    if (size < kMinGlobalPacket) return Verdict::BadLength;
    r.hdr.grh = Grh::decode(bytes.subspan(at));
    const Grh& grh = *r.hdr.grh;
    if (grh.ipver != kGrhIpVer) return Verdict::BadVersion;
    if (grh.nxt_hdr != kGrhNxtHdrIba) return Verdict::NotIba;
    if (grh.pay_len != size - Lrh::kSize - Grh::kSize - kVcrcSize) return Verdict::BadGrhLength;
    at += Grh::kSize;
  }

  // Transport layer (§9.2, §7.8.1, §9.3).
  r.hdr.bth = *Bth::decode(bytes.subspan(at));
  at += Bth::kSize;
  if (r.hdr.bth.tver != 0) return Verdict::BadVersion;
  const std::size_t icrc_at = vcrc_at - kIcrcSize;
  r.icrc = load_icrc(bytes.data() + icrc_at);
  if (check_crcs && compute_icrc(bytes.first(icrc_at)) != r.icrc) return Verdict::BadIcrc;
  r.op = opcode_info(r.hdr.bth.opcode);
  if (r.op == nullptr) return Verdict::UnknownOpcode;
  if (at + r.op->ext_len > icrc_at) return Verdict::ShortForOpcode;
  for (std::size_t i = 0; i < r.op->num_exts; ++i) {
    const Ext e = r.op->order[i];
    decode_ext(bytes.subspan(at + r.op->offset[static_cast<std::size_t>(e)]), e, r.hdr.ext);
  }
  at += r.op->ext_len;

  const std::size_t padded = icrc_at - at;
  r.pad = r.hdr.bth.pad_cnt;
  if ((!r.op->payload && padded != 0) || r.pad > padded) return Verdict::BadPayloadLength;
  r.payload = bytes.subspan(at, padded - r.pad);
  return Verdict::Ok;
}

}  // namespace

}  // namespace nicsim::ib
