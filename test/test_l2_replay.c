/*
 * test_l2_replay.c - replaying an L2-level trace (lct_l2_replay_run) as
 * the fork's driver does, on hand-made traces whose plans are worked out
 * from its rules (trace/l2_driver.py, L2TracePlan): a lookup against an
 * overlapping store has no dependency, the latest completed store is
 * the one, a failed store none; a load waits for its request's lookup
 * even when submitted before it completed; an unlock waits for the load,
 * or the lookup when there was none; what prepare stores; the footer's
 * refusals; the share of submissions; the adapter.  Runs on a backend
 * that logs its calls show the waits kept, and a generated trace replays
 * with every outcome the source's.
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "files.h"
#include "base/error_internal.h"
#include "lct.h"
#include "replay/l2_internal.h"
#include "run.h"

TestSuite(l2_replay, .timeout = 120);

/* MARK: writing L2 traces by hand */

static lct_writer *l2_writer(char **path)
{
    return tmp_level_writer(path, "l2");
}

/* One event: its name, adapter 0 unless adapter says, a task id (-1:
 * none), a request id (-1: none), keys as letters (NULL: none), an
 * outcome: a store's succeeded count, or indices as digits ("01"). */
typedef struct ev {
    const char *name;
    int task, request;
    const char *keys;
    int succeeded; /* stores' completion: -1 none */
    const char *indices;
    int adapter;
} ev;

static void write_events(lct_writer *w, const ev *e, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        double t = 1.0 + 0.001 * (double)i;
        lct_writer_record_begin(w, t, 1.7e9 + t, e[i].name,
                                strlen(e[i].name));
        bool store_done = strstr(e[i].name, "store.completed") != NULL;
        bool indices = e[i].indices != NULL;
        unsigned n_fields = 1 + (e[i].task >= 0) + (e[i].request >= 0) +
                            (e[i].keys ? 2 : 0) + (store_done ? 1 : 0) +
                            indices;
        lct_writer_map(w, n_fields);
        lct_writer_cstr(w, "adapter_index");
        lct_writer_uint(w, (uint64_t)e[i].adapter);
        if (e[i].task >= 0) {
            lct_writer_cstr(w, "task_id");
            lct_writer_uint(w, (uint64_t)e[i].task);
        }
        if (e[i].request >= 0) {
            lct_writer_cstr(w, "request_id");
            lct_writer_uint(w, (uint64_t)e[i].request);
        }
        if (e[i].keys) {
            size_t nk = strlen(e[i].keys);
            lct_writer_cstr(w, "keys");
            lct_writer_array(w, (uint32_t)nk);
            for (size_t k = 0; k < nk; k++) {
                unsigned char hash[8] = {(unsigned char)e[i].keys[k], 9};
                write_object_key(w, hash, sizeof hash, 0, -1, NULL);
            }
            lct_writer_cstr(w, "object_sizes");
            lct_writer_array(w, (uint32_t)nk);
            for (size_t k = 0; k < nk; k++)
                lct_writer_uint(w, 100 + (uint64_t)(e[i].keys[k] - 'A'));
        }
        if (store_done) {
            lct_writer_cstr(w, "succeeded_count");
            lct_writer_uint(w, (uint64_t)e[i].succeeded);
        }
        if (indices) {
            size_t ni = strlen(e[i].indices);
            lct_writer_cstr(w, strstr(e[i].name, "lookup") ? "hit_indices"
                                                           : "success_indices");
            lct_writer_array(w, (uint32_t)ni);
            for (size_t k = 0; k < ni; k++)
                lct_writer_uint(w, (uint64_t)(e[i].indices[k] - '0'));
        }
        cr_assert_eq(lct_writer_end(w, NULL), LCT_OK);
    }
}

