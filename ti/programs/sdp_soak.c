/*
 * sdp_soak: SDP stream sockets under link faults, every byte checked and
 * every record accounted for. Rank 0 reads (accepts on --port), rank 1
 * writes (connects).
 *
 * The writer sends --iters records of 16 to --max-size bytes (the size
 * varies by record). Each record starts with a header: a magic word, the
 * sequence number, the record's length and an Adler-style checksum of the
 * payload, and each payload differs from every other record's. Records go
 * one per sdp_send, or packed into sends of up to --batch bytes (a batch
 * of at least host.sdp.zcopy_threshold moves by zero-copy). After the last
 * record an end record; the reader answers it with its count of records
 * delivered, over the socket, and both close.
 *
 * The reader reads the stream with buffers of --rbuf bytes (not a multiple
 * of the records, so records span reads), puts the records together and
 * checks each: the next sequence number is delivered; an earlier one is a
 * duplicate, a later one out of order; a bad magic, length, checksum or
 * pattern is a corruption (the stream's framing is lost then: the reader
 * stops).
 *
 * A stream socket's promise: every byte once and in order, or a failure
 * (sdp_send or sdp_recv returns -1, sdp_error says why). On a failure the
 * soak stops: the records the writer handed to sdp_send and the reader
 * never had are reported failed, with the error sdp_error gave (SDP's
 * ETIMEDOUT when the transport's retries ran out). A socket cannot be
 * connected again; a new one could, but the soak counts one connection.
 *
 * Results (writer): sent (records handed to sdp_send), delivered,
 * failed (reported), failed_code (sdp_error of the failure, 0 without),
 * corrupted, duplicated, out_of_order, lost_unreported (not delivered
 * with no failure reported), reader_truncated (1: the reader's stream
 * ended, sdp_recv 0, before the end record: a failure taken for an
 * orderly end), reader_failed_code (sdp_error of the reader's failure),
 * zcopy_msgs (SrcAvail and RdmaWrCompl sent); reader: bytes_checked. The
 * run fails unless corrupted, duplicated, out_of_order, lost_unreported
 * and reader_truncated are zero, and every record was delivered or
 * reported failed.
 *
 * Arguments: --iters=N (10000), --max-size=N (4096, at most 1 MiB),
 * --batch=N (0: one record per send), --rbuf=N (3000), --port=N (5600).
 */
#include <stdlib.h>
#include <string.h>

#include "nicsim/app.h"
#include "ti/sdp/sdp.h"

#define HDR 16u
#define MAGIC 0x53445053u /* "SDPS" */
#define END_SEQ 0xffffffffu
#define MAX_RECORD (1u << 20)
#define COUNTS_TAG 0x534f414bu

struct sk_opts {
	uint32_t iters, max_size, batch, rbuf, port;
};

