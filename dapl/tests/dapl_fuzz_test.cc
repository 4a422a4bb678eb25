// Bad input never crashes: thousands of DAT calls chosen at random (a
// seeded stream, so every run makes the same calls) on handles that are
// live, freed, of another kind, NULL or invented, with arguments in and
// out of range and NULL where a pointer may be missing. Every call must
// return (success or an error of the DAT classes), and after the abrupt
// close nothing of the provider is left. The sanitizer build checks that
// no call touched freed memory.
#include <dat/udat.h>

#include <functional>
#include <random>
#include <vector>

#include "dapl/programs/dapl_common.h"
#include "dapl/provider/dapl.h"
#include "nicsim/app.h"
#include "tests/world_run.h"
#include "world/node.h"

namespace nicsim::dapl {
namespace {

constexpr int kCalls = 10000;

struct Fuzz {
  std::mt19937 rng{20240611};
  DAT_IA_HANDLE ia = DAT_HANDLE_NULL;
  std::vector<DAT_HANDLE> handles;  // every handle ever returned, live or not
  unsigned char* buf = nullptr;
  DAT_LMR_CONTEXT lkey = 0;
  sockaddr_in peer{};  // the other node's address (two nodes)
  // With a peer, objects of the kinds connections need, picked more often.
  std::vector<DAT_HANDLE> pzs, dtos, evds, eps, crs;
  int bad_returns = 0, accepted = 0, established = 0;