static void footer(lct_writer *w, uint64_t dropped)
{
    lct_writer_record_begin(w, 9, 1.7e9 + 9, "l2.trace.end", 12);
    lct_writer_map(w, 2);
    lct_writer_cstr(w, "recorder_dropped_count");
    lct_writer_uint(w, dropped);
    lct_writer_cstr(w, "event_bus_dropped_count");
    lct_writer_uint(w, 0);
    cr_assert_eq(lct_writer_end(w, NULL), LCT_OK);
}

static char *trace_of(const ev *e, size_t n)
{
    char *path;
    lct_writer *w = l2_writer(&path);
    write_events(w, e, n);
    footer(w, 0);
    lct_writer_close(w);
    return path;
}

#define SS "l2.store.submitted"
#define SC "l2.store.completed"
#define LS "l2.lookup_task.submitted"
#define LC "l2.lookup_task.completed"
#define DS "l2.load_task.submitted"
#define DC "l2.load_task.completed"
#define US "l2.unlock.submitted"
#define XS "l2.delete.submitted"

static void plan_of(const char *path, lct__l2plan *p, double percent,
                    int64_t adapter)
{
    lct_reader *r;
    lct_error err;
    cr_assert_eq(lct_open(path, 0, &r, &err), LCT_OK);
    lct_l2_replay_options o = {.trace_percent = percent, .adapter = adapter};
    cr_assert_eq(lct__l2_plan(r, &o, p, &err), LCT_OK, "%s", err.message);
    lct_close(r);
}

/* Submission i's dependencies as submission numbers, "1 3", in p. */
static void deps_of(const lct__l2plan *p, size_t i, char *out, size_t size)
{
    out[0] = '\0';
    for (uint32_t k = 0; k < p->subs[i].ndeps; k++)
        snprintf(out + strlen(out), size - strlen(out), "%s%u", k ? " " : "",
                 p->deps[p->subs[i].dep0 + k]);
}

/* MARK: the plan */

Test(l2_replay, a_lookup_waits_only_for_stores_completed_before_it)
{
    /* 0 store A (task 1), completed ok; 1 store A (task 2), completed ok:
     * the latest of the two; 2 store B (task 3) fails; 3 store C (task 4)
     * still in flight when 4 looks up A B C (task 5), which finds all
     * three; then C's store completes, then the lookup.  The lookup waits
     * for store 1 (A's latest), not for the failed B nor the overlapping
     * C.  Prepared: B (its first lookup hit, no store explains it); not C
     * (a store completed before the lookup did), not A. */
    static const ev e[] = {
        {SS, 1, -1, "A", -1, NULL, 0}, {SC, 1, -1, NULL, 1, NULL, 0},
        {SS, 2, -1, "A", -1, NULL, 0}, {SC, 2, -1, NULL, 1, NULL, 0},
        {SS, 3, -1, "B", -1, NULL, 0}, {SC, 3, -1, NULL, 0, NULL, 0},
        {SS, 4, -1, "C", -1, NULL, 0}, {LS, 5, 7, "ABC", -1, NULL, 0},
        {SC, 4, -1, NULL, 1, NULL, 0}, {LC, 5, 7, NULL, -1, "012", 0},
    };
    char *path = trace_of(e, sizeof e / sizeof e[0]);
    lct__l2plan p;
    plan_of(path, &p, 0, -1);
    cr_assert_eq(p.nsubs, 5u);
    char deps[64];
    deps_of(&p, 4, deps, sizeof deps);
    cr_expect_str_eq(deps, "1");
    cr_assert_eq(p.nprepare, 1u);
    cr_expect_eq(p.prepare[0].id, p.objs[p.subs[2].obj0].id, "B");
    cr_expect_eq(p.prepare[0].bytes, 101u, "B weighs its object_sizes");
    lct__l2_plan_free(&p);
    unlink(path);
    free(path);
}

