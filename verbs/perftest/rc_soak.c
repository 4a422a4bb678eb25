/*
 * ib_rc_soak -- RC sends under faults, every byte checked, every message
 * accounted for.
 *
 * The client (rank 0) sends --iters messages of one size, keeping
 * --tx-depth signalled sends outstanding; each carries a header (sequence
 * number, length, checksum of the payload) and a payload that differs per
 * message. The server (rank 1) keeps --rx-depth receives posted and checks
 * each message: the next sequence number is delivered; an earlier one is a
 * duplicate, a later one an out-of-order delivery, a bad checksum a
 * corruption. Run it over links with bit errors, drops and flaps (the
 * scenario's faults): RC's promise is that every message is delivered once
 * and in order, or the sender hears of it (a send completion with an error
 * status, IB_WCS_RETRY_CNT_ERR and the flushes after it).
 *
 * With --reconnects=N a failed QP is not the end: the client makes a new
 * QP and asks the server over the management network to do the same. The
 * server moves its old QP to the error state, counts what arrived on it
 * (until every posted receive came back), answers with the number of
 * messages it has (they arrive in order, so that is the first one it
 * lacks) and its new QP; the client resumes from there. Messages the
 * failed QP reported failed are sent again, at most N times over.
 *
 * Results (client): sent (distinct messages), acked, failed (error
 * completions), failed_status (the first error's ib_wc_status_t),
 * retry_exceeded, reconnects, resent, gave_up (reported failed and never
 * delivered: the reconnects ran out), delivered, corrupted, duplicated,
 * out_of_order, lost_unreported (acked but never delivered); the HCA's
 * retransmissions are in the run's statistics. The run fails if any of
 * corrupted, duplicated, out_of_order or lost_unreported is not zero, or if
 * a message is neither delivered nor reported failed.
 */
#include "perftest.h"

#include <string.h>

#define HDR_BYTES 12u
/* An empty poll is followed by this much sleep: a soak waits out
 * retransmission timeouts of tens of milliseconds, and latency is not what
 * it measures. */
#define IDLE_NS 1000u

typedef struct soak_hdr {
	uint32_t seq, len, sum;
} soak_hdr_t;

/* What the server saw, sent to the client at the end. */
typedef struct soak_rx_counts {
	uint64_t delivered, corrupted, duplicated, out_of_order, errors;
} soak_rx_counts_t;

/* --reconnects: the client's requests to the server, and its answer. */
#define TAG_CTRL 8u
enum { CTRL_RECONNECT = 1, CTRL_DONE = 2 };
typedef struct soak_ctrl {
	uint32_t kind, epoch;
	pt_conn_t conn;                 /* the sender's new QP (CTRL_RECONNECT) */
} soak_ctrl_t;
typedef struct soak_resume {
	uint64_t delivered;             /* the first message the server lacks */
	pt_conn_t conn;
} soak_resume_t;

static uint32_t checksum(const uint8_t *p, uint32_t len)
{
	uint32_t a = 1, b = 0, i;
	for (i = 0; i < len; i++) {
		a = (a + p[i]) % 65521u;
		b = (b + a) % 65521u;
	}
	return (b << 16) | a;
}

static uint8_t *slot(pt_ctx_t *c, uint32_t index, uint32_t size) { return c->buf + (size_t)index * size; }

/* Fills message `seq` into its send slot. */
static void fill(pt_ctx_t *c, uint32_t seq, uint32_t size)
{
	uint8_t *p = slot(c, seq % c->opt.tx_depth, size);
	soak_hdr_t h;
	pt_fill(p + HDR_BYTES, size - HDR_BYTES, size, seq);
	h.seq = seq;
	h.len = size;
	h.sum = checksum(p + HDR_BYTES, size - HDR_BYTES);
	memcpy(p, &h, sizeof h);
}

static int post_send(pt_ctx_t *c, uint32_t seq, uint32_t size)
{
	ib_send_wr_t wr, *bad = NULL;
	ib_local_ds_t ds;
	ib_api_status_t st;
	memset(&wr, 0, sizeof wr);
	ds.vaddr = slot(c, seq % c->opt.tx_depth, size);
	ds.length = size;
	ds.lkey = c->lkey;
	wr.wr_id = seq;
	wr.wr_type = WR_SEND;
	wr.send_opt = IB_SEND_OPT_SIGNALED;
	wr.num_ds = 1;
	wr.ds_array = &ds;
	st = c->ci->post_send(c->qp, &wr, &bad);
	return st == IB_SUCCESS ? 0 : pt_fail(c, "post_send: %s", ib_get_err_str(st));
}

