// Compile check of the public Elan Kernel Comms headers as C++20:
//   g++ -std=c++20 -Wall -Wextra -Werror -I ep/include -c
//
// Pins values and layouts with static_assert and every function's exact type
// as the manual's SYNOPSIS writes it (std::is_same on the function type, so a
// parameter that drifts stops the build).
#include <elan3/bitmap.h>
#include <elan3/elancomm.h>

#include <cstddef>
#include <cstdint>
#include <type_traits>

namespace {

static_assert(EP_MAXFRAG == 4);
static_assert(E3_BLK_SIZE == 64);
static_assert(std::is_same_v<E3_Addr, std::uint32_t>);
static_assert(std::is_same_v<bitmap_t, std::uint32_t>);
static_assert(std::is_same_v<E3_uint64, std::uint64_t>);
static_assert(std::is_same_v<E3_DMA_STATE, ELAN3_DMA_STATE>);
static_assert(ESUCCESS == 0);
static_assert(sizeof(EP_ENVELOPE) == 3 * E3_BLK_SIZE);
static_assert(offsetof(EP_ENVELOPE, Payload) == 2 * E3_BLK_SIZE);
static_assert(sizeof(EP_STATUSBLK) == EP_STATUSBLK_SIZE);
static_assert(sizeof(EP_DATAVEC) == 12);

template <typename... T>
constexpr bool all_standard_layout = (std::is_standard_layout_v<T> && ...);
static_assert(all_standard_layout<EP_IOVEC, EP_DATAVEC, EP_STATUSBLK, EP_RPC_PAYLOAD, EP_ENVELOPE, ELAN3_DMA_OBJ,
                                  ELAN3_DMA_REQUEST, struct buf>);

// Callback types, as the manual's typedefs.
static_assert(std::is_same_v<EP_RCV, void(void*, caddr_t)>);
static_assert(std::is_same_v<EP_TXH, void(struct ep_txd*, void*, int)>);
static_assert(std::is_same_v<EP_RXH, void(struct ep_rxd*)>);
static_assert(std::is_same_v<decltype(ELAN3_DMA_REQUEST::Waitfn), int (*)(caddr_t)>);
static_assert(std::is_same_v<decltype(DDI_DMA_SLEEP), int (*)(caddr_t)>);

#define SIG(fn, type) static_assert(std::is_same_v<decltype(fn), type>, #fn)
SIG(ep_install_small_rcvr, EP_RCVR*(int, int, int, int, int, EP_RCV*, void*));
SIG(ep_remove_small_rcvr, void(EP_RCVR*));
SIG(ep_alloc_small_xmtr, EP_XMTR*(int, int, int));
SIG(ep_free_small_xmtr, void(EP_XMTR*));
SIG(ep_transmit_small, int(EP_XMTR*, int, int, int, E3_uint64, EP_TXH*, void*, caddr_t, int));
SIG(ep_waitfor_small_message, int(EP_RCVR*, caddr_t*));
SIG(ep_consume_small_message, void(EP_RCVR*, caddr_t*));
SIG(ep_install_large_rcvr, EP_RCVR*(int, int, int));
SIG(ep_remove_large_rcvr, void(EP_RCVR*));
SIG(ep_alloc_large_xmtr, EP_XMTR*(int));
SIG(ep_free_large_xmtr, void(EP_XMTR*));
SIG(ep_transmit_large, int(EP_XMTR*, int, int, int, EP_TXH*, void*, EP_IOVEC*, int));
SIG(ep_multicast_large, int(EP_XMTR*, int, int, bitmap_t*, int, int, EP_TXH*, void*, EP_IOVEC*, int));
SIG(ep_transmit_rpc, int(EP_XMTR*, int, int, int, EP_TXH*, void*, EP_RPC_PAYLOAD*, EP_IOVEC*, int));
SIG(ep_poll_transmits, int(EP_XMTR*));
SIG(ep_queue_receive, int(EP_RCVR*, EP_RXH*, void*, E3_Addr, E3_uint32, int));
SIG(ep_requeue_receive, int(EP_RXD*, EP_RXH*, void*, E3_Addr, E3_uint32));
SIG(ep_waitfor_large_receive, EP_RXD*(EP_RCVR*));
SIG(ep_complete_rpc, int(EP_RXD*, EP_RXH*, void*, EP_STATUSBLK*, EP_DATAVEC*, int));
SIG(ep_complete_receive, void(EP_RXD*));
SIG(ep_enable_txcallbacks, int(EP_XMTR*));
SIG(ep_disable_txcallbacks, int(EP_XMTR*));
SIG(ep_rxd_arg, void*(EP_RXD*));
SIG(ep_rxd_status, int(EP_RXD*));
SIG(ep_rxd_len, int(EP_RXD*));
SIG(ep_rxd_node, int(EP_RXD*));
SIG(ep_rxd_isrpc, int(EP_RXD*));
SIG(ep_rxd_envelope, EP_ENVELOPE*(EP_RXD*));
SIG(ep_txd_statusblk, EP_STATUSBLK*(EP_TXD*));
SIG(ep_nodeid, int());
SIG(ep_numnodes, int());
SIG(ep_xmtr_dma_state, E3_DMA_STATE*(EP_XMTR*));
SIG(ep_rcvr_dma_state, E3_DMA_STATE*(EP_RCVR*));
SIG(elan3_dma_map, int(ELAN3_DMA_STATE*, ELAN3_DMA_REQUEST*, ELAN3_DMA_HANDLE**));
SIG(elan3_dma_unmap, void(ELAN3_DMA_STATE*, ELAN3_DMA_HANDLE*));
SIG(elan3_dma_handle_to_addr, E3_Addr(ELAN3_DMA_HANDLE*));
SIG(elan3_dma_addr_setup,
    int(ELAN3_DMA_STATE*, void*, caddr_t, u_int, u_int, u_int, E3_Addr, int (*)(caddr_t), caddr_t, ELAN3_DMA_HANDLE**));
SIG(elan3_dma_buf_setup,
    int(ELAN3_DMA_STATE*, struct buf*, u_int, u_int, E3_Addr, int (*)(caddr_t), caddr_t, ELAN3_DMA_HANDLE**));
SIG(elan3_dma_reserve, int(ELAN3_DMA_STATE*, int, ELAN3_DMA_REQUEST*, ELAN3_DMA_HANDLE**));
SIG(elan3_dma_release, void(ELAN3_DMA_STATE*, ELAN3_DMA_HANDLE*));
SIG(elan3_dvma_kaddr_load, void(ELAN3_DMA_STATE*, ELAN3_DMA_HANDLE*, caddr_t, u_int, u_int, E3_Addr*));
SIG(elan3_dvma_unload, void(ELAN3_DMA_STATE*, ELAN3_DMA_HANDLE*, u_int, u_int));
SIG(bt_freebit, int(bitmap_t*, int));
SIG(bt_lowbit, int(bitmap_t*, int));
SIG(bt_nextbit, int(bitmap_t*, int, int));
SIG(bt_copy, void(bitmap_t*, bitmap_t*, int));
SIG(bt_zero, void(bitmap_t*, int));
SIG(bt_fill, void(bitmap_t*, int));
SIG(bt_cmp, int(bitmap_t*, bitmap_t*, int));
SIG(bt_intersect, void(bitmap_t*, bitmap_t*, int));
SIG(bt_remove, void(bitmap_t*, bitmap_t*, int));
SIG(bt_add, void(bitmap_t*, bitmap_t*, int));
SIG(bt_spans, int(bitmap_t*, bitmap_t*, int));
SIG(bt_hton, void(bitmap_t*, bitmap_t*, int));
SIG(bt_ntoh, void(bitmap_t*, bitmap_t*, int));
SIG(bt_up, void(bitmap_t*, bitmap_t*, bitmap_t*, int));
SIG(bt_down, void(bitmap_t*, bitmap_t*, bitmap_t*, int));
SIG(bt_nbits, int(bitmap_t*, int));
#undef SIG

}  // namespace

