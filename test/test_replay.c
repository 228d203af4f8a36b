/*
 * test_replay.c - the replay engine: the histograms' bound, the mapping
 * from calls to operations, the mem backend against lct mrc's
 * every-reference curve, causal waits across workers, the dir backend's
 * files, a failing backend counted by kind with the run still
 * reported, and the map that pairs a reserve_write with its finish_write.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "files.h"
#include "lct.h"
#include "base/u64map_internal.h"
#include "replay/hist_internal.h"

static lct_reader *open_sample(void)
{
    lct_reader *r;
    lct_error err;
    cr_assert_eq(lct_open(LCT_SAMPLE, 0, &r, &err), LCT_OK, "%s",
                 err.message);
    return r;
}

Test(replay, histogram_quantiles_within_the_stated_error)
{
    lct__hist h;
    lct__hist_init(&h);
    /* 1..100000 ns: the p-th percentile by nearest rank is p*1000. */
    for (uint64_t v = 1; v <= 100000; v++)
        lct__hist_add(&h, v);
    double qs[] = {0.5, 0.9, 0.99, 0.999};
    for (size_t i = 0; i < 4; i++) {
        double want = qs[i] * 100000;
        double got = (double)lct__hist_quantile(&h, qs[i]);
        cr_expect_leq(fabs(got - want) / want, LCT_REPLAY_HIST_ERROR + 1e-9,
                      "q %g: %g, want %g", qs[i], got, want);
    }
    cr_expect_eq(h.min_ns, 1);
    cr_expect_eq(h.max_ns, 100000);
    /* Exact below 256 ns. */
    lct__hist_init(&h);
    lct__hist_add(&h, 7);
    lct__hist_add(&h, 200);
    cr_expect_eq(lct__hist_quantile(&h, 0.5), 7);
    cr_expect_eq(lct__hist_quantile(&h, 1.0), 200);
    /* A huge value lands in the last bucket; max still says it. */
    lct__hist_add(&h, UINT64_MAX / 2);
    cr_expect_eq(h.max_ns, UINT64_MAX / 2);
    cr_expect_eq(lct__hist_quantile(&h, 1.0), UINT64_MAX / 2);
}

/* The every-reference key stream of the sample, as lct mrc builds it. */
static double mrc_hit_ratio(uint64_t capacity)
{
    lct_reader *r = open_sample();
    lct_refs *refs;
    cr_assert_eq(lct_refs_new(&refs), LCT_OK);
    lct_record rec;
    while (lct_next(r, &rec) == 1) {
        bool read = lct_qualname_match(rec.qualname, LCT_KEYS_READ_CALL);
        if (!read && !lct_qualname_match(rec.qualname, LCT_KEYS_WRITE_CALL))
            continue;
        lct_key_iter it;
        lct_object_key key;
        uint64_t bytes;
        cr_assert_eq(lct_key_iter_init(&rec, &it, NULL), LCT_OK);
        while (lct_key_iter_next(&it, &key, &bytes, NULL) == 1)
            cr_assert_eq(lct_refs_add(refs, lct_object_key_hash(&key), bytes,
                                      rec.t_mono, read), LCT_OK);
    }
    lct_mrc_options o = {.every_reference = true};
    lct_mrc *mrc;
    cr_assert_eq(lct_mrc_compute_with(refs, &o, &mrc, NULL), LCT_OK);
    double hit = lct_mrc_hit_ratio(mrc, capacity);
    lct_mrc_free(mrc);
    lct_refs_free(refs);
    lct_close(r);
    return hit;
}

static void replay_on(const lct_backend_ops *ops, const char *arg,
                      const lct_backend_config *cfg,
                      const lct_replay_options *o, lct_replay_report *rep)
{
    lct_reader *r = open_sample();
    void *state;
    lct_error err;
    cr_assert_eq(ops->open(arg, cfg, &state, &err), LCT_OK, "%s",
                 err.message);
    cr_assert_eq(lct_replay_run(r, ops, state, o, rep, &err), LCT_OK, "%s",
                 err.message);
    ops->close(state);
    lct_close(r);
}

