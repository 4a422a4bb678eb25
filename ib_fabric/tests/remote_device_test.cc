// A rank builds only the devices it runs: rank 0 of two, built in this
// process, stands for rank 1's hosts and switches by the ports its own
// devices are linked to, builds only the links with an end on its devices,
// and still routes its own switches exactly as one process does.
#include <gtest/gtest.h>

#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/block_exchange.h"
#include "core/sim.h"
#include "fabric/raw_nic.h"
#include "fabric/remote_device.h"
#include "ib_fabric/switch.h"
#include "sim/tests/world_run.h"

using namespace nicsim;

namespace {

// Rank 0 of two. Building a world exchanges nothing; this test never runs one.
class RankZeroOfTwo final : public RankTransport {
 public:
  int rank() const override { return 0; }
  int ranks() const override { return 2; }
  std::vector<std::vector<std::uint8_t>> exchange(const std::vector<std::vector<std::uint8_t>>&, std::uint64_t*,
                                                  int) override {
    throw std::logic_error("a world that is only built exchanges nothing");
  }
  void all_reduce(std::uint64_t*, int, Op) override { throw std::logic_error("not while building"); }
  std::vector<std::string> gather(const std::string&) override { throw std::logic_error("not while building"); }
  [[noreturn]] void abort(int) override { std::abort(); }
};

const char* kTree =
    "topology { fat_tree { k: 4 n: 3 } host_prefix: \"h\" nic: \"raw\" }\n"
    "link_defaults { bandwidth: \"8Gbps\" delay: \"5ns\" }\n"
    "partition { blocks: 2 }\n";

// Every switch's forwarding table, by switch name, as one process sets it.
std::vector<std::vector<std::uint32_t>> tables(World& world, const std::set<std::uint32_t>& only) {
  std::vector<std::vector<std::uint32_t>> out;
  for (std::uint32_t s = 0; s < world.num_switches(); ++s) {
    if (!only.count(s)) continue;
    auto* sw = world.switch_as<fabric::Switch>(s);
    std::vector<std::uint32_t>& t = out.emplace_back();
    for (std::uint32_t i = 0; i < world.num_nodes(); ++i) t.push_back(sw->route(world.node(i).lid()));
  }
  return out;
}

}  // namespace

TEST(RemoteDevices, RankZeroBuildsOnlyItsOwnDevicesAndRoutesThemAsOneProcess) {
  const Scenario sc = nicsim::testing::load_text(kTree);
  std::set<std::uint32_t> own_switches;
  std::vector<std::vector<std::uint32_t>> distributed;
  std::size_t own_nodes = 0, own_stats = 0;
  {
    Sim sim(sc.seed);
    RankZeroOfTwo transport;
    World world(sc, &transport);
    for (std::uint32_t i = 0; i < world.num_nodes(); ++i) {
      Node& node = world.node(i);
      ASSERT_EQ(node.runs_here(), world.runs_device(i)) << node.name();
      if (node.runs_here()) {
        ++own_nodes;
        EXPECT_NE(node.nic_as<fabric::RawNic>(), nullptr) << node.name();
        continue;
      }
      EXPECT_TRUE(node.nic().runs_elsewhere());
      EXPECT_NE(node.nic_as<fabric::RemoteDevice>(), nullptr) << node.name();
      EXPECT_EQ(node.nic().num_ports(), 1u);
      EXPECT_NE(node.lid(), 0u) << node.name() << " has its address";
      // A remote host's only link goes to a switch of its own rank.
      EXPECT_FALSE(node.nic().has_port(1)) << node.name();
      EXPECT_THROW(node.nic().port(1), std::logic_error);
      EXPECT_TRUE(world.fabric().wiring().peer(i, 1).wired()) << node.name() << " is wired";
      EXPECT_THROW(node.host(), std::logic_error);
      EXPECT_THROW(node.bus(), std::logic_error);
    }
    const auto n = static_cast<std::uint32_t>(world.num_nodes());
    for (std::uint32_t s = 0; s < world.num_switches(); ++s) {
      fabric::Device& d = world.switch_device(s);
      EXPECT_EQ(d.num_ports(), sc.switches[s].ports) << d.name();
      if (world.runs_device(n + s)) {
        ASSERT_NE(world.switch_as<fabric::Switch>(s), nullptr) << d.name();
        own_switches.insert(s);
      } else {
        EXPECT_NE(world.switch_as<fabric::RemoteDevice>(s), nullptr) << d.name();
      }
    }
    // A link is built where an end runs here; a remote device has a port
    // exactly where such a link reaches it.
    std::size_t built = 0, stand_ins = 0;
    for (std::uint32_t l = 0; l < sc.links.size(); ++l) {
      const auto [a, b] = world.link_ends(l);
      const bool here = world.runs_device(a) || world.runs_device(b);
      ASSERT_EQ(world.link(l) != nullptr, here) << sc.links[l].name;
      built += here;
      if (here && world.runs_device(a) != world.runs_device(b)) ++stand_ins;
    }
    EXPECT_EQ(world.fabric().links().size(), built);
    EXPECT_LT(built, sc.links.size());
    std::size_t remote_ports = 0;
    for (std::uint32_t d = 0; d < world.device_names().size(); ++d) {
      if (world.runs_device(d)) continue;
      fabric::Device& dev = d < n ? world.node(d).nic() : world.switch_device(d - n);
      for (std::uint32_t p = 1; p <= dev.num_ports(); ++p) {
        if (!dev.has_port(p)) continue;
        ++remote_ports;
        ASSERT_NE(dev.port(p).link(), nullptr) << dev.port(p).path();
        EXPECT_TRUE(dev.port(p).cut()) << dev.port(p).path();
      }
    }
    EXPECT_EQ(remote_ports, stand_ins);
    EXPECT_GT(stand_ins, 0u);
    // Each rank holds half the tree; no statistic names another rank's device.
    EXPECT_EQ(own_nodes, 32u);
    EXPECT_EQ(own_switches.size(), 24u);
    std::set<std::string> own_names;
    for (std::uint32_t d = 0; d < world.device_names().size(); ++d)
      if (world.runs_device(d)) own_names.insert(world.device_names()[d]);
    for (const auto& stat : sim.stats().scalars()) {
      EXPECT_TRUE(own_names.count(stat.object.substr(0, stat.object.find('.')))) << stat.object;
      ++own_stats;
    }
    distributed = tables(world, own_switches);
  }
  Sim sim(sc.seed);
  World whole(sc);
  EXPECT_EQ(tables(whole, own_switches), distributed);
  // One process registers both ranks' statistics, each rank half.
  EXPECT_EQ(sim.stats().scalars().size(), 2 * own_stats);
}
