// A device another process of the run runs (docs/partition.md). This
// process keeps only what its own devices need of it: its name, its
// addresses, and those of its ports that links from this process's devices
// reach (stand_in); the rest are numbers only. Packets and
// credits for it leave through the block exchange at those ports, so
// nothing here may hand it a packet or ask it to act; that would be a
// partitioning error, reported as such.
#pragma once
#include <cstdint>
#include <string>

#include "core/params.h"
#include "fabric/port.h"

namespace nicsim::fabric {

class RemoteDevice : public Device {
 public:
  // `params`: the parameters the scenario gives the device (its kind's
  // scope), which a network kind may read to agree with the process that
  // runs it (a switch's routing engine); they outlive the device.
  RemoteDevice(Fabric& fabric, std::uint32_t device_id, std::string name, std::uint32_t ports, const ParamSet& params);
  const ParamSet& params() const { return params_; }
  // The Port for `number`, built on first asking: the far end of a link
  // from one of this process's devices.
  Port& stand_in(std::uint32_t number) { return build_port(number); }
  bool runs_elsewhere() const override { return true; }

  void receive(Port& in, Packet* p) override;
  void transmitted(Port& port, const Packet& p, Tick start, Tick end) override;
  // Its own process sees the change at its end; nothing to do here.
  void link_state_changed(Port& port, bool up) override {}

 private:
  const ParamSet& params_;
};

}  // namespace nicsim::fabric
