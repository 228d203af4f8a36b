/*
 * test_sim_lmcache.c - lct_sim's conventions pinned to LMCache's cache
 * simulator, each with a hand-made run whose expected values were worked
 * out from LMCache's source: lmcache/tools/cache_simulator/simulator.py
 * (simulate, _percentiles, print_statistics; 64600bc, the nearest-rank
 * percentiles of PR #4441) and lru_cache.py (LRUCache: position, access,
 * insert), and the chunks of its lookup-hash logs (one hash a chunk,
 * LookupHashLoggingSubscriber; the ranks of a chunk share it,
 * ipc_key_to_object_keys).
 */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdlib.h>

#include "lct.h"

/* Key names: any distinct ids. */
static uint64_t K(unsigned n) { return 0x1000 + n; }

/* The report of a simulation fed by hand, which is then freed. */
static lct_sim_report finished(lct_sim *s)
{
    lct_sim_report r;
    cr_assert_eq(lct_sim_finish(s, &r, NULL), LCT_OK);
    lct_sim_free(s);
    return r;
}

/* Lookups (read calls) of the given keys, 8 bytes each; calls end at 0. */
static lct_sim_report run(const lct_sim_options *o, const unsigned *keys,
                          size_t n)
{
    lct_sim *s;
    cr_assert_eq(lct_sim_new(o, &s, NULL), LCT_OK);
    for (size_t i = 0; i < n; i++) {
        if (keys[i] == 0)
            cr_assert_eq(lct_sim_end_call(s, 1), LCT_OK);
        else
            cr_assert_eq(lct_sim_add(s, K(keys[i]), 8, 0, true), LCT_OK);
    }
    return finished(s);
}

/* [A] [A B] [A B C] [A B C D] in a large cache: hit prefixes 0 1 2 3. */
static const unsigned STAIRS[] = {1, 0, 1, 2, 0, 1, 2, 3, 0, 1, 2, 3, 4, 0};

/* _percentiles: rank min(max(ceil(p n / 100), 1), n), counted from 1.
 * Prefix lengths [0,1,2,3]: p25 rank 1 = 0, p50 rank 2 = 1, p75 rank 3
 * = 2, p90 rank ceil(3.6) = 4 = 3.  (The old floor(p n) index gave 1, 2,
 * 3.)  Stat 1 the same way over the rates 0, 1/2, 2/3, 3/4; its mean is
 * sum(rates) / len(rates), the sum taken in request order. */
Test(sim_lmcache, percentiles_are_the_nearest_rank)
{
    lct_sim_options o = {.capacity = 100};
    lct_sim_report r = run(&o, STAIRS, sizeof STAIRS / sizeof *STAIRS);
    cr_expect_eq(r.calls, 4);
    cr_expect_eq(r.leading.p25, 0);
    cr_expect_eq(r.leading.p50, 1);
    cr_expect_eq(r.leading.p75, 2);
    cr_expect_eq(r.leading.p90, 3);
    cr_expect_eq(r.leading.p99, 3);
    cr_expect_eq(r.call_hit_p[0], 0.0);
    cr_expect_eq(r.call_hit_p[1], 0.5);
    cr_expect_eq(r.call_hit_p[2], 2.0 / 3);
    cr_expect_eq(r.call_hit_p[3], 0.75);
    double sum = 0;
    sum += 0.0, sum += 0.5, sum += 2.0 / 3, sum += 0.75;
    cr_expect_eq(r.call_hit_mean, sum / 4);
    lct_sim_report_free(&r);
}

/* simulate(): every hit chunk's cache.position() is taken before the
 * update loop touches the request's chunks.  [A B] then [A B]: before
 * the second, B is the most recent (0) and A next (1): mean 0.5.  (Taken
 * after A was touched, B would be at 1: mean 1.0.)  Spans too use the
 * chunk index before the request: global_chunk_index + i - last_seen. */
