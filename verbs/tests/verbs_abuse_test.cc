// The verbs driver against calls in the wrong state and from interrupt
// context, as one table of (verb, argument class, status, reported): the
// classes verbs_handles_test.cc (bad handles) and verbs_arguments_test.cc
// (bad values) leave out. Objects still in use (seed: IB_RESOURCE_BUSY,
// "some resource allocated via this handle is not freed", "queue pairs may
// still be bound", "the memory region has windows bound"), a special QP
// allocated twice, and every kind of verb called from the CQ completion
// callback, which runs in the node's interrupt context.
//
// From interrupt context the verbs that only touch the queues (post, poll,
// arm) answer as on a thread. The verbs that issue an HCA command or wait
// may not block there: the host reports the blocking call with its call
// site (a real kernel would oops) and the verb fails without changing
// anything. The seed lists no status for that; the close and destroy verbs
// answer IB_RESOURCE_BUSY, the seed's "cannot go now" for them, and the
// others the status of a command the HCA never took, IB_ERROR.
// ci_create_qp issues no command before the first modify, and works there.
#include "core/sim.h"
#include "verbs/tests/verbs_test_util.h"

using namespace nicsim;
using namespace nicsim::verbs::testing;

namespace {

struct Row {
  const char* verb;
  const char* arg_class;
  ib_api_status_t expect;
  bool reported;  // the host reports a blocking call in interrupt context
  std::function<ib_api_status_t()> call;
};

struct Fixture {
  const ci_interface_t* ci = nullptr;
  ib_ca_handle_t ca = nullptr;
  ib_pd_handle_t pd = nullptr;
  ib_cq_handle_t cq = nullptr, irq_cq = nullptr;
  ib_qp_handle_t rc = nullptr, ud = nullptr, irq_qp = nullptr, qp1 = nullptr;
  ib_mr_handle_t mr = nullptr, shared = nullptr, smr = nullptr;
  ib_mw_handle_t mw = nullptr;
  ib_av_handle_t av = nullptr;
  ib_mcast_handle_t mcast = nullptr;
  uint32_t lkey = 0, shared_lkey = 0;
  uint8_t* buf = nullptr;  // 16 KiB of node memory
  // Outputs.
  ib_cq_handle_t ocq = nullptr;
  ib_qp_handle_t oqp = nullptr;
  ib_mr_handle_t omr = nullptr;
  ib_qp_attr_t qa{};
  uint32_t k1 = 0, k2 = 0, size = 0;
  ib_send_wr_t* send_failed = nullptr;
  ib_recv_wr_t* recv_failed = nullptr;
};
Fixture g_f;

struct Outcome {
  int rows = 0;
  std::vector<std::string> wrong;
  bool irq_done = false;
};
Outcome g_out;

void run_rows(const std::vector<Row>& rows) {
  for (const Row& r : rows) {
    const std::size_t before = Sim::get().errors().all().size();
    const ib_api_status_t got = r.call();
    const bool reported = Sim::get().errors().all().size() > before;
    ++g_out.rows;
    if (got != r.expect || reported != r.reported)
      g_out.wrong.push_back(std::string(r.verb) + " with " + r.arg_class + ": got " + ib_get_err_str(got) +
                            (reported ? " (reported)" : "") + ", want " + ib_get_err_str(r.expect) +
                            (r.reported ? " (reported)" : ""));
  }
}

ib_qp_create_t qp_create(ib_qp_type_t type, ib_cq_handle_t cq) {
  ib_qp_create_t c{};
  c.qp_type = type;
  c.sq_depth = c.rq_depth = 4;
  c.sq_sge = c.rq_sge = 1;
  c.h_sq_cq = c.h_rq_cq = cq;
  c.sq_signaled = TRUE;
  return c;
}

ib_send_wr_t ud_send(Fixture& f) {
  static ib_local_ds_t ds;
  ds = ib_local_ds_t{f.buf, 64, f.lkey};
  ib_send_wr_t w{};
  w.wr_type = WR_SEND;
  w.send_opt = IB_SEND_OPT_SIGNALED;
  w.num_ds = 1;
  w.ds_array = &ds;
  w.dgrm.ud.h_av = f.av;
  w.dgrm.ud.remote_qp = cl_hton32(0x99);
  w.dgrm.ud.remote_qkey = cl_hton32(0x11111111);
  return w;
}

// ---- objects in use ----------------------------------------------------------------------------

std::vector<Row> busy_rows(Fixture& f) {
  const ci_interface_t* ci = f.ci;
  constexpr bool N = false;
  return {
      {"close_ca", "PD still allocated", IB_RESOURCE_BUSY, N, [&f, ci] { return ci->close_ca(f.ca); }},
      {"deallocate_pd", "objects still on it", IB_RESOURCE_BUSY, N,
       [&f, ci] { return ci->deallocate_pd(f.pd, nullptr); }},
      {"destroy_cq", "queue pairs still bound", IB_RESOURCE_BUSY, N,
       [&f, ci] { return ci->destroy_cq(f.cq, nullptr); }},
      {"destroy_qp", "UD QP still attached to a multicast group", IB_RESOURCE_BUSY, N,
       [&f, ci] { return ci->destroy_qp(f.ud, nullptr); }},
      {"deregister_mr", "window bound", IB_RESOURCE_BUSY, N, [&f, ci] { return ci->deregister_mr(f.mr, nullptr); }},
      {"modify_mr", "window bound", IB_RESOURCE_BUSY, N,
       [&f, ci] {
         ib_mr_create_t c{f.buf, 8192, IB_AC_LOCAL_WRITE | IB_AC_MW_BIND | IB_AC_RDMA_READ};
         return ci->modify_mr(f.mr, IB_MR_MOD_ACCESS, &c, &f.k1, &f.k2, nullptr, nullptr);
       }},
      // The seed lists windows only; a shared region still using the
      // pages is the same case: the closest status, IB_RESOURCE_BUSY.
      {"deregister_mr", "shared region still on its pages", IB_RESOURCE_BUSY, N,
       [&f, ci] { return ci->deregister_mr(f.shared, nullptr); }},
      {"create_spl_qp", "QP1 already allocated", IB_RESOURCE_BUSY, N,
       [&f, ci] {
         ib_qp_create_t c = qp_create(IB_QPT_QP1, f.cq);
         return ci->create_spl_qp(f.pd, 1, nullptr, &c, &f.qa, &f.oqp);
       }},
      {"open_ca", "CA already open", IB_RESOURCE_BUSY, N,
       [ci] {
         ib_ca_handle_t ca = nullptr;
         return ci->open_ca(ci->guid, on_completion, on_event, nullptr, &ca);
       }},
  };
}

// ---- interrupt context -------------------------------------------------------------------------

std::vector<Row> irq_rows(Fixture& f) {
  const ci_interface_t* ci = f.ci;
  constexpr bool R = true, N = false;
  static ib_wc_t wc;
  static ib_local_ds_t rds;
  return {
      {"poll_cq", "interrupt context", IB_SUCCESS, N,
       [&f, ci] {
         wc = ib_wc_t{};
         ib_wc_t* free_list = &wc;
         ib_wc_t* done = nullptr;
         return ci->poll_cq(f.irq_cq, &free_list, &done);
       }},
      {"enable_cq_notify", "interrupt context", IB_SUCCESS, N,
       [&f, ci] { return ci->enable_cq_notify(f.irq_cq, FALSE); }},
      {"post_recv", "interrupt context", IB_SUCCESS, N,
       [&f, ci] {
         rds = ib_local_ds_t{f.buf + 4096, 2048, f.lkey};
         ib_recv_wr_t w{};
         w.num_ds = 1;
         w.ds_array = &rds;
         return ci->post_recv(f.irq_qp, &w, &f.recv_failed);
       }},
      {"post_send", "interrupt context", IB_SUCCESS, N,
       [&f, ci] {
         ib_send_wr_t w = ud_send(f);
         w.send_opt = 0;
         return ci->post_send(f.irq_qp, &w, &f.send_failed);
       }},
      {"create_cq", "interrupt context", IB_ERROR, R,
       [&f, ci] {
         f.size = 8;
         return ci->create_cq(f.pd, nullptr, &f.size, &f.ocq, nullptr);
       }},
      // No HCA command until the first modify: nothing to block on.
      {"create_qp", "interrupt context (allowed)", IB_SUCCESS, N,
       [&f, ci] {
         ib_qp_create_t c = qp_create(IB_QPT_RELIABLE_CONN, f.cq);
         return ci->create_qp(f.pd, nullptr, &c, &f.qa, &f.oqp, nullptr);
       }},
      {"modify_qp", "interrupt context", IB_ERROR, R,
       [&f, ci] {
         const ib_qp_mod_t m{IB_QPS_ERROR, {}};
         return ci->modify_qp(f.rc, &m, &f.qa, nullptr);
       }},
      {"register_mr", "interrupt context", IB_ERROR, R,
       [&f, ci] {
         ib_mr_create_t c{f.buf + 8192, 4096, IB_AC_LOCAL_WRITE};
         return ci->register_mr(f.pd, &c, &f.k1, &f.k2, &f.omr, nullptr);
       }},
      {"deregister_mr", "interrupt context", IB_ERROR, R, [&f, ci] { return ci->deregister_mr(f.smr, nullptr); }},
      {"destroy_qp", "interrupt context", IB_RESOURCE_BUSY, R, [&f, ci] { return ci->destroy_qp(f.rc, nullptr); }},
      {"destroy_cq", "interrupt context", IB_RESOURCE_BUSY, R, [&f, ci] { return ci->destroy_cq(f.irq_cq, nullptr); }},
      {"close_ca", "interrupt context", IB_RESOURCE_BUSY, R, [&f, ci] { return ci->close_ca(f.ca); }},
  };
}

// The completion callback: interrupt context. Runs the rows once.
void on_irq_completion(void* cq_context) {
  if (cq_context != &g_f.irq_cq || g_out.irq_done) return;
  run_rows(irq_rows(g_f));
  g_out.irq_done = true;
}

// ---- the objects and the program ---------------------------------------------------------------

bool make_objects(Fixture& f) {
  const ci_interface_t* ci = f.ci = nicsim_ci_interface();
  if (!ci || ci->open_ca(ci->guid, on_irq_completion, on_event, &f, &f.ca) != IB_SUCCESS) return false;
  f.buf = static_cast<uint8_t*>(nicsim_alloc(16384, 4096));
  uint32_t size = 16;
  EXPECT_EQ(ci->allocate_pd(f.ca, &f.pd, nullptr), IB_SUCCESS);
  EXPECT_EQ(ci->create_cq(f.pd, &f.cq, &size, &f.cq, nullptr), IB_SUCCESS);
  EXPECT_EQ(ci->create_cq(f.pd, &f.irq_cq, &size, &f.irq_cq, nullptr), IB_SUCCESS);
  Env e{ci, f.ca, f.pd, f.cq};
  ib_qp_create_t c = qp_create(IB_QPT_RELIABLE_CONN, f.cq);
  EXPECT_EQ(ci->create_qp(f.pd, nullptr, &c, &f.qa, &f.rc, nullptr), IB_SUCCESS);
  to_rts(e, f.rc, IB_QPT_RELIABLE_CONN);
  c = qp_create(IB_QPT_UNRELIABLE_DGRM, f.cq);
  EXPECT_EQ(ci->create_qp(f.pd, nullptr, &c, &f.qa, &f.ud, nullptr), IB_SUCCESS);
  to_rts(e, f.ud, IB_QPT_UNRELIABLE_DGRM);
  c = qp_create(IB_QPT_UNRELIABLE_DGRM, f.irq_cq);
  EXPECT_EQ(ci->create_qp(f.pd, nullptr, &c, &f.qa, &f.irq_qp, nullptr), IB_SUCCESS);
  to_rts(e, f.irq_qp, IB_QPT_UNRELIABLE_DGRM);
  c = qp_create(IB_QPT_QP1, f.cq);
  EXPECT_EQ(ci->create_spl_qp(f.pd, 1, nullptr, &c, &f.qa, &f.qp1), IB_SUCCESS);
  ib_av_attr_t aa{};
  aa.port_num = 1;
  aa.dlid = cl_hton16(2);
  EXPECT_EQ(ci->create_av(f.pd, &aa, &f.av, nullptr), IB_SUCCESS);
  ib_gid_t mgid{};
  mgid.raw[0] = 0xff;
  EXPECT_EQ(ci->attach_mcast(f.ud, &mgid, cl_hton16(0xc001), &f.mcast, nullptr), IB_SUCCESS);
  ib_mr_create_t mc{f.buf, 8192, IB_AC_LOCAL_WRITE | IB_AC_MW_BIND};
  EXPECT_EQ(ci->register_mr(f.pd, &mc, &f.lkey, &f.k2, &f.mr, nullptr), IB_SUCCESS);
  ib_mr_create_t sc{f.buf + 8192, 4096, IB_AC_LOCAL_WRITE};
  EXPECT_EQ(ci->register_mr(f.pd, &sc, &f.shared_lkey, &f.k2, &f.shared, nullptr), IB_SUCCESS);
  void* va = nullptr;
  EXPECT_EQ(ci->register_smr(f.shared, f.pd, IB_AC_LOCAL_WRITE, &va, &f.k1, &f.k2, &f.smr, nullptr), IB_SUCCESS);
  uint32_t rkey = 0;
  EXPECT_EQ(ci->create_mw(f.pd, &rkey, &f.mw, nullptr), IB_SUCCESS);
  ib_bind_wr_t b{};
  b.h_mr = f.mr;
  b.access_ctrl = IB_AC_RDMA_READ;
  b.current_rkey = rkey;
  b.local_ds = ib_local_ds_t{f.buf, 1024, f.lkey};
  EXPECT_EQ(ci->bind_mw(f.mw, f.rc, &b, &f.k1), IB_SUCCESS);
  nicsim_sleep_ns(50'000);  // the HCA executes the bind
  return !::testing::Test::HasFailure();
}

void destroy_objects(Fixture& f) {
  const ci_interface_t* ci = f.ci;
  EXPECT_EQ(ci->detach_mcast(f.mcast, nullptr), IB_SUCCESS);
  for (ib_qp_handle_t qp : {f.rc, f.ud, f.irq_qp, f.qp1, f.oqp}) EXPECT_EQ(ci->destroy_qp(qp, nullptr), IB_SUCCESS);
  EXPECT_EQ(ci->destroy_mw(f.mw, nullptr), IB_SUCCESS);
  for (ib_mr_handle_t mr : {f.mr, f.smr, f.shared}) EXPECT_EQ(ci->deregister_mr(mr, nullptr), IB_SUCCESS);
  for (ib_cq_handle_t cq : {f.cq, f.irq_cq}) EXPECT_EQ(ci->destroy_cq(cq, nullptr), IB_SUCCESS);
  EXPECT_EQ(ci->destroy_av(f.av, nullptr), IB_SUCCESS);
  EXPECT_EQ(ci->deallocate_pd(f.pd, nullptr), IB_SUCCESS);
  EXPECT_EQ(ci->close_ca(f.ca), IB_SUCCESS);
}

int abuse(int, char**) {
  Fixture& f = g_f;
  if (!make_objects(f)) return 1;
  run_rows(busy_rows(f));
  // One signaled send on the armed CQ: its completion callback runs the
  // interrupt-context rows.
  EXPECT_EQ(f.ci->enable_cq_notify(f.irq_cq, FALSE), IB_SUCCESS);
  ib_send_wr_t w = ud_send(f);
  EXPECT_EQ(f.ci->post_send(f.irq_qp, &w, &f.send_failed), IB_SUCCESS);
  for (int i = 0; i < 1000 && !g_out.irq_done; ++i) nicsim_sleep_ns(1000);
  // Everything the rows touched is still there and still works.
  destroy_objects(f);
  return ::testing::Test::HasFailure() ? 1 : 0;
}
const BuiltinProgram reg_abuse("verbs_test_abuse", abuse, "test");

}  // namespace

TEST(VerbsAbuse, BusyObjectsAndInterruptContextAnswerWithTheSeedStatus) {
  nicsim::testing::RunOptions o;
  o.expect_clean = false;
  const auto r = nicsim::testing::run_scenario(scenario(R"(
    name: "verbs"
    topology { star { hosts: 2 } nic: "hca" }
    subnet_manager { off: true }
    workload { program: "verbs_test_abuse" nodes: "h0" }
  )"),
                                               o);
  EXPECT_EQ(g_out.rows, 9 + 12);  // a row lost in an edit shows here
  for (const std::string& w : g_out.wrong) ADD_FAILURE() << w;
  EXPECT_TRUE(g_out.irq_done);
  // One report per blocking verb called from the callback, nothing else.
  EXPECT_EQ(r.errors.size(), 7u);
  for (const std::string& e : r.errors) EXPECT_NE(e.find("in interrupt context"), std::string::npos) << e;
}