static int post_recv(pt_ctx_t *c, uint32_t index, uint32_t size)
{
	ib_recv_wr_t wr, *bad = NULL;
	ib_local_ds_t ds;
	ib_api_status_t st;
	ds.vaddr = slot(c, c->opt.tx_depth + index, size);
	ds.length = size;
	ds.lkey = c->lkey;
	wr.wr_id = index;
	wr.num_ds = 1;
	wr.ds_array = &ds;
	wr.p_next = NULL;
	st = c->ci->post_recv(c->qp, &wr, &bad);
	return st == IB_SUCCESS ? 0 : pt_fail(c, "post_recv: %s", ib_get_err_str(st));
}

/* Polls cq once: the completions copied to out (PT_WC_BATCH entries), their
 * count, or -1 when poll_cq itself failed. Unlike pt_poll, an error status
 * is an outcome to count, not a failure of the program. */
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

typedef struct soak_tx {
	uint32_t posted;                /* distinct messages posted (the next new sequence number) */
	uint32_t next;                  /* the next message to post on this QP */
	uint32_t acked, failed;         /* completions with success, with an error status */
	uint32_t failed_status;         /* the first error's status */
	uint32_t retry_exceeded, reconnects, resent;
	uint32_t *acked_seq, nacked;    /* the acknowledged messages, in completion order */
	uint32_t acked_end;             /* 1 + the highest acknowledged message */
	uint32_t lost_at_resume;        /* acknowledged, yet the server lacked them when it answered */
} soak_tx_t;

static void count_send_wc(soak_tx_t *tx, const ib_wc_t *wc)
{
	if (wc->status == IB_WCS_SUCCESS) {
		tx->acked_seq[tx->nacked++] = (uint32_t)wc->wr_id;
		tx->acked++;
		if ((uint32_t)wc->wr_id >= tx->acked_end)
			tx->acked_end = (uint32_t)wc->wr_id + 1;
		return;
	}
	if (!tx->failed)
		tx->failed_status = (uint32_t)wc->status;
	tx->failed++;
	tx->retry_exceeded += wc->status == IB_WCS_TIMEOUT_RETRY_ERR;
}

/* Sends on the current QP from tx->next until every message is acked or
 * the QP failed and every send on it came back. *broke: it failed. */
static int client_connection(pt_ctx_t *c, uint32_t size, soak_tx_t *tx, int *broke)
{
	const pt_opts_t *o = &c->opt;
	pt_wc_list_t wcl;
	ib_wc_t wcs[PT_WC_BATCH];
	uint32_t posted = 0, done = 0; /* on this QP */
	pt_wc_list_init(&wcl);
	pt_touch(c);
	*broke = 0;
	while (done < posted || (tx->next < o->iters && !*broke)) {
		int n, i;
		while (!*broke && tx->next < o->iters && posted - done < o->tx_depth) {
			fill(c, tx->next, size);
			if (post_send(c, tx->next, size))
				return 1;
			if (tx->next < tx->posted)
				tx->resent++;
			else
				tx->posted = tx->next + 1;
			tx->next++;
			posted++;
		}
		if ((n = poll(c, &c->scq, &wcl, wcs)) < 0)
			return 1;
		for (i = 0; i < n; i++) {
			count_send_wc(tx, &wcs[i]);
			*broke |= wcs[i].status != IB_WCS_SUCCESS;
		}
		done += (uint32_t)n;
		if (n)
			pt_touch(c);
		else if (nicsim_now_ps() > c->deadline_ps) /* port events are expected here: only time counts */
			return pt_wait_failed(c), 1;
		else
			nicsim_sleep_ns(IDLE_NS);
	}
	return 0;
}

/* A new QP in place of the failed one (every send on it came back), the
 * server's new QP and the first message it lacks. */
