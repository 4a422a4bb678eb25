/*
 * The SDP sample code of the SDP Transport Interface's description
 * (TI/SAMPLE_CODE and SDP/SAMPLE_CODE: sample_TI_bind ... sample_close),
 * as the description writes it, compiled against sdp_ti.h as a test: the
 * interface must take the sample with no change beyond the sample's own
 * typos. Each fix is marked "fix:" where it is made. Besides those:
 *  - sample_sock_init's declarations come first (the description lists
 *    sample_TI_bind and sample_TI_callback before them, which use them);
 *  - sample_connect_request_callback is declared before sample_connect
 *    calls it;
 *  - the kernel the sample assumes (struct sock with ap_opt, wait queues,
 *    iovecs, errno values) and the helpers it names without defining are
 *    in include/linux/net.h and include/linux/sock.h.
 * Compiled, not linked: the kernel helpers have no bodies.
 */
#include <linux/net.h>
#include "sdp_ti.h"

struct sock;
void sample_TI_callback(const ti_event_t event, const void *data, const void *context); /* fix: declared first */
void sample_connect_request_callback(ti_conn_request_t *pConnReq); /* fix: declared before sample_connect */

/* ---- SDP/SAMPLE_CODE/sample_sock_init ---- */
#include <linux/net.h>
#include "sdp_ti.h"
 
// Transport specific
boolean_t   transport_initialized = FALSE;
ti_ops_t    *ti_ops = NULL; // set during transport initialization /* fix: ti_ops_t */

// transport definitions
typedef struct _transport_data_ { /* fix: struct */
    boolean_t           online; // set from event callback SDP_ti_event()
    boolean_t           bound;  /* fix: the field sample_TI_bind sets */
    ti_transport_desc_t tpd;    // INET address information
} transport_data_t;

 
typedef struct _Protocol_Data_ {
    char                *link_dev_name; // set when transport registered with
                                        // this protocol.
    void                *transport_context;
    transport_data_t    tp;
} proto_data_t;

proto_data_t        ProtocolData;   // Protocol specific data.


// ap_opt structure has been added to the 'sock' structure; see linux/sock.h
/* fix: linux/sock.h is included below, once struct ap_opt is declared */

// SDP Connection states
#define SDP_CLOSED      1
#define SDP_PENDING     2
#define SDP_CONNECTING  3
#define SDP_CANCELED        4
#define SDP_CONNECTED   5

typedef struct _ap_private
{
    int desired_rmsg_size;
    
} ap_private_t;

struct ap_opt
{
    // transport exported operations vector
    ti_ops_t                *ti_ops;

    // Connection states
    int                     state;

    // Handles to the TI resources provided by bound transport
    ti_handle_t             h_ti;
    ti_conn_handle_t        h_conn; // set in conn request callback routine
    ti_conn_handle_t        h_listen_conn;  // set by listen()
    ti_cq_handle_t          h_cq;
    ti_res_pool_handle_t    h_msg_pool;
    ti_res_pool_handle_t    h_rdma_pool;

    // Reference back to socket
    struct socket           *sk;

    // Connect request information from incoming connections
    ti_conn_request_t       conn_req;

    // Connection Information: endpoints, pd, private data, cb
    ti_conn_info_t          conn_info;

    // Connection and framing attributes: Max tx/rx buffer resources, 
    // h/w flow control and automatic path migration
    ti_conn_attr_t          conn_attr;

    // Message and RDMA attributes
    int                     rmsg_size;
    int                     rmsg_depth;
    int                     smsg_size;
    int                     smsg_depth;
    int                     rdma_depth;
    int                     max_msg_size;
    int                     max_rdma_size;

    // Recv Message queue
    ti_data_element_t       *rmsgs; /* fix: a queue of elements, used as a pointer */
    atomic_t                recv_q_lock;
 
    // Private-data sent as part of connection request/reply.
    ap_private_t            private_data;

    // wait queue heads
    wait_queue_head_t       send_waitq;
    wait_queue_head_t       recv_waitq;
};

// Data element send context, one of these is attached to each message element
// created in the resource pool (res_pool_create)
typedef struct  _send_context
{
    struct ap_opt       *p_conn;
} send_context_t;

#include <linux/sock.h> /* fix: struct sock, with struct ap_opt in it (see above) */
 
// Global Data Declarations
atomic_t ap_sockets_allocated;

//
// Initialize socket state and SDP protocol state
//
int sample_sock_init( IN struct sock *sk )
{
    struct ap_opt   *p_conn = &sk->tp_pinfo.af_ap;
    ti_status_t     status; /* fix: declared */

    if ( transport_initialized == FALSE )
    {
        proto_data_t    *pd = & ProtocolData; /* fix: ProtocolData */

        // wait for transport to register with SDP
        // global 'ti_ops' is set.

        // Enable transport event delivery
        status = ti_ops->events_register( (void *)pd, sample_TI_callback);
        if ( status != TI_SUCCESS )
        {
            return -EPERM; /* fix: EPERM */
        }
        transport_initialized = TRUE;
    }

    p_conn->ti_ops = ti_ops; // transport interface operations dispatch vector
    p_conn->h_conn = NULL;
    p_conn->h_listen_conn = NULL;
    p_conn->state = SDP_CLOSED;
    init_waitqueue_head( &p_conn->send_waitq ); /* fix: init_waitqueue_head, the field send_waitq */
    init_waitqueue_head( &p_conn->recv_waitq ); /* fix: init_waitqueue_head, the field recv_waitq */
    
    sk->state = TCP_CLOSE;
    sk->use_write_queue = 0;    // no write space callback

    // Use new SDP defaults to size up private buffer pool 
    p_conn->rmsg_size   = p_conn->smsg_size     = sysctl_ap_msg_size;
    p_conn->rmsg_depth  = p_conn->smsg_depth    = sysctl_ap_msg_depth;
    sk->sndbuf = sk->rcvbuf = sysctl_ap_msg_size * sysctl_ap_msg_depth;

    // MTU size based on RDMA threshold and Transport's message MTU 
    // Defaults can be reset at the bind based on the endpoint

    atomic_inc(&ap_sockets_allocated);

    return SUCCESS;
}

