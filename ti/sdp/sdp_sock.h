/*
 * Inside SDP sockets: the socket's state and the wire protocol's message
 * ids and header sizes, shared by the buffered path (sdp_socket.c) and
 * the zero-copy path (sdp_zcopy.c).
 *
 * Message ids and headers as the SDP specification (InfiniBand
 * Architecture Annex A4) has them: every message starts with the 16-byte
 * BSDH (mid, flags, bufs, len, mseq, mseqack; big-endian); SrcAvail's
 * SrcAH is len, rkey, vaddr (16 bytes), SinkAvail's SinkAH len, rkey,
 * vaddr, non-discard (20 bytes), RdmaWrCompl's RWCH and RdmaRdCompl's
 * RRCH one 4-byte length. AbortConn, SendSm and SrcAvailCancel are a
 * BSDH alone.
 */
#ifndef NICSIM_SDP_SOCK_H
#define NICSIM_SDP_SOCK_H

#include <stdint.h>
#include <sdp_ti.h>

enum {
  SDP_MID_HELLO = 0x00,
  SDP_MID_HELLO_ACK = 0x01,
  SDP_MID_DISCONN = 0x02,
  SDP_MID_ABORT_CONN = 0x03,
  SDP_MID_SEND_SM = 0x04,
  SDP_MID_RDMA_WR_COMPL = 0x05,
  SDP_MID_RDMA_RD_COMPL = 0x06,
  SDP_MID_SRC_AVAIL_CANCEL = 0x08,
  SDP_MID_SINK_AVAIL = 0xfd,
  SDP_MID_SRC_AVAIL = 0xfe,
  SDP_MID_DATA = 0xff
};
enum { BSDH = 16, HH = 76, HAH = 8, SRCAH = 16, SINKAH = 20, RWCH = 4, RRCH = 4 };
enum { RECV_BUFS = 16, SEND_BUFS = 16, RDMA_ELEMENTS = 2, REG_CACHE = 4 };

/* A registration of a user buffer, kept for the next transfer over it. */
struct sdp_reg {
  const void* buf;
  uint32_t len;
  ti_mem_handle_t mem;
  ti_rdma_desc_t desc;
  uint64_t last_use;
};

struct sdp_sock {
  ti_ops_t* ops;
  ti_handle_t ti;
  ti_endpoint_handle_t me, peer;
  ti_pd_handle_t pd;
  ti_cq_handle_t cq;
  ti_res_pool_handle_t pool, rdma_pool;
  ti_conn_handle_t conn, listen_conn;
  ti_conn_request_t req;
  volatile int requests, replies, connected, destroyed, disconnected, peer_closed, failed;
  volatile int reset;  /* the peer aborted (AbortConn): reads and writes fail with ECONNRESET */
  volatile int broken; /* the transport failed the connection (TI_ERROR): reads and writes fail, ETIMEDOUT */
  uint32_t buf_size;
  uint32_t mseq, rx_mseq;           /* last sent, last received */
  uint32_t peer_bufs, peer_mseqack; /* from the peer's last BSDH */
  uint32_t held;                    /* received messages not yet reposted */
  uint32_t freed;                   /* buffers reposted since our last message */
  uint32_t last_data_mseq;          /* mseq of our last data-carrying message */
  ti_data_element_t *rx_head, *rx_tail;
  uint8_t hello[92], hello_ack[BSDH + HAH];
  /* zero-copy */
  uint64_t zcopy;          /* threshold in bytes (0: never) */
  volatile int sink_valid; /* the peer's SinkAvail, usable by our next data */
  uint32_t sink_len, sink_rkey;
  uint64_t sink_vaddr;
  int sink_out;                   /* our SinkAvail is outstanding */
  struct sdp_reg regs[REG_CACHE]; /* user buffers registered (least recently used goes) */
  uint64_t reg_clock;
  volatile uint32_t rd_compl; /* bytes the peer read of our SrcAvail */
  volatile int send_sm;       /* the peer answered our SrcAvailCancel: it reads no more of it */
  uint64_t src_avail_timeout; /* ns a SrcAvail waits for its reader before it is cancelled */
  size_t copy_left;           /* bytes of a cancelled SrcAvail still to send by copy */
  volatile int rdma_done;     /* our RDMA element came back */
  ti_status_t rdma_status;
  uint32_t sent_by_mid[256];   /* messages sent, by mid (for tests) */
  uint32_t recv_by_mid[256];   /* messages received, by mid (for tests) */
  uint32_t framed;             /* messages framed (all posted unless failed) */
  volatile uint32_t sent_done; /* their send completions */
  struct sdp_sock* next;
};

