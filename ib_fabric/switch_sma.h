// The subnet management agent of an IB switch, behind its management port
// (port 0). It answers SMPs for NodeInfo (NodeType switch), NodeDescription,
// SwitchInfo, PortInfo of every port, LinearForwardingTable (64-entry
// blocks) and MulticastForwardingTable (32 MLIDs x 16 ports per block),
// forwards directed-route SMPs hop by hop (IBA 14.2.2), and sends a
// link-state-change trap (128) to the master SM when a port's link changes.
// Every SMP that reaches port 0, answered or forwarded, occupies the SMA
// for `switch.sma_latency`, one at a time; the VL15 input buffer is held
// until the SMA takes the packet, so a burst beyond it is dropped.
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

#include "core/in_flight.h"
#include "ib_fabric/ib_mgmt.h"

namespace nicsim::fabric {

class Switch;

struct SwitchSmaStats {
  std::uint64_t smps = 0;          // SMPs handled by port 0
  std::uint64_t dr_forwarded = 0;  // directed-route SMPs sent on to the next hop
  std::uint64_t smp_dropped = 0;   // malformed, or against the directed-route rules
  std::uint64_t traps_sent = 0;
};

class SwitchSma {
 public:
  SwitchSma(Switch& sw, Tick latency);
  ~SwitchSma();
  // A VL15 packet arrived on `in` (the SMA owns it from here).
  void receive(Port& in, Packet* p);
  void set_managed(bool managed);
  bool managed() const { return managed_; }
  // Data may enter or leave through `port` (always, without an SM).
  bool port_active(std::uint32_t port) const { return !managed_ || states_[port]->active(); }
  std::uint8_t port_state(std::uint32_t port) const;
  void link_changed(std::uint32_t port, bool up);
  std::uint16_t lid() const { return lid_; }
  std::uint64_t guid() const { return guid_; }
  const SwitchSmaStats& stats() const { return stats_; }

 private:
  struct Job;
  static void run_thunk(void* job, std::uint64_t);
  void run(Job& j);
  void answer(std::uint32_t in_port, SmpPacket& req);
  std::uint16_t get_attr(std::uint16_t attr, std::uint32_t mod, std::uint32_t in_port, std::uint8_t* data);
  std::uint16_t set_attr(std::uint16_t attr, std::uint32_t mod, const std::uint8_t* data);
  void send_on(std::uint32_t port, const SmpPacket& s);
  void trap_link_change(std::uint32_t port);
  void drop(const char* why, std::uint64_t pkt);

  Switch& sw_;
  Tick latency_;
  Tick busy_until_ = 0;
  bool managed_ = false;
  std::uint64_t guid_;
  std::uint16_t lid_ = 0, sm_lid_ = 0, lft_top_ = 0;
  std::uint8_t lmc_ = 0;
  bool port_state_change_ = false;  // SwitchInfo:PortStateChange
  std::uint16_t trap_tid_ = 0;
  std::vector<std::unique_ptr<IbPortState>> states_;  // [0] = port 0; only when managed
  SwitchSmaStats stats_;
  InFlightList jobs_;  // on the calendar
};

}  // namespace nicsim::fabric
