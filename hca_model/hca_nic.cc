// Registers the HCA as NIC kind "hca" (parameters: scope "nic.hca").
#include "hca_model/hca.h"
#include "world/network_kinds.h"
#include "world/node.h"

namespace nicsim::hca {
namespace {
const bool registered = [] {
  NicRegistry::instance().add("hca", [](NicContext& c) -> std::unique_ptr<fabric::Device> {
    return std::make_unique<Hca>(c.fabric, c.device_id, c.name, c.node.host(), c.node.bus(), c.params);
  });
  NetworkKinds::instance().set_nic_pcap_format("hca", "infiniband");
  return true;
}();
}  // namespace
}  // namespace nicsim::hca
