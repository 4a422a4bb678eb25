// Fabric unit tests: exact serialisation/propagation arithmetic, cut-through
// and store-and-forward timing, credit back-pressure with a slow receiver,
// routing, multicast replication, drops, bit errors and link down/up.
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <vector>

#include "core/sim.h"
#include "fabric/fabric.h"
#include "fabric/link.h"
#include "fabric/raw_nic.h"
#include "ib_fabric/routing.h"
#include "ib_fabric/switch.h"

using namespace nicsim;
using namespace nicsim::fabric;

namespace {

ParamSet params(const char* scope, std::map<std::string, std::string> values) {
  ParamSet p(*ParamRegistry::instance().find(scope));
  for (auto& [k, v] : values) {
    std::string err = p.set(k, v);
    EXPECT_EQ(err, "") << k << "=" << v;
  }
  return p;
}

struct Rx {
  std::uint64_t id;
  std::uint32_t src;
  Tick done;
  bool intact;
};

// A small fabric built by hand: raw NICs and switches.
struct Bench {
  Sim sim{1};
  Fabric fabric;
  std::vector<std::unique_ptr<RawNic>> nics;
  std::vector<std::unique_ptr<Switch>> switches;
  std::vector<std::vector<Rx>> received;
  std::uint32_t next_device = 0;

