/*
 * nicsim -- the IB Channel Interface: the verbs a host channel adapter
 * driver exports to the access layer.
 *
 * This is the contract of shared/seeds/002 (ib_ci.h, January 2003):
 * ci_umv_buf_t, the two CI callbacks, the 43 ci_* verb types with the
 * seed's parameter lists, ci_interface_t with its members in the seed's
 * order, and ib_register_ca / ib_deregister_ca.  Each verb's comment lists
 * the status codes the seed gives for it; those are the codes nicsim's
 * provider returns.  Annotations: in / out / in-out as in the seed;
 * "optional" pointers may be NULL.
 */
#ifndef NICSIM_IBA_IB_CI_H
#define NICSIM_IBA_IB_CI_H

#include "ib_types.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Version of this interface definition, for ci_interface_t.version:
 * major in the high 16 bits, minor in the low 16.  The seed has the field
 * but no constant.  nicsim choice: 1.0 for this 2003 layout (IBAL's later
 * layout, with a different ci_interface_t, announced 2.0).  The VERBS_*
 * names are IBAL's.
 */
#define IB_CI_MK_VERSION(maj, min) \
	((((uint32_t)(maj) & 0xFFFFu) << 16) | ((uint32_t)(min) & 0xFFFFu))
#define IB_CI_MAJOR_VERSION 1u
#define IB_CI_MINOR_VERSION 0u
#define IB_CI_VERSION IB_CI_MK_VERSION(IB_CI_MAJOR_VERSION, IB_CI_MINOR_VERSION)
#ifndef VERBS_VERSION
#define VERBS_MAJOR_VER IB_CI_MAJOR_VERSION
#define VERBS_MINOR_VER IB_CI_MINOR_VERSION
#define VERBS_VERSION IB_CI_VERSION
#define MK_VERBS_VERSION(maj, min) IB_CI_MK_VERSION(maj, min)
#endif

/* Length of ci_interface_t.libname (seed). */
#define MAX_LIB_NAME 32

/*
 * Private data a vendor's user-mode library exchanges with its kernel
 * driver through the access layer's proxy.  input_size / output_size
 * bound p_inout_buf in each direction; status is the vendor's own result.
 * The buffer may not carry user-mode pointers.
 */
typedef struct _umv_buf {
	uintn_t command;
	void *p_inout_buf;
	uintn_t input_size;
	uintn_t output_size;
	intn_t status;
} ci_umv_buf_t;

/* Completion notification: called with the cq_context given to
 * ci_create_cq once an armed CQ receives an entry. */
typedef void (*ci_completion_cb_t)(void *cq_context);

/* Asynchronous event notification for one open CA instance. */
typedef void (*ci_async_event_cb_t)(const ib_event_rec_t *const p_event_record);

/* ------------------------------------------------------------------------
 * HCA access.
 * ------------------------------------------------------------------------ */

/* Open the HCA whose GUID is ca_guid; one open instance at a time.
 * IB_SUCCESS, IB_INSUFFICIENT_RESOURCES, IB_INVALID_PARAMETER (no
 * callbacks, zero GUID or NULL ph_ca), IB_RESOURCE_BUSY (already open),
 * IB_NOT_FOUND (unknown GUID). */
typedef ib_api_status_t (*ci_open_ca)(
	const ib_net64_t ca_guid,                       /* in */
	const ci_completion_cb_t pfn_completion_cb,     /* in */
	const ci_async_event_cb_t pfn_async_event_cb,   /* in */
	const void *const ca_context,                   /* in */
	ib_ca_handle_t *ph_ca);                         /* out */

/* Adapter attributes.  With p_ca_attr NULL (or *p_size too small) only
 * the needed size is returned in *p_size; nothing partial is written.
 * IB_SUCCESS, IB_INSUFFICIENT_MEMORY, IB_INVALID_CA_HANDLE,
 * IB_INVALID_PARAMETER (p_size NULL). */
typedef ib_api_status_t (*ci_query_ca)(
	const ib_ca_handle_t h_ca,                      /* in */
	ib_ca_attr_t *p_ca_attr,                        /* out, optional */
	size_t *p_size,                                 /* in-out */
	ci_umv_buf_t *p_umv_buf);                       /* in-out, optional */

