/*
 * ep_soak: Elan Kernel Comms large messages and RPCs under node deaths and
 * returns, every byte checked, every message accounted for.
 *
 * Rank 0 sends --iters messages of one size, --window in flight; message k
 * goes to receiver 1 + k % R (R: the other ranks) and is, in turns of R
 * messages, an ep_transmit_large or an ep_transmit_rpc. The data starts
 * with a header (sequence number, length, addressee, kind, checksum of the
 * rest) and differs per message; an RPC's envelope payload names its
 * sequence number and checksum too. Each receiver keeps --window buffers
 * queued, checks each message in its handler and marks its sequence number
 * in a bitmap (a second arrival is a duplicate), and answers an RPC with a
 * status block naming the request and its verdict, which the sender checks.
 *
 * The manual's promise (2.1.3, ep_transmit_large(3), ep_transmit_rpc(3)):
 * a transmit completes ESUCCESS, and the message was delivered once, or
 * ENETRESET, the circuit broken, and it may or may not have been; a call
 * to a node known dead is refused (ECONNREFUSED, or ENETRESET while the
 * circuit is being broken) and sends nothing. Nodes die and return in the
 * scenario (their links go down and come back), so all three happen.
 *
 * At the end rank 0 waits out late arrivals, tells the receivers, and
 * collects their counts and bitmaps. Results (rank 0): sent (transmits
 * accepted), refused, completed_ok, failed_reset (ENETRESET), failed_other,
 * delivered (distinct messages that arrived whole), delivered_after_reset
 * (ENETRESET, yet delivered), rx_reset (receives ended ENETRESET),
 * corrupted, duplicated, lost_unreported (ESUCCESS but never delivered, or
 * never completed), unsent_delivered (refused, yet delivered). The run fails
 * unless the last five and failed_other are zero.
 */
#include "ep_perf.h"

#include <string.h>

#define MAX_RECEIVERS 63
#define MAX_WINDOW 64
#define HDR_BYTES 20u
#define POLL_NS 2000u
#define STALL_PS 2000000000000ull  /* 2 s without a completion: the rest never will */
#define SETTLE_NS 20000000u        /* four heartbeat timeouts: a late pull has landed or failed */
#define TAG_ID 0x45530001u
#define TAG_DONE 0x45530002u
#define TAG_COUNTS 0x45530003u
#define TAG_SEEN 0x45530004u
#define KIND_LARGE 1u
#define KIND_RPC 2u

enum { ST_NONE, ST_FLYING, ST_OK, ST_RESET, ST_OTHER, ST_REFUSED };

typedef struct soak_hdr {
	uint32_t seq, len, to, kind, sum;
} soak_hdr_t;

/* What a receiver saw, sent to rank 0 at the end. */
typedef struct soak_counts {
	uint32_t delivered, corrupted, duplicated, rx_reset, rx_other, reply_failed;
} soak_counts_t;

typedef struct soak soak_t;

/* A buffer: a sender's transmit slot or a receiver's queued receive. */
typedef struct soak_buf {
	soak_t *s;
	unsigned char *p;
	E3_Addr addr;
	uint32_t seq, kind;
	int busy;
} soak_buf_t;

struct soak {
	ep_perf_opts_t o;
	uint32_t size, rank, receivers;
	int ids[MAX_RECEIVERS + 1];      /* Elan node id of each rank (rank 0 only) */
	uint8_t *state;                  /* rank 0: ST_* per message */
	uint8_t *seen;                   /* a receiver: bitmap of messages delivered */
	soak_buf_t bufs[MAX_WINDOW];
	volatile uint32_t inflight, completions, bad_replies;
	soak_counts_t rx;
	EP_RCVR *rcvr;
};

static uint32_t checksum(const unsigned char *p, uint32_t len)
{
	uint32_t a = 1, b = 0, i;
	for (i = 0; i < len; i++) {
		a = (a + p[i]) % 65521u;
		b = (b + a) % 65521u;
	}
	return (b << 16) | a;
}

static uint32_t kind_of(const soak_t *s, uint32_t seq) { return (seq / s->receivers) % 2 ? KIND_RPC : KIND_LARGE; }

