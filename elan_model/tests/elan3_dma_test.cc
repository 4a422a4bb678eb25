// Two-sided tests of the Elan3 model and its driver: remote writes of every
// size class with the payload checked byte by byte, remote reads, remote
// set-event, and events (count, chained DMA, done word, interrupt cookie).
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
