/*
 * sim.c - LMCache's cache simulator at one capacity (lct_sim_run): an
 * LRU cache of that many chunks (a byte capacity held as LMCache holds
 * it, in chunks of the first sized one) replayed over a reference stream
 * whose calls are marked, each lookup counted as simulate() counts it:
 * its leading run of entries the cache holds, measured before the lookup
 * touches the cache; the tokens it logged or its chunks times the chunk
 * size; and the statistics LMCache's `cache-simulator` reports (per-call
 * hit rates, leading hit lengths, reuse, the cumulative rate at its five
 * requests, evictions, spans and LRU positions at hits; their exact
 * distributions in sim_dist.c).  Memory is per distinct entry (the list,
 * the depth tree over live positions, the counters), per distinct value
 * of each statistic and 16 bytes a lookup; it is fed a call at a time
 * (lct_sim_new/_add or _add_key/_end_call/_finish), an L1 in front when
 * asked.
 *
 * Long because the simulation's state (the LRU lists, the depth tree,
 * the distributions, the call under way, the L1) is what every function
 * here works on; split, the parts would call each other.
 */
#include "base/error_internal.h"
#include "lmcache/refs_internal.h"
#include "lmcache/lru_internal.h"
#include "lmcache/policy_internal.h"
#include "base/u64map_internal.h"
#include "lmcache/sim_internal.h"
#include "lct_cache.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* MARK: the LRU cache and the depth of a key in it */

typedef struct sim {
    const lct_sim_options *o;
    lct_sim_report *r;
    lct__lru cache; /* LRU; with another policy its sizes alone */
    lct_policy *policy; /* o->policy when not LRU: keys by number */
    /* the first sized key's bytes (0 until one is seen): with
     * o->in_bytes they turn the capacity into keys */
    uint64_t key_bytes;
    /* stack depth (the LRU position at a reference): a Fenwick tree of
     * live positions, compacted when full (as mrc.c's) */
    uint32_t *last, *key_at, *tree;
    uint64_t cap, pos, live;
    /* per key: hits in a leading run, and its last reference */
    uint32_t *hits;
    uint64_t *seen;
    /* the call under way, held until it ends: LMCache measures a
     * lookup's hits against the cache as it was before the lookup */
    uint32_t *call_key, *call_flags;
    uint64_t *call_bytes;
    uint64_t *call_salt; /* IsolatedLRU's buckets */
    uint64_t salt;       /* the reference being stepped's */
    uint64_t *quota_salt, *quota_limit; /* o->quotas, copied */
    size_t nquotas;
    size_t ncall, callcap;
    double call_seconds;
    uint64_t index, calls_done, stride;
    lct__dist leading_d, call_d, span_d, depth_d;
    /* per lookup: tokens hit and looked up, for the rates' percentiles
     * and the cumulative rate at LMCache's five requests */
    uint64_t (*rates)[2];
    size_t ratecap;
    /* tokens a chunk holds (o->chunk_tokens, at least 1), and the call's
     * own counts when lct_sim_end_call_tokens gave them */
    uint64_t chunk_tokens;
    bool call_tokens_given;
    uint64_t call_chunk_tokens, call_seq_len;
    size_t windowcap;   /* room in r->windows */
    lct__u64map window_at; /* a window's start -> its index + 1 */
    bool nomem;
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
        r->tokens ? (double)r->hit_tokens / (double)r->tokens : 0};
}

/* The last point of the series is the whole run's. */
static void series_end(sim *s, double seconds)
{
    lct_sim_report *r = s->r;
    if (r->nseries && r->series[r->nseries - 1].calls == s->calls_done)
        return;
    if (r->nseries == s->o->series_points)
        r->nseries--; /* the end replaces the last sampled point */
    r->series[r->nseries++] = (lct_sim_point){
        s->calls_done, seconds,
        r->tokens ? (double)r->hit_tokens / (double)r->tokens : 0};
}

