// Connections of the Elan transport (FSM ti.elan.conn): the seed's
// connect/listen/accept/reject/disconnect as small messages on the node's
// control service. The active side's REQ carries its private data, its
// connection id and its data service; the passive side's REP the same
// back; the active side's accept answers RTU (or REJ); DREQ ends a live
// connection and the peer's side hears its error callback (TI_CANCELED).
#include <cstring>
#include <utility>

#include "ti/common/ti_log.h"
#include "ti/elan/ti_elan.h"

namespace nicsim::ti_elan {
namespace {

constexpr std::uint32_t kReqPrivate = 92, kRepPrivate = 196, kRejPrivate = 148;

bool in_interrupt() { return host::Host::current_host()->in_interrupt(); }

bool step(Conn* c, ElanConnEvent e, std::string_view cause) {
  if (!c->fsm.handles(e) || !c->fsm.fire(e, cause)) return false;
  ti_core::log_at(c->inst->debug, TI_DBG_VERBOSE, "connection %u: %s (%.*s)", c->id,
                  fsm_names(ElanConnState{})[static_cast<int>(c->fsm.state())], static_cast<int>(cause.size()),
                  cause.data());
  return true;
}

// A data service of our own and its large receiver (messages to us land in
// the receive buffers the consumer posts on it). Enough envelope slots that
// the sender's messages wait in the slots for their buffers, never refused
// (a refused message would give up its place in the stream).
bool open_service(ElanTiNode& n, Conn* c) {
  c->service = n.alloc_service();
  if (c->service < 0) return false;
  const std::uint32_t depth = c->attr.max_recv_depth > 64 ? c->attr.max_recv_depth : 64;
  c->rcvr = ep_install_large_rcvr(0, c->service, static_cast<int>(2 * depth));
  return c->rcvr != nullptr;
}

void fill_private(CtlMsg& m, const void* data, std::uint32_t len) {
  m.len = len;
  if (len) std::memcpy(m.data, data, len);
}

void send_to_peer(Conn* c, Ctl kind, const void* priv, std::uint32_t len) {
  ElanTiNode* n = node();
  CtlMsg m{};
  m.kind = static_cast<std::uint32_t>(kind);
  m.from_conn = c->id;
  m.to_conn = c->peer_id;
  m.service = static_cast<std::uint32_t>(c->service < 0 ? 0 : c->service);
  m.src_ip = c->local_ip;
  m.dst_ip = c->remote_ip;
  m.port = c->remote_port;
  fill_private(m, priv, len);
  send_ctl(*n, c->peer_node, m);
}

Conn* new_conn(ElanTiNode& n, Instance* i) {
  auto* c = new Conn(n.next_conn++, n.host);
  n.adopt(c, Kind::Conn, i);
  n.conns[c->id] = c;
  c->rtu = std::make_unique<host::WaitQueue>(n.host);
  return c;
}

// The connection request callback, on the transport's thread (the seed's
// system thread context).
void callback(Conn* c, std::uint16_t type, ti_status_t st, bool passive) {
  ElanTiNode* n = node();
  c->req = ti_conn_request_t{};
  c->req.conn_handle = handle_of<ti_conn_handle_t>(c);
  c->req.status = st;
  c->req.caller = passive ? 1 : 0;
  c->req.cb_type = type;
  c->req.context = c->info.context;
  c->req.private_data_len = static_cast<std::uint32_t>(c->private_in.size());
  c->req.private_data = c->private_in.empty() ? nullptr : c->private_in.data();
  if (c->user_req) *c->user_req = c->req;
  const ti_conn_req_cb_t cb = c->info.conn_request_cb;
  const std::uint32_t id = c->id;
  n->defer([n, cb, id, type] {
    Conn* k = conn_by_id(*n, id);
    if (!cb || !k) return;
    cb(&k->req);
    if (type == CN_REJECT) conn_drop(k);
  });
}

Conn* listener_on(ElanTiNode& n, std::uint32_t port) {
  for (auto& [id, c] : n.conns)
    if (c->listener && c->fsm.state() == ElanConnState::Listening && c->local_port == port) return c;
  return nullptr;
}

void on_request(ElanTiNode& n, const CtlMsg& m) {
  Conn* l = listener_on(n, m.port);
  if (!l) {  // nobody listens: the request is refused
    CtlMsg r{};
    r.kind = static_cast<std::uint32_t>(Ctl::Rej);
    r.to_conn = m.from_conn;
    send_ctl(n, static_cast<int>(m.from_node), r);
    return;
  }
  Conn* c = new_conn(n, l->inst);
  c->attr = l->attr;
  c->info = l->info;
  c->local_ip = m.dst_ip;
  c->local_port = static_cast<ti_port_t>(m.port);
  c->remote_ip = m.src_ip;
  c->peer_node = static_cast<int>(m.from_node);
  c->peer_id = m.from_conn;
  c->peer_service = static_cast<int>(m.service);
  c->private_in.assign(m.data, m.data + (m.len < kReqPrivate ? m.len : kReqPrivate));
  step(c, ElanConnEvent::RequestArrived, "req");
  callback(c, CN_REQUEST, TI_SUCCESS, true);
}

void on_reply(ElanTiNode& n, Conn* c, const CtlMsg& m) {
  if (!c || !step(c, ElanConnEvent::ReplyArrived, "rep")) {
    CtlMsg r{};  // a reply to a connect given up: the peer hears no
    r.kind = static_cast<std::uint32_t>(Ctl::Rej);
    r.to_conn = m.from_conn;
    send_ctl(n, static_cast<int>(m.from_node), r);
    return;
  }
  c->peer_id = m.from_conn;
  c->peer_service = static_cast<int>(m.service);
  c->private_in.assign(m.data, m.data + (m.len < kRepPrivate ? m.len : kRepPrivate));
  callback(c, CN_REPLY, TI_SUCCESS, false);
}

void on_reject(Conn* c, const CtlMsg& m) {
  if (!c) return;
  const bool connecting = c->fsm.state() == ElanConnState::Connecting;
  if (!step(c, ElanConnEvent::Rejected, "rej")) return;
  c->rtu->notify_all();
  if (!connecting) return;  // an accept waiting for its RTU returns TI_REJECTED
  c->private_in.assign(m.data, m.data + (m.len < kRejPrivate ? m.len : kRejPrivate));
  callback(c, CN_REJECT, TI_REJECTED, false);
}

void on_disconnect_request(Conn* c) {
  if (!c || !step(c, ElanConnEvent::PeerDisconnected, "dreq")) return;
  c->rtu->notify_all();
  fail_posted(c, TI_CANCELED);
  report_error(c, TI_CANCELED);
}

}  // namespace

Conn* conn_by_id(ElanTiNode& n, std::uint32_t id) {
  auto it = n.conns.find(id);
  return it == n.conns.end() ? nullptr : it->second;
}

void send_ctl(ElanTiNode& n, int dest, CtlMsg& m) {
  m.from_node = static_cast<std::uint32_t>(n.nodeid);
  const int flags = in_interrupt() ? EP_NO_SLEEP : 0;
  ep_transmit_small(n.ctl_xmtr, dest, kCtlService, flags, 0, nullptr, nullptr, reinterpret_cast<caddr_t>(&m), sizeof m);
}

void on_ctl(void* arg, caddr_t msg) {
  auto& n = *static_cast<ElanTiNode*>(arg);
  CtlMsg m;
  std::memcpy(&m, msg, sizeof m);  // the slot is reused when this returns
  n.host.work("ti_op");
  Conn* c = conn_by_id(n, m.to_conn);
  switch (static_cast<Ctl>(m.kind)) {
    case Ctl::Req:
      return on_request(n, m);
    case Ctl::Rep:
      return on_reply(n, c, m);
    case Ctl::Rtu:
      if (c && step(c, ElanConnEvent::RtuArrived, "rtu")) c->rtu->notify_all();
      return;
    case Ctl::Rej:
      return on_reject(c, m);
    case Ctl::Dreq:
      return on_disconnect_request(c);
    case Ctl::WriteAsk:
      return rdma_write_ask(n, m);
  }
}

void report_error(Conn* c, ti_status_t st) {
  if (c->error_reported || !c->comp.pfn_err_cb) return;
  c->error_reported = true;
  if (st == TI_ERROR) ti_core::log_at(c->inst->debug, TI_DBG_OFF, "connection %u failed: a transfer failed", c->id);
  const ti_err_cb_t cb = c->comp.pfn_err_cb;
  void* ctx = c->comp.p_err_context;
  node()->defer([cb, ctx, st] {
    ti_err_rec_t rec{st, ctx};
    cb(&rec);
  });
}

void conn_drop(Conn* c) {
  ElanTiNode* n = node();
  if (EP_RCVR* r = std::exchange(c->rcvr, nullptr)) ep_remove_large_rcvr(r);
  n->free_service(c->service);
  n->conns.erase(c->id);
  if (c->disconnect_cb) {
    const ti_context_cb_t cb = c->disconnect_cb;
    void* ctx = c->disconnect_context;
    n->defer([cb, ctx] { cb(ctx); });
  }
  n->drop(c);
}

namespace {

bool endpoint_ok(ti_endpoint_handle_t h, const Instance* i, Endpoint** out) {
  *out = as<Endpoint>(h, Kind::Endpoint);
  return *out && (*out)->inst == i;
}

bool cq_ok(ti_cq_handle_t h, const Instance* i) {
  const Cq* q = as<Cq>(h, Kind::Cq);
  return q && q->inst == i;
}

ti_status_t check_setup(Instance* i, ti_conn_attr_t* attr, ti_conn_info_t* info, ti_conn_handle_t* ph,
                        std::uint32_t max_private) {
  if (!i) return TI_INVALID_HANDLE;
  if (!attr || !info || !ph || !info->conn_request_cb || info->private_data_len > max_private ||
      (info->private_data_len && !info->private_data))
    return TI_INVALID_PARAMETER;
  if (in_interrupt()) return TI_INVALID_OPERATION;
  return TI_SUCCESS;
}

}  // namespace

ti_status_t conn_connect(ti_handle_t h, ti_conn_attr_t* attr, ti_conn_info_t* info, ti_conn_request_t* req,
                         ti_conn_handle_t* ph) {
  Instance* i = as<Instance>(h, Kind::Instance);
  if (ti_status_t s = check_setup(i, attr, info, ph, kReqPrivate); s != TI_SUCCESS) return s;
  Endpoint *src = nullptr, *dst = nullptr;
  const Pd* pd = as<Pd>(info->pdh, Kind::Pd);
  if (!endpoint_ok(info->src_ep, i, &src) || !endpoint_ok(info->dst_ep, i, &dst) || !pd || pd->inst != i ||
      !cq_ok(info->send_cqh, i) || !cq_ok(info->recv_cqh, i))
    return TI_INVALID_PARAMETER;
  const int peer = node_of_ip(dst->ip);
  if (peer < 0) return TI_INVALID_ADDRESS;  // not an Elan node's address
  ElanTiNode* n = node();
  n->host.work("ti_op");
  Conn* c = new_conn(*n, i);
  c->attr = *attr;
  c->info = *info;
  c->user_req = req;
  c->local_ip = src->ip;
  c->local_port = src->port;
  c->remote_ip = dst->ip;
  c->remote_port = dst->port;
  c->peer_node = peer;
  if (!open_service(*n, c)) {
    conn_drop(c);
    return TI_INSUFFICIENT_RESOURCES;
  }
  step(c, ElanConnEvent::Connect, "connect");
  send_to_peer(c, Ctl::Req, info->private_data, info->private_data_len);
  *ph = handle_of<ti_conn_handle_t>(c);
  return TI_SUCCESS;
}

ti_status_t conn_listen(ti_handle_t h, ti_conn_attr_t* attr, ti_conn_info_t* info, ti_conn_request_t* req,
                        ti_conn_handle_t* ph) {
  Instance* i = as<Instance>(h, Kind::Instance);
  if (ti_status_t s = check_setup(i, attr, info, ph, kReqPrivate); s != TI_SUCCESS) return s;
  Endpoint* src = nullptr;
  if (!endpoint_ok(info->src_ep, i, &src)) return TI_INVALID_PARAMETER;
  ElanTiNode* n = node();
  if (listener_on(*n, src->port)) return TI_INVALID_OPERATION;  // the seed lists no TI_RESOURCE_BUSY for listen
  n->host.work("ti_op");
  Conn* c = new_conn(*n, i);
  c->listener = true;
  c->attr = *attr;
  c->info = *info;
  c->user_req = req;
  c->local_ip = src->ip;
  c->local_port = src->port;
  step(c, ElanConnEvent::Listen, "listen");
  *ph = handle_of<ti_conn_handle_t>(c);
  return TI_SUCCESS;
}

namespace {

// The passive side's accept: its service, its receives, the REP; returns
// when the RTU came (or the peer refused or went).
ti_status_t accept_request(Conn* c, ti_conn_request_t* r, ti_data_element_t* recvs) {
  ElanTiNode* n = node();
  if (in_interrupt()) return TI_INVALID_OPERATION;
  if (r->private_data_len > kRepPrivate || (r->private_data_len && !r->private_data)) return TI_INVALID_PARAMETER;
  if (!open_service(*n, c)) return TI_INSUFFICIENT_RESOURCES;
  if (ti_status_t s = post_receives(c, recvs); s != TI_SUCCESS) return s;
  step(c, ElanConnEvent::Accept, "accept");
  send_to_peer(c, Ctl::Rep, r->private_data, r->private_data_len);
  const std::uint32_t id = c->id;
  while (conn_by_id(*n, id) && c->fsm.state() == ElanConnState::Accepting) c->rtu->wait();
  if (!conn_by_id(*n, id)) return TI_CANCELED;
  return c->fsm.state() == ElanConnState::Established ? TI_SUCCESS : TI_REJECTED;
}

}  // namespace

ti_status_t conn_accept(ti_conn_request_t* r, uint32_t max_rdma_size, ti_comp_info_t* comp, ti_data_element_t* recvs) {
  if (!r || !comp) return TI_INVALID_PARAMETER;
  Conn* c = as<Conn>(r->conn_handle, Kind::Conn);
  if (!c || c->listener) return TI_INVALID_PARAMETER;  // the request is the parameter: the seed lists no handle status
  if (!cq_ok(comp->h_send_cq, c->inst) || !cq_ok(comp->h_recv_cq, c->inst)) return TI_INVALID_PARAMETER;
  node()->host.work("ti_op");
  const ElanConnState st = c->fsm.state();
  if (st != ElanConnState::Requested && st != ElanConnState::ReplyReceived) return TI_INVALID_OPERATION;
  c->comp = *comp;
  if (max_rdma_size) c->attr.max_rdma_size = max_rdma_size;
  if (st == ElanConnState::Requested) return accept_request(c, r, recvs);
  if (ti_status_t s = post_receives(c, recvs); s != TI_SUCCESS) return s;
  step(c, ElanConnEvent::Accept, "accept");
  send_to_peer(c, Ctl::Rtu, nullptr, 0);
  return TI_SUCCESS;
}

ti_status_t conn_reject(ti_conn_request_t* r) {
  if (!r) return TI_INVALID_PARAMETER;
  Conn* c = as<Conn>(r->conn_handle, Kind::Conn);
  if (!c || c->listener) return TI_INVALID_PARAMETER;
  if (r->private_data_len > kRejPrivate || (r->private_data_len && !r->private_data)) return TI_INVALID_PARAMETER;
  if (!step(c, ElanConnEvent::Reject, "reject")) return TI_INVALID_OPERATION;
  node()->host.work("ti_op");
  send_to_peer(c, Ctl::Rej, r->private_data, r->private_data_len);
  conn_drop(c);
  return TI_SUCCESS;
}

ti_status_t conn_disconnect(ti_conn_handle_t h, ti_context_cb_t cb, void* ctx) {
  Conn* c = as<Conn>(h, Kind::Conn);
  if (!c || c->releasing) return TI_INVALID_HANDLE;
  node()->host.work("ti_op");
  const ElanConnState st = c->fsm.state();
  if (st == ElanConnState::Established || st == ElanConnState::Accepting || st == ElanConnState::ReplyReceived)
    send_to_peer(c, st == ElanConnState::ReplyReceived ? Ctl::Rej : Ctl::Dreq, nullptr, 0);
  else if (st == ElanConnState::Requested)
    send_to_peer(c, Ctl::Rej, nullptr, 0);
  step(c, ElanConnEvent::Disconnect, "disconnect");
  c->rtu->notify_all();
  c->disconnect_cb = cb;
  c->disconnect_context = ctx;
  fail_posted(c, TI_CANCELED);
  c->releasing = true;
  if (!c->in_flight) conn_drop(c);
  return TI_SUCCESS;
}

void conn_release(Conn* c) {
  const std::uint32_t id = c->id;
  if (!c->releasing) conn_disconnect(handle_of<ti_conn_handle_t>(c), nullptr, nullptr);
  if (Conn* k = conn_by_id(*node(), id)) conn_drop(k);  // destroy_ti does not wait for the wire
}

}  // namespace nicsim::ti_elan
