// DAT calls with bad arguments and good handles, as one table of (call,
// argument class, the argument the error names): NULL out-pointers and
// parameter blocks, counts and sizes out of range, unknown flags and
// types. The EP is unconnected: the posts that need a connected one
// check their state first (their bad arguments are in dapl_rmr_test.cc). Each answers DAT_INVALID_PARAMETER with the
// subtype DAT_INVALID_ARG<n> of the argument at fault (uDAPL 1.1), changes nothing, and the objects still close
// gracefully one by one afterwards. Bad handles and wrong states are in dapl_errors_test.cc.
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

struct Objects {
  DAT_IA_HANDLE ia = DAT_HANDLE_NULL;
  DAT_EVD_HANDLE async = DAT_HANDLE_NULL, dto = DAT_HANDLE_NULL, conn = DAT_HANDLE_NULL, cr = DAT_HANDLE_NULL;
  DAT_PZ_HANDLE pz = DAT_HANDLE_NULL;
  DAT_EP_HANDLE ep = DAT_HANDLE_NULL;
  DAT_LMR_HANDLE lmr = DAT_HANDLE_NULL;
  DAT_RMR_HANDLE rmr = DAT_HANDLE_NULL;
  DAT_PSP_HANDLE psp = DAT_HANDLE_NULL;
  DAT_LMR_CONTEXT lkey = 0;
  DAT_VADDR addr = 0;
  unsigned char* buf = nullptr;
};

struct Row {
  const char* call;
  const char* arg_class;
  int arg;  // DAT_INVALID_ARG<arg>
  std::function<DAT_RETURN(Objects&)> fn;
};

// Outputs and inputs the rows pass (their values are not looked at).
DAT_HANDLE out = DAT_HANDLE_NULL;
DAT_EVENT ev{};
DAT_COUNT more = 0;
DAT_LMR_CONTEXT lctx = 0;
DAT_RMR_CONTEXT rctx = 0;
DAT_DTO_COOKIE cookie{};
DAT_RMR_COOKIE rcookie{};
sockaddr_in peer{AF_INET, 0, {0}, {0}};
constexpr auto kFlags = DAT_COMPLETION_DEFAULT_FLAG;
char ib0[] = "ib0";

DAT_REGION_DESCRIPTION region_of(const Objects& o) {
  DAT_REGION_DESCRIPTION r{};
  r.for_va = o.buf;
  return r;
}

