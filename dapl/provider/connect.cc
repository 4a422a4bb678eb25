// Connections, as the seed's diagram has them: the active side's
// dat_ep_connect goes to the CMA (REQ on the wire) and hears ESTABLISHED,
// REJECTED, UNREACHABLE and DISCONNECTED through its event handler (the
// seed's dapl_evd_connection_callback); the passive side's PSP or RSP
// listens on the connection qualifier as IB service id and hears requests
// through its listen handler and the accepted connection's events through
// the accept handler (dapls_cr_callback). Handlers run in the node's
// interrupt context: they only change states and queue events. A CR lives
// as long as its connection.
#include <cstring>

#include "dapl/provider/dapl.h"
#include "dapl/provider/kib.h"
#include "host/host.h"

namespace nicsim::dapl {
namespace {

using CmaId = kib::ib_cma_id;

std::uint64_t id_value(const CmaId& id) {
  std::uint64_t v = 0;
  std::memcpy(&v, &id, sizeof id < sizeof v ? sizeof id : sizeof v);
  return v;
}
CmaId id_of(std::uint64_t v) {
  CmaId id{};
  std::memcpy(&id, &v, sizeof id < sizeof v ? sizeof id : sizeof v);
  return id;
}
kib::__be64 be64(std::uint64_t v) {
  kib::__be64 r;
  auto* p = reinterpret_cast<unsigned char*>(&r);
  for (int i = 7; i >= 0; --i, v >>= 8) p[i] = static_cast<unsigned char>(v);
  return r;
}
void* token_ptr(std::uint64_t t) { return reinterpret_cast<void*>(static_cast<std::uintptr_t>(t)); }
std::uint64_t token_of(void* p) { return static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(p)); }

// The provider's header before the consumer's private data.
void put_header(std::uint8_t* h, std::uint8_t kind, std::size_t len) {
  h[0] = kMagic, h[1] = kind, h[2] = static_cast<std::uint8_t>(len >> 8), h[3] = static_cast<std::uint8_t>(len);
}
bool get_header(const std::uint8_t* h, int max, std::uint8_t& kind, std::size_t& len) {
  if (!h || h[0] != kMagic) return false;
  kind = h[1];
  len = (static_cast<std::size_t>(h[2]) << 8) | h[3];
  return static_cast<int>(len) <= max;
}

void post_event(Ep& ep, DAT_EVENT_NUMBER number, bool with_private) {
  if (!ep.connect_evd) return;
  DAT_EVENT ev{};
  ev.event_number = number;
  ev.event_data.connect_event_data.ep_handle = to_handle(&ep);
  if (with_private && !ep.event_private.empty()) {
    ev.event_data.connect_event_data.private_data_size = static_cast<DAT_COUNT>(ep.event_private.size());
    ev.event_data.connect_event_data.private_data = ep.event_private.data();
  }
  evd_post(*ep.connect_evd, ev);
}

void on_active_event(kib::ib_cma_event event, void* context, void* private_data) {
  Node* n = Node::current();
  Ep* ep = n ? n->ep_of_attempt(token_of(context)) : nullptr;
  if (!ep) return;  // an attempt the EP gave up (timed out, freed)
  const auto* pd = static_cast<const std::uint8_t*>(private_data);
  std::uint8_t kind = 0;
  std::size_t len = 0;
  switch (event) {
    case kib::IB_CMA_EVENT_ESTABLISHED:
      n->cancel_timer(*ep);
      ep->event_private.clear();
      if (get_header(pd, kMaxRepPrivate, kind, len)) ep->event_private.assign(pd + kRepHeader, pd + kRepHeader + len);
      ep_fire(*ep, EpEvent::Established, "rep");
      return post_event(*ep, DAT_CONNECTION_EVENT_ESTABLISHED, true);
    case kib::IB_CMA_EVENT_REJECTED: {
      n->cancel_timer(*ep);
      ep->cma_id = 0;
      const bool peer = get_header(pd, 0, kind, len) && kind == kPeerReject;
      ep_fire(*ep, peer ? EpEvent::PeerRejected : EpEvent::NonPeerRejected, "rej");
      return post_event(*ep, peer ? DAT_CONNECTION_EVENT_PEER_REJECTED : DAT_CONNECTION_EVENT_NON_PEER_REJECTED, false);
    }
    case kib::IB_CMA_EVENT_UNREACHABLE:
      n->cancel_timer(*ep);
      ep->cma_id = 0;
      if (!ep->fsm.handles(EpEvent::Unreachable)) return;
      ep_fire(*ep, EpEvent::Unreachable, "unreachable");
      return post_event(*ep, DAT_CONNECTION_EVENT_UNREACHABLE, false);
    case kib::IB_CMA_EVENT_DISCONNECTED:
      ep->cma_id = 0;
      if (!ep->fsm.handles(EpEvent::Disconnected)) return;
      ep_fire(*ep, EpEvent::Disconnected, "dreq_drep");
      return post_event(*ep, DAT_CONNECTION_EVENT_DISCONNECTED, false);
  }
}

void on_passive_event(kib::ib_cma_event event, void* context) {
  Node* n = Node::current();
  Ep* ep = n ? n->ep_of_attempt(token_of(context)) : nullptr;
  if (!ep) return;
  if (event == kib::IB_CMA_EVENT_ESTABLISHED && ep->fsm.handles(EpEvent::Established)) {
    ep_fire(*ep, EpEvent::Established, "rtu");
    return post_event(*ep, DAT_CONNECTION_EVENT_ESTABLISHED, false);
  }
  ep->cma_id = 0;
  if (ep->cr) cr_release(*n, *ep->cr);
  if (event == kib::IB_CMA_EVENT_DISCONNECTED && ep->fsm.handles(EpEvent::Disconnected)) {
    ep_fire(*ep, EpEvent::Disconnected, "dreq_drep");
    return post_event(*ep, DAT_CONNECTION_EVENT_DISCONNECTED, false);
  }
  if (ep->fsm.handles(EpEvent::Broken)) {
    ep_fire(*ep, EpEvent::Broken, "no_rtu");
    post_event(*ep, DAT_CONNECTION_EVENT_ACCEPT_COMPLETION_ERROR, false);
  }
}

// A connection request on a PSP or RSP (step 3 of the seed's diagram).
void on_request(CmaId* cma_id, void* private_data, void* context) {
  Node* n = Node::current();
  Object* o = n ? n->find(context) : nullptr;
  auto* sp = o && (o->kind == Kind::Psp || o->kind == Kind::Rsp) ? static_cast<Sp*>(o) : nullptr;
  const auto* pd = static_cast<const std::uint8_t*>(private_data);
  std::uint8_t kind = 0;
  std::size_t len = 0;
  // A freed PSP or a used RSP answers as if nobody listened.
  if (!sp || !sp->listening || !get_header(pd, kMaxReqPrivate, kind, len)) {
    kib::ib_cma_reject(cma_id, nullptr, 0);
    return;
  }
  auto cr = std::make_unique<Cr>(Kind::Cr, sp->ia);
  cr->sp = sp;
  cr->cma_id = id_value(*cma_id);
  cr->private_data.assign(pd + kReqHeader, pd + kReqHeader + len);
  cr->remote_addr.sin_family = AF_INET;
  std::memcpy(&cr->remote_addr.sin_addr.s_addr, pd + 4, 4);
  Cr* raw = n->add(std::move(cr));
  ++sp->crs;
  ++n->counters_mut().crs;
  if (sp->kind == Kind::Rsp) {
    sp->listening = false;  // one shot
    raw->ep = sp->rsp_ep;
  } else if (sp->flags == DAT_PSP_PROVIDER_FLAG) {
    raw->ep = n->add(std::make_unique<Ep>(sp->ia, n->host().node_id(), n->new_ep_name()));
    ++n->counters_mut().eps;
    raw->ep->provider_made = true;
    raw->ep->param.ia_handle = to_handle(sp->ia);
    raw->ep->local_addr = sp->ia->addr;
    raw->ep->param.local_ia_address_ptr = reinterpret_cast<DAT_IA_ADDRESS_PTR>(&raw->ep->local_addr);
    raw->ep->param.ep_attr = ep_default_attr();
  }
  if (raw->ep) {
    raw->ep->cr = raw;
    ep_fire(*raw->ep, EpEvent::Request, "request");
  }
  DAT_EVENT ev{};
  ev.event_number = DAT_CONNECTION_REQUEST_EVENT;
  ev.event_data.cr_arrival_event_data.sp_handle = to_handle(sp);
  ev.event_data.cr_arrival_event_data.local_ia_address_ptr = reinterpret_cast<DAT_IA_ADDRESS_PTR>(&sp->ia->addr);
  ev.event_data.cr_arrival_event_data.conn_qual = sp->qual;
  ev.event_data.cr_arrival_event_data.cr_handle = to_handle(raw);
  evd_post(*sp->evd, ev);
}

}  // namespace

