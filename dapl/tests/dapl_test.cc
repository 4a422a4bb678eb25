// Two-sided tests of the DAPL provider: a server and a client node over
// the simulated fabric (the SA on the subnet manager's node), running the
// dapltest-style transaction program for each connection path; every
// payload and private data byte is checked by the program, and the
// provider's objects are counted after the IAs closed.
#include <string>

#include "dapl/provider/dapl.h"
#include "tests/test_shell.h"
#include "tests/world_run.h"
#include "world/node.h"

namespace nicsim::dapl {
namespace {

using testing::run_text;
using testing::RunOptions;

// h0 runs the SA; h1 is the server, h2 the client.
std::string scenario(const std::string& args) {
  std::string a;
  for (std::size_t p = 0, q; p < args.size(); p = q + 1) {
    q = args.find(' ', p);
    if (q == std::string::npos) q = args.size();
    if (q > p) a += " args: \"" + args.substr(p, q - p) + "\"";
  }
  return "seed: 1\ntopology { star { hosts: 3 } nic: \"hca\" }\n"
         "link_defaults { bandwidth: \"8Gbps\" delay: \"5ns\" }\n"
         "workload { program: \"ib_sa\" nodes: \"h0\" }\n"
         "workload { program: \"dapl_transaction\" nodes: \"h1\" nodes: \"h2\"" +
         a + " }\n";
}

// Nothing of the provider is left on the server and the client.
RunOptions leak_check() {
  RunOptions o;
  o.inspect = [](World& w) {
    for (std::uint32_t i = 1; i < w.num_nodes(); ++i) {
      Node* n = Node::of(w.node(i).host());
      ASSERT_NE(n, nullptr);
      EXPECT_EQ(n->counters().total(), 0u) << w.node(i).name();
    }
  };
  return o;
}

TEST(Dapl, AcceptWithPrivateDataAndEveryDto) {
  const auto r = run_text(scenario("--path=accept --eps=1 --iters=30"), leak_check());
  EXPECT_EQ(r.results.at("transactions"), 30);
  EXPECT_EQ(r.results.at("path_ok"), 1);
}

TEST(Dapl, ConsumerRejectIsPeerRejected) {
  const auto r = run_text(scenario("--path=reject --eps=2"), leak_check());
  EXPECT_EQ(r.results.at("path_ok"), 1);
}

TEST(Dapl, NoListenerIsNonPeerRejected) {
  const auto r = run_text(scenario("--path=noport --eps=1"), leak_check());
  EXPECT_EQ(r.results.at("path_ok"), 1);
}

TEST(Dapl, ConnectTimeoutLeavesTheEpUnconnectedAndFlushed) {
  const auto r = run_text(scenario("--path=timeout --eps=1"), leak_check());
  EXPECT_EQ(r.results.at("path_ok"), 1);
}

TEST(Dapl, ProviderEpPspIsGivenAPzThenAccepted) {
  const auto r = run_text(scenario("--path=provider --eps=2 --iters=12"), leak_check());
  EXPECT_EQ(r.results.at("transactions"), 24);
}

TEST(Dapl, RspIsOneShot) {
  const auto r = run_text(scenario("--path=rsp --eps=2 --iters=12"), leak_check());
  EXPECT_EQ(r.results.at("transactions"), 24);
}

TEST(Dapl, AbruptDisconnectFlushesThePeersRecv) {
  const auto r = run_text(scenario("--path=abrupt --eps=1 --iters=6"), leak_check());
  EXPECT_EQ(r.results.at("transactions"), 6);
}

TEST(Dapl, TransactionTestSeveralEpsThousandsOfOps) {
  const auto r = run_text(scenario("--path=accept --eps=4 --iters=750 --max-size=8192"), leak_check());
  EXPECT_EQ(r.results.at("transactions"), 3000);
}

}  // namespace
}  // namespace nicsim::dapl
