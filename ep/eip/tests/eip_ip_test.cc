// IPv4 over the Elan IP driver (ep/eip/ip) between simulated nodes: the
// eip_ping, eip_stream and eip_bcast programs on two nodes and on a 16-node
// Elite fat tree (each checks every payload byte at its receiver and fails
// the run otherwise), the driver's requeue path when transmit descriptors
// run out, a node cut off and back (the driver's error path, then
// recovery), and IP's own refusals. Counters are the programs' reports of
// the driver's EIP_STATS (r<rank>.eip.*) and the MIB-II groups (r<rank>.mib.*).
#include "ep/eip/ip/eip_ip.h"

#include <map>
#include <set>
#include <string>
#include <vector>

#include "core/sim.h"
#include "ep/tests/ep_test_util.h"
#include "sim/tests/scenario_figures.h"

namespace nicsim::ep::testing {
namespace {

using nicsim::testing::scenario_results;
using Results = std::map<std::string, double>;

double at(const Results& r, const std::string& name) {
  const auto it = r.find(name);
  return it == r.end() ? 0.0 : it->second;  // counters are reported when nonzero
}

std::string fat_tree(int nodes, const std::string& program, const std::string& args, const std::string& extra = "") {
  return "stop_time: \"400ms\"\ntopology { elite_fat_tree { nodes: " + std::to_string(nodes) +
         " } node_param { key: \"bus.profile\" value: \"pci-66\" } }\nworkload { program: \"" + program +
         "\" nodes: \"h*\" " + args + " }\n" + extra;
}

// ---- eip_ping: ICMP echo ----------------------------------------------------

TEST(EipIp, PingTwoNodesEveryEchoAnsweredByTheKernel) {
  const Results r = scenario_results("eip_ping.textproto", {"--iters=20"});
  const double echoes = 4 * (20 + 10);  // four sizes, warm-up included
  EXPECT_EQ(at(r, "r0.mib.icmpOutEchos"), echoes);
  EXPECT_EQ(at(r, "r1.mib.icmpInEchos"), echoes);
  EXPECT_EQ(at(r, "r1.mib.icmpOutEchoReps"), echoes);
  EXPECT_EQ(at(r, "r0.mib.icmpInEchoReps"), echoes);
  EXPECT_EQ(at(r, "r0.mib.icmpInErrors") + at(r, "r1.mib.icmpInErrors") + at(r, "r1.mib.ipInHdrErrors"), 0);
  // every echo and reply is one unicast packet each way, all completed
  EXPECT_EQ(at(r, "r0.eip.ifOutUcastPkts"), echoes);
  EXPECT_EQ(at(r, "r0.eip.opackets"), echoes);
  EXPECT_EQ(at(r, "r1.eip.ifInUcastPkts"), echoes);
  EXPECT_EQ(at(r, "r0.eip.oerrors"), 0);
}

TEST(EipIp, PingSixteenNodesInEightPairs) {
  const Results r = scenario_results("eip_ping16.textproto", {"--sizes=64,8192", "--iters=5"});
  const double echoes = 2 * (5 + 10);
  EXPECT_EQ(at(r, "r1.mib.icmpInEchos"), echoes);
  EXPECT_EQ(at(r, "r0.mib.icmpInEchoReps"), echoes);
  EXPECT_GT(at(r, "rtt_8192"), at(r, "rtt_64"));
}

// ---- eip_stream: UDP unicast --------------------------------------------------

TEST(EipIp, StreamTwoNodesEveryDatagramOnceByteForByte) {
  const Results r = scenario_results("eip_stream.textproto", {"--iters=40"});
  EXPECT_EQ(at(r, "r0.mib.udpOutDatagrams"), 3 * 40);
  EXPECT_EQ(at(r, "r1.mib.udpInDatagrams"), 3 * 40);
  EXPECT_EQ(at(r, "r1.mib.udpInErrors") + at(r, "r1.mib.udpNoPorts"), 0);
  EXPECT_EQ(at(r, "r0.eip.opackets"), 3 * 40);
  EXPECT_EQ(at(r, "r0.eip.obytes"), 40 * (1500 + 9000 + 65000 + 3 * (EIP_HEADER_SIZE + EIP_IP_HLEN + EIP_UDP_HLEN)));
  EXPECT_EQ(at(r, "r1.eip.rbytes"), at(r, "r0.eip.obytes"));
  EXPECT_LT(at(r, "bw_1500"), at(r, "bw_65000"));
}

TEST(EipIp, StreamSixteenNodesEightStreamsAtOnce) {
  const Results r = scenario_results("eip_stream16.textproto", {"--iters=10"});
  EXPECT_EQ(at(r, "r1.mib.udpInDatagrams"), 2 * 10);
  EXPECT_GT(at(r, "bw_65000"), 0.0);
}

// Two descriptors for a stream of 9,000-byte datagrams: eip_start finds
// none free again and again, puts the message back on the write queue
// (notmds), and eip_txhandler's eip_wenable restarts it; nothing is lost.
TEST(EipIp, TransmitDescriptorExhaustionTakesTheRequeuePathLosingNothing) {
  const Results r = scenario_results("eip_stream.textproto", {"--sizes=9000", "--iters=100", "--ntmds=2"});
  EXPECT_GT(at(r, "r0.eip.notmds"), 10);
  EXPECT_EQ(at(r, "r0.eip.oerrors"), 0);
  EXPECT_EQ(at(r, "r0.eip.opackets"), 100);
  EXPECT_EQ(at(r, "r1.mib.udpInDatagrams"), 100);
}

// ---- eip_bcast: UDP broadcast ---------------------------------------------------

TEST(EipIp, BroadcastTwoNodes) {
  RunResult res = run_text(fat_tree(2, "eip_bcast", R"(args: "--sizes=1500,65000" args: "--iters=10")"));
  EXPECT_EQ(at(res.results, "r0.eip.ifOutNUcastPkts"), 20);
  EXPECT_EQ(at(res.results, "r1.eip.ifInNUcastPkts"), 20);
  EXPECT_EQ(at(res.results, "r1.mib.udpInDatagrams"), 20);
}

TEST(EipIp, BroadcastSixteenNodesEachDatagramOnceEverywhere) {
  const Results r = scenario_results("eip_bcast.textproto", {"--sizes=1500,65000", "--iters=10"});
  EXPECT_EQ(at(r, "r0.eip.ifOutNUcastPkts"), 20);
  EXPECT_EQ(at(r, "r0.eip.opackets"), 20);
  EXPECT_EQ(at(r, "r0.mib.udpInDatagrams"), 0);  // EP_NOT_MYSELF
  EXPECT_EQ(at(r, "r1.eip.ifInNUcastPkts"), 20);
  EXPECT_EQ(at(r, "r1.mib.udpInDatagrams"), 20);
}

// 32 broadcasts of 64 KB in flight (the driver's default descriptors) to 3
// receivers: the sender's Elan serves every pull, one DMA at a time, so its
// heartbeats wait behind about 19 ms of replies; each receiver's data keeps
// landing meanwhile and the circuit must stay up. (Before, the receivers
// took the sender for dead after ep.heartbeat_timeout, their pulls ended
// ENETRESET, the sender's transmits completed and unmapped the buffers
// still being read: lost datagrams and local DMA faults.)
TEST(EipIp, BroadcastThirtyTwoInFlightFromABusySenderLosesNothing) {
  RunResult res = run_text(
      fat_tree(4, "eip_bcast", R"(args: "--sizes=65000" args: "--iters=40" args: "--ntmds=32")"));
  EXPECT_EQ(at(res.results, "r0.eip.ifOutNUcastPkts"), 40);
  EXPECT_EQ(at(res.results, "r0.eip.opackets"), 40);
  EXPECT_EQ(at(res.results, "r0.eip.oerrors"), 0);
  EXPECT_EQ(at(res.results, "r1.eip.ifInNUcastPkts"), 40);
  EXPECT_EQ(at(res.results, "r1.mib.udpInDatagrams"), 40);
  EXPECT_EQ(at(res.results, "r1.eip.ierrors"), 0);
}

// Circuits of Kernel Comms that failed during a run (ep.circuit transitions
// into Failed).
std::uint64_t circuit_failures() {
  std::uint64_t n = 0;
  for (const auto& c : Sim::get().fsm().coverage()) {
    if (c.type->name() != "ep.circuit") continue;
    for (std::size_t r = 0; r < c.taken.size(); ++r)
      if (c.type->state_name(c.type->rows()[r].to) == "Failed") n += c.taken[r];
  }
  return n;
}

// 32 broadcasts of 64 KB in flight (the driver's default descriptors) on 16
// nodes: an interior node of the multicast tree (node 3, serving nodes 10
// to 12) runs its children's pulls on its Elan's one DMA engine, about
// 19 ms of replies, and the root's engine is as busy serving its own three
// children. The heartbeats both ways go ahead of the queued data (a
// priority DMA), so no circuit fails and every receiver gets every
// datagram once, byte for byte. (Before, the heartbeats waited behind the
// replies, the root took node 3 and node 1 for dead, the edges below them
// completed ENETRESET, the root's driver unmapped buffers still being read
// and receivers lost datagrams.)
TEST(EipIp, BroadcastSixteenNodesThirtyTwoInFlightLosesNothing) {
  std::uint64_t failures = 0;
  nicsim::testing::RunOptions o;
  o.inspect = [&failures](World&) { failures = circuit_failures(); };
  RunResult res = nicsim::testing::run_text(
      fat_tree(16, "eip_bcast", R"(args: "--sizes=65000" args: "--iters=60" args: "--ntmds=32")"), o);
  EXPECT_EQ(failures, 0u) << "no circuit failed";
  EXPECT_EQ(at(res.results, "r0.eip.ifOutNUcastPkts"), 60);
  EXPECT_EQ(at(res.results, "r0.eip.opackets"), 60);
  EXPECT_EQ(at(res.results, "r0.eip.oerrors"), 0);
  EXPECT_GT(at(res.results, "r0.eip.notmds"), 0) << "all 32 descriptors were in use";
  EXPECT_EQ(at(res.results, "r1.eip.ifInNUcastPkts"), 60);
  EXPECT_EQ(at(res.results, "r1.mib.udpInDatagrams"), 60);
  EXPECT_EQ(at(res.results, "r1.eip.ierrors"), 0);
}

// ---- a node cut off and back: the driver's error path, then recovery --------

constexpr std::uint32_t kDropCount = 240;  // one every 50 us: 12 ms
constexpr std::uint32_t kDropLen = 1000;
constexpr std::uint16_t kDropPort = 7000;
EIP_STATS g_drop_tx{};
std::set<std::uint32_t> g_drop_rx;  // sequence numbers received intact
int g_drop_bad = 0;                 // received corrupt or twice

mblk_t* numbered(std::uint32_t seq) {
  mblk_t* m = eip_ip_alloc(kDropLen);
  for (std::uint32_t i = 0; i < kDropLen; ++i)
    m->b_rptr[i] = i < 4 ? static_cast<unsigned char>(seq >> (8 * i)) : pattern(seq, i);
  m->b_wptr = m->b_rptr + kDropLen;
  return m;
}

void check_numbered(mblk_t* m) {
  std::uint32_t seq = 0;
  for (int i = 0; i < 4; ++i) seq |= std::uint32_t{m->b_rptr[i]} << (8 * i);
  bool ok = msgdsize(m) == kDropLen && seq < kDropCount;
  for (std::uint32_t i = 4; ok && i < kDropLen; ++i) ok = m->b_rptr[i] == pattern(seq, i);
  if (!ok || !g_drop_rx.insert(seq).second) ++g_drop_bad;
  freemsg(m);
}

int drop_prog(int, char**) {
  EIP_DEV* dev = eip_attach(0);
  EIP_IPIF* ip = dev ? eip_ip_attach(dev) : nullptr;
  EIP_UDP* u = ip ? eip_udp_bind(ip, kDropPort) : nullptr;
  const int peer = peer_id();
  if (!u || peer < 0 || nicsim_barrier() != 0) return 1;
  if (nicsim_workload_rank() == 0) {
    for (std::uint32_t i = 0; i < kDropCount; ++i) {
      eip_udp_send(u, eip_ip_addr_of(peer), kDropPort, numbered(i));
      nicsim_sleep_ns(50'000);
    }
    if (!wait_until([dev] {
          ep_poll_transmits(dev->dev_xmtr);
          return dev->dev_stats.tmdcnt == 0;
        }))
      return 2;
    g_drop_tx = dev->dev_stats;
  } else {
    // until the last datagram, or 20 ms of silence
    while (mblk_t* m = eip_udp_recv(u, 20'000'000, nullptr, nullptr)) {
      check_numbered(m);
      if (g_drop_rx.count(kDropCount - 1)) break;
    }
  }
  if (nicsim_barrier() != 0) return 3;
  eip_ip_detach(ip);
  eip_detach(dev);
  return 0;
}
const BuiltinProgram reg_drop("eip_test_ip_drop", drop_prog, "test");

TEST(EipIp, NodeCutOffGivesTheDriversErrorPathThenRecovers) {
  run_text(fat_tree(2, "eip_test_ip_drop", "",
                    R"(fault { at: "2ms" link: "h1--el0_0" link_down: true }
                       fault { at: "4ms" link: "h1--el0_0" link_up: true })"));
  std::printf("sent %u: opackets %llu oerrors %llu notmds %llu, received %zu\n", kDropCount,
              static_cast<unsigned long long>(g_drop_tx.opackets), static_cast<unsigned long long>(g_drop_tx.oerrors),
              static_cast<unsigned long long>(g_drop_tx.notmds), g_drop_rx.size());
  // the datagrams sent while h1 was away failed in the driver (eip_start's
  // bad: path or eip_txhandler with ENETRESET), counted in oerrors
  EXPECT_GT(g_drop_tx.oerrors, 10u);
  EXPECT_EQ(g_drop_tx.opackets + g_drop_tx.oerrors, kDropCount);
  EXPECT_EQ(g_drop_bad, 0);
  // before the cut, and after the circuit came back, all arrived
  EXPECT_TRUE(g_drop_rx.count(0));
  EXPECT_TRUE(g_drop_rx.count(kDropCount - 1));
  EXPECT_GE(g_drop_rx.size() + g_drop_tx.oerrors, kDropCount);
  EXPECT_LE(g_drop_rx.size(), kDropCount);
}

// ---- what IP refuses -----------------------------------------------------------

// Rank 0 sends: a datagram whose IP header checksum is wrong (through the
// driver directly), UDP to a port nobody bound, UDP to an address outside
// 10/8, and one good datagram; rank 1 sees only the good one.
int refuse_prog(int, char**) {
  EIP_DEV* dev = eip_attach(0);
  EIP_IPIF* ip = dev ? eip_ip_attach(dev) : nullptr;
  EIP_UDP* u = ip ? eip_udp_bind(ip, kDropPort) : nullptr;
  const int peer = peer_id();
  if (!u || peer < 0 || nicsim_barrier() != 0) return 1;
  if (nicsim_workload_rank() == 0) {
    mblk_t* bad = eip_ip_alloc(EIP_IP_HLEN + 4);
    std::memset(bad->b_wptr, 0, EIP_IP_HLEN + 4);
    bad->b_wptr[0] = 0x45;  // version and length fine, checksum 0: wrong
    bad->b_wptr[3] = EIP_IP_HLEN + 4;
    bad->b_wptr += EIP_IP_HLEN + 4;
    eip_fill_header(dev, bad, peer, ETHERTYPE_IP);
    eip_output(dev, bad);
    eip_udp_send(u, eip_ip_addr_of(peer), kDropPort + 1, numbered(1));
    if (eip_udp_send(u, 0xc0a80001u, kDropPort, numbered(2)) != -1) return 2;
    eip_udp_send(u, eip_ip_addr_of(peer), kDropPort, numbered(3));
    if (ip->ip_mib.ipOutNoRoutes != 1) return 3;
  } else {
    mblk_t* m = eip_udp_recv(u, 20'000'000, nullptr, nullptr);
    if (!m) return 4;
    check_numbered(m);
    if (eip_udp_recv(u, 2'000'000, nullptr, nullptr) != nullptr) return 5;
    if (ip->ip_mib.ipInHdrErrors != 1 || ip->ip_mib.udpNoPorts != 1 || ip->ip_mib.udpInDatagrams != 1) return 6;
  }
  if (nicsim_barrier() != 0) return 7;
  eip_ip_detach(ip);
  eip_detach(dev);
  return 0;
}
const BuiltinProgram reg_refuse("eip_test_ip_refuse", refuse_prog, "test");

TEST(EipIp, BadHeadersUnboundPortsAndForeignAddressesAreCountedNotDelivered) {
  g_drop_rx.clear();
  run_text(pair_scenario("eip_test_ip_refuse"));
  EXPECT_EQ(g_drop_rx, std::set<std::uint32_t>{3});
  EXPECT_EQ(g_drop_bad, 0);
}

TEST(EipIp, AddressesFollowTheNodeIds) {
  EXPECT_EQ(eip_ip_addr_of(0), 0x0a000001u);
  EXPECT_EQ(eip_ip_node_of(eip_ip_addr_of(15)), 15);
  EXPECT_EQ(eip_ip_node_of(EIP_IP_BROADCAST), -1);
  EXPECT_EQ(eip_ip_node_of(0xc0a80001u), -2);
  EXPECT_EQ(eip_ip_node_of(EIP_IP_NET), -2);
}

}  // namespace
}  // namespace nicsim::ep::testing