/* ---- SDP/SAMPLE_CODE/sample_TI_bind ---- */
#include <linux/net.h>
#include "sdp_ti.h"

boolean_t
sample_TI_bind( IN  proto_data_t    *pd )
{
    ti_status_t status;

    pd->tp.bound = FALSE;   // no transport bound at this juncture
    pd->link_dev_name = "IBoIP";// absence of device instance # == all devices

    // request the TI bind an Transport to this protocol.

    /* fix: events_register takes (context, callback), as sample_sock_init calls it */
    status = ti_ops->events_register( (void *)pd, sample_TI_callback );

    return (status == TI_SUCCESS ? TRUE : FALSE);
}

/* ---- SDP/SAMPLE_CODE/sample_TI_callback ---- */
#include <linux/net.h>
#include "sdp_ti.h"
 
void
sample_TI_callback( IN  const ti_event_t event,  /* fix: const, as ti_event_cb_t has them */
                    IN  const void      *data,
                    IN  const void      *context )
{
    proto_data_t            *pd = (proto_data_t *)context;  // protocol data /* fix: cast */
    ti_transport_desc_t     *tpd;

    switch ( event )
    {
      case  TI_EVENT_NETDEV_ONLINE:
        tpd = (ti_transport_desc_t *)data;  // event specific data

        // copy online Transport info to proto specific area.
        *(ti_transport_desc_t *)&pd->tp.tpd = *tpd;
        pd->tp.online = TRUE; /* fix: tp is a member, not a pointer */
        break;

      /* fix: the sample's placeholder "case TI_*: <...>" for other events */

      default:
        break;
    }
}

/* ---- SDP/SAMPLE_CODE/sample_bind ---- */
#include <linux/net.h>
#include "sdp_ti.h"
 
int sample_bind(IN struct sock      *sk, 
                IN struct sockaddr  *uaddr, 
                IN int              addr_len )
{
    struct sockaddr_in  *addr = (struct sockaddr_in *)uaddr;
    struct ap_opt       *p_conn = &sk->tp_pinfo.af_ap;
    ti_inet_addr_t      ti_addr;
    unsigned short      snum;

    if (addr_len < sizeof(struct sockaddr_in))
        return -EINVAL;

    lock_sock(sk);

    if ((sk->state != TCP_CLOSE) || (sk->num != 0))
    {
        release_sock(sk);
        return (-EINVAL);       /* fix: ; */
    }   

    // need to create a transport service instance handle?
    if ( !p_conn->h_ti )
    {
        // create a transport interface handle to communicate with the transport
        if ( p_conn->ti_ops->create_ti( &p_conn->h_ti ) != TI_SUCCESS )
        {
            release_sock(sk);
            return (-EINVAL);       /* fix: ; */
        }
    }

    // Initialize local addresses for socket and transport, AF_INET is IPv4
    ti_addr.IP_addr_type = TI_ADDR_IPV4;
    ti_addr.ipv4_addr = addr->sin_addr.s_addr; /* fix: ipv4_addr */
    sk->rcv_saddr = sk->saddr = addr->sin_addr.s_addr;
    
    // Create local endpoint for the transport 
    if ( p_conn->ti_ops->create_endpoint(
                                    p_conn->h_ti, 
                                    &ti_addr, 
                                    ntohs(addr->sin_port), 
                                    &p_conn->conn_info.src_ep) != TI_SUCCESS ) /* fix: src_ep */
    {
        release_sock(sk);
        return (-EADDRINUSE);   // endpoint conflict, in use /* fix: ; */        
    }   

    // Create the protection domain for this local interface
    if ( p_conn->ti_ops->create_pd( p_conn->h_ti,
                                    p_conn->conn_info.src_ep,   /* fix: src_ep */
                                    &p_conn->conn_info.pdh ) != TI_SUCCESS ) /* fix: pdh */
    {
        // destroy endpoint and return 
        p_conn->ti_ops->destroy_endpoint( p_conn->conn_info.dst_ep ); /* fix: through ti_ops; dst_ep */
        release_sock(sk);
        return (-ENOSR);        // out of streams resources     
    }   

    // Set the max message and RDMA sizes here
    // do we need a new get_attributes call or get them 
    // returned during create_ti????
    //              p_conn->max_msg_size;
    //              p_conn->max_rdma_size;

    // set socket state and return 
    sk->userlocks |= SOCK_BINDADDR_LOCK;
    sk->userlocks |= SOCK_BINDPORT_LOCK;
    sk->sport = addr->sin_port;
    sk->daddr = 0;
    sk->dport = 0;
    sk_dst_reset(sk);
    release_sock(sk);

    return SUCCESS;
}

/* ---- SDP/SAMPLE_CODE/sample_connect ---- */
#include <linux/net.h>
#include "sdp_ti.h"
 
