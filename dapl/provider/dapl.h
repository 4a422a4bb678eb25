// Inside the DAPL provider: the objects behind DAT handles, the node's
// provider state, the EP state machine and the helpers every call uses.
// The seed's structure: dapl_<call> entry points (the dat_* functions),
// subsystem helpers per object (ep, evd, cr), one provider underneath (the
// kernel verbs and the CMA, reached through kib.h).
#pragma once
#include <dat/udat.h>
#include <netinet/in.h>

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "host/api_call.h"
#include "core/units.h"
#include "core/inspect.h"
#include "core/sim.h"
#include "fsm/fsm.h"

namespace nicsim::host {
class Host;
class WaitQueue;
}  // namespace nicsim::host

namespace kib {
struct ib_mw_bind;
struct ib_device;
struct ib_pd;
struct ib_cq;
struct ib_qp;
struct ib_mr;
struct ib_mw;
}  // namespace kib

namespace nicsim::dapl {

// ---- the EP state machine: DAT_EP_STATE x what happens to the EP ----------
// The states are DAT_EP_STATE's, in its order (a state converts by value).
#define NICSIM_DAPL_EP_SETUP_STATES(X) \
  X(Unconnected) X(Reserved) X(PassiveConnectionPending) X(ActiveConnectionPending) X(TentativeConnectionPending)
#define NICSIM_DAPL_EP_LIVE_STATES(X) X(Connected) X(DisconnectPending) X(Disconnected) X(CompletionPending)
#define NICSIM_DAPL_EP_STATES(X) NICSIM_DAPL_EP_SETUP_STATES(X) NICSIM_DAPL_EP_LIVE_STATES(X)
#define NICSIM_DAPL_EP_SETUP_EVENTS(X) X(Connect) X(Reserve) X(Unreserve) X(Request) X(Accept) X(Reject)
#define NICSIM_DAPL_EP_REPLY_EVENTS(X) X(Established) X(PeerRejected) X(NonPeerRejected) X(Unreachable) X(Timeout)
#define NICSIM_DAPL_EP_RELEASE_EVENTS(X) X(Disconnect) X(Disconnected) X(Broken) X(FlushRecvs) X(Reset)
#define NICSIM_DAPL_EP_EVENTS(X) \
  NICSIM_DAPL_EP_SETUP_EVENTS(X) NICSIM_DAPL_EP_REPLY_EVENTS(X) NICSIM_DAPL_EP_RELEASE_EVENTS(X)
NICSIM_FSM_ENUM(EpState, NICSIM_DAPL_EP_STATES)
NICSIM_FSM_ENUM(EpEvent, NICSIM_DAPL_EP_EVENTS)
struct EpMachine {
  using State = EpState;
  using Event = EpEvent;
  static const FsmType& type();
};

// The seed's qp_state value for an EP with no QP bound.
inline constexpr int kQpStateUnattached = 0xFFF0;

// Private data the provider puts before the consumer's (the REQ also
// carries the active side's IPv4 address, as the reference's IBHOSTS
// naming did): magic, version, length (2 bytes, big-endian)[, IPv4].
inline constexpr int kReqHeader = 8, kRepHeader = 4;
inline constexpr int kMaxReqPrivate = 92 - kReqHeader;  // IB_CMA_REQ_PRIVATE_DATA_SIZE less the header
inline constexpr int kMaxRepPrivate = 196 - kRepHeader;
inline constexpr std::uint8_t kMagic = 0xDA, kVersion = 0x11, kPeerReject = 0x5E;

enum class Kind : std::uint8_t { Ia = 1, Pz, Lmr, Evd, Ep, Psp, Rsp, Cr, Rmr, Cno };

struct Ia;
class Node;
struct Object {
  Object(Kind k, Ia* owner) : kind(k), ia(owner) {}
  virtual ~Object() = default;
  // Releases what a pinned object kept after it was freed (its last pin went).
  virtual void reap(Node&) {}
  Kind kind;
  std::uint64_t handle = 0;
  Ia* ia;
  DAT_CONTEXT context{};
  int refs = 0;  // bound handles using this one (EPs on a PZ or EVD, LMRs on a PZ)
  // Calls under way on this object (a thread blocked in dat_evd_wait, or in
  // a verbs call that takes simulated time). A freed object that is pinned
  // leaves the handle table at once but lives until its last call returns,
  // which then sees `dead` and returns the error its call names.
  int pins = 0;
  bool dead = false;
};

struct Pz : Object {
  using Object::Object;
  kib::ib_pd* pd = nullptr;
};

struct Lmr : Object {
  using Object::Object;
  kib::ib_mr* mr = nullptr;
  struct Pz* pz = nullptr;
  DAT_LMR_PARAM param{};
};

// A memory window: bound to part of an LMR by a work request on an EP.
struct Rmr : Object {
  using Object::Object;
  kib::ib_mw* mw = nullptr;
  struct Pz* pz = nullptr;
  Lmr* lmr = nullptr;  // bound to (a reference on it), or none
  DAT_RMR_PARAM param{};
};

// A consumer notification object: triggered by an event on one of its
// EVDs that nobody waits on; dat_cno_wait takes the trigger.
struct Cno : Object {
  Cno(Ia* owner, host::Host& h);
  ~Cno() override;
  DAT_OS_WAIT_PROXY_AGENT agent{};
  bool triggered = false;
  std::uint64_t triggered_evd = 0;
  int waiters = 0;
  std::unique_ptr<host::WaitQueue> wq;
};

struct Evd : Object {
  Evd(Ia* owner, host::Host& h);
  ~Evd() override;
  void reap(Node& n) override;  // destroys the CQ a waiter kept
  DAT_EVD_FLAGS flags{};
  int qlen = 0;
  std::deque<DAT_EVENT> queue;
  kib::ib_cq* cq = nullptr;  // DTO and RMR bind EVDs
  bool enabled = true, waitable = true, waiting = false;
  Cno* cno = nullptr;  // its CNO (a reference on it), or none
  std::unique_ptr<host::WaitQueue> wq;
};

// One posted DTO: what its completion event reports.
struct Cookie {
  std::uint32_t seq = 0;
  DAT_DTO_COOKIE user{};
  DAT_VLEN length = 0;
  bool signalled = true;
  std::uint64_t rmr = 0;  // a bind: the RMR's handle (its event is an RMR bind completion)
};

struct Cr;
struct Ep : Object {
  Ep(Ia* owner, std::uint32_t device, const std::string& name);
  Fsm<EpMachine> fsm;
  Inspectable inspectable;  // the endpoint as the debugger shows it
  static void inspect(const void* self, InspectRows& rows);
  DAT_EP_PARAM param{};
  struct Pz* pz = nullptr;
  Evd *recv_evd = nullptr, *request_evd = nullptr, *connect_evd = nullptr;
  kib::ib_qp* qp = nullptr;
  bool qp_failed = false;  // the QP went to ERROR: replaced before the EP is used again
  std::deque<Cookie> requests, recvs;
  std::uint32_t next_seq = 1;
  std::uint64_t cma_id = 0;    // the connection's CMA id (0: none)
  std::uint64_t attempt = 0;   // the current connection attempt (CMA handler context)
  Cr* cr = nullptr;            // passive side: the connection's CR
  bool provider_made = false;  // made by a PSP with DAT_PSP_PROVIDER_FLAG
  bool graceful_pending = false;
  Tick deadline = 0;  // connect timer (0: none)
  sockaddr_in local_addr{}, remote_addr{};
  std::vector<std::uint8_t> event_private;  // the last connection event's private data
};

struct Sp : Object {  // a PSP or an RSP
  using Object::Object;
  DAT_CONN_QUAL qual = 0;
  Evd* evd = nullptr;
  DAT_PSP_FLAGS flags = DAT_PSP_CONSUMER_FLAG;
  Ep* rsp_ep = nullptr;
  bool listening = false;  // false once freed (PSP) or used (RSP)
  bool consumer_freed = false;
  std::uint64_t listen_id = 0;
  int crs = 0;  // live CRs (the PSP object lives until the last goes)
};

struct Cr : Object {
  using Object::Object;
  Sp* sp = nullptr;
  std::uint64_t cma_id = 0;
  std::vector<std::uint8_t> private_data;
  sockaddr_in remote_addr{};
  Ep* ep = nullptr;  // provider EP or RSP EP until accept; then the accepted EP
  bool answered = false;
};

struct Ia : Object {
  Ia() : Object(Kind::Ia, this) {}
  std::string name;
  int port = 1;
  sockaddr_in addr{};
  Evd* async_evd = nullptr;
  kib::ib_device* dev = nullptr;
  bool closing = false;
};

// Live objects by kind, for the limit test and the leak checks.
struct Counters {
  std::uint32_t ias = 0, pzs = 0, lmrs = 0, rmrs = 0, evds = 0, eps = 0, psps = 0, rsps = 0, crs = 0, qps = 0, cqs = 0;
  std::uint32_t timers = 0, cnos = 0;
  std::uint32_t total() const {
    return ias + pzs + lmrs + rmrs + evds + eps + psps + rsps + crs + qps + cqs + timers + cnos;
  }
};

// The provider on one node (its objects, the timer thread).
class Node {
 public:
  explicit Node(host::Host& h);
  ~Node();
  // The calling thread's node (created on first use); nullptr outside a node.
  static Node* current();
  // The node of `h` if its provider started (no side effects).
  static Node* of(host::Host& h);
  host::Host& host() { return host_; }

