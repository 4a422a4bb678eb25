// The buffer mapping functions (manual 3.2) used as the manual's IP driver
// uses them: Elan address space reserved once, kernel buffers loaded into it
// and unloaded per message (elan3_dma_reserve, elan3_dvma_kaddr_load/unload,
// elan3_dma_release), and whole objects mapped (elan3_dma_map with a
// virtual address range or a struct buf, elan3_dma_addr_setup,
// elan3_dma_buf_setup, elan3_dma_handle_to_addr, elan3_dma_unmap). Data is
// checked on the far side; an unloaded page is a fault, not a stale read.
#include "ep/tests/ep_test_util.h"

using namespace nicsim;
using namespace nicsim::ep::testing;

namespace {

constexpr int kSvc = 80;
constexpr std::uint32_t kLen = 12000;  // spans two 8 KiB Elan pages

int g_tx_done = 0;
int g_tx_status[8] = {};
void on_tx(EP_TXD*, void* arg, int status) {
  g_tx_status[reinterpret_cast<std::intptr_t>(arg)] = status;
  g_tx_done++;
}
int g_rx_done = 0;
int g_rx_status[8] = {};
void on_rx(EP_RXD* rxd) {
  g_rx_status[g_rx_done++] = ep_rxd_status(rxd);
  ep_complete_receive(rxd);
}

int dma_prog(int, char**) {
  const bool sender = nicsim_workload_rank() == 0;
  if (sender) {
    EP_XMTR* x = ep_alloc_large_xmtr(0);
    ELAN3_DMA_STATE* sp = ep_xmtr_dma_state(x);
    EXPECT_NE(sp, nullptr);
    auto* a = static_cast<unsigned char*>(nicsim_alloc(kLen, 8));
    auto* b = static_cast<unsigned char*>(nicsim_alloc(kLen, 8));
    auto* c = static_cast<unsigned char*>(nicsim_alloc(kLen, 8));
    for (std::uint32_t i = 0; i < kLen; ++i) {
      a[i] = pattern(30, i);
      b[i] = pattern(31, i);
      c[i] = pattern(32, i);
    }
    // Reserve 4 pages (the manual's btopr(len) + 2 for any alignment).
    ELAN3_DMA_REQUEST req{};
    req.Waitfn = DDI_DMA_SLEEP;
    req.ElanAddr = 0;
    req.Attr = PTE_LOAD_LITTLE_ENDIAN;
    req.Perm = ELAN_PERM_REMOTEREAD;
    ELAN3_DMA_HANDLE* res = nullptr;
    EXPECT_EQ(elan3_dma_reserve(sp, 4, &req, &res), DDI_SUCCESS);
    E3_Addr ea = 0;
    elan3_dvma_kaddr_load(sp, res, reinterpret_cast<caddr_t>(a + 5), kLen - 5, 0, &ea);
    EXPECT_NE(ea, 0u);
    EXPECT_GE(ea, elan3_dma_handle_to_addr(res));
    // A struct buf through elan3_dma_buf_setup, and a range through elan3_dma_map.
    struct buf bp {};
    bp.b_bcount = kLen;
    bp.b_un.b_addr = reinterpret_cast<caddr_t>(b);
    ELAN3_DMA_HANDLE *hb = nullptr, *hc = nullptr;
    EXPECT_EQ(
        elan3_dma_buf_setup(sp, &bp, ELAN_PERM_REMOTEREAD, PTE_LOAD_LITTLE_ENDIAN, 0, DDI_DMA_SLEEP, nullptr, &hb),
        DDI_DMA_MAPPED);
    ELAN3_DMA_REQUEST mreq{};
    mreq.Object.Type = ELAN3_OTYPE_VADDR;
    mreq.Object.Data.Vaddr.As = nullptr;
    mreq.Object.Data.Vaddr.Addr = reinterpret_cast<caddr_t>(c);
    mreq.Object.Data.Vaddr.Len = kLen;
    mreq.Perm = ELAN_PERM_REMOTEREAD;
    mreq.Attr = PTE_LOAD_LITTLE_ENDIAN | PTE_LOAD_STREAMABLE;
    mreq.Waitfn = DDI_DMA_NOWAIT;
    EXPECT_EQ(elan3_dma_map(sp, &mreq, &hc), DDI_DMA_MAPPED);
    // A user address space is not supported: no mapping.
    mreq.Object.Data.Vaddr.As = &mreq;
    ELAN3_DMA_HANDLE* hu = nullptr;
    EXPECT_EQ(elan3_dma_map(sp, &mreq, &hu), DDI_DMA_NOMAPPING);
    const int peer = peer_id();
    if (nicsim_barrier() != 0) return 1;
    EP_IOVEC iov[3] = {{ea, kLen - 5}, {elan3_dma_handle_to_addr(hb), kLen}, {elan3_dma_handle_to_addr(hc), kLen}};
    for (int m = 0; m < 3; ++m)
      EXPECT_EQ(ep_transmit_large(x, peer, kSvc, 0, on_tx, reinterpret_cast<void*>(std::intptr_t{m}), &iov[m], 1),
                ESUCCESS);
    EXPECT_TRUE(wait_until([] { return g_tx_done == 3; }));
    for (int m = 0; m < 3; ++m) EXPECT_EQ(g_tx_status[m], ESUCCESS) << m;
    if (nicsim_barrier() != 0) return 1;
    // Unloaded: the Elan address no longer reaches host memory. The
    // receiver's pull faults at this node and the message fails.
    elan3_dvma_unload(sp, res, 0, 4);
    EXPECT_EQ(ep_transmit_large(x, peer, kSvc, 0, on_tx, reinterpret_cast<void*>(3), &iov[0], 1), ESUCCESS);
    EXPECT_TRUE(wait_until([] { return g_tx_done == 4; }));
    EXPECT_EQ(g_tx_status[3], ENETRESET);
    elan3_dma_release(sp, res);
    elan3_dma_unmap(sp, hb);
    elan3_dma_unmap(sp, hc);
    if (nicsim_barrier() != 0) return 1;
    return 0;
  }
  EP_RCVR* r = ep_install_large_rcvr(0, kSvc, 8);
  ELAN3_DMA_STATE* sp = ep_rcvr_dma_state(r);
  // Receive buffers as the IP driver keeps them: one reservation, a buffer
  // loaded per slot, unloaded and replaced after each message.
  ELAN3_DMA_REQUEST req{};
  req.Waitfn = DDI_DMA_SLEEP;
  req.Attr = PTE_LOAD_LITTLE_ENDIAN;
  req.Perm = ELAN_PERM_REMOTEWRITE;
  ELAN3_DMA_HANDLE* res = nullptr;
  EXPECT_EQ(elan3_dma_reserve(sp, 3, &req, &res), DDI_SUCCESS);
  unsigned char* bufs[4];
  for (auto& p : bufs) {
    p = static_cast<unsigned char*>(nicsim_alloc(kLen, 64));
    std::memset(p, 0, kLen);
  }
  E3_Addr e = 0;
  elan3_dvma_kaddr_load(sp, res, reinterpret_cast<caddr_t>(bufs[0]), kLen, 0, &e);
  EXPECT_NE(e, 0u);
  EXPECT_EQ(ep_queue_receive(r, nullptr, nullptr, e, kLen, 0), ESUCCESS);
  peer_id();
  if (nicsim_barrier() != 0) return 1;
  for (int m = 0; m < 3; ++m) {
    EP_RXD* d = ep_waitfor_large_receive(r);
    if (!d) return 1;
    EXPECT_EQ(ep_rxd_status(d), ESUCCESS);
    const std::uint32_t len = m == 0 ? kLen - 5 : kLen;
    EXPECT_EQ(ep_rxd_len(d), static_cast<int>(len));
    bool same = true;
    for (std::uint32_t i = 0; i < len && same; ++i)
      same = bufs[m][i] == (m == 0 ? pattern(30, i + 5) : pattern(30 + m, i));
    EXPECT_TRUE(same) << "message " << m;
    // Swap in a fresh buffer at the same Elan address.
    elan3_dvma_unload(sp, res, 0, 3);
    E3_Addr e2 = 0;
    elan3_dvma_kaddr_load(sp, res, reinterpret_cast<caddr_t>(bufs[m + 1]), kLen, 0, &e2);
    EXPECT_EQ(e2, e);
    EXPECT_EQ(ep_requeue_receive(d, m == 2 ? on_rx : nullptr, nullptr, e2, kLen), ESUCCESS);
  }
  if (nicsim_barrier() != 0) return 1;
  EXPECT_TRUE(wait_until([] { return g_rx_done == 1; }));
  EXPECT_EQ(g_rx_status[0], ENETRESET);
  bool untouched = true;
  for (std::uint32_t i = 0; i < kLen && untouched; ++i) untouched = bufs[3][i] == 0;
  EXPECT_TRUE(untouched);
  if (nicsim_barrier() != 0) return 1;
  return 0;
}
const BuiltinProgram reg("ep_test_dma_mapping", dma_prog, "test");

}  // namespace

TEST(EpDma, ReserveLoadUnloadMapBufSetupAsTheIpDriverDoes) { run_text(pair_scenario("ep_test_dma_mapping")); }