/* The cumulative rate after the requests LMCache's Stat 4 names
 * (simulator.py, print_statistics): request int(n f) for f = 10, 25, 50,
 * 75 and 100% of n, counted from 1 (at least the first). */
static void cumulative(sim *s)
{
    lct_sim_report *r = s->r;
    static const double at[] = {0.1, 0.25, 0.5, 0.75, 1.0};
    uint64_t n = s->calls_done, hit = 0, all = 0, i = 0;
    for (size_t p = 0; p < 5 && n; p++) {
        int64_t idx = (int64_t)((double)n * at[p]) - 1;
        uint64_t want = idx < 0 ? 0 : (uint64_t)idx >= n ? n - 1
                                                         : (uint64_t)idx;
        for (; i <= want; i++) {
            hit += s->rates[i][0];
            all += s->rates[i][1];
        }
        r->cumulative_calls[p] = want + 1;
        r->cumulative[p] = all ? (double)hit / (double)all : 0;
    }
}

static bool note_rate(sim *s, uint64_t hit, uint64_t tokens)
{
    if (s->calls_done == s->ratecap) {
        size_t cap = s->ratecap ? 2 * s->ratecap : 1024;
        void *g = reallocarray(s->rates, cap, sizeof *s->rates);
        if (!g)
            return false;
        s->rates = g;
        s->ratecap = cap;
    }
    s->rates[s->calls_done][0] = hit;
    s->rates[s->calls_done][1] = tokens;
    return true;
}

/* The lookup's tokens into its window: one for each window that had a
 * lookup, found by its start (sorted when the report is made), so
 * memory and time follow the lookups, whatever the span of time or the
 * order of t_mono. */
static bool window_add(sim *s, uint64_t tokens, uint64_t hit_tokens)
{
    lct_sim_report *r = s->r;
    uint64_t start = (uint64_t)s->call_seconds / s->o->window_seconds *
                     s->o->window_seconds;
    bool added;
    lct__u64map_entry *e = lct__u64map_get(&s->window_at, start, &added);
    if (!e)
        return false;
    if (added) {
        if (r->nwindows == s->windowcap) {
            size_t cap = s->windowcap ? 2 * s->windowcap : 64;
            void *g = reallocarray(r->windows, cap, sizeof *r->windows);
            if (!g) {
                lct__u64map_remove(&s->window_at, e);
                return false;
            }
            r->windows = g;
            s->windowcap = cap;
        }
        r->windows[r->nwindows++] = (lct_sim_window){.t_start = start};
        e->value = r->nwindows;
    }
    lct_sim_window *w = &r->windows[e->value - 1];
    w->calls++;
    w->tokens += tokens;
    w->hit_tokens += hit_tokens;
    return true;
}

static int by_start(const void *a, const void *b)
{
    uint64_t x = ((const lct_sim_window *)a)->t_start,
             y = ((const lct_sim_window *)b)->t_start;
    return (x > y) - (x < y);
}

/* A lookup counted as simulate() counts one: hit_prefix x chunk_size
 * tokens hit of seq_len (positions x the chunk's tokens when the call
 * gave no seq_len); a lookup with no chunk counts when it has tokens
 * (LMCache skips only one with neither). */
static bool lookup_counted(sim *s, uint64_t keys, uint64_t positions,
                           uint64_t hit)
{
    lct_sim_report *r = s->r;
    bool given = s->call_tokens_given;
    uint64_t per = given ? s->call_chunk_tokens : s->chunk_tokens;
    uint64_t tokens = given ? s->call_seq_len : positions * per;
    uint64_t hit_tokens = hit * per;
    if (!keys && !(given && tokens))
        return true;
    r->calls++;
    r->positions += positions;
    r->positions_hit += hit;
    r->tokens += tokens;
    r->hit_tokens += hit_tokens;
    double rate = tokens ? (double)hit_tokens / (double)tokens : 0;
    r->calls_no_hit += rate == 0;
    r->calls_all_hit += rate == 1;
    r->call_hit_bins[rate >= 1 ? 20 : (size_t)(rate * 20)]++;
    if (!note_rate(s, hit_tokens, tokens) ||
        (s->o->window_seconds && !window_add(s, tokens, hit_tokens)) ||
        !lct__dist_add(&s->leading_d, hit) ||
        !lct__dist_add(&s->call_d, positions))
        return false;
    s->calls_done++;
    series_point(s, s->call_seconds);
    return true;
}