//
// Open a connection to a peer agent at given IP address/port
// This routine calls transport to resolve peer IP
// endpoint information and to send the connect request.
// Local endpoint already created in a previous sample_bind call
// for this socket.
//
int sample_connect(     IN struct sock      *sk, 
                        IN struct sockaddr  *uaddr,
                        IN int              addr_len )
{
    struct ap_opt       *p_conn = &sk->tp_pinfo.af_ap; // setup in init call /* fix: struct; where sample_sock_init has it */
    ti_status_t         status;
    struct sockaddr_in  *addr = (struct sockaddr_in *)uaddr;
    ti_inet_addr_t      ti_addr;

    if (addr_len < sizeof(struct sockaddr_in))
        return(-EINVAL);

    if (addr->sin_family != AF_INET)
        return(-EAFNOSUPPORT);

    lock_sock(sk);

    // If no bind then do autobind by calling 
    if (!p_conn->conn_info.src_ep) /* fix: src_ep */
        return(-EINVAL);

    // Setup address struct for transport, AF_INET is IPv4
    ti_addr.IP_addr_type = TI_ADDR_IPV4;
    ti_addr.ipv4_addr = addr->sin_addr.s_addr; /* fix: ipv4_addr */
    
    // Create remote endpoint for the transport 
    if ( p_conn->ti_ops->create_endpoint(
                                    p_conn->h_ti, 
                                    &ti_addr, 
                                    addr->sin_port, 
                                    &p_conn->conn_info.dst_ep ) != TI_SUCCESS ) /* fix: dst_ep */
    {
        release_sock(sk);
        return (-ENETUNREACH);      // Network unreachable      
    }               

   // Initialize connection information:
   // Local endpoint and protection domain created 
    // during previous socket bind. Remote endpoint just created.

    p_conn->conn_info.private_data_len          = sizeof(ap_private_t);
    p_conn->conn_info.private_data              = &p_conn->private_data; /* fix: private_data */
    p_conn->conn_info.private_data_offset       = 0;
    p_conn->conn_info.private_data_offset_len   = 0;
    p_conn->conn_info.conn_request_cb           = sample_connect_request_callback; /* fix: conn_request_cb */
    p_conn->conn_info.context                   = (void*) &p_conn; /* fix: context */

    // Initialize the connection and framing attributes 
    p_conn->conn_attr.max_transfer_depth    = p_conn->smsg_depth + 
                                                p_conn->rdma_depth;
    p_conn->conn_attr.max_transfer_buffers  = 1;
    p_conn->conn_attr.max_recv_depth        = p_conn->rmsg_depth;
    p_conn->conn_attr.max_recv_buffers      = 1;
    p_conn->conn_attr.reliable              = TRUE;
    p_conn->conn_attr.msg_flow_control      = TRUE;
    p_conn->conn_attr.auto_path_migration   = TRUE;

    // Set private data, desired recv message size
    p_conn->private_data.desired_rmsg_size = p_conn->rmsg_size;

    // We now have created local and remote endpoints
    // and set the connection attributes and information.
    // Ready to call the transport's connect request function

    if  ( p_conn->ti_ops->connect ( p_conn->h_ti,
                                    &p_conn->conn_attr, 
                                    &p_conn->conn_info,
                                    &p_conn->conn_req, /* fix: connect's OUT request */
                                    &p_conn->h_conn ) != TI_SUCCESS )

    {
        p_conn->ti_ops->destroy_endpoint( p_conn->conn_info.dst_ep ); /* fix: through ti_ops; dst_ep */
        p_conn->conn_info.dst_ep = NULL; /* fix: dst_ep */
        release_sock(sk);
        return -EADDRNOTAVAIL;  // Cannot assign requested address      
    }               

    // Update socket fields appropriately
    sk->dport = addr->sin_port;
    sk->daddr = addr->sin_addr.s_addr;
    sk->err = 0;
    sk->done = 0;
    sk->state = TCP_SYN_SENT; // see linux/tcp.h

    // Update sock->ap_opt fields
    p_conn->state = SDP_PENDING;

    release_sock(sk);

    return SUCCESS;
}

/* ---- SDP/SAMPLE_CODE/sample_listen ---- */
#include <linux/net.h>
#include "sdp_ti.h"
 
//
// Listen on local address/port endpoint
//
int sample_listen( IN struct sock   *sk )
{
    struct ap_opt       *p_conn = &sk->tp_pinfo.af_ap; // setup in init call /* fix: where sample_sock_init has it */
    ti_status_t         status;


    // say we are listen()ing & allocate a local port.
    sk->state = TCP_LISTEN; // see linux/tcp.h
    if (sk->prot->get_port(sk,sk->num) != 0)
    {
        sk->state = TCP_CLOSE;
        return (-EADDRINUSE);
    }
    sk->sport = htons(sk->num);
    sk_dst_reset(sk);
    sk->prot->hash(sk);

    // Initialize connection information:
    // Local endpoint and protection domain created 
    // during previous socket bind. Remote endpoint just created.

    p_conn->conn_info.private_data_len          = sizeof(ap_private_t); /* fix: as sample_connect */
    p_conn->conn_info.private_data              = &p_conn->private_data; /* fix: as sample_connect */
    p_conn->conn_info.private_data_offset       = 0;
    p_conn->conn_info.private_data_offset_len   = 0;
    p_conn->conn_info.conn_request_cb           = sample_connect_request_callback; /* fix: conn_request_cb */
    p_conn->conn_info.context                   = (void*) &p_conn; /* fix: context */

    // Initialize the connection and framing attributes 
    p_conn->conn_attr.max_transfer_depth    = p_conn->smsg_depth + 
                                                p_conn->rdma_depth;
    p_conn->conn_attr.max_transfer_buffers  = 1;
    p_conn->conn_attr.max_recv_depth        = p_conn->rmsg_depth;
    p_conn->conn_attr.max_recv_buffers      = 1;
    p_conn->conn_attr.reliable              = TRUE;
    p_conn->conn_attr.msg_flow_control      = TRUE;
    p_conn->conn_attr.auto_path_migration   = TRUE;

    // We now have created local endpoints
    // and set the connection attributes and information.
    // Ready to call the transport's listen request function.
    // The listen connection handle 'h_listen_conn' is used only to cancel this
    // listen() request. Handle 'h_conn' specified in the connection request
    // callback routine input parameter 'ti_conn_request_t.h_conn', afer an
    // accept, is the correct handle to use in data transfer requests.

    if  ( p_conn->ti_ops->listen (  p_conn->h_ti,
                                    &p_conn->conn_attr, 
                                    &p_conn->conn_info,
                                    &p_conn->conn_req, /* fix: listen's OUT request */
                                    &p_conn->h_listen_conn ) != TI_SUCCESS )

    {
        p_conn->ti_ops->destroy_endpoint( p_conn->conn_info.dst_ep ); /* fix: through ti_ops; dst_ep */
        p_conn->conn_info.dst_ep = NULL; /* fix: dst_ep */
        sk->state = TCP_CLOSE;
        return -EADDRNOTAVAIL;  // Cannot assign requested address      
    }               

    // Update socket fields appropriately
    sk->err = 0;
    sk->done = 0;

    // Update sock->ap_opt fields
    p_conn->state = SDP_PENDING;

    return SUCCESS;
}

