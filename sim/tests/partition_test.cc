// Partition blocks: the plan (pods on a fat tree, pins, balance, cut links
// and lookahead, bad input), the calendar's order by block, and runs whose
// links are cut: the same simulated figures as uncut, deterministic traces.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/sim.h"
#include "world/partition.h"
#include "world/programs.h"
#include "world/world.h"
#include "test_shell.h"
#include "world_run.h"

using namespace nicsim;

namespace {

const char* kFatTree = R"(
  topology { fat_tree { k: 2 n: 3 } }
  workload { program: "fabric_traffic" nodes: "*"
             args: "--pattern=uniform" args: "--size=1KiB" args: "--load=0.3" args: "--duration=50us" }
)";

Scenario with_blocks(const std::string& text, std::uint32_t blocks) {
  Scenario sc = nicsim::testing::load_text(text);
  sc.partition.blocks = blocks;
  return sc;
}

std::uint32_t device(const Scenario& sc, const std::string& name) {
  if (auto n = sc.node_index(name)) return *n;
  return static_cast<std::uint32_t>(sc.nodes.size()) + *sc.switch_index(name);
}

TEST(Partition, OneBlockIsTheDefaultAndCutsNothing) {
  const PartitionPlan plan = plan_partition(nicsim::testing::load_text(kFatTree));
  EXPECT_EQ(plan.blocks, 1u);
  EXPECT_TRUE(plan.cut_links.empty());
  EXPECT_EQ(plan.lookahead, kTickMax);
  EXPECT_EQ(describe(plan), "1 block");
}

TEST(Partition, FatTreeBlocksKeepHostsWithTheirLeafAndBalanceTheLoad) {
  const Scenario sc = with_blocks(kFatTree, 4);
  const PartitionPlan plan = plan_partition(sc);
  ASSERT_EQ(plan.device_block.size(), 20u);
  std::vector<int> hosts_in(4, 0);
  for (const LinkSpec& l : sc.links) {
    if (l.a.kind != LinkEnd::Kind::Node) continue;
    const std::uint32_t leaf = static_cast<std::uint32_t>(sc.nodes.size()) + l.b.index;
    EXPECT_EQ(plan.device_block[l.a.index], plan.device_block[leaf]) << l.name << " is cut";
    ++hosts_in[plan.device_block[l.a.index]];
  }
  for (int n : hosts_in) EXPECT_EQ(n, 2);
  EXPECT_LT(plan.imbalance(), 1.25);
  EXPECT_FALSE(plan.cut_links.empty());
  EXPECT_EQ(plan.lookahead, 5 * kNs);  // the default link delay
  auto end_device = [&](const LinkEnd& e) {
    return e.kind == LinkEnd::Kind::Node ? e.index : static_cast<std::uint32_t>(sc.nodes.size()) + e.index;
  };
  std::size_t cut = 0;
  for (std::uint32_t i = 0; i < sc.links.size(); ++i) {
    const bool apart = plan.device_block[end_device(sc.links[i].a)] != plan.device_block[end_device(sc.links[i].b)];
    cut += apart;
    EXPECT_EQ(apart, std::count(plan.cut_links.begin(), plan.cut_links.end(), i) == 1) << sc.links[i].name;
  }
  EXPECT_EQ(cut, plan.cut_links.size());
}

// A 4-ary 3-tree (64 hosts, 16 leaves, 16 middle and 16 top switches):
// the blocks take the hosts in whole subtrees, and the switches follow
// them level by level, so with 2 or 4 blocks the blocks hold equal hosts
// and switches and only links to the top are cut; with 3, 5 or 7 they
// hold equal hosts (to one) and no block's load is above the mean by more
// than a switch's (9 of the tree's 560).
TEST(Partition, FatTreeBlocksHoldEqualSubtreesAndShareTheTop) {
  for (std::uint32_t blocks : {2u, 3u, 4u, 5u, 7u}) {
    const Scenario sc = with_blocks(R"(topology { fat_tree { k: 4 n: 3 } })", blocks);
    const PartitionPlan plan = plan_partition(sc);
    std::vector<int> hosts(blocks), switches(blocks);
    for (std::uint32_t d = 0; d < plan.device_block.size(); ++d) {
      ASSERT_LT(plan.device_block[d], blocks) << "device " << d << " unplaced";
      ++(d < sc.nodes.size() ? hosts : switches)[plan.device_block[d]];
    }
    const auto [fewest, most] = std::minmax_element(hosts.begin(), hosts.end());
    EXPECT_LE(*most - *fewest, 1) << blocks << " blocks";
    if (64 % blocks == 0) {
      for (std::uint32_t b = 0; b < blocks; ++b)
        EXPECT_EQ(switches[b], 48 / static_cast<int>(blocks)) << blocks << " blocks, block " << b;
      EXPECT_DOUBLE_EQ(plan.imbalance(), 1.0);
      // Each top switch links to one middle switch of each 16-host subtree.
      EXPECT_EQ(plan.cut_links.size(), 16u * (4 - 4 / blocks)) << blocks << " blocks";
    } else {
      EXPECT_LE(plan.imbalance(), 1.0 + 9.0 * blocks / 560.0) << blocks << " blocks";
    }
  }
}