Test(replay, mem_hit_ratio_equals_mrc_every_reference)
{
    uint64_t capacities[] = {1, 10, 100, 400, 5000};
    for (size_t i = 0; i < 5; i++) {
        char arg[32];
        snprintf(arg, sizeof arg, "%llu", (unsigned long long)capacities[i]);
        lct_replay_options o = {.speed = 0, .value_bytes = 64,
                                .fill_on_miss = true,
                                .store_at_reserve = true};
        lct_backend_config cfg = {.workers = 1};
        lct_replay_report rep;
        replay_on(lct_backend_mem(), arg, &cfg, &o, &rep);
        cr_assert_gt(rep.lookups, 0);
        cr_assert_gt(rep.stores_known, 0);
        double got = (double)(rep.hits + rep.stores_replaced) /
                     (double)(rep.lookups + rep.stores_known);
        double want = mrc_hit_ratio(capacities[i]);
        cr_expect_float_eq(got, want, 1e-12, "capacity %s: mem %.6f, mrc %.6f",
                           arg, got, want);
    }
}

Test(replay, calls_map_to_operations)
{
    /* The sample: 610 prefetches, 280 reserve/finish pairs. */
    lct_replay_options o = {.speed = 0, .value_bytes = 100};
    lct_backend_config cfg = {.workers = 1};
    lct_replay_report rep;
    replay_on(lct_backend_mem(), "100000", &cfg, &o, &rep);
    cr_expect_eq(rep.records, 3000);
    cr_expect_eq(rep.records_issued, 610 + 280); /* finishes store */
    cr_expect_eq(rep.lookups, rep.latency[LCT_REPLAY_LOOKUP].count);
    /* Loads are the keys the prefix rule kept: fewer than were found. */
    cr_expect_eq(rep.kept, rep.latency[LCT_REPLAY_LOAD].count);
    cr_expect_lt(rep.kept, rep.hits);
    cr_expect_gt(rep.kept, 0);
    cr_expect_eq(rep.bytes[LCT_REPLAY_STORE],
                 100 * rep.latency[LCT_REPLAY_STORE].count);
    cr_expect_eq(rep.corrupt, 0);
    cr_expect_eq(rep.finish_unreserved, 0);
    cr_expect_eq(rep.reserved_unfinished, 0);
    /* Four qualnames gave no operation: counted, not issued. */
    cr_expect_eq(rep.ncalls, 4);
    uint64_t counted = 0;
    for (unsigned i = 0; i < rep.ncalls; i++)
        counted += rep.calls[i].count;
    cr_expect_eq(counted, 3000 - 890);
}

Test(replay, map_removal_keeps_every_other_key_findable)
{
    /* Ids that crowd a small table, so probe chains wrap and cross:
     * after each removal every key still in must be found, every key
     * out must not. */
    enum { N = 700 };
    lct__u64map m = {0};
    bool in[N] = {false};
    bool added;
    for (uint64_t k = 0; k < N; k++) {
        lct__u64map_entry *e = lct__u64map_get(&m, k * 1024, &added);
        cr_assert(e && added);
        e->value = k + 1;
        in[k] = true;
    }
    uint64_t step = 0;
    for (uint64_t i = 0; i < N; i++) {
        uint64_t k = (i * 389) % N; /* a permutation: 389 is prime to N */
        lct__u64map_remove(&m, lct__u64map_find(&m, k * 1024));
        in[k] = false;
        if (i % 50 != 0 && i != N - 1)
            continue;
        for (uint64_t j = 0; j < N; j++) {
            lct__u64map_entry *e = lct__u64map_find(&m, j * 1024);
            cr_assert_eq(e != NULL, in[j], "key %llu after %llu removals",
                         (unsigned long long)j, (unsigned long long)i + 1);
            if (e)
                cr_assert_eq(e->value, j + 1);
        }
        step++;
    }
    cr_expect_eq(m.used, 0);
    cr_expect_eq(step, N / 50 + 1);
    lct__u64map_free(&m);
}

/* One call of the trace below on key k (a 32-byte hash, the encoder's
 * usual ObjectKey, so the key iterator's fast path reads it). */
static void key_call(lct_writer *w, const char *call, unsigned k)
{
    lct_writer_record_begin(w, 0, 0, call, strlen(call));
    lct_writer_map(w, 1);
    lct_writer_cstr(w, "keys");
    lct_writer_array(w, 1);
    unsigned char hash[32] = {(unsigned char)k, (unsigned char)(k >> 8), 7};
    write_object_key(w, hash, sizeof hash, 0, 0, NULL);
    cr_assert_eq(lct_writer_end(w, NULL), LCT_OK);
}

