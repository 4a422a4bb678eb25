// Virtual circuits and failures between two Elan3 nodes: the link taken
// down in the middle of a large transfer completes the active transmits
// (and the receive) with ENETRESET; a send while the circuit is being torn
// down gets ENETRESET, one to a node known dead ECONNREFUSED; after
// link_up the membership probes find the node again and the next send sets
// up a new circuit. Also special messages (timeout, no circuit needed),
// waiting threads for small messages, and an MMU permission fault that
// becomes an error instead of a write.
#include "ep/tests/ep_test_util.h"

using namespace nicsim;
using namespace nicsim::ep::testing;

namespace {

constexpr int kSvc = 60;

struct Log {
  int done = 0;
  int status[16] = {};
  std::uint64_t when[16] = {};
};
Log g_tx, g_rx;
void on_tx(EP_TXD*, void* arg, int status) {
  const auto i = reinterpret_cast<std::intptr_t>(arg);
  g_tx.status[i] = status;
  g_tx.when[i] = nicsim_now_ns();
  g_tx.done++;
}
void on_rx(EP_RXD* rxd) {
  const int i = g_rx.done++;
  if (i < 16) {
    g_rx.status[i] = ep_rxd_status(rxd);
    g_rx.when[i] = nicsim_now_ns();
  }
  if (ep_rxd_status(rxd) == ESUCCESS || ep_rxd_status(rxd) == ENETRESET)
    ep_requeue_receive(rxd, on_rx, ep_rxd_arg(rxd),
                       static_cast<E3_Addr>(reinterpret_cast<std::uintptr_t>(ep_rxd_arg(rxd))), 1 << 20);
}

// The link goes down at 1 ms (a 1 MiB message is then half way) and comes
// back at 3 ms (scenario faults below).
constexpr std::uint32_t kBig = 1 << 20;

int reset_prog(int, char**) {
  const bool sender = nicsim_workload_rank() == 0;
  if (sender) {
    EP_XMTR* x = ep_alloc_large_xmtr(0);
    auto* src = static_cast<unsigned char*>(nicsim_alloc(kBig, 64));
    for (std::uint32_t i = 0; i < kBig; ++i) src[i] = pattern(5, i);
    ELAN3_DMA_HANDLE* h;
    EP_IOVEC iov{map(ep_xmtr_dma_state(x), src, kBig, ELAN_PERM_REMOTEREAD, &h), kBig};
    const int peer = peer_id();
    if (nicsim_barrier() != 0) return 1;
    // Wait for 0.8 ms, then start the transfer that the link failure cuts.
    while (nicsim_now_ns() < 800000) nicsim_sleep_ns(1000);
    EXPECT_EQ(ep_transmit_large(x, peer, kSvc, 0, on_tx, reinterpret_cast<void*>(0), &iov, 1), ESUCCESS);
    EXPECT_EQ(ep_transmit_large(x, peer, kSvc, 0, on_tx, reinterpret_cast<void*>(1), &iov, 1), ESUCCESS);
    EXPECT_TRUE(wait_until([] { return g_tx.done == 2; }, 3000));
    EXPECT_EQ(g_tx.status[0], ENETRESET);
    EXPECT_EQ(g_tx.status[1], ENETRESET);
    EXPECT_GE(g_tx.when[0], 1000000u);  // not before the link went down
    // The circuit is being torn down: ENETRESET at once, then ECONNREFUSED
    // while the node is dead (link still down).
    EXPECT_EQ(ep_transmit_large(x, peer, kSvc, 0, on_tx, reinterpret_cast<void*>(2), &iov, 1), ENETRESET);
    while (nicsim_now_ns() < 2500000) nicsim_sleep_ns(10000);
    EXPECT_EQ(ep_transmit_large(x, peer, kSvc, 0, on_tx, reinterpret_cast<void*>(2), &iov, 1), ECONNREFUSED);
    // After link_up (3 ms) a probe finds the node: a new circuit carries the next message.
    int rc = ECONNREFUSED;
    while (rc != ESUCCESS && nicsim_now_ns() < 20000000) {
      nicsim_sleep_ns(100000);
      rc = ep_transmit_large(x, peer, kSvc, 0, on_tx, reinterpret_cast<void*>(2), &iov, 1);
    }
    EXPECT_EQ(rc, ESUCCESS);
    EXPECT_GE(nicsim_now_ns(), 3000000u);
    EXPECT_TRUE(wait_until([] { return g_tx.done == 3; }, 20000));
    EXPECT_EQ(g_tx.status[2], ESUCCESS);
    if (nicsim_barrier() != 0) return 1;
    return 0;
  }
  EP_RCVR* r = ep_install_large_rcvr(0, kSvc, 4);
  auto* dst = static_cast<unsigned char*>(nicsim_alloc(kBig, 64));
  ELAN3_DMA_HANDLE* h;
  const E3_Addr e = map(ep_rcvr_dma_state(r), dst, kBig, ELAN_PERM_REMOTEWRITE, &h);
  auto* tag = reinterpret_cast<void*>(static_cast<std::uintptr_t>(e));
  EXPECT_EQ(ep_queue_receive(r, on_rx, tag, e, kBig, 0), ESUCCESS);
  peer_id();
  if (nicsim_barrier() != 0) return 1;
  EXPECT_TRUE(wait_until([] { return g_rx.done >= 2; }, 20000));
  EXPECT_EQ(g_rx.status[0], ENETRESET);  // the receive in progress when the link failed
  const int last = g_rx.done - 1;
  EXPECT_EQ(g_rx.status[last], ESUCCESS);  // the message on the new circuit
  bool same = true;
  for (std::uint32_t i = 0; i < kBig && same; ++i) same = dst[i] == pattern(5, i);
  EXPECT_TRUE(same);
  if (nicsim_barrier() != 0) return 1;
  return 0;
}
const BuiltinProgram reg_reset("ep_test_circuit_reset", reset_prog, "test");

// ---- special messages and waiting threads ------------------------------------------

// A special message with a timeout long enough to be delivered.
int ep_transmit_special_ok(EP_XMTR* x, int peer, int svc, char* msg) {
  const int rc =
      ep_transmit_small(x, peer, svc, 0, 1000000, on_tx, reinterpret_cast<void*>(0), reinterpret_cast<caddr_t>(msg), 8);
  if (rc == ESUCCESS) {
    EXPECT_TRUE(wait_until([] { return g_tx.done == 1; }));
  }
  EXPECT_EQ(g_tx.status[0], ESUCCESS);
  return rc;
}

int special_prog(int, char**) {
  const bool sender = nicsim_workload_rank() == 0;
  constexpr int kSpecialSvc = 61, kWaitSvc = 62;
  if (sender) {
    EP_XMTR* sx = ep_alloc_small_xmtr(0, EP_SVC_TYPE_SPECIAL, 64);
    EP_XMTR* x = ep_alloc_small_xmtr(0, EP_SVC_TYPE_SMALL, 64);
    const int peer = peer_id();
    if (nicsim_barrier() != 0) return 1;
    char msg[64];
    std::memset(msg, 'S', sizeof msg);
    // Special: no circuit needed, delivered within its timeout.
    EXPECT_EQ(ep_transmit_special_ok(sx, peer, kSpecialSvc, msg), ESUCCESS);
    // A special message needs a timeout.
    EXPECT_EQ(ep_transmit_small(sx, peer, kSpecialSvc, 0, 0, on_tx, reinterpret_cast<void*>(1),
                                reinterpret_cast<caddr_t>(msg), 8),
              EINVAL);
    // Small messages to a thread waiting with ep_waitfor_small_message.
    for (int m = 0; m < 4; ++m) {
      for (int i = 0; i < 64; ++i) msg[i] = static_cast<char>(pattern(10 + m, i));
      EXPECT_EQ(ep_transmit_small(x, peer, kWaitSvc, EP_NO_INTERRUPT, 0, nullptr, nullptr,
                                  reinterpret_cast<caddr_t>(msg), 64),
                ESUCCESS);
    }
    if (nicsim_barrier() != 0) return 1;  // all four consumed
    // To a service nobody installed: refused (test-fail) until the timeout.
    EXPECT_EQ(
        ep_transmit_small(sx, peer, 99, 0, 50000, on_tx, reinterpret_cast<void*>(1), reinterpret_cast<caddr_t>(msg), 8),
        ESUCCESS);
    const std::uint64_t t0 = nicsim_now_ns();
    EXPECT_TRUE(wait_until([] { return g_tx.done == 2; }));
    EXPECT_EQ(g_tx.status[1], ETIMEDOUT);
    EXPECT_GE(g_tx.when[1] - t0, 49000u);
    EXPECT_LE(g_tx.when[1] - t0, 60000u);
    if (nicsim_barrier() != 0) return 1;
    return 0;
  }
  EP_RCVR* sr = ep_install_small_rcvr(0, kSpecialSvc, EP_SVC_TYPE_SPECIAL, 64, 4, nullptr, nullptr);
  EP_RCVR* wr = ep_install_small_rcvr(0, kWaitSvc, EP_SVC_TYPE_SMALL, 64, 8, nullptr, nullptr);
  peer_id();
  if (nicsim_barrier() != 0) return 1;
  caddr_t m1 = nullptr;
  EXPECT_EQ(ep_waitfor_small_message(sr, &m1), ESUCCESS);
  EXPECT_EQ(m1[0], 'S');
  EXPECT_EQ(m1[7], 'S');
  ep_consume_small_message(sr, &m1);  // the SYNOPSIS form
  // Take two, consume them out of order (the example's form), then the rest.
  caddr_t a = nullptr, b = nullptr;
  EXPECT_EQ(ep_waitfor_small_message(wr, &a), ESUCCESS);
  EXPECT_EQ(ep_waitfor_small_message(wr, &b), ESUCCESS);
  EXPECT_NE(a, b);
  for (int i = 0; i < 64; ++i) {
    EXPECT_EQ(static_cast<unsigned char>(a[i]), pattern(10, i));
    EXPECT_EQ(static_cast<unsigned char>(b[i]), pattern(11, i));
  }
  ep_consume_small_message(wr, reinterpret_cast<caddr_t*>(b));
  ep_consume_small_message(wr, reinterpret_cast<caddr_t*>(a));
  for (int m = 2; m < 4; ++m) {
    caddr_t c = nullptr;
    EXPECT_EQ(ep_waitfor_small_message(wr, &c), ESUCCESS);
    for (int i = 0; i < 64; ++i) EXPECT_EQ(static_cast<unsigned char>(c[i]), pattern(10 + m, i));
    ep_consume_small_message(wr, &c);
  }
  if (nicsim_barrier() != 0) return 1;
  if (nicsim_barrier() != 0) return 1;
  return 0;
}

const BuiltinProgram reg_special("ep_test_special_waitfor", special_prog, "test");

// ---- an MMU permission fault is an error, not a write ---------------------------------

int perm_prog(int, char**) {
  const bool sender = nicsim_workload_rank() == 0;
  constexpr std::uint32_t kLen = 4096;
  if (sender) {
    EP_XMTR* x = ep_alloc_large_xmtr(0);
    auto* src = static_cast<unsigned char*>(nicsim_alloc(kLen, 64));
    std::memset(src, 0xab, kLen);
    ELAN3_DMA_HANDLE* h;
    EP_IOVEC iov{map(ep_xmtr_dma_state(x), src, kLen, ELAN_PERM_REMOTEREAD, &h), kLen};
    const int peer = peer_id();
    if (nicsim_barrier() != 0) return 1;
    EXPECT_EQ(ep_transmit_large(x, peer, kSvc, 0, on_tx, reinterpret_cast<void*>(0), &iov, 1), ESUCCESS);
    EXPECT_TRUE(wait_until([] { return g_tx.done == 1; }));
    EXPECT_EQ(g_tx.status[0], ENETRESET);
    if (nicsim_barrier() != 0) return 1;
    return 0;
  }
  EP_RCVR* r = ep_install_large_rcvr(0, kSvc, 4);
  auto* dst = static_cast<unsigned char*>(nicsim_alloc(kLen, 64));
  std::memset(dst, 0x11, kLen);
  ELAN3_DMA_HANDLE* h;
  // The receive buffer lacks remote write permission.
  const E3_Addr e = map(ep_rcvr_dma_state(r), dst, kLen, ELAN_PERM_NOREMOTE, &h);
  EXPECT_EQ(ep_queue_receive(r, on_rx, nullptr, e, kLen, 0), ESUCCESS);
  peer_id();
  if (nicsim_barrier() != 0) return 1;
  EXPECT_TRUE(wait_until([] { return g_rx.done >= 1; }));
  EXPECT_EQ(g_rx.status[0], ENETRESET);
  bool untouched = true;
  for (std::uint32_t i = 0; i < kLen && untouched; ++i) untouched = dst[i] == 0x11;
  EXPECT_TRUE(untouched);
  if (nicsim_barrier() != 0) return 1;
  return 0;
}
const BuiltinProgram reg_perm("ep_test_permission_fault", perm_prog, "test");

}  // namespace

TEST(EpCircuit, LinkDownMidTransferGivesEnetresetAndALaterSendReconnects) {
  run_text(pair_scenario("ep_test_circuit_reset", R"(
    fault { at: "1ms" link: "ab" link_down: true }
    fault { at: "3ms" link: "ab" link_up: true }
  )"));
}

TEST(EpSpecial, SpecialMessagesTimeoutAndWaitingThreadsConsumeInAnyOrder) {
  run_text(pair_scenario("ep_test_special_waitfor"));
}

TEST(EpMmu, PermissionFaultIsAnErrorNotAWrite) { run_text(pair_scenario("ep_test_permission_fault")); }
