/*
 * test_l2.c - L2-level traces (LMCache's l2-tracing fork): lct check's
 * footer verdicts (missing, repeated, drops), lct stat's pairing of each
 * submission with its completion by (operation, adapter_index, task_id)
 * on a hand-made trace whose figures are worked out below, lct keys'
 * operations and object_sizes, and lct gen --level l2's traces read back
 * whole.
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

TestSuite(l2, .timeout = 120);

/* MARK: hand-made L2 traces */

static lct_writer *l2_writer(char **path)
{
    return tmp_level_writer(path, "l2");
}

static void begin(lct_writer *w, double t, const char *q, unsigned nfields,
                  unsigned adapter)
{
    lct_writer_record_begin(w, t, 1.7e9 + t, q, strlen(q));
    lct_writer_map(w, nfields + 1);
    lct_writer_cstr(w, "adapter_index");
    lct_writer_uint(w, adapter);
}

static void uint_field(lct_writer *w, const char *name, uint64_t v)
{
    lct_writer_cstr(w, name);
    lct_writer_uint(w, v);
}

/* keys: a key a letter, and object_sizes when sizes is given */
static void keys(lct_writer *w, const char *letters, const uint64_t *sizes)
{
    size_t n = strlen(letters);
    lct_writer_cstr(w, "keys");
    lct_writer_array(w, (uint32_t)n);
    for (size_t i = 0; i < n; i++) {
        unsigned char hash[8] = {(unsigned char)letters[i], 7};
        write_object_key(w, hash, sizeof hash, 0, -1, NULL);
    }
    if (!sizes)
        return;
    lct_writer_cstr(w, "object_sizes");
    lct_writer_array(w, (uint32_t)n);
    for (size_t i = 0; i < n; i++)
        lct_writer_uint(w, sizes[i]);
}

static void indices(lct_writer *w, const char *name, const unsigned *at,
                    unsigned n)
{
    lct_writer_cstr(w, name);
    lct_writer_array(w, n);
    for (unsigned i = 0; i < n; i++)
        lct_writer_uint(w, at[i]);
}

static void end(lct_writer *w)
{
    cr_assert_eq(lct_writer_end(w, NULL), LCT_OK);
}

static void footer(lct_writer *w, double t, uint64_t recorder, uint64_t bus)
{
    lct_writer_record_begin(w, t, 1.7e9 + t, "l2.trace.end", 12);
    lct_writer_map(w, 2);
    uint_field(w, "recorder_dropped_count", recorder);
    uint_field(w, "event_bus_dropped_count", bus);
    end(w);
}

/*
 * adapter 0:
 * t 1.000  store task 5 of AB (sizes 100, 300)
 * t 1.500  lookup task 5 of AB (the same id, another operation)
 * t 1.002  store task 5 completed: 2 succeeded, 400 bytes: 2000 us
 * t 1.501  lookup task 5 completed, hits [0]: 1000 us, 1 hit of 2
 * t 1.600  load task 6 of AB (sizes 100, 300)
 * t 1.604  load task 6 completed, successes [1]: 4000 us, 300 bytes
 * t 1.700  unlock AB
 * t 1.800  load task 7 of C, never completed: unpaired
 * t 1.900  lookup task 9 completed, never submitted
 * t 2.000  delete C
 * adapter 3:
 * t 2.100  store task 5 of D (size 50), failed: 0 of 1, 1000 us
 */
