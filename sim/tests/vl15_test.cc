// VL15, the subnet management lane: no credits, ahead of the data VLs, and
// a receive buffer of `vl15_buffer` packets that drops what does not fit.
#include <gtest/gtest.h>

#include <map>
#include <vector>

#include "core/sim.h"
#include "fabric/fabric.h"
#include "fabric/link.h"

using namespace nicsim;
using namespace nicsim::fabric;

namespace {

// A device that keeps every packet it receives in its input buffer until
// the test releases it.
struct Holder : Device {
  Holder(Fabric& f, std::uint32_t id, std::string name) : Device(f, id, std::move(name)) { add_ports(1); }
  void receive(Port&, Packet* p) override { held.push_back(p); }
  std::vector<Packet*> held;
};

ParamSet link_params(std::map<std::string, std::string> values) {
  ParamSet p(*ParamRegistry::instance().find("link"));
  for (auto& [k, v] : values) EXPECT_EQ(p.set(k, v), "") << k;
  return p;
}

Packet* packet(Fabric& f, std::uint8_t vl, std::size_t len) {
  Packet* p = f.pool().get(len);
  p->meta.vl = vl;
  p->ready_at = 0;
  return p;
}

TEST(Vl15, NoCreditsAndAFullBufferDrops) {
  Sim sim{1};
  Fabric fabric;
  Holder a(fabric, 0, "a"), b(fabric, 1, "b");
  fabric.connect("a--b", a.port(1), b.port(1), link_params({{"vl15_buffer", "2"}, {"vl_buffer", "1KiB"}}), 1);
  // Three SMPs back to back: the receiver holds on to them, so the third
  // finds the two-packet buffer full. The data VL's credits are untouched.
  for (int i = 0; i < 3; ++i) a.port(1).send(packet(fabric, kVl15, 290));
  sc_core::sc_start();
  EXPECT_EQ(b.held.size(), 2u);
  EXPECT_EQ(b.port(1).stats().drops_vl15_full, 1u);
  EXPECT_EQ(a.port(1).credits(0), 1024u / kCreditBlock);
  // Freed slots take the next SMP; a data packet needs credits as before.
  for (Packet* p : b.held) {
    b.port(1).release(*p, now());
    fabric.pool().put(p);
  }
  b.held.clear();
  a.port(1).send(packet(fabric, kVl15, 290));
  a.port(1).send(packet(fabric, 0, 1024));
  sc_core::sc_start();
  ASSERT_EQ(b.held.size(), 2u);
  EXPECT_EQ(b.held[0]->meta.vl, kVl15);
  EXPECT_EQ(b.held[1]->meta.vl, 0);
  EXPECT_EQ(b.port(1).stats().drops_vl15_full, 1u);
  EXPECT_EQ(a.port(1).credits(0), 0u);  // the data packet holds the whole data buffer
  for (Packet* p : b.held) fabric.pool().put(p);
}

TEST(Vl15, ManagementPacketsPassDataStalledForCredits) {
  Sim sim{1};
  Fabric fabric;
  Holder a(fabric, 0, "a"), b(fabric, 1, "b");
  fabric.connect("a--b", a.port(1), b.port(1), link_params({{"vl_buffer", "1KiB"}}), 1);
  // The first data packet takes every credit; the second waits for them,
  // which never come back (b holds the first). An SMP sent after both
  // still goes.
  a.port(1).send(packet(fabric, 0, 1024));
  a.port(1).send(packet(fabric, 0, 1024));
  a.port(1).send(packet(fabric, kVl15, 290));
  sc_core::sc_start();
  ASSERT_EQ(b.held.size(), 2u);
  EXPECT_EQ(b.held[0]->meta.vl, 0);
  EXPECT_EQ(b.held[1]->meta.vl, kVl15);
  EXPECT_EQ(a.port(1).queued(), 1u);  // the second data packet, stalled
  for (Packet* p : b.held) fabric.pool().put(p);
}

}  // namespace
