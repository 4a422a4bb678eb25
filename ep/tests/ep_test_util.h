// Shared helpers of the Elan Kernel Comms tests: worlds of Elan3 nodes (two
// back to back, or an Elite fat tree) running test programs written against
// the public C headers, with every simulation error failing the test.
#pragma once
#include <elan3/elancomm.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "nicsim/app.h"
#include "sim/tests/world_run.h"

namespace nicsim::ep::testing {

// Two Elan3 nodes joined by one link (no switch): Elan node ids 0 and 1.
inline std::string pair_scenario(const std::string& program, const std::string& extra = "") {
  return R"(
    name: "ep_pair"
    stop_time: "200ms"
    node { name: "a" nic: "elan3" param { key: "bus.profile" value: "pci-66" } }
    node { name: "b" nic: "elan3" param { key: "bus.profile" value: "pci-66" } }
    link { name: "ab" a: "a" b: "b" bandwidth: "3.2Gbps" delay: "10ns" }
    workload { program: ")" +
         program + R"(" nodes: "a" nodes: "b" }
  )" + extra;
}

using nicsim::testing::RunResult;

inline RunResult run_text(const std::string& text, bool expect_clean = true) {
  nicsim::testing::RunOptions o;
  o.file = "ep_test.textproto";
  o.expect_clean = expect_clean;
  return nicsim::testing::run_text(text, o);
}

// The other rank's Elan node id, exchanged over the management network.
inline int peer_id() {
  const std::uint32_t me = nicsim_workload_rank();
  const std::uint32_t other = nicsim_workload_node(1 - me);
  const std::int32_t mine = ep_nodeid();
  std::int32_t theirs = -1;
  nicsim_mgmt_send(other, 0x45505400u, &mine, sizeof mine);
  nicsim_mgmt_recv(other, 0x45505400u, &theirs, sizeof theirs, nullptr, 0);
  return theirs;
}

inline unsigned char pattern(std::uint32_t seq, std::uint32_t i) {
  return static_cast<unsigned char>(seq * 131u + i * 7u + (i >> 8));
}

inline E3_Addr map(ELAN3_DMA_STATE* sp, void* buf, std::size_t len, u_int perm, ELAN3_DMA_HANDLE** h) {
  if (elan3_dma_addr_setup(sp, nullptr, static_cast<caddr_t>(buf), static_cast<u_int>(len), perm,
                           PTE_LOAD_LITTLE_ENDIAN, 0, DDI_DMA_SLEEP, nullptr, h) != DDI_DMA_MAPPED)
    return 0;
  return elan3_dma_handle_to_addr(*h);
}

// Waits in simulated time until `cond` holds or `limit_us` passes.
template <typename F>
inline bool wait_until(F cond, std::uint64_t limit_us = 100000) {
  for (std::uint64_t i = 0; i < limit_us && !cond(); ++i) nicsim_sleep_ns(1000);
  return cond();
}

}  // namespace nicsim::ep::testing