TEST(Partition, PinnedDevicesStayWhereTheyArePinned) {
  const Scenario sc = nicsim::testing::load_text(std::string(kFatTree) + R"(
    partition { blocks: 3 pin { device: "h7" block: 0 } pin { device: "h0" block: 2 } }
  )");
  const PartitionPlan plan = plan_partition(sc);
  EXPECT_EQ(plan.device_block[device(sc, "h7")], 0u);
  EXPECT_EQ(plan.device_block[device(sc, "h0")], 2u);
  for (std::uint32_t b : plan.device_block) EXPECT_LT(b, 3u);
}

TEST(Partition, ACutLinkWithoutDelayIsAScenarioErrorAtTheLink) {
  const Scenario sc = nicsim::testing::load_text(R"(
    node { name: "a" nic: "raw" }
    node { name: "b" nic: "raw" }
    link { a: "a:1" b: "b:1" param { key: "delay" value: "0ns" } }
    partition { blocks: 2 }
  )");
  try {
    plan_partition(sc);
    FAIL() << "no error";
  } catch (const ScenarioError& e) {
    EXPECT_NE(std::string(e.what()).find("test.textproto:4:"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("no propagation delay"), std::string::npos) << e.what();
  }
}

TEST(Partition, BadPartitionFieldsAreNamedWithTheirLocation) {
  const std::pair<const char*, const char*> cases[] = {
      {"partition { blocks: 5000 }", "over 4095"},
      {"partition { blocks: 2 pin { device: \"nope\" block: 0 } }", "pin device 'nope' is no node or switch"},
      {"partition { blocks: 2 pin { device: \"h0\" block: 2 } }", "pin block 2 is not below partition.blocks (2)"},
      {"partition { blocks: 2 pin { device: \"h0\" block: 0 } pin { device: \"h0\" block: 1 } }", "pinned twice"},
      {"partition { weight { device: \"h*\" weight: 0 } }", "must be a positive number"},
      {"partition { weight { device: \"x*\" weight: 2 } }", "matches no node or switch"},
  };
  for (const auto& [text, why] : cases) {
    try {
      nicsim::testing::load_text(std::string(kFatTree) + text);
      ADD_FAILURE() << "accepted: " << text;
    } catch (const ScenarioError& e) {
      EXPECT_NE(std::string(e.what()).find(why), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("test.textproto:"), std::string::npos) << e.what();
    }
  }
}

// Same-time events fire by block, then by each block's own count, whatever
// order they were scheduled in; an event handed to another block runs as it.
TEST(Partition, SameTimeEventsFireByBlockThenByTheBlocksOwnOrder) {
  Sim sim(1);
  Calendar& c = sim.calendar();
  c.set_blocks(3);
  std::vector<std::pair<int, std::uint32_t>> fired;  // (tag, block it ran as)
  struct Ctx {
    std::vector<std::pair<int, std::uint32_t>>* out;
    Calendar* c;
  } ctx{&fired, &c};
  auto record = [](void* p, std::uint64_t tag) {
    auto* x = static_cast<Ctx*>(p);
    x->out->push_back({static_cast<int>(tag), x->c->current_block()});
  };
  {
    Calendar::BlockScope as2(c, 2);
    c.at(100, record, &ctx, 20);
    c.at(100, record, &ctx, 21);
  }
  {
    Calendar::BlockScope as1(c, 1);
    c.at(100, record, &ctx, 10);
    c.at_on(2, 100, record, &ctx, 11);  // placed as block 1, runs as block 2
  }
  c.at(100, record, &ctx, 30);  // the world's block (3)
  sc_core::sc_start();
  const std::vector<std::pair<int, std::uint32_t>> want = {{10, 1}, {11, 2}, {20, 2}, {21, 2}, {30, 3}};
  EXPECT_EQ(fired, want);
}

// The first line where two outputs differ, or "" when they are the same:
// a failure shows where, not both files.
std::string first_difference(const std::string& a, const std::string& b) {
  std::istringstream sa(a), sb(b);
  std::string la, lb;
  for (int line = 1;; ++line) {
    const bool ga = static_cast<bool>(std::getline(sa, la)), gb = static_cast<bool>(std::getline(sb, lb));
    if (!ga && !gb) return "";
    if (ga != gb || la != lb) return fmt::format("line {}: '{}' vs '{}'", line, la, lb);
  }
}

// Runs `text` with the nicsim command and --blocks=`blocks`; returns the
// output folder `name` in this test's scratch folder (the scenario file is
// the same for every run, as results.json names it).
std::filesystem::path run_blocks(const std::filesystem::path& dir, const std::string& name, const std::string& text,
                                 std::uint32_t blocks) {
  std::ofstream(dir / "scenario.textproto") << text;
  const auto r = nicsim::testing::run_nicsim(
      fmt::format("run {} --blocks={} --out={}", (dir / "scenario.textproto").string(), blocks, (dir / name).string()));
  EXPECT_EQ(r.exit_code, 0) << r.out;
  return dir / name;
}

// Cutting links delays nothing: credits cross as events at the time the
// sender would have had them. Where no two packets meet at the same
// picosecond (so the order of same-time events, which blocks change, does
// not matter) every figure is unchanged.
TEST(Partition, CuttingEveryLinkChangesNoSimulatedFigure) {
  const auto dir = nicsim::testing::temp_dir("partition_cut");
  const auto whole = run_blocks(dir, "whole", kFatTree, 1);
  // Every device pinned to a block of its own: every link is cut.
  const Scenario sc = nicsim::testing::load_text(kFatTree);
  std::string pins;
  std::uint32_t block = 0;
  for (const NodeSpec& n : sc.nodes) pins += fmt::format("pin {{ device: \"{}\" block: {} }}\n", n.name, block++);
  for (const SwitchSpec& w : sc.switches) pins += fmt::format("pin {{ device: \"{}\" block: {} }}\n", w.name, block++);
  const auto apart = run_blocks(dir, "apart", std::string(kFatTree) + "partition { blocks: 20 " + pins + "}", 20);
  // Only the count of calendar events differs (each credit over a cut link
  // is an event of its own, and threads never run ahead), and the cut run
  // reports its partition.
  auto events = [](std::string& results) {
    const std::size_t at = results.find("\n \"events\": \"");
    const std::size_t end = results.find('\n', at + 1);
    const long n = std::stol(results.substr(at + 13, end - at - 15));
    results.erase(at, end - at);
    return n;
  };
  auto cut = [](std::string& text, const std::string& from, const std::string& to) {
    const std::size_t at = text.find(from);
    if (at == std::string::npos) return std::string();
    const std::size_t end = text.find(to, at + from.size()) + to.size();
    std::string what = text.substr(at, end - at);
    text.erase(at, end - at);
    return what;
  };
  // A run split into blocks ends at the first whole microsecond after its
  // programs, when nothing is in flight (docs/partition.md), so its end time
  // and the utilisations over it differ.
  auto end_time = [](const std::string& results) {
    const std::size_t at = results.find("\"sim_time_ps\": \"");
    return std::stoull(results.substr(at + 16));
  };
  auto without_run_length = [](const std::string& text) {
    std::istringstream in(text);
    std::string out, line;
    while (std::getline(in, line))
      if (line.find("sim_time_ps") == std::string::npos && line.find("utilisation") == std::string::npos &&
          line.find("simulated") == std::string::npos && line.find('%') == std::string::npos)
        out += line + "\n";
    return out;
  };
  std::string a = nicsim::testing::slurp(whole / "results.json"), b = nicsim::testing::slurp(apart / "results.json");
  EXPECT_EQ(end_time(b), (end_time(a) + kUs - 1) / kUs * kUs);
  a = without_run_length(a);
  b = without_run_length(b);
  EXPECT_LT(events(a), events(b));
  EXPECT_EQ(cut(a, ",\n \"partition\": {", "\n }"), "");
  EXPECT_NE(cut(b, ",\n \"partition\": {", "\n }").find("\"blocks\": 20"), std::string::npos);
  EXPECT_GT(a.size(), 1000u);
  EXPECT_EQ(first_difference(a, b), "");
  std::string sa = without_run_length(nicsim::testing::slurp(whole / "summary.txt"));
  std::string sb = without_run_length(nicsim::testing::slurp(apart / "summary.txt"));
  EXPECT_EQ(sc.links.size(), 24u);
  EXPECT_EQ(cut(sb, "partition: ", "\n"), "partition: 20 blocks, 24 cut links, lookahead 5ns, imbalance 1.47\n");
  EXPECT_EQ(first_difference(sa, sb), "");
}

TEST(Partition, SameBlocksAndSeedGiveTheSameTrace) {
  const std::string text = std::string(kFatTree) + R"(outputs { trace { device: "*" } timeline: true })";
  const auto dir = nicsim::testing::temp_dir("partition_same");
  const auto first = run_blocks(dir, "first", text, 4);
  const auto second = run_blocks(dir, "second", text, 4);
  for (const char* f : {"trace.jsonl", "timeline.json", "results.json"}) {
    const std::string a = nicsim::testing::slurp(first / f);
    EXPECT_GT(a.size(), 1000u) << f;
    EXPECT_EQ(first_difference(a, nicsim::testing::slurp(second / f)), "") << f;
  }
}

}  // namespace

