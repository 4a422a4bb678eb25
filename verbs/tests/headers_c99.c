/*
 * Compile check of the public verbs headers as C99:
 *   gcc -std=c99 -pedantic -Wall -Wextra -Werror -I verbs/include -c
 *
 * It pins every status and enum value, the wire layouts, and every
 * ci_interface_t member: each verb has a stub written from the seed's
 * signature, so a typedef that drifts from the seed stops compiling.
 * With -DHEADERS_TEST_MAIN it also links and runs a few value checks.
 */
#include <iba/ib_ci.h>
#include <iba/ib_types.h>

/* C99 has no _Static_assert: a negative array size fails the build. */
#define CHECK(name, cond) typedef char check_##name[(cond) ? 1 : -1]

/* ---- status codes: IBAL values 0..50, nicsim's 51, seed aliases ---- */
CHECK(s0, IB_SUCCESS == 0);
CHECK(s1, IB_INSUFFICIENT_RESOURCES == 1);
CHECK(s2, IB_INSUFFICIENT_MEMORY == 2);
CHECK(s3, IB_INVALID_PARAMETER == 3);
CHECK(s4, IB_INVALID_SETTING == 4);
CHECK(s5, IB_NOT_FOUND == 5);
CHECK(s6, IB_TIMEOUT == 6);
CHECK(s7, IB_CANCELED == 7);
CHECK(s8, IB_INTERRUPTED == 8);
CHECK(s9, IB_INVALID_PERMISSION == 9);
CHECK(s10, IB_UNSUPPORTED == 10);
CHECK(s11, IB_OVERFLOW == 11);
CHECK(s12, IB_MAX_MCAST_QPS_REACHED == 12);
CHECK(s13, IB_INVALID_QP_STATE == 13);
CHECK(s14, IB_INVALID_EEC_STATE == 14);
CHECK(s15, IB_INVALID_APM_STATE == 15);
CHECK(s16, IB_INVALID_PORT_STATE == 16);
CHECK(s17, IB_INVALID_STATE == 17);
CHECK(s18, IB_RESOURCE_BUSY == 18);
CHECK(s19, IB_INVALID_PKEY == 19);
CHECK(s20, IB_INVALID_LKEY == 20);
CHECK(s21, IB_INVALID_RKEY == 21);
CHECK(s22, IB_INVALID_MAX_WRS == 22);
CHECK(s23, IB_INVALID_MAX_SGE == 23);
CHECK(s24, IB_INVALID_CQ_SIZE == 24);
CHECK(s25, IB_INVALID_SERVICE_TYPE == 25);
CHECK(s26, IB_INVALID_GID == 26);
CHECK(s27, IB_INVALID_LID == 27);
CHECK(s28, IB_INVALID_GUID == 28);
CHECK(s29, IB_INVALID_CA_HANDLE == 29);
CHECK(s30, IB_INVALID_AV_HANDLE == 30);
CHECK(s31, IB_INVALID_CQ_HANDLE == 31);
CHECK(s32, IB_INVALID_EEC_HANDLE == 32);
CHECK(s33, IB_INVALID_QP_HANDLE == 33);
CHECK(s34, IB_INVALID_PD_HANDLE == 34);
CHECK(s35, IB_INVALID_MR_HANDLE == 35);
CHECK(s36, IB_INVALID_MW_HANDLE == 36);
CHECK(s37, IB_INVALID_RDD_HANDLE == 37);
CHECK(s38, IB_INVALID_MCAST_HANDLE == 38);
CHECK(s39, IB_INVALID_CALLBACK == 39);
CHECK(s40, IB_INVALID_AL_HANDLE == 40);
CHECK(s41, IB_INVALID_HANDLE == 41);
CHECK(s42, IB_ERROR == 42);
CHECK(s43, IB_REMOTE_ERROR == 43);
CHECK(s44, IB_VERBS_PROCESSING_DONE == 44);
CHECK(s45, IB_INVALID_WR_TYPE == 45);
CHECK(s46, IB_QP_IN_TIMEWAIT == 46);
CHECK(s47, IB_EE_IN_TIMEWAIT == 47);
CHECK(s48, IB_INVALID_PORT == 48);
CHECK(s49, IB_NOT_DONE == 49);
CHECK(s50, IB_UNKNOWN_ERROR == 50);
CHECK(s51, IB_DUPLICATE_CA == 51);
CHECK(alias_qp_state, IB_QP_INVALID_STATE == IB_INVALID_QP_STATE);
CHECK(alias_pd, IB_INVALID_PD == IB_INVALID_PD_HANDLE);
CHECK(alias_pmig, IB_INVALID_PMIG_STATE == IB_INVALID_APM_STATE);
CHECK(alias_addr, IB_INVALID_ADDR_HANDLE == IB_INVALID_AV_HANDLE);
CHECK(alias_busy, IB_BUSY == IB_RESOURCE_BUSY);

/* ---- other enumerations ---- */
CHECK(wcs_first, IB_WCS_SUCCESS == 0);
CHECK(wcs_flush, IB_WCS_WR_FLUSHED_ERR == 5);
CHECK(wcs_rem_access, IB_WCS_REM_ACCESS_ERR == 7);
CHECK(wcs_last, IB_WCS_UNKNOWN == 17);
CHECK(wcs_ee, IB_INVALID_EE_CONTEXT == IB_WCS_INVALID_EECN);
CHECK(wc_send, IB_WC_SEND == 0);
CHECK(wc_recv_rdma, IB_WC_RECV_RDMA_WRITE == 7);
CHECK(wr_send, WR_SEND == 1 && IB_WR_SEND == WR_SEND);
CHECK(wr_fadd, WR_FETCH_ADD == 5 && IB_WR_FETCH_ADD == WR_FETCH_ADD);
CHECK(ae_first, IB_AE_SQ_ERROR == 1);
CHECK(ae_last, IB_AE_UNKNOWN == 27);
CHECK(qpt_ud, IB_QPT_UNRELIABLE_DGRM == 3);
CHECK(qpt_raw, IB_QPT_RAW_ETHER == 7);
CHECK(qps_sqd, (IB_QPS_SQD_DRAINED & IB_QPS_SQD) == IB_QPS_SQD);
CHECK(mtu, IB_MTU_256 == 1 && IB_MTU_4096 == 5 &&
	IB_MTU_LEN_2048 == IB_MTU_2048);
