/*
 * dat/dat.h: the types and calls common to uDAPL and kDAPL, DAT 1.1
 * (the DAT Collaborative's uDAPL 1.1 specification of 2003; names, members
 * and values as its reference implementation's dat.h has them). Include
 * <dat/udat.h>, which includes this.
 *
 * nicsim's provider (docs/dapl.md): IAs "ib0" / "ib1" are the ports of the
 * node's HCA; an EP is an RC QP of the kernel verbs; connections go through
 * the CM on the wire (the CMA). Where 1.1 leaves a value open, the choice
 * is written beside it.
 */
#ifndef DAT_H
#define DAT_H

#include <dat/dat_error.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum dat_boolean { DAT_FALSE = 0, DAT_TRUE = 1 } DAT_BOOLEAN;

typedef union dat_context {
  DAT_PVOID as_ptr;
  DAT_UINT64 as_64;
  unsigned long as_index;
} DAT_CONTEXT;
typedef DAT_CONTEXT DAT_DTO_COOKIE;
typedef DAT_CONTEXT DAT_RMR_COOKIE;

/* Handles: opaque. nicsim's are numbers checked against the node's tables,
 * so a freed, foreign or invented handle is an error, never a crash. */
typedef void* DAT_HANDLE;
typedef DAT_HANDLE DAT_CR_HANDLE;
typedef DAT_HANDLE DAT_EP_HANDLE;
typedef DAT_HANDLE DAT_EVD_HANDLE;
typedef DAT_HANDLE DAT_IA_HANDLE;
typedef DAT_HANDLE DAT_LMR_HANDLE;
typedef DAT_HANDLE DAT_PSP_HANDLE;
typedef DAT_HANDLE DAT_PZ_HANDLE;
typedef DAT_HANDLE DAT_RMR_HANDLE;
typedef DAT_HANDLE DAT_RSP_HANDLE;
typedef DAT_HANDLE DAT_CNO_HANDLE;
typedef DAT_HANDLE DAT_SP_HANDLE; /* a PSP or an RSP */
#define DAT_HANDLE_NULL ((DAT_HANDLE)NULL)

typedef enum dat_handle_type {
  DAT_HANDLE_TYPE_CR,
  DAT_HANDLE_TYPE_EP,
  DAT_HANDLE_TYPE_EVD,
  DAT_HANDLE_TYPE_IA,
  DAT_HANDLE_TYPE_LMR,
  DAT_HANDLE_TYPE_PSP,
  DAT_HANDLE_TYPE_PZ,
  DAT_HANDLE_TYPE_RMR,
  DAT_HANDLE_TYPE_RSP,
  DAT_HANDLE_TYPE_CNO
} DAT_HANDLE_TYPE;

/* Memory contexts: the IB lkey and rkey. */
typedef DAT_UINT32 DAT_LMR_CONTEXT;
typedef DAT_UINT32 DAT_RMR_CONTEXT;

#define DAT_NAME_MAX_LENGTH 256

typedef struct dat_named_attr {
  const char* name;
  const char* value;
} DAT_NAMED_ATTR;

/* ---- close, completion, connection flags ------------------------------- */
typedef enum dat_close_flags { DAT_CLOSE_ABRUPT_FLAG = 0, DAT_CLOSE_GRACEFUL_FLAG = 1 } DAT_CLOSE_FLAGS;
#define DAT_CLOSE_DEFAULT DAT_CLOSE_ABRUPT_FLAG

typedef enum dat_completion_flags {
  DAT_COMPLETION_DEFAULT_FLAG = 0x00,
  DAT_COMPLETION_UNSIGNALLED_FLAG = 0x01, /* no event on success */
  DAT_COMPLETION_SOLICITED_WAIT_FLAG = 0x02,
  DAT_COMPLETION_EVD_THRESHOLD_FLAG = 0x04,
  DAT_COMPLETION_BARRIER_FENCE_FLAG = 0x08
} DAT_COMPLETION_FLAGS;
#define DAT_COMPLETION_SUPPRESS_FLAG DAT_COMPLETION_UNSIGNALLED_FLAG

typedef enum dat_connect_flags { DAT_CONNECT_DEFAULT_FLAG = 0x00, DAT_CONNECT_MULTIPATH_FLAG = 0x02 } DAT_CONNECT_FLAGS;