// The chapter 4 driver's set-up, as C++ would write it.
int headers_cxx_touch();
int headers_cxx_touch() {
  ELAN3_DMA_REQUEST dmareq{};
  dmareq.Waitfn = DDI_DMA_SLEEP;
  dmareq.ElanAddr = static_cast<E3_Addr>(0);
  dmareq.Attr = PTE_LOAD_BIG_ENDIAN | PTE_LOAD_STREAMABLE;
  dmareq.Perm = ELAN_PERM_REMOTEREAD;
  bitmap_t map[BT_BITOUL(64)] = {};
  BT_SET(map, 63);
  EP_IOVEC iov[EP_MAXFRAG] = {};
  iov[0].Len = 64;
  return BT_TEST(map, 63) + static_cast<int>(dmareq.Perm + iov[0].Len) + (dmareq.Waitfn == DDI_DMA_NOWAIT);
}

// The chapter 4 driver's calls and names compile as C++ too: both forms of
// ep_requeue_receive (3's five arguments, 4.5's six), bcopy, DBG, the MIB-II
// bumps, u_long / u_char, msgsize against an int.
#include <elan3/eip.h>

int headers_cxx_chapter4(EP_RXD* rxd, EP_RXH* h, EIP_DEV* dev, mblk_t* mp);
int headers_cxx_chapter4(EP_RXD* rxd, EP_RXH* h, EIP_DEV* dev, mblk_t* mp) {
  EIP_HEADER header;
  auto* headerp = reinterpret_cast<EIP_HEADER*>(mp->b_rptr + EIP_HEADER_PAD);
  if ((reinterpret_cast<u_long>(headerp) & 1) != 0) {
    bcopy(reinterpret_cast<caddr_t>(headerp), reinterpret_cast<caddr_t>(&header), sizeof(header));
    headerp = &header;
  }
  DBG(DBG_EIP, eip_display_packet("eip_rxhandler", headerp, mp));
  BUMP_OutNUcast(dev, headerp);
  BUMP_InNUcast(dev, headerp);
  const u_char* c = mp->b_rptr;
  return ep_requeue_receive(rxd, h, dev, E3_Addr{0}, 64) + ep_requeue_receive(rxd, h, dev, E3_Addr{0}, 64, 0) +
         (msgsize(mp) > dev->dev_msgsize) + c[0];
}