static void fill(soak_t *s, soak_buf_t *b, uint32_t seq)
{
	soak_hdr_t h;
	uint32_t i;
	for (i = HDR_BYTES; i < s->size; i++)
		b->p[i] = ep_perf_byte(seq, i);
	h.seq = seq;
	h.len = s->size;
	h.to = 1 + seq % s->receivers;
	h.kind = kind_of(s, seq);
	h.sum = checksum(b->p + HDR_BYTES, s->size - HDR_BYTES);
	memcpy(b->p, &h, sizeof h);
	b->seq = seq;
	b->kind = h.kind;
}

/* ---- rank 0 ---------------------------------------------------------------- */

/* Transmit completion (interrupt context). */
static void on_tx(EP_TXD *txd, void *arg, int status)
{
	soak_buf_t *b = (soak_buf_t *)arg;
	soak_t *s = b->s;
	if (status == ESUCCESS && b->kind == KIND_RPC) {
		const EP_STATUSBLK *blk = ep_txd_statusblk(txd);
		if (!blk || blk->Data[0] != b->seq || blk->Data[1] != 1)
			s->bad_replies++;
	}
	s->state[b->seq] = status == ESUCCESS ? ST_OK : status == ENETRESET ? ST_RESET : ST_OTHER;
	b->busy = 0;
	s->inflight--;
	s->completions++;
}

static int transmit(soak_t *s, EP_XMTR *x, soak_buf_t *b, uint32_t seq)
{
	EP_IOVEC iov;
	EP_RPC_PAYLOAD payload;
	const int dest = s->ids[1 + seq % s->receivers];
	fill(s, b, seq);
	iov.Base = b->addr;
	iov.Len = s->size;
	if (b->kind == KIND_LARGE)
		return ep_transmit_large(x, dest, EP_PERF_SERVICE, EP_NO_SLEEP, on_tx, b, &iov, 1);
	memset(&payload, 0, sizeof payload);
	payload.Data[0] = seq;
	memcpy(&payload.Data[1], b->p + offsetof(soak_hdr_t, sum), sizeof(uint32_t));
	return ep_transmit_rpc(x, dest, EP_PERF_SERVICE, EP_NO_SLEEP, on_tx, b, &payload, &iov, 1);
}

/* Starts message `seq` in a free buffer: 1 when it is done with (sent or
 * refused), 0 when it must wait (no buffer or no descriptor), -1. */
static int start_one(soak_t *s, EP_XMTR *x, uint32_t seq)
{
	uint32_t i;
	int rc;
	for (i = 0; i < s->o.window && s->bufs[i].busy; i++)
		;
	if (i == s->o.window)
		return 0;
	s->bufs[i].busy = 1;
	s->inflight++;
	s->state[seq] = ST_FLYING;
	rc = transmit(s, x, &s->bufs[i], seq);
	if (rc == ESUCCESS)
		return 1;
	s->bufs[i].busy = 0;
	s->inflight--;
	s->state[seq] = ST_NONE;
	if (rc == ENOMEM)
		return 0;
	if (rc == ECONNREFUSED || rc == ENETRESET) {
		s->state[seq] = ST_REFUSED;
		return 1;
	}
	nicsim_fail("ep_soak: a transmit call returned a code the manual does not list");
	return -1;
}

static int send_all(soak_t *s, EP_XMTR *x)
{
	uint32_t seq = 0, seen_seq = 0, seen_done = 0;
	uint64_t progress = nicsim_now_ps();
	while (seq < s->o.iters || s->inflight) {
		int rc = 0;
		while (seq < s->o.iters && (rc = start_one(s, x, seq)) == 1)
			seq++;
		if (rc < 0)
			return 1;
		if (seq != seen_seq || s->completions != seen_done) {
			seen_seq = seq;
			seen_done = s->completions;
			progress = nicsim_now_ps();
		} else if (nicsim_now_ps() - progress > STALL_PS) {
			break; /* what is still flying is counted lost without a report */
		}
		nicsim_sleep_ns(POLL_NS);
	}
	return 0;
}

