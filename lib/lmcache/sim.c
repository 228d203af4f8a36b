/*
 * sim.c - LMCache's cache simulator at one capacity (lct_sim_run): an
 * LRU cache of that many keys or bytes replayed over a key reference
 * stream whose calls are marked (lct_refs_end_call), each lookup counted
 * by the prefix rule, and the statistics LMCache's `cache-simulator`
 * reports: token (chunk position) hit rate, per-call hit rates, leading
 * hit lengths, reuse per chunk, the cumulative hit rate over the calls,
 * evictions, the span from a chunk's last use to its hit, and the LRU
 * position at a hit.  Memory is per distinct key (the list, the depth
 * tree over live positions, the counters) and fixed-size histograms;
 * nothing grows with the references.
 */
#include "base/error_internal.h"
#include "lmcache/refs_internal.h"
#include "lmcache/lru_internal.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define RATE_BINS 10001 /* per-call hit ratios to 0.01% */

/* MARK: histograms exact below 64, within 1/64 above */

#define SUB 64
#define HIST_SLOTS (SUB + 58 * SUB)

typedef struct hist {
    uint64_t *n; /* HIST_SLOTS counts */
    uint64_t count, max;
    double sum;
} hist;

static size_t slot_of(uint64_t v)
{
    if (v < SUB)
        return (size_t)v;
    int octave = 63 - __builtin_clzll(v); /* >= 6 */
    uint64_t sub = (v >> (octave - 6)) & (SUB - 1);
    return (size_t)SUB + (size_t)(octave - 6) * SUB + (size_t)sub;
}

static uint64_t slot_value(size_t s) /* the least value of slot s */
{
    if (s < SUB)
        return s;
    size_t octave = (s - SUB) / SUB + 6, sub = (s - SUB) % SUB;
    return ((uint64_t)(SUB + sub)) << (octave - 6);
}

static void hist_add(hist *h, uint64_t v)
{
    h->n[slot_of(v)]++;
    h->count++;
    h->sum += (double)v;
    if (v > h->max)
        h->max = v;
}

/* LMCache's percentile: the value at index min(floor(p n), n - 1) of the
 * sorted values (its _percentiles). */
static uint64_t hist_rank(const hist *h, double p)
{
    if (!h->count)
        return 0;
    uint64_t idx = (uint64_t)(p * (double)h->count);
    if (idx > h->count - 1)
        idx = h->count - 1;
    uint64_t seen = 0;
    for (size_t s = 0; s < HIST_SLOTS; s++) {
        seen += h->n[s];
        if (seen > idx)
            return slot_value(s) > h->max ? h->max : slot_value(s);
    }
    return h->max;
}

static void hist_report(const hist *h, lct_sim_dist *d)
{
    static const double ps[] = {0.25, 0.50, 0.75, 0.90, 0.99};
    memset(d, 0, sizeof *d);
    d->count = h->count;
    d->max = h->max;
    d->mean = h->count ? h->sum / (double)h->count : 0;
    uint64_t *out[] = {&d->p25, &d->p50, &d->p75, &d->p90, &d->p99};
    for (size_t i = 0; i < 5; i++)
        *out[i] = hist_rank(h, ps[i]);
    for (size_t s = 0; s < HIST_SLOTS; s++) {
        uint64_t v = slot_value(s);
        d->bins[v ? 64 - __builtin_clzll(v) : 0] += h->n[s];
    }
}

/* MARK: the LRU cache and the depth of a key in it */

typedef struct sim {
    const lct_sim_options *o;
    lct_sim_report *r;
    lct__lru cache;
    /* stack depth (the LRU position at a reference): a Fenwick tree of
     * live positions, compacted when full (as mrc.c's) */
    uint32_t *last, *key_at, *tree;
    uint64_t cap, pos, live;
    /* per key: hits in a leading run, and its last reference */
    uint32_t *hits;
    uint64_t *seen;
    /* the call under way */
    bool in_call, call_read, leading;
    uint64_t call_keys, call_positions, run_positions;
    uint64_t index, calls_total, calls_done, next_point;
    hist leading_h, call_h, span_h, depth_h;
    uint64_t *rate_bins;
} sim;

static void tree_add(uint32_t *t, uint64_t n, uint64_t pos, uint32_t d)
{
    for (uint64_t i = pos + 1; i <= n; i += i & (~i + 1))
        t[i] += d;
}

static uint64_t tree_prefix(const uint32_t *t, uint64_t pos)
{
    uint64_t sum = 0;
    for (uint64_t i = pos + 1; i > 0; i -= i & (~i + 1))
        sum += t[i];
    return sum;
}

static void depth_compact(sim *s)
{
    uint64_t live = 0;
    for (uint64_t p = 0; p < s->pos; p++) {
        uint32_t k = s->key_at[p];
        if (s->last[k] == p + 1) {
            s->key_at[live] = k;
            s->last[k] = (uint32_t)++live;
        }
    }
    s->pos = live;
    memset(s->tree, 0, (s->cap + 1) * sizeof *s->tree);
    for (uint64_t i = 1; i <= s->cap; i++) {
        s->tree[i] += i <= live;
        uint64_t up = i + (i & (~i + 1));
        if (up <= s->cap)
            s->tree[up] += s->tree[i];
    }
}

