/*
 * SDP stream sockets over the SDP Transport Interface, grown from the
 * interface's sample code (sample_bind, sample_connect, sample_listen,
 * sample_connect_request_callback, sample_accept, sample_sendmsg,
 * sample_msg_recv_complete, sample_disconnect): one transport instance,
 * PD, CQ, message pool and RDMA pool per socket, as the sample has them.
 *
 * The wire is SDP's (sdp_sock.h). The connect carries Hello (mid 0x00,
 * BSDH + the 76-byte Hello header: the whole 92 bytes of the CM REQ's
 * private data), the accept HelloAck (mid 0x01, BSDH + 8-byte header) in
 * the REP; the service id is in SDP's port space (0x0000000000010000 |
 * port, the transport's mapping). Data (mid 0xFF) is copied through the
 * pool's buffers; sends and receives of at least the zero-copy threshold
 * move by RDMA instead (sdp_zcopy.c). A sender may send while it has
 * credits, credits = bufs - (mseq - mseqack) from the peer's last BSDH,
 * where bufs counts the receive buffers posted beyond mseqack; a receiver
 * that reposted half its buffers and has nothing to send sends an empty
 * Data message to advertise them. Close sends DisConn (mid 0x02), then
 * disconnects; an abort sends AbortConn (mid 0x03) instead, and the peer's
 * reads and writes fail from its arrival on (a reset).
 */
#include <string.h>

#include "nicsim/app.h"
#include "ti/sdp/sdp.h"
#include "ti/sdp/sdp_sock.h"

/* The calling node's socket whose CQ this is (the completion callbacks
 * get the CQ only). */
static struct sdp_sock *sock_of_cq(ti_cq_handle_t cq)
{
	struct sdp_node *n = sdp_node_state();
	struct sdp_sock *s;
	for (s = n ? n->socks : 0; s; s = s->next)
		if (s->cq == cq)
			return s;
	return 0;
}

void sdp_put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24), p[1] = (uint8_t)(v >> 16), p[2] = (uint8_t)(v >> 8), p[3] = (uint8_t)v;
}
uint32_t sdp_get32(const uint8_t *p)
{
	return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | p[3];
}
void sdp_put64(uint8_t *p, uint64_t v)
{
	sdp_put32(p, (uint32_t)(v >> 32));
	sdp_put32(p + 4, (uint32_t)v);
}
uint64_t sdp_get64(const uint8_t *p) { return ((uint64_t)sdp_get32(p) << 32) | sdp_get32(p + 4); }
#define put32 sdp_put32
#define get32 sdp_get32

/* Data-carrying messages: Data with payload, SrcAvail, RdmaWrCompl. */
static int carries_data(uint8_t mid, uint32_t len)
{
	return (mid == SDP_MID_DATA && len > BSDH) || mid == SDP_MID_SRC_AVAIL || mid == SDP_MID_RDMA_WR_COMPL;
}

static void put_bsdh(struct sdp_sock *s, uint8_t *p, uint8_t mid, uint32_t len, int counts)
{
	uint32_t bufs = RECV_BUFS - s->held; /* posted beyond what we acknowledge */
	p[0] = mid;
	p[1] = 0;
	p[2] = (uint8_t)(bufs >> 8), p[3] = (uint8_t)bufs;
	put32(p + 4, len);
	if (counts)
		++s->mseq;
	put32(p + 8, s->mseq);
	put32(p + 12, s->rx_mseq);
	s->freed = 0;
	++s->sent_by_mid[mid];
	if (counts)
		++s->framed;
	if (counts && carries_data(mid, len)) {
		s->last_data_mseq = s->mseq;
		s->sink_valid = 0; /* the peer's sink served this message or is void now */
	}
}

static uint32_t credits(const struct sdp_sock *s)
{
	uint32_t used = s->mseq - s->peer_mseqack;
	return s->peer_bufs > used ? s->peer_bufs - used : 0;
}