Test(l2_replay, loads_wait_for_their_lookups_and_unlocks_for_their_loads)
{
    /* request 7: lookup (task 1), its load (task 2) submitted before the
     * lookup completed, then an unlock: the load waits for the lookup,
     * the unlock for the load.  request 9: a lookup (task 3) and an
     * unlock without a load: the unlock waits for the lookup.  A delete
     * waits for nothing. */
    static const ev e[] = {
        {LS, 1, 7, "A", -1, NULL, 0},  {DS, 2, 7, "A", -1, NULL, 0},
        {LC, 1, 7, NULL, -1, "0", 0},  {DC, 2, 7, NULL, -1, "0", 0},
        {US, -1, 7, "A", -1, NULL, 0}, {LS, 3, 9, "B", -1, NULL, 0},
        {LC, 3, 9, NULL, -1, "0", 0},  {US, -1, 9, "B", -1, NULL, 0},
        {XS, -1, -1, "B", -1, NULL, 0},
    };
    char *path = trace_of(e, sizeof e / sizeof e[0]);
    lct__l2plan p;
    plan_of(path, &p, 0, -1);
    cr_assert_eq(p.nsubs, 6u);
    char deps[64];
    const char *want[] = {"", "0", "1", "", "3", ""};
    for (size_t i = 0; i < 6; i++) {
        deps_of(&p, i, deps, sizeof deps);
        cr_expect_str_eq(deps, want[i], "submission %zu", i);
    }
    /* the leading half: ceil(6 * 50 / 100) = 3; 40%: ceil(2.4) = 3 */
    lct__l2_plan_free(&p);
    plan_of(path, &p, 50, -1);
    cr_expect_eq(p.nsubs, 3u);
    cr_expect_eq(p.source_total, 6u);
    lct__l2_plan_free(&p);
    plan_of(path, &p, 40, -1);
    cr_expect_eq(p.nsubs, 3u);
    lct__l2_plan_free(&p);
    unlink(path);
    free(path);
}

static lct_status run_on(const char *path, lct_l2_replay_options *o,
                         lct_l2_replay_report *rep, lct_error *err)
{
    lct_reader *r;
    cr_assert_eq(lct_open(path, 0, &r, NULL), LCT_OK);
    const lct_backend_ops *ops = lct_backend_mem();
    lct_backend_config cfg = {.workers = o->workers ? o->workers : 4};
    void *state;
    /* large enough for every key of the traces here */
    cr_assert_eq(ops->open("1000000", &cfg, &state, NULL), LCT_OK);
    lct_status st = lct_l2_replay_run(r, ops, state, o, rep, err);
    ops->close(state);
    lct_close(r);
    return st;
}

Test(l2_replay, refuses_what_the_fork_refuses)
{
    static const ev e[] = {{SS, 1, -1, "A", -1, NULL, 0},
                           {SS, 2, -1, "B", -1, NULL, 1}};
    struct {
        int footers;
        uint64_t dropped;
        const char *said;
    } cases[] = {{0, 0, "missing end marker"},
                 {2, 0, "appears 2 times"},
                 {1, 5, "recorder_dropped=5"},
                 {1, 0, "several source adapters"}};
    for (size_t c = 0; c < 4; c++) {
        char *path;
        lct_writer *w = l2_writer(&path);
        write_events(w, e, 2);
        for (int f = 0; f < cases[c].footers; f++)
            footer(w, cases[c].dropped);
        lct_writer_close(w);
        lct_l2_replay_options o = {.adapter = -1};
        lct_l2_replay_report rep;
        lct_error err;
        cr_expect_eq(run_on(path, &o, &rep, &err), LCT_ERR_INVALID);
        cr_expect(strstr(err.message, cases[c].said) != NULL, "%s",
                  err.message);
        if (c == 3) { /* one adapter chosen: its own submissions */
            o.adapter = 1;
            cr_expect_eq(run_on(path, &o, &rep, &err), LCT_OK);
            cr_expect_eq(rep.operations_selected, 1u);
            cr_expect_eq(rep.submitted[LCT_L2_STORE], 1u);
        }
        unlink(path);
        free(path);
    }
    /* a storage trace is not replayed as one */
    lct_l2_replay_options o = {.adapter = -1};
    lct_l2_replay_report rep;
    lct_error err;
    cr_expect_eq(run_on(LCT_SAMPLE, &o, &rep, &err), LCT_ERR_INVALID);
    cr_expect(strstr(err.message, "header.level 'l2'") != NULL, "%s",
              err.message);
}

