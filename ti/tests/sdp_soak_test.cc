// SDP sockets under link faults, short (scenarios/sdp_soak.textproto with
// a few thousand records instead of 10^6): bit errors on both sockets'
// host links and random flaps of the writer's. The program checks every
// byte and accounts for every record; here the counts must show the
// stream's promise kept, and the faults must have done something.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "sim/tests/scenario_soak.h"

using namespace nicsim;
using nicsim::testing::SoakOutcome;

namespace {

SoakOutcome soak(const std::vector<std::string>& extra, const std::vector<std::string>& args) {
  return nicsim::testing::run_soak({"sdp_soak.textproto", extra, "sdp_soak", args, {}});
}

void expect_promise_kept(const SoakOutcome& o) {
  EXPECT_EQ(o.get("corrupted"), 0);
  EXPECT_EQ(o.get("duplicated"), 0);
  EXPECT_EQ(o.get("out_of_order"), 0);
  EXPECT_EQ(o.get("lost_unreported"), 0);
}

TEST(SdpSoak, BitErrorsAndFlapsDeliverEveryRecordOnceInOrder) {
  const SoakOutcome o = soak({}, {"--iters=3000"});
  EXPECT_TRUE(o.ok);
  EXPECT_EQ(o.get("sent"), 3000);
  EXPECT_EQ(o.get("delivered"), 3000);
  EXPECT_EQ(o.get("failed"), 0);
  EXPECT_EQ(o.get("failed_code"), 0);
  EXPECT_EQ(o.get("zcopy_msgs"), 0);  // every record copied
  expect_promise_kept(o);
  EXPECT_GT(o.bit_errors, 20u);  // the faults were there
}

// Sends of 64 KiB and more move by zero-copy (SrcAvail and RDMA reads of
// the writer's buffer, or RDMA writes into the reader's SinkAvail).
TEST(SdpSoak, ZeroCopyBatchesOverBitErrorsDeliverEveryRecordOnceInOrder) {
  const SoakOutcome o = soak({}, {"--iters=1500", "--batch=131072", "--rbuf=100000"});
  EXPECT_TRUE(o.ok);
  EXPECT_GT(o.get("zcopy_msgs"), 0);
  EXPECT_EQ(o.get("delivered"), 1500);
  EXPECT_EQ(o.get("failed"), 0);
  expect_promise_kept(o);
}

// The reader's link down past RC's retry limit: the writer hears of it
// (sdp_send or sdp_recv fails, sdp_error says ETIMEDOUT), and every record
// the reader never had is among the ones reported failed.
TEST(SdpSoak, ALinkDownPastTheRetryLimitIsReportedNotLost) {
  const SoakOutcome o = soak({R"(fault { at: "3ms" link: "h1--sw0" link_down: true })",
                              R"(fault { at: "900ms" link: "h1--sw0" link_up: true })"},
                             {"--iters=20000"});
  EXPECT_TRUE(o.ok);
  EXPECT_GT(o.get("failed"), 0);
  EXPECT_EQ(o.get("failed_code"), 110);  // SDP_ETIMEDOUT
  // The reader's stream failed too (its credit updates ran out of
  // retries): sdp_recv says so (-1, ETIMEDOUT) instead of ending the
  // stream as if the writer had closed it. Fails without that fix.
  EXPECT_EQ(o.get("reader_truncated"), 0);
  EXPECT_EQ(o.get("reader_failed_code"), 110);
  EXPECT_EQ(o.get("delivered") + o.get("failed"), o.get("sent"));
  expect_promise_kept(o);
}

}  // namespace