/* The number of distinct keys referenced since k's last reference (its
 * LRU position, 0 the most recent; UINT64_MAX: never seen), then k is
 * the most recent. */
static uint64_t depth_touch(sim *s, uint32_t k)
{
    if (s->pos == s->cap)
        depth_compact(s);
    uint64_t d = UINT64_MAX;
    if (s->last[k]) {
        uint64_t at = s->last[k] - 1;
        d = s->live - tree_prefix(s->tree, at);
        tree_add(s->tree, s->cap, at, UINT32_MAX);
    } else {
        s->live++;
    }
    tree_add(s->tree, s->cap, s->pos, 1);
    s->key_at[s->pos] = k;
    s->last[k] = (uint32_t)++s->pos;
    return d;
}

/* MARK: calls and their statistics */

static void series_point(sim *s, double seconds)
{
    lct_sim_report *r = s->r;
    double ratio = r->positions ? (double)r->positions_hit /
                                      (double)r->positions : 0;
    static const double at[] = {0.10, 0.25, 0.50, 0.75, 1.00};
    for (size_t i = 0; i < 5; i++) {
        uint64_t want = (uint64_t)fmax(1, floor(at[i] * (double)s->calls_total));
        if (s->calls_done == want) {
            r->cumulative[i] = ratio;
            r->cumulative_calls[i] = want;
        }
    }
    if (s->calls_done >= s->next_point && r->nseries < s->o->series_points) {
        r->series[r->nseries++] = (lct_sim_point){s->calls_done, seconds,
                                                  ratio};
        s->next_point = s->calls_done +
                        (s->calls_total + s->o->series_points - 1) /
                            s->o->series_points;
    }
}

static void call_end(sim *s, double seconds)
{
    lct_sim_report *r = s->r;
    if (!s->in_call || !s->call_read || !s->call_keys)
        return;
    s->in_call = false;
    r->calls++;
    r->positions += s->call_positions;
    r->positions_hit += s->run_positions;
    double rate = s->call_positions ? (double)s->run_positions /
                                          (double)s->call_positions : 0;
    r->calls_no_hit += s->run_positions == 0;
    r->calls_all_hit += s->run_positions == s->call_positions;
    s->rate_bins[(size_t)lround(rate * (RATE_BINS - 1))]++;
    r->call_hit_bins[rate >= 1 ? 20 : (size_t)(rate * 20)]++;
    hist_add(&s->leading_h, s->run_positions);
    hist_add(&s->call_h, s->call_positions);
    s->calls_done++;
    series_point(s, seconds);
}

static void call_start(sim *s, const lct__ref *ref)
{
    s->in_call = true;
    s->call_read = lct__ref_is_read(ref);
    s->leading = true;
    s->call_keys = s->call_positions = s->run_positions = 0;
}

static void step(sim *s, const lct__ref *ref, uint32_t k, uint64_t bytes)
{
    if (ref->size & LCT__REF_CALL) {
        call_end(s, ref->seconds);
        call_start(s, ref);
    }
    bool hit = s->cache.in[k];
    uint64_t depth = depth_touch(s, k);
    if (s->in_call && s->call_read && lct__ref_is_read(ref)) {
        s->call_keys++;
        s->r->keys++;
        bool prefix_hit = s->leading && hit;
        s->leading = prefix_hit;
        if (prefix_hit) {
            s->r->keys_hit++;
            s->hits[k]++;
            hist_add(&s->span_h, s->index - s->seen[k]);
            hist_add(&s->depth_h, depth);
        }
        if (ref->size & LCT__REF_POSITION) {
            s->call_positions++;
            s->run_positions += prefix_hit;
        }
    }
    s->seen[k] = s->index++;
    lct__lru_touch(&s->cache, k, bytes);
}

/* MARK: running it */

static bool sim_alloc(sim *s, size_t nkeys, uint64_t n)
{
    size_t m = nkeys ? nkeys : 1;
    s->cap = 2 * (uint64_t)nkeys > n ? n : 2 * (uint64_t)nkeys;
    bool cache = lct__lru_alloc(&s->cache, nkeys, s->o->capacity, s->o->in_bytes);
    s->last = calloc(m, sizeof *s->last);
    s->hits = calloc(m, sizeof *s->hits);
    s->seen = calloc(m, sizeof *s->seen);
    s->key_at = reallocarray(NULL, s->cap ? s->cap : 1, sizeof *s->key_at);
    s->tree = calloc(s->cap + 1, sizeof *s->tree);
    s->rate_bins = calloc(RATE_BINS, sizeof *s->rate_bins);
    hist *hs[] = {&s->leading_h, &s->call_h, &s->span_h, &s->depth_h};
    bool ok = cache && s->last && s->hits && s->seen && s->key_at &&
              s->tree && s->rate_bins;
    for (size_t i = 0; i < 4; i++)
        ok = ok && (hs[i]->n = calloc(HIST_SLOTS, sizeof *hs[i]->n));
    return ok;
}

