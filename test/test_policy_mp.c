/*
 * test_policy_mp.c - LMCache's multiprocess-server L1 policies
 * (lct_policy's LMCACHE_LRU, _ARC, _S3FIFO) against their Python
 * sources, rewritten here step for step: OrderedDicts as arrays (the
 * oldest first), lru.py's, arc.py's and s3fifo.py's on_keys_created,
 * on_keys_touched, on_keys_removed and get_eviction_actions, and the L1
 * around them (reserve_write's all-or-none allocation; the controller's
 * cycle at the watermark, whose deletion reports the keys removed).  The
 * same hits and the same keys held after every call, on random calls in
 * keys and in bytes at many capacities, watermarks and ratios; and
 * hand-made cases that take each branch, their expected values worked
 * out by hand from those sources.
 */
#include <criterion/criterion.h>
#include <stdint.h>
#include <string.h>

#include "lct.h"
#include "odict.h"

/* MARK: the policies, as their Python has them */

typedef struct model {
    lct_policy_kind kind;
    odict a, b, c, d; /* LRU: a; ARC: t1 t2 b1 b2; S3-FIFO: small main */
    odict ghost;      /* S3-FIFO's set */
    odict pending;    /* ARC's pending evictions */
    double p;
    uint64_t capacity; /* ARC's, in keys */
} model;

static double pymax(double x, double y)
{
    return x < y ? y : x;
}

static double pymin(double x, double y)
{
    return y < x ? y : x;
}

static size_t resident(const model *m)
{
    return m->kind == LCT_POLICY_LMCACHE_LRU ? m->a.n : m->a.n + m->b.n;
}

static void arc_trim(model *m)
{
    if (m->capacity == 0)
        return;
    while (m->a.n + m->c.n > m->capacity && m->c.n)
        od_pop(&m->c, m->c.k[0]);
    while (m->a.n + m->b.n + m->c.n + m->d.n > 2 * m->capacity) {
        odict *g = m->d.n ? &m->d : &m->c;
        if (!g->n)
            break;
        od_pop(g, g->k[0]);
    }
}

static void created(model *m, const uint64_t *keys, size_t n)
{
    for (size_t j = 0; j < n; j++) {
        if (m->kind == LCT_POLICY_LMCACHE_S3FIFO) { /* in order */
            uint64_t key = keys[j];
            if (od_has(&m->a, key) || od_has(&m->b, key))
                continue;
            if (od_pop(&m->ghost, key))
                od_append(&m->b, key);
            else
                od_append(&m->a, key);
            continue;
        }
        uint64_t key = keys[n - 1 - j]; /* reversed(keys) */
        if (m->kind == LCT_POLICY_LMCACHE_LRU) {
            od_move_to_end(&m->a, key);
            continue;
        }
        od_pop(&m->pending, key);
        if (od_pop(&m->a, key)) {
            od_append(&m->b, key);
        } else if (od_has(&m->b, key)) {
            od_move_to_end(&m->b, key);
        } else if (od_has(&m->c, key)) {
            m->p = pymin((double)m->capacity,
                         m->p + pymax(1.0, (double)m->d.n / (double)m->c.n));
            od_pop(&m->c, key);
            od_append(&m->b, key);
        } else if (od_has(&m->d, key)) {
            m->p = pymax(0.0,
                         m->p - pymax(1.0, (double)m->c.n / (double)m->d.n));
            od_pop(&m->d, key);
            od_append(&m->b, key);
        } else {
            od_append(&m->a, key);
        }
        if (resident(m) > m->capacity)
            m->capacity = resident(m);
        arc_trim(m);
    }
}

static void touched(model *m, const uint64_t *keys, size_t n)
{
    for (size_t j = 0; j < n; j++) {
        bool rev = m->kind != LCT_POLICY_LMCACHE_S3FIFO;
        uint64_t key = keys[rev ? n - 1 - j : j];
        if (m->kind == LCT_POLICY_LMCACHE_LRU) {
            if (od_has(&m->a, key))
                od_move_to_end(&m->a, key);
        } else if (od_pop(&m->a, key)) { /* T1 / small to T2 / main */
            od_append(&m->b, key);
        } else if (od_has(&m->b, key)) {
            od_move_to_end(&m->b, key);
        }
    }
}

