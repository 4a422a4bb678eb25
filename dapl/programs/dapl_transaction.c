/*
 * dapl_transaction: the dapltest transaction test, over uDAPL 1.1. Rank 0
 * is the server, rank 1 the client; each has --eps EPs, each EP served by
 * its own thread. Every iteration is one operation by size, in turn a
 * SEND/RECV exchange (SR), an RDMA write (RW) or an RDMA read (RR), each
 * closed by a barrier SR: the server checks what an RW left in its region,
 * refills the region for the next RR, and answers. Every byte is checked.
 *
 * The connection path under test (--path):
 *   accept    PSP (consumer flag), the server accepts with private data
 *   provider  PSP with DAT_PSP_PROVIDER_FLAG: the provider's EP (no PZ, no
 *             QP) is given a PZ and EVDs with dat_ep_modify, then accepted
 *   rsp       one RSP per EP (one shot)
 *   reject    the server rejects: the client sees PEER_REJECTED
 *   noport    the client connects to a qualifier nobody listens on:
 *             NON_PEER_REJECTED
 *   timeout   the server never answers: the client's connect timer fires,
 *             TIMED_OUT, the EP is UNCONNECTED and its RECV flushed
 *   abrupt    as accept, but the client disconnects abruptly
 * In every connected path the server's last RECV completes flushed when
 * the connection goes.
 *
 * Arguments: --path=P (accept), --eps=N (2), --iters=N (100),
 * --max-size=N (4096), --ops=srw (s: SR, w: RW, r: RR; all three).
 * Results: transactions (client), bytes_checked, path_ok.
 */
#include <stdio.h>
#include <stdlib.h>

#include "dapl_common.h"

#define DT_MAX_EPS 16
#define DT_QUAL 0x4441504cull
#define DT_HDR 8

enum dt_path { P_ACCEPT, P_PROVIDER, P_RSP, P_REJECT, P_NOPORT, P_TIMEOUT, P_ABRUPT };
enum dt_op { OP_SR, OP_RW, OP_RR };

struct dt_opts {
	enum dt_path path;
	int eps, iters, max_size, ops[3], nops;
};

struct dt_side {
	const struct dt_opts *o;
	DAT_IA_HANDLE ia;
	DAT_PZ_HANDLE pz;
	struct dt_ep e[DT_MAX_EPS];
	int idx, failed;
	long long transactions, bytes;
};

struct dt_thread_arg {
	struct dt_side *side;
	int i;
};

static unsigned char client_byte(int i, int k, int j) { return (unsigned char)(0x11 * i + 7 * k + j); }
static unsigned char server_byte(int i, int k, int j) { return (unsigned char)(0x5a ^ (13 * i + 3 * k + j)); }
static int size_of(const struct dt_opts *o, int i, int k) { return 1 + (k * 7919 + i * 131) % o->max_size; }

/* The numeric options; 1 taken, 0 another option, -1 a bad value (failed). */
static int parse_number(const char *a, struct dt_opts *o)
{
	uint64_t v;
	int got;
	if ((got = nicsim_arg_u64(a, "--eps=", 1, DT_MAX_EPS, &v)) != 0)
		o->eps = (int)v;
	else if ((got = nicsim_arg_u64(a, "--iters=", 0, 1000000000, &v)) != 0)
		o->iters = (int)v;
	else if ((got = nicsim_arg_u64(a, "--max-size=", 1, 1 << 20, &v)) != 0)
		o->max_size = (int)v;
	return got;
}

