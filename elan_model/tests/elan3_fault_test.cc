// Two-sided fault tests of the Elan3 link protocol: the link going down in
// the middle of a transfer (retries, then a network error at the sender,
// link-state interrupts, and a working transfer once the link is back), and
// bit errors on the link (CRC-detected, retransmitted, data exact).
#include <gtest/gtest.h>

#include <vector>

#include "elan_model/tests/elan3_harness.h"

using namespace nicsim;
using namespace nicsim::elan3;
using namespace nicsim::elan3::testing;

namespace {

bool is_sender() { return nicsim_workload_rank() == 0; }

// The scenario takes link "ab" down at 600 us and up again at 3 ms. Rank 0
// starts a 1 MiB write at about 200 us (it needs about 3.3 ms).
int link_down(int, char**) {
  Elan3Dev* d = Elan3Dev::attach();
  if (!d) return 1;
  constexpr std::uint32_t kSize = 1 << 20;
  E3Addr buf_e = 0;
  std::uint8_t* buf = mapped(*d, kSize, is_sender() ? perm::kLocalRead : perm::kRemoteWrite, &buf_e);
  std::vector<DmaFailure> failures;
  std::vector<bool> link_events;
  d->add_error_handler([&](const DmaFailure& f) { failures.push_back(f); });
  d->add_link_handler([&](bool up) { link_events.push_back(up); });
  ElanMem ev = d->alloc_event(true);
  d->prime_event(ev, 1, event::Type::None, 0, 0, true, Elan3Dev::kWaitCookie);
  Peer peer = exchange(Peer{d->node_id(), buf_e, ev.elan, 0, 0});
  if (is_sender()) {
    fill(buf, kSize, 5);
    nicsim_sleep_ns(200000 - nicsim_now_ns());
    DmaRequest r;
    r.size = kSize;
    r.source = buf_e;
    r.dest = peer.buf;
    r.dest_event = peer.event;
    r.dest_node = peer.node;
    r.src_cookie = 77;
    EXPECT_EQ(d->issue_dma(r), DevStatus::Ok);
    nicsim_sleep_ns(2500000 - nicsim_now_ns());
    EXPECT_EQ(failures.size(), 1u);
    if (failures.empty()) return 1;
    EXPECT_EQ(failures[0].cause, intq::Cause::NetworkError);
    EXPECT_EQ(failures[0].detail, intq::kDetailTimeout);
    EXPECT_EQ(failures[0].src_cookie, 77);
    EXPECT_EQ(failures[0].node, peer.node);
    EXPECT_GT(this_elan().stats().ack_timeouts, 0u);
    EXPECT_EQ(this_elan().stats().dmas_failed, 1u);
    // Back up at 3 ms: a new write goes through (the stream resynchronises).
    nicsim_sleep_ns(3100000 - nicsim_now_ns());
    fill(buf, 4096, 6);
    r.size = 4096;
    EXPECT_EQ(d->issue_dma(r), DevStatus::Ok);
  } else {
    nicsim_sleep_ns(3100000 - nicsim_now_ns());
    EXPECT_TRUE(d->wait_event(ev, 5 * kMs)) << "the write after the link came back never arrived";
    std::vector<std::uint8_t> expect(4096);
    fill(expect.data(), 4096, 6);
    EXPECT_EQ(std::memcmp(buf, expect.data(), 4096), 0);
  }
  nicsim_barrier();
  EXPECT_EQ(link_events, (std::vector<bool>{false, true}));
  EXPECT_TRUE(d->link_up());
  return ::testing::Test::HasFailure() ? 1 : 0;
}
const BuiltinProgram reg_down("t_elan_link_down", link_down, "test");

// Bit errors on the link: four 256 KiB writes arrive byte-exact although
// some packets were corrupted on the way (dropped by CRC, resent).
int bit_errors(int, char**) {
  Elan3Dev* d = Elan3Dev::attach();
  if (!d) return 1;
  constexpr std::uint32_t kSize = 256 * 1024;
  E3Addr buf_e = 0;
  std::uint8_t* buf = mapped(*d, kSize, is_sender() ? perm::kLocalRead : perm::kRemoteWrite, &buf_e);
  ElanMem ev = d->alloc_event(true);
  Peer peer = exchange(Peer{d->node_id(), buf_e, ev.elan, 0, 0});
  for (std::uint32_t round = 0; round < 4; ++round) {
    d->prime_event(ev, 1, event::Type::None, 0, 0, true, Elan3Dev::kWaitCookie);
    if (!is_sender()) std::memset(buf, 0, kSize);
    nicsim_barrier();
    if (is_sender()) {
      fill(buf, kSize, 50 + round);
      DmaRequest r;
      r.size = kSize;
      r.source = buf_e;
      r.dest = peer.buf;
      r.dest_event = peer.event;
      r.dest_node = peer.node;
      r.src_event = ev.elan;
      EXPECT_EQ(d->issue_dma(r), DevStatus::Ok);
      EXPECT_TRUE(d->wait_event(ev, 50 * kMs)) << "round " << round;
    } else {
      EXPECT_TRUE(d->wait_event(ev, 50 * kMs)) << "round " << round;
      std::vector<std::uint8_t> expect(kSize);
      fill(expect.data(), kSize, 50 + round);
      EXPECT_EQ(std::memcmp(buf, expect.data(), kSize), 0) << "round " << round;
    }
    nicsim_barrier();
  }
  const Elan3Stats& st = this_elan().stats();
  if (is_sender()) {
    EXPECT_GT(st.retransmits, 0u);
    EXPECT_EQ(st.dmas_failed, 0u);
    nicsim_result("retransmits", static_cast<double>(st.retransmits), "packets");
  } else {
    EXPECT_GT(st.rx_bad_crc, 0u);
    EXPECT_EQ(st.rx_bytes, 4ull * kSize);
  }
  return ::testing::Test::HasFailure() ? 1 : 0;
}
const BuiltinProgram reg_ber("t_elan_bit_errors", bit_errors, "test");

}  // namespace

TEST(Elan3Link, LinkDownMidTransferRetriesThenNetworkErrorThenRecovers) {
  run_ok(two_elans("t_elan_link_down", R"(
    fault { at: "600us" link: "ab" link_down: true }
    fault { at: "3ms" link: "ab" link_up: true })"));
}

TEST(Elan3Link, BitErrorsDetectedByCrcAndRetransmittedDataExact) {
  run_ok(two_elans("t_elan_bit_errors", "", R"(param { key: "bit_error_rate" value: "0.00001" })"));
}
