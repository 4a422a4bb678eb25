// Inside the InfiniBand transport provider of the SDP Transport Interface:
// the node's transport state, the objects behind every handle, the
// connection state machine. The provider sits on the kernel verbs
// (rdma/ib_verbs.h, including ib_reg_phys_mr) and the CMA (rdma/ib_cma.h);
// everything between nodes crosses the fabric through them.
//
// Handles are not pointers: each object gets a token when it is made (its
// node, a serial number never reused, and its kind), the consumer sees the
// token, and a handle is looked up in its node's table of live tokens
// before use. A stale handle (even when a new object took the old one's
// memory), a foreign, wrong-kind or invented one is TI_INVALID_HANDLE (or
// TI_INVALID_PARAMETER where the interface lists that), never a crash.
#pragma once
#include <rdma/ib_verbs.h>
#include <linux/in.h>
#include <rdma/ib_cma.h>
#include <sdp_ti.h>

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "core/inspect.h"
#include "core/units.h"
#include "fsm/fsm.h"
#include "host/host.h"
#include "ti/common/ti_thread.h"
#include "ti/common/ti_log.h"
#include "ti/common/ti_pool_core.h"

// The objects behind the handles carry their token (see above).
struct TiHandleToken {
  std::uintptr_t token = 0;
};
struct _ti_handle : TiHandleToken {};
struct _ti_endpoint_handle : TiHandleToken {};
struct _ti_pd_handle : TiHandleToken {};
struct _ti_cq_handle : TiHandleToken {};
struct _ti_conn_handle : TiHandleToken {};
struct _ti_mem_handle : TiHandleToken {};
struct _ti_res_pool_handle : TiHandleToken {};