/* Change port capabilities or reset violation counters, per ca_mod.
 * IB_SUCCESS, IB_INVALID_PORT, IB_INVALID_PARAMETER, IB_UNSUPPORTED,
 * IB_INVALID_CA_HANDLE. */
typedef ib_api_status_t (*ci_modify_ca)(
	const ib_ca_handle_t h_ca,                      /* in */
	const uint8_t port_num,                         /* in */
	const ib_ca_mod_t ca_mod,                       /* in */
	const ib_port_attr_mod_t *p_port_attr_mod);     /* in */

/* Close an open instance; not from a CI callback.
 * IB_SUCCESS, IB_RESOURCE_BUSY, IB_INVALID_CA_HANDLE. */
typedef ib_api_status_t (*ci_close_ca)(
	ib_ca_handle_t h_ca);                           /* in */

/* ------------------------------------------------------------------------
 * Protection domains and reliable datagram domains.
 * ------------------------------------------------------------------------ */

/* IB_SUCCESS, IB_INSUFFICIENT_RESOURCES, IB_INVALID_CA_HANDLE. */
typedef ib_api_status_t (*ci_allocate_pd)(
	const ib_ca_handle_t h_ca,                      /* in */
	ib_pd_handle_t *ph_pd,                          /* out */
	ci_umv_buf_t *p_umv_buf);                       /* in-out, optional */

/* IB_SUCCESS, IB_INVALID_PD_HANDLE, IB_RESOURCE_BUSY (still in use). */
typedef ib_api_status_t (*ci_deallocate_pd)(
	ib_pd_handle_t h_pd,                            /* in */
	ci_umv_buf_t *p_umv_buf);                       /* in-out, optional */

/* IB_SUCCESS, IB_INSUFFICIENT_RESOURCES, IB_INVALID_CA_HANDLE,
 * IB_UNSUPPORTED (no RD on this HCA). */
typedef ib_api_status_t (*ci_allocate_rdd)(
	const ib_ca_handle_t h_ca,                      /* in */
	ib_rdd_handle_t *ph_rdd,                        /* out */
	ci_umv_buf_t *p_umv_buf);                       /* in-out, optional */

/* IB_SUCCESS, IB_RESOURCE_BUSY, IB_INVALID_RDD_HANDLE (also when the
 * HCA has no RD service). */
typedef ib_api_status_t (*ci_deallocate_rdd)(
	ib_rdd_handle_t h_rdd,                          /* in */
	ci_umv_buf_t *p_umv_buf);                       /* in-out, optional */

/* ------------------------------------------------------------------------
 * Address vectors.
 * ------------------------------------------------------------------------ */

/* IB_SUCCESS, IB_INSUFFICIENT_RESOURCES, IB_INVALID_PD_HANDLE,
 * IB_INVALID_PORT, IB_INVALID_PARAMETER. */
typedef ib_api_status_t (*ci_create_av)(
	const ib_pd_handle_t h_pd,                      /* in */
	const ib_av_attr_t *p_av_attr,                  /* in */
	ib_av_handle_t *ph_av,                          /* out */
	ci_umv_buf_t *p_umv_buf);                       /* in-out, optional */

/* IB_SUCCESS, IB_INVALID_AV_HANDLE, IB_INVALID_PARAMETER,
 * IB_INVALID_PORT. */
typedef ib_api_status_t (*ci_query_av)(
	const ib_av_handle_t h_av,                      /* in */
	ib_av_attr_t *p_av_attr,                        /* out */
	ib_pd_handle_t *ph_pd,                          /* out */
	ci_umv_buf_t *p_umv_buf);                       /* in-out, optional */

/* IB_SUCCESS, IB_INVALID_AV_HANDLE, IB_INVALID_PORT,
 * IB_INVALID_PARAMETER. */
typedef ib_api_status_t (*ci_modify_av)(
	const ib_av_handle_t h_av,                      /* in */
	const ib_av_attr_t *p_av_attr,                  /* in */
	ci_umv_buf_t *p_umv_buf);                       /* in-out, optional */

/* IB_SUCCESS, IB_INVALID_AV_HANDLE. */
typedef ib_api_status_t (*ci_destroy_av)(
	const ib_av_handle_t h_av,                      /* in */
	ci_umv_buf_t *p_umv_buf);                       /* in-out, optional */

/* ------------------------------------------------------------------------
 * Queue pairs.
 * ------------------------------------------------------------------------ */

