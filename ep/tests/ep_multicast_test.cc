// Multicast of large messages over an Elite fat tree: a range with a
// bitmap reaches exactly the selected live nodes, once each, byte for byte,
// through the arity-3 forwarding tree; EP_NOT_MYSELF leaves the sender out;
// -1/-1 with no bitmap is every node, the sender included.
#include "ep/tests/ep_test_util.h"

using namespace nicsim;
using namespace nicsim::ep::testing;

namespace {

constexpr int kSvc = 70;
constexpr int kMaxNodes = 64;
constexpr std::uint32_t kLen = 20000;

struct NodeRx {
  int count[2] = {};
  int status[2] = {};
  int len[2] = {};
  int from[2] = {};
  bool bytes_ok[2] = {};
  unsigned char* buf = nullptr;
  E3_Addr addr = 0;
  int round = 0;
};
NodeRx g_node[kMaxNodes];
int g_root_done = 0;
int g_root_status[2] = {-1, -1};

void on_rx(EP_RXD* rxd) {
  auto* n = static_cast<NodeRx*>(ep_rxd_arg(rxd));
  const int r = n->round;
  n->count[r]++;
  n->status[r] = ep_rxd_status(rxd);
  n->len[r] = ep_rxd_len(rxd);
  n->from[r] = ep_rxd_node(rxd);
  bool ok = true;
  for (std::uint32_t i = 0; i < kLen && ok; ++i) ok = n->buf[i] == pattern(20 + r, i);
  n->bytes_ok[r] = ok;
  std::memset(n->buf, 0, kLen);
  ep_requeue_receive(rxd, on_rx, n, n->addr, kLen);
}

void on_tx(EP_TXD*, void* arg, int status) {
  g_root_status[reinterpret_cast<std::intptr_t>(arg)] = status;
  g_root_done++;
}

// argv[1]: root node; argv[2]: "every3" or "odd" selection.
int mcast_prog(int argc, char** argv) {
  const int me = ep_nodeid();
  const int n = ep_numnodes();
  if (me < 0 || me >= kMaxNodes || n > kMaxNodes || argc < 3) return 1;
  const int root = std::atoi(argv[1]);
  const bool every3 = std::strcmp(argv[2], "every3") == 0;
  const bool all = std::strcmp(argv[2], "all") == 0;
  NodeRx& self = g_node[me];
  EP_RCVR* r = ep_install_large_rcvr(0, kSvc, 4);
  if (!r) return 1;
  self.buf = static_cast<unsigned char*>(nicsim_alloc(kLen, 64));
  ELAN3_DMA_HANDLE* h;
  // Remote write (which includes remote read): children of this node in
  // the tree pull from this buffer.
  self.addr = map(ep_rcvr_dma_state(r), self.buf, kLen, ELAN_PERM_REMOTEWRITE, &h);
  EXPECT_EQ(ep_queue_receive(r, on_rx, &self, self.addr, kLen, 0), ESUCCESS);
  // The selection: a bitmap over node numbers.
  std::vector<bitmap_t> map_bits(BT_BITOUL(n), 0);
  for (int i = 0; i < n; ++i)
    if (all || (every3 ? (i % 3 == 0 || i == n - 1) : (i % 2 == 1))) BT_SET(map_bits.data(), i);
  if (nicsim_barrier() != 0) return 1;
  if (me == root) {
    EP_XMTR* x = ep_alloc_large_xmtr(0);
    auto* src = static_cast<unsigned char*>(nicsim_alloc(2 * kLen, 64));
    ELAN3_DMA_HANDLE* hs;
    const E3_Addr e = map(ep_xmtr_dma_state(x), src, 2 * kLen, ELAN_PERM_REMOTEREAD, &hs);
    // Round 0: the range [1, n-1] with the bitmap, not to myself, two fragments.
    for (std::uint32_t i = 0; i < kLen; ++i) src[i] = pattern(20, i);
    EP_IOVEC iov[2] = {{e, 1000}, {e + 1000, kLen - 1000}};
    EXPECT_EQ(ep_multicast_large(x, 1, n - 1, map_bits.data(), kSvc, EP_NOT_MYSELF, on_tx, reinterpret_cast<void*>(0),
                                 iov, 2),
              ESUCCESS);
    EXPECT_TRUE(wait_until([] { return g_root_done == 1; }));
    EXPECT_EQ(g_root_status[0], ESUCCESS);
  }
  if (nicsim_barrier() != 0) return 1;
  self.round = 1;
  if (nicsim_barrier() != 0) return 1;
  if (me == root) {
    EP_XMTR* x = ep_alloc_large_xmtr(0);
    auto* src = static_cast<unsigned char*>(nicsim_alloc(kLen, 64));
    ELAN3_DMA_HANDLE* hs;
    const E3_Addr e = map(ep_xmtr_dma_state(x), src, kLen, ELAN_PERM_REMOTEREAD, &hs);
    for (std::uint32_t i = 0; i < kLen; ++i) src[i] = pattern(21, i);
    EP_IOVEC iov{e, kLen};
    // Round 1: every node, myself included.
    EXPECT_EQ(ep_multicast_large(x, -1, -1, nullptr, kSvc, 0, on_tx, reinterpret_cast<void*>(1), &iov, 1), ESUCCESS);
    EXPECT_TRUE(wait_until([] { return g_root_done == 2; }));
    EXPECT_EQ(g_root_status[1], ESUCCESS);
  }
  if (nicsim_barrier() != 0) return 1;
  // Exactly the selected nodes, once each, every byte.
  const bool selected0 = me >= 1 && me != root && BT_TEST(map_bits.data(), me);
  EXPECT_EQ(self.count[0], selected0 ? 1 : 0) << "node " << me << " round 0";
  if (selected0) {
    EXPECT_EQ(self.status[0], ESUCCESS) << "node " << me;
    EXPECT_EQ(self.len[0], static_cast<int>(kLen)) << "node " << me;
    EXPECT_TRUE(self.bytes_ok[0]) << "node " << me;
  }
  EXPECT_EQ(self.count[1], 1) << "node " << me << " round 1";
  EXPECT_EQ(self.status[1], ESUCCESS) << "node " << me;
  EXPECT_TRUE(self.bytes_ok[1]) << "node " << me;
  if (nicsim_barrier() != 0) return 1;
  return 0;
}
const BuiltinProgram reg("ep_test_multicast", mcast_prog, "test");

std::string tree_scenario(int nodes, const std::string& args, const std::string& param = "") {
  return "name: \"ep_mcast\"\nstop_time: \"500ms\"\ntopology { elite_fat_tree { nodes: " + std::to_string(nodes) +
         " } node_param { key: \"bus.profile\" value: \"pci-66\" } " + param +
         " }\n"
         "workload { program: \"ep_test_multicast\" nodes: \"h*\" " +
         args + " }\n";
}

}  // namespace

TEST(EpMulticast, EightNodesOddBitmapNotMyselfThenEveryNode) {
  run_text(tree_scenario(8, "args: \"0\" args: \"odd\""));
}

TEST(EpMulticast, SixtyFourNodesBitmapFromANonZeroRootExactlyOnce) {
  run_text(tree_scenario(64, "args: \"5\" args: \"every3\""));
}

TEST(EpMulticast, WholeRangeByHardwareBroadcastWhenEnabled) {
  // Nodes 1..7 from node 0, then 0..7, are whole ranges: the data and the
  // envelope go out by hardware broadcast into every node's area and queue
  // (docs/ep.md "Multicast by hardware broadcast").
  run_text(tree_scenario(8, "args: \"0\" args: \"all\"", "node_param { key: \"host.ep.hw_broadcast\" value: \"1\" }"));
}