void ep_try_graceful_disconnect(Ep& ep) {
  ep.graceful_pending = false;
  if (!ep.cma_id || !ep.qp) return;
  CmaId id = id_of(ep.cma_id);
  kib::ib_cma_disconnect(ep.qp, &id);
}

void ep_connection_timed_out(Node& n, Ep& ep) {
  // The seed's dapls_ib_disconnect_clean: the attempt is abandoned (its
  // late events are ignored), the QP goes to ERROR so its DTOs flush, and
  // the EP is UNCONNECTED again.
  ep.attempt = 0;
  ep.cma_id = 0;
  ep_fire(ep, EpEvent::Timeout, "connect_timer");
  if (ep.qp) {
    kib::ib_qp_attr a{};
    a.qp_state = kib::IB_QPS_ERR;
    kib::ib_modify_qp(ep.qp, &a, kib::IB_QP_STATE);
    ep.qp_failed = true;
  }
  (void)n;
  post_event(ep, DAT_CONNECTION_EVENT_TIMED_OUT, false);
}

void ep_abort_connection(Node& n, Ep& ep) {
  n.cancel_timer(ep);
  const EpState s = ep.fsm.state();
  if ((s == EpState::Connected || s == EpState::DisconnectPending) && ep.cma_id && ep.qp) {
    CmaId id = id_of(ep.cma_id);
    kib::ib_cma_disconnect(ep.qp, &id);
  }
  if (ep.cr && !ep.cr->answered) {
    CmaId id = id_of(ep.cr->cma_id);
    kib::ib_cma_reject(&id, nullptr, 0);
  }
  if (ep.cr) cr_release(n, *ep.cr);
  ep.attempt = 0;
  ep.cma_id = 0;
}

