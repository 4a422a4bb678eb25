// CNOs on one node: a completion interrupt (RECVs flushed by disconnecting
// an unconnected EP) triggers the CNO of the DTO EVD while a thread waits
// on it; a software event triggers it and calls its proxy agent; timeouts,
// CNOs in use, bad handles, and a waiter whose CNO goes with an abrupt
// IA close (DAT_INVALID_STATE_CNO_DEAD). Nothing is left after.
#include <dat/udat.h>

#include "dapl/provider/dapl.h"
#include "nicsim/app.h"
#include "tests/world_run.h"
#include "world/node.h"

namespace nicsim::dapl {
namespace {

int failures = 0;
void expect_rc(DAT_RETURN got, DAT_RETURN want, const char* what) {
  if (got == want) return;
  ++failures;
  ADD_FAILURE() << what << ": 0x" << std::hex << got << " instead of 0x" << want;
}
DAT_RETURN error(DAT_RETURN_TYPE type, int sub = 0) {
  return DAT_CLASS_ERROR | static_cast<DAT_UINT32>(type) | static_cast<DAT_UINT32>(sub);
}

struct Waiter {
  DAT_CNO_HANDLE cno;
  DAT_EVD_HANDLE evd;
  DAT_RETURN rc;
};

void wait_cno(void* arg) {
  auto* w = static_cast<Waiter*>(arg);
  w->rc = dat_cno_wait(w->cno, DAT_TIMEOUT_INFINITE, &w->evd);
}

void count_calls(DAT_PVOID data, DAT_EVD_HANDLE) { ++*static_cast<int*>(data); }

struct Objects {
  DAT_IA_HANDLE ia = DAT_HANDLE_NULL;
  DAT_PZ_HANDLE pz = DAT_HANDLE_NULL;
  DAT_CNO_HANDLE cno = DAT_HANDLE_NULL;
  DAT_EVD_HANDLE dto = DAT_HANDLE_NULL, sw = DAT_HANDLE_NULL;
  DAT_EP_HANDLE ep = DAT_HANDLE_NULL;
  DAT_LMR_HANDLE lmr = DAT_HANDLE_NULL;
  DAT_LMR_CONTEXT lkey = 0;
  unsigned char* buf = nullptr;
};

bool make(Objects& o) {
  char ib0[] = "ib0";
  DAT_EVD_HANDLE async = DAT_HANDLE_NULL;
  DAT_REGION_DESCRIPTION region{};
  o.buf = static_cast<unsigned char*>(nicsim_alloc(256, 64));
  region.for_va = o.buf;
  const DAT_OS_WAIT_PROXY_AGENT none{nullptr, nullptr};
  return dat_ia_open(ib0, 8, &async, &o.ia) == DAT_SUCCESS && dat_pz_create(o.ia, &o.pz) == DAT_SUCCESS &&
         dat_cno_create(o.ia, none, &o.cno) == DAT_SUCCESS &&
         dat_evd_create(o.ia, 8, o.cno, DAT_EVD_DTO_FLAG, &o.dto) == DAT_SUCCESS &&
         dat_evd_create(o.ia, 8, DAT_HANDLE_NULL, DAT_EVD_SOFTWARE_FLAG, &o.sw) == DAT_SUCCESS &&
         dat_ep_create(o.ia, o.pz, o.dto, o.dto, DAT_HANDLE_NULL, nullptr, &o.ep) == DAT_SUCCESS &&
         dat_lmr_create(o.ia, DAT_MEM_TYPE_VIRTUAL, region, 256, o.pz, DAT_MEM_PRIV_ALL_FLAG, &o.lmr, &o.lkey, nullptr,
                        nullptr, nullptr) == DAT_SUCCESS;
}

// A flushed RECV's completion interrupt wakes the CNO's waiter.
void completion_triggers(Objects& o) {
  DAT_LMR_TRIPLET iov{o.lkey, 0, reinterpret_cast<DAT_VADDR>(o.buf), 64};
  DAT_EVD_HANDLE got = DAT_HANDLE_NULL;
  DAT_EVENT ev{};
  expect_rc(dat_cno_wait(o.cno, 5, &got), error(DAT_TIMEOUT_EXPIRED), "nothing to trigger");
  expect_rc(dat_ep_post_recv(o.ep, 1, &iov, DAT_DTO_COOKIE{}, DAT_COMPLETION_DEFAULT_FLAG), DAT_SUCCESS, "recv");
  Waiter w{o.cno, DAT_HANDLE_NULL, DAT_SUCCESS};
  nicsim_thread_t t = nicsim_thread_spawn(wait_cno, &w, "cno_waiter");
  nicsim_sleep_ns(10000);
  expect_rc(dat_cno_free(o.cno), error(DAT_INVALID_STATE, DAT_INVALID_STATE_CNO_IN_USE), "free a CNO in use");
  expect_rc(dat_ep_disconnect(o.ep, DAT_CLOSE_ABRUPT_FLAG), DAT_SUCCESS, "flush the RECV");
  nicsim_thread_join(t);
  expect_rc(w.rc, DAT_SUCCESS, "the waiter");
  if (w.evd != o.dto) ADD_FAILURE() << "the CNO names another EVD", ++failures;
  expect_rc(dat_evd_dequeue(o.dto, &ev), DAT_SUCCESS, "the event stays on the EVD");
  if (ev.event_data.dto_completion_event_data.status != DAT_DTO_ERR_FLUSHED) ADD_FAILURE() << "not flushed";
}

// A software event on an EVD given the CNO later: triggered, agent called.
void software_event_triggers(Objects& o) {
  int calls = 0;
  DAT_EVENT ev{};
  ev.event_number = DAT_SOFTWARE_EVENT;
  DAT_EVD_HANDLE got = DAT_HANDLE_NULL;
  DAT_CNO_PARAM cp{};
  DAT_EVD_PARAM ep{};
  expect_rc(dat_evd_modify_cno(o.sw, o.cno), DAT_SUCCESS, "modify_cno");
  expect_rc(dat_cno_modify_agent(o.cno, DAT_OS_WAIT_PROXY_AGENT{&calls, count_calls}), DAT_SUCCESS, "agent");
  expect_rc(dat_evd_post_se(o.sw, &ev), DAT_SUCCESS, "post_se");
  expect_rc(dat_cno_wait(o.cno, 0, &got), DAT_SUCCESS, "a triggered CNO");
  if (got != o.sw || calls != 1) ADD_FAILURE() << "agent calls " << calls, ++failures;
  expect_rc(dat_cno_wait(o.cno, 0, &got), DAT_SUCCESS, "an EVD still holding events triggers it again");
  expect_rc(dat_evd_dequeue(o.sw, &ev), DAT_SUCCESS, "the software event stayed on its EVD");
  expect_rc(dat_cno_wait(o.cno, 5, &got), error(DAT_TIMEOUT_EXPIRED), "nothing left");
  expect_rc(dat_cno_query(o.cno, DAT_CNO_FIELD_ALL, &cp), DAT_SUCCESS, "cno_query");
  expect_rc(dat_evd_query(o.sw, DAT_EVD_FIELD_ALL, &ep), DAT_SUCCESS, "evd_query");
  if (cp.ia_handle != o.ia || cp.agent.instance_data != &calls || ep.cno_handle != o.cno) ++failures;
  expect_rc(dat_evd_modify_cno(o.sw, o.pz), error(DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_CNO), "a PZ as CNO");
  expect_rc(dat_cno_wait(o.pz, 0, &got), error(DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_CNO), "wait on a PZ");
  expect_rc(dat_cno_wait(o.cno, 0, nullptr), error(DAT_INVALID_PARAMETER, DAT_INVALID_ARG3), "no out handle");
}

int cno_main(int, char**) {
  Objects o;
  if (!make(o)) return 1;
  completion_triggers(o);
  software_event_triggers(o);
  Waiter w{o.cno, DAT_HANDLE_NULL, DAT_SUCCESS};
  nicsim_thread_t t = nicsim_thread_spawn(wait_cno, &w, "cno_waiter");
  nicsim_sleep_ns(10000);
  if (dat_ia_close(o.ia, DAT_CLOSE_ABRUPT_FLAG) != DAT_SUCCESS) return 1;
  nicsim_thread_join(t);
  expect_rc(w.rc, error(DAT_INVALID_STATE, DAT_INVALID_STATE_CNO_DEAD), "a waiter when its IA closed");
  nicsim_free(o.buf);
  return failures ? 1 : 0;
}

const int registered = nicsim_register_program("dapl_cno", cno_main, "CNOs: triggers, waits and errors");

TEST(DaplCno, CompletionAndSoftwareEventsTriggerTheWaiterAndItsAgent) {
  testing::RunOptions o;
  o.inspect = [](World& w) {
    Node* n = Node::of(w.node(1).host());
    ASSERT_NE(n, nullptr);
    EXPECT_EQ(n->counters().total(), 0u);
  };
  const auto r = testing::run_text(
      "seed: 1\ntopology { star { hosts: 2 } nic: \"hca\" }\n"
      "workload { program: \"ib_sa\" nodes: \"h0\" }\n"
      "workload { program: \"dapl_cno\" nodes: \"h1\" }\n",
      o);
  EXPECT_TRUE(r.ok);
  EXPECT_EQ(failures, 0);
}

}  // namespace
}  // namespace nicsim::dapl
