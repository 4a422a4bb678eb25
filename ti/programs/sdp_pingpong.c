/*
 * sdp_pingpong: latency of SDP stream sockets by message size. Rank 0
 * accepts, rank 1 connects; for each size the client sends a pattern, the
 * server checks every byte and sends it back, the client checks the echo.
 *
 * Arguments:
 *   --sizes=a,b,...   message sizes in bytes (1,64,1024,4096,16384,65536)
 *   --iters=N         round trips per size (20, at most 4096)
 *   --port=N          the server's port (5001)
 *
 * Results (client): sdp_pingpong_<size>_ns, half a round trip (mean, ns),
 * with its tail over the round trips, sdp_pingpong_<size>_ns_p99 (nearest
 * rank) and sdp_pingpong_<size>_ns_max (ns); bytes_ok, every byte checked.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nicsim/app.h"
#include "ti/sdp/sdp.h"

#define MAX_SIZES 16
#define MAX_BYTES (1 << 20)
#define MAX_ITERS 4096 /* the client keeps each round trip's time on its stack */

struct pp_opts {
	int sizes[MAX_SIZES], nsizes, iters, port;
};

static int parse(int argc, char **argv, struct pp_opts *o)
{
	static const int defaults[] = {1, 64, 1024, 4096, 16384, 65536};
	int i, got;
	uint64_t v, sizes[MAX_SIZES];
	uint32_t n, k;
	o->iters = 20;
	o->port = 5001;
	o->nsizes = 6;
	memcpy(o->sizes, defaults, sizeof defaults);
	for (i = 1; i < argc; ++i) {
		const char *a = argv[i];
		if ((got = nicsim_arg_u64(a, "--iters=", 1, MAX_ITERS, &v)) != 0)
			o->iters = (int)v;
		else if ((got = nicsim_arg_u64(a, "--port=", 1, 65535, &v)) != 0)
			o->port = (int)v;
		else if ((got = nicsim_arg_u64_list(a, "--sizes=", 1, MAX_BYTES, sizes, MAX_SIZES, &n)) > 0)
			for (o->nsizes = (int)n, k = 0; k < n; ++k)
				o->sizes[k] = (int)sizes[k];
		else if (!got)
			return nicsim_log("sdp_pingpong: unknown argument %s", a), -1;
		if (got < 0)
			return -1;
	}
	return 0;
}

static unsigned char pattern(int size, int iter, int i) { return (unsigned char)(size * 7 + iter * 13 + i); }

static int recv_all(struct sdp_sock *s, unsigned char *buf, int len)
{
	int got = 0;
	while (got < len) {
		long n = sdp_recv(s, buf + got, (size_t)(len - got));
		if (n <= 0)
			return -1;
		got += (int)n;
	}
	return 0;
}

static int server(const struct pp_opts *o, unsigned char *buf)
{
	struct sdp_sock *s = sdp_accept((unsigned short)o->port);
	int k, it, i;
	if (!s)
		return nicsim_log("server: no connection"), 1;
	for (k = 0; k < o->nsizes; ++k)
		for (it = 0; it < o->iters; ++it) {
			if (recv_all(s, buf, o->sizes[k]))
				return nicsim_log("server: receive failed"), 1;
			for (i = 0; i < o->sizes[k]; ++i)
				if (buf[i] != pattern(o->sizes[k], it, i))
					return nicsim_log("server: byte %d of %d wrong", i, o->sizes[k]), 1;
			if (sdp_send(s, buf, (size_t)o->sizes[k]))
				return nicsim_log("server: send failed"), 1;
		}
	if (sdp_recv(s, buf, 1) != 0)
		return nicsim_log("server: no DisConn"), 1;
	return sdp_close(s) ? 1 : 0;
}

static int client(const struct pp_opts *o, unsigned char *buf, unsigned char *back)
{
	struct sdp_sock *s;
	unsigned long long bytes = 0;
	uint64_t rtt_ps[MAX_ITERS];
	int k, it, i;
	char name[64];
	nicsim_barrier();
	s = sdp_connect(0x0a000000u + nicsim_workload_node(0) + 1, (unsigned short)o->port);
	if (!s)
		return nicsim_log("client: connect failed"), 1;
	for (k = 0; k < o->nsizes; ++k) {
		unsigned long long t0 = nicsim_now_ns();
		for (it = 0; it < o->iters; ++it) {
			const uint64_t start = nicsim_now_ps();
			for (i = 0; i < o->sizes[k]; ++i)
				buf[i] = pattern(o->sizes[k], it, i);
			if (sdp_send(s, buf, (size_t)o->sizes[k]) || recv_all(s, back, o->sizes[k]))
				return nicsim_log("client: exchange failed"), 1;
			if (memcmp(buf, back, (size_t)o->sizes[k]))
				return nicsim_log("client: echo of %d bytes wrong", o->sizes[k]), 1;
			bytes += (unsigned long long)o->sizes[k] * 2;
			rtt_ps[it] = nicsim_now_ps() - start;
		}
		snprintf(name, sizeof name, "sdp_pingpong_%d_ns", o->sizes[k]);
		nicsim_result(name, (double)(nicsim_now_ns() - t0) / (2.0 * o->iters), "ns");
		nicsim_result_tail(name, rtt_ps, (uint32_t)o->iters, 2000.0, "ns"); /* half a round trip */
	}
	nicsim_result("bytes_ok", (double)bytes, "bytes");
	return sdp_close(s) ? 1 : 0;
}

static int check_options(int argc, char **argv)
{
	struct pp_opts o;
	return parse(argc, argv, &o);
}

static int sdp_pingpong_main(int argc, char **argv)
{
	struct pp_opts o;
	unsigned char *buf, *back;
	int rc;
	if (parse(argc, argv, &o))
		return 2;
	buf = nicsim_alloc(MAX_BYTES, 64);
	back = nicsim_alloc(MAX_BYTES, 64);
	if (!buf || !back)
		return 1;
	rc = nicsim_workload_rank() == 0 ? server(&o, buf) : client(&o, buf, back);
	nicsim_free(buf);
	nicsim_free(back);
	return rc;
}

__attribute__((constructor)) static void reg(void)
{
	nicsim_register_program_checked("sdp_pingpong", sdp_pingpong_main, check_options,
				"SDP stream sockets over the TI: latency by message size, every byte checked; rank 0 "
				"accepts, rank 1 connects");
}
