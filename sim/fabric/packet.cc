#include "fabric/packet.h"

#include <algorithm>
#include <array>
#include <fmt/format.h>
#include <stdexcept>

#include "core/sim.h"

namespace nicsim::fabric {

namespace {
std::array<ReplyCombiner, 256>& reply_combiners() {
  static std::array<ReplyCombiner, 256> table{};
  return table;
}
}  // namespace

void register_reply_combiner(std::uint8_t reply_kind, ReplyCombiner combine) {
  ReplyCombiner& slot = reply_combiners()[reply_kind];
  if (slot && slot != combine)
    throw std::logic_error(fmt::format("packet kind {} already has a reply combiner", unsigned{reply_kind}));
  slot = combine;
}

ReplyCombiner reply_combiner(std::uint8_t reply_kind) { return reply_combiners()[reply_kind]; }

PacketPool::~PacketPool() = default;

Packet* PacketPool::get(std::size_t len) {
  Packet* p = take(len);
  p->meta.id = new_id();
  return p;
}

std::uint64_t PacketPool::new_block_id() {
  const std::uint32_t b = Sim::get().calendar().current_block();
  return std::uint64_t{b} << 40 | ++block_ids_.at(b);
}

Packet* PacketPool::take(std::size_t len) {
  Packet* p;
  if (free_.empty()) {
    p = made_.emplace_back(std::make_unique<Packet>()).get();
    ++allocated_;
  } else {
    p = free_.back();
    free_.pop_back();
  }
  p->meta = PacketMeta{};
  p->bytes.resize(len);
  p->next = nullptr;
  p->holder = nullptr;
  p->parent = nullptr;
  p->copies_left = 0;
  p->ready_at = p->tail_at = p->release_at = 0;
  p->route_latency = 0;
  p->route_ps_per_byte = 0;
  p->route_carriers = 0;
  p->carry_last_cut = -1;
  p->device_refs = 0;
  ++live_;
  return p;
}

Packet* PacketPool::clone(const Packet& src) {
  Packet* p = take(src.bytes.size());
  p->meta = src.meta;
  std::copy(src.bytes.begin(), src.bytes.end(), p->bytes.begin());
  if (src.meta.keep_route) std::copy_n(src.route, std::min<int>(src.meta.hops, kRouteSlots), p->route);
  p->route_latency = src.route_latency;
  p->route_ps_per_byte = src.route_ps_per_byte;
  p->route_carriers = src.route_carriers;
  return p;
}

void PacketPool::put(Packet* p) {
  --live_;
  free_.push_back(p);
}

}  // namespace nicsim::fabric
