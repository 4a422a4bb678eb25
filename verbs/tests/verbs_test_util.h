// Shared helpers of the verbs driver tests: a two-node HCA world runner and
// consumer-side conveniences written against the public C interface.
#pragma once
#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "core/sim.h"
#include "iba/ib_ci.h"
#include "iba/nicsim_ca.h"
#include "nicsim/app.h"
#include "sim/tests/world_run.h"

namespace nicsim::verbs::testing {

using namespace nicsim;

inline Scenario scenario(const std::string& text) { return nicsim::testing::load_text(text, "verbs.textproto"); }

// Runs `program` on h0 (and h1) of two HCA nodes on one switch; every
// simulation error fails the test.
inline void run_program(const std::string& program, bool both_nodes) {
  nicsim::testing::run_scenario(scenario(std::string(R"(
    name: "verbs"
    topology { star { hosts: 2 } nic: "hca" }
    subnet_manager { off: true }  # driver unit tests: ports Active from INIT_IB
    workload { program: ")") + program + "\" nodes: \"h0\"" +
                                         (both_nodes ? " nodes: \"h1\"" : "") + " }"));
}

// ---- consumer-side helpers ---------------------------------------------------------

inline int g_completions = 0;
inline std::vector<ib_async_event_t> g_events;
inline void on_completion(void*) { ++g_completions; }
inline void on_event(const ib_event_rec_t* rec) { g_events.push_back(rec->type); }

struct Env {
  const ci_interface_t* ci = nullptr;
  ib_ca_handle_t ca = nullptr;
  ib_pd_handle_t pd = nullptr;
  ib_cq_handle_t cq = nullptr;
};

inline bool open_env(Env& e) {
  e.ci = nicsim_ci_interface();
  if (!e.ci) return false;
  if (e.ci->open_ca(e.ci->guid, on_completion, on_event, &e, &e.ca) != IB_SUCCESS) return false;
  if (e.ci->allocate_pd(e.ca, &e.pd, nullptr) != IB_SUCCESS) return false;
  uint32_t size = 64;
  return e.ci->create_cq(e.pd, &e, &size, &e.cq, nullptr) == IB_SUCCESS;
}

inline void close_env(Env& e) {
  EXPECT_EQ(e.ci->destroy_cq(e.cq, nullptr), IB_SUCCESS);
  EXPECT_EQ(e.ci->deallocate_pd(e.pd, nullptr), IB_SUCCESS);
  EXPECT_EQ(e.ci->close_ca(e.ca), IB_SUCCESS);
}

inline ib_qp_handle_t make_qp(Env& e, ib_qp_type_t type, uint32_t depth = 16, uint32_t sge = 2) {
  ib_qp_create_t c{};
  c.qp_type = type;
  c.sq_depth = c.rq_depth = depth;
  c.sq_sge = c.rq_sge = sge;
  c.h_sq_cq = c.h_rq_cq = e.cq;
  c.sq_signaled = TRUE;
  ib_qp_attr_t a;
  ib_qp_handle_t qp = nullptr;
  EXPECT_EQ(e.ci->create_qp(e.pd, nullptr, &c, &a, &qp, nullptr), IB_SUCCESS);
  return qp;
}

inline ib_qp_mod_t init_mod(ib_qp_type_t type) {
  ib_qp_mod_t m{};
  m.req_state = IB_QPS_INIT;
  m.state.init.primary_port = 1;
  m.state.init.pkey_index = 0;
  if (type == IB_QPT_UNRELIABLE_DGRM)
    m.state.init.qkey = cl_hton32(0x11111111);
  else
    m.state.init.access_ctrl = IB_AC_RDMA_READ | IB_AC_RDMA_WRITE | IB_AC_LOCAL_WRITE;
  return m;
}

inline ib_qp_mod_t rtr_mod(uint32_t dest_qpn, uint16_t dlid) {
  ib_qp_mod_t m{};
  m.req_state = IB_QPS_RTR;
  m.state.rtr.rq_psn = cl_hton32(100);
  m.state.rtr.dest_qp = cl_hton32(dest_qpn);
  m.state.rtr.primary_av.port_num = 1;
  m.state.rtr.primary_av.dlid = cl_hton16(dlid);
  m.state.rtr.primary_av.conn.path_mtu = IB_MTU_2048;
  m.state.rtr.resp_res = 1;
  m.state.rtr.rnr_nak_timeout = 12;
  return m;
}

inline ib_qp_mod_t rts_mod() {
  ib_qp_mod_t m{};
  m.req_state = IB_QPS_RTS;
  m.state.rts.sq_psn = cl_hton32(100);
  m.state.rts.retry_cnt = 7;
  m.state.rts.rnr_retry_cnt = 7;
  m.state.rts.local_ack_timeout = 14;
  m.state.rts.init_depth = 1;
  return m;
}

inline ib_api_status_t modify(Env& e, ib_qp_handle_t qp, const ib_qp_mod_t& m, ib_qp_attr_t* out = nullptr) {
  ib_qp_attr_t a;
  return e.ci->modify_qp(qp, &m, out ? out : &a, nullptr);
}

// Brings a QP to RTS: connected QPs to `dest_qpn` at `dlid`.
inline void to_rts(Env& e, ib_qp_handle_t qp, ib_qp_type_t type, uint32_t dest_qpn = 0x99, uint16_t dlid = 2) {
  EXPECT_EQ(modify(e, qp, init_mod(type)), IB_SUCCESS);
  ib_qp_mod_t rtr = rtr_mod(dest_qpn, dlid);
  if (type == IB_QPT_UNRELIABLE_DGRM) rtr = ib_qp_mod_t{IB_QPS_RTR, {}};
  EXPECT_EQ(modify(e, qp, rtr), IB_SUCCESS);
  ib_qp_mod_t rts = rts_mod();
  if (type == IB_QPT_UNRELIABLE_DGRM) {
    rts = ib_qp_mod_t{IB_QPS_RTS, {}};
    rts.state.rts.sq_psn = cl_hton32(1);
  }
  EXPECT_EQ(modify(e, qp, rts), IB_SUCCESS);
}

inline uint32_t qp_num(Env& e, ib_qp_handle_t qp) {
  ib_qp_attr_t a{};
  EXPECT_EQ(e.ci->query_qp(qp, &a, nullptr), IB_SUCCESS);
  return cl_ntoh32(a.num);
}

// Polls until `n` completions arrived or `timeout_ns` passed.
inline std::vector<ib_wc_t> wait_wcs(Env& e, size_t n, uint64_t timeout_ns = 2'000'000) {
  std::vector<ib_wc_t> got;
  const uint64_t end = nicsim_now_ns() + timeout_ns;
  while (got.size() < n && nicsim_now_ns() < end) {
    ib_wc_t wc{};
    ib_wc_t* free_list = &wc;
    ib_wc_t* done = nullptr;
    if (e.ci->poll_cq(e.cq, &free_list, &done) == IB_SUCCESS)
      got.push_back(*done);
    else
      nicsim_sleep_ns(1000);
  }
  return got;
}

// A LID-routed SubnGet/SubnSet of PortInfo through ci_local_mad.
inline void port_info_mad(uint8_t method, const uint8_t* data, uint8_t* mad) {
  std::memset(mad, 0, MAD_BLOCK_SIZE);
  mad[0] = 1;
  mad[1] = 0x01;
  mad[2] = 1;
  mad[3] = method;
  mad[16] = 0x00;
  mad[17] = 0x15;
  mad[23] = 1;  // attribute modifier: port 1
  if (data) std::memcpy(mad + 64, data, 64);
}

// Makes sure port 1 has the LID the world routes to it (as a subnet
// manager would), through ci_local_mad.
inline uint16_t ensure_lid(Env& e, uint16_t want) {
  uint8_t in[MAD_BLOCK_SIZE], out[MAD_BLOCK_SIZE];
  port_info_mad(0x01, nullptr, in);
  EXPECT_EQ(e.ci->local_mad(e.ca, 1, in, out), IB_SUCCESS);
  const uint16_t lid = static_cast<uint16_t>((out[64 + 16] << 8) | out[64 + 17]);
  if (lid) return lid;
  uint8_t pi[64];
  std::memcpy(pi, out + 64, 64);
  pi[16] = static_cast<uint8_t>(want >> 8);
  pi[17] = static_cast<uint8_t>(want);
  pi[32] &= 0xf0;  // PortState: no change
  port_info_mad(0x02, pi, in);
  EXPECT_EQ(e.ci->local_mad(e.ca, 1, in, out), IB_SUCCESS);
  return want;
}

}  // namespace nicsim::verbs::testing
