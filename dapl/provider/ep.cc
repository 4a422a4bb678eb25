// Endpoints: the EP state machine, EPs mapped onto RC QPs of the kernel
// verbs as the seed describes (a NULL PZ leaves the EP UNATTACHED, with no
// QP; a PZ binds a QP, moved to INIT at once so RECVs can be posted before
// a connection; changing the PZ replaces the QP), create, query, modify,
// get_status, reset and free, with references on the bound handles.
#include <cstring>

#include "dapl/provider/dapl.h"
#include "dapl/provider/kib.h"
#include "host/host.h"

namespace nicsim::dapl {

const FsmType& EpMachine::type() {
  using S = EpState;
  using E = EpEvent;
  // DAT 1.1 section 6.5.1's EP states, as the seed walks them.
  static const FsmType type = make_fsm_type<EpMachine>(
      "dat.ep", {{S::Unconnected, E::Connect, S::ActiveConnectionPending, "connect"},
                 {S::Unconnected, E::Reserve, S::Reserved, "rsp_create"},
                 {S::Reserved, E::Unreserve, S::Unconnected, "rsp_free"},
                 {S::Reserved, E::Request, S::PassiveConnectionPending, "rsp_request"},
                 {S::Unconnected, E::Request, S::PassiveConnectionPending, "provider_ep"},
                 {S::Unconnected, E::Accept, S::CompletionPending, "accept"},
                 {S::PassiveConnectionPending, E::Accept, S::CompletionPending, "accept"},
                 {S::PassiveConnectionPending, E::Reject, S::Unconnected, "reject"},
                 {S::CompletionPending, E::Established, S::Connected, "rtu"},
                 {S::CompletionPending, E::Broken, S::Disconnected, "no_rtu"},
                 {S::ActiveConnectionPending, E::Established, S::Connected, "rep"},
                 {S::ActiveConnectionPending, E::PeerRejected, S::Disconnected, "consumer_rej"},
                 {S::ActiveConnectionPending, E::NonPeerRejected, S::Disconnected, "no_listener_rej"},
                 {S::ActiveConnectionPending, E::Unreachable, S::Disconnected, "unreachable"},
                 {S::ActiveConnectionPending, E::Timeout, S::Unconnected, "timer_cancel"},
                 {S::Connected, E::Disconnect, S::DisconnectPending, "dreq"},
                 {S::Connected, E::Disconnected, S::Disconnected, "peer_dreq"},
                 {S::Connected, E::Broken, S::Disconnected, "broken"},
                 {S::DisconnectPending, E::Disconnected, S::Disconnected, "drep"},
                 {S::Unconnected, E::FlushRecvs, S::Unconnected, "qp_error"},
                 {S::Unconnected, E::Reset, S::Unconnected, "new_qp"},
                 {S::Disconnected, E::Reset, S::Unconnected, "new_qp"}});
  return type;
}

void ep_fire(Ep& ep, EpEvent e, const char* cause) {
  ep.fsm.fire(e, cause);
  ep.param.ep_state = dat_state(ep);
}

DAT_EP_ATTR ep_default_attr() {
  DAT_EP_ATTR a{};
  a.service_type = DAT_SERVICE_TYPE_RC;
  a.max_mtu_size = a.max_rdma_size = 0x80000000u;
  a.qos = DAT_QOS_BEST_EFFORT;
  a.max_recv_dtos = a.max_request_dtos = 16;
  a.max_recv_iov = a.max_request_iov = 4;
  a.max_rdma_read_in = a.max_rdma_read_out = 4;
  return a;
}

namespace {

bool attr_ok(const DAT_EP_ATTR& a) {
  return a.service_type == DAT_SERVICE_TYPE_RC && a.max_recv_dtos >= 1 && a.max_recv_dtos <= 4096 &&
         a.max_request_dtos >= 1 && a.max_request_dtos <= 4096 && a.max_recv_iov >= 1 && a.max_recv_iov <= 8 &&
         a.max_request_iov >= 1 && a.max_request_iov <= 8 && a.max_rdma_read_in >= 0 && a.max_rdma_read_in <= 4 &&
         a.max_rdma_read_out >= 0 && a.max_rdma_read_out <= 4;
}

void retarget(Evd*& slot, Evd* to) {
  if (slot) --slot->refs;
  slot = to;
  if (slot) ++slot->refs;
}

void set_pz(Ep& ep, Pz* pz) {
  if (ep.pz) --ep.pz->refs;
  ep.pz = pz;
  if (pz) ++pz->refs;
  ep.param.pz_handle = to_handle(pz);
}

void bind_evds(Ep& ep, Evd* recv, Evd* request, Evd* connect) {
  retarget(ep.recv_evd, recv);
  retarget(ep.request_evd, request);
  retarget(ep.connect_evd, connect);
  ep.param.recv_evd_handle = to_handle(recv);
  ep.param.request_evd_handle = to_handle(request);
  ep.param.connect_evd_handle = to_handle(connect);
}

// An EVD handle argument: NULL, or an EVD with `flag`.
bool evd_arg(Node& n, DAT_EVD_HANDLE h, int flag, Evd*& out) {
  out = nullptr;
  if (h == DAT_HANDLE_NULL) return true;
  out = n.find_as<Evd>(h, Kind::Evd);
  return out && (out->flags & flag);
}

int to_init(Ep& ep) {
  kib::ib_qp_attr a{};
  a.qp_state = kib::IB_QPS_INIT;
  a.pkey_index = 0;
  a.port_num = static_cast<kib::u8>(ep.ia->port);
  a.qp_access_flags = kib::IB_ACCESS_LOCAL_WRITE | kib::IB_ACCESS_REMOTE_WRITE | kib::IB_ACCESS_REMOTE_READ;
  return kib::ib_modify_qp(ep.qp, &a,
                           kib::IB_QP_STATE | kib::IB_QP_PKEY_INDEX | kib::IB_QP_PORT | kib::IB_QP_ACCESS_FLAGS);
}

}  // namespace

void ep_detach_qp(Node& n, Ep& ep) {
  if (!ep.qp) return;
  // Completions already in the CQs belong to this QP's work: take them first.
  if (ep.request_evd && ep.request_evd->cq) evd_drain_cq(n, *ep.request_evd);
  if (ep.recv_evd && ep.recv_evd->cq && ep.recv_evd != ep.request_evd) evd_drain_cq(n, *ep.recv_evd);
  kib::ib_destroy_qp(ep.qp);
  ep.qp = nullptr;
  ep.qp_failed = false;
  --n.counters_mut().qps;
  ep_flush_cookies(ep);
}

DAT_RETURN ep_attach_qp(Node& n, Ep& ep) {
  ep_detach_qp(n, ep);
  if (!ep.pz) return DAT_SUCCESS;  // UNATTACHED
  if (!ep.recv_evd || !ep.recv_evd->cq) return err(DAT_INVALID_STATE, DAT_INVALID_STATE_EP_EVD_RECV);
  if (!ep.request_evd || !ep.request_evd->cq) return err(DAT_INVALID_STATE, DAT_INVALID_STATE_EP_EVD_REQUEST);
  const DAT_EP_ATTR& a = ep.param.ep_attr;
  kib::ib_qp_init_attr ia{};
  ia.send_cq = ep.request_evd->cq;
  ia.recv_cq = ep.recv_evd->cq;
  ia.cap.max_send_wr = static_cast<kib::u32>(a.max_request_dtos);
  ia.cap.max_recv_wr = static_cast<kib::u32>(a.max_recv_dtos);
  ia.cap.max_send_sge = static_cast<kib::u32>(a.max_request_iov);
  ia.cap.max_recv_sge = static_cast<kib::u32>(a.max_recv_iov);
  ia.sq_sig_type = kib::IB_SIGNAL_REQ_WR;
  ia.qp_type = kib::IB_QPT_RC;
  ep.qp = kib::ib_create_qp(ep.pz->pd, &ia);
  if (!ep.qp) return err(DAT_INSUFFICIENT_RESOURCES, DAT_RESOURCE_TEP);
  ++n.counters_mut().qps;
  if (to_init(ep)) {
    ep_detach_qp(n, ep);
    return err(DAT_INTERNAL_ERROR);
  }
  return DAT_SUCCESS;
}

DAT_RETURN ep_free_all(Node& n, Ep& ep) {
  ep_abort_connection(n, ep);
  n.cancel_timer(ep);
  ep_detach_qp(n, ep);
  set_pz(ep, nullptr);
  bind_evds(ep, nullptr, nullptr, nullptr);
  if (ep.cr) ep.cr->ep = nullptr;
  --n.counters_mut().eps;
  n.remove(&ep);
  return DAT_SUCCESS;
}

}  // namespace nicsim::dapl

