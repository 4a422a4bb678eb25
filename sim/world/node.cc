#include "world/node.h"

#include <fmt/format.h>

#include <stdexcept>

#include "core/sim.h"
#include "fabric/raw_nic.h"
#include "trace/stats.h"

namespace nicsim {

NicRegistry& NicRegistry::instance() {
  static NicRegistry registry;
  return registry;
}

const NicFactory* NicRegistry::find(const std::string& kind) const {
  auto it = factories_.find(kind);
  return it == factories_.end() ? nullptr : &it->second;
}

namespace {
// The raw NIC kind lives in sim/fabric; register its factory here.
const bool raw_registered = [] {
  NicRegistry::instance().add("raw", [](NicContext& c) -> std::unique_ptr<fabric::Device> {
    return std::make_unique<fabric::RawNic>(c.fabric, c.device_id, c.name, c.node.id(), c.params);
  });
  return true;
}();
}  // namespace

Node::Node(const NodeSpec& spec, std::uint32_t id, fabric::Fabric& fabric, bool runs_here) : spec_(spec), id_(id) {
  host_ = std::make_unique<host::Host>(fmt::format("{}_host", spec.name).c_str(), id, spec.host, runs_here);
  host_->set_ipv4(spec.ipv4);
  bus_ = std::make_unique<host::HostBus>(fmt::format("{}_bus", spec.name).c_str(), *host_, spec.bus);
  const NicFactory* factory = NicRegistry::instance().find(spec.nic);
  if (!factory) throw std::logic_error(fmt::format("node {}: NIC kind '{}' has no factory", spec.name, spec.nic));
  NicContext ctx{fabric, id, spec.name, *this, spec.nic_params};
  nic_ = (*factory)(ctx);
  lids_.assign(nic_->num_ports(), 0);
  auto& stats = Sim::get().stats();
  host::HostBus* bus = bus_.get();
  const std::string bus_name = spec.name + ".bus";
  stats.gauge(
      bus_name, "bytes_read", "bytes", [bus] { return static_cast<double>(bus->bytes_read()); },
      "DMA reads of host memory");
  stats.gauge(
      bus_name, "bytes_written", "bytes", [bus] { return static_cast<double>(bus->bytes_written()); },
      "DMA writes to host memory");
  stats.gauge(
      bus_name, "busy", "ps", [bus] { return static_cast<double>(bus->busy_time()); }, "time the bus was occupied");
  host::HostMemory* mem = &host_->memory();
  stats.gauge(
      spec.name + ".host", "memory_in_use", "bytes", [mem] { return static_cast<double>(mem->bytes_in_use()); },
      "node memory allocated at the end of the run");
}

// The node's software (drivers, protocol layers) goes first, while the NIC
// it drives still exists.
Node::~Node() { host_->release_software(); }

void Node::set_lid(std::uint32_t port, std::uint16_t lid) {
  lids_.at(port - 1) = lid;
  nic_->assign_address(port, lid);
}

}  // namespace nicsim
