// A minimal driver for HCA model tests: it talks to the HCA only as the
// verbs driver must (HCR commands by MMIO with mailboxes in node memory, WQE
// rings, doorbells, CQ rings with owner bits), so the model is exercised
// end to end from a simulated host thread without the verbs layer.
#pragma once
#include <cstring>
#include <vector>

#include "core/sim.h"
#include "hca_model/hca.h"
#include "hca_model/hca_regs.h"
#include "nicsim/app.h"
#include "world/programs.h"
#include "world/world.h"

namespace nicsim::hca::testing {

struct Cqe {
  std::uint64_t wr_id;
  std::uint32_t qpn, byte_len, imm, src_qp;
  std::uint8_t opcode, status, flags;
};

class Harness {
 public:
  Harness()
      : prog_(*current_program()),
        node_(prog_.node()),
        hca_(*node_.nic_as<Hca>()),
        bus_(node_.bus()),
        mem_(node_.host().memory()) {
    in_ = static_cast<std::uint8_t*>(mem_.alloc(4096));
    out_ = static_cast<std::uint8_t*>(mem_.alloc(4096));
    bar_ = hca_.bar0();
    // Bring the port up; one event queue is enough for the tests.
    cmd(Command::INIT_IB, 1);
  }

  Hca& hca() { return hca_; }
  Node& node() { return node_; }
  std::uint16_t lid() const { return hca_.port_lid(1); }

  std::uint8_t cmd(Command op, std::uint32_t in_mod, std::uint64_t in_param = 0, std::uint64_t out_param = 0) {
    std::uint8_t hcr[0x1c] = {};
    put(hcr, reg::hcr_in_param, in_param ? in_param : reinterpret_cast<std::uint64_t>(in_));
    put(hcr, reg::hcr_in_modifier, in_mod);
    put(hcr, reg::hcr_out_param, out_param ? out_param : reinterpret_cast<std::uint64_t>(out_));
    put(hcr, reg::hcr_token, 0);
    bus_.mmio_write(bar_, hcr, 0x18);
    std::uint32_t go = reg::kHcrGo | static_cast<std::uint16_t>(op);
    bus_.mmio_write(bar_ + reg::hcr_go_opcode.offset, &go, 4);
    for (;;) {
      std::uint32_t v = 0;
      bus_.mmio_read(bar_ + reg::hcr_go_opcode.offset, &v, 4);
      if (!(v & reg::kHcrGo)) return static_cast<std::uint8_t>(v >> reg::kHcrStatusShift);
      node_.host().sleep(2 * kUs);
    }
  }

  std::uint32_t create_cq(std::uint32_t entries = 256) {
    const std::uint32_t cqn = next_cqn_++;
    auto* ring = static_cast<std::uint8_t*>(mem_.alloc(entries * cqe::kSize));
    std::memset(ring, 0, entries * cqe::kSize);
    cqs_.resize(cqn + 1);
    cqs_[cqn] = Cq{ring, entries, 0};
    std::memset(in_, 0, cqc::kSize);
    put(in_, cqc::base, reinterpret_cast<std::uint64_t>(ring));
    put(in_, cqc::entries, entries);
    EXPECT_EQ(cmd(Command::SW2HW_CQ, cqn), 0);
    return cqn;
  }

  struct QpSpec {
    QpType type = QpType::Rc;
    std::uint32_t send_cqn = 0, recv_cqn = 0;
    std::uint32_t sq_entries = 64, rq_entries = 64;
    std::uint32_t access = mpt::kRemoteRead | mpt::kRemoteWrite | mpt::kRemoteAtomic;
    std::uint32_t qkey = 0x11111111;
  };

  std::uint32_t create_qp(const QpSpec& s) {
    const std::uint32_t qpn = next_qpn_++;
    Qp q;
    q.sq = static_cast<std::uint8_t*>(mem_.alloc(s.sq_entries << 8));
    q.rq = static_cast<std::uint8_t*>(mem_.alloc(s.rq_entries << 6));
    q.sq_entries = s.sq_entries;
    q.rq_entries = s.rq_entries;
    qps_[qpn] = q;
    std::memset(in_, 0, qpc::kSize);
    put(in_, qpc::from_state, static_cast<std::uint8_t>(QpState::Reset));
    put(in_, qpc::to_state, static_cast<std::uint8_t>(QpState::Init));
    put(in_, qpc::qp_type, static_cast<std::uint8_t>(s.type));
    put(in_, qpc::opt_mask,
        qp_mask::kQueues | qp_mask::kPort | qp_mask::kPkeyIndex | qp_mask::kAccess | qp_mask::kQkey);
    put(in_, qpc::send_cqn, s.send_cqn);
    put(in_, qpc::recv_cqn, s.recv_cqn);
    put(in_, qpc::sq_base, reinterpret_cast<std::uint64_t>(q.sq));
    put(in_, qpc::sq_entries, s.sq_entries);
    put(in_, qpc::sq_stride_log, 8);
    put(in_, qpc::rq_base, reinterpret_cast<std::uint64_t>(q.rq));
    put(in_, qpc::rq_entries, s.rq_entries);
    put(in_, qpc::rq_stride_log, 6);
    put(in_, qpc::port, 1);
    put(in_, qpc::access, s.access);
    put(in_, qpc::qkey, s.qkey);
    EXPECT_EQ(cmd(Command::MODIFY_QP, qpn), 0);
    return qpn;
  }

