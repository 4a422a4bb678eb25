// A large message that waits long for a receive buffer must not fail its
// circuit. The receiver's queue holds one envelope; the second message is
// refused by the full queue (test-fail): the sender's Elan retries it, traps
// it to its driver, which runs it again from its retry list, for as long as
// the receiver posts no buffer: here 20 ms, four heartbeat timeouts. The
// refused envelope holds back nothing else, so both sides' heartbeats keep
// arriving and the circuit stays up (docs/ep.md "Node membership"). Then
// both messages land byte for byte and both transmits complete ESUCCESS.
#include "ep/tests/ep_test_util.h"

using namespace nicsim;
using namespace nicsim::ep::testing;

namespace {

constexpr int kSvc = 72;
constexpr std::uint32_t kLen = 64 * 1024;
constexpr std::uint64_t kPostAtNs = 20000000;  // 4 x ep.heartbeat_timeout (5 ms)

int g_tx_done = 0;
int g_tx_status[2] = {-1, -1};
int g_rx_done = 0;
int g_rx_status[2] = {-1, -1};
std::uint64_t g_rx_when[2] = {};

void on_tx(EP_TXD*, void* arg, int status) {
  g_tx_status[reinterpret_cast<std::intptr_t>(arg)] = status;
  g_tx_done++;
}
void on_rx(EP_RXD* rxd) {
  const int i = g_rx_done++;
  if (i < 2) {
    g_rx_status[i] = ep_rxd_status(rxd);
    g_rx_when[i] = nicsim_now_ns();
  }
}

int held_prog(int, char**) {
  const bool sender = nicsim_workload_rank() == 0;
  if (sender) {
    EP_XMTR* x = ep_alloc_large_xmtr(0);
    auto* src = static_cast<unsigned char*>(nicsim_alloc(2 * kLen, 64));
    for (std::uint32_t i = 0; i < 2 * kLen; ++i) src[i] = pattern(i / kLen + 60, i % kLen);
    ELAN3_DMA_HANDLE* h;
    const E3_Addr e = map(ep_xmtr_dma_state(x), src, 2 * kLen, ELAN_PERM_REMOTEREAD, &h);
    const int peer = peer_id();
    if (nicsim_barrier() != 0) return 1;
    EP_IOVEC iov0{e, kLen}, iov1{e + kLen, kLen};
    EXPECT_EQ(ep_transmit_large(x, peer, kSvc, 0, on_tx, reinterpret_cast<void*>(0), &iov0, 1), ESUCCESS);
    EXPECT_EQ(ep_transmit_large(x, peer, kSvc, 0, on_tx, reinterpret_cast<void*>(1), &iov1, 1), ESUCCESS);
    EXPECT_TRUE(wait_until([] { return g_tx_done == 2; }, 60000));
    EXPECT_EQ(g_tx_status[0], ESUCCESS);
    EXPECT_EQ(g_tx_status[1], ESUCCESS);
    if (nicsim_barrier() != 0) return 1;
    return 0;
  }
  // One envelope fits the queue; the second is refused until a buffer frees it.
  EP_RCVR* r = ep_install_large_rcvr(0, kSvc, 1);
  auto* dst = static_cast<unsigned char*>(nicsim_alloc(2 * kLen, 64));
  std::memset(dst, 0, 2 * kLen);
  ELAN3_DMA_HANDLE* h;
  const E3_Addr e = map(ep_rcvr_dma_state(r), dst, 2 * kLen, ELAN_PERM_REMOTEWRITE, &h);
  peer_id();
  if (nicsim_barrier() != 0) return 1;
  while (nicsim_now_ns() < kPostAtNs) nicsim_sleep_ns(100000);
  EXPECT_EQ(g_rx_done, 0);
  EXPECT_EQ(ep_queue_receive(r, on_rx, nullptr, e, kLen, 0), ESUCCESS);
  EXPECT_EQ(ep_queue_receive(r, on_rx, nullptr, e + kLen, kLen, 0), ESUCCESS);
  EXPECT_TRUE(wait_until([] { return g_rx_done == 2; }, 60000));
  EXPECT_EQ(g_rx_status[0], ESUCCESS);
  EXPECT_EQ(g_rx_status[1], ESUCCESS);
  EXPECT_GE(g_rx_when[0], kPostAtNs);
  for (int m = 0; m < 2; ++m) {
    bool same = true;
    for (std::uint32_t i = 0; i < kLen && same; ++i) same = dst[m * kLen + i] == pattern(60 + m, i);
    EXPECT_TRUE(same) << "message " << m;
  }
  if (nicsim_barrier() != 0) return 1;
  return 0;
}
const BuiltinProgram reg("ep_test_held_stream", held_prog, "test");

}  // namespace

TEST(EpCircuit, LargeMessageWaitingForABufferFourHeartbeatTimeoutsCausesNoFailure) {
  run_text(pair_scenario("ep_test_held_stream"));
}
