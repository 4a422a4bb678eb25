// Two-sided tests of the CM and the CMA: real client and server nodes over
// the simulated fabric, the SA on the subnet manager's node, payload and
// private data bytes checked end to end by the cma_pingpong program.
#include <rdma/ib_verbs.h>

#include <string>

#include "cm/core/cm_node.h"
#include "cm/kverbs/kverbs.h"
#include "tests/test_shell.h"
#include "tests/world_run.h"
#include "world/node.h"

namespace nicsim::cm {
namespace {

using testing::run_text;
using testing::RunOptions;

// h0 runs the SA (and the subnet manager); h1 listens; h2.. connect.
std::string scenario(int hosts, const std::string& pp_nodes, const std::string& args, const std::string& extra = "") {
  return "seed: 1\ntopology { star { hosts: " + std::to_string(hosts) +
         " } nic: \"hca\" }\n"
         "link_defaults { bandwidth: \"8Gbps\" delay: \"5ns\" }\n"
         "workload { program: \"ib_sa\" nodes: \"h0\" }\n"
         "workload { program: \"cma_pingpong\" " +
         pp_nodes + args + " }\n" + extra;
}

std::string args(std::initializer_list<const char*> list) {
  std::string s;
  for (const char* a : list) s += std::string(" args: \"") + a + "\"";
  return s;
}

CmCounters counters_of(World& w, const std::string& node) {
  for (std::uint32_t i = 0; i < w.num_nodes(); ++i)
    if (w.node(i).name() == node)
      if (CmNode* n = node_cm_if_started(w.node(i).host())) return n->counters();
  ADD_FAILURE() << node << " has no CM";
  return {};
}

TEST(Cma, ConnectAcceptWithPrivateDataBothWaysAndSourceIp) {
  const auto r = run_text(scenario(3, "nodes: \"h1\" nodes: \"h2\"", args({"--cycles=2", "--rarp", "--bytes=4096"})));
  EXPECT_EQ(r.results.at("cycles_ok"), 2);
  EXPECT_EQ(r.results.at("rarp_ok"), 1);
  EXPECT_GT(r.results.at("connect_ns"), 0);
}

TEST(Cma, RejectCarriesPrivateData) {
  const auto r = run_text(scenario(3, "nodes: \"h1\" nodes: \"h2\"", args({"--reject", "--cycles=2"})));
  EXPECT_EQ(r.results.at("cycles_ok"), 2);
}

TEST(Cma, NoListenerOnTheServiceIdIsRejected) {
  RunOptions o;
  o.inspect = [](World& w) {
    EXPECT_EQ(counters_of(w, "h1").live_conns, 0u);
    EXPECT_EQ(counters_of(w, "h2").live_conns, 0u);
  };
  const auto r = run_text(
      scenario(3, "nodes: \"h1\" nodes: \"h2\"", args({"--connect-sid=0x2000", "--expect=rejected", "--requests=0"})),
      o);
  EXPECT_EQ(r.results.at("cycles_ok"), 1);
}

TEST(Cma, UnknownAddressIsUnreachable) {
  const auto r = run_text(
      scenario(3, "nodes: \"h1\" nodes: \"h2\"", args({"--dst=10.0.0.99", "--expect=unreachable", "--requests=0"})));
  EXPECT_EQ(r.results.at("cycles_ok"), 1);
}

TEST(Cma, NodeWithoutCmIsUnreachable) {
  // h3 runs nothing: it registered no address, so nothing resolves it.
  const auto r = run_text(
      scenario(4, "nodes: \"h1\" nodes: \"h2\"", args({"--dst=10.0.0.4", "--expect=unreachable", "--requests=0"})));
  EXPECT_EQ(r.results.at("cycles_ok"), 1);
}

TEST(Cma, DownLinkIsUnreachableAfterRetries) {
  RunOptions o;
  o.inspect = [](World& w) { EXPECT_EQ(counters_of(w, "h2").retries, 3u); };  // the REQ resent 3 times
  const auto r = run_text(
      scenario(3, "nodes: \"h1\" nodes: \"h2\"", args({"--expect=unreachable", "--requests=0", "--delay-us=3000"}),
               "fault { at: \"2ms\" link: \"h1--sw0\" link_down: true }\n"),
      o);
  EXPECT_EQ(r.results.at("cycles_ok"), 1);
  // 1 + 3 REQs, each waiting 4.096 us * 2^8 (the 1 ms response timeout) and
  // two packet lifetimes: unreachable some 4.3 ms after the first REQ.
  EXPECT_GT(r.results.at("connect_ns"), 4.0e6);
}

// h2's link goes down after the REP reached it (1232.7 us) and before its
// RTU leaves: the passive side resends the REP 3 times and its accept
// handler hears UNREACHABLE.
TEST(Cma, PassiveSideWithoutRtuIsUnreachable) {
  RunOptions o;
  o.inspect = [](World& w) {
    EXPECT_EQ(counters_of(w, "h1").retries, 3u);
    EXPECT_EQ(counters_of(w, "h1").live_conns, 0u);
  };
  const auto r =
      run_text(scenario(3, "nodes: \"h1\" nodes: \"h2\"", args({"--accept-unreachable", "--established-only"}),
                        "fault { at: \"1250us\" link: \"h2--sw0\" link_down: true }\n"),
               o);
  EXPECT_EQ(r.results.at("cycles_ok"), 1);
  EXPECT_GT(r.results.at("accept_unreachable_ns"), 1232e3 + 4 * 1.0e6);
}

TEST(Cma, DisconnectFromTheServerSide) {
  const auto r = run_text(scenario(3, "nodes: \"h1\" nodes: \"h2\"", args({"--disconnect-by=server", "--cycles=3"})));
  EXPECT_EQ(r.results.at("cycles_ok"), 3);
}

TEST(Cma, SimultaneousConnectsToOneListener) {
  RunOptions o;
  // h1 sent its registration, then a REP and a DREP for each connection.
  o.inspect = [](World& w) { EXPECT_GE(counters_of(w, "h1").mads_sent, 1u + 4u * 3u * 2u); };
  const auto r = run_text(
      scenario(6, "nodes: \"h1\" nodes: \"h2\" nodes: \"h3\" nodes: \"h4\" nodes: \"h5\"", args({"--cycles=3"})), o);
  EXPECT_EQ(r.exit_codes.size(), 7u);  // ib_sa, five ranks of cma_pingpong, the subnet manager
  EXPECT_EQ(r.results.at("cycles_ok"), 3);
}

TEST(Cma, ConnectWithinOneNode) {
  // Two programs on h1: a server and a client that connects to h1's own
  // address (the HCA loops the packets back).
  const auto r =
      run_text(scenario(2, "nodes: \"h1\"", args({"--role=server", "--requests=2"}),
                        "workload { program: \"cma_pingpong\" nodes: \"h1\"" +
                            args({"--role=client", "--dst=10.0.0.2", "--cycles=2", "--delay-us=1500"}) + " }\n"));
  EXPECT_EQ(r.results.at("cycles_ok"), 2);
}

TEST(Cma, ThousandCyclesLeaveNothingBehind) {
  RunOptions o;
  o.inspect = [](World& w) {
    for (const char* name : {"h1", "h2"}) {
      const CmCounters c = counters_of(w, name);
      EXPECT_EQ(c.live_conns, 0u) << name;
      EXPECT_EQ(c.listeners, 0u) << name;
      EXPECT_EQ(c.sa_queries_live, 0u) << name;
    }
    for (std::uint32_t i = 1; i <= 2; ++i) {
      // What is left is the CM's own: its PD, CQ, QP1, DMA MR and the one
      // buffer mapped through it.
      const kverbs::Counts k = kverbs::counts(kverbs::device_of(w.node(i).host()));
      EXPECT_EQ(k.qps, 1u);
      EXPECT_EQ(k.cqs, 1u);
      EXPECT_EQ(k.pds, 1u);
      EXPECT_EQ(k.mrs, 1u);
      EXPECT_EQ(k.dma_regs, 1u);
    }
  };
  const auto r =
      run_text(scenario(3, "nodes: \"h1\" nodes: \"h2\"", args({"--cycles=1000", "--bytes=8", "--linger-us=1000"})), o);
  EXPECT_EQ(r.results.at("cycles_ok"), 1000);
}

// The first REQ crosses h1's link at 1174.1 us and h1's REP at 1226.4 us
// in this scenario (deterministic): a window of total loss on h1's link
// around one of them loses exactly that MAD, and the CM's retry recovers it.
void lost_mad_test(const char* from, const char* to) {
  RunOptions o;
  std::uint64_t retries = 0;
  o.inspect = [&](World& w) { retries = counters_of(w, "h1").retries + counters_of(w, "h2").retries; };
  const std::string faults = std::string("fault { at: \"") + from +
                             "\" link: \"h1--sw0\" drop_rate: \"1\" }\n"
                             "fault { at: \"" +
                             to + "\" link: \"h1--sw0\" drop_rate: \"0\" }\n";
  const auto r = run_text(scenario(3, "nodes: \"h1\" nodes: \"h2\"", args({"--cycles=3"}), faults), o);
  EXPECT_EQ(r.results.at("cycles_ok"), 3);
  EXPECT_GE(retries, 1u);
  EXPECT_GT(r.results.at("connect_ns"), 1.0e6);  // the retry waited one response timeout
}

TEST(Cma, LostReqIsRecoveredByRetry) { lost_mad_test("1173us", "1175us"); }

TEST(Cma, LostRepIsRecoveredByRetry) { lost_mad_test("1226us", "1227us"); }

// A consumer that takes 1.5 ms to accept, longer than the REQ's 1 ms
// response timeout: the passive CM sends an MRA after cm.mra_after
// (400 us), and the active side waits the MRA's service timeout instead
// of giving up.
TEST(Cma, SlowAcceptIsCoveredByAnMra) {
  RunOptions o;
  o.inspect = [](World& w) {
    EXPECT_EQ(counters_of(w, "h1").mras_sent, 2u);  // one per connection
    EXPECT_EQ(counters_of(w, "h2").retries, 0u);
  };
  const auto r =
      run_text(scenario(3, "nodes: \"h1\" nodes: \"h2\"", args({"--accept-delay-us=1500", "--cycles=2"})), o);
  EXPECT_EQ(r.results.at("cycles_ok"), 2);
  EXPECT_GT(r.results.at("connect_ns"), 1.5e6);
}

// With the timed MRA off, the active side resends its REQ after 1 ms; the
// duplicate REQ, still unanswered, gets the MRA.
TEST(Cma, DuplicateReqGetsAnMra) {
  RunOptions o;
  o.inspect = [](World& w) {
    EXPECT_EQ(counters_of(w, "h1").mras_sent, 1u);
    EXPECT_EQ(counters_of(w, "h2").retries, 1u);
  };
  std::string text = scenario(3, "nodes: \"h1\" nodes: \"h2\"", args({"--accept-delay-us=1500"}));
  const std::string nic = "nic: \"hca\" }";
  text.replace(text.find(nic), nic.size(), "nic: \"hca\" node_param { key: \"host.cm.mra_after\" value: \"10s\" } }");
  const auto r = run_text(text, o);
  EXPECT_EQ(r.results.at("cycles_ok"), 1);
}

TEST(CmaAddresses, ScenarioAddressOverridesTheDefault) {
  // h1 is declared with its own address; the client resolves it at the SA.
  const auto r = run_text(
      "seed: 1\ntopology { star { hosts: 3 } nic: \"hca\" switch_param { key: \"ports\" value: \"8\" } }\n"
      "node { name: \"srv\" nic: \"hca\" ipv4: \"192.168.7.9\" }\nlink { a: \"srv\" b: \"sw0\" }\n"
      "workload { program: \"ib_sa\" nodes: \"h0\" }\n"
      "workload { program: \"cma_pingpong\" nodes: \"srv\" args: \"--role=server\" args: \"--requests=1\" }\n"
      "workload { program: \"cma_pingpong\" nodes: \"h2\" args: \"--role=client\" args: \"--dst=192.168.7.9\" "
      "args: \"--delay-us=1500\" }\n");
  EXPECT_EQ(r.results.at("cycles_ok"), 1);
}

TEST(CmaAddresses, DuplicateAndMalformedAddressesAreScenarioErrors) {
  const std::string base = "topology { star { hosts: 2 } nic: \"hca\" switch_param { key: \"ports\" value: \"8\" } }\n";
  try {
    testing::load_text(base + "node { name: \"x\" nic: \"hca\" ipv4: \"10.0.0.1\" }\nlink { a: \"x\" b: \"sw0\" }\n");
    ADD_FAILURE() << "a duplicate address loaded";
  } catch (const ScenarioError& e) {
    // h0 has 10.0.0.1 by default; x's entry is at line 2, column 29.
    EXPECT_NE(std::string(e.what()).find("test.textproto:2:29"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("already node 'h0' port 1's"), std::string::npos) << e.what();
  }
  EXPECT_THROW(testing::load_text(base + "node { name: \"x\" nic: \"hca\" ipv4: \"10.0.0.300\" }\n"), ScenarioError);
  EXPECT_THROW(testing::load_text(base + "node { name: \"x\" nic: \"hca\" ipv4: \"1.2.3.4\" ipv4: \"1.2.3.5\" }\n"),
               ScenarioError);
  const std::string file = ::testing::TempDir() + "dup_ipv4.textproto";
  std::FILE* f = std::fopen(file.c_str(), "w");
  ASSERT_NE(f, nullptr);
  std::fputs((base + "node { name: \"x\" nic: \"hca\" ipv4: \"10.0.0.2\" }\nlink { a: \"x\" b: \"sw0\" }\n").c_str(),
             f);
  std::fclose(f);
  const auto r = testing::run_command(std::string(NICSIM_BIN) + " validate " + file + " 2>&1");
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_NE(r.output.find("dup_ipv4.textproto:2:29"), std::string::npos) << r.output;
}

TEST(Cma, PcapOfAConnectionDissectsWithTshark) {
  ASSERT_NO_FATAL_FAILURE(testing::require_tshark());
  const std::string pcap = ::testing::TempDir() + "cma_connection.pcap";
  RunOptions o;
  o.pcap_path = pcap;
  std::uint32_t client_qpn = 0;
  run_text(scenario(3, "nodes: \"h1\" nodes: \"h2\"", args({"--sid=0x1234"}), "outputs { pcap: \"h2--sw0\" }\n"), o);
  const auto r = testing::run_command("tshark -r " + pcap + " -V 2>&1");
  ASSERT_EQ(r.status, 0) << r.output;
  for (const char* what : {"CM ConnectRequest", "CM ConnectReply", "CM ReadyToUse", "CM DisconnectRequest",
                           "CM DisconnectReply", "ServiceID: 0x0000000000001234", "SubnAdmGet(ServiceRecord)",
                           "SubnAdmGetTable(PathRecord)", "SubnAdmGetTableResp(PathRecord)", "Local QPN: 0x000040",
                           "Remote QPN/EECN: 0x000040", "Primary Local Port LID: 4"})
    EXPECT_NE(r.output.find(what), std::string::npos) << what;
  (void)client_qpn;
}

}  // namespace
}  // namespace nicsim::cm