void sp_release(Node& n, Sp& sp) {
  if (sp.listen_id) {
    CmaId id = id_of(sp.listen_id);
    kib::ib_cma_sid_destroy(&id);
  }
  if (sp.evd) --sp.evd->refs;
  if (sp.rsp_ep && sp.rsp_ep->fsm.state() == EpState::Reserved) ep_fire(*sp.rsp_ep, EpEvent::Unreserve, "rsp_free");
  if (sp.kind == Kind::Psp)
    --n.counters_mut().psps;
  else
    --n.counters_mut().rsps;
  n.remove(&sp);
}

void cr_release(Node& n, Cr& cr) {
  if (cr.ep && cr.ep->cr == &cr) cr.ep->cr = nullptr;
  Sp* sp = cr.sp;
  --n.counters_mut().crs;
  n.remove(&cr);
  if (sp && --sp->crs <= 0 && sp->consumer_freed) sp_release(n, *sp);
}

}  // namespace nicsim::dapl

using namespace nicsim;
using namespace nicsim::dapl;

namespace {

constexpr int kQosBits = DAT_QOS_HIGH_THROUGHPUT | DAT_QOS_LOW_LATENCY | DAT_QOS_ECONOMY | DAT_QOS_PREMIUM;

DAT_RETURN connect_checks(Ep& ep, DAT_IA_ADDRESS_PTR remote, DAT_COUNT size, const DAT_PVOID data, DAT_QOS qos) {
  if (!remote) return bad_arg(2);
  if (remote->sa_family != AF_INET) return err(DAT_INVALID_ADDRESS, DAT_INVALID_ADDRESS_UNSUPPORTED);
  if (size < 0 || size > kMaxReqPrivate) return bad_arg(5);
  if (size > 0 && !data) return bad_arg(6);
  if (qos & ~kQosBits) return bad_arg(7);
  if (ep.fsm.state() != EpState::Unconnected) return bad_ep_state(ep);
  if (!ep.qp || ep.ia->port != 1) return err(DAT_INVALID_STATE, DAT_INVALID_STATE_EP_NOTREADY);
  return DAT_SUCCESS;
}

DAT_RETURN connect_ep(Node& n, Ep& ep, const sockaddr_in& dst, DAT_CONN_QUAL qual, DAT_TIMEOUT timeout, DAT_COUNT size,
                      const void* data) {
  if (ep.qp_failed)
    if (DAT_RETURN rc = ep_attach_qp(n, ep)) return rc;
  std::uint8_t req[kReqHeader + kMaxReqPrivate] = {};
  put_header(req, kVersion, static_cast<std::size_t>(size));
  std::memcpy(req + 4, &ep.local_addr.sin_addr.s_addr, 4);
  if (size) std::memcpy(req + kReqHeader, data, static_cast<std::size_t>(size));
  kib::sockaddr_in kdst{};
  kdst.sin_family = AF_INET;
  std::memcpy(&kdst.sin_addr.s_addr, &dst.sin_addr.s_addr, 4);
  kib::ib_qp_attr qa{};
  qa.qp_access_flags = kib::IB_ACCESS_LOCAL_WRITE | kib::IB_ACCESS_REMOTE_WRITE | kib::IB_ACCESS_REMOTE_READ;
  qa.max_rd_atomic = static_cast<kib::u8>(ep.param.ep_attr.max_rdma_read_out);
  qa.max_dest_rd_atomic = static_cast<kib::u8>(ep.param.ep_attr.max_rdma_read_in);
  qa.timeout = 14;
  qa.retry_cnt = 7;
  qa.rnr_retry = 7;
  qa.min_rnr_timer = 12;
  kib::ib_cma_conn cc{};
  cc.qp = ep.qp;
  cc.qp_attr = &qa;
  cc.dst_ip = reinterpret_cast<kib::sockaddr*>(&kdst);
  cc.service_id = be64(qual);
  cc.context = token_ptr(n.new_attempt(ep));
  cc.cma_event_handler = on_active_event;
  cc.private_data = req;
  cc.private_data_len = static_cast<kib::u8>(kReqHeader + size);
  CmaId id{};
  if (kib::ib_cma_connect(&cc, &id)) {
    ep.attempt = 0;
    return err(DAT_INTERNAL_ERROR);
  }
  ep.cma_id = id_value(id);
  ep.remote_addr = dst;
  ep.param.remote_port_qual = qual;
  ep.event_private.clear();
  ep_fire(ep, EpEvent::Connect, "dat_ep_connect");
  if (timeout != DAT_TIMEOUT_INFINITE) n.set_timer(ep, now() + static_cast<Tick>(timeout) * kUs);
  return DAT_SUCCESS;
}

Sp* live_sp(Node* n, DAT_HANDLE h, Kind k) {
  Sp* sp = n ? n->find_as<Sp>(h, k) : nullptr;
  return sp && !sp->consumer_freed ? sp : nullptr;
}

DAT_RETURN listen(Node& n, Ia& ia, DAT_CONN_QUAL qual, Evd* evd, std::unique_ptr<Sp> sp, DAT_HANDLE* out) {
  sp->qual = qual;
  sp->evd = evd;
  Sp* raw = n.add(std::move(sp));
  CmaId id{};
  const int rc = kib::ib_cma_sid_listen(nullptr, be64(qual), to_handle(raw), on_request, &id);
  if (rc) {
    n.remove(raw);
    return rc == -EBUSY ? err(DAT_CONN_QUAL_IN_USE) : err(DAT_INSUFFICIENT_RESOURCES, DAT_RESOURCE_DEVICE);
  }
  (void)ia;
  raw->listen_id = id_value(id);
  raw->listening = true;
  ++evd->refs;
  if (raw->kind == Kind::Psp)
    ++n.counters_mut().psps;
  else
    ++n.counters_mut().rsps;
  *out = to_handle(raw);
  return DAT_SUCCESS;
}

}  // namespace

