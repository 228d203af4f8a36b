/*
 * test_mrc.c - miss-ratio curves against a brute-force LRU simulation
 * (every capacity, in keys and in bytes) on generated reference streams
 * with controlled reuse: keys repeated within one call, writes before
 * reads, keys never reused; SHARDS sampling close to the exact curve; and
 * the oracleGeneral records byte for byte.
 */
#define _GNU_SOURCE /* cpu_set_t, for cpus.h */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/bigmem_internal.h" /* forcing 2 MiB pages on and off */
#include "lmcache/refs_internal.h" /* a stream's blocks */
#include "cpus.h"
#include "files.h"
#include "lct.h"

typedef struct ref {
    uint64_t id, bytes;
    bool read;
} ref;

static uint64_t rng_state;
static uint64_t rng(void)
{
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15u);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    return z ^ (z >> 31);
}

/* A mixed id for key k, and a size fixed per key (1..1000 bytes). */
static uint64_t id_of(uint64_t k)
{
    uint64_t z = k * 0x9e3779b97f4a7c15u + 12345;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    return z ^ (z >> 31);
}

/* n references over `universe` keys: skewed reuse (the square of a
 * uniform draw favours small keys), a quarter of them writes, some keys
 * twice in a row (as inside one call), and every 7th reference a key
 * never seen again. */
static ref *stream(size_t n, uint64_t universe, uint64_t seed)
{
    rng_state = seed;
    ref *v = calloc(n, sizeof *v);
    for (size_t i = 0; i < n; i++) {
        double u = (double)(rng() >> 11) / 9007199254740992.0;
        uint64_t k = (uint64_t)(u * u * (double)universe);
        if (i % 7 == 6)
            k = universe + i; /* never reused */
        if (i > 0 && rng() % 5 == 0)
            k = v[i - 1].id; /* the same key again in the same call */
        else
            k = id_of(k);
        v[i] = (ref){k, 1 + k % 1000, rng() % 4 != 0};
    }
    return v;
}

static lct_refs *refs_of(const ref *v, size_t n)
{
    lct_refs *r;
    cr_assert_eq(lct_refs_new(&r), LCT_OK);
    for (size_t i = 0; i < n; i++)
        cr_assert_eq(lct_refs_add(r, v[i].id, v[i].bytes, (double)i / 10,
                                  v[i].read),
                     LCT_OK);
    return r;
}

/* Read hits of an LRU cache of `cap` keys (bytes_mode: of `cap` bytes),
 * simulated on a list, most recent first. */
static uint64_t brute_hits(const ref *v, size_t n, uint64_t cap,
                           bool bytes_mode)
{
    uint64_t *list = calloc(n + 1, sizeof *list), *size = calloc(n + 1, 8);
    size_t len = 0;
    uint64_t hits = 0, total = 0;
    for (size_t i = 0; i < n; i++) {
        size_t at = len;
        for (size_t j = 0; j < len; j++)
            if (list[j] == v[i].id) {
                at = j;
                break;
            }
        if (v[i].read && at < len)
            hits++;
        if (at < len) {
            total -= size[at];
            memmove(list + 1, list, at * sizeof *list);
            memmove(size + 1, size, at * sizeof *size);
        } else {
            memmove(list + 1, list, len * sizeof *list);
            memmove(size + 1, size, len * sizeof *size);
            len++;
        }
        list[0] = v[i].id;
        size[0] = v[i].bytes;
        total += v[i].bytes;
        while (len > 0 && (bytes_mode ? total > cap : len > cap))
            total -= size[--len];
    }
    free(list);
    free(size);
    return hits;
}

static uint64_t reads_of(const ref *v, size_t n)
{
    uint64_t reads = 0;
    for (size_t i = 0; i < n; i++)
        reads += v[i].read;
    return reads;
}

Test(mrc, exact_curve_equals_brute_force_lru_at_every_capacity)
{
    for (uint64_t seed = 1; seed <= 2; seed++) {
        size_t n = 2000;
        ref *v = stream(n, 100, seed);
        lct_refs *r = refs_of(v, n);
        lct_mrc *m;
        cr_assert_eq(lct_mrc_compute(r, 1.0, &m, NULL), LCT_OK);
        uint64_t reads = reads_of(v, n);
        lct_mrc_totals t;
        lct_mrc_totals_get(m, &t);
        cr_expect_eq(t.reads, reads);
        cr_expect_eq(t.reads + t.writes, n);
        uint64_t distinct = t.distinct_keys;
        for (uint64_t c = 0; c <= distinct + 1; c++) {
            uint64_t hits = brute_hits(v, n, c, false);
            cr_expect_eq(lct_mrc_hit_ratio(m, c), (double)hits / (double)reads,
                         "seed %llu, %llu keys: %f vs %llu/%llu",
                         (unsigned long long)seed, (unsigned long long)c,
                         lct_mrc_hit_ratio(m, c), (unsigned long long)hits,
                         (unsigned long long)reads);
        }
        uint64_t all = brute_hits(v, n, n + 1, false);
        cr_expect_eq(t.infinite_hit_ratio, (double)all / (double)reads);
        cr_expect_eq(t.compulsory_misses, reads - all);
        for (uint64_t b = 0; b < 200000; b = b * 3 / 2 + 7) {
            uint64_t hits = brute_hits(v, n, b, true);
            cr_expect_eq(lct_mrc_byte_hit_ratio(m, b),
                         (double)hits / (double)reads,
                         "seed %llu, %llu bytes", (unsigned long long)seed,
                         (unsigned long long)b);
        }
        lct_mrc_free(m);
        lct_refs_free(r);
        free(v);
    }
}

/* Every key the same size: the curve keeps no byte distances (they
 * follow from key distances), and must give what the brute force does. */
Test(mrc, uniform_sizes_equal_brute_force_in_keys_and_bytes)
{
    for (uint64_t seed = 3; seed <= 4; seed++) {
        size_t n = 3000;
        ref *v = stream(n, 150, seed);
        for (size_t i = 0; i < n; i++)
            v[i].bytes = 4096;
        lct_refs *r = refs_of(v, n);
        lct_mrc *m;
        cr_assert_eq(lct_mrc_compute(r, 1.0, &m, NULL), LCT_OK);
        uint64_t reads = reads_of(v, n);
        lct_mrc_totals t;
        lct_mrc_totals_get(m, &t);
        cr_expect_eq(t.min_key_bytes, 4096);
        cr_expect_eq(t.max_key_bytes, 4096);
        cr_expect_eq(t.mean_key_bytes, 4096.0);
        for (uint64_t c = 0; c <= t.distinct_keys + 1; c++)
            cr_expect_eq(lct_mrc_hit_ratio(m, c),
                         (double)brute_hits(v, n, c, false) / (double)reads);
        /* at, just under and just over every multiple of the size */
        for (uint64_t k = 0; k <= t.distinct_keys + 1; k++)
            for (int64_t dx = -1; dx <= 1; dx++) {
                uint64_t b = k * 4096 + (uint64_t)dx;
                if (k == 0 && dx < 0)
                    continue;
                cr_expect_eq(lct_mrc_byte_hit_ratio(m, b),
                             (double)brute_hits(v, n, b, true) /
                                 (double)reads,
                             "seed %llu, %llu bytes",
                             (unsigned long long)seed, (unsigned long long)b);
            }
        lct_mrc_free(m);
        lct_refs_free(r);
        free(v);
    }
}

/* SHARDS's test as it is defined: splitmix64's finalizer of the salted
 * id, under the threshold. */
static uint64_t mixed_by_definition(uint64_t id, uint64_t seed)
{
    id ^= seed * 0x9e3779b97f4a7c15ull;
    id = (id ^ (id >> 30)) * 0xbf58476d1ce4e5b9ull;
    id = (id ^ (id >> 27)) * 0x94d049bb133111ebull;
    return id ^ id >> 31;
}

static bool sampled_by_definition(uint64_t id, uint64_t seed, uint64_t t)
{
    return (seed ? mixed_by_definition(id, seed) : id) < t;
}

static uint64_t unshift(uint64_t y, unsigned s) /* x ^ x >> s = y */
{
    uint64_t x = y;
    for (unsigned i = 0; i < 64 / s + 1; i++)
        x = y ^ (x >> s);
    return x;
}

static uint64_t inverse(uint64_t c) /* of an odd c, mod 2^64 */
{
    uint64_t x = c;
    for (int i = 0; i < 6; i++)
        x *= 2 - c * x;
    return x;
}

/* The id whose mixed value under the seed is `mixed`. */
static uint64_t id_mixing_to(uint64_t mixed, uint64_t seed)
{
    uint64_t x = unshift(mixed, 31) * inverse(0x94d049bb133111ebull);
    x = unshift(x, 27) * inverse(0xbf58476d1ce4e5b9ull);
    return unshift(x, 30) ^ seed * 0x9e3779b97f4a7c15ull;
}

/* The test's shortcut (a mixed value whose top 33 bits pass the
 * threshold's is out) decides as the definition does, at and around
 * every edge: the threshold, its top bits' boundaries, the ends. */
Test(mrc, sampling_decides_as_defined_at_the_threshold)
{
    const uint64_t thresholds[] = {
        1, 0x7fffffffu, 0x80000000u, 0x80000001u, 0x0147ae147ae147aeu,
        (uint64_t)1 << 63, 0x2aaaaaaa2aaaaaaau, 0x3000000040000001u,
        UINT64_MAX - 0x7fffffffu, UINT64_MAX - 5, UINT64_MAX};
    unsigned checked = 0;
    for (size_t k = 0; k < sizeof thresholds / sizeof *thresholds; k++) {
        uint64_t t = thresholds[k];
        const uint64_t edges[] = {t, t & ~(uint64_t)0x7fffffff,
                                  t | 0x7fffffff, 0, UINT64_MAX};
        for (size_t e = 0; e < sizeof edges / sizeof *edges; e++)
            for (int d = -2; d <= 2; d++) {
                uint64_t mixed = edges[e] + (uint64_t)(int64_t)d;
                for (uint64_t seed = 1; seed < 4; seed++) {
                    uint64_t id = id_mixing_to(mixed, seed);
                    cr_assert_eq(mixed_by_definition(id, seed), mixed,
                                 "the inverse holds");
                    cr_assert_eq(lct__sampled(id, seed, t), mixed < t,
                                 "threshold %#llx, mixed %#llx",
                                 (unsigned long long)t,
                                 (unsigned long long)mixed);
                    checked++;
                }
            }
        uint64_t x = 88172645463325252u; /* and ids at random */
        for (int i = 0; i < 10000; i++) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            cr_assert_eq(lct__sampled(x, 7, t), sampled_by_definition(x, 7, t));
            /* mixed values sharing the threshold's top 33 bits */
            uint64_t mixed = (t & ~(uint64_t)0x7fffffff) | (x & 0x7fffffff);
            cr_assert_eq(lct__sampled(id_mixing_to(mixed, 5), 5, t),
                         mixed < t, "threshold %#llx, mixed %#llx",
                         (unsigned long long)t, (unsigned long long)mixed);
        }
    }
    cr_expect_eq(checked, 11 * 5 * 5 * 3);
}

/* Gathering only what the samples keep (lct_refs_sample) gives the
 * curves the whole stream gives, in a fraction of the references; also
 * when the seeds run through 0, the seed that takes ids as they are. */
