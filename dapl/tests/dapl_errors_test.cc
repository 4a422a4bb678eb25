// Bad calls return the DAT error the specification names, with the
// subtype that says which handle, argument or EP state was wrong; nothing
// crashes and nothing is left after dat_ia_close. The checks run as a
// program on a node (DAT calls are made from a node's thread).
#include <dat/udat.h>

#include <functional>
#include <string>
#include <vector>

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

// A call still inside the provider (charged its CPU time) when another
// thread frees its object: it returns DAT_INVALID_HANDLE, the object
// lives until it has (ASan would see the use after free otherwise).
struct Poster {
  DAT_EP_HANDLE ep;
  std::uint64_t free_ns, at_ns;  // how long a free takes; when to post
  DAT_RETURN rc;
};

void post_late(void* arg) {
  auto* p = static_cast<Poster*>(arg);
  DAT_LMR_TRIPLET iov{};
  // Found just before the free takes the EP out, charged after.
  if (nicsim_now_ns() < p->at_ns) nicsim_sleep_ns(p->at_ns - nicsim_now_ns());
  p->rc = dat_ep_post_recv(p->ep, 0, &iov, DAT_DTO_COOKIE{}, DAT_COMPLETION_DEFAULT_FLAG);
}

int free_under_a_call(DAT_IA_HANDLE ia) {
  DAT_PZ_HANDLE pz = DAT_HANDLE_NULL;
  DAT_EVD_HANDLE dto = DAT_HANDLE_NULL;
  Poster p{};
  if (dat_pz_create(ia, &pz) || dat_evd_create(ia, 8, DAT_HANDLE_NULL, DAT_EVD_DTO_FLAG, &dto) ||
      dat_ep_create(ia, pz, dto, dto, DAT_HANDLE_NULL, nullptr, &p.ep))
    return 1;
  // How long a free takes (simulated time is deterministic): the same again.
  const std::uint64_t t0 = nicsim_now_ns();
  if (dat_ep_free(p.ep)) return 1;
  p.free_ns = nicsim_now_ns() - t0;
  if (dat_ep_create(ia, pz, dto, dto, DAT_HANDLE_NULL, nullptr, &p.ep)) return 1;
  p.at_ns = nicsim_now_ns() + p.free_ns - 100;
  nicsim_thread_t t = nicsim_thread_spawn(post_late, &p, "dapl_poster");
  if (dat_ep_free(p.ep) != DAT_SUCCESS) return 1;
  nicsim_thread_join(t);
  expect_rc(p.rc, DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_EP, "a post whose EP was freed under it");
  return dat_evd_free(dto) || dat_pz_free(pz);
}

