#include "fabric/raw_nic.h"

#include <cmath>
#include <cstring>

#include "core/sim.h"
#include "fabric/fabric.h"

namespace nicsim::fabric {

namespace {
// Payload word i of packet (src, seq): a per-packet seed plus i times an odd
// constant. Distinct words, so any flipped bit or misplaced word is caught,
// at the cost of one add per word (the fill and the check vectorise).
std::uint64_t payload_seed(std::uint32_t src, std::uint64_t seq) {
  std::uint64_t s = (static_cast<std::uint64_t>(src) << 40) ^ seq;
  return splitmix64(s);
}
constexpr std::uint64_t kPayloadStep = 0x9e3779b97f4a7c15ULL;
template <class T>
void put(std::uint8_t* at, T v) {
  std::memcpy(at, &v, sizeof v);
}
template <class T>
T get(const std::uint8_t* at) {
  T v;
  std::memcpy(&v, at, sizeof v);
  return v;
}

// Word i is base + i * step, computed by additions only (word i+1..i+3 are
// constant offsets from word i), so the fill and the check need no 64-bit
// multiplies and vectorise with plain SSE2. Returns the word after the last.
constexpr std::uint64_t kStep2 = 2 * kPayloadStep, kStep3 = 3 * kPayloadStep, kStep4 = 4 * kPayloadStep;

std::uint64_t fill_payload(std::uint8_t* w, std::size_t words, std::uint64_t seed) {
  std::uint64_t v = seed;
  std::size_t i = 0;
  for (; i + 4 <= words; i += 4, v += kStep4) {
    put<std::uint64_t>(w + 8 * i, v);
    put<std::uint64_t>(w + 8 * i + 8, v + kPayloadStep);
    put<std::uint64_t>(w + 8 * i + 16, v + kStep2);
    put<std::uint64_t>(w + 8 * i + 24, v + kStep3);
  }
  for (; i < words; ++i, v += kPayloadStep) put<std::uint64_t>(w + 8 * i, v);
  return v;
}

// OR of (word ^ expected) over the payload: zero when intact.
std::uint64_t check_payload(const std::uint8_t* w, std::size_t words, std::uint64_t seed, std::uint64_t& next) {
  std::uint64_t v = seed, diff = 0;
  std::size_t i = 0;
  for (; i + 4 <= words; i += 4, v += kStep4)
    diff |= (get<std::uint64_t>(w + 8 * i) ^ v) | (get<std::uint64_t>(w + 8 * i + 8) ^ (v + kPayloadStep)) |
            (get<std::uint64_t>(w + 8 * i + 16) ^ (v + kStep2)) | (get<std::uint64_t>(w + 8 * i + 24) ^ (v + kStep3));
  for (; i < words; ++i, v += kPayloadStep) diff |= get<std::uint64_t>(w + 8 * i) ^ v;
  next = v;
  return diff;
}

}  // namespace

RawNic::RawNic(Fabric& fabric, std::uint32_t device_id, std::string name, std::uint32_t node, const ParamSet& params)
    : Device(fabric, device_id, std::move(name)),
      node_(node),
      rx_rate_(params.bandwidth("rx_rate")),
      tx_queue_(static_cast<std::uint32_t>(params.count("tx_queue"))),
      verify_(params.flag("verify")),
      rng_(Sim::get().stream("raw_nic:" + this->name())) {
  const auto ports = static_cast<std::uint32_t>(params.count("ports"));
  add_ports(ports);
  lids_.assign(ports, 0);
  auto& stats = Sim::get().stats();
  latency_ = &stats.histogram(this->name(), "latency", "ps", "packet creation to fully received");
  stats.counter(this->name(), "tx_packets", "packets", &stats_.tx_packets);
  stats.counter(this->name(), "rx_packets", "packets", &stats_.rx_packets);
  stats.counter(this->name(), "rx_bytes", "bytes", &stats_.rx_bytes);
  stats.counter(this->name(), "rx_corrupt", "packets", &stats_.rx_corrupt, "payload check failed");
  stats.counter(this->name(), "source_overflow", "packets", &stats_.source_overflow,
                "generated while the source queue was full");
}

bool RawNic::send(std::uint16_t dlid, std::uint32_t packet_bytes, std::uint8_t vl, std::uint32_t port_number) {
  Port& out = port(port_number);
  if (out.queued() >= tx_queue_) {
    ++stats_.source_overflow;
    return false;
  }
  if (packet_bytes < kRawHeaderBytes) packet_bytes = kRawHeaderBytes;
  Packet* p = fabric().pool().get(packet_bytes);
  const Tick t = now();
  const std::uint64_t seq = seq_++;
  p->meta.src_node = node_;
  p->meta.slid = lid(port_number);
  p->meta.dlid = dlid;
  p->meta.vl = vl;
  p->meta.created = t;
  p->ready_at = t;
  std::uint8_t* b = p->bytes.data();
  put<std::uint32_t>(b, kRawMagic);
  put<std::uint32_t>(b + 4, node_);
  put<std::uint64_t>(b + 8, seq);
  put<std::uint64_t>(b + 16, t);
  const std::uint64_t seed = payload_seed(node_, seq);
  const std::size_t words = (packet_bytes - kRawHeaderBytes) / 8;
  const std::uint64_t last = fill_payload(b + kRawHeaderBytes, words, seed);
  for (std::size_t i = kRawHeaderBytes + 8 * words; i < packet_bytes; ++i)
    b[i] = static_cast<std::uint8_t>(last >> (8 * (i % 8)));
  ++stats_.tx_packets;
  stats_.tx_bytes += packet_bytes;
  out.send(p);
  return true;
}

bool RawNic::verify_frame(const Packet& p) {
  const std::size_t n = p.bytes.size();
  if (n < kRawHeaderBytes) return false;
  const std::uint8_t* b = p.bytes.data();
  if (get<std::uint32_t>(b) != kRawMagic) return false;
  const auto src = get<std::uint32_t>(b + 4);
  const auto seq = get<std::uint64_t>(b + 8);
  if (src != p.meta.src_node || get<std::uint64_t>(b + 16) != p.meta.created) return false;
  const std::uint64_t seed = payload_seed(src, seq);
  const std::size_t words = (n - kRawHeaderBytes) / 8;
  std::uint64_t last;
  std::uint64_t diff = check_payload(b + kRawHeaderBytes, words, seed, last);
  for (std::size_t i = kRawHeaderBytes + 8 * words; i < n; ++i)
    diff |= b[i] ^ static_cast<std::uint8_t>(last >> (8 * (i % 8)));
  return diff == 0;
}

void RawNic::receive(Port& in, Packet* p) {
  // The receive engine drains one packet at a time at rx_rate (or as fast as
  // the wire delivers); the input buffer frees when the packet is drained.
  const Tick t = now();
  Tick done = p->tail_at;
  if (rx_rate_ > 0) {
    const Tick start = std::max(t, rx_free_);
    done = std::max(done, start + serialization_time(p->bytes.size(), rx_rate_));
  }
  rx_free_ = done;
  in.release(*p, done);
  bool member = true;
  if (p->meta.dlid >= kMulticastLidBase) {
    member = false;
    for (auto g : groups_) member |= g == p->meta.dlid;
  }
  if (!member) {
    ++stats_.rx_not_member;
  } else {
    const bool intact = !verify_ || verify_frame(*p);
    ++stats_.rx_packets;
    stats_.rx_bytes += p->bytes.size();
    if (done >= traffic_.measure_from && done < traffic_.stop) stats_.accepted_bytes += p->bytes.size();
    if (!intact) ++stats_.rx_corrupt;
    latency_->add(done - p->meta.created);
    if (rx_hook_) rx_hook_(*p, done, intact);
  }
  fabric().pool().put(p);
}

void RawNic::start_traffic(const TrafficConfig& config) {
  traffic_ = config;
  if (traffic_.destinations.empty() || traffic_.interval == 0) return;
  generating_ = true;
  Sim::get().calendar().at(now(), &RawNic::generate_thunk, this);
}

void RawNic::generate_thunk(void* self, std::uint64_t) { static_cast<RawNic*>(self)->generate(); }

void RawNic::generate() {
  const Tick t = now();
  if (t >= traffic_.stop) {
    generating_ = false;
    return;
  }
  const auto& d = traffic_.destinations;
  const std::uint16_t dlid = d.size() == 1      ? d[0]
                             : traffic_.in_turn ? d[next_destination_++ % d.size()]
                                                : d[rng_.below(d.size())];
  std::uint32_t vl = traffic_.vl;
  if (traffic_.vls > 1) vl += traffic_.vl_by_destination ? dlid % traffic_.vls : rng_.below(traffic_.vls);
  send(dlid, traffic_.packet_bytes, static_cast<std::uint8_t>(vl), traffic_.port);
  Tick gap = traffic_.interval;
  if (traffic_.poisson) {
    const double u = 1.0 - rng_.uniform();  // (0, 1]
    gap = static_cast<Tick>(-std::log(u) * static_cast<double>(traffic_.interval)) + 1;
  }
  Sim::get().calendar().at(t + gap, &RawNic::generate_thunk, this);
}

}  // namespace nicsim::fabric
