/*
 * SDP stream sockets over the SDP Transport Interface (sdp_ti.h): the
 * socket calls nicsim programs use, and the wire protocol's constants.
 */
#ifndef NICSIM_SDP_H
#define NICSIM_SDP_H

#include <stddef.h>
#include <stdint.h>
#include <sdp_ti.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The transport SDP uses on this node (loads the IB transport on a node
 * with an HCA, the Elan transport on one with an Elan, if none
 * registered yet); NULL without one. */
ti_ops_t* sdp_transport(void);

/* A connected SDP socket (stream semantics, one per connection). */
struct sdp_sock;
/* Connects to ip (host order) and port; blocks until established. NULL on
 * failure (no listener, rejected, unreachable). */
struct sdp_sock* sdp_connect(uint32_t ip, uint16_t port);
/* Listens on port, reaches the workload's barrier, and accepts the first
 * connection (blocking); the listen ends with it. */
struct sdp_sock* sdp_accept(uint16_t port);
/* Sends all of buf (blocking while the peer has no buffers); 0 or -1. */
int sdp_send(struct sdp_sock* s, const void* buf, size_t len);
/* Receives up to cap bytes (blocking); bytes received, 0 once the peer
 * closed, -1 on failure (the peer's abort, the transport's failure). */
long sdp_recv(struct sdp_sock* s, void* buf, size_t cap);
/* DisConn, disconnect, and every transport resource of the socket released. */
int sdp_close(struct sdp_sock* s);
/* An abortive close (a TCP close with SO_LINGER 0): AbortConn instead of
 * DisConn, then as sdp_close. The peer's sdp_recv and sdp_send fail (-1)
 * from the abort's arrival on, sdp_error saying SDP_ECONNRESET; what it had
 * not read yet is lost. 0, or -1 when the AbortConn could not be sent. */
int sdp_abort(struct sdp_sock* s);
/* Linux's ECONNRESET: the peer aborted the connection. */
#define SDP_ECONNRESET 104
/* Linux's ETIMEDOUT: the transport gave up on the connection (a transfer
 * completed TI_ERROR: its retries ran out). sdp_recv and sdp_send fail
 * (-1) from then on, once sdp_recv has returned what arrived before. */
#define SDP_ETIMEDOUT 110
/* The socket's error: SDP_ECONNRESET after the peer's abort, SDP_ETIMEDOUT
 * after the transport failed the connection, else 0. */
int sdp_error(const struct sdp_sock* s);
/* Messages of SDP message id `mid` this socket sent (0xff Data, 0xfe
 * SrcAvail, 0xfd SinkAvail, 0x05 RdmaWrCompl, 0x06 RdmaRdCompl, ...). */
uint32_t sdp_messages_sent(const struct sdp_sock* s, uint8_t mid);
/* Messages of SDP message id `mid` this socket received. */
uint32_t sdp_messages_received(const struct sdp_sock* s, uint8_t mid);
/* The calling node's open sockets (each node keeps its own). */
uint32_t sdp_socket_count(void);

#ifdef __cplusplus
}
#endif

#endif /* NICSIM_SDP_H */