/* ---- completions (interrupt context) ----------------------------------- */
static void on_send(ti_cq_handle_t cq, ti_data_element_t *list)
{
	struct sdp_sock *s = sock_of_cq(cq);
	while (list) {
		ti_data_element_t *next = list->p_next_msg;
		list->p_next_msg = 0;
		if (list->status != TI_SUCCESS && s)
			s->failed = 1;
		if (list->status == TI_ERROR && s)
			s->broken = 1;
		if (s) {
			++s->sent_done;
			s->ops->res_pool_put(s->pool, list);
		}
		list = next;
	}
}

void sdp_zcopy_rdma_done(ti_cq_handle_t cq, ti_data_element_t *list)
{
	struct sdp_sock *s = sock_of_cq(cq);
	while (list) {
		ti_data_element_t *next = list->p_next_msg;
		list->p_next_msg = 0;
		if (s) {
			s->rdma_status = list->status;
			s->ops->res_pool_put(s->rdma_pool, list);
			s->rdma_done = 1;
		}
		list = next;
	}
}

static void on_recv(ti_cq_handle_t cq, ti_data_element_t *list)
{
	struct sdp_sock *s = sock_of_cq(cq);
	while (list) {
		ti_data_element_t *next = list->p_next_msg;
		const uint8_t *h = (const uint8_t *)list->local_data_desc[0].vaddr;
		list->p_next_msg = 0;
		if (!s || list->status != TI_SUCCESS || list->recv_byte_count < BSDH) {
			if (s)
				s->ops->res_pool_put(s->pool, list);
			list = next;
			continue;
		}
		s->peer_bufs = ((uint32_t)h[2] << 8) | h[3];
		s->peer_mseqack = get32(h + 12);
		s->rx_mseq = get32(h + 8);
		++s->recv_by_mid[h[0]];
		if (h[0] == SDP_MID_ABORT_CONN)
			s->reset = 1; /* what is queued is void: reads fail from now on */
		if ((h[0] == SDP_MID_DATA && list->recv_byte_count == BSDH) || h[0] == SDP_MID_ABORT_CONN ||
		    sdp_zcopy_control(s, h)) {
			/* credits only, an abort, or a zero-copy control message:
			 * taken at once, the buffer goes back */
			list->local_data_desc[0].byte_count = s->buf_size;
			if (s->ops->msg_recv(s->conn, list) != TI_SUCCESS)
				s->ops->res_pool_put(s->pool, list);
			++s->freed;
			list = next;
			continue;
		}
		list->ud_offset = BSDH;
		++s->held;
		if (s->rx_tail)
			s->rx_tail->p_next_msg = list;
		else
			s->rx_head = list;
		s->rx_tail = list;
		list = next;
	}
}

static void on_error(ti_err_rec_t *rec)
{
	struct sdp_sock *s = (struct sdp_sock *)rec->context;
	if (rec->code == TI_CANCELED)
		s->peer_closed = 1;
	else
		s->failed = 1;
	if (rec->code == TI_ERROR)
		s->broken = 1;
}

static void on_done(void *ctx)
{
	volatile int *flag = (volatile int *)ctx;
	*flag = 1;
}

static int wait_flag(volatile int *flag, uint64_t budget_us)
{
	uint64_t t;
	for (t = 0; !*flag && t < budget_us * 2; ++t)
		nicsim_sleep_ns(500);
	return *flag ? 0 : -1;
}

int sdp_wait(struct sdp_sock *s, volatile int *flag)
{
	uint64_t t;
	for (t = 0; !*flag && !s->failed && t < 40000000; ++t) {
		sdp_flush_credits(s);
		nicsim_sleep_ns(100);
	}
	return *flag ? 0 : -1;
}