/* IB_SUCCESS, IB_INSUFFICIENT_RESOURCES, IB_INVALID_PD_HANDLE,
 * IB_INVALID_CQ_HANDLE, IB_INVALID_SERVICE_TYPE, IB_INVALID_RDD_HANDLE,
 * IB_INVALID_MAX_WRS, IB_INVALID_MAX_SGE, IB_UNSUPPORTED,
 * IB_INVALID_PARAMETER. */
typedef ib_api_status_t (*ci_create_qp)(
	const ib_pd_handle_t h_pd,                      /* in */
	const void *qp_context,                         /* in */
	const ib_qp_create_t *p_create_attr,            /* in */
	ib_qp_attr_t *p_qp_attr,                        /* out */
	ib_qp_handle_t *ph_qp,                          /* out */
	ci_umv_buf_t *p_umv_buf);                       /* in-out, optional */

/* QP0/QP1/raw QP of one port; kernel only.  IB_SUCCESS,
 * IB_INSUFFICIENT_RESOURCES, IB_NOT_FOUND, IB_INVALID_CQ_HANDLE,
 * IB_INVALID_MAX_WRS, IB_INVALID_MAX_SGE, IB_RESOURCE_BUSY (QP0/QP1
 * already taken), IB_INVALID_PD, IB_INVALID_PORT, IB_UNSUPPORTED,
 * IB_INVALID_PARAMETER. */
typedef ib_api_status_t (*ci_create_spl_qp)(
	const ib_pd_handle_t h_pd,                      /* in */
	const uint8_t port_num,                         /* in */
	const void *qp_context,                         /* in */
	const ib_qp_create_t *p_create_attr,            /* in */
	ib_qp_attr_t *p_qp_attr,                        /* out */
	ib_qp_handle_t *ph_qp);                         /* out */

/* IB_SUCCESS, IB_INSUFFICIENT_RESOURCES, IB_INVALID_QP_HANDLE,
 * IB_UNSUPPORTED, IB_QP_INVALID_STATE, IB_INVALID_PKEY,
 * IB_INVALID_APM_STATE, IB_INVALID_PARAMETER. */
typedef ib_api_status_t (*ci_modify_qp)(
	const ib_qp_handle_t h_qp,                      /* in */
	const ib_qp_mod_t *p_modify_attr,               /* in */
	ib_qp_attr_t *p_qp_attr,                        /* out */
	ci_umv_buf_t *p_umv_buf);                       /* in-out, optional */

/* IB_SUCCESS, IB_INVALID_QP_HANDLE, IB_INVALID_PARAMETER. */
typedef ib_api_status_t (*ci_query_qp)(
	const ib_qp_handle_t h_qp,                      /* in */
	ib_qp_attr_t *const p_qp_attr,                  /* out */
	ci_umv_buf_t *p_umv_buf);                       /* in-out, optional */

/* Not from a CI callback.  IB_SUCCESS, IB_INVALID_QP_HANDLE,
 * IB_RESOURCE_BUSY (UD QP still attached to a multicast group). */
typedef ib_api_status_t (*ci_destroy_qp)(
	const ib_qp_handle_t h_qp,                      /* in */
	ci_umv_buf_t *p_umv_buf);                       /* in-out, optional */

/* ------------------------------------------------------------------------
 * Completion queues.
 * ------------------------------------------------------------------------ */

/* *p_size: entries requested in, entries created out.  IB_SUCCESS,
 * IB_INVALID_CA_HANDLE, IB_INSUFFICIENT_RESOURCES, IB_INVALID_CQ_SIZE,
 * IB_INVALID_PARAMETER. */
typedef ib_api_status_t (*ci_create_cq)(
	const ib_pd_handle_t h_pd,                      /* in */
	const void *cq_context,                         /* in */
	uint32_t *const p_size,                         /* in-out */
	ib_cq_handle_t *ph_cq,                          /* out */
	ci_umv_buf_t *p_umv_buf);                       /* in-out, optional */

/* IB_SUCCESS, IB_INVALID_CQ_HANDLE, IB_INSUFFICIENT_RESOURCES,
 * IB_INVALID_PARAMETER, IB_INVALID_CQ_SIZE, IB_OVERFLOW (more entries
 * queued than the new size; CQ unchanged). */
typedef ib_api_status_t (*ci_resize_cq)(
	const ib_cq_handle_t h_cq,                      /* in */
	uint32_t *const p_size,                         /* in-out */
	ci_umv_buf_t *p_umv_buf);                       /* in-out, optional */

