/*
 * SDP zero-copy: sends and receives of at least the socket's threshold
 * (host.sdp.zcopy_threshold) move by RDMA between the users' buffers,
 * registered on the fly at their first transfer. A registration costs
 * tens of microseconds (the HCA's command), so the socket keeps the last
 * REG_CACHE of them (read and write access) for later transfers over the
 * same buffers, deregistering the least recently used one to make room
 * and the rest at close.
 *
 *  - Write: a reader waiting with a large enough buffer and nothing queued
 *    advertises it (SinkAvail: len, rkey, vaddr). The writer's next data
 *    goes by RDMA write into it, followed by RdmaWrCompl (its length) in
 *    the same rdma_write_send: the message lands after the bytes.
 *  - Read: a writer without a usable sink sends SrcAvail (len, rkey,
 *    vaddr of its buffer) and waits; the reader RDMA-reads into its buffer
 *    and answers RdmaRdCompl (bytes read) in an rdma_read_send, as often as
 *    its buffers take pieces, until the writer has seen every byte read.
 *
 * A SrcAvail its reader leaves unread for host.sdp.src_avail_timeout is
 * cancelled: the writer sends SrcAvailCancel and waits for the answer. A
 * reader that meets a SrcAvail with a SrcAvailCancel queued behind it
 * drops it and answers SendSm (it reads no more of it); the writer then
 * sends the bytes not read as Data, behind the cancel, so the stream
 * stays in order. A reader that read it all before the cancel came has
 * answered RdmaRdCompl already, and the cancel is stale (ignored).
 *
 * A SinkAvail serves only the writer's next data-carrying message: the
 * writer takes it when its mseqack shows the reader had seen the writer's
 * last data (else it crossed data on the wire and is stale), and drops it
 * when it sends data another way; the reader withdraws it when data other
 * than RdmaWrCompl arrives first. Both sides decide alike, so a sink is
 * never written after its reader let it go.
 */
#include <string.h>

#include "nicsim/app.h"
#include "ti/sdp/sdp_sock.h"

/* A registration covering [buf, buf + len): a kept one, or a new one. */
static const ti_rdma_desc_t *registered(struct sdp_sock *s, const void *buf, uint32_t len)
{
	const uint8_t *b = (const uint8_t *)buf;
	struct sdp_reg *victim = &s->regs[0];
	int i;
	for (i = 0; i < REG_CACHE; ++i) {
		struct sdp_reg *r = &s->regs[i];
		const uint8_t *rb = (const uint8_t *)r->buf;
		if (r->mem && b >= rb && b + len <= rb + r->len) {
			r->last_use = ++s->reg_clock;
			return &r->desc;
		}
		if (victim->mem && (!r->mem || r->last_use < victim->last_use))
			victim = r;
	}
	if (victim->mem)
		s->ops->dereg_mem(victim->mem);
	victim->mem = 0;
	if (s->ops->reg_virt_mem(s->ti, s->pd, (void *)buf, len, TI_MEM_READ_WRITE, &victim->desc, &victim->mem) !=
	    TI_SUCCESS) {
		victim->mem = 0;
		return 0;
	}
	victim->buf = buf;
	victim->len = len;
	victim->last_use = ++s->reg_clock;
	return &victim->desc;
}

void sdp_zcopy_release(struct sdp_sock *s)
{
	int i;
	for (i = 0; i < REG_CACHE; ++i)
		if (s->regs[i].mem) {
			s->ops->dereg_mem(s->regs[i].mem);
			s->regs[i].mem = 0;
		}
}

static ti_data_element_t *rdma_element(struct sdp_sock *s)
{
	ti_pool_response_t r;
	if (s->ops->res_pool_get(s->rdma_pool, 1, FALSE, 0, 0, 0, &r) != TI_SUCCESS)
		return 0;
	return r.p_element_list;
}

/* One RDMA element over `len` bytes of the user's buffer (its region's
 * rkey in `mine`) and the peer's (vaddr, rkey). */
static void describe(ti_data_element_t *e, void *buf, const ti_rdma_desc_t *mine, uint32_t len, uint64_t vaddr,
		     uint32_t rkey)
{
	ti_local_data_desc_t *l = TI_RDMA_LOCAL_DESC(e);
	l[0].vaddr = buf;
	l[0].lkey = mine->rkey; /* the interface's key of the consumer's region */
	l[0].byte_count = len;
	e->rdma_data_desc[0].vaddr = vaddr;
	e->rdma_data_desc[0].rkey = rkey;
	e->num_io_bufs = 1;
	e->msg_opt = 0;
	e->oob_data_len = 0;
	e->p_next_msg = 0;
}

