/*
 * test_policy_isolated.c - LMCache's IsolatedLRU (lct_policy's
 * LMCACHE_ISOLATED_LRU) against its sources, rewritten here step for
 * step: isolated_lru.py's per-cache_salt OrderedDicts (arrays, the
 * oldest first), on_keys_created and on_keys_touched (last key first),
 * get_eviction_actions(ratio, cache_salt=...) (int(n x ratio), at least
 * one, the bucket's oldest), and the L2 eviction controller's
 * _check_and_evict_by_cache_salt (eviction_controller.py): every bucket
 * holding anything at or above watermark x its quota evicts at the
 * ratio, a bucket without a quota at ratio 1.  Around them liblct's
 * call: found keys touched, new keys created all or none within the
 * capacity.  The same hits and keys held after every call on random
 * calls, keys and bytes, quotas or none; and hand-made cases whose
 * expected values were worked out from those sources.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "lct.h"
#include "odict.h"

enum { SALTS = 4, KEYS = 48 };

/* MARK: the source, plainly */

typedef struct bucket {
    odict order; /* the salt's OrderedDict, the oldest first */
    uint64_t used;
    double limit; /* QuotaManager.get_limit_bytes: 0 for none */
} bucket;

typedef struct ref {
    bucket b[SALTS];
    uint64_t capacity, used, refused;
    double watermark, ratio;
} ref;

/* A key's salt and weight, fixed as a key's are: its bucket is part of
 * the ObjectKey. */
static unsigned salt_of(uint64_t key)
{
    return (unsigned)(key % SALTS);
}

static uint64_t bytes_of(uint64_t key, bool sized)
{
    return sized ? 1 + key % 5 : 1;
}

static bool held_in(const ref *r, uint64_t key)
{
    return od_has(&r->b[salt_of(key)].order, key);
}

/* One call: on_keys_touched(found) and on_keys_created(new), each
 * `for key in reversed(keys)`, then the controller's cycle. */
static void ref_call(ref *r, const uint64_t *keys, size_t n, bool sized,
                     bool *hits)
{
    uint64_t need = 0;
    for (size_t j = 0; j < n; j++) {
        hits[j] = held_in(r, keys[j]);
        need += hits[j] ? 0 : bytes_of(keys[j], sized);
    }
    for (size_t j = n; j-- > 0;) {
        odict *order = &r->b[salt_of(keys[j])].order;
        if (hits[j] && od_has(order, keys[j]))
            od_move_to_end(order, keys[j]);
    }
    if (r->used + need > r->capacity) {
        for (size_t j = 0; j < n; j++)
            r->refused += !hits[j];
    } else {
        for (size_t j = n; j-- > 0;) {
            if (hits[j])
                continue;
            bucket *b = &r->b[salt_of(keys[j])];
            if (od_has(&b->order, keys[j])) {
                od_move_to_end(&b->order, keys[j]);
                continue;
            }
            od_append(&b->order, keys[j]);
            b->used += bytes_of(keys[j], sized);
            r->used += bytes_of(keys[j], sized);
        }
    }
    for (unsigned s = 0; s < SALTS; s++) {
        bucket *b = &r->b[s];
        if (b->used == 0 || (double)b->used < r->watermark * b->limit)
            continue;
        double ratio = b->limit == 0 ? 1.0 : r->ratio;
        size_t target = (size_t)((double)b->order.n * ratio);
        if (ratio > 0 && target == 0)
            target = 1;
        while (target-- && b->order.n) {
            uint64_t oldest = b->order.k[0];
            b->used -= bytes_of(oldest, sized);
            r->used -= bytes_of(oldest, sized);
            od_pop(&b->order, oldest);
        }
    }
}

static uint64_t rng(uint64_t *s)
{
    *s = *s * 6364136223846793005u + 1442695040888963407u;
    return *s >> 33;
}

