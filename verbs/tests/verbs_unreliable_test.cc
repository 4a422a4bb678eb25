// UD and UC sends through the verbs driver, two nodes: the sender refills
// its one buffer as soon as ci_poll_cq returns each send completion and
// posts the next message from it; the receiver checks every byte of every
// message. A send completion must mean the HCA is done with the buffer.
#include "verbs/tests/verbs_test_util.h"

using namespace nicsim;
using namespace nicsim::verbs::testing;

namespace {

constexpr uint32_t kSlot = 12288;  // receive slot per message
constexpr uint32_t kGrh = 40;      // UD receives start with the GRH space
constexpr uint32_t kQkey = 0x11111111;

// UC: multi-packet messages over a 2 KiB MTU; UD: MTU-sized and smaller.
const std::vector<uint32_t> kUcSizes = {4096, 10000, 4097, 6000, 2048, 8192};
const std::vector<uint32_t> kUdSizes = {2048, 2048, 1000, 2048, 1, 2048};

uint8_t pattern(uint32_t message, uint32_t i) { return static_cast<uint8_t>(i * 13 + message * 59 + (i >> 8)); }

struct Peer {
  uint32_t qpn;
  uint16_t lid;
};

struct Side {
  Env e;
  uint8_t* buf = nullptr;
  uint32_t lkey = 0;
  ib_mr_handle_t mr = nullptr;
  ib_qp_handle_t qp = nullptr;
  ib_av_handle_t av = nullptr;  // UD: the peer
  Peer peer{};
};

bool set_up(Side& s, ib_qp_type_t type, size_t bytes) {
  const uint32_t rank = nicsim_workload_rank();
  const uint32_t other = nicsim_workload_node(1 - rank);
  if (!open_env(s.e)) return false;
  const uint16_t lid = ensure_lid(s.e, static_cast<uint16_t>(rank + 1));  // the LID the world routes here
  s.buf = static_cast<uint8_t*>(nicsim_alloc(bytes, 4096));
  ib_mr_create_t mc{s.buf, bytes, IB_AC_LOCAL_WRITE};
  uint32_t rkey;
  EXPECT_EQ(s.e.ci->register_mr(s.e.pd, &mc, &s.lkey, &rkey, &s.mr, nullptr), IB_SUCCESS);
  s.qp = make_qp(s.e, type, 16, 1);
  const Peer mine{qp_num(s.e, s.qp), lid};
  EXPECT_EQ(nicsim_mgmt_send(other, 1, &mine, sizeof mine), 0);
  EXPECT_EQ(nicsim_mgmt_recv(other, 1, &s.peer, sizeof s.peer, nullptr, 0), static_cast<long>(sizeof s.peer));
  to_rts(s.e, s.qp, type, s.peer.qpn, s.peer.lid);
  if (type == IB_QPT_UNRELIABLE_DGRM) {
    ib_av_attr_t a{};
    a.port_num = 1;
    a.dlid = cl_hton16(s.peer.lid);
    EXPECT_EQ(s.e.ci->create_av(s.e.pd, &a, &s.av, nullptr), IB_SUCCESS);
  }
  return !::testing::Test::HasFailure();
}

void post_message(Side& s, bool ud, uint32_t message, uint32_t len) {
  ib_local_ds_t ds{s.buf, len, s.lkey};
  ib_send_wr_t wr{};
  wr.wr_id = message;
  wr.wr_type = WR_SEND;
  wr.send_opt = IB_SEND_OPT_SIGNALED;
  wr.num_ds = 1;
  wr.ds_array = &ds;
  if (ud) {
    wr.dgrm.ud.remote_qp = cl_hton32(s.peer.qpn);
    wr.dgrm.ud.remote_qkey = cl_hton32(kQkey);
    wr.dgrm.ud.h_av = s.av;
  }
  ib_send_wr_t* bad = nullptr;
  EXPECT_EQ(s.e.ci->post_send(s.qp, &wr, &bad), IB_SUCCESS) << "message " << message;
}

// Busy-polls (each ci_poll_cq call costs CPU time) for one completion:
// the refill follows the CQE as closely as a consumer can.
bool busy_poll(Side& s, ib_wc_t& wc) {
  const uint64_t end = nicsim_now_ns() + 2'000'000;
  while (nicsim_now_ns() < end) {
    ib_wc_t* free_list = &wc;
    ib_wc_t* done = nullptr;
    if (s.e.ci->poll_cq(s.e.cq, &free_list, &done) == IB_SUCCESS) return true;
  }
  return false;
}

void send_refilling(Side& s, bool ud, const std::vector<uint32_t>& sizes) {
  for (uint32_t i = 0; i < sizes[0]; ++i) s.buf[i] = pattern(0, i);
  post_message(s, ud, 0, sizes[0]);
  for (uint32_t m = 0; m < sizes.size(); ++m) {
    ib_wc_t wc{};
    ASSERT_TRUE(busy_poll(s, wc)) << "send completion " << m;
    EXPECT_EQ(wc.wr_id, m);
    EXPECT_EQ(wc.status, IB_WCS_SUCCESS) << ib_get_wc_status_str(wc.status);
    if (m + 1 == sizes.size()) break;
    for (uint32_t i = 0; i < sizes[m + 1]; ++i) s.buf[i] = pattern(m + 1, i);
    post_message(s, ud, m + 1, sizes[m + 1]);
  }
}

void receive_and_check(Side& s, bool ud, const std::vector<uint32_t>& sizes) {
  for (uint32_t m = 0; m < sizes.size(); ++m) {
    const auto wcs = wait_wcs(s.e, 1);
    ASSERT_EQ(wcs.size(), 1u) << "receive completion " << m;
    EXPECT_EQ(wcs[0].wr_id, 100u + m);
    EXPECT_EQ(wcs[0].status, IB_WCS_SUCCESS) << ib_get_wc_status_str(wcs[0].status);
    EXPECT_EQ(wcs[0].length, sizes[m] + (ud ? kGrh : 0));
    const uint8_t* got = s.buf + kSlot * m + (ud ? kGrh : 0);
    for (uint32_t i = 0; i < sizes[m]; ++i)
      if (got[i] != pattern(m, i)) {
        ADD_FAILURE() << "message " << m << " (" << sizes[m] << " bytes): byte " << i << " is "
                      << static_cast<int>(got[i]) << ", sent " << static_cast<int>(pattern(m, i));
        break;
      }
  }
}

// Argument "ud" or "uc".
int refill_on_completion(int argc, char** argv) {
  const bool ud = argc > 1 && std::string(argv[1]) == "ud";
  const std::vector<uint32_t>& sizes = ud ? kUdSizes : kUcSizes;
  Side s;
  if (!set_up(s, ud ? IB_QPT_UNRELIABLE_DGRM : IB_QPT_UNRELIABLE_CONN, kSlot * sizes.size())) return 1;
  const bool sender = nicsim_workload_rank() == 0;
  if (!sender)
    for (uint32_t m = 0; m < sizes.size(); ++m) {
      ib_local_ds_t ds{s.buf + kSlot * m, kSlot, s.lkey};
      ib_recv_wr_t rw{nullptr, 100u + m, 1, &ds};
      ib_recv_wr_t* bad = nullptr;
      EXPECT_EQ(s.e.ci->post_recv(s.qp, &rw, &bad), IB_SUCCESS);
    }
  nicsim_barrier();  // the receives are posted
  if (sender)
    send_refilling(s, ud, sizes);
  else
    receive_and_check(s, ud, sizes);
  nicsim_barrier();
  if (s.av) {
    EXPECT_EQ(s.e.ci->destroy_av(s.av, nullptr), IB_SUCCESS);
  }
  EXPECT_EQ(s.e.ci->destroy_qp(s.qp, nullptr), IB_SUCCESS);
  EXPECT_EQ(s.e.ci->deregister_mr(s.mr, nullptr), IB_SUCCESS);
  close_env(s.e);
  return ::testing::Test::HasFailure() ? 1 : 0;
}
const BuiltinProgram reg("verbs_test_unreliable_refill", refill_on_completion, "test");

void run_with_args(const std::string& args) {
  Scenario sc = scenario(R"(
    name: "verbs"
    topology { star { hosts: 2 } nic: "hca" }
    subnet_manager { off: true }  # driver tests: ports Active from INIT_IB
    workload { program: "verbs_test_unreliable_refill" nodes: "h0" nodes: "h1" args: ")" +
                         args + R"(" })");
  Sim sim(sc.seed);
  World world(sc);
  const RunStatus st = world.run();
  for (const auto& e : sim.errors().all()) ADD_FAILURE() << e.where << ": " << e.message;
  EXPECT_TRUE(st.ok);
  for (const auto& p : world.programs()) EXPECT_EQ(p->exit_code(), 0) << "rank " << p->rank();
}

}  // namespace

TEST(VerbsUnreliable, UcBufferRefilledOnSendCompletionNeverChangesTheMessage) { run_with_args("uc"); }
TEST(VerbsUnreliable, UdBufferRefilledOnSendCompletionNeverChangesTheMessage) { run_with_args("ud"); }
