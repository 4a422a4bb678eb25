/*
 * common.c -- what the perftest-style programs share: arguments, the CA /
 * QP / buffer setup and connection, posting and polling with busy or
 * event-driven waiting, payload patterns and result reports.  See
 * perftest.h.
 */
#include "perftest.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- failures ---------------------------------------------------------------- */

int pt_fail(pt_ctx_t *c, const char *fmt, ...)
{
	char msg[256];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	nicsim_log("%s: %s", c ? c->opt.prog : "perftest", msg);
	if (!c || !c->failed)
		nicsim_fail(msg);
	if (c)
		c->failed = 1;
	return 1;
}

/* ---- arguments ----------------------------------------------------------------- */

void pt_defaults(pt_opts_t *o, const char *prog, uint32_t accepts)
{
	memset(o, 0, sizeof *o);
	o->prog = prog;
	o->accepts = accepts;
	o->iters = 1000;
	o->tx_depth = 64;
	o->rx_depth = 256;
	o->inline_size = 0;
	o->cq_mod = 16;
	o->timeout_ns = 100000000ull;   /* 100 ms without progress */
	o->port_wait_ns = 100000000ull; /* 100 ms for the subnet manager */
	o->ack_timeout = 14;            /* 4.096 us * 2^14: 67 ms */
	pt_set_sizes(o, "2,8,64,512,4096,65536");
}

static int parse_u64(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v;
	if (!s || !*s || *s == '-')
		return -1;
	v = strtoull(s, &end, 10);
	if (end == s)
		return -1;
	if (*end == 'k' || *end == 'K') {
		v <<= 10;
		++end;
	} else if (*end == 'm' || *end == 'M') {
		v <<= 20;
		++end;
	}
	if (*end)
		return -1;
	*out = v;
	return 0;
}

static int set_size_list(pt_opts_t *o, const uint32_t *sizes, uint32_t n)
{
	uint32_t i;
	if (n == 0)
		return -1;
	o->nsizes = n;
	o->max_size = 0;
	for (i = 0; i < n; i++) {
		o->sizes[i] = sizes[i];
		if (sizes[i] > o->max_size)
			o->max_size = sizes[i];
	}
	return 0;
}

int pt_set_sizes(pt_opts_t *o, const char *list)
{
	uint32_t sizes[PT_MAX_SIZES];
	uint32_t n = 0;
	const char *p = list;
	while (*p) {
		char item[32];
		size_t len = strcspn(p, ",");
		uint64_t v;
		if (len == 0 || len >= sizeof item || n == PT_MAX_SIZES)
			return -1;
		memcpy(item, p, len);
		item[len] = 0;
		if (parse_u64(item, &v) || v == 0 || v > PT_MAX_MSG)
			return -1;
		sizes[n++] = (uint32_t)v;
		p += len;
		if (*p == ',')
			++p;
	}
	return set_size_list(o, sizes, n);
}

static int is_pow2(uint64_t v) { return v && !(v & (v - 1)); }

