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

}  // namespace nicsim::hca
