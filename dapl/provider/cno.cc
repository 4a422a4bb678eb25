// Consumer notification objects. An event that reaches an enabled EVD of a
// CNO while no thread waits on the EVD triggers the CNO (its proxy agent is
// called then); dat_cno_wait takes the trigger and names the EVD, whose
// events stay on it. For DTO EVDs the waiter arms their CQs, so the next
// completion interrupt triggers the CNO without anybody polling.
#include "dapl/provider/dapl.h"
#include "dapl/provider/kib.h"
#include "host/host.h"

namespace nicsim::dapl {

Cno::Cno(Ia* owner, host::Host& h) : Object(Kind::Cno, owner), wq(std::make_unique<host::WaitQueue>(h)) {}
Cno::~Cno() = default;

namespace {

DAT_HANDLE handle_of(std::uint64_t h) { return reinterpret_cast<DAT_HANDLE>(static_cast<std::uintptr_t>(h)); }

void trigger(Cno& cno, Evd& evd) {
  if (cno.triggered) return;
  cno.triggered = true;
  cno.triggered_evd = evd.handle;
  cno.wq->notify_all();
  if (cno.agent.proxy_agent_func) cno.agent.proxy_agent_func(cno.agent.instance_data, to_handle(&evd));
}

// Arms the CQs of the CNO's EVDs and takes the completions that came
// before: an EVD holding events triggers the CNO. The calls take simulated
// time, so each EVD is looked up again and pinned.
void arm_evds(Node& n, Cno& cno) {
  std::vector<std::uint64_t> evds;
  for (Object* o : n.objects_of(cno.ia))
    if (o->kind == Kind::Evd && static_cast<Evd*>(o)->cno == &cno) evds.push_back(o->handle);
  for (std::uint64_t h : evds) {
    Evd* evd = n.find_as<Evd>(handle_of(h), Kind::Evd);
    if (!evd || evd->cno != &cno || !evd->enabled || evd->waiting) continue;
    Pin pin(n, *evd);
    if (evd->cq) {
      kib::ib_req_notify_cq(evd->cq, kib::IB_CQ_NEXT_COMP);
      if (!evd->dead) evd_drain_cq(n, *evd);
    }
    if (cno.dead || cno.triggered) return;
    if (!evd->dead && evd->cno == &cno && !evd->queue.empty()) return trigger(cno, *evd);
  }
}

DAT_RETURN wait_trigger(Node& n, Cno& cno, Tick deadline, DAT_EVD_HANDLE& out) {
  for (;;) {
    if (cno.dead) return err(DAT_INVALID_STATE, DAT_INVALID_STATE_CNO_DEAD);
    if (cno.triggered) {
      cno.triggered = false;
      out = handle_of(cno.triggered_evd);
      return DAT_SUCCESS;
    }
    arm_evds(n, cno);
    if (cno.triggered || cno.dead) continue;
    if (now() >= deadline) return err(DAT_TIMEOUT_EXPIRED);
    cno.wq->wait_until(deadline);
  }
}

Cno* cno_of(Node* n, DAT_CNO_HANDLE h) { return n ? n->find_as<Cno>(h, Kind::Cno) : nullptr; }

}  // namespace

void cno_notify(Evd& evd) {
  if (evd.cno && evd.enabled && !evd.waiting && !evd.cno->dead) trigger(*evd.cno, evd);
}

DAT_RETURN evd_set_cno(Node& n, Evd& evd, DAT_CNO_HANDLE cno_handle) {
  Cno* cno = nullptr;
  if (cno_handle != DAT_HANDLE_NULL) {
    cno = n.find_as<Cno>(cno_handle, Kind::Cno);
    if (!cno || cno->ia != evd.ia) return bad_handle(DAT_INVALID_HANDLE_CNO);
  }
  if (evd.cno) --evd.cno->refs;
  evd.cno = cno;
  if (cno) {
    ++cno->refs;
    cno->wq->notify_all();  // a waiter arms the new EVD
  }
  return DAT_SUCCESS;
}

DAT_RETURN cno_free_all(Node& n, Cno& cno) {
  cno.wq->notify_all();
  --n.counters_mut().cnos;
  n.remove(&cno);
  return DAT_SUCCESS;
}

}  // namespace nicsim::dapl