int pt_parse(pt_opts_t *o, int argc, char **argv)
{
	uint64_t min = 0, max = 0;
	int i;
	for (i = 1; i < argc; i++) {
		const char *a = argv[i];
		const char *eq = strchr(a, '=');
		const char *val = eq ? eq + 1 : NULL;
		size_t nlen = eq ? (size_t)(eq - a) : strlen(a);
		uint64_t v = 0;
		int bad = 0;
#define PT_IS(name) (nlen == sizeof(name) - 1 && !strncmp(a, name, nlen))
		if (PT_IS("--sizes") && (o->accepts & PT_ARG_SIZES)) {
			bad = !val || pt_set_sizes(o, val);
		} else if (PT_IS("--min") && (o->accepts & PT_ARG_SIZES)) {
			bad = parse_u64(val, &min) || !is_pow2(min) || min > PT_MAX_MSG;
		} else if (PT_IS("--max") && (o->accepts & PT_ARG_SIZES)) {
			bad = parse_u64(val, &max) || !is_pow2(max) || max > PT_MAX_MSG;
		} else if (PT_IS("--iters")) {
			bad = parse_u64(val, &v) || v < 1 || v > 10000000;
			o->iters = (uint32_t)v;
		} else if (PT_IS("--tx-depth") && (o->accepts & PT_ARG_TX_DEPTH)) {
			bad = parse_u64(val, &v) || v < 1 || v > 16384;
			o->tx_depth = (uint32_t)v;
		} else if (PT_IS("--rx-depth") && (o->accepts & PT_ARG_RX_DEPTH)) {
			bad = parse_u64(val, &v) || v < 1 || v > 16384;
			o->rx_depth = (uint32_t)v;
		} else if (PT_IS("--inline") && (o->accepts & PT_ARG_INLINE)) {
			bad = parse_u64(val, &v) || v > 4096;
			o->inline_size = (uint32_t)v;
		} else if (PT_IS("--cq-mod") && (o->accepts & PT_ARG_CQ_MOD)) {
			bad = parse_u64(val, &v) || v < 1 || v > 16384;
			o->cq_mod = (uint32_t)v;
		} else if (PT_IS("--poll")) {
			if (val && !strcmp(val, "busy"))
				o->event = 0;
			else if (val && !strcmp(val, "event"))
				o->event = 1;
			else
				bad = 1;
		} else if (PT_IS("--bidirectional") && (o->accepts & PT_ARG_BIDIR)) {
			bad = val != NULL;
			o->bidir = 1;
		} else if (PT_IS("--atomic") && (o->accepts & PT_ARG_ATOMIC)) {
			if (val && !strcmp(val, "fadd"))
				o->cswap = 0;
			else if (val && !strcmp(val, "cswap"))
				o->cswap = 1;
			else
				bad = 1;
		} else if (PT_IS("--timeout-ms")) {
			bad = parse_u64(val, &v) || v < 1 || v > 100000;
			o->timeout_ns = v * 1000000ull;
		} else if (PT_IS("--ack-timeout") && (o->accepts & PT_ARG_ACK_TIMEOUT)) {
			bad = parse_u64(val, &v) || v < 1 || v > 31;
			o->ack_timeout = (uint32_t)v;
		} else if (PT_IS("--reconnects") && (o->accepts & PT_ARG_RECONNECT)) {
			bad = parse_u64(val, &v) || v > 1000000;
			o->reconnects = (uint32_t)v;
		} else if (PT_IS("--port-wait-ms")) {
			bad = parse_u64(val, &v) || v < 1 || v > 100000;
			o->port_wait_ns = v * 1000000ull;
		} else {
			char msg[160];
			snprintf(msg, sizeof msg, "%s: unknown argument '%s'", o->prog, a);
			nicsim_fail(msg);
			return -1;
		}
#undef PT_IS
		if (bad) {
			char msg[160];
			snprintf(msg, sizeof msg, "%s: bad value in '%s'", o->prog, a);
			nicsim_fail(msg);
			return -1;
		}
	}
	if (min || max) {
		uint32_t sizes[PT_MAX_SIZES];
		uint32_t n = 0;
		uint64_t s;
		if (!min)
			min = 2;
		if (!max)
			max = 65536;
		if (min > max) {
			nicsim_fail("perftest: --min is larger than --max");
			return -1;
		}
		for (s = min; s <= max && n < PT_MAX_SIZES; s <<= 1)
			sizes[n++] = (uint32_t)s;
		set_size_list(o, sizes, n);
	}
	if (o->cq_mod > o->tx_depth)
		o->cq_mod = o->tx_depth;
	return 0;
}

/* ---- callbacks (interrupt context: never block) -------------------------------- */

static void pt_completion_cb(void *cq_context)
{
	pt_cq_t *cq = (pt_cq_t *)cq_context;
	if (cq && cq->magic == PT_CQ_MAGIC) {
		cq->fired = 1;
		cq->armed = 0;
	}
}

static void pt_async_cb(const ib_event_rec_t *const rec)
{
	pt_ctx_t *c = NULL;
	uint32_t magic;
	if (!rec || !rec->context)
		return;
	memcpy(&magic, rec->context, sizeof magic);
	if (magic == PT_CTX_MAGIC)
		c = (pt_ctx_t *)rec->context;
	else if (magic == PT_CQ_MAGIC)
		c = ((pt_cq_t *)rec->context)->ctx;
	if (!c)
		return;
	switch (rec->type) {
	case IB_AE_PORT_ACTIVE:
		c->port_active = 1;
		return;
	case IB_AE_QP_COMM:             /* first packet in RTR: informational */
	case IB_AE_SQ_DRAINED:
		return;
	default:
		c->async_type = (int)rec->type;
		c->async_error = 1;
	}
}

/* ---- setup ------------------------------------------------------------------------ */

static uint32_t fnv1a(const char *s)
{
	uint32_t h = 2166136261u;
	while (*s)
		h = (h ^ (uint8_t)*s++) * 16777619u;
	return h;
}