static void removed(model *m, const uint64_t *keys, size_t n)
{
    for (size_t j = 0; j < n; j++) {
        uint64_t key = keys[j];
        if (m->kind == LCT_POLICY_LMCACHE_LRU) {
            od_pop(&m->a, key);
        } else if (m->kind == LCT_POLICY_LMCACHE_S3FIFO) {
            od_pop(&m->a, key);
            od_pop(&m->b, key);
            od_pop(&m->ghost, key);
        } else {
            if (od_has(&m->pending, key)) { /* _retire */
                if (od_pop(&m->a, key))
                    od_append(&m->c, key);
                else if (od_pop(&m->b, key))
                    od_append(&m->d, key);
            } else {
                od_pop(&m->a, key), od_pop(&m->b, key);
                od_pop(&m->c, key), od_pop(&m->d, key);
            }
            od_pop(&m->pending, key);
        }
    }
    if (m->kind == LCT_POLICY_LMCACHE_ARC)
        arc_trim(m);
}

/* get_eviction_actions(ratio): the victims in order */
static size_t actions(model *m, double ratio, uint64_t *out)
{
    size_t total = resident(m), target, n = 0;
    if (total == 0)
        return 0;
    ratio = pymax(0.0, pymin(1.0, ratio));
    target = (size_t)((double)total * ratio);
    if (ratio > 0 && target == 0)
        target = 1;
    if (m->kind == LCT_POLICY_LMCACHE_LRU) {
        for (size_t i = 0; i < m->a.n && n < target; i++)
            out[n++] = m->a.k[i];
        return n;
    }
    if (m->kind == LCT_POLICY_LMCACHE_S3FIFO) {
        odict small = m->a, main = m->b;
        for (size_t i = 0; i < small.n && n < target; i++) {
            od_pop(&m->a, small.k[i]);
            od_append(&m->ghost, out[n++] = small.k[i]);
        }
        for (size_t i = 0; i < main.n && n < target; i++) {
            od_pop(&m->b, main.k[i]);
            od_append(&m->ghost, out[n++] = main.k[i]);
        }
        return n;
    }
    if (total > m->capacity)
        m->capacity = total;
    m->p = pymin(m->p, (double)m->capacity);
    arc_trim(m);
    size_t virtual_t1 = m->a.n, i1 = 0, i2 = 0;
    odict t1 = m->a, t2 = m->b;
    while (n < target) {
        bool found = false;
        if (virtual_t1 >= (size_t)m->p && i1 < t1.n) {
            out[n++] = t1.k[i1++], virtual_t1--, found = true;
        }
        if (!found && i2 < t2.n)
            out[n++] = t2.k[i2++], found = true;
        if (!found && i1 < t1.n)
            out[n++] = t1.k[i1++], virtual_t1--, found = true;
        if (!found)
            break;
    }
    for (size_t k = 0; k < n; k++)
        od_append(&m->pending, out[k]);
    return n;
}

/* MARK: the L1 around them */

typedef struct l1 {
    model m;
    uint64_t capacity, used, refused;
    uint64_t key[256], bytes[256]; /* what the L1 holds */
    size_t n;
    double watermark, ratio;
} l1;

static size_t l1_find(const l1 *c, uint64_t key)
{
    for (size_t i = 0; i < c->n; i++)
        if (c->key[i] == key)
            return i;
    return SIZE_MAX;
}

static void l1_delete(l1 *c, const uint64_t *keys, size_t n)
{
    for (size_t j = 0; j < n; j++) {
        size_t i = l1_find(c, keys[j]);
        c->used -= c->bytes[i];
        c->key[i] = c->key[--c->n], c->bytes[i] = c->bytes[c->n];
    }
    removed(&c->m, keys, n); /* on_l1_keys_deleted_by_manager */
}

