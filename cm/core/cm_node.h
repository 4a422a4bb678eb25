// The CM of one node (see cm.h): its GSI agent, its SA client, its
// connections and listeners. Include rdma/ib_verbs.h before this header.
#pragma once
#include "cm/core/cm.h"
#include "cm/core/mad.h"
#include "host/host.h"

namespace nicsim::cm {

// Where a received MAD came from.
struct MadSource {
  std::uint16_t slid = 0;
  std::uint32_t src_qp = 0;
  std::uint16_t pkey_index = 0;
};

// One outstanding SA query.
struct SaQuery {
  std::uint64_t tid = 0;
  std::array<std::uint8_t, 256> mad{};
  std::uint32_t sends = 0;
  std::unique_ptr<host::Timer> timer;
  std::function<void(bool ok, const std::uint8_t* resp)> done;
};

class CmNode : public host::HostSoftware {
 public:
  using MadHandler = std::function<void(const std::uint8_t* mad, const MadSource& from)>;
  CmNode(host::Host& host, ib_device* dev);
  ~CmNode() override;
  // Thread context: QP1, buffers, the CM thread, then `setup` (a class
  // handler, say), then the address registration.
  bool start(const std::function<void(CmNode&)>& setup = {});
  host::Host& host() { return host_; }
  ib_device* device() { return dev_; }
  const CmCounters& counters() const { return counters_; }
  CmCounters& mutable_counters() { return counters_; }
  const ConnectFigures& last_connect() const { return figures_; }
  std::uint32_t ipv4() const { return ipv4_; }
  std::uint16_t lid() const { return lid_; }
  const std::array<std::uint8_t, 16>& gid() const { return gid_; }
  bool registered() const { return registered_; }

  // ---- work and upcalls (any context) ------------------------------------------
  void post(std::function<void()> work);
  void upcall(std::function<void()> fn);  // runs in the node's interrupt context
  // A host timer for `c` whose expiry queues `work` for the CM thread.
  std::unique_ptr<host::Timer> make_timer(std::string name, std::function<void()> work);

  // ---- MADs (CM thread) --------------------------------------------------------
  bool send_mad(std::uint16_t dlid, const std::uint8_t* mad);
  void set_class_handler(std::uint8_t mgmt_class, MadHandler h) { handlers_[mgmt_class] = std::move(h); }
  std::uint64_t next_tid() { return next_tid_++; }

  // ---- SA client (CM thread) ---------------------------------------------------
  void sa_query(std::uint8_t method, std::uint16_t attr, std::uint64_t mask, const std::uint8_t* record,
                std::uint32_t record_bytes, std::function<void(bool ok, const std::uint8_t* resp)> done);
  // IPv4 (host order) -> path to the port that registered it; the cache
  // first. `done` runs on the CM thread.
  void resolve(std::uint32_t ip, std::function<void(bool ok, const Path& path)> done);
  // GID -> the IPv4 address registered for it (0 when none).
  void reverse(const std::array<std::uint8_t, 16>& gid, std::function<void(std::uint32_t ip)> done);

  // ---- the CM (any context: checks now, work on the CM thread) -----------------
  // Errno-style results (0 or -E...).
  Conn* find(std::uint64_t handle);
  int listen(std::uint64_t service_id, std::function<void(Upcall, const std::uint8_t*)> on_request, Conn** out);
  int stop_listen(Conn* listener);
  Conn* new_conn();
  int connect(Conn* c, std::uint32_t dst_ip, std::uint32_t timeout_ms, const std::uint8_t* priv, std::uint8_t len);
  int accept(Conn* c, ib_qp* qp, const std::uint8_t* priv, std::uint8_t len);
  int reject(Conn* c, const std::uint8_t* priv, std::uint8_t len);
  int disconnect(Conn* c);
  // Ends the consumer's view of `c` (its final event was delivered).
  void release(Conn* c);

