/*
 * sdp_ti.h: the SDP Transport Interface (Intel, 2002): every type, event,
 * status and operation of the interface, with the names, fields, field
 * order and signatures the interface description gives them.
 *
 * Values and choices the description leaves open, as nicsim makes them
 * (each is repeated at its place below):
 *  - boolean_t is an int with TRUE 1 and FALSE 0; IN and OUT are empty.
 *  - ti_debug_level_t: TI_DBG_OFF 0, TI_DBG_STD, TI_DBG_VERBOSE, TI_DBG_DEBUG.
 *  - IP addresses in ti_inet_addr_t are in host order (create_endpoint's
 *    parameter description); ports too.
 *  - RDMA data elements (TI_RES_POOL_RDMA): io_buffer_array.rdata holds
 *    num_io_bufs remote descriptors; TI_RDMA_LOCAL_DESC(element) is the
 *    parallel array of num_io_bufs local buffers (the pool's, or the
 *    consumer's registered memory). Transfer i moves local buffer i
 *    (byte_count bytes) to or from remote descriptor i.
 *  - A local buffer in the consumer's own registered memory names its
 *    region by the rkey reg_virt_mem or reg_phys_mem returned in
 *    ti_rdma_desc_t (lkey = that rkey): the interface returns no other key.
 *  - atomic_op takes an RDMA element: remote descriptor 0 names the 8-byte
 *    target; local buffer 0 (at least 16 bytes) holds the operands as two
 *    host-order uint64_t (compare or add, then swap) and receives the
 *    remote's former 8-byte value. The hardware's atomics are 64-bit.
 *  - oob_data is sent as the message's immediate data when oob_data_len is
 *    4 (a send with immediate; an RDMA write with immediate consumes a
 *    receive at the peer); 0 sends none.
 *  - private data: a connect carries up to 92 bytes (the CM REQ's private
 *    data), an accept's reply up to 196 (the REP's), a reject up to 148
 *    (the REJ's); a connection request callback sees the whole field of
 *    the message (private_data_len is its size).
 *  - io_ctl(TI_GET_CONN_PROFILE): p_data is a ti_conn_profile_t of the
 *    connection handle *(ti_conn_handle_t *)p_data names (see below).
 *  - strdup is the C library's: it is not declared again here.
 *  - CN_MRA: a connect's callback hears it, with status TI_PENDING, when
 *    the passive side acknowledged the request with an MRA (it answers
 *    later); nothing is to be accepted or rejected for it, CN_REPLY or
 *    CN_REJECT follows.
 *  - msg_flow_control TRUE: the transport sends a message only while the
 *    peer has a receive posted for it (credits; a send waiting for one is
 *    TI_PENDING); FALSE: the consumer paces its sends, and an overrun is
 *    retried by the hardware (RNR) until the peer posts a receive.
 *  - debug_svc: every build is a debug build; the messages go to the
 *    simulation's trace (component "api", event "ti_log").
 *
 * C99 and C++; needs linux/types.h, linux/in.h and linux/in6.h (the
 * compatibility headers installed with this one).
 */
#ifndef SDP_TI_H
#define SDP_TI_H

#include <stddef.h>
#include <stdint.h>
#include <linux/types.h>
#include <linux/in.h>
#include <linux/in6.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The interface's conventions (nicsim's definitions). */
#ifndef IN
#define IN
#endif
#ifndef OUT
#define OUT
#endif
#ifndef TRUE
#define TRUE 1
#endif
#ifndef FALSE
#define FALSE 0
#endif
typedef int boolean_t;
typedef unsigned char unchar;

/* Debug levels of debug_svc (named by the interface, values nicsim's). */
typedef enum { TI_DBG_OFF = 0, TI_DBG_STD, TI_DBG_VERBOSE, TI_DBG_DEBUG } ti_debug_level_t;