  template <class T>
  T* add(std::unique_ptr<T> obj);
  Object* find(DAT_HANDLE h) const;
  template <class T>
  T* find_as(DAT_HANDLE h, Kind k) const {
    Object* o = find(h);
    return o && o->kind == k ? static_cast<T*>(o) : nullptr;
  }
  // Takes the object out of the handle table; destroys it now, or when its
  // last pin goes (Pin).
  void remove(Object* o);
  void unpin(Object* o);
  const Counters& counters() const { return counters_; }
  Counters& counters_mut() { return counters_; }
  std::vector<Object*> objects_of(const Ia* ia) const;
  // The EP whose handle ends in `serial` (a DTO's wr_id names it so).
  Ep* ep_of_serial(std::uint32_t serial) const;
  // LMRs by lmr_context (the lkey), to check a post's local IOVs.
  std::map<DAT_LMR_CONTEXT, Lmr*> lmrs_by_context;

  // The debugger's name of the next EP made on this node ("h0.dat.ep1").
  std::string new_ep_name();
  // Connection attempts: the CMA handler's context names one.
  std::uint64_t new_attempt(Ep& ep);
  Ep* ep_of_attempt(std::uint64_t token) const;
  // Connect timers (the seed's lazily started timer thread).
  void set_timer(Ep& ep, Tick deadline);
  void cancel_timer(Ep& ep);