  // INIT -> RTR -> RTS for a connected QP (UD: only the PSN matters).
  void connect(std::uint32_t qpn, std::uint32_t dest_qpn, std::uint16_t dlid, std::uint8_t mtu = 4,
               std::uint8_t timeout = 14, std::uint8_t retry = 7, std::uint8_t rnr_retry = 7,
               std::uint8_t min_rnr = 1) {
    std::memset(in_, 0, qpc::kSize);
    put(in_, qpc::from_state, static_cast<std::uint8_t>(QpState::Init));
    put(in_, qpc::to_state, static_cast<std::uint8_t>(QpState::Rtr));
    put(in_, qpc::opt_mask,
        qp_mask::kAv | qp_mask::kMtu | qp_mask::kDestQpn | qp_mask::kRqPsn | qp_mask::kRespRes | qp_mask::kMinRnrTimer);
    put(in_, qpc::av_dlid, dlid);
    put(in_, qpc::mtu, mtu);
    put(in_, qpc::dest_qpn, dest_qpn);
    put(in_, qpc::rq_psn, 100);
    put(in_, qpc::resp_res, 4);
    put(in_, qpc::min_rnr_timer, min_rnr);
    EXPECT_EQ(cmd(Command::MODIFY_QP, qpn), 0);
    std::memset(in_, 0, qpc::kSize);
    put(in_, qpc::from_state, static_cast<std::uint8_t>(QpState::Rtr));
    put(in_, qpc::to_state, static_cast<std::uint8_t>(QpState::Rts));
    put(in_, qpc::opt_mask,
        qp_mask::kSqPsn | qp_mask::kLocalAckTimeout | qp_mask::kRetryCnt | qp_mask::kRnrRetry | qp_mask::kInitDepth);
    put(in_, qpc::sq_psn, 100);
    put(in_, qpc::local_ack_timeout, timeout);
    put(in_, qpc::retry_cnt, retry);
    put(in_, qpc::rnr_retry, rnr_retry);
    put(in_, qpc::init_depth, 4);
    EXPECT_EQ(cmd(Command::MODIFY_QP, qpn), 0);
  }

  // Registers [addr, addr+len) through a page list (WRITE_MTT + SW2HW_MPT).
  std::uint32_t reg_mr(void* addr, std::size_t len, std::uint32_t access, std::uint32_t pd = 0) {
    if (!mem_.contains(reinterpret_cast<std::uint64_t>(addr), len)) mem_.pin(addr, len);
    const std::uint64_t start = reinterpret_cast<std::uint64_t>(addr);
    const std::uint64_t first_page = start & ~0xfffULL;
    const std::uint64_t pages = (start + len + 0xfff) / 0x1000 - start / 0x1000;
    const std::uint32_t mtt_first = next_mtt_;
    for (std::uint64_t done = 0; done < pages;) {
      const std::uint32_t n = static_cast<std::uint32_t>(std::min<std::uint64_t>(pages - done, kMttPerCommand));
      put(in_, Field{0, 4, "count"}, n);
      for (std::uint32_t i = 0; i < n; ++i) put(in_, Field{8 + 8 * i, 8, "page"}, first_page + (done + i) * 0x1000);
      EXPECT_EQ(cmd(Command::WRITE_MTT, static_cast<std::uint32_t>(mtt_first + done)), 0);
      done += n;
    }
    next_mtt_ += static_cast<std::uint32_t>(pages);
    const std::uint32_t index = next_mpt_++;
    const std::uint32_t key = (index << 8) | 0x5a;
    std::memset(in_, 0, mpt::kSize);
    put(in_, mpt::flags, access | mpt::kValid);
    put(in_, mpt::pd, pd);
    put(in_, mpt::key, key);
    put(in_, mpt::start, start);
    put(in_, mpt::length, len);
    put(in_, mpt::mtt_first, mtt_first);
    put(in_, mpt::page_size_log, 12);
    EXPECT_EQ(cmd(Command::SW2HW_MPT, index), 0);
    return key;
  }

  struct SendArgs {
    swqe::Op op = swqe::Op::Send;
    std::uint8_t flags = swqe::kSignaled;
    std::uint64_t wr_id = 0;
    const void* local = nullptr;
    std::uint32_t len = 0, lkey = 0;
    std::uint64_t remote_va = 0;
    std::uint32_t rkey = 0, imm = 0;
    std::uint64_t swap_add = 0, compare = 0;
    std::uint32_t ud_dqpn = 0, ud_qkey = 0;
    std::uint16_t ud_dlid = 0;
  };

