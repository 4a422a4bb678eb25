/*
 * dapl_soak: DAT sends and RDMA writes under link faults, every byte
 * checked and every posted DTO's completion accounted for exactly once.
 * Rank 0 is the server (PSP, accept), rank 1 the client.
 *
 * The client sends --iters records of 16 to --max-size bytes in rounds of
 * --window. Each record starts with a header: a magic word, the sequence
 * number, the record's length and an Adler-style checksum of the payload;
 * each payload differs from every other record's. In a round the records
 * alternate between RDMA writes (into a slot of the server's region) and
 * sends, the last one a send; every DTO is signalled. The server keeps
 * --window RECVs posted and checks each send's record when it arrives;
 * at the round's last send, the writes' bytes are in place (RC orders the
 * send behind them) and it checks each slot. It then reposts and answers
 * with its count of records delivered, which the client waits for before
 * the next round.
 *
 * DAT's promise: every DTO completes once, DAT_DTO_SUCCESS (a send: in
 * the peer's RECV; a write: the bytes in place), or with an error status
 * once the connection broke, the DTOs behind it DAT_DTO_ERR_FLUSHED.
 * On the first error the soak stops: the client waits for every posted
 * DTO to come back and disconnects; the server disconnects, takes its
 * own DTOs back, checks the slots of the round that broke (a write may
 * have landed), and sends its counts (management network). A DAT EP can
 * be reset and connected again; the soak counts one connection.
 *
 * Results (client): sent (records posted), delivered, failed (records
 * whose DTO completed with an error status), failed_status (the first
 * error's DAT_DTO_COMPLETION_STATUS, 0 without), flushed, corrupted,
 * duplicated, out_of_order, lost_unreported (DAT_DTO_SUCCESS but not
 * delivered), dto_posted, dto_completed, dto_twice (completions of a
 * DTO already completed, or never posted), dto_never (posted DTOs that
 * never completed), both sides' DTOs together. The run fails unless
 * corrupted, duplicated, out_of_order, lost_unreported, dto_twice and
 * dto_never are zero, and every record was delivered or reported failed.
 *
 * Arguments: --iters=N (10000), --max-size=N (4096, at most 65536),
 * --window=N (16, even, at most 16: an EP's default DTO queues).
 */
#include <stdlib.h>

#include "dapl_common.h"

#define DS_QUAL 0x44534f4bull
#define DS_HDR 16u
#define DS_MAGIC 0x44415453u /* "DATS" */
#define DS_TAG_STOP 0x44530001u
#define DS_TAG_COUNTS 0x44530002u
#define DS_MAX_WINDOW 16 /* an EP's DTOs of each kind with the default attributes */
#define DS_ACK 0xffu
#define DS_WAIT_US 3000000 /* a DTO waits out several 67 ms retransmission timeouts */

struct ds_opts {
	uint32_t iters, max_size, window;
};

/* DTO accounting: an entry per DTO outstanding, found by its cookie. */
#define DS_DTOS 256
struct ds_dtos {
	DAT_UINT64 cookie[DS_DTOS];
	int live[DS_DTOS];
	double posted, completed, twice, flushed, errors;
	int first_error; /* the first status other than success or flushed */
};

/* The server's counts, and what it saw of the round that broke. */
struct ds_counts {
	double delivered, corrupted, duplicated, out_of_order;
	double dto_posted, dto_completed, dto_twice, dto_never;
	uint64_t mask, prev_mask; /* positions delivered of `round` and of the round before */
	uint32_t round, pad;
};

/* What the client tells the server at the end. */
struct ds_stop {
	uint32_t round, broken;
};

static uint32_t checksum(const uint8_t *p, uint32_t len)
{
	uint32_t a = 1, b = 0, i;
	for (i = 0; i < len; i++) {
		a = (a + p[i]) % 65521u;
		b = (b + a) % 65521u;
	}
	return (b << 16) | a;
}

