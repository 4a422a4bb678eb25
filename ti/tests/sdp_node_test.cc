// SDP sockets keep their state per node: two nodes with two sockets each
// (two connections between them), every byte checked both ways, each node
// counting only its own sockets.
#include <gtest/gtest.h>

#include <cstring>

#include "tests/world_run.h"
#include "ti/sdp/sdp.h"
#include "ti/tests/ti_probe.h"
#include "world/programs.h"

namespace nicsim::ti {
namespace {

using namespace nicsim::ti::testing;

constexpr std::size_t kBytes = 20000;  // copied (under the zero-copy threshold)

struct NodeSeen {
  std::uint32_t open = 0, after_close = 99;
  std::size_t received = 0, wrong = 0;
  bool ok = false;
};
NodeSeen g_node[2];

// Sends kBytes of pattern `seed` on s, then reads the peer's kBytes of
// pattern `peer_seed`, checking each byte.
void exchange(sdp_sock* s, int seed, int peer_seed, NodeSeen& seen) {
  static_assert(kBytes <= 65536);
  auto* buf = static_cast<unsigned char*>(nicsim_alloc(kBytes, 64));
  for (std::size_t i = 0; i < kBytes; ++i) buf[i] = pattern(seed, i);
  ASSERT_EQ(sdp_send(s, buf, kBytes), 0);
  std::size_t got = 0;
  while (got < kBytes) {
    const long n = sdp_recv(s, buf, kBytes - got);
    ASSERT_GT(n, 0);
    for (long i = 0; i < n; ++i) seen.wrong += buf[i] != pattern(peer_seed, got + static_cast<std::size_t>(i));
    got += static_cast<std::size_t>(n);
  }
  seen.received += got;
  nicsim_free(buf);
}

int two_sockets_each(int, char**) {
  const std::uint32_t rank = nicsim_workload_rank();
  NodeSeen& seen = g_node[rank];
  sdp_sock* s[2] = {};
  for (int k = 0; k < 2; ++k) {
    if (rank == 0) {
      s[k] = sdp_accept(static_cast<std::uint16_t>(5400 + k));
    } else {
      nicsim_barrier();
      s[k] = sdp_connect(0x0a000000u + nicsim_workload_node(0) + 1, static_cast<std::uint16_t>(5400 + k));
    }
    if (!s[k]) return 1;
  }
  seen.open = sdp_socket_count();
  for (int k = 0; k < 2; ++k)
    exchange(s[k], static_cast<int>(rank * 2 + k), static_cast<int>((1 - rank) * 2 + k), seen);
  nicsim_barrier();  // both sides read everything before either closes
  seen.ok = sdp_close(s[0]) == 0 && sdp_close(s[1]) == 0;
  seen.after_close = sdp_socket_count();
  return 0;
}
const BuiltinProgram reg_two("sdp_two_sockets_each", two_sockets_each,
                             "test: two SDP connections between two nodes, each node counting its sockets");

TEST(Sdp, EachNodeKeepsItsOwnSocketsWithTwoConnectionsEveryByteChecked) {
  nicsim::testing::run_text(scenario(3, "sdp_two_sockets_each", "nodes: \"h1\" nodes: \"h2\""));
  for (int rank = 0; rank < 2; ++rank) {
    const NodeSeen& seen = g_node[rank];
    EXPECT_EQ(seen.open, 2u) << "rank " << rank << ": its own two sockets, not the other node's";
    EXPECT_EQ(seen.received, 2 * kBytes) << rank;
    EXPECT_EQ(seen.wrong, 0u) << rank;
    EXPECT_TRUE(seen.ok) << rank;
    EXPECT_EQ(seen.after_close, 0u) << rank;
  }
}

}  // namespace
}  // namespace nicsim::ti
