/*
 * sdp_stream: throughput of SDP stream sockets by message size over
 * several connections at once. Rank 0 accepts --conns connections (ports
 * --port, --port+1, ...), rank 1 connects them; for each size, one thread
 * per connection on each side streams --bytes bytes in messages of that
 * size, the reader checking every byte. Time runs from the barrier that
 * starts a size to the last byte read.
 *
 * Arguments:
 *   --sizes=a,b,...   message sizes in bytes (4096,16384,65536,262144,1048576)
 *   --bytes=N         bytes per connection and size (4194304)
 *   --conns=N         connections (2, at most 8)
 *   --port=N          the first port (5400)
 *
 * Results (reader): sdp_stream_<size>_MBps (all connections, 10^6 bytes/s),
 * sdp_stream_<size>_ns (the time), bytes_ok (bytes read and checked);
 * writer: zcopy_msgs (SrcAvail and RdmaWrCompl sent), copy_msgs (Data).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nicsim/app.h"
#include "ti/sdp/sdp.h"

#define MAX_SIZES 16
#define MAX_CONNS 8
#define MAX_SIZE (1 << 20)

struct st_opts {
	long sizes[MAX_SIZES];
	int nsizes, conns, port;
	long bytes;
};

struct st_conn {
	struct sdp_sock *s;
	unsigned char *buf;
	long size, bytes, wrong;
	int index, failed;
};

/* The numeric options; 1 taken, 0 another option, -1 a bad value (failed). */
static int parse_number(const char *a, struct st_opts *o)
{
	uint64_t v, sizes[MAX_SIZES];
	uint32_t n, i;
	int got;
	if ((got = nicsim_arg_u64_list(a, "--sizes=", 1, MAX_SIZE, sizes, MAX_SIZES, &n)) > 0) {
		for (i = 0; i < n; ++i)
			o->sizes[i] = (long)sizes[i];
		o->nsizes = (int)n;
	} else if (got == 0 && (got = nicsim_arg_u64(a, "--bytes=", 1, 1ull << 40, &v)) != 0)
		o->bytes = (long)v;
	else if (got == 0 && (got = nicsim_arg_u64(a, "--conns=", 1, MAX_CONNS, &v)) != 0)
		o->conns = (int)v;
	else if (got == 0 && (got = nicsim_arg_u64(a, "--port=", 1, 65535, &v)) != 0)
		o->port = (int)v;
	return got;
}

static int parse(int argc, char **argv, struct st_opts *o)
{
	static const long defaults[] = {4096, 16384, 65536, 262144, 1048576};
	int i, got;
	memcpy(o->sizes, defaults, sizeof defaults);
	o->nsizes = 5;
	o->conns = 2;
	o->port = 5400;
	o->bytes = 4194304;
	for (i = 1; i < argc; ++i) {
		if ((got = parse_number(argv[i], o)) < 0)
			return -1;
		if (!got)
			return nicsim_log("sdp_stream: unknown argument %s", argv[i]), -1;
	}
	if (o->port + o->conns > 65536)
		return nicsim_fail("sdp_stream: --port plus --conns passes port 65535"), -1;
	return 0;
}

static unsigned char pattern(int conn, long offset) { return (unsigned char)(conn * 29 + offset * 13 + offset / 509); }

static void writer_thread(void *arg)
{
	struct st_conn *c = (struct st_conn *)arg;
	long at = 0, i;
	while (at < c->bytes && !c->failed) {
		const long n = c->bytes - at < c->size ? c->bytes - at : c->size;
		for (i = 0; i < n; ++i)
			c->buf[i] = pattern(c->index, at + i);
		if (sdp_send(c->s, c->buf, (size_t)n))
			c->failed = 1;
		at += n;
	}
}

static void reader_thread(void *arg)
{
	struct st_conn *c = (struct st_conn *)arg;
	long at = 0, i;
	while (at < c->bytes && !c->failed) {
		const long want = c->bytes - at < c->size ? c->bytes - at : c->size;
		const long n = sdp_recv(c->s, c->buf, (size_t)want);
		if (n <= 0) {
			c->failed = 1;
			break;
		}
		for (i = 0; i < n; ++i)
			c->wrong += c->buf[i] != pattern(c->index, at + i);
		at += n;
	}
}

