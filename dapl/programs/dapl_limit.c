/*
 * dapl_limit: the dapltest limit test, over uDAPL 1.1, on one node. For
 * each kind of object in turn it creates objects until the provider or the
 * HCA underneath runs out (or --max is reached), checks that the call that
 * failed returned DAT_INSUFFICIENT_RESOURCES with the subtype of what ran
 * out, frees everything, and checks that one more can be made again:
 *   ias    IAs on "ib0" (the provider's device opens)   DAT_RESOURCE_DEVICE
 *   pzs    PZs (kernel PDs)                             DAT_RESOURCE_PROTECTION_DOMAIN
 *   evds   DTO EVDs (each owns a CQ)                    DAT_RESOURCE_TEVD
 *   eps    EPs with a PZ (each owns an RC QP)           DAT_RESOURCE_TEP
 *   lmrs   LMRs (memory regions of the HCA)             DAT_RESOURCE_MEMORY_REGION
 *   rmrs   RMRs (memory windows, the same HCA table)    DAT_RESOURCE_MEMORY_REGION
 *   recvs  RECVs on one EP (its max_recv_dtos)          DAT_RESOURCE_TEP
 *   events software events on one EVD (its qlen)        DAT_QUEUE_FULL
 * Lower the HCA's limits in the scenario (nic.max_pd, max_cq, max_qp,
 * max_mpt) to reach them quickly.
 *
 * Arguments: --max=N (4096), --qlen=N (the events EVD, 64), --recvs=N
 * (the EP's max_recv_dtos, 32). Results: one per kind, the number made
 * before the failure; the IA's attributes for them (max_pzs, max_evds,
 * max_eps, max_lmrs, max_rmrs); limits_ok 1 when every failure was the
 * right one.
 */
#include <stdio.h>
#include <stdlib.h>

#include "dapl_common.h"

#define DL_RC(type, sub) (DAT_CLASS_ERROR | (type) | (sub))

struct dl_ctx {
	int max, qlen, recvs;
	DAT_IA_HANDLE ia;
	DAT_PZ_HANDLE pz;
	DAT_EVD_HANDLE dto, conn;
	DAT_HANDLE *h;
	unsigned char *buf;
};

/* Creates object i of a kind: its handle in *h, the call's return code. */
typedef DAT_RETURN (*dl_make_fn)(struct dl_ctx *c, int i, DAT_HANDLE *h);
typedef DAT_RETURN (*dl_free_fn)(DAT_HANDLE h);

static DAT_RETURN make_ia(struct dl_ctx *c, int i, DAT_HANDLE *h)
{
	DAT_EVD_HANDLE async = DAT_HANDLE_NULL;
	(void)c, (void)i;
	return dat_ia_open("ib0", 4, &async, h);
}
static DAT_RETURN free_ia(DAT_HANDLE h) { return dat_ia_close(h, DAT_CLOSE_GRACEFUL_FLAG); }

static DAT_RETURN make_pz(struct dl_ctx *c, int i, DAT_HANDLE *h)
{
	(void)i;
	return dat_pz_create(c->ia, h);
}

static DAT_RETURN make_evd(struct dl_ctx *c, int i, DAT_HANDLE *h)
{
	(void)i;
	return dat_evd_create(c->ia, 4, DAT_HANDLE_NULL, DAT_EVD_DTO_FLAG, h);
}

static DAT_RETURN make_ep(struct dl_ctx *c, int i, DAT_HANDLE *h)
{
	(void)i;
	return dat_ep_create(c->ia, c->pz, c->dto, c->dto, c->conn, NULL, h);
}

static DAT_RETURN make_rmr(struct dl_ctx *c, int i, DAT_HANDLE *h)
{
	(void)i;
	return dat_rmr_create(c->pz, h);
}

static DAT_RETURN make_lmr(struct dl_ctx *c, int i, DAT_HANDLE *h)
{
	DAT_REGION_DESCRIPTION region;
	DAT_LMR_CONTEXT lkey;
	DAT_RMR_CONTEXT rkey;
	DAT_VLEN len;
	DAT_VADDR addr;
	region.for_va = c->buf + (i % 64) * 64; /* regions may overlap */
	return dat_lmr_create(c->ia, DAT_MEM_TYPE_VIRTUAL, region, 64, c->pz, DAT_MEM_PRIV_ALL_FLAG, h, &lkey, &rkey,
			      &len, &addr);
}