using namespace nicsim;
using namespace nicsim::dapl;

namespace {

DAT_RETURN modify_checks(Node& n, Ep& ep, DAT_EP_PARAM_MASK mask, const DAT_EP_PARAM* p, Pz*& pz, Evd* evds[3]) {
  constexpr int kFixed = DAT_EP_FIELD_IA_HANDLE | DAT_EP_FIELD_EP_STATE | DAT_EP_FIELD_LOCAL_IA_ADDRESS_PTR |
                         DAT_EP_FIELD_LOCAL_PORT_QUAL | DAT_EP_FIELD_REMOTE_IA_ADDRESS_PTR |
                         DAT_EP_FIELD_REMOTE_PORT_QUAL;
  if (!p || (mask & kFixed) || (mask & ~DAT_EP_FIELD_ALL)) return bad_arg(3);
  const EpState s = ep.fsm.state();
  if (s != EpState::Unconnected && s != EpState::PassiveConnectionPending && s != EpState::Reserved)
    return bad_ep_state(ep);
  pz = ep.pz;
  if ((mask & DAT_EP_FIELD_PZ_HANDLE) && p->pz_handle != DAT_HANDLE_NULL &&
      !(pz = n.find_as<Pz>(p->pz_handle, Kind::Pz)))
    return bad_handle(DAT_INVALID_HANDLE_PZ);
  if ((mask & DAT_EP_FIELD_PZ_HANDLE) && p->pz_handle == DAT_HANDLE_NULL) pz = nullptr;
  evds[0] = ep.recv_evd, evds[1] = ep.request_evd, evds[2] = ep.connect_evd;
  if ((mask & DAT_EP_FIELD_RECV_EVD_HANDLE) && !evd_arg(n, p->recv_evd_handle, DAT_EVD_DTO_FLAG, evds[0]))
    return bad_handle(DAT_INVALID_HANDLE_EVD_RECV);
  if ((mask & DAT_EP_FIELD_REQUEST_EVD_HANDLE) && !evd_arg(n, p->request_evd_handle, DAT_EVD_DTO_FLAG, evds[1]))
    return bad_handle(DAT_INVALID_HANDLE_EVD_REQUEST);
  if ((mask & DAT_EP_FIELD_CONNECT_EVD_HANDLE) && !evd_arg(n, p->connect_evd_handle, DAT_EVD_CONNECTION_FLAG, evds[2]))
    return bad_handle(DAT_INVALID_HANDLE_EVD_CONN);
  return DAT_SUCCESS;
}

}  // namespace

