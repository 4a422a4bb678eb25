/*
 * ib_ud_soak -- UD sends and multicast under faults, every byte checked,
 * every datagram accounted for.
 *
 * Rank 0 sends --iters datagrams of one size (at most the 2048-byte path
 * MTU), keeping --tx-depth signalled sends outstanding; every other rank
 * receives, with --rx-depth receives posted. Without --mlid each message
 * goes to every receiver in turn (one UD send each); with --mlid=<lid> it
 * goes once to that multicast group, which every receiver has joined (the
 * scenario's `multicast` block tells the subnet manager its members), and
 * the switches copy it. Each datagram carries a header (sequence number,
 * length, addressee, checksum of the payload) and a payload that differs
 * per message.
 *
 * UD's promise is weaker than RC's: a datagram may be lost (a link drop,
 * a packet the HCA's CRC check threw away), but one that arrives arrives
 * whole and once. Each receiver keeps a bitmap of the sequence numbers it
 * has seen: a first arrival is delivered, a second a duplicate, a bad
 * checksum, pattern, length or addressee a corruption; at the end the
 * numbers never seen are lost. The sender waits until its sends completed
 * and the wire is quiet, tells the receivers, and collects their counts.
 *
 * Results (sender): sent (messages per receiver), receivers, delivered,
 * lost, corrupted, duplicated (summed over receivers), and delivered_<rank>
 * and lost_<rank> per receiver. The run fails if corrupted or duplicated is
 * not zero, if a receiver's delivered + lost is not sent, or on any error
 * completion.
 */
#include "perftest.h"

#include <stdlib.h>
#include <string.h>

#define HDR_BYTES 16u
#define GRH_BYTES 40u           /* a UD receive buffer starts with room for the GRH */
#define UD_MTU 2048u
#define MAX_RECEIVERS 64u
#define QKEY 0x50ad50adu
#define IDLE_NS 1000u
/* After the last send completion: longer than any datagram stays on the
 * wire and in the receivers' queues, so a receiver told "done" has seen
 * all it will. */
#define SETTLE_NS 200000u
#define TAG_ADDR 0x75640001u
#define TAG_DONE 0x75640002u
#define TAG_COUNTS 0x75640003u
#define TO_GROUP 0xffffffffu    /* the addressee of a multicast datagram */

typedef struct ud_hdr {
	uint32_t seq, len, to, sum;
} ud_hdr_t;

typedef struct ud_addr {
	uint32_t lid, qpn;
} ud_addr_t;

/* What a receiver saw, sent to rank 0 at the end. */
typedef struct ud_counts {
	uint64_t delivered, lost, corrupted, duplicated, errors;
} ud_counts_t;

typedef struct ud_soak {
	pt_ctx_t c;
	uint32_t size, mlid, receivers;
	ib_av_handle_t av[MAX_RECEIVERS];   /* rank 0: one per addressee (one for the group) */
	ud_addr_t dest[MAX_RECEIVERS];
	uint32_t ndest;
	ib_mcast_handle_t mcast;            /* a receiver's membership of --mlid */
	uint8_t *seen;                      /* a receiver's bitmap of sequence numbers */
} ud_soak_t;

static uint32_t checksum(const uint8_t *p, uint32_t len)
{
	uint32_t a = 1, b = 0, i;
	for (i = 0; i < len; i++) {
		a = (a + p[i]) % 65521u;
		b = (b + a) % 65521u;
	}
	return (b << 16) | a;
}

static uint32_t slot_bytes(const ud_soak_t *s) { return (GRH_BYTES + s->size + 63u) & ~63u; }
static uint8_t *slot(ud_soak_t *s, uint32_t index) { return s->c.buf + (size_t)index * slot_bytes(s); }

/* ---- setup ----------------------------------------------------------------- */

