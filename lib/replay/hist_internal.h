/*
 * hist_internal.h - durations in a log-bucketed histogram (HdrHistogram's
 * idea): exact below 256 ns, then 128 buckets per power of two, so any
 * value is known to within 1/256 of itself (its bucket's middle), in a
 * fixed 36 KiB whatever the count.  One per worker per measure, merged at
 * the end: recording takes no lock.
 */
#ifndef LCT_HIST_INTERNAL_H
#define LCT_HIST_INTERNAL_H

#include <stdint.h>

#include "lct_replay.h"

#define LCT__HIST_SUB_BITS 7
/* Up to 2^41 ns (about 36 minutes); longer lands in the last bucket, and
 * max still says how long. */
#define LCT__HIST_BUCKETS ((41 - LCT__HIST_SUB_BITS + 1) << LCT__HIST_SUB_BITS)

typedef struct lct__hist {
    uint64_t count;
    uint64_t min_ns, max_ns;
    double total_ns;
    uint64_t bucket[LCT__HIST_BUCKETS];
} lct__hist;

void lct__hist_init(lct__hist *h);
void lct__hist_add(lct__hist *h, uint64_t ns);
void lct__hist_merge(lct__hist *into, const lct__hist *from);
/* The value at rank ceil(q * count) (nearest rank, as LMCache's replay
 * takes percentiles), as its bucket's middle, within [min, max]. */
uint64_t lct__hist_quantile(const lct__hist *h, double q);
/* Count, total, mean, extremes and percentiles, in seconds. */
void lct__hist_summary(const lct__hist *h, lct_replay_dist *out);

#endif
