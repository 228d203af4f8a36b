/*
 * select.c - nearest-rank percentiles by selection, not a sort, for
 * stat's gaps and --spans' durations: doubles become unsigned keys in
 * the same order, and a most-significant-digit radix select finds the
 * key at a rank in linear time without memory.
 */
#include "tool.h"

#include <string.h>

/* A double's bits as an unsigned key in the same order (negative
 * numbers reversed below the positive ones). */
uint64_t tool_order_key(double d)
{
    uint64_t u;
    memcpy(&u, &d, sizeof u);
    return (u >> 63) ? ~u : u | (UINT64_C(1) << 63);
}

/*
 * The percentiles by selection, not a sort: two ranks are wanted, and
 * the radix sort of every gap was stat's largest own function in `perf`.
 * A most-significant-digit radix select on the order keys: each pass
 * counts the next byte of the keys left and moves those in the rank's
 * byte to the front, so it is linear whatever the values (eight passes
 * at most, on fewer keys each time), needs no memory, and picks the very
 * value a sort by the keys puts at the rank (-0 below +0, NaNs at the
 * ends).
 */
#define SELECT_FEW 32 /* below this many keys, an insertion sort */

static uint64_t select_few(uint64_t *k, size_t n, size_t rank)
{
    for (size_t i = 1; i < n; i++) {
        uint64_t x = k[i];
        size_t j = i;
        for (; j > 0 && k[j - 1] > x; j--)
            k[j] = k[j - 1];
        k[j] = x;
    }
    return k[rank];
}

/* The byte value at `shift` that the key of rank *rank falls in, given
 * each value's count; *rank becomes its rank among those keys. */
static unsigned bucket_of(const size_t count[256], size_t *rank)
{
    unsigned b = 0;
    while (*rank >= count[b])
        *rank -= count[b++];
    return b;
}

/* Moves the keys whose byte at `shift` is b to the front: how many. */
static size_t gather(uint64_t *k, size_t n, int shift, unsigned b)
{
    size_t kept = 0;
    for (size_t i = 0; i < n; i++)
        if (((k[i] >> shift) & 0xff) == b) {
            uint64_t t = k[kept];
            k[kept++] = k[i];
            k[i] = t;
        }
    return kept;
}

/* How many of k[0..n) have each value of the byte at `shift`. */
static void count_byte(const uint64_t *k, size_t n, int shift,
                       size_t count[256])
{
    memset(count, 0, 256 * sizeof *count);
    for (size_t i = 0; i < n; i++)
        count[(k[i] >> shift) & 0xff]++;
}

/* The key of rank `rank` (from 0) among k[0..n); k is reordered.  The
 * bytes above `shift` are the same in every key, so no pass counts them;
 * shift < 0: every key is the same. */
uint64_t tool_select_key(uint64_t *k, size_t n, size_t rank, int shift)
{
    for (; shift >= 0 && n >= SELECT_FEW; shift -= 8) {
        size_t count[256];
        count_byte(k, n, shift, count);
        unsigned b = bucket_of(count, &rank);
        if (count[b] != n) /* else this byte is the same in all */
            n = gather(k, n, shift, b);
    }
    return shift < 0 ? k[rank] : select_few(k, n, rank);
}

/* The keys of ranks lo and hi among k[0..n), n > 0; k is reordered.  The
 * first byte that differs (`shift`, as select_key's) is counted once for
 * both, and when both ranks fall in one of its values, that value's keys
 * are gathered once. */
void tool_select_two(uint64_t *k, size_t n, int shift, size_t lo,
                       size_t hi, uint64_t *at_lo, uint64_t *at_hi)
{
    if (n < SELECT_FEW) {
        select_few(k, n, 0);
        *at_lo = k[lo], *at_hi = k[hi];
        return;
    }
    size_t count[256];
    count_byte(k, n, shift, count);
    unsigned b_lo = bucket_of(count, &lo), b_hi = bucket_of(count, &hi);
    size_t m = gather(k, n, shift, b_hi);
    *at_hi = tool_select_key(k, m, hi, shift - 8);
    if (b_lo != b_hi)
        m = gather(k, n, shift, b_lo);
    *at_lo = tool_select_key(k, m, lo, shift - 8);
}

double tool_of_order_key(uint64_t u)
{
    u = (u >> 63) ? u & ~(UINT64_C(1) << 63) : ~u;
    double d;
    memcpy(&d, &u, sizeof d);
    return d;
}

/* Nearest rank among n > 0: index ceil(p*n/100) - 1. */
size_t tool_nearest_rank(size_t n, unsigned p)
{
    size_t rank = ((size_t)p * n + 99) / 100;
    return rank > 0 ? rank - 1 : 0;
}

/* The shift of the highest byte in which some key differs from the
 * first, given the or of every key xor the first (0 when all alike). */
int tool_first_differing_byte(uint64_t differ)
{
    int shift = 56;
    while (shift > 0 && (differ >> shift) == 0)
        shift -= 8;
    return shift;
}