static int modify(ud_soak_t *s, ib_qp_mod_t *m, const char *what)
{
	ib_qp_attr_t qa;
	ib_api_status_t st = s->c.ci->modify_qp(s->c.qp, m, &qa, NULL);
	return st == IB_SUCCESS ? 0 : pt_fail(&s->c, "modify_qp(%s): %s", what, ib_get_err_str(st));
}

/* A UD QP in RTS. */
static int make_qp(ud_soak_t *s)
{
	pt_ctx_t *c = &s->c;
	ib_qp_create_t qc;
	ib_qp_attr_t qa;
	ib_qp_mod_t m;
	ib_api_status_t st;
	memset(&qc, 0, sizeof qc);
	qc.qp_type = IB_QPT_UNRELIABLE_DGRM;
	qc.sq_depth = c->opt.tx_depth;
	qc.rq_depth = c->opt.rx_depth;
	qc.sq_sge = qc.rq_sge = 1;
	qc.h_sq_cq = c->scq.h;
	qc.h_rq_cq = c->rcq.h;
	qc.sq_signaled = TRUE;
	st = c->ci->create_qp(c->pd, c, &qc, &qa, &c->qp, NULL);
	if (st != IB_SUCCESS)
		return pt_fail(c, "create_qp: %s", ib_get_err_str(st));
	c->local.qpn = cl_ntoh32(qa.num);
	memset(&m, 0, sizeof m);
	m.req_state = IB_QPS_INIT;
	m.state.init.primary_port = 1;
	m.state.init.qkey = cl_hton32(QKEY);
	if (modify(s, &m, "INIT"))
		return 1;
	memset(&m, 0, sizeof m);
	m.req_state = IB_QPS_RTR;
	if (modify(s, &m, "RTR"))
		return 1;
	memset(&m, 0, sizeof m);
	m.req_state = IB_QPS_RTS;
	m.state.rts.sq_psn = cl_hton32(1);
	return modify(s, &m, "RTS");
}

static int make_av(ud_soak_t *s, uint32_t i, uint32_t lid)
{
	ib_av_attr_t a;
	ib_api_status_t st;
	memset(&a, 0, sizeof a);
	a.port_num = 1;
	a.dlid = cl_hton16((uint16_t)lid);
	st = s->c.ci->create_av(s->c.pd, &a, &s->av[i], NULL);
	return st == IB_SUCCESS ? 0 : pt_fail(&s->c, "create_av: %s", ib_get_err_str(st));
}

static int post_recv(ud_soak_t *s, uint32_t index)
{
	ib_recv_wr_t wr, *bad = NULL;
	ib_local_ds_t ds;
	ib_api_status_t st;
	ds.vaddr = slot(s, s->c.opt.tx_depth + index);
	ds.length = GRH_BYTES + s->size;
	ds.lkey = s->c.lkey;
	wr.wr_id = index;
	wr.num_ds = 1;
	wr.ds_array = &ds;
	wr.p_next = NULL;
	st = s->c.ci->post_recv(s->c.qp, &wr, &bad);
	return st == IB_SUCCESS ? 0 : pt_fail(&s->c, "post_recv: %s", ib_get_err_str(st));
}

/* A receiver joins the group (if any), posts its receives and tells rank 0
 * where it is. */
static int setup_receiver(ud_soak_t *s, uint16_t lid)
{
	pt_ctx_t *c = &s->c;
	ud_addr_t me;
	uint32_t i;
	if (s->mlid) {
		ib_gid_t gid;
		ib_api_status_t st;
		memset(&gid, 0, sizeof gid);
		gid.raw[0] = 0xff;
		gid.raw[1] = 0x12;
		gid.raw[14] = (uint8_t)(s->mlid >> 8);
		gid.raw[15] = (uint8_t)s->mlid;
		st = c->ci->attach_mcast(c->qp, &gid, cl_hton16((uint16_t)s->mlid), &s->mcast, NULL);
		if (st != IB_SUCCESS)
			return pt_fail(c, "attach_mcast(%u): %s", s->mlid, ib_get_err_str(st));
	}
	for (i = 0; i < c->opt.rx_depth; i++)
		if (post_recv(s, i))
			return 1;
	me.lid = lid;
	me.qpn = c->local.qpn;
	if (nicsim_mgmt_send(nicsim_workload_node(0), TAG_ADDR, &me, sizeof me))
		return pt_fail(c, "management network: cannot send to rank 0");
	return 0;
}

