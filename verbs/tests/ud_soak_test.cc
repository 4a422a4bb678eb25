// UD and multicast under link faults, short (scenarios/ib_ud_soak.textproto
// with 5,000 messages instead of 10^6): packets dropped at random on every
// host link and bits flipped at 1e-6. The program checks every byte and
// accounts for every datagram; here the counts must show UD's promise kept
// (loss allowed, no corruption, no duplicates), add up for each receiver,
// and the faults must have done something (datagrams lost, packets dropped
// by the links and by the HCAs' CRC check).
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <map>
#include <string>
#include <vector>

#include "fabric/link.h"
#include "hca_model/hca.h"
#include "sim/tests/scenario_figures.h"
#include "world/world.h"

using namespace nicsim;

namespace {

struct UdOutcome {
  std::map<std::string, double> results;
  std::uint64_t bit_errors = 0, link_drops = 0, crc_drops = 0;
  bool ok = false;
};

// The soak scenario with --iters replaced, without --mlid when unicast,
// and without its faults when clean.
UdOutcome run_ud_soak(bool multicast, bool clean) {
  std::ifstream f(std::string(NICSIM_SOURCE_DIR) + "/scenarios/ib_ud_soak.textproto");
  std::string text(std::istreambuf_iterator<char>(f), {});
  Scenario sc = nicsim::testing::load_text(text, "ib_ud_soak.textproto");
  if (clean) sc.faults.clear();
  for (auto& w : sc.workloads) {
    std::vector<std::string> args;
    for (const std::string& a : w.args)
      if (a.rfind("--iters=", 0) == 0)
        args.push_back("--iters=5000");
      else if (a.rfind("--mlid=", 0) != 0 || multicast)
        args.push_back(a);
    w.args = args;
  }
  UdOutcome out;
  nicsim::testing::RunOptions o;
  o.inspect = [&](World& w) {
    for (const auto& l : w.fabric().links())
      for (const auto* p : {&l->a(), &l->b()}) {
        out.bit_errors += p->stats().bit_errors;
        out.link_drops += p->stats().drops_injected;
      }
    for (std::uint32_t i = 0; i < w.num_nodes(); ++i)
      if (const auto* h = w.node(i).nic_as<hca::Hca>()) out.crc_drops += h->stats().rx_bad_crc;
  };
  const nicsim::testing::RunResult r = nicsim::testing::run_scenario(sc, o);
  out.results = r.results;
  out.ok = r.ok;
  return out;
}

double get(const UdOutcome& o, const std::string& name) {
  const auto it = o.results.find(name);
  EXPECT_NE(it, o.results.end()) << name;
  return it == o.results.end() ? -1 : it->second;
}

// The counts of every receiver add up; none is corrupted or duplicated.
void expect_promise_kept(const UdOutcome& o) {
  EXPECT_TRUE(o.ok);
  EXPECT_EQ(get(o, "sent"), 5000);
  EXPECT_EQ(get(o, "receivers"), 3);
  double delivered = 0, lost = 0;
  for (const std::string r : {"1", "2", "3"}) {
    EXPECT_EQ(get(o, "delivered_" + r) + get(o, "lost_" + r), 5000) << "receiver " << r;
    delivered += get(o, "delivered_" + r);
    lost += get(o, "lost_" + r);
  }
  EXPECT_EQ(get(o, "delivered"), delivered);
  EXPECT_EQ(get(o, "lost"), lost);
  EXPECT_EQ(get(o, "corrupted"), 0);
  EXPECT_EQ(get(o, "duplicated"), 0);
}

TEST(UdSoak, MulticastOverDropsAndBitErrorsLosesButNeverCorruptsOrDuplicates) {
  const UdOutcome o = run_ud_soak(true, false);
  expect_promise_kept(o);
  for (const std::string r : {"1", "2", "3"}) EXPECT_GT(get(o, "lost_" + r), 0) << "receiver " << r;
  EXPECT_LT(get(o, "lost"), 0.05 * 15000);  // about 2%: 0.1% dropped per link, 0.8% hit by a bit error
  EXPECT_GT(o.bit_errors, 50u);
  EXPECT_GT(o.link_drops, 10u);
  EXPECT_GT(o.crc_drops, 50u);  // the HCAs threw the corrupted packets away
}

TEST(UdSoak, UnicastToEachReceiverOverDropsAndBitErrorsLosesButNeverCorruptsOrDuplicates) {
  const UdOutcome o = run_ud_soak(false, false);
  expect_promise_kept(o);
  EXPECT_GT(get(o, "lost"), 0);
  EXPECT_GT(o.crc_drops, 50u);
}

// Without faults nothing is lost: the receivers keep up with the sender, so
// the loss above is the links' doing.
void expect_nothing_lost(bool multicast) {
  const UdOutcome o = run_ud_soak(multicast, true);
  expect_promise_kept(o);
  EXPECT_EQ(get(o, "lost"), 0);
  EXPECT_EQ(get(o, "delivered"), 15000);
  EXPECT_EQ(o.bit_errors + o.link_drops + o.crc_drops, 0u);
}

TEST(UdSoak, MulticastWithoutFaultsDeliversEveryDatagram) { expect_nothing_lost(true); }
TEST(UdSoak, UnicastWithoutFaultsDeliversEveryDatagram) { expect_nothing_lost(false); }

}  // namespace
