/*
 * test_spans.c - LMCache's paired calls (lct_spans, lct stat --spans) on
 * a hand-made trace whose pairs are worked out below: interleaved reads
 * of the same keys first in first out, a read of a partial hit pairing
 * with the submit its keys begin, and every kind of call left unpaired.
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "files.h"
#include "json.h"
#include "lct.h"
#include "run.h"

TestSuite(spans, .timeout = 120);


static const char SUBMIT[] = "submit_prefetch_task",
                  ENTER[] = "read_prefetched_results.__enter__",
                  EXIT[] = "read_prefetched_results.__exit__",
                  FINISH_READ[] = "finish_read_prefetched",
                  RESERVE[] = "reserve_write", FINISH_WRITE[] = "finish_write";

/*
 * t  1 submit ABC          s1
 * t  2 submit AB           s2
 * t  3 enter AB            the oldest submit beginning AB: s1; wait 2
 * t  4 enter AB            s2; wait 2
 * t  5 exit AB             the enter at 3; read 2
 * t  6 finish_read AB      the exit at 5; release 1; prefetch 1..6 = 5
 * t  7 exit AB             the enter at 4; read 3
 * t  8 exit C              no enter of C: unpaired
 * t  9 finish_read AB      the exit at 7; release 2; prefetch 2..9 = 7
 * t 10 enter D             no submit: unpaired, and never exited
 * t 11 submit E            never read
 * t 12 reserve A, t 13 reserve A, t 14 finish_write A: 12..14 = 2;
 *      the reserve at 13 is never finished
 * t 15 finish_write B      no reserve
 * t 16 finish_read AB      no exit left
 * t 17 enter BA            another tuple than AB: no submit
 * t 18 finish_write 5      keys not a list: passed over
 * t 19 reserve_write []    no key: passed over
 */
static char *interleaved(void)
{
    char *path;
    lct_writer *w = tmp_trace_writer(&path);
    write_call(w, 1, SUBMIT, "ABC");
    write_call(w, 2, SUBMIT, "AB");
    write_call(w, 3, ENTER, "AB");
    write_call(w, 4, ENTER, "AB");
    write_call(w, 5, EXIT, "AB");
    write_call(w, 6, FINISH_READ, "AB");
    write_call(w, 7, EXIT, "AB");
    write_call(w, 8, EXIT, "C");
    write_call(w, 9, FINISH_READ, "AB");
    write_call(w, 10, ENTER, "D");
    write_call(w, 11, SUBMIT, "E");
    write_call(w, 12, RESERVE, "A");
    write_call(w, 13, RESERVE, "A");
    write_call(w, 14, FINISH_WRITE, "A");
    write_call(w, 15, FINISH_WRITE, "B");
    write_call(w, 16, FINISH_READ, "AB");
    write_call(w, 17, ENTER, "BA");
    write_call(w, 18, FINISH_WRITE, NULL);
    write_call(w, 19, RESERVE, "");
    lct_writer_close(w);
    return path;
}

typedef struct got {
    lct_span v[32];
    size_t n;
} got;

static void collect(void *ctx, const lct_span *sp)
{
    got *g = ctx;
    cr_assert_lt(g->n, 32);
    g->v[g->n++] = *sp;
}

