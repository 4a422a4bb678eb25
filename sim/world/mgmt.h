// The management network: a modelled out-of-band Ethernet that programs use
// to exchange bootstrap records (perftest-style QPN/key exchange, barriers).
// Each message takes the sender's serialisation time at the management link
// bandwidth plus a fixed one-way latency (switch and kernel TCP stack), and
// each sender's messages leave in order. It is never a path for data the
// stacks under test must move: that crosses the simulated fabric.
#pragma once
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <vector>

#include "core/params.h"
#include "host/host.h"

namespace nicsim {

class BlockExchange;
class ByteReader;
class ByteWriter;
class Node;

class MgmtNet {
 public:
  MgmtNet(const ParamSet& params, const std::vector<Node*>& nodes);
  ~MgmtNet();
  // From a host thread of node `src`. False for a bad node or size.
  bool send(std::uint32_t src, std::uint32_t dst, std::uint32_t tag, const void* data, std::size_t len);
  // Blocking receive on node `self`; returns the message length or -1 on timeout.
  long recv(std::uint32_t self, std::uint32_t src, std::uint32_t tag, void* buf, std::size_t cap, std::uint32_t* from,
            Tick timeout);
  std::uint64_t messages() const { return messages_; }
  // A run over several processes: how a message to a node another process
  // runs gets there.
  void register_cross_events(BlockExchange& exchange);

 private:
  struct Msg {
    std::uint32_t src, dst, tag;
    std::vector<std::uint8_t> data;
  };
  struct Box {
    std::deque<Msg> inbox;
    std::unique_ptr<host::WaitQueue> arrivals;
    Tick tx_free = 0;
  };
  static void deliver_thunk(void* self, std::uint64_t id);
  static void encode(void* self, void* obj, std::uint64_t id, ByteWriter& out);
  static void decode(void* self, ByteReader& in, void*& obj, std::uint64_t& id);
  Tick latency_;
  std::uint64_t bps_;
  std::vector<Node*> nodes_;
  std::vector<Box> boxes_;
  std::map<std::uint64_t, Msg> in_flight_;
  std::uint64_t next_id_ = 0;
  std::uint64_t messages_ = 0;
};

}  // namespace nicsim
