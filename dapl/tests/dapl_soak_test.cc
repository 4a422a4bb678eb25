// DAT sends and RDMA writes under link faults, short
// (scenarios/dapl_soak.textproto with a few thousand records instead of
// 10^6): bit errors on both EPs' host links and random flaps of the
// client's. The program checks every byte and accounts for every posted
// DTO's completion; here the counts must show DAT's promise kept, and the
// faults must have done something.
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
    std::ifstream f(std::string(NICSIM_SOURCE_DIR) + "/scenarios/dapl_soak.textproto");
    text.assign(std::istreambuf_iterator<char>(f), {});
  }
  for (const std::string& line : extra) text += line + "\n";
  Scenario sc = nicsim::testing::load_text(text, "dapl_soak.textproto");
  for (auto& w : sc.workloads)
    if (w.program == "dapl_soak") w.args = args;
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
  EXPECT_EQ(get(o, "dto_twice"), 0);
  EXPECT_EQ(get(o, "dto_never"), 0);
  EXPECT_EQ(get(o, "dto_completed"), get(o, "dto_posted"));
  EXPECT_EQ(get(o, "corrupted"), 0);
  EXPECT_EQ(get(o, "duplicated"), 0);
  EXPECT_EQ(get(o, "out_of_order"), 0);
  EXPECT_EQ(get(o, "lost_unreported"), 0);
}

TEST(DaplSoak, BitErrorsAndFlapsCompleteEveryDtoOnceAndDeliverEveryRecord) {
  const SoakOutcome o = run_soak({}, {"--iters=4000"});
  EXPECT_TRUE(o.ok);
  EXPECT_EQ(get(o, "sent"), 4000);
  EXPECT_EQ(get(o, "delivered"), 4000);
  EXPECT_EQ(get(o, "failed"), 0);
  EXPECT_EQ(get(o, "failed_status"), 0);
  expect_promise_kept(o);
  EXPECT_GT(o.bit_errors, 20u);  // the faults were there
}

// Records up to 64 KiB: most writes and sends cross a lost packet or two.
// Before the HCA restarted its retry counter on forward progress, the
// connection failed with DAT_DTO_ERR_TRANSPORT after about 1,200 records.
TEST(DaplSoak, LargeRecordsOverBitErrorsCompleteEveryDtoOnceAndDeliverEveryRecord) {
  const SoakOutcome o = run_soak({}, {"--iters=2000", "--max-size=65536"});
  EXPECT_TRUE(o.ok);
  EXPECT_EQ(get(o, "delivered"), 2000);
  EXPECT_EQ(get(o, "failed"), 0);
  expect_promise_kept(o);
}

// The server's link down past RC's retry limit: the DTO that ran out of
// retries completes DAT_DTO_ERR_TRANSPORT, the ones behind it flushed,
// each once; the server's RECVs come back flushed when it disconnects.
TEST(DaplSoak, ALinkDownPastTheRetryLimitHandsEveryDtoBackOnce) {
  const SoakOutcome o = run_soak({R"(fault { at: "3ms" link: "h1--sw0" link_down: true })",
                                  R"(fault { at: "900ms" link: "h1--sw0" link_up: true })"},
                                 {"--iters=20000"});
  EXPECT_TRUE(o.ok);
  EXPECT_GT(get(o, "failed"), 0);
  EXPECT_EQ(get(o, "failed_status"), 8);  // DAT_DTO_ERR_TRANSPORT
  EXPECT_GT(get(o, "flushed"), 0);
  EXPECT_GE(get(o, "delivered") + get(o, "failed") - get(o, "delivered_after_failure"), get(o, "sent"));
  expect_promise_kept(o);
}

}  // namespace
