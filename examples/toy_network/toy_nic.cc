#include "toy_nic.h"

#include <cstring>

#include "core/sim.h"
#include "fabric/port.h"
#include "trace/stats.h"

namespace toy {

using nicsim::Tick;
namespace fabric = nicsim::fabric;

namespace {

const nicsim::ParamRegistration toy_nic_params(
    "nic.toy", "the toy network's NIC: sends frames to the next address, checks what it receives",
    {
        {"messages", nicsim::UnitKind::Count, "8", "0", "100000", {}, "frames to send"},
        {"size", nicsim::UnitKind::Size, "256B", "16B", "4KiB", {}, "frame size"},
        {"gap", nicsim::UnitKind::Time, "1us", "1ns", "1s", {}, "time between two frames"},
    });

std::uint8_t payload_byte(std::uint32_t seq, std::size_t i) { return static_cast<std::uint8_t>((seq + i) % 251); }

}  // namespace

ToyNic::ToyNic(fabric::Fabric& fabric, std::uint32_t device_id, std::string name, const nicsim::ParamSet& params)
    : Device(fabric, device_id, std::move(name)),
      messages_(params.count("messages")),
      size_(params.size("size")),
      gap_(params.time("gap")) {
  add_ports(1);
  port(1).deliver_after_tail(0);  // a frame counts once all of it is in
  nicsim::StatsRegistry& stats = nicsim::Sim::get().stats();
  stats.counter(this->name(), "toy_sent", "frames", &sent_);
  stats.counter(this->name(), "toy_received", "frames", &received_, "frames whose every byte arrived as sent");
  stats.counter(this->name(), "toy_corrupt", "frames", &corrupt_);
  stats.counter(this->name(), "toy_misdelivered", "frames", &misdelivered_, "frames for another address");
  if (messages_ > 0) nicsim::Sim::get().calendar().at(0, &ToyNic::send_thunk, this, 0);
}

void ToyNic::send_thunk(void* self, std::uint64_t seq) {
  static_cast<ToyNic*>(self)->send(static_cast<std::uint32_t>(seq));
}

void ToyNic::send(std::uint32_t seq) {
  const std::uint16_t dst = static_cast<std::uint16_t>(address_ % network_size_ + 1);
  fabric::Packet* p = fabric().pool().get(size_);
  p->meta.kind = kPacketToy;
  p->meta.slid = address_;
  p->meta.dlid = dst;
  p->meta.created = nicsim::now();
  p->ready_at = nicsim::now();
  std::uint8_t* b = p->bytes.data();
  std::memcpy(b, "TOY1", 4);
  std::memcpy(b + 4, &address_, 2);
  std::memcpy(b + 6, &dst, 2);
  std::memcpy(b + 8, &seq, 4);
  for (std::size_t i = kHeaderBytes; i < size_; ++i) b[i] = payload_byte(seq, i);
  port(1).send(p);
  ++sent_;
  if (sent_ < messages_) nicsim::Sim::get().calendar().after(gap_, &ToyNic::send_thunk, this, seq + 1);
}

bool ToyNic::intact(const fabric::Packet& p) const {
  const std::uint8_t* b = p.bytes.data();
  if (p.bytes.size() < kHeaderBytes || std::memcmp(b, "TOY1", 4) != 0) return false;
  std::uint32_t seq = 0;
  std::memcpy(&seq, b + 8, 4);
  for (std::size_t i = kHeaderBytes; i < p.bytes.size(); ++i)
    if (b[i] != payload_byte(seq, i)) return false;
  return true;
}

void ToyNic::receive(fabric::Port& in, fabric::Packet* p) {
  in.release(*p, nicsim::now());
  std::uint16_t dst = 0;
  if (p->bytes.size() >= kHeaderBytes) std::memcpy(&dst, p->bytes.data() + 6, 2);
  if (p->meta.kind != kPacketToy || dst != address_)
    ++misdelivered_;
  else if (intact(*p))
    ++received_;
  else
    ++corrupt_;
  fabric().pool().put(p);
}

}  // namespace toy