Test(replay, each_finish_stores_what_its_own_reserve_noted)
{
    /* 3000 writes in progress at once, finished in another order; 100
     * finished twice, 50 never finished, 20 finished never reserved. */
    enum { N = 3000 };
    char *path;
    lct_writer *w = tmp_trace_writer(&path);
    for (unsigned k = 0; k < N; k++)
        key_call(w, "S.reserve_write", k);
    for (unsigned i = 0; i < N; i++) {
        unsigned k = (i * 1009) % N;
        if (k >= 50)
            key_call(w, "S.finish_write", k);
        if (k >= 50 && k < 150)
            key_call(w, "S.finish_write", k);
    }
    for (unsigned k = N; k < N + 20; k++)
        key_call(w, "S.finish_write", k);
    lct_writer_close(w);
    lct_reader *r;
    cr_assert_eq(lct_open(path, 0, &r, NULL), LCT_OK);
    lct_replay_options o = {.speed = 0, .value_bytes = 10};
    lct_replay_report rep;
    cr_assert_eq(lct_replay_run(r, lct_backend_null(), NULL, &o, &rep, NULL),
                 LCT_OK);
    lct_close(r);
    unlink(path);
    free(path);
    cr_expect_eq(rep.latency[LCT_REPLAY_STORE].count, N - 50);
    cr_expect_eq(rep.finish_unreserved, 100 + 20);
    cr_expect_eq(rep.reserved_unfinished, 50);
}

/* A backend whose stores are slow and whose lookups check that every
 * earlier store of their key has completed. */
static pthread_mutex_t slow_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t slow_stored[4096];
static size_t slow_n;
static int slow_violations;

static lct_status slow_open(const char *a, const lct_backend_config *c,
                            void **s, lct_error *e)
{
    (void)a, (void)c, (void)e;
    *s = NULL;
    slow_n = 0;
    slow_violations = 0;
    return LCT_OK;
}
static void slow_close(void *s) { (void)s; }
static lct_status slow_store(void *s, unsigned w, const lct_backend_key *k,
                             const void *d, size_t n, int *rep, lct_error *e)
{
    (void)s, (void)w, (void)d, (void)n, (void)e;
    /* 2 ms: long enough that the lookup right after a store is taken by
     * another worker while the store runs, even on a loaded machine (at
     * 0.2 ms a CI run once saw no lookup wait) */
    nanosleep(&(struct timespec){0, 2000000}, NULL);
    pthread_mutex_lock(&slow_lock);
    if (slow_n < 4096)
        slow_stored[slow_n++] = k->id;
    pthread_mutex_unlock(&slow_lock);
    *rep = -1;
    return LCT_OK;
}
static lct_status slow_lookup(void *s, unsigned w, const lct_backend_key *k,
                              bool *present, lct_error *e)
{
    (void)s, (void)w, (void)e;
    pthread_mutex_lock(&slow_lock);
    *present = false;
    for (size_t i = 0; i < slow_n; i++)
        *present |= slow_stored[i] == k->id;
    pthread_mutex_unlock(&slow_lock);
    return LCT_OK;
}
static lct_status slow_load(void *s, unsigned w, const lct_backend_key *k,
                            void *b, size_t cap, size_t *len, bool *present,
                            lct_error *e)
{
    (void)b, (void)cap;
    *len = 0;
    return slow_lookup(s, w, k, present, e);
}
static lct_status slow_remove(void *s, unsigned w, const lct_backend_key *k,
                              lct_error *e)
{
    (void)s, (void)w, (void)k, (void)e;
    return LCT_OK;
}

static const lct_backend_ops slow = {"slow", slow_open, slow_close,
                                     slow_store, slow_lookup, slow_load,
                                     slow_remove, NULL};

/* A trace where each of 40 keys is written, then looked up at once, a
 * millisecond of t_mono apart. */