/* Posts an RDMA with its completion message (write: RdmaWrCompl, read:
 * RdmaRdCompl, each carrying `len`) and waits for the RDMA; 0 or -1. */
static int rdma_with_message(struct sdp_sock *s, int write, void *buf, const ti_rdma_desc_t *mine, uint32_t len,
			     uint64_t vaddr, uint32_t rkey)
{
	ti_data_element_t *e = rdma_element(s), *m;
	ti_status_t st;
	if (!e)
		return -1;
	m = sdp_take_tx(s);
	if (!m) {
		s->ops->res_pool_put(s->rdma_pool, e);
		return -1;
	}
	describe(e, buf, mine, len, vaddr, rkey);
	sdp_put32((uint8_t *)m->local_data_desc[0].vaddr + BSDH, len);
	sdp_frame(s, m, write ? SDP_MID_RDMA_WR_COMPL : SDP_MID_RDMA_RD_COMPL, BSDH + RWCH);
	s->rdma_done = 0;
	st = write ? s->ops->rdma_write_send(s->conn, e, m) : s->ops->rdma_read_send(s->conn, e, m);
	if (st != TI_SUCCESS) {
		s->ops->res_pool_put(s->rdma_pool, e);
		s->ops->res_pool_put(s->pool, m);
		return -1;
	}
	if (sdp_wait(s, &s->rdma_done) || s->rdma_status != TI_SUCCESS)
		return -1;
	return 0;
}

/* RDMA write into the peer's sink. */
static long write_into_sink(struct sdp_sock *s, const void *buf, size_t len)
{
	const uint32_t n = len < s->sink_len ? (uint32_t)len : s->sink_len;
	const uint64_t vaddr = s->sink_vaddr;
	const uint32_t rkey = s->sink_rkey;
	const ti_rdma_desc_t *mine = registered(s, buf, n);
	if (!mine || rdma_with_message(s, 1, (void *)buf, mine, n, vaddr, rkey))
		return -1;
	return (long)n;
}

/* Waits until the peer read n bytes of our SrcAvail, or (`answered`) it
 * answered our SrcAvailCancel, or `budget_ns` passed; nonzero when the
 * connection can no longer carry the transfer. */
static int wait_source(struct sdp_sock *s, uint32_t n, int answered, uint64_t budget_ns)
{
	uint64_t t;
	for (t = 0; s->rd_compl < n && !(answered && s->send_sm) && t < budget_ns; t += 100) {
		if (s->failed || s->peer_closed || s->reset)
			return -1;
		sdp_flush_credits(s);
		nicsim_sleep_ns(100);
	}
	return 0;
}

/* The reader left our SrcAvail unread too long: SrcAvailCancel, then its
 * answer. It may have read everything meanwhile (RdmaRdCompl, the cancel
 * is stale when it arrives); else SendSm says it reads no more, and what
 * it did not read goes by copy. Bytes it read, -1 on failure. */
static long cancel_source(struct sdp_sock *s, uint32_t n, size_t len)
{
	ti_data_element_t *m = sdp_take_tx(s);
	if (!m)
		return -1;
	s->send_sm = 0;
	sdp_frame(s, m, SDP_MID_SRC_AVAIL_CANCEL, BSDH);
	if (s->ops->msg_send(s->conn, m) > TI_PENDING) {
		s->ops->res_pool_put(s->pool, m);
		return -1;
	}
	if (wait_source(s, n, 1, 4000000000ull) || (s->rd_compl < n && !s->send_sm))
		return -1;
	if (s->rd_compl < n)
		s->copy_left = len - s->rd_compl;
	return (long)s->rd_compl;
}

/* SrcAvail, then wait until the peer read it all (or cancel it). */
static long offer_source(struct sdp_sock *s, const void *buf, size_t len)
{
	const uint32_t n = len < 0x80000000u ? (uint32_t)len : 0x80000000u;
	const ti_rdma_desc_t *mine = registered(s, buf, n);
	ti_data_element_t *m;
	uint8_t *p;
	if (!mine || !(m = sdp_take_tx(s)))
		return -1;
	p = (uint8_t *)m->local_data_desc[0].vaddr;
	sdp_put32(p + BSDH, n);
	sdp_put32(p + BSDH + 4, mine->rkey);
	sdp_put64(p + BSDH + 8, (uint64_t)(uintptr_t)buf);
	s->rd_compl = 0;
	sdp_frame(s, m, SDP_MID_SRC_AVAIL, BSDH + SRCAH);
	if (s->ops->msg_send(s->conn, m) > TI_PENDING) {
		s->ops->res_pool_put(s->pool, m);
		return -1;
	}
	if (wait_source(s, n, 0, s->src_avail_timeout))
		return -1;
	return s->rd_compl >= n ? (long)n : cancel_source(s, n, n);
}