/* A call of n keys: hits[] says which the L1 held at its start; the held
 * ones are read (touched), the others written as one allocation. */
static void l1_call(l1 *c, const uint64_t *keys, const uint64_t *bytes,
                    size_t n, bool *hits)
{
    uint64_t found[64], fresh[64], need = 0;
    size_t nf = 0, nn = 0;
    for (size_t j = 0; j < n; j++) {
        hits[j] = l1_find(c, keys[j]) != SIZE_MAX;
        if (hits[j]) {
            found[nf++] = keys[j];
        } else {
            fresh[nn++] = keys[j];
            need += bytes[j];
        }
    }
    touched(&c->m, found, nf);
    if (c->used + need > c->capacity) {
        c->refused += nn;
    } else {
        for (size_t j = 0; j < n; j++) {
            if (hits[j] || l1_find(c, keys[j]) != SIZE_MAX)
                continue;
            c->key[c->n] = keys[j], c->bytes[c->n++] = bytes[j];
            c->used += bytes[j];
        }
        created(&c->m, fresh, nn);
    }
    if ((double)c->used / (double)c->capacity < c->watermark)
        return;
    uint64_t victims[256];
    size_t nv = actions(&c->m, c->ratio, victims);
    l1_delete(c, victims, nv);
}

/* MARK: the same, call for call */

static uint64_t rng(uint64_t *s)
{
    *s = *s * 6364136223846793005u + 1442695040888963407u;
    return *s >> 33;
}

static void compare(lct_policy_kind kind, uint64_t capacity, double wm,
                    double ratio, bool sized, uint64_t seed)
{
    static l1 c;
    memset(&c, 0, sizeof c);
    c.m.kind = kind;
    c.capacity = capacity, c.watermark = wm, c.ratio = ratio;
    lct_policy *p;
    cr_assert_eq(lct_policy_new(kind, capacity, &p, NULL), LCT_OK);
    cr_assert_eq(lct_policy_set_pressure(p, wm, ratio), LCT_OK);
    uint64_t s = seed;
    for (int call = 0; call < 300; call++) {
        uint64_t keys[8], bytes[8];
        size_t n = 1 + rng(&s) % 6;
        for (size_t j = 0; j < n; j++) {
            /* a few hot keys, and runs of a call's neighbours */
            keys[j] = rng(&s) % 4 ? rng(&s) % 12 : 12 + rng(&s) % 28;
            for (size_t i = 0; i < j; i++)
                if (keys[i] == keys[j]) /* a call names a key once */
                    keys[j] = 40 + (uint64_t)j;
            bytes[j] = sized ? 1 + keys[j] % 5 : 1;
        }
        bool want[8];
        l1_call(&c, keys, bytes, n, want);
        for (size_t j = 0; j < n; j++) {
            int got = lct_policy_get(p, keys[j], bytes[j], INT64_MAX);
            cr_assert_eq(got, want[j],
                         "%s cap %llu wm %g ratio %g seed %llu: call %d key "
                         "%llu: %d, the source says %d",
                         lct_policy_name(kind), (unsigned long long)capacity,
                         wm, ratio, (unsigned long long)seed, call,
                         (unsigned long long)keys[j], got, want[j]);
        }
        cr_assert_eq(lct_policy_end_call(p), LCT_OK);
        for (uint64_t k = 0; k < 48; k++)
            cr_assert_eq(lct_policy_holds(p, k), l1_find(&c, k) != SIZE_MAX,
                         "%s cap %llu seed %llu: after call %d, key %llu",
                         lct_policy_name(kind), (unsigned long long)capacity,
                         (unsigned long long)seed, call,
                         (unsigned long long)k);
        cr_assert_eq(lct_policy_used(p), c.used);
    }
    cr_expect_eq(lct_policy_refused(p), c.refused);
    lct_policy_free(p);
}

static const lct_policy_kind mp_kinds[] = {
    LCT_POLICY_LMCACHE_LRU, LCT_POLICY_LMCACHE_ARC,
    LCT_POLICY_LMCACHE_S3FIFO};

