// RC under link faults, short (scenarios/ib_rc_soak.textproto with 5,000
// messages instead of 10^6): bit errors on both host links and random flaps
// of one. The program checks every byte and accounts for every message;
// here the counts must show RC's promise kept, and the faults must have
// done something (corrupted packets dropped by the CRC check, retransmits,
// ports that went down and came back).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "sim/tests/scenario_soak.h"

using namespace nicsim;
using nicsim::testing::SoakOutcome;

namespace {

SoakOutcome soak(const std::vector<std::string>& extra, const std::vector<std::string>& args) {
  return nicsim::testing::run_soak({"ib_rc_soak.textproto", extra, "ib_rc_soak", args, {}});
}

TEST(RcSoak, BitErrorsAndFlapsDeliverEveryMessageOnceInOrder) {
  const SoakOutcome o = soak({}, {"--iters=5000"});
  EXPECT_TRUE(o.ok);
  EXPECT_EQ(o.get("sent"), 5000);
  EXPECT_EQ(o.get("delivered"), 5000);
  EXPECT_EQ(o.get("acked"), 5000);
  EXPECT_EQ(o.get("failed"), 0);
  EXPECT_EQ(o.get("corrupted"), 0);
  EXPECT_EQ(o.get("duplicated"), 0);
  EXPECT_EQ(o.get("out_of_order"), 0);
  EXPECT_EQ(o.get("lost_unreported"), 0);
  EXPECT_GT(o.bit_errors, 50u);  // the faults were there
}

// A link down for longer than seven retransmission timeouts: the sender
// hears of it (retry exceeded, then the flushes), nothing is lost unheard.
TEST(RcSoak, ALinkDownPastTheRetryLimitIsReportedNotLost) {
  const SoakOutcome o = soak({R"(fault { at: "2ms" link: "h0--sw0" link_down: true })",
                              R"(fault { at: "900ms" link: "h0--sw0" link_up: true })"},
                             {"--iters=5000"});
  EXPECT_GT(o.get("failed"), 0);
  EXPECT_LT(o.get("delivered"), 5000);
  EXPECT_EQ(o.get("delivered") + o.get("failed"), o.get("sent"));
  EXPECT_EQ(o.get("corrupted"), 0);
  EXPECT_EQ(o.get("duplicated"), 0);
  EXPECT_EQ(o.get("out_of_order"), 0);
  EXPECT_EQ(o.get("lost_unreported"), 0);
}

}  // namespace

namespace {

// 256 KiB RDMA reads over links with bit errors: a lost response makes the
// requester ask for the rest of the read from the missing response, once per
// gap; re-reading whole reads (or asking again for every response after the
// gap) left reads of this size unfinished until the retry limit.
TEST(RcSoak, LargeReadsOverBitErrorsResumeAtTheMissingResponse) {
  const std::string text = R"(
    name: "read_ber"
    seed: 1
    topology { star { hosts: 2 } nic: "hca" }
    link_defaults { bandwidth: "8Gbps" delay: "5ns" }
    fault { at: "0ns" link: "h0--sw0" bit_error_rate: "1e-6" }
    fault { at: "0ns" link: "h1--sw0" bit_error_rate: "1e-6" }
    workload { program: "ib_read_bw" nodes: "h0" nodes: "h1"
               args: "--sizes=262144" args: "--iters=40" args: "--tx-depth=4" args: "--timeout-ms=2000" })";
  std::uint64_t bit_errors = 0;
  nicsim::testing::RunOptions o;
  o.inspect = [&](World& w) { bit_errors = nicsim::testing::link_bit_errors(w); };
  const nicsim::testing::RunResult r = nicsim::testing::run_scenario(nicsim::testing::load_text(text), o);
  EXPECT_TRUE(r.ok);
  ASSERT_TRUE(r.results.count("bw_262144"));
  EXPECT_GT(r.results.at("bw_262144"), 0);
  EXPECT_GT(bit_errors, 20u);
}

}  // namespace

namespace {

// 256 KiB sends and RDMA writes over links with bit errors: most cross a
// lost packet or two, each fixed by a PSN-sequence NAK or an ACK timeout.
// An ACK or NAK that acknowledges new packets is forward progress and
// restarts the retry counter; counting every retry of a message's life
// against the 7 failed the connection with RetryExceeded on the first
// messages. (One scenario per test: a process runs one simulation.)
void expect_large_messages_complete(const std::string& program) {
  const std::string text = R"(
    name: "large_ber"
    seed: 1
    topology { star { hosts: 2 } nic: "hca" }
    link_defaults { bandwidth: "8Gbps" delay: "5ns" }
    fault { at: "0ns" link: "h0--sw0" bit_error_rate: "1e-6" }
    fault { at: "0ns" link: "h1--sw0" bit_error_rate: "1e-6" }
    workload { program: ")" +
                           program + R"(" nodes: "h0" nodes: "h1"
               args: "--sizes=262144" args: "--iters=40" args: "--tx-depth=4" args: "--timeout-ms=4000" })";
  std::uint64_t bit_errors = 0;
  nicsim::testing::RunOptions o;
  o.inspect = [&](World& w) { bit_errors = nicsim::testing::link_bit_errors(w); };
  const nicsim::testing::RunResult r = nicsim::testing::run_scenario(nicsim::testing::load_text(text), o);
  EXPECT_TRUE(r.ok);
  ASSERT_TRUE(r.results.count("bw_262144"));
  EXPECT_GT(r.results.at("bw_262144"), 0);
  EXPECT_GT(bit_errors, 20u);
}

TEST(RcSoak, LargeSendsOverBitErrorsRestartTheRetryCountOnProgress) { expect_large_messages_complete("ib_send_bw"); }

TEST(RcSoak, LargeWritesOverBitErrorsRestartTheRetryCountOnProgress) { expect_large_messages_complete("ib_write_bw"); }

}  // namespace

namespace {

// With a timeline, every verbs call is an instant on its thread's track of
// its node: the client's posts and polls are there, on h0's program thread.
TEST(VerbsTimeline, ApiCallsAreInstantsOnTheCallingThreadsTrack) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / "nicsim_api_timeline";
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "timeline.json").string();
  nicsim::testing::RunOptions o;
  o.timeline_path = path;
  nicsim::testing::run_scenario(nicsim::testing::load_text(R"(
    name: "api_timeline"
    topology { star { hosts: 2 } nic: "hca" }
    workload { program: "ib_send_lat" nodes: "h0" nodes: "h1" args: "--sizes=8" args: "--iters=5" }
    outputs { timeline: true })"),
                                o);
  std::ifstream f(path);
  const std::string json((std::istreambuf_iterator<char>(f)), {});
  const std::size_t track = json.find(R"("name":"thread_name","pid":0,)");
  ASSERT_NE(track, std::string::npos) << json.substr(0, 2000);
  EXPECT_NE(json.find(R"("args":{"name":"thread ib_send_lat[0]"})"), std::string::npos);
  EXPECT_NE(json.find(R"("name":"ci_post_send")"), std::string::npos);
  EXPECT_NE(json.find(R"("name":"ci_poll_cq")"), std::string::npos);
  EXPECT_NE(json.find(R"("name":"ci_open_ca")"), std::string::npos);
}

}  // namespace
