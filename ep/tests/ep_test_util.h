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

#include "core/sim.h"
#include "nicsim/app.h"
#include "world/programs.h"
#include "world/world.h"

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

struct RunResult {
  bool ok = false;
  std::vector<std::string> errors;
  std::vector<int> exit_codes;
  Tick end = 0;
};

// NICSIM_TEST_TRACE=<file> writes the run's trace (every device and
// component) there.
inline RunResult run_text(const std::string& text_in, bool expect_clean = true) {
  const char* trace = std::getenv("NICSIM_TEST_TRACE");
  const std::string text = trace ? text_in + R"(outputs { trace { device: "*" component: "*" } })" : text_in;
  Scenario sc = load_scenario_text(text, "ep_test.textproto", [](std::string_view n) {
    return ProgramRegistry::instance().find(n) != nullptr;
  });
  Sim sim(sc.seed);
  World world(sc);
  if (trace) world.open_outputs(trace, "");
  RunResult r;
  r.ok = world.run().ok;
  r.end = Calendar::now();
  for (const auto& e : sim.errors().all()) {
    r.errors.push_back(e.where + ": " + e.message);
    if (expect_clean) ADD_FAILURE() << e.where << ": " << e.message;
  }
  for (const auto& p : world.programs()) {
    r.exit_codes.push_back(p->exit_code());
    EXPECT_EQ(p->exit_code(), 0) << "rank " << p->rank();
  }
  return r;
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
