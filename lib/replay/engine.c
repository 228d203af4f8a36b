/*
 * engine.c - the replay's executor: worker threads taking batches of
 * operations from a bounded queue (the in-flight limit), causal waits (an
 * operation on a key waits for the one before it on that key, so a key's
 * operations happen in trace order), the
 * backend calls, one at a time or as a pipeline, and each worker's
 * tallies.  One worker runs inline on the planner's thread: no queue, no
 * lock, which is what a single-threaded replay should cost.
 *
 * Long because the queue, the causal waits and the workers share one
 * lock and one state: as several files they would call each other.
 */
#define _GNU_SOURCE /* strerrorname_np */
#include <errno.h>
#include <stddef.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "base/bytes_internal.h"
#include "base/error_internal.h"
#include "replay/replay_internal.h"
#include "lct_replay.h"

#define BUF_ALIGN 4096u
/* The values one issue of a worker's slots holds at most, and what its
 * buffers may keep between issues: a worker's memory stays bounded
 * whatever the batch and the value sizes (two of LMCache's 32 MiB
 * chunks make an issue of their own). */
#define ISSUE_BYTES ((uint64_t)64 << 20)
#ifndef SPINS
#define SPINS 64
#endif
/* Operations one inline issue runs back to back (see lct__engine_init);
 * at most take_max. */
#define GROUP 64

/* Eight hex digits of x as a word whose most significant byte is the
 * first digit: each nibble spread to a byte, then made a digit, all at
 * once (a digit at a time was most of preparing an operation). */
static uint64_t hex8(uint32_t x)
{
    uint64_t v = x;
    v = ((v & 0xffff0000u) << 16) | (v & 0xffffu);
    v = ((v & 0x0000ff000000ff00u) << 8) | (v & 0x000000ff000000ffu);
    v = ((v & 0x00f000f000f000f0u) << 4) | (v & 0x000f000f000f000fu);
    /* byte i holds nibble i (least significant first); 1 where >= 10 */
    uint64_t letters = ((v + 0x0606060606060606u) >> 4) & 0x0101010101010101u;
    v += 0x3030303030303030u + letters * ('a' - '0' - 10);
    return v;
}

static void key_of(uint64_t id, lct_backend_key *key)
{
    key->id = id;
    be64enc(key->name, hex8((uint32_t)(id >> 32)));
    be64enc(key->name + 8, hex8((uint32_t)id));
    key->name[16] = '\0';
}

/* Room for `bytes` in slot i: whole pages from mmap, so a 32 MiB value
 * costs no 32 MiB of writes before its first use (the kernel's zero
 * pages are the value's body), and O_DIRECT's alignment holds. */