static int query_lid(pt_ctx_t *c, uint16_t *lid)
{
	size_t size = 0;
	ib_ca_attr_t *attr;
	ib_api_status_t st = c->ci->query_ca(c->ca, NULL, &size, NULL);
	if (st != IB_INSUFFICIENT_MEMORY && st != IB_SUCCESS)
		return pt_fail(c, "query_ca: %s", ib_get_err_str(st));
	attr = (ib_ca_attr_t *)nicsim_alloc(size, 64);
	if (!attr)
		return pt_fail(c, "no node memory for the CA attributes (%zu bytes)", size);
	st = c->ci->query_ca(c->ca, attr, &size, NULL);
	if (st != IB_SUCCESS) {
		nicsim_free(attr);
		return pt_fail(c, "query_ca: %s", ib_get_err_str(st));
	}
	if (attr->num_ports < 1) {
		nicsim_free(attr);
		return pt_fail(c, "the CA has no ports");
	}
	*lid = cl_ntoh16(attr->p_port_attr[0].lid);
	if (attr->p_port_attr[0].link_state != IB_LINK_ACTIVE) {
		/* The subnet manager has not activated the port yet: wait for
		 * IB_AE_PORT_ACTIVE, then read the LID it assigned. */
		uint64_t waited = 0;
		while (!c->port_active && waited < c->opt.port_wait_ns) {
			nicsim_sleep_ns(PT_PORT_POLL_NS);
			waited += PT_PORT_POLL_NS;
		}
		if (!c->port_active) {
			nicsim_free(attr);
			return pt_fail(c, "port 1 did not become ACTIVE within %llu ms (link state %u): "
				       "the subnet manager's sweep has not activated it; is one running, "
				       "and does its first sweep of this fabric take longer (the summary's "
				       "first_sweep; wait longer with --port-wait-ms)?",
				       (unsigned long long)(c->opt.port_wait_ns / 1000000),
				       (unsigned)attr->p_port_attr[0].link_state);
		}
		st = c->ci->query_ca(c->ca, attr, &size, NULL);
		if (st != IB_SUCCESS) {
			nicsim_free(attr);
			return pt_fail(c, "query_ca: %s", ib_get_err_str(st));
		}
		*lid = cl_ntoh16(attr->p_port_attr[0].lid);
	}
	nicsim_free(attr);
	if (*lid == 0)
		return pt_fail(c, "port 1 has no LID");
	return 0;
}

static int make_cq(pt_ctx_t *c, pt_cq_t *cq, uint32_t size)
{
	ib_api_status_t st;
	cq->magic = PT_CQ_MAGIC;
	cq->ctx = c;
	cq->fired = 0;
	cq->armed = 0;
	cq->size = size;
	st = c->ci->create_cq(c->pd, cq, &cq->size, &cq->h, NULL);
	if (st != IB_SUCCESS)
		return pt_fail(c, "create_cq(%u): %s", size, ib_get_err_str(st));
	return 0;
}

int pt_open(pt_ctx_t *c, const pt_opts_t *o, uint32_t nodes, uint32_t sq_depth, uint32_t rq_depth, uint16_t *lid)
{
	ib_api_status_t st;
	memset(c, 0, sizeof *c);
	c->magic = PT_CTX_MAGIC;
	c->opt = *o;
	pt_touch(c);
	if (nodes ? nicsim_workload_size() != nodes : nicsim_workload_size() < 2)
		return nodes == 2 ? pt_fail(c, "needs a workload of exactly two nodes (client, server), got %u",
					    nicsim_workload_size())
				  : pt_fail(c, "needs a workload of %s%u nodes, got %u", nodes ? "" : "at least ",
					    nodes ? nodes : 2, nicsim_workload_size());
	c->rank = nicsim_workload_rank();
	c->peer = nicsim_workload_node(c->rank == 0 ? 1 : 0);
	c->ci = nicsim_ci_interface();
	if (!c->ci)
		return pt_fail(c, "node %s has no verbs provider (nic: \"hca\"?)", nicsim_node_name());
	st = c->ci->open_ca(c->ci->guid, pt_completion_cb, pt_async_cb, c, &c->ca);
	if (st != IB_SUCCESS)
		return pt_fail(c, "open_ca: %s", ib_get_err_str(st));
	if (query_lid(c, lid))
		return 1;
	st = c->ci->allocate_pd(c->ca, &c->pd, NULL);
	if (st != IB_SUCCESS)
		return pt_fail(c, "allocate_pd: %s", ib_get_err_str(st));
	return make_cq(c, &c->scq, sq_depth) || make_cq(c, &c->rcq, rq_depth) ? 1 : 0;
}

int pt_register(pt_ctx_t *c, size_t buf_len)
{
	ib_mr_create_t mc;
	ib_api_status_t st;
	c->buf_len = buf_len;
	c->buf = (uint8_t *)nicsim_alloc(buf_len, 4096);
	if (!c->buf)
		return pt_fail(c, "no node memory for a %zu-byte buffer", buf_len);
	memset(c->buf, 0, buf_len);
	mc.vaddr = c->buf;
	mc.length = buf_len;
	mc.access_ctrl = IB_AC_LOCAL_WRITE | IB_AC_RDMA_WRITE | IB_AC_RDMA_READ | IB_AC_ATOMIC;
	st = c->ci->register_mr(c->pd, &mc, &c->lkey, &c->rkey, &c->mr, NULL);
	if (st != IB_SUCCESS)
		return pt_fail(c, "register_mr(%zu bytes): %s", buf_len, ib_get_err_str(st));
	return 0;
}