/* MARK: runs */

Test(l2_replay, a_mismatch_is_counted_not_failed)
{
    /* the source's store failed; the replay's succeeds: one store
     * mismatch, sampled, and the run is fine */
    static const ev e[] = {{SS, 4, -1, "A", -1, NULL, 0},
                           {SC, 4, -1, NULL, 0, NULL, 0}};
    char *path = trace_of(e, 2);
    lct_l2_replay_options o = {.adapter = -1};
    lct_l2_replay_report rep;
    cr_assert_eq(run_on(path, &o, &rep, NULL), LCT_OK);
    cr_expect_eq(rep.compared[LCT_L2_STORE], 1u);
    cr_expect_eq(rep.mismatched[LCT_L2_STORE], 1u);
    cr_expect_eq(rep.nsamples, 1u);
    cr_expect_str_eq(rep.samples[0], "store:('store', 0, 4)");
    cr_expect_eq(rep.write.completed, 1u);
    cr_expect_eq(rep.write.total_bytes, 100u);
    cr_expect(!rep.partial);
    unlink(path);
    free(path);
}

/* A mem backend whose lookups take 30 ms and which logs the order its
 * calls end in. */
static const lct_backend_ops *mem;
static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;
static char call_log[64];

static void log_call(char c)
{
    pthread_mutex_lock(&log_lock);
    size_t n = strlen(call_log);
    if (n + 1 < sizeof call_log)
        call_log[n] = c, call_log[n + 1] = '\0';
    pthread_mutex_unlock(&log_lock);
}

static lct_status slow_lookup(void *s, unsigned w, const lct_backend_key *k,
                              bool *present, lct_error *err)
{
    struct timespec ts = {0, 30000000};
    nanosleep(&ts, NULL);
    lct_status st = mem->lookup(s, w, k, present, err);
    log_call('L');
    return st;
}

static lct_status logged_load(void *s, unsigned w, const lct_backend_key *k,
                              void *buf, size_t cap, size_t *len,
                              bool *present, lct_error *err)
{
    lct_status st = mem->load(s, w, k, buf, cap, len, present, err);
    log_call('D');
    return st;
}

Test(l2_replay, a_load_waits_for_its_lookup_in_the_run)
{
    /* the load of request 7 was submitted before its lookup completed:
     * replayed flat out on four workers it still ends after the slow
     * lookup, and the wait shows */
    static const ev e[] = {
        {SS, 1, -1, "A", -1, NULL, 0}, {SC, 1, -1, NULL, 1, NULL, 0},
        {LS, 2, 7, "A", -1, NULL, 0},  {DS, 3, 7, "A", -1, NULL, 0},
        {LC, 2, 7, NULL, -1, "0", 0},  {DC, 3, 7, NULL, -1, "0", 0},
    };
    char *path = trace_of(e, sizeof e / sizeof e[0]);
    mem = lct_backend_mem();
    lct_backend_ops slow = *mem;
    slow.lookup = slow_lookup;
    slow.load = logged_load;
    slow.pipeline = NULL;
    lct_reader *r;
    cr_assert_eq(lct_open(path, 0, &r, NULL), LCT_OK);
    lct_backend_config cfg = {.workers = 4};
    void *state;
    cr_assert_eq(slow.open("1000", &cfg, &state, NULL), LCT_OK);
    lct_l2_replay_options o = {.adapter = -1, .workers = 4};
    lct_l2_replay_report rep;
    cr_assert_eq(lct_l2_replay_run(r, &slow, state, &o, &rep, NULL), LCT_OK);
    slow.close(state);
    lct_close(r);
    cr_expect_str_eq(call_log, "LD");
    cr_expect_geq(rep.dependency_wait_max, 0.02, "%f",
                  rep.dependency_wait_max);
    cr_expect_eq(rep.mismatches, 0u);
    cr_expect_eq(rep.read.completed, 1u);
    unlink(path);
    free(path);
}

