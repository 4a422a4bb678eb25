// Two-sided tests of the HCA model: two nodes with HCAs on a switch, each
// driven by the test harness (MMIO, rings, doorbells only), exchanging real
// bytes over the simulated fabric. Every data test checks payload bytes end
// to end.
#include <gtest/gtest.h>

#include "hca_model/tests/hca_harness.h"
#include "sim/tests/world_run.h"
#include "scenario/loader.h"
#include "sim/tests/test_shell.h"

#include <cctype>
#include <cstdio>
#include <set>
#include <sstream>
#include <unistd.h>

using namespace nicsim;
using namespace nicsim::hca;
using namespace nicsim::hca::testing;

namespace {

constexpr std::uint32_t kAccessAll = mpt::kLocalWrite | mpt::kRemoteRead | mpt::kRemoteWrite | mpt::kRemoteAtomic;

void fill(std::uint8_t* p, std::size_t n, std::uint32_t seed) {
  for (std::size_t i = 0; i < n; ++i) p[i] = static_cast<std::uint8_t>((i * 131 + seed * 7 + (i >> 8)) & 0xff);
}
bool same(const std::uint8_t* a, const std::uint8_t* b, std::size_t n) { return std::memcmp(a, b, n) == 0; }

// Both ranks: a CQ, an RC QP, a 64 KiB registered buffer; connected.
struct Setup {
  Harness h;
  std::uint32_t cq, qp, key;
  std::uint8_t* buf;
  Peer peer;
  explicit Setup(QpType type = QpType::Rc, std::uint8_t timeout = 14, std::uint8_t retry = 7,
                 std::uint8_t rnr_retry = 7) {
    cq = h.create_cq();
    Harness::QpSpec s;
    s.type = type;
    s.send_cqn = s.recv_cqn = cq;
    qp = h.create_qp(s);
    buf = static_cast<std::uint8_t*>(h.alloc(65536));
    std::memset(buf, 0, 65536);
    key = h.reg_mr(buf, 65536, kAccessAll);
    peer = exchange(Peer{qp, h.lid(), key, reinterpret_cast<std::uint64_t>(buf)});
    if (type != QpType::Ud) {
      h.connect(qp, peer.qpn, peer.lid, 4, timeout, retry, rnr_retry);
    } else {
      h.connect(qp, 0, 0);
    }
  }
};

// Five messages of 1, 64 (inline), 2048, 2049 and 10000 bytes, the last
// with immediate data, over RC or (argument "uc") UC.
int send_recv(int argc, char** argv) {
  const bool uc = argc > 1 && std::string(argv[1]) == "uc";
  Setup s(uc ? QpType::Uc : QpType::Rc);
  const bool sender = nicsim_workload_rank() == 0;
  const std::uint32_t sizes[] = {1, 64, 2048, 2049, 10000};
  if (!sender) {
    std::uint32_t off = 0;
    for (std::uint32_t i = 0; i < 5; ++i) {
      s.h.post_recv(s.qp, s.buf + off, 12000, s.key, 100 + i);
      off += 12000;
    }
  }
  nicsim_barrier();
  std::vector<std::uint8_t> pattern(12000);
  if (sender) {
    for (std::uint32_t i = 0; i < 5; ++i) {
      fill(s.buf + 12000 * i, sizes[i], i);
      Harness::SendArgs a;
      a.wr_id = i;
      a.local = s.buf + 12000 * i;
      a.len = sizes[i];
      a.lkey = s.key;
      if (i == 1) a.flags |= swqe::kInline;
      if (i == 4) {
        a.op = swqe::Op::SendImm;
        a.imm = 0x01020304;
      }
      s.h.post_send(s.qp, a);
    }
    for (std::uint32_t i = 0; i < 5; ++i) {
      Cqe c{};
      EXPECT_TRUE(s.h.wait(s.cq, c)) << "send completion " << i;
      EXPECT_EQ(c.status, 0) << cqe_status_name(c.status);
      EXPECT_EQ(c.wr_id, i);
      EXPECT_EQ(c.byte_len, sizes[i]);
    }
  } else {
    for (std::uint32_t i = 0; i < 5; ++i) {
      Cqe c{};
      EXPECT_TRUE(s.h.wait(s.cq, c)) << "receive completion " << i;
      EXPECT_EQ(c.status, 0) << cqe_status_name(c.status);
      EXPECT_EQ(c.wr_id, 100 + i);
      EXPECT_EQ(c.byte_len, sizes[i]);
      EXPECT_TRUE(c.flags & cqe::kIsRecv);
      EXPECT_EQ(static_cast<bool>(c.flags & cqe::kImm), i == 4);
      if (i == 4) {
        EXPECT_EQ(c.imm, 0x01020304u);
      }
      fill(pattern.data(), sizes[i], i);
      EXPECT_TRUE(same(s.buf + 12000 * i, pattern.data(), sizes[i])) << "payload of message " << i;
      EXPECT_EQ(s.buf[12000 * i + sizes[i]], 0) << "wrote past the message";
    }
    // UC never acknowledges.
    if (uc) {
      EXPECT_EQ(s.h.hca().stats().acks_sent, 0u);
    }
  }
  return ::testing::Test::HasFailure() ? 1 : 0;
}
const BuiltinProgram reg1("t_send_recv", send_recv, "test");

int rc_rdma(int, char**) {
  Setup s;
  const bool a_side = nicsim_workload_rank() == 0;
  std::uint64_t* counter = reinterpret_cast<std::uint64_t*>(s.buf + 60000);
  if (!a_side) {
    *counter = 1000;
    s.h.post_recv(s.qp, s.buf + 50000, 64, s.key, 77);  // for the write-with-immediate
  }
  nicsim_barrier();
  if (a_side) {
    // RDMA write of 10000 bytes, then a write with immediate.
    fill(s.buf, 10000, 9);
    Harness::SendArgs w;
    w.op = swqe::Op::RdmaWrite;
    w.wr_id = 1;
    w.local = s.buf;
    w.len = 10000;
    w.lkey = s.key;
    w.remote_va = s.peer.addr + 20000;
    w.rkey = s.peer.rkey;
    s.h.post_send(s.qp, w);
    w.op = swqe::Op::RdmaWriteImm;
    w.wr_id = 2;
    w.len = 16;
    w.remote_va = s.peer.addr + 40000;
    w.imm = 0xcafef00d;
    s.h.post_send(s.qp, w);
    // RDMA read of what the peer prepared at offset 30000.
    Harness::SendArgs r;
    r.op = swqe::Op::RdmaRead;
    r.wr_id = 3;
    r.local = s.buf + 30000;
    r.len = 6000;
    r.lkey = s.key;
    r.remote_va = s.peer.addr + 30000;
    r.rkey = s.peer.rkey;
    r.flags |= swqe::kFence;
    // Atomics on the peer's counter: fetch-add 5 (returns 1000), then
    // compare-swap 1005 -> 7 (returns 1005).
    Harness::SendArgs fa;
    fa.op = swqe::Op::AtomicFa;
    fa.wr_id = 4;
    fa.local = s.buf + 61000;
    fa.len = 8;
    fa.lkey = s.key;
    fa.remote_va = s.peer.addr + 60000;
    fa.rkey = s.peer.rkey;
    fa.swap_add = 5;
    Harness::SendArgs cs = fa;
    cs.op = swqe::Op::AtomicCs;
    cs.wr_id = 5;
    cs.local = s.buf + 61008;
    cs.compare = 1005;
    cs.swap_add = 7;
    std::uint32_t go = 0;
    nicsim_mgmt_recv(nicsim_workload_node(1), 0x200, &go, 4, nullptr, 0);  // peer filled its read source
    s.h.post_send(s.qp, r);
    s.h.post_send(s.qp, fa);
    s.h.post_send(s.qp, cs);
    for (std::uint64_t i = 1; i <= 5; ++i) {
      Cqe c{};
      EXPECT_TRUE(s.h.wait(s.cq, c)) << "completion " << i;
      EXPECT_EQ(c.wr_id, i);
      EXPECT_EQ(c.status, 0) << cqe_status_name(c.status);
    }
    std::vector<std::uint8_t> expect(6000);
    fill(expect.data(), 6000, 21);
    EXPECT_TRUE(same(s.buf + 30000, expect.data(), 6000)) << "RDMA read data";
    std::uint64_t v1, v2;
    std::memcpy(&v1, s.buf + 61000, 8);
    std::memcpy(&v2, s.buf + 61008, 8);
    EXPECT_EQ(v1, 1000u);
    EXPECT_EQ(v2, 1005u);
    nicsim_mgmt_send(nicsim_workload_node(1), 0x201, &go, 4);
  } else {
    fill(s.buf + 30000, 6000, 21);
    std::uint32_t go = 1;
    nicsim_mgmt_send(nicsim_workload_node(0), 0x200, &go, 4);
    Cqe c{};
    EXPECT_TRUE(s.h.wait(s.cq, c));
    EXPECT_EQ(c.wr_id, 77u);
    EXPECT_EQ(c.status, 0);
    EXPECT_EQ(c.imm, 0xcafef00du);
    EXPECT_EQ(c.opcode, static_cast<std::uint8_t>(cqe::RecvOp::RdmaWriteImm));
    nicsim_mgmt_recv(nicsim_workload_node(0), 0x201, &go, 4, nullptr, 0);
    std::vector<std::uint8_t> expect(10000);
    fill(expect.data(), 10000, 9);
    EXPECT_TRUE(same(s.buf + 20000, expect.data(), 10000)) << "RDMA write data";
    EXPECT_TRUE(same(s.buf + 40000, expect.data(), 16)) << "RDMA write-with-immediate data";
    EXPECT_EQ(*counter, 7u) << "atomics";
  }
  return ::testing::Test::HasFailure() ? 1 : 0;
}
const BuiltinProgram reg2("t_rc_rdma", rc_rdma, "test");

int rc_bad_rkey(int, char**) {
  Setup s;
  nicsim_barrier();
  if (nicsim_workload_rank() == 0) {
    Harness::SendArgs w;
    w.op = swqe::Op::RdmaWrite;
    w.wr_id = 1;
    w.local = s.buf;
    w.len = 100;
    w.lkey = s.key;
    w.remote_va = s.peer.addr;
    w.rkey = s.peer.rkey ^ 0x01;  // wrong tag
    s.h.post_send(s.qp, w);
    w.wr_id = 2;
    w.rkey = s.peer.rkey;
    s.h.post_send(s.qp, w);
    Cqe c{};
    EXPECT_TRUE(s.h.wait(s.cq, c));
    EXPECT_EQ(c.wr_id, 1u);
    EXPECT_EQ(c.status, static_cast<std::uint8_t>(CqeStatus::RemoteAccessError)) << cqe_status_name(c.status);
    EXPECT_TRUE(s.h.wait(s.cq, c));
    EXPECT_EQ(c.wr_id, 2u);
    EXPECT_EQ(c.status, static_cast<std::uint8_t>(CqeStatus::WrFlushError)) << cqe_status_name(c.status);
    EXPECT_EQ(s.h.hca().qp(s.qp)->state(), QpState::Error);
  }
  nicsim_barrier();
  if (nicsim_workload_rank() == 1) {
    for (int i = 0; i < 100; ++i) EXPECT_EQ(s.buf[i], 0) << "a bad rkey must not write";
    EXPECT_EQ(s.h.hca().qp(s.qp)->state(), QpState::Error);  // the responder moved to error too
  }
  return ::testing::Test::HasFailure() ? 1 : 0;
}
const BuiltinProgram reg3("t_rc_bad_rkey", rc_bad_rkey, "test");

int ud_send(int, char**) {
  Setup s(QpType::Ud);
  const bool sender = nicsim_workload_rank() == 0;
  if (!sender) s.h.post_recv(s.qp, s.buf, 40 + 256, s.key, 9);
  nicsim_barrier();
  if (sender) {
    fill(s.buf + 1000, 256, 3);
    Harness::SendArgs a;
    a.wr_id = 1;
    a.local = s.buf + 1000;
    a.len = 256;
    a.lkey = s.key;
    a.ud_dqpn = s.peer.qpn;
    a.ud_dlid = s.peer.lid;
    a.ud_qkey = 0x22222222;  // wrong Q_Key: dropped by the receiver
    s.h.post_send(s.qp, a);
    a.wr_id = 2;
    a.ud_qkey = 0x11111111;
    s.h.post_send(s.qp, a);
    Cqe c{};
    EXPECT_TRUE(s.h.wait(s.cq, c));
    EXPECT_TRUE(s.h.wait(s.cq, c));
    EXPECT_EQ(c.wr_id, 2u);
  } else {
    Cqe c{};
    EXPECT_TRUE(s.h.wait(s.cq, c));
    EXPECT_EQ(c.wr_id, 9u);
    EXPECT_EQ(c.status, 0);
    EXPECT_EQ(c.byte_len, 40u + 256);
    EXPECT_EQ(c.src_qp, s.peer.qpn);
    std::vector<std::uint8_t> expect(256);
    fill(expect.data(), 256, 3);
    EXPECT_TRUE(same(s.buf + 40, expect.data(), 256)) << "UD payload after the GRH space";
    EXPECT_EQ(s.h.hca().stats().qkey_violations, 1u);
  }
  return ::testing::Test::HasFailure() ? 1 : 0;
}
const BuiltinProgram reg4("t_ud_send", ud_send, "test");

// Receiver posts its receive WQE only after 100 us: RNR NAKs, then success.
int rc_rnr(int argc, char** argv) {
  const bool exhaust = argc > 1 && std::string(argv[1]) == "exhaust";
  Setup s(QpType::Rc, 14, 7, exhaust ? 2 : 7);
  nicsim_barrier();
  if (nicsim_workload_rank() == 0) {
    fill(s.buf, 3000, 5);
    Harness::SendArgs a;
    a.wr_id = 1;
    a.local = s.buf;
    a.len = 3000;
    a.lkey = s.key;
    s.h.post_send(s.qp, a);
    Cqe c{};
    EXPECT_TRUE(s.h.wait(s.cq, c, 50 * kMs));
    if (exhaust) {
      EXPECT_EQ(c.status, static_cast<std::uint8_t>(CqeStatus::RnrRetryExceeded)) << cqe_status_name(c.status);
    } else {
      EXPECT_EQ(c.status, 0) << cqe_status_name(c.status);
    }
  } else {
    if (!exhaust) {
      nicsim_sleep_ns(100'000);
      s.h.post_recv(s.qp, s.buf, 4000, s.key, 5);
      Cqe c{};
      EXPECT_TRUE(s.h.wait(s.cq, c, 50 * kMs));
      EXPECT_EQ(c.status, 0);
      std::vector<std::uint8_t> expect(3000);
      fill(expect.data(), 3000, 5);
      EXPECT_TRUE(same(s.buf, expect.data(), 3000));
    }
    EXPECT_GT(s.h.hca().stats().rnr_naks_sent, 0u);
  }
  nicsim_barrier();
  return ::testing::Test::HasFailure() ? 1 : 0;
}
const BuiltinProgram reg5("t_rc_rnr", rc_rnr, "test");

// Many messages over a lossy link: go-back-N recovers exact data.
int rc_lossy(int argc, char** argv) {
  const bool dead = argc > 1 && std::string(argv[1]) == "dead";
  // timeout 8: 4.096 us * 2^8 = 1.05 ms per try.
  Setup s(QpType::Rc, dead ? 8 : 10, dead ? 3 : 7);
  const bool sender = nicsim_workload_rank() == 0;
  constexpr int kMessages = 20;
  if (!sender)
    for (int i = 0; i < kMessages; ++i) s.h.post_recv(s.qp, s.buf + 3000 * i, 3000, s.key, i);
  nicsim_barrier();
  if (sender) {
    for (int i = 0; i < kMessages; ++i) {
      fill(s.buf + 3000 * i, 2500, 40 + i);
      Harness::SendArgs a;
      a.wr_id = i;
      a.local = s.buf + 3000 * i;
      a.len = 2500;
      a.lkey = s.key;
      s.h.post_send(s.qp, a);
    }
    for (int i = 0; i < kMessages; ++i) {
      Cqe c{};
      EXPECT_TRUE(s.h.wait(s.cq, c, 200 * kMs)) << i;
      if (dead) {
        EXPECT_EQ(c.status, static_cast<std::uint8_t>(i == 0 ? CqeStatus::RetryExceeded : CqeStatus::WrFlushError))
            << i << " " << cqe_status_name(c.status);
      } else {
        EXPECT_EQ(c.status, 0) << cqe_status_name(c.status);
        EXPECT_EQ(c.wr_id, static_cast<std::uint64_t>(i));
      }
    }
    nicsim_result("retransmits", static_cast<double>(s.h.hca().stats().retransmits), "packets");
    if (!dead) {
      EXPECT_GT(s.h.hca().stats().retransmits, 0u);
    }
  } else if (!dead) {
    for (int i = 0; i < kMessages; ++i) {
      Cqe c{};
      EXPECT_TRUE(s.h.wait(s.cq, c, 200 * kMs)) << i;
      EXPECT_EQ(c.wr_id, static_cast<std::uint64_t>(i));
      EXPECT_EQ(c.byte_len, 2500u);
      std::vector<std::uint8_t> expect(2500);
      fill(expect.data(), 2500, 40 + i);
      EXPECT_TRUE(same(s.buf + 3000 * i, expect.data(), 2500)) << "message " << i;
    }
  }
  return ::testing::Test::HasFailure() ? 1 : 0;
}
const BuiltinProgram reg6("t_rc_lossy", rc_lossy, "test");

// A send, then at once an RDMA write-only with immediate: the send opens the
// first receive WQE and starts the second's fetch, and the write arrives
// while that fetch is still on the responder's (slower) bus, so its packet
// waits for the WQE and is processed again when it is in.
int rc_write_imm_waits_for_wqe(int, char**) {
  Setup s;
  const bool a_side = nicsim_workload_rank() == 0;
  if (!a_side) {
    s.h.post_recv(s.qp, s.buf, 64, s.key, 70);
    s.h.post_recv(s.qp, s.buf + 64, 64, s.key, 71);
  }
  nicsim_barrier();
  if (a_side) {
    fill(s.buf + 1000, 8, 3);
    fill(s.buf + 2000, 32, 4);
    Harness::SendArgs send;
    send.wr_id = 1;
    send.local = s.buf + 1000;
    send.len = 8;
    send.lkey = s.key;
    s.h.post_send(s.qp, send);
    Harness::SendArgs w;
    w.op = swqe::Op::RdmaWriteImm;
    w.wr_id = 2;
    w.local = s.buf + 2000;
    w.len = 32;
    w.lkey = s.key;
    w.remote_va = s.peer.addr + 4096;
    w.rkey = s.peer.rkey;
    w.imm = 0x5eed1e55;
    s.h.post_send(s.qp, w);
    for (std::uint64_t i = 1; i <= 2; ++i) {
      Cqe c{};
      EXPECT_TRUE(s.h.wait(s.cq, c)) << "completion " << i;
      EXPECT_EQ(c.wr_id, i);
      EXPECT_EQ(c.status, 0) << cqe_status_name(c.status);
    }
  } else {
    Cqe c{};
    EXPECT_TRUE(s.h.wait(s.cq, c));
    EXPECT_EQ(c.wr_id, 70u);
    EXPECT_EQ(c.status, 0) << cqe_status_name(c.status);
    EXPECT_EQ(c.byte_len, 8u);
    EXPECT_TRUE(s.h.wait(s.cq, c));
    EXPECT_EQ(c.wr_id, 71u);
    EXPECT_EQ(c.status, 0) << cqe_status_name(c.status);
    EXPECT_EQ(c.opcode, static_cast<std::uint8_t>(cqe::RecvOp::RdmaWriteImm));
    EXPECT_EQ(c.imm, 0x5eed1e55u);
    std::vector<std::uint8_t> expect(32);
    fill(expect.data(), 8, 3);
    EXPECT_TRUE(same(s.buf, expect.data(), 8)) << "send data";
    fill(expect.data(), 32, 4);
    EXPECT_TRUE(same(s.buf + 4096, expect.data(), 32)) << "RDMA write-with-immediate data";
  }
  return ::testing::Test::HasFailure() ? 1 : 0;
}
const BuiltinProgram reg7("t_rc_write_imm_wqe_wait", rc_write_imm_waits_for_wqe, "test");

Scenario two_hcas(const std::string& program, const std::string& extra = "", const std::string& args = "") {
  std::string text = R"(
    topology { star { hosts: 2 } nic: "hca" }
    subnet_manager { off: true }  # register-level harness: static addressing
    workload { program: ")" +
                     program + R"(" nodes: "*" )" + args + R"( }
  )" + extra;
  // NICSIM_TEST_TRACE=FILE writes the full trace of the run there (debugging).
  if (std::getenv("NICSIM_TEST_TRACE")) text += R"(outputs { trace { device: "*" component: "*" } })";
  return load_scenario_text(text, "test.textproto",
                            [](std::string_view n) { return ProgramRegistry::instance().find(n) != nullptr; });
}

void run_ok(const Scenario& sc) { nicsim::testing::run_scenario(sc); }

TEST(HcaRc, SendRecvEveryMessageSizeBytesExact) { run_ok(two_hcas("t_send_recv")); }
TEST(HcaUc, SendRecvEveryMessageSizeBytesExact) { run_ok(two_hcas("t_send_recv", "", R"(args: "uc")")); }
TEST(HcaRc, RdmaWriteReadAndAtomics) { run_ok(two_hcas("t_rc_rdma")); }
TEST(HcaRc, WriteOnlyWithImmediateWaitingForItsReceiveWqe) {
  run_ok(load_scenario_text(R"(
    node { name: "h0" nic: "hca" }
    node { name: "h1" nic: "hca" param { key: "bus.profile" value: "pci-33" } }
    switch { name: "sw0" }
    link { a: "h0" b: "sw0" }
    link { a: "h1" b: "sw0" }
    subnet_manager { off: true }
    workload { program: "t_rc_write_imm_wqe_wait" nodes: "*" })",
                            "test.textproto", [](std::string_view n) { return ProgramRegistry::instance().find(n); }));
}
TEST(HcaRc, BadRkeyIsRemoteAccessErrorAndQpError) { run_ok(two_hcas("t_rc_bad_rkey")); }
TEST(HcaUd, SendWithQkeyCheck) { run_ok(two_hcas("t_ud_send")); }
TEST(HcaRc, RnrNakThenSuccess) { run_ok(two_hcas("t_rc_rnr")); }
TEST(HcaRc, RnrRetryExhaustion) { run_ok(two_hcas("t_rc_rnr", "", R"(args: "exhaust")")); }
TEST(HcaRc, DropsRecoveredByRetransmission) {
  run_ok(two_hcas("t_rc_lossy", R"(fault { at: "0ns" link: "h0--sw0" drop_rate: "0.05" }
                                   fault { at: "0ns" link: "h1--sw0" drop_rate: "0.05" })"));
}
TEST(HcaRc, RetryExhaustionWhenTheLinkGoesDown) {
  run_ok(two_hcas("t_rc_lossy", R"(fault { at: "200us" link: "h1--sw0" link_down: true })", R"(args: "dead")"));
}

}  // namespace

