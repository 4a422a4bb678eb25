/*
 * elan3/bitmap.h: the Elan Kernel Comms bitmap operators (seed 003,
 * "Elan Kernel Comms" manual, section 3.3, BT_TEST(3)).
 *
 * A bitmap_t is one 32-bit word of a bit array; bit i of an array lives in
 * word i / 32 at bit position i % 32 (least significant bit first). A bitmap
 * covering n bits is an array of BT_BITOUL(n) words. Multicast transmits use
 * one bit per node number (ep_multicast_large).
 *
 * Where the manual leaves a choice, this header decides:
 *   - "network byte order" (bt_hton/bt_ntoh) is each word stored big-endian,
 *     as a 32-bit network integer; the bit numbering within the word value
 *     is unchanged, so a bitmap converted on a little-endian host and read
 *     back on a big-endian host names the same nodes;
 *   - functions that write a bitmap touch only the nbits bits they process:
 *     the unused high bits of the last word keep their value (except
 *     bt_hton/bt_ntoh, which convert whole words);
 *   - bt_nextbit(a, nbits, last) returns the first set bit after `last`
 *     (pass -1 to start at bit 0, as bt_lowbit does);
 *   - bt_spans(a, b) is non-zero when every bit set in *b is set in *a;
 *   - bt_cmp returns 0 for identical bitmaps, 1 when any processed bit
 *     differs (exactly the manual's two values).
 *
 * C99 and C++; needs nothing else from nicsim.
 */
#ifndef ELAN3_BITMAP_H
#define ELAN3_BITMAP_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* One word of a bitmap: 32 bits, as on the Elan. */
typedef uint32_t bitmap_t;

#define BT_NBIPUL 32           /* bits per bitmap_t word */
#define BT_ULSHIFT 5           /* log2(BT_NBIPUL) */
#define BT_ULMASK (BT_NBIPUL - 1)

/* Words needed for nbits bits. */
#define BT_BITOUL(nbits) (((nbits) + BT_NBIPUL - 1) / BT_NBIPUL)
/* The word holding bit i, and the mask of bit i inside it. */
#define BT_WIM(bitmap, bitindex) ((bitmap)[(bitindex) >> BT_ULSHIFT])
#define BT_BIW(bitindex) (((bitmap_t)1) << ((bitindex) & BT_ULMASK))

/* int BT_TEST(bitmap_t *a, int bitindex): non-zero if the bit is set. */
#define BT_TEST(a, bitindex) ((BT_WIM((a), (bitindex)) & BT_BIW(bitindex)) != 0)
/* void BT_SET(bitmap_t *a, int bitindex) */
#define BT_SET(a, bitindex) ((void)(BT_WIM((a), (bitindex)) |= BT_BIW(bitindex)))
/* void BT_CLEAR(bitmap_t *a, int bitindex) */
#define BT_CLEAR(a, bitindex) ((void)(BT_WIM((a), (bitindex)) &= ~BT_BIW(bitindex)))

int bt_freebit(bitmap_t *a, int nbits);
int bt_lowbit(bitmap_t *a, int nbits);
int bt_nextbit(bitmap_t *a, int nbits, int last);
void bt_copy(bitmap_t *a, bitmap_t *b, int nbits);
void bt_zero(bitmap_t *a, int nbits);
void bt_fill(bitmap_t *a, int nbits);
int bt_cmp(bitmap_t *a, bitmap_t *b, int nbits);
void bt_intersect(bitmap_t *a, bitmap_t *b, int nbits);
void bt_remove(bitmap_t *a, bitmap_t *b, int nbits);
void bt_add(bitmap_t *a, bitmap_t *b, int nbits);
int bt_spans(bitmap_t *a, bitmap_t *b, int nbits);
void bt_hton(bitmap_t *h, bitmap_t *n, int nbits);
void bt_ntoh(bitmap_t *h, bitmap_t *n, int nbits);
void bt_up(bitmap_t *a, bitmap_t *b, bitmap_t *c, int nbits);
void bt_down(bitmap_t *a, bitmap_t *b, bitmap_t *c, int nbits);
int bt_nbits(bitmap_t *a, int nbits);

#ifdef __cplusplus
}
#endif

#endif /* ELAN3_BITMAP_H */
