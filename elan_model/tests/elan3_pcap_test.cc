// Elan3 packet captures: a Kernel Comms ping-pong over an Elite switch is
// written to a pcap file (raw Elan3 packets under LINKTYPE_USER1) and read
// back by tshark with the project's Lua dissector
// (tools/wireshark/nicsim_elan3.lua). tshark must be installed, as for the
// InfiniBand capture tests (hca_model/tests/tshark_test.cc).
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

#include "core/sim.h"
#include "scenario/loader.h"
#include "elite/elite_packets.h"
#include "trace/pcap.h"
#include "world/programs.h"
#include "sim/tests/test_shell.h"
#include "world/world.h"

#ifndef NICSIM_SOURCE_DIR
#error "NICSIM_SOURCE_DIR must name the source tree (the Lua dissector lives there)"
#endif

namespace nicsim {
namespace {

std::vector<std::vector<std::string>> rows(const std::string& text) {
  std::vector<std::vector<std::string>> out;
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    std::vector<std::string> cols;
    std::istringstream fields(line);
    std::string f;
    while (std::getline(fields, f, '\t')) cols.push_back(f);
    out.push_back(cols);
  }
  return out;
}

bool known_program(std::string_view name) { return ProgramRegistry::instance().find(name) != nullptr; }

const std::string kDissector = std::string(NICSIM_SOURCE_DIR) + "/tools/wireshark/nicsim_elan3.lua";

class Elan3Pcap : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_NO_FATAL_FAILURE(testing::require_tshark());
    path_ = ::testing::TempDir() + "nicsim_elan3_" + std::to_string(::getpid()) + ".pcap";
    Scenario sc = load_scenario_text(R"(
      topology { elite_fat_tree { nodes: 2 } node_param { key: "bus.profile" value: "pci-66" } }
      workload { program: "ep_small_lat" nodes: "h0" nodes: "h1" args: "--sizes=8,256" args: "--iters=4" }
      outputs { pcap: "h0--*" })",
                                     "elan3_pcap.textproto", known_program);
    ASSERT_EQ(sc.outputs.pcap_format, "elan3");
    Sim sim(sc.seed);
    World world(sc);
    world.open_outputs("", "", path_);
    ASSERT_TRUE(world.run().ok);
    world.close_outputs();
  }
  void TearDown() override { std::remove(path_.c_str()); }

  std::string tshark(const std::string& file, const std::string& args, int& status) const {
    testing::CommandResult r =
        testing::run_command("tshark -X lua_script:" + kDissector + " -r " + file + " " + args + " 2>/dev/null");
    status = r.status;
    return r.output;
  }

  std::string path_;
};

TEST_F(Elan3Pcap, FileIsUser1AndEveryFrameIsAnElanPacketOrTokenWithAGoodCrc) {
  std::ifstream in(path_, std::ios::binary);
  std::vector<unsigned char> head(24);
  in.read(reinterpret_cast<char*>(head.data()), 24);
  ASSERT_TRUE(in);
  EXPECT_EQ(head[20] | head[21] << 8, static_cast<int>(kLinktypeElan3));

  int status = -1;
  const std::string fields =
      tshark(path_,
             "-T fields -e frame.len -e elan3.kind -e elan3.trans -e elan3.ack.token -e elan3.crc.good "
             "-e elan3.length -e frame.number",
             status);
  ASSERT_EQ(status, 0) << fields;
  const auto table = rows(fields);
  ASSERT_GT(table.size(), 40u);  // 2 x (10 warm-up + 4) round trips of 2 sizes, tokens, heartbeats
  std::size_t packets = 0, tokens = 0, queued = 0;
  for (const auto& r : table) {
    ASSERT_EQ(r.size(), 7u) << "a frame the dissector did not take apart";
    EXPECT_EQ(r[4], "1") << "CRC-32C of a " << r[1] << " of " << r[0] << " bytes";
    if (r[1] == "ack token") {
      ++tokens;
      EXPECT_EQ(r[0], "16");
      EXPECT_EQ(r[3], "0") << "every token on a clean run is Ok";
    } else {
      ASSERT_EQ(r[1], "data packet");
      ++packets;
      EXPECT_EQ(std::stoul(r[0]), 28 + std::stoul(r[5])) << "header 24 + payload + CRC 4";
      if (r[2] == "2") ++queued;
    }
  }
  // Both directions of the host's link: every data packet has its token.
  EXPECT_EQ(packets, tokens);
  EXPECT_GE(queued, 2u * 2 * (10 + 4));  // small messages are queued DMAs into the peer's input queue
  const std::string verbose = tshark(path_, "-V", status);
  ASSERT_EQ(status, 0);
  EXPECT_EQ(testing::count_of(verbose, "Malformed"), 0u);
  EXPECT_EQ(testing::count_of(verbose, "Bad CRC"), 0u);
  EXPECT_EQ(testing::count_of(verbose, "Length field disagrees"), 0u);
}

TEST_F(Elan3Pcap, TheApplicationBytesAreOnTheWire) {
  // ep_small_lat's first 8-byte message (sequence 0) holds byte i =
  // 0 * 131 + 7 i (ep/lib/programs/ep_perf.h); it travels in a queued write.
  std::string hex;
  for (unsigned i = 0; i < 8; ++i) {
    char b[3];
    std::snprintf(b, sizeof b, "%02x", (7u * i) & 0xffu);
    hex += b;
  }
  int status = -1;
  const std::string payloads = tshark(path_, "-Y elan3.trans==2 -T fields -e elan3.payload", status);
  ASSERT_EQ(status, 0);
  EXPECT_GE(testing::count_of(payloads, hex), 2u) << "the message and its echo";
}

TEST_F(Elan3Pcap, TheDissectorFlagsACorruptedFrame) {
  std::ifstream in(path_, std::ios::binary);
  std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ASSERT_GT(bytes.size(), 24u + 16u + 40u);
  // The first record's first payload-or-token byte after the record header.
  bytes[24 + 16 + 5] ^= 0x10;
  const std::string bad = path_ + ".bad";
  std::ofstream(bad, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  int status = -1;
  const std::string first = tshark(bad, "-c 1 -V", status);
  std::remove(bad.c_str());
  ASSERT_EQ(status, 0);
  EXPECT_EQ(testing::count_of(first, "[Expert Info (Error/Checksum): Bad CRC-32C]"), 1u) << first;
  EXPECT_EQ(testing::count_of(first, "[CRC good: False]"), 1u) << first;
}

TEST(Elan3PcapScenario, OneFileCannotMixTheEliteAndTheInfinibandNetworks) {
  try {
    load_scenario_text(R"(topology { elite_fat_tree { nodes: 2 } }
node { name: "x" nic: "hca" }
node { name: "y" nic: "hca" }
link { a: "x" b: "y" }
outputs { pcap: "h0--*"
  pcap: "x*" })",
                       "mix.textproto", known_program);
    ADD_FAILURE() << "loaded";
  } catch (const ScenarioError& e) {
    EXPECT_EQ(e.loc().line, 6) << e.what();
    EXPECT_EQ(e.loc().column, 3) << e.what();
    EXPECT_NE(e.message().find("cannot share one capture file"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace nicsim
