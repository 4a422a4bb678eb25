// Saturation throughput of one IB switch under uniform random traffic, set
// against the theory of input queueing (Karol, Hluchyj and Morgan 1987):
// with FIFO inputs that always hold a packet, each for a uniformly random
// output, the head-of-line packets block the ones behind them and an N x N
// switch carries 2 - sqrt(2) = 58.6% per port as N grows, more for small N
// (N = 2: 75%, N = 4: 65.5%, N = 8: 61.8%). Here every host sends to the
// N - 1 others (never itself), which a slotted model of the same switch
// (below) puts a little higher for small N: 62.6% for N = 8. The simulated
// switch, with fixed 2 KiB packets, credit flow control and 8 KiB per VL of
// input buffer, must land within a few points of it on one VL; spreading
// the destinations over more VLs (each its own input FIFO and credits)
// must raise it.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <vector>

#include "core/rng.h"
#include "fabric/raw_nic.h"
#include "sim/tests/world_run.h"

using namespace nicsim;

namespace {

// The slotted model: every slot each output serves one of the head-of-line
// packets for it (chosen at random; the throughput does not depend on the
// choice), and each input served draws a new head for the next slot.
// Returns the served packets per port per slot.
double slotted_saturation(std::uint32_t n, bool to_self, std::uint64_t slots) {
  Rng rng(1, "slotted");
  auto draw = [&](std::uint32_t input) {
    std::uint32_t d;
    do d = static_cast<std::uint32_t>(rng.below(n));
    while (!to_self && d == input);
    return d;
  };
  std::vector<std::uint32_t> head(n), next(n), waiting;
  for (std::uint32_t i = 0; i < n; ++i) head[i] = draw(i);
  std::uint64_t served = 0;
  for (std::uint64_t t = 0; t < slots; ++t) {
    next = head;
    for (std::uint32_t out = 0; out < n; ++out) {
      waiting.clear();
      for (std::uint32_t i = 0; i < n; ++i)
        if (head[i] == out) waiting.push_back(i);
      if (waiting.empty()) continue;
      const std::uint32_t won = waiting[rng.below(waiting.size())];
      next[won] = draw(won);
      ++served;
    }
    head.swap(next);
  }
  return static_cast<double>(served) / static_cast<double>(slots * n);
}

// Uniform random 2 KiB packets offered at the full link rate by 8 hosts on
// one switch, over `vls` data VLs chosen by destination (LID modulo vls):
// the bytes accepted after a 200 us warm-up until the 2 ms stop, summed
// over the hosts. (A SystemC kernel runs once per process: one run per test.)
constexpr std::uint32_t kHosts = 8;
std::uint64_t accepted_bytes(std::uint32_t vls) {
  const std::string text =
      "topology { star { hosts: " + std::to_string(kHosts) +
      " } host_prefix: \"h\" nic: \"raw\" }\n"
      "link_defaults { bandwidth: \"8Gbps\" delay: \"5ns\" param { key: \"vls\" value: \"" +
      std::to_string(vls) +
      "\" } }\n"
      "workload { program: \"fabric_traffic\" nodes: \"h*\" args: \"--pattern=uniform\" args: \"--size=2KiB\" "
      "args: \"--load=1\" args: \"--duration=2ms\" args: \"--warmup=200us\" args: \"--drain=10us\" "
      "args: \"--vls=" +
      std::to_string(vls) + "\" }\n";
  std::uint64_t accepted = 0;
  nicsim::testing::RunOptions o;
  o.inspect = [&](World& world) {
    for (std::uint32_t i = 0; i < world.num_nodes(); ++i)
      accepted += world.node(i).nic_as<fabric::RawNic>()->stats().accepted_bytes;
  };
  nicsim::testing::run_text(text, o);
  return accepted;
}

// Per port, as a share of the 8 Gb/s link over the 1.8 ms window.
double per_port(std::uint64_t bytes) { return static_cast<double>(bytes) * 8 / (8e9 * 1.8e-3 * kHosts); }

// The figures of the runs below, exact (deterministic): each test checks
// its own, and that it exceeds the one with fewer VLs.
constexpr std::uint64_t kOneVl = 9105408, kTwoVls = 11466752, kFourVls = 13383680, kEightVls = 14090240;

}  // namespace