 private:
  void timer_thread();
  host::Host& host_;
  std::uint32_t node_tag_;
  std::uint64_t next_serial_ = 1, next_attempt_ = 1, eps_named_ = 0;
  std::map<std::uint64_t, std::unique_ptr<Object>> objects_;
  std::map<Object*, std::unique_ptr<Object>> zombies_;  // removed while pinned
  std::map<std::uint64_t, std::uint64_t> attempts_;     // token -> EP handle
  std::multimap<Tick, std::uint64_t> timers_;           // deadline -> EP handle
  std::unique_ptr<host::WaitQueue> timer_wq_;
  bool timer_started_ = false;
  Counters counters_;
};

template <class T>
T* Node::add(std::unique_ptr<T> obj) {
  T* raw = obj.get();
  raw->handle = (static_cast<std::uint64_t>(node_tag_) << 40) | (static_cast<std::uint64_t>(raw->kind) << 32) |
                (next_serial_++ & 0xffffffffu);
  objects_.emplace(raw->handle, std::move(obj));
  return raw;
}

// Keeps an object alive for the scope of a call that may block or take
// simulated time (another thread may free it meanwhile).
class Pin {
 public:
  Pin(Node& n, Object& o) : n_(n), o_(o) { ++o_.pins; }
  ~Pin() { n_.unpin(&o_); }
  Pin(const Pin&) = delete;
  Pin& operator=(const Pin&) = delete;