/* SDP's state on the calling node (kept by its host: every simulated node
 * has its own); NULL outside a node. */
struct sdp_node {
  ti_ops_t* ops; /* the transport registered with SDP here */
  ti_event_cb_t notify;
  struct sdp_sock* socks; /* this node's sockets, linked by next */
};
struct sdp_node* sdp_node_state(void);

/* The zero-copy threshold of the calling node (host.sdp.zcopy_threshold). */
uint64_t sdp_zcopy_threshold(void);
/* How long a SrcAvail waits for its reader (host.sdp.src_avail_timeout), ns. */
uint64_t sdp_src_avail_timeout_ns(void);
/* Charges the node's CPU for copying `bytes` (host.cost.sdp_copy). */
void sdp_charge_copy(uint64_t bytes);

/* ---- shared by the two paths (sdp_socket.c) ---- */
void sdp_put32(uint8_t* p, uint32_t v);
uint32_t sdp_get32(const uint8_t* p);
void sdp_put64(uint8_t* p, uint64_t v);
uint64_t sdp_get64(const uint8_t* p);
/* Waits for a send credit and a buffer; NULL once the connection failed. */
ti_data_element_t* sdp_take_tx(struct sdp_sock* s);
/* Writes the BSDH of a message of `len` bytes (header included) into e. */
void sdp_frame(struct sdp_sock* s, ti_data_element_t* e, uint8_t mid, uint32_t len);
/* Sends an empty Data when half the receive buffers were reposted since
 * our last message (credits for a peer that would otherwise wait). */
void sdp_flush_credits(struct sdp_sock* s);
/* Reposts the head of the receive queue. */
void sdp_repost(struct sdp_sock* s, ti_data_element_t* e);
/* Waits in simulated time until *flag or failure; 0 when *flag. */
int sdp_wait(struct sdp_sock* s, volatile int* flag);

/* ---- zero-copy (sdp_zcopy.c) ---- */
/* Sends from buf by RDMA: into the peer's sink or read by the peer from a
 * SrcAvail. Bytes sent (at most len), -1 on failure. A SrcAvail its reader
 * left unread past the timeout is cancelled (SrcAvailCancel); when the
 * reader answers SendSm, the bytes it did not read are left to the copy
 * path (copy_left) and the bytes it read are returned. */
long sdp_zcopy_send(struct sdp_sock* s, const void* buf, size_t len);
/* Advertises buf as a sink (SinkAvail) when nothing is queued. */
void sdp_zcopy_offer_sink(struct sdp_sock* s, void* buf, size_t cap);
/* Withdraws our sink: the peer sent data another way. */
void sdp_zcopy_void_sink(struct sdp_sock* s);
/* Deregisters the user buffers still registered (close). */
void sdp_zcopy_release(struct sdp_sock* s);
/* Reads from the SrcAvail at the head into buf; bytes, -1 on failure. A
 * SrcAvailCancel queued behind it drops it instead (SendSm answers, 0). */
long sdp_zcopy_read(struct sdp_sock* s, ti_data_element_t* e, void* buf, size_t cap);
/* A control message the receive callback takes at once (RdmaRdCompl,
 * SinkAvail, SendSm): nonzero when it was one. Interrupt context. */
int sdp_zcopy_control(struct sdp_sock* s, const uint8_t* h);
/* The RDMA callback: the element back to its pool, rdma_done set. */
void sdp_zcopy_rdma_done(ti_cq_handle_t cq, ti_data_element_t* list);

#endif /* NICSIM_SDP_SOCK_H */