/* The LRU position of key k (0 the most recent), the cache untouched:
 * the distinct keys referenced since its last reference.  It is the
 * rank among the keys held, since a cache of keys holds a prefix of the
 * recency order. */
static uint64_t depth_of(const sim *s, uint32_t k)
{
    return s->live - tree_prefix(s->tree, s->last[k] - 1);
}

/* A lookup as LMCache's simulate() takes one: its leading run of keys
 * the cache holds, each hit's span and position measured before the
 * lookup touches anything; then every key becomes the most recent. */
static bool lookup_stats(sim *s)
{
    uint64_t keys = 0, positions = 0, hit = 0;
    bool leading = true;
    for (size_t i = 0; i < s->ncall; i++) {
        uint32_t k = s->call_key[i], f = s->call_flags[i];
        if (!(f & LCT__REF_READ))
            continue;
        keys++;
        bool in = s->policy ? lct__policy_holds(s->policy, k) : s->cache.in[k];
        leading = (leading || s->o->per_key) && in;
        if (leading) {
            s->r->keys_hit++;
            s->hits[k]++;
            if (!lct__dist_add(&s->span_d, s->index + i - s->seen[k]) ||
                !lct__dist_add(&s->depth_d, depth_of(s, k)))
                return false;
        }
        if (f & LCT__REF_POSITION) {
            positions++;
            hit += leading;
        }
    }
    s->r->keys += keys;
    return lookup_counted(s, keys, positions, hit);
}

/* A salt's bucket id: FNV-1a of its bytes. */
static uint64_t salt_id(lct_str salt)
{
    uint64_t h = 0xcbf29ce484222325u;
    for (size_t i = 0; i < salt.len; i++)
        h = (h ^ (unsigned char)salt.ptr[i]) * 0x100000001b3u;
    return h;
}

/* The quotas, each over `per` (a chunk's bytes, or 1). */
static bool set_quotas(sim *s, double per)
{
    for (size_t i = 0; i < s->nquotas; i++)
        if (lct_policy_set_quota(s->policy, s->quota_salt[i],
                                 (double)s->quota_limit[i] / per) != LCT_OK)
            return false;
    return true;
}

/* o->quotas kept by their salts' ids (the caller's array may go). */
static bool copy_quotas(sim *s, const lct_sim_quota *q, size_t n)
{
    s->quota_salt = n ? calloc(n, sizeof *s->quota_salt) : NULL;
    s->quota_limit = n ? calloc(n, sizeof *s->quota_limit) : NULL;
    if (n && (!s->quota_salt || !s->quota_limit))
        return false;
    for (size_t i = 0; i < n; i++) {
        s->quota_salt[i] = salt_id(q[i].cache_salt);
        s->quota_limit[i] = q[i].limit;
    }
    s->nquotas = n;
    return true;
}

/* With a byte capacity, LMCache's simulator holds max(1, capacity //
 * bytes per chunk) chunks, the bytes per chunk from the first lookup
 * (simulate()); here from the first key whose call has a layout.  Until
 * then the cache does not evict. */
static void size_capacity(sim *s, uint64_t bytes)
{
    if (s->key_bytes || !bytes)
        return;
    s->key_bytes = bytes;
    if (!s->o->in_bytes)
        return;
    uint64_t keys = s->o->capacity / bytes;
    s->cache.capacity = keys ? keys : 1;
    if (s->policy) {
        s->nomem |= !set_quotas(s, (double)bytes) ||
                    !lct__policy_set_capacity(s->policy, s->cache.capacity);
        return;
    }
    while (s->cache.used > s->cache.capacity) {
        lct__lru_unlink(&s->cache, s->cache.tail);
        s->cache.evictions++;
    }
}

