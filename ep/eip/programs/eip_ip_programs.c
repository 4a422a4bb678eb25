/*
 * Programs over the IPv4 layer on the Elan IP driver (ep/eip/ip/eip_ip.h),
 * every payload byte checked at its receiver:
 *   eip_ping:   ICMP echo round trips by size. Ranks pair up (0 with 1, 2
 *               with 3, ...); the even rank pings, the odd one's kernel
 *               answers. rtt_<size> in us (the mean, from rank 0).
 *   eip_stream: UDP throughput by size, unicast, in the same pairs: the even
 *               rank sends, the odd one receives. bw_<size> in MB/s (rank 1).
 *   eip_bcast:  rank 0 sends UDP datagrams to the broadcast address; every
 *               other rank receives each exactly once. bw_<size> in MB/s
 *               (rank 1), and rank 0 checks it hears none of its own.
 * Common arguments: --sizes=a,b,c --iters=N, and --ntmds=N (the driver's
 * eip_ntmds tunable, set before attaching). Ranks 0 and 1 report the
 * driver's counters and the MIB-II counters (r0., r1.).
 */
#include <nicsim/app.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ep/eip/ip/eip_ip.h"
#include "ep/lib/programs/ep_perf.h"

#define EIP_PROG_WARMUP 10
#define EIP_PROG_TIMEOUT_NS 50000000ull /* 50 ms: a datagram that long overdue is lost */
#define EIP_PROG_TAG 0x45495000u        /* management-network tag of the node-id exchange */
#define EIP_STREAM_PORT 5001
#define EIP_BCAST_PORT 5002

/* Each program's default message size, in bytes. */
#define PING_SIZE 64
#define STREAM_SIZE 65000
#define BCAST_SIZE 8192

/* What every program sets up on its node. */
typedef struct eip_prog {
	ep_perf_opts_t o;
	EIP_DEV *dev;
	EIP_IPIF *ip;
	int rank, size;
} eip_prog_t;

/* A program's defaults and its arguments (--ntmds here, the rest by
 * ep_perf_parse), shared by the run and the argument check; *ntmds stays 0
 * unless given. */
static int options(ep_perf_opts_t *o, uint64_t *ntmds, int argc, char **argv, uint32_t size0, uint32_t max_size)
{
	char *rest[16];
	int i, nrest = 0, got;
	memset(o, 0, sizeof *o);
	*ntmds = 0;
	o->sizes[0] = size0;
	o->nsizes = 1;
	o->min_size = 4; /* the sequence number each datagram carries */
	o->max_size = max_size;
	o->iters = 100;
	for (i = 0; i < argc; i++) {
		got = i > 0 ? nicsim_arg_u64(argv[i], "--ntmds=", 1, 4096, ntmds) : 0;
		if (got < 0)
			return -1;
		if (got == 0 && nrest == 16)
			return nicsim_fail("at most 15 arguments besides --ntmds"), -1;
		if (got == 0)
			rest[nrest++] = argv[i];
	}
	return ep_perf_parse(o, nrest, rest) != 0 ? -1 : 0;
}

static int ping_check(int argc, char **argv)
{
	ep_perf_opts_t o;
	uint64_t ntmds;
	return options(&o, &ntmds, argc, argv, PING_SIZE, EIP_ICMP_MAXDATA);
}

static int stream_check(int argc, char **argv)
{
	ep_perf_opts_t o;
	uint64_t ntmds;
	return options(&o, &ntmds, argc, argv, STREAM_SIZE, EIP_UDP_MAXDATA);
}

static int bcast_check(int argc, char **argv)
{
	ep_perf_opts_t o;
	uint64_t ntmds;
	return options(&o, &ntmds, argc, argv, BCAST_SIZE, EIP_UDP_MAXDATA);
}

/* Takes the arguments, attaches the driver and IP, and waits for every
 * rank. */
