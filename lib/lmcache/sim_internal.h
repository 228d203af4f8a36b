/*
 * sim_internal.h - the exact distributions of lct sim's report
 * (sim_dist.c): each statistic kept as counts of its distinct values, so
 * that its percentiles are LMCache's to the digit in memory that grows
 * with the distinct values, not with the samples; and the per-request
 * rates' percentiles.
 */
#ifndef LCT_SIM_INTERNAL_H
#define LCT_SIM_INTERNAL_H

#include "lct_cache.h"
#include "base/u64map_internal.h"

#include <stdbool.h>
#include <stdint.h>

/* A distribution of whole numbers: value -> how many times. */
typedef struct lct__dist {
    lct__u64map counts;
    uint64_t count, max, sum;
} lct__dist;

/* false when memory ran out (the sample is not counted). */
bool lct__dist_add(lct__dist *d, uint64_t value);
/* Count, mean, max, LMCache's nearest-rank p25..p99 and log2 bins; false
 * when memory ran out. */
bool lct__dist_report(const lct__dist *d, lct_sim_dist *out);
void lct__dist_free(lct__dist *d);

/* LMCache's percentile (simulator.py, _percentiles): the nearest rank,
 * ceil(p n / 100) counted from 1, clamped to 1..n. */
static inline uint64_t lct__nearest_rank(unsigned p, uint64_t n)
{
    uint64_t rank = ((uint64_t)p * n + 99) / 100;
    return rank < 1 ? 1 : rank > n ? n : rank;
}

/* Per-request rates hit/total (0 when total is), each divided as Python
 * divides two ints: the value at each of LMCache's five ranks.  false
 * when memory ran out. */
bool lct__rate_percentiles(const uint64_t (*pairs)[2], uint64_t n,
                           double out[5]);

#endif