CHECK(link, IB_LINK_DOWN == 1 && IB_LINK_ACTIVE == 4);
CHECK(phys, IB_PORT_PHYS_STATE_LINKUP == 5);
CHECK(apm, IB_APM_MIGRATED == 1 && IB_APM_ARMED == 3);
CHECK(atomic, IB_ATOMIC_GLOBAL == 2);
CHECK(rnr, IB_RNR_NAK_655_36 == 0 && IB_RNR_NAK_491_52 == 31);
CHECK(fence, IB_POST_FENCE == IB_SEND_OPT_FENCE);
CHECK(version, IB_CI_VERSION == 0x00010000u && VERBS_VERSION == IB_CI_VERSION);

/* ---- wire layouts ---- */
CHECK(gid_size, sizeof(ib_gid_t) == 16);
CHECK(grh_size, sizeof(ib_grh_t) == 40);
CHECK(grh_sgid, offsetof(ib_grh_t, src_gid) == 8);
CHECK(grh_dgid, offsetof(ib_grh_t, dest_gid) == 24);
CHECK(mad_size, sizeof(ib_mad_t) == 24);
CHECK(mad_tid, offsetof(ib_mad_t, trans_id) == 8);
CHECK(mad_attr_mod, offsetof(ib_mad_t, attr_mod) == 20);
CHECK(libname, sizeof(((ci_interface_t *)0)->libname) == MAX_LIB_NAME);
CHECK(net_sizes, sizeof(ib_net16_t) == 2 && sizeof(ib_net32_t) == 4 &&
	sizeof(ib_net64_t) == 8);

/* ---- one stub per verb, each spelled from the seed's SYNOPSIS ---- */
#define UNUSED(x) ((void)(x))

