// The verbs driver's behaviour: opening and registration, the modify_qp
// attribute table, posting checks, memory registration, busy resources, and
// one two-sided RC send/receive checked byte for byte.
#include "verbs/tests/verbs_test_util.h"

using namespace nicsim;
using namespace nicsim::verbs::testing;

namespace {

int open_and_lookup(int, char**) {
  const ci_interface_t* ci = nicsim_ci_interface();
  if (!ci) return 1;
  EXPECT_EQ(ci, nicsim_ci_interface());
  EXPECT_EQ(ci->guid, nicsim_ca_guid());
  EXPECT_NE(ci->guid, 0u);
  EXPECT_EQ(ci->version, IB_CI_VERSION);
  // All 43 verbs are there.
  const void* const* first = reinterpret_cast<const void* const*>(&ci->open_ca);
  const void* const* last = reinterpret_cast<const void* const*>(&ci->local_mad);
  EXPECT_EQ(last - first, 42);
  for (const void* const* p = first; p <= last; ++p) EXPECT_NE(*p, nullptr) << "entry " << (p - first);
  EXPECT_EQ(ib_register_ca(ci), IB_DUPLICATE_CA);
  ib_ca_handle_t ca, ca2;
  EXPECT_EQ(ci->open_ca(ci->guid, nullptr, on_event, nullptr, &ca), IB_INVALID_PARAMETER);
  EXPECT_EQ(ci->open_ca(ci->guid, on_completion, nullptr, nullptr, &ca), IB_INVALID_PARAMETER);
  EXPECT_EQ(ci->open_ca(0, on_completion, on_event, nullptr, &ca), IB_INVALID_PARAMETER);
  EXPECT_EQ(ci->open_ca(ci->guid, on_completion, on_event, nullptr, nullptr), IB_INVALID_PARAMETER);
  EXPECT_EQ(ci->open_ca(ci->guid ^ 0xff00, on_completion, on_event, nullptr, &ca), IB_NOT_FOUND);
  EXPECT_EQ(ci->open_ca(ci->guid, on_completion, on_event, nullptr, &ca), IB_SUCCESS);
  EXPECT_EQ(ci->open_ca(ci->guid, on_completion, on_event, nullptr, &ca2), IB_RESOURCE_BUSY);
  EXPECT_EQ(ib_deregister_ca(ci), IB_BUSY);
  // RD: not on this HCA.
  ib_rdd_handle_t rdd;
  EXPECT_EQ(ci->allocate_rdd(ca, &rdd, nullptr), IB_UNSUPPORTED);
  // Attributes: the size first, then the whole structure.
  size_t size = 0;
  EXPECT_EQ(ci->query_ca(ca, nullptr, &size, nullptr), IB_INSUFFICIENT_MEMORY);
  EXPECT_GT(size, sizeof(ib_ca_attr_t));
  EXPECT_EQ(ci->query_ca(ca, nullptr, nullptr, nullptr), IB_INVALID_PARAMETER);
  std::vector<uint64_t> buf(size / 8 + 1);
  auto* attr = reinterpret_cast<ib_ca_attr_t*>(buf.data());
  EXPECT_EQ(ci->query_ca(ca, attr, &size, nullptr), IB_SUCCESS);
  EXPECT_EQ(attr->ca_guid, ci->guid);
  EXPECT_EQ(attr->size, size);
  EXPECT_EQ(attr->max_rdds, 0u);
  EXPECT_EQ(attr->max_eecs, 0u);
  EXPECT_EQ(attr->max_rd_sges, 0u);
  EXPECT_GT(attr->max_qps, 0u);
  EXPECT_GT(attr->max_sges, 0u);
  EXPECT_EQ(attr->num_ports, 1);
  EXPECT_EQ(attr->num_page_sizes, 1u);
  EXPECT_EQ(attr->p_page_size[0], 4096u);
  const ib_port_attr_t& port = attr->p_port_attr[0];
  EXPECT_EQ(port.port_num, 1);
  EXPECT_EQ(port.link_state, IB_LINK_ACTIVE);
  EXPECT_EQ(port.mtu, IB_MTU_2048);
  EXPECT_GE(port.num_gids, 1);
  EXPECT_EQ(port.p_gid_table[0].raw[0], 0xfe);  // link-local prefix
  EXPECT_EQ(cl_ntoh16(port.p_pkey_table[0]), 0xffff);
  // Port modifications.
  ib_port_attr_mod_t mod{};
  mod.cap.cm = TRUE;
  EXPECT_EQ(ci->modify_ca(ca, 1, IB_CA_MOD_IS_CM_SUPPORTED | IB_CA_MOD_QKEY_CTR, &mod), IB_SUCCESS);
  EXPECT_EQ(ci->modify_ca(ca, 2, IB_CA_MOD_QKEY_CTR, &mod), IB_INVALID_PORT);
  EXPECT_EQ(ci->modify_ca(ca, 1, 0x80000000u, &mod), IB_INVALID_PARAMETER);
  EXPECT_EQ(ci->query_ca(ca, attr, &size, nullptr), IB_SUCCESS);
  EXPECT_TRUE(attr->p_port_attr[0].cap.cm);
  // A local MAD: NodeInfo.
  uint8_t in[MAD_BLOCK_SIZE] = {1, 0x01, 1, 0x01}, out[MAD_BLOCK_SIZE];
  in[17] = 0x11;
  EXPECT_EQ(ci->local_mad(ca, 1, in, out), IB_SUCCESS);
  EXPECT_EQ(out[3], 0x81);  // GetResp
  EXPECT_EQ(ci->local_mad(ca, 3, in, out), IB_INVALID_PORT);
  // Busy while a PD lives.
  ib_pd_handle_t pd;
  EXPECT_EQ(ci->allocate_pd(ca, &pd, nullptr), IB_SUCCESS);
  EXPECT_EQ(ci->close_ca(ca), IB_RESOURCE_BUSY);
  EXPECT_EQ(ci->deallocate_pd(pd, nullptr), IB_SUCCESS);
  EXPECT_EQ(ci->close_ca(ca), IB_SUCCESS);
  EXPECT_EQ(ib_deregister_ca(ci), IB_SUCCESS);
  EXPECT_EQ(ib_deregister_ca(ci), IB_INVALID_PARAMETER);
  EXPECT_EQ(nicsim_ci_interface(), nullptr);
  EXPECT_EQ(ib_register_ca(ci), IB_SUCCESS);
  EXPECT_EQ(nicsim_ci_interface(), ci);
  return 0;
}
const BuiltinProgram reg_open("verbs_test_open", open_and_lookup, "test");

}  // namespace

