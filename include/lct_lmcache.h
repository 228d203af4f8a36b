/*
 * lct_lmcache.h - LMCache's argument types, read from a record's args
 * without copying: its codec wrapper, ObjectKey, MemoryLayoutDesc,
 * PrefetchTaskSpec and the rest as structs of views; the key hash (the
 * 64-bit id of a key); which calls a qualname pattern names; and the key
 * iterator over every key a call carries.  The layer lib/lmcache
 * (docs/architecture.md), first half; the curves are lct_cache.h.
 *
 * Lifetimes: every struct filled here is views into the record it was
 * read from and lives as that record's views do (lct_read.h).
 *
 * Threads: the accessors keep no state.  The key iterator keeps, per
 * thread, the last few layouts and walked argument values it decoded, by
 * their bytes, and uses one only when the bytes match exactly, so what
 * was read before never changes an answer; iterators themselves are
 * used by one thread at a time.
 */
#ifndef LCT_LMCACHE_H
#define LCT_LMCACHE_H

#include "lct_core.h"

#ifdef __cplusplus
extern "C" {
#endif

/* MARK: = Layer: lib/lmcache (docs/architecture.md) */

/* MARK: - LMCache's argument types */

/*
 * LMCache's codecs wrap values msgpack cannot carry as {"__t__": TAG,
 * "v": PAYLOAD} (see docs/format.md).  Each accessor below takes the
 * wrapped value, or its bare payload (older recorders, and a payload
 * reached some other way), and fills a plain struct of views into it.
 * A value of the wrong shape is LCT_ERR_TYPE, with what was found in
 * err->message (err->offset is 0: a value does not know its file offset);
 * a malformed value is LCT_ERR_MALFORMED.  No allocation.
 */

/** An ObjectKey: the identity of one KV chunk. */
typedef struct lct_object_key {
    lct_bytes chunk_hash;    /**< the chunk's hash bytes */
    lct_str model_name;
    int64_t kv_rank;
    int64_t object_group_id; /**< 0 when absent */
    lct_str cache_salt;      /**< empty when absent (schema 1) */
} lct_object_key;

/** Decode an ObjectKey. */
lct_status lct_object_key_get(lct_value v, lct_object_key *out,
                              lct_error *err);

/**
 * A stable 64-bit identity of the whole key (every field), the obj_id of
 * `lct keys` and `lct mrc`.  The fields are laid out as bytes: chunk_hash,
 * model_name and cache_salt each preceded by its length as 4
 * little-endian bytes, kv_rank and object_group_id as 8 little-endian
 * bytes each, in the order chunk_hash, model_name, kv_rank,
 * object_group_id, cache_salt.  Starting from h = 0x9e3779b97f4a7c15,
 * each 8-byte little-endian word w of that layout (the last one padded
 * with zero bytes) does h = (h ^ w) * 0xff51afd7ed558ccd; h ^= h >> 32;
 * then h ^= the layout's length, and splitmix64's finaliser mixes h so
 * every bit is usable for sampling.
 */
uint64_t lct_object_key_hash(const lct_object_key *key);

/** A MemoryLayoutDesc: the tensors one chunk occupies. */
typedef struct lct_layout_desc {
    lct_value shapes; /**< array of int arrays (or of torch.Size/tuple) */
    lct_value dtypes; /**< array of dtype strings (or torch.dtype) */
    uint32_t count;   /**< tensors: shapes and dtypes have this many */
} lct_layout_desc;

/** Decode a MemoryLayoutDesc (shapes and dtypes must be equally long). */
lct_status lct_layout_desc_get(lct_value v, lct_layout_desc *out,
                               lct_error *err);

/**
 * Bytes per element of a torch dtype name, with or without "torch.":
 * bfloat16/float16/half 2, float32/float 4, float64/double 8, float8_*,
 * int8, uint8 and bool 1, int16/short 2, int32/int 4, int64/long 8.
 * @return LCT_OK, or LCT_ERR_TYPE for any other name (never a guess).
 */
lct_status lct_dtype_size(lct_str dtype, unsigned *size);

/**
 * The bytes a layout describes: the sum over its tensors of the product
 * of the shape times the dtype's size.
 * @return LCT_OK, LCT_ERR_TYPE (a dimension that is not a non-negative
 *         int, an unknown dtype), LCT_ERR_RANGE (over 2^64 - 1 bytes),
 *         LCT_ERR_MALFORMED.
 */
lct_status lct_layout_bytes(const lct_layout_desc *layout, uint64_t *bytes,
                            lct_error *err);

/** An AttnWindowDesc; older traces hold only the bare int array. */
typedef struct lct_attn_window {
    lct_value num_chunks_in_sw; /**< array of int */
    int64_t world_size;         /**< 0 in the older form */
} lct_attn_window;

lct_status lct_attn_window_get(lct_value v, lct_attn_window *out,
                               lct_error *err);

/** A PrefetchRequestSpec: one prefetch request. */
typedef struct lct_prefetch_spec {
    lct_value keys;            /**< array of ObjectKey (list/tuple unwrapped) */
    int64_t num_kv_readers;    /**< older traces: extra_count + 1; 1 absent */
    lct_str policy;            /**< TrimPolicy member name, or empty */
    bool has_attn;             /**< attn_desc present and not nil */
    lct_attn_window attn;
    lct_value group_layouts;   /**< map str(group id) -> MemoryLayoutDesc,
                                    or a zero view */
    lct_value layout;          /**< older traces: the single layout_desc,
                                    or a zero view */
    lct_str mode;              /**< PrefetchMode member name, or empty */
    int64_t generation;        /**< 0 when absent */
} lct_prefetch_spec;

lct_status lct_prefetch_spec_get(lct_value v, lct_prefetch_spec *out,
                                 lct_error *err);

/**
 * The layout of a spec's key group @p group_id: from group_layout_descs
 * (key str(group_id)), else the older single layout.
 * @return LCT_OK, LCT_ERR_NOT_FOUND, or as lct_layout_desc_get.
 */
lct_status lct_prefetch_spec_layout(const lct_prefetch_spec *spec,
                                    int64_t group_id, lct_layout_desc *out,
                                    lct_error *err);

/** A PrefetchHandle: what submit_prefetch_task returned. */
typedef struct lct_prefetch_handle {
    lct_value prefetch_request_id;  /**< as recorded (an int or a str) */
    lct_value external_request_id;  /**< a str, or nil */
    int64_t l1_prefix_hit_count;
    lct_value l1_found_indices;     /**< array of int */
    lct_value l1_hit_chunks;        /**< as recorded */
    int64_t total_requested_keys;
    double submit_time;
    lct_value l2_orig_indices;      /**< array of int, or nil */
    int64_t generation;
} lct_prefetch_handle;

/** Decode a PrefetchHandle; absent fields are zero views or 0. */
lct_status lct_prefetch_handle_get(lct_value v, lct_prefetch_handle *out,
                                   lct_error *err);

/**
 * An enum member name: TrimPolicy or PrefetchMode as @p tag says (a bare
 * str is accepted too).
 */
lct_status lct_enum_get(lct_value v, const char *tag, lct_str *name,
                        lct_error *err);

/** A torch.dtype as its name, e.g. "torch.bfloat16" (or a bare str). */
lct_status lct_dtype_get(lct_value v, lct_str *name, lct_error *err);

/**
 * The array inside a tuple, set, torch.Size or plain list: @p array is
 * the array view (iterate it with lct_array_iter_init), @p count its
 * length (may be NULL).
 */
lct_status lct_list_get(lct_value v, lct_value *array, uint32_t *count,
                        lct_error *err);

/**
 * A GroupedObjectKeys (newer LMCache, inside a PrefetchTaskSpec): the keys
 * of one object group, with the layout each of them occupies.
 */
typedef struct lct_key_group {
    lct_value keys;              /**< array of ObjectKey */
    uint32_t count;              /**< keys */
    int64_t object_group_id;     /**< 0 when absent */
    lct_value layout;            /**< its MemoryLayoutDesc, or a zero view */
    int64_t sliding_window_size; /**< 0 when absent or nil */
} lct_key_group;

lct_status lct_key_group_get(lct_value v, lct_key_group *out,
                             lct_error *err);

/** The bytes one key of the group weighs: its layout's.
 *  @return LCT_OK, LCT_ERR_NOT_FOUND (no layout), or as
 *  lct_layout_bytes. */
lct_status lct_key_group_bytes(const lct_key_group *group, uint64_t *bytes,
                               lct_error *err);

/**
 * A PrefetchTaskSpec, what newer LMCache's submit_prefetch_task takes
 * instead of a PrefetchRequestSpec.  Expected, like every dataclass the
 * recorder's codec writes, as {"__t__": "PrefetchTaskSpec", "v": {...}}.
 */
typedef struct lct_prefetch_task {
    lct_value key_groups;      /**< array of GroupedObjectKeys */
    uint32_t ngroups;
    int64_t num_kv_readers;    /**< 1 when absent */
    lct_value fetching_policy; /**< as recorded, or a zero view */
    lct_str fetching_policy_name; /**< its member name, when an enum/str */
    lct_value lock_mode;       /**< as recorded, or a zero view */
    lct_str lock_mode_name;    /**< its member name, when an enum/str */
} lct_prefetch_task;

lct_status lct_prefetch_task_get(lct_value v, lct_prefetch_task *out,
                                 lct_error *err);

/**
 * Whether an argument of the record holds ObjectKeys under a codec type
 * this version does not read keys from (not a `keys` list, an ObjectKey,
 * a PrefetchRequestSpec, a PrefetchTaskSpec or a GroupedObjectKeys); *tag
 * (may be NULL) names the first such type.  The key iterator yields none
 * of those keys: `lct keys` and `lct mrc` count and report such records.
 */
bool lct_record_unread_keys(const lct_record *rec, lct_str *tag);

/** Keys of a flat `keys` list that lct_key_iter_init reads on its way
 *  past the list (a longer list's rest is read by lct_key_iter_next). */
#define LCT_KEY_ITER_CACHE 64

/** The library's own (lct_key_iter's parts): keys of one shape where a
 *  noted list has them, and where each has its fields (offsets and
 *  lengths from its first byte: model_name, kv_rank, object_group_id
 *  and cache_salt; length 0: not there). */
#define LCT_KEY_RUN_PARTS 32
typedef struct lct_key_run_part {
    const unsigned char *first;
    uint32_t count, stride;
    uint16_t at[4], len[4];
} lct_key_run_part;

/** Iterates the ObjectKeys a record carries. */
typedef struct lct_key_iter {
    lct_iter keys;             /* the keys array being walked */
    lct_iter groups;           /* a task spec's groups still to walk */
    bool from_task;
    lct_prefetch_spec spec;    /* when they come from a spec */
    bool from_spec;
    bool has_layout;           /* the call has a layout_desc argument */
    bool spec_group_known;     /* a spec's last key group sized: */
    int64_t spec_group;
    uint64_t spec_group_bytes;
    uint64_t layout_bytes;     /* its bytes (0: none, or not computable) */
    lct_iter sizes;            /* an L2 event's object_sizes, walked
                                  beside the keys (from_sizes) */
    bool from_sizes;
    uint32_t index;            /**< position of the next key in its list */
    /* What submit_prefetch_task was told to do with the keys, as
     * recorded (flat arguments, the PrefetchRequestSpec or the
     * PrefetchTaskSpec's fetching_policy); empty when absent, which
     * LMCache reads as its defaults, PREFIX and LOOKUP. */
    lct_str policy;            /**< TrimPolicy or fetching_policy name */
    lct_str mode;              /**< PrefetchMode name */
    bool skip_l2;              /**< the skip_l2 argument, false if absent */
    /* A flat `keys` list's first keys, read while the arguments were
     * scanned for what follows the list (layout_desc, policy, ...), so
     * a call's keys are walked once; handed out before it->keys goes
     * on.  (About 4 KiB: keep the iterator on the stack, not in a
     * per-record copy.) */
    uint32_t ncached, next_cached;
    /* The library's own: a list the record's validating walk noted
     * (LCT_KEYS) is described where it lies, not read into cached[], in
     * parts of keys alike but for chunk_hash, kv_rank and
     * object_group_id (a list of one shape is one part).  The part
     * described: run_count keys from run_first, run_stride bytes apart,
     * each like run_like but for those three fields (kv_rank the byte at
     * run_rank_at, object_group_id the byte at run_group_at, 0: none);
     * run_next is the next one handed out.  run_part of run_parts, the
     * rest in parts[] (which shares its room with cached[]). */
    const unsigned char *run_first;
    uint32_t run_stride, run_count, run_next;
    uint16_t run_rank_at, run_group_at;
    uint32_t run_part, run_parts;
    lct_object_key run_like;
    union {
        lct_object_key cached[LCT_KEY_ITER_CACHE];
        lct_key_run_part parts[LCT_KEY_RUN_PARTS];
    };
} lct_key_iter;

/**
 * Begin iterating the keys of a record: its `keys` argument (a list or a
 * tuple), or else the keys of the first PrefetchRequestSpec or
 * PrefetchTaskSpec argument (every group's, group by group), in order.
 * A record without keys gives an empty iterator (LCT_OK).
 * @return LCT_OK, LCT_ERR_TYPE (a `keys` argument that is not a list),
 *         LCT_ERR_MALFORMED.
 */
lct_status lct_key_iter_init(const lct_record *rec, lct_key_iter *it,
                             lct_error *err);

/**
 * The next key, and in @p bytes what it weighs: the call's layout bytes
 * (for a request spec, the layout of the key's object_group_id; for a
 * task spec, its group's layout; for an L2-level event without a layout,
 * the element of its object_sizes at the key's place), 0 when there is
 * no layout or it cannot be sized.  Keeps per thread the last few layouts and argument values
 * it decoded, by their bytes, used only for bytes equal to them (so the
 * answer is the same whatever was read before).
 * @return 1, 0 at the end, or LCT_ERR_TYPE / LCT_ERR_MALFORMED (a key
 *         that is not an ObjectKey).
 */
int lct_key_iter_next(lct_key_iter *it, lct_object_key *key, uint64_t *bytes,
                      lct_error *err);

/** A key as lct_key_iter_next_ids hands it out: its identity, its
 *  weight, and the two fields that place it in its call's chunks
 *  (lct_chunk_of), without its views. */
typedef struct lct_key_id {
    uint64_t id;             /**< lct_object_key_hash of the key */
    uint64_t bytes;          /**< what it weighs, as lct_key_iter_next says */
    int64_t kv_rank;
    int64_t object_group_id; /**< 0 when absent */
} lct_key_id;

/**
 * The next keys as ids, for a caller that needs each key's identity and
 * not its views: out[i] is the key lct_key_iter_next would hand out, in
 * the same order.  A list the record's validating walk noted (a reader
 * opened with LCT_KEYS) is hashed where it lies, its keys' shared fields
 * laid out once a call, so a key costs its hash bytes, two numbers and
 * the multiplies; no lct_object_key is filled.  Hands out fewer than
 * @p max when a list ends or the next key must be read alone (a key not
 * of the encoder's usual shape comes by itself, so a failure never
 * follows keys in the same call); the two calls may be mixed on one
 * iterator.
 * @return how many (1 to @p max), 0 at the end (or when @p max is 0), or
 *         as lct_key_iter_next's failures, with nothing handed out.
 */
long lct_key_iter_next_ids(lct_key_iter *it, lct_key_id *out, size_t max,
                           lct_error *err);

/* MARK: - Paired calls: how long a prefetch or a write took */

/** The StorageManager calls that pair into spans. */
typedef enum lct_call {
    LCT_CALL_OTHER = 0,
    LCT_CALL_SUBMIT_PREFETCH,   /**< .submit_prefetch_task */
    LCT_CALL_READ_ENTER,        /**< .read_prefetched_results.__enter__ */
    LCT_CALL_READ_EXIT,         /**< .read_prefetched_results.__exit__ */
    LCT_CALL_FINISH_READ,       /**< .finish_read_prefetched */
    LCT_CALL_RESERVE_WRITE,     /**< .reserve_write */
    LCT_CALL_FINISH_WRITE,      /**< .finish_write */
} lct_call;

/** Which call a qualname is (by its suffix after a dot). */
lct_call lct_call_of(lct_str qualname);

/** A span: from one call to the call that pairs with it. */
typedef enum lct_span_kind {
    LCT_SPAN_PREFETCH = 1,     /**< submit to finish_read_prefetched */
    LCT_SPAN_PREFETCH_WAIT,    /**< submit to the read's __enter__ */
    LCT_SPAN_PREFETCH_READ,    /**< __enter__ to __exit__ */
    LCT_SPAN_PREFETCH_RELEASE, /**< __exit__ to finish_read_prefetched */
    LCT_SPAN_WRITE,            /**< reserve_write to finish_write */
} lct_span_kind;

/** "prefetch", "prefetch.wait", "prefetch.read", "prefetch.release",
 *  "write"; NULL for another value. */
const char *lct_span_kind_name(lct_span_kind kind);

typedef struct lct_span {
    lct_span_kind kind;
    double t_start, t_end;          /**< the two calls' t_mono */
    uint64_t start_offset, end_offset; /**< their records' offsets */
    uint32_t keys;                  /**< keys of the call that closed it
                                         (the read's, for a prefetch) */
} lct_span;

/** Called with each span as the record that closes it is added. */
typedef void lct_span_fn(void *ctx, const lct_span *span);

/** Calls that paired with nothing (lct_spans_unpaired_get). */
typedef struct lct_spans_unpaired {
    uint64_t submit_never_read;     /**< no read began with its keys */
    uint64_t enter_without_submit;  /**< its context still pairs on */
    uint64_t enter_never_exited;
    uint64_t exit_without_enter;
    uint64_t exit_never_finished;
    uint64_t finish_read_without_exit;
    uint64_t reserve_never_finished;
    uint64_t finish_write_without_reserve;
    uint64_t without_keys;          /**< a paired call naming no key */
    uint64_t unreadable_keys;       /**< keys the key iterator refused */
} lct_spans_unpaired;

/**
 * Pairs the calls LMCache pairs, fed records in trace order, by their
 * keys (every field of each, in the call's order), first in
 * first out per key tuple as LMCache's trace replay pairs its
 * read_prefetched_results contexts:
 * - a read's __enter__ pairs with the oldest open submit_prefetch_task
 *   whose keys begin with the read's (all of them, or the leading run a
 *   partial hit reads); its __exit__ with the oldest open __enter__ of
 *   the same keys; finish_read_prefetched with the oldest such __exit__;
 *   a prefetch spans from the submit to that finish when all paired;
 * - finish_write pairs with the oldest open reserve_write of its keys.
 * Memory grows with the calls open at once, not with the trace.
 */
typedef struct lct_spans lct_spans;

/** @return LCT_OK, LCT_ERR_NOMEM. */
lct_status lct_spans_new(lct_spans **out, lct_error *err);
/** One record (others than the six calls are passed over); the spans it
 *  closes go to @p fn.  A call whose keys cannot be read is counted
 *  (unreadable_keys) and passed over.
 *  @return LCT_OK, LCT_ERR_NOMEM. */
lct_status lct_spans_add(lct_spans *spans, const lct_record *rec,
                         lct_span_fn *fn, void *ctx, lct_error *err);
/** The calls unpaired so far, those still open counted as never
 *  closed. */
void lct_spans_unpaired_get(const lct_spans *spans, lct_spans_unpaired *out);
void lct_spans_free(lct_spans *spans);

#ifdef __cplusplus
}
#endif

#endif /* LCT_LMCACHE_H */
