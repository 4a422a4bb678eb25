// The InfiniBand subnet manager: a program on one HCA node that manages the
// fabric through its CA's QP0, using only ci_interface_t (open_ca,
// create_spl_qp, post_send/post_recv of 256-byte SMPs, poll_cq,
// enable_cq_notify, local_mad for its own port). A sweep discovers the
// fabric breadth-first with directed-route SMPs, assigns LIDs (its own port
// first, stable by port GUID across sweeps), computes routes on the graph it
// discovered with a routing engine, programs every switch's LFT in 64-entry blocks and
// the MFTs of the multicast groups it was given, then moves every port to
// Armed and then Active. Lost SMPs are retried after a timeout. It then
// sleeps until a trap (128, link state change) arrives on QP0 or its own
// port changes, and sweeps again.
//
// Program "subnet_manager", arguments:
//   --mcast=<mlid>:<node>[,<node>...]   a multicast group and its members
//                                       (node names = the first word of
//                                       their NodeDescription)
//   --timeout-us=N  SMP response timeout (default 100)
//   --retries=N     resends of an unanswered SMP (default 3)
//   --sweep-interval-us=N  also sweep every N us (default 0: only on traps
//                   and port events, so a fabric at rest stays silent)
//   --routing=ENGINE  auto (default), minhop, ftree or updn
//                   (ib_fabric/routing_engine.h)
//   --max-wire-smps=N  SMPs in flight at once during a sweep (default 4,
//                   as OpenSM; 1..16)
// As a workload it sweeps once and exits (0: every port reached Active);
// started by the world for the scenario's subnet_manager it is a daemon.
#pragma once
#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "core/units.h"
#include "iba/ib_ci.h"
#include "ib_fabric/routing_engine.h"

namespace nicsim::host {
class Host;
class WaitQueue;
}  // namespace nicsim::host

namespace nicsim::sm {

inline constexpr std::uint32_t kMaxWireSmps = 16;  // send buffers for SMPs in flight

struct McastGroup {
  std::uint16_t mlid = 0;
  std::vector<std::string> members;
};

struct SmOptions {
  std::vector<McastGroup> groups;
  Tick timeout = 100 * kUs;
  std::uint32_t retries = 3;
  Tick sweep_interval = 0;  // also sweep this often when nothing happened (0: only on traps and events)
  fabric::routing::Engine routing = fabric::routing::Engine::Auto;
  std::uint32_t max_wire_smps = 4;  // SMPs in flight at once during a sweep (OpenSM's max_wire_smps)
};

// One SMP of a batch (SubnetManager::smp_batch): what to send, and what came
// back.
struct SmpRequest {
  std::vector<std::uint8_t> path;  // directed route (empty: the SM's own port)
  std::uint8_t method = 0;
  std::uint16_t attr = 0;
  std::uint32_t mod = 0;
  bool has_data = false;
  std::array<std::uint8_t, 64> data{};
  bool ok = false;                      // answered with a good status
  std::array<std::uint8_t, 64> resp{};  // the answer's SMP data
};

// What the sweep learnt about one port of a node.
struct SmPort {
  bool link_up = false;
  std::uint8_t state = 0;  // PortInfo:PortState
  std::uint16_t lid = 0, sm_lid = 0;
  int peer = -1;  // node index across the link
  std::uint8_t peer_port = 0;
  std::uint8_t info[64] = {};  // the PortInfo as read (the base of Sets)
};

struct SmNode {
  std::uint64_t guid = 0;  // switch: node GUID; CA: port GUID
  bool is_switch = false;
  std::uint8_t num_ports = 0;
  std::uint8_t ca_port = 0;        // CA: the port the sweep reached
  std::string name;                // first word of NodeDescription
  std::vector<std::uint8_t> path;  // directed route from the SM's port (empty: the SM's own CA)
  std::uint16_t lid = 0;
  std::vector<SmPort> ports;  // [0..num_ports]; [0] is a switch's management port
};

struct SweepStats {
  std::uint32_t smps = 0, timeouts = 0, failed = 0;
  fabric::routing::Engine engine = fabric::routing::Engine::MinHop;  // the routing engine used
  Tick started = 0, finished = 0;
};

class SubnetManager {
 public:
  SubnetManager(const ci_interface_t* ci, host::Host& host, SmOptions options);
  ~SubnetManager();
  // Opens the CA and brings up QP0. False (logged) on failure.
  bool start();
  // One full sweep. False if the SM's own port is not up or SMPs failed.
  bool sweep();
  // Blocks until a trap or a port event of the SM's CA asks for a sweep, or
  // until `deadline` (0: no limit). True if one did.
  bool wait_for_change(Tick deadline);
  const std::vector<SmNode>& nodes() const { return nodes_; }
  const SweepStats& last() const { return stats_; }
  std::uint32_t sweeps() const { return sweeps_; }
  const SmOptions& options() const { return opt_; }
  // One SMP transaction: Get/Set `attr` at the node at `path` (directed
  // route; empty = own port through local_mad). `resp` gets the 256-byte
  // response. False after all retries timed out or on a bad status.
  bool smp(const std::vector<std::uint8_t>& path, std::uint8_t method, std::uint16_t attr, std::uint32_t mod,
           const std::uint8_t* data, std::uint8_t* resp);
  // The same, LID-routed (class 0x01) to `dlid`: for a fabric whose LFTs
  // are programmed.
  bool smp_lid(std::uint16_t dlid, std::uint8_t method, std::uint16_t attr, std::uint32_t mod, const std::uint8_t* data,
               std::uint8_t* resp);

