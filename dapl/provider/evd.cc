// Event dispatchers: a software queue of DAT_EVENTs per EVD; a DTO (or RMR
// bind) EVD also owns a kernel CQ whose entries become events when the
// consumer waits or dequeues. dat_evd_wait sleeps in simulated time, woken
// by the CQ's completion interrupt or by a connection event.
#include <algorithm>

#include "dapl/provider/dapl.h"
#include "dapl/provider/kib.h"
#include "host/host.h"

namespace nicsim::dapl {
namespace {

constexpr int kValidFlags = DAT_EVD_SOFTWARE_FLAG | DAT_EVD_CR_FLAG | DAT_EVD_DTO_FLAG | DAT_EVD_CONNECTION_FLAG |
                            DAT_EVD_RMR_BIND_FLAG | DAT_EVD_ASYNC_FLAG;

// The CQ's completion interrupt: wake the EVD's waiter (it drains the CQ).
void on_completion(kib::ib_cq*, void* context) {
  Node* n = Node::current();
  Evd* evd = n ? n->find_as<Evd>(context, Kind::Evd) : nullptr;
  if (!evd) return;
  evd->wq->notify_all();
  cno_notify(*evd);  // the entry stays in the CQ until the consumer takes it
}

Evd* evd_of(Node* n, DAT_EVD_HANDLE h) { return n ? n->find_as<Evd>(h, Kind::Evd) : nullptr; }

}  // namespace

void evd_post(Evd& evd, const DAT_EVENT& ev, bool arrival) {
  if (static_cast<int>(evd.queue.size()) >= evd.qlen) {
    // Overflow: the event is lost, the IA's async EVD says so.
    Evd* async = evd.ia ? evd.ia->async_evd : nullptr;
    if (async && async != &evd && static_cast<int>(async->queue.size()) < async->qlen) {
      DAT_EVENT o{};
      o.event_number = DAT_ASYNC_ERROR_EVD_OVERFLOW;
      o.evd_handle = to_handle(async);
      o.event_data.asynch_error_event_data.ia_handle = to_handle(evd.ia);
      async->queue.push_back(o);
      async->wq->notify_all();
    }
    return;
  }
  evd.queue.push_back(ev);
  evd.queue.back().evd_handle = to_handle(&evd);
  evd.wq->notify_all();
  if (arrival) cno_notify(evd);
}

void evd_post_connection(Ep& ep, DAT_EVENT_NUMBER number) {
  if (!ep.connect_evd) return;
  DAT_EVENT ev{};
  ev.event_number = number;
  ev.event_data.connect_event_data.ep_handle = to_handle(&ep);
  ev.event_data.connect_event_data.private_data_size = static_cast<DAT_COUNT>(ep.event_private.size());
  ev.event_data.connect_event_data.private_data = ep.event_private.empty() ? nullptr : ep.event_private.data();
  evd_post(*ep.connect_evd, ev);
}

DAT_RETURN evd_free_all(Node& n, Evd& evd, int own_pins) {
  // A waiter may be inside a CQ call: the CQ goes when it leaves (reap).
  if (evd.cq && evd.pins == own_pins) {
    if (kib::ib_destroy_cq(evd.cq)) return err(DAT_INVALID_STATE, DAT_INVALID_STATE_EVD_IN_USE);
    evd.cq = nullptr;
    --n.counters_mut().cqs;
  }
  evd.wq->notify_all();
  evd_set_cno(n, evd, DAT_HANDLE_NULL);
  --n.counters_mut().evds;
  n.remove(&evd);
  return DAT_SUCCESS;
}

void Evd::reap(Node& n) {
  if (!cq) return;
  kib::ib_destroy_cq(cq);
  cq = nullptr;
  --n.counters_mut().cqs;
}

namespace {

// dat_evd_wait's loop: until `threshold` events are queued, the deadline
// passes, the EVD is freed (DAT_ABORT: its IA was closed or the EVD
// destroyed) or set unwaitable (DAT_INVALID_STATE).
DAT_RETURN wait_events(Node& n, Evd& evd, Tick deadline, DAT_COUNT threshold) {
  for (;;) {
    if (evd.dead) return err(DAT_ABORT);
    if (!evd.waitable) return err(DAT_INVALID_STATE, DAT_INVALID_STATE_EVD_UNWAITABLE);
    if (evd.cq) evd_drain_cq(n, evd);
    if (evd.dead) return err(DAT_ABORT);
    if (static_cast<DAT_COUNT>(evd.queue.size()) >= threshold) return DAT_SUCCESS;
    if (evd.cq) {
      kib::ib_req_notify_cq(evd.cq, kib::IB_CQ_NEXT_COMP);
      if (evd.dead) return err(DAT_ABORT);
      evd_drain_cq(n, evd);  // what came before the arming
      if (evd.dead) return err(DAT_ABORT);
      if (static_cast<DAT_COUNT>(evd.queue.size()) >= threshold) return DAT_SUCCESS;
    }
    if (now() >= deadline) return err(DAT_TIMEOUT_EXPIRED);
    evd.wq->wait_until(deadline);
  }
}

}  // namespace

}  // namespace nicsim::dapl

