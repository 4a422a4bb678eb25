// Bad calls return the DAT error the specification names, with the
// subtype that says which handle, argument or EP state was wrong; nothing
// crashes and nothing is left after dat_ia_close. The checks run as a
// program on a node (DAT calls are made from a node's thread).
#include <dat/udat.h>

#include <string>

#include "dapl/provider/dapl.h"
#include "nicsim/app.h"
#include "tests/world_run.h"
#include "world/node.h"

namespace nicsim::dapl {
namespace {

int failures = 0;
void expect_rc(DAT_RETURN got, DAT_RETURN_TYPE type, int subtype, const char* what) {
  if (DAT_GET_TYPE(got) != static_cast<DAT_UINT32>(type) || DAT_GET_SUBTYPE(got) != static_cast<DAT_UINT32>(subtype) ||
      !(got & DAT_CLASS_ERROR)) {
    ++failures;
    ADD_FAILURE() << what << ": 0x" << std::hex << got;
  }
}

int bad_calls(int, char**) {
  DAT_IA_HANDLE ia = DAT_HANDLE_NULL;
  DAT_EVD_HANDLE async = DAT_HANDLE_NULL, dto = DAT_HANDLE_NULL, conn = DAT_HANDLE_NULL;
  DAT_PZ_HANDLE pz = DAT_HANDLE_NULL;
  DAT_EP_HANDLE ep = DAT_HANDLE_NULL, bare = DAT_HANDLE_NULL;
  DAT_LMR_HANDLE lmr = DAT_HANDLE_NULL;
  DAT_LMR_CONTEXT lkey = 0;
  DAT_RMR_CONTEXT rkey = 0;
  DAT_EVENT ev{};
  DAT_COUNT more = 0;
  DAT_DTO_COOKIE cookie{};
  char unknown_name[] = "mlx0", ib0[] = "ib0";  // DAT_NAME_PTR is a char *
  auto* invented = reinterpret_cast<DAT_HANDLE>(static_cast<std::uintptr_t>(0x1234));
  expect_rc(dat_ia_open(unknown_name, 8, &async, &ia), DAT_PROVIDER_NOT_FOUND, DAT_NAME_NOT_REGISTERED, "unknown IA");
  if (dat_ia_open(ib0, 8, &async, &ia) != DAT_SUCCESS) return 1;
  expect_rc(dat_pz_create(invented, &pz), DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_IA, "pz on an invented IA");
  dat_pz_create(ia, &pz);
  dat_evd_create(ia, 8, DAT_HANDLE_NULL, DAT_EVD_DTO_FLAG, &dto);
  dat_evd_create(ia, 8, DAT_HANDLE_NULL, DAT_EVD_CONNECTION_FLAG, &conn);
  expect_rc(dat_evd_create(ia, 0, DAT_HANDLE_NULL, DAT_EVD_DTO_FLAG, &dto), DAT_INVALID_PARAMETER, DAT_INVALID_ARG2,
            "qlen 0");
  expect_rc(dat_ep_create(ia, dto, dto, dto, conn, nullptr, &ep), DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_PZ,
            "an EVD as PZ");
  expect_rc(dat_ep_create(ia, pz, conn, dto, conn, nullptr, &ep), DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_EVD_RECV,
            "a connection EVD for receives");
  expect_rc(dat_ep_create(ia, pz, dto, dto, dto, nullptr, &ep), DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_EVD_CONN,
            "a DTO EVD for connections");
  dat_ep_create(ia, pz, dto, dto, conn, nullptr, &ep);
  dat_ep_create(ia, DAT_HANDLE_NULL, dto, dto, conn, nullptr, &bare);  // UNATTACHED
  auto* buf = static_cast<unsigned char*>(nicsim_alloc(4096, 64));
  DAT_REGION_DESCRIPTION region{};
  region.for_va = buf;
  DAT_VLEN rl = 0;
  DAT_VADDR ra = 0;
  dat_lmr_create(ia, DAT_MEM_TYPE_VIRTUAL, region, 4096, pz, DAT_MEM_PRIV_ALL_FLAG, &lmr, &lkey, &rkey, &rl, &ra);
  DAT_LMR_TRIPLET iov{lkey, 0, ra, 64};
  DAT_LMR_TRIPLET iovs[9];
  for (auto& t : iovs) t = iov;
  expect_rc(dat_ep_post_send(ep, 1, &iov, cookie, DAT_COMPLETION_DEFAULT_FLAG), DAT_INVALID_STATE,
            DAT_INVALID_STATE_EP_UNCONNECTED, "send before connecting");
  expect_rc(dat_ep_post_recv(bare, 1, &iov, cookie, DAT_COMPLETION_DEFAULT_FLAG), DAT_INVALID_STATE,
            DAT_INVALID_STATE_EP_NOTREADY, "recv on an EP without a PZ");
  expect_rc(dat_ep_post_recv(ep, 9, iovs, cookie, DAT_COMPLETION_DEFAULT_FLAG), DAT_INVALID_PARAMETER, DAT_INVALID_ARG2,
            "too many IOVs");
  DAT_LMR_TRIPLET over{lkey, 0, ra + 4000, 200};
  expect_rc(dat_ep_post_recv(ep, 1, &over, cookie, DAT_COMPLETION_DEFAULT_FLAG), DAT_LENGTH_ERROR, 0,
            "a segment past its LMR");
  DAT_LMR_TRIPLET wrong{lkey + 77, 0, ra, 64};
  expect_rc(dat_ep_post_recv(ep, 1, &wrong, cookie, DAT_COMPLETION_DEFAULT_FLAG), DAT_PROTECTION_VIOLATION,
            DAT_PROTECTION_READ, "an unknown lmr_context");
  expect_rc(dat_ep_disconnect(invented, DAT_CLOSE_ABRUPT_FLAG), DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_EP,
            "disconnect of an invented EP");
  expect_rc(dat_pz_free(pz), DAT_INVALID_STATE, DAT_INVALID_STATE_PZ_IN_USE, "free a PZ in use");
  expect_rc(dat_evd_free(dto), DAT_INVALID_STATE, DAT_INVALID_STATE_EVD_IN_USE, "free an EVD in use");
  expect_rc(dat_evd_wait(conn, 5, 1, &ev, &more), DAT_TIMEOUT_EXPIRED, 0, "wait with nothing to come");
  expect_rc(dat_evd_wait(conn, 5, 9, &ev, &more), DAT_INVALID_PARAMETER, DAT_INVALID_ARG3, "threshold over qlen");
  expect_rc(dat_evd_dequeue(dto, &ev), DAT_QUEUE_EMPTY, 0, "dequeue of an empty EVD");
  expect_rc(dat_cr_handoff(invented, 1), DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_CR, "handoff of no CR");
  expect_rc(dat_ia_close(ia, DAT_CLOSE_GRACEFUL_FLAG), DAT_INVALID_STATE, DAT_INVALID_STATE_IA_IN_USE,
            "graceful close with objects");
  DAT_EP_HANDLE freed = ep;
  dat_ep_free(ep);
  expect_rc(dat_ep_free(freed), DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_EP, "free an EP twice");
  if (dat_ia_close(ia, DAT_CLOSE_ABRUPT_FLAG) != DAT_SUCCESS) return 1;  // frees the rest
  expect_rc(dat_pz_free(pz), DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_PZ, "a PZ of a closed IA");
  nicsim_free(buf);
  return failures ? 1 : 0;
}

const int registered = nicsim_register_program("dapl_bad_calls", bad_calls, "bad DAT calls and their errors");

TEST(DaplErrors, BadCallsReturnTheSubtypedErrorAndLeakNothing) {
  testing::RunOptions o;
  o.inspect = [](World& w) {
    Node* n = Node::of(w.node(1).host());
    ASSERT_NE(n, nullptr);
    EXPECT_EQ(n->counters().total(), 0u);
  };
  testing::run_text(
      "seed: 1\ntopology { star { hosts: 2 } nic: \"hca\" }\n"
      "workload { program: \"ib_sa\" nodes: \"h0\" }\n"
      "workload { program: \"dapl_bad_calls\" nodes: \"h1\" }\n",
      o);
}

// Threads blocked in dat_evd_wait while their EVD goes: one on a DTO EVD
// (its CQ armed) and one on a connection EVD when the IA is closed
// abruptly, one on an EVD set unwaitable. Each returns the error the
// specification names, and the EVDs are gone (LSan and the counters).
struct Waiter {
  DAT_EVD_HANDLE evd;
  DAT_RETURN rc;
};

void wait_forever(void* arg) {
  auto* w = static_cast<Waiter*>(arg);
  DAT_EVENT ev{};
  DAT_COUNT more = 0;
  w->rc = dat_evd_wait(w->evd, DAT_TIMEOUT_INFINITE, 1, &ev, &more);
}

int waiters_at_close(int, char**) {
  char ib0[] = "ib0";
  DAT_IA_HANDLE ia = DAT_HANDLE_NULL;
  DAT_EVD_HANDLE async = DAT_HANDLE_NULL, unwaitable = DAT_HANDLE_NULL;
  Waiter w[3] = {};
  if (dat_ia_open(ib0, 8, &async, &ia) != DAT_SUCCESS) return 1;
  dat_evd_create(ia, 8, DAT_HANDLE_NULL, DAT_EVD_DTO_FLAG, &w[0].evd);
  dat_evd_create(ia, 8, DAT_HANDLE_NULL, DAT_EVD_CONNECTION_FLAG, &w[1].evd);
  dat_evd_create(ia, 8, DAT_HANDLE_NULL, DAT_EVD_DTO_FLAG, &unwaitable);
  w[2].evd = unwaitable;
  nicsim_thread_t t[3];
  for (int i = 0; i < 3; ++i) t[i] = nicsim_thread_spawn(wait_forever, &w[i], "dapl_waiter");
  nicsim_sleep_ns(20000);
  expect_rc(dat_evd_free(w[0].evd), DAT_INVALID_STATE, DAT_INVALID_STATE_EVD_IN_USE, "free an EVD with a waiter");
  dat_evd_set_unwaitable(unwaitable);
  nicsim_thread_join(t[2]);
  expect_rc(w[2].rc, DAT_INVALID_STATE, DAT_INVALID_STATE_EVD_UNWAITABLE, "a waiter on an EVD set unwaitable");
  if (dat_ia_close(ia, DAT_CLOSE_ABRUPT_FLAG) != DAT_SUCCESS) return 1;
  for (int i = 0; i < 2; ++i) {
    nicsim_thread_join(t[i]);
    expect_rc(w[i].rc, DAT_ABORT, 0, "a waiter when its IA closed abruptly");
  }
  DAT_EVENT ev{};
  DAT_COUNT more = 0;
  expect_rc(dat_evd_wait(w[0].evd, 0, 1, &ev, &more), DAT_INVALID_HANDLE, DAT_INVALID_HANDLE1, "wait on a freed EVD");
  return failures ? 1 : 0;
}

const int registered_close = nicsim_register_program("dapl_waiters_at_close", waiters_at_close, "waiters at IA close");

TEST(DaplErrors, AbruptCloseWakesItsWaitersWithAbort) {
  testing::RunOptions o;
  o.inspect = [](World& w) {
    Node* n = Node::of(w.node(1).host());
    ASSERT_NE(n, nullptr);
    EXPECT_EQ(n->counters().total(), 0u);
  };
  const auto r = testing::run_text(
      "seed: 1\ntopology { star { hosts: 2 } nic: \"hca\" }\n"
      "workload { program: \"ib_sa\" nodes: \"h0\" }\n"
      "workload { program: \"dapl_waiters_at_close\" nodes: \"h1\" }\n",
      o);
  EXPECT_TRUE(r.ok);
  EXPECT_EQ(failures, 0);
}

}  // namespace
}  // namespace nicsim::dapl
