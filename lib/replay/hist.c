/*
 * hist.c - the replay's histograms of durations: bucket arithmetic,
 * merging, nearest-rank quantiles (hist_internal.h says why this shape).
 */
#include <string.h>

#include "replay/hist_internal.h"
#include "lct_replay.h"

void lct__hist_init(lct__hist *h)
{
    memset(h, 0, sizeof *h);
    h->min_ns = UINT64_MAX;
}

static unsigned bucket_of(uint64_t ns)
{
    if (ns < (2u << LCT__HIST_SUB_BITS))
        return (unsigned)ns;
    unsigned shift = 63u - (unsigned)__builtin_clzll(ns) - LCT__HIST_SUB_BITS;
    uint64_t index = ((uint64_t)shift << LCT__HIST_SUB_BITS) + (ns >> shift);
    return index >= LCT__HIST_BUCKETS ? LCT__HIST_BUCKETS - 1 : (unsigned)index;
}

/* The middle of a bucket: its first value plus half its width. */
static uint64_t bucket_middle(unsigned index)
{
    if (index < (2u << LCT__HIST_SUB_BITS))
        return index;
    unsigned shift = (index >> LCT__HIST_SUB_BITS) - 1;
    uint64_t sub = index - ((uint64_t)shift << LCT__HIST_SUB_BITS);
    return (sub << shift) + ((1ull << shift) >> 1);
}

void lct__hist_add(lct__hist *h, uint64_t ns)
{
    h->count++;
    h->total_ns += (double)ns;
    if (ns < h->min_ns)
        h->min_ns = ns;
    if (ns > h->max_ns)
        h->max_ns = ns;
    h->bucket[bucket_of(ns)]++;
}

void lct__hist_merge(lct__hist *into, const lct__hist *from)
{
    if (from->count == 0)
        return;
    into->count += from->count;
    into->total_ns += from->total_ns;
    if (from->min_ns < into->min_ns)
        into->min_ns = from->min_ns;
    if (from->max_ns > into->max_ns)
        into->max_ns = from->max_ns;
    for (unsigned i = 0; i < LCT__HIST_BUCKETS; i++)
        into->bucket[i] += from->bucket[i];
}

uint64_t lct__hist_quantile(const lct__hist *h, double q)
{
    if (h->count == 0)
        return 0;
    /* Multiply before dividing, as LMCache's _percentile does. */
    double exact = q * (double)h->count;
    uint64_t rank = (uint64_t)exact;
    if ((double)rank < exact)
        rank++;
    if (rank < 1)
        rank = 1;
    if (rank >= h->count)
        return h->max_ns; /* known exactly */
    uint64_t seen = 0;
    for (unsigned i = 0; i < LCT__HIST_BUCKETS; i++) {
        seen += h->bucket[i];
        if (seen >= rank) {
            uint64_t v = bucket_middle(i);
            if (v < h->min_ns)
                v = h->min_ns;
            if (v > h->max_ns)
                v = h->max_ns;
            return v;
        }
    }
    return h->max_ns;
}

void lct__hist_summary(const lct__hist *h, lct_replay_dist *out)
{
    memset(out, 0, sizeof *out);
    out->count = h->count;
    if (h->count == 0)
        return;
    out->total = h->total_ns / 1e9;
    out->mean = out->total / (double)h->count;
    out->min = (double)h->min_ns / 1e9;
    out->max = (double)h->max_ns / 1e9;
    out->p50 = (double)lct__hist_quantile(h, 0.50) / 1e9;
    out->p90 = (double)lct__hist_quantile(h, 0.90) / 1e9;
    out->p99 = (double)lct__hist_quantile(h, 0.99) / 1e9;
    out->p999 = (double)lct__hist_quantile(h, 0.999) / 1e9;
}
