#include "world/mgmt.h"

#include <cstring>

#include "core/block_exchange.h"
#include "core/sim.h"
#include "nicsim/app.h"
#include "trace/trace.h"
#include "world/node.h"

namespace nicsim {

namespace {
const ParamRegistration mgmt_params(
    "mgmt", "the out-of-band management network used for bootstrap exchanges",
    {
        {"latency",
         UnitKind::Time,
         "50us",
         "0ps",
         "1s",
         {},
         "one-way latency of a small message (Gigabit Ethernet switch + kernel TCP, circa 2003)"},
        {"bandwidth", UnitKind::Bandwidth, "1Gbps", "1Mbps", "100Gbps", {}, "management link rate"},
    });
}

MgmtNet::MgmtNet(const ParamSet& params, const std::vector<Node*>& nodes)
    : latency_(params.time("latency")), bps_(params.bandwidth("bandwidth")), nodes_(nodes), boxes_(nodes.size()) {
  for (std::size_t i = 0; i < nodes.size(); ++i)
    if (nodes[i]->runs_here()) boxes_[i].arrivals = std::make_unique<host::WaitQueue>(nodes[i]->host());
}

MgmtNet::~MgmtNet() = default;

bool MgmtNet::send(std::uint32_t src, std::uint32_t dst, std::uint32_t tag, const void* data, std::size_t len) {
  if (src >= nodes_.size() || dst >= nodes_.size() || len > NICSIM_MGMT_MAX || (!data && len)) return false;
  Box& from = boxes_[src];
  const Tick start = std::max(now(), from.tx_free);
  // 64 bytes of Ethernet/IP/TCP framing per message.
  from.tx_free = start + serialization_time(len + 64, bps_);
  Msg m{src, dst, tag, std::vector<std::uint8_t>(len)};
  if (len) std::memcpy(m.data.data(), data, len);
  const std::uint64_t id = next_id_++;
  in_flight_.emplace(id, std::move(m));
  ++messages_;
  Sim& sim = Sim::get();
  if (sim.tracer().on(src, Component::mgmt))
    sim.tracer().record(now(), src, Component::mgmt, "send", {{"dst", dst}, {"tag", tag}, {"len", len}});
  // Delivered as the receiver's block (its wait queue is its node's).
  sim.calendar().at_on(nodes_[dst]->block(), from.tx_free + latency_, &MgmtNet::deliver_thunk, this, id);
  return true;
}

void MgmtNet::deliver_thunk(void* self, std::uint64_t id) {
  auto* net = static_cast<MgmtNet*>(self);
  auto it = net->in_flight_.find(id);
  Msg m = std::move(it->second);
  net->in_flight_.erase(it);
  Box& box = net->boxes_[m.dst];
  box.inbox.push_back(std::move(m));
  box.arrivals->notify_all();
}

void MgmtNet::register_cross_events(BlockExchange& exchange) {
  exchange.register_kind({"management message", &MgmtNet::deliver_thunk, this, &MgmtNet::encode, &MgmtNet::decode});
}

void MgmtNet::encode(void* self, void*, std::uint64_t id, ByteWriter& out) {
  auto* net = static_cast<MgmtNet*>(self);
  auto it = net->in_flight_.find(id);
  const Msg& m = it->second;
  out.put(m.src);
  out.put(m.dst);
  out.put(m.tag);
  out.put(static_cast<std::uint32_t>(m.data.size()));
  out.put_bytes(m.data.data(), m.data.size());
  net->in_flight_.erase(it);
}

void MgmtNet::decode(void* self, ByteReader& in, void*& obj, std::uint64_t& id) {
  auto* net = static_cast<MgmtNet*>(self);
  Msg m;
  m.src = in.get<std::uint32_t>();
  m.dst = in.get<std::uint32_t>();
  m.tag = in.get<std::uint32_t>();
  m.data.resize(in.get<std::uint32_t>());
  in.get_bytes(m.data.data(), m.data.size());
  if (m.src >= net->nodes_.size() || m.dst >= net->nodes_.size())
    throw std::runtime_error("block exchange: a management message names no node");
  obj = net;
  id = net->next_id_++;
  net->in_flight_.emplace(id, std::move(m));
}

long MgmtNet::recv(std::uint32_t self, std::uint32_t src, std::uint32_t tag, void* buf, std::size_t cap,
                   std::uint32_t* from, Tick timeout) {
  if (self >= nodes_.size() || (!buf && cap)) return -1;
  Box& box = boxes_[self];
  const Tick deadline = timeout ? add_saturating(now(), timeout) : kTickMax;
  for (;;) {
    for (auto it = box.inbox.begin(); it != box.inbox.end(); ++it) {
      if (it->tag != tag || (src != NICSIM_ANY_NODE && it->src != src)) continue;
      const std::size_t n = std::min(cap, it->data.size());
      if (n) std::memcpy(buf, it->data.data(), n);
      if (from) *from = it->src;
      box.inbox.erase(it);
      return static_cast<long>(n);
    }
    const bool woke = timeout ? box.arrivals->wait_until(deadline) : box.arrivals->wait();
    if (!woke && (timeout == 0 || now() >= deadline)) return -1;
  }
}

}  // namespace nicsim
