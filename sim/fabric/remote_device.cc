#include "fabric/remote_device.h"

#include <fmt/format.h>

#include <stdexcept>

namespace nicsim::fabric {

RemoteDevice::RemoteDevice(Fabric& fabric, std::uint32_t device_id, std::string name, std::uint32_t ports,
                           const ParamSet& params)
    : Device(fabric, device_id, std::move(name)), params_(params) {
  add_port_slots(ports);
}

void RemoteDevice::receive(Port& in, Packet*) {
  throw std::logic_error(fmt::format("{} received a packet in a process that does not run it", in.path()));
}

void RemoteDevice::transmitted(Port& port, const Packet&, Tick, Tick) {
  throw std::logic_error(fmt::format("{} sent a packet in a process that does not run it", port.path()));
}

}  // namespace nicsim::fabric