/* Makes objects until a call fails; checks its code; frees them all. */
static int exhaust(struct dl_ctx *c, const char *name, dl_make_fn make, dl_free_fn release, DAT_RETURN expect)
{
	int n = 0, i;
	DAT_RETURN rc = DAT_SUCCESS;
	DAT_HANDLE extra;
	while (n < c->max && (rc = make(c, n, &c->h[n])) == DAT_SUCCESS)
		++n;
	nicsim_result(name, n, "");
	if (n == c->max)
		return nicsim_log("dapl_limit: %s: %d made, nothing ran out", name, n), 1;
	if (rc != expect)
		return nicsim_log("dapl_limit: %s: after %d, 0x%08x instead of 0x%08x", name, n, (unsigned)rc,
				  (unsigned)expect),
		       1;
	for (i = n - 1; i >= 0; --i)
		DT_CHECK(release(c->h[i]));
	DT_CHECK(make(c, 0, &extra)); /* what was freed can be made again */
	DT_CHECK(release(extra));
	return 0;
}

static int limit_recvs(struct dl_ctx *c)
{
	DAT_EP_ATTR attr;
	DAT_EP_HANDLE ep;
	DAT_LMR_HANDLE lmr;
	DAT_LMR_TRIPLET iov;
	DAT_DTO_COOKIE cookie;
	DAT_EVENT ev;
	DAT_COUNT more;
	DAT_RETURN rc = DAT_SUCCESS;
	int n = 0, i;
	DT_CHECK(make_lmr(c, 0, &lmr));
	memset(&attr, 0, sizeof attr);
	attr.service_type = DAT_SERVICE_TYPE_RC;
	attr.max_mtu_size = attr.max_rdma_size = 1 << 20;
	attr.max_recv_dtos = c->recvs, attr.max_request_dtos = 4;
	attr.max_recv_iov = attr.max_request_iov = 1;
	DT_CHECK(dat_ep_create(c->ia, c->pz, c->dto, c->dto, c->conn, &attr, &ep));
	{
		DAT_LMR_PARAM p;
		DT_CHECK(dat_lmr_query(lmr, DAT_LMR_FIELD_ALL, &p));
		iov.lmr_context = p.lmr_context, iov.pad = 0, iov.virtual_address = p.registered_address;
		iov.segment_length = 64;
	}
	for (; n < c->max; ++n) {
		cookie.as_64 = (DAT_UINT64)n;
		if ((rc = dat_ep_post_recv(ep, 1, &iov, cookie, DAT_COMPLETION_DEFAULT_FLAG)) != DAT_SUCCESS)
			break;
	}
	nicsim_result("recvs", n, "");
	if (rc != DL_RC(DAT_INSUFFICIENT_RESOURCES, DAT_RESOURCE_TEP))
		return nicsim_log("dapl_limit: recvs: after %d, 0x%08x", n, (unsigned)rc), 1;
	/* Disconnecting the unconnected EP flushes them: every one comes back. */
	DT_CHECK(dat_ep_disconnect(ep, DAT_CLOSE_ABRUPT_FLAG));
	for (i = 0; i < n; ++i)
		if (dat_evd_wait(c->dto, 100000, 1, &ev, &more) != DAT_SUCCESS ||
		    ev.event_data.dto_completion_event_data.status != DAT_DTO_ERR_FLUSHED)
			return nicsim_log("dapl_limit: RECV %d was not flushed", i), 1;
	DT_CHECK(dat_ep_free(ep));
	DT_CHECK(dat_lmr_free(lmr));
	return 0;
}

static int limit_events(struct dl_ctx *c)
{
	DAT_EVD_HANDLE evd;
	DAT_EVENT ev;
	DAT_RETURN rc = DAT_SUCCESS;
	int n = 0, i;
	DT_CHECK(dat_evd_create(c->ia, c->qlen, DAT_HANDLE_NULL, DAT_EVD_SOFTWARE_FLAG, &evd));
	memset(&ev, 0, sizeof ev);
	ev.event_number = DAT_SOFTWARE_EVENT;
	for (; n < c->max; ++n) {
		ev.event_data.software_event_data.pointer = (DAT_PVOID)(unsigned long)(n + 1);
		if ((rc = dat_evd_post_se(evd, &ev)) != DAT_SUCCESS)
			break;
	}
	nicsim_result("events", n, "");
	if (rc != DL_RC(DAT_QUEUE_FULL, 0))
		return nicsim_log("dapl_limit: events: after %d, 0x%08x", n, (unsigned)rc), 1;
	for (i = 0; i < n; ++i)
		if (dat_evd_dequeue(evd, &ev) != DAT_SUCCESS ||
		    ev.event_data.software_event_data.pointer != (DAT_PVOID)(unsigned long)(i + 1))
			return nicsim_log("dapl_limit: software event %d lost", i), 1;
	DT_CHECK(dat_evd_free(evd));
	return 0;
}

