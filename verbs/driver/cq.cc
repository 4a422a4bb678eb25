// Completion queues (create, resize, query, destroy, poll, notify) and the
// event queue's interrupt handler, which calls the consumer's completion
// and asynchronous event callbacks.
#include <fmt/format.h>

#include <cstring>

#include "core/sim.h"
#include "verbs/driver/driver.h"

namespace nicsim::verbs {

namespace {

using hca::CqeStatus;

constexpr struct {
  CqeStatus hw;
  ib_wc_status_t ib;
} kWcStatus[] = {
    {CqeStatus::Success, IB_WCS_SUCCESS},
    {CqeStatus::LocalLengthError, IB_WCS_LOCAL_LEN_ERR},
    {CqeStatus::LocalQpOpError, IB_WCS_LOCAL_OP_ERR},
    {CqeStatus::LocalProtectionError, IB_WCS_LOCAL_PROTECTION_ERR},
    {CqeStatus::WrFlushError, IB_WCS_WR_FLUSHED_ERR},
    {CqeStatus::MwBindError, IB_WCS_MEM_WINDOW_BIND_ERR},
    {CqeStatus::BadResponseError, IB_WCS_UNMATCHED_RESPONSE},
    // The responder's own protection check failed: IBAL has no separate
    // "local access error", the nearest is a local protection error.
    {CqeStatus::LocalAccessError, IB_WCS_LOCAL_PROTECTION_ERR},
    {CqeStatus::RemoteInvalidRequestError, IB_WCS_REM_INVALID_REQ_ERR},
    {CqeStatus::RemoteAccessError, IB_WCS_REM_ACCESS_ERR},
    {CqeStatus::RemoteOperationalError, IB_WCS_REM_OP_ERR},
    {CqeStatus::RetryExceeded, IB_WCS_TIMEOUT_RETRY_ERR},
    {CqeStatus::RnrRetryExceeded, IB_WCS_RNR_RETRY_ERR},
    // The remote side gave up on the message: an error of the remote
    // operation as far as IBAL can say.
    {CqeStatus::RemoteAbortedError, IB_WCS_REM_OP_ERR},
};

using Op = hca::swqe::Op;
using RecvOp = hca::cqe::RecvOp;
constexpr struct {
  std::uint8_t op;
  ib_wc_type_t type;
} kWcType[] = {
    {static_cast<std::uint8_t>(Op::Send), IB_WC_SEND},
    {static_cast<std::uint8_t>(Op::SendImm), IB_WC_SEND},
    {static_cast<std::uint8_t>(Op::RdmaWrite), IB_WC_RDMA_WRITE},
    {static_cast<std::uint8_t>(Op::RdmaWriteImm), IB_WC_RDMA_WRITE},
    {static_cast<std::uint8_t>(Op::RdmaRead), IB_WC_RDMA_READ},
    {static_cast<std::uint8_t>(Op::AtomicCs), IB_WC_COMPARE_SWAP},
    {static_cast<std::uint8_t>(Op::AtomicFa), IB_WC_FETCH_ADD},
    {static_cast<std::uint8_t>(Op::BindMw), IB_WC_MW_BIND},
    {static_cast<std::uint8_t>(RecvOp::Send), IB_WC_RECV},
    {static_cast<std::uint8_t>(RecvOp::RdmaWriteImm), IB_WC_RECV_RDMA_WRITE},
};

ib_wc_status_t wc_status(std::uint8_t hw) {
  for (const auto& m : kWcStatus)
    if (static_cast<std::uint8_t>(m.hw) == hw) return m.ib;
  return IB_WCS_UNKNOWN;
}

ib_wc_type_t wc_type(std::uint8_t op, bool recv) {
  for (const auto& m : kWcType)
    if (m.op == op) return m.type;
  return recv ? IB_WC_RECV : IB_WC_SEND;
}

// Owner rule (hca_regs.h): an entry written in pass p carries 0x80 when p
// is even, 0x00 when odd; `count` is the consumer count of the entry. The
// pass is count / entries, and entries is a power of two: its low bit is
// the bit of count at entries (no division on the polling path).
std::uint8_t owner_for(std::uint32_t count, std::uint32_t entries) {
  return (count & entries) ? 0x00 : hca::cqe::kOwnerHw;
}

std::uint8_t* cqe_at(const Cq& cq, std::uint32_t count) {
  return cq.ring + static_cast<std::size_t>(count & (cq.entries - 1)) * hca::cqe::kSize;
}

bool cqe_ready(const Cq& cq, std::uint32_t count) {
  return hca::get(cqe_at(cq, count), hca::cqe::owner) == owner_for(count, cq.entries);
}

// After any change of ring, entries or consumer.
void track_next(Cq& cq) {
  cq.next_cqe = cqe_at(cq, cq.consumer);
  cq.next_owner = owner_for(cq.consumer, cq.entries);
}

// cqe_ready(cq, cq.consumer).
bool next_ready(const Cq& cq) { return hca::get(cq.next_cqe, hca::cqe::owner) == cq.next_owner; }

void to_wc(const std::uint8_t* e, ib_wc_t& wc) {
  using namespace hca;
  const auto flags = static_cast<std::uint8_t>(get(e, cqe::flags));
  const bool recv = flags & cqe::kIsRecv;
  wc.wr_id = get(e, cqe::wr_id);
  wc.status = wc_status(static_cast<std::uint8_t>(get(e, cqe::status)));
  wc.wc_type = wc_type(static_cast<std::uint8_t>(get(e, cqe::opcode)), recv);
  wc.length = static_cast<std::uint32_t>(get(e, cqe::byte_len));
  wc.vendor_specific = get(e, cqe::status);  // the HCA's own status code
  std::memset(&wc.recv, 0, sizeof wc.recv);
  if (!recv) return;
  // conn and ud start with the same two fields; ud is the superset.
  ib_recv_opt_t opt = 0;
  if (flags & cqe::kImm) opt |= IB_RECV_OPT_IMMEDIATE;
  if (flags & cqe::kGrh) opt |= IB_RECV_OPT_GRH_VALID;
  wc.recv.ud.recv_opt = opt;
  wc.recv.ud.immediate_data = cl_hton32(static_cast<std::uint32_t>(get(e, cqe::imm)));
  wc.recv.ud.remote_qp = cl_hton32(static_cast<std::uint32_t>(get(e, cqe::src_qp)));
  wc.recv.ud.pkey_index = 0;
  wc.recv.ud.remote_lid = cl_hton16(static_cast<std::uint16_t>(get(e, cqe::slid)));
  wc.recv.ud.remote_sl = static_cast<std::uint8_t>(get(e, cqe::sl));
  wc.recv.ud.path_bits = static_cast<std::uint8_t>(get(e, cqe::path_bits));
}

void update_consumer(Device& d, Cq& cq) {
  cq.reported = cq.consumer;
  d.doorbell(hca::reg::db_cq, cq.cqn | (static_cast<std::uint32_t>(hca::reg::CqDoorbell::UpdateConsumer) << 24),
             cq.consumer);
}

}  // namespace

void retire_wqes(Qp& qp, bool is_recv, bool error, std::uint64_t wr_id) {
  if (is_recv) {
    // Every receive WQE completes, in order.
    if (qp.rq.outstanding()) ++qp.rq.tail;
    return;
  }
  // Send WQEs complete in order, but successful unsignaled ones leave no
  // CQE: a success CQE retires everything up to the first signaled WQE; an
  // error CQE (always written) retires up to the WQE with its wr_id.
  WorkQueue& sq = qp.sq;
  const std::uint32_t n = sq.outstanding();
  for (std::uint32_t i = 0; i < n; ++i) {
    const std::uint32_t slot = (sq.tail + i) & (sq.entries - 1);
    if (error ? sq.wr_ids[slot] == wr_id : sq.signaled[slot] != 0) {
      sq.tail += i + 1;
      return;
    }
  }
  if (n) ++sq.tail;
}

ib_api_status_t create_cq(const ib_pd_handle_t h_pd, const void* cq_context, uint32_t* const p_size,
                          ib_cq_handle_t* ph_cq, ci_umv_buf_t*) {
  NICSIM_API_CALL_NAMED("ci_create_cq");
  // The seed's create_cq takes a PD but lists IB_INVALID_CA_HANDLE for a
  // bad handle; that is the status returned.
  Pd* pd = lookup<Pd>(h_pd);
  if (!pd) return IB_INVALID_CA_HANDLE;
  if (!p_size || !ph_cq) return IB_INVALID_PARAMETER;
  Device& d = *pd->dev;
  const std::uint32_t size = *p_size;
  // One ring entry more than asked: the HCA learns the consumer count a
  // poll call late, and a full ring must still not overrun.
  const std::uint32_t entries = next_pow2(size + 1);
  if (size == 0 || size > d.caps().max_cqe || entries > d.caps().max_cqe + 1u) return IB_INVALID_CQ_SIZE;
  std::uint32_t cqn;
  if (!d.cqns.alloc(cqn)) return IB_INSUFFICIENT_RESOURCES;
  std::uint8_t* ring = d.alloc_dma(static_cast<std::size_t>(entries) * hca::cqe::kSize);
  if (!ring) {
    d.cqns.release(cqn);
    return IB_INSUFFICIENT_RESOURCES;
  }
  d.cpu("verbs_create_cq");
  std::uint8_t c[hca::cqc::kSize] = {};
  hca::put(c, hca::cqc::base, reinterpret_cast<std::uint64_t>(ring));
  hca::put(c, hca::cqc::entries, entries);
  hca::put(c, hca::cqc::eqn, 0);
  hca::put(c, hca::cqc::pd, pd->pdn);
  const CmdResult r = d.command(hca::Command::SW2HW_CQ, cqn, c, sizeof c);
  if (!r.ok()) {
    d.free_dma(ring);
    d.cqns.release(cqn);
    return status_of(r);
  }
  Cq* cq = d.make<Cq>();
  cq->pd = pd;
  cq->context = cq_context;
  cq->cqn = cqn;
  cq->ring = ring;
  cq->entries = entries;
  track_next(*cq);
  ++pd->users;
  d.cq_by_num[cqn] = cq;
  *p_size = entries - 1;
  *ph_cq = cq->handle();
  return IB_SUCCESS;
}

ib_api_status_t resize_cq(const ib_cq_handle_t h_cq, uint32_t* const p_size, ci_umv_buf_t*) {
  NICSIM_API_CALL_NAMED("ci_resize_cq");
  Cq* cq = lookup<Cq>(h_cq);
  if (!cq) return IB_INVALID_CQ_HANDLE;
  if (!p_size) return IB_INVALID_PARAMETER;
  Device& d = *cq->dev;
  const std::uint32_t size = *p_size;
  const std::uint32_t entries = next_pow2(size + 1);
  if (size == 0 || size > d.caps().max_cqe || entries > d.caps().max_cqe + 1u) return IB_INVALID_CQ_SIZE;
  if (cq->resizing) return IB_RESOURCE_BUSY;
  std::uint32_t pending = 0;
  while (pending < cq->entries && cqe_ready(*cq, cq->consumer + pending)) ++pending;
  if (pending > entries - 1) return IB_OVERFLOW;
  std::uint8_t* ring = d.alloc_dma(static_cast<std::size_t>(entries) * hca::cqe::kSize);
  if (!ring) return IB_INSUFFICIENT_RESOURCES;
  cq->resizing = true;
  d.cpu("verbs_resize_cq", static_cast<std::uint64_t>(pending) * hca::cqe::kSize);
  // The HCA counts what it wrote beyond our consumer count: tell it ours.
  update_consumer(d, *cq);
  // Unconsumed entries move to the new ring's start, owned for its first pass.
  auto move = [&](std::uint32_t from, std::uint32_t to) {
    std::uint8_t* dst = ring + static_cast<std::size_t>(to) * hca::cqe::kSize;
    std::memcpy(dst, cqe_at(*cq, cq->consumer + from), hca::cqe::kSize);
    hca::put(dst, hca::cqe::owner, owner_for(to, entries));
  };
  for (std::uint32_t i = 0; i < pending; ++i) move(i, i);
  std::uint8_t c[hca::cqc::kSize] = {};
  hca::put(c, hca::cqc::base, reinterpret_cast<std::uint64_t>(ring));
  hca::put(c, hca::cqc::entries, entries);
  hca::put(c, hca::cqc::eqn, 0);
  hca::put(c, hca::cqc::pd, cq->pd->pdn);
  const CmdResult r = d.command(hca::Command::RESIZE_CQ, cq->cqn, c, sizeof c);
  if (!r.ok()) {
    d.free_dma(ring);
    cq->resizing = false;
    // BAD_PARAM: more entries arrived meanwhile than the new size holds.
    return r.issued && r.status == hca::CmdStatus::BAD_PARAM ? IB_OVERFLOW : status_of(r);
  }
  // Entries the HCA wrote to the old ring before the resize took effect
  // (their DMA has landed by now: a command outlasts any CQE write).
  std::uint32_t moved = pending;
  while (moved < entries - 1 && moved < cq->entries && cqe_ready(*cq, cq->consumer + moved)) {
    move(moved, moved);
    ++moved;
  }
  d.free_dma(cq->ring);
  cq->ring = ring;
  cq->entries = entries;
  cq->consumer = cq->reported = 0;
  track_next(*cq);
  cq->resizing = false;
  *p_size = entries - 1;
  return IB_SUCCESS;
}

ib_api_status_t query_cq(const ib_cq_handle_t h_cq, uint32_t* p_size, ci_umv_buf_t*) {
  NICSIM_API_CALL_NAMED("ci_query_cq");
  Cq* cq = lookup_charged<Cq>(h_cq, "verbs_query_cq");
  if (!cq) return IB_INVALID_CQ_HANDLE;
  if (!p_size) return IB_INVALID_PARAMETER;
  *p_size = cq->entries - 1;
  return IB_SUCCESS;
}

ib_api_status_t destroy_cq(const ib_cq_handle_t h_cq, ci_umv_buf_t*) {
  NICSIM_API_CALL_NAMED("ci_destroy_cq");
  Cq* cq = lookup<Cq>(h_cq);
  if (!cq) return IB_INVALID_CQ_HANDLE;
  Device& d = *cq->dev;
  if (!d.host().may_block("ci_destroy_cq", std::source_location::current())) return IB_RESOURCE_BUSY;
  if (!(cq = lookup_charged<Cq>(h_cq, "verbs_destroy_cq"))) return IB_INVALID_CQ_HANDLE;
  if (cq->qps || cq->resizing) return IB_RESOURCE_BUSY;
  const CmdResult r = d.command(hca::Command::HW2SW_CQ, cq->cqn);
  if (!r.ok()) return status_of(r);
  d.free_dma(cq->ring);
  d.cqns.release(cq->cqn);
  d.cq_by_num.erase(cq->cqn);
  --cq->pd->users;
  d.kill(cq);
  return IB_SUCCESS;
}

namespace {
const host::CostClass kPollCq{"verbs_poll_cq"};
const host::CostClass kPollCqe{"verbs_poll_cqe"};
}  // namespace

namespace {

// Charging lets other threads run: the CQ may have been destroyed or be in a
// resize meanwhile. Looked at again before its ring is touched.
bool usable(Device& d, const ib_cq_handle_t h_cq, const Cq* cq) { return d.find<Cq>(h_cq) == cq && !cq->resizing; }

// poll_cq once the CQ's next entry is ready.
ib_api_status_t take_entries(Device& d, Cq& cq, const ib_cq_handle_t h_cq, ib_wc_t** const pp_free_wclist,
                             ib_wc_t** const pp_done_wclist) {
  ib_wc_t** tail = pp_done_wclist;
  std::uint32_t found = 0;
  while (*pp_free_wclist && next_ready(cq)) {
    const std::uint8_t* e = cq.next_cqe;
    ib_wc_t* wc = *pp_free_wclist;
    *pp_free_wclist = wc->p_next;
    to_wc(e, *wc);
    wc->p_next = nullptr;
    *tail = wc;
    tail = &wc->p_next;
    const auto qpn = static_cast<std::uint32_t>(hca::get(e, hca::cqe::qpn));
    // A destroyed QP's completions are still returned; no bookkeeping.
    if (auto it = d.qp_by_num.find(qpn); it != d.qp_by_num.end())
      retire_wqes(*it->second, hca::get(e, hca::cqe::flags) & hca::cqe::kIsRecv, wc->status != IB_WCS_SUCCESS,
                  wc->wr_id);
    ++cq.consumer;
    track_next(cq);
    ++found;
    // The HCA must hear of the space at least every half ring.
    if (cq.consumer - cq.reported >= cq.entries / 2) {
      update_consumer(d, cq);
      if (!usable(d, h_cq, &cq)) break;
    }
  }
  if (!found) return IB_NOT_FOUND;
  if (usable(d, h_cq, &cq) && cq.consumer != cq.reported) update_consumer(d, cq);
  // Each entry: a cache miss on a line the HCA wrote, and the conversion.
  for (std::uint32_t i = 0; i < found; ++i) d.cpu(kPollCqe);
  return IB_SUCCESS;
}

}  // namespace

ib_api_status_t poll_cq(const ib_cq_handle_t h_cq, ib_wc_t** const pp_free_wclist, ib_wc_t** const pp_done_wclist) {
  NICSIM_API_CALL_NAMED("ci_poll_cq");
  // lookup<Cq> and cpu(), asking SystemC for the calling process once; the
  // driver found is the caller's host's (h).
  const sc_core::sc_object* caller;
  host::Host* h = host::Host::current_host(caller);
  Device* dev;
  Cq* cq = Device::polled_cq(h_cq, h, dev);
  if (!cq) return IB_INVALID_CQ_HANDLE;
  if (!pp_free_wclist || !pp_done_wclist) return IB_INVALID_PARAMETER;
  *pp_done_wclist = nullptr;
  if (!h->try_work_ahead(caller, kPollCq)) h->work_as(caller, kPollCq);
  // usable(), shorter while the CQ is still the one remembered.
  if (!(Device::poll_remembers(cq) || dev->find<Cq>(h_cq) == cq) || cq->resizing || !*pp_free_wclist ||
      !next_ready(*cq))
    return IB_NOT_FOUND;
  return take_entries(*dev, *cq, h_cq, pp_free_wclist, pp_done_wclist);
}

ib_api_status_t enable_cq_notify(const ib_cq_handle_t h_cq, const boolean_t solicited) {
  NICSIM_API_CALL_NAMED("ci_enable_cq_notify");
  Cq* cq = lookup<Cq>(h_cq);
  if (!cq) return IB_INVALID_CQ_HANDLE;
  Device& d = *cq->dev;
  d.cpu("verbs_arm_cq");
  if (d.find<Cq>(h_cq) != cq) return IB_INVALID_CQ_HANDLE;  // destroyed meanwhile
  const auto cmd = solicited ? hca::reg::CqDoorbell::ArmSolicited : hca::reg::CqDoorbell::ArmNext;
  cq->reported = cq->consumer;
  d.doorbell(hca::reg::db_cq, cq->cqn | (static_cast<std::uint32_t>(cmd) << 24), cq->consumer);
  return IB_SUCCESS;
}

// ---- the event queue ----------------------------------------------------------------

namespace {

enum class Source : std::uint8_t { Qp, Cq, Port, Ca };
constexpr struct {
  hca::Event hw;
  ib_async_event_t ib;
  Source source;
} kEvents[] = {
    {hca::Event::PathMigrated, IB_AE_QP_APM, Source::Qp},
    {hca::Event::CommEstablished, IB_AE_QP_COMM, Source::Qp},
    {hca::Event::SqDrained, IB_AE_SQ_DRAINED, Source::Qp},
    {hca::Event::CqError, IB_AE_CQ_ERROR, Source::Cq},
    {hca::Event::WqCatastrophic, IB_AE_QP_FATAL, Source::Qp},
    {hca::Event::WqInvalidRequest, IB_AE_WQ_REQ_ERROR, Source::Qp},
    {hca::Event::WqAccessError, IB_AE_WQ_ACCESS_ERROR, Source::Qp},
    {hca::Event::PortChange, IB_AE_PORT_DOWN, Source::Port},  // IB_AE_PORT_ACTIVE when the port is active
    {hca::Event::LocalCatastrophic, IB_AE_LOCAL_FATAL, Source::Ca},
};

}  // namespace

void Device::eq_interrupt() {
  using namespace hca;
  std::uint32_t since_update = 0;
  for (;;) {
    const std::uint8_t* e = eq_ring_ + static_cast<std::size_t>(eq_consumer_ % eq_entries_) * eqe::kSize;
    if (get(e, eqe::owner) != (((eq_consumer_ / eq_entries_) & 1) ? 0 : cqe::kOwnerHw)) break;
    std::uint8_t copy[eqe::kSize];
    std::memcpy(copy, e, sizeof copy);
    ++eq_consumer_;
    cpu("verbs_eq_event");
    dispatch_event(copy);
    if (++since_update >= eq_entries_ / 2) {
      since_update = 0;
      doorbell(reg::db_eq, static_cast<std::uint32_t>(reg::EqDoorbell::UpdateConsumer) << 24, eq_consumer_);
    }
  }
  // Re-arm: the HCA interrupts again at once if events came meanwhile.
  doorbell(reg::db_eq, static_cast<std::uint32_t>(reg::EqDoorbell::UpdateAndArm) << 24, eq_consumer_);
}

void Device::dispatch_event(const std::uint8_t* e) {
  using namespace hca;
  const auto type = static_cast<std::uint8_t>(get(e, eqe::type));
  const auto object = static_cast<std::uint32_t>(get(e, eqe::object));
  const auto data = static_cast<std::uint32_t>(get(e, eqe::data));
  if (type == static_cast<std::uint8_t>(Event::Completion)) {
    auto it = cq_by_num.find(object);
    // A destroyed CQ's pending notification is discarded (seed).
    Ca* owner = it == cq_by_num.end() ? nullptr : instance_of(it->second->pd);
    if (!owner) return;
    ++callbacks_running;
    owner->completion_cb(const_cast<void*>(it->second->context));
    if (--callbacks_running == 0) callbacks_done.notify_all();
    return;
  }
  for (const auto& m : kEvents) {
    if (static_cast<std::uint8_t>(m.hw) != type) continue;
    ib_event_rec_t rec{};
    rec.type = m.ib;
    Ca* to = ca_;
    rec.vendor_specific = (static_cast<std::uint64_t>(get(e, eqe::subtype)) << 32) | data;
    switch (m.source) {
      case Source::Qp: {
        auto it = qp_by_num.find(object);
        if (it == qp_by_num.end()) return;  // destroyed since
        if (m.hw == Event::WqCatastrophic) it->second->state = QpState::Error;
        rec.context = const_cast<void*>(it->second->context);
        to = instance_of(it->second->pd);
        break;
      }
      case Source::Cq: {
        auto it = cq_by_num.find(object);
        if (it == cq_by_num.end()) return;
        rec.context = const_cast<void*>(it->second->context);
        to = instance_of(it->second->pd);
        break;
      }
      case Source::Port:
        if (data == IB_LINK_ACTIVE) rec.type = IB_AE_PORT_ACTIVE;
        rec.trap.info.port_num = static_cast<std::uint8_t>(object);
        if (object < caps_.port_guid.size()) rec.trap.info.port_guid = caps_.port_guid[object];
        [[fallthrough]];
      case Source::Ca:
        // Port and CA events go to every open instance (consumer and SM agent).
        if (agent_) {
          rec.context = const_cast<void*>(agent_->context);
          ++callbacks_running;
          agent_->async_cb(&rec);
          if (--callbacks_running == 0) callbacks_done.notify_all();
        }
        if (ca_) rec.context = const_cast<void*>(ca_->context);
        break;
    }
    if (!to) return;  // nobody has the CA open: nobody to tell
    ++callbacks_running;
    to->async_cb(&rec);
    if (--callbacks_running == 0) callbacks_done.notify_all();
    return;
  }
  // COMMAND_DONE is masked off (commands are polled), so this is an event
  // the driver does not know: an error, never a silent drop.
  Sim::get().error(host_.name(), fmt::format("verbs driver: unexpected HCA event {} ({:#x}) for object {}",
                                             event_name(type), type, object));
}

}  // namespace nicsim::verbs