static int client_reconnect(pt_ctx_t *c, soak_tx_t *tx)
{
	soak_ctrl_t req;
	soak_resume_t ans;
	ib_api_status_t st = c->ci->destroy_qp(c->qp, NULL);
	c->qp = NULL;
	if (st != IB_SUCCESS)
		return pt_fail(c, "destroy_qp: %s", ib_get_err_str(st));
	if (pt_create_qp(c) || pt_init_qp(c))
		return 1;
	memset(&req, 0, sizeof req);
	req.kind = CTRL_RECONNECT;
	req.epoch = tx->reconnects + 1;
	req.conn = c->local;
	if (nicsim_mgmt_send(c->peer, TAG_CTRL, &req, sizeof req))
		return pt_fail(c, "management network: cannot send to node %u", c->peer);
	if (nicsim_mgmt_recv(c->peer, TAG_CTRL, &ans, sizeof ans, NULL, c->opt.timeout_ns) != (long)sizeof ans)
		return pt_fail(c, "no answer to reconnect %u from node %s", req.epoch, nicsim_node_name_of(c->peer));
	if (ans.delivered > tx->posted)
		return pt_fail(c, "the server has %llu messages of %u sent", (unsigned long long)ans.delivered,
			       tx->posted);
	/* Sending them again would hide the loss: they count as lost. */
	if (ans.delivered < tx->acked_end)
		tx->lost_at_resume += tx->acked_end - (uint32_t)ans.delivered;
	c->remote = ans.conn;
	tx->next = (uint32_t)ans.delivered;
	tx->reconnects++;
	return pt_rtr_rts(c);
}

static int client(pt_ctx_t *c, uint32_t size, soak_tx_t *tx)
{
	soak_ctrl_t done;
	int broke = 0;
	for (;;) {
		if (client_connection(c, size, tx, &broke))
			return 1;
		if (!broke || tx->reconnects == c->opt.reconnects)
			break;
		if (client_reconnect(c, tx))
			return 1;
	}
	if (!c->opt.reconnects)
		return 0;
	memset(&done, 0, sizeof done);
	done.kind = CTRL_DONE;
	return nicsim_mgmt_send(c->peer, TAG_CTRL, &done, sizeof done) ? pt_fail(c, "management network: cannot send")
								  : 0;
}

static void check_message(const uint8_t *p, uint32_t len, uint32_t size, soak_rx_counts_t *rx)
{
	soak_hdr_t h;
	if (len != size || len < HDR_BYTES) {
		rx->corrupted++;
		return;
	}
	memcpy(&h, p, sizeof h);
	if (h.len != size || h.sum != checksum(p + HDR_BYTES, size - HDR_BYTES) ||
	    pt_check(p + HDR_BYTES, size - HDR_BYTES, size, h.seq) >= 0)
		rx->corrupted++;
	else if (h.seq == rx->delivered)
		rx->delivered++;
	else if (h.seq < rx->delivered)
		rx->duplicated++;
	else
		rx->out_of_order++;
}

static int post_receives(pt_ctx_t *c, uint32_t size)
{
	uint32_t i;
	for (i = 0; i < c->opt.rx_depth; i++)
		if (post_recv(c, i, size))
			return 1;
	return 0;
}

/* The client's QP failed: the old QP goes to the error state, and what
 * arrived on it before is counted (every posted receive comes back, with
 * data or flushed), so no late packet of it lands after the answer. Then a
 * new QP, connected to the client's, and the answer. */
static int server_reconnect(pt_ctx_t *c, uint32_t size, soak_rx_counts_t *rx, const soak_ctrl_t *req)
{
	pt_wc_list_t wcl;
	ib_wc_t wcs[PT_WC_BATCH];
	ib_qp_mod_t m;
	ib_qp_attr_t qa;
	soak_resume_t ans;
	uint32_t back = 0;
	ib_api_status_t st;
	memset(&m, 0, sizeof m);
	m.req_state = IB_QPS_ERROR;
	if ((st = c->ci->modify_qp(c->qp, &m, &qa, NULL)) != IB_SUCCESS)
		return pt_fail(c, "modify_qp(ERROR): %s", ib_get_err_str(st));
	pt_wc_list_init(&wcl);
	pt_touch(c);
	while (back < c->opt.rx_depth) {
		int n = poll(c, &c->rcq, &wcl, wcs), k;
		if (n < 0)
			return 1;
		for (k = 0; k < n; k++)
			if (wcs[k].status == IB_WCS_SUCCESS)
				check_message(slot(c, c->opt.tx_depth + (uint32_t)wcs[k].wr_id, size), wcs[k].length, size,
					      rx);
		back += (uint32_t)n;
		if (!n && nicsim_now_ps() > c->deadline_ps)
			return pt_fail(c, "the failed QP's receives did not come back");
		if (!n)
			nicsim_sleep_ns(IDLE_NS);
	}
	if ((st = c->ci->destroy_qp(c->qp, NULL)) != IB_SUCCESS)
		return pt_fail(c, "destroy_qp: %s", ib_get_err_str(st));
	c->qp = NULL;
	c->remote = req->conn;
	if (pt_create_qp(c) || pt_init_qp(c) || post_receives(c, size) || pt_rtr_rts(c))
		return 1;
	ans.delivered = rx->delivered;
	ans.conn = c->local;
	if (nicsim_mgmt_send(c->peer, TAG_CTRL, &ans, sizeof ans))
		return pt_fail(c, "management network: cannot send to node %u", c->peer);
	return 0;
}