static uint8_t pattern(uint32_t seq, uint32_t j) { return (uint8_t)(seq * 131u + j * 7u + j / 251u); }
static uint32_t record_size(const struct ds_opts *o, uint32_t seq)
{
	return DS_HDR + (seq * 7919u) % (o->max_size - DS_HDR + 1);
}
static void put32(uint8_t *p, uint32_t v) { memcpy(p, &v, 4); }
static uint32_t get32(const uint8_t *p)
{
	uint32_t v;
	memcpy(&v, p, 4);
	return v;
}

static uint32_t fill_record(const struct ds_opts *o, uint32_t seq, uint8_t *p)
{
	const uint32_t len = record_size(o, seq);
	uint32_t j;
	for (j = 0; j < len - DS_HDR; ++j)
		p[DS_HDR + j] = pattern(seq, j);
	put32(p, DS_MAGIC);
	put32(p + 4, seq);
	put32(p + 8, len);
	put32(p + 12, checksum(p + DS_HDR, len - DS_HDR));
	return len;
}

/* 0: record seq is at p, whole; 1: bytes wrong; 2: another record, whole. */
static int check_record(const struct ds_opts *o, uint32_t seq, const uint8_t *p, uint32_t got)
{
	const uint32_t at = get32(p + 4), len = get32(p + 8);
	uint32_t j;
	if (get32(p) != DS_MAGIC || len < DS_HDR || len > o->max_size || (got && got != len) ||
	    get32(p + 12) != checksum(p + DS_HDR, len - DS_HDR) || len != record_size(o, at))
		return 1;
	for (j = 0; j < len - DS_HDR; ++j)
		if (p[DS_HDR + j] != pattern(at, j))
			return 1;
	return at == seq ? 0 : 2;
}

/* Records in round r, and whether position p is a send (the last is). */
static uint32_t round_len(const struct ds_opts *o, uint32_t r)
{
	const uint32_t base = r * o->window;
	return o->iters - base < o->window ? o->iters - base : o->window;
}
static int is_send(uint32_t n, uint32_t p) { return (n - 1 - p) % 2 == 0; }

static int parse(int argc, char **argv, struct ds_opts *o)
{
	int i;
	o->iters = 10000, o->max_size = 4096, o->window = 16;
	for (i = 1; i < argc; ++i) {
		uint64_t v;
		int got;
		if ((got = nicsim_arg_u64(argv[i], "--iters=", 1, 0x7fffffffu, &v)) > 0)
			o->iters = (uint32_t)v;
		else if (got == 0 && (got = nicsim_arg_u64(argv[i], "--max-size=", DS_HDR, 65536, &v)) > 0)
			o->max_size = (uint32_t)v;
		else if (got == 0 && (got = nicsim_arg_u64(argv[i], "--window=", 2, DS_MAX_WINDOW, &v)) > 0)
			o->window = (uint32_t)v;
		else if (got < 0)
			return 1;
		else
			return nicsim_log("dapl_soak: unknown argument %s", argv[i]), 1;
	}
	if (o->window % 2)
		return nicsim_fail("dapl_soak: --window must be even (sends and RDMA writes alternate)"), 1;
	if (o->window * o->max_size < 256)
		return nicsim_fail("dapl_soak: --window times --max-size must be at least 256 (the answers' ring)"), 1;
	return 0;
}

/* ---- DTO accounting ---------------------------------------------------- */

static int dto_posted(struct ds_dtos *d, DAT_UINT64 cookie)
{
	int k;
	for (k = 0; k < DS_DTOS && d->live[k]; ++k)
		;
	if (k == DS_DTOS)
		return -1;
	d->cookie[k] = cookie;
	d->live[k] = 1;
	d->posted++;
	return k;
}

/* Takes one completion: 0, or -1 when its DTO was not outstanding (a
 * second completion, or one never posted). */
static int dto_completed(struct ds_dtos *d, const DAT_DTO_COMPLETION_EVENT_DATA *c)
{
	int k;
	for (k = 0; k < DS_DTOS; ++k)
		if (d->live[k] && d->cookie[k] == c->user_cookie.as_64)
			break;
	if (k == DS_DTOS)
		return d->twice++, -1;
	d->live[k] = 0;
	d->completed++;
	if (c->status == DAT_DTO_ERR_FLUSHED)
		d->flushed++;
	else if (c->status != DAT_DTO_SUCCESS && !d->errors++)
		d->first_error = (int)c->status;
	return 0;
}

