// A sweep of the subnet manager captured on the SM's link and dissected by
// Wireshark's InfiniBand dissector (tshark must be installed, as for
// hca_model/tests/tshark_test.cc): every frame is a valid directed-route
// SMP, and the attributes a sweep needs are all there.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <string>

#include "core/sim.h"
#include "world/programs.h"
#include "sim/tests/test_shell.h"
#include "world/world.h"

namespace nicsim {
namespace {

std::string run(const std::string& command, int& status) {
  testing::CommandResult r = testing::run_command(command);
  status = r.status;
  return r.output;
}

using testing::count_of;

TEST(SubnetManagerPcap, TsharkDissectsTheSweepAsValidSmps) {
  ASSERT_NO_FATAL_FAILURE(testing::require_tshark());
  int status = -1;
  const std::string path = ::testing::TempDir() + "nicsim_sm_sweep_" + std::to_string(::getpid()) + ".pcap";
  {
    Scenario sc = load_scenario_text(R"(
      topology { star { hosts: 2 } nic: "hca" }
      outputs { pcap: "h0--sw0" })",
                                     "sm_pcap.textproto", [](std::string_view) { return true; });
    Sim sim(sc.seed);
    World world(sc);
    world.open_outputs("", "", path);
    EXPECT_TRUE(world.run().ok);
    world.close_outputs();
  }
  const std::string brief = run("tshark -r " + path + " 2>/dev/null", status);
  ASSERT_EQ(status, 0);
  const std::size_t frames = count_of(brief, "\n");
  // The SM's link carries the sweep only: requests and their responses.
  EXPECT_GT(frames, 30u);
  EXPECT_EQ(count_of(brief, "UD Send Only QP=0x000000"), frames);
  EXPECT_EQ(count_of(brief, "SubnGet(NodeInfo)"), count_of(brief, "SubnGetResp(NodeInfo)"));
  EXPECT_GE(count_of(brief, "SubnGetResp(NodeInfo)"), 2u);
  EXPECT_GE(count_of(brief, "SubnGetResp(NodeDescription)"), 2u);
  EXPECT_GE(count_of(brief, "SubnGetResp(PortInfo)"), 4u);
  EXPECT_EQ(count_of(brief, "SubnSet(LinearForwardingTable)"), 1u);
  EXPECT_EQ(count_of(brief, "SubnGetResp(LinearForwardingTable)"), 1u);
  EXPECT_EQ(count_of(brief, "SubnSet(SwitchInfo)"), 1u);
  EXPECT_GE(count_of(brief, "SubnSet(PortInfo)"), 8u);  // LIDs, Armed and Active
  const std::string full = run("tshark -r " + path + " -V 2>/dev/null", status);
  ASSERT_EQ(status, 0);
  EXPECT_EQ(count_of(full, "SMP (Directed Route)"), frames);
  EXPECT_EQ(count_of(full, "Virtual Lane: 0xf"), frames);  // VL15 only
  EXPECT_EQ(count_of(full, "DrSLID: 0xffff"), frames);
  EXPECT_EQ(count_of(full, "Malformed"), 0u);
  // Only the all-zero data of PortInfo Get requests holds reserved codes
  // (7 fields each); every PortInfo the SMAs send is valid.
  EXPECT_EQ(count_of(full, "Possible Error"), 7 * count_of(brief, "SubnGet(PortInfo)"));
  EXPECT_EQ(count_of(full, "Reserved MTUCap Value"), count_of(brief, "SubnGet(PortInfo)"));
  EXPECT_GE(count_of(full, "NodeType: 0x02"), 1u);   // the switch
  EXPECT_GE(count_of(full, "NodeType: 0x01"), 1u);   // the other HCA
  EXPECT_GE(count_of(full, "Hop Count: 0x02"), 1u);  // h1 is two hops from the SM
  std::remove(path.c_str());
}

}  // namespace
}  // namespace nicsim