static char *write_then_look_up_trace(void)
{
    char *path;
    lct_writer *w = tmp_trace_writer(&path);
    const char *calls[] = {"S.reserve_write", "S.finish_write",
                           "S.submit_prefetch_task"};
    for (int k = 0; k < 40; k++)
        for (int c = 0; c < 3; c++) {
            lct_writer_record_begin(w, 0.001 * k, 0, calls[c], strlen(calls[c]));
            lct_writer_map(w, 1);
            lct_writer_cstr(w, "keys");
            lct_writer_array(w, 1);
            unsigned char hash[8] = {(unsigned char)k, 1, 2, 3};
            write_object_key(w, hash, sizeof hash, 0, -1, NULL);
            cr_assert_eq(lct_writer_end(w, NULL), LCT_OK);
        }
    lct_writer_close(w);
    return path;
}

static void replay_file(const char *path, const lct_backend_ops *ops,
                        const lct_replay_options *o, lct_replay_report *rep)
{
    lct_reader *r;
    cr_assert_eq(lct_open(path, 0, &r, NULL), LCT_OK);
    void *state;
    cr_assert_eq(ops->open("", NULL, &state, NULL), LCT_OK);
    cr_assert_eq(lct_replay_run(r, ops, state, o, rep, NULL), LCT_OK);
    ops->close(state);
    lct_close(r);
}

Test(replay, causal_waits_keep_a_lookup_after_its_store)
{
    char *path = write_then_look_up_trace();
    lct_replay_options o = {.speed = 0, .inflight = 8, .value_bytes = 16};
    lct_replay_report rep;
    replay_file(path, &slow, &o, &rep);
    unlink(path);
    free(path);
    cr_expect_eq(rep.workers, 8);
    cr_expect_eq(rep.lookups, 40);
    cr_expect_eq(rep.hits, 40, "every lookup came after its store: %llu",
                 (unsigned long long)rep.hits);
    cr_expect_gt(rep.causal.count, 0, "the lookups had to wait");
    cr_expect_leq(rep.inflight_max, 8);
}

Test(replay, planning_time_leaves_out_operations_waits_and_sleeps)
{
    char *path = write_then_look_up_trace();
    /* 40 stores of 2 ms: 80 ms the planner's thread runs (one worker,
     * inline) or waits for (eight, room for two in flight) */
    lct_replay_options inline_run = {.speed = 0, .value_bytes = 16};
    lct_replay_options threaded = {.speed = 0, .workers = 8, .inflight = 2,
                                   .value_bytes = 16};
    /* 39 ms of t_mono at a fifth of the speed: 195 ms of sleeping */
    lct_replay_options paced = {.speed = 0.2, .value_bytes = 16};
    const lct_replay_options *runs[] = {&inline_run, &threaded, &paced};
    const lct_backend_ops *ops[] = {&slow, &slow, lct_backend_null()};
    double least_away[] = {0.075, 0.03, 0.15};
    for (int i = 0; i < 3; i++) {
        lct_replay_report rep;
        replay_file(path, ops[i], runs[i], &rep);
        cr_expect_eq(rep.records, 120);
        cr_expect_gt(rep.planning, 0, "run %d", i);
        cr_expect_leq(rep.planning + least_away[i], rep.duration,
                      "run %d: planning %.4f s of %.4f s", i, rep.planning,
                      rep.duration);
    }
    unlink(path);
    free(path);
}

static int count_kv_files(const char *dir)
{
    char cmd[512];
    snprintf(cmd, sizeof cmd, "ls %s | grep -c '\\.kv$'", dir);
    FILE *p = popen(cmd, "r");
    int n = -1;
    cr_assert(p);
    cr_assert_eq(fscanf(p, "%d", &n), 1);
    pclose(p);
    return n;
}