typedef enum dat_psp_flags {
  DAT_PSP_CONSUMER_FLAG = 0x00, /* the consumer supplies the EP at accept */
  DAT_PSP_PROVIDER_FLAG = 0x01  /* the provider makes an EP (no PZ, no QP) */
} DAT_PSP_FLAGS;

typedef enum dat_qos {
  DAT_QOS_BEST_EFFORT = 0x00,
  DAT_QOS_HIGH_THROUGHPUT = 0x01,
  DAT_QOS_LOW_LATENCY = 0x02,
  DAT_QOS_ECONOMY = 0x04,
  DAT_QOS_PREMIUM = 0x08
} DAT_QOS;

typedef enum dat_service_type { DAT_SERVICE_TYPE_RC = 0x1 } DAT_SERVICE_TYPE;

/* ---- memory ------------------------------------------------------------ */
typedef enum dat_mem_priv_flags {
  DAT_MEM_PRIV_NONE_FLAG = 0x00,
  DAT_MEM_PRIV_LOCAL_READ_FLAG = 0x01,
  DAT_MEM_PRIV_REMOTE_READ_FLAG = 0x02,
  DAT_MEM_PRIV_LOCAL_WRITE_FLAG = 0x10,
  DAT_MEM_PRIV_REMOTE_WRITE_FLAG = 0x20,
  DAT_MEM_PRIV_ALL_FLAG = 0x33
} DAT_MEM_PRIV_FLAGS;
#define DAT_MEM_PRIV_READ_FLAG (DAT_MEM_PRIV_LOCAL_READ_FLAG | DAT_MEM_PRIV_REMOTE_READ_FLAG)
#define DAT_MEM_PRIV_WRITE_FLAG (DAT_MEM_PRIV_LOCAL_WRITE_FLAG | DAT_MEM_PRIV_REMOTE_WRITE_FLAG)

typedef struct dat_lmr_triplet {
  DAT_LMR_CONTEXT lmr_context;
  DAT_UINT32 pad;
  DAT_VADDR virtual_address;
  DAT_VLEN segment_length;
} DAT_LMR_TRIPLET;

typedef struct dat_rmr_triplet {
  DAT_RMR_CONTEXT rmr_context;
  DAT_UINT32 pad;
  DAT_VADDR target_address;
  DAT_VLEN segment_length;
} DAT_RMR_TRIPLET;

/* ---- endpoints ----------------------------------------------------------- */
typedef enum dat_ep_state {
  DAT_EP_STATE_UNCONNECTED,
  DAT_EP_STATE_RESERVED,
  DAT_EP_STATE_PASSIVE_CONNECTION_PENDING,
  DAT_EP_STATE_ACTIVE_CONNECTION_PENDING,
  DAT_EP_STATE_TENTATIVE_CONNECTION_PENDING,
  DAT_EP_STATE_CONNECTED,
  DAT_EP_STATE_DISCONNECT_PENDING,
  DAT_EP_STATE_DISCONNECTED,
  DAT_EP_STATE_COMPLETION_PENDING
} DAT_EP_STATE;

typedef struct dat_ep_attr {
  DAT_SERVICE_TYPE service_type;
  DAT_VLEN max_mtu_size;  /* largest message (SEND) */
  DAT_VLEN max_rdma_size; /* largest RDMA */
  DAT_QOS qos;
  DAT_COMPLETION_FLAGS recv_completion_flags;
  DAT_COMPLETION_FLAGS request_completion_flags;
  DAT_COUNT max_recv_dtos;
  DAT_COUNT max_request_dtos;
  DAT_COUNT max_recv_iov;
  DAT_COUNT max_request_iov;
  DAT_COUNT max_rdma_read_in;
  DAT_COUNT max_rdma_read_out;
  DAT_COUNT ep_transport_specific_count;
  DAT_NAMED_ATTR* ep_transport_specific;
  DAT_COUNT ep_provider_specific_count;
  DAT_NAMED_ATTR* ep_provider_specific;
} DAT_EP_ATTR;

