// Two-sided tests of the Elan3 model and its driver: remote writes of every
// size class with the payload checked byte by byte, remote reads, remote
// set-event, events (count, chained DMA, done word, interrupt cookie), and a
// priority DMA overtaking the queued ones.
#include <gtest/gtest.h>

#include <vector>

#include "elan_model/tests/elan3_harness.h"

using namespace nicsim;
using namespace nicsim::elan3;
using namespace nicsim::elan3::testing;

namespace {

constexpr std::uint32_t kBuf = 65536 + 64;

// Sizes: every size 1..700 (one and several packets, every alignment of
// the last block), then every 997th size and the block edges up to 64 KiB.
std::vector<std::uint32_t> write_sizes() {
  std::vector<std::uint32_t> s;
  for (std::uint32_t n = 1; n <= 700; ++n) s.push_back(n);
  for (std::uint32_t n = 701; n < 65536; n += 997) s.push_back(n);
  for (std::uint32_t n : {4095u, 4096u, 8191u, 8192u, 8193u, 32768u, 65535u, 65536u}) s.push_back(n);
  return s;
}

// Rank 0 writes each size into rank 1's buffer with a destination event;
// rank 1 checks every byte and that the byte after the message is untouched,
// then sets rank 0's event remotely (a size-0 DMA) to let it go on.
int remote_write(int, char**) {
  Elan3Dev* d = Elan3Dev::attach();
  EXPECT_NE(d, nullptr);
  if (!d) return 1;
  const bool sender = nicsim_workload_rank() == 0;
  E3Addr buf_e = 0;
  std::uint8_t* buf = mapped(*d, kBuf, sender ? perm::kLocalRead : perm::kRemoteWrite, &buf_e);
  ElanMem ev = d->alloc_event(true);
  d->prime_event(ev, 1, event::Type::None, 0, 0, true, Elan3Dev::kWaitCookie);
  const std::vector<std::uint32_t> sizes = write_sizes();
  // The receiver poisons one byte more than the next message will write.
  if (!sender) std::memset(buf, 0xEE, sizes[0] + 1);
  Peer peer = exchange(Peer{d->node_id(), buf_e, ev.elan, 0, 0});
  EXPECT_EQ(d->num_nodes(), 2u);
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    const std::uint32_t n = sizes[i];
    if (sender) {
      fill(buf, n, n);
      DmaRequest r;
      r.size = n;
      r.source = buf_e;
      r.dest = peer.buf;
      r.dest_event = peer.event;
      r.dest_node = peer.node;
      EXPECT_EQ(d->issue_dma(r), DevStatus::Ok);
      EXPECT_TRUE(d->wait_event(ev, 10 * kMs)) << "no go-ahead after size " << n;
      d->prime_event(ev, 1, event::Type::None, 0, 0, true, Elan3Dev::kWaitCookie);
    } else {
      EXPECT_TRUE(d->wait_event(ev, 10 * kMs)) << "size " << n << " never arrived";
      std::vector<std::uint8_t> expect(n);
      fill(expect.data(), n, n);
      EXPECT_EQ(std::memcmp(buf, expect.data(), n), 0) << "payload of size " << n;
      EXPECT_EQ(buf[n], 0xEE) << "byte after size " << n << " was written";
      if (i + 1 < sizes.size()) std::memset(buf, 0xEE, sizes[i + 1] + 1);
      d->prime_event(ev, 1, event::Type::None, 0, 0, true, Elan3Dev::kWaitCookie);
      DmaRequest go;
      go.dest_event = peer.event;
      go.dest_node = peer.node;
      EXPECT_EQ(d->issue_dma(go), DevStatus::Ok);
    }
    if (::testing::Test::HasFailure()) return 1;
  }
  std::uint64_t total = 0;
  for (std::uint32_t n : sizes) total += n;
  const Elan3Stats& st = this_elan().stats();
  if (sender) {
    EXPECT_EQ(st.tx_bytes, total);
    EXPECT_EQ(st.dmas_done, sizes.size());
    EXPECT_EQ(st.retransmits, 0u);
  } else {
    EXPECT_EQ(st.rx_bytes, total);
    EXPECT_EQ(st.rx_bad_crc, 0u);
  }
  nicsim_result("simulated_time", static_cast<double>(Calendar::now()) / kUs, "us");
  return ::testing::Test::HasFailure() ? 1 : 0;
}
const BuiltinProgram reg_write("t_elan_write", remote_write, "test");

}  // namespace

