/*
 * ib_read_lat -- RDMA read latency, as perftest's ib_read_lat.
 *
 * The server fills its buffer with a pattern of the size and waits; the
 * client RDMA-reads it into a cleared local buffer, waits for the
 * completion, checks every byte and reads again.  The latency of a read is
 * the time between consecutive client posts (a full round trip; perftest
 * does not halve it either).
 *
 * Client results, per size: lat_<size>_typical (median),
 * lat_<size>_avg, lat_<size>_p99 and lat_<size>_max (the tail), in us.
 */
#include "perftest.h"

#include <string.h>

#define READ_LAT_DEPTH 4u

static int read_once(pt_ctx_t *c, uint8_t *dst, uint32_t size)
{
	ib_local_ds_t ds;
	ib_send_wr_t wr;
	ib_wc_t wc;
	memset(&wr, 0, sizeof wr);
	ds.vaddr = dst;
	ds.length = size;
	ds.lkey = c->lkey;
	wr.wr_type = WR_RDMA_READ;
	wr.num_ds = 1;
	wr.ds_array = &ds;
	wr.remote_ops.vaddr = c->remote.addr;
	wr.remote_ops.rkey = c->remote.rkey;
	if (pt_post_send(c, &wr, 1, 0) || pt_wait_wc(c, &c->scq, &wc))
		return 1;
	if (wc.wc_type != IB_WC_RDMA_READ || wc.length != size)
		return pt_fail(c, "read completion: type %d, %u bytes (expected %u)", (int)wc.wc_type, wc.length,
			       size);
	return 0;
}

static int run(pt_ctx_t *c)
{
	const pt_opts_t *o = &c->opt;
	uint8_t *dst = c->buf + o->max_size;
	uint64_t *t = NULL;
	uint32_t s, i;
	int rc;

	if (pt_connect(c))
		return 1;
	t = pt_alloc_stamps(c);
	rc = t ? 0 : 1;
	for (s = 0; s < o->nsizes && !rc; s++) {
		const uint32_t size = o->sizes[s];
		if (c->rank == 1)
			pt_fill(c->buf, size, size, s);   /* the data the client reads */
		if ((rc = pt_start(c)) != 0)
			break;
		if (c->rank == 0) {
			for (i = 0; i < o->iters && !rc; i++) {
				long bad;
				memset(dst, 0, size);
				t[i] = nicsim_now_ps();
				rc = read_once(c, dst, size);
				if (rc)
					break;
				bad = pt_check(dst, size, size, s);
				if (bad >= 0)
					rc = pt_fail(c, "size %u iteration %u: byte %ld read differs", size, i, bad);
			}
			if (!rc) {
				t[o->iters] = nicsim_now_ps();
				pt_report_stamps(c, size, t, o->iters, 1);
			}
		}
		/* The server changes its data for the next size only after this. */
		if (!rc)
			rc = pt_barrier(c);
	}
	if (t)
		nicsim_free(t);
	return rc;
}

/* The program's defaults and its arguments: shared by the run and the
 * argument check. */
static int options(pt_opts_t *o, int argc, char **argv)
{
	pt_defaults(o, "ib_read_lat", PT_ARG_SIZES);
	return pt_parse(o, argc, argv);
}

static int check_options(int argc, char **argv)
{
	pt_opts_t o;
	return options(&o, argc, argv);
}

static int read_lat_main(int argc, char **argv)
{
	pt_opts_t o;
	pt_ctx_t c;
	if (options(&o, argc, argv))
		return 1;
	if (pt_setup(&c, &o, 2 * (size_t)o.max_size, READ_LAT_DEPTH, 1, 1))
		return pt_finish(&c, 1);
	return pt_finish(&c, run(&c));
}

__attribute__((constructor)) static void reg(void)
{
	nicsim_register_program_checked(
		"ib_read_lat", read_lat_main, check_options,
		"RC RDMA read latency (perftest ib_read_lat); rank 0 client, rank 1 server. "
		"--sizes=2,8,64,512,4096,65536 | --min=N --max=N (powers of two), --iters=1000, "
		"--poll=busy|event, --timeout-ms=100, --port-wait-ms=100. Results (client): lat_<size>_typical, "
		"lat_<size>_avg, lat_<size>_p99, lat_<size>_max in us (full round trip)");
}