/* ---- sockets ------------------------------------------------------------- */
static struct sdp_sock *sdp_open(uint32_t peer_ip, uint16_t local_port, uint16_t peer_port)
{
	struct sdp_sock *s = (struct sdp_sock *)nicsim_alloc(sizeof *s, 64);
	ti_inet_addr_t me, peer;
	uint32_t size, none = 0; /* RDMA elements name the user's buffers */
	if (!s)
		return 0;
	memset(s, 0, sizeof *s);
	s->ops = sdp_transport();
	s->buf_size = size = 8192;
	SET_IPV4_ADDR(me, 0x0a000000u + nicsim_node_id() + 1);
	SET_IPV4_ADDR(peer, peer_ip);
	if (!s->ops || s->ops->create_ti(&s->ti) != TI_SUCCESS ||
	    s->ops->create_endpoint(s->ti, &me, local_port, &s->me) != TI_SUCCESS ||
	    (peer_ip && s->ops->create_endpoint(s->ti, &peer, peer_port, &s->peer) != TI_SUCCESS) ||
	    s->ops->create_pd(s->ti, s->me, &s->pd) != TI_SUCCESS ||
	    s->ops->create_cq(s->ti, s->pd, RECV_BUFS + SEND_BUFS + 4, &s->cq) != TI_SUCCESS ||
	    s->ops->res_pool_create(s->ti, TI_RES_POOL_MSG, RECV_BUFS + SEND_BUFS, 1, &size, 0, &s->pool) !=
		    TI_SUCCESS ||
	    s->ops->res_pool_create(s->ti, TI_RES_POOL_RDMA, RDMA_ELEMENTS, 1, &none, 0, &s->rdma_pool) != TI_SUCCESS) {
		if (s->ti)
			s->ops->destroy_ti(s->ti, 0, 0);
		nicsim_free(s);
		return 0;
	}
	s->zcopy = sdp_zcopy_threshold();
	s->src_avail_timeout = sdp_src_avail_timeout_ns();
	s->next = sdp_node_state()->socks;
	sdp_node_state()->socks = s;
	return s;
}

/* The socket's transport instance goes (with it any connection or
 * attempt left), and the socket leaves the node's list. */
static void discard(struct sdp_sock *s)
{
	struct sdp_sock **pp;
	s->ops->destroy_ti(s->ti, on_done, (void *)&s->destroyed);
	wait_flag(&s->destroyed, 100000);
	for (pp = &sdp_node_state()->socks; *pp; pp = &(*pp)->next)
		if (*pp == s) {
			*pp = s->next;
			break;
		}
	nicsim_free(s);
}

static ti_conn_attr_t sdp_attr(void)
{
	ti_conn_attr_t a;
	memset(&a, 0, sizeof a);
	a.connect_request_timeout = 0xffffffffu;
	a.max_transfer_depth = SEND_BUFS;
	a.max_transfer_buffers = 1;
	a.max_transfer_size = 8192;
	a.max_recv_depth = RECV_BUFS;
	a.max_recv_buffers = 1;
	a.max_recv_size = 8192;
	a.reliable = TRUE;
	/* SDP's own credits (the BSDH's bufs) pace the sender: the transport's
	 * message flow control would only add its handshake and credit writes. */
	a.msg_flow_control = FALSE;
	a.auto_cq_rearm = TRUE;
	return a;
}

static ti_comp_info_t sdp_comp(struct sdp_sock *s)
{
	ti_comp_info_t c;
	memset(&c, 0, sizeof c);
	c.h_send_cq = c.h_recv_cq = s->cq;
	c.pfn_send_cb = on_send;
	c.pfn_recv_cb = on_recv;
	c.pfn_rdma_cb = sdp_zcopy_rdma_done;
	c.pfn_err_cb = on_error;
	c.p_err_context = s;
	return c;
}

static ti_data_element_t *take(struct sdp_sock *s, uint32_t n)
{
	ti_pool_response_t r;
	if (s->ops->res_pool_get(s->pool, n, FALSE, 0, 0, 0, &r) != TI_SUCCESS)
		return 0;
	return r.p_element_list;
}

static void client_reply(ti_conn_request_t *r)
{
	struct sdp_sock *s = (struct sdp_sock *)r->context;
	const uint8_t *h = (const uint8_t *)r->private_data;
	if (r->cb_type == CN_REPLY && r->status == TI_SUCCESS && h && h[0] == SDP_MID_HELLO_ACK) {
		ti_comp_info_t comp = sdp_comp(s);
		s->peer_bufs = ((uint32_t)h[2] << 8) | h[3];
		if (s->ops->accept(r, 0, &comp, take(s, RECV_BUFS)) == TI_SUCCESS)
			s->connected = 1;
	} else if (r->cb_type == CN_REPLY && r->status == TI_SUCCESS) {
		s->ops->reject(r);
	}
	s->replies = 1;
}

