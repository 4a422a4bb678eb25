/*
 * dapl_perf: the dapltest performance test, over uDAPL 1.1. Rank 0 is the
 * client, rank 1 the server (as perftest places them). The server
 * registers a region, accepts the connection with the region's rmr_context
 * and address as private data and waits for the disconnect; the client
 * runs, for RDMA read (RR) then RDMA write (RW), for each size:
 *   latency    one operation in flight: post, take its completion, again;
 *              the time per operation is a full round trip
 *   bandwidth  --depth operations in flight (pipelined): a new one posted
 *              as each completes
 * each twice: taking completions with dat_evd_wait (blocking, woken by the
 * CQ's interrupt) and with dat_evd_dequeue (polling). --warmup operations
 * before each measure are not counted.
 *
 * Every RR result is checked against the server's bytes, and the server
 * checks that the last RW left the client's bytes in its region.
 *
 * Arguments: --sizes=a,b,... (2,4096,65536), --iters=N (100, at most
 * 4096), --depth=N (8, at most 16), --warmup=N (4), --ops=rw (r: RR, w: RW).
 * Client results, per op (rr, rw), mode (wait, poll) and size:
 * <op>_<mode>_lat_<size> (us per operation, the mean) with its tail over
 * the operations, <op>_<mode>_lat_<size>_p99 (nearest rank) and
 * <op>_<mode>_lat_<size>_max (us), and <op>_<mode>_bw_<size> (MB/s, 10^6
 * bytes per second); connect_us.
 */
#include <stdio.h>
#include <stdlib.h>

#include "dapl_common.h"

#define DP_MAX_SIZES 16
#define DP_MAX_ITERS 4096 /* each latency operation's time is kept on the stack */
#define DP_QUAL 0x44415046ull

struct dp_opts {
	unsigned sizes[DP_MAX_SIZES];
	int nsizes, iters, depth, warmup, rr, rw;
	unsigned max_size;
};

static unsigned char client_byte(unsigned j) { return (unsigned char)(0xc3 ^ (j * 7)); }
static unsigned char server_byte(unsigned j) { return (unsigned char)(0x3c + j * 13); }

static int parse(int argc, char **argv, struct dp_opts *o)
{
	const char *ops = "rw";
	uint64_t v, sizes[DP_MAX_SIZES] = {2, 4096, 65536};
	uint32_t n = 3, k;
	int i, got = 0;
	o->iters = 100, o->depth = 8, o->warmup = 4;
	for (i = 1; i < argc; ++i) {
		const char *a = argv[i];
		if (!strncmp(a, "--sizes=", 8))
			got = nicsim_arg_u64_list(a, "--sizes=", 1, 1u << 24, sizes, DP_MAX_SIZES, &n);
		else if ((got = nicsim_arg_u64(a, "--iters=", 1, DP_MAX_ITERS, &v)) != 0)
			o->iters = (int)v;
		else if ((got = nicsim_arg_u64(a, "--depth=", 1, 16, &v)) != 0)
			o->depth = (int)v;
		else if ((got = nicsim_arg_u64(a, "--warmup=", 0, DP_MAX_ITERS, &v)) != 0)
			o->warmup = (int)v;
		else if (!strncmp(a, "--ops=", 6))
			ops = a + 6;
		else
			return nicsim_log("dapl_perf: unknown argument %s", a), 1;
		if (got < 0)
			return 1;
	}
	for (k = 0, o->nsizes = (int)n, o->max_size = 0; k < n; ++k) {
		o->sizes[k] = (unsigned)sizes[k];
		if (o->sizes[k] > o->max_size)
			o->max_size = o->sizes[k];
	}
	o->rr = strchr(ops, 'r') != NULL, o->rw = strchr(ops, 'w') != NULL;
	if (!*ops || strspn(ops, "rw") != strlen(ops))
		return nicsim_fail("dapl_perf: --ops takes r (RDMA read), w (RDMA write) or both"), 1;
	return 0;
}

/* ---- client ----------------------------------------------------------- */

struct dp_run {
	struct dt_ep *e;
	int read, poll;
	unsigned size;
};

/* The next completion, by dat_evd_wait or by polling dat_evd_dequeue. */
static int next_completion(const struct dp_run *r)
{
	DAT_EVENT ev;
	DAT_COUNT more;
	DAT_RETURN rc;
	if (r->poll) {
		while ((rc = dat_evd_dequeue(r->e->dto_evd, &ev)) == (DAT_CLASS_ERROR | DAT_QUEUE_EMPTY))
			;
	} else {
		rc = dat_evd_wait(r->e->dto_evd, DAT_TIMEOUT_INFINITE, 1, &ev, &more);
	}
	if (rc != DAT_SUCCESS)
		return DT_FAIL(next_completion, rc);
	if (ev.event_number != DAT_DTO_COMPLETION_EVENT ||
	    ev.event_data.dto_completion_event_data.status != DAT_DTO_SUCCESS ||
	    ev.event_data.dto_completion_event_data.transfered_length != r->size)
		return nicsim_log("dapl_perf: event 0x%x status %d", (unsigned)ev.event_number,
				  (int)ev.event_data.dto_completion_event_data.status),
		       1;
	return 0;
}