Test(replay, dir_backend_round_trips_and_starts_fresh)
{
    char dir[] = "/tmp/lct-dir-XXXXXX";
    cr_assert(mkdtemp(dir));
    char stale[600], other[600];
    snprintf(stale, sizeof stale, "%s/00000000000000aa.kv", dir);
    snprintf(other, sizeof other, "%s/notes.txt", dir);
    fclose(fopen(stale, "w"));
    fclose(fopen(other, "w"));
    lct_replay_options o = {.speed = 0, .value_bytes = 4096};
    lct_backend_config cfg = {.workers = 1};
    lct_replay_report on_dir, on_mem;
    replay_on(lct_backend_dir(), dir, &cfg, &o, &on_dir);
    replay_on(lct_backend_mem(), "1000000", &cfg, &o, &on_mem);
    cr_expect_eq(access(stale, F_OK), -1, "an earlier run's key is gone");
    cr_expect_eq(access(other, F_OK), 0, "other files are left alone");
    cr_expect_eq(on_dir.hits, on_mem.hits);
    cr_expect_gt(on_dir.hits, 0);
    cr_expect_eq(on_dir.corrupt, 0, "loads read back the stored bytes");
    cr_expect_eq(on_dir.kept, on_mem.kept);
    cr_expect_eq(on_dir.bytes[LCT_REPLAY_LOAD], 4096 * on_dir.kept);
    int files = count_kv_files(dir);
    cr_expect_gt(files, 0);
    cr_expect_leq((uint64_t)files, on_dir.latency[LCT_REPLAY_STORE].count);
    /* --keep: a second run finds the first run's keys at once. */
    cfg.keep = true;
    lct_replay_report again;
    replay_on(lct_backend_dir(), dir, &cfg, &o, &again);
    cr_expect_gt(again.hits, on_dir.hits);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    cr_assert_eq(system(cmd), 0);
}

Test(replay, dir_backend_refuses_a_path_it_cannot_create)
{
    lct_backend_config cfg = {.workers = 1};
    void *state;
    lct_error err;
    cr_expect_eq(lct_backend_dir()->open("/proc/no/such", &cfg, &state, &err),
                 LCT_ERR_SYS);
    cr_expect(strstr(err.message, "/proc/no/such"), "%s", err.message);
}

static unsigned full_stores;
static lct_status full_store(void *s, unsigned w, const lct_backend_key *k,
                             const void *d, size_t n, int *rep, lct_error *e)
{
    (void)s, (void)w, (void)d, (void)n;
    *rep = -1;
    /* four workers store at once: counted atomically, or two may both
     * take the tenth (the test failed so once in a loaded distcheck) */
    if (__atomic_add_fetch(&full_stores, 1, __ATOMIC_SEQ_CST) <= 10)
        return LCT_OK;
    e->code = LCT_ERR_SYS;
    e->sys_errno = ENOSPC;
    snprintf(e->message, sizeof e->message, "full: %s", k->name);
    return LCT_ERR_SYS;
}

Test(replay, a_failing_backend_is_counted_by_kind_and_reported)
{
    static const lct_backend_ops full = {"full", slow_open, slow_close,
                                         full_store, slow_lookup, slow_load,
                                         slow_remove, NULL};
    lct_reader *r = open_sample();
    lct_replay_options o = {.speed = 0, .value_bytes = 8, .inflight = 4};
    lct_replay_report rep;
    full_stores = 0;
    slow_n = 0;
    cr_assert_eq(lct_replay_run(r, &full, NULL, &o, &rep, NULL), LCT_OK);
    cr_expect_eq(rep.latency[LCT_REPLAY_STORE].count, 10);
    cr_expect_gt(rep.errors[LCT_REPLAY_STORE], 0);
    cr_expect_eq(rep.nerror_kinds, 1);
    cr_expect_str_eq(rep.error_kinds[0].kind, "ENOSPC");
    cr_expect_eq(rep.error_kinds[0].count, rep.errors[LCT_REPLAY_STORE]);
    cr_expect(strstr(rep.error_kinds[0].first, "full: "));
    cr_expect(!rep.partial);
    /* max_errors stops issuing: partial, and said why. */
    lct_reader_rewind(r);
    full_stores = 0;
    o.max_errors = 5;
    cr_assert_eq(lct_replay_run(r, &full, NULL, &o, &rep, NULL), LCT_OK);
    cr_expect(rep.partial);
    cr_expect(rep.too_many_errors);
    cr_expect_lt(rep.records, 3000);
    lct_close(r);
}

