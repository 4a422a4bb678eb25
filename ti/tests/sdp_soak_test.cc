// SDP sockets under link faults, short (scenarios/sdp_soak.textproto with
// a few thousand records instead of 10^6): bit errors on both sockets'
// host links and random flaps of the writer's. The program checks every
// byte and accounts for every record; here the counts must show the
// stream's promise kept, and the faults must have done something.
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <map>
#include <string>
#include <vector>

#include "fabric/link.h"
#include "sim/tests/scenario_figures.h"
#include "world/world.h"

using namespace nicsim;

namespace {

struct SoakOutcome {
  std::map<std::string, double> results;
  std::uint64_t bit_errors = 0;
  bool ok = false;
};

SoakOutcome run_soak(const std::vector<std::string>& extra, const std::vector<std::string>& args) {
  std::string text;
  {
    std::ifstream f(std::string(NICSIM_SOURCE_DIR) + "/scenarios/sdp_soak.textproto");
    text.assign(std::istreambuf_iterator<char>(f), {});
  }
  for (const std::string& line : extra) text += line + "\n";
  Scenario sc = nicsim::testing::load_text(text, "sdp_soak.textproto");
  for (auto& w : sc.workloads)
    if (w.program == "sdp_soak") w.args = args;
  SoakOutcome out;
  nicsim::testing::RunOptions o;
  o.inspect = [&](World& w) {
    for (const auto& l : w.fabric().links()) out.bit_errors += l->a().stats().bit_errors + l->b().stats().bit_errors;
  };
  const nicsim::testing::RunResult r = nicsim::testing::run_scenario(sc, o);
  out.results = r.results;
  out.ok = r.ok;
  return out;
}

double get(const SoakOutcome& o, const std::string& name) {
  const auto it = o.results.find(name);
  EXPECT_NE(it, o.results.end()) << name;
  return it == o.results.end() ? -1 : it->second;
}

void expect_promise_kept(const SoakOutcome& o) {
  EXPECT_EQ(get(o, "corrupted"), 0);
  EXPECT_EQ(get(o, "duplicated"), 0);
  EXPECT_EQ(get(o, "out_of_order"), 0);
  EXPECT_EQ(get(o, "lost_unreported"), 0);
}

TEST(SdpSoak, BitErrorsAndFlapsDeliverEveryRecordOnceInOrder) {
  const SoakOutcome o = run_soak({}, {"--iters=3000"});
  EXPECT_TRUE(o.ok);
  EXPECT_EQ(get(o, "sent"), 3000);
  EXPECT_EQ(get(o, "delivered"), 3000);
  EXPECT_EQ(get(o, "failed"), 0);
  EXPECT_EQ(get(o, "failed_code"), 0);
  EXPECT_EQ(get(o, "zcopy_msgs"), 0);  // every record copied
  expect_promise_kept(o);
  EXPECT_GT(o.bit_errors, 20u);  // the faults were there
}

// Sends of 64 KiB and more move by zero-copy (SrcAvail and RDMA reads of
// the writer's buffer, or RDMA writes into the reader's SinkAvail).
TEST(SdpSoak, ZeroCopyBatchesOverBitErrorsDeliverEveryRecordOnceInOrder) {
  const SoakOutcome o = run_soak({}, {"--iters=1500", "--batch=131072", "--rbuf=100000"});
  EXPECT_TRUE(o.ok);
  EXPECT_GT(get(o, "zcopy_msgs"), 0);
  EXPECT_EQ(get(o, "delivered"), 1500);
  EXPECT_EQ(get(o, "failed"), 0);
  expect_promise_kept(o);
}

// The reader's link down past RC's retry limit: the writer hears of it
// (sdp_send or sdp_recv fails, sdp_error says ETIMEDOUT), and every record
// the reader never had is among the ones reported failed.
TEST(SdpSoak, ALinkDownPastTheRetryLimitIsReportedNotLost) {
  const SoakOutcome o = run_soak({R"(fault { at: "3ms" link: "h1--sw0" link_down: true })",
                                  R"(fault { at: "900ms" link: "h1--sw0" link_up: true })"},
                                 {"--iters=20000"});
  EXPECT_TRUE(o.ok);
  EXPECT_GT(get(o, "failed"), 0);
  EXPECT_EQ(get(o, "failed_code"), 110);  // SDP_ETIMEDOUT
  // The reader's stream failed too (its credit updates ran out of
  // retries): sdp_recv says so (-1, ETIMEDOUT) instead of ending the
  // stream as if the writer had closed it. Fails without that fix.
  EXPECT_EQ(get(o, "reader_truncated"), 0);
  EXPECT_EQ(get(o, "reader_failed_code"), 110);
  EXPECT_EQ(get(o, "delivered") + get(o, "failed"), get(o, "sent"));
  expect_promise_kept(o);
}

}  // namespace