/* A backend whose every key operation fails after a pause (a server
 * that has stopped answering, each call ending at its timeout), counting
 * its calls. */
static atomic_uint dead_calls;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static lct_status dead(lct_error *err)
{
    struct timespec ts = {0, 5000000};
    nanosleep(&ts, NULL);
    atomic_fetch_add(&dead_calls, 1);
    return lct__fail(err, LCT_ERR_SYS, ETIMEDOUT, 0, "timed out");
}
static lct_status dead_store(void *s, unsigned w, const lct_backend_key *k,
                             const void *buf, size_t len, int *replaced,
                             lct_error *err)
{
    (void)s, (void)w, (void)k, (void)buf, (void)len, (void)replaced;
    return dead(err);
}
static lct_status dead_lookup(void *s, unsigned w, const lct_backend_key *k,
                              bool *present, lct_error *err)
{
    (void)s, (void)w, (void)k, (void)present;
    return dead(err);
}
static lct_status dead_load(void *s, unsigned w, const lct_backend_key *k,
                            void *buf, size_t cap, size_t *len, bool *present,
                            lct_error *err)
{
    (void)s, (void)w, (void)k, (void)buf, (void)cap, (void)len, (void)present;
    return dead(err);
}
static lct_status dead_remove(void *s, unsigned w, const lct_backend_key *k,
                              lct_error *err)
{
    (void)s, (void)w, (void)k;
    return dead(err);
}

static lct_status run_dead(const char *path, lct_l2_replay_options *o,
                           lct_l2_replay_report *rep)
{
    const lct_backend_ops *m = lct_backend_mem();
    lct_backend_ops d = *m;
    d.store = dead_store, d.lookup = dead_lookup, d.load = dead_load;
    d.remove = dead_remove, d.pipeline = NULL;
    lct_reader *r;
    cr_assert_eq(lct_open(path, 0, &r, NULL), LCT_OK);
    lct_backend_config cfg = {.workers = o->workers ? o->workers : 4};
    void *state;
    cr_assert_eq(d.open("1000", &cfg, &state, NULL), LCT_OK);
    atomic_store(&dead_calls, 0);
    lct_status st = lct_l2_replay_run(r, &d, state, o, rep, NULL);
    d.close(state);
    lct_close(r);
    return st;
}

/* Against a backend that fails everything, a run ends at max_errors, or
 * when nothing has succeeded for the stall window (preparing too), with
 * the reason in the report; a task under way stops between its keys. */