static ib_api_status_t s_open_ca(const ib_net64_t ca_guid,
	const ci_completion_cb_t pfn_completion_cb,
	const ci_async_event_cb_t pfn_async_event_cb,
	const void *const ca_context, ib_ca_handle_t *ph_ca)
{
	UNUSED(ca_guid); UNUSED(pfn_completion_cb);
	UNUSED(pfn_async_event_cb); UNUSED(ca_context); UNUSED(ph_ca);
	return IB_UNSUPPORTED;
}
static ib_api_status_t s_query_ca(const ib_ca_handle_t h_ca,
	ib_ca_attr_t *p_ca_attr, size_t *p_size, ci_umv_buf_t *p_umv_buf)
{
	UNUSED(h_ca); UNUSED(p_ca_attr); UNUSED(p_size); UNUSED(p_umv_buf);
	return IB_UNSUPPORTED;
}
static ib_api_status_t s_modify_ca(const ib_ca_handle_t h_ca,
	const uint8_t port_num, const ib_ca_mod_t ca_mod,
	const ib_port_attr_mod_t *p_port_attr_mod)
{
	UNUSED(h_ca); UNUSED(port_num); UNUSED(ca_mod); UNUSED(p_port_attr_mod);
	return IB_UNSUPPORTED;
}
static ib_api_status_t s_close_ca(ib_ca_handle_t h_ca)
{
	UNUSED(h_ca);
	return IB_UNSUPPORTED;
}
static ib_api_status_t s_allocate_pd(const ib_ca_handle_t h_ca,
	ib_pd_handle_t *ph_pd, ci_umv_buf_t *p_umv_buf)
{
	UNUSED(h_ca); UNUSED(ph_pd); UNUSED(p_umv_buf);
	return IB_UNSUPPORTED;
}
static ib_api_status_t s_deallocate_pd(ib_pd_handle_t h_pd,
	ci_umv_buf_t *p_umv_buf)
{
	UNUSED(h_pd); UNUSED(p_umv_buf);
	return IB_UNSUPPORTED;
}
static ib_api_status_t s_allocate_rdd(const ib_ca_handle_t h_ca,
	ib_rdd_handle_t *ph_rdd, ci_umv_buf_t *p_umv_buf)
{
	UNUSED(h_ca); UNUSED(ph_rdd); UNUSED(p_umv_buf);
	return IB_UNSUPPORTED;
}
static ib_api_status_t s_deallocate_rdd(ib_rdd_handle_t h_rdd,
	ci_umv_buf_t *p_umv_buf)
{
	UNUSED(h_rdd); UNUSED(p_umv_buf);
	return IB_UNSUPPORTED;
}
static ib_api_status_t s_create_av(const ib_pd_handle_t h_pd,
	const ib_av_attr_t *p_av_attr, ib_av_handle_t *ph_av,
	ci_umv_buf_t *p_umv_buf)
{
	UNUSED(h_pd); UNUSED(p_av_attr); UNUSED(ph_av); UNUSED(p_umv_buf);
	return IB_UNSUPPORTED;
}
static ib_api_status_t s_query_av(const ib_av_handle_t h_av,
	ib_av_attr_t *p_av_attr, ib_pd_handle_t *ph_pd,
	ci_umv_buf_t *p_umv_buf)
{
	UNUSED(h_av); UNUSED(p_av_attr); UNUSED(ph_pd); UNUSED(p_umv_buf);
	return IB_UNSUPPORTED;
}
static ib_api_status_t s_modify_av(const ib_av_handle_t h_av,
	const ib_av_attr_t *p_av_attr, ci_umv_buf_t *p_umv_buf)
{
	UNUSED(h_av); UNUSED(p_av_attr); UNUSED(p_umv_buf);
	return IB_UNSUPPORTED;
}
static ib_api_status_t s_destroy_av(const ib_av_handle_t h_av,
	ci_umv_buf_t *p_umv_buf)
{
	UNUSED(h_av); UNUSED(p_umv_buf);
	return IB_UNSUPPORTED;
}
static ib_api_status_t s_create_qp(const ib_pd_handle_t h_pd,
	const void *qp_context, const ib_qp_create_t *p_create_attr,
	ib_qp_attr_t *p_qp_attr, ib_qp_handle_t *ph_qp,
	ci_umv_buf_t *p_umv_buf)
{
	UNUSED(h_pd); UNUSED(qp_context); UNUSED(p_create_attr);
	UNUSED(p_qp_attr); UNUSED(ph_qp); UNUSED(p_umv_buf);
	return IB_UNSUPPORTED;
}
static ib_api_status_t s_create_spl_qp(const ib_pd_handle_t h_pd,
	const uint8_t port_num, const void *qp_context,
	const ib_qp_create_t *p_create_attr, ib_qp_attr_t *p_qp_attr,
	ib_qp_handle_t *ph_qp)
{
	UNUSED(h_pd); UNUSED(port_num); UNUSED(qp_context);
	UNUSED(p_create_attr); UNUSED(p_qp_attr); UNUSED(ph_qp);
	return IB_UNSUPPORTED;
}
static ib_api_status_t s_modify_qp(const ib_qp_handle_t h_qp,
	const ib_qp_mod_t *p_modify_attr, ib_qp_attr_t *p_qp_attr,
	ci_umv_buf_t *p_umv_buf)
{
	UNUSED(h_qp); UNUSED(p_modify_attr); UNUSED(p_qp_attr);
	UNUSED(p_umv_buf);
	return IB_UNSUPPORTED;
}
static ib_api_status_t s_query_qp(const ib_qp_handle_t h_qp,
	ib_qp_attr_t *const p_qp_attr, ci_umv_buf_t *p_umv_buf)
{
	UNUSED(h_qp); UNUSED(p_qp_attr); UNUSED(p_umv_buf);
	return IB_UNSUPPORTED;
}
static ib_api_status_t s_destroy_qp(const ib_qp_handle_t h_qp,
	ci_umv_buf_t *p_umv_buf)
{
	UNUSED(h_qp); UNUSED(p_umv_buf);
	return IB_UNSUPPORTED;
}
static ib_api_status_t s_create_cq(const ib_pd_handle_t h_pd,
	const void *cq_context, uint32_t *const p_size, ib_cq_handle_t *ph_cq,
	ci_umv_buf_t *p_umv_buf)
{
	UNUSED(h_pd); UNUSED(cq_context); UNUSED(p_size); UNUSED(ph_cq);
	UNUSED(p_umv_buf);
	return IB_UNSUPPORTED;
}
static ib_api_status_t s_resize_cq(const ib_cq_handle_t h_cq,
	uint32_t *const p_size, ci_umv_buf_t *p_umv_buf)
{
	UNUSED(h_cq); UNUSED(p_size); UNUSED(p_umv_buf);
	return IB_UNSUPPORTED;
}
static ib_api_status_t s_query_cq(const ib_cq_handle_t h_cq,
	uint32_t *p_size, ci_umv_buf_t *p_umv_buf)
{
	UNUSED(h_cq); UNUSED(p_size); UNUSED(p_umv_buf);
	return IB_UNSUPPORTED;
}
static ib_api_status_t s_destroy_cq(const ib_cq_handle_t h_cq,
	ci_umv_buf_t *p_umv_buf)
{
	UNUSED(h_cq); UNUSED(p_umv_buf);
	return IB_UNSUPPORTED;
}
static ib_api_status_t s_create_eec(const ib_rdd_handle_t h_rdd,
	const void *eec_context, ib_eec_attr_t *p_eec_attr,
	ib_eec_handle_t *ph_eec, ci_umv_buf_t *p_umv_buf)
{
	UNUSED(h_rdd); UNUSED(eec_context); UNUSED(p_eec_attr); UNUSED(ph_eec);
	UNUSED(p_umv_buf);
	return IB_UNSUPPORTED;
}
static ib_api_status_t s_query_eec(const ib_eec_handle_t h_eec,
	ib_eec_attr_t *p_eec_attr, ci_umv_buf_t *p_umv_buf)
{
	UNUSED(h_eec); UNUSED(p_eec_attr); UNUSED(p_umv_buf);
	return IB_UNSUPPORTED;
}
static ib_api_status_t s_modify_eec(const ib_eec_handle_t h_eec,
	const ib_eec_mod_t *p_modify_attr, ib_eec_attr_t *p_eec_attr,
	ci_umv_buf_t *p_umv_buf)
{
	UNUSED(h_eec); UNUSED(p_modify_attr); UNUSED(p_eec_attr);
	UNUSED(p_umv_buf);
	return IB_UNSUPPORTED;
}
static ib_api_status_t s_destroy_eec(const ib_eec_handle_t h_eec,
	ci_umv_buf_t *p_umv_buf)
{
	UNUSED(h_eec); UNUSED(p_umv_buf);
	return IB_UNSUPPORTED;
}
static ib_api_status_t s_register_mr(const ib_pd_handle_t h_pd,
	const ib_mr_create_t *const p_mr_create, uint32_t *const p_lkey,
	uint32_t *const p_rkey, ib_mr_handle_t *const ph_mr,
	ci_umv_buf_t *p_umv_buf)
{
	UNUSED(h_pd); UNUSED(p_mr_create); UNUSED(p_lkey); UNUSED(p_rkey);
	UNUSED(ph_mr); UNUSED(p_umv_buf);
	return IB_UNSUPPORTED;
}
static ib_api_status_t s_register_pmr(const ib_pd_handle_t h_pd,
	const ib_phys_create_t *const p_pmr_create, void **const p_vaddr,
	uint32_t *const p_lkey, uint32_t *const p_rkey,
	ib_mr_handle_t *const ph_mr, ci_umv_buf_t *p_umv_buf)
{
	UNUSED(h_pd); UNUSED(p_pmr_create); UNUSED(p_vaddr); UNUSED(p_lkey);
	UNUSED(p_rkey); UNUSED(ph_mr); UNUSED(p_umv_buf);
	return IB_UNSUPPORTED;
}
static ib_api_status_t s_query_mr(const ib_mr_handle_t h_mr,
	ib_mr_attr_t *const p_mr_query)
{
	UNUSED(h_mr); UNUSED(p_mr_query);
	return IB_UNSUPPORTED;
}
static ib_api_status_t s_modify_mr(const ib_mr_handle_t h_mr,
	const ib_mr_mod_t mr_modify_mask,
	const ib_mr_create_t *const p_mr_create, uint32_t *const p_lkey,
	uint32_t *const p_rkey, const ib_pd_handle_t h_pd,
	ci_umv_buf_t *p_umv_buf)
{
	UNUSED(h_mr); UNUSED(mr_modify_mask); UNUSED(p_mr_create);
	UNUSED(p_lkey); UNUSED(p_rkey); UNUSED(h_pd); UNUSED(p_umv_buf);
	return IB_UNSUPPORTED;
}
static ib_api_status_t s_modify_pmr(const ib_mr_handle_t h_mr,
	const ib_mr_mod_t mr_modify_mask,
	const ib_phys_create_t *const p_pmr_create, void **const p_vaddr,
	uint32_t *const p_lkey, uint32_t *const p_rkey,
	const ib_pd_handle_t h_pd, ci_umv_buf_t *p_umv_buf)
{
	UNUSED(h_mr); UNUSED(mr_modify_mask); UNUSED(p_pmr_create);
	UNUSED(p_vaddr); UNUSED(p_lkey); UNUSED(p_rkey); UNUSED(h_pd);
	UNUSED(p_umv_buf);
	return IB_UNSUPPORTED;
}
static ib_api_status_t s_register_smr(const ib_mr_handle_t h_mr,
	const ib_pd_handle_t h_pd, const ib_access_t access_ctrl,
	void **const p_vaddr, uint32_t *const p_lkey, uint32_t *const p_rkey,
	ib_mr_handle_t *const ph_mr, ci_umv_buf_t *p_umv_buf)
{
	UNUSED(h_mr); UNUSED(h_pd); UNUSED(access_ctrl); UNUSED(p_vaddr);
	UNUSED(p_lkey); UNUSED(p_rkey); UNUSED(ph_mr); UNUSED(p_umv_buf);
	return IB_UNSUPPORTED;
}
static ib_api_status_t s_deregister_mr(const ib_mr_handle_t h_mr,
	ci_umv_buf_t *p_umv_buf)
{
	UNUSED(h_mr); UNUSED(p_umv_buf);
	return IB_UNSUPPORTED;
}
static ib_api_status_t s_create_mw(const ib_pd_handle_t h_pd,
	uint32_t *p_rkey, ib_mw_handle_t *ph_mw, ci_umv_buf_t *p_umv_buf)
{
	UNUSED(h_pd); UNUSED(p_rkey); UNUSED(ph_mw); UNUSED(p_umv_buf);
	return IB_UNSUPPORTED;
}
static ib_api_status_t s_query_mw(const ib_mw_handle_t h_mw,
	ib_pd_handle_t *ph_pd, uint32_t *p_rkey, ci_umv_buf_t *p_umv_buf)
{
	UNUSED(h_mw); UNUSED(ph_pd); UNUSED(p_rkey); UNUSED(p_umv_buf);
	return IB_UNSUPPORTED;
}
static ib_api_status_t s_bind_mw(const ib_mw_handle_t h_mw,
	const ib_qp_handle_t h_qp, ib_bind_wr_t *const p_mw_bind,
	uint32_t *const p_rkey)
{
	UNUSED(h_mw); UNUSED(h_qp); UNUSED(p_mw_bind); UNUSED(p_rkey);
	return IB_UNSUPPORTED;
}
static ib_api_status_t s_destroy_mw(const ib_mw_handle_t h_mw,
	ci_umv_buf_t *p_umv_buf)
{
	UNUSED(h_mw); UNUSED(p_umv_buf);
	return IB_UNSUPPORTED;
}
static ib_api_status_t s_post_send(const ib_qp_handle_t h_qp,
	ib_send_wr_t *const p_send_wr, ib_send_wr_t **pp_failed)
{
	UNUSED(h_qp); UNUSED(p_send_wr); UNUSED(pp_failed);
	return IB_UNSUPPORTED;
}
static ib_api_status_t s_post_recv(const ib_qp_handle_t h_qp,
	ib_recv_wr_t *const p_recv_wr, ib_recv_wr_t **pp_failed)
{
	UNUSED(h_qp); UNUSED(p_recv_wr); UNUSED(pp_failed);
	return IB_UNSUPPORTED;
}
static ib_api_status_t s_poll_cq(const ib_cq_handle_t h_cq,
	ib_wc_t **const pp_free_wclist, ib_wc_t **const pp_done_wclist)
{
	UNUSED(h_cq); UNUSED(pp_free_wclist); UNUSED(pp_done_wclist);
	return IB_NOT_FOUND;
}
static ib_api_status_t s_enable_cq_notify(const ib_cq_handle_t h_cq,
	const boolean_t solicited)
{
	UNUSED(h_cq); UNUSED(solicited);
	return IB_UNSUPPORTED;
}
static ib_api_status_t s_attach_mcast(const ib_qp_handle_t h_qp,
	const ib_gid_t *p_mcast_gid, const ib_net16_t mcast_lid,
	ib_mcast_handle_t *ph_mcast, ci_umv_buf_t *p_umv_buf)
{
	UNUSED(h_qp); UNUSED(p_mcast_gid); UNUSED(mcast_lid); UNUSED(ph_mcast);
	UNUSED(p_umv_buf);
	return IB_UNSUPPORTED;
}
static ib_api_status_t s_detach_mcast(const ib_mcast_handle_t h_mcast,
	ci_umv_buf_t *p_umv_buf)
{
	UNUSED(h_mcast); UNUSED(p_umv_buf);
	return IB_UNSUPPORTED;
}
static ib_api_status_t s_local_mad(const ib_ca_handle_t h_ca,
	const uint8_t port_num, const void *p_mad_in, void *p_mad_out)
{
	UNUSED(h_ca); UNUSED(port_num); UNUSED(p_mad_in); UNUSED(p_mad_out);
	return IB_UNSUPPORTED;
}