static char *tasks_trace(bool with_footer, uint64_t recorder, uint64_t bus)
{
    char *path;
    lct_writer *w = l2_writer(&path);
    static const uint64_t ab[] = {100, 300}, c[] = {70}, d[] = {50};
    static const unsigned zero[] = {0}, one[] = {1};
    begin(w, 1.0, "l2.store.submitted", 3, 0);
    uint_field(w, "task_id", 5);
    keys(w, "AB", ab);
    end(w);
    begin(w, 1.5, "l2.lookup_task.submitted", 3, 0);
    uint_field(w, "request_id", 11);
    uint_field(w, "task_id", 5);
    keys(w, "AB", NULL);
    end(w);
    begin(w, 1.002, "l2.store.completed", 4, 0);
    uint_field(w, "task_id", 5);
    uint_field(w, "succeeded_count", 2);
    uint_field(w, "failed_count", 0);
    uint_field(w, "bytes_transferred", 400);
    end(w);
    begin(w, 1.501, "l2.lookup_task.completed", 3, 0);
    uint_field(w, "request_id", 11);
    uint_field(w, "task_id", 5);
    indices(w, "hit_indices", zero, 1);
    end(w);
    begin(w, 1.6, "l2.load_task.submitted", 4, 0);
    uint_field(w, "request_id", 11);
    uint_field(w, "task_id", 6);
    keys(w, "AB", ab);
    end(w);
    begin(w, 1.604, "l2.load_task.completed", 3, 0);
    uint_field(w, "request_id", 11);
    uint_field(w, "task_id", 6);
    indices(w, "success_indices", one, 1);
    end(w);
    begin(w, 1.7, "l2.unlock.submitted", 2, 0);
    uint_field(w, "request_id", 11);
    keys(w, "AB", NULL);
    end(w);
    begin(w, 1.8, "l2.load_task.submitted", 4, 0);
    uint_field(w, "request_id", 12);
    uint_field(w, "task_id", 7);
    keys(w, "C", c);
    end(w);
    begin(w, 1.9, "l2.lookup_task.completed", 2, 0);
    uint_field(w, "task_id", 9);
    indices(w, "hit_indices", zero, 0);
    end(w);
    begin(w, 2.0, "l2.delete.submitted", 1, 0);
    keys(w, "C", NULL);
    end(w);
    begin(w, 2.1, "l2.store.submitted", 3, 3);
    uint_field(w, "task_id", 5);
    keys(w, "D", d);
    end(w);
    begin(w, 2.101, "l2.store.completed", 4, 3);
    uint_field(w, "task_id", 5);
    uint_field(w, "succeeded_count", 0);
    uint_field(w, "failed_count", 1);
    uint_field(w, "bytes_transferred", 0);
    end(w);
    if (with_footer)
        footer(w, 2.2, recorder, bus);
    lct_writer_close(w);
    return path;
}

static jv *json_of(run *r)
{
    jv *v = json_parse(r->out, strlen(r->out));
    cr_assert_not_null(v, "not JSON: %s", r->out);
    return v;
}

static double num(const jv *obj, const char *a, const char *b,
                  const char *c)
{
    const jv *v = json_get(obj, a);
    if (v && b)
        v = json_get(v, b);
    if (v && c)
        v = json_get(v, c);
    cr_assert_not_null(v, "no %s.%s.%s", a, b ? b : "", c ? c : "");
    return json_number(v);
}

/* MARK: the footer */

