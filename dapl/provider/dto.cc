// Data transfer operations: each post is one kernel verbs work request
// whose wr_id names the EP (its handle's serial) and the DTO (a sequence
// number, with the receive bit); completions become DAT_DTO_COMPLETION
// events carrying the consumer's cookie. Unsignalled requests complete
// silently when a later request of the same EP completes (RC order).
#include <cerrno>
#include <cstring>
#include <vector>

#include "dapl/provider/dapl.h"
#include "dapl/provider/kib.h"
#include "host/host.h"

namespace nicsim::dapl {
namespace {

constexpr std::uint32_t kRecvBit = 0x80000000u;

std::uint64_t wr_id_of(const Ep& ep, std::uint32_t seq) {
  return (static_cast<std::uint64_t>(ep.handle & 0xffffffffu) << 32) | seq;
}

DAT_DTO_COMPLETION_STATUS status_of(kib::ib_wc_status s) {
  switch (s) {
    case kib::IB_WC_SUCCESS:
      return DAT_DTO_SUCCESS;
    case kib::IB_WC_WR_FLUSH_ERR:
      return DAT_DTO_ERR_FLUSHED;
    case kib::IB_WC_LOC_LEN_ERR:
      return DAT_DTO_ERR_LOCAL_LENGTH;
    case kib::IB_WC_LOC_QP_OP_ERR:
      return DAT_DTO_ERR_LOCAL_EP;
    case kib::IB_WC_LOC_PROT_ERR:
    case kib::IB_WC_LOC_ACCESS_ERR:
      return DAT_DTO_ERR_LOCAL_PROTECTION;
    case kib::IB_WC_BAD_RESP_ERR:
      return DAT_DTO_ERR_BAD_RESPONSE;
    case kib::IB_WC_REM_ACCESS_ERR:
      return DAT_DTO_ERR_REMOTE_ACCESS;
    case kib::IB_WC_REM_INV_REQ_ERR:
    case kib::IB_WC_REM_OP_ERR:
      return DAT_DTO_ERR_REMOTE_RESPONDER;
    case kib::IB_WC_RETRY_EXC_ERR:
      return DAT_DTO_ERR_TRANSPORT;
    case kib::IB_WC_RNR_RETRY_EXC_ERR:
      return DAT_DTO_ERR_RECEIVER_NOT_READY;
    case kib::IB_WC_MW_BIND_ERR:
      return DAT_RMR_OPERATION_FAILED;
    default:
      return DAT_DTO_ERR_TRANSPORT;
  }
}

void post_dto_event(Evd& evd, Ep& ep, const Cookie& c, DAT_DTO_COMPLETION_STATUS st, DAT_VLEN len, bool arrival) {
  DAT_EVENT ev{};
  if (c.rmr) {
    ev.event_number = DAT_RMR_BIND_COMPLETION_EVENT;
    ev.event_data.rmr_completion_event_data.rmr_handle =
        reinterpret_cast<DAT_RMR_HANDLE>(static_cast<std::uintptr_t>(c.rmr));
    ev.event_data.rmr_completion_event_data.user_cookie = c.user;
    ev.event_data.rmr_completion_event_data.status = st;
    return evd_post(evd, ev, arrival);
  }
  ev.event_number = DAT_DTO_COMPLETION_EVENT;
  ev.event_data.dto_completion_event_data.ep_handle = to_handle(&ep);
  ev.event_data.dto_completion_event_data.user_cookie = c.user;
  ev.event_data.dto_completion_event_data.status = st;
  ev.event_data.dto_completion_event_data.transfered_length = len;
  evd_post(evd, ev, arrival);
}

// One work completion into the EVD's queue.
void complete(Node& n, Evd& evd, const kib::ib_wc& wc) {
  Ep* ep = n.ep_of_serial(static_cast<std::uint32_t>(wc.wr_id >> 32));
  if (!ep) return;  // its EP is gone
  const auto seq = static_cast<std::uint32_t>(wc.wr_id);
  const DAT_DTO_COMPLETION_STATUS st = status_of(wc.status);
  std::deque<Cookie>& q = (seq & kRecvBit) ? ep->recvs : ep->requests;
  while (!q.empty() && q.front().seq != seq) q.pop_front();  // earlier unsignalled requests: done
  if (q.empty()) return;
  const Cookie c = q.front();
  q.pop_front();
  if (c.signalled || st != DAT_DTO_SUCCESS)
    post_dto_event(evd, *ep, c, st, (seq & kRecvBit) ? wc.byte_len : (st == DAT_DTO_SUCCESS ? c.length : 0), false);
  if (ep->graceful_pending && ep->requests.empty()) ep_try_graceful_disconnect(*ep);
}

// Checks a local IOV against the LMRs (context, bounds, the EP's PZ).
DAT_RETURN check_iov(Node& n, const Ep& ep, DAT_COUNT num, const DAT_LMR_TRIPLET* iov, int max_iov,
                     std::vector<kib::ib_sge>& sges, DAT_VLEN& total) {
  if (num < 0 || num > max_iov) return bad_arg(2);
  if (num > 0 && !iov) return bad_arg(3);
  total = 0;
  sges.resize(static_cast<std::size_t>(num));
  for (int i = 0; i < num; ++i) {
    auto it = n.lmrs_by_context.find(iov[i].lmr_context);
    if (it == n.lmrs_by_context.end()) return err(DAT_PROTECTION_VIOLATION, DAT_PROTECTION_READ);
    const Lmr& lmr = *it->second;
    if (lmr.pz != ep.pz) return err(DAT_PROTECTION_VIOLATION, DAT_PROTECTION_READ);
    const DAT_VADDR start = lmr.param.registered_address;
    if (iov[i].virtual_address < start || iov[i].segment_length > lmr.param.registered_size ||
        iov[i].virtual_address - start > lmr.param.registered_size - iov[i].segment_length)
      return err(DAT_LENGTH_ERROR);
    sges[static_cast<std::size_t>(i)] = {iov[i].virtual_address, static_cast<kib::u32>(iov[i].segment_length),
                                         iov[i].lmr_context};
    total += iov[i].segment_length;
  }
  return DAT_SUCCESS;
}

DAT_RETURN post_request(Ep* ep, DAT_COUNT num, DAT_LMR_TRIPLET* iov, DAT_DTO_COOKIE cookie,
                        const DAT_RMR_TRIPLET* remote, DAT_COMPLETION_FLAGS flags, kib::ib_wr_opcode op) {
  Node* n = Node::current();
  if (!ep) return bad_handle(DAT_INVALID_HANDLE_EP);
  Pin pin(*n, *ep);
  charge_call(*n);
  if (ep->dead) return bad_handle(DAT_INVALID_HANDLE_EP);  // freed meanwhile
  if (ep->fsm.state() != EpState::Connected || ep->graceful_pending) return bad_ep_state(*ep);
  std::vector<kib::ib_sge> sges;
  DAT_VLEN total = 0;
  if (DAT_RETURN rc = check_iov(*n, *ep, num, iov, ep->param.ep_attr.max_request_iov, sges, total)) return rc;
  const bool rdma = op != kib::IB_WR_SEND;
  if (rdma && !remote) return bad_arg(5);
  if (total > (rdma ? ep->param.ep_attr.max_rdma_size : ep->param.ep_attr.max_mtu_size)) return err(DAT_LENGTH_ERROR);
  if (rdma && remote->segment_length < total) return err(DAT_LENGTH_ERROR);
  if (static_cast<int>(ep->requests.size()) >= ep->param.ep_attr.max_request_dtos)
    return err(DAT_INSUFFICIENT_RESOURCES, DAT_RESOURCE_TEP);
  Cookie c;
  c.seq = ep->next_seq++ & ~kRecvBit;
  c.user = cookie;
  c.length = total;
  c.signalled = !(flags & DAT_COMPLETION_SUPPRESS_FLAG);
  kib::ib_send_wr wr{};
  wr.wr_id = wr_id_of(*ep, c.seq);
  wr.sg_list = sges.empty() ? nullptr : sges.data();
  wr.num_sge = num;
  wr.opcode = op;
  wr.send_flags = (c.signalled ? kib::IB_SEND_SIGNALED : 0) |
                  ((flags & DAT_COMPLETION_SOLICITED_WAIT_FLAG) ? kib::IB_SEND_SOLICITED : 0) |
                  ((flags & DAT_COMPLETION_BARRIER_FENCE_FLAG) ? kib::IB_SEND_FENCE : 0);
  if (rdma) {
    wr.wr.rdma.remote_addr = remote->target_address;
    wr.wr.rdma.rkey = remote->rmr_context;
  }
  kib::ib_send_wr* bad = nullptr;
  if (kib::ib_post_send(ep->qp, &wr, &bad)) return err(DAT_INSUFFICIENT_RESOURCES, DAT_RESOURCE_TEP);
  ep->requests.push_back(c);
  return DAT_SUCCESS;
}

}  // namespace

void evd_drain_cq(Node& n, Evd& evd) {
  kib::ib_wc wc[16];
  while (static_cast<int>(evd.queue.size()) < evd.qlen) {
    const int room = evd.qlen - static_cast<int>(evd.queue.size());
    const int got = kib::ib_poll_cq(evd.cq, room < 16 ? room : 16, wc);
    if (got <= 0) break;
    for (int i = 0; i < got; ++i) complete(n, evd, wc[i]);
  }
}

DAT_RETURN ep_post_bind(Node& n, Ep& ep, Rmr& rmr, kib::ib_mw_bind& bind, DAT_RMR_COOKIE cookie, bool signalled) {
  if (static_cast<int>(ep.requests.size()) >= ep.param.ep_attr.max_request_dtos)
    return err(DAT_INSUFFICIENT_RESOURCES, DAT_RESOURCE_TEP);
  Cookie c;
  c.seq = ep.next_seq++ & ~kRecvBit;
  c.user = cookie;
  c.signalled = signalled;
  c.rmr = rmr.handle;
  bind.wr_id = wr_id_of(ep, c.seq);
  bind.send_flags = signalled ? kib::IB_SEND_SIGNALED : 0;
  const int rc = kib::ib_bind_mw(ep.qp, rmr.mw, &bind);
  (void)n;
  if (rc == -EACCES) return err(DAT_PRIVILEGES_VIOLATION);
  if (rc) return err(DAT_PROTECTION_VIOLATION);
  ep.requests.push_back(c);
  return DAT_SUCCESS;
}

void ep_flush_cookies(Ep& ep) {
  for (const Cookie& c : ep.requests)
    if (ep.request_evd) post_dto_event(*ep.request_evd, ep, c, DAT_DTO_ERR_FLUSHED, 0, true);
  for (const Cookie& c : ep.recvs)
    if (ep.recv_evd) post_dto_event(*ep.recv_evd, ep, c, DAT_DTO_ERR_FLUSHED, 0, true);
  ep.requests.clear();
  ep.recvs.clear();
}

}  // namespace nicsim::dapl