TEST(VerbsHandles, OpenQueryAndRegistration) { run_program("verbs_test_open", false); }

namespace {

int modify_table(int, char**) {
  Env e;
  if (!open_env(e)) return 1;
  const ci_interface_t* ci = e.ci;
  ib_qp_handle_t qp = make_qp(e, IB_QPT_RELIABLE_CONN);
  ib_qp_attr_t a;
  // Wrong current state.
  EXPECT_EQ(modify(e, qp, rtr_mod(0x99, 2)), IB_INVALID_QP_STATE);
  EXPECT_EQ(modify(e, qp, rts_mod()), IB_INVALID_QP_STATE);
  ib_qp_mod_t m = init_mod(IB_QPT_RELIABLE_CONN);
  m.req_state = IB_QPS_SQERR;  // only the HCA goes there
  EXPECT_EQ(modify(e, qp, m), IB_INVALID_QP_STATE);
  m.req_state = 0x7777;
  EXPECT_EQ(modify(e, qp, m), IB_INVALID_PARAMETER);
  EXPECT_EQ(ci->modify_qp(qp, nullptr, &a, nullptr), IB_INVALID_PARAMETER);
  // RESET -> INIT: required attributes missing or bad, options not allowed.
  m = init_mod(IB_QPT_RELIABLE_CONN);
  m.state.init.primary_port = 0;
  EXPECT_EQ(modify(e, qp, m), IB_INVALID_PARAMETER);
  m = init_mod(IB_QPT_RELIABLE_CONN);
  m.state.init.pkey_index = 999;
  EXPECT_EQ(modify(e, qp, m), IB_INVALID_PKEY);
  m = init_mod(IB_QPT_RELIABLE_CONN);
  m.state.init.access_ctrl = 0x8000;
  EXPECT_EQ(modify(e, qp, m), IB_INVALID_PARAMETER);
  m = init_mod(IB_QPT_RELIABLE_CONN);
  m.state.init.opts = IB_MOD_QP_RETRY_CNT;  // not an attribute of this transition
  EXPECT_EQ(modify(e, qp, m), IB_INVALID_PARAMETER);
  m.state.init.opts = IB_MOD_QP_QKEY;  // a UD attribute
  EXPECT_EQ(modify(e, qp, m), IB_INVALID_PARAMETER);
  m.state.init.opts = IB_MOD_QP_ALTERNATE_AV;  // no APM on this HCA
  EXPECT_EQ(modify(e, qp, m), IB_UNSUPPORTED);
  m.state.init.opts = 0;
  EXPECT_EQ(modify(e, qp, m, &a), IB_SUCCESS);
  EXPECT_EQ(a.state, IB_QPS_INIT);
  EXPECT_EQ(a.primary_port, 1);
  // INIT -> INIT with an option; INIT -> RTS skips RTR.
  m.state.init.opts = IB_MOD_QP_ACCESS_CTRL;
  m.state.init.access_ctrl = IB_AC_RDMA_READ;
  EXPECT_EQ(modify(e, qp, m, &a), IB_SUCCESS);
  EXPECT_EQ(a.access_ctrl, static_cast<ib_access_t>(IB_AC_RDMA_READ));
  EXPECT_EQ(modify(e, qp, rts_mod()), IB_INVALID_QP_STATE);
  // INIT -> RTR (RC): AV, path MTU, destination QP are required.
  ib_qp_mod_t r = rtr_mod(0x99, 2);
  r.state.rtr.primary_av.dlid = 0;
  EXPECT_EQ(modify(e, qp, r), IB_INVALID_PARAMETER);
  r = rtr_mod(0x99, 2);
  r.state.rtr.primary_av.conn.path_mtu = 0;
  EXPECT_EQ(modify(e, qp, r), IB_INVALID_PARAMETER);
  r.state.rtr.primary_av.conn.path_mtu = IB_MTU_4096;  // beyond the port's 2048
  EXPECT_EQ(modify(e, qp, r), IB_INVALID_PARAMETER);
  r = rtr_mod(0, 2);
  EXPECT_EQ(modify(e, qp, r), IB_INVALID_PARAMETER);
  r = rtr_mod(0x99, 2);
  r.state.rtr.resp_res = 200;
  EXPECT_EQ(modify(e, qp, r), IB_INVALID_PARAMETER);
  r = rtr_mod(0x99, 2);
  r.state.rtr.opts = IB_MOD_QP_SQ_DEPTH;
  EXPECT_EQ(modify(e, qp, r), IB_UNSUPPORTED);
  r.state.rtr.opts = IB_MOD_QP_PKEY;
  EXPECT_EQ(modify(e, qp, r, &a), IB_SUCCESS);
  EXPECT_EQ(a.state, IB_QPS_RTR);
  EXPECT_EQ(cl_ntoh32(a.dest_num), 0x99u);
  // RTR -> RTS (RC): retry counts are 3 bits, the initiator depth bounded.
  ib_qp_mod_t s = rts_mod();
  s.state.rts.retry_cnt = 9;
  EXPECT_EQ(modify(e, qp, s), IB_INVALID_PARAMETER);
  s = rts_mod();
  s.state.rts.init_depth = 200;
  EXPECT_EQ(modify(e, qp, s), IB_INVALID_PARAMETER);
  s = rts_mod();
  s.state.rts.opts = IB_MOD_QP_PRIMARY_PORT;  // not allowed RTR -> RTS
  EXPECT_EQ(modify(e, qp, s), IB_INVALID_PARAMETER);
  s.state.rts.opts = IB_MOD_QP_RNR_NAK_TIMEOUT;
  EXPECT_EQ(modify(e, qp, s, &a), IB_SUCCESS);
  EXPECT_EQ(a.state, IB_QPS_RTS);
  EXPECT_EQ(ci->query_qp(qp, &a, nullptr), IB_SUCCESS);
  EXPECT_EQ(a.state, IB_QPS_RTS);
  // RTS -> RTS: only the optional attributes of that transition.
  s = ib_qp_mod_t{IB_QPS_RTS, {}};
  s.state.rts.opts = IB_MOD_QP_RETRY_CNT;
  EXPECT_EQ(modify(e, qp, s), IB_INVALID_PARAMETER);
  s.state.rts.opts = IB_MOD_QP_ACCESS_CTRL;
  s.state.rts.access_ctrl = IB_AC_RDMA_WRITE | IB_AC_LOCAL_WRITE;
  EXPECT_EQ(modify(e, qp, s), IB_SUCCESS);
  // SQD and back, then Error, then Reset.
  ib_qp_mod_t sqd{IB_QPS_SQD, {}};
  EXPECT_EQ(modify(e, qp, sqd), IB_SUCCESS);
  EXPECT_EQ(modify(e, qp, ib_qp_mod_t{IB_QPS_RTS, {}}), IB_SUCCESS);
  EXPECT_EQ(modify(e, qp, ib_qp_mod_t{IB_QPS_ERROR, {}}), IB_SUCCESS);
  EXPECT_EQ(modify(e, qp, ib_qp_mod_t{IB_QPS_RTS, {}}), IB_INVALID_QP_STATE);
  EXPECT_EQ(modify(e, qp, ib_qp_mod_t{IB_QPS_RESET, {}}, &a), IB_SUCCESS);
  EXPECT_EQ(a.state, IB_QPS_RESET);
  EXPECT_EQ(modify(e, qp, init_mod(IB_QPT_RELIABLE_CONN)), IB_SUCCESS);  // usable again
  // UD: Q_Key instead of access rights; RTR needs nothing, RTS a PSN.
  ib_qp_handle_t ud = make_qp(e, IB_QPT_UNRELIABLE_DGRM);
  m = init_mod(IB_QPT_UNRELIABLE_DGRM);
  m.state.init.opts = IB_MOD_QP_ACCESS_CTRL;
  EXPECT_EQ(modify(e, ud, m), IB_INVALID_PARAMETER);
  m.state.init.opts = 0;
  EXPECT_EQ(modify(e, ud, m), IB_SUCCESS);
  EXPECT_EQ(modify(e, ud, ib_qp_mod_t{IB_QPS_RTR, {}}), IB_SUCCESS);
  s = ib_qp_mod_t{IB_QPS_RTS, {}};
  s.state.rts.sq_psn = cl_hton32(0x1000000);  // 25 bits
  EXPECT_EQ(modify(e, ud, s), IB_INVALID_PARAMETER);
  s.state.rts.sq_psn = cl_hton32(5);
  EXPECT_EQ(modify(e, ud, s, &a), IB_SUCCESS);
  EXPECT_EQ(cl_ntoh32(a.qkey), 0x11111111u);
  EXPECT_EQ(ci->destroy_qp(ud, nullptr), IB_SUCCESS);
  EXPECT_EQ(ci->destroy_qp(qp, nullptr), IB_SUCCESS);
  close_env(e);
  return 0;
}
const BuiltinProgram reg_modify("verbs_test_modify_table", modify_table, "test");

}  // namespace

