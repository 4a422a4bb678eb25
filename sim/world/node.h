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
// What a process that does not run a node needs of its NIC: the set-up of
// a port that a device of this process is linked to, as that device reads
// it (Port::deliver_after_tail), done on the fabric::RemoteDevice's stand-in
// for the port, from the node's "nic.<kind>" parameters. Called once for
// each stand-in port built, whichever its number (Port::number).
using RemotePortSetup = std::function<void(fabric::Port& stand_in, const ParamSet& params)>;

// NIC kinds by name. A kind also registers the param scope "nic.<kind>".
class NicRegistry {
 public:
  struct Kind {
    NicFactory factory;
    RemotePortSetup remote_ports;  // empty: the ports' defaults
  };
  static NicRegistry& instance();
  void add(const std::string& kind, NicFactory factory, RemotePortSetup remote_ports = {}) {
    kinds_[kind] = Kind{std::move(factory), std::move(remote_ports)};
  }
  const Kind* find(const std::string& kind) const;

 private:
  std::map<std::string, Kind> kinds_;
};

class Node {
 public:
  // `runs_here` false: another process of the run runs the node. This one
  // builds no host or bus for it, and its NIC is a fabric::RemoteDevice:
  // its name, addresses, and the ports of its links to this process's
  // devices (stand_in_port).
  Node(const NodeSpec& spec, std::uint32_t id, fabric::Fabric& fabric, bool runs_here = true);
  ~Node();
  std::uint32_t id() const { return id_; }
  const std::string& name() const { return spec_.name; }
  const NodeSpec& spec() const { return spec_; }
  bool runs_here() const { return host_ != nullptr; }
  // The partition block the node belongs to: its host's, its NIC's.
  std::uint32_t block() const { return block_; }
  void set_block(std::uint32_t block);
  // Only where the node runs here (std::logic_error elsewhere).
  host::Host& host() {
    if (!host_) not_here("host");
    return *host_;
  }
  host::HostBus& bus() {
    if (!bus_) not_here("bus");
    return *bus_;
  }
  fabric::Device& nic() { return *nic_; }
  template <class T>
  T* nic_as() {
    return dynamic_cast<T*>(nic_.get());
  }
  // Where another process runs the node: the stand-in for its NIC's port
  // `port`, set up as its NIC kind says the first time.
  fabric::Port& stand_in_port(std::uint32_t port);
  std::uint16_t lid(std::uint32_t port = 1) const { return lids_.at(port - 1); }
  void set_lid(std::uint32_t port, std::uint16_t lid);

 private:
  void register_stats();
  [[noreturn]] void not_here(const char* part) const;
  const NodeSpec& spec_;
  std::uint32_t id_;
  std::uint32_t block_ = 0;
  std::unique_ptr<host::Host> host_;
  std::unique_ptr<host::HostBus> bus_;
  std::unique_ptr<fabric::Device> nic_;
  std::vector<std::uint16_t> lids_;
};

}  // namespace nicsim
