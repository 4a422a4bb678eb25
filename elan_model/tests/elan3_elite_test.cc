// The Elan3 through Elite switches: hardware broadcast (normal and queued)
// to a node range on a quaternary fat tree, every node of the range
// receiving exactly once, byte-exact; and remote writes between the two
// nodes farthest apart.
#include <gtest/gtest.h>

#include <vector>

#include "elan_model/tests/elan3_harness.h"

using namespace nicsim;
using namespace nicsim::elan3;
using namespace nicsim::elan3::testing;

namespace {

Scenario elite_tree(std::uint32_t nodes, const std::string& program, const std::string& extra = "") {
  std::string text = "topology { elite_fat_tree { nodes: " + std::to_string(nodes) +
                     " } node_param { key: \"bus.profile\" value: \"pci-66\" } }\n"
                     "workload { program: \"" +
                     program + "\" nodes: \"*\" }\n" + extra;
  if (std::getenv("NICSIM_TEST_TRACE")) text += R"(outputs { trace { device: "*" component: "*" } })";
  return load_scenario_text(text, "test.textproto",
                            [](std::string_view n) { return ProgramRegistry::instance().find(n) != nullptr; });
}

// Every node maps a 4 KiB buffer at the same E3_Addr and an input queue
// descriptor at the same E3_Addr (the first allocations of a fresh driver
// are the same on every node). Node 2 broadcasts 1000 bytes to nodes 1..5
// (itself included) with a destination event, then one queued message to
// the whole machine. Nodes outside the range must see nothing.
int broadcast(int, char**) {
  Elan3Dev* d = Elan3Dev::attach();
  if (!d) return 1;
  const std::uint32_t me = d->node_id();
  E3Addr buf_e = 0;
  std::uint8_t* buf = mapped(*d, 4096, perm::kRemoteWrite | perm::kLocalRead, &buf_e);
  ElanMem ev = d->alloc_event(true);
  ElanMem qev = d->alloc_event(false);
  InputQueue q;
  EXPECT_EQ(d->alloc_queue(4, 64, qev.elan, &q), DevStatus::Ok);
  d->prime_event(ev, 1, event::Type::None, 0, 0, true, Elan3Dev::kWaitCookie);
  d->prime_event(qev, 1, event::Type::None, 0, 0, true, Elan3Dev::kWaitCookie);
  // Same addresses everywhere (checked through the management network).
  const E3Addr mine[3] = {buf_e, ev.elan, q.desc.elan};
  E3Addr first[3] = {0, 0, 0};
  if (nicsim_workload_rank() == 0) {
    for (std::uint32_t r = 1; r < nicsim_workload_size(); ++r)
      nicsim_mgmt_send(nicsim_workload_node(r), 0x400, mine, sizeof mine);
    std::memcpy(first, mine, sizeof mine);
  } else {
    nicsim_mgmt_recv(nicsim_workload_node(0), 0x400, first, sizeof first, nullptr, 0);
  }
  EXPECT_EQ(std::memcmp(first, mine, sizeof mine), 0);
  nicsim_barrier();
  const std::uint32_t n = d->num_nodes();
  EXPECT_EQ(n, 8u);
  if (me == 2) {
    fill(buf + 2048, 1000, 21);
    DmaRequest r;
    r.opcode = dma::OpCode::NormalBroadcast;
    r.size = 1000;
    r.source = buf_e + 2048;
    r.dest = buf_e;
    r.dest_event = ev.elan;
    r.dest_node = 1;
    r.dest_node_last = 5;
    EXPECT_EQ(d->issue_dma(r), DevStatus::Ok);
    std::uint32_t msg = 0xB0A4CA57;
    std::memcpy(buf + 3072, &msg, 4);
    DmaRequest m;
    m.opcode = dma::OpCode::QueuedBroadcast;
    m.size = 32;
    m.source = buf_e + 3072;
    m.dest = q.desc.elan;
    m.dest_node = 0;
    m.dest_node_last = n - 1;
    EXPECT_EQ(d->issue_dma(m), DevStatus::Ok);
  }
  const bool in_range = me >= 1 && me <= 5;
  if (in_range) {
    EXPECT_TRUE(d->wait_event(ev, 5 * kMs)) << "node " << me;
    std::vector<std::uint8_t> expect(1000);
    fill(expect.data(), 1000, 21);
    EXPECT_EQ(std::memcmp(buf, expect.data(), 1000), 0) << "node " << me;
  }
  const void* m = nullptr;
  for (int i = 0; i < 50 && !(m = d->queue_peek(q)); ++i) nicsim_sleep_ns(10000);
  EXPECT_NE(m, nullptr) << "node " << me << " got no queued broadcast";
  if (m) {
    std::uint32_t v = 0;
    std::memcpy(&v, m, 4);
    EXPECT_EQ(v, 0xB0A4CA57u);
    d->queue_consume(q);
  }
  nicsim_barrier();
  EXPECT_EQ(d->queue_peek(q), nullptr) << "node " << me << " got the queued broadcast twice";
  EXPECT_EQ(d->event_count(ev), in_range ? 0 : 1) << "node " << me;
  if (!in_range) {
    EXPECT_EQ(buf[0], 0) << "node " << me << " is outside the range but was written";
  }
  if (me == 2) {
    EXPECT_EQ(this_elan().stats().dmas_done, 2u);
    EXPECT_EQ(this_elan().stats().dmas_failed, 0u);
  }
  return ::testing::Test::HasFailure() ? 1 : 0;
}
const BuiltinProgram reg_bcast("t_elan_broadcast", broadcast, "test");

// A queued broadcast refused by one full queue in its range: node 2
// broadcasts 6 messages to all 8 nodes; node 5 consumes nothing for 300 us
// (its queue holds 3), the others consume as they come. The refused
// broadcast is retried by node 2's Elan with its sequence number kept
// (never trapped: nodes that took it answer the resend Ok without taking
// it again), later broadcasts wait behind it, and a unicast write issued
// after them lands at once. Every node gets every message exactly once, in
// order, byte for byte.
int broadcast_full(int, char**) {
  Elan3Dev* d = Elan3Dev::attach();
  if (!d) return 1;
  constexpr std::uint32_t kMsgs = 6, kLen = 48;
  const std::uint32_t me = d->node_id();
  E3Addr buf_e = 0;
  std::uint8_t* buf = mapped(*d, 4096, perm::kRemoteWrite | perm::kLocalRead, &buf_e);
  ElanMem ev = d->alloc_event(true);
  ElanMem qev = d->alloc_event(false);
  InputQueue q;
  EXPECT_EQ(d->alloc_queue(4, 64, qev.elan, &q), DevStatus::Ok);
  d->prime_event(ev, 1, event::Type::None, 0, 0, true, Elan3Dev::kWaitCookie);
  nicsim_barrier();
  if (me == 2) {
    for (std::uint32_t m = 0; m < kMsgs; ++m) {
      std::uint8_t* src = buf + 2048 + m * 64;
      fill(src, kLen, 300 + m);
      std::memcpy(src, &m, 4);
      DmaRequest r;
      r.opcode = dma::OpCode::QueuedBroadcast;
      r.size = kLen;
      r.source = buf_e + 2048 + m * 64;
      r.dest = q.desc.elan;
      r.dest_node = 0;
      r.dest_node_last = 7;
      EXPECT_EQ(d->issue_dma(r), DevStatus::Ok);
    }
    fill(buf + 1024, 256, 77);
    DmaRequest w;
    w.size = 256;
    w.source = buf_e + 1024;
    w.dest = buf_e;
    w.dest_event = ev.elan;
    w.dest_node = 3;
    EXPECT_EQ(d->issue_dma(w), DevStatus::Ok);
  }
  if (me == 3) {
    EXPECT_TRUE(d->wait_event(ev, 5 * kMs));
    EXPECT_LT(Calendar::now(), 300 * kUs) << "the unicast write waited for the refused broadcast";
    std::vector<std::uint8_t> expect(256);
    fill(expect.data(), 256, 77);
    EXPECT_EQ(std::memcmp(buf, expect.data(), 256), 0);
  }
  if (me == 5) nicsim_sleep_ns(300000);
  std::uint32_t next = 0;
  const Tick deadline = Calendar::now() + 20 * kMs;
  while (next < kMsgs && Calendar::now() < deadline) {
    const void* m = d->queue_peek(q);
    if (!m) {
      nicsim_sleep_ns(2000);
      continue;
    }
    std::uint32_t id = 0;
    std::memcpy(&id, m, 4);
    EXPECT_EQ(id, next) << "node " << me;
    std::vector<std::uint8_t> expect(kLen);
    fill(expect.data(), kLen, 300 + next);
    std::memcpy(expect.data(), &next, 4);
    EXPECT_EQ(std::memcmp(m, expect.data(), kLen), 0) << "node " << me << " message " << next;
    d->queue_consume(q);
    ++next;
  }
  EXPECT_EQ(next, kMsgs) << "node " << me;
  nicsim_sleep_ns(200000);
  EXPECT_EQ(d->queue_peek(q), nullptr) << "node " << me << " got a broadcast twice";
  nicsim_barrier();
  if (me == 2) {
    EXPECT_GT(this_elan().stats().dma_requeues, 0u);
    EXPECT_EQ(this_elan().stats().dmas_trapped, 0u);
    EXPECT_EQ(this_elan().stats().dmas_done, kMsgs + 1);
    EXPECT_EQ(this_elan().stats().dmas_failed, 0u);
  }
  return ::testing::Test::HasFailure() ? 1 : 0;
}
const BuiltinProgram reg_bcast_full("t_elan_broadcast_full", broadcast_full, "test");

// A broadcast abandoned with a network error: node 6's link is down, node 2
// broadcasts 2000 bytes to nodes 1..7 (the live nodes execute its first
// packet; node 6 never answers, and after the Elan's retries the DMA fails),
// then 8 bytes to nodes 1..5, which every one of them must take: the second
// broadcast may not reuse the numbers of the first (the nodes that executed
// its first packet would answer a packet under the same number Ok as a
// repeat and drop it).
int broadcast_after_failure(int, char**) {
  Elan3Dev* d = Elan3Dev::attach();
  if (!d) return 1;
  const std::uint32_t me = d->node_id();
  E3Addr buf_e = 0;
  std::uint8_t* buf = mapped(*d, 4096, perm::kRemoteWrite | perm::kLocalRead, &buf_e);
  ElanMem ev = d->alloc_event(true);
  d->prime_event(ev, 1, event::Type::None, 0, 0, true, Elan3Dev::kWaitCookie);
  nicsim_barrier();
  constexpr std::uint64_t kValue = 0x5eed0000feedull;
  if (me == 2) {
    while (nicsim_now_ns() < 2000000) nicsim_sleep_ns(10000);  // node 6's link went down at 1 ms
    fill(buf + 2048, 2000, 31);
    DmaRequest r;
    r.opcode = dma::OpCode::NormalBroadcast;
    r.size = 2000;
    r.source = buf_e + 2048;
    r.dest = buf_e;
    r.dest_node = 1;
    r.dest_node_last = 7;
    EXPECT_EQ(d->issue_dma(r), DevStatus::Ok);
    while (this_elan().stats().dmas_failed == 0 && nicsim_now_ns() < 10000000) nicsim_sleep_ns(10000);
    EXPECT_EQ(this_elan().stats().dmas_failed, 1u);
    std::memcpy(buf + 4088, &kValue, 8);
    r.size = 8;
    r.source = buf_e + 4088;
    r.dest = buf_e + 4080;
    r.dest_event = ev.elan;
    r.dest_node_last = 5;
    EXPECT_EQ(d->issue_dma(r), DevStatus::Ok);
  }
  if (me >= 1 && me <= 5) {
    EXPECT_TRUE(d->wait_event(ev, 20 * kMs)) << "node " << me << " did not take the second broadcast";
    std::uint64_t v = 0;
    std::memcpy(&v, buf + 4080, 8);
    EXPECT_EQ(v, kValue) << "node " << me;
  }
  nicsim_barrier();
  return ::testing::Test::HasFailure() ? 1 : 0;
}
const BuiltinProgram reg_bcast_fail("t_elan_broadcast_after_failure", broadcast_after_failure, "test");

}  // namespace

TEST(Elan3Elite, BroadcastAfterANetworkErrorTakesNewNumbersAndLands) {
  run_ok(
      elite_tree(8, "t_elan_broadcast_after_failure", "fault { at: \"1ms\" link: \"h6--el0_1\" link_down: true }\n"));
}
TEST(Elan3Elite, QueuedBroadcastRefusedByOneFullQueueKeepsItsNumberExactlyOnceInOrder) {
  run_ok(elite_tree(8, "t_elan_broadcast_full"));
}
TEST(Elan3Elite, HardwareBroadcastToARangeExactlyOnce) { run_ok(elite_tree(8, "t_elan_broadcast")); }
TEST(Elan3Elite, RemoteWriteEverySizeAcrossTheTree) { run_ok(elite_tree(2, "t_elan_write")); }