Test(l2, check_says_what_is_wrong_with_the_footer)
{
    struct {
        bool footer;
        uint64_t recorder, bus;
        int status;
        const char *said;
    } cases[] = {
        {true, 0, 0, 0, NULL},
        {false, 0, 0, 3, "has no footer (l2.trace.end)"},
        {true, 3, 1, 3, "the recorder dropped 3 events and the event bus 1"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *path = tasks_trace(cases[i].footer, cases[i].recorder,
                                 cases[i].bus);
        for (int jobs = 1; jobs <= 2; jobs++) {
            run r = run_lct(NULL, "check", "-j", jobs == 1 ? "1" : "2", path,
                            NULL);
            cr_expect_eq(r.status, cases[i].status, "case %zu: %s", i,
                         r.out);
            if (cases[i].said)
                cr_expect(strstr(r.out, cases[i].said) != NULL,
                          "case %zu: %s", i, r.out);
            run_free(&r);
        }
        /* info says it too, in its l2 block */
        run r = run_lct(NULL, "info", path, NULL);
        cr_expect_eq(r.status, 0);
        cr_expect(strstr(r.out, cases[i].said ? cases[i].said
                                              : "present, nothing dropped"),
                  "%s", r.out);
        run_free(&r);
        unlink(path);
        free(path);
    }
    /* two footers: repeated, named in the JSON as a footer problem */
    char *path;
    lct_writer *w = l2_writer(&path);
    footer(w, 1, 0, 0);
    footer(w, 2, 0, 0);
    lct_writer_close(w);
    run r = run_lct(NULL, "check", "--json", path, NULL);
    cr_expect_eq(r.status, 3);
    cr_expect(strstr(r.out, "\"kind\":\"footer\"") &&
                  strstr(r.out, "appears 2 times"),
              "%s", r.out);
    run_free(&r);
    unlink(path);
    free(path);
}

/* MARK: tasks */

Test(l2, stat_pairs_each_submission_with_its_completion)
{
    char *path = tasks_trace(true, 0, 0);
    run r = run_lct(NULL, "stat", "--json", path, NULL);
    cr_assert_eq(r.status, 0, "%s", r.err);
    jv *v = json_of(&r);
    const jv *adapters = json_get(v, "adapters");
    cr_assert_not_null(adapters);
    cr_assert_eq(adapters->n, 2u, "adapters 0 and 3");
    const jv *a0 = &adapters->items[0], *a3 = &adapters->items[1];
    cr_expect_eq(num(a0, "adapter_index", NULL, NULL), 0);
    cr_expect_eq(num(a3, "adapter_index", NULL, NULL), 3);
    /* the store: 1.000 to 1.002, 400 bytes in 2 ms, both stored */
    cr_expect_eq(num(a0, "store", "count", NULL), 1);
    cr_expect(fabs(num(a0, "store", "latency_us", "p50") - 2000) < 1e-3);
    cr_expect_eq(num(a0, "store", "bytes", NULL), 400);
    cr_expect(fabs(num(a0, "store", "throughput_bytes_per_second", NULL) -
                   200000) < 1e-3);
    cr_expect_eq(num(a0, "store", "success_ratio", NULL), 1);
    /* the lookup of the same task id: its own pair, 1 hit of 2; the
     * completion of task 9 was never submitted */
    cr_expect_eq(num(a0, "lookup", "count", NULL), 1);
    cr_expect(fabs(num(a0, "lookup", "latency_us", "max") - 1000) < 1e-3);
    cr_expect_eq(num(a0, "lookup", "hit_ratio", NULL), 0.5);
    cr_expect_eq(num(a0, "lookup", "completed_unsubmitted", NULL), 1);
    /* the load: success [1] weighs 300; task 7 never completed */
    cr_expect_eq(num(a0, "load", "count", NULL), 1);
    cr_expect(fabs(num(a0, "load", "latency_us", "mean") - 4000) < 1e-3);
    cr_expect_eq(num(a0, "load", "bytes", NULL), 300);
    cr_expect_eq(num(a0, "load", "success_ratio", NULL), 0.5);
    cr_expect_eq(num(a0, "load", "unpaired", NULL), 1);
    cr_expect_eq(num(a0, "unlock", "count", NULL), 1);
    cr_expect_eq(num(a0, "delete", "count", NULL), 1);
    /* adapter 3's store of the same task id failed */
    cr_expect_eq(num(a3, "store", "success_ratio", NULL), 0);
    cr_expect(fabs(num(a3, "store", "latency_us", "min") - 1000) < 1e-3);
    json_free(v);
    run_free(&r);
    /* the text table says the same */
    r = run_lct(NULL, "stat", path, NULL);
    cr_expect(strstr(r.out, "adapter 3") && strstr(r.out, "lookup"),
              "%s", r.out);
    run_free(&r);
    unlink(path);
    free(path);
}

Test(l2, keys_name_the_operation_and_weigh_object_sizes)
{
    char *path = tasks_trace(true, 0, 0);
    run r = run_lct(NULL, "keys", "--csv", "--all", path, NULL);
    cr_assert_eq(r.status, 0, "%s", r.err);
    /* AB stored, AB looked up, AB loaded, AB unlocked, C loaded, C
     * deleted, D stored */
    static const char *ops[] = {"store",  "store",  "lookup", "lookup",
                                "load",   "load",   "unlock", "unlock",
                                "load",   "delete", "store"};
    char *lines[32];
    size_t n = lines_of(r.out, lines, 32);
    cr_assert_eq(n, 12u, "a header and 11 keys: %zu", n);
    for (size_t i = 0; i < 11; i++)
        cr_expect(strstr(lines[i + 1], ops[i]) != NULL, "key %zu: %s", i,
                  lines[i + 1]);
    /* the stored keys weigh their object_sizes */
    cr_expect(strstr(lines[1], ",100") && strstr(lines[2], ",300"),
              "%s / %s", lines[1], lines[2]);
    run_free(&r);
    /* by default the stream is the lookups (reads) and stores (writes) */
    r = run_lct(NULL, "mrc", "--csv", path, NULL);
    cr_assert_eq(r.status, 0, "%s", r.err);
    run_free(&r);
    r = run_lct(NULL, "keys", "--csv", path, NULL);
    cr_expect_eq(count_lines(r.out), 1u + 5u, "%s", r.out);
    run_free(&r);
#ifdef LCT_HAVE_SQLITE
    /* the SQL keys table names them alike: AB stored and D, AB looked up */
    r = run_lct(NULL, "sql", "--csv",
                "select op, count(*), sum(bytes) from keys group by op "
                "order by op",
                path, NULL);
    cr_expect_eq(r.status, 0, "%s", r.err);
    cr_expect(strstr(r.out, "lookup,2,") && strstr(r.out, "store,3,450"),
              "%s", r.out);
    run_free(&r);
#endif
    unlink(path);
    free(path);
}

Test(l2, a_hostile_load_is_read_within_its_bounds)
{
    /* a load of two keys with one size; success indices past both keys,
     * at the key with no size, and at the one with a size: only the
     * last weighs (7); and a completion whose indices are not a list */
    char *path;
    lct_writer *w = l2_writer(&path);
    static const uint64_t one[] = {7};
    static const unsigned past[] = {9, 1, 0};
    begin(w, 1.0, "l2.load_task.submitted", 3, 0);
    uint_field(w, "task_id", 1);
    lct_writer_cstr(w, "keys");
    lct_writer_array(w, 2);
    for (int i = 0; i < 2; i++) {
        unsigned char hash[8] = {(unsigned char)('A' + i), 7};
        write_object_key(w, hash, sizeof hash, 0, -1, NULL);
    }
    lct_writer_cstr(w, "object_sizes");
    lct_writer_array(w, 1);
    lct_writer_uint(w, one[0]);
    end(w);
    begin(w, 1.1, "l2.load_task.completed", 2, 0);
    uint_field(w, "task_id", 1);
    indices(w, "success_indices", past, 3);
    end(w);
    begin(w, 1.2, "l2.lookup_task.submitted", 1, 0);
    uint_field(w, "task_id", 2);
    end(w);
    begin(w, 1.3, "l2.lookup_task.completed", 2, 0);
    uint_field(w, "task_id", 2);
    lct_writer_cstr(w, "hit_indices");
    lct_writer_cstr(w, "not a list");
    end(w);
    footer(w, 1.4, 0, 0);
    lct_writer_close(w);
    run r = run_lct(NULL, "stat", "--json", path, NULL);
    cr_assert_eq(r.status, 0, "%s", r.err);
    jv *v = json_of(&r);
    const jv *a0 = &json_get(v, "adapters")->items[0];
    cr_expect_eq(num(a0, "load", "bytes", NULL), 7);
    cr_expect_eq(num(v, "unreadable", NULL, NULL), 1);
    json_free(v);
    run_free(&r);
    unlink(path);
    free(path);
}

/* MARK: generated */

Test(l2, a_generated_trace_reads_back_whole)
{
    char *path = gen_l2_trace("2000", "2", "7");
    run r = run_lct(NULL, "check", path, NULL);
    cr_expect_eq(r.status, 0, "%s", r.out);
    run_free(&r);
    r = run_lct(NULL, "stat", "--json", path, NULL);
    jv *v = json_of(&r);
    const jv *adapters = json_get(v, "adapters");
    cr_assert_eq(adapters->n, 2u);
    double lookups = 0, hits = 0;
    for (size_t a = 0; a < adapters->n; a++) {
        const jv *x = &adapters->items[a];
        for (size_t k = 0; k < 3; k++) {
            static const char *kinds[] = {"store", "lookup", "load"};
            cr_expect_eq(num(x, kinds[k], "unpaired", NULL), 0,
                         "every task completes");
            cr_expect_eq(num(x, kinds[k], "completed_unsubmitted", NULL), 0);
        }
        lookups += num(x, "lookup", "count", NULL);
        hits += num(x, "lookup", "hit_ratio", NULL);
    }
    cr_expect_gt(lookups, 100);
    cr_expect_gt(hits, 0, "lookups find earlier stores");
    json_free(v);
    run_free(&r);
    /* at most N records, the footer last */
    r = run_lct(NULL, "info", "--json", path, NULL);
    v = json_of(&r);
    cr_expect_leq(num(v, "total_records", NULL, NULL), 2000);
    cr_expect_eq(num(v, "l2", "footers", NULL), 1);
    json_free(v);
    run_free(&r);
    unlink(path);
    free(path);
}