static int parse(int argc, char **argv, struct dt_opts *o)
{
	static const char *const paths[] = {"accept", "provider", "rsp", "reject", "noport", "timeout", "abrupt"};
	const char *ops = "swr";
	int i, p, got;
	o->path = P_ACCEPT, o->eps = 2, o->iters = 100, o->max_size = 4096;
	for (i = 1; i < argc; ++i) {
		const char *a = argv[i];
		if (!strncmp(a, "--path=", 7)) {
			for (p = 0; p < 7 && strcmp(a + 7, paths[p]); ++p)
				;
			if (p == 7)
				return nicsim_log("dapl_transaction: unknown path %s", a + 7), 1;
			o->path = (enum dt_path)p;
		} else if (!strncmp(a, "--ops=", 6)) {
			ops = a + 6;
		} else if ((got = parse_number(a, o)) <= 0) {
			return got < 0 ? 1 : (nicsim_log("dapl_transaction: unknown argument %s", a), 1);
		}
	}
	for (o->nops = 0; *ops && o->nops < 3; ++ops) {
		if (*ops != 's' && *ops != 'w' && *ops != 'r')
			return nicsim_fail("dapl_transaction: --ops takes one to three of s, w and r"), 1;
		o->ops[o->nops++] = *ops == 's' ? OP_SR : *ops == 'w' ? OP_RW : OP_RR;
	}
	if (!o->nops || *ops)
		return nicsim_fail("dapl_transaction: --ops takes one to three of s, w and r"), 1;
	return 0;
}

static int post_recv(struct dt_ep *e, DAT_UINT64 cookie)
{
	DAT_LMR_TRIPLET iov = dt_iov(e, dt_recv_area(e), e->half);
	DAT_DTO_COOKIE c;
	c.as_64 = cookie;
	DT_CHECK(dat_ep_post_recv(e->ep, 1, &iov, c, DAT_COMPLETION_DEFAULT_FLAG));
	return 0;
}

static int post_send(struct dt_ep *e, DAT_VLEN len, DAT_UINT64 cookie)
{
	DAT_LMR_TRIPLET iov = dt_iov(e, dt_send_area(e), len);
	DAT_DTO_COOKIE c;
	c.as_64 = cookie;
	DT_CHECK(dat_ep_post_send(e->ep, 1, &iov, c, DAT_COMPLETION_DEFAULT_FLAG));
	return 0;
}

/* ---- server ----------------------------------------------------------- */

static void fill_server_region(struct dt_ep *e, int i, int k, int n)
{
	int j;
	for (j = 0; j < n; ++j)
		dt_rdma_area(e)[j] = server_byte(i, k, j);
}

/* One barrier or SR message: check what it asks, answer it. */
static int serve_one(struct dt_side *s, int i, int k)
{
	struct dt_ep *e = &s->e[i];
	unsigned char *m = dt_recv_area(e);
	DAT_VLEN got = 0;
	int op, size, j, reply = DT_HDR;
	if (dt_wait_dto(e, 2000 + (DAT_UINT64)k, &got))
		return 1;
	op = m[4];
	size = (m[5] << 16) | (m[6] << 8) | m[7];
	if (m[0] != (unsigned char)k || size != size_of(s->o, i, k))
		return nicsim_log("server ep %d: message %d is for %d", i, k, m[0]), 1;
	if (op == OP_SR) {
		if ((int)got != DT_HDR + size)
			return nicsim_log("server ep %d: SR %d carried %llu bytes", i, k, (unsigned long long)got), 1;
		for (j = 0; j < size; ++j)
			if (m[DT_HDR + j] != client_byte(i, k, j))
				return nicsim_log("server ep %d: SR %d byte %d wrong", i, k, j), 1;
		memcpy(dt_send_area(e) + DT_HDR, m + DT_HDR, (size_t)size);
		reply += size;
	}
	if (op == OP_RW)
		for (j = 0; j < size; ++j)
			if (dt_rdma_area(e)[j] != client_byte(i, k, j))
				return nicsim_log("server ep %d: RW %d byte %d wrong", i, k, j), 1;
	s->bytes += size;
	fill_server_region(e, i, k, s->o->max_size);
	memcpy(dt_send_area(e), m, DT_HDR);
	if (post_recv(e, 2000 + (DAT_UINT64)k + 1) || post_send(e, (DAT_VLEN)reply, 3000 + (DAT_UINT64)k) ||
	    dt_wait_dto(e, 3000 + (DAT_UINT64)k, NULL))
		return 1;
	return 0;
}