extern "C" {

DAT_RETURN dat_ep_connect(DAT_EP_HANDLE ep_handle, DAT_IA_ADDRESS_PTR remote_ia_address, DAT_CONN_QUAL remote_conn_qual,
                          DAT_TIMEOUT timeout, DAT_COUNT private_data_size, const DAT_PVOID private_data,
                          DAT_QOS quality_of_service, DAT_CONNECT_FLAGS connect_flags) {
  NICSIM_API_CALL();
  Node* n = Node::current();
  Ep* ep = n ? n->find_as<Ep>(ep_handle, Kind::Ep) : nullptr;
  if (!ep) return bad_handle(DAT_INVALID_HANDLE_EP);
  Pin pin(*n, *ep);
  charge_call(*n);
  if (ep->dead) return bad_handle(DAT_INVALID_HANDLE_EP);  // freed by another thread meanwhile
  if (DAT_RETURN rc = connect_checks(*ep, remote_ia_address, private_data_size, private_data, quality_of_service))
    return rc;
  if (connect_flags == DAT_CONNECT_MULTIPATH_FLAG) return err(DAT_MODEL_NOT_SUPPORTED);
  if (connect_flags != DAT_CONNECT_DEFAULT_FLAG) return bad_arg(8);
  sockaddr_in dst{};
  std::memcpy(&dst, remote_ia_address, sizeof dst);
  return connect_ep(*n, *ep, dst, remote_conn_qual, timeout, private_data_size, private_data);
}

DAT_RETURN dat_ep_dup_connect(DAT_EP_HANDLE ep_handle, DAT_EP_HANDLE ep_dup_handle, DAT_TIMEOUT timeout,
                              DAT_COUNT private_data_size, const DAT_PVOID private_data, DAT_QOS quality_of_service) {
  NICSIM_API_CALL();
  Node* n = Node::current();
  Ep* ep = n ? n->find_as<Ep>(ep_handle, Kind::Ep) : nullptr;
  if (!ep) return bad_handle(DAT_INVALID_HANDLE_EP);
  Ep* dup = n->find_as<Ep>(ep_dup_handle, Kind::Ep);
  if (!dup) return bad_handle(DAT_INVALID_HANDLE2);
  if (dup->fsm.state() != EpState::Connected) return bad_ep_state(*dup);
  Pin pin(*n, *ep), pin_dup(*n, *dup);
  charge_call(*n);
  if (ep->dead) return bad_handle(DAT_INVALID_HANDLE_EP);  // freed by another thread meanwhile
  if (dup->dead) return bad_handle(DAT_INVALID_HANDLE2);
  if (DAT_RETURN rc = connect_checks(*ep, reinterpret_cast<DAT_IA_ADDRESS_PTR>(&dup->remote_addr), private_data_size,
                                     private_data, quality_of_service))
    return rc;
  return connect_ep(*n, *ep, dup->remote_addr, dup->param.remote_port_qual, timeout, private_data_size, private_data);
}

DAT_RETURN dat_ep_disconnect(DAT_EP_HANDLE ep_handle, DAT_CLOSE_FLAGS close_flags) {
  NICSIM_API_CALL();
  Node* n = Node::current();
  Ep* ep = n ? n->find_as<Ep>(ep_handle, Kind::Ep) : nullptr;
  if (!ep) return bad_handle(DAT_INVALID_HANDLE_EP);
  Pin pin(*n, *ep);
  charge_call(*n);
  if (ep->dead) return bad_handle(DAT_INVALID_HANDLE_EP);  // freed by another thread meanwhile
  if (close_flags != DAT_CLOSE_ABRUPT_FLAG && close_flags != DAT_CLOSE_GRACEFUL_FLAG) return bad_arg(2);
  if (ep->fsm.state() == EpState::Unconnected) {
    // The only way to take pending RECVs off an EP: its QP goes to ERROR
    // (the flag is ignored) and they complete flushed.
    if (ep->qp && !ep->qp_failed) {
      kib::ib_qp_attr a{};
      a.qp_state = kib::IB_QPS_ERR;
      kib::ib_modify_qp(ep->qp, &a, kib::IB_QP_STATE);
      ep->qp_failed = true;
    }
    ep_fire(*ep, EpEvent::FlushRecvs, "dat_ep_disconnect");
    return DAT_SUCCESS;
  }
  if (ep->fsm.state() != EpState::Connected) return bad_ep_state(*ep);
  ep_fire(*ep, EpEvent::Disconnect, close_flags == DAT_CLOSE_GRACEFUL_FLAG ? "graceful" : "abrupt");
  // Graceful: the DREQ leaves when the requests in flight have completed.
  if (close_flags == DAT_CLOSE_GRACEFUL_FLAG && !ep->requests.empty()) {
    ep->graceful_pending = true;
    return DAT_SUCCESS;
  }
  ep_try_graceful_disconnect(*ep);
  return DAT_SUCCESS;
}

DAT_RETURN dat_psp_create(DAT_IA_HANDLE ia_handle, DAT_CONN_QUAL conn_qual, DAT_EVD_HANDLE evd_handle,
                          DAT_PSP_FLAGS psp_flags, DAT_PSP_HANDLE* psp_handle) {
  NICSIM_API_CALL();
  Node* n = Node::current();
  Ia* ia = n ? n->find_as<Ia>(ia_handle, Kind::Ia) : nullptr;
  if (!ia) return bad_handle(DAT_INVALID_HANDLE_IA);
  Pin pin(*n, *ia);
  charge_call(*n);
  if (ia->dead) return bad_handle(DAT_INVALID_HANDLE_IA);  // freed by another thread meanwhile
  Evd* evd = n->find_as<Evd>(evd_handle, Kind::Evd);
  if (!evd || !(evd->flags & DAT_EVD_CR_FLAG)) return bad_handle(DAT_INVALID_HANDLE_EVD_CR);
  if (psp_flags != DAT_PSP_CONSUMER_FLAG && psp_flags != DAT_PSP_PROVIDER_FLAG) return bad_arg(4);
  if (!psp_handle) return bad_arg(5);
  if (ia->port != 1) return err(DAT_INVALID_STATE, DAT_INVALID_STATE_EP_NOTREADY);
  auto sp = std::make_unique<Sp>(Kind::Psp, ia);
  sp->flags = psp_flags;
  return listen(*n, *ia, conn_qual, evd, std::move(sp), psp_handle);
}

DAT_RETURN dat_psp_query(DAT_PSP_HANDLE psp_handle, DAT_PSP_PARAM_MASK, DAT_PSP_PARAM* psp_param) {
  NICSIM_API_CALL();
  Sp* sp = live_sp(Node::current(), psp_handle, Kind::Psp);
  if (!sp) return bad_handle(DAT_INVALID_HANDLE_PSP);
  if (!psp_param) return bad_arg(3);
  *psp_param = {to_handle(sp->ia), sp->qual, to_handle(sp->evd), sp->flags};
  return DAT_SUCCESS;
}

DAT_RETURN dat_psp_free(DAT_PSP_HANDLE psp_handle) {
  NICSIM_API_CALL();
  Node* n = Node::current();
  Sp* sp = live_sp(n, psp_handle, Kind::Psp);
  if (!sp) return bad_handle(DAT_INVALID_HANDLE_PSP);
  Pin pin(*n, *sp);
  charge_call(*n);
  if (sp->dead) return bad_handle(DAT_INVALID_HANDLE_PSP);  // freed by another thread meanwhile
  // Live connections keep their CRs here; new requests are rejected.
  sp->listening = false;
  sp->consumer_freed = true;
  if (sp->crs <= 0) sp_release(*n, *sp);
  return DAT_SUCCESS;
}

DAT_RETURN dat_rsp_create(DAT_IA_HANDLE ia_handle, DAT_CONN_QUAL conn_qual, DAT_EP_HANDLE ep_handle,
                          DAT_EVD_HANDLE evd_handle, DAT_RSP_HANDLE* rsp_handle) {
  NICSIM_API_CALL();
  Node* n = Node::current();
  Ia* ia = n ? n->find_as<Ia>(ia_handle, Kind::Ia) : nullptr;
  if (!ia) return bad_handle(DAT_INVALID_HANDLE_IA);
  Pin pin(*n, *ia);
  charge_call(*n);
  if (ia->dead) return bad_handle(DAT_INVALID_HANDLE_IA);  // freed by another thread meanwhile
  Ep* ep = n->find_as<Ep>(ep_handle, Kind::Ep);
  if (!ep) return bad_handle(DAT_INVALID_HANDLE_EP);
  Evd* evd = n->find_as<Evd>(evd_handle, Kind::Evd);
  if (!evd || !(evd->flags & DAT_EVD_CR_FLAG)) return bad_handle(DAT_INVALID_HANDLE_EVD_CR);
  if (!rsp_handle) return bad_arg(5);
  if (ep->fsm.state() != EpState::Unconnected) return bad_ep_state(*ep);
  if (ia->port != 1) return err(DAT_INVALID_STATE, DAT_INVALID_STATE_EP_NOTREADY);
  auto sp = std::make_unique<Sp>(Kind::Rsp, ia);
  sp->rsp_ep = ep;
  if (DAT_RETURN rc = listen(*n, *ia, conn_qual, evd, std::move(sp), rsp_handle)) return rc;
  ep_fire(*ep, EpEvent::Reserve, "dat_rsp_create");
  return DAT_SUCCESS;
}

DAT_RETURN dat_rsp_query(DAT_RSP_HANDLE rsp_handle, DAT_RSP_PARAM_MASK, DAT_RSP_PARAM* rsp_param) {
  NICSIM_API_CALL();
  Sp* sp = live_sp(Node::current(), rsp_handle, Kind::Rsp);
  if (!sp) return bad_handle(DAT_INVALID_HANDLE_RSP);
  if (!rsp_param) return bad_arg(3);
  *rsp_param = {to_handle(sp->ia), sp->qual, to_handle(sp->evd), to_handle(sp->rsp_ep)};
  return DAT_SUCCESS;
}

DAT_RETURN dat_rsp_free(DAT_RSP_HANDLE rsp_handle) {
  NICSIM_API_CALL();
  Node* n = Node::current();
  Sp* sp = live_sp(n, rsp_handle, Kind::Rsp);
  if (!sp) return bad_handle(DAT_INVALID_HANDLE_RSP);
  Pin pin(*n, *sp);
  charge_call(*n);
  if (sp->dead) return bad_handle(DAT_INVALID_HANDLE_RSP);  // freed by another thread meanwhile
  sp->listening = false;
  sp->consumer_freed = true;
  if (sp->crs <= 0) sp_release(*n, *sp);
  return DAT_SUCCESS;
}

DAT_RETURN dat_cr_query(DAT_CR_HANDLE cr_handle, DAT_CR_PARAM_MASK, DAT_CR_PARAM* cr_param) {
  NICSIM_API_CALL();
  Node* n = Node::current();
  Cr* cr = n ? n->find_as<Cr>(cr_handle, Kind::Cr) : nullptr;
  if (!cr) return bad_handle(DAT_INVALID_HANDLE_CR);
  if (!cr_param) return bad_arg(3);
  cr_param->remote_ia_address_ptr = reinterpret_cast<DAT_IA_ADDRESS_PTR>(&cr->remote_addr);
  cr_param->remote_port_qual = 0;
  cr_param->private_data_size = static_cast<DAT_COUNT>(cr->private_data.size());
  cr_param->private_data = cr->private_data.empty() ? nullptr : cr->private_data.data();
  cr_param->local_ep_handle = to_handle(cr->ep);
  return DAT_SUCCESS;
}

DAT_RETURN dat_cr_accept(DAT_CR_HANDLE cr_handle, DAT_EP_HANDLE ep_handle, DAT_COUNT private_data_size,
                         const DAT_PVOID private_data) {
  NICSIM_API_CALL();
  Node* n = Node::current();
  Cr* cr = n ? n->find_as<Cr>(cr_handle, Kind::Cr) : nullptr;
  if (!cr || cr->answered) return bad_handle(DAT_INVALID_HANDLE_CR);
  Pin pin(*n, *cr);
  charge_call(*n);
  if (cr->dead || cr->answered) return bad_handle(DAT_INVALID_HANDLE_CR);  // answered by another thread meanwhile
  Ep* ep = ep_handle == DAT_HANDLE_NULL ? cr->ep : n->find_as<Ep>(ep_handle, Kind::Ep);
  if (!ep || (cr->ep && ep != cr->ep)) return bad_handle(DAT_INVALID_HANDLE_EP);
  if (private_data_size < 0 || private_data_size > kMaxRepPrivate) return bad_arg(3);
  if (private_data_size > 0 && !private_data) return bad_arg(4);
  if (!ep->fsm.handles(EpEvent::Accept)) return bad_ep_state(*ep);
  if (!ep->qp) return err(DAT_INVALID_STATE, DAT_INVALID_STATE_EP_NOTREADY);
  if (ep->qp_failed)
    if (DAT_RETURN rc = ep_attach_qp(*n, *ep)) return rc;
  std::uint8_t rep[kRepHeader + kMaxRepPrivate] = {};
  put_header(rep, kVersion, static_cast<std::size_t>(private_data_size));
  if (private_data_size) std::memcpy(rep + kRepHeader, private_data, static_cast<std::size_t>(private_data_size));
  CmaId id = id_of(cr->cma_id);
  const std::uint64_t token = n->new_attempt(*ep);
  if (kib::ib_cma_accept(&id, ep->qp, rep, static_cast<kib::u8>(kRepHeader + private_data_size), token_ptr(token),
                         on_passive_event)) {
    ep->attempt = 0;
    return err(DAT_INVALID_STATE);  // the requester is gone
  }
  cr->answered = true;
  cr->ep = ep;
  ep->cr = cr;
  ep->cma_id = cr->cma_id;
  ep->remote_addr = cr->remote_addr;
  ep->param.remote_port_qual = 0;
  ep_fire(*ep, EpEvent::Accept, "dat_cr_accept");
  return DAT_SUCCESS;
}

DAT_RETURN dat_cr_reject(DAT_CR_HANDLE cr_handle) {
  NICSIM_API_CALL();
  Node* n = Node::current();
  Cr* cr = n ? n->find_as<Cr>(cr_handle, Kind::Cr) : nullptr;
  if (!cr || cr->answered) return bad_handle(DAT_INVALID_HANDLE_CR);
  Pin pin(*n, *cr);
  charge_call(*n);
  if (cr->dead || cr->answered) return bad_handle(DAT_INVALID_HANDLE_CR);  // answered by another thread meanwhile
  std::uint8_t rej[kRepHeader];
  put_header(rej, kPeerReject, 0);
  CmaId id = id_of(cr->cma_id);
  kib::ib_cma_reject(&id, rej, sizeof rej);
  Ep* ep = cr->ep;
  cr_release(*n, *cr);
  if (ep && ep->provider_made) {
    ep_free_all(*n, *ep);
  } else if (ep && ep->fsm.handles(EpEvent::Reject)) {
    ep_fire(*ep, EpEvent::Reject, "dat_cr_reject");
  }
  return DAT_SUCCESS;
}

}  // extern "C"
