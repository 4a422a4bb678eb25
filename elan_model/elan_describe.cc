// What the debugger shows of Elan3 packets and ack tokens, and what its
// packet breakpoints match: the header fields by name.
#include <fmt/format.h>

#include "elan_model/elan3_regs.h"
#include "elite/elite_packets.h"
#include "fabric/packet_describe.h"

namespace nicsim::elan3 {

namespace {

void describe_data(const fabric::Packet& p, InspectRows& rows) {
  if (p.bytes.size() < pkt::kHeaderSize) return;
  const std::uint8_t* h = p.bytes.data();
  add_row(rows, "trans", pkt::trans_name(static_cast<std::uint32_t>(get(h, pkt::trans))));
  add_row(rows, "node", std::to_string(get(h, pkt::route_first)));
  if (get(h, pkt::route_last)) add_row(rows, "node_last", std::to_string(get(h, pkt::route_last)));
  add_row(rows, "src_node", std::to_string(get(h, pkt::src_node)));
  add_row(rows, "seq", std::to_string(get(h, pkt::seq)));
  add_row(rows, "length", std::to_string(get(h, pkt::length)));
  add_row(rows, "addr", fmt::format("{:#x}", get(h, pkt::addr)));
  add_row(rows, "flags", fmt::format("{:#x}", get(h, pkt::flags)));
}

void describe_token(const fabric::Packet& p, InspectRows& rows) {
  if (p.bytes.size() < pkt::kAckSize) return;
  const std::uint8_t* h = p.bytes.data();
  add_row(rows, "node", std::to_string(get(h, pkt::ack_route)));
  add_row(rows, "token", pkt::token_name(static_cast<std::uint32_t>(get(h, pkt::ack_token))));
  add_row(rows, "src_node", std::to_string(get(h, pkt::ack_src_node)));
  add_row(rows, "seq", std::to_string(get(h, pkt::ack_seq)));
  add_row(rows, "expect", std::to_string(get(h, pkt::ack_expect)));
  add_row(rows, "count", std::to_string(get(h, pkt::ack_count)));
}

const bool registered = [] {
  fabric::register_packet_describer(fabric::kPacketElan, &describe_data);
  fabric::register_packet_describer(fabric::kPacketElanAck, &describe_token);
  return true;
}();

}  // namespace

}  // namespace nicsim::elan3