/* Rank 0 learns every receiver's address and makes the address vectors. */
static int setup_sender(ud_soak_t *s)
{
	pt_ctx_t *c = &s->c;
	uint32_t r;
	for (r = 1; r <= s->receivers; r++) {
		ud_addr_t *d = &s->dest[r - 1];
		if (nicsim_mgmt_recv(nicsim_workload_node(r), TAG_ADDR, d, sizeof *d, NULL, c->opt.timeout_ns * 10) !=
		    (long)sizeof *d)
			return pt_fail(c, "no address from rank %u", r);
	}
	if (s->mlid) {
		s->ndest = 1;
		s->dest[0].lid = s->mlid;
		s->dest[0].qpn = 0xffffffu;  /* the multicast QPN */
		return make_av(s, 0, s->mlid);
	}
	s->ndest = s->receivers;
	for (r = 0; r < s->ndest; r++)
		if (make_av(s, r, s->dest[r].lid))
			return 1;
	return 0;
}

/* ---- the sender ------------------------------------------------------------- */

static void fill(ud_soak_t *s, uint32_t index, uint32_t seq, uint32_t to)
{
	uint8_t *p = slot(s, index);
	ud_hdr_t h;
	pt_fill(p + HDR_BYTES, s->size - HDR_BYTES, s->size, seq);
	h.seq = seq;
	h.len = s->size;
	h.to = to;
	h.sum = checksum(p + HDR_BYTES, s->size - HDR_BYTES);
	memcpy(p, &h, sizeof h);
}

/* Send number k: message k / ndest to addressee k % ndest. */
static int post_send(ud_soak_t *s, uint64_t k)
{
	pt_ctx_t *c = &s->c;
	const uint32_t d = (uint32_t)(k % s->ndest), index = (uint32_t)(k % c->opt.tx_depth);
	ib_send_wr_t wr, *bad = NULL;
	ib_local_ds_t ds;
	ib_api_status_t st;
	fill(s, index, (uint32_t)(k / s->ndest), s->mlid ? TO_GROUP : d + 1);
	memset(&wr, 0, sizeof wr);
	ds.vaddr = slot(s, index);
	ds.length = s->size;
	ds.lkey = c->lkey;
	wr.wr_id = k;
	wr.wr_type = WR_SEND;
	wr.send_opt = IB_SEND_OPT_SIGNALED;
	wr.num_ds = 1;
	wr.ds_array = &ds;
	wr.dgrm.ud.remote_qp = cl_hton32(s->dest[d].qpn);
	wr.dgrm.ud.remote_qkey = cl_hton32(QKEY);
	wr.dgrm.ud.h_av = s->av[d];
	st = c->ci->post_send(c->qp, &wr, &bad);
	return st == IB_SUCCESS ? 0 : pt_fail(c, "post_send: %s", ib_get_err_str(st));
}

/* Polls cq once into out (PT_WC_BATCH entries): their count, or -1. */
static int poll(pt_ctx_t *c, pt_cq_t *cq, pt_wc_list_t *l, ib_wc_t *out)
{
	ib_wc_t *done = NULL, *w;
	ib_api_status_t st = c->ci->poll_cq(cq->h, &l->free, &done);
	int n = 0;
	if (st == IB_NOT_FOUND)
		return 0;
	if (st != IB_SUCCESS)
		return pt_fail(c, "poll_cq: %s", ib_get_err_str(st)), -1;
	for (w = done; w && n < PT_WC_BATCH; w = w->p_next)
		out[n++] = *w;
	pt_wc_list_init(l);
	return n;
}

