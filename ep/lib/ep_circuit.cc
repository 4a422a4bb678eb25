// Virtual circuits (FSM ep.circuit) and node membership: set-up by special
// messages on the first transmit, heartbeats on connected circuits, probes
// of dead nodes, and failure (every active message completes ENETRESET).
// Design: docs/ep.md "Virtual circuits", "Node membership".
#include <fmt/format.h>

#include <cstring>

#include "core/sim.h"
#include "ep/lib/ep_internal.h"

namespace nicsim::ep {

const FsmType& CircuitMachine::type() {
  using S = CircuitState;
  using E = CircuitEvent;
  static const FsmType type =
      make_fsm_type<CircuitMachine>("ep.circuit", {
                                                      {S::Disconnected, E::Connect, S::Connecting, "connect"},
                                                      {S::Disconnected, E::ConnectSelf, S::Connected, "accepted"},
                                                      {S::Disconnected, E::PeerConnect, S::Connected, "accepted"},
                                                      {S::Connecting, E::PeerConnect, S::Connected, "accepted"},
                                                      {S::Connecting, E::ConnectAck, S::Connected, "accepted"},
                                                      {S::Connecting, E::NoAnswer, S::Disconnected, "refused"},
                                                      {S::Connecting, E::Unreachable, S::Failed, "failure"},
                                                      {S::Connected, E::Unreachable, S::Failed, "failure"},
                                                      {S::Connecting, E::PeerReset, S::Failed, "failure"},
                                                      {S::Connected, E::PeerReset, S::Failed, "failure"},
                                                      {S::Connecting, E::ReplyFailed, S::Failed, "failure"},
                                                      {S::Connected, E::ReplyFailed, S::Failed, "failure"},
                                                      {S::Failed, E::ResetDone, S::Disconnected, "reset_done"},
                                                  });
  return type;
}

void Circuit::inspect(const void* object, InspectRows& rows) {
  const Circuit& c = *static_cast<const Circuit*>(object);
  add_row(rows, "peer", std::to_string(c.peer));
  add_row(rows, "incarnation", std::to_string(c.incarnation));
  add_row(rows, "peer_incarnation", std::to_string(c.peer_incarnation));
  add_row(rows, "last_heard", format_time(c.last_heard));
  add_row(rows, "last_sent", format_time(c.last_sent));
  add_row(rows, "connect_started", format_time(c.connect_started));
  add_row(rows, "failed_at", c.state() == CircuitState::Failed ? format_time(c.failed_at) : "-");
  add_row(rows, "transmits_waiting", std::to_string(c.waiting.size()));
  add_row(rows, "tree_edges_waiting", std::to_string(c.waiting_edges.size()));
}

Circuit::Circuit(EpNode& node, std::uint32_t p)
    : fsm(fmt::format("{}.ep.vc{}", node.host.name(), p), node.host.node_id(), CircuitState::Disconnected),
      peer(p),
      inspectable("ep.circuit", fsm.object(), &Circuit::inspect, this) {
  Sim::get().fsm().declare<CircuitMachine>();
  connect_timer = std::make_unique<host::Timer>(node.host, "ep.connect", [&node, this] {
    if (state() != CircuitState::Connecting) return;
    if (Calendar::now() - connect_started < node.heartbeat_timeout) {
      // No answer yet: a busy peer (or one whose Elan is busy serving
      // others) can take longer than one timeout; ask again (a repeated
      // Connect of the same incarnation is answered again, nothing more).
      node.send_control(peer, Control::Connect, incarnation, 0);
      connect_timer->start(node.connect_timeout);
      return;
    }
    // No answer within the heartbeat timeout: the node is taken as dead
    // until a probe is answered.
    BT_CLEAR(node.live.data(), peer);
    fsm.fire(CircuitEvent::NoAnswer, "refused");
    std::deque<ep_txd*> q;
    q.swap(waiting);
    for (ep_txd* t : q) node.force(t, ENETRESET);
    std::vector<std::function<void(bool)>> edges;
    edges.swap(waiting_edges);
    for (auto& e : edges) e(false);
  });
}

void EpNode::connect(Circuit& c) {
  c.incarnation = next_incarnation++;
  if (c.peer == self) {
    // A node's circuit to itself needs no handshake.
    c.peer_incarnation = c.incarnation;
    c.fsm.fire(CircuitEvent::ConnectSelf, "accepted");
    return;
  }
  c.fsm.fire(CircuitEvent::Connect, "connect");
  c.connect_started = Calendar::now();
  c.connect_timer->start(connect_timeout);
  send_control(c.peer, Control::Connect, c.incarnation, 0);
}

void EpNode::circuit_up(Circuit& c, CircuitEvent event) {
  c.connect_timer->cancel();
  c.last_heard = Calendar::now();
  c.fsm.fire(event, "accepted");
  std::deque<ep_txd*> q;
  q.swap(c.waiting);
  for (ep_txd* t : q)
    if (t->active && !t->forced) issue(t);
  std::vector<std::function<void(bool)>> edges;
  edges.swap(c.waiting_edges);
  for (auto& e : edges) e(true);
}

void EpNode::circuit_failed(Circuit& c, CircuitEvent event, const char* cause) {
  const CircuitState s = c.state();
  if (s != CircuitState::Connected && s != CircuitState::Connecting) return;
  const bool unreachable = event == CircuitEvent::Unreachable;
  c.connect_timer->cancel();
  c.fsm.fire(event, cause);
  c.failed_at = Calendar::now();
  // A node we cannot reach leaves the live map until a probe is answered.
  if (unreachable) BT_CLEAR(live.data(), c.peer);
  // Tell a peer that can still hear us, so that its side of the circuit
  // fails too and its messages on it complete.
  if (!unreachable && c.peer != self) send_control(c.peer, Control::Reset, c.incarnation, c.peer_incarnation);
  // Every message active on the circuit completes with ENETRESET (manual
  // 2.1.3): queued and sent transmits, receives pulling from the node.
  std::deque<ep_txd*> q;
  q.swap(c.waiting);
  for (ep_txd* t : q) force(t, ENETRESET);
  std::vector<std::function<void(bool)>> edges;
  edges.swap(c.waiting_edges);
  for (auto& e : edges) e(false);
  for (ep_xmtr* x : xmtrs) {
    std::vector<ep_txd*> active = x->active;
    for (ep_txd* t : active) {
      if (!t->active || t->forced || t->kind == TxKind::Special) continue;
      // (A multicast by hardware broadcast has no circuits: its Elan DMAs
      // end it, see ep_bcast.cc.)
      if (t->dest == static_cast<int>(c.peer)) force(t, ENETRESET);
    }
  }
  // Multicast tree edges to the peer (the root's and those of the receives
  // forwarding here): that child's subtree is lost, the others go on.
  fail_edges_to(c.peer);
  std::vector<ep_rxd*> rx = rxd_table;
  for (ep_rxd* d : rx)
    if (d->state == RxState::Pulling && d->node == static_cast<int>(c.peer) &&
        !(d->envelope.Attr & EP_ENV_BCAST_DATA))  // a broadcast's data is copied from this node's own area
      fail_rxd(d, ENETRESET);
}

void EpNode::heard_from(std::uint32_t n) {
  if (n >= nnodes) return;
  BT_SET(live.data(), n);
  circuit(n).last_heard = Calendar::now();
}

void EpNode::send_control(std::uint32_t dest, Control op, std::uint32_t inc, std::uint32_t peer_inc) {
  cpu("ep_control");
  ControlMsg m{static_cast<std::uint32_t>(op), self, inc, peer_inc};
  // Special messages: no circuit needed; the timeout bounds a lost one.
  // The call's timeout is in nanoseconds (manual), connect_timeout a Tick.
  ep_transmit_small(control_xmtr, static_cast<int>(dest), EP_SVC_KCOMMS, EP_NO_SLEEP | EP_NO_INTERRUPT,
                    static_cast<int>(connect_timeout / kNs), nullptr, nullptr, reinterpret_cast<caddr_t>(&m), sizeof m);
  circuit(dest).last_sent = Calendar::now();
}

void EpNode::control(const ControlMsg& m) {
  cpu("ep_control");
  if (m.from >= nnodes) return;
  Circuit& c = circuit(m.from);
  heard_from(m.from);
  switch (static_cast<Control>(m.op)) {
    case Control::Connect:
      // The peer (re)starts its side: our side takes a new incarnation too,
      // so nothing of an earlier circuit is taken for this one.
      if (c.state() == CircuitState::Failed) c.fsm.fire(CircuitEvent::ResetDone, "peer connect");
      if (c.state() == CircuitState::Connected && c.peer_incarnation != m.incarnation) {
        circuit_failed(c, CircuitEvent::PeerReset, "peer reconnected");
        c.fsm.fire(CircuitEvent::ResetDone, "peer connect");
      }
      c.peer_incarnation = m.incarnation;
      if (c.state() == CircuitState::Disconnected) {
        c.incarnation = next_incarnation++;
        circuit_up(c, CircuitEvent::PeerConnect);
      } else if (c.state() == CircuitState::Connecting) {
        circuit_up(c, CircuitEvent::PeerConnect);  // both sides connected at once: ours stands
      }
      send_control(m.from, Control::ConnectAck, c.incarnation, m.incarnation);
      break;
    case Control::ConnectAck:
      if (c.state() == CircuitState::Connecting && m.peer_incarnation == c.incarnation) {
        c.peer_incarnation = m.incarnation;
        circuit_up(c, CircuitEvent::ConnectAck);
      } else if (c.state() == CircuitState::Connected && m.peer_incarnation == c.incarnation) {
        c.peer_incarnation = m.incarnation;
      }
      break;
    case Control::Heartbeat:
      break;
    case Control::Reset:
      // Only a reset of the circuit we have now counts: a late one from an
      // earlier circuit names other incarnations.
      if (m.incarnation == c.peer_incarnation && m.peer_incarnation == c.incarnation)
        circuit_failed(c, CircuitEvent::PeerReset, "peer reset");
      break;
    case Control::Abort: {
      // The receiver could not take this message's data (a fault at the
      // source while it pulled): that one transmit fails.
      ep_txd* t = txd_of_cookie(static_cast<std::uint16_t>(m.incarnation & 0xffffu));
      if (t && t->active && t->id() == m.incarnation && t->dest == static_cast<int>(m.from)) force(t, ENETRESET);
      break;
    }
    case Control::Probe:
      send_control(m.from, Control::ProbeAck, 0, 0);
      break;
    case Control::ProbeAck:
      break;
    default:
      error(fmt::format("control message with unknown operation {} from node {}", m.op, m.from));
  }
}

void EpNode::tick() {
  const Tick now = Calendar::now();
  for (auto& cp : circuits) {
    Circuit& c = *cp;
    if (c.peer == self) continue;
    if (c.state() == CircuitState::Connected) {
      if (now - c.last_heard > heartbeat_timeout) {
        circuit_failed(c, CircuitEvent::Unreachable, "heartbeat timeout");
      } else if (now - c.last_sent >= heartbeat_period) {
        send_control(c.peer, Control::Heartbeat, c.incarnation, c.peer_incarnation);
      }
    } else if (!is_live(c.peer)) {
      send_control(c.peer, Control::Probe, 0, 0);
    }
  }
  heartbeat->start(heartbeat_period);
}

namespace {
void control_handler(void* arg, caddr_t msg) {
  ControlMsg m;
  std::memcpy(&m, msg, sizeof m);
  static_cast<EpNode*>(arg)->control(m);
}
}  // namespace

ep_rcvr* EpNode::install_control() {
  auto owned = std::make_unique<ep_rcvr>();
  ep_rcvr* r = owned.get();
  r->node = this;
  r->service = EP_SVC_KCOMMS;
  r->type = EP_SVC_TYPE_SPECIAL;
  r->msgsize = sizeof(ControlMsg);
  r->handler = control_handler;
  r->arg = this;
  r->dma_state.node = this;
  r->waiters = std::make_unique<host::WaitQueue>(host);
  const std::uint32_t slots = 4 * nnodes + 8;  // one Connect and one Ack per peer, with room
  if (!install_queue(r, slots, (sizeof(SmallHeader) + sizeof(ControlMsg) + 7) & ~7u)) {
    error("cannot install the Kernel Comms control queue");
    return nullptr;
  }
  all_rcvrs.push_back(std::move(owned));
  return r;
}

}  // namespace nicsim::ep
