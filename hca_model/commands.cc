#include "hca_model/commands.h"

#include <fmt/format.h>

#include <algorithm>

#include "core/sim.h"
#include "hca_model/hca.h"
#include "hca_model/recv_engine.h"
#include "hca_model/send_engine.h"
#include "hca_model/sma.h"
#include "trace/trace.h"

namespace nicsim::hca {

namespace {
constexpr std::uint32_t kMadBytes = 256;
using S = CmdStatus;
}  // namespace

void CommandProcessor::start(std::uint8_t* hcr) {
  if (busy_) {
    Sim::get().error(hca_.name() + ".hca", "HCR go written while a command is still executing");
    return;
  }
  busy_ = true;
  hcr_ = hcr;
  const auto go = static_cast<std::uint32_t>(get(hcr, reg::hcr_go_opcode));
  opcode_ = static_cast<std::uint16_t>(go & reg::kHcrOpcodeMask);
  event_ = go & reg::kHcrEvent;
  in_param_ = get(hcr, reg::hcr_in_param);
  out_param_ = get(hcr, reg::hcr_out_param);
  in_mod_ = static_cast<std::uint32_t>(get(hcr, reg::hcr_in_modifier));
  token_ = static_cast<std::uint32_t>(get(hcr, reg::hcr_token));
  ++hca_.mutable_stats().commands;
  if (Sim::get().tracer().on(hca_.device_id(), Component::nic))
    Sim::get().tracer().record(now(), hca_.device_id(), Component::nic, "command",
                               {{"op", command_name(opcode_)}, {"in_mod", in_mod_}});
  Sim::get().calendar().at_member<&CommandProcessor::read_input>(now() + hca_.params().command_latency, this);
}

std::uint32_t CommandProcessor::input_size() const {
  switch (static_cast<Command>(opcode_)) {
    case Command::SW2HW_MPT:
      return mpt::kSize;
    case Command::WRITE_MTT:
      return 8;  // the count; the pages follow in a second read
    case Command::SW2HW_EQ:
      return eqc::kSize;
    case Command::SW2HW_CQ:
    case Command::RESIZE_CQ:
      return cqc::kSize;
    case Command::MODIFY_QP:
      return qpc::kSize;
    case Command::MAD_IFC:
      return kMadBytes;
    case Command::SET_IB:
      return portset::kSize;
    case Command::ATTACH_MCG:
    case Command::DETACH_MCG:
      return mcg::kSize;
    default:
      return 0;
  }
}

std::uint32_t CommandProcessor::output_size() const {
  switch (static_cast<Command>(opcode_)) {
    case Command::QUERY_HCA:
      return caps::kSize;
    case Command::QUERY_CQ:
      return cqc::kSize;
    case Command::QUERY_QP:
      return qpc::kSize;
    case Command::MAD_IFC:
      return kMadBytes;
    default:
      return 0;
  }
}

void CommandProcessor::read_input(std::uint64_t) {
  const std::uint32_t n = input_size();
  in_.assign(n, 0);
  out_.assign(output_size(), 0);
  if (n == 0) {
    execute();
    return;
  }
  hca_.bus().dma_read("hca.cmd", in_param_, in_.data(), n,
                      host::DmaDone{member_fn<&CommandProcessor::input_read>(), this, 0});
}

void CommandProcessor::input_read(std::uint64_t status) {
  if (status & host::kDmaFailedBit) {
    finish(S::BAD_MAILBOX);
    return;
  }
  if (static_cast<Command>(opcode_) == Command::WRITE_MTT && in_.size() == 8) {
    mtt_count_ = static_cast<std::uint32_t>(get(in_.data(), Field{0, 4, "count"}));
    if (mtt_count_ == 0 || mtt_count_ > kMttPerCommand) {
      finish(S::BAD_PARAM);
      return;
    }
    in_.assign(8 + 8ull * mtt_count_, 0);
    hca_.bus().dma_read("hca.cmd", in_param_, in_.data(), in_.size(),
                        host::DmaDone{member_fn<&CommandProcessor::input_read>(), this, 0});
    return;
  }
  execute();
}

void CommandProcessor::execute() {
  CmdStatus st;
  switch (static_cast<Command>(opcode_)) {
    case Command::QUERY_HCA:
      st = query_hca();
      break;
    case Command::INIT_IB:
      st = port_command(true);
      break;
    case Command::CLOSE_IB:
      st = port_command(false);
      break;
    case Command::SET_IB:
      st = set_ib();
      break;
    case Command::SW2HW_MPT:
      st = sw2hw_mpt();
      break;
    case Command::HW2SW_MPT:
      st = hw2sw_mpt();
      break;
    case Command::WRITE_MTT:
      st = write_mtt();
      break;
    case Command::SW2HW_EQ:
      st = sw2hw_eq();
      break;
    case Command::HW2SW_EQ:
      st = hw2sw_eq();
      break;
    case Command::SW2HW_CQ:
      st = sw2hw_cq(false);
      break;
    case Command::RESIZE_CQ:
      st = sw2hw_cq(true);
      break;
    case Command::HW2SW_CQ:
      st = hw2sw_cq();
      break;
    case Command::QUERY_CQ:
      st = query_cq();
      break;
    case Command::MODIFY_QP:
      st = modify_qp();
      break;
    case Command::QUERY_QP:
      st = query_qp();
      break;
    case Command::CONF_SPECIAL_QP:
      st = conf_special_qp();
      break;
    case Command::MAD_IFC:
      st = mad_ifc();
      break;
    case Command::ATTACH_MCG:
      st = mcg(true);
      break;
    case Command::DETACH_MCG:
      st = mcg(false);
      break;
    default:
      st = S::BAD_OP;
      break;
  }
  if (st != S::OK || out_.empty()) {
    finish(st);
    return;
  }
  hca_.bus().dma_write("hca.cmd", out_param_, out_.data(), out_.size(),
                       host::DmaDone{member_fn<&CommandProcessor::output_written>(), this, 0});
}

void CommandProcessor::output_written(std::uint64_t status) {
  finish((status & host::kDmaFailedBit) ? S::BAD_MAILBOX : S::OK);
}

void CommandProcessor::finish(CmdStatus status) {
  const std::uint32_t go = (static_cast<std::uint32_t>(status) << reg::kHcrStatusShift) | opcode_;
  put(hcr_, reg::hcr_go_opcode, go);
  busy_ = false;
  if (status != S::OK && Sim::get().tracer().on(hca_.device_id(), Component::nic))
    Sim::get().tracer().record(
        now(), hca_.device_id(), Component::nic, "command_failed",
        {{"op", command_name(opcode_)}, {"status", cmd_status_name(static_cast<std::uint8_t>(status))}});
  if (event_) hca_.post_event(Event::CommandDone, 0, token_, static_cast<std::uint8_t>(status));
}

CmdStatus CommandProcessor::query_hca() {
  const HcaParams& p = hca_.params();
  std::uint8_t* o = out_.data();
  put(o, caps::max_qp, p.max_qp);
  put(o, caps::max_qp_wr, p.max_qp_wr);
  put(o, caps::max_sge, p.max_sge);
  put(o, caps::max_cq, p.max_cq);
  put(o, caps::max_cqe, p.max_cqe);
  put(o, caps::max_mpt, p.max_mpt);
  put(o, caps::max_mtt, p.max_mtt);
  put(o, caps::max_pd, p.max_pd);
  put(o, caps::max_qp_init_rd_atom, p.max_rd_atom);
  put(o, caps::max_qp_resp_rd_atom, p.max_rd_atom);
  put(o, caps::max_mcg, p.max_mcg);
  put(o, caps::max_qp_per_mcg, p.max_qp_per_mcg);
  put(o, caps::num_ports, p.ports);
  put(o, caps::max_mtu, p.max_mtu);
  put(o, caps::local_ack_delay, p.local_ack_delay);
  put(o, caps::atomic_cap, 1);  // atomics are atomic with respect to this HCA
  put(o, caps::page_size_log, 12);
  put(o, caps::max_inline, p.max_inline);
  put(o, caps::node_guid, p.node_guid);
  put(o, caps::max_eq, 32);
  return S::OK;
}

CmdStatus CommandProcessor::sw2hw_mpt() {
  const std::uint32_t index = in_mod_;
  if (index >= hca_.params().max_mpt) return S::EXCEED_LIM;
  auto& mpts = hca_.tpt().mpts();
  if (mpts.size() <= index) mpts.resize(index + 1);
  Mpt& e = mpts[index];
  if (e.valid) return S::RESOURCE_BUSY;
  const std::uint8_t* in = in_.data();
  Mpt n;
  n.flags = static_cast<std::uint32_t>(get(in, mpt::flags));
  n.pd = static_cast<std::uint32_t>(get(in, mpt::pd));
  n.key = static_cast<std::uint32_t>(get(in, mpt::key));
  n.start = get(in, mpt::start);
  n.length = get(in, mpt::length);
  n.mtt_first = static_cast<std::uint32_t>(get(in, mpt::mtt_first));
  n.page_size_log = static_cast<std::uint8_t>(get(in, mpt::page_size_log));
  n.bound_qpn = static_cast<std::uint32_t>(get(in, mpt::bound_qpn));
  if (mpt_index(n.key) != index) return S::BAD_INDEX;
  if (n.page_size_log < 12 || n.page_size_log > 30) return S::BAD_PARAM;
  if (n.start + n.length < n.start) return S::BAD_PARAM;
  if (!(n.flags & (mpt::kIsWindow | mpt::kPhysical))) {
    const std::uint64_t page = 1ULL << n.page_size_log;
    const std::uint64_t pages = n.length ? ((n.start + n.length + page - 1) / page - n.start / page) : 0;
    if (n.mtt_first + pages > hca_.tpt().mtt().size()) return S::BAD_PARAM;
  }
  n.valid = true;
  e = n;
  return S::OK;
}

CmdStatus CommandProcessor::hw2sw_mpt() {
  Mpt* e = in_mod_ < hca_.tpt().mpts().size() ? &hca_.tpt().mpts()[in_mod_] : nullptr;
  if (!e || !e->valid) return S::BAD_RESOURCE;
  if (e->windows_bound) return S::RESOURCE_BUSY;
  if (e->flags & mpt::kIsWindow && e->parent_key) {
    if (Mpt* parent = hca_.tpt().entry(e->parent_key); parent && parent->windows_bound) --parent->windows_bound;
  }
  *e = Mpt{};
  return S::OK;
}

CmdStatus CommandProcessor::write_mtt() {
  const std::uint32_t first = in_mod_;
  if (static_cast<std::uint64_t>(first) + mtt_count_ > hca_.params().max_mtt) return S::EXCEED_LIM;
  auto& mtt = hca_.tpt().mtt();
  if (mtt.size() < first + mtt_count_) mtt.resize(first + mtt_count_, 0);
  for (std::uint32_t i = 0; i < mtt_count_; ++i) {
    const std::uint64_t page = get(in_.data(), Field{8 + 8 * i, 8, "page"});
    if (page & 0xfff) return S::BAD_PARAM;  // pages are 4 KiB aligned
    mtt[first + i] = page;
  }
  return S::OK;
}

CmdStatus CommandProcessor::sw2hw_eq() {
  EqCtx& eq = hca_.eqs()[in_mod_];
  if (eq.valid) return S::RESOURCE_BUSY;
  if (in_mod_ >= 32) return S::EXCEED_LIM;
  eq = EqCtx{};
  eq.base = get(in_.data(), eqc::base);
  eq.entries = static_cast<std::uint32_t>(get(in_.data(), eqc::entries));
  eq.irq_vector = static_cast<int>(get(in_.data(), eqc::irq_vector));
  eq.event_mask = get(in_.data(), eqc::event_mask);
  if (eq.entries == 0 || (eq.entries & (eq.entries - 1))) return S::BAD_PARAM;
  eq.valid = true;
  eq.armed = true;
  return S::OK;
}

CmdStatus CommandProcessor::hw2sw_eq() {
  auto it = hca_.eqs().find(in_mod_);
  if (it == hca_.eqs().end() || !it->second.valid) return S::BAD_RESOURCE;
  hca_.eqs().erase(it);
  return S::OK;
}

CmdStatus CommandProcessor::sw2hw_cq(bool resize) {
  const std::uint32_t n = in_mod_;
  if (n >= hca_.params().max_cq) return S::EXCEED_LIM;
  auto it = hca_.cqs().find(n);
  const bool exists = it != hca_.cqs().end() && it->second.valid;
  if (resize != exists) return resize ? S::BAD_RESOURCE : S::RESOURCE_BUSY;
  const std::uint8_t* in = in_.data();
  const auto entries = static_cast<std::uint32_t>(get(in, cqc::entries));
  if (entries == 0 || (entries & (entries - 1)) || entries > hca_.params().max_cqe + 1) return S::BAD_PARAM;
  CqCtx& cq = hca_.cqs()[n];
  if (resize) {
    // The driver copied the unconsumed entries to the new ring's start, in
    // the new ring's ownership phase; counting restarts from them.
    const std::uint32_t pending = cq.producer - cq.consumer;
    if (pending > entries) return S::BAD_PARAM;
    cq.base = get(in, cqc::base);
    cq.entries = entries;
    cq.consumer = 0;
    cq.producer = pending;
    return S::OK;
  }
  cq = CqCtx{};
  cq.base = get(in, cqc::base);
  cq.entries = entries;
  cq.eqn = static_cast<std::uint32_t>(get(in, cqc::eqn));
  cq.pd = static_cast<std::uint32_t>(get(in, cqc::pd));
  cq.valid = true;
  cq.inspectable = std::make_unique<Inspectable>("hca.cq", fmt::format("{}.cq{}", hca_.name(), n), &inspect_cq, &cq);
  return S::OK;
}

CmdStatus CommandProcessor::hw2sw_cq() {
  auto it = hca_.cqs().find(in_mod_);
  if (it == hca_.cqs().end() || !it->second.valid) return S::BAD_RESOURCE;
  for (auto& [_, q] : hca_.qps())
    if (q->state() != QpState::Reset && (q->send_cqn == in_mod_ || q->recv_cqn == in_mod_)) return S::RESOURCE_BUSY;
  hca_.cqs().erase(it);
  return S::OK;
}

CmdStatus CommandProcessor::query_cq() {
  auto it = hca_.cqs().find(in_mod_);
  if (it == hca_.cqs().end() || !it->second.valid) return S::BAD_RESOURCE;
  const CqCtx& cq = it->second;
  put(out_.data(), cqc::base, cq.base);
  put(out_.data(), cqc::entries, cq.entries);
  put(out_.data(), cqc::eqn, cq.eqn);
  put(out_.data(), cqc::producer, cq.producer);
  put(out_.data(), cqc::consumer, cq.consumer);
  put(out_.data(), cqc::pd, cq.pd);
  put(out_.data(), cqc::state, cq.overrun ? 1 : 0);
  return S::OK;
}

void CommandProcessor::apply_qp_fields(QpCtx& q, std::uint32_t m) {
  const std::uint8_t* in = in_.data();
  auto g = [&](Field f) { return get(in, f); };
  if (m & qp_mask::kQueues) {
    q.type = static_cast<QpType>(g(qpc::qp_type));
    q.pd = static_cast<std::uint32_t>(g(qpc::pd));
    q.send_cqn = static_cast<std::uint32_t>(g(qpc::send_cqn));
    q.recv_cqn = static_cast<std::uint32_t>(g(qpc::recv_cqn));
    q.sq = WorkQueue{g(qpc::sq_base), static_cast<std::uint32_t>(g(qpc::sq_entries)),
                     static_cast<std::uint8_t>(g(qpc::sq_stride_log)), 0, 0};
    q.rq = WorkQueue{g(qpc::rq_base), static_cast<std::uint32_t>(g(qpc::rq_entries)),
                     static_cast<std::uint8_t>(g(qpc::rq_stride_log)), 0, 0};
    q.sig_all = static_cast<std::uint8_t>(g(qpc::sig_all));
  }
  if (m & qp_mask::kPkeyIndex) q.pkey_index = static_cast<std::uint16_t>(g(qpc::pkey_index));
  if (m & qp_mask::kPort) q.port = static_cast<std::uint8_t>(g(qpc::port));
  if (m & qp_mask::kQkey) q.qkey = static_cast<std::uint32_t>(g(qpc::qkey));
  if (m & qp_mask::kAccess) q.access = static_cast<std::uint32_t>(g(qpc::access));
  if (m & qp_mask::kMtu) q.mtu = static_cast<std::uint8_t>(g(qpc::mtu));
  if (m & qp_mask::kDestQpn) q.dest_qpn = static_cast<std::uint32_t>(g(qpc::dest_qpn)) & kMaxQpn;
  if (m & qp_mask::kRqPsn) q.expected_psn = static_cast<std::uint32_t>(g(qpc::rq_psn)) & 0xffffff;
  if (m & qp_mask::kSqPsn) {
    q.next_psn = static_cast<std::uint32_t>(g(qpc::sq_psn)) & 0xffffff;
    q.oldest_unacked = q.next_psn;
  }
  if (m & qp_mask::kRespRes) q.resp_res = static_cast<std::uint8_t>(g(qpc::resp_res));
  if (m & qp_mask::kInitDepth) q.init_depth = static_cast<std::uint8_t>(g(qpc::init_depth));
  if (m & qp_mask::kMinRnrTimer) q.min_rnr_timer = static_cast<std::uint8_t>(g(qpc::min_rnr_timer));
  if (m & qp_mask::kLocalAckTimeout) q.local_ack_timeout = static_cast<std::uint8_t>(g(qpc::local_ack_timeout));
  if (m & qp_mask::kRetryCnt) q.retries_left = q.retry_cnt = static_cast<std::uint8_t>(g(qpc::retry_cnt));
  if (m & qp_mask::kRnrRetry) q.rnr_retries_left = q.rnr_retry = static_cast<std::uint8_t>(g(qpc::rnr_retry));
  if (m & qp_mask::kSqDrainEvent) q.sq_drain_event = true;
  if (m & qp_mask::kAv) {
    AddressVector& av = q.av;
    av.dlid = static_cast<std::uint16_t>(g(qpc::av_dlid));
    av.sl = static_cast<std::uint8_t>(g(qpc::av_sl));
    av.path_bits = static_cast<std::uint8_t>(g(qpc::av_path_bits));
    av.static_rate = static_cast<std::uint8_t>(g(qpc::av_static_rate));
    av.grh = g(qpc::av_grh) != 0;
    av.hop_limit = static_cast<std::uint8_t>(g(qpc::av_hop_limit));
    av.sgid_index = static_cast<std::uint8_t>(g(qpc::av_sgid_index));
    av.flow_label = static_cast<std::uint32_t>(g(qpc::av_flow_label));
    av.tclass = static_cast<std::uint8_t>(g(qpc::av_tclass));
    get_bytes(in, qpc::av_dgid, av.dgid.data());
  }
}

CmdStatus CommandProcessor::modify_qp() {
  const std::uint32_t qpn = in_mod_ & kMaxQpn;
  if (qpn >= hca_.params().max_qp) return S::EXCEED_LIM;
  const auto from = static_cast<QpState>(get(in_.data(), qpc::from_state));
  const auto to = static_cast<QpState>(get(in_.data(), qpc::to_state));
  const auto mask = static_cast<std::uint32_t>(get(in_.data(), qpc::opt_mask));
  if (static_cast<int>(from) > static_cast<int>(QpState::Error) ||
      static_cast<int>(to) > static_cast<int>(QpState::Error))
    return S::BAD_PARAM;
  auto& qps = hca_.qps();
  auto it = qps.find(qpn);
  if (it == qps.end()) {
    if (from != QpState::Reset) return S::BAD_QP_STATE;
    it = qps.emplace(qpn, std::make_unique<QpCtx>(qpn, hca_.device_id(), hca_.name(), hca_.send_engine())).first;
  }
  QpCtx& q = *it->second;
  if (q.state() != from) return S::BAD_QP_STATE;
  const std::optional<QpEvent> event = QpMachine::modify_event(from, to);
  if (!event) return S::BAD_QP_STATE;
  if (from == QpState::Reset && to == QpState::Init && !(mask & qp_mask::kQueues)) return S::BAD_PARAM;
  if ((mask & qp_mask::kQueues) && from != QpState::Reset) return S::BAD_PARAM;
  if (mask & qp_mask::kQueues) {
    const auto sqe = static_cast<std::uint32_t>(get(in_.data(), qpc::sq_entries));
    const auto rqe = static_cast<std::uint32_t>(get(in_.data(), qpc::rq_entries));
    const auto sql = get(in_.data(), qpc::sq_stride_log), rql = get(in_.data(), qpc::rq_stride_log);
    if (sqe > hca_.params().max_qp_wr || rqe > hca_.params().max_qp_wr || sql < 7 || sql > 12 || rql < 4 || rql > 12)
      return S::BAD_PARAM;
  }
  if ((mask & qp_mask::kPort) && (get(in_.data(), qpc::port) < 1 || get(in_.data(), qpc::port) > hca_.params().ports))
    return S::BAD_PARAM;
  if ((mask & qp_mask::kMtu) && (get(in_.data(), qpc::mtu) < 1 || get(in_.data(), qpc::mtu) > hca_.params().max_mtu))
    return S::BAD_PARAM;
  apply_qp_fields(q, mask);
  if (to == QpState::Reset) {
    // Reset discards everything without completions (IBA 10.3.1).
    hca_.send_engine().reset(q);
    hca_.recv_engine().reset(q);
    q.sq.producer = q.sq.consumer = 0;
    q.rq.producer = q.rq.consumer = 0;
  }
  if (!q.fsm.fire(*event, "modify_qp")) return S::BAD_QP_STATE;
  if (to == QpState::Error) hca_.flush_qp(q);
  if (to == QpState::Rts || to == QpState::Sqd) hca_.send_engine().kick(q, 0);
  return S::OK;
}

CmdStatus CommandProcessor::query_qp() {
  QpCtx* q = hca_.qp(in_mod_ & kMaxQpn);
  if (!q) return S::BAD_RESOURCE;
  std::uint8_t* o = out_.data();
  put(o, qpc::from_state, static_cast<std::uint8_t>(q->state()));
  put(o, qpc::to_state, static_cast<std::uint8_t>(q->state()));
  put(o, qpc::qp_type, static_cast<std::uint8_t>(q->type));
  put(o, qpc::mtu, q->mtu);
  put(o, qpc::pd, q->pd);
  put(o, qpc::send_cqn, q->send_cqn);
  put(o, qpc::recv_cqn, q->recv_cqn);
  put(o, qpc::sq_base, q->sq.base);
  put(o, qpc::sq_entries, q->sq.entries);
  put(o, qpc::sq_stride_log, q->sq.stride_log);
  put(o, qpc::rq_base, q->rq.base);
  put(o, qpc::rq_entries, q->rq.entries);
  put(o, qpc::rq_stride_log, q->rq.stride_log);
  put(o, qpc::port, q->port);
  put(o, qpc::sig_all, q->sig_all);
  put(o, qpc::qkey, q->qkey);
  put(o, qpc::dest_qpn, q->dest_qpn);
  put(o, qpc::sq_psn, q->next_psn);
  put(o, qpc::rq_psn, q->expected_psn);
  put(o, qpc::access, q->access);
  put(o, qpc::pkey_index, q->pkey_index);
  put(o, qpc::retry_cnt, q->retry_cnt);
  put(o, qpc::rnr_retry, q->rnr_retry);
  put(o, qpc::min_rnr_timer, q->min_rnr_timer);
  put(o, qpc::local_ack_timeout, q->local_ack_timeout);
  put(o, qpc::init_depth, q->init_depth);
  put(o, qpc::resp_res, q->resp_res);
  put(o, qpc::av_dlid, q->av.dlid);
  put(o, qpc::av_sl, q->av.sl);
  put(o, qpc::av_path_bits, q->av.path_bits);
  put(o, qpc::av_static_rate, q->av.static_rate);
  put(o, qpc::av_grh, q->av.grh);
  put(o, qpc::av_hop_limit, q->av.hop_limit);
  put(o, qpc::av_sgid_index, q->av.sgid_index);
  put(o, qpc::av_flow_label, q->av.flow_label);
  put(o, qpc::av_tclass, q->av.tclass);
  put(o, qpc::sq_draining, q->state() == QpState::Sqd && !q->wqes.empty());
  put_bytes(o, qpc::av_dgid, q->av.dgid.data());
  return S::OK;
}

CmdStatus CommandProcessor::conf_special_qp() {
  const std::uint32_t port = in_mod_ >> 24;
  if (port < 1 || port > hca_.params().ports) return S::BAD_PARAM;
  hca_.special_qp_base()[port - 1] = static_cast<std::uint32_t>(in_param_) & kMaxQpn;
  return S::OK;
}

CmdStatus CommandProcessor::mad_ifc() {
  const std::uint32_t port = in_mod_;
  if (port < 1 || port > hca_.params().ports) return S::BAD_PARAM;
  return process_local_mad(hca_, port, in_.data(), out_.data()) ? S::OK : S::BAD_PARAM;
}

CmdStatus CommandProcessor::mcg(bool attach) {
  const std::uint32_t qpn = in_mod_ & kMaxQpn;
  QpCtx* q = hca_.qp(qpn);
  if (!q || q->type != QpType::Ud) return S::BAD_RESOURCE;
  const auto mlid = static_cast<std::uint16_t>(get(in_.data(), mcg::mlid));
  if (mlid < 0xc000 || mlid == 0xffff) return S::BAD_PARAM;
  auto& members = hca_.mcgs()[mlid];
  auto pos = std::find(members.begin(), members.end(), qpn);
  if (attach) {
    if (pos != members.end()) return S::RESOURCE_BUSY;
    if (members.size() >= hca_.params().max_qp_per_mcg) return S::EXCEED_LIM;
    if (hca_.mcgs().size() > hca_.params().max_mcg) return S::EXCEED_LIM;
    members.push_back(qpn);
  } else {
    if (pos == members.end()) return S::BAD_RESOURCE;
    members.erase(pos);
    if (members.empty()) hca_.mcgs().erase(mlid);
  }
  return S::OK;
}

CmdStatus CommandProcessor::port_command(bool up) {
  const std::uint32_t port = in_mod_;
  if (port < 1 || port > hca_.params().ports) return S::BAD_PARAM;
  Hca::PortState& ps = hca_.port_state(port);
  if (ps.enabled == up) return S::BAD_SYS_STATE;
  ps.enabled = up;
  ps.closed = !up;
  // The port's logical state changes for the consumers: an async event.
  hca_.port_changed(port, up ? "init_ib" : "close_ib");
  return S::OK;
}

CmdStatus CommandProcessor::set_ib() {
  const std::uint32_t port = in_mod_;
  if (port < 1 || port > hca_.params().ports) return S::BAD_PARAM;
  Hca::PortState& ps = hca_.port_state(port);
  const std::uint8_t* in = in_.data();
  ps.cap_mask |= static_cast<std::uint32_t>(get(in, portset::cap_mask_set));
  ps.cap_mask &= ~static_cast<std::uint32_t>(get(in, portset::cap_mask_clear));
  if (get(in, portset::reset_qkey_violations)) ps.qkey_violations = 0;
  if (get(in, portset::reset_pkey_violations)) ps.pkey_violations = 0;
  return S::OK;
}

}  // namespace nicsim::hca