static uint32_t dto_live(const struct ds_dtos *d)
{
	uint32_t k, n = 0;
	for (k = 0; k < DS_DTOS; ++k)
		n += (uint32_t)d->live[k];
	return n;
}

/* Waits up to us for one DTO completion into *c: 0, -1 for one not
 * outstanding, -2 when none came. */
static int dto_next(struct dt_ep *e, struct ds_dtos *d, DAT_TIMEOUT us, DAT_DTO_COMPLETION_EVENT_DATA *c)
{
	DAT_EVENT ev;
	DAT_COUNT more;
	if (dat_evd_wait(e->dto_evd, us, 1, &ev, &more) != DAT_SUCCESS)
		return -2;
	if (ev.event_number != DAT_DTO_COMPLETION_EVENT)
		return nicsim_log("dapl_soak: event 0x%x on the DTO EVD", (unsigned)ev.event_number), -1;
	*c = ev.event_data.dto_completion_event_data;
	return dto_completed(d, c);
}

/* Every outstanding DTO back, or `us` with none: how many never came. */
static double dto_drain(struct dt_ep *e, struct ds_dtos *d, DAT_TIMEOUT us)
{
	DAT_DTO_COMPLETION_EVENT_DATA c;
	while (dto_live(d) && dto_next(e, d, us, &c) != -2)
		;
	return dto_live(d);
}

static DAT_RETURN post(struct dt_ep *e, struct ds_dtos *d, DAT_UINT64 cookie, int kind,
		       unsigned char *p, uint32_t len, DAT_RMR_TRIPLET *r)
{
	DAT_LMR_TRIPLET iov = dt_iov(e, p, len);
	DAT_DTO_COOKIE c;
	DAT_RETURN rc;
	c.as_64 = cookie;
	rc = kind == 'r'   ? dat_ep_post_recv(e->ep, 1, &iov, c, DAT_COMPLETION_DEFAULT_FLAG)
	     : kind == 's' ? dat_ep_post_send(e->ep, 1, &iov, c, DAT_COMPLETION_DEFAULT_FLAG)
			   : dat_ep_post_rdma_write(e->ep, 1, &iov, c, r, DAT_COMPLETION_DEFAULT_FLAG);
	if (rc == DAT_SUCCESS && dto_posted(d, cookie) < 0)
		rc = DAT_INSUFFICIENT_RESOURCES; /* more outstanding than the soak keeps */
	if (rc != DAT_SUCCESS)
		nicsim_log("dapl_soak: posting DTO %llx: 0x%08x", (unsigned long long)cookie, (unsigned)rc);
	return rc;
}

/* ---- server ------------------------------------------------------------ */

#define COOKIE_RECV (1ull << 40)
#define COOKIE_ACK (2ull << 40)
#define COOKIE_REC (3ull << 40)
#define ACK_RING 16

struct ds_server {
	const struct ds_opts *o;
	struct dt_ep e;
	struct ds_dtos d;
	struct ds_counts c;
	DAT_UINT64 gen;
	uint32_t pos; /* the next position of round c.round to look at */
	int broken;
};

static unsigned char *rx_buf(struct dt_ep *e, const struct ds_opts *o, uint32_t k)
{
	return dt_recv_area(e) + (size_t)k * o->max_size;
}
static unsigned char *slot_of(struct dt_ep *e, const struct ds_opts *o, uint32_t p)
{
	return dt_rdma_area(e) + (size_t)(p / 2) * o->max_size;
}

static int server_post_recv(struct ds_server *s, uint32_t k)
{
	const DAT_UINT64 cookie = COOKIE_RECV | (++s->gen << 8) | k;
	return post(&s->e, &s->d, cookie, 'r', rx_buf(&s->e, s->o, k), s->o->max_size, 0) != DAT_SUCCESS;
}

