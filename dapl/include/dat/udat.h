/*
 * dat/udat.h: the user DAT API, uDAPL 1.1 (the DAT Collaborative's
 * specification of 05/08/2003; names, members, values and signatures as
 * the 2003 reference implementation's udat.h has them). A consumer
 * includes only this.
 *
 * nicsim's provider (docs/dapl.md has the whole picture):
 *  - IA names: "ib0" is port 1 of the node's HCA, "ib1" port 2. Connections
 *    go through the CM on port 1 (the CMA's port), so an EP of "ib1" can
 *    post and be queried but dat_ep_connect on it is DAT_INVALID_STATE with
 *    DAT_INVALID_STATE_EP_NOTREADY. The IA address is the port's IPv4
 *    address from the scenario (struct sockaddr_in, AF_INET).
 *  - Waiting (dat_evd_wait) happens in simulated time: the calling thread
 *    sleeps until enough events are queued or the timeout (microseconds)
 *    passes, woken by the HCA's completion interrupt or a connection event.
 *  - Every call is made from a thread of the node (not its interrupt
 *    context); handles of another node are invalid handles.
 *  - Errors carry the subtype that names the bad handle, argument or EP
 *    state (DAT_INVALID_HANDLE | DAT_INVALID_HANDLE_EP, ...).
 *
 * C99 and C++.
 */
#ifndef UDAT_H
#define UDAT_H

#include <dat/dat.h>