/* ---- opaque handles ------------------------------------------------------ */
typedef struct net_device net_device_t;
typedef struct _ti_handle* ti_handle_t;
typedef struct _ti_cq_handle* ti_cq_handle_t;
typedef struct _ti_endpoint_handle* ti_endpoint_handle_t;
typedef struct _ti_pd_handle* ti_pd_handle_t;
typedef struct _ti_conn_handle* ti_conn_handle_t;
typedef struct _ti_mem_handle* ti_mem_handle_t;
typedef struct _ti_res_pool_handle* ti_res_pool_handle_t;
/* Listed among the handles; no operation of the interface uses it. */
typedef struct _ti_mem_win_handle* ti_mem_win_handle_t;

/* ---- status and events --------------------------------------------------- */
typedef enum {
  /*
   * Generic Errors
   */
  TI_NO_STATUS = -1,
  TI_SUCCESS = 0,
  TI_PENDING,
  TI_INSUFFICIENT_RESOURCES,
  TI_INSUFFICIENT_MEMORY,
  TI_INVALID_PARAMETER,
  TI_INVALID_PERMISSION,
  TI_INVALID_ADDRESS,
  TI_INVALID_HANDLE,
  TI_INVALID_SETTING,
  TI_INVALID_OPERATION,
  TI_UNSUPPORTED,
  TI_RESOURCE_BUSY,
  TI_REJECTED,
  TI_CANCELED,
  TI_TIMEOUT,
  TI_CQ_ERROR,
  TI_CQ_OVERRUN_ERROR,
  TI_NOT_FOUND,
  TI_ERROR
} ti_status_t;

typedef struct _ti_err_rec {
  ti_status_t code;
  void* context;
} ti_err_rec_t;

typedef enum {
  TI_EVENT_NONE = 0,
  /* Network device - linux/notifier.h */
  TI_EVENT_NETDEV_ONLINE,
  TI_EVENT_NETDEV_UP,
  TI_EVENT_NETDEV_DOWN,
  TI_EVENT_NETDEV_REBOOT,
  TI_EVENT_NETDEV_CHANGE,
  TI_EVENT_NETDEV_REGISTER,
  TI_EVENT_NETDEV_UNREGISTER,
  TI_EVENT_NETDEV_CHANGEMTU,
  TI_EVENT_NETDEV_CHANGEADDR,
  TI_EVENT_NETDEV_GOING_DOWN,
  TI_EVENT_NETDEV_CHANGENAME,
  /* system events - linux/notifier.h */
  TI_EVENT_SYS_DOWN,
  TI_EVENT_SYS_RESTART,
  TI_EVENT_SYS_HALT,
  TI_EVENT_SYS_POWER_OFF,
  /* IPv4 route events - linux/route.h */
  TI_EVENT_RTF_UP,
  TI_EVENT_RTF_GATEWAY,
  TI_EVENT_RTF_HOST,
  TI_EVENT_RTF_REINSTATE,
  TI_EVENT_RTF_DYNAMIC,
  TI_EVENT_RTF_MODIFIED,
  TI_EVENT_RTF_MTU,
  TI_EVENT_RTF_MSS,
  TI_EVENT_RTF_WINDOW,
  TI_EVENT_RTF_IRTT,
  TI_EVENT_RTF_REJECT,
  /* IPv6 route events - linux/ipv6_route.h */
  TI_EVENT_RTF_DEFAULT,
  TI_EVENT_RTF_ALLONLINK,
  TI_EVENT_RTF_ADDRCONF,
  TI_EVENT_RTF_NONEXTHOP,
  TI_EVENT_RTF_EXPIRES,
  TI_EVENT_RTF_CACHE,
  TI_EVENT_RTF_FLOW,
  TI_EVENT_RTF_POLICY,
  TI_EVENT_RTF_LOCAL,
  TI_EVENT_RTMSG_NEWDEVICE,
  TI_EVENT_RTMSG_DELDEVICE,
  TI_EVENT_RTMSG_NEWROUTE,
  TI_EVENT_RTMSG_DELROUTE,
  /* TI (Transport Interface) Events */
  TI_EVENT_TI_SHUTDOWN,   /* data == char* transport_name */
  TI_EVENT_PROTO_SHUTDOWN /* data == char* SDP shutdown reason */
} ti_event_t;