static bool slot_room(lct__worker *w, size_t i, uint64_t bytes)
{
    uint64_t need = (bytes + BUF_ALIGN - 1) / BUF_ALIGN * BUF_ALIGN;
    if (need == 0)
        need = BUF_ALIGN;
    if (need <= w->caps[i])
        return true;
    if (need > SIZE_MAX / 2)
        return false;
    void *p = mmap(NULL, (size_t)need, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return false;
    if (w->bufs[i])
        munmap(w->bufs[i], w->caps[i]);
    w->held += need - w->caps[i];
    w->bufs[i] = p;
    w->caps[i] = (size_t)need;
    return true;
}

/* Between issues no slot is in use: give their buffers back when they
 * have grown past what two issues need. */
static void trim_slots(lct__worker *w, size_t nslots)
{
    if (w->held <= 2 * ISSUE_BYTES)
        return;
    for (size_t i = 0; i < nslots; i++)
        if (w->bufs[i]) {
            munmap(w->bufs[i], w->caps[i]);
            w->bufs[i] = NULL;
            w->caps[i] = 0;
        }
    w->held = 0;
}

/* The bytes a slot holds for an operation of this kind. */
static uint64_t slot_bytes(const lct__rop *p, lct_replay_kind kind)
{
    return kind == LCT_REPLAY_LOOKUP ? 0 : p->bytes;
}

/* Add count errors of a kind to a table of LCT_REPLAY_ERROR_KINDS: to
 * its row, a new row (keeping the first message, cut to fit), or *other
 * when the table is full.  A worker's tally and the report both keep one. */
static void add_error_kind(lct_replay_error_kind *kinds, unsigned *n,
                           uint64_t *other, const char *kind, uint64_t count,
                           const char *first)
{
    for (unsigned i = 0; i < *n; i++)
        if (strcmp(kinds[i].kind, kind) == 0) {
            kinds[i].count += count;
            return;
        }
    if (*n == LCT_REPLAY_ERROR_KINDS) {
        *other += count;
        return;
    }
    lct_replay_error_kind *k = &kinds[(*n)++];
    snprintf(k->kind, sizeof k->kind, "%s", kind);
    k->count = count;
    size_t len = strnlen(first, sizeof k->first - 1);
    memcpy(k->first, first, len);
    k->first[len] = '\0';
}

static void count_error(lct__tally *t, const lct_backend_op *op)
{
    char kind[32];
    const char *name = op->status == LCT_ERR_SYS && op->err.sys_errno
                           ? strerrorname_np(op->err.sys_errno)
                           : lct_strerror(op->status);
    if (name)
        snprintf(kind, sizeof kind, "%s", name);
    else
        snprintf(kind, sizeof kind, "errno %d", op->err.sys_errno);
    add_error_kind(t->kinds, &t->nkinds, &t->kinds_other, kind, 1,
                   op->err.message);
}

/* Fill slot n of w for a planned operation of the given kind. */
static bool prepare(lct__worker *w, size_t n, const lct__rop *p,
                    lct_replay_kind kind)
{
    /* A lookup moves no bytes; the others take the next buffer, not
     * slot n's, so an issue of many lookups and a few stores keeps
     * reusing the same few buffers. */
    lct_backend_op *op = &w->ops[n];
    op->buf = NULL;
    if (kind != LCT_REPLAY_LOOKUP) {
        if (!slot_room(w, w->nbuf, p->bytes))
            return false;
        op->buf = w->bufs[w->nbuf++];
    }
    op->kind = kind;
    key_of(p->id, &op->key);
    op->cap = (size_t)p->bytes;
    op->len = kind == LCT_REPLAY_STORE ? (size_t)p->bytes : 0;
    op->status = LCT_OK;
    op->present = false;
    op->replaced = -1;
    op->sent_ns = 0;
    op->done_ns = 0;
    op->err.message[0] = '\0';
    if (kind == LCT_REPLAY_STORE && op->len >= 8)
        memcpy(op->buf, &p->id, 8); /* a load checks it came back */
    w->planned[n] = *p;
    return true;
}

static void call_one(const lct__engine *e, unsigned worker, lct_backend_op *op)
{
    void *s = e->state;
    switch (op->kind) {
    case LCT_REPLAY_STORE:
        op->status = e->ops->store(s, worker, &op->key, op->buf, op->len,
                                   &op->replaced, &op->err);
        break;
    case LCT_REPLAY_LOOKUP:
        op->status = e->ops->lookup(s, worker, &op->key, &op->present,
                                    &op->err);
        break;
    case LCT_REPLAY_LOAD:
        op->status = e->ops->load(s, worker, &op->key, op->buf, op->cap,
                                  &op->len, &op->present, &op->err);
        break;
    default:
        op->status = e->ops->remove(s, worker, &op->key, &op->err);
    }
}

/* Count n more operations given to the backend, or answered by it (the
 * watch thread reads them; only this worker writes them). */
static inline void note(_Atomic uint64_t *count, uint64_t n)
{
    atomic_store_explicit(
        count, atomic_load_explicit(count, memory_order_relaxed) + n,
        memory_order_relaxed);
}

/* Issue slots [0, n) and note when each started and answered; how many
 * were issued (fewer when the run is given up on between them). */
static size_t issue(lct__engine *e, lct__worker *w, size_t n,
                    uint64_t *began)
{
    uint64_t t0 = lct__now_ns();
    if (n > 1 && e->ops->pipeline) {
        note(&w->issued, n);
        e->ops->pipeline(e->state, w->index, w->ops, n);
        note(&w->returned, n);
        uint64_t t1 = lct__now_ns(), ok = 0;
        for (size_t i = 0; i < n; i++) {
            lct_backend_op *op = &w->ops[i];
            ok += op->status == LCT_OK;
            began[i] = op->sent_ns >= t0 && op->sent_ns <= t1 ? op->sent_ns
                                                               : t0;
            if (op->done_ns < began[i] || op->done_ns > t1)
                op->done_ns = t1;
        }
        note(&w->succeeded, ok);
        return n;
    }
    for (size_t i = 0; i < n; i++) {
        if (i && lct__engine_abandoned(e))
            return i;
        began[i] = t0;
        note(&w->issued, 1);
        call_one(e, w->index, &w->ops[i]);
        note(&w->returned, 1);
        note(&w->succeeded, w->ops[i].status == LCT_OK);
        t0 = w->ops[i].done_ns = lct__now_ns();
    }
    return n;
}

static void tally_op(lct__engine *e, lct__worker *w, size_t i, uint64_t began,
                     bool fill)
{
    lct__tally *t = w->tally;
    const lct_backend_op *op = &w->ops[i];
    const lct__rop *p = &w->planned[i];
    uint64_t took = op->done_ns - began;
    uint64_t lag = 0;
    if (e->paced) {
        uint64_t due = lct__due_ns(e, p->due);
        lag = began > due ? began - due : 0;
        if (op->kind != LCT_REPLAY_LOAD && !fill)
            lct__hist_add(&t->lag, lag);
    }
    if (op->status != LCT_OK) {
        t->errors[op->kind]++;
        count_error(t, op);
        atomic_fetch_add(&e->errors, 1);
    } else {
        lct__hist_add(&t->latency[op->kind], took);
        t->bytes[op->kind] += op->kind == LCT_REPLAY_LOOKUP ? 0 : op->len;
        if (op->kind == LCT_REPLAY_LOOKUP) {
            t->lookups++;
            t->hits += op->present;
        } else if (op->kind == LCT_REPLAY_LOAD) {
            if (!op->present)
                t->loads_missing++;
            else if (op->len >= 8 && memcmp(op->buf, &p->id, 8) != 0)
                t->corrupt++;
        } else if (fill) {
            t->fills++;
        } else if (op->replaced >= 0) {
            t->stores_known++;
            t->stores_replaced += op->replaced == 1;
        }
    }
    if (e->opts->on_op) {
        pthread_mutex_lock(&e->report_lock);
        e->opts->on_op(e->opts->on_op_ctx, op, p->due, (double)lag / 1e9,
                       (double)took / 1e9);
        pthread_mutex_unlock(&e->report_lock);
    }
}

/* A lookup of a prefetch call answered: note what it found.  True when
 * it was the call's last, so the call's loads are due.  (The count is
 * taken after the found flag is written, so whoever sees it reach 0
 * sees every flag.) */
static bool call_answered(const lct__rop *p, const lct_backend_op *op)
{
    lct__pcall *c = p->call;
    bool found = op->status == LCT_OK && op->present;
    c->found[p->pos] = found;
    if (!found) {
        unsigned gap = atomic_load(&c->first_gap);
        while (p->chunk < gap &&
               !atomic_compare_exchange_weak(&c->first_gap, &gap, p->chunk))
            ;
    }
    return atomic_fetch_sub(&c->remaining, 1) == 1;
}

/* Operations that follow a run of slots (fills, a call's loads),
 * prepared into the slots from 0 and issued a pipeline (at most
 * ISSUE_BYTES) at a time: the loads of every call the run finished go
 * out together, as a pipelining backend wants them. */
typedef struct followups {
    size_t k;       /* slots prepared */
    uint64_t bytes; /* they move */
} followups;

static void followups_flush(lct__engine *e, lct__worker *w, followups *f)
{
    if (f->k == 0)
        return;
    issue(e, w, f->k, w->began);
    for (size_t j = 0; j < f->k; j++)
        tally_op(e, w, j, w->began[j], w->ops[j].kind == LCT_REPLAY_STORE);
    trim_slots(w, e->slots);
    *f = (followups){0};
    w->nbuf = 0;
}

static void followups_add(lct__engine *e, lct__worker *w, followups *f,
                          const lct__rop *p, lct_replay_kind kind)
{
    uint64_t b = slot_bytes(p, kind);
    if (f->k && (f->k == e->slots || f->bytes + b > ISSUE_BYTES))
        followups_flush(e, w, f);
    if (prepare(w, f->k, p, kind)) {
        f->k++;
        f->bytes += b;
    } else {
        w->failed = LCT_ERR_NOMEM;
    }
}

/* The loads a prefetch call's rule keeps, added to f; the call is then
 * done with (prepare copied what the loads need) and goes back. */
static void add_loads(lct__engine *e, lct__worker *w, followups *f,
                      lct__pcall *c)
{
    unsigned gap = atomic_load(&c->first_gap);
    w->tally->chunks += c->last_chunk - c->first_chunk + 1;
    if (gap > c->first_chunk)
        w->tally->chunks_hit += (gap <= c->last_chunk ? gap : c->last_chunk + 1) -
                                c->first_chunk;
    for (uint32_t i = 0; i < c->n; i++)
        if (c->sparse ? c->found[i] != 0 : c->keys[i].chunk < gap) {
            w->tally->kept++;
            followups_add(e, w, f, &c->keys[i], LCT_REPLAY_LOAD);
        }
    lct__engine_call_done(e, c);
}

/* Run slots [0, n): then (fill_on_miss) the stores of lookups that did
 * not find their key, and the loads of the prefetch calls whose last
 * lookup this was. */
static void run_slots(lct__engine *e, lct__worker *w, size_t n)
{
    uint64_t *began = w->began;
    n = issue(e, w, n, began);
    lct__rop fills[n ? n : 1];
    lct_replay_kind fill_kind[n ? n : 1];
    lct__pcall *ready[n ? n : 1];
    size_t m = 0, nready = 0;
    for (size_t i = 0; i < n; i++) {
        tally_op(e, w, i, began[i], false);
        const lct_backend_op *op = &w->ops[i];
        const lct__rop *p = &w->planned[i];
        if (op->kind != LCT_REPLAY_LOOKUP)
            continue;
        if (p->call && call_answered(p, op))
            ready[nready++] = p->call;
        if (op->status != LCT_OK)
            continue;
        if (op->present ? !p->call : e->opts->fill_on_miss) {
            fills[m] = *p;
            fill_kind[m++] = op->present ? LCT_REPLAY_LOAD : LCT_REPLAY_STORE;
        }
    }
    trim_slots(w, e->slots);
    w->nbuf = 0;
    followups f = {0};
    for (size_t i = 0; i < m; i++)
        followups_add(e, w, &f, &fills[i], fill_kind[i]);
    for (size_t i = 0; i < nready; i++)
        add_loads(e, w, &f, ready[i]);
    followups_flush(e, w, &f);
}

lct__pcall *lct__engine_call_take(lct__engine *e)
{
    pthread_mutex_lock(&e->calls_lock);
    lct__pcall *c = e->free_calls;
    if (c) {
        e->free_calls = c->next_free;
    } else if ((c = calloc(1, sizeof *c))) {
        c->next_all = e->all_calls;
        e->all_calls = c;
    }
    pthread_mutex_unlock(&e->calls_lock);
    if (c) {
        c->n = 0;
        c->sparse = false;
        atomic_store(&c->remaining, 0);
        atomic_store(&c->first_gap, UINT_MAX);
    }
    return c;
}

bool lct__pcall_add(lct__pcall *c, const lct__rop *lookup)
{
    if (c->n == c->cap) {
        if (c->cap > UINT32_MAX / 2)
            return false;
        uint32_t cap = c->cap ? c->cap * 2 : 16;
        lct__rop *keys = reallocarray(c->keys, cap, sizeof *keys);
        if (keys)
            c->keys = keys;
        unsigned char *found = keys ? realloc(c->found, cap) : NULL;
        if (!found)
            return false;
        c->found = found;
        c->cap = cap;
    }
    if (c->n == 0 || lookup->chunk < c->first_chunk)
        c->first_chunk = lookup->chunk;
    if (c->n == 0 || lookup->chunk > c->last_chunk)
        c->last_chunk = lookup->chunk;
    c->keys[c->n++] = *lookup;
    return true;
}

void lct__engine_call_done(lct__engine *e, lct__pcall *c)
{
    pthread_mutex_lock(&e->calls_lock);
    c->next_free = e->free_calls;
    e->free_calls = c;
    pthread_mutex_unlock(&e->calls_lock);
}

/* Operations completed: note them (a worker waiting to run the next
 * operation on one of their keys may go on), and give back their place
 * in the in-flight limit. */
static void complete(lct__engine *e, const lct__rop *done, size_t n)
{
    if (e->inline_run)
        return;
    pthread_mutex_lock(&e->lock);
    for (size_t i = 0; e->nworkers > 1 && i < n; i++) {
        bool added;
        lct__u64map_entry *d = lct__u64map_get(&e->done, done[i].id, &added);
        if (d && d->value < done[i].seq)
            d->value = done[i].seq;
    }
    e->inflight -= n;
    if (e->waiting)
        pthread_cond_broadcast(&e->store_done);
    if (e->putter_waiting)
        pthread_cond_signal(&e->can_put);
    pthread_mutex_unlock(&e->lock);
}

/* Whether the operation numbered p->wait_seq is still to complete. */
static bool must_wait(lct__engine *e, const lct__rop *p)
{
    pthread_mutex_lock(&e->lock);
    bool added;
    lct__u64map_entry *d = lct__u64map_get(&e->done, p->id, &added);
    bool wait = d && d->value < p->wait_seq;
    pthread_mutex_unlock(&e->lock);
    return wait;
}

/* Wait (timed) until the operation numbered p->wait_seq has completed. */
static void causal_wait(lct__engine *e, lct__worker *w, const lct__rop *p)
{
    pthread_mutex_lock(&e->lock);
    bool added;
    lct__u64map_entry *d = lct__u64map_get(&e->done, p->id, &added);
    if (d && d->value < p->wait_seq) {
        uint64_t t0 = lct__now_ns();
        e->waiting++;
        while ((d = lct__u64map_get(&e->done, p->id, &added)) &&
               d->value < p->wait_seq)
            pthread_cond_wait(&e->store_done, &e->lock);
        e->waiting--;
        lct__hist_add(&w->tally->causal, lct__now_ns() - t0);
    }
    pthread_mutex_unlock(&e->lock);
}

/* Run a batch in order, `pipeline` at a time.  A batch is a run of
 * consecutive sequence numbers, so an operation it holds before another
 * has run or is pending ahead of it; one before the batch may still be
 * another worker's: wait for that one, after running what is pending. */
static void run_batch(lct__engine *e, lct__worker *w)
{
    size_t n = 0;
    uint64_t bytes = 0;
    w->nbuf = 0;
    for (size_t i = 0; i < w->nbatch; i++) {
        if (lct__engine_abandoned(e)) { /* what is left is dropped */
            n = 0;
            break;
        }
        const lct__rop *p = &w->batch[i];
        uint64_t b = slot_bytes(p, (lct_replay_kind)p->kind);
        bool wait = !e->inline_run && p->wait_seq &&
                    p->wait_seq < w->batch[0].seq && must_wait(e, p);
        if (n && (wait || bytes + b > ISSUE_BYTES)) {
            run_slots(e, w, n);
            n = 0;
            bytes = 0;
        }
        if (wait)
            causal_wait(e, w, p);
        if (!prepare(w, n, p, (lct_replay_kind)p->kind)) {
            w->failed = LCT_ERR_NOMEM;
            continue;
        }
        bytes += b;
        if (++n == e->slots) {
            run_slots(e, w, n);
            n = 0;
            bytes = 0;
        }
    }
    if (n)
        run_slots(e, w, n);
    complete(e, w->batch, w->nbatch);
    w->nbatch = 0;
}

/* Before sleeping on a condition, look again a few times, yielding the
 * CPU: a futex sleep and wake-up costs tens of microseconds here, more
 * than a batch of operations on a fast backend. */
static void spin_until(const size_t *value, bool want_nonzero,
                       const bool *closing, int spins)
{
    for (int i = 0; i < spins; i++) {
        size_t v = __atomic_load_n(value, __ATOMIC_RELAXED);
        if ((v != 0) == want_nonzero || __atomic_load_n(closing,
                                                         __ATOMIC_RELAXED))
            return;
        sched_yield();
    }
}

static size_t take(lct__engine *e, lct__worker *w)
{
    spin_until(&e->count, true, &e->closing, e->spins);
    pthread_mutex_lock(&e->lock);
    while (e->count == 0 && !e->closing) {
        e->idle++;
        pthread_cond_wait(&e->can_take, &e->lock);
        e->idle--;
    }
    /* A fair share of what is queued, whole pipelines: fewer trips
     * through the lock, yet no worker takes all while others idle. */
    size_t n = e->count / e->nworkers;
    if (n < e->pipeline)
        n = e->pipeline;
    if (n > e->take_max)
        n = e->take_max;
    if (n > e->count)
        n = e->count;
    for (size_t i = 0; i < n; i++)
        w->batch[i] = e->ring[(e->head + i) % e->inflight_limit];
    e->head = (e->head + n) % e->inflight_limit;
    e->count -= n;
    w->nbatch = n;
    if (e->count && e->idle)
        pthread_cond_signal(&e->can_take);
    pthread_mutex_unlock(&e->lock);
    return n;
}

static void *worker_main(void *arg)
{
    lct__worker *w = arg;
    while (take(w->engine, w) > 0)
        run_batch(w->engine, w);
    return NULL;
}

/* Queue the planner's pending operations, waiting for room. */
static void hand_over(lct__engine *e)
{
    size_t n = e->npending;
    if (n == 0)
        return;
    uint64_t full = 0;
    for (int i = 0; i < e->spins && __atomic_load_n(&e->inflight, __ATOMIC_RELAXED) +
                                      n > e->inflight_limit; i++) {
        if (!full)
            full = lct__now_ns();
        sched_yield();
    }
    pthread_mutex_lock(&e->lock);
    while (e->inflight + n > e->inflight_limit) {
        if (!full)
            full = lct__now_ns();
        e->putter_waiting = true;
        pthread_cond_wait(&e->can_put, &e->lock);
    }
    e->putter_waiting = false;
    if (full)
        e->planner_away_ns += lct__now_ns() - full;
    for (size_t i = 0; i < n; i++)
        e->ring[(e->head + e->count + i) % e->inflight_limit] = e->pending[i];
    e->count += n;
    e->inflight += n;
    if (e->inflight > e->inflight_max)
        e->inflight_max = e->inflight;
    if (e->idle)
        pthread_cond_signal(&e->can_take);
    pthread_mutex_unlock(&e->lock);
    e->npending = 0;
}

/* A batch run on the planner's thread: two clock readings a batch of
 * GROUP, to tell the planner's time from the operations'. */
static void run_inline(lct__engine *e, lct__worker *w)
{
    uint64_t t0 = lct__now_ns();
    run_batch(e, w);
    e->planner_away_ns += lct__now_ns() - t0;
}

bool lct__engine_put(lct__engine *e, const lct__rop *op)
{
    if (e->inline_run) {
        lct__worker *w = &e->workers[0];
        w->batch[w->nbatch++] = *op;
        /* Queued in a batch is not yet outstanding: a backend without a
         * pipeline has one operation out at a time. */
        size_t out = w->nbatch < e->pipeline ? w->nbatch : e->pipeline;
        if (out > e->inflight_max)
            e->inflight_max = out;
        if (w->nbatch == e->slots)
            run_inline(e, w);
        return w->failed == LCT_OK;
    }
    e->pending[e->npending++] = *op;
    if (e->npending == e->pending_cap)
        hand_over(e);
    return true;
}

void lct__engine_flush(lct__engine *e)
{
    if (e->inline_run && e->workers[0].nbatch)
        run_inline(e, &e->workers[0]);
    else if (!e->inline_run)
        hand_over(e);
}

unsigned lct_replay_workers(const lct_replay_options *o)
{
    unsigned inflight = o && o->inflight ? o->inflight : 1;
    unsigned pipeline = o && o->pipeline ? o->pipeline : 1;
    unsigned n = o && o->workers ? o->workers
                                 : (inflight + pipeline - 1) / pipeline;
    if (n > inflight)
        n = inflight;
    if (n > LCT_REPLAY_MAX_WORKERS)
        n = LCT_REPLAY_MAX_WORKERS;
    return n ? n : 1;
}

static void tally_init(lct__tally *t)
{
    memset(t, 0, sizeof *t);
    for (unsigned k = 0; k < LCT_REPLAY_KINDS; k++)
        lct__hist_init(&t->latency[k]);
    lct__hist_init(&t->lag);
    lct__hist_init(&t->causal);
}

static bool worker_alloc(lct__engine *e, lct__worker *w, unsigned index)
{
    size_t p = e->slots;
    w->engine = e;
    w->index = index;
    w->tally = malloc(sizeof *w->tally);
    w->ops = calloc(p, sizeof *w->ops);
    w->planned = calloc(p, sizeof *w->planned);
    w->began = calloc(p, sizeof *w->began);
    w->bufs = calloc(p, sizeof *w->bufs);
    w->caps = calloc(p, sizeof *w->caps);
    w->batch = calloc(e->take_max, sizeof *w->batch);
    if (!w->tally || !w->ops || !w->planned || !w->began || !w->bufs ||
        !w->caps || !w->batch)
        return false;
    tally_init(w->tally);
    return true;
}

lct_status lct__engine_init(lct__engine *e, const lct_backend_ops *ops,
                            void *state, const lct_replay_options *opts,
                            lct_error *err)
{
    memset(e, 0, sizeof *e);
    e->ops = ops;
    e->state = state;
    e->opts = opts;
    e->nworkers = lct_replay_workers(opts);
    e->pipeline = opts->pipeline ? opts->pipeline : 1;
    e->inflight_limit = opts->inflight ? opts->inflight : 1;
    if (e->inflight_limit < e->pipeline)
        e->inflight_limit = e->pipeline;
    e->paced = opts->speed > 0;
    /* One worker with no more in flight than it takes at once gains
     * nothing from a thread: it runs on the planner's.  With room for
     * more, one thread reads and plans while the other waits on the
     * backend. */
    e->inline_run = e->nworkers == 1 && e->inflight_limit <= e->pipeline;
    /* Spinning pays only when an operation is short and handed over
     * alone; with batches it steals the CPU the backend needs. */
    e->spins = e->pipeline == 1 ? SPINS : 0;
    /* Handed over and taken in dozens: a lock per operation would cost
     * more than a null backend's call. */
    /* ... but a quarter of the limit at most, so workers never wait for
     * the planner to fill a whole window before more is handed over. */
    e->pending_cap = e->inflight_limit / 4;
    if (e->pending_cap > 64)
        e->pending_cap = 64;
    /* A pipelining worker takes whole batches: hand them over whole. */
    if (e->pending_cap < e->pipeline)
        e->pending_cap = e->pipeline;
    e->take_max = e->pipeline > 64 ? e->pipeline : 64;
    /* Run flat out on one thread against a backend that takes one
     * operation at a time, operations are issued GROUP back to back: the
     * clock read that ends one starts the next, one read an operation,
     * not two.  (Not paced: a due time is waited for alone; not with
     * fill_on_miss: its store must follow its own lookup at once.) */
    e->slots = e->pipeline;
    if (e->inline_run && !e->paced && e->pipeline == 1 && !ops->pipeline &&
        !opts->fill_on_miss)
        e->slots = GROUP;
    e->pending = calloc(e->pending_cap, sizeof *e->pending);
    pthread_mutex_init(&e->lock, NULL);
    pthread_mutex_init(&e->report_lock, NULL);
    pthread_mutex_init(&e->calls_lock, NULL);
    pthread_cond_init(&e->can_take, NULL);
    pthread_cond_init(&e->can_put, NULL);
    pthread_cond_init(&e->store_done, NULL);
    e->ring = calloc(e->inflight_limit, sizeof *e->ring);
    e->workers = calloc(e->nworkers, sizeof *e->workers);
    bool ok = e->ring && e->workers && e->pending;
    for (unsigned i = 0; ok && i < e->nworkers; i++)
        ok = worker_alloc(e, &e->workers[i], i);
    if (!ok)
        return lct__fail(err, LCT_ERR_NOMEM, ENOMEM, 0,
                         "replay: out of memory for %u workers", e->nworkers);
    return LCT_OK;
}

/* What the watch thread saw last. */
typedef struct watch_state {
    uint64_t issued, succeeded; /* the counts at the last tick */
    uint64_t since;             /* the backend has been useless since */
    uint64_t said_at, said;     /* the error count said last */
} watch_state;

static uint64_t sum_counts(const lct__engine *e, size_t offset)
{
    uint64_t n = 0;
    for (unsigned i = 0; i < e->nworkers; i++)
        n += atomic_load_explicit(
            (_Atomic uint64_t *)((char *)&e->workers[i] + offset),
            memory_order_relaxed);
    return n;
}

/* Every 0.1 s: a stop asked for; a backend given work (or holding it)
 * that lets none of it succeed; the error count, said every 10 s while
 * it grows.  Idle (nothing out, nothing new: a paced run's gap) is not
 * a stall. */
static void watch_tick(lct__engine *e, uint64_t now, watch_state *ws)
{
    const lct_replay_options *o = e->opts;
    if (o->stop && *o->stop)
        atomic_store(&e->abandon, 1);
    uint64_t issued = sum_counts(e, offsetof(lct__worker, issued));
    uint64_t returned = sum_counts(e, offsetof(lct__worker, returned));
    uint64_t succeeded = sum_counts(e, offsetof(lct__worker, succeeded));
    bool idle = issued == returned && issued == ws->issued;
    ws->issued = issued;
    if (succeeded != ws->succeeded || idle) {
        ws->succeeded = succeeded;
        ws->since = now;
    } else if (o->stall > 0 && (double)(now - ws->since) >= o->stall * 1e9) {
        e->stalled = true;
        atomic_store(&e->abandon, 1);
    }
    uint64_t errors = atomic_load(&e->errors);
    if (o->on_errors && now - ws->said_at >= 10 * UINT64_C(1000000000)) {
        if (errors != ws->said)
            o->on_errors(o->on_errors_ctx, errors);
        ws->said = errors;
        ws->said_at = now;
    }
}

static void *watch_main(void *arg)
{
    lct__engine *e = arg;
    watch_state ws = {.since = lct__now_ns()};
    ws.said_at = ws.since;
    pthread_mutex_lock(&e->watch_lock);
    while (!e->watch_quit) {
        uint64_t due = lct__now_ns() + 100000000u;
        struct timespec ts = {(time_t)(due / 1000000000u),
                              (long)(due % 1000000000u)};
        pthread_cond_timedwait(&e->watch_wake, &e->watch_lock, &ts);
        if (!e->watch_quit)
            watch_tick(e, lct__now_ns(), &ws);
    }
    pthread_mutex_unlock(&e->watch_lock);
    return NULL;
}

/* The watch thread, when there is anything to watch for. */
static void watch_start(lct__engine *e)
{
    const lct_replay_options *o = e->opts;
    if (!o->stop && !(o->stall > 0) && !o->on_errors)
        return;
    pthread_condattr_t attr;
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_cond_init(&e->watch_wake, &attr);
    pthread_condattr_destroy(&attr);
    pthread_mutex_init(&e->watch_lock, NULL);
    e->watching = pthread_create(&e->watch, NULL, watch_main, e) == 0;
    if (!e->watching) {
        pthread_cond_destroy(&e->watch_wake);
        pthread_mutex_destroy(&e->watch_lock);
    }
}

static void watch_stop(lct__engine *e)
{
    if (!e->watching)
        return;
    pthread_mutex_lock(&e->watch_lock);
    e->watch_quit = true;
    pthread_cond_signal(&e->watch_wake);
    pthread_mutex_unlock(&e->watch_lock);
    pthread_join(e->watch, NULL);
    pthread_cond_destroy(&e->watch_wake);
    pthread_mutex_destroy(&e->watch_lock);
    e->watching = false;
}

lct_status lct__engine_start(lct__engine *e, lct_error *err)
{
    e->start_ns = lct__now_ns();
    watch_start(e);
    if (e->inline_run)
        return LCT_OK;
    for (unsigned i = 0; i < e->nworkers; i++) {
        int rc = pthread_create(&e->workers[i].thread, NULL, worker_main,
                                &e->workers[i]);
        e->started += rc == 0;
        if (rc != 0) {
            lct__engine_finish(e); /* joins those that started */
            return lct__fail(err, LCT_ERR_SYS, rc, 0,
                             "replay: cannot start worker %u: %s", i,
                             strerror(rc));
        }
    }
    return LCT_OK;
}

void lct__engine_finish(lct__engine *e)
{
    lct__engine_flush(e);
    if (!e->inline_run) {
        pthread_mutex_lock(&e->lock);
        e->closing = true;
        pthread_cond_broadcast(&e->can_take);
        pthread_mutex_unlock(&e->lock);
        for (unsigned i = 0; i < e->started; i++)
            pthread_join(e->workers[i].thread, NULL);
        e->started = 0;
    }
    watch_stop(e);
}

void lct__engine_free(lct__engine *e)
{
    for (unsigned i = 0; e->workers && i < e->nworkers; i++) {
        lct__worker *w = &e->workers[i];
        for (unsigned k = 0; w->bufs && k < e->slots; k++)
            if (w->bufs[k])
                munmap(w->bufs[k], w->caps[k]);
        free(w->bufs);
        free(w->caps);
        free(w->ops);
        free(w->planned);
        free(w->began);
        free(w->batch);
        free(w->tally);
    }
    free(e->workers);
    free(e->ring);
    free(e->pending);
    lct__u64map_free(&e->done);
    for (lct__pcall *c = e->all_calls, *next; c; c = next) {
        next = c->next_all;
        free(c->keys);
        free(c->found);
        free(c);
    }
    pthread_mutex_destroy(&e->calls_lock);
    pthread_mutex_destroy(&e->lock);
    pthread_mutex_destroy(&e->report_lock);
    pthread_cond_destroy(&e->can_take);
    pthread_cond_destroy(&e->can_put);
    pthread_cond_destroy(&e->store_done);
    memset(e, 0, sizeof *e);
}

static void merge_kinds(lct_replay_report *r, const lct__tally *t)
{
    r->errors_other += t->kinds_other;
    for (unsigned i = 0; i < t->nkinds; i++)
        add_error_kind(r->error_kinds, &r->nerror_kinds, &r->errors_other,
                       t->kinds[i].kind, t->kinds[i].count,
                       t->kinds[i].first);
}

void lct__engine_report(const lct__engine *e, lct_replay_report *r)
{
    lct__tally *sum = malloc(sizeof *sum);
    if (!sum)
        return;
    tally_init(sum);
    for (unsigned i = 0; i < e->nworkers; i++) {
        const lct__tally *t = e->workers[i].tally;
        for (unsigned k = 0; k < LCT_REPLAY_KINDS; k++) {
            lct__hist_merge(&sum->latency[k], &t->latency[k]);
            r->errors[k] += t->errors[k];
            r->bytes[k] += t->bytes[k];
        }
        lct__hist_merge(&sum->lag, &t->lag);
        lct__hist_merge(&sum->causal, &t->causal);
        r->lookups += t->lookups;
        r->hits += t->hits;
        r->kept += t->kept;
        r->chunks += t->chunks;
        r->chunks_hit += t->chunks_hit;
        r->loads_missing += t->loads_missing;
        r->corrupt += t->corrupt;
        r->stores_known += t->stores_known;
        r->stores_replaced += t->stores_replaced;
        r->fills += t->fills;
        merge_kinds(r, t);
    }
    for (unsigned k = 0; k < LCT_REPLAY_KINDS; k++)
        lct__hist_summary(&sum->latency[k], &r->latency[k]);
    lct__hist_summary(&sum->lag, &r->lag);
    lct__hist_summary(&sum->causal, &r->causal);
    r->paced = e->paced;
    r->inflight_max = e->inflight_max;
    r->workers = e->nworkers;
    free(sum);
}
