// The toy ring switch (switch kind "toy_ring"): port 1 to its host, port 2
// on to the next switch of the ring, port 3 in from the previous one. A
// frame for its host's address leaves by port 1, any other by port 2, after
// `switch.toy_ring.hop_latency`.
#pragma once
#include <cstdint>
#include <string>

#include "core/params.h"
#include "fabric/fabric.h"

namespace toy {

class ToySwitch : public nicsim::fabric::Device {
 public:
  ToySwitch(nicsim::fabric::Fabric& fabric, std::uint32_t device_id, std::string name, const nicsim::ParamSet& params,
            std::uint16_t host_address);
  void receive(nicsim::fabric::Port& in, nicsim::fabric::Packet* p) override;

 private:
  std::uint16_t host_address_;
  nicsim::Tick hop_latency_;
  std::uint64_t forwarded_ = 0, delivered_ = 0;
};

}  // namespace toy