static void sampled_gathering_matches(uint64_t first_seed)
{
    size_t n = 20000;
    ref *v = stream(n, 3000, 7);
    lct_refs *whole = refs_of(v, n);
    for (int every = 0; every <= 1; every++) {
        lct_refs *part;
        cr_assert_eq(lct_refs_new(&part), LCT_OK);
        cr_assert_eq(lct_refs_sample(part, 0.05, first_seed, 3), LCT_OK);
        /* in two pieces, as threads gather them */
        lct_refs *tail;
        cr_assert_eq(lct_refs_new(&tail), LCT_OK);
        cr_assert_eq(lct_refs_sample(tail, 0.05, first_seed, 3), LCT_OK);
        for (size_t i = 0; i < n; i++)
            cr_assert_eq(lct_refs_add(i < n / 2 ? part : tail, v[i].id,
                                      v[i].bytes, (double)i / 10, v[i].read),
                         LCT_OK);
        cr_assert_eq(lct_refs_append(part, tail), LCT_OK);
        cr_expect_lt(lct_refs_count(part), n / 4, "kept %llu of %zu",
                     (unsigned long long)lct_refs_count(part), n);
        for (uint64_t s = 0; s < 3; s++) {
            uint64_t seed = first_seed + s;
            lct_mrc_options o = {.sample_rate = 0.05, .seed = seed,
                                 .every_reference = every};
            lct_mrc *a, *b;
            cr_assert_eq(lct_mrc_compute_with(whole, &o, &a, NULL), LCT_OK);
            cr_assert_eq(lct_mrc_compute_with(part, &o, &b, NULL), LCT_OK);
            lct_mrc_totals ta, tb;
            lct_mrc_totals_get(a, &ta);
            lct_mrc_totals_get(b, &tb);
            cr_expect_eq(ta.references, tb.references);
            cr_expect_eq(ta.kept_references, tb.kept_references);
            cr_expect_gt(tb.kept_references, 0, "seed %llu",
                         (unsigned long long)seed);
            cr_expect_eq(ta.reads, tb.reads);
            cr_expect_eq(ta.adjustment, tb.adjustment);
            for (uint64_t c = 1; c < 4000; c = c * 5 / 4 + 1)
                cr_expect_eq(lct_mrc_hit_ratio(a, c), lct_mrc_hit_ratio(b, c),
                             "seed %llu, %llu keys", (unsigned long long)seed,
                             (unsigned long long)c);
            lct_mrc_free(a);
            lct_mrc_free(b);
        }
        lct_refs *other;
        cr_assert_eq(lct_refs_new(&other), LCT_OK);
        cr_expect_eq(lct_refs_append(part, other), LCT_ERR_INVALID,
                     "streams gathered unlike do not join");
        cr_expect_eq(lct_refs_sample(part, 0.5, 1, 1), LCT_ERR_INVALID);
        lct_refs_free(other);
        lct_refs_free(tail);
        lct_refs_free(part);
    }
    lct_refs_free(whole);
    free(v);
}

Test(mrc, sampled_gathering_gives_the_whole_streams_curves)
{
    sampled_gathering_matches(11);
    sampled_gathering_matches(UINT64_MAX - 1); /* ..., UINT64_MAX, 0 */
}

Test(mrc, writes_only_never_hit_and_cold_reads_miss)
{
    lct_refs *r;
    cr_assert_eq(lct_refs_new(&r), LCT_OK);
    /* write a, read a (hit at 1), read b (cold), write a, read b: b is at
     * distance 1 (a was used since), so it hits from 2 keys. */
    lct_refs_add(r, 1, 10, 0, false);
    lct_refs_add(r, 1, 10, 0, true);
    lct_refs_add(r, 2, 10, 0, true);
    lct_refs_add(r, 1, 10, 0, false);
    lct_refs_add(r, 2, 10, 0, true);
    lct_mrc *m;
    cr_assert_eq(lct_mrc_compute(r, 1, &m, NULL), LCT_OK);
    cr_expect_eq(lct_mrc_hit_ratio(m, 1), 1.0 / 3);
    cr_expect_eq(lct_mrc_hit_ratio(m, 2), 2.0 / 3);
    cr_expect_eq(lct_mrc_byte_hit_ratio(m, 19), 1.0 / 3);
    cr_expect_eq(lct_mrc_byte_hit_ratio(m, 20), 2.0 / 3);
    lct_mrc_totals t;
    lct_mrc_totals_get(m, &t);
    cr_expect_eq(t.compulsory_misses, 1);
    cr_expect_eq(t.writes, 2);
    cr_expect_eq(t.distinct_keys, 2);
    cr_expect_eq(lct_mrc_max_distance(m), 1);
    lct_mrc_free(m);
    cr_expect_eq(lct_mrc_compute(r, 0, &m, NULL), LCT_ERR_INVALID);
    cr_expect_eq(lct_mrc_compute(r, 1.5, &m, NULL), LCT_ERR_INVALID);
    lct_refs_free(r);
}

Test(mrc, shards_sampling_is_close_to_exact)
{
    size_t n = 400000;
    ref *v = stream(n, 40000, 99);
    lct_refs *r = refs_of(v, n);
    lct_mrc *exact, *sampled;
    cr_assert_eq(lct_mrc_compute(r, 1, &exact, NULL), LCT_OK);
    cr_assert_eq(lct_mrc_compute(r, 0.1, &sampled, NULL), LCT_OK);
    lct_mrc_totals t;
    lct_mrc_totals_get(sampled, &t);
    cr_expect_eq(t.sample_rate, 0.1);
    cr_expect(t.reads > 20000 && t.reads < 40000, "%llu kept reads",
              (unsigned long long)t.reads);
    /* At capacities the sample resolves (1/rate keys and up), doubling,
     * and evenly spaced up to the largest distance. */
    double err = 0, even = 0;
    int points = 0;
    for (uint64_t c = 10; c < 100000; c *= 2, points++)
        err += fabs(lct_mrc_hit_ratio(exact, c) - lct_mrc_hit_ratio(sampled, c));
    uint64_t top = lct_mrc_max_distance(exact) + 1;
    for (uint64_t i = 1; i <= 100; i++)
        even += fabs(lct_mrc_hit_ratio(exact, top * i / 100) -
                     lct_mrc_hit_ratio(sampled, top * i / 100));
    cr_expect_lt(err / points, 0.02, "mean absolute error %f", err / points);
    cr_expect_lt(even / 100, 0.02, "evenly spaced: %f", even / 100);
    lct_mrc_free(exact);
    lct_mrc_free(sampled);
    lct_refs_free(r);
    free(v);
}

/* The sink's bytes gathered in *ctx (NULL to start), grown by doubling:
 * a realloc a write copied the whole export each time under ASan,
 * minutes on a 60 MB export. */
static int collect(void *ctx, const char *data, size_t len)
{
    char **buf = ctx;
    static size_t used, cap;
    if (!*buf)
        used = cap = 0;
    if (used + len + 1 > cap) {
        cap = 2 * cap > used + len + 1 ? 2 * cap : used + len + 1;
        *buf = realloc(*buf, cap);
        cr_assert_not_null(*buf);
    }
    memcpy(*buf + used, data, len);
    used += len;
    return 0;
}

static uint64_t le(const unsigned char *p, unsigned bytes)
{
    uint64_t x = 0;
    for (unsigned i = 0; i < bytes; i++)
        x |= (uint64_t)p[i] << (8 * i);
    return x;
}

Test(mrc, oracle_general_records)
{
    lct_refs *r;
    cr_assert_eq(lct_refs_new(&r), LCT_OK);
    lct_refs_add(r, 7, 100, 1.9, true);
    lct_refs_add(r, 8, 0, 2.5, false);          /* size unknown: 1 */
    lct_refs_add(r, 7, 1ull << 40, 3e10, true); /* saturated size, time */
    lct_refs_add(r, 8, 5, -1, true);
    char *buf = NULL;
    cr_assert_eq(lct_refs_write_oracle_general(r, collect, &buf, NULL, NULL),
                 LCT_OK);
    const unsigned char *p = (const unsigned char *)buf;
    /* Next accesses count from 1; id 8's first reference says no size,
     * its second says 5, so both weigh 5. */
    static const uint64_t want[4][4] = {{1, 7, 100, 3},
                                        {2, 8, 5, 4},
                                        {UINT32_MAX, 7, UINT32_MAX, UINT64_MAX},
                                        {0, 8, 5, UINT64_MAX}};
    for (int i = 0; i < 4; i++, p += 24) {
        cr_expect_eq(le(p, 4), want[i][0], "record %d timestamp", i);
        cr_expect_eq(le(p + 4, 8), want[i][1], "record %d obj_id", i);
        cr_expect_eq(le(p + 12, 4), want[i][2], "record %d size", i);
        cr_expect_eq(le(p + 16, 8), want[i][3], "record %d next", i);
    }
    free(buf);
    lct_refs_free(r);
}

Test(mrc, append_moves_references_in_order)
{
    lct_refs *a, *b, *c;
    cr_assert_eq(lct_refs_new(&a), LCT_OK);
    cr_assert_eq(lct_refs_new(&b), LCT_OK);
    cr_assert_eq(lct_refs_new(&c), LCT_OK);
    for (uint64_t i = 0; i < 5000; i++)
        lct_refs_add(i < 3000 ? b : c, i, 1, 0, true);
    cr_assert_eq(lct_refs_append(a, b), LCT_OK); /* into an empty one */
    cr_assert_eq(lct_refs_append(a, c), LCT_OK);
    cr_expect_eq(lct_refs_count(a), 5000);
    cr_expect_eq(lct_refs_count(b), 0);
    cr_expect_eq(lct_refs_count(c), 0);
    cr_assert_eq(lct_refs_append(a, c), LCT_OK); /* an empty one: nothing */
    /* Added after the appends: after what was appended. */
    for (uint64_t i = 5000; i < 5100; i++)
        lct_refs_add(a, i, 1, 0, true);
    lct_refs_add(b, 7, 1, 0, true); /* the emptied one is usable */
    cr_expect_eq(lct_refs_count(b), 1);
    /* Order kept: every id once, so 5100 compulsory misses. */
    lct_mrc *m;
    cr_assert_eq(lct_mrc_compute(a, 1, &m, NULL), LCT_OK);
    lct_mrc_totals t;
    lct_mrc_totals_get(m, &t);
    cr_expect_eq(t.compulsory_misses, 5100);
    lct_mrc_free(m);
    char *buf = NULL;
    cr_assert_eq(lct_refs_write_oracle_general(a, collect, &buf, NULL, NULL), LCT_OK);
    for (uint64_t i = 0; i < 5100; i++)
        cr_assert_eq(le((unsigned char *)buf + 24 * i + 4, 8), i);
    free(buf);
    lct_refs_free(a);
    lct_refs_free(b);
    lct_refs_free(c);
}

Test(mrc, references_span_several_blocks)
{
    /* 2.5 blocks of 2^20, in two streams joined: ids cycle through 1000
     * keys, so after the first round every read is at distance 999. */
    lct_refs *a, *b;
    cr_assert_eq(lct_refs_new(&a), LCT_OK);
    cr_assert_eq(lct_refs_new(&b), LCT_OK);
    uint64_t n = 5 * ((uint64_t)1 << 19);
    for (uint64_t i = 0; i < n; i++)
        cr_assert_eq(lct_refs_add(i < n / 3 ? a : b, i % 1000, 8, 0, true),
                     LCT_OK);
    cr_assert_eq(lct_refs_append(a, b), LCT_OK); /* a is not empty: two parts */
    cr_assert_eq(lct_refs_count(a), n);
    lct_mrc *m;
    cr_assert_eq(lct_mrc_compute(a, 1, &m, NULL), LCT_OK);
    cr_expect_eq(lct_mrc_hit_ratio(m, 999), 0);
    cr_expect_eq(lct_mrc_hit_ratio(m, 1000), (double)(n - 1000) / (double)n);
    cr_expect_eq(lct_mrc_byte_hit_ratio(m, 8000), (double)(n - 1000) / (double)n);
    cr_expect_eq(lct_mrc_byte_hit_ratio(m, 7999), 0);
    lct_mrc_free(m);
    char *buf = NULL;
    cr_assert_eq(lct_refs_write_oracle_general(a, collect, &buf, NULL, NULL), LCT_OK);
    static const uint64_t probe[] = {0, 999, 873812, 873813, 1048575, 1048576,
                                     2097151}; /* 873813: the second part */
    for (size_t k = 0; k < sizeof probe / sizeof *probe; k++) {
        const unsigned char *p = (unsigned char *)buf + 24 * probe[k];
        cr_expect_eq(le(p + 4, 8), probe[k] % 1000);
        cr_expect_eq(le(p + 16, 8), probe[k] + 1001, "next of %llu",
                     (unsigned long long)probe[k]);
    }
    cr_expect_eq(le((unsigned char *)buf + 24 * (n - 1) + 16, 8), UINT64_MAX);
    free(buf);
    lct_refs_free(a);
    lct_refs_free(b);
}

