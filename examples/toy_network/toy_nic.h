// The toy NIC (kind "toy"): one port, no host interface. From `nic.toy.start`
// it sends `nic.toy.messages` frames of `nic.toy.size` bytes, one every
// `nic.toy.gap`, to the next address on its network (its own + 1, wrapping
// to 1), and checks every frame it receives byte by byte.
//
// Frame: magic "TOY1" (4 bytes), source address (2), destination (2),
// sequence number (4), then payload byte i = (sequence + i) mod 251.
#pragma once
#include <cstdint>
#include <string>

#include "core/params.h"
#include "fabric/fabric.h"

namespace toy {

inline constexpr std::uint8_t kPacketToy = 42;  // PacketMeta::kind
inline constexpr std::size_t kHeaderBytes = 12;

class ToyNic : public nicsim::fabric::Device {
 public:
  ToyNic(nicsim::fabric::Fabric& fabric, std::uint32_t device_id, std::string name, const nicsim::ParamSet& params);

  void assign_address(std::uint32_t port, std::uint16_t address) override { address_ = address; }
  void assign_network_size(std::uint32_t addresses) override { network_size_ = addresses; }
  void receive(nicsim::fabric::Port& in, nicsim::fabric::Packet* p) override;

 private:
  static void send_thunk(void* self, std::uint64_t seq);
  void send(std::uint32_t seq);
  bool intact(const nicsim::fabric::Packet& p) const;

  std::uint16_t address_ = 0;
  std::uint32_t network_size_ = 0;
  std::uint64_t messages_;
  std::uint64_t size_;
  nicsim::Tick gap_;
  std::uint64_t sent_ = 0, received_ = 0, corrupt_ = 0, misdelivered_ = 0;
};

}  // namespace toy