/* The end of a connection: DISCONNECTED, and the last RECV flushed. */
static int wait_gone(struct dt_ep *e, int expect_flush)
{
	DAT_EVENT ev;
	if (dt_wait(e->conn_evd, DAT_CONNECTION_EVENT_DISCONNECTED, &ev, 1000000))
		return 1;
	if (!expect_flush)
		return 0;
	if (dt_wait(e->dto_evd, DAT_DTO_COMPLETION_EVENT, &ev, 1000000))
		return 1;
	if (ev.event_data.dto_completion_event_data.status != DAT_DTO_ERR_FLUSHED)
		return nicsim_log("the last RECV ended with status %d, not flushed",
				  (int)ev.event_data.dto_completion_event_data.status),
		       1;
	return 0;
}

static void server_thread(void *arg)
{
	struct dt_thread_arg *t = (struct dt_thread_arg *)arg;
	struct dt_side *s = t->side;
	struct dt_ep *e = &s->e[t->i];
	DAT_EVENT ev;
	int k;
	if (dt_wait(e->conn_evd, DAT_CONNECTION_EVENT_ESTABLISHED, &ev, 1000000)) {
		s->failed = 1;
		return;
	}
	for (k = 0; k < s->o->iters; ++k)
		if (serve_one(s, t->i, k)) {
			s->failed = 1;
			return;
		}
	if (wait_gone(e, 1))
		s->failed = 1;
}

/* Disconnecting an unconnected EP takes its RECVs off, flushed. */
static int wait_flushed_after_disconnect(struct dt_ep *e)
{
	DAT_EVENT ev;
	DT_CHECK(dat_ep_disconnect(e->ep, DAT_CLOSE_ABRUPT_FLAG));
	if (dt_wait(e->dto_evd, DAT_DTO_COMPLETION_EVENT, &ev, 1000000))
		return 1;
	if (ev.event_data.dto_completion_event_data.status != DAT_DTO_ERR_FLUSHED)
		return nicsim_log("RECV of an unconnected EP: status %d", (int)ev.event_data.dto_completion_event_data.status), 1;
	return 0;
}

/* Gives the provider's EP a PZ and this side's EVDs, then posts its RECV. */
static int adopt_provider_ep(struct dt_side *s, struct dt_ep *e, DAT_EP_HANDLE ep)
{
	DAT_EP_PARAM p;
	DAT_EP_STATE st;
	DAT_DTO_COOKIE none;
	memset(&p, 0, sizeof p);
	DT_CHECK(dat_ep_get_status(ep, &st, NULL, NULL));
	if (st != DAT_EP_STATE_PASSIVE_CONNECTION_PENDING)
		return nicsim_log("provider EP in state %d", (int)st), 1;
	none.as_64 = 0;
	if (dat_ep_post_recv(ep, 0, NULL, none, DAT_COMPLETION_DEFAULT_FLAG) !=
	    (DAT_CLASS_ERROR | DAT_INVALID_STATE | DAT_INVALID_STATE_EP_NOTREADY))
		return nicsim_log("a RECV on the provider's EP before it has a PZ was not refused"), 1;
	p.pz_handle = s->pz;
	p.recv_evd_handle = e->dto_evd;
	p.request_evd_handle = e->dto_evd;
	p.connect_evd_handle = e->conn_evd;
	DT_CHECK(dat_ep_modify(ep, (DAT_EP_PARAM_MASK)(DAT_EP_FIELD_PZ_HANDLE | DAT_EP_FIELD_RECV_EVD_HANDLE |
						      DAT_EP_FIELD_REQUEST_EVD_HANDLE | DAT_EP_FIELD_CONNECT_EVD_HANDLE),
			       &p));
	e->ep = ep;
	return post_recv(e, 2000);
}

