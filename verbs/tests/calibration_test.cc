// Calibration against published InfiniHost PCI-X figures (see the
// calibration table in docs/infiniband.md for sources): the default
// infinihost-pcix profile, two nodes through one switch, measured by the
// perftest programs through the verbs. A model change that moves a figure
// out of its published range fails here.
#include <gtest/gtest.h>

#include "sim/tests/scenario_figures.h"

using namespace nicsim;

namespace {

double figure(const std::string& scenario_file, const std::vector<std::string>& args, const std::string& name) {
  return nicsim::testing::scenario_figure(scenario_file, args, name);
}

TEST(Calibration, SmallMessageSendLatencyAtTheVerbs) {
  const double us = figure("ib_send_lat.textproto", {"--sizes=2", "--iters=200"}, "lat_2_typical");
  EXPECT_GE(us, 4.5);
  EXPECT_LE(us, 6.5);
}

TEST(Calibration, LargeMessageUnidirectionalBandwidth) {
  const double mbs = figure("ib_write_bw.textproto", {"--sizes=65536", "--iters=300"}, "bw_65536");
  EXPECT_GE(mbs, 780);
  EXPECT_LE(mbs, 860);
}

TEST(Calibration, BidirectionalBandwidthStaysUnderTheBus) {
  const double mbs =
      figure("ib_write_bw.textproto", {"--sizes=65536", "--iters=300", "--bidirectional"}, "bw_65536_total");
  // Published about 950 MB/s in total; both directions share each node's
  // PCI-X bus (1064 MB/s peak), which no figure may exceed.
  EXPECT_GE(mbs, 850);
  EXPECT_LE(mbs, 1064);
}

}  // namespace
