// The IB provider of the Transport Interface against calls in the wrong
// state and from interrupt context, as one table of (operation, argument
// class, status, reported): the classes ti_input_test.cc (bad handles and
// parameters) leaves out.
//
// The seed runs data transfer callbacks "at device interrupt level" and
// connection and context callbacks in a system thread: a consumer may call
// the data path (pools, CQs, sends) from the first, and not the
// operations that allocate, register or tear down. The seed lists no
// status for those; the provider answers TI_INVALID_OPERATION ("the
// operation is not valid now") and changes nothing, without reaching a
// verb that would block (a blocking call in interrupt context is a
// simulation error, as a kernel would oops). The rows run from a host
// timer, whose callback is interrupt context.
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "core/sim.h"
#include "host/host.h"
#include "tests/world_run.h"
#include "ti/ib/ti_ib.h"
#include "ti/tests/ti_peer.h"
#include "world/programs.h"

namespace nicsim::ti {
namespace {

using namespace nicsim::ti::testing;

constexpr ti_port_t kPort = 6100;

struct Objects {
  ti_ops_t* o = nullptr;
  ti_handle_t ti = nullptr;
  ti_endpoint_handle_t me = nullptr, me2 = nullptr, peer = nullptr;
  ti_pd_handle_t pd = nullptr;
  ti_cq_handle_t cq = nullptr, spare_cq = nullptr;
  ti_res_pool_handle_t pool = nullptr, spare_pool = nullptr;
  ti_mem_handle_t mem = nullptr;
  ti_conn_handle_t listen = nullptr, connecting = nullptr;
  ti_data_element_t* out = nullptr;  // one element taken from `pool`
  unsigned char* region = nullptr;
  ti_rdma_desc_t desc{};
  ti_conn_request_t req{};  // connect's
};
Objects g_obj;

struct Row {
  const char* op;
  const char* arg_class;
  ti_status_t want;
  std::function<ti_status_t(Objects&)> call;
};

struct Outcome {
  int rows = 0;
  std::vector<std::string> wrong;
  bool irq_done = false;
};
Outcome g_out;

void run_rows(const std::vector<Row>& rows) {
  for (const Row& r : rows) {
    const std::size_t before = Sim::get().errors().all().size();
    const ti_status_t got = r.call(g_obj);
    const bool reported = Sim::get().errors().all().size() > before;
    ++g_out.rows;
    if (got != r.want || reported)
      g_out.wrong.push_back(std::string(r.op) + " with " + r.arg_class + ": got " + ti_status_to_str(got) +
                            (reported ? " (and a simulation error)" : "") + ", want " + ti_status_to_str(r.want));
  }
}

void no_request(ti_conn_request_t*) {}

ti_conn_info_t listen_info(Objects& s) {
  ti_conn_info_t i{};
  i.src_ep = s.me;
  i.pdh = s.pd;
  i.conn_request_cb = no_request;
  return i;
}

ti_data_element_t* take(Objects& s, ti_res_pool_handle_t pool) {
  ti_pool_response_t r{};
  EXPECT_EQ(s.o->res_pool_get(pool, 1, FALSE, nullptr, nullptr, nullptr, &r), TI_SUCCESS);
  return r.p_element_list;
}

// ---- wrong state -------------------------------------------------------------------------------

std::vector<Row> state_rows() {
  const ti_status_t OP = TI_INVALID_OPERATION, H = TI_INVALID_HANDLE;
  return {
      {"res_pool_destroy", "an element still out", TI_RESOURCE_BUSY,
       [](Objects& s) { return s.o->res_pool_destroy(s.pool); }},
      {"destroy_cq", "a connection still uses it", OP, [](Objects& s) { return s.o->destroy_cq(s.cq); }},
      // A listen handle is no connection to move data on: TI_INVALID_HANDLE,
      // as for msg_send (ti_input_test.cc).
      {"msg_recv", "on a listen handle", H, [](Objects& s) { return s.o->msg_recv(s.listen, s.out); }},
      {"rdma_write", "on a listen handle", H, [](Objects& s) { return s.o->rdma_write(s.listen, s.out); }},
      {"rdma_read", "on a listen handle", H, [](Objects& s) { return s.o->rdma_read(s.listen, s.out); }},
      {"msg_send", "connection not yet established", OP, [](Objects& s) { return s.o->msg_send(s.connecting, s.out); }},
      {"listen", "port already listening", OP,
       [](Objects& s) {
         ti_conn_attr_t a = default_attr();
         ti_conn_info_t i = listen_info(s);
         ti_conn_handle_t c = nullptr;
         return s.o->listen(s.ti, &a, &i, nullptr, &c);
       }},
  };
}

// ---- interrupt context -------------------------------------------------------------------------

std::vector<Row> irq_rows() {
  const ti_status_t OP = TI_INVALID_OPERATION;
  static ti_data_element_t* got = nullptr;
  static ti_conn_handle_t irq_listen = nullptr;
  return {
      {"create_ti", "interrupt context", OP,
       [](Objects& s) {
         ti_handle_t t = nullptr;
         return s.o->create_ti(&t);
       }},
      {"create_pd", "interrupt context", OP,
       [](Objects& s) {
         ti_pd_handle_t p = nullptr;
         return s.o->create_pd(s.ti, s.me, &p);
       }},
      {"create_cq", "interrupt context", OP,
       [](Objects& s) {
         ti_cq_handle_t c = nullptr;
         return s.o->create_cq(s.ti, s.pd, 8, &c);
       }},
      {"destroy_cq", "interrupt context", OP, [](Objects& s) { return s.o->destroy_cq(s.spare_cq); }},
      {"reg_virt_mem", "interrupt context", OP,
       [](Objects& s) {
         ti_rdma_desc_t d{};
         ti_mem_handle_t m = nullptr;
         return s.o->reg_virt_mem(s.ti, s.pd, s.region + 4096, 4096, TI_MEM_READ, &d, &m);
       }},
      {"dereg_mem", "interrupt context", OP, [](Objects& s) { return s.o->dereg_mem(s.mem); }},
      {"res_pool_create", "interrupt context", OP,
       [](Objects& s) {
         uint32_t size = 64;
         ti_res_pool_handle_t p = nullptr;
         return s.o->res_pool_create(s.ti, TI_RES_POOL_MSG, 2, 1, &size, 0, &p);
       }},
      {"res_pool_destroy", "interrupt context", OP, [](Objects& s) { return s.o->res_pool_destroy(s.spare_pool); }},
      // Listening and stopping need no verb that blocks (the CMA's listen
      // ids are the node's own table).
      {"listen", "interrupt context (allowed)", TI_SUCCESS,
       [](Objects& s) {
         ti_conn_attr_t a = default_attr();
         ti_conn_info_t i = listen_info(s);
         i.src_ep = s.me2;  // a free port: only the context is unusual
         return s.o->listen(s.ti, &a, &i, nullptr, &irq_listen);
       }},
      {"disconnect", "interrupt context, listen handle (allowed)", TI_SUCCESS,
       [](Objects& s) { return s.o->disconnect(irq_listen, nullptr, nullptr); }},
      {"connect", "interrupt context", OP,
       [](Objects& s) {
         ti_conn_attr_t a = default_attr();
         ti_conn_info_t i = listen_info(s);
         i.dst_ep = s.peer;
         i.send_cqh = i.recv_cqh = s.spare_cq;
         ti_conn_handle_t c = nullptr;
         return s.o->connect(s.ti, &a, &i, &s.req, &c);
       }},
      // The data path answers as on a thread.
      {"res_pool_get", "interrupt context (allowed)", TI_SUCCESS,
       [](Objects& s) {
         ti_pool_response_t r{};
         const ti_status_t st = s.o->res_pool_get(s.spare_pool, 1, FALSE, nullptr, nullptr, nullptr, &r);
         got = r.p_element_list;
         return st;
       }},
      {"res_pool_put", "interrupt context (allowed)", TI_SUCCESS,
       [](Objects& s) { return s.o->res_pool_put(s.spare_pool, got); }},
      {"rearm_cq", "interrupt context (allowed)", TI_SUCCESS, [](Objects& s) { return s.o->rearm_cq(s.spare_cq); }},
      {"debug_svc", "interrupt context (allowed)", TI_SUCCESS,
       [](Objects& s) { return s.o->debug_svc(s.ti, TI_DBG_OFF); }},
  };
}

// ---- the objects and the program ---------------------------------------------------------------

void open_objects(Objects& s) {
  s.o = ti_ib_transport_load();
  ASSERT_NE(s.o, nullptr);
  ASSERT_EQ(s.o->create_ti(&s.ti), TI_SUCCESS);
  ti_inet_addr_t me = ip_of_node(nicsim_node_id()), peer = ip_of_node(nicsim_node_id() + 1);  // h2
  ASSERT_EQ(s.o->create_endpoint(s.ti, &me, kPort, &s.me), TI_SUCCESS);
  ASSERT_EQ(s.o->create_endpoint(s.ti, &me, kPort + 2, &s.me2), TI_SUCCESS);
  ASSERT_EQ(s.o->create_endpoint(s.ti, &peer, kPort + 1, &s.peer), TI_SUCCESS);
  ASSERT_EQ(s.o->create_pd(s.ti, s.me, &s.pd), TI_SUCCESS);
  ASSERT_EQ(s.o->create_cq(s.ti, s.pd, 16, &s.cq), TI_SUCCESS);
  ASSERT_EQ(s.o->create_cq(s.ti, s.pd, 16, &s.spare_cq), TI_SUCCESS);
  uint32_t size = 256;
  ASSERT_EQ(s.o->res_pool_create(s.ti, TI_RES_POOL_MSG, 4, 1, &size, 0, &s.pool), TI_SUCCESS);
  ASSERT_EQ(s.o->res_pool_create(s.ti, TI_RES_POOL_MSG, 4, 1, &size, 0, &s.spare_pool), TI_SUCCESS);
  s.out = take(s, s.pool);
  s.region = static_cast<unsigned char*>(nicsim_alloc(8192, 64));
  ASSERT_EQ(s.o->reg_virt_mem(s.ti, s.pd, s.region, 4096, TI_MEM_READ_WRITE, &s.desc, &s.mem), TI_SUCCESS);
  ti_conn_attr_t a = default_attr();
  ti_conn_info_t li = listen_info(s);
  ASSERT_EQ(s.o->listen(s.ti, &a, &li, nullptr, &s.listen), TI_SUCCESS);
  // A connection request to a node that answers nothing (no program there):
  // it stays Connecting for the CM's timeout.
  ti_conn_info_t ci = listen_info(s);
  ci.dst_ep = s.peer;
  ci.send_cqh = ci.recv_cqh = s.cq;
  ASSERT_EQ(s.o->connect(s.ti, &a, &ci, &s.req, &s.connecting), TI_SUCCESS);
}

int abuse_probe(int, char**) {
  Objects& s = g_obj;
  open_objects(s);
  if (::testing::Test::HasFatalFailure()) return 1;
  run_rows(state_rows());
  host::Timer timer(*host::Host::current_host(), "ti_abuse", [] {
    run_rows(irq_rows());
    g_out.irq_done = true;
  });
  timer.start(1000);
  wait_for([] { return g_out.irq_done; });
  // Everything the rows touched still works.
  EXPECT_EQ(s.o->res_pool_put(s.pool, s.out), TI_SUCCESS);
  EXPECT_EQ(s.o->dereg_mem(s.mem), TI_SUCCESS);
  EXPECT_EQ(s.o->destroy_cq(s.spare_cq), TI_SUCCESS);
  EXPECT_EQ(s.o->res_pool_destroy(s.spare_pool), TI_SUCCESS);
  EXPECT_EQ(s.o->disconnect(s.listen, nullptr, nullptr), TI_SUCCESS);
  volatile int gone = 0;
  EXPECT_EQ(s.o->destroy_ti(s.ti, peer_counted, const_cast<int*>(&gone)), TI_SUCCESS);
  EXPECT_TRUE(wait_until(gone, 1));
  return ::testing::Test::HasFailure() ? 1 : 0;
}
const BuiltinProgram reg_abuse("ti_abuse_probe", abuse_probe, "test: TI calls in the wrong state and context");

TEST(TiAbuse, WrongStateAndInterruptContextAreAStatusNeverACrash) {
  // h2 runs nothing: h1's connection request stays unanswered.
  nicsim::testing::run_text(scenario(3, "ti_abuse_probe", "nodes: \"h1\""));
  EXPECT_EQ(g_out.rows, 7 + 15);  // a row lost in an edit shows here
  for (const std::string& w : g_out.wrong) ADD_FAILURE() << w;
  EXPECT_TRUE(g_out.irq_done);
}

}  // namespace
}  // namespace nicsim::ti
