// Polled vs interrupt completion, manual 2.1.5 and the ep_poll_transmits,
// ep_enable_txcallbacks and ep_disable_txcallbacks pages, between two Elan3
// nodes: a transmit with interrupts runs its callback as soon as it
// completes; one started with EP_NO_INTERRUPT runs it only when polled
// (ep_poll_transmits, or a new transmit on that transmitter); with
// ep_enable_txcallbacks each completion raises an interrupt (the event's
// interrupt turned on through the Elan's event_irq command, no timer), and
// callbacks of transmits already complete run before it returns.
#include "ep/tests/ep_test_util.h"

using namespace nicsim;
using namespace nicsim::ep::testing;

namespace {

constexpr int kSvc = 45;
constexpr int kLen = 32;

struct Cb {
  int calls = 0;
  int status = -1;
  std::uint64_t when = 0;
};
Cb g_cb[8];
int g_rx = 0;

void on_tx(EP_TXD*, void* arg, int status) {
  Cb& c = g_cb[reinterpret_cast<std::intptr_t>(arg)];
  c.calls++;
  c.status = status;
  c.when = nicsim_now_ns();
}
void on_rx(void*, caddr_t msg) {
  for (int i = 0; i < kLen; ++i) EXPECT_EQ(static_cast<unsigned char>(msg[i]), pattern(g_rx, i)) << g_rx;
  g_rx++;
}

// Sends message `m` (its bytes pattern(m, i)) with `flags`, callback slot m.
std::uint64_t send(EP_XMTR* x, int peer, int m, int flags) {
  char buf[kLen];
  for (int i = 0; i < kLen; ++i) buf[i] = static_cast<char>(pattern(m, i));
  const std::uint64_t t0 = nicsim_now_ns();
  EXPECT_EQ(ep_transmit_small(x, peer, kSvc, flags, 0, on_tx, reinterpret_cast<void*>(std::intptr_t{m}), buf, kLen),
            ESUCCESS);
  return t0;
}

int sender() {
  EP_XMTR* x = ep_alloc_small_xmtr(0, EP_SVC_TYPE_SMALL, kLen);
  const int peer = peer_id();
  if (nicsim_barrier() != 0) return 1;
  // 0: sets up the circuit.
  send(x, peer, 0, 0);
  EXPECT_TRUE(wait_until([] { return g_cb[0].calls == 1; }));
  nicsim_sleep_ns(100000);

  // 1: interrupt completion: the callback runs in the handler of the
  // completion's interrupt.
  const std::uint64_t t1 = send(x, peer, 1, 0);
  EXPECT_TRUE(wait_until([] { return g_cb[1].calls == 1; }));
  const std::uint64_t interrupt_latency = g_cb[1].when - t1;
  // Transmit call to callback: ep and driver, the 32-byte message out and its
  // ack back, the source event set, the interrupt entry and the handler.
  EXPECT_EQ(interrupt_latency, 5652u);
  nicsim_sleep_ns(100000);

  // 2: polled, callbacks enabled while it is in flight: the completion
  // interrupts and the callback runs exactly as for an interrupt transmit.
  const std::uint64_t t2 = send(x, peer, 2, EP_NO_INTERRUPT);
  EXPECT_EQ(ep_enable_txcallbacks(x), 0);  // not complete yet
  EXPECT_TRUE(wait_until([] { return g_cb[2].calls == 1; }));
  EXPECT_EQ(g_cb[2].when - t2, interrupt_latency);
  // 3: polled, started while callbacks are enabled: the same.
  nicsim_sleep_ns(100000);
  const std::uint64_t t3 = send(x, peer, 3, EP_NO_INTERRUPT);
  EXPECT_TRUE(wait_until([] { return g_cb[3].calls == 1; }));
  EXPECT_EQ(g_cb[3].when - t3, interrupt_latency);
  EXPECT_EQ(ep_disable_txcallbacks(x), 0);

  // 4: polled with callbacks disabled: complete long ago, nothing runs
  // until ep_poll_transmits, which runs it there and counts it.
  nicsim_sleep_ns(100000);
  send(x, peer, 4, EP_NO_INTERRUPT);
  nicsim_sleep_ns(1000000);
  EXPECT_EQ(g_rx, 5);  // delivered
  EXPECT_EQ(g_cb[4].calls, 0);
  const std::uint64_t p0 = nicsim_now_ns();
  EXPECT_EQ(ep_poll_transmits(x), 1);
  const std::uint64_t p1 = nicsim_now_ns();
  EXPECT_EQ(g_cb[4].calls, 1);
  EXPECT_EQ(g_cb[4].status, ESUCCESS);
  EXPECT_GT(g_cb[4].when, p0);
  EXPECT_LE(g_cb[4].when, p1);
  EXPECT_EQ(ep_poll_transmits(x), 0);

  // 5: polled, complete before callbacks are enabled: the callback runs
  // inside ep_enable_txcallbacks, which counts it; the interrupt the Elan
  // raises for the already-fired event runs nothing twice.
  send(x, peer, 5, EP_NO_INTERRUPT);
  nicsim_sleep_ns(100000);
  EXPECT_EQ(g_cb[5].calls, 0);
  const std::uint64_t e0 = nicsim_now_ns();
  EXPECT_EQ(ep_enable_txcallbacks(x), 1);
  EXPECT_EQ(g_cb[5].calls, 1);
  EXPECT_GT(g_cb[5].when, e0);
  EXPECT_LE(g_cb[5].when, nicsim_now_ns());
  nicsim_sleep_ns(100000);
  EXPECT_EQ(g_cb[5].calls, 1);
  EXPECT_EQ(ep_disable_txcallbacks(x), 0);

  // 6: disabled again: a new transmit collects the old polled one (2.1.5).
  send(x, peer, 6, EP_NO_INTERRUPT);
  nicsim_sleep_ns(100000);
  EXPECT_EQ(g_cb[6].calls, 0);
  send(x, peer, 7, EP_NO_INTERRUPT);
  EXPECT_EQ(g_cb[6].calls, 1);
  EXPECT_EQ(g_cb[7].calls, 0);
  nicsim_sleep_ns(100000);
  EXPECT_EQ(ep_poll_transmits(x), 1);
  for (int m = 0; m < 8; ++m) {
    EXPECT_EQ(g_cb[m].calls, 1) << m;
    EXPECT_EQ(g_cb[m].status, ESUCCESS) << m;
  }
  if (nicsim_barrier() != 0) return 1;
  return 0;
}

int receiver() {
  EP_RCVR* r = ep_install_small_rcvr(0, kSvc, EP_SVC_TYPE_SMALL, kLen, 8, on_rx, nullptr);
  if (!r) return 1;
  peer_id();
  if (nicsim_barrier() != 0) return 1;
  if (nicsim_barrier() != 0) return 1;
  EXPECT_EQ(g_rx, 8);
  return 0;
}

int txcallbacks_prog(int, char**) { return nicsim_workload_rank() == 0 ? sender() : receiver(); }
const BuiltinProgram reg("ep_test_txcallbacks", txcallbacks_prog, "test");

}  // namespace

TEST(EpCompletion, TxcallbacksInterruptAtCompletionPolledOnlyWhenPolled) {
  run_text(pair_scenario("ep_test_txcallbacks"));
}
