// An InfiniBand run cut by the stop time with traffic in flight ends with
// nothing left (the sanitizer build's leak check is what proves it).
#include <gtest/gtest.h>

#include <string>

#include "sim/tests/test_shell.h"

namespace nicsim {
namespace {

using testing::run_cuts;

// Sends of 8 bytes complete every microsecond or so (a completion write on
// the bus at most cuts) from about 1.2 ms, after the subnet manager's sweep
// and the connection set-up; RDMA writes of 64 KiB fill the links.
TEST(WorldEnd, InfinibandRunsCutMidTransferEndWithNothingLeft) {
  const std::string topology = R"(topology { star { hosts: 2 } nic: "hca" })";
  run_cuts("ib_send", topology + R"(
    workload { program: "ib_send_bw" nodes: "h0" nodes: "h1" args: "--sizes=8" args: "--iters=100000" }
  )",
           {"1300us", "1307777ns", "1315554ns", "1323331ns"});
  run_cuts("ib_write", topology + R"(
    workload { program: "ib_write_bw" nodes: "h0" nodes: "h1"
               args: "--sizes=65536" args: "--iters=1000" args: "--tx-depth=64" }
  )",
           {"1500us", "1703us"});
}

}  // namespace
}  // namespace nicsim