#ifdef __cplusplus
extern "C" {
#endif

#define DAT_VERSION_MAJOR 1
#define DAT_VERSION_MINOR 1
#define DAT_THREADSAFE DAT_TRUE

typedef enum dat_mem_type {
  DAT_MEM_TYPE_VIRTUAL = 0x00,
  DAT_MEM_TYPE_LMR = 0x01,
  DAT_MEM_TYPE_SHARED_VIRTUAL = 0x02
} DAT_MEM_TYPE;

typedef struct dat_shared_memory {
  DAT_PVOID virtual_address;
  DAT_UINT64 shared_memory_id;
} DAT_SHARED_MEMORY;

typedef union dat_region_description {
  DAT_PVOID for_va;
  DAT_LMR_HANDLE for_lmr_handle;
  DAT_SHARED_MEMORY for_shared_memory;
} DAT_REGION_DESCRIPTION;

typedef struct dat_lmr_param {
  DAT_IA_HANDLE ia_handle;
  DAT_MEM_TYPE mem_type;
  DAT_REGION_DESCRIPTION region_desc;
  DAT_VLEN length;
  DAT_PZ_HANDLE pz_handle;
  DAT_MEM_PRIV_FLAGS mem_priv;
  DAT_LMR_CONTEXT lmr_context;
  DAT_RMR_CONTEXT rmr_context;
  DAT_VLEN registered_size;
  DAT_VADDR registered_address;
} DAT_LMR_PARAM;
typedef enum dat_lmr_param_mask {
  DAT_LMR_FIELD_IA_HANDLE = 0x001,
  DAT_LMR_FIELD_MEM_TYPE = 0x002,
  DAT_LMR_FIELD_REGION_DESC = 0x004,
  DAT_LMR_FIELD_LENGTH = 0x008,
  DAT_LMR_FIELD_PZ_HANDLE = 0x010,
  DAT_LMR_FIELD_MEM_PRIV = 0x020,
  DAT_LMR_FIELD_LMR_CONTEXT = 0x040,
  DAT_LMR_FIELD_RMR_CONTEXT = 0x080,
  DAT_LMR_FIELD_REGISTERED_SIZE = 0x100,
  DAT_LMR_FIELD_REGISTERED_ADDRESS = 0x200,
  DAT_LMR_FIELD_ALL = 0x3FF
} DAT_LMR_PARAM_MASK;

typedef struct dat_ia_attr {
  char adapter_name[DAT_NAME_MAX_LENGTH];
  char vendor_name[DAT_NAME_MAX_LENGTH];
  DAT_UINT32 hardware_version_major;
  DAT_UINT32 hardware_version_minor;
  DAT_UINT32 firmware_version_major;
  DAT_UINT32 firmware_version_minor;
  DAT_IA_ADDRESS_PTR ia_address_ptr;
  DAT_COUNT max_eps;
  DAT_COUNT max_dto_per_ep;
  DAT_COUNT max_rdma_read_per_ep_in;
  DAT_COUNT max_rdma_read_per_ep_out;
  DAT_COUNT max_evds;
  DAT_COUNT max_evd_qlen;
  DAT_COUNT max_iov_segments_per_dto;
  DAT_COUNT max_lmrs;
  DAT_VLEN max_lmr_block_size;
  DAT_VADDR max_lmr_virtual_address;
  DAT_COUNT max_pzs;
  DAT_VLEN max_mtu_size;
  DAT_VLEN max_rdma_size;
  DAT_COUNT max_rmrs;
  DAT_VADDR max_rmr_target_address;
  DAT_COUNT num_transport_attr;
  DAT_NAMED_ATTR* transport_attr;
  DAT_COUNT num_vendor_attr;
  DAT_NAMED_ATTR* vendor_attr;
} DAT_IA_ATTR;
typedef DAT_UINT64 DAT_IA_ATTR_MASK;
#define DAT_IA_ALL ((DAT_IA_ATTR_MASK)0xFFFFFFFFFFFFFFFFULL)

typedef enum dat_iov_ownership {
  DAT_IOV_CONSUMER = 0x0,
  DAT_IOV_PROVIDER_NOMOD = 0x1,
  DAT_IOV_PROVIDER_MOD = 0x2
} DAT_IOV_OWNERSHIP;

typedef enum dat_ep_creator_for_psp {
  DAT_PSP_CREATES_EP_NEVER,
  DAT_PSP_CREATES_EP_IFASKED,
  DAT_PSP_CREATES_EP_ALWAYS
} DAT_EP_CREATOR_FOR_PSP;

#define DAT_EVD_STREAMS 6 /* the stream kinds: rows and columns of evd_stream_merging_supported */

typedef struct dat_provider_attr {
  char provider_name[DAT_NAME_MAX_LENGTH];
  DAT_UINT32 provider_version_major;
  DAT_UINT32 provider_version_minor;
  DAT_UINT32 dapl_version_major;
  DAT_UINT32 dapl_version_minor;
  DAT_MEM_TYPE lmr_mem_types_supported;
  DAT_IOV_OWNERSHIP iov_ownership_on_return;
  DAT_QOS dat_qos_supported;
  DAT_COMPLETION_FLAGS completion_flags_supported;
  DAT_BOOLEAN is_thread_safe;
  DAT_COUNT max_private_data_size; /* the smallest of what a REQ and a REP carry: 92 */
  DAT_BOOLEAN supports_multipath;
  DAT_EP_CREATOR_FOR_PSP ep_creator;
  DAT_UINT32 optimal_buffer_alignment;
  DAT_BOOLEAN evd_stream_merging_supported[DAT_EVD_STREAMS][DAT_EVD_STREAMS];
  DAT_COUNT num_provider_specific_attr;
  DAT_NAMED_ATTR* provider_specific_attr;
} DAT_PROVIDER_ATTR;
typedef DAT_UINT64 DAT_PROVIDER_ATTR_MASK;
#define DAT_PROVIDER_FIELD_ALL ((DAT_PROVIDER_ATTR_MASK)0xFFFFFFFFFFFFFFFFULL)

typedef struct dat_provider_info {
  char ia_name[DAT_NAME_MAX_LENGTH];
  DAT_UINT32 dapl_version_major;
  DAT_UINT32 dapl_version_minor;
  DAT_BOOLEAN is_thread_safe;
} DAT_PROVIDER_INFO;

/* ---- interface adapters ------------------------------------------------- */
/* *async_evd_handle: DAT_HANDLE_NULL asks the provider for an async EVD of
 * async_evd_min_qlen entries (returned here); otherwise an EVD the
 * consumer made with DAT_EVD_ASYNC_FLAG on... no IA yet, so only NULL is
 * accepted (DAT_INVALID_HANDLE | DAT_INVALID_HANDLE_EVD_ASYNC). */
DAT_RETURN dat_ia_openv(const DAT_NAME_PTR ia_name, DAT_COUNT async_evd_min_qlen, DAT_EVD_HANDLE* async_evd_handle,
                        DAT_IA_HANDLE* ia_handle, DAT_UINT32 dapl_major, DAT_UINT32 dapl_minor,
                        DAT_BOOLEAN thread_safety);
#define dat_ia_open(name, qlen, async_evd, ia) \
  dat_ia_openv((name), (qlen), (async_evd), (ia), DAT_VERSION_MAJOR, DAT_VERSION_MINOR, DAT_THREADSAFE)
/* DAT_CLOSE_ABRUPT_FLAG frees everything the IA still has (EPs are
 * disconnected abruptly); DAT_CLOSE_GRACEFUL_FLAG is DAT_INVALID_STATE |
 * DAT_INVALID_STATE_IA_IN_USE while anything but its own async EVD lives. */
DAT_RETURN dat_ia_close(DAT_IA_HANDLE ia_handle, DAT_CLOSE_FLAGS close_flags);
DAT_RETURN dat_ia_query(DAT_IA_HANDLE ia_handle, DAT_EVD_HANDLE* async_evd_handle, DAT_IA_ATTR_MASK ia_attr_mask,
                        DAT_IA_ATTR* ia_attr, DAT_PROVIDER_ATTR_MASK provider_attr_mask,
                        DAT_PROVIDER_ATTR* provider_attr);

/* The IAs of the calling node ("ib0", and "ib1" on a two-port HCA). */
DAT_RETURN dat_registry_list_providers(DAT_COUNT max_to_return, DAT_COUNT* entries_returned,
                                       DAT_PROVIDER_INFO*(dat_provider_list[]));

/* ---- consumer notification objects ---------------------------------------- */
/* The OS wait proxy agent: called as proxy_agent_func(instance_data, evd)
 * when its CNO is triggered (nicsim: in the context that triggered it,
 * often the node's interrupt context, so it must not block). */
typedef void (*DAT_AGENT_FUNC)(DAT_PVOID, DAT_EVD_HANDLE);
typedef struct dat_os_wait_proxy_agent {
  DAT_PVOID instance_data;
  DAT_AGENT_FUNC proxy_agent_func;
} DAT_OS_WAIT_PROXY_AGENT;
#define DAT_OS_WAIT_PROXY_AGENT_NULL ((DAT_OS_WAIT_PROXY_AGENT){(DAT_PVOID)NULL, (DAT_AGENT_FUNC)NULL})

typedef struct dat_cno_param {
  DAT_IA_HANDLE ia_handle;
  DAT_OS_WAIT_PROXY_AGENT agent;
} DAT_CNO_PARAM;
typedef enum dat_cno_param_mask {
  DAT_CNO_FIELD_IA_HANDLE = 0x1,
  DAT_CNO_FIELD_AGENT = 0x2,
  DAT_CNO_FIELD_ALL = 0x3
} DAT_CNO_PARAM_MASK;

/* A CNO is triggered when an event reaches an enabled EVD of it that no
 * thread waits on (dat_evd_wait comes first), and found triggered by
 * dat_cno_wait while such an EVD still holds events; dat_cno_wait returns
 * that EVD (the events stay on it) or DAT_TIMEOUT_EXPIRED; a CNO freed under a
 * waiter is DAT_INVALID_STATE | DAT_INVALID_STATE_CNO_DEAD. Freeing one
 * that EVDs or a waiter use is DAT_INVALID_STATE_CNO_IN_USE. */
DAT_RETURN dat_cno_create(DAT_IA_HANDLE ia_handle, DAT_OS_WAIT_PROXY_AGENT agent, DAT_CNO_HANDLE* cno_handle);
DAT_RETURN dat_cno_modify_agent(DAT_CNO_HANDLE cno_handle, DAT_OS_WAIT_PROXY_AGENT agent);
DAT_RETURN dat_cno_query(DAT_CNO_HANDLE cno_handle, DAT_CNO_PARAM_MASK cno_param_mask, DAT_CNO_PARAM* cno_param);
DAT_RETURN dat_cno_free(DAT_CNO_HANDLE cno_handle);
DAT_RETURN dat_cno_wait(DAT_CNO_HANDLE cno_handle, DAT_TIMEOUT timeout, DAT_EVD_HANDLE* evd_handle);

/* ---- event dispatchers -------------------------------------------------- */
/* cno_handle: DAT_HANDLE_NULL or a CNO of the same IA. A DTO EVD owns a
 * CQ of evd_min_qlen entries. */
DAT_RETURN dat_evd_create(DAT_IA_HANDLE ia_handle, DAT_COUNT evd_min_qlen, DAT_CNO_HANDLE cno_handle,
                          DAT_EVD_FLAGS evd_flags, DAT_EVD_HANDLE* evd_handle);
/* Waits (simulated time) until `threshold` events are queued, then
 * dequeues the first into *event; *nmore: how many are left. timeout in
 * microseconds: DAT_TIMEOUT_EXPIRED when it passes. threshold must be 1..qlen. */
DAT_RETURN dat_evd_wait(DAT_EVD_HANDLE evd_handle, DAT_TIMEOUT timeout, DAT_COUNT threshold, DAT_EVENT* event,
                        DAT_COUNT* nmore);
/* Attaches the EVD to a CNO (DAT_HANDLE_NULL: detaches it). */
DAT_RETURN dat_evd_modify_cno(DAT_EVD_HANDLE evd_handle, DAT_CNO_HANDLE cno_handle);
DAT_RETURN dat_evd_enable(DAT_EVD_HANDLE evd_handle);
DAT_RETURN dat_evd_disable(DAT_EVD_HANDLE evd_handle);
DAT_RETURN dat_evd_set_unwaitable(DAT_EVD_HANDLE evd_handle);
DAT_RETURN dat_evd_clear_unwaitable(DAT_EVD_HANDLE evd_handle);

/* ---- local memory regions ------------------------------------------------ */
/* DAT_MEM_TYPE_VIRTUAL (region_description.for_va) and DAT_MEM_TYPE_LMR
 * (another LMR's region, shared); the region must lie in node memory. */
DAT_RETURN dat_lmr_create(DAT_IA_HANDLE ia_handle, DAT_MEM_TYPE mem_type, DAT_REGION_DESCRIPTION region_description,
                          DAT_VLEN length, DAT_PZ_HANDLE pz_handle, DAT_MEM_PRIV_FLAGS privileges,
                          DAT_LMR_HANDLE* lmr_handle, DAT_LMR_CONTEXT* lmr_context, DAT_RMR_CONTEXT* rmr_context,
                          DAT_VLEN* registered_length, DAT_VADDR* registered_address);
DAT_RETURN dat_lmr_query(DAT_LMR_HANDLE lmr_handle, DAT_LMR_PARAM_MASK lmr_param_mask, DAT_LMR_PARAM* lmr_param);

#ifdef __cplusplus
}
#endif

#endif /* UDAT_H */