static bool run_call(sim *s)
{
    if (!s->ncall) { /* a lookup of no chunk still counts its tokens */
        bool ok = !s->call_tokens_given || lookup_counted(s, 0, 0, 0);
        s->call_tokens_given = false;
        return ok;
    }
    for (size_t i = 0; i < s->ncall; i++)
        size_capacity(s, s->call_bytes[i]);
    if (s->nomem)
        return false;
    if ((s->call_flags[0] & LCT__REF_READ) && !lookup_stats(s))
        return false;
    for (size_t i = 0; i < s->ncall; i++) {
        uint32_t k = s->call_key[i];
        if (!depth_room(s))
            return false;
        depth_touch(s, k);
        s->seen[k] = s->index++;
        if (!s->policy) {
            lct__lru_touch(&s->cache, k, s->call_bytes[i]);
        } else {
            if (s->call_bytes[i])
                s->cache.size[k] = s->call_bytes[i];
            if (lct_policy_get_salted(s->policy, k, 1, INT64_MAX,
                                      s->call_salt[i]) < 0)
                return false;
        }
    }
    if (s->policy && lct_policy_end_call(s->policy) < 0)
        return false;
    s->ncall = 0;
    s->call_tokens_given = false;
    return true;
}

static bool step(sim *s, const lct__ref *ref, uint32_t k, uint64_t bytes)
{
    if ((ref->size & LCT__REF_CALL) && !run_call(s))
        return false;
    if (s->ncall == s->callcap) {
        size_t had = s->callcap, cap = had ? 2 * had : 64;
        if (!lct__grow_zeroed(&s->call_key, had, cap, sizeof *s->call_key) ||
            !lct__grow_zeroed(&s->call_flags, had, cap,
                              sizeof *s->call_flags) ||
            !lct__grow_zeroed(&s->call_bytes, had, cap,
                              sizeof *s->call_bytes) ||
            !lct__grow_zeroed(&s->call_salt, had, cap,
                              sizeof *s->call_salt))
            return false;
        s->callcap = cap;
    }
    s->call_salt[s->ncall] = s->salt;
    s->call_key[s->ncall] = k;
    s->call_flags[s->ncall] = ref->size & (LCT__REF_READ | LCT__REF_POSITION);
    s->call_bytes[s->ncall++] = bytes;
    s->call_seconds = ref->seconds;
    return true;
}

/* Stat 1 as LMCache computes it from the per-request rates: their sum in
 * request order (Python's sum() before 3.12; 3.12 compensates, which
 * moves only digits the report does not print), and the exact rate at
 * each rank. */
static bool rate_report(const sim *s, lct_sim_report *r)
{
    double sum = 0;
    for (uint64_t i = 0; i < s->calls_done; i++)
        sum += s->rates[i][1] ? (double)s->rates[i][0] /
                                    (double)s->rates[i][1] : 0;
    r->call_hit_mean = r->calls ? sum / (double)r->calls : 0;
    return lct__rate_percentiles((const uint64_t (*)[2])s->rates,
                                 s->calls_done, r->call_hit_p);
}

