#include "fabric/packet_describe.h"

#include <array>
#include <string>

namespace nicsim::fabric {

namespace {
std::array<PacketDescriber, 256>& describers() {
  static std::array<PacketDescriber, 256> d{};
  return d;
}
}  // namespace

void register_packet_describer(std::uint8_t kind, PacketDescriber fn) { describers()[kind] = fn; }

InspectRows describe_packet(const Packet& p) {
  InspectRows rows;
  add_row(rows, "id", std::to_string(p.meta.id));
  add_row(rows, "kind", std::to_string(p.meta.kind));
  add_row(rows, "bytes", std::to_string(p.bytes.size()));
  add_row(rows, "vl", std::to_string(p.meta.vl));
  add_row(rows, "src", std::to_string(p.meta.slid));
  add_row(rows, "dst", std::to_string(p.meta.dlid));
  if (PacketDescriber d = describers()[p.meta.kind]) d(p, rows);
  return rows;
}

std::string packet_field(const Packet& p, const std::string& field) {
  for (InspectRow& r : describe_packet(p))
    if (r.field == field) return std::move(r.value);
  return {};
}

}  // namespace nicsim::fabric