/* ---- SDP/SAMPLE_CODE/sample_connect_request_callback ---- */
  
#include "sdp_ti.h"
 
// Forward declarations.
void InitializeMsgs(    IN ti_pool_response_t   *pPoolResp );
void CqErrorCallback(   IN ti_err_rec_t         *pErrorResp ); /* fix: an error callback takes a ti_err_rec_t */
void ConnErrorCallback( IN ti_err_rec_t         *pErrorResp ); /* fix: an error callback takes a ti_err_rec_t */

void sample_msg_recv_complete(
                    IN ti_cq_handle_t h_cq, IN ti_data_element_t *pMsgList);
void sample_msg_send_complete(
                    IN ti_cq_handle_t h_cq, IN ti_data_element_t *pMsgList);
 
// callback routine to process successful, failed, and canceled
// connection attempts. This routine completes listen requests.

void sample_connect_request_callback(   IN ti_conn_request_t *pConnReq )
{
    struct sock             *sk = (struct sock *)pConnReq->context; /* fix: struct; context */
    struct ap_opt           *p_conn = (struct ap_opt *)&sk->tp_pinfo.af_ap;
    ap_private_t            *p_private;
    uint32_t                cq_entries, MsgContextSize = sizeof(void*); /* fix: uint32_t */
    uint32_t                msg_count, MsgBufferSize; /* fix: declared */
    ti_comp_info_t          CompInfo;
    ti_pool_response_t      MsgPoolResp;
    ti_status_t             Status;

    lock_sock(sk);

    p_private = pConnReq->private_data; /* fix: private_data */

    // The connection is being established. Check remote rmsg
    // size and compare with ours. Agree on smaller of the two
    // and build the send and recv buffer pools accordingly
    if( p_conn->rmsg_size != p_private->desired_rmsg_size )
    {
        p_private->desired_rmsg_size = min( p_conn->rmsg_size, 
                                            p_private->desired_rmsg_size );
        p_conn->rmsg_size = p_conn->smsg_size = p_private->desired_rmsg_size;
    }


    // If this callback is from a listen then the application must 
    // accept otherwise we can go ahead and accept since this is 
    // a callback from a connect request and there will be no accept.
    // See sample_listen at the listen() call site, output parameter.

    if ( p_conn->state == SDP_PENDING && p_conn->h_listen_conn ) /* fix: p_conn */
    {
        // change connection state, signal for select, poll or socket_accept 
        p_conn->state = SDP_CONNECTING;
        SignalConnectRequest( p_conn );
        release_sock(sk);
        return;
    }

    // If required - Verify listen() caller supplified additional private Data
    // @ private_data_offset. Normally utilized by a listen() callback to
    // further qualify connection request. See
    //  pConnReq->private_data_offset & pConnReq->private_data_offset_len 
    // Create a new message pool and
    // completion services. We will poll for completed sends, but setup 
    // a callback for notification of completed receives.

    // Create a message pool.
    // Set context for each of the messages to reference one of our own
    // request data structures. This will call InitMsgs directly before
    // returning. InitMsgs will put the message elements back into the
    // message pool after initializing their context fields.
    // 
    msg_count = p_conn->rmsg_depth + p_conn->smsg_depth;

    MsgBufferSize = p_conn->rmsg_size; /* fix: the size agreed above (the request has no attributes) */
    Status = p_conn->ti_ops->res_pool_create(   p_conn->h_ti, 
                                                TI_RES_POOL_MSG,
                                                msg_count, 
                                                1,
                                                &MsgBufferSize,
                                                sizeof(send_context_t),
                                                &p_conn->h_msg_pool ); /* fix: h_msg_pool */

    if( Status != TI_SUCCESS /* fix: TI_SUCCESS */ )
    {
        // We failed to create the message pool. Reject the connection.
        // Destroy CQ, Reject connection.
        p_conn->ti_ops->destroy_cq (p_conn->h_cq ); /* fix: h_cq */
        p_conn->ti_ops->reject( pConnReq );
        release_sock(sk);
        RequestCanceled( p_conn, TI_INSUFFICIENT_MEMORY );
        return;
    }

    // We need to accept the connection.
    // Set the channel's completion information.
    // one CQ shared for sends and recvs
    CompInfo.h_send_cq   = p_conn->h_cq; 
    CompInfo.h_recv_cq   = p_conn->h_cq;
    CompInfo.pfn_send_cb = sample_msg_send_complete;
    CompInfo.pfn_recv_cb = sample_msg_recv_complete;    
    CompInfo.pfn_err_cb  = ConnErrorCallback; /* fix: the name declared above */
    CompInfo.p_err_context = p_conn;
    
    // Get half of the messages to post as initial receives to ensure first
    // message is not dropped.
    Status = p_conn->ti_ops->res_pool_get(  p_conn->h_msg_pool, /* fix: h_msg_pool */
                                            msg_count/2, 
                                            FALSE, 
                                            NULL, 
                                            0, 
                                            0, /* fix: the second context */
                                            &MsgPoolResp );
    if( Status != TI_SUCCESS /* fix: TI_SUCCESS */ )
    {
        // The message elements posted through the accept call will 
        // have failed. They were returned by the library through the receive 
        // callback function. The callback will have returned each element 
        // to the message pool. NOTE: If no receive callback is defined 
        // a poll_cq in a while loop would be required to get and put all 
        // elements back on the message pool.
        // 
        // Destroy CQ, message pool, Reject connection.

        p_conn->ti_ops->res_pool_destroy ( p_conn->h_msg_pool ); /* fix: h_msg_pool */
        p_conn->ti_ops->destroy_cq (p_conn->h_cq ); /* fix: h_cq */
        p_conn->ti_ops->reject( pConnReq );
        release_sock(sk);
        RequestCanceled( pConnReq, Status );
        return;
    }

    // Accept the connection using the request with no changes to private
    // data provided by remote side, If successfull then pConnReq->h_conn will 
    // contain the connection handle to be used for all data transfers on this
    // connection. 'pConnReq->h_conn' is returned as an OUT parameter for
    // listen & connect.

    Status = p_conn->ti_ops->accept(pConnReq, 
                                    p_conn->max_rdma_size, /* fix: the connection's */
                                    &CompInfo,
                                    MsgPoolResp.p_element_list ); /* fix: a struct; p_element_list */

    if( Status != TI_SUCCESS /* fix: TI_SUCCESS */ )
    {
        // The message elements posted through the accept call will 
        // have failed. They were returned by the library through the receive 
        // callback function. The callback will have returned each element 
        // to the message pool. NOTE: If no receive callback is defined 
        // a poll_cq in a while loop would be required to get and put all 
        // elements back on the message pool.
        // 
        // Destroy CQ, message pool, Reject connection.

        p_conn->ti_ops->res_pool_destroy ( p_conn->h_msg_pool ); /* fix: h_msg_pool */
        p_conn->ti_ops->destroy_cq (p_conn->h_cq ); /* fix: h_cq */
        p_conn->ti_ops->reject( pConnReq );
        release_sock(sk);
        RequestCanceled( pConnReq, Status );
        return;
    }

    // Connection was accepted, ready to send and receive data.
    // At this juncture, an easy way to distinguish connect() or listen() is
    // the ti_conn_handle_t returned at the connect() call site will be the
    // same as the connection handle passed into the callback routine as
    // 'pConnReq.h_conn'. For a listen() callback, 'pConnReq.h_conn' will be a
    // new connection handle, hence different than the handle returned from the
    // listen() call.

    // change connection state
    p_conn->state = SDP_CONNECTED;

    sk->state = TCP_ESTABLISHED; /* fix: TCP_ESTABLISHED */

    release_sock(sk);

    // Signal socket for connect complete state
    SignalConnectDone( p_conn );

}