static void fill_hello(struct sdp_sock *s, uint32_t dst_ip, uint16_t port)
{
	uint8_t *hh = s->hello + BSDH;
	memset(s->hello, 0, sizeof s->hello);
	put_bsdh(s, s->hello, SDP_MID_HELLO, sizeof s->hello, 0);
	hh[0] = 0x22; /* SDP 2.2 */
	hh[1] = 0x40; /* IPv4 */
	hh[3] = 1;    /* max adverts: one SinkAvail outstanding */
	put32(hh + 4, s->buf_size);
	put32(hh + 8, s->buf_size);
	hh[12] = (uint8_t)(port >> 8), hh[13] = (uint8_t)port;
	put32(hh + 16 + 12, 0x0a000000u + nicsim_node_id() + 1);
	put32(hh + 32 + 12, dst_ip);
}

struct sdp_sock *sdp_connect(uint32_t ip, uint16_t port)
{
	struct sdp_sock *s = sdp_open(ip, (uint16_t)(0x8000 + nicsim_node_id()), port);
	ti_conn_attr_t attr = sdp_attr();
	ti_conn_info_t info;
	if (!s)
		return 0;
	fill_hello(s, ip, port);
	memset(&info, 0, sizeof info);
	info.src_ep = s->me;
	info.dst_ep = s->peer;
	info.pdh = s->pd;
	info.send_cqh = info.recv_cqh = s->cq;
	info.private_data = s->hello;
	info.private_data_len = sizeof s->hello;
	info.conn_request_cb = client_reply;
	info.context = s;
	if (s->ops->connect(s->ti, &attr, &info, &s->req, &s->conn) != TI_SUCCESS || wait_flag(&s->replies, 1000000) ||
	    !s->connected) {
		discard(s);
		return 0;
	}
	return s;
}

static void server_request(ti_conn_request_t *r)
{
	struct sdp_sock *s = (struct sdp_sock *)r->context;
	s->req = *r; /* accepted by sdp_accept, outside the callback */
	s->requests = 1;
}

struct sdp_sock *sdp_accept(uint16_t port)
{
	struct sdp_sock *s = sdp_open(0, port, 0);
	ti_conn_attr_t attr = sdp_attr();
	ti_conn_info_t info;
	ti_comp_info_t comp;
	const uint8_t *h;
	if (!s)
		return 0;
	memset(&info, 0, sizeof info);
	info.src_ep = s->me;
	info.pdh = s->pd;
	info.conn_request_cb = server_request;
	info.context = s;
	if (s->ops->listen(s->ti, &attr, &info, 0, &s->listen_conn) != TI_SUCCESS) {
		discard(s);
		return 0;
	}
	nicsim_barrier();
	if (wait_flag(&s->requests, 10000000)) {
		discard(s);
		return 0;
	}
	h = (const uint8_t *)s->req.private_data;
	if (!h || h[0] != SDP_MID_HELLO) {
		s->ops->reject(&s->req);
		discard(s);
		return 0;
	}
	s->peer_bufs = ((uint32_t)h[2] << 8) | h[3];
	memset(s->hello_ack, 0, sizeof s->hello_ack);
	put_bsdh(s, s->hello_ack, SDP_MID_HELLO_ACK, sizeof s->hello_ack, 0);
	s->hello_ack[BSDH] = 0x22;
	s->hello_ack[BSDH + 3] = 1; /* max adverts */
	put32(s->hello_ack + BSDH + 4, s->buf_size);
	s->req.private_data = s->hello_ack;
	s->req.private_data_len = sizeof s->hello_ack;
	comp = sdp_comp(s);
	if (s->ops->accept(&s->req, 0, &comp, take(s, RECV_BUFS)) != TI_SUCCESS) {
		discard(s);
		return 0;
	}
	s->conn = s->req.conn_handle;
	s->connected = 1;
	s->ops->disconnect(s->listen_conn, 0, 0);
	s->listen_conn = 0;
	return s;
}

