/*
 * ep_mcast_bw: rank 0 multicasts a stream of large messages to every other
 * node of the workload (ep_multicast_large over -1..-1, EP_NOT_MYSELF; the
 * arity-3 forwarding tree), --window multicasts in flight. Each receiver
 * requeues its buffers and checks the last message byte by byte. Result
 * (rank 0): mcast_bw_<size> = bytes per receiver / time, in MB/s, and
 * messages = deliveries in all (multicasts x receivers).
 */
#include "ep_perf.h"

#include <stdio.h>
#include <string.h>

#define NBUF 8

typedef struct mc_state {
	ep_perf_tx_t tx;
	uint32_t received, bad, size, total, pattern;
	unsigned char *bufs[NBUF];
	E3_Addr addrs[NBUF];
} mc_state_t;

typedef struct mc_slot {
	mc_state_t *st;
	int index;
} mc_slot_t;

static void on_rx(EP_RXD *rxd)
{
	mc_slot_t *slot = (mc_slot_t *)ep_rxd_arg(rxd);
	mc_state_t *st = slot->st;
	if (ep_rxd_status(rxd) != ESUCCESS || (uint32_t)ep_rxd_len(rxd) != st->size)
		st->bad++;
	if (++st->received == st->total) {
		uint32_t i;
		for (i = 0; i < st->size; i++)
			if (st->bufs[slot->index][i] != ep_perf_byte(st->pattern, i)) {
				st->bad++;
				break;
			}
	}
	ep_requeue_receive(rxd, on_rx, slot, st->addrs[slot->index], st->size);
}

typedef struct mcast_send {
	EP_XMTR *xmtr;
	EP_IOVEC iov;
} mcast_send_t;

/* Every node of the machine but this one (-1..-1 is the whole range). */
static int send_multicast(void *ctx, ep_perf_tx_t *tx)
{
	mcast_send_t *m = (mcast_send_t *)ctx;
	return ep_multicast_large(m->xmtr, -1, -1, NULL, EP_PERF_SERVICE, EP_NOT_MYSELF, ep_perf_on_tx, tx,
				  &m->iov, 1);
}

static const ep_perf_opts_t defaults = {.sizes = {65536}, .nsizes = 1, .iters = 64, .window = 4, .min_size = 1, .max_size = EP_PERF_MAX_LARGE};

/* The options, shared by the run and the argument check. */
static int options(ep_perf_opts_t *o, int argc, char **argv)
{
	if (ep_perf_options(o, &defaults, argc, argv) != 0)
		return -1;
	if (o->nsizes != 1)
		return nicsim_fail("ep_mcast_bw takes one message size"), -1;
	return 0;
}

static int check_options(int argc, char **argv)
{
	ep_perf_opts_t o;
	return options(&o, argc, argv);
}

static int mcast_bw_main(int argc, char **argv)
{
	ep_perf_opts_t o;
	mc_state_t st;
	mc_slot_t slots[NBUF];
	int i, root = nicsim_workload_rank() == 0;
	uint32_t nrecv = nicsim_workload_size() - 1;

	memset(&st, 0, sizeof st);
	if (options(&o, argc, argv) != 0)
		return 1;
	st.size = o.sizes[0];
	st.total = o.iters;
	st.pattern = 7;
	if (root) {
		EP_XMTR *xmtr = ep_alloc_large_xmtr(0);
		ELAN3_DMA_HANDLE *h;
		unsigned char *buf = nicsim_alloc(st.size, 64);
		E3_Addr addr;
		mcast_send_t ctx;
		uint32_t j;
		double bw;
		char name[32];
		if (!xmtr || !buf)
			return nicsim_fail("ep_mcast_bw: no large transmitter, or no node memory for the send buffer"), 1;
		addr = ep_perf_map(ep_xmtr_dma_state(xmtr), buf, st.size, ELAN_PERM_REMOTEREAD, &h);
		if (!addr)
			return nicsim_fail("ep_mcast_bw: the send buffer cannot be mapped into Elan space"), 1;
		for (j = 0; j < st.size; j++)
			buf[j] = ep_perf_byte(st.pattern, j);
		ctx.xmtr = xmtr;
		ctx.iov.Base = addr;
		ctx.iov.Len = st.size;
		if (nicsim_barrier() != 0)
			return 1;
		bw = ep_perf_stream(&o, &st.tx, send_multicast, &ctx, st.size, 10000000000000ull, 1000, "multicasts");
		if (bw < 0)
			return 1;
		snprintf(name, sizeof name, "mcast_bw_%u", st.size);
		nicsim_result(name, bw, "MB/s");
		nicsim_result("messages", (double)o.iters * nrecv, "messages");
		return nicsim_barrier() == 0 ? 0 : 1;
	}
	{
		EP_RCVR *rcvr = ep_install_large_rcvr(0, EP_PERF_SERVICE, NBUF);
		if (!rcvr)
			return nicsim_fail("ep_mcast_bw: cannot install the large receiver"), 1;
		for (i = 0; i < NBUF; i++) {
			ELAN3_DMA_HANDLE *h;
			st.bufs[i] = nicsim_alloc(st.size, 64);
			if (!st.bufs[i])
				return nicsim_fail("ep_mcast_bw: no node memory for the receive buffers"), 1;
			st.addrs[i] = ep_perf_map(ep_rcvr_dma_state(rcvr), st.bufs[i], st.size, ELAN_PERM_REMOTEWRITE, &h);
			slots[i].st = &st;
			slots[i].index = i;
			if (!st.addrs[i] || ep_queue_receive(rcvr, on_rx, &slots[i], st.addrs[i], st.size, 0) != ESUCCESS)
				return nicsim_fail("ep_mcast_bw: a receive buffer cannot be mapped or queued"), 1;
		}
		if (nicsim_barrier() != 0 || nicsim_barrier() != 0)
			return 1;
		if (st.received != o.iters || st.bad) {
			nicsim_fail("receiver: missing or corrupt multicasts");
			return 1;
		}
	}
	return 0;
}

__attribute__((constructor)) static void reg(void)
{
	nicsim_register_program_checked(
		"ep_mcast_bw", mcast_bw_main, check_options,
		"Elan Kernel Comms multicast stream: rank 0 multicasts to all other nodes (-1..-1, EP_NOT_MYSELF). "
		"--sizes=65536 --iters=64 --window=4. Results (rank 0): mcast_bw_<size> in MB/s per receiver, messages");
}