Test(spans, pairs_first_in_first_out_per_key_tuple)
{
    char *path = interleaved();
    lct_reader *r;
    cr_assert_eq(lct_open(path, 0, &r, NULL), LCT_OK);
    lct_spans *s;
    cr_assert_eq(lct_spans_new(&s, NULL), LCT_OK);
    got g = {0};
    lct_record rec;
    while (lct_next(r, &rec) == 1)
        cr_assert_eq(lct_spans_add(s, &rec, collect, &g, NULL), LCT_OK);
    static const struct {
        lct_span_kind kind;
        double t0, t1;
        uint32_t keys;
    } want[] = {
        {LCT_SPAN_PREFETCH_WAIT, 1, 3, 2},  {LCT_SPAN_PREFETCH_WAIT, 2, 4, 2},
        {LCT_SPAN_PREFETCH_READ, 3, 5, 2},  {LCT_SPAN_PREFETCH_RELEASE, 5, 6, 2},
        {LCT_SPAN_PREFETCH, 1, 6, 2},       {LCT_SPAN_PREFETCH_READ, 4, 7, 2},
        {LCT_SPAN_PREFETCH_RELEASE, 7, 9, 2}, {LCT_SPAN_PREFETCH, 2, 9, 2},
        {LCT_SPAN_WRITE, 12, 14, 1},
    };
    size_t n = sizeof want / sizeof *want;
    cr_assert_eq(g.n, n, "%zu spans", g.n);
    for (size_t i = 0; i < n; i++) {
        cr_expect_eq(g.v[i].kind, want[i].kind, "span %zu", i);
        cr_expect_eq(g.v[i].t_start, want[i].t0, "span %zu", i);
        cr_expect_eq(g.v[i].t_end, want[i].t1, "span %zu", i);
        cr_expect_eq(g.v[i].keys, want[i].keys, "span %zu", i);
        cr_expect_lt(g.v[i].start_offset, g.v[i].end_offset);
    }
    lct_spans_unpaired u;
    lct_spans_unpaired_get(s, &u);
    cr_expect_eq(u.submit_never_read, 1);
    cr_expect_eq(u.enter_without_submit, 2, "D and BA");
    cr_expect_eq(u.enter_never_exited, 2);
    cr_expect_eq(u.exit_without_enter, 1);
    cr_expect_eq(u.exit_never_finished, 0);
    cr_expect_eq(u.finish_read_without_exit, 1);
    cr_expect_eq(u.reserve_never_finished, 1);
    cr_expect_eq(u.finish_write_without_reserve, 1);
    cr_expect_eq(u.unreadable_keys, 1);
    cr_expect_eq(u.without_keys, 1);
    lct_spans_free(s);
    lct_close(r);
    unlink(path);
    free(path);
}

static lct_str str(const char *s)
{
    return (lct_str){s, strlen(s)};
}

Test(spans, lct_call_of_names_the_six_calls)
{
    cr_expect_eq(lct_call_of(str("X.finish_write")),
                 LCT_CALL_FINISH_WRITE);
    cr_expect_eq(lct_call_of(str(
                     "a.read_prefetched_results.__exit__")),
                 LCT_CALL_READ_EXIT);
    cr_expect_eq(lct_call_of(str("finish_write")),
                 LCT_CALL_OTHER, "a suffix after a dot");
    cr_expect_eq(lct_call_of(str("X.lookup")), LCT_CALL_OTHER);
    cr_expect_str_eq(lct_span_kind_name(LCT_SPAN_PREFETCH_WAIT),
                     "prefetch.wait");
    cr_expect_null(lct_span_kind_name((lct_span_kind)9));
}

static const jv *span_row(const jv *j, const char *name)
{
    const jv *rows = json_get(j, "spans");
    for (size_t i = 0; rows && i < rows->n; i++)
        if (strcmp(json_get(&rows->items[i], "span")->s, name) == 0)
            return &rows->items[i];
    cr_assert_fail("no span %s", name);
    return NULL;
}