/* 2.5 blocks of references in two parts, each key's size changing from
 * one reference to the next; with `sizeless`, one more reference, to a
 * key seen before, without a size. */
static lct_refs *blocks_refs(bool sizeless)
{
    lct_refs *a, *b;
    cr_assert_eq(lct_refs_new(&a), LCT_OK);
    cr_assert_eq(lct_refs_new(&b), LCT_OK);
    uint64_t n = 5 * ((uint64_t)1 << 19);
    for (uint64_t i = 0; i < n; i++)
        cr_assert_eq(lct_refs_add(i < n / 3 ? a : b, i % 1000 * 77,
                                  8 + i % 3, (double)i, i % 4 != 0),
                     LCT_OK);
    cr_assert_eq(lct_refs_append(a, b), LCT_OK);
    lct_refs_free(b);
    if (sizeless)
        cr_assert_eq(lct_refs_add(a, 500 * 77, 0, (double)n, true), LCT_OK);
    return a;
}

/* Their oracleGeneral bytes. */
static char *blocks_exported(bool sizeless, size_t *len)
{
    lct_refs *a = blocks_refs(sizeless);
    char *buf = NULL;
    cr_assert_eq(lct_refs_write_oracle_general(a, collect, &buf, NULL, NULL),
                 LCT_OK);
    *len = 24 * lct_refs_count(a);
    lct_refs_free(a);
    return buf;
}

/* The export finds next positions two ways: backward through one map
 * when every reference has a size, else through key numbers (on several
 * threads when there are CPUs for them).  A reference with no size
 * takes the numbered way: it changes only its own record and its
 * predecessor's next, on one thread and on every CPU alike. */
Test(mrc, oracle_general_is_the_same_with_or_without_key_numbers)
{
    size_t len, len_one, len_all;
    char *sized = blocks_exported(false, &len);
    cpu_set_t all;
    pin_to_one_cpu(&all);
    char *one = blocks_exported(true, &len_one); /* numbered, one thread */
    unpin(&all);
    char *every = blocks_exported(true, &len_all); /* numbered, threads */
    cr_assert_eq(len_one, len + 24);
    cr_assert_eq(len_all, len_one);
    cr_assert_eq(memcmp(one, every, len_one), 0);

    size_t n = len / 24, before = n;
    while (before-- > 0 && le((unsigned char *)sized + 24 * before + 4, 8) !=
                               500 * 77)
        ;
    cr_assert_lt(before, n, "the key was seen before");
    for (size_t i = 0; i < n; i++)
        if (i != before)
            cr_assert_eq(memcmp(sized + 24 * i, one + 24 * i, 24), 0,
                         "record %zu", i);
    const unsigned char *prev = (unsigned char *)one + 24 * before;
    const unsigned char *end = (unsigned char *)one + 24 * n;
    cr_expect_eq(le((unsigned char *)sized + 24 * before + 16, 8),
                 UINT64_MAX);
    cr_expect_eq(le(prev + 16, 8), n + 1); /* 1-based */
    cr_expect_eq(le(end + 4, 8), 500 * 77);
    cr_expect_eq(le(end + 12, 4), le(prev + 12, 4)); /* the latest size */
    cr_expect_eq(le(end + 16, 8), UINT64_MAX);
    free(sized);
    free(one);
    free(every);
}

/* A field of the mapping that holds p in /proc/self/smaps: a size in kB
 * ("Rss", "AnonHugePages"; -1: not found), or for "VmFlags" whether
 * `flag` is among them (1) or not (0). */
static long smaps_at(const void *p, const char *field, const char *flag)
{
    FILE *f = fopen("/proc/self/smaps", "r");
    cr_assert_not_null(f);
    char line[512];
    bool inside = false;
    long kb = -1;
    size_t n = strlen(field);
    while (fgets(line, sizeof line, f)) {
        unsigned long lo, hi;
        if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2 && strchr(line, '-') &&
            line[0] != ' ') {
            inside = (uintptr_t)p >= lo && (uintptr_t)p < hi;
            continue;
        }
        if (!inside || strncmp(line, field, n) != 0 || line[n] != ':')
            continue;
        if (flag) { /* "VmFlags: rd wr mr mw me ac hg" */
            char want[8];
            snprintf(want, sizeof want, " %s", flag);
            size_t w = strlen(want);
            const char *at = line + n + 1;
            kb = 0;
            while ((at = strstr(at, want)) != NULL)
                if (at[w] == ' ' || at[w] == '\n') {
                    kb = 1;
                    break;
                } else {
                    at += w;
                }
        } else if (sscanf(line + n + 1, " %ld kB", &kb) != 1) {
            kb = -1;
        }
        break;
    }
    fclose(f);
    return kb;
}

/* How often the kernel has given 4 KiB pages where a 2 MiB one was asked
 * for (/proc/vmstat's thp_fault_fallback; 0 when it does not say). */
static unsigned long long thp_fallbacks(void)
{
    return proc_counter("/proc/vmstat", "thp_fault_fallback %llu");
}

/* Large arrays on 2 MiB pages (where the probe finds them cheaper) hold
 * the same references: forced on and off, the export is the same, and
 * forced on, a large block is aligned and, where the kernel lends such
 * pages on request, backed by them. */
Test(mrc, references_are_the_same_on_2_mib_pages)
{
    size_t len_small, len_huge;
    lct__huge_pages_decide(0);
    char *small = blocks_exported(false, &len_small);
    lct__huge_pages_decide(1);
    char *huge = blocks_exported(false, &len_huge);
    cr_assert_eq(len_small, len_huge);
    cr_assert_eq(memcmp(small, huge, len_small), 0);
    free(small);
    free(huge);

    size_t bytes = (size_t)8 << 20;
    unsigned char *p = lct__big_alloc(bytes);
    cr_assert_not_null(p);
    cr_assert_eq((uintptr_t)p % ((uintptr_t)2 << 20), 0, "2 MiB aligned");
    /* Asked for (the kernel's part is its own): */
    cr_expect_eq(smaps_at(p, "VmFlags", "hg"), 1, "no MADV_HUGEPAGE");
    /* Memory the heap had already touched keeps its 4 KiB pages (with
     * eight of these tests at once, one in four got such memory), and a
     * kernel short of free 2 MiB pages gives 4 KiB ones and counts it. */
    bool fresh = smaps_at(p, "Rss", NULL) == 0;
    unsigned long long declined = thp_fallbacks();
    memset(p, 1, bytes);
    declined = thp_fallbacks() - declined;
    char mode[128] = "";
    FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");
    if (f) {
        if (!fgets(mode, sizeof mode, f))
            mode[0] = 0;
        fclose(f);
    }
    if ((strstr(mode, "[always]") || strstr(mode, "[madvise]")) && fresh &&
        declined == 0)
        cr_expect_gt(smaps_at(p, "AnonHugePages", NULL), 0,
                     "no 2 MiB page (THP: %s)", mode);
    free(p);
    lct__huge_pages_decide(-1);
}

/* lct__big_grow keeps what an array holds when it moves onto 2 MiB
 * pages, and refuses a count whose bytes pass size_t, leaving the array
 * as it was. */
Test(mrc, a_grown_array_keeps_its_elements_and_refuses_overflow)
{
    lct__huge_pages_decide(1);
    uint64_t *a = lct__big_grow(NULL, 0, 1000, sizeof *a);
    cr_assert_not_null(a);
    for (uint64_t i = 0; i < 1000; i++)
        a[i] = i * 7;
    uint64_t *b = lct__big_grow(a, 1000, 600000, sizeof *b);
    cr_assert_not_null(b);
    cr_expect_eq((uintptr_t)b % ((uintptr_t)2 << 20), 0, "2 MiB aligned");
    for (uint64_t i = 0; i < 1000; i++)
        cr_assert_eq(b[i], i * 7);
    cr_expect_null(lct__big_grow(b, 1000, UINT64_MAX / 4, sizeof *b));
    cr_expect_eq(b[999], 999 * 7, "left as it was");
    free(b);
    lct__huge_pages_decide(-1);
}

/* lct__big_grow doubling an array, with 2 MiB pages on and off: past
 * 256 KiB the array is on 2 MiB boundaries only where they are asked
 * for, and what it held is kept either way. */
Test(mrc, a_large_array_keeps_its_elements_on_either_pages)
{
    for (int huge = 0; huge <= 1; huge++) {
        lct__huge_pages_decide(huge);
        uint32_t *a = lct__big_grow(NULL, 0, 64, sizeof *a);
        cr_assert_not_null(a);
        size_t n = 0, cap = 64;
        while (n < 100000) {
            if (n == cap) {
                uint32_t *g = lct__big_grow(a, n, cap * 2, sizeof *g);
                cr_assert_not_null(g);
                a = g, cap *= 2;
            }
            a[n] = (uint32_t)(n * 2654435761u);
            n++;
        }
        if (huge)
            cr_expect_eq((uintptr_t)a % ((uintptr_t)2 << 20), 0,
                         "512 KiB on 2 MiB pages");
        for (size_t i = 0; i < n; i++)
            cr_assert_eq(a[i], (uint32_t)(i * 2654435761u), "element %zu", i);
        cr_expect_null(lct__big_grow(a, n, SIZE_MAX / 2, sizeof *a));
        cr_expect_eq(a[n - 1], (uint32_t)((n - 1) * 2654435761u));
        free(a);
    }
    lct__huge_pages_decide(-1);
}

/* Where 2 MiB pages pay, an array takes them from 256 KiB: a stream's
 * first block, doubling from 4,096 references, moves onto them at
 * 16,384 (256 KiB) and keeps every reference it held; a map's table
 * and a grown array do the same at that size. */
Test(mrc, arrays_move_to_2_mib_pages_from_256_kib)
{
    const uintptr_t huge = (uintptr_t)2 << 20;
    lct__huge_pages_decide(1);
    lct_refs *r;
    cr_assert_eq(lct_refs_new(&r), LCT_OK);
    for (uint64_t i = 0; i < 20000; i++) {
        cr_assert_eq(lct_refs_add(r, i * 3 + 1, 100 + i, (double)i, i % 2),
                     LCT_OK);
        if (i == 8192) /* the 8,193rd: block 0 grew to 16,384 */
            cr_expect_eq((uintptr_t)r->parts[0].blocks[0] % huge, 0,
                         "block 0 of 256 KiB is not 2 MiB aligned");
    }
    for (uint64_t i = 0; i < 20000; i++) {
        const lct__ref *ref = lct__part_at(&r->parts[0], i);
        cr_assert_eq(ref->obj_id, i * 3 + 1, "reference %llu",
                     (unsigned long long)i);
        cr_assert_eq(ref->seconds, i);
        cr_assert_eq(ref->size & ~(LCT__REF_READ | LCT__REF_CALL |
                                   LCT__REF_POSITION),
                     100 + i);
        cr_assert_eq(!!(ref->size & LCT__REF_READ), i % 2);
    }
    lct_refs_free(r);
    void *table = lct__big_calloc(16384, 16); /* a 16 Ki-slot map's */
    cr_assert_not_null(table);
    cr_expect_eq((uintptr_t)table % huge, 0);
    free(table);
    lct__huge_pages_decide(-1);
}

/* The page probe's reading of a measurement: under half the 4 KiB
 * pages' time is a yes, not cheaper a no, and cheaper but not clearly
 * (4.2 ms against 8 ms, as a 2 MiB page of memory fresh to the host took
 * once) is measured again. */
Test(mrc, the_page_probe_measures_again_when_unclear)
{
    cr_expect_eq(lct__huge_pages_judge(8000000, 140000), 1);
    cr_expect_eq(lct__huge_pages_judge(8000000, 4200000), -1);
    cr_expect_eq(lct__huge_pages_judge(8000000, 8000000), 0);
    cr_expect_eq(lct__huge_pages_judge(8000000, 9000000), 0);
    cr_expect_eq(lct__huge_pages_judge(9, 4), 1);
    cr_expect_eq(lct__huge_pages_judge(9, 5), -1);
    cr_expect_eq(lct__huge_pages_judge(UINT64_MAX, UINT64_MAX / 2), 1,
                 "no overflow");
}

