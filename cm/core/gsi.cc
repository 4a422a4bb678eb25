// The node's GSI agent: QP1 through the kernel verbs, its receive slots and
// send slots in node memory, the CM thread that polls them and runs the
// queued work, the interrupt line for consumer upcalls, and the node's start
// (address registration at the SA).
#include <rdma/ib_verbs.h>

#include <cstring>

#include "cm/core/cm_node.h"
#include "cm/kverbs/kverbs.h"
#include "core/params.h"
#include "core/sim.h"
#include "world/programs.h"
#include "world/node.h"

namespace nicsim::cm {

namespace {
constexpr std::uint32_t kRecvSlots = 64;
constexpr std::uint32_t kSendSlots = 64;
constexpr std::uint32_t kGrh = 40;
constexpr std::uint32_t kRecvBytes = kGrh + mad::kBytes;
constexpr std::uint64_t kSendTag = 1ull << 32;

const ParamRegistration cm_params(
    "host", "",
    {
        {"cm.response_timeout",
         UnitKind::Time,
         "1ms",
         "5us",
         "10s",
         {},
         "how long the CM waits for the reply to a REQ, REP or DREQ before sending it again (the REQ's Remote "
         "and Local CM Response Timeouts are the smallest exponents covering it); a connect's timeout argument "
         "replaces it"},
        {"cm.max_retries",
         UnitKind::Count,
         "3",
         "0",
         "15",
         {},
         "resends of an unanswered REQ, REP or DREQ (the REQ's Max CM Retries); then the connection is "
         "unreachable (DREQ: disconnected)"},
        {"cm.mra_after",
         UnitKind::Time,
         "400us",
         "0ps",
         "10s",
         {},
         "the passive side sends an MRA when the consumer has not accepted or rejected a REQ within this time"},
        {"cm.service_timeout",
         UnitKind::Time,
         "16ms",
         "5us",
         "100s",
         {},
         "the MRA's Service Timeout: how much longer the active side then waits for the REP"},
        {"cm.timewait",
         UnitKind::Time,
         "200us",
         "0ps",
         "10s",
         {},
         "how long a disconnected QP number stays out of use for a new connection"},
        {"cm.sa_timeout", UnitKind::Time, "100us", "1us", "10s", {}, "wait for the SA's answer to one query"},
        {"cm.sa_retries", UnitKind::Count, "5", "0", "100", {}, "resends of an unanswered SA query"},
        {"cm.sa_lid",
         UnitKind::Count,
         "0",
         "0",
         "49151",
         {},
         "LID of the subnet administrator; 0: the port's MasterSMLID, or LID 1 (the first node, where the "
         "world's static addressing and the subnet manager put it) when no SM set one"},
        {"cm.path_cache_lifetime",
         UnitKind::Time,
         "1s",
         "0ps",
         "1000s",
         {},
         "how long a resolved address and path stay in the node's cache (0: never cached)"},
        {"cm.ipv4",
         UnitKind::Text,
         "",
         "",
         "",
         {},
         "IPv4 address of the node's HCA port 1 (dotted quad); empty: 10.x.y.z with x.y.z = node index + 1"},
        {"cost.cm_mad",
         UnitKind::Time,
         "2us",
         "0ps",
         "1s",
         {},
         "CM thread, per MAD built or handled: parse, state machine, connection lookup"},
    });
}  // namespace

CmNode::CmNode(host::Host& host, ib_device* dev) : host_(host), dev_(dev), wq_(new host::WaitQueue(host)) {}

CmNode::~CmNode() = default;

CmNode* node_cm_if_started(host::Host& h) { return h.software<CmNode>(); }

CmNode* node_cm(const std::function<void(CmNode&)>& setup) {
  host::Host* h = host::Host::current_host();
  if (!h) return nullptr;
  if (CmNode* n = h->software<CmNode>()) return n;
  ib_device* dev = kverbs::node_device();
  if (!dev) return nullptr;
  if (CmNode* n = h->software<CmNode>()) return n;  // started while the device opened
  CmNode& n = h->add_software(std::make_unique<CmNode>(*h, dev));
  n.start(setup);
  return &n;
}

bool CmNode::wait_port_active() {
  // A subnet manager may still be sweeping: the port's LID and the SM's
  // are only known once it is Active.
  ib_port_attr pa{};
  for (Tick waited = 0;; waited += 20 * kUs) {
    if (ib_query_port(dev_, 1, &pa)) return false;
    if (pa.state == IB_PORT_ACTIVE) break;
    if (waited >= kSec) return false;
    host_.sleep(20 * kUs);
  }
  lid_ = pa.lid;
  const std::uint64_t sa = host_.params().count("cm.sa_lid");
  sa_lid_ = static_cast<std::uint16_t>(sa ? sa : pa.sm_lid ? pa.sm_lid : 1);
  ib_gid gid{};
  if (ib_query_gid(dev_, 1, 0, &gid)) return false;
  std::memcpy(gid_.data(), gid.raw, gid_.size());
  return true;
}

bool CmNode::open_gsi() {
  if (!wait_port_active()) return false;
  ca_guid_ = mad::get(reinterpret_cast<const std::uint8_t*>(&dev_->node_guid), 8);
  if (!(pd_ = ib_alloc_pd(dev_))) return false;
  cq_ = ib_create_cq(
      dev_,
      [](ib_cq*, void* ctx) {
        auto* n = static_cast<CmNode*>(ctx);
        n->cq_fired_ = true;
        n->wq_->notify_all();
      },
      nullptr, this, static_cast<int>(kRecvSlots + kSendSlots));
  if (!cq_) return false;
  ib_qp_init_attr ia{};
  ia.send_cq = ia.recv_cq = cq_;
  ia.cap.max_send_wr = kSendSlots;
  ia.cap.max_recv_wr = kRecvSlots;
  ia.cap.max_send_sge = ia.cap.max_recv_sge = 1;
  ia.sq_sig_type = IB_SIGNAL_ALL_WR;
  ia.qp_type = IB_QPT_GSI;
  ia.port_num = 1;
  if (!(qp1_ = ib_create_qp(pd_, &ia))) return false;
  ib_qp_attr a{};
  a.qp_state = IB_QPS_INIT;
  a.qkey = mad::kGsiQkey;
  if (ib_modify_qp(qp1_, &a, IB_QP_STATE | IB_QP_PKEY_INDEX | IB_QP_QKEY)) return false;
  a.qp_state = IB_QPS_RTR;
  if (ib_modify_qp(qp1_, &a, IB_QP_STATE)) return false;
  a.qp_state = IB_QPS_RTS;
  a.sq_psn = 0;
  if (ib_modify_qp(qp1_, &a, IB_QP_STATE | IB_QP_SQ_PSN)) return false;
  const std::size_t bytes = kRecvSlots * kRecvBytes + kSendSlots * mad::kBytes;
  mem_ = static_cast<std::uint8_t*>(host_.memory().alloc(bytes, 64));
  if (!mem_ || !(mr_ = ib_get_dma_mr(pd_, IB_ACCESS_LOCAL_WRITE))) return false;
  if (!kverbs::dma_map(mr_, mem_, bytes)) return false;
  send_busy_.assign(kSendSlots, false);
  for (std::uint32_t i = 0; i < kRecvSlots; ++i) post_recv(i);
  return true;
}

bool CmNode::start(const std::function<void(CmNode&)>& setup) {
  // Port 1's configured address (the scenario's Node.ipv4, or its default
  // scheme).
  ipv4_ = host_.ipv4(1) ? host_.ipv4(1) : default_ipv4(host_.node_id());
  if (!open_gsi()) {
    nicsim_log("ib_cm: the GSI agent could not start on this node");
    return false;
  }
  irq_ = host_.irq().attach("ib_cm", [this] {
    while (!upcalls_.empty()) {
      auto fn = std::move(upcalls_.front());
      upcalls_.pop_front();
      fn();
    }
  });
  Sim::get().fsm().declare<CmMachine>();
  set_class_handler(mad::kClassCm,
                    [this](const std::uint8_t* m, const MadSource& s) { Protocol::on_mad(*this, m, s); });
  host_.spawn("ib_cm", [this] { thread_body(); });
  if (setup) setup(*this);
  return register_address();
}

void CmNode::post(std::function<void()> work) {
  work_.push_back(std::move(work));
  wq_->notify_all();
}

void CmNode::upcall(std::function<void()> fn) {
  upcalls_.push_back(std::move(fn));
  host_.irq().raise(irq_);
}

std::unique_ptr<host::Timer> CmNode::make_timer(std::string name, std::function<void()> work) {
  return std::make_unique<host::Timer>(host_, std::move(name), [this, w = std::move(work)] { post(w); });
}

void CmNode::thread_body() {
  for (;;) {
    while (!work_.empty()) {
      auto w = std::move(work_.front());
      work_.pop_front();
      w();
    }
    drain_cq();
    if (!work_.empty()) continue;
    cq_fired_ = false;
    ib_req_notify_cq(cq_, IB_CQ_NEXT_COMP);
    drain_cq();
    while (work_.empty() && !cq_fired_) wq_->wait();
  }
}

void CmNode::post_recv(std::uint32_t slot) {
  ib_sge sge{};
  sge.addr = reinterpret_cast<std::uint64_t>(mem_ + slot * kRecvBytes);
  sge.length = kRecvBytes;
  sge.lkey = mr_->lkey;
  ib_recv_wr wr{};
  wr.wr_id = slot;
  wr.sg_list = &sge;
  wr.num_sge = 1;
  ib_recv_wr* bad = nullptr;
  ib_post_recv(qp1_, &wr, &bad);
}

void CmNode::drain_cq() {
  ib_wc wc[8];
  for (int n; (n = ib_poll_cq(cq_, 8, wc)) > 0;) {
    for (int i = 0; i < n; ++i) {
      const ib_wc& w = wc[i];
      if (w.wr_id & kSendTag) {
        send_busy_[static_cast<std::size_t>(w.wr_id & 0xffff)] = false;
        continue;
      }
      const auto slot = static_cast<std::uint32_t>(w.wr_id);
      if (w.status == IB_WC_SUCCESS) {
        MadSource from;
        from.slid = w.slid;
        from.src_qp = w.src_qp;
        from.pkey_index = w.pkey_index;
        ++counters_.mads_received;
        host_.work("cm_mad");
        handle_mad(mem_ + slot * kRecvBytes + kGrh, from);
      }
      if (w.status != IB_WC_WR_FLUSH_ERR) post_recv(slot);
    }
  }
}

void CmNode::handle_mad(const std::uint8_t* m, const MadSource& from) {
  if (m[mad::kBaseVersion] != 1) return;
  const std::uint8_t cls = m[mad::kMgmtClass];
  if (cls == mad::kClassSa && (m[mad::kMethod] & 0x80)) return on_sa_response(m);
  if (auto it = handlers_.find(cls); it != handlers_.end()) it->second(m, from);
}

ib_ah* CmNode::ah_for(std::uint16_t dlid) {
  if (auto it = ahs_.find(dlid); it != ahs_.end()) return it->second;
  ib_ah_attr a{};
  a.dlid = dlid;
  a.port_num = 1;
  ib_ah* ah = ib_create_ah(pd_, &a);
  if (ah) ahs_[dlid] = ah;
  return ah;
}

bool CmNode::send_mad(std::uint16_t dlid, const std::uint8_t* m) {
  std::uint32_t slot = 0;
  while (slot < kSendSlots && send_busy_[slot]) ++slot;
  ib_ah* ah = ah_for(dlid);
  if (slot == kSendSlots || !ah) return false;
  std::uint8_t* buf = mem_ + kRecvSlots * kRecvBytes + slot * mad::kBytes;
  std::memcpy(buf, m, mad::kBytes);
  host_.work("cm_mad");
  ib_sge sge{};
  sge.addr = reinterpret_cast<std::uint64_t>(buf);
  sge.length = mad::kBytes;
  sge.lkey = mr_->lkey;
  ib_send_wr wr{};
  wr.wr_id = kSendTag | slot;
  wr.sg_list = &sge;
  wr.num_sge = 1;
  wr.opcode = IB_WR_SEND;
  wr.send_flags = IB_SEND_SIGNALED;
  wr.wr.ud.ah = ah;
  wr.wr.ud.remote_qpn = 1;
  wr.wr.ud.remote_qkey = mad::kGsiQkey;
  ib_send_wr* bad = nullptr;
  if (ib_post_send(qp1_, &wr, &bad)) return false;
  send_busy_[slot] = true;
  ++counters_.mads_sent;
  return true;
}

std::uint8_t exponent_for(Tick t) {
  std::uint8_t e = 0;
  while (e < 31 && timeout_of(e) < t) ++e;
  return e;
}

Tick response_timeout(const host::Host& h) { return h.params().time("cm.response_timeout"); }

}  // namespace nicsim::cm
