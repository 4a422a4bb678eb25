// The CM protocol, continued: the messages arriving (REQ, MRA, REJ, REP,
// RTU, DREQ, DREP), the passive side's accept and reject, disconnection,
// timewait and the connection timer (retries, MRA, timeouts).
#include <rdma/ib_verbs.h>

#include <cstring>

#include "cm/core/cm_messages.h"
#include "cm/core/cm_steps.h"
#include "core/sim.h"

namespace nicsim::cm {

using namespace mad;
using namespace mad::cm;

Conn* CmNode::by_remote(std::uint32_t remote_id, std::uint64_t remote_guid) {
  for (auto& [h, c] : conns_)
    if (!c->active && c->remote_id == remote_id && c->remote_guid == remote_guid) return c.get();
  return nullptr;
}

void CmNode::enter_timewait(Conn& c) {
  const Tick tw = host_.params().time("cm.timewait");
  timewait_qpns_[c.local_qpn] = now() + tw;
  for (auto it = timewait_qpns_.begin(); it != timewait_qpns_.end();)
    it = it->second <= now() ? timewait_qpns_.erase(it) : std::next(it);
  counters_.timewait = static_cast<std::uint32_t>(timewait_qpns_.size());
  c.timer->start(tw);
}

namespace {

// A REJ for a REQ nobody holds state for (no listener): the REQ's sender
// gets its comm ID back.
void stateless_rej(CmNode& n, const std::uint8_t* req_mad, const MadSource& from, std::uint16_t reason) {
  Conn tmp(0, 0, 0);
  tmp.remote_id = static_cast<std::uint32_t>(get(req_mad + kLocalCommId, 4));
  std::uint8_t m[kBytes];
  build_rej(m, get(req_mad + kTid, 8), tmp, rej::kReqMsg, reason, nullptr, 0);
  n.send_mad(from.slid, m);
}

void on_req(CmNode& n, const std::uint8_t* m, const MadSource& from) {
  const auto remote_id = static_cast<std::uint32_t>(get(m + kLocalCommId, 4));
  if (Conn* dup = n.by_remote(remote_id, get(m + req::kLocalCaGuid, 8))) {
    // A resent REQ: the consumer is slow (MRA), or our REP was lost.
    if (dup->fsm.state() == CmState::ReqRcvd) {
      build_mra(dup->last.data(), dup->tid, *dup, exponent_for(n.host().params().time("cm.service_timeout")));
      dup->fsm.fire(CmEvent::SendMra, "duplicate_req");
      ++n.mutable_counters().mras_sent;
    }
    if (in(*dup, {CmState::MraSent, CmState::RepSent})) send_last(n, *dup);
    return;
  }
  Conn* l = n.listener_for(get(m + req::kServiceId, 8));
  if (!l) return stateless_rej(n, m, from, rej::kInvalidServiceId);
  // Path MTU codes 1-5 (256-4096 bytes); the others are reserved.
  if (const unsigned mtu = m[req::kB1] >> 4; mtu < 1 || mtu > 5) return stateless_rej(n, m, from, rej::kInvalidPathMtu);
  Conn* c = n.new_conn();
  parse_req(m, *c);
  c->tid = get(m + kTid, 8);
  c->listener = l;
  c->access = IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_READ | IB_ACCESS_REMOTE_ATOMIC;
  c->fsm.fire(CmEvent::RecvReq, "req");
  c->timer->start(n.host().params().time("cm.mra_after"));
  // The listener's owner makes the new id (Upcall::Request carries the
  // handle in the first 8 bytes, then the REQ's private data).
  std::uint8_t buf[8 + req::kPrivateBytes];
  put(buf, 8, c->handle);
  std::memcpy(buf + 8, c->req_private.data(), req::kPrivateBytes);
  deliver(n, *l, Upcall::Request, buf, sizeof buf);
}

void on_rep(CmNode& n, Conn& c, const std::uint8_t* m) {
  if (c.fsm.state() == CmState::Established) return send_last(n, c);  // our RTU was lost
  if (!c.active || !in(c, {CmState::ReqSent, CmState::MraRcvd})) return;
  c.timer->cancel();
  ++c.mads;
  parse_rep(m, c);
  c.fsm.fire(CmEvent::RecvRep, "rep");
  std::uint8_t priv[rep::kPrivateBytes];
  std::memcpy(priv, m + rep::kPrivate, sizeof priv);
  if (!to_rtr(c) || !to_rts(c)) {
    build_rej(c.last.data(), c.tid, c, rej::kRepMsg, 3, nullptr, 0);
    send_last(n, c);
    return fail_active(n, c, CmEvent::Timeout, Upcall::Unreachable, nullptr, 0);
  }
  build_rtu(c.last.data(), c.tid, c);
  send_last(n, c);
  c.fsm.fire(CmEvent::SendRtu, "rtu");
  ConnectFigures& f = n.figures();
  f.qp_modify = c.qp_time;
  f.handshake = now() - c.t_req - c.qp_time;
  f.mad_cpu = c.mads * n.host().cost_of("cm_mad");
  deliver(n, c, Upcall::Established, priv, sizeof priv);
}

void on_rtu(CmNode& n, Conn& c) {
  if (c.fsm.state() != CmState::RepSent) return;
  c.timer->cancel();
  if (!to_rts(c)) return fail_active(n, c, CmEvent::Timeout, Upcall::Unreachable, nullptr, 0);
  c.fsm.fire(CmEvent::RecvRtu, "rtu");
  deliver(n, c, Upcall::Established, nullptr, 0);
}

void on_rej(CmNode& n, Conn& c, const std::uint8_t* m) {
  if (!c.fsm.handles(CmEvent::RecvRej)) return;
  if (c.active) return fail_active(n, c, CmEvent::RecvRej, Upcall::Rejected, m + rej::kPrivate, rej::kPrivateBytes);
  // The active side gave up: an accepted id hears it is unreachable.
  fail_active(n, c, CmEvent::RecvRej, Upcall::Unreachable, nullptr, 0);
}

void on_mra(CmNode& n, Conn& c, const std::uint8_t* m) {
  if (!c.fsm.handles(CmEvent::RecvMra)) return;
  c.fsm.fire(CmEvent::RecvMra, "mra");
  c.timer->start(timeout_of(static_cast<std::uint8_t>(m[mra::kTimeout] >> 3)) + lifetime(c));
  if (c.on_mra && c.consumer_valid) n.upcall(c.on_mra);
}

void send_drep(CmNode& n, Conn& c, std::uint64_t tid) {
  build_drep(c.last.data(), tid, c);
  send_last(n, c);
}

void on_dreq(CmNode& n, Conn& c, const std::uint8_t* m, const MadSource& from) {
  if (c.fsm.state() == CmState::Timewait) {
    c.fsm.fire(CmEvent::RecvDreq, "dreq_again");
    return send_drep(n, c, get(m + kTid, 8));
  }
  if (!in(c, {CmState::Established, CmState::DreqSent})) return;
  const bool ours_too = c.fsm.state() == CmState::DreqSent;
  c.fsm.fire(CmEvent::RecvDreq, "dreq");
  to_error(c);
  send_drep(n, c, get(m + kTid, 8));
  c.fsm.fire(CmEvent::SendDrep, "drep");
  n.enter_timewait(c);
  deliver(n, c, Upcall::Disconnected, ours_too ? nullptr : m + dreq::kPrivate, ours_too ? 0 : dreq::kPrivateBytes);
}

void on_drep(CmNode& n, Conn& c) {
  if (c.fsm.state() != CmState::DreqSent) return;
  c.fsm.fire(CmEvent::RecvDrep, "drep");
  n.enter_timewait(c);
  deliver(n, c, Upcall::Disconnected, nullptr, 0);
}

}  // namespace

void Protocol::on_mad(CmNode& n, const std::uint8_t* m, const MadSource& from) {
  if (m[kMethod] != kMethodSend) return;
  const auto attr = static_cast<std::uint16_t>(get(m + kAttrId, 2));
  if (attr == kReq) return on_req(n, m, from);
  Conn* c = n.by_comm_id(static_cast<std::uint32_t>(get(m + kRemoteCommId, 4)));
  if (!c) {
    if (attr == kDreq) {  // the connection is long gone: answer anyway
      Conn tmp(0, static_cast<std::uint32_t>(get(m + kRemoteCommId, 4)), 0);
      tmp.remote_id = static_cast<std::uint32_t>(get(m + kLocalCommId, 4));
      std::uint8_t r[kBytes];
      build_drep(r, get(m + kTid, 8), tmp);
      n.send_mad(from.slid, r);
    }
    return;
  }
  switch (attr) {
    case kRep:
      return on_rep(n, *c, m);
    case kRtu:
      return on_rtu(n, *c);
    case kRej:
      return on_rej(n, *c, m);
    case kMra:
      return on_mra(n, *c, m);
    case kDreq:
      return on_dreq(n, *c, m, from);
    case kDrep:
      return on_drep(n, *c);
    default:
      return;
  }
}

void Protocol::do_accept(CmNode& n, Conn& c) {
  if (!in(c, {CmState::ReqRcvd, CmState::MraSent})) return;
  if (const Tick tw = n.timewait_end(c.local_qpn); tw > now()) return c.timer->start(tw - now());
  c.t_qp = now();
  if (!to_init(c) || !to_rtr(c)) {
    build_rej(c.last.data(), c.tid, c, rej::kReqMsg, 1, nullptr, 0);  // no QP available
    send_last(n, c);
    return fail_active(n, c, CmEvent::SendRej, Upcall::Unreachable, nullptr, 0);
  }
  build_rep(c.last.data(), c.tid, c, n.ca_guid());
  c.sends = 0;
  c.fsm.fire(CmEvent::SendRep, "accept");
  send_last(n, c);
  c.timer->start(timeout_of(c.local_resp_to) + lifetime(c));
}

void Protocol::do_reject(CmNode& n, Conn& c, std::uint16_t reason, bool destroy) {
  if (!in(c, {CmState::ReqRcvd, CmState::MraSent})) return;
  build_rej(c.last.data(), c.tid, c, rej::kReqMsg, reason, c.rep_private.data(), c.rep_private.size());
  send_last(n, c);
  c.fsm.fire(CmEvent::SendRej, "reject");
  if (destroy) n.finish(&c);
}

void Protocol::do_disconnect(CmNode& n, Conn& c) {
  if (c.fsm.state() != CmState::Established) return;
  to_error(c);
  build_dreq(c.last.data(), n.next_tid(), c);
  c.sends = 0;
  c.fsm.fire(CmEvent::SendDreq, "disconnect");
  send_last(n, c);
  c.timer->start(timeout_of(c.active ? c.remote_resp_to : c.local_resp_to) + lifetime(c));
}

void Protocol::on_timer(CmNode& n, std::uint64_t handle) {
  Conn* p = n.conn(handle);
  if (!p) return;
  Conn& c = *p;
  switch (c.fsm.state()) {
    case CmState::Idle:  // a REQ waiting for its QPN's timewait
      if (c.active) send_req(n, c);
      return;
    case CmState::ReqRcvd:
      if (c.accept_pending) return Protocol::do_accept(n, c);
      build_mra(c.last.data(), c.tid, c, exponent_for(n.host().params().time("cm.service_timeout")));
      c.fsm.fire(CmEvent::SendMra, "consumer_slow");
      ++n.mutable_counters().mras_sent;
      return send_last(n, c);
    case CmState::MraSent:
      if (c.accept_pending) Protocol::do_accept(n, c);
      return;
    case CmState::ReqSent:
    case CmState::MraRcvd:
    case CmState::RepSent:
    case CmState::DreqSent:
      break;
    case CmState::Timewait:
      c.fsm.fire(CmEvent::TimewaitEnd, "timewait_over");
      return n.finish(&c);
    default:
      return;
  }
  if (c.sends <= c.max_retries) {
    c.fsm.fire(CmEvent::Retry, "timeout");
    ++n.mutable_counters().retries;
    send_last(n, c);
    const std::uint8_t e = c.fsm.state() == CmState::RepSent ? c.local_resp_to : c.remote_resp_to;
    return c.timer->start(timeout_of(e) + lifetime(c));
  }
  if (c.fsm.state() == CmState::DreqSent) {
    c.fsm.fire(CmEvent::Timeout, "no_drep");
    n.enter_timewait(c);
    return deliver(n, c, Upcall::Disconnected, nullptr, 0);
  }
  // The peer never answered: tell it we gave up, and our owner.
  build_rej(c.last.data(), c.tid, c, c.active ? rej::kReqMsg : rej::kRepMsg, rej::kTimeout, nullptr, 0);
  send_last(n, c);
  fail_active(n, c, CmEvent::Timeout, Upcall::Unreachable, nullptr, 0);
}

}  // namespace nicsim::cm