Test(sim_lmcache, positions_are_taken_before_the_request_touches_the_cache)
{
    static const unsigned twice[] = {1, 2, 0, 1, 2, 0};
    lct_sim_options o = {.capacity = 10};
    lct_sim_report r = run(&o, twice, 6);
    cr_expect_eq(r.lru_position.count, 2);
    cr_expect_eq(r.lru_position.mean, 0.5);
    cr_expect_eq(r.lru_position.max, 1);
    cr_expect_eq(r.span.mean, 2.0); /* A: 2 - 0, B: 3 - 1 */
    lct_sim_report_free(&r);
    /* The stairs: positions 0 | 1 0 | 2 1 0 (mean 4/6), spans 1 | 2 2 |
     * 3 3 3, reuse A 3, B 2, C 1. */
    r = run(&o, STAIRS, sizeof STAIRS / sizeof *STAIRS);
    cr_expect_eq(r.lru_position.count, 6);
    cr_expect_eq(r.lru_position.mean, 4.0 / 6);
    cr_expect_eq(r.lru_position.p50, 0); /* sorted 0 0 0 1 1 2, rank 3 */
    cr_expect_eq(r.lru_position.p75, 1); /* rank ceil(4.5) = 5 */
    cr_expect_eq(r.span.mean, 14.0 / 6);
    cr_expect_eq(r.span.p25, 2);
    cr_expect_eq(r.reuse.count, 3);
    cr_expect_eq(r.reuse.max, 3);
    cr_expect_eq(r.reuse.p50, 2);
    lct_sim_report_free(&r);
}

/* print_statistics, Stat 4: idx = max(0, min(int(n * f) - 1, n - 1)) for
 * f = 0.1, 0.25, 0.5, 0.75, 1.0, printed as request idx + 1.  n = 130:
 * 13, 32 (int(32.5)), 65, 97 (int(97.5)), 130.  Every request looks up
 * one key X, so the rate after request m is (m - 1) / m. */
Test(sim_lmcache, the_rolling_rate_is_taken_at_lmcaches_requests)
{
    unsigned keys[260];
    for (size_t i = 0; i < 260; i += 2)
        keys[i] = 1, keys[i + 1] = 0;
    lct_sim_options o = {.capacity = 4, .series_points = 8};
    lct_sim_report r = run(&o, keys, 260);
    const uint64_t at[] = {13, 32, 65, 97, 130};
    for (size_t i = 0; i < 5; i++) {
        cr_expect_eq(r.cumulative_calls[i], at[i], "point %zu: %llu", i,
                     (unsigned long long)r.cumulative_calls[i]);
        cr_expect_eq(r.cumulative[i],
                     (double)(at[i] - 1) / (double)at[i]);
    }
    /* n = 5: int(0.5) - 1 = -1 is clamped to the first request */
    o.series_points = 0;
    r = (lct_sim_report_free(&r), run(&o, keys, 10));
    cr_expect_eq(r.cumulative_calls[0], 1);
    cr_expect_eq(r.cumulative[0], 0.0);
    cr_expect_eq(r.cumulative_calls[1], 1);
    cr_expect_eq(r.cumulative_calls[2], 2);
    cr_expect_eq(r.cumulative_calls[3], 3);
    lct_sim_report_free(&r);
}

/* _percentiles sorts every value: exact at any size.  300 keys looked up
 * one a request, then again in reverse order: key j's second span is
 * 2 * 300 - 1 - 2j, the odd numbers 1..599, and its position before the
 * lookup 299 - j (the keys after it were moved up), 0..299. */
Test(sim_lmcache, percentiles_are_exact_above_63)
{
    unsigned keys[1200];
    size_t n = 0;
    for (unsigned j = 1; j <= 300; j++)
        keys[n++] = j, keys[n++] = 0;
    for (unsigned j = 300; j >= 1; j--)
        keys[n++] = j, keys[n++] = 0;
    lct_sim_options o = {.capacity = 1000};
    lct_sim_report r = run(&o, keys, n);
    cr_expect_eq(r.span.count, 300);
    cr_expect_eq(r.span.p50, 299);  /* rank 150: 2 * 150 - 1 */
    cr_expect_eq(r.span.p75, 449);  /* rank 225 */
    cr_expect_eq(r.span.p90, 539);  /* rank 270 */
    cr_expect_eq(r.span.p99, 593);  /* rank 297 */
    cr_expect_eq(r.span.max, 599);
    cr_expect_eq(r.span.mean, 300.0);
    cr_expect_eq(r.lru_position.p50, 149);
    cr_expect_eq(r.lru_position.p99, 296);
    lct_sim_report_free(&r);
}

/* simulate(): cache_capacity_chunks = max(1, capacity_bytes //
 * kv_bytes_per_chunk).  7 bytes of 8-byte keys hold one: [A] [A] hits. */