  int pick(int n) { return static_cast<int>(rng() % static_cast<unsigned>(n)); }
  DAT_HANDLE handle() {
    const int r = pick(10);
    if (r == 0) return DAT_HANDLE_NULL;
    if (r == 1) return reinterpret_cast<DAT_HANDLE>(static_cast<std::uintptr_t>(rng()));
    if (r == 2 || handles.empty()) return ia;
    return handles[static_cast<std::size_t>(pick(static_cast<int>(handles.size())))];
  }
  DAT_HANDLE ia_arg() { return pick(5) ? ia : handle(); }  // mostly the IA, to make objects
  DAT_HANDLE from(const std::vector<DAT_HANDLE>& v) {
    return !v.empty() && pick(5) ? v[static_cast<std::size_t>(pick(static_cast<int>(v.size())))] : handle();
  }
  // A create call: its handle kept when it succeeds.
  template <class Call>
  DAT_HANDLE make(Call call) {
    DAT_HANDLE h = DAT_HANDLE_NULL;
    const DAT_RETURN rc = call(&h);
    if (rc == DAT_SUCCESS) handles.push_back(h);
    check(rc);
    return rc == DAT_SUCCESS ? h : DAT_HANDLE_NULL;
  }
  void check(DAT_RETURN rc) {
    if (rc != DAT_SUCCESS && (!(rc & DAT_CLASS_ERROR) || DAT_GET_TYPE(rc) == 0)) ++bad_returns;
  }
  DAT_LMR_TRIPLET triplet() {
    const DAT_VLEN len = static_cast<DAT_VLEN>(pick(3) == 0 ? 5000 : pick(512));
    return DAT_LMR_TRIPLET{pick(4) ? lkey : static_cast<DAT_LMR_CONTEXT>(rng()), 0,
                           reinterpret_cast<DAT_VADDR>(buf) + static_cast<DAT_VADDR>(pick(4096)), len};
  }
};

// The calls, each on random handles and arguments.
std::vector<std::function<void(Fuzz&)>> calls() {
  return {
      [](Fuzz& f) { f.make([&](DAT_HANDLE* h) { return dat_pz_create(f.ia_arg(), h); }); },
      [](Fuzz& f) { f.check(dat_pz_free(f.handle())); },
      [](Fuzz& f) {
        const auto flags = static_cast<DAT_EVD_FLAGS>(1 << f.pick(8));
        f.make([&](DAT_HANDLE* h) {
          return dat_evd_create(f.ia_arg(), f.pick(20) - 2, f.pick(4) ? DAT_HANDLE_NULL : f.handle(), flags, h);
        });
      },
      [](Fuzz& f) { f.check(dat_evd_free(f.handle())); },
      [](Fuzz& f) {
        DAT_EVENT ev;
        f.check(dat_evd_dequeue(f.handle(), f.pick(5) ? &ev : nullptr));
      },
      [](Fuzz& f) {
        DAT_EVENT ev;
        DAT_COUNT more;
        f.check(dat_evd_wait(f.handle(), static_cast<DAT_TIMEOUT>(f.pick(5)), f.pick(4), &ev, &more));
      },
      [](Fuzz& f) {
        DAT_EVENT ev{};
        ev.event_number = f.pick(4) ? DAT_SOFTWARE_EVENT : DAT_DTO_COMPLETION_EVENT;
        f.check(dat_evd_post_se(f.handle(), &ev));
      },
      [](Fuzz& f) {
        f.make([&](DAT_HANDLE* h) {
          return dat_ep_create(f.ia_arg(), f.handle(), f.handle(), f.handle(), f.handle(), nullptr, h);
        });
      },
      [](Fuzz& f) { f.check(dat_ep_free(f.handle())); },
      [](Fuzz& f) {
        DAT_EP_PARAM p{};
        p.pz_handle = f.handle(), p.recv_evd_handle = f.handle(), p.request_evd_handle = f.handle();
        p.ep_attr.max_recv_dtos = f.pick(40) - 4;
        f.check(dat_ep_modify(f.handle(), static_cast<DAT_EP_PARAM_MASK>(f.rng() & DAT_EP_FIELD_ALL), &p));
      },
      [](Fuzz& f) {
        DAT_LMR_TRIPLET iov[10];
        for (auto& t : iov) t = f.triplet();
        f.check(dat_ep_post_recv(f.handle(), f.pick(11) - 1, iov, DAT_DTO_COOKIE{}, DAT_COMPLETION_DEFAULT_FLAG));
      },
      [](Fuzz& f) {
        DAT_LMR_TRIPLET iov = f.triplet();
        DAT_RMR_TRIPLET r{static_cast<DAT_RMR_CONTEXT>(f.rng()), 0, 0, 64};
        f.check(dat_ep_post_rdma_write(f.handle(), 1, &iov, DAT_DTO_COOKIE{}, f.pick(3) ? &r : nullptr,
                                       DAT_COMPLETION_DEFAULT_FLAG));
      },
      [](Fuzz& f) { f.check(dat_ep_disconnect(f.handle(), static_cast<DAT_CLOSE_FLAGS>(f.pick(3)))); },
      [](Fuzz& f) { f.check(dat_ep_reset(f.handle())); },
      [](Fuzz& f) {
        DAT_REGION_DESCRIPTION region{};
        region.for_va = f.buf + f.pick(4096);
        DAT_LMR_CONTEXT lkey = 0;
        f.make([&](DAT_HANDLE* h) {
          return dat_lmr_create(f.ia_arg(), DAT_MEM_TYPE_VIRTUAL, region, static_cast<DAT_VLEN>(f.pick(6000)),
                                f.handle(), DAT_MEM_PRIV_ALL_FLAG, h, &lkey, nullptr, nullptr, nullptr);
        });
        if (lkey) f.lkey = lkey;
      },
      [](Fuzz& f) { f.check(dat_lmr_free(f.handle())); },
      [](Fuzz& f) { f.make([&](DAT_HANDLE* h) { return dat_rmr_create(f.handle(), h); }); },
      [](Fuzz& f) {
        DAT_LMR_TRIPLET t = f.triplet();
        DAT_RMR_CONTEXT ctx;
        f.check(dat_rmr_bind(f.handle(), &t, DAT_MEM_PRIV_REMOTE_READ_FLAG, f.handle(), DAT_RMR_COOKIE{},
                             DAT_COMPLETION_DEFAULT_FLAG, &ctx));
      },
      [](Fuzz& f) { f.check(dat_rmr_free(f.handle())); },
      [](Fuzz& f) {
        f.make([&](DAT_HANDLE* h) {
          return dat_psp_create(f.ia_arg(), static_cast<DAT_CONN_QUAL>(f.pick(4)), f.handle(), DAT_PSP_CONSUMER_FLAG,
                                h);
        });
      },
      [](Fuzz& f) { f.check(dat_psp_free(f.handle())); },
      [](Fuzz& f) {
        f.make([&](DAT_HANDLE* h) {
          return dat_rsp_create(f.ia_arg(), static_cast<DAT_CONN_QUAL>(10 + f.pick(4)), f.handle(), f.handle(), h);
        });
      },
      [](Fuzz& f) { f.check(dat_rsp_free(f.handle())); },
      [](Fuzz& f) { f.make([&](DAT_HANDLE* h) { return dat_cno_create(f.ia_arg(), DAT_OS_WAIT_PROXY_AGENT{}, h); }); },
      [](Fuzz& f) { f.check(dat_cno_free(f.handle())); },
      [](Fuzz& f) {
        DAT_EVD_HANDLE e;
        f.check(dat_cno_wait(f.handle(), static_cast<DAT_TIMEOUT>(f.pick(3)), &e));
      },
      [](Fuzz& f) { f.check(dat_evd_modify_cno(f.handle(), f.handle())); },
      [](Fuzz& f) {
        DAT_HANDLE_TYPE t;
        f.check(dat_get_handle_type(f.handle(), &t));
      },
      [](Fuzz& f) { f.check(dat_cr_reject(f.handle())); },
  };
}

// With a peer: connections, requests and DTOs that may reach it.
std::vector<std::function<void(Fuzz&)>> peer_calls() {
  return {
      [](Fuzz& f) {
        f.check(dat_ep_connect(f.from(f.eps), reinterpret_cast<DAT_IA_ADDRESS_PTR>(&f.peer),
                               static_cast<DAT_CONN_QUAL>(f.pick(5)), static_cast<DAT_TIMEOUT>(20 + f.pick(3000)),
                               f.pick(100), f.buf, DAT_QOS_BEST_EFFORT, DAT_CONNECT_DEFAULT_FLAG));
      },
      [](Fuzz& f) {
        DAT_EVENT ev{};
        const DAT_RETURN rc = dat_evd_dequeue(f.from(f.evds), &ev);
        f.check(rc);
        if (rc == DAT_SUCCESS && ev.event_number == DAT_CONNECTION_REQUEST_EVENT)
          f.crs.push_back(ev.event_data.cr_arrival_event_data.cr_handle);
        if (rc == DAT_SUCCESS && ev.event_number == DAT_CONNECTION_EVENT_ESTABLISHED) ++f.established;
      },
      [](Fuzz& f) {
        const DAT_RETURN rc =
            dat_cr_accept(f.from(f.crs), f.pick(3) ? f.from(f.eps) : DAT_HANDLE_NULL, f.pick(200), f.buf);
        f.check(rc);
        f.accepted += rc == DAT_SUCCESS;
      },
      [](Fuzz& f) {
        DAT_LMR_TRIPLET iov = f.triplet();
        f.check(dat_ep_post_send(f.from(f.eps), 1, &iov, DAT_DTO_COOKIE{}, DAT_COMPLETION_DEFAULT_FLAG));
      },
      [](Fuzz& f) {
        DAT_LMR_TRIPLET iov = f.triplet();
        DAT_RMR_TRIPLET r{f.lkey + static_cast<DAT_RMR_CONTEXT>(f.pick(2)), 0,
                          reinterpret_cast<DAT_VADDR>(f.buf) + static_cast<DAT_VADDR>(f.pick(64)), 64};
        f.check(dat_ep_post_rdma_read(f.from(f.eps), 1, &iov, DAT_DTO_COOKIE{}, &r, DAT_COMPLETION_DEFAULT_FLAG));
      },
      [](Fuzz& f) { nicsim_sleep_ns(static_cast<std::uint64_t>(f.pick(20000))); },
      [](Fuzz& f) {
        const DAT_HANDLE ep = f.make([&](DAT_HANDLE* h) {
          return dat_ep_create(f.ia, f.from(f.pzs), f.from(f.dtos), f.from(f.dtos), f.from(f.evds), nullptr, h);
        });
        if (ep) f.eps.push_back(ep);
      },
      [](Fuzz& f) {
        DAT_LMR_TRIPLET iov = f.triplet();
        f.check(dat_ep_post_recv(f.from(f.eps), 1, &iov, DAT_DTO_COOKIE{}, DAT_COMPLETION_DEFAULT_FLAG));
      },
      [](Fuzz& f) { f.check(dat_ep_disconnect(f.from(f.eps), static_cast<DAT_CLOSE_FLAGS>(f.pick(2)))); },
      [](Fuzz& f) { f.check(dat_cr_reject(f.from(f.crs))); },
  };
}

// What connections need, made first when there is a peer: PZs, DTO and
// connection EVDs, a CR EVD with PSPs on qualifiers 0 to 2, an LMR.
bool base_objects(Fuzz& f) {
  DAT_HANDLE h = DAT_HANDLE_NULL;
  for (int i = 0; i < 2; ++i) {
    if (dat_pz_create(f.ia, &h)) return false;
    f.pzs.push_back(h);
    if (dat_evd_create(f.ia, 64, DAT_HANDLE_NULL, DAT_EVD_DTO_FLAG, &h)) return false;
    f.dtos.push_back(h), f.evds.push_back(h);
    if (dat_evd_create(f.ia, 16, DAT_HANDLE_NULL, DAT_EVD_CONNECTION_FLAG, &h)) return false;
    f.evds.push_back(h);
  }
  DAT_EVD_HANDLE cr_evd = DAT_HANDLE_NULL;
  if (dat_evd_create(f.ia, 16, DAT_HANDLE_NULL, DAT_EVD_CR_FLAG, &cr_evd)) return false;
  f.evds.push_back(cr_evd);
  for (DAT_CONN_QUAL q = 0; q < 3; ++q)
    if (dat_psp_create(f.ia, q, cr_evd, DAT_PSP_CONSUMER_FLAG, &h)) return false;
  DAT_REGION_DESCRIPTION region{};
  region.for_va = f.buf;
  if (dat_lmr_create(f.ia, DAT_MEM_TYPE_VIRTUAL, region, 4096, f.pzs[0], DAT_MEM_PRIV_ALL_FLAG, &h, &f.lkey, nullptr,
                     nullptr, nullptr))
    return false;
  f.handles.insert(f.handles.end(), f.pzs.begin(), f.pzs.end());
  f.handles.insert(f.handles.end(), f.evds.begin(), f.evds.end());
  return true;
}

int fuzz_main(int, char**) {
  Fuzz f;
  char ib0[] = "ib0";
  DAT_EVD_HANDLE async = DAT_HANDLE_NULL;
  if (dat_ia_open(ib0, 8, &async, &f.ia) != DAT_SUCCESS) return 1;
  f.buf = static_cast<unsigned char*>(nicsim_alloc(4096, 64));
  f.rng.seed(20240611 + nicsim_workload_rank());
  const auto any = calls(), peer = peer_calls();
  const bool two = nicsim_workload_size() == 2;
  if (two) {
    dt_addr(&f.peer, dt_node_ip(nicsim_workload_node(1 - nicsim_workload_rank())));
    if (!base_objects(f)) return 1;
    nicsim_barrier();
  }
  for (int i = 0; i < kCalls; ++i) {
    const auto& set = two && f.pick(3) ? peer : any;  // with a peer, mostly the calls connections need
    set[static_cast<std::size_t>(f.pick(static_cast<int>(set.size())))](f);
  }
  if (nicsim_workload_size() == 2) nicsim_barrier();
  const DAT_RETURN rc = dat_ia_close(f.ia, DAT_CLOSE_ABRUPT_FLAG);
  nicsim_free(f.buf);
  nicsim_result("handles", static_cast<double>(f.handles.size()), "");
  nicsim_result("bad_returns", f.bad_returns, "");
  nicsim_result(nicsim_workload_rank() ? "accepted_1" : "accepted_0", f.accepted, "");
  nicsim_result(nicsim_workload_rank() ? "established_1" : "established_0", f.established, "");
  return rc == DAT_SUCCESS ? 0 : 1;
}

const int registered = nicsim_register_program("dapl_fuzz", fuzz_main, "random DAT calls on random handles");

TEST(DaplFuzz, RandomCallsOnRandomHandlesNeverCrashAndLeaveNothing) {
  testing::RunOptions o;
  o.inspect = [](World& w) {
    Node* n = Node::of(w.node(1).host());
    ASSERT_NE(n, nullptr);
    EXPECT_EQ(n->counters().total(), 0u);
  };
  const auto r = testing::run_text(
      "seed: 1\ntopology { star { hosts: 2 } nic: \"hca\" }\n"
      "workload { program: \"ib_sa\" nodes: \"h0\" }\n"
      "workload { program: \"dapl_fuzz\" nodes: \"h1\" }\n",
      o);
  EXPECT_TRUE(r.ok);
  EXPECT_EQ(r.results.at("bad_returns"), 0);
  EXPECT_GT(r.results.at("handles"), 300);  // enough objects were made to be used and freed
}

TEST(DaplFuzz, TwoNodesConnectingAcceptingAndPostingAtRandom) {
  testing::RunOptions o;
  o.inspect = [](World& w) {
    for (std::uint32_t i = 1; i < 3; ++i) {
      Node* n = Node::of(w.node(i).host());
      ASSERT_NE(n, nullptr);
      EXPECT_EQ(n->counters().total(), 0u) << w.node(i).name();
    }
  };
  const auto r = testing::run_text(
      "seed: 1\ntopology { star { hosts: 3 } nic: \"hca\" }\n"
      "workload { program: \"ib_sa\" nodes: \"h0\" }\n"
      "workload { program: \"dapl_fuzz\" nodes: \"h1\" nodes: \"h2\" }\n",
      o);
  EXPECT_TRUE(r.ok);
  EXPECT_EQ(r.results.at("bad_returns"), 0);
  // Connections were made and accepted both ways (the seeded stream's).
  for (const char* k : {"accepted_0", "accepted_1", "established_0", "established_1"})
    EXPECT_GT(r.results.at(k), 0) << k;
}

}  // namespace
}  // namespace nicsim::dapl
