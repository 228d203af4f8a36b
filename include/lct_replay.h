/*
 * lct_replay.h - replaying a trace's storage calls against a storage
 * backend: the operations (store, lookup, load) a record becomes, the
 * backend interface (lct_backend_ops) with the null, mem: and dir:
 * backends built in (redis in lct_redis.h), and the engine
 * (lct_replay_run): pacing, workers, the in-flight limit, causal waits,
 * an L1 in front, reports and histograms.  The layer lib/replay
 * (docs/architecture.md); docs/replay.md for users.
 *
 * Lifetimes: a backend's state lives from its ops' open to their close;
 * lct_replay_run reads the trace from the reader (or merge) it is given,
 * which must outlive the call, and fills a report that holds no views.
 *
 * Threads: lct_replay_run starts its workers and calls the backend's
 * operations on them, one call per worker at a time, so a backend opened
 * for N workers takes N calls at once; the reader is read by the calling
 * thread alone.
 */
#ifndef LCT_REPLAY_H
#define LCT_REPLAY_H

#include "lct_cache.h"
#include "lct_read.h"
#include "lct_write.h"

#ifdef __cplusplus
extern "C" {
#endif

/* MARK: = Layer: lib/replay (docs/architecture.md) */

/* MARK: - Replay: operations and backends */

/*
 * Replaying a trace against a storage backend.  The engine reads records
 * in order and turns the storage calls into operations on keys:
 *
 *   - `...reserve_write` (keys, layout_desc): each key's bytes (from the
 *     layout, or as the options say) are noted, nothing is issued;
 *   - `...finish_write` (keys): each noted key is STOREd with its bytes
 *     (a finish of a key never reserved is counted, not issued);
 *   - `...submit_prefetch_task` (keys, a PrefetchRequestSpec or a
 *     PrefetchTaskSpec): each key is LOOKed UP; when the call's lookups
 *     have all answered, the keys its rule keeps are LOADed, as
 *     LMCache's StorageManager plans its L2 loads: under TrimPolicy
 *     PREFIX (the default, and fetching_policy "prefix") every key of
 *     the chunks before the first chunk with a key not found (a key's
 *     chunk is its place among the call's keys of its kv rank and
 *     object group; a group with a sliding window counts as full
 *     attention), under any other policy every found key; with
 *     skip_l2 nothing is issued (the call is counted in calls_skip_l2);
 *     PrefetchMode WARM asks every key of the backend, L1 or not;
 *   - with an L1 (lct_replay_options.l1_capacity) a lookup's leading
 *     run of keys in L1 is served there and only its keys from L1's
 *     first miss on are looked up; every store is written through; L1
 *     is the model of lct_refs_behind_l1, so the backend sees the
 *     stream whose curve `lct mrc --l1` draws;
 *   - every other call is counted per qualname, not issued.
 *
 * Operations are paced from t_mono (the pacer's rule: never early) and
 * run on worker threads with at most `inflight` outstanding.  An
 * operation on a key waits for the key's operation before it still in
 * flight on another worker (a causal wait, timed): a lookup never misses
 * an earlier store, nor sees a later one, so a key's operations happen in
 * trace order whatever the threads.  Latencies, schedule lag and waits go to
 * log-bucketed histograms: fixed memory, every value within
 * LCT_REPLAY_HIST_ERROR of the truth.
 */

/** What an operation does to the store. */
typedef enum lct_replay_kind {
    LCT_REPLAY_STORE = 0,
    LCT_REPLAY_LOOKUP,
    LCT_REPLAY_LOAD,
    LCT_REPLAY_DELETE,
    LCT_REPLAY_KINDS
} lct_replay_kind;

/** "store", "lookup", "load", "delete". */
const char *lct_replay_kind_name(lct_replay_kind kind);

/** A key as backends see it: the ObjectKey's 64-bit id
 *  (lct_object_key_hash), and the same as 16 lowercase hex digits. */
typedef struct lct_backend_key {
    uint64_t id;
    char name[17];
} lct_backend_key;

/** One operation handed to a backend's pipeline (below). */
typedef struct lct_backend_op {
    lct_replay_kind kind;
    lct_backend_key key;
    void *buf;       /**< store: the bytes; load: room for them */
    size_t len;      /**< store: bytes to write; load: filled in */
    size_t cap;      /**< load: room in buf */
    /* filled by the backend: */
    lct_status status;
    bool present;    /**< lookup, load: the key was there */
    int replaced;    /**< store: 1 the key was there, 0 not, -1 unknown */
    uint64_t sent_ns; /**< CLOCK_MONOTONIC when it went out (0: when the
                           pipeline was called) */
    uint64_t done_ns; /**< CLOCK_MONOTONIC when its answer came (0: the
                           engine takes the time the pipeline returned) */
    lct_error err;   /**< when status is not LCT_OK */
} lct_backend_op;

/** How a run opens its backend. */
/** What only the dir: backend reads. */
typedef struct lct_backend_dir_config {
    bool fsync;        /**< fsync each stored file */
    bool direct;       /**< O_DIRECT (buffers are 4096-aligned) */
} lct_backend_dir_config;

/** The most connections a redis worker may spread its pipeline over. */
#define LCT_REDIS_MAX_CONNECTIONS 64

/** What only the redis backend (lct_redis.h) reads. */
typedef struct lct_backend_redis_config {
    unsigned pipeline; /**< commands a connection has outstanding
                            (redis-benchmark's -P; 0: 1) */
    unsigned connections; /**< connections each worker spreads its
                               pipeline over, by key (0: 1), as
                               redis-benchmark's -c spreads its load */
} lct_backend_redis_config;

/** How a run opens its backend: what every backend may read, then each
 *  backend's own options in a struct of its own. */
typedef struct lct_backend_config {
    unsigned workers;  /**< threads that call at once; worker numbers are
                            0 .. workers-1, one call per worker at a time */
    bool keep;         /**< dir, redis: keep what an earlier run stored
                            (else removed at open: dir's .kv files,
                            redis's lct:* keys) */
    double timeout;    /**< seconds to connect / wait for an answer */
    uint64_t value_bytes; /**< mem: every value's weight when the run fixes
                               it (--value-bytes), so a key capacity is
                               checked against memory at open (0: each
                               key's own, checked as keys are stored) */
    uint64_t first_value_bytes; /**< mem, dir: when value_bytes is 0, the
                               weight of the trace's first key with a
                               layout (0: not known), which a key
                               capacity (mem) or one value (dir) is checked
                               against at open the same way */
    /** Give up a long open (redis's clean-up of an earlier run's keys)
     *  when *stop becomes non-zero; NULL: never. */
    const volatile int *stop;
    lct_backend_dir_config dir;     /**< dir: only */
    lct_backend_redis_config redis; /**< redis only */
} lct_backend_config;

/**
 * A storage backend: a struct of functions, so a harness plugs its own
 * store in (examples/backend.c is one).  Calls for one worker come from
 * one thread at a time; calls for different workers may come at once.
 * Each returns LCT_OK or fills err (LCT_ERR_SYS with sys_errno for an OS
 * failure: it is counted under errno's name) and returns its code.
 */
typedef struct lct_backend_ops {
    const char *name; /**< the URI's scheme: "mem", "dir", "redis" */
    /** @p arg is the URI after "NAME:" ("//HOST:PORT" for redis). */
    lct_status (*open)(const char *arg, const lct_backend_config *cfg,
                       void **state, lct_error *err);
    void (*close)(void *state);
    lct_status (*store)(void *state, unsigned worker,
                        const lct_backend_key *key, const void *data,
                        size_t len, int *replaced, lct_error *err);
    lct_status (*lookup)(void *state, unsigned worker,
                         const lct_backend_key *key, bool *present,
                         lct_error *err);
    lct_status (*load)(void *state, unsigned worker,
                       const lct_backend_key *key, void *buf, size_t cap,
                       size_t *len, bool *present, lct_error *err);
    lct_status (*remove)(void *state, unsigned worker,
                         const lct_backend_key *key, lct_error *err);
    /** Optional (NULL: one call at a time): run @p n operations in order,
     *  answers read after all were sent; each op gets its own status. */
    void (*pipeline)(void *state, unsigned worker, lct_backend_op *ops,
                     size_t n);
} lct_backend_ops;

/** The built-in backends: "null" (no I/O), "mem:CAPACITY" (an LRU that
 *  holds the bytes; CAPACITY a key count, or bytes with a B, K, M, G or T
 *  suffix), "dir:PATH" (one file per key).  mem never holds more than 4/5
 *  of the memory available when it opens (MemAvailable, or RLIMIT_AS if
 *  lower): a byte capacity over that, or a key count times a fixed
 *  value_bytes over it, is refused at open (LCT_ERR_RANGE); with a key
 *  count alone, a store that would pass it fails (LCT_ERR_SYS, ENOMEM)
 *  with the arithmetic, rather than the kernel killing the process.  dir
 *  likewise holds at most 4/5 of the space free in PATH at open: a
 *  value_bytes over that is refused at open (LCT_ERR_RANGE), a store past
 *  it fails (LCT_ERR_SYS, ENOSPC) with the arithmetic. */
const lct_backend_ops *lct_backend_null(void);
const lct_backend_ops *lct_backend_mem(void);
const lct_backend_ops *lct_backend_dir(void);

/**
 * The backend a URI names among @p extra (may be NULL; n of them, the
 * caller's plug-ins, e.g. lct_backend_redis() of lct_redis.h) and the
 * built-ins; *arg gets the rest of the URI.
 * @return LCT_OK, LCT_ERR_NOT_FOUND (err names the URI).
 */
lct_status lct_backend_find(const char *uri,
                            const lct_backend_ops *const *extra, size_t n,
                            const lct_backend_ops **ops, const char **arg,
                            lct_error *err);

/* MARK: - The replay engine */

/** How lct_replay_run() replays. */
typedef struct lct_replay_options {
    double speed;          /**< 1 as recorded, 2 twice as fast, 0 flat out */
    unsigned inflight;     /**< operations outstanding at most (0: 1) */
    unsigned workers;      /**< threads (0: inflight / pipeline, at most
                                LCT_REPLAY_MAX_WORKERS) */
    unsigned pipeline;     /**< operations a worker takes at once (0: 1) */
    uint64_t value_bytes;  /**< non-zero: every key weighs this */
    double scale;          /**< non-zero: a key's layout bytes times this */
    bool fill_on_miss;     /**< a lookup that misses stores the key (a
                                read-through cache, as libCacheSim counts) */
    bool store_at_reserve; /**< store at reserve_write, not finish_write */
    uint64_t max_errors;   /**< stop issuing after this many (0: never) */
    /** Stop issuing when *stop becomes non-zero (a signal handler's flag,
     *  looked at every 0.1 s): operations not yet given to the backend
     *  are dropped, the calls under way end (at most the backend's own
     *  timeout), and the report is marked partial. */
    const volatile int *stop;
    /** Seconds in which operations are given to the backend, or are
     *  out, and none succeeds (each fails, or none comes back), after
     *  which the backend counts as stalled and the run ends as on *stop,
     *  with report.stalled (0: never). */
    double stall;
    /** Called from a watch thread at most every 10 s while the error
     *  count grows, with the count: a failing run is heard of even where
     *  no progress is shown. */
    void (*on_errors)(void *ctx, uint64_t errors);
    void *on_errors_ctx;
    /** Called after each operation with the engine's report lock held
     *  (one call at a time), e.g. for a JSONL line per operation. */
    void (*on_op)(void *ctx, const lct_backend_op *op, double t_sched,
                  double lag_s, double latency_s);
    void *on_op_ctx;
    /** Called from the reading thread about every 4096 records (every
     *  record when paced, as they come at the trace's pace). */
    void (*progress)(void *ctx, uint64_t records, uint64_t offset);
    void *progress_ctx;
    /** Above 0: an LRU L1 of this many keys (bytes with l1_in_bytes) in
     *  front of the backend, as the mapping above says. */
    uint64_t l1_capacity;
    bool l1_in_bytes;
    /** The L1's eviction policy (lct_policy_kind; 0 is LRU, as above),
     *  any but LCT_POLICY_BELADY; in bytes a key of unknown size weighs
     *  1.  Not LRU, the backend's stream is no longer lct mrc --l1's. */
    lct_policy_kind l1_policy;
} lct_replay_options;

/** Threads a run uses at most. */
#define LCT_REPLAY_MAX_WORKERS 256
/** The histograms' bound on relative error (1/256: a value is reported
 *  as the middle of a bucket 1/128 of its size wide). */
#define LCT_REPLAY_HIST_ERROR (1.0 / 256)

/** A summary of a histogram of durations, in seconds. */
typedef struct lct_replay_dist {
    uint64_t count;
    double total, mean, min, max, p50, p90, p99, p999;
} lct_replay_dist;

/** Errors of one kind: errno's name ("ENOSPC") or a status's text. */
typedef struct lct_replay_error_kind {
    char kind[32];
    uint64_t count;
    char first[160]; /**< the first such error's message */
} lct_replay_error_kind;

#define LCT_REPLAY_ERROR_KINDS 8

/** A per-qualname count of calls that moved no data. */
typedef struct lct_replay_call {
    char qualname[128];
    uint64_t count;
} lct_replay_call;

#define LCT_REPLAY_CALLS 32

/** What a run did. */
typedef struct lct_replay_report {
    double duration;                    /**< seconds, start to drained */
    /** Seconds the reading thread spent reading records and planning
     *  their operations: duration less the time it ran operations itself
     *  (one worker, on its thread), waited for room among those in
     *  flight, slept to a record's due time, or waited for the last
     *  operations.  Near duration: the replay could not go faster than
     *  its reading; far below: the backend (or the pacing) set the pace. */
    double planning;
    lct_replay_dist latency[LCT_REPLAY_KINDS]; /**< successful ops */
    uint64_t errors[LCT_REPLAY_KINDS];  /**< failed ops, per kind */
    uint64_t bytes[LCT_REPLAY_KINDS];   /**< moved by successful ops */
    lct_replay_dist lag;    /**< start - due (paced runs only) */
    bool paced;
    lct_replay_dist causal; /**< waits for the key's operation before */
    uint64_t lookups, hits; /**< lookups that found the key */
    uint64_t kept;          /**< found keys the calls' rules kept, and
                                 loaded: kept / lookups is the backend's
                                 hit ratio under the prefix rule */
    uint64_t chunks, chunks_hit; /**< the chunks of the keys looked up
                                 (per call, from its first to its last);
                                 those before each call's first chunk with
                                 a key not found: chunks_hit / chunks is
                                 the backend's token hit ratio under the
                                 prefix rule, whatever the calls' policy */
    uint64_t calls_skip_l2; /**< prefetch calls with skip_l2: none issued */
    uint64_t calls_sparse;  /**< prefetch calls under a policy not PREFIX */
    uint64_t calls_warm;    /**< prefetch calls in PrefetchMode WARM */
    bool has_l1;            /**< an L1 was in front: */
    lct_l1_stats l1;        /**< what it did */
    uint64_t loads_missing; /**< loads of a key gone since its lookup */
    uint64_t corrupt;       /**< loads whose bytes were not the stored ones */
    uint64_t stores_known, stores_replaced; /**< stores that said whether
                                               the key was there */
    uint64_t fills;         /**< stores made by fill_on_miss */
    uint64_t inflight_max;  /**< the high-water mark */
    uint64_t records;       /**< records read */
    uint64_t records_issued; /**< records that gave operations */
    uint64_t keys_unreadable; /**< records whose keys could not be read */
    uint64_t finish_unreserved; /**< finished keys never reserved */
    uint64_t reserved_unfinished; /**< reserved keys never finished */
    uint64_t unsized;       /**< keys of no known size (stored as 0 bytes) */
    uint64_t clamped;       /**< keys over 1 GiB (layout bytes, times the
                                 scale): stored as 1 GiB */
    lct_replay_call calls[LCT_REPLAY_CALLS]; /**< counted, not issued */
    unsigned ncalls;
    uint64_t calls_other;   /**< past LCT_REPLAY_CALLS qualnames */
    lct_replay_error_kind error_kinds[LCT_REPLAY_ERROR_KINDS];
    unsigned nerror_kinds;
    uint64_t errors_other;  /**< of kinds past LCT_REPLAY_ERROR_KINDS */
    bool partial;           /**< stopped early (stop flag, max_errors or a
                                 stall) */
    bool too_many_errors;
    bool stalled;           /**< nothing answered for options.stall s */
    unsigned workers;       /**< threads used */
    lct_stats read;         /**< the reader's: skipped frames, a cut tail */
} lct_replay_report;

/**
 * Replay every record of @p reader against an open backend (@p state from
 * ops->open with the same workers).  Fills *report even when the run
 * failed part-way (backend errors are counted there, not returned).
 * @return LCT_OK; LCT_ERR_NOMEM, LCT_ERR_SYS (a thread did not start),
 *         LCT_ERR_INVALID.
 */
lct_status lct_replay_run(lct_reader *reader, const lct_backend_ops *ops,
                          void *state, const lct_replay_options *opts,
                          lct_replay_report *report, lct_error *err);

/**
 * lct_replay_run over several traces on one timeline: the merge's records
 * in its order, paced by t_wall less the first record's (the merge is
 * given LCT_MERGE_TIMELINE's reading whether made with it or not);
 * report->read sums the readers'.
 */
lct_status lct_replay_run_merge(lct_merge *merge, const lct_backend_ops *ops,
                                void *state,
                                const lct_replay_options *opts,
                                lct_replay_report *report, lct_error *err);

/** The workers a run with @p opts uses (what to open the backend for). */
unsigned lct_replay_workers(const lct_replay_options *opts);

/** The most a value weighs in a run: a heavier key is stored at this. */
#define LCT_REPLAY_MAX_VALUE_BYTES (UINT64_C(1) << 30)

/**
 * What a key of @p layout_bytes weighs in a run with @p opts: value_bytes
 * when set, else its layout bytes (times scale when set, rounded, at
 * least 1), at most LCT_REPLAY_MAX_VALUE_BYTES (@p clamped, may be NULL,
 * says it was cut to that); 0 for a key of no layout and no value_bytes.
 */
uint64_t lct_replay_key_bytes(const lct_replay_options *opts,
                              uint64_t layout_bytes, bool *clamped);

/* MARK: - Replaying an L2-level trace */

/*
 * An L2-level trace (header level "l2": LMCache's l2-tracing fork,
 * `daegyu94/LMCache` branch `priv/dg/l2-tracing`, its L2TraceRecorder)
 * records what the storage manager asked of its L2 adapters.
 * lct_l2_replay_run replays one source adapter's submissions against a
 * backend as the fork's replay driver (trace/l2_driver.py) does:
 *
 *   - the trace must have exactly one footer (l2.trace.end) and its drop
 *     counts must be 0, else it is refused (it is incomplete);
 *   - the first ceil(N * trace_percent / 100) submissions are replayed,
 *     each due at start + (t_mono - the first one's) / speed and
 *     submitted then, or when its dependencies have completed, whichever
 *     is later; pending submissions are looked at in due order (trace
 *     order for equal times), and one that is not ready does not hold
 *     back those after it;
 *   - dependencies: a lookup waits for, per key it hit, the latest
 *     successful store of that key that completed before the lookup was
 *     submitted (a store completing while the lookup was in flight is not
 *     one); a load waits for its request's lookups; an unlock for its
 *     request's loads, or its lookups when there was no load;
 *   - a store writes each key (its object_sizes, or value_bytes), a lookup
 *     asks for each key, a load reads each key, a delete removes each; an
 *     unlock touches nothing (the backends hold no locks);
 *   - each store, lookup and load is compared with the source's outcome
 *     (a store's success, the hit_indices, the success_indices): a
 *     mismatch is counted and sampled, never a failure;
 *   - with prepare, the objects whose first selected lookup hit without a
 *     store completed before it are stored first (the fork's --prepare-l2).
 */

/** The operations of an L2-level trace. */
typedef enum lct_l2_op {
    LCT_L2_STORE = 0,
    LCT_L2_LOOKUP,
    LCT_L2_LOAD,
    LCT_L2_UNLOCK,
    LCT_L2_DELETE,
    LCT_L2_OPS
} lct_l2_op;

/** "store", "lookup_task", "load_task", "unlock", "delete": the fork's
 *  names (the report's keys). */
const char *lct_l2_op_name(lct_l2_op op);
/** The operation an L2 event's qualname names ("l2.load_task.completed":
 *  LCT_L2_LOAD, *completed true; "...submitted": false), or -1 for any
 *  other qualname (the footer, l2.trace.end, included). */
int lct_l2_event(lct_str qualname, bool *completed);

/** How lct_l2_replay_run replays. */
typedef struct lct_l2_replay_options {
    double speed;          /**< 1 as recorded, 2 twice as fast, 0 flat out */
    double trace_percent;  /**< in (0, 100]; 0 is 100 */
    /** The source adapter replayed (its adapter_index); -1: the trace's
     *  only one (a trace of several is refused). */
    int64_t adapter;
    bool prepare;          /**< store the objects hits need first */
    bool prepare_only;     /**< and only that */
    unsigned workers;      /**< tasks in flight at most (0: 4); the
                                backend is opened for this many */
    uint64_t value_bytes;  /**< non-zero: every object weighs this */
    double drain_timeout;  /**< seconds without progress before the run
                                gives up (0: 60) */
    const volatile int *stop; /**< as lct_replay_options.stop; a task
                                   under way stops between its keys */
    uint64_t max_errors;   /**< stop issuing once this many key operations
                                failed (0: never) */
    /** Seconds in which tasks are out, or have failed, and no key
     *  operation succeeds, after which the backend counts as stalled and
     *  the run ends as on *stop, with report.stalled (0: never). */
    double stall;
    /** Called from the dispatching thread at most every 10 s while the
     *  failed key operations grow, with their count. */
    void (*on_errors)(void *ctx, uint64_t errors);
    void *on_errors_ctx;
} lct_l2_replay_options;

/** One side of the fork's latency statistics: read (loads) or write
 *  (stores), latencies in microseconds rounded, percentiles interpolated
 *  as its L2LatencyStatsSubscriber computes them. */
typedef struct lct_l2_replay_side {
    uint64_t submitted, completed, total_bytes;
    double mean_us, p50_us, p90_us, p99_us, min_us, max_us;
    double throughput_gbps; /**< total_bytes / (the latencies' sum in us x
                                 1000): the fork's aggregate_throughput */
} lct_l2_replay_side;

/** Mismatches sampled at most (the fork keeps 10). */
#define LCT_L2_SAMPLES 10

/** What an L2 replay did. */
typedef struct lct_l2_replay_report {
    lct_l2_replay_side read, write;
    uint64_t source_operations_total, operations_selected;
    uint64_t submitted[LCT_L2_OPS];        /**< operations given out */
    uint64_t bytes_submitted[LCT_L2_OPS];  /**< stores' and loads' */
    uint64_t total_bytes_submitted;
    double source_window, actual_window;   /**< seconds: the source's
                                                submissions' span / speed,
                                                and the replay's */
    double total_seconds, drain_seconds;   /**< the run, and from the last
                                                submission to the end */
    double lag_max, lag_mean;              /**< schedule lag, seconds */
    double dependency_wait_max, dependency_wait_total;
    double throughput;                     /**< total bytes / total_seconds */
    uint64_t compared[LCT_L2_OPS];         /**< outcomes compared */
    uint64_t mismatched[LCT_L2_OPS];
    uint64_t mismatches;
    char samples[LCT_L2_SAMPLES][48];      /**< "lookup_task:(0, 17)" */
    unsigned nsamples;
    uint64_t backend_errors;               /**< key operations that failed */
    char first_error[160];
    uint64_t prepared_objects, prepared_bytes;
    double prepare_seconds;
    bool prepared;
    bool partial;                          /**< stopped, or gave up */
    bool too_many_errors;                  /**< stopped at max_errors */
    bool stalled;                          /**< stopped: nothing succeeded
                                                for options.stall s */
} lct_l2_replay_report;

/**
 * Replay an L2-level trace's submissions (of opts->adapter) against an
 * open backend (@p state from ops->open for opts->workers workers).
 * Fills *report even when the run stopped early.
 * @return LCT_OK; LCT_ERR_INVALID (not an L2-level trace, its footer
 *         missing, repeated or dropping, several adapters and none chosen,
 *         bad options: err says which), LCT_ERR_NOMEM, LCT_ERR_SYS.
 */
lct_status lct_l2_replay_run(lct_reader *reader, const lct_backend_ops *ops,
                             void *state, const lct_l2_replay_options *opts,
                             lct_l2_replay_report *report, lct_error *err);

#ifdef __cplusplus
}
#endif

#endif /* LCT_REPLAY_H */