/* The writes of round c.round that landed in their slots. After a break
 * a write may have landed in part (DAT leaves the target's bytes undefined
 * when a DTO fails): only whole records count then, nothing is corrupt. */
static void check_writes(struct ds_server *s, uint32_t n, int after_break)
{
	const uint32_t base = s->c.round * s->o->window;
	uint32_t q;
	for (q = 0; q < n; ++q) {
		int v;
		if (is_send(n, q) || (s->c.mask >> q & 1))
			continue;
		v = check_record(s->o, base + q, slot_of(&s->e, s->o, q), 0);
		if (v == 0)
			s->c.mask |= 1ull << q, s->c.delivered++;
		else if (v == 1 && !after_break)
			s->c.corrupted++;
		/* another record whole: this write did not land (the client
		 * counts it lost if its DTO succeeded) */
	}
}

/* The round's last send came: its writes, then the answer. */
static int end_round(struct ds_server *s, uint32_t n)
{
	unsigned char *a = dt_send_area(&s->e) + (size_t)(s->c.round % ACK_RING) * 16;
	check_writes(s, n, 0);
	put32(a, s->c.round);
	memcpy(a + 4, &s->c.mask, 8);
	if (post(&s->e, &s->d, COOKIE_ACK | s->c.round, 's', a, 12, 0) != DAT_SUCCESS)
		return nicsim_log("dapl_soak: the answer to round %u not posted", s->c.round), 1;
	s->c.prev_mask = s->c.mask;
	s->c.mask = 0;
	s->c.round++;
	s->pos = 0;
	return 0;
}

/* A RECV completed with success: check its record, repost it. */
static int server_take(struct ds_server *s, uint32_t k, DAT_VLEN got)
{
	const uint32_t n = round_len(s->o, s->c.round), base = s->c.round * s->o->window;
	uint32_t p = s->pos;
	int v;
	while (p < n && !is_send(n, p))
		++p;
	v = check_record(s->o, base + p, rx_buf(&s->e, s->o, k), (uint32_t)got);
	if (p >= n || v == 2) {
		if (get32(rx_buf(&s->e, s->o, k) + 4) < base + p)
			s->c.duplicated++;
		else
			s->c.out_of_order++;
	} else if (v == 1)
		s->c.corrupted++;
	else
		s->c.mask |= 1ull << p, s->c.delivered++;
	s->pos = p + 1;
	if (server_post_recv(s, k))
		return 1;
	return p == n - 1 ? end_round(s, n) : 0;
}

/* Takes completions until the client says it stopped. */
static int server_loop(struct ds_server *s, struct ds_stop *stop)
{
	DAT_DTO_COMPLETION_EVENT_DATA c;
	for (;;) {
		int r = dto_next(&s->e, &s->d, 1000, &c);
		if (r == -2) {
			if (nicsim_mgmt_recv(nicsim_workload_node(1), DS_TAG_STOP, stop, sizeof *stop, 0, 1) ==
			    (long)sizeof *stop)
				return 0;
			continue;
		}
		if (r < 0 || c.status != DAT_DTO_SUCCESS)
			s->broken = 1;
		if (r == 0 && c.status == DAT_DTO_SUCCESS && (c.user_cookie.as_64 >> 40) == 1 && !s->broken &&
		    server_take(s, (uint32_t)(c.user_cookie.as_64 & 0xff), c.transfered_length))
			return 1;
	}
}

static int server_accept(struct ds_server *s, DAT_EVD_HANDLE cr_evd)
{
	DAT_EVENT ev;
	unsigned char priv[13];
	if (dt_wait(cr_evd, DAT_CONNECTION_REQUEST_EVENT, &ev, 10000000))
		return 1;
	priv[0] = 0;
	dt_put_region(priv + 1, &s->e);
	DT_CHECK(dat_cr_accept(ev.event_data.cr_arrival_event_data.cr_handle, s->e.ep, 13, priv));
	return dt_wait(s->e.conn_evd, DAT_CONNECTION_EVENT_ESTABLISHED, &ev, 10000000);
}