/* Takes one connection request and answers it as the path says. */
static int answer_request(struct dt_side *s, DAT_EVD_HANDLE cr_evd, DAT_CR_HANDLE *held)
{
	DAT_EVENT ev;
	DAT_CR_PARAM cp;
	unsigned char priv[13];
	struct dt_ep *e;
	int idx;
	if (dt_wait(cr_evd, DAT_CONNECTION_REQUEST_EVENT, &ev, 1000000))
		return 1;
	DT_CHECK(dat_cr_query(ev.event_data.cr_arrival_event_data.cr_handle, DAT_CR_FIELD_ALL, &cp));
	if (cp.private_data_size != 13 || ((struct sockaddr_in *)cp.remote_ia_address_ptr)->sin_addr.s_addr !=
						  htonl(dt_node_ip(nicsim_workload_node(1))))
		return nicsim_log("request: %d bytes of private data, or the wrong address", cp.private_data_size), 1;
	idx = ((unsigned char *)cp.private_data)[0];
	if (idx >= s->o->eps)
		return nicsim_log("request for EP %d", idx), 1;
	e = &s->e[idx];
	if (s->o->path == P_REJECT) {
		DT_CHECK(dat_cr_reject(ev.event_data.cr_arrival_event_data.cr_handle));
		return 0;
	}
	if (s->o->path == P_TIMEOUT) {
		*held = ev.event_data.cr_arrival_event_data.cr_handle;
		return 0;
	}
	if (s->o->path == P_PROVIDER && adopt_provider_ep(s, e, cp.local_ep_handle))
		return 1;
	dt_get_region((unsigned char *)cp.private_data + 1, e);
	priv[0] = (unsigned char)idx;
	dt_put_region(priv + 1, e);
	DT_CHECK(dat_cr_accept(ev.event_data.cr_arrival_event_data.cr_handle,
			       s->o->path == P_PROVIDER || s->o->path == P_RSP ? DAT_HANDLE_NULL : e->ep, 13, priv));
	return 0;
}

static int server_listen(struct dt_side *s, DAT_EVD_HANDLE cr_evd, DAT_HANDLE *sps)
{
	int i;
	if (s->o->path == P_RSP) {
		for (i = 0; i < s->o->eps; ++i)
			DT_CHECK(dat_rsp_create(s->ia, DT_QUAL + (DAT_CONN_QUAL)i, s->e[i].ep, cr_evd, &sps[i]));
		return 0;
	}
	DT_CHECK(dat_psp_create(s->ia, DT_QUAL, cr_evd,
				s->o->path == P_PROVIDER ? DAT_PSP_PROVIDER_FLAG : DAT_PSP_CONSUMER_FLAG, &sps[0]));
	return 0;
}

static int server_free(struct dt_side *s, DAT_EVD_HANDLE cr_evd, DAT_HANDLE *sps)
{
	int i;
	for (i = 0; i < (s->o->path == P_RSP ? s->o->eps : 1); ++i)
		DT_CHECK(s->o->path == P_RSP ? dat_rsp_free(sps[i]) : dat_psp_free(sps[i]));
	for (i = 0; i < s->o->eps; ++i)
		if (dt_ep_close(&s->e[i]))
			return 1;
	DT_CHECK(dat_evd_free(cr_evd));
	DT_CHECK(dat_pz_free(s->pz));
	DT_CHECK(dat_ia_close(s->ia, DAT_CLOSE_GRACEFUL_FLAG));
	return 0;
}