namespace {
// Rank 0 of two, with the other rank's part known in advance: gather hands
// back this rank's piece and the other's next piece, as MPI would.
class TwoRanksAtRankZero final : public RankTransport {
 public:
  TwoRanksAtRankZero(std::string other, std::uint64_t piece) : other_(std::move(other)), piece_(piece) {}
  int rank() const override { return 0; }
  int ranks() const override { return 2; }
  std::vector<std::vector<std::uint8_t>> exchange(const std::vector<std::vector<std::uint8_t>>&, std::uint64_t*,
                                                  int) override {
    throw std::logic_error("not in this test");
  }
  void all_reduce(std::uint64_t* values, int count, Op op) override {
    ASSERT_EQ(count, 1);
    ASSERT_EQ(op, Op::Max);
    values[0] = std::max<std::uint64_t>(values[0], (other_.size() + piece_ - 1) / piece_);
  }
  std::vector<std::string> gather(const std::string& mine) override {
    EXPECT_LE(mine.size(), piece_);
    const std::uint64_t at = std::min<std::uint64_t>(gathers_++ * piece_, other_.size());
    return {mine, other_.substr(at, piece_)};
  }
  [[noreturn]] void abort(int) override { std::abort(); }
  int gathers_ = 0;

 private:
  std::string other_;
  std::uint64_t piece_;
};
}  // namespace

