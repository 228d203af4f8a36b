/*
 * lct_cache.h - cache questions answered from a trace's keys: key
 * reference streams (lct_refs), LRU miss-ratio curves for every capacity
 * at once (exact, streamed as references arrive, or SHARDS-sampled; per
 * key or by LMCache's prefix rule; in keys and in bytes), a call's keys
 * folded chunk by chunk, LMCache's cache simulator at one capacity
 * (lct_sim, its report number for number), and two tiers (the stream an
 * L2 sees behind an L1).  The layer lib/lmcache (docs/architecture.md),
 * second half; docs/cache.md explains the numbers.
 *
 * Lifetimes: a stream, curve, fold or simulation owns its memory until
 * its _free; it keeps ids and sizes, never views of the trace, so it may
 * outlive the reader its keys came from.  Memory grows with the keys (or
 * the references, for a gathered lct_refs), as each type says.
 *
 * Threads: each lct_refs, lct_mrc, lct_mrc_stream, lct_call_fold or
 * lct_sim is used by one thread at a time.  Computing a curve may start
 * threads of its own (numbering keys on every CPU; a stream's pass on a
 * second thread), which end before the call that started them returns
 * or, for a stream, at its finish or free.
 */
#ifndef LCT_CACHE_H
#define LCT_CACHE_H

#include "lct_lmcache.h"

