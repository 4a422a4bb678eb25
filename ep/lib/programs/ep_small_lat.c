/*
 * ep_small_lat: small-message ping-pong between two nodes over Elan Kernel
 * Comms (ep_transmit_small, ep_waitfor_small_message). Rank 0 sends, rank 1
 * echoes; the latency is half the round trip, from the client's call of
 * ep_transmit_small to its return from ep_waitfor_small_message, averaged
 * over --iters after 10 warm-up round trips (the first one sets up the
 * virtual circuit), with its tail (each round trip's half: p99 and max).
 * Every received message is checked byte by byte.
 */
#include "ep_perf.h"

#include <stdio.h>
#include <string.h>

#define WARMUP 10

static int check(const unsigned char *p, uint32_t seq, uint32_t len)
{
	uint32_t i;
	for (i = 0; i < len; i++)
		if (p[i] != ep_perf_byte(seq, i))
			return -1;
	return 0;
}

static const ep_perf_opts_t defaults = {.sizes = {8, 64, 256}, .nsizes = 3, .iters = 1000, .min_size = 1, .max_size = 65536};

static int check_options(int argc, char **argv)
{
	ep_perf_opts_t o;
	return ep_perf_options(&o, &defaults, argc, argv);
}

static int small_lat_main(int argc, char **argv)
{
	ep_perf_opts_t o;
	EP_RCVR *rcvr;
	EP_XMTR *xmtr;
	unsigned char *buf;
	uint64_t *samples;
	uint32_t maxsize = 0;
	int peer, s, client = nicsim_workload_rank() == 0;

	if (ep_perf_options(&o, &defaults, argc, argv) != 0)
		return 1;
	for (s = 0; s < o.nsizes; s++)
		if (o.sizes[s] > maxsize)
			maxsize = o.sizes[s];
	rcvr = ep_install_small_rcvr(0, EP_PERF_SERVICE, EP_SVC_TYPE_SMALL, (int)maxsize, 16, NULL, NULL);
	xmtr = ep_alloc_small_xmtr(0, EP_SVC_TYPE_SMALL, (int)maxsize);
	buf = nicsim_alloc(maxsize ? maxsize : 1, 64);
	samples = ep_perf_samples(o.iters);
	if (!rcvr || !xmtr || !buf || !samples) {
		nicsim_fail("cannot install the receiver or allocate the transmitter: a small message and its header must "
			    "fit one Elan3 packet (max_payload)");
		return 1;
	}
	peer = ep_perf_peer();
	if (peer < 0 || nicsim_barrier() != 0)
		return 1;
	for (s = 0; s < o.nsizes; s++) {
		uint32_t len = o.sizes[s], it, seq;
		uint64_t t0 = 0, start = 0;
		for (it = 0; it < WARMUP + o.iters; it++) {
			caddr_t msg;
			seq = it + 1000u * (uint32_t)s;
			if (client) {
				uint32_t i;
				start = nicsim_now_ps();
				if (it == WARMUP)
					t0 = start;
				for (i = 0; i < len; i++)
					buf[i] = ep_perf_byte(seq, i);
				if (ep_transmit_small(xmtr, peer, EP_PERF_SERVICE, EP_NO_INTERRUPT, 0, NULL, NULL,
						      (caddr_t)buf, (int)len) != ESUCCESS) {
					nicsim_fail("ep_transmit_small failed");
					return 1;
				}
				if (ep_waitfor_small_message(rcvr, &msg) != ESUCCESS ||
				    check((const unsigned char *)msg, seq, len) != 0) {
					nicsim_fail("echo missing or corrupt");
					return 1;
				}
				ep_consume_small_message(rcvr, &msg);
				if (it >= WARMUP)
					samples[it - WARMUP] = nicsim_now_ps() - start;
			} else {
				if (ep_waitfor_small_message(rcvr, &msg) != ESUCCESS ||
				    check((const unsigned char *)msg, seq, len) != 0) {
					nicsim_fail("message missing or corrupt");
					return 1;
				}
				if (ep_transmit_small(xmtr, peer, EP_PERF_SERVICE, EP_NO_INTERRUPT, 0, NULL, NULL,
						      msg, (int)len) != ESUCCESS) {
					nicsim_fail("ep_transmit_small (echo) failed");
					return 1;
				}
				ep_consume_small_message(rcvr, &msg);
			}
		}
		if (client) {
			char name[32];
			double us = (double)(nicsim_now_ps() - t0) / o.iters / 2.0 / 1e6;
			snprintf(name, sizeof name, "lat_%u", len);
			nicsim_result(name, us, "us");
			nicsim_result_tail(name, samples, o.iters, 2e6, "us"); /* half round trips */
		}
	}
	ep_poll_transmits(xmtr);
	return nicsim_barrier() == 0 ? 0 : 1;
}

__attribute__((constructor)) static void reg(void)
{
	nicsim_register_program_checked(
		"ep_small_lat", small_lat_main, check_options,
		"Elan Kernel Comms small-message ping-pong latency; rank 0 client, rank 1 echo server. "
		"--sizes=8,64,256 --iters=1000. Results (client): lat_<size> (mean), lat_<size>_p99, lat_<size>_max in us "
		"(half round trip)");
}
