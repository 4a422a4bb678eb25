// Shared helpers of the TI tests: a scenario with the SA on h0, waiting in
// simulated time, patterns, and a consumer's view of one TI side.
#pragma once
#include <sdp_ti.h>

#include <cstdint>
#include <cstring>
#include <string>

#include "nicsim/app.h"

namespace nicsim::ti::testing {

inline std::string scenario(int hosts, const std::string& program, const std::string& nodes,
                            const std::string& args = "", const std::string& extra = "") {
  return "seed: 1\ntopology { star { hosts: " + std::to_string(hosts) +
         " } nic: \"hca\" }\n"
         "link_defaults { bandwidth: \"8Gbps\" delay: \"5ns\" }\n"
         "workload { program: \"ib_sa\" nodes: \"h0\" }\n"
         "workload { program: \"" +
         program + "\" " + nodes + args + " }\n" + extra;
}

inline bool wait_until(const volatile int& v, int want, std::uint64_t budget_us = 200000) {
  for (std::uint64_t t = 0; v < want && t < budget_us; ++t) nicsim_sleep_ns(1000);
  return v >= want;
}

inline unsigned char pattern(int seed, std::size_t i) { return static_cast<unsigned char>(seed * 37 + i * 11 + 3); }

inline ti_inet_addr_t ip_of_node(std::uint32_t node) {
  ti_inet_addr_t a{};
  SET_IPV4_ADDR(a, 0x0a000000u + node + 1);
  return a;
}

inline ti_conn_attr_t default_attr() {
  ti_conn_attr_t a{};
  a.connect_request_timeout = 0xffffffffu;
  a.max_transfer_depth = 16;
  a.max_transfer_buffers = 4;
  a.max_transfer_size = 65536;
  a.max_recv_depth = 16;
  a.max_recv_buffers = 4;
  a.max_recv_size = 65536;
  a.max_rdma_depth = 4;
  a.max_rdma_size = 1 << 20;
  a.reliable = TRUE;
  a.msg_flow_control = TRUE;
  a.auto_cq_rearm = TRUE;
  return a;
}

// Counts list elements and chains them onto `queue` (interrupt context).
struct ElementQueue {
  ti_data_element_t* items[256] = {};
  volatile int count = 0;
  void add_list(ti_data_element_t* list) {
    for (ti_data_element_t* e = list; e;) {
      ti_data_element_t* next = e->p_next_msg;
      e->p_next_msg = nullptr;
      if (count < 256) items[count] = e;
      count = count + 1;
      e = next;
    }
  }
};

}  // namespace nicsim::ti::testing