long sdp_zcopy_send(struct sdp_sock *s, const void *buf, size_t len)
{
	return s->sink_valid ? write_into_sink(s, buf, len) : offer_source(s, buf, len);
}

void sdp_zcopy_offer_sink(struct sdp_sock *s, void *buf, size_t cap)
{
	const ti_rdma_desc_t *mine;
	ti_data_element_t *m;
	uint8_t *p;
	const uint32_t n = cap < 0x80000000u ? (uint32_t)cap : 0x80000000u;
	if (s->sink_out || !s->zcopy || cap < s->zcopy || s->failed || s->peer_closed || s->rx_head)
		return;
	if (!(mine = registered(s, buf, n)) || !(m = sdp_take_tx(s)))
		return;
	if (s->rx_head) { /* data came while we waited: our mseqack would claim it */
		s->ops->res_pool_put(s->pool, m);
		return;
	}
	p = (uint8_t *)m->local_data_desc[0].vaddr;
	sdp_put32(p + BSDH, n);
	sdp_put32(p + BSDH + 4, mine->rkey);
	sdp_put64(p + BSDH + 8, (uint64_t)(uintptr_t)buf);
	sdp_put32(p + BSDH + 16, 0); /* non-discard: none */
	sdp_frame(s, m, SDP_MID_SINK_AVAIL, BSDH + SINKAH);
	if (s->ops->msg_send(s->conn, m) > TI_PENDING) {
		s->ops->res_pool_put(s->pool, m);
		return;
	}
	s->sink_out = 1;
}

void sdp_zcopy_void_sink(struct sdp_sock *s)
{
	s->sink_out = 0; /* its registration stays for the next transfer */
}

/* Whether a SrcAvailCancel waits behind the SrcAvail e in the queue. */
static int cancelled(const ti_data_element_t *e)
{
	for (e = e->p_next_msg; e; e = e->p_next_msg)
		if (((const uint8_t *)e->local_data_desc[0].vaddr)[0] == SDP_MID_SRC_AVAIL_CANCEL)
			return 1;
	return 0;
}

/* Drops a cancelled SrcAvail and tells the writer (SendSm): the bytes we
 * did not read come by copy behind the cancel. */
static long drop_source(struct sdp_sock *s, ti_data_element_t *e)
{
	ti_data_element_t *m;
	sdp_repost(s, e);
	if (!(m = sdp_take_tx(s)))
		return -1;
	sdp_frame(s, m, SDP_MID_SEND_SM, BSDH);
	if (s->ops->msg_send(s->conn, m) > TI_PENDING) {
		s->ops->res_pool_put(s->pool, m);
		return -1;
	}
	return 0;
}

long sdp_zcopy_read(struct sdp_sock *s, ti_data_element_t *e, void *buf, size_t cap)
{
	const uint8_t *h = (const uint8_t *)e->local_data_desc[0].vaddr;
	const uint32_t total = sdp_get32(h + BSDH), rkey = sdp_get32(h + BSDH + 4);
	const uint64_t vaddr = sdp_get64(h + BSDH + 8);
	const uint32_t done = e->ud_offset - BSDH; /* bytes read so far */
	const uint32_t n = total - done < cap ? total - done : (uint32_t)cap;
	const ti_rdma_desc_t *mine;
	if (cancelled(e))
		return drop_source(s, e);
	if (!n) {
		sdp_repost(s, e);
		return 0;
	}
	mine = registered(s, buf, n);
	if (!mine || rdma_with_message(s, 0, buf, mine, n, vaddr + done, rkey))
		return -1;
	e->ud_offset += n;
	if (done + n >= total)
		sdp_repost(s, e);
	return (long)n;
}

int sdp_zcopy_control(struct sdp_sock *s, const uint8_t *h)
{
	if (h[0] == SDP_MID_RDMA_RD_COMPL) {
		s->rd_compl += sdp_get32(h + BSDH);
		return 1;
	}
	if (h[0] == SDP_MID_SEND_SM) {
		s->send_sm = 1;
		return 1;
	}
	if (h[0] == SDP_MID_SINK_AVAIL) {
		/* Usable if the reader had seen our last data when it sent it. */
		const uint32_t ack = sdp_get32(h + 12);
		if ((int32_t)(ack - s->last_data_mseq) >= 0) {
			s->sink_len = sdp_get32(h + BSDH);
			s->sink_rkey = sdp_get32(h + BSDH + 4);
			s->sink_vaddr = sdp_get64(h + BSDH + 8);
			s->sink_valid = 1;
		}
		return 1;
	}
	return 0;
}