static void compare(uint64_t capacity, const double *limits, double wm,
                    double ratio, bool sized, uint64_t seed)
{
    static ref r;
    memset(&r, 0, sizeof r);
    r.capacity = capacity, r.watermark = wm, r.ratio = ratio;
    lct_policy *p;
    cr_assert_eq(lct_policy_new(LCT_POLICY_LMCACHE_ISOLATED_LRU, capacity, &p,
                                NULL),
                 LCT_OK);
    cr_assert_eq(lct_policy_set_pressure(p, wm, ratio), LCT_OK);
    for (unsigned s = 0; s < SALTS; s++) {
        r.b[s].limit = limits[s];
        if (limits[s] > 0) /* a salt without one is never registered */
            cr_assert_eq(lct_policy_set_quota(p, 1000 + s, limits[s]),
                         LCT_OK);
    }
    uint64_t s = seed;
    for (int call = 0; call < 300; call++) {
        uint64_t keys[8];
        size_t n = 1 + rng(&s) % 6;
        for (size_t j = 0; j < n; j++) {
            keys[j] = rng(&s) % 3 ? rng(&s) % 12 : 12 + rng(&s) % 30;
            for (size_t i = 0; i < j; i++)
                if (keys[i] == keys[j]) /* a call names a key once */
                    keys[j] = 42 + (uint64_t)j;
        }
        bool want[8];
        ref_call(&r, keys, n, sized, want);
        for (size_t j = 0; j < n; j++) {
            int got = lct_policy_get_salted(p, keys[j], bytes_of(keys[j], sized),
                                            INT64_MAX, 1000 + salt_of(keys[j]));
            cr_assert_eq(got, want[j],
                         "cap %llu wm %g ratio %g seed %llu: call %d key "
                         "%llu: %d, the source says %d",
                         (unsigned long long)capacity, wm, ratio,
                         (unsigned long long)seed, call,
                         (unsigned long long)keys[j], got, want[j]);
        }
        cr_assert_eq(lct_policy_end_call(p), LCT_OK);
        for (uint64_t k = 0; k < KEYS; k++)
            cr_assert_eq(lct_policy_holds(p, k), held_in(&r, k),
                         "cap %llu seed %llu: after call %d, key %llu",
                         (unsigned long long)capacity,
                         (unsigned long long)seed, call,
                         (unsigned long long)k);
        cr_assert_eq(lct_policy_used(p), r.used);
    }
    cr_expect_eq(lct_policy_refused(p), r.refused);
    lct_policy_free(p);
}

Test(policy_isolated, follows_its_sources_call_for_call, .timeout = 120)
{
    /* quotas of each kind: none (wiped each cycle), small, fractional
     * (a byte quota in keys), larger than anything held */
    static const double limits[][SALTS] = {
        {4, 6, 0, 100}, {2.5, 0, 9, 3}, {0, 0, 0, 0}, {1, 1, 1, 1}};
    static const double wms[] = {0.8, 1.0, 0.5}, ratios[] = {0.2, 0.5, 1.0};
    for (int sized = 0; sized <= 1; sized++)
        for (size_t q = 0; q < 4; q++)
            for (uint64_t cap = sized ? 8 : 4; cap <= (sized ? 200u : 60u);
                 cap += sized ? 24 : 7)
                for (size_t w = 0; w < 3; w++)
                    compare(cap, limits[q], wms[w], ratios[(w + q) % 3],
                            sized, 11 * cap + 3 * q + w + 1);
}

/* MARK: each branch, by hand */

/* One call of the keys in `keys` (a letter each, all of bucket salt). */
static void call_in(lct_policy *p, const char *keys, uint64_t salt)
{
    for (const char *k = keys; *k; k++)
        cr_assert_geq(lct_policy_get_salted(p, (uint64_t)*k, 1, INT64_MAX,
                                            salt),
                      0);
    cr_assert_eq(lct_policy_end_call(p), LCT_OK);
}

static void expect_held(lct_policy *p, const char *all, const char *held)
{
    for (const char *k = all; *k; k++)
        cr_expect_eq(lct_policy_holds(p, (uint64_t)*k),
                     strchr(held, *k) != NULL, "key %c", *k);
}

Test(policy_isolated, quotas_evict_each_bucket_alone)
{
    lct_policy *p;
    cr_assert_eq(lct_policy_new(LCT_POLICY_LMCACHE_ISOLATED_LRU, 1000, &p,
                                NULL),
                 LCT_OK);
    cr_assert_eq(lct_policy_set_pressure(p, 0.8, 0.5), LCT_OK);
    cr_assert_eq(lct_policy_set_quota(p, 1, 4), LCT_OK);
    cr_assert_eq(lct_policy_set_quota(p, 2, 100), LCT_OK);
    /* salt 1: ABC created last first, so the order (oldest first) is
     * C B A; 3 keys < 0.8 x 4: kept */
    call_in(p, "ABC", 1);
    expect_held(p, "ABC", "ABC");
    /* salt 2 holds its own, far under its quota */
    call_in(p, "XYZ", 2);
    /* C found: touched to the newest, B A C; then D: B A C D, 4 >= 3.2,
     * so int(4 x 0.5) = 2 of salt 1's oldest go: B and A */
    call_in(p, "C", 1);
    call_in(p, "D", 1);
    expect_held(p, "ABCDXYZ", "CDXYZ");
    /* a salt with no quota (3): every key it holds goes at the cycle */
    call_in(p, "PQ", 3);
    expect_held(p, "PQCDXYZ", "CDXYZ");
    cr_expect_eq(lct_policy_used(p), 5u);
    cr_expect_eq(lct_policy_evictions(p), 4u);
    lct_policy_free(p);
}

