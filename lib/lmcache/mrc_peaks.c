/*
 * mrc_peaks.c - the excess a byte curve's pass keeps once keys shrink or
 * leave (mrc_peaks_internal.h): a segment tree of pending changes
 * x -> max(x + add, floor), pushed down along a range's two edges before
 * the range takes a new one, so every node's change stays newer than its
 * children's and a position's excess is read bottom-up without pushing.
 */
#include "lmcache/mrc_peaks_internal.h"
#include "lct_cache.h"

#include <stdlib.h>
#include <string.h>

static inline int64_t sat_add(int64_t a, int64_t b)
{
    int64_t s;
    if (__builtin_add_overflow(a, b, &s))
        return b > 0 ? INT64_MAX : INT64_MIN;
    return s;
}

static inline int64_t apply(lct__mrc_peak_tag f, int64_t x)
{
    int64_t y = sat_add(x, f.add);
    return y > f.floor ? y : f.floor;
}

/* node's change becomes f after it */
static inline void compose(lct__mrc_peak_tag *node, lct__mrc_peak_tag f)
{
    node->add = sat_add(node->add, f.add);
    node->floor = apply(f, node->floor);
}

static inline __attribute__((always_inline)) void
push(lct__mrc_peaks *pk, uint64_t i)
{
    lct__mrc_peak_tag f = pk->tag[i];
    if (!f.add && !f.floor)
        return;
    compose(&pk->tag[2 * i], f);
    compose(&pk->tag[2 * i + 1], f);
    pk->tag[i] = (lct__mrc_peak_tag){0, 0};
}

static uint64_t leaves_for(uint64_t cap)
{
    uint64_t n = 1;
    while (n < cap)
        n *= 2;
    return n;
}

bool lct__mrc_peaks_start(lct__mrc_peaks *pk, uint64_t cap)
{
    if (pk->tag)
        return true;
    pk->leaves = leaves_for(cap);
    pk->tag = calloc(2 * pk->leaves, sizeof *pk->tag);
    return pk->tag != NULL;
}

void lct__mrc_peaks_rise(lct__mrc_peaks *pk, uint64_t lo, uint64_t hi,
                         int64_t rise)
{
    if (!pk->tag || lo >= hi)
        return;
    unsigned height = (unsigned)__builtin_ctzll(pk->leaves); /* 2^height */
    uint64_t l = lo + pk->leaves, r = hi + pk->leaves;
    /* an edge's ancestor above its lowest set bit holds positions on both
     * sides of it: those are pushed, top down */
    unsigned l_low = (unsigned)__builtin_ctzll(l),
             r_low = (unsigned)__builtin_ctzll(r);
    for (unsigned i = height; i >= 1; i--) {
        if (i > l_low)
            push(pk, l >> i);
        if (i > r_low)
            push(pk, (r - 1) >> i);
    }
    lct__mrc_peak_tag f = {rise == INT64_MIN ? INT64_MAX : -rise, 0};
    for (; l < r; l >>= 1, r >>= 1) {
        if (l & 1)
            compose(&pk->tag[l++], f);
        if (r & 1)
            compose(&pk->tag[--r], f);
    }
}

void lct__mrc_peaks_rise_from(lct__mrc_peaks *pk, uint64_t lo,
                              uint64_t growth)
{
    lct__mrc_peaks_rise(pk, lo, pk->leaves, lct__mrc_signed(growth));
}

uint64_t lct__mrc_peaks_walk(const lct__mrc_peaks *pk, uint64_t pos)
{
    if (!pk->tag || pos >= pk->leaves)
        return 0;
    uint64_t i = pos + pk->leaves;
    int64_t x = apply(pk->tag[i], 0);
    for (i >>= 1; i; i >>= 1)
        x = apply(pk->tag[i], x);
    return (uint64_t)x;
}

void lct__mrc_peaks_settle(lct__mrc_peaks *pk)
{
    if (!pk->tag)
        return;
    for (uint64_t i = 1; i < pk->leaves; i++)
        push(pk, i);
}

void lct__mrc_peaks_move(lct__mrc_peaks *pk, uint64_t from, uint64_t to)
{
    if (!pk->tag)
        return;
    int64_t x = apply(pk->tag[pk->leaves + from], 0);
    pk->tag[pk->leaves + to] = (lct__mrc_peak_tag){0, x};
}

void lct__mrc_peaks_clear_from(lct__mrc_peaks *pk, uint64_t pos)
{
    if (pk->tag && pos < pk->leaves)
        memset(pk->tag + pk->leaves + pos, 0,
               (pk->leaves - pos) * sizeof *pk->tag);
}

bool lct__mrc_peaks_grow(lct__mrc_peaks *pk, uint64_t cap, uint64_t n)
{
    uint64_t leaves = leaves_for(cap);
    if (!pk->tag || leaves <= pk->leaves)
        return true;
    lct__mrc_peak_tag *tag = calloc(2 * leaves, sizeof *tag);
    if (!tag)
        return false;
    lct__mrc_peaks_settle(pk);
    for (uint64_t i = 0; i < n && i < pk->leaves; i++)
        tag[leaves + i] = pk->tag[pk->leaves + i];
    free(pk->tag);
    pk->tag = tag;
    pk->leaves = leaves;
    return true;
}

void lct__mrc_peaks_free(lct__mrc_peaks *pk)
{
    free(pk->tag);
    pk->tag = NULL;
    pk->leaves = 0;
}
