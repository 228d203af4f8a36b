/*
 * test_target.c - lct_mrc_capacity_for: the least capacity reaching a
 * ratio, on hand-made streams whose answers are worked out below (in
 * keys, in bytes where a key heavier than the cache bypasses it so the
 * byte ratio falls across a size, and by the prefix rule), and against
 * a scan of every capacity on generated streams.
 */
#include <criterion/criterion.h>
#include <stdlib.h>

#include "lct.h"

static lct_mrc *curve(lct_refs *refs, bool prefix)
{
    lct_mrc_options o = {.prefix = prefix};
    lct_mrc *m;
    cr_assert_eq(lct_mrc_compute_with(refs, &o, &m, NULL), LCT_OK);
    lct_refs_free(refs);
    return m;
}

/*
 * Reads A B A B C A, weighing A 10, B 20, C 5 bytes.
 * In keys: A's second read is at distance 1, B's at 1, A's last at 2
 * (B, C since): 0 hits at 1 key, 2 of 6 at 2, 3 of 6 from 3.
 * In bytes: below 10 only C fits and is never read again: 0.  From 10
 * to 19, B is heavier than the cache and bypasses it: A's second read
 * finds A alone (10) and its last A behind C (10 + 5): 1 of 6 from 10,
 * 2 of 6 from 15.  From 20 every key fits: A's second read needs A + B
 * (30), B's A + B (30), A's last A + B + C (35): 0 hits from 20 to 29,
 * 2 of 6 from 30, 3 of 6 from 35.
 */
static lct_mrc *abab_ca(void)
{
    static const struct { uint64_t id, bytes; } v[] = {
        {1, 10}, {2, 20}, {1, 10}, {2, 20}, {3, 5}, {1, 10}};
    lct_refs *refs;
    cr_assert_eq(lct_refs_new(&refs), LCT_OK);
    for (size_t i = 0; i < 6; i++)
        cr_assert_eq(lct_refs_add(refs, v[i].id, v[i].bytes, (double)i,
                                  true), LCT_OK);
    return curve(refs, false);
}

Test(target, keys_from_the_curve)
{
    lct_mrc *m = abab_ca();
    cr_expect_eq(lct_mrc_capacity_for(m, LCT_MRC_HIT, 0.5), 3);
    cr_expect_eq(lct_mrc_capacity_for(m, LCT_MRC_HIT, 0.34), 3);
    cr_expect_eq(lct_mrc_capacity_for(m, LCT_MRC_HIT, 0.33), 2);
    cr_expect_eq(lct_mrc_capacity_for(m, LCT_MRC_HIT, 2.0 / 6), 2,
                 "the ratio itself is reached");
    cr_expect_eq(lct_mrc_capacity_for(m, LCT_MRC_HIT, 0.51), 0,
                 "above the unbounded cache's 0.5");
    cr_expect_eq(lct_mrc_capacity_for(m, LCT_MRC_HIT, 0), 0);
    cr_expect_eq(lct_mrc_capacity_for(m, LCT_MRC_HIT, 1.5), 0);
    cr_expect_eq(lct_mrc_capacity_for(m, LCT_MRC_POSITION_HIT, 0.1), 0,
                 "no prefix rule, no positions");
    lct_mrc_free(m);
}

Test(target, bytes_where_a_heavy_key_bypasses_the_cache)
{
    lct_mrc *m = abab_ca();
    /* the curve as worked out above, so the answers rest on it */
    cr_assert_eq(lct_mrc_byte_hit_ratio(m, 9), 0);
    cr_assert_eq(lct_mrc_byte_hit_ratio(m, 10), 1.0 / 6);
    cr_assert_eq(lct_mrc_byte_hit_ratio(m, 15), 2.0 / 6);
    cr_assert_eq(lct_mrc_byte_hit_ratio(m, 25), 0, "B is held from 20");
    cr_assert_eq(lct_mrc_byte_hit_ratio(m, 30), 2.0 / 6);
    cr_assert_eq(lct_mrc_byte_hit_ratio(m, 35), 3.0 / 6);
    cr_expect_eq(lct_mrc_capacity_for(m, LCT_MRC_BYTE_HIT, 0.15), 10);
    cr_expect_eq(lct_mrc_capacity_for(m, LCT_MRC_BYTE_HIT, 0.3), 15,
                 "the least is below the largest key, not 30");
    cr_expect_eq(lct_mrc_capacity_for(m, LCT_MRC_BYTE_HIT, 0.34), 35);
    cr_expect_eq(lct_mrc_capacity_for(m, LCT_MRC_BYTE_HIT, 0.5), 35);
    cr_expect_eq(lct_mrc_capacity_for(m, LCT_MRC_BYTE_HIT, 0.6), 0);
    lct_mrc_free(m);
}