typedef void (*ti_event_cb_t)(IN const ti_event_t event, IN const void* p_data, IN const void* p_context);

/* ---- addresses ----------------------------------------------------------- */
typedef enum { TI_ADDR_IPV4, TI_ADDR_IPV6 } ti_addr_fmt_t;

typedef struct _ti_addr_ {
  union {
    struct in6_addr in6;
    struct in_addr in4;
  } inet_u;
#define ipv4_addr inet_u.in4.s_addr
#define ipv6_saddr32 inet_u.in6.s6_addr32
  ti_addr_fmt_t IP_addr_type; /* IPv4 or IPv6 ? */
} ti_inet_addr_t;

#define SET_IPV4_ADDR(w, h) \
  w.ipv4_addr = (h);        \
  w.IP_addr_type = TI_ADDR_IPV4

typedef uint16_t ti_port_t;

typedef enum {
  TI_GET_CONN_PROFILE,
} ti_ioctl_t;

typedef enum { TI_ATOMIC_COMPARE_SWAP, TI_ATOMIC_FETCH_ADD } ti_atomic_op_t;

typedef enum { TI_MEM_READ = 0, TI_MEM_WRITE, TI_MEM_READ_WRITE } ti_access_t;

typedef enum {
  TI_RES_POOL_MSG,
  TI_RES_POOL_RDMA,
} ti_res_pool_type_t;

typedef uint32_t ti_region_key_t;

typedef struct _ti_rdma_desc {
  uint64_t vaddr;
  ti_region_key_t rkey;
} ti_rdma_desc_t;

typedef struct _local_data_desc {
  void* vaddr;
  ti_region_key_t lkey;
  uint64_t byte_count;
} ti_local_data_desc_t;

typedef uint32_t ti_msg_opt_t;
#define TI_OPT_IMMEDIATE 0x00000001
#define TI_OPT_FENCE 0x00000002
#define TI_OPT_SIGNALED 0x00000004
#define TI_OPT_SOLICITED 0x00000008

typedef struct _ti_data_element {
  struct _ti_data_element* p_next_msg;
  uint32_t num_io_bufs;
  union {
    ti_local_data_desc_t* ldata;
    ti_rdma_desc_t* rdata;
  } io_buffer_array;
#define local_data_desc io_buffer_array.ldata
#define rdma_data_desc io_buffer_array.rdata
  ti_res_pool_type_t pool_type;
  void* p_context;
  /* Message options, SEND and RDMA Write */
  ti_msg_opt_t msg_opt;
  /* Out-Of-Band Data & length. */
  uint32_t oob_data_len;
  uint32_t oob_data;
  /* Completion information */
  ti_status_t status;
  uint32_t recv_byte_count;
  uint32_t ud_offset;
  boolean_t iodone;
  /* opaque transport data - do not touch! */
  void* otd;
} ti_data_element_t;

/* nicsim: the local buffers of an RDMA element (see the first comment).
 * The transport keeps the array's address first in the element's otd. */
#define TI_RDMA_LOCAL_DESC(p_elem) (*(ti_local_data_desc_t**)((p_elem)->otd))

/* ---- connections --------------------------------------------------------- */
typedef struct _ti_conn_request {
  ti_conn_handle_t conn_handle;
  ti_status_t status;
  uint16_t caller;  /* 0 == connect(), 1 == listen() */
  uint16_t cb_type; /* CN_{REQUEST,REPLY,REJECT,MRA} */
  void* context;    /* from conn_info->context */
  uint32_t private_data_len;
  void* private_data;
  uint16_t private_data_offset;
  uint16_t private_data_offset_len;
} ti_conn_request_t;

#define CN_REQUEST 0x3232 /* connection request message */
#define CN_REPLY 0x3233   /* connection request 'reply' message */
#define CN_REJECT 0x3234  /* connection rejection message */
#define CN_MRA 0x3235     /* message received acknowledgement */