Test(l2_replay, a_failing_backend_ends_the_run_at_max_errors_or_a_stall)
{
    char *path = gen_l2_trace("3000", "1", "5");
    lct_l2_replay_options o = {.adapter = -1, .workers = 2,
                               .value_bytes = 64, .max_errors = 20};
    lct_l2_replay_report rep;
    cr_assert_eq(run_dead(path, &o, &rep), LCT_OK);
    cr_expect(rep.partial && rep.too_many_errors && !rep.stalled);
    cr_expect_geq(rep.backend_errors, 20u);
    /* at most one more key a worker, each stopping between its keys */
    cr_expect_leq(atomic_load(&dead_calls), 20u + 2 * 2, "%u",
                  atomic_load(&dead_calls));
    /* no error bound: the stall window ends it */
    o.max_errors = 0;
    o.stall = 0.2;
    double t0 = now();
    cr_assert_eq(run_dead(path, &o, &rep), LCT_OK);
    cr_expect(rep.partial && rep.stalled && !rep.too_many_errors);
    cr_expect_lt(now() - t0, 2.0, "%f s", now() - t0);
    uint64_t given = 0;
    for (int k = 0; k < LCT_L2_OPS; k++)
        given += rep.submitted[k];
    cr_expect_lt(given, rep.operations_selected, "the rest dropped");
    unlink(path);
    free(path);
    /* the prepare phase alike (one thread storing what the hits need):
     * 26 objects hit with no store before them, 5 ms each */
    static const ev e[] = {
        {LS, 1, 1, "ABCDEFGHIJ", -1, NULL, 0},
        {LC, 1, 1, NULL, -1, "0123456789", 0},
        {LS, 2, 2, "KLMNOPQRST", -1, NULL, 0},
        {LC, 2, 2, NULL, -1, "0123456789", 0},
        {LS, 3, 3, "UVWXYZ", -1, NULL, 0},
        {LC, 3, 3, NULL, -1, "012345", 0},
    };
    char *hits = trace_of(e, sizeof e / sizeof e[0]);
    o = (lct_l2_replay_options){.adapter = -1, .prepare_only = true,
                                .max_errors = 3};
    cr_assert_eq(run_dead(hits, &o, &rep), LCT_OK);
    cr_expect(rep.partial && rep.too_many_errors);
    cr_expect_eq(atomic_load(&dead_calls), 3u);
    o.max_errors = 0;
    o.stall = 0.05;
    cr_assert_eq(run_dead(hits, &o, &rep), LCT_OK);
    cr_expect(rep.partial && rep.stalled);
    cr_expect_lt(atomic_load(&dead_calls), 26u, "%u",
                 atomic_load(&dead_calls));
    /* on a backend that answers, the same prepares all 26 */
    o.stall = 10;
    cr_assert_eq(run_on(hits, &o, &rep, NULL), LCT_OK);
    cr_expect(!rep.partial);
    cr_expect_eq(rep.prepared_objects, 26u);
    unlink(hits);
    free(hits);
}

Test(l2_replay, a_generated_trace_replays_with_the_sources_outcomes)
{
    char *path = gen_l2_trace("4000", "2", "3");
    for (int adapter = 0; adapter < 2; adapter++) {
        /* one task in flight: the source's order, every outcome its own */
        lct_l2_replay_options o = {.adapter = adapter, .workers = 1,
                                   .value_bytes = 64};
        lct_l2_replay_report rep;
        cr_assert_eq(run_on(path, &o, &rep, NULL), LCT_OK);
        cr_expect_gt(rep.compared[LCT_L2_LOOKUP], 100u);
        cr_expect_eq(rep.mismatches, 0u, "adapter %d: %s", adapter,
                     rep.nsamples ? rep.samples[0] : "");
        cr_expect_eq(rep.operations_selected, rep.source_operations_total);
        cr_expect_eq(rep.read.completed, rep.read.submitted);
        /* the first fifth with prepare: hits on stores outside it are
         * prepared, so they still hit */
        o.trace_percent = 20;
        o.prepare = true;
        cr_assert_eq(run_on(path, &o, &rep, NULL), LCT_OK);
        cr_expect_eq(rep.mismatches, 0u);
        cr_expect(rep.prepared);
    }
    /* the tool: one backend, then two side by side */
    run t = run_lct(NULL, "replay", "--backend", "mem:100000",
                    "--value-bytes", "64", "--speed", "0", "-c", "1",
                    "--adapter", "0", "--json", path, NULL);
    cr_expect_eq(t.status, 0, "%s", t.err);
    cr_expect(strstr(t.out, "\"outcome_matches_source\":true") &&
                  strstr(t.out, "\"schema_version\":1"),
              "%s", t.out);
    run_free(&t);
    t = run_lct(NULL, "replay", "--compare", "mem:100000", "null",
                "--value-bytes", "64", "--speed", "0", "--adapter", "1",
                path, NULL);
    cr_expect_eq(t.status, 0, "%s", t.err);
    cr_expect(strstr(t.out, "A = mem:100000, B = null"), "%s", t.out);
    run_free(&t);
    unlink(path);
    free(path);
}
