/*
 * nicsim -- public InfiniBand verbs types (part 2 of 2).
 *
 * Queue pair and EE context attributes, work requests, work completions
 * and memory registration.  Included by <iba/ib_types.h>; including this
 * file alone gives the same result.  Same sources and conventions as
 * part 1: seed 002 first, IBAL's public ib_types.h where the seed is
 * silent, "nicsim choice" where nicsim picked.
 */
#ifndef NICSIM_IBA_IB_TYPES_EXT_H
#define NICSIM_IBA_IB_TYPES_EXT_H

#include "ib_types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------
 * Queue pairs (ci_create_qp, ci_create_spl_qp, ci_modify_qp, ci_query_qp).
 * ------------------------------------------------------------------------ */

/* Requested shape of a new QP. */
typedef struct _ib_qp_create {
	ib_qp_type_t qp_type;
	ib_rdd_handle_t h_rdd;          /* reliable datagram QPs only */
	uint32_t sq_depth;              /* outstanding send WRs */
	uint32_t rq_depth;              /* outstanding receive WRs */
	uint32_t sq_sge;                /* data segments per send WR */
	uint32_t rq_sge;                /* data segments per receive WR */
	ib_cq_handle_t h_sq_cq;
	ib_cq_handle_t h_rq_cq;
	boolean_t sq_signaled;          /* FALSE: only IB_SEND_OPT_SIGNALED WRs
	                                 * produce a completion */
} ib_qp_create_t;

/* Current attributes of a QP.  num, dest_num, qkey and the PSNs are in
 * network order. */
typedef struct _ib_qp_attr {
	ib_pd_handle_t h_pd;
	ib_qp_type_t qp_type;
	ib_access_t access_ctrl;
	uint16_t pkey_index;
	uint32_t sq_depth;
	uint32_t rq_depth;
	uint32_t sq_sge;
	uint32_t rq_sge;
	uint8_t init_depth;
	uint8_t resp_res;
	ib_cq_handle_t h_sq_cq;
	ib_cq_handle_t h_rq_cq;
	ib_rdd_handle_t h_rdd;
	boolean_t sq_signaled;
	ib_qp_state_t state;
	ib_net32_t num;
	ib_net32_t dest_num;
	ib_net32_t qkey;
	ib_net32_t sq_psn;
	ib_net32_t rq_psn;
	uint8_t primary_port;
	uint8_t alternate_port;
	ib_av_attr_t primary_av;
	ib_av_attr_t alternate_av;
	ib_apm_state_t apm_state;
} ib_qp_attr_t;

/* Which optional fields of an ib_qp_mod_t state block are valid. */
typedef uint32_t ib_qp_opts_t;
#define IB_MOD_QP_ALTERNATE_AV 0x00000001u
#define IB_MOD_QP_PKEY 0x00000002u
#define IB_MOD_QP_APM_STATE 0x00000004u
#define IB_MOD_QP_PRIMARY_AV 0x00000008u
#define IB_MOD_QP_RNR_NAK_TIMEOUT 0x00000010u
#define IB_MOD_QP_RESP_RES 0x00000020u
#define IB_MOD_QP_INIT_DEPTH 0x00000040u
#define IB_MOD_QP_PRIMARY_PORT 0x00000080u
#define IB_MOD_QP_ACCESS_CTRL 0x00000100u
#define IB_MOD_QP_QKEY 0x00000200u
#define IB_MOD_QP_SQ_DEPTH 0x00000400u
#define IB_MOD_QP_RQ_DEPTH 0x00000800u
#define IB_MOD_QP_CURRENT_STATE 0x00001000u
#define IB_MOD_QP_RETRY_CNT 0x00002000u
#define IB_MOD_QP_LOCAL_ACK_TIMEOUT 0x00004000u
#define IB_MOD_QP_RNR_RETRY_CNT 0x00008000u