typedef void (*ti_conn_req_cb_t)(ti_conn_request_t* p_conn_req);

typedef struct _ti_conn_info {
  ti_endpoint_handle_t src_ep;
  ti_endpoint_handle_t dst_ep;
  ti_pd_handle_t pdh;
  ti_cq_handle_t send_cqh;
  ti_cq_handle_t recv_cqh;
  void* private_data;
  uint32_t private_data_len;
  uint16_t private_data_offset;
  uint16_t private_data_offset_len;
  ti_conn_req_cb_t conn_request_cb;
  void* context;
} ti_conn_info_t;

typedef struct _ti_conn_attr {
  uint32_t connect_request_timeout;
  uint32_t connect_request_retries;
  uint32_t max_transfer_depth;
  uint32_t max_transfer_buffers;
  uint32_t max_transfer_size;
  uint32_t max_recv_depth;
  uint32_t max_recv_buffers;
  uint32_t max_recv_size;
  uint32_t max_rdma_depth;
  uint32_t max_rdma_size;
  uint32_t max_send_retries;
  boolean_t reliable;
  boolean_t msg_flow_control;
  boolean_t auto_path_migration;
  boolean_t auto_cq_rearm;
} ti_conn_attr_t;

typedef struct _ti_pool_response {
  void* p_context1;
  void* p_context2;
  ti_data_element_t* p_element_list;
  uint32_t element_count;
  ti_status_t status;
} ti_pool_response_t;

/* ---- callbacks ----------------------------------------------------------- */
typedef void (*ti_xfer_cb_t)(ti_cq_handle_t cq_handle, ti_data_element_t* de_list);
typedef void (*ti_context_cb_t)(void* p_context);
typedef void (*ti_err_cb_t)(ti_err_rec_t* p_err_rec);
typedef void (*ti_res_pool_cb_t)(ti_pool_response_t* p_resp);

typedef struct _ti_comp_info {
  ti_cq_handle_t h_send_cq;
  ti_cq_handle_t h_recv_cq;
  ti_xfer_cb_t pfn_send_cb;
  ti_xfer_cb_t pfn_recv_cb;
  ti_xfer_cb_t pfn_rdma_cb;
  ti_err_cb_t pfn_err_cb;
  void* p_err_context;
} ti_comp_info_t;