static int map_bufs(soak_t *s, ELAN3_DMA_STATE *dma, uint32_t n, u_int perm)
{
	uint32_t i;
	for (i = 0; i < n; i++) {
		ELAN3_DMA_HANDLE *h;
		soak_buf_t *b = &s->bufs[i];
		b->s = s;
		b->p = nicsim_alloc(s->size, 64);
		if (!b->p || !(b->addr = ep_perf_map(dma, b->p, s->size, perm, &h))) {
			nicsim_fail("ep_soak: no node memory or Elan mapping for the buffers");
			return -1;
		}
	}
	return 0;
}

/* ---- a receiver -------------------------------------------------------------- */

/* 1 when the message in b (len bytes, an RPC with this payload or not) is
 * whole and addressed here; its sequence number in *seq. */
static int check(soak_t *s, soak_buf_t *b, int len, const EP_ENVELOPE *env, uint32_t *seq)
{
	soak_hdr_t h;
	uint32_t i;
	if ((uint32_t)len != s->size)
		return 0;
	memcpy(&h, b->p, sizeof h);
	*seq = h.seq;
	if (h.seq >= s->o.iters || h.len != s->size || h.to != s->rank || h.kind != kind_of(s, h.seq) ||
	    h.sum != checksum(b->p + HDR_BYTES, s->size - HDR_BYTES))
		return 0;
	if ((h.kind == KIND_RPC) != (env != NULL))
		return 0;
	if (env && (env->Payload.RPC.Data[0] != h.seq || env->Payload.RPC.Data[1] != h.sum))
		return 0;
	for (i = HDR_BYTES; i < s->size; i++)
		if (b->p[i] != ep_perf_byte(h.seq, i))
			return 0;
	return 1;
}

static void on_rx(EP_RXD *rxd);

static void requeue(EP_RXD *rxd, soak_buf_t *b)
{
	memset(b->p, 0, b->s->size); /* a later message must bring all its bytes */
	ep_requeue_receive(rxd, on_rx, b, b->addr, b->s->size);
}

/* The RPC's status block went back (or failed): the buffer is free again. */
static void on_reply(EP_RXD *rxd)
{
	soak_buf_t *b = (soak_buf_t *)ep_rxd_arg(rxd);
	if (ep_rxd_status(rxd) != ESUCCESS)
		b->s->rx.reply_failed++;
	requeue(rxd, b);
}

/* A receive ended (interrupt context): check, count, answer an RPC. */
static void on_rx(EP_RXD *rxd)
{
	soak_buf_t *b = (soak_buf_t *)ep_rxd_arg(rxd);
	soak_t *s = b->s;
	const int status = ep_rxd_status(rxd), rpc = ep_rxd_isrpc(rxd);
	EP_STATUSBLK blk;
	uint32_t seq = 0;
	int ok;
	if (status != ESUCCESS) {
		if (status == ENETRESET)
			s->rx.rx_reset++;
		else
			s->rx.rx_other++;
		requeue(rxd, b);
		return;
	}
	ok = check(s, b, ep_rxd_len(rxd), rpc ? ep_rxd_envelope(rxd) : NULL, &seq);
	if (!ok) {
		s->rx.corrupted++;
	} else if (s->seen[seq >> 3] & (1u << (seq & 7))) {
		s->rx.duplicated++;
	} else {
		s->seen[seq >> 3] |= (uint8_t)(1u << (seq & 7));
		s->rx.delivered++;
	}
	if (rpc) {
		memset(&blk, 0, sizeof blk);
		blk.Data[0] = seq;
		blk.Data[1] = (E3_uint32)ok;
		if (ep_complete_rpc(rxd, on_reply, b, &blk, NULL, 0) == ESUCCESS)
			return;
		s->rx.reply_failed++; /* the circuit broke after the message came */
	}
	requeue(rxd, b);
}

