// Test harness for the Elite fabric: a minimal endpoint device (independent
// of the Elan NIC model) and a builder for a whole quaternary fat tree.
//
// Endpoint frame (what it puts on the wire): u32 source node id, u32
// sequence, then bytes (source * 31 + sequence * 7 + i) & 0xff; the receiver
// checks every byte. The endpoint frees its input buffer when the tail has
// arrived, unless a VC is held (to build back-pressure), records each
// arrival, and may answer it with a reply carried back along its route.
#pragma once
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/sim.h"
#include "elite/elite_switch.h"
#include "elite/elite_packets.h"
#include "elite/elite_tree.h"
#include "fabric/fabric.h"
#include "fabric/link.h"

namespace nicsim::elite::testing {

struct Arrival {
  std::uint64_t id = 0;
  std::uint32_t src = 0;
  std::uint32_t seq = 0;
  Tick head = 0;  // first bit in (a reply: when it was sent)
  Tick done = 0;  // tail in
  std::uint8_t vl = 0;
  std::uint8_t kind = 0;
  std::uint16_t hops = 0;
  bool intact = false;
};

class Endpoint : public fabric::Device {
 public:
  Endpoint(fabric::Fabric& f, std::uint32_t device_id, std::string name) : Device(f, device_id, std::move(name)) {
    add_ports(1);
  }
  std::uint32_t id() const { return id_; }
  void assign_address(std::uint32_t, std::uint16_t lid) override { id_ = lid; }

  // Queues one frame of `bytes` (>= 8) to node `dlid` (or the range
  // [dlid, dlid_hi] when dlid_hi != 0).
  void send(std::uint16_t dlid, std::uint32_t bytes, std::uint8_t vl = 0, std::uint8_t kind = fabric::kPacketElan,
            std::uint16_t dlid_hi = 0) {
    fabric::Packet* p = fabric().pool().get(bytes);
    const std::uint32_t seq = seq_++;
    p->meta.src_node = id_;
    p->meta.slid = static_cast<std::uint16_t>(id_);
    p->meta.dlid = dlid;
    p->meta.dlid_hi = dlid_hi;
    p->meta.vl = vl;
    p->meta.kind = kind;
    p->meta.keep_route = true;  // for a reply (answer())
    p->meta.created = now();
    p->ready_at = now();
    std::memcpy(p->bytes.data(), &id_, 4);
    std::memcpy(p->bytes.data() + 4, &seq, 4);
    for (std::uint32_t i = 8; i < bytes; ++i) p->bytes[i] = pattern(id_, seq, i);
    port(1).send(p);
  }

  void receive(fabric::Port& in, fabric::Packet* p) override {
    if (hold_[p->meta.vl]) {
      held_.push_back(p);
      return;
    }
    take(in, p, p->tail_at);
  }
  // Answers every Elan-kind packet with a 16-byte reply (source node id,
  // sequence, a pattern) carried back along its route once its tail is in,
  // as the Elan3 answers with ack tokens.
  void answer() { answering_ = true; }
  // A carried reply: recorded when its tail is in, with whether its route
  // was still intact then.
  void take_reply(fabric::Port&, fabric::Packet* r) override {
    auto* ctx = new std::pair<Endpoint*, fabric::Packet*>(this, r);
    Sim::get().calendar().at(
        r->tail_at,
        [](void* c, std::uint64_t) {
          auto* pr = static_cast<std::pair<Endpoint*, fabric::Packet*>*>(c);
          pr->first->record_reply(pr->second);
          delete pr;
        },
        ctx);
  }
  std::vector<Arrival> replies;

  // Holds (does not free) packets arriving on `vl` until release_held().
  void hold(int vl) { hold_[vl] = true; }
  void release_held() {
    hold_ = {};
    for (fabric::Packet* p : held_) take(port(1), p, std::max(now(), p->tail_at));
    held_.clear();
  }

  std::vector<Arrival> arrivals;