static int run_server(struct dt_side *s)
{
	const struct dt_opts *o = s->o;
	DAT_EVD_HANDLE async = DAT_HANDLE_NULL, cr_evd;
	DAT_HANDLE sps[DT_MAX_EPS];
	DAT_CR_HANDLE held[DT_MAX_EPS];
	struct dt_thread_arg args[DT_MAX_EPS];
	nicsim_thread_t threads[DT_MAX_EPS];
	int i, connected = o->path == P_ACCEPT || o->path == P_PROVIDER || o->path == P_RSP || o->path == P_ABRUPT;
	int requests = o->path == P_NOPORT ? 0 : o->eps;
	DT_CHECK(dat_ia_open("ib0", 16, &async, &s->ia));
	DT_CHECK(dat_pz_create(s->ia, &s->pz));
	DT_CHECK(dat_evd_create(s->ia, 64, DAT_HANDLE_NULL, DAT_EVD_CR_FLAG, &cr_evd));
	for (i = 0; i < o->eps; ++i) {
		if (dt_ep_open(s->ia, s->pz, &s->e[i], (DAT_VLEN)(DT_HDR + o->max_size), o->path != P_PROVIDER))
			return 1;
		fill_server_region(&s->e[i], i, -1, o->max_size);
		if (o->path != P_PROVIDER && post_recv(&s->e[i], 2000)) /* RECVs before the connection */
			return 1;
	}
	if (server_listen(s, cr_evd, sps))
		return 1;
	nicsim_barrier();
	for (i = 0; i < requests; ++i)
		if (answer_request(s, cr_evd, &held[i]))
			return 1;
	for (i = 0; connected && i < o->eps; ++i) {
		args[i].side = s, args[i].i = i;
		threads[i] = nicsim_thread_spawn(server_thread, &args[i], "dapl_server_ep");
	}
	for (i = 0; connected && i < o->eps; ++i)
		nicsim_thread_join(threads[i]);
	nicsim_barrier(); /* the client is done */
	for (i = 0; o->path == P_TIMEOUT && i < o->eps; ++i)
		DT_CHECK(dat_cr_reject(held[i]));
	if (!connected)
		for (i = 0; i < o->eps; ++i)
			if (o->path != P_PROVIDER && wait_flushed_after_disconnect(&s->e[i]))
				return 1;
	nicsim_result("bytes_checked", (double)s->bytes, "bytes");
	return s->failed || server_free(s, cr_evd, sps);
}

/* ---- client ----------------------------------------------------------- */

/* One operation of iteration k and its barrier; every byte checked. */
static int client_op(struct dt_side *s, int i, int k)
{
	struct dt_ep *e = &s->e[i];
	const int op = s->o->ops[k % s->o->nops], size = size_of(s->o, i, k);
	unsigned char *m = dt_send_area(e);
	int j, len = DT_HDR;
	DAT_VLEN got = 0;
	DAT_RMR_TRIPLET r;
	DAT_LMR_TRIPLET l;
	DAT_DTO_COOKIE c;
	r.rmr_context = e->peer_rkey, r.pad = 0, r.target_address = e->peer_addr, r.segment_length = (DAT_VLEN)size;
	c.as_64 = 4000 + (DAT_UINT64)k;
	for (j = 0; j < size; ++j)
		m[DT_HDR + j] = client_byte(i, k, j);
	if (op == OP_SR)
		len += size;
	if (op == OP_RW) {
		l = dt_iov(e, m + DT_HDR, (DAT_VLEN)size);
		DT_CHECK(dat_ep_post_rdma_write(e->ep, 1, &l, c, &r, DAT_COMPLETION_DEFAULT_FLAG));
		if (dt_wait_dto(e, c.as_64, NULL))
			return 1;
	}
	if (op == OP_RR) {
		l = dt_iov(e, dt_rdma_area(e), (DAT_VLEN)size);
		DT_CHECK(dat_ep_post_rdma_read(e->ep, 1, &l, c, &r, DAT_COMPLETION_DEFAULT_FLAG));
		if (dt_wait_dto(e, c.as_64, &got))
			return 1;
		for (j = 0; j < size; ++j)
			if (dt_rdma_area(e)[j] != server_byte(i, k - 1, j))
				return nicsim_log("client ep %d: RR %d byte %d wrong", i, k, j), 1;
	}
	m[0] = (unsigned char)k, m[1] = m[2] = m[3] = 0, m[4] = (unsigned char)op;
	m[5] = (unsigned char)(size >> 16), m[6] = (unsigned char)(size >> 8), m[7] = (unsigned char)size;
	/* the RECV for this answer was posted before (the first before connecting) */
	if (post_send(e, (DAT_VLEN)len, 6000 + (DAT_UINT64)k) || dt_wait_dto(e, 6000 + (DAT_UINT64)k, NULL) ||
	    dt_wait_dto(e, 5000 + (DAT_UINT64)k, &got))
		return 1;
	if ((int)got != len || dt_recv_area(e)[0] != (unsigned char)k)
		return nicsim_log("client ep %d: answer %d is %llu bytes", i, k, (unsigned long long)got), 1;
	for (j = 0; op == OP_SR && j < size; ++j)
		if (dt_recv_area(e)[DT_HDR + j] != client_byte(i, k, j))
			return nicsim_log("client ep %d: echo %d byte %d wrong", i, k, j), 1;
	s->bytes += size;
	++s->transactions;
	return k + 1 < s->o->iters ? post_recv(e, 5000 + (DAT_UINT64)k + 1) : 0;
}

