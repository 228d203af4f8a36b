/*
 * test_cli_stat.c - the lct tool run as a program: the stat command: counts
 * per qualname, the gaps' percentiles by nearest rank, damage, short names.
 * What every test_cli_*.c shares (running the tool, the fixtures, JSON
 * equality) is in test/support/cli.c.
 */
#define _GNU_SOURCE /* cpu_set_t, for cpus.h */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "cpus.h"
#include "files.h"
#include "lct.h"
#include "json.h"
#include "mpw.h"
#include "run.h"

/* These tests wait on other processes: a regression that hangs one
 * fails it instead of stalling the run. */
TestSuite(cli, .timeout = 300);

/* A JSON number as a double, whether printed as an integer or not. */
static double json_num(const jv *v)
{
    cr_assert_not_null(v);
    if (v->t == J_INT)
        return v->neg ? (double)v->i : (double)v->u;
    cr_assert_eq(v->t, J_FLOAT);
    return v->d;
}

static int cmp_gap(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* `lct stat --json -j JOBS path`, parsed (json_free it). */
static jv *stat_json(const char *path, int jobs)
{
    char j[2] = {(char)('0' + jobs), 0};
    run r = run_lct(NULL, "stat", "--json", "-j", j, path, NULL);
    cr_assert_eq(r.status, 0, "%s", r.err);
    jv *got = json_parse(r.out, r.outlen);
    cr_assert_not_null(got, "%s", r.out);
    run_free(&r);
    return got;
}

/* Which of names[0..n) the qualname of an op of stat's JSON is. */
static int op_index(const jv *op, const char *const *names, int n)
{
    int q = 0;
    while (q < n && strcmp(json_get(op, "qualname")->s, names[q]))
        q++;
    cr_assert_lt(q, n, "%s", json_get(op, "qualname")->s);
    return q;
}

/* MARK: stat */

/* stat's percentiles are picked by selection, not a sort, and its mean
 * summed in file order: both checked against a sort and a sum here, on
 * qualnames whose gaps take every path of the selection (many values
 * sharing their top bytes, repeats, negatives, all equal, counts either
 * side of where a few are sorted directly, the first differing byte far
 * down, and the median and the 99th percentile in different values of
 * that byte or in one), on one thread and three. */
Test(cli, stat_percentiles_are_the_sorted_gaps)
{
    /* MOST past 32,768 gaps: the column grows past 256 KiB, on one
     * thread and in the merge of three. */
    enum { OPS = 7, MOST = 40000 };
    static const char *names[OPS] = {"mixed.op", "equal.op", "few31.op",
                                     "few32.op", "two.op",   "close.op",
                                     "narrow.op"};
    static const size_t records[OPS] = {MOST, 400, 32, 33, 3, 5000, 5000};
    static double gaps[OPS][MOST];
    size_t made[OPS] = {0};
    double t[OPS] = {0};
    mpw file, body;
    mpw_init(&file);
    mpw_init(&body);
    mpw_std_header(&body);
    mpw_frame(&file, &body);
    uint64_t rng = 12345;
    for (bool more = true; more;) {
        more = false;
        for (int q = 0; q < OPS; q++) {
            if (made[q] == records[q])
                continue;
            more = true;
            rng = rng * 6364136223846793005u + 1442695040888963407u;
            unsigned r = (unsigned)(rng >> 33);
            double gap = q == 1 ? 0.25
                         /* alike down to the third byte of their keys */
                         : q == 5 ? 1.0 + (double)(r % 256) * 0x1p-30
                         /* the 99th percentile among the many 1.x */
                         : q == 6 ? (r % 200 == 0 ? 2.0 : 1.0 + (r % 4) * 0x1p-30)
                         : r % 10 == 0 ? 0 /* a repeated t_mono */
                         : r % 10 == 1 ? -(double)(r % 1000) / 1024
                         : r % 10 < 6   ? (double)(r % 4096) / 1024
                                        : ldexp((double)r, -40 - (int)(r % 9));
            if (made[q]) { /* the gap as stat finds it: t_mono - the last */
                double next = t[q] + gap;
                gaps[q][made[q] - 1] = next - t[q];
                t[q] = next;
            }
            mpw_reset(&body);
            mpw_record_begin(&body, t[q], 1e9 + t[q], names[q]);
            mpw_map(&body, 0);
            mpw_frame(&file, &body);
            made[q]++;
        }
    }
    char *path = tmp_file_with(file.buf, file.len);
    for (int jobs = 1; jobs <= 3; jobs += 2) {
        jv *got = stat_json(path, jobs);
        const jv *ops = json_get(got, "ops");
        cr_assert_eq(ops->n, OPS);
        for (size_t i = 0; i < ops->n; i++) {
            const jv *op = &ops->items[i];
            int q = op_index(op, names, OPS);
            size_t n = records[q] - 1;
            static double sorted[MOST];
            double sum = 0;
            for (size_t g = 0; g < n; g++)
                sum += gaps[q][g];
            memcpy(sorted, gaps[q], n * sizeof *sorted);
            qsort(sorted, n, sizeof *sorted, cmp_gap);
            cr_expect_eq(json_num(json_get(op, "gap_mean")), sum / (double)n,
                         "%s -j %d", names[q], jobs);
            cr_expect_eq(json_num(json_get(op, "gap_p50")),
                         sorted[(50 * n + 99) / 100 - 1], "%s -j %d",
                         names[q], jobs);
            cr_expect_eq(json_num(json_get(op, "gap_p99")),
                         sorted[(99 * n + 99) / 100 - 1], "%s -j %d",
                         names[q], jobs);
        }
        json_free(got);
    }
    mpw_free(&file);
    mpw_free(&body);
    free(path);
}

/* info and stat find a record's qualname through a small cache keyed by
 * the name's length and last bytes: names that share both (all in one
 * slot), names shorter than 8 bytes and names a byte apart still count
 * apart, on one thread and three. */
Test(cli, stat_counts_qualnames_that_share_their_ends)
{
    /* 40 names of one length and one last 8 bytes (one slot), a byte
     * apart at each place before those; "a".."z" and "aa".."zz", each
     * the start of another. */
    enum { SAME_END = 40, SHORT = 52, NAMES = SAME_END + SHORT, RECS = 6000 };
    char names[NAMES][32];
    const char *name_of[NAMES];
    for (int i = 0; i < NAMES; i++)
        name_of[i] = names[i];
    for (int i = 0; i < SAME_END; i++) {
        snprintf(names[i], sizeof names[i], "storage.manager.op_tail");
        names[i][i % 15] = (char)('A' + i / 15);
    }
    for (int i = 0; i < 26; i++) {
        snprintf(names[SAME_END + i], sizeof names[0], "%c", 'a' + i);
        snprintf(names[SAME_END + 26 + i], sizeof names[0], "%c%c", 'a' + i,
                 'a' + i);
    }
    uint64_t count[NAMES] = {0};
    double first[NAMES], last[NAMES];
    mpw file, body;
    mpw_init(&file);
    mpw_init(&body);
    mpw_std_header(&body);
    mpw_frame(&file, &body);
    /* At random, then each name right after one a byte apart (the
     * byte at the same place, 'A' against 'B'; "c" against "cc"). */
    uint64_t rng = 99;
    for (int i = 0; i < RECS + 2 * NAMES; i++) {
        rng = rng * 6364136223846793005u + 1442695040888963407u;
        int k = i - RECS;
        int q = k < 0            ? (int)((rng >> 33) % NAMES)
                : k % 2 == 0     ? k / 2
                : k / 2 < SAME_END ? (k / 2 + 15) % SAME_END
                : k / 2 < SAME_END + 26 ? k / 2 + 26
                                        : k / 2 - 26;
        double t = i * 0.001;
        if (!count[q]++)
            first[q] = t;
        last[q] = t;
        mpw_reset(&body);
        mpw_record_begin(&body, t, 1e9 + t, names[q]);
        mpw_map(&body, 0);
        mpw_frame(&file, &body);
    }
    char *path = tmp_file_with(file.buf, file.len);
    for (int jobs = 1; jobs <= 3; jobs += 2) {
        jv *got = stat_json(path, jobs);
        const jv *ops = json_get(got, "ops");
        cr_assert_eq(ops->n, NAMES, "-j %d", jobs);
        for (size_t i = 0; i < ops->n; i++) {
            const jv *op = &ops->items[i];
            int q = op_index(op, name_of, NAMES);
            cr_expect_eq(json_get(op, "count")->u, count[q], "%s -j %d",
                         names[q], jobs);
            cr_expect_eq(json_num(json_get(op, "first_t_mono")), first[q]);
            cr_expect_eq(json_num(json_get(op, "last_t_mono")), last[q]);
        }
        json_free(got);
    }
    mpw_free(&file);
    mpw_free(&body);
    free(path);
}

Test(cli, stat_gaps_are_nearest_rank)
{
    /* One qualname at t = 0, 1, 3, 6, 10: gaps 1, 2, 3, 4. */
    mpw file, body;
    mpw_init(&file);
    mpw_init(&body);
    mpw_std_header(&body);
    mpw_frame(&file, &body);
    const double times[] = {0, 1, 3, 6, 10};
    for (int i = 0; i < 5; i++) {
        mpw_reset(&body);
        mpw_record_begin(&body, times[i], times[i], "a.op");
        mpw_map(&body, 0);
        mpw_frame(&file, &body);
    }
    mpw_reset(&body);
    mpw_record_begin(&body, 2, 2, "b.op");
    mpw_map(&body, 0);
    mpw_frame(&file, &body);
    char *path = tmp_file_with(file.buf, file.len);
    run r = run_lct(NULL, "stat", "--json", path, NULL);
    cr_assert_eq(r.status, 0, "%s", r.err);
    jv *got = json_parse(r.out, r.outlen);
    cr_assert_not_null(got, "%s", r.out);
    cr_expect_eq(json_get(got, "records")->u, 6);
    cr_expect_eq(json_get(got, "duration")->d, 10.0);
    const jv *ops = json_get(got, "ops");
    cr_assert_eq(ops->n, 2);
    const jv *a = &ops->items[0];
    cr_expect_str_eq(json_get(a, "qualname")->s, "a.op");
    cr_expect_eq(json_get(a, "count")->u, 5);
    cr_expect_eq(json_get(a, "gap_mean")->d, 2.5);
    cr_expect_eq(json_get(a, "gap_p50")->d, 2.0, "ceil(50*4/100)-1 = 1");
    cr_expect_eq(json_get(a, "gap_p99")->d, 4.0, "ceil(99*4/100)-1 = 3");
    cr_expect_eq(json_get(a, "first_t_mono")->d, 0.0);
    cr_expect_eq(json_get(a, "last_t_mono")->d, 10.0);
    cr_expect_eq(json_get(&ops->items[1], "gap_p50")->t, J_NULL,
                 "one record has no gaps");
    cr_expect_eq(json_get(a, "gap_max")->d, 4.0);
    cr_expect_eq(json_get(a, "backwards")->u, 0);
    cr_expect_eq(json_get(got, "skipped")->u, 0);
    cr_expect_eq(json_get(got, "truncated")->b, false);
    json_free(got);
    run_free(&r);

    r = run_lct(NULL, "stat", "--csv", path, NULL);
    cr_expect(strncmp(r.out, "qualname,op,count,share,", 24) == 0, "%s",
              r.out);
    char *lines[8];
    cr_expect_eq(lines_of(r.out, lines, 8), 3);
    run_free(&r);
    r = run_lct(NULL, "stat", path, NULL);
    cr_expect(strstr(r.out, "total: 6 records, duration 10.000s") != NULL,
              "%s", r.out);
    run_free(&r);
    unlink(path);
    free(path);
    mpw_free(&file);
    mpw_free(&body);
}

/* stat: the largest gap and the record ending it, t_mono going back
 * counted and said, skips and a cut tail in every format, filters. */
Test(cli, stat_reports_gap_max_backwards_and_damage)
{
    mpw file, body;
    mpw_init(&file);
    mpw_init(&body);
    mpw_std_header(&body);
    mpw_frame(&file, &body);
    /* a.op at 0, 5, 4 (back by 1), 4.5; b.op at 1 */
    const double times[] = {0, 5, 4, 4.5};
    uint64_t offset_of[4];
    for (int i = 0; i < 4; i++) {
        mpw_reset(&body);
        mpw_record_begin(&body, times[i], times[i], "x.a.op");
        mpw_map(&body, 0);
        offset_of[i] = file.len;
        mpw_frame(&file, &body);
        if (i == 1) { /* a malformed frame in between */
            mpw_reset(&body);
            mpw_array(&body, 0);
            mpw_frame(&file, &body);
        }
    }
    mpw_reset(&body);
    mpw_record_begin(&body, 1, 1, "x.b.op");
    mpw_map(&body, 0);
    mpw_frame(&file, &body);
    mpw_raw(&file, "\x00\x00", 2); /* a cut tail */
    char *path = tmp_file_with(file.buf, file.len);
    run r = run_lct(NULL, "stat", "--json", "-q", path, NULL);
    jv *got = json_parse(r.out, r.outlen);
    cr_assert_not_null(got, "%s", r.out);
    cr_expect_eq(json_get(got, "skipped")->u, 1);
    cr_expect_eq(json_get(got, "truncated")->b, true);
    cr_expect_eq(json_get(got, "backwards")->u, 1);
    const jv *a = &json_get(got, "ops")->items[0];
    cr_expect_eq(json_get(a, "gap_max")->d, 5.0);
    cr_expect_eq(json_get(a, "gap_max_offset")->u, offset_of[1]);
    cr_expect_eq(json_get(a, "backwards")->u, 1);
    cr_expect_eq(json_get(a, "share")->d, 0.8);
    json_free(got);
    run_free(&r);
    r = run_lct(NULL, "stat", "-q", path, NULL);
    cr_expect(strstr(r.out, "damaged: 1 frames skipped, tail cut short"),
              "%s", r.out);
    cr_expect(strstr(r.out, "note: 1 records have a t_mono below"), "%s",
              r.out);
    run_free(&r);
    r = run_lct(NULL, "stat", "--csv", "-q", path, NULL);
    cr_expect(strstr(r.out, ",1,true\r\n"), "skipped and truncated: %s",
              r.out);
    run_free(&r);
    /* Filters: a suffix, a time window, and a pattern that selects none. */
    r = run_lct(NULL, "stat", "--json", "-q", "--qualname", "b.op", path,
                NULL);
    got = json_parse(r.out, r.outlen);
    cr_expect_eq(json_get(got, "records")->u, 1);
    json_free(got);
    run_free(&r);
    r = run_lct(NULL, "stat", "--json", "-q", "--since", "4", "--until",
                "4.5", path, NULL);
    got = json_parse(r.out, r.outlen);
    cr_expect_eq(json_get(got, "records")->u, 2);
    json_free(got);
    run_free(&r);
    r = run_lct(NULL, "stat", "--qualname", "zzz", path, NULL);
    cr_expect(strstr(r.err, "--qualname 'zzz' matched no record"), "%s",
              r.err);
    run_free(&r);
    unlink(path);
    free(path);
    mpw_free(&file);
    mpw_free(&body);
}

/* stat prints the short name (after the last dot) when every one in the
 * table is its own, and the whole qualname otherwise; CSV and JSON carry
 * both. */
Test(cli, stat_prints_short_names_when_unambiguous)
{
    run t = run_lct(NULL, "stat", LCT_SAMPLE, NULL);
    cr_expect(strstr(t.out, "  op\n"), "%s", t.out);
    cr_expect(strstr(t.out, "  finish_write\n"), "%s", t.out);
    cr_expect_null(strstr(t.out, "StorageManager"), "%s", t.out);
    run_free(&t);
    char *path;
    lct_writer *w = tmp_trace_writer(&path);
    const char *names[] = {"a.x.op", "b.x.op"}; /* one short name, twice */
    for (int i = 0; i < 2; i++) {
        lct_writer_record_begin(w, i, i, names[i], strlen(names[i]));
        lct_writer_map(w, 0);
        cr_assert_eq(lct_writer_end(w, NULL), LCT_OK);
    }
    lct_writer_close(w);
    t = run_lct(NULL, "stat", path, NULL);
    cr_expect(strstr(t.out, "  qualname\n") && strstr(t.out, "a.x.op") &&
                  strstr(t.out, "b.x.op"),
              "%s", t.out);
    run_free(&t);
    t = run_lct(NULL, "stat", "--json", path, NULL);
    cr_expect(strstr(t.out, "\"op\":\"op\""), "%s", t.out);
    run_free(&t);
    unlink(path);
    free(path);
}
