/*
 * perftest.h -- shared helpers of nicsim's perftest-style programs
 * (ib_send_lat, ib_write_lat, ib_read_lat, ib_atomic_lat, ib_send_bw,
 * ib_write_bw, ib_read_bw).
 *
 * The programs follow the OFED perftest suite: rank 0 of the workload is
 * the client, rank 1 the server.  Each opens its node's CA through
 * ci_interface_t (iba/nicsim_ca.h), allocates a PD, two CQs (send and
 * receive), one RC QP and one registered buffer from node memory,
 * exchanges {LID, QPN, PSN, rkey, buffer address} over the management
 * network, moves the QP RESET->INIT->RTR->RTS and measures in simulated
 * time.  Nothing here uses nicsim internals: only iba/ib_ci.h and
 * nicsim/app.h.
 *
 * All state is in a pt_ctx_t on the program's stack or in node memory:
 * every node of a simulation runs in one process, so there are no
 * statics.
 *
 * Plain C99 (and includable from C++, for the tests).
 */
#ifndef NICSIM_PERFTEST_H
#define NICSIM_PERFTEST_H

#include <stddef.h>
#include <stdint.h>

#include "iba/ib_ci.h"
#include "iba/nicsim_ca.h"
#include "nicsim/app.h"

#ifdef __cplusplus
extern "C" {
#endif

#define PT_MAX_SIZES 32
#define PT_MAX_MSG (8u << 20)           /* largest --sizes entry */

/*
 * How often a thread looks again at something it cannot block on: a
 * buffer byte the peer's RDMA write will change (ib_write_lat), or the
 * flag the completion callback sets (--poll=event).  A simulated thread
 * has no cheaper way to notice a change in memory, so the detection
 * delay is at most this much; 50 ns is about the cache-line miss a real
 * spin loop takes after the HCA's DMA write invalidated the line.
 */
#define PT_MEM_POLL_NS 50
/* Waiting for the subnet manager to activate port 1: checked this often, for
 * at most --port-wait-ms (default 100 ms; a large fabric's first sweep takes
 * longer: 57 ms for a 256-host 4-ary 4-tree). */
#define PT_PORT_POLL_NS 1000

/* Which optional arguments a program accepts (pt_opts_t.accepts). */
#define PT_ARG_SIZES 0x0001u            /* --sizes, --min, --max */
#define PT_ARG_TX_DEPTH 0x0002u         /* --tx-depth */
#define PT_ARG_RX_DEPTH 0x0004u         /* --rx-depth */
#define PT_ARG_INLINE 0x0008u           /* --inline */
#define PT_ARG_CQ_MOD 0x0010u           /* --cq-mod */
#define PT_ARG_BIDIR 0x0020u            /* --bidirectional */
#define PT_ARG_ATOMIC 0x0040u           /* --atomic=fadd|cswap */
#define PT_ARG_ACK_TIMEOUT 0x0080u      /* --ack-timeout: RC local ACK timeout exponent */
#define PT_ARG_RECONNECT 0x0100u        /* --reconnects: new QPs after failures */

typedef struct pt_opts {
	const char *prog;               /* program name (argv[0]) */
	uint32_t accepts;               /* PT_ARG_* */
	uint32_t sizes[PT_MAX_SIZES];   /* message sizes, in order */
	uint32_t nsizes;
	uint32_t max_size;              /* largest of sizes */
	uint32_t iters;                 /* --iters: messages per size */
	uint32_t tx_depth;              /* --tx-depth: outstanding send WRs */
	uint32_t rx_depth;              /* --rx-depth: posted receives */
	uint32_t inline_size;           /* --inline: largest inline message */
	uint32_t cq_mod;                /* --cq-mod: signal every N send WRs */
	int event;                      /* --poll=event (0: busy) */
	int bidir;                      /* --bidirectional */
	int cswap;                      /* --atomic=cswap (0: fetch-and-add) */
	uint64_t timeout_ns;            /* --timeout-ms: longest wait without progress */
	uint64_t port_wait_ns;          /* --port-wait-ms: longest wait for port 1 to become ACTIVE */
	uint32_t ack_timeout;           /* --ack-timeout: 4.096 us * 2^N before RC resends (default 14) */
	uint32_t reconnects;            /* --reconnects: most new QPs after failed ones (default 0) */
} pt_opts_t;

/* A completion queue and its notification state (--poll=event).  The
 * completion callback runs in interrupt context: it only sets `fired`. */
typedef struct pt_cq {
	uint32_t magic;                 /* PT_CQ_MAGIC */
	ib_cq_handle_t h;
	volatile int fired;             /* set by the completion callback */
	int armed;                      /* enable_cq_notify called, no callback yet */
	struct pt_ctx *ctx;
	uint32_t size;
} pt_cq_t;

/* What each side tells the other over the management network.  All
 * integers in host order except rkey, which is passed on exactly as
 * register_mr returned it (wire order). */
typedef struct pt_conn {
	uint32_t magic;                 /* program identity: both ends run the same test */
	uint32_t lid;
	uint32_t qpn;
	uint32_t psn;
	uint32_t rkey;                  /* wire order */
	uint32_t iters;
	uint64_t addr;                  /* the registered buffer, in the sender's memory */
	uint64_t len;
	uint32_t nsizes;
	uint32_t flags;                 /* bidir | cswap << 1 */
	uint32_t sizes[PT_MAX_SIZES];
} pt_conn_t;

/* A per-size summary one side sends the other after a bandwidth run. */
typedef struct pt_result_msg {
	uint32_t size;
	int32_t ok;                     /* 1: this side saw correct data and completions */
	double mbps;                    /* this side's own send bandwidth, 0 if it did not send */
} pt_result_msg_t;

typedef struct pt_ctx {
	uint32_t magic;                 /* PT_CTX_MAGIC */
	pt_opts_t opt;
	uint32_t rank;                  /* 0 client, 1 server */
	uint32_t peer;                  /* the other rank's node id */
	const ci_interface_t *ci;
	ib_ca_handle_t ca;
	ib_pd_handle_t pd;
	pt_cq_t scq, rcq;
	ib_qp_handle_t qp;
	ib_mr_handle_t mr;
	uint8_t *buf;                   /* registered, from nicsim_alloc */
	size_t buf_len;
	uint32_t lkey, rkey;
	uint32_t sq_depth, rq_depth, sq_sge;
	pt_conn_t local, remote;
	/* Send queue accounting: wr_id of each send WR is its index. */
	uint64_t posted;                /* send WRs posted */
	uint64_t retired;               /* send WRs known complete */
	uint32_t since_signal;          /* unsignaled WRs since the last signaled one */
	uint32_t signal_every;
	uint64_t deadline_ps;           /* waits give up after this */
	volatile int async_error;       /* an error event arrived (interrupt context) */
	volatile int async_type;
	volatile int port_active;       /* IB_AE_PORT_ACTIVE arrived (interrupt context) */
	int failed;
} pt_ctx_t;

#define PT_CTX_MAGIC 0x70744378u
#define PT_CQ_MAGIC 0x70744371u

/* ---- arguments ------------------------------------------------------------ */
/* Sets the defaults every program shares; the program then changes its own
 * (sizes, iters, depths...) before pt_parse. */
void pt_defaults(pt_opts_t *o, const char *prog, uint32_t accepts);
/* Sets sizes from a comma-separated list ("2,8,64"), k/K and m/M allowed. */
int pt_set_sizes(pt_opts_t *o, const char *list);
/* Parses --name=value arguments.  0, or -1 after nicsim_fail with the reason. */
int pt_parse(pt_opts_t *o, int argc, char **argv);

/* ---- setup and teardown ---------------------------------------------------- */
/* pt_setup's first half, for programs with a QP of their own: checks the
 * workload has `nodes` nodes (0: two or more), opens the CA, waits for port
 * 1 and reads its LID, allocates the PD and the two CQs. ctx->peer is rank
 * 1's node on rank 0, rank 0's elsewhere. 0 or 1 (after pt_fail). */
int pt_open(pt_ctx_t *c, const pt_opts_t *o, uint32_t nodes, uint32_t sq_depth, uint32_t rq_depth, uint16_t *lid);
/* Registers buf_len zeroed bytes of node memory as ctx->buf. 0 or 1. */
int pt_register(pt_ctx_t *c, size_t buf_len);
/* Opens the CA, creates PD, CQs, the RC QP and registers buf_len bytes of
 * node memory (ctx->buf), then exchanges connection records with the peer.
 * The QP is left in INIT: post receives, then call pt_connect.  0 or -1
 * (after pt_fail). */
int pt_setup(pt_ctx_t *c, const pt_opts_t *o, size_t buf_len, uint32_t sq_depth, uint32_t rq_depth,
	     uint32_t signal_every);
/* INIT->RTR->RTS towards the peer, then a barrier with it. */
int pt_connect(pt_ctx_t *c);
/* INIT->RTR->RTS towards ctx->remote, without the barrier. 0 or 1. */
int pt_rtr_rts(pt_ctx_t *c);
/* pt_setup's QP: creates the RC QP on ctx's CQs and depths (ctx->qp), and
 * moves it RESET->INIT, setting ctx->local's qpn and psn. A program that
 * connects again after a failure makes its new QP with these. 0 or 1. */
int pt_create_qp(pt_ctx_t *c);
int pt_init_qp(pt_ctx_t *c);
/* Waits for the outstanding send WRs, meets the peer (so neither side
 * destroys its QP while the other still needs it), then releases
 * everything pt_setup created.  Returns `rc`, or 1 if the drain failed. */
int pt_finish(pt_ctx_t *c, int rc);

/* Records the first failure (nicsim_fail) and logs it; returns 1. */
int pt_fail(pt_ctx_t *c, const char *fmt, ...)
#if defined(__GNUC__)
	__attribute__((format(printf, 2, 3)))
#endif
	;

/* ---- work requests and completions ---------------------------------------- */
/* Posts one send WR (wr_id becomes its index), signalled every
 * signal_every WRs or when `force_signal`; waits first for send queue room.
 * A message of at most opt.inline_size bytes goes inline when `may_inline`. */
int pt_post_send(pt_ctx_t *c, ib_send_wr_t *wr, int force_signal, int may_inline);
/* Polls up to `max` completions of `cq` into wcs (no waiting).  Returns how
 * many, or -1 (after pt_fail) on a completion error.  Send completions
 * update ctx->retired. */
int pt_poll(pt_ctx_t *c, pt_cq_t *cq, ib_wc_t *wcs, int max);
/* Work completions handed to poll_cq again and again.  poll_cq takes
 * entries from the front of the free list and leaves the rest alone, so the
 * list is linked once and linked again only after a poll took entries: a
 * busy loop's empty polls build nothing. */
#define PT_WC_BATCH 16
typedef struct pt_wc_list {
	ib_wc_t wcs[PT_WC_BATCH];
	ib_wc_t *free;                  /* wcs[0], linked through wcs[PT_WC_BATCH - 1] */
} pt_wc_list_t;
void pt_wc_list_init(pt_wc_list_t *l);
/* As pt_poll with up to PT_WC_BATCH entries: the completions are
 * l->wcs[0..n-1]. */
int pt_poll_list(pt_ctx_t *c, pt_cq_t *cq, pt_wc_list_t *l);
/* pt_idle's parts: inline, a busy loop's idle call is two compares and a
 * time read; the failure report and event mode are out of line. */
static inline int pt_should_stop(const pt_ctx_t *c)   /* error event or deadline passed */
{
	return c->async_error || nicsim_now_ps() > c->deadline_ps;
}
int pt_wait_failed(pt_ctx_t *c)   /* reports why pt_should_stop: -1 */
#ifdef __GNUC__
	__attribute__((cold))
#endif
	;
int pt_idle_event(pt_ctx_t *c, pt_cq_t *const *cqs, int n);
/* Called after a poll of each CQ in cqs found nothing.  Busy polling:
 * returns at once (every poll_cq call costs simulated CPU time).  Event
 * mode: arms the CQs not yet armed and returns, so the caller polls once
 * more; when all are armed, sleeps until a completion callback fires.
 * -1 (after pt_fail) when the deadline passed or an error event came. */
static inline int pt_idle(pt_ctx_t *c, pt_cq_t *const *cqs, int n)
{
	if (pt_should_stop(c))
		return pt_wait_failed(c);
	if (!c->opt.event)
		return 0;   /* busy polling: the poll_cq calls themselves take time */
	return pt_idle_event(c, cqs, n);
}
/* Waits for one completion on cq (busy or event). 0 or -1. */
int pt_wait_wc(pt_ctx_t *c, pt_cq_t *cq, ib_wc_t *wc);
/* Waits until every posted send WR is retired. */
int pt_drain_send(pt_ctx_t *c);
/* Waits until *p == value (a byte the peer writes by RDMA). */
int pt_wait_byte(pt_ctx_t *c, const volatile uint8_t *p, uint8_t value);
/* Restarts the no-progress deadline (now + opt.timeout_ns). */
void pt_touch(pt_ctx_t *c);

/* ---- data --------------------------------------------------------------- */
/* Byte k of message `iter` of size `size`: every message differs. */
static inline uint8_t pt_pattern(uint32_t size, uint32_t iter, uint32_t k)
{
	uint32_t x = k * 0x9E3779B1u ^ (iter + 1u) * 0x85EBCA77u ^ size * 0xC2B2AE3Du;
	return (uint8_t)(x ^ (x >> 11) ^ (x >> 19) ^ (x >> 27));
}
void pt_fill(uint8_t *p, uint32_t len, uint32_t size, uint32_t iter);
/* Index of the first byte that differs from the pattern, or -1. */
long pt_check(const uint8_t *p, uint32_t len, uint32_t size, uint32_t iter);

/* ---- results ---------------------------------------------------------------- */
/* Node memory for iters + 1 timestamps; NULL (after pt_fail) if there is
 * none. Free with nicsim_free. */
uint64_t *pt_alloc_stamps(pt_ctx_t *c);
/* Latency per size from n + 1 timestamps in ps, taken before each of n
 * iterations and after the last: each interval divided by `divisor` (2 for
 * a ping-pong's half round trip) is one sample. Reports lat_<size>_typical
 * (median) and lat_<size>_avg in us. The array is overwritten. */
void pt_report_stamps(pt_ctx_t *c, uint32_t size, uint64_t *stamps, uint32_t n, uint32_t divisor);
/* MB/s (10^6 bytes per second) of `bytes` moved in `ps`. */
double pt_mbps(uint64_t bytes, uint64_t ps);
/* Sends mine to the peer and receives theirs (tag per program step). */
int pt_exchange(pt_ctx_t *c, uint32_t tag, const void *mine, void *theirs, size_t len);
/* A barrier of the two ranks. */
int pt_barrier(pt_ctx_t *c);
/*
 * A barrier that also releases both ranks at the same simulated instant,
 * so that a measurement starts together on both sides (nicsim_barrier
 * releases the last rank one management-network latency after the
 * first, which would otherwise land in the first latency sample and make
 * the two directions of a bidirectional run overlap only in part).  The
 * client pings the server, and once the answer is back (both are here)
 * sends it a start time one measured round trip ahead; both sleep until
 * then.  Uses the simulation's global clock, which real hosts lack.
 */
int pt_start(pt_ctx_t *c);

/* ---- bandwidth programs -------------------------------------------------------- */
/*
 * Buffer of the bandwidth programs: six areas of max_size bytes (rounded
 * up to 64), the same on both sides: send scratch, send first, send last,
 * receive scratch, receive first, receive last.  Message j of a size
 * uses the "first" area when j == 0, "last" when j == iters - 1 and the
 * scratch area otherwise; first and last carry patterns of (size, j) that
 * the receiving side checks, so payload is verified end to end once at
 * each end of every size.
 */
#define PT_TX 0
#define PT_RX 3
size_t pt_bw_buf_len(const pt_opts_t *o);
uint32_t pt_bw_slot(uint32_t j, uint32_t iters);  /* 0 scratch, 1 first, 2 last */
uint8_t *pt_bw_local(pt_ctx_t *c, int side, uint32_t j, uint32_t iters);
uint64_t pt_bw_remote(pt_ctx_t *c, int side, uint32_t j, uint32_t iters);

/* One size's worth of send WRs from this side, kept --tx-depth deep. */
typedef struct pt_stream {
	ib_wr_type_t op;                /* WR_SEND, WR_RDMA_WRITE or WR_RDMA_READ */
	uint32_t size, iters;
	uint32_t next;                  /* messages posted */
	uint64_t first_wr;              /* ctx->posted at the first post */
	uint64_t t_first, t_last;       /* first post, last completion (ps) */
	int done;
	pt_wc_list_t wcl;               /* send completions */
} pt_stream_t;

void pt_stream_init(pt_ctx_t *c, pt_stream_t *st, ib_wr_type_t op, uint32_t size);
/* pt_stream_step's parts out of line: the posting loop (most steps of a
 * busy loop find the send queue full), and what follows a poll_cq call of
 * pt_poll_list that did not return IB_NOT_FOUND (the completions checked,
 * the list linked again): the number of completions, or -1. */
int pt_stream_post(pt_ctx_t *c, pt_stream_t *st);
int pt_poll_list_done(pt_ctx_t *c, pt_cq_t *cq, pt_wc_list_t *l, ib_api_status_t st, ib_wc_t *done);
/* Posts what the send queue has room for and reaps send completions,
 * without waiting.  Returns the work done (posts + completions), or -1.
 * Inline: a busy loop's step is one poll_cq call and a few compares. */
static inline int pt_stream_step(pt_ctx_t *c, pt_stream_t *st)
{
	int progress = 0, n;
	ib_wc_t *done = NULL;
	ib_api_status_t s;
	if (st->next < st->iters && c->posted - c->retired < c->sq_depth && (progress = pt_stream_post(c, st)) < 0)
		return -1;
	s = c->ci->poll_cq(c->scq.h, &st->wcl.free, &done);
	if (s != IB_NOT_FOUND) {
		if ((n = pt_poll_list_done(c, &c->scq, &st->wcl, s, done)) < 0)
			return -1;
		progress += n;
	}
	if (!st->done && st->next == st->iters && c->retired >= st->first_wr + st->iters) {
		st->done = 1;
		st->t_last = nicsim_now_ps();
	}
	return progress;
}
/* Reports bw_<size><suffix> in MB/s. */
void pt_report_bw(pt_ctx_t *c, uint32_t size, const char *suffix, double mbps);

/* Management-network tags of the programs (below nicsim's reserved range). */
#define PT_TAG_CONN 0x70740001u
#define PT_TAG_RESULT 0x70740002u
#define PT_TAG_STATUS 0x70740003u
#define PT_TAG_START 0x70740004u

#ifdef __cplusplus
}
#endif


/* The bandwidth programs' outer loop: for every size, run it, exchange the
 * result with the peer (which waits for it even when this side failed, and
 * whose buffers stay in place until then), stop if either side failed, and
 * report bw_<size> (the client's; each side's when bidirectional) and, when
 * bidirectional, the client's bw_<size>_total. Returns 0 or 1. */
typedef int (*pt_size_fn)(pt_ctx_t *c, uint32_t size, double *mbps);
int pt_run_bw_sizes(pt_ctx_t *c, pt_size_fn run_size);

#endif /* NICSIM_PERFTEST_H */