static int prog_start(eip_prog_t *p, int argc, char **argv, uint32_t size0, uint32_t max_size)
{
	uint64_t ntmds;
	memset(p, 0, sizeof *p);
	if (options(&p->o, &ntmds, argc, argv, size0, max_size) != 0)
		return -1;
	if (ntmds)
		eip_ntmds = (int)ntmds; /* the same value on every node */
	p->rank = (int)nicsim_workload_rank();
	p->size = (int)nicsim_workload_size();
	p->dev = eip_attach(0);
	p->ip = p->dev ? eip_ip_attach(p->dev) : NULL;
	if (!p->ip || nicsim_barrier() != 0) {
		nicsim_fail("cannot attach the Elan IP driver and IP");
		return -1;
	}
	return 0;
}

static void prog_end(eip_prog_t *p)
{
	char prefix[16];
	uint32_t waited;
	/* once every rank is done (the last echo reply sent), the last
	 * transmits' completions are polled in (EP_NO_INTERRUPT), so the
	 * counters are final */
	nicsim_barrier();
	for (waited = 0; p->dev->dev_stats.tmdcnt > 0 && waited < 100000; waited++)
		if (ep_poll_transmits(p->dev->dev_xmtr) == 0)
			nicsim_sleep_ns(1000);
	if (p->rank <= 1) {
		snprintf(prefix, sizeof prefix, "r%d.", p->rank);
		eip_ip_report(p->ip, prefix);
	}
	eip_ip_detach(p->ip);
	eip_detach(p->dev);
}

/* The IP address of workload rank `other`: node ids go both ways over the
 * management network, as a launcher's host file would give them. */
static uint32_t partner_addr(int other)
{
	const int32_t mine = ep_nodeid();
	int32_t theirs = -1;
	nicsim_mgmt_send(nicsim_workload_node((uint32_t)other), EIP_PROG_TAG, &mine, sizeof mine);
	nicsim_mgmt_recv(nicsim_workload_node((uint32_t)other), EIP_PROG_TAG, &theirs, sizeof theirs, NULL, 0);
	return theirs < 0 ? 0 : eip_ip_addr_of(theirs);
}

/* A payload: its sequence number (4 bytes, little-endian), then the
 * pattern of that number. */
static mblk_t *payload(uint32_t seq, uint32_t len)
{
	mblk_t *m = eip_ip_alloc(len);
	uint32_t i;
	if (!m)
		return NULL;
	for (i = 0; i < len; i++)
		m->b_rptr[i] = i < 4 ? (unsigned char)(seq >> (8 * i)) : ep_perf_byte(seq, i);
	m->b_wptr = m->b_rptr + len;
	return m;
}

/* The payload's sequence number, or -1 when its length or any byte is wrong. */
static int64_t payload_seq(const mblk_t *m, uint32_t len)
{
	uint32_t i, seq;
	if (!m || msgdsize(m) != len || m->b_cont || len < 4)
		return -1;
	seq = (uint32_t)m->b_rptr[0] | (uint32_t)m->b_rptr[1] << 8 | (uint32_t)m->b_rptr[2] << 16 |
	      (uint32_t)m->b_rptr[3] << 24;
	for (i = 4; i < len; i++)
		if (m->b_rptr[i] != ep_perf_byte(seq, i))
			return -1;
	return seq;
}

static int sizes_fit(const ep_perf_opts_t *o, uint32_t max)
{
	int s;
	for (s = 0; s < o->nsizes; s++)
		if (o->sizes[s] < 4 || o->sizes[s] > max)
			return 0;
	return 1;
}

/* ---- eip_ping ------------------------------------------------------------- */

/* One echo round trip with `len` bytes of data; 0, or -1 after nicsim_fail. */
static int ping_once(EIP_IPIF *ip, uint32_t dst, uint16_t id, uint16_t seq, uint32_t len)
{
	uint32_t src;
	uint16_t rid, rseq;
	mblk_t *m = payload(seq, len);
	if (!m || eip_icmp_echo(ip, dst, id, seq, m) != 0) {
		nicsim_fail("echo request not sent");
		return -1;
	}
	m = eip_icmp_echo_reply(ip, EIP_PROG_TIMEOUT_NS, &src, &rid, &rseq);
	if (!m || src != dst || rid != id || rseq != seq || payload_seq(m, len) != seq) {
		nicsim_fail(m ? "echo reply wrong (source, id, sequence or data)" : "echo reply lost");
		if (m)
			freemsg(m);
		return -1;
	}
	freemsg(m);
	return 0;
}

