// Inside the Elan3 transport provider of the SDP Transport Interface: the
// same ti_ops_t as the IB provider, over Elan Kernel Comms (elan3/elancomm.h).
//
// The mapping (docs/ti.md "The Elan provider"):
//  - an IPv4 address 10.0.0.0 + n + 1 is Elan node n (as the Elan IP driver
//    numbers them);
//  - connection set-up and tear-down are small messages on the node's
//    control service carrying the seed's private data (REQ, REP, RTU, REJ,
//    DREQ, DREP), driving the `ti.elan.conn` machine;
//  - each connection owns a large-message service on each side: msg_send is
//    ep_transmit_large from the element's buffers, msg_recv queues the
//    element's buffer as the receive buffer (the data land there directly);
//  - RDMA read is an RPC whose receiver answers with ep_complete_rpc's
//    datavec (the bytes cross as Elan write DMAs); RDMA write asks the peer
//    (a control message) for an RPC back and answers it the same way;
//    its OOB data follow the bytes as an empty message with the data in
//    its RPC payload (it takes the peer's next receive, as over IB);
//  - atomics are an RPC to the peer's provider, which does the operation
//    on its memory and returns the former value in the status block;
//  - a receive of several buffers lands in a bounce buffer of the element's
//    and is scattered into them by the CPU.
//
// Handles are tokens looked up in the node's table, as in the IB provider:
// a stale, foreign or invented one is a status, never a crash.
#pragma once
#include <elan3/elancomm.h>
#include <sdp_ti.h>

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <vector>

#include "fsm/fsm.h"
#include "host/host.h"
#include "ti/common/ti_pool_core.h"
#include "ti/common/ti_thread.h"

