/*
 * nicsim -- public InfiniBand verbs types (part 1 of 2).
 *
 * The contract is the IB Channel Interface `ib_ci.h` of January 2003
 * (shared/seeds/002): every type, field and status code it names is
 * spelled here as it spells it.  Where the seed only names a type, the
 * layout and values follow the public IBAL `ib_types.h` (OpenIB Linux /
 * Windows access layer, 2003-2005).  Every value nicsim had to pick
 * itself is marked "nicsim choice" below and listed in README.md.
 *
 * Part 2, `iba/ib_types_ext.h` (QP/EEC attributes, work requests,
 * completions, memory registration), is included at the end of this file.
 *
 * Plain C99 and C++; needs only <stddef.h> and <stdint.h>.
 */
#ifndef NICSIM_IBA_IB_TYPES_H
#define NICSIM_IBA_IB_TYPES_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------
 * complib basics that the seed's signatures use.
 * ------------------------------------------------------------------------
 * The seed annotates parameters with IN / OUT / OPTIONAL (empty macros in
 * IBAL's complib).  They are defined here, unless already defined, so that
 * IBAL-style code compiles unchanged.  Define IB_NO_ANNOTATION_MACROS
 * before including this header if your code uses these words otherwise.
 */
#ifndef IB_NO_ANNOTATION_MACROS
#ifndef IN
#define IN
#endif
#ifndef OUT
#define OUT
#endif
#ifndef OPTIONAL
#define OPTIONAL
#endif
#endif /* IB_NO_ANNOTATION_MACROS */

/*
 * boolean_t (ci_enable_cq_notify), uintn_t / intn_t (ci_umv_buf_t).
 * Each typedef sits behind a guard macro so another public header that
 * needs the same complib name (sdp_ti.h uses boolean_t) can share it.
 */
#ifndef CL_BOOLEAN_T_DEFINED
#define CL_BOOLEAN_T_DEFINED
typedef int boolean_t;          /* as IBAL's Linux complib */
#endif
#ifndef TRUE
#define TRUE 1
#endif
#ifndef FALSE
#define FALSE 0
#endif
#ifndef CL_UINTN_T_DEFINED
#define CL_UINTN_T_DEFINED
/* Pointer-sized integers, as complib's uintn_t / intn_t. */
typedef uintptr_t uintn_t;
typedef intptr_t intn_t;
#endif

/* ------------------------------------------------------------------------
 * Network-order integers.  They are plain integers whose bytes are in
 * big-endian (wire) order; convert with cl_hton* / cl_ntoh*.
 * ------------------------------------------------------------------------ */
typedef uint16_t ib_net16_t;
typedef uint32_t ib_net32_t;
typedef uint64_t ib_net64_t;
typedef ib_net64_t ib_gid_prefix_t;

/*
 * Byte-order helpers under IBAL's complib names.  They build or read the
 * value one byte at a time through an unsigned char view, which is valid
 * C and C++ on any host byte order; compilers reduce it to a byte swap
 * (or to nothing on big-endian hosts).
 */
static inline uint16_t cl_hton16(uint16_t host)
{
	ib_net16_t net;
	unsigned char *b = (unsigned char *)&net;
	b[0] = (unsigned char)(host >> 8);
	b[1] = (unsigned char)host;
	return net;
}

static inline uint32_t cl_hton32(uint32_t host)
{
	ib_net32_t net;
	unsigned char *b = (unsigned char *)&net;
	b[0] = (unsigned char)(host >> 24);
	b[1] = (unsigned char)(host >> 16);
	b[2] = (unsigned char)(host >> 8);
	b[3] = (unsigned char)host;
	return net;
}

static inline uint64_t cl_hton64(uint64_t host)
{
	ib_net64_t net;
	unsigned char *b = (unsigned char *)&net;
	int i;
	for (i = 0; i < 8; i++)
		b[i] = (unsigned char)(host >> (56 - 8 * i));
	return net;
}

static inline uint16_t cl_ntoh16(ib_net16_t net)
{
	const unsigned char *b = (const unsigned char *)&net;
	return (uint16_t)(((unsigned)b[0] << 8) | (unsigned)b[1]);
}

static inline uint32_t cl_ntoh32(ib_net32_t net)
{
	const unsigned char *b = (const unsigned char *)&net;
	return ((uint32_t)b[0] << 24) | ((uint32_t)b[1] << 16) |
	       ((uint32_t)b[2] << 8) | (uint32_t)b[3];
}

static inline uint64_t cl_ntoh64(ib_net64_t net)
{
	const unsigned char *b = (const unsigned char *)&net;
	uint64_t host = 0;
	int i;
	for (i = 0; i < 8; i++)
		host = (host << 8) | (uint64_t)b[i];
	return host;
}

/* ------------------------------------------------------------------------
 * Addresses and headers on the wire.  The natural C layout of these three
 * equals the wire layout (16, 40 and 24 bytes); the tests check it.
 * ------------------------------------------------------------------------ */

/* A 128-bit GID, seen as bytes, as prefix + interface id, or as a
 * multicast GID (0xFF flag/scope header + group id). */
typedef union _ib_gid {
	uint8_t raw[16];
	struct _ib_gid_unicast {
		ib_gid_prefix_t prefix;
		ib_net64_t interface_id;
	} unicast;
	struct _ib_gid_multicast {
		uint8_t header[2];
		uint8_t raw_group_id[14];
	} multicast;
} ib_gid_t;

/* Global route header.  resv1 is the payload length and resv2 the next
 * header byte of the wire GRH; IBAL kept those names. */
typedef struct _ib_grh {
	ib_net32_t ver_class_flow;      /* version:4, traffic class:8, flow:20 */
	ib_net16_t resv1;
	uint8_t resv2;
	uint8_t hop_limit;
	ib_gid_t src_gid;
	ib_gid_t dest_gid;
} ib_grh_t;

/* Common header of every management datagram (MAD). */
typedef struct _ib_mad {
	uint8_t base_ver;
	uint8_t mgmt_class;
	uint8_t class_ver;
	uint8_t method;
	ib_net16_t status;
	ib_net16_t class_spec;
	ib_net64_t trans_id;
	ib_net16_t attr_id;
	ib_net16_t resv;
	ib_net32_t attr_mod;
} ib_mad_t;

/* A whole MAD (the buffers ci_local_mad takes) is one 256-byte block. */
#define IB_MAD_BLOCK_SIZE 256
#ifndef MAD_BLOCK_SIZE
#define MAD_BLOCK_SIZE IB_MAD_BLOCK_SIZE        /* IBAL's spelling */
#endif

/* LID ranges, host order. */
#define IB_LID_UCAST_START_HO 0x0001
#define IB_LID_UCAST_END_HO 0xBFFF
#define IB_LID_MCAST_START_HO 0xC000
#define IB_LID_MCAST_END_HO 0xFFFE
#define IB_LID_PERMISSIVE 0xFFFF

/* ------------------------------------------------------------------------
 * Status codes.
 * ------------------------------------------------------------------------
 * Values 0..50 are IBAL's ib_api_status_t of the RD/EEC era, in its order
 * (IB_SUCCESS is zero).  The list is an X-macro so the enum and the name
 * function come from one table.
 */
#define IB_API_STATUS_LIST(X) \
	X(IB_SUCCESS, 0) \
	X(IB_INSUFFICIENT_RESOURCES, 1) \
	X(IB_INSUFFICIENT_MEMORY, 2) \
	X(IB_INVALID_PARAMETER, 3) \
	X(IB_INVALID_SETTING, 4) \
	X(IB_NOT_FOUND, 5) \
	X(IB_TIMEOUT, 6) \
	X(IB_CANCELED, 7) \
	X(IB_INTERRUPTED, 8) \
	X(IB_INVALID_PERMISSION, 9) \
	X(IB_UNSUPPORTED, 10) \
	X(IB_OVERFLOW, 11) \
	X(IB_MAX_MCAST_QPS_REACHED, 12) \
	X(IB_INVALID_QP_STATE, 13) \
	X(IB_INVALID_EEC_STATE, 14) \
	X(IB_INVALID_APM_STATE, 15) \
	X(IB_INVALID_PORT_STATE, 16) \
	X(IB_INVALID_STATE, 17) \
	X(IB_RESOURCE_BUSY, 18) \
	X(IB_INVALID_PKEY, 19) \
	X(IB_INVALID_LKEY, 20) \
	X(IB_INVALID_RKEY, 21) \
	X(IB_INVALID_MAX_WRS, 22) \
	X(IB_INVALID_MAX_SGE, 23) \
	X(IB_INVALID_CQ_SIZE, 24) \
	X(IB_INVALID_SERVICE_TYPE, 25) \
	X(IB_INVALID_GID, 26) \
	X(IB_INVALID_LID, 27) \
	X(IB_INVALID_GUID, 28) \
	X(IB_INVALID_CA_HANDLE, 29) \
	X(IB_INVALID_AV_HANDLE, 30) \
	X(IB_INVALID_CQ_HANDLE, 31) \
	X(IB_INVALID_EEC_HANDLE, 32) \
	X(IB_INVALID_QP_HANDLE, 33) \
	X(IB_INVALID_PD_HANDLE, 34) \
	X(IB_INVALID_MR_HANDLE, 35) \
	X(IB_INVALID_MW_HANDLE, 36) \
	X(IB_INVALID_RDD_HANDLE, 37) \
	X(IB_INVALID_MCAST_HANDLE, 38) \
	X(IB_INVALID_CALLBACK, 39) \
	X(IB_INVALID_AL_HANDLE, 40) \
	X(IB_INVALID_HANDLE, 41) \
	X(IB_ERROR, 42) \
	X(IB_REMOTE_ERROR, 43) \
	X(IB_VERBS_PROCESSING_DONE, 44) \
	X(IB_INVALID_WR_TYPE, 45) \
	X(IB_QP_IN_TIMEWAIT, 46) \
	X(IB_EE_IN_TIMEWAIT, 47) \
	X(IB_INVALID_PORT, 48) \
	X(IB_NOT_DONE, 49) \
	X(IB_UNKNOWN_ERROR, 50) \
	X(IB_DUPLICATE_CA, 51)

#define IB_API_STATUS_ENUMERATOR_(name, value) name = value,
typedef enum _ib_api_status_t {
	IB_API_STATUS_LIST(IB_API_STATUS_ENUMERATOR_)
	/*
	 * The seed's return-value lists also use these spellings, which
	 * IBAL never defined.  nicsim choice: each is another name for
	 * the IBAL code of the same meaning (so code testing either
	 * spelling works; a switch cannot list both).  IB_DUPLICATE_CA
	 * (ib_register_ca) has no IBAL equivalent and got its own value,
	 * 51, after IB_UNKNOWN_ERROR so that 0..50 keep IBAL's values.
	 */
	IB_QP_INVALID_STATE = IB_INVALID_QP_STATE,      /* ci_modify_qp */
	IB_INVALID_PD = IB_INVALID_PD_HANDLE,           /* ci_create_spl_qp */
	IB_INVALID_PMIG_STATE = IB_INVALID_APM_STATE,   /* ci_modify_eec */
	IB_INVALID_ADDR_HANDLE = IB_INVALID_AV_HANDLE,  /* ci_post_send */
	IB_BUSY = IB_RESOURCE_BUSY                      /* ib_deregister_ca */
} ib_api_status_t;
#undef IB_API_STATUS_ENUMERATOR_

/* The enumerator's name ("IB_INVALID_QP_HANDLE"); IBAL's function name.
 * Aliases print as the IBAL name they stand for. */
static inline const char *ib_get_err_str(ib_api_status_t status)
{
	switch (status) {
#define IB_API_STATUS_CASE_(name, value) case name: return #name;
	IB_API_STATUS_LIST(IB_API_STATUS_CASE_)
#undef IB_API_STATUS_CASE_
	default:
		return "IB_UNKNOWN_ERROR";
	}
}

/* ------------------------------------------------------------------------
 * Handles: opaque pointers owned by the verbs provider.
 * ------------------------------------------------------------------------ */
typedef struct _ib_ca *ib_ca_handle_t;
typedef struct _ib_pd *ib_pd_handle_t;
typedef struct _ib_rdd *ib_rdd_handle_t;
typedef struct _ib_mr *ib_mr_handle_t;
typedef struct _ib_mw *ib_mw_handle_t;
typedef struct _ib_qp *ib_qp_handle_t;
typedef struct _ib_eec *ib_eec_handle_t;
typedef struct _ib_cq *ib_cq_handle_t;
typedef struct _ib_av *ib_av_handle_t;
typedef struct _ib_mcast *ib_mcast_handle_t;
/* nicsim choice: another name for the EE context handle (the seed says
 * "EE" and "EEC" for the same object). */
typedef ib_eec_handle_t ib_ee_handle_t;

/* ------------------------------------------------------------------------
 * Asynchronous events (ci_async_event_cb_t).
 * ------------------------------------------------------------------------ */
#define IB_ASYNC_EVENT_LIST(X) \
	X(IB_AE_SQ_ERROR, 1) \
	X(IB_AE_SQ_DRAINED, 2) \
	X(IB_AE_RQ_ERROR, 3) \
	X(IB_AE_CQ_ERROR, 4) \
	X(IB_AE_QP_FATAL, 5) \
	X(IB_AE_QP_COMM, 6) \
	X(IB_AE_QP_APM, 7) \
	X(IB_AE_EEC_FATAL, 8) \
	X(IB_AE_EEC_COMM, 9) \
	X(IB_AE_EEC_APM, 10) \
	X(IB_AE_LOCAL_FATAL, 11) \
	X(IB_AE_PKEY_TRAP, 12) \
	X(IB_AE_QKEY_TRAP, 13) \
	X(IB_AE_MKEY_TRAP, 14) \
	X(IB_AE_PORT_TRAP, 15) \
	X(IB_AE_SYSIMG_GUID_TRAP, 16) \
	X(IB_AE_BUF_OVERRUN, 17) \
	X(IB_AE_LINK_INTEGRITY, 18) \
	X(IB_AE_FLOW_CTRL_ERROR, 19) \
	X(IB_AE_BKEY_TRAP, 20) \
	X(IB_AE_QP_APM_ERROR, 21) \
	X(IB_AE_EEC_APM_ERROR, 22) \
	X(IB_AE_WQ_REQ_ERROR, 23) \
	X(IB_AE_WQ_ACCESS_ERROR, 24) \
	X(IB_AE_PORT_ACTIVE, 25) \
	X(IB_AE_PORT_DOWN, 26) \
	X(IB_AE_UNKNOWN, 27)

#define IB_ASYNC_EVENT_ENUMERATOR_(name, value) name = value,
typedef enum _ib_async_event_t {
	IB_ASYNC_EVENT_LIST(IB_ASYNC_EVENT_ENUMERATOR_)
} ib_async_event_t;
#undef IB_ASYNC_EVENT_ENUMERATOR_

static inline const char *ib_get_async_event_str(ib_async_event_t event)
{
	switch (event) {
#define IB_ASYNC_EVENT_CASE_(name, value) case name: return #name;
	IB_ASYNC_EVENT_LIST(IB_ASYNC_EVENT_CASE_)
#undef IB_ASYNC_EVENT_CASE_
	default:
		return "IB_AE_UNKNOWN";
	}
}

/*
 * What the channel interface hands to ci_async_event_cb_t.  context is the
 * context given when the source was created: ca_context (ci_open_ca) for a
 * port or adapter event, qp_context, cq_context or eec_context otherwise.
 * trap is meaningful only for the *_TRAP events.
 */
typedef struct _ib_event_rec {
	void *context;
	ib_async_event_t type;
	uint64_t vendor_specific;
	union _ib_event_trap {
		struct {
			uint16_t lid;
			ib_net64_t port_guid;
			uint8_t port_num;
			/* P_Key, Q_Key and M_Key violation traps only. */
			struct {
				uint8_t sl;
				uint16_t src_lid;
				uint16_t dest_lid;
				union _ib_event_key {
					uint16_t pkey;
					uint32_t qkey;
					uint64_t mkey;
				} key;
				uint32_t src_qp;
				uint32_t dest_qp;
				ib_gid_t src_gid;
				ib_gid_t dest_gid;
			} violation;
		} info;
		ib_net64_t sysimg_guid;         /* IB_AE_SYSIMG_GUID_TRAP */
	} trap;
} ib_event_rec_t;

/* ------------------------------------------------------------------------
 * Adapter and port attributes (ci_query_ca, ci_modify_ca).
 * ------------------------------------------------------------------------ */

/* How far atomic operations are atomic. */
typedef enum _ib_atomic_t {
	IB_ATOMIC_NONE = 0,     /* not supported */
	IB_ATOMIC_LOCAL = 1,    /* between QPs of this CA only */
	IB_ATOMIC_GLOBAL = 2    /* against every agent in the system */
} ib_atomic_t;

/* Agents and features present on a port (PortInfo:CapabilityMask). */
typedef struct _ib_port_cap {
	boolean_t cm;
	boolean_t snmp;
	boolean_t dev_mgmt;
	boolean_t vend;
	boolean_t sm;
	boolean_t sm_disable;
	boolean_t qkey_ctr;
	boolean_t pkey_ctr;
	boolean_t notice;
	boolean_t trap;
	boolean_t apm;
	boolean_t slmap;
	boolean_t pkey_nvram;
	boolean_t mkey_nvram;
	boolean_t sysguid;
	boolean_t dr_notice;
	boolean_t boot_mgmt;
	boolean_t capm_notice;
	boolean_t reinit;
	boolean_t ledinfo;
	boolean_t port_active;
} ib_port_cap_t;

/* PortInfo:InitType / InitTypeReply bits. */
typedef uint8_t ib_init_type_t;
#define IB_INIT_TYPE_NO_LOAD 0x01
#define IB_INIT_TYPE_PRESERVE_CONTENT 0x02
#define IB_INIT_TYPE_PRESERVE_PRESENCE 0x04
#define IB_INIT_TYPE_DO_NOT_RESUSCITATE 0x08

/* Port (link) states, PortInfo:PortState; ib_port_attr_t.link_state.
 * nicsim choice: the typedef name (IBAL had only the constants). */
typedef uint8_t ib_link_states_t;
#define IB_LINK_NO_CHANGE 0
#define IB_LINK_DOWN 1
#define IB_LINK_INIT 2
#define IB_LINK_ARMED 3
#define IB_LINK_ACTIVE 4
#define IB_LINK_ACT_DEFER 5

/* Port physical states, PortInfo:PortPhysicalState. */
#define IB_PORT_PHYS_STATE_NO_CHANGE 0
#define IB_PORT_PHYS_STATE_SLEEP 1
#define IB_PORT_PHYS_STATE_POLLING 2
#define IB_PORT_PHYS_STATE_DISABLED 3
#define IB_PORT_PHYS_STATE_PORTCONFTRAIN 4
#define IB_PORT_PHYS_STATE_LINKUP 5
#define IB_PORT_PHYS_STATE_LINKERRRECOVER 6
#define IB_PORT_PHYS_STATE_PHYTEST 7

/* Path MTU codes as the wire encodes them (1 = 256 bytes .. 5 = 4096).
 * IBAL spells them IB_MTU_LEN_*; nicsim choice: the enum type ib_mtu_t
 * and the IB_MTU_* names.  Fields that hold an MTU stay uint8_t. */
typedef enum _ib_mtu {
	IB_MTU_256 = 1,
	IB_MTU_512 = 2,
	IB_MTU_1024 = 3,
	IB_MTU_2048 = 4,
	IB_MTU_4096 = 5
} ib_mtu_t;
#define IB_MTU_LEN_256 1
#define IB_MTU_LEN_512 2
#define IB_MTU_LEN_1024 3
#define IB_MTU_LEN_2048 4
#define IB_MTU_LEN_4096 5
#define IB_MIN_MTU IB_MTU_LEN_256
#define IB_MAX_MTU IB_MTU_LEN_4096

/* Port attributes that ci_modify_ca may change (selected by ib_ca_mod_t). */
typedef struct _ib_port_attr_mod {
	ib_port_cap_t cap;
	uint16_t pkey_ctr;
	uint16_t qkey_ctr;
	ib_init_type_t init_type;
	ib_net64_t system_image_guid;
} ib_port_attr_mod_t;

/* One port of a channel adapter. */
typedef struct _ib_port_attr {
	ib_net64_t port_guid;
	uint8_t port_num;
	uint8_t mtu;                    /* IB_MTU_* code */
	uint64_t max_msg_size;
	ib_net16_t lid;
	uint8_t lmc;
	uint8_t link_width_supported;   /* PortInfo:LinkWidthSupported */
	uint16_t max_vls;
	ib_net16_t sm_lid;
	uint8_t sm_sl;
	uint8_t link_state;             /* IB_LINK_* */
	ib_init_type_t init_type_reply;
	uint8_t subnet_timeout;         /* 4.096 us * 2^subnet_timeout */
	ib_port_cap_t cap;
	uint16_t pkey_ctr;
	uint16_t qkey_ctr;
	uint16_t num_gids;
	uint16_t num_pkeys;
	/* Tables follow the structure in the same buffer (see size). */
	ib_gid_t *p_gid_table;
	ib_net16_t *p_pkey_table;
} ib_port_attr_t;

/*
 * Attributes of a channel adapter, as ci_query_ca returns them.  The
 * structure, its page-size array, its port array and each port's GID and
 * P_Key tables are returned in one caller buffer; `size` is the byte count
 * of all of it (what ci_query_ca reports through p_size).
 */
typedef struct _ib_ca_attr {
	ib_net64_t ca_guid;
	uint32_t vend_id;
	uint16_t dev_id;
	uint16_t revision;
	uint64_t fw_ver;
	uint32_t size;
	uint32_t max_qps;
	uint32_t max_wrs;
	uint32_t max_sges;
	uint32_t max_rd_sges;
	uint32_t max_cqs;
	uint32_t max_cqes;
	uint32_t max_pds;
	uint32_t init_regions;
	uint64_t init_region_size;
	uint32_t init_windows;
	uint32_t max_addr_handles;
	uint32_t max_partitions;
	ib_atomic_t atomicity;
	uint8_t max_qp_resp_res;
	uint8_t max_eec_resp_res;
	uint8_t max_resp_res;
	uint8_t max_qp_init_depth;
	uint8_t max_eec_init_depth;
	uint32_t max_eecs;
	uint32_t max_rdds;
	uint32_t max_ipv6_qps;
	uint32_t max_ether_qps;
	uint32_t max_mcast_grps;
	uint32_t max_mcast_qps;
	uint32_t max_qps_per_mcast_grp;
	uint32_t max_fmr;
	uint32_t max_map_per_fmr;
	uint8_t local_ack_delay;        /* 4.096 us * 2^local_ack_delay */
	boolean_t bad_pkey_ctr_support;
	boolean_t bad_qkey_ctr_support;
	boolean_t raw_mcast_support;
	boolean_t apm_support;
	boolean_t av_port_check;
	boolean_t change_primary_port;
	boolean_t modify_wr_depth;
	boolean_t current_qp_state_support;
	boolean_t shutdown_port_capability;
	boolean_t init_type_support;
	boolean_t port_active_event_support;
	boolean_t system_image_guid_support;
	boolean_t hw_agents;            /* SMA/GSA run in the adapter */
	ib_net64_t system_image_guid;
	uint32_t num_page_sizes;
	uint8_t num_ports;
	uint32_t *p_page_size;
	ib_port_attr_t *p_port_attr;
} ib_ca_attr_t;

/* ------------------------------------------------------------------------
 * Address vectors (ci_create_av, ci_modify_av, ci_query_av, QP paths).
 * ------------------------------------------------------------------------ */
typedef struct _ib_av_attr {
	uint8_t port_num;
	uint8_t sl;
	ib_net16_t dlid;
	boolean_t grh_valid;
	ib_grh_t grh;
	uint8_t static_rate;
	uint8_t path_bits;
	/* Used when the vector is a connected QP's path. */
	struct _av_conn {
		uint8_t path_mtu;               /* IB_MTU_* code */
		uint8_t local_ack_timeout;
		uint8_t seq_err_retry_cnt;
		uint8_t rnr_retry_cnt;
	} conn;
} ib_av_attr_t;

/* ------------------------------------------------------------------------
 * Queue pair type, state and access rights.
 * ------------------------------------------------------------------------ */
typedef enum _ib_qp_type {
	IB_QPT_RELIABLE_CONN = 0,       /* = CM REQ transport type */
	IB_QPT_UNRELIABLE_CONN = 1,     /* = CM REQ transport type */
	IB_QPT_RELIABLE_DGRM = 2,       /* = CM REQ transport type */
	IB_QPT_UNRELIABLE_DGRM = 3,
	IB_QPT_QP0 = 4,                 /* SMI, ci_create_spl_qp */
	IB_QPT_QP1 = 5,                 /* GSI, ci_create_spl_qp */
	IB_QPT_RAW_IPV6 = 6,            /* ci_create_spl_qp */
	IB_QPT_RAW_ETHER = 7,           /* ci_create_spl_qp */
	IB_QPT_MAD = 8,                 /* access layer only */
	IB_QPT_QP0_ALIAS = 9,           /* access layer only */
	IB_QPT_QP1_ALIAS = 10           /* access layer only */
} ib_qp_type_t;

/* Access rights of QPs, regions and windows; OR them together. */
typedef uint32_t ib_access_t;
#define IB_AC_RDMA_READ 0x00000001u
#define IB_AC_RDMA_WRITE 0x00000002u
#define IB_AC_ATOMIC 0x00000004u
#define IB_AC_LOCAL_WRITE 0x00000008u
#define IB_AC_MW_BIND 0x00000010u

/* QP (and EEC) states.  IBAL's values are bit masks: the two SQD
 * sub-states both contain IB_QPS_SQD. */
typedef uint32_t ib_qp_state_t;
#define IB_QPS_RESET 0x00000001u
#define IB_QPS_INIT 0x00000002u
#define IB_QPS_RTR 0x00000004u
#define IB_QPS_RTS 0x00000008u
#define IB_QPS_SQD 0x00000010u
#define IB_QPS_SQD_DRAINING 0x00000030u
#define IB_QPS_SQD_DRAINED 0x00000050u
#define IB_QPS_SQERR 0x00000080u
#define IB_QPS_ERROR 0x00000100u
#define IB_QPS_TIME_WAIT 0xDEAD0000u    /* access layer only */

/* Automatic path migration state. */
typedef enum _ib_apm_state {
	IB_APM_MIGRATED = 1,
	IB_APM_REARM = 2,
	IB_APM_ARMED = 3
} ib_apm_state_t;

/*
 * RNR NAK timer codes (IBA vol. 1 table 45); the fields that carry one
 * (ib_qp_mod_t rnr_nak_timeout) are uint8_t.  nicsim choice: the type and
 * constant names (the names give the delay in milliseconds).
 */
typedef uint8_t ib_rnr_nak_timeout_t;
#define IB_RNR_NAK_655_36 0
#define IB_RNR_NAK_0_01 1
#define IB_RNR_NAK_0_02 2
#define IB_RNR_NAK_0_03 3
#define IB_RNR_NAK_0_04 4
#define IB_RNR_NAK_0_06 5
#define IB_RNR_NAK_0_08 6
#define IB_RNR_NAK_0_12 7
#define IB_RNR_NAK_0_16 8
#define IB_RNR_NAK_0_24 9
#define IB_RNR_NAK_0_32 10
#define IB_RNR_NAK_0_48 11
#define IB_RNR_NAK_0_64 12
#define IB_RNR_NAK_0_96 13
#define IB_RNR_NAK_1_28 14
#define IB_RNR_NAK_1_92 15
#define IB_RNR_NAK_2_56 16
#define IB_RNR_NAK_3_84 17
#define IB_RNR_NAK_5_12 18
#define IB_RNR_NAK_7_68 19
#define IB_RNR_NAK_10_24 20
#define IB_RNR_NAK_15_36 21
#define IB_RNR_NAK_20_48 22
#define IB_RNR_NAK_30_72 23
#define IB_RNR_NAK_40_96 24
#define IB_RNR_NAK_61_44 25
#define IB_RNR_NAK_81_92 26
#define IB_RNR_NAK_122_88 27
#define IB_RNR_NAK_163_84 28
#define IB_RNR_NAK_245_76 29
#define IB_RNR_NAK_327_68 30
#define IB_RNR_NAK_491_52 31

#ifdef __cplusplus
}
#endif

#include "ib_types_ext.h"

#endif /* NICSIM_IBA_IB_TYPES_H */
