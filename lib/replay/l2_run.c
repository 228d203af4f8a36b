/*
 * l2_run.c - an L2-level trace replayed (lct_l2_replay_run): the plan's
 * submissions handed to worker threads once due and ready, as the fork's
 * L2ReplayDriver.run dispatches them (due at start + (t_mono - first) /
 * speed, or later when a dependency completes later; the ones not ready
 * do not hold back the others); each task's keys through the backend,
 * the task timed from dispatch to its last key, its outcome compared
 * with the source's.  The report carries the fork's figures.
 *
 * Long because the workers, the dispatch loop, the preparing and the
 * figures all read and write one private run state (l2run) under one
 * lock; split, that state would have to live in a header for the pieces
 * to share.
 */
#include "replay/l2_internal.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock_internal.h"
#include "base/error_internal.h"

typedef struct samples { /* latencies, microseconds */
    uint32_t *us;
    size_t n, cap;
    uint64_t total_us;
} samples;

typedef struct l2run l2run;

typedef struct l2worker {
    l2run *run;
    unsigned index;
    pthread_t thread;
    unsigned char *buf;
    uint32_t *found;
    lct_backend_op *ops; /* a task's keys, when the backend pipelines */
} l2worker;

struct l2run {
    const lct__l2plan *p;
    const lct_backend_ops *ops;
    void *state;
    const lct_l2_replay_options *o;
    lct_l2_replay_report *r;
    size_t buf_bytes, max_objs;
    pthread_mutex_t lock;
    pthread_cond_t work, done;
    uint32_t *queue; /* dispatched, not yet taken: a ring of nsubs */
    size_t qhead, qtail;
    bool quit, nomem;
    atomic_bool halt; /* stopping: a task under way ends between keys */
    atomic_uint_fast64_t failed; /* key operations that failed, counted
                                    as they fail (max_errors bounds the
                                    calls, not the tasks) */
    double last_ok;   /* when a key operation last succeeded, or the run
                         was last idle with nothing failed since */
    bool failed_since_ok;
    uint64_t errors_told; /* on_errors: the count last told, and when */
    double told_at;
    uint32_t *order; /* the submissions by due time, trace order for
                        equal times */
    bool *dispatched, *completed;
    double *completed_at, *dispatched_at;
    size_t ncompleted, ndispatched;
    samples side[2]; /* read (loads), write (stores) */
    double start;
};

static double now_s(void)
{
    return (double)lct__now_ns() / 1e9;
}

static bool add_sample(samples *s, double seconds)
{
    if (s->n == s->cap) {
        size_t cap = s->cap ? 2 * s->cap : 256;
        uint32_t *g = realloc(s->us, cap * sizeof *g);
        if (!g)
            return false;
        s->us = g, s->cap = cap;
    }
    double us = round(seconds * 1e6);
    uint32_t v = us < 0 ? 0 : us > UINT32_MAX ? UINT32_MAX : (uint32_t)us;
    s->us[s->n++] = v;
    s->total_us += (uint64_t)(us < 0 ? 0 : us);
    return true;
}

/* The report's first backend error, cut to its room. */
static void keep_error(lct_l2_replay_report *r, const char *message)
{
    size_t n = strnlen(message, sizeof r->first_error - 1);
    memcpy(r->first_error, message, n);
    r->first_error[n] = '\0';
}

/* MARK: a task, on a worker */

static uint64_t object_bytes(const l2run *x, const lct__l2obj *o)
{
    uint64_t b = x->o->value_bytes ? x->o->value_bytes : o->bytes;
    return b > x->buf_bytes ? x->buf_bytes : b;
}

/* One key's operation; *present for lookups and loads.  False on a
 * backend error (counted). */