static bool finish(sim *s, size_t nkeys)
{
    lct_sim_report *r = s->r;
    if (!run_call(s) || !rate_report(s, r))
        return false;
    cumulative(s);
    lct__dist reuse = {0};
    bool ok = lct__dist_report(&s->leading_d, &r->leading) &&
              lct__dist_report(&s->call_d, &r->call_positions) &&
              lct__dist_report(&s->span_d, &r->span) &&
              lct__dist_report(&s->depth_d, &r->lru_position);
    uint64_t bytes = 0;
    for (size_t k = 0; ok && k < nkeys; k++) {
        if (s->hits[k])
            ok = lct__dist_add(&reuse, s->hits[k]);
        if (s->policy ? lct__policy_holds(s->policy, k) : s->cache.in[k]) {
            r->occupancy_keys++;
            r->occupancy_bytes += s->cache.size[k];
        }
        bytes += s->cache.size[k];
    }
    ok = ok && lct__dist_report(&reuse, &r->reuse);
    lct__dist_free(&reuse);
    r->evictions = s->policy ? lct_policy_evictions(s->policy)
                             : s->cache.evictions;
    r->bypassed = s->cache.bypassed;
    r->refused = s->policy ? lct_policy_refused(s->policy) : 0;
    r->distinct_keys = nkeys;
    r->mean_key_bytes = nkeys ? (double)bytes / (double)nkeys : 0;
    r->key_bytes = s->key_bytes;
    /* a byte capacity no key sized was never turned into keys */
    r->capacity_keys = s->o->in_bytes && !s->key_bytes ? 0
                                                        : s->cache.capacity;
    return ok;
}

/* MARK: running it, a reference at a time */

/* A call's keys are held until the call ends: its chunk positions need
 * the number of its kv ranks, which its last key may change. */
typedef struct pending {
    uint64_t id, bytes;
    double t;
    bool read;
    uint64_t salt; /* IsolatedLRU's bucket */
} pending;

struct lct_sim {
    lct_sim_options o;
    lct_sim_report r;
    sim s;              /* the cache simulated (L2 behind an L1) */
    lct__u64map ids;    /* obj_id -> key number + 1 */
    size_t nkeys, keycap;
    pending *call;
    size_t ncall, callcap;
    uint64_t salt; /* lct_sim_add_key's key's bucket, for lct_sim_add */
    lct_chunk_rows rows; /* lct_sim_add_key: the call's chunks so far */
    uint32_t call_chunks;
    lct__lru l1;        /* with o.l1_capacity: the L1 in front */
    lct_policy *l1p;    /* its policy when not LRU: keys by number */
    uint64_t l1_bypassed;
    bool l1_read, l1_leading, l1_first;
    double seconds;
};

static void sim_alloc(sim *s)
{
    s->stride = 1;
    s->chunk_tokens = s->o->chunk_tokens ? s->o->chunk_tokens : 1;
    s->cache.head = s->cache.tail = LCT__LRU_NIL;
    /* keys; a byte capacity becomes keys at the first sized key */
    s->cache.capacity = s->o->in_bytes ? UINT64_MAX : s->o->capacity;
}

static void sim_free(sim *s)
{
    if (s->policy)
        free(s->policy->dense);
    lct_policy_free(s->policy);
    lct__lru_free(&s->cache);
    free(s->last), free(s->hits), free(s->seen), free(s->key_at);
    free(s->tree), free(s->rates);
    free(s->call_key), free(s->call_flags), free(s->call_bytes);
    free(s->call_salt);
    free(s->quota_salt), free(s->quota_limit);
    lct__u64map_free(&s->window_at);
    lct__dist *ds[] = {&s->leading_d, &s->call_d, &s->span_d, &s->depth_d};
    for (size_t i = 0; i < 4; i++)
        lct__dist_free(ds[i]);
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
        (x->o.l1_capacity && !lct__lru_grow(&x->l1, had, cap)) ||
        (x->l1p && !lct__grow_zeroed(&x->l1p->dense, had, cap,
                                     sizeof *x->l1p->dense)) ||
        (s->policy && !lct__grow_zeroed(&s->policy->dense, had, cap,
                                        sizeof *s->policy->dense)))
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
        x->l1_leading = x->l1_leading &&
                        (x->l1p ? lct__policy_holds(x->l1p, k) : x->l1.in[k]);
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
    if (!x->l1p) {
        lct__lru_touch(&x->l1, k, bytes);
        return ok;
    }
    uint64_t weight = x->o.l1_in_bytes && bytes ? bytes : 1;
    x->l1_bypassed += weight > x->o.l1_capacity;
    /* the L1's previous call ends where this one begins */
    if ((flags & LCT__REF_CALL) && lct_policy_end_call(x->l1p) < 0)
        return false;
    return ok && lct_policy_get(x->l1p, k, weight, INT64_MAX) >= 0;
}

