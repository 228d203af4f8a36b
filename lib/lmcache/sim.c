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
 * nothing grows with the references: it is fed a call at a time
 * (lct_sim_new/_add/_end_call/_finish), an L1 in front when asked.
 *
 * Long because the simulation's state (the LRU lists, the depth tree,
 * the histograms, the call under way, the L1) is what every function
 * here works on; split, the parts would call each other.
 */
#include "base/error_internal.h"
#include "lmcache/refs_internal.h"
#include "lmcache/lru_internal.h"
#include "base/u64map_internal.h"

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
    uint64_t index, calls_done, stride;
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
static bool depth_room(sim *s)
{
    if (s->pos < s->cap)
        return true;
    if (s->live * 2 >= s->cap) { /* compaction would not free enough */
        uint64_t cap = s->cap < 2048 ? 4096 : 2 * s->cap;
        uint32_t *key_at = reallocarray(s->key_at, cap, sizeof *key_at);
        if (key_at)
            s->key_at = key_at;
        uint32_t *tree = key_at ? reallocarray(s->tree, cap + 1,
                                               sizeof *tree) : NULL;
        if (!tree)
            return false;
        s->tree = tree;
        s->cap = cap;
    }
    depth_compact(s);
    return true;
}

static uint64_t depth_touch(sim *s, uint32_t k)
{
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

/* The cumulative series with the number of calls unknown ahead: a point
 * every `stride` calls, and when the points run out, every other one
 * dropped and the stride doubled, so they stay evenly spaced. */
static void series_point(sim *s, double seconds)
{
    lct_sim_report *r = s->r;
    if (s->calls_done % s->stride)
        return;
    if (r->nseries == s->o->series_points) {
        size_t kept = 0;
        for (size_t i = 1; i < r->nseries; i += 2)
            r->series[kept++] = r->series[i];
        r->nseries = kept;
        s->stride *= 2;
        if (s->calls_done % s->stride)
            return;
    }
    r->series[r->nseries++] = (lct_sim_point){
        s->calls_done, seconds,
        r->positions ? (double)r->positions_hit / (double)r->positions : 0};
}

/* The cumulative rate after 10, 25, 50, 75 and 100% of the calls: at the
 * last point of the series at or before each (the last point is the
 * whole run's). */
static void cumulative(sim *s, double seconds)
{
    lct_sim_report *r = s->r;
    if (!r->nseries || r->series[r->nseries - 1].calls != s->calls_done) {
        if (r->nseries == s->o->series_points)
            r->nseries--; /* the end replaces the last sampled point */
        r->series[r->nseries++] = (lct_sim_point){
            s->calls_done, seconds,
            r->positions ? (double)r->positions_hit / (double)r->positions
                         : 0};
    }
    static const double at[] = {0.10, 0.25, 0.50, 0.75, 1.00};
    for (size_t i = 0; i < 5; i++) {
        uint64_t want = (uint64_t)fmax(1, floor(at[i] * (double)s->calls_done));
        size_t j = 0;
        while (j + 1 < r->nseries && r->series[j + 1].calls <= want)
            j++;
        r->cumulative_calls[i] = r->series[j].calls;
        r->cumulative[i] = r->series[j].hit_ratio;
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

static bool step(sim *s, const lct__ref *ref, uint32_t k, uint64_t bytes)
{
    if (!depth_room(s))
        return false;
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
    return true;
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

/* MARK: running it, a reference at a time */

/* A call's keys are held until the call ends: its chunk positions need
 * the number of its kv ranks, which its last key may change. */
typedef struct pending {
    uint64_t id, bytes;
    double t;
    bool read;
} pending;

struct lct_sim {
    lct_sim_options o;
    lct_sim_report r;
    sim s;              /* the cache simulated (L2 behind an L1) */
    lct__u64map ids;    /* obj_id -> key number + 1 */
    size_t nkeys, keycap;
    pending *call;
    size_t ncall, callcap;
    lct__lru l1;        /* with o.l1_capacity: the L1 in front */
    bool l1_read, l1_leading, l1_first;
    double seconds;
};

static bool sim_alloc(sim *s)
{
    s->rate_bins = calloc(RATE_BINS, sizeof *s->rate_bins);
    hist *hs[] = {&s->leading_h, &s->call_h, &s->span_h, &s->depth_h};
    bool ok = s->rate_bins != NULL;
    for (size_t i = 0; i < 4; i++)
        ok = ok && (hs[i]->n = calloc(HIST_SLOTS, sizeof *hs[i]->n));
    s->stride = 1;
    s->cache.head = s->cache.tail = LCT__LRU_NIL;
    s->cache.capacity = s->o->capacity;
    s->cache.in_bytes = s->o->in_bytes;
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

/* Room for one more key number in every per-key array. */
static bool grow_keys(lct_sim *x)
{
    size_t had = x->keycap, cap = had ? 2 * had : 1024;
    sim *s = &x->s;
    if (!lct__grow_zeroed(&s->last, had, cap, sizeof *s->last) ||
        !lct__grow_zeroed(&s->hits, had, cap, sizeof *s->hits) ||
        !lct__grow_zeroed(&s->seen, had, cap, sizeof *s->seen) ||
        !lct__lru_grow(&s->cache, had, cap) ||
        (x->o.l1_capacity && !lct__lru_grow(&x->l1, had, cap)))
        return false;
    x->keycap = cap;
    return true;
}

/* The key number of obj_id, numbered on first sight; UINT32_MAX when
 * memory ran out. */
static uint32_t key_of(lct_sim *x, uint64_t id)
{
    bool added;
    lct__u64map_entry *e = lct__u64map_get(&x->ids, id, &added);
    if (!e)
        return UINT32_MAX;
    if (!added)
        return (uint32_t)(e->value - 1);
    if ((x->nkeys == x->keycap && !grow_keys(x)) || x->nkeys >= UINT32_MAX - 1) {
        lct__u64map_remove(&x->ids, e);
        return UINT32_MAX;
    }
    e->value = ++x->nkeys;
    return (uint32_t)(x->nkeys - 1);
}

/* One reference with its flags: through the L1 when there is one (its
 * leading run stays there; the rest of a lookup, and every store, go on
 * as lct_refs_behind_l1 sends them), into the cache simulated. */
static bool push(lct_sim *x, uint64_t id, uint64_t bytes, double t,
                 bool read, uint32_t flags)
{
    uint32_t k = key_of(x, id);
    if (k == UINT32_MAX)
        return false;
    lct__ref ref = {id, t > 0 ? (uint32_t)fmin(t, 4294967295.0) : 0,
                    flags | (read ? LCT__REF_READ : 0)};
    x->seconds = t;
    x->r.references++;
    if (!x->o.l1_capacity)
        return step(&x->s, &ref, k, bytes);
    lct_l1_stats *st = &x->r.l1;
    if (flags & LCT__REF_CALL) {
        x->l1_read = read;
        x->l1_leading = x->l1_first = true;
    }
    bool position = (flags & LCT__REF_POSITION) != 0, ok = true;
    if (x->l1_read && read) {
        st->keys++;
        st->positions += position;
        x->l1_leading = x->l1_leading && x->l1.in[k];
        if (x->l1_leading) {
            st->keys_hit++;
            st->positions_hit += position;
        } else { /* from L1's first miss on, the lookup asks L2 */
            st->keys_to_l2++;
            ref.size = (ref.size & ~LCT__REF_CALL) |
                       (x->l1_first ? LCT__REF_CALL : 0);
            x->l1_first = false;
            ok = step(&x->s, &ref, k, bytes);
        }
    } else if (!read) { /* stores are written through */
        st->writes++;
        ok = step(&x->s, &ref, k, bytes);
    }
    lct__lru_touch(&x->l1, k, bytes);
    return ok;
}

lct_status lct_sim_new(const lct_sim_options *opts, lct_sim **out,
                       lct_error *err)
{
    if (out)
        *out = NULL;
    if (!opts || !out || !opts->capacity)
        return lct__fail(err, LCT_ERR_INVALID, EINVAL, 0,
                         "lct_sim_new: options with a capacity above 0");
    lct_sim *x = calloc(1, sizeof *x);
    if (!x)
        return lct__fail(err, LCT_ERR_NOMEM, ENOMEM, 0, "out of memory");
    x->o = *opts;
    if (!x->o.series_points)
        x->o.series_points = 100;
    x->s.o = &x->o;
    x->s.r = &x->r;
    x->r.capacity = x->o.capacity;
    x->r.in_bytes = x->o.in_bytes;
    x->r.l1.capacity = x->o.l1_capacity;
    x->r.l1.in_bytes = x->o.l1_in_bytes;
    x->l1 = (lct__lru){.head = LCT__LRU_NIL, .tail = LCT__LRU_NIL,
                       .capacity = x->o.l1_capacity,
                       .in_bytes = x->o.l1_in_bytes};
    if (!sim_alloc(&x->s) ||
        !(x->r.series = calloc(x->o.series_points + 1,
                               sizeof *x->r.series))) {
        lct_sim_free(x);
        return lct__fail(err, LCT_ERR_NOMEM, ENOMEM, 0, "out of memory");
    }
    *out = x;
    return LCT_OK;
}

lct_status lct_sim_add(lct_sim *x, uint64_t obj_id, uint64_t bytes,
                       double t_mono, bool is_read)
{
    if (!x)
        return LCT_ERR_INVALID;
    if (x->ncall == x->callcap) {
        size_t cap = x->callcap ? 2 * x->callcap : 64;
        if (!lct__grow_zeroed(&x->call, x->callcap, cap, sizeof *x->call))
            return LCT_ERR_NOMEM;
        x->callcap = cap;
    }
    x->call[x->ncall++] = (pending){obj_id, bytes, t_mono, is_read};
    return LCT_OK;
}

lct_status lct_sim_end_call(lct_sim *x, unsigned keys_per_position)
{
    if (!x || !keys_per_position)
        return LCT_ERR_INVALID;
    for (size_t i = 0; i < x->ncall; i++) {
        const pending *p = &x->call[i];
        bool last = (i + 1) % keys_per_position == 0 || i + 1 == x->ncall;
        uint32_t flags = (i == 0 ? LCT__REF_CALL : 0) |
                         (last ? LCT__REF_POSITION : 0);
        if (!push(x, p->id, p->bytes, p->t, p->read, flags))
            return LCT_ERR_NOMEM;
    }
    x->ncall = 0;
    return LCT_OK;
}

lct_status lct_sim_finish(lct_sim *x, lct_sim_report *out, lct_error *err)
{
    if (out)
        memset(out, 0, sizeof *out);
    if (!x || !out)
        return lct__fail(err, LCT_ERR_INVALID, EINVAL, 0,
                         "lct_sim_finish: a simulation and a report");
    if (x->ncall && lct_sim_end_call(x, 1) != LCT_OK)
        return lct__fail(err, LCT_ERR_NOMEM, ENOMEM, 0, "out of memory");
    call_end(&x->s, x->seconds);
    cumulative(&x->s, x->seconds);
    finish(&x->s, x->nkeys);
    x->r.has_l1 = x->o.l1_capacity != 0;
    x->r.l1.evictions = x->l1.evictions;
    x->r.l1.bypassed = x->l1.bypassed;
    *out = x->r;
    x->r.series = NULL; /* the report's now */
    return LCT_OK;
}

void lct_sim_free(lct_sim *x)
{
    if (!x)
        return;
    sim_free(&x->s);
    lct__lru_free(&x->l1);
    lct__u64map_free(&x->ids);
    free(x->call);
    free(x->r.series);
    free(x);
}

lct_status lct_sim_run(const lct_refs *refs, const lct_sim_options *opts,
                       lct_sim_report *out, lct_error *err)
{
    if (out)
        memset(out, 0, sizeof *out);
    if (!refs || refs->threshold)
        return lct__fail(err, LCT_ERR_INVALID, EINVAL, 0,
                         "lct_sim_run: an exact stream (a sampled one has "
                         "only some keys of a call)");
    lct_sim *x;
    lct_status rc = lct_sim_new(opts, &x, err);
    if (rc != LCT_OK)
        return rc;
    bool ok = true;
    for (LCT__EACH_REF(refs, c)) {
        const lct__ref *r = c.ref;
        if (!(ok = push(x, r->obj_id, lct__cursor_bytes(&c), r->seconds,
                        lct__ref_is_read(r),
                        r->size & (LCT__REF_CALL | LCT__REF_POSITION))))
            break;
    }
    rc = ok ? lct_sim_finish(x, out, err)
            : lct__fail(err, LCT_ERR_NOMEM, ENOMEM, 0,
                        "out of memory simulating the cache");
    lct_sim_free(x);
    return rc;
}

void lct_sim_report_free(lct_sim_report *r)
{
    if (!r)
        return;
    free(r->series);
    r->series = NULL;
    r->nseries = 0;
}
