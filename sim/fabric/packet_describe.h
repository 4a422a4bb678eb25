// A packet's fields by name, for people and for the debugger's packet
// breakpoints: the core gives the fabric's own (id, kind number, length, VL,
// source and destination address); a network layer registers a describer
// for its packet kinds that adds the fields of its headers.
#pragma once
#include <cstdint>

#include "core/inspect.h"
#include "fabric/packet.h"

namespace nicsim::fabric {

// Adds `p`'s network-specific fields to `rows` (field names in lower case).
using PacketDescriber = void (*)(const Packet& p, InspectRows& rows);
// One per packet kind; a second for the same kind replaces the first.
void register_packet_describer(std::uint8_t kind, PacketDescriber fn);
// The fabric's fields, then the kind's describer's.
InspectRows describe_packet(const Packet& p);
// The value of one field of `p` ("" when it has none).
std::string packet_field(const Packet& p, const std::string& field);

}  // namespace nicsim::fabric
