/*
 * cma_pingpong: connect, exchange, disconnect, with the CMA (rdma/ib_cma.h)
 * and the kernel verbs (rdma/ib_verbs.h), written as a 2005 kernel consumer
 * would. Workload rank 0 listens, every other rank connects to it (all at
 * once: simultaneous connects to one listener). Each cycle: the client
 * creates an RC QP, connects with private data, the server accepts with its
 * own; the client sends --bytes of a pattern, the server checks it and sends
 * it back, the client checks the echo; then one side disconnects and both
 * see DISCONNECTED. Every private data and payload byte is checked.
 *
 * Arguments:
 *   --cycles=N        connect/exchange/disconnect cycles per client (1)
 *   --bytes=N         payload bytes each way (64)
 *   --sid=N           service id (0x1000)
 *   --disconnect-by=client|server   who sends the DREQ (client)
 *   --reject          the server rejects every request (with private data);
 *                     clients expect REJECTED
 *   --dst=A.B.C.D     clients connect to this address instead of rank 0's
 *                     (rank 0 then only listens)
 *   --expect=established|rejected|unreachable   the client's expected first event
 *   --timeout-ms=N    the connect's timeout argument (0: the node's default)
 *   --rarp            the server asks ib_cma_get_src_ip and checks the answer
 *   --connect-sid=N   clients connect to this service id (default: --sid)
 *   --requests=N      requests the server waits for (default: clients x cycles)
 *   --delay-us=N      clients wait this long after the start barrier
 *   --linger-us=N     every rank waits this long before it exits (timewaits end)
 *   --accept-delay-us=N  the server waits this long before it accepts (a
 *                     slow consumer: the CM answers the REQ with an MRA)
 *   --accept-unreachable  the server expects UNREACHABLE after its accept
 *                     (no RTU ever came)
 *   --established-only  clients stop at ESTABLISHED: no exchange, no
 *                     disconnect (the QP is destroyed)
 *   --role=server|client  the side regardless of rank (a one-node workload
 *                     each, e.g. both on one node: give the client --dst)
 *
 * Results (clients): connect_ns (REQ to ESTABLISHED of the first cycle),
 * cycles_ok, cycle_ns (mean simulated time of one cycle).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <linux/in.h>
#include <rdma/ib_verbs.h>
#include <rdma/ib_cma.h>

#include "nicsim/app.h"

#define PP_TAG_IP 0x434d0001u

struct pp_opts {
	int cycles, bytes, reject, rarp, by_server, requests, role, accept_unreachable, established_only; /* role: 0 by rank, 1 server, 2 client */
	unsigned long long sid, connect_sid, delay_us, linger_us, accept_delay_us;
	unsigned int dst_ip; /* host order; 0: rank 0's */
	unsigned int timeout_ms;
	enum ib_cma_event expect;
};

/* One side's state, shared with the handlers (interrupt context). */
struct pp_side {
	int events, last_event, requests, accepted_events, rarp_done;
	unsigned int rarp_ip;
	union ib_cma_id req_ids[64];
	unsigned char req_private[64][IB_CMA_REQ_PRIVATE_DATA_SIZE];
	unsigned char rep_private[IB_CMA_REP_PRIVATE_DATA_SIZE];
	unsigned char rej_private[IB_CMA_REJ_PRIVATE_DATA_SIZE];
	int got_rep_private, got_rej_private;
	int server_events[64], server_last[64];
};

static unsigned char pattern(int rank, int cycle, int i)
{
	return (unsigned char)(rank * 31 + cycle * 7 + i);
}

/* A service id, in decimal or 0x hex; 0 when `s` is not one. */
static unsigned long long pp_sid(const char *s)
{
	char *end;
	unsigned long long v;
	if (*s < '0' || *s > '9')
		return 0;
	v = strtoull(s, &end, 0);
	return *end ? 0 : v;
}

