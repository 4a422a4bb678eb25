// cm_connect_rate: how fast the CM sets up connections. The workload's
// nodes form pairs: the first half listen, rank N + i connects to rank i,
// all pairs at once. Each client connects, waits for ESTABLISHED,
// disconnects, waits for DISCONNECTED, --connects times, each on a new RC
// QP (no data moves).
//
// Arguments: --connects=N (per client, default 100), --sid=N (0x2000).
// Results (every client; the summary shows the last rank's):
//   connects_per_s      all clients' connections per simulated second
//   connect_first_us    the first connect, REQ to ESTABLISHED, with its path query
//   connect_us          the mean of the others (path cached)
//   passive_us          the passive side of the last one: REQ handed to the
//                       listener to its ESTABLISHED (RTU arrived)
//   path_query_us, qp_transitions_us, mad_handshake_us: the parts of the
//                       first connect on the active side (the SA's ServiceRecord
//                       and PathRecord round trips; INIT, RTR and RTS; REQ
//                       leaving to ESTABLISHED less the QP changes; mad_cpu_us
//                       is the active side's CPU for its REQ, REP and RTU)
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>

#include <rdma/ib_verbs.h>
#include <linux/in.h>
#include <rdma/ib_cma.h>

#include "cm/core/cm_node.h"
#include "nicsim/app.h"
#include "world/programs.h"

