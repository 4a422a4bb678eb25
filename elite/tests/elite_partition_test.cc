// Partition blocks and the Elite fabric: Elan acknowledgements travel back
// along their route at once, so a cut through an Elan fabric is refused
// before the run, at the link (docs/partition.md).
#include <gtest/gtest.h>

#include <string>

#include "sim/tests/test_shell.h"

namespace {

TEST(ElitePartition, AFabricWithCarriedRepliesCannotBeCut) {
  const auto r = nicsim::testing::run_nicsim(std::string("run ") + NICSIM_SOURCE_DIR +
                                             "/scenarios/ep_small_lat.textproto --blocks=2");
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.out.find("ep_small_lat.textproto:"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("carries replies back along routes"), std::string::npos) << r.out;
}

}  // namespace
