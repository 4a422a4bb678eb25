// The Elan provider of the Transport Interface from interrupt context, as
// a table of (operation, status), the counterpart of ti_abuse_test.cc's
// rows for the IB provider. The seed lists no status: what allocates
// Elan resources, registers memory, sets up or tears down an instance or
// a connection answers TI_INVALID_OPERATION; creating and destroying PDs
// and CQs (host memory only, no Elan resource), pools' get, put and
// destroy, CQ rearm and debug levels answer as on a thread. Nothing
// reports a blocking call. The rows run from a host timer.
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "core/sim.h"
#include "host/host.h"
#include "sim/tests/world_run.h"
#include "ti/elan/ti_elan.h"
#include "ti/tests/ti_peer.h"
#include "world/programs.h"

namespace nicsim::ti {
namespace {

using namespace nicsim::ti::testing;

constexpr ti_port_t kPort = 6200;

struct Objects {
  ti_ops_t* o = nullptr;
  ti_handle_t ti = nullptr;
  ti_endpoint_handle_t me = nullptr, me2 = nullptr, peer = nullptr;
  ti_pd_handle_t pd = nullptr;
  ti_cq_handle_t cq = nullptr, spare_cq = nullptr;
  ti_res_pool_handle_t pool = nullptr, spare_pool = nullptr;
  ti_mem_handle_t mem = nullptr;
  unsigned char* region = nullptr;
  ti_conn_request_t req{};
};
Objects g_obj;

struct Row {
  const char* op;
  ti_status_t want;
  std::function<ti_status_t(Objects&)> call;
};

struct Outcome {
  int rows = 0;
  std::vector<std::string> wrong;
  bool irq_done = false;
};
Outcome g_out;

void no_request(ti_conn_request_t*) {}

ti_conn_info_t info_of(Objects& s, ti_endpoint_handle_t src, ti_endpoint_handle_t dst) {
  ti_conn_info_t i{};
  i.src_ep = src;
  i.dst_ep = dst;
  i.pdh = s.pd;
  if (dst) i.send_cqh = i.recv_cqh = s.cq;
  i.conn_request_cb = no_request;
  return i;
}

std::vector<Row> irq_rows() {
  const ti_status_t OP = TI_INVALID_OPERATION, OK = TI_SUCCESS;
  static ti_data_element_t* got = nullptr;
  static ti_pd_handle_t pd = nullptr;
  static ti_cq_handle_t cq = nullptr;
  return {
      {"create_ti", OP,
       [](Objects& s) {
         ti_handle_t t = nullptr;
         return s.o->create_ti(&t);
       }},
      {"destroy_ti", OP, [](Objects& s) { return s.o->destroy_ti(s.ti, nullptr, nullptr); }},
      {"reg_virt_mem", OP,
       [](Objects& s) {
         ti_rdma_desc_t d{};
         ti_mem_handle_t m = nullptr;
         return s.o->reg_virt_mem(s.ti, s.pd, s.region + 4096, 4096, TI_MEM_READ, &d, &m);
       }},
      {"dereg_mem", OP, [](Objects& s) { return s.o->dereg_mem(s.mem); }},
      {"res_pool_create", OP,
       [](Objects& s) {
         uint32_t size = 64;
         ti_res_pool_handle_t p = nullptr;
         return s.o->res_pool_create(s.ti, TI_RES_POOL_MSG, 2, 1, &size, 0, &p);
       }},
      {"listen", OP,
       [](Objects& s) {
         ti_conn_attr_t a = default_attr();
         ti_conn_info_t i = info_of(s, s.me2, nullptr);
         ti_conn_handle_t c = nullptr;
         return s.o->listen(s.ti, &a, &i, nullptr, &c);
       }},
      {"connect", OP,
       [](Objects& s) {
         ti_conn_attr_t a = default_attr();
         ti_conn_info_t i = info_of(s, s.me, s.peer);
         ti_conn_handle_t c = nullptr;
         return s.o->connect(s.ti, &a, &i, &s.req, &c);
       }},
      {"create_pd (allowed)", OK, [](Objects& s) { return s.o->create_pd(s.ti, s.me, &pd); }},
      {"create_cq (allowed)", OK, [](Objects& s) { return s.o->create_cq(s.ti, pd, 8, &cq); }},
      {"destroy_cq (allowed)", OK, [](Objects& s) { return s.o->destroy_cq(cq); }},
      {"destroy_pd (allowed)", OK, [](Objects& s) { return s.o->destroy_pd(pd); }},
      {"res_pool_destroy (allowed)", OK, [](Objects& s) { return s.o->res_pool_destroy(s.spare_pool); }},
      {"res_pool_get (allowed)", OK,
       [](Objects& s) {
         ti_pool_response_t r{};
         const ti_status_t st = s.o->res_pool_get(s.pool, 1, FALSE, nullptr, nullptr, nullptr, &r);
         got = r.p_element_list;
         return st;
       }},
      {"res_pool_put (allowed)", OK, [](Objects& s) { return s.o->res_pool_put(s.pool, got); }},
      {"rearm_cq (allowed)", OK, [](Objects& s) { return s.o->rearm_cq(s.cq); }},
      {"debug_svc (allowed)", OK, [](Objects& s) { return s.o->debug_svc(s.ti, TI_DBG_OFF); }},
  };
}

void run_irq_rows() {
  for (const Row& r : irq_rows()) {
    const std::size_t before = Sim::get().errors().all().size();
    const ti_status_t got = r.call(g_obj);
    const bool reported = Sim::get().errors().all().size() > before;
    ++g_out.rows;
    if (got != r.want || reported)
      g_out.wrong.push_back(std::string(r.op) + " from interrupt context: got " + ti_status_to_str(got) +
                            (reported ? " (and a simulation error)" : "") + ", want " + ti_status_to_str(r.want));
  }
  g_out.irq_done = true;
}

void open_objects(Objects& s) {
  s.o = ti_elan_transport_load();
  ASSERT_NE(s.o, nullptr);
  ASSERT_EQ(s.o->create_ti(&s.ti), TI_SUCCESS);
  ti_inet_addr_t me = ip_of_node(nicsim_node_id()), peer = ip_of_node(nicsim_workload_node(1));
  ASSERT_EQ(s.o->create_endpoint(s.ti, &me, kPort, &s.me), TI_SUCCESS);
  ASSERT_EQ(s.o->create_endpoint(s.ti, &me, kPort + 1, &s.me2), TI_SUCCESS);
  ASSERT_EQ(s.o->create_endpoint(s.ti, &peer, kPort, &s.peer), TI_SUCCESS);
  ASSERT_EQ(s.o->create_pd(s.ti, s.me, &s.pd), TI_SUCCESS);
  ASSERT_EQ(s.o->create_cq(s.ti, s.pd, 16, &s.cq), TI_SUCCESS);
  uint32_t size = 256;
  ASSERT_EQ(s.o->res_pool_create(s.ti, TI_RES_POOL_MSG, 4, 1, &size, 0, &s.pool), TI_SUCCESS);
  ASSERT_EQ(s.o->res_pool_create(s.ti, TI_RES_POOL_MSG, 4, 1, &size, 0, &s.spare_pool), TI_SUCCESS);
  s.region = static_cast<unsigned char*>(nicsim_alloc(8192, 64));
  ti_rdma_desc_t d{};
  ASSERT_EQ(s.o->reg_virt_mem(s.ti, s.pd, s.region, 4096, TI_MEM_READ_WRITE, &d, &s.mem), TI_SUCCESS);
}

int elan_abuse_probe(int, char**) {
  if (nicsim_workload_rank() == 1) return 0;  // the peer's address only
  Objects& s = g_obj;
  open_objects(s);
  if (::testing::Test::HasFatalFailure()) return 1;
  host::Timer timer(*host::Host::current_host(), "ti_elan_abuse", run_irq_rows);
  timer.start(1000);
  wait_for([] { return g_out.irq_done; });
  // What the rows refused is still there and still works.
  EXPECT_EQ(s.o->dereg_mem(s.mem), TI_SUCCESS);
  volatile int gone = 0;
  EXPECT_EQ(s.o->destroy_ti(s.ti, peer_counted, const_cast<int*>(&gone)), TI_SUCCESS);
  EXPECT_TRUE(wait_until(gone, 1));
  nicsim_free(s.region);
  return ::testing::Test::HasFailure() ? 1 : 0;
}
const BuiltinProgram reg_elan_abuse("ti_elan_abuse_probe", elan_abuse_probe,
                                    "test: Elan TI calls from interrupt context");

TEST(TiAbuse, ElanProviderFromInterruptContextIsAStatusNeverACrash) {
  nicsim::testing::run_text(
      "seed: 1\ntopology { elite_fat_tree { nodes: 2 } node_param { key: \"bus.profile\" value: \"pci-66\" } }\n"
      "link_defaults { delay: \"10ns\" }\n"
      "workload { program: \"ti_elan_abuse_probe\" nodes: \"h0\" nodes: \"h1\" }\n");
  EXPECT_EQ(g_out.rows, 16);  // a row lost in an edit shows here
  for (const std::string& w : g_out.wrong) ADD_FAILURE() << w;
  EXPECT_TRUE(g_out.irq_done);
}

}  // namespace
}  // namespace nicsim::ti
