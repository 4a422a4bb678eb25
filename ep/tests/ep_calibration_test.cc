// Calibration of Elan Kernel Comms on the default elan3-qsnet profile: two
// nodes through one Elite switch, measured by the ep_small_lat and
// ep_large_bw programs (scenarios/ep_*.textproto). Published Elan3 figures
// (docs/ep.md): about 335 MB/s point to point, 308 MB/s at MPI level,
// user-level put latency under 2 us, MPI latency about 5 us. Kernel Comms
// bandwidth must sit with them and never above the 400 MB/s link or the
// 528 MB/s PCI bus; its latency, which takes an interrupt and a thread
// wake-up per message on each side, is above the user-level figure.
#include <gtest/gtest.h>

#include <cstdio>

#include "sim/tests/scenario_figures.h"

using namespace nicsim;

namespace {

double figure(const std::string& scenario_file, const std::vector<std::string>& args, const std::string& name) {
  return nicsim::testing::scenario_figure(scenario_file, args, name);
}

}  // namespace

TEST(EpCalibration, LargeMessageBandwidthWithinFivePercentOfThePublishedFigure) {
  const double mbs = figure("ep_large_bw.textproto", {"--sizes=65536", "--iters=128"}, "bw_65536");
  std::printf("ep 64 KiB stream: %.3f MB/s\n", mbs);
  EXPECT_GE(mbs, 335.0 * 0.95);  // about 335 MB/s published point to point (PCI read limited)
  EXPECT_LE(mbs, 335.0);         // and never above it, the 400 MB/s link or the 528 MB/s bus
}

// The 8-byte half round trip (interrupt path). The goal for this profile is
// at most 5.0 us (MPI over Elan3, which polls, about 4.6-5 us); the model
// is above it by the host's interrupt entry and the kernel software on both
// sides (docs/ep.md "Where the time goes"), so the figure is guarded where
// it is: a change that moves it shows here.
TEST(EpCalibration, SmallMessageLatencyGuarded) {
  const double us = figure("ep_small_lat.textproto", {"--sizes=8", "--iters=200"}, "lat_8");
  std::printf("ep 8-byte half round trip: %.5f us\n", us);
  EXPECT_GE(us, 2.0);  // the user-level put (< 2 us) needs no interrupt
  EXPECT_NEAR(us, 6.36222, 0.0005);
}

// An RPC's whole round trip (ep_rpc_lat): the request envelope, the
// server's wake-up, the datavec reply and the status block. No figure is
// published for Kernel Comms RPC: the empty call is guarded where it is,
// it costs more than a small-message round trip (an envelope and a status
// block instead of two small messages), and the reply's bytes cost at
// least their time on a 400 MB/s link.
TEST(EpCalibration, RpcRoundTripGuardedAndItsReplyNoFasterThanTheLink) {
  const auto r = nicsim::testing::scenario_results("ep_rpc_lat.textproto", {"--sizes=0,8192", "--iters=40"});
  ASSERT_TRUE(r.count("rpc_0") && r.count("rpc_8192"));
  std::printf("ep RPC round trip: %.5f us empty, %.5f us with 8 KiB back\n", r.at("rpc_0"), r.at("rpc_8192"));
  EXPECT_GT(r.at("rpc_0"), 2 * 6.36222);
  EXPECT_NEAR(r.at("rpc_0"), 16.26301, 0.0005);
  EXPECT_GE(r.at("rpc_8192") - r.at("rpc_0"), 8192 / 400e6 * 1e6);
}