static bool one_key(l2worker *w, const lct__l2sub *s, const lct__l2obj *o,
                    bool *present, lct_error *err)
{
    l2run *x = w->run;
    lct_backend_key key = {.id = o->id};
    snprintf(key.name, sizeof key.name, "%016" PRIx64, o->id);
    size_t len = 0;
    int replaced;
    *present = false;
    switch (s->op) {
    case LCT_L2_STORE:
        return x->ops->store(x->state, w->index, &key, w->buf,
                             object_bytes(x, o), &replaced, err) == LCT_OK;
    case LCT_L2_LOOKUP:
        return x->ops->lookup(x->state, w->index, &key, present, err) ==
               LCT_OK;
    case LCT_L2_LOAD:
        return x->ops->load(x->state, w->index, &key, w->buf, x->buf_bytes,
                            &len, present, err) == LCT_OK;
    case LCT_L2_DELETE:
        return x->ops->remove(x->state, w->index, &key, err) == LCT_OK;
    default: /* an unlock: the backends hold no locks */
        return true;
    }
}

/* The source's outcome and the replay's agree: a store's success, the
 * hit or success indices (a submission the source never completed
 * expects none and no success, as the fork's driver reads it). */
static bool outcome_matches(const lct__l2plan *p, const lct__l2sub *s,
                            bool stored, const uint32_t *found, size_t n)
{
    if (s->op == LCT_L2_STORE)
        return stored == (s->completed && s->store_ok);
    uint32_t nout = s->completed ? s->nout : 0;
    if (n != nout)
        return false;
    for (size_t k = 0; k < n; k++)
        if (p->outs[s->out0 + k] != found[k])
            return false;
    return true;
}

static void record(l2worker *w, uint32_t i, double dispatched, double done,
                   bool stored, size_t nfound, uint64_t errors,
                   const lct_error *first)
{
    l2run *x = w->run;
    const lct__l2sub *s = &x->p->subs[i];
    lct_l2_replay_report *r = x->r;
    x->completed[i] = true;
    x->completed_at[i] = done;
    x->ncompleted++;
    if (errors && !r->first_error[0])
        keep_error(r, first->message);
    if (s->op == LCT_L2_STORE || s->op == LCT_L2_LOAD) {
        lct_l2_replay_side *side = s->op == LCT_L2_LOAD ? &r->read : &r->write;
        side->completed++;
        uint64_t bytes = 0;
        for (uint32_t j = 0; j < s->nobj; j++)
            bytes += object_bytes(x, &x->p->objs[s->obj0 + j]);
        side->total_bytes += bytes;
        x->nomem |= !add_sample(&x->side[s->op == LCT_L2_STORE],
                                done - dispatched);
    }
    if (s->op > LCT_L2_LOAD)
        return;
    r->compared[s->op]++;
    if (outcome_matches(x->p, s, stored, w->found, nfound))
        return;
    r->mismatched[s->op]++;
    r->mismatches++;
    if (r->nsamples < LCT_L2_SAMPLES)
        snprintf(r->samples[r->nsamples++], sizeof r->samples[0],
                 "%s:('%s', %" PRIu64 ", %" PRIu64 ")",
                 lct_l2_op_name(s->op), lct_l2_op_name(s->op), x->p->adapter,
                 s->task);
}

/* A task's keys as one pipeline (redis: its --pipeline and
 * --connections); how many failed, the first in *first. */
static uint64_t pipelined(l2worker *w, const lct__l2sub *s, size_t *nfound,
                          lct_error *first)
{
    static const lct_replay_kind kinds[] = {
        [LCT_L2_STORE] = LCT_REPLAY_STORE, [LCT_L2_LOOKUP] = LCT_REPLAY_LOOKUP,
        [LCT_L2_LOAD] = LCT_REPLAY_LOAD, [LCT_L2_DELETE] = LCT_REPLAY_DELETE};
    l2run *x = w->run;
    for (uint32_t j = 0; j < s->nobj; j++) {
        const lct__l2obj *o = &x->p->objs[s->obj0 + j];
        lct_backend_op *op = &w->ops[j];
        /* every load reads into the one buffer: its bytes are not kept */
        *op = (lct_backend_op){.kind = kinds[s->op], .key = {.id = o->id},
                               .buf = w->buf,
                               .len = s->op == LCT_L2_STORE
                                          ? object_bytes(x, o)
                                          : 0,
                               .cap = x->buf_bytes};
        snprintf(op->key.name, sizeof op->key.name, "%016" PRIx64, o->id);
    }
    x->ops->pipeline(x->state, w->index, w->ops, s->nobj);
    uint64_t errors = 0;
    for (uint32_t j = 0; j < s->nobj; j++) {
        const lct_backend_op *op = &w->ops[j];
        if (op->status != LCT_OK) {
            if (!errors++)
                *first = op->err;
        } else if (op->present && s->op != LCT_L2_STORE &&
                   s->op != LCT_L2_DELETE) {
            w->found[(*nfound)++] = j;
        }
    }
    return errors;
}