/* The numeric options; 1 taken, 0 another option, -1 a bad value (failed). */
static int pp_parse_number(const char *a, struct pp_opts *o)
{
	uint64_t v;
	int got;
	if ((got = nicsim_arg_u64(a, "--cycles=", 1, 1000000, &v)) != 0)
		o->cycles = (int)v;
	else if ((got = nicsim_arg_u64(a, "--bytes=", 1, 65536, &v)) != 0)
		o->bytes = (int)v;
	else if ((got = nicsim_arg_u64(a, "--requests=", 0, 1000000, &v)) != 0)
		o->requests = (int)v;
	else if ((got = nicsim_arg_u64(a, "--delay-us=", 0, 10000000, &v)) != 0)
		o->delay_us = v;
	else if ((got = nicsim_arg_u64(a, "--accept-delay-us=", 0, 10000000, &v)) != 0)
		o->accept_delay_us = v;
	else if ((got = nicsim_arg_u64(a, "--linger-us=", 0, 10000000, &v)) != 0)
		o->linger_us = v;
	else if ((got = nicsim_arg_u64(a, "--timeout-ms=", 0, 3600000, &v)) != 0)
		o->timeout_ms = (unsigned int)v;
	return got;
}

static int pp_parse(int argc, char **argv, struct pp_opts *o)
{
	int i, got;
	o->cycles = 1;
	o->bytes = 64;
	o->sid = 0x1000;
	o->expect = IB_CMA_EVENT_ESTABLISHED;
	o->requests = -1;
	for (i = 1; i < argc; ++i) {
		const char *a = argv[i];
		unsigned int b0, b1, b2, b3;
		int end = 0;
		if ((got = pp_parse_number(a, o)) < 0)
			return -1;
		else if (got)
			continue;
		if (!strncmp(a, "--sid=", 6) && (o->sid = pp_sid(a + 6)) != 0)
			continue;
		if (!strncmp(a, "--connect-sid=", 14) && (o->connect_sid = pp_sid(a + 14)) != 0)
			continue;
		if (!strncmp(a, "--sid=", 6) || !strncmp(a, "--connect-sid=", 14))
			return nicsim_fail("cma_pingpong: a service id is a number other than 0, decimal or 0x hex"), -1;
		if (!strcmp(a, "--accept-unreachable"))
			o->accept_unreachable = 1;
		else if (!strcmp(a, "--established-only"))
			o->established_only = 1;
		else if (!strcmp(a, "--role=server"))
			o->role = 1;
		else if (!strcmp(a, "--role=client"))
			o->role = 2;
		else if (!strcmp(a, "--reject"))
			o->reject = 1, o->expect = IB_CMA_EVENT_REJECTED;
		else if (!strcmp(a, "--rarp"))
			o->rarp = 1;
		else if (!strcmp(a, "--disconnect-by=server"))
			o->by_server = 1;
		else if (!strcmp(a, "--disconnect-by=client"))
			o->by_server = 0;
		else if (sscanf(a, "--dst=%u.%u.%u.%u%n", &b0, &b1, &b2, &b3, &end) == 4 && !a[end] && b0 < 256 &&
			 b1 < 256 && b2 < 256 && b3 < 256)
			o->dst_ip = (b0 << 24) | (b1 << 16) | (b2 << 8) | b3;
		else if (!strcmp(a, "--expect=established"))
			o->expect = IB_CMA_EVENT_ESTABLISHED;
		else if (!strcmp(a, "--expect=rejected"))
			o->expect = IB_CMA_EVENT_REJECTED;
		else if (!strcmp(a, "--expect=unreachable"))
			o->expect = IB_CMA_EVENT_UNREACHABLE;
		else
			return nicsim_log("cma_pingpong: unknown argument %s", a), -1;
	}
	if (!o->connect_sid)
		o->connect_sid = o->sid;
	return 0;
}

static __be64 be64_of(unsigned long long v)
{
	__be64 r;
	unsigned char *p = (unsigned char *)&r;
	int i;
	for (i = 7; i >= 0; --i, v >>= 8)
		p[i] = (unsigned char)v;
	return r;
}

/* ---- verbs resources of one cycle -------------------------------------- */
struct pp_res {
	struct ib_device *dev;
	struct ib_pd *pd;
	struct ib_cq *cq;
	struct ib_mr *mr;
	struct ib_qp *qp;
	unsigned char *buf; /* send half, then receive half */
};

