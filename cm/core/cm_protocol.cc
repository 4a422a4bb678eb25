// The CM protocol on the node's CM thread: the "ib.cm" state machine, the
// active side (resolve, REQ, REP -> RTR/RTS, RTU), the passive side (REQ ->
// listener, MRA when the consumer is slow, accept -> INIT/RTR and REP, RTU
// -> RTS), rejections, disconnection (DREQ/DREP, QP to ERROR, timewait), and
// the timeouts and retries the REQ's fields set.
#include <rdma/ib_verbs.h>

#include <cstring>

#include <fmt/format.h>

#include "cm/core/cm_messages.h"
#include "cm/core/cm_node.h"
#include "cm/core/cm_steps.h"
#include "cm/kverbs/kverbs.h"
#include "core/sim.h"

namespace nicsim::cm {

using namespace mad;
using namespace mad::cm;

const FsmType& CmMachine::type() {
  using S = CmState;
  using E = CmEvent;
  // IBA 12.9.6 (communication establishment) and 12.9.7 (release), the
  // states the proposal names; LAP and SIDR are not modelled.
  static const FsmType type =
      make_fsm_type<CmMachine>("ib.cm", {{S::Idle, E::Listen, S::Listen, "listen"},
                                         {S::Listen, E::StopListen, S::Idle, "destroy"},
                                         {S::Idle, E::SendReq, S::ReqSent, "send_req"},
                                         {S::Idle, E::RecvReq, S::ReqRcvd, "to_listener"},
                                         {S::ReqSent, E::Retry, S::ReqSent, "resend_req"},
                                         {S::ReqSent, E::RecvMra, S::MraRcvd, "wait_longer"},
                                         {S::MraRcvd, E::RecvMra, S::MraRcvd, "wait_longer"},
                                         {S::MraRcvd, E::Retry, S::ReqSent, "resend_req"},
                                         {S::ReqSent, E::RecvRep, S::RepRcvd, "rtr_rts"},
                                         {S::MraRcvd, E::RecvRep, S::RepRcvd, "rtr_rts"},
                                         {S::RepRcvd, E::SendRtu, S::Established, "established"},
                                         {S::ReqSent, E::RecvRej, S::Idle, "rejected"},
                                         {S::MraRcvd, E::RecvRej, S::Idle, "rejected"},
                                         {S::ReqSent, E::Timeout, S::Idle, "unreachable"},
                                         {S::MraRcvd, E::Timeout, S::Idle, "unreachable"},
                                         {S::RepRcvd, E::Timeout, S::Idle, "qp_failed"},
                                         {S::ReqRcvd, E::SendMra, S::MraSent, "send_mra"},
                                         {S::ReqRcvd, E::SendRep, S::RepSent, "accept"},
                                         {S::MraSent, E::SendRep, S::RepSent, "accept"},
                                         {S::ReqRcvd, E::SendRej, S::Idle, "reject"},
                                         {S::MraSent, E::SendRej, S::Idle, "reject"},
                                         {S::ReqRcvd, E::RecvRej, S::Idle, "peer_gave_up"},
                                         {S::MraSent, E::RecvRej, S::Idle, "peer_gave_up"},
                                         {S::RepSent, E::RecvRej, S::Idle, "peer_gave_up"},
                                         {S::RepSent, E::Retry, S::RepSent, "resend_rep"},
                                         {S::RepSent, E::RecvRtu, S::Established, "rts"},
                                         {S::RepSent, E::Timeout, S::Idle, "unreachable"},
                                         {S::Established, E::SendDreq, S::DreqSent, "disconnect"},
                                         {S::Established, E::RecvDreq, S::DreqRcvd, "qp_error"},
                                         {S::DreqSent, E::RecvDreq, S::DreqRcvd, "both_disconnect"},
                                         {S::DreqSent, E::Retry, S::DreqSent, "resend_dreq"},
                                         {S::DreqSent, E::RecvDrep, S::Timewait, "timewait"},
                                         {S::DreqSent, E::Timeout, S::Timewait, "timewait"},
                                         {S::DreqRcvd, E::SendDrep, S::Timewait, "timewait"},
                                         {S::Timewait, E::RecvDreq, S::Timewait, "resend_drep"},
                                         {S::Timewait, E::TimewaitEnd, S::Idle, "qpn_free"}});
  return type;
}

Conn::Conn(std::uint64_t h, std::uint32_t id, std::uint32_t node)
    : handle(h),
      fsm("cm" + std::to_string(id), node, CmState::Idle),
      local_id(id),
      inspectable("cm.conn", fsm.object(), &Conn::inspect, this) {}

void Conn::inspect(const void* object, InspectRows& rows) {
  const Conn& c = *static_cast<const Conn*>(object);
  add_row(rows, "node", std::to_string(c.fsm.device()));
  add_row(rows, "role", c.active ? "active" : "passive");
  add_row(rows, "local_id", std::to_string(c.local_id));
  add_row(rows, "remote_id", std::to_string(c.remote_id));
  add_row(rows, "service_id", fmt::format("{:#x}", c.service_id));
  add_row(rows, "local_qpn", std::to_string(c.local_qpn));
  add_row(rows, "remote_qpn", std::to_string(c.remote_qpn));
  add_row(rows, "local_psn", std::to_string(c.local_psn));
  add_row(rows, "remote_psn", std::to_string(c.remote_psn));
  add_row(rows, "sends", std::to_string(c.sends));
  add_row(rows, "mads", std::to_string(c.mads));
}

bool in(const Conn& c, std::initializer_list<CmState> states) {
  for (CmState s : states)
    if (c.fsm.state() == s) return true;
  return false;
}

void deliver(CmNode& n, Conn& c, Upcall u, const std::uint8_t* priv, std::size_t len) {
  if (!c.upcall) return;
  const bool final_event = u == Upcall::Rejected || u == Upcall::Disconnected || u == Upcall::Unreachable;
  if (final_event) c.consumer_valid = false;
  auto fn = c.upcall;
  std::vector<std::uint8_t> data(priv, priv ? priv + len : priv);
  n.upcall([fn, u, data] { fn(u, data.empty() ? nullptr : data.data()); });
}

Tick lifetime(const Conn& c) { return 2 * timeout_of(c.path.lifetime); }

// Moves the QP; the time it took counts as the connection's QP time.
bool modify(Conn& c, ib_qp_attr& a, int mask) {
  const Tick t0 = now();
  const int rc = ib_modify_qp(c.qp, &a, mask);
  c.qp_time += now() - t0;
  return rc == 0;
}

bool to_init(Conn& c) {
  ib_qp_attr a{};
  a.qp_state = IB_QPS_INIT;
  a.pkey_index = 0;
  a.port_num = 1;
  a.qp_access_flags = c.access;
  return modify(c, a, IB_QP_STATE | IB_QP_PKEY_INDEX | IB_QP_PORT | IB_QP_ACCESS_FLAGS);
}

bool to_rtr(Conn& c) {
  ib_qp_attr a{};
  a.qp_state = IB_QPS_RTR;
  a.path_mtu = static_cast<ib_mtu>(c.path.mtu);
  a.dest_qp_num = c.remote_qpn;
  a.rq_psn = c.remote_psn;
  a.max_dest_rd_atomic = c.resp_res;
  a.min_rnr_timer = c.min_rnr;
  a.ah_attr.dlid = c.path.dlid;
  a.ah_attr.sl = c.path.sl;
  a.ah_attr.port_num = 1;
  return modify(c, a,
                IB_QP_STATE | IB_QP_AV | IB_QP_PATH_MTU | IB_QP_DEST_QPN | IB_QP_RQ_PSN | IB_QP_MAX_DEST_RD_ATOMIC |
                    IB_QP_MIN_RNR_TIMER);
}

bool to_rts(Conn& c) {
  ib_qp_attr a{};
  a.qp_state = IB_QPS_RTS;
  a.sq_psn = c.local_psn;
  a.timeout = c.ack_timeout;
  a.retry_cnt = c.retry_cnt;
  a.rnr_retry = c.rnr_retry;
  a.max_rd_atomic = c.init_depth;
  return modify(
      c, a, IB_QP_STATE | IB_QP_SQ_PSN | IB_QP_TIMEOUT | IB_QP_RETRY_CNT | IB_QP_RNR_RETRY | IB_QP_MAX_QP_RD_ATOMIC);
}

void to_error(Conn& c) {
  if (!c.qp || !kverbs::qp_live(c.qp)) return;
  ib_qp_attr a{};
  a.qp_state = IB_QPS_ERR;
  modify(c, a, IB_QP_STATE);
}

void send_last(CmNode& n, Conn& c) {
  ++c.sends;
  ++c.mads;
  n.send_mad(c.path.dlid, c.last.data());
}

// ---- the node's CM API ------------------------------------------------------------

Conn* CmNode::find(std::uint64_t handle) {
  auto it = conns_.find(handle);
  return it != conns_.end() && it->second->consumer_valid ? it->second.get() : nullptr;
}

Conn* CmNode::new_conn() {
  // The node's number in the upper half: an id another node made is never
  // one of this node's (both count from the same start).
  const std::uint64_t h = (std::uint64_t{host_.node_id()} + 1) << 32 | next_handle_;
  next_handle_ += 16;
  const std::uint32_t id = ((host_.node_id() + 1) << 20) | (next_comm_id_++ & 0xfffff);
  auto c = std::make_unique<Conn>(h, id, host_.node_id());
  c->local_psn = (id * 2654435761u) & 0xffffff;
  c->timer = make_timer("ib_cm", [this, h] { Protocol::on_timer(*this, h); });
  Conn* p = c.get();
  conns_[h] = std::move(c);
  by_comm_id_[id] = p;
  ++counters_.live_conns;
  return p;
}

void CmNode::finish(Conn* c) {
  if (c->fsm.state() == CmState::Listen) return;
  c->timer->cancel();
  by_comm_id_.erase(c->local_id);
  --counters_.live_conns;
  conns_.erase(c->handle);
}

std::uint32_t CmNode::drop_connections() {
  std::uint32_t dropped = 0;
  for (auto it = conns_.begin(); it != conns_.end();) {
    Conn& c = *it->second;
    if (c.fsm.state() == CmState::Listen) {
      ++it;
      continue;
    }
    c.timer->cancel();
    by_comm_id_.erase(c.local_id);
    it = conns_.erase(it);
    ++dropped;
  }
  counters_.live_conns = 0;
  timewait_qpns_.clear();
  counters_.timewait = 0;
  return dropped;
}

int CmNode::listen(std::uint64_t service_id, std::function<void(Upcall, const std::uint8_t*)> on_request, Conn** out) {
  if (listeners_.count(service_id)) return -EBUSY;
  Conn* c = new_conn();
  --counters_.live_conns;
  ++counters_.listeners;
  c->service_id = service_id;
  c->upcall = std::move(on_request);
  c->fsm.fire(CmEvent::Listen, "listen");
  listeners_[service_id] = c;
  *out = c;
  return 0;
}

int CmNode::stop_listen(Conn* c) {
  if (!c || c->fsm.state() != CmState::Listen) return -EINVAL;
  c->fsm.fire(CmEvent::StopListen, "sid_destroy");
  listeners_.erase(c->service_id);
  by_comm_id_.erase(c->local_id);
  --counters_.listeners;
  for (auto& [h, other] : conns_)
    if (other->listener == c) other->listener = nullptr;
  conns_.erase(c->handle);
  return 0;
}

int CmNode::connect(Conn* c, std::uint32_t dst_ip, std::uint32_t timeout_ms, const std::uint8_t* priv,
                    std::uint8_t len) {
  c->active = true;
  c->dst_ip = dst_ip;
  c->req_private.assign(priv, priv + len);
  const Tick resp = timeout_ms ? timeout_ms * kMs : response_timeout(host_);
  c->remote_resp_to = c->local_resp_to = exponent_for(resp);
  c->max_retries = static_cast<std::uint8_t>(host_.params().count("cm.max_retries"));
  c->local_qpn = c->qp->qp_num;
  const std::uint64_t h = c->handle;
  post([this, h] {
    if (auto it = conns_.find(h); it != conns_.end()) Protocol::start_connect(*this, *it->second);
  });
  return 0;
}

int CmNode::accept(Conn* c, ib_qp* qp, const std::uint8_t* priv, std::uint8_t len) {
  if (c->active || c->accept_pending || !in(*c, {CmState::ReqRcvd, CmState::MraSent})) return -EINVAL;
  c->qp = qp;
  c->local_qpn = qp->qp_num;
  c->rep_private.assign(priv, priv + len);
  c->accept_pending = true;
  const std::uint64_t h = c->handle;
  post([this, h] {
    if (auto it = conns_.find(h); it != conns_.end()) Protocol::do_accept(*this, *it->second);
  });
  return 0;
}

int CmNode::reject(Conn* c, const std::uint8_t* priv, std::uint8_t len) {
  if (c->active || c->accept_pending || !in(*c, {CmState::ReqRcvd, CmState::MraSent})) return -EINVAL;
  c->consumer_valid = false;  // the proposal: reject destroys the id
  c->rep_private.assign(priv, priv + len);
  const std::uint64_t h = c->handle;
  post([this, h] {
    if (auto it = conns_.find(h); it != conns_.end())
      Protocol::do_reject(*this, *it->second, rej::kConsumerReject, true);
  });
  return 0;
}

int CmNode::disconnect(Conn* c) {
  if (c->fsm.state() != CmState::Established || c->disconnecting) return -ENOTCONN;
  c->disconnecting = true;
  const std::uint64_t h = c->handle;
  post([this, h] {
    if (auto it = conns_.find(h); it != conns_.end()) Protocol::do_disconnect(*this, *it->second);
  });
  return 0;
}

void CmNode::release(Conn* c) { c->consumer_valid = false; }

// ---- the protocol ---------------------------------------------------------------

void fail_active(CmNode& n, Conn& c, CmEvent e, Upcall u, const std::uint8_t* priv, std::size_t len) {
  if (c.fsm.handles(e)) c.fsm.fire(e, "failed");
  to_error(c);
  deliver(n, c, u, priv, len);
  n.finish(&c);
}

void send_req(CmNode& n, Conn& c) {
  c.t_req = now();
  if (!to_init(c)) return fail_active(n, c, CmEvent::Timeout, Upcall::Unreachable, nullptr, 0);
  if (!c.tid) c.tid = n.next_tid();
  build_req(c.last.data(), c.tid, c, n.ca_guid());
  c.sends = 0;
  c.fsm.fire(CmEvent::SendReq, "connect");
  send_last(n, c);
  c.timer->start(timeout_of(c.remote_resp_to) + lifetime(c));
}

void Protocol::start_connect(CmNode& n, Conn& c) {
  c.t_resolve = now();
  n.resolve(c.dst_ip, [&n, h = c.handle](bool ok, const Path& path) {
    Conn* p = n.conn(h);
    if (!p) return;
    Conn& c = *p;
    n.figures().resolve = now() - c.t_resolve;
    if (!ok) return fail_active(n, c, CmEvent::Timeout, Upcall::Unreachable, nullptr, 0);
    c.path = path;
    if (const Tick tw = n.timewait_end(c.local_qpn); tw > now())
      return c.timer->start(tw - now());  // the REQ leaves when the QPN's timewait ends
    send_req(n, c);
  });
}

}  // namespace nicsim::cm
