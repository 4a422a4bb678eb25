/*
 * IP-level calibration programs over the Elan IP driver (elan3/eip.h),
 * written as the IP layer would use the driver: datagrams in STREAMS
 * messages with room for the link header, handed to the driver's write
 * queue, received from IP's input queue.
 *   eip_ping:   rank 0 sends a datagram, rank 1 echoes it (the same buffer,
 *               header rewritten); lat_<size> is half the round trip.
 *   eip_stream: rank 0 streams datagrams (--bcast: broadcast to every other
 *               rank), every receiver checks each byte; bw_<size> in MB/s.
 */
#include <elan3/eip.h>
#include <nicsim/app.h>
#include <stdio.h>
#include <string.h>

#include "ep/lib/programs/ep_perf.h"

#define EIP_PERF_WARMUP 10
#define EIP_PERF_TIMEOUT_NS 50000000ull /* 50 ms: a datagram that long overdue is lost */

/* A datagram: its sequence number (4 bytes, little-endian), then the
 * pattern of that number. Datagrams may be reordered (Kernel Comms orders
 * nothing, manual 2.1.8), so receivers find the number in the data. */
static mblk_t *datagram(uint32_t seq, uint32_t len)
{
	mblk_t *m = allocb(EIP_HEADER_SIZE + len, BPRI_MED);
	uint32_t i;
	if (!m)
		return NULL;
	m->b_rptr += EIP_HEADER_SIZE;
	for (i = 0; i < len; i++)
		m->b_rptr[i] = i < 4 ? (unsigned char)(seq >> (8 * i)) : ep_perf_byte(seq, i);
	m->b_wptr = m->b_rptr + len;
	return m;
}

/* The datagram's sequence number, or -1 when its length or any byte is wrong. */
static int64_t datagram_seq(const mblk_t *m, uint32_t len)
{
	uint32_t i, seq;
	if (msgdsize(m) != len || len < 4)
		return -1;
	seq = (uint32_t)m->b_rptr[0] | (uint32_t)m->b_rptr[1] << 8 | (uint32_t)m->b_rptr[2] << 16 |
	      (uint32_t)m->b_rptr[3] << 24;
	for (i = 4; i < len; i++)
		if (m->b_rptr[i] != ep_perf_byte(seq, i))
			return -1;
	return seq;
}

static int ping_main(int argc, char **argv)
{
	ep_perf_opts_t o;
	EIP_DEV *dev;
	queue_t *ipq;
	int s, peer, client = nicsim_workload_rank() == 0;
	memset(&o, 0, sizeof o);
	o.sizes[0] = 64; o.sizes[1] = 1024; o.sizes[2] = 8192;
	o.nsizes = 3;
	o.iters = 100;
	if (ep_perf_parse(&o, argc, argv) != 0)
		return 1;
	dev = eip_attach(0);
	ipq = dev ? eip_ip_queue(dev) : NULL;
	peer = ep_perf_peer();
	if (!ipq || peer < 0 || nicsim_barrier() != 0) {
		nicsim_fail("cannot attach the Elan IP driver or find the peer");
		return 1;
	}
	for (s = 0; s < o.nsizes; s++) {
		uint32_t len = o.sizes[s], it;
		uint64_t t0 = 0;
		if (len > EIP_MAX_SDU || len < 4) {
			nicsim_fail("sizes must be 4 bytes up to the driver's largest datagram");
			return 1;
		}
		for (it = 0; it < EIP_PERF_WARMUP + o.iters; it++) {
			uint32_t seq = it + 1000u * (uint32_t)s;
			mblk_t *m;
			if (client) {
				if (it == EIP_PERF_WARMUP)
					t0 = nicsim_now_ps();
				if (!(m = datagram(seq, len))) {
					nicsim_fail("allocb failed");
					return 1;
				}
				eip_fill_header(dev, m, peer, ETHERTYPE_IP);
				eip_output(dev, m);
			}
			m = eip_getq_wait(ipq, EIP_PERF_TIMEOUT_NS);
			if (!m || datagram_seq(m, len) != seq) {
				nicsim_fail(m ? "datagram corrupt" : "datagram lost");
				return 1;
			}
			if (client) {
				freemsg(m);
			} else {
				eip_fill_header(dev, m, peer, ETHERTYPE_IP);
				eip_output(dev, m);
			}
		}
		if (client) {
			char name[32];
			snprintf(name, sizeof name, "lat_%u", len);
			nicsim_result(name, (double)(nicsim_now_ps() - t0) / o.iters / 2.0 / 1e6, "us");
		}
	}
	if (nicsim_barrier() != 0)
		return 1;
	eip_detach(dev);
	return 0;
}

