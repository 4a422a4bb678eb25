/*
 * ib_send_lat -- RC send/receive ping-pong latency, as perftest's
 * ib_send_lat.
 *
 * The client sends a message, the server answers with one of the same
 * size as soon as its receive completes; the client's next send follows
 * its receive.  One-way latency is half the time between consecutive
 * client posts.  Messages of at most --inline bytes are sent inline.
 * Every message carries a pattern of its size and iteration that the
 * receiver checks in full.
 *
 * Client results, per size: lat_<size>_typical (median),
 * lat_<size>_avg, lat_<size>_p99 and lat_<size>_max (the tail), in us.
 */
#include "perftest.h"

#include <string.h>

#define SEND_LAT_DEPTH 16u
#define SERVER_ITER 0x80000000u    /* the server's replies use their own patterns */

static int post_recv(pt_ctx_t *c, uint8_t *area, uint32_t len)
{
	ib_local_ds_t ds;
	ib_recv_wr_t wr, *bad = NULL;
	ib_api_status_t st;
	ds.vaddr = area;
	ds.length = len;
	ds.lkey = c->lkey;
	wr.p_next = NULL;
	wr.wr_id = 0;
	wr.num_ds = 1;
	wr.ds_array = &ds;
	st = c->ci->post_recv(c->qp, &wr, &bad);
	if (st != IB_SUCCESS)
		return pt_fail(c, "post_recv: %s", ib_get_err_str(st));
	return 0;
}

/* Waits for the next message, checks it and posts a receive in its place. */
static int take_message(pt_ctx_t *c, uint8_t *rx, uint32_t size, uint32_t iter)
{
	ib_wc_t wc;
	long bad;
	if (pt_wait_wc(c, &c->rcq, &wc))
		return 1;
	if (wc.length != size)
		return pt_fail(c, "received %u bytes, expected %u", wc.length, size);
	bad = pt_check(rx, size, size, iter);
	if (bad >= 0)
		return pt_fail(c, "size %u iteration %u: byte %ld differs", size, iter & ~SERVER_ITER, bad);
	return post_recv(c, rx, c->opt.max_size);
}

static int send_message(pt_ctx_t *c, uint8_t *tx, uint32_t size, uint32_t iter, int last)
{
	ib_local_ds_t ds;
	ib_send_wr_t wr;
	pt_fill(tx, size, size, iter);
	memset(&wr, 0, sizeof wr);
	ds.vaddr = tx;
	ds.length = size;
	ds.lkey = c->lkey;
	wr.wr_type = WR_SEND;
	wr.num_ds = 1;
	wr.ds_array = &ds;
	return pt_post_send(c, &wr, last, 1) ? 1 : 0;
}

static int run(pt_ctx_t *c)
{
	const pt_opts_t *o = &c->opt;
	uint8_t *tx = c->buf, *rx = c->buf + o->max_size;
	uint64_t *t = NULL;
	uint32_t s, i;
	int rc = 0;

	for (i = 0; i < c->rq_depth; i++)
		if (post_recv(c, rx, o->max_size))
			return 1;
	if (pt_connect(c))
		return 1;
	t = pt_alloc_stamps(c);
	if (!t)
		rc = 1;
	for (s = 0; s < o->nsizes && !rc; s++) {
		const uint32_t size = o->sizes[s];
		if ((rc = pt_start(c)) != 0)
			break;
		for (i = 0; i < o->iters && !rc; i++) {
			const int last = s + 1 == o->nsizes && i + 1 == o->iters;
			if (c->rank == 0) {
				t[i] = nicsim_now_ps();
				rc = send_message(c, tx, size, i, last) || take_message(c, rx, size, i | SERVER_ITER);
			} else {
				rc = take_message(c, rx, size, i) || send_message(c, tx, size, i | SERVER_ITER, last);
			}
		}
		if (rc || c->rank != 0)
			continue;
		t[o->iters] = nicsim_now_ps();
		pt_report_stamps(c, size, t, o->iters, 2);
	}
	if (t)
		nicsim_free(t);
	return rc;
}

/* The program's defaults and its arguments: shared by the run and the
 * argument check. */
static int options(pt_opts_t *o, int argc, char **argv)
{
	pt_defaults(o, "ib_send_lat", PT_ARG_SIZES | PT_ARG_INLINE);
	o->inline_size = 128;
	return pt_parse(o, argc, argv);
}

static int check_options(int argc, char **argv)
{
	pt_opts_t o;
	return options(&o, argc, argv);
}

static int send_lat_main(int argc, char **argv)
{
	pt_opts_t o;
	pt_ctx_t c;
	if (options(&o, argc, argv))
		return 1;
	if (pt_setup(&c, &o, 2 * (size_t)o.max_size, SEND_LAT_DEPTH, SEND_LAT_DEPTH, SEND_LAT_DEPTH / 2))
		return pt_finish(&c, 1);
	return pt_finish(&c, run(&c));
}

__attribute__((constructor)) static void reg(void)
{
	nicsim_register_program_checked(
		"ib_send_lat", send_lat_main, check_options,
		"RC send/receive ping-pong latency (perftest ib_send_lat); rank 0 client, rank 1 server. "
		"--sizes=2,8,64,512,4096,65536 | --min=N --max=N (powers of two), --iters=1000, "
		"--inline=128 (bytes sent inline), --poll=busy|event, --timeout-ms=100, --port-wait-ms=100. "
		"Results (client): lat_<size>_typical, lat_<size>_avg, lat_<size>_p99, lat_<size>_max in us (half round trip)");
}