typedef struct dat_ep_param {
  DAT_IA_HANDLE ia_handle;
  DAT_EP_STATE ep_state;
  DAT_IA_ADDRESS_PTR local_ia_address_ptr;
  DAT_PORT_QUAL local_port_qual;
  DAT_IA_ADDRESS_PTR remote_ia_address_ptr;
  DAT_PORT_QUAL remote_port_qual;
  DAT_PZ_HANDLE pz_handle;
  DAT_EVD_HANDLE recv_evd_handle;
  DAT_EVD_HANDLE request_evd_handle;
  DAT_EVD_HANDLE connect_evd_handle;
  DAT_EP_ATTR ep_attr;
} DAT_EP_PARAM;

typedef enum dat_ep_param_mask {
  DAT_EP_FIELD_IA_HANDLE = 0x00000001,
  DAT_EP_FIELD_EP_STATE = 0x00000002,
  DAT_EP_FIELD_LOCAL_IA_ADDRESS_PTR = 0x00000004,
  DAT_EP_FIELD_LOCAL_PORT_QUAL = 0x00000008,
  DAT_EP_FIELD_REMOTE_IA_ADDRESS_PTR = 0x00000010,
  DAT_EP_FIELD_REMOTE_PORT_QUAL = 0x00000020,
  DAT_EP_FIELD_PZ_HANDLE = 0x00000040,
  DAT_EP_FIELD_RECV_EVD_HANDLE = 0x00000080,
  DAT_EP_FIELD_REQUEST_EVD_HANDLE = 0x00000100,
  DAT_EP_FIELD_CONNECT_EVD_HANDLE = 0x00000200,
  DAT_EP_FIELD_EP_ATTR_SERVICE_TYPE = 0x00000400,
  DAT_EP_FIELD_EP_ATTR_MAX_MESSAGE_SIZE = 0x00000800,
  DAT_EP_FIELD_EP_ATTR_MAX_RDMA_SIZE = 0x00001000,
  DAT_EP_FIELD_EP_ATTR_QOS = 0x00002000,
  DAT_EP_FIELD_EP_ATTR_RECV_COMPLETION_FLAGS = 0x00004000,
  DAT_EP_FIELD_EP_ATTR_REQUEST_COMPLETION_FLAGS = 0x00008000,
  DAT_EP_FIELD_EP_ATTR_MAX_RECV_DTOS = 0x00010000,
  DAT_EP_FIELD_EP_ATTR_MAX_REQUEST_DTOS = 0x00020000,
  DAT_EP_FIELD_EP_ATTR_MAX_RECV_IOV = 0x00040000,
  DAT_EP_FIELD_EP_ATTR_MAX_REQUEST_IOV = 0x00080000,
  DAT_EP_FIELD_EP_ATTR_MAX_RDMA_READ_IN = 0x00100000,
  DAT_EP_FIELD_EP_ATTR_MAX_RDMA_READ_OUT = 0x00200000,
  DAT_EP_FIELD_EP_ATTR_NUM_TRANSPORT_ATTR = 0x00400000,
  DAT_EP_FIELD_EP_ATTR_TRANSPORT_SPECIFIC_ATTR = 0x00800000,
  DAT_EP_FIELD_EP_ATTR_NUM_PROVIDER_ATTR = 0x01000000,
  DAT_EP_FIELD_EP_ATTR_PROVIDER_SPECIFIC_ATTR = 0x02000000,
  DAT_EP_FIELD_EP_ATTR_ALL = 0x03FFFC00,
  DAT_EP_FIELD_ALL = 0x03FFFFFF
} DAT_EP_PARAM_MASK;

/* ---- service points and connection requests --------------------------- */
typedef struct dat_psp_param {
  DAT_IA_HANDLE ia_handle;
  DAT_CONN_QUAL conn_qual;
  DAT_EVD_HANDLE evd_handle;
  DAT_PSP_FLAGS psp_flags;
} DAT_PSP_PARAM;
typedef enum dat_psp_param_mask {
  DAT_PSP_FIELD_IA_HANDLE = 0x01,
  DAT_PSP_FIELD_CONN_QUAL = 0x02,
  DAT_PSP_FIELD_EVD_HANDLE = 0x04,
  DAT_PSP_FIELD_PSP_FLAGS = 0x08,
  DAT_PSP_FIELD_ALL = 0x0F
} DAT_PSP_PARAM_MASK;