static int ping_main(int argc, char **argv)
{
	eip_prog_t p;
	uint32_t dst = 0;
	int s, pinger;
	if (prog_start(&p, argc, argv, PING_SIZE, EIP_ICMP_MAXDATA) != 0)
		return 1;
	pinger = p.rank % 2 == 0 && p.rank + 1 < p.size;
	if (pinger)
		dst = partner_addr(p.rank + 1);
	else if (p.rank % 2 == 1)
		partner_addr(p.rank - 1);
	if (!sizes_fit(&p.o, EIP_ICMP_MAXDATA) || (pinger && !dst)) {
		nicsim_fail("sizes must be 4 bytes up to the largest echo data; or no partner");
		return 1;
	}
	for (s = 0; pinger && s < p.o.nsizes; s++) {
		const uint32_t len = p.o.sizes[s];
		uint64_t t0 = 0;
		uint32_t it;
		for (it = 0; it < EIP_PROG_WARMUP + p.o.iters; it++) {
			if (it == EIP_PROG_WARMUP)
				t0 = nicsim_now_ps();
			if (ping_once(p.ip, dst, (uint16_t)p.rank, (uint16_t)(it + 1000u * (uint32_t)s), len) != 0)
				return 1;
		}
		if (p.rank == 0) {
			char name[32];
			snprintf(name, sizeof name, "rtt_%u", len);
			nicsim_result(name, (double)(nicsim_now_ps() - t0) / p.o.iters / 1e6, "us");
		}
	}
	prog_end(&p);
	return 0;
}

/* ---- eip_stream and eip_bcast ------------------------------------------- */

/* Sends o->iters payloads of `len` bytes numbered from `first`. */
static int send_all(EIP_UDP *u, uint32_t dst, uint16_t port, uint32_t len, uint32_t first, uint32_t iters)
{
	uint32_t it;
	for (it = 0; it < iters; it++) {
		mblk_t *m = payload(first + it, len);
		if (!m || eip_udp_send(u, dst, port, m) != 0) {
			nicsim_fail("datagram not sent");
			return -1;
		}
	}
	return 0;
}

/* Receives `iters` payloads numbered from `first`, each exactly once, from
 * `src` (0: any sender); the MB/s from `t0` to the last, or -1. */
static double recv_all(EIP_UDP *u, uint32_t src, uint32_t len, uint32_t first, uint32_t iters, uint64_t t0)
{
	unsigned char *seen = nicsim_alloc(iters, 64);
	uint64_t t_last = t0;
	uint32_t it, from;
	if (!seen)
		return -1;
	memset(seen, 0, iters);
	for (it = 0; it < iters; it++) {
		mblk_t *m = eip_udp_recv(u, EIP_PROG_TIMEOUT_NS, &from, NULL);
		const int64_t seq = payload_seq(m, len);
		if (!m || seq < first || seq >= (int64_t)first + iters || seen[seq - first] || (src && from != src)) {
			nicsim_fail(!m ? "datagram lost" : seq < 0 ? "datagram corrupt" : "datagram unexpected or repeated");
			if (m)
				freemsg(m);
			nicsim_free(seen);
			return -1;
		}
		seen[seq - first] = 1;
		freemsg(m);
		t_last = nicsim_now_ps();
	}
	nicsim_free(seen);
	return (double)len * iters / ((double)(t_last - t0) / 1e12) / 1e6;
}

static void report_bw(uint32_t len, double bw)
{
	char name[32];
	snprintf(name, sizeof name, "bw_%u", len);
	nicsim_result(name, bw, "MB/s");
}