static int send_all(ud_soak_t *s)
{
	pt_ctx_t *c = &s->c;
	const uint64_t total = (uint64_t)c->opt.iters * s->ndest;
	uint64_t posted = 0, done = 0;
	pt_wc_list_t wcl;
	ib_wc_t wcs[PT_WC_BATCH];
	pt_wc_list_init(&wcl);
	pt_touch(c);
	while (done < total) {
		int n, i;
		for (; posted < total && posted - done < c->opt.tx_depth; posted++)
			if (post_send(s, posted))
				return 1;
		if ((n = poll(c, &c->scq, &wcl, wcs)) < 0)
			return 1;
		for (i = 0; i < n; i++)
			if (wcs[i].status != IB_WCS_SUCCESS)
				return pt_fail(c, "send %llu completed with %s", (unsigned long long)wcs[i].wr_id,
					       ib_get_wc_status_str(wcs[i].status));
		done += (uint64_t)n;
		if (n)
			pt_touch(c);
		else if (nicsim_now_ps() > c->deadline_ps)
			return pt_wait_failed(c), 1;
		else
			nicsim_sleep_ns(IDLE_NS);
	}
	return 0;
}

/* ---- a receiver -------------------------------------------------------------- */

static void check_message(ud_soak_t *s, const uint8_t *p, uint32_t len, ud_counts_t *rx)
{
	const uint32_t me = s->mlid ? TO_GROUP : s->c.rank;
	ud_hdr_t h;
	if (len != GRH_BYTES + s->size) {
		rx->corrupted++;
		return;
	}
	p += GRH_BYTES;
	memcpy(&h, p, sizeof h);
	if (h.len != s->size || h.to != me || h.seq >= s->c.opt.iters ||
	    h.sum != checksum(p + HDR_BYTES, s->size - HDR_BYTES) ||
	    pt_check(p + HDR_BYTES, s->size - HDR_BYTES, s->size, h.seq) >= 0) {
		rx->corrupted++;
	} else if (s->seen[h.seq >> 3] & (1u << (h.seq & 7))) {
		rx->duplicated++;
	} else {
		s->seen[h.seq >> 3] |= (uint8_t)(1u << (h.seq & 7));
		rx->delivered++;
	}
}

/* Checks and reposts one poll's worth of receives: its count, or -1. */
static int receive_some(ud_soak_t *s, pt_wc_list_t *wcl, ud_counts_t *rx)
{
	ib_wc_t wcs[PT_WC_BATCH];
	int n = poll(&s->c, &s->c.rcq, wcl, wcs), k;
	for (k = 0; k < n; k++) {
		const uint32_t index = (uint32_t)wcs[k].wr_id;
		if (wcs[k].status != IB_WCS_SUCCESS)
			rx->errors++;
		else
			check_message(s, slot(s, s->c.opt.tx_depth + index), wcs[k].length, rx);
		if (post_recv(s, index))
			return -1;
	}
	return n;
}

/* Receives until rank 0 says it is done and the queue is empty. */
static int receive_all(ud_soak_t *s, ud_counts_t *rx)
{
	pt_ctx_t *c = &s->c;
	const uint32_t sender = nicsim_workload_node(0);
	pt_wc_list_t wcl;
	uint32_t word, i;
	int told = 0, n;
	pt_wc_list_init(&wcl);
	pt_touch(c);
	for (;;) {
		if ((n = receive_some(s, &wcl, rx)) < 0)
			return 1;
		if (n) {
			pt_touch(c);
		} else if (told) {
			break;
		} else if (nicsim_mgmt_recv(sender, TAG_DONE, &word, sizeof word, NULL, IDLE_NS) == (long)sizeof word) {
			told = 1;  /* poll until empty once more */
		} else if (nicsim_now_ps() > c->deadline_ps) {
			return pt_wait_failed(c), 1;
		}
	}
	for (i = 0; i < c->opt.iters; i++)
		rx->lost += !(s->seen[i >> 3] & (1u << (i & 7)));
	return 0;
}