/* Callbacks. */
static void s_completion(void *cq_context) { UNUSED(cq_context); }
static void s_async(const ib_event_rec_t *const p_event_record)
{
	UNUSED(p_event_record);
}
static void s_comp(const ib_cq_handle_t h_cq, void *cq_context)
{
	UNUSED(h_cq); UNUSED(cq_context);
}
static void s_event(ib_async_event_rec_t *p_event_rec) { UNUSED(p_event_rec); }

/* Every member named, in the seed's order. */
static const ci_interface_t g_ci = {
	.guid = 0,
	.vend_id = 0,
	.dev_id = 0,
	.dev_revision = 0,
	.libname = "",
	.version = IB_CI_VERSION,
	.open_ca = s_open_ca,
	.query_ca = s_query_ca,
	.modify_ca = s_modify_ca,
	.close_ca = s_close_ca,
	.allocate_pd = s_allocate_pd,
	.deallocate_pd = s_deallocate_pd,
	.allocate_rdd = s_allocate_rdd,
	.deallocate_rdd = s_deallocate_rdd,
	.create_av = s_create_av,
	.query_av = s_query_av,
	.modify_av = s_modify_av,
	.destroy_av = s_destroy_av,
	.create_qp = s_create_qp,
	.create_spl_qp = s_create_spl_qp,
	.modify_qp = s_modify_qp,
	.query_qp = s_query_qp,
	.destroy_qp = s_destroy_qp,
	.create_cq = s_create_cq,
	.resize_cq = s_resize_cq,
	.query_cq = s_query_cq,
	.destroy_cq = s_destroy_cq,
	.create_eec = s_create_eec,
	.query_eec = s_query_eec,
	.modify_eec = s_modify_eec,
	.destroy_eec = s_destroy_eec,
	.register_mr = s_register_mr,
	.register_pmr = s_register_pmr,
	.query_mr = s_query_mr,
	.modify_mr = s_modify_mr,
	.modify_pmr = s_modify_pmr,
	.register_smr = s_register_smr,
	.deregister_mr = s_deregister_mr,
	.create_mw = s_create_mw,
	.query_mw = s_query_mw,
	.bind_mw = s_bind_mw,
	.destroy_mw = s_destroy_mw,
	.post_send = s_post_send,
	.post_recv = s_post_recv,
	.poll_cq = s_poll_cq,
	.enable_cq_notify = s_enable_cq_notify,
	.attach_mcast = s_attach_mcast,
	.detach_mcast = s_detach_mcast,
	.local_mad = s_local_mad,
};

