// The verbs driver's answers to bad arguments, as one table of (verb,
// argument class, status): NULL required pointers, out-of-range values
// (ports, queue and CQ sizes, SGE counts, P_Key indices), invalid access
// flags, QP states and transitions, work request types and sizes. The
// status is the one seed 002 lists for that case in the verb's RETURN
// VALUE section. Where the seed lists none, the row says so and which
// seed line the driver's answer rests on. Bad handles are in
// verbs_handles_test.cc.
//
// Every call fails before it changes anything; after the table the test
// checks that the objects it used are as they were.
#include "verbs/tests/verbs_test_util.h"

using namespace nicsim;
using namespace nicsim::verbs::testing;

namespace {

constexpr uint32_t kHuge = 1u << 30;  // beyond every queue and CQ limit
constexpr uint8_t kNoPort = 99;       // beyond the HCA's ports

struct Row {
  const char* verb;
  const char* arg_class;
  ib_api_status_t expect;
  std::function<ib_api_status_t()> call;
};

// The objects the rows use, and scratch for their outputs.
struct Fixture {
  Env e;
  uint8_t* buf = nullptr;              // 16 KiB of node memory
  ib_mr_handle_t mr = nullptr;         // buf[0, 8 KiB): local write, window binding
  ib_mr_handle_t mr_nobind = nullptr;  // buf[8 KiB, 16 KiB): local write only
  uint32_t lkey = 0, mr_nobind_lkey = 0;
  ib_mw_handle_t mw = nullptr;
  uint32_t mw_rkey = 0;
  ib_av_handle_t av = nullptr;
  ib_qp_handle_t rc_rts = nullptr, ud_rts = nullptr, rc_reset = nullptr, rc_init = nullptr, rc_rtr = nullptr;
  ib_cq_handle_t full_cq = nullptr;  // four completions waiting in it
  ib_qp_handle_t full_qp = nullptr;
  // Outputs.
  ib_ca_handle_t oca = nullptr;
  ib_pd_handle_t opd = nullptr;
  ib_av_handle_t oav = nullptr;
  ib_cq_handle_t ocq = nullptr;
  ib_qp_handle_t oqp = nullptr;
  ib_mr_handle_t omr = nullptr;
  ib_mw_handle_t omw = nullptr;
  ib_mcast_handle_t omc = nullptr;
  ib_rdd_handle_t ordd = nullptr;
  ib_qp_attr_t qa{};
  ib_av_attr_t ava{};
  ib_mr_attr_t mra{};
  uint32_t k1 = 0, k2 = 0, size = 0;
  void* vaddr = nullptr;
  uint8_t mad_in[MAD_BLOCK_SIZE] = {}, mad_out[MAD_BLOCK_SIZE] = {};
  std::vector<uint64_t> ca_attr = std::vector<uint64_t>(1024);
  size_t ca_size = 0;
  ib_wc_t wc{};
  ib_wc_t* free_list = nullptr;
  ib_wc_t* done_list = nullptr;
  ib_send_wr_t* send_failed = nullptr;
  ib_recv_wr_t* recv_failed = nullptr;
  uint64_t page = 0;
};

ib_av_attr_t av_attr(uint8_t port) {
  ib_av_attr_t a{};
  a.port_num = port;
  a.dlid = cl_hton16(2);
  return a;
}

ib_qp_create_t qp_create(const Fixture& f, ib_qp_type_t type) {
  ib_qp_create_t c{};
  c.qp_type = type;
  c.sq_depth = c.rq_depth = 4;
  c.sq_sge = c.rq_sge = 1;
  c.h_sq_cq = c.h_rq_cq = f.e.cq;
  return c;
}

ib_phys_create_t phys(Fixture& f, uint32_t page_size, ib_access_t access) {
  f.page = reinterpret_cast<uint64_t>(f.buf);
  return ib_phys_create_t{4096, 1, &f.page, 0, page_size, access};
}

// ---- CA, PD, AV, local MAD -------------------------------------------------------------

std::vector<Row> ca_rows(Fixture& f) {
  const ci_interface_t* ci = f.e.ci;
  const ib_ca_handle_t ca = f.e.ca;
  return {
      {"open_ca", "NULL completion callback", IB_INVALID_PARAMETER,
       [&f, ci] { return ci->open_ca(ci->guid, nullptr, on_event, nullptr, &f.oca); }},
      {"open_ca", "NULL async event callback", IB_INVALID_PARAMETER,
       [&f, ci] { return ci->open_ca(ci->guid, on_completion, nullptr, nullptr, &f.oca); }},
      {"open_ca", "zero GUID", IB_INVALID_PARAMETER,
       [&f, ci] { return ci->open_ca(0, on_completion, on_event, nullptr, &f.oca); }},
      {"open_ca", "NULL ph_ca", IB_INVALID_PARAMETER,
       [ci] { return ci->open_ca(ci->guid, on_completion, on_event, nullptr, nullptr); }},
      {"open_ca", "GUID of no CA", IB_NOT_FOUND,
       [&f, ci] { return ci->open_ca(ci->guid ^ 0xff00, on_completion, on_event, nullptr, &f.oca); }},
      {"open_ca", "CA already open", IB_RESOURCE_BUSY,
       [&f, ci] { return ci->open_ca(ci->guid, on_completion, on_event, nullptr, &f.oca); }},
      {"query_ca", "NULL p_size", IB_INVALID_PARAMETER,
       [ci, ca] { return ci->query_ca(ca, nullptr, nullptr, nullptr); }},
      {"query_ca", "byte count too small", IB_INSUFFICIENT_MEMORY,
       [&f, ci, ca] {
         f.ca_size = 8;
         return ci->query_ca(ca, reinterpret_cast<ib_ca_attr_t*>(f.ca_attr.data()), &f.ca_size, nullptr);
       }},
      {"modify_ca", "port 0", IB_INVALID_PORT, [ci, ca] { return ci->modify_ca(ca, 0, IB_CA_MOD_QKEY_CTR, nullptr); }},
      {"modify_ca", "port beyond the CA's", IB_INVALID_PORT,
       [ci, ca] { return ci->modify_ca(ca, kNoPort, IB_CA_MOD_QKEY_CTR, nullptr); }},
      {"modify_ca", "unknown command bit", IB_INVALID_PARAMETER,
       [ci, ca] { return ci->modify_ca(ca, 1, 0x80000000u, nullptr); }},
      // Seed: IB_INVALID_PARAMETER "Unknown Command supplied": no command at all.
      {"modify_ca", "empty command mask", IB_INVALID_PARAMETER, [ci, ca] { return ci->modify_ca(ca, 1, 0, nullptr); }},
      {"modify_ca", "capability bit with NULL p_port_attr_mod", IB_INVALID_PARAMETER,
       [ci, ca] { return ci->modify_ca(ca, 1, IB_CA_MOD_IS_CM_SUPPORTED, nullptr); }},
      {"modify_ca", "InitType (not kept by this CA)", IB_UNSUPPORTED,
       [ci, ca] {
         ib_port_attr_mod_t m{};
         return ci->modify_ca(ca, 1, IB_CA_MOD_INIT_TYPE_VALUE, &m);
       }},
      // No seed code for a NULL out-pointer: IB_INVALID_PARAMETER, the
      // seed's answer to NULL pointers in the verbs that list one.
      {"allocate_pd", "NULL ph_pd", IB_INVALID_PARAMETER, [ci, ca] { return ci->allocate_pd(ca, nullptr, nullptr); }},
      {"allocate_rdd", "CA without RD service", IB_UNSUPPORTED,
       [&f, ci, ca] { return ci->allocate_rdd(ca, &f.ordd, nullptr); }},
      {"local_mad", "port 0", IB_INVALID_PORT, [&f, ci, ca] { return ci->local_mad(ca, 0, f.mad_in, f.mad_out); }},
      {"local_mad", "port beyond the CA's", IB_INVALID_PORT,
       [&f, ci, ca] { return ci->local_mad(ca, kNoPort, f.mad_in, f.mad_out); }},
      // No seed code for NULL MADs: IB_INVALID_PARAMETER as above.
      {"local_mad", "NULL p_mad_in", IB_INVALID_PARAMETER,
       [&f, ci, ca] { return ci->local_mad(ca, 1, nullptr, f.mad_out); }},
      {"local_mad", "NULL p_mad_out", IB_INVALID_PARAMETER,
       [&f, ci, ca] { return ci->local_mad(ca, 1, f.mad_in, nullptr); }},
  };
}

std::vector<Row> av_rows(Fixture& f) {
  const ci_interface_t* ci = f.e.ci;
  const ib_pd_handle_t pd = f.e.pd;
  return {
      {"create_av", "NULL p_av_attr", IB_INVALID_PARAMETER,
       [&f, ci, pd] { return ci->create_av(pd, nullptr, &f.oav, nullptr); }},
      {"create_av", "NULL ph_av", IB_INVALID_PARAMETER,
       [ci, pd] {
         const ib_av_attr_t a = av_attr(1);
         return ci->create_av(pd, &a, nullptr, nullptr);
       }},
      {"create_av", "port 0", IB_INVALID_PORT,
       [&f, ci, pd] {
         const ib_av_attr_t a = av_attr(0);
         return ci->create_av(pd, &a, &f.oav, nullptr);
       }},
      {"create_av", "port beyond the CA's", IB_INVALID_PORT,
       [&f, ci, pd] {
         const ib_av_attr_t a = av_attr(kNoPort);
         return ci->create_av(pd, &a, &f.oav, nullptr);
       }},
      {"query_av", "NULL p_av_attr", IB_INVALID_PARAMETER,
       [&f, ci] { return ci->query_av(f.av, nullptr, &f.opd, nullptr); }},
      {"query_av", "NULL ph_pd", IB_INVALID_PARAMETER,
       [&f, ci] { return ci->query_av(f.av, &f.ava, nullptr, nullptr); }},
      {"modify_av", "NULL p_av_attr", IB_INVALID_PARAMETER, [&f, ci] { return ci->modify_av(f.av, nullptr, nullptr); }},
      {"modify_av", "port 0", IB_INVALID_PORT,
       [&f, ci] {
         const ib_av_attr_t a = av_attr(0);
         return ci->modify_av(f.av, &a, nullptr);
       }},
      {"modify_av", "port beyond the CA's", IB_INVALID_PORT,
       [&f, ci] {
         const ib_av_attr_t a = av_attr(kNoPort);
         return ci->modify_av(f.av, &a, nullptr);
       }},
  };
}

// ---- CQs ---------------------------------------------------------------------------------

std::vector<Row> cq_rows(Fixture& f) {
  const ci_interface_t* ci = f.e.ci;
  const ib_pd_handle_t pd = f.e.pd;
  const ib_cq_handle_t cq = f.e.cq;
  auto sized = [&f](uint32_t n) {
    f.size = n;
    return &f.size;
  };
  return {
      {"create_cq", "NULL p_size", IB_INVALID_PARAMETER,
       [&f, ci, pd] { return ci->create_cq(pd, nullptr, nullptr, &f.ocq, nullptr); }},
      {"create_cq", "NULL ph_cq", IB_INVALID_PARAMETER,
       [=] { return ci->create_cq(pd, nullptr, sized(16), nullptr, nullptr); }},
      {"create_cq", "zero entries", IB_INVALID_CQ_SIZE,
       [=, &f] { return ci->create_cq(pd, nullptr, sized(0), &f.ocq, nullptr); }},
      {"create_cq", "more entries than the CA has", IB_INVALID_CQ_SIZE,
       [=, &f] { return ci->create_cq(pd, nullptr, sized(kHuge), &f.ocq, nullptr); }},
      {"resize_cq", "NULL p_size", IB_INVALID_PARAMETER, [ci, cq] { return ci->resize_cq(cq, nullptr, nullptr); }},
      {"resize_cq", "zero entries", IB_INVALID_CQ_SIZE, [=] { return ci->resize_cq(cq, sized(0), nullptr); }},
      {"resize_cq", "more entries than the CA has", IB_INVALID_CQ_SIZE,
       [=] { return ci->resize_cq(cq, sized(kHuge), nullptr); }},
      {"resize_cq", "fewer entries than the CQ holds", IB_OVERFLOW,
       [=, &f] { return ci->resize_cq(f.full_cq, sized(1), nullptr); }},
      {"query_cq", "NULL p_size", IB_INVALID_PARAMETER, [ci, cq] { return ci->query_cq(cq, nullptr, nullptr); }},
      // No seed code for NULL lists: IB_INVALID_PARAMETER as for NULLs elsewhere.
      {"poll_cq", "NULL pp_free_wclist", IB_INVALID_PARAMETER,
       [&f, ci, cq] { return ci->poll_cq(cq, nullptr, &f.done_list); }},
      {"poll_cq", "NULL pp_done_wclist", IB_INVALID_PARAMETER,
       [&f, ci, cq] {
         f.free_list = &f.wc;
         return ci->poll_cq(cq, &f.free_list, nullptr);
       }},
      {"poll_cq", "empty CQ", IB_NOT_FOUND,
       [&f, ci, cq] {
         f.free_list = &f.wc;
         return ci->poll_cq(cq, &f.free_list, &f.done_list);
       }},
  };
}

// ---- QP creation -------------------------------------------------------------------------

ib_api_status_t try_create_qp(Fixture& f, const std::function<void(ib_qp_create_t&)>& change) {
  ib_qp_create_t c = qp_create(f, IB_QPT_RELIABLE_CONN);
  change(c);
  return f.e.ci->create_qp(f.e.pd, nullptr, &c, &f.qa, &f.oqp, nullptr);
}

ib_api_status_t try_create_spl_qp(Fixture& f, uint8_t port, const std::function<void(ib_qp_create_t&)>& change) {
  ib_qp_create_t c = qp_create(f, IB_QPT_QP1);
  change(c);
  return f.e.ci->create_spl_qp(f.e.pd, port, nullptr, &c, &f.qa, &f.oqp);
}

std::vector<Row> create_qp_rows(Fixture& f) {
  const ci_interface_t* ci = f.e.ci;
  const ib_pd_handle_t pd = f.e.pd;
  auto type = [](ib_qp_type_t t) { return [t](ib_qp_create_t& c) { c.qp_type = t; }; };
  // Zero queue depths are not among them: a send-only or receive-only QP is
  // legal, and the seed's IB_INVALID_MAX_WRS is "Max WRS capacity exceeded".
  return {
      {"create_qp", "NULL p_create_attr", IB_INVALID_PARAMETER,
       [&f, ci, pd] { return ci->create_qp(pd, nullptr, nullptr, &f.qa, &f.oqp, nullptr); }},
      {"create_qp", "NULL p_qp_attr", IB_INVALID_PARAMETER,
       [&f, ci, pd] {
         const ib_qp_create_t c = qp_create(f, IB_QPT_RELIABLE_CONN);
         return ci->create_qp(pd, nullptr, &c, nullptr, &f.oqp, nullptr);
       }},
      {"create_qp", "NULL ph_qp", IB_INVALID_PARAMETER,
       [&f, ci, pd] {
         const ib_qp_create_t c = qp_create(f, IB_QPT_RELIABLE_CONN);
         return ci->create_qp(pd, nullptr, &c, &f.qa, nullptr, nullptr);
       }},
      {"create_qp", "unknown service type", IB_INVALID_SERVICE_TYPE,
       // 15: no QP type, but within the enum's range (a value outside it
       // would be undefined behaviour in the caller already).
       [&f, type] { return try_create_qp(f, type(static_cast<ib_qp_type_t>(15))); }},
      {"create_qp", "special QP type (QP0)", IB_INVALID_SERVICE_TYPE,
       [&f, type] { return try_create_qp(f, type(IB_QPT_QP0)); }},
      {"create_qp", "reliable datagram", IB_UNSUPPORTED,
       [&f, type] { return try_create_qp(f, type(IB_QPT_RELIABLE_DGRM)); }},
      {"create_qp", "NULL send CQ", IB_INVALID_CQ_HANDLE,
       [&f] { return try_create_qp(f, [](ib_qp_create_t& c) { c.h_sq_cq = nullptr; }); }},
      {"create_qp", "sq_depth beyond the CA's", IB_INVALID_MAX_WRS,
       [&f] { return try_create_qp(f, [](ib_qp_create_t& c) { c.sq_depth = kHuge; }); }},
      {"create_qp", "rq_depth beyond the CA's", IB_INVALID_MAX_WRS,
       [&f] { return try_create_qp(f, [](ib_qp_create_t& c) { c.rq_depth = kHuge; }); }},
      {"create_qp", "sq_sge beyond the CA's", IB_INVALID_MAX_SGE,
       [&f] { return try_create_qp(f, [](ib_qp_create_t& c) { c.sq_sge = 1000; }); }},
      {"create_qp", "rq_sge beyond the CA's", IB_INVALID_MAX_SGE,
       [&f] { return try_create_qp(f, [](ib_qp_create_t& c) { c.rq_sge = 1000; }); }},
      {"create_spl_qp", "NULL p_create_attr", IB_INVALID_PARAMETER,
       [&f, ci, pd] { return ci->create_spl_qp(pd, 1, nullptr, nullptr, &f.qa, &f.oqp); }},
      {"create_spl_qp", "port 0", IB_INVALID_PORT, [&f] { return try_create_spl_qp(f, 0, [](ib_qp_create_t&) {}); }},
      {"create_spl_qp", "port beyond the CA's", IB_INVALID_PORT,
       [&f] { return try_create_spl_qp(f, kNoPort, [](ib_qp_create_t&) {}); }},
      {"create_spl_qp", "not a special QP type (RC)", IB_INVALID_PARAMETER,
       [&f, type] { return try_create_spl_qp(f, 1, type(IB_QPT_RELIABLE_CONN)); }},
      {"create_spl_qp", "raw Ethertype QP", IB_UNSUPPORTED,
       [&f, type] { return try_create_spl_qp(f, 1, type(IB_QPT_RAW_ETHER)); }},
      {"create_spl_qp", "raw IPv6 QP", IB_UNSUPPORTED,
       [&f, type] { return try_create_spl_qp(f, 1, type(IB_QPT_RAW_IPV6)); }},
      {"create_spl_qp", "NULL receive CQ", IB_INVALID_CQ_HANDLE,
       [&f] { return try_create_spl_qp(f, 1, [](ib_qp_create_t& c) { c.h_rq_cq = nullptr; }); }},
      {"create_spl_qp", "sq_depth beyond the CA's", IB_INVALID_MAX_WRS,
       [&f] { return try_create_spl_qp(f, 1, [](ib_qp_create_t& c) { c.sq_depth = kHuge; }); }},
      {"create_spl_qp", "rq_sge beyond the CA's", IB_INVALID_MAX_SGE,
       [&f] { return try_create_spl_qp(f, 1, [](ib_qp_create_t& c) { c.rq_sge = 1000; }); }},
  };
}

// ---- QP modify, query, multicast --------------------------------------------------------------

// A modify of `qp` towards `m`'s state after `change`.
ib_api_status_t try_modify(Fixture& f, ib_qp_handle_t qp, ib_qp_mod_t m,
                           const std::function<void(ib_qp_mod_t&)>& change) {
  change(m);
  return f.e.ci->modify_qp(qp, &m, &f.qa, nullptr);
}

// The seed lists no IB_INVALID_PORT or IB_INVALID_PERMISSION for modify_qp:
// a bad port or access value is "The parameter p_modify_attr is not valid"
// (IB_INVALID_PARAMETER), as is an attribute the transition does not take
// (IBA table 79) or a value beyond its field.
std::vector<Row> modify_qp_rows(Fixture& f) {
  const ci_interface_t* ci = f.e.ci;
  const ib_qp_mod_t init = init_mod(IB_QPT_RELIABLE_CONN), rtr = rtr_mod(0x99, 2);
  auto same = [](ib_qp_mod_t&) {};
  return {
      {"modify_qp", "NULL p_modify_attr", IB_INVALID_PARAMETER,
       [&f, ci] { return ci->modify_qp(f.rc_reset, nullptr, &f.qa, nullptr); }},
      {"modify_qp", "NULL p_qp_attr", IB_INVALID_PARAMETER,
       [&f, ci, init] { return ci->modify_qp(f.rc_reset, &init, nullptr, nullptr); }},
      {"modify_qp", "unknown state", IB_INVALID_PARAMETER,
       [&f, init] {
         return try_modify(f, f.rc_reset, init,
                           [](ib_qp_mod_t& m) { m.req_state = static_cast<ib_qp_state_t>(0x7777); });
       }},
      {"modify_qp", "RESET to RTR", IB_QP_INVALID_STATE,
       [&f, rtr, same] { return try_modify(f, f.rc_reset, rtr, same); }},
      {"modify_qp", "RTS to INIT", IB_QP_INVALID_STATE,
       [&f, init, same] { return try_modify(f, f.rc_rts, init, same); }},
      {"modify_qp", "to SQE (only the CA goes there)", IB_QP_INVALID_STATE,
       [&f, init] { return try_modify(f, f.rc_rts, init, [](ib_qp_mod_t& m) { m.req_state = IB_QPS_SQERR; }); }},
      {"modify_qp", "port 0", IB_INVALID_PARAMETER,
       [&f, init] { return try_modify(f, f.rc_reset, init, [](ib_qp_mod_t& m) { m.state.init.primary_port = 0; }); }},
      {"modify_qp", "port beyond the CA's", IB_INVALID_PARAMETER,
       [&f, init] {
         return try_modify(f, f.rc_reset, init, [](ib_qp_mod_t& m) { m.state.init.primary_port = kNoPort; });
       }},
      {"modify_qp", "P_Key index beyond the table", IB_INVALID_PKEY,
       [&f, init] { return try_modify(f, f.rc_reset, init, [](ib_qp_mod_t& m) { m.state.init.pkey_index = 999; }); }},
      {"modify_qp", "unknown access flag", IB_INVALID_PARAMETER,
       [&f, init] {
         return try_modify(f, f.rc_reset, init, [](ib_qp_mod_t& m) { m.state.init.access_ctrl = 0x8000; });
       }},
      {"modify_qp", "attribute the transition does not take", IB_INVALID_PARAMETER,
       [&f, init] {
         return try_modify(f, f.rc_reset, init, [](ib_qp_mod_t& m) { m.state.init.opts = IB_MOD_QP_RETRY_CNT; });
       }},
      {"modify_qp", "alternate path (no APM on this CA)", IB_UNSUPPORTED,
       [&f, init] {
         return try_modify(f, f.rc_reset, init, [](ib_qp_mod_t& m) { m.state.init.opts = IB_MOD_QP_ALTERNATE_AV; });
       }},
      {"query_qp", "NULL p_qp_attr", IB_INVALID_PARAMETER,
       [&f, ci] { return ci->query_qp(f.rc_rts, nullptr, nullptr); }},
  };
}

std::vector<Row> modify_qp_value_rows(Fixture& f) {
  const ib_qp_mod_t rtr = rtr_mod(0x99, 2), rts = rts_mod();
  return {
      {"modify_qp", "work queue resize (not on this CA)", IB_UNSUPPORTED,
       [&f, rtr] {
         return try_modify(f, f.rc_init, rtr, [](ib_qp_mod_t& m) { m.state.rtr.opts = IB_MOD_QP_SQ_DEPTH; });
       }},
      {"modify_qp", "DLID 0", IB_INVALID_PARAMETER,
       [&f, rtr] { return try_modify(f, f.rc_init, rtr, [](ib_qp_mod_t& m) { m.state.rtr.primary_av.dlid = 0; }); }},
      {"modify_qp", "path MTU beyond the port's", IB_INVALID_PARAMETER,
       [&f, rtr] {
         return try_modify(f, f.rc_init, rtr,
                           [](ib_qp_mod_t& m) { m.state.rtr.primary_av.conn.path_mtu = IB_MTU_4096; });
       }},
      {"modify_qp", "destination QP 0", IB_INVALID_PARAMETER,
       [&f, rtr] { return try_modify(f, f.rc_init, rtr, [](ib_qp_mod_t& m) { m.state.rtr.dest_qp = 0; }); }},
      {"modify_qp", "responder resources beyond the CA's", IB_INVALID_PARAMETER,
       [&f, rtr] { return try_modify(f, f.rc_init, rtr, [](ib_qp_mod_t& m) { m.state.rtr.resp_res = 200; }); }},
      {"modify_qp", "retry count beyond 3 bits", IB_INVALID_PARAMETER,
       [&f, rts] { return try_modify(f, f.rc_rtr, rts, [](ib_qp_mod_t& m) { m.state.rts.retry_cnt = 9; }); }},
      {"modify_qp", "RNR retry count beyond 3 bits", IB_INVALID_PARAMETER,
       [&f, rts] { return try_modify(f, f.rc_rtr, rts, [](ib_qp_mod_t& m) { m.state.rts.rnr_retry_cnt = 8; }); }},
      {"modify_qp", "ACK timeout beyond 5 bits", IB_INVALID_PARAMETER,
       [&f, rts] { return try_modify(f, f.rc_rtr, rts, [](ib_qp_mod_t& m) { m.state.rts.local_ack_timeout = 32; }); }},
      {"modify_qp", "initiator depth beyond the CA's", IB_INVALID_PARAMETER,
       [&f, rts] { return try_modify(f, f.rc_rtr, rts, [](ib_qp_mod_t& m) { m.state.rts.init_depth = 200; }); }},
      {"modify_qp", "send PSN beyond 24 bits", IB_INVALID_PARAMETER,
       [&f, rts] {
         return try_modify(f, f.rc_rtr, rts, [](ib_qp_mod_t& m) { m.state.rts.sq_psn = cl_hton32(0x1000000); });
       }},
  };
}

std::vector<Row> mcast_rows(Fixture& f) {
  const ci_interface_t* ci = f.e.ci;
  static const ib_gid_t mgid = [] {
    ib_gid_t g{};
    g.raw[0] = 0xff;
    return g;
  }();
  static const ib_gid_t unicast_gid = [] {
    ib_gid_t g{};
    g.raw[0] = 0xfe;
    g.raw[1] = 0x80;
    return g;
  }();
  return {
      {"attach_mcast", "NULL p_mcast_gid", IB_INVALID_PARAMETER,
       [&f, ci] { return ci->attach_mcast(f.ud_rts, nullptr, cl_hton16(0xc001), &f.omc, nullptr); }},
      {"attach_mcast", "NULL ph_mcast", IB_INVALID_PARAMETER,
       [&f, ci] { return ci->attach_mcast(f.ud_rts, &mgid, cl_hton16(0xc001), nullptr, nullptr); }},
      {"attach_mcast", "QP not UD (RC)", IB_INVALID_SERVICE_TYPE,
       [&f, ci] { return ci->attach_mcast(f.rc_rts, &mgid, cl_hton16(0xc001), &f.omc, nullptr); }},
      {"attach_mcast", "unicast GID", IB_INVALID_GID,
       [&f, ci] { return ci->attach_mcast(f.ud_rts, &unicast_gid, cl_hton16(0xc001), &f.omc, nullptr); }},
      {"attach_mcast", "unicast LID", IB_INVALID_LID,
       [&f, ci] { return ci->attach_mcast(f.ud_rts, &mgid, cl_hton16(0x0001), &f.omc, nullptr); }},
      {"attach_mcast", "permissive LID", IB_INVALID_LID,
       [&f, ci] { return ci->attach_mcast(f.ud_rts, &mgid, cl_hton16(0xffff), &f.omc, nullptr); }},
  };
}

// ---- memory regions ------------------------------------------------------------------------

ib_api_status_t try_register_mr(Fixture& f, void* vaddr, uint64_t length, ib_access_t access) {
  const ib_mr_create_t c{vaddr, length, access};
  return f.e.ci->register_mr(f.e.pd, &c, &f.k1, &f.k2, &f.omr, nullptr);
}

ib_api_status_t try_register_pmr(Fixture& f, const std::function<void(ib_phys_create_t&)>& change) {
  ib_phys_create_t c = phys(f, 4096, IB_AC_LOCAL_WRITE);
  change(c);
  f.vaddr = reinterpret_cast<void*>(0x10000000);
  return f.e.ci->register_pmr(f.e.pd, &c, &f.vaddr, &f.k1, &f.k2, &f.omr, nullptr);
}

std::vector<Row> register_rows(Fixture& f) {
  const ci_interface_t* ci = f.e.ci;
  const ib_pd_handle_t pd = f.e.pd;
  const ib_mr_create_t ok{f.buf, 4096, IB_AC_LOCAL_WRITE};
  return {
      {"register_mr", "NULL p_mr_create", IB_INVALID_PARAMETER,
       [&f, ci, pd] { return ci->register_mr(pd, nullptr, &f.k1, &f.k2, &f.omr, nullptr); }},
      {"register_mr", "NULL p_lkey", IB_INVALID_PARAMETER,
       [&f, ci, pd, ok] { return ci->register_mr(pd, &ok, nullptr, &f.k2, &f.omr, nullptr); }},
      {"register_mr", "NULL p_rkey", IB_INVALID_PARAMETER,
       [&f, ci, pd, ok] { return ci->register_mr(pd, &ok, &f.k1, nullptr, &f.omr, nullptr); }},
      {"register_mr", "NULL ph_mr", IB_INVALID_PARAMETER,
       [&f, ci, pd, ok] { return ci->register_mr(pd, &ok, &f.k1, &f.k2, nullptr, nullptr); }},
      // Seed: IB_INVALID_PARAMETER for NULL input pointers; a NULL or empty
      // buffer is no region either.
      {"register_mr", "NULL vaddr", IB_INVALID_PARAMETER,
       [&f] { return try_register_mr(f, nullptr, 4096, IB_AC_LOCAL_WRITE); }},
      {"register_mr", "zero length", IB_INVALID_PARAMETER,
       [&f] { return try_register_mr(f, f.buf, 0, IB_AC_LOCAL_WRITE); }},
      {"register_mr", "unknown access flag", IB_INVALID_PERMISSION,
       [&f] { return try_register_mr(f, f.buf, 4096, 0x100); }},
      {"register_mr", "remote write without local write", IB_INVALID_PERMISSION,
       [&f] { return try_register_mr(f, f.buf, 4096, IB_AC_RDMA_WRITE); }},
      {"register_mr", "atomic without local write", IB_INVALID_PERMISSION,
       [&f] { return try_register_mr(f, f.buf, 4096, IB_AC_ATOMIC); }},
      {"register_pmr", "NULL p_pmr_create", IB_INVALID_PARAMETER,
       [&f, ci, pd] { return ci->register_pmr(pd, nullptr, &f.vaddr, &f.k1, &f.k2, &f.omr, nullptr); }},
      {"register_pmr", "NULL p_vaddr", IB_INVALID_PARAMETER,
       [&f, ci, pd] {
         const ib_phys_create_t c = phys(f, 4096, IB_AC_LOCAL_WRITE);
         return ci->register_pmr(pd, &c, nullptr, &f.k1, &f.k2, &f.omr, nullptr);
       }},
      {"register_pmr", "page size the CA does not support", IB_INVALID_PARAMETER,
       [&f] { return try_register_pmr(f, [](ib_phys_create_t& c) { c.page_size = 8192; }); }},
      {"register_pmr", "zero length", IB_INVALID_PARAMETER,
       [&f] { return try_register_pmr(f, [](ib_phys_create_t& c) { c.length = 0; }); }},
      {"register_pmr", "page address not page aligned", IB_INVALID_PARAMETER,
       [&f] { return try_register_pmr(f, [&f](ib_phys_create_t&) { f.page += 8; }); }},
      {"register_pmr", "more bytes than its pages hold", IB_INVALID_PARAMETER,
       [&f] { return try_register_pmr(f, [](ib_phys_create_t& c) { c.length = 8192; }); }},
      {"register_pmr", "remote write without local write", IB_INVALID_PERMISSION,
       [&f] { return try_register_pmr(f, [](ib_phys_create_t& c) { c.access_ctrl = IB_AC_RDMA_WRITE; }); }},
      {"register_smr", "unknown access flag", IB_INVALID_PERMISSION,
       [&f, ci, pd] { return ci->register_smr(f.mr, pd, 0x100, &f.vaddr, &f.k1, &f.k2, &f.omr, nullptr); }},
      {"register_smr", "atomic without local write", IB_INVALID_PERMISSION,
       [&f, ci, pd] { return ci->register_smr(f.mr, pd, IB_AC_ATOMIC, &f.vaddr, &f.k1, &f.k2, &f.omr, nullptr); }},
      // No seed code for NULL pointers here: IB_INVALID_PARAMETER as for
      // register_mr.
      {"register_smr", "NULL p_vaddr", IB_INVALID_PARAMETER,
       [&f, ci, pd] { return ci->register_smr(f.mr, pd, IB_AC_LOCAL_WRITE, nullptr, &f.k1, &f.k2, &f.omr, nullptr); }},
      {"register_smr", "NULL ph_mr", IB_INVALID_PARAMETER,
       [&f, ci, pd] {
         return ci->register_smr(f.mr, pd, IB_AC_LOCAL_WRITE, &f.vaddr, &f.k1, &f.k2, nullptr, nullptr);
       }},
      {"query_mr", "NULL p_mr_query", IB_INVALID_PARAMETER, [&f, ci] { return ci->query_mr(f.mr, nullptr); }},
  };
}

std::vector<Row> modify_mr_rows(Fixture& f) {
  const ci_interface_t* ci = f.e.ci;
  auto mod = [&f, ci](ib_mr_mod_t mask, ib_access_t access, uint64_t length) {
    const ib_mr_create_t c{f.buf, length, access};
    return ci->modify_mr(f.mr, mask, &c, &f.k1, &f.k2, nullptr, nullptr);
  };
  auto pmod = [&f, ci](ib_mr_mod_t mask, uint32_t page_size, ib_access_t access) {
    const ib_phys_create_t c = phys(f, page_size, access);
    f.vaddr = f.buf;
    return ci->modify_pmr(f.mr, mask, &c, &f.vaddr, &f.k1, &f.k2, nullptr, nullptr);
  };
  return {
      {"modify_mr", "empty modify mask", IB_INVALID_PARAMETER, [mod] { return mod(0, IB_AC_LOCAL_WRITE, 4096); }},
      {"modify_mr", "unknown modify mask bit", IB_INVALID_PARAMETER,
       [mod] { return mod(0x80, IB_AC_LOCAL_WRITE, 4096); }},
      {"modify_mr", "NULL p_mr_create with new access", IB_INVALID_PARAMETER,
       [&f, ci] { return ci->modify_mr(f.mr, IB_MR_MOD_ACCESS, nullptr, &f.k1, &f.k2, nullptr, nullptr); }},
      {"modify_mr", "NULL p_lkey", IB_INVALID_PARAMETER,
       [&f, ci] {
         const ib_mr_create_t c{f.buf, 4096, IB_AC_LOCAL_WRITE};
         return ci->modify_mr(f.mr, IB_MR_MOD_ACCESS, &c, nullptr, &f.k2, nullptr, nullptr);
       }},
      {"modify_mr", "unknown access flag", IB_INVALID_PERMISSION, [mod] { return mod(IB_MR_MOD_ACCESS, 0x100, 4096); }},
      {"modify_mr", "atomic without local write", IB_INVALID_PERMISSION,
       [mod] { return mod(IB_MR_MOD_ACCESS, IB_AC_ATOMIC, 4096); }},
      {"modify_mr", "new address with zero length", IB_INVALID_PARAMETER,
       [mod] { return mod(IB_MR_MOD_ADDR, IB_AC_LOCAL_WRITE, 0); }},
      {"modify_pmr", "empty modify mask", IB_INVALID_PARAMETER, [pmod] { return pmod(0, 4096, IB_AC_LOCAL_WRITE); }},
      {"modify_pmr", "remote write without local write", IB_INVALID_PERMISSION,
       [pmod] { return pmod(IB_MR_MOD_ACCESS, 4096, IB_AC_RDMA_WRITE); }},
      {"modify_pmr", "page size the CA does not support", IB_INVALID_PARAMETER,
       [pmod] { return pmod(IB_MR_MOD_ADDR, 8192, IB_AC_LOCAL_WRITE); }},
      {"modify_pmr", "new address with NULL p_vaddr", IB_INVALID_PARAMETER,
       [&f, ci] {
         const ib_phys_create_t c = phys(f, 4096, IB_AC_LOCAL_WRITE);
         return ci->modify_pmr(f.mr, IB_MR_MOD_ADDR, &c, nullptr, &f.k1, &f.k2, nullptr, nullptr);
       }},
      // modify_pmr's seed list has no PD-handle status (modify_mr's has):
      // a bad new PD is "One of the pointers was not valid".
      {"modify_pmr", "new PD NULL", IB_INVALID_PARAMETER,
       [&f, ci] { return ci->modify_pmr(f.mr, IB_MR_MOD_PD, nullptr, &f.vaddr, &f.k1, &f.k2, nullptr, nullptr); }},
  };
}

// ---- memory windows ---------------------------------------------------------------------------

ib_bind_wr_t bind_wr(const Fixture& f) {
  ib_bind_wr_t b{};
  b.send_opt = IB_SEND_OPT_SIGNALED;
  b.h_mr = f.mr;
  b.access_ctrl = IB_AC_RDMA_READ;
  b.current_rkey = f.mw_rkey;
  b.local_ds = ib_local_ds_t{f.buf, 1024, f.lkey};
  return b;
}

ib_api_status_t try_bind(Fixture& f, ib_qp_handle_t qp, const std::function<void(ib_bind_wr_t&)>& change) {
  ib_bind_wr_t b = bind_wr(f);
  change(b);
  return f.e.ci->bind_mw(f.mw, qp, &b, &f.k1);
}

std::vector<Row> mw_rows(Fixture& f) {
  const ci_interface_t* ci = f.e.ci;
  const ib_pd_handle_t pd = f.e.pd;
  auto same = [](ib_bind_wr_t&) {};
  return {
      {"create_mw", "NULL p_rkey", IB_INVALID_PARAMETER,
       [&f, ci, pd] { return ci->create_mw(pd, nullptr, &f.omw, nullptr); }},
      {"create_mw", "NULL ph_mw", IB_INVALID_PARAMETER,
       [&f, ci, pd] { return ci->create_mw(pd, &f.k1, nullptr, nullptr); }},
      {"query_mw", "NULL ph_pd", IB_INVALID_PARAMETER,
       [&f, ci] { return ci->query_mw(f.mw, nullptr, &f.k1, nullptr); }},
      {"query_mw", "NULL p_rkey", IB_INVALID_PARAMETER,
       [&f, ci] { return ci->query_mw(f.mw, &f.opd, nullptr, nullptr); }},
      {"bind_mw", "NULL p_mw_bind", IB_INVALID_PARAMETER,
       [&f, ci] { return ci->bind_mw(f.mw, f.rc_rts, nullptr, &f.k1); }},
      {"bind_mw", "NULL p_rkey", IB_INVALID_PARAMETER,
       [&f, ci] {
         ib_bind_wr_t b = bind_wr(f);
         return ci->bind_mw(f.mw, f.rc_rts, &b, nullptr);
       }},
      {"bind_mw", "UD QP", IB_INVALID_SERVICE_TYPE, [&f, same] { return try_bind(f, f.ud_rts, same); }},
      {"bind_mw", "R_Key not the window's", IB_INVALID_RKEY,
       [&f] { return try_bind(f, f.rc_rts, [](ib_bind_wr_t& b) { b.current_rkey ^= 0x01000000; }); }},
      {"bind_mw", "local write access for a window", IB_INVALID_PERMISSION,
       [&f] { return try_bind(f, f.rc_rts, [](ib_bind_wr_t& b) { b.access_ctrl = IB_AC_LOCAL_WRITE; }); }},
      {"bind_mw", "region without window binding", IB_INVALID_PERMISSION,
       [&f] {
         return try_bind(f, f.rc_rts, [&f](ib_bind_wr_t& b) {
           b.h_mr = f.mr_nobind;
           b.local_ds = ib_local_ds_t{f.buf + 8192, 1024, f.mr_nobind_lkey};
         });
       }},
      // The seed lists no region-handle status for bind_mw: a bad region
      // or a range outside it is "One of the pointers was not valid".
      {"bind_mw", "NULL region", IB_INVALID_PARAMETER,
       [&f] { return try_bind(f, f.rc_rts, [](ib_bind_wr_t& b) { b.h_mr = nullptr; }); }},
      {"bind_mw", "range beyond the region", IB_INVALID_PARAMETER,
       [&f] { return try_bind(f, f.rc_rts, [](ib_bind_wr_t& b) { b.local_ds.length = 16384; }); }},
      // No seed code for a QP that cannot send yet: IB_INVALID_QP_STATE, what
      // ci_post_send answers for a QP in RESET (seed, ci_post_send).
      {"bind_mw", "QP in RESET", IB_INVALID_QP_STATE, [&f, same] { return try_bind(f, f.rc_reset, same); }},
  };
}

// ---- posting ----------------------------------------------------------------------------------

ib_send_wr_t send_wr(Fixture& f) {
  static ib_local_ds_t ds[2];
  ds[0] = ib_local_ds_t{f.buf, 64, f.lkey};
  ds[1] = ib_local_ds_t{f.buf + 64, 64, f.lkey};
  ib_send_wr_t w{};
  w.wr_type = WR_SEND;
  w.num_ds = 1;
  w.ds_array = ds;
  w.dgrm.ud.h_av = f.av;
  w.dgrm.ud.remote_qp = cl_hton32(0x77);
  w.dgrm.ud.remote_qkey = cl_hton32(0x11111111);
  return w;
}

ib_api_status_t try_send(Fixture& f, ib_qp_handle_t qp, const std::function<void(ib_send_wr_t&)>& change) {
  ib_send_wr_t w = send_wr(f);
  change(w);
  return f.e.ci->post_send(qp, &w, &f.send_failed);
}

ib_api_status_t try_recv(Fixture& f, ib_qp_handle_t qp, const std::function<void(ib_recv_wr_t&)>& change) {
  static ib_local_ds_t ds[2];
  ds[0] = ib_local_ds_t{f.buf, 64, f.lkey};
  ds[1] = ib_local_ds_t{f.buf + 64, 64, f.lkey};
  ib_recv_wr_t w{nullptr, 1, 1, ds};
  change(w);
  return f.e.ci->post_recv(qp, &w, &f.recv_failed);
}

std::vector<Row> post_rows(Fixture& f) {
  const ci_interface_t* ci = f.e.ci;
  auto type = [](ib_wr_type_t t) { return [t](ib_send_wr_t& w) { w.wr_type = t; }; };
  auto same_send = [](ib_send_wr_t&) {};
  return {
      // No seed code for a NULL list: IB_INVALID_PARAMETER as for NULLs elsewhere.
      {"post_send", "NULL p_send_wr", IB_INVALID_PARAMETER,
       [&f, ci] { return ci->post_send(f.rc_rts, nullptr, &f.send_failed); }},
      {"post_send", "unknown work request type", IB_INVALID_WR_TYPE,
       // 7: no work request type, but within the enum's range.
       [&f, type] { return try_send(f, f.rc_rts, type(static_cast<ib_wr_type_t>(7))); }},
      {"post_send", "RDMA read on a UD QP", IB_INVALID_WR_TYPE,
       [&f, type] { return try_send(f, f.ud_rts, type(WR_RDMA_READ)); }},
      {"post_send", "atomic on a UD QP", IB_INVALID_WR_TYPE,
       [&f, type] { return try_send(f, f.ud_rts, type(WR_FETCH_ADD)); }},
      {"post_send", "immediate data on an RDMA read", IB_INVALID_WR_TYPE,
       [&f] {
         return try_send(f, f.rc_rts, [](ib_send_wr_t& w) {
           w.wr_type = WR_RDMA_READ;
           w.send_opt = IB_SEND_OPT_IMMEDIATE;
         });
       }},
      {"post_send", "more SGEs than the QP has", IB_INVALID_MAX_SGE,
       [&f] { return try_send(f, f.rc_rts, [](ib_send_wr_t& w) { w.num_ds = 2; }); }},
      // No seed code for these two: IB_INVALID_PARAMETER as for NULLs.
      {"post_send", "SGE count with NULL ds_array", IB_INVALID_PARAMETER,
       [&f] { return try_send(f, f.rc_rts, [](ib_send_wr_t& w) { w.ds_array = nullptr; }); }},
      {"post_send", "inline data larger than a WQE holds", IB_INVALID_PARAMETER,
       [&f] {
         return try_send(f, f.rc_rts, [](ib_send_wr_t& w) {
           w.send_opt = IB_SEND_OPT_INLINE;
           w.ds_array[0].length = 100000;
         });
       }},
      {"post_send", "QP in RESET", IB_INVALID_QP_STATE, [&f, same_send] { return try_send(f, f.rc_reset, same_send); }},
      {"post_send", "QP in INIT", IB_INVALID_QP_STATE, [&f, same_send] { return try_send(f, f.rc_init, same_send); }},
      {"post_send", "QP in RTR", IB_INVALID_QP_STATE, [&f, same_send] { return try_send(f, f.rc_rtr, same_send); }},
      {"post_send", "UD send with NULL address vector", IB_INVALID_ADDR_HANDLE,
       [&f] { return try_send(f, f.ud_rts, [](ib_send_wr_t& w) { w.dgrm.ud.h_av = nullptr; }); }},
      {"post_recv", "NULL p_recv_wr", IB_INVALID_PARAMETER,
       [&f, ci] { return ci->post_recv(f.rc_rts, nullptr, &f.recv_failed); }},
      {"post_recv", "QP in RESET", IB_INVALID_QP_STATE, [&f] { return try_recv(f, f.rc_reset, [](ib_recv_wr_t&) {}); }},
      // The seed lists no SGE status for post_recv: IB_INVALID_MAX_SGE, its
      // code for the same fault in ci_post_send.
      {"post_recv", "more SGEs than the QP has", IB_INVALID_MAX_SGE,
       [&f] { return try_recv(f, f.rc_rts, [](ib_recv_wr_t& w) { w.num_ds = 2; }); }},
      {"post_recv", "SGE count with NULL ds_array", IB_INVALID_PARAMETER,
       [&f] { return try_recv(f, f.rc_rts, [](ib_recv_wr_t& w) { w.ds_array = nullptr; }); }},
  };
}

// ---- the objects, the table, the checks after it ------------------------------------------

bool make_objects(Fixture& f) {
  if (!open_env(f.e)) return false;
  const ci_interface_t* ci = f.e.ci;
  f.buf = static_cast<uint8_t*>(nicsim_alloc(16384, 4096));
  const ib_mr_create_t mc{f.buf, 8192, IB_AC_LOCAL_WRITE | IB_AC_MW_BIND};
  const ib_mr_create_t nc{f.buf + 8192, 8192, IB_AC_LOCAL_WRITE};
  EXPECT_EQ(ci->register_mr(f.e.pd, &mc, &f.lkey, &f.k2, &f.mr, nullptr), IB_SUCCESS);
  EXPECT_EQ(ci->register_mr(f.e.pd, &nc, &f.mr_nobind_lkey, &f.k2, &f.mr_nobind, nullptr), IB_SUCCESS);
  EXPECT_EQ(ci->create_mw(f.e.pd, &f.mw_rkey, &f.mw, nullptr), IB_SUCCESS);
  const ib_av_attr_t aa = av_attr(1);
  EXPECT_EQ(ci->create_av(f.e.pd, &aa, &f.av, nullptr), IB_SUCCESS);
  f.rc_rts = make_qp(f.e, IB_QPT_RELIABLE_CONN, 4, 1);
  to_rts(f.e, f.rc_rts, IB_QPT_RELIABLE_CONN);
  f.ud_rts = make_qp(f.e, IB_QPT_UNRELIABLE_DGRM, 4, 1);
  to_rts(f.e, f.ud_rts, IB_QPT_UNRELIABLE_DGRM);
  f.rc_reset = make_qp(f.e, IB_QPT_RELIABLE_CONN, 4, 1);
  f.rc_init = make_qp(f.e, IB_QPT_RELIABLE_CONN, 4, 1);
  EXPECT_EQ(modify(f.e, f.rc_init, init_mod(IB_QPT_RELIABLE_CONN)), IB_SUCCESS);
  f.rc_rtr = make_qp(f.e, IB_QPT_RELIABLE_CONN, 4, 1);
  EXPECT_EQ(modify(f.e, f.rc_rtr, init_mod(IB_QPT_RELIABLE_CONN)), IB_SUCCESS);
  EXPECT_EQ(modify(f.e, f.rc_rtr, rtr_mod(0x99, 2)), IB_SUCCESS);
  port_info_mad(0x01, nullptr, f.mad_in);
  return !::testing::Test::HasFailure();
}

// A CQ holding four completions: four signaled UD sends of its own QP
// (a datagram completes once sent, whether anyone receives it or not).
void fill_cq(Fixture& f) {
  const ci_interface_t* ci = f.e.ci;
  uint32_t size = 8;
  EXPECT_EQ(ci->create_cq(f.e.pd, nullptr, &size, &f.full_cq, nullptr), IB_SUCCESS);
  ib_qp_create_t c = qp_create(f, IB_QPT_UNRELIABLE_DGRM);
  c.h_sq_cq = c.h_rq_cq = f.full_cq;
  EXPECT_EQ(ci->create_qp(f.e.pd, nullptr, &c, &f.qa, &f.full_qp, nullptr), IB_SUCCESS);
  to_rts(f.e, f.full_qp, IB_QPT_UNRELIABLE_DGRM);
  for (int i = 0; i < 4; ++i) {
    ib_send_wr_t w = send_wr(f);
    w.send_opt = IB_SEND_OPT_SIGNALED;
    EXPECT_EQ(ci->post_send(f.full_qp, &w, &f.send_failed), IB_SUCCESS);
  }
  nicsim_sleep_ns(100'000);
}

std::vector<Row> all_rows(Fixture& f) {
  std::vector<Row> rows;
  for (auto part : {ca_rows, av_rows, cq_rows, create_qp_rows, modify_qp_rows, modify_qp_value_rows, mcast_rows,
                    register_rows, modify_mr_rows, mw_rows, post_rows}) {
    std::vector<Row> r = part(f);
    rows.insert(rows.end(), std::make_move_iterator(r.begin()), std::make_move_iterator(r.end()));
  }
  return rows;
}

// The objects the rows used are as they were: QP states, the MR's keys,
// the window's R_Key, the full CQ's four entries, nothing more created.
void check_unchanged(Fixture& f, const ib_mr_attr_t& mr_before) {
  const ci_interface_t* ci = f.e.ci;
  const std::pair<ib_qp_handle_t, ib_qp_state_t> states[] = {{f.rc_rts, IB_QPS_RTS},
                                                             {f.ud_rts, IB_QPS_RTS},
                                                             {f.rc_reset, IB_QPS_RESET},
                                                             {f.rc_init, IB_QPS_INIT},
                                                             {f.rc_rtr, IB_QPS_RTR}};
  for (const auto& [qp, state] : states) {
    EXPECT_EQ(ci->query_qp(qp, &f.qa, nullptr), IB_SUCCESS);
    EXPECT_EQ(f.qa.state, state);
  }
  ib_mr_attr_t mr_after{};
  EXPECT_EQ(ci->query_mr(f.mr, &mr_after), IB_SUCCESS);
  EXPECT_EQ(mr_after.lkey, mr_before.lkey);
  EXPECT_EQ(mr_after.access_ctrl, mr_before.access_ctrl);
  ib_pd_handle_t pd;
  uint32_t rkey;
  EXPECT_EQ(ci->query_mw(f.mw, &pd, &rkey, nullptr), IB_SUCCESS);
  EXPECT_EQ(rkey, f.mw_rkey);
  ib_wc_t wc[8]{};
  for (int i = 0; i < 7; ++i) wc[i].p_next = &wc[i + 1];
  ib_wc_t* free_list = wc;
  ib_wc_t* done = nullptr;
  EXPECT_EQ(ci->poll_cq(f.full_cq, &free_list, &done), IB_SUCCESS);
  int n = 0;
  for (ib_wc_t* w = done; w; w = w->p_next) ++n;
  EXPECT_EQ(n, 4);
  EXPECT_EQ(ci->deallocate_pd(f.e.pd, nullptr), IB_RESOURCE_BUSY);  // its objects are still there
}

void destroy_objects(Fixture& f) {
  const ci_interface_t* ci = f.e.ci;
  for (ib_qp_handle_t qp : {f.rc_rts, f.ud_rts, f.rc_reset, f.rc_init, f.rc_rtr, f.full_qp})
    EXPECT_EQ(ci->destroy_qp(qp, nullptr), IB_SUCCESS);
  EXPECT_EQ(ci->destroy_cq(f.full_cq, nullptr), IB_SUCCESS);
  EXPECT_EQ(ci->destroy_av(f.av, nullptr), IB_SUCCESS);
  EXPECT_EQ(ci->destroy_mw(f.mw, nullptr), IB_SUCCESS);
  EXPECT_EQ(ci->deregister_mr(f.mr, nullptr), IB_SUCCESS);
  EXPECT_EQ(ci->deregister_mr(f.mr_nobind, nullptr), IB_SUCCESS);
  close_env(f.e);  // the PD is empty again: nothing was left behind
}

int bad_arguments(int, char**) {
  Fixture f;
  if (!make_objects(f)) return 1;
  fill_cq(f);
  ib_mr_attr_t mr_before{};
  EXPECT_EQ(f.e.ci->query_mr(f.mr, &mr_before), IB_SUCCESS);
  const std::vector<Row> rows = all_rows(f);
  EXPECT_EQ(rows.size(), 152u);  // a row lost in an edit shows here
  for (const Row& r : rows) {
    SCOPED_TRACE(std::string(r.verb) + ", " + r.arg_class);
    const ib_api_status_t got = r.call();
    EXPECT_EQ(got, r.expect) << r.verb << " with " << r.arg_class << ": got " << ib_get_err_str(got)
                             << ", seed 002 lists " << ib_get_err_str(r.expect);
  }
  check_unchanged(f, mr_before);
  destroy_objects(f);
  return ::testing::Test::HasFailure() ? 1 : 0;
}
const BuiltinProgram reg_bad_arguments("verbs_test_bad_arguments", bad_arguments, "test");

}  // namespace

TEST(VerbsArguments, EveryVerbAnswersBadArgumentsWithTheSeedStatus) { run_program("verbs_test_bad_arguments", false); }
