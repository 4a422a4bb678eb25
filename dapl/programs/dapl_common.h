/*
 * Helpers the dapltest-style programs share: checked calls, one EP's
 * resources (buffer, LMR, EVDs), waiting for an event of a kind, the
 * server's address. Plain uDAPL 1.1 (dat/udat.h) and nicsim/app.h.
 */
#ifndef DAPL_PROGRAMS_COMMON_H
#define DAPL_PROGRAMS_COMMON_H

#include <dat/udat.h>
#include <netinet/in.h>
#include <string.h>

#include "nicsim/app.h"

/* Logs a failed call with its return code; evaluates to nonzero. */
#define DT_FAIL(call, rc) (nicsim_log("%s:%d: %s = 0x%08x", __FILE__, __LINE__, #call, (unsigned)(rc)), 1)
#define DT_CHECK(call)                                       \
  do {                                                       \
    DAT_RETURN dt_rc_ = (call);                              \
    if (dt_rc_ != DAT_SUCCESS) return DT_FAIL(call, dt_rc_); \
  } while (0)

/* One EP and what it uses. buf: send half, receive half, RDMA region. */
struct dt_ep {
  DAT_EP_HANDLE ep;
  DAT_EVD_HANDLE dto_evd, conn_evd;
  DAT_LMR_HANDLE lmr;
  DAT_LMR_CONTEXT lkey;
  DAT_RMR_CONTEXT rkey;
  unsigned char* buf;
  DAT_VLEN half; /* bytes in each of the three areas */
  /* the peer's RDMA region (from the connection's private data) */
  DAT_RMR_CONTEXT peer_rkey;
  DAT_VADDR peer_addr;
};

static inline unsigned char* dt_send_area(struct dt_ep* e) { return e->buf; }
static inline unsigned char* dt_recv_area(struct dt_ep* e) { return e->buf + e->half; }
static inline unsigned char* dt_rdma_area(struct dt_ep* e) { return e->buf + 2 * e->half; }

static inline DAT_LMR_TRIPLET dt_iov(struct dt_ep* e, unsigned char* p, DAT_VLEN len) {
  DAT_LMR_TRIPLET t;
  t.lmr_context = e->lkey;
  t.pad = 0;
  t.virtual_address = (DAT_VADDR)(unsigned long)p;
  t.segment_length = len;
  return t;
}

/* Waits (simulated time) for an event of `number` on evd. */
static inline int dt_wait(DAT_EVD_HANDLE evd, DAT_EVENT_NUMBER number, DAT_EVENT* ev, DAT_TIMEOUT us) {
  DAT_COUNT more;
  DAT_RETURN rc = dat_evd_wait(evd, us, 1, ev, &more);
  if (rc != DAT_SUCCESS) return nicsim_log("dat_evd_wait for 0x%x: 0x%08x", (unsigned)number, (unsigned)rc), 1;
  if (ev->event_number != number)
    return nicsim_log("event 0x%x, expected 0x%x", (unsigned)ev->event_number, (unsigned)number), 1;
  return 0;
}

/* A DTO completion that succeeded, with the cookie expected. */
static inline int dt_wait_dto(struct dt_ep* e, DAT_UINT64 cookie, DAT_VLEN* len) {
  DAT_EVENT ev;
  if (dt_wait(e->dto_evd, DAT_DTO_COMPLETION_EVENT, &ev, 1000000)) return 1;
  if (ev.event_data.dto_completion_event_data.status != DAT_DTO_SUCCESS ||
      ev.event_data.dto_completion_event_data.user_cookie.as_64 != cookie)
    return nicsim_log("DTO status %d cookie %llu, expected cookie %llu",
                      (int)ev.event_data.dto_completion_event_data.status,
                      (unsigned long long)ev.event_data.dto_completion_event_data.user_cookie.as_64,
                      (unsigned long long)cookie),
           1;
  if (len) *len = ev.event_data.dto_completion_event_data.transfered_length;
  return 0;
}

static inline int dt_ep_open(DAT_IA_HANDLE ia, DAT_PZ_HANDLE pz, struct dt_ep* e, DAT_VLEN half, int with_ep) {
  DAT_REGION_DESCRIPTION region;
  DAT_VLEN reg_len;
  DAT_VADDR reg_addr;
  memset(e, 0, sizeof *e);
  e->half = half;
  e->buf = (unsigned char*)nicsim_alloc((size_t)(3 * half), 64);
  if (!e->buf) return nicsim_log("no memory"), 1;
  region.for_va = e->buf;
  DT_CHECK(dat_lmr_create(ia, DAT_MEM_TYPE_VIRTUAL, region, 3 * half, pz, DAT_MEM_PRIV_ALL_FLAG, &e->lmr, &e->lkey,
                          &e->rkey, &reg_len, &reg_addr));
  DT_CHECK(dat_evd_create(ia, 256, DAT_HANDLE_NULL, DAT_EVD_DTO_FLAG, &e->dto_evd));
  DT_CHECK(dat_evd_create(ia, 8, DAT_HANDLE_NULL, DAT_EVD_CONNECTION_FLAG, &e->conn_evd));
  if (with_ep) DT_CHECK(dat_ep_create(ia, pz, e->dto_evd, e->dto_evd, e->conn_evd, NULL, &e->ep));
  return 0;
}

static inline int dt_ep_close(struct dt_ep* e) {
  if (e->ep) DT_CHECK(dat_ep_free(e->ep));
  DT_CHECK(dat_evd_free(e->dto_evd));
  DT_CHECK(dat_evd_free(e->conn_evd));
  DT_CHECK(dat_lmr_free(e->lmr));
  nicsim_free(e->buf);
  return 0;
}

/* The RDMA region advertised in private data: rkey (4 bytes), address (8). */
static inline void dt_put_region(unsigned char* p, const struct dt_ep* e) {
  DAT_VADDR a = (DAT_VADDR)(unsigned long)(e->buf + 2 * e->half);
  memcpy(p, &e->rkey, 4);
  memcpy(p + 4, &a, 8);
}
static inline void dt_get_region(const unsigned char* p, struct dt_ep* e) {
  memcpy(&e->peer_rkey, p, 4);
  memcpy(&e->peer_addr, p + 4, 8);
}

static inline void dt_addr(struct sockaddr_in* sin, unsigned int ip) {
  memset(sin, 0, sizeof *sin);
  sin->sin_family = AF_INET;
  sin->sin_addr.s_addr = htonl(ip);
}

/* The default address of a node's port 1 (10.0.0.0 + index + 1). */
static inline unsigned int dt_node_ip(unsigned int node) { return 0x0a000000u + node + 1; }

#endif /* DAPL_PROGRAMS_COMMON_H */
