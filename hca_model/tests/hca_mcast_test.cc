// UD multicast through the fabric: members attach their UD QP to the group
// (ATTACH_MCG), the switches replicate along the group's tree, and every
// member receives exactly one copy, byte for byte; non-members none.
#include <gtest/gtest.h>

#include "hca_model/tests/hca_harness.h"
#include "ib_fabric/switch.h"
#include "scenario/loader.h"

using namespace nicsim;
using namespace nicsim::hca;
using namespace nicsim::hca::testing;

namespace {

constexpr std::uint16_t kMlid = 0xc001;

int mcast(int, char**) {
  Harness h;
  const std::uint32_t cq = h.create_cq();
  Harness::QpSpec s;
  s.type = QpType::Ud;
  s.send_cqn = s.recv_cqn = cq;
  const std::uint32_t qp = h.create_qp(s);
  h.connect(qp, 0, 0);
  auto* buf = static_cast<std::uint8_t*>(h.alloc(4096));
  std::memset(buf, 0, 4096);
  const std::uint32_t key = h.reg_mr(buf, 4096, mpt::kLocalWrite);
  const std::uint32_t rank = nicsim_workload_rank();
  const bool member = rank != 2;  // h2 stays out of the group
  if (member) {
    std::uint8_t* m = static_cast<std::uint8_t*>(h.alloc(mcg::kSize));
    std::memset(m, 0, mcg::kSize);
    m[0] = 0xff;  // MGID ff..: a multicast GID
    put(m, mcg::mlid, kMlid);
    EXPECT_EQ(h.cmd(Command::ATTACH_MCG, qp, reinterpret_cast<std::uint64_t>(m)), 0);
    h.post_recv(qp, buf, 40 + 512, key, 1);
    h.post_recv(qp, buf + 1024, 40 + 512, key, 2);
  }
  nicsim_barrier();
  if (rank == 0) {
    for (int i = 0; i < 512; ++i) buf[2048 + i] = static_cast<std::uint8_t>(i * 3 + 1);
    Harness::SendArgs a;
    a.local = buf + 2048;
    a.len = 512;
    a.lkey = key;
    a.ud_dqpn = kMaxQpn;  // the multicast QPN
    a.ud_dlid = kMlid;
    a.ud_qkey = 0x11111111;
    a.wr_id = 7;
    h.post_send(qp, a);
    Cqe c{};
    EXPECT_TRUE(h.wait(cq, c));
    EXPECT_EQ(c.status, 0);
  }
  nicsim_sleep_ns(200'000);
  Cqe c{};
  int received = 0;
  while (h.poll(cq, c))
    if (c.flags & cqe::kIsRecv) {
      ++received;
      EXPECT_EQ(c.status, 0);
      EXPECT_EQ(c.byte_len, 40u + 512);
      for (int i = 0; i < 512; ++i)
        if (buf[40 + i] != static_cast<std::uint8_t>(i * 3 + 1)) {
          ADD_FAILURE() << "rank " << rank << " byte " << i;
          break;
        }
    }
  nicsim_result("copies", received, "messages");
  // The sender does not get its own datagram back; members other than the
  // sender get exactly one; the non-member none.
  EXPECT_EQ(received, rank == 0 || !member ? 0 : 1) << "rank " << rank;
  nicsim_barrier();
  return ::testing::Test::HasFailure() ? 1 : 0;
}
const BuiltinProgram reg("t_hca_mcast", mcast, "test");

TEST(HcaMulticast, EveryMemberGetsExactlyOneCopy) {
  Scenario sc = load_scenario_text(R"(
    topology { leaf_spine { leaves: 2 hosts_per_leaf: 2 spines: 2 } nic: "hca" }
    subnet_manager { off: true }  # register-level harness: static addressing
    multicast { name: "g" mlid: 49153 members: "h0" members: "h1" members: "h3" }
    workload { program: "t_hca_mcast" nodes: "*" })",
                                   "mcast.textproto",
                                   [](std::string_view n) { return ProgramRegistry::instance().find(n) != nullptr; });
  Sim sim(sc.seed);
  World world(sc);
  RunStatus st = world.run();
  for (auto& e : sim.errors().all()) ADD_FAILURE() << e.where << ": " << e.message;
  EXPECT_TRUE(st.ok);
  std::uint64_t replicated = 0;
  for (std::uint32_t i = 0; i < world.num_switches(); ++i)
    replicated += world.switch_as<fabric::Switch>(i)->stats().replicated;
  // h0's leaf copies to h1 and up to a spine; that spine copies down to the
  // other leaf, which copies to h3.
  EXPECT_EQ(replicated, 4u);
}

}  // namespace