static int pp_open(struct pp_res *r, int bytes)
{
	r->pd = ib_alloc_pd(r->dev);
	r->cq = r->pd ? ib_create_cq(r->dev, NULL, NULL, NULL, 16) : NULL;
	r->mr = r->cq ? ib_get_dma_mr(r->pd, IB_ACCESS_LOCAL_WRITE) : NULL;
	r->buf = nicsim_alloc((size_t)bytes * 2, 64);
	return r->mr && r->buf ? 0 : -1;
}

static struct ib_qp *pp_qp(struct pp_res *r)
{
	struct ib_qp_init_attr ia;
	memset(&ia, 0, sizeof ia);
	ia.send_cq = r->cq;
	ia.recv_cq = r->cq;
	ia.cap.max_send_wr = 4;
	ia.cap.max_recv_wr = 4;
	ia.cap.max_send_sge = 1;
	ia.cap.max_recv_sge = 1;
	ia.sq_sig_type = IB_SIGNAL_ALL_WR;
	ia.qp_type = IB_QPT_RC;
	return ib_create_qp(r->pd, &ia);
}

static void pp_close(struct pp_res *r)
{
	if (r->mr)
		ib_dereg_mr(r->mr);
	if (r->cq)
		ib_destroy_cq(r->cq);
	if (r->pd)
		ib_dealloc_pd(r->pd);
	if (r->buf)
		nicsim_free(r->buf);
}

static int pp_post(struct pp_res *r, int recv, int bytes)
{
	struct ib_sge sge;
	sge.addr = (u64)(unsigned long)(r->buf + (recv ? bytes : 0));
	sge.length = (u32)bytes;
	sge.lkey = r->mr->lkey;
	if (recv) {
		struct ib_recv_wr wr, *bad;
		memset(&wr, 0, sizeof wr);
		wr.wr_id = 2;
		wr.sg_list = &sge;
		wr.num_sge = 1;
		return ib_post_recv(r->qp, &wr, &bad);
	} else {
		struct ib_send_wr wr, *bad;
		memset(&wr, 0, sizeof wr);
		wr.wr_id = 1;
		wr.sg_list = &sge;
		wr.num_sge = 1;
		wr.opcode = IB_WR_SEND;
		wr.send_flags = IB_SEND_SIGNALED;
		return ib_post_send(r->qp, &wr, &bad);
	}
}

/* Waits for the completion with wr_id `want`; 0 when it succeeded. */
static int pp_wait_wc(struct pp_res *r, u64 want)
{
	struct ib_wc wc;
	int spins;
	for (spins = 0; spins < 1000000; ++spins) {
		int n = ib_poll_cq(r->cq, 1, &wc);
		if (n < 0)
			return -1;
		if (n == 1 && wc.wr_id == want)
			return wc.status == IB_WC_SUCCESS ? 0 : -1;
		if (n == 0)
			nicsim_sleep_ns(200);
	}
	return -1;
}

static int pp_wait_flag(volatile int *flag, int value)
{
	int spins;
	for (spins = 0; spins < 2000000 && *flag < value; ++spins)
		nicsim_sleep_ns(500);
	return *flag >= value ? 0 : -1;
}


static unsigned int default_ip(unsigned int node)
{
	return 0x0a000000u + node + 1;
}

static void put_ip(struct sockaddr_in *sin, unsigned int ip)
{
	unsigned char *p = (unsigned char *)&sin->sin_addr.s_addr;
	memset(sin, 0, sizeof *sin);
	sin->sin_family = AF_INET;
	p[0] = (unsigned char)(ip >> 24);
	p[1] = (unsigned char)(ip >> 16);
	p[2] = (unsigned char)(ip >> 8);
	p[3] = (unsigned char)ip;
}

/* ---- server (rank 0) ----------------------------------------------------- */
struct pp_conn {
	int events, last;
};

struct pp_server_state {
	int requests, rarp_done;
	unsigned int rarp_ip;
	union ib_cma_id ids[64];
	unsigned char priv[64][IB_CMA_REQ_PRIVATE_DATA_SIZE];
	struct pp_conn conns[64];
};

static void on_request(union ib_cma_id *cma_id, void *private_data, void *context)
{
	struct pp_server_state *st = context;
	int slot = st->requests % 64;
	st->ids[slot] = *cma_id;
	memcpy(st->priv[slot], private_data, IB_CMA_REQ_PRIVATE_DATA_SIZE);
	++st->requests;
}

