/*
 * mrc_target.c - the smallest capacity at which a curve reaches a hit
 * ratio (lct_mrc_capacity_for): bisection over the curve's own counts,
 * which are nondecreasing in the capacity, so the answer is the exact
 * one the curve gives, found in a logarithmic number of lookups and no
 * simulation.  Byte curves are searched band by band: where keys heavier
 * than the cache bypass it the ratio need not grow across a band's edge.
 */
#include "lct_cache.h"
#include "lmcache/mrc_internal.h"

/* The ratio of @p what at capacity c (keys, or bytes). */
static double ratio_at(const lct_mrc *m, lct_mrc_measure what, uint64_t c)
{
    switch (what) {
    case LCT_MRC_BYTE_HIT:
        return lct_mrc_byte_hit_ratio(m, c);
    case LCT_MRC_POSITION_HIT:
        return lct_mrc_position_hit_ratio(m, c);
    case LCT_MRC_POSITION_BYTE_HIT:
        return lct_mrc_position_byte_hit_ratio(m, c);
    default:
        return lct_mrc_hit_ratio(m, c);
    }
}

/* The least c in [lo, hi] reaching target where the ratio grows over
 * [lo, hi]; 0 when even hi falls short. */
static uint64_t least_in(const lct_mrc *m, lct_mrc_measure what,
                         uint64_t lo, uint64_t hi, double target)
{
    if (lo > hi || ratio_at(m, what, hi) < target)
        return 0;
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo) / 2;
        if (ratio_at(m, what, mid) >= target)
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo;
}

/* Past this many keys every finite distance hits: an infinite cache. */
static uint64_t keys_enough(const lct_mrc *m, lct_mrc_measure what)
{
    if (what == LCT_MRC_POSITION_HIT)
        return m->npcum ? m->npcum : 1;
    uint64_t d = lct_mrc_max_distance(m);
    return d < UINT64_MAX - 2 ? d + 2 : UINT64_MAX;
}

uint64_t lct_mrc_capacity_for(const lct_mrc *m, lct_mrc_measure what,
                              double target)
{
    bool positions =
        what == LCT_MRC_POSITION_HIT || what == LCT_MRC_POSITION_BYTE_HIT;
    if (!m || !(target > 0 && target <= 1) ||
        (positions && !m->totals.prefix))
        return 0;
    if (what != LCT_MRC_BYTE_HIT && what != LCT_MRC_POSITION_BYTE_HIT)
        return least_in(m, what, 1, keys_enough(m, what), target);
    /* Within a band the keys that fit are the same, and an LRU of more
     * bytes holds what a smaller one holds: the ratio grows there. */
    uint64_t lo = 1;
    if (m->nbands && m->band[0].lo > 1) { /* no key fits: a constant */
        uint64_t c = least_in(m, what, 1, m->band[0].lo - 1, target);
        if (c)
            return c;
    }
    for (unsigned j = 0; j < m->nbands; j++) {
        uint64_t c = least_in(m, what, m->band[j].lo, m->band[j].hi - 1,
                              target);
        if (c)
            return c;
        lo = m->band[j].hi;
    }
    return least_in(m, what, lo, UINT64_MAX / 2, target);
}