/* ---- SDP/SAMPLE_CODE/sample_accept ---- */
#include <linux/net.h>
#include "sdp_ti.h"
 
//
// accept connection requests, 
// wait for a PENDING or accept a CONNECTING socket
//
struct sock *
sample_accept(  IN  struct sock     *sk, 
                IN  int             flags, 
                OUT int             *err )
{
    struct ap_opt   *p_conn = &sk->tp_pinfo.af_ap; // setup in init call /* fix: where sample_sock_init has it */
    struct sock     *newsk;
    ti_status_t     Status; /* fix: the body calls it Status */
    uint32_t        num_cq_entries;
    uint32_t        msg_count, MsgBufferSize; /* fix: declared */
    ti_comp_info_t  CompInfo; /* fix: declared */
    ti_pool_response_t MsgPoolResp; /* fix: declared */
    
    lock_sock(sk);

    // Block, waiting for connection callback for the listen
    if ( p_conn->state == SDP_PENDING ) {
        release_sock(sk);
        WaitOnSignalConnectRequest();
        lock_sock(sk);
    }

    // Should be in connecting state ready to respond to 
    // connect request from remote
    if ( p_conn->state != SDP_CONNECTING )
    {
        release_sock(sk);
        *err = -EINVAL;
        return NULL;
    }

    // inbound connection request is valid, ready to be accepted, 
    // Get a new sock structure using existing sock structure
    if ((newsk = ap_alloc_sock(sk, GFP_KERNEL)) == NULL) {
        release_sock(sk);
        *err = -ENOBUFS;
        return NULL;
    }

    // Set proper fields in newsk...and work from the new context
    // Here is where we could check the backlog and re-issue a listen
    // on the original socket. Assume no backlog for now to keep sample
    // simple.
    release_sock(sk);

    p_conn = &newsk->tp_pinfo.af_ap; /* fix: where sample_sock_init has it */
    lock_sock(newsk);

    // If required - Verify listen() caller supplified additional private Data
    // @ private_data_offset. Normally utilized by a listen() callback to
    // further qualify connection request. See
    //  pConnReq->private_data_offset & pConnReq->private_data_offset_len 
    // Create a new message pool and completion services. We will poll for
    // completed sends, but setup a callback for notification of completed
    // receives.

    // Create the completion queue. One per connection to handle both send and
    // receive completions:
    num_cq_entries = p_conn->conn_attr.max_recv_depth
                                    + p_conn->conn_attr.max_transfer_depth;

    Status = p_conn->ti_ops->create_cq( p_conn->h_ti,
                                        p_conn->conn_info.pdh, /* fix: pdh */
                                        num_cq_entries,
                                        &p_conn->h_cq ); /* fix: h_cq */
    if( Status != TI_SUCCESS /* fix: TI_SUCCESS */ )
    {
        // We failed to create the completion queue. 
        // Reject connection.
        p_conn->ti_ops->reject( &p_conn->conn_req ); /* fix: conn_req */
        release_sock(newsk);
        RequestCanceled( p_conn, TI_INSUFFICIENT_MEMORY );
        *err = -ENOSR;
        return NULL;
    }
 
    // Create a message pool.
    // Set context for each of the messages to reference one of our own
    // request data structures. This will call InitMsgs directly before
    // returning. InitMsgs will put the message elements back into the
    // message pool after initializing their context fields.
    // 
    msg_count = p_conn->rmsg_depth + p_conn->smsg_depth;

    MsgBufferSize = p_conn->rmsg_size; /* fix: the socket's receive size (no request attributes) */
    Status = p_conn->ti_ops->res_pool_create(   p_conn->h_ti, 
                                                TI_RES_POOL_MSG,
                                                msg_count, 
                                                1,
                                                &MsgBufferSize,
                                                sizeof(send_context_t),
                                                &p_conn->h_msg_pool ); /* fix: h_msg_pool */

    if( Status != TI_SUCCESS /* fix: TI_SUCCESS */ )
    {
        // We failed to create the message pool. Reject the connection.
        // Destroy CQ, Reject connection.
        p_conn->ti_ops->destroy_cq (p_conn->h_cq ); /* fix: h_cq */
        p_conn->ti_ops->reject( &p_conn->conn_req ); /* fix: conn_req */
        release_sock(newsk);
        RequestCanceled( p_conn, TI_INSUFFICIENT_MEMORY );
        *err = -ENOSR;
        return NULL;
    }

    // We need to accept the connection.
    // Set the channel's completion information.
    // one CQ shared for sends and recvs
    CompInfo.h_send_cq   = p_conn->h_cq; 
    CompInfo.h_recv_cq   = p_conn->h_cq;
    CompInfo.pfn_send_cb = sample_msg_send_complete;
    CompInfo.pfn_recv_cb = sample_msg_recv_complete;    
    CompInfo.pfn_err_cb  = ConnErrorCallback; /* fix: the name declared before */
    CompInfo.p_err_context = p_conn;
    
    // Get half of the messages to post as initial receives to ensure first
    // message is not dropped.
    Status = p_conn->ti_ops->res_pool_get(  p_conn->h_msg_pool, /* fix: h_msg_pool */
                                            msg_count/2, 
                                            FALSE, 
                                            NULL, 
                                            0, 
                                            0, /* fix: the second context */
                                            &MsgPoolResp );
    if( Status != TI_SUCCESS /* fix: TI_SUCCESS */ )
    {
        // The message elements posted through the accept call will 
        // have failed. They were returned by the library through the receive 
        // callback function. The callback will have returned each element 
        // to the message pool. NOTE: If no receive callback is defined 
        // a poll_cq in a while loop would be required to get and put all 
        // elements back on the message pool.
        // 
        // Destroy CQ, message pool, Reject connection.

        p_conn->ti_ops->res_pool_destroy ( p_conn->h_msg_pool ); /* fix: h_msg_pool */
        p_conn->ti_ops->destroy_cq (p_conn->h_cq ); /* fix: h_cq */
        p_conn->ti_ops->reject( &p_conn->conn_req ); /* fix: conn_req */
        release_sock(newsk);
        RequestCanceled( &p_conn->conn_req, Status ); /* fix: the saved request */
        *err = -ENOSR;
        return NULL;
    }

    // Accept the connection using the request with no changes to private
    // data provided by remote side, If successfull then pConnReq->h_conn will 
    // contain the connection handle to be used for all data transfers on this
    // connection.

    Status = p_conn->ti_ops->accept(&p_conn->conn_req, /* fix: conn_req */
                                    p_conn->max_rdma_size, /* fix: the connection's */
                                    &CompInfo,
                                    MsgPoolResp.p_element_list ); /* fix: a struct; p_element_list */
    if( Status != TI_SUCCESS /* fix: TI_SUCCESS */ )
    {
        // The message elements posted through the accept call will 
        // have failed. They were returned by the library through the receive 
        // callback function. The callback will have returned each element 
        // to the message pool. NOTE: If no receive callback is defined 
        // a poll_cq in a while loop would be required to get and put all 
        // elements back on the message pool.
        // 
        // Destroy CQ, message pool, Reject connection.

        p_conn->ti_ops->res_pool_destroy ( p_conn->h_msg_pool ); /* fix: h_msg_pool */
        p_conn->ti_ops->destroy_cq (p_conn->h_cq ); /* fix: h_cq */
        p_conn->ti_ops->reject( &p_conn->conn_req ); /* fix: conn_req */
        release_sock(newsk);
        RequestCanceled( &p_conn->conn_req, Status ); /* fix: the saved request */
        *err = -ENOSR;
        return NULL;
    }

    // Connection accepted at the transport, ready to send and receive messages.
    // Change connection state. Save the 'new' established connection handle to
    // be used in future data transfer requests.

    p_conn->h_conn = p_conn->conn_req.conn_handle; /* fix: conn_req.conn_handle */

    p_conn->state = SDP_CONNECTED;

    newsk->state = TCP_ESTABLISHED; /* fix: TCP_ESTABLISHED */

    release_sock(newsk);

    return newsk;
}