Test(spans, stat_spans_prints_nearest_rank_figures)
{
    char *path = interleaved();
    run t = run_lct(NULL, "stat", "--spans", "--json", path, NULL);
    cr_assert_eq(t.status, 0, "%s", t.err);
    jv *j = json_parse(t.out, t.outlen);
    cr_assert(j, "%s", t.out);
    /* prefetch: 5 and 7; p50 is the first of two (rank ceil(1) = 1),
     * p90 and p99 the second */
    const jv *p = span_row(j, "prefetch");
    cr_expect_eq(json_get(p, "count")->u, 2);
    cr_expect_eq(json_number(json_get(p, "mean")), 6);
    cr_expect_eq(json_number(json_get(p, "p50")), 5);
    cr_expect_eq(json_number(json_get(p, "p90")), 7);
    cr_expect_eq(json_number(json_get(p, "p99")), 7);
    cr_expect_eq(json_number(json_get(p, "max")), 7);
    const jv *rd = span_row(j, "prefetch.read");
    cr_expect_eq(json_number(json_get(rd, "mean")), 2.5);
    cr_expect_eq(json_number(json_get(span_row(j, "prefetch.release"),
                                      "p50")), 1);
    const jv *wr = span_row(j, "write");
    cr_expect_eq(json_get(wr, "count")->u, 1);
    cr_expect_eq(json_number(json_get(wr, "p99")), 2);
    const jv *u = json_get(j, "unpaired");
    cr_expect_eq(json_get(u, "enter_without_submit")->u, 2);
    cr_expect_eq(json_get(u, "reserve_never_finished")->u, 1);
    json_free(j);
    run_free(&t);

    t = run_lct(NULL, "stat", "--spans", "--csv", path, NULL);
    cr_assert_eq(t.status, 0, "%s", t.err);
    cr_expect(strstr(t.out, "span,count,mean,p50,p90,p99,max\r\n"
                            "prefetch,2,6.0,5.0,7.0,7.0,7.0\r\n"), "%s", t.out);
    cr_expect(strstr(t.out, "\r\nunpaired.exit_without_enter,1,,,,,\r\n"),
              "%s", t.out);
    run_free(&t);

    t = run_lct(NULL, "stat", "--spans", path, NULL);
    cr_assert_eq(t.status, 0, "%s", t.err);
    cr_expect(strstr(t.out, "\nwrite                     1    2.000000    "
                            "2.000000    2.000000    2.000000    "
                            "2.000000\n"), "%s", t.out);
    cr_expect(strstr(t.out, "unpaired: 1 submits never read, 2 reads "
                            "without a submit"), "%s", t.out);
    cr_expect(strstr(t.out, "passed over: 1 calls naming no key, 1 whose "
                            "keys could not be read"), "%s", t.out);
    run_free(&t);

    /* --qualname selects the calls paired: without the exits nothing
     * reads to the end */
    t = run_lct(NULL, "stat", "--spans", "--json", "--qualname",
                "*submit_prefetch_task", "--qualname", "*__enter__", path,
                NULL);
    cr_assert_eq(t.status, 0, "%s", t.err);
    j = json_parse(t.out, t.outlen);
    cr_expect_eq(json_get(span_row(j, "prefetch.wait"), "count")->u, 2);
    cr_expect_eq(json_get(span_row(j, "prefetch"), "count")->u, 0);
    cr_expect(json_get(span_row(j, "prefetch"), "mean")->t == J_NULL);
    json_free(j);
    run_free(&t);

    t = run_lct(NULL, "stat", "--spans", "--sort", "count", path, NULL);
    cr_expect_eq(t.status, 2);
    cr_expect(strstr(t.err, "--sort orders the table"), "%s", t.err);
    run_free(&t);
    unlink(path);
    free(path);
}

Test(spans, stat_sort_orders_the_table)
{
    char *path = interleaved();
    /* 4 enters; 3 of each other call, which tie and go by name */
    run t = run_lct(NULL, "stat", "--sort", "count", "--csv", path, NULL);
    cr_assert_eq(t.status, 0, "%s", t.err);
    const char *row = strchr(t.out, '\n') + 1;
    cr_expect(strstr(row, ",__enter__,4,") < strchr(row, '\n'), "%s", t.out);
    row = strchr(row, '\n') + 1;
    cr_expect(strstr(row, ",finish_read_prefetched,3,") < strchr(row, '\n'),
              "%s", t.out);
    run_free(&t);
    t = run_lct(NULL, "stat", "--csv", path, NULL); /* by name */
    cr_assert_eq(t.status, 0, "%s", t.err);
    row = strchr(t.out, '\n') + 1;
    cr_expect(strstr(row, ",finish_read_prefetched,3,") < strchr(row, '\n'),
              "%s", t.out);
    run_free(&t);
    t = run_lct(NULL, "stat", "--sort", "gap", "--json", path, NULL);
    cr_assert_eq(t.status, 0, "%s", t.err);
    jv *j = json_parse(t.out, t.outlen);
    const jv *ops = json_get(j, "ops");
    for (size_t i = 1; i < ops->n; i++)
        cr_expect_geq(json_number(json_get(&ops->items[i - 1], "gap_mean")),
                      json_number(json_get(&ops->items[i], "gap_mean")));
    json_free(j);
    run_free(&t);
    unlink(path);
    free(path);
}

/*
 * The Trace Event Format's rules, as chrome://tracing and Perfetto read
 * JSON: an object with a traceEvents array; every event a name, a ph of
 * the kinds written (X, B, E, b, e, C, i, M), a ts in microseconds >= 0,
 * a pid and a tid; an X a dur >= 0; b and e async slices paired one to
 * one by cat and id, the end not before the begin; B and E nested per
 * (pid, tid); a counter's args numbers.  Returns the events.
 */
