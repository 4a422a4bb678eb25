// Registers the HCA as NIC kind "hca" (parameters: scope "nic.hca").
#include "hca_model/hca.h"
#include "world/node.h"

namespace nicsim::hca {
namespace {
const bool registered = [] {
  NicRegistry::instance().add("hca", [](NicContext& c) -> std::unique_ptr<fabric::Device> {
    return std::make_unique<Hca>(c.fabric, c.device_id, c.name, c.node.host(), c.node.bus(), c.params);
  });
  return true;
}();
}  // namespace
}  // namespace nicsim::hca