/* IB_SUCCESS, IB_INVALID_CQ_HANDLE, IB_INVALID_PARAMETER. */
typedef ib_api_status_t (*ci_query_cq)(
	const ib_cq_handle_t h_cq,                      /* in */
	uint32_t *p_size,                               /* out */
	ci_umv_buf_t *p_umv_buf);                       /* in-out, optional */

/* Not from a CI callback.  IB_SUCCESS, IB_INVALID_CQ_HANDLE,
 * IB_RESOURCE_BUSY (QPs still bound), IB_INVALID_PARAMETER. */
typedef ib_api_status_t (*ci_destroy_cq)(
	const ib_cq_handle_t h_cq,                      /* in */
	ci_umv_buf_t *p_umv_buf);                       /* in-out, optional */

/* ------------------------------------------------------------------------
 * End-to-end contexts.
 * ------------------------------------------------------------------------ */

/* Created in the reset state.  IB_SUCCESS, IB_INVALID_RDD_HANDLE,
 * IB_INSUFFICIENT_RESOURCES, IB_UNSUPPORTED, IB_INVALID_PARAMETER. */
typedef ib_api_status_t (*ci_create_eec)(
	const ib_rdd_handle_t h_rdd,                    /* in */
	const void *eec_context,                        /* in */
	ib_eec_attr_t *p_eec_attr,                      /* out */
	ib_eec_handle_t *ph_eec,                        /* out */
	ci_umv_buf_t *p_umv_buf);                       /* in-out, optional */

/* IB_SUCCESS, IB_INVALID_EEC_HANDLE, IB_UNSUPPORTED,
 * IB_INVALID_PARAMETER. */
typedef ib_api_status_t (*ci_query_eec)(
	const ib_eec_handle_t h_eec,                    /* in */
	ib_eec_attr_t *p_eec_attr,                      /* out */
	ci_umv_buf_t *p_umv_buf);                       /* in-out, optional */

/* IB_SUCCESS, IB_INVALID_EEC_HANDLE, IB_INVALID_EEC_STATE,
 * IB_INVALID_PARAMETER, IB_INVALID_SETTING, IB_INVALID_PKEY,
 * IB_INVALID_PMIG_STATE. */
typedef ib_api_status_t (*ci_modify_eec)(
	const ib_eec_handle_t h_eec,                    /* in */
	const ib_eec_mod_t *p_modify_attr,              /* in */
	ib_eec_attr_t *p_eec_attr,                      /* out */
	ci_umv_buf_t *p_umv_buf);                       /* in-out, optional */

/* Not from a CI callback.  IB_SUCCESS, IB_INVALID_EEC_HANDLE. */
typedef ib_api_status_t (*ci_destroy_eec)(
	const ib_eec_handle_t h_eec,                    /* in */
	ci_umv_buf_t *p_umv_buf);                       /* in-out, optional */

/* ------------------------------------------------------------------------
 * Memory regions.  Remote or atomic access needs local write access too.
 * rkeys are returned in wire order and never swapped by consumers.
 * ------------------------------------------------------------------------ */

/* IB_SUCCESS, IB_INSUFFICIENT_RESOURCES, IB_INVALID_PARAMETER,
 * IB_INVALID_PD_HANDLE, IB_INVALID_PERMISSION. */
typedef ib_api_status_t (*ci_register_mr)(
	const ib_pd_handle_t h_pd,                      /* in */
	const ib_mr_create_t *const p_mr_create,        /* in */
	uint32_t *const p_lkey,                         /* out */
	uint32_t *const p_rkey,                         /* out */
	ib_mr_handle_t *const ph_mr,                    /* out */
	ci_umv_buf_t *p_umv_buf);                       /* in-out, optional */

/* Kernel only.  *p_vaddr: requested start in, assigned start out.
 * IB_SUCCESS, IB_INSUFFICIENT_RESOURCES, IB_INVALID_PARAMETER (also an
 * unsupported page_size), IB_INVALID_PD_HANDLE, IB_INVALID_PERMISSION. */
