#include "hca_model/loopback.h"

#include <algorithm>

#include "core/sim.h"
#include "fabric/fabric.h"
#include "hca_model/hca.h"
#include "hca_model/recv_engine.h"
#include "hca_model/send_engine.h"
#include "trace/trace.h"

namespace nicsim::hca {

Loopback::Loopback(Hca& hca, std::uint32_t port) : hca_(hca), port_(port) {}

Loopback::~Loopback() {
  for (const Queued& f : fifo_) hca_.fabric().pool().put(f.pkt);
}

void Loopback::send(fabric::Packet* p) {
  const HcaParams& prm = hca_.params();
  const Tick start = std::max(now(), busy_until_);
  busy_until_ = start + serialization_time(p->bytes.size(), prm.loopback_bps);
  const Tick arrives = busy_until_ + prm.loopback_latency;
  ++packets_;
  bytes_ += p->bytes.size();
  ++hca_.mutable_stats().loopback_packets;
  Sim& sim = Sim::get();
  if (sim.tracer().on(hca_.device_id(), Component::nic))
    sim.tracer().record(now(), hca_.device_id(), Component::nic, "loopback",
                        {{"port", port_},
                         {"pkt", p->meta.id},
                         {"len", p->bytes.size()},
                         {"arrives_ps", static_cast<unsigned long>(arrives)}});
  fifo_.push_back(Queued{arrives, p});
  if (fifo_.size() == 1) sim.calendar().at_member<&Loopback::deliver>(arrives, this);
}

void Loopback::deliver() {
  const Queued f = fifo_.front();
  fifo_.pop_front();
  if (!fifo_.empty()) Sim::get().calendar().at_member<&Loopback::deliver>(fifo_.front().arrives, this);
  // The receive side takes it like a packet from the wire, but it holds no
  // input buffer of the port (no credit goes back over a link).
  hca_.recv_engine().packet(hca_.port(port_), f.pkt);
  hca_.send_engine().port_has_room(port_, now());
}

}  // namespace nicsim::hca
