/*
 * Shared helpers of the Elan Kernel Comms calibration programs (C, written
 * against elan3/elancomm.h and nicsim/app.h only): argument parsing, the
 * exchange of Elan node ids over the management network (as a launcher
 * would), and buffer mapping.
 */
#ifndef EP_PERF_H
#define EP_PERF_H

#include <elan3/elancomm.h>
#include <nicsim/app.h>
#include <stddef.h>
#include <stdint.h>

#define EP_PERF_MAX_SIZES 16
#define EP_PERF_SERVICE 32 /* a free service number (EP_SVC_FIRST_FREE and up) */

typedef struct ep_perf_opts {
	uint32_t sizes[EP_PERF_MAX_SIZES];
	int nsizes;
	uint32_t iters;
	uint32_t window;
	uint32_t min_size, max_size; /* set by the program: the messages it can send */
} ep_perf_opts_t;

/* Sizes of large messages the programs accept: a 64 MiB buffer is mapped
 * whole into the Elan's address space. */
#define EP_PERF_MAX_LARGE (64u << 20)

/* --sizes=a,b,c (min_size to max_size) --iters=N (1 to 10^9) --window=N (1 to
 * 4096); returns 0, or -1 with the program failed and the reason given. */
int ep_perf_parse(ep_perf_opts_t *o, int argc, char **argv);
/* A program's options: its defaults (sizes, the range a size may take,
 * iterations, window), then its arguments on top as ep_perf_parse reads
 * them. The run and the argument check both call it. */
int ep_perf_options(ep_perf_opts_t *o, const ep_perf_opts_t *defaults, int argc, char **argv);
/* This node's Elan id to the other rank, and the other rank's back; -1 on failure. */
int ep_perf_peer(void);
/* Maps len bytes of node memory with perm; returns the Elan address or 0. */
E3_Addr ep_perf_map(ELAN3_DMA_STATE *sp, void *buf, size_t len, u_int perm, ELAN3_DMA_HANDLE **h);

/* Transmit completions of a stream: ep_perf_on_tx is the EP_TXH, its arg an ep_perf_tx_t. */
typedef struct ep_perf_tx {
	uint32_t completed, failed;
	uint64_t last_done_ps;
} ep_perf_tx_t;
void ep_perf_on_tx(EP_TXD *txd, void *arg, int status);

/* Issues one transmit with ep_perf_on_tx and tx as its handler and argument. */
typedef int (*ep_perf_send_fn)(void *ctx, ep_perf_tx_t *tx);

/*
 * Keeps up to o->window transmits in flight until o->iters have completed,
 * sleeping poll_ns between attempts when the window is full or the layer
 * answers ENOMEM. Bandwidth of `bytes` per transmit, from now to the last
 * completion, in MB/s (10^6 B/s); -1 after reporting a failure (`what`
 * names the transmits, `limit_ps` bounds the simulated time).
 */
double ep_perf_stream(const ep_perf_opts_t *o, ep_perf_tx_t *tx, ep_perf_send_fn send, void *ctx,
		      uint32_t bytes, uint64_t limit_ps, uint32_t poll_ns, const char *what);
/* Node memory for n per-iteration samples (ps, for nicsim_result_tail), or
 * NULL (reported). */
uint64_t *ep_perf_samples(uint32_t n);

/* Byte i of message `seq` (a pattern the receiver can check). */
static inline unsigned char ep_perf_byte(uint32_t seq, uint32_t i)
{
	return (unsigned char)(seq * 131u + i * 7u + (i >> 8));
}

#endif