/* Counts n failed key operations; whether the run has reached its
 * max_errors (then it halts). */
static bool count_failed(l2run *x, uint64_t n)
{
    uint64_t failed = atomic_fetch_add(&x->failed, n) + n;
    if (!x->o->max_errors || failed < x->o->max_errors)
        return false;
    atomic_store(&x->halt, true);
    return true;
}

static void run_task(l2worker *w, uint32_t i)
{
    l2run *x = w->run;
    const lct__l2sub *s = &x->p->subs[i];
    double dispatched = x->dispatched_at[i];
    size_t nfound = 0;
    uint64_t errors = 0;
    lct_error err = {0}, first = {0};
    bool pipeline = x->ops->pipeline && s->nobj > 1 && s->op != LCT_L2_UNLOCK;
    if (pipeline && (errors = pipelined(w, s, &nfound, &first)))
        count_failed(x, errors);
    uint64_t ok_keys = 0;
    for (uint32_t j = 0; !pipeline && j < s->nobj; j++) {
        if (atomic_load_explicit(&x->halt, memory_order_relaxed)) {
            pthread_mutex_lock(&x->lock); /* left uncompleted */
            if (errors && !x->r->first_error[0])
                keep_error(x->r, first.message);
            pthread_mutex_unlock(&x->lock);
            return;
        }
        bool present;
        if (!one_key(w, s, &x->p->objs[s->obj0 + j], &present, &err)) {
            if (!errors++)
                first = err;
            count_failed(x, 1);
            continue;
        }
        ok_keys++;
        if (present)
            w->found[nfound++] = j;
    }
    if (pipeline)
        ok_keys = s->nobj - errors;
    double done = now_s();
    pthread_mutex_lock(&x->lock);
    if (ok_keys && s->op != LCT_L2_UNLOCK) { /* an unlock asks nothing */
        x->last_ok = done;
        x->failed_since_ok = false;
    } else if (errors) {
        x->failed_since_ok = true;
    }
    record(w, i, dispatched, done, errors == 0, nfound, errors, &first);
    pthread_cond_signal(&x->done);
    pthread_mutex_unlock(&x->lock);
}

static void *worker_main(void *arg)
{
    l2worker *w = arg;
    l2run *x = w->run;
    pthread_mutex_lock(&x->lock);
    for (;;) {
        while (x->qhead == x->qtail && !x->quit)
            pthread_cond_wait(&x->work, &x->lock);
        if (x->qhead == x->qtail)
            break;
        uint32_t i = x->queue[x->qhead++ % x->p->nsubs];
        pthread_mutex_unlock(&x->lock);
        run_task(w, i);
        pthread_mutex_lock(&x->lock);
    }
    pthread_mutex_unlock(&x->lock);
    return NULL;
}

/* MARK: dispatching */

static double due(const l2run *x, const lct__l2sub *s, double origin)
{
    return x->o->speed > 0 ? x->start + (s->t_mono - origin) / x->o->speed
                           : x->start;
}

/* Whether submission i's dependencies have all completed; the latest's
 * completion in *ready_at. */
