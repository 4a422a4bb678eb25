// The Quadrics Elite switch as a fabric Device: 8 bidirectional ports
// (1-4 down, 5-8 up), 2 virtual channels per link with credits per VC,
// cut-through forwarding `hop_latency` (35 ns) head in to head out, and
// routing by Elan node id inside a quaternary fat tree (elite_tree.h):
//
//  - unicast (meta.dlid_hi == 0) to node d = meta.dlid: when d is in this
//    switch's subtree the packet goes down port (digit L of d) + 1 (the down
//    route is deterministic); otherwise it goes up, and the up port is chosen
//    adaptively: among up ports whose link is up, the one with the fewest
//    packets waiting for credits, then the one whose wire frees first (the
//    tail of the last packet committed to it: its backlog in wire time),
//    then a rotating preference (the port after the last one chosen) so
//    ties spread; all of it is a function of the simulated state, so runs
//    are reproducible.
//  - hardware broadcast to the node range [meta.dlid, meta.dlid_hi]: up
//    (adaptively) until the switch's subtree covers the range, then one copy
//    down every down port whose subtree intersects the range, and so on
//    below: every node of the range gets exactly one copy (the sender too,
//    when it is in the range). The original keeps its input buffer until the
//    last copy has left, as for IB multicast.
//  - network conditionals (`combine`, on by default): where a broadcast of
//    a kind whose replies combine (fabric::register_reply_combiner) was
//    copied, the copies' replies are joined into one on the way back, so
//    the sender gets a single token answering for the whole range, at the
//    latest of the copies' answers (QsNet's combined acknowledgements).
//  - acknowledgement tokens are not packets in the switch's queues: each
//    returns along the route its packet took, as link control symbols
//    interleaved with the data going the other way (fabric::Port::carry_back),
//    spending `hop_latency` in each switch (carry_through; receive() adds it
//    to the packet's route latency on the way out). The route back is the one the packet opened, as in
//    QsNet, where the switches keep a packet's route until its token has
//    passed; no token is routed anew, waits behind data, or costs an event
//    per hop.
//
// Flow-sticky up-routing (`sticky`, on by default) for Elan packets: while
// packets of one (source, destination) pair still wait in this switch for an
// up port (for credits, or for their turn on the wire: the last one's first
// bit has not left), the next packet of the pair follows them on that
// port instead of being chosen anew, so a pair's packets do not overtake one
// another inside the switch (fewer reorderings for the Elan3's in-sequence
// receiver). Once the pair has nothing waiting here its next packet is chosen
// by load again. Raw frames are always routed by load alone.
//
// The ports carry data on virtual channel 0 only (Elan3 packets and raw
// frames; acknowledgement tokens travel as link control symbols), so each
// commits a packet's start time as it queues (fabric::Port::send_vl0_only)
// instead of waking when its wire frees; a packet on the other channel
// makes that port arbitrate between the two from then on.
//
// Packets of any kind (raw traffic generator frames too) route the same way.
// Nothing is lost silently: a destination or range outside the machine is
// counted in `unroutable`, a packet whose only route is a link that is down
// (or with every up link down) in `dead_route`, a broadcast copy that cannot
// go down a dead link in `broadcast_lost`; each is also a trace event
// ("no_route") naming the packet and the reason.
#pragma once
#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/params.h"
#include "elite/elite_tree.h"
#include "fabric/link.h"
#include "fabric/port.h"

namespace nicsim::elite {

struct EliteSwitchStats {
  std::uint64_t forwarded = 0;                     // unicast packets sent on
  std::uint64_t sticky = 0;                        // up packets that followed their pair's queued packets
  std::uint64_t broadcasts = 0;                    // broadcast packets handled (up or down)
  std::array<std::uint64_t, kArity> up_choices{};  // packets sent up, per up port 5..8
  std::uint64_t broadcast_copies = 0;              // copies sent down
  std::uint64_t unroutable = 0;                    // destination or range outside the machine, or misrouted
  std::uint64_t dead_route = 0;                    // the route's link is down (or every up link is)
  std::uint64_t broadcast_lost = 0;                // broadcast copies not sent for a dead down link
  std::uint64_t replies_combined = 0;              // copies' replies joined into another on the way back
  std::uint64_t combinations_expired = 0;          // broadcasts whose copies' replies never all came back
};

class EliteSwitch : public fabric::Device {
 public:
  // `place`: level and subtree base; `nodes`: N, the machine's node count.
  EliteSwitch(fabric::Fabric& fabric, std::uint32_t device_id, std::string name, const ParamSet& params, Place place,
              std::uint32_t nodes);

