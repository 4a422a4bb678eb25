/*
 * ib_write_lat -- RDMA write ping-pong latency, as perftest's ib_write_lat.
 *
 * Each side RDMA-writes a message into the peer's receive area; the peer
 * notices it by polling the last byte of its own area (a per-iteration
 * marker; payload lands in address order, so the rest is there too),
 * checks the whole message and writes back.  One-way latency is half the
 * time between consecutive client posts.  Messages of at most --inline
 * bytes are written inline.  No receive WQEs and no receive completions
 * are involved; --poll only affects how send completions are reaped.
 *
 * Client results, per size: lat_<size>_typical (median),
 * lat_<size>_avg, lat_<size>_p99 and lat_<size>_max (the tail), in us.
 */
#include "perftest.h"

#include <string.h>

#define WRITE_LAT_DEPTH 16u
#define SERVER_ITER 0x80000000u

/* The last byte of message `iter`: never 0 (the cleared area), and never
 * the previous iteration's. */
static uint8_t marker(uint32_t iter) { return (uint8_t)(1u + iter % 255u); }

static int write_message(pt_ctx_t *c, uint8_t *tx, uint64_t remote, uint32_t size, uint32_t iter, int last)
{
	ib_local_ds_t ds;
	ib_send_wr_t wr;
	pt_fill(tx, size - 1, size, iter);
	tx[size - 1] = marker(iter & ~SERVER_ITER);
	memset(&wr, 0, sizeof wr);
	ds.vaddr = tx;
	ds.length = size;
	ds.lkey = c->lkey;
	wr.wr_type = WR_RDMA_WRITE;
	wr.num_ds = 1;
	wr.ds_array = &ds;
	wr.remote_ops.vaddr = remote;
	wr.remote_ops.rkey = c->remote.rkey;
	return pt_post_send(c, &wr, last, 1) ? 1 : 0;
}

static int take_message(pt_ctx_t *c, const uint8_t *rx, uint32_t size, uint32_t iter)
{
	long bad;
	if (pt_wait_byte(c, rx + size - 1, marker(iter & ~SERVER_ITER)))
		return 1;
	bad = pt_check(rx, size - 1, size, iter);
	if (bad >= 0)
		return pt_fail(c, "size %u iteration %u: byte %ld differs", size, iter & ~SERVER_ITER, bad);
	return 0;
}

static int run(pt_ctx_t *c)
{
	const pt_opts_t *o = &c->opt;
	uint8_t *tx = c->buf, *rx = c->buf + o->max_size;
	const uint64_t remote_rx = c->remote.addr + o->max_size;
	uint64_t *t = NULL;
	uint32_t s, i;
	int rc;

	if (pt_connect(c))
		return 1;
	t = pt_alloc_stamps(c);
	rc = t ? 0 : 1;
	for (s = 0; s < o->nsizes && !rc; s++) {
		const uint32_t size = o->sizes[s];
		/* A clean receive area, and the peer's too, before anyone writes. */
		memset(rx, 0, o->max_size);
		if ((rc = pt_start(c)) != 0)
			break;
		for (i = 0; i < o->iters && !rc; i++) {
			const int last = s + 1 == o->nsizes && i + 1 == o->iters;
			if (c->rank == 0) {
				t[i] = nicsim_now_ps();
				rc = write_message(c, tx, remote_rx, size, i, last) ||
				     take_message(c, rx, size, i | SERVER_ITER);
			} else {
				rc = take_message(c, rx, size, i) ||
				     write_message(c, tx, remote_rx, size, i | SERVER_ITER, last);
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
	pt_defaults(o, "ib_write_lat", PT_ARG_SIZES | PT_ARG_INLINE);
	o->inline_size = 128;
	return pt_parse(o, argc, argv);
}

static int check_options(int argc, char **argv)
{
	pt_opts_t o;
	return options(&o, argc, argv);
}

static int write_lat_main(int argc, char **argv)
{
	pt_opts_t o;
	pt_ctx_t c;
	if (options(&o, argc, argv))
		return 1;
	if (pt_setup(&c, &o, 2 * (size_t)o.max_size, WRITE_LAT_DEPTH, 1, WRITE_LAT_DEPTH / 2))
		return pt_finish(&c, 1);
	return pt_finish(&c, run(&c));
}

__attribute__((constructor)) static void reg(void)
{
	nicsim_register_program_checked(
		"ib_write_lat", write_lat_main, check_options,
		"RC RDMA write ping-pong latency, each side polling its buffer's last byte (perftest "
		"ib_write_lat); rank 0 client, rank 1 server. --sizes=2,8,64,512,4096,65536 | --min=N "
		"--max=N (powers of two), --iters=1000, --inline=128, --poll=busy|event (send completions "
		"only), --timeout-ms=100, --port-wait-ms=100. Results (client): lat_<size>_typical, lat_<size>_avg, "
		"lat_<size>_p99, lat_<size>_max in us (half round trip)");
}