  RawNic& nic(std::map<std::string, std::string> p = {}) {
    const auto node = static_cast<std::uint32_t>(nics.size());
    nics.push_back(
        std::make_unique<RawNic>(fabric, next_device++, "n" + std::to_string(node), node, params("nic.raw", p)));
    nics.back()->set_lid(1, static_cast<std::uint16_t>(node + 1));
    received.emplace_back();
    auto* log = &received;
    nics.back()->on_receive([log, node](const Packet& pk, Tick done, bool intact) {
      (*log)[node].push_back(Rx{pk.meta.id, pk.meta.src_node, done, intact});
    });
    return *nics.back();
  }
  Switch& sw(std::map<std::string, std::string> p = {}) {
    switches.push_back(std::make_unique<Switch>(fabric, 1000 + next_device++, "s" + std::to_string(switches.size()),
                                                params("switch", p)));
    return *switches.back();
  }
  Link& connect(Port& a, Port& b, std::map<std::string, std::string> p = {}) {
    return fabric.connect(a.path() + "--" + b.path(), a, b, params("link", p), 1);
  }
  void route() {
    std::vector<EndpointAddress> eps;
    for (auto& n : nics) eps.push_back({n.get(), 1, n->lid()});
    std::vector<Device*> sws;
    for (auto& s : switches) sws.push_back(s.get());
    program_unicast_routes(sws, eps);
  }
  // Two NICs on ports 1 and 2 of one switch, 5 ns cables, routes programmed.
  Switch& pair_through_switch(std::map<std::string, std::string> switch_params,
                              std::map<std::string, std::string> a_params = {},
                              std::map<std::string, std::string> z_params = {},
                              std::map<std::string, std::string> link_params = {{"delay", "5ns"}}) {
    RawNic& a = nic(a_params);
    RawNic& z = nic(z_params);
    Switch& s = sw(std::move(switch_params));
    connect(a.port(1), s.port(1), link_params);
    connect(z.port(1), s.port(2), link_params);
    route();
    return s;
  }
  // Runs `fn` at simulated time `at` (from the calendar).
  void at(Tick t, std::function<void()> fn) {
    auto* f = new std::function<void()>(std::move(fn));
    sim.calendar().at(
        t,
        [](void* p, std::uint64_t) {
          auto* g = static_cast<std::function<void()>*>(p);
          (*g)();
          delete g;
        },
        f);
  }
};

TEST(Fabric, SerializationAndPropagationAreExact) {
  Bench b;
  RawNic& a = b.nic();
  RawNic& z = b.nic();
  b.connect(a.port(1), z.port(1), {{"bandwidth", "8Gbps"}, {"delay", "100ns"}});
  b.at(0, [&] {
    a.send(z.lid(), 2048);
    a.send(z.lid(), 2048);
    a.send(z.lid(), 1000);
  });
  sc_core::sc_start();
  ASSERT_EQ(b.received[1].size(), 3u);
  // 2048 B at 8 Gb/s = 2.048 us on the wire, then 100 ns of cable.
  EXPECT_EQ(b.received[1][0].done, 2048 * kNs + 100 * kNs);
  EXPECT_EQ(b.received[1][1].done, 2 * 2048 * kNs + 100 * kNs);
  EXPECT_EQ(b.received[1][2].done, 2 * 2048 * kNs + 1000 * kNs + 100 * kNs);
  for (auto& r : b.received[1]) EXPECT_TRUE(r.intact);
  EXPECT_EQ(a.port(1).stats().tx_busy, (2 * 2048 + 1000) * kNs);
  EXPECT_EQ(b.fabric.packet_hops(), 3u);
}

TEST(Fabric, RoundingUpToWholePicoseconds) {
  Bench b;
  RawNic& a = b.nic();
  RawNic& z = b.nic();
  // 100 B at 3 Gb/s = 266.666... ns: rounds up to 266667 ps.
  b.connect(a.port(1), z.port(1), {{"bandwidth", "3Gbps"}, {"delay", "0ps"}});
  b.at(0, [&] { a.send(z.lid(), 100); });
  sc_core::sc_start();
  ASSERT_EQ(b.received[1].size(), 1u);
  EXPECT_EQ(b.received[1][0].done, 266667u);
}

TEST(Fabric, CutThroughSwitchTiming) {
  Bench b;
  Switch& s = b.pair_through_switch({{"ports", "4"}, {"hop_latency", "200ns"}});
  b.at(0, [&] { b.nics[0]->send(b.nics[1]->lid(), 2048); });
  sc_core::sc_start();
  ASSERT_EQ(b.received[1].size(), 1u);
  // Head crosses the first cable (5 ns) and the switch (200 ns); the tail
  // follows 2.048 us behind on the second link, then 5 ns of cable.
  EXPECT_EQ(b.received[1][0].done, (5 + 200 + 2048 + 5) * kNs);
  EXPECT_EQ(s.stats().forwarded, 1u);
}

TEST(Fabric, StoreAndForwardSwitchTiming) {
  Bench b;
  b.pair_through_switch({{"ports", "4"}, {"hop_latency", "200ns"}, {"mode", "store_and_forward"}});
  b.at(0, [&] { b.nics[0]->send(b.nics[1]->lid(), 2048); });
  sc_core::sc_start();
  ASSERT_EQ(b.received[1].size(), 1u);
  EXPECT_EQ(b.received[1][0].done, (2048 + 5 + 200 + 2048 + 5) * kNs);
}

TEST(Fabric, CutThroughIntoFasterLinkWaitsForTheTail) {
  Bench b;
  RawNic& a = b.nic();
  RawNic& z = b.nic();
  Switch& s = b.sw({{"ports", "4"}, {"hop_latency", "0ps"}});
  b.connect(a.port(1), s.port(1), {{"bandwidth", "4Gbps"}, {"delay", "0ps"}});
  b.connect(z.port(1), s.port(2), {{"bandwidth", "8Gbps"}, {"delay", "0ps"}});
  b.route();
  b.at(0, [&] { a.send(z.lid(), 2048); });
  sc_core::sc_start();
  ASSERT_EQ(b.received[1].size(), 1u);
  // The tail reaches the switch at 4.096 us; the faster output cannot finish
  // before that, so the packet is fully received at exactly 4.096 us.
  EXPECT_EQ(b.received[1][0].done, 4096 * kNs);
}

TEST(Fabric, SlowReceiverBackPressureLosesNothing) {
  Bench b;
  Switch& s = b.pair_through_switch({{"ports", "4"}, {"hop_latency", "200ns"}}, {{"tx_queue", "1000"}},
                                    {{"rx_rate", "1Gbps"}}, {{"delay", "5ns"}, {"vl_buffer", "8KiB"}});
  RawNic& a = *b.nics[0];
  RawNic& z = *b.nics[1];
  constexpr int kPackets = 100;
  b.at(0, [&] {
    for (int i = 0; i < kPackets; ++i) ASSERT_TRUE(a.send(z.lid(), 2048));
  });
  sc_core::sc_start();
  ASSERT_EQ(b.received[1].size(), static_cast<std::size_t>(kPackets));
  // The receiver drains 2 KiB per 16.384 us and is never starved: packet k
  // is done at 210 ns (first head in) + (k+1) x 16.384 us.
  for (int k = 0; k < kPackets; ++k) {
    EXPECT_EQ(b.received[1][k].done, 210 * kNs + static_cast<Tick>(k + 1) * 16384 * kNs) << k;
    EXPECT_TRUE(b.received[1][k].intact);
  }
  // In order, nothing dropped, and the sender was held back by credits.
  for (int k = 1; k < kPackets; ++k) EXPECT_GT(b.received[1][k].id, b.received[1][k - 1].id);
  for (auto* p : {&a.port(1), &s.port(1), &s.port(2), &z.port(1)}) {
    EXPECT_EQ(p->stats().drops_link_down, 0u);
    EXPECT_EQ(p->stats().drops_injected, 0u);
  }
  EXPECT_GT(a.port(1).stats().credit_stalls, 0u);
  EXPECT_GT(s.port(2).stats().credit_stalls, 0u);
  EXPECT_EQ(b.fabric.pool().live(), 0u);
}

TEST(Fabric, VirtualLanesHaveSeparateCredits) {
  Bench b;
  RawNic& a = b.nic({{"tx_queue", "100"}});
  RawNic& z = b.nic({{"rx_rate", "1Gbps"}});
  b.connect(a.port(1), z.port(1), {{"delay", "0ps"}, {"vls", "2"}, {"vl_buffer", "4KiB"}});
  b.at(0, [&] {
    for (int i = 0; i < 4; ++i) a.send(z.lid(), 2048, 0);
    for (int i = 0; i < 4; ++i) a.send(z.lid(), 2048, 1);
  });
  b.at(1 * kMs, [] {});  // past the last credit return
  sc_core::sc_start();
  ASSERT_EQ(b.received[1].size(), 8u);
  EXPECT_EQ(a.port(1).credits(0), 64u);
  EXPECT_EQ(a.port(1).credits(1), 64u);
}

TEST(Fabric, UnicastRoutesAcrossLeafSpine) {
  Bench b;
  // 2 leaves x 2 hosts, 2 spines.
  for (int i = 0; i < 4; ++i) b.nic();
  Switch& leaf0 = b.sw({{"ports", "4"}});
  Switch& leaf1 = b.sw({{"ports", "4"}});
  Switch& spine0 = b.sw({{"ports", "2"}});
  Switch& spine1 = b.sw({{"ports", "2"}});
  b.connect(b.nics[0]->port(1), leaf0.port(1));
  b.connect(b.nics[1]->port(1), leaf0.port(2));
  b.connect(b.nics[2]->port(1), leaf1.port(1));
  b.connect(b.nics[3]->port(1), leaf1.port(2));
  b.connect(leaf0.port(3), spine0.port(1));
  b.connect(leaf0.port(4), spine1.port(1));
  b.connect(leaf1.port(3), spine0.port(2));
  b.connect(leaf1.port(4), spine1.port(2));
  b.route();
  EXPECT_EQ(leaf0.route(1), 1u);
  EXPECT_EQ(leaf0.route(2), 2u);
  // Destinations on the other leaf spread over both spines by LID.
  EXPECT_NE(leaf0.route(3), leaf0.route(4));
  EXPECT_EQ(spine0.route(1), 1u);
  EXPECT_EQ(spine0.route(3), 2u);
  std::map<std::uint64_t, int> hops;
  b.at(0, [&] {
    for (auto& src : b.nics)
      for (auto& dst : b.nics)
        if (src != dst) src->send(dst->lid(), 256);
  });
  sc_core::sc_start();
  for (std::uint32_t n = 0; n < 4; ++n) {
    ASSERT_EQ(b.received[n].size(), 3u) << n;
    for (auto& r : b.received[n]) EXPECT_TRUE(r.intact);
  }
  // Same-leaf pairs cross 2 links, cross-leaf pairs 4: 4 x 2 + 8 x 4.
  EXPECT_EQ(b.fabric.packet_hops(), 4u * 2 + 8u * 4);
}

TEST(Fabric, MulticastReplicatesOncePerMember) {
  Bench b;
  for (int i = 0; i < 5; ++i) b.nic();
  Switch& leaf0 = b.sw({{"ports", "3"}});
  Switch& leaf1 = b.sw({{"ports", "4"}});
  b.connect(b.nics[0]->port(1), leaf0.port(1));
  b.connect(b.nics[1]->port(1), leaf0.port(2));
  b.connect(b.nics[2]->port(1), leaf1.port(1));
  b.connect(b.nics[3]->port(1), leaf1.port(2));
  b.connect(b.nics[4]->port(1), leaf1.port(3));
  b.connect(leaf0.port(3), leaf1.port(4));
  b.route();
  constexpr std::uint16_t mlid = 0xC001;
  std::vector<Device*> sws{&leaf0, &leaf1};
  std::vector<EndpointAddress> members;
  for (int i : {0, 1, 3, 4}) {
    members.push_back({b.nics[i].get(), 1, b.nics[i]->lid()});
    b.nics[i]->join_multicast(mlid);
  }
  program_multicast_tree(sws, mlid, members);
  b.at(0, [&] { b.nics[0]->send(mlid, 512); });
  b.at(1 * kMs, [] {});  // past the last credit return
  sc_core::sc_start();
  EXPECT_EQ(b.received[0].size(), 0u);  // the sender gets no copy back
  EXPECT_EQ(b.received[1].size(), 1u);
  EXPECT_EQ(b.received[2].size(), 0u);  // not a member, not on the tree
  EXPECT_EQ(b.received[3].size(), 1u);
  EXPECT_EQ(b.received[4].size(), 1u);
  for (int i : {1, 3, 4}) EXPECT_TRUE(b.received[i][0].intact);
  EXPECT_EQ(leaf0.stats().replicated, 2u);  // to n1 and up to leaf1
  EXPECT_EQ(leaf1.stats().replicated, 2u);  // to n3 and n4
  EXPECT_EQ(b.fabric.pool().live(), 0u);
  // Every input buffer was given back.
  EXPECT_EQ(b.nics[0]->port(1).credits(0), 128u);
  EXPECT_EQ(leaf0.port(3).credits(0), 128u);
}

TEST(Fabric, InjectedDropsAndBitErrors) {
  Bench b;
  RawNic& a = b.nic({{"tx_queue", "1000"}});
  RawNic& z = b.nic();
  Link& l = b.connect(a.port(1), z.port(1), {{"drop_rate", "0.25"}, {"bit_error_rate", "1e-5"}});
  b.at(0, [&] {
    for (int i = 0; i < 400; ++i) a.send(z.lid(), 1024);
  });
  b.at(1 * kMs, [] {});  // past the last credit return
  sc_core::sc_start();
  const auto& tx = a.port(1).stats();
  const auto& rx = z.stats();
  EXPECT_EQ(tx.drops_injected + rx.rx_packets, 400u);
  EXPECT_GT(tx.drops_injected, 60u);  // about 100 expected
  EXPECT_LT(tx.drops_injected, 140u);
  // 8192 bits at 1e-5: about 8% of packets hit; every hit is caught.
  EXPECT_GT(rx.rx_corrupt, 5u);
  EXPECT_EQ(rx.rx_corrupt, tx.bit_errors);
  std::uint64_t bad = 0;
  for (auto& r : b.received[1]) bad += r.intact ? 0 : 1;
  EXPECT_EQ(bad, rx.rx_corrupt);
  EXPECT_EQ(a.port(1).credits(0), l.vl_buffer_blocks());
}

TEST(Fabric, LinkDownDropsAndUpRecovers) {
  Bench b;
  RawNic& a = b.nic({{"tx_queue", "100"}});
  RawNic& z = b.nic();
  Link& l = b.connect(a.port(1), z.port(1), {{"delay", "1us"}});
  b.at(0, [&] {
    for (int i = 0; i < 3; ++i) a.send(z.lid(), 2048);
  });
  // At 2.5 us: packet 1 has arrived (head at 1 us), packet 2 is on the wire,
  // packet 3 is queued behind it.
  b.at(2500 * kNs, [&] { l.set_up(false, "test"); });
  b.at(10 * kUs, [&] {
    l.set_up(true, "test");
    a.send(z.lid(), 2048);
  });
  sc_core::sc_start();
  ASSERT_EQ(b.received[1].size(), 2u);
  EXPECT_EQ(b.received[1][1].done, 10 * kUs + 2048 * kNs + 1 * kUs);
  EXPECT_EQ(a.port(1).stats().drops_link_down, 2u);
  EXPECT_TRUE(l.up());
  const auto& cov = b.sim.fsm().coverage();
  ASSERT_EQ(cov.size(), 1u);
  EXPECT_EQ(cov[0].taken[0], 1u);
  EXPECT_EQ(cov[0].taken[1], 1u);
  EXPECT_EQ(b.fabric.pool().live(), 0u);
}

TEST(Fabric, OversizedPacketIsAnErrorNotACrash) {
  Bench b;
  RawNic& a = b.nic();
  RawNic& z = b.nic();
  b.connect(a.port(1), z.port(1), {{"vl_buffer", "1KiB"}});
  b.at(0, [&] { a.send(z.lid(), 2048); });
  sc_core::sc_start();
  EXPECT_EQ(b.received[1].size(), 0u);
  ASSERT_EQ(b.sim.errors().all().size(), 1u);
  EXPECT_NE(b.sim.errors().all()[0].message.find("larger than the peer's VL buffer"), std::string::npos);
}

}  // namespace