static bool ready(const l2run *x, const lct__l2sub *s, double *ready_at)
{
    for (uint32_t k = 0; k < s->ndeps; k++) {
        uint32_t d = x->p->deps[s->dep0 + k];
        if (!x->completed[d])
            return false;
        *ready_at = x->completed_at[d] > *ready_at ? x->completed_at[d]
                                                   : *ready_at;
    }
    return true;
}

static void dispatch(l2run *x, uint32_t i, double target, double ready_at,
                     double now)
{
    const lct__l2sub *s = &x->p->subs[i];
    lct_l2_replay_report *r = x->r;
    x->dispatched[i] = true;
    x->dispatched_at[i] = now;
    x->ndispatched++;
    x->queue[x->qtail++ % x->p->nsubs] = i;
    r->submitted[s->op]++;
    if (s->op == LCT_L2_STORE || s->op == LCT_L2_LOAD) {
        uint64_t bytes = 0;
        for (uint32_t j = 0; j < s->nobj; j++)
            bytes += object_bytes(x, &x->p->objs[s->obj0 + j]);
        r->bytes_submitted[s->op] += bytes;
        r->total_bytes_submitted += bytes;
        (s->op == LCT_L2_LOAD ? &r->read : &r->write)->submitted++;
    }
    double lag = now > target ? now - target : 0;
    r->lag_max = lag > r->lag_max ? lag : r->lag_max;
    r->lag_mean += lag; /* a sum until the end */
    double wait = ready_at > target ? ready_at - target : 0;
    r->dependency_wait_total += wait;
    r->dependency_wait_max = wait > r->dependency_wait_max
                                 ? wait
                                 : r->dependency_wait_max;
    pthread_cond_signal(&x->work);
}

/* Hand out what is due and ready, in due order (the first not yet due
 * ends the look: the rest are later still); the next due time (INFINITY:
 * none pending).  Under the lock. */
static double dispatch_ready(l2run *x, size_t *first, double origin,
                             unsigned workers)
{
    const lct__l2plan *p = x->p;
    double now = now_s(), next = INFINITY;
    for (size_t k = *first; k < p->nsubs; k++) {
        uint32_t i = x->order[k];
        if (x->dispatched[i])
            continue;
        const lct__l2sub *s = &p->subs[i];
        double target = due(x, s, origin), ready_at = target;
        if (now < target) {
            next = target;
            break;
        }
        if (x->ndispatched - x->ncompleted >= workers)
            break; /* a completion makes room, and wakes the loop */
        if (ready(x, s, &ready_at))
            dispatch(x, i, target, ready_at, now);
    }
    while (*first < p->nsubs && x->dispatched[x->order[*first]])
        (*first)++;
    return *first < p->nsubs ? next : INFINITY;
}

static void wait_until(l2run *x, double t)
{
    double until = now_s() + 0.01; /* a completion wakes it sooner */
    if (t < until)
        until = t;
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    double left = until - now_s();
    if (left < 1e-5) /* the lock is let go, however briefly */
        left = 1e-5;
    uint64_t ns = (uint64_t)ts.tv_nsec + (uint64_t)(left * 1e9);
    ts.tv_sec += (time_t)(ns / 1000000000u);
    ts.tv_nsec = (long)(ns % 1000000000u);
    pthread_cond_timedwait(&x->done, &x->lock, &ts);
}

/* Whether the run must end now: a stop, max_errors, a stalled backend
 * (nothing succeeded for o->stall s while tasks were out or failing).
 * Tells on_errors of a growing count every 10 s.  Under the lock. */
static bool must_end(l2run *x)
{
    const lct_l2_replay_options *o = x->o;
    lct_l2_replay_report *r = x->r;
    double now = now_s();
    if (x->ndispatched == x->ncompleted && !x->failed_since_ok)
        x->last_ok = now; /* idle is not stalled */
    uint64_t failed = atomic_load(&x->failed);
    if (o->on_errors && failed > x->errors_told && now - x->told_at >= 10) {
        x->errors_told = failed;
        x->told_at = now;
        pthread_mutex_unlock(&x->lock);
        o->on_errors(o->on_errors_ctx, x->errors_told);
        pthread_mutex_lock(&x->lock);
    }
    if (o->max_errors && failed >= o->max_errors)
        r->too_many_errors = true;
    else if (o->stall > 0 && now - x->last_ok > o->stall)
        r->stalled = true;
    else if (!(o->stop && *o->stop))
        return false;
    r->partial = true;
    return true;
}

