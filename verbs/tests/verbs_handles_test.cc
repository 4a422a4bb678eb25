// The verbs driver's handle checking: every verb against NULL, stale,
// wrong-type, foreign (other node) and garbage handles.
//
// Each test builds a two-node world (two HCAs on a switch) and runs its
// checks as a consumer program on simulated threads, through the public
// C interface (iba/nicsim_ca.h, iba/ib_ci.h) only.
#include "verbs/tests/verbs_test_util.h"

using namespace nicsim;
using namespace nicsim::verbs::testing;

namespace {
// ---- every verb against bad handles ------------------------------------------------

enum Kind { kCa, kPd, kAv, kCq, kQp, kMr, kMw, kMcast, kRdd, kEec, kKinds };

struct Handles {
  void* h[kKinds] = {};
};
Handles g_foreign;  // h1's live handles, for h0 to try

struct Row {
  const char* verb;
  Kind kind;
  ib_api_status_t expect;
  std::function<ib_api_status_t(void*)> call;
};

std::vector<Row> verb_table(Env& e, const Handles& live, ib_qp_handle_t ud_qp, ib_qp_handle_t rc_qp) {
  const ci_interface_t* ci = e.ci;
  auto ca = [](void* h) { return static_cast<ib_ca_handle_t>(h); };
  auto pd = [](void* h) { return static_cast<ib_pd_handle_t>(h); };
  auto av = [](void* h) { return static_cast<ib_av_handle_t>(h); };
  auto cq = [](void* h) { return static_cast<ib_cq_handle_t>(h); };
  auto qp = [](void* h) { return static_cast<ib_qp_handle_t>(h); };
  auto mr = [](void* h) { return static_cast<ib_mr_handle_t>(h); };
  auto mw = [](void* h) { return static_cast<ib_mw_handle_t>(h); };
  static uint8_t buf[8192];
  static uint8_t mad_in[MAD_BLOCK_SIZE], mad_out[MAD_BLOCK_SIZE];
  port_info_mad(0x01, nullptr, mad_in);
  static ib_av_attr_t av_attr{};
  av_attr.port_num = 1;
  av_attr.dlid = cl_hton16(2);
  static ib_qp_create_t qc{};
  qc.qp_type = IB_QPT_RELIABLE_CONN;
  qc.sq_depth = qc.rq_depth = 4;
  qc.sq_sge = qc.rq_sge = 1;
  qc.h_sq_cq = qc.h_rq_cq = e.cq;
  static ib_mr_create_t mc{};
  mc.vaddr = buf;
  mc.length = sizeof buf;
  mc.access_ctrl = IB_AC_LOCAL_WRITE;
  static uint64_t page = 0;
  static ib_phys_create_t pc{};
  pc.length = 4096;
  pc.num_bufs = 1;
  pc.buf_array = &page;
  pc.page_size = 4096;
  pc.access_ctrl = IB_AC_LOCAL_WRITE;
  static ib_qp_mod_t to_init = init_mod(IB_QPT_RELIABLE_CONN);
  static ib_local_ds_t ds{buf, 16, 0};
  static ib_send_wr_t swr{};
  swr.wr_type = WR_SEND;
  swr.num_ds = 1;
  swr.ds_array = &ds;
  static ib_recv_wr_t rwr{};
  rwr.num_ds = 1;
  rwr.ds_array = &ds;
  static ib_bind_wr_t bind{};
  static ib_gid_t mgid{};
  mgid.raw[0] = 0xff;
  static ib_port_attr_mod_t pmod{};
  static ib_eec_mod_t emod{};
  void* pv = nullptr;
  uint32_t k1 = 0, k2 = 0, sz = 16;
  size_t csz = 0;
  ib_pd_handle_t opd = nullptr;
  ib_av_handle_t oav = nullptr;
  ib_cq_handle_t ocq = nullptr;
  ib_qp_handle_t oqp = nullptr;
  ib_mr_handle_t omr = nullptr;
  ib_mw_handle_t omw = nullptr;
  ib_mcast_handle_t omc = nullptr;
  ib_rdd_handle_t ordd = nullptr;
  ib_eec_handle_t oeec = nullptr;
  ib_qp_attr_t qa{};
  ib_av_attr_t ava{};
  ib_mr_attr_t mra{};
  ib_eec_attr_t eea{};
  ib_wc_t* wl = nullptr;
  ib_wc_t* dl = nullptr;
  ib_send_wr_t* sf = nullptr;
  ib_recv_wr_t* rf = nullptr;
  // The lambdas run while this frame is alive (the caller loops over the
  // table before returning); locals are captured by reference.
  return {
      {"query_ca", kCa, IB_INVALID_CA_HANDLE,
       [=, &csz](void* h) mutable { return ci->query_ca(ca(h), nullptr, &csz, nullptr); }},
      {"modify_ca", kCa, IB_INVALID_CA_HANDLE,
       [=](void* h) { return ci->modify_ca(ca(h), 1, IB_CA_MOD_QKEY_CTR, &pmod); }},
      {"close_ca", kCa, IB_INVALID_CA_HANDLE, [=](void* h) { return ci->close_ca(ca(h)); }},
      {"allocate_pd", kCa, IB_INVALID_CA_HANDLE,
       [=](void* h) mutable { return ci->allocate_pd(ca(h), &opd, nullptr); }},
      {"allocate_rdd", kCa, IB_INVALID_CA_HANDLE,
       [=](void* h) mutable { return ci->allocate_rdd(ca(h), &ordd, nullptr); }},
      {"local_mad", kCa, IB_INVALID_CA_HANDLE, [=](void* h) { return ci->local_mad(ca(h), 1, mad_in, mad_out); }},
      {"deallocate_pd", kPd, IB_INVALID_PD_HANDLE, [=](void* h) { return ci->deallocate_pd(pd(h), nullptr); }},
      {"create_av", kPd, IB_INVALID_PD_HANDLE,
       [=](void* h) mutable { return ci->create_av(pd(h), &av_attr, &oav, nullptr); }},
      {"create_qp", kPd, IB_INVALID_PD_HANDLE,
       [=](void* h) mutable { return ci->create_qp(pd(h), nullptr, &qc, &qa, &oqp, nullptr); }},
      {"create_spl_qp", kPd, IB_INVALID_PD,
       [=](void* h) mutable {
         ib_qp_create_t s = qc;
         s.qp_type = IB_QPT_QP1;
         return ci->create_spl_qp(pd(h), 1, nullptr, &s, &qa, &oqp);
       }},
      // The seed lists IB_INVALID_CA_HANDLE for create_cq's (PD) handle.
      {"create_cq", kPd, IB_INVALID_CA_HANDLE,
       [=](void* h) mutable { return ci->create_cq(pd(h), nullptr, &sz, &ocq, nullptr); }},
      {"register_mr", kPd, IB_INVALID_PD_HANDLE,
       [=](void* h) mutable { return ci->register_mr(pd(h), &mc, &k1, &k2, &omr, nullptr); }},
      {"register_pmr", kPd, IB_INVALID_PD_HANDLE,
       [=](void* h) mutable { return ci->register_pmr(pd(h), &pc, &pv, &k1, &k2, &omr, nullptr); }},
      {"register_smr(pd)", kPd, IB_INVALID_PD_HANDLE,
       [=](void* h) mutable {
         return ci->register_smr(mr(live.h[kMr]), pd(h), IB_AC_LOCAL_WRITE, &pv, &k1, &k2, &omr, nullptr);
       }},
      {"modify_mr(pd)", kPd, IB_INVALID_PD_HANDLE,
       [=](void* h) mutable { return ci->modify_mr(mr(live.h[kMr]), IB_MR_MOD_PD, &mc, &k1, &k2, pd(h), nullptr); }},
      {"create_mw", kPd, IB_INVALID_PD_HANDLE,
       [=](void* h) mutable { return ci->create_mw(pd(h), &k1, &omw, nullptr); }},
      {"query_av", kAv, IB_INVALID_AV_HANDLE,
       [=](void* h) mutable { return ci->query_av(av(h), &ava, &opd, nullptr); }},
      {"modify_av", kAv, IB_INVALID_AV_HANDLE, [=](void* h) { return ci->modify_av(av(h), &av_attr, nullptr); }},
      {"destroy_av", kAv, IB_INVALID_AV_HANDLE, [=](void* h) { return ci->destroy_av(av(h), nullptr); }},
      {"post_send(av)", kAv, IB_INVALID_ADDR_HANDLE,
       [=](void* h) mutable {
         ib_send_wr_t w = swr;
         w.dgrm.ud.h_av = av(h);
         return ci->post_send(ud_qp, &w, &sf);
       }},
      {"create_qp(cq)", kCq, IB_INVALID_CQ_HANDLE,
       [=](void* h) mutable {
         ib_qp_create_t c = qc;
         c.h_rq_cq = cq(h);
         return ci->create_qp(e.pd, nullptr, &c, &qa, &oqp, nullptr);
       }},
      {"resize_cq", kCq, IB_INVALID_CQ_HANDLE, [=](void* h) mutable { return ci->resize_cq(cq(h), &sz, nullptr); }},
      {"query_cq", kCq, IB_INVALID_CQ_HANDLE, [=](void* h) mutable { return ci->query_cq(cq(h), &sz, nullptr); }},
      {"destroy_cq", kCq, IB_INVALID_CQ_HANDLE, [=](void* h) { return ci->destroy_cq(cq(h), nullptr); }},
      {"poll_cq", kCq, IB_INVALID_CQ_HANDLE, [=](void* h) mutable { return ci->poll_cq(cq(h), &wl, &dl); }},
      {"enable_cq_notify", kCq, IB_INVALID_CQ_HANDLE, [=](void* h) { return ci->enable_cq_notify(cq(h), FALSE); }},
      {"modify_qp", kQp, IB_INVALID_QP_HANDLE,
       [=](void* h) mutable { return ci->modify_qp(qp(h), &to_init, &qa, nullptr); }},
      {"query_qp", kQp, IB_INVALID_QP_HANDLE, [=](void* h) mutable { return ci->query_qp(qp(h), &qa, nullptr); }},
      {"destroy_qp", kQp, IB_INVALID_QP_HANDLE, [=](void* h) { return ci->destroy_qp(qp(h), nullptr); }},
      {"post_send", kQp, IB_INVALID_QP_HANDLE, [=](void* h) mutable { return ci->post_send(qp(h), &swr, &sf); }},
      {"post_recv", kQp, IB_INVALID_QP_HANDLE, [=](void* h) mutable { return ci->post_recv(qp(h), &rwr, &rf); }},
      {"attach_mcast", kQp, IB_INVALID_QP_HANDLE,
       [=](void* h) mutable { return ci->attach_mcast(qp(h), &mgid, cl_hton16(0xc001), &omc, nullptr); }},
      {"bind_mw(qp)", kQp, IB_INVALID_QP_HANDLE,
       [=](void* h) mutable { return ci->bind_mw(mw(live.h[kMw]), qp(h), &bind, &k1); }},
      {"query_mr", kMr, IB_INVALID_MR_HANDLE, [=](void* h) mutable { return ci->query_mr(mr(h), &mra); }},
      {"modify_mr", kMr, IB_INVALID_MR_HANDLE,
       [=](void* h) mutable { return ci->modify_mr(mr(h), IB_MR_MOD_ACCESS, &mc, &k1, &k2, nullptr, nullptr); }},
      {"modify_pmr", kMr, IB_INVALID_MR_HANDLE,
       [=](void* h) mutable { return ci->modify_pmr(mr(h), IB_MR_MOD_ACCESS, &pc, &pv, &k1, &k2, nullptr, nullptr); }},
      {"register_smr", kMr, IB_INVALID_MR_HANDLE,
       [=](void* h) mutable { return ci->register_smr(mr(h), e.pd, IB_AC_LOCAL_WRITE, &pv, &k1, &k2, &omr, nullptr); }},
      {"deregister_mr", kMr, IB_INVALID_MR_HANDLE, [=](void* h) { return ci->deregister_mr(mr(h), nullptr); }},
      {"query_mw", kMw, IB_INVALID_MW_HANDLE, [=](void* h) mutable { return ci->query_mw(mw(h), &opd, &k1, nullptr); }},
      {"bind_mw", kMw, IB_INVALID_MW_HANDLE, [=](void* h) mutable { return ci->bind_mw(mw(h), rc_qp, &bind, &k1); }},
      {"destroy_mw", kMw, IB_INVALID_MW_HANDLE, [=](void* h) { return ci->destroy_mw(mw(h), nullptr); }},
      {"detach_mcast", kMcast, IB_INVALID_MCAST_HANDLE,
       [=](void* h) { return ci->detach_mcast(static_cast<ib_mcast_handle_t>(h), nullptr); }},
      // No RD on this HCA: no RDD or EE context can exist, so every such
      // handle is invalid (the seed's note on ci_deallocate_rdd).
      {"deallocate_rdd", kRdd, IB_INVALID_RDD_HANDLE,
       [=](void* h) { return ci->deallocate_rdd(static_cast<ib_rdd_handle_t>(h), nullptr); }},
      {"create_eec", kRdd, IB_INVALID_RDD_HANDLE,
       [=](void* h) mutable { return ci->create_eec(static_cast<ib_rdd_handle_t>(h), nullptr, &eea, &oeec, nullptr); }},
      {"query_eec", kEec, IB_INVALID_EEC_HANDLE,
       [=](void* h) mutable { return ci->query_eec(static_cast<ib_eec_handle_t>(h), &eea, nullptr); }},
      {"modify_eec", kEec, IB_INVALID_EEC_HANDLE,
       [=](void* h) mutable { return ci->modify_eec(static_cast<ib_eec_handle_t>(h), &emod, &eea, nullptr); }},
      {"destroy_eec", kEec, IB_INVALID_EEC_HANDLE,
       [=](void* h) { return ci->destroy_eec(static_cast<ib_eec_handle_t>(h), nullptr); }},
  };
}

// Live objects of every kind on `e`; `stale` gets handles of destroyed ones.
void make_objects(Env& e, Handles& live, Handles* stale, ib_qp_handle_t& ud_qp, void* mr_buf) {
  const ci_interface_t* ci = e.ci;
  ib_av_attr_t aa{};
  aa.port_num = 1;
  aa.dlid = cl_hton16(2);
  ib_mr_create_t mc{mr_buf, 4096, IB_AC_LOCAL_WRITE | IB_AC_MW_BIND};
  uint32_t lkey, rkey, size = 8;
  ib_gid_t mgid{};
  mgid.raw[0] = 0xff;
  ud_qp = make_qp(e, IB_QPT_UNRELIABLE_DGRM);
  to_rts(e, ud_qp, IB_QPT_UNRELIABLE_DGRM);
  for (Handles* hs : {stale, &live}) {
    if (!hs) continue;
    ib_pd_handle_t pd;
    ib_av_handle_t av;
    ib_cq_handle_t cq;
    ib_mr_handle_t mr;
    ib_mw_handle_t mw;
    ib_mcast_handle_t mc_h;
    EXPECT_EQ(ci->allocate_pd(e.ca, &pd, nullptr), IB_SUCCESS);
    EXPECT_EQ(ci->create_av(e.pd, &aa, &av, nullptr), IB_SUCCESS);
    EXPECT_EQ(ci->create_cq(e.pd, nullptr, &size, &cq, nullptr), IB_SUCCESS);
    ib_qp_handle_t qp = make_qp(e, IB_QPT_RELIABLE_CONN);
    EXPECT_EQ(ci->register_mr(e.pd, &mc, &lkey, &rkey, &mr, nullptr), IB_SUCCESS);
    EXPECT_EQ(ci->create_mw(e.pd, &rkey, &mw, nullptr), IB_SUCCESS);
    EXPECT_EQ(ci->attach_mcast(ud_qp, &mgid, cl_hton16(hs == stale ? 0xc000 : 0xc002), &mc_h, nullptr), IB_SUCCESS);
    hs->h[kCa] = e.ca;
    hs->h[kPd] = pd;
    hs->h[kAv] = av;
    hs->h[kCq] = cq;
    hs->h[kQp] = qp;
    hs->h[kMr] = mr;
    hs->h[kMw] = mw;
    hs->h[kMcast] = mc_h;
    if (hs != stale) continue;
    EXPECT_EQ(ci->detach_mcast(mc_h, nullptr), IB_SUCCESS);
    EXPECT_EQ(ci->destroy_mw(mw, nullptr), IB_SUCCESS);
    EXPECT_EQ(ci->deregister_mr(mr, nullptr), IB_SUCCESS);
    EXPECT_EQ(ci->destroy_qp(qp, nullptr), IB_SUCCESS);
    EXPECT_EQ(ci->destroy_cq(cq, nullptr), IB_SUCCESS);
    EXPECT_EQ(ci->destroy_av(av, nullptr), IB_SUCCESS);
    EXPECT_EQ(ci->deallocate_pd(pd, nullptr), IB_SUCCESS);
  }
}

int bad_handles(int, char**) {
  const uint32_t rank = nicsim_workload_rank();
  Env e;
  if (!open_env(e)) return 1;
  void* buf = nicsim_alloc(4096, 4096);
  Handles live, stale;
  ib_qp_handle_t ud_qp;
  if (rank == 1) {
    // The other node: its handles are only numbers on h0.
    make_objects(e, g_foreign, nullptr, ud_qp, buf);
    nicsim_barrier();  // h0 tries them
    nicsim_barrier();
    return 0;
  }
  // A closed CA instance, then the live one.
  ib_ca_handle_t old_ca = e.ca;
  EXPECT_EQ(e.ci->destroy_cq(e.cq, nullptr), IB_SUCCESS);
  EXPECT_EQ(e.ci->deallocate_pd(e.pd, nullptr), IB_SUCCESS);
  EXPECT_EQ(e.ci->close_ca(e.ca), IB_SUCCESS);
  if (!open_env(e)) return 1;
  make_objects(e, live, &stale, ud_qp, buf);
  stale.h[kCa] = old_ca;
  ib_qp_handle_t rc_qp = make_qp(e, IB_QPT_RELIABLE_CONN);
  to_rts(e, rc_qp, IB_QPT_RELIABLE_CONN);
  nicsim_barrier();  // h1's handles are ready
  int garbage = 0;
  const auto table = verb_table(e, live, ud_qp, rc_qp);
  EXPECT_EQ(table.size(), 47u);  // all verbs but open_ca; some once per handle they take
  for (const Row& r : table) {
    // A live handle of another type: the CA's for non-CA verbs.
    void* wrong = r.kind == kCa ? live.h[kPd] : live.h[kCa];
    const std::vector<std::pair<const char*, void*>> bad = {{"NULL", nullptr},
                                                            {"stale", stale.h[r.kind]},
                                                            {"wrong type", wrong},
                                                            {"other node", g_foreign.h[r.kind]},
                                                            {"garbage", &garbage}};
    for (const auto& [what, h] : bad) {
      if ((what == std::string("stale") || what == std::string("other node")) && !h) continue;  // none exists
      const ib_api_status_t got = r.call(h);
      EXPECT_EQ(got, r.expect) << r.verb << " with a " << what << " handle: got " << ib_get_err_str(got)
                               << ", seed 002 lists " << ib_get_err_str(r.expect);
    }
  }
  nicsim_barrier();
  return 0;
}
const BuiltinProgram reg_bad_handles("verbs_test_bad_handles", bad_handles, "test");

// poll_cq remembers the last CQ it found with its caller's host: a CQ just
// polled by one node is still foreign to the other, and one just polled and
// then destroyed is stale.
ib_cq_handle_t g_polled_on_h1 = nullptr;

int poll_remembered(int, char**) {
  Env e;
  if (!open_env(e)) return 1;
  ib_wc_t wc{};
  ib_wc_t *free_list = &wc, *done = nullptr;
  auto poll = [&](ib_cq_handle_t cq) {
    free_list = &wc;
    return e.ci->poll_cq(cq, &free_list, &done);
  };
  if (nicsim_workload_rank() == 1) {
    EXPECT_EQ(poll(e.cq), IB_NOT_FOUND);  // remembered with h1's host
    g_polled_on_h1 = e.cq;
    nicsim_barrier();  // h0 tries it
    nicsim_barrier();
    EXPECT_EQ(poll(e.cq), IB_NOT_FOUND);
    close_env(e);
    return 0;
  }
  nicsim_barrier();
  EXPECT_EQ(poll(g_polled_on_h1), IB_INVALID_CQ_HANDLE);
  EXPECT_EQ(poll(e.cq), IB_NOT_FOUND);
  EXPECT_EQ(poll(e.cq), IB_NOT_FOUND);  // remembered with h0's host
  ib_cq_handle_t old = e.cq;
  EXPECT_EQ(e.ci->destroy_cq(old, nullptr), IB_SUCCESS);
  EXPECT_EQ(poll(old), IB_INVALID_CQ_HANDLE);
  uint32_t size = 64;
  EXPECT_EQ(e.ci->create_cq(e.pd, &e, &size, &e.cq, nullptr), IB_SUCCESS);
  EXPECT_EQ(poll(e.cq), IB_NOT_FOUND);
  EXPECT_EQ(poll(old), IB_INVALID_CQ_HANDLE);
  EXPECT_EQ(done, nullptr);
  nicsim_barrier();
  close_env(e);
  return 0;
}
const BuiltinProgram reg_poll_remembered("verbs_test_poll_remembered", poll_remembered, "test");

}  // namespace

TEST(VerbsHandles, EveryVerbRejectsBadHandles) { run_program("verbs_test_bad_handles", true); }
TEST(VerbsHandles, PollCqRemembersOnlyLiveCqOfCallersNode) { run_program("verbs_test_poll_remembered", true); }
