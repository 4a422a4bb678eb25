// Two-sided tests of UD and UC send completions: a send completion means the
// HCA no longer needs the buffer, so a sender that refills its buffer as
// soon as it polls the completion (the usual pattern) must never put the new
// bytes under the old message. The receiver checks every byte of every
// message; a payload read that fails must complete with an error.
#include <gtest/gtest.h>

#include "hca_model/tests/hca_harness.h"
#include "sim/tests/world_run.h"

using namespace nicsim;
using namespace nicsim::hca;
using namespace nicsim::hca::testing;

namespace {

constexpr std::uint32_t kBufBytes = 131072;
constexpr std::uint32_t kSlot = 12000;  // receive slot per message
constexpr std::uint32_t kGrh = 40;      // UD receives start with the GRH space

void fill(std::uint8_t* p, std::size_t n, std::uint32_t message) {
  for (std::size_t i = 0; i < n; ++i) p[i] = static_cast<std::uint8_t>((i * 29 + message * 101 + (i >> 8)) & 0xff);
}

// Both ranks: one CQ, a UD or UC QP, a registered buffer; UC connected
// with a 2 KiB path MTU.
struct Setup {
  Harness h;
  std::uint32_t cq, qp, key;
  std::uint8_t* buf;
  Peer peer;
  explicit Setup(QpType type) {
    cq = h.create_cq();
    Harness::QpSpec s;
    s.type = type;
    s.send_cqn = s.recv_cqn = cq;
    qp = h.create_qp(s);
    buf = static_cast<std::uint8_t*>(h.alloc(kBufBytes));
    std::memset(buf, 0, kBufBytes);
    key = h.reg_mr(buf, kBufBytes, mpt::kLocalWrite);
    peer = exchange(Peer{qp, h.lid(), key, reinterpret_cast<std::uint64_t>(buf)});
    if (type == QpType::Uc)
      h.connect(qp, peer.qpn, peer.lid, 4);
    else
      h.connect(qp, 0, 0);
  }
};

// UC: multi-packet messages over a 2 KiB MTU; UD: MTU-sized and smaller.
const std::vector<std::uint32_t> kUcSizes = {4096, 10000, 4097, 2049, 6000, 2048, 8192, 1};
const std::vector<std::uint32_t> kUdSizes = {2048, 2048, 1000, 2048, 1, 2048};

Harness::SendArgs send_args(const Setup& s, bool ud, std::uint32_t message, std::uint32_t len) {
  Harness::SendArgs a;
  a.wr_id = message;
  a.local = s.buf;
  a.len = len;
  a.lkey = s.key;
  if (ud) {
    a.ud_dqpn = s.peer.qpn;
    a.ud_dlid = s.peer.lid;
    a.ud_qkey = 0x11111111;
  }
  return a;
}

// Sender: one buffer for every message, refilled with the next message's
// pattern the moment the previous send completion is polled.
void send_refilling(Setup& s, bool ud, const std::vector<std::uint32_t>& sizes) {
  fill(s.buf, sizes[0], 0);
  s.h.post_send(s.qp, send_args(s, ud, 0, sizes[0]));
  for (std::uint32_t i = 0; i < sizes.size(); ++i) {
    Cqe c{};
    ASSERT_TRUE(s.h.wait(s.cq, c)) << "send completion " << i;
    EXPECT_EQ(c.status, 0) << "message " << i << ": " << cqe_status_name(c.status);
    EXPECT_EQ(c.wr_id, i);
    if (i + 1 == sizes.size()) break;
    fill(s.buf, sizes[i + 1], i + 1);
    s.h.post_send(s.qp, send_args(s, ud, i + 1, sizes[i + 1]));
  }
}

void receive_and_check(Setup& s, bool ud, const std::vector<std::uint32_t>& sizes) {
  std::vector<std::uint8_t> expect(kSlot);
  for (std::uint32_t i = 0; i < sizes.size(); ++i) {
    Cqe c{};
    ASSERT_TRUE(s.h.wait(s.cq, c)) << "receive completion " << i;
    EXPECT_EQ(c.status, 0) << cqe_status_name(c.status);
    EXPECT_EQ(c.wr_id, 100u + i);
    EXPECT_EQ(c.byte_len, sizes[i] + (ud ? kGrh : 0));
    const std::uint8_t* got = s.buf + kSlot * i + (ud ? kGrh : 0);
    fill(expect.data(), sizes[i], i);
    for (std::uint32_t b = 0; b < sizes[i]; ++b)
      if (got[b] != expect[b]) {
        ADD_FAILURE() << "message " << i << " (" << sizes[i] << " bytes): byte " << b << " is "
                      << static_cast<int>(got[b]) << ", sent " << static_cast<int>(expect[b]);
        break;
      }
  }
}

// Argument "ud" or "uc".
int refill_on_completion(int argc, char** argv) {
  const bool ud = argc > 1 && std::string(argv[1]) == "ud";
  const std::vector<std::uint32_t>& sizes = ud ? kUdSizes : kUcSizes;
  Setup s(ud ? QpType::Ud : QpType::Uc);
  const bool sender = nicsim_workload_rank() == 0;
  if (!sender)
    for (std::uint32_t i = 0; i < sizes.size(); ++i) s.h.post_recv(s.qp, s.buf + kSlot * i, kSlot, s.key, 100 + i);
  nicsim_barrier();
  if (sender)
    send_refilling(s, ud, sizes);
  else
    receive_and_check(s, ud, sizes);
  return ::testing::Test::HasFailure() ? 1 : 0;
}
const BuiltinProgram reg1("t_unreliable_refill", refill_on_completion, "test");

// The sender frees the source of a 6000-byte UC send right after posting it:
// the payload reads master-abort, so the send completes with a local
// protection error (never success) and the send queue stops (SQE); a send
// posted then is flushed. No message arrives.
int read_fails(int, char**) {
  Setup s(QpType::Uc);
  const bool sender = nicsim_workload_rank() == 0;
  if (!sender) s.h.post_recv(s.qp, s.buf, kSlot, s.key, 100);
  nicsim_barrier();
  if (sender) {
    auto* doomed = static_cast<std::uint8_t*>(s.h.alloc(8192));
    fill(doomed, 6000, 0);
    Harness::SendArgs a = send_args(s, false, 0, 6000);
    a.local = doomed;
    a.lkey = s.h.reg_mr(doomed, 8192, mpt::kLocalWrite);
    s.h.post_send(s.qp, a);
    s.h.node().host().memory().free(doomed);
    Cqe c{};
    EXPECT_TRUE(s.h.wait(s.cq, c)) << "no send completion";
    EXPECT_EQ(c.wr_id, 0u);
    EXPECT_EQ(c.status, static_cast<std::uint8_t>(CqeStatus::LocalProtectionError)) << cqe_status_name(c.status);
    EXPECT_EQ(s.h.hca().qp(s.qp)->state(), QpState::Sqe);
    // In SQE the send queue takes no new work: a send posted now completes
    // with a flush error and sends nothing.
    fill(s.buf, 64, 1);
    Harness::SendArgs again = send_args(s, false, 1, 64);
    s.h.post_send(s.qp, again);
    EXPECT_TRUE(s.h.wait(s.cq, c)) << "no completion for the send posted in SQE";
    EXPECT_EQ(c.wr_id, 1u);
    EXPECT_EQ(c.status, static_cast<std::uint8_t>(CqeStatus::WrFlushError)) << cqe_status_name(c.status);
  } else {
    Cqe c{};
    EXPECT_FALSE(s.h.wait(s.cq, c, 2 * kMs)) << "a message whose payload could not be read arrived";
  }
  nicsim_barrier();
  return ::testing::Test::HasFailure() ? 1 : 0;
}
const BuiltinProgram reg2("t_unreliable_read_fails", read_fails, "test");

Scenario two_hcas(const std::string& program, const std::string& args = "") {
  return nicsim::testing::load_text(R"(
    topology { star { hosts: 2 } nic: "hca" }
    subnet_manager { off: true }  # register-level harness: static addressing
    workload { program: ")" + program +
                                    R"(" nodes: "*" )" + args + R"( })");
}

// Runs the scenario. Simulation errors are failures, except when
// `expected_error` is given: then there must be some, each containing it.
void run(const Scenario& sc, const std::string& expected_error = "") {
  nicsim::testing::RunOptions o;
  o.expect_clean = expected_error.empty();
  const nicsim::testing::RunResult r = nicsim::testing::run_scenario(sc, o);
  if (expected_error.empty()) return;
  EXPECT_FALSE(r.errors.empty());
  for (const std::string& e : r.errors) EXPECT_NE(e.find(expected_error), std::string::npos) << e;
  EXPECT_TRUE(r.status.all_finished);
}

TEST(HcaUc, BufferRefilledOnSendCompletionNeverChangesTheMessage) {
  run(two_hcas("t_unreliable_refill", R"(args: "uc")"));
}
TEST(HcaUd, BufferRefilledOnSendCompletionNeverChangesTheMessage) {
  run(two_hcas("t_unreliable_refill", R"(args: "ud")"));
}
TEST(HcaUc, FailedPayloadReadCompletesWithAnError) { run(two_hcas("t_unreliable_read_fails"), "master abort"); }

}  // namespace