typedef struct dat_rsp_param {
  DAT_IA_HANDLE ia_handle;
  DAT_CONN_QUAL conn_qual;
  DAT_EVD_HANDLE evd_handle;
  DAT_EP_HANDLE ep_handle;
} DAT_RSP_PARAM;
typedef enum dat_rsp_param_mask {
  DAT_RSP_FIELD_IA_HANDLE = 0x01,
  DAT_RSP_FIELD_CONN_QUAL = 0x02,
  DAT_RSP_FIELD_EVD_HANDLE = 0x04,
  DAT_RSP_FIELD_EP_HANDLE = 0x08,
  DAT_RSP_FIELD_ALL = 0x0F
} DAT_RSP_PARAM_MASK;

typedef struct dat_cr_param {
  DAT_IA_ADDRESS_PTR remote_ia_address_ptr;
  DAT_PORT_QUAL remote_port_qual;
  DAT_COUNT private_data_size;
  DAT_PVOID private_data;
  DAT_EP_HANDLE local_ep_handle; /* the provider's EP (DAT_PSP_PROVIDER_FLAG) or the RSP's */
} DAT_CR_PARAM;
typedef enum dat_cr_param_mask {
  DAT_CR_FIELD_REMOTE_IA_ADDRESS_PTR = 0x01,
  DAT_CR_FIELD_REMOTE_PORT_QUAL = 0x02,
  DAT_CR_FIELD_PRIVATE_DATA_SIZE = 0x04,
  DAT_CR_FIELD_PRIVATE_DATA = 0x08,
  DAT_CR_FIELD_LOCAL_EP_HANDLE = 0x10,
  DAT_CR_FIELD_ALL = 0x1F
} DAT_CR_PARAM_MASK;

/* ---- protection zones and memory --------------------------------------- */
typedef struct dat_pz_param {
  DAT_IA_HANDLE ia_handle;
} DAT_PZ_PARAM;
typedef enum dat_pz_param_mask { DAT_PZ_FIELD_IA_HANDLE = 0x01, DAT_PZ_FIELD_ALL = 0x01 } DAT_PZ_PARAM_MASK;

typedef struct dat_rmr_param {
  DAT_IA_HANDLE ia_handle;
  DAT_PZ_HANDLE pz_handle;
  DAT_LMR_TRIPLET lmr_triplet;
  DAT_MEM_PRIV_FLAGS mem_priv;
  DAT_RMR_CONTEXT rmr_context;
} DAT_RMR_PARAM;
typedef enum dat_rmr_param_mask {
  DAT_RMR_FIELD_IA_HANDLE = 0x01,
  DAT_RMR_FIELD_PZ_HANDLE = 0x02,
  DAT_RMR_FIELD_LMR_TRIPLET = 0x04,
  DAT_RMR_FIELD_MEM_PRIV = 0x08,
  DAT_RMR_FIELD_RMR_CONTEXT = 0x10,
  DAT_RMR_FIELD_ALL = 0x1F
} DAT_RMR_PARAM_MASK;

/* ---- events -------------------------------------------------------------- */
typedef enum dat_evd_flags {
  DAT_EVD_SOFTWARE_FLAG = 0x01,
  DAT_EVD_CR_FLAG = 0x10,
  DAT_EVD_DTO_FLAG = 0x20,
  DAT_EVD_CONNECTION_FLAG = 0x40,
  DAT_EVD_RMR_BIND_FLAG = 0x80,
  DAT_EVD_ASYNC_FLAG = 0x100,
  DAT_EVD_DEFAULT_FLAG = 0x1F0
} DAT_EVD_FLAGS;

typedef enum dat_evd_state {
  DAT_EVD_STATE_ENABLED = 0x01,
  DAT_EVD_STATE_DISABLED = 0x02,
  DAT_EVD_STATE_WAITABLE = 0x04,
  DAT_EVD_STATE_UNWAITABLE = 0x08
} DAT_EVD_STATE;

typedef struct dat_evd_param {
  DAT_IA_HANDLE ia_handle;
  DAT_COUNT evd_qlen;
  DAT_EVD_STATE evd_state;
  DAT_CNO_HANDLE cno_handle;
  DAT_EVD_FLAGS evd_flags;
} DAT_EVD_PARAM;
typedef enum dat_evd_param_mask {
  DAT_EVD_FIELD_IA_HANDLE = 0x01,
  DAT_EVD_FIELD_EVD_QLEN = 0x02,
  DAT_EVD_FIELD_EVD_STATE = 0x04,
  DAT_EVD_FIELD_CNO = 0x08,
  DAT_EVD_FIELD_EVD_FLAGS = 0x10,
  DAT_EVD_FIELD_ALL = 0x1F
} DAT_EVD_PARAM_MASK;

