// Connections of the IB transport: connect, listen, accept, reject and
// disconnect over the CMA, whose REQ, REP, REJ, RTU, DREQ and DREP cross
// the fabric as CM MADs. A connection's states are the typed machine
// "ti.conn" (ti_ib.h). The CMA's handlers run in interrupt context; the
// connection request callbacks and the context callbacks run on the
// transport's thread (the interface's "system thread context").
#include <cstring>

#include "cm/cma/cma_mra.h"
#include "cm/kverbs/kverbs.h"
#include "ti/ib/ti_ib.h"

namespace nicsim::ti {
namespace {

using S = TiConnState;
using E = TiConnEvent;

constexpr std::uint64_t kSdpServiceIdBase = 0x0000000000010000ull;  // SDP's port space
constexpr std::uint32_t kForever = 0xffffffffu;
constexpr Tick kDrainBudget = 2 * kMs;
constexpr Tick kReleaseBudget = 50 * kMs;  // a DREQ's retries to a peer that is gone

__be64 service_id_of(ti_port_t port) {
  const std::uint64_t v = kSdpServiceIdBase | port;
  __be64 r;
  unsigned char b[8];
  for (int i = 0; i < 8; ++i) b[i] = static_cast<unsigned char>(v >> (56 - 8 * i));
  std::memcpy(&r, b, 8);
  return r;
}

void put_ip(sockaddr_in& s, std::uint32_t ip) {
  std::memset(&s, 0, sizeof s);
  s.sin_family = AF_INET;
  unsigned char b[4] = {static_cast<unsigned char>(ip >> 24), static_cast<unsigned char>(ip >> 16),
                        static_cast<unsigned char>(ip >> 8), static_cast<unsigned char>(ip)};
  std::memcpy(&s.sin_addr.s_addr, b, 4);
}

void* ctx_of(const Conn* c) { return reinterpret_cast<void*>(static_cast<std::uintptr_t>(c->id)); }
Conn* conn_of_ctx(void* ctx) {
  TiNode* n = node();
  return n ? conn_by_id(*n, reinterpret_cast<std::uintptr_t>(ctx)) : nullptr;
}

// A connection step; shown at TI_DBG_VERBOSE (the interface's debug
// messages for connections).
bool fire(Conn* c, E e, const char* cause) {
  const S from = c->fsm.state();
  if (!c->fsm.handles(e) || !c->fsm.fire(e, cause)) return false;
  log_at(level_of(c->inst), TI_DBG_VERBOSE, "connection %llu: %s -> %s on %s (%s)",
         static_cast<unsigned long long>(c->id), fsm_name(from), fsm_name(c->fsm.state()), fsm_name(e), cause);
  return true;
}

Conn* new_conn(Instance* inst) {
  TiNode* n = node();
  auto* c = new Conn(inst, n->next_conn++, n->host);
  inst->conns.insert(c);
  n->conns.insert(c);
  n->by_id[c->id] = c;
  n->issue(c, HandleKind::Conn);
  return c;
}

void unbind(Conn* c) {
  for (Cq* q : {c->send_cq, c->recv_cq})
    if (q && node()->cqs.count(q)) q->conns.erase(c);
}

void destroy_qp(Conn* c) {
  if (!c->qp) return;
  ib_destroy_qp(c->qp);
  c->qp = nullptr;
  if (c->pd && node()->pds.count(c->pd)) --c->pd->users;
}

void free_conn(Conn* c) {
  TiNode* n = node();
  unbind(c);
  destroy_qp(c);
  std::unique_ptr<FlowControl> fc = std::move(c->fc);
  c->deadline.reset();
  c->inst->conns.erase(c);
  n->conns.erase(c);
  n->by_id.erase(c->id);
  n->revoke(c);
  delete c;
  // Its memory goes once the HCA can no longer write it, and after the
  // handle (deregistering waits for the HCA: others run meanwhile).
  fc_release(std::move(fc));
}

std::uint32_t clamp_depth(std::uint32_t v, std::uint32_t lo, std::uint32_t hi) { return v < lo ? lo : v > hi ? hi : v; }

ib_qp* make_qp(Pd* pd, Cq* send_cq, Cq* recv_cq, const ti_conn_attr_t& a) {
  ib_qp_init_attr ia{};
  ia.send_cq = send_cq->cq;
  ia.recv_cq = recv_cq->cq;
  // Room for RDMA splits and the message of rdma_*_send beyond the depth.
  // Flow control adds the provider's hello and credit write, and its
  // receive for the peer's hello.
  const std::uint32_t fc = a.msg_flow_control ? 2 : 0;
  ia.cap.max_send_wr = clamp_depth(a.max_transfer_depth * 2 + 4 + fc, 4, 4096);
  ia.cap.max_recv_wr = clamp_depth(a.max_recv_depth + 1 + fc / 2, 2, 4096);
  ia.cap.max_send_sge = clamp_depth(a.max_transfer_buffers, 1, 16);
  ia.cap.max_recv_sge = clamp_depth(a.max_recv_buffers, 1, 16);
  ia.sq_sig_type = IB_SIGNAL_ALL_WR;
  ia.qp_type = IB_QPT_RC;
  return ib_create_qp(pd->pd, &ia);
}

// The RC attributes a connection asks for: RDMA and atomics allowed, and
// RNR retries without end (7) either way. With msg_flow_control the
// provider's credits keep sends from a peer with no receive posted, so no
// RNR NAK happens; without it the consumer paces itself, and a send that
// overruns the peer meets the hardware's RNR NAK and is retried (every
// min_rnr_timer, 10 us) until a receive is posted: nothing is lost, and
// the NAKs show in the HCA's rnr_naks_sent.
ib_qp_attr qp_attr_of(const ti_conn_attr_t& a) {
  ib_qp_attr qa{};
  qa.qp_access_flags = IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_READ | IB_ACCESS_REMOTE_ATOMIC;
  qa.max_rd_atomic = qa.max_dest_rd_atomic = 4;
  qa.timeout = 14;
  qa.retry_cnt = static_cast<u8>(a.max_send_retries && a.max_send_retries < 7 ? a.max_send_retries : 7);
  qa.rnr_retry = 7;
  qa.min_rnr_timer = 1;
  return qa;
}

Tick deadline_of(const ti_conn_attr_t& a) {
  if (a.connect_request_timeout == 0 || a.connect_request_timeout == kForever) return 0;
  const std::uint64_t periods = a.connect_request_retries ? a.connect_request_retries : 1;
  return static_cast<Tick>(a.connect_request_timeout) * periods * kMs;
}

void start_deadline(Conn* c, const ti_conn_attr_t& a) {
  const Tick t = deadline_of(a);
  if (!t) return;
  const std::uint64_t id = c->id;
  c->deadline = std::make_unique<host::Timer>(node()->host, "ti_conn_deadline", [id] {
    TiNode* n = node();
    Conn* k = n ? conn_by_id(*n, id) : nullptr;
    if (!k) return;
    k->timed_out = true;
    n->defer([id] {
      TiNode* m = node();
      Conn* q = conn_by_id(*m, id);
      if (!q) return;
      if (q->fsm.state() == S::Requested && fire(q, E::Timeout, "no accept or reject in time"))
        ib_cma_reject(&q->cma_id, nullptr, 0);
      else if (q->fsm.state() == S::ReplyReceived && fire(q, E::Timeout, "no accept in time"))
        ib_cma_disconnect(q->qp, &q->cma_id);
    });
  });
  c->deadline->start(t);
}

ti_status_t check_info(Instance* i, const ti_conn_info_t* info, bool need_dst, bool need_cqs) {
  if (!info || !info->conn_request_cb || !info->src_ep) return TI_INVALID_PARAMETER;
  Endpoint* src = endpoint_of(info->src_ep);
  if (!src || src->inst != i) return TI_INVALID_PARAMETER;
  if (need_dst) {
    Endpoint* dst = endpoint_of(info->dst_ep);
    if (!dst || dst->inst != i) return TI_INVALID_PARAMETER;
  }
  Pd* pd = pd_of(info->pdh);
  if (!pd || pd->inst != i) return TI_INVALID_PARAMETER;
  if (need_cqs) {
    Cq *s = cq_of(info->send_cqh), *r = cq_of(info->recv_cqh);
    if (!s || !r || s->inst != i || r->inst != i) return TI_INVALID_PARAMETER;
  }
  if (info->private_data_len && !info->private_data) return TI_INVALID_PARAMETER;
  return TI_SUCCESS;
}

void fill_request(ti_conn_request_t& r, Conn* c, std::uint16_t cb_type, ti_status_t status,
                  const std::vector<std::uint8_t>& priv) {
  r.conn_handle = handle_of<ti_conn_handle_t>(c);
  r.status = status;
  r.caller = c->active ? 0 : 1;
  r.cb_type = cb_type;
  r.context = c->info.context;
  r.private_data_len = static_cast<std::uint32_t>(priv.size());
  r.private_data = priv.empty() ? nullptr : const_cast<std::uint8_t*>(priv.data());
  r.private_data_offset = c->info.private_data_offset;
  r.private_data_offset_len = c->info.private_data_offset_len;
}

// ---- disconnection --------------------------------------------------------------

// The CM says the connection is gone (our DREQ answered, the peer's DREQ,
// or the DREQ's retries spent): the QP is in ERROR, its work flushes.
void disconnected(std::uint64_t id) {
  TiNode* n = node();
  Conn* c = conn_by_id(*n, id);
  if (!c) return;
  const bool ours = c->fsm.state() == S::Disconnecting;
  if (!fire(c, E::PeerDisconnected, ours ? "disconnected" : "peer disconnected")) return;
  fail_queued(c, TI_CANCELED);
  drain(c, kDrainBudget);
  unbind(c);
  destroy_qp(c);
  if (ours) {
    const ti_context_cb_t cb = c->disconnect_cb;
    void* ctx = c->disconnect_context;
    free_conn(c);
    if (cb) cb(ctx);
    return;
  }
  if (c->comp.pfn_err_cb && !c->failed) {
    ti_err_rec_t rec{TI_CANCELED, c->comp.p_err_context};
    c->comp.pfn_err_cb(&rec);
  }
}

// ---- the active side -------------------------------------------------------------

void active_final(std::uint64_t id, std::uint16_t cb_type, ti_status_t status) {
  TiNode* n = node();
  Conn* c = conn_by_id(*n, id);
  if (!c) return;
  const bool canceled = c->fsm.state() == S::Canceling;
  fire(c, cb_type == CN_REJECT && status == TI_REJECTED ? E::Rejected : E::Unreachable, "connect failed");
  ti_conn_request_t r{};
  fill_request(r, c, cb_type, canceled ? TI_CANCELED : status, c->private_in);
  ti_conn_request_t* out = c->user_req ? c->user_req : &r;
  *out = r;
  const ti_conn_req_cb_t cb = c->info.conn_request_cb;
  const ti_context_cb_t done = c->disconnect_cb;
  void* done_ctx = c->disconnect_context;
  destroy_qp(c);
  cb(out);
  if (canceled && done) done(done_ctx);
  if ((c = conn_by_id(*n, id))) free_conn(c);  // the handle is invalid now
}

void active_reply(std::uint64_t id) {
  TiNode* n = node();
  Conn* c = conn_by_id(*n, id);
  if (!c) return;
  if (c->fsm.state() == S::Canceling) {
    fire(c, E::ReplyArrived, "canceled: disconnect");
    ib_cma_disconnect(c->qp, &c->cma_id);
    return;
  }
  fire(c, E::ReplyArrived, "REP");
  start_deadline(c, c->attr);
  ti_conn_request_t r{};
  fill_request(r, c, CN_REPLY, TI_SUCCESS, c->private_in);
  ti_conn_request_t* out = c->user_req ? c->user_req : &r;
  *out = r;
  c->info.conn_request_cb(out);
}

// The passive side's CM acknowledged the REQ with an MRA (its consumer
// has not answered yet; the REP comes later): the connect's callback hears
// CN_MRA with TI_PENDING, as information. Nothing is to be accepted or
// rejected for it; CN_REPLY or CN_REJECT follows.
void active_mra(std::uint64_t id) {
  TiNode* n = node();
  Conn* c = conn_by_id(*n, id);
  if (!c) return;
  const bool tell = c->fsm.state() == S::Connecting;
  if (!fire(c, E::MraArrived, tell ? "MRA" : "MRA after cancel") || !tell) return;
  ti_conn_request_t r{};
  fill_request(r, c, CN_MRA, TI_PENDING, {});
  ti_conn_request_t* out = c->user_req ? c->user_req : &r;
  *out = r;
  c->info.conn_request_cb(out);
}

void on_active_event(ib_cma_event event, void* context, void* private_data) {
  Conn* c = conn_of_ctx(context);
  if (!c) return;
  c->cm_done = event != IB_CMA_EVENT_ESTABLISHED;
  const std::uint64_t id = c->id;
  TiNode* n = node();
  if (event == IB_CMA_EVENT_ESTABLISHED && private_data) {
    c->private_in.assign(static_cast<std::uint8_t*>(private_data),
                         static_cast<std::uint8_t*>(private_data) + IB_CMA_REP_PRIVATE_DATA_SIZE);
    n->defer([id] { active_reply(id); });
  } else if (event == IB_CMA_EVENT_ESTABLISHED) {
    n->defer([id] { active_reply(id); });
  } else if (event == IB_CMA_EVENT_REJECTED) {
    c->private_in.clear();
    if (private_data)
      c->private_in.assign(static_cast<std::uint8_t*>(private_data),
                           static_cast<std::uint8_t*>(private_data) + IB_CMA_REJ_PRIVATE_DATA_SIZE);
    n->defer([id] { active_final(id, CN_REJECT, TI_REJECTED); });
  } else if (event == IB_CMA_EVENT_UNREACHABLE) {
    c->private_in.clear();
    n->defer([id] { active_final(id, CN_REJECT, TI_TIMEOUT); });
  } else {
    n->defer([id] { disconnected(id); });
  }
}

// ---- the passive side ------------------------------------------------------------

void passive_request(std::uint64_t id) {
  TiNode* n = node();
  Conn* c = conn_by_id(*n, id);
  if (!c || !c->parent || !n->conns.count(c->parent)) return;
  fire(c, E::RequestArrived, "REQ");
  ti_conn_request_t r{};
  fill_request(r, c, CN_REQUEST, TI_SUCCESS, c->private_in);
  c->parent->info.conn_request_cb(&r);  // valid during the call only
}

void on_request(union ib_cma_id* cma_id, void* private_data, void* context) {
  Conn* l = conn_of_ctx(context);
  if (!l || !l->listener) {
    ib_cma_reject(cma_id, nullptr, 0);
    return;
  }
  Conn* c = new_conn(l->inst);
  c->parent = l;
  c->cma_id = *cma_id;
  c->attr = l->attr;
  c->info = l->info;
  c->info.private_data = nullptr;
  c->local = l->local;
  c->pd = l->pd;
  if (private_data)
    c->private_in.assign(static_cast<std::uint8_t*>(private_data),
                         static_cast<std::uint8_t*>(private_data) + IB_CMA_REQ_PRIVATE_DATA_SIZE);
  start_deadline(c, c->attr);
  const std::uint64_t id = c->id;
  node()->defer([id] { passive_request(id); });
}

void on_accepted(ib_cma_event event, void* context) {
  Conn* c = conn_of_ctx(context);
  if (!c) return;
  c->cm_done = event != IB_CMA_EVENT_ESTABLISHED;
  const std::uint64_t id = c->id;
  if (event == IB_CMA_EVENT_ESTABLISHED) {
    c->established_seen = true;
    fire(c, E::Established, "RTU");
    fc_ready(c);
  } else if (event == IB_CMA_EVENT_UNREACHABLE) {
    c->failed = true;
    fire(c, E::Unreachable, "no RTU");
  } else {
    node()->defer([id] { disconnected(id); });
  }
}

// Waits (thread context) until `done` holds or `budget` passes.
template <class F>
bool wait_for(F done, Tick budget, Tick step) {
  host::Host& h = node()->host;
  for (Tick t = 0; !done(); t += step) {
    if (t >= budget) return false;
    h.sleep(step);
  }
  return true;
}

ti_status_t bind_comp(Conn* c, const ti_comp_info_t* comp) {
  Cq *s = cq_of(comp->h_send_cq), *r = cq_of(comp->h_recv_cq);
  if (!s || !r || s->inst != c->inst || r->inst != c->inst) return TI_INVALID_PARAMETER;
  if (c->qp && (s != c->send_cq || r != c->recv_cq)) return TI_INVALID_PARAMETER;  // the connect's CQs
  c->comp = *comp;
  c->send_cq = s;
  c->recv_cq = r;
  for (Cq* q : {s, r}) {
    if (q->conns.empty()) q->auto_rearm = c->attr.auto_cq_rearm;
    q->conns.insert(c);
    if (!q->armed) {
      q->armed = true;
      ib_req_notify_cq(q->cq, IB_CQ_NEXT_COMP);
    }
  }
  return TI_SUCCESS;
}

ti_status_t accept_passive(Conn* c, ti_conn_request_t* req, ti_comp_info_t* comp, ti_data_element_t* recvs) {
  if (in_interrupt()) return TI_INVALID_OPERATION;
  if (ti_status_t s = bind_comp(c, comp)) return s;
  c->qp = make_qp(c->pd, c->send_cq, c->recv_cq, c->attr);
  if (!c->qp) return TI_INSUFFICIENT_RESOURCES;
  ++c->pd->users;
  if (!fc_setup(c)) return TI_INSUFFICIENT_RESOURCES;
  const std::uint32_t len = req->private_data ? req->private_data_len : 0;
  const u8 n = static_cast<u8>(len < IB_CMA_REP_PRIVATE_DATA_SIZE ? len : IB_CMA_REP_PRIVATE_DATA_SIZE);
  if (ib_cma_accept(&c->cma_id, c->qp, req->private_data, n, ctx_of(c), on_accepted)) return TI_ERROR;
  fire(c, E::Accept, "accept");
  c->deadline.reset();
  // The receives go on as soon as the QP can take them (INIT), before the
  // REP leaves: the first inbound message finds a buffer.
  const std::uint64_t id = c->id;
  ib_qp* qp = c->qp;
  wait_for([qp] { return kverbs::qp_state(qp) >= IB_QPS_INIT; }, 10 * kMs, 100 * kNs);
  if (!fc_post_hello_recv(c)) return TI_INSUFFICIENT_RESOURCES;
  if (ti_status_t s = post_receives(c, recvs)) return s;
  TiNode* nd = node();
  wait_for(
      [nd, id] {
        Conn* k = conn_by_id(*nd, id);
        return !k || k->established_seen || k->failed || k->fsm.state() != S::Accepting;
      },
      10 * kSec, 1 * kUs);
  Conn* k = conn_by_id(*nd, id);
  return k && k->established_seen ? TI_SUCCESS : TI_ERROR;
}

}  // namespace

ti_status_t conn_connect(ti_handle_t h_ti, ti_conn_attr_t* attr, ti_conn_info_t* info, ti_conn_request_t* req,
                         ti_conn_handle_t* ph_conn) {
  Instance* i = instance_of(h_ti);
  if (!i) return TI_INVALID_HANDLE;
  if (!attr || !req || !ph_conn) return TI_INVALID_PARAMETER;
  if (ti_status_t s = check_info(i, info, true, true)) return s;
  if (info->private_data_len > IB_CMA_REQ_PRIVATE_DATA_SIZE) return TI_INVALID_PARAMETER;
  if (in_interrupt()) return TI_INVALID_OPERATION;
  node()->host.work("ti_op");
  Conn* c = new_conn(i);
  c->active = true;
  c->attr = *attr;
  c->info = *info;
  c->info.private_data = nullptr;
  c->local = *endpoint_of(info->src_ep);
  c->remote = *endpoint_of(info->dst_ep);
  c->pd = pd_of(info->pdh);
  c->send_cq = cq_of(info->send_cqh);
  c->recv_cq = cq_of(info->recv_cqh);
  c->qp = make_qp(c->pd, c->send_cq, c->recv_cq, *attr);
  if (!c->qp) {
    free_conn(c);
    return TI_INSUFFICIENT_RESOURCES;
  }
  ++c->pd->users;
  if (!fc_setup(c)) {
    free_conn(c);
    return TI_INSUFFICIENT_RESOURCES;
  }
  c->user_req = req;
  ib_qp_attr qa = qp_attr_of(*attr);
  sockaddr_in dst;
  put_ip(dst, c->remote.ip);
  ib_cma_conn cc{};
  cc.qp = c->qp;
  cc.qp_attr = &qa;
  cc.dst_ip = reinterpret_cast<sockaddr*>(&dst);
  cc.service_id = service_id_of(c->remote.port);
  cc.context = ctx_of(c);
  cc.cma_event_handler = on_active_event;
  cc.private_data = info->private_data;
  cc.private_data_len = static_cast<u8>(info->private_data_len);
  cc.timeout = attr->connect_request_timeout == kForever
                   ? 0
                   : (attr->connect_request_timeout > 60000 ? 60000 : attr->connect_request_timeout);
  std::memset(req, 0, sizeof *req);
  req->conn_handle = handle_of<ti_conn_handle_t>(c);
  req->status = TI_PENDING;
  req->context = info->context;
  if (ib_cma_connect(&cc, &c->cma_id)) {
    free_conn(c);
    return TI_ERROR;
  }
  fire(c, E::Connect, "REQ");
  const std::uint64_t id = c->id;
  cm::cma_on_mra(&c->cma_id, [id] {
    if (TiNode* n = node()) n->defer([id] { active_mra(id); });
  });
  *ph_conn = handle_of<ti_conn_handle_t>(c);
  return TI_SUCCESS;
}

ti_status_t conn_listen(ti_handle_t h_ti, ti_conn_attr_t* attr, ti_conn_info_t* info, ti_conn_request_t* req,
                        ti_conn_handle_t* ph_conn) {
  Instance* i = instance_of(h_ti);
  if (!i) return TI_INVALID_HANDLE;
  if (!attr || !ph_conn) return TI_INVALID_PARAMETER;
  if (ti_status_t s = check_info(i, info, false, false)) return s;
  Conn* c = new_conn(i);
  c->listener = true;
  c->attr = *attr;
  c->info = *info;
  c->info.private_data = nullptr;
  c->local = *endpoint_of(info->src_ep);
  c->pd = pd_of(info->pdh);
  if (ib_cma_sid_listen(nullptr, service_id_of(c->local.port), ctx_of(c), on_request, &c->cma_id)) {
    free_conn(c);
    return TI_INVALID_OPERATION;  // the port is taken
  }
  fire(c, E::Listen, "listen");
  if (req) {
    std::memset(req, 0, sizeof *req);
    req->conn_handle = handle_of<ti_conn_handle_t>(c);
    req->status = TI_PENDING;
    req->caller = 1;
    req->context = info->context;
  }
  *ph_conn = handle_of<ti_conn_handle_t>(c);
  return TI_SUCCESS;
}

ti_status_t conn_accept(ti_conn_request_t* req, uint32_t max_rdma_size, ti_comp_info_t* comp,
                        ti_data_element_t* recvs) {
  if (!req) return TI_INVALID_PARAMETER;
  Conn* c = conn_of(req->conn_handle);
  if (!c || c->listener) return TI_INVALID_PARAMETER;
  if (c->timed_out && (c->fsm.state() == S::Requested || c->fsm.state() == S::ReplyReceived ||
                       c->fsm.state() == S::Closed || c->fsm.state() == S::Disconnecting)) {
    if (c->fsm.state() != S::Disconnecting) free_conn(c);
    req->status = TI_TIMEOUT;
    return TI_TIMEOUT;
  }
  if (!comp) return TI_INVALID_PARAMETER;
  if (max_rdma_size) c->attr.max_rdma_size = max_rdma_size;
  ti_status_t s = TI_INVALID_OPERATION;
  if (c->fsm.state() == S::ReplyReceived) {
    s = bind_comp(c, comp);
    if (s == TI_SUCCESS && !fc_post_hello_recv(c)) s = TI_INSUFFICIENT_RESOURCES;
    if (s == TI_SUCCESS) s = post_receives(c, recvs);
    if (s == TI_SUCCESS) {
      fire(c, E::Accept, "accept");
      c->deadline.reset();
      fc_ready(c);
    }
  } else if (c->fsm.state() == S::Requested) {
    s = accept_passive(c, req, comp, recvs);
  }
  req->status = s;
  return s;
}

ti_status_t conn_reject(ti_conn_request_t* req) {
  if (!req) return TI_INVALID_PARAMETER;
  Conn* c = conn_of(req->conn_handle);
  if (!c || c->listener) return TI_INVALID_PARAMETER;
  const std::uint64_t id = c->id;
  if (c->timed_out) {
    if (c->fsm.state() == S::Requested || c->fsm.state() == S::Closed) free_conn(c);
    return TI_TIMEOUT;
  }
  if (c->fsm.state() == S::Requested) {
    const std::uint32_t len = req->private_data ? req->private_data_len : 0;
    const u8 n = static_cast<u8>(len < IB_CMA_REJ_PRIVATE_DATA_SIZE ? len : IB_CMA_REJ_PRIVATE_DATA_SIZE);
    ib_cma_reject(&c->cma_id, req->private_data, n);
    fire(c, E::Reject, "reject");
    free_conn(c);
  } else if (c->fsm.state() == S::ReplyReceived) {
    // The active side refuses the reply: the CM already answered it, so
    // the connection is taken down again.
    fire(c, E::Reject, "reject the reply");
    ib_cma_disconnect(c->qp, &c->cma_id);
  } else {
    return TI_INVALID_OPERATION;
  }
  (void)id;
  req->conn_handle = nullptr;
  req->status = TI_REJECTED;
  return TI_SUCCESS;
}

ti_status_t conn_disconnect(ti_conn_handle_t h_conn, ti_context_cb_t cb, void* ctx) {
  Conn* c = conn_of(h_conn);
  if (!c) return TI_INVALID_HANDLE;
  TiNode* n = node();
  c->disconnect_cb = cb;
  c->disconnect_context = ctx;
  auto later = [n, cb, ctx] {
    if (cb) n->defer([cb, ctx] { cb(ctx); });
  };
  switch (c->fsm.state()) {
    case S::Listening:
      ib_cma_sid_destroy(&c->cma_id);
      fire(c, E::Disconnect, "stop listening");
      free_conn(c);
      later();
      return TI_SUCCESS;
    case S::Connecting:
      fire(c, E::Disconnect, "cancel the request");
      return TI_SUCCESS;  // the CR callback sees TI_CANCELED, then cb runs
    case S::Requested:
      ib_cma_reject(&c->cma_id, nullptr, 0);
      fire(c, E::Disconnect, "refuse the request");
      free_conn(c);
      later();
      return TI_SUCCESS;
    case S::ReplyReceived:
    case S::Established:
      if (ib_cma_disconnect(c->qp, &c->cma_id)) return TI_INVALID_OPERATION;
      fire(c, E::Disconnect, "DREQ");
      return TI_SUCCESS;
    case S::Closed:
    case S::Idle:
      free_conn(c);
      later();
      return TI_SUCCESS;
    default:
      return TI_INVALID_OPERATION;  // already on its way down, or accepting
  }
}

Conn* conn_by_id(TiNode& n, std::uint64_t id) {
  auto it = n.by_id.find(id);
  return it == n.by_id.end() ? nullptr : it->second;
}

void conn_release(Conn* c) {
  const S st = c->fsm.state();
  const std::uint64_t id = c->id;
  TiNode* n = node();
  fire(c, E::Released, "destroy_ti");
  if (c->listener) {
    ib_cma_sid_destroy(&c->cma_id);
  } else if (st == S::Requested) {
    ib_cma_reject(&c->cma_id, nullptr, 0);
  } else if (c->qp && !c->cm_done && (st == S::Established || st == S::ReplyReceived || st == S::Accepting)) {
    // The CM lets go of the QP when it says the connection is gone.
    if (!ib_cma_disconnect(c->qp, &c->cma_id))
      wait_for(
          [n, id] {
            Conn* k = conn_by_id(*n, id);
            return !k || k->cm_done;
          },
          kReleaseBudget, 1 * kUs);
  }
  if ((c = conn_by_id(*n, id))) free_conn(c);
}

}  // namespace nicsim::ti