static const jv *check_trace_events(const jv *j)
{
    cr_assert(j && j->t == J_OBJ, "a JSON object");
    const jv *ev = json_get(j, "traceEvents");
    cr_assert(ev && ev->t == J_ARR, "traceEvents");
    double open_ts[64];
    int64_t open_id[64];
    size_t nopen = 0, depth = 0;
    for (size_t i = 0; i < ev->n; i++) {
        const jv *e = &ev->items[i];
        const jv *name = json_get(e, "name"), *ph = json_get(e, "ph"),
                 *ts = json_get(e, "ts"), *pid = json_get(e, "pid"),
                 *tid = json_get(e, "tid");
        cr_assert(name && name->t == J_STR, "event %zu: name", i);
        cr_assert(ph && ph->t == J_STR && strlen(ph->s) == 1 &&
                      strchr("XBEbeCiM", ph->s[0]),
                  "event %zu: ph", i);
        cr_assert(ts && (ts->t == J_INT || ts->t == J_FLOAT) &&
                      json_number(ts) >= 0, "event %zu: ts", i);
        cr_assert(pid && pid->t == J_INT && tid && tid->t == J_INT,
                  "event %zu: pid and tid", i);
        char k = ph->s[0];
        if (k == 'X') {
            const jv *dur = json_get(e, "dur");
            cr_assert(dur && json_number(dur) >= 0, "event %zu: dur", i);
        } else if (k == 'b' || k == 'e') {
            const jv *id = json_get(e, "id"), *cat = json_get(e, "cat");
            cr_assert(id && id->t == J_INT && cat && cat->t == J_STR);
            if (k == 'b') {
                cr_assert_lt(nopen, 64);
                open_id[nopen] = (int64_t)id->u;
                open_ts[nopen++] = json_number(ts);
            } else {
                size_t at = nopen;
                for (size_t o = 0; o < nopen; o++)
                    if (open_id[o] == (int64_t)id->u)
                        at = o;
                cr_assert_lt(at, nopen, "an end without its begin: %llu",
                             (unsigned long long)id->u);
                cr_assert_geq(json_number(ts), open_ts[at]);
                open_id[at] = open_id[--nopen];
                open_ts[at] = open_ts[nopen];
            }
        } else if (k == 'B' || k == 'E') {
            cr_assert(k == 'B' || depth > 0, "an E without its B");
            depth += k == 'B' ? 1 : (size_t)-1;
        } else if (k == 'C') {
            const jv *args = json_get(e, "args");
            cr_assert(args && args->t == J_OBJ && args->n >= 1);
        }
    }
    cr_expect_eq(nopen, 0, "every async begin ended");
    cr_expect_eq(depth, 0, "every B ended");
    return ev;
}

static size_t count_ph(const jv *ev, char ph, const char *name)
{
    size_t n = 0;
    for (size_t i = 0; i < ev->n; i++)
        n += json_get(&ev->items[i], "ph")->s[0] == ph &&
             (!name || strcmp(json_get(&ev->items[i], "name")->s, name) == 0);
    return n;
}