/* libCacheSim's traceConv numbers requests from 1: in A, B, A the first
 * A's next access is 3 (it was written as 2, one off from every trace
 * libCacheSim converts itself). */
Test(mrc, oracle_general_next_access_counts_from_one)
{
    lct_refs *r;
    cr_assert_eq(lct_refs_new(&r), LCT_OK);
    lct_refs_add(r, 0xA, 10, 0, true);
    lct_refs_add(r, 0xB, 10, 0, true);
    lct_refs_add(r, 0xA, 10, 0, true);
    char *buf = NULL;
    cr_assert_eq(lct_refs_write_oracle_general(r, collect, &buf, NULL, NULL),
                 LCT_OK);
    const unsigned char *p = (const unsigned char *)buf;
    cr_expect_eq(le(p + 16, 8), 3, "A, B, A: the first A's next is 3");
    cr_expect_eq(le(p + 24 + 16, 8), UINT64_MAX);
    cr_expect_eq(le(p + 48 + 16, 8), UINT64_MAX);
    free(buf);
    lct_refs_free(r);
}

/* Every reference weighs its key's size as the trace knows it: the size
 * before it, else the one after it; 1 only for a key never sized, and
 * those are counted. */
Test(mrc, oracle_general_sizes_are_the_keys)
{
    lct_refs *r;
    cr_assert_eq(lct_refs_new(&r), LCT_OK);
    lct_refs_add(r, 1, 0, 0, false);   /* 1: sized later (300) */
    lct_refs_add(r, 2, 0, 0, false);   /* 2: never sized */
    lct_refs_add(r, 1, 300, 0, true);
    lct_refs_add(r, 1, 0, 0, true);    /* keeps 300 */
    lct_refs_add(r, 1, 700, 0, true);  /* a new size */
    lct_refs_add(r, 1, 0, 0, true);    /* keeps 700 */
    lct_refs_add(r, 2, 0, 0, true);
    char *buf = NULL;
    uint64_t unsized = 99;
    cr_assert_eq(lct_refs_write_oracle_general(r, collect, &buf, &unsized,
                                               NULL),
                 LCT_OK);
    cr_expect_eq(unsized, 2, "the write counts what it wrote as 1 byte");
    static const uint64_t size[] = {300, 1, 300, 300, 700, 700, 1};
    for (int i = 0; i < 7; i++)
        cr_expect_eq(le((unsigned char *)buf + 24 * i + 12, 4), size[i],
                     "reference %d", i);
    cr_expect_eq(lct_refs_count_unsized(r), 2);
    free(buf);
    lct_refs_free(r);
}

/* Reads are requests and writes only warm the cache, or (as libCacheSim's
 * cachesim counts) every reference is a request: W(A) R(A) R(B) W(B). */
Test(mrc, every_reference_counts_writes_as_requests)
{
    lct_refs *r;
    cr_assert_eq(lct_refs_new(&r), LCT_OK);
    lct_refs_add(r, 1, 10, 0, false);
    lct_refs_add(r, 1, 10, 0, true);
    lct_refs_add(r, 2, 10, 0, true);
    lct_refs_add(r, 2, 10, 0, false);
    lct_mrc *reads, *every;
    lct_mrc_options o = {.sample_rate = 1};
    cr_assert_eq(lct_mrc_compute_with(r, &o, &reads, NULL), LCT_OK);
    o.every_reference = true;
    cr_assert_eq(lct_mrc_compute_with(r, &o, &every, NULL), LCT_OK);
    lct_mrc_totals t;
    lct_mrc_totals_get(reads, &t);
    cr_expect_eq(t.reads, 2);
    cr_expect_eq(t.writes, 2);
    cr_expect(!t.every_reference);
    cr_expect_eq(lct_mrc_hit_ratio(reads, 1), 0.5, "R(A) hits, R(B) misses");
    lct_mrc_totals_get(every, &t);
    cr_expect_eq(t.reads, 4);
    cr_expect_eq(t.writes, 0);
    cr_expect(t.every_reference);
    cr_expect_eq(lct_mrc_hit_ratio(every, 1), 0.5, "R(A), W(B) hit of 4");
    cr_expect_eq(t.compulsory_misses, 2);
    lct_mrc_free(reads);
    lct_mrc_free(every);
    lct_refs_free(r);
}

/* A seed salts the sample: the same seed draws the same keys, another an
 * independent set; what was kept and the adjustment are reported. */
Test(mrc, seeds_draw_samples_and_report_them)
{
    lct_refs *r;
    cr_assert_eq(lct_refs_new(&r), LCT_OK);
    for (uint64_t i = 0; i < 200000; i++) /* well mixed ids, reused */
        lct_refs_add(r, (i % 5000) * 0x9e3779b97f4a7c15ull, 10, 0, true);
    lct_mrc_options o = {.sample_rate = 0.1, .seed = 7};
    lct_mrc *a, *b, *c;
    cr_assert_eq(lct_mrc_compute_with(r, &o, &a, NULL), LCT_OK);
    cr_assert_eq(lct_mrc_compute_with(r, &o, &b, NULL), LCT_OK);
    o.seed = 8;
    cr_assert_eq(lct_mrc_compute_with(r, &o, &c, NULL), LCT_OK);
    lct_mrc_totals ta, tb, tc;
    lct_mrc_totals_get(a, &ta);
    lct_mrc_totals_get(b, &tb);
    lct_mrc_totals_get(c, &tc);
    cr_expect_eq(ta.kept_references, tb.kept_references);
    cr_expect_eq(ta.seed, 7);
    cr_expect_eq(ta.references, 200000);
    /* Other seeds, other samples: their sizes are not all one. */
    uint64_t sizes[10];
    int distinct = 0;
    for (uint64_t s = 0; s < 10; s++) {
        lct_mrc *m;
        o.seed = 100 + s;
        cr_assert_eq(lct_mrc_compute_with(r, &o, &m, NULL), LCT_OK);
        lct_mrc_totals t;
        lct_mrc_totals_get(m, &t);
        sizes[s] = t.kept_references;
        bool seen = false;
        for (uint64_t j = 0; j < s; j++)
            seen = seen || sizes[j] == sizes[s];
        distinct += !seen;
        lct_mrc_free(m);
    }
    cr_expect_geq(distinct, 4, "ten seeds drew %d sample sizes", distinct);
    /* About a tenth of the keys, each with its 40 references. */
    cr_expect(ta.kept_references > 14000 && ta.kept_references < 26000,
              "%llu", (unsigned long long)ta.kept_references);
    cr_expect_eq(ta.adjustment, 200000 * 0.1 - (double)ta.reads);
    for (uint64_t cap = 10; cap < 10000; cap *= 3)
        cr_expect_eq(lct_mrc_hit_ratio(a, cap), lct_mrc_hit_ratio(b, cap));
    lct_mrc_free(a);
    lct_mrc_free(b);
    lct_mrc_free(c);
    lct_refs_free(r);
}

/* The points lct mrc shows: capacities 1, 2, 3, 4, 6, 8, 11, ... to past
 * the largest distance; one sample's ratios are the curve's own; several
 * samples give their mean (added smallest first) and their band. */
Test(mrc, curve_points_are_log_spaced_means_of_the_samples)
{
    size_t n = 20000;
    ref *v = stream(n, 3000, 7);
    lct_refs *refs = refs_of(v, n);
    lct_mrc *one;
    cr_assert_eq(lct_mrc_compute(refs, 1.0, &one, NULL), LCT_OK);
    lct_mrc_curve c;
    cr_assert_eq(lct_mrc_curve_make(&one, 1, &c, NULL), LCT_OK);
    static const uint64_t first[] = {1, 2, 3, 4, 6, 8, 11, 16, 23, 32};
    cr_assert_gt(c.n, 10);
    for (size_t i = 0; i < 10; i++)
        cr_expect_eq(c.keys[i], first[i], "point %zu", i);
    cr_expect_geq(c.keys[c.n - 1], lct_mrc_max_distance(one) + 1);
    cr_expect_lt(c.keys[c.n - 2], lct_mrc_max_distance(one) + 1);
    for (size_t i = 0; i < c.n; i++)
        cr_expect_eq(c.hit[i], lct_mrc_hit_ratio(one, c.keys[i]));
    cr_expect_null(c.hit_min, "one sample has no band");
    lct_mrc_curve_free(&c);

    lct_mrc *ms[3];
    for (unsigned s = 0; s < 3; s++) {
        lct_mrc_options o = {.sample_rate = 0.25, .seed = 10 + s};
        cr_assert_eq(lct_mrc_compute_with(refs, &o, &ms[s], NULL), LCT_OK);
    }
    cr_assert_eq(lct_mrc_curve_make(ms, 3, &c, NULL), LCT_OK);
    cr_expect_eq(c.keys[0], 4, "1/R keys is the least resolved");
    cr_assert_not_null(c.hit_min);
    for (size_t i = 0; i < c.n; i++) {
        double r[3];
        for (unsigned s = 0; s < 3; s++)
            r[s] = lct_mrc_hit_ratio(ms[s], c.keys[i]);
        for (int a = 0; a < 2; a++) /* sorted, as they are added */
            for (int b = 0; b < 2 - a; b++)
                if (r[b] > r[b + 1]) {
                    double t = r[b];
                    r[b] = r[b + 1];
                    r[b + 1] = t;
                }
        double lo = r[0], hi = r[2];
        cr_expect_eq(c.hit[i], (r[0] + r[1] + r[2]) / 3, "point %zu", i);
        cr_expect_eq(c.hit_min[i], lo);
        cr_expect_eq(c.hit_max[i], hi);
    }
    lct_mrc_curve_free(&c);
    lct_mrc_curve_free(&c); /* emptied: a second free does nothing */
    lct_error err;
    cr_expect_eq(lct_mrc_curve_make(ms, 0, &c, &err), LCT_ERR_INVALID);
    cr_expect_eq(lct_mrc_curve_make(NULL, 1, &c, &err), LCT_ERR_INVALID);
    for (unsigned s = 0; s < 3; s++)
        lct_mrc_free(ms[s]);
    lct_mrc_free(one);
    lct_refs_free(refs);
    free(v);
}

/* A reference holds its size in 31 bits; larger ones are kept aside and
 * must come back whole, at the boundary too, across an append. */
Test(mrc, sizes_past_31_bits_come_back_whole)
{
    static const uint64_t size[] = {0x7ffffffeull, 0x7fffffffull,
                                    0x80000000ull, 3ull << 30,
                                    5ull << 40, 1};
    lct_refs *a, *b;
    cr_assert_eq(lct_refs_new(&a), LCT_OK);
    cr_assert_eq(lct_refs_new(&b), LCT_OK);
    for (int i = 0; i < 6; i++) /* keys 0..5, then each again as a read */
        cr_assert_eq(lct_refs_add(i < 3 ? a : b, (uint64_t)i + 1, size[i], 0,
                                  false), LCT_OK);
    cr_assert_eq(lct_refs_append(a, b), LCT_OK);
    for (int i = 0; i < 6; i++)
        cr_assert_eq(lct_refs_add(a, (uint64_t)i + 1, 0, 0, true), LCT_OK);
    char *buf = NULL;
    cr_assert_eq(lct_refs_write_oracle_general(a, collect, &buf, NULL, NULL),
                 LCT_OK);
    for (int i = 0; i < 12; i++) {
        uint64_t want = size[i % 6] > UINT32_MAX ? UINT32_MAX : size[i % 6];
        cr_expect_eq(le((unsigned char *)buf + 24 * i + 12, 4), want,
                     "reference %d", i);
    }
    free(buf);
    lct_mrc *m;
    cr_assert_eq(lct_mrc_compute(a, 1, &m, NULL), LCT_OK);
    lct_mrc_totals t;
    lct_mrc_totals_get(m, &t);
    cr_expect_eq(t.max_key_bytes, 5ull << 40);
    cr_expect_eq(t.min_key_bytes, 1);
    uint64_t all = 0;
    for (int i = 0; i < 6; i++)
        all += size[i];
    /* Each read comes after the other five keys: all six fit in `all`
     * bytes, and one byte less loses the first read at least. */
    cr_expect_eq(lct_mrc_byte_hit_ratio(m, all), 1.0);
    cr_expect_lt(lct_mrc_byte_hit_ratio(m, all - 1), 1.0);
    lct_mrc_free(m);
    lct_refs_free(a);
    lct_refs_free(b);
}

