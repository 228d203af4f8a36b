/*
 * plan.c - lct_replay_run: reading the records in order, turning storage
 * calls into operations on keys (lct.h states the mapping), pacing them
 * from t_mono, and handing them to the executor (engine.c).  A reserved
 * key's bytes wait in a map until its finish_write; each key's latest
 * operation is remembered so the next one on it can wait for it.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>

#include "base/error_internal.h"
#include "replay/replay_internal.h"
#include "lct_replay.h"

enum call { CALL_OTHER, CALL_RESERVE, CALL_FINISH, CALL_PREFETCH };

typedef struct planner {
    lct__engine *e;
    const lct_replay_options *o;
    lct_pacer *pacer; /* for its rule of when a t_mono is due */
    /* key -> bytes + 1 from its reserve_write until its finish_write:
     * only the writes in progress, so the map stays small and cached */
    lct__u64map reserved;
    lct__u64map last_op; /* key -> seq of its latest operation */
    uint64_t seq;
    lct_replay_report *r;
    double due;       /* the record's, in seconds after the start */
    bool waited;      /* this record's due time has been slept to */
    uint64_t slept_ns; /* in sleep_until_due, the flush excepted */
    bool nomem;
    bool has_l1;
    lct__l1 l1;       /* with has_l1: the L1 in front */
} planner;

/* Whether q is `name` or ends in "." and it: lct_qualname_match's rule
 * for a plain name, without its look for glob characters (every record
 * asks). */
static bool names_call(lct_str q, const char *name, size_t len)
{
    if (q.len < len || memcmp(q.ptr + q.len - len, name, len) != 0)
        return false;
    return q.len == len || q.ptr[q.len - len - 1] == '.';
}

static enum call classify(lct_str q)
{
    static const char rd[] = LCT_KEYS_READ_CALL, wr[] = LCT_KEYS_WRITE_CALL,
                      fin[] = "finish_write";
    if (names_call(q, rd, sizeof rd - 1))
        return CALL_PREFETCH;
    if (names_call(q, wr, sizeof wr - 1))
        return CALL_RESERVE;
    if (names_call(q, fin, sizeof fin - 1))
        return CALL_FINISH;
    return CALL_OTHER;
}

static void count_call(lct_replay_report *r, lct_str q)
{
    size_t len = q.len < sizeof r->calls[0].qualname - 1
                     ? q.len
                     : sizeof r->calls[0].qualname - 1;
    for (unsigned i = 0; i < r->ncalls; i++)
        if (memcmp(r->calls[i].qualname, q.ptr, len) == 0 &&
            r->calls[i].qualname[len] == '\0') {
            r->calls[i].count++;
            return;
        }
    if (r->ncalls == LCT_REPLAY_CALLS) {
        r->calls_other++;
        return;
    }
    lct_replay_call *c = &r->calls[r->ncalls++];
    memcpy(c->qualname, q.ptr, len);
    c->qualname[len] = '\0';
    c->count = 1;
}

uint64_t lct_replay_key_bytes(const lct_replay_options *o,
                              uint64_t layout_bytes, bool *clamped)
{
    if (clamped)
        *clamped = false;
    if (o->value_bytes)
        return o->value_bytes;
    uint64_t b = layout_bytes;
    if (b && o->scale > 0) {
        double scaled = (double)b * o->scale + 0.5;
        b = scaled < 1 ? 1
            : scaled > (double)LCT_REPLAY_MAX_VALUE_BYTES
                ? LCT_REPLAY_MAX_VALUE_BYTES + 1
                : (uint64_t)scaled;
    }
    if (b > LCT_REPLAY_MAX_VALUE_BYTES) {
        if (clamped)
            *clamped = true;
        return LCT_REPLAY_MAX_VALUE_BYTES;
    }
    return b;
}

/* What a key weighs, counted as unsized or clamped in the report. */
static uint64_t key_bytes(planner *p, uint64_t layout_bytes)
{
    bool clamped;
    uint64_t b = lct_replay_key_bytes(p->o, layout_bytes, &clamped);
    p->r->unsized += b == 0;
    p->r->clamped += clamped;
    return b;
}

/* How long before a due time the planner stops sleeping and watches the
 * clock instead: a wake-up from clock_nanosleep can come tens of
 * microseconds late on a VM (bench/timer measures it), more than a paced
 * replay should lag. */
#define SPIN_NS 200000u

/* Wait for the record's due time: sleep to just before it (absolute, so
 * errors do not add up), then poll the clock. */
static void wait_until(planner *p, uint64_t at, uint64_t now)
{
    if (at > now + SPIN_NS) {
        uint64_t wake = at - SPIN_NS;
        struct timespec ts = {(time_t)(wake / 1000000000u),
                              (long)(wake % 1000000000u)};
        while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) ==
               EINTR)
            if (p->o->stop && *p->o->stop)
                return;
    }
    while (lct__now_ns() < at)
        if (p->o->stop && *p->o->stop)
            return;
}

