/*
 * ib_send_bw -- RC send bandwidth, as perftest's ib_send_bw.
 *
 * For each size the server posts receives (--rx-depth deep, reposting as
 * they complete) and the client sends --iters messages keeping --tx-depth
 * send WRs outstanding, signalling every --cq-mod-th WR (and the last).
 * Bandwidth is size * iters over the time from the client's first post to
 * its last completion.  The first and last message of each size carry a
 * pattern of (size, iteration, sender) that the receiver checks in full.
 * With --bidirectional both sides send and receive at once.
 *
 * Results: the client reports bw_<size> in MB/s (10^6 B/s); with
 * --bidirectional each side reports its own bw_<size> and the client also
 * bw_<size>_total, the sum of both directions.
 */
#include "perftest.h"

#include <string.h>

#define RECV_BATCH 32u

typedef struct rx_state {
	uint32_t size, iters;
	uint32_t posted;                /* receives posted for this size */
	uint32_t done;                  /* receives completed */
	uint32_t sender_tag;            /* pattern bit of the sending rank */
	pt_wc_list_t wcl;               /* receive completions */
} rx_state_t;

static uint32_t sender_tag(uint32_t rank) { return rank ? 0x80000000u : 0; }

/* Posts up to `count` more receives, one post_recv call per batch. */
static int post_receives(pt_ctx_t *c, rx_state_t *rx, uint32_t count)
{
	ib_recv_wr_t wrs[RECV_BATCH], *bad = NULL;
	ib_local_ds_t ds[RECV_BATCH];
	while (count && rx->posted < rx->iters) {
		uint32_t n = 0;
		ib_api_status_t st;
		while (n < RECV_BATCH && n < count && rx->posted + n < rx->iters) {
			const uint32_t j = rx->posted + n;
			ds[n].vaddr = pt_bw_local(c, PT_RX, j, rx->iters);
			ds[n].length = rx->size;
			ds[n].lkey = c->lkey;
			wrs[n].wr_id = j;
			wrs[n].num_ds = 1;
			wrs[n].ds_array = &ds[n];
			wrs[n].p_next = NULL;
			if (n)
				wrs[n - 1].p_next = &wrs[n];
			n++;
		}
		st = c->ci->post_recv(c->qp, &wrs[0], &bad);
		if (st != IB_SUCCESS)
			return pt_fail(c, "post_recv: %s", ib_get_err_str(st));
		rx->posted += n;
		count -= n;
	}
	return 0;
}

/* Takes receive completions, checks them, posts receives in their place. */
static int rx_step(pt_ctx_t *c, rx_state_t *rx)
{
	const ib_wc_t *wcs = rx->wcl.wcs;
	int n = pt_poll_list(c, &c->rcq, &rx->wcl), i;
	if (n <= 0)
		return n;
	for (i = 0; i < n; i++) {
		const uint32_t j = rx->done;
		if (wcs[i].wr_id != j)
			return -pt_fail(c, "receive %llu completed, expected %u", (unsigned long long)wcs[i].wr_id, j);
		if (wcs[i].wc_type != IB_WC_RECV || wcs[i].length != rx->size)
			return -pt_fail(c, "receive %u: type %d, %u bytes (expected %u)", j, (int)wcs[i].wc_type,
					wcs[i].length, rx->size);
		if (pt_bw_slot(j, rx->iters)) {
			long bad = pt_check(pt_bw_local(c, PT_RX, j, rx->iters), rx->size, rx->size,
					    j | rx->sender_tag);
			if (bad >= 0)
				return -pt_fail(c, "size %u message %u: byte %ld differs", rx->size, j, bad);
		}
		rx->done++;
	}
	if (post_receives(c, rx, (uint32_t)n))
		return -1;
	return n;
}

static int run_size(pt_ctx_t *c, uint32_t size, double *mbps)
{
	const pt_opts_t *o = &c->opt;
	const int sender = c->rank == 0 || o->bidir;
	const int receiver = c->rank == 1 || o->bidir;
	pt_stream_t st;
	rx_state_t rx;

	memset(&rx, 0, sizeof rx);
	rx.size = size;
	rx.iters = o->iters;
	rx.sender_tag = sender_tag(1 - c->rank);
	pt_wc_list_init(&rx.wcl);
	if (receiver) {
		memset(pt_bw_local(c, PT_RX, 0, o->iters), 0, size);
		memset(pt_bw_local(c, PT_RX, o->iters - 1, o->iters), 0, size);
		if (post_receives(c, &rx, o->rx_depth))
			return 1;
	}
	if (sender) {
		pt_fill(pt_bw_local(c, PT_TX, 0, o->iters), size, size, 0 | sender_tag(c->rank));
		pt_fill(pt_bw_local(c, PT_TX, o->iters - 1, o->iters), size, size,
			(o->iters - 1) | sender_tag(c->rank));
	}
	if (pt_start(c))   /* the receives are posted on both sides */
		return 1;
	pt_stream_init(c, &st, WR_SEND, size);
	pt_touch(c);
	for (;;) {
		pt_cq_t *cqs[2];
		int ncq = 0, progress = 0, n;
		if (sender && !st.done) {
			if ((n = pt_stream_step(c, &st)) < 0)
				return 1;
			progress += n;
			if (!st.done)
				cqs[ncq++] = &c->scq;
		}
		if (receiver && rx.done < rx.iters) {
			if ((n = rx_step(c, &rx)) < 0)
				return 1;
			progress += n;
			if (rx.done < rx.iters)
				cqs[ncq++] = &c->rcq;
		}
		if (ncq == 0)
			break;
		if (progress)
			pt_touch(c);
		else if (pt_idle(c, cqs, ncq))
			return 1;
	}
	*mbps = sender ? pt_mbps((uint64_t)size * o->iters, st.t_last - st.t_first) : 0.0;
	return 0;
}

/* The program's defaults and its arguments: shared by the run and the
 * argument check. */
static int options(pt_opts_t *o, int argc, char **argv)
{
	pt_defaults(o, "ib_send_bw",
		    PT_ARG_SIZES | PT_ARG_TX_DEPTH | PT_ARG_RX_DEPTH | PT_ARG_INLINE | PT_ARG_CQ_MOD | PT_ARG_BIDIR);
	return pt_parse(o, argc, argv);
}

static int check_options(int argc, char **argv)
{
	pt_opts_t o;
	return options(&o, argc, argv);
}

static int send_bw_main(int argc, char **argv)
{
	pt_opts_t o;
	pt_ctx_t c;
	if (options(&o, argc, argv))
		return 1;
	if (pt_setup(&c, &o, pt_bw_buf_len(&o), o.tx_depth, o.rx_depth, o.cq_mod))
		return pt_finish(&c, 1);
	return pt_finish(&c, pt_run_bw_sizes(&c, run_size));
}

__attribute__((constructor)) static void reg(void)
{
	nicsim_register_program_checked(
		"ib_send_bw", send_bw_main, check_options,
		"RC send bandwidth (perftest ib_send_bw); rank 0 client, rank 1 server. "
		"--sizes=2,8,64,512,4096,65536 | --min=N --max=N (powers of two), --iters=1000 (messages "
		"per size), --tx-depth=64 (outstanding sends), --rx-depth=256 (posted receives), "
		"--cq-mod=16 (signal every N sends), --inline=0, --bidirectional, --poll=busy|event, "
		"--timeout-ms=100, --port-wait-ms=100. Results: bw_<size> in MB/s (client; each side with --bidirectional), "
		"bw_<size>_total (client, --bidirectional)");
}
