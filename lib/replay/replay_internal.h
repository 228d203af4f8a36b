/*
 * replay_internal.h - what the replay's parts share: the planner
 * (plan.c: records to operations, the L1 in front (l1.c), a prefetch
 * call's chunks (lct_chunk_of), pacing, the dispatch loop) hands operations
 * to the executor (engine.c: workers, the in-flight limit, causal waits,
 * timing, a prefetch call's loads once its lookups have answered),
 * which keeps per-worker tallies merged into the report at the end.
 */
#ifndef LCT_REPLAY_INTERNAL_H
#define LCT_REPLAY_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <time.h>

#include "base/clock_internal.h"
#include "base/u64map_internal.h"
#include "lct_replay.h"
#include "lmcache/lru_internal.h"
#include "replay/hist_internal.h"

typedef struct lct__pcall lct__pcall;

/* One operation as planned: a store or a lookup (the loads of a
 * prefetch call follow its lookups: see lct__pcall). */
typedef struct lct__rop {
    uint64_t seq;      /* dispatch order, from 1 */
    uint64_t id;       /* the key */
    uint64_t bytes;    /* what it weighs */
    uint64_t wait_seq; /* the key's operation before it (0: none) */
    double due;        /* seconds after the start (paced), else 0 */
    lct__pcall *call;  /* a lookup's prefetch call */
    uint32_t pos;      /* a lookup's place among its call's keys */
    uint32_t chunk;    /* and its chunk: the prefix rule counts chunks */
    uint8_t kind;      /* LCT_REPLAY_STORE or LCT_REPLAY_LOOKUP */
} lct__rop;

/* A prefetch call whose lookups are out: the worker that answers the
 * last one issues the loads the call's rule keeps, as LMCache plans its
 * loads from the whole lookup phase (TrimPolicy.PREFIX: every key of the
 * chunks before the first chunk with a key not found; SPARSE: every
 * found key).  The planner fills one from the engine's pool, sets
 * remaining and then hands its lookups over; it is not touched after. */
struct lct__pcall {
    atomic_uint remaining; /* lookups not answered yet */
    atomic_uint first_gap; /* the lowest chunk with a key not found */
    bool sparse;           /* keep every found key, not the leading run */
    uint32_t n, cap;
    uint32_t first_chunk, last_chunk; /* of the keys looked up */
    lct__rop *keys;        /* the lookups as planned */
    unsigned char *found;  /* what each answered */
    lct__pcall *next_free; /* in the pool */
    lct__pcall *next_all;  /* every call made, freed at the end */
};

/* A worker's tallies: written by its thread alone, merged at the end. */
typedef struct lct__tally {
    lct__hist latency[LCT_REPLAY_KINDS];
    lct__hist lag, causal;
    uint64_t errors[LCT_REPLAY_KINDS], bytes[LCT_REPLAY_KINDS];
    uint64_t lookups, hits, kept, chunks, chunks_hit, loads_missing, corrupt;
    uint64_t stores_known, stores_replaced, fills;
    lct_replay_error_kind kinds[LCT_REPLAY_ERROR_KINDS];
    unsigned nkinds;
    uint64_t kinds_other;
} lct__tally;

typedef struct lct__engine lct__engine;

/* One worker: its number, thread, tallies and buffers (one per slot,
 * 4096-aligned, grown to the largest value seen). */
typedef struct lct__worker {
    lct__engine *engine;
    unsigned index;
    pthread_t thread;
    lct__tally *tally;
    lct_backend_op *ops;   /* pipeline slots */
    lct__rop *planned;     /* what each slot came from */
    uint64_t *began;       /* when each slot was issued */
    void **bufs;           /* taken in order by the operations that */
    size_t *caps;          /* move bytes, nbuf of them so far */
    size_t nbuf;
    uint64_t held;         /* the sum of caps */
    lct__rop *batch;       /* taken from the queue */
    size_t nbatch;
    lct_status failed;     /* a buffer could not grow */
    /* Operations this worker gave the backend, those that came back,
     * and those that succeeded: written by it alone, read by the watch
     * thread (engine.c). */
    _Atomic uint64_t issued, returned, succeeded;
} lct__worker;

struct lct__engine {
    const lct_backend_ops *ops;
    void *state;
    const lct_replay_options *opts;
    unsigned nworkers, pipeline, inflight_limit;
    unsigned slots;  /* operations a worker issues at once: pipeline, or
                        GROUP back to back inline (engine.c) */
    bool paced;
    bool inline_run; /* the one worker runs on the planner's thread */
    int spins;       /* looks before sleeping on a condition */
    uint64_t start_ns; /* CLOCK_MONOTONIC at the start, in ns */
    /* The planner thread's time not spent planning: running operations
     * itself (inline) or waiting for room in the queue. */
    uint64_t planner_away_ns;

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

    /* Prefetch calls, reused: taken by the planner, given back by the
     * worker that issued their loads. */
    pthread_mutex_t calls_lock;
    lct__pcall *free_calls, *all_calls;

    atomic_uint_fast64_t errors; /* for max_errors */
    pthread_mutex_t report_lock; /* on_op calls */
    lct__worker *workers;
    unsigned started; /* threads running */

    /* The watch thread (engine.c): sets abandon on opts->stop, or when
     * operations are out and none is answered for opts->stall seconds
     * (stalled); then nothing more is issued, what was taken is dropped
     * and the run ends with what it has. */
    atomic_int abandon;
    bool stalled;
    bool watching, watch_quit;
    pthread_t watch;
    pthread_mutex_t watch_lock;
    pthread_cond_t watch_wake;
};

/* Whether the run is being given up on (a stop, or a stalled backend). */
static inline bool lct__engine_abandoned(lct__engine *e)
{
    return atomic_load_explicit(&e->abandon, memory_order_relaxed) != 0;
}

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
/* A prefetch call to fill (empty, rule PREFIX), or NULL when memory ran
 * out; lct__pcall_add appends a lookup to it (false: no memory).  An
 * empty call goes back with lct__engine_call_done. */
lct__pcall *lct__engine_call_take(lct__engine *e);
bool lct__pcall_add(lct__pcall *c, const lct__rop *lookup);
void lct__engine_call_done(lct__engine *e, lct__pcall *c);
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

/* The replay's L1 (l1.c): lct__lru over keys numbered as they come. */
typedef struct lct__l1 {
    lct__lru lru;
    lct__u64map ids; /* key -> its number + 1 */
    uint32_t n, cap; /* numbered; room in lru */
    lct_policy *policy; /* another policy than LRU (no lru, no ids) */
    bool in_bytes;
    uint64_t capacity, bypassed;
} lct__l1;

bool lct__l1_init(lct__l1 *l1, uint64_t capacity, bool in_bytes,
                  lct_policy_kind policy);
/* Key id becomes L1's most recent (goes through its policy); whether L1
 * held it before.  False when memory ran out. */
bool lct__l1_touch(lct__l1 *l1, uint64_t id, uint64_t bytes, bool *held);
/* The end of a call's keys (LMCache's L1 policies act on a call at a
 * time); false when memory ran out. */
bool lct__l1_end_call(lct__l1 *l1);
uint64_t lct__l1_evictions(const lct__l1 *l1);
uint64_t lct__l1_bypassed(const lct__l1 *l1);
void lct__l1_free(lct__l1 *l1);

#endif