Test(policy_mp, each_follows_its_python_source_call_for_call,
     .timeout = 120)
{
    static const double wms[] = {0.8, 1.0, 0.5}, ratios[] = {0.2, 0.5, 1.0};
    for (size_t k = 0; k < 3; k++)
        for (int sized = 0; sized <= 1; sized++)
            for (uint64_t cap = 1; cap <= (sized ? 90u : 30u);
                 cap += sized ? 4 : 1)
                for (size_t w = 0; w < 3; w++)
                    compare(mp_kinds[k], cap, wms[w], ratios[(w + cap) % 3],
                            sized, 7 * cap + w + 1);
}

/* MARK: each branch, by hand */

/* One call of the keys in `keys` (a letter each) through p; what it found
 * as 'h' and '.' appended to out. */
static void call_of(lct_policy *p, const char *keys, char *out)
{
    size_t at = strlen(out);
    for (const char *c = keys; *c; c++)
        out[at++] = lct_policy_get(p, (uint64_t)*c, 1, INT64_MAX) ? 'h' : '.';
    out[at] = 0;
    cr_assert_eq(lct_policy_end_call(p), LCT_OK);
}

static bool held(lct_policy *p, char key)
{
    return lct_policy_holds(p, (uint64_t)key);
}

Test(policy_mp, lru_takes_a_call_last_key_first)
{
    /* 10 keys, the defaults (0.8, 0.2).  ABCD then EFGH: lru.py appends
     * each call reversed, order D C B A H G F E; at 8 keys (0.8) one
     * cycle takes int(8 * 0.2) = 1 key, the oldest: D, where the
     * per-key LRU would take A */
    lct_policy *p;
    cr_assert_eq(lct_policy_new(LCT_POLICY_LMCACHE_LRU, 10, &p, NULL),
                 LCT_OK);
    char got[64] = "";
    call_of(p, "ABCD", got);
    call_of(p, "EFGH", got);
    call_of(p, "ABCD", got);
    cr_expect_str_eq(got, "........" "hhh.");
    /* D, then H: ABC touched (C B A), D created, order H G F E C B A D */
    cr_expect_eq(lct_policy_evictions(p), 2u);
    cr_expect(!held(p, 'H') && held(p, 'D') && held(p, 'E'));
    lct_policy_free(p);
}

Test(policy_mp, arc_ghosts_move_its_target_and_its_victims)
{
    /* 4 keys, a cycle only when full (watermark 1), one key a cycle.
     * A B C; A touched (T2); D fills it: T1 B C D holds >= int(0) so
     * B goes to B1.  B again: from B1, p = min(4, 0 + max(1, 0/1)) = 1,
     * B to T2; full, T1 (C D) holds >= 1: C goes to B1.  C again: p = 2;
     * full, T1 (D) holds 1 < 2: T2's oldest, A, goes to B2.  A again:
     * from B2, p = max(0, 2 - max(1, 0/1)) = 1; T1 (D) holds >= 1: D
     * goes.  Held: B C A. */
    lct_policy *p;
    cr_assert_eq(lct_policy_new(LCT_POLICY_LMCACHE_ARC, 4, &p, NULL),
                 LCT_OK);
    cr_assert_eq(lct_policy_set_pressure(p, 1.0, 0.25), LCT_OK);
    char got[64] = "";
    call_of(p, "A", got), call_of(p, "B", got), call_of(p, "C", got);
    call_of(p, "A", got), call_of(p, "D", got);
    cr_expect(!held(p, 'B') && held(p, 'A') && held(p, 'C'));
    call_of(p, "B", got);
    cr_expect(!held(p, 'C') && held(p, 'B') && held(p, 'D'));
    call_of(p, "C", got);
    cr_expect(!held(p, 'A') && held(p, 'D') && held(p, 'C'));
    call_of(p, "A", got);
    cr_expect(!held(p, 'D') && held(p, 'A') && held(p, 'B') &&
              held(p, 'C'));
    cr_expect_str_eq(got, "...h....");
    cr_expect_eq(lct_policy_evictions(p), 4u);
    lct_policy_free(p);
}

