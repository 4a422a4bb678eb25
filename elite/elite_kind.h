// Registers the Elite network kind (elite_kind.cc) with world/network_kinds.h.
#pragma once

namespace nicsim::elite {

// Called once, from a static initialiser of this layer.
void register_network_kind();

}  // namespace nicsim::elite