namespace {

// A mixed RC run captured to pcap, dissected by tshark's InfiniBand
// dissector: every packet an IB packet, nothing malformed.
TEST(HcaPcap, TsharkDissectsAMixedRunWithoutErrors) {
  const std::string path = "/tmp/nicsim_hca_pcap_" + std::to_string(getpid()) + ".pcap";
  Scenario sc = two_hcas("t_rc_rdma", R"(outputs { pcap: "h0--sw0" })");
  {
    Sim sim(sc.seed);
    World world(sc);
    world.open_outputs("", "", path);
    ASSERT_TRUE(world.run().ok);
    world.close_outputs();
  }
  const nicsim::testing::CommandResult r = nicsim::testing::run_command(
      "tshark -n --disable-heuristic rpcrdma_infiniband -T fields -e frame.number -e infiniband.bth.opcode "
      "-e _ws.malformed -e _ws.expert.severity -r " +
      path + " 2>/dev/null");
  ASSERT_EQ(r.status, 0) << "tshark could not be run (apt-get install tshark): " << r.output;
  const std::string& out = r.output;
  std::istringstream lines(out);
  std::string line;
  std::set<std::string> opcodes;
  int frames = 0;
  while (std::getline(lines, line)) {
    if (line.empty() || !std::isdigit(static_cast<unsigned char>(line[0]))) continue;
    std::istringstream fields(line);
    std::string number, opcode, malformed, severity;
    std::getline(fields, number, '\t');
    std::getline(fields, opcode, '\t');
    std::getline(fields, malformed, '\t');
    std::getline(fields, severity, '\t');
    ++frames;
    EXPECT_FALSE(opcode.empty()) << "frame " << number << " not dissected as InfiniBand: " << line;
    EXPECT_TRUE(malformed.empty()) << "frame " << number << " malformed: " << line;
    EXPECT_TRUE(severity.empty()) << "frame " << number << " expert info: " << line;
    opcodes.insert(opcode);
  }
  EXPECT_GT(frames, 10);
  // RDMA write first/middle/last, write-only-with-immediate, read request,
  // read response first/middle/last (6000 bytes), ACK, atomic ACK,
  // compare-swap, fetch-add.
  for (const char* op : {"6", "7", "8", "11", "12", "13", "14", "15", "17", "18", "19", "20"})
    if (!opcodes.count(op)) ADD_FAILURE() << "opcode " << op << " missing from the capture; seen: " << out;
  std::remove(path.c_str());
}

}  // namespace

