// The HCA's subnet management interface for QP0 packets from the wire. The
// InfiniHost answers SMPs in firmware: a request (Get, Set) that ends here,
// directed-route or LID-routed, goes to the SMA (sma.cc), and the answer
// leaves on VL15 after the firmware's `sma_latency`. Responses and traps are
// for the subnet manager: they go to the QP0 that software created with
// create_spl_qp. VL15 SMPs pass while the port is Init or Armed; data waits
// for Active.
#include <fmt/format.h>

#include "core/sim.h"
#include "fabric/fabric.h"
#include "hca_model/hca.h"
#include "hca_model/sma.h"
#include "trace/trace.h"

namespace nicsim::hca {

namespace {

bool is_request(std::uint8_t method) {
  return method == fabric::smp::kMethodGet || method == fabric::smp::kMethodSet ||
         method == fabric::smp::kMethodTrapRepress;
}

}  // namespace

QpCtx* Hca::smi_receive(fabric::Port& in, fabric::Packet& p) {
  using namespace fabric::smp;
  const std::uint32_t port = in.number();
  Sim& sim = Sim::get();
  auto drop = [&](const char* why) -> QpCtx* {
    ++stats_.rx_dropped;
    if (sim.tracer().on(device_id(), Component::nic))
      sim.tracer().record(now(), device_id(), Component::nic, "smp_drop", {{"pkt", p.meta.id}, {"why", why}});
    return nullptr;
  };
  fabric::SmpPacket s;
  const char* why = "";
  if (!fabric::parse_smp(p, s, &why)) return drop(why);
  if (ib_port(port).down()) return drop("port down");
  const std::uint8_t cls = s.mad[kMgmtClass];
  const std::uint8_t method = s.mad[kMethod];
  if (cls == kClassDirected) {
    const bool returning = fabric::smp::get(s.mad + kStatus, 2) & kDirectionBit;
    const fabric::DrStep step = fabric::dr_arrive(s.mad, port, false, p_.ports);
    if (step.action != fabric::DrAction::Local) return drop(step.why);
    if (!returning) {
      if (!is_request(method)) return drop("outbound directed-route SMP is not a request");
      sma_answer(port, s);
      return nullptr;
    }
  } else if (cls == kClassLid) {
    if (is_request(method)) {
      if (s.dlid != port_lid(port) && s.dlid != fabric::kPermissiveLid) return drop("LID-routed SMP for another LID");
      sma_answer(port, s);
      return nullptr;
    }
  } else {
    return drop("not a subnet management class");
  }
  // A response or a trap: for the subnet manager on this node, if any.
  QpCtx* q = special_qp_base_[port - 1] ? qp(special_qp_base_[port - 1]) : nullptr;
  if (!q || q->state() == QpState::Reset || q->state() == QpState::Init) return drop("no QP0 ready for it");
  return q;
}

void Hca::sma_answer(std::uint32_t port, const fabric::SmpPacket& request) {
  using namespace fabric::smp;
  if (request.mad[kMethod] == kMethodTrapRepress) return;  // this SMA sends no traps to repress
  sma_jobs_.push_back({port, request});
  Sim::get().calendar().at_member<&Hca::sma_reply>(add_saturating(now(), p_.sma_latency), this);
}

// The oldest SMP waiting is answered (all wait the same sma_latency).
void Hca::sma_reply() {
  using namespace fabric::smp;
  const SmaJob j = std::move(sma_jobs_.front());
  sma_jobs_.pop_front();
  fabric::SmpPacket resp;
  process_local_mad(*this, j.port, j.request.mad, resp.mad);
  std::uint32_t out = j.port;
  if (j.request.mad[kMgmtClass] == kClassDirected) {
    out = fabric::dr_turn_around(resp.mad);
    resp.dlid = fabric::kPermissiveLid;
    resp.slid = fabric::kPermissiveLid;
  } else {
    resp.dlid = j.request.slid;
    resp.slid = port_lid(j.port);
  }
  if (out != j.port || ib_port(j.port).down()) {
    ++stats_.rx_dropped;
    return;
  }
  ++stats_.tx_packets;
  port(j.port).send(fabric::make_smp_packet(fabric().pool(), device_id(), resp));
}

}  // namespace nicsim::hca