/*
 * A state change for ci_modify_qp: req_state names the target state and
 * the member of `state` with the same name carries that transition's
 * attributes (required fields always, optional ones when flagged in opts).
 * IB_QPS_ERROR needs none.
 */
typedef struct _ib_qp_mod {
	ib_qp_state_t req_state;
	union _qp_state {
		struct _qp_reset {
			uint32_t timewait;      /* ms to spend in time-wait */
		} reset;
		struct _qp_init {
			ib_qp_opts_t opts;
			uint8_t primary_port;
			ib_net32_t qkey;
			uint16_t pkey_index;
			ib_access_t access_ctrl;
		} init;
		struct _qp_rtr {
			ib_net32_t rq_psn;
			ib_net32_t dest_qp;
			ib_av_attr_t primary_av;
			uint8_t resp_res;
			ib_qp_opts_t opts;
			ib_av_attr_t alternate_av;
			ib_net32_t qkey;
			uint16_t pkey_index;
			ib_access_t access_ctrl;
			uint32_t sq_depth;
			uint32_t rq_depth;
			uint8_t rnr_nak_timeout;        /* ib_rnr_nak_timeout_t */
		} rtr;
		struct _qp_rts {
			ib_net32_t sq_psn;
			uint8_t retry_cnt;
			uint8_t rnr_retry_cnt;
			uint8_t rnr_nak_timeout;        /* ib_rnr_nak_timeout_t */
			uint8_t local_ack_timeout;
			uint8_t init_depth;
			ib_qp_opts_t opts;
			ib_qp_state_t current_state;
			ib_net32_t qkey;
			ib_access_t access_ctrl;
			uint8_t resp_res;
			ib_av_attr_t primary_av;
			ib_av_attr_t alternate_av;
			uint32_t sq_depth;
			uint32_t rq_depth;
			ib_apm_state_t apm_state;
			uint8_t primary_port;
			uint16_t pkey_index;
		} rts;
		struct _qp_sqd {
			boolean_t sqd_event;    /* raise IB_AE_SQ_DRAINED */
		} sqd;
	} state;
} ib_qp_mod_t;

/* ------------------------------------------------------------------------
 * End-to-end contexts for reliable datagram (ci_*_eec).
 * ------------------------------------------------------------------------ */
typedef struct _ib_eec_attr {
	ib_qp_state_t state;
	ib_rdd_handle_t h_rdd;
	ib_net32_t local_eecn;
	ib_net32_t sq_psn;
	ib_net32_t rq_psn;
	uint8_t primary_port;
	uint16_t pkey_index;
	uint32_t resp_res;
	ib_net32_t remote_eecn;
	uint32_t init_depth;
	uint32_t dest_num;
	ib_av_attr_t primary_av;
	ib_av_attr_t alternate_av;
	ib_apm_state_t apm_state;
} ib_eec_attr_t;

typedef uint32_t ib_eec_opts_t;
#define IB_MOD_EEC_ALTERNATE_AV 0x00000001u
#define IB_MOD_EEC_PKEY 0x00000002u
#define IB_MOD_EEC_APM_STATE 0x00000004u
#define IB_MOD_EEC_PRIMARY_AV 0x00000008u
#define IB_MOD_EEC_RNR 0x00000010u
#define IB_MOD_EEC_RESP_RES 0x00000020u
#define IB_MOD_EEC_OUTSTANDING 0x00000040u
#define IB_MOD_EEC_PRIMARY_PORT 0x00000080u