TEST(VerbsHandles, ModifyQpAttributeTable) { run_program("verbs_test_modify_table", false); }

namespace {

int post_checks(int, char**) {
  Env e;
  if (!open_env(e)) return 1;
  const ci_interface_t* ci = e.ci;
  auto* buf = static_cast<uint8_t*>(nicsim_alloc(8192, 4096));
  ib_mr_create_t mc{buf, 8192, IB_AC_LOCAL_WRITE};
  uint32_t lkey, rkey;
  ib_mr_handle_t mr;
  EXPECT_EQ(ci->register_mr(e.pd, &mc, &lkey, &rkey, &mr, nullptr), IB_SUCCESS);
  ib_local_ds_t ds[3] = {{buf, 64, lkey}, {buf + 64, 64, lkey}, {buf + 128, 64, lkey}};
  ib_av_attr_t aa{};
  aa.port_num = 1;
  aa.dlid = cl_hton16(2);
  ib_av_handle_t av;
  EXPECT_EQ(ci->create_av(e.pd, &aa, &av, nullptr), IB_SUCCESS);
  ib_qp_handle_t qp = make_qp(e, IB_QPT_UNRELIABLE_DGRM, 4, 1);
  ib_send_wr_t wr[6]{};
  for (int i = 0; i < 6; ++i) {
    wr[i].p_next = i < 5 ? &wr[i + 1] : nullptr;
    wr[i].wr_id = 100 + i;
    wr[i].wr_type = WR_SEND;
    wr[i].num_ds = 1;
    wr[i].ds_array = &ds[0];
    wr[i].dgrm.ud.h_av = av;
    wr[i].dgrm.ud.remote_qp = cl_hton32(0x77);
    wr[i].dgrm.ud.remote_qkey = cl_hton32(0x11111111);
  }
  ib_recv_wr_t rw[6]{};
  for (int i = 0; i < 6; ++i) {
    rw[i].p_next = i < 5 ? &rw[i + 1] : nullptr;
    rw[i].wr_id = 200 + i;
    rw[i].num_ds = 1;
    rw[i].ds_array = &ds[1];
  }
  ib_send_wr_t* sfail = nullptr;
  ib_recv_wr_t* rfail = nullptr;
  // RESET: neither queue takes work.
  EXPECT_EQ(ci->post_send(qp, &wr[5], &sfail), IB_INVALID_QP_STATE);
  EXPECT_EQ(sfail, &wr[5]);
  EXPECT_EQ(ci->post_recv(qp, &rw[5], &rfail), IB_INVALID_QP_STATE);
  EXPECT_EQ(rfail, &rw[5]);
  // INIT: receives yes, sends not yet.
  EXPECT_EQ(modify(e, qp, init_mod(IB_QPT_UNRELIABLE_DGRM)), IB_SUCCESS);
  EXPECT_EQ(ci->post_send(qp, &wr[5], &sfail), IB_INVALID_QP_STATE);
  ib_recv_wr_t many_sges = rw[0];
  many_sges.p_next = nullptr;
  many_sges.num_ds = 3;
  many_sges.ds_array = ds;
  EXPECT_EQ(ci->post_recv(qp, &many_sges, &rfail), IB_INVALID_MAX_SGE);
  EXPECT_EQ(rfail, &many_sges);
  EXPECT_EQ(ci->post_recv(qp, nullptr, &rfail), IB_INVALID_PARAMETER);
  // Too many receive WRs: four fit, the fifth fails and is reported.
  EXPECT_EQ(ci->post_recv(qp, &rw[1], &rfail), IB_INSUFFICIENT_RESOURCES);
  EXPECT_EQ(rfail, &rw[5]);
  EXPECT_EQ(modify(e, qp, ib_qp_mod_t{IB_QPS_RTR, {}}), IB_SUCCESS);
  ib_qp_mod_t rts{IB_QPS_RTS, {}};
  rts.state.rts.sq_psn = cl_hton32(1);
  EXPECT_EQ(modify(e, qp, rts), IB_SUCCESS);
  // Work request types a UD QP cannot do, and too many SGEs.
  ib_send_wr_t one = wr[0];
  one.p_next = nullptr;
  one.wr_type = WR_RDMA_WRITE;
  EXPECT_EQ(ci->post_send(qp, &one, &sfail), IB_INVALID_WR_TYPE);
  EXPECT_EQ(sfail, &one);
  const uint32_t bogus = 99;  // what C code could store in the enum field
  std::memcpy(&one.wr_type, &bogus, sizeof bogus);
  EXPECT_EQ(ci->post_send(qp, &one, &sfail), IB_INVALID_WR_TYPE);
  one.wr_type = WR_SEND;
  one.num_ds = 2;
  one.ds_array = ds;
  EXPECT_EQ(ci->post_send(qp, &one, &sfail), IB_INVALID_MAX_SGE);
  // Inline data larger than the WQE can hold.
  one.send_opt = IB_SEND_OPT_INLINE;
  one.num_ds = 3;
  EXPECT_EQ(ci->post_send(qp, &one, &sfail), IB_INVALID_PARAMETER);
  // Six sends into a four-deep queue: four go, the fifth is reported.
  EXPECT_EQ(ci->post_send(qp, &wr[0], &sfail), IB_INSUFFICIENT_RESOURCES);
  EXPECT_EQ(sfail, &wr[4]);
  EXPECT_EQ(ci->post_send(qp, &wr[5], &sfail), IB_INSUFFICIENT_RESOURCES);
  // Their completions free the queue again.
  const auto wcs = wait_wcs(e, 4);
  EXPECT_EQ(wcs.size(), 4u);
  for (size_t i = 0; i < wcs.size(); ++i) {
    EXPECT_EQ(wcs[i].wr_id, 100 + i);
    EXPECT_EQ(wcs[i].status, IB_WCS_SUCCESS);
    EXPECT_EQ(wcs[i].wc_type, IB_WC_SEND);
  }
  EXPECT_EQ(ci->post_send(qp, &wr[5], &sfail), IB_SUCCESS);
  EXPECT_EQ(sfail, nullptr);
  EXPECT_EQ(wait_wcs(e, 1).size(), 1u);
  // An inline send that fits; inline data needs no registration.
  ib_local_ds_t small{buf, 16, 0};
  one = wr[0];
  one.p_next = nullptr;
  one.send_opt = IB_SEND_OPT_INLINE | IB_SEND_OPT_SIGNALED;
  one.ds_array = &small;
  EXPECT_EQ(ci->post_send(qp, &one, &sfail), IB_SUCCESS);
  EXPECT_EQ(wait_wcs(e, 1).size(), 1u);
  // Error: sends are refused (the seed); the QP is flushed.
  EXPECT_EQ(modify(e, qp, ib_qp_mod_t{IB_QPS_ERROR, {}}), IB_SUCCESS);
  EXPECT_EQ(ci->post_send(qp, &wr[5], &sfail), IB_INVALID_QP_STATE);
  const auto flushed = wait_wcs(e, 4);
  EXPECT_EQ(flushed.size(), 4u);
  for (const auto& wc : flushed) EXPECT_EQ(wc.status, IB_WCS_WR_FLUSHED_ERR);
  // A receive posted in Error is taken (the seed refuses only Reset and
  // Init) and completes at once with a flush error.
  ib_recv_wr_t late = rw[0];
  late.p_next = nullptr;
  late.wr_id = 555;
  EXPECT_EQ(ci->post_recv(qp, &late, &rfail), IB_SUCCESS);
  const auto late_wc = wait_wcs(e, 1);
  EXPECT_EQ(late_wc.size(), 1u);
  for (const auto& wc : late_wc) {
    EXPECT_EQ(wc.wr_id, 555u);
    EXPECT_EQ(wc.status, IB_WCS_WR_FLUSHED_ERR);
    EXPECT_EQ(wc.wc_type, IB_WC_RECV);
  }
  ib_wc_t wc{};
  ib_wc_t* fl = &wc;
  ib_wc_t* dl;
  EXPECT_EQ(ci->poll_cq(e.cq, &fl, &dl), IB_NOT_FOUND);
  EXPECT_EQ(ci->destroy_qp(qp, nullptr), IB_SUCCESS);
  EXPECT_EQ(ci->destroy_av(av, nullptr), IB_SUCCESS);
  EXPECT_EQ(ci->deregister_mr(mr, nullptr), IB_SUCCESS);
  close_env(e);
  return 0;
}
const BuiltinProgram reg_post("verbs_test_post_checks", post_checks, "test");

}  // namespace