static void on_accepted(enum ib_cma_event event, void *context)
{
	struct pp_conn *c = context;
	c->last = (int)event;
	++c->events;
}

static void on_rarp(struct sockaddr *src_ip, void *context)
{
	struct pp_server_state *st = context;
	if (src_ip) {
		const unsigned char *p = (const unsigned char *)&((struct sockaddr_in *)src_ip)->sin_addr.s_addr;
		st->rarp_ip = ((unsigned int)p[0] << 24) | ((unsigned int)p[1] << 16) | ((unsigned int)p[2] << 8) | p[3];
	}
	st->rarp_done = 1;
}

static int pp_check_rarp(struct pp_server_state *st, int slot)
{
	const unsigned char *q = st->priv[slot];
	unsigned int want = ((unsigned int)q[2] << 24) | ((unsigned int)q[3] << 16) | ((unsigned int)q[4] << 8) | q[5];
	if (ib_cma_get_src_ip(&st->ids[slot], on_rarp, st) || pp_wait_flag(&st->rarp_done, 1))
		return nicsim_log("server: ib_cma_get_src_ip did not answer"), -1;
	if (st->rarp_ip != want)
		return nicsim_log("server: src ip %08x, the client says %08x", st->rarp_ip, want), -1;
	nicsim_result("rarp_ok", 1, "");
	return 0;
}

/* One accepted connection: echo the client's payload, then disconnect. */
static int pp_serve_one(const struct pp_opts *o, struct pp_res *r, struct pp_server_state *st, int k)
{
	int slot = k % 64, i;
	struct pp_conn *c = &st->conns[slot];
	unsigned char rep[IB_CMA_REP_PRIVATE_DATA_SIZE];
	for (i = 0; i < (int)sizeof rep; ++i) /* depends on the client's rank and cycle */
		rep[i] = (unsigned char)(0xa0 + i + st->priv[slot][0] + st->priv[slot][1]);
	nicsim_sleep_ns(o->accept_delay_us * 1000);
	if (!(r->qp = pp_qp(r)))
		return nicsim_log("server: ib_create_qp failed"), -1;
	memset(c, 0, sizeof *c);
	if (ib_cma_accept(&st->ids[slot], r->qp, rep, sizeof rep, c, on_accepted))
		return nicsim_log("server: ib_cma_accept failed"), -1;
	if (o->accept_unreachable) {
		if (pp_wait_flag(&c->events, 1) || c->last != IB_CMA_EVENT_UNREACHABLE)
			return nicsim_log("server: no UNREACHABLE (event %d)", c->last), -1;
		nicsim_result("accept_unreachable_ns", (double)nicsim_now_ns(), "ns");
		ib_destroy_qp(r->qp);
		r->qp = NULL;
		return 0;
	}
	if (pp_wait_flag(&c->events, 1) || c->last != IB_CMA_EVENT_ESTABLISHED)
		return nicsim_log("server: no ESTABLISHED (event %d)", c->last), -1;
	if (pp_post(r, 1, o->bytes) || pp_wait_wc(r, 2))
		return nicsim_log("server: nothing received"), -1;
	for (i = 0; i < o->bytes; ++i)
		if (r->buf[o->bytes + i] != pattern(st->priv[slot][0], st->priv[slot][1], i))
			return nicsim_log("server: payload byte %d wrong", i), -1;
	memcpy(r->buf, r->buf + o->bytes, (size_t)o->bytes);
	if (pp_post(r, 0, o->bytes) || pp_wait_wc(r, 1))
		return nicsim_log("server: echo failed"), -1;
	if (o->by_server && ib_cma_disconnect(r->qp, &st->ids[slot]))
		return nicsim_log("server: ib_cma_disconnect failed"), -1;
	if (pp_wait_flag(&c->events, 2) || c->last != IB_CMA_EVENT_DISCONNECTED)
		return nicsim_log("server: no DISCONNECTED (event %d)", c->last), -1;
	if (ib_destroy_qp(r->qp))
		return nicsim_log("server: ib_destroy_qp failed"), -1;
	r->qp = NULL;
	return 0;
}