Test(spans, export_perfetto_follows_the_trace_event_format)
{
    char *path = interleaved();
    char *out = tmp_file_with("", 0);
    run t = run_lct(NULL, "export", "--perfetto", out, "--hit-rate", "100",
                    "--window", "5", path, path, NULL);
    cr_assert_eq(t.status, 0, "%s", t.err);
    run_free(&t);
    size_t len;
    char *text = read_whole_file(out, &len);
    jv *j = json_parse(text, len);
    const jv *ev = check_trace_events(j);
    /* two files, a process each; 19 calls each; the 9 spans each */
    cr_expect_eq(count_ph(ev, 'M', "process_name"), 2);
    cr_expect_eq(count_ph(ev, 'X', NULL), 2 * 19);
    cr_expect_eq(count_ph(ev, 'b', NULL), 2 * 9);
    cr_expect_eq(count_ph(ev, 'b', "prefetch"), 2 * 2);
    cr_expect_eq(count_ph(ev, 'b', "write"), 2 * 1);
    uint64_t calls = 0;
    double first_ts = -1;
    for (size_t i = 0; i < ev->n; i++) {
        const jv *e = &ev->items[i];
        if (json_get(e, "ph")->s[0] == 'C' &&
            strcmp(json_get(e, "name")->s, "calls per second") == 0)
            calls += json_get(json_get(e, "args"), "calls")->u;
        if (first_ts < 0 && json_get(e, "ph")->s[0] == 'X')
            first_ts = json_number(json_get(e, "ts"));
    }
    cr_expect_eq(calls, 2 * 19, "every call counted once");
    cr_expect_eq(first_ts, 1e6, "t_mono 1 s is 1,000,000 us");
    /* the hit rate: windows of 5 s with lookups (the submits at t 1 and
     * 2 in the first, 11 in the third; none from 5 to 10), per file */
    cr_expect_eq(count_ph(ev, 'C', "token hit rate"), 2 * 2);
    json_free(j);
    free(text);

    /* --qualname keeps the calls asked for; their spans pair alone */
    t = run_lct(NULL, "export", "--perfetto", out, "--qualname",
                "*reserve_write", "--qualname", "*finish_write", path, NULL);
    cr_assert_eq(t.status, 0, "%s", t.err);
    run_free(&t);
    text = read_whole_file(out, &len);
    j = json_parse(text, len);
    ev = check_trace_events(j);
    cr_expect_eq(count_ph(ev, 'X', NULL), 6);
    cr_expect_eq(count_ph(ev, 'b', NULL), 1);
    json_free(j);
    free(text);

    t = run_lct(NULL, "export", path, NULL);
    cr_expect_eq(t.status, 2);
    cr_expect(strstr(t.err, "--perfetto OUT is needed"), "%s", t.err);
    run_free(&t);
    t = run_lct(NULL, "export", "--perfetto", path, path, NULL);
    cr_expect_eq(t.status, 2, "never over an input: %s", t.err);
    run_free(&t);
    unlink(out);
    free(out);
    unlink(path);
    free(path);
}

#ifdef LCT_HAVE_SQLITE /* the spans table and the aggregates */
/* `lct sql --csv QUERY path` (stdin from stdin_path, or none). */
static run sql_csv(const char *stdin_path, const char *query,
                   const char *path)
{
    run t = stdin_path
                ? run_lct(stdin_path, "sql", "--csv", "-f", "-", path, NULL)
                : run_lct(NULL, "sql", "--csv", query, path, NULL);
    cr_assert_eq(t.status, 0, "%s: %s", query ? query : "-f -", t.err);
    return t;
}

Test(spans, sql_spans_table_holds_the_spans)
{
    char *path = interleaved();
    run t = sql_csv(NULL, "SELECT span, t_start, t_end, duration, keys "
                          "FROM spans", path);
    cr_expect_str_eq(t.out, "span,t_start,t_end,duration,keys\r\n"
                            "prefetch.wait,1.0,3.0,2.0,2\r\n"
                            "prefetch.wait,2.0,4.0,2.0,2\r\n"
                            "prefetch.read,3.0,5.0,2.0,2\r\n"
                            "prefetch.release,5.0,6.0,1.0,2\r\n"
                            "prefetch,1.0,6.0,5.0,2\r\n"
                            "prefetch.read,4.0,7.0,3.0,2\r\n"
                            "prefetch.release,7.0,9.0,2.0,2\r\n"
                            "prefetch,2.0,9.0,7.0,2\r\n"
                            "write,12.0,14.0,2.0,1\r\n");
    run_free(&t);
    /* the offsets are the records' */
    t = sql_csv(NULL, "SELECT count(*) FROM spans s JOIN records a ON "
                      "a.offset = s.start_offset JOIN records b ON "
                      "b.offset = s.end_offset WHERE a.t_mono = s.t_start "
                      "AND b.t_mono = s.t_end", path);
    cr_expect_str_eq(t.out, "count(*)\r\n9\r\n");
    run_free(&t);
    unlink(path);
    free(path);
}

/*
 * percentile as SQLite's extension (ext/misc/percentile.c) defines it:
 * over 1, 2, 4 (a NULL left out) the 25th percentile is at index
 * (25 + 1 - 1) x 2 x 0.01 = 0.5, half way from 1 to 2: 1.5; the median at
 * index 1: 2; the 100th the largest; the 0th the least; 10 and 20 give a
 * median of 15.  The 7th of the 101 squares 0..10000 is at 7 x 100 x 0.01,
 * exactly 7: 49, where 7 / 100 x 100 is 7.000000000000001 and gave
 * 49.000000000000014.  A P within 0.001 of the first row's is the same P
 * (the first's counts).
 */