/* Between polls: a sleep, or with --reconnects a wait for the client's
 * request of as long. *done: the client sent its last message. */
static int server_idle(pt_ctx_t *c, uint32_t size, soak_rx_counts_t *rx, int *done)
{
	soak_ctrl_t req;
	if (!c->opt.reconnects) {
		nicsim_sleep_ns(IDLE_NS);
		return 0;
	}
	if (nicsim_mgmt_recv(c->peer, TAG_CTRL, &req, sizeof req, NULL, IDLE_NS) != (long)sizeof req)
		return 0;
	pt_touch(c);
	if (req.kind == CTRL_DONE) {
		*done = 1;
		return 0;
	}
	if (req.kind != CTRL_RECONNECT)
		return pt_fail(c, "unknown request %u from the client", req.kind);
	return server_reconnect(c, size, rx, &req);
}

/* Receives until every message came (with --reconnects: until the client
 * says it is done), an error completion ends the QP, or nothing arrives for
 * --timeout-ms. */
static int server(pt_ctx_t *c, uint32_t size, soak_rx_counts_t *rx)
{
	const pt_opts_t *o = &c->opt;
	pt_wc_list_t wcl;
	ib_wc_t wcs[PT_WC_BATCH];
	int done = 0;
	pt_wc_list_init(&wcl);
	pt_touch(c);
	while (!done && !rx->errors &&
	       (o->reconnects || rx->delivered + rx->corrupted + rx->duplicated + rx->out_of_order < o->iters)) {
		int n = poll(c, &c->rcq, &wcl, wcs), k;
		if (n < 0)
			return 1;
		for (k = 0; k < n; k++) {
			const uint32_t index = (uint32_t)wcs[k].wr_id;
			if (wcs[k].status != IB_WCS_SUCCESS) {
				rx->errors++;
				continue;
			}
			check_message(slot(c, o->tx_depth + index, size), wcs[k].length, size, rx);
			if (post_recv(c, index, size))
				return 1;
		}
		if (n)
			pt_touch(c);
		else if (nicsim_now_ps() > c->deadline_ps)
			break; /* the client stopped sending: its counts say why */
		else if (server_idle(c, size, rx, &done))
			return 1;
	}
	return 0;
}

static void report(const soak_tx_t *tx, const soak_rx_counts_t *rx, uint64_t lost_unreported)
{
	nicsim_result("sent", tx->posted, "messages");
	nicsim_result("acked", tx->acked, "messages");
	nicsim_result("failed", tx->failed, "messages");
	nicsim_result("failed_status", tx->failed_status, "ib_wc_status_t");
	nicsim_result("retry_exceeded", tx->retry_exceeded, "completions");
	nicsim_result("reconnects", tx->reconnects, "QPs");
	nicsim_result("resent", tx->resent, "messages");
	nicsim_result("gave_up", tx->posted - (uint32_t)(rx->delivered < tx->posted ? rx->delivered : tx->posted),
		      "messages");
	nicsim_result("delivered", (double)rx->delivered, "messages");
	nicsim_result("corrupted", (double)rx->corrupted, "messages");
	nicsim_result("duplicated", (double)rx->duplicated, "messages");
	nicsim_result("out_of_order", (double)rx->out_of_order, "messages");
	nicsim_result("lost_unreported", (double)lost_unreported, "messages");
}