static int pp_server(const struct pp_opts *o)
{
	struct pp_server_state *st = nicsim_alloc(sizeof *st, 64);
	struct pp_res r;
	struct sockaddr_in any;
	union ib_cma_id lid;
	int k, total = (int)(nicsim_workload_size() - 1) * o->cycles, rc = 0;
	memset(&r, 0, sizeof r);
	put_ip(&any, default_ip(nicsim_node_id()));
	if (!st || ib_cma_get_device((struct sockaddr *)&any, &r.dev) || pp_open(&r, o->bytes))
		return nicsim_log("server: no device"), 1;
	if (ib_cma_sid_listen(NULL, be64_of(o->sid), st, on_request, &lid))
		return nicsim_log("server: ib_cma_sid_listen failed"), 1;
	nicsim_barrier();
	if (o->requests >= 0)
		total = o->requests;
	for (k = 0; k < total && !rc; ++k) {
		int slot = k % 64;
		if (pp_wait_flag(&st->requests, k + 1))
			return nicsim_log("server: request %d never came", k), 1;
		if (o->rarp && k == 0 && pp_check_rarp(st, slot))
			rc = 1;
		else if (o->reject)
			rc = ib_cma_reject(&st->ids[slot], "no, thanks", 10) ? 1 : 0;
		else
			rc = pp_serve_one(o, &r, st, k) ? 1 : 0;
	}
	nicsim_barrier();
	if (ib_cma_sid_destroy(&lid))
		rc = 1;
	pp_close(&r);
	nicsim_free(st);
	nicsim_sleep_ns(o->linger_us * 1000);
	return rc;
}

/* ---- clients ------------------------------------------------------------- */
struct pp_client_state {
	int events, last;
	unsigned char priv[IB_CMA_REP_PRIVATE_DATA_SIZE];
	int has_priv;
};

static void on_client_event(enum ib_cma_event event, void *context, void *private_data)
{
	struct pp_client_state *st = context;
	st->last = (int)event;
	if (private_data && !st->events) {
		memcpy(st->priv, private_data, event == IB_CMA_EVENT_REJECTED ? IB_CMA_REJ_PRIVATE_DATA_SIZE
									       : IB_CMA_REP_PRIVATE_DATA_SIZE);
		st->has_priv = 1;
	}
	++st->events;
}

static int pp_check_first(const struct pp_opts *o, struct pp_client_state *st, int k)
{
	int i;
	if (st->last != (int)o->expect)
		return nicsim_log("client: event %d, expected %d", st->last, (int)o->expect), -1;
	if (o->expect == IB_CMA_EVENT_REJECTED && o->reject)
		return st->has_priv && !memcmp(st->priv, "no, thanks", 10) ? 0
									: (nicsim_log("client: REJ private data wrong"), -1);
	if (o->expect != IB_CMA_EVENT_ESTABLISHED)
		return 0;
	for (i = 0; i < IB_CMA_REP_PRIVATE_DATA_SIZE; ++i)
		if (!st->has_priv || st->priv[i] != (unsigned char)(0xa0 + i + k))
			return nicsim_log("client: REP private data byte %d wrong", i), -1;
	return 0;
}

static int pp_exchange(const struct pp_opts *o, struct pp_res *r, struct pp_client_state *st, union ib_cma_id *id,
		       int cycle)
{
	int i, rank = (int)nicsim_workload_rank();
	for (i = 0; i < o->bytes; ++i)
		r->buf[i] = pattern(rank, cycle, i);
	if (pp_post(r, 1, o->bytes) || pp_post(r, 0, o->bytes) || pp_wait_wc(r, 1) || pp_wait_wc(r, 2))
		return nicsim_log("client: exchange failed"), -1;
	for (i = 0; i < o->bytes; ++i)
		if (r->buf[o->bytes + i] != pattern(rank, cycle, i))
			return nicsim_log("client: echo byte %d wrong", i), -1;
	if (!o->by_server && ib_cma_disconnect(r->qp, id))
		return nicsim_log("client: ib_cma_disconnect failed"), -1;
	if (pp_wait_flag(&st->events, 2) || st->last != IB_CMA_EVENT_DISCONNECTED)
		return nicsim_log("client: no DISCONNECTED"), -1;
	return 0;
}