  void receive(fabric::Port& in, fabric::Packet* p) override;
  void transmitted(fabric::Port& port, const fabric::Packet& p, Tick start, Tick end) override;
  void link_state_changed(fabric::Port& port, bool up) override;
  Tick carry_through(fabric::Port& in, fabric::Port& out, const fabric::Packet& reply, Tick at) override;
  bool combine_reply(fabric::Port& in, fabric::Packet* reply, std::uint64_t packet_id, int hop, Tick at,
                     Tick ser) override;

  const EliteSwitchStats& stats() const { return stats_; }
  std::uint32_t level() const { return place_.level; }
  std::uint32_t base() const { return place_.base; }
  std::uint64_t span() const { return pow4(place_.level + 1); }  // node positions in the subtree
  Tick hop_latency() const { return hop_latency_; }
  // The down port (1..4) toward node position d, which must be in the subtree.
  std::uint32_t down_port(std::uint32_t d) const {
    return static_cast<std::uint32_t>((d - place_.base) >> (2 * place_.level)) + 1;  // / pow4(level)
  }
  bool in_subtree(std::uint32_t lo, std::uint32_t hi) const { return lo >= place_.base && hi < place_.base + span(); }

 private:
  void unicast(fabric::Port& in, fabric::Packet* p, Tick ready);
  void broadcast(fabric::Port& in, fabric::Packet* p, Tick ready);
  void broadcast_down(fabric::Port& in, fabric::Packet* p, Tick ready);
  // The adaptive (or, with adaptive=false, destination-digit) up port; 0
  // when no up link is alive.
  std::uint32_t choose_up(const fabric::Packet& p);
  std::uint32_t choose_up_by_load();
  static bool sticky_kind(const fabric::Packet& p);
  static std::uint32_t flow_key(const fabric::Packet& p) {
    return static_cast<std::uint32_t>(p.meta.slid) << 16 | p.meta.dlid;
  }
  void send(fabric::Port& in, fabric::Packet* p, std::uint32_t out, Tick ready, const char* what);
  void discard(fabric::Port& in, fabric::Packet* p, std::uint64_t EliteSwitchStats::*counter, const char* why);
  // Connected and its link up.
  bool alive(std::uint32_t number) {
    const fabric::Port& p = port(number);
    return p.connected() && p.up();
  }

  struct Flow {
    std::uint32_t port = 0;    // up port its waiting packets wait on
    std::uint32_t queued = 0;  // packets of the pair not yet committed to the wire (no credits)
    Tick starts_at = 0;        // first bit out of the pair's last packet committed on `port`
  };
  // Flows by flow_key, in an open-addressing table (linear probing, at most
  // half full): one probe or two per packet, no node per entry to chase. A
  // pair with nothing queued (queued 0) chooses anew; its entry stays (no
  // allocation per packet; at most one per pair seen).
  struct FlowSlot {
    std::uint32_t key = 0;
    bool used = false;
    Flow flow;
  };
  Flow& flow(std::uint32_t key);       // inserts {0, 0} when missing
  Flow* find_flow(std::uint32_t key);  // nullptr when missing
  std::size_t flow_slot(std::uint32_t key) const;

  // A broadcast this switch copied, whose copies' replies it joins into one
  // (combine): the replies still to come, the combination so far, the
  // latest head arrival and slowest serialisation among them.
  struct Combination {
    std::uint64_t packet = 0;
    fabric::ReplyCombiner join = nullptr;
    std::uint32_t left = 0;
    fabric::Packet* reply = nullptr;
    Tick head = 0, ser = 0, opened = 0;
  };
  void open_combination(const fabric::Packet& p, std::uint32_t copies);

  Place place_;
  Tick hop_latency_;
  Tick combine_hold_;
  std::vector<Combination> combinations_;  // open ones, oldest first
  std::unique_ptr<FlowSlot[]> flows_;
  std::uint32_t flow_slots_ = 0;  // a power of two (or 0)
  std::uint32_t flow_count_ = 0;  // pairs in flows_
  std::uint32_t nodes_;
  std::uint8_t rotate_ = 0;  // up-port tie-break: prefer the one after the last choice
  bool adaptive_;
  bool sticky_;
  bool combine_;

  EliteSwitchStats stats_;
};

}  // namespace nicsim::elite