static void sim_free(sim *s)
{
    lct__lru_free(&s->cache);
    free(s->last), free(s->hits), free(s->seen), free(s->key_at);
    free(s->tree), free(s->rate_bins);
    free(s->leading_h.n), free(s->call_h.n), free(s->span_h.n);
    free(s->depth_h.n);
}

/* The calls' hit ratios at LMCache's ranks, from the 0.01% bins. */
static void rate_report(const sim *s, lct_sim_report *r)
{
    static const double ps[] = {0.25, 0.50, 0.75, 0.90, 0.99};
    double sum = 0;
    for (size_t b = 0; b < RATE_BINS; b++)
        sum += (double)s->rate_bins[b] * (double)b / (RATE_BINS - 1);
    r->call_hit_mean = r->calls ? sum / (double)r->calls : 0;
    for (size_t i = 0; i < 5 && r->calls; i++) {
        uint64_t idx = (uint64_t)(ps[i] * (double)r->calls), seen = 0;
        if (idx > r->calls - 1)
            idx = r->calls - 1;
        for (size_t b = 0; b < RATE_BINS; b++) {
            seen += s->rate_bins[b];
            if (seen > idx) {
                r->call_hit_p[i] = (double)b / (RATE_BINS - 1);
                break;
            }
        }
    }
}

static void finish(sim *s, size_t nkeys)
{
    lct_sim_report *r = s->r;
    rate_report(s, r);
    hist_report(&s->leading_h, &r->leading);
    hist_report(&s->call_h, &r->call_positions);
    hist_report(&s->span_h, &r->span);
    hist_report(&s->depth_h, &r->lru_position);
    hist reuse = {s->call_h.n, 0, 0, 0}; /* the calls' histogram, reused */
    memset(reuse.n, 0, HIST_SLOTS * sizeof *reuse.n);
    uint64_t bytes = 0;
    for (size_t k = 0; k < nkeys; k++) {
        if (s->hits[k])
            hist_add(&reuse, s->hits[k]);
        if (s->cache.in[k]) {
            r->occupancy_keys++;
            r->occupancy_bytes += s->cache.size[k];
        }
        bytes += s->cache.size[k];
    }
    hist_report(&reuse, &r->reuse);
    r->evictions = s->cache.evictions;
    r->bypassed = s->cache.bypassed;
    r->distinct_keys = nkeys;
    r->mean_key_bytes = nkeys ? (double)bytes / (double)nkeys : 0;
}

/* Read calls in the stream, for the series' points. */
static uint64_t read_calls(const lct_refs *refs)
{
    uint64_t n = 0;
    for (LCT__EACH_REF(refs, c))
        n += (c.ref->size & LCT__REF_CALL) && lct__ref_is_read(c.ref);
    return n;
}

lct_status lct_sim_run(const lct_refs *refs, const lct_sim_options *opts,
                       lct_sim_report *out, lct_error *err)
{
    if (out)
        memset(out, 0, sizeof *out);
    if (!refs || !opts || !out || !opts->capacity)
        return lct__fail(err, LCT_ERR_INVALID, EINVAL, 0,
                         "lct_sim_run: a stream, options with a capacity "
                         "above 0, and a report");
    if (refs->threshold)
        return lct__fail(err, LCT_ERR_INVALID, EINVAL, 0,
                         "lct_sim_run: a sampled stream has only some keys "
                         "of a call");
    lct_sim_options o = *opts;
    if (!o.series_points)
        o.series_points = 100;
    sim s = {.o = &o, .r = out};
    out->capacity = o.capacity;
    out->in_bytes = o.in_bytes;
    out->references = refs->n;
    s.calls_total = read_calls(refs);
    uint32_t *key = reallocarray(NULL, refs->n ? refs->n : 1, sizeof *key);
    size_t nkeys = 0;
    bool ok = key && lct__refs_number(refs, key, &nkeys) &&
              sim_alloc(&s, nkeys, refs->n) &&
              (out->series = calloc(o.series_points, sizeof *out->series));
    double seconds = 0;
    for (LCT__EACH_REF(refs, c)) {
        if (!ok)
            break;
        seconds = c.ref->seconds;
        step(&s, c.ref, key[c.i], lct__cursor_bytes(&c));
    }
    if (ok) {
        call_end(&s, seconds);
        finish(&s, nkeys);
    }
    sim_free(&s);
    free(key);
    if (!ok) {
        lct_sim_report_free(out);
        return lct__fail(err, LCT_ERR_NOMEM, ENOMEM, 0,
                         "out of memory simulating the cache");
    }
    return LCT_OK;
}

void lct_sim_report_free(lct_sim_report *r)
{
    if (!r)
        return;
    free(r->series);
    r->series = NULL;
    r->nseries = 0;
}
