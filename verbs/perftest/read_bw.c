/*
 * ib_read_bw -- RC RDMA read bandwidth, as perftest's ib_read_bw.
 *
 * For each size the client RDMA-reads --iters messages from the server's
 * buffer, keeping --tx-depth WRs posted (the HCA itself keeps at most
 * init_depth = 4 reads in flight, as the QP allows) and signalling every
 * --cq-mod-th (and the last).  Bandwidth is size * iters over the time
 * from the client's first post to its last completion.  The first and
 * last read of each size fetch areas the server filled with a pattern of
 * (size, iteration), which the client checks.
 *
 * Results (client): bw_<size> in MB/s (10^6 B/s).
 */
#include "perftest.h"

#include <string.h>

#define SOURCE_TAG 0x80000000u

static int check_area(pt_ctx_t *c, uint32_t size, uint32_t j)
{
	long bad = pt_check(pt_bw_local(c, PT_RX, j, c->opt.iters), size, size, j | SOURCE_TAG);
	if (bad >= 0)
		return pt_fail(c, "size %u read %u: byte %ld differs", size, j, bad);
	return 0;
}

static int run_size(pt_ctx_t *c, uint32_t size, double *mbps)
{
	const pt_opts_t *o = &c->opt;
	pt_stream_t st;

	*mbps = 0;
	if (c->rank == 1) {
		pt_fill(pt_bw_local(c, PT_TX, 0, o->iters), size, size, 0 | SOURCE_TAG);
		pt_fill(pt_bw_local(c, PT_TX, o->iters - 1, o->iters), size, size, (o->iters - 1) | SOURCE_TAG);
	} else {
		memset(pt_bw_local(c, PT_RX, 0, o->iters), 0, size);
		memset(pt_bw_local(c, PT_RX, o->iters - 1, o->iters), 0, size);
	}
	if (pt_start(c))   /* the source data is in place */
		return 1;
	if (c->rank == 1)
		return 0;   /* the server is passive until the result exchange */
	pt_stream_init(c, &st, WR_RDMA_READ, size);
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
	return check_area(c, size, 0) || check_area(c, size, o->iters - 1);
}

/* The program's defaults and its arguments: shared by the run and the
 * argument check. */
static int options(pt_opts_t *o, int argc, char **argv)
{
	pt_defaults(o, "ib_read_bw", PT_ARG_SIZES | PT_ARG_TX_DEPTH | PT_ARG_CQ_MOD);
	return pt_parse(o, argc, argv);
}

static int check_options(int argc, char **argv)
{
	pt_opts_t o;
	return options(&o, argc, argv);
}

static int read_bw_main(int argc, char **argv)
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
		"ib_read_bw", read_bw_main, check_options,
		"RC RDMA read bandwidth (perftest ib_read_bw); rank 0 client, rank 1 server. "
		"--sizes=2,8,64,512,4096,65536 | --min=N --max=N (powers of two), --iters=1000 (reads per "
		"size), --tx-depth=64 (posted reads), --cq-mod=16 (signal every N reads), "
		"--poll=busy|event, --timeout-ms=100, --port-wait-ms=100. Results (client): bw_<size> in MB/s");
}