namespace nicsim::ti {

// ---- the connection state machine ----------------------------------------------
#define NICSIM_TI_CONN_STATES(X) \
  X(Idle)                        \
  X(Listening)                   \
  X(Connecting) X(ReplyReceived) X(Requested) X(Accepting) X(Established) X(Canceling) X(Disconnecting) X(Closed)
#define NICSIM_TI_CONN_EVENTS(X) \
  X(Connect)                     \
  X(Listen)                      \
  X(RequestArrived)              \
  X(ReplyArrived)                \
  X(MraArrived)                  \
  X(Accept) X(Reject) X(Rejected) X(Established) X(Timeout) X(Unreachable) X(Disconnect) X(PeerDisconnected) X(Released)
NICSIM_FSM_ENUM(TiConnState, NICSIM_TI_CONN_STATES)
NICSIM_FSM_ENUM(TiConnEvent, NICSIM_TI_CONN_EVENTS)
struct TiConnMachine {
  using State = TiConnState;
  using Event = TiConnEvent;
  static const FsmType& type();
};

struct Instance;
struct Conn;
struct Cq;
struct Pool;

struct Endpoint : _ti_endpoint_handle {
  Instance* inst = nullptr;
  std::uint32_t ip = 0;  // host order
  ti_port_t port = 0;
};

struct Pd : _ti_pd_handle {
  Instance* inst = nullptr;
  ib_pd* pd = nullptr;
  std::uint32_t users = 0;  // CQs, regions, connections
};

struct Mem : _ti_mem_handle {
  Instance* inst = nullptr;
  Pd* pd = nullptr;
  ib_mr* mr = nullptr;
};

// What an element is doing (its transport data: the element's otd).
enum class Op : std::uint8_t { None, Send, Recv, RdmaRead, RdmaWrite, Atomic };

struct ElementTd {
  ti_local_data_desc_t* rdma_local = nullptr;  // first: TI_RDMA_LOCAL_DESC reads it
  ti_data_element_t* element = nullptr;
  Pool* pool = nullptr;
  Conn* conn = nullptr;
  Op op = Op::None;
  bool busy = false;              // posted, not yet completed
  bool in_pool = true;            // on the pool's free list
  std::uint32_t outstanding = 0;  // work requests not yet completed
  ti_status_t status = TI_SUCCESS;
  ti_data_element_t* then_send = nullptr;  // rdma_*_send: the message after the RDMAs
  ti_atomic_op_t atomic = TI_ATOMIC_COMPARE_SWAP;
  bool fence = false;  // a queued send fenced behind the RDMAs before it (rdma_*_send)
};

using PoolRequest = ti_core::PoolRequest;

struct Pool : _ti_res_pool_handle {
  using Td = ElementTd;
  Instance* inst = nullptr;
  ti_res_pool_type_t type = TI_RES_POOL_MSG;
  std::vector<ti_data_element_t> elements;
  std::vector<ElementTd> tds;
  std::vector<ti_local_data_desc_t> local;  // bufs_per_element per element
  std::vector<ti_rdma_desc_t> remote;       // RDMA pools: bufs_per_element per element
  std::vector<std::uint32_t> sizes;
  std::uint32_t per_element = 0;
  unsigned char* buffers = nullptr;  // node memory
  unsigned char* contexts = nullptr;
  Mem* mem = nullptr;  // the buffers' registration
  std::deque<ti_data_element_t*> free_list;
  std::deque<PoolRequest> waiting;
  bool owns(const ti_data_element_t* e) const {
    return !elements.empty() && e >= elements.data() && e < elements.data() + elements.size();
  }
};

struct Cq : _ti_cq_handle {
  std::deque<ti_data_element_t*> done;  // completed elements no callback took (poll_cq returns them)
  Instance* inst = nullptr;
  Pd* pd = nullptr;
  ib_cq* cq = nullptr;
  std::uint32_t entries = 0;
  std::set<Conn*> conns;
  bool armed = false;
  bool auto_rearm = true;             // the first bound connection's auto_cq_rearm
  ti_xfer_cb_t pfn_notify = nullptr;  // auto_cq_rearm FALSE: whom to tell
};

// A connection's message flow control (msg_flow_control TRUE; ti_credit.cc).
struct FlowControl {
  unsigned char* mem = nullptr;  // registered node memory: the counts and the hellos
  ib_mr* mr = nullptr;
  std::uint64_t peer_vaddr = 0;  // the peer's region, from its hello
  std::uint32_t peer_rkey = 0;
  bool peer_known = false, hello_sent = false;
  bool ready = false;        // the QP sends: established
  std::uint64_t posted = 0;  // receives we posted (the consumer's)
  std::uint64_t sent = 0;    // sends we gave the hardware
  bool writing = false, dirty = false;
  std::unique_ptr<host::Timer> poll;  // a sender without credits looks again
};

struct Conn : _ti_conn_handle {
  Conn(Instance* i, std::uint64_t id, host::Host& node);  // named "h1.ti3" for the debugger
  Instance* inst;
  std::uint64_t id;  // the CMA handlers' context: ids are never reused
  Fsm<TiConnMachine> fsm;
  bool active = false, listener = false;
  ti_conn_attr_t attr{};
  ti_conn_info_t info{};  // private data pointer not kept
  ti_comp_info_t comp{};
  Conn* parent = nullptr;  // passive side: the listener
  Endpoint local{}, remote{};
  Pd* pd = nullptr;
  Cq *send_cq = nullptr, *recv_cq = nullptr;
  ib_qp* qp = nullptr;
  union ib_cma_id cma_id {};
  std::vector<std::uint8_t> private_in;  // the REQ's or REP's private data
  std::vector<std::uint8_t> reply_private;
  ti_conn_request_t* user_req = nullptr;  // connect/listen's OUT parameter
  std::unique_ptr<host::Timer> deadline;
  bool timed_out = false;
  bool established_seen = false;
  bool failed = false;   // the QP failed (error completions): reported once
  bool cm_done = false;  // the CM's last event for it came (the QP is ours alone)
  std::uint32_t posted_sends = 0, posted_recvs = 0;
  std::deque<ti_data_element_t*> send_queue;  // beyond max_transfer_depth
  std::uint32_t in_flight = 0;                // elements posted (all kinds)
  ti_context_cb_t disconnect_cb = nullptr;
  void* disconnect_context = nullptr;
  bool disconnect_reported = false;
  std::unique_ptr<FlowControl> fc;  // msg_flow_control TRUE
  Inspectable inspectable;          // the connection as the debugger shows it
  static void inspect(const void* self, InspectRows& rows);
};

struct Instance : _ti_handle {
  std::set<Endpoint*> endpoints;
  std::set<Pd*> pds;
  std::set<Cq*> cqs;
  std::set<Mem*> mems;
  std::set<Pool*> pools;
  std::set<Conn*> conns;
  ti_debug_level_t debug = TI_DBG_OFF;
  bool destroying = false;
  // One verbs PD per instance: every PD handle, pool and region of the
  // instance shares it, so any of its regions serves any of its connections.
  ib_pd* pd = nullptr;
};

// The kind in a token's low bits.
enum class HandleKind : std::uintptr_t { Instance = 1, Endpoint, Pd, Cq, Mem, Pool, Conn };

// The handle the consumer sees for an object.
template <class H, class T>
H handle_of(const T* obj) {
  return obj ? reinterpret_cast<H>(obj->token) : nullptr;
}

// Live objects of one node, for leak checks in tests.
struct Counters {
  std::uint32_t instances = 0, endpoints = 0, pds = 0, cqs = 0, mems = 0, pools = 0, conns = 0, qps = 0;
  std::uint32_t total() const { return instances + endpoints + pds + cqs + mems + pools + conns + qps; }
};

// The transport on one node.
class TiNode : public host::HostSoftware {
 public:
  explicit TiNode(host::Host& h);
  ~TiNode() override;
  host::Host& host;
  ib_device* dev = nullptr;
  std::set<Instance*> instances;
  std::set<Endpoint*> endpoints;
  std::set<Pd*> pds;
  std::set<Cq*> cqs;
  std::set<Mem*> mems;
  std::set<Pool*> pools;
  std::set<Conn*> conns;
  std::map<std::uint64_t, Conn*> by_id;
  struct Registration {
    const void* context;
    ti_event_cb_t cb;
  };
  std::vector<Registration> registrations;
  std::uint64_t next_conn = 1;
  int port_state = 0;  // the last state seen (ib_port_state)
  std::uint32_t path_mtu = 2048;
  std::uint64_t max_msg = 1u << 31;
  ti_inet_addr_t ip_addr{}, netmask{}, gateway{};
  ti_transport_desc_t desc{};