int pt_create_qp(pt_ctx_t *c)
{
	ib_qp_create_t qc;
	ib_qp_attr_t qa;
	ib_api_status_t st;
	memset(&qc, 0, sizeof qc);
	qc.qp_type = IB_QPT_RELIABLE_CONN;
	qc.sq_depth = c->sq_depth;
	qc.rq_depth = c->rq_depth;
	qc.sq_sge = c->sq_sge;
	qc.rq_sge = 1;
	qc.h_sq_cq = c->scq.h;
	qc.h_rq_cq = c->rcq.h;
	qc.sq_signaled = FALSE;
	st = c->ci->create_qp(c->pd, c, &qc, &qa, &c->qp, NULL);
	return st == IB_SUCCESS ? 0 : pt_fail(c, "create_qp: %s", ib_get_err_str(st));
}

int pt_init_qp(pt_ctx_t *c)
{
	ib_qp_attr_t qa;
	ib_qp_mod_t m;
	ib_api_status_t st;
	/* RESET -> INIT now, so that receives can be posted before the peer
	 * may send. */
	memset(&m, 0, sizeof m);
	m.req_state = IB_QPS_INIT;
	m.state.init.primary_port = 1;
	m.state.init.pkey_index = 0;
	m.state.init.access_ctrl = IB_AC_LOCAL_WRITE | IB_AC_RDMA_WRITE | IB_AC_RDMA_READ | IB_AC_ATOMIC;
	st = c->ci->modify_qp(c->qp, &m, &qa, NULL);
	if (st != IB_SUCCESS)
		return pt_fail(c, "modify_qp(INIT): %s", ib_get_err_str(st));
	c->local.qpn = cl_ntoh32(qa.num);
	c->local.psn = (nicsim_node_id() * 2654435761u + c->local.qpn * 40503u) & 0xffffffu;
	return 0;
}

int pt_setup(pt_ctx_t *c, const pt_opts_t *o, size_t buf_len, uint32_t sq_depth, uint32_t rq_depth,
	     uint32_t signal_every)
{
	uint16_t lid = 0;
	uint32_t i;
	long got;

	if (pt_open(c, o, 2, sq_depth, rq_depth, &lid))
		return 1;

	/* Enough scatter/gather entries that the WQE stride also holds
	 * opt.inline_size bytes of inline data (the driver sizes send WQEs by
	 * their SGE count). */
	c->sq_depth = sq_depth;
	c->rq_depth = rq_depth;
	c->sq_sge = 1 + (o->inline_size + 15) / 16;
	if (c->sq_sge > 30)
		c->sq_sge = 30;
	if (pt_create_qp(c))
		return 1;
	c->signal_every = signal_every < 1 ? 1 : signal_every > sq_depth ? sq_depth : signal_every;

	if (pt_register(c, buf_len))
		return 1;

	memset(&c->local, 0, sizeof c->local);
	c->local.magic = fnv1a(o->prog);
	c->local.lid = lid;
	if (pt_init_qp(c))
		return 1;
	c->local.rkey = c->rkey;
	c->local.iters = o->iters;
	c->local.addr = (uint64_t)(uintptr_t)c->buf;
	c->local.len = buf_len;
	c->local.nsizes = o->nsizes;
	c->local.flags = (uint32_t)(o->bidir ? 1 : 0) | (uint32_t)(o->cswap ? 2 : 0);
	for (i = 0; i < o->nsizes; i++)
		c->local.sizes[i] = o->sizes[i];
	if (nicsim_mgmt_send(c->peer, PT_TAG_CONN, &c->local, sizeof c->local))
		return pt_fail(c, "management network: cannot send to node %u", c->peer);
	got = nicsim_mgmt_recv(c->peer, PT_TAG_CONN, &c->remote, sizeof c->remote, NULL, 1000000000ull);
	if (got != (long)sizeof c->remote)
		return pt_fail(c, "no connection record from node %s", nicsim_node_name_of(c->peer));
	if (c->remote.magic != c->local.magic)
		return pt_fail(c, "the peer runs a different test");
	if (c->remote.iters != c->local.iters || c->remote.nsizes != c->local.nsizes ||
	    c->remote.flags != c->local.flags ||
	    memcmp(c->remote.sizes, c->local.sizes, sizeof c->local.sizes))
		return pt_fail(c, "client and server arguments differ (sizes, iters, --bidirectional, --atomic)");
	/* No buffer address: host virtual addresses differ from run to run, and
	 * the log goes into the trace, which must be byte-identical. */
	nicsim_log("%s: local lid %u qpn %#x psn %#x rkey %#x; remote lid %u qpn %#x psn %#x",
		   o->prog, c->local.lid, c->local.qpn, c->local.psn, cl_ntoh32(c->local.rkey),
		   c->remote.lid, c->remote.qpn, c->remote.psn);
	return 0;
}

