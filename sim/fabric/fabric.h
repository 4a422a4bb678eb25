// The fabric of one simulation: devices (NICs and switches), links, the
// packet pool, and the addressing plan (LIDs per node port).
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "fabric/link.h"
#include "fabric/packet.h"
#include "fabric/port.h"

namespace nicsim::fabric {

class Switch;

// A port by its identity: the device's id and the port's number (0: none).
struct PortRef {
  std::uint32_t device = 0;
  std::uint32_t port = 0;
  bool wired() const { return port != 0; }
};

// Who is wired to whom, as identities: every link of the fabric, whether or
// not this process built it. A process that runs part of a world builds
// Port objects only for the links that reach its own devices
// (docs/partition.md), yet computes the whole fabric's routes; routing
// reads the wiring, never the ports.
class Wiring {
 public:
  void connect(PortRef a, PortRef b);
  // The port wired to `device`'s port `port` (port 0 when none is).
  PortRef peer(std::uint32_t device, std::uint32_t port) const;

 private:
  void place(PortRef end, PortRef peer);
  std::vector<std::vector<PortRef>> peers_;  // by device id, then port number - 1
};

class Fabric {
 public:
  Fabric() = default;
  Fabric(const Fabric&) = delete;
  PacketPool& pool() { return pool_; }

  void add_device(Device* d);  // not owned; registered for lookup by id
  Device* device(std::uint32_t id) const { return id < devices_.size() ? devices_[id] : nullptr; }
  const std::vector<Device*>& devices() const { return devices_; }
  Link& connect(std::string name, Port& a, Port& b, const ParamSet& params, std::uint64_t seed);
  const std::vector<std::unique_ptr<Link>>& links() const { return links_; }
  Link* link(std::string_view name) const;
  // Every link's ends, the ones connect() built and the ones this process
  // only knows of (add_unbuilt_link).
  const Wiring& wiring() const { return wiring_; }
  void add_unbuilt_link(PortRef a, PortRef b) { wiring_.connect(a, b); }

  // Total packet-hops (packets put on a wire), for speed figures.
  std::uint64_t packet_hops() const { return packet_hops_; }
  void count_hop() { ++packet_hops_; }
  void count_hops(std::uint64_t n) { packet_hops_ += n; }
  // Link failures so far (a link going down): a reply carried back along a
  // route checks its links again only when this changed (Port::route_intact).
  std::uint64_t link_downs() const { return link_downs_; }
  // Kept by the links: how many are down, how many inject losses or bit
  // errors. With none, and nothing watching the ports (traces, packet
  // capture), a carried reply needs nothing of the links it crosses
  // (Port::carry_back's fast path).
  void link_went_down() {
    ++link_downs_;
    ++links_down_;
  }
  void link_came_up() { --links_down_; }
  void count_injecting(int delta) { links_injecting_ += delta; }
  void watch_ports() { ports_watched_ = true; }
  // Links joining two partition blocks (Link::set_cut).
  std::uint32_t cut_links() const { return cut_links_; }
  void count_cut_link() { ++cut_links_; }
  bool links_plain() const { return links_down_ == 0 && links_injecting_ == 0 && !ports_watched_; }

 private:
  PacketPool pool_;
  std::vector<Device*> devices_;
  std::vector<std::unique_ptr<Link>> links_;
  Wiring wiring_;
  std::uint64_t packet_hops_ = 0;
  std::uint64_t link_downs_ = 0;
  std::int64_t links_down_ = 0;
  std::int64_t links_injecting_ = 0;
  std::uint32_t cut_links_ = 0;
  bool ports_watched_ = false;
};

}  // namespace nicsim::fabric