namespace {

// Every packet's CRCs recomputed at the receiver: none may be wrong.
TEST(HcaRc, SealedCrcsVerifyOnEveryPacket) {
  Scenario sc = load_scenario_text(R"(
    topology { star { hosts: 2 } nic: "hca" node_param { key: "nic.verify_crc" value: "always" } }
    subnet_manager { off: true }
    workload { program: "t_rc_rdma" nodes: "*" })",
                                   "crc.textproto",
                                   [](std::string_view n) { return ProgramRegistry::instance().find(n) != nullptr; });
  Sim sim(sc.seed);
  World world(sc);
  EXPECT_TRUE(world.run().ok);
  for (std::uint32_t i = 0; i < 2; ++i) {
    const auto& st = world.node(i).nic_as<Hca>()->stats();
    EXPECT_GT(st.rx_packets, 5u);
    EXPECT_EQ(st.rx_bad_crc, 0u);
  }
}

// Bit errors on the wire are caught by the CRCs, dropped, and recovered by
// retransmission with exact data.
TEST(HcaRc, BitErrorsCaughtByCrcAndRecovered) {
  Scenario sc = two_hcas("t_rc_lossy", R"(fault { at: "0ns" link: "h0--sw0" bit_error_rate: "2e-5" })");
  Sim sim(sc.seed);
  World world(sc);
  RunStatus st = world.run();
  for (auto& e : sim.errors().all()) ADD_FAILURE() << e.where << ": " << e.message;
  EXPECT_TRUE(st.ok);
  std::uint64_t bad = 0;
  for (std::uint32_t i = 0; i < 2; ++i) bad += world.node(i).nic_as<Hca>()->stats().rx_bad_crc;
  EXPECT_GT(bad, 0u);
}

}  // namespace