static void client_thread(void *arg)
{
	struct dt_thread_arg *t = (struct dt_thread_arg *)arg;
	struct dt_side *s = t->side;
	struct dt_ep *e = &s->e[t->i];
	int k;
	for (k = 0; k < s->o->iters; ++k)
		if (client_op(s, t->i, k)) {
			s->failed = 1;
			return;
		}
	if (dat_ep_disconnect(e->ep, s->o->path == P_ABRUPT ? DAT_CLOSE_ABRUPT_FLAG : DAT_CLOSE_GRACEFUL_FLAG) ||
	    wait_gone(e, 0))
		s->failed = 1;
}

/* A connect that timed out leaves the EP's QP in ERROR: its RECV flushed. */
static int wait_flushed_after_timeout(struct dt_ep *e)
{
	DAT_EVENT ev;
	if (dt_wait(e->dto_evd, DAT_DTO_COMPLETION_EVENT, &ev, 1000000))
		return 1;
	if (ev.event_data.dto_completion_event_data.status != DAT_DTO_ERR_FLUSHED ||
	    ev.event_data.dto_completion_event_data.user_cookie.as_64 != 5000)
		return nicsim_log("after the timeout: status %d", (int)ev.event_data.dto_completion_event_data.status), 1;
	return 0;
}

/* The connection event the path expects, and what it leaves. */
static int client_connected(struct dt_side *s, int i)
{
	static const DAT_EVENT_NUMBER expect[] = {
		DAT_CONNECTION_EVENT_ESTABLISHED,	DAT_CONNECTION_EVENT_ESTABLISHED, DAT_CONNECTION_EVENT_ESTABLISHED,
		DAT_CONNECTION_EVENT_PEER_REJECTED,	DAT_CONNECTION_EVENT_NON_PEER_REJECTED,
		DAT_CONNECTION_EVENT_TIMED_OUT,		DAT_CONNECTION_EVENT_ESTABLISHED};
	struct dt_ep *e = &s->e[i];
	DAT_EVENT ev;
	DAT_EP_STATE st;
	if (dt_wait(e->conn_evd, expect[s->o->path], &ev, 1000000))
		return 1;
	DT_CHECK(dat_ep_get_status(e->ep, &st, NULL, NULL));
	if (expect[s->o->path] == DAT_CONNECTION_EVENT_ESTABLISHED) {
		if (ev.event_data.connect_event_data.private_data_size != 13 ||
		    ((unsigned char *)ev.event_data.connect_event_data.private_data)[0] != i || st != DAT_EP_STATE_CONNECTED)
			return nicsim_log("client ep %d: ESTABLISHED without its private data", i), 1;
		dt_get_region((unsigned char *)ev.event_data.connect_event_data.private_data + 1, e);
		return 0;
	}
	if (s->o->path == P_TIMEOUT) /* UNCONNECTED, its RECV flushed */
		return st != DAT_EP_STATE_UNCONNECTED || wait_flushed_after_timeout(e);
	return st != DAT_EP_STATE_DISCONNECTED;
}

