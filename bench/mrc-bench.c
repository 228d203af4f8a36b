/*
 * mrc-bench.c - what lct mrc costs, in parts, and how close SHARDS comes:
 * builds the key reference stream of a trace with the library (timed),
 * computes the exact LRU curve and a sampled one (each timed), and prints
 * the mean absolute error of the sampled hit ratio at the capacities lct
 * mrc prints (1, 2, 3, 4, 6, 8, ... x sqrt 2) and at 100 evenly spaced
 * capacities up to the largest stack distance.
 *
 *     bench/mrc-bench TRACE.lct [RATE]     (RATE default 0.01)
 */
#include <lct.h>

#include "bench_refs.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
    if (argc < 2 || argc > 3) {
        fprintf(stderr, "usage: %s TRACE.lct [RATE]\n", argv[0]);
        return 2;
    }
    double rate = argc == 3 ? atof(argv[2]) : 0.01;
    double t0 = now();
    lct_refs *refs = bench_references(argv[1]);
    double t1 = now();
    lct_mrc *exact, *sampled;
    if (lct_mrc_compute(refs, 1, &exact, NULL) != LCT_OK)
        return 1;
    double t2 = now();
    if (lct_mrc_compute(refs, rate, &sampled, NULL) != LCT_OK)
        return 1;
    double t3 = now();
    double log_err = 0, even_err = 0;
    int log_n = 0;
    uint64_t top = lct_mrc_max_distance(exact) + 1;
    for (double k = ceil(1 / rate); k < 2.0 * (double)top;
         k *= M_SQRT2, log_n++) {
        uint64_t c = (uint64_t)llround(k);
        log_err += fabs(lct_mrc_hit_ratio(exact, c) -
                        lct_mrc_hit_ratio(sampled, c));
    }
    for (int i = 1; i <= 100; i++) {
        uint64_t c = top * (uint64_t)i / 100;
        even_err += fabs(lct_mrc_hit_ratio(exact, c) -
                         lct_mrc_hit_ratio(sampled, c));
    }
    lct_mrc_totals t;
    lct_mrc_totals_get(exact, &t);
    printf("references      %llu (%llu reads, %llu writes, %llu keys)\n",
           (unsigned long long)lct_refs_count(refs),
           (unsigned long long)t.reads, (unsigned long long)t.writes,
           (unsigned long long)t.distinct_keys);
    printf("read the trace  %.3f s (one thread)\n", t1 - t0);
    printf("exact curve     %.3f s\n", t2 - t1);
    printf("sampled %-7g %.3f s  (%.1fx faster than exact)\n", rate, t3 - t2,
           (t2 - t1) / (t3 - t2));
    printf("mean abs error  %.4f at %d log-spaced capacities (lct mrc's), "
           "%.4f at 100 evenly spaced up to %llu keys\n",
           log_err / log_n, log_n, even_err / 100, (unsigned long long)top);
    lct_mrc_free(exact);
    lct_mrc_free(sampled);
    lct_refs_free(refs);
    return 0;
}
