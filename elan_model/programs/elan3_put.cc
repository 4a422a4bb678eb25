// elan3_put: the driver-level polled put, the Elan3's basic remote write,
// as a ping-pong between ranks 0 and 1 (docs/elan3.md, "Where the time
// goes"). Each side issues a put of `size` bytes as soon as it sees the
// peer's put arrive (its destination event fires; it polls, no interrupts),
// then re-primes its event. Results put_lat_<size>: half the round trip in
// ns, mean over --iters after two warm-up round trips. Every put carries a
// pattern of its round and size that the receiver checks byte for byte.
//
//   --sizes=A,B,...    bytes per put (default 8,64,256,1024,4096; at most 4096)
//   --iters=N          timed round trips per size (default 100)
//   --buffers=card|host  the buffers in the card's SDRAM (default) or in
//                      node memory (the put then reads its bytes over PCI)
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "core/sim.h"
#include "elan_model/driver/elan3_dev.h"
#include "world/programs.h"

namespace nicsim::elan3 {
namespace {

constexpr std::uint32_t kTagPeer = 0x3200;
constexpr std::uint32_t kMaxSize = 4096;
constexpr std::uint32_t kWarmup = 2;
constexpr Tick kGiveUp = 100 * kMs;  // a wait this long means the network lost the put

struct Options {
  std::vector<std::uint32_t> sizes{8, 64, 256, 1024, 4096};
  std::uint32_t iters = 100;
  bool card = true;
};

bool parse(int argc, char** argv, Options& o) {
  for (int i = 1; i < argc; ++i) {
    const char* a = argv[i];
    std::uint64_t v = 0, sizes[64];
    std::uint32_t n = 0;
    int got;
    if ((got = nicsim_arg_u64(a, "--iters=", 1, 1000000, &v)) != 0) {
      o.iters = static_cast<std::uint32_t>(v);
    } else if ((got = nicsim_arg_u64_list(a, "--sizes=", 1, kMaxSize, sizes, 64, &n)) != 0) {
      o.sizes.assign(sizes, sizes + (got > 0 ? n : 0));
    } else if (!std::strcmp(a, "--buffers=card") || !std::strcmp(a, "--buffers=host")) {
      o.card = !std::strcmp(a, "--buffers=card");
      got = 1;
    } else {
      nicsim_log(
          "elan3_put: unknown argument %s (--sizes=A,B,... of 1..%u bytes, --iters=1..1000000, "
          "--buffers=card|host)",
          a, kMaxSize);
      return false;
    }
    if (got < 0) return false;
  }
  return true;
}

int check_options(int argc, char** argv) {
  Options o;
  return parse(argc, argv, o) ? 0 : -1;
}

struct Peer {
  std::uint32_t node;
  E3Addr buffer, event;
};

std::uint8_t pattern(std::uint32_t round, std::uint32_t size, std::uint32_t i) {
  return static_cast<std::uint8_t>(round * 31 + size * 7 + i);
}

// One side of the ping-pong: a buffer whose first half the puts read and
// whose second half they land in, and the event the peer's puts set.
class PutSide {
 public:
  PutSide(Elan3Dev& d, bool card)
      : d_(d),
        buffer_(card ? d.alloc_card(2 * kMaxSize, 64, perm::kRemoteWrite)
                     : d.alloc_mem(2 * kMaxSize, 64, perm::kRemoteWrite)),
        event_(d.alloc_event(true)) {}
  bool ok() const { return buffer_ && event_; }
  Peer mine() const { return {d_.node_id(), buffer_.elan, event_.elan}; }
  void arm() { d_.prime_event(event_, 1, event::Type::None, 0, 0, false); }
  // Writes round `round`'s pattern and puts it to the peer.
  bool put(const Peer& peer, std::uint32_t round, std::uint32_t size) {
    std::uint8_t data[kMaxSize];
    for (std::uint32_t i = 0; i < size; ++i) data[i] = pattern(round, size, i);
    d_.store(buffer_, 0, data, size);
    DmaRequest r;
    r.size = size;
    r.source = buffer_.elan;
    r.dest = peer.buffer + kMaxSize;
    r.dest_event = peer.event;
    r.dest_node = peer.node;
    return d_.issue_dma(r) == DevStatus::Ok;
  }
  // Polls for the peer's put of round `round`; false when it never came or
  // its bytes are wrong. The caller re-arms the event after answering (the
  // peer's next put comes a whole round trip later), as a polled put loop
  // is written.
  bool take(std::uint32_t round, std::uint32_t size) {
    for (const Tick until = now() + kGiveUp; !d_.event_fired(event_);)
      if (now() > until) return false;
    const auto* got = static_cast<const std::uint8_t*>(buffer_.host) + kMaxSize;
    for (std::uint32_t i = 0; i < size; ++i)
      if (got[i] != pattern(round, size, i)) return false;
    return true;
  }

 private:
  Elan3Dev& d_;
  ElanMem buffer_, event_;
};

// Rank 0 puts round k and takes its echo, then puts round k + 1; rank 1
// takes round k and echoes it. Each re-arms its event after its put.
// Returns the half round trip in ps (rank 0), 0 on failure.
Tick ping_pong(PutSide& side, const Peer& peer, std::uint32_t size, std::uint32_t iters) {
  const bool first = nicsim_workload_rank() == 0;
  const std::uint32_t rounds = iters + kWarmup;
  Tick start = 0;
  if (first && !side.put(peer, 0, size)) return 0;
  for (std::uint32_t round = 0; round < rounds; ++round) {
    if (!side.take(round, size)) {
      nicsim_log("elan3_put: round %u of %u bytes did not arrive intact", round, size);
      return 0;
    }
    // Rank 0 times from its put of the first round after the warm-up to
    // the echo of the last.
    if (first && round + 1 == kWarmup) start = now();
    const std::uint32_t next = first ? round + 1 : round;
    if (next < rounds && !side.put(peer, next, size)) return 0;
    side.arm();
  }
  return first ? (now() - start) / (2 * iters) : 1;
}

int put_main(int argc, char** argv) {
  Options o;
  if (!parse(argc, argv, o)) return 2;
  Elan3Dev* d = Elan3Dev::attach();
  if (!d || nicsim_workload_size() != 2) {
    nicsim_log("elan3_put: needs an Elan3 and a workload of two nodes");
    return 2;
  }
  PutSide side(*d, o.card);
  if (!side.ok()) return 1;
  side.arm();
  const std::uint32_t other = nicsim_workload_node(1 - nicsim_workload_rank());
  const Peer mine = side.mine();
  Peer peer{};
  if (nicsim_mgmt_send(other, kTagPeer, &mine, sizeof mine) != 0 ||
      nicsim_mgmt_recv(other, kTagPeer, &peer, sizeof peer, nullptr, 0) != sizeof peer)
    return 1;
  for (std::uint32_t size : o.sizes) {
    nicsim_barrier();
    const Tick half = ping_pong(side, peer, size, o.iters);
    if (half == 0) return 1;
    if (nicsim_workload_rank() == 0)
      nicsim_result(("put_lat_" + std::to_string(size)).c_str(), static_cast<double>(half) / kNs, "ns");
  }
  nicsim_barrier();
  return 0;
}

const BuiltinProgram reg_put("elan3_put", put_main,
                             "driver-level polled put ping-pong between two Elan3 nodes: put_lat_<size> (ns). "
                             "--sizes=8,64,256,1024,4096 (at most 4096), --iters=100, --buffers=card|host",
                             check_options);

}  // namespace
}  // namespace nicsim::elan3