typedef enum dat_dto_completion_status {
  DAT_DTO_SUCCESS = 0,
  DAT_DTO_ERR_FLUSHED = 1,
  DAT_DTO_ERR_LOCAL_LENGTH = 2,
  DAT_DTO_ERR_LOCAL_EP = 3,
  DAT_DTO_ERR_LOCAL_PROTECTION = 4,
  DAT_DTO_ERR_BAD_RESPONSE = 5,
  DAT_DTO_ERR_REMOTE_ACCESS = 6,
  DAT_DTO_ERR_REMOTE_RESPONDER = 7,
  DAT_DTO_ERR_TRANSPORT = 8,
  DAT_DTO_ERR_RECEIVER_NOT_READY = 9,
  DAT_DTO_ERR_PARTIAL_PACKET = 10,
  DAT_RMR_OPERATION_FAILED = 11
} DAT_DTO_COMPLETION_STATUS;

typedef enum dat_event_number {
  DAT_DTO_COMPLETION_EVENT = 0x00001,
  DAT_RMR_BIND_COMPLETION_EVENT = 0x01001,
  DAT_CONNECTION_REQUEST_EVENT = 0x02001,
  DAT_CONNECTION_EVENT_ESTABLISHED = 0x04001,
  DAT_CONNECTION_EVENT_PEER_REJECTED = 0x04002,
  DAT_CONNECTION_EVENT_NON_PEER_REJECTED = 0x04003,
  DAT_CONNECTION_EVENT_ACCEPT_COMPLETION_ERROR = 0x04004,
  DAT_CONNECTION_EVENT_DISCONNECTED = 0x04005,
  DAT_CONNECTION_EVENT_BROKEN = 0x04006,
  DAT_CONNECTION_EVENT_TIMED_OUT = 0x04007,
  DAT_CONNECTION_EVENT_UNREACHABLE = 0x04008,
  DAT_ASYNC_ERROR_EVD_OVERFLOW = 0x08001,
  DAT_ASYNC_ERROR_IA_CATASTROPHIC = 0x08002,
  DAT_ASYNC_ERROR_EP_BROKEN = 0x08003,
  DAT_ASYNC_ERROR_TIMED_OUT = 0x08004,
  DAT_ASYNC_ERROR_PROVIDER_INTERNAL_ERROR = 0x08005,
  DAT_SOFTWARE_EVENT = 0x10001
} DAT_EVENT_NUMBER;

typedef struct dat_dto_completion_event_data {
  DAT_EP_HANDLE ep_handle;
  DAT_DTO_COOKIE user_cookie;
  DAT_DTO_COMPLETION_STATUS status;
  DAT_VLEN transfered_length; /* the specification's spelling */
} DAT_DTO_COMPLETION_EVENT_DATA;

typedef struct dat_rmr_bind_completion_event_data {
  DAT_RMR_HANDLE rmr_handle;
  DAT_RMR_COOKIE user_cookie;
  DAT_DTO_COMPLETION_STATUS status;
} DAT_RMR_BIND_COMPLETION_EVENT_DATA;

typedef struct dat_cr_arrival_event_data {
  DAT_SP_HANDLE sp_handle;
  DAT_IA_ADDRESS_PTR local_ia_address_ptr;
  DAT_CONN_QUAL conn_qual;
  DAT_CR_HANDLE cr_handle;
} DAT_CR_ARRIVAL_EVENT_DATA;

typedef struct dat_connection_event_data {
  DAT_EP_HANDLE ep_handle;
  DAT_COUNT private_data_size;
  DAT_PVOID private_data; /* valid until the EP's next connection or its free */
} DAT_CONNECTION_EVENT_DATA;

typedef struct dat_asynch_error_event_data {
  DAT_IA_HANDLE ia_handle;
} DAT_ASYNCH_ERROR_EVENT_DATA;

typedef struct dat_software_event_data {
  DAT_PVOID pointer;
} DAT_SOFTWARE_EVENT_DATA;