ti_data_element_t *sdp_take_tx(struct sdp_sock *s)
{
	ti_data_element_t *e = 0;
	uint64_t t;
	for (t = 0; (!credits(s) || !(e = take(s, 1))) && t < 20000000; ++t) {
		if (s->failed || s->reset)
			return 0;
		nicsim_sleep_ns(200);
	}
	return e;
}

void sdp_frame(struct sdp_sock *s, ti_data_element_t *e, uint8_t mid, uint32_t len)
{
	put_bsdh(s, (uint8_t *)e->local_data_desc[0].vaddr, mid, len, 1);
	e->local_data_desc[0].byte_count = len;
	e->num_io_bufs = 1;
	e->msg_opt = TI_OPT_SIGNALED | TI_OPT_SOLICITED;
	e->oob_data_len = 0;
	e->p_next_msg = 0;
}

/* Sends one message of `len` payload bytes; mid Data with payload, or an
 * empty Data (credit advertisement), or DisConn. */
static int send_message(struct sdp_sock *s, uint8_t mid, const void *data, uint32_t len)
{
	ti_data_element_t *e = sdp_take_tx(s);
	if (!e)
		return -1;
	if (len) {
		sdp_charge_copy(len);
		memcpy((uint8_t *)e->local_data_desc[0].vaddr + BSDH, data, len);
	}
	sdp_frame(s, e, mid, BSDH + len);
	if (s->ops->msg_send(s->conn, e) > TI_PENDING) {
		s->ops->res_pool_put(s->pool, e);
		return -1;
	}
	return 0;
}

void sdp_flush_credits(struct sdp_sock *s)
{
	if (s->freed >= RECV_BUFS / 2 && credits(s) && !s->failed)
		send_message(s, SDP_MID_DATA, 0, 0);
}

int sdp_send(struct sdp_sock *s, const void *buf, size_t len)
{
	const uint8_t *p = (const uint8_t *)buf;
	const uint32_t chunk = s->buf_size - BSDH;
	while (len) {
		uint32_t n = len < chunk ? (uint32_t)len : chunk;
		if (s->reset)
			return -1;
		if (s->zcopy && len >= s->zcopy && !s->copy_left) {
			long sent = sdp_zcopy_send(s, p, len);
			if (sent < 0 || (sent == 0 && !s->copy_left))
				return -1;
			p += sent;
			len -= (size_t)sent;
			continue;
		}
		if (send_message(s, SDP_MID_DATA, p, n))
			return -1;
		p += n;
		len -= n;
		s->copy_left = s->copy_left > n ? s->copy_left - n : 0;
	}
	return 0;
}

/* Reposts a drained buffer; advertises when half the buffers came back. */
void sdp_repost(struct sdp_sock *s, ti_data_element_t *e)
{
	--s->held;
	s->rx_head = e->p_next_msg;
	if (!s->rx_head)
		s->rx_tail = 0;
	e->p_next_msg = 0;
	e->local_data_desc[0].byte_count = s->buf_size;
	if (s->ops->msg_recv(s->conn, e) != TI_SUCCESS)
		s->ops->res_pool_put(s->pool, e);
	++s->freed;
	sdp_flush_credits(s);
}
#define repost sdp_repost

/* Copies from the Data message at the head; 0 for an empty one (credits
 * only: reposted). */
static long copy_data(struct sdp_sock *s, ti_data_element_t *e, void *buf, size_t cap)
{
	const uint8_t *h = (const uint8_t *)e->local_data_desc[0].vaddr;
	uint32_t n;
	if (e->ud_offset >= e->recv_byte_count) {
		repost(s, e);
		return 0;
	}
	n = e->recv_byte_count - e->ud_offset;
	if (n > cap)
		n = (uint32_t)cap;
	sdp_charge_copy(n);
	memcpy(buf, h + e->ud_offset, n);
	e->ud_offset += n;
	if (e->ud_offset >= e->recv_byte_count)
		repost(s, e);
	return (long)n;
}

/* What the message at the head gives the reader: bytes, 0 when it had
 * none for it (look again), -1 on failure. */