int pt_rtr_rts(pt_ctx_t *c)
{
	ib_qp_mod_t m;
	ib_qp_attr_t qa;
	ib_api_status_t st;

	memset(&m, 0, sizeof m);
	m.req_state = IB_QPS_RTR;
	m.state.rtr.rq_psn = cl_hton32(c->remote.psn);
	m.state.rtr.dest_qp = cl_hton32(c->remote.qpn);
	m.state.rtr.primary_av.port_num = 1;
	m.state.rtr.primary_av.sl = 0;
	m.state.rtr.primary_av.dlid = cl_hton16((uint16_t)c->remote.lid);
	m.state.rtr.primary_av.grh_valid = FALSE;
	m.state.rtr.primary_av.conn.path_mtu = IB_MTU_2048;
	m.state.rtr.primary_av.conn.local_ack_timeout = (uint8_t)c->opt.ack_timeout;
	m.state.rtr.primary_av.conn.seq_err_retry_cnt = 7;
	m.state.rtr.primary_av.conn.rnr_retry_cnt = 7;
	m.state.rtr.resp_res = 4;
	m.state.rtr.rnr_nak_timeout = IB_RNR_NAK_0_01;
	st = c->ci->modify_qp(c->qp, &m, &qa, NULL);
	if (st != IB_SUCCESS)
		return pt_fail(c, "modify_qp(RTR): %s", ib_get_err_str(st));

	memset(&m, 0, sizeof m);
	m.req_state = IB_QPS_RTS;
	m.state.rts.sq_psn = cl_hton32(c->local.psn);
	m.state.rts.retry_cnt = 7;
	m.state.rts.rnr_retry_cnt = 7;
	m.state.rts.local_ack_timeout = (uint8_t)c->opt.ack_timeout;
	m.state.rts.init_depth = 4;
	st = c->ci->modify_qp(c->qp, &m, &qa, NULL);
	if (st != IB_SUCCESS)
		return pt_fail(c, "modify_qp(RTS): %s", ib_get_err_str(st));
	return 0;
}

int pt_connect(pt_ctx_t *c) { return pt_rtr_rts(c) || pt_barrier(c) ? 1 : 0; }

int pt_finish(pt_ctx_t *c, int rc)
{
	const ci_interface_t *ci = c->ci;
	ib_api_status_t st;
	if (rc == 0 && c->qp) {
		if (pt_drain_send(c))
			rc = 1;
		else if (pt_barrier(c))
			rc = 1;
	}
	if (!ci)
		return rc;
	if (c->qp && (st = ci->destroy_qp(c->qp, NULL)) != IB_SUCCESS)
		rc = pt_fail(c, "destroy_qp: %s", ib_get_err_str(st));
	if (c->mr && (st = ci->deregister_mr(c->mr, NULL)) != IB_SUCCESS)
		rc = pt_fail(c, "deregister_mr: %s", ib_get_err_str(st));
	if (c->scq.h && (st = ci->destroy_cq(c->scq.h, NULL)) != IB_SUCCESS)
		rc = pt_fail(c, "destroy_cq: %s", ib_get_err_str(st));
	if (c->rcq.h && (st = ci->destroy_cq(c->rcq.h, NULL)) != IB_SUCCESS)
		rc = pt_fail(c, "destroy_cq: %s", ib_get_err_str(st));
	if (c->pd && (st = ci->deallocate_pd(c->pd, NULL)) != IB_SUCCESS)
		rc = pt_fail(c, "deallocate_pd: %s", ib_get_err_str(st));
	if (c->ca && (st = ci->close_ca(c->ca)) != IB_SUCCESS)
		rc = pt_fail(c, "close_ca: %s", ib_get_err_str(st));
	if (c->buf)
		nicsim_free(c->buf);
	c->qp = NULL;
	c->mr = NULL;
	c->scq.h = c->rcq.h = NULL;
	c->pd = NULL;
	c->ca = NULL;
	c->buf = NULL;
	return rc ? 1 : 0;
}

/* ---- work requests and completions ---------------------------------------------- */

void pt_touch(pt_ctx_t *c) { c->deadline_ps = nicsim_now_ps() + c->opt.timeout_ns * 1000ull; }

int pt_wait_failed(pt_ctx_t *c)
{
	if (c->async_error)
		return -pt_fail(c, "asynchronous error event %s",
				ib_get_async_event_str((ib_async_event_t)c->async_type));
	return -pt_fail(c, "no progress for %llu ms (peer gone?)",
			(unsigned long long)(c->opt.timeout_ns / 1000000ull));
}

static inline int check_wait(pt_ctx_t *c) { return pt_should_stop(c) ? pt_wait_failed(c) : 0; }

/* The completions poll_cq returned in `done`, checked; `first` is where the
 * free list began. */
static int reap(pt_ctx_t *c, pt_cq_t *cq, ib_wc_t *done, const ib_wc_t *first)
{
	ib_wc_t *w;
	int n = 0;
	/* Entries are taken from the front of the free list, in order: the
	 * done list is the first n entries. */
	for (w = done; w; w = w->p_next) {
		if (w->status != IB_WCS_SUCCESS)
			return -pt_fail(c, "completion error %s (wr_id %llu, %s queue, vendor %#llx)",
					ib_get_wc_status_str(w->status), (unsigned long long)w->wr_id,
					cq == &c->scq ? "send" : "receive",
					(unsigned long long)w->vendor_specific);
		if (cq == &c->scq)
			c->retired = w->wr_id + 1;   /* send WRs complete in order */
		++n;
	}
	if (done != first)
		return -pt_fail(c, "poll_cq returned entries out of order");
	return n;
}

