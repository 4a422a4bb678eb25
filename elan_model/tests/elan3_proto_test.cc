// Two-sided tests of the Elan3 protocols: remote read, events (count, chain
// to a DMA, done word, interrupt cookie), input queues with back-pressure,
// MMU protection at the receiver.
#include <gtest/gtest.h>

#include <vector>

#include "elan_model/tests/elan3_harness.h"

using namespace nicsim;
using namespace nicsim::elan3;
using namespace nicsim::elan3::testing;

namespace {

bool is_sender() { return nicsim_workload_rank() == 0; }

// Rank 0 reads rank 1's buffer (RemoteRead there) into its own (RemoteWrite
// here) for several sizes; its local event fires when the data is in.
int remote_read(int, char**) {
  Elan3Dev* d = Elan3Dev::attach();
  if (!d) return 1;
  E3Addr buf_e = 0;
  // The reader's buffer has a guard past the largest read, checked untouched.
  std::uint8_t* buf =
      mapped(*d, is_sender() ? 40064 : 40000, is_sender() ? perm::kRemoteWrite : perm::kRemoteRead, &buf_e);
  if (!is_sender()) fill(buf, 40000, 77);
  ElanMem ev = d->alloc_event(true);
  Peer peer = exchange(Peer{d->node_id(), buf_e, ev.elan, 0, 0});
  if (is_sender()) {
    for (std::uint32_t n : {1u, 63u, 64u, 65u, 320u, 1000u, 8192u, 8200u, 40000u}) {
      std::memset(buf, 0, 40064);
      d->prime_event(ev, 1, event::Type::None, 0, 0, true, Elan3Dev::kWaitCookie);
      DmaRequest r;
      r.direction = dma::Direction::Read;
      r.size = n;
      r.source = peer.buf;
      r.dest = buf_e;
      r.dest_event = ev.elan;
      r.dest_node = peer.node;
      EXPECT_EQ(d->issue_dma(r), DevStatus::Ok);
      EXPECT_TRUE(d->wait_event(ev, 10 * kMs)) << "read of " << n;
      std::vector<std::uint8_t> expect(40000);
      fill(expect.data(), 40000, 77);
      EXPECT_EQ(std::memcmp(buf, expect.data(), n), 0) << "read of " << n;
      EXPECT_EQ(buf[n], 0) << "read of " << n << " wrote past its end";
    }
  }
  nicsim_barrier();
  if (!is_sender()) {
    EXPECT_EQ(this_elan().stats().dmas_done, 9u);  // the write-backs ran here
  }
  return ::testing::Test::HasFailure() ? 1 : 0;
}
const BuiltinProgram reg_read("t_elan_read", remote_read, "test");

// Events: a count of 3 set by three remote set-events fires only on the
// third; an event chained to a DMA sends a block back when it fires; a
// done-word event writes its word; an interrupt event calls the handler
// with its cookie.
int events(int, char**) {
  Elan3Dev* d = Elan3Dev::attach();
  if (!d) return 1;
  E3Addr buf_e = 0;
  std::uint8_t* buf = mapped(*d, 8192, perm::kRemoteWrite | perm::kLocalRead, &buf_e);
  ElanMem count_ev = d->alloc_event(true);
  ElanMem chain_ev = d->alloc_event(true);
  ElanMem done_ev = d->alloc_event(true);
  ElanMem irq_ev = d->alloc_event(true);
  ElanMem word = d->alloc_mem(8, 8, 0);
  ElanMem back_ev = d->alloc_event(true);
  ElanMem desc = d->alloc_mem(dma::kSize, 8, 0);
  std::uint32_t seen_cookie = 0;
  E3Addr seen_event = 0;
  const std::uint32_t cookie = d->add_event_handler([&](std::uint32_t c, E3Addr e) {
    seen_cookie = c;
    seen_event = e;
  });
  EXPECT_NE(cookie, 0u);
  d->prime_event(count_ev, 3, event::Type::None, 0, 0, true, Elan3Dev::kWaitCookie);
  d->prime_event(done_ev, 1, event::Type::DoneWord, 0xC0FFEE, word.elan, true, Elan3Dev::kWaitCookie);
  d->prime_event(irq_ev, 1, event::Type::None, 0, 0, true, cookie);
  d->prime_event(back_ev, 1, event::Type::None, 0, 0, true, Elan3Dev::kWaitCookie);
  Peer peer = exchange(Peer{d->node_id(), buf_e, count_ev.elan, chain_ev.elan, back_ev.elan});
  // The chained DMA: when chain_ev fires, send 256 bytes of our buffer to
  // the peer's buffer and set its back_ev there.
  fill(buf + 4096, 256, 9);
  DmaRequest chained;
  chained.size = 256;
  chained.source = buf_e + 4096;
  chained.dest = peer.buf;
  chained.dest_event = peer.extra;
  chained.dest_node = peer.node;
  EXPECT_EQ(d->write_descriptor(desc, chained), DevStatus::Ok);
  d->prime_event(chain_ev, 1, event::Type::Dma, desc.elan, 0, false);
  nicsim_barrier();
  if (is_sender()) {
    DmaRequest set;
    set.dest_node = peer.node;
    set.dest_event = peer.event;  // the peer's count event
    for (int i = 0; i < 2; ++i) EXPECT_EQ(d->issue_dma(set), DevStatus::Ok);
    nicsim_barrier();  // B1: two sets done
    nicsim_barrier();  // B2: peer checked
    EXPECT_EQ(d->issue_dma(set), DevStatus::Ok);
    set.dest_event = peer.queue;  // the peer's chain event
    EXPECT_EQ(d->issue_dma(set), DevStatus::Ok);
    // Our back event fires when the peer's chained DMA landed here.
    EXPECT_TRUE(d->wait_event(back_ev, 10 * kMs));
    std::vector<std::uint8_t> expect(256);
    fill(expect.data(), 256, 9);
    EXPECT_EQ(std::memcmp(buf, expect.data(), 256), 0);
    // Local events by command: done word and interrupt cookie.
    d->set_event(done_ev.elan);
    d->set_event(irq_ev.elan);
    EXPECT_TRUE(d->wait_event(done_ev, 1 * kMs));
    EXPECT_TRUE(d->wait_event(irq_ev, 1 * kMs));
    nicsim_sleep_ns(10000);  // the count is written before the interrupt is posted
    EXPECT_EQ(get(static_cast<const std::uint8_t*>(word.host), Field{0, 4, "w"}), 0xC0FFEEu);
    EXPECT_EQ(seen_cookie, cookie);
    EXPECT_EQ(seen_event, irq_ev.elan);
  } else {
    nicsim_barrier();  // B1
    nicsim_sleep_ns(20000);
    EXPECT_EQ(d->event_count(count_ev), 1);
    EXPECT_FALSE(d->event_fired(count_ev));
    nicsim_barrier();  // B2
    EXPECT_TRUE(d->wait_event(count_ev, 10 * kMs));
    EXPECT_EQ(d->event_count(count_ev), 0);
  }
  nicsim_barrier();
  return ::testing::Test::HasFailure() ? 1 : 0;
}
const BuiltinProgram reg_events("t_elan_events", events, "test");

// Input queue back-pressure: the receiver's queue holds 3 messages and it
// does not consume for 1 ms after the sender has issued 20; the refused
// ones are retried by the Elan (failCount times), trapped to the driver and
// run again from its retry list; then the receiver drains: every message
// exactly once, bytes exact. A refused DMA loses its place, so the order is
// not the issue order (elan3_dev.h).
int queue_backpressure(int, char**) {
  Elan3Dev* d = Elan3Dev::attach();
  if (!d) return 1;
  constexpr std::uint32_t kMsgs = 20, kSlot = 64;
  ElanMem qev = d->alloc_event(false);
  InputQueue q;
  if (!is_sender()) {
    EXPECT_EQ(d->alloc_queue(4, kSlot, qev.elan, &q), DevStatus::Ok);
    d->prime_event(qev, 1, event::Type::None, 0, 0, true, Elan3Dev::kWaitCookie);
  }
  E3Addr src_e = 0;
  std::uint8_t* src = mapped(*d, kMsgs * kSlot, perm::kLocalRead, &src_e);
  Peer peer = exchange(Peer{d->node_id(), 0, 0, q.desc.elan, 0});
  if (is_sender()) {
    for (std::uint32_t i = 0; i < kMsgs; ++i) {
      std::uint8_t* m = src + i * kSlot;
      fill(m, 48, 1000 + i);
      std::memcpy(m, &i, 4);
      DmaRequest r;
      r.opcode = dma::OpCode::Queued;
      r.size = 48;
      r.source = src_e + i * kSlot;
      r.dest = peer.queue;
      r.dest_node = peer.node;
      EXPECT_EQ(d->issue_dma(r), DevStatus::Ok);
    }
    nicsim_barrier();
    nicsim_barrier();
    EXPECT_GT(this_elan().stats().dma_requeues, 0u);
    EXPECT_GT(this_elan().stats().dmas_trapped, 0u);
    EXPECT_EQ(d->stats().dma_traps, this_elan().stats().dmas_trapped);
    EXPECT_EQ(d->stats().dma_retries, d->stats().dma_traps);
    EXPECT_EQ(this_elan().stats().dmas_done, kMsgs);
    EXPECT_EQ(this_elan().stats().dmas_failed, 0u);
  } else {
    nicsim_barrier();
    nicsim_sleep_ns(1000000);  // the sender's Elan keeps hitting a full queue, then traps
    EXPECT_GT(this_elan().stats().tokens_testfail, 0u);
    EXPECT_EQ(this_elan().stats().queue_messages, 3u);
    std::uint32_t next = 0;
    std::vector<bool> seen(kMsgs);
    const Tick deadline = Calendar::now() + 20 * kMs;
    while (next < kMsgs && Calendar::now() < deadline) {
      const void* m = d->queue_peek(q);
      if (!m) {
        d->prime_event(qev, 1, event::Type::None, 0, 0, true, Elan3Dev::kWaitCookie);
        if (!d->queue_peek(q)) d->wait_event(qev, 1 * kMs);
        continue;
      }
      std::uint32_t id = 0;
      std::memcpy(&id, m, 4);
      if (id >= kMsgs) {
        ADD_FAILURE() << "bad id " << id;
        break;
      }
      EXPECT_FALSE(seen[id]) << "message " << id << " arrived twice";
      seen[id] = true;
      if (next < 3) {
        EXPECT_EQ(id, next) << "the first three fit the queue in issue order";
      }
      std::vector<std::uint8_t> expect(48);
      fill(expect.data(), 48, 1000 + id);
      std::memcpy(expect.data(), &id, 4);
      EXPECT_EQ(std::memcmp(m, expect.data(), 48), 0) << "message " << id;
      d->queue_consume(q);
      ++next;
    }
    EXPECT_EQ(next, kMsgs);
    nicsim_sleep_ns(100000);
    EXPECT_EQ(d->queue_peek(q), nullptr) << "a message arrived twice";
    EXPECT_EQ(this_elan().stats().queue_messages, kMsgs);
    nicsim_barrier();
  }
  return ::testing::Test::HasFailure() ? 1 : 0;
}
const BuiltinProgram reg_queue("t_elan_queue", queue_backpressure, "test");

// Rank 0 overwrites rank 1's queue descriptor with a remote write (the Elan
// lets other nodes write it: it moves q_bptr for their queued writes):
// argument "front", its front pointer far outside the slots; "back", its
// back pointer, the front one still naming a slot. The driver must neither
// hand out a pointer outside the slots nor see messages without end:
// queue_peek reports the queue empty (and an error), queue_consume leaves it.
int queue_overwritten(int argc, char** argv) {
  Elan3Dev* d = Elan3Dev::attach();
  if (!d) return 1;
  constexpr E3Addr kWild = 0x5a5a5a58;
  InputQueue q;
  if (!is_sender()) {
    EXPECT_EQ(d->alloc_queue(4, 64, 0, &q), DevStatus::Ok);
  }
  E3Addr src_e = 0;
  auto* src = reinterpret_cast<std::uint32_t*>(mapped(*d, queue::kSize, perm::kLocalRead, &src_e));
  Peer peer = exchange(Peer{d->node_id(), 0, 0, q.desc.elan, q.slots.elan});
  const bool front = argc > 1 && std::string(argv[1]) == "front";
  const E3Addr slots = is_sender() ? peer.extra : q.slots.elan;  // the receiver's
  const E3Addr fptr = front ? kWild : slots, bptr = front ? slots + 64 : kWild;
  if (is_sender()) {
    const std::uint32_t words[8] = {0, bptr, fptr, 64, kWild, kWild, 0, 0};
    std::memcpy(src, words, sizeof words);
    DmaRequest r;
    r.size = queue::kSize;
    r.source = src_e;
    r.dest = peer.queue;
    r.dest_node = peer.node;
    EXPECT_EQ(d->issue_dma(r), DevStatus::Ok);
    nicsim_sleep_ns(100000);
  }
  nicsim_barrier();
  if (!is_sender()) {
    EXPECT_EQ(d->queue_peek(q), nullptr);
    d->queue_consume(q);
    EXPECT_EQ(get(static_cast<const std::uint8_t*>(q.desc.host), queue::q_fptr), fptr);
  }
  return ::testing::Test::HasFailure() ? 1 : 0;
}
const BuiltinProgram reg_overwritten("t_elan_queue_overwritten", queue_overwritten, "test");

// Protection: the receiver's buffer allows remote reads only; a remote
// write to it, and one to an address that is not mapped at all, fail at the
// sender with an error token (NetworkError, detail Error) and write nothing.
int protection(int, char**) {
  Elan3Dev* d = Elan3Dev::attach();
  if (!d) return 1;
  E3Addr buf_e = 0;
  std::uint8_t* buf = mapped(*d, 8192, is_sender() ? perm::kLocalRead : perm::kRemoteRead, &buf_e);
  std::memset(buf, 0x5A, 8192);
  std::vector<DmaFailure> failures;
  d->add_error_handler([&](const DmaFailure& f) { failures.push_back(f); });
  ElanMem ev = d->alloc_event(false);
  Peer peer = exchange(Peer{d->node_id(), buf_e, 0, 0, 0});
  if (is_sender()) {
    fill(buf, 8192, 3);
    DmaRequest r;
    r.size = 1000;
    r.source = buf_e;
    r.dest = peer.buf;
    r.dest_node = peer.node;
    r.src_cookie = 0x1234;
    r.src_event = ev.elan;
    d->prime_event(ev, 1, event::Type::None, 0, 0, true, Elan3Dev::kWaitCookie);
    E3Addr desc = 0;
    EXPECT_EQ(d->issue_dma(r, &desc), DevStatus::Ok);
    r.dest = 0x7ff00000;  // never mapped
    r.src_cookie = 0x4321;
    E3Addr desc2 = 0;
    EXPECT_EQ(d->issue_dma(r, &desc2), DevStatus::Ok);
    nicsim_sleep_ns(100000);
    EXPECT_EQ(failures.size(), 2u);
    if (failures.size() == 2) {
      EXPECT_EQ(failures[0].cause, intq::Cause::NetworkError);
      EXPECT_EQ(failures[0].detail, static_cast<std::uint8_t>(Token::Error));
      EXPECT_EQ(failures[0].src_cookie, 0x1234);
      EXPECT_EQ(failures[0].addr, desc);
      EXPECT_EQ(failures[0].node, peer.node);
      EXPECT_EQ(failures[1].src_cookie, 0x4321);
      EXPECT_EQ(failures[1].addr, desc2);
    }
    EXPECT_FALSE(d->event_fired(ev)) << "a failed DMA must not set its source event";
  }
  nicsim_barrier();
  if (!is_sender()) {
    for (std::uint32_t i = 0; i < 8192; ++i)
      if (buf[i] != 0x5A) {
        ADD_FAILURE() << "byte " << i << " of a read-only buffer was written";
        break;
      }
    EXPECT_EQ(this_elan().stats().tokens_error, 2u);
    EXPECT_EQ(this_elan().stats().rx_bytes, 0u);
  }
  return ::testing::Test::HasFailure() ? 1 : 0;
}
const BuiltinProgram reg_prot("t_elan_protection", protection, "test");

}  // namespace

