/* Shared helpers of the Elan Kernel Comms calibration programs. */
#include "ep_perf.h"

#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#define EP_PERF_TAG 0x45500000u

int ep_perf_parse(ep_perf_opts_t *o, int argc, char **argv)
{
	uint64_t v, sizes[EP_PERF_MAX_SIZES];
	uint32_t n, k;
	int i, got;
	for (i = 1; i < argc; i++) {
		const char *a = argv[i];
		if ((got = nicsim_arg_u64_list(a, "--sizes=", o->min_size, o->max_size, sizes, EP_PERF_MAX_SIZES, &n)) > 0) {
			for (k = 0; k < n; k++)
				o->sizes[k] = (uint32_t)sizes[k];
			o->nsizes = (int)n;
		} else if (got == 0 && (got = nicsim_arg_u64(a, "--iters=", 1, 1000000000, &v)) > 0) {
			o->iters = (uint32_t)v;
		} else if (got == 0 && (got = nicsim_arg_u64(a, "--window=", 1, 4096, &v)) > 0) {
			o->window = (uint32_t)v;
		} else if (got == 0) {
			nicsim_log("unknown argument '%s'", a);
			return -1;
		}
		if (got < 0)
			return -1;
	}
	return 0;
}

int ep_perf_options(ep_perf_opts_t *o, const ep_perf_opts_t *defaults, int argc, char **argv)
{
	*o = *defaults;
	return ep_perf_parse(o, argc, argv);
}

int ep_perf_peer(void)
{
	uint32_t me = nicsim_workload_rank();
	uint32_t other;
	int32_t mine = ep_nodeid(), theirs = -1;
	if (nicsim_workload_size() != 2 || mine < 0)
		return -1;
	other = nicsim_workload_node(1 - me);
	if (nicsim_mgmt_send(other, EP_PERF_TAG, &mine, sizeof mine) != 0)
		return -1;
	if (nicsim_mgmt_recv(other, EP_PERF_TAG, &theirs, sizeof theirs, NULL, 0) != (long)sizeof theirs)
		return -1;
	return theirs;
}

E3_Addr ep_perf_map(ELAN3_DMA_STATE *sp, void *buf, size_t len, u_int perm, ELAN3_DMA_HANDLE **h)
{
	if (elan3_dma_addr_setup(sp, NULL, (caddr_t)buf, (u_int)len, perm, PTE_LOAD_LITTLE_ENDIAN,
				 (E3_Addr)0, DDI_DMA_SLEEP, NULL, h) != DDI_DMA_MAPPED)
		return 0;
	return elan3_dma_handle_to_addr(*h);
}

void ep_perf_on_tx(EP_TXD *txd, void *arg, int status)
{
	ep_perf_tx_t *tx = (ep_perf_tx_t *)arg;
	(void)txd;
	if (status != ESUCCESS)
		tx->failed++;
	tx->completed++;
	tx->last_done_ps = nicsim_now_ps();
}

double ep_perf_stream(const ep_perf_opts_t *o, ep_perf_tx_t *tx, ep_perf_send_fn send, void *ctx,
		      uint32_t bytes, uint64_t limit_ps, uint32_t poll_ns, const char *what)
{
	const uint64_t t0 = nicsim_now_ps();
	uint32_t sent = 0;
	char why[128];
	tx->completed = 0;
	while (tx->completed < o->iters) {
		if (nicsim_now_ps() - t0 > limit_ps) {
			snprintf(why, sizeof why, "%s did not complete within %llu us", what,
				 (unsigned long long)(limit_ps / 1000000u));
			nicsim_fail(why);
			return -1;
		}
		if (sent < o->iters && sent - tx->completed < o->window) {
			const int rc = send(ctx, tx);
			if (rc == ESUCCESS) {
				sent++;
				continue;
			}
			if (rc != ENOMEM) {
				snprintf(why, sizeof why, "%s: a transmit call failed with %d", what, rc);
				nicsim_fail(why);
				return -1;
			}
		}
		nicsim_sleep_ns(poll_ns);
	}
	if (tx->failed) {
		snprintf(why, sizeof why, "%s completed with errors", what);
		nicsim_fail(why);
		return -1;
	}
	return (double)bytes * o->iters / ((double)(tx->last_done_ps - t0) / 1e12) / 1e6;
}

uint64_t *ep_perf_samples(uint32_t n)
{
	uint64_t *s = (uint64_t *)nicsim_alloc((size_t)(n ? n : 1) * sizeof *s, 64);
	if (!s)
		nicsim_fail("no node memory for the latency samples");
	return s;
}