/* A state change for ci_modify_eec, organised as ib_qp_mod_t. */
typedef struct _ib_eec_mod {
	ib_qp_state_t req_state;
	union _eec_state {
		struct _eec_init {
			uint8_t primary_port;
			uint16_t pkey_index;
		} init;
		struct _eec_rtr {
			ib_net32_t rq_psn;
			ib_net32_t remote_eecn;
			ib_av_attr_t primary_av;
			uint8_t resp_res;
			ib_eec_opts_t opts;
			ib_av_attr_t alternate_av;
			uint16_t pkey_index;
		} rtr;
		struct _eec_rts {
			ib_net32_t sq_psn;
			uint8_t retry_cnt;
			uint8_t rnr_retry_cnt;
			uint8_t local_ack_timeout;
			uint8_t init_depth;
			ib_eec_opts_t opts;
			ib_av_attr_t alternate_av;
			ib_apm_state_t apm_state;
			ib_av_attr_t primary_av;
			uint16_t pkey_index;
			uint8_t primary_port;
		} rts;
		struct _eec_sqd {
			boolean_t sqd_event;
		} sqd;
	} state;
} ib_eec_mod_t;

/* ------------------------------------------------------------------------
 * Work requests (ci_post_send, ci_post_recv, ci_bind_mw).
 * ------------------------------------------------------------------------ */

/* Send queue operations.  IBAL spells them WR_*; the IB_WR_* names are a
 * nicsim addition with the same values. */
typedef enum _ib_wr_type_t {
	WR_SEND = 1,
	WR_RDMA_WRITE = 2,
	WR_RDMA_READ = 3,
	WR_COMPARE_SWAP = 4,
	WR_FETCH_ADD = 5,
	IB_WR_SEND = WR_SEND,
	IB_WR_RDMA_WRITE = WR_RDMA_WRITE,
	IB_WR_RDMA_READ = WR_RDMA_READ,
	IB_WR_COMPARE_SWAP = WR_COMPARE_SWAP,
	IB_WR_FETCH_ADD = WR_FETCH_ADD
} ib_wr_type_t;

/* One registered local buffer of a work request. */
typedef struct _ib_local_ds {
	void *vaddr;
	uint32_t length;
	uint32_t lkey;
} ib_local_ds_t;

/* Send options; OR them together. */
typedef uint32_t ib_send_opt_t;
#define IB_SEND_OPT_IMMEDIATE 0x00000001u     /* carry immediate_data */
#define IB_SEND_OPT_FENCE 0x00000002u         /* wait for prior RDMA reads
                                               * and atomics */
#define IB_SEND_OPT_SIGNALED 0x00000004u      /* always complete to the CQ */
#define IB_SEND_OPT_SOLICITED 0x00000008u     /* set the solicited event bit */
#define IB_SEND_OPT_INLINE 0x00000010u        /* copy data at post time */
#define IB_SEND_OPT_LOCAL 0x00000020u         /* MAD to the local agent */
#define IB_SEND_OPT_VEND_MASK 0xFFFF0000u     /* provider-specific bits */
/* The seed (ci_bind_mw) calls the fence option IB_POST_FENCE.
 * nicsim choice: it is IB_SEND_OPT_FENCE. */
#define IB_POST_FENCE IB_SEND_OPT_FENCE

/* A send queue work request; chain several through p_next. */
typedef struct _ib_send_wr {
	struct _ib_send_wr *p_next;
	uint64_t wr_id;
	ib_wr_type_t wr_type;
	ib_send_opt_t send_opt;
	uint32_t num_ds;
	ib_local_ds_t *ds_array;
	ib_net32_t immediate_data;
	/* Destination of datagram QPs, by QP type. */
	union _send_dgrm {
		struct _send_ud {
			ib_net32_t remote_qp;
			ib_net32_t remote_qkey;
			ib_av_handle_t h_av;
		} ud;
		struct _send_rd {
			ib_net32_t remote_qp;
			ib_net32_t remote_qkey;
			ib_net32_t eecn;
		} rd;
		struct _send_raw_ether {
			ib_net16_t dest_lid;
			uint8_t path_bits;
			uint8_t sl;
			uint8_t max_static_rate;
			ib_net16_t ether_type;
		} raw_ether;
		struct _send_raw_ipv6 {
			ib_net16_t dest_lid;
			uint8_t path_bits;
			uint8_t sl;
			uint8_t max_static_rate;
		} raw_ipv6;
	} dgrm;
	/* Target of RDMA and atomic operations.  rkey is passed through
	 * exactly as the remote side gave it. */
	struct _send_remote_ops {
		uint64_t vaddr;
		uint32_t rkey;
		ib_net64_t atomic1;     /* compare value / add value */
		ib_net64_t atomic2;     /* swap value */
	} remote_ops;
} ib_send_wr_t;