namespace nicsim::ti_elan {

#define NICSIM_TI_ELAN_CONN_STATES(X) \
  X(Idle) X(Listening) X(Connecting) X(ReplyReceived) X(Requested) X(Accepting) X(Established) X(Closed)
#define NICSIM_TI_ELAN_CONN_EVENTS(X) \
  X(Connect)                          \
  X(Listen)                           \
  X(RequestArrived) X(ReplyArrived) X(Accept) X(Reject) X(Rejected) X(RtuArrived) X(Disconnect) X(PeerDisconnected)
NICSIM_FSM_ENUM(ElanConnState, NICSIM_TI_ELAN_CONN_STATES)
NICSIM_FSM_ENUM(ElanConnEvent, NICSIM_TI_ELAN_CONN_EVENTS)
struct ElanConnMachine {
  using State = ElanConnState;
  using Event = ElanConnEvent;
  static const FsmType& type();
};

enum class Kind : std::uintptr_t { Instance = 1, Endpoint, Pd, Cq, Mem, Pool, Conn };

struct Obj {
  virtual ~Obj() = default;
  Kind kind{};
  std::uintptr_t token = 0;
  struct Instance* inst = nullptr;
};

struct Instance : Obj {
  ti_debug_level_t debug = TI_DBG_OFF;
};
struct Endpoint : Obj {
  std::uint32_t ip = 0;
  ti_port_t port = 0;
};
struct Pd : Obj {};
struct Conn;
struct Cq : Obj {
  const Pd* pd = nullptr;               // destroy_pd refuses while a CQ is on it
  std::deque<ti_data_element_t*> done;  // auto_cq_rearm FALSE: what poll_cq returns
  bool armed = false;
};
// A registration: node memory mapped into the Elan's address space
// (remote read and write: the peer's RDMAs reach it by its Elan address).
struct Mem : Obj {
  const Pd* pd = nullptr;  // reg_*_mem's (a pool's buffers have none)
  unsigned char* base = nullptr;
  std::uint32_t len = 0;
  E3_Addr eaddr = 0;
  ELAN3_DMA_HANDLE* map = nullptr;
  bool contains(std::uint64_t a, std::uint64_t n) const {
    return a >= reinterpret_cast<std::uint64_t>(base) && a + n <= reinterpret_cast<std::uint64_t>(base) + len;
  }
};

enum class Op : std::uint8_t { None, Send, Recv, RdmaRead, RdmaWrite, Atomic };
// A piece of an RDMA: our Elan address, the peer's virtual address and key.
struct RdmaChunk {
  E3_Addr local = 0;
  std::uint64_t remote = 0;
  std::uint32_t key = 0, len = 0;
};
// An element's transport data (its otd).
struct Td {
  ti_local_data_desc_t* rdma_local = nullptr;  // first: TI_RDMA_LOCAL_DESC reads it
  ti_data_element_t* element = nullptr;
  struct Pool* pool = nullptr;
  Conn* conn = nullptr;       // the pool core clears it on a put
  std::uint32_t conn_id = 0;  // completions find the connection by id (it may be gone)
  Op op = Op::None;
  bool busy = false, in_pool = true;
  ti_data_element_t* then_send = nullptr;  // rdma_*_send's message
  std::deque<RdmaChunk> chunks;            // RDMA: chunks not yet issued
  std::uint32_t outstanding = 0;           // RDMA: chunks issued, not yet done
  bool landed = false;                     // a receive whose data are in (delivered in posting order)
  bool data_done = false;                  // an RDMA write with OOB data: its bytes are in, its OOB data may go
  bool after_rdma = false;                 // rdma_*_send's message: waits for its RDMAs
  bool bounced = false;                    // a receive posted into the bounce buffer
  ti_status_t status = TI_SUCCESS;
  // A receive of more than one buffer lands here (node memory, mapped
  // remote write), then is scattered into the buffers; kept for reuse
  // until the pool goes.
  unsigned char* bounce = nullptr;
  std::uint32_t bounce_len = 0;
  ELAN3_DMA_HANDLE* bounce_map = nullptr;
  E3_Addr bounce_eaddr = 0;
};
struct Pool : Obj {
  using Td = ti_elan::Td;
  ti_res_pool_type_t type = TI_RES_POOL_MSG;
  std::vector<ti_data_element_t> elements;
  std::vector<Td> tds;
  std::vector<ti_local_data_desc_t> local;
  std::vector<ti_rdma_desc_t> remote;
  std::vector<std::uint32_t> sizes;
  std::uint32_t per_element = 0;
  unsigned char* buffers = nullptr;  // node memory
  unsigned char* contexts = nullptr;
  Mem* mem = nullptr;  // the buffers' mapping
  std::deque<ti_data_element_t*> free_list;
  std::deque<ti_core::PoolRequest> waiting;
  bool owns(const ti_data_element_t* e) const {
    return !elements.empty() && e >= elements.data() && e < elements.data() + elements.size();
  }
};

struct Conn : Obj {
  Conn(std::uint32_t id, host::Host& node);  // named "h1.tielan2" for the debugger
  std::uint32_t id;
  Fsm<ElanConnMachine> fsm;
  bool listener = false;
  ti_conn_attr_t attr{};
  ti_conn_info_t info{};
  ti_comp_info_t comp{};
  std::uint32_t local_ip = 0, remote_ip = 0;
  ti_port_t local_port = 0, remote_port = 0;
  int peer_node = -1;
  std::uint32_t peer_id = 0;  // the peer's connection id
  int service = -1;           // our data service (messages to us)
  int peer_service = -1;      // the peer's
  EP_RCVR* rcvr = nullptr;
  std::vector<std::uint8_t> private_in;
  ti_conn_request_t* user_req = nullptr;
  ti_conn_request_t req{};               // what the CR callback gets
  std::deque<ti_data_element_t*> recvs;  // posted, in the order they land
  // Messages that take a peer's receive (sends, rdma_*_send's message, an
  // RDMA write's OOB data), in posting order, from the first that cannot
  // go yet: the peer's receives take them in the order they were posted.
  std::deque<ti_data_element_t*> ordered;
  bool flushing = false;
  std::uint32_t in_flight = 0;  // sends and RDMAs not yet complete
  bool error_reported = false;
  bool releasing = false;  // disconnected: goes when nothing is in flight
  ti_context_cb_t disconnect_cb = nullptr;
  void* disconnect_context = nullptr;
  std::unique_ptr<host::WaitQueue> rtu;
};

// Live objects of one node (leak checks in tests).
struct Counters {
  std::uint32_t objects = 0, conns = 0, services = 0;
};

class ElanTiNode : public host::HostSoftware {
 public:
  explicit ElanTiNode(host::Host& h);
  ~ElanTiNode() override;
  host::Host& host;
  int nodeid = -1;
  EP_RCVR* ctl_rcvr = nullptr;  // the control service's small messages
  EP_XMTR* ctl_xmtr = nullptr;
  EP_RCVR* rpc_rcvr = nullptr;  // RDMA RPCs
  EP_XMTR* large = nullptr;
  std::vector<unsigned char*> rpc_bufs;  // the RPC receiver's (empty) buffers
  std::map<std::uint32_t, Conn*> conns;  // by id
  std::vector<bool> services_used;
  std::uint32_t next_conn = 1, next_tag = 1;
  std::map<std::uint32_t, ti_data_element_t*> rdma_tags;  // RDMAs waiting for the peer
  std::vector<std::pair<const void*, ti_event_cb_t>> registrations;