/* MARK: the prefix rule */

/* A stream of calls: each a run of reads or writes of 0 to 8 keys
 * (skewed, with a key sometimes twice in a call), and keys_per_position
 * 1 to 3 for each call; call[i] is the index its call began at. */
typedef struct calls {
    ref *v;
    size_t n, ncalls;
    size_t *start, *len;
    unsigned *per_position;
} calls;

static calls call_stream(size_t ncalls, uint64_t universe, uint64_t seed)
{
    rng_state = seed;
    calls c = {calloc(ncalls * 8 + 1, sizeof(ref)), 0, ncalls,
               calloc(ncalls, sizeof(size_t)), calloc(ncalls, sizeof(size_t)),
               calloc(ncalls, sizeof(unsigned))};
    for (size_t k = 0; k < ncalls; k++) {
        bool read = rng() % 3 != 0;
        size_t len = rng() % 9;
        c.start[k] = c.n;
        c.len[k] = len;
        c.per_position[k] = 1 + (unsigned)(rng() % 3);
        for (size_t j = 0; j < len; j++) {
            double u = (double)(rng() >> 11) / 9007199254740992.0;
            uint64_t id = id_of((uint64_t)(u * u * (double)universe));
            if (j > 0 && rng() % 6 == 0)
                id = c.v[c.n - 1].id;
            c.v[c.n++] = (ref){id, 1 + id % 1000, read};
        }
    }
    return c;
}

static lct_refs *refs_of_calls(const calls *c)
{
    lct_refs *r;
    cr_assert_eq(lct_refs_new(&r), LCT_OK);
    for (size_t k = 0; k < c->ncalls; k++) {
        for (size_t j = 0; j < c->len[k]; j++) {
            const ref *x = &c->v[c->start[k] + j];
            cr_assert_eq(lct_refs_add(r, x->id, x->bytes, 0, x->read), LCT_OK);
        }
        cr_assert_eq(lct_refs_end_call(r, c->per_position[k]), LCT_OK);
    }
    return r;
}

/* One LRU of `cap` keys (or bytes), most recent first: whether id was in
 * it, then id made the most recent. */
typedef struct lru {
    uint64_t *id, *size, total;
    size_t len;
} lru;

static bool lru_access(lru *l, uint64_t id, uint64_t size, uint64_t cap,
                       bool bytes_mode)
{
    size_t at = l->len;
    for (size_t j = 0; j < l->len; j++)
        if (l->id[j] == id) {
            at = j;
            break;
        }
    bool hit = at < l->len;
    if (hit) {
        l->total -= l->size[at];
        memmove(l->id + 1, l->id, at * sizeof *l->id);
        memmove(l->size + 1, l->size, at * sizeof *l->size);
    } else {
        memmove(l->id + 1, l->id, l->len * sizeof *l->id);
        memmove(l->size + 1, l->size, l->len * sizeof *l->size);
        l->len++;
    }
    l->id[0] = id;
    l->size[0] = size;
    l->total += size;
    while (l->len > 0 && (bytes_mode ? l->total > cap : l->len > cap))
        l->total -= l->size[--l->len];
    return hit;
}

/* The prefix rule simulated at one capacity: each read call's hits are
 * its leading run of keys found, each key looked up as the call reaches
 * it (every reference updates the cache in order); *positions_hit counts
 * the chunk positions inside that run. */
static uint64_t brute_prefix(const calls *c, uint64_t cap, bool bytes_mode,
                             uint64_t *positions_hit)
{
    lru l = {calloc(c->n + 1, 8), calloc(c->n + 1, 8), 0, 0};
    uint64_t hits = 0;
    *positions_hit = 0;
    for (size_t k = 0; k < c->ncalls; k++) {
        size_t run = 0;
        bool leading = true;
        for (size_t j = 0; j < c->len[k]; j++) {
            const ref *x = &c->v[c->start[k] + j];
            bool hit = lru_access(&l, x->id, x->bytes, cap, bytes_mode);
            if (x->read && leading && hit)
                run++;
            else
                leading = false;
        }
        hits += run;
        unsigned per = c->per_position[k];
        if (c->len[k] && c->v[c->start[k]].read)
            *positions_hit += run / per + (run == c->len[k] && run % per);
    }
    free(l.id);
    free(l.size);
    return hits;
}

/* LMCache's cache simulator (lmcache/tools/cache_simulator/simulator.py):
 * a lookup's hits are the leading run of chunks the cache contains,
 * checked before any is touched; then the run is accessed and the rest
 * inserted, in order.  On a stream of lookups alone, at one capacity. */
static uint64_t lmcache_simulator(const calls *c, uint64_t cap)
{
    lru l = {calloc(c->n + 1, 8), calloc(c->n + 1, 8), 0, 0};
    uint64_t hits = 0;
    for (size_t k = 0; k < c->ncalls; k++) {
        size_t run = 0;
        for (; run < c->len[k]; run++) {
            bool found = false;
            for (size_t j = 0; j < l.len && !found; j++)
                found = l.id[j] == c->v[c->start[k] + run].id;
            if (!found)
                break;
        }
        hits += run;
        for (size_t j = 0; j < c->len[k]; j++)
            lru_access(&l, c->v[c->start[k] + j].id, 1, cap, false);
    }
    free(l.id);
    free(l.size);
    return hits;
}

static lct_mrc *prefix_curve(lct_refs *r)
{
    lct_mrc_options o = {.sample_rate = 1, .prefix = true};
    lct_mrc *m;
    cr_assert_eq(lct_mrc_compute_with(r, &o, &m, NULL), LCT_OK);
    return m;
}

Test(mrc, prefix_curve_equals_a_brute_force_lru_at_every_capacity)
{
    for (uint64_t seed = 1; seed <= 3; seed++) {
        calls c = call_stream(400, 60, seed);
        lct_refs *r = refs_of_calls(&c);
        lct_mrc *m = prefix_curve(r);
        lct_mrc_totals t;
        lct_mrc_totals_get(m, &t);
        cr_assert(t.prefix);
        uint64_t reads = reads_of(c.v, c.n);
        cr_assert_eq(t.reads, reads);
        bool differs = false;
        for (uint64_t cap = 0; cap <= t.distinct_keys + 1; cap++) {
            uint64_t positions;
            uint64_t hits = brute_prefix(&c, cap, false, &positions);
            cr_expect_eq(lct_mrc_hit_ratio(m, cap), (double)hits / (double)reads,
                         "seed %llu, %llu keys", (unsigned long long)seed,
                         (unsigned long long)cap);
            cr_expect_eq(lct_mrc_position_hit_ratio(m, cap),
                         (double)positions / (double)t.positions,
                         "seed %llu, %llu keys: positions",
                         (unsigned long long)seed, (unsigned long long)cap);
            differs |= hits != brute_hits(c.v, c.n, cap, false);
        }
        cr_expect(differs, "the stream should tell the two rules apart");
        for (uint64_t b = 0; b < 40000; b = b * 3 / 2 + 7) {
            uint64_t positions;
            uint64_t hits = brute_prefix(&c, b, true, &positions);
            cr_expect_eq(lct_mrc_byte_hit_ratio(m, b),
                         (double)hits / (double)reads,
                         "seed %llu, %llu bytes", (unsigned long long)seed,
                         (unsigned long long)b);
            cr_expect_eq(lct_mrc_position_byte_hit_ratio(m, b),
                         (double)positions / (double)t.positions,
                         "seed %llu, %llu bytes: positions",
                         (unsigned long long)seed, (unsigned long long)b);
        }
        lct_mrc_free(m);
        lct_refs_free(r);
        free(c.v), free(c.start), free(c.len), free(c.per_position);
    }
}

/* A call's keys per chunk position are its distinct kv ranks: repeats
 * count once, a call with none counts 1, and past the maximum the rest
 * are not counted. */
Test(mrc, kv_ranks_count_each_rank_once)
{
    lct_kv_ranks ranks = {0};
    cr_expect_eq(lct_kv_ranks_count(&ranks), 1u);
    static const int64_t seen[] = {0, 1, 0, 1, -3, 1, 0};
    for (size_t i = 0; i < sizeof seen / sizeof *seen; i++)
        lct_kv_ranks_add(&ranks, seen[i]);
    cr_expect_eq(lct_kv_ranks_count(&ranks), 3u);
    ranks = (lct_kv_ranks){0};
    for (int64_t r = 0; r < LCT_KV_RANKS_MAX + 10; r++)
        lct_kv_ranks_add(&ranks, r);
    cr_expect_eq(lct_kv_ranks_count(&ranks), (unsigned)LCT_KV_RANKS_MAX);
}

Test(mrc, prefix_rule_on_lookups_alone_is_lmcache_simulators)
{
    calls c = call_stream(500, 50, 7);
    for (size_t i = 0; i < c.n; i++)
        c.v[i].read = true; /* its logs hold lookups alone */
    lct_refs *r = refs_of_calls(&c);
    lct_mrc *m = prefix_curve(r);
    for (uint64_t cap = 1; cap <= 60; cap++)
        cr_expect_eq(lct_mrc_hit_ratio(m, cap),
                     (double)lmcache_simulator(&c, cap) / (double)c.n,
                     "%llu keys", (unsigned long long)cap);
    lct_mrc_free(m);
    lct_refs_free(r);
    free(c.v), free(c.start), free(c.len), free(c.per_position);
}

/* Hand-made: writes A B C, a lookup of B, a write of D: at 3 keys D
 * evicts A, so a lookup of A B C finds only B, in the middle; per key
 * that is a hit, under the prefix rule none. */
Test(mrc, a_chunk_evicted_from_the_middle_counts_under_one_rule_only)
{
    uint64_t A = id_of(1), B = id_of(2), C = id_of(3), D = id_of(4);
    lct_refs *r;
    cr_assert_eq(lct_refs_new(&r), LCT_OK);
    struct { uint64_t id; bool read; int end; } s[] = {
        {A, false, 0}, {B, false, 0}, {C, false, 1}, {B, true, 1},
        {D, false, 1}, {A, true, 0}, {B, true, 0}, {C, true, 1}};
    for (size_t i = 0; i < sizeof s / sizeof *s; i++) {
        cr_assert_eq(lct_refs_add(r, s[i].id, 10, 0, s[i].read), LCT_OK);
        if (s[i].end)
            cr_assert_eq(lct_refs_end_call(r, 1), LCT_OK);
    }
    cr_assert_eq(lct_refs_end_call(r, 1), LCT_OK); /* an empty call */
    lct_mrc *key, *prefix = prefix_curve(r);
    cr_assert_eq(lct_mrc_compute(r, 1, &key, NULL), LCT_OK);
    cr_expect_eq(lct_mrc_hit_ratio(key, 3), 2.0 / 4);    /* B, and B */
    cr_expect_eq(lct_mrc_hit_ratio(prefix, 3), 1.0 / 4); /* the first B */
    cr_expect_eq(lct_mrc_hit_ratio(key, 4), 4.0 / 4);
    cr_expect_eq(lct_mrc_hit_ratio(prefix, 4), 4.0 / 4);
    lct_mrc_totals t;
    lct_mrc_totals_get(prefix, &t);
    cr_expect_eq(t.calls, 2);     /* the lookups; the empty call is none */
    cr_expect_eq(t.positions, 4); /* one key a position */
    cr_expect_eq(lct_mrc_position_hit_ratio(prefix, 3), 1.0 / 4);
    lct_mrc_free(key);
    lct_mrc_free(prefix);
    lct_refs_free(r);
}