/* A receive queue work request; chain several through p_next. */
typedef struct _ib_recv_wr {
	struct _ib_recv_wr *p_next;
	uint64_t wr_id;
	uint32_t num_ds;
	ib_local_ds_t *ds_array;
} ib_recv_wr_t;

/* Binding a memory window to (part of) a region, for ci_bind_mw.
 * local_ds gives the window's address range within h_mr. */
typedef struct _ib_bind_wr {
	uint64_t wr_id;
	ib_send_opt_t send_opt;
	ib_mr_handle_t h_mr;
	ib_access_t access_ctrl;
	uint32_t current_rkey;
	ib_local_ds_t local_ds;
} ib_bind_wr_t;

/* ------------------------------------------------------------------------
 * Work completions (ci_poll_cq).
 * ------------------------------------------------------------------------ */
#define IB_WC_STATUS_LIST(X) \
	X(IB_WCS_SUCCESS, 0) \
	X(IB_WCS_LOCAL_LEN_ERR, 1) \
	X(IB_WCS_LOCAL_OP_ERR, 2) \
	X(IB_WCS_LOCAL_EEC_OP_ERR, 3) \
	X(IB_WCS_LOCAL_PROTECTION_ERR, 4) \
	X(IB_WCS_WR_FLUSHED_ERR, 5) \
	X(IB_WCS_MEM_WINDOW_BIND_ERR, 6) \
	X(IB_WCS_REM_ACCESS_ERR, 7) \
	X(IB_WCS_REM_OP_ERR, 8) \
	X(IB_WCS_RNR_RETRY_ERR, 9) \
	X(IB_WCS_TIMEOUT_RETRY_ERR, 10) \
	X(IB_WCS_REM_INVALID_REQ_ERR, 11) \
	X(IB_WCS_REM_INVALID_RD_REQ_ERR, 12) \
	X(IB_WCS_INVALID_EECN, 13) \
	X(IB_WCS_INVALID_EEC_STATE, 14) \
	X(IB_WCS_UNMATCHED_RESPONSE, 15) \
	X(IB_WCS_CANCELED, 16) \
	X(IB_WCS_UNKNOWN, 17)

#define IB_WC_STATUS_ENUMERATOR_(name, value) name = value,
typedef enum _ib_wc_status_t {
	IB_WC_STATUS_LIST(IB_WC_STATUS_ENUMERATOR_)
	/* ci_destroy_eec: WRs that use a destroyed EE context "complete
	 * IB_INVALID_EE_CONTEXT".  nicsim choice: that completion status is
	 * IB_WCS_INVALID_EECN. */
	IB_INVALID_EE_CONTEXT = IB_WCS_INVALID_EECN
} ib_wc_status_t;
#undef IB_WC_STATUS_ENUMERATOR_

static inline const char *ib_get_wc_status_str(ib_wc_status_t status)
{
	switch (status) {
#define IB_WC_STATUS_CASE_(name, value) case name: return #name;
	IB_WC_STATUS_LIST(IB_WC_STATUS_CASE_)
#undef IB_WC_STATUS_CASE_
	default:
		return "IB_WCS_UNKNOWN";
	}
}

/* What kind of work request completed. */
typedef enum _ib_wc_type_t {
	IB_WC_SEND = 0,
	IB_WC_RDMA_WRITE = 1,
	IB_WC_RECV = 2,
	IB_WC_RDMA_READ = 3,
	IB_WC_MW_BIND = 4,
	IB_WC_FETCH_ADD = 5,
	IB_WC_COMPARE_SWAP = 6,
	IB_WC_RECV_RDMA_WRITE = 7
} ib_wc_type_t;