Test(spans, sql_percentile_and_median)
{
    char *path = interleaved();
    const char *values = "(SELECT 1 AS x UNION ALL SELECT 2 UNION ALL "
                         "SELECT 4 UNION ALL SELECT NULL)";
    char q[512];
    snprintf(q, sizeof q, "SELECT percentile(x, 25), median(x), "
             "percentile(x, 100), percentile(x, 0) FROM %s", values);
    run t = sql_csv(NULL, q, path);
    cr_expect(strstr(t.out, "\r\n1.5,2.0,4.0,1.0\r\n"), "%s", t.out);
    run_free(&t);
    static const char *good[][2] = {
        {"SELECT median(x) FROM (SELECT 10 AS x UNION ALL SELECT 20)",
         "\r\n15.0\r\n"},
        {"SELECT median(x) IS NULL FROM (SELECT NULL AS x)", "\r\n1\r\n"},
        {"SELECT percentile(x, 7) FROM (WITH RECURSIVE c(i) AS (SELECT 0 "
         "UNION ALL SELECT i + 1 FROM c WHERE i < 100) SELECT i * i AS x "
         "FROM c)", "\r\n49.0\r\n"},
        {"SELECT percentile(x, p) FROM (SELECT 1 AS x, 50 AS p UNION ALL "
         "SELECT 2, 50.0005)", "\r\n1.5\r\n"},
        {"SELECT percentile(1, '50')", "\r\n1.0\r\n"}};
    for (size_t i = 0; i < sizeof good / sizeof *good; i++) {
        t = sql_csv(NULL, good[i][0], path);
        cr_expect(strstr(t.out, good[i][1]), "%s: %s", good[i][0], t.out);
        run_free(&t);
    }
    static const char *bad[][2] = {
        {"SELECT percentile(1, 101)", "not a number between 0.0 and 100.0"},
        {"SELECT median('a')", "1st argument to percentile() is not numeric"},
        /* Y's own type counts, not what its affinity would make of it */
        {"SELECT median(x) FROM (SELECT '3' AS x UNION ALL SELECT 1)",
         "1st argument to percentile() is not numeric"},
        {"SELECT percentile(x, 50) FROM (SELECT 1 AS x UNION ALL "
         "SELECT 1e999)", "Inf input to percentile()"},
        {"SELECT median(-1e999)", "Inf input to percentile()"},
        {"SELECT percentile(x, x) FROM (SELECT 1 AS x UNION ALL SELECT 2)",
         "not the same for all input rows"},
        {"SELECT percentile(x, p) FROM (SELECT 1 AS x, 50 AS p UNION ALL "
         "SELECT 2, 50.002)", "not the same for all input rows"}};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        t = run_lct(NULL, "sql", bad[i][0], path, NULL);
        cr_expect_eq(t.status, 1, "%s", bad[i][0]);
        cr_expect(strstr(t.err, bad[i][1]), "%s", t.err);
        run_free(&t);
    }
    unlink(path);
    free(path);
}

/*
 * As window functions: over x = 5, 1, 9, NULL, 3 in order, a frame of the
 * row and the one before has medians 5, (5 + 1) / 2, (1 + 9) / 2, 9 (the
 * NULL left out), 3 (rows leave the frame: the inverse); a frame from the
 * first row grows, values arriving below the largest:
 * 5, 3, 5, 5, then over 1 3 5 9 index 1.5: 4.
 */
Test(spans, sql_percentile_as_a_window_function)
{
    char *path = interleaved();
    const char *rows = "(SELECT 1 AS i, 5 AS x UNION ALL SELECT 2, 1 UNION "
                       "ALL SELECT 3, 9 UNION ALL SELECT 4, NULL UNION ALL "
                       "SELECT 5, 3)";
    char q[512];
    snprintf(q, sizeof q, "SELECT median(x) OVER (ORDER BY i ROWS BETWEEN "
             "1 PRECEDING AND CURRENT ROW) AS m FROM %s", rows);
    run t = sql_csv(NULL, q, path);
    cr_expect_str_eq(t.out, "m\r\n5.0\r\n3.0\r\n5.0\r\n9.0\r\n3.0\r\n");
    run_free(&t);
    snprintf(q, sizeof q, "SELECT percentile(x, 50) OVER (ORDER BY i) AS m "
             "FROM %s", rows);
    t = sql_csv(NULL, q, path);
    cr_expect_str_eq(t.out, "m\r\n5.0\r\n3.0\r\n5.0\r\n5.0\r\n4.0\r\n");
    run_free(&t);
    unlink(path);
    free(path);
}