static int receive_all(soak_t *s)
{
	const uint32_t root = nicsim_workload_node(0);
	const int32_t me = ep_nodeid();
	uint32_t i, word, off;
	s->rcvr = ep_install_large_rcvr(0, EP_PERF_SERVICE, (int)(2 * s->o.window));
	if (!s->rcvr || map_bufs(s, ep_rcvr_dma_state(s->rcvr), s->o.window, ELAN_PERM_REMOTEWRITE))
		return 1;
	for (i = 0; i < s->o.window; i++)
		if (ep_queue_receive(s->rcvr, on_rx, &s->bufs[i], s->bufs[i].addr, s->size, 0) != ESUCCESS)
			return nicsim_fail("ep_soak: ep_queue_receive failed"), 1;
	if (nicsim_mgmt_send(root, TAG_ID, &me, sizeof me) || nicsim_barrier())
		return 1;
	if (nicsim_mgmt_recv(root, TAG_DONE, &word, sizeof word, NULL, 0) != (long)sizeof word)
		return nicsim_fail("ep_soak: no end from rank 0"), 1;
	if (nicsim_mgmt_send(root, TAG_COUNTS, &s->rx, sizeof s->rx))
		return 1;
	for (off = 0; off < s->o.iters / 8 + 1; off += NICSIM_MGMT_MAX) {
		uint32_t n = s->o.iters / 8 + 1 - off;
		if (nicsim_mgmt_send(root, TAG_SEEN, s->seen + off, n < NICSIM_MGMT_MAX ? n : NICSIM_MGMT_MAX))
			return 1;
	}
	return 0;
}

/* ---- the outcome ---------------------------------------------------------------- */

typedef struct soak_totals {
	uint32_t sent, refused, ok, reset, other, delivered, after_reset, corrupted, duplicated, lost, unsent, unstarted;
	uint32_t rx_reset;
} soak_totals_t;

/* Rank 0: one receiver's counts and bitmap, merged into `seen`. */
static int collect_one(soak_t *s, uint32_t r, uint8_t *seen, soak_totals_t *t)
{
	const uint32_t node = nicsim_workload_node(r), bytes = s->o.iters / 8 + 1;
	soak_counts_t rx;
	uint8_t chunk[NICSIM_MGMT_MAX];
	uint32_t off, i;
	if (nicsim_mgmt_recv(node, TAG_COUNTS, &rx, sizeof rx, NULL, 0) != (long)sizeof rx)
		return -1;
	for (off = 0; off < bytes; off += NICSIM_MGMT_MAX) {
		const uint32_t n = bytes - off < NICSIM_MGMT_MAX ? bytes - off : NICSIM_MGMT_MAX;
		if (nicsim_mgmt_recv(node, TAG_SEEN, chunk, n, NULL, 0) != (long)n)
			return -1;
		for (i = 0; i < n; i++)
			seen[off + i] |= chunk[i];
	}
	t->delivered += rx.delivered;
	t->corrupted += rx.corrupted;
	t->duplicated += rx.duplicated;
	t->rx_reset += rx.rx_reset + rx.rx_other;
	return 0;
}

static void tally(soak_t *s, const uint8_t *seen, soak_totals_t *t)
{
	uint32_t k;
	for (k = 0; k < s->o.iters; k++) {
		const int got = (seen[k >> 3] >> (k & 7)) & 1;
		switch (s->state[k]) {
		case ST_REFUSED:
			t->refused++;
			t->unsent += got;
			continue;
		case ST_OK:
			t->ok++;
			t->lost += !got;
			break;
		case ST_RESET:
			t->reset++;
			t->after_reset += got;
			break;
		case ST_OTHER:
			t->other++;
			break;
		case ST_NONE: /* never started: the run stalled before it */
			t->unstarted++;
			continue;
		default: /* never completed */
			t->lost++;
		}
		t->sent++;
	}
	t->corrupted += s->bad_replies;
}

static void report(const soak_totals_t *t)
{
	nicsim_result("sent", t->sent, "messages");
	nicsim_result("refused", t->refused, "messages");
	nicsim_result("completed_ok", t->ok, "messages");
	nicsim_result("failed_reset", t->reset, "messages");
	nicsim_result("failed_other", t->other, "messages");
	nicsim_result("delivered", t->delivered, "messages");
	nicsim_result("delivered_after_reset", t->after_reset, "messages");
	nicsim_result("rx_reset", t->rx_reset, "receives");
	nicsim_result("corrupted", t->corrupted, "messages");
	nicsim_result("duplicated", t->duplicated, "messages");
	nicsim_result("lost_unreported", t->lost, "messages");
	nicsim_result("unsent_delivered", t->unsent, "messages");
	nicsim_result("unstarted", t->unstarted, "messages");
}

