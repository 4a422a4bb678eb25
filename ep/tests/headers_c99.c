/*
 * Compile check of the public Elan Kernel Comms headers as C99:
 *   gcc -std=c99 -pedantic -Wall -Wextra -Werror -I ep/include -c
 *
 * Pins the values the public record fixes, the layouts the wire depends on,
 * and every function's signature as the manual's SYNOPSIS writes it: each
 * function is assigned to a pointer of the exact type, so a prototype that
 * drifts from the manual stops compiling.
 */
#include <elan3/bitmap.h>
#include <elan3/elancomm.h>

#include <stddef.h>

/* C99 has no _Static_assert: a negative array size fails the build. */
#define CHECK(name, cond) typedef char check_##name[(cond) ? 1 : -1]

/* ---- public-record values ---- */
CHECK(maxfrag, EP_MAXFRAG == 4);
CHECK(blk, E3_BLK_SIZE == 64 && E3_BLOCK_SIZE == E3_BLK_SIZE);
CHECK(addr32, sizeof(E3_Addr) == 4 && (E3_Addr)-1 > 0);
CHECK(word32, sizeof(bitmap_t) == 4 && (bitmap_t)-1 > 0);
CHECK(sizes, sizeof(E3_uint32) == 4 && sizeof(E3_uint64) == 8 &&
	sizeof(E3_uint16) == 2 && sizeof(E3_uint8) == 1);
CHECK(page, ELAN3_PAGE_SIZE == 8192);
CHECK(success, ESUCCESS == 0);
CHECK(ddi, DDI_SUCCESS == 0 && DDI_DMA_MAPPED == 0 &&
	DDI_DMA_NORESOURCE == -1 && DDI_DMA_NOMAPPING == -2 &&
	DDI_DMA_NORESOURCES == DDI_DMA_NORESOURCE);
CHECK(errnos, ENOMEM != 0 && EINVAL != 0 && E2BIG != 0 && ENETRESET != 0 &&
	ECONNREFUSED != 0 && ETIMEDOUT != 0);

/* ---- chosen values: distinct flags, services in range ---- */
CHECK(flags, (EP_NO_SLEEP & EP_NO_ALLOC) == 0 &&
	((EP_NO_SLEEP | EP_NO_ALLOC) & EP_NO_INTERRUPT) == 0 &&
	((EP_NO_SLEEP | EP_NO_ALLOC | EP_NO_INTERRUPT) & EP_NOT_MYSELF) == 0);
CHECK(svc, EP_NUM_SERVICES == 256 && EP_SVC_LARGE_EIP > 0 &&
	EP_SVC_LARGE_EIP < EP_NUM_SERVICES && EP_SVC_KCOMMS == 0);
CHECK(svc_types, EP_SVC_TYPE_SMALL != EP_SVC_TYPE_SPECIAL);
CHECK(perm_order, ELAN_PERM_NOREMOTE < ELAN_PERM_REMOTEREAD &&
	ELAN_PERM_REMOTEREAD < ELAN_PERM_REMOTEWRITE &&
	ELAN_PERM_REMOTEWRITE < ELAN_PERM_REMOTEALL);
CHECK(pte, PTE_LOAD_LITTLE_ENDIAN != PTE_LOAD_BIG_ENDIAN &&
	(PTE_LOAD_BIG_ENDIAN & PTE_LOAD_STREAMABLE) == 0);
CHECK(otype, ELAN3_OTYPE_VADDR != ELAN3_OTYPE_BUF);
CHECK(order, EP_TYPE_PARTIAL_ORDER != EP_TYPE_STRICT_ORDER);

/* ---- layouts ---- */
CHECK(iovec, sizeof(EP_IOVEC) == 8 && offsetof(EP_IOVEC, Len) == 4);
CHECK(datavec, sizeof(EP_DATAVEC) == 12 && offsetof(EP_DATAVEC, Dest) == 4);
CHECK(statusblk, sizeof(EP_STATUSBLK) == EP_STATUSBLK_SIZE);
CHECK(payload, sizeof(EP_RPC_PAYLOAD) == EP_RPC_PAYLOAD_SIZE);
CHECK(envelope, sizeof(EP_ENVELOPE) == 3 * E3_BLK_SIZE &&
	sizeof(EP_ENVELOPE) % E3_BLK_SIZE == 0);
CHECK(env_frags, offsetof(EP_ENVELOPE, Frags) == 32);
CHECK(env_payload, offsetof(EP_ENVELOPE, Payload) == 2 * E3_BLK_SIZE);
CHECK(bitoul, BT_BITOUL(1) == 1 && BT_BITOUL(32) == 1 && BT_BITOUL(33) == 2);

