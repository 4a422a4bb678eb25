// DAT sends and RDMA writes under link faults, short
// (scenarios/dapl_soak.textproto with a few thousand records instead of
// 10^6): bit errors on both EPs' host links and random flaps of the
// client's. The program checks every byte and accounts for every posted
// DTO's completion; here the counts must show DAT's promise kept, and the
// faults must have done something.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "sim/tests/scenario_soak.h"

using namespace nicsim;
using nicsim::testing::SoakOutcome;

namespace {

SoakOutcome soak(const std::vector<std::string>& extra, const std::vector<std::string>& args) {
  return nicsim::testing::run_soak({"dapl_soak.textproto", extra, "dapl_soak", args, {}});
}

void expect_promise_kept(const SoakOutcome& o) {
  EXPECT_EQ(o.get("dto_twice"), 0);
  EXPECT_EQ(o.get("dto_never"), 0);
  EXPECT_EQ(o.get("dto_completed"), o.get("dto_posted"));
  EXPECT_EQ(o.get("corrupted"), 0);
  EXPECT_EQ(o.get("duplicated"), 0);
  EXPECT_EQ(o.get("out_of_order"), 0);
  EXPECT_EQ(o.get("lost_unreported"), 0);
}

TEST(DaplSoak, BitErrorsAndFlapsCompleteEveryDtoOnceAndDeliverEveryRecord) {
  const SoakOutcome o = soak({}, {"--iters=4000"});
  EXPECT_TRUE(o.ok);
  EXPECT_EQ(o.get("sent"), 4000);
  EXPECT_EQ(o.get("delivered"), 4000);
  EXPECT_EQ(o.get("failed"), 0);
  EXPECT_EQ(o.get("failed_status"), 0);
  expect_promise_kept(o);
  EXPECT_GT(o.bit_errors, 20u);  // the faults were there
}

// Records up to 64 KiB: most writes and sends cross a lost packet or two.
// Before the HCA restarted its retry counter on forward progress, the
// connection failed with DAT_DTO_ERR_TRANSPORT after about 1,200 records.
TEST(DaplSoak, LargeRecordsOverBitErrorsCompleteEveryDtoOnceAndDeliverEveryRecord) {
  const SoakOutcome o = soak({}, {"--iters=2000", "--max-size=65536"});
  EXPECT_TRUE(o.ok);
  EXPECT_EQ(o.get("delivered"), 2000);
  EXPECT_EQ(o.get("failed"), 0);
  expect_promise_kept(o);
}

// The server's link down past RC's retry limit: the DTO that ran out of
// retries completes DAT_DTO_ERR_TRANSPORT, the ones behind it flushed,
// each once; the server's RECVs come back flushed when it disconnects.
TEST(DaplSoak, ALinkDownPastTheRetryLimitHandsEveryDtoBackOnce) {
  const SoakOutcome o = soak({R"(fault { at: "3ms" link: "h1--sw0" link_down: true })",
                              R"(fault { at: "900ms" link: "h1--sw0" link_up: true })"},
                             {"--iters=20000"});
  EXPECT_TRUE(o.ok);
  EXPECT_GT(o.get("failed"), 0);
  EXPECT_EQ(o.get("failed_status"), 8);  // DAT_DTO_ERR_TRANSPORT
  EXPECT_GT(o.get("flushed"), 0);
  EXPECT_GE(o.get("delivered") + o.get("failed") - o.get("delivered_after_failure"), o.get("sent"));
  expect_promise_kept(o);
}

}  // namespace