static int send_and_judge(soak_t *s)
{
	EP_XMTR *x = ep_alloc_large_xmtr(0);
	soak_totals_t t;
	uint8_t *seen = nicsim_alloc(s->o.iters / 8 + 1, 8);
	uint32_t r, word = 1;
	memset(&t, 0, sizeof t);
	s->state = nicsim_alloc(s->o.iters, 8);
	if (!x || !seen || !s->state || map_bufs(s, ep_xmtr_dma_state(x), s->o.window, ELAN_PERM_REMOTEREAD))
		return nicsim_fail("ep_soak: no transmitter or node memory"), 1;
	memset(seen, 0, s->o.iters / 8 + 1);
	memset(s->state, ST_NONE, s->o.iters);
	for (r = 1; r <= s->receivers; r++)
		if (nicsim_mgmt_recv(nicsim_workload_node(r), TAG_ID, &s->ids[r], sizeof s->ids[r], NULL, 0) !=
		    (long)sizeof s->ids[r])
			return nicsim_fail("ep_soak: no node id from a receiver"), 1;
	if (nicsim_barrier() || send_all(s, x))
		return 1;
	nicsim_sleep_ns(SETTLE_NS);
	for (r = 1; r <= s->receivers; r++)
		if (nicsim_mgmt_send(nicsim_workload_node(r), TAG_DONE, &word, sizeof word) ||
		    collect_one(s, r, seen, &t))
			return nicsim_fail("ep_soak: no counts from a receiver"), 1;
	tally(s, seen, &t);
	report(&t);
	if (t.corrupted || t.duplicated || t.lost || t.unsent || t.other || t.unstarted) {
		nicsim_fail("ep_soak: Kernel Comms broke its promise (corrupted, duplicated, lost without a report, "
			    "delivered though refused, or a status the manual does not list)");
		return 1;
	}
	return 0;
}

static const ep_perf_opts_t defaults = {.sizes = {65536}, .nsizes = 1, .iters = 2000, .window = 8, .min_size = HDR_BYTES, .max_size = EP_PERF_MAX_LARGE};

/* The options, shared by the run and the argument check. */
static int options(ep_perf_opts_t *o, int argc, char **argv)
{
	if (ep_perf_options(o, &defaults, argc, argv) != 0)
		return -1;
	if (o->nsizes != 1 || o->window > MAX_WINDOW)
		return nicsim_fail("ep_soak: one size of at least 20 bytes, --window at most 64"), -1;
	return 0;
}

static int check_options(int argc, char **argv)
{
	ep_perf_opts_t o;
	return options(&o, argc, argv);
}

static int soak_main(int argc, char **argv)
{
	soak_t *s = nicsim_alloc(sizeof(soak_t), 64);
	int rc;
	if (!s)
		return 1;
	memset(s, 0, sizeof *s);
	if (options(&s->o, argc, argv) != 0)
		return 1;
	s->size = s->o.sizes[0];
	s->rank = nicsim_workload_rank();
	s->receivers = nicsim_workload_size() - 1;
	if (s->receivers < 1 || s->receivers > MAX_RECEIVERS)
		return nicsim_fail("ep_soak runs on 2 to 64 nodes"), 1;
	if (s->rank == 0) {
		rc = send_and_judge(s);
	} else {
		s->seen = nicsim_alloc(s->o.iters / 8 + 1, 8);
		if (!s->seen)
			return 1;
		memset(s->seen, 0, s->o.iters / 8 + 1);
		rc = receive_all(s);
	}
	return rc;
}

__attribute__((constructor)) static void reg(void)
{
	nicsim_register_program_checked(
		"ep_soak", soak_main, check_options,
		"Elan Kernel Comms large messages and RPCs under node deaths and returns, every byte checked and every "
		"message accounted for; rank 0 sends to the other ranks in turn. --sizes=65536 (one size) --iters=2000 "
		"--window=8. Results (rank 0): sent, refused, completed_ok, failed_reset, failed_other, delivered, "
		"delivered_after_reset, rx_reset, corrupted, duplicated, lost_unreported, unsent_delivered; fails unless "
		"failed_other and the last four are zero");
}
