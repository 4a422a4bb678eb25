/*
 * ep_large_bw: a stream of large messages from rank 0 to rank 1 over Elan
 * Kernel Comms (ep_transmit_large into buffers queued with
 * ep_queue_receive). The sender keeps --window transmits in flight; the
 * receiver's handler requeues each buffer. Bandwidth = bytes / (time of the
 * last sender completion - time of the first transmit), in MB/s (10^6 B/s).
 * The receiver checks the last message of each size byte by byte.
 */
#include "ep_perf.h"

#include <stdio.h>
#include <string.h>

#define NBUF 16

typedef struct bw_state {
	/* sender */
	ep_perf_tx_t tx;
	/* receiver */
	uint32_t received, bad;
	EP_RCVR *rcvr;
	unsigned char *bufs[NBUF];
	E3_Addr addrs[NBUF];
	uint32_t size, bufsize;
	uint32_t total, pattern;
	int checked_last;
} bw_state_t;

typedef struct rx_slot {
	bw_state_t *st;
	int index;
} rx_slot_t;

static void on_rx(EP_RXD *rxd)
{
	rx_slot_t *slot = (rx_slot_t *)ep_rxd_arg(rxd);
	bw_state_t *st = slot->st;
	if (ep_rxd_status(rxd) != ESUCCESS || (uint32_t)ep_rxd_len(rxd) != st->size)
		st->bad++;
	st->received++;
	if (st->received == st->total) {
		uint32_t i;
		const unsigned char *p = st->bufs[slot->index];
		for (i = 0; i < st->size; i++)
			if (p[i] != ep_perf_byte(st->pattern, i)) {
				st->bad++;
				break;
			}
		st->checked_last = 1;
	}
	ep_requeue_receive(rxd, on_rx, slot, st->addrs[slot->index], st->bufsize);
}

typedef struct large_send {
	EP_XMTR *xmtr;
	int peer;
	EP_IOVEC iov;
} large_send_t;

static int send_large(void *ctx, ep_perf_tx_t *tx)
{
	large_send_t *l = (large_send_t *)ctx;
	return ep_transmit_large(l->xmtr, l->peer, EP_PERF_SERVICE, 0, ep_perf_on_tx, tx, &l->iov, 1);
}

static const ep_perf_opts_t defaults = {.sizes = {65536}, .nsizes = 1, .iters = 256, .window = 8, .min_size = 1, .max_size = EP_PERF_MAX_LARGE};

static int check_options(int argc, char **argv)
{
	ep_perf_opts_t o;
	return ep_perf_options(&o, &defaults, argc, argv);
}

static int large_bw_main(int argc, char **argv)
{
	ep_perf_opts_t o;
	bw_state_t st;
	rx_slot_t slots[NBUF];
	int peer, s, i, client = nicsim_workload_rank() == 0;
	uint32_t maxsize = 0;

	memset(&st, 0, sizeof st);
	if (ep_perf_options(&o, &defaults, argc, argv) != 0)
		return 1;
	for (s = 0; s < o.nsizes; s++)
		if (o.sizes[s] > maxsize)
			maxsize = o.sizes[s];
	peer = ep_perf_peer();
	if (peer < 0)
		return 1;
	if (client) {
		EP_XMTR *xmtr = ep_alloc_large_xmtr(0);
		ELAN3_DMA_HANDLE *h;
		unsigned char *buf = nicsim_alloc(maxsize, 64);
		E3_Addr addr;
		if (!xmtr || !buf)
			return nicsim_fail("ep_large_bw: no large transmitter, or no node memory for the send buffer"), 1;
		addr = ep_perf_map(ep_xmtr_dma_state(xmtr), buf, maxsize, ELAN_PERM_REMOTEREAD, &h);
		if (!addr)
			return nicsim_fail("ep_large_bw: the send buffer cannot be mapped into Elan space"), 1;
		for (s = 0; s < o.nsizes; s++) {
			uint32_t size = o.sizes[s], j;
			large_send_t ctx;
			double bw;
			char name[32];
			for (j = 0; j < size; j++)
				buf[j] = ep_perf_byte(o.iters - 1 + 1000u * (uint32_t)s, j);
			ctx.xmtr = xmtr;
			ctx.peer = peer;
			ctx.iov.Base = addr;
			ctx.iov.Len = size;
			if (nicsim_barrier() != 0)
				return 1;
			bw = ep_perf_stream(&o, &st.tx, send_large, &ctx, size, 1000000000000ull, 500, "transmits");
			if (bw < 0)
				return 1;
			snprintf(name, sizeof name, "bw_%u", size);
			nicsim_result(name, bw, "MB/s");
			if (nicsim_barrier() != 0)
				return 1;
		}
		nicsim_result("messages", (double)o.iters * o.nsizes, "messages");
		return 0;
	}
	st.rcvr = ep_install_large_rcvr(0, EP_PERF_SERVICE, NBUF);
	if (!st.rcvr)
		return 1;
	for (i = 0; i < NBUF; i++) {
		ELAN3_DMA_HANDLE *h;
		st.bufs[i] = nicsim_alloc(maxsize, 64);
		if (!st.bufs[i])
			return nicsim_fail("ep_large_bw: no node memory for the receive buffers (16 of the largest size)"), 1;
		st.addrs[i] = ep_perf_map(ep_rcvr_dma_state(st.rcvr), st.bufs[i], maxsize, ELAN_PERM_REMOTEWRITE, &h);
		slots[i].st = &st;
		slots[i].index = i;
		if (!st.addrs[i])
			return nicsim_fail("ep_large_bw: a receive buffer cannot be mapped into Elan space"), 1;
	}
	for (s = 0; s < o.nsizes; s++) {
		st.size = o.sizes[s];
		st.received = 0;
		st.checked_last = 0;
		st.total = o.iters;
		st.pattern = o.iters - 1 + 1000u * (uint32_t)s;
		st.bufsize = maxsize;
		for (i = 0; i < NBUF && s == 0; i++)
			if (ep_queue_receive(st.rcvr, on_rx, &slots[i], st.addrs[i], maxsize, 0) != ESUCCESS)
				return 1;
		if (nicsim_barrier() != 0)
			return 1;
		if (nicsim_barrier() != 0)
			return 1;
		if (st.received != o.iters || st.bad || !st.checked_last) {
			nicsim_fail("receiver: missing or corrupt messages");
			return 1;
		}
	}
	return 0;
}

__attribute__((constructor)) static void reg(void)
{
	nicsim_register_program_checked(
		"ep_large_bw", large_bw_main, check_options,
		"Elan Kernel Comms large-message stream bandwidth; rank 0 sends, rank 1 receives. "
		"--sizes=65536 --iters=256 --window=8. Results (sender): bw_<size> in MB/s");
}
