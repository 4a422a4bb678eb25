// The engines' packet interface over the wire library.
#include "hca_model/packet_io.h"

#include <stdexcept>
#include <string>

#include "hca_model/wire/ib_wire.h"

namespace nicsim::hca {

namespace {

ib::PacketHeaders to_headers(const PacketFields& f) {
  ib::PacketHeaders h;
  h.lrh.vl = f.vl;
  h.lrh.sl = f.sl;
  h.lrh.dlid = f.dlid;
  h.lrh.slid = f.slid;
  if (f.grh) {
    ib::Grh g;
    g.ipver = ib::kGrhIpVer;
    g.tclass = f.tclass;
    g.flow_label = f.flow_label;
    g.hop_lmt = f.hop_limit;
    g.sgid = f.sgid;
    g.dgid = f.dgid;
    h.grh = g;
  }
  h.bth.opcode = f.opcode;
  h.bth.se = f.solicited;
  h.bth.m = 1;  // no path migration: the migration state is "migrated"
  h.bth.p_key = f.pkey;
  h.bth.dest_qp = f.dest_qp;
  h.bth.a = f.ack_req;
  h.bth.psn = f.psn;
  h.ext.reth.va = f.reth_va;
  h.ext.reth.r_key = f.reth_rkey;
  h.ext.reth.dma_len = f.reth_len;
  h.ext.deth.q_key = f.deth_qkey;
  h.ext.deth.src_qp = f.deth_src_qp;
  h.ext.aeth.syndrome = f.aeth_syndrome;
  h.ext.aeth.msn = f.aeth_msn;
  h.ext.atomic_eth.va = f.atomic_va;
  h.ext.atomic_eth.r_key = f.atomic_rkey;
  h.ext.atomic_eth.swap_add = f.atomic_swap_add;
  h.ext.atomic_eth.compare = f.atomic_compare;
  h.ext.atomic_ack_eth.orig_remote_data = f.atomic_ack_orig;
  h.ext.imm_dt.imm = f.imm;
  return h;
}

}  // namespace

std::size_t wire_bytes(std::uint8_t opcode, bool grh, std::size_t payload) {
  return ib::packet_size(opcode, grh, payload);
}

std::size_t encode_headers(const PacketFields& f, std::size_t payload, std::uint8_t* buf, std::size_t wire_len) {
  const ib::PacketHeaders h = to_headers(f);
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

RxVerdict decode(const std::uint8_t* buf, std::size_t len, PacketFields& f, std::size_t& payload_offset,
                 std::size_t& payload_len, bool check_crcs) {
  const ib::ParsedPacket p = ib::parse_packet(std::span<const std::uint8_t>(buf, len), check_crcs);
  switch (p.verdict) {
    case ib::Verdict::Ok: break;
    case ib::Verdict::Truncated: return RxVerdict::Truncated;
    case ib::Verdict::BadVcrc: return RxVerdict::BadVcrc;
    case ib::Verdict::BadIcrc: return RxVerdict::BadIcrc;
    case ib::Verdict::UnknownOpcode: return RxVerdict::BadOpcode;
    default: return RxVerdict::BadHeader;
  }
  const ib::PacketHeaders& h = p.hdr;
  // Every field of `f` is assigned below (the GRH ones in either branch), so
  // nothing of an earlier packet's fields survives.
  f.vl = static_cast<std::uint8_t>(h.lrh.vl);
  f.sl = static_cast<std::uint8_t>(h.lrh.sl);
  f.dlid = static_cast<std::uint16_t>(h.lrh.dlid);
  f.slid = static_cast<std::uint16_t>(h.lrh.slid);
  if (h.grh) {
    f.grh = true;
    f.tclass = static_cast<std::uint8_t>(h.grh->tclass);
    f.flow_label = static_cast<std::uint32_t>(h.grh->flow_label);
    f.hop_limit = static_cast<std::uint8_t>(h.grh->hop_lmt);
    f.sgid = h.grh->sgid;
    f.dgid = h.grh->dgid;
  } else {
    f.grh = false;
    f.tclass = 0;
    f.flow_label = 0;
    f.hop_limit = 0;
    f.sgid = {};
    f.dgid = {};
  }
  f.opcode = static_cast<std::uint8_t>(h.bth.opcode);
  f.solicited = h.bth.se;
  f.ack_req = h.bth.a;
  f.pkey = static_cast<std::uint16_t>(h.bth.p_key);
  f.dest_qp = static_cast<std::uint32_t>(h.bth.dest_qp);
  f.psn = static_cast<std::uint32_t>(h.bth.psn);
  f.reth_va = h.ext.reth.va;
  f.reth_rkey = static_cast<std::uint32_t>(h.ext.reth.r_key);
  f.reth_len = static_cast<std::uint32_t>(h.ext.reth.dma_len);
  f.deth_qkey = static_cast<std::uint32_t>(h.ext.deth.q_key);
  f.deth_src_qp = static_cast<std::uint32_t>(h.ext.deth.src_qp);
  f.aeth_syndrome = static_cast<std::uint8_t>(h.ext.aeth.syndrome);
  f.aeth_msn = static_cast<std::uint32_t>(h.ext.aeth.msn);
  f.atomic_va = h.ext.atomic_eth.va;
  f.atomic_rkey = static_cast<std::uint32_t>(h.ext.atomic_eth.r_key);
  f.atomic_swap_add = h.ext.atomic_eth.swap_add;
  f.atomic_compare = h.ext.atomic_eth.compare;
  f.atomic_ack_orig = h.ext.atomic_ack_eth.orig_remote_data;
  f.imm = static_cast<std::uint32_t>(h.ext.imm_dt.imm);
  f.has_imm = p.op && p.op->immediate;
  payload_offset = static_cast<std::size_t>(p.payload.data() - buf);
  payload_len = p.payload.size();
  return RxVerdict::Ok;
}

const char* verdict_name(RxVerdict v) {
  switch (v) {
    case RxVerdict::Ok: return "ok";
    case RxVerdict::Truncated: return "truncated";
    case RxVerdict::BadVcrc: return "bad_vcrc";
    case RxVerdict::BadIcrc: return "bad_icrc";
    case RxVerdict::BadOpcode: return "bad_opcode";
    case RxVerdict::BadHeader: return "bad_header";
  }
  return "?";
}

const char* opcode_name(std::uint8_t opcode) { return ib::opcode_name(opcode); }

}  // namespace nicsim::hca
