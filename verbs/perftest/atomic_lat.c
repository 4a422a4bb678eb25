/*
 * ib_atomic_lat -- atomic operation latency, as perftest's ib_atomic_lat.
 *
 * The server holds a 64-bit counter starting just below 2^32 (so that the
 * adds carry across the 32-bit boundary).  The client applies --iters
 * fetch-and-adds of 1 (or compare-and-swaps of value -> value + 1 with
 * --atomic=cswap), waiting for each, and checks that every operation
 * returned the value it expected.  At the end the client reads the counter
 * back by RDMA read and the server checks it locally: both must equal the
 * start plus the number of operations.  Latency is the time between
 * consecutive client posts (a full round trip).
 *
 * Client results: lat_8_typical, lat_8_avg, lat_8_p99, lat_8_max in us, atomic_final (the
 * number of operations the counter advanced by).
 */
#include "perftest.h"

#include <string.h>

#define ATOMIC_LAT_DEPTH 4u
#define COUNTER_START 0x00000000fffffe00ull

static int atomic_once(pt_ctx_t *c, uint64_t *result, uint64_t expect)
{
	ib_local_ds_t ds;
	ib_send_wr_t wr;
	ib_wc_t wc;
	memset(&wr, 0, sizeof wr);
	ds.vaddr = result;
	ds.length = 8;
	ds.lkey = c->lkey;
	wr.num_ds = 1;
	wr.ds_array = &ds;
	wr.remote_ops.vaddr = c->remote.addr;   /* the server's counter */
	wr.remote_ops.rkey = c->remote.rkey;
	if (c->opt.cswap) {
		wr.wr_type = WR_COMPARE_SWAP;
		wr.remote_ops.atomic1 = cl_hton64(expect);
		wr.remote_ops.atomic2 = cl_hton64(expect + 1);
	} else {
		wr.wr_type = WR_FETCH_ADD;
		wr.remote_ops.atomic1 = cl_hton64(1);
	}
	*result = ~expect;
	if (pt_post_send(c, &wr, 1, 0) || pt_wait_wc(c, &c->scq, &wc))
		return 1;
	if (wc.length != 8 || wc.wc_type != (c->opt.cswap ? IB_WC_COMPARE_SWAP : IB_WC_FETCH_ADD))
		return pt_fail(c, "atomic completion: type %d, %u bytes", (int)wc.wc_type, wc.length);
	/* The original value lands in host byte order. */
	if (*result != expect)
		return pt_fail(c, "atomic returned %#llx, expected %#llx", (unsigned long long)*result,
			       (unsigned long long)expect);
	return 0;
}

static int read_counter(pt_ctx_t *c, uint64_t *dst)
{
	ib_local_ds_t ds;
	ib_send_wr_t wr;
	ib_wc_t wc;
	memset(&wr, 0, sizeof wr);
	ds.vaddr = dst;
	ds.length = 8;
	ds.lkey = c->lkey;
	wr.wr_type = WR_RDMA_READ;
	wr.num_ds = 1;
	wr.ds_array = &ds;
	wr.remote_ops.vaddr = c->remote.addr;
	wr.remote_ops.rkey = c->remote.rkey;
	*dst = 0;
	return pt_post_send(c, &wr, 1, 0) || pt_wait_wc(c, &c->scq, &wc) ? 1 : 0;
}

static int run(pt_ctx_t *c)
{
	const pt_opts_t *o = &c->opt;
	volatile uint64_t *counter = (volatile uint64_t *)c->buf;    /* the server's */
	uint64_t *result = (uint64_t *)(c->buf + 64);
	uint64_t *readback = (uint64_t *)(c->buf + 128);
	const uint64_t final_value = COUNTER_START + o->iters;
	uint64_t *t = NULL;
	int32_t ok = 1, peer_ok = 0;
	uint32_t i;
	int rc;

	*counter = COUNTER_START;
	if (pt_connect(c))
		return 1;
	t = pt_alloc_stamps(c);
	rc = !t ? 1 : pt_start(c);
	if (c->rank == 0 && !rc) {
		for (i = 0; i < o->iters && !rc; i++) {
			t[i] = nicsim_now_ps();
			rc = atomic_once(c, result, COUNTER_START + i);
		}
		if (!rc) {
			t[o->iters] = nicsim_now_ps();
			pt_report_stamps(c, 8, t, o->iters, 1);
			rc = read_counter(c, readback);
			if (!rc && *readback != final_value)
				rc = pt_fail(c, "counter read back as %#llx, expected %#llx",
					     (unsigned long long)*readback, (unsigned long long)final_value);
			if (!rc)
				nicsim_result("atomic_final", (double)(*readback - COUNTER_START), "ops");
		}
	}
	if (t)
		nicsim_free(t);
	if (rc || pt_barrier(c))
		return 1;
	/* The client is done: the counter is final. */
	if (c->rank == 1 && *counter != final_value) {
		pt_fail(c, "counter is %#llx after %u operations, expected %#llx",
			(unsigned long long)*counter, o->iters, (unsigned long long)final_value);
		ok = 0;
	}
	if (pt_exchange(c, PT_TAG_STATUS, &ok, &peer_ok, sizeof ok))
		return 1;
	if (!ok)
		return 1;
	if (!peer_ok)
		return pt_fail(c, "the peer found the counter wrong");
	return 0;
}

/* The program's defaults and its arguments: shared by the run and the
 * argument check. */
static int options(pt_opts_t *o, int argc, char **argv)
{
	pt_defaults(o, "ib_atomic_lat", PT_ARG_ATOMIC);
	pt_set_sizes(o, "8");
	return pt_parse(o, argc, argv);
}

static int check_options(int argc, char **argv)
{
	pt_opts_t o;
	return options(&o, argc, argv);
}

static int atomic_lat_main(int argc, char **argv)
{
	pt_opts_t o;
	pt_ctx_t c;
	if (options(&o, argc, argv))
		return 1;
	if (pt_setup(&c, &o, 4096, ATOMIC_LAT_DEPTH, 1, 1))
		return pt_finish(&c, 1);
	return pt_finish(&c, run(&c));
}

__attribute__((constructor)) static void reg(void)
{
	nicsim_register_program_checked(
		"ib_atomic_lat", atomic_lat_main, check_options,
		"RC atomic latency on a remote 64-bit counter (perftest ib_atomic_lat); rank 0 client, "
		"rank 1 server. --atomic=fadd|cswap, --iters=1000, --poll=busy|event, --timeout-ms=100, --port-wait-ms=100. "
		"Checks every returned value and the final counter on both sides. Results (client): "
		"lat_8_typical, lat_8_avg, lat_8_p99, lat_8_max in us (full round trip), atomic_final (ops)");
}
