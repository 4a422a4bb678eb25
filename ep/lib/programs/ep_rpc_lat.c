/*
 * ep_rpc_lat: remote procedure call round trips between two nodes over Elan
 * Kernel Comms. Rank 0 calls: ep_transmit_rpc with the request in the
 * envelope's payload (sequence number, where the reply goes, its size) and
 * polls ep_poll_transmits until the call completes. Rank 1 serves: it takes
 * each request from ep_waitfor_large_receive and answers with
 * ep_complete_rpc, moving the reply by a datavec into the caller's buffer
 * and returning a status block that names the request. The latency is the
 * whole round trip, from the call to its completion, averaged over --iters
 * after 10 warm-up calls (the first one sets up the virtual circuit). Every
 * reply is checked byte by byte, and its status block against the request.
 */
#include "ep_perf.h"

#include <stdio.h>
#include <string.h>

#define WARMUP 10
#define NREQ 4 /* request envelopes the server keeps queued */

typedef struct call_state {
	ep_perf_tx_t tx;
	uint32_t status_seq; /* the status block's first word at completion */
} call_state_t;

static void on_call_done(EP_TXD *txd, void *arg, int status)
{
	call_state_t *c = (call_state_t *)arg;
	EP_STATUSBLK *blk = ep_txd_statusblk(txd);
	c->status_seq = blk ? blk->Data[0] : 0xffffffffu;
	ep_perf_on_tx(txd, &c->tx, status);
}

static int reply_ok(const unsigned char *p, uint32_t seq, uint32_t len)
{
	uint32_t i;
	for (i = 0; i < len; i++)
		if (p[i] != ep_perf_byte(seq, i))
			return 0;
	return 1;
}

static int call_once(EP_XMTR *x, int peer, call_state_t *c, E3_Addr reply_addr, unsigned char *reply,
		     uint32_t seq, uint32_t len)
{
	EP_RPC_PAYLOAD payload;
	uint32_t done = c->tx.completed + c->tx.failed;
	memset(&payload, 0, sizeof payload);
	memset(reply, 0, len);
	payload.Data[0] = seq;
	payload.Data[1] = reply_addr;
	payload.Data[2] = len;
	if (ep_transmit_rpc(x, peer, EP_PERF_SERVICE, EP_NO_INTERRUPT, on_call_done, c, &payload, NULL, 0) !=
	    ESUCCESS) {
		nicsim_fail("ep_transmit_rpc failed");
		return -1;
	}
	while (c->tx.completed + c->tx.failed == done)
		ep_poll_transmits(x);
	if (c->tx.failed || c->status_seq != seq || !reply_ok(reply, seq, len)) {
		nicsim_fail("RPC failed, or its reply or status block is wrong");
		return -1;
	}
	return 0;
}

static int client(const ep_perf_opts_t *o, int peer, uint32_t maxsize)
{
	call_state_t c;
	EP_XMTR *x = ep_alloc_large_xmtr(0);
	unsigned char *reply = nicsim_alloc(maxsize, 64);
	uint64_t *samples = ep_perf_samples(o->iters);
	ELAN3_DMA_HANDLE *h;
	E3_Addr reply_addr;
	int s;
	memset(&c, 0, sizeof c);
	if (!x || !reply || !samples)
		return 1;
	reply_addr = ep_perf_map(ep_xmtr_dma_state(x), reply, maxsize, ELAN_PERM_REMOTEWRITE, &h);
	if (!reply_addr || nicsim_barrier() != 0)
		return 1;
	for (s = 0; s < o->nsizes; s++) {
		uint32_t it, len = o->sizes[s];
		uint64_t t0 = 0, start;
		char name[32];
		for (it = 0; it < WARMUP + o->iters; it++) {
			start = nicsim_now_ps();
			if (it == WARMUP)
				t0 = start;
			if (call_once(x, peer, &c, reply_addr, reply, it + 1000u * (uint32_t)s, len) != 0)
				return 1;
			if (it >= WARMUP)
				samples[it - WARMUP] = nicsim_now_ps() - start;
		}
		snprintf(name, sizeof name, "rpc_%u", len);
		nicsim_result(name, (double)(nicsim_now_ps() - t0) / o->iters / 1e6, "us");
		nicsim_result_tail(name, samples, o->iters, 1e6, "us");
	}
	nicsim_result("calls", (double)(WARMUP + o->iters) * o->nsizes, "calls");
	return nicsim_barrier() == 0 ? 0 : 1;
}

typedef struct server_state {
	EP_RCVR *rcvr;
	int served_ok;
} server_state_t;

/* A queued receive: its buffer, for the requeue after the reply. */
typedef struct req_slot {
	server_state_t *st;
	E3_Addr addr;
} req_slot_t;