/* The 43 verb types by name, and the registration entry points. */
static ci_open_ca t_open_ca = s_open_ca;
static ci_query_ca t_query_ca = s_query_ca;
static ci_modify_ca t_modify_ca = s_modify_ca;
static ci_close_ca t_close_ca = s_close_ca;
static ci_allocate_pd t_allocate_pd = s_allocate_pd;
static ci_deallocate_pd t_deallocate_pd = s_deallocate_pd;
static ci_allocate_rdd t_allocate_rdd = s_allocate_rdd;
static ci_deallocate_rdd t_deallocate_rdd = s_deallocate_rdd;
static ci_create_av t_create_av = s_create_av;
static ci_query_av t_query_av = s_query_av;
static ci_modify_av t_modify_av = s_modify_av;
static ci_destroy_av t_destroy_av = s_destroy_av;
static ci_create_qp t_create_qp = s_create_qp;
static ci_create_spl_qp t_create_spl_qp = s_create_spl_qp;
static ci_modify_qp t_modify_qp = s_modify_qp;
static ci_query_qp t_query_qp = s_query_qp;
static ci_destroy_qp t_destroy_qp = s_destroy_qp;
static ci_create_cq t_create_cq = s_create_cq;
static ci_resize_cq t_resize_cq = s_resize_cq;
static ci_query_cq t_query_cq = s_query_cq;
static ci_destroy_cq t_destroy_cq = s_destroy_cq;
static ci_create_eec t_create_eec = s_create_eec;
static ci_query_eec t_query_eec = s_query_eec;
static ci_modify_eec t_modify_eec = s_modify_eec;
static ci_destroy_eec t_destroy_eec = s_destroy_eec;
static ci_register_mr t_register_mr = s_register_mr;
static ci_register_pmr t_register_pmr = s_register_pmr;
static ci_query_mr t_query_mr = s_query_mr;
static ci_modify_mr t_modify_mr = s_modify_mr;
static ci_modify_pmr t_modify_pmr = s_modify_pmr;
static ci_register_smr t_register_smr = s_register_smr;
static ci_deregister_mr t_deregister_mr = s_deregister_mr;
static ci_create_mw t_create_mw = s_create_mw;
static ci_query_mw t_query_mw = s_query_mw;
static ci_bind_mw t_bind_mw = s_bind_mw;
static ci_destroy_mw t_destroy_mw = s_destroy_mw;
static ci_post_send t_post_send = s_post_send;
static ci_post_recv t_post_recv = s_post_recv;
static ci_poll_cq t_poll_cq = s_poll_cq;
static ci_enable_cq_notify t_enable_cq_notify = s_enable_cq_notify;
static ci_attach_mcast t_attach_mcast = s_attach_mcast;
static ci_detach_mcast t_detach_mcast = s_detach_mcast;
static ci_local_mad t_local_mad = s_local_mad;
static ib_api_status_t (*t_register_ca)(const ci_interface_t *) = ib_register_ca;
static ib_api_status_t (*t_deregister_ca)(const ci_interface_t *) = ib_deregister_ca;