/* ---- every function, with the manual's signature ---- */
static EP_RCVR *(*const p_install_small_rcvr)(int, int, int, int, int,
	EP_RCV *, void *) = ep_install_small_rcvr;
static void (*const p_remove_small_rcvr)(EP_RCVR *) = ep_remove_small_rcvr;
static EP_XMTR *(*const p_alloc_small_xmtr)(int, int, int) = ep_alloc_small_xmtr;
static void (*const p_free_small_xmtr)(EP_XMTR *) = ep_free_small_xmtr;
static int (*const p_transmit_small)(EP_XMTR *, int, int, int, E3_uint64,
	EP_TXH *, void *, caddr_t, int) = ep_transmit_small;
static int (*const p_waitfor_small_message)(EP_RCVR *, caddr_t *) =
	ep_waitfor_small_message;
static void (*const p_consume_small_message)(EP_RCVR *, caddr_t *) =
	ep_consume_small_message;
static EP_RCVR *(*const p_install_large_rcvr)(int, int, int) =
	ep_install_large_rcvr;
static void (*const p_remove_large_rcvr)(EP_RCVR *) = ep_remove_large_rcvr;
static EP_XMTR *(*const p_alloc_large_xmtr)(int) = ep_alloc_large_xmtr;
static void (*const p_free_large_xmtr)(EP_XMTR *) = ep_free_large_xmtr;
static int (*const p_transmit_large)(EP_XMTR *, int, int, int, EP_TXH *,
	void *, EP_IOVEC *, int) = ep_transmit_large;
static int (*const p_multicast_large)(EP_XMTR *, int, int, bitmap_t *, int,
	int, EP_TXH *, void *, EP_IOVEC *, int) = ep_multicast_large;
static int (*const p_transmit_rpc)(EP_XMTR *, int, int, int, EP_TXH *,
	void *, EP_RPC_PAYLOAD *, EP_IOVEC *, int) = ep_transmit_rpc;
static int (*const p_poll_transmits)(EP_XMTR *) = ep_poll_transmits;
static int (*const p_queue_receive)(EP_RCVR *, EP_RXH *, void *, E3_Addr,
	E3_uint32, int) = ep_queue_receive;
static int (*const p_requeue_receive)(EP_RXD *, EP_RXH *, void *, E3_Addr,
	E3_uint32) = ep_requeue_receive;
static EP_RXD *(*const p_waitfor_large_receive)(EP_RCVR *) =
	ep_waitfor_large_receive;
static int (*const p_complete_rpc)(EP_RXD *, EP_RXH *, void *, EP_STATUSBLK *,
	EP_DATAVEC *, int) = ep_complete_rpc;
static void (*const p_complete_receive)(EP_RXD *) = ep_complete_receive;
static int (*const p_enable_txcallbacks)(EP_XMTR *) = ep_enable_txcallbacks;
static int (*const p_disable_txcallbacks)(EP_XMTR *) = ep_disable_txcallbacks;

static void *(*const p_rxd_arg)(struct ep_rxd *) = ep_rxd_arg;
static int (*const p_rxd_status)(struct ep_rxd *) = ep_rxd_status;
static int (*const p_rxd_len)(struct ep_rxd *) = ep_rxd_len;
static int (*const p_rxd_node)(struct ep_rxd *) = ep_rxd_node;
static int (*const p_rxd_isrpc)(struct ep_rxd *) = ep_rxd_isrpc;
static EP_ENVELOPE *(*const p_rxd_envelope)(struct ep_rxd *) = ep_rxd_envelope;
static EP_STATUSBLK *(*const p_txd_statusblk)(struct ep_txd *) =
	ep_txd_statusblk;
static int (*const p_nodeid)(void) = ep_nodeid;
static int (*const p_numnodes)(void) = ep_numnodes;

static E3_DMA_STATE *(*const p_xmtr_dma_state)(EP_XMTR *) = ep_xmtr_dma_state;
static ELAN3_DMA_STATE *(*const p_rcvr_dma_state)(EP_RCVR *) =
	ep_rcvr_dma_state;
static int (*const p_dma_map)(ELAN3_DMA_STATE *, ELAN3_DMA_REQUEST *,
	ELAN3_DMA_HANDLE **) = elan3_dma_map;
static void (*const p_dma_unmap)(ELAN3_DMA_STATE *, ELAN3_DMA_HANDLE *) =
	elan3_dma_unmap;
static E3_Addr (*const p_handle_to_addr)(ELAN3_DMA_HANDLE *) =
	elan3_dma_handle_to_addr;
