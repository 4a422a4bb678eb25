#include "hca_model/hca.h"

#include <fmt/format.h>

#include "core/sim.h"
#include "fabric/fabric.h"
#include "hca_model/commands.h"
#include "hca_model/loopback.h"
#include "hca_model/recv_engine.h"
#include "hca_model/send_engine.h"
#include "trace/stats.h"
#include "trace/trace.h"

namespace nicsim::hca {

const char* command_name(std::uint16_t opcode) {
  switch (opcode) {
#define NICSIM_X(name, value, doc) \
  case value:                      \
    return #name;
    NICSIM_HCA_COMMANDS(NICSIM_X)
#undef NICSIM_X
  }
  return "?";
}

const char* cmd_status_name(std::uint8_t status) {
  switch (status) {
#define NICSIM_X(name, value, doc) \
  case value:                      \
    return #name;
    NICSIM_HCA_CMD_STATUS(NICSIM_X)
#undef NICSIM_X
  }
  return "?";
}

const char* cqe_status_name(std::uint8_t status) {
  switch (status) {
#define NICSIM_X(name, value, doc) \
  case value:                      \
    return #name;
    NICSIM_HCA_CQE_STATUS(NICSIM_X)
#undef NICSIM_X
  }
  return "?";
}

const char* event_name(std::uint8_t type) {
  switch (type) {
#define NICSIM_X(name, value, doc) \
  case value:                      \
    return #name;
    NICSIM_HCA_EVENTS(NICSIM_X)
#undef NICSIM_X
  }
  return "?";
}

const FsmType& QpMachine::type() {
  using S = QpState;
  using E = QpEvent;
  // IBA 1.1 §10.3.1 (Figure 111): the QP state diagram. Any state may be
  // reset or moved to Error by a modify; the HCA itself moves RTS to SQE
  // (send error on UC/UD) and a QP that sends or receives (RTR, RTS, SQD)
  // to Error on a fatal fault.
  static const FsmType type = make_fsm_type<QpMachine>(
      "hca.qp", {{S::Reset, E::Rst2Init, S::Init, "rst2init"}, {S::Init, E::Init2Init, S::Init, "init2init"},
                 {S::Init, E::Init2Rtr, S::Rtr, "init2rtr"},   {S::Rtr, E::Rtr2Rts, S::Rts, "rtr2rts"},
                 {S::Rts, E::Rts2Rts, S::Rts, "rts2rts"},      {S::Rts, E::Rts2Sqd, S::Sqd, "rts2sqd"},
                 {S::Sqd, E::Sqd2Sqd, S::Sqd, "sqd2sqd"},      {S::Sqd, E::Sqd2Rts, S::Rts, "sqd2rts"},
                 {S::Rts, E::SendError, S::Sqe, "send_error"}, {S::Sqe, E::Sqe2Rts, S::Rts, "sqe2rts"},
                 {S::Reset, E::Reset, S::Reset, "reset"},      {S::Init, E::Reset, S::Reset, "reset"},
                 {S::Rtr, E::Reset, S::Reset, "reset"},        {S::Rts, E::Reset, S::Reset, "reset"},
                 {S::Sqd, E::Reset, S::Reset, "reset"},        {S::Sqe, E::Reset, S::Reset, "reset"},
                 {S::Error, E::Reset, S::Reset, "reset"},      {S::Reset, E::ToError, S::Error, "to_error"},
                 {S::Init, E::ToError, S::Error, "to_error"},  {S::Rtr, E::ToError, S::Error, "to_error"},
                 {S::Rts, E::ToError, S::Error, "to_error"},   {S::Sqd, E::ToError, S::Error, "to_error"},
                 {S::Sqe, E::ToError, S::Error, "to_error"},   {S::Error, E::ToError, S::Error, "to_error"},
                 {S::Rtr, E::WqError, S::Error, "to_error"},   {S::Rts, E::WqError, S::Error, "to_error"},
                 {S::Sqd, E::WqError, S::Error, "to_error"}});
  return type;
}

std::optional<QpEvent> QpMachine::modify_event(QpState from, QpState to) {
  // SendError and WqError are the HCA's own: a command cannot make them.
  static constexpr QpEvent kModify[] = {QpEvent::Rst2Init, QpEvent::Init2Init, QpEvent::Init2Rtr, QpEvent::Rtr2Rts,
                                        QpEvent::Rts2Rts,  QpEvent::Rts2Sqd,   QpEvent::Sqd2Sqd,  QpEvent::Sqd2Rts,
                                        QpEvent::Sqe2Rts,  QpEvent::Reset,     QpEvent::ToError};
  for (QpEvent e : kModify)
    if (Fsm<QpMachine>::next(from, e) == to) return e;
  return std::nullopt;
}

QpCtx::QpCtx(std::uint32_t n, std::uint32_t device, const std::string& owner, SendEngine& engine)
    : qpn(n),
      fsm(fmt::format("{}.qp{}", owner, n), device, QpState::Reset),
      ack_timer(Sim::get().calendar(), member_fn<&SendEngine::ack_timer_expired>(), &engine, n),
      rnr_timer(Sim::get().calendar(), member_fn<&SendEngine::rnr_wait_over>(), &engine, n),
      inspectable("hca.qp", fsm.object(), &inspect_qp, this) {}

Hca::Hca(fabric::Fabric& fabric, std::uint32_t device_id, std::string name, host::Host& host, host::HostBus& bus,
         const ParamSet& params)
    : Device(fabric, device_id, std::move(name)), p_(hca_params_from(params, device_id)), host_(host), bus_(bus) {
  add_ports(p_.ports);
  lids_.assign(p_.ports, 0);
  port_states_.assign(p_.ports, PortState{});
  for (std::uint32_t i = 1; i <= p_.ports; ++i) {
    ib_ports_.push_back(std::make_unique<fabric::IbPortState>(fmt::format("{}.port{}", this->name(), i), device_id));
    loopbacks_.push_back(std::make_unique<Loopback>(*this, i));
  }
  Sim::get().fsm().declare<QpMachine>();
  tpt_.resize(0, 0);
  tpt_inspectable_ = std::make_unique<Inspectable>("hca.tpt", this->name() + ".tpt", &inspect_tpt, &tpt_);
  const host::pci::Identity id{reg::kVendorMellanox, reg::kDeviceMt23108, reg::kRevision, reg::kClassInfiniBand};
  bus_.add_function(this->name() + ".hca", id, {{this->name() + ".bar0", p_.bar0, kBar0Size, this}});
  commands_ = std::make_unique<CommandProcessor>(*this);
  send_ = std::make_unique<SendEngine>(*this);
  recv_ = std::make_unique<RecvEngine>(*this);
  auto& st = Sim::get().stats();
  const std::string obj = this->name() + ".hca";
  st.counter(obj, "commands", "commands", &stats_.commands);
  st.counter(obj, "doorbells", "doorbells", &stats_.doorbells);
  st.counter(obj, "tx_packets", "packets", &stats_.tx_packets);
  st.counter(obj, "rx_packets", "packets", &stats_.rx_packets);
  st.counter(obj, "tx_bytes", "bytes", &stats_.tx_bytes, "payload bytes sent");
  st.counter(obj, "rx_bytes", "bytes", &stats_.rx_bytes, "payload bytes received");
  st.counter(obj, "rx_bad_crc", "packets", &stats_.rx_bad_crc, "dropped for a bad ICRC or VCRC");
  st.counter(obj, "rx_dropped", "packets", &stats_.rx_dropped, "dropped for any other reason");
  st.counter(obj, "acks_sent", "packets", &stats_.acks_sent);
  st.counter(obj, "naks_sent", "packets", &stats_.naks_sent);
  st.counter(obj, "rnr_naks_sent", "packets", &stats_.rnr_naks_sent);
  st.counter(obj, "retransmits", "packets", &stats_.retransmits);
  st.counter(obj, "timeouts", "events", &stats_.timeouts, "local ACK timer expiries");
  st.counter(obj, "cqes", "entries", &stats_.cqes);
  st.counter(obj, "eqes", "entries", &stats_.eqes);
  st.counter(obj, "interrupts", "interrupts", &stats_.interrupts);
  st.counter(obj, "loopback_packets", "packets", &stats_.loopback_packets,
             "sent to a port's own LID and turned around inside the HCA (never on the wire)");
}

Hca::~Hca() = default;

QpCtx* Hca::qp(std::uint32_t qpn) {
  auto it = qps_.find(qpn);
  return it == qps_.end() ? nullptr : it->second.get();
}

bool Hca::port_active(std::uint32_t port) const {
  return port >= 1 && port <= p_.ports && ib_ports_[port - 1]->active();
}

bool Hca::port_carries(std::uint32_t port, std::uint8_t vl) const {
  if (port < 1 || port > p_.ports) return false;
  return vl == fabric::kVl15 ? !ib_ports_[port - 1]->down() : ib_ports_[port - 1]->active();
}

void Hca::port_changed(std::uint32_t port, const char* cause) {
  fabric::IbPortState& st = ib_port(port);
  const fabric::Port& fp = Device::port(port);
  // The firmware trains a subnet-managed port's link from power-on (the SMA
  // must answer the SM before any driver loads); a static one waits for
  // INIT_IB. CLOSE_IB takes either down.
  const PortState& ps = port_states_[port - 1];
  const bool usable = (subnet_managed_ ? !ps.closed : ps.enabled) && fp.connected() && fp.up();
  const bool was_active = st.active();
  st.link(usable, cause);
  // Without a subnet manager the world programs routes statically, so an
  // enabled port whose link is up is active at once.
  if (!subnet_managed_ && usable) st.activate_static();
  // ib_port_state_t numbering: 1 = DOWN, 4 = ACTIVE. Statically configured
  // ports report every change; managed ones report leaving Active here and
  // entering it when the SM sets it (sm_set_port_state).
  if (!subnet_managed_)
    post_event(Event::PortChange, port, st.active() ? 4 : 1);
  else if (was_active && !st.active())
    post_event(Event::PortChange, port, 1);
}

bool Hca::sm_set_port_state(std::uint32_t port, std::uint8_t code) {
  fabric::IbPortState& st = ib_port(port);
  const bool was_active = st.active();
  if (!st.sm_set(code)) return false;
  if (!was_active && st.active()) post_event(Event::PortChange, port, 4);
  if (was_active && !st.active()) post_event(Event::PortChange, port, 1);
  return true;
}

bool Hca::loops_back(std::uint32_t port, const fabric::Packet& p) const {
  // LMC is 0 here (one LID per port), so the port's LID is the whole match.
  const std::uint16_t lid = lids_[port - 1];
  return p.meta.dlid == lid && lid != 0 && lid < fabric::kMulticastLidBase;
}

bool Hca::tx_full(std::uint32_t port, const fabric::Packet& p) {
  const std::size_t queued = loops_back(port, p) ? loopbacks_[port - 1]->queued() : Device::port(port).queued();
  return queued >= p_.port_queue;
}

void Hca::transmit(std::uint32_t port, fabric::Packet* p, std::uint32_t sender_qpn) {
  if (loops_back(port, *p)) {
    loopbacks_[port - 1]->send(p);
    return;
  }
  // A switch never sends a multicast back out of the port it came in on, so
  // this HCA's own members of the group (other than the sender) get their
  // copy from the loopback.
  if (p->meta.dlid >= fabric::kMulticastLidBase && p->meta.dlid != fabric::kPermissiveLid &&
      has_other_member(port, p->meta.dlid, sender_qpn))
    loopbacks_[port - 1]->send(fabric().pool().clone(*p));
  Device::port(port).send(p);
}

bool Hca::has_other_member(std::uint32_t port, std::uint16_t mlid, std::uint32_t sender_qpn) {
  auto it = mcgs_.find(mlid);
  if (it == mcgs_.end()) return false;
  for (std::uint32_t qpn : it->second) {
    const QpCtx* q = qp(qpn);
    if (qpn != sender_qpn && q && q->port == port) return true;
  }
  return false;
}

Hca::Staging* Hca::scratch() {
  if (scratch_free_.empty()) {
    scratch_all_.push_back(std::make_unique<Staging>());
    return scratch_all_.back().get();
  }
  Staging* s = scratch_free_.back();
  scratch_free_.pop_back();
  *s = Staging{};
  return s;
}

void Hca::release_scratch(Staging* s) { scratch_free_.push_back(s); }

// ---- MMIO ------------------------------------------------------------------

void Hca::b_transport(tlm::tlm_generic_payload& gp, sc_core::sc_time&) {
  const std::uint64_t off = gp.get_address();
  const unsigned len = gp.get_data_length();
  std::uint8_t* data = gp.get_data_ptr();
  gp.set_response_status(tlm::TLM_OK_RESPONSE);
  if (gp.is_write()) {
    if (off + len <= hcr_.size()) {
      std::memcpy(hcr_.data() + off, data, len);
      if (off <= reg::hcr_go_opcode.offset && off + len >= reg::hcr_go_opcode.offset + 4 &&
          (get(hcr_.data(), reg::hcr_go_opcode) & reg::kHcrGo))
        start_command();
      return;
    }
    if (off >= reg::db_send.offset && off + len <= reg::db_eq.offset + 8 && len == 8 && off % 8 == 0) {
      std::uint32_t w0, w1;
      std::memcpy(&w0, data, 4);
      std::memcpy(&w1, data + 4, 4);
      doorbell(off, w0, w1);
      return;
    }
    Sim::get().error(name() + ".hca", fmt::format("MMIO write of {} bytes to unmapped BAR0 offset {:#x}", len, off));
    gp.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
    return;
  }
  if (off + len <= hcr_.size()) {
    std::memcpy(data, hcr_.data() + off, len);
    return;
  }
  // Identification registers, laid out relative to the first of them.
  std::uint8_t id[0x18] = {};
  auto rel = [](Field f) { return Field{f.offset - reg::id_vendor.offset, f.width, f.name}; };
  put(id, rel(reg::id_vendor), reg::kVendorMellanox);
  put(id, rel(reg::id_device), reg::kDeviceMt23108);
  put(id, rel(reg::id_revision), reg::kRevision);
  put(id, rel(reg::id_node_guid), p_.node_guid);
  if (off >= reg::id_vendor.offset && off + len <= reg::id_vendor.offset + sizeof id) {
    std::memcpy(data, id + (off - reg::id_vendor.offset), len);
    return;
  }
  Sim::get().error(name() + ".hca", fmt::format("MMIO read of {} bytes from unmapped BAR0 offset {:#x}", len, off));
  gp.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
}

void Hca::start_command() { commands_->start(hcr_.data()); }

void Hca::doorbell(std::uint64_t offset, std::uint32_t w0, std::uint32_t w1) {
  ++stats_.doorbells;
  Sim& sim = Sim::get();
  if (sim.tracer().on(device_id(), Component::nic))
    sim.tracer().record(now(), device_id(), Component::nic, "doorbell",
                        {{"offset", static_cast<unsigned long>(offset)}, {"w0", w0}, {"w1", w1}});
  if (offset == reg::db_send.offset || offset == reg::db_recv.offset)
    wq_doorbell(offset == reg::db_send.offset, w0, w1);
  else if (offset == reg::db_cq.offset)
    cq_doorbell(w0, w1);
  else
    eq_doorbell(w0, w1);
}

// w0: the QPN; w1: the new producer count.
void Hca::wq_doorbell(bool send, std::uint32_t w0, std::uint32_t w1) {
  QpCtx* q = qp(w0 & kMaxQpn);
  if (!q) {
    Sim::get().error(name() + ".hca", fmt::format("doorbell for QP {} which does not exist", w0 & kMaxQpn));
    return;
  }
  WorkQueue& wq = send ? q->sq : q->rq;
  if (wq.entries == 0 || w1 - wq.consumer > wq.entries) {
    Sim::get().error(name() + ".hca", fmt::format("QP {}: doorbell producer {} overruns a {}-entry queue (consumer {})",
                                                  q->qpn, w1, wq.entries, wq.consumer));
    return;
  }
  wq.producer = w1;
  if (send)
    send_->kick(*q, cycles(p_.doorbell_cycles));
  else
    recv_->rq_doorbell(*q);
}

// w0: the command (top byte) and the CQN; w1: the consumer count.
void Hca::cq_doorbell(std::uint32_t w0, std::uint32_t w1) {
  const std::uint32_t n = w0 & 0xffffff;
  const std::uint8_t cmd = static_cast<std::uint8_t>(w0 >> 24);
  auto it = cqs_.find(n);
  if (it == cqs_.end() || !it->second.valid) {
    Sim::get().error(name() + ".hca", fmt::format("doorbell for CQ {} which does not exist", n));
    return;
  }
  CqCtx& cq = it->second;
  if (cmd == static_cast<std::uint8_t>(reg::CqDoorbell::UpdateConsumer)) {
    cq.consumer = w1;
  } else if (cmd == static_cast<std::uint8_t>(reg::CqDoorbell::ArmNext) ||
             cmd == static_cast<std::uint8_t>(reg::CqDoorbell::ArmSolicited)) {
    cq.consumer = w1;
    cq.arm = static_cast<reg::CqDoorbell>(cmd);
    // Entries already waiting beyond the consumer count fire at once.
    if (cq.producer != cq.consumer && cq.arm == reg::CqDoorbell::ArmNext) {
      cq.arm = reg::CqDoorbell::UpdateConsumer;
      post_event(Event::Completion, n, 0, 0, cq.eqn);
    }
  } else {
    Sim::get().error(name() + ".hca", fmt::format("CQ doorbell with unknown command {}", cmd));
  }
}

// w0: the command (top byte) and the EQN; w1: the consumer count.
void Hca::eq_doorbell(std::uint32_t w0, std::uint32_t w1) {
  const std::uint32_t n = w0 & 0xffffff;
  const std::uint8_t cmd = static_cast<std::uint8_t>(w0 >> 24);
  auto it = eqs_.find(n);
  if (it == eqs_.end() || !it->second.valid) {
    Sim::get().error(name() + ".hca", fmt::format("doorbell for EQ {} which does not exist", n));
    return;
  }
  EqCtx& eq = it->second;
  eq.consumer = w1;
  if (cmd == static_cast<std::uint8_t>(reg::EqDoorbell::UpdateAndArm)) {
    eq.armed = true;
    if (eq.producer != eq.consumer && eq.irq_vector >= 0) {
      eq.armed = false;
      ++stats_.interrupts;
      host_.irq().raise(eq.irq_vector);
    }
  }
}

// ---- completions and events ------------------------------------------------

bool Hca::write_cqe(std::uint32_t cqn, Staging* s, bool solicited) {
  auto it = cqs_.find(cqn);
  if (it == cqs_.end() || !it->second.valid) {
    Sim::get().error(name() + ".hca", fmt::format("completion for CQ {} which does not exist", cqn));
    return false;
  }
  CqCtx& cq = it->second;
  if (cq.producer - cq.consumer >= cq.entries) {
    if (!cq.overrun) post_event(Event::CqError, cqn, 0, 0, cq.eqn);
    cq.overrun = true;
    return false;
  }
  const std::uint32_t index = cq.producer % cq.entries;
  std::uint8_t* cqe = s->data();
  put(cqe, cqe::owner, ((cq.producer / cq.entries) & 1) ? 0 : cqe::kOwnerHw);
  ++cq.producer;
  ++stats_.cqes;
  const bool notify = cq.arm == reg::CqDoorbell::ArmNext || (cq.arm == reg::CqDoorbell::ArmSolicited && solicited);
  if (notify) cq.arm = reg::CqDoorbell::UpdateConsumer;
  s->object = cqn;
  s->notify = notify;
  bus_.dma_write("hca.cqe", cq.base + static_cast<std::uint64_t>(index) * cqe::kSize, cqe, cqe::kSize,
                 {member_fn<&Hca::cqe_written>(), this, reinterpret_cast<std::uint64_t>(s)});
  return true;
}

void Hca::cqe_written(std::uint64_t arg) {
  auto* s = reinterpret_cast<Staging*>(arg & ~host::kDmaFailedBit);
  const std::uint32_t cqn = s->object;
  const bool notify = s->notify;
  release_scratch(s);
  if ((arg & host::kDmaFailedBit) || !notify) return;
  auto c = cqs_.find(cqn);
  if (c != cqs_.end()) post_event(Event::Completion, cqn, 0, 0, c->second.eqn);
}

void Hca::post_event(Event type, std::uint32_t object, std::uint32_t data, std::uint8_t subtype, std::uint32_t eqn) {
  auto it = eqs_.find(eqn);
  if (it == eqs_.end() || !it->second.valid || !(it->second.event_mask >> static_cast<unsigned>(type) & 1)) {
    // No EQ takes this event: a real HCA drops it too; say so in the trace.
    if (Sim::get().tracer().on(device_id(), Component::nic))
      Sim::get().tracer().record(now(), device_id(), Component::nic, "event_dropped",
                                 {{"type", event_name(static_cast<std::uint8_t>(type))}, {"object", object}});
    return;
  }
  EqCtx& eq = it->second;
  if (eq.producer - eq.consumer >= eq.entries) {
    Sim::get().error(name() + ".hca", fmt::format("EQ {} overrun: event {} for {} lost", eqn,
                                                  event_name(static_cast<std::uint8_t>(type)), object));
    return;
  }
  Staging* s = scratch();
  std::uint8_t* e = s->data();
  put(e, eqe::type, static_cast<std::uint8_t>(type));
  put(e, eqe::subtype, subtype);
  put(e, eqe::object, object);
  put(e, eqe::data, data);
  put(e, eqe::owner, ((eq.producer / eq.entries) & 1) ? 0 : cqe::kOwnerHw);
  const std::uint32_t index = eq.producer % eq.entries;
  ++eq.producer;
  ++stats_.eqes;
  if (Sim::get().tracer().on(device_id(), Component::nic))
    Sim::get().tracer().record(now(), device_id(), Component::nic, "event",
                               {{"type", event_name(static_cast<std::uint8_t>(type))}, {"object", object}});
  s->object = eqn;
  bus_.dma_write("hca.eqe", eq.base + static_cast<std::uint64_t>(index) * eqe::kSize, e, eqe::kSize,
                 {member_fn<&Hca::eqe_written>(), this, reinterpret_cast<std::uint64_t>(s)});
}

void Hca::eqe_written(std::uint64_t arg) {
  auto* s = reinterpret_cast<Staging*>(arg & ~host::kDmaFailedBit);
  const std::uint32_t eqn = s->object;
  release_scratch(s);
  auto q = eqs_.find(eqn);
  if (q != eqs_.end() && q->second.armed && q->second.irq_vector >= 0) {
    q->second.armed = false;
    ++stats_.interrupts;
    host_.irq().raise(q->second.irq_vector);
  }
}

void Hca::qp_to_error(QpCtx& q, const char* cause) {
  if (q.state() == QpState::Error) return;
  q.fsm.fire(QpEvent::WqError, cause);
  post_event(Event::WqCatastrophic, q.qpn);
  flush_qp(q);
}

void Hca::flush_qp(QpCtx& q) {
  // Every outstanding and posted WQE completes with a flush error, in order.
  send_->flush(q);
  recv_->flush(q);
}

// ---- fabric ----------------------------------------------------------------

void Hca::receive(fabric::Port& in, fabric::Packet* p) { recv_->packet(in, p); }

void Hca::link_state_changed(fabric::Port& port, bool up) { port_changed(port.number(), up ? "link_up" : "link_down"); }

void Hca::transmitted(fabric::Port& port, const fabric::Packet&, Tick, Tick end) {
  send_->port_has_room(port.number(), end);
}

}  // namespace nicsim::hca