/* One size on every connection at once (one thread each). */
static int run_size(struct st_conn *cs, int conns, long size, long bytes, int reader)
{
	nicsim_thread_t t[MAX_CONNS];
	int k, rc = 0;
	for (k = 0; k < conns; ++k) {
		cs[k].size = size;
		cs[k].bytes = bytes;
		t[k] = nicsim_thread_spawn(reader ? reader_thread : writer_thread, &cs[k], reader ? "sdp_rd" : "sdp_wr");
		if (!t[k])
			return -1;
	}
	for (k = 0; k < conns; ++k) {
		nicsim_thread_join(t[k]);
		if (cs[k].failed || cs[k].wrong)
			rc = -1;
	}
	return rc;
}

static int open_conns(const struct st_opts *o, struct st_conn *cs, int reader)
{
	int k;
	for (k = 0; k < o->conns; ++k) {
		memset(&cs[k], 0, sizeof cs[k]);
		cs[k].index = k;
		cs[k].buf = (unsigned char *)nicsim_alloc(MAX_SIZE, 64);
		if (!reader)
			nicsim_barrier(); /* the listener is up */
		cs[k].s = reader ? sdp_accept((unsigned short)(o->port + k))
				 : sdp_connect(0x0a000000u + nicsim_workload_node(0) + 1, (unsigned short)(o->port + k));
		if (!cs[k].buf || !cs[k].s)
			return nicsim_log("sdp_stream: connection %d failed", k), -1;
	}
	return 0;
}

static void report(const struct st_opts *o, int k, unsigned long long ns)
{
	char name[64];
	const double total = (double)o->bytes * o->conns;
	snprintf(name, sizeof name, "sdp_stream_%ld_MBps", o->sizes[k]);
	nicsim_result(name, ns ? total * 1e3 / (double)ns : 0, "MB/s");
	snprintf(name, sizeof name, "sdp_stream_%ld_ns", o->sizes[k]);
	nicsim_result(name, (double)ns, "ns");
}

static int close_conns(struct st_conn *cs, int conns, int reader)
{
	int k, rc = 0;
	unsigned zcopy = 0, copies = 0;
	unsigned char byte;
	for (k = 0; k < conns; ++k) {
		if (reader && sdp_recv(cs[k].s, &byte, 1) != 0) { /* the writer's DisConn */
			nicsim_log("sdp_stream: no DisConn on %d", k);
			rc = -1;
		}
		zcopy += sdp_messages_sent(cs[k].s, 0xfe) + sdp_messages_sent(cs[k].s, 0x05);
		copies += sdp_messages_sent(cs[k].s, 0xff);
		if (sdp_close(cs[k].s))
			rc = -1;
		nicsim_free(cs[k].buf);
	}
	if (!reader) {
		nicsim_result("zcopy_msgs", zcopy, "messages");
		nicsim_result("copy_msgs", copies, "messages");
	}
	return rc;
}

static int check_options(int argc, char **argv)
{
	struct st_opts o;
	return parse(argc, argv, &o);
}

static int sdp_stream_main(int argc, char **argv)
{
	struct st_opts o;
	struct st_conn cs[MAX_CONNS];
	const int reader = nicsim_workload_rank() == 0;
	double checked = 0;
	int k;
	if (parse(argc, argv, &o))
		return 2;
	if (open_conns(&o, cs, reader))
		return 1;
	for (k = 0; k < o.nsizes; ++k) {
		unsigned long long t0;
		nicsim_barrier();
		t0 = nicsim_now_ns();
		if (run_size(cs, o.conns, o.sizes[k], o.bytes, reader))
			return nicsim_log("sdp_stream: %ld-byte messages failed", o.sizes[k]), 1;
		if (reader) {
			report(&o, k, nicsim_now_ns() - t0);
			checked += (double)o.bytes * o.conns;
		}
	}
	if (reader)
		nicsim_result("bytes_ok", checked, "bytes");
	return close_conns(cs, o.conns, reader) ? 1 : 0;
}

__attribute__((constructor)) static void reg(void)
{
	nicsim_register_program_checked("sdp_stream", sdp_stream_main, check_options,
				"SDP stream sockets over the TI: throughput by message size over several connections, every "
				"byte checked; rank 0 reads, rank 1 writes. --sizes=4096,16384,65536,262144,1048576 (up to "
				"16, each 1 B to 1 MiB), --bytes=4194304 (per connection and size), --conns=2 (at most 8), "
				"--port=5400 (the first)");
}