static int pp_cycle(const struct pp_opts *o, struct pp_res *r, unsigned int dst, int cycle, int k)
{
	struct pp_client_state st;
	struct ib_cma_conn cc;
	struct sockaddr_in sin;
	union ib_cma_id id;
	unsigned char req[IB_CMA_REQ_PRIVATE_DATA_SIZE];
	unsigned int me = default_ip(nicsim_node_id());
	unsigned long long t0 = nicsim_now_ns();
	int rc = 0, i;
	memset(&st, 0, sizeof st);
	memset(&cc, 0, sizeof cc);
	put_ip(&sin, dst);
	req[0] = (unsigned char)nicsim_workload_rank();
	req[1] = (unsigned char)cycle;
	req[2] = (unsigned char)(me >> 24), req[3] = (unsigned char)(me >> 16);
	req[4] = (unsigned char)(me >> 8), req[5] = (unsigned char)me;
	for (i = 6; i < (int)sizeof req; ++i)
		req[i] = (unsigned char)i;
	if (!(r->qp = pp_qp(r)))
		return nicsim_log("client: ib_create_qp failed"), -1;
	cc.qp = r->qp;
	cc.dst_ip = (struct sockaddr *)&sin;
	cc.service_id = be64_of(o->connect_sid);
	cc.context = &st;
	cc.cma_event_handler = on_client_event;
	cc.private_data = req;
	cc.private_data_len = sizeof req;
	cc.timeout = o->timeout_ms;
	if (ib_cma_connect(&cc, &id))
		return nicsim_log("client: ib_cma_connect failed"), -1;
	if (pp_wait_flag(&st.events, 1) || pp_check_first(o, &st, k))
		rc = -1;
	if (cycle == 0)
		nicsim_result("connect_ns", (double)(nicsim_now_ns() - t0), "ns");
	if (!rc && o->expect == IB_CMA_EVENT_ESTABLISHED && !o->established_only)
		rc = pp_exchange(o, r, &st, &id, cycle);
	if (ib_destroy_qp(r->qp))
		rc = -1;
	r->qp = NULL;
	return rc;
}

static int pp_client(const struct pp_opts *o)
{
	struct pp_res r;
	struct sockaddr_in sin;
	unsigned int dst = o->dst_ip ? o->dst_ip : default_ip(nicsim_workload_node(0));
	unsigned long long t0;
	int c, ok = 0;
	memset(&r, 0, sizeof r);
	put_ip(&sin, dst);
	if (ib_cma_get_device((struct sockaddr *)&sin, &r.dev) || pp_open(&r, o->bytes))
		return nicsim_log("client: no device"), 1;
	nicsim_barrier();
	nicsim_sleep_ns(o->delay_us * 1000);
	t0 = nicsim_now_ns();
	for (c = 0; c < o->cycles; ++c) {
		if (pp_cycle(o, &r, dst, c, (int)nicsim_workload_rank() + c))
			break;
		++ok;
	}
	nicsim_result("cycles_ok", ok, "cycles");
	nicsim_result("cycle_ns", (double)(nicsim_now_ns() - t0) / (ok ? ok : 1), "ns");
	nicsim_barrier();
	pp_close(&r);
	nicsim_sleep_ns(o->linger_us * 1000);
	return ok == o->cycles ? 0 : 1;
}

static int check_options(int argc, char **argv)
{
	struct pp_opts o;
	memset(&o, 0, sizeof o);
	return pp_parse(argc, argv, &o);
}

static int cma_pingpong_main(int argc, char **argv)
{
	struct pp_opts o;
	memset(&o, 0, sizeof o);
	if (pp_parse(argc, argv, &o))
		return 2;
	if (o.role == 1 || (o.role == 0 && nicsim_workload_rank() == 0))
		return pp_server(&o);
	return pp_client(&o);
}

__attribute__((constructor)) static void reg(void)
{
	nicsim_register_program_checked("cma_pingpong", cma_pingpong_main, check_options,
				"connect with the CMA (rdma/ib_cma.h), exchange a checked payload over the "
				"kernel verbs, disconnect; rank 0 listens, the others connect");
}