Test(spans, sql_reads_a_query_from_a_file_and_takes_comments)
{
    char *path = interleaved();
    const char query[] = "-- spans\nSELECT count(*) AS n FROM spans;";
    char *qpath = tmp_file_with(query, sizeof query - 1);
    run t = sql_csv(qpath, NULL, path); /* -f - */
    cr_expect_str_eq(t.out, "n\r\n9\r\n");
    run_free(&t);
    t = run_lct(NULL, "sql", "--csv", "-f", qpath, path, NULL);
    cr_expect_eq(t.status, 0, "%s", t.err);
    cr_expect_str_eq(t.out, "n\r\n9\r\n");
    run_free(&t);
    t = sql_csv(NULL, query, path); /* a comment first: not an option */
    cr_expect_str_eq(t.out, "n\r\n9\r\n");
    run_free(&t);
    t = run_lct(NULL, "sql", "-f", "/nonexistent/q.sql", path, NULL);
    cr_expect_eq(t.status, 2);
    cr_expect(strstr(t.err, "-f /nonexistent/q.sql: No such file"), "%s",
              t.err);
    run_free(&t);
    /* the table rounds reals to 6 decimals; CSV keeps every digit */
    t = run_lct(NULL, "sql", "SELECT 1.0 / 3 AS third, 2.9295049999999954 "
                "AS t, 1e-9 AS tiny", path, NULL);
    cr_expect_eq(t.status, 0, "%s", t.err);
    cr_expect(strstr(t.out, "\n0.333333  2.929505  1e-09\n"), "%s", t.out);
    run_free(&t);
    t = sql_csv(NULL, "SELECT 1.0 / 3 AS third", path);
    cr_expect(strstr(t.out, "0.3333333333333333"), "%s", t.out);
    run_free(&t);
    unlink(qpath);
    free(qpath);
    unlink(path);
    free(path);
}
#endif

/* A call naming keys A and B with the salts given (one a key; NULL: the
 * first for both), `keys` written twice when twice (the last one counts,
 * as in a Python dict). */
static void write_salted(lct_writer *w, double t, const char *op,
                         const char *salt_a, const char *salt_b, bool twice)
{
    char q[160];
    snprintf(q, sizeof q, "lmcache.v1.distributed.storage_manager."
                          "StorageManager.%s", op);
    lct_writer_record_begin(w, t, 1.7e9 + t, q, strlen(q));
    lct_writer_map(w, twice ? 2 : 1);
    for (int pass = 0; pass < (twice ? 2 : 1); pass++) {
        lct_writer_cstr(w, "keys");
        lct_writer_array(w, 2);
        for (int k = 0; k < 2; k++) {
            unsigned char hash[32] = {(unsigned char)('A' + k), 7};
            const char *salt = k && salt_b ? salt_b : salt_a;
            write_object_key(w, hash, sizeof hash, 0, 0,
                             pass == 0 && twice ? "first" : salt);
        }
    }
    cr_assert_eq(lct_writer_end(w, NULL), LCT_OK);
}

/* Every span and unpaired count of a trace opened with these flags. */
static void spans_of(const char *path, unsigned flags, got *g,
                     lct_spans_unpaired *u)
{
    lct_reader *r;
    cr_assert_eq(lct_open(path, flags, &r, NULL), LCT_OK);
    lct_spans *s;
    cr_assert_eq(lct_spans_new(&s, NULL), LCT_OK);
    memset(g, 0, sizeof *g);
    lct_record rec;
    while (lct_next(r, &rec) == 1)
        cr_assert_eq(lct_spans_add(s, &rec, collect, g, NULL), LCT_OK);
    lct_spans_unpaired_get(s, u);
    lct_spans_free(s);
    lct_close(r);
}