namespace nicsim::cm {
namespace {

constexpr std::uint32_t kTagAddress = 0x636d0001;

struct Side {
  int requests = 0, taken = 0, events = 0, last = -1;
  ib_cma_id ids[16]{};
  std::uint64_t request_ns = 0;
};

struct Verbs {
  ib_device* dev = nullptr;
  ib_pd* pd = nullptr;
  ib_cq* cq = nullptr;
  ib_qp* qp() const {
    ib_qp_init_attr ia{};
    ia.send_cq = ia.recv_cq = cq;
    ia.cap.max_send_wr = ia.cap.max_recv_wr = 1;
    ia.cap.max_send_sge = ia.cap.max_recv_sge = 1;
    ia.qp_type = IB_QPT_RC;
    return ib_create_qp(pd, &ia);
  }
};

bool wait_for(const int& v, int want) {
  for (int i = 0; i < 1000000 && v < want; ++i) nicsim_sleep_ns(200);
  return v >= want;
}

__be64 be(std::uint64_t v) {
  __be64 r = 0;
  mad::put(reinterpret_cast<std::uint8_t*>(&r), 8, v);
  return r;
}

int serve(Verbs& v, std::uint64_t sid, int connects) {
  Side s;
  ib_cma_id lid{};
  auto on_req = [](ib_cma_id* id, void*, void* ctx) {
    auto* sd = static_cast<Side*>(ctx);
    sd->ids[sd->requests++ % 16] = *id;
    sd->request_ns = nicsim_now_ns();
  };
  auto on_ac = [](ib_cma_event e, void* ctx) {
    auto* sd = static_cast<Side*>(ctx);
    sd->last = e;
    ++sd->events;
  };
  if (ib_cma_sid_listen(nullptr, be(sid), &s, on_req, &lid)) return nicsim_log("server: listen failed"), 1;
  nicsim_barrier();
  double passive = 0;
  for (int k = 0; k < connects; ++k) {
    if (!wait_for(s.requests, k + 1)) return nicsim_log("server: request %d never came", k), 1;
    ib_qp* qp = v.qp();
    const std::uint64_t t0 = s.request_ns;
    s.events = 0;
    if (!qp || ib_cma_accept(&s.ids[k % 16], qp, nullptr, 0, &s, on_ac) || !wait_for(s.events, 1) ||
        s.last != IB_CMA_EVENT_ESTABLISHED)
      return nicsim_log("server: accept %d failed", k), 1;
    passive = static_cast<double>(nicsim_now_ns() - t0);
    if (!wait_for(s.events, 2) || ib_destroy_qp(qp)) return nicsim_log("server: disconnect %d failed", k), 1;
  }
  nicsim_result("passive_us", passive / 1000, "us");
  nicsim_barrier();
  return ib_cma_sid_destroy(&lid) ? 1 : 0;
}

int connect_loop(Verbs& v, std::uint64_t sid, int connects, std::uint32_t dst_ip) {
  Side s;
  sockaddr_in dst{};
  dst.sin_family = AF_INET;
  mad::put(reinterpret_cast<std::uint8_t*>(&dst.sin_addr.s_addr), 4, dst_ip);
  ib_cma_conn cc{};
  cc.dst_ip = reinterpret_cast<sockaddr*>(&dst);
  cc.service_id = be(sid);
  cc.context = &s;
  cc.cma_event_handler = [](ib_cma_event e, void* ctx, void*) {
    auto* sd = static_cast<Side*>(ctx);
    sd->last = e;
    ++sd->events;
  };
  nicsim_barrier();
  const std::uint64_t start = nicsim_now_ns();
  double later = 0;
  for (int k = 0; k < connects; ++k) {
    ib_cma_id id{};
    s.events = 0;
    cc.qp = v.qp();
    const std::uint64_t t0 = nicsim_now_ns();
    if (!cc.qp || ib_cma_connect(&cc, &id) || !wait_for(s.events, 1) || s.last != IB_CMA_EVENT_ESTABLISHED)
      return nicsim_log("client: connect %d failed", k), 1;
    const double t = static_cast<double>(nicsim_now_ns() - t0) / 1000;
    if (k == 0) {
      nicsim_result("connect_first_us", t, "us");
      const ConnectFigures& f = node_cm()->last_connect();
      nicsim_result("path_query_us", static_cast<double>(f.resolve) / kUs, "us");
      nicsim_result("qp_transitions_us", static_cast<double>(f.qp_modify) / kUs, "us");
      nicsim_result("mad_handshake_us", static_cast<double>(f.handshake) / kUs, "us");
      nicsim_result("mad_cpu_us", static_cast<double>(f.mad_cpu) / kUs, "us");
    } else {
      later += t;
    }
    if (ib_cma_disconnect(cc.qp, &id) || !wait_for(s.events, 2) || ib_destroy_qp(cc.qp))
      return nicsim_log("client: disconnect %d failed", k), 1;
  }
  const double secs = static_cast<double>(nicsim_now_ns() - start) / 1e9;
  const double clients = nicsim_workload_size() / 2;
  if (connects > 1) nicsim_result("connect_us", later / (connects - 1), "us");
  nicsim_result("connects_per_s", clients * connects / secs, "connections/s");
  nicsim_barrier();
  return 0;
}

struct ConnectRateOptions {
  int connects = 100;
  std::uint64_t sid = 0x2000;
};

// Shared by the run and the argument check: 0, or -1 after saying why.
int parse_options(int argc, char** argv, ConnectRateOptions& o) {
  for (int i = 1; i < argc; ++i) {
    std::uint64_t v = 0;
    int got = nicsim_arg_u64(argv[i], "--connects=", 1, 1000000, &v);
    if (got > 0) {
      o.connects = static_cast<int>(v);
    } else if (got == 0 && !std::strncmp(argv[i], "--sid=", 6)) {
      char* end = nullptr;
      o.sid = std::strtoull(argv[i] + 6, &end, 0);
      if (argv[i][6] < '0' || argv[i][6] > '9' || *end || o.sid == 0)
        return nicsim_fail("cm_connect_rate: --sid is a service id other than 0, decimal or 0x hex"), -1;
    } else {
      if (got == 0) nicsim_log("cm_connect_rate: unknown argument %s", argv[i]);
      return -1;
    }
  }
  return 0;
}

int check_options(int argc, char** argv) {
  ConnectRateOptions o;
  return parse_options(argc, argv, o);
}

int connect_rate_main(int argc, char** argv) {
  ConnectRateOptions o;
  if (parse_options(argc, argv, o) != 0) return 2;
  const int connects = o.connects;
  const std::uint64_t sid = o.sid;
  const std::uint32_t size = nicsim_workload_size(), rank = nicsim_workload_rank();
  if (size < 2 || size % 2) return nicsim_log("cm_connect_rate: needs an even number of nodes"), 2;
  const std::uint32_t peer = nicsim_workload_node(rank < size / 2 ? rank + size / 2 : rank - size / 2);
  sockaddr_in any{};
  any.sin_family = AF_INET;
  Verbs v;
  if (ib_cma_get_device(reinterpret_cast<sockaddr*>(&any), &v.dev)) return nicsim_log("no device"), 1;
  v.pd = ib_alloc_pd(v.dev);
  v.cq = ib_create_cq(v.dev, nullptr, nullptr, nullptr, 4);
  // The server tells its client its address over the bootstrap network.
  std::uint32_t ip = node_cm()->ipv4();
  if (rank < size / 2) {
    nicsim_mgmt_send(peer, kTagAddress, &ip, sizeof ip);
  } else if (nicsim_mgmt_recv(peer, kTagAddress, &ip, sizeof ip, nullptr, 0) != sizeof ip) {
    return nicsim_log("client: no address from the server"), 1;
  }
  const int rc = rank < size / 2 ? serve(v, sid, connects) : connect_loop(v, sid, connects, ip);
  ib_destroy_cq(v.cq);
  ib_dealloc_pd(v.pd);
  return rc;
}

const BuiltinProgram reg("cm_connect_rate", connect_rate_main,
                         "connections per simulated second between pairs of nodes, and the time of one connect "
                         "(CMA over the IB CM). --connects=100 (per client), --sid=0x2000",
                         check_options);

}  // namespace
}  // namespace nicsim::cm