Test(sim_lmcache, a_capacity_below_one_chunk_holds_one)
{
    static const unsigned again[] = {1, 0, 1, 0};
    lct_sim_options o = {.capacity = 7, .in_bytes = true};
    lct_sim_report r = run(&o, again, 4);
    cr_expect_eq(r.capacity_keys, 1);
    cr_expect_eq(r.key_bytes, 8);
    cr_expect_eq(r.keys_hit, 1);
    cr_expect_eq(r.occupancy_keys, 1);
    lct_sim_report_free(&r);
}

/* run_simulate(): kv_bytes_per_chunk comes from the first event, and the
 * cache counts chunks.  A (8 bytes) then B (16) then A in 16 bytes: two
 * chunks of 8, so A stays and hits (weighed by their own sizes, B would
 * have pushed A out). */
Test(sim_lmcache, every_key_is_sized_as_the_first)
{
    lct_sim_options o = {.capacity = 16, .in_bytes = true};
    lct_sim *s;
    cr_assert_eq(lct_sim_new(&o, &s, NULL), LCT_OK);
    const uint64_t ids[] = {K(1), K(2), K(1)}, bytes[] = {8, 16, 8};
    for (size_t i = 0; i < 3; i++) {
        cr_assert_eq(lct_sim_add(s, ids[i], bytes[i], 0, true), LCT_OK);
        cr_assert_eq(lct_sim_end_call(s, 1), LCT_OK);
    }
    lct_sim_report r = finished(s);
    cr_expect_eq(r.capacity_keys, 2);
    cr_expect_eq(r.keys_hit, 1);
    cr_expect_eq(r.evictions, 0);
    lct_sim_report_free(&r);
}

/* LRUCache.insert: a full cache evicts its least recent entry, counted
 * in eviction_count; access of a hit never evicts.  Capacity 2: [A] [B]
 * [C] evicts A; [B] hits at position 1; [A] misses and evicts C. */
Test(sim_lmcache, evictions_and_occupancy)
{
    static const unsigned k[] = {1, 0, 2, 0, 3, 0, 2, 0, 1, 0};
    lct_sim_options o = {.capacity = 2};
    lct_sim_report r = run(&o, k, 10);
    cr_expect_eq(r.evictions, 2);
    cr_expect_eq(r.keys_hit, 1);
    cr_expect_eq(r.lru_position.max, 1);
    cr_expect_eq(r.occupancy_keys, 2);
    cr_expect_eq(r.calls_no_hit, 4);
    cr_expect_eq(r.calls_all_hit, 1);
    lct_sim_report_free(&r);
}

/* A key of `rank` and `group` for chunk hash byte h (32 bytes of it). */
static lct_object_key key_of(unsigned char *hash, unsigned char h,
                             int64_t rank, int64_t group)
{
    for (int i = 0; i < 32; i++)
        hash[i] = h;
    return (lct_object_key){{hash, 32}, {"m", 1}, rank, group, {"", 0}};
}

/* LMCache's logs carry one hash a chunk (its ObjectKeys of one chunk
 * share chunk_hash across ranks, ipc_key_to_object_keys) and its cache
 * keys by that hash.  Two lookups of chunks 0 and 1 x ranks 0 and 1 at
 * two chunks: the second hits both, 50% of the tokens (as keys, four of
 * them in a cache of two, nothing would hit). */
Test(sim_lmcache, the_ranks_of_a_chunk_are_one_entry)
{
    lct_sim_options o = {.capacity = 2};
    lct_sim *s;
    cr_assert_eq(lct_sim_new(&o, &s, NULL), LCT_OK);
    unsigned char h[4][32];
    for (int call = 0; call < 2; call++) {
        for (int k = 0; k < 4; k++) { /* chunk-major: c0 r0, c0 r1, ... */
            lct_object_key key = key_of(h[k], (unsigned char)(k / 2),
                                        k % 2, 0);
            cr_assert_eq(lct_sim_add_key(s, &key, 8, 0, true), LCT_OK);
        }
        cr_assert_eq(lct_sim_end_call(s, 1), LCT_OK);
    }
    lct_sim_report r = finished(s);
    cr_expect_eq(r.positions, 4);
    cr_expect_eq(r.positions_hit, 2);
    cr_expect_eq(r.distinct_keys, 2);
    cr_expect_eq(r.evictions, 0);
    lct_sim_report_free(&r);
}

/* A PrefetchTaskSpec lists its rows one after the other: rank 0's chunks
 * c0 c1 c2, then rank 1's.  Numbered by row, they are three chunks,
 * each one entry named by rank 0's key, as chunk-major keys are. */