/* A key twice in a call it first appears in: per key the second is a
 * hit; under the prefix rule the call's first key missed, so neither. */
Test(mrc, a_key_twice_in_its_first_call_is_no_prefix_hit)
{
    lct_refs *r;
    cr_assert_eq(lct_refs_new(&r), LCT_OK);
    cr_assert_eq(lct_refs_add(r, id_of(9), 1, 0, true), LCT_OK);
    cr_assert_eq(lct_refs_add(r, id_of(9), 1, 0, true), LCT_OK);
    cr_assert_eq(lct_refs_end_call(r, 1), LCT_OK);
    lct_mrc *key, *prefix = prefix_curve(r);
    cr_assert_eq(lct_mrc_compute(r, 1, &key, NULL), LCT_OK);
    cr_expect_eq(lct_mrc_hit_ratio(key, 10), 0.5);
    cr_expect_eq(lct_mrc_hit_ratio(prefix, 10), 0);
    lct_mrc_totals t;
    lct_mrc_totals_get(prefix, &t);
    cr_expect_eq(t.infinite_hit_ratio, 0);
    cr_expect_eq(t.compulsory_misses, 1);
    lct_mrc_free(key);
    lct_mrc_free(prefix);
    lct_refs_free(r);
}

/* Two kv ranks: a call of chunks 0 and 1, each as rank 0 then rank 1.
 * When only chunk 1's rank 1 key is gone, the leading run is 3 keys:
 * one whole chunk position of two. */
Test(mrc, kv_ranks_make_chunk_positions)
{
    uint64_t k[4] = {id_of(20), id_of(21), id_of(22), id_of(23)};
    lct_refs *r;
    cr_assert_eq(lct_refs_new(&r), LCT_OK);
    for (int i = 0; i < 3; i++) /* stored: all but chunk 1's rank 1 */
        cr_assert_eq(lct_refs_add(r, k[i], 1, 0, false), LCT_OK);
    cr_assert_eq(lct_refs_end_call(r, 2), LCT_OK);
    for (int i = 0; i < 4; i++)
        cr_assert_eq(lct_refs_add(r, k[i], 1, 0, true), LCT_OK);
    cr_assert_eq(lct_refs_end_call(r, 2), LCT_OK);
    lct_mrc *m = prefix_curve(r);
    lct_mrc_totals t;
    lct_mrc_totals_get(m, &t);
    cr_expect_eq(t.positions, 2);
    cr_expect_eq(lct_mrc_hit_ratio(m, 100), 3.0 / 4);
    cr_expect_eq(lct_mrc_position_hit_ratio(m, 100), 1.0 / 2);
    cr_expect_eq(lct_mrc_position_hit_ratio(m, 2), 0); /* rank 0 evicted */
    lct_mrc_free(m);
    lct_refs_free(r);
}

Test(mrc, the_prefix_rule_refuses_sampling)
{
    lct_refs *r;
    cr_assert_eq(lct_refs_new(&r), LCT_OK);
    cr_assert_eq(lct_refs_add(r, 1, 1, 0, true), LCT_OK);
    lct_mrc_options o = {.sample_rate = 0.5, .prefix = true};
    lct_mrc *m;
    lct_error err;
    cr_expect_eq(lct_mrc_compute_with(r, &o, &m, &err), LCT_ERR_INVALID);
    cr_expect(strstr(err.message, "prefix") != NULL);
    cr_expect_eq(lct_refs_end_call(r, 0), LCT_ERR_INVALID);
    lct_refs_free(r);
}

/* MARK: one capacity simulated (lct_sim_run) */

/* LMCache's simulator's statistics at one capacity in keys, by hand:
 * each read call's leading run as its keys are looked up in turn, the
 * LRU list updated by every reference. */
typedef struct sim_want {
    uint64_t calls, keys_hit, positions, positions_hit, no_hit, all_hit;
    uint64_t evictions, occupancy, max_position;
} sim_want;

static sim_want brute_sim(const calls *c, uint64_t cap)
{
    lru l = {calloc(c->n + 1, 8), calloc(c->n + 1, 8), 0, 0};
    sim_want w = {0};
    size_t distinct_seen = 0;
    uint64_t *seen = calloc(c->n + 1, 8);
    for (size_t k = 0; k < c->ncalls; k++) {
        size_t run = 0;
        bool leading = true, read = c->len[k] && c->v[c->start[k]].read;
        for (size_t j = 0; j < c->len[k]; j++) {
            const ref *x = &c->v[c->start[k] + j];
            size_t at = l.len;
            for (size_t i = 0; i < l.len; i++)
                if (l.id[i] == x->id)
                    at = i;
            bool hit = at < l.len;
            if (read && leading && hit) {
                run++;
                if (at > w.max_position)
                    w.max_position = at;
            } else {
                leading = false;
            }
            bool known = false;
            for (size_t i = 0; i < distinct_seen; i++)
                known |= seen[i] == x->id;
            if (!known)
                seen[distinct_seen++] = x->id;
            size_t before = l.len + !hit;
            lru_access(&l, x->id, 1, cap, false);
            w.evictions += before - l.len;
        }
        if (!read)
            continue;
        unsigned per = c->per_position[k];
        uint64_t positions = (c->len[k] + per - 1) / per;
        uint64_t hitp = run / per + (run == c->len[k] && run % per);
        w.calls++;
        w.keys_hit += run;
        w.positions += positions;
        w.positions_hit += hitp;
        w.no_hit += hitp == 0;
        w.all_hit += hitp == positions;
    }
    w.occupancy = l.len;
    free(l.id), free(l.size), free(seen);
    return w;
}

Test(sim, lmcache_simulators_statistics_at_every_capacity)
{
    for (uint64_t seed = 1; seed <= 2; seed++) {
        calls c = call_stream(300, 40, seed);
        lct_refs *r = refs_of_calls(&c);
        for (uint64_t cap = 1; cap <= 45; cap += 4) {
            lct_sim_options o = {.capacity = cap};
            lct_sim_report rep;
            cr_assert_eq(lct_sim_run(r, &o, &rep, NULL), LCT_OK);
            sim_want w = brute_sim(&c, cap);
            cr_expect_eq(rep.calls, w.calls, "cap %llu", (unsigned long long)cap);
            cr_expect_eq(rep.keys_hit, w.keys_hit, "cap %llu",
                         (unsigned long long)cap);
            cr_expect_eq(rep.positions, w.positions);
            cr_expect_eq(rep.positions_hit, w.positions_hit, "cap %llu",
                         (unsigned long long)cap);
            cr_expect_eq(rep.calls_no_hit, w.no_hit);
            cr_expect_eq(rep.calls_all_hit, w.all_hit);
            cr_expect_eq(rep.evictions, w.evictions, "cap %llu: %llu vs %llu",
                         (unsigned long long)cap,
                         (unsigned long long)rep.evictions,
                         (unsigned long long)w.evictions);
            cr_expect_eq(rep.occupancy_keys, w.occupancy);
            cr_expect_eq(rep.lru_position.max, w.max_position, "cap %llu",
                         (unsigned long long)cap);
            cr_expect_eq(rep.leading.count, rep.calls);
            cr_expect_eq(rep.cumulative[4],
                         w.positions ? (double)w.positions_hit /
                                           (double)w.positions : 0);
            /* the curve at this capacity says the same of the keys */
            lct_mrc *m = prefix_curve(r);
            cr_expect_eq(lct_mrc_position_hit_ratio(m, cap),
                         w.positions ? (double)w.positions_hit /
                                           (double)w.positions : 0);
            lct_mrc_free(m);
            lct_sim_report_free(&rep);
        }
        lct_refs_free(r);
        free(c.v), free(c.start), free(c.len), free(c.per_position);
    }
}

/* Hand-made: stores A B, lookups [A B] [A] [C A] at 2 keys.  The first
 * lookup hits both (position 1 of A, 0 of B... A is LRU: position 1), the
 * second hits A at position 0 after [A B] touched B last; the third
 * misses C first, so none, and inserting C evicts B. */
Test(sim, a_hand_made_run)
{
    uint64_t A = id_of(31), B = id_of(32), C = id_of(33);
    lct_refs *r;
    cr_assert_eq(lct_refs_new(&r), LCT_OK);
    uint64_t ids[] = {A, B, A, B, A, C, A};
    bool reads[] = {false, false, true, true, true, true, true};
    int ends[] = {0, 1, 0, 1, 1, 0, 1};
    for (size_t i = 0; i < 7; i++) {
        cr_assert_eq(lct_refs_add(r, ids[i], 8, 0, reads[i]), LCT_OK);
        if (ends[i])
            cr_assert_eq(lct_refs_end_call(r, 1), LCT_OK);
    }
    lct_sim_options o = {.capacity = 2};
    lct_sim_report rep;
    cr_assert_eq(lct_sim_run(r, &o, &rep, NULL), LCT_OK);
    cr_expect_eq(rep.calls, 3);
    cr_expect_eq(rep.keys_hit, 3);
    cr_expect_eq(rep.positions_hit, 3);
    cr_expect_eq(rep.positions, 5);
    cr_expect_eq(rep.calls_all_hit, 2);
    cr_expect_eq(rep.calls_no_hit, 1);
    cr_expect_eq(rep.evictions, 1); /* C pushes out B */
    cr_expect_eq(rep.lru_position.max, 1);
    cr_expect_eq(rep.lru_position.count, 3);
    cr_expect_eq(rep.reuse.max, 2);       /* A hit twice */
    cr_expect_eq(rep.reuse.count, 2);     /* A and B */
    cr_expect_eq(rep.span.count, 3);
    lct_sim_report_free(&rep);
    /* in bytes: 8 bytes each, 16 bytes hold two; 7 bytes hold one, as
     * LMCache's max(1, capacity // bytes per chunk) */
    o = (lct_sim_options){.capacity = 16, .in_bytes = true};
    cr_assert_eq(lct_sim_run(r, &o, &rep, NULL), LCT_OK);
    cr_expect_eq(rep.keys_hit, 3);
    lct_sim_report_free(&rep);
    o = (lct_sim_options){.capacity = 7, .in_bytes = true};
    cr_assert_eq(lct_sim_run(r, &o, &rep, NULL), LCT_OK);
    cr_expect_eq(rep.capacity_keys, 1);
    cr_expect_eq(rep.keys_hit, 0); /* one key: each lookup's first missed */
    cr_expect_eq(rep.bypassed, 0);
    cr_expect_eq(rep.occupancy_keys, 1);
    lct_sim_report_free(&rep);
    lct_refs_free(r);
}

/* MARK: two tiers */

/* Both tiers simulated by hand at (c1, c2): a read call is served by L1
 * for its leading run in L1, then the keys from L1's first miss on are
 * asked of L2, whose leading run continues the prefix; stores go to both
 * (write-through); L1 sees every reference, L2 the stores and the keys
 * asked of it.  Returns the keys hit by both tiers' prefix; *l1 those
 * served by L1. */
static uint64_t brute_tiers(const calls *c, uint64_t c1, uint64_t c2,
                            uint64_t *l1_hits, uint64_t *positions_hit)
{
    lru a = {calloc(c->n + 1, 8), calloc(c->n + 1, 8), 0, 0};
    lru b = {calloc(c->n + 1, 8), calloc(c->n + 1, 8), 0, 0};
    uint64_t hits = 0;
    *l1_hits = *positions_hit = 0;
    for (size_t k = 0; k < c->ncalls; k++) {
        bool read = c->len[k] && c->v[c->start[k]].read;
        bool in_l1 = true, leading = true;
        size_t run = 0;
        for (size_t j = 0; j < c->len[k]; j++) {
            const ref *x = &c->v[c->start[k] + j];
            bool h1 = false;
            for (size_t i = 0; i < a.len; i++)
                h1 |= a.id[i] == x->id;
            if (read) {
                in_l1 = in_l1 && h1;
                bool hit;
                if (in_l1) {
                    hit = true;
                    ++*l1_hits;
                } else {
                    hit = lru_access(&b, x->id, 1, c2, false);
                }
                leading = leading && hit;
                run += leading;
            } else {
                lru_access(&b, x->id, 1, c2, false);
            }
            lru_access(&a, x->id, 1, c1, false);
        }
        hits += run;
        unsigned per = c->per_position[k];
        if (read)
            *positions_hit += run / per + (run == c->len[k] && run % per);
    }
    free(a.id), free(a.size), free(b.id), free(b.size);
    return hits;
}