static ib_wc_t *link_free(ib_wc_t *wcs, int max)
{
	ib_wc_t *free_list = NULL;
	int i;
	for (i = max - 1; i >= 0; i--) {
		wcs[i].p_next = free_list;
		free_list = &wcs[i];
	}
	return free_list;
}

int pt_poll(pt_ctx_t *c, pt_cq_t *cq, ib_wc_t *wcs, int max)
{
	ib_wc_t *free_list = link_free(wcs, max), *done = NULL;
	ib_api_status_t st = c->ci->poll_cq(cq->h, &free_list, &done);
	if (st == IB_NOT_FOUND)
		return 0;
	if (st != IB_SUCCESS)
		return -pt_fail(c, "poll_cq: %s", ib_get_err_str(st));
	return reap(c, cq, done, &wcs[0]);
}

void pt_wc_list_init(pt_wc_list_t *l) { l->free = link_free(l->wcs, PT_WC_BATCH); }

int pt_poll_list_done(pt_ctx_t *c, pt_cq_t *cq, pt_wc_list_t *l, ib_api_status_t st, ib_wc_t *done)
{
	int n = st == IB_SUCCESS ? reap(c, cq, done, &l->wcs[0]) : -pt_fail(c, "poll_cq: %s", ib_get_err_str(st));
	pt_wc_list_init(l);   /* after reap: it walks the done list's links */
	return n;
}

static inline int poll_list(pt_ctx_t *c, pt_cq_t *cq, pt_wc_list_t *l)
{
	ib_wc_t *done = NULL;
	ib_api_status_t st = c->ci->poll_cq(cq->h, &l->free, &done);
	return st == IB_NOT_FOUND ? 0 : pt_poll_list_done(c, cq, l, st, done);
}

int pt_poll_list(pt_ctx_t *c, pt_cq_t *cq, pt_wc_list_t *l) { return poll_list(c, cq, l); }

int pt_idle_event(pt_ctx_t *c, pt_cq_t *const *cqs, int n)
{
	int i, armed_now = 0;
	for (i = 0; i < n; i++) {
		pt_cq_t *cq = cqs[i];
		if (cq->fired) {
			/* A callback came since we last looked: poll again. */
			cq->fired = 0;
			return 0;
		}
		if (!cq->armed) {
			ib_api_status_t st;
			cq->armed = 1;
			st = c->ci->enable_cq_notify(cq->h, FALSE);
			if (st != IB_SUCCESS)
				return -pt_fail(c, "enable_cq_notify: %s", ib_get_err_str(st));
			armed_now = 1;
		}
	}
	if (armed_now)
		return 0;   /* poll once more: entries before the arm raise no event */
	for (;;) {
		for (i = 0; i < n; i++)
			if (cqs[i]->fired) {
				cqs[i]->fired = 0;
				return 0;
			}
		if (check_wait(c))
			return -1;
		nicsim_sleep_ns(PT_MEM_POLL_NS);
	}
}

int pt_wait_wc(pt_ctx_t *c, pt_cq_t *cq, ib_wc_t *wc)
{
	pt_touch(c);
	for (;;) {
		int n = pt_poll(c, cq, wc, 1);
		if (n < 0)
			return -1;
		if (n == 1)
			return 0;
		if (pt_idle(c, &cq, 1))
			return -1;
	}
}

int pt_drain_send(pt_ctx_t *c)
{
	ib_wc_t wc;
	pt_touch(c);
	while (c->retired < c->posted) {
		int n = pt_poll(c, &c->scq, &wc, 1);
		pt_cq_t *cq = &c->scq;
		if (n < 0)
			return -1;
		if (n == 0 && pt_idle(c, &cq, 1))
			return -1;
	}
	return 0;
}

int pt_post_send(pt_ctx_t *c, ib_send_wr_t *wr, int force_signal, int may_inline)
{
	ib_send_wr_t *bad = NULL;
	ib_api_status_t st;
	uint32_t len = 0, i;
	int signaled;
	/* Room: a signaled WR among the outstanding ones always exists,
	 * because signal_every <= sq_depth. */
	if (c->posted - c->retired >= c->sq_depth) {
		ib_wc_t wc;
		pt_touch(c);
		while (c->posted - c->retired >= c->sq_depth) {
			pt_cq_t *cq = &c->scq;
			int n = pt_poll(c, cq, &wc, 1);
			if (n < 0)
				return -1;
			if (n == 0 && pt_idle(c, &cq, 1))
				return -1;
		}
	}
	signaled = force_signal || ++c->since_signal >= c->signal_every;
	if (signaled)
		c->since_signal = 0;
	wr->p_next = NULL;
	wr->wr_id = c->posted;
	wr->send_opt &= ~(IB_SEND_OPT_SIGNALED | IB_SEND_OPT_INLINE);
	if (signaled)
		wr->send_opt |= IB_SEND_OPT_SIGNALED;
	for (i = 0; i < wr->num_ds; i++)
		len += wr->ds_array[i].length;
	if (may_inline && len <= c->opt.inline_size)
		wr->send_opt |= IB_SEND_OPT_INLINE;
	st = c->ci->post_send(c->qp, wr, &bad);
	if (st != IB_SUCCESS) {
		if (st == IB_INVALID_PARAMETER && (wr->send_opt & IB_SEND_OPT_INLINE))
			return -pt_fail(c, "post_send: %s (is --inline=%u above the HCA's inline limit?)",
					ib_get_err_str(st), c->opt.inline_size);
		return -pt_fail(c, "post_send: %s", ib_get_err_str(st));
	}
	c->posted++;
	return 0;
}