  // ---- for the protocol (CM thread) --------------------------------------------
  Conn* conn(std::uint64_t handle) {  // valid for the consumer or not
    auto it = conns_.find(handle);
    return it == conns_.end() ? nullptr : it->second.get();
  }
  Conn* by_comm_id(std::uint32_t id) {
    auto it = by_comm_id_.find(id);
    return it == by_comm_id_.end() ? nullptr : it->second;
  }
  Conn* listener_for(std::uint64_t service_id) {
    auto it = listeners_.find(service_id);
    return it == listeners_.end() ? nullptr : it->second;
  }
  Conn* by_remote(std::uint32_t remote_id, std::uint64_t remote_guid);
  Tick timewait_end(std::uint32_t qpn) const {
    auto it = timewait_qpns_.find(qpn);
    return it == timewait_qpns_.end() ? 0 : it->second;
  }
  void enter_timewait(Conn& c);
  void finish(Conn* c);  // the connection is over: its state goes (the caller returns at once)
  // Ends every connection (listeners stay) at once, sending nothing and
  // calling no consumer, and forgets the QPNs in timewait: what the CM
  // does with its connections when their device goes away. The QPs stay
  // their owners'. CM thread. Returns how many connections there were.
  std::uint32_t drop_connections();
  ConnectFigures& figures() { return figures_; }
  std::uint64_t ca_guid() const { return ca_guid_; }
  std::uint16_t sa_lid() const { return sa_lid_; }

 private:
  friend struct Protocol;
  bool wait_port_active();
  bool open_gsi();
  bool register_address();
  void thread_body();
  void drain_cq();
  void handle_mad(const std::uint8_t* mad, const MadSource& from);
  void post_recv(std::uint32_t slot);
  void on_sa_response(const std::uint8_t* mad);
  void sa_send(SaQuery& q);
  ib_ah* ah_for(std::uint16_t dlid);

  host::Host& host_;
  ib_device* dev_;
  ib_pd* pd_ = nullptr;
  ib_cq* cq_ = nullptr;
  ib_qp* qp1_ = nullptr;
  ib_mr* mr_ = nullptr;
  std::uint8_t* mem_ = nullptr;  // receive slots, then send slots
  std::vector<bool> send_busy_;
  std::map<std::uint16_t, ib_ah*> ahs_;
  std::map<std::uint8_t, MadHandler> handlers_;
  std::unique_ptr<host::WaitQueue> wq_;
  std::deque<std::function<void()>> work_;
  std::deque<std::function<void()>> upcalls_;
  int irq_ = -1;
  bool cq_fired_ = false;
  std::uint64_t next_tid_ = 1;
  std::uint16_t lid_ = 0, sa_lid_ = 0;
  std::array<std::uint8_t, 16> gid_{};
  std::uint64_t ca_guid_ = 0;
  std::uint32_t ipv4_ = 0;
  bool registered_ = false;
  std::map<std::uint64_t, std::unique_ptr<SaQuery>> sa_queries_;
  struct CacheEntry {
    Path path;
    Tick expires = 0;
  };
  std::map<std::uint32_t, CacheEntry> path_cache_;
  // Connections.
  std::uint64_t next_handle_ = 0x1000;
  std::uint32_t next_comm_id_ = 1;
  std::map<std::uint64_t, std::unique_ptr<Conn>> conns_;  // by handle
  std::map<std::uint32_t, Conn*> by_comm_id_;
  std::map<std::uint64_t, Conn*> listeners_;     // by service id
  std::map<std::uint32_t, Tick> timewait_qpns_;  // local QPN -> end of its timewait
  CmCounters counters_;
  ConnectFigures figures_;
};

// The protocol's steps (cm_protocol.cc), on the CM thread.
struct Protocol {
  static void start_connect(CmNode& n, Conn& c);
  static void on_mad(CmNode& n, const std::uint8_t* mad, const MadSource& from);
  static void do_accept(CmNode& n, Conn& c);
  static void do_reject(CmNode& n, Conn& c, std::uint16_t reason, bool destroy);
  static void do_disconnect(CmNode& n, Conn& c);
  static void on_timer(CmNode& n, std::uint64_t handle);
};

// Parameters (host scope, "cm.<name>").
Tick response_timeout(const host::Host& h);
std::uint8_t exponent_for(Tick t);                                          // smallest e with 4.096 us * 2^e >= t
inline Tick timeout_of(std::uint8_t e) { return (Tick{4096} * kNs) << e; }  // 4.096 us * 2^e

}  // namespace nicsim::cm
