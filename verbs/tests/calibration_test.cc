// Calibration against published InfiniHost PCI-X figures (see the README's
// calibration table for sources): the default infinihost-pcix profile, two
// nodes through one switch, measured by the perftest programs through the
// verbs. A model change that moves a figure out of its published range
// fails here.
#include <gtest/gtest.h>

#include "core/sim.h"
#include "world/programs.h"
#include "world/world.h"

using namespace nicsim;

namespace {

double figure(const std::string& scenario_file, const std::vector<std::string>& args, const std::string& name) {
  Scenario sc = load_scenario_file(std::string(NICSIM_SOURCE_DIR) + "/scenarios/" + scenario_file,
                                   [](std::string_view n) { return ProgramRegistry::instance().find(n) != nullptr; });
  for (auto& w : sc.workloads)
    for (const std::string& a : args) {
      const std::string key = a.substr(0, a.find('=') + 1);
      bool replaced = false;
      for (auto& x : w.args)
        if (x.rfind(key, 0) == 0) x = a, replaced = true;
      if (!replaced) w.args.push_back(a);
    }
  Sim sim(sc.seed);
  World world(sc);
  EXPECT_TRUE(world.run().ok);
  for (auto& p : world.programs())
    for (auto& r : p->results())
      if (r.name == name) {
        std::printf("%s %s = %.3f %s\n", scenario_file.c_str(), name.c_str(), r.value, r.unit.c_str());
        return r.value;
      }
  ADD_FAILURE() << "no result " << name;
  return 0;
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