/*
 * Calls of reads, a key a position: [A B], [A B], [C A].  The first
 * misses; the second hits both from 2 keys (each at distance 1); in the
 * third C was never seen, so A after it misses too.  2 of 6 positions
 * from 2 keys, none at 1.
 */
Test(target, token_ratio_by_the_prefix_rule)
{
    static const uint64_t calls[3][2] = {{1, 2}, {1, 2}, {3, 1}};
    lct_refs *refs;
    cr_assert_eq(lct_refs_new(&refs), LCT_OK);
    for (size_t c = 0; c < 3; c++) {
        for (size_t k = 0; k < 2; k++)
            cr_assert_eq(lct_refs_add(refs, calls[c][k], 8, (double)c,
                                      true), LCT_OK);
        cr_assert_eq(lct_refs_end_call(refs, 1), LCT_OK);
    }
    lct_mrc *m = curve(refs, true);
    cr_assert_eq(lct_mrc_position_hit_ratio(m, 2), 2.0 / 6);
    cr_expect_eq(lct_mrc_capacity_for(m, LCT_MRC_POSITION_HIT, 0.3), 2);
    cr_expect_eq(lct_mrc_capacity_for(m, LCT_MRC_POSITION_HIT, 0.4), 0);
    lct_mrc_free(m);
}

static uint64_t rng_state = 7;
static uint64_t rng(void)
{
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15u);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    return z ^ (z >> 31);
}

/* The least capacity in [1, hi] whose ratio reaches t, by trying each. */
static uint64_t scan(const lct_mrc *m, lct_mrc_measure what, double t,
                     uint64_t hi)
{
    for (uint64_t c = 1; c <= hi; c++) {
        double r = what == LCT_MRC_BYTE_HIT ? lct_mrc_byte_hit_ratio(m, c)
                   : what == LCT_MRC_HIT    ? lct_mrc_hit_ratio(m, c)
                                 : lct_mrc_position_hit_ratio(m, c);
        if (r >= t)
            return c;
    }
    return 0;
}

Test(target, every_capacity_tried_gives_the_same_answer)
{
    for (int round = 0; round < 6; round++) {
        lct_refs *refs;
        cr_assert_eq(lct_refs_new(&refs), LCT_OK);
        uint64_t total_bytes = 0, nkeys = 60 + 40 * (uint64_t)round;
        for (int i = 0; i < 1500; i++) {
            uint64_t k = rng() % nkeys;
            k = (k * k) / nkeys; /* skewed toward small keys */
            /* 3 sizes: bands below the largest */
            uint64_t bytes = 3 + (k % 3) * 7;
            total_bytes += bytes;
            cr_assert_eq(lct_refs_add(refs, k + 1, bytes, i, rng() % 4 != 0),
                         LCT_OK);
            if (rng() % 5 == 0)
                cr_assert_eq(lct_refs_end_call(refs, 1), LCT_OK);
        }
        bool prefix = round % 2;
        lct_mrc *m = curve(refs, prefix);
        for (double t = 0.05; t < 1; t += 0.05) {
            lct_mrc_measure w = prefix ? LCT_MRC_POSITION_HIT : LCT_MRC_HIT;
            cr_expect_eq(lct_mrc_capacity_for(m, w, t),
                         scan(m, w, t, nkeys + 2), "round %d target %g",
                         round, t);
            if (!prefix)
                cr_expect_eq(lct_mrc_capacity_for(m, LCT_MRC_BYTE_HIT, t),
                             scan(m, LCT_MRC_BYTE_HIT, t, total_bytes),
                             "bytes, round %d target %g", round, t);
        }
        lct_mrc_free(m);
    }
}