extern "C" {

DAT_RETURN dat_ep_create(DAT_IA_HANDLE ia_handle, DAT_PZ_HANDLE pz_handle, DAT_EVD_HANDLE recv_evd_handle,
                         DAT_EVD_HANDLE request_evd_handle, DAT_EVD_HANDLE connect_evd_handle,
                         const DAT_EP_ATTR* ep_attributes, DAT_EP_HANDLE* ep_handle) {
  NICSIM_API_CALL();
  Node* n = Node::current();
  Ia* ia = n ? n->find_as<Ia>(ia_handle, Kind::Ia) : nullptr;
  if (!ia) return bad_handle(DAT_INVALID_HANDLE_IA);
  Pin pin(*n, *ia);
  charge_call(*n);
  if (ia->dead) return bad_handle(DAT_INVALID_HANDLE_IA);  // freed by another thread meanwhile
  Pz* pz = nullptr;
  Evd *recv = nullptr, *request = nullptr, *connect = nullptr;
  if (pz_handle != DAT_HANDLE_NULL && !(pz = n->find_as<Pz>(pz_handle, Kind::Pz)))
    return bad_handle(DAT_INVALID_HANDLE_PZ);
  if (!evd_arg(*n, recv_evd_handle, DAT_EVD_DTO_FLAG, recv)) return bad_handle(DAT_INVALID_HANDLE_EVD_RECV);
  if (!evd_arg(*n, request_evd_handle, DAT_EVD_DTO_FLAG, request)) return bad_handle(DAT_INVALID_HANDLE_EVD_REQUEST);
  if (!evd_arg(*n, connect_evd_handle, DAT_EVD_CONNECTION_FLAG, connect))
    return bad_handle(DAT_INVALID_HANDLE_EVD_CONN);
  const DAT_EP_ATTR attr = ep_attributes ? *ep_attributes : ep_default_attr();
  if (!attr_ok(attr)) return bad_arg(6);
  if (!ep_handle) return bad_arg(7);
  Ep* ep = n->add(std::make_unique<Ep>(ia, n->host().node_id(), n->new_ep_name()));
  ++n->counters_mut().eps;
  ep->param.ia_handle = ia_handle;
  ep->param.ep_attr = attr;
  ep->local_addr = ia->addr;
  ep->param.local_ia_address_ptr = reinterpret_cast<DAT_IA_ADDRESS_PTR>(&ep->local_addr);
  set_pz(*ep, pz);
  bind_evds(*ep, recv, request, connect);
  if (DAT_RETURN rc = ep_attach_qp(*n, *ep)) {
    ep_free_all(*n, *ep);
    return rc;
  }
  *ep_handle = to_handle(ep);
  return DAT_SUCCESS;
}

DAT_RETURN dat_ep_query(DAT_EP_HANDLE ep_handle, DAT_EP_PARAM_MASK, DAT_EP_PARAM* ep_param) {
  NICSIM_API_CALL();
  Node* n = Node::current();
  Ep* ep = n ? n->find_as<Ep>(ep_handle, Kind::Ep) : nullptr;
  if (!ep) return bad_handle(DAT_INVALID_HANDLE_EP);
  if (!ep_param) return bad_arg(3);
  Pin pin(*n, *ep);
  charge_call(*n);
  if (ep->dead) return bad_handle(DAT_INVALID_HANDLE_EP);  // freed by another thread meanwhile
  ep->param.ep_state = dat_state(*ep);
  const bool connected = ep->fsm.state() == EpState::Connected || ep->fsm.state() == EpState::DisconnectPending;
  ep->param.remote_ia_address_ptr = connected ? reinterpret_cast<DAT_IA_ADDRESS_PTR>(&ep->remote_addr) : nullptr;
  *ep_param = ep->param;
  return DAT_SUCCESS;
}

DAT_RETURN dat_ep_modify(DAT_EP_HANDLE ep_handle, DAT_EP_PARAM_MASK ep_param_mask, const DAT_EP_PARAM* ep_param) {
  NICSIM_API_CALL();
  Node* n = Node::current();
  Ep* ep = n ? n->find_as<Ep>(ep_handle, Kind::Ep) : nullptr;
  if (!ep) return bad_handle(DAT_INVALID_HANDLE_EP);
  Pin pin(*n, *ep);
  charge_call(*n);
  if (ep->dead) return bad_handle(DAT_INVALID_HANDLE_EP);  // freed by another thread meanwhile
  Pz* pz = nullptr;
  Evd* evds[3] = {nullptr, nullptr, nullptr};
  if (DAT_RETURN rc = modify_checks(*n, *ep, ep_param_mask, ep_param, pz, evds)) return rc;
  DAT_EP_ATTR attr = ep->param.ep_attr;
  if (ep_param_mask & DAT_EP_FIELD_EP_ATTR_ALL) {
    const DAT_EP_ATTR& in = ep_param->ep_attr;
    if (ep_param_mask & DAT_EP_FIELD_EP_ATTR_SERVICE_TYPE) attr.service_type = in.service_type;
    if (ep_param_mask & DAT_EP_FIELD_EP_ATTR_MAX_MESSAGE_SIZE) attr.max_mtu_size = in.max_mtu_size;
    if (ep_param_mask & DAT_EP_FIELD_EP_ATTR_MAX_RDMA_SIZE) attr.max_rdma_size = in.max_rdma_size;
    if (ep_param_mask & DAT_EP_FIELD_EP_ATTR_QOS) attr.qos = in.qos;
    if (ep_param_mask & DAT_EP_FIELD_EP_ATTR_RECV_COMPLETION_FLAGS)
      attr.recv_completion_flags = in.recv_completion_flags;
    if (ep_param_mask & DAT_EP_FIELD_EP_ATTR_REQUEST_COMPLETION_FLAGS)
      attr.request_completion_flags = in.request_completion_flags;
    if (ep_param_mask & DAT_EP_FIELD_EP_ATTR_MAX_RECV_DTOS) attr.max_recv_dtos = in.max_recv_dtos;
    if (ep_param_mask & DAT_EP_FIELD_EP_ATTR_MAX_REQUEST_DTOS) attr.max_request_dtos = in.max_request_dtos;
    if (ep_param_mask & DAT_EP_FIELD_EP_ATTR_MAX_RECV_IOV) attr.max_recv_iov = in.max_recv_iov;
    if (ep_param_mask & DAT_EP_FIELD_EP_ATTR_MAX_REQUEST_IOV) attr.max_request_iov = in.max_request_iov;
    if (ep_param_mask & DAT_EP_FIELD_EP_ATTR_MAX_RDMA_READ_IN) attr.max_rdma_read_in = in.max_rdma_read_in;
    if (ep_param_mask & DAT_EP_FIELD_EP_ATTR_MAX_RDMA_READ_OUT) attr.max_rdma_read_out = in.max_rdma_read_out;
    if (!attr_ok(attr)) return bad_arg(3);
  }
  // Only what changed goes to the provider: a new QP when its PD, CQs or sizes change.
  const bool new_qp = pz != ep->pz || evds[0] != ep->recv_evd || evds[1] != ep->request_evd ||
                      std::memcmp(&attr, &ep->param.ep_attr, sizeof attr) != 0 || (pz && !ep->qp);
  ep->param.ep_attr = attr;
  set_pz(*ep, pz);
  bind_evds(*ep, evds[0], evds[1], evds[2]);
  return new_qp ? ep_attach_qp(*n, *ep) : static_cast<DAT_RETURN>(DAT_SUCCESS);
}

DAT_RETURN dat_ep_get_status(DAT_EP_HANDLE ep_handle, DAT_EP_STATE* ep_state, DAT_BOOLEAN* recv_idle,
                             DAT_BOOLEAN* request_idle) {
  NICSIM_API_CALL();
  Node* n = Node::current();
  Ep* ep = n ? n->find_as<Ep>(ep_handle, Kind::Ep) : nullptr;
  if (!ep) return bad_handle(DAT_INVALID_HANDLE_EP);
  if (ep_state) *ep_state = dat_state(*ep);
  if (recv_idle) *recv_idle = ep->recvs.empty() ? DAT_TRUE : DAT_FALSE;
  if (request_idle) *request_idle = ep->requests.empty() ? DAT_TRUE : DAT_FALSE;
  return DAT_SUCCESS;
}

DAT_RETURN dat_ep_reset(DAT_EP_HANDLE ep_handle) {
  NICSIM_API_CALL();
  Node* n = Node::current();
  Ep* ep = n ? n->find_as<Ep>(ep_handle, Kind::Ep) : nullptr;
  if (!ep) return bad_handle(DAT_INVALID_HANDLE_EP);
  Pin pin(*n, *ep);
  charge_call(*n);
  if (ep->dead) return bad_handle(DAT_INVALID_HANDLE_EP);  // freed by another thread meanwhile
  if (!ep->fsm.handles(EpEvent::Reset)) return bad_ep_state(*ep);
  ep_fire(*ep, EpEvent::Reset, "dat_ep_reset");
  ep->cma_id = 0;
  ep->event_private.clear();
  return ep_attach_qp(*n, *ep);
}

DAT_RETURN dat_ep_free(DAT_EP_HANDLE ep_handle) {
  NICSIM_API_CALL();
  Node* n = Node::current();
  Ep* ep = n ? n->find_as<Ep>(ep_handle, Kind::Ep) : nullptr;
  if (!ep) return bad_handle(DAT_INVALID_HANDLE_EP);
  Pin pin(*n, *ep);
  charge_call(*n);
  if (ep->dead) return bad_handle(DAT_INVALID_HANDLE_EP);              // freed by another thread meanwhile
  if (ep->fsm.state() == EpState::Reserved) return bad_ep_state(*ep);  // its RSP holds it
  return ep_free_all(*n, *ep);
}

}  // extern "C"