/* Receive completion flags. */
typedef uint32_t ib_recv_opt_t;
#define IB_RECV_OPT_IMMEDIATE 0x00000001u     /* immediate_data is valid */
#define IB_RECV_OPT_FORWARD 0x00000002u       /* trap to forward to the SM */
#define IB_RECV_OPT_GRH_VALID 0x00000004u     /* buffer starts with a GRH */
#define IB_RECV_OPT_VEND_MASK 0xFFFF0000u     /* provider-specific bits */

/*
 * One work completion.  On error only wr_id and status are meaningful.
 * The recv member to read depends on the QP type the completion came
 * from; the consumer has to know it.
 */
typedef struct _ib_wc {
	struct _ib_wc *p_next;
	uint64_t wr_id;
	ib_wc_type_t wc_type;
	uint32_t length;                /* bytes sent or received */
	ib_wc_status_t status;
	uint64_t vendor_specific;
	union _wc_recv {
		struct _wc_conn {               /* RC and UC */
			ib_recv_opt_t recv_opt;
			ib_net32_t immediate_data;
		} conn;
		struct _wc_ud {
			ib_recv_opt_t recv_opt;
			ib_net32_t immediate_data;
			ib_net32_t remote_qp;
			uint16_t pkey_index;    /* GSI QPs only */
			ib_net16_t remote_lid;
			uint8_t remote_sl;
			uint8_t path_bits;
		} ud;
		struct _wc_rd {
			ib_net32_t remote_eecn;
			ib_net32_t remote_qp;
			ib_net16_t remote_lid;
			uint8_t remote_sl;
			uint32_t free_cnt;      /* free CQ entries left */
		} rd;
		struct _wc_raw_ipv6 {
			ib_net16_t remote_lid;
			uint8_t remote_sl;
			uint8_t path_bits;
		} raw_ipv6;
		struct _wc_raw_ether {
			ib_net16_t remote_lid;
			uint8_t remote_sl;
			uint8_t path_bits;
			ib_net16_t ether_type;
		} raw_ether;
	} recv;
} ib_wc_t;

/* ------------------------------------------------------------------------
 * Memory regions and windows (ci_register_*, ci_modify_*, ci_query_mr).
 * ------------------------------------------------------------------------ */

/* A virtually contiguous region to register. */
typedef struct _ib_mr_create {
	void *vaddr;
	uint64_t length;
	ib_access_t access_ctrl;
} ib_mr_create_t;

/*
 * One physically contiguous range.  nicsim choice: defined for code
 * written against later IBAL; the 2003 ib_phys_create_t below does not
 * use it (it lists one physical address per page in buf_array).
 */
typedef struct _ib_phys_range {
	uint64_t base_addr;
	uint64_t size;
} ib_phys_range_t;

/* Physical pages to register as one virtually contiguous region. */
typedef struct _ib_phys_create {
	uint64_t length;                /* bytes in the region */
	uint32_t num_bufs;              /* entries in buf_array */
	uint64_t *buf_array;            /* physical address of each buffer */
	uint32_t buf_offset;            /* start offset into the first buffer */
	uint32_t page_size;             /* must be one the CA supports */
	ib_access_t access_ctrl;
} ib_phys_create_t;

/* What ci_query_mr returns.  The remote bounds and rkey are meaningful
 * only with remote access enabled. */
typedef struct _ib_mr_attr {
	ib_pd_handle_t h_pd;
	void *local_lb;
	void *local_ub;
	void *remote_lb;
	void *remote_ub;
	ib_access_t access_ctrl;
	uint32_t lkey;
	uint32_t rkey;
} ib_mr_attr_t;

/* Which parts of a region ci_modify_mr / ci_modify_pmr change. */
typedef uint32_t ib_mr_mod_t;
#define IB_MR_MOD_ADDR 0x00000001u
#define IB_MR_MOD_PD 0x00000002u
#define IB_MR_MOD_ACCESS 0x00000004u

