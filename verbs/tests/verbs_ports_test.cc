// HCA ports through the public verbs: loopback (a connection between two QPs
// of one HCA, addressed to the port's own LID, turns around inside the HCA)
// and two-port HCAs (per-port LIDs from the subnet manager, QPs on either
// port, connections between the two ports of one HCA over the fabric, port
// events per port). Every data test checks payload bytes end to end.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "hca_model/hca.h"
#include "verbs/tests/verbs_test_util.h"

using namespace nicsim;
using namespace nicsim::verbs::testing;

namespace {

constexpr uint32_t kBufBytes = 65536;
constexpr ib_access_t kAllAccess = IB_AC_LOCAL_WRITE | IB_AC_RDMA_READ | IB_AC_RDMA_WRITE | IB_AC_ATOMIC;

uint8_t pattern(uint32_t seed, uint32_t i) { return static_cast<uint8_t>(i * 131 + seed * 17 + (i >> 9)); }

// The CA's port attributes, through query_ca.
std::vector<ib_port_attr_t> ports_of(Env& e) {
  size_t size = 0;
  EXPECT_EQ(e.ci->query_ca(e.ca, nullptr, &size, nullptr), IB_INSUFFICIENT_MEMORY);
  std::vector<uint64_t> buf(size / 8 + 1);
  auto* attr = reinterpret_cast<ib_ca_attr_t*>(buf.data());
  if (e.ci->query_ca(e.ca, attr, &size, nullptr) != IB_SUCCESS) return {};
  return {attr->p_port_attr, attr->p_port_attr + attr->num_ports};
}

// Waits until every port is Active (the subnet manager's sweep); the ports.
std::vector<ib_port_attr_t> wait_active(Env& e, uint64_t timeout_ns = 20'000'000) {
  const uint64_t end = nicsim_now_ns() + timeout_ns;
  for (;;) {
    std::vector<ib_port_attr_t> ports = ports_of(e);
    bool all = !ports.empty();
    for (const ib_port_attr_t& p : ports) all = all && p.link_state == IB_LINK_ACTIVE && p.lid != 0;
    if (all || nicsim_now_ns() >= end) return ports;
    nicsim_sleep_ns(10'000);
  }
}

// A registered buffer and an RC QP on `port` with its own CQ.
struct Side {
  Env* e = nullptr;
  ib_cq_handle_t cq = nullptr;
  ib_qp_handle_t qp = nullptr;
  ib_mr_handle_t mr = nullptr;
  uint8_t* buf = nullptr;
  uint32_t lkey = 0, rkey = 0, qpn = 0;
  uint8_t port = 1;
};

void make_side(Env& e, Side& s, uint8_t port) {
  s.e = &e;
  s.port = port;
  uint32_t depth = 64;
  EXPECT_EQ(e.ci->create_cq(e.pd, &s, &depth, &s.cq, nullptr), IB_SUCCESS);
  s.buf = static_cast<uint8_t*>(nicsim_alloc(kBufBytes, 4096));
  std::memset(s.buf, 0, kBufBytes);
  ib_mr_create_t mc{s.buf, kBufBytes, kAllAccess};
  EXPECT_EQ(e.ci->register_mr(e.pd, &mc, &s.lkey, &s.rkey, &s.mr, nullptr), IB_SUCCESS);
  ib_qp_create_t c{};
  c.qp_type = IB_QPT_RELIABLE_CONN;
  c.sq_depth = c.rq_depth = 32;
  c.sq_sge = c.rq_sge = 1;
  c.h_sq_cq = c.h_rq_cq = s.cq;
  c.sq_signaled = TRUE;
  ib_qp_attr_t a;
  EXPECT_EQ(e.ci->create_qp(e.pd, nullptr, &c, &a, &s.qp, nullptr), IB_SUCCESS);
  s.qpn = qp_num(e, s.qp);
}

void connect_side(Side& s, uint32_t dest_qpn, uint16_t dlid) {
  ib_qp_mod_t init = init_mod(IB_QPT_RELIABLE_CONN);
  init.state.init.primary_port = s.port;
  init.state.init.access_ctrl = kAllAccess;
  EXPECT_EQ(modify(*s.e, s.qp, init), IB_SUCCESS);
  ib_qp_mod_t rtr = rtr_mod(dest_qpn, dlid);
  rtr.state.rtr.primary_av.port_num = s.port;
  EXPECT_EQ(modify(*s.e, s.qp, rtr), IB_SUCCESS);
  ib_qp_mod_t rts = rts_mod();
  rts.state.rts.init_depth = 1;
  EXPECT_EQ(modify(*s.e, s.qp, rts), IB_SUCCESS);
}

void destroy_side(Side& s) {
  EXPECT_EQ(s.e->ci->destroy_qp(s.qp, nullptr), IB_SUCCESS);
  EXPECT_EQ(s.e->ci->deregister_mr(s.mr, nullptr), IB_SUCCESS);
  EXPECT_EQ(s.e->ci->destroy_cq(s.cq, nullptr), IB_SUCCESS);
}

std::vector<ib_wc_t> wait_side(Side& s, size_t n, uint64_t timeout_ns = 5'000'000) {
  Env view = *s.e;
  view.cq = s.cq;
  return wait_wcs(view, n, timeout_ns);
}

void post_recv(Side& s, uint64_t wr_id, uint32_t offset, uint32_t len) {
  ib_local_ds_t ds{s.buf + offset, len, s.lkey};
  ib_recv_wr_t rw{nullptr, wr_id, 1, &ds};
  ib_recv_wr_t* fail;
  EXPECT_EQ(s.e->ci->post_recv(s.qp, &rw, &fail), IB_SUCCESS);
}

// Posts one work request from `s.buf + offset` (len bytes) and returns its
// completion status (IB_WCS_UNKNOWN if none came).
ib_wc_status_t post_and_wait(Side& s, ib_wr_type_t type, uint32_t offset, uint32_t len, uint64_t remote_va = 0,
                             uint32_t rkey = 0, uint64_t add = 0) {
  ib_local_ds_t ds{s.buf + offset, len, s.lkey};
  ib_send_wr_t sw{};
  sw.wr_id = 0x1000 + offset;
  sw.wr_type = type;
  sw.send_opt = IB_SEND_OPT_SIGNALED;
  sw.num_ds = 1;
  sw.ds_array = &ds;
  sw.remote_ops.vaddr = remote_va;
  sw.remote_ops.rkey = rkey;
  sw.remote_ops.atomic1 = cl_hton64(add);
  ib_send_wr_t* fail;
  EXPECT_EQ(s.e->ci->post_send(s.qp, &sw, &fail), IB_SUCCESS);
  const auto wcs = wait_side(s, 1);
  if (wcs.empty()) return IB_WCS_UNKNOWN;
  EXPECT_EQ(wcs[0].wr_id, sw.wr_id);
  return wcs[0].status;
}

uint32_t wrong_bytes(const uint8_t* p, uint32_t len, uint32_t seed) {
  uint32_t wrong = 0;
  for (uint32_t i = 0; i < len; ++i) wrong += p[i] != pattern(seed, i);
  return wrong;
}

// Messages of 1, 2048 and 10000 bytes in 12000-byte slots: the receiver
// posts its receives first, the sender sends them, the receiver checks
// every byte that arrived.
constexpr uint32_t kSizes[] = {1, 2048, 10000};
constexpr uint32_t kSlot = 12000;

void post_three_recvs(Side& to) {
  for (uint32_t i = 0; i < 3; ++i) post_recv(to, i, kSlot * i, kSlot);
}

void send_three_msgs(Side& from, uint32_t seed) {
  for (uint32_t i = 0; i < 3; ++i) {
    for (uint32_t b = 0; b < kSizes[i]; ++b) from.buf[kSlot * i + b] = pattern(seed + i, b);
    EXPECT_EQ(post_and_wait(from, WR_SEND, kSlot * i, kSizes[i]), IB_WCS_SUCCESS) << "message " << i;
  }
}

void check_three_recvs(Side& to, uint32_t seed) {
  const auto wcs = wait_side(to, 3);
  ASSERT_EQ(wcs.size(), 3u);
  for (uint32_t i = 0; i < 3; ++i) {
    EXPECT_EQ(wcs[i].status, IB_WCS_SUCCESS);
    EXPECT_EQ(wcs[i].length, kSizes[i]);
    EXPECT_EQ(wrong_bytes(to.buf + kSlot * i, kSizes[i], seed + i), 0u) << "message " << i << " payload";
  }
}

void send_three(Side& from, Side& to, uint32_t seed) {
  post_three_recvs(to);
  send_three_msgs(from, seed);
  check_three_recvs(to, seed);
}

// ---- loopback ----------------------------------------------------------------

// A client and a server thread on one node, each with its own RC QP on port
// 1, connected to each other at the port's own LID: sends, an RDMA write,
// an RDMA read, a fetch-and-add, and a write with a wrong rkey.
struct LoopbackShared {
  Env* e;
  Side server;
  volatile int stage = 0;  // 1: server ready; 2: client done
};

void loopback_server(void* arg) {
  auto* sh = static_cast<LoopbackShared*>(arg);
  Side& s = sh->server;
  for (uint32_t i = 0; i < 5000; ++i) s.buf[40000 + i] = pattern(7, i);  // for the client's RDMA read
  const uint64_t word = 1000;
  std::memcpy(s.buf + 60000, &word, 8);
  sh->stage = 1;
  while (sh->stage != 2) nicsim_sleep_ns(1000);
  EXPECT_EQ(wrong_bytes(s.buf + 20000, 6000, 5), 0u) << "RDMA-written bytes";
  uint64_t after;
  std::memcpy(&after, s.buf + 60000, 8);
  EXPECT_EQ(after, 1042u) << "fetch-and-add result in the server's memory";
}

int loopback_main(int, char**) {
  Env e;
  if (!open_env(e)) return 1;
  const uint16_t lid = ensure_lid(e, 1);
  LoopbackShared sh{&e, {}};
  Side client;
  make_side(e, client, 1);
  make_side(e, sh.server, 1);
  connect_side(client, sh.server.qpn, lid);
  connect_side(sh.server, client.qpn, lid);
  nicsim_thread_t server = nicsim_thread_spawn(loopback_server, &sh, "server");
  while (sh.stage != 1) nicsim_sleep_ns(1000);
  send_three(client, sh.server, 1);
  const auto server_va = reinterpret_cast<uint64_t>(sh.server.buf);
  for (uint32_t i = 0; i < 6000; ++i) client.buf[i] = pattern(5, i);
  EXPECT_EQ(post_and_wait(client, WR_RDMA_WRITE, 0, 6000, server_va + 20000, sh.server.rkey), IB_WCS_SUCCESS);
  EXPECT_EQ(post_and_wait(client, WR_RDMA_READ, 8192, 5000, server_va + 40000, sh.server.rkey), IB_WCS_SUCCESS);
  EXPECT_EQ(wrong_bytes(client.buf + 8192, 5000, 7), 0u) << "RDMA-read bytes";
  EXPECT_EQ(post_and_wait(client, WR_FETCH_ADD, 16384, 8, server_va + 60000, sh.server.rkey, 42), IB_WCS_SUCCESS);
  uint64_t original;
  std::memcpy(&original, client.buf + 16384, 8);
  EXPECT_EQ(original, 1000u) << "fetch-and-add original value";
  sh.stage = 2;
  EXPECT_EQ(nicsim_thread_join(server), 0);
  // The responder checks keys on loopback packets too.
  EXPECT_EQ(post_and_wait(client, WR_RDMA_WRITE, 0, 64, server_va, sh.server.rkey ^ 0x100), IB_WCS_REM_ACCESS_ERR);
  destroy_side(client);
  destroy_side(sh.server);
  close_env(e);
  return ::testing::Test::HasFailure() ? 1 : 0;
}
const BuiltinProgram reg_loopback("verbs_test_loopback", loopback_main, "test");

std::string slurp(const std::string& path) {
  std::ifstream f(path);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

}  // namespace

TEST(VerbsPorts, LoopbackConnectionBetweenTwoQpsOfOneHcaNeverTouchesTheWire) {
  Scenario sc = scenario(R"(
    name: "loopback"
    topology { star { hosts: 1 } nic: "hca" }
    subnet_manager { off: true }
    workload { program: "verbs_test_loopback" nodes: "h0" }
    outputs { trace { device: "h0" component: "nic" } })");
  const std::string trace = ::testing::TempDir() + "loopback_trace.jsonl";
  nicsim::testing::RunOptions o;
  o.trace_path = trace;
  o.inspect = [](World& world) {
    auto* hca = world.node(0).nic_as<hca::Hca>();
    ASSERT_NE(hca, nullptr);
    // 3 sends (1 + 1 + 5 packets), a 3-packet write, a read request and its 3
    // responses, an atomic and its ACK, the bad write and its NAK, plus ACKs.
    EXPECT_GE(hca->stats().loopback_packets, 20u);
    EXPECT_EQ(hca->stats().loopback_packets, hca->stats().tx_packets) << "every packet turned around inside the HCA";
    EXPECT_EQ(hca->stats().rx_packets, hca->stats().tx_packets);
    EXPECT_EQ(world.node(0).nic().port(1).stats().tx_packets, 0u) << "nothing went on the wire";
    EXPECT_EQ(world.node(0).nic().port(1).stats().rx_packets, 0u);
  };
  nicsim::testing::run_scenario(sc, o);
  const std::string text = slurp(trace);
  EXPECT_NE(text.find("\"loopback\""), std::string::npos) << "loopback packets appear in the trace";
  std::remove(trace.c_str());
}

// ---- two ports ---------------------------------------------------------------

namespace {

struct PortAddresses {
  uint16_t lid[2];
  uint32_t qpn_on_port[2];  // the rank's QP on port 1, on port 2
};

// Rank 0's port-1 QP and rank 1's port-2 QP are connected, and rank 0's
// port-2 QP and rank 1's port-1 QP; each rank sends over both in turn.
void cross_ports(Env& e, uint32_t rank, uint32_t peer, const std::vector<ib_port_attr_t>& ports) {
  Side on_port[2];
  make_side(e, on_port[0], 1);
  make_side(e, on_port[1], 2);
  PortAddresses mine{{cl_ntoh16(ports[0].lid), cl_ntoh16(ports[1].lid)}, {on_port[0].qpn, on_port[1].qpn}}, theirs{};
  EXPECT_EQ(nicsim_mgmt_send(peer, 2, &mine, sizeof mine), 0);
  EXPECT_EQ(nicsim_mgmt_recv(peer, 2, &theirs, sizeof theirs, nullptr, 0), static_cast<long>(sizeof theirs));
  for (int p = 0; p < 2; ++p) {
    EXPECT_NE(theirs.lid[p], mine.lid[p]);
    connect_side(on_port[p], theirs.qpn_on_port[1 - p], theirs.lid[1 - p]);
  }
  for (uint32_t sender = 0; sender < 2; ++sender) {
    if (rank != sender)
      for (Side& s : on_port) post_three_recvs(s);
    nicsim_barrier();  // the receives are posted
    for (int p = 0; p < 2; ++p) {
      const uint32_t seed = 10 * sender + static_cast<uint32_t>(p == 0 ? 1 : 2);
      if (rank == sender) send_three_msgs(on_port[p], seed);
      // The receiver's QP on the other port checks what the sender's port-p QP sent.
      else
        check_three_recvs(on_port[1 - p], seed);
    }
    nicsim_barrier();
  }
  for (Side& s : on_port) destroy_side(s);
}

// Rank 0 only: a QP on its port 1 and one on its port 2, connected to each
// other. Packets go out one port and come in the other, over the switch.
void port_to_port(Env& e, const std::vector<ib_port_attr_t>& ports) {
  Side a, b;
  make_side(e, a, 1);
  make_side(e, b, 2);
  connect_side(a, b.qpn, cl_ntoh16(ports[1].lid));
  connect_side(b, a.qpn, cl_ntoh16(ports[0].lid));
  send_three(a, b, 30);
  send_three(b, a, 40);
  destroy_side(a);
  destroy_side(b);
}

// Port events as the consumers saw them: node, event, port.
struct PortEvent {
  uint32_t node;
  ib_async_event_t type;
  uint8_t port;
};
std::vector<PortEvent> g_port_events;

// The CA's context is the opening node's id (callbacks run in interrupt
// context, outside the program's thread).
void on_port_event(const ib_event_rec_t* rec) {
  if (rec->type == IB_AE_PORT_ACTIVE || rec->type == IB_AE_PORT_DOWN)
    g_port_events.push_back({*static_cast<const uint32_t*>(rec->context), rec->type, rec->trap.info.port_num});
}

int two_ports_main(int, char**) {
  const uint32_t rank = nicsim_workload_rank();
  Env e;
  const uint32_t node = nicsim_node_id();
  e.ci = nicsim_ci_interface();
  if (!e.ci || e.ci->open_ca(e.ci->guid, on_completion, on_port_event, &node, &e.ca) != IB_SUCCESS) return 1;
  EXPECT_EQ(e.ci->allocate_pd(e.ca, &e.pd, nullptr), IB_SUCCESS);
  uint32_t depth = 64;
  EXPECT_EQ(e.ci->create_cq(e.pd, &e, &depth, &e.cq, nullptr), IB_SUCCESS);
  const std::vector<ib_port_attr_t> ports = wait_active(e);
  EXPECT_EQ(ports.size(), 2u) << "query_ca: both ports";
  if (ports.size() != 2) return 1;
  for (uint8_t p = 0; p < 2; ++p) {
    EXPECT_EQ(ports[p].port_num, p + 1);
    EXPECT_EQ(ports[p].link_state, IB_LINK_ACTIVE) << "port " << p + 1;
    EXPECT_NE(ports[p].lid, 0) << "port " << p + 1 << " has a LID from the subnet manager";
  }
  EXPECT_NE(ports[0].lid, ports[1].lid) << "each port has its own LID";
  EXPECT_NE(ports[0].port_guid, ports[1].port_guid);
  cross_ports(e, rank, nicsim_workload_node(1 - rank), ports);
  if (rank == 0) port_to_port(e, ports);
  nicsim_barrier();
  // The scenario takes rank 1's port-2 link down at 20 ms.
  nicsim_sleep_ns(25'000'000 - nicsim_now_ns());
  const std::vector<ib_port_attr_t> after = ports_of(e);
  EXPECT_EQ(after.size(), 2u);
  if (after.size() == 2) {
    EXPECT_EQ(after[0].link_state, IB_LINK_ACTIVE);
    EXPECT_EQ(after[1].link_state, rank == 1 ? IB_LINK_DOWN : IB_LINK_ACTIVE);
  }
  close_env(e);
  return ::testing::Test::HasFailure() ? 1 : 0;
}
const BuiltinProgram reg_two_ports("verbs_test_two_ports", two_ports_main, "test");

}  // namespace

TEST(VerbsPorts, TwoPortHcasHaveAPortEachWithItsOwnLidQpsAndEvents) {
  Scenario sc = scenario(R"(
    name: "two_ports"
    node { name: "h0" nic: "hca" ports: 2 }
    node { name: "h1" nic: "hca" ports: 2 }
    switch { name: "sw0" }
    link { a: "h0:1" b: "sw0:1" }
    link { a: "h0:2" b: "sw0:2" }
    link { a: "h1:1" b: "sw0:3" }
    link { name: "h1p2" a: "h1:2" b: "sw0:4" }
    fault { at: "20ms" link: "h1p2" link_down: true }
    workload { program: "verbs_test_two_ports" nodes: "h0" nodes: "h1" })");
  nicsim::testing::RunOptions o;
  o.inspect = [](World& world) {
    // Each port carried its QPs' messages (3 of 12,049 payload bytes per QP).
    for (uint32_t n = 0; n < 2; ++n)
      for (uint32_t port = 1; port <= 2; ++port)
        EXPECT_GE(world.node(n).nic().port(port).stats().tx_bytes, 12049u) << "h" << n << " port " << port;
    EXPECT_EQ(world.node(0).nic_as<hca::Hca>()->stats().loopback_packets, 0u) << "port to port is over the fabric";
  };
  nicsim::testing::run_scenario(sc, o);
  // The link down reached h1's consumer as a port-2 event, nobody else's.
  int h1_port2_down = 0;
  int active[2][3] = {};
  for (const PortEvent& ev : g_port_events) {
    if (ev.type == IB_AE_PORT_ACTIVE && ev.node < 2 && ev.port >= 1 && ev.port <= 2) ++active[ev.node][ev.port];
    if (ev.type != IB_AE_PORT_DOWN) continue;
    EXPECT_EQ(ev.node, 1u);
    EXPECT_EQ(ev.port, 2);
    ++h1_port2_down;
  }
  EXPECT_EQ(h1_port2_down, 1);
  // The subnet manager brought each port to Active once, with its own event.
  for (int n = 0; n < 2; ++n)
    for (int port = 1; port <= 2; ++port) EXPECT_EQ(active[n][port], 1) << "h" << n << " port " << port;
}

// ---- datagrams -----------------------------------------------------------------

namespace {

constexpr uint32_t kQkey = 0x11111111;
constexpr uint16_t kMlid = 0xC001;
constexpr uint32_t kDgram = 1000;
constexpr uint32_t kGrh = 40;  // a UD receive buffer starts with room for the GRH

struct UdQp {
  ib_cq_handle_t cq = nullptr;
  ib_qp_handle_t qp = nullptr;
  uint32_t qpn = 0;
};

UdQp make_ud(Env& e) {
  UdQp u;
  uint32_t depth = 16;
  EXPECT_EQ(e.ci->create_cq(e.pd, &e, &depth, &u.cq, nullptr), IB_SUCCESS);
  Env view = e;
  view.cq = u.cq;
  u.qp = make_qp(view, IB_QPT_UNRELIABLE_DGRM);
  to_rts(view, u.qp, IB_QPT_UNRELIABLE_DGRM);
  u.qpn = qp_num(e, u.qp);
  return u;
}

void send_dgram(Env& e, UdQp& from, uint8_t* msg, uint32_t lkey, uint16_t dlid, uint32_t dqpn) {
  ib_av_attr_t a{};
  a.port_num = 1;
  a.dlid = cl_hton16(dlid);
  ib_av_handle_t av;
  EXPECT_EQ(e.ci->create_av(e.pd, &a, &av, nullptr), IB_SUCCESS);
  ib_local_ds_t ds{msg, kDgram, lkey};
  ib_send_wr_t wr{};
  wr.wr_id = dlid;
  wr.wr_type = WR_SEND;
  wr.send_opt = IB_SEND_OPT_SIGNALED;
  wr.num_ds = 1;
  wr.ds_array = &ds;
  wr.dgrm.ud.remote_qp = cl_hton32(dqpn);
  wr.dgrm.ud.remote_qkey = cl_hton32(kQkey);
  wr.dgrm.ud.h_av = av;
  ib_send_wr_t* bad;
  EXPECT_EQ(e.ci->post_send(from.qp, &wr, &bad), IB_SUCCESS);
  Env view = e;
  view.cq = from.cq;
  const auto wcs = wait_wcs(view, 1);
  EXPECT_EQ(wcs.size(), 1u);
  if (!wcs.empty()) {
    EXPECT_EQ(wcs[0].status, IB_WCS_SUCCESS);
  }
  EXPECT_EQ(e.ci->destroy_av(av, nullptr), IB_SUCCESS);
}

// Checks `n` datagrams on `to`, the i-th carrying pattern(seeds[i]).
void expect_dgrams(Env& e, UdQp& to, const uint8_t* slots, const std::vector<uint32_t>& seeds) {
  Env view = e;
  view.cq = to.cq;
  const auto wcs = wait_wcs(view, seeds.size(), 1'000'000);
  ASSERT_EQ(wcs.size(), seeds.size());
  for (size_t i = 0; i < wcs.size(); ++i) {
    EXPECT_EQ(wcs[i].status, IB_WCS_SUCCESS);
    EXPECT_EQ(wcs[i].length, kGrh + kDgram);
    EXPECT_EQ(wrong_bytes(slots + wcs[i].wr_id * 2048 + kGrh, kDgram, seeds[i]), 0u) << "datagram " << i;
  }
}

void post_dgram_recvs(Env& e, UdQp& u, uint8_t* slots, uint32_t lkey, uint32_t n) {
  for (uint32_t i = 0; i < n; ++i) {
    ib_local_ds_t ds{slots + i * 2048, 2048, lkey};
    ib_recv_wr_t rw{nullptr, i, 1, &ds};
    ib_recv_wr_t* fail;
    EXPECT_EQ(e.ci->post_recv(u.qp, &rw, &fail), IB_SUCCESS);
  }
}

// h0's QP A sends one datagram to h0's QP B at h0's own LID, then one to the
// group {h0's B, h1's C}: B gets both by loopback, C the multicast over the
// wire, and A (no member) nothing.
int ud_loopback_main(int, char**) {
  const uint32_t rank = nicsim_workload_rank();
  Env e;
  if (!open_env(e)) return 1;
  const std::vector<ib_port_attr_t> ports = wait_active(e);
  if (ports.empty()) return 1;
  auto* mem = static_cast<uint8_t*>(nicsim_alloc(16384, 4096));
  ib_mr_create_t mc{mem, 16384, IB_AC_LOCAL_WRITE};
  uint32_t lkey, rkey;
  ib_mr_handle_t mr;
  EXPECT_EQ(e.ci->register_mr(e.pd, &mc, &lkey, &rkey, &mr, nullptr), IB_SUCCESS);
  UdQp member = make_ud(e);
  ib_gid_t gid{};
  gid.raw[0] = 0xff;
  gid.raw[15] = 1;
  ib_mcast_handle_t mh;
  EXPECT_EQ(e.ci->attach_mcast(member.qp, &gid, cl_hton16(kMlid), &mh, nullptr), IB_SUCCESS);
  post_dgram_recvs(e, member, mem, lkey, rank == 0 ? 2 : 1);
  nicsim_barrier();  // the receives are posted
  if (rank == 0) {
    UdQp sender = make_ud(e);
    post_dgram_recvs(e, sender, mem + 8192, lkey, 1);
    uint8_t* msg = mem + 4096;
    for (uint32_t i = 0; i < kDgram; ++i) msg[i] = pattern(50, i);
    send_dgram(e, sender, msg, lkey, cl_ntoh16(ports[0].lid), member.qpn);
    for (uint32_t i = 0; i < kDgram; ++i) msg[i] = pattern(51, i);
    send_dgram(e, sender, msg, lkey, kMlid, 0xffffff);
    expect_dgrams(e, member, mem, {50, 51});
    Env view = e;
    view.cq = sender.cq;
    EXPECT_TRUE(wait_wcs(view, 1, 200'000).empty()) << "the sender is no member";
  } else {
    expect_dgrams(e, member, mem, {51});
  }
  nicsim_barrier();
  return ::testing::Test::HasFailure() ? 1 : 0;
}
const BuiltinProgram reg_ud_loopback("verbs_test_ud_loopback", ud_loopback_main, "test");

}  // namespace

TEST(VerbsPorts, DatagramsAndMulticastReachMembersOnTheSendingHca) {
  Scenario sc = scenario(R"(
    name: "ud_loopback"
    topology { star { hosts: 2 } nic: "hca" }
    multicast { mlid: 49153 members: "h0" members: "h1" }
    workload { program: "verbs_test_ud_loopback" nodes: "h0" nodes: "h1" })");
  nicsim::testing::RunOptions o;
  o.inspect = [](World& world) {
    EXPECT_EQ(world.node(0).nic_as<hca::Hca>()->stats().loopback_packets, 2u) << "the unicast and the multicast copy";
    EXPECT_EQ(world.node(1).nic_as<hca::Hca>()->stats().loopback_packets, 0u);
  };
  nicsim::testing::run_scenario(sc, o);
}
