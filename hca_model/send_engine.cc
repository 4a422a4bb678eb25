#include "hca_model/send_engine.h"

#include <fmt/format.h>

#include <algorithm>

#include "core/sim.h"
#include "fabric/fabric.h"
#include "trace/trace.h"

namespace nicsim::hca {

namespace {

bool is_request_op(swqe::Op op) {
  switch (op) {
    case swqe::Op::Send:
    case swqe::Op::SendImm:
    case swqe::Op::RdmaWrite:
    case swqe::Op::RdmaWriteImm:
    case swqe::Op::RdmaRead:
    case swqe::Op::AtomicCs:
    case swqe::Op::AtomicFa:
      return true;
    default:
      return false;
  }
}

bool is_read_like(swqe::Op op) {
  return op == swqe::Op::RdmaRead || op == swqe::Op::AtomicCs || op == swqe::Op::AtomicFa;
}

}  // namespace

SendEngine::SendEngine(Hca& hca) : hca_(hca) {}
SendEngine::~SendEngine() {
  for (auto& a : assembly_)
    if (a.pkt) hca_.fabric().pool().put(a.pkt);
}

void SendEngine::schedule(Tick at) {
  if (wakeups_.request(at)) Sim::get().calendar().at_member<&SendEngine::pump_due>(at, this);
}

void SendEngine::pump_due() {
  wakeups_.fired();
  pump();
}

void SendEngine::kick(QpCtx& q, Tick delay) {
  if (!q.in_send_list) {
    q.in_send_list = true;
    ready_.push_back(q.qpn);
  }
  schedule(now() + delay);
}

void SendEngine::port_has_room(std::uint32_t, Tick) {
  if (waiting_for_port_) schedule(now());
}

void SendEngine::pump() {
  const Tick n = now();
  waiting_for_port_ = false;
  drain_assembly();
  if (busy_until_ > n) {
    schedule(busy_until_);
    return;
  }
  const HcaParams& p = hca_.params();
  if (reads_in_flight_ >= p.dma_read_depth) return;
  if (assembly_.size() >= p.dma_read_depth + p.port_queue) {
    waiting_for_port_ = true;
    return;
  }
  bool built = build_response();
  for (std::size_t tries = ready_.size(); !built && tries > 0; --tries) {
    const std::uint32_t qpn = ready_.front();
    ready_.pop_front();
    QpCtx* q = hca_.qp(qpn);
    if (!q) continue;
    q->in_send_list = false;
    built = build_request(*q);
    if (built && !q->in_send_list) {
      // Round robin: it goes to the back and is asked again next time.
      q->in_send_list = true;
      ready_.push_back(qpn);
    }
  }
  if (built) {
    busy_until_ = n + hca_.clock_cycles(p.tx_packet_cycles);
    schedule(busy_until_);
  }
  drain_assembly();
}

// ---- building packets ------------------------------------------------------

void SendEngine::fill_route(QpCtx& q, ib::PacketHeaders& h, const AddressVector& av) {
  h.lrh.dlid = av.dlid;
  h.lrh.slid = static_cast<std::uint16_t>(hca_.port_lid(q.port) | av.path_bits);
  h.lrh.sl = av.sl;
  if (!av.grh) return;
  ib::Grh& g = h.grh.emplace();
  g.ipver = ib::kGrhIpVer;
  g.tclass = av.tclass;
  g.flow_label = av.flow_label;
  g.hop_lmt = av.hop_limit;
  g.dgid = av.dgid;
  // Source GID: link-local prefix and this port's GUID (GUIDInfo index 0).
  const std::uint64_t guid = hca_.params().node_guid + q.port;
  g.sgid[0] = 0xfe;
  g.sgid[1] = 0x80;
  for (int i = 0; i < 8; ++i) g.sgid[8 + i] = static_cast<std::uint8_t>(guid >> (56 - 8 * i));
}

SendEngine::Assembly& SendEngine::start_packet(QpCtx& q, const ib::PacketHeaders& h, std::uint32_t payload) {
  const std::size_t len = ib::packet_size(h, payload);
  fabric::Packet* pkt = hca_.fabric().pool().get(len);
  pkt->meta.src_node = hca_.device_id();
  pkt->meta.slid = h.lrh.slid;
  pkt->meta.dlid = h.lrh.dlid;
  pkt->meta.vl = h.lrh.vl;
  pkt->meta.kind = fabric::kPacketIb;
  pkt->meta.created = now();
  pkt->ready_at = now();
  const std::size_t payload_at = encode_headers(h, payload, pkt->bytes.data(), len);
  assembly_.push_back(Assembly{.pkt = pkt, .payload_at = payload_at, .port = q.port, .qpn = q.qpn});
  ++hca_.mutable_stats().tx_packets;
  hca_.mutable_stats().tx_bytes += payload;
  if (Sim::get().tracer().on(hca_.device_id(), Component::nic))
    Sim::get().tracer().record(
        now(), hca_.device_id(), Component::nic, "tx_build",
        {{"qp", q.qpn}, {"op", ib::opcode_name(h.bth.opcode)}, {"psn", h.bth.psn}, {"len", payload}});
  return assembly_.back();
}

bool SendEngine::gather(Assembly& a, QpCtx& q, const SendWqe& w, std::uint64_t offset, std::uint32_t len) {
  if (len == 0) return true;
  std::uint8_t* dst = a.pkt->bytes.data() + a.payload_at;
  if (!w.inline_data.empty()) {
    std::copy_n(w.inline_data.begin() + static_cast<long>(offset), len, dst);
    return true;
  }
  // Walk the data segments to the message offset, translating each piece.
  // (DMA completions are calendar events: nothing re-enters this meanwhile.)
  std::vector<HostRange>& ranges = gather_ranges_;
  ranges.clear();
  std::uint64_t skip = offset, want = len;
  for (const auto& d : w.ds) {
    const std::uint64_t addr = d[0];
    const std::uint32_t dlen = static_cast<std::uint32_t>(d[1]);
    const std::uint32_t lkey = static_cast<std::uint32_t>(d[1] >> 32);
    if (skip >= dlen) {
      skip -= dlen;
      continue;
    }
    const std::uint64_t piece = std::min<std::uint64_t>(dlen - skip, want);
    if (hca_.tpt().translate(lkey, q.pd, addr + skip, piece, 0, q.qpn, ranges) != TptResult::Ok) return false;
    want -= piece;
    skip = 0;
    if (want == 0) break;
  }
  for (const HostRange& r : ranges) {
    ++a.reads_pending;
    ++reads_in_flight_;
    hca_.bus().dma_read(
        "hca.tx", r.addr, dst, r.len,
        host::DmaDone{member_fn<&SendEngine::payload_read_done>(), this, reinterpret_cast<std::uint64_t>(&a)});
    dst += r.len;
  }
  return true;
}

// A payload read for an assembling packet finished (arg: the Assembly).
void SendEngine::payload_read_done(std::uint64_t arg) {
  auto* a = reinterpret_cast<Assembly*>(arg & ~host::kDmaFailedBit);
  --reads_in_flight_;
  --a->reads_pending;
  if (arg & host::kDmaFailedBit) a->failed = true;
  if (a->reads_pending == 0 && a->holds_wqe) wqe_reads_done(*a);
  schedule(now());
}

// A UD/UC packet whose payload is being read: its WQE completes only after
// the reads (the buffer is in use until then). RC completes on the ACK.
void SendEngine::hold_wqe(Assembly& a, QpCtx& q, SendWqe& w) {
  a.holds_wqe = true;
  a.wqe_epoch = q.epoch;
  a.wqe_index = w.index;
  ++w.packets_reading;
}

// WQEs sit in q.wqes in SQ order with consecutive indices.
SendWqe* SendEngine::find_wqe(QpCtx& q, std::uint32_t index) {
  if (q.wqes.empty()) return nullptr;
  const std::uint32_t at = index - q.wqes.front().index;
  if (at >= q.wqes.size() || q.wqes[at].index != index) return nullptr;
  return &q.wqes[at];
}

// The last payload read of a packet holding a WQE finished. Once no packet
// of the message is reading, a failed read fails the send queue; otherwise
// a completion decided meanwhile (success after the last packet, or a
// flush) takes effect.
void SendEngine::wqe_reads_done(const Assembly& a) {
  QpCtx* q = hca_.qp(a.qpn);
  if (!q || q->epoch != a.wqe_epoch) return;  // reset or destroyed meanwhile
  SendWqe* w = find_wqe(*q, a.wqe_index);
  if (!w) return;
  --w->packets_reading;
  if (a.failed) w->read_failed = true;
  if (w->packets_reading) return;
  if (w->read_failed && w->status == CqeStatus::Success) {
    fail_qp(*q, *w, CqeStatus::LocalProtectionError);
    return;
  }
  if (!w->completion_due) return;
  w->completed = true;
  retire_completed(*q);
}

void SendEngine::drain_assembly() {
  while (!assembly_.empty()) {
    Assembly& a = assembly_.front();
    if (a.reads_pending) return;
    if (!a.failed && hca_.tx_full(a.port, *a.pkt)) {
      waiting_for_port_ = true;
      return;
    }
    fabric::Packet* pkt = a.pkt;
    const bool failed = a.failed;
    const std::uint32_t port = a.port;
    const std::uint32_t qpn = a.qpn;
    assembly_.pop_front();
    if (failed || !hca_.port_carries(port, pkt->meta.vl)) {
      // A master abort on the payload read, or the port went away: the
      // packet never leaves (the QP's retry logic recovers or errors out).
      ++hca_.mutable_stats().rx_dropped;
      hca_.fabric().pool().put(pkt);
      continue;
    }
    seal(pkt->bytes.data(), pkt->bytes.size());
    hca_.transmit(port, pkt, qpn);
  }
}

// ---- responder output ----------------------------------------------------------

bool SendEngine::build_response() {
  while (!responses_.empty()) {
    Response& r = responses_.front();
    QpCtx* q = hca_.qp(r.qpn);
    if (!q || q->state() == QpState::Reset) {
      responses_.pop_front();
      continue;
    }
    ib::PacketHeaders h = outgoing_headers();
    fill_route(*q, h, q->av);
    h.bth.dest_qp = q->dest_qpn;
    h.ext.aeth.msn = r.msn;
    switch (r.kind) {
      case Response::Kind::Ack:
        build_ack(*q, h, r);
        break;
      case Response::Kind::AtomicAck:
        build_atomic_ack(*q, h, r);
        break;
      case Response::Kind::ReadData:
        build_read_data(*q, h, r);
        break;
    }
    return true;
  }
  return false;
}

void SendEngine::build_ack(QpCtx& q, ib::PacketHeaders& h, const Response& r) {
  h.bth.opcode = code(ib::Opcode::RC_ACKNOWLEDGE);
  h.bth.psn = r.psn;
  h.ext.aeth.syndrome = r.syndrome;
  start_packet(q, h, 0);
  if (r.syndrome == aeth::kAck || (r.syndrome & aeth::kKindMask) == 0)
    ++hca_.mutable_stats().acks_sent;
  else if ((r.syndrome & aeth::kKindMask) == aeth::kRnrNak)
    ++hca_.mutable_stats().rnr_naks_sent;
  else
    ++hca_.mutable_stats().naks_sent;
  responses_.pop_front();
}

void SendEngine::build_atomic_ack(QpCtx& q, ib::PacketHeaders& h, const Response& r) {
  h.bth.opcode = code(ib::Opcode::RC_ATOMIC_ACKNOWLEDGE);
  h.bth.psn = r.psn;
  h.ext.aeth.syndrome = aeth::kAck | aeth::kNoCredits;
  h.ext.atomic_ack_eth.orig_remote_data = r.value;
  start_packet(q, h, 0);
  responses_.pop_front();
}

// RDMA read response: the next MTU of data.
void SendEngine::build_read_data(QpCtx& q, ib::PacketHeaders& h, Response& r) {
  const std::uint32_t mtu = mtu_bytes(q);
  const std::uint64_t left = r.length - r.offset;
  const auto len = static_cast<std::uint32_t>(std::min<std::uint64_t>(mtu, left));
  const bool last = r.offset + len == r.length;
  h.bth.opcode = static_cast<std::uint8_t>(
      ib::opcode_for(ib::Transport::RC, ib::Op::RdmaReadResponse, ib::position_of(r.offset == 0, last)));
  h.bth.psn = r.next_psn;
  h.ext.aeth.syndrome = aeth::kAck | aeth::kNoCredits;
  Assembly& a = start_packet(q, h, len);
  std::uint8_t* dst = a.pkt->bytes.data() + a.payload_at;
  std::uint64_t skip = r.offset, want = len;
  for (const HostRange& hr : r.ranges) {
    if (skip >= hr.len) {
      skip -= hr.len;
      continue;
    }
    const auto piece = static_cast<std::uint32_t>(std::min<std::uint64_t>(hr.len - skip, want));
    ++a.reads_pending;
    ++reads_in_flight_;
    hca_.bus().dma_read(
        "hca.read_resp", hr.addr + skip, dst, piece,
        host::DmaDone{member_fn<&SendEngine::payload_read_done>(), this, reinterpret_cast<std::uint64_t>(&a)});
    dst += piece;
    want -= piece;
    skip = 0;
    if (want == 0) break;
  }
  r.offset += len;
  r.next_psn = psn_add(r.next_psn, 1);
  if (last) {
    if (q.reads_in_progress) --q.reads_in_progress;
    responses_.pop_front();
  }
}

// ---- the requester -------------------------------------------------------------

inline ReqStep SendEngine::chk_state(Req& r) {
  r.st = r.q.state();
  if (r.st == QpState::Error || r.st == QpState::Sqe) return ReqStep::Flush;
  if ((r.st != QpState::Rts && r.st != QpState::Sqd) || r.q.rnr_waiting()) return ReqStep::Idle;
  return ReqStep::GetWqe;
}

// Flushing: complete what was fetched, then fetch the rest. In SQE (a UC/UD
// send error) that is what was posted after the error; messages already on
// their way finish as they would have.
ReqStep SendEngine::flush_sq(Req& r) {
  QpCtx& q = r.q;
  for (auto& w : q.wqes)
    if (!w.completed && (r.st == QpState::Error || !w.all_sent)) complete(q, w, CqeStatus::WrFlushError);
  retire_completed(q);
  if (q.sq.consumer != q.sq.producer && !q.fetching) fetch_wqe(q);
  return ReqStep::Idle;
}

inline ReqStep SendEngine::get_wqe(Req& r) {
  QpCtx& q = r.q;
  if (q.tx_index >= q.wqes.size()) {
    // SQD finishes messages in progress but starts no new ones.
    if (r.st == QpState::Rts && q.sq.consumer != q.sq.producer && !q.fetching) fetch_wqe(q);
    return ReqStep::Idle;
  }
  r.w = &q.wqes[q.tx_index];
  return ReqStep::ChkFence;
}

inline ReqStep SendEngine::chk_fence(Req& r) {
  const SendWqe& w = *r.w;
  if (r.st == QpState::Sqd && w.sent == 0 && !w.all_sent) return ReqStep::Idle;
  if ((w.flags & swqe::kFence) && r.q.reads_outstanding > 0 && w.sent == 0) return ReqStep::Idle;
  if (!is_request_op(w.op)) return ReqStep::LocalOp;
  return is_read_like(w.op) ? ReqStep::ChkReadLimit : ReqStep::Segment;
}

ReqStep SendEngine::local_op(Req& r) {
  complete(r.q, *r.w, r.w->status);
  ++r.q.tx_index;
  retire_completed(r.q);
  return ReqStep::ChkState;
}

ReqStep SendEngine::chk_read_limit(Req& r) {
  return r.q.reads_outstanding >= std::max<std::uint32_t>(1, r.q.init_depth) ? ReqStep::Idle : ReqStep::ReadRequest;
}

ib::PacketHeaders SendEngine::request_headers(QpCtx& q, const SendWqe& w) {
  ib::PacketHeaders h = outgoing_headers();
  const bool ud = is_datagram(q.type);
  fill_route(q, h, ud ? w.ud_av : q.av);
  if (q.type == QpType::Qp0) h.lrh.vl = fabric::kVl15;  // SMPs travel on VL15 only
  h.bth.dest_qp = ud ? w.ud_dqpn : q.dest_qpn;
  return h;
}

// A read takes a PSN per response packet it asks for, an atomic one.
ReqStep SendEngine::read_request(Req& r) {
  QpCtx& q = r.q;
  SendWqe& w = *r.w;
  ib::PacketHeaders h = request_headers(q, w);
  const std::uint32_t mtu = mtu_bytes(q);
  // A resumed read (its first responses landed) asks for the rest only.
  const std::uint64_t done = w.op == swqe::Op::RdmaRead ? w.read_done : 0;
  const std::uint64_t left = w.length - done;
  const std::uint32_t npsn =
      w.op == swqe::Op::RdmaRead ? std::max<std::uint32_t>(1, static_cast<std::uint32_t>((left + mtu - 1) / mtu)) : 1;
  if (done == 0) {
    w.first_psn = q.next_psn;
    w.last_psn = psn_add(q.next_psn, npsn - 1);
  }
  h.bth.psn = q.next_psn;
  h.bth.a = 1;
  if (w.op == swqe::Op::RdmaRead) {
    h.bth.opcode = code(ib::Opcode::RC_RDMA_READ_REQUEST);
    h.ext.reth = ib::Reth{.va = w.remote_va + done, .r_key = w.rkey, .dma_len = static_cast<std::uint32_t>(left)};
  } else {
    h.bth.opcode = code(w.op == swqe::Op::AtomicCs ? ib::Opcode::RC_COMPARE_SWAP : ib::Opcode::RC_FETCH_ADD);
    h.ext.atomic_eth = ib::AtomicEth{.va = w.remote_va, .r_key = w.rkey, .swap_add = w.swap_add, .compare = w.compare};
  }
  start_packet(q, h, 0);
  q.next_psn = psn_add(q.next_psn, npsn);
  w.all_sent = true;
  ++q.reads_outstanding;
  ++q.tx_index;
  return ReqStep::ArmTimer;
}

// The opcode comes from the wire layer's table: the transport's send or
// write at this packet's place in the message, with immediate data on the
// last packet of a message that has it.
inline ReqStep SendEngine::segment(Req& r) {
  QpCtx& q = r.q;
  SendWqe& w = *r.w;
  ib::PacketHeaders h = request_headers(q, w);
  const bool ud = is_datagram(q.type);
  const std::uint32_t mtu = ud ? (128u << hca_.params().max_mtu) : mtu_bytes(q);
  r.offset = w.sent;
  r.len = static_cast<std::uint32_t>(std::min<std::uint64_t>(mtu, w.length - r.offset));
  const bool first = r.offset == 0;
  r.last = r.offset + r.len == w.length;
  const bool write = w.op == swqe::Op::RdmaWrite || w.op == swqe::Op::RdmaWriteImm;
  const bool imm = r.last && (w.op == swqe::Op::SendImm || w.op == swqe::Op::RdmaWriteImm);
  h.bth.opcode = static_cast<std::uint8_t>(ib::opcode_for(
      transport_of(q.type), write ? ib::Op::RdmaWrite : ib::Op::Send, ib::position_of(first, r.last), imm));
  if (first) w.first_psn = q.next_psn;
  r.psn = q.next_psn;
  h.bth.psn = r.psn;
  h.bth.se = r.last && (w.flags & swqe::kSolicited);
  h.bth.a = q.type == QpType::Rc && (r.last || (psn_diff(r.psn, w.first_psn) + 1) % hca_.params().ack_coalesce == 0);
  if (write && first)
    h.ext.reth = ib::Reth{.va = w.remote_va, .r_key = w.rkey, .dma_len = static_cast<std::uint32_t>(w.length)};
  if (imm) h.ext.imm_dt.imm = w.imm;
  if (ud) {
    h.ext.deth.q_key = w.ud_qkey;
    h.ext.deth.src_qp = q.type == QpType::Qp0 ? 0 : q.type == QpType::Qp1 ? 1 : q.qpn;
  }
  r.a = &start_packet(q, h, r.len);
  return ReqStep::Gather;
}

inline ReqStep SendEngine::gather_payload(Req& r) {
  QpCtx& q = r.q;
  if (!gather(*r.a, q, *r.w, r.offset, r.len)) {
    r.a->failed = true;
    fail_qp(q, *r.w, CqeStatus::LocalProtectionError);
    return ReqStep::Built;
  }
  if (r.a->reads_pending && q.type != QpType::Rc) hold_wqe(*r.a, q, *r.w);
  return ReqStep::Advance;
}

inline ReqStep SendEngine::advance(Req& r) {
  QpCtx& q = r.q;
  SendWqe& w = *r.w;
  q.next_psn = psn_add(q.next_psn, 1);
  w.sent += r.len;
  if (r.last) {
    w.all_sent = true;
    w.last_psn = r.psn;
    ++q.tx_index;
    // Unreliable transports complete once the last packet is on its way and
    // the payload reads of the message are done (inline data has none).
    if (q.type != QpType::Rc) {
      complete(q, w, CqeStatus::Success);
      retire_completed(q);  // `w` may be gone from here on
    }
  }
  return ReqStep::ArmTimer;
}

inline ReqStep SendEngine::arm_ack_timer(Req& r) {
  if (r.q.type == QpType::Rc) arm_timer(r.q);
  return ReqStep::Built;
}

// The steps every packet takes are inline (above), so the loop's switch runs
// them in place rather than calling each.
bool SendEngine::build_request(QpCtx& q) {
  Req ctx{q};
  const ReqStep end = run_steps(
      ReqStep::ChkState, ReqStep::Built, tracing_steps(hca_.device_id()),
      [&](ReqStep step) {
        switch (step) {
          NICSIM_HCA_REQUESTER_STEPS(NICSIM_HCA_STEP_CASE)
          default:
            return step;
        }
      },
      [&](ReqStep step) {
        trace_step(hca_.device_id(), "requester", kReqStepNames[static_cast<int>(step)], q.qpn, q.next_psn);
      });
  return end == ReqStep::Built;
}

// ---- WQE fetch ---------------------------------------------------------------

void SendEngine::fetch_wqe(QpCtx& q) {
  // Up to wqe_prefetch WQEs in one read, as far as the ring does not wrap.
  const std::uint32_t posted = q.sq.producer - q.sq.consumer;
  const std::uint32_t to_end = q.sq.entries - q.sq.consumer % q.sq.entries;
  q.fetch_count = std::min({posted, to_end, hca_.params().wqe_prefetch});
  q.fetching = true;
  q.fetch_buf.assign(static_cast<std::size_t>(q.sq.stride()) * q.fetch_count, 0);
  const std::uint64_t arg = (static_cast<std::uint64_t>(q.epoch) << 32) | q.qpn;
  hca_.bus().dma_read("hca.wqe", q.sq.addr(q.sq.consumer), q.fetch_buf.data(), q.fetch_buf.size(),
                      host::DmaDone{member_fn<&SendEngine::wqes_read>(), this, arg});
}

// arg: the QP's epoch when the read was asked for, and its QPN.
void SendEngine::wqes_read(std::uint64_t arg) {
  QpCtx* q = hca_.qp(static_cast<std::uint32_t>(arg) & kMaxQpn);
  const auto epoch = static_cast<std::uint32_t>((arg & ~host::kDmaFailedBit) >> 32);
  if (!q || q->epoch != epoch) return;
  const bool ok = !(arg & host::kDmaFailedBit);
  for (std::uint32_t i = 0; i < q->fetch_count && q->epoch == epoch; ++i)
    wqe_fetched(*q, q->fetch_buf.data() + i * q->sq.stride(), ok);
}

void SendEngine::wqe_fetched(QpCtx& q, std::uint8_t* b, bool ok) {
  q.fetching = false;
  SendWqe w;
  w.index = q.sq.consumer;
  ++q.sq.consumer;
  CqeStatus status = parse_wqe(q, w, b, ok);
  if (w.op == swqe::Op::BindMw) status = bind_window(q, b);
  w.status = status;
  const bool bad = status != CqeStatus::Success && w.op != swqe::Op::BindMw;
  q.wqes.push_back(std::move(w));
  if (Sim::get().tracer().on(hca_.device_id(), Component::nic))
    Sim::get().tracer().record(now(), hca_.device_id(), Component::nic, "wqe",
                               {{"qp", q.qpn},
                                {"op", static_cast<unsigned>(q.wqes.back().op)},
                                {"len", q.wqes.back().length},
                                {"status", cqe_status_name(static_cast<std::uint8_t>(status))}});
  if (bad && q.state() != QpState::Error) {
    fail_qp(q, q.wqes.back(), status);
    return;
  }
  kick(q, hca_.clock_cycles(hca_.params().wqe_cycles));
}

// Reads a send WQE (`ok`: the read did not fail); the status is what its
// checks found (a window bind's is the caller's).
CqeStatus SendEngine::parse_wqe(QpCtx& q, SendWqe& w, const std::uint8_t* b, bool ok) {
  w.op = static_cast<swqe::Op>(get(b, swqe::opcode));
  w.flags = static_cast<std::uint8_t>(get(b, swqe::flags));
  w.wr_id = get(b, swqe::wr_id);
  w.imm = static_cast<std::uint32_t>(get(b, swqe::imm));
  w.rkey = static_cast<std::uint32_t>(get(b, swqe::rkey));
  w.remote_va = get(b, swqe::remote_va);
  w.swap_add = get(b, swqe::atomic_swap_add);
  w.compare = get(b, swqe::atomic_compare);
  if (q.sig_all) w.flags |= swqe::kSignaled;
  CqeStatus status = ok ? CqeStatus::Success : CqeStatus::LocalQpOpError;
  const bool ud = is_datagram(q.type);
  switch (w.op) {
    case swqe::Op::Send:
    case swqe::Op::SendImm:
    case swqe::Op::Nop:
    case swqe::Op::BindMw:
      break;
    case swqe::Op::RdmaWrite:
    case swqe::Op::RdmaWriteImm:
      if (ud) status = CqeStatus::LocalQpOpError;
      break;
    case swqe::Op::RdmaRead:
    case swqe::Op::AtomicCs:
    case swqe::Op::AtomicFa:
      if (q.type != QpType::Rc) status = CqeStatus::LocalQpOpError;
      break;
    default:
      status = CqeStatus::LocalQpOpError;
      break;
  }
  if (ud) {
    w.ud_dqpn = static_cast<std::uint32_t>(get(b, swqe::ud_dqpn)) & kMaxQpn;
    w.ud_qkey = static_cast<std::uint32_t>(get(b, swqe::ud_qkey));
    AddressVector& av = w.ud_av;
    av.dlid = static_cast<std::uint16_t>(get(b, swqe::ud_dlid));
    av.sl = static_cast<std::uint8_t>(get(b, swqe::ud_sl));
    av.path_bits = static_cast<std::uint8_t>(get(b, swqe::ud_path_bits));
    av.grh = get(b, swqe::ud_grh) != 0;
    av.hop_limit = static_cast<std::uint8_t>(get(b, swqe::ud_hop_limit));
    av.sgid_index = static_cast<std::uint8_t>(get(b, swqe::ud_sgid_index));
    av.tclass = static_cast<std::uint8_t>(get(b, swqe::ud_tclass));
    av.flow_label = static_cast<std::uint32_t>(get(b, swqe::ud_flow_label));
    av.static_rate = static_cast<std::uint8_t>(get(b, swqe::ud_static_rate));
    get_bytes(b, swqe::ud_dgid, av.dgid.data());
  }
  if (parse_data(q, w, b) != CqeStatus::Success) status = CqeStatus::LocalQpOpError;
  if (w.op == swqe::Op::AtomicCs || w.op == swqe::Op::AtomicFa) {
    if (w.length != 8 || (w.remote_va & 7)) status = CqeStatus::LocalQpOpError;
  }
  const std::uint32_t mtu = ud ? (128u << hca_.params().max_mtu) : mtu_bytes(q);
  if (ud && w.length > mtu) status = CqeStatus::LocalLengthError;
  if (w.length > (1ULL << 31)) status = CqeStatus::LocalLengthError;
  return status;
}

// The message: inline data, or data segments (address, length, L_Key).
CqeStatus SendEngine::parse_data(QpCtx& q, SendWqe& w, const std::uint8_t* b) {
  if (w.flags & swqe::kInline) {
    const auto n = static_cast<std::uint32_t>(get(b, swqe::inline_len));
    const bool fits = n <= hca_.params().max_inline && swqe::kHeaderBytes + n <= q.sq.stride();
    if (fits) w.inline_data.assign(b + swqe::kHeaderBytes, b + swqe::kHeaderBytes + n);
    w.length = w.inline_data.size();
    return fits ? CqeStatus::Success : CqeStatus::LocalQpOpError;
  }
  const auto num_ds = static_cast<std::uint32_t>(get(b, swqe::num_ds));
  if (num_ds > (q.sq.stride() - swqe::kHeaderBytes) / ds::kSize) return CqeStatus::LocalQpOpError;
  for (std::uint32_t i = 0; i < num_ds; ++i) {
    const std::uint8_t* d = b + swqe::kHeaderBytes + i * ds::kSize;
    const std::uint64_t len = get(d, ds::length);
    w.ds.push_back({get(d, ds::addr), (get(d, ds::lkey) << 32) | len});
    w.length += len;
  }
  return CqeStatus::Success;
}

// ---- completion ------------------------------------------------------------

// A WQE whose payload is still being read gets its status now and
// completes when the reads are done (wqe_reads_done).
void SendEngine::complete(QpCtx&, SendWqe& w, CqeStatus status) {
  if (w.completed) return;
  w.status = status;
  if (w.packets_reading) {
    w.completion_due = true;
    return;
  }
  w.completed = true;
}

void SendEngine::retire_completed(QpCtx& q) {
  while (!q.wqes.empty() && q.wqes.front().completed) {
    SendWqe& w = q.wqes.front();
    if (w.status != CqeStatus::Success || (w.flags & swqe::kSignaled)) {
      Hca::Staging* s = hca_.scratch();
      std::uint8_t* c = s->data();
      put(c, cqe::wr_id, w.wr_id);
      put(c, cqe::qpn, q.qpn);
      put(c, cqe::byte_len, w.length);
      put(c, cqe::opcode, static_cast<std::uint8_t>(w.op));
      put(c, cqe::status, static_cast<std::uint8_t>(w.status));
      if (!hca_.write_cqe(q.send_cqn, s, false)) hca_.release_scratch(s);
    }
    if (is_read_like(w.op) && w.all_sent && q.reads_outstanding && w.status != CqeStatus::Success)
      --q.reads_outstanding;
    q.wqes.pop_front();
    if (q.tx_index > 0) --q.tx_index;
  }
  if (q.wqes.empty()) {
    q.oldest_unacked = q.next_psn;
    q.ack_timer.cancel();
    if (q.state() == QpState::Sqd && q.sq_drain_event) {
      q.sq_drain_event = false;
      hca_.post_event(Event::SqDrained, q.qpn);
    }
  }
}

void SendEngine::fail_qp(QpCtx& q, SendWqe& w, CqeStatus status) {
  complete(q, w, status);
  const char* cause = cqe_status_name(static_cast<std::uint8_t>(status));
  if (q.type == QpType::Rc) {
    hca_.qp_to_error(q, cause);
    return;
  }
  // UC and UD: a send queue error stops the send queue only (SQE state).
  // The rest is flushed, except earlier messages that are all on their way:
  // they complete as usual when their payload reads finish.
  if (q.state() == QpState::Rts) q.fsm.fire(QpEvent::SendError, cause);
  bool after = false;
  for (auto& x : q.wqes) {
    if (&x == &w) {
      after = true;
      continue;
    }
    if (!after && x.all_sent && x.packets_reading) continue;
    complete(q, x, CqeStatus::WrFlushError);
  }
  retire_completed(q);
}

void SendEngine::flush(QpCtx& q) {
  for (auto& w : q.wqes)
    if (!w.completed) complete(q, w, CqeStatus::WrFlushError);
  retire_completed(q);
  q.reads_outstanding = 0;
  q.rnr_timer.cancel();
  q.ack_timer.cancel();
  kick(q, 0);
}

void SendEngine::reset(QpCtx& q) {
  q.wqes.clear();
  q.tx_index = 0;
  q.reads_outstanding = 0;
  q.fetching = false;
  q.rnr_timer.cancel();
  q.ack_timer.cancel();
  ++q.epoch;
  responses_.erase(
      std::remove_if(responses_.begin(), responses_.end(), [&](const Response& r) { return r.qpn == q.qpn; }),
      responses_.end());
}

}  // namespace nicsim::hca