std::vector<Row> ia_and_evd_rows() {
  return {
      {"dat_ia_open", "async queue length 0", 2, [](Objects&) { return dat_ia_open(ib0, 0, &out, &out); }},
      {"dat_ia_open", "NULL async EVD pointer", 3, [](Objects&) { return dat_ia_open(ib0, 8, nullptr, &out); }},
      {"dat_ia_open", "NULL IA pointer", 4, [](Objects&) { return dat_ia_open(ib0, 8, &out, nullptr); }},
      {"dat_ia_close", "unknown close flag", 2,
       [](Objects& o) { return dat_ia_close(o.ia, static_cast<DAT_CLOSE_FLAGS>(7)); }},
      {"dat_ia_query", "IA attributes asked, NULL block", 4,
       [](Objects& o) { return dat_ia_query(o.ia, &out, DAT_IA_ALL, nullptr, 0, nullptr); }},
      {"dat_registry_list_providers", "negative count", 1,
       [](Objects&) { return dat_registry_list_providers(-1, &more, nullptr); }},
      {"dat_registry_list_providers", "NULL count returned", 2,
       [](Objects&) { return dat_registry_list_providers(0, nullptr, nullptr); }},
      {"dat_registry_list_providers", "entries asked, NULL list", 3,
       [](Objects&) { return dat_registry_list_providers(4, &more, nullptr); }},
      {"dat_pz_create", "NULL PZ pointer", 2, [](Objects& o) { return dat_pz_create(o.ia, nullptr); }},
      {"dat_pz_query", "NULL parameter block", 3,
       [](Objects& o) { return dat_pz_query(o.pz, DAT_PZ_FIELD_ALL, nullptr); }},
      {"dat_evd_create", "queue length 0", 2,
       [](Objects& o) { return dat_evd_create(o.ia, 0, DAT_HANDLE_NULL, DAT_EVD_DTO_FLAG, &out); }},
      {"dat_evd_create", "queue length beyond 65536", 2,
       [](Objects& o) { return dat_evd_create(o.ia, 65537, DAT_HANDLE_NULL, DAT_EVD_DTO_FLAG, &out); }},
      {"dat_evd_create", "no flags", 4,
       [](Objects& o) { return dat_evd_create(o.ia, 8, DAT_HANDLE_NULL, static_cast<DAT_EVD_FLAGS>(0), &out); }},
      {"dat_evd_create", "unknown flag", 4,
       [](Objects& o) {
         return dat_evd_create(o.ia, 8, DAT_HANDLE_NULL, static_cast<DAT_EVD_FLAGS>(0x40000000), &out);
       }},
      {"dat_evd_create", "NULL EVD pointer", 5,
       [](Objects& o) { return dat_evd_create(o.ia, 8, DAT_HANDLE_NULL, DAT_EVD_DTO_FLAG, nullptr); }},
      {"dat_evd_query", "NULL parameter block", 3,
       [](Objects& o) { return dat_evd_query(o.dto, DAT_EVD_FIELD_ALL, nullptr); }},
      {"dat_evd_resize", "queue length 0", 2, [](Objects& o) { return dat_evd_resize(o.dto, 0); }},
      {"dat_evd_post_se", "NULL event", 2, [](Objects& o) { return dat_evd_post_se(o.dto, nullptr); }},
      {"dat_evd_post_se", "not a software event", 2,
       [](Objects& o) {
         DAT_EVENT e{};
         e.event_number = DAT_DTO_COMPLETION_EVENT;
         return dat_evd_post_se(o.dto, &e);
       }},
      {"dat_evd_dequeue", "NULL event", 2, [](Objects& o) { return dat_evd_dequeue(o.dto, nullptr); }},
      {"dat_evd_wait", "threshold 0", 3, [](Objects& o) { return dat_evd_wait(o.dto, 0, 0, &ev, &more); }},
      {"dat_evd_wait", "NULL event", 4, [](Objects& o) { return dat_evd_wait(o.dto, 0, 1, nullptr, &more); }},
      {"dat_evd_wait", "NULL count left", 5, [](Objects& o) { return dat_evd_wait(o.dto, 0, 1, &ev, nullptr); }},
      {"dat_get_handle_type", "NULL type", 2, [](Objects& o) { return dat_get_handle_type(o.ep, nullptr); }},
      {"dat_get_consumer_context", "NULL context", 2,
       [](Objects& o) { return dat_get_consumer_context(o.ep, nullptr); }},
  };
}

std::vector<Row> ep_rows() {
  auto connect = [](Objects& o, DAT_IA_ADDRESS_PTR a, DAT_COUNT size, DAT_QOS q, DAT_CONNECT_FLAGS f) {
    return dat_ep_connect(o.ep, a, 1, 10, size, nullptr, q, f);
  };
  auto* p = reinterpret_cast<DAT_IA_ADDRESS_PTR>(&peer);
  const auto Q = DAT_QOS_BEST_EFFORT;
  const auto F = DAT_CONNECT_DEFAULT_FLAG;
  return {
      {"dat_ep_create", "NULL EP pointer", 7,
       [](Objects& o) { return dat_ep_create(o.ia, o.pz, o.dto, o.dto, o.conn, nullptr, nullptr); }},
      {"dat_ep_query", "NULL parameter block", 3,
       [](Objects& o) { return dat_ep_query(o.ep, DAT_EP_FIELD_ALL, nullptr); }},
      {"dat_ep_modify", "NULL parameter block", 3,
       [](Objects& o) { return dat_ep_modify(o.ep, DAT_EP_FIELD_PZ_HANDLE, nullptr); }},
      {"dat_ep_connect", "NULL address", 2, [=](Objects& o) { return connect(o, nullptr, 0, Q, F); }},
      {"dat_ep_connect", "negative private data size", 5, [=](Objects& o) { return connect(o, p, -1, Q, F); }},
      {"dat_ep_connect", "private data size with NULL data", 6, [=](Objects& o) { return connect(o, p, 8, Q, F); }},
      {"dat_ep_connect", "unknown quality of service", 7,
       [=](Objects& o) { return connect(o, p, 0, static_cast<DAT_QOS>(0x100), F); }},
      {"dat_ep_connect", "unknown connect flag", 8,
       [=](Objects& o) { return connect(o, p, 0, Q, static_cast<DAT_CONNECT_FLAGS>(9)); }},
      {"dat_ep_disconnect", "unknown close flag", 2,
       [](Objects& o) { return dat_ep_disconnect(o.ep, static_cast<DAT_CLOSE_FLAGS>(7)); }},
      {"dat_ep_post_recv", "negative segment count", 2,
       [](Objects& o) { return dat_ep_post_recv(o.ep, -1, nullptr, cookie, kFlags); }},
      {"dat_ep_post_recv", "segments with NULL IOV", 3,
       [](Objects& o) { return dat_ep_post_recv(o.ep, 1, nullptr, cookie, kFlags); }},
      {"dat_psp_create", "unknown PSP flag", 4,
       [](Objects& o) { return dat_psp_create(o.ia, 0x90, o.cr, static_cast<DAT_PSP_FLAGS>(7), &out); }},
      {"dat_psp_create", "NULL PSP pointer", 5,
       [](Objects& o) { return dat_psp_create(o.ia, 0x90, o.cr, DAT_PSP_CONSUMER_FLAG, nullptr); }},
      {"dat_psp_query", "NULL parameter block", 3,
       [](Objects& o) { return dat_psp_query(o.psp, DAT_PSP_FIELD_ALL, nullptr); }},
      {"dat_rsp_create", "NULL RSP pointer", 5,
       [](Objects& o) { return dat_rsp_create(o.ia, 0x91, o.ep, o.cr, nullptr); }},
  };
}

