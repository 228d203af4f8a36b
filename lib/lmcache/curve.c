/*
 * curve.c - the points of a miss-ratio curve as `lct mrc` shows them:
 * log-spaced capacities, at each the mean hit ratio over one or several
 * SHARDS samples, its band, and the byte hit ratio when key sizes differ.
 * The tool, its SVG chart and the Python module all draw these points.
 */
#include "base/error_internal.h"
#include "lct_cache.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The mean of v[0..n), and its min and max.  The mean, not the median:
 * on skewed traces most samples miss the same hot keys, so their median
 * shares their bias (bench/shards-error: median of 9 samples 0.042 at
 * rate 0.01, mean of 9 0.017).  Added smallest first, so every caller
 * gets the same bits. */
static double mean(double *v, unsigned n, double *lo, double *hi)
{
    double sum = 0;
    qsort(v, n, sizeof *v, by_value);
    for (unsigned i = 0; i < n; i++)
        sum += v[i];
    *lo = v[0];
    *hi = v[n - 1];
    return sum / n;
}

/* The ratios of every sample at one capacity, reduced to their mean (and
 * band, when there are several samples). */
static void at_capacity(lct_mrc *const *ms, unsigned k, lct_mrc_curve *c,
                        size_t i)
{
    double v[LCT_MRC_CURVE_MAX_SAMPLES], lo, hi;
    for (unsigned s = 0; s < k; s++)
        v[s] = lct_mrc_hit_ratio(ms[s], c->keys[i]);
    c->hit[i] = mean(v, k, &lo, &hi);
    if (c->hit_min) {
        c->hit_min[i] = lo;
        c->hit_max[i] = hi;
    }
    if (!c->byte_hit)
        return;
    uint64_t bytes = (uint64_t)llround((double)c->keys[i] * c->mean_bytes);
    for (unsigned s = 0; s < k; s++)
        v[s] = lct_mrc_byte_hit_ratio(ms[s], bytes);
    c->byte_hit[i] = mean(v, k, &lo, &hi);
    if (c->token_byte_hit) /* the prefix rule takes no samples: k is 1 */
        c->token_byte_hit[i] = lct_mrc_position_byte_hit_ratio(ms[0], bytes);
}

/* Capacities 1, 2, 3, 4, 6, 8, 11, ... (x sqrt 2) up to past every
 * finite distance of every sample, where the curve has reached its top;
 * under sampling at rate R from 1/R keys, the least it resolves. */
static bool capacities(lct_mrc *const *ms, unsigned k, lct_mrc_curve *c,
                       const lct_mrc_totals *t)
{
    uint64_t top = 0;
    for (unsigned s = 0; s < k; s++)
        if (lct_mrc_max_distance(ms[s]) + 1 > top)
            top = lct_mrc_max_distance(ms[s]) + 1;
    size_t cap = 8;
    c->keys = malloc(cap * sizeof *c->keys);
    double first = t->sample_rate < 1 ? ceil(1 / t->sample_rate) : 1;
    c->lo = first;
    for (double x = first; c->keys && t->reads; x *= M_SQRT2) {
        uint64_t keys = (uint64_t)llround(x);
        if (c->n && keys <= c->keys[c->n - 1])
            continue;
        if (c->n == cap) {
            uint64_t *grown = reallocarray(c->keys, cap *= 2, sizeof *grown);
            if (!grown)
                return false;
            c->keys = grown;
        }
        c->keys[c->n++] = keys;
        if (keys >= top)
            break;
    }
    return c->keys != NULL;
}

lct_status lct_mrc_curve_make(lct_mrc *const *samples, unsigned k,
                              lct_mrc_curve *out, lct_error *err)
{
    memset(out, 0, sizeof *out);
    if (!samples || k < 1 || k > LCT_MRC_CURVE_MAX_SAMPLES || !samples[0])
        return lct__fail(err, LCT_ERR_INVALID, EINVAL, 0,
                         "lct_mrc_curve_make: invalid argument");
    lct_mrc_totals t;
    lct_mrc_totals_get(samples[0], &t);
    lct_mrc_curve *c = out;
    bool ok = capacities(samples, k, c, &t);
    c->hit = ok ? calloc(c->n + 1, sizeof *c->hit) : NULL;
    c->mean_bytes = t.mean_key_bytes;
    /* Keys of one size make the byte curve the key curve: given only
     * when sizes differ. */
    bool vary = t.min_key_bytes != t.max_key_bytes || t.bytes_unknown;
    if (ok && c->mean_bytes > 0 && vary)
        c->byte_hit = calloc(c->n + 1, sizeof *c->byte_hit);
    if (c->byte_hit && t.prefix &&
        !(c->token_byte_hit = calloc(c->n + 1, sizeof *c->token_byte_hit)))
        ok = false;
    if (ok && k > 1) {
        c->hit_min = calloc(c->n + 1, sizeof *c->hit_min);
        c->hit_max = calloc(c->n + 1, sizeof *c->hit_max);
    }
    if (!ok || !c->hit || (c->mean_bytes > 0 && vary && !c->byte_hit) ||
        (k > 1 && (!c->hit_min || !c->hit_max))) {
        lct_mrc_curve_free(c);
        return lct__fail(err, LCT_ERR_NOMEM, ENOMEM, 0,
                         "lct_mrc_curve_make: out of memory");
    }
    for (size_t i = 0; i < c->n; i++)
        at_capacity(samples, k, c, i);
    c->hi = c->n && (double)c->keys[c->n - 1] > 1
                ? (double)c->keys[c->n - 1] : 10;
    return LCT_OK;
}

void lct_mrc_curve_free(lct_mrc_curve *c)
{
    if (!c)
        return;
    free(c->keys);
    free(c->hit);
    free(c->byte_hit);
    free(c->token_byte_hit);
    free(c->hit_min);
    free(c->hit_max);
    memset(c, 0, sizeof *c);
}