static int run_client(struct dt_side *s)
{
	const struct dt_opts *o = s->o;
	DAT_EVD_HANDLE async = DAT_HANDLE_NULL;
	struct dt_thread_arg args[DT_MAX_EPS];
	nicsim_thread_t threads[DT_MAX_EPS];
	struct sockaddr_in server;
	unsigned char priv[13];
	int i, connected = o->path == P_ACCEPT || o->path == P_PROVIDER || o->path == P_RSP || o->path == P_ABRUPT;
	unsigned long long t0;
	dt_addr(&server, dt_node_ip(nicsim_workload_node(0)));
	DT_CHECK(dat_ia_open("ib0", 16, &async, &s->ia));
	DT_CHECK(dat_pz_create(s->ia, &s->pz));
	for (i = 0; i < o->eps; ++i)
		if (dt_ep_open(s->ia, s->pz, &s->e[i], (DAT_VLEN)(DT_HDR + o->max_size), 1) || post_recv(&s->e[i], 5000))
			return 1;
	nicsim_barrier();
	t0 = nicsim_now_ns();
	for (i = 0; i < o->eps; ++i) {
		DAT_CONN_QUAL q = DT_QUAL + (o->path == P_RSP ? (DAT_CONN_QUAL)i : 0) + (o->path == P_NOPORT ? 0x100 : 0);
		priv[0] = (unsigned char)i;
		dt_put_region(priv + 1, &s->e[i]);
		DT_CHECK(dat_ep_connect(s->e[i].ep, (DAT_IA_ADDRESS_PTR)&server, q,
					o->path == P_TIMEOUT ? 300 : DAT_TIMEOUT_INFINITE, 13, priv, DAT_QOS_BEST_EFFORT,
					DAT_CONNECT_DEFAULT_FLAG));
		if (client_connected(s, i))
			return 1;
	}
	nicsim_result("connect_ns", (double)(nicsim_now_ns() - t0) / o->eps, "ns");
	if (connected) {
		for (i = 0; i < o->eps; ++i) {
			args[i].side = s, args[i].i = i;
			threads[i] = nicsim_thread_spawn(client_thread, &args[i], "dapl_client_ep");
		}
		for (i = 0; i < o->eps; ++i)
			nicsim_thread_join(threads[i]);
	}
	nicsim_barrier();
	nicsim_result("transactions", (double)s->transactions, "ops");
	for (i = 0; i < o->eps; ++i)
		if (dt_ep_close(&s->e[i]))
			return 1;
	DT_CHECK(dat_pz_free(s->pz));
	DT_CHECK(dat_ia_close(s->ia, DAT_CLOSE_GRACEFUL_FLAG));
	return s->failed;
}

static int check_options(int argc, char **argv)
{
	struct dt_opts o;
	memset(&o, 0, sizeof o);
	return parse(argc, argv, &o);
}

static int dapl_transaction_main(int argc, char **argv)
{
	struct dt_opts o;
	struct dt_side *s;
	int rc;
	memset(&o, 0, sizeof o);
	if (parse(argc, argv, &o))
		return 2;
	s = (struct dt_side *)nicsim_alloc(sizeof *s, 64);
	if (!s)
		return 1;
	memset(s, 0, sizeof *s);
	s->o = &o;
	rc = nicsim_workload_rank() == 0 ? run_server(s) : run_client(s);
	if (!rc)
		nicsim_result("path_ok", 1, "");
	nicsim_free(s);
	return rc;
}

__attribute__((constructor)) static void dapl_transaction_register(void)
{
	nicsim_register_program_checked("dapl_transaction", dapl_transaction_main, check_options,
				"the dapltest transaction test over uDAPL 1.1: SR, RW and RR by size on several EPs and "
				"threads, every byte checked. --path=accept (provider, rsp, reject, noport, timeout, "
				"abrupt: the connection path under test), --eps=2 (at most 16), --iters=100, --max-size=4096, --ops=srw "
				"(s: SR, w: RW, r: RR)");
}
