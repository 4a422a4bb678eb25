// Small and special messages between two Elan3 nodes over the wire: handler
// and waiting-thread delivery, the copy before return, special timeouts.
#include "ep/tests/ep_test_util.h"

using namespace nicsim;
using namespace nicsim::ep::testing;

namespace {

constexpr int kSvc = 40;
constexpr int kMsgs = 6;
constexpr std::uint32_t kLens[kMsgs] = {0, 1, 7, 64, 200, 288};

struct SmallRx {
  int count = 0;
  unsigned char data[kMsgs][288];
};
SmallRx g_rx;  // node b's receive log (tests run one per process)
int g_tx_status[kMsgs];
int g_tx_done = 0;

void on_small(void* arg, caddr_t msg) {
  auto* rx = static_cast<SmallRx*>(arg);
  // The handler must copy: the slot is reused when it returns.
  if (rx->count < kMsgs) std::memcpy(rx->data[rx->count], msg, kLens[rx->count]);
  rx->count++;
}

void on_tx(EP_TXD*, void* arg, int status) {
  g_tx_status[reinterpret_cast<std::intptr_t>(arg)] = status;
  g_tx_done++;
}

int small_handler_prog(int, char**) {
  const bool sender = nicsim_workload_rank() == 0;
  EP_RCVR* r = nullptr;
  if (!sender) {
    r = ep_install_small_rcvr(0, kSvc, EP_SVC_TYPE_SMALL, 288, 8, on_small, &g_rx);
    if (!r) return 1;
  }
  const int peer = peer_id();
  EXPECT_EQ(ep_numnodes(), 2);
  EXPECT_EQ(peer, 1 - ep_nodeid());
  if (nicsim_barrier() != 0) return 1;
  if (sender) {
    EP_XMTR* x = ep_alloc_small_xmtr(0, EP_SVC_TYPE_SMALL, 288);
    if (!x) return 1;
    unsigned char buf[288];
    for (int m = 0; m < kMsgs; ++m) {
      for (std::uint32_t i = 0; i < kLens[m]; ++i) buf[i] = pattern(m, i);
      EXPECT_EQ(ep_transmit_small(x, peer, kSvc, 0, 0, on_tx, reinterpret_cast<void*>(std::intptr_t{m}),
                                  reinterpret_cast<caddr_t>(buf), static_cast<int>(kLens[m])),
                ESUCCESS);
      // Copied before return: scribbling on the buffer changes nothing.
      std::memset(buf, 0xee, sizeof buf);
    }
    EXPECT_TRUE(wait_until([] { return g_tx_done == kMsgs; }));
    for (int m = 0; m < kMsgs; ++m) EXPECT_EQ(g_tx_status[m], ESUCCESS) << m;
    // A message longer than the transmitter's size is refused.
    EXPECT_EQ(ep_transmit_small(x, peer, kSvc, 0, 0, on_tx, nullptr, reinterpret_cast<caddr_t>(buf), 289), EINVAL);
    // A freed transmitter is a bad handle.
    ep_free_small_xmtr(x);
    EXPECT_EQ(ep_transmit_small(x, peer, kSvc, 0, 0, on_tx, nullptr, reinterpret_cast<caddr_t>(buf), 8), EINVAL);
    EXPECT_EQ(ep_alloc_small_xmtr(0, EP_SVC_TYPE_SMALL, 4096), nullptr);  // larger than one packet
  }
  if (nicsim_barrier() != 0) return 1;
  if (!sender) {
    EXPECT_EQ(g_rx.count, kMsgs);
    for (int m = 0; m < kMsgs && m < g_rx.count; ++m)
      for (std::uint32_t i = 0; i < kLens[m]; ++i)
        if (g_rx.data[m][i] != pattern(m, i)) {
          ADD_FAILURE() << "message " << m << " byte " << i;
          break;
        }
    ep_remove_small_rcvr(r);
    // The service is free again; the old handle is not usable.
    caddr_t m = nullptr;
    EXPECT_EQ(ep_waitfor_small_message(r, &m), EINVAL);
    EP_RCVR* again = ep_install_small_rcvr(0, kSvc, EP_SVC_TYPE_SMALL, 64, 4, on_small, &g_rx);
    EXPECT_NE(again, nullptr);
    if (again) ep_remove_small_rcvr(again);
  }
  return 0;
}
const BuiltinProgram reg1("ep_test_small_handler", small_handler_prog, "test");

}  // namespace

TEST(EpSmall, HandlerReceivesEveryByteAndSenderBufferIsFreeAtOnce) { run_text(pair_scenario("ep_test_small_handler")); }
