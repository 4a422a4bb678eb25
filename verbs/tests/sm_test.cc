// The subnet manager over a real fabric: sweeps of a star and a leaf/spine,
// LIDs and LFTs checked by UD traffic between every pair of nodes (payload
// bytes checked), port events seen by consumers, recovery after a link goes
// down and up, retries of SMPs lost on a lossy link, multicast trees that
// reach members only, the directed-route fields of real SMPs, and scenario
// errors for the subnet_manager setting.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "core/sim.h"
#include "ib_fabric/ib_mgmt.h"
#include "ib_fabric/switch.h"
#include "hca_model/hca.h"
#include "iba/nicsim_ca.h"
#include "nicsim/app.h"
#include "sim/tests/test_shell.h"
#include "verbs/sm/sm.h"
#include "verbs/sm/sm_scenario.h"
#include "world/programs.h"
#include "world/world.h"

namespace nicsim {
namespace {

constexpr std::uint32_t kQkey = 0x11223344;
constexpr std::uint32_t kMsg = 200;
constexpr std::uint32_t kSlot = 40 + kMsg;  // UD receive buffers start with room for a GRH
constexpr std::uint32_t kMaxPeers = 16;

// One consumer's UD endpoint and what it has seen.
struct Peer {
  const ci_interface_t* ci = nullptr;
  ib_ca_handle_t ca = nullptr;
  ib_pd_handle_t pd = nullptr;
  ib_cq_handle_t cq = nullptr;
  ib_qp_handle_t qp = nullptr;
  std::uint32_t lkey = 0, qpn = 0;
  std::uint16_t lid = 0;
  std::uint8_t* buf = nullptr;  // kMaxPeers receive slots, then kMaxPeers send slots
  std::vector<ib_async_event_t> events;
  volatile bool active = false;
};

void on_completion(void*) {}
void on_event(const ib_event_rec_t* rec) {
  auto* p = static_cast<Peer*>(rec->context);
  if (!p) return;
  p->events.push_back(rec->type);
  if (rec->type == IB_AE_PORT_ACTIVE) p->active = true;
  if (rec->type == IB_AE_PORT_DOWN) p->active = false;
}

std::uint8_t pattern(std::uint32_t from, std::uint32_t to, std::uint32_t round, std::uint32_t i) {
  return static_cast<std::uint8_t>(from * 31 + to * 7 + round * 13 + i);
}

std::uint16_t query_lid(Peer& p, std::uint8_t* state) {
  size_t size = 0;
  p.ci->query_ca(p.ca, nullptr, &size, nullptr);
  std::vector<std::uint8_t> mem(size);
  auto* attr = reinterpret_cast<ib_ca_attr_t*>(mem.data());
  EXPECT_EQ(p.ci->query_ca(p.ca, attr, &size, nullptr), IB_SUCCESS);
  *state = attr->p_port_attr[0].link_state;
  return cl_ntoh16(attr->p_port_attr[0].lid);
}

// Opens the CA, waits until the SM made port 1 Active, builds a UD QP.
bool setup(Peer& p) {
  p.ci = nicsim_ci_interface();
  if (!p.ci || p.ci->open_ca(p.ci->guid, on_completion, on_event, &p, &p.ca) != IB_SUCCESS) return false;
  std::uint8_t state = 0;
  p.lid = query_lid(p, &state);
  for (int waited = 0; state != IB_LINK_ACTIVE && !p.active && waited < 20000; ++waited) nicsim_sleep_ns(1000);
  p.lid = query_lid(p, &state);
  EXPECT_EQ(state, IB_LINK_ACTIVE) << nicsim_node_name();
  EXPECT_NE(p.lid, 0) << nicsim_node_name();
  EXPECT_EQ(p.ci->allocate_pd(p.ca, &p.pd, nullptr), IB_SUCCESS);
  std::uint32_t cq_size = 4 * kMaxPeers;
  EXPECT_EQ(p.ci->create_cq(p.pd, &p, &cq_size, &p.cq, nullptr), IB_SUCCESS);
  ib_qp_create_t qc{};
  qc.qp_type = IB_QPT_UNRELIABLE_DGRM;
  qc.sq_depth = kMaxPeers;
  qc.rq_depth = kMaxPeers;
  qc.sq_sge = qc.rq_sge = 1;
  qc.h_sq_cq = qc.h_rq_cq = p.cq;
  qc.sq_signaled = TRUE;
  ib_qp_attr_t qa{};
  EXPECT_EQ(p.ci->create_qp(p.pd, &p, &qc, &qa, &p.qp, nullptr), IB_SUCCESS);
  p.qpn = cl_ntoh32(qa.num);
  ib_qp_mod_t m{};
  m.req_state = IB_QPS_INIT;
  m.state.init.primary_port = 1;
  m.state.init.qkey = cl_hton32(kQkey);
  EXPECT_EQ(p.ci->modify_qp(p.qp, &m, &qa, nullptr), IB_SUCCESS);
  std::memset(&m, 0, sizeof m);
  m.req_state = IB_QPS_RTR;
  EXPECT_EQ(p.ci->modify_qp(p.qp, &m, &qa, nullptr), IB_SUCCESS);
  std::memset(&m, 0, sizeof m);
  m.req_state = IB_QPS_RTS;
  EXPECT_EQ(p.ci->modify_qp(p.qp, &m, &qa, nullptr), IB_SUCCESS);
  const std::size_t bytes = 2 * kMaxPeers * kSlot;
  p.buf = static_cast<std::uint8_t*>(nicsim_alloc(bytes, 64));
  ib_mr_create_t mc{p.buf, bytes, IB_AC_LOCAL_WRITE};
  std::uint32_t rkey;
  ib_mr_handle_t mr;
  EXPECT_EQ(p.ci->register_mr(p.pd, &mc, &p.lkey, &rkey, &mr, nullptr), IB_SUCCESS);
  return !::testing::Test::HasFailure();
}

void post_recvs(Peer& p, std::uint32_t n) {
  for (std::uint32_t i = 0; i < n; ++i) {
    ib_local_ds_t ds{p.buf + i * kSlot, kSlot, p.lkey};
    ib_recv_wr_t wr{};
    wr.wr_id = i;
    wr.num_ds = 1;
    wr.ds_array = &ds;
    ib_recv_wr_t* bad;
    EXPECT_EQ(p.ci->post_recv(p.qp, &wr, &bad), IB_SUCCESS);
  }
}

void send_to(Peer& p, std::uint16_t dlid, std::uint32_t dqpn, std::uint32_t slot, std::uint32_t to,
             std::uint32_t round) {
  std::uint8_t* msg = p.buf + (kMaxPeers + slot) * kSlot;
  const std::uint32_t me = nicsim_node_id();
  std::memcpy(msg, &me, 4);
  for (std::uint32_t i = 4; i < kMsg; ++i) msg[i] = pattern(me, to, round, i);
  ib_av_attr_t a{};
  a.port_num = 1;
  a.dlid = cl_hton16(dlid);
  ib_av_handle_t av;
  EXPECT_EQ(p.ci->create_av(p.pd, &a, &av, nullptr), IB_SUCCESS);
  ib_local_ds_t ds{msg, kMsg, p.lkey};
  ib_send_wr_t wr{};
  wr.wr_id = 1000 + slot;
  wr.wr_type = WR_SEND;
  wr.send_opt = IB_SEND_OPT_SIGNALED;
  wr.num_ds = 1;
  wr.ds_array = &ds;
  wr.dgrm.ud.remote_qp = cl_hton32(dqpn);
  wr.dgrm.ud.remote_qkey = cl_hton32(kQkey);
  wr.dgrm.ud.h_av = av;
  ib_send_wr_t* bad;
  EXPECT_EQ(p.ci->post_send(p.qp, &wr, &bad), IB_SUCCESS);
}

// Waits for `recvs` datagrams (and `sends` send completions); checks that
// each carries the pattern its sender wrote for this node and round.
std::uint32_t collect(Peer& p, std::uint32_t recvs, std::uint32_t sends, std::uint32_t round, Tick limit) {
  std::uint32_t got = 0, sent = 0;
  const Tick until = now() + limit;
  while ((got < recvs || sent < sends) && now() < until) {
    ib_wc_t wc{};
    ib_wc_t* free_list = &wc;
    ib_wc_t* done = nullptr;
    if (p.ci->poll_cq(p.cq, &free_list, &done) != IB_SUCCESS || !done) {
      nicsim_sleep_ns(500);
      continue;
    }
    EXPECT_EQ(done->status, IB_WCS_SUCCESS);
    if (done->wc_type != IB_WC_RECV) {
      ++sent;
      continue;
    }
    const std::uint8_t* msg = p.buf + done->wr_id * kSlot + 40;
    std::uint32_t from;
    std::memcpy(&from, msg, 4);
    bool same = done->length == 40 + kMsg;
    for (std::uint32_t i = 4; same && i < kMsg; ++i) same = msg[i] == pattern(from, nicsim_node_id(), round, i);
    EXPECT_TRUE(same) << nicsim_node_name() << ": payload from node " << from << " round " << round;
    ++got;
  }
  EXPECT_EQ(sent, sends) << nicsim_node_name();
  return got;
}

struct Address {
  std::uint32_t node, lid, qpn;
};

// Every workload node sends one datagram to every other; all are checked.
void all_pairs(Peer& p, std::uint32_t round) {
  const std::uint32_t n = nicsim_workload_size();
  post_recvs(p, n - 1);
  Address mine{nicsim_node_id(), p.lid, p.qpn};
  for (std::uint32_t r = 0; r < n; ++r)
    if (nicsim_workload_node(r) != mine.node) nicsim_mgmt_send(nicsim_workload_node(r), 7 + round, &mine, sizeof mine);
  std::vector<Address> others;
  for (std::uint32_t r = 0; r + 1 < n; ++r) {
    Address a{};
    EXPECT_EQ(nicsim_mgmt_recv(NICSIM_ANY_NODE, 7 + round, &a, sizeof a, nullptr, 0), static_cast<long>(sizeof a));
    EXPECT_NE(a.lid, mine.lid) << "two ports share LID " << a.lid;
    others.push_back(a);
  }
  nicsim_barrier();  // every receive is posted
  for (std::uint32_t i = 0; i < others.size(); ++i)
    send_to(p, static_cast<std::uint16_t>(others[i].lid), others[i].qpn, i, others[i].node, round);
  EXPECT_EQ(collect(p, n - 1, n - 1, round, 2 * kMs), n - 1) << nicsim_node_name();
}

int all_pairs_main(int, char**) {
  Peer p;
  if (!setup(p)) return 1;
  EXPECT_EQ(p.events.size(), 1u) << nicsim_node_name();
  if (!p.events.empty()) {
    EXPECT_EQ(p.events[0], IB_AE_PORT_ACTIVE) << nicsim_node_name();
  }
  // Lossy-link scenarios start the data after the losses end.
  if (nicsim_now_ps() < 3 * kMs) nicsim_sleep_ps(3 * kMs - nicsim_now_ps());
  all_pairs(p, 0);
  return ::testing::Test::HasFailure() ? 1 : 0;
}
const BuiltinProgram reg_all_pairs("t_sm_all_pairs", all_pairs_main, "test");

// h1's link goes down at 1 ms and up at 1.5 ms: h1 sees PORT_DOWN and then
// PORT_ACTIVE again once the SM (woken by the switch's trap) re-activated
// it; data flows between the pair before and after.
int flap_main(int, char**) {
  Peer p;
  if (!setup(p)) return 1;
  all_pairs(p, 0);
  nicsim_sleep_ps(4 * kMs - nicsim_now_ps());
  const bool flapped = std::string(nicsim_node_name()) == "h1";
  const std::vector<ib_async_event_t> want =
      flapped ? std::vector<ib_async_event_t>{IB_AE_PORT_ACTIVE, IB_AE_PORT_DOWN, IB_AE_PORT_ACTIVE}
              : std::vector<ib_async_event_t>{IB_AE_PORT_ACTIVE};
  EXPECT_EQ(p.events, want) << nicsim_node_name();
  std::uint8_t state = 0;
  const std::uint16_t lid = query_lid(p, &state);
  EXPECT_EQ(state, IB_LINK_ACTIVE);
  EXPECT_EQ(lid, p.lid) << "the SM keeps a port's LID across sweeps";
  all_pairs(p, 1);
  return ::testing::Test::HasFailure() ? 1 : 0;
}
const BuiltinProgram reg_flap("t_sm_flap", flap_main, "test");

// Multicast 0xC001 = {h0, h3}: h0 sends one datagram to the group; h3 gets
// it, and no packet of it reaches h1 or h2 (their HCAs see nothing).
int mcast_main(int, char**) {
  Peer p;
  if (!setup(p)) return 1;
  const std::string me = nicsim_node_name();
  const bool member = me == "h0" || me == "h3";
  if (member) {
    ib_gid_t gid{};
    gid.raw[0] = 0xff;
    gid.raw[15] = 1;
    ib_mcast_handle_t mh;
    EXPECT_EQ(p.ci->attach_mcast(p.qp, &gid, cl_hton16(0xC001), &mh, nullptr), IB_SUCCESS);
  }
  post_recvs(p, 1);
  auto& hca = *World::current()->node(nicsim_node_id()).nic_as<hca::Hca>();
  const std::uint64_t rx_before = hca.stats().rx_packets;
  nicsim_barrier();
  if (me == "h0") send_to(p, 0xC001, 0xffffff, 0, 3, 0);
  const std::uint32_t got = collect(p, me == "h3" ? 1 : 0, me == "h0" ? 1 : 0, 0, 200 * kUs);
  nicsim_sleep_ns(200000);
  nicsim_barrier();
  if (me == "h3") {
    EXPECT_EQ(got, 1u);
  }
  if (!member) {
    EXPECT_EQ(hca.stats().rx_packets, rx_before) << me << " is no member but a packet reached it";
  }
  return ::testing::Test::HasFailure() ? 1 : 0;
}
const BuiltinProgram reg_mcast("t_sm_mcast", mcast_main, "test");

// Drives a SubnetManager by hand on a statically addressed fabric: a sweep,
// then one directed-route Get to a spine, two hops away, whose response's
// path fields are checked; the discovered graph is checked against the
// world's links.
int dr_main(int, char**) {
  // The other nodes only load their driver: a static port is up from INIT_IB.
  if (nicsim_workload_rank() != 0) return nicsim_ci_interface() ? 0 : 1;
  nicsim_sleep_ps(500 * kUs);
  sm::SubnetManager m(nicsim_sm_ci_interface(), current_program()->node().host(), sm::SmOptions{});
  EXPECT_TRUE(m.start());
  EXPECT_TRUE(m.sweep());
  World& w = *World::current();
  EXPECT_EQ(m.nodes().size(), w.num_nodes() + 4u);  // 4 hosts, 2 leaves, 2 spines
  for (const sm::SmNode& n : m.nodes())
    for (std::uint8_t port = 1; port < n.ports.size(); ++port) {
      const sm::SmPort& sp = n.ports[port];
      if (sp.peer < 0) continue;
      const fabric::Port* peer = nullptr;
      for (fabric::Device* d : w.fabric().devices())
        if (d && d->name() == n.name) peer = d->port(port).peer();
      EXPECT_NE(peer, nullptr) << n.name << " port " << int(port);
      if (!peer) continue;
      EXPECT_EQ(peer->owner().name(), m.nodes()[sp.peer].name);
      EXPECT_EQ(peer->number(), sp.peer_port);
    }
  const sm::SmNode* spine = nullptr;
  for (const sm::SmNode& n : m.nodes())
    if (n.name.rfind("spine", 0) == 0 && !spine) spine = &n;
  if (!spine) return 1;
  EXPECT_EQ(spine->path.size(), 2u);
  using namespace fabric::smp;
  std::uint8_t r[kMadBytes];
  EXPECT_TRUE(m.smp(spine->path, kMethodGet, kAttrNodeInfo, 0, nullptr, r));
  EXPECT_EQ(r[kMgmtClass], kClassDirected);
  EXPECT_EQ(r[kMethod], kMethodGetResp);
  EXPECT_TRUE(get(r + kStatus, 2) & kDirectionBit);
  EXPECT_EQ(r[kHopCount], 2);
  EXPECT_EQ(r[kHopPointer], 1);  // as the leaf sent it on to the SM's CA
  EXPECT_EQ(r[kInitialPath + 1], spine->path[0]);
  EXPECT_EQ(r[kInitialPath + 2], spine->path[1]);
  // Return path: the port each hop took the SMP in on.
  const fabric::Port& first = w.node(0).nic().port(spine->path[0]);
  EXPECT_EQ(r[kReturnPath + 1], first.peer()->number());
  const fabric::Port& second = first.peer()->owner().port(spine->path[1]);
  EXPECT_EQ(r[kReturnPath + 2], second.peer()->number());
  EXPECT_EQ(r[kData + 2], kNodeTypeSwitch);
  EXPECT_EQ(r[kData + 36], second.peer()->number());  // LocalPortNum
  // LID-routed now that the sweep programmed the LFTs: the spine's SMA
  // answers at its LID, and the response comes back by the LFTs.
  std::memset(r, 0, sizeof r);
  EXPECT_TRUE(m.smp_lid(spine->lid, kMethodGet, kAttrPortInfo, 0, nullptr, r));
  EXPECT_EQ(r[kMgmtClass], kClassLid);
  EXPECT_EQ(r[kMethod], kMethodGetResp);
  EXPECT_EQ(get(r + kData + 16, 2), spine->lid);        // port 0's LID
  EXPECT_EQ(get(r + kData + 18, 2), m.nodes()[0].lid);  // MasterSMLID
  EXPECT_EQ(r[kData + 32] & 0x0f, fabric::kPortStateActive);
  const sm::SmNode& far = m.nodes().back();  // a CA at the far end
  EXPECT_FALSE(far.is_switch);
  EXPECT_TRUE(m.smp_lid(far.lid, kMethodGet, kAttrNodeInfo, 0, nullptr, r));
  EXPECT_EQ(get(r + kData + 20, 8), far.guid);
  return ::testing::Test::HasFailure() ? 1 : 0;
}
const BuiltinProgram reg_dr("t_sm_dr", dr_main, "test");

Scenario load(const std::string& text) {
  return load_scenario_text(text, "sm.textproto",
                            [](std::string_view n) { return ProgramRegistry::instance().find(n) != nullptr; });
}

struct Outcome {
  std::vector<ProgramResultValue> sm_results;
  std::uint32_t sm_count = 0;
};

Outcome run_ok(const std::string& text) {
  Scenario sc = load(text);
  Sim sim(sc.seed);
  World world(sc);
  const RunStatus st = world.run();
  for (const auto& e : sim.errors().all()) ADD_FAILURE() << e.where << ": " << e.message;
  EXPECT_TRUE(st.ok);
  Outcome o;
  for (const auto& p : world.programs()) {
    if (p->daemon) {
      ++o.sm_count;
      o.sm_results = p->results();
      EXPECT_EQ(p->state(), ProgramState::Running) << "the SM daemon waits for traps: " << p->failure();
      continue;
    }
    EXPECT_EQ(p->state(), ProgramState::Finished) << p->node().name() << ": " << p->failure();
  }
  // Every switch routes every HCA LID (the SM programmed all LFTs).
  for (std::size_t i = 0; i < world.num_nodes(); ++i) {
    const std::uint16_t lid = world.node(i).nic_as<hca::Hca>()->port_lid(1);
    EXPECT_NE(lid, 0);
    for (fabric::Device* d : world.fabric().devices())
      if (auto* sw = dynamic_cast<fabric::Switch*>(d)) {
        EXPECT_NE(sw->route(lid), 0u) << sw->name() << " LID " << lid;
      }
  }
  return o;
}

double result(const Outcome& o, const std::string& name) {
  for (const auto& r : o.sm_results)
    if (r.name == name) return r.value;
  ADD_FAILURE() << "no SM result " << name;
  return -1;
}

TEST(SubnetManager, SweepsAStarAndEveryPairExchangesData) {
  const Outcome o = run_ok(R"(
    topology { star { hosts: 4 } nic: "hca" }
    workload { program: "t_sm_all_pairs" nodes: "*" })");
  EXPECT_EQ(o.sm_count, 1u);
  // H = 4 hosts on a switch with S = 4 ports. Discovery: NodeInfo,
  // NodeDescription and PortInfo of the SM's own port (3), the switch's
  // NodeInfo, NodeDescription and PortInfo 0..S (S + 3), the same three for
  // every other CA (3 (H - 1)); one LFT block and SwitchInfo (2); LID and SM
  // LID for every CA port and the switch's port 0 (H + 1); Armed, then
  // Active, for the CA ports, switch port 0 and the H linked switch ports
  // (2 (2H + 1)).
  const int h = 4, s = 4;
  EXPECT_EQ(result(o, "first_sweep_smps"), 3 + (s + 3) + 3 * (h - 1) + 2 + (h + 1) + 2 * (2 * h + 1));
  EXPECT_EQ(result(o, "first_sweep_timeouts"), 0);
}

TEST(SubnetManager, SweepsALeafSpineAndEveryPairExchangesData) {
  const Outcome o = run_ok(R"(
    topology { leaf_spine { leaves: 3 hosts_per_leaf: 2 spines: 2 } nic: "hca" }
    workload { program: "t_sm_all_pairs" nodes: "*" })");
  EXPECT_GT(result(o, "first_sweep_smps"), 60);
  EXPECT_EQ(result(o, "first_sweep_timeouts"), 0);
}

TEST(SubnetManager, LinkDownRaisesPortDownAndTheSmBringsThePortBack) {
  run_ok(R"(
    topology { star { hosts: 2 } nic: "hca" }
    workload { program: "t_sm_flap" nodes: "*" }
    fault { at: "1ms" link: "h1--sw0" link_down: true }
    fault { at: "1500us" link: "h1--sw0" link_up: true })");
}

TEST(SubnetManager, SmpsLostOnALossyLinkAreRetried) {
  const Outcome o = run_ok(R"(
    topology { star { hosts: 3 } nic: "hca" }
    subnet_manager { args: "--retries=12" }
    workload { program: "t_sm_all_pairs" nodes: "*" }
    fault { at: "0ns" link: "h0--sw0" drop_rate: "0.3" }
    fault { at: "2500us" link: "h0--sw0" drop_rate: "0" })");
  EXPECT_GT(result(o, "first_sweep_timeouts"), 0);
}

TEST(SubnetManager, MulticastTreeReachesMembersOnly) {
  run_ok(R"(
    topology { leaf_spine { leaves: 2 hosts_per_leaf: 2 spines: 2 } nic: "hca" }
    multicast { name: "g" mlid: 49153 members: "h0" members: "h3" }
    workload { program: "t_sm_mcast" nodes: "*" })");
}

TEST(SubnetManager, DirectedRouteResponsesCarryTheirPath) {
  Scenario sc = load(R"(
    topology { leaf_spine { leaves: 2 hosts_per_leaf: 2 spines: 2 } nic: "hca" }
    subnet_manager { off: true }
    workload { program: "t_sm_dr" nodes: "*" })");
  Sim sim(sc.seed);
  World world(sc);
  EXPECT_TRUE(world.run().ok);
  for (const auto& e : sim.errors().all()) ADD_FAILURE() << e.where << ": " << e.message;
}

TEST(SubnetManager, DirectedRouteRulesStepByStep) {
  using namespace fabric;
  using namespace fabric::smp;
  std::uint8_t mad[kMadBytes] = {};
  put(mad + kDrSlid, 2, kPermissiveLid);
  put(mad + kDrDlid, 2, kPermissiveLid);
  mad[kHopCount] = 2;
  mad[kHopPointer] = 1;  // the sender advanced it
  mad[kInitialPath + 1] = 1;
  mad[kInitialPath + 2] = 5;
  DrStep s = dr_arrive(mad, 3, true, 8);  // first switch, in on port 3
  EXPECT_EQ(s.action, DrAction::Forward);
  EXPECT_EQ(s.out_port, 5u);
  EXPECT_EQ(mad[kHopPointer], 2);
  EXPECT_EQ(mad[kReturnPath + 1], 3);
  s = dr_arrive(mad, 7, true, 8);  // second switch: the end
  EXPECT_EQ(s.action, DrAction::Local);
  EXPECT_EQ(mad[kReturnPath + 2], 7);
  EXPECT_EQ(mad[kHopPointer], 3);
  EXPECT_EQ(dr_turn_around(mad), 7u);  // back out the way it came
  EXPECT_EQ(mad[kHopPointer], 2);
  s = dr_arrive(mad, 5, true, 8);  // first switch again
  EXPECT_EQ(s.action, DrAction::Forward);
  EXPECT_EQ(s.out_port, 3u);
  s = dr_arrive(mad, 1, false, 1);  // the SM's CA
  EXPECT_EQ(s.action, DrAction::Local);
  EXPECT_EQ(mad[kHopPointer], 0);
  // Rule violations are discarded with a reason.
  mad[kHopPointer] = 0;
  put(mad + kStatus, 2, 0);
  EXPECT_EQ(dr_arrive(mad, 1, true, 8).action, DrAction::Discard);
  mad[kHopPointer] = 1;
  EXPECT_EQ(dr_arrive(mad, 1, false, 1).action, DrAction::Discard);  // a CA does not forward
  mad[kHopPointer] = 1;
  mad[kInitialPath + 2] = 9;
  EXPECT_EQ(dr_arrive(mad, 1, true, 8).action, DrAction::Discard);  // no port 9
  put(mad + kDrDlid, 2, 5);
  EXPECT_EQ(dr_arrive(mad, 1, true, 8).action, DrAction::Discard);  // LID-routed part
}

void expect_error(const std::string& text, const std::string& where, const std::string& what) {
  try {
    load(text);
    ADD_FAILURE() << "no error for: " << text;
  } catch (const ScenarioError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("sm.textproto:" + where + ": ", 0), 0u) << e.what();
    EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
  }
}

TEST(SubnetManager, SettingErrorsNameFileLineAndColumn) {
  const std::string topo = "topology { star { hosts: 2 } nic: \"hca\" }\n";
  expect_error(topo + "subnet_manager { node: \"nope\" }", "2:18", "unknown node 'nope'");
  expect_error(topo + "subnet_manager { off: true node: \"h0\" }", "2:28", "exclude each other");
  expect_error(topo + "subnet_manager {\n  args: \"--retries=1000\" }", "3:3", "retries must be");
  expect_error("topology { star { hosts: 2 } nic: \"raw\" }\nsubnet_manager { node: \"h0\" }", "2:1",
               "every node must have nic \"hca\"");
}

TEST(SubnetManager, CliExitsTwoOnABadSetting) {
  const std::string path = ::testing::TempDir() + "nicsim_sm_bad_" + std::to_string(::getpid()) + ".textproto";
  std::ofstream(path) << "topology { star { hosts: 2 } nic: \"hca\" }\nsubnet_manager { node: \"h9\" }\n";
  const testing::CommandResult r = testing::run_command(std::string(NICSIM_BIN) + " validate " + path + " 2>&1");
  const std::string& out = r.output;
  EXPECT_EQ(r.status, 2) << out;
  EXPECT_NE(out.find(path + ":2:18: subnet_manager: unknown node 'h9'"), std::string::npos) << out;
  std::remove(path.c_str());
}

TEST(SubnetManager, DefaultIsOnForHcaFabricsOnly) {
  const Scenario hca = load("topology { star { hosts: 2 } nic: \"hca\" }");
  ASSERT_NE(sm::scenario_spec(hca), nullptr);
  EXPECT_EQ(sm::scenario_spec(hca)->node, 0u);
  EXPECT_EQ(sm::scenario_spec(load("topology { star { hosts: 2 } nic: \"raw\" }")), nullptr);
  EXPECT_EQ(sm::scenario_spec(load("topology { star { hosts: 2 } nic: \"hca\" } subnet_manager { off: true }")),
            nullptr);
  const Scenario sc = load(
      "topology { star { hosts: 3 } nic: \"hca\" } subnet_manager { node: \"h2\" }\n"
      "multicast { mlid: 49153 members: \"h[0-1]\" }");
  const sm::ScenarioSpec* spec = sm::scenario_spec(sc);
  ASSERT_NE(spec, nullptr);
  EXPECT_EQ(spec->node, 2u);
  ASSERT_EQ(spec->args.size(), 1u);
  EXPECT_EQ(spec->args[0], "--mcast=49153:h0,h1");
}

}  // namespace
}  // namespace nicsim