static int post_one(const struct dp_run *r, DAT_UINT64 n)
{
	DAT_LMR_TRIPLET l = dt_iov(r->e, dt_rdma_area(r->e), r->size);
	DAT_RMR_TRIPLET t;
	DAT_DTO_COOKIE c;
	t.rmr_context = r->e->peer_rkey, t.pad = 0, t.target_address = r->e->peer_addr, t.segment_length = r->size;
	c.as_64 = n;
	if (r->read)
		DT_CHECK(dat_ep_post_rdma_read(r->e->ep, 1, &l, c, &t, DAT_COMPLETION_DEFAULT_FLAG));
	else
		DT_CHECK(dat_ep_post_rdma_write(r->e->ep, 1, &l, c, &t, DAT_COMPLETION_DEFAULT_FLAG));
	return 0;
}

/*
 * `iters` operations with at most `depth` in flight; picoseconds taken. With
 * `each` (one operation in flight), each operation's picoseconds, from the
 * previous completion (or the start) to its own: they add up to *ps.
 */
static int run_ops(const struct dp_run *r, int iters, int depth, unsigned long long *ps, uint64_t *each)
{
	unsigned long long t0 = nicsim_now_ps(), last = t0;
	int posted = 0, done = 0;
	while (done < iters) {
		while (posted < iters && posted - done < depth)
			if (post_one(r, (DAT_UINT64)posted++))
				return 1;
		if (next_completion(r))
			return 1;
		if (each) {
			each[done] = nicsim_now_ps() - last;
			last += each[done];
		}
		++done;
	}
	*ps = nicsim_now_ps() - t0;
	return 0;
}

static int measure(const struct dp_opts *o, struct dt_ep *e, int read, int poll, unsigned size)
{
	static const char *const ops[] = {"rw", "rr"}, *const modes[] = {"wait", "poll"};
	struct dp_run r;
	unsigned long long ps;
	uint64_t op_ps[DP_MAX_ITERS];
	char name[64];
	unsigned j;
	r.e = e, r.read = read, r.poll = poll, r.size = size;
	if (o->warmup && run_ops(&r, o->warmup, 1, &ps, NULL))
		return 1;
	if (run_ops(&r, o->iters, 1, &ps, op_ps))
		return 1;
	snprintf(name, sizeof name, "%s_%s_lat_%u", ops[read], modes[poll], size);
	nicsim_result(name, (double)ps / o->iters / 1e6, "us");
	nicsim_result_tail(name, op_ps, (uint32_t)o->iters, 1e6, "us");
	if (run_ops(&r, o->iters, o->depth, &ps, NULL))
		return 1;
	snprintf(name, sizeof name, "%s_%s_bw_%u", ops[read], modes[poll], size);
	nicsim_result(name, (double)size * o->iters / ((double)ps * 1e-12) / 1e6, "MB/s");
	nicsim_log("dapl_perf: %s %s %8u bytes: %s", ops[read], modes[poll], size, name);
	for (j = 0; read && j < size; ++j)
		if (dt_rdma_area(e)[j] != server_byte(j))
			return nicsim_log("dapl_perf: RR of %u bytes: byte %u wrong", size, j), 1;
	return 0;
}

static int client_connect(struct dt_ep *e)
{
	struct sockaddr_in server;
	unsigned char priv[12];
	DAT_EVENT ev;
	unsigned long long t0 = nicsim_now_ps();
	dt_addr(&server, dt_node_ip(nicsim_workload_node(1)));
	dt_put_region(priv, e);
	DT_CHECK(dat_ep_connect(e->ep, (DAT_IA_ADDRESS_PTR)&server, DP_QUAL, 1000000, 12, priv, DAT_QOS_BEST_EFFORT,
				DAT_CONNECT_DEFAULT_FLAG));
	if (dt_wait(e->conn_evd, DAT_CONNECTION_EVENT_ESTABLISHED, &ev, 2000000))
		return 1;
	if (ev.event_data.connect_event_data.private_data_size != 12)
		return nicsim_log("dapl_perf: ESTABLISHED without the server's region"), 1;
	dt_get_region((const unsigned char *)ev.event_data.connect_event_data.private_data, e);
	nicsim_result("connect_us", (double)(nicsim_now_ps() - t0) / 1e6, "us");
	return 0;
}