/* Hand over what is planned, then wait for the record's due time: the
 * wait is not planning (lct_replay_report.planning). */
static void sleep_until_due(planner *p)
{
    lct__engine_flush(p->e);
    uint64_t from = lct__now_ns();
    wait_until(p, lct__due_ns(p->e, p->due), from);
    p->slept_ns += lct__now_ns() - from;
}

/* Hand op over (its seq, due time and causal wait filled in). */
static bool push_op(planner *p, lct__rop *op)
{
    if (p->e->paced && !p->waited) {
        sleep_until_due(p);
        p->waited = true;
    }
    op->seq = ++p->seq;
    op->due = p->due;
    if (p->e->nworkers > 1) { /* one worker keeps trace order itself */
        bool added;
        lct__u64map_entry *last =
            lct__u64map_get(&p->last_op, op->id, &added);
        if (!last)
            return !(p->nomem = true);
        op->wait_seq = last->value;
        last->value = op->seq;
    }
    if (!lct__engine_put(p->e, op))
        return !(p->nomem = true);
    return true;
}

/* The key becomes L1's most recent; *held says whether L1 had it.
 * False when memory ran out. */
static bool l1_touch(planner *p, uint64_t id, uint64_t bytes, bool *held)
{
    if (!lct__l1_touch(&p->l1, id, bytes, held))
        return !(p->nomem = true);
    return true;
}

/* A store: written through the L1 when there is one. */
static bool push_store(planner *p, uint64_t id, uint64_t bytes)
{
    bool held;
    if (p->has_l1) {
        if (!l1_touch(p, id, bytes, &held))
            return false;
        p->r->l1.writes++;
    }
    lct__rop op = {.id = id, .bytes = bytes, .kind = LCT_REPLAY_STORE};
    return push_op(p, &op);
}

/* One key of a write call: what it makes. */
static bool plan_key(planner *p, enum call call, uint64_t id,
                     uint64_t layout_bytes, bool *issued)
{
    bool added;
    lct__u64map_entry *res;
    switch (call) {
    case CALL_RESERVE:
        if (p->o->store_at_reserve) {
            *issued = true;
            return push_store(p, id, key_bytes(p, layout_bytes));
        }
        if (!(res = lct__u64map_get(&p->reserved, id, &added)))
            return !(p->nomem = true);
        res->value = key_bytes(p, layout_bytes) + 1;
        return true;
    case CALL_FINISH:
        if (p->o->store_at_reserve)
            return true;
        if (!(res = lct__u64map_find(&p->reserved, id))) {
            p->r->finish_unreserved++;
            return true;
        }
        uint64_t bytes = res->value - 1;
        lct__u64map_remove(&p->reserved, res);
        *issued = true;
        return push_store(p, id, bytes);
    default:
        return true;
    }
}

/* Whether L1 serves this key of a lookup: it is in L1's leading run
 * (lct_refs_behind_l1's model: the run is the call's keys up to L1's
 * first miss; every key becomes L1's most recent). */
static bool l1_serves(planner *p, uint64_t id, uint64_t bytes, bool *leading)
{
    bool held;
    if (!l1_touch(p, id, bytes, &held))
        return false;
    p->r->l1.keys++;
    *leading = *leading && held;
    p->r->l1.keys_hit += *leading;
    return *leading;
}

/* A prefetch call's keys: the L1's, then the lookups of the rest as one
 * call (lct__pcall) whose rule decides its loads.  Returns the key
 * iterator's last answer (0, or an error), or 1 when memory ran out. */