std::vector<Row> memory_rows() {
  auto lmr = [](Objects& o, DAT_MEM_TYPE t, bool null_va, DAT_VLEN len, DAT_MEM_PRIV_FLAGS priv, bool null_h,
                bool null_ctx) {
    DAT_REGION_DESCRIPTION r = region_of(o);
    if (null_va) r.for_va = nullptr;
    return dat_lmr_create(o.ia, t, r, len, o.pz, priv, null_h ? nullptr : &out, null_ctx ? nullptr : &lctx, nullptr,
                          nullptr, nullptr);
  };
  const auto V = DAT_MEM_TYPE_VIRTUAL;
  const auto R = DAT_MEM_PRIV_REMOTE_READ_FLAG;  // a window's privilege
  const auto A = DAT_MEM_PRIV_ALL_FLAG;
  auto bind = [](Objects& o, bool null_iov, DAT_MEM_PRIV_FLAGS priv, bool null_ctx) {
    DAT_LMR_TRIPLET iov{o.lkey, 0, o.addr, 64};
    return dat_rmr_bind(o.rmr, null_iov ? nullptr : &iov, priv, o.ep, rcookie, kFlags, null_ctx ? nullptr : &rctx);
  };
  return {
      {"dat_lmr_create", "unknown memory type", 2,
       [=](Objects& o) { return lmr(o, static_cast<DAT_MEM_TYPE>(0x77), false, 256, A, false, false); }},
      {"dat_lmr_create", "NULL address", 3, [=](Objects& o) { return lmr(o, V, true, 256, A, false, false); }},
      {"dat_lmr_create", "length 0", 4, [=](Objects& o) { return lmr(o, V, false, 0, A, false, false); }},
      {"dat_lmr_create", "length beyond 32 bits", 4,
       [=](Objects& o) { return lmr(o, V, false, DAT_VLEN{1} << 33, A, false, false); }},
      {"dat_lmr_create", "unknown privilege", 6,
       [=](Objects& o) { return lmr(o, V, false, 256, static_cast<DAT_MEM_PRIV_FLAGS>(0x10000), false, false); }},
      {"dat_lmr_create", "NULL LMR pointer", 7, [=](Objects& o) { return lmr(o, V, false, 256, A, true, false); }},
      {"dat_lmr_create", "NULL LMR context pointer", 8,
       [=](Objects& o) { return lmr(o, V, false, 256, A, false, true); }},
      {"dat_lmr_query", "NULL parameter block", 3,
       [](Objects& o) { return dat_lmr_query(o.lmr, DAT_LMR_FIELD_ALL, nullptr); }},
      {"dat_rmr_create", "NULL RMR pointer", 2, [](Objects& o) { return dat_rmr_create(o.pz, nullptr); }},
      {"dat_rmr_query", "NULL parameter block", 3,
       [](Objects& o) { return dat_rmr_query(o.rmr, DAT_RMR_FIELD_ALL, nullptr); }},
      {"dat_rmr_bind", "NULL LMR triplet", 2, [=](Objects& o) { return bind(o, true, R, false); }},
      {"dat_rmr_bind", "unknown privilege", 3,
       [=](Objects& o) { return bind(o, false, static_cast<DAT_MEM_PRIV_FLAGS>(0x10000), false); }},
      {"dat_rmr_bind", "NULL RMR context pointer", 7, [=](Objects& o) { return bind(o, false, R, true); }},
  };
}

