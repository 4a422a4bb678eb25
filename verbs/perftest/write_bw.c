/*
 * ib_write_bw -- RC RDMA write bandwidth, as perftest's ib_write_bw.
 *
 * For each size the client RDMA-writes --iters messages into the server's
 * buffer, keeping --tx-depth WRs outstanding and signalling every
 * --cq-mod-th (and the last).  Bandwidth is size * iters over the time
 * from the client's first post to its last completion.  The first and
 * last message of each size carry a pattern of (size, iteration, writer)
 * that the server checks after the run.  With --bidirectional both sides
 * write at once.
 *
 * Results: the client reports bw_<size> in MB/s (10^6 B/s); with
 * --bidirectional each side reports its own bw_<size> and the client also
 * bw_<size>_total, the sum of both directions.
 */
#include "perftest.h"

#include <string.h>

static uint32_t writer_tag(uint32_t rank) { return rank ? 0x80000000u : 0; }

static int check_area(pt_ctx_t *c, uint32_t size, uint32_t j)
{
	const uint32_t iters = c->opt.iters;
	long bad = pt_check(pt_bw_local(c, PT_RX, j, iters), size, size, j | writer_tag(1 - c->rank));
	if (bad >= 0)
		return pt_fail(c, "size %u message %u: byte %ld differs", size, j, bad);
	return 0;
}

static int run_size(pt_ctx_t *c, uint32_t size, double *mbps)
{
	const pt_opts_t *o = &c->opt;
	const int writer = c->rank == 0 || o->bidir;
	const int target = c->rank == 1 || o->bidir;
	pt_stream_t st;

	*mbps = 0;
	if (target) {
		memset(pt_bw_local(c, PT_RX, 0, o->iters), 0, size);
		memset(pt_bw_local(c, PT_RX, o->iters - 1, o->iters), 0, size);
	}
	if (writer) {
		pt_fill(pt_bw_local(c, PT_TX, 0, o->iters), size, size, 0 | writer_tag(c->rank));
		pt_fill(pt_bw_local(c, PT_TX, o->iters - 1, o->iters), size, size,
			(o->iters - 1) | writer_tag(c->rank));
	}
	if (pt_start(c))   /* both target areas are clear */
		return 1;
	if (writer) {
		pt_stream_init(c, &st, WR_RDMA_WRITE, size);
		pt_touch(c);
		while (!st.done) {
			pt_cq_t *cq = &c->scq;
			int n = pt_stream_step(c, &st);
			if (n < 0)
				return 1;
			if (n)
				pt_touch(c);
			else if (!st.done && pt_idle(c, &cq, 1))
				return 1;
		}
		*mbps = pt_mbps((uint64_t)size * o->iters, st.t_last - st.t_first);
	}
	/* Every write was acknowledged, so it is in the target's memory once
	 * both writers are past this point. */
	if (pt_barrier(c))
		return 1;
	if (target && (check_area(c, size, 0) || check_area(c, size, o->iters - 1)))
		return 1;
	return 0;
}

/* The program's defaults and its arguments: shared by the run and the
 * argument check. */
static int options(pt_opts_t *o, int argc, char **argv)
{
	pt_defaults(o, "ib_write_bw", PT_ARG_SIZES | PT_ARG_TX_DEPTH | PT_ARG_INLINE | PT_ARG_CQ_MOD | PT_ARG_BIDIR);
	return pt_parse(o, argc, argv);
}

static int check_options(int argc, char **argv)
{
	pt_opts_t o;
	return options(&o, argc, argv);
}

static int write_bw_main(int argc, char **argv)
{
	pt_opts_t o;
	pt_ctx_t c;
	if (options(&o, argc, argv))
		return 1;
	if (pt_setup(&c, &o, pt_bw_buf_len(&o), o.tx_depth, 1, o.cq_mod))
		return pt_finish(&c, 1);
	return pt_finish(&c, pt_run_bw_sizes(&c, run_size));
}

__attribute__((constructor)) static void reg(void)
{
	nicsim_register_program_checked(
		"ib_write_bw", write_bw_main, check_options,
		"RC RDMA write bandwidth (perftest ib_write_bw); rank 0 client, rank 1 server. "
		"--sizes=2,8,64,512,4096,65536 | --min=N --max=N (powers of two), --iters=1000 (messages "
		"per size), --tx-depth=64 (outstanding writes), --cq-mod=16 (signal every N writes), "
		"--inline=0, --bidirectional, --poll=busy|event, --timeout-ms=100, --port-wait-ms=100. Results: bw_<size> in "
		"MB/s (client; each side with --bidirectional), bw_<size>_total (client, --bidirectional)");
}