static int plan_prefetch(planner *p, lct_key_iter *it, bool *issued,
                         bool *handled)
{
    lct__pcall *c = lct__engine_call_take(p->e);
    if (!c)
        return (p->nomem = true);
    bool warm = lct_str_eq(it->mode, "WARM");
    c->sparse = it->policy.len && !lct_str_eq(it->policy, "PREFIX") &&
                !lct_str_eq(it->policy, "prefix");
    p->r->calls_sparse += c->sparse;
    p->r->calls_warm += warm;
    p->r->calls_skip_l2 += it->skip_l2;
    bool leading = !warm; /* WARM asks every key of L2 */
    /* L1's chunk positions: the call's, and those before the chunk of
     * its first key L1 did not serve */
    uint32_t first = UINT32_MAX, last = 0, served_until = UINT32_MAX;
    lct_chunk_rows rows;
    lct_chunk_rows_reset(&rows);
    lct_key_id keys[64];
    long got = 0;
    while (!p->nomem && (got = lct_key_iter_next_ids(it, keys, 64, NULL)) > 0)
        for (long i = 0; i < got && !p->nomem; i++) {
            uint64_t id = keys[i].id, bytes = key_bytes(p, keys[i].bytes);
            /* the call's chunks, L1's keys counted: what L2 is asked
             * keeps the call's chunk boundaries, as the two-tier curve
             * keeps them */
            uint32_t chunk = lct_chunk_of_row(&rows, keys[i].kv_rank,
                                              keys[i].object_group_id);
            *handled = true;
            first = chunk < first ? chunk : first;
            last = chunk > last ? chunk : last;
            if (p->has_l1 && l1_serves(p, id, bytes, &leading))
                continue;
            if (served_until == UINT32_MAX)
                served_until = chunk;
            if (it->skip_l2)
                continue;
            p->r->l1.keys_to_l2 += p->has_l1;
            lct__rop op = {.id = id, .bytes = bytes, .call = c, .pos = c->n,
                           .chunk = chunk,
                           .kind = LCT_REPLAY_LOOKUP};
            if (!lct__pcall_add(c, &op))
                p->nomem = true;
        }
    int rc = got < 0 ? (int)got : 0;
    if (p->has_l1 && first != UINT32_MAX) {
        p->r->l1.positions += last - first + 1;
        p->r->l1.positions_hit += served_until == UINT32_MAX
                                      ? last - first + 1
                                      : served_until - first;
    }
    uint32_t n = c->n;
    if (n == 0 || p->nomem) {
        lct__engine_call_done(p->e, c);
        return p->nomem ? 1 : rc;
    }
    atomic_store(&c->remaining, n);
    *issued = true;
    /* After the last is handed over the call is the workers': it may
     * be answered, loaded and reused before push_op returns. */
    for (uint32_t i = 0; i < n; i++)
        if (!push_op(p, &c->keys[i]))
            return 1;
    return rc;
}

/* A write call's keys: ids only, a batch at a time. */
static int plan_writes(planner *p, enum call call, lct_key_iter *it,
                       bool *issued)
{
    lct_key_id keys[64];
    long n;
    while ((n = lct_key_iter_next_ids(it, keys, 64, NULL)) > 0)
        for (long i = 0; i < n; i++)
            if (!plan_key(p, call, keys[i].id, keys[i].bytes, issued))
                return 1;
    return (int)n;
}

static bool plan_record(planner *p, const lct_record *rec)
{
    enum call call = classify(rec->qualname);
    /* handled: a prefetch call with keys, even if L1 served them all or
     * skip_l2 asked nothing (not a call with no operation) */
    bool issued = false, handled = false;
    if (call != CALL_OTHER) {
        p->due = p->e->paced ? lct_pacer_offset(p->pacer, rec->t_mono) : 0;
        p->waited = false;
        lct_key_iter it;
        int rc = lct_key_iter_init(rec, &it, NULL);
        if (rc == LCT_OK && call == CALL_PREFETCH)
            rc = plan_prefetch(p, &it, &issued, &handled);
        else if (rc == LCT_OK)
            rc = plan_writes(p, call, &it, &issued);
        if (rc == 1)
            return false;
        if (rc < 0)
            p->r->keys_unreadable++;
        if (p->has_l1 && !lct__l1_end_call(&p->l1))
            return !(p->nomem = true);
    }
    if (issued)
        p->r->records_issued++;
    else if (!handled)
        count_call(p->r, rec->qualname);
    return true;
}

static bool should_stop(planner *p)
{
    if ((p->o->stop && *p->o->stop) || lct__engine_abandoned(p->e))
        return true;
    if (p->o->max_errors &&
        atomic_load(&p->e->errors) >= p->o->max_errors) {
        p->r->too_many_errors = true;
        return true;
    }
    return false;
}

/* Where the records come from: one reader, or a merge of several (on
 * its timeline: t_mono from t_wall). */
typedef struct source {
    lct_reader *reader;
    lct_merge *merge;
    double t0; /* the merge's first t_wall */
    bool started;
} source;

static int next_record(source *src, lct_record *rec)
{
    if (!src->merge)
        return lct_next(src->reader, rec);
    int rc = lct_merge_next(src->merge, rec, NULL);
    if (rc == 1 && !src->started) {
        src->t0 = rec->t_wall;
        src->started = true;
    }
    if (rc == 1) /* LCT_MERGE_TIMELINE's reading, made with it or not */
        rec->t_mono = rec->t_wall - src->t0;
    return rc;
}

static void plan_all(planner *p, source *src)
{
    lct_record rec;
    int rc;
    while (!should_stop(p) && (rc = next_record(src, &rec)) == 1) {
        p->r->records++;
        /* paced, records come slowly: each one */
        if (p->o->progress && (p->e->paced || (p->r->records & 4095) == 0))
            p->o->progress(p->o->progress_ctx, p->r->records, rec.offset);
        if (!plan_record(p, &rec))
            return;
    }
    if (should_stop(p))
        p->r->partial = true;
}

