// A full-duplex link between two ports: bandwidth, propagation delay, VLs
// with per-VL receive buffers, up/down state (an FSM), and injected faults
// (packet drop rate and bit-error rate, from the link's own seeded stream).
#pragma once
#include <cstdint>
#include <memory>
#include <string>

#include "core/inspect.h"
#include "core/params.h"
#include "core/rng.h"
#include "fabric/port.h"
#include "fsm/fsm.h"

namespace nicsim::fabric {

#define NICSIM_LINK_STATES(X) X(Up) X(Down)
#define NICSIM_LINK_EVENTS(X) X(Down) X(Up)
NICSIM_FSM_ENUM(LinkState, NICSIM_LINK_STATES)
NICSIM_FSM_ENUM(LinkEvent, NICSIM_LINK_EVENTS)

// FSM "link": fault injection (or a test) takes a link down and up again.
struct LinkMachine {
  using State = LinkState;
  using Event = LinkEvent;
  static const FsmType& type();
};

class Link {
 public:
  // Connects a and b with the "link" scope parameters.
  Link(std::string name, std::uint32_t index, Port& a, Port& b, const ParamSet& params, std::uint64_t seed);
  const std::string& name() const { return name_; }
  // Its place among the links this process built (in one process, its
  // scenario index; over several, links with no end here are not built).
  std::uint32_t index() const { return index_; }
  Port& a() const { return a_; }
  Port& b() const { return b_; }
  std::uint64_t bits_per_second() const { return bps_; }
  Tick delay() const { return delay_; }
  int vls() const { return vls_; }
  std::uint32_t vl_buffer_blocks() const { return vl_blocks_; }
  std::uint32_t vl15_buffer_packets() const { return vl15_packets_; }

  bool up() const { return fsm_.state() == LinkState::Up; }
  // The link joins two partition blocks: everything crossing it (packets,
  // credits) is an event of the receiving end's block, and each direction
  // draws its faults from its own stream (docs/partition.md).
  void set_cut();
  bool cut() const { return cut_; }
  // Fault injection. Packets on the wire when the link goes down are lost.
  void set_up(bool up, std::string_view cause);
  void set_drop_rate(double r);
  void set_bit_error_rate(double ber);
  // The same change applied to one end (`end` is a() or b()), as that end's
  // block: a world split into blocks changes each end by an event of its
  // own block at the same time, so that a process changes only the ends it
  // runs. The link's own state machine and counters follow end a.
  void set_end_up(Port& end, bool up, std::string_view cause);
  void set_end_rates(Port& end, double drop_rate, double bit_error_rate);
  double drop_rate() const { return drop_rate_; }
  double bit_error_rate() const { return ber_; }
  std::uint32_t generation() const { return generation_; }
  Tick last_down() const { return last_down_; }

  // Decides the fate of one packet put on the wire: false = dropped;
  // true = delivered, possibly with flipped bits in its bytes. A link
  // without error injection passes everything without drawing a number.
  bool pass(Packet& p, const Port& from) {
    return (drop_rate_ <= 0 && ber_ <= 0) || pass_injecting(p, cut_ && &from == &b_ ? rng_ba_ : rng_);
  }

 private:
  static void inspect(const void* self, InspectRows& rows);
  bool pass_injecting(Packet& p, Rng& rng);
  // Copies the state a hop reads (up, fault injection, generation) into both
  // ports, so forwarding never reads the Link.
  void mirror();
  void mirror_end(Port& end) const;
  // An end's device learns of a change of state (as that end's block).
  void tell_end(Port& end, bool up);
  std::string name_;
  std::uint32_t index_;
  Port& a_;
  Port& b_;
  std::uint64_t bps_;
  Tick delay_;
  int vls_;
  std::uint32_t vl_blocks_;
  std::uint32_t vl15_packets_;
  double drop_rate_;
  double ber_;
  std::uint32_t generation_ = 0;  // bumped on every down transition
  Tick last_down_ = kTickMax;     // when it last went down (kTickMax: never)
  bool injecting_ = false;        // drop_rate or bit_error_rate set (counted by the fabric)
  Rng rng_;                       // both directions' draws, or a to b's on a cut link
  Rng rng_ba_;                    // b to a's on a cut link
  bool cut_ = false;
  Fsm<LinkMachine> fsm_;
  Inspectable inspectable_;  // "link": both ports' queues and credits
};

}  // namespace nicsim::fabric
