// Kernel Comms multicast by hardware broadcast (ep.hw_broadcast=1) over an
// Elite fat tree: a whole contiguous range gets the data and the envelope by
// Elan broadcasts (docs/ep.md "Multicast by hardware broadcast"); a bitmap
// with a hole, or data larger than a broadcast area, goes by the tree. Every
// receiver checks every byte; a node whose link goes down in the middle of a
// broadcast fails that multicast at the sender (ENETRESET), the live nodes
// get nothing of it, and later multicasts leave the dead node out.
#include "ep/lib/ep_internal.h"
#include "ep/tests/ep_test_util.h"

using namespace nicsim;
using namespace nicsim::ep::testing;

namespace {

constexpr int kSvc = 72;
constexpr int kMaxNodes = 64;
constexpr int kRounds = 11;
constexpr std::uint32_t kBuf = 70000;
constexpr int kBufs = 3;

// Round r: bytes and whether it goes by broadcast (kBcast) or the tree.
struct Round {
  std::uint32_t len;
  bool bcast;
};
// 0: [1, n-1] not myself, 2 fragments; 1: -1/-1 with myself; 2: a whole
// area; 3: empty; 4: one byte more than an area (tree); 5: a bitmap with a
// hole (tree); 6: a bitmap that selects a whole range; 7-10: four at once.
// Rounds 2 and 4 take the area size from the program's argument.
Round kPlan[kRounds] = {{6000, true}, {300, true},  {65536, true}, {0, true},    {65537, false}, {5000, false},
                        {5000, true}, {4096, true}, {4100, true},  {4104, true}, {4108, true}};

struct Slot {
  unsigned char* buf = nullptr;
  E3_Addr addr = 0;
  struct NodeRx* node = nullptr;
};
struct NodeRx {
  int count[kRounds] = {};
  int status[kRounds] = {};
  bool bytes_ok[kRounds] = {};
  int unknown = 0;
  Slot slots[kBufs];
};
NodeRx g_node[kMaxNodes];
int g_done = 0;
int g_status[kRounds];

// The round is in the first 4 bytes (an empty message is round 3).
bool message_ok(const unsigned char* b, int len, int* round) {
  if (len == 0) {
    *round = 3;
    return true;
  }
  if (len < 4) return false;
  std::uint32_t r;
  std::memcpy(&r, b, 4);
  if (r >= kRounds || static_cast<std::uint32_t>(len) != kPlan[r].len) return false;
  *round = static_cast<int>(r);
  for (int i = 4; i < len; ++i)
    if (b[i] != pattern(60 + r, static_cast<std::uint32_t>(i))) return false;
  return true;
}

void on_rx(EP_RXD* rxd) {
  auto* s = static_cast<Slot*>(ep_rxd_arg(rxd));
  int r = -1;
  const bool ok = message_ok(s->buf, ep_rxd_len(rxd), &r);
  if (r < 0) {
    s->node->unknown++;
  } else {
    s->node->count[r]++;
    s->node->status[r] = ep_rxd_status(rxd);
    s->node->bytes_ok[r] = ok;
  }
  std::memset(s->buf, 0, kBuf);
  ep_requeue_receive(rxd, on_rx, s, s->addr, kBuf);
}

void on_tx(EP_TXD*, void* arg, int status) {
  g_status[reinterpret_cast<std::intptr_t>(arg)] = status;
  g_done++;
}

void fill(unsigned char* src, int r) {
  const std::uint32_t u = static_cast<std::uint32_t>(r);
  for (std::uint32_t i = 4; i < kPlan[r].len; ++i) src[i] = pattern(60 + u, i);
  if (kPlan[r].len >= 4) std::memcpy(src, &u, 4);
}

bool selected(int r, int node, int n) {
  if (r == 1) return true;
  if (r == 5) return node >= 1 && node != 2;
  return node >= 1 && node < n;
}

void root_rounds(int n) {
  EP_XMTR* x = ep_alloc_large_xmtr(0);
  std::vector<unsigned char*> src(kRounds);
  std::vector<EP_IOVEC> iov(kRounds);
  for (int r = 0; r < kRounds; ++r) {
    src[r] = static_cast<unsigned char*>(nicsim_alloc(kBuf, 64));
    ELAN3_DMA_HANDLE* h;
    iov[r] = EP_IOVEC{map(ep_xmtr_dma_state(x), src[r], kBuf, ELAN_PERM_REMOTEREAD, &h), kPlan[r].len};
    fill(src[r], r);
  }
  std::vector<bitmap_t> hole(BT_BITOUL(n), 0), whole(BT_BITOUL(n), 0);
  for (int i = 1; i < n; ++i) {
    BT_SET(whole.data(), i);
    if (i != 2) BT_SET(hole.data(), i);
  }
  const auto arg = [](int r) { return reinterpret_cast<void*>(static_cast<std::intptr_t>(r)); };
  for (int r = 0; r < kRounds; ++r) {
    int rc = 0;
    if (r == 0) {
      EP_IOVEC two[2] = {{iov[0].Base, 1000}, {iov[0].Base + 1000, kPlan[0].len - 1000}};
      rc = ep_multicast_large(x, 1, n - 1, nullptr, kSvc, EP_NOT_MYSELF, on_tx, arg(r), two, 2);
    } else if (r == 1) {
      rc = ep_multicast_large(x, -1, -1, nullptr, kSvc, 0, on_tx, arg(r), &iov[r], 1);
    } else {
      bitmap_t* bits = r == 5 ? hole.data() : r == 6 ? whole.data() : nullptr;
      rc = ep_multicast_large(x, 1, n - 1, bits, kSvc, EP_NOT_MYSELF, on_tx, arg(r), &iov[r], 1);
    }
    EXPECT_EQ(rc, ESUCCESS) << "round " << r;
    // Rounds 7-10 go out together; the others one at a time.
    if (r < 7 || r == kRounds - 1) {
      EXPECT_TRUE(wait_until([r] { return g_done == r + 1; }, 20000)) << "round " << r;
    }
  }
  for (int r = 0; r < kRounds; ++r) EXPECT_EQ(g_status[r], ESUCCESS) << "round " << r;
  const ep::Broadcaster* b = ep::EpNode::current()->bcast.get();
  ASSERT_NE(b, nullptr);
  int by_broadcast = 0;
  for (const Round& p : kPlan) by_broadcast += p.bcast;
  EXPECT_EQ(b->sent, static_cast<std::uint64_t>(by_broadcast));
  EXPECT_EQ(b->failed, 0u);
  // Four at once: each waits until every receiver copied the one before
  // out of its area.
  EXPECT_GT(b->retests, 0u);
}

// argv[1]: ep.hw_broadcast_bytes of the run.
int bcast_prog(int argc, char** argv) {
  const int me = ep_nodeid();
  const int n = ep_numnodes();
  if (me < 0 || me >= kMaxNodes || n > kMaxNodes || argc < 2) return 1;
  const auto area = static_cast<std::uint32_t>(std::atoi(argv[1]));
  if (area < 8192 || area >= kBuf) return 1;
  kPlan[2].len = area;
  kPlan[4].len = area + 1;
  NodeRx& self = g_node[me];
  EP_RCVR* r = ep_install_large_rcvr(0, kSvc, 8);
  if (!r) return 1;
  for (Slot& s : self.slots) {
    s.node = &self;
    s.buf = static_cast<unsigned char*>(nicsim_alloc(kBuf, 64));
    ELAN3_DMA_HANDLE* h;
    s.addr = map(ep_rcvr_dma_state(r), s.buf, kBuf, ELAN_PERM_REMOTEWRITE, &h);
    EXPECT_EQ(ep_queue_receive(r, on_rx, &s, s.addr, kBuf, 0), ESUCCESS);
  }
  if (nicsim_barrier() != 0) return 1;
  if (me == 0) root_rounds(n);
  while (nicsim_now_ns() < 30000000) nicsim_sleep_ns(100000);
  if (nicsim_barrier() != 0) return 1;
  EXPECT_EQ(self.unknown, 0) << "node " << me;
  for (int k = 0; k < kRounds; ++k) {
    const bool want = selected(k, me, n);
    EXPECT_EQ(self.count[k], want ? 1 : 0) << "node " << me << " round " << k;
    if (want && self.count[k] == 1) {
      EXPECT_EQ(self.status[k], ESUCCESS) << "node " << me << " round " << k;
      EXPECT_TRUE(self.bytes_ok[k]) << "node " << me << " round " << k;
    }
  }
  return nicsim_barrier() == 0 ? 0 : 1;
}
const BuiltinProgram reg("ep_test_bcast", bcast_prog, "test");

// argv: none. Node 0 broadcasts 64 KiB to [1, 15] at 3 ms; node 9's link
// goes down at 3.1 ms, while the data is on the wire.
struct DeathRx {
  int count[3] = {};
  int status[3] = {};
  bool ok[3] = {};
  Slot slot;
};
DeathRx g_death[16];
int g_death_status[3] = {-1, -1, -1};
int g_death_done = 0;

void on_death_rx(EP_RXD* rxd) {
  auto* s = static_cast<Slot*>(ep_rxd_arg(rxd));
  DeathRx& d = g_death[ep_nodeid()];
  int r = static_cast<int>(s->buf[0]);
  if (r < 0 || r > 2) r = 0;
  d.count[r]++;
  d.status[r] = ep_rxd_status(rxd);
  bool ok = ep_rxd_len(rxd) == 65536;
  for (std::uint32_t i = 1; i < 65536 && ok; ++i) ok = s->buf[i] == pattern(70 + r, i);
  d.ok[r] = ok;
  std::memset(s->buf, 0, kBuf);
  ep_requeue_receive(rxd, on_death_rx, s, s->addr, kBuf);
}

void on_death_tx(EP_TXD*, void* arg, int status) {
  g_death_status[reinterpret_cast<std::intptr_t>(arg)] = status;
  g_death_done++;
}

int death_prog(int, char**) {
  const int me = ep_nodeid();
  if (me < 0 || me >= 16 || ep_numnodes() != 16) return 1;
  constexpr int kDead = 9;
  DeathRx& self = g_death[me];
  EP_RCVR* r = ep_install_large_rcvr(0, kSvc, 4);
  if (!r) return 1;
  self.slot.buf = static_cast<unsigned char*>(nicsim_alloc(kBuf, 64));
  ELAN3_DMA_HANDLE* h;
  self.slot.addr = map(ep_rcvr_dma_state(r), self.slot.buf, kBuf, ELAN_PERM_REMOTEWRITE, &h);
  EXPECT_EQ(ep_queue_receive(r, on_death_rx, &self.slot, self.slot.addr, kBuf, 0), ESUCCESS);
  if (nicsim_barrier() != 0) return 1;
  if (me == 0) {
    EP_XMTR* x = ep_alloc_large_xmtr(0);
    auto* src = static_cast<unsigned char*>(nicsim_alloc(65536, 64));
    ELAN3_DMA_HANDLE* hs;
    EP_IOVEC iov{map(ep_xmtr_dma_state(x), src, 65536, ELAN_PERM_REMOTEREAD, &hs), 65536};
    const auto send = [&](int round, int lo, int hi, std::uint64_t at) {
      while (nicsim_now_ns() < at) nicsim_sleep_ns(1000);
      for (std::uint32_t i = 0; i < 65536; ++i) src[i] = pattern(70 + static_cast<std::uint32_t>(round), i);
      src[0] = static_cast<unsigned char>(round);
      EXPECT_EQ(ep_multicast_large(x, lo, hi, nullptr, kSvc, EP_NOT_MYSELF, on_death_tx,
                                   reinterpret_cast<void*>(static_cast<std::intptr_t>(round)), &iov, 1),
                ESUCCESS);
      EXPECT_TRUE(wait_until([round] { return g_death_done == round + 1; }, 20000)) << "round " << round;
    };
    const ep::Broadcaster* b = ep::EpNode::current()->bcast.get();
    if (!b) {
      ADD_FAILURE() << "no hardware broadcast on node 0";
      return 1;
    }
    // Round 0: [1, 15] by broadcast; node 9 dies during the data.
    send(0, 1, 15, 3000000);
    EXPECT_EQ(g_death_status[0], ENETRESET);
    EXPECT_EQ(b->failed, 1u);
    // Round 1 at 20 ms: node 9 is known dead (its connect went
    // unanswered), so the set 1-8, 10-15 goes by the tree.
    send(1, 1, 15, 20000000);
    EXPECT_EQ(g_death_status[1], ESUCCESS);
    EXPECT_EQ(b->sent + b->failed, 1u);
    // Round 2: [10, 15] by broadcast, after the failed one: the Elan does
    // not reuse the failed broadcast's packet numbers (a node that executed
    // a packet would take this one's busy word for a repeat, drop it, and
    // find the wrong number when it copies the data out: ENETRESET).
    send(2, 10, 15, 25000000);
    EXPECT_EQ(g_death_status[2], ESUCCESS);
    EXPECT_EQ(b->sent, 1u);
  }
  while (nicsim_now_ns() < 40000000) nicsim_sleep_ns(100000);
  if (nicsim_barrier() != 0) return 1;
  if (me != 0 && me != kDead) {
    // The data never reached every node: the envelope was never sent.
    EXPECT_EQ(self.count[0], 0) << "node " << me;
    EXPECT_EQ(self.count[1], 1) << "node " << me;
    EXPECT_EQ(self.status[1], ESUCCESS) << "node " << me;
    EXPECT_TRUE(self.ok[1]) << "node " << me;
    EXPECT_EQ(self.count[2], me >= 10 ? 1 : 0) << "node " << me;
    if (me >= 10) {
      EXPECT_EQ(self.status[2], ESUCCESS) << "node " << me;
      EXPECT_TRUE(self.ok[2]) << "node " << me;
    }
  }
  return nicsim_barrier() == 0 ? 0 : 1;
}
const BuiltinProgram reg_death("ep_test_bcast_death", death_prog, "test");

// `area`: ep.hw_broadcast_bytes (every node keeps one per sender: 64
// nodes take 8 KiB areas to keep the run's memory small).
std::string scenario(int nodes, const std::string& program, std::uint32_t area, const std::string& extra = "") {
  const std::string bytes = std::to_string(area);
  return "name: \"ep_bcast\"\nstop_time: \"100ms\"\ntopology { elite_fat_tree { nodes: " + std::to_string(nodes) +
         " } node_param { key: \"bus.profile\" value: \"pci-66\" } node_param { key: \"host.ep.hw_broadcast\" "
         "value: \"1\" } node_param { key: \"host.ep.hw_broadcast_bytes\" value: \"" +
         bytes + "B\" } }\nworkload { program: \"" + program + "\" nodes: \"h*\" args: \"" + bytes + "\" }\n" + extra;
}

class EpBroadcast : public ::testing::TestWithParam<int> {};

}  // namespace

TEST_P(EpBroadcast, WholeRangeByBroadcastEveryByteOnEveryReceiver) {
  run_text(scenario(GetParam(), "ep_test_bcast", GetParam() >= 64 ? 8192 : 65536));
}
INSTANTIATE_TEST_SUITE_P(Nodes, EpBroadcast, ::testing::Values(4, 16, 64),
                         [](const ::testing::TestParamInfo<int>& i) { return std::to_string(i.param) + "nodes"; });

TEST(EpBroadcastFault, NodeDeathInTheRangeFailsThatMulticastOnlyAndLaterOnesLeaveItOut) {
  run_text(
      scenario(16, "ep_test_bcast_death", 65536, "fault { at: \"3100us\" link: \"h9--el0_2\" link_down: true }\n"));
}
