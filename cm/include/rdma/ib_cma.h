/*
 * Copyright (c) 2005 Voltaire Inc.  All rights reserved.
 *
 * This Software is licensed under one of the following licenses:
 *
 * 1) under the terms of the "Common Public License 1.0" a copy of which is
 *    available from the Open Source Initiative, see
 *    http://www.opensource.org/licenses/cpl.php.
 *
 * 2) under the terms of the "The BSD License" a copy of which is
 *    available from the Open Source Initiative, see
 *    http://www.opensource.org/licenses/bsd-license.php.
 *
 * 3) under the terms of the "GNU General Public License (GPL) Version 2" a
 *    copy of which is available from the Open Source Initiative, see
 *    http://www.opensource.org/licenses/gpl-license.php.
 *
 * Licensee has the right to choose one of the above licenses.
 *
 * Redistributions of source code must retain the above copyright
 * notice and one of the license notices.
 *
 * Redistributions in binary form must reproduce both the above copyright
 * notice, one of the license notices in the documentation
 * and/or other materials provided with the distribution.
 *
 */

/*
 *  This header file as a preliminary proposition for a connection manager
 *  abstraction layer (cma) for IB and iwarp
 *  - there is an assumption that iwarp uses the same openib qp terminology in
 *    the rest of the verbs, and the only place needs abstraction is the cm.
 *  - This proposition assumes that the address translation is done in the cma
 *    layer.
 *  - The cma also modifies the qp states to init/rtr/rts and error as needed.
 *  - for calling accept/reject or disconnect on the passive side you need to
 *    use  the cma handle accepted in ib_cma_listen cb.
 *  - cma_id is created when calling connect or listen and destroyed when
 *    accepting disconnected/rejected/unreachable events on either active
 *    side (connect cb) or passive side (accept cb)
 *
 * nicsim's implementation (docs/cm.md has the whole picture):
 *  - Include <rdma/ib_verbs.h> first (struct ib_device, ib_qp, ib_qp_attr).
 *  - Address translation happens on the fabric: the CMA asks the subnet
 *    administrator (SA, program "ib_sa" on the subnet manager's node) for
 *    the GID registered for dst_ip (a ServiceRecord, as DAPL's ATS did) and
 *    for a PathRecord to it, and keeps both in a per-node cache.
 *  - Handlers run in the node's interrupt context; every call below may be
 *    made there (the work is done by the node's CM thread).
 *  - A cma_id is valid from the call that created it (ib_cma_connect,
 *    ib_cma_sid_listen, or the listen handler for the passive side) until
 *    its final event (REJECTED, DISCONNECTED, UNREACHABLE) has been
 *    delivered, ib_cma_reject, or ib_cma_sid_destroy. After that every
 *    call taking it returns -EINVAL.
 *  - Errors are negative errno values (errno.h numbering), listed per call.
 */

#ifndef IB_CMA_H
#define IB_CMA_H

#include <linux/socket.h>