using namespace nicsim;
using namespace nicsim::dapl;

extern "C" {

DAT_RETURN dat_evd_create(DAT_IA_HANDLE ia_handle, DAT_COUNT evd_min_qlen, DAT_CNO_HANDLE cno_handle,
                          DAT_EVD_FLAGS evd_flags, DAT_EVD_HANDLE* evd_handle) {
  NICSIM_API_CALL();
  Node* n = Node::current();
  Ia* ia = n ? n->find_as<Ia>(ia_handle, Kind::Ia) : nullptr;
  if (!ia) return bad_handle(DAT_INVALID_HANDLE_IA);
  Pin pin(*n, *ia);
  charge_call(*n);
  if (ia->dead) return bad_handle(DAT_INVALID_HANDLE_IA);  // freed by another thread meanwhile
  if (evd_min_qlen < 1 || evd_min_qlen > 65536) return bad_arg(2);
  Cno* cno = cno_handle == DAT_HANDLE_NULL ? nullptr : n->find_as<Cno>(cno_handle, Kind::Cno);
  if (cno_handle != DAT_HANDLE_NULL && (!cno || cno->ia != ia)) return bad_handle(DAT_INVALID_HANDLE_CNO);
  if (!evd_flags || (evd_flags & ~kValidFlags)) return bad_arg(4);
  if (!evd_handle) return bad_arg(5);
  auto evd = std::make_unique<Evd>(ia, n->host());
  evd->flags = evd_flags;
  evd->qlen = evd_min_qlen;
  Evd* raw = n->add(std::move(evd));
  if (evd_flags & (DAT_EVD_DTO_FLAG | DAT_EVD_RMR_BIND_FLAG)) {
    raw->cq = kib::ib_create_cq(ia->dev, on_completion, nullptr, to_handle(raw), evd_min_qlen);
    if (!raw->cq) {
      n->remove(raw);
      return err(DAT_INSUFFICIENT_RESOURCES, DAT_RESOURCE_TEVD);
    }
    ++n->counters_mut().cqs;
  }
  ++n->counters_mut().evds;
  evd_set_cno(*n, *raw, cno_handle);
  *evd_handle = to_handle(raw);
  return DAT_SUCCESS;
}

DAT_RETURN dat_evd_free(DAT_EVD_HANDLE evd_handle) {
  NICSIM_API_CALL();
  Node* n = Node::current();
  Evd* evd = evd_of(n, evd_handle);
  if (!evd) return bad_handle(DAT_INVALID_HANDLE1);
  Pin pin(*n, *evd);
  charge_call(*n);
  if (evd->dead) return bad_handle(DAT_INVALID_HANDLE1);  // freed by another thread meanwhile
  if (evd->refs > 0 || evd == evd->ia->async_evd || evd->waiting)
    return err(DAT_INVALID_STATE, DAT_INVALID_STATE_EVD_IN_USE);
  return evd_free_all(*n, *evd, 1);
}

DAT_RETURN dat_evd_query(DAT_EVD_HANDLE evd_handle, DAT_EVD_PARAM_MASK, DAT_EVD_PARAM* evd_param) {
  NICSIM_API_CALL();
  Evd* evd = evd_of(Node::current(), evd_handle);
  if (!evd) return bad_handle(DAT_INVALID_HANDLE1);
  if (!evd_param) return bad_arg(3);
  evd_param->ia_handle = to_handle(evd->ia);
  evd_param->evd_qlen = evd->qlen;
  evd_param->evd_state =
      static_cast<DAT_EVD_STATE>((evd->enabled ? DAT_EVD_STATE_ENABLED : DAT_EVD_STATE_DISABLED) |
                                 (evd->waitable ? DAT_EVD_STATE_WAITABLE : DAT_EVD_STATE_UNWAITABLE));
  evd_param->cno_handle = to_handle(evd->cno);
  evd_param->evd_flags = evd->flags;
  return DAT_SUCCESS;
}

DAT_RETURN dat_evd_resize(DAT_EVD_HANDLE evd_handle, DAT_COUNT evd_min_qlen) {
  NICSIM_API_CALL();
  Node* n = Node::current();
  Evd* evd = evd_of(n, evd_handle);
  if (!evd) return bad_handle(DAT_INVALID_HANDLE1);
  if (evd_min_qlen < 1 || evd_min_qlen > 65536) return bad_arg(2);
  if (evd_min_qlen < static_cast<DAT_COUNT>(evd->queue.size())) return err(DAT_INVALID_STATE);
  // The 2.6.13 kernel verbs cannot resize a CQ: a DTO EVD may only shrink
  // its software queue to what its CQ holds.
  if (evd->cq && evd_min_qlen > evd->cq->cqe) return err(DAT_INSUFFICIENT_RESOURCES, DAT_RESOURCE_TEVD);
  evd->qlen = evd_min_qlen;
  return DAT_SUCCESS;
}

DAT_RETURN dat_evd_post_se(DAT_EVD_HANDLE evd_handle, const DAT_EVENT* event) {
  NICSIM_API_CALL();
  Node* n = Node::current();
  Evd* evd = evd_of(n, evd_handle);
  if (!evd) return bad_handle(DAT_INVALID_HANDLE1);
  Pin pin(*n, *evd);
  charge_call(*n);
  if (evd->dead) return bad_handle(DAT_INVALID_HANDLE1);  // freed by another thread meanwhile
  if (!event || event->event_number != DAT_SOFTWARE_EVENT) return bad_arg(2);
  if (static_cast<int>(evd->queue.size()) >= evd->qlen) return err(DAT_QUEUE_FULL);
  evd_post(*evd, *event);
  return DAT_SUCCESS;
}

DAT_RETURN dat_evd_dequeue(DAT_EVD_HANDLE evd_handle, DAT_EVENT* event) {
  NICSIM_API_CALL();
  Node* n = Node::current();
  Evd* evd = evd_of(n, evd_handle);
  if (!evd) return bad_handle(DAT_INVALID_HANDLE1);
  if (!event) return bad_arg(2);
  Pin pin(*n, *evd);
  charge_call(*n);
  if (evd->queue.empty() && evd->cq && !evd->dead) evd_drain_cq(*n, *evd);
  if (evd->dead) return err(DAT_ABORT);
  if (evd->queue.empty()) return err(DAT_QUEUE_EMPTY);
  *event = evd->queue.front();
  evd->queue.pop_front();
  return DAT_SUCCESS;
}

DAT_RETURN dat_evd_wait(DAT_EVD_HANDLE evd_handle, DAT_TIMEOUT timeout, DAT_COUNT threshold, DAT_EVENT* event,
                        DAT_COUNT* nmore) {
  NICSIM_API_CALL();
  Node* n = Node::current();
  Evd* evd = evd_of(n, evd_handle);
  if (!evd) return bad_handle(DAT_INVALID_HANDLE1);
  if (threshold < 1 || threshold > evd->qlen) return bad_arg(3);
  if (!event) return bad_arg(4);
  if (!nmore) return bad_arg(5);
  if (!evd->waitable) return err(DAT_INVALID_STATE, DAT_INVALID_STATE_EVD_UNWAITABLE);
  if (evd->waiting) return err(DAT_INVALID_STATE, DAT_INVALID_STATE_EVD_WAITER);
  if (n->host().in_interrupt()) return err(DAT_INVALID_STATE);
  Pin pin(*n, *evd);
  evd->waiting = true;
  charge_call(*n);
  const Tick deadline = timeout == DAT_TIMEOUT_INFINITE ? kTickMax : now() + static_cast<Tick>(timeout) * kUs;
  const DAT_RETURN rc = wait_events(*n, *evd, deadline, threshold);
  evd->waiting = false;
  *nmore = static_cast<DAT_COUNT>(evd->queue.size());
  if (rc != DAT_SUCCESS) return rc;
  *event = evd->queue.front();
  evd->queue.pop_front();
  *nmore = static_cast<DAT_COUNT>(evd->queue.size());
  return DAT_SUCCESS;
}

DAT_RETURN dat_evd_modify_cno(DAT_EVD_HANDLE evd_handle, DAT_CNO_HANDLE cno_handle) {
  NICSIM_API_CALL();
  Node* n = Node::current();
  Evd* evd = evd_of(n, evd_handle);
  if (!evd) return bad_handle(DAT_INVALID_HANDLE1);
  Pin pin(*n, *evd);
  charge_call(*n);
  if (evd->dead) return bad_handle(DAT_INVALID_HANDLE1);  // freed by another thread meanwhile
  return evd_set_cno(*n, *evd, cno_handle);
}

DAT_RETURN dat_evd_enable(DAT_EVD_HANDLE evd_handle) {
  NICSIM_API_CALL();
  Evd* evd = evd_of(Node::current(), evd_handle);
  if (!evd) return bad_handle(DAT_INVALID_HANDLE1);
  evd->enabled = true;
  return DAT_SUCCESS;
}

DAT_RETURN dat_evd_disable(DAT_EVD_HANDLE evd_handle) {
  NICSIM_API_CALL();
  Evd* evd = evd_of(Node::current(), evd_handle);
  if (!evd) return bad_handle(DAT_INVALID_HANDLE1);
  evd->enabled = false;
  return DAT_SUCCESS;
}

DAT_RETURN dat_evd_set_unwaitable(DAT_EVD_HANDLE evd_handle) {
  NICSIM_API_CALL();
  Evd* evd = evd_of(Node::current(), evd_handle);
  if (!evd) return bad_handle(DAT_INVALID_HANDLE1);
  evd->waitable = false;
  evd->wq->notify_all();
  return DAT_SUCCESS;
}

DAT_RETURN dat_evd_clear_unwaitable(DAT_EVD_HANDLE evd_handle) {
  NICSIM_API_CALL();
  Evd* evd = evd_of(Node::current(), evd_handle);
  if (!evd) return bad_handle(DAT_INVALID_HANDLE1);
  evd->waitable = true;
  return DAT_SUCCESS;
}

}  // extern "C"