Test(policy_isolated, a_call_last_key_is_evicted_first_in_its_bucket)
{
    /* quota 3, ratio 0.2: ABC is at 3 >= 2.4, int(3 x 0.2) = 0, so one
     * key goes: the oldest, C (created last first) */
    lct_policy *p;
    cr_assert_eq(lct_policy_new(LCT_POLICY_LMCACHE_ISOLATED_LRU, 1000, &p,
                                NULL),
                 LCT_OK);
    cr_assert_eq(lct_policy_set_quota(p, 7, 3), LCT_OK);
    call_in(p, "ABC", 7);
    expect_held(p, "ABC", "AB");
    lct_policy_free(p);
}

Test(policy_isolated, names_and_refusals)
{
    lct_policy_kind k;
    cr_expect_eq(lct_policy_find("lmcache-isolated-lru", &k), LCT_OK);
    cr_expect_eq(k, LCT_POLICY_LMCACHE_ISOLATED_LRU);
    cr_expect(lct_policy_by_call(k));
    cr_expect(strstr(lct_policy_names(), "lmcache-isolated-lru") != NULL);
    lct_policy *p;
    cr_assert_eq(lct_policy_new(LCT_POLICY_LRU, 10, &p, NULL), LCT_OK);
    cr_expect_eq(lct_policy_set_quota(p, 1, 5), LCT_ERR_INVALID,
                 "a quota is IsolatedLRU's");
    /* other policies ignore the bucket */
    cr_expect_eq(lct_policy_get_salted(p, 9, 1, INT64_MAX, 3), 0);
    cr_expect_eq(lct_policy_get(p, 9, 1, INT64_MAX), 1);
    lct_policy_free(p);
    cr_assert_eq(lct_policy_new(LCT_POLICY_LMCACHE_ISOLATED_LRU, 10, &p, NULL),
                 LCT_OK);
    cr_expect_eq(lct_policy_set_quota(p, 1, -1), LCT_ERR_INVALID);
    cr_expect_eq(lct_policy_set_quota(p, 1, NAN), LCT_ERR_INVALID);
    lct_policy_free(p);
}

/* MARK: in lct_sim, by the prefix rule */

/* A lookup of chunks (a letter each) whose keys carry the salt. */
static void lookup(lct_sim *sim, const char *chunks, const char *salt)
{
    for (const char *c = chunks; *c; c++) {
        unsigned char hash[1] = {(unsigned char)*c};
        lct_object_key k = {.chunk_hash = {hash, 1},
                            .model_name = {"m", 1},
                            .cache_salt = {salt, strlen(salt)}};
        cr_assert_eq(lct_sim_add_key(sim, &k, 0, 0, true), LCT_OK);
    }
    cr_assert_eq(lct_sim_end_call(sim, 1), LCT_OK);
}

/*
 * Salt t1 has a quota of 2 chunks, the keys without a salt none
 * (watermark 0.8, ratio 0.5: a cycle at 2 chunks evicts 1):
 *   AB (t1): both missed, created B then A (last first), so B is the
 *            oldest; 2 >= 1.6: B goes.                      held A
 *   AB (t1): A hit, then B missed: the leading run is 1 chunk; A touched,
 *            B created; A is now the oldest and goes.        held B
 *   A (t1):  missed; created; B the oldest goes.             held A
 *   X, X (no salt): each missed, created, and wiped at the cycle.
 * 7 chunks looked up, 1 hit; 5 evictions.
 */
Test(policy_isolated, lct_sim_counts_the_prefix_rule_under_quotas)
{
    lct_sim_quota q[] = {{{"t1", 2}, 2}};
    lct_sim_options o = {.capacity = 1000,
                         .policy = LCT_POLICY_LMCACHE_ISOLATED_LRU,
                         .watermark = 0.8, .eviction_ratio = 0.5,
                         .quotas = q, .nquotas = 1};
    lct_sim *sim;
    cr_assert_eq(lct_sim_new(&o, &sim, NULL), LCT_OK);
    q[0].limit = 99; /* copied: the caller's array may change or go */
    lookup(sim, "AB", "t1");
    lookup(sim, "AB", "t1");
    lookup(sim, "A", "t1");
    lookup(sim, "X", "");
    lookup(sim, "X", "");
    lct_sim_report r;
    cr_assert_eq(lct_sim_finish(sim, &r, NULL), LCT_OK);
    cr_expect_eq(r.keys, 7u);
    cr_expect_eq(r.keys_hit, 1u);
    cr_expect_eq(r.evictions, 5u);
    lct_sim_report_free(&r);
    lct_sim_free(sim);
    /* quotas are IsolatedLRU's, and it is no L1's policy */
    o.policy = LCT_POLICY_LMCACHE_LRU;
    lct_error err;
    cr_expect_eq(lct_sim_new(&o, &sim, &err), LCT_ERR_INVALID);
    o = (lct_sim_options){.capacity = 10, .l1_capacity = 5,
                          .l1_policy = LCT_POLICY_LMCACHE_ISOLATED_LRU};
    cr_expect_eq(lct_sim_new(&o, &sim, &err), LCT_ERR_INVALID);
}
