/* The seed's ib_cma.h exactly as the proposal wrote it (seed/ib_cma.h),
 * after the kernel verbs it is written against, compiles as C99 with
 * -pedantic -Werror, and its names mean what the kernel's do. */
#include <rdma/ib_verbs.h>
#include <linux/in.h>
#include "seed/ib_cma.h"

static void on_event(enum ib_cma_event event, void *context, void *private_data)
{
	(void)event;
	(void)context;
	(void)private_data;
}

static void on_request(union ib_cma_id *cma_id, void *private_data, void *context)
{
	(void)cma_id;
	(void)private_data;
	(void)context;
}

int cm_headers_check_c99(struct ib_qp *qp, struct ib_device *dev);
int cm_headers_check_c99(struct ib_qp *qp, struct ib_device *dev)
{
	struct sockaddr_in dst;
	struct ib_qp_attr attr;
	struct ib_cma_conn conn;
	union ib_cma_id id;
	ib_cma_listen_handler lh = on_request;
	struct ib_send_wr wr;
	struct ib_wc wc;
	typedef char be64_is_8_bytes[sizeof(__be64) == 8 ? 1 : -1];
	typedef char sockaddr_in_fits[sizeof(struct sockaddr_in) == sizeof(struct sockaddr) ? 1 : -1];
	typedef char qps_err_is_6[IB_QPS_ERR == 6 ? 1 : -1];
	typedef char wc_recv_is_128[IB_WC_RECV == 128 ? 1 : -1];
	typedef char qp_dest_qpn_bit[IB_QP_DEST_QPN == (1 << 20) ? 1 : -1];
	be64_is_8_bytes a;
	sockaddr_in_fits b;
	qps_err_is_6 c;
	wc_recv_is_128 d;
	qp_dest_qpn_bit e;
	(void)a;
	(void)b;
	(void)c;
	(void)d;
	(void)e;
	dst.sin_family = AF_INET;
	dst.sin_port = 0;
	dst.sin_addr.s_addr = 0;
	attr.qp_state = IB_QPS_INIT;
	attr.qp_access_flags = IB_ACCESS_REMOTE_WRITE;
	conn.qp = qp;
	conn.qp_attr = &attr;
	conn.dst_ip = (struct sockaddr *)&dst;
	conn.service_id = 0;
	conn.context = dev;
	conn.cma_event_handler = on_event;
	conn.private_data = 0;
	conn.private_data_len = 0;
	conn.timeout = 0;
	conn.qos = IB_QOS_LOW_LATENCY;
	conn.connect_flags = IB_CONNECT_DEFAULT_FLAG;
	wr.opcode = IB_WR_SEND;
	wr.send_flags = IB_SEND_SIGNALED;
	wc.opcode = IB_WC_RECV;
	(void)wr;
	(void)wc;
	if (ib_cma_connect(&conn, &id))
		return 1;
	return ib_cma_sid_listen(dev, conn.service_id, 0, lh, &id) + ib_cma_disconnect(qp, &id) +
	       (int)IB_CMA_EVENT_UNREACHABLE;
}