namespace {

// Review finding: a link going down and up must not let a receiver's buffer
// overfill (credits must stay exact without any reset).
TEST(Fabric, LinkDownUpKeepsCreditsExact) {
  {
    const int vls = 1;
    Bench b;
    Switch& s = b.pair_through_switch({{"ports", "4"}, {"hop_latency", "200ns"}}, {{"tx_queue", "1000"}},
                                      {{"rx_rate", "1Gbps"}},
                                      {{"delay", "5ns"}, {"vl_buffer", "8KiB"}, {"vls", std::to_string(vls)}});
    RawNic& a = *b.nics[0];
    RawNic& z = *b.nics[1];
    Link& first = *b.fabric.links()[0];
    b.at(0, [&] {
      for (int i = 0; i < 40; ++i) a.send(z.lid(), 2048, static_cast<std::uint8_t>(i % vls));
    });
    b.at(30 * kUs, [&] { first.set_up(false, "test"); });
    b.at(31 * kUs, [&] { first.set_up(true, "test"); });
    b.at(10 * kMs, [] {});
    sc_core::sc_start();
    EXPECT_TRUE(b.sim.errors().empty()) << b.sim.errors().all()[0].message;
    const auto dropped = a.port(1).stats().drops_link_down;
    EXPECT_GT(dropped, 0u);
    EXPECT_EQ(z.stats().rx_packets + dropped, 40u);
    for (int vl = 0; vl < vls; ++vl) {
      EXPECT_EQ(a.port(1).credits(vl), 128u);
      EXPECT_EQ(s.port(2).credits(vl), 128u);
    }
  }
}

TEST(Fabric, LinkDownUpKeepsCreditsExactWithTwoVls) {
  Bench b;
  Switch& s = b.pair_through_switch({{"ports", "4"}, {"hop_latency", "200ns"}}, {{"tx_queue", "1000"}},
                                    {{"rx_rate", "1Gbps"}}, {{"delay", "5ns"}, {"vl_buffer", "8KiB"}, {"vls", "2"}});
  RawNic& a = *b.nics[0];
  RawNic& z = *b.nics[1];
  Link& first = *b.fabric.links()[0];
  b.at(0, [&] {
    for (int i = 0; i < 40; ++i) a.send(z.lid(), 2048, static_cast<std::uint8_t>(i % 2));
  });
  b.at(30 * kUs, [&] { first.set_up(false, "test"); });
  b.at(31 * kUs, [&] { first.set_up(true, "test"); });
  b.at(10 * kMs, [] {});
  sc_core::sc_start();
  EXPECT_TRUE(b.sim.errors().empty()) << b.sim.errors().all()[0].message;
  EXPECT_EQ(z.stats().rx_packets + a.port(1).stats().drops_link_down, 40u);
  for (int vl = 0; vl < 2; ++vl) {
    EXPECT_EQ(a.port(1).credits(vl), 128u);
    EXPECT_EQ(s.port(2).credits(vl), 128u);
  }
}

}  // namespace