#ifdef __cplusplus
extern "C" {
#endif

/* MARK: - Key reference streams and miss-ratio curves */

/**
 * The calls whose keys make the key stream unless told otherwise (`lct
 * keys`, `lct mrc`, the `lct_keys` SQL table): the keys of a
 * `...StorageManager.submit_prefetch_task` call are reads (lookups), of a
 * `...StorageManager.reserve_write` call writes.  A qualname names one of
 * them when it equals it or ends in "." and it.
 */
#define LCT_KEYS_READ_CALL "submit_prefetch_task"
#define LCT_KEYS_WRITE_CALL "reserve_write"
/** In an L2-level trace (header level "l2", LMCache's l2-tracing fork)
 *  the adapter's lookups are the reads and its stores the writes. */
#define LCT_KEYS_L2_READ_CALL "l2.lookup_task.submitted"
#define LCT_KEYS_L2_WRITE_CALL "l2.store.submitted"

/**
 * An L2-level event's operation, as `lct keys` and the lct_keys SQL table
 * name a key's op: "store", "lookup", "load", "unlock" or "delete" for
 * "l2.store.submitted" ... "l2.delete.submitted"; NULL for any other
 * qualname.
 */
const char *lct_l2_key_op(lct_str qualname);

/**
 * Whether @p pattern names the call @p qualname: a shell glob (fnmatch,
 * when it holds * ? or [) matches the whole qualname; any other pattern
 * is the exact qualname or a suffix after a dot (`reserve_write` names
 * `...StorageManager.reserve_write`).  As `lct --qualname`, `--read` and
 * `--write` and the lct_keys SQL table take them.  A NULL pattern names
 * nothing.
 */
bool lct_qualname_match(lct_str qualname, const char *pattern);

/**
 * A key reference stream: one entry per cache access (a key read or
 * written), in trace order, as `lct keys` makes it from records.  About
 * 24 bytes per reference; appending grows it (amortised, not per record).
 */
typedef struct lct_refs lct_refs;

lct_status lct_refs_new(lct_refs **out);
void lct_refs_free(lct_refs *refs);

/**
 * Append a reference: the key's id (lct_object_key_hash), what it weighs
 * in bytes (0: unknown), when (t_mono), and whether it is a read (a cache
 * lookup) or a write (a store).
 * @return LCT_OK, LCT_ERR_NOMEM, LCT_ERR_INVALID.
 */
lct_status lct_refs_add(lct_refs *refs, uint64_t obj_id, uint64_t bytes,
                        double t_mono, bool is_read);

/**
 * The references added since the last call of this (or since the stream
 * began) are the keys of one call, in the order the call lists them: what
 * the prefix rule of lct_mrc_options.prefix counts over.  Every
 * @p keys_per_position keys of the call are one chunk position (its kv
 * ranks and object groups: a position's tokens count as hit only when all
 * its keys do; a last, shorter run is a position too).  Streams whose
 * calls are not ended are one call as far as the prefix rule goes.
 * @return LCT_OK, LCT_ERR_INVALID (no stream, keys_per_position 0).
 */
lct_status lct_refs_end_call(lct_refs *refs, unsigned keys_per_position);

/** Kv ranks a call may have that lct_kv_ranks tells apart. */
#define LCT_KV_RANKS_MAX 64

/** A call's distinct kv ranks, noted as its keys come: lct_kv_ranks_count
 *  is the keys_per_position that lct_refs_end_call and lct_sim_end_call
 *  take (a chunk position is a key per kv rank).  Start each call from
 *  {0}; ranks past LCT_KV_RANKS_MAX distinct ones are not counted. */
typedef struct lct_kv_ranks {
    int64_t rank[LCT_KV_RANKS_MAX];
    unsigned n;
} lct_kv_ranks;
void lct_kv_ranks_add(lct_kv_ranks *ranks, int64_t kv_rank);
/** The distinct ranks noted, or 1 when none were. */
unsigned lct_kv_ranks_count(const lct_kv_ranks *ranks);

/** Rows (kv rank, object group) a call may have that lct_chunk_rows
 *  tells apart; keys of rows past them share one count. */
#define LCT_CHUNK_ROWS 256

/**
 * A call's keys numbered in chunks, as LMCache folds a lookup: a key's
 * chunk is its place among the call's keys of its row (kv rank and
 * object group), so chunk-major flat keys and a task spec's rows, row
 * after row, number alike.  lct_chunk_rows_reset() before each call
 * (about 6 KB; no allocation).
 */
typedef struct lct_chunk_rows {
    int64_t rank[LCT_CHUNK_ROWS], group[LCT_CHUNK_ROWS];
    uint32_t count[LCT_CHUNK_ROWS + 1];
    unsigned n, last;
} lct_chunk_rows;
void lct_chunk_rows_reset(lct_chunk_rows *rows);
/** The chunk (from 0) of the call's next key. */
uint32_t lct_chunk_of(lct_chunk_rows *rows, const lct_object_key *key);
/** The same for a key of this row (a key from lct_key_iter_next_ids). */
uint32_t lct_chunk_of_row(lct_chunk_rows *rows, int64_t kv_rank,
                          int64_t object_group_id);
/** The id LMCache's cache simulator knows a chunk by: its hash alone
 *  (the model, ranks, group and salt left out, as its logs carry one
 *  hash a chunk and its cache keys by that string):
 *  lct_object_key_hash of a key with only this chunk_hash. */
uint64_t lct_chunk_hash_id(lct_bytes chunk_hash);

/**
 * A call's keys folded as LMCache folds a lookup: held until the call
 * ends, then handed to a reference stream (lct_refs, for the prefix
 * rule) or an exact curve chunk after chunk (lct_chunk_of: each chunk's
 * keys in the order added), each chunk one chunk position, so a chunk
 * counts as hit only when all its rows (kv ranks, object groups) are in
 * the leading run, whether the call lists its keys chunk-major or row
 * after row.  Reused call after call; no allocation once it has held
 * the longest call.
 */
typedef struct lct_call_fold lct_call_fold;
typedef struct lct_mrc_stream lct_mrc_stream; /* below */
lct_status lct_call_fold_new(lct_call_fold **out);
void lct_call_fold_free(lct_call_fold *fold);
/** A key of the call under way (its id is lct_object_key_hash). */
lct_status lct_call_fold_add(lct_call_fold *fold, const lct_object_key *key,
                             uint64_t bytes, double t_mono, bool is_read);
/** The same for a key from lct_key_iter_next_ids (its id, bytes and
 *  row as they are). */
lct_status lct_call_fold_add_id(lct_call_fold *fold, const lct_key_id *key,
                                double t_mono, bool is_read);
/** The call's keys into @p refs as one ended call (lct_refs_end_call's
 *  flags, a position a chunk); the fold is then empty. */
lct_status lct_call_fold_to_refs(lct_call_fold *fold, lct_refs *refs);
/** The same into an exact curve fed as it goes (lct_mrc_stream_add and
 *  lct_mrc_stream_end_call). */
lct_status lct_call_fold_to_stream(lct_call_fold *fold, lct_mrc_stream *s);

/**
 * Gather for SHARDS curves only (before the first lct_refs_add): from now
 * on a reference is kept only when one of @p samples samples at @p rate,
 * salted @p seed to seed + samples - 1 (lct_mrc_options), keeps its key;
 * the others are counted, so lct_mrc_compute_with at that rate and those
 * seeds gives the curves the whole stream gives, in memory in proportion
 * to the rate.  Such a stream holds only sampled keys: not for
 * lct_refs_write_oracle_general.  lct_refs_append joins only streams
 * gathered alike.
 * @return LCT_OK, LCT_ERR_INVALID (a rate outside (0, 1], no samples,
 *         or references already added), LCT_ERR_NOMEM.
 */
lct_status lct_refs_sample(lct_refs *refs, double rate, uint64_t seed,
                           unsigned samples);

/** References kept so far (lct_refs_sample: the sampled ones). */
uint64_t lct_refs_count(const lct_refs *refs);

/**
 * Move every reference of @p src to the end of @p dst, in order (joining
 * streams gathered by threads over consecutive parts of a trace); @p src
 * is left empty.  Nothing is copied: @p dst takes over @p src's memory,
 * in O(1) a thread's part.
 * @return LCT_OK, LCT_ERR_NOMEM (both unchanged), LCT_ERR_INVALID (also
 *         for streams gathered with different lct_refs_sample).
 */
lct_status lct_refs_append(lct_refs *dst, lct_refs *src);

/**
 * Write the stream in libCacheSim's oracleGeneral binary format: 24
 * packed little-endian bytes per reference, `uint32 timestamp` (whole
 * seconds of t_mono, clamped to 0..2^32-1), `uint64 obj_id`, `uint32
 * obj_size` (bytes, saturated), `int64 next_access_vtime` (the position
 * of the next reference to the same id counted from 1, as libCacheSim's
 * traceConv numbers requests, -1 if none: in A, B, A the first A's is 3).
 * Reads and writes alike.  A reference that carries no size gets its
 * key's: the latest size before it, else the first after it (the size
 * lct_mrc_compute uses); 1 only when no reference of the key has one:
 * how many were, in @p unsized (NULL: not wanted) when all was written.
 * Memory besides the stream: 4 bytes a reference and a map of the keys
 * (16 bytes a slot) when every reference has a size; else 8 bytes a
 * reference and 20 a key.
 * @return LCT_OK, LCT_ERR_NOMEM, LCT_ERR_SYS (the sink stopped).
 */
lct_status lct_refs_write_oracle_general(const lct_refs *refs,
                                         lct_write_fn write, void *ctx,
                                         uint64_t *unsized, lct_error *err);

/** References whose key no reference gives a size (written as 1 byte by
 *  lct_refs_write_oracle_general); UINT64_MAX if memory ran out. */
uint64_t lct_refs_count_unsized(const lct_refs *refs);

/**
 * LRU miss-ratio curves of a reference stream, every capacity at once
 * (Mattson's stack distances, O(n log n) with a Fenwick tree over
 * positions): every reference makes its key the most recent; a read hits
 * at capacity C keys when its key is among the C most recently used
 * distinct keys, and at capacity B bytes when its own size plus the sizes
 * of the distinct keys used since its last reference fit in B (a key
 * weighs what its latest reference that gave a size said).  Writes are never hits or
 * misses.
 */
typedef struct lct_mrc lct_mrc;

/** What a curve was computed over.  Under sampling, counts are of the
 *  references kept, and `scaled` ones estimate the whole stream. */
typedef struct lct_mrc_totals {
    /** references kept: requests (reads, or every reference with
     *  every_reference) and the rest, which only warm the cache */
    uint64_t reads, writes;
    uint64_t distinct_keys;      /**< kept */
    uint64_t compulsory_misses;  /**< reads of a key never referenced before */
    double infinite_hit_ratio;   /**< hit ratio of an unbounded cache */
    double sample_rate;          /**< 1: exact */
    uint64_t bytes_unknown;      /**< kept references that weigh 0 */
    uint64_t min_key_bytes;      /**< the least and the most a kept */
    uint64_t max_key_bytes;      /**< reference weighed (0: none known) */
    double mean_key_bytes;       /**< over distinct keys, at their last size */
    bool every_reference;        /**< writes were requests too */
    uint64_t seed;               /**< the SHARDS salt (0: the raw id) */
    uint64_t references;         /**< in the stream */
    uint64_t kept_references;    /**< in the sample (all when exact);
                                      sample_rate x references expected */
    double adjustment;           /**< SHARDS-adj: expected kept requests
                                      minus kept requests, counted as hits
                                      at distance 0 (0 when exact) */
    bool prefix;                 /**< counted by the prefix rule */
    uint64_t calls;              /**< prefix: calls with requests */
    uint64_t positions;          /**< prefix: their chunk positions */
} lct_mrc_totals;

/** How lct_mrc_compute_with() counts. */
typedef struct lct_mrc_options {
    /** (0, 1]: SHARDS spatial sampling at this rate; 0 or 1: exact. */
    double sample_rate;
    /** Count every reference as a request, writes too, as libCacheSim's
     *  cachesim counts every line of a trace; false (the default): reads
     *  are requests and writes only warm the cache, the question a
     *  prefetching cache asks. */
    bool every_reference;
    /** Salt for the sample: the key id is mixed with it, so each seed
     *  draws an independent sample and the same seed the same one.  0:
     *  the raw id, as before seeds existed. */
    uint64_t seed;
    /** Count by the prefix rule (LMCache's StorageManager: a lookup keeps
     *  only the leading run of found keys): a request hits at capacity C
     *  only when it and every key before it in its call (lct_refs_end_call)
     *  are among the C most recent, i.e. the running maximum of the call's
     *  stack distances up to it is below C; in bytes alike.  Every
     *  reference still updates the cache in order, so this is one stack
     *  pass.  Exact streams only (sampling keeps some keys of a call). */
    bool prefix;
} lct_mrc_options;

/**
 * Compute the curves.  @p sample_rate 1 is exact; below 1, SHARDS spatial
 * sampling keeps a key when its id (taken as a uniform 64-bit number)
 * falls under sample_rate * 2^64 and scales distances by 1 / sample_rate,
 * with SHARDS-adj: the difference between rate x all reads and the reads
 * kept counts as hits (or is taken off) at distance 0, which corrects
 * hot keys that fell in or out of the sample.  Capacities below
 * 1 / sample_rate keys are not resolved.  Ids should be well mixed
 * (lct_object_key_hash's are).
 * @return LCT_OK, LCT_ERR_NOMEM, LCT_ERR_INVALID (a rate outside (0, 1]).
 */
lct_status lct_mrc_compute(const lct_refs *refs, double sample_rate,
                           lct_mrc **out, lct_error *err);

/** lct_mrc_compute() with options.  @return as lct_mrc_compute(). */
lct_status lct_mrc_compute_with(const lct_refs *refs,
                                const lct_mrc_options *opts, lct_mrc **out,
                                lct_error *err);

/**
 * An exact curve computed as references arrive, without gathering them:
 * memory grows with the distinct keys, not the references (about 100
 * bytes a key with one key size; with several, each size below the
 * largest adds a pass as large, up to 15).  With several sizes the byte
 * curve needs every distinct byte distance: a pass keeps up to 256 Ki
 * in memory and writes the rest to an unlinked temporary file in
 * $TMPDIR (else /tmp), and the finished curve reads them from a
 * read-only mapping of it until lct_mrc_free (in memory when no such
 * file can be made or a write to it fails: the curve is the same).  The
 * curve equals lct_mrc_compute_with's over the same references with the
 * same options, which must be exact (sample_rate 0 or 1).  Not for
 * several threads at once; it runs its pass on a thread of its own
 * (when the process may run on a second CPU), fed blocks of references,
 * until lct_mrc_stream_finish or lct_mrc_stream_free.
 */
typedef struct lct_mrc_stream lct_mrc_stream;

/** @return LCT_OK, LCT_ERR_NOMEM, LCT_ERR_INVALID (sampling asked). */
lct_status lct_mrc_stream_new(const lct_mrc_options *opts,
                              lct_mrc_stream **out, lct_error *err);
/** As lct_refs_add (no t_mono: a curve does not need it).
 *  @return LCT_OK, LCT_ERR_NOMEM (the stream then refuses the rest). */
lct_status lct_mrc_stream_add(lct_mrc_stream *s, uint64_t obj_id,
                              uint64_t bytes, bool is_read);
/** As lct_refs_end_call.  Under the prefix rule a call's references are
 *  held until it ends.  @return as lct_mrc_stream_add. */
lct_status lct_mrc_stream_end_call(lct_mrc_stream *s,
                                   unsigned keys_per_position);
/** The curve of everything added (once; the stream takes no more).
 *  @return LCT_OK, LCT_ERR_NOMEM, LCT_ERR_INVALID. */
lct_status lct_mrc_stream_finish(lct_mrc_stream *s, lct_mrc **out,
                                 lct_error *err);
void lct_mrc_stream_free(lct_mrc_stream *s);

void lct_mrc_totals_get(const lct_mrc *mrc, lct_mrc_totals *out);

/** Hit ratio of an LRU cache of @p keys keys (0 when there are no reads). */
double lct_mrc_hit_ratio(const lct_mrc *mrc, uint64_t keys);

/** Hit ratio of an LRU cache of @p bytes bytes.  A key heavier than the
 *  cache is not inserted (it bypasses it, as libCacheSim's LRU does);
 *  exact at every capacity when keys have at most 16 distinct sizes (one
 *  more pass in lct_mrc_compute for each size below the largest), else
 *  counted as if heavier keys filled the cache below the largest size.
 *  A lookup finds a key at the size it was held with; the reference then
 *  makes it weigh its new size. */
double lct_mrc_byte_hit_ratio(const lct_mrc *mrc, uint64_t bytes);

/** Under the prefix rule, the share of the calls' chunk positions whose
 *  keys all hit at @p keys keys: the token hit ratio (0 without
 *  positions; a chunk position is chunk_size tokens). */
double lct_mrc_position_hit_ratio(const lct_mrc *mrc, uint64_t keys);

/** Under the prefix rule, the token hit ratio of an LRU cache of
 *  @p bytes bytes: the share of chunk positions whose call's keys up to
 *  and through them all hit there, as lct_mrc_byte_hit_ratio finds a
 *  key (a key heavier than the cache bypasses it, and ends its call's
 *  hits).  Equals lct_mrc_position_hit_ratio at bytes / size keys when
 *  every key weighs one size; 0 without positions. */
double lct_mrc_position_byte_hit_ratio(const lct_mrc *mrc, uint64_t bytes);

/** The largest finite stack distance of a read, in keys (scaled under
 *  sampling): capacities above it hit what an infinite cache hits. */
uint64_t lct_mrc_max_distance(const lct_mrc *mrc);

/** The ratios of a curve a capacity can be asked for. */
typedef enum lct_mrc_measure {
    LCT_MRC_HIT = 1,      /**< lct_mrc_hit_ratio, capacity in keys */
    LCT_MRC_BYTE_HIT,     /**< lct_mrc_byte_hit_ratio, in bytes */
    LCT_MRC_POSITION_HIT, /**< lct_mrc_position_hit_ratio, in keys */
    LCT_MRC_POSITION_BYTE_HIT, /**< lct_mrc_position_byte_hit_ratio, in
                                    bytes */
} lct_mrc_measure;

/**
 * The smallest capacity at which @p what reaches @p target (0 < target
 * <= 1): the least c with ratio(c) >= target, as the same function
 * reports it, so the table and the answer agree to the bit.  Found by
 * bisection over the curve's cumulative counts, which never fall as the
 * capacity grows (for bytes, within each range of capacities where the
 * same keys fit; the ranges are searched from the smallest), so it is
 * exact, not a simulation's estimate.
 * @return the capacity, or 0 when no capacity reaches the target (it is
 *         above the infinite cache's ratio, or out of range, or
 *         a token measure of a curve not counted by the prefix
 *         rule).
 */
uint64_t lct_mrc_capacity_for(const lct_mrc *mrc, lct_mrc_measure what,
                              double target);

void lct_mrc_free(lct_mrc *mrc);

/**
 * The points of a curve as `lct mrc` prints and draws them, over one or
 * several samples of one stream (the same stream, seeds s, s+1, ...):
 * capacities 1, 2, 3, 4, 6, 8, 11, ... keys (x sqrt 2; from 1/R under
 * SHARDS at rate R, the least a sample resolves) up to past every
 * sample's largest finite distance; at each the mean hit ratio over the
 * samples (added smallest first, so every caller gets the same bits),
 * their least and most, and when key sizes differ the byte hit ratio at
 * keys x the mean key size.  No requests: no points.
 */
typedef struct lct_mrc_curve {
    size_t n;
    uint64_t *keys;            /**< capacities in keys, ascending */
    double *hit;               /**< mean hit ratio at keys[i] */
    double *byte_hit;          /**< at keys[i] x mean_bytes, or NULL */
    /** Under the prefix rule, when key sizes differ: the token hit ratio
     *  (lct_mrc_position_byte_hit_ratio) at keys[i] x mean_bytes, else
     *  NULL. */
    double *token_byte_hit;
    double *hit_min, *hit_max; /**< the samples' band (k > 1), or NULL */
    double mean_bytes;         /**< the first sample's mean key size; 0 unknown */
    double lo, hi;             /**< the capacity range to draw */
} lct_mrc_curve;

/** The most samples a curve is made of. */
#define LCT_MRC_CURVE_MAX_SAMPLES 64

/**
 * Fill @p out from @p k (1 to LCT_MRC_CURVE_MAX_SAMPLES) curves.  Free it with
 * lct_mrc_curve_free().
 * @return LCT_OK, LCT_ERR_INVALID, LCT_ERR_NOMEM (out is then empty).
 */
lct_status lct_mrc_curve_make(lct_mrc *const *samples, unsigned k,
                              lct_mrc_curve *out, lct_error *err);
void lct_mrc_curve_free(lct_mrc_curve *curve);


/* MARK: - Eviction policies, one capacity at a time */

/**
 * The policies lct_policy simulates, each as libCacheSim's implementation
 * of that name behaves (its cachesim with that algorithm and default
 * parameters, tie for tie):
 * - FIFO: the oldest insertion goes; a hit changes nothing.
 * - LRU: the least recently used goes.
 * - CLOCK: a 1-bit counter set by a hit; the oldest goes, unless its bit
 *   is set: then the bit is cleared and it is reinserted as the newest.
 * - SIEVE: a hit sets a bit; a hand walks from the oldest toward the
 *   newest (round to the oldest again), clearing bits, and evicts the
 *   first key without one, then waits at the key newer than it.
 * - LFU: the fewest hits since insertion (counted from 1) go; of those,
 *   the key that reached that count first.
 * - ARC: T1 (seen once) and T2 (seen again) hold keys, B1 and B2
 *   remember the keys each evicted, and T1's target moves toward the
 *   list whose ghost is found, all in bytes (libCacheSim's variant for
 *   sizes: lib/lmcache/policy_arc.c says where it differs).
 * - S3-FIFO: a small FIFO of a tenth of the capacity, a main FIFO of
 *   the rest and a ghost FIFO of nine tenths; a key hit twice in the
 *   small queue moves to main, a key found among the ghosts enters main
 *   (libCacheSim's defaults; a key that weighs a tenth of the capacity or
 *   more is never held, so under 20 keys nothing is).
 * - Belady: the key whose next use is farthest goes.  Among keys never
 *   used again libCacheSim's binary heap decides, and so does this one,
 *   move for move: in bytes that changes what is held, never a hit.  In
 *   keys no policy hits more often; in bytes it is not the optimum.
 * - MRU: the most recently used goes (libCacheSim's MRU, and LMCache's
 *   older storage backends' cache_policy MRU, which agree).
 *
 * LMCache's own multiprocess-server L1 policies, as its eviction_policy
 * sources define them (lru.py, arc.py, s3fifo.py), driven as the L1
 * drives them.  They differ from the per-key policies above in how
 * eviction happens, not only in whom it picks:
 * - a call's keys act together: at lct_policy_end_call the keys the call
 *   found are touched, then the keys it missed are created (a store
 *   after the lookup), all or none: when they do not fit the L1 refuses
 *   the whole allocation (OUT_OF_MEMORY), as reserve_write does;
 * - eviction is by pressure, not per insertion: once the cache is at or
 *   above the trigger watermark of its capacity (0.8 by default, as
 *   LMCache's EvictionConfig), one cycle asks the policy for
 *   int(held keys * eviction ratio) victims (0.2; at least 1) and deletes
 *   them.  LMCache's controller runs its cycle once a second; here it
 *   runs after each call, so the cache never sits over the watermark
 *   across calls (lct_policy_set_pressure changes both numbers).
 * - LMCACHE_LRU: lru.py.  A call's keys are touched and created last to
 *   first, so the first key of a call is the most recent of it and its
 *   later keys go first.
 * - LMCACHE_ARC: arc.py.  T1/T2 resident, B1/B2 ghosts, its capacity the
 *   most keys ever resident (a count, whatever the keys weigh); a batch
 *   takes from T1 while T1 holds at least int(p), else from T2; keys are
 *   processed last to first as in LRU.
 * - LMCACHE_S3FIFO: s3fifo.py.  New keys enter the small FIFO, a touch
 *   moves a key to main (and refreshes it there); a batch takes the small
 *   queue's oldest, then main's.  Its ghost set never promotes in the L1:
 *   the deletion the eviction causes reports the key removed, which takes
 *   it out of the ghost set in the same cycle, so a key evicted comes
 *   back to the small queue.
 * - LMCACHE_ISOLATED_LRU: isolated_lru.py, as LMCache's L2 eviction
 *   controller drives it with per-cache_salt quotas
 *   (_check_and_evict_by_cache_salt): one LRU order per bucket (a key's
 *   bucket is the one given with lct_policy_get_salted when it is
 *   created; 0 for lct_policy_get), keys touched and created last to
 *   first; after each call every bucket that holds anything and is at
 *   or above watermark x its quota (lct_policy_set_quota) loses
 *   int(its keys x ratio) of its oldest (at least one); a bucket without
 *   a quota loses them all (LMCache's allowlist rule).  The capacity is
 *   the adapter's room, refusing a call's new keys all or none; the
 *   quotas alone evict.
 * lct_policy_run and lct_sim end each call themselves.
 */
typedef enum lct_policy_kind {
    LCT_POLICY_FIFO = 1,
    LCT_POLICY_LRU,
    LCT_POLICY_CLOCK,
    LCT_POLICY_SIEVE,
    LCT_POLICY_LFU,
    LCT_POLICY_ARC,
    LCT_POLICY_S3FIFO,
    LCT_POLICY_BELADY,
    LCT_POLICY_MRU,
    LCT_POLICY_LMCACHE_LRU,
    LCT_POLICY_LMCACHE_ARC,
    LCT_POLICY_LMCACHE_S3FIFO,
    LCT_POLICY_LMCACHE_ISOLATED_LRU,
} lct_policy_kind;

/** The policy's name as `lct` spells it ("fifo", "lru", "clock",
 *  "sieve", "lfu", "arc", "s3fifo", "belady", "mru", "lmcache-lru",
 *  "lmcache-arc", "lmcache-s3fifo", "lmcache-isolated-lru"), or NULL. */
const char *lct_policy_name(lct_policy_kind kind);
/** The policy named @p name (any case).  @return LCT_OK, or
 *  LCT_ERR_INVALID for a name it does not know. */
lct_status lct_policy_find(const char *name, lct_policy_kind *kind);
/** The known names, for a message: "fifo, lru, ...". */
const char *lct_policy_names(void);
/** Whether the policy acts on a call at a time (LMCache's L1 policies):
 *  its references need their calls (lct_policy_end_call; for
 *  lct_policy_run, a stream whose calls were ended, lct_refs_end_call). */
bool lct_policy_by_call(lct_policy_kind kind);

/**
 * One cache of one capacity under one policy, fed one reference at a
 * time.  As in libCacheSim: a key found is a hit (its size stays what it
 * was when inserted); a key missed that weighs more than the capacity is
 * not inserted; otherwise keys are evicted until it fits and it is
 * inserted.  Memory grows with the keys held, not with the references.
 */
typedef struct lct_policy lct_policy;

/** A cache of @p capacity (keys when every reference weighs 1, else
 *  bytes).  @return LCT_OK, LCT_ERR_INVALID (an unknown kind, or a
 *  capacity of 0 or above 2^62), LCT_ERR_NOMEM. */
lct_status lct_policy_new(lct_policy_kind kind, uint64_t capacity,
                          lct_policy **out, lct_error *err);
/**
 * One reference to @p key weighing @p bytes; @p next_use is where the
 * key is referenced next (any count that grows along the stream, such
 * as the oracleGeneral export's next_access_vtime; INT64_MAX for never).
 * Only Belady reads it.
 * @return 1 for a hit, 0 for a miss, LCT_ERR_NOMEM (then every later
 *         call fails too).
 */
int lct_policy_get(lct_policy *policy, uint64_t key, uint64_t bytes,
                   int64_t next_use);
/** lct_policy_get of a key in the bucket @p salt: any 64-bit id of its
 *  cache_salt, the same for the same salt.  Only LMCACHE_ISOLATED_LRU
 *  reads it; lct_policy_get is this with bucket 0. */
int lct_policy_get_salted(lct_policy *policy, uint64_t key, uint64_t bytes,
                          int64_t next_use, uint64_t salt);
/** LMCACHE_ISOLATED_LRU's quota for the bucket @p salt, in the cache's
 *  unit (keys, or bytes), fractions allowed; 0 is none.  @return LCT_OK,
 *  LCT_ERR_INVALID (another policy, or a limit below 0 or past 2^62),
 *  LCT_ERR_NOMEM. */
lct_status lct_policy_set_quota(lct_policy *policy, uint64_t salt,
                                double limit);
/**
 * The end of a call: LMCache's L1 policies apply what the call's
 * references found and missed (see above), then run an eviction cycle
 * when the cache is at its watermark; every other policy ignores it.
 * Call it after each call's last reference.
 * @return LCT_OK, LCT_ERR_NOMEM (then every later call fails too).
 */
int lct_policy_end_call(lct_policy *policy);
/** LMCache's L1 policies' trigger watermark (a fraction of the capacity
 *  at which a cycle runs, in (0, 1]) and eviction ratio (the fraction of
 *  held keys a cycle evicts, in (0, 1]).  @return LCT_OK, or
 *  LCT_ERR_INVALID (out of range, or another policy). */
lct_status lct_policy_set_pressure(lct_policy *policy, double watermark,
                                   double ratio);
/** Keys LMCache's L1 policies refused because the call's new keys did
 *  not fit (0 for the others). */
uint64_t lct_policy_refused(const lct_policy *policy);
/** What the keys held weigh (keys, or bytes). */
uint64_t lct_policy_used(const lct_policy *policy);
/** Whether the cache holds @p key now (a ghost ARC or S3-FIFO only
 *  remembers is not held); nothing changes. */
bool lct_policy_holds(const lct_policy *policy, uint64_t key);
/** Keys inserted so far that the cache no longer holds (evicted). */
uint64_t lct_policy_evictions(const lct_policy *policy);
void lct_policy_free(lct_policy *policy);

/** What lct_policy_run simulates. */
typedef struct lct_policy_run_options {
    const lct_policy_kind *kinds; /**< the policies, nkinds of them */
    size_t nkinds;
    /** Capacities in bytes: each reference weighs its key's size as the
     *  oracleGeneral export gives it (not saturated at 4 GiB); else in
     *  keys, every reference weighing 1. */
    bool in_bytes;
    /** Every reference a request, as libCacheSim's cachesim counts its
     *  trace's lines; else only reads are (writes still go through the
     *  cache, as accesses that are not counted: lct mrc's default). */
    bool every_reference;
    /** Count by the prefix rule (lct_mrc_options.prefix): a request hits
     *  only when it and every request before it in its call did, each
     *  going through the cache in order; the points' positions say how
     *  many chunk positions were counted and hit.  Belady then evicts in
     *  Belady order, which under this rule is not provably optimal. */
    bool prefix;
    unsigned threads; /**< 0: one per usable CPU */
    /** LMCache's L1 policies' trigger watermark and eviction ratio
     *  (lct_policy_set_pressure; 0: 0.8 and 0.2, LMCache's defaults). */
    double watermark, eviction_ratio;
    /** Called after each policy and capacity is done (from any of the
     *  threads, one call at a time), or NULL. */
    void (*progress)(void *ctx, uint64_t done, uint64_t total);
    void *progress_ctx;
} lct_policy_run_options;

/** One policy at one capacity over a stream. */
typedef struct lct_policy_point {
    uint64_t capacity;
    uint64_t requests, hits;        /**< references counted, and hits */
    uint64_t request_bytes, hit_bytes; /**< in_bytes: what they weigh */
    uint64_t positions, positions_hit; /**< prefix: chunk positions */
} lct_policy_point;

/**
 * Each policy of @p opts at each of @p ncap capacities over the whole
 * stream (a reference's next use, for Belady, is its key's next
 * reference): @p out[k * ncap + i] for policy k at capacity i.  Each is
 * one pass with one lct_policy, the passes shared out over threads; a
 * pass's memory is the keys its cache holds and 4 bytes a distinct key
 * (its slot by key number, one array a thread), besides 9 bytes a
 * reference (17 in bytes) worked out once.  LMCache's L1 policies take
 * the stream's calls as they were ended (lct_refs_end_call).  On the
 * stream an lct keys --oracle-general export is made from, with
 * every_reference, the hits
 * equal cachesim's with that algorithm on the export.
 * @return LCT_OK, LCT_ERR_INVALID (an unknown policy, a capacity of 0 or
 *         above 2^62, a SHARDS-sampled stream, one of LMCache's L1
 *         policies on a stream whose calls were not ended), LCT_ERR_NOMEM,
 *         LCT_ERR_SYS
 *         (a thread would not start).
 */
lct_status lct_policy_run(const lct_refs *refs,
                          const lct_policy_run_options *opts,
                          const uint64_t *capacities, size_t ncap,
                          lct_policy_point *out, lct_error *err);

/* MARK: - One capacity simulated: LMCache's cache simulator */

/** A cache_salt's quota under LCT_POLICY_LMCACHE_ISOLATED_LRU (keys, or
 *  bytes with in_bytes); the empty salt is the keys that carry none. */
typedef struct lct_sim_quota {
    lct_str cache_salt;
    uint64_t limit;
} lct_sim_quota;

/**
 * What lct_sim_run simulates: an LRU cache of @p capacity keys, or of
 * @p capacity bytes with @p in_bytes, held as LMCache's simulator holds
 * them: max(1, capacity / the first sized key's bytes) keys, every key
 * counted as one (the report's key_bytes and capacity_keys).
 */
typedef struct lct_sim_options {
    uint64_t capacity;       /**< keys, or bytes with in_bytes; above 0 */
    bool in_bytes;
    unsigned series_points;  /**< the cumulative series' points at most
                                  (0: 100), evenly spaced over the calls */
    uint64_t chunk_tokens;   /**< tokens a chunk holds (0: 1), for the
                                  calls that state none of their own */
    /** Above 0: an LRU L1 of this many keys (bytes with l1_in_bytes) in
     *  front, as lct_refs_behind_l1 models it; the cache simulated is
     *  then the L2 behind it, and the report's l1 says what L1 did. */
    uint64_t l1_capacity;
    bool l1_in_bytes;
    /** The cache's eviction policy (0 is LRU, LMCache's simulator's):
     *  any but LCT_POLICY_BELADY, which needs the stream's future.  The
     *  report's lru_position is still the recency rank. */
    lct_policy_kind policy;
    /** Count every key of a lookup found in the cache as a hit (the
     *  per-key rule, libCacheSim's), not only its leading run. */
    bool per_key;
    /** The L1's eviction policy (0 is LRU), any but LCT_POLICY_BELADY;
     *  in bytes a key of unknown size weighs 1. */
    lct_policy_kind l1_policy;
    /** Above 0: the report's windows, each this many whole seconds of
     *  t_mono from 0 (a lookup falls in the window of its t_mono's
     *  whole seconds, as the stream keeps them). */
    uint32_t window_seconds;
    /** LMCache's L1 policies' trigger watermark and eviction ratio, for
     *  the cache and the L1 (lct_policy_set_pressure; 0: 0.8 and 0.2). */
    double watermark, eviction_ratio;
    /** With policy LCT_POLICY_LMCACHE_ISOLATED_LRU: the salts' quotas
     *  (a salt with none keeps nothing past a call, as in LMCache).  A
     *  key's bucket is the cache_salt of the key lct_sim_add_key gave
     *  when the chunk came first (lct_sim_add: the empty salt); with
     *  in_bytes a quota counts chunks of the first sized key's bytes, as
     *  the capacity does. */
    const lct_sim_quota *quotas;
    size_t nquotas;
} lct_sim_options;

/** The lookups of one window of time (lct_sim_options.window_seconds):
 *  from @p t_start for window_seconds; hit_tokens / tokens is its token
 *  hit rate. */
typedef struct lct_sim_window {
    uint64_t t_start;             /**< whole seconds of t_mono */
    uint64_t calls, tokens, hit_tokens;
} lct_sim_window;

/**
 * A distribution as lct_sim_run reports it: the percentiles are LMCache's
 * nearest rank (the value of rank ceil(p n / 100), counted from 1, of the
 * sorted values), exact: kept as counts of the distinct values; bins[0]
 * counts the zeros and bins[k] the values in [2^(k-1), 2^k), for charts.
 */
typedef struct lct_sim_dist {
    uint64_t count, max;
    double mean;
    uint64_t p25, p50, p75, p90, p99;
    uint64_t bins[65];
} lct_sim_dist;

/** The cumulative hit ratio after @p calls lookups, at @p seconds of
 *  t_mono (whole seconds, as the stream keeps them). */
typedef struct lct_sim_point {
    uint64_t calls;
    double seconds;
    double hit_ratio;
} lct_sim_point;

/** What an L1 did in front of an L2 (lct_refs_behind_l1). */
typedef struct lct_l1_stats {
    uint64_t capacity;            /**< keys, or bytes with in_bytes */
    bool in_bytes;
    uint64_t keys, keys_hit;      /**< lookups' keys; served by L1 */
    uint64_t positions, positions_hit; /**< chunk positions; by L1 */
    uint64_t keys_to_l2;          /**< lookups' keys asked of L2 */
    uint64_t writes;              /**< stores written through to L2 */
    uint64_t evictions, bypassed; /**< L1's */
} lct_l1_stats;

/** An LRU L1 of @p capacity keys (or bytes) in front, before the first
 *  reference, on a stream with options.prefix: the curve is then L2's,
 *  equal to lct_mrc_compute_with's over what lct_refs_behind_l1 gives
 *  (L1 adds about 20 bytes a key).  @return LCT_OK, LCT_ERR_NOMEM,
 *  LCT_ERR_INVALID (no prefix rule, a capacity of 0, references already
 *  added, or an L1 already there). */
lct_status lct_mrc_stream_behind_l1(lct_mrc_stream *s, uint64_t capacity,
                                    bool in_bytes, lct_error *err);
/** What the L1 did, after lct_mrc_stream_finish.  @return LCT_OK,
 *  LCT_ERR_INVALID (no L1, or not finished). */
lct_status lct_mrc_stream_l1_stats(const lct_mrc_stream *s,
                                   lct_l1_stats *out);

/**
 * LMCache's `cache-simulator` report at one capacity, by the prefix rule.
 * A lookup is a read call (lct_refs_end_call); its hits are its leading
 * run of keys the cache holds before the lookup touches it (spans and
 * positions measured then too, as LMCache's simulate() does); a chunk
 * position (the call's keys_per_position keys) is hit when all its keys
 * are in that run; the token hit ratio is hit_tokens / tokens.
 * Every reference, stores too, then makes its key the most recent.
 * Memory: per distinct key, per distinct value of each distribution,
 * and 16 bytes a lookup (its tokens, for Stat 1 and Stat 4).
 */
typedef struct lct_sim_report {
    uint64_t capacity;            /**< as given */
    bool in_bytes;
    uint64_t capacity_keys;       /**< the keys the cache holds (0: a
                                       byte capacity and no key sized) */
    uint64_t key_bytes;           /**< with in_bytes: the first sized
                                       key's bytes (0: none was sized) */
    uint64_t references, distinct_keys;
    double mean_key_bytes;        /**< over distinct keys (0: unknown) */
    uint64_t calls;               /**< lookups with keys */
    uint64_t keys, keys_hit;      /**< looked-up keys; in leading runs */
    uint64_t positions, positions_hit; /**< chunk positions */
    uint64_t tokens, hit_tokens;  /**< LMCache's total and hit tokens: a
                                       lookup's seq_len (else its positions
                                       x chunk_tokens), and its hit
                                       positions x the chunk's tokens */
    uint64_t occupancy_keys, occupancy_bytes; /**< held at the end */
    uint64_t evictions;           /**< keys pushed out to make room */
    uint64_t bypassed;            /**< references too heavy to insert */
    uint64_t refused;             /**< LMCache's L1 policies: keys a call
                                       could not store, for want of room */
    /** Per lookup, positions hit over its positions: how many hit none
     *  and all; the mean and p25, p50, p75, p90, p99 (exact); counts
     *  in 5% bins, the 21st holding exactly 100%. */
    uint64_t calls_no_hit, calls_all_hit;
    double call_hit_mean, call_hit_p[5];
    uint64_t call_hit_bins[21];
    lct_sim_dist leading;         /**< positions hit per lookup */
    lct_sim_dist call_positions;  /**< positions per lookup */
    lct_sim_dist reuse;           /**< hits per key hit at least once */
    lct_sim_dist span;            /**< references since a key's last
                                       reference, at each hit */
    lct_sim_dist lru_position;    /**< the key's LRU position at each hit
                                       (0: the most recent), in the cache
                                       as it was before the lookup */
    double cumulative[5];         /**< the token hit ratio so far after */
    uint64_t cumulative_calls[5]; /**< lookup int(n f), f = 10, 25, 50,
                                       75 and 100% of the n lookups (at
                                       least the first), LMCache's Stat 4 */
    lct_sim_point *series;        /**< evenly spaced over the lookups,
                                       the last one the whole run's */
    size_t nseries;
    lct_sim_window *windows;      /**< with window_seconds: the windows
                                       that had lookups, by time */
    size_t nwindows;
    bool has_l1;                  /**< an L1 was in front: */
    lct_l1_stats l1;              /**< what it did */
} lct_sim_report;

/**
 * A simulation fed a reference at a time, in memory that grows with the
 * distinct entries (about 60 bytes each, 90 with an L1), the distinct
 * values of its statistics, the longest call and 16 bytes a lookup, not
 * with the references: lct_sim_new(), then for each call its keys in
 * order with lct_sim_add() (ids of your choosing) or lct_sim_add_key()
 * (a chunk an entry, as LMCache's simulator) and lct_sim_end_call() (its
 * chunk positions: keys_per_position keys each), then lct_sim_finish()
 * and lct_sim_free().
 */
typedef struct lct_sim lct_sim;

/** @return LCT_OK, LCT_ERR_INVALID (no capacity), LCT_ERR_NOMEM. */
lct_status lct_sim_new(const lct_sim_options *opts, lct_sim **out,
                       lct_error *err);
/** A key of the call under way.  @return LCT_OK, LCT_ERR_NOMEM. */
lct_status lct_sim_add(lct_sim *sim, uint64_t obj_id, uint64_t bytes,
                       double t_mono, bool is_read);
/**
 * A key of the call under way as LMCache's simulator sees it: each chunk
 * of the call (lct_chunk_of) is one entry, known by its hash alone
 * (lct_chunk_hash_id, of its first key met), weighing @p bytes; the
 * call's other keys of that chunk (its other ranks and groups) add
 * nothing.  End such a call with lct_sim_end_call(sim, 1).
 * @return LCT_OK, LCT_ERR_NOMEM, LCT_ERR_INVALID (no sim or key).
 */
lct_status lct_sim_add_key(lct_sim *sim, const lct_object_key *key,
                           uint64_t bytes, double t_mono, bool is_read);
/**
 * lct_sim_end_call for a lookup whose tokens LMCache's lookup-hash log
 * states: @p seq_len tokens (a last, partial chunk's tail included,
 * always a miss), @p chunk_tokens a chunk (the log's chunk_size), as
 * simulate() counts them; a lookup with no key but tokens is a request
 * too, all missed (LMCache skips one with neither).
 * @return LCT_OK, LCT_ERR_INVALID (keys_per_position 0), LCT_ERR_NOMEM.
 */
lct_status lct_sim_end_call_tokens(lct_sim *sim, unsigned keys_per_position,
                                   uint64_t chunk_tokens, uint64_t seq_len);
/**
 * The tokens a lookup record states, as `lct import lookup-logs` writes
 * LMCache's logged events: its args' int seq_len and chunk_size (a
 * missing chunk_size is 1, as simulate() takes it), read among the
 * args' leading pairs named seq_len, chunk_size and kv_bytes_per_chunk
 * (the import writes them first; a recorded call costs one compare).
 * @return true when the record has a seq_len.
 */
bool lct_lookup_tokens(const lct_record *rec, uint64_t *seq_len,
                       uint64_t *chunk_tokens);
/**
 * The bytes a chunk of a lookup record weighs by LMCache's simulator's
 * own dtype table (compute_kv_bytes_per_chunk: a dtype outside it counts
 * 0), as `lct import lookup-logs` keeps it in the args'
 * kv_bytes_per_chunk.  @return true when the record has it.
 */
bool lct_lookup_chunk_bytes(const lct_record *rec, uint64_t *bytes);
/** The call's keys are all added: simulate them.
 *  @return LCT_OK, LCT_ERR_INVALID (keys_per_position 0), LCT_ERR_NOMEM. */
lct_status lct_sim_end_call(lct_sim *sim, unsigned keys_per_position);
/** The report (a call still open is ended first); free its series and
 *  windows with lct_sim_report_free().  @return LCT_OK, LCT_ERR_NOMEM. */
lct_status lct_sim_finish(lct_sim *sim, lct_sim_report *out,
                          lct_error *err);
void lct_sim_free(lct_sim *sim);

/**
 * lct_sim_new and lct_sim_finish over a whole stream whose calls were
 * ended with lct_refs_end_call (not a sampled stream).
 * @return LCT_OK, LCT_ERR_INVALID, LCT_ERR_NOMEM.
 */
lct_status lct_sim_run(const lct_refs *refs, const lct_sim_options *opts,
                       lct_sim_report *out, lct_error *err);
void lct_sim_report_free(lct_sim_report *report);


/* MARK: - Two tiers: the stream an L2 behind an L1 sees */


/**
 * The stream an L2 sees behind an LRU L1 of @p capacity keys (bytes with
 * @p in_bytes), as LMCache's StorageManager tiers them: a lookup (a read
 * call, lct_refs_end_call) is served by L1 for its leading run of keys in
 * L1, and the call's keys from L1's first miss on are asked of L2, as one
 * call of @p l2 (chunk positions kept), whose own leading run continues
 * the prefix; every store is written through to L2 (LMCache's store path
 * writes L1 and its L2 adapters); every reference makes its key L1's most
 * recent.  The prefix curve of @p l2 (lct_mrc_options.prefix) is then
 * L2's over L2 capacities, and both tiers' hits at (L1, C2) are
 * st->keys_hit plus L2's at C2 (positions alike).
 * @return LCT_OK, LCT_ERR_INVALID (a sampled stream, a non-empty @p l2,
 *         a capacity of 0), LCT_ERR_NOMEM.
 */
lct_status lct_refs_behind_l1(const lct_refs *refs, uint64_t capacity,
                              bool in_bytes, lct_refs *l2, lct_l1_stats *st,
                              lct_error *err);

#ifdef __cplusplus
}
#endif

#endif /* LCT_CACHE_H */
