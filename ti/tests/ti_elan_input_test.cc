// The Elan provider of the Transport Interface against bad input, as the IB
// provider's table (ti_input_rows.h: every handle-taking operation with a
// NULL, invented, stale, wrong-type and other node's handle, and bad
// parameters with good handles), then the calls in the wrong state on a
// real connection between two Elan nodes: before the reply, once
// established, and after the disconnect. Each row answers the status the
// seed lists (the IB provider's where the seed lists none), changes
// nothing and reports no simulation error; nothing is left on either node.
// Interrupt context is ti_elan_abuse_test.cc's table.
#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "core/sim.h"
#include "sim/tests/world_run.h"
#include "ti/elan/ti_elan.h"
#include "ti/tests/ti_input_rows.h"
#include "ti/tests/ti_peer.h"
#include "world/programs.h"

namespace nicsim::ti {
namespace {

using namespace nicsim::ti::testing;
using namespace nicsim::ti::testing::input;

constexpr ti_port_t kConnPort = 6300;

struct Seen {
  std::vector<std::string> wrong;  // "row: got X, want Y"
  int table_rows = 0, state_rows = 0;
  bool unchanged = false, still_works = false, payload_ok = false;
};
Seen g_seen;

// The two sides of the connection the wrong-state rows use.
Peer g_active, g_passive;
void active_recv(ti_cq_handle_t, ti_data_element_t* l) { g_active.received.add_list(l); }
void active_sent(ti_cq_handle_t, ti_data_element_t* l) { g_active.sent.add_list(l); }
void passive_recv(ti_cq_handle_t, ti_data_element_t* l) { g_passive.received.add_list(l); }
void passive_sent(ti_cq_handle_t, ti_data_element_t* l) { g_passive.sent.add_list(l); }

struct StateRow {
  const char* op;
  const char* state;
  ti_status_t want;
  std::function<ti_status_t(Peer&)> call;
};

void check(const std::string& what, ti_status_t got, ti_status_t want, bool reported) {
  if (got != want || reported)
    g_seen.wrong.push_back(what + ": got " + ti_status_to_str(got) + (reported ? " (and a simulation error)" : "") +
                           ", want " + ti_status_to_str(want));
}

void run_state_rows(Peer& p, const std::vector<StateRow>& rows) {
  for (const StateRow& r : rows) {
    const std::size_t before = Sim::get().errors().all().size();
    const ti_status_t got = r.call(p);
    ++g_seen.state_rows;
    check(std::string(r.op) + " " + r.state, got, r.want, Sim::get().errors().all().size() > before);
  }
}

// One element of `p`'s pool, given back after `call` whatever it answered.
ti_status_t with_element(Peer& p, const std::function<ti_status_t(ti_data_element_t*)>& call) {
  ti_pool_response_t r{};
  if (p.ops->res_pool_get(p.pool, 1, FALSE, nullptr, nullptr, nullptr, &r) != TI_SUCCESS) return TI_NO_STATUS;
  const ti_status_t s = call(r.p_element_list);
  p.ops->res_pool_put(p.pool, r.p_element_list);
  return s;
}

// Connected but the reply not yet in: nothing moves on the connection.
std::vector<StateRow> connecting_rows() {
  const ti_status_t OP = TI_INVALID_OPERATION;
  return {
      {"msg_send", "before the reply", OP,
       [](Peer& p) { return with_element(p, [&](ti_data_element_t* e) { return p.ops->msg_send(p.conn, e); }); }},
      {"msg_recv", "before the reply", OP,
       [](Peer& p) { return with_element(p, [&](ti_data_element_t* e) { return p.ops->msg_recv(p.conn, e); }); }},
      {"rdma_write", "before the reply", OP,
       [](Peer& p) { return with_element(p, [&](ti_data_element_t* e) { return p.ops->rdma_write(p.conn, e); }); }},
      {"accept", "before the reply", OP,
       [](Peer& p) {
         ti_conn_request_t r{};
         r.conn_handle = p.conn;
         ti_comp_info_t c = peer_comp(p, active_sent, active_recv);
         return p.ops->accept(&r, 0, &c, nullptr);
       }},
  };
}

// Established, with the active side's one receive posted.
std::vector<StateRow> established_rows() {
  const ti_status_t P = TI_INVALID_PARAMETER, OP = TI_INVALID_OPERATION;
  return {
      {"accept", "a second time", OP,
       [](Peer& p) {
         ti_comp_info_t c = peer_comp(p, active_sent, active_recv);
         return p.ops->accept(&p.req, 0, &c, nullptr);
       }},
      {"reject", "after accepting", OP, [](Peer& p) { return p.ops->reject(&p.req); }},
      {"atomic_op", "operation 7", P,
       [](Peer& p) {
         return with_element(
             p, [&](ti_data_element_t* e) { return p.ops->atomic_op(p.conn, static_cast<ti_atomic_op_t>(7), e); });
       }},
      {"rdma_read", "a message pool's element", P,
       [](Peer& p) { return with_element(p, [&](ti_data_element_t* e) { return p.ops->rdma_read(p.conn, e); }); }},
      {"msg_send", "an element still in the pool", P,
       [](Peer& p) {
         ti_pool_response_t r{};
         p.ops->res_pool_get(p.pool, 1, FALSE, nullptr, nullptr, nullptr, &r);
         p.ops->res_pool_put(p.pool, r.p_element_list);
         return p.ops->msg_send(p.conn, r.p_element_list);
       }},
      {"msg_send", "an element already posted", P,
       [](Peer& p) {
         ti_pool_response_t r{};
         p.ops->res_pool_get(p.pool, 1, FALSE, nullptr, nullptr, nullptr, &r);
         p.ops->msg_recv(p.conn, r.p_element_list);  // the peer's next message lands in it
         return p.ops->msg_send(p.conn, r.p_element_list);
       }},
      {"msg_send", "12 buffers in one element", P,
       [](Peer& p) {
         return with_element(p, [&](ti_data_element_t* e) {
           const std::uint32_t n = e->num_io_bufs;
           e->num_io_bufs = 12;
           const ti_status_t s = p.ops->msg_send(p.conn, e);
           e->num_io_bufs = n;
           return s;
         });
       }},
      {"res_pool_destroy", "an element posted", TI_RESOURCE_BUSY,
       [](Peer& p) { return p.ops->res_pool_destroy(p.pool); }},
      {"destroy_cq", "a connection still uses it", OP, [](Peer& p) { return p.ops->destroy_cq(p.cq); }},
      {"destroy_pd", "a CQ and a connection still use it", TI_RESOURCE_BUSY,
       [](Peer& p) { return p.ops->destroy_pd(p.pd); }},
  };
}

// Disconnected (the handle went with the DREQ's answer).
std::vector<StateRow> closed_rows() {
  const ti_status_t H = TI_INVALID_HANDLE;
  return {
      {"disconnect", "a second time", H, [](Peer& p) { return p.ops->disconnect(p.conn, nullptr, nullptr); }},
      {"msg_send", "after the disconnect", H,
       [](Peer& p) { return with_element(p, [&](ti_data_element_t* e) { return p.ops->msg_send(p.conn, e); }); }},
      {"accept", "the request of a closed connection", TI_INVALID_PARAMETER,
       [](Peer& p) {
         ti_comp_info_t c = peer_comp(p, active_sent, active_recv);
         return p.ops->accept(&p.req, 0, &c, nullptr);
       }},
      {"io_ctl", "the profile of a closed connection", H,
       [](Peer& p) {
         ti_conn_profile_t prof{};
         prof.conn_handle = p.conn;
         uint32_t n = sizeof prof;
         return p.ops->io_ctl(p.ti, TI_GET_CONN_PROFILE, &n, &prof);
       }},
  };
}

void fill(ti_data_element_t* e, std::uint32_t len) {
  for (std::uint32_t i = 0; i < len; ++i) static_cast<unsigned char*>(e->local_data_desc[0].vaddr)[i] = pattern(4, i);
  e->local_data_desc[0].byte_count = len;
}

// The passive side: listens, accepts with two receives, takes one message
// (checked byte for byte), answers one (the message the active side's
// posted element takes), disconnects when told.
int passive_side() {
  Peer& p = g_passive;
  peer_open(p, nicsim_workload_node(0), kConnPort, 8, 256, 0, ti_elan_transport_load);
  if (::testing::Test::HasFatalFailure()) return 1;
  ti_conn_attr_t attr = default_attr();
  ti_conn_info_t info = peer_info(p, peer_keep_request, false);
  if (p.ops->listen(p.ti, &attr, &info, nullptr, &p.listen_conn) != TI_SUCCESS) return 1;
  nicsim_barrier();  // listening
  nicsim_barrier();  // the connecting rows ran
  if (!wait_until(p.requests, 1)) return 1;
  ti_comp_info_t comp = peer_comp(p, passive_sent, passive_recv);
  if (p.ops->accept(&p.req, 0, &comp, peer_get(p, 2)) != TI_SUCCESS) return 1;
  p.conn = p.req.conn_handle;
  if (!wait_until(p.received.count, 1)) return 1;
  const ti_data_element_t* in = p.received.items[0];
  bool ok = in->status == TI_SUCCESS && in->recv_byte_count == 200;
  for (std::uint32_t i = 0; ok && i < 200; ++i)
    ok = static_cast<unsigned char*>(in->local_data_desc[0].vaddr)[i] == pattern(4, i);
  g_seen.payload_ok = ok;
  ti_data_element_t* out = peer_get(p, 1);
  fill(out, 100);
  if (p.ops->msg_send(p.conn, out) != TI_SUCCESS) return 1;
  nicsim_barrier();  // the active side disconnected
  wait_for([&] { return p.errors > 0; });
  wait_until(p.sent.count, 1);
  p.ops->disconnect(p.conn, peer_counted, const_cast<int*>(&p.disconnected));
  wait_until(p.disconnected, 1);
  peer_put_all(p, p.received);
  peer_put_all(p, p.sent);
  p.ops->disconnect(p.listen_conn, nullptr, nullptr);
  peer_close(p);
  return 0;
}

int active_side() {
  Peer& p = g_active;
  peer_open(p, nicsim_workload_node(1), kConnPort, 8, 256, 0, ti_elan_transport_load);
  if (::testing::Test::HasFatalFailure()) return 1;
  ti_conn_attr_t attr = default_attr();
  ti_conn_info_t info = peer_info(p, peer_keep_request, true);
  nicsim_barrier();  // the passive side listens
  if (p.ops->connect(p.ti, &attr, &info, nullptr, &p.conn) != TI_SUCCESS) return 1;
  run_state_rows(p, connecting_rows());
  nicsim_barrier();
  if (!wait_until(p.replies, 1)) return 1;
  ti_comp_info_t comp = peer_comp(p, active_sent, active_recv);
  // One receive for the passive side's answer, posted before anything
  // can answer.
  if (p.ops->accept(&p.req, 0, &comp, peer_get(p, 1)) != TI_SUCCESS) return 1;
  ti_data_element_t* out = peer_get(p, 1);
  fill(out, 200);
  if (p.ops->msg_send(p.conn, out) != TI_SUCCESS) return 1;
  run_state_rows(p, established_rows());
  if (!wait_until(p.received.count, 1) || !wait_until(p.sent.count, 1)) return 1;
  const ti_data_element_t* in = p.received.items[0];
  bool ok = in->status == TI_SUCCESS && in->recv_byte_count == 100;
  for (std::uint32_t i = 0; ok && i < 100; ++i)
    ok = static_cast<unsigned char*>(in->local_data_desc[0].vaddr)[i] == pattern(4, i);
  g_seen.payload_ok = g_seen.payload_ok && ok;
  volatile int gone = 0;
  if (p.ops->disconnect(p.conn, peer_counted, const_cast<int*>(&gone)) != TI_SUCCESS || !wait_until(gone, 1)) return 1;
  // The receive the row posted comes back canceled.
  g_seen.payload_ok =
      g_seen.payload_ok && wait_until(p.received.count, 2) && p.received.items[1]->status == TI_CANCELED;
  run_state_rows(p, closed_rows());
  nicsim_barrier();
  peer_put_all(p, p.received);
  peer_put_all(p, p.sent);
  peer_close(p);
  return 0;
}

// The table: rank 0 tries every row with rank 1's live objects as the
// other node's; then the connection between them.
int table_side(Handles& h) {
  ti_elan::ElanTiNode* n = ti_elan::node();
  const ti_elan::Counters before = n->counters();
  std::vector<Row> rows;
  handle_rows(rows);
  parameter_rows(rows);
  for (const Row& r : rows) {
    const std::size_t errors = Sim::get().errors().all().size();
    check(r.what, r.call(h), r.want, Sim::get().errors().all().size() > errors);
  }
  g_seen.table_rows = static_cast<int>(rows.size());
  const ti_elan::Counters after = n->counters();
  g_seen.unchanged =
      before.objects == after.objects && before.conns == after.conns && before.services == after.services;
  ti_pool_response_t r{};
  g_seen.still_works = h.o->res_pool_get(h.pool, 4, FALSE, nullptr, nullptr, nullptr, &r) == TI_SUCCESS &&
                       r.element_count == 4 && h.o->res_pool_put(h.pool, r.p_element_list) == TI_SUCCESS;
  return 0;
}

int elan_input_probe(int, char**) {
  const bool first = nicsim_workload_rank() == 0;
  Handles& h = first ? *new Handles : g_other;
  open_handles(h, ti_elan_transport_load);
  if (::testing::Test::HasFatalFailure()) return 1;
  nicsim_barrier();  // both nodes' objects are there
  if (first) table_side(h);
  nicsim_barrier();  // the table ran
  volatile int gone = 0;
  EXPECT_EQ(h.o->destroy_ti(h.ti, peer_counted, const_cast<int*>(&gone)), TI_SUCCESS);
  EXPECT_TRUE(wait_until(gone, 1));
  free_handles(h);
  if (first) delete &h;
  return first ? active_side() : passive_side();
}
const BuiltinProgram reg_elan_input("ti_elan_input_probe", elan_input_probe,
                                    "test: bad input and wrong states to every Elan TI operation");

void leak_check(World& w) {
  for (std::uint32_t i = 0; i < w.num_nodes(); ++i)
    if (ti_elan::ElanTiNode* n = ti_elan::node_if_started(w.node(i).host())) {
      EXPECT_EQ(n->counters().objects, 0u) << w.node(i).name();
      EXPECT_EQ(n->counters().conns, 0u) << w.node(i).name();
      EXPECT_EQ(n->counters().services, 0u) << w.node(i).name();
    }
}

TEST(TiElanAbuse, BadInputAndWrongStatesToEveryOperationAreAStatusNeverACrash) {
  nicsim::testing::RunOptions o;
  o.inspect = leak_check;
  nicsim::testing::run_text(
      "seed: 1\ntopology { elite_fat_tree { nodes: 2 } node_param { key: \"bus.profile\" value: \"pci-66\" } }\n"
      "link_defaults { delay: \"10ns\" }\n"
      "workload { program: \"ti_elan_input_probe\" nodes: \"h0\" nodes: \"h1\" }\n",
      o);
  EXPECT_EQ(g_seen.table_rows, 34 * 5 + 40);  // 34 handle-taking operations x 5 bad handles, 40 bad parameters
  EXPECT_EQ(g_seen.state_rows, 4 + 10 + 4);   // before the reply, established, closed
  for (const std::string& w : g_seen.wrong) ADD_FAILURE() << w;
  EXPECT_TRUE(g_seen.unchanged);
  EXPECT_TRUE(g_seen.still_works);
  EXPECT_TRUE(g_seen.payload_ok);
}

}  // namespace
}  // namespace nicsim::ti