static int (*const p_addr_setup)(ELAN3_DMA_STATE *, void *, caddr_t, u_int,
	u_int, u_int, E3_Addr, int (*)(caddr_t), caddr_t,
	ELAN3_DMA_HANDLE **) = elan3_dma_addr_setup;
static int (*const p_buf_setup)(ELAN3_DMA_STATE *, struct buf *, u_int, u_int,
	E3_Addr, int (*)(caddr_t), caddr_t, ELAN3_DMA_HANDLE **) =
	elan3_dma_buf_setup;
static int (*const p_reserve)(ELAN3_DMA_STATE *, int, ELAN3_DMA_REQUEST *,
	ELAN3_DMA_HANDLE **) = elan3_dma_reserve;
static void (*const p_release)(ELAN3_DMA_STATE *, ELAN3_DMA_HANDLE *) =
	elan3_dma_release;
static void (*const p_kaddr_load)(ELAN3_DMA_STATE *, ELAN3_DMA_HANDLE *,
	caddr_t, u_int, u_int, E3_Addr *) = elan3_dvma_kaddr_load;
static void (*const p_unload)(ELAN3_DMA_STATE *, ELAN3_DMA_HANDLE *, u_int,
	u_int) = elan3_dvma_unload;

static int (*const p_freebit)(bitmap_t *, int) = bt_freebit;
static int (*const p_lowbit)(bitmap_t *, int) = bt_lowbit;
static int (*const p_nextbit)(bitmap_t *, int, int) = bt_nextbit;
static void (*const p_copy)(bitmap_t *, bitmap_t *, int) = bt_copy;
static void (*const p_zero)(bitmap_t *, int) = bt_zero;
static void (*const p_fill)(bitmap_t *, int) = bt_fill;
static int (*const p_cmp)(bitmap_t *, bitmap_t *, int) = bt_cmp;
static void (*const p_intersect)(bitmap_t *, bitmap_t *, int) = bt_intersect;
static void (*const p_remove)(bitmap_t *, bitmap_t *, int) = bt_remove;
static void (*const p_add)(bitmap_t *, bitmap_t *, int) = bt_add;
static int (*const p_spans)(bitmap_t *, bitmap_t *, int) = bt_spans;
static void (*const p_hton)(bitmap_t *, bitmap_t *, int) = bt_hton;
static void (*const p_ntoh)(bitmap_t *, bitmap_t *, int) = bt_ntoh;
static void (*const p_up)(bitmap_t *, bitmap_t *, bitmap_t *, int) = bt_up;
static void (*const p_down)(bitmap_t *, bitmap_t *, bitmap_t *, int) = bt_down;
static int (*const p_nbits)(bitmap_t *, int) = bt_nbits;

/* ---- the consumer code of manual chapter 4, in miniature ---- */
static void on_tx(EP_TXD *txd, void *arg, int status)
{
	EP_STATUSBLK *blk = ep_txd_statusblk(txd);
	(void)arg; (void)status; (void)blk;
}
static void on_rx(EP_RXD *rxd)
{
	EP_ENVELOPE *env = ep_rxd_envelope(rxd);
	E3_uint32 first = env->Payload.RPC.Data[0];
	(void)first;
	if (ep_rxd_status(rxd) != ESUCCESS)
		ep_complete_receive(rxd);
}
static void on_small(void *arg, caddr_t msg) { (void)arg; (void)msg; }