/* ---- the operations vector ----------------------------------------------- */
typedef struct _ti_ops {
  char* transport_name; /* descriptive name for this transport. */
  char* link_dev_name;  /* link device utilized by this transport. */

  /* Transport Interface services */
  char* (*ti_status_2_str)(IN ti_status_t status);
  ti_status_t (*events_register)(IN const void* p_Context, IN ti_event_cb_t Event_callback);
  ti_status_t (*events_deregister)(IN const void* p_Context, IN ti_event_cb_t Event_callback);
  ti_status_t (*create_ti)(OUT ti_handle_t* ph_ti);
  ti_status_t (*destroy_ti)(IN ti_handle_t h_ti, IN ti_context_cb_t pfn_cb, IN void* p_context);
  ti_status_t (*debug_svc)(IN ti_handle_t h_ti, IN ti_debug_level_t debug_level);
  /* INET address mapping service: Local and remote endpoints, blocking call */
  ti_status_t (*create_endpoint)(IN ti_handle_t h_ti, IN ti_inet_addr_t* p_addr, IN ti_port_t port,
                                 OUT ti_endpoint_handle_t* ph_ep);
  /* INET address mapping service: release transport endpoint information */
  ti_status_t (*destroy_endpoint)(IN ti_endpoint_handle_t h_ep);
  /* Transport protection domain services. */
  ti_status_t (*create_pd)(IN ti_handle_t h_ti, IN ti_endpoint_handle_t h_local_ep, OUT ti_pd_handle_t* ph_pd);
  ti_status_t (*destroy_pd)(IN ti_pd_handle_t h_pd);
  /* Tranport Completion Queue management */
  ti_status_t (*create_cq)(IN ti_handle_t h_ti, IN ti_pd_handle_t h_pd, IN uint32_t max_cq_entries,
                           OUT ti_cq_handle_t* ph_cq);
  ti_status_t (*poll_cq)(IN ti_cq_handle_t h_cq, OUT ti_data_element_t** p_list);
  ti_status_t (*rearm_cq)(IN ti_cq_handle_t h_cq);
  ti_status_t (*destroy_cq)(IN ti_cq_handle_t h_cq);
  /* Tranport connection services */
  ti_status_t (*connect)(IN ti_handle_t h_ti, IN ti_conn_attr_t* p_conn_attr, IN ti_conn_info_t* p_conn_info,
                         OUT ti_conn_request_t* p_conn_req, OUT ti_conn_handle_t* ph_conn);
  ti_status_t (*accept)(IN ti_conn_request_t* p_conn_req, IN uint32_t max_rdma_size, IN ti_comp_info_t* p_comp,
                        IN ti_data_element_t* p_recv_mlist);
  ti_status_t (*reject)(IN ti_conn_request_t* p_conn_req);
  ti_status_t (*listen)(IN ti_handle_t h_ti, IN ti_conn_attr_t* p_conn_attr, IN ti_conn_info_t* p_conn_info,
                        OUT ti_conn_request_t* p_conn_req, OUT ti_conn_handle_t* ph_conn);
  ti_status_t (*disconnect)(IN ti_conn_handle_t h_conn, IN ti_context_cb_t pfn_cb, IN void* p_context);
  /* Memory registration services */
  ti_status_t (*reg_virt_mem)(IN ti_handle_t h_ti, IN ti_pd_handle_t h_pd, IN void* p_vaddr, IN uint32_t byte_count,
                              IN ti_access_t access_rights, OUT ti_rdma_desc_t* p_rdma_desc,
                              OUT ti_mem_handle_t* ph_vmem);
  ti_status_t (*reg_phys_mem)(IN ti_handle_t h_ti, IN ti_pd_handle_t h_pd, IN uint64_t* p_phys_page_addr_array,
                              IN uint32_t num_pages, IN ti_access_t access_rights, IN OUT ti_rdma_desc_t* p_rdma_desc,
                              OUT ti_mem_handle_t* ph_pmem);
  ti_status_t (*dereg_mem)(IN ti_mem_handle_t h_mem);
  /* Resource Pool services */
  ti_status_t (*res_pool_create)(IN ti_handle_t h_ti, IN ti_res_pool_type_t pool_type, IN uint32_t element_cnt,
                                 IN uint32_t bufs_per_element, IN uint32_t* buf_size_array, IN uint32_t context_size,
                                 OUT ti_res_pool_handle_t* ph_pool);
  /* destroy either msg or rdma pool */
  ti_status_t (*res_pool_destroy)(IN ti_res_pool_handle_t h_pool);
  /* get or put elements based on pool handle */
  ti_status_t (*res_pool_get)(IN ti_res_pool_handle_t h_pool, IN uint32_t element_count,
                              IN boolean_t partial_allocation_OK, IN ti_res_pool_cb_t res_cb, IN void* p_context1,
                              IN void* p_context2, IN OUT ti_pool_response_t* p_res_pool_resp);
  ti_status_t (*res_pool_put)(IN ti_res_pool_handle_t h_pool, IN ti_data_element_t* p_delist);
  /* Message send & receive */
  ti_status_t (*msg_send)(IN ti_conn_handle_t h_conn, IN ti_data_element_t* p_delist);
  ti_status_t (*msg_recv)(IN ti_conn_handle_t h_conn, IN ti_data_element_t* p_delist);
  /* Remote DMA operations */
  ti_status_t (*rdma_read)(IN ti_conn_handle_t h_conn, IN ti_data_element_t* p_melist);
  ti_status_t (*rdma_write)(IN ti_conn_handle_t h_conn, IN ti_data_element_t* p_melist);
  /* Remote DMA operation list with bundled message (completion indication) */
  ti_status_t (*rdma_read_send)(IN ti_conn_handle_t h_conn, IN ti_data_element_t* p_rdma_read_list,
                                IN ti_data_element_t* p_msg);
  ti_status_t (*rdma_write_send)(IN ti_conn_handle_t h_conn, IN ti_data_element_t* p_rdma_write_list,
                                 IN ti_data_element_t* p_msg);
  /* Atomic operation */
  ti_status_t (*atomic_op)(IN ti_conn_handle_t h_conn, IN ti_atomic_op_t operation, IN OUT ti_data_element_t* p_data);
  ti_status_t (*io_ctl)(IN ti_handle_t h_ti, IN ti_ioctl_t cmd, IN OUT uint32_t* p_bytes, IN OUT void* p_data);
} ti_ops_t;