typedef ib_api_status_t (*ci_register_pmr)(
	const ib_pd_handle_t h_pd,                      /* in */
	const ib_phys_create_t *const p_pmr_create,     /* in */
	void **const p_vaddr,                           /* in-out */
	uint32_t *const p_lkey,                         /* out */
	uint32_t *const p_rkey,                         /* out */
	ib_mr_handle_t *const ph_mr,                    /* out */
	ci_umv_buf_t *p_umv_buf);                       /* in-out, optional */

/* IB_SUCCESS, IB_INVALID_MR_HANDLE, IB_INVALID_PARAMETER. */
typedef ib_api_status_t (*ci_query_mr)(
	const ib_mr_handle_t h_mr,                      /* in */
	ib_mr_attr_t *const p_mr_query);                /* out */

/* Re-register with the parts selected by mr_modify_mask; h_pd is used
 * only with IB_MR_MOD_PD.  IB_SUCCESS, IB_RESOURCE_BUSY (windows bound),
 * IB_INSUFFICIENT_RESOURCES, IB_INVALID_MR_HANDLE, IB_INVALID_PERMISSION,
 * IB_INVALID_PARAMETER, IB_INVALID_PD_HANDLE. */
typedef ib_api_status_t (*ci_modify_mr)(
	const ib_mr_handle_t h_mr,                      /* in */
	const ib_mr_mod_t mr_modify_mask,               /* in */
	const ib_mr_create_t *const p_mr_create,        /* in */
	uint32_t *const p_lkey,                         /* out */
	uint32_t *const p_rkey,                         /* out */
	const ib_pd_handle_t h_pd,                      /* in, optional */
	ci_umv_buf_t *p_umv_buf);                       /* in-out, optional */

/* Kernel only.  IB_SUCCESS, IB_RESOURCE_BUSY, IB_INSUFFICIENT_RESOURCES,
 * IB_INVALID_MR_HANDLE, IB_INVALID_PERMISSION, IB_INVALID_PARAMETER. */
typedef ib_api_status_t (*ci_modify_pmr)(
	const ib_mr_handle_t h_mr,                      /* in */
	const ib_mr_mod_t mr_modify_mask,               /* in */
	const ib_phys_create_t *const p_pmr_create,     /* in */
	void **const p_vaddr,                           /* in-out */
	uint32_t *const p_lkey,                         /* out */
	uint32_t *const p_rkey,                         /* out */
	const ib_pd_handle_t h_pd,                      /* in, optional */
	ci_umv_buf_t *p_umv_buf);                       /* in-out, optional */

/* A new region over the pages of h_mr.  IB_SUCCESS,
 * IB_INVALID_MR_HANDLE, IB_INVALID_PD_HANDLE, IB_INVALID_PERMISSION. */
typedef ib_api_status_t (*ci_register_smr)(
	const ib_mr_handle_t h_mr,                      /* in */
	const ib_pd_handle_t h_pd,                      /* in */
	const ib_access_t access_ctrl,                  /* in */
	void **const p_vaddr,                           /* in-out */
	uint32_t *const p_lkey,                         /* out */
	uint32_t *const p_rkey,                         /* out */
	ib_mr_handle_t *const ph_mr,                    /* out */
	ci_umv_buf_t *p_umv_buf);                       /* in-out, optional */

/* Outstanding WRs on the region then complete with
 * IB_WCS_LOCAL_PROTECTION_ERR.  IB_SUCCESS, IB_INVALID_MR_HANDLE,
 * IB_RESOURCE_BUSY (windows bound). */
typedef ib_api_status_t (*ci_deregister_mr)(
	const ib_mr_handle_t h_mr,                      /* in */
	ci_umv_buf_t *p_umv_buf);                       /* in-out, optional */

/* ------------------------------------------------------------------------
 * Memory windows.
 * ------------------------------------------------------------------------ */

/* The rkey stays unbound until ci_bind_mw.  IB_SUCCESS,
 * IB_INSUFFICIENT_RESOURCES, IB_INVALID_PD_HANDLE, IB_INVALID_PARAMETER. */
typedef ib_api_status_t (*ci_create_mw)(
	const ib_pd_handle_t h_pd,                      /* in */
	uint32_t *p_rkey,                               /* out */
	ib_mw_handle_t *ph_mw,                          /* out */
	ci_umv_buf_t *p_umv_buf);                       /* in-out, optional */