int headers_c99_touch(void);
int headers_c99_touch(void)
{
	ELAN3_DMA_REQUEST dmareq;
	bitmap_t map[BT_BITOUL(64)] = {0, 0};
	EP_RCV *rcv = on_small;
	EP_TXH *txh = on_tx;
	EP_RXH *rxh = on_rx;
	struct buf b;
	int n = 0;

	dmareq.Object.Type = ELAN3_OTYPE_VADDR;
	dmareq.Object.Data.Vaddr.As = NULL;
	dmareq.Object.Data.Vaddr.Addr = NULL;
	dmareq.Object.Data.Vaddr.Len = 0;
	dmareq.Waitfn = DDI_DMA_SLEEP;
	dmareq.Waitarg = NULL;
	dmareq.ElanAddr = (E3_Addr)0;
	dmareq.Attr = PTE_LOAD_BIG_ENDIAN | PTE_LOAD_STREAMABLE;
	dmareq.Perm = ELAN_PERM_REMOTEREAD;
	dmareq.Waitfn = DDI_DMA_NOWAIT;
	b.b_flags = 0;
	b.b_bcount = 0;
	b.b_un.b_addr = NULL;
	BT_SET(map, 3);
	BT_CLEAR(map, 3);
	n += BT_TEST(map, 40);
	n += (p_install_small_rcvr != NULL) + (p_remove_small_rcvr != NULL) +
		(p_alloc_small_xmtr != NULL) + (p_free_small_xmtr != NULL) +
		(p_transmit_small != NULL) + (p_waitfor_small_message != NULL) +
		(p_consume_small_message != NULL) + (p_install_large_rcvr != NULL) +
		(p_remove_large_rcvr != NULL) + (p_alloc_large_xmtr != NULL) +
		(p_free_large_xmtr != NULL) + (p_transmit_large != NULL) +
		(p_multicast_large != NULL) + (p_transmit_rpc != NULL) +
		(p_poll_transmits != NULL) + (p_queue_receive != NULL) +
		(p_requeue_receive != NULL) + (p_waitfor_large_receive != NULL) +
		(p_complete_rpc != NULL) + (p_complete_receive != NULL) +
		(p_enable_txcallbacks != NULL) + (p_disable_txcallbacks != NULL);
	n += (p_rxd_arg != NULL) + (p_rxd_status != NULL) + (p_rxd_len != NULL) +
		(p_rxd_node != NULL) + (p_rxd_isrpc != NULL) +
		(p_rxd_envelope != NULL) + (p_txd_statusblk != NULL) +
		(p_nodeid != NULL) + (p_numnodes != NULL);
	n += (p_xmtr_dma_state != NULL) + (p_rcvr_dma_state != NULL) +
		(p_dma_map != NULL) + (p_dma_unmap != NULL) +
		(p_handle_to_addr != NULL) + (p_addr_setup != NULL) +
		(p_buf_setup != NULL) + (p_reserve != NULL) + (p_release != NULL) +
		(p_kaddr_load != NULL) + (p_unload != NULL);
	n += (p_freebit != NULL) + (p_lowbit != NULL) + (p_nextbit != NULL) +
		(p_copy != NULL) + (p_zero != NULL) + (p_fill != NULL) +
		(p_cmp != NULL) + (p_intersect != NULL) + (p_remove != NULL) +
		(p_add != NULL) + (p_spans != NULL) + (p_hton != NULL) +
		(p_ntoh != NULL) + (p_up != NULL) + (p_down != NULL) +
		(p_nbits != NULL);
	n += (rcv != NULL) + (txh != NULL) + (rxh != NULL);
	n += (int)dmareq.Perm + (int)b.b_bcount;
	return n;
}

/* ---- the manual's chapter 4 code, as written ---- */
#include <elan3/eip.h>

/* ep_requeue_receive in both forms: the SYNOPSIS's five arguments (3) and
 * the example driver's six (4.5). */
int headers_c99_requeue(EP_RXD *rxd, EP_RXH *h, void *arg);
int headers_c99_requeue(EP_RXD *rxd, EP_RXH *h, void *arg)
{
	return ep_requeue_receive(rxd, h, arg, (E3_Addr)0, 64) +
		ep_requeue_receive(rxd, h, arg, (E3_Addr)0, 64, 0);
}

/* The names and types 4.2-4.5 use where chapter 3 has others, and msgsize
 * compared with an int as eip_start does (no sign-compare warning). */
int headers_c99_chapter4(EIP_DEV *dev, mblk_t *mp);
int headers_c99_chapter4(EIP_DEV *dev, mblk_t *mp)
{
	EIP_HEADER header;
	EIP_HEADER *headerp = (EIP_HEADER *)(mp->b_rptr + EIP_HEADER_PAD);
	ELAN3_DMA_REQUEST dmareq;
	u_char *c = (u_char *)mp->b_rptr;

	if (((u_long)headerp & 1) != 0) {
		bcopy((caddr_t)headerp, (caddr_t)&header, sizeof(header));
		headerp = &header;
	}
	DBG(DBG_EIP, eip_display_packet("eip_start", headerp, mp));
	BUMP_OutNUcast(dev, headerp);
	BUMP_InNUcast(dev, headerp);
	dmareq.Waitfn = DDI_DMA_SLEEP;
	dmareq.Attr = PTE_LOAD_BIG_ENDIAN | PTE_LOAD_STREAMABLE;
	dmareq.Perm = ELAN_PERM_REMOTEREAD;
	dmareq.Perm = ELAN_PERM_REMOTEWRITE;
	return (msgsize(mp) > dev->dev_msgsize) + (int)dmareq.Perm + c[0] + (int)btopr(dev->dev_msgsize);
}