/* What lct_sim_new refuses, with why in err. */
static lct_status check_options(const lct_sim_options *opts, lct_sim **out,
                                lct_error *err)
{
    if (!opts || !out || !opts->capacity)
        return lct__fail(err, LCT_ERR_INVALID, EINVAL, 0,
                         "lct_sim_new: options with a capacity above 0");
    if ((opts->policy && (!lct_policy_name(opts->policy) ||
                          opts->policy == LCT_POLICY_BELADY)) ||
        (opts->l1_policy && (!lct_policy_name(opts->l1_policy) ||
                             opts->l1_policy == LCT_POLICY_BELADY)))
        return lct__fail(err, LCT_ERR_INVALID, EINVAL, 0,
                         "lct_sim_new: a policy lct_sim runs (not belady, "
                         "which needs the stream's future: lct_policy_run)");
    if ((opts->nquotas && opts->policy != LCT_POLICY_LMCACHE_ISOLATED_LRU) ||
        (opts->nquotas && !opts->quotas) ||
        opts->l1_policy == LCT_POLICY_LMCACHE_ISOLATED_LRU)
        return lct__fail(err, LCT_ERR_INVALID, EINVAL, 0,
                         "lct_sim_new: quotas are lmcache-isolated-lru's, "
                         "the policy of the cache (an L2 adapter's), not "
                         "the L1's");
    if (opts->watermark < 0 || opts->watermark > 1 ||
        opts->eviction_ratio < 0 || opts->eviction_ratio > 1)
        return lct__fail(err, LCT_ERR_INVALID, EINVAL, 0,
                         "lct_sim_new: a watermark or eviction ratio "
                         "outside (0, 1]");
    return LCT_OK;
}