Test(sim_lmcache, a_task_specs_rows_fold_into_chunks)
{
    lct_sim_options o = {.capacity = 10};
    lct_sim *s;
    cr_assert_eq(lct_sim_new(&o, &s, NULL), LCT_OK);
    unsigned char h[6][32];
    for (int call = 0; call < 2; call++) {
        for (int k = 0; k < 6; k++) { /* row-major: r0 c0 c1 c2, r1 ... */
            unsigned char byte = (unsigned char)(k % 3 + 10 * (k / 3));
            lct_object_key key = key_of(h[k], byte, k / 3, 0);
            cr_assert_eq(lct_sim_add_key(s, &key, 8, 0, true), LCT_OK);
        }
        cr_assert_eq(lct_sim_end_call(s, 1), LCT_OK);
    }
    lct_sim_report r = finished(s);
    cr_expect_eq(r.positions, 6);     /* 3 chunks a lookup */
    cr_expect_eq(r.positions_hit, 3); /* the second lookup, whole */
    cr_expect_eq(r.distinct_keys, 3); /* rank 1's own hashes add none */
    lct_sim_report_free(&r);
}

/* simulate() counts a request's seq_len tokens (a partial last chunk's
 * tail always missed) and hit_prefix x its chunk_size hit; a request with
 * no hash but tokens counts, all missed; one with neither is skipped.
 * [A] of 300 tokens, [A B] of 600, [] of 100, [] of 0, then [A] whose
 * tokens are its chunks x the options' 256: requests 4, tokens 300 + 600
 * + 100 + 256, hit 256 + 256. */
Test(sim_lmcache, tokens_are_the_logged_seq_len)
{
    lct_sim_options o = {.capacity = 8, .chunk_tokens = 256};
    lct_sim *s;
    cr_assert_eq(lct_sim_new(&o, &s, NULL), LCT_OK);
    cr_assert_eq(lct_sim_add(s, K(1), 8, 0, true), LCT_OK);
    cr_assert_eq(lct_sim_end_call_tokens(s, 1, 256, 300), LCT_OK);
    cr_assert_eq(lct_sim_add(s, K(1), 8, 0, true), LCT_OK);
    cr_assert_eq(lct_sim_add(s, K(2), 8, 0, true), LCT_OK);
    cr_assert_eq(lct_sim_end_call_tokens(s, 1, 256, 600), LCT_OK);
    cr_assert_eq(lct_sim_end_call_tokens(s, 1, 256, 100), LCT_OK);
    cr_assert_eq(lct_sim_end_call_tokens(s, 1, 256, 0), LCT_OK);
    cr_assert_eq(lct_sim_add(s, K(1), 8, 0, true), LCT_OK);
    cr_assert_eq(lct_sim_end_call(s, 1), LCT_OK);
    lct_sim_report r = finished(s);
    cr_expect_eq(r.calls, 4);
    cr_expect_eq(r.tokens, 1256);
    cr_expect_eq(r.hit_tokens, 512);
    cr_expect_eq(r.calls_no_hit, 2);
    cr_expect_eq(r.calls_all_hit, 1);
    cr_expect_eq(r.call_hit_p[2], 256.0 / 600); /* rank 3 of 0 0 .43 1 */
    cr_expect_eq(r.cumulative[4], 512.0 / 1256);
    lct_sim_report_free(&r);
}

/* A byte capacity with no key ever sized (bytes 0: unknown) is never
 * turned into keys: nothing is evicted, and the report says 0 keys
 * rather than a capacity no one gave. */
Test(sim_lmcache, a_byte_capacity_no_key_sizes)
{
    lct_sim_options o = {.capacity = 64, .in_bytes = true};
    lct_sim *s;
    cr_assert_eq(lct_sim_new(&o, &s, NULL), LCT_OK);
    for (unsigned k = 1; k <= 3; k++) {
        cr_assert_eq(lct_sim_add(s, K(k), 0, 0, true), LCT_OK);
        cr_assert_eq(lct_sim_end_call(s, 1), LCT_OK);
    }
    lct_sim_report r = finished(s);
    cr_expect_eq(r.capacity_keys, 0);
    cr_expect_eq(r.key_bytes, 0);
    cr_expect_eq(r.evictions, 0);
    cr_expect_eq(r.occupancy_keys, 3);
    lct_sim_report_free(&r);
}