typedef union dat_event_data {
  DAT_DTO_COMPLETION_EVENT_DATA dto_completion_event_data;
  DAT_RMR_BIND_COMPLETION_EVENT_DATA rmr_completion_event_data;
  DAT_CR_ARRIVAL_EVENT_DATA cr_arrival_event_data;
  DAT_CONNECTION_EVENT_DATA connect_event_data;
  DAT_ASYNCH_ERROR_EVENT_DATA asynch_error_event_data;
  DAT_SOFTWARE_EVENT_DATA software_event_data;
} DAT_EVENT_DATA;

typedef struct dat_event {
  DAT_EVENT_NUMBER event_number;
  DAT_EVD_HANDLE evd_handle;
  DAT_EVENT_DATA event_data;
} DAT_EVENT;

/* ---- calls common to uDAPL and kDAPL ------------------------------------- */
DAT_RETURN dat_set_consumer_context(DAT_HANDLE handle, DAT_CONTEXT context);
DAT_RETURN dat_get_consumer_context(DAT_HANDLE handle, DAT_CONTEXT* context);
DAT_RETURN dat_get_handle_type(DAT_HANDLE handle, DAT_HANDLE_TYPE* handle_type);

DAT_RETURN dat_cr_query(DAT_CR_HANDLE cr_handle, DAT_CR_PARAM_MASK cr_param_mask, DAT_CR_PARAM* cr_param);
DAT_RETURN dat_cr_accept(DAT_CR_HANDLE cr_handle, DAT_EP_HANDLE ep_handle, DAT_COUNT private_data_size,
                         const DAT_PVOID private_data);
DAT_RETURN dat_cr_reject(DAT_CR_HANDLE cr_handle);
/* Out of the reference implementation's scope (the seed: "best done with
 * kernel mediation"): always DAT_NOT_IMPLEMENTED. */
DAT_RETURN dat_cr_handoff(DAT_CR_HANDLE cr_handle, DAT_CONN_QUAL handoff);

DAT_RETURN dat_evd_resize(DAT_EVD_HANDLE evd_handle, DAT_COUNT evd_min_qlen);
DAT_RETURN dat_evd_post_se(DAT_EVD_HANDLE evd_handle, const DAT_EVENT* event);
DAT_RETURN dat_evd_dequeue(DAT_EVD_HANDLE evd_handle, DAT_EVENT* event);
DAT_RETURN dat_evd_free(DAT_EVD_HANDLE evd_handle);
DAT_RETURN dat_evd_query(DAT_EVD_HANDLE evd_handle, DAT_EVD_PARAM_MASK evd_param_mask, DAT_EVD_PARAM* evd_param);

DAT_RETURN dat_ep_create(DAT_IA_HANDLE ia_handle, DAT_PZ_HANDLE pz_handle, DAT_EVD_HANDLE recv_evd_handle,
                         DAT_EVD_HANDLE request_evd_handle, DAT_EVD_HANDLE connect_evd_handle,
                         const DAT_EP_ATTR* ep_attributes, DAT_EP_HANDLE* ep_handle);
DAT_RETURN dat_ep_query(DAT_EP_HANDLE ep_handle, DAT_EP_PARAM_MASK ep_param_mask, DAT_EP_PARAM* ep_param);
DAT_RETURN dat_ep_modify(DAT_EP_HANDLE ep_handle, DAT_EP_PARAM_MASK ep_param_mask, const DAT_EP_PARAM* ep_param);
DAT_RETURN dat_ep_connect(DAT_EP_HANDLE ep_handle, DAT_IA_ADDRESS_PTR remote_ia_address, DAT_CONN_QUAL remote_conn_qual,
                          DAT_TIMEOUT timeout, DAT_COUNT private_data_size, const DAT_PVOID private_data,
                          DAT_QOS quality_of_service, DAT_CONNECT_FLAGS connect_flags);
DAT_RETURN dat_ep_dup_connect(DAT_EP_HANDLE ep_handle, DAT_EP_HANDLE ep_dup_handle, DAT_TIMEOUT timeout,
                              DAT_COUNT private_data_size, const DAT_PVOID private_data, DAT_QOS quality_of_service);
DAT_RETURN dat_ep_disconnect(DAT_EP_HANDLE ep_handle, DAT_CLOSE_FLAGS close_flags);
DAT_RETURN dat_ep_post_send(DAT_EP_HANDLE ep_handle, DAT_COUNT num_segments, DAT_LMR_TRIPLET* local_iov,
                            DAT_DTO_COOKIE user_cookie, DAT_COMPLETION_FLAGS completion_flags);