/* IB_SUCCESS, IB_INVALID_MW_HANDLE, IB_INVALID_PARAMETER. */
typedef ib_api_status_t (*ci_query_mw)(
	const ib_mw_handle_t h_mw,                      /* in */
	ib_pd_handle_t *ph_pd,                          /* out */
	uint32_t *p_rkey,                               /* out */
	ci_umv_buf_t *p_umv_buf);                       /* in-out, optional */

/* Posts a bind on h_qp's send queue; length 0 unbinds.  IB_SUCCESS,
 * IB_INSUFFICIENT_RESOURCES, IB_INVALID_MW_HANDLE, IB_INVALID_PERMISSION,
 * IB_INVALID_SERVICE_TYPE, IB_INVALID_PARAMETER, IB_INVALID_RKEY,
 * IB_INVALID_QP_HANDLE. */
typedef ib_api_status_t (*ci_bind_mw)(
	const ib_mw_handle_t h_mw,                      /* in */
	const ib_qp_handle_t h_qp,                      /* in */
	ib_bind_wr_t *const p_mw_bind,                  /* in */
	uint32_t *const p_rkey);                        /* out */

/* IB_SUCCESS, IB_INVALID_MW_HANDLE. */
typedef ib_api_status_t (*ci_destroy_mw)(
	const ib_mw_handle_t h_mw,                      /* in */
	ci_umv_buf_t *p_umv_buf);                       /* in-out, optional */

/* ------------------------------------------------------------------------
 * Work requests.  On failure *pp_failed points at the first WR not
 * posted (NULL when all were posted) and the status is that WR's.
 * ------------------------------------------------------------------------ */

/* IB_SUCCESS, IB_INVALID_QP_HANDLE, IB_INSUFFICIENT_RESOURCES,
 * IB_INVALID_WR_TYPE, IB_INVALID_QP_STATE, IB_INVALID_MAX_SGE,
 * IB_UNSUPPORTED, IB_INVALID_ADDR_HANDLE. */
typedef ib_api_status_t (*ci_post_send)(
	const ib_qp_handle_t h_qp,                      /* in */
	ib_send_wr_t *const p_send_wr,                  /* in */
	ib_send_wr_t **pp_failed);                      /* out */

/* IB_SUCCESS, IB_INVALID_QP_HANDLE, IB_INSUFFICIENT_RESOURCES,
 * IB_INVALID_WR_TYPE, IB_INVALID_QP_STATE. */
typedef ib_api_status_t (*ci_post_recv)(
	const ib_qp_handle_t h_qp,                      /* in */
	ib_recv_wr_t *const p_recv_wr,                  /* in */
	ib_recv_wr_t **pp_failed);                      /* out */

/* ------------------------------------------------------------------------
 * Completions.
 * ------------------------------------------------------------------------ */

/* Moves completions into entries taken from *pp_free_wclist and chains
 * them on *pp_done_wclist.  IB_SUCCESS (an emptied free list means there
 * may be more), IB_INVALID_CQ_HANDLE, IB_NOT_FOUND (CQ empty). */
typedef ib_api_status_t (*ci_poll_cq)(
	const ib_cq_handle_t h_cq,                      /* in */
	ib_wc_t **const pp_free_wclist,                 /* in-out */
	ib_wc_t **const pp_done_wclist);                /* out */

/* Arm the CQ for the next entry (solicited FALSE) or the next solicited
 * entry (TRUE); poll again after arming.  IB_SUCCESS,
 * IB_INVALID_CQ_HANDLE. */
typedef ib_api_status_t (*ci_enable_cq_notify)(
	const ib_cq_handle_t h_cq,                      /* in */
	const boolean_t solicited);                     /* in */

/* ------------------------------------------------------------------------
 * Multicast.
 * ------------------------------------------------------------------------ */

/* IB_SUCCESS, IB_INVALID_QP_HANDLE, IB_INVALID_SERVICE_TYPE (not UD),
 * IB_INVALID_GID, IB_INVALID_LID, IB_UNSUPPORTED,
 * IB_INSUFFICIENT_RESOURCES, IB_INVALID_PARAMETER. */
typedef ib_api_status_t (*ci_attach_mcast)(
	const ib_qp_handle_t h_qp,                      /* in */
	const ib_gid_t *p_mcast_gid,                    /* in */
	const ib_net16_t mcast_lid,                     /* in */
	ib_mcast_handle_t *ph_mcast,                    /* out */
	ci_umv_buf_t *p_umv_buf);                       /* in-out, optional */