int pt_wait_byte(pt_ctx_t *c, const volatile uint8_t *p, uint8_t value)
{
	pt_touch(c);
	while (*p != value) {
		if (check_wait(c))
			return -1;
		nicsim_sleep_ns(PT_MEM_POLL_NS);
	}
	return 0;
}

/* ---- data ---------------------------------------------------------------------- */

void pt_fill(uint8_t *p, uint32_t len, uint32_t size, uint32_t iter)
{
	uint32_t k;
	for (k = 0; k < len; k++)
		p[k] = pt_pattern(size, iter, k);
}

long pt_check(const uint8_t *p, uint32_t len, uint32_t size, uint32_t iter)
{
	uint32_t k;
	for (k = 0; k < len; k++)
		if (p[k] != pt_pattern(size, iter, k))
			return (long)k;
	return -1;
}

/* ---- results --------------------------------------------------------------------- */

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

uint64_t *pt_alloc_stamps(pt_ctx_t *c)
{
	uint64_t *t = (uint64_t *)nicsim_alloc((c->opt.iters + 1) * sizeof *t, 64);
	if (!t)
		pt_fail(c, "no node memory for %u samples", c->opt.iters);
	return t;
}

void pt_report_stamps(pt_ctx_t *c, uint32_t size, uint64_t *samples, uint32_t n, uint32_t divisor)
{
	char name[64];
	double sum = 0, typical;
	uint32_t i;
	if (n == 0)
		return;
	/* In place: sample i only reads stamps i and i + 1. */
	for (i = 0; i < n; i++)
		samples[i] = (samples[i + 1] - samples[i]) / divisor;
	qsort(samples, n, sizeof *samples, cmp_u64);
	for (i = 0; i < n; i++)
		sum += (double)samples[i];
	typical = (double)samples[n / 2];
	snprintf(name, sizeof name, "lat_%u_typical", size);
	nicsim_result(name, typical / 1e6, "us");
	snprintf(name, sizeof name, "lat_%u_avg", size);
	nicsim_result(name, sum / n / 1e6, "us");
	/* The tail: the 99th percentile (nearest rank) and the worst sample. */
	snprintf(name, sizeof name, "lat_%u", size);
	nicsim_result_tail(name, samples, n, 1e6, "us");
	nicsim_log("%s: %8u bytes %8u iters  t_min %.3f us  t_max %.3f us  t_typical %.3f us  t_avg %.3f us",
		   c->opt.prog, size, n, samples[0] / 1e6, samples[n - 1] / 1e6, typical / 1e6, sum / n / 1e6);
}

double pt_mbps(uint64_t bytes, uint64_t ps)
{
	return ps ? (double)bytes * 1e6 / (double)ps : 0.0;
}

int pt_exchange(pt_ctx_t *c, uint32_t tag, const void *mine, void *theirs, size_t len)
{
	long got;
	if (nicsim_mgmt_send(c->peer, tag, mine, len))
		return pt_fail(c, "management network: cannot send to node %u", c->peer);
	got = nicsim_mgmt_recv(c->peer, tag, theirs, len, NULL, c->opt.timeout_ns * 10);
	if (got != (long)len)
		return pt_fail(c, "no reply from node %s over the management network",
			       nicsim_node_name_of(c->peer));
	return 0;
}

int pt_start(pt_ctx_t *c)
{
	const uint64_t wait_ns = c->opt.timeout_ns * 10;
	uint64_t t_ping, start = 0, word = 0;
	if (c->rank == 0) {
		t_ping = nicsim_now_ps();
		if (nicsim_mgmt_send(c->peer, PT_TAG_START, &t_ping, sizeof t_ping) ||
		    nicsim_mgmt_recv(c->peer, PT_TAG_START, &word, sizeof word, NULL, wait_ns) != (long)sizeof word)
			return pt_fail(c, "start: no answer from node %s", nicsim_node_name_of(c->peer));
		/* The ping's round trip bounds the start message's one-way trip. */
		start = nicsim_now_ps() + (nicsim_now_ps() - t_ping);
		if (nicsim_mgmt_send(c->peer, PT_TAG_START, &start, sizeof start))
			return pt_fail(c, "start: cannot send to node %s", nicsim_node_name_of(c->peer));
	} else {
		if (nicsim_mgmt_recv(c->peer, PT_TAG_START, &word, sizeof word, NULL, wait_ns) != (long)sizeof word ||
		    nicsim_mgmt_send(c->peer, PT_TAG_START, &word, sizeof word) ||
		    nicsim_mgmt_recv(c->peer, PT_TAG_START, &start, sizeof start, NULL, wait_ns) != (long)sizeof start)
			return pt_fail(c, "start: no start time from node %s", nicsim_node_name_of(c->peer));
	}
	if (nicsim_now_ps() < start)
		nicsim_sleep_ps(start - nicsim_now_ps());
	return 0;
}