/* Sender: hands every datagram to the driver, waiting while its write
 * queue is above its high-water mark (the STREAMS flow control IP obeys). */
static int stream_send(EIP_DEV *dev, int dest, uint32_t len, uint32_t size_index, const ep_perf_opts_t *o)
{
	uint32_t it;
	for (it = 0; it < o->iters; it++) {
		mblk_t *m = datagram(it + 100000u * size_index, len);
		if (!m) {
			nicsim_fail("allocb failed");
			return -1;
		}
		while (!canput(&dev->dev_wq))
			nicsim_sleep_ns(1000);
		eip_fill_header(dev, m, dest, ETHERTYPE_IP);
		eip_output(dev, m);
	}
	return 0;
}

static int stream_main(int argc, char **argv)
{
	ep_perf_opts_t o;
	EIP_DEV *dev;
	queue_t *ipq;
	int s, bcast = 0, peer = -1, i;
	const int sender = nicsim_workload_rank() == 0;
	char *rest[8];
	int nrest = 0;
	unsigned char *seen;
	memset(&o, 0, sizeof o);
	o.sizes[0] = 65000;
	o.nsizes = 1;
	o.iters = 200;
	for (i = 0; i < argc && nrest < 8; i++) {
		if (i > 0 && strcmp(argv[i], "--bcast") == 0) {
			bcast = 1;
			continue;
		}
		rest[nrest++] = argv[i];
	}
	if (ep_perf_parse(&o, nrest, rest) != 0)
		return 1;
	seen = nicsim_alloc(o.iters, 64);
	dev = eip_attach(0);
	ipq = dev ? eip_ip_queue(dev) : NULL;
	if (!bcast)
		peer = ep_perf_peer();
	if (!seen || !ipq || (!bcast && peer < 0) || (bcast && nicsim_workload_size() < 2) || nicsim_barrier() != 0) {
		nicsim_fail("cannot attach the Elan IP driver or find the peers");
		return 1;
	}
	for (s = 0; s < o.nsizes; s++) {
		const uint32_t len = o.sizes[s];
		uint64_t t0 = nicsim_now_ps(), t_last = t0;
		uint32_t it;
		if (sender) {
			if (stream_send(dev, bcast ? -1 : peer, len, (uint32_t)s, &o) != 0)
				return 1;
		} else {
			memset(seen, 0, o.iters);
			for (it = 0; it < o.iters; it++) {
				mblk_t *m = eip_getq_wait(ipq, EIP_PERF_TIMEOUT_NS);
				const int64_t seq = m ? datagram_seq(m, len) : -1;
				const int64_t first = 100000 * (int64_t)s;
				if (!m || seq < first || seq >= first + o.iters || seen[seq - first]) {
					nicsim_fail(!m ? "datagram lost" : seq < 0 ? "datagram corrupt" : "datagram unexpected or repeated");
					return 1;
				}
				seen[seq - first] = 1;
				freemsg(m);
				t_last = nicsim_now_ps();
			}
			if (nicsim_workload_rank() == 1) {
				char name[32];
				snprintf(name, sizeof name, "bw_%u", len);
				nicsim_result(name, (double)len * o.iters / ((double)(t_last - t0) / 1e12) / 1e6, "MB/s");
			}
		}
		if (nicsim_barrier() != 0)
			return 1;
	}
	if (sender) {
		char name[32];
		snprintf(name, sizeof name, "notmds");
		nicsim_result(name, (double)dev->dev_stats.notmds, "times");
	}
	eip_detach(dev);
	nicsim_free(seen);
	return 0;
}

__attribute__((constructor)) static void reg(void)
{
	nicsim_register_program(
		"eip_ping", ping_main,
		"Elan IP driver datagram ping-pong (IP fast path); rank 0 client, rank 1 echo. "
		"--sizes=64,1024,8192 --iters=100. Results (client): lat_<size> in us (half round trip)");
	nicsim_register_program(
		"eip_stream", stream_main,
		"Elan IP driver datagram stream from rank 0 to rank 1, or with --bcast broadcast to every other "
		"rank; every byte checked. --sizes=65000 --iters=200. Results: bw_<size> in MB/s "
		"(rank 1), notmds (rank 0: times eip_start found no free transmit descriptor)");
}
