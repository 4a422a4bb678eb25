/* sdp_ti.h compiles as C99 with -pedantic -Werror, and its types are laid
 * out as the interface writes them. */
#include <sdp_ti.h>

static void on_event(const ti_event_t event, const void *p_data, const void *p_context)
{
	(void)event;
	(void)p_data;
	(void)p_context;
}

static void on_request(ti_conn_request_t *p_conn_req)
{
	p_conn_req->status = TI_SUCCESS;
}

int ti_headers_check_c99(ti_ops_t *ops, ti_handle_t h_ti);
int ti_headers_check_c99(ti_ops_t *ops, ti_handle_t h_ti)
{
	ti_inet_addr_t addr;
	ti_conn_info_t info;
	ti_conn_attr_t attr;
	ti_conn_request_t req;
	ti_data_element_t de;
	ti_local_data_desc_t ld;
	ti_conn_handle_t h_conn;
	typedef char status_error_is_18[TI_ERROR == 18 ? 1 : -1];
	typedef char cn_request[CN_REQUEST == 0x3232 ? 1 : -1];
	typedef char proto_shutdown_last[TI_EVENT_PROTO_SHUTDOWN == 41 ? 1 : -1];
	status_error_is_18 a;
	cn_request b;
	proto_shutdown_last c;
	(void)a;
	(void)b;
	(void)c;
	SET_IPV4_ADDR(addr, 0x0a000001u);
	ld.vaddr = 0;
	ld.lkey = 0;
	ld.byte_count = 0;
	de.p_next_msg = 0;
	de.num_io_bufs = 1;
	de.local_data_desc = &ld;
	de.msg_opt = TI_OPT_SIGNALED | TI_OPT_SOLICITED;
	info.conn_request_cb = on_request;
	info.private_data = 0;
	info.private_data_len = 0;
	attr.auto_cq_rearm = TRUE;
	if (ops->events_register(0, on_event) != TI_SUCCESS)
		return 1;
	(void)de;
	return (int)ops->connect(h_ti, &attr, &info, &req, &h_conn) + (int)addr.IP_addr_type;
}
