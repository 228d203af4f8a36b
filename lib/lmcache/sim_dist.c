/*
 * sim_dist.c - exact distributions for lct sim (sim_internal.h): counts
 * of distinct values in a u64map, sorted once at the report, the
 * per-request rates among them, so that every percentile is the value
 * LMCache's simulator prints, not one read off a histogram.
 */
#include "lmcache/sim_internal.h"
#include "lct_cache.h"

#include <stdlib.h>
#include <string.h>

bool lct__dist_add(lct__dist *d, uint64_t value)
{
    bool added;
    lct__u64map_entry *e = lct__u64map_get(&d->counts, value, &added);
    if (!e)
        return false;
    e->value++;
    d->count++;
    d->sum += value;
    if (value > d->max)
        d->max = value;
    return true;
}

static int by_key(const void *a, const void *b)
{
    uint64_t x = ((const lct__u64map_entry *)a)->key;
    uint64_t y = ((const lct__u64map_entry *)b)->key;
    return (x > y) - (x < y);
}

/* The map's entries (value, count) in `order`; NULL when memory ran out
 * or the map is empty. */
static lct__u64map_entry *sorted(const lct__u64map *m,
                                 int (*order)(const void *, const void *))
{
    lct__u64map_entry *v = m->used ? reallocarray(NULL, m->used, sizeof *v)
                                   : NULL;
    if (!v)
        return NULL;
    size_t n = 0;
    for (uint64_t s = 0; s <= m->mask; s++)
        if (m->slots[s].value)
            v[n++] = m->slots[s];
    qsort(v, n, sizeof *v, order);
    return v;
}

/* The values at LMCache's five nearest ranks of `total` samples. */
static void at_ranks(const lct__u64map_entry *v, uint64_t total,
                     uint64_t out[5])
{
    static const unsigned ps[] = {25, 50, 75, 90, 99};
    size_t at = 0;
    uint64_t seen = 0;
    for (size_t i = 0; i < 5; i++) {
        uint64_t rank = lct__nearest_rank(ps[i], total);
        while (seen + v[at].value < rank)
            seen += v[at++].value;
        out[i] = v[at].key;
    }
}

bool lct__dist_report(const lct__dist *d, lct_sim_dist *out)
{
    memset(out, 0, sizeof *out);
    out->count = d->count;
    out->max = d->max;
    /* Python divides the exact integer sum; a long double holds any
     * uint64_t sum exactly, so only the last rounding can differ. */
    out->mean = d->count ? (double)((long double)d->sum /
                                    (long double)d->count) : 0;
    if (!d->count)
        return true;
    lct__u64map_entry *v = sorted(&d->counts, by_key);
    if (!v)
        return false;
    uint64_t p[5];
    at_ranks(v, d->count, p);
    out->p25 = p[0], out->p50 = p[1], out->p75 = p[2], out->p90 = p[3];
    out->p99 = p[4];
    for (uint64_t i = 0; i < d->counts.used; i++)
        out->bins[v[i].key ? 64 - __builtin_clzll(v[i].key) : 0] +=
            v[i].value;
    free(v);
    return true;
}

void lct__dist_free(lct__dist *d)
{
    lct__u64map_free(&d->counts);
    memset(d, 0, sizeof *d);
}

/* A rate as the bits of its double: non-negative doubles order as their
 * bit patterns do, so the map sorts them by value. */
static uint64_t rate_bits(uint64_t hit, uint64_t total)
{
    double rate = total ? (double)hit / (double)total : 0;
    uint64_t bits;
    memcpy(&bits, &rate, sizeof bits);
    return bits;
}

bool lct__rate_percentiles(const uint64_t (*pairs)[2], uint64_t n,
                           double out[5])
{
    memset(out, 0, 5 * sizeof *out);
    if (!n)
        return true;
    lct__dist d = {0};
    bool ok = true;
    for (uint64_t i = 0; ok && i < n; i++)
        ok = lct__dist_add(&d, rate_bits(pairs[i][0], pairs[i][1]));
    lct__u64map_entry *v = ok ? sorted(&d.counts, by_key) : NULL;
    if (v) {
        uint64_t bits[5];
        at_ranks(v, n, bits);
        for (size_t i = 0; i < 5; i++)
            memcpy(&out[i], &bits[i], sizeof out[i]);
        free(v);
    }
    lct__dist_free(&d);
    return v != NULL;
}