int pt_barrier(pt_ctx_t *c)
{
	if (nicsim_barrier())
		return pt_fail(c, "barrier failed");
	return 0;
}

/* ---- bandwidth programs ------------------------------------------------------------ */

static size_t area_len(const pt_opts_t *o) { return ((size_t)o->max_size + 63) & ~(size_t)63; }

size_t pt_bw_buf_len(const pt_opts_t *o) { return 6 * area_len(o); }

uint32_t pt_bw_slot(uint32_t j, uint32_t iters)
{
	if (j == 0)
		return 1;
	return j + 1 == iters ? 2 : 0;
}

uint8_t *pt_bw_local(pt_ctx_t *c, int side, uint32_t j, uint32_t iters)
{
	return c->buf + ((size_t)side + pt_bw_slot(j, iters)) * area_len(&c->opt);
}

uint64_t pt_bw_remote(pt_ctx_t *c, int side, uint32_t j, uint32_t iters)
{
	return c->remote.addr + ((uint64_t)side + pt_bw_slot(j, iters)) * area_len(&c->opt);
}

void pt_stream_init(pt_ctx_t *c, pt_stream_t *st, ib_wr_type_t op, uint32_t size)
{
	memset(st, 0, sizeof *st);
	st->op = op;
	st->size = size;
	st->iters = c->opt.iters;
	st->first_wr = c->posted;
	pt_wc_list_init(&st->wcl);
}

int pt_stream_post(pt_ctx_t *c, pt_stream_t *st)
{
	int progress = 0;
	while (st->next < st->iters && c->posted - c->retired < c->sq_depth) {
		const uint32_t j = st->next;
		ib_local_ds_t ds;
		ib_send_wr_t wr;
		memset(&wr, 0, sizeof wr);
		wr.wr_type = st->op;
		wr.num_ds = 1;
		wr.ds_array = &ds;
		ds.length = st->size;
		ds.lkey = c->lkey;
		if (st->op == WR_RDMA_READ) {
			/* Into our receive areas, from the peer's send areas. */
			ds.vaddr = pt_bw_local(c, PT_RX, j, st->iters);
			wr.remote_ops.vaddr = pt_bw_remote(c, PT_TX, j, st->iters);
		} else {
			ds.vaddr = pt_bw_local(c, PT_TX, j, st->iters);
			wr.remote_ops.vaddr = pt_bw_remote(c, PT_RX, j, st->iters);
		}
		wr.remote_ops.rkey = c->remote.rkey;
		if (j == 0) {
			st->first_wr = c->posted;
			st->t_first = nicsim_now_ps();
		}
		if (pt_post_send(c, &wr, j + 1 == st->iters, st->op != WR_RDMA_READ))
			return -1;
		st->next++;
		progress++;
	}
	return progress;
}

void pt_report_bw(pt_ctx_t *c, uint32_t size, const char *suffix, double mbps)
{
	char name[64];
	snprintf(name, sizeof name, "bw_%u%s", size, suffix);
	nicsim_result(name, mbps, "MB/s");
	nicsim_log("%s: %8u bytes %8u iters  %s %.2f MB/s", c->opt.prog, size, c->opt.iters, name, mbps);
}

int pt_run_bw_sizes(pt_ctx_t *c, pt_size_fn run_size)
{
	const pt_opts_t *o = &c->opt;
	uint32_t s;
	if (pt_connect(c))
		return 1;
	for (s = 0; s < o->nsizes; s++) {
		const uint32_t size = o->sizes[s];
		pt_result_msg_t mine, theirs;
		int rc;
		memset(&mine, 0, sizeof mine);
		mine.size = size;
		rc = run_size(c, size, &mine.mbps);
		mine.ok = rc == 0;
		if (pt_exchange(c, PT_TAG_RESULT, &mine, &theirs, sizeof mine) || rc)
			return 1;
		if (!theirs.ok || theirs.size != size)
			return pt_fail(c, "the peer reports a failure at size %u", size);
		if (c->rank == 0 || o->bidir)
			pt_report_bw(c, size, "", mine.mbps);
		if (c->rank == 0 && o->bidir)
			pt_report_bw(c, size, "_total", mine.mbps + theirs.mbps);
	}
	return 0;
}