// Held outputs larger than one gather carries go in pieces, as many rounds
// as the largest part needs, and each part arrives whole.
TEST(GatherInPieces, EachRanksPartArrivesWholeWhateverItsSize) {
  std::string mine(1000, 'a'), other(2500, 'b');
  for (std::size_t i = 0; i < other.size(); ++i) other[i] = static_cast<char>('a' + i % 26);
  TwoRanksAtRankZero t(other, 300);
  const std::vector<std::string> parts = gather_in_pieces(t, mine, 300);
  EXPECT_EQ(t.gathers_, 9);
  ASSERT_EQ(parts.size(), 2u);
  EXPECT_EQ(parts[0], mine);
  EXPECT_EQ(parts[1], other);
  TwoRanksAtRankZero small("xyz", 300);
  const std::vector<std::string> one = gather_in_pieces(small, "ab", 300);
  EXPECT_EQ(small.gathers_, 1);
  EXPECT_EQ(one, (std::vector<std::string>{"ab", "xyz"}));
}

// What a process keeps of links it does not build: who is wired to whom.
TEST(Wiring, NamesEachEndsPeerAndNothingForAnUnwiredPort) {
  fabric::Wiring w;
  w.connect({3, 2}, {7, 1});
  w.connect({0, 1}, {3, 4});
  EXPECT_EQ(w.peer(3, 2).device, 7u);
  EXPECT_EQ(w.peer(3, 2).port, 1u);
  EXPECT_EQ(w.peer(7, 1).device, 3u);
  EXPECT_EQ(w.peer(7, 1).port, 2u);
  EXPECT_EQ(w.peer(3, 4).device, 0u);
  EXPECT_EQ(w.peer(0, 1).port, 4u);
  EXPECT_FALSE(w.peer(3, 3).wired());  // between two wired ports of the device
  EXPECT_FALSE(w.peer(3, 5).wired());  // past its last wired port
  EXPECT_FALSE(w.peer(9, 1).wired());  // a device it never heard of
  EXPECT_FALSE(w.peer(3, 0).wired());  // port 0 does not exist
}

// A route entry for a port of another process keeps the port's identity
// and is told apart from any Port's address.
TEST(RouteMarks, KeepThePortsIdentityAndAreNoPortsAddress) {
  for (const auto [device, port] :
       {std::pair<std::uint32_t, std::uint32_t>{0, 1}, {45055, 36}, {(1u << 31) - 1, 255}}) {
    const fabric::Port* mark = fabric::route_mark(device, port);
    EXPECT_TRUE(fabric::is_route_mark(mark));
    EXPECT_EQ(fabric::route_mark_device(mark), device);
    EXPECT_EQ(fabric::route_mark_port(mark), port);
  }
  const Scenario sc = nicsim::testing::load_text("topology { fat_tree { k: 2 n: 2 } }\n");
  Sim sim(sc.seed);
  World world(sc);
  for (auto& l : world.fabric().links())
    for (const fabric::Port* p : {&l->a(), &l->b()}) EXPECT_FALSE(fabric::is_route_mark(p)) << p->path();
}