/* After the client's stop: our DTOs back, the round that broke looked at. */
static void server_finish(struct ds_server *s, const struct ds_stop *stop)
{
	DAT_EVENT ev;
	DAT_EP_STATE st;
	if (dat_ep_get_status(s->e.ep, &st, NULL, NULL) == DAT_SUCCESS && st == DAT_EP_STATE_CONNECTED)
		dat_ep_disconnect(s->e.ep, DAT_CLOSE_ABRUPT_FLAG);
	s->c.dto_never = dto_drain(&s->e, &s->d, DS_WAIT_US);
	dt_wait(s->e.conn_evd, DAT_CONNECTION_EVENT_DISCONNECTED, &ev, DS_WAIT_US);
	if (stop->broken && s->c.round < (s->o->iters + s->o->window - 1) / s->o->window)
		check_writes(s, round_len(s->o, s->c.round), 1);
	s->c.dto_posted = s->d.posted;
	s->c.dto_completed = s->d.completed;
	s->c.dto_twice = s->d.twice;
}

static int run_server(const struct ds_opts *o)
{
	struct ds_server *s = (struct ds_server *)nicsim_alloc(sizeof *s, 64);
	DAT_IA_HANDLE ia;
	DAT_PZ_HANDLE pz;
	DAT_EVD_HANDLE async = DAT_HANDLE_NULL, cr_evd;
	DAT_PSP_HANDLE psp;
	struct ds_stop stop;
	uint32_t k;
	if (!s)
		return 1;
	memset(s, 0, sizeof *s);
	s->o = o;
	DT_CHECK(dat_ia_open("ib0", 16, &async, &ia));
	DT_CHECK(dat_pz_create(ia, &pz));
	DT_CHECK(dat_evd_create(ia, 8, DAT_HANDLE_NULL, DAT_EVD_CR_FLAG, &cr_evd));
	if (dt_ep_open(ia, pz, &s->e, (DAT_VLEN)o->window * o->max_size, 1))
		return 1;
	for (k = 0; k < o->window; ++k)
		if (server_post_recv(s, k))
			return 1;
	DT_CHECK(dat_psp_create(ia, DS_QUAL, cr_evd, DAT_PSP_CONSUMER_FLAG, &psp));
	nicsim_barrier();
	if (server_accept(s, cr_evd) || server_loop(s, &stop))
		return 1;
	server_finish(s, &stop);
	nicsim_mgmt_send(nicsim_workload_node(1), DS_TAG_COUNTS, &s->c, sizeof s->c);
	nicsim_result("records_checked", s->c.delivered, "records");
	dat_psp_free(psp);
	return 0;
}

/* ---- client ------------------------------------------------------------ */

struct ds_client {
	const struct ds_opts *o;
	struct dt_ep e;
	struct ds_dtos d;
	DAT_DTO_COMPLETION_STATUS st[DS_MAX_WINDOW];
	uint64_t ack_mask;
	int ack_ok, broken;
	double sent, delivered, failed, lost, both;
};

/* Posts round r: the RECV for its answer, then its records. */
static int post_round(struct ds_client *s, uint32_t r, uint32_t n)
{
	const uint32_t base = r * s->o->window;
	DAT_RMR_TRIPLET rt;
	uint32_t p;
	if (post(&s->e, &s->d, COOKIE_ACK | r, 'r', dt_recv_area(&s->e), 16, 0) != DAT_SUCCESS)
		return nicsim_log("dapl_soak: RECV for round %u not posted", r), 1;
	for (p = 0; p < n; ++p) {
		unsigned char *m = dt_send_area(&s->e) + (size_t)p * s->o->max_size;
		const uint32_t len = fill_record(s->o, base + p, m);
		rt.rmr_context = s->e.peer_rkey, rt.pad = 0;
		rt.target_address = s->e.peer_addr + (DAT_VADDR)(p / 2) * s->o->max_size;
		rt.segment_length = len;
		s->st[p] = DAT_DTO_ERR_FLUSHED; /* until it completes */
		if (post(&s->e, &s->d, COOKIE_REC | ((DAT_UINT64)r << 8) | p, is_send(n, p) ? 's' : 'w', m, len, &rt) !=
		    DAT_SUCCESS)
			return nicsim_log("dapl_soak: record %u not posted", base + p), 1;
		s->sent++;
	}
	return 0;
}

