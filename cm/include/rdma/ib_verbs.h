/*
 * rdma/ib_verbs.h: the openib kernel verbs of Linux 2.6.13, the subset a
 * connection manager abstraction consumer needs: protection domains,
 * address handles, completion queues, queue pairs, the DMA memory region,
 * posting and polling. Names, members, enum values and signatures follow
 * that release; 2.6.13's signatures are the contract.
 *
 * nicsim implements these over the same provider as iba/ib_ci.h (the
 * ci_interface_t of the node's HCA): one provider underneath, two APIs on
 * top. The kernel verbs open the node's CA once, as its consumer instance,
 * so a node uses either these verbs (and the CMA) or ci_interface_t's
 * open_ca, not both.
 *
 * Conventions of this implementation where the kernel leaves a choice:
 *  - Calls return 0 or a negative errno value (-EINVAL for bad arguments
 *    and handles of another node, -ENOMEM when the provider is out of
 *    resources, -EBUSY for objects still in use, -ENODEV when the node has
 *    no HCA); the create calls return NULL instead (2.6.13 returned
 *    ERR_PTR; nicsim consumers test for NULL).
 *  - DMA addresses are node memory addresses (a pointer cast to u64).
 *  - ib_get_dma_mr's lkey is valid for any node memory: the first post of a
 *    buffer through it registers that buffer with the provider (an HCA
 *    command: thread context only); later posts of the same buffer, from
 *    any context, reuse the registration until ib_dereg_mr. It is for
 *    local access: its rkey names no region a peer can reach.
 *  - ib_wc.qp_num is the QP when the CQ serves one QP, else 0.
 *  - Completion handlers (ib_comp_handler) run in the node's interrupt
 *    context; ib_poll_cq, ib_req_notify_cq, ib_post_send and ib_post_recv
 *    (of buffers already registered) may be called there.
 *  - ib_destroy_qp of a QP whose connection the CM holds in timewait keeps
 *    its QP number out of use until the timewait ends (the QP is gone for
 *    the consumer at once).
 *
 * C99 and C++; needs the compat headers linux/types.h and asm/atomic.h.
 */
#ifndef IB_VERBS_H
#define IB_VERBS_H

#include <linux/types.h>
#include <asm/atomic.h>