/* ---- the outcome ---------------------------------------------------------------- */

static void report_one(const char *name, uint32_t rank, double v)
{
	char key[48];
	size_t n = strlen(name);
	memcpy(key, name, n);
	key[n++] = '_';
	if (rank >= 10)
		key[n++] = (char)('0' + rank / 10);
	key[n++] = (char)('0' + rank % 10);
	key[n] = 0;
	nicsim_result(key, v, "messages");
}

/* Rank 0 tells every receiver it is done, collects, reports and judges. */
static int collect(ud_soak_t *s)
{
	pt_ctx_t *c = &s->c;
	ud_counts_t all, rx;
	uint32_t r, word = 1;
	int bad = 0;
	memset(&all, 0, sizeof all);
	nicsim_sleep_ns(SETTLE_NS);
	for (r = 1; r <= s->receivers; r++)
		if (nicsim_mgmt_send(nicsim_workload_node(r), TAG_DONE, &word, sizeof word))
			return pt_fail(c, "management network: cannot send to rank %u", r);
	nicsim_result("sent", c->opt.iters, "messages");
	nicsim_result("receivers", s->receivers, "nodes");
	for (r = 1; r <= s->receivers; r++) {
		if (nicsim_mgmt_recv(nicsim_workload_node(r), TAG_COUNTS, &rx, sizeof rx, NULL, c->opt.timeout_ns * 10) !=
		    (long)sizeof rx)
			return pt_fail(c, "no counts from rank %u", r);
		report_one("delivered", r, (double)rx.delivered);
		report_one("lost", r, (double)rx.lost);
		bad |= rx.delivered + rx.lost != c->opt.iters || rx.errors;
		all.delivered += rx.delivered;
		all.lost += rx.lost;
		all.corrupted += rx.corrupted;
		all.duplicated += rx.duplicated;
		all.errors += rx.errors;
	}
	nicsim_result("delivered", (double)all.delivered, "messages");
	nicsim_result("lost", (double)all.lost, "messages");
	nicsim_result("corrupted", (double)all.corrupted, "messages");
	nicsim_result("duplicated", (double)all.duplicated, "messages");
	if (all.corrupted || all.duplicated)
		return pt_fail(c, "UD broke its promise: %llu corrupted, %llu duplicated",
			       (unsigned long long)all.corrupted, (unsigned long long)all.duplicated);
	if (bad)
		return pt_fail(c, "a receiver's counts do not add up to %u messages (%llu error completions)",
			       c->opt.iters, (unsigned long long)all.errors);
	return 0;
}

static int soak(ud_soak_t *s)
{
	pt_ctx_t *c = &s->c;
	const pt_opts_t o = c->opt;  /* pt_open clears c */
	uint16_t lid = 0;
	ud_counts_t rx;
	int rc;
	if (pt_open(c, &o, 0, o.tx_depth, o.rx_depth, &lid) ||
	    pt_register(c, (size_t)(c->opt.tx_depth + c->opt.rx_depth) * slot_bytes(s)) || make_qp(s))
		return 1;
	s->receivers = nicsim_workload_size() - 1;
	if (s->receivers > MAX_RECEIVERS)
		return pt_fail(c, "at most %u receivers", MAX_RECEIVERS);
	if (c->rank == 0) {
		if (setup_sender(s) || pt_barrier(c) || send_all(s))
			return 1;
		return collect(s);
	}
	s->seen = (uint8_t *)nicsim_alloc(c->opt.iters / 8 + 1, 8);
	if (!s->seen)
		return pt_fail(c, "no node memory for the sequence bitmap");
	memset(s->seen, 0, c->opt.iters / 8 + 1);
	memset(&rx, 0, sizeof rx);
	if (setup_receiver(s, lid) || pt_barrier(c))
		return 1;
	rc = receive_all(s, &rx);
	if (!rc && nicsim_mgmt_send(nicsim_workload_node(0), TAG_COUNTS, &rx, sizeof rx))
		rc = pt_fail(c, "management network: cannot send to rank 0");
	return rc;
}