Test(policy_mp, s3fifo_evicts_small_first_and_its_ghosts_never_promote)
{
    /* 4 keys, full to trigger, half a cycle.  AB into small; A touched
     * to main; CD fill it: int(4 * 0.5) = 2 from small, B and C.  B
     * again: its ghost entry went with the deletion, so small again.
     * EF do not fit (3 + 2 > 4): refused, both.  E fits and fills it:
     * small's D and B go; A (main) stays */
    lct_policy *p;
    cr_assert_eq(lct_policy_new(LCT_POLICY_LMCACHE_S3FIFO, 4, &p, NULL),
                 LCT_OK);
    cr_assert_eq(lct_policy_set_pressure(p, 1.0, 0.5), LCT_OK);
    char got[64] = "";
    call_of(p, "AB", got), call_of(p, "A", got), call_of(p, "CD", got);
    cr_expect(held(p, 'A') && held(p, 'D') && !held(p, 'B') &&
              !held(p, 'C'));
    call_of(p, "B", got);
    call_of(p, "EF", got);
    cr_expect_eq(lct_policy_refused(p), 2u);
    cr_expect(!held(p, 'E') && !held(p, 'F'));
    call_of(p, "E", got);
    cr_expect(held(p, 'A') && held(p, 'E') && !held(p, 'B') &&
              !held(p, 'D'));
    cr_expect_str_eq(got, "..h......");
    lct_policy_free(p);
}

Test(policy_mp, a_call_that_does_not_fit_is_refused_whole)
{
    /* 100 bytes, full to trigger: 60 held, then 30 + 30 would be 120 */
    lct_policy *p;
    cr_assert_eq(lct_policy_new(LCT_POLICY_LMCACHE_LRU, 100, &p, NULL),
                 LCT_OK);
    cr_assert_eq(lct_policy_set_pressure(p, 1.0, 0.2), LCT_OK);
    cr_expect_eq(lct_policy_get(p, 1, 60, INT64_MAX), 0);
    cr_expect_eq(lct_policy_end_call(p), LCT_OK);
    cr_expect_eq(lct_policy_get(p, 2, 30, INT64_MAX), 0);
    cr_expect_eq(lct_policy_get(p, 3, 30, INT64_MAX), 0);
    cr_expect_eq(lct_policy_end_call(p), LCT_OK);
    cr_expect_eq(lct_policy_refused(p), 2u);
    cr_expect_eq(lct_policy_used(p), 60u);
    cr_expect(!lct_policy_holds(p, 2) && !lct_policy_holds(p, 3));
    /* a call's references apply at its end, not before */
    cr_expect_eq(lct_policy_get(p, 4, 10, INT64_MAX), 0);
    cr_expect(!lct_policy_holds(p, 4));
    cr_expect_eq(lct_policy_end_call(p), LCT_OK);
    cr_expect(lct_policy_holds(p, 4));
    lct_policy_free(p);
}

Test(policy_mp, names_and_refusals)
{
    lct_policy_kind k;
    cr_expect_eq(lct_policy_find("LMCache-ARC", &k), LCT_OK);
    cr_expect_eq(k, LCT_POLICY_LMCACHE_ARC);
    cr_expect(lct_policy_by_call(k));
    cr_expect(!lct_policy_by_call(LCT_POLICY_ARC));
    lct_policy *p;
    cr_assert_eq(lct_policy_new(LCT_POLICY_ARC, 5, &p, NULL), LCT_OK);
    /* libCacheSim's policies have no pressure, and a call changes
     * nothing for them */
    cr_expect_eq(lct_policy_set_pressure(p, 0.8, 0.2), LCT_ERR_INVALID);
    cr_expect_eq(lct_policy_end_call(p), LCT_OK);
    lct_policy_free(p);
    cr_assert_eq(lct_policy_new(LCT_POLICY_LMCACHE_LRU, 5, &p, NULL),
                 LCT_OK);
    cr_expect_eq(lct_policy_set_pressure(p, 0, 0.2), LCT_ERR_INVALID);
    cr_expect_eq(lct_policy_set_pressure(p, 0.8, 1.5), LCT_ERR_INVALID);
    lct_policy_free(p);
}