Test(tiers, an_l2_behind_an_l1_equals_two_lru_lists_at_every_pair)
{
    calls c = call_stream(300, 40, 11);
    lct_refs *r = refs_of_calls(&c);
    uint64_t reads = reads_of(c.v, c.n);
    for (uint64_t c1 = 1; c1 <= 41; c1 += 5) {
        lct_refs *l2;
        lct_l1_stats st;
        cr_assert_eq(lct_refs_new(&l2), LCT_OK);
        cr_assert_eq(lct_refs_behind_l1(r, c1, false, l2, &st, NULL), LCT_OK);
        cr_expect_eq(st.keys, reads);
        lct_mrc *m = prefix_curve(l2);
        for (uint64_t c2 = 1; c2 <= 45; c2 += 4) {
            uint64_t l1_hits, positions_hit;
            uint64_t want = brute_tiers(&c, c1, c2, &l1_hits, &positions_hit);
            double l2_hits = lct_mrc_hit_ratio(m, c2) * (double)st.keys_to_l2;
            cr_expect_eq(st.keys_hit + (uint64_t)llround(l2_hits), want,
                         "L1 %llu, L2 %llu", (unsigned long long)c1,
                         (unsigned long long)c2);
            double l2_pos = lct_mrc_position_hit_ratio(m, c2) *
                            (double)(st.positions - st.positions_hit);
            cr_expect_eq(st.positions_hit + (uint64_t)llround(l2_pos),
                         positions_hit, "positions at L1 %llu, L2 %llu",
                         (unsigned long long)c1, (unsigned long long)c2);
        }
        lct_mrc_free(m);
        lct_refs_free(l2);
    }
    lct_refs_free(r);
    free(c.v), free(c.start), free(c.len), free(c.per_position);
}

/* MARK: byte curves where libCacheSim counts differently */

/* n lookups of ids[i] weighing sizes[i], each a call of its own. */
static lct_refs *lookups_one_a_call(const uint64_t *ids,
                                    const uint64_t *sizes, int n)
{
    lct_refs *r;
    cr_assert_eq(lct_refs_new(&r), LCT_OK);
    for (int i = 0; i < n; i++) {
        cr_assert_eq(lct_refs_add(r, ids[i], sizes[i], 0, true), LCT_OK);
        cr_assert_eq(lct_refs_end_call(r, 1), LCT_OK);
    }
    return r;
}

/* A key whose size changes between references: a lookup finds it as it
 * was held, at its size then, and the reference makes it weigh its new
 * size (LMCache replaces an object stored again with another layout).
 * A4 B4 A8 B4 at 10 bytes: A hits (4 + 4 fit), then weighs 8, so B (8 +
 * 4) no longer fits: one hit in four.  libCacheSim's LRU keeps the size A
 * was inserted with, so B hits too there (miss ratio 0.5, here 0.75). */
Test(mrc, a_key_is_found_at_its_held_size_then_weighs_its_new_one)
{
    uint64_t A = id_of(41), B = id_of(42);
    uint64_t ids[] = {A, B, A, B}, sizes[] = {4, 4, 8, 4};
    lct_refs *r = lookups_one_a_call(ids, sizes, 4);
    lct_mrc *m;
    cr_assert_eq(lct_mrc_compute(r, 1, &m, NULL), LCT_OK);
    cr_expect_eq(lct_mrc_byte_hit_ratio(m, 10), 1.0 / 4);
    cr_expect_eq(lct_mrc_byte_hit_ratio(m, 12), 2.0 / 4); /* 8 + 4 fit */
    lct_mrc_free(m);
    /* lct sim sizes every key as the first, as LMCache's simulator sizes
     * every chunk (10 // 4 = 2 keys): A and B both stay, so A8 and B4
     * hit */
    lct_sim_options o = {.capacity = 10, .in_bytes = true};
    lct_sim_report rep;
    cr_assert_eq(lct_sim_run(r, &o, &rep, NULL), LCT_OK);
    cr_expect_eq(rep.capacity_keys, 2);
    cr_expect_eq(rep.keys_hit, 2);
    lct_sim_report_free(&rep);
    lct_refs_free(r);
}

/* A12 B12 B4 A12 at 16 bytes: B12 pushes A out (12 + 12 > 16), B4 hits,
 * and A12 misses though B4 and A12 fit side by side now: what decides is
 * the most the keys used since A ever weighed beside it, not what they
 * weigh when A comes back.  One hit in four; at 24 bytes nothing leaves,
 * two in four. */
Test(mrc, a_key_pushed_out_stays_out_when_the_keys_after_it_shrink)
{
    uint64_t A = id_of(61), B = id_of(62);
    uint64_t ids[] = {A, B, B, A}, sizes[] = {12, 12, 4, 12};
    lct_refs *r = lookups_one_a_call(ids, sizes, 4);
    lct_mrc *m;
    cr_assert_eq(lct_mrc_compute(r, 1, &m, NULL), LCT_OK);
    cr_expect_eq(lct_mrc_byte_hit_ratio(m, 16), 1.0 / 4);
    cr_expect_eq(lct_mrc_byte_hit_ratio(m, 23), 1.0 / 4);
    cr_expect_eq(lct_mrc_byte_hit_ratio(m, 24), 2.0 / 4);
    lct_mrc_free(m);
    lct_refs_free(r);
}

/* A4 B20 A4 at 10 bytes: B is heavier than the cache and bypasses it, so
 * A hits, as libCacheSim counts (miss ratio 2/3), in lct mrc's byte
 * curve; lct sim holds 10 // 4 = 2 keys of the first key's size, as
 * LMCache's simulator does, so A hits there too, B held. */
Test(mrc, a_key_heavier_than_the_cache_bypasses_it)
{
    uint64_t A = id_of(51), B = id_of(52);
    uint64_t ids[] = {A, B, A}, sizes[] = {4, 20, 4};
    lct_refs *r = lookups_one_a_call(ids, sizes, 3);
    lct_sim_options o = {.capacity = 10, .in_bytes = true};
    lct_sim_report rep;
    cr_assert_eq(lct_sim_run(r, &o, &rep, NULL), LCT_OK);
    cr_expect_eq(rep.keys_hit, 1);
    cr_expect_eq(rep.bypassed, 0);
    cr_expect_eq(rep.occupancy_keys, 2);
    lct_sim_report_free(&rep);
    lct_mrc *m;
    cr_assert_eq(lct_mrc_compute(r, 1, &m, NULL), LCT_OK);
    cr_expect_eq(lct_mrc_byte_hit_ratio(m, 3), 0);       /* A does not fit */
    cr_expect_eq(lct_mrc_byte_hit_ratio(m, 10), 1.0 / 3); /* B bypasses */
    cr_expect_eq(lct_mrc_byte_hit_ratio(m, 23), 0);      /* B pushes A out */
    cr_expect_eq(lct_mrc_byte_hit_ratio(m, 24), 1.0 / 3);
    lct_mrc_free(m);
    lct_refs_free(r);
}

/* The token hit ratio of a byte capacity, by hand: lookups [A10, B30]
 * then [A10, B30] again, a chunk position a key (4 positions).
 * - below 10 bytes both keys bypass the cache: 0;
 * - 10 to 29: B bypasses, A is held and found again, B is not: 1 of 4;
 * - 30 to 39: B fits but A and B do not together, so B pushes A out and
 *   the second lookup misses at once: 0 (more bytes, fewer hits);
 * - 40 on: both stay, the second lookup hits both: 2 of 4.
 * The key-count curve at the mean size (20 bytes a key) says 0 at one
 * key (20 bytes) and 2 of 4 at two (40): the column a byte capacity
 * needs differs from it at 20. */
Test(mrc, the_token_hit_ratio_of_a_byte_capacity_by_hand)
{
    uint64_t A = id_of(71), B = id_of(72);
    lct_refs *r;
    cr_assert_eq(lct_refs_new(&r), LCT_OK);
    for (int call = 0; call < 2; call++) {
        cr_assert_eq(lct_refs_add(r, A, 10, 0, true), LCT_OK);
        cr_assert_eq(lct_refs_add(r, B, 30, 0, true), LCT_OK);
        cr_assert_eq(lct_refs_end_call(r, 1), LCT_OK);
    }
    lct_mrc *m = prefix_curve(r);
    uint64_t caps[] = {0, 9, 10, 20, 29, 30, 39, 40, 1000};
    double want[] = {0, 0, 0.25, 0.25, 0.25, 0, 0, 0.5, 0.5};
    for (int i = 0; i < 9; i++)
        cr_expect_eq(lct_mrc_position_byte_hit_ratio(m, caps[i]), want[i],
                     "%llu bytes", (unsigned long long)caps[i]);
    cr_expect_eq(lct_mrc_position_hit_ratio(m, 1), 0);
    cr_expect_eq(lct_mrc_position_hit_ratio(m, 2), 0.5);
    cr_expect_eq(lct_mrc_capacity_for(m, LCT_MRC_POSITION_BYTE_HIT, 0.25),
                 10);
    cr_expect_eq(lct_mrc_capacity_for(m, LCT_MRC_POSITION_BYTE_HIT, 0.3),
                 40);
    cr_expect_eq(lct_mrc_capacity_for(m, LCT_MRC_POSITION_BYTE_HIT, 0.6),
                 0);
    lct_mrc_curve c;
    cr_assert_eq(lct_mrc_curve_make(&m, 1, &c, NULL), LCT_OK);
    cr_assert_not_null(c.token_byte_hit);
    for (size_t i = 0; i < c.n; i++) /* keys x 20 bytes */
        cr_expect_eq(c.token_byte_hit[i],
                     lct_mrc_position_byte_hit_ratio(m, c.keys[i] * 20));
    lct_mrc_curve_free(&c);
    lct_mrc_free(m);
    /* per key, or with one size, there is no such column */
    lct_mrc *per_key;
    cr_assert_eq(lct_mrc_compute(r, 1, &per_key, NULL), LCT_OK);
    cr_expect_eq(lct_mrc_position_byte_hit_ratio(per_key, 40), 0);
    cr_assert_eq(lct_mrc_curve_make(&per_key, 1, &c, NULL), LCT_OK);
    cr_expect_null(c.token_byte_hit);
    lct_mrc_curve_free(&c);
    lct_mrc_free(per_key);
    lct_refs_free(r);
}

/* A byte LRU's reference: the key becomes the most recent at its new
 * size, or, heavier than the whole cache, leaves it (lct's LRU: the held
 * copy is replaced by one that does not fit). */
static void lru_access_or_leave(lru *l, uint64_t id, uint64_t size,
                                uint64_t cap)
{
    if (size <= cap) {
        lru_access(l, id, size, cap, true);
        return;
    }
    for (size_t j = 0; j < l->len; j++)
        if (l->id[j] == id) {
            l->total -= l->size[j];
            memmove(l->id + j, l->id + j + 1, (l->len - j - 1) * 8);
            memmove(l->size + j, l->size + j + 1, (l->len - j - 1) * 8);
            l->len--;
            return;
        }
}

/* Read hits of a byte LRU of `cap` bytes where a key heavier than the
 * cache is not inserted (libCacheSim's rule), simulated on a list. */
static uint64_t brute_bypass(const ref *v, size_t n, uint64_t cap)
{
    lru l = {calloc(n + 1, 8), calloc(n + 1, 8), 0, 0};
    uint64_t hits = 0;
    for (size_t i = 0; i < n; i++) {
        bool hit = false;
        for (size_t j = 0; j < l.len; j++)
            hit |= l.id[j] == v[i].id;
        hits += v[i].read && hit;
        lru_access_or_leave(&l, v[i].id, v[i].bytes, cap);
    }
    free(l.id), free(l.size);
    return hits;
}