DAT_RETURN dat_ep_post_recv(DAT_EP_HANDLE ep_handle, DAT_COUNT num_segments, DAT_LMR_TRIPLET* local_iov,
                            DAT_DTO_COOKIE user_cookie, DAT_COMPLETION_FLAGS completion_flags);
DAT_RETURN dat_ep_post_rdma_read(DAT_EP_HANDLE ep_handle, DAT_COUNT num_segments, DAT_LMR_TRIPLET* local_iov,
                                 DAT_DTO_COOKIE user_cookie, const DAT_RMR_TRIPLET* remote_iov,
                                 DAT_COMPLETION_FLAGS completion_flags);
DAT_RETURN dat_ep_post_rdma_write(DAT_EP_HANDLE ep_handle, DAT_COUNT num_segments, DAT_LMR_TRIPLET* local_iov,
                                  DAT_DTO_COOKIE user_cookie, const DAT_RMR_TRIPLET* remote_iov,
                                  DAT_COMPLETION_FLAGS completion_flags);
DAT_RETURN dat_ep_get_status(DAT_EP_HANDLE ep_handle, DAT_EP_STATE* ep_state, DAT_BOOLEAN* recv_idle,
                             DAT_BOOLEAN* request_idle);
DAT_RETURN dat_ep_free(DAT_EP_HANDLE ep_handle);
DAT_RETURN dat_ep_reset(DAT_EP_HANDLE ep_handle);

DAT_RETURN dat_lmr_free(DAT_LMR_HANDLE lmr_handle);

DAT_RETURN dat_rmr_create(DAT_PZ_HANDLE pz_handle, DAT_RMR_HANDLE* rmr_handle);
DAT_RETURN dat_rmr_query(DAT_RMR_HANDLE rmr_handle, DAT_RMR_PARAM_MASK rmr_param_mask, DAT_RMR_PARAM* rmr_param);
DAT_RETURN dat_rmr_bind(DAT_RMR_HANDLE rmr_handle, const DAT_LMR_TRIPLET* lmr_triplet,
                        DAT_MEM_PRIV_FLAGS mem_privileges, DAT_EP_HANDLE ep_handle, DAT_RMR_COOKIE user_cookie,
                        DAT_COMPLETION_FLAGS completion_flags, DAT_RMR_CONTEXT* context);
DAT_RETURN dat_rmr_free(DAT_RMR_HANDLE rmr_handle);

DAT_RETURN dat_psp_create(DAT_IA_HANDLE ia_handle, DAT_CONN_QUAL conn_qual, DAT_EVD_HANDLE evd_handle,
                          DAT_PSP_FLAGS psp_flags, DAT_PSP_HANDLE* psp_handle);
DAT_RETURN dat_psp_query(DAT_PSP_HANDLE psp_handle, DAT_PSP_PARAM_MASK psp_param_mask, DAT_PSP_PARAM* psp_param);
DAT_RETURN dat_psp_free(DAT_PSP_HANDLE psp_handle);

DAT_RETURN dat_rsp_create(DAT_IA_HANDLE ia_handle, DAT_CONN_QUAL conn_qual, DAT_EP_HANDLE ep_handle,
                          DAT_EVD_HANDLE evd_handle, DAT_RSP_HANDLE* rsp_handle);
DAT_RETURN dat_rsp_query(DAT_RSP_HANDLE rsp_handle, DAT_RSP_PARAM_MASK rsp_param_mask, DAT_RSP_PARAM* rsp_param);
DAT_RETURN dat_rsp_free(DAT_RSP_HANDLE rsp_handle);

DAT_RETURN dat_pz_create(DAT_IA_HANDLE ia_handle, DAT_PZ_HANDLE* pz_handle);
DAT_RETURN dat_pz_query(DAT_PZ_HANDLE pz_handle, DAT_PZ_PARAM_MASK pz_param_mask, DAT_PZ_PARAM* pz_param);
DAT_RETURN dat_pz_free(DAT_PZ_HANDLE pz_handle);

/* Names of a return code's type and subtype (static strings). */
DAT_RETURN dat_strerror(DAT_RETURN value, const char** major_message, const char** minor_message);

#ifdef __cplusplus
}
#endif

#endif /* DAT_H */
