// What the debugger shows of an InfiniBand packet, and what its packet
// breakpoints match: the LRH and BTH fields by name, and the AETH of an
// acknowledgement.
#include <fmt/format.h>

#include "fabric/packet_describe.h"
#include "ib_wire/ib_wire.h"

namespace nicsim::ib {

namespace {

void describe_ib_packet(const fabric::Packet& p, InspectRows& rows) {
  const ParsedPacket parsed = parse_packet(p.bytes, false);
  const PacketHeaders& h = parsed.hdr;
  add_row(rows, "slid", std::to_string(h.lrh.slid));
  add_row(rows, "dlid", std::to_string(h.lrh.dlid));
  add_row(rows, "sl", std::to_string(h.lrh.sl));
  if (!parsed.op) {
    add_row(rows, "verdict", verdict_name(parsed.verdict));
    return;
  }
  add_row(rows, "opcode", parsed.op->name);
  add_row(rows, "qpn", std::to_string(h.bth.dest_qp));
  add_row(rows, "psn", std::to_string(h.bth.psn));
  add_row(rows, "payload", std::to_string(parsed.payload.size()));
  if (parsed.op->has(Ext::Aeth)) {
    add_row(rows, "syndrome", fmt::format("{:#04x}", h.ext.aeth.syndrome));
    add_row(rows, "msn", std::to_string(h.ext.aeth.msn));
  }
  if (parsed.op->has(Ext::Reth)) {
    add_row(rows, "va", fmt::format("{:#x}", h.ext.reth.va));
    add_row(rows, "rkey", fmt::format("{:#x}", h.ext.reth.r_key));
  }
}

const bool registered = [] {
  fabric::register_packet_describer(fabric::kPacketIb, &describe_ib_packet);
  return true;
}();

}  // namespace

}  // namespace nicsim::ib