/* MARK: through lct_policy_run */

/* Calls of 1 to 5 keys, reads and writes, each ended; the keys of each
 * call as they were fed, in keys[] (calls[] says where each ends). */
static lct_refs *calls_of(uint64_t seed, uint64_t *keys, size_t *ends,
                          size_t *ncalls)
{
    lct_refs *r;
    cr_assert_eq(lct_refs_new(&r), LCT_OK);
    uint64_t s = seed;
    size_t n = 0;
    for (size_t c = 0; c < 400; c++) {
        size_t len = 1 + rng(&s) % 5;
        bool read = rng(&s) % 3 != 0;
        for (size_t j = 0; j < len; j++) {
            keys[n] = 1 + (rng(&s) % 3 ? rng(&s) % 20 : 20 + rng(&s) % 60);
            cr_assert_eq(lct_refs_add(r, keys[n], 1, (double)c, read),
                         LCT_OK);
            n++;
        }
        cr_assert_eq(lct_refs_end_call(r, 1), LCT_OK);
        ends[c] = n;
    }
    *ncalls = 400;
    return r;
}

Test(policy_mp, a_run_is_the_cache_fed_call_by_call_under_its_pressure)
{
    static uint64_t keys[2000];
    static size_t ends[400];
    size_t ncalls;
    lct_refs *r = calls_of(11, keys, ends, &ncalls);
    uint64_t caps[] = {3, 10, 25, 60};
    for (size_t k = 0; k < 3; k++) {
        for (int custom = 0; custom <= 1; custom++) {
            lct_policy_run_options o = {
                .kinds = &mp_kinds[k], .nkinds = 1, .every_reference = true,
                .threads = 2, .watermark = custom ? 1.0 : 0,
                .eviction_ratio = custom ? 0.05 : 0};
            lct_policy_point pts[4];
            cr_assert_eq(lct_policy_run(r, &o, caps, 4, pts, NULL), LCT_OK);
            for (size_t i = 0; i < 4; i++) {
                lct_policy *p;
                cr_assert_eq(lct_policy_new(mp_kinds[k], caps[i], &p, NULL),
                             LCT_OK);
                if (custom)
                    lct_policy_set_pressure(p, 1.0, 0.05);
                uint64_t hits = 0;
                for (size_t c = 0, j = 0; c < ncalls; c++) {
                    for (; j < ends[c]; j++)
                        hits += lct_policy_get(p, keys[j], 1, INT64_MAX) == 1;
                    cr_assert_eq(lct_policy_end_call(p), LCT_OK);
                }
                cr_expect_eq(pts[i].hits, hits, "%s cap %llu custom %d",
                             lct_policy_name(mp_kinds[k]),
                             (unsigned long long)caps[i], custom);
                cr_expect_eq(pts[i].requests, ends[ncalls - 1]);
                lct_policy_free(p);
            }
        }
    }
    lct_refs_free(r);
    /* a stream whose calls were not ended is refused, not run as one call */
    lct_refs *flat;
    cr_assert_eq(lct_refs_new(&flat), LCT_OK);
    cr_assert_eq(lct_refs_add(flat, 1, 1, 0, true), LCT_OK);
    lct_policy_run_options o = {.kinds = &mp_kinds[0], .nkinds = 1};
    lct_policy_point pt;
    lct_error err;
    cr_expect_eq(lct_policy_run(flat, &o, caps, 1, &pt, &err),
                 LCT_ERR_INVALID);
    cr_expect(strstr(err.message, "lmcache-lru acts on calls") != NULL,
              "%s", err.message);
    o.kinds = &(lct_policy_kind){LCT_POLICY_LRU};
    o.watermark = 1.5;
    cr_expect_eq(lct_policy_run(flat, &o, caps, 1, &pt, NULL),
                 LCT_ERR_INVALID);
    lct_refs_free(flat);
}
