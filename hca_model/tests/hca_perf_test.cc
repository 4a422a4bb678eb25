// Calibration probes at the register level (no verbs software costs):
// RC ping-pong latency and RDMA-write streaming bandwidth between two HCAs
// through one switch with the default infinihost-pcix profile.
#include <gtest/gtest.h>

#include "hca_model/tests/hca_harness.h"
#include "scenario/loader.h"

using namespace nicsim;
using namespace nicsim::hca;
using namespace nicsim::hca::testing;

namespace {

int pingpong(int, char**) {
  Harness h;
  const std::uint32_t cq = h.create_cq();
  Harness::QpSpec s;
  s.send_cqn = s.recv_cqn = cq;
  const std::uint32_t qp = h.create_qp(s);
  auto* buf = static_cast<std::uint8_t*>(h.alloc(8192));
  const std::uint32_t key = h.reg_mr(buf, 8192, mpt::kLocalWrite | mpt::kRemoteWrite);
  Peer peer = exchange(Peer{qp, h.lid(), key, reinterpret_cast<std::uint64_t>(buf)});
  h.connect(qp, peer.qpn, peer.lid);
  const bool first = nicsim_workload_rank() == 0;
  constexpr int kIters = 50;  // receives fit the 64-entry receive queue
  for (int i = 0; i < kIters + 1; ++i) h.post_recv(qp, buf + 4096, 64, key, i);
  nicsim_barrier();
  Cqe c{};
  Tick start = 0;
  for (int i = 0; i < kIters; ++i) {
    if (i == 1) start = now();
    Harness::SendArgs a;
    a.local = buf;
    a.len = 8;
    a.lkey = key;
    a.flags = swqe::kInline;  // unsignaled: only the receives complete
    // A busy-polling loop: each empty poll costs a cached memory read.
    const Tick deadline = now() + 1 * kMs;
    auto poll_one = [&] {
      while (!h.poll(cq, c)) {
        if (now() > deadline) return false;
        nicsim_sleep_ns(50);
      }
      return c.status == 0;
    };
    if (first) {
      h.post_send(qp, a);
      if (!poll_one()) return 1;
    } else {
      if (!poll_one()) return 1;
      h.post_send(qp, a);
    }
  }
  const double half_rtt_ns = static_cast<double>(now() - start) / (kIters - 1) / 2 / 1000.0;
  if (first) nicsim_result("half_rtt", half_rtt_ns, "ns");
  nicsim_barrier();
  return 0;
}
const BuiltinProgram reg_pp("t_hca_pingpong", pingpong, "test");

int write_bw(int, char**) {
  Harness h;
  const std::uint32_t cq = h.create_cq(1024);
  Harness::QpSpec s;
  s.send_cqn = s.recv_cqn = cq;
  s.sq_entries = 256;
  const std::uint32_t qp = h.create_qp(s);
  constexpr std::uint32_t kMsg = 65536;
  auto* buf = static_cast<std::uint8_t*>(h.alloc(kMsg));
  const std::uint32_t key = h.reg_mr(buf, kMsg, mpt::kLocalWrite | mpt::kRemoteWrite);
  Peer peer = exchange(Peer{qp, h.lid(), key, reinterpret_cast<std::uint64_t>(buf)});
  h.connect(qp, peer.qpn, peer.lid);
  nicsim_barrier();
  if (nicsim_workload_rank() == 0) {
    constexpr int kMessages = 200, kWindow = 16;
    int posted = 0, done = 0;
    Tick start = now();
    Cqe c{};
    while (done < kMessages) {
      while (posted < kMessages && posted - done < kWindow) {
        Harness::SendArgs a;
        a.op = swqe::Op::RdmaWrite;
        a.local = buf;
        a.len = kMsg;
        a.lkey = key;
        a.remote_va = peer.addr;
        a.rkey = peer.rkey;
        a.wr_id = static_cast<std::uint64_t>(posted++);
        h.post_send(qp, a);
      }
      if (h.poll(cq, c)) {
        if (c.status != 0) return 1;
        ++done;
      } else {
        nicsim_sleep_ns(500);
      }
    }
    const double secs = static_cast<double>(now() - start) / 1e12;
    nicsim_result("bandwidth", static_cast<double>(kMessages) * kMsg / secs / 1e6, "MB/s");
  }
  nicsim_barrier();
  return 0;
}
const BuiltinProgram reg_bw("t_hca_write_bw", write_bw, "test");

double run_and_get(const std::string& program, const char* result) {
  Scenario sc = load_scenario_text(R"(topology { star { hosts: 2 } nic: "hca" } subnet_manager { off: true }
      workload { program: ")" + program +
                                       R"(" nodes: "*" })",
                                   "perf.textproto",
                                   [](std::string_view n) { return ProgramRegistry::instance().find(n) != nullptr; });
  Sim sim(sc.seed);
  World world(sc);
  EXPECT_TRUE(world.run().ok);
  for (auto& p : world.programs())
    for (auto& r : p->results())
      if (r.name == result) {
        std::printf("%s %s = %.1f %s\n", program.c_str(), result, r.value, r.unit.c_str());
        return r.value;
      }
  ADD_FAILURE() << "no result " << result;
  return 0;
}

TEST(HcaPerf, PingPongHalfRoundTrip) {
  const double ns = run_and_get("t_hca_pingpong", "half_rtt");
  // Register level, no verbs CPU costs: below the 4.5-6.5 us verbs figure.
  EXPECT_GT(ns, 2000);
  EXPECT_LT(ns, 6500);
}

TEST(HcaPerf, RdmaWriteBandwidthIsBusLimited) {
  const double mbs = run_and_get("t_hca_write_bw", "bandwidth");
  EXPECT_GT(mbs, 700);
  EXPECT_LT(mbs, 1000);  // never above the link (1000 MB/s) or the PCI-X bus
}

}  // namespace
