// The InfiniBand Communication Manager of one node: MADs on QP1 (the GSI)
// through the kernel verbs, the CM protocol (REQ, MRA, REJ, REP, RTU, DREQ,
// DREP) with its timeouts and retries, one typed state machine per
// connection ("ib.cm"), and the node's agent for the Subnet Administration
// class (its queries; the SA itself, program "ib_sa", answers them).
//
// Threading: the node's CM thread ("ib_cm") does all the work: it polls
// the GSI CQ, runs the protocol, moves QPs (HCA commands, so never in
// interrupt context) and sends MADs. API calls from any context queue work
// for it. Consumer handlers run in the node's interrupt context, raised on
// the CM's interrupt line. Timers are host timers (interrupt context) that
// queue work too.
//
// Include rdma/ib_verbs.h before this header.
#pragma once
#include <array>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "core/units.h"
#include "core/inspect.h"
#include "fsm/fsm.h"

namespace nicsim::host {
class Host;
class WaitQueue;
class Timer;
}  // namespace nicsim::host

namespace nicsim::cm {

// ---- the connection state machine ---------------------------------------------
#define NICSIM_CM_SETUP_STATES(X) X(Idle) X(Listen) X(ReqSent) X(ReqRcvd) X(MraSent) X(MraRcvd) X(RepSent) X(RepRcvd)
#define NICSIM_CM_RELEASE_STATES(X) X(Established) X(DreqSent) X(DreqRcvd) X(Timewait)
#define NICSIM_CM_STATES(X) NICSIM_CM_SETUP_STATES(X) NICSIM_CM_RELEASE_STATES(X)
#define NICSIM_CM_SETUP_EVENTS(X) X(Listen) X(StopListen) X(SendReq) X(RecvReq) X(RecvMra) X(SendMra) X(SendRep)
#define NICSIM_CM_REPLY_EVENTS(X) X(RecvRep) X(SendRtu) X(RecvRtu) X(SendRej) X(RecvRej) X(Retry) X(Timeout)
#define NICSIM_CM_RELEASE_EVENTS(X) X(SendDreq) X(RecvDreq) X(SendDrep) X(RecvDrep) X(TimewaitEnd)
#define NICSIM_CM_EVENTS(X) NICSIM_CM_SETUP_EVENTS(X) NICSIM_CM_REPLY_EVENTS(X) NICSIM_CM_RELEASE_EVENTS(X)
NICSIM_FSM_ENUM(CmState, NICSIM_CM_STATES)
NICSIM_FSM_ENUM(CmEvent, NICSIM_CM_EVENTS)
struct CmMachine {
  using State = CmState;
  using Event = CmEvent;
  static const FsmType& type();
};

// What the connection tells its owner (the CMA), in interrupt context.
enum class Upcall : std::uint8_t { Request, Established, Rejected, Disconnected, Unreachable };

// A path between two ports, as the SA's PathRecord or the REQ gives it.
struct Path {
  std::array<std::uint8_t, 16> sgid{}, dgid{};
  std::uint16_t slid = 0, dlid = 0, pkey = 0xffff;
  std::uint8_t sl = 0, mtu = 4, rate = 3, lifetime = 0;
};

// Figures of the last connection a node established (for cm_connect_rate).
struct ConnectFigures {
  Tick resolve = 0;    // the path query (SA round trips, 0 when cached)
  Tick qp_modify = 0;  // INIT, RTR and RTS on this side
  Tick handshake = 0;  // REQ leaving to ESTABLISHED, less the QP changes
  Tick mad_cpu = 0;    // of the handshake: this side's CPU for its MADs (REQ, REP, RTU)
};

// One end of a connection, or a listener.
struct Conn {
  Conn(std::uint64_t handle, std::uint32_t local_id, std::uint32_t node);
  std::uint64_t handle;        // the consumer's cm_id value; never reused
  bool consumer_valid = true;  // false after the final event (the id is gone)
  bool active = false;
  Fsm<CmMachine> fsm;
  std::uint32_t local_id, remote_id = 0;
  std::uint64_t service_id = 0, remote_guid = 0;
  Path path;
  ib_qp* qp = nullptr;
  std::uint32_t local_qpn = 0, remote_qpn = 0, local_psn = 0, remote_psn = 0;
  std::uint8_t resp_res = 0, init_depth = 0, retry_cnt = 7, rnr_retry = 7, ack_timeout = 14,
               min_rnr = 1;  // min_rnr 1: 10 us
  int access = 0;
  std::uint8_t remote_resp_to = 0, local_resp_to = 0, max_retries = 0;  // REQ fields (exponents, count)
  std::uint32_t sends = 0;                                              // sends of the current message
  // The connection's transaction id: the active side's REQ's, which the
  // passive side takes, so REQ, MRA, REP, REJ and RTU share it (as Linux's
  // CM does; Wireshark pairs a REP with its REQ by it).
  std::uint64_t tid = 0;
  std::uint32_t mads = 0;                // MADs this side built or handled for the connection
  std::array<std::uint8_t, 256> last{};  // the last message sent (for retries and duplicates)
  std::vector<std::uint8_t> req_private, rep_private;
  std::unique_ptr<host::Timer> timer;
  std::function<void(Upcall, const std::uint8_t* priv)> upcall;  // to the CMA
  std::function<void()> on_mra;  // active side: an MRA arrived (cm/cma/cma_mra.h; interrupt context)
  Conn* listener = nullptr;      // passive side: the listener the REQ came to
  Tick t_req = 0, t_qp = 0, t_resolve = 0;
  std::uint32_t dst_ip = 0;     // active side: the address connected to
  bool accept_pending = false;  // accepted: the REP is on its way
  bool disconnecting = false;   // ib_cma_disconnect was called
  Tick qp_time = 0;             // time spent moving the QP
  Inspectable inspectable;      // what the debugger shows (cm_protocol.cc)
  static void inspect(const void* conn, InspectRows& rows);
};

class CmNode;

// The node's CM: nullptr if the node has no HCA. The first call on a node
// opens the device, brings up QP1, starts the CM thread and registers the
// node's address at the SA (thread context; blocks until it answered or
// the retries ran out).
CmNode* node_cm(const std::function<void(CmNode&)>& setup = {});
CmNode* node_cm_if_started(host::Host& h);

// IPv4 addresses (host order). A node's port 1 has the scenario's Node.ipv4,
// by default 10.0.0.0 + node index + 1 (docs/cm.md).
std::uint32_t default_ipv4(std::uint32_t node_id);
std::string format_ipv4(std::uint32_t ip);

// Counters for leak checks and figures.
struct CmCounters {
  std::uint32_t live_conns = 0, listeners = 0, timewait = 0, sa_queries_live = 0;
  std::uint64_t mads_sent = 0, mads_received = 0, retries = 0, sa_retries = 0, sa_queries = 0, cache_hits = 0;
  std::uint64_t mras_sent = 0;
};

}  // namespace nicsim::cm
