// The debugger's view of the HCA's contexts: a QP's state, PSNs and queue
// depths, and a CQ's ring.
#include <fmt/format.h>

#include "hca_model/hca.h"

namespace nicsim::hca {

namespace {
const char* qp_type_name(QpType t) {
  switch (t) {
    case QpType::Rc:
      return "RC";
    case QpType::Uc:
      return "UC";
    case QpType::Ud:
      return "UD";
    case QpType::Qp0:
      return "QP0";
    case QpType::Qp1:
      return "QP1";
  }
  return "?";
}

std::string queue(const WorkQueue& q) {
  return fmt::format("{} posted, {} taken, {} entries", q.producer, q.consumer, q.entries);
}
}  // namespace

void inspect_qp(const void* object, InspectRows& rows) {
  const QpCtx& qp = *static_cast<const QpCtx*>(object);
  add_row(rows, "qpn", std::to_string(qp.qpn));
  add_row(rows, "type", qp_type_name(qp.type));
  add_row(rows, "dest_qpn", std::to_string(qp.dest_qpn));
  add_row(rows, "dlid", std::to_string(qp.av.dlid));
  add_row(rows, "sq", queue(qp.sq));
  add_row(rows, "rq", queue(qp.rq));
  add_row(rows, "send_cqn", std::to_string(qp.send_cqn));
  add_row(rows, "recv_cqn", std::to_string(qp.recv_cqn));
  add_row(rows, "next_psn", std::to_string(qp.next_psn));
  add_row(rows, "oldest_unacked", std::to_string(qp.oldest_unacked));
  add_row(rows, "wqes_outstanding", std::to_string(qp.wqes.size()));
  add_row(rows, "retries_left", std::to_string(qp.retries_left));
  add_row(rows, "ack_timer", qp.ack_timer.armed() ? format_time(qp.ack_timer.deadline()) : "off");
  add_row(rows, "rnr_waiting", qp.rnr_waiting() ? "yes" : "no");
  add_row(rows, "expected_psn", std::to_string(qp.expected_psn));
  add_row(rows, "msn", std::to_string(qp.msn));
  add_row(rows, "unacked_packets", std::to_string(qp.unacked_packets));
  add_row(rows, "write_left", std::to_string(qp.write_left));
  for (std::size_t i = 0; i < qp.wqes.size(); ++i) {
    const SendWqe& w = qp.wqes[i];
    add_row(rows, fmt::format("wqe[{}]", i),
            fmt::format("wr_id {:#x}, {} bytes, psn {}..{}, sent {}{}", w.wr_id, w.length, w.first_psn, w.last_psn,
                        w.sent, w.completed ? ", completed" : ""));
  }
}

void inspect_cq(const void* object, InspectRows& rows) {
  const CqCtx& cq = *static_cast<const CqCtx*>(object);
  add_row(rows, "entries", std::to_string(cq.entries));
  add_row(rows, "cqes_written", std::to_string(cq.producer));
  add_row(rows, "cqes_consumed", std::to_string(cq.consumer));
  add_row(rows, "cqes_pending", std::to_string(cq.producer - cq.consumer));
  add_row(rows, "eqn", std::to_string(cq.eqn));
  add_row(rows, "armed", cq.arm == reg::CqDoorbell::UpdateConsumer ? "no" : "yes");
  add_row(rows, "overrun", cq.overrun ? "yes" : "no");
}

namespace {
std::string access_names(std::uint32_t flags) {
  static constexpr struct {
    std::uint32_t flag;
    const char* name;
  } kAccess[] = {{mpt::kLocalWrite, "local_write"},
                 {mpt::kRemoteRead, "remote_read"},
                 {mpt::kRemoteWrite, "remote_write"},
                 {mpt::kRemoteAtomic, "remote_atomic"},
                 {mpt::kMwBind, "mw_bind"}};
  std::string out;
  for (const auto& a : kAccess)
    if (flags & a.flag) out += std::string(out.empty() ? "" : "|") + a.name;
  return out.empty() ? "local_read" : out;
}

std::string describe_mpt(const Mpt& m) {
  if (m.flags & mpt::kIsWindow)
    return m.parent_key ? fmt::format("MW key {:#x} pd {} bound by qp {} to MR {:#x}: va {:#x} len {} {}", m.key, m.pd,
                                      m.bound_qpn, m.parent_key, m.start, m.length, access_names(m.flags))
                        : fmt::format("MW key {:#x} pd {} unbound", m.key, m.pd);
  return fmt::format("MR key {:#x} pd {} va {:#x} len {} {}{}{}", m.key, m.pd, m.start, m.length, access_names(m.flags),
                     m.flags & mpt::kPhysical
                         ? ", physical"
                         : fmt::format(", mtt {} pages of {} B", m.mtt_first, 1u << m.page_size_log),
                     m.windows_bound ? fmt::format(", {} windows bound", m.windows_bound) : "");
}
}  // namespace

void inspect_tpt(const void* object, InspectRows& rows) {
  const Tpt& tpt = *static_cast<const Tpt*>(object);
  std::uint32_t regions = 0, windows = 0;
  for (const Mpt& m : tpt.mpts())
    if (m.valid) ++((m.flags & mpt::kIsWindow) ? windows : regions);
  add_row(rows, "regions", std::to_string(regions));
  add_row(rows, "windows", std::to_string(windows));
  add_row(rows, "mtt_entries", std::to_string(tpt.mtt().size()));
  add_row(rows, "lookups", std::to_string(tpt.lookups));
  for (std::size_t i = 0; i < tpt.mpts().size(); ++i)
    if (tpt.mpts()[i].valid) add_row(rows, fmt::format("mpt[{}]", i), describe_mpt(tpt.mpts()[i]));
}

}  // namespace nicsim::hca
