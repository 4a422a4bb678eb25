#include "world/node.h"

#include <fmt/format.h>

#include <stdexcept>

#include "core/sim.h"
#include "fabric/raw_nic.h"
#include "fabric/remote_device.h"
#include "trace/stats.h"

namespace nicsim {

NicRegistry& NicRegistry::instance() {
  static NicRegistry registry;
  return registry;
}

const NicRegistry::Kind* NicRegistry::find(const std::string& kind) const {
  auto it = kinds_.find(kind);
  return it == kinds_.end() ? nullptr : &it->second;
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
  const NicRegistry::Kind* kind = NicRegistry::instance().find(spec.nic);
  if (!kind) throw std::logic_error(fmt::format("node {}: NIC kind '{}' has no factory", spec.name, spec.nic));
  if (!runs_here) {
    nic_ = std::make_unique<fabric::RemoteDevice>(fabric, id, spec.name, spec.ports, spec.nic_params);
    lids_.assign(nic_->num_ports(), 0);
    return;
  }
  host_ = std::make_unique<host::Host>(fmt::format("{}_host", spec.name).c_str(), id, spec.host);
  host_->set_ipv4(spec.ipv4);
  bus_ = std::make_unique<host::HostBus>(fmt::format("{}_bus", spec.name).c_str(), *host_, spec.bus);
  NicContext ctx{fabric, id, spec.name, *this, spec.nic_params};
  nic_ = kind->factory(ctx);
  if (nic_->num_ports() != spec.ports)
    throw std::logic_error(fmt::format("node {}: its {} NIC has {} ports; the scenario gives it {}", spec.name,
                                       spec.nic, nic_->num_ports(), spec.ports));
  lids_.assign(nic_->num_ports(), 0);
  register_stats();
}

fabric::Port& Node::stand_in_port(std::uint32_t port) {
  auto* remote = dynamic_cast<fabric::RemoteDevice*>(nic_.get());
  if (!remote) throw std::logic_error(fmt::format("node {} runs in this process: it has no stand-in ports", name()));
  if (remote->has_port(port)) return remote->port(port);
  fabric::Port& p = remote->stand_in(port);
  const NicRegistry::Kind* kind = NicRegistry::instance().find(spec_.nic);
  if (kind && kind->remote_ports) kind->remote_ports(p, spec_.nic_params);
  return p;
}

void Node::register_stats() {
  auto& stats = Sim::get().stats();
  host::HostBus* bus = bus_.get();
  const std::string bus_name = spec_.name + ".bus";
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
      spec_.name + ".host", "memory_in_use", "bytes", [mem] { return static_cast<double>(mem->bytes_in_use()); },
      "node memory allocated at the end of the run");
}

void Node::set_block(std::uint32_t block) {
  block_ = block;
  if (host_) host_->set_block(block);
  nic_->set_block(block);
}

void Node::not_here(const char* part) const {
  throw std::logic_error(fmt::format("node {}: its {} is in the process that runs it", spec_.name, part));
}

// The node's software (drivers, protocol layers) goes first, while the NIC
// it drives still exists.
Node::~Node() {
  if (host_) host_->release_software();
}

void Node::set_lid(std::uint32_t port, std::uint16_t lid) {
  lids_.at(port - 1) = lid;
  nic_->assign_address(port, lid);
}

}  // namespace nicsim