/* ---- SDP/SAMPLE_CODE/sample_sendmsg ---- */
#include <linux/net.h>
#include "sdp_ti.h"
 
//
// Send data on connected socket
//
int sample_sendmsg( IN struct   sock    *sk,
                    IN struct   msghdr  *msg,
                    IN int              size)
{
    struct ap_opt           *p_conn = &sk->tp_pinfo.af_ap; // setup in init call /* fix: where sample_sock_init has it */
    ti_status_t             status;
    ti_data_element_t       *p_msg;
    ti_pool_response_t      res_pool_resp;
    send_context_t          *send_context;
    int                     mss;
    int                     rc; /* fix: declared */

    lock_sock(sk);

    // Check for connection, 
    if ( p_conn->state != SDP_CONNECTED ) /* fix: the SDP state is p_conn's */
    {
        release_sock(sk);
        return -EAGAIN;
    }

    // get the current maximum segment size and start sending
    mss = p_conn->smsg_size; /* fix: smsg_size */

    // If size is greater then mss then process via RDMA 
    // This sample code only shows message send example
    // to keep it simple 
    if ( size > mss ) 
    {
        release_sock(sk);
        return ( sample_rdma_write ( sk, msg, size ));
    }

    // Get a message from the free pool
    if  ( p_conn->ti_ops->res_pool_get( p_conn->h_msg_pool,
                                        1,      // elements
                                        FALSE,  // no partial
                                        NULL,   // block
                                        NULL,   // cb context 1
                                        NULL,   // cb context 2
                                        &res_pool_resp ) != TI_SUCCESS )
    {
        // This is a blocking call and if no messages are available
        // will wait for a res_pool_put() to refill the pool. Failure indicates
        // a connection problem
        release_sock(sk);
        return -EPIPE;  // broken pipe      
    }               

    p_msg = res_pool_resp.p_element_list; /* fix: a struct; p_element_list */

    // copy user data into message buffer for the send
    if ( memcpy_fromiovec(  p_msg->local_data_desc[0].vaddr, /* fix: the element's buffer */
                            msg->msg_iov, 
                            size )) 
    {
        // Put single message back in the free pool and exit with error
        p_conn->ti_ops->res_pool_put(   p_conn->h_msg_pool, 
                                        p_msg );
        release_sock(sk);
        return -EFAULT;
    }

    // Update the message element for the transfer
    p_msg->msg_opt = TI_OPT_SOLICITED | TI_OPT_SIGNALED; /* fix: TI_OPT_SIGNALED */
    p_msg->local_data_desc[0].byte_count = size; /* fix: the element's buffer */

    // set a context for the send completion callback routine
    send_context = (send_context_t *)p_msg->p_context;
    send_context->p_conn = p_conn;
    p_msg->iodone = FALSE;  // initialize wait condition

    // We are now ready to send the message
    // Set the indication bit in the element to enable
    // completion notification (callback) on this side
    // and on the remote side of the connection.

    if ( (p_conn->ti_ops->msg_send( p_conn->h_conn, p_msg ) /* fix: p_msg */) != TI_SUCCESS )
    {
        // Put message back on pool and return error
        p_conn->ti_ops->res_pool_put( p_conn->h_msg_pool, p_msg );
        release_sock(sk);
        return -EPIPE;  // broken pipe      
    }   
    
    release_sock(sk);

    // suspend this sending thread until send completion callback routine
    // awakes us.  Send complete callback routine will set p_msg->ud_offset
    // TRUE, then wake this thread.

    rc = wait_event_interruptible(p_conn->send_waitq,(p_msg->iodone != FALSE)); /* fix: the queue, not its address */

    // retrieve send operation status and return data element back to
    // free pool
    status = p_msg->status; // only valid if rc != -ERESTARTSYS

    p_conn->ti_ops->res_pool_put( p_conn->h_msg_pool, p_msg );
        
    // interrupted wait or completed send request? Convert transport error
    // returns into Linux negative errno code -ENOTCONN because if there was
    // a transport send error then the connection has been destroyed or is in
    // the process of going away.

    if ( rc == -ERESTARTSYS )
        return -EINTR;
    else if ( status == TI_SUCCESS )
        return 0;
    else
        return -ENOTCONN;
}