static int stream_main(int argc, char **argv)
{
	eip_prog_t p;
	EIP_UDP *u;
	uint32_t peer = 0;
	int s, sender, receiver;
	if (prog_start(&p, argc, argv, STREAM_SIZE, EIP_UDP_MAXDATA) != 0)
		return 1;
	sender = p.rank % 2 == 0 && p.rank + 1 < p.size;
	receiver = p.rank % 2 == 1;
	if (sender || receiver)
		peer = partner_addr(sender ? p.rank + 1 : p.rank - 1);
	u = eip_udp_bind(p.ip, EIP_STREAM_PORT);
	if (!u || !sizes_fit(&p.o, EIP_UDP_MAXDATA) || ((sender || receiver) && !peer) || nicsim_barrier() != 0) {
		nicsim_fail("no socket, sizes over the largest UDP datagram, or no partner");
		return 1;
	}
	for (s = 0; s < p.o.nsizes; s++) {
		const uint32_t len = p.o.sizes[s], first = 100000u * (uint32_t)s;
		if (sender && send_all(u, peer, EIP_STREAM_PORT, len, first, p.o.iters) != 0)
			return 1;
		if (receiver) {
			const double bw = recv_all(u, peer, len, first, p.o.iters, nicsim_now_ps());
			if (bw < 0)
				return 1;
			if (p.rank == 1)
				report_bw(len, bw);
		}
		if (nicsim_barrier() != 0)
			return 1;
	}
	prog_end(&p);
	return 0;
}

static int bcast_main(int argc, char **argv)
{
	eip_prog_t p;
	EIP_UDP *u;
	int s;
	if (prog_start(&p, argc, argv, BCAST_SIZE, EIP_UDP_MAXDATA) != 0)
		return 1;
	u = eip_udp_bind(p.ip, EIP_BCAST_PORT);
	if (!u || !sizes_fit(&p.o, EIP_UDP_MAXDATA) || p.size < 2 || nicsim_barrier() != 0) {
		nicsim_fail("no socket, sizes over the largest UDP datagram, or fewer than 2 ranks");
		return 1;
	}
	for (s = 0; s < p.o.nsizes; s++) {
		const uint32_t len = p.o.sizes[s], first = 100000u * (uint32_t)s;
		if (p.rank == 0) {
			if (send_all(u, EIP_IP_BROADCAST, EIP_BCAST_PORT, len, first, p.o.iters) != 0)
				return 1;
		} else {
			const double bw = recv_all(u, 0, len, first, p.o.iters, nicsim_now_ps());
			if (bw < 0)
				return 1;
			if (p.rank == 1)
				report_bw(len, bw);
		}
		if (nicsim_barrier() != 0)
			return 1;
	}
	/* the driver multicasts EP_NOT_MYSELF: the sender hears none of its own */
	if (p.rank == 0 && eip_udp_recv(u, 1000000, NULL, NULL) != NULL) {
		nicsim_fail("the broadcaster received its own datagram");
		return 1;
	}
	prog_end(&p);
	return 0;
}

__attribute__((constructor)) static void reg(void)
{
	nicsim_register_program_checked(
		"eip_ping", ping_main, ping_check,
		"ICMP echo over IP on the Elan IP driver; ranks pair up (0 pings 1, 2 pings 3, ...), every "
		"byte of each reply checked. --sizes=64,1024 --iters=100 --ntmds=32. Results: rtt_<size> in "
		"us (rank 0, mean round trip); r0./r1. driver and MIB-II counters");
	nicsim_register_program_checked(
		"eip_stream", stream_main, stream_check,
		"UDP stream over IP on the Elan IP driver, in rank pairs (0 sends to 1, 2 to 3, ...), every "
		"byte checked, each datagram exactly once. --sizes=65000 --iters=100 --ntmds=32. Results: "
		"bw_<size> in MB/s (rank 1); r0./r1. driver and MIB-II counters");
	nicsim_register_program_checked(
		"eip_bcast", bcast_main, bcast_check,
		"UDP broadcast over IP on the Elan IP driver: rank 0 to every other rank, each datagram "
		"exactly once everywhere, every byte checked. --sizes=8192 --iters=100 --ntmds=32. Results: "
		"bw_<size> in MB/s (rank 1); r0./r1. driver and MIB-II counters");
}