/* ------------------------------------------------------------------------
 * ci_modify_ca command mask.
 * ------------------------------------------------------------------------ */
typedef uint32_t ib_ca_mod_t;
#define IB_CA_MOD_IS_CM_SUPPORTED 0x00000001u
#define IB_CA_MOD_IS_SNMP_SUPPORTED 0x00000002u
#define IB_CA_MOD_IS_DEV_MGMT_SUPPORTED 0x00000004u
#define IB_CA_MOD_IS_VEND_SUPPORTED 0x00000008u
#define IB_CA_MOD_IS_SM 0x00000010u
#define IB_CA_MOD_IS_SM_DISABLED 0x00000020u
#define IB_CA_MOD_QKEY_CTR 0x00000040u          /* reset Q_Key counter */
#define IB_CA_MOD_PKEY_CTR 0x00000080u          /* reset P_Key counter */
#define IB_CA_MOD_IS_NOTICE_SUPPORTED 0x00000100u
#define IB_CA_MOD_IS_TRAP_SUPPORTED 0x00000200u
#define IB_CA_MOD_IS_APM_SUPPORTED 0x00000400u
#define IB_CA_MOD_IS_SLMAP_SUPPORTED 0x00000800u
#define IB_CA_MOD_IS_PKEY_NVRAM_SUPPORTED 0x00001000u
#define IB_CA_MOD_IS_MKEY_NVRAM_SUPPORTED 0x00002000u
#define IB_CA_MOD_IS_SYSGUID_SUPPORTED 0x00004000u
#define IB_CA_MOD_IS_DR_NOTICE_SUPPORTED 0x00008000u
#define IB_CA_MOD_IS_BOOT_MGMT_SUPPORTED 0x00010000u
#define IB_CA_MOD_IS_CAPM_NOTICE_SUPPORTED 0x00020000u
#define IB_CA_MOD_IS_REINIT_SUPORTED 0x00040000u  /* sic, IBAL spelling */
#define IB_CA_MOD_IS_LEDINFO_SUPPORTED 0x00080000u
#define IB_CA_MOD_SHUTDOWN_PORT 0x00100000u
#define IB_CA_MOD_INIT_TYPE_VALUE 0x00200000u
#define IB_CA_MOD_SYSTEM_IMAGE_GUID 0x00400000u

/* ------------------------------------------------------------------------
 * Access-layer callback types (ib_al.h) used by verbs consumers.
 * ------------------------------------------------------------------------ */

/* An asynchronous event as the access layer reports it to a consumer.
 * nicsim choice: the handle union also holds an EE context handle. */
typedef struct _ib_async_event_rec {
	ib_async_event_t code;
	uint64_t vendor_specific;
	void *context;
	union _ib_async_handle {
		ib_ca_handle_t h_ca;
		ib_cq_handle_t h_cq;
		ib_qp_handle_t h_qp;
		ib_eec_handle_t h_eec;
	} handle;
} ib_async_event_rec_t;

typedef void (*ib_pfn_comp_cb_t)(const ib_cq_handle_t h_cq, void *cq_context);
typedef void (*ib_pfn_event_cb_t)(ib_async_event_rec_t *p_event_rec);

/* ------------------------------------------------------------------------
 * Other names the seed's prose uses for the types above.
 * nicsim choice: plain aliases, so code that copied them compiles.
 * ------------------------------------------------------------------------ */
typedef ib_eec_attr_t ib_ee_attr_t;     /* ci_query_eec */
typedef ib_qp_attr_t ib_qp_query_t;     /* ci_query_qp */
typedef ib_access_t ib_access_ctrl_t;   /* ci_modify_mr, ci_register_pmr */

#ifdef __cplusplus
}
#endif

#endif /* NICSIM_IBA_IB_TYPES_EXT_H */
