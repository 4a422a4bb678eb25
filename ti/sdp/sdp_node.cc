// SDP's state on one node: the transport registered with it and the
// node's sockets (the completion callbacks find their socket by CQ). All
// simulated nodes share one process, so this lives with the node's host
// (host::HostSoftware), never in a static variable.
#include <memory>

#include "host/host.h"

extern "C" {  // the C sockets' header
#include "ti/sdp/sdp_sock.h"
}

namespace {

struct SdpNode : nicsim::host::HostSoftware {
  sdp_node state{};
};

}  // namespace

extern "C" struct sdp_node* sdp_node_state(void) {
  nicsim::host::Host* h = nicsim::host::Host::current_host();
  if (!h) return nullptr;
  if (SdpNode* n = h->software<SdpNode>()) return &n->state;
  return &h->add_software(std::make_unique<SdpNode>()).state;
}