Test(mrc, byte_curves_with_few_sizes_bypass_heavier_keys_at_every_capacity)
{
    static const uint64_t sizes[] = {3, 10, 40, 160};
    for (uint64_t seed = 1; seed <= 2; seed++) {
        size_t n = 1500;
        ref *v = stream(n, 80, seed);
        for (size_t i = 0; i < n; i++)
            v[i].bytes = sizes[v[i].id % 4]; /* each key one size */
        lct_refs *r = refs_of(v, n);
        lct_mrc *m;
        cr_assert_eq(lct_mrc_compute(r, 1.0, &m, NULL), LCT_OK);
        uint64_t reads = reads_of(v, n);
        for (uint64_t b = 0; b <= 2600; b += b < 200 ? 1 : 13)
            cr_expect_eq(lct_mrc_byte_hit_ratio(m, b),
                         (double)brute_bypass(v, n, b) / (double)reads,
                         "seed %llu, %llu bytes", (unsigned long long)seed,
                         (unsigned long long)b);
        lct_mrc_free(m);
        lct_refs_free(r);
        free(v);
    }
}

/* The prefix rule over a byte LRU that heavier keys bypass: a call's
 * leading run, each key looked up in turn, at one capacity; the chunk
 * positions inside that run in *positions_hit (as brute_prefix counts
 * them), when given. */
static uint64_t brute_prefix_bypass(const calls *c, uint64_t cap,
                                    uint64_t *positions_hit)
{
    lru l = {calloc(c->n + 1, 8), calloc(c->n + 1, 8), 0, 0};
    uint64_t hits = 0, positions = 0;
    for (size_t k = 0; k < c->ncalls; k++) {
        bool leading = true;
        size_t run = 0;
        for (size_t j = 0; j < c->len[k]; j++) {
            const ref *x = &c->v[c->start[k] + j];
            bool hit = false;
            for (size_t i = 0; i < l.len; i++)
                hit |= l.id[i] == x->id;
            leading = leading && hit;
            hits += x->read && leading;
            run += x->read && leading;
            lru_access_or_leave(&l, x->id, x->bytes, cap);
        }
        unsigned per = c->per_position[k];
        if (c->len[k] && c->v[c->start[k]].read)
            positions += run / per + (run == c->len[k] && run % per);
    }
    free(l.id), free(l.size);
    if (positions_hit)
        *positions_hit = positions;
    return hits;
}

/* The token hit ratio of a byte capacity is the share of positions the
 * brute force's byte LRU hits at that capacity. */
static void expect_position_bytes(const lct_mrc *m, const calls *c,
                                  uint64_t b, const char *what)
{
    lct_mrc_totals t;
    lct_mrc_totals_get(m, &t);
    uint64_t positions;
    brute_prefix_bypass(c, b, &positions);
    cr_expect_eq(lct_mrc_position_byte_hit_ratio(m, b),
                 (double)positions / (double)t.positions,
                 "%s, %llu bytes: positions", what, (unsigned long long)b);
}

Test(mrc, prefix_byte_curves_bypass_heavier_keys_too)
{
    static const uint64_t sizes[] = {3, 10, 40, 160};
    calls c = call_stream(300, 50, 21);
    for (size_t i = 0; i < c.n; i++)
        c.v[i].bytes = sizes[c.v[i].id % 4];
    lct_refs *r = refs_of_calls(&c);
    lct_mrc *m = prefix_curve(r);
    uint64_t reads = reads_of(c.v, c.n);
    for (uint64_t b = 0; b <= 2600; b += b < 200 ? 1 : 13) {
        cr_expect_eq(lct_mrc_byte_hit_ratio(m, b),
                     (double)brute_prefix_bypass(&c, b, NULL) /
                         (double)reads,
                     "%llu bytes", (unsigned long long)b);
        expect_position_bytes(m, &c, b, "four sizes");
    }
    lct_mrc_free(m);
    lct_refs_free(r);
    free(c.v), free(c.start), free(c.len), free(c.per_position);
}

/* Sizes drawn afresh at every reference, so keys grow and shrink: the
 * byte curve, per key and by the prefix rule, is the brute-force LRU's at
 * every capacity (bands below the largest size); with more sizes than
 * bands, at every capacity from the largest size up. */
static uint64_t draw_size(unsigned nsizes)
{
    static const uint64_t four[] = {3, 10, 40, 160};
    return nsizes == 4 ? four[rng() % 4] : 5 * (1 + rng() % nsizes);
}

Test(mrc, byte_curves_where_keys_grow_and_shrink_equal_brute_force)
{
    for (unsigned nsizes = 4; nsizes <= 20; nsizes += 16) {
        uint64_t from = nsizes == 4 ? 0 : 5 * nsizes;
        size_t n = 1500;
        ref *v = stream(n, 80, nsizes);
        for (size_t i = 0; i < n; i++)
            v[i].bytes = draw_size(nsizes);
        lct_refs *r = refs_of(v, n);
        lct_mrc *m;
        cr_assert_eq(lct_mrc_compute(r, 1.0, &m, NULL), LCT_OK);
        uint64_t reads = reads_of(v, n);
        for (uint64_t b = from; b <= from + 2600; b += b < from + 200 ? 1 : 13)
            cr_expect_eq(lct_mrc_byte_hit_ratio(m, b),
                         (double)brute_bypass(v, n, b) / (double)reads,
                         "%u sizes, %llu bytes", nsizes,
                         (unsigned long long)b);
        lct_mrc_free(m);
        lct_refs_free(r);
        free(v);

        calls c = call_stream(300, 50, 31 + nsizes);
        for (size_t i = 0; i < c.n; i++)
            c.v[i].bytes = draw_size(nsizes);
        r = refs_of_calls(&c);
        m = prefix_curve(r);
        reads = reads_of(c.v, c.n);
        for (uint64_t b = from; b <= from + 2600;
             b += b < from + 200 ? 1 : 13) {
            cr_expect_eq(lct_mrc_byte_hit_ratio(m, b),
                         (double)brute_prefix_bypass(&c, b, NULL) /
                             (double)reads,
                         "prefix, %u sizes, %llu bytes", nsizes,
                         (unsigned long long)b);
            expect_position_bytes(m, &c, b, "sizes that change");
        }
        lct_mrc_free(m);
        lct_refs_free(r);
        free(c.v), free(c.start), free(c.len), free(c.per_position);
    }
}

/* Fed a call at a time, the simulation gives what the whole stream gives,
 * and its series stays within its points, evenly spaced, ending at the
 * whole run. */
Test(sim, fed_a_call_at_a_time_it_is_the_whole_streams)
{
    calls c = call_stream(400, 40, 9);
    lct_refs *r = refs_of_calls(&c);
    lct_sim_options o = {.capacity = 20, .series_points = 8, .l1_capacity = 5};
    lct_sim_report whole, fed;
    cr_assert_eq(lct_sim_run(r, &o, &whole, NULL), LCT_OK);
    lct_sim *s;
    cr_assert_eq(lct_sim_new(&o, &s, NULL), LCT_OK);
    for (size_t k = 0; k < c.ncalls; k++) {
        for (size_t j = 0; j < c.len[k]; j++) {
            const ref *x = &c.v[c.start[k] + j];
            cr_assert_eq(lct_sim_add(s, x->id, x->bytes, 0, x->read), LCT_OK);
        }
        cr_assert_eq(lct_sim_end_call(s, c.per_position[k]), LCT_OK);
    }
    cr_assert_eq(lct_sim_finish(s, &fed, NULL), LCT_OK);
    lct_sim_free(s);
    cr_expect_eq(fed.calls, whole.calls);
    cr_expect_eq(fed.keys_hit, whole.keys_hit);
    cr_expect_eq(fed.positions_hit, whole.positions_hit);
    cr_expect_eq(fed.evictions, whole.evictions);
    cr_expect_eq(fed.l1.keys_hit, whole.l1.keys_hit);
    cr_expect_eq(fed.lru_position.p50, whole.lru_position.p50);
    cr_expect(fed.has_l1);
    cr_expect(fed.nseries >= 4 && fed.nseries <= 9, "%zu points", fed.nseries);
    cr_expect_eq(fed.series[fed.nseries - 1].calls, fed.calls);
    for (size_t i = 1; i + 1 < fed.nseries; i++)
        cr_expect_eq(fed.series[i].calls - fed.series[i - 1].calls,
                     fed.series[1].calls - fed.series[0].calls);
    cr_expect_eq(fed.cumulative_calls[4], fed.calls);
    cr_expect_eq(fed.cumulative[4], (double)fed.positions_hit /
                                        (double)fed.positions);
    /* both tiers: the L2's own and L1's add up to what two lists give */
    uint64_t l1_hits, positions_hit;
    uint64_t want = brute_tiers(&c, 5, 20, &l1_hits, &positions_hit);
    cr_expect_eq(fed.l1.keys_hit + fed.keys_hit, want);
    cr_expect_eq(fed.l1.positions_hit + fed.positions_hit, positions_hit);
    lct_sim_report_free(&whole);
    lct_sim_report_free(&fed);
    lct_refs_free(r);
    free(c.v), free(c.start), free(c.len), free(c.per_position);
}

/* MARK: a call's rows folded into chunks (lct_call_fold) */

/* A key of chunk hash byte h, kv rank r, object group g. */
static lct_object_key row_key(unsigned char *hash, unsigned char h,
                              int64_t r, int64_t g)
{
    memset(hash, h, 32);
    return (lct_object_key){{hash, 32}, {"m", 1}, r, g, {"", 0}};
}

/* LMCache's fold counts a chunk only when every row (kv rank, object
 * group) holds it, as lct replay counts it.  Stores of rank 0's c0 c1
 * c2 and rank 1's c0 c2 (c1 never stored on rank 1); a lookup listing
 * its rows one after the other (rank 0's c0 c1 c2, then rank 1's) hits
 * c0 only; then groups 0 and 1 of chunks d0 d1, group 1 never stored: a
 * lookup hits nothing.  1 of 5 chunk positions, at any capacity that
 * holds them all.  (Laid end to end, keys in the leading run would
 * have made rank 0's three chunks count.) */
Test(mrc, a_task_specs_rows_count_a_chunk_held_by_every_row)
{
    lct_refs *r;
    cr_assert_eq(lct_refs_new(&r), LCT_OK);
    lct_call_fold *f;
    cr_assert_eq(lct_call_fold_new(&f), LCT_OK);
    unsigned char h[8][32];
    struct { unsigned char h; int64_t rank, group; bool read; int end; } k[] = {
        {1, 0, 0, false, 0}, {2, 0, 0, false, 0}, {3, 0, 0, false, 0},
        {1, 1, 0, false, 0}, {3, 1, 0, false, 1}, /* stores */
        {1, 0, 0, true, 0},  {2, 0, 0, true, 0},  {3, 0, 0, true, 0},
        {1, 1, 0, true, 0},  {2, 1, 0, true, 0},  {3, 1, 0, true, 1},
        {4, 0, 0, false, 0}, {5, 0, 0, false, 1}, /* group 0 stored */
        {4, 0, 0, true, 0},  {5, 0, 0, true, 0},
        {4, 0, 1, true, 0},  {5, 0, 1, true, 1},
    };
    for (size_t i = 0; i < sizeof k / sizeof *k; i++) {
        lct_object_key key = row_key(h[i % 8], k[i].h, k[i].rank, k[i].group);
        cr_assert_eq(lct_call_fold_add(f, &key, 8, 0, k[i].read), LCT_OK);
        if (k[i].end)
            cr_assert_eq(lct_call_fold_to_refs(f, r), LCT_OK);
    }
    lct_call_fold_free(f);
    lct_mrc *m = prefix_curve(r);
    cr_expect_eq(lct_mrc_position_hit_ratio(m, 100), 1.0 / 5,
                 "%f", lct_mrc_position_hit_ratio(m, 100));
    lct_mrc_free(m);
    lct_refs_free(r);
}