lct_status lct_sim_new(const lct_sim_options *opts, lct_sim **out,
                       lct_error *err)
{
    if (out)
        *out = NULL;
    lct_status checked = check_options(opts, out, err);
    if (checked != LCT_OK)
        return checked;
    lct_sim *x = calloc(1, sizeof *x);
    if (!x)
        return lct__fail(err, LCT_ERR_NOMEM, ENOMEM, 0, "out of memory");
    x->o = *opts;
    x->o.quotas = NULL; /* copied below, by their salts' ids */
    lct_chunk_rows_reset(&x->rows);
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
    sim_alloc(&x->s);
    /* another policy: keys by this simulation's numbers; a byte
     * capacity becomes keys at the first sized key, as LRU's does */
    if (x->o.l1_capacity && x->o.l1_policy &&
        x->o.l1_policy != LCT_POLICY_LRU) {
        lct_status st = lct_policy_new(x->o.l1_policy, x->o.l1_capacity,
                                       &x->l1p, err);
        if (st != LCT_OK) {
            lct_sim_free(x);
            return st;
        }
        lct__policy_pressure(x->l1p, x->o.watermark, x->o.eviction_ratio);
    }
    if (x->o.policy && x->o.policy != LCT_POLICY_LRU) {
        lct_status st = lct_policy_new(
            x->o.policy, x->o.in_bytes ? UINT64_C(1) << 62 : x->o.capacity,
            &x->s.policy, err);
        if (st != LCT_OK) {
            lct_sim_free(x);
            return st;
        }
        lct__policy_pressure(x->s.policy, x->o.watermark,
                             x->o.eviction_ratio);
        /* in bytes: until a chunk is sized, each quota counts its bytes
         * as chunks, so nothing is evicted, as nothing is for room */
        if (!copy_quotas(&x->s, opts->quotas, opts->nquotas) ||
            !set_quotas(&x->s, 1)) {
            lct_sim_free(x);
            return lct__fail(err, LCT_ERR_NOMEM, ENOMEM, 0, "out of memory");
        }
    }
    if (!(x->r.series = calloc(x->o.series_points + 1,
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
    x->call[x->ncall++] = (pending){obj_id, bytes, t_mono, is_read,
                                    x->salt};
    return LCT_OK;
}

lct_status lct_sim_add_key(lct_sim *x, const lct_object_key *key,
                           uint64_t bytes, double t_mono, bool is_read)
{
    if (!x || !key)
        return LCT_ERR_INVALID;
    if (lct_chunk_of(&x->rows, key) != x->call_chunks)
        return LCT_OK; /* the chunk has its entry: an earlier row's key */
    x->call_chunks++;
    if (x->o.policy == LCT_POLICY_LMCACHE_ISOLATED_LRU)
        x->salt = salt_id(key->cache_salt);
    lct_status st = lct_sim_add(x, lct_chunk_hash_id(key->chunk_hash), bytes,
                                t_mono, is_read);
    x->salt = 0;
    return st;
}

lct_status lct_sim_end_call_tokens(lct_sim *x, unsigned keys_per_position,
                                   uint64_t chunk_tokens, uint64_t seq_len)
{
    if (!x || !keys_per_position)
        return LCT_ERR_INVALID;
    /* a call still buffered is another's: counted first, as it was */
    if (!x->o.l1_capacity && !run_call(&x->s))
        return LCT_ERR_NOMEM;
    lct_status rc = lct_sim_end_call(x, keys_per_position);
    if (rc != LCT_OK || x->o.l1_capacity)
        return rc; /* an L2's calls are what L1 left of them: no tokens */
    /* this call is the one buffered: count it with its own tokens now */
    x->s.call_tokens_given = true;
    x->s.call_chunk_tokens = chunk_tokens;
    x->s.call_seq_len = seq_len;
    x->s.call_seconds = x->seconds;
    return run_call(&x->s) ? LCT_OK : LCT_ERR_NOMEM;
}

lct_status lct_sim_end_call(lct_sim *x, unsigned keys_per_position)
{
    if (!x || !keys_per_position)
        return LCT_ERR_INVALID;
    lct_chunk_rows_reset(&x->rows);
    x->call_chunks = 0;
    for (size_t i = 0; i < x->ncall; i++) {
        const pending *p = &x->call[i];
        bool last = (i + 1) % keys_per_position == 0 || i + 1 == x->ncall;
        uint32_t flags = (i == 0 ? LCT__REF_CALL : 0) |
                         (last ? LCT__REF_POSITION : 0);
        x->s.salt = p->salt;
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
    if (!finish(&x->s, x->nkeys))
        return lct__fail(err, LCT_ERR_NOMEM, ENOMEM, 0, "out of memory");
    series_end(&x->s, x->seconds);
    x->r.has_l1 = x->o.l1_capacity != 0;
    x->r.l1.evictions = x->l1.evictions;
    x->r.l1.bypassed = x->l1.bypassed;
    if (x->l1p) {
        if (lct_policy_end_call(x->l1p) < 0)
            return lct__fail(err, LCT_ERR_NOMEM, ENOMEM, 0, "out of memory");
        x->r.l1.evictions = lct_policy_evictions(x->l1p);
        x->r.l1.bypassed = x->l1_bypassed;
    }
    if (x->r.nwindows)
        qsort(x->r.windows, x->r.nwindows, sizeof *x->r.windows, by_start);
    *out = x->r;
    x->r.series = NULL; /* the report's now */
    x->r.windows = NULL;
    return LCT_OK;
}

void lct_sim_free(lct_sim *x)
{
    if (!x)
        return;
    sim_free(&x->s);
    lct__lru_free(&x->l1);
    if (x->l1p)
        free(x->l1p->dense);
    lct_policy_free(x->l1p);
    lct__u64map_free(&x->ids);
    free(x->call);
    free(x->r.series);
    free(x->r.windows);
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
    free(r->windows);
    r->windows = NULL;
    r->nwindows = 0;
}
