// A fabric switch: N ports, a linear forwarding table by destination LID, a
// multicast forwarding table (port list per MLID), per-hop latency, and
// cut-through (default) or store-and-forward operation. Output queueing with
// back-pressure: a packet waiting for an output keeps its input buffer, so a
// congested output stalls the upstream links by withholding credits.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/inspect.h"
#include "core/params.h"
#include "fabric/port.h"
#include "ib_fabric/routing_engine.h"

namespace nicsim::fabric {

struct SwitchStats {
  std::uint64_t forwarded = 0;           // unicast packets sent on
  std::uint64_t replicated = 0;          // multicast copies made
  std::uint64_t dropped_no_route = 0;    // no LFT/MFT entry, or routed back out its input
  std::uint64_t dropped_port_state = 0;  // data through a port the SM has not made Active
  std::uint64_t head_of_line_waits = 0;  // unicast packets that waited for the one ahead on their input VL to cross
};

class Switch : public Device {
 public:
  Switch(Fabric& fabric, std::uint32_t device_id, std::string name, const ParamSet& params);
  ~Switch() override;

  void set_route(std::uint16_t dlid, std::uint32_t port);  // port 0 = no route
  // The whole linear forwarding table at once, indexed by DLID (0 = no
  // route): kept at its own size, where routes set one by one grow the
  // table geometrically (up to twice the memory on a large fabric).
  void set_routes(std::vector<std::uint8_t> table);
  // The static routing engine this switch's parameters ask for (`routing`).
  routing::Engine routing_engine() const { return routing_engine_; }
  std::uint32_t route(std::uint16_t dlid) const { return dlid < lft_.size() ? lft_[dlid] : 0; }
  void set_multicast(std::uint16_t mlid, std::vector<std::uint32_t> ports);
  const std::vector<std::uint32_t>& multicast_ports(std::uint16_t mlid) const;

  void receive(Port& in, Packet* p) override;
  void transmitted(Port& port, const Packet& p, Tick start, Tick end) override;
  void link_state_changed(Port& port, bool up) override;
  void set_managed(bool managed) override;
  class SwitchSma& sma() {
    return *sma_;
  }
  const SwitchStats& stats() const { return stats_; }
  Tick hop_latency() const { return hop_latency_; }

 private:
  // Input queues (`input_queue: fifo`): per input port and data VL, the
  // unicast packet forwarded to an output and not yet started there (the
  // head), and the packets behind it, which wait whatever their output
  // (head-of-line blocking, as an input-buffered crossbar). The crossbar
  // takes one packet at a time from an input VL: the next may go once the
  // head's tail has left (`free_at`), not while the head still crosses.
  static constexpr std::uint32_t kDataVls = 15;
  struct InputQueue {
    Packet* head = nullptr;
    Packet* first = nullptr;
    Packet* last = nullptr;
    Tick free_at = 0;  // the last head's tail leaves the input then
  };
  std::uint32_t input_slot(const Port& in, std::uint8_t vl) const { return (in.number() - 1) * kDataVls + vl; }
  // Routes and sends a unicast packet; false when it was dropped.
  bool forward_unicast(Port& in, Packet* p);
  void head_left(std::uint32_t slot);
  void next_from_input(std::uint64_t slot);
  void drop_unroutable(Port& in, Packet* p);
  Tick hop_latency_;
  bool store_and_forward_;
  bool fifo_inputs_;
  std::vector<InputQueue> inputs_;                                              // by input_slot
  std::vector<std::vector<std::pair<const Packet*, std::uint32_t>>> heads_on_;  // by output port: heads, their slot
  routing::Engine routing_engine_ = routing::Engine::Auto;
  std::vector<std::uint8_t> lft_;                // indexed by DLID
  std::vector<std::vector<std::uint32_t>> mft_;  // indexed by MLID - 0xC000
  SwitchStats stats_;
  std::unique_ptr<class SwitchSma> sma_;  // management port 0
  Inspectable inspectable_;               // the tables as the debugger shows them
  static void inspect(const void* self, InspectRows& rows);
};

}  // namespace nicsim::fabric