TEST(VerbsHandles, PostStateQueueDepthAndSges) { run_program("verbs_test_post_checks", false); }

namespace {

int mr_checks(int, char**) {
  Env e;
  if (!open_env(e)) return 1;
  const ci_interface_t* ci = e.ci;
  auto* node_buf = static_cast<uint8_t*>(nicsim_alloc(4096, 4096));
  static uint8_t user_buf[3 * 4096];  // process memory: pinned on registration
  uint32_t lkey, rkey, lkey2, rkey2;
  ib_mr_handle_t mr, mr2, smr;
  ib_mr_create_t mc{node_buf, 4096, IB_AC_LOCAL_WRITE | IB_AC_RDMA_WRITE};
  // Access rights.
  mc.access_ctrl = 0x100;
  EXPECT_EQ(ci->register_mr(e.pd, &mc, &lkey, &rkey, &mr, nullptr), IB_INVALID_PERMISSION);
  mc.access_ctrl = IB_AC_RDMA_WRITE;  // remote write needs local write
  EXPECT_EQ(ci->register_mr(e.pd, &mc, &lkey, &rkey, &mr, nullptr), IB_INVALID_PERMISSION);
  mc.access_ctrl = IB_AC_ATOMIC;
  EXPECT_EQ(ci->register_mr(e.pd, &mc, &lkey, &rkey, &mr, nullptr), IB_INVALID_PERMISSION);
  // Buffers.
  mc.access_ctrl = IB_AC_LOCAL_WRITE;
  mc.vaddr = nullptr;
  EXPECT_EQ(ci->register_mr(e.pd, &mc, &lkey, &rkey, &mr, nullptr), IB_INVALID_PARAMETER);
  mc.vaddr = node_buf;
  mc.length = 0;
  EXPECT_EQ(ci->register_mr(e.pd, &mc, &lkey, &rkey, &mr, nullptr), IB_INVALID_PARAMETER);
  mc.vaddr = node_buf + 2048;  // half node memory, half not: cannot be pinned
  mc.length = 4096;
  EXPECT_EQ(ci->register_mr(e.pd, &mc, &lkey, &rkey, &mr, nullptr), IB_INVALID_PARAMETER);
  EXPECT_EQ(ci->register_mr(e.pd, nullptr, &lkey, &rkey, &mr, nullptr), IB_INVALID_PARAMETER);
  // Node memory, and a process buffer twice (one pin shared).
  mc = ib_mr_create_t{node_buf, 4096, IB_AC_LOCAL_WRITE | IB_AC_RDMA_WRITE | IB_AC_MW_BIND};
  EXPECT_EQ(ci->register_mr(e.pd, &mc, &lkey, &rkey, &mr, nullptr), IB_SUCCESS);
  EXPECT_EQ(rkey, cl_hton32(lkey));  // R_Keys in wire order
  ib_mr_create_t uc{user_buf + 100, 2 * 4096, IB_AC_LOCAL_WRITE};
  EXPECT_EQ(ci->register_mr(e.pd, &uc, &lkey2, &rkey2, &mr2, nullptr), IB_SUCCESS);
  ib_mr_handle_t mr3;
  uint32_t lkey3, rkey3;
  EXPECT_EQ(ci->register_mr(e.pd, &uc, &lkey3, &rkey3, &mr3, nullptr), IB_SUCCESS);
  EXPECT_NE(lkey2, lkey3);
  ib_mr_attr_t ma;
  EXPECT_EQ(ci->query_mr(mr2, &ma), IB_SUCCESS);
  EXPECT_EQ(ma.local_lb, user_buf + 100);
  EXPECT_EQ(ma.lkey, lkey2);
  EXPECT_EQ(ma.h_pd, e.pd);
  EXPECT_EQ(ma.remote_lb, nullptr);  // no remote access
  EXPECT_EQ(ci->query_mr(mr2, nullptr), IB_INVALID_PARAMETER);
  // Re-registration changes the keys.
  ib_mr_create_t nc{user_buf + 200, 4096, IB_AC_LOCAL_WRITE | IB_AC_RDMA_READ};
  uint32_t nl, nr;
  EXPECT_EQ(ci->modify_mr(mr3, IB_MR_MOD_ACCESS | IB_MR_MOD_ADDR, &nc, &nl, &nr, nullptr, nullptr), IB_SUCCESS);
  EXPECT_NE(nl, lkey3);
  EXPECT_EQ(ci->modify_mr(mr3, 0, &nc, &nl, &nr, nullptr, nullptr), IB_INVALID_PARAMETER);
  nc.access_ctrl = IB_AC_ATOMIC;
  EXPECT_EQ(ci->modify_mr(mr3, IB_MR_MOD_ACCESS, &nc, &nl, &nr, nullptr, nullptr), IB_INVALID_PERMISSION);
  // Physical regions: 4 KiB pages of node memory only.
  uint64_t pages[1] = {reinterpret_cast<uint64_t>(node_buf)};
  ib_phys_create_t pc{4000, 1, pages, 96, 4096, IB_AC_LOCAL_WRITE};
  void* va = reinterpret_cast<void*>(0x10000000);
  ib_mr_handle_t pmr;
  EXPECT_EQ(ci->register_pmr(e.pd, &pc, &va, &lkey2, &rkey2, &pmr, nullptr), IB_SUCCESS);
  EXPECT_EQ(reinterpret_cast<uint64_t>(va), 0x10000000u + 96);  // offset into the page kept
  pc.page_size = 8192;
  EXPECT_EQ(ci->register_pmr(e.pd, &pc, &va, &lkey2, &rkey2, &mr2, nullptr), IB_INVALID_PARAMETER);
  pc.page_size = 4096;
  pages[0] += 8;  // not page aligned
  EXPECT_EQ(ci->register_pmr(e.pd, &pc, &va, &lkey2, &rkey2, &mr2, nullptr), IB_INVALID_PARAMETER);
  pages[0] = reinterpret_cast<uint64_t>(user_buf) & ~uint64_t{4095};  // not node memory
  EXPECT_EQ(ci->register_pmr(e.pd, &pc, &va, &lkey2, &rkey2, &mr2, nullptr), IB_INVALID_PARAMETER);
  // Shared regions keep their owner busy; so do bound windows.
  void* sva = nullptr;
  EXPECT_EQ(ci->register_smr(mr, e.pd, IB_AC_LOCAL_WRITE, &sva, &lkey2, &rkey2, &smr, nullptr), IB_SUCCESS);
  EXPECT_EQ(ci->deregister_mr(mr, nullptr), IB_RESOURCE_BUSY);
  EXPECT_EQ(ci->deregister_mr(smr, nullptr), IB_SUCCESS);
  ib_qp_handle_t qp = make_qp(e, IB_QPT_RELIABLE_CONN);
  to_rts(e, qp, IB_QPT_RELIABLE_CONN);
  ib_mw_handle_t mw;
  uint32_t wkey, bound;
  EXPECT_EQ(ci->create_mw(e.pd, &wkey, &mw, nullptr), IB_SUCCESS);
  ib_bind_wr_t b{};
  b.wr_id = 7;
  b.send_opt = IB_SEND_OPT_SIGNALED;
  b.h_mr = mr;
  b.access_ctrl = IB_AC_RDMA_WRITE;
  b.current_rkey = wkey ^ 0x01000000;
  b.local_ds = ib_local_ds_t{node_buf, 1024, lkey};
  EXPECT_EQ(ci->bind_mw(mw, qp, &b, &bound), IB_INVALID_RKEY);
  b.current_rkey = wkey;
  b.access_ctrl = IB_AC_LOCAL_WRITE;
  EXPECT_EQ(ci->bind_mw(mw, qp, &b, &bound), IB_INVALID_PERMISSION);
  b.access_ctrl = IB_AC_RDMA_WRITE;
  b.local_ds.length = 8192;  // beyond the region
  EXPECT_EQ(ci->bind_mw(mw, qp, &b, &bound), IB_INVALID_PARAMETER);
  b.local_ds.length = 1024;
  EXPECT_EQ(ci->bind_mw(mw, qp, &b, &bound), IB_SUCCESS);
  EXPECT_NE(bound, wkey);
  const auto wcs = wait_wcs(e, 1);
  EXPECT_EQ(wcs.size(), 1u);
  if (wcs.size() != 1) return 1;
  EXPECT_EQ(wcs[0].wc_type, IB_WC_MW_BIND);
  EXPECT_EQ(wcs[0].status, IB_WCS_SUCCESS);
  ib_pd_handle_t qpd;
  uint32_t qkey;
  EXPECT_EQ(ci->query_mw(mw, &qpd, &qkey, nullptr), IB_SUCCESS);
  EXPECT_EQ(qkey, bound);
  EXPECT_EQ(ci->deregister_mr(mr, nullptr), IB_RESOURCE_BUSY);  // a window is bound to it
  EXPECT_EQ(ci->destroy_mw(mw, nullptr), IB_SUCCESS);
  EXPECT_EQ(ci->deregister_mr(mr, nullptr), IB_SUCCESS);
  EXPECT_EQ(ci->destroy_qp(qp, nullptr), IB_SUCCESS);
  EXPECT_EQ(ci->deregister_mr(mr2, nullptr), IB_SUCCESS);
  EXPECT_EQ(ci->deregister_mr(mr3, nullptr), IB_SUCCESS);
  EXPECT_EQ(ci->deregister_mr(pmr, nullptr), IB_SUCCESS);
  close_env(e);
  return 0;
}
const BuiltinProgram reg_mr("verbs_test_mr_checks", mr_checks, "test");

}  // namespace