TEST(IbSaturation, SlottedModelGivesKarolsFigures) {
  const double two = slotted_saturation(2, true, 100000), four = slotted_saturation(4, true, 100000),
               eight = slotted_saturation(8, true, 100000), eight_not_self = slotted_saturation(8, false, 100000);
  std::printf("slotted model: N = 2: %.4f, 4: %.4f, 8: %.4f; 8 never to itself: %.4f\n", two, four, eight,
              eight_not_self);
  EXPECT_NEAR(two, 0.75, 0.005);
  EXPECT_NEAR(four, 0.6553, 0.005);
  EXPECT_NEAR(eight, 0.6184, 0.005);
  EXPECT_NEAR(eight_not_self, 0.626, 0.005);
}

TEST(IbSaturation, OneVlSaturatesWithinThreePointsOfTheHeadOfLineLimit) {
  const std::uint64_t bytes = accepted_bytes(1);
  const double theory = slotted_saturation(kHosts, false, 100000);
  std::printf("8 hosts, 1 VL: %.4f per port (slotted model %.4f)\n", per_port(bytes), theory);
  EXPECT_EQ(bytes, kOneVl);
  EXPECT_NEAR(per_port(bytes), theory, 0.03);
}

TEST(IbSaturation, TwoVlsCarryMoreThanOne) {
  const std::uint64_t bytes = accepted_bytes(2);
  std::printf("8 hosts, 2 VLs: %.4f per port\n", per_port(bytes));
  EXPECT_EQ(bytes, kTwoVls);
  EXPECT_GT(per_port(bytes), per_port(kOneVl) + 0.1);
}

TEST(IbSaturation, FourVlsCarryMoreThanTwo) {
  const std::uint64_t bytes = accepted_bytes(4);
  std::printf("8 hosts, 4 VLs: %.4f per port\n", per_port(bytes));
  EXPECT_EQ(bytes, kFourVls);
  EXPECT_GT(per_port(bytes), per_port(kTwoVls) + 0.05);
}

TEST(IbSaturation, EightVlsCarryMoreThanFour) {
  const std::uint64_t bytes = accepted_bytes(8);
  std::printf("8 hosts, 8 VLs: %.4f per port\n", per_port(bytes));
  EXPECT_EQ(bytes, kEightVls);
  EXPECT_GT(per_port(bytes), per_port(kFourVls) + 0.02);
}

// Spreading over more VLs than the link has, an unknown spread and a
// warm-up as long as the run are refused, each naming its arguments.
TEST(IbSaturation, BadSpreadArgumentsAreRefused) {
  nicsim::testing::RunOptions o;
  o.expect_programs_ok = false;
  o.expect_clean = false;
  std::vector<std::string> failures;
  o.inspect = [&](World& world) {
    for (const auto& p : world.programs()) failures.push_back(p->failure());
  };
  const auto r = nicsim::testing::run_text(
      "topology { star { hosts: 3 } host_prefix: \"h\" nic: \"raw\" }\n"
      "workload { program: \"fabric_traffic\" nodes: \"h0\" args: \"--vl=1\" args: \"--vls=2\" }\n"
      "workload { program: \"fabric_traffic\" nodes: \"h1\" args: \"--spread=sl\" }\n"
      "workload { program: \"fabric_traffic\" nodes: \"h2\" args: \"--warmup=1ms\" args: \"--duration=1ms\" }\n",
      o);
  EXPECT_EQ(r.exit_codes, (std::vector<int>{2, 2, 2}));
  ASSERT_EQ(failures.size(), 3u);
  EXPECT_NE(failures[0].find("--vl=1 --vls=2: the link has 1 VL(s)"), std::string::npos) << failures[0];
  EXPECT_NE(failures[1].find("--spread=sl: use destination or random"), std::string::npos) << failures[1];
  EXPECT_NE(failures[2].find("--warmup=1ms: must be shorter than --duration=1ms"), std::string::npos) << failures[2];
}