  void post_send(std::uint32_t qpn, const SendArgs& a) {
    Qp& q = qps_.at(qpn);
    std::uint8_t* w = q.sq + ((q.sq_prod % q.sq_entries) << 8);
    std::memset(w, 0, 256);
    put(w, swqe::opcode, static_cast<std::uint8_t>(a.op));
    put(w, swqe::flags, a.flags);
    put(w, swqe::wr_id, a.wr_id);
    put(w, swqe::imm, a.imm);
    put(w, swqe::rkey, a.rkey);
    put(w, swqe::remote_va, a.remote_va);
    put(w, swqe::atomic_swap_add, a.swap_add);
    put(w, swqe::atomic_compare, a.compare);
    put(w, swqe::ud_dqpn, a.ud_dqpn);
    put(w, swqe::ud_qkey, a.ud_qkey);
    put(w, swqe::ud_dlid, a.ud_dlid);
    if (a.flags & swqe::kInline) {
      put(w, swqe::inline_len, a.len);
      std::memcpy(w + swqe::kHeaderBytes, a.local, a.len);
    } else if (a.len || a.local) {
      put(w, swqe::num_ds, 1);
      std::uint8_t* d = w + swqe::kHeaderBytes;
      put(d, ds::addr, reinterpret_cast<std::uint64_t>(a.local));
      put(d, ds::length, a.len);
      put(d, ds::lkey, a.lkey);
    }
    ++q.sq_prod;
    doorbell(reg::db_send.offset, qpn, q.sq_prod);
  }

  void post_recv(std::uint32_t qpn, void* buf, std::uint32_t len, std::uint32_t lkey, std::uint64_t wr_id) {
    Qp& q = qps_.at(qpn);
    std::uint8_t* w = q.rq + ((q.rq_prod % q.rq_entries) << 6);
    std::memset(w, 0, 64);
    put(w, rwqe::num_ds, 1);
    put(w, rwqe::wr_id, wr_id);
    std::uint8_t* d = w + rwqe::kHeaderBytes;
    put(d, ds::addr, reinterpret_cast<std::uint64_t>(buf));
    put(d, ds::length, len);
    put(d, ds::lkey, lkey);
    ++q.rq_prod;
    doorbell(reg::db_recv.offset, qpn, q.rq_prod);
  }

  bool poll(std::uint32_t cqn, Cqe& out) {
    Cq& c = cqs_.at(cqn);
    const std::uint8_t* e = c.ring + static_cast<std::size_t>(c.consumer % c.entries) * cqe::kSize;
    const std::uint8_t want = ((c.consumer / c.entries) & 1) ? 0 : cqe::kOwnerHw;
    if (get(e, cqe::owner) != want) return false;
    out = Cqe{get(e, cqe::wr_id),
              static_cast<std::uint32_t>(get(e, cqe::qpn)),
              static_cast<std::uint32_t>(get(e, cqe::byte_len)),
              static_cast<std::uint32_t>(get(e, cqe::imm)),
              static_cast<std::uint32_t>(get(e, cqe::src_qp)),
              static_cast<std::uint8_t>(get(e, cqe::opcode)),
              static_cast<std::uint8_t>(get(e, cqe::status)),
              static_cast<std::uint8_t>(get(e, cqe::flags))};
    ++c.consumer;
    doorbell(reg::db_cq.offset, cqn, c.consumer);
    return true;
  }

  // Polls until a completion arrives or `timeout` passes.
  bool wait(std::uint32_t cqn, Cqe& out, Tick timeout = 10 * kMs) {
    const Tick end = now() + timeout;
    while (!poll(cqn, out)) {
      if (now() >= end) return false;
      node_.host().sleep(200 * kNs);
    }
    return true;
  }

  void* alloc(std::size_t n) { return mem_.alloc(n); }

 private:
  struct Cq {
    std::uint8_t* ring;
    std::uint32_t entries, consumer;
  };
  struct Qp {
    std::uint8_t *sq = nullptr, *rq = nullptr;
    std::uint32_t sq_entries = 0, rq_entries = 0, sq_prod = 0, rq_prod = 0;
  };
  void doorbell(std::uint32_t offset, std::uint32_t w0, std::uint32_t w1) {
    std::uint32_t v[2] = {w0, w1};
    bus_.mmio_write(bar_ + offset, v, 8);
  }
  ProgramInstance& prog_;
  Node& node_;
  Hca& hca_;
  host::HostBus& bus_;
  host::HostMemory& mem_;
  std::uint8_t* in_;
  std::uint8_t* out_;
  std::uint64_t bar_;
  std::vector<Cq> cqs_;
  std::map<std::uint32_t, Qp> qps_;
  std::uint32_t next_cqn_ = 0, next_qpn_ = 0x40, next_mpt_ = 1, next_mtt_ = 0;
};

// Bootstrap record exchanged over the management network.
struct Peer {
  std::uint32_t qpn;
  std::uint16_t lid;
  std::uint32_t rkey;
  std::uint64_t addr;
};

inline Peer exchange(const Peer& mine) {
  const std::uint32_t other = nicsim_workload_node(1 - nicsim_workload_rank());
  nicsim_mgmt_send(other, 0x100, &mine, sizeof mine);
  Peer p{};
  nicsim_mgmt_recv(other, 0x100, &p, sizeof p, nullptr, 0);
  return p;
}

}  // namespace nicsim::hca::testing
