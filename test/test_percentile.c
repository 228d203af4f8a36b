/*
 * test_percentile.c - the SQL percentile() and median() against a
 * reference written in this file from SQLite's ext/misc/percentile.c:
 * the non-NULL values sorted, read at (P + 1 - 1) x (n - 1) x 0.01 and
 * interpolated, NULL when none.  As aggregates (whole table and groups)
 * and as window functions over frames that grow, slide, run ahead of the
 * row and empty out, partitioned or not: the window's order-statistic
 * tree must give every row the digits the sorted frame gives.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lct_sqlite.h"

TestSuite(percentile, .timeout = 120);

enum { ROWS = 1500 };

/* Row i's x: NULL one row in eleven, else integers and reals from a
 * small range (so values repeat), some negative. */
static bool value_of(int i, double *x)
{
    if (i % 11 == 5)
        return false;
    uint64_t h = (uint64_t)i * 0x9e3779b97f4a7c15u;
    h ^= h >> 29;
    int v = (int)(h % 401) - 150;
    *x = i % 3 == 0 ? v + 0.25 : v;
    return true;
}

static sqlite3 *table(void)
{
    sqlite3 *db;
    cr_assert_eq(sqlite3_open(":memory:", &db), SQLITE_OK);
    cr_assert_eq(lct_sqlite_register(db, NULL), SQLITE_OK);
    cr_assert_eq(sqlite3_exec(db, "CREATE TABLE t(i INTEGER, x)", NULL, NULL,
                              NULL), SQLITE_OK);
    sqlite3_stmt *ins;
    cr_assert_eq(sqlite3_prepare_v2(db, "INSERT INTO t VALUES(?, ?)", -1,
                                    &ins, NULL), SQLITE_OK);
    for (int i = 0; i < ROWS; i++) {
        double x;
        sqlite3_bind_int(ins, 1, i);
        if (!value_of(i, &x))
            sqlite3_bind_null(ins, 2);
        else if (x == floor(x))
            sqlite3_bind_int(ins, 2, (int)x);
        else
            sqlite3_bind_double(ins, 2, x);
        cr_assert_eq(sqlite3_step(ins), SQLITE_DONE);
        sqlite3_reset(ins);
    }
    sqlite3_finalize(ins);
    return db;
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The extension's answer over the non-NULL values of rows [lo, hi] of
 * partition `part` (-1: every row) of `parts`; false: NULL. */
static bool reference(double p, int lo, int hi, int part, int parts,
                      double *out)
{
    static double v[ROWS];
    size_t n = 0;
    /* the partition's rows in order of i: row k of it is i = k*parts+part */
    for (int k = lo < 0 ? 0 : lo; k <= hi; k++) {
        int i = part < 0 ? k : k * parts + part;
        double x;
        if (i < ROWS && value_of(i, &x))
            v[n++] = x;
    }
    if (n == 0)
        return false;
    qsort(v, n, sizeof *v, by_value);
    double rpct = p + 1.0;
    double ix = (rpct - 1.0) * (double)(n - 1) * 0.01;
    size_t i1 = (size_t)ix;
    size_t i2 = ix == (double)i1 || i1 == n - 1 ? i1 : i1 + 1;
    *out = v[i1] + (v[i2] - v[i1]) * (ix - (double)i1);
    return true;
}

/* Each row's value of `call` OVER (PARTITION BY i % parts ORDER BY i
 * ROWS BETWEEN before PRECEDING AND after FOLLOWING) (before -1:
 * UNBOUNDED; after may be negative: that many PRECEDING) against the
 * reference. */
static void window_matches(sqlite3 *db, const char *call, double p,
                           int parts, int before, int after)
{
    char from[32], to[32], sql[512];
    if (before < 0)
        snprintf(from, sizeof from, "UNBOUNDED PRECEDING");
    else
        snprintf(from, sizeof from, "%d PRECEDING", before);
    if (after < 0)
        snprintf(to, sizeof to, "%d PRECEDING", -after);
    else
        snprintf(to, sizeof to, "%d FOLLOWING", after);
    snprintf(sql, sizeof sql,
             "SELECT i, %s OVER (PARTITION BY i %% %d ORDER BY i ROWS "
             "BETWEEN %s AND %s) FROM t ORDER BY i",
             call, parts, from, to);
    sqlite3_stmt *st;
    cr_assert_eq(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK,
                 "%s: %s", sql, sqlite3_errmsg(db));
    int rows = 0, nulls = 0;
    while (sqlite3_step(st) == SQLITE_ROW) {
        int i = sqlite3_column_int(st, 0), k = i / parts;
        double want;
        bool have = reference(p, before < 0 ? 0 : k - before, k + after,
                              parts > 1 ? i % parts : -1, parts, &want);
        if (!have) {
            cr_assert_eq(sqlite3_column_type(st, 1), SQLITE_NULL,
                         "%s: row %d: not NULL", sql, i);
            nulls++;
        } else {
            double got = sqlite3_column_double(st, 1);
            cr_assert(sqlite3_column_type(st, 1) == SQLITE_FLOAT &&
                          memcmp(&got, &want, sizeof got) == 0,
                      "%s: row %d: %.17g, the extension's %.17g", sql, i,
                      got, want);
        }
        rows++;
    }
    cr_assert_eq(sqlite3_finalize(st), SQLITE_OK, "%s", sqlite3_errmsg(db));
    cr_assert_eq(rows, ROWS, "%s", sql);
    if (after < 0 || (before >= 0 && before + after < 2))
        cr_expect_gt(nulls, 0, "%s: no empty frame met", sql);
}

Test(percentile, windows_give_each_row_the_sorted_frames_value)
{
    sqlite3 *db = table();
    static const struct {
        int parts, before, after;
    } frames[] = {
        {1, -1, 0},   /* grows with every row */
        {1, 37, 0},   /* slides: rows leave */
        {1, 10, 25},  /* runs ahead */
        {1, 0, 0},    /* one row: NULL on a NULL row */
        {1, 40, -5},  /* ends before the row: empty at the start */
        {3, 12, 0},   /* per partition */
        {4, -1, 3},
    };
    static const double ps[] = {0, 7, 25, 50, 90, 99.9, 100};
    for (size_t f = 0; f < sizeof frames / sizeof *frames; f++)
        for (size_t j = 0; j < sizeof ps / sizeof *ps; j++) {
            char call[64];
            snprintf(call, sizeof call, "percentile(x, %.17g)", ps[j]);
            window_matches(db, call, ps[j], frames[f].parts,
                           frames[f].before, frames[f].after);
        }
    window_matches(db, "median(x)", 50, 1, 100, 100);
    sqlite3_close(db);
}

Test(percentile, aggregates_give_the_sorted_values_value)
{
    sqlite3 *db = table();
    static const double ps[] = {0, 7, 25, 50, 90, 99.9, 100};
    for (size_t j = 0; j < sizeof ps / sizeof *ps; j++) {
        char sql[256];
        snprintf(sql, sizeof sql, "SELECT i %% 5, percentile(x, %.17g) "
                 "FROM t GROUP BY i %% 5 ORDER BY 1", ps[j]);
        sqlite3_stmt *st;
        cr_assert_eq(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
        int groups = 0;
        while (sqlite3_step(st) == SQLITE_ROW) {
            int g = sqlite3_column_int(st, 0);
            double want, got = sqlite3_column_double(st, 1);
            cr_assert(reference(ps[j], 0, ROWS, g, 5, &want));
            cr_assert(memcmp(&got, &want, sizeof got) == 0,
                      "%s: group %d: %.17g, the extension's %.17g", sql, g,
                      got, want);
            groups++;
        }
        cr_assert_eq(sqlite3_finalize(st), SQLITE_OK);
        cr_assert_eq(groups, 5);
    }
    sqlite3_close(db);
}