/* A list the validating walk noted (LCT_KEYS: keys alike but for hash,
 * rank and group) is read where it lies, its model and salt digested
 * once; the spans are those of the keys walked one by one.  Salts tell
 * tuples apart, a list of two salts is one tuple of its own, and of a
 * `keys` written twice the last counts.
 * t 1 submit AB salted x; t 2 enter AB salted y: no submit of y
 * t 3 enter AB salted x: pairs with 1, wait 2
 * t 4 submit A:x B:y; t 5 enter AB salted x: no submit (4 is another
 *     tuple); t 6 enter A:x B:y: pairs with 4, wait 2
 * t 7 submit AB salted z; t 8 enter with keys AB "first", then AB z:
 *     the second list counts, pairs with 7, wait 1
 * t 9 submit A unsalted, B:x (two shapes: a list noted in two parts
 *     once both have templates); t 10 enter A, B:y: no submit; t 11
 *     enter A, B:x: pairs with 9, wait 2 */
Test(spans, a_noted_list_pairs_as_its_keys_walked_one_by_one)
{
    char *path;
    lct_writer *w = tmp_trace_writer(&path);
    write_salted(w, 1, SUBMIT, "x", NULL, false);
    write_salted(w, 2, ENTER, "y", NULL, false);
    write_salted(w, 3, ENTER, "x", NULL, false);
    write_salted(w, 4, SUBMIT, "x", "y", false);
    write_salted(w, 5, ENTER, "x", NULL, false);
    write_salted(w, 6, ENTER, "x", "y", false);
    write_salted(w, 7, SUBMIT, "z", NULL, false);
    write_salted(w, 8, ENTER, "z", NULL, true);
    write_salted(w, 9, SUBMIT, NULL, "x", false);
    write_salted(w, 10, ENTER, NULL, "y", false);
    write_salted(w, 11, ENTER, NULL, "x", false);
    lct_writer_close(w);
    for (int f = 0; f < 2; f++) {
        got g;
        lct_spans_unpaired u;
        spans_of(path, f ? LCT_KEYS : 0, &g, &u);
        cr_assert_eq(g.n, 4, "flags %d: %zu spans", f, g.n);
        double want[][2] = {{1, 3}, {4, 6}, {7, 8}, {9, 11}};
        for (size_t i = 0; i < 4; i++) {
            cr_expect_eq(g.v[i].kind, LCT_SPAN_PREFETCH_WAIT);
            cr_expect_eq(g.v[i].t_start, want[i][0], "flags %d span %zu", f,
                         i);
            cr_expect_eq(g.v[i].t_end, want[i][1], "flags %d span %zu", f,
                         i);
        }
        cr_expect_eq(u.enter_without_submit, 3, "flags %d", f);
    }
    unlink(path);
    free(path);
    /* generated traces whose lists are noted, and the mix, whose lists
     * of salted and unsalted keys are noted in parts: the same spans
     * either way */
    static const char *const shapes[][2] = {
        {"--shape", "llama"}, {"--mix", NULL}, {"--spec", NULL}};
    for (size_t k = 0; k < 3; k++) {
        char *gen = gen_shape_trace("3000", shapes[k][0], shapes[k][1]);
        static got a, b; /* 32 spans each at most: the first 32 */
        lct_spans_unpaired ua, ub;
        lct_reader *r;
        lct_spans *s[2];
        cr_assert_eq(lct_spans_new(&s[0], NULL), LCT_OK);
        cr_assert_eq(lct_spans_new(&s[1], NULL), LCT_OK);
        uint64_t sum[2] = {0, 0};
        for (int f = 0; f < 2; f++) {
            cr_assert_eq(lct_open(gen, f ? LCT_KEYS : 0, &r, NULL), LCT_OK);
            lct_record rec;
            while (lct_next(r, &rec) == 1) {
                got *g = f ? &b : &a;
                g->n = 0;
                cr_assert_eq(lct_spans_add(s[f], &rec, collect, g, NULL),
                             LCT_OK);
                for (size_t i = 0; i < g->n; i++)
                    sum[f] = sum[f] * 31 + g->v[i].start_offset * 7 +
                             g->v[i].end_offset + (uint64_t)g->v[i].kind;
            }
            lct_close(r);
        }
        lct_spans_unpaired_get(s[0], &ua);
        lct_spans_unpaired_get(s[1], &ub);
        cr_expect_eq(sum[0], sum[1], "%s: the same spans", shapes[k][0]);
        cr_expect_eq(memcmp(&ua, &ub, sizeof ua), 0, "%s: unpaired",
                     shapes[k][0]);
        lct_spans_free(s[0]);
        lct_spans_free(s[1]);
        unlink(gen);
        free(gen);
    }
}
