// Large messages and RPC between two Elan3 nodes over the wire: fragments
// pulled into queued buffers byte for byte, messages held until a buffer is
// queued, E2BIG and requeue, ep_waitfor_large_receive, RPC with a payload,
// a datavec and a status block, polled and interrupt completion, and the
// manual's codes for bad arguments.
#include "ep/tests/ep_test_util.h"

using namespace nicsim;
using namespace nicsim::ep::testing;

namespace {

constexpr int kSvc = 50;

// ---- fragments, accessors, held messages, E2BIG, requeue -----------------------

struct TxLog {
  int done = 0;
  int status[8] = {};
  std::uint64_t when[8] = {};
};
TxLog g_tx;
void on_tx(EP_TXD*, void* arg, int status) {
  const auto i = reinterpret_cast<std::intptr_t>(arg);
  g_tx.status[i] = status;
  g_tx.when[i] = nicsim_now_ns();
  g_tx.done++;
}

struct RxLog {
  int done = 0;
  EP_RXD* rxd[8] = {};
  int status[8] = {}, len[8] = {}, node[8] = {}, isrpc[8] = {};
  void* arg[8] = {};
  std::uint64_t when[8] = {};
};
RxLog g_rx;
void on_rx(EP_RXD* rxd) {
  const int i = g_rx.done++;
  if (i >= 8) return;
  g_rx.rxd[i] = rxd;
  g_rx.status[i] = ep_rxd_status(rxd);
  g_rx.len[i] = ep_rxd_len(rxd);
  g_rx.node[i] = ep_rxd_node(rxd);
  g_rx.isrpc[i] = ep_rxd_isrpc(rxd);
  g_rx.arg[i] = ep_rxd_arg(rxd);
  g_rx.when[i] = nicsim_now_ns();
}

// Three fragments of odd sizes at odd offsets, 10000 bytes in all.
constexpr std::uint32_t kFrag[3] = {1, 4095, 5904};
constexpr std::uint32_t kTotal = 10000;

int fragments_prog(int, char**) {
  const bool sender = nicsim_workload_rank() == 0;
  if (sender) {
    EP_XMTR* x = ep_alloc_large_xmtr(0);
    if (!x) return 1;
    auto* src = static_cast<unsigned char*>(nicsim_alloc(3 * 8192, 64));
    ELAN3_DMA_HANDLE* h[3];
    EP_IOVEC iov[3];
    std::uint32_t seq = 0;
    for (int f = 0; f < 3; ++f) {
      unsigned char* p = src + f * 8192 + 3;  // not aligned
      for (std::uint32_t i = 0; i < kFrag[f]; ++i) p[i] = pattern(1, seq++);
      iov[f].Base = map(ep_xmtr_dma_state(x), p, kFrag[f], ELAN_PERM_REMOTEREAD, &h[f]);
      iov[f].Len = kFrag[f];
      EXPECT_NE(iov[f].Base, 0u);
    }
    const int peer = peer_id();
    if (nicsim_barrier() != 0) return 1;  // receiver installed, no buffer queued yet
    EXPECT_EQ(ep_transmit_large(x, peer, kSvc, 0, on_tx, reinterpret_cast<void*>(0), iov, 3), ESUCCESS);
    // Second message: longer than the buffer the receiver will have (E2BIG).
    EXPECT_EQ(ep_transmit_large(x, peer, kSvc, 0, on_tx, reinterpret_cast<void*>(1), iov, 3), ESUCCESS);
    if (nicsim_barrier() != 0) return 1;  // receiver queues its buffers after 100 us
    EXPECT_TRUE(wait_until([] { return g_tx.done == 2; }));
    EXPECT_EQ(g_tx.status[0], ESUCCESS);
    EXPECT_EQ(g_tx.status[1], ESUCCESS);  // delivered; the receiver refused the data
    if (nicsim_barrier() != 0) return 1;
    // Third: into the requeued buffer.
    EXPECT_EQ(ep_transmit_large(x, peer, kSvc, 0, on_tx, reinterpret_cast<void*>(2), iov, 3), ESUCCESS);
    EXPECT_TRUE(wait_until([] { return g_tx.done == 3; }));
    EXPECT_EQ(g_tx.status[2], ESUCCESS);
    if (nicsim_barrier() != 0) return 1;
    return 0;
  }
  EP_RCVR* r = ep_install_large_rcvr(0, kSvc, 4);
  if (!r) return 1;
  auto* big = static_cast<unsigned char*>(nicsim_alloc(kTotal + 64, 64));
  auto* small = static_cast<unsigned char*>(nicsim_alloc(4096, 64));
  std::memset(big, 0x5a, kTotal + 64);
  std::memset(small, 0x5a, 4096);
  ELAN3_DMA_HANDLE *hb, *hs;
  const E3_Addr eb = map(ep_rcvr_dma_state(r), big, kTotal + 64, ELAN_PERM_REMOTEWRITE, &hb);
  const E3_Addr es = map(ep_rcvr_dma_state(r), small, 4096, ELAN_PERM_REMOTEWRITE, &hs);
  const int peer = peer_id();
  if (nicsim_barrier() != 0) return 1;
  if (nicsim_barrier() != 0) return 1;
  // Both messages wait in the input queue: nothing completes without a buffer.
  nicsim_sleep_ns(100000);
  EXPECT_EQ(g_tx.done, 0);
  EXPECT_EQ(g_rx.done, 0);
  const std::uint64_t queued_at = nicsim_now_ns();
  EXPECT_EQ(ep_queue_receive(r, on_rx, reinterpret_cast<void*>(0x11), eb, kTotal + 64, 0), ESUCCESS);
  EXPECT_EQ(ep_queue_receive(r, on_rx, reinterpret_cast<void*>(0x22), es, 4096, 0), ESUCCESS);
  EXPECT_TRUE(wait_until([] { return g_rx.done == 2; }));
  // The first message went to the first buffer queued; the E2BIG one (no
  // data to move) may complete first.
  const int ok = g_rx.arg[0] == reinterpret_cast<void*>(0x11) ? 0 : 1;
  const int big2 = 1 - ok;
  EXPECT_GT(g_rx.when[ok], queued_at);
  EXPECT_EQ(g_rx.status[ok], ESUCCESS);
  EXPECT_EQ(g_rx.len[ok], static_cast<int>(kTotal));
  EXPECT_EQ(g_rx.node[ok], peer);
  EXPECT_EQ(g_rx.isrpc[ok], 0);
  EXPECT_EQ(g_rx.arg[ok], reinterpret_cast<void*>(0x11));
  for (std::uint32_t i = 0; i < kTotal; ++i)
    if (big[i] != pattern(1, i)) {
      ADD_FAILURE() << "byte " << i;
      break;
    }
  EXPECT_EQ(big[kTotal], 0x5a);  // nothing beyond the message
  EXPECT_EQ(g_rx.arg[big2], reinterpret_cast<void*>(0x22));
  EXPECT_EQ(g_rx.status[big2], E2BIG);
  EXPECT_EQ(g_rx.len[big2], static_cast<int>(kTotal));
  EXPECT_EQ(small[0], 0x5a);  // no data moved
  EXPECT_EQ(small[4095], 0x5a);
  ep_complete_receive(g_rx.rxd[ok]);
  // Requeue the E2BIG descriptor on the big buffer (cleared first).
  std::memset(big, 0, kTotal);
  EXPECT_EQ(ep_requeue_receive(g_rx.rxd[big2], on_rx, reinterpret_cast<void*>(0x33), eb, kTotal), ESUCCESS);
  if (nicsim_barrier() != 0) return 1;
  EXPECT_TRUE(wait_until([] { return g_rx.done == 3; }));
  EXPECT_EQ(g_rx.status[2], ESUCCESS);
  EXPECT_EQ(g_rx.arg[2], reinterpret_cast<void*>(0x33));
  EXPECT_EQ(g_rx.rxd[2], g_rx.rxd[big2]);  // the same descriptor, requeued
  for (std::uint32_t i = 0; i < kTotal; ++i)
    if (big[i] != pattern(1, i)) {
      ADD_FAILURE() << "requeued byte " << i;
      break;
    }
  ep_complete_receive(g_rx.rxd[2]);
  if (nicsim_barrier() != 0) return 1;
  ep_remove_large_rcvr(r);
  return 0;
}
const BuiltinProgram reg_frag("ep_test_large_fragments", fragments_prog, "test");

// ---- ep_waitfor_large_receive, polled completion -------------------------------------

int waitfor_prog(int, char**) {
  const bool sender = nicsim_workload_rank() == 0;
  constexpr std::uint32_t kLen = 70000;  // several Elan pages
  if (sender) {
    EP_XMTR* x = ep_alloc_large_xmtr(0);
    auto* src = static_cast<unsigned char*>(nicsim_alloc(kLen, 64));
    for (std::uint32_t i = 0; i < kLen; ++i) src[i] = pattern(2, i);
    ELAN3_DMA_HANDLE* h;
    EP_IOVEC iov{map(ep_xmtr_dma_state(x), src, kLen, ELAN_PERM_REMOTEREAD, &h), kLen};
    const int peer = peer_id();
    if (nicsim_barrier() != 0) return 1;
    // Polled: the handler runs only when polled, on this thread.
    EXPECT_EQ(ep_transmit_large(x, peer, kSvc, EP_NO_INTERRUPT, on_tx, reinterpret_cast<void*>(0), &iov, 1), ESUCCESS);
    nicsim_sleep_ns(2000000);  // long after the data landed
    EXPECT_EQ(g_tx.done, 0);   // no interrupt, not yet polled
    EXPECT_EQ(ep_poll_transmits(x), 1);
    EXPECT_EQ(g_tx.done, 1);
    EXPECT_EQ(g_tx.status[0], ESUCCESS);
    EXPECT_EQ(ep_poll_transmits(x), 0);
    // Polled, then callbacks enabled: the completion arrives by itself.
    EXPECT_EQ(ep_transmit_large(x, peer, kSvc, EP_NO_INTERRUPT, on_tx, reinterpret_cast<void*>(1), &iov, 1), ESUCCESS);
    EXPECT_EQ(ep_enable_txcallbacks(x), 0);  // not complete yet
    EXPECT_TRUE(wait_until([] { return g_tx.done == 2; }));
    EXPECT_EQ(ep_disable_txcallbacks(x), 0);
    // Polled, collected by the next transmit.
    EXPECT_EQ(ep_transmit_large(x, peer, kSvc, EP_NO_INTERRUPT, on_tx, reinterpret_cast<void*>(2), &iov, 1), ESUCCESS);
    nicsim_sleep_ns(2000000);
    EXPECT_EQ(g_tx.done, 2);
    EXPECT_EQ(ep_transmit_large(x, peer, kSvc, 0, on_tx, reinterpret_cast<void*>(3), &iov, 1), ESUCCESS);
    EXPECT_GE(g_tx.done, 3);  // the polled one, during the transmit call
    EXPECT_TRUE(wait_until([] { return g_tx.done == 4; }));
    for (int i = 0; i < 4; ++i) EXPECT_EQ(g_tx.status[i], ESUCCESS) << i;
    if (nicsim_barrier() != 0) return 1;
    // Freeing a transmitter with a transmit still active completes it
    // (ENETRESET: the receiver has no buffer queued any more).
    EXPECT_EQ(ep_transmit_large(x, peer, kSvc, EP_NO_INTERRUPT, on_tx, reinterpret_cast<void*>(4), &iov, 1), ESUCCESS);
    ep_free_large_xmtr(x);
    EXPECT_EQ(g_tx.done, 5);
    EXPECT_EQ(g_tx.status[4], ENETRESET);
    EXPECT_EQ(ep_transmit_large(x, peer, kSvc, 0, on_tx, reinterpret_cast<void*>(5), &iov, 1), EINVAL);
    if (nicsim_barrier() != 0) return 1;
    return 0;
  }
  EP_RCVR* r = ep_install_large_rcvr(0, kSvc, 8);
  auto* dst = static_cast<unsigned char*>(nicsim_alloc(kLen, 64));
  ELAN3_DMA_HANDLE* h;
  const E3_Addr e = map(ep_rcvr_dma_state(r), dst, kLen, ELAN_PERM_REMOTEWRITE, &h);
  EXPECT_EQ(ep_queue_receive(r, nullptr, reinterpret_cast<void*>(7), e, kLen, 0), ESUCCESS);
  peer_id();
  if (nicsim_barrier() != 0) return 1;
  for (int m = 0; m < 4; ++m) {
    EP_RXD* d = ep_waitfor_large_receive(r);  // blocks this thread
    if (!d) return 1;
    EXPECT_EQ(ep_rxd_status(d), ESUCCESS);
    EXPECT_EQ(ep_rxd_len(d), static_cast<int>(kLen));
    EXPECT_EQ(ep_rxd_arg(d), reinterpret_cast<void*>(7));
    bool same = true;
    for (std::uint32_t i = 0; i < kLen && same; ++i) same = dst[i] == pattern(2, i);
    EXPECT_TRUE(same) << "message " << m;
    std::memset(dst, 0, kLen);
    if (m < 3)
      EXPECT_EQ(ep_requeue_receive(d, nullptr, reinterpret_cast<void*>(7), e, kLen), ESUCCESS);
    else
      ep_complete_receive(d);
  }
  if (nicsim_barrier() != 0) return 1;
  if (nicsim_barrier() != 0) return 1;
  return 0;
}
const BuiltinProgram reg_wait("ep_test_large_waitfor_polled", waitfor_prog, "test");

// ---- RPC -----------------------------------------------------------------------------

struct RpcState {
  int server_done = 0;
  int reply_done = 0;
  EP_RXD* rxd = nullptr;
};
RpcState g_rpc;
void on_rpc(EP_RXD* rxd) {
  g_rpc.rxd = rxd;
  g_rpc.server_done++;
}
void on_reply_sent(EP_RXD* rxd) {
  EXPECT_EQ(ep_rxd_arg(rxd), reinterpret_cast<void*>(0x77));
  g_rpc.reply_done++;
}
EP_STATUSBLK g_blk_seen;
void on_rpc_tx(EP_TXD* txd, void* arg, int status) {
  EP_STATUSBLK* b = ep_txd_statusblk(txd);
  if (b) g_blk_seen = *b;
  on_tx(txd, arg, status);
}

int rpc_prog(int, char**) {
  const bool client = nicsim_workload_rank() == 0;
  constexpr std::uint32_t kReq = 3000, kReply = 20000;
  if (client) {
    EP_XMTR* x = ep_alloc_large_xmtr(0);
    auto* req = static_cast<unsigned char*>(nicsim_alloc(kReq, 64));
    auto* reply = static_cast<unsigned char*>(nicsim_alloc(kReply, 64));
    for (std::uint32_t i = 0; i < kReq; ++i) req[i] = pattern(3, i);
    std::memset(reply, 0, kReply);
    ELAN3_DMA_HANDLE *hq, *hr;
    EP_IOVEC iov{map(ep_xmtr_dma_state(x), req, kReq, ELAN_PERM_REMOTEREAD, &hq), kReq};
    // The reply area is mapped for the server to write, its address goes in the payload.
    const E3_Addr reply_addr = map(ep_xmtr_dma_state(x), reply, kReply, ELAN_PERM_REMOTEWRITE, &hr);
    EP_RPC_PAYLOAD payload{};
    payload.Data[0] = 0xfeedbeef;
    payload.Data[1] = reply_addr;
    payload.Data[15] = 42;
    const int peer = peer_id();
    if (nicsim_barrier() != 0) return 1;
    EXPECT_EQ(ep_transmit_rpc(x, peer, kSvc, 0, on_rpc_tx, reinterpret_cast<void*>(0), &payload, &iov, 1), ESUCCESS);
    // Payload only, no fragments (iovlen 0 is allowed for RPC).
    nicsim_sleep_ns(500000);
    EXPECT_EQ(g_tx.done, 0);  // not complete before the server's ep_complete_rpc
    EXPECT_TRUE(wait_until([] { return g_tx.done == 1; }));
    EXPECT_EQ(g_tx.status[0], ESUCCESS);
    EXPECT_EQ(g_blk_seen.Data[0], 0xc0ffeeu);
    EXPECT_EQ(g_blk_seen.Data[15], 99u);
    bool same = true;
    for (std::uint32_t i = 0; i < kReply && same; ++i) same = reply[i] == pattern(4, i);
    EXPECT_TRUE(same) << "datavec reply";
    if (nicsim_barrier() != 0) return 1;
    return 0;
  }
  EP_RCVR* r = ep_install_large_rcvr(0, kSvc, 4);
  auto* in = static_cast<unsigned char*>(nicsim_alloc(kReq, 64));
  auto* out = static_cast<unsigned char*>(nicsim_alloc(kReply, 64));
  for (std::uint32_t i = 0; i < kReply; ++i) out[i] = pattern(4, i);
  ELAN3_DMA_HANDLE *hi, *ho;
  const E3_Addr ein = map(ep_rcvr_dma_state(r), in, kReq, ELAN_PERM_REMOTEWRITE, &hi);
  const E3_Addr eout = map(ep_rcvr_dma_state(r), out, kReply, ELAN_PERM_REMOTEREAD, &ho);
  EXPECT_EQ(ep_queue_receive(r, on_rpc, nullptr, ein, kReq, 0), ESUCCESS);
  peer_id();
  if (nicsim_barrier() != 0) return 1;
  EXPECT_TRUE(wait_until([] { return g_rpc.server_done == 1; }));
  EP_RXD* d = g_rpc.rxd;
  EXPECT_EQ(ep_rxd_isrpc(d), 1);
  EXPECT_EQ(ep_rxd_len(d), static_cast<int>(kReq));
  EP_ENVELOPE* env = ep_rxd_envelope(d);
  EXPECT_EQ(env->Payload.RPC.Data[0], 0xfeedbeefu);
  EXPECT_EQ(env->Payload.RPC.Data[15], 42u);
  bool same = true;
  for (std::uint32_t i = 0; i < kReq && same; ++i) same = in[i] == pattern(3, i);
  EXPECT_TRUE(same) << "request data";
  nicsim_sleep_ns(400000);
  EP_STATUSBLK blk{};
  blk.Data[0] = 0xc0ffee;
  blk.Data[15] = 99;
  EP_DATAVEC dv{eout, env->Payload.RPC.Data[1], kReply};
  EXPECT_EQ(ep_complete_rpc(d, on_reply_sent, reinterpret_cast<void*>(0x77), &blk, &dv, 1), ESUCCESS);
  EXPECT_TRUE(wait_until([] { return g_rpc.reply_done == 1; }));
  ep_complete_receive(d);
  if (nicsim_barrier() != 0) return 1;
  return 0;
}
const BuiltinProgram reg_rpc("ep_test_rpc", rpc_prog, "test");

// ---- bad arguments ---------------------------------------------------------------------

void noop_tx(EP_TXD*, void*, int) {}

int bad_args_prog(int, char**) {
  const bool sender = nicsim_workload_rank() == 0;
  EP_RCVR* r = ep_install_large_rcvr(0, kSvc, 4);
  EXPECT_NE(r, nullptr);
  EXPECT_EQ(ep_install_large_rcvr(0, kSvc, 4), nullptr);                                // service in use
  EXPECT_EQ(ep_install_large_rcvr(0, EP_NUM_SERVICES, 4), nullptr);                     // unknown service
  EXPECT_EQ(ep_install_large_rcvr(1, kSvc + 1, 4), nullptr);                            // no multirail instance 1
  EXPECT_EQ(ep_install_small_rcvr(0, kSvc + 2, 99, 64, 4, nullptr, nullptr), nullptr);  // bad type
  EXPECT_EQ(ep_install_small_rcvr(0, kSvc + 2, EP_SVC_TYPE_SMALL, 4096, 4, nullptr, nullptr), nullptr);  // > packet
  EP_XMTR* x = ep_alloc_large_xmtr(0);
  EXPECT_NE(x, nullptr);
  auto* buf = static_cast<unsigned char*>(nicsim_alloc(8192, 64));
  ELAN3_DMA_HANDLE* h;
  EP_IOVEC iov[EP_MAXFRAG + 1];
  const E3_Addr e = map(ep_xmtr_dma_state(x), buf, 8192, ELAN_PERM_REMOTEREAD, &h);
  for (auto& v : iov) v = EP_IOVEC{e, 16};
  const int peer = peer_id();
  // iovlen > EP_MAXFRAG: "The iovector is too big".
  EXPECT_EQ(ep_transmit_large(x, peer, kSvc, 0, noop_tx, nullptr, iov, EP_MAXFRAG + 1), EINVAL);
  EXPECT_EQ(ep_transmit_rpc(x, peer, kSvc, 0, noop_tx, nullptr, nullptr, iov, EP_MAXFRAG + 1), EINVAL);
  EXPECT_EQ(ep_multicast_large(x, -1, -1, nullptr, kSvc, 0, noop_tx, nullptr, iov, EP_MAXFRAG + 1), EINVAL);
  EXPECT_EQ(ep_transmit_large(x, peer, kSvc, 0, noop_tx, nullptr, iov, -1), EINVAL);
  // Unknown service numbers.
  EXPECT_EQ(ep_transmit_large(x, peer, EP_NUM_SERVICES, 0, noop_tx, nullptr, iov, 1), EINVAL);
  EXPECT_EQ(ep_transmit_large(x, peer, -3, 0, noop_tx, nullptr, iov, 1), EINVAL);
  EXPECT_EQ(ep_transmit_large(x, peer, EP_SVC_KCOMMS, 0, noop_tx, nullptr, iov, 1), EINVAL);
  // Bad handles: a receiver where a transmitter belongs, a freed one, garbage.
  int junk[64] = {};
  EXPECT_EQ(ep_transmit_large(reinterpret_cast<EP_XMTR*>(r), peer, kSvc, 0, noop_tx, nullptr, iov, 1), EINVAL);
  EXPECT_EQ(ep_transmit_large(reinterpret_cast<EP_XMTR*>(junk), peer, kSvc, 0, noop_tx, nullptr, iov, 1), EINVAL);
  EXPECT_EQ(ep_transmit_large(nullptr, peer, kSvc, 0, noop_tx, nullptr, iov, 1), EINVAL);
  EXPECT_EQ(ep_queue_receive(reinterpret_cast<EP_RCVR*>(x), nullptr, nullptr, e, 16, 0), EINVAL);
  EXPECT_EQ(ep_requeue_receive(reinterpret_cast<EP_RXD*>(junk), nullptr, nullptr, e, 16), EINVAL);
  EXPECT_EQ(ep_complete_rpc(reinterpret_cast<EP_RXD*>(junk), nullptr, nullptr, nullptr, nullptr, 0), EINVAL);
  EXPECT_EQ(ep_rxd_envelope(reinterpret_cast<EP_RXD*>(junk)), nullptr);
  EXPECT_EQ(ep_txd_statusblk(reinterpret_cast<EP_TXD*>(junk)), nullptr);
  // No such node: no circuit can exist.
  EXPECT_EQ(ep_transmit_large(x, 7, kSvc, 0, noop_tx, nullptr, iov, 1), ECONNREFUSED);
  EXPECT_EQ(ep_transmit_large(x, -2, kSvc, 0, noop_tx, nullptr, iov, 1), ECONNREFUSED);
  // EP_NO_ALLOC | EP_NO_SLEEP: ENOMEM once the descriptor pool is used up
  // (the peer has no receive buffer queued, so nothing completes).
  int rc = ESUCCESS, sent = 0;
  if (sender) {
    while (rc == ESUCCESS && sent < 1000) {
      rc = ep_transmit_large(x, peer, kSvc, EP_NO_ALLOC | EP_NO_SLEEP | EP_NO_INTERRUPT, noop_tx, nullptr, iov, 1);
      sent += rc == ESUCCESS;
    }
    EXPECT_EQ(rc, ENOMEM);
    EXPECT_GT(sent, 0);
    EXPECT_LT(sent, 1000);
  }
  // Mapping calls: a bad state, a bad object type, NOWAIT with no space.
  ELAN3_DMA_REQUEST req{};
  req.Object.Type = 77;
  req.Perm = ELAN_PERM_REMOTEREAD;
  req.Waitfn = DDI_DMA_NOWAIT;
  ELAN3_DMA_HANDLE* m = nullptr;
  EXPECT_EQ(elan3_dma_map(ep_xmtr_dma_state(x), &req, &m), DDI_DMA_NOMAPPING);
  EXPECT_EQ(elan3_dma_map(reinterpret_cast<ELAN3_DMA_STATE*>(junk), &req, &m), DDI_DMA_NOMAPPING);
  EXPECT_EQ(elan3_dma_reserve(ep_xmtr_dma_state(x), 0x7fffffff, &req, &m), DDI_DMA_NOMAPPING);
  if (nicsim_barrier() != 0) return 1;
  if (!sender) {
    // Buffers at last: the held messages drain and the run can end.
    auto* rbuf = static_cast<unsigned char*>(nicsim_alloc(32 * 64, 64));
    ELAN3_DMA_HANDLE* rh;
    const E3_Addr re = map(ep_rcvr_dma_state(r), rbuf, 32 * 64, ELAN_PERM_REMOTEWRITE, &rh);
    for (int i = 0; i < 32; ++i) EXPECT_EQ(ep_queue_receive(r, nullptr, nullptr, re + 64 * i, 64, 0), ESUCCESS);
  }
  nicsim_sleep_ns(2000000);
  if (sender) {
    EXPECT_EQ(ep_poll_transmits(x), sent);
  }
  if (nicsim_barrier() != 0) return 1;
  return 0;
}
const BuiltinProgram reg_bad("ep_test_bad_args", bad_args_prog, "test");

}  // namespace

TEST(EpLarge, FragmentsWaitForABufferThenLandByteForByteE2bigAndRequeue) {
  run_text(pair_scenario("ep_test_large_fragments"));
}

TEST(EpLarge, WaitforLargeReceiveAndPolledVersusInterruptCompletion) {
  run_text(pair_scenario("ep_test_large_waitfor_polled"));
}

TEST(EpRpc, PayloadRequestDatavecReplyAndStatusBlock) { run_text(pair_scenario("ep_test_rpc")); }

TEST(EpErrors, BadArgumentsGetTheManualsCodes) {
  // Bad handles passed to void calls are reported as errors by name; this
  // program only uses calls that return a status.
  run_text(pair_scenario("ep_test_bad_args"));
}