  // Tokens: issue one for a new object, revoke it when the object goes,
  // look a handle up (nullptr: not a live object of that kind here).
  void issue(TiHandleToken* obj, HandleKind kind);
  void revoke(TiHandleToken* obj);
  TiHandleToken* lookup(const void* handle, HandleKind kind) const;

  // System-thread work: connection request and context callbacks, events.
  void defer(std::function<void()> fn);
  void start_worker();
  void watch_port();
  Counters counters() const;

 private:
  ti_core::SystemThread system_thread_;
  std::unique_ptr<host::Timer> port_timer_;
  std::map<std::uintptr_t, TiHandleToken*> tokens_;
  std::uint64_t next_serial_ = 1;
};

// The calling node's transport (created on first use; nullptr without an HCA).
TiNode* node();
// The transport of host `h` if it was started, else nullptr.
TiNode* node_if_started(host::Host& h);
inline bool in_interrupt() {
  host::Host* h = host::Host::current_host();
  return h && h->in_interrupt();
}

// Handle checks (nullptr: not a live object of the calling node).
Instance* instance_of(ti_handle_t h);
Pd* pd_of(ti_pd_handle_t h);
Cq* cq_of(ti_cq_handle_t h);
Conn* conn_of(ti_conn_handle_t h);
Pool* pool_of(ti_res_pool_handle_t h);
Endpoint* endpoint_of(ti_endpoint_handle_t h);
Mem* mem_of(ti_mem_handle_t h);
// The element's transport data if it is an element of a live pool.
ElementTd* td_of(ti_data_element_t* e);
// The element transport data a work request id names, if it still lives.
ElementTd* td_of_wr(std::uint64_t wr_id);

// ---- message flow control (ti_credit.cc) --------------------------------------------
// Its region and timer for a msg_flow_control connection (false: no
// memory); nothing for one without.
bool fc_setup(Conn* c);
void fc_release(std::unique_ptr<FlowControl> fc);  // after the QP is gone
// The provider's receive for the peer's hello, before any of the consumer's.
bool fc_post_hello_recv(Conn* c);
// The connection is established (active: its receives are posted too):
// the hello and the counts may go.
void fc_ready(Conn* c);
// The consumer posted `receives` more: the peer hears the new count.
void fc_posted(Conn* c, std::uint32_t receives);
// Sends the peer can take now (0 without flow control).
std::uint32_t fc_credits(const Conn* c);
// Whether a send may go now (and counts it); false arms the credit poll.
bool fc_take_credit(Conn* c);
// A completion of the provider's own work requests (true: it was one).
bool fc_completion(const ib_wc& wc);
// Posts queued sends the depth and the credits allow (ti_data.cc).
void pump_sends(Conn* c);

// ---- the provider's messages (ti/common/ti_log.cc) -----------------------------------
using ti_core::debug_level_name;
using ti_core::log_at;
// The instance's level (TI_DBG_OFF for none).
inline ti_debug_level_t level_of(const Instance* i) { return i ? i->debug : TI_DBG_OFF; }

// ---- operations (one file each: ti_ib.cc, ti_conn.cc, ti_pool.cc, ti_data.cc) --
ti_status_t conn_connect(ti_handle_t, ti_conn_attr_t*, ti_conn_info_t*, ti_conn_request_t*, ti_conn_handle_t*);
ti_status_t conn_listen(ti_handle_t, ti_conn_attr_t*, ti_conn_info_t*, ti_conn_request_t*, ti_conn_handle_t*);
ti_status_t conn_accept(ti_conn_request_t*, uint32_t, ti_comp_info_t*, ti_data_element_t*);
ti_status_t conn_reject(ti_conn_request_t*);
ti_status_t conn_disconnect(ti_conn_handle_t, ti_context_cb_t, void*);
// Ends a connection for destroy_ti (thread context): a request is
// rejected, a live connection disconnected and its CM exchange waited for
// (bounded), then the QP and the handle go.
void conn_release(Conn* c);
// The connection whose id a CMA handler got, if it still lives.
Conn* conn_by_id(TiNode& n, std::uint64_t id);

ti_status_t pool_create(ti_handle_t, ti_res_pool_type_t, uint32_t, uint32_t, uint32_t*, uint32_t,
                        ti_res_pool_handle_t*);
ti_status_t pool_destroy(ti_res_pool_handle_t);
ti_status_t pool_get(ti_res_pool_handle_t, uint32_t, boolean_t, ti_res_pool_cb_t, void*, void*, ti_pool_response_t*);
ti_status_t pool_put(ti_res_pool_handle_t, ti_data_element_t*);
void pool_free(Pool* p);

ti_status_t data_msg_send(ti_conn_handle_t, ti_data_element_t*);
ti_status_t data_msg_recv(ti_conn_handle_t, ti_data_element_t*);
ti_status_t data_rdma_read(ti_conn_handle_t, ti_data_element_t*);
ti_status_t data_rdma_write(ti_conn_handle_t, ti_data_element_t*);
ti_status_t data_rdma_read_send(ti_conn_handle_t, ti_data_element_t*, ti_data_element_t*);
ti_status_t data_rdma_write_send(ti_conn_handle_t, ti_data_element_t*, ti_data_element_t*);
ti_status_t data_atomic_op(ti_conn_handle_t, ti_atomic_op_t, ti_data_element_t*);
ti_status_t cq_poll(ti_cq_handle_t, ti_data_element_t**);
ti_status_t cq_rearm(ti_cq_handle_t);
// Posts the receive list (accept); TI_SUCCESS or the first failure.
ti_status_t post_receives(Conn* c, ti_data_element_t* list);
// The CQ's completion handler (interrupt context).
void cq_event(ib_cq* cq, void* context);
// Completes every element the connection still holds in software with
// `status` (a disconnect or a failure), through its callbacks.
void fail_queued(Conn* c, ti_status_t status);
// Polls the connection's CQs until none of its elements is outstanding or
// `budget` passes (thread context).
void drain(Conn* c, Tick budget);

}  // namespace nicsim::ti