 private:
  Node& n_;
  Object& o_;
};

inline DAT_HANDLE to_handle(const Object* o) {
  return o ? reinterpret_cast<DAT_HANDLE>(static_cast<std::uintptr_t>(o->handle)) : DAT_HANDLE_NULL;
}

// ---- return codes ------------------------------------------------------------
inline DAT_RETURN err(DAT_RETURN_TYPE type, DAT_RETURN_SUBTYPE sub = DAT_NO_SUBTYPE) {
  return DAT_CLASS_ERROR | static_cast<DAT_UINT32>(type) | static_cast<DAT_UINT32>(sub);
}
inline DAT_RETURN bad_handle(DAT_RETURN_SUBTYPE sub) { return err(DAT_INVALID_HANDLE, sub); }
inline DAT_RETURN bad_arg(int n) {
  return err(DAT_INVALID_PARAMETER, static_cast<DAT_RETURN_SUBTYPE>(DAT_INVALID_ARG1 + n - 1));
}
DAT_RETURN bad_ep_state(const Ep& ep);
inline DAT_EP_STATE dat_state(const Ep& ep) { return static_cast<DAT_EP_STATE>(ep.fsm.state()); }

// ---- subsystem helpers (dapls_*) ---------------------------------------------
// CPU cost of one provider call ("cost.dapl_call").
void charge_call(Node& n);
// EVDs (evd.cc): queue an event (overflow goes to the IA's async EVD), wake waiters.
// `arrival`: false for a CQ entry moved into the queue (its completion
// interrupt already notified the EVD's CNO).
void evd_post(Evd& evd, const DAT_EVENT& ev, bool arrival = true);
void evd_post_connection(Ep& ep, DAT_EVENT_NUMBER number);
// `own_pins`: the pins the caller holds (others may be in a CQ call).
DAT_RETURN evd_free_all(Node& n, Evd& evd, int own_pins = 0);
// CNOs (cno.cc): an event reached the EVD (triggers its CNO when nobody
// waits on the EVD); attach or detach an EVD; free one (the IA's close).
void cno_notify(Evd& evd);
DAT_RETURN evd_set_cno(Node& n, Evd& evd, DAT_CNO_HANDLE cno_handle);
DAT_RETURN cno_free_all(Node& n, Cno& cno);
// DTO completions (dto.cc): the CQ's entries into the EVD's queue.
void evd_drain_cq(Node& n, Evd& evd);
// Posts a bind (or, with length 0, an unbind) of `mw` on the EP's QP as
// one of its requests; its completion is an RMR bind completion event.
DAT_RETURN ep_post_bind(Node& n, Ep& ep, Rmr& rmr, kib::ib_mw_bind& bind, DAT_RMR_COOKIE cookie, bool signalled);
// Frees an RMR (its window, its references); the IA's abrupt close too.
DAT_RETURN rmr_free_all(Node& n, Rmr& rmr);
// Posts a FLUSHED event for every DTO still on the EP (its QP went away).
void ep_flush_cookies(Ep& ep);
// EPs (ep.cc).
DAT_EP_ATTR ep_default_attr();
DAT_RETURN ep_attach_qp(Node& n, Ep& ep);  // a fresh QP in INIT (replaces any)
void ep_detach_qp(Node& n, Ep& ep);
void ep_fire(Ep& ep, EpEvent e, const char* cause);
DAT_RETURN ep_free_all(Node& n, Ep& ep);
// Connections (connect.cc).
void ep_connection_timed_out(Node& n, Ep& ep);
void ep_abort_connection(Node& n, Ep& ep);  // abrupt teardown of whatever connection the EP has
void sp_release(Node& n, Sp& sp);
void cr_release(Node& n, Cr& cr);
void ep_try_graceful_disconnect(Ep& ep);

}  // namespace nicsim::dapl