TEST(Elan3Dma, RemoteReadBytesExact) { run_ok(two_elans("t_elan_read")); }
TEST(Elan3Event, CountChainDoneWordAndInterruptCookie) { run_ok(two_elans("t_elan_events")); }
TEST(Elan3Queue, FullQueueTrapsToTheDriverRetryListThenAllExactlyOnce) { run_ok(two_elans("t_elan_queue")); }
void run_overwritten(const std::string& which) {
  nicsim::testing::RunOptions o;
  o.expect_clean = false;
  const auto r =
      nicsim::testing::run_scenario(two_elans("t_elan_queue_overwritten", "", "", "args: \"" + which + "\""), o);
  ASSERT_FALSE(r.errors.empty());
  EXPECT_NE(r.errors[0].find("are not both among its slots"), std::string::npos) << r.errors[0];
}
TEST(Elan3Queue, OverwrittenFrontPointerIsAnErrorNotAPointerOutsideTheSlots) { run_overwritten("front"); }
TEST(Elan3Queue, OverwrittenBackPointerIsAnErrorNotMessagesWithoutEnd) { run_overwritten("back"); }
TEST(Elan3Mmu, PermissionFaultAndUnmappedAddressAreErrorsAtTheSender) { run_ok(two_elans("t_elan_protection")); }
