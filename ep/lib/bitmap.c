/*
 * The bitmap operators of elan3/bitmap.h (manual section 3.3). Conventions
 * (bit order, byte order, partial last words) are documented in the header.
 * Word-at-a-time loops: the multicast path runs these over the node map for
 * every transmit, so they should not test one bit at a time.
 */
#include <elan3/bitmap.h>

/* Mask of the bits of word w that lie below nbits. */
static bitmap_t word_mask(int w, int nbits)
{
	int left = nbits - w * BT_NBIPUL;
	if (left >= BT_NBIPUL)
		return ~(bitmap_t)0;
	return left <= 0 ? 0 : (((bitmap_t)1 << left) - 1);
}

static int nwords(int nbits)
{
	return nbits <= 0 ? 0 : (int)BT_BITOUL(nbits);
}

static int lowest_set(bitmap_t v)
{
	int i = 0;
	while ((v & 1u) == 0) {
		v >>= 1;
		i++;
	}
	return i;
}

/* First bit at or after `from` whose value, XORed with `invert`, is 1. */
static int scan(const bitmap_t *a, int nbits, int from, bitmap_t invert)
{
	int w;
	if (from < 0)
		from = 0;
	for (w = from >> BT_ULSHIFT; w < nwords(nbits); w++) {
		bitmap_t v = (a[w] ^ invert) & word_mask(w, nbits);
		if (w == (from >> BT_ULSHIFT))
			v &= ~(bitmap_t)0 << (from & BT_ULMASK);
		if (v != 0)
			return w * BT_NBIPUL + lowest_set(v);
	}
	return -1;
}

int bt_freebit(bitmap_t *a, int nbits) { return scan(a, nbits, 0, ~(bitmap_t)0); }

int bt_lowbit(bitmap_t *a, int nbits) { return scan(a, nbits, 0, 0); }

int bt_nextbit(bitmap_t *a, int nbits, int last)
{
	if (last + 1 >= nbits)
		return -1;
	return scan(a, nbits, last + 1, 0);
}

/* Writes v into the processed bits of *dst, keeping the others. */
static void store(bitmap_t *dst, int w, int nbits, bitmap_t v)
{
	bitmap_t m = word_mask(w, nbits);
	dst[w] = (dst[w] & ~m) | (v & m);
}

void bt_copy(bitmap_t *a, bitmap_t *b, int nbits)
{
	int w;
	for (w = 0; w < nwords(nbits); w++)
		store(a, w, nbits, b[w]);
}

void bt_zero(bitmap_t *a, int nbits)
{
	int w;
	for (w = 0; w < nwords(nbits); w++)
		store(a, w, nbits, 0);
}

void bt_fill(bitmap_t *a, int nbits)
{
	int w;
	for (w = 0; w < nwords(nbits); w++)
		store(a, w, nbits, ~(bitmap_t)0);
}

int bt_cmp(bitmap_t *a, bitmap_t *b, int nbits)
{
	int w;
	for (w = 0; w < nwords(nbits); w++)
		if (((a[w] ^ b[w]) & word_mask(w, nbits)) != 0)
			return 1;
	return 0;
}

void bt_intersect(bitmap_t *a, bitmap_t *b, int nbits)
{
	int w;
	for (w = 0; w < nwords(nbits); w++)
		store(a, w, nbits, a[w] & b[w]);
}

void bt_remove(bitmap_t *a, bitmap_t *b, int nbits)
{
	int w;
	for (w = 0; w < nwords(nbits); w++)
		store(a, w, nbits, a[w] & ~b[w]);
}

void bt_add(bitmap_t *a, bitmap_t *b, int nbits)
{
	int w;
	for (w = 0; w < nwords(nbits); w++)
		store(a, w, nbits, a[w] | b[w]);
}

int bt_spans(bitmap_t *a, bitmap_t *b, int nbits)
{
	int w;
	for (w = 0; w < nwords(nbits); w++)
		if ((b[w] & ~a[w] & word_mask(w, nbits)) != 0)
			return 0;
	return 1;
}

/* A word as a big-endian (network order) 32-bit integer, in memory. */
static bitmap_t swap_to_network(bitmap_t v)
{
	unsigned char bytes[4];
	bitmap_t out;
	unsigned i;
	bytes[0] = (unsigned char)(v >> 24);
	bytes[1] = (unsigned char)(v >> 16);
	bytes[2] = (unsigned char)(v >> 8);
	bytes[3] = (unsigned char)v;
	out = 0;
	for (i = 0; i < 4; i++)
		((unsigned char *)&out)[i] = bytes[i];
	return out;
}

static bitmap_t swap_from_network(bitmap_t n)
{
	const unsigned char *bytes = (const unsigned char *)&n;
	return ((bitmap_t)bytes[0] << 24) | ((bitmap_t)bytes[1] << 16) |
	       ((bitmap_t)bytes[2] << 8) | (bitmap_t)bytes[3];
}

/* The whole words that hold the nbits bits are converted: a network-order
 * word has no "unused high bits" in host terms, so partial words are not
 * masked here. */
void bt_hton(bitmap_t *h, bitmap_t *n, int nbits)
{
	int w;
	for (w = 0; w < nwords(nbits); w++)
		n[w] = swap_to_network(h[w]);
}

void bt_ntoh(bitmap_t *h, bitmap_t *n, int nbits)
{
	int w;
	for (w = 0; w < nwords(nbits); w++)
		h[w] = swap_from_network(n[w]);
}

void bt_up(bitmap_t *a, bitmap_t *b, bitmap_t *c, int nbits)
{
	int w;
	for (w = 0; w < nwords(nbits); w++)
		store(c, w, nbits, ~a[w] & b[w]);
}

void bt_down(bitmap_t *a, bitmap_t *b, bitmap_t *c, int nbits)
{
	int w;
	for (w = 0; w < nwords(nbits); w++)
		store(c, w, nbits, a[w] & ~b[w]);
}

int bt_nbits(bitmap_t *a, int nbits)
{
	int w, count = 0;
	for (w = 0; w < nwords(nbits); w++) {
		bitmap_t v = a[w] & word_mask(w, nbits);
		while (v != 0) {
			v &= v - 1;
			count++;
		}
	}
	return count;
}
