// What the debugger shows of a port: its queues, credits and counters, and
// the packets it holds or has on the wire.
#include <fmt/format.h>

#include <algorithm>

#include "core/sim.h"
#include "fabric/link.h"
#include "fabric/port.h"

namespace nicsim::fabric {

void Port::inspect(InspectRows& rows) const {
  const std::string p = fmt::format("port{}.", number_);
  add_row(rows, p + "up", up_ ? "yes" : "no");
  add_row(rows, p + "busy_until", format_time(busy_until_));
  add_row(rows, p + "queued", std::to_string(queued_));
  for (int vl = 0; vl < vls_; ++vl) {
    std::size_t n = 0;
    for (const Packet* q = vl_[vl].head; q; q = q->next) ++n;
    add_row(rows, fmt::format("{}vl{}", p, vl),
            fmt::format("{} queued, {} credits of {} blocks", n, vl_[vl].credits, vl_blocks_));
  }
  std::size_t vl15 = 0;
  for (const Packet* q = vl15_head_; q; q = q->next) ++vl15;
  add_row(rows, p + "vl15_queued", std::to_string(vl15));
  add_row(rows, p + "credit_returns_pending", std::to_string(pending_credits_.size()));
  add_row(rows, p + "credit_stalls", std::to_string(credit_stalls_));
  add_row(rows, p + "tx_packets", std::to_string(tx_packets_));
  add_row(rows, p + "rx_packets", std::to_string(rx_packets_));
  add_row(rows, p + "on_the_wire", std::to_string(on_the_wire().size()));
}

std::vector<const Packet*> Port::queued_packets() const {
  std::vector<const Packet*> out;
  for (const Packet* q = vl15_head_; q; q = q->next) out.push_back(q);
  for (int vl = 0; vl < vls_; ++vl)
    for (const Packet* q = vl_[vl].head; q; q = q->next) out.push_back(q);
  return out;
}

std::vector<const Packet*> Port::on_the_wire() const {
  // Arrivals at the peer are calendar events of the peer's arrive_thunk.
  std::vector<std::pair<Tick, const Packet*>> found;
  if (!peer_) return {};
  Sim::get().calendar().for_each_pending([&](Tick t, EventFn fn, void* obj, std::uint64_t arg) {
    if (fn == &Port::arrive_thunk && obj == peer_) found.emplace_back(t, reinterpret_cast<const Packet*>(arg));
  });
  std::sort(found.begin(), found.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<const Packet*> out;
  for (const auto& [t, pkt] : found) out.push_back(pkt);
  return out;
}

}  // namespace nicsim::fabric