int waiters_at_close(int, char**) {
  char ib0[] = "ib0";
  DAT_IA_HANDLE ia = DAT_HANDLE_NULL;
  DAT_EVD_HANDLE async = DAT_HANDLE_NULL, unwaitable = DAT_HANDLE_NULL;
  Waiter w[3] = {};
  if (dat_ia_open(ib0, 8, &async, &ia) != DAT_SUCCESS || free_under_a_call(ia)) return 1;
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

TEST(DaplErrors, AbruptCloseWakesItsWaitersWithAbortAndFreesWaitForCalls) {
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

// Every call that takes a handle, given NULL, a freed handle of the right
// kind, a live handle of another kind and another node's live handle: DAT_INVALID_HANDLE with the
// subtype of that argument, never a crash. Then calls in the wrong EP
// state (an EP an RSP reserves) with the EP-state subtype.
struct Objects {
  DAT_IA_HANDLE ia = DAT_HANDLE_NULL;
  DAT_PZ_HANDLE pz = DAT_HANDLE_NULL;
  DAT_EVD_HANDLE dto = DAT_HANDLE_NULL, conn = DAT_HANDLE_NULL, cr = DAT_HANDLE_NULL;
  DAT_EP_HANDLE ep = DAT_HANDLE_NULL;
  DAT_LMR_HANDLE lmr = DAT_HANDLE_NULL;
  DAT_RMR_HANDLE rmr = DAT_HANDLE_NULL;
  DAT_PSP_HANDLE psp = DAT_HANDLE_NULL;
  DAT_RSP_HANDLE rsp = DAT_HANDLE_NULL;
  unsigned char* buf = nullptr;
};

bool make_objects(Objects& o, DAT_CONN_QUAL qual) {
  char ib0[] = "ib0";
  DAT_EVD_HANDLE async = DAT_HANDLE_NULL;
  DAT_REGION_DESCRIPTION region{};
  DAT_LMR_CONTEXT lkey = 0;
  o.buf = static_cast<unsigned char*>(nicsim_alloc(256, 64));
  region.for_va = o.buf;
  return dat_ia_open(ib0, 8, &async, &o.ia) == DAT_SUCCESS && dat_pz_create(o.ia, &o.pz) == DAT_SUCCESS &&
         dat_evd_create(o.ia, 8, DAT_HANDLE_NULL, DAT_EVD_DTO_FLAG, &o.dto) == DAT_SUCCESS &&
         dat_evd_create(o.ia, 8, DAT_HANDLE_NULL, DAT_EVD_CONNECTION_FLAG, &o.conn) == DAT_SUCCESS &&
         dat_evd_create(o.ia, 8, DAT_HANDLE_NULL, DAT_EVD_CR_FLAG, &o.cr) == DAT_SUCCESS &&
         dat_ep_create(o.ia, o.pz, o.dto, o.dto, o.conn, nullptr, &o.ep) == DAT_SUCCESS &&
         dat_lmr_create(o.ia, DAT_MEM_TYPE_VIRTUAL, region, 256, o.pz, DAT_MEM_PRIV_ALL_FLAG, &o.lmr, &lkey, nullptr,
                        nullptr, nullptr) == DAT_SUCCESS &&
         dat_rmr_create(o.pz, &o.rmr) == DAT_SUCCESS &&
         dat_psp_create(o.ia, qual, o.cr, DAT_PSP_CONSUMER_FLAG, &o.psp) == DAT_SUCCESS;
}

// Objects of every kind, made then freed: their handles are stale.
bool make_freed(Objects& f) {
  if (!make_objects(f, 0x77)) return false;
  dat_psp_free(f.psp);
  dat_rmr_free(f.rmr);
  dat_lmr_free(f.lmr);
  dat_ep_free(f.ep);
  dat_evd_free(f.dto);
  dat_pz_free(f.pz);
  dat_ia_close(f.ia, DAT_CLOSE_ABRUPT_FLAG);
  nicsim_free(f.buf);
  return true;
}

struct HandleCase {
  const char* call;
  int subtype;
  std::function<DAT_RETURN(DAT_HANDLE)> fn;
  DAT_HANDLE freed, other;
  bool null_is_valid = false;  // NULL means "none" there (an EP with no PZ, no receive EVD)
};

// What the calls below write or read (their results are not looked at).
DAT_EVENT ev{};
DAT_COUNT more = 0;
DAT_EP_PARAM ep_param{};
DAT_LMR_TRIPLET iov{};
DAT_RMR_TRIPLET riov{};
DAT_HANDLE out = DAT_HANDLE_NULL;
DAT_RMR_CONTEXT ctx = 0;
sockaddr_in addr{AF_INET, 0, {0}, {0}};
const DAT_DTO_COOKIE c{};
constexpr auto flags = DAT_COMPLETION_DEFAULT_FLAG;
constexpr int kIa = DAT_INVALID_HANDLE_IA, kEp = DAT_INVALID_HANDLE_EP, kEvd = DAT_INVALID_HANDLE1;

// Objects, their memory and their events.
std::vector<HandleCase> object_cases(const Objects& o, const Objects& f) {
  return {
      {"ia_close", kIa, [](DAT_HANDLE h) { return dat_ia_close(h, DAT_CLOSE_ABRUPT_FLAG); }, f.ia, o.pz},
      {"pz_create", kIa, [](DAT_HANDLE h) { return dat_pz_create(h, &out); }, f.ia, o.ep},
      {"pz_free", DAT_INVALID_HANDLE_PZ, [](DAT_HANDLE h) { return dat_pz_free(h); }, f.pz, o.lmr},
      {"evd_create", kIa, [](DAT_HANDLE h) { return dat_evd_create(h, 4, nullptr, DAT_EVD_DTO_FLAG, &out); }, f.ia,
       o.dto},
      {"evd_wait", kEvd, [](DAT_HANDLE h) { return dat_evd_wait(h, 0, 1, &ev, &more); }, f.dto, o.ep},
      {"evd_dequeue", kEvd, [](DAT_HANDLE h) { return dat_evd_dequeue(h, &ev); }, f.dto, o.pz},
      {"evd_free", kEvd, [](DAT_HANDLE h) { return dat_evd_free(h); }, f.dto, o.psp},
      {"ep_create pz", DAT_INVALID_HANDLE_PZ,
       [o](DAT_HANDLE h) { return dat_ep_create(o.ia, h, o.dto, o.dto, o.conn, nullptr, &out); }, f.pz, o.rmr, true},
      {"ep_create recv evd", DAT_INVALID_HANDLE_EVD_RECV,
       [o](DAT_HANDLE h) { return dat_ep_create(o.ia, o.pz, h, o.dto, o.conn, nullptr, &out); }, f.dto, o.conn, true},
  };
}

// EPs, service points and connection requests.
std::vector<HandleCase> endpoint_cases(const Objects& o, const Objects& f) {
  return {
      {"ep_query", kEp, [](DAT_HANDLE h) { return dat_ep_query(h, DAT_EP_FIELD_ALL, &ep_param); }, f.ep, o.dto},
      {"ep_modify", kEp, [](DAT_HANDLE h) { return dat_ep_modify(h, DAT_EP_FIELD_PZ_HANDLE, &ep_param); }, f.ep, o.pz},
      {"ep_connect", kEp,
       [](DAT_HANDLE h) {
         return dat_ep_connect(h, reinterpret_cast<DAT_IA_ADDRESS_PTR>(&addr), 1, 10, 0, nullptr, DAT_QOS_BEST_EFFORT,
                               DAT_CONNECT_DEFAULT_FLAG);
       },
       f.ep, o.psp},
      {"ep_disconnect", kEp, [](DAT_HANDLE h) { return dat_ep_disconnect(h, DAT_CLOSE_ABRUPT_FLAG); }, f.ep, o.ia},
      {"ep_post_send", kEp, [](DAT_HANDLE h) { return dat_ep_post_send(h, 1, &iov, c, flags); }, f.ep, o.lmr},
      {"ep_post_recv", kEp, [](DAT_HANDLE h) { return dat_ep_post_recv(h, 1, &iov, c, flags); }, f.ep, o.rmr},
      {"ep_post_rdma_read", kEp, [](DAT_HANDLE h) { return dat_ep_post_rdma_read(h, 1, &iov, c, &riov, flags); }, f.ep,
       o.conn},
      {"ep_post_rdma_write", kEp, [](DAT_HANDLE h) { return dat_ep_post_rdma_write(h, 1, &iov, c, &riov, flags); },
       f.ep, o.cr},
      {"ep_get_status", kEp, [](DAT_HANDLE h) { return dat_ep_get_status(h, nullptr, nullptr, nullptr); }, f.ep, o.pz},
      {"ep_reset", kEp, [](DAT_HANDLE h) { return dat_ep_reset(h); }, f.ep, o.pz},
      {"ep_free", kEp, [](DAT_HANDLE h) { return dat_ep_free(h); }, f.ep, o.lmr},
      {"lmr_free", DAT_INVALID_HANDLE_LMR, [](DAT_HANDLE h) { return dat_lmr_free(h); }, f.lmr, o.rmr},
      {"rmr_create", DAT_INVALID_HANDLE_PZ, [](DAT_HANDLE h) { return dat_rmr_create(h, &out); }, f.pz, o.ia},
      {"rmr_bind", DAT_INVALID_HANDLE_RMR,
       [o](DAT_HANDLE h) {
         return dat_rmr_bind(h, &iov, DAT_MEM_PRIV_NONE_FLAG, o.ep, {}, DAT_COMPLETION_DEFAULT_FLAG, &ctx);
       },
       f.rmr, o.lmr},
      {"rmr_bind ep", kEp,
       [o](DAT_HANDLE h) {
         return dat_rmr_bind(o.rmr, &iov, DAT_MEM_PRIV_NONE_FLAG, h, {}, DAT_COMPLETION_DEFAULT_FLAG, &ctx);
       },
       f.ep, o.rmr},
      {"rmr_free", DAT_INVALID_HANDLE_RMR, [](DAT_HANDLE h) { return dat_rmr_free(h); }, f.rmr, o.lmr},
      {"psp_create evd", DAT_INVALID_HANDLE_EVD_CR,
       [o](DAT_HANDLE h) { return dat_psp_create(o.ia, 5, h, DAT_PSP_CONSUMER_FLAG, &out); }, f.dto, o.conn},
      {"psp_free", DAT_INVALID_HANDLE_PSP, [](DAT_HANDLE h) { return dat_psp_free(h); }, f.psp, o.rmr},
      {"rsp_create ep", kEp, [o](DAT_HANDLE h) { return dat_rsp_create(o.ia, 6, h, o.cr, &out); }, f.ep, o.psp},
      {"rsp_free", DAT_INVALID_HANDLE_RSP, [](DAT_HANDLE h) { return dat_rsp_free(h); }, f.psp, o.psp},
      {"cr_accept", DAT_INVALID_HANDLE_CR, [o](DAT_HANDLE h) { return dat_cr_accept(h, o.ep, 0, nullptr); }, f.ep,
       o.ep},
      {"cr_reject", DAT_INVALID_HANDLE_CR, [](DAT_HANDLE h) { return dat_cr_reject(h); }, f.psp, o.psp},
      {"set_consumer_context", kEvd, [](DAT_HANDLE h) { return dat_set_consumer_context(h, DAT_CONTEXT{}); }, f.ia,
       nullptr},

  };
}

std::vector<HandleCase> handle_cases(const Objects& o, const Objects& f) {
  std::vector<HandleCase> all = object_cases(o, f);
  for (HandleCase& k : endpoint_cases(o, f)) all.push_back(std::move(k));
  return all;
}

Objects g_remote;  // the other node's live objects: on this node, only numbers

// The second node makes the same objects and keeps them while the first
// tries them; they are intact afterwards (dat_ia_close frees them all).
int remote_objects() {
  if (!make_objects(g_remote, 0x78)) return 1;
  nicsim_barrier();
  nicsim_barrier();
  expect_rc(dat_ia_close(g_remote.ia, DAT_CLOSE_GRACEFUL_FLAG), DAT_INVALID_STATE, DAT_INVALID_STATE_IA_IN_USE,
            "graceful close with its objects all there");
  if (dat_ia_close(g_remote.ia, DAT_CLOSE_ABRUPT_FLAG) != DAT_SUCCESS) return 1;
  nicsim_free(g_remote.buf);
  return 0;
}

int bad_handles(int, char**) {
  if (nicsim_workload_rank() == 1) return remote_objects();
  Objects o, f;
  if (!make_freed(f) || !make_objects(o, 0x78)) return 1;
  nicsim_barrier();  // the other node's objects are there
  for (const HandleCase& k : handle_cases(o, f)) {
    const std::string what = k.call;
    if (!k.null_is_valid) expect_rc(k.fn(DAT_HANDLE_NULL), DAT_INVALID_HANDLE, k.subtype, (what + " NULL").c_str());
    expect_rc(k.fn(k.freed), DAT_INVALID_HANDLE, k.subtype, (what + " freed").c_str());
    if (k.other) expect_rc(k.fn(k.other), DAT_INVALID_HANDLE, k.subtype, (what + " another kind").c_str());
  }
  // The other node's live handle of the right kind in the freed one's place.
  for (const HandleCase& k : handle_cases(o, g_remote))
    expect_rc(k.fn(k.freed), DAT_INVALID_HANDLE, k.subtype, (std::string(k.call) + " another node's").c_str());
  nicsim_barrier();
  // An EP an RSP reserves: the calls its state does not allow.
  DAT_RSP_HANDLE rsp = DAT_HANDLE_NULL;
  DAT_LMR_TRIPLET iov{};
  DAT_RMR_TRIPLET riov{};
  sockaddr_in addr{AF_INET, 0, {0}, {0}};
  if (dat_rsp_create(o.ia, 9, o.ep, o.cr, &rsp) != DAT_SUCCESS) return 1;
  const int reserved = DAT_INVALID_STATE_EP_RESERVED;
  expect_rc(dat_ep_free(o.ep), DAT_INVALID_STATE, reserved, "free a reserved EP");
  expect_rc(dat_ep_post_rdma_write(o.ep, 0, &iov, {}, &riov, DAT_COMPLETION_DEFAULT_FLAG), DAT_INVALID_STATE, reserved,
            "RDMA write on a reserved EP");
  expect_rc(dat_ep_connect(o.ep, reinterpret_cast<DAT_IA_ADDRESS_PTR>(&addr), 1, 10, 0, nullptr, DAT_QOS_BEST_EFFORT,
                           DAT_CONNECT_DEFAULT_FLAG),
            DAT_INVALID_STATE, reserved, "connect a reserved EP");
  expect_rc(dat_ep_reset(o.ep), DAT_INVALID_STATE, reserved, "reset a reserved EP");
  expect_rc(dat_rsp_create(o.ia, 10, o.ep, o.cr, &rsp), DAT_INVALID_STATE, reserved, "reserve it twice");
  if (dat_ia_close(o.ia, DAT_CLOSE_ABRUPT_FLAG) != DAT_SUCCESS) return 1;
  nicsim_free(o.buf);
  return failures ? 1 : 0;
}

const int registered_handles = nicsim_register_program("dapl_bad_handles", bad_handles, "bad handles per call");

TEST(DaplErrors, EveryCallRefusesNullFreedWrongKindAndOtherNodeHandles) {
  testing::RunOptions o;
  o.inspect = [](World& w) {
    for (int i : {1, 2}) {
      Node* n = Node::of(w.node(i).host());
      ASSERT_NE(n, nullptr);
      EXPECT_EQ(n->counters().total(), 0u);
    }
  };
  const auto r = testing::run_text(
      "seed: 1\ntopology { star { hosts: 3 } nic: \"hca\" }\n"
      "workload { program: \"ib_sa\" nodes: \"h0\" }\n"
      "workload { program: \"dapl_bad_handles\" nodes: \"h1\" nodes: \"h2\" }\n",
      o);
  EXPECT_TRUE(r.ok);
  EXPECT_EQ(failures, 0);
}

}  // namespace
}  // namespace nicsim::dapl
