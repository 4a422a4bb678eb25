// The "raw" NIC kind: a bare fabric endpoint with no host interface beyond
// a send call and a receive hook, plus a hardware-style traffic generator.
// It lets the fabric be used and measured independently of any NIC model.
//
// Raw frame on the wire (little-endian):
//   0  u32 magic 0x5752534e ("NSRW")   4  u32 source node
//   8  u64 sequence number             16 u64 creation time (ps)
//   24 payload: 64-bit words seed + i * 0x9e3779b97f4a7c15, where seed is
//      splitmix64 of (source << 40 ^ sequence); a tail shorter than a word
//      holds the low bytes of the next word
#pragma once
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "core/params.h"
#include "core/rng.h"
#include "fabric/port.h"
#include "trace/stats.h"

namespace nicsim::fabric {

inline constexpr std::uint32_t kRawMagic = 0x5752534e;
inline constexpr std::size_t kRawHeaderBytes = 24;

struct RawNicStats {
  std::uint64_t tx_packets = 0, tx_bytes = 0;
  std::uint64_t rx_packets = 0, rx_bytes = 0;
  std::uint64_t rx_corrupt = 0;       // payload check failed (bit errors)
  std::uint64_t rx_not_member = 0;    // multicast for a group not joined
  std::uint64_t source_overflow = 0;  // generated while the source queue was full
  std::uint64_t accepted_bytes = 0;   // fully received in [measure_from, stop) of the traffic
};

struct TrafficConfig {
  std::vector<std::uint16_t> destinations;  // one = fixed (permutation); several = uniform choice
  bool in_turn = false;                     // several: each in turn, in order (an all-to-all exchange)
  std::uint32_t packet_bytes = 2048;        // wire length, >= kRawHeaderBytes
  Tick interval = 0;                        // mean time between packets
  bool poisson = false;                     // exponential gaps instead of fixed
  Tick stop = 0;                            // generate while now < stop
  Tick measure_from = 0;                    // count what arrives from then until stop (accepted_bytes)
  std::uint8_t vl = 0;
  std::uint8_t vls = 1;           // spread over VLs vl .. vl + vls - 1
  bool vl_by_destination = true;  // by the destination LID modulo vls (else at random per packet)
  std::uint32_t port = 1;
};

class RawNic : public Device {
 public:
  RawNic(Fabric& fabric, std::uint32_t device_id, std::string name, std::uint32_t node, const ParamSet& params);

  std::uint32_t node() const { return node_; }
  std::uint16_t lid(std::uint32_t port = 1) const { return lids_.at(port - 1); }
  void set_lid(std::uint32_t port, std::uint16_t lid) { lids_.at(port - 1) = lid; }
  void assign_address(std::uint32_t port, std::uint16_t lid) override { set_lid(port, lid); }
  void join_multicast(std::uint16_t mlid) { groups_.push_back(mlid); }

  // Builds a raw frame of `packet_bytes` and queues it; false (and counted)
  // if the source queue is full.
  bool send(std::uint16_t dlid, std::uint32_t packet_bytes, std::uint8_t vl = 0, std::uint32_t port = 1);
  // Called for every received packet once it is fully drained (`done`),
  // with the verdict of the payload check.
  using RxHook = std::function<void(const Packet& p, Tick done, bool intact)>;
  void on_receive(RxHook hook) { rx_hook_ = std::move(hook); }

  void start_traffic(const TrafficConfig& config);
  bool generating() const { return generating_; }
  std::uint32_t queued(std::uint32_t port = 1) { return this->port(port).queued(); }

  void receive(Port& in, Packet* p) override;
  const RawNicStats& stats() const { return stats_; }
  Histogram& latency() { return *latency_; }  // creation -> fully received, ps

  static bool verify_frame(const Packet& p);

 private:
  static void generate_thunk(void* self, std::uint64_t);
  void generate();
  std::uint32_t node_;
  std::vector<std::uint16_t> lids_;
  std::vector<std::uint16_t> groups_;
  std::uint64_t rx_rate_;
  std::uint32_t tx_queue_;
  bool verify_;
  Tick rx_free_ = 0;
  std::uint64_t seq_ = 0;
  RxHook rx_hook_;
  TrafficConfig traffic_;
  std::size_t next_destination_ = 0;  // in_turn: the next one's index
  bool generating_ = false;
  Rng rng_;
  RawNicStats stats_;
  Histogram* latency_;
};

}  // namespace nicsim::fabric