/* IB_SUCCESS, IB_INVALID_MCAST_HANDLE, IB_INVALID_PARAMETER. */
typedef ib_api_status_t (*ci_detach_mcast)(
	const ib_mcast_handle_t h_mcast,                /* in */
	ci_umv_buf_t *p_umv_buf);                       /* in-out, optional */

/* ------------------------------------------------------------------------
 * Local MAD processing, for adapters without agents in hardware.
 * ------------------------------------------------------------------------ */

/* p_mad_in / p_mad_out are MAD_BLOCK_SIZE-byte MADs; the caller owns
 * both.  Kernel only.  IB_SUCCESS, IB_INVALID_CA_HANDLE,
 * IB_INVALID_PORT. */
typedef ib_api_status_t (*ci_local_mad)(
	const ib_ca_handle_t h_ca,                      /* in */
	const uint8_t port_num,                         /* in */
	const void *p_mad_in,                           /* in */
	void *p_mad_out);                               /* out */

/* ------------------------------------------------------------------------
 * The interface a channel adapter driver registers (seed order).
 * vend_id, dev_id, dev_revision and libname describe the user-mode
 * library to load for direct user-mode IO; all zero when there is none.
 * ------------------------------------------------------------------------ */
typedef struct _ci_interface {
	ib_net64_t guid;
	uint32_t vend_id;
	uint16_t dev_id;
	uint16_t dev_revision;
	char libname[MAX_LIB_NAME];
	uint32_t version;                       /* IB_CI_VERSION */

	/* HCA access */
	ci_open_ca open_ca;
	ci_query_ca query_ca;
	ci_modify_ca modify_ca;
	ci_close_ca close_ca;

	/* protection and reliable datagram domains */
	ci_allocate_pd allocate_pd;
	ci_deallocate_pd deallocate_pd;
	ci_allocate_rdd allocate_rdd;
	ci_deallocate_rdd deallocate_rdd;

	/* address vectors */
	ci_create_av create_av;
	ci_query_av query_av;
	ci_modify_av modify_av;
	ci_destroy_av destroy_av;

	/* queue pairs */
	ci_create_qp create_qp;
	ci_create_spl_qp create_spl_qp;
	ci_modify_qp modify_qp;
	ci_query_qp query_qp;
	ci_destroy_qp destroy_qp;

	/* completion queues */
	ci_create_cq create_cq;
	ci_resize_cq resize_cq;
	ci_query_cq query_cq;
	ci_destroy_cq destroy_cq;

	/* end-to-end contexts */
	ci_create_eec create_eec;
	ci_query_eec query_eec;
	ci_modify_eec modify_eec;
	ci_destroy_eec destroy_eec;

	/* memory regions */
	ci_register_mr register_mr;
	ci_register_pmr register_pmr;
	ci_query_mr query_mr;
	ci_modify_mr modify_mr;
	ci_modify_pmr modify_pmr;
	ci_register_smr register_smr;
	ci_deregister_mr deregister_mr;

	/* memory windows */
	ci_create_mw create_mw;
	ci_query_mw query_mw;
	ci_bind_mw bind_mw;
	ci_destroy_mw destroy_mw;

	/* work requests */
	ci_post_send post_send;
	ci_post_recv post_recv;

	/* completions and completion notification */
	ci_poll_cq poll_cq;
	ci_enable_cq_notify enable_cq_notify;

	/* multicast */
	ci_attach_mcast attach_mcast;
	ci_detach_mcast detach_mcast;

	/* local MADs (optional: may be NULL when hw_agents is set) */
	ci_local_mad local_mad;
} ci_interface_t;

/* ------------------------------------------------------------------------
 * Registration with the access layer (kernel mode).
 * ------------------------------------------------------------------------ */

/* Announce a ready HCA; the access layer may call its verbs before this
 * returns.  IB_SUCCESS, IB_INSUFFICIENT_RESOURCES, IB_DUPLICATE_CA (GUID
 * already registered). */
ib_api_status_t ib_register_ca(const ci_interface_t *p_ci);

/* Withdraw the HCA whose GUID p_ci->guid holds; the access layer releases
 * its resources and closes it.  IB_SUCCESS, IB_BUSY (still in use). */
ib_api_status_t ib_deregister_ca(const ci_interface_t *p_ci);

#ifdef __cplusplus
}
#endif

#endif /* NICSIM_IBA_IB_CI_H */
