// Helpers for two-sided Elan3 tests: two nodes with Elan3 NICs joined back
// to back by one link (no switch), each running a test program on a
// simulated thread that uses the kernel-level driver (elan_model/driver)
// exactly as Elan Kernel Comms does. Bootstrap records (addresses, node
// ids) go over the management network; data only over the Elan link.
#pragma once
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <string>

#include "core/sim.h"
#include "elan_model/driver/elan3_dev.h"
#include "elan_model/elan3.h"
#include "nicsim/app.h"
#include "scenario/loader.h"
#include "sim/tests/world_run.h"

namespace nicsim::elan3::testing {

inline void fill(std::uint8_t* p, std::size_t n, std::uint32_t seed) {
  for (std::size_t i = 0; i < n; ++i) p[i] = static_cast<std::uint8_t>((i * 131 + seed * 7 + (i >> 8) + 1) & 0xff);
}

// Bootstrap record exchanged over the management network.
struct Peer {
  std::uint32_t node = 0;  // Elan node id
  E3Addr buf = 0;          // a data buffer
  E3Addr event = 0;        // an event the peer may set remotely
  E3Addr queue = 0;        // an input queue
  E3Addr extra = 0;
};

inline Peer exchange(const Peer& mine) {
  const std::uint32_t other = nicsim_workload_node(1 - nicsim_workload_rank());
  nicsim_mgmt_send(other, 0x200, &mine, sizeof mine);
  Peer p{};
  nicsim_mgmt_recv(other, 0x200, &p, sizeof p, nullptr, 0);
  return p;
}

// Two Elan3 nodes, back to back over one link with the elan3-qsnet profile
// (PCI 64-bit/66 MHz bus, 400 MB/s link). `extra` is appended (faults,
// outputs); `link_params` go into the link block.
inline Scenario two_elans(const std::string& program, const std::string& extra = "",
                          const std::string& link_params = "", const std::string& args = "") {
  std::string node_params = R"(param { key: "bus.profile" value: "pci-66" })";
  std::string text = "node { name: \"a\" nic: \"elan3\" " + node_params + " }\n" +
                     "node { name: \"b\" nic: \"elan3\" " + node_params + " }\n" +
                     "link { name: \"ab\" a: \"a\" b: \"b\" bandwidth: \"400MB/s\" delay: \"20ns\" " + link_params +
                     " }\n" + "workload { program: \"" + program + "\" nodes: \"*\" " + args + " }\n" + extra;
  if (std::getenv("NICSIM_TEST_TRACE")) text += R"(outputs { trace { device: "*" component: "*" } })";
  return load_scenario_text(text, "test.textproto",
                            [](std::string_view n) { return ProgramRegistry::instance().find(n) != nullptr; });
}

inline void run_ok(const Scenario& sc) { nicsim::testing::run_scenario(sc); }

// The calling program's node's Elan model, for tests that look inside it
// (the driver has no way to reach it).
inline Elan3& this_elan() { return *current_program()->node().nic_as<Elan3>(); }

// Node memory of `bytes`, mapped into the Elan with `perm`; *e = its E3_Addr.
inline std::uint8_t* mapped(Elan3Dev& d, std::size_t bytes, std::uint32_t perm, E3Addr* e, ElanRange* r = nullptr) {
  auto* p = static_cast<std::uint8_t*>(nicsim_alloc(bytes, 64));
  std::memset(p, 0, bytes);
  ElanRange range;
  EXPECT_EQ(d.map(p, bytes, perm, 0, 0, true, &range, e), DevStatus::Ok);
  if (r) *r = range;
  return p;
}

}  // namespace nicsim::elan3::testing
