/*
 * test_visit.c - the one-pass value visitor: every value once, opens and
 * closes paired, keys marked, depth bounded, a cut value refused after
 * what was there, early stops, and agreement with nested iterators on
 * the shipped sample.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lct.h"
#include "mpw.h"

typedef struct tally {
    int opens, closes, keys, scalars;
    unsigned max_depth;
    int stop_at;
} tally;

static int count_visit(void *ctx, const lct_visit *v)
{
    tally *t = ctx;
    if (v->end)
        t->closes++;
    else if (v->type == LCT_TYPE_ARRAY || v->type == LCT_TYPE_MAP)
        t->opens++;
    else
        t->scalars++;
    if (v->is_key && !v->end)
        t->keys++;
    if (v->depth > t->max_depth)
        t->max_depth = v->depth;
    if (t->stop_at && t->opens + t->scalars == t->stop_at)
        return 42;
    return 0;
}

Test(visit, every_value_once_with_open_and_close)
{
    mpw w;
    mpw_init(&w);
    /* {"a": [1, {"b": nil}], 7: "x"} */
    mpw_map(&w, 2);
    mpw_str(&w, "a");
    mpw_array(&w, 2);
    mpw_uint(&w, 1);
    mpw_map(&w, 1);
    mpw_str(&w, "b");
    mpw_nil(&w);
    mpw_uint(&w, 7);
    mpw_str(&w, "x");
    tally t = {0};
    cr_assert_eq(lct_value_visit(lct_value_from(w.buf, w.len), count_visit, &t),
                 LCT_OK);
    cr_expect_eq(t.opens, 3);
    cr_expect_eq(t.closes, 3);
    cr_expect_eq(t.scalars, 6); /* "a" 1 "b" nil 7 "x" */
    cr_expect_eq(t.keys, 3);    /* "a" "b" 7 */
    cr_expect_eq(t.max_depth, 3);

    tally stop = {.stop_at = 2};
    cr_expect_eq(lct_value_visit(lct_value_from(w.buf, w.len), count_visit,
                                 &stop),
                 42);

    /* Cut short: malformed, after visiting what was there. */
    tally cut = {0};
    cr_expect_eq(lct_value_visit(lct_value_from(w.buf, w.len - 1), count_visit,
                                 &cut),
                 LCT_ERR_MALFORMED);
    mpw_reset(&w);
    for (int i = 0; i < 1000; i++)
        mpw_array(&w, 1);
    mpw_nil(&w);
    tally deep = {0};
    cr_expect_eq(lct_value_visit(lct_value_from(w.buf, w.len), count_visit,
                                 &deep),
                 LCT_ERR_DEPTH);
    mpw_free(&w);
}

/* The visitor and nested iterators see the same scalars on real data. */
static int iter_count(lct_value v)
{
    lct_iter it;
    lct_value k, e;
    int n = 0;
    if (lct_map_iter_init(v, &it) == LCT_OK) {
        while (lct_map_iter_next(&it, &k, &e) == 1)
            n += iter_count(k) + iter_count(e);
        return n;
    }
    if (lct_array_iter_init(v, &it) == LCT_OK) {
        while (lct_array_iter_next(&it, &e) == 1)
            n += iter_count(e);
        return n;
    }
    return 1;
}

Test(visit, agrees_with_iterators_on_the_sample)
{
    lct_reader *r;
    cr_assert_eq(lct_open(LCT_SAMPLE, 0, &r, NULL), LCT_OK);
    lct_record rec;
    while (lct_next(r, &rec) == 1) {
        tally t = {0};
        cr_assert_eq(lct_value_visit(rec.args, count_visit, &t), LCT_OK);
        cr_expect_eq(t.scalars, iter_count(rec.args));
        cr_expect_eq(t.opens, t.closes);
    }
    lct_close(r);
}
