// A simulated node: its host (threads, memory, CPU, interrupts), its host
// bus, and its NIC (a fabric device of the kind the scenario names).
#pragma once
#include <functional>
#include <map>
#include <memory>
#include <string>

#include "fabric/fabric.h"
#include "host/bus.h"
#include "host/host.h"
#include "scenario/loader.h"

namespace nicsim {

class Node;

// What a NIC factory gets to build the NIC of one node.
struct NicContext {
  fabric::Fabric& fabric;
  std::uint32_t device_id;
  std::string name;  // device name used on the fabric (the node's name)
  Node& node;
  const ParamSet& params;  // the "nic.<kind>" scope
};
using NicFactory = std::function<std::unique_ptr<fabric::Device>(NicContext&)>;

// NIC kinds by name. A kind also registers the param scope "nic.<kind>".
class NicRegistry {
 public:
  static NicRegistry& instance();
  void add(const std::string& kind, NicFactory factory) { factories_[kind] = std::move(factory); }
  const NicFactory* find(const std::string& kind) const;

 private:
  std::map<std::string, NicFactory> factories_;
};

class Node {
 public:
  // `runs_here` false: another process of the run runs the node
  // (fabric::Device::runs_elsewhere).
  Node(const NodeSpec& spec, std::uint32_t id, fabric::Fabric& fabric, bool runs_here = true);
  ~Node();
  std::uint32_t id() const { return id_; }
  const std::string& name() const { return spec_.name; }
  const NodeSpec& spec() const { return spec_; }
  host::Host& host() { return *host_; }
  host::HostBus& bus() { return *bus_; }
  fabric::Device& nic() { return *nic_; }
  template <class T>
  T* nic_as() {
    return dynamic_cast<T*>(nic_.get());
  }
  std::uint16_t lid(std::uint32_t port = 1) const { return lids_.at(port - 1); }
  void set_lid(std::uint32_t port, std::uint16_t lid);

 private:
  const NodeSpec& spec_;
  std::uint32_t id_;
  std::unique_ptr<host::Host> host_;
  std::unique_ptr<host::HostBus> bus_;
  std::unique_ptr<fabric::Device> nic_;
  std::vector<std::uint16_t> lids_;
};

}  // namespace nicsim
