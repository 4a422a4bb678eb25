// The CMA against the argument classes cma_errors_test.cc leaves out, as
// one table of (call, argument class, errno): NULL pointers, another
// node's ids and QPs, QPs of the wrong type or destroyed, and the calls
// made from interrupt context (where the CMA's own handlers run: none of
// its calls blocks, so each answers as on a thread, with nothing
// reported). Seed 004 lists no error values; the header (ib_cma.h) gives
// each call's, -EINVAL for every bad pointer, id or QP.
#include <cerrno>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include <rdma/ib_verbs.h>
#include <linux/in.h>
#include <rdma/ib_cma.h>

#include "cm/core/cm_node.h"
#include "core/sim.h"
#include "host/host.h"
#include "nicsim/app.h"
#include "tests/world_run.h"
#include "world/node.h"
#include "world/programs.h"

namespace nicsim::cm {
namespace {

struct Side {
  ib_device* dev = nullptr;
  ib_pd* pd = nullptr;
  ib_cq* cq = nullptr;
  ib_qp *rc = nullptr, *ud = nullptr, *dead = nullptr;
  ib_cma_id listen{}, stopped{};
  sockaddr_in me{}, peer{};
};
Side g_side[2];

struct Row {
  const char* call;
  const char* arg_class;
  int want;
  std::function<int()> fn;
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
    const int got = r.fn();
    const bool reported = Sim::get().errors().all().size() > before;
    ++g_out.rows;
    if (got != r.want || reported)
      g_out.wrong.push_back(std::string(r.call) + " with " + r.arg_class + ": got " + std::to_string(got) +
                            (reported ? " (and a simulation error)" : "") + ", want " + std::to_string(r.want));
  }
}

__be64 sid(std::uint64_t v) {
  __be64 b = 0;
  mad::put(reinterpret_cast<std::uint8_t*>(&b), 8, v);
  return b;
}

sockaddr_in addr(std::uint32_t ip) {
  sockaddr_in s{};
  s.sin_family = AF_INET;
  mad::put(reinterpret_cast<std::uint8_t*>(&s.sin_addr.s_addr), 4, ip);
  return s;
}

ib_qp* make_qp(Side& s, ib_qp_type type) {
  ib_qp_init_attr ia{};
  ia.send_cq = ia.recv_cq = s.cq;
  ia.cap.max_send_wr = ia.cap.max_recv_wr = 2;
  ia.cap.max_send_sge = ia.cap.max_recv_sge = 1;
  ia.qp_type = type;
  return ib_create_qp(s.pd, &ia);
}

void on_listen(ib_cma_id*, void*, void*) {}
void on_event(ib_cma_event, void*, void*) {}
void on_accept(ib_cma_event, void*) {}
void on_rarp(sockaddr*, void*) {}

// A connect request whose one field `change` spoils.
int connect_with(Side& s, const std::function<void(ib_cma_conn&, ib_cma_id*&)>& change) {
  static ib_cma_id id;
  ib_cma_conn cc{};
  cc.qp = s.rc;
  cc.dst_ip = reinterpret_cast<sockaddr*>(&s.peer);
  cc.service_id = sid(0x88);
  cc.cma_event_handler = on_event;
  ib_cma_id* pid = &id;
  change(cc, pid);
  return ib_cma_connect(&cc, pid);
}

std::vector<Row> rows(Side& s, Side& other) {
  const int E = -EINVAL;
  return {
      {"ib_cma_get_device", "NULL device pointer", E,
       [&s] { return ib_cma_get_device(reinterpret_cast<sockaddr*>(&s.peer), nullptr); }},
      {"ib_cma_sid_listen", "NULL handler", E,
       [&s] { return ib_cma_sid_listen(s.dev, sid(0x90), &s, nullptr, &s.stopped); }},
      {"ib_cma_sid_listen", "NULL id", E, [&s] { return ib_cma_sid_listen(s.dev, sid(0x90), &s, on_listen, nullptr); }},
      {"ib_cma_sid_listen", "other node's device", E,
       [&s, &other] { return ib_cma_sid_listen(other.dev, sid(0x90), &s, on_listen, &s.stopped); }},
      {"ib_cma_sid_destroy", "NULL id", E, [] { return ib_cma_sid_destroy(nullptr); }},
      {"ib_cma_sid_destroy", "destroyed id", E, [&s] { return ib_cma_sid_destroy(&s.stopped); }},
      {"ib_cma_sid_destroy", "other node's id", E, [&other] { return ib_cma_sid_destroy(&other.listen); }},
      {"ib_cma_connect", "NULL id", E,
       [&s] { return connect_with(s, [](ib_cma_conn&, ib_cma_id*& id) { id = nullptr; }); }},
      {"ib_cma_connect", "NULL event handler", E,
       [&s] { return connect_with(s, [](ib_cma_conn& c, ib_cma_id*&) { c.cma_event_handler = nullptr; }); }},
      {"ib_cma_connect", "NULL destination", E,
       [&s] { return connect_with(s, [](ib_cma_conn& c, ib_cma_id*&) { c.dst_ip = nullptr; }); }},
      {"ib_cma_connect", "UD QP", E,
       [&s] { return connect_with(s, [&s](ib_cma_conn& c, ib_cma_id*&) { c.qp = s.ud; }); }},
      {"ib_cma_connect", "destroyed QP", E,
       [&s] { return connect_with(s, [&s](ib_cma_conn& c, ib_cma_id*&) { c.qp = s.dead; }); }},
      {"ib_cma_connect", "other node's QP", E,
       [&s, &other] { return connect_with(s, [&other](ib_cma_conn& c, ib_cma_id*&) { c.qp = other.rc; }); }},
      {"ib_cma_connect", "private data length with NULL data", E,
       [&s] { return connect_with(s, [](ib_cma_conn& c, ib_cma_id*&) { c.private_data_len = 8; }); }},
      {"ib_cma_connect", "QoS beyond 4 bits", E,
       [&s] {
         return connect_with(s, [](ib_cma_conn& c, ib_cma_id*&) { c.qos = static_cast<decltype(c.qos)>(0x10); });
       }},
      {"ib_cma_connect", "unknown connect flag", E,
       [&s] {
         return connect_with(
             s, [](ib_cma_conn& c, ib_cma_id*&) { c.connect_flags = static_cast<decltype(c.connect_flags)>(7); });
       }},
      {"ib_cma_accept", "NULL id", E, [&s] { return ib_cma_accept(nullptr, s.rc, nullptr, 0, &s, on_accept); }},
      {"ib_cma_accept", "other node's id", E,
       [&s, &other] { return ib_cma_accept(&other.listen, s.rc, nullptr, 0, &s, on_accept); }},
      {"ib_cma_reject", "NULL id", E, [] { return ib_cma_reject(nullptr, nullptr, 0); }},
      {"ib_cma_reject", "other node's id", E, [&other] { return ib_cma_reject(&other.listen, nullptr, 0); }},
      {"ib_cma_disconnect", "NULL id", E, [&s] { return ib_cma_disconnect(s.rc, nullptr); }},
      {"ib_cma_disconnect", "NULL QP", E, [&s] { return ib_cma_disconnect(nullptr, &s.listen); }},
      {"ib_cma_disconnect", "listen id", E, [&s] { return ib_cma_disconnect(s.rc, &s.listen); }},
      {"ib_cma_disconnect", "other node's id", E, [&s, &other] { return ib_cma_disconnect(s.rc, &other.listen); }},
      {"ib_cma_get_src_ip", "NULL id", E, [] { return ib_cma_get_src_ip(nullptr, on_rarp, nullptr); }},
      {"ib_cma_get_src_ip", "NULL handler", E, [&s] { return ib_cma_get_src_ip(&s.listen, nullptr, nullptr); }},
      {"ib_cma_get_src_ip", "other node's id", E,
       [&other] { return ib_cma_get_src_ip(&other.listen, on_rarp, nullptr); }},
  };
}

// From a host timer: interrupt context, as the CMA's handlers. Listening,
// stopping and the bad-argument answers need no blocking.
std::vector<Row> irq_rows(Side& s) {
  static ib_cma_id id;
  return {
      {"ib_cma_get_device", "interrupt context (allowed)", 0,
       [&s] {
         ib_device* d = nullptr;
         return ib_cma_get_device(reinterpret_cast<sockaddr*>(&s.peer), &d);
       }},
      {"ib_cma_sid_listen", "interrupt context (allowed)", 0,
       [&s] { return ib_cma_sid_listen(s.dev, sid(0x91), &s, on_listen, &id); }},
      {"ib_cma_sid_destroy", "interrupt context (allowed)", 0, [] { return ib_cma_sid_destroy(&id); }},
      {"ib_cma_connect", "interrupt context, UD QP", -EINVAL,
       [&s] { return connect_with(s, [&s](ib_cma_conn& c, ib_cma_id*&) { c.qp = s.ud; }); }},
  };
}

void open_side(Side& s) {
  s.me = addr(default_ipv4(nicsim_node_id()));
  s.peer = addr(default_ipv4(nicsim_workload_node(1 - nicsim_workload_rank())));
  ASSERT_EQ(ib_cma_get_device(reinterpret_cast<sockaddr*>(&s.me), &s.dev), 0);
  s.pd = ib_alloc_pd(s.dev);
  s.cq = ib_create_cq(s.dev, nullptr, nullptr, nullptr, 8);
  s.rc = make_qp(s, IB_QPT_RC);
  s.ud = make_qp(s, IB_QPT_UD);
  s.dead = make_qp(s, IB_QPT_RC);
  ASSERT_EQ(ib_destroy_qp(s.dead), 0);
  // The first id each node makes: the same number on both, unless ids
  // name their node.
  ASSERT_EQ(ib_cma_sid_listen(s.dev, sid(0x77), &s, on_listen, &s.listen), 0);
  ASSERT_EQ(ib_cma_sid_listen(s.dev, sid(0x78), &s, on_listen, &s.stopped), 0);
  ASSERT_EQ(ib_cma_sid_destroy(&s.stopped), 0);
}

void close_side(Side& s) {
  EXPECT_EQ(ib_cma_sid_destroy(&s.listen), 0);  // still there: no row touched it
  EXPECT_EQ(ib_destroy_qp(s.rc), 0);
  EXPECT_EQ(ib_destroy_qp(s.ud), 0);
  EXPECT_EQ(ib_destroy_cq(s.cq), 0);
  EXPECT_EQ(ib_dealloc_pd(s.pd), 0);
}

int abuse_main(int, char**) {
  const int rank = static_cast<int>(nicsim_workload_rank());
  Side& s = g_side[rank];
  open_side(s);
  if (::testing::Test::HasFatalFailure()) return 1;
  nicsim_barrier();
  if (rank == 0) {
    run_rows(rows(s, g_side[1]));
    host::Timer t(*host::Host::current_host(), "cma_abuse", [&s] {
      run_rows(irq_rows(s));
      g_out.irq_done = true;
    });
    t.start(1000);
    for (int i = 0; i < 1000 && !g_out.irq_done; ++i) nicsim_sleep_ns(1000);
  }
  nicsim_barrier();
  close_side(s);
  return ::testing::Test::HasFailure() ? 1 : 0;
}
const BuiltinProgram reg("cma_abuse_probe", abuse_main, "test: CMA calls with bad arguments");

TEST(CmaAbuse, EveryCallAnswersBadArgumentsWithTheHeadersErrno) {
  testing::run_text(
      "seed: 1\ntopology { star { hosts: 3 } nic: \"hca\" }\n"
      "workload { program: \"ib_sa\" nodes: \"h0\" }\n"
      "workload { program: \"cma_abuse_probe\" nodes: \"h1\" nodes: \"h2\" }\n");
  EXPECT_EQ(g_out.rows, 27 + 4);  // a row lost in an edit shows here
  for (const std::string& w : g_out.wrong) ADD_FAILURE() << w;
  EXPECT_TRUE(g_out.irq_done);
}

}  // namespace
}  // namespace nicsim::cm