/* Takes round r's completions: every DTO and the answer, or none for
 * DS_WAIT_US. */
static void take_round(struct ds_client *s, uint32_t r)
{
	DAT_DTO_COMPLETION_EVENT_DATA c;
	s->ack_ok = 0;
	while (dto_live(&s->d)) {
		const int v = dto_next(&s->e, &s->d, DS_WAIT_US, &c);
		DAT_UINT64 ck;
		if (v == -2)
			break;
		if (v < 0 || c.status != DAT_DTO_SUCCESS)
			s->broken = 1;
		if (v < 0)
			continue;
		ck = c.user_cookie.as_64;
		if (ck >> 40 == 3 && (ck >> 8 & 0xffffffffu) == r)
			s->st[ck & 0xff] = c.status;
		else if (ck == (COOKIE_ACK | r) && c.status == DAT_DTO_SUCCESS && get32(dt_recv_area(&s->e)) == r) {
			memcpy(&s->ack_mask, dt_recv_area(&s->e) + 4, 8);
			s->ack_ok = 1;
		}
	}
	if (dto_live(&s->d) || !s->ack_ok)
		s->broken = 1;
}

/* Each record of a round: delivered (in the server's mask), reported
 * failed (its DTO's status), or lost without a report. */
static void tally(struct ds_client *s, uint32_t n, uint64_t mask)
{
	uint32_t p;
	for (p = 0; p < n; ++p) {
		const int in = (int)(mask >> p & 1), ok = s->st[p] == DAT_DTO_SUCCESS;
		s->delivered += in;
		s->failed += !ok;
		s->both += in && !ok;
		s->lost += ok && !in;
	}
}

static int client_connect(struct ds_client *s)
{
	struct sockaddr_in server;
	DAT_EVENT ev;
	unsigned char priv[1] = {0};
	dt_addr(&server, dt_node_ip(nicsim_workload_node(0)));
	DT_CHECK(dat_ep_connect(s->e.ep, (DAT_IA_ADDRESS_PTR)&server, DS_QUAL, DAT_TIMEOUT_INFINITE, 1, priv,
				DAT_QOS_BEST_EFFORT, DAT_CONNECT_DEFAULT_FLAG));
	if (dt_wait(s->e.conn_evd, DAT_CONNECTION_EVENT_ESTABLISHED, &ev, 10000000))
		return 1;
	if (ev.event_data.connect_event_data.private_data_size != 13)
		return nicsim_log("dapl_soak: ESTABLISHED without the server's region"), 1;
	dt_get_region((unsigned char *)ev.event_data.connect_event_data.private_data + 1, &s->e);
	return 0;
}

/* Rounds until the last or the first failure; the round that broke. */
static uint32_t client_rounds(struct ds_client *s, uint32_t *nb)
{
	const uint32_t rounds = (s->o->iters + s->o->window - 1) / s->o->window;
	uint32_t r;
	for (r = 0; r < rounds; ++r) {
		const double before = s->sent;
		const uint32_t n = round_len(s->o, r);
		if (post_round(s, r, n))
			s->broken = 1;
		take_round(s, r);
		*nb = (uint32_t)(s->sent - before);
		if (s->broken)
			return r;
		tally(s, n, s->ack_mask);
	}
	return rounds;
}