/* The reply went: the request's receive goes back to the queue. */
static void on_reply_sent(EP_RXD *rxd)
{
	req_slot_t *slot = (req_slot_t *)ep_rxd_arg(rxd);
	if (ep_rxd_status(rxd) != ESUCCESS)
		slot->st->served_ok = 0;
	ep_requeue_receive(rxd, NULL, slot, slot->addr, EP_RPC_PAYLOAD_SIZE);
}

static int serve_one(server_state_t *st, unsigned char *out, E3_Addr out_addr)
{
	EP_RXD *rxd = ep_waitfor_large_receive(st->rcvr);
	EP_ENVELOPE *env;
	EP_STATUSBLK blk;
	EP_DATAVEC dv;
	uint32_t seq, len, i;
	if (!rxd || ep_rxd_status(rxd) != ESUCCESS || !ep_rxd_isrpc(rxd) || !(env = ep_rxd_envelope(rxd))) {
		nicsim_fail("server: no RPC request");
		return -1;
	}
	seq = env->Payload.RPC.Data[0];
	len = env->Payload.RPC.Data[2];
	for (i = 0; i < len; i++)
		out[i] = ep_perf_byte(seq, i);
	memset(&blk, 0, sizeof blk);
	blk.Data[0] = seq;
	dv.Source = out_addr;
	dv.Dest = env->Payload.RPC.Data[1];
	dv.Len = len;
	if (ep_complete_rpc(rxd, on_reply_sent, ep_rxd_arg(rxd), &blk, &dv, len ? 1 : 0) != ESUCCESS) {
		nicsim_fail("server: ep_complete_rpc failed");
		return -1;
	}
	return 0;
}

static int server(const ep_perf_opts_t *o, uint32_t maxsize)
{
	server_state_t st;
	req_slot_t slots[NREQ];
	unsigned char *out = nicsim_alloc(maxsize, 64);
	ELAN3_DMA_HANDLE *h;
	E3_Addr out_addr;
	uint32_t n, total = (WARMUP + o->iters) * (uint32_t)o->nsizes;
	int i;
	memset(&st, 0, sizeof st);
	st.served_ok = 1;
	st.rcvr = ep_install_large_rcvr(0, EP_PERF_SERVICE, NREQ);
	if (!st.rcvr || !out)
		return 1;
	out_addr = ep_perf_map(ep_rcvr_dma_state(st.rcvr), out, maxsize, ELAN_PERM_REMOTEREAD, &h);
	for (i = 0; i < NREQ; i++) {
		unsigned char *req = nicsim_alloc(EP_RPC_PAYLOAD_SIZE, 64);
		slots[i].st = &st;
		slots[i].addr = req ? ep_perf_map(ep_rcvr_dma_state(st.rcvr), req, EP_RPC_PAYLOAD_SIZE,
						  ELAN_PERM_REMOTEWRITE, &h)
				    : 0;
		if (!slots[i].addr ||
		    ep_queue_receive(st.rcvr, NULL, &slots[i], slots[i].addr, EP_RPC_PAYLOAD_SIZE, 0) != ESUCCESS)
			return 1;
	}
	if (!out_addr || nicsim_barrier() != 0)
		return 1;
	for (n = 0; n < total; n++)
		if (serve_one(&st, out, out_addr) != 0)
			return 1;
	if (nicsim_barrier() != 0)
		return 1;
	if (!st.served_ok) {
		nicsim_fail("server: a reply failed");
		return 1;
	}
	return 0;
}

static const ep_perf_opts_t defaults = {.sizes = {0, 64, 1024, 8192}, .nsizes = 4, .iters = 200, .min_size = 0, .max_size = 1u << 20};

static int check_options(int argc, char **argv)
{
	ep_perf_opts_t o;
	return ep_perf_options(&o, &defaults, argc, argv);
}

static int rpc_lat_main(int argc, char **argv)
{
	ep_perf_opts_t o;
	uint32_t maxsize = 1;
	int s, peer;
	if (ep_perf_options(&o, &defaults, argc, argv) != 0)
		return 1;
	for (s = 0; s < o.nsizes; s++)
		if (o.sizes[s] > maxsize)
			maxsize = o.sizes[s];
	peer = ep_perf_peer();
	if (peer < 0)
		return 1;
	return nicsim_workload_rank() == 0 ? client(&o, peer, maxsize) : server(&o, maxsize);
}

__attribute__((constructor)) static void reg(void)
{
	nicsim_register_program_checked(
		"ep_rpc_lat", rpc_lat_main, check_options,
		"Elan Kernel Comms RPC round trips; rank 0 calls (ep_transmit_rpc), rank 1 serves (ep_complete_rpc with a "
		"datavec reply). --sizes=0,64,1024,8192 (reply bytes) --iters=200. Results (caller): rpc_<size> (mean), "
		"rpc_<size>_p99, rpc_<size>_max in us (whole round trip)");
}