static long take_head(struct sdp_sock *s, ti_data_element_t *e, void *buf, size_t cap)
{
	const uint8_t *h = (const uint8_t *)e->local_data_desc[0].vaddr;
	const uint8_t mid = h[0];
	if (mid == SDP_MID_RDMA_WR_COMPL && s->sink_out) {
		/* The peer wrote into our sink, then said how much. */
		const uint32_t n = get32(h + BSDH);
		sdp_zcopy_void_sink(s);
		repost(s, e);
		return n <= cap ? (long)n : -1;
	}
	if (s->sink_out && (mid == SDP_MID_DISCONN || mid == SDP_MID_SRC_AVAIL ||
			    (mid == SDP_MID_DATA && e->recv_byte_count > BSDH)))
		sdp_zcopy_void_sink(s); /* the peer sent its data another way */
	if (mid == SDP_MID_DISCONN) {
		s->peer_closed = 1;
		repost(s, e);
		return 0;
	}
	if (mid == SDP_MID_SRC_AVAIL)
		return sdp_zcopy_read(s, e, buf, cap);
	if (mid == SDP_MID_DATA)
		return copy_data(s, e, buf, cap);
	repost(s, e); /* nothing for the reader */
	return 0;
}

long sdp_recv(struct sdp_sock *s, void *buf, size_t cap)
{
	uint64_t t;
	for (t = 0; t < 40000000; ++t) {
		ti_data_element_t *e = s->rx_head;
		long n;
		if (s->reset) {
			sdp_zcopy_void_sink(s);
			return -1;
		}
		if (!e) {
			if (s->failed || s->peer_closed) {
				sdp_zcopy_void_sink(s);
				return s->broken ? -1 : 0; /* a failure is not an end */
			}
			sdp_zcopy_offer_sink(s, buf, cap);
			sdp_flush_credits(s);
			nicsim_sleep_ns(100);
			continue;
		}
		n = take_head(s, e, buf, cap);
		if (n != 0 || s->peer_closed)
			return n;
	}
	sdp_zcopy_void_sink(s);
	return -1;
}

int sdp_close(struct sdp_sock *s)
{
	int rc = 0;
	uint64_t t;
	if (!s)
		return -1;
	if (s->conn && !s->peer_closed && !s->failed && !s->reset)
		rc = send_message(s, SDP_MID_DISCONN, 0, 0);
	/* Everything sent, DisConn last, reaches the peer before the DREQ. */
	for (t = 0; s->sent_done < s->framed && !s->failed && t < 1000000; ++t)
		nicsim_sleep_ns(100);
	if (s->conn && s->ops->disconnect(s->conn, on_done, (void *)&s->disconnected) == TI_SUCCESS)
		wait_flag(&s->disconnected, 100000);
	sdp_zcopy_release(s);
	discard(s);
	return rc;
}

int sdp_abort(struct sdp_sock *s)
{
	int rc = 0;
	uint64_t t;
	if (!s)
		return -1;
	/* Without a credit the peer hears the disconnect alone (an orderly end). */
	if (s->conn && !s->peer_closed && !s->failed && !s->reset && credits(s))
		rc = send_message(s, SDP_MID_ABORT_CONN, 0, 0);
	/* The abort must reach the peer before the DREQ flushes the QP. */
	for (t = 0; s->sent_done < s->framed && !s->failed && t < 1000000; ++t)
		nicsim_sleep_ns(100);
	if (s->conn && s->ops->disconnect(s->conn, on_done, (void *)&s->disconnected) == TI_SUCCESS)
		wait_flag(&s->disconnected, 100000);
	sdp_zcopy_release(s);
	discard(s);
	return rc;
}

int sdp_error(const struct sdp_sock *s)
{
	if (!s)
		return 0;
	return s->reset ? SDP_ECONNRESET : s->broken ? SDP_ETIMEDOUT : 0;
}

uint32_t sdp_messages_sent(const struct sdp_sock *s, uint8_t mid) { return s ? s->sent_by_mid[mid] : 0; }
uint32_t sdp_messages_received(const struct sdp_sock *s, uint8_t mid) { return s ? s->recv_by_mid[mid] : 0; }

uint32_t sdp_socket_count(void)
{
	struct sdp_node *n = sdp_node_state();
	const struct sdp_sock *s;
	uint32_t count = 0;
	for (s = n ? n->socks : 0; s; s = s->next)
		++count;
	return count;
}