/* Leaves the group and drops the address vectors, before pt_finish frees
 * the PD and the QP. */
static int release(ud_soak_t *s, int rc)
{
	uint32_t i;
	if (s->mcast && s->c.ci->detach_mcast(s->mcast, NULL) != IB_SUCCESS)
		rc = pt_fail(&s->c, "detach_mcast failed");
	for (i = 0; i < s->ndest; i++)
		if (s->av[i] && s->c.ci->destroy_av(s->av[i], NULL) != IB_SUCCESS)
			rc = pt_fail(&s->c, "destroy_av failed");
	if (s->seen)
		nicsim_free(s->seen);
	return pt_finish(&s->c, rc);
}

/* Takes --mlid out of argv (the rest is pt_parse's). */
static int parse(ud_soak_t *s, pt_opts_t *o, int argc, char **argv)
{
	char *rest[64];
	int n = 0, i;
	for (i = 0; i < argc; i++) {
		if (!strncmp(argv[i], "--mlid=", 7)) {
			char *end;
			unsigned long v = strtoul(argv[i] + 7, &end, 0);
			if (argv[i][7] < '0' || argv[i][7] > '9' || *end || v < 0xc000 || v > 0xfffe)
				return nicsim_fail("ib_ud_soak: --mlid must be a multicast LID (0xc000-0xfffe)"), -1;
			s->mlid = (uint32_t)v;
		} else if (n == 64) {
			return nicsim_fail("ib_ud_soak: at most 63 arguments besides --mlid"), -1;
		} else {
			rest[n++] = argv[i];
		}
	}
	if (pt_parse(o, n, rest))
		return -1;
	if (o->nsizes != 1 || o->sizes[0] < HDR_BYTES || o->sizes[0] > UD_MTU)
		return nicsim_fail("ib_ud_soak takes one message size, 16 to 2048 bytes (one packet)"), -1;
	s->size = o->sizes[0];
	return 0;
}

/* The program's defaults and its arguments: shared by the run and the
 * argument check. */
static int options(ud_soak_t *s, int argc, char **argv)
{
	memset(s, 0, sizeof *s);
	pt_defaults(&s->c.opt, "ib_ud_soak", PT_ARG_SIZES | PT_ARG_TX_DEPTH | PT_ARG_RX_DEPTH);
	pt_set_sizes(&s->c.opt, "1024");
	s->c.opt.iters = 10000;
	s->c.opt.tx_depth = 16;
	s->c.opt.rx_depth = 256;
	s->c.opt.timeout_ns = 1000000000ull;
	return parse(s, &s->c.opt, argc, argv);
}

static int check_options(int argc, char **argv)
{
	ud_soak_t s;
	return options(&s, argc, argv);
}

static int ud_soak_main(int argc, char **argv)
{
	ud_soak_t s;
	if (options(&s, argc, argv))
		return 1;
	return release(&s, soak(&s));
}

__attribute__((constructor)) static void reg(void)
{
	nicsim_register_program_checked(
		"ib_ud_soak", ud_soak_main, check_options,
		"UD sends (or multicast with --mlid) under link faults, every byte checked and every datagram "
		"accounted for; rank 0 sends, every other rank receives. --sizes=1024 (one size, at most 2048), "
		"--iters=10000 (messages), --mlid=<lid> (send to this group; the receivers join it), --tx-depth=16, "
		"--rx-depth=256, --timeout-ms=1000. Results (sender): sent, receivers, delivered, lost, corrupted, "
		"duplicated, and delivered_<rank>, lost_<rank>; fails unless corrupted and duplicated are zero and "
		"each receiver's delivered + lost is sent");
}
