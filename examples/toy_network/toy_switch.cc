#include "toy_switch.h"

#include "core/sim.h"
#include "fabric/port.h"
#include "trace/stats.h"

namespace toy {

namespace fabric = nicsim::fabric;

namespace {

const nicsim::ParamRegistration toy_switch_params(
    "switch.toy_ring", "the toy network's ring switch: 3 ports (host, next, previous)",
    {
        {"hop_latency", nicsim::UnitKind::Time, "50ns", "0ps", "100us", {}, "head in to head out"},
    });

}  // namespace

ToySwitch::ToySwitch(fabric::Fabric& fabric, std::uint32_t device_id, std::string name, const nicsim::ParamSet& params,
                     std::uint16_t host_address)
    : Device(fabric, device_id, std::move(name)),
      host_address_(host_address),
      hop_latency_(params.time("hop_latency")) {
  add_ports(3);
  nicsim::StatsRegistry& stats = nicsim::Sim::get().stats();
  stats.counter(this->name(), "toy_forwarded", "frames", &forwarded_, "frames passed on around the ring");
  stats.counter(this->name(), "toy_delivered", "frames", &delivered_, "frames handed to the host");
}

void ToySwitch::receive(fabric::Port& in, fabric::Packet* p) {
  const bool mine = p->meta.dlid == host_address_;
  ++(mine ? delivered_ : forwarded_);
  p->ready_at = nicsim::now() + hop_latency_;
  port(mine ? 1 : 2).send(p);  // the port frees `in`'s buffer once the frame is out
}

}  // namespace toy
