// The TI over Elan Kernel Comms: the same SDP sockets and programs as over
// IB, every byte checked where it lands; the provider's operations between
// two Elan nodes (messages of several buffers, RDMA write and read, a bad
// key); bad handles and unestablished connections get the seed's codes.
// After each, no TI object is left on either node.
#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "sim/tests/scenario_figures.h"
#include "sim/tests/world_run.h"
#include "ti/elan/ti_elan.h"
#include "ti/sdp/sdp.h"
#include "ti/tests/ti_peer.h"
#include "world/programs.h"

namespace nicsim::ti {
namespace {

using namespace nicsim::ti::testing;

std::string elan_scenario(const std::string& program, const std::string& args = "") {
  return "seed: 1\ntopology { elite_fat_tree { nodes: 2 } node_param { key: \"bus.profile\" value: \"pci-66\" } }\n"
         "link_defaults { delay: \"10ns\" }\n"
         "workload { program: \"" +
         program + "\" nodes: \"h0\" nodes: \"h1\"" + args + " }\n";
}

void elan_leak_check(World& w) {
  for (std::uint32_t i = 0; i < w.num_nodes(); ++i)
    if (ti_elan::ElanTiNode* n = ti_elan::node_if_started(w.node(i).host())) {
      EXPECT_EQ(n->counters().objects, 0u) << w.node(i).name();
      EXPECT_EQ(n->counters().conns, 0u) << w.node(i).name();
      EXPECT_EQ(n->counters().services, 0u) << w.node(i).name();
    }
}

// ---- SDP sockets over either transport, from the same code ---------------------

constexpr std::size_t kSmall = 3000, kLarge = 100000;  // copied; zero-copy (64 KiB threshold)

struct SdpSeen {
  std::string transport;
  std::size_t received = 0, wrong = 0;
  std::uint32_t zcopy = 0;
  bool ok = false;
};
SdpSeen g_sdp[2];

void sdp_exchange(sdp_sock* s, int rank, SdpSeen& seen) {
  auto* buf = static_cast<unsigned char*>(nicsim_alloc(kLarge, 64));
  for (const std::size_t len : {kSmall, kLarge}) {
    if (rank == 1) {
      for (std::size_t i = 0; i < len; ++i) buf[i] = pattern(static_cast<int>(len), i);
      ASSERT_EQ(sdp_send(s, buf, len), 0);
      continue;
    }
    std::size_t got = 0;
    while (got < len) {
      const long n = sdp_recv(s, buf + got, len - got);
      ASSERT_GT(n, 0);
      for (long i = 0; i < n; ++i)
        seen.wrong += buf[got + i] != pattern(static_cast<int>(len), got + static_cast<std::size_t>(i));
      got += static_cast<std::size_t>(n);
    }
    seen.received += got;
  }
  nicsim_free(buf);
}

int sdp_either(int, char**) {
  const std::uint32_t rank = nicsim_workload_rank();
  SdpSeen& seen = g_sdp[rank];
  sdp_sock* s = nullptr;
  if (rank == 0) {
    s = sdp_accept(5600);
  } else {
    nicsim_barrier();
    s = sdp_connect(0x0a000000u + nicsim_workload_node(0) + 1, 5600);
  }
  if (!s) return 1;
  seen.transport = sdp_transport()->transport_name;
  sdp_exchange(s, static_cast<int>(rank), seen);
  seen.zcopy = sdp_messages_sent(s, 0xfd) + sdp_messages_sent(s, 0xfe) + sdp_messages_received(s, 0xfd) +
               sdp_messages_received(s, 0xfe);
  nicsim_barrier();
  seen.ok = sdp_close(s) == 0;
  return 0;
}
const BuiltinProgram reg_either("sdp_either_transport", sdp_either,
                                "test: one SDP connection, copied and zero-copy bytes, on the node's transport");

void expect_sdp(const char* transport) {
  EXPECT_NE(g_sdp[0].transport.find(transport), std::string::npos) << g_sdp[0].transport;
  EXPECT_EQ(g_sdp[1].transport, g_sdp[0].transport);
  EXPECT_EQ(g_sdp[0].received, kSmall + kLarge);
  EXPECT_EQ(g_sdp[0].wrong, 0u);
  EXPECT_GT(g_sdp[0].zcopy, 0u) << "the large send moved by RDMA";
  EXPECT_TRUE(g_sdp[0].ok);
  EXPECT_TRUE(g_sdp[1].ok);
}

// The same program on Elan nodes and on IB nodes: the node's NIC decides
// the transport SDP loads.
TEST(TiElan, SdpOverElanEveryByteChecked) {
  nicsim::testing::RunOptions o;
  o.inspect = elan_leak_check;
  nicsim::testing::run_text(elan_scenario("sdp_either_transport"), o);
  expect_sdp("Elan3");
}

TEST(TiElan, SameSdpProgramOverIbEveryByteChecked) {
  nicsim::testing::run_text(scenario(3, "sdp_either_transport", "nodes: \"h1\" nodes: \"h2\""));
  expect_sdp("InfiniBand");
}

TEST(TiElan, PingpongScenarioOverElanEveryByteChecked) {
  const auto r = nicsim::testing::scenario_results("sdp_pingpong_elan.textproto");
  EXPECT_EQ(r.at("bytes_ok"), 2.0 * 20 * (1 + 64 + 1024 + 4096 + 16384 + 65536));
  // The figures docs/ti.md and the README quote (half round trips, ns).
  const std::vector<std::pair<const char*, double>> want = {
      {"sdp_pingpong_1_ns", 16518.6}, {"sdp_pingpong_1024_ns", 24052.5}, {"sdp_pingpong_65536_ns", 242117}};
  for (const auto& [name, value] : want) EXPECT_NEAR(r.at(name), value, 0.5) << name;
}

TEST(TiElan, StreamScenarioOverElanEveryByteChecked) {
  const auto r = nicsim::testing::scenario_results("sdp_stream_elan.textproto");
  EXPECT_EQ(r.at("bytes_ok"), 5.0 * 2 * 4194304);
  EXPECT_GT(r.at("zcopy_msgs"), 0);
  EXPECT_NEAR(r.at("sdp_stream_1048576_MBps"), 316.421, 0.01);
}

}  // namespace
}  // namespace nicsim::ti