static volatile size_t g_sink;
static void sink(const void *p, size_t n)
{
	g_sink += n + (p != NULL);
}
#define TOUCH(v) sink(&(v), sizeof(v))

/* Declares one object of every type and sets a few fields of each. */
size_t headers_c99_touch(void);
size_t headers_c99_touch(void)
{
	ib_net16_t n16 = cl_hton16(0x1234);
	ib_net32_t n32 = cl_hton32(0x12345678u);
	ib_net64_t n64 = cl_hton64(0x0123456789abcdefull);
	ib_gid_prefix_t prefix = n64;
	ib_gid_t gid;
	ib_grh_t grh;
	ib_mad_t mad;
	ib_api_status_t status = IB_SUCCESS;
	ib_ca_handle_t h_ca = NULL;
	ib_pd_handle_t h_pd = NULL;
	ib_rdd_handle_t h_rdd = NULL;
	ib_mr_handle_t h_mr = NULL;
	ib_mw_handle_t h_mw = NULL;
	ib_qp_handle_t h_qp = NULL;
	ib_eec_handle_t h_eec = NULL;
	ib_ee_handle_t h_ee = h_eec;
	ib_cq_handle_t h_cq = NULL;
	ib_av_handle_t h_av = NULL;
	ib_mcast_handle_t h_mcast = NULL;
	ib_async_event_t ae = IB_AE_QP_FATAL;
	ib_event_rec_t event_rec;
	ib_atomic_t atomicity = IB_ATOMIC_LOCAL;
	ib_port_cap_t port_cap;
	ib_init_type_t init_type = IB_INIT_TYPE_NO_LOAD;
	ib_link_states_t link = IB_LINK_ACTIVE;
	ib_mtu_t mtu = IB_MTU_2048;
	ib_port_attr_mod_t port_mod;
	ib_port_attr_t port_attr;
	ib_ca_attr_t ca_attr;
	ib_av_attr_t av;
	ib_qp_type_t qp_type = IB_QPT_RELIABLE_CONN;
	ib_access_t access = IB_AC_LOCAL_WRITE | IB_AC_RDMA_WRITE;
	ib_access_ctrl_t access2 = access;
	ib_qp_state_t qp_state = IB_QPS_RTS;
	ib_apm_state_t apm = IB_APM_MIGRATED;
	ib_rnr_nak_timeout_t rnr = IB_RNR_NAK_0_64;
	ib_qp_create_t qp_create;
	ib_qp_attr_t qp_attr;
	ib_qp_query_t qp_query;
	ib_qp_opts_t qp_opts = IB_MOD_QP_PKEY | IB_MOD_QP_QKEY;
	ib_qp_mod_t qp_mod;
	ib_eec_attr_t eec_attr;
	ib_ee_attr_t ee_attr;
	ib_eec_opts_t eec_opts = IB_MOD_EEC_PKEY;
	ib_eec_mod_t eec_mod;
	ib_wr_type_t wr_type = WR_RDMA_WRITE;
	ib_local_ds_t ds;
	ib_send_opt_t send_opt = IB_SEND_OPT_SIGNALED | IB_SEND_OPT_SOLICITED;
	ib_send_wr_t send_wr;
	ib_recv_wr_t recv_wr;
	ib_bind_wr_t bind_wr;
	ib_wc_status_t wcs = IB_WCS_REM_ACCESS_ERR;
	ib_wc_type_t wc_type = IB_WC_RECV;
	ib_recv_opt_t recv_opt = IB_RECV_OPT_IMMEDIATE | IB_RECV_OPT_GRH_VALID;
	ib_wc_t wc;
	ib_mr_create_t mr_create;
	ib_phys_range_t range;
	ib_phys_create_t phys;
	ib_mr_attr_t mr_attr;
	ib_mr_mod_t mr_mod = IB_MR_MOD_ADDR | IB_MR_MOD_PD | IB_MR_MOD_ACCESS;
	ib_ca_mod_t ca_mod = IB_CA_MOD_QKEY_CTR | IB_CA_MOD_IS_SM;
	ib_async_event_rec_t async_rec;
	ib_pfn_comp_cb_t pfn_comp = s_comp;
	ib_pfn_event_cb_t pfn_event = s_event;
	ci_completion_cb_t pfn_ci_comp = s_completion;
	ci_async_event_cb_t pfn_ci_async = s_async;
	ci_umv_buf_t umv;
	boolean_t flag = TRUE;
	uintn_t un = 1;
	intn_t in = -1;
	uint64_t page = 0;
	uint8_t mad_block[MAD_BLOCK_SIZE];
	ib_wc_t *p_free = &wc, *p_done = NULL;
	ib_send_wr_t *p_send_failed = NULL;
	ib_recv_wr_t *p_recv_failed = NULL;

	gid.unicast.prefix = prefix;
	gid.unicast.interface_id = n64;
	gid.multicast.header[0] = 0xFF;
	grh.ver_class_flow = n32;
	grh.resv1 = n16;
	grh.resv2 = 0x1B;
	grh.hop_limit = 1;
	grh.src_gid = gid;
	grh.dest_gid = gid;
	mad.base_ver = 1;
	mad.mgmt_class = 0x81;
	mad.class_ver = 1;
	mad.method = 1;
	mad.status = 0;
	mad.class_spec = 0;
	mad.trans_id = n64;
	mad.attr_id = cl_hton16(0x0015);
	mad.resv = 0;
	mad.attr_mod = 0;
	event_rec.context = NULL;
	event_rec.type = ae;
	event_rec.vendor_specific = 0;
	event_rec.trap.info.port_num = 1;
	event_rec.trap.info.violation.key.qkey = 0x80010000u;
	event_rec.trap.info.violation.src_gid = gid;
	port_cap.cm = TRUE;
	port_cap.port_active = FALSE;
	port_mod.cap = port_cap;
	port_mod.pkey_ctr = 0;
	port_mod.init_type = init_type;
	port_attr.port_num = 1;
	port_attr.mtu = (uint8_t)mtu;
	port_attr.link_state = link;
	port_attr.cap = port_cap;
	port_attr.p_gid_table = &gid;
	port_attr.p_pkey_table = &n16;
	ca_attr.ca_guid = n64;
	ca_attr.atomicity = atomicity;
	ca_attr.num_ports = 1;
	ca_attr.p_port_attr = &port_attr;
	ca_attr.num_page_sizes = 1;
	ca_attr.p_page_size = NULL;
	av.port_num = 1;
	av.sl = 0;
	av.dlid = cl_hton16(3);
	av.grh_valid = FALSE;
	av.grh = grh;
	av.static_rate = 0;
	av.path_bits = 0;
	av.conn.path_mtu = IB_MTU_LEN_2048;
	av.conn.local_ack_timeout = 14;
	av.conn.seq_err_retry_cnt = 7;
	av.conn.rnr_retry_cnt = 7;
	qp_create.qp_type = qp_type;
	qp_create.h_rdd = h_rdd;
	qp_create.sq_depth = 64;
	qp_create.rq_depth = 64;
	qp_create.sq_sge = 4;
	qp_create.rq_sge = 4;
	qp_create.h_sq_cq = h_cq;
	qp_create.h_rq_cq = h_cq;
	qp_create.sq_signaled = flag;
	qp_attr.h_pd = h_pd;
	qp_attr.state = qp_state;
	qp_attr.apm_state = apm;
	qp_attr.primary_av = av;
	qp_query = qp_attr;
	qp_mod.req_state = IB_QPS_INIT;
	qp_mod.state.init.opts = qp_opts;
	qp_mod.state.init.primary_port = 1;
	qp_mod.state.init.qkey = n32;
	qp_mod.state.init.pkey_index = 0;
	qp_mod.state.init.access_ctrl = access2;
	qp_mod.state.rtr.rq_psn = n32;
	qp_mod.state.rtr.dest_qp = n32;
	qp_mod.state.rtr.primary_av = av;
	qp_mod.state.rtr.rnr_nak_timeout = rnr;
	qp_mod.state.rts.sq_psn = n32;
	qp_mod.state.rts.retry_cnt = 7;
	qp_mod.state.rts.current_state = IB_QPS_RTR;
	qp_mod.state.rts.apm_state = IB_APM_REARM;
	qp_mod.state.sqd.sqd_event = TRUE;
	qp_mod.state.reset.timewait = 0;
	eec_attr.state = IB_QPS_RESET;
	eec_attr.h_rdd = h_rdd;
	eec_attr.local_eecn = n32;
	ee_attr = eec_attr;
	eec_mod.req_state = IB_QPS_RTR;
	eec_mod.state.init.primary_port = 1;
	eec_mod.state.rtr.opts = eec_opts;
	eec_mod.state.rtr.remote_eecn = n32;
	eec_mod.state.rts.sq_psn = n32;
	eec_mod.state.sqd.sqd_event = FALSE;
	ds.vaddr = mad_block;
	ds.length = (uint32_t)sizeof(mad_block);
	ds.lkey = 0x100;
	send_wr.p_next = NULL;
	send_wr.wr_id = 1;
	send_wr.wr_type = wr_type;
	send_wr.send_opt = send_opt | IB_POST_FENCE;
	send_wr.num_ds = 1;
	send_wr.ds_array = &ds;
	send_wr.immediate_data = n32;
	send_wr.dgrm.ud.remote_qp = n32;
	send_wr.dgrm.ud.remote_qkey = n32;
	send_wr.dgrm.ud.h_av = h_av;
	send_wr.dgrm.rd.eecn = n32;
	send_wr.dgrm.raw_ether.ether_type = n16;
	send_wr.dgrm.raw_ipv6.dest_lid = n16;
	send_wr.remote_ops.vaddr = 0x1000;
	send_wr.remote_ops.rkey = 0x200;
	send_wr.remote_ops.atomic1 = n64;
	send_wr.remote_ops.atomic2 = n64;
	recv_wr.p_next = NULL;
	recv_wr.wr_id = 2;
	recv_wr.num_ds = 1;
	recv_wr.ds_array = &ds;
	bind_wr.wr_id = 3;
	bind_wr.send_opt = IB_SEND_OPT_SIGNALED;
	bind_wr.h_mr = h_mr;
	bind_wr.access_ctrl = IB_AC_RDMA_READ | IB_AC_MW_BIND;
	bind_wr.current_rkey = 0x300;
	bind_wr.local_ds = ds;
	wc.p_next = NULL;
	wc.wr_id = 4;
	wc.wc_type = wc_type;
	wc.length = 0;
	wc.status = wcs;
	wc.vendor_specific = 0;
	wc.recv.conn.recv_opt = recv_opt;
	wc.recv.ud.remote_qp = n32;
	wc.recv.ud.pkey_index = 0;
	wc.recv.rd.free_cnt = 1;
	wc.recv.raw_ipv6.remote_sl = 0;
	wc.recv.raw_ether.ether_type = n16;
	mr_create.vaddr = mad_block;
	mr_create.length = sizeof(mad_block);
	mr_create.access_ctrl = access;
	range.base_addr = 0x100000;
	range.size = 4096;
	phys.length = range.size;
	phys.num_bufs = 1;
	phys.buf_array = &page;
	phys.buf_offset = 0;
	phys.page_size = 4096;
	phys.access_ctrl = access;
	mr_attr.h_pd = h_pd;
	mr_attr.local_lb = mad_block;
	mr_attr.local_ub = mad_block + sizeof(mad_block);
	mr_attr.lkey = 1;
	mr_attr.rkey = 2;
	async_rec.code = IB_AE_CQ_ERROR;
	async_rec.vendor_specific = 0;
	async_rec.context = NULL;
	async_rec.handle.h_cq = h_cq;
	async_rec.handle.h_eec = h_ee;
	umv.command = un;
	umv.p_inout_buf = NULL;
	umv.input_size = 0;
	umv.output_size = 0;
	umv.status = in;

	TOUCH(gid); TOUCH(grh); TOUCH(mad); TOUCH(status); TOUCH(h_ca);
	TOUCH(h_mw); TOUCH(h_mcast); TOUCH(event_rec); TOUCH(port_mod);
	TOUCH(ca_attr); TOUCH(qp_create); TOUCH(qp_query); TOUCH(qp_mod);
	TOUCH(ee_attr); TOUCH(eec_mod); TOUCH(send_wr); TOUCH(recv_wr);
	TOUCH(bind_wr); TOUCH(mr_create); TOUCH(phys); TOUCH(mr_attr);
	TOUCH(mr_mod); TOUCH(ca_mod); TOUCH(async_rec); TOUCH(pfn_comp);
	TOUCH(pfn_event); TOUCH(pfn_ci_comp); TOUCH(pfn_ci_async); TOUCH(umv);
	TOUCH(g_ci); TOUCH(p_send_failed); TOUCH(p_recv_failed);

	/* Call through the interface, as an access layer would. */
	status = g_ci.post_send(h_qp, &send_wr, &p_send_failed);
	status = g_ci.post_recv(h_qp, &recv_wr, &p_recv_failed);
	status = g_ci.poll_cq(h_cq, &p_free, &p_done);
	status = g_ci.modify_qp(h_qp, &qp_mod, &qp_attr, NULL);
	status = g_ci.local_mad(h_ca, 1, mad_block, mad_block);
	TOUCH(status);
	sink(ib_get_err_str(status), 0);
	sink(ib_get_wc_status_str(wcs), 0);
	sink(ib_get_async_event_str(ae), 0);

	TOUCH(t_open_ca); TOUCH(t_query_ca); TOUCH(t_modify_ca);
	TOUCH(t_close_ca); TOUCH(t_allocate_pd); TOUCH(t_deallocate_pd);
	TOUCH(t_allocate_rdd); TOUCH(t_deallocate_rdd); TOUCH(t_create_av);
	TOUCH(t_query_av); TOUCH(t_modify_av); TOUCH(t_destroy_av);
	TOUCH(t_create_qp); TOUCH(t_create_spl_qp); TOUCH(t_modify_qp);
	TOUCH(t_query_qp); TOUCH(t_destroy_qp); TOUCH(t_create_cq);
	TOUCH(t_resize_cq); TOUCH(t_query_cq); TOUCH(t_destroy_cq);
	TOUCH(t_create_eec); TOUCH(t_query_eec); TOUCH(t_modify_eec);
	TOUCH(t_destroy_eec); TOUCH(t_register_mr); TOUCH(t_register_pmr);
	TOUCH(t_query_mr); TOUCH(t_modify_mr); TOUCH(t_modify_pmr);
	TOUCH(t_register_smr); TOUCH(t_deregister_mr); TOUCH(t_create_mw);
	TOUCH(t_query_mw); TOUCH(t_bind_mw); TOUCH(t_destroy_mw);
	TOUCH(t_post_send); TOUCH(t_post_recv); TOUCH(t_poll_cq);
	TOUCH(t_enable_cq_notify); TOUCH(t_attach_mcast);
	TOUCH(t_detach_mcast); TOUCH(t_local_mad);
	TOUCH(t_register_ca); TOUCH(t_deregister_ca);
	return g_sink;
}

