/*
 * replay_internal.h - what the replay's two halves share: the planner
 * (plan.c: records to operations, pacing, the dispatch loop) hands
 * operations to the executor (engine.c: workers, the in-flight limit,
 * causal waits, timing), which keeps per-worker tallies merged into the
 * report at the end.
 */
#ifndef LCT_REPLAY_INTERNAL_H
#define LCT_REPLAY_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <time.h>

#include "base/u64map_internal.h"
#include "lct.h"
#include "replay/hist_internal.h"

/* One operation as planned: a store or a lookup (a load follows a lookup
 * that found its key, on the same worker). */
typedef struct lct__rop {
    uint64_t seq;      /* dispatch order, from 1 */
    uint64_t id;       /* the key */
    uint64_t bytes;    /* what it weighs */
    uint64_t wait_seq; /* the key's operation before it (0: none) */
    double due;        /* seconds after the start (paced), else 0 */
    uint8_t kind;      /* LCT_REPLAY_STORE or LCT_REPLAY_LOOKUP */
} lct__rop;

/* A worker's tallies: written by its thread alone, merged at the end. */
typedef struct lct__tally {
    lct__hist latency[LCT_REPLAY_KINDS];
    lct__hist lag, causal;
    uint64_t errors[LCT_REPLAY_KINDS], bytes[LCT_REPLAY_KINDS];
    uint64_t lookups, hits, loads_missing, corrupt;
    uint64_t stores_known, stores_replaced, fills;
    lct_replay_error_kind kinds[LCT_REPLAY_ERROR_KINDS];
    unsigned nkinds;
    uint64_t kinds_other;
} lct__tally;

typedef struct lct__engine lct__engine;

/* One worker: its number, thread, tallies and buffers (one per
 * pipeline slot, 4096-aligned, grown to the largest value seen). */
typedef struct lct__worker {
    lct__engine *engine;
    unsigned index;
    pthread_t thread;
    lct__tally *tally;
    lct_backend_op *ops;   /* pipeline slots */
    lct__rop *planned;     /* what each slot came from */
    uint64_t *began;       /* when each slot was issued */
    void **bufs;
    size_t *caps;
    uint64_t held;         /* the sum of caps */
    lct__rop *batch;       /* taken from the queue */
    size_t nbatch;
    lct_status failed;     /* a buffer could not grow */
} lct__worker;

struct lct__engine {
    const lct_backend_ops *ops;
    void *state;
    const lct_replay_options *opts;
    unsigned nworkers, pipeline, inflight_limit;
    bool paced;
    bool inline_run; /* the one worker runs on the planner's thread */
    int spins;       /* looks before sleeping on a condition */
    uint64_t start_ns; /* CLOCK_MONOTONIC at the start, in ns */

    /* The queue: a ring of inflight_limit operations. */
    pthread_mutex_t lock;
    pthread_cond_t can_take, can_put, store_done;
    lct__rop *ring;
    size_t head, count;   /* queued */
    uint64_t inflight;    /* queued + running */
    uint64_t inflight_max;
    bool closing;         /* no more will be put */
    unsigned waiting;     /* workers in a causal wait */
    unsigned idle;        /* workers waiting for operations */
    bool putter_waiting;  /* the planner waits for room */
    lct__rop *pending;    /* the planner's, handed over together */
    size_t npending, pending_cap;
    size_t take_max;      /* a worker's batch at most */
    lct__u64map done;     /* key -> seq of its latest completed op */

    atomic_uint_fast64_t errors; /* for max_errors */
    pthread_mutex_t report_lock; /* on_op calls */
    lct__worker *workers;
    unsigned started; /* threads running */
};

/* Set up (threads not started yet) and tear down. */
lct_status lct__engine_init(lct__engine *e, const lct_backend_ops *ops,
                            void *state, const lct_replay_options *opts,
                            lct_error *err);
void lct__engine_free(lct__engine *e);
/* Start the worker threads (none when one worker runs inline). */
lct_status lct__engine_start(lct__engine *e, lct_error *err);
/* Hand an operation over: inline, run it now (with the pipeline, when
 * its batch is full); else queue it, waiting while inflight_limit are
 * out.  False when a buffer could not grow. */
bool lct__engine_put(lct__engine *e, const lct__rop *op);
/* Run what an inline batch holds (before the planner sleeps). */
void lct__engine_flush(lct__engine *e);
/* No more operations: drain, join the threads. */
void lct__engine_finish(lct__engine *e);
/* A due time (seconds after the start) on CLOCK_MONOTONIC, in ns. */
static inline uint64_t lct__due_ns(const lct__engine *e, double due)
{
    return e->start_ns + (uint64_t)(due * 1e9);
}
/* The merged tallies into the report. */
void lct__engine_report(const lct__engine *e, lct_replay_report *r);

static inline uint64_t lct__now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

#endif
