// One HCA port's internal loopback. A packet that a QP of this HCA sends to
// the port's own LID turns around inside the HCA: the port logic hands it
// from its transmit side to its receive side without the SerDes and the
// wire, as InfiniHost-class HCAs do. Only the wire is skipped: the requester
// built the packet (PSN, headers, CRCs, payload read by DMA), and the
// responder checks it like any other (PSN, keys, DMA into host memory), so
// a loopback connection behaves like one across the fabric, only faster.
//
// The path carries one packet at a time, in order, at `loopback_bandwidth`,
// and delivers each `loopback_latency` after its tail. A packet leaves the
// path (and makes room for the send engine) when it is delivered.
#pragma once
#include <cstdint>
#include <deque>

#include "core/units.h"
#include "fabric/packet.h"

namespace nicsim::hca {

class Hca;

class Loopback {
 public:
  Loopback(Hca& hca, std::uint32_t port);
  ~Loopback();
  Loopback(const Loopback&) = delete;
  Loopback& operator=(const Loopback&) = delete;

  std::size_t queued() const { return fifo_.size(); }
  void send(fabric::Packet* p);
  std::uint64_t packets() const { return packets_; }
  std::uint64_t bytes() const { return bytes_; }

 private:
  struct Queued {
    Tick arrives;
    fabric::Packet* pkt;
  };
  void deliver();

  Hca& hca_;
  std::uint32_t port_;
  std::deque<Queued> fifo_;
  Tick busy_until_ = 0;  // the path's transmit side is free from here
  std::uint64_t packets_ = 0, bytes_ = 0;
};

}  // namespace nicsim::hca