Test(replay, backend_uris)
{
    const lct_backend_ops *ops;
    const char *arg;
    lct_error err;
    cr_expect_eq(lct_backend_find("mem:64M", NULL, 0, &ops, &arg, &err),
                 LCT_OK);
    cr_expect_str_eq(ops->name, "mem");
    cr_expect_str_eq(arg, "64M");
    cr_expect_eq(lct_backend_find("dir:/x/y", NULL, 0, &ops, &arg, &err),
                 LCT_OK);
    cr_expect_str_eq(arg, "/x/y");
    cr_expect_eq(lct_backend_find("null", NULL, 0, &ops, &arg, &err), LCT_OK);
    cr_expect_eq(lct_backend_find("s3://b", NULL, 0, &ops, &arg, &err),
                 LCT_ERR_NOT_FOUND);
    cr_expect(strstr(err.message, "s3://b"));
    void *state;
    cr_expect_eq(lct_backend_mem()->open("lots", NULL, &state, &err),
                 LCT_ERR_INVALID);
    cr_expect_eq(lct_backend_mem()->open("0", NULL, &state, &err),
                 LCT_ERR_INVALID);
}

/* A full mem: store copies into evicted keys' buffers: what a load
 * returns is still the last bytes stored under that key, whatever sizes
 * came and went before (a buffer twice too big is not reused). */
Test(replay, mem_reused_buffers_hold_each_keys_own_bytes)
{
    const lct_backend_ops *mem = lct_backend_mem();
    void *state = NULL;
    lct_error err;
    lct_backend_config cfg = {.workers = 1};
    cr_assert_eq(mem->open("2", &cfg, &state, &err), LCT_OK);
    static const size_t sizes[] = {1000, 1000, 600, 3000, 1000, 400, 0, 999};
    unsigned char data[3000], got[3000];
    for (unsigned i = 0; i < 40; i++) {
        size_t len = sizes[i % 8];
        lct_backend_key k = {.id = 100 + i % 5};
        memset(data, (int)(i + 1), sizeof data);
        int replaced;
        cr_assert_eq(mem->store(state, 0, &k, data, len, &replaced, &err),
                     LCT_OK);
        size_t n;
        bool present;
        memset(got, 0, sizeof got);
        cr_assert_eq(mem->load(state, 0, &k, got, sizeof got, &n, &present,
                               &err), LCT_OK);
        cr_assert(present);
        cr_assert_eq(n, len, "store %u: %zu bytes back of %zu", i, n, len);
        cr_assert_eq(memcmp(got, data, len), 0, "store %u: other bytes", i);
    }
    mem->close(state);
}

/* mem: refuses at open what memory cannot hold, and says why in bytes;
 * 64 keys of 1 KiB are fine whatever the machine. */
Test(replay, mem_refuses_a_capacity_memory_cannot_hold)
{
    const lct_backend_ops *mem = lct_backend_mem();
    void *state = NULL;
    lct_error err;
    cr_expect_eq(mem->open("1024T", NULL, &state, &err), LCT_ERR_RANGE);
    cr_expect(strstr(err.message, "GiB available"), "%s", err.message);
    lct_backend_config cfg = {.workers = 1, .value_bytes = 1ull << 40};
    cr_expect_eq(mem->open("1000", &cfg, &state, &err), LCT_ERR_RANGE);
    cr_expect(strstr(err.message, "1000 keys x 1099511627776 bytes"), "%s",
              err.message);
    cfg.value_bytes = 1024;
    cr_assert_eq(mem->open("64", &cfg, &state, &err), LCT_OK, "%s",
                 err.message);
    mem->close(state);
}

/* A pipelining backend that notes the most value bytes one call held and
 * answers every lookup as a hit (so loads follow). */
static uint64_t piped_max_bytes, piped_ops;

static void piped(void *state, unsigned worker, lct_backend_op *ops,
                  size_t n)
{
    (void)state, (void)worker;
    uint64_t bytes = 0;
    for (size_t i = 0; i < n; i++) {
        if (ops[i].kind == LCT_REPLAY_LOOKUP)
            ops[i].present = true;
        if (ops[i].kind == LCT_REPLAY_LOAD) {
            ops[i].present = true;
            ops[i].len = ops[i].cap;
        }
        bytes += ops[i].kind == LCT_REPLAY_STORE  ? ops[i].len
                 : ops[i].kind == LCT_REPLAY_LOAD ? ops[i].cap
                                                  : 0;
        ops[i].status = LCT_OK;
    }
    piped_ops += n;
    if (bytes > piped_max_bytes)
        piped_max_bytes = bytes;
}