/* ---- event data ---------------------------------------------------------- */
typedef struct _transport_desc {
  net_device_t* dev;
  ti_inet_addr_t* IP_addr;
  ti_inet_addr_t* IP_netmask;
  ti_inet_addr_t* first_hop_IP_route_addr;
} ti_transport_desc_t;

typedef struct _inet_route_event_ {
  ti_inet_addr_t ipaddr;
  net_device_t* dev;
} ti_inet_route_event_t;

/* nicsim: what io_ctl(TI_GET_CONN_PROFILE) returns. On entry p_data points
 * to a ti_conn_profile_t whose conn_handle names an established connection
 * and *p_bytes is at least its size; the transport fills the rest and sets
 * *p_bytes to the size it wrote. */
typedef struct _ti_conn_profile {
  ti_conn_handle_t conn_handle;
  uint32_t path_mtu;           /* bytes of payload per packet */
  uint32_t max_transfer_size;  /* largest message */
  uint32_t max_rdma_size;      /* largest single RDMA (split above the hardware's) */
  uint32_t max_transfer_depth; /* outstanding sends, RDMAs and atomics */
  uint32_t max_recv_depth;     /* posted receives */
  uint32_t send_credits;       /* with msg_flow_control: sends the peer can take now */
  boolean_t msg_flow_control;
  ti_inet_addr_t local_addr, remote_addr;
  ti_port_t local_port, remote_port;
} ti_conn_profile_t;

/* ---- protocol provider exports (SDP's) ----------------------------------- */
void SDP_register_transport(ti_ops_t* ops, ti_event_cb_t ti_event_notify);
void SDP_deregister_transport(ti_ops_t* ops, ti_event_cb_t ti_event_notify);

/* ---- TI exports (ti_exports.h) ------------------------------------------- */
char* ti_event_to_str(ti_event_t event, void* data, char* buf, u32 buf_len);
char* ti_status_to_str(const ti_status_t status);
char* mk_inet_addr_p(unchar* IPv4_addr, char* buf);

/* ---- the InfiniBand transport provider (nicsim) -------------------------- */
/* Loads the IB transport on the calling node (thread context): it brings
 * up the node's connection manager and calls SDP_register_transport with
 * its operations vector. Returns that vector (the same for every node;
 * each call acts on the calling node), or NULL when the node has no HCA. */
ti_ops_t* ti_ib_transport_load(void);
/* The IB transport's operations vector without loading anything. */
ti_ops_t* ti_ib_ops(void);

/* ---- the Elan3 transport provider (nicsim) ------------------------------- */
/* Loads the Elan transport on the calling node (thread context): it brings
 * up the node's Kernel Comms services and calls SDP_register_transport.
 * Returns its operations vector, or NULL when the node has no Elan. IPv4
 * address 10.0.0.0 + n + 1 is Elan node n. */
ti_ops_t* ti_elan_transport_load(void);
/* The Elan transport's operations vector without loading anything. */
ti_ops_t* ti_elan_ops(void);

#ifdef __cplusplus
}
#endif

#endif /* SDP_TI_H */