using namespace nicsim;
using namespace nicsim::dapl;

extern "C" {

DAT_RETURN dat_ep_post_send(DAT_EP_HANDLE ep_handle, DAT_COUNT num_segments, DAT_LMR_TRIPLET* local_iov,
                            DAT_DTO_COOKIE user_cookie, DAT_COMPLETION_FLAGS completion_flags) {
  NICSIM_API_CALL();
  Node* n = Node::current();
  return post_request(n ? n->find_as<Ep>(ep_handle, Kind::Ep) : nullptr, num_segments, local_iov, user_cookie, nullptr,
                      completion_flags, kib::IB_WR_SEND);
}

DAT_RETURN dat_ep_post_rdma_read(DAT_EP_HANDLE ep_handle, DAT_COUNT num_segments, DAT_LMR_TRIPLET* local_iov,
                                 DAT_DTO_COOKIE user_cookie, const DAT_RMR_TRIPLET* remote_iov,
                                 DAT_COMPLETION_FLAGS completion_flags) {
  NICSIM_API_CALL();
  Node* n = Node::current();
  return post_request(n ? n->find_as<Ep>(ep_handle, Kind::Ep) : nullptr, num_segments, local_iov, user_cookie,
                      remote_iov, completion_flags, kib::IB_WR_RDMA_READ);
}

DAT_RETURN dat_ep_post_rdma_write(DAT_EP_HANDLE ep_handle, DAT_COUNT num_segments, DAT_LMR_TRIPLET* local_iov,
                                  DAT_DTO_COOKIE user_cookie, const DAT_RMR_TRIPLET* remote_iov,
                                  DAT_COMPLETION_FLAGS completion_flags) {
  NICSIM_API_CALL();
  Node* n = Node::current();
  return post_request(n ? n->find_as<Ep>(ep_handle, Kind::Ep) : nullptr, num_segments, local_iov, user_cookie,
                      remote_iov, completion_flags, kib::IB_WR_RDMA_WRITE);
}

DAT_RETURN dat_ep_post_recv(DAT_EP_HANDLE ep_handle, DAT_COUNT num_segments, DAT_LMR_TRIPLET* local_iov,
                            DAT_DTO_COOKIE user_cookie, DAT_COMPLETION_FLAGS) {
  NICSIM_API_CALL();
  Node* n = Node::current();
  Ep* ep = n ? n->find_as<Ep>(ep_handle, Kind::Ep) : nullptr;
  if (!ep) return bad_handle(DAT_INVALID_HANDLE_EP);
  Pin pin(*n, *ep);
  charge_call(*n);
  if (ep->dead) return bad_handle(DAT_INVALID_HANDLE_EP);                     // freed meanwhile
  if (!ep->qp) return err(DAT_INVALID_STATE, DAT_INVALID_STATE_EP_NOTREADY);  // UNATTACHED: no PZ yet
  if (ep->fsm.state() == EpState::Disconnected || ep->fsm.state() == EpState::DisconnectPending)
    return bad_ep_state(*ep);
  if (ep->qp_failed) ep_attach_qp(*n, *ep);  // flushed by a disconnect while unconnected: a fresh QP
  std::vector<kib::ib_sge> sges;
  DAT_VLEN total = 0;
  if (DAT_RETURN rc = check_iov(*n, *ep, num_segments, local_iov, ep->param.ep_attr.max_recv_iov, sges, total))
    return rc;
  if (static_cast<int>(ep->recvs.size()) >= ep->param.ep_attr.max_recv_dtos)
    return err(DAT_INSUFFICIENT_RESOURCES, DAT_RESOURCE_TEP);
  Cookie c;
  c.seq = (ep->next_seq++ & ~kRecvBit) | kRecvBit;
  c.user = user_cookie;
  c.length = total;
  kib::ib_recv_wr wr{};
  wr.wr_id = wr_id_of(*ep, c.seq);
  wr.sg_list = sges.empty() ? nullptr : sges.data();
  wr.num_sge = num_segments;
  kib::ib_recv_wr* bad = nullptr;
  if (kib::ib_post_recv(ep->qp, &wr, &bad)) return err(DAT_INSUFFICIENT_RESOURCES, DAT_RESOURCE_TEP);
  ep->recvs.push_back(c);
  return DAT_SUCCESS;
}

}  // extern "C"