TEST(VerbsHandles, RegisterMrChecksAccessAndBuffers) { run_program("verbs_test_mr_checks", false); }

namespace {

int busy(int, char**) {
  Env e;
  if (!open_env(e)) return 1;
  const ci_interface_t* ci = e.ci;
  ib_qp_handle_t qp = make_qp(e, IB_QPT_UNRELIABLE_DGRM);
  EXPECT_EQ(ci->deallocate_pd(e.pd, nullptr), IB_RESOURCE_BUSY);  // a QP lives in it
  EXPECT_EQ(ci->destroy_cq(e.cq, nullptr), IB_RESOURCE_BUSY);     // the QP uses it
  EXPECT_EQ(ci->close_ca(e.ca), IB_RESOURCE_BUSY);                // a PD lives
  ib_gid_t mgid{};
  mgid.raw[0] = 0xff;
  ib_mcast_handle_t mc;
  EXPECT_EQ(ci->attach_mcast(qp, &mgid, cl_hton16(0xc001), &mc, nullptr), IB_INVALID_QP_STATE);  // no context yet
  EXPECT_EQ(modify(e, qp, init_mod(IB_QPT_UNRELIABLE_DGRM)), IB_SUCCESS);
  mgid.raw[0] = 0xfe;
  EXPECT_EQ(ci->attach_mcast(qp, &mgid, cl_hton16(0xc001), &mc, nullptr), IB_INVALID_GID);
  mgid.raw[0] = 0xff;
  EXPECT_EQ(ci->attach_mcast(qp, &mgid, cl_hton16(0x0001), &mc, nullptr), IB_INVALID_LID);
  EXPECT_EQ(ci->attach_mcast(qp, &mgid, cl_hton16(0xc001), &mc, nullptr), IB_SUCCESS);
  EXPECT_EQ(ci->destroy_qp(qp, nullptr), IB_RESOURCE_BUSY);  // still in a group
  EXPECT_EQ(ci->detach_mcast(mc, nullptr), IB_SUCCESS);
  ib_qp_handle_t rc = make_qp(e, IB_QPT_RELIABLE_CONN);
  EXPECT_EQ(ci->attach_mcast(rc, &mgid, cl_hton16(0xc001), &mc, nullptr), IB_INVALID_SERVICE_TYPE);
  // A second special QP of a kind is busy.
  ib_qp_create_t sc{};
  sc.qp_type = IB_QPT_QP1;
  sc.sq_depth = sc.rq_depth = 4;
  sc.sq_sge = sc.rq_sge = 1;
  sc.h_sq_cq = sc.h_rq_cq = e.cq;
  ib_qp_attr_t a;
  ib_qp_handle_t gsi, gsi2;
  EXPECT_EQ(ci->create_spl_qp(e.pd, 1, nullptr, &sc, &a, &gsi), IB_SUCCESS);
  EXPECT_EQ(cl_ntoh32(a.num), 1u);
  EXPECT_EQ(ci->create_spl_qp(e.pd, 1, nullptr, &sc, &a, &gsi2), IB_RESOURCE_BUSY);
  EXPECT_EQ(ci->create_spl_qp(e.pd, 2, nullptr, &sc, &a, &gsi2), IB_INVALID_PORT);
  sc.qp_type = IB_QPT_RAW_ETHER;
  EXPECT_EQ(ci->create_spl_qp(e.pd, 1, nullptr, &sc, &a, &gsi2), IB_UNSUPPORTED);
  // create_qp limits.
  ib_qp_create_t qc = sc;
  qc.qp_type = IB_QPT_RELIABLE_DGRM;
  EXPECT_EQ(ci->create_qp(e.pd, nullptr, &qc, &a, &gsi2, nullptr), IB_UNSUPPORTED);
  qc.qp_type = IB_QPT_QP0;
  EXPECT_EQ(ci->create_qp(e.pd, nullptr, &qc, &a, &gsi2, nullptr), IB_INVALID_SERVICE_TYPE);
  qc.qp_type = IB_QPT_RELIABLE_CONN;
  qc.sq_depth = 1u << 30;
  EXPECT_EQ(ci->create_qp(e.pd, nullptr, &qc, &a, &gsi2, nullptr), IB_INVALID_MAX_WRS);
  qc.sq_depth = 4;
  qc.sq_sge = 1000;
  EXPECT_EQ(ci->create_qp(e.pd, nullptr, &qc, &a, &gsi2, nullptr), IB_INVALID_MAX_SGE);
  // CQ sizes.
  uint32_t size = 0;
  ib_cq_handle_t cq2;
  EXPECT_EQ(ci->create_cq(e.pd, nullptr, &size, &cq2, nullptr), IB_INVALID_CQ_SIZE);
  size = 1u << 30;
  EXPECT_EQ(ci->create_cq(e.pd, nullptr, &size, &cq2, nullptr), IB_INVALID_CQ_SIZE);
  size = 100;
  EXPECT_EQ(ci->create_cq(e.pd, nullptr, &size, &cq2, nullptr), IB_SUCCESS);
  EXPECT_GE(size, 100u);
  size = 300;
  EXPECT_EQ(ci->resize_cq(cq2, &size, nullptr), IB_SUCCESS);
  EXPECT_GE(size, 300u);
  uint32_t q = 0;
  EXPECT_EQ(ci->query_cq(cq2, &q, nullptr), IB_SUCCESS);
  EXPECT_EQ(q, size);
  // Unwind in order: everything succeeds once nothing uses it.
  EXPECT_EQ(ci->destroy_cq(cq2, nullptr), IB_SUCCESS);
  EXPECT_EQ(ci->destroy_qp(gsi, nullptr), IB_SUCCESS);
  EXPECT_EQ(ci->destroy_qp(rc, nullptr), IB_SUCCESS);
  EXPECT_EQ(ci->destroy_qp(qp, nullptr), IB_SUCCESS);
  close_env(e);
  return 0;
}
const BuiltinProgram reg_busy("verbs_test_busy", busy, "test");

}  // namespace