using namespace nicsim;
using namespace nicsim::dapl;

extern "C" {

DAT_RETURN dat_cno_create(DAT_IA_HANDLE ia_handle, DAT_OS_WAIT_PROXY_AGENT agent, DAT_CNO_HANDLE* cno_handle) {
  NICSIM_API_CALL();
  Node* n = Node::current();
  Ia* ia = n ? n->find_as<Ia>(ia_handle, Kind::Ia) : nullptr;
  if (!ia) return bad_handle(DAT_INVALID_HANDLE_IA);
  if (!cno_handle) return bad_arg(3);
  Pin pin(*n, *ia);
  charge_call(*n);
  if (ia->dead) return bad_handle(DAT_INVALID_HANDLE_IA);  // closed by another thread meanwhile
  auto cno = std::make_unique<Cno>(ia, n->host());
  cno->agent = agent;
  *cno_handle = to_handle(n->add(std::move(cno)));
  ++n->counters_mut().cnos;
  return DAT_SUCCESS;
}

DAT_RETURN dat_cno_modify_agent(DAT_CNO_HANDLE cno_handle, DAT_OS_WAIT_PROXY_AGENT agent) {
  NICSIM_API_CALL();
  Cno* cno = cno_of(Node::current(), cno_handle);
  if (!cno) return bad_handle(DAT_INVALID_HANDLE_CNO);
  cno->agent = agent;
  return DAT_SUCCESS;
}

DAT_RETURN dat_cno_query(DAT_CNO_HANDLE cno_handle, DAT_CNO_PARAM_MASK, DAT_CNO_PARAM* cno_param) {
  NICSIM_API_CALL();
  Cno* cno = cno_of(Node::current(), cno_handle);
  if (!cno) return bad_handle(DAT_INVALID_HANDLE_CNO);
  if (!cno_param) return bad_arg(3);
  cno_param->ia_handle = to_handle(cno->ia);
  cno_param->agent = cno->agent;
  return DAT_SUCCESS;
}

DAT_RETURN dat_cno_free(DAT_CNO_HANDLE cno_handle) {
  NICSIM_API_CALL();
  Node* n = Node::current();
  Cno* cno = cno_of(n, cno_handle);
  if (!cno) return bad_handle(DAT_INVALID_HANDLE_CNO);
  Pin pin(*n, *cno);
  charge_call(*n);
  if (cno->dead) return bad_handle(DAT_INVALID_HANDLE_CNO);  // freed by another thread meanwhile
  if (cno->refs > 0 || cno->waiters > 0) return err(DAT_INVALID_STATE, DAT_INVALID_STATE_CNO_IN_USE);
  return cno_free_all(*n, *cno);
}

DAT_RETURN dat_cno_wait(DAT_CNO_HANDLE cno_handle, DAT_TIMEOUT timeout, DAT_EVD_HANDLE* evd_handle) {
  NICSIM_API_CALL();
  Node* n = Node::current();
  Cno* cno = cno_of(n, cno_handle);
  if (!cno) return bad_handle(DAT_INVALID_HANDLE_CNO);
  if (!evd_handle) return bad_arg(3);
  if (n->host().in_interrupt()) return err(DAT_INVALID_STATE);
  Pin pin(*n, *cno);
  ++cno->waiters;
  charge_call(*n);
  const Tick deadline = timeout == DAT_TIMEOUT_INFINITE ? kTickMax : now() + static_cast<Tick>(timeout) * kUs;
  const DAT_RETURN rc = wait_trigger(*n, *cno, deadline, *evd_handle);
  --cno->waiters;
  return rc;
}

}  // extern "C"