Test(replay, a_pipeline_holds_bounded_bytes_whatever_the_values)
{
    static const lct_backend_ops ops = {"piped", slow_open, slow_close,
                                        slow_store, slow_lookup, slow_load,
                                        slow_remove, piped};
    lct_reader *r = open_sample();
    /* 512 operations a batch of 24 MiB values would hold 12 GiB. */
    lct_replay_options o = {.speed = 0, .value_bytes = 24u << 20,
                            .pipeline = 512, .inflight = 1024,
                            .workers = 1};
    lct_replay_report rep;
    piped_max_bytes = piped_ops = 0;
    cr_assert_eq(lct_replay_run(r, &ops, NULL, &o, &rep, NULL), LCT_OK);
    cr_expect_gt(piped_ops, 1000, "the sample's operations were piped");
    cr_expect_gt(rep.latency[LCT_REPLAY_LOAD].count, 0);
    cr_expect_leq(piped_max_bytes, (uint64_t)64 << 20,
                  "one call held %llu bytes of values",
                  (unsigned long long)piped_max_bytes);
    cr_expect_geq(piped_max_bytes, (uint64_t)48 << 20,
                  "two values go in one call");
    lct_close(r);
}

/* One clock read an operation: run flat out on one thread, operations go
 * to a backend back to back and the reading that ends one starts the
 * next (fill_on_miss keeps each store right after its own lookup, so it
 * issues them one at a time, two readings each). */
typedef struct op_times {
    uint64_t prev_done;
    size_t ops, chained;
} op_times;

static void note_times(void *ctx, const lct_backend_op *op, double t_sched,
                       double lag_s, double latency_s)
{
    (void)t_sched, (void)lag_s;
    op_times *t = ctx;
    double began = (double)op->done_ns - latency_s * 1e9;
    if (t->ops && fabs(began - (double)t->prev_done) < 2)
        t->chained++;
    t->ops++;
    t->prev_done = op->done_ns;
}

/* Every operation's key name is its id in 16 lowercase hex digits. */
static unsigned misnamed, named;
static void check_name(const lct_backend_key *k)
{
    char want[17];
    snprintf(want, sizeof want, "%016llx", (unsigned long long)k->id);
    __atomic_add_fetch(&named, 1, __ATOMIC_RELAXED); /* four workers */
    if (strcmp(want, k->name) != 0)
        __atomic_add_fetch(&misnamed, 1, __ATOMIC_RELAXED);
}
static lct_status name_store(void *s, unsigned w, const lct_backend_key *k,
                             const void *d, size_t n, int *rep, lct_error *e)
{
    check_name(k);
    return slow_store(s, w, k, d, n, rep, e);
}
static lct_status name_lookup(void *s, unsigned w, const lct_backend_key *k,
                              bool *present, lct_error *e)
{
    check_name(k);
    return slow_lookup(s, w, k, present, e);
}

Test(replay, key_names_are_the_ids_in_hex)
{
    static const lct_backend_ops named_ops = {"named", slow_open, slow_close,
                                              name_store, name_lookup,
                                              slow_load, slow_remove, NULL};
    lct_reader *r = open_sample();
    lct_replay_options o = {.speed = 0, .value_bytes = 8, .inflight = 4};
    lct_replay_report rep;
    misnamed = named = 0;
    slow_n = 0;
    cr_assert_eq(lct_replay_run(r, &named_ops, NULL, &o, &rep, NULL), LCT_OK);
    cr_expect_gt(named, 1000);
    cr_expect_eq(misnamed, 0, "%u of %u names differ", misnamed, named);
    lct_close(r);
}

Test(replay, back_to_back_operations_share_a_clock_reading)
{
    for (int fill = 0; fill < 2; fill++) {
        op_times t = {0};
        lct_replay_options o = {.speed = 0, .value_bytes = 64,
                                .fill_on_miss = fill, .on_op = note_times,
                                .on_op_ctx = &t};
        lct_backend_config cfg = {.workers = 1};
        lct_replay_report rep;
        replay_on(lct_backend_mem(), "100", &cfg, &o, &rep);
        cr_assert_gt(t.ops, 4000);
        double share = (double)t.chained / (double)t.ops;
        if (fill)
            cr_expect_lt(share, 0.05, "one at a time: %.3f chained", share);
        else
            cr_expect_gt(share, 0.8, "back to back: %.3f chained", share);
    }
}