  // The same for many directed-route SMPs, up to max_wire_smps in flight,
  // each retried as smp() does; answers in request order. False if any
  // failed.
  bool smp_batch(std::vector<SmpRequest>& reqs);

 private:
  struct InFlight {
    std::size_t req;
    std::uint32_t buf, attempt;
    Tick deadline;
  };
  bool transact(std::uint8_t* mad, ib_av_handle_t av, std::uint8_t* resp);
  std::uint8_t* build_smp(std::uint32_t buf, const SmpRequest& req);
  bool post_smp(std::uint8_t* mad, ib_av_handle_t av, std::uint64_t tid);
  bool local_smp(SmpRequest& req);
  bool launch(std::vector<SmpRequest>& reqs, std::size_t i, std::uint32_t buf, std::uint32_t attempt,
              std::map<std::uint64_t, InFlight>& flying);
  void expire(std::vector<SmpRequest>& reqs, std::map<std::uint64_t, InFlight>& flying,
              std::vector<std::uint32_t>& free_bufs, bool& ok);
  void wait_batch(const std::map<std::uint64_t, InFlight>& flying);
  // ---- transport (sm.cc) ----
  bool wait_response(std::uint64_t tid, std::uint8_t* resp, Tick deadline);
  // Takes every completion: a response `take` accepts (true) is its; traps
  // are noted.
  void drain_cq(const std::function<bool(const std::uint8_t* mad)>& take);
  void post_recv(std::uint32_t slot);
  static void completion_cb(void* cq_context);
  static void async_cb(const ib_event_rec_t* rec);
  // ---- sweep (sweep.cc) ----
  bool discover();
  void forget_lost_switches();
  struct Probe {
    std::vector<std::uint8_t> path;
    int from;
    std::uint8_t from_port;
  };
  std::vector<Probe> discover_wave(const std::vector<Probe>& wave);
  std::vector<int> describe(const std::vector<Probe>& wave, const std::vector<SmpRequest>& infos,
                            const std::vector<std::size_t>& fresh);
  int find_node(std::uint64_t guid, bool is_switch) const;
  void link_nodes(int from, std::uint8_t from_port, int n, std::uint8_t local);
  void assign_lids();
  void compute_routes();
  bool program_lfts();
  bool program_mfts();
  SmpRequest port_request(int node, std::uint8_t port, std::uint8_t state) const;
  bool set_ports(const std::vector<std::pair<int, std::uint8_t>>& ports, std::uint8_t state);
  bool activate_ports();

  const ci_interface_t* ci_;
  host::Host& host_;
  SmOptions opt_;
  host::WaitQueue* wq_;
  bool cq_fired_ = false, trap_seen_ = false, port_event_ = false;
  ib_ca_handle_t ca_ = nullptr;
  ib_pd_handle_t pd_ = nullptr;
  ib_cq_handle_t cq_ = nullptr;
  ib_qp_handle_t qp0_ = nullptr;
  ib_av_handle_t av_ = nullptr;
  ib_mr_handle_t mr_ = nullptr;
  std::uint32_t lkey_ = 0;
  std::uint8_t* mem_ = nullptr;  // receive slots, then the send buffer
  std::uint8_t port_ = 1;        // the SM's port
  std::uint64_t next_tid_ = 1;
  std::uint32_t sweeps_ = 0;
  SweepStats stats_;
  std::vector<SmNode> nodes_;
  std::map<std::uint64_t, std::uint16_t> lid_of_;  // GUID -> LID, kept across sweeps
  std::uint16_t next_lid_ = 1;
  std::map<std::uint64_t, std::vector<std::uint8_t>> lft_;      // switch GUID -> wanted LFT
  std::map<std::uint64_t, std::vector<std::uint8_t>> lft_set_;  // switch GUID -> what it holds
  std::map<std::pair<std::uint64_t, std::uint32_t>, std::vector<std::uint8_t>>
      mft_set_;  // (GUID, MFT modifier) -> block
};

// Parses the program arguments; "" or an error naming the argument.
std::string parse_options(int argc, char** argv, SmOptions& out);

}  // namespace nicsim::sm