#ifdef __cplusplus
extern "C" {
#endif

#define IB_DEVICE_NAME_MAX 64

union ib_gid {
	u8 raw[16];
	struct {
		__be64 subnet_prefix;
		__be64 interface_id;
	} global;
};

enum ib_node_type {
	IB_NODE_CA = 1,
	IB_NODE_SWITCH,
	IB_NODE_ROUTER
};

enum ib_mtu {
	IB_MTU_256 = 1,
	IB_MTU_512 = 2,
	IB_MTU_1024 = 3,
	IB_MTU_2048 = 4,
	IB_MTU_4096 = 5
};

enum ib_port_state {
	IB_PORT_NOP = 0,
	IB_PORT_DOWN = 1,
	IB_PORT_INIT = 2,
	IB_PORT_ARMED = 3,
	IB_PORT_ACTIVE = 4,
	IB_PORT_ACTIVE_DEFER = 5
};

enum ib_atomic_cap {
	IB_ATOMIC_NONE,
	IB_ATOMIC_HCA,
	IB_ATOMIC_GLOB
};

struct ib_device_attr {
	u64 fw_ver;
	u64 node_guid;
	u64 sys_image_guid;
	u64 max_mr_size;
	u64 page_size_cap;
	u32 vendor_id;
	u32 vendor_part_id;
	u32 hw_ver;
	int max_qp;
	int max_qp_wr;
	int device_cap_flags;
	int max_sge;
	int max_sge_rd;
	int max_cq;
	int max_cqe;
	int max_mr;
	int max_pd;
	int max_qp_rd_atom;
	int max_ee_rd_atom;
	int max_res_rd_atom;
	int max_qp_init_rd_atom;
	int max_ee_init_rd_atom;
	enum ib_atomic_cap atomic_cap;
	int max_ee;
	int max_rdd;
	int max_mw;
	int max_raw_ipv6_qp;
	int max_raw_ethy_qp;
	int max_mcast_grp;
	int max_mcast_qp_attach;
	int max_total_mcast_qp_attach;
	int max_ah;
	int max_fmr;
	int max_map_per_fmr;
	int max_srq;
	int max_srq_wr;
	int max_srq_sge;
	u16 max_pkeys;
	u8 local_ca_ack_delay;
};

struct ib_port_attr {
	enum ib_port_state state;
	enum ib_mtu max_mtu;
	enum ib_mtu active_mtu;
	int gid_tbl_len;
	u32 port_cap_flags;
	u32 max_msg_sz;
	u32 bad_pkey_cntr;
	u32 qkey_viol_cntr;
	u16 pkey_tbl_len;
	u16 lid;
	u16 sm_lid;
	u8 lmc;
	u8 max_vl_num;
	u8 sm_sl;
	u8 subnet_timeout;
	u8 init_type_reply;
	u8 active_width;
	u8 active_speed;
	u8 phys_state;
};

/* One HCA. nicsim: name is "nicsim_hca0"; `node` identifies the node's
 * provider instance (opaque to consumers). */
struct ib_device {
	char name[IB_DEVICE_NAME_MAX];
	enum ib_node_type node_type;
	u8 phys_port_cnt;
	__be64 node_guid;
	void *node;
};

struct ib_cq;
struct ib_qp;
struct ib_srq;
struct ib_uobject;
struct ib_mad_hdr;

enum ib_event_type {
	IB_EVENT_CQ_ERR,
	IB_EVENT_QP_FATAL,
	IB_EVENT_QP_REQ_ERR,
	IB_EVENT_QP_ACCESS_ERR,
	IB_EVENT_COMM_EST,
	IB_EVENT_SQ_DRAINED,
	IB_EVENT_PATH_MIG,
	IB_EVENT_PATH_MIG_ERR,
	IB_EVENT_DEVICE_FATAL,
	IB_EVENT_PORT_ACTIVE,
	IB_EVENT_PORT_ERR,
	IB_EVENT_LID_CHANGE,
	IB_EVENT_PKEY_CHANGE,
	IB_EVENT_SM_CHANGE
};

struct ib_event {
	struct ib_device *device;
	union {
		struct ib_cq *cq;
		struct ib_qp *qp;
		u8 port_num;
	} element;
	enum ib_event_type event;
};

struct ib_pd {
	struct ib_device *device;
	struct ib_uobject *uobject;
	atomic_t usecnt; /* count all resources */
};

enum ib_ah_flags {
	IB_AH_GRH = 1
};

struct ib_global_route {
	union ib_gid dgid;
	u32 flow_label;
	u8 sgid_index;
	u8 hop_limit;
	u8 traffic_class;
};

struct ib_ah_attr {
	struct ib_global_route grh;
	u16 dlid;
	u8 sl;
	u8 src_path_bits;
	u8 static_rate;
	u8 ah_flags;
	u8 port_num;
};

struct ib_ah {
	struct ib_device *device;
	struct ib_pd *pd;
	struct ib_uobject *uobject;
};

typedef void (*ib_comp_handler)(struct ib_cq *cq, void *cq_context);

struct ib_cq {
	struct ib_device *device;
	struct ib_uobject *uobject;
	ib_comp_handler comp_handler;
	void (*event_handler)(struct ib_event *, void *);
	void *cq_context;
	int cqe;
	atomic_t usecnt; /* count number of work queues */
};

enum ib_cq_notify {
	IB_CQ_SOLICITED,
	IB_CQ_NEXT_COMP
};

enum ib_wc_status {
	IB_WC_SUCCESS,
	IB_WC_LOC_LEN_ERR,
	IB_WC_LOC_QP_OP_ERR,
	IB_WC_LOC_EEC_OP_ERR,
	IB_WC_LOC_PROT_ERR,
	IB_WC_WR_FLUSH_ERR,
	IB_WC_MW_BIND_ERR,
	IB_WC_BAD_RESP_ERR,
	IB_WC_LOC_ACCESS_ERR,
	IB_WC_REM_INV_REQ_ERR,
	IB_WC_REM_ACCESS_ERR,
	IB_WC_REM_OP_ERR,
	IB_WC_RETRY_EXC_ERR,
	IB_WC_RNR_RETRY_EXC_ERR,
	IB_WC_LOC_RDD_VIOL_ERR,
	IB_WC_REM_INV_RD_REQ_ERR,
	IB_WC_REM_ABORT_ERR,
	IB_WC_INV_EECN_ERR,
	IB_WC_INV_EEC_STATE_ERR,
	IB_WC_FATAL_ERR,
	IB_WC_RESP_TIMEOUT_ERR,
	IB_WC_GENERAL_ERR
};

enum ib_wc_opcode {
	IB_WC_SEND,
	IB_WC_RDMA_WRITE,
	IB_WC_RDMA_READ,
	IB_WC_COMP_SWAP,
	IB_WC_FETCH_ADD,
	IB_WC_BIND_MW,
	/* Set value of IB_WC_RECV so consumers can test if a completion is a
	 * receive by testing (opcode & IB_WC_RECV). */
	IB_WC_RECV = 1 << 7,
	IB_WC_RECV_RDMA_WITH_IMM
};

enum ib_wc_flags {
	IB_WC_GRH = 1,
	IB_WC_WITH_IMM = (1 << 1)
};

struct ib_wc {
	u64 wr_id;
	enum ib_wc_status status;
	enum ib_wc_opcode opcode;
	u32 vendor_err;
	u32 byte_len;
	__be32 imm_data;
	u32 qp_num;
	u32 src_qp;
	int wc_flags;
	u16 pkey_index;
	u16 slid;
	u8 sl;
	u8 dlid_path_bits;
};

struct ib_qp_cap {
	u32 max_send_wr;
	u32 max_recv_wr;
	u32 max_send_sge;
	u32 max_recv_sge;
	u32 max_inline_data;
};

enum ib_sig_type {
	IB_SIGNAL_ALL_WR,
	IB_SIGNAL_REQ_WR
};

enum ib_qp_type {
	/* IB_QPT_SMI and IB_QPT_GSI have to be the first two entries here
	 * (and in that order) since the MAD layer uses them as indices into
	 * a 2-entry table. */
	IB_QPT_SMI,
	IB_QPT_GSI,

	IB_QPT_RC,
	IB_QPT_UC,
	IB_QPT_UD,
	IB_QPT_RAW_IPV6,
	IB_QPT_RAW_ETY
};

struct ib_qp_init_attr {
	void (*event_handler)(struct ib_event *, void *);
	void *qp_context;
	struct ib_cq *send_cq;
	struct ib_cq *recv_cq;
	struct ib_srq *srq;
	struct ib_qp_cap cap;
	enum ib_sig_type sq_sig_type;
	enum ib_qp_type qp_type;
	u8 port_num; /* special QP types only */
};

enum ib_access_flags {
	IB_ACCESS_LOCAL_WRITE = 1,
	IB_ACCESS_REMOTE_WRITE = (1 << 1),
	IB_ACCESS_REMOTE_READ = (1 << 2),
	IB_ACCESS_REMOTE_ATOMIC = (1 << 3),
	IB_ACCESS_MW_BIND = (1 << 4)
};

enum ib_qp_attr_mask {
	IB_QP_STATE = 1,
	IB_QP_CUR_STATE = (1 << 1),
	IB_QP_EN_SQD_ASYNC_NOTIFY = (1 << 2),
	IB_QP_ACCESS_FLAGS = (1 << 3),
	IB_QP_PKEY_INDEX = (1 << 4),
	IB_QP_PORT = (1 << 5),
	IB_QP_QKEY = (1 << 6),
	IB_QP_AV = (1 << 7),
	IB_QP_PATH_MTU = (1 << 8),
	IB_QP_TIMEOUT = (1 << 9),
	IB_QP_RETRY_CNT = (1 << 10),
	IB_QP_RNR_RETRY = (1 << 11),
	IB_QP_RQ_PSN = (1 << 12),
	IB_QP_MAX_QP_RD_ATOMIC = (1 << 13),
	IB_QP_ALT_PATH = (1 << 14),
	IB_QP_MIN_RNR_TIMER = (1 << 15),
	IB_QP_SQ_PSN = (1 << 16),
	IB_QP_MAX_DEST_RD_ATOMIC = (1 << 17),
	IB_QP_PATH_MIG_STATE = (1 << 18),
	IB_QP_CAP = (1 << 19),
	IB_QP_DEST_QPN = (1 << 20)
};

enum ib_qp_state {
	IB_QPS_RESET,
	IB_QPS_INIT,
	IB_QPS_RTR,
	IB_QPS_RTS,
	IB_QPS_SQD,
	IB_QPS_SQE,
	IB_QPS_ERR
};

enum ib_mig_state {
	IB_MIG_MIGRATED,
	IB_MIG_REARM,
	IB_MIG_ARMED
};

struct ib_qp_attr {
	enum ib_qp_state qp_state;
	enum ib_qp_state cur_qp_state;
	enum ib_mtu path_mtu;
	enum ib_mig_state path_mig_state;
	u32 qkey;
	u32 rq_psn;
	u32 sq_psn;
	u32 dest_qp_num;
	int qp_access_flags;
	struct ib_qp_cap cap;
	struct ib_ah_attr ah_attr;
	struct ib_ah_attr alt_ah_attr;
	u16 pkey_index;
	u16 alt_pkey_index;
	u8 en_sqd_async_notify;
	u8 sq_draining;
	u8 max_rd_atomic;
	u8 max_dest_rd_atomic;
	u8 min_rnr_timer;
	u8 port_num;
	u8 timeout;
	u8 retry_cnt;
	u8 rnr_retry;
	u8 alt_port_num;
	u8 alt_timeout;
};

enum ib_wr_opcode {
	IB_WR_RDMA_WRITE,
	IB_WR_RDMA_WRITE_WITH_IMM,
	IB_WR_SEND,
	IB_WR_SEND_WITH_IMM,
	IB_WR_RDMA_READ,
	IB_WR_ATOMIC_CMP_AND_SWP,
	IB_WR_ATOMIC_FETCH_AND_ADD
};

enum ib_send_flags {
	IB_SEND_FENCE = 1,
	IB_SEND_SIGNALED = (1 << 1),
	IB_SEND_SOLICITED = (1 << 2),
	IB_SEND_INLINE = (1 << 3)
};

struct ib_sge {
	u64 addr;
	u32 length;
	u32 lkey;
};

struct ib_send_wr {
	struct ib_send_wr *next;
	u64 wr_id;
	struct ib_sge *sg_list;
	int num_sge;
	enum ib_wr_opcode opcode;
	int send_flags;
	__be32 imm_data;
	union {
		struct {
			u64 remote_addr;
			u32 rkey;
		} rdma;
		struct {
			u64 remote_addr;
			u64 compare_add;
			u64 swap;
			u32 rkey;
		} atomic;
		struct {
			struct ib_ah *ah;
			struct ib_mad_hdr *mad_hdr;
			u32 remote_qpn;
			u32 remote_qkey;
			int timeout_ms; /* valid for MADs only */
			int retries;    /* valid for MADs only */
			u8 *search;     /* valid for MADs only */
			u16 pkey_index; /* valid for GSI only */
			u8 port_num;    /* valid for DR SMPs on switch only */
		} ud;
	} wr;
};

struct ib_recv_wr {
	struct ib_recv_wr *next;
	u64 wr_id;
	struct ib_sge *sg_list;
	int num_sge;
};

struct ib_mr {
	struct ib_device *device;
	struct ib_pd *pd;
	struct ib_uobject *uobject;
	u32 lkey;
	u32 rkey;
	atomic_t usecnt; /* count number of MWs */
};

struct ib_mw {
	struct ib_device *device;
	struct ib_pd *pd;
	struct ib_uobject *uobject;
	u32 rkey;
};

struct ib_mw_bind {
	struct ib_mr *mr;
	u64 wr_id;
	u64 addr;
	u32 length;
	int send_flags;
	int mw_access_flags;
};

struct ib_qp {
	struct ib_device *device;
	struct ib_pd *pd;
	struct ib_cq *send_cq;
	struct ib_cq *recv_cq;
	struct ib_srq *srq;
	struct ib_uobject *uobject;
	void (*event_handler)(struct ib_event *, void *);
	void *qp_context;
	u32 qp_num;
	enum ib_qp_type qp_type;
};

/* The CA's limits (0 or -EINVAL). nicsim: max_mr and max_mw share the
 * HCA's memory protection table (each is its size); device_cap_flags 0. */
int ib_query_device(struct ib_device *device, struct ib_device_attr *device_attr);
/* Port and GID queries (0 or -EINVAL). nicsim: GID index 0 only. */
int ib_query_port(struct ib_device *device, u8 port_num, struct ib_port_attr *port_attr);
int ib_query_gid(struct ib_device *device, u8 port_num, int index, union ib_gid *gid);

struct ib_pd *ib_alloc_pd(struct ib_device *device);
/* -EBUSY while QPs, CQs, AHs or MRs of the PD exist. */
int ib_dealloc_pd(struct ib_pd *pd);

struct ib_ah *ib_create_ah(struct ib_pd *pd, struct ib_ah_attr *ah_attr);
int ib_destroy_ah(struct ib_ah *ah);

/* cqe: at least this many entries. */
struct ib_cq *ib_create_cq(struct ib_device *device, ib_comp_handler comp_handler,
			   void (*event_handler)(struct ib_event *, void *), void *cq_context, int cqe);
/* -EBUSY while QPs use the CQ. */
int ib_destroy_cq(struct ib_cq *cq);
/* Arms the CQ: comp_handler runs once for the next completion (any, or
 * solicited with IB_CQ_SOLICITED). */
int ib_req_notify_cq(struct ib_cq *cq, enum ib_cq_notify cq_notify);
/* Returns the number of completions written to wc (0..num_entries), or a
 * negative errno value. */
int ib_poll_cq(struct ib_cq *cq, int num_entries, struct ib_wc *wc);

/* IB_QPT_RC, IB_QPT_UC, IB_QPT_UD; IB_QPT_GSI with port_num (the node's
 * MAD agent holds it while the CM runs). */
struct ib_qp *ib_create_qp(struct ib_pd *pd, struct ib_qp_init_attr *qp_init_attr);
/* The 2.6.13 transition table: the attributes qp_attr_mask names must be
 * the ones the transition requires or allows (-EINVAL otherwise). */
int ib_modify_qp(struct ib_qp *qp, struct ib_qp_attr *qp_attr, int qp_attr_mask);
int ib_query_qp(struct ib_qp *qp, struct ib_qp_attr *qp_attr, int qp_attr_mask,
		struct ib_qp_init_attr *qp_init_attr);
int ib_destroy_qp(struct ib_qp *qp);

struct ib_mr *ib_get_dma_mr(struct ib_pd *pd, int mr_access_flags);

struct ib_phys_buf {
	u64 addr;
	u64 size;
};
/* Registers the buffers as one region starting at *iova_start. nicsim:
 * physical addresses are node memory addresses, the buffers must be
 * contiguous (each starts where the previous ends) and *iova_start must be
 * the first one's address (the region is addressed by its node addresses);
 * NULL otherwise, or when the provider is out of regions. Thread context
 * (an HCA command). The rkey names the region for RDMA and atomics within
 * mr_access_flags. */
struct ib_mr *ib_reg_phys_mr(struct ib_pd *pd, struct ib_phys_buf *phys_buf_array, int num_phys_buf,
			     int mr_access_flags, u64 *iova_start);
int ib_dereg_mr(struct ib_mr *mr);

/* Memory windows. NULL when the provider has no room or pd is not live. */
struct ib_mw *ib_alloc_mw(struct ib_pd *pd);
/* Posts a bind of mw to [addr, addr+length) of mr (a region registered
 * with IB_ACCESS_MW_BIND; length 0 unbinds) on qp's send queue, an RC or UC
 * QP of mw's PD. On success mw->rkey is the window's new rkey, valid once
 * the bind completes (IB_WC_BIND_MW on the send CQ, with mw_bind->wr_id,
 * when IB_SEND_SIGNALED or the QP signals all); the old rkey is refused
 * from then on. 0 or a negative errno value (-EINVAL: bad handles, a range
 * outside mr, another PD; -EACCES: access mr does not allow). nicsim: a
 * function (2.6.13 has it inline, calling the device's bind_mw). */
int ib_bind_mw(struct ib_qp *qp, struct ib_mw *mw, struct ib_mw_bind *mw_bind);
/* 0 or -EINVAL; a bound window goes too (its rkey is refused). */
int ib_dealloc_mw(struct ib_mw *mw);

/* 0, or a negative errno value with *bad_send_wr naming the first request
 * not posted. */
int ib_post_send(struct ib_qp *qp, struct ib_send_wr *send_wr, struct ib_send_wr **bad_send_wr);
int ib_post_recv(struct ib_qp *qp, struct ib_recv_wr *recv_wr, struct ib_recv_wr **bad_recv_wr);

#ifdef __cplusplus
}
#endif

#endif /* IB_VERBS_H */
