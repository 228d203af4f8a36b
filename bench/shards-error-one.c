/*
 * shards-error-one.c - how far SHARDS curves land from the exact LRU curve,
 * estimator by estimator: the mean absolute error of the hit ratio at the
 * capacities lct mrc prints for a sample (ceil(1/R), then x sqrt 2 up to
 * past the exact curve's largest distance), for
 *   raw      one sample of the unsalted key id (seed 0: before seeds),
 *   single   one salted sample: the mean of the errors of seeds 1 to 9
 *            taken one at a time (what one run can expect),
 *   mean5    the mean curve of seeds 1 to 5 (lct mrc --samples 5),
 *   mean9    the mean curve of seeds 1 to 9 (lct mrc --samples 9),
 *   median9  the median curve of seeds 1 to 9 (tried, not shipped).
 * One line per rate: RATE then the five errors.  bench/shards-error runs
 * it over generated traces and prints the figures issue 19 asks for.
 *
 *     bench/shards-error-one TRACE.lct RATE...
 */
#include <lct.h>

#include "bench_refs.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_K 9

static lct_mrc *curve(const lct_refs *refs, double rate, uint64_t seed)
{
    lct_mrc_options o = {.sample_rate = rate, .seed = seed};
    lct_mrc *m;
    if (lct_mrc_compute_with(refs, &o, &m, NULL) != LCT_OK)
        exit(1);
    return m;
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The errors of the estimators at capacity c, against truth. */
static void errors(lct_mrc *raw, lct_mrc **salted, uint64_t c, double truth,
                   double out[5])
{
    double v[MAX_K], sum = 0, single = 0, five = 0;
    for (int s = 0; s < MAX_K; s++) {
        sum += v[s] = lct_mrc_hit_ratio(salted[s], c);
        single += fabs(v[s] - truth);
        if (s == 4)
            five = sum;
    }
    out[0] = fabs(lct_mrc_hit_ratio(raw, c) - truth);
    out[1] = single / MAX_K;
    out[2] = fabs(five / 5 - truth);
    out[3] = fabs(sum / MAX_K - truth);
    qsort(v, MAX_K, sizeof *v, by_value);
    out[4] = fabs(v[MAX_K / 2] - truth);
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: %s TRACE.lct RATE...\n", argv[0]);
        return 2;
    }
    lct_refs *refs = bench_references(argv[1]);
    lct_mrc *exact = curve(refs, 1, 0);
    uint64_t top = lct_mrc_max_distance(exact) + 1;
    for (int a = 2; a < argc; a++) {
        double rate = atof(argv[a]);
        lct_mrc *raw = curve(refs, rate, 0), *salted[MAX_K];
        for (int s = 0; s < MAX_K; s++)
            salted[s] = curve(refs, rate, (uint64_t)s + 1);
        double err[5] = {0};
        int n = 0;
        uint64_t last = 0;
        for (double k = ceil(1 / rate); k < 2.0 * (double)top; k *= M_SQRT2) {
            uint64_t c = (uint64_t)llround(k);
            if (c == last)
                continue;
            last = c;
            double e[5];
            errors(raw, salted, c, lct_mrc_hit_ratio(exact, c), e);
            for (int i = 0; i < 5; i++)
                err[i] += e[i];
            n++;
        }
        printf("%g", rate);
        for (int i = 0; i < 5; i++)
            printf(" %.4f", n ? err[i] / n : 0);
        printf("\n");
        lct_mrc_free(raw);
        for (int s = 0; s < MAX_K; s++)
            lct_mrc_free(salted[s]);
    }
    lct_mrc_free(exact);
    lct_refs_free(refs);
    return 0;
}