TEST(VerbsHandles, BusyResourcesCannotBeDestroyed) { run_program("verbs_test_busy", false); }

namespace {

struct Bootstrap {
  uint32_t qpn;
  uint16_t lid;
};

int rc_send_recv(int, char**) {
  const uint32_t rank = nicsim_workload_rank();
  const uint32_t peer = nicsim_workload_node(1 - rank);
  Env e;
  if (!open_env(e)) return 1;
  const ci_interface_t* ci = e.ci;
  // The world routes LID rank+1 to this node; make the port use it.
  const uint16_t lid = ensure_lid(e, static_cast<uint16_t>(rank + 1));
  constexpr uint32_t kLen = 6000;  // three packets at a 2 KiB MTU
  auto* buf = static_cast<uint8_t*>(nicsim_alloc(8192, 4096));
  ib_mr_create_t mc{buf, 8192, IB_AC_LOCAL_WRITE};
  uint32_t lkey, rkey;
  ib_mr_handle_t mr;
  EXPECT_EQ(ci->register_mr(e.pd, &mc, &lkey, &rkey, &mr, nullptr), IB_SUCCESS);
  ib_qp_handle_t qp = make_qp(e, IB_QPT_RELIABLE_CONN, 16, 1);
  Bootstrap mine{qp_num(e, qp), lid}, theirs{};
  EXPECT_EQ(nicsim_mgmt_send(peer, 1, &mine, sizeof mine), 0);
  EXPECT_EQ(nicsim_mgmt_recv(peer, 1, &theirs, sizeof theirs, nullptr, 0), static_cast<long>(sizeof theirs));
  to_rts(e, qp, IB_QPT_RELIABLE_CONN, theirs.qpn, theirs.lid);
  ib_local_ds_t ds{buf, kLen, lkey};
  if (rank == 1) {
    ib_recv_wr_t rw{nullptr, 0xabc, 1, &ds};
    ib_recv_wr_t* fail;
    EXPECT_EQ(ci->post_recv(qp, &rw, &fail), IB_SUCCESS);
    EXPECT_EQ(ci->enable_cq_notify(e.cq, FALSE), IB_SUCCESS);
  }
  nicsim_barrier();  // the receive is posted
  if (rank == 0) {
    for (uint32_t i = 0; i < kLen; ++i) buf[i] = static_cast<uint8_t>(i * 7 + 3);
    ib_send_wr_t sw{};
    sw.wr_id = 0x5e5d;
    sw.wr_type = WR_SEND;
    sw.send_opt = IB_SEND_OPT_SIGNALED | IB_SEND_OPT_IMMEDIATE;
    sw.num_ds = 1;
    sw.ds_array = &ds;
    sw.immediate_data = cl_hton32(0x01020304);
    ib_send_wr_t* fail;
    EXPECT_EQ(ci->post_send(qp, &sw, &fail), IB_SUCCESS);
    const auto wcs = wait_wcs(e, 1);
    EXPECT_EQ(wcs.size(), 1u);
    if (!wcs.empty()) {
      EXPECT_EQ(wcs[0].wr_id, 0x5e5du);
      EXPECT_EQ(wcs[0].status, IB_WCS_SUCCESS) << ib_get_wc_status_str(wcs[0].status);
      EXPECT_EQ(wcs[0].wc_type, IB_WC_SEND);
    }
  } else {
    const auto wcs = wait_wcs(e, 1);
    EXPECT_EQ(wcs.size(), 1u);
    if (!wcs.empty()) {
      EXPECT_EQ(wcs[0].wr_id, 0xabcu);
      EXPECT_EQ(wcs[0].status, IB_WCS_SUCCESS) << ib_get_wc_status_str(wcs[0].status);
      EXPECT_EQ(wcs[0].wc_type, IB_WC_RECV);
      EXPECT_EQ(wcs[0].length, kLen);
      EXPECT_TRUE(wcs[0].recv.conn.recv_opt & IB_RECV_OPT_IMMEDIATE);
      EXPECT_EQ(wcs[0].recv.conn.immediate_data, cl_hton32(0x01020304));
    }
    uint32_t wrong = 0;
    for (uint32_t i = 0; i < kLen; ++i) wrong += buf[i] != static_cast<uint8_t>(i * 7 + 3);
    EXPECT_EQ(wrong, 0u) << "payload bytes differ";
  }
  nicsim_barrier();
  // The receiver's armed CQ called back once (in interrupt context, by now).
  EXPECT_EQ(g_completions, 1);
  EXPECT_EQ(ci->destroy_qp(qp, nullptr), IB_SUCCESS);
  EXPECT_EQ(ci->deregister_mr(mr, nullptr), IB_SUCCESS);
  close_env(e);
  return 0;
}
const BuiltinProgram reg_rc("verbs_test_rc_send_recv", rc_send_recv, "test");

}  // namespace

TEST(VerbsHandles, RcSendRecvCarriesPayloadEndToEnd) { run_program("verbs_test_rc_send_recv", true); }