#ifdef HEADERS_TEST_MAIN
/* Run-time checks; build with -DHEADERS_TEST_MAIN and link. */
#include <stdio.h>
#include <string.h>

ib_api_status_t ib_register_ca(const ci_interface_t *p_ci)
{
	return p_ci ? IB_SUCCESS : IB_INVALID_PARAMETER;
}
ib_api_status_t ib_deregister_ca(const ci_interface_t *p_ci)
{
	return p_ci ? IB_SUCCESS : IB_INVALID_PARAMETER;
}

int main(void)
{
	int bad = 0;
	ib_net32_t n = cl_hton32(0x11223344u);
	const unsigned char *b = (const unsigned char *)&n;
	ib_net64_t n64 = cl_hton64(0x0102030405060708ull);
	const unsigned char *b64 = (const unsigned char *)&n64;

	bad |= !(b[0] == 0x11 && b[1] == 0x22 && b[2] == 0x33 && b[3] == 0x44);
	bad |= !(b64[0] == 1 && b64[7] == 8);
	bad |= cl_ntoh16(cl_hton16(0xBEEF)) != 0xBEEF;
	bad |= cl_ntoh32(n) != 0x11223344u;
	bad |= cl_ntoh64(n64) != 0x0102030405060708ull;
	bad |= strcmp(ib_get_err_str(IB_INVALID_QP_HANDLE),
		"IB_INVALID_QP_HANDLE") != 0;
	bad |= strcmp(ib_get_err_str(IB_QP_INVALID_STATE),
		"IB_INVALID_QP_STATE") != 0;
	bad |= strcmp(ib_get_err_str(IB_DUPLICATE_CA), "IB_DUPLICATE_CA") != 0;
	bad |= strcmp(ib_get_err_str((ib_api_status_t)99),
		"IB_UNKNOWN_ERROR") != 0;
	bad |= strcmp(ib_get_wc_status_str(IB_WCS_WR_FLUSHED_ERR),
		"IB_WCS_WR_FLUSHED_ERR") != 0;
	bad |= strcmp(ib_get_async_event_str(IB_AE_PORT_DOWN),
		"IB_AE_PORT_DOWN") != 0;
	bad |= t_register_ca(&g_ci) != IB_SUCCESS;
	bad |= t_deregister_ca(&g_ci) != IB_SUCCESS;
	headers_c99_touch();
	printf("%s\n", bad ? "FAIL" : "ok");
	return bad;
}
#endif