/* What the IA says it has: the counts made stay within these. */
static int report_attributes(DAT_IA_HANDLE ia)
{
	DAT_IA_ATTR a;
	DT_CHECK(dat_ia_query(ia, NULL, DAT_IA_ALL, &a, 0, NULL));
	nicsim_result("max_pzs", a.max_pzs, "");
	nicsim_result("max_evds", a.max_evds, "");
	nicsim_result("max_eps", a.max_eps, "");
	nicsim_result("max_lmrs", a.max_lmrs, "");
	nicsim_result("max_rmrs", a.max_rmrs, "");
	return 0;
}

static int run(struct dl_ctx *c)
{
	DAT_EVD_HANDLE async = DAT_HANDLE_NULL;
	if (exhaust(c, "ias", make_ia, free_ia, DL_RC(DAT_INSUFFICIENT_RESOURCES, DAT_RESOURCE_DEVICE)))
		return 1;
	DT_CHECK(dat_ia_open("ib0", 8, &async, &c->ia));
	if (report_attributes(c->ia))
		return 1;
	if (exhaust(c, "pzs", make_pz, dat_pz_free, DL_RC(DAT_INSUFFICIENT_RESOURCES, DAT_RESOURCE_PROTECTION_DOMAIN)) ||
	    exhaust(c, "evds", make_evd, dat_evd_free, DL_RC(DAT_INSUFFICIENT_RESOURCES, DAT_RESOURCE_TEVD)))
		return 1;
	DT_CHECK(dat_pz_create(c->ia, &c->pz));
	DT_CHECK(dat_evd_create(c->ia, 256, DAT_HANDLE_NULL, DAT_EVD_DTO_FLAG, &c->dto));
	DT_CHECK(dat_evd_create(c->ia, 8, DAT_HANDLE_NULL, DAT_EVD_CONNECTION_FLAG, &c->conn));
	if (exhaust(c, "eps", make_ep, dat_ep_free, DL_RC(DAT_INSUFFICIENT_RESOURCES, DAT_RESOURCE_TEP)) ||
	    exhaust(c, "lmrs", make_lmr, dat_lmr_free, DL_RC(DAT_INSUFFICIENT_RESOURCES, DAT_RESOURCE_MEMORY_REGION)) ||
	    exhaust(c, "rmrs", make_rmr, dat_rmr_free, DL_RC(DAT_INSUFFICIENT_RESOURCES, DAT_RESOURCE_MEMORY_REGION)) ||
	    limit_recvs(c) || limit_events(c))
		return 1;
	DT_CHECK(dat_evd_free(c->conn));
	DT_CHECK(dat_evd_free(c->dto));
	DT_CHECK(dat_pz_free(c->pz));
	DT_CHECK(dat_ia_close(c->ia, DAT_CLOSE_GRACEFUL_FLAG));
	return 0;
}

/* The program's defaults and its arguments: shared by the run and the
 * argument check. */
static int options(struct dl_ctx *c, int argc, char **argv)
{
	int i;
	memset(c, 0, sizeof *c);
	c->max = 4096, c->qlen = 64, c->recvs = 32;
	for (i = 1; i < argc; ++i) {
		uint64_t v;
		int got;
		if ((got = nicsim_arg_u64(argv[i], "--max=", 1, 1 << 20, &v)) > 0)
			c->max = (int)v;
		else if (got == 0 && (got = nicsim_arg_u64(argv[i], "--qlen=", 1, 65536, &v)) > 0)
			c->qlen = (int)v;
		else if (got == 0 && (got = nicsim_arg_u64(argv[i], "--recvs=", 1, 4096, &v)) > 0)
			c->recvs = (int)v;
		else if (got < 0)
			return -1;
		else
			return nicsim_log("dapl_limit: unknown argument %s", argv[i]), -1;
	}
	return 0;
}

static int check_options(int argc, char **argv)
{
	struct dl_ctx c;
	return options(&c, argc, argv);
}

static int dapl_limit_main(int argc, char **argv)
{
	struct dl_ctx c;
	int rc;
	if (options(&c, argc, argv))
		return 2;
	c.h = (DAT_HANDLE *)nicsim_alloc(sizeof(DAT_HANDLE) * (size_t)c.max, 64);
	c.buf = (unsigned char *)nicsim_alloc(64 * 64, 64);
	if (!c.h || !c.buf)
		return nicsim_log("dapl_limit: no memory"), 1;
	rc = run(&c);
	if (!rc)
		nicsim_result("limits_ok", 1, "");
	nicsim_free(c.buf);
	nicsim_free(c.h);
	return rc;
}

__attribute__((constructor)) static void dapl_limit_register(void)
{
	nicsim_register_program_checked("dapl_limit", dapl_limit_main, check_options,
				"the dapltest limit test over uDAPL 1.1: IAs, PZs, EVDs, EPs, LMRs, RECVs and events "
				"made until they run out, each failure checked, everything freed. --max=4096 (of each kind), "
				"--qlen=64 (the events EVD), --recvs=32 (the EP's max_recv_dtos)");
}