static int client_verdict(struct ds_client *s, const struct ds_counts *c, double never)
{
	const double twice = s->d.twice + c->dto_twice, all_never = never + c->dto_never;
	nicsim_result("sent", s->sent, "records");
	nicsim_result("delivered", s->delivered, "records");
	nicsim_result("failed", s->failed, "records");
	nicsim_result("failed_status", s->d.first_error, "");
	nicsim_result("delivered_after_failure", s->both, "records");
	nicsim_result("flushed", s->d.flushed, "DTOs");
	nicsim_result("corrupted", c->corrupted, "records");
	nicsim_result("duplicated", c->duplicated, "records");
	nicsim_result("out_of_order", c->out_of_order, "records");
	nicsim_result("lost_unreported", s->lost, "records");
	nicsim_result("dto_posted", s->d.posted + c->dto_posted, "DTOs");
	nicsim_result("dto_completed", s->d.completed + c->dto_completed, "DTOs");
	nicsim_result("dto_twice", twice, "DTOs");
	nicsim_result("dto_never", all_never, "DTOs");
	if (c->corrupted || c->duplicated || c->out_of_order || s->lost || twice || all_never)
		return nicsim_log("dapl_soak: DAT broke its promise: %.0f corrupted, %.0f duplicated, %.0f out of "
				  "order, %.0f lost unreported, %.0f DTOs completed twice, %.0f never",
				  c->corrupted, c->duplicated, c->out_of_order, s->lost, twice, all_never),
		       1;
	if (s->delivered + s->failed - s->both < s->sent || s->delivered != c->delivered)
		return nicsim_log("dapl_soak: %.0f of %.0f records neither delivered nor reported failed (server: %.0f)",
				  s->sent - s->delivered - s->failed + s->both, s->sent, c->delivered),
		       1;
	return 0;
}

static int run_client(const struct ds_opts *o)
{
	struct ds_client *s = (struct ds_client *)nicsim_alloc(sizeof *s, 64);
	DAT_IA_HANDLE ia;
	DAT_PZ_HANDLE pz;
	DAT_EVD_HANDLE async = DAT_HANDLE_NULL;
	struct ds_stop stop;
	struct ds_counts c;
	uint32_t nb = 0;
	double never = 0;
	if (!s)
		return 1;
	memset(s, 0, sizeof *s);
	s->o = o;
	DT_CHECK(dat_ia_open("ib0", 16, &async, &ia));
	DT_CHECK(dat_pz_create(ia, &pz));
	if (dt_ep_open(ia, pz, &s->e, (DAT_VLEN)o->window * o->max_size, 1))
		return 1;
	nicsim_barrier();
	if (client_connect(s))
		return 1;
	stop.round = client_rounds(s, &nb);
	stop.broken = (uint32_t)s->broken;
	dat_ep_disconnect(s->e.ep, s->broken ? DAT_CLOSE_ABRUPT_FLAG : DAT_CLOSE_GRACEFUL_FLAG);
	never = dto_drain(&s->e, &s->d, DS_WAIT_US);
	nicsim_mgmt_send(nicsim_workload_node(0), DS_TAG_STOP, &stop, sizeof stop);
	if (nicsim_mgmt_recv(nicsim_workload_node(0), DS_TAG_COUNTS, &c, sizeof c, 0, 0) != (long)sizeof c)
		return nicsim_log("dapl_soak: no counts from the server"), 1;
	if (s->broken)
		tally(s, nb, c.round == stop.round ? c.mask : c.round == stop.round + 1 ? c.prev_mask : 0);
	return client_verdict(s, &c, never);
}

static int check_options(int argc, char **argv)
{
	struct ds_opts o;
	memset(&o, 0, sizeof o);
	return parse(argc, argv, &o);
}

static int dapl_soak_main(int argc, char **argv)
{
	struct ds_opts o;
	if (parse(argc, argv, &o))
		return 2;
	return nicsim_workload_rank() == 0 ? run_server(&o) : run_client(&o);
}

__attribute__((constructor)) static void dapl_soak_register(void)
{
	nicsim_register_program_checked(
		"dapl_soak", dapl_soak_main, check_options,
		"DAT sends and RDMA writes under link faults, every byte checked and every DTO's completion "
		"accounted for once; rank 0 serves, rank 1 sends. --iters=10000 (records), --max-size=4096, "
		"--window=16 (even). Results (client): sent, delivered, failed, failed_status, flushed, corrupted, "
		"duplicated, out_of_order, lost_unreported, dto_posted, dto_completed, dto_twice, dto_never");
}