  template <class T>
  T* make(Kind k, Instance* i) {
    auto* o = new T;
    adopt(o, k, i);
    return o;
  }
  void adopt(Obj* o, Kind k, Instance* i);
  void drop(Obj* o);  // revokes and deletes
  Obj* lookup(const void* handle, Kind k) const;
  Obj* find(const void* handle) const;  // any kind
  std::vector<Obj*> owned_by(const Instance* i) const;
  std::vector<Obj*> all(Kind k) const;
  int alloc_service();
  void free_service(int s);
  void defer(std::function<void()> fn);
  Counters counters() const;

 private:
  std::map<std::uintptr_t, Obj*> objs_;
  std::uint64_t serial_ = 1;
  ti_core::SystemThread system_thread_;
};

ElanTiNode* node();  // the calling node's (created on first use; nullptr without an Elan)
ElanTiNode* node_if_started(host::Host& h);
template <class T>
T* as(const void* h, Kind k) {
  ElanTiNode* n = node();
  return n ? static_cast<T*>(n->lookup(h, k)) : nullptr;
}
template <class H>
H handle_of(const Obj* o) {
  return o ? reinterpret_cast<H>(o->token) : nullptr;
}
// The debug_svc level of the instance a handle belongs to (TI_DBG_OFF: none).
ti_debug_level_t level_of(const void* handle);
ti_debug_level_t level_of(const ti_conn_request_t* r);
Mem* mem_covering(const Instance* i, std::uint64_t addr, std::uint64_t len);
std::uint32_t elan_ip(int nodeid);
int node_of_ip(std::uint32_t ip);

// The control messages (small, on kCtlService).
enum class Ctl : std::uint32_t { Req = 1, Rep, Rtu, Rej, Dreq, WriteAsk };
constexpr int kCtlService = 40, kRpcService = 41, kFirstDataService = 42;
struct CtlMsg {
  std::uint32_t kind, from_node, from_conn, to_conn, service;
  std::uint32_t src_ip, dst_ip, port, len;          // len: private data bytes in data
  std::uint32_t tag, src, dst, dst_hi, bytes, key;  // WriteAsk: our Elan source, the peer's virtual address
  std::uint8_t data[200];
};
void send_ctl(ElanTiNode& n, int dest, CtlMsg& m);
void on_ctl(void* arg, caddr_t msg);  // interrupt context
void on_rpc(EP_RXD* rxd);             // interrupt context
void complete(Conn* c, ti_data_element_t* e, ti_status_t st);
void fail_posted(Conn* c, ti_status_t st);  // every element the connection holds
void flush_ordered(Conn* c);                // sends what may go of `ordered` (cancels it once the connection ends)

// The RDMA RPCs' payload (on kRpcService): its words, and the operations.
constexpr std::uint32_t kRpcMagic = 0x54495243;  // "TIRC"
enum RpcOp : std::uint32_t { kRead = 1, kWritePull = 2, kAtomic = 3 };
enum RpcWord {
  kMagic,
  kOp,
  kTag,
  kOk,
  kSrc,
  kDst,
  kLen,
  kKey,
  kVaddrLo,
  kVaddrHi,
  kAtomicOp,  // kAtomic: ti_atomic_op_t, then the operands (compare or add, swap), low word first
  kOperand0Lo,
  kOperand0Hi,
  kOperand1Lo,
  kOperand1Hi
};
Mem* region_of(ElanTiNode& n, std::uint32_t key, std::uint64_t vaddr, std::uint32_t len);
void serve_atomic(ElanTiNode& n, EP_RXD* rxd, const E3_uint32* w);  // interrupt context
void on_rpc_replied(EP_RXD* rxd);
bool rdma_list_ok(const Conn* c, ti_data_element_t* list, ti_res_pool_type_t type);
void hold(Conn* c, ti_data_element_t* e, Op op);
int send_flags();
void bounce_free(Td* td);

ti_status_t conn_connect(ti_handle_t, ti_conn_attr_t*, ti_conn_info_t*, ti_conn_request_t*, ti_conn_handle_t*);
ti_status_t conn_listen(ti_handle_t, ti_conn_attr_t*, ti_conn_info_t*, ti_conn_request_t*, ti_conn_handle_t*);
ti_status_t conn_accept(ti_conn_request_t*, uint32_t, ti_comp_info_t*, ti_data_element_t*);
ti_status_t conn_reject(ti_conn_request_t*);
ti_status_t conn_disconnect(ti_conn_handle_t, ti_context_cb_t, void*);
void conn_release(Conn* c);
Conn* conn_by_id(ElanTiNode& n, std::uint32_t id);
void conn_drop(Conn* c);  // the service, the receiver and the handle go
void report_error(Conn* c, ti_status_t st);

ti_status_t data_msg_send(ti_conn_handle_t, ti_data_element_t*);
ti_status_t data_msg_recv(ti_conn_handle_t, ti_data_element_t*);
ti_status_t data_rdma_read(ti_conn_handle_t, ti_data_element_t*);
ti_status_t data_rdma_write(ti_conn_handle_t, ti_data_element_t*);
ti_status_t data_rdma_read_send(ti_conn_handle_t, ti_data_element_t*, ti_data_element_t*);
ti_status_t data_rdma_write_send(ti_conn_handle_t, ti_data_element_t*, ti_data_element_t*);
ti_status_t data_atomic(ti_conn_handle_t, ti_atomic_op_t, ti_data_element_t*);
ti_status_t post_receives(Conn* c, ti_data_element_t* list);
void rdma_write_ask(ElanTiNode& n, const CtlMsg& m);

ti_status_t pool_create(ti_handle_t, ti_res_pool_type_t, uint32_t, uint32_t, uint32_t*, uint32_t,
                        ti_res_pool_handle_t*);
ti_status_t pool_destroy(ti_res_pool_handle_t);
ti_status_t pool_get(ti_res_pool_handle_t, uint32_t, boolean_t, ti_res_pool_cb_t, void*, void*, ti_pool_response_t*);
ti_status_t pool_put(ti_res_pool_handle_t, ti_data_element_t*);
Td* td_of(ti_data_element_t* e);  // nullptr: not an element of a live pool here
void pool_free(Pool* p);          // whatever its elements do (destroy_ti)
Mem* map_range(Instance* i, void* addr, std::uint32_t len);
void unmap(Mem* m);

}  // namespace nicsim::ti_elan