static uint64_t count_unfinished(const lct__u64map *m)
{
    uint64_t n = 0;
    for (uint64_t i = 0; m->slots && i <= m->mask; i++)
        n += m->slots[i].value != 0;
    return n;
}

static lct_status replay(source *src, const lct_backend_ops *ops,
                         void *state, const lct_replay_options *opts,
                         lct_replay_report *report, lct_error *err)
{
    if (!(src->reader || src->merge) || !ops || !opts || !report || !(opts->speed >= 0))
        return lct__fail(err, LCT_ERR_INVALID, 0, 0,
                         "replay: missing reader, backend, options or "
                         "report, or a negative speed");
    if (opts->l1_policy && (!lct_policy_name(opts->l1_policy) ||
                            opts->l1_policy == LCT_POLICY_BELADY ||
                            opts->l1_policy == LCT_POLICY_LMCACHE_ISOLATED_LRU))
        return lct__fail(err, LCT_ERR_INVALID, 0, 0,
                         "replay: an L1 policy it can run (not belady, "
                         "which needs the trace's future, nor "
                         "lmcache-isolated-lru, an L2 adapter's)");
    memset(report, 0, sizeof *report);
    lct__engine e;
    planner p = {.e = &e, .o = opts, .r = report,
                 .has_l1 = opts->l1_capacity > 0};
    lct_status st = lct__engine_init(&e, ops, state, opts, err);
    if (st == LCT_OK && p.has_l1 &&
        !lct__l1_init(&p.l1, opts->l1_capacity, opts->l1_in_bytes,
                      opts->l1_policy))
        st = lct__fail(err, LCT_ERR_NOMEM, ENOMEM, 0, "out of memory");
    if (st == LCT_OK && e.paced &&
        lct_pacer_new(opts->speed, &p.pacer) != LCT_OK)
        st = lct__fail(err, LCT_ERR_NOMEM, ENOMEM, 0, "out of memory");
    /* Wake-ups within a microsecond, not the default 50: lag is what a
     * paced run measures.  Put back after. */
    int slack = prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0);
    if (st == LCT_OK && e.paced)
        prctl(PR_SET_TIMERSLACK, 1ul, 0, 0, 0);
    if (st == LCT_OK)
        st = lct__engine_start(&e, err);
    if (st == LCT_OK) {
        plan_all(&p, src);
        /* what the last flush runs comes after the planning */
        uint64_t planned = lct__now_ns() - e.start_ns;
        uint64_t away = e.planner_away_ns + p.slept_ns;
        report->planning = (double)(planned > away ? planned - away : 0) / 1e9;
        lct__engine_finish(&e);
        report->duration = (double)(lct__now_ns() - e.start_ns) / 1e9;
        lct__engine_report(&e, report);
        report->stalled = e.stalled;
        report->partial |= lct__engine_abandoned(&e);
        for (unsigned i = 0; i < e.nworkers; i++)
            if (e.workers[i].failed != LCT_OK)
                p.nomem = true;
        if (p.nomem)
            st = lct__fail(err, LCT_ERR_NOMEM, ENOMEM, 0,
                           "replay: out of memory (a value's buffer, or "
                           "the key maps)");
    }
    if (e.paced && slack > 0)
        prctl(PR_SET_TIMERSLACK, (unsigned long)slack, 0, 0, 0);
    report->reserved_unfinished = count_unfinished(&p.reserved);
    if (src->merge)
        lct_merge_stats(src->merge, &report->read);
    else
        lct_reader_stats(src->reader, &report->read);
    if (p.has_l1) {
        report->has_l1 = true;
        report->l1.capacity = opts->l1_capacity;
        report->l1.in_bytes = opts->l1_in_bytes;
        report->l1.evictions = lct__l1_evictions(&p.l1);
        report->l1.bypassed = lct__l1_bypassed(&p.l1);
        lct__l1_free(&p.l1);
    }
    lct__u64map_free(&p.reserved);
    lct__u64map_free(&p.last_op);
    lct_pacer_free(p.pacer);
    lct__engine_free(&e);
    return st;
}

lct_status lct_replay_run(lct_reader *reader, const lct_backend_ops *ops,
                          void *state, const lct_replay_options *opts,
                          lct_replay_report *report, lct_error *err)
{
    source src = {.reader = reader};
    return replay(&src, ops, state, opts, report, err);
}

lct_status lct_replay_run_merge(lct_merge *merge, const lct_backend_ops *ops,
                                void *state,
                                const lct_replay_options *opts,
                                lct_replay_report *report, lct_error *err)
{
    source src = {.merge = merge};
    return replay(&src, ops, state, opts, report, err);
}