bool make_objects(Objects& o) {
  o.buf = static_cast<unsigned char*>(nicsim_alloc(4096, 64));
  DAT_VLEN len = 0;
  return dat_ia_open(ib0, 8, &o.async, &o.ia) == DAT_SUCCESS && dat_pz_create(o.ia, &o.pz) == DAT_SUCCESS &&
         dat_evd_create(o.ia, 8, DAT_HANDLE_NULL, DAT_EVD_DTO_FLAG, &o.dto) == DAT_SUCCESS &&
         dat_evd_create(o.ia, 8, DAT_HANDLE_NULL, DAT_EVD_CONNECTION_FLAG, &o.conn) == DAT_SUCCESS &&
         dat_evd_create(o.ia, 8, DAT_HANDLE_NULL, DAT_EVD_CR_FLAG, &o.cr) == DAT_SUCCESS &&
         dat_ep_create(o.ia, o.pz, o.dto, o.dto, o.conn, nullptr, &o.ep) == DAT_SUCCESS &&
         dat_lmr_create(o.ia, DAT_MEM_TYPE_VIRTUAL, region_of(o), 4096, o.pz, DAT_MEM_PRIV_ALL_FLAG, &o.lmr, &o.lkey,
                        nullptr, &len, &o.addr) == DAT_SUCCESS &&
         dat_rmr_create(o.pz, &o.rmr) == DAT_SUCCESS &&
         dat_psp_create(o.ia, 0x77, o.cr, DAT_PSP_CONSUMER_FLAG, &o.psp) == DAT_SUCCESS;
}

// Graceful frees, one by one: each object is still there and in use by no
// row's leftovers.
void free_objects(Objects& o) {
  EXPECT_EQ(dat_psp_free(o.psp), DAT_SUCCESS);
  EXPECT_EQ(dat_rmr_free(o.rmr), DAT_SUCCESS);
  EXPECT_EQ(dat_lmr_free(o.lmr), DAT_SUCCESS);
  EXPECT_EQ(dat_ep_free(o.ep), DAT_SUCCESS);
  for (DAT_EVD_HANDLE e : {o.dto, o.conn, o.cr}) EXPECT_EQ(dat_evd_free(e), DAT_SUCCESS);
  EXPECT_EQ(dat_pz_free(o.pz), DAT_SUCCESS);
  EXPECT_EQ(dat_ia_close(o.ia, DAT_CLOSE_GRACEFUL_FLAG), DAT_SUCCESS);
  nicsim_free(o.buf);
}

int g_rows = 0;

int bad_arguments(int, char**) {
  Objects o;
  if (!make_objects(o)) return 1;
  for (auto part : {ia_and_evd_rows, ep_rows, memory_rows})
    for (const Row& r : part()) {
      ++g_rows;
      const DAT_RETURN got = r.fn(o);
      const auto want = static_cast<DAT_UINT32>(DAT_INVALID_ARG1 + r.arg - 1);
      EXPECT_TRUE(DAT_GET_TYPE(got) == static_cast<DAT_UINT32>(DAT_INVALID_PARAMETER) && DAT_GET_SUBTYPE(got) == want)
          << r.call << " with " << r.arg_class << ": got 0x" << std::hex << got << ", want DAT_INVALID_PARAMETER | "
          << "DAT_INVALID_ARG" << std::dec << r.arg;
    }
  free_objects(o);
  return ::testing::Test::HasFailure() ? 1 : 0;
}
const int registered = nicsim_register_program("dapl_bad_arguments", bad_arguments, "bad arguments per call");

TEST(DaplAbuse, EveryCallAnswersBadArgumentsWithTheArgumentsSubtype) {
  testing::RunOptions o;
  o.inspect = [](World& w) {
    Node* n = Node::of(w.node(1).host());
    ASSERT_NE(n, nullptr);
    EXPECT_EQ(n->counters().total(), 0u);
  };
  testing::run_text(
      "seed: 1\ntopology { star { hosts: 2 } nic: \"hca\" }\n"
      "workload { program: \"ib_sa\" nodes: \"h0\" }\n"
      "workload { program: \"dapl_bad_arguments\" nodes: \"h1\" }\n",
      o);
  EXPECT_EQ(g_rows, 25 + 15 + 13);  // a row lost in an edit shows here
}

}  // namespace
}  // namespace nicsim::dapl