static int run_client(const struct dp_opts *o)
{
	DAT_IA_HANDLE ia;
	DAT_EVD_HANDLE async = DAT_HANDLE_NULL;
	DAT_PZ_HANDLE pz;
	DAT_EVENT ev;
	struct dt_ep e;
	int i, read, poll;
	unsigned j;
	DT_CHECK(dat_ia_open("ib0", 16, &async, &ia));
	DT_CHECK(dat_pz_create(ia, &pz));
	if (dt_ep_open(ia, pz, &e, o->max_size, 1))
		return 1;
	for (j = 0; j < o->max_size; ++j)
		dt_rdma_area(&e)[j] = client_byte(j);
	nicsim_barrier();
	if (client_connect(&e))
		return 1;
	for (read = 1; read >= 0; --read) {
		if ((read && !o->rr) || (!read && !o->rw))
			continue;
		for (j = 0; read == 0 && j < o->max_size; ++j) /* RW sends the client's bytes */
			dt_rdma_area(&e)[j] = client_byte(j);
		for (poll = 0; poll < 2; ++poll)
			for (i = 0; i < o->nsizes; ++i)
				if (measure(o, &e, read, poll, o->sizes[i]))
					return 1;
	}
	DT_CHECK(dat_ep_disconnect(e.ep, DAT_CLOSE_GRACEFUL_FLAG));
	if (dt_wait(e.conn_evd, DAT_CONNECTION_EVENT_DISCONNECTED, &ev, 1000000) || dt_ep_close(&e))
		return 1;
	DT_CHECK(dat_pz_free(pz));
	DT_CHECK(dat_ia_close(ia, DAT_CLOSE_GRACEFUL_FLAG));
	return 0;
}

/* ---- server ----------------------------------------------------------- */

static int serve(const struct dp_opts *o, DAT_EVD_HANDLE cr_evd, struct dt_ep *e)
{
	DAT_EVENT ev;
	DAT_CR_PARAM cp;
	unsigned char priv[12];
	unsigned j;
	if (dt_wait(cr_evd, DAT_CONNECTION_REQUEST_EVENT, &ev, 2000000))
		return 1;
	DT_CHECK(dat_cr_query(ev.event_data.cr_arrival_event_data.cr_handle, DAT_CR_FIELD_ALL, &cp));
	dt_put_region(priv, e);
	DT_CHECK(dat_cr_accept(ev.event_data.cr_arrival_event_data.cr_handle, e->ep, 12, priv));
	if (dt_wait(e->conn_evd, DAT_CONNECTION_EVENT_ESTABLISHED, &ev, 1000000))
		return 1;
	if (dt_wait(e->conn_evd, DAT_CONNECTION_EVENT_DISCONNECTED, &ev, DAT_TIMEOUT_INFINITE))
		return 1;
	for (j = 0; o->rw && j < o->max_size; ++j) /* the client's bytes, by RDMA write */
		if (dt_rdma_area(e)[j] != client_byte(j))
			return nicsim_log("dapl_perf: server byte %u after the RWs is wrong", j), 1;
	return 0;
}

static int run_server(const struct dp_opts *o)
{
	DAT_IA_HANDLE ia;
	DAT_EVD_HANDLE async = DAT_HANDLE_NULL, cr_evd;
	DAT_PZ_HANDLE pz;
	DAT_PSP_HANDLE psp;
	struct dt_ep e;
	unsigned j;
	DT_CHECK(dat_ia_open("ib0", 16, &async, &ia));
	DT_CHECK(dat_pz_create(ia, &pz));
	DT_CHECK(dat_evd_create(ia, 8, DAT_HANDLE_NULL, DAT_EVD_CR_FLAG, &cr_evd));
	if (dt_ep_open(ia, pz, &e, o->max_size, 1))
		return 1;
	for (j = 0; j < o->max_size; ++j)
		dt_rdma_area(&e)[j] = server_byte(j);
	DT_CHECK(dat_psp_create(ia, DP_QUAL, cr_evd, DAT_PSP_CONSUMER_FLAG, &psp));
	nicsim_barrier();
	if (serve(o, cr_evd, &e))
		return 1;
	DT_CHECK(dat_psp_free(psp));
	if (dt_ep_close(&e))
		return 1;
	DT_CHECK(dat_evd_free(cr_evd));
	DT_CHECK(dat_pz_free(pz));
	DT_CHECK(dat_ia_close(ia, DAT_CLOSE_GRACEFUL_FLAG));
	return 0;
}

static int check_options(int argc, char **argv)
{
	struct dp_opts o;
	memset(&o, 0, sizeof o);
	return parse(argc, argv, &o);
}

static int dapl_perf_main(int argc, char **argv)
{
	struct dp_opts o;
	memset(&o, 0, sizeof o);
	if (parse(argc, argv, &o))
		return 2;
	if (nicsim_workload_size() != 2)
		return nicsim_log("dapl_perf: runs on two nodes"), 2;
	return nicsim_workload_rank() == 0 ? run_client(&o) : run_server(&o);
}

__attribute__((constructor)) static void dapl_perf_register(void)
{
	nicsim_register_program_checked("dapl_perf", dapl_perf_main, check_options,
				"the dapltest performance test over uDAPL 1.1: RDMA read and write latency and bandwidth by "
				"size, blocking (dat_evd_wait) and polling (dat_evd_dequeue), pipelined to --depth");
}