 private:
  static std::uint8_t pattern(std::uint32_t src, std::uint32_t seq, std::uint32_t i) {
    return static_cast<std::uint8_t>(src * 31 + seq * 7 + i);
  }
  void take(fabric::Port& in, fabric::Packet* p, Tick done) {
    in.release(*p, done);
    Arrival a;
    a.id = p->meta.id;
    std::memcpy(&a.src, p->bytes.data(), 4);
    std::memcpy(&a.seq, p->bytes.data() + 4, 4);
    a.head = now();
    a.done = done;
    a.vl = p->meta.vl;
    a.kind = p->meta.kind;
    a.hops = p->meta.hops;
    a.intact = a.src == p->meta.src_node;
    for (std::size_t i = 8; i < p->bytes.size() && a.intact; ++i)
      a.intact = p->bytes[i] == pattern(a.src, a.seq, static_cast<std::uint32_t>(i));
    arrivals.push_back(a);
    if (answering_ && p->meta.kind == fabric::kPacketElan) {
      // Answered when its tail is in.
      auto* ctx = new std::pair<Endpoint*, fabric::Packet*>(this, p);
      Sim::get().calendar().at(
          done,
          [](void* c, std::uint64_t) {
            auto* pr = static_cast<std::pair<Endpoint*, fabric::Packet*>*>(c);
            pr->first->reply_to(pr->second);
            delete pr;
          },
          ctx);
      return;
    }
    fabric().pool().put(p);
  }
  void reply_to(fabric::Packet* p) {
    std::uint32_t seq;
    std::memcpy(&seq, p->bytes.data() + 4, 4);
    fabric::Packet* r = fabric().pool().get(16);
    std::memcpy(r->bytes.data(), &id_, 4);
    std::memcpy(r->bytes.data() + 4, &seq, 4);
    for (std::uint32_t i = 8; i < 16; ++i) r->bytes[i] = pattern(id_, seq, i);
    r->meta.src_node = id_;
    r->meta.kind = fabric::kPacketElanAck;
    fabric::Port::carry_back(port(1), *p, r, now());
    fabric().pool().put(p);
  }
  void record_reply(fabric::Packet* r) {
    Arrival a;
    a.id = r->meta.id;
    std::memcpy(&a.src, r->bytes.data(), 4);
    std::memcpy(&a.seq, r->bytes.data() + 4, 4);
    a.head = r->meta.injected;
    a.done = r->tail_at;
    a.kind = r->meta.kind;
    a.hops = r->meta.hops;
    a.intact = fabric::Port::route_intact(*r);
    for (std::size_t i = 8; i < r->bytes.size() && a.intact; ++i)
      a.intact = r->bytes[i] == pattern(a.src, a.seq, static_cast<std::uint32_t>(i));
    replies.push_back(a);
    fabric().pool().put(r);
  }
  std::uint32_t id_ = 0;
  std::uint32_t seq_ = 0;
  bool answering_ = false;
  std::array<bool, fabric::kMaxVls> hold_{};
  std::vector<fabric::Packet*> held_;
};

inline ParamSet param_set(const char* scope, const std::map<std::string, std::string>& values) {
  ParamSet p(*ParamRegistry::instance().find(scope));
  for (auto& [k, v] : values) {
    std::string err = p.set(k, v);
    if (!err.empty()) throw std::logic_error(err);
  }
  return p;
}

// A whole Elite fat tree of `nodes` endpoints, built from build_tree() and
// placed by place() (as the world does); links 400 MB/s, 2 VCs.
struct EliteBench {
  Sim sim;
  fabric::Fabric fabric;
  Tree tree;
  std::vector<std::unique_ptr<Endpoint>> nodes;
  std::vector<std::unique_ptr<EliteSwitch>> switches;
  std::vector<fabric::Link*> links;  // in tree.links order

  explicit EliteBench(std::uint32_t n, std::map<std::string, std::string> link = {},
                      std::map<std::string, std::string> sw = {}, std::uint64_t seed = 1)
      : sim(seed), tree(build_tree(n)) {
    link.try_emplace("bandwidth", kLinkBandwidth);
    link.try_emplace("vls", "2");
    link.try_emplace("delay", "10ns");
    Wiring wiring;
    wiring.node_count = n;
    wiring.ports.resize(tree.switches.size());
    for (std::uint32_t i = 0; i < tree.links.size(); ++i) {
      const TreeLink& l = tree.links[i];
      wiring.ports[l.upper][l.upper_port - 1] = {l.lower_is_node ? Peer::Kind::Node : Peer::Kind::Elite, l.lower,
                                                 l.lower_port, i};
      if (!l.lower_is_node) wiring.ports[l.lower][l.lower_port - 1] = {Peer::Kind::Elite, l.upper, l.upper_port, i};
    }
    std::vector<std::string> sw_names, node_names;
    for (auto& s : tree.switches) sw_names.push_back(s.name);
    for (std::uint32_t i = 0; i < n; ++i) node_names.push_back("h" + std::to_string(i));
    Placement placement;
    PlaceError error;
    if (!place(wiring, sw_names, node_names, &placement, &error)) throw std::logic_error(error.message);
    std::uint32_t next = 0;
    for (std::uint32_t i = 0; i < n; ++i) {
      nodes.push_back(std::make_unique<Endpoint>(fabric, next++, node_names[i]));
      nodes.back()->assign_address(1, static_cast<std::uint16_t>(placement.node_id[i]));
    }
    const ParamSet sp = param_set("switch.elite", sw);
    for (std::uint32_t s = 0; s < tree.switches.size(); ++s)
      switches.push_back(
          std::make_unique<EliteSwitch>(fabric, next++, sw_names[s], sp, placement.switches[s], placement.nodes));
    const ParamSet lp = param_set("link", link);
    for (const TreeLink& l : tree.links) {
      fabric::Port& a = l.lower_is_node ? nodes[l.lower]->port(1) : switches[l.lower]->port(l.lower_port);
      fabric::Port& b = switches[l.upper]->port(l.upper_port);
      links.push_back(&fabric.connect(a.path() + "--" + b.path(), a, b, lp, seed));
    }
  }

  EliteSwitch& sw(const std::string& name) {
    for (auto& s : switches)
      if (s->name() == name) return *s;
    throw std::logic_error("no switch " + name);
  }
  fabric::Link& link_between(const std::string& lower, std::uint32_t port) {
    for (auto* l : links)
      if (l->a().owner().name() == lower && l->a().number() == port) return *l;
    throw std::logic_error("no link from " + lower);
  }
  // Runs `fn` at simulated time `t`.
  void at(Tick t, std::function<void()> fn) {
    auto* f = new std::function<void()>(std::move(fn));
    sim.calendar().at(
        t,
        [](void* p, std::uint64_t) {
          auto* g = static_cast<std::function<void()>*>(p);
          (*g)();
          delete g;
        },
        f);
  }
};

}  // namespace nicsim::elite::testing