/* ---- SDP/SAMPLE_CODE/sample_msg_send_complete ---- */
void
sample_msg_send_complete(   ti_cq_handle_t      cq_handle,
                            ti_data_element_t   *de_list )
{
    struct ap_opt       *p_conn;    // connection context
    ti_data_element_t   *p_msg = de_list;
    send_context_t      *send_context;

    // process the list of completed data elements

    while( p_msg )
    {
        // collect send context and wake the sleeper
        send_context = (send_context_t *)p_msg->p_context;
        p_conn = send_context->p_conn;  // retreive connection context

        p_msg->iodone = TRUE;   // release wait condition

        // advance to next element before any wait related items are touched.
        p_msg = p_msg->p_next_msg;

        wake_up_interruptible( &p_conn->send_waitq );

        // ************
        // it's the sender's responsibility to return the data elements back
        // to the free pool.
        // ************
    }
}

/* ---- SDP/SAMPLE_CODE/sample_msg_recv ---- */
#include <linux/net.h>
#include "sdp_ti.h"
 
//
// receive data on connected socket
//
int sample_msg_recv(    IN struct   sock    *sk,
                        IN struct   msghdr  *msg,
                        IN int              size,
                        IN int              nonblock,
                        IN int              flags,
                        OUT int             *addr_len )
{
    struct ap_opt           *p_conn = &sk->tp_pinfo.af_ap; // setup in init call /* fix: where sample_sock_init has it */
    ti_status_t             status;
    ti_data_element_t       *p_msg;
    ti_pool_response_t      res_pool_resp;
    int                     mss, rbytes, bytes_copied;

    lock_sock(sk);

    // Check for connection, 
    if ( p_conn->state != SDP_CONNECTED ) /* fix: the SDP state is p_conn's */
    {
        release_sock(sk);
        return -EAGAIN;
    }

    // get the current maximum segment size and start sending
    mss = p_conn->rmsg_size; /* fix: rmsg_size */

    // If size is greater then mss then get data via RDMA 
    // This sample code only shows message receive example
    // to keep it simple. receive completion code queues up
    // the message on p_conn->rmsg list
    if ( size > mss ) 
    {
        release_sock(sk);
        return ( sample_rdma_read( sk, msg, size ));
    }

    // Any data available? get next buffer from the received data list
    p_msg = p_conn->rmsgs;

    // if socket is not NON_BLOCKING, wait for data to arrive
    if (!p_msg)
    {
        WaitOnSignalRecvData(sk);
        p_msg = p_conn->rmsgs;
    }

    // Calculate data left in receive buffer and amount to copy
    rbytes = p_msg->recv_byte_count - p_msg->ud_offset; /* fix: ud_offset */
    bytes_copied = min(rbytes,size);

    // copy data until user buffer full or end of rmsg buffer
    memcpy_toiovec(    msg->msg_iov, /* fix: no "if (" (unbalanced) */
                            p_msg->local_data_desc[0].vaddr, /* fix: the element's buffer */
                            bytes_copied );

    // if we did not copy out all of the remaining msg buffer then 
    // adjust the rmsg_offset of the rmsg and return bytes copied
    // otherwise pull off drained recv buffer and repost buffer on connection
    // receive queue
    if (bytes_copied < rbytes) /* fix: bytes_copied */
    {
        p_msg->ud_offset += bytes_copied; /* fix: ud_offset */
    } 
    else
    {
        p_conn->rmsgs = p_msg->p_next_msg; /* fix: rmsgs */
        p_msg->p_next_msg = NULL;
        p_msg->ud_offset = 0; /* fix: ud_offset */

        if (p_conn->ti_ops->msg_recv( p_conn->h_conn, p_msg ) != TI_SUCCESS)
        {
            // Put message back on free pool and return error
            p_conn->ti_ops->res_pool_put(   p_conn->h_msg_pool, p_msg );
            release_sock(sk);
            return -EPIPE;  // broken pipe      
        }   
    }
    
    // update bytes copied
    *addr_len = bytes_copied; /* fix: bytes_copied */

    release_sock(sk);
    return SUCCESS; 
}