#ifdef __cplusplus
extern "C" {
#endif

/* errno values the calls return (negated). */
#ifndef EINVAL
#define EINVAL 22
#endif
#ifndef ENODEV
#define ENODEV 19
#endif
#ifndef ENOMEM
#define ENOMEM 12
#endif
#ifndef EBUSY
#define EBUSY 16
#endif
#ifndef ENOTCONN
#define ENOTCONN 107
#endif
#ifndef EOPNOTSUPP
#define EOPNOTSUPP 95
#endif

/* Private data each CM message carries (IBA 12.6); longer is -EINVAL. */
#define IB_CMA_REQ_PRIVATE_DATA_SIZE 92
#define IB_CMA_REP_PRIVATE_DATA_SIZE 196
#define IB_CMA_REJ_PRIVATE_DATA_SIZE 148

enum ib_cma_event {
	IB_CMA_EVENT_ESTABLISHED,
	IB_CMA_EVENT_REJECTED,
	IB_CMA_EVENT_DISCONNECTED,
	IB_CMA_EVENT_UNREACHABLE
};

enum ib_qos {
	IB_QOS_BEST_EFFORT = 0,
	IB_QOS_HIGH_THROUGHPUT = (1 << 0),
	IB_QOS_LOW_LATENCY = (1 << 1),
	IB_QOS_ECONOMY = (1 << 2),
	IB_QOS_PREMIUM = (1 << 3)
};

enum ib_connect_flags {
	IB_CONNECT_DEFAULT_FLAG = 0x00,
	IB_CONNECT_MULTIPATH_FLAG = 0x01
};

/*
 * for ib_cma_get_src_ip - ib_cma_id will have to include
 * the path data received in the request handler
 *
 * nicsim: cm_id is an opaque handle (struct ib_cm_id is never defined);
 * iwarp_id is unused.
 */
union ib_cma_id {
	struct ib_cm_id *cm_id;
	u32 iwarp_id;
};

struct ib_device;
struct ib_qp;
struct ib_qp_attr;

/* src_ip: a struct sockaddr_in (AF_INET), or NULL when the SA knows no
 * address for the initiator's GID. */
typedef void (*ib_cma_rarp_handler)(struct sockaddr *src_ip, void *context);
/* Passive side after ib_cma_accept: ESTABLISHED when the RTU arrives, then
 * DISCONNECTED; UNREACHABLE when no RTU came after all REP retries. */
typedef void (*ib_cma_ac_handler)(enum ib_cma_event event, void *context);
/* Active side. private_data: the REP's (ESTABLISHED, 196 bytes), the REJ's
 * (REJECTED, 148 bytes), the DREQ's (DISCONNECTED by the peer, 220
 * bytes), NULL otherwise. Valid during the call only. */
typedef void (*ib_cma_event_handler)(enum ib_cma_event event, void *context,
				     void *private_data);
/* A connection request: cma_id is the passive side's new handle (valid
 * during the call; copy the union), private_data the REQ's 92 bytes. The
 * handler calls (now or later) ib_cma_accept or ib_cma_reject. */
typedef void (*ib_cma_listen_handler)(union ib_cma_id *cma_id,
				      void *private_data, void *context);

struct ib_cma_conn {
	struct ib_qp *qp;
	struct ib_qp_attr *qp_attr;
	struct sockaddr *dst_ip;
	__be64 service_id;
	void *context;
	ib_cma_event_handler cma_event_handler;
	const void *private_data;
	u8 private_data_len;
	u32 timeout;
	enum ib_qos qos;
	enum ib_connect_flags connect_flags;
};


/**
 * ib_cma_get_device - Returns the device to be used according to
 *   the destination ip address (this can be detemined according
 *   to the local routing table). Call this function before
 *   creating the qp. If using link-local IPv6 addresses
 * @remote_address: The destination address for connection
 * @device: The device to use (returned by the function)
 *
 * nicsim: every AF_INET destination routes through the node's HCA.
 * Returns 0, -EINVAL (NULL argument, family not AF_INET), -ENODEV (no HCA
 * on this node).
 */
int ib_cma_get_device(struct sockaddr *remote_address,
		      struct ib_device **device);


/**
 * ib_cma_connect - this is the connect request function, called by
 *   the active side. The consumer registers an upcall that will be
 *   initiated by the cma with an appropriate connection event
 *   notification (established/rejected/disconnected etc)
 * @cma_conn: This structure contains the following connection parameters:
 *   @qp: qp for establishing the connection
 *   @qp_attr: only relevant attributes are used
 *   @dst_ip: destination ip address
 *   @service_id: destination service id (port)
 *   @context: context to be returned in the callback
 *   @cma_event_handler: the upcall function for the active side
 *   @private_data: private data to be received at the listener upcall
 *   @private_data_len: private data length (max 255)
 *   @timeout:
 *   @qos: Quality os service for the rc
 *   @connect_flags: default or multipath connection
 * @cma_id: This returned handle is a union (different in ib and iwarp)
 *   in ib - it is the cm_id.
 *
 * nicsim: qp is an IB_QPT_RC QP in RESET; the CMA moves it to INIT, RTR,
 * RTS. qp_attr (may be NULL) supplies qp_access_flags, max_rd_atomic,
 * max_dest_rd_atomic, timeout, retry_cnt, rnr_retry, min_rnr_timer.
 * private_data_len is at most IB_CMA_REQ_PRIVATE_DATA_SIZE (92).
 * timeout: milliseconds the CM waits for each reply to its REQ (0: the
 * node's cm.response_timeout); the REQ's Remote CM Response Timeout is the
 * smallest exponent covering it, and the REQ is sent 1 + cm.max_retries
 * times. qos: any combination of the defined bits (the fabric has one data
 * virtual lane: every class gets the SA's path). An address nobody
 * registered, a dead node or a down link end in IB_CMA_EVENT_UNREACHABLE.
 * Returns 0, -EINVAL (NULL arguments, a QP not RC/RESET or not this node's,
 * private data too long, family not AF_INET, undefined qos bits),
 * -EOPNOTSUPP (IB_CONNECT_MULTIPATH_FLAG: no alternate paths), -ENODEV,
 * -ENOMEM.
 */
int ib_cma_connect(struct ib_cma_conn *cma_conn,
		   union ib_cma_id *cma_id);


/**
 * ib_cma_disconnect - this function disconnects the rc. It can be
 *   called, by either the passive or active side
 * @qp: the connected qp to disconnect
 * @cma_id: On the active side- this handle is the one returned
 *   when ib_cma_connect was called.
 *   On the passive side- this handle was accepted in cma_listen callback
 *
 * nicsim: sends a DREQ and moves the QP to ERROR; both sides get
 * IB_CMA_EVENT_DISCONNECTED (this side when the DREP arrives or the DREQ
 * retries run out). Returns 0, -EINVAL (unknown or destroyed id, qp not
 * the connection's), -ENOTCONN (not established, or already
 * disconnecting).
 */
int ib_cma_disconnect(struct ib_qp *qp, union ib_cma_id *cma_id);


/**
 * ib_cma_sid_listen - this function is called by the passive side. It is
 *   listening on a the specified port (ib service id) for incomming
 *   connection requests
 * @device: ? need to resolve this issue
 * @service_id: service id (port) to listen on
 * @context: user context to be returned in the callback
 * @cm_listen_handler: the listen callback
 * @cma_id: cma handle for the passive side
 *
 * nicsim: device NULL listens on every device of the node; otherwise it
 * must be the node's device (from ib_cma_get_device). Returns 0, -EINVAL
 * (NULL handler or cma_id, a device of no HCA here), -EBUSY (the service
 * id already has a listener on this node), -ENODEV.
 */
int ib_cma_sid_listen(struct ib_device *device, __be64 service_id,
		      void *context, ib_cma_listen_handler cm_listen_handler,
		      union ib_cma_id *cma_id);


/**
 * ib_cma_sid_destroy - this functionis is called on the passive side, to
 *   stop listenning on a certain sevice id
 * @cma_id: the same cma handle received when ib_cma_sid_listen was called
 *
 * nicsim: connections already requested live on. Returns 0 or -EINVAL
 * (not a live listener).
 */
int ib_cma_sid_destroy(union ib_cma_id *cma_id);


/**
 * ib_cma_accept - call on the passive side to accept a connection request
 * @cma_id: this handle was accepted in cma_listen callback
 * @qp: the connection's qp
 * @private_data: private data to send back to the initiator
 * @private_data_len: private data length
 * @context: user context to be returned in the callback
 * @cm_accept_handler: the cma accept callback - triggered when RTU ack
 *   received
 *
 * nicsim: qp is an IB_QPT_RC QP in RESET on this node; the CMA moves it to
 * INIT and RTR before the REP leaves, to RTS when the RTU arrives.
 * Returns 0, -EINVAL (unknown or destroyed id, a listener's id, an id
 * already accepted or rejected, a bad qp, private_data_len above
 * IB_CMA_REP_PRIVATE_DATA_SIZE, NULL handler).
 */
int ib_cma_accept(union ib_cma_id *cma_id, struct ib_qp *qp,
		  const void *private_data, u8 private_data_len,
		  void *context, ib_cma_ac_handler cm_accept_handler);

/**
 * ib_cma_reject - call on the passive side to reject a connection request.
 *   This call destroys the cma_id, hence when the active side accepts
 *   the reject the cma_id is already destroyed.
 * @cma_id: this handle was accepted in cma_listen callback
 * @private_data: private data to send back to the initiator
 * @private_data_len: private data length
 *
 * nicsim: the REJ carries reason 28 (consumer reject). Returns 0, -EINVAL
 * (unknown or destroyed id, already accepted, private_data_len above
 * IB_CMA_REJ_PRIVATE_DATA_SIZE).
 */
int ib_cma_reject(union ib_cma_id *cma_id, const void *private_data,
		  u8 private_data_len);


/**
 * ib_cma_get_src_ip - this function performs "rarp", asynchronicly
 *   from cma_id to src ip
 * @cma_id: the cma_id will have to include the path data received
 *   in the request handler
 * @src_ip: source ip of the initiator
 *
 * nicsim: the REQ's primary local port GID is looked up at the SA
 * (ServiceRecord by GID); rarp_handler runs in interrupt context with the
 * answer. Returns 0 or -EINVAL (not a passive-side id, NULL handler).
 */
int ib_cma_get_src_ip(union ib_cma_id *cma_id,
		      ib_cma_rarp_handler rarp_handler,
		      void *context);

#ifdef __cplusplus
}
#endif

#endif /* IB_CMA_H */