/* What the reader saw, sent to the writer at the end (management network). */
struct sk_counts {
	double delivered, corrupted, duplicated, out_of_order, bytes;
	double truncated; /* the stream ended (sdp_recv 0) before the end record: a failure taken for an end */
	double code;      /* sdp_error when the reader's stream failed */
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
static uint32_t record_size(const struct sk_opts *o, uint32_t seq) { return HDR + (seq * 7919u) % (o->max_size - HDR + 1); }

static void put32(uint8_t *p, uint32_t v) { memcpy(p, &v, 4); }
static uint32_t get32(const uint8_t *p)
{
	uint32_t v;
	memcpy(&v, p, 4);
	return v;
}

/* Writes record seq (or the end record) at p; its length. */
static uint32_t fill_record(const struct sk_opts *o, uint32_t seq, uint8_t *p)
{
	const uint32_t len = seq == END_SEQ ? HDR : record_size(o, seq);
	uint32_t j;
	for (j = 0; j < len - HDR; ++j)
		p[HDR + j] = pattern(seq, j);
	put32(p, MAGIC);
	put32(p + 4, seq);
	put32(p + 8, len);
	put32(p + 12, checksum(p + HDR, len - HDR));
	return len;
}

/* The numeric options; 1 taken, 0 another option, -1 a bad value (failed). */
static int parse_number(const char *a, struct sk_opts *o)
{
	uint64_t v;
	int got;
	if ((got = nicsim_arg_u64(a, "--iters=", 0, END_SEQ - 1, &v)) != 0)
		o->iters = (uint32_t)v;
	else if ((got = nicsim_arg_u64(a, "--max-size=", HDR, MAX_RECORD, &v)) != 0)
		o->max_size = (uint32_t)v;
	else if ((got = nicsim_arg_u64(a, "--batch=", 0, 4 * MAX_RECORD, &v)) != 0)
		o->batch = (uint32_t)v;
	else if ((got = nicsim_arg_u64(a, "--rbuf=", 1, 4 * MAX_RECORD, &v)) != 0)
		o->rbuf = (uint32_t)v;
	else if ((got = nicsim_arg_u64(a, "--port=", 1, 65535, &v)) != 0)
		o->port = (uint32_t)v;
	return got;
}

static int parse(int argc, char **argv, struct sk_opts *o)
{
	int i, got;
	o->iters = 10000, o->max_size = 4096, o->batch = 0, o->rbuf = 3000, o->port = 5600;
	for (i = 1; i < argc; ++i) {
		if ((got = parse_number(argv[i], o)) < 0)
			return -1;
		if (!got)
			return nicsim_log("sdp_soak: unknown argument %s", argv[i]), -1;
	}
	return 0;
}

/* ---- reader ------------------------------------------------------------ */

struct sk_reader {
	const struct sk_opts *o;
	uint8_t *rec; /* the record being put together */
	uint32_t have, need, expect;
	int ended, lost_framing;
	struct sk_counts c;
};

/* A whole record in r->rec: check it and count it. */
static void check_record(struct sk_reader *r)
{
	const uint32_t seq = get32(r->rec + 4), len = get32(r->rec + 8), sum = get32(r->rec + 12);
	uint32_t j;
	int bad = sum != checksum(r->rec + HDR, len - HDR);
	if (seq == END_SEQ) {
		if (bad || len != HDR)
			++r->c.corrupted, r->lost_framing = 1;
		r->ended = !bad && len == HDR;
		return;
	}
	for (j = 0; !bad && j < len - HDR; ++j)
		bad = r->rec[HDR + j] != pattern(seq, j);
	if (bad || len != record_size(r->o, seq))
		++r->c.corrupted;
	else if (seq == r->expect)
		++r->c.delivered, ++r->expect, r->c.bytes += len;
	else if (seq < r->expect)
		++r->c.duplicated;
	else
		++r->c.out_of_order;
}

/* Takes n bytes of the stream into records. */
static void take_bytes(struct sk_reader *r, const uint8_t *p, uint32_t n)
{
	while (n && !r->lost_framing && !r->ended) {
		const uint32_t want = (r->have < HDR ? HDR : r->need) - r->have, k = n < want ? n : want;
		memcpy(r->rec + r->have, p, k);
		r->have += k, p += k, n -= k;
		if (r->have == HDR) {
			r->need = get32(r->rec + 8);
			if (get32(r->rec) != MAGIC || r->need < HDR || r->need > r->o->max_size) {
				++r->c.corrupted;
				r->lost_framing = 1; /* where the next record starts is unknown */
				return;
			}
		}
		if (r->have >= HDR && r->have == r->need) {
			check_record(r);
			r->have = 0;
		}
	}
}

static int run_reader(const struct sk_opts *o)
{
	struct sk_reader r;
	struct sdp_sock *s;
	uint8_t *buf = (uint8_t *)nicsim_alloc(o->rbuf, 64);
	long n = 1;
	memset(&r, 0, sizeof r);
	r.o = o;
	r.rec = (uint8_t *)nicsim_alloc(o->max_size, 64);
	if (!buf || !r.rec || !(s = sdp_accept((uint16_t)o->port)))
		return nicsim_log("sdp_soak: no connection"), 1;
	while (!r.ended && !r.lost_framing && (n = sdp_recv(s, buf, o->rbuf)) > 0)
		take_bytes(&r, buf, (uint32_t)n);
	if (r.ended) {
		uint8_t ack[4];
		put32(ack, r.expect);
		if (sdp_send(s, ack, sizeof ack) == 0)
			n = sdp_recv(s, buf, 1); /* the writer's DisConn: 0 */
	}
	if (!r.ended || n != 0)
		nicsim_log("sdp_soak: the stream ended early (%ld, error %d) after %u records", n, sdp_error(s),
			   r.expect);
	r.c.truncated = !r.ended && !r.lost_framing && n == 0;
	r.c.code = n < 0 ? sdp_error(s) : 0;
	sdp_close(s);
	nicsim_result("bytes_checked", r.c.bytes, "bytes");
	nicsim_mgmt_send(nicsim_workload_node(1), COUNTS_TAG, &r.c, sizeof r.c);
	nicsim_free(buf);
	nicsim_free(r.rec);
	return 0;
}

/* ---- writer ------------------------------------------------------------ */

struct sk_writer {
	uint32_t posted; /* records handed to sdp_send, the failing call's included */
	int code;        /* sdp_error of a failure; -1 failed without a code */
	int broken;
};

/* Sends every record, the end record, and reads the reader's answer. */
static void write_all(const struct sk_opts *o, struct sdp_sock *s, uint8_t *buf, struct sk_writer *w)
{
	const uint32_t cap = o->batch > o->max_size ? o->batch : o->max_size;
	uint32_t seq = 0, at, count;
	uint8_t ack[4];
	long n;
	while (seq <= o->iters && !w->broken) {
		for (at = 0, count = 0; seq + count <= o->iters; ++count) {
			const uint32_t id = seq + count == o->iters ? END_SEQ : seq + count;
			if (count && at + (id == END_SEQ ? HDR : record_size(o, id)) > cap)
				break;
			at += fill_record(o, id, buf + at);
		}
		w->posted += seq + count > o->iters ? count - 1 : count;
		seq += count;
		w->broken = sdp_send(s, buf, at) != 0;
	}
	if (!w->broken && (n = sdp_recv(s, ack, sizeof ack)) != (long)sizeof ack)
		w->broken = 1; /* partial answers do not happen: 4 bytes in one message */
	if (w->broken)
		w->code = sdp_error(s) ? sdp_error(s) : -1;
}

static void report(const struct sk_writer *w, const struct sk_counts *c, double failed, double lost)
{
	nicsim_result("sent", w->posted, "records");
	nicsim_result("delivered", c->delivered, "records");
	nicsim_result("failed", failed, "records");
	nicsim_result("failed_code", w->code, "");
	nicsim_result("corrupted", c->corrupted, "records");
	nicsim_result("duplicated", c->duplicated, "records");
	nicsim_result("out_of_order", c->out_of_order, "records");
	nicsim_result("lost_unreported", lost, "records");
	nicsim_result("reader_truncated", c->truncated, "");
	nicsim_result("reader_failed_code", c->code, "");
}

static int run_writer(const struct sk_opts *o)
{
	struct sk_writer w;
	struct sk_counts c;
	struct sdp_sock *s;
	const uint32_t cap = o->batch > o->max_size ? o->batch : o->max_size;
	uint8_t *buf = (uint8_t *)nicsim_alloc(cap + HDR, 64);
	double missing, failed, lost;
	memset(&w, 0, sizeof w);
	nicsim_barrier(); /* the listener is up */
	if (!buf || !(s = sdp_connect(0x0a000000u + nicsim_workload_node(0) + 1, (uint16_t)o->port)))
		return nicsim_log("sdp_soak: no connection"), 1;
	write_all(o, s, buf, &w);
	/* SrcAvail (read by the peer) and RdmaWrCompl (written into its sink) */
	nicsim_result("zcopy_msgs", sdp_messages_sent(s, 0xfe) + sdp_messages_sent(s, 0x05), "messages");
	sdp_close(s);
	nicsim_free(buf);
	if (nicsim_mgmt_recv(nicsim_workload_node(0), COUNTS_TAG, &c, sizeof c, 0, 0) != (long)sizeof c)
		return nicsim_log("sdp_soak: no counts from the reader"), 1;
	missing = (double)w.posted - c.delivered;
	failed = w.broken ? missing : 0; /* the failure reports every record not delivered */
	lost = w.broken ? 0 : missing;
	report(&w, &c, failed, lost);
	if (c.corrupted || c.duplicated || c.out_of_order || lost || missing < 0 || c.truncated)
		return nicsim_log("sdp_soak: SDP broke its promise: %.0f corrupted, %.0f duplicated, %.0f out of order, "
				  "%.0f lost unreported, %.0f delivered of %u sent, %s",
				  c.corrupted, c.duplicated, c.out_of_order, lost, c.delivered, w.posted,
				  c.truncated ? "the reader's stream ended without the end record" : "the stream whole"),
		       1;
	if (w.broken && w.code <= 0)
		return nicsim_log("sdp_soak: the connection failed without an error code"), 1;
	return 0;
}

static int check_options(int argc, char **argv)
{
	struct sk_opts o;
	return parse(argc, argv, &o);
}

static int sdp_soak_main(int argc, char **argv)
{
	struct sk_opts o;
	if (parse(argc, argv, &o))
		return 2;
	return nicsim_workload_rank() == 0 ? run_reader(&o) : run_writer(&o);
}

__attribute__((constructor)) static void reg(void)
{
	nicsim_register_program_checked(
		"sdp_soak", sdp_soak_main, check_options,
		"SDP stream sockets under link faults, every byte checked and every record accounted for; rank 0 "
		"reads, rank 1 writes. --iters=10000 (records), --max-size=4096, --batch=0 (bytes per send; 0: one "
		"record), --rbuf=3000, --port=5600. Results (writer): sent, delivered, failed, failed_code, corrupted, "
		"duplicated, out_of_order, lost_unreported (records), reader_truncated, reader_failed_code, zcopy_msgs; "
		"fails unless corrupted, duplicated, out_of_order, lost_unreported and reader_truncated are zero and "
		"every record was delivered or reported failed");
}