/* ---- SDP/SAMPLE_CODE/sample_msg_recv_complete ---- */
void
sample_msg_recv_complete(   IN ti_cq_handle_t       h_cq,
                            IN ti_data_element_t    *de_list ) /* fix: the body calls it de_list */
{
    struct ap_opt       *p_conn;    // connection context
    ti_data_element_t   *p_msg = de_list, *p_next;

    while( p_msg )
    {
        // save next data element pointer as processing will rewrite the
        // data element's list pointer.
        p_next = p_msg->p_next_msg;

        p_conn = (struct ap_opt *)p_msg->p_context; /* fix: struct ap_opt; both branches need it */

        // if not success, the repost recv buffer
        if ( p_msg->status != TI_SUCCESS )
        {
            // Error, connection lost - Put message back in free pool
            p_conn->ti_ops->res_pool_put( p_conn->h_msg_pool, p_msg );
        }
        else
        {
            // setup for socket receive processing
            p_msg->ud_offset = p_msg->recv_byte_count;

            // valid receive data, queue to the socket
            insert_queue_tail_locked( &p_conn->recv_q_lock,
                                            &p_conn->rmsgs, p_msg );

            // wake waiting socket receive thread(s)
            // TBD.
        }
        // next recv data element pointer
        p_msg = p_next;
    }
}

/* ---- SDP/SAMPLE_CODE/sample_disconnect ---- */
#include <linux/net.h>
#include "sdp_ti.h"
 
//
// close the current connection
//
int
sample_close( IN struct sock    *sk )
{
    struct ap_opt       *p_conn = &sk->tp_pinfo.af_ap; // setup in init call /* fix: where sample_sock_init has it */
    ti_status_t         status;
    int                 rc = SUCCESS;

    lock_sock(sk);

    // already been here?
    if ( sk->state == TCP_CLOSE) { /* fix: { */
        release_sock(sk);
        return SUCCESS;
    }

    // schedule a disconnect with no callback(routine or context) for an
    // established connection; disconnect runs asynchronous with the connection
    // shutdown. We do not care how long the transport takes to shutdown the
    // connection.
    if (p_conn->h_conn)
    {
        status = p_conn->ti_ops->disconnect(p_conn->h_conn, 0, 0);
        if ( status != TI_SUCCESS )
        {
            rc = -EPIPE;    // broken pipe 
        }
        p_conn->h_conn = NULL;
    }
    sk->state = TCP_CLOSE; // see linux/tcp.h

    release_sock(sk);

    // destroy the TI handle - we don't want a callback hence
    p_conn->ti_ops->destroy_ti( p_conn->h_ti, NULL, NULL );

    return  rc;
} /* fix: the function's closing brace */

