// A sweep of the subnet manager captured on the SM's link and dissected by
// Wireshark's InfiniBand dissector (tshark must be installed, as for
// hca_model/tests/tshark_test.cc): every frame is a valid directed-route
// SMP, and the attributes a sweep needs are all there.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <string>

#include "core/sim.h"
#include "world/programs.h"
#include "world/world.h"

namespace nicsim {
namespace {

std::string run(const std::string& command, int& status) {
  std::string out;
  std::FILE* p = ::popen(command.c_str(), "r");
  if (!p) return out;
  std::array<char, 4096> buf;
  std::size_t n;
  while ((n = std::fread(buf.data(), 1, buf.size(), p)) > 0) out.append(buf.data(), n);
  const int raw = ::pclose(p);
  status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
  return out;
}

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST(SubnetManagerPcap, TsharkDissectsTheSweepAsValidSmps) {
  int status = -1;
  const std::string version = run("tshark --version 2>&1", status);
  ASSERT_TRUE(status == 0 && version.find("TShark") != std::string::npos)
      << "tshark is required: DEBIAN_FRONTEND=noninteractive apt-get install -y tshark";
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
  const std::size_t frames = count(brief, "\n");
  // The SM's link carries the sweep only: requests and their responses.
  EXPECT_GT(frames, 30u);
  EXPECT_EQ(count(brief, "UD Send Only QP=0x000000"), frames);
  EXPECT_EQ(count(brief, "SubnGet(NodeInfo)"), count(brief, "SubnGetResp(NodeInfo)"));
  EXPECT_GE(count(brief, "SubnGetResp(NodeInfo)"), 2u);
  EXPECT_GE(count(brief, "SubnGetResp(NodeDescription)"), 2u);
  EXPECT_GE(count(brief, "SubnGetResp(PortInfo)"), 4u);
  EXPECT_EQ(count(brief, "SubnSet(LinearForwardingTable)"), 1u);
  EXPECT_EQ(count(brief, "SubnGetResp(LinearForwardingTable)"), 1u);
  EXPECT_EQ(count(brief, "SubnSet(SwitchInfo)"), 1u);
  EXPECT_GE(count(brief, "SubnSet(PortInfo)"), 8u);  // LIDs, Armed and Active
  const std::string full = run("tshark -r " + path + " -V 2>/dev/null", status);
  ASSERT_EQ(status, 0);
  EXPECT_EQ(count(full, "SMP (Directed Route)"), frames);
  EXPECT_EQ(count(full, "Virtual Lane: 0xf"), frames);  // VL15 only
  EXPECT_EQ(count(full, "DrSLID: 0xffff"), frames);
  EXPECT_EQ(count(full, "Malformed"), 0u);
  // Only the all-zero data of PortInfo Get requests holds reserved codes
  // (7 fields each); every PortInfo the SMAs send is valid.
  EXPECT_EQ(count(full, "Possible Error"), 7 * count(brief, "SubnGet(PortInfo)"));
  EXPECT_EQ(count(full, "Reserved MTUCap Value"), count(brief, "SubnGet(PortInfo)"));
  EXPECT_GE(count(full, "NodeType: 0x02"), 1u);  // the switch
  EXPECT_GE(count(full, "NodeType: 0x01"), 1u);  // the other HCA
  EXPECT_GE(count(full, "Hop Count: 0x02"), 1u);  // h1 is two hops from the SM
  std::remove(path.c_str());
}

}  // namespace
}  // namespace nicsim