static int soak(pt_ctx_t *c)
{
	const uint32_t size = c->opt.sizes[0];
	soak_tx_t tx;
	soak_rx_counts_t rx;
	uint32_t i;
	uint64_t lost = 0;
	memset(&tx, 0, sizeof tx);
	memset(&rx, 0, sizeof rx);
	if (size < HDR_BYTES)
		return pt_fail(c, "--sizes must be at least %u bytes (the header)", HDR_BYTES);
	if (c->rank == 1 && post_receives(c, size))
		return 1;
	if (pt_connect(c))
		return 1;
	if (c->rank == 1)
		return server(c, size, &rx) || pt_exchange(c, 7, &rx, &rx, sizeof rx) ? 1 : 0;
	/* Each message is acked at most once: a new QP resumes after the
	 * server's last, and an acked message is there. */
	tx.acked_seq = (uint32_t *)nicsim_alloc((size_t)c->opt.iters * sizeof *tx.acked_seq + 4, 8);
	if (!tx.acked_seq)
		return pt_fail(c, "no node memory for the acknowledgement log");
	if (client(c, size, &tx) || pt_exchange(c, 7, &rx, &rx, sizeof rx)) {
		nicsim_free(tx.acked_seq);
		return 1;
	}
	/* Delivery is in order: the receiver has messages 0..delivered-1. */
	for (i = 0; i < tx.nacked; i++)
		lost += tx.acked_seq[i] >= rx.delivered;
	lost += tx.lost_at_resume;
	nicsim_free(tx.acked_seq);
	report(&tx, &rx, lost);
	if (rx.corrupted || rx.duplicated || rx.out_of_order || lost)
		return pt_fail(c, "RC broke its promise: %llu corrupted, %llu duplicated, %llu out of order, %llu lost "
			       "unreported", (unsigned long long)rx.corrupted, (unsigned long long)rx.duplicated,
			       (unsigned long long)rx.out_of_order, (unsigned long long)lost);
	if (rx.delivered + tx.failed < tx.posted)
		return pt_fail(c, "%llu messages neither delivered nor reported failed",
			       (unsigned long long)(tx.posted - rx.delivered - tx.failed));
	return 0;
}

/* The program's defaults and its arguments: shared by the run and the
 * argument check. */
static int options(pt_opts_t *o, int argc, char **argv)
{
	pt_defaults(o, "ib_rc_soak",
		    PT_ARG_SIZES | PT_ARG_TX_DEPTH | PT_ARG_RX_DEPTH | PT_ARG_ACK_TIMEOUT | PT_ARG_RECONNECT);
	pt_set_sizes(o, "1024");
	o->iters = 10000;
	o->tx_depth = 16;
	o->rx_depth = 64;
	o->timeout_ns = 2000000000ull; /* several 67 ms retransmission timeouts in a row */
	if (pt_parse(o, argc, argv))
		return -1;
	if (o->nsizes != 1)
		return nicsim_fail("ib_rc_soak takes one message size"), -1;
	return 0;
}

static int check_options(int argc, char **argv)
{
	pt_opts_t o;
	return options(&o, argc, argv);
}

static int rc_soak_main(int argc, char **argv)
{
	pt_opts_t o;
	pt_ctx_t c;
	if (options(&o, argc, argv))
		return 1;
	if (pt_setup(&c, &o, (size_t)(o.tx_depth + o.rx_depth) * o.sizes[0], o.tx_depth, o.rx_depth, 1))
		return pt_finish(&c, 1);
	return pt_finish(&c, soak(&c));
}

__attribute__((constructor)) static void reg(void)
{
	nicsim_register_program_checked(
		"ib_rc_soak", rc_soak_main, check_options,
		"RC sends under link faults, every byte checked and every message accounted for; rank 0 sends, rank 1 "
		"receives. --sizes=1024 (one size), --iters=10000 (messages), --tx-depth=16, --rx-depth=64, "
		"--timeout-ms=2000, --ack-timeout=14 (RC resends after 4.096 us * 2^N), --reconnects=0 (new QPs "
		"after failed ones, resuming at the server's first missing message). Results (client): sent, acked, "
		"failed, failed_status, retry_exceeded, reconnects, resent, gave_up, delivered, corrupted, "
		"duplicated, out_of_order, lost_unreported; fails unless the last four are zero and every message "
		"was delivered or reported failed");
}