TEST(Elan3Dma, RemoteWriteEverySizeBytesExact) { run_ok(two_elans("t_elan_write")); }

// The packet CRC is CRC-32C: its check value over "123456789" is
// 0xE3069283, by the instruction and by the tables, at every length (tails
// of 0-7 bytes), against a bitwise reference.
TEST(Elan3Wire, Crc32cCheckValue) {
  const std::uint8_t check[] = {'1', '2', '3', '4', '5', '6', '7', '8', '9'};
  EXPECT_EQ(pkt::crc32(check, sizeof check), 0xE3069283u);
  EXPECT_EQ(pkt::crc32_sliced(check, sizeof check), 0xE3069283u);
  std::vector<std::uint8_t> data(100);
  fill(data.data(), data.size(), 4);
  for (std::size_t n = 0; n <= data.size(); ++n) {
    std::uint32_t c = 0xffffffffu;
    for (std::size_t i = 0; i < n; ++i) {
      c ^= data[i];
      for (int k = 0; k < 8; ++k) c = (c & 1) ? 0x82f63b78u ^ (c >> 1) : c >> 1;
    }
    EXPECT_EQ(pkt::crc32(data.data(), n), c ^ 0xffffffffu) << n;
    EXPECT_EQ(pkt::crc32_sliced(data.data(), n), c ^ 0xffffffffu) << n;
  }
}

namespace {

constexpr std::uint32_t kBig = 65536, kBigs = 4, kSmall = 64;
bool g_priority = false;  // the small write's DmaRequest::priority

// Rank 0 issues four 64 KiB writes, then a 64-byte write (a priority DMA
// or not) with a destination event. When that event fires, rank 1 looks
// at what has landed: a priority DMA ran right after the write that was
// running (the last two not begun); a plain one after all four.
int priority_order(int, char**) {
  Elan3Dev* d = Elan3Dev::attach();
  if (!d) return 1;
  const bool sender = nicsim_workload_rank() == 0;
  const std::uint32_t total = kBig * kBigs + kSmall;
  E3Addr buf_e = 0;
  std::uint8_t* buf = mapped(*d, total, sender ? perm::kLocalRead : perm::kRemoteWrite, &buf_e);
  ElanMem ev = d->alloc_event(true);
  d->prime_event(ev, 1, event::Type::None, 0, 0, true, Elan3Dev::kWaitCookie);
  if (!sender) std::memset(buf, 0xEE, total);
  Peer peer = exchange(Peer{d->node_id(), buf_e, ev.elan, 0, 0});
  if (sender) {
    fill(buf, total, 3);
    for (std::uint32_t k = 0; k <= kBigs; ++k) {
      DmaRequest r;
      r.size = k < kBigs ? kBig : kSmall;
      r.source = buf_e + k * kBig;
      r.dest = peer.buf + k * kBig;
      r.dest_node = peer.node;
      r.dest_event = k < kBigs ? 0 : peer.event;
      r.priority = k == kBigs && g_priority;
      EXPECT_EQ(d->issue_dma(r), DevStatus::Ok);
    }
    EXPECT_TRUE(d->wait_event(ev, 20 * kMs)) << "no go-ahead";
    return ::testing::Test::HasFailure() ? 1 : 0;
  }
  EXPECT_TRUE(d->wait_event(ev, 20 * kMs)) << "the small write never arrived";
  std::vector<std::uint8_t> expect(total);
  fill(expect.data(), total, 3);
  EXPECT_EQ(std::memcmp(buf + kBig * kBigs, expect.data() + kBig * kBigs, kSmall), 0) << "the small write";
  EXPECT_EQ(std::memcmp(buf, expect.data(), kBig), 0) << "the first write, running when the small one came";
  const bool last_two_landed = buf[2 * kBig] != 0xEE || buf[3 * kBig] != 0xEE;
  EXPECT_EQ(last_two_landed, !g_priority);
  DmaRequest go;
  go.dest_event = peer.event;
  go.dest_node = peer.node;
  EXPECT_EQ(d->issue_dma(go), DevStatus::Ok);
  return ::testing::Test::HasFailure() ? 1 : 0;
}
const BuiltinProgram reg_priority("t_elan_priority", priority_order, "test");

}  // namespace

TEST(Elan3Dma, PriorityDmaRunsAheadOfTheQueuedOnes) {
  g_priority = true;
  run_ok(two_elans("t_elan_priority"));
}

TEST(Elan3Dma, PlainDmaRunsAfterTheQueuedOnes) {
  g_priority = false;
  run_ok(two_elans("t_elan_priority"));
}
