// The kernel verbs (rdma/ib_verbs.h) over ci_interface_t, two-sided and
// without the CM: an RC connection set up by hand with ib_modify_qp masks,
// a send with immediate data checked byte by byte, the completion handler
// in interrupt context, a memory window bound on the QP, and the errors
// the header documents.
#include <cerrno>
#include <cstring>

#include <rdma/ib_verbs.h>

#include "cm/kverbs/kverbs.h"
#include "host/host.h"
#include "nicsim/app.h"
#include "tests/world_run.h"
#include "world/programs.h"

namespace nicsim::kverbs {
namespace {

constexpr std::uint32_t kTag = 0x6b760001;
constexpr int kBytes = 1000;

struct Peer {
  std::uint32_t qpn;
  std::uint16_t lid;
};

struct Notify {
  int calls = 0, in_interrupt = 0;
};

void bad_calls(ib_device* dev, ib_pd* pd, ib_cq* cq) {
  EXPECT_EQ(ib_alloc_pd(nullptr), nullptr);
  EXPECT_EQ(ib_create_cq(dev, nullptr, nullptr, nullptr, 0), nullptr);
  EXPECT_EQ(ib_poll_cq(nullptr, 1, nullptr), -EINVAL);
  EXPECT_EQ(ib_dealloc_pd(reinterpret_cast<ib_pd*>(cq)), -EINVAL);
  ib_qp_init_attr ia{};
  ia.send_cq = ia.recv_cq = cq;
  ia.qp_type = IB_QPT_RAW_ETY;
  EXPECT_EQ(ib_create_qp(pd, &ia), nullptr);
  ib_port_attr pa{};
  EXPECT_EQ(ib_query_port(dev, 3, &pa), -EINVAL);
}

ib_qp* make_qp(ib_pd* pd, ib_cq* cq) {
  ib_qp_init_attr ia{};
  ia.send_cq = ia.recv_cq = cq;
  ia.cap.max_send_wr = ia.cap.max_recv_wr = 4;
  ia.cap.max_send_sge = ia.cap.max_recv_sge = 1;
  ia.qp_type = IB_QPT_RC;
  return ib_create_qp(pd, &ia);
}

void connect_qp(ib_qp* qp, const Peer& peer) {
  ib_qp_attr a{};
  a.qp_state = IB_QPS_INIT;
  a.port_num = 1;
  EXPECT_EQ(ib_modify_qp(qp, &a, IB_QP_STATE | IB_QP_PKEY_INDEX | IB_QP_PORT), -EINVAL);  // RC needs access flags
  a.qp_access_flags = IB_ACCESS_LOCAL_WRITE;
  ASSERT_EQ(ib_modify_qp(qp, &a, IB_QP_STATE | IB_QP_PKEY_INDEX | IB_QP_PORT | IB_QP_ACCESS_FLAGS), 0);
  a.qp_state = IB_QPS_RTR;
  a.path_mtu = IB_MTU_2048;
  a.dest_qp_num = peer.qpn;
  a.rq_psn = 100;
  a.min_rnr_timer = 1;
  a.ah_attr.dlid = peer.lid;
  a.ah_attr.port_num = 1;
  const int rtr =
      IB_QP_STATE | IB_QP_AV | IB_QP_PATH_MTU | IB_QP_RQ_PSN | IB_QP_MAX_DEST_RD_ATOMIC | IB_QP_MIN_RNR_TIMER;
  EXPECT_EQ(ib_modify_qp(qp, &a, rtr), -EINVAL);  // no IB_QP_DEST_QPN
  // A reserved path MTU code, as a C consumer (or a REQ's 4-bit field) can
  // put in the enum: EINVAL, read without loading an invalid enum value.
  const int reserved_mtu = 12;
  std::memcpy(&a.path_mtu, &reserved_mtu, sizeof a.path_mtu);
  EXPECT_EQ(ib_modify_qp(qp, &a, rtr | IB_QP_DEST_QPN), -EINVAL);
  a.path_mtu = IB_MTU_2048;
  ASSERT_EQ(ib_modify_qp(qp, &a, rtr | IB_QP_DEST_QPN), 0);
  a.qp_state = IB_QPS_RTS;
  a.sq_psn = 100;
  a.timeout = 14;
  a.retry_cnt = 7;
  a.rnr_retry = 7;
  ASSERT_EQ(ib_modify_qp(qp, &a,
                         IB_QP_STATE | IB_QP_SQ_PSN | IB_QP_TIMEOUT | IB_QP_RETRY_CNT | IB_QP_RNR_RETRY |
                             IB_QP_MAX_QP_RD_ATOMIC),
            0);
  ib_qp_attr q{};
  ib_qp_init_attr qi{};
  ASSERT_EQ(ib_query_qp(qp, &q, IB_QP_STATE, &qi), 0);
  EXPECT_EQ(q.qp_state, IB_QPS_RTS);
  EXPECT_EQ(q.dest_qp_num, peer.qpn);
  EXPECT_EQ(qi.qp_type, IB_QPT_RC);
}

// Waits (up to 100 ms simulated) for one completion.
void poll_one(ib_cq* cq, ib_wc& wc) {
  for (int i = 0; i < 200000; ++i) {
    if (ib_poll_cq(cq, 1, &wc) == 1) return;
    nicsim_sleep_ns(500);
  }
  ADD_FAILURE() << "no completion";
}

// Memory windows on the connected QP: a bind completes as IB_WC_BIND_MW
// with the new rkey in mw->rkey; the errors the header lists.
void windows(ib_pd* pd, ib_qp* qp, ib_cq* cq, std::uint8_t* buf, ib_mr* dma_mr) {
  ib_phys_buf pb{reinterpret_cast<u64>(buf), kBytes};
  u64 iova = pb.addr;
  ib_mr* mr = ib_reg_phys_mr(pd, &pb, 1, IB_ACCESS_MW_BIND | IB_ACCESS_REMOTE_READ, &iova);
  ASSERT_NE(mr, nullptr);
  ib_mw* mw = ib_alloc_mw(pd);
  ASSERT_NE(mw, nullptr);
  const u32 unbound = mw->rkey;
  ib_mw_bind b{mr, 21, pb.addr + 64, 128, IB_SEND_SIGNALED, IB_ACCESS_REMOTE_READ};
  EXPECT_EQ(ib_bind_mw(qp, mw, &b), 0);
  EXPECT_NE(mw->rkey, unbound);
  ib_wc wc{};
  poll_one(cq, wc);
  EXPECT_EQ(wc.wr_id, 21u);
  EXPECT_EQ(wc.status, IB_WC_SUCCESS);
  EXPECT_EQ(wc.opcode, IB_WC_BIND_MW);
  b.mw_access_flags = IB_ACCESS_REMOTE_WRITE;  // the region has no local write
  EXPECT_EQ(ib_bind_mw(qp, mw, &b), -EACCES);
  b.mw_access_flags = IB_ACCESS_REMOTE_READ;
  b.length = kBytes;  // past the region's end
  EXPECT_EQ(ib_bind_mw(qp, mw, &b), -EINVAL);
  b.mr = dma_mr;
  EXPECT_EQ(ib_bind_mw(qp, mw, &b), -EINVAL);
  EXPECT_EQ(ib_dealloc_pd(pd), -EBUSY);
  EXPECT_EQ(ib_dealloc_mw(mw), 0);
  EXPECT_EQ(ib_dealloc_mw(mw), -EINVAL);
  EXPECT_EQ(ib_alloc_mw(nullptr), nullptr);
  EXPECT_EQ(ib_dereg_mr(mr), 0);
}

int probe_main(int, char**) {
  ib_device* dev = node_device();
  if (!dev) return 1;
  const std::uint32_t rank = nicsim_workload_rank(), other = nicsim_workload_node(1 - rank);
  auto* note = new Notify;
  ib_cq* cq = ib_create_cq(
      dev,
      [](ib_cq*, void* ctx) {
        auto* n = static_cast<Notify*>(ctx);
        ++n->calls;
        host::Host* h = host::Host::current_host();
        if (h && h->in_interrupt()) ++n->in_interrupt;
      },
      nullptr, note, 8);
  ib_pd* pd = ib_alloc_pd(dev);
  bad_calls(dev, pd, cq);
  ib_device_attr da{};
  EXPECT_EQ(ib_query_device(dev, &da), 0);  // the HCA's default limits
  EXPECT_EQ(da.max_qp, 65536);
  EXPECT_EQ(da.max_cq, 65536);
  EXPECT_EQ(da.max_pd, 32768);
  EXPECT_GT(da.max_mr, 0);
  EXPECT_EQ(da.max_mw, da.max_mr);
  EXPECT_EQ(ib_query_device(dev, nullptr), -EINVAL);
  ib_qp* qp = make_qp(pd, cq);
  ib_port_attr pa{};
  for (int i = 0; i < 1000 && (ib_query_port(dev, 1, &pa) || pa.state != IB_PORT_ACTIVE); ++i)
    nicsim_sleep_ns(10000);  // the subnet manager's sweep
  EXPECT_EQ(pa.state, IB_PORT_ACTIVE);
  EXPECT_NE(pa.lid, 0);
  Peer me{qp->qp_num, pa.lid}, peer{};
  nicsim_mgmt_send(other, kTag, &me, sizeof me);
  nicsim_mgmt_recv(other, kTag, &peer, sizeof peer, nullptr, 0);
  connect_qp(qp, peer);
  EXPECT_EQ(ib_dealloc_pd(pd), -EBUSY);
  EXPECT_EQ(ib_destroy_cq(cq), -EBUSY);
  auto* buf = static_cast<std::uint8_t*>(nicsim_alloc(kBytes, 64));
  ib_mr* mr = ib_get_dma_mr(pd, IB_ACCESS_LOCAL_WRITE);
  ib_sge sge{reinterpret_cast<std::uint64_t>(buf), kBytes, mr->lkey};
  ib_wc wc{};
  if (rank == 0) {
    ib_recv_wr wr{};
    ib_recv_wr* bad = nullptr;
    wr.wr_id = 7;
    wr.sg_list = &sge;
    wr.num_sge = 1;
    EXPECT_EQ(ib_post_recv(qp, &wr, &bad), 0);
    EXPECT_EQ(ib_req_notify_cq(cq, IB_CQ_NEXT_COMP), 0);
    nicsim_barrier();
    poll_one(cq, wc);
    EXPECT_EQ(wc.wr_id, 7u);
    EXPECT_EQ(wc.status, IB_WC_SUCCESS);
    EXPECT_EQ(wc.opcode, IB_WC_RECV);
    EXPECT_EQ(wc.byte_len, static_cast<u32>(kBytes));
    EXPECT_TRUE(wc.wc_flags & IB_WC_WITH_IMM);
    EXPECT_EQ(wc.imm_data, 0x11223344u);
    EXPECT_EQ(wc.qp_num, qp->qp_num);
    for (int i = 0; i < kBytes; ++i) EXPECT_EQ(buf[i], static_cast<std::uint8_t>(i * 3)) << i;
    for (int i = 0; i < 100 && !note->calls; ++i) nicsim_sleep_ns(1000);  // the CQ's event may trail the CQE
    EXPECT_EQ(note->calls, 1);
    EXPECT_EQ(note->in_interrupt, 1);
    windows(pd, qp, cq, buf, mr);
  } else {
    for (int i = 0; i < kBytes; ++i) buf[i] = static_cast<std::uint8_t>(i * 3);
    nicsim_barrier();
    ib_send_wr wr{};
    ib_send_wr* bad = nullptr;
    wr.wr_id = 9;
    wr.sg_list = &sge;
    wr.num_sge = 1;
    wr.opcode = IB_WR_SEND_WITH_IMM;
    wr.send_flags = IB_SEND_SIGNALED;
    wr.imm_data = 0x11223344u;
    EXPECT_EQ(ib_post_send(qp, &wr, &bad), 0);
    poll_one(cq, wc);
    EXPECT_EQ(wc.wr_id, 9u);
    EXPECT_EQ(wc.status, IB_WC_SUCCESS);
    EXPECT_EQ(wc.opcode, IB_WC_SEND);
  }
  nicsim_barrier();
  EXPECT_EQ(ib_destroy_qp(qp), 0);
  EXPECT_EQ(ib_destroy_qp(qp), -EINVAL);
  EXPECT_EQ(ib_dereg_mr(mr), 0);
  EXPECT_EQ(ib_destroy_cq(cq), 0);
  EXPECT_EQ(ib_dealloc_pd(pd), 0);
  EXPECT_EQ(counts(dev).total(), 0u);
  nicsim_free(buf);
  delete note;
  return 0;
}

const BuiltinProgram reg("kverbs_probe", probe_main, "test: the kernel verbs between two nodes");

TEST(KernelVerbs, RcSendWithImmediateBetweenTwoNodes) {
  testing::run_text(
      "seed: 1\ntopology { star { hosts: 2 } nic: \"hca\" }\n"
      "workload { program: \"kverbs_probe\" nodes: \"h0\" nodes: \"h1\" }\n");
}

}  // namespace
}  // namespace nicsim::kverbs
