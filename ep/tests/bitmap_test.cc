// Unit tests of the elan3/bitmap.h operators (manual 3.3): each function on
// bitmaps spanning word boundaries, with partial last words whose unused
// bits must survive.
#include <elan3/bitmap.h>
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

namespace {

// A bitmap of nbits with the given bits set.
std::vector<bitmap_t> make(int nbits, std::initializer_list<int> bits) {
  std::vector<bitmap_t> v(BT_BITOUL(nbits), 0);
  for (int b : bits) BT_SET(v.data(), b);
  return v;
}

TEST(EpBitmap, SetTestClearAcrossWords) {
  bitmap_t map[3] = {0, 0, 0};
  BT_SET(map, 0);
  BT_SET(map, 31);
  BT_SET(map, 32);
  BT_SET(map, 95);
  EXPECT_EQ(map[0], 0x80000001u);
  EXPECT_EQ(map[1], 0x00000001u);
  EXPECT_EQ(map[2], 0x80000000u);
  EXPECT_TRUE(BT_TEST(map, 31));
  EXPECT_TRUE(BT_TEST(map, 32));
  EXPECT_FALSE(BT_TEST(map, 33));
  BT_CLEAR(map, 31);
  EXPECT_FALSE(BT_TEST(map, 31));
  EXPECT_EQ(map[0], 0x00000001u);
  EXPECT_TRUE(BT_TEST(map, 0));
}

TEST(EpBitmap, FreebitFindsFirstClearBitOrMinusOne) {
  auto m = make(70, {});
  EXPECT_EQ(bt_freebit(m.data(), 70), 0);
  bt_fill(m.data(), 70);
  EXPECT_EQ(bt_freebit(m.data(), 70), -1);
  BT_CLEAR(m.data(), 65);
  EXPECT_EQ(bt_freebit(m.data(), 70), 65);
  // Only nbits bits are checked: a clear bit beyond them does not count.
  auto full = make(40, {});
  bt_fill(full.data(), 40);
  EXPECT_EQ(bt_freebit(full.data(), 40), -1);
  EXPECT_EQ(full[1], 0xffu);  // bits 40..63 untouched (zero)
}

TEST(EpBitmap, LowbitAndNextbitWalkTheSetBits) {
  auto m = make(100, {3, 31, 32, 64, 99});
  EXPECT_EQ(bt_lowbit(m.data(), 100), 3);
  std::vector<int> seen;
  for (int b = bt_lowbit(m.data(), 100); b != -1; b = bt_nextbit(m.data(), 100, b)) seen.push_back(b);
  EXPECT_EQ(seen, (std::vector<int>{3, 31, 32, 64, 99}));
  EXPECT_EQ(bt_nextbit(m.data(), 100, 99), -1);
  EXPECT_EQ(bt_nextbit(m.data(), 64, 32), -1);  // bit 64 is outside 64 bits
  EXPECT_EQ(bt_nextbit(m.data(), 100, -1), 3);
  auto empty = make(50, {});
  EXPECT_EQ(bt_lowbit(empty.data(), 50), -1);
  BT_SET(empty.data(), 50);  // beyond nbits
  EXPECT_EQ(bt_lowbit(empty.data(), 50), -1);
}

TEST(EpBitmap, CopyZeroFillTouchOnlyNbits) {
  auto src = make(64, {1, 35, 40, 63});
  auto dst = make(64, {50, 60});
  bt_copy(dst.data(), src.data(), 40);  // bits 0..39
  EXPECT_TRUE(BT_TEST(dst.data(), 1));
  EXPECT_TRUE(BT_TEST(dst.data(), 35));
  EXPECT_FALSE(BT_TEST(dst.data(), 40));  // not copied
  EXPECT_TRUE(BT_TEST(dst.data(), 50));   // kept
  EXPECT_TRUE(BT_TEST(dst.data(), 60));
  bt_zero(dst.data(), 36);
  EXPECT_EQ(bt_nbits(dst.data(), 64), 2);
  bt_fill(dst.data(), 33);
  EXPECT_EQ(dst[0], 0xffffffffu);
  EXPECT_EQ(dst[1], (1u << 0) | (1u << 18) | (1u << 28));
}

TEST(EpBitmap, CmpComparesOnlyProcessedBits) {
  auto a = make(64, {2, 40});
  auto b = make(64, {2, 41});
  EXPECT_EQ(bt_cmp(a.data(), b.data(), 64), 1);
  EXPECT_EQ(bt_cmp(a.data(), b.data(), 40), 0);
  EXPECT_EQ(bt_cmp(a.data(), b.data(), 41), 1);
  EXPECT_EQ(bt_cmp(a.data(), a.data(), 64), 0);
}

TEST(EpBitmap, IntersectRemoveAdd) {
  auto a = make(70, {1, 2, 33, 66});
  auto b = make(70, {2, 33, 67});
  auto x = a;
  bt_intersect(x.data(), b.data(), 70);
  EXPECT_EQ(x, make(70, {2, 33}));
  x = a;
  bt_remove(x.data(), b.data(), 70);
  EXPECT_EQ(x, make(70, {1, 66}));
  x = a;
  bt_add(x.data(), b.data(), 70);
  EXPECT_EQ(x, make(70, {1, 2, 33, 66, 67}));
  // Partial: only the first 34 bits are processed.
  x = a;
  bt_add(x.data(), b.data(), 34);
  EXPECT_EQ(x, make(70, {1, 2, 33, 66}));
}

TEST(EpBitmap, SpansMeansSuperset) {
  auto a = make(64, {1, 2, 40});
  EXPECT_NE(bt_spans(a.data(), make(64, {1, 40}).data(), 64), 0);
  EXPECT_NE(bt_spans(a.data(), make(64, {}).data(), 64), 0);
  EXPECT_EQ(bt_spans(a.data(), make(64, {1, 41}).data(), 64), 0);
  EXPECT_NE(bt_spans(a.data(), make(64, {1, 41}).data(), 41), 0);  // 41 not processed
}

TEST(EpBitmap, HtonNtohRoundTripAndWireOrder) {
  auto h = make(64, {0, 9, 63});  // word0 = 0x00000201, word1 = 0x80000000
  bitmap_t n[2];
  bt_hton(h.data(), n, 64);
  unsigned char bytes[8];
  std::memcpy(bytes, n, 8);
  const unsigned char want[8] = {0x00, 0x00, 0x02, 0x01, 0x80, 0x00, 0x00, 0x00};
  EXPECT_EQ(std::memcmp(bytes, want, 8), 0);
  bitmap_t back[2] = {0xdead, 0xbeef};
  bt_ntoh(back, n, 64);
  EXPECT_EQ(back[0], h[0]);
  EXPECT_EQ(back[1], h[1]);
}

TEST(EpBitmap, UpAndDownFindNodesThatCameAndWent) {
  auto before = make(40, {1, 2, 35});
  auto after = make(40, {2, 3, 36});
  auto c = make(40, {});
  bt_up(before.data(), after.data(), c.data(), 40);
  EXPECT_EQ(c, make(40, {3, 36}));
  bt_down(before.data(), after.data(), c.data(), 40);
  EXPECT_EQ(c, make(40, {1, 35}));
}

TEST(EpBitmap, NbitsCountsSetBitsWithinNbits) {
  auto m = make(96, {0, 1, 31, 32, 63, 64, 95});
  EXPECT_EQ(bt_nbits(m.data(), 96), 7);
  EXPECT_EQ(bt_nbits(m.data(), 64), 5);
  EXPECT_EQ(bt_nbits(m.data(), 1), 1);
  EXPECT_EQ(bt_nbits(m.data(), 0), 0);
}

}  // namespace