/* The dispatch loop: until every submission completed, must_end, or no
 * progress for the drain timeout. */
static void schedule(l2run *x, unsigned workers)
{
    const lct__l2plan *p = x->p;
    double origin = p->nsubs ? p->subs[0].t_mono : 0;
    double timeout = x->o->drain_timeout > 0 ? x->o->drain_timeout : 60;
    double last_progress = now_s();
    size_t first = 0, seen = 0;
    pthread_mutex_lock(&x->lock);
    x->last_ok = x->told_at = now_s();
    while (x->ncompleted < p->nsubs && !x->nomem) {
        if (must_end(x)) {
            atomic_store(&x->halt, true);
            break;
        }
        size_t before = x->ndispatched;
        double next = dispatch_ready(x, &first, origin, workers);
        if (x->ndispatched != before || x->ncompleted != seen) {
            seen = x->ncompleted;
            last_progress = now_s();
            continue;
        }
        if (now_s() - last_progress > timeout) {
            x->r->partial = true;
            break;
        }
        wait_until(x, next);
    }
    x->quit = true;
    x->qtail = x->qhead; /* what no worker took is dropped */
    pthread_cond_broadcast(&x->work);
    pthread_mutex_unlock(&x->lock);
}

/* MARK: the report */

static int by_us(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

/* The fork's percentile: rank (n - 1) q, interpolated between its two
 * neighbours. */
static double percentile(const samples *s, double q)
{
    double rank = (double)(s->n - 1) * q;
    size_t lo = (size_t)rank, hi = lo + 1 < s->n ? lo + 1 : s->n - 1;
    double frac = rank - (double)lo;
    return lo == hi ? s->us[lo]
                    : s->us[lo] * (1.0 - frac) + s->us[hi] * frac;
}

static void side_figures(samples *s, lct_l2_replay_side *side)
{
    if (!s->n)
        return;
    qsort(s->us, s->n, sizeof *s->us, by_us);
    side->mean_us = (double)s->total_us / (double)s->n;
    side->p50_us = percentile(s, 0.50);
    side->p90_us = percentile(s, 0.90);
    side->p99_us = percentile(s, 0.99);
    side->min_us = s->us[0];
    side->max_us = s->us[s->n - 1];
    side->throughput_gbps =
        s->total_us ? (double)side->total_bytes / ((double)s->total_us * 1000)
                    : 0;
}

static void figures(l2run *x, double finished)
{
    lct_l2_replay_report *r = x->r;
    const lct__l2plan *p = x->p;
    double first = INFINITY, last = 0;
    for (size_t i = 0; i < p->nsubs; i++) {
        if (!x->dispatched[i])
            continue;
        first = x->dispatched_at[i] < first ? x->dispatched_at[i] : first;
        last = x->dispatched_at[i] > last ? x->dispatched_at[i] : last;
    }
    size_t n = x->ndispatched;
    r->lag_mean = n ? r->lag_mean / (double)n : 0;
    r->actual_window = n > 1 ? last - first : 0;
    r->total_seconds = finished - x->start;
    r->drain_seconds = n && finished > last ? finished - last : 0;
    r->throughput = r->total_seconds > 0 ? (double)r->total_bytes_submitted /
                                               r->total_seconds
                                         : 0;
    r->source_window =
        p->nsubs && x->o->speed > 0
            ? (p->subs[p->nsubs - 1].t_mono - p->subs[0].t_mono) / x->o->speed
            : 0;
    side_figures(&x->side[0], &r->read);
    side_figures(&x->side[1], &r->write);
}

/* MARK: preparing, then running */

/* The prepare objects stored first, on the calling thread as worker 0,
 * ended early as the run is (must_end: its lock is not shared yet, so
 * this thread takes it alone). */
static void prepare(l2run *x, l2worker *w)
{
    lct_l2_replay_report *r = x->r;
    double started = now_s();
    const lct__l2plan *p = x->p;
    x->last_ok = x->told_at = started;
    for (size_t k = 0; k < p->nprepare; k++) {
        x->failed_since_ok = true; /* a store is out: not idle */
        pthread_mutex_lock(&x->lock);
        bool end = must_end(x);
        pthread_mutex_unlock(&x->lock);
        if (end)
            break;
        lct_backend_key key = {.id = p->prepare[k].id};
        snprintf(key.name, sizeof key.name, "%016" PRIx64, key.id);
        lct_error err;
        int replaced;
        uint64_t bytes = object_bytes(x, &p->prepare[k]);
        if (x->ops->store(x->state, w->index, &key, w->buf, bytes, &replaced,
                          &err) != LCT_OK) {
            if (!r->first_error[0])
                keep_error(r, err.message);
            count_failed(x, 1);
            continue;
        }
        x->last_ok = now_s();
        r->prepared_objects++;
        r->prepared_bytes += bytes;
    }
    r->prepared = true;
    r->prepare_seconds = now_s() - started;
}

typedef struct due_at {
    double t;
    uint32_t i;
} due_at;

/* Earlier t_mono first (one that is not a number first of all: it is
 * due at once), then trace order. */
static int by_due(const void *a, const void *b)
{
    const due_at *x = a, *y = b;
    bool nx = x->t != x->t, ny = y->t != y->t;
    if (nx != ny)
        return nx ? -1 : 1;
    if (!nx && x->t != y->t)
        return x->t < y->t ? -1 : 1;
    return x->i < y->i ? -1 : x->i > y->i;
}

/* The submissions in due order, into x->order. */
static bool due_order(l2run *x)
{
    const lct__l2plan *p = x->p;
    due_at *d = malloc((p->nsubs ? p->nsubs : 1) * sizeof *d);
    if (!d)
        return false;
    for (size_t i = 0; i < p->nsubs; i++)
        d[i] = (due_at){p->subs[i].t_mono, (uint32_t)i};
    if (p->nsubs)
        qsort(d, p->nsubs, sizeof *d, by_due);
    for (size_t i = 0; i < p->nsubs; i++)
        x->order[i] = d[i].i;
    free(d);
    return true;
}

static bool setup(l2run *x, l2worker *w, unsigned n)
{
    const lct__l2plan *p = x->p;
    size_t subs = p->nsubs ? p->nsubs : 1;
    x->queue = calloc(subs, sizeof *x->queue);
    x->dispatched = calloc(subs, sizeof *x->dispatched);
    x->completed = calloc(subs, sizeof *x->completed);
    x->completed_at = calloc(subs, sizeof *x->completed_at);
    x->dispatched_at = calloc(subs, sizeof *x->dispatched_at);
    x->order = calloc(subs, sizeof *x->order);
    bool ok = x->queue && x->dispatched && x->completed && x->completed_at &&
              x->dispatched_at && x->order;
    ok = ok && due_order(x);
    uint64_t most = x->o->value_bytes;
    for (size_t k = 0; !x->o->value_bytes && k < p->nobjs; k++)
        most = p->objs[k].bytes > most ? p->objs[k].bytes : most;
    for (size_t i = 0; i < p->nsubs; i++)
        x->max_objs = p->subs[i].nobj > x->max_objs ? p->subs[i].nobj
                                                     : x->max_objs;
    x->buf_bytes = most > LCT_REPLAY_MAX_VALUE_BYTES
                       ? LCT_REPLAY_MAX_VALUE_BYTES
                       : (size_t)most;
    for (unsigned k = 0; ok && k < n; k++) {
        w[k] = (l2worker){.run = x, .index = k};
        w[k].buf = calloc(x->buf_bytes ? x->buf_bytes : 1, 1);
        w[k].found = calloc(x->max_objs ? x->max_objs : 1, sizeof *w[k].found);
        w[k].ops = calloc(x->max_objs ? x->max_objs : 1, sizeof *w[k].ops);
        ok = w[k].buf && w[k].found && w[k].ops;
    }
    return ok;
}

static void teardown(l2run *x, l2worker *w, unsigned n)
{
    for (unsigned k = 0; k < n; k++)
        free(w[k].buf), free(w[k].found), free(w[k].ops);
    free(x->queue);
    free(x->dispatched);
    free(x->completed);
    free(x->completed_at);
    free(x->dispatched_at);
    free(x->order);
    free(x->side[0].us);
    free(x->side[1].us);
}

static void sync_init(l2run *x)
{
    pthread_mutex_init(&x->lock, NULL);
    pthread_cond_init(&x->work, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&x->done, &ca);
    pthread_condattr_destroy(&ca);
}

static void sync_destroy(l2run *x)
{
    pthread_cond_destroy(&x->done);
    pthread_cond_destroy(&x->work);
    pthread_mutex_destroy(&x->lock);
}

/* The workers and the dispatch loop; a run the preparing ended only
 * starts and stops them, for the report's figures. */
static lct_status run_workers(l2run *x, l2worker *w, unsigned n,
                              lct_error *err)
{
    unsigned started = 0;
    x->start = now_s();
    for (; started < n; started++)
        if (pthread_create(&w[started].thread, NULL, worker_main,
                           &w[started]) != 0)
            break;
    lct_status st = LCT_OK;
    if (started == n && !x->r->partial) {
        schedule(x, n);
    } else {
        pthread_mutex_lock(&x->lock);
        x->quit = true;
        pthread_cond_broadcast(&x->work);
        pthread_mutex_unlock(&x->lock);
        if (started < n)
            st = lct__fail(err, LCT_ERR_SYS, errno, 0,
                           "lct_l2_replay_run: a worker thread did not "
                           "start");
    }
    for (unsigned k = 0; k < started; k++)
        pthread_join(w[k].thread, NULL);
    figures(x, now_s());
    return st;
}

lct_status lct_l2_replay_run(lct_reader *reader, const lct_backend_ops *ops,
                             void *state, const lct_l2_replay_options *opts,
                             lct_l2_replay_report *report, lct_error *err)
{
    if (report)
        memset(report, 0, sizeof *report);
    if (!reader || !ops || !opts || !report || !(opts->speed >= 0) ||
        !isfinite(opts->speed))
        return lct__fail(err, LCT_ERR_INVALID, EINVAL, 0,
                         "lct_l2_replay_run: invalid argument");
    lct__l2plan p;
    lct_status st = lct__l2_plan(reader, opts, &p, err);
    if (st != LCT_OK)
        return st;
    report->source_operations_total = p.source_total;
    report->operations_selected = p.nsubs;
    unsigned n = opts->workers ? opts->workers : 4;
    l2worker *w = calloc(n, sizeof *w);
    l2run x = {.p = &p, .ops = ops, .state = state, .o = opts, .r = report};
    if (!w || !setup(&x, w, n)) {
        st = lct__fail(err, LCT_ERR_NOMEM, ENOMEM, 0, "out of memory");
    } else {
        sync_init(&x);
        if (opts->prepare || opts->prepare_only)
            prepare(&x, &w[0]);
        if (!opts->prepare_only)
            st = run_workers(&x, w, n, err);
        sync_destroy(&x);
        report->backend_errors = atomic_load(&x.failed);
        if (st == LCT_OK && x.nomem)
            st = lct__fail(err, LCT_ERR_NOMEM, ENOMEM, 0, "out of memory");
    }
    if (w)
        teardown(&x, w, n);
    free(w);
    lct__l2_plan_free(&p);
    return st;
}
