/*
 * lct.h - liblct, a zero-copy reader for LMCache trace files (.lct)
 *
 * A .lct trace is a sequence of frames, each a 4-byte big-endian length
 * followed by a msgpack body of that many bytes.  The first frame is the
 * header; every later frame is a record.  liblct maps the whole file
 * read-only and hands out views into the mapping; nothing is copied and
 * fields are decoded only when asked for.  It accepts, skips and refuses
 * exactly what LMCache's Python reader (reader.py) does.
 *
 * A typical loop:
 *
 *     lct_reader *r;
 *     lct_error err;
 *     if (lct_open("run.lct", 0, &r, &err) != LCT_OK) {
 *         fprintf(stderr, "%s\n", err.message);
 *         return 1;
 *     }
 *     lct_record rec;
 *     while (lct_next(r, &rec) == 1)
 *         printf("%.6f %.*s\n", rec.t_mono,
 *                (int)rec.qualname.len, rec.qualname.ptr);
 *     if (lct_reader_status(r) != LCT_OK)  // skipped, cut, or shrank
 *         fprintf(stderr, "damaged: %s\n",
 *                 lct_strerror(lct_reader_status(r)));
 *     lct_close(r);
 *
 * The format itself (framing, fields, the acceptance rules, the JSON
 * rendering) is described in docs/format.md.  The sections below follow
 * the library's layers, lowest first (docs/architecture.md): base,
 * msgpack values, reading the format, rendering, writing, LMCache.
 *
 * MARK: - Contents
 *
 * The whole API is in this one header (why it is long: a reader learns
 * the library here without opening lib/).  Sections, by layer, with the
 * first function of each; search for "MARK: - " and the section's name.
 *
 *   Before the code: Names, Lifetimes, Caveats of a mapping, Threads.
 *   lib/base      Version ................................ lct_version
 *                 Status codes and errors ................ lct_strerror
 *                 Views (lct_str, lct_bytes)
 *                 Large arrays ........................... lct_large_array_grow
 *   lib/msgpack   Values ................................. lct_value_from
 *                 Visiting every value ................... lct_value_visit
 *   lib/read      Opening and iterating .................. lct_open, lct_next
 *                 Sidecar index .......................... lct_sidecar_build
 *                 Several traces on one timeline ......... lct_merge_new
 *                 Warnings ............................... lct_reader_set_log
 *                 Files that shrink while mapped ......... lct_guard_install
 *                 Frame index and parallel scans ......... lct_index_build
 *   lib/render    JSON rendering ......................... lct_value_write_json
 *   lib/write     Writing traces ......................... lct_writer_open
 *                 Output files ........................... lct_output_check
 *                 Replay pacing .......................... lct_pacer_new
 *   lib/lmcache   LMCache's argument types ............... lct_object_key_get
 *                 Key reference streams, miss-ratio curves lct_refs_new,
 *                                                          lct_mrc_compute
 *                 One capacity simulated ................. lct_sim_run
 *                 Two tiers .............................. lct_refs_behind_l1
 *   lib/replay    Replay: operations and backends ........ lct_backend_find
 *                 The replay engine ...................... lct_replay_run
 *
 * The SQLite tables are in lct_sqlite.h (lct_sqlite_register) and the
 * redis backend in lct_redis.h.
 *
 * MARK: - Names
 *
 * lct_NOUN_VERB: the noun is the type operated on (lct_reader_stats,
 * lct_array_iter_next, lct_writer_end).  Objects that hold a file are
 * opened and closed (lct_open / lct_close, lct_writer_open /
 * lct_writer_close); objects that are only memory are made and freed
 * (lct_index_build / lct_index_free, lct_pacer_new / lct_pacer_free).
 * A function that can fail returns an lct_status (LCT_OK, or a negative
 * code listed in its comment); one that also counts (lct_next, the
 * iterators) returns int: 1 for an item, 0 at the end, or a negative
 * lct_status.  Predicates return bool.
 *
 * MARK: - Lifetimes (read this once)
 *
 * Every view this library hands out (lct_str, lct_bytes, lct_value, and the
 * fields of lct_header and lct_record that are views) points into the
 * reader's bytes.  Views are not NUL-terminated, must not be modified or
 * freed, and stay valid until lct_close() on the reader they came from;
 * copy what you need beyond that, whatever the input: a regular file (mapped),
 * or a pipe, FIFO, /dev/stdin or device (read as it arrives, every frame
 * kept until lct_close(), so memory grows with the input).  The
 * exceptions are asked for: LCT_STREAM reuses one buffer, for memory
 * bounded by the largest frame, so its record views live only until the
 * next lct_next() (its header's still live until lct_close()), and
 * LCT_ONE_PASS promises no more than LCT_STREAM does.  Value views
 * made with lct_value_from() over your own buffer live as long as your
 * buffer.
 *
 * MARK: - Caveats of a mapping, and what is guaranteed
 *
 * - Records appended to the file after lct_open() are not seen until
 *   lct_reader_refresh() (open with LCT_FOLLOW to follow a trace being written).
 * - A file truncated by another process while it is mapped:
 *   - The page holding the new end reads as zeros past it (no fault);
 *     pages wholly past the end raise SIGBUS, which kills a process by
 *     default.  Call lct_guard_install() once and those pages read as
 *     zeros too.  Without the guard a program must handle SIGBUS itself,
 *     or open with LCT_NO_MMAP or LCT_STREAM to read a copy.
 *   - lct_next(), lct_scan_run(), lct_index_record(), lct_scan_file()
 *     (which reads copies) and following never hand out a record whose
 *     bytes were not all in the file when they were read: before a mapped record is believed, the length prefix
 *     after it is read, and when that reads 0, faulted, or is past the
 *     data (or the frame did not decode), the file's size is taken with
 *     fstat(2); a record reaching past it is not yielded.  Reading then
 *     ends with LCT_WARN_SHRANK naming the file's new size, and
 *     lct_stats.shrank / shrank_offset say so.  Nothing after it is read.
 *   - Views read after lct_next() returned them (a caller's later reads,
 *     LCT_LAZY's args) may meet the loss: read them, then ask
 *     lct_record_intact(); true means what you read was the file's.
 *   - A file rewritten in place (same size, other bytes) is not detected.
 * - Inputs that cannot be mapped (pipes, FIFOs, terminals, devices, files
 *   whose size reads as 0) are read as they arrive, each record yielded
 *   when its frame is complete; every frame is kept until lct_close() (the
 *   views' promise), unless LCT_STREAM asks for memory bounded by the
 *   largest frame instead.
 *
 * MARK: - Threads
 *
 * - A reader (lct_reader), a merge, a writer, an lct_refs or lct_mrc is
 *   used by one thread at a time: share one only under your own lock.
 *   lct_close() must not race any call on the same reader, and a call
 *   blocked in a pipe's read() is a call: close after it returns.
 * - Different objects may be used from different threads at once, over
 *   the same file or not (each reader maps or reads on its own).
 * - Views are plain read-only memory and may be read from any thread
 *   while their reader lives; value, key and render functions keep no
 *   state and are safe from any thread.
 * - lct_scan_file / lct_scan_run start their own threads: the callback
 *   runs on them, one range of frames each.
 * - The SIGBUS guard (lct_guard_install) covers every mapped reader of
 *   every thread, however many are open.
 * - The Python module builds its sharing on these rules: its TraceReader
 *   holds a lock around each call into its reader (docs/python.md, "Threads").
 */
#ifndef LCT_H
#define LCT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* MARK: = Layer: lib/base (docs/architecture.md) */

/* MARK: - Version */

/** The version of this header. */
#define LCT_VERSION_MAJOR 0
#define LCT_VERSION_MINOR 1
#define LCT_VERSION_PATCH 0
#define LCT_VERSION_STRING "0.1.0"

/** The version of the library linked in, e.g. "0.1.0" (compare with
 *  LCT_VERSION_STRING to spot a header/library mismatch). */
const char *lct_version(void);

/* MARK: - Opaque handles */

/** A trace opened for reading.  Create with lct_open(), free with
 *  lct_close(). */
typedef struct lct_reader lct_reader;

/* MARK: - Status codes and errors */

/**
 * Status codes.  LCT_OK is zero; every failure is negative, so a function
 * that also returns counts (lct_next) can return either.
 */
typedef enum lct_status {
    LCT_OK = 0,
    LCT_ERR_SYS = -1,       /**< open, fstat, mmap or read failed; see sys_errno */
    LCT_ERR_EMPTY = -2,     /**< the file has no bytes at all */
    LCT_ERR_TRUNCATED = -3, /**< a frame (prefix or body) is cut short */
    LCT_ERR_MALFORMED = -4, /**< bytes are not what the format requires */
    LCT_ERR_MAGIC = -5,     /**< header magic is not "LMCT" */
    LCT_ERR_VERSION = -6,   /**< header format_version is not 1 */
    LCT_ERR_SCHEMA = -7,    /**< header trace_schema_version not readable */
    LCT_ERR_TYPE = -8,      /**< a value is not of the type asked for */
    LCT_ERR_RANGE = -9,     /**< a number does not fit the type asked for */
    LCT_ERR_DEPTH = -10,    /**< nesting deeper than LCT_MAX_DEPTH */
    LCT_ERR_NOMEM = -11,    /**< memory allocation failed */
    LCT_ERR_INVALID = -12,  /**< misuse: NULL argument, closed reader */
    LCT_ERR_NOT_FOUND = -13, /**< a map has no such key */
    LCT_ERR_CHANGED = -14,   /**< the file shrank while it was read */
    LCT_ERR_LIMIT = -15,     /**< a pipe's frame over max_stream_frame */
    LCT_ERR_IS_INPUT = -16,  /**< an output path names an input file */
    LCT_ERR_BACKEND = -17    /**< a storage backend refused or failed */
} lct_status;

/** Size of lct_error.message, including the terminating NUL. */
#define LCT_ERROR_MESSAGE_SIZE 512

/**
 * What went wrong.  Owned by the caller (usually on the stack), filled by
 * any fallible call that takes one; never needs freeing.  Pass NULL where
 * you only want the status code.
 */
typedef struct lct_error {
    int code;          /**< an lct_status, negative on failure */
    int sys_errno;     /**< errno for LCT_ERR_SYS, otherwise 0 */
    uint64_t offset;   /**< file offset the problem was found at */
    /** Names the path; NUL-terminated.  Printable as it is: a path or
     *  any other text from outside in it is escaped C-style (strvis(3):
     *  ESC as \033, a backslash as \\), so print it, never escape it
     *  again.  Warnings' messages (lct_log_fn) follow the same rule. */
    char message[LCT_ERROR_MESSAGE_SIZE];
} lct_error;

/** A constant English description of a status code; never NULL. */
const char *lct_strerror(int code);

/* MARK: - Views */

/** A UTF-8 string view into the mapping; not NUL-terminated. */
typedef struct lct_str {
    const char *ptr;
    size_t len;
} lct_str;

/** A byte-string view (msgpack bin, ext data, header magic). */
typedef struct lct_bytes {
    const unsigned char *ptr;
    size_t len;
} lct_bytes;

/**
 * A view of one msgpack value: it starts at ptr, and len is how many bytes
 * are available to it (the rest of its frame, or exactly its size; the
 * value may be shorter than len).  Every accessor bounds-checks against
 * len and reports LCT_ERR_MALFORMED rather than read past it.
 * A zero view ({NULL, 0}) stands for "absent".
 */
typedef struct lct_value {
    const unsigned char *ptr;
    size_t len;
} lct_value;

/* MARK: - Large arrays */

/**
 * reallocarray(3) for an array that grows large and is written once, in
 * order (a column of one number per record): @p p (NULL: a new array)
 * grown to @p n elements of @p size bytes, its first @p used elements
 * kept.  From 256 KiB it is put on 2 MiB pages where those fault in
 * clearly cheaper than 4 KiB ones on this machine (timed once per
 * process, at the library's first such array), else it is
 * realloc's; only the pages differ.  Free with free().
 * @return the array, or NULL when out of memory or when n * size passes
 *         size_t; then @p p is still the caller's, as it was.
 */
void *lct_large_array_grow(void *p, size_t used, uint64_t n, size_t size);

/**
 * The page such an array is put on: it takes whole ones, so an array
 * past 256 KiB that grows to multiples of this, not by doubling, is not
 * copied onto a fresh page at each step (on 4 KiB pages the room asked
 * for and not written costs nothing but address space).
 */
#define LCT_LARGE_ARRAY_PAGE ((size_t)2 << 20)

/* MARK: = Layer: lib/msgpack (docs/architecture.md) */

/* MARK: - Values */

/** A msgpack value's type. */
typedef enum lct_type {
    LCT_TYPE_INVALID = 0, /**< not a value: zero view, reserved byte, cut short */
    LCT_TYPE_NIL,
    LCT_TYPE_BOOL,
    LCT_TYPE_INT,     /**< any integer, -2^63 .. 2^64-1, whatever its encoding */
    LCT_TYPE_FLOAT32,
    LCT_TYPE_FLOAT64,
    LCT_TYPE_STR,
    LCT_TYPE_BIN,
    LCT_TYPE_ARRAY,
    LCT_TYPE_MAP,
    LCT_TYPE_EXT
} lct_type;

/** The msgpack ext type that holds timestamps. */
#define LCT_EXT_TIMESTAMP (-1)

/** A value view over your own buffer holding msgpack bytes. */
lct_value lct_value_from(const void *data, size_t len);

/** The value's type; LCT_TYPE_INVALID if its header is cut short or is the
 *  reserved byte 0xc1. */
lct_type lct_value_type(lct_value v);

/** A short lower-case name for a type ("nil", "int", "map", ...). */
const char *lct_type_name(lct_type type);

/**
 * Typed reads.  Each returns LCT_OK and stores into @p out, or
 * LCT_ERR_TYPE (wrong type), LCT_ERR_RANGE (an integer that does not fit),
 * LCT_ERR_MALFORMED (cut short).  @p out is untouched on failure.
 *
 * lct_value_get_double accepts float32, float64 and every integer, as the
 * reference decoder does for float fields.
 */
lct_status lct_value_get_int64(lct_value v, int64_t *out);
lct_status lct_value_get_uint64(lct_value v, uint64_t *out);
lct_status lct_value_get_double(lct_value v, double *out);
lct_status lct_value_get_bool(lct_value v, bool *out);
/** Whether the value is nil (false for any other type or a bad view). */
bool lct_value_is_nil(lct_value v);
/** A str's bytes (not checked for UTF-8 here; see lct_value_validate). */
lct_status lct_value_get_str(lct_value v, lct_str *out);
lct_status lct_value_get_bin(lct_value v, lct_bytes *out);
/** An ext's type code and data. */
lct_status lct_value_get_ext(lct_value v, int8_t *type, lct_bytes *data);

/**
 * Whether the value is a str equal to the NUL-terminated @p s.  False for
 * any other type or a value cut short.
 */
bool lct_value_str_eq(lct_value v, const char *s);

/** Whether the view holds exactly the NUL-terminated @p text. */
bool lct_str_eq(lct_str s, const char *text);
/** Byte order of two views (a shorter prefix first), as memcmp: <0, 0,
 *  >0.  For sorted tables and trees keyed by strings from a trace. */
int lct_str_cmp(lct_str a, lct_str b);
/** Whether the view ends with the NUL-terminated @p suffix ("" always). */
bool lct_str_has_suffix(lct_str s, const char *suffix);
/** The part of the view after its last @p c, or the whole view when it
 *  holds none: a call's short name is lct_str_after_last(qualname, '.'). */
lct_str lct_str_after_last(lct_str s, char c);

/**
 * The encoded size of the value, walking into containers.  Structural only
 * (no UTF-8 check): unlike lct_value_validate it gives the size of a value
 * the reference decoder would refuse (invalid UTF-8 under LCT_LAZY).
 * @return LCT_OK, LCT_ERR_MALFORMED (cut short or reserved byte),
 *         LCT_ERR_DEPTH (deeper than LCT_MAX_DEPTH).
 */
lct_status lct_value_size(lct_value v, size_t *size);

/**
 * Check the value as the reference decoder would decode it into Python
 * objects: well-formed throughout, every str valid UTF-8, every timestamp
 * ext of a valid length and range, nesting within LCT_MAX_DEPTH.
 * On success, *size (if not NULL) is its encoded size.
 * @return LCT_OK, LCT_ERR_MALFORMED, LCT_ERR_DEPTH.
 */
lct_status lct_value_validate(lct_value v, size_t *size);

/**
 * Iterator over an array's elements or a map's pairs.  A small value
 * struct; no cleanup needed.  The count is checked against the bytes
 * available before iteration starts, so a hostile count cannot make a
 * loop run long.
 */
typedef struct lct_iter {
    const unsigned char *cur; /* next element */
    const unsigned char *end; /* end of the bytes available */
    uint32_t remaining;       /* elements (or pairs) not yet produced */
    uint32_t count;           /**< elements (or pairs) in the container */
    bool is_map;
} lct_iter;

/**
 * Begin iterating an array (lct_array_iter_init) or a map
 * (lct_map_iter_init).
 * On failure @p it is left an empty iterator (its loop runs zero times).
 * @return LCT_OK, LCT_ERR_TYPE, LCT_ERR_MALFORMED (header cut short, or a
 *         count larger than the bytes available could hold),
 *         LCT_ERR_INVALID (@p it is NULL).
 */
lct_status lct_array_iter_init(lct_value v, lct_iter *it);
lct_status lct_map_iter_init(lct_value v, lct_iter *it);

/**
 * Next element of an array.
 * @return 1 with @p elem set, 0 at the end, LCT_ERR_MALFORMED or
 *         LCT_ERR_DEPTH if the previous element could not be stepped over,
 *         LCT_ERR_TYPE if @p it iterates a map.
 */
int lct_array_iter_next(lct_iter *it, lct_value *elem);

/** Next pair of a map; as lct_array_iter_next. */
int lct_map_iter_next(lct_iter *it, lct_value *key, lct_value *val);

/**
 * Look up a str key in a map; when the key repeats, the last occurrence
 * wins, as in the reference decoder.
 * @return LCT_OK with @p out set, LCT_ERR_NOT_FOUND, LCT_ERR_TYPE (not a
 *         map), LCT_ERR_MALFORMED, LCT_ERR_DEPTH.
 */
lct_status lct_map_find(lct_value map, const char *key, lct_value *out);

/**
 * Recognise a codec-wrapped value {"__t__": TAG, "v": PAYLOAD}: a map of
 * exactly those two str keys (in either order) with a str tag.
 * @return true with @p tag and @p payload set (either may be NULL), false
 *         for anything else.
 */
bool lct_value_codec(lct_value v, lct_str *tag, lct_value *payload);

/* MARK: - Visiting every value */

/** What lct_value_visit reports for one value. */
typedef struct lct_visit {
    lct_value value;   /**< the value; for containers, only its header is
                            meaningful until the matching LCT_VISIT_END */
    lct_type type;
    unsigned depth;    /**< 0 for the value passed in */
    bool is_key;       /**< a map key (else an element or a map value) */
    bool end;          /**< the close of a container opened earlier */
    uint32_t count;    /**< elements (or pairs) of an array (or map) */
} lct_visit;

/** Called for each value; return non-zero to stop the walk early. */
typedef int (*lct_visit_fn)(void *ctx, const lct_visit *v);

/**
 * Visit every value inside @p v in file order, once each, in one pass:
 * a container is reported when it opens (end false) and again when it
 * closes (end true), its elements in between.  No allocation, no
 * recursion; nesting beyond LCT_MAX_DEPTH is refused.  Far cheaper than
 * nested lct_iter loops, which step over each element to find its end.
 * @return LCT_OK; the callback's non-zero value if it stopped the walk;
 *         LCT_ERR_MALFORMED or LCT_ERR_DEPTH if @p v is not well-formed
 *         (values before the fault have been visited).
 */
int lct_value_visit(lct_value v, lct_visit_fn fn, void *ctx);

/* MARK: = Layer: lib/read (docs/architecture.md) */

/* MARK: - Opening and iterating */

/** lct_open flags. */
enum {
    /**
     * Skip the deep validation of record args that the reference decoder
     * does (well-formed msgpack throughout, UTF-8 in every string, str keys
     * at the top of args, valid timestamps).  Much faster; may yield
     * records the reference reader would skip.
     */
    LCT_LAZY = 1u << 0,
    /** Start with warnings silenced (as lct_reader_set_log(r, NULL, NULL)). */
    LCT_QUIET = 1u << 1,
    /** Read the whole input into one heap buffer at open instead of mapping
     *  or streaming it: views live until lct_close() and no later change
     *  to the file can reach them.  Memory is the size of the input (a
     *  pipe that never ends is read until memory runs out). */
    LCT_NO_MMAP = 1u << 2,
    /** Pre-fault the whole mapping at open (MAP_POPULATE), so the first
     *  pass pays no page faults.  Costs the time of reading the file. */
    LCT_POPULATE = 1u << 3,
    /**
     * The file is still being written: a partial trailing frame means
     * "not yet complete" (lct_next returns 0 without a warning and without
     * setting truncated, and stays before it) and lct_reader_refresh() picks up
     * what was appended.  Keeps a descriptor open until lct_close().
     */
    LCT_FOLLOW = 1u << 4,
    /**
     * Read the input as a stream, one frame at a time, into one reused
     * buffer (read(2), or pread(2) on a regular file) instead of mapping
     * it.  Views of a streamed reader (records and values from them) live
     * only until the next lct_next() call; the header's live until
     * lct_close().  Memory is bounded by the largest frame, not the input.
     * No random access: lct_index_build() refuses a streamed reader.
     * Inputs that cannot be mapped (pipes, FIFOs, terminals, devices, files
     * whose size reads as 0 such as /proc's) are always read as a stream;
     * without this flag every frame is kept until lct_close(), so views
     * live as long as a mapping's (memory: the input), and with it the
     * buffer is reused (memory: the largest frame).
     */
    LCT_STREAM = 1u << 5,
    /**
     * The caller reads forward once and uses a record's views only until
     * the next lct_next(), as under LCT_STREAM: a regular file of 16 MiB
     * or more is then read through whichever of the mapping and the stream
     * costs less on this machine.  The first such file a process opens
     * decides, by timing 768 KiB both ways once: the mapping pays a
     * first touch per 4 KiB page (cheap on some machines, a trip to the
     * hypervisor on those that shadow page tables); the stream copies
     * every byte.  Both give the same records.  lct_reader_data() says
     * which was taken ({NULL, 0}: the stream).  An input that cannot be
     * mapped reuses one buffer, as under LCT_STREAM.  A file is mapped as
     * without this flag under LCT_FOLLOW and LCT_POPULATE; LCT_NO_MMAP and
     * LCT_STREAM go first.
     */
    LCT_ONE_PASS = 1u << 6,
    /**
     * The caller reads each record's keys (lct_key_iter_init) after
     * lct_next() in the same thread: the walk that validates a record
     * hands over its first list of ObjectKeys when the list is the
     * encoder's usual form with all its keys alike, so the key iterator
     * does not walk it again.  Only the last record a thread decoded is
     * handed over; any other record's keys are found by the iterator's
     * own walk.  The keys are the same with or without the flag.
     */
    LCT_KEYS = 1u << 7
};

/** The trace schema versions this library reads. */
#define LCT_SCHEMA_MIN 1
#define LCT_SCHEMA_MAX 2
/** The framing layout version this library reads. */
#define LCT_FORMAT_VERSION 1
/** Containers may nest this deep inside one value before it is refused. */
#define LCT_MAX_DEPTH 512

/**
 * Open a trace: map it read-only (or read it whole when it cannot be mapped)
 * and decode and check its header.
 *
 * @param path   file to open
 * @param flags  LCT_LAZY, LCT_QUIET, LCT_NO_MMAP, LCT_POPULATE, LCT_FOLLOW,
 *               LCT_STREAM, LCT_ONE_PASS, or 0 (described where they are
 *               defined)
 * @param out    set to the new reader on success, to NULL on failure
 * @param err    filled on failure (may be NULL); message names the path
 * @return LCT_OK, or
 *   LCT_ERR_SYS       cannot open, stat, map or read (err->sys_errno set;
 *                     a directory is EISDIR);
 *   LCT_ERR_EMPTY     zero bytes;
 *   LCT_ERR_TRUNCATED header length prefix or body cut short;
 *   LCT_ERR_MALFORMED header is not a decodable header map;
 *   LCT_ERR_MAGIC, LCT_ERR_VERSION, LCT_ERR_SCHEMA  header refused;
 *   LCT_ERR_LIMIT     a pipe's header frame claims more than the limit;
 *   LCT_ERR_NOMEM, LCT_ERR_INVALID.
 * A streamed header frame whose first bytes already refuse it is refused
 * at once, without reading the length it claims (`lct check /dev/urandom`
 * answers at once; the reference reader reads the claimed bytes first and
 * would call such a header truncated if the input ended before them).
 */
lct_status lct_open(const char *path, unsigned flags, lct_reader **out,
             lct_error *err);

/** The longest frame body a pipe is held to by default (256 MiB). */
#define LCT_MAX_STREAM_FRAME_DEFAULT (256ull << 20)

/** What lct_open_with() takes beyond a path. */
typedef struct lct_open_options {
    unsigned flags; /**< as lct_open()'s */
    /**
     * A pipe, FIFO or device (an input read with read(2), whose frames must
     * be held in memory to be decoded): the longest frame body it may
     * hold.  A frame that claims more, and that its first bytes do not
     * already refuse, is read up to the limit: if the input ends first it
     * is cut short, as the reference says; if not, the reading ends with
     * a warning naming its offset (lct_reader_status: LCT_ERR_LIMIT; a
     * header frame: the open fails).
     * A frame its first bytes refuse (not a map, or a first key that is
     * not a str) is skipped as the reference skips it, never held, at any
     * length.  Regular files are never limited (their size bounds them).
     * 0: LCT_MAX_STREAM_FRAME_DEFAULT.
     */
    uint64_t max_stream_frame;
} lct_open_options;

/** lct_open() with options.  @return as lct_open(). */
lct_status lct_open_with(const char *path, const lct_open_options *opts,
                         lct_reader **out, lct_error *err);

/** lct_open_fd() with options.  @return as lct_open(). */
lct_status lct_open_fd_with(int fd, const char *name,
                            const lct_open_options *opts, lct_reader **out,
                            lct_error *err);

/**
 * Like lct_open() on an already open descriptor, which stays the caller's
 * (liblct keeps its own duplicate).  @p name is used in messages, e.g.
 * "<stdin>".  A descriptor that cannot be mapped is streamed: lct_open_fd
 * returns once the header frame has arrived.
 * @return as lct_open().
 */
lct_status lct_open_fd(int fd, const char *name, unsigned flags, lct_reader **out,
                lct_error *err);

/**
 * Like lct_open() over bytes already in memory.  Nothing is copied: the
 * buffer must stay unchanged until lct_close(), and views point into it.
 * @p name is used in messages.  LCT_NO_MMAP, LCT_STREAM, LCT_POPULATE and
 * LCT_FOLLOW mean nothing here.
 * @return as lct_open(), without LCT_ERR_SYS.
 */
lct_status lct_open_buffer(const void *data, size_t size, const char *name,
                    unsigned flags, lct_reader **out, lct_error *err);

/**
 * Close the reader, unmap the file and free everything.  Views from it die
 * here.  NULL does nothing.
 */
void lct_close(lct_reader *reader);

/** The decoded header of an open trace. */
typedef struct lct_header {
    lct_bytes magic;              /**< always "LMCT" once open */
    int64_t format_version;       /**< always LCT_FORMAT_VERSION once open */
    lct_str level;                /**< "storage", "events", or any string */
    int64_t trace_schema_version; /**< LCT_SCHEMA_MIN .. LCT_SCHEMA_MAX */
    double t_mono_start;          /**< monotonic clock at recorder start */
    double t_wall_start;          /**< Unix seconds at recorder start */
    lct_str sm_config_json;       /**< storage config as JSON, or "" */
    lct_str sm_config_digest;     /**< SHA-256 hex of the above, or "" */
    lct_value level_meta;         /**< the level_meta map, or a zero view */
    lct_value body;               /**< the whole header map */
    uint64_t size;                /**< header frame size, prefix included */
} lct_header;

/** The header of an open reader; NULL for NULL.  Lives as the reader. */
const lct_header *lct_reader_header(const lct_reader *reader);

/** One record.  Every view in it lives until lct_close(). */
typedef struct lct_record {
    uint64_t offset;   /**< file offset of this frame's length prefix */
    uint32_t length;   /**< body length in bytes (prefix excluded) */
    double t_mono;     /**< seconds since the header's t_mono_start */
    double t_wall;     /**< Unix seconds when the call was published */
    lct_str qualname;  /**< call site, e.g. "...StorageManager.finish_write" */
    lct_value args;    /**< the args map: str keys, codec-wrapped values */
    lct_value body;    /**< the whole record map, exactly its bytes */
} lct_record;

/**
 * Produce the next record in file order.
 *
 * Malformed frames are skipped (each one warned about and counted); a
 * partial trailing frame ends the records with a warning, and so does a
 * read error of a streamed input ("read failed at offset N").  Once the
 * end is reached every further call returns 0.  With LCT_FOLLOW a
 * partial last frame is "not yet written": 0 without a warning, and the
 * next call after lct_reader_refresh() goes on from there.  A file that shrank
 * while mapped ends the records with LCT_WARN_SHRANK (see Caveats).
 * A streamed reader's previous record views die here.  Over a mapping it
 * fills the next 2 MiB ahead and lets go of the pages more than 2 MiB
 * behind (a front-to-back pass keeps a few MiB resident, not the file);
 * views there stay valid, their pages read back from the file if used.
 *
 * @return 1 with @p rec filled, 0 at the end of the records,
 *         LCT_ERR_INVALID if reader or rec is NULL.
 */
int lct_next(lct_reader *reader, lct_record *rec);

/** Start iterating again from the first record; counters restart too.
 *  A streamed pipe cannot go back: there it does nothing. */
void lct_reader_rewind(lct_reader *reader);

/**
 * Map the file again at its current size (a reader opened with
 * LCT_FOLLOW), keeping the position, so records appended since are read by
 * the next lct_next calls.  Record views obtained before the call are
 * invalid after it; the header stays valid (a followed reader keeps a copy).
 * A streamed follower needs no refresh: lct_next reads what arrived.
 * A file now smaller than before is LCT_ERR_CHANGED: the old mapping
 * stays, its lost pages read as zeros (so old views cannot fault),
 * iteration is over (lct_stats.shrank, shrank_offset = the new size), and
 * every later refresh says the same.
 * @return LCT_OK (also when nothing changed, or for a stream),
 *         LCT_ERR_INVALID (not opened with LCT_FOLLOW), LCT_ERR_SYS (fstat
 *         or mmap failed; the old mapping stays), LCT_ERR_CHANGED (the file
 *         shrank; err->offset is its new size).
 */
lct_status lct_reader_refresh(lct_reader *reader, lct_error *err);

/**
 * Decode the frame whose length prefix is at file @p offset (as a warning
 * names it) as lct_next would, without moving the reader.  A frame the
 * reader would skip still has rec->offset, rec->length and rec->body (its
 * bytes) filled, for a look at what is there.  Mapped and read-whole
 * readers only.
 * @return 1 with @p rec filled; 0 for a malformed frame (the reason in
 *         @p why, a thread-local string, when not NULL);
 *         LCT_ERR_TRUNCATED (no whole frame there), LCT_ERR_CHANGED (its
 *         bytes are gone), LCT_ERR_INVALID (a streamed reader, an offset
 *         inside the header or past the end, NULL arguments).
 */
int lct_record_at(const lct_reader *reader, uint64_t offset, lct_record *rec,
                  const char **why);

/** What a reader has seen so far. */
typedef struct lct_stats {
    uint64_t records;          /**< records yielded */
    uint64_t skipped;          /**< malformed frames skipped */
    bool truncated;            /**< a partial trailing frame ended reading */
    uint64_t truncated_offset; /**< where that partial frame starts */
    uint64_t bytes_read;       /**< bytes consumed: header and whole frames */
    uint64_t file_size;        /**< size of the input (a pipe or other
                                    unsized stream: the bytes read so far) */
    bool shrank;               /**< the file lost bytes while being read */
    uint64_t shrank_offset;    /**< the file's size when the loss was seen:
                                    the first offset whose bytes are gone */
} lct_stats;

/** Fill @p out with the reader's counters (zeros for a NULL reader). */
void lct_reader_stats(const lct_reader *reader, lct_stats *out);

/**
 * The worst thing reading has met so far, sticky until lct_reader_rewind
 * (mpack's idea): after the loop, one call says whether the trace was
 * whole.  In order of precedence:
 * @return LCT_ERR_CHANGED (the file shrank while read), LCT_ERR_SYS (a
 *         streamed input failed to read), LCT_ERR_LIMIT (a pipe's frame
 *         over lct_open_options.max_stream_frame: reading stopped there;
 *         stats.truncated is set), LCT_ERR_TRUNCATED (a partial
 *         trailing frame), LCT_ERR_MALFORMED (frames were skipped),
 *         LCT_OK (nothing wrong so far), LCT_ERR_INVALID (NULL reader).
 */
lct_status lct_reader_status(const lct_reader *reader);

/** The name the reader was opened with (path, or the name given). */
const char *lct_reader_path(const lct_reader *reader);

/**
 * The whole input as one read-only byte view (the mapping, or the buffer
 * an LCT_NO_MMAP input was read into), for callers that scan raw bytes.
 * Lives as the reader.  {NULL, 0} for NULL and for a streamed reader.
 */
lct_bytes lct_reader_data(const lct_reader *reader);

/* MARK: - Sidecar index: record numbers kept between processes */

/**
 * A sidecar index: every record lct_next yields (its offset, t_mono,
 * t_wall and qualname), every frame it skips (with the warning it gave)
 * and where reading ended, saved beside the trace as PATH.lcti (or, in a
 * directory that cannot be written, in $XDG_CACHE_HOME/lct, else
 * ~/.cache/lct), so a later process reaches record N without reading
 * the N before it.  The file format is in docs/format.md ("Sidecar
 * index"); it is versioned and hashed whole.
 *
 * A sidecar is keyed to the trace's inode and device, size and mtime, and
 * hashes of its header frame and of the last frame indexed; it is never
 * trusted blindly.  lct_sidecar_load takes one that is damaged, for
 * another file, or stale (the trace is shorter, or its last indexed frame
 * changed) as no index at all; one for a trace that only grew since
 * serves the records it has (lct_sidecar_whole() false), and
 * lct_sidecar_build extends it rather than reading everything again.
 */
typedef struct lct_sidecar lct_sidecar;

/** One record of a sidecar. */
typedef struct lct_sidecar_row {
    uint64_t offset; /**< its frame's offset (for lct_record_at) */
    double t_mono, t_wall;
    uint32_t qualname; /**< see lct_sidecar_qualname */
} lct_sidecar_row;

/**
 * Index @p r's trace (a regular file, not LCT_LAZY) from its first record,
 * or, given @p old (a prefix lct_sidecar_load returned), from old's end.
 * Reads r to its end: its warnings are given as lct_next gives them.
 * @return LCT_OK, LCT_ERR_INVALID, LCT_ERR_NOMEM, LCT_ERR_CHANGED (the
 *         file shrank meanwhile), LCT_ERR_SYS.
 */
lct_status lct_sidecar_build(lct_reader *r, const lct_sidecar *old,
                             lct_sidecar **out, lct_error *err);

/**
 * Write @p s for @p r's trace, whole or not at all (a temporary name, then
 * rename); beside the trace, or in the cache directory when the trace's
 * directory cannot be written.  A file at that name that is not a
 * sidecar is never replaced.  @p where (may be NULL) receives the path.
 * @return LCT_OK, LCT_ERR_INVALID, LCT_ERR_NOMEM, LCT_ERR_SYS.
 */
lct_status lct_sidecar_save(const lct_sidecar *s, const lct_reader *r,
                            char *where, size_t wsz, lct_error *err);

/**
 * The sidecar of @p r's trace, checked against it (beside first, then
 * the cache directory).
 * @return LCT_OK (whole, or a prefix of a trace that grew),
 *         LCT_ERR_NOT_FOUND (none), LCT_ERR_CHANGED (stale, or for another
 *         file), LCT_ERR_MALFORMED (damaged), LCT_ERR_INVALID; the message
 *         names the sidecar and says which.
 */
lct_status lct_sidecar_load(const lct_reader *r, lct_sidecar **out,
                            lct_error *err);

/** Records the sidecar holds. */
uint64_t lct_sidecar_count(const lct_sidecar *s);
/** Whether it covers the trace as it is now (false: a prefix of it). */
bool lct_sidecar_whole(const lct_sidecar *s);
/** Record @p idx.  @return LCT_OK, LCT_ERR_INVALID (past the count). */
int lct_sidecar_get(const lct_sidecar *s, uint64_t idx, lct_sidecar_row *row);
/** A row's qualname (a view valid until lct_sidecar_free). */
lct_str lct_sidecar_qualname(const lct_sidecar *s, uint32_t id);
void lct_sidecar_free(lct_sidecar *s);

/**
 * Put @p r (mapped, or streamed from a regular file) where lct_next leaves
 * it after giving the first @p idx records (idx <= the count): its
 * position, counters and status as reading them would have left them,
 * and the warnings of the frames skipped before that point given again,
 * in the same words.  lct_next goes on from there (with idx = the count,
 * through what follows the last record: skips, a cut tail, records
 * appended since).
 * @return LCT_OK, LCT_ERR_INVALID.
 */
lct_status lct_reader_seek(lct_reader *r, const lct_sidecar *s, uint64_t idx,
                           lct_error *err);

/**
 * The first offset at or after @p from where a record frame could begin,
 * as lct_scan_file's threads find their starts (a plausible length, then
 * the bytes every recorded record begins with); the first record's offset
 * when @p from is at or before it.  A frame-like run of bytes inside a
 * value can be found too: a range read from it must check that the chain
 * of frames before it lands there (see lct_reader_seek_offset).
 * @return LCT_OK, LCT_ERR_NOT_FOUND (none before the end),
 *         LCT_ERR_INVALID (not a regular file read mapped or with pread).
 */
lct_status lct_reader_resync(const lct_reader *r, uint64_t from,
                             uint64_t *at);

/**
 * Read on from the frame at @p offset as if the file's records began
 * there: counters start from zero, and lct_next decodes, skips and warns
 * as ever.  For reading a byte range of a big file in a process of its
 * own: find its start with lct_reader_resync, read frames while they
 * start before the next range's start, and check that the last one ended
 * exactly there (else the next start was a false one).
 * @return LCT_OK, LCT_ERR_INVALID (a pipe, an offset outside the
 *         records).
 */
lct_status lct_reader_seek_offset(lct_reader *r, uint64_t offset,
                                  lct_error *err);

/* MARK: - Several traces on one timeline */

/**
 * A merge of several readers by t_wall (one trace per server process of
 * a fleet, say): a k-way merge that holds one record per reader, so its
 * memory grows with the number of readers, not with the records.  Ties in
 * t_wall go to the reader given first, then to record order.  That is
 * the order LMCache's `lmcache trace replay-events` builds (each file's
 * records in the order the files were given, then a stable sort by
 * t_wall), exactly so while no file's t_wall steps back; a record whose
 * t_wall is earlier than one before it in its own file is handed out in
 * its file's order and warned about (LCT_WARN_ORDER, through that
 * reader's log), since reaching the full sort's order there would mean
 * holding the file.  A NaN t_wall sorts first.
 *
 * The merge does not own its readers: close them after lct_merge_free.
 * Each reader skips, warns and counts as lct_next does (its stats and
 * status are its own).  A record handed out has the views lct_next gives;
 * a streamed reader's die at the next lct_merge_next.
 */
typedef struct lct_merge lct_merge;

/**
 * lct_merge_new flag: each record handed out has its t_mono replaced by
 * its t_wall less the first merged record's.  A file's t_mono counts from
 * its own process's start on its own clock, so only t_wall puts records
 * of several processes on one axis (with the hosts' clock skew).
 */
#define LCT_MERGE_TIMELINE 0x1u

/** Make a merge of @p n readers (n >= 1), none read yet; @p flags 0 or
 *  LCT_MERGE_TIMELINE.
 *  @return LCT_OK, LCT_ERR_INVALID, LCT_ERR_NOMEM. */
lct_status lct_merge_new(lct_reader *const *readers, size_t n,
                         unsigned flags, lct_merge **out, lct_error *err);

/**
 * The next record on the merged timeline; @p reader (may be NULL)
 * receives the number of the reader it came from, in the order given.
 * @return 1, 0 when every reader has ended, LCT_ERR_INVALID.
 */
int lct_merge_next(lct_merge *m, lct_record *rec, size_t *reader);

/** Start again from the first records (lct_reader_rewind on each). */
void lct_merge_rewind(lct_merge *m);

/** Every reader's counters summed (the first truncation and shrink). */
void lct_merge_stats(const lct_merge *m, lct_stats *sum);

/** Records so far that came after a later t_wall of their own file. */
uint64_t lct_merge_backsteps(const lct_merge *m);

/** The number of readers, and reader @p i (NULL past the end). */
size_t lct_merge_count(const lct_merge *m);
lct_reader *lct_merge_reader(const lct_merge *m, size_t i);

void lct_merge_free(lct_merge *m);

/* MARK: - Warnings */

/** Why a warning was raised. */
typedef enum lct_warning_kind {
    LCT_WARN_MALFORMED = 1, /**< a frame was skipped; reading goes on */
    LCT_WARN_TRUNCATED = 2, /**< a partial trailing frame ended reading */
    LCT_WARN_SHRANK = 3,    /**< the file shrank while mapped: reading ends */
    LCT_WARN_ORDER = 4      /**< lct_merge: a file's t_wall stepped back */
} lct_warning_kind;

/**
 * Receives each warning.  @p offset is the frame's offset (for a truncated
 * body, the body's, as the reference reader says); @p message is one line
 * without the path or a newline, valid only during the call.
 */
typedef void (*lct_log_fn)(void *ctx, const lct_reader *reader,
                           lct_warning_kind kind, uint64_t offset,
                           const char *message);

/**
 * Route the reader's warnings to @p fn (with @p ctx).  NULL silences them.
 * The default, until this is called, prints one line to stderr:
 * "lct: WARNING: PATH: MESSAGE".  Counters are kept either way.
 */
void lct_reader_set_log(lct_reader *reader, lct_log_fn fn, void *ctx);

/**
 * Send only warnings of these kinds to the log function: a mask of
 * LCT_WARN_MASK(kind) bits (the default: every kind).  A warning of
 * another kind is counted but not even formatted.  (A run of empty frames,
 * zero bytes where frames should be, is stepped over in bulk either way,
 * with one check of the file for the run, and a warning per frame when
 * they are wanted.)
 */
void lct_reader_set_log_kinds(lct_reader *reader, unsigned kinds);
#define LCT_WARN_MASK(kind) (1u << (kind))

/** The default log function, for callbacks that want to chain to it. */
void lct_log_stderr(void *ctx, const lct_reader *reader,
                    lct_warning_kind kind, uint64_t offset,
                    const char *message);

/* MARK: - Files that shrink while mapped */

/**
 * Install, once per process, a SIGBUS handler for liblct's mappings.  A
 * fault inside the mapping of an open reader (the file was truncated
 * under it) maps zero-filled memory over the rest of that mapping, so the
 * read goes on, and records the first lost offset on the reader; lct_next
 * and lct_scan_run then yield nothing that touches lost bytes and end with
 * LCT_WARN_SHRANK and lct_stats.shrank.  A fault anywhere else goes to the
 * handler installed before, or kills the process as it would have.
 * Every mapped reader is guarded, however many are open (a reader whose
 * mapping cannot be registered is refused with LCT_ERR_NOMEM rather than
 * left unguarded).  Safe to call more than once.
 * @return LCT_OK, LCT_ERR_SYS (sigaction failed).
 */
lct_status lct_guard_install(lct_error *err);

/**
 * Whether the bytes of @p rec you have read so far were the file's: false
 * when the file shrank and the loss reaches into the record.  Read the
 * views first, then ask: a loss shows as zeros after the record too, so
 * this costs an fstat(2) only when those read as zeros (or at the last
 * record).  Always true for read or streamed copies and caller buffers.
 */
bool lct_record_intact(const lct_reader *reader, const lct_record *rec);

/* MARK: - Frame index and parallel scans */

/**
 * An index of record frames: the offset of every complete frame after the
 * header (about 8 bytes per frame), for random access and for splitting
 * work.  It refers to its reader's data: free it before lct_close().
 */
typedef struct lct_index lct_index;

/**
 * Build the index in one pass over the length prefixes only (bodies are
 * not decoded, so malformed frames are indexed too).  A partial trailing
 * frame ends the index; it is not logged (the reader's log, position and
 * counters are untouched): see lct_index_truncation().
 * @return LCT_OK, LCT_ERR_NOMEM, LCT_ERR_INVALID (also for a streamed
 *         reader, which has no random access).
 */
lct_status lct_index_build(const lct_reader *reader, lct_index **out,
                    lct_error *err);

/**
 * Whether a partial trailing frame ended the index: true with the warning
 * lct_next gives for it and the offset that warning names (the frame's,
 * or for a cut body the body's, exactly as lct_next's log receives it);
 * the message lives as the index.  False for a clean end.  Either pointer
 * may be NULL.  (lct_scan_run's stats give where the partial frame starts.)
 */
bool lct_index_truncation(const lct_index *index, uint64_t *offset,
                          const char **message);

/** Frames in the index (records plus frames that will be skipped). */
uint64_t lct_index_count(const lct_index *index);

/** File offset of frame @p i (its length prefix); UINT64_MAX if out of
 *  range. */
uint64_t lct_index_offset(const lct_index *index, uint64_t i);

/**
 * Decode frame @p i as lct_next would (with the reader's flags), without
 * touching the reader's position, counters or log.  Safe from several
 * threads at once.
 * @return 1 with @p rec filled; 0 if the frame is malformed (the reason in
 *         @p why when not NULL, a constant or thread-local string);
 *         LCT_ERR_CHANGED if the file shrank and the frame's bytes are
 *         gone; LCT_ERR_INVALID for a bad index or NULL arguments.
 */
int lct_index_record(const lct_index *index, uint64_t i, lct_record *rec,
                     const char **why);

/** Free the index; NULL does nothing. */
void lct_index_free(lct_index *index);

/** Per-record callback of a scan; return non-zero to stop that thread. */
typedef int (*lct_scan_record_fn)(void *state, const lct_record *rec);
/** Per-skipped-frame callback of a scan (may be NULL). */
typedef void (*lct_scan_skip_fn)(void *state, uint64_t offset,
                                 const char *reason);

/** How to run a parallel scan. */
typedef struct lct_scan {
    /** 0: one per CPU the process may run on (its affinity mask, as
     *  nproc(1) counts; taskset or a container's cpuset narrow it) */
    unsigned threads;
    lct_scan_record_fn on_record; /**< required */
    lct_scan_skip_fn on_skip;     /**< optional */
    /** states[t] is passed to thread t's callbacks; NULL passes NULL.
     *  Must hold lct_scan_threads() entries. */
    void **states;
    /** lct_scan_file only: empty a state again (free what on_record
     *  gathered), for when the file must be read again by one thread.
     *  Without it, lct_scan_file uses one thread. */
    void (*on_reset)(void *state);
    /** lct_scan_run only: the frames [frames_from, frames_to) of the
     *  index, for work taken a batch at a time (0, 0: all of them).
     *  Warnings, stats and the cut tail are the range's: the tail only
     *  when the range reaches the index's end. */
    uint64_t frames_from, frames_to;
    /** lct_scan_file only, optional: a run of empty frames (zero bytes
     *  where frames should be, as a crash can leave) in one call, from
     *  its first frame's offset, instead of one on_skip a frame; each is
     *  a skip in the stats and the warnings all the same. */
    void (*on_empty_run)(void *state, uint64_t offset, uint64_t frames);
} lct_scan;

/** How many threads lct_scan_run will use for @p scan on @p index
 *  (never more than there are frames in its range, at least 1). */
unsigned lct_scan_threads(const lct_scan *scan, const lct_index *index);

/**
 * Run scan->on_record for every record of the index on scan->threads
 * POSIX threads.  Thread t gets the t-th contiguous range of frames
 * (ranges split by bytes, so threads get similar work) and sees its
 * records in file order; merge per-thread states in thread order to get
 * file order.  @p out (may be NULL) receives records and skipped summed
 * over threads, the truncation found when the index was built, and a
 * shrink if one was found.  The warnings lct_next would give (skips, the
 * cut tail, a shrink) go to the reader's log after the threads are done,
 * in file order and in the same words; the reader's position and
 * counters are untouched.
 * Allocation: one small array per run, 8 bytes per skipped frame, none
 * per record.
 * @return LCT_OK, LCT_ERR_SYS (a thread could not start), LCT_ERR_NOMEM,
 *         LCT_ERR_INVALID.
 */
lct_status lct_scan_run(const lct_index *index, const lct_scan *scan,
                 lct_stats *out, lct_error *err);

/**
 * Like lct_scan_run, in one pass over the file and without an index: the
 * file is split by bytes, each thread finds the first record frame at or
 * after its split point (the bytes every recorded record begins with,
 * after a plausible length) and reads its range: through the mapping
 * (filled ahead of it, as lct_next fills it) when the reader maps, with
 * pread(2) into its own buffer under LCT_STREAM.  A split holds when the previous thread's chain of frames
 * lands exactly on the next thread's start; if one does not (damage, or
 * record-like bytes inside a string), every state is passed to
 * scan->on_reset and the file is read again by one thread.  So the
 * records, skips, warnings (through the reader's log, after the threads,
 * in file order) and stats always equal lct_next's.  Views passed to the
 * callbacks live only during the call.  The reader must read a regular
 * file (mapped, or LCT_STREAM); its position and counters are untouched.
 * A mapped file cut under the scan ends it where it was cut (stats.shrank,
 * as lct_next says it).  Memory: under LCT_STREAM a buffer per thread,
 * bounded by its largest frame; 8 bytes per skipped frame.
 * @return LCT_OK, LCT_ERR_INVALID (a pipe or a buffer; NULL arguments),
 *         LCT_ERR_SYS (a thread could not start), LCT_ERR_NOMEM.
 */
lct_status lct_scan_file(const lct_reader *reader, const lct_scan *scan,
                         lct_stats *out, lct_error *err);

/* MARK: = Layer: lib/render (docs/architecture.md) */

/* MARK: - JSON rendering */

/**
 * Where rendered text goes: called with consecutive pieces of output.
 * Return 0 to go on; anything else stops rendering (the render call then
 * returns LCT_ERR_SYS with errno as the sink left it).
 */
typedef int (*lct_write_fn)(void *ctx, const char *data, size_t len);

/** Non-str map keys nested in one another that still print as JSON text
 *  (see lct_value_write_json). */
#define LCT_JSON_MAX_KEY_NESTING 3

/**
 * Render a value as JSON the way msgspec.json prints the decoded value, so
 * output compares with the Python tooling:
 * - str as a JSON string escaped per RFC 8259 (non-ASCII kept as UTF-8;
 *   invalid UTF-8, possible only under LCT_LAZY, becomes U+FFFD);
 * - bin as standard base64 with padding;
 * - integers exactly; floats as the shortest text that reads back to the
 *   same double (float32 via its double value); NaN and infinities as null;
 * - a timestamp ext (-1) as an RFC 3339 UTC string, microseconds truncated;
 *   other ext as {"ext": TYPE, "data": BASE64};
 * - map keys that are not str as strings holding their JSON text; a
 *   repeated key once, at its first position, with its last value.  Each
 *   key nested in such a key doubles the escaping of what it holds, so a
 *   non-str key inside more than LCT_JSON_MAX_KEY_NESTING others prints
 *   as "msgpack:" and the base64 of its msgpack bytes: output stays within
 *   a constant factor of the input (about 100x at worst), never 2^depth.
 * Output is produced in chunks of up to a few KiB through @p write.
 * @return LCT_OK, LCT_ERR_MALFORMED or LCT_ERR_DEPTH (nothing sensible
 *         to print: output so far is incomplete), LCT_ERR_SYS (the sink
 *         stopped), LCT_ERR_NOMEM (a map of many keys needed an index).
 */
lct_status lct_value_write_json(lct_value v, lct_write_fn write, void *ctx);

/**
 * Render a record as one JSON object, without a newline:
 * {"offset":N,"t_mono":F,"t_wall":F,"qualname":"...","args":{...}}.
 * Returns as lct_value_write_json.
 */
lct_status lct_record_write_json(const lct_record *rec, lct_write_fn write,
                          void *ctx);

/** Options of the _opts renderers. */
enum {
    /** Print a codec wrapper {"__t__": T, "v": V} as V, at every depth, so
     *  a path does not depend on whether keys were a list or a tuple. */
    LCT_JSON_UNWRAP = 1u << 0,
    /** Print bin as lowercase hex instead of base64 (LMCache's logs show
     *  hashes in hex). */
    LCT_JSON_BIN_HEX = 1u << 1
};

/** lct_value_write_json and lct_record_write_json with options
 *  (LCT_JSON_UNWRAP, LCT_JSON_BIN_HEX, or 0 for the plain ones).  Return
 *  as those. */
lct_status lct_value_write_json_opts(lct_value v, unsigned flags,
                                     lct_write_fn write, void *ctx);
lct_status lct_record_write_json_opts(const lct_record *rec, unsigned flags,
                                      lct_write_fn write, void *ctx);

/**
 * Render a header as one JSON object, without a newline: format_version,
 * level, trace_schema_version, t_mono_start, t_wall_start, sm_config_json,
 * sm_config_digest, and level_meta when present (the fixtures' layout).
 */
lct_status lct_header_write_json(const lct_header *h, lct_write_fn write, void *ctx);

/** Room for any lct_json_format_double() result, NUL included. */
#define LCT_DOUBLE_BUFSIZE 32

/**
 * Write the shortest decimal text (up to 17 significant digits) that
 * reads back to @p d, always with a '.' or an exponent ("1.0", "1e-300");
 * "null" for NaN and infinities.  Returns the length.
 */
size_t lct_json_format_double(double d, char out[LCT_DOUBLE_BUFSIZE]);

/**
 * Write @p len bytes at @p s as a quoted JSON string: RFC 8259 escapes,
 * invalid UTF-8 as U+FFFD.  Returns LCT_OK or LCT_ERR_SYS (sink stopped).
 */
lct_status lct_json_write_string(const char *s, size_t len, lct_write_fn write,
                          void *ctx);

/* MARK: = Layer: lib/write (docs/architecture.md) */

/* MARK: - Writing traces */

/**
 * A trace writer: builds header and record frames with a small msgpack
 * builder and writes each frame with one write(2), so a frame under
 * PIPE_BUF is appended atomically, as the recorder relies on.  Bytes are
 * those msgspec writes for the same values: the smallest encoding of every
 * integer, string, binary and container; floats as float64.
 *
 * Use: lct_writer_begin(), then values (one map for a header or record),
 * then lct_writer_end() writes the frame.  Building never fails on its
 * own; an allocation failure is remembered and reported by
 * lct_writer_end().  A writer is not safe to use from two threads.
 */
typedef struct lct_writer lct_writer;

/**
 * Open @p path for writing: created (0644) and truncated, unless @p append
 * (then frames are appended to what is there).
 * @return LCT_OK, LCT_ERR_SYS, LCT_ERR_NOMEM, LCT_ERR_INVALID.
 */
lct_status lct_writer_open(const char *path, bool append, lct_writer **out,
                    lct_error *err);

/** A writer on a descriptor that stays the caller's.
 *  @return LCT_OK, LCT_ERR_NOMEM, LCT_ERR_INVALID (fd < 0 or out NULL). */
lct_status lct_writer_open_fd(int fd, lct_writer **out, lct_error *err);

/** Free the writer (closing the file lct_writer_open opened); NULL is
 *  fine.  A frame begun and not ended is dropped. */
void lct_writer_close(lct_writer *w);

/** Start a frame (discarding any unfinished one). */
void lct_writer_begin(lct_writer *w);

/**
 * Write the frame built since lct_writer_begin: the 4-byte length and the
 * body in one write(2) (retried on a short write or EINTR).
 * @return LCT_OK, LCT_ERR_NOMEM (building ran out of memory), LCT_ERR_SYS
 *         (write failed), LCT_ERR_INVALID (no frame begun).
 */
lct_status lct_writer_end(lct_writer *w, lct_error *err);

/* Values, appended to the current frame.  Map and array give the count;
 * the caller then writes that many values (pairs: key then value). */
void lct_writer_map(lct_writer *w, uint32_t pairs);
void lct_writer_array(lct_writer *w, uint32_t count);
/** A str; @p len bytes that should be UTF-8 (not checked). */
void lct_writer_str(lct_writer *w, const char *s, size_t len);
/** A str from a NUL-terminated C string. */
void lct_writer_cstr(lct_writer *w, const char *s);
void lct_writer_bin(lct_writer *w, const void *p, size_t len);
void lct_writer_int(lct_writer *w, int64_t v);
void lct_writer_uint(lct_writer *w, uint64_t v);
void lct_writer_float64(lct_writer *w, double v);
void lct_writer_bool(lct_writer *w, bool v);
void lct_writer_nil(lct_writer *w);
void lct_writer_ext(lct_writer *w, int8_t type, const void *p, size_t len);
/** Start a codec-wrapped value {"__t__": tag, "v": ...}: write the
 *  payload next. */
void lct_writer_codec(lct_writer *w, const char *tag);
/**
 * Copy a decoded value, re-encoded the way msgspec would encode it (so a
 * value read from a trace msgspec wrote comes out byte for byte).  A value
 * that is not well-formed writes nil and is reported by lct_writer_end as
 * LCT_ERR_MALFORMED.
 */
void lct_writer_value(lct_writer *w, lct_value v);

/**
 * A whole header frame, keys in the recorder's order (type, magic,
 * format_version, level, trace_schema_version, t_mono_start, t_wall_start,
 * sm_config_json, sm_config_digest, then level_meta when @p h has it).
 * Uses h's level, trace_schema_version, times and strings; magic and
 * format_version are always "LMCT" and 1.
 * @return as lct_writer_end(), and LCT_ERR_INVALID for NULL arguments;
 *         LCT_ERR_MALFORMED if h->level_meta is not a well-formed value.
 */
lct_status lct_writer_header(lct_writer *w, const lct_header *h, lct_error *err);

/**
 * Begin a record frame in the recorder's layout: {"type": "record",
 * "t_mono", "t_wall", "qualname", "args": -- and the caller writes the
 * args map next, then calls lct_writer_end().
 */
void lct_writer_record_begin(lct_writer *w, double t_mono, double t_wall,
                             const char *qualname, size_t qualname_len);

/* MARK: - Output files */

/**
 * An output file that never destroys an input.  lct_output_open() refuses
 * a path that is one of @p inputs (the same device and inode, links
 * followed; "-" is standard input among inputs and standard output as
 * the path) with LCT_ERR_IS_INPUT, before anything is opened for writing.
 * Otherwise a regular file (new, or existing, through links) is written
 * under a temporary name in its directory, and lct_output_commit() renames
 * it into place: until then, and after lct_output_abort() or a failure,
 * what was at the path is untouched and no partial file is left.  SIGINT,
 * SIGTERM and SIGHUP remove the temporary file (unless the program has
 * its own handlers).  Standard output, devices and FIFOs are written in
 * place.  A new file gets mode 0666 less the umask; a replaced one keeps
 * its mode.
 */
typedef struct lct_output lct_output;

/** Only the check: LCT_OK, or LCT_ERR_IS_INPUT naming both paths. */
lct_status lct_output_check(const char *path, const char *const *inputs,
                            size_t ninputs, lct_error *err);

/** @return LCT_OK, LCT_ERR_IS_INPUT, LCT_ERR_SYS (cannot create the
 *  file; err names it and errno), LCT_ERR_NOMEM, LCT_ERR_INVALID. */
lct_status lct_output_open(const char *path, const char *const *inputs,
                           size_t ninputs, lct_output **out, lct_error *err);

/** The descriptor to write to (the temporary file's, or stdout's). */
int lct_output_fd(const lct_output *out);

/** Close (a close that fails, e.g. a full disk, is an error) and rename
 *  into place; @p out is freed either way.  @return LCT_OK, LCT_ERR_SYS
 *  (err->message names the path and says why). */
lct_status lct_output_commit(lct_output *out, lct_error *err);

/** Give up: the temporary file is removed; @p out is freed. */
void lct_output_abort(lct_output *out);

/* MARK: - Replay pacing */

/**
 * Paces a replay the way `lmcache trace replay` does: record i is
 * dispatched when t_mono(i) seconds have passed since the start (divided
 * by the speed factor), never earlier; a replayer that falls behind lags
 * rather than skips.  Deadlines are absolute CLOCK_MONOTONIC times
 * computed from the start, so sleeping errors do not accumulate.
 */
typedef struct lct_pacer lct_pacer;

/**
 * A new pacer.  @p speed 1.0 is the recorded pace; 2.0 replays twice as
 * fast (departing from the reference, which never speeds a trace up).
 * The clock starts at the first lct_pacer_wait (or lct_pacer_start).
 * @return LCT_OK, LCT_ERR_INVALID (speed not > 0), LCT_ERR_NOMEM.
 */
lct_status lct_pacer_new(double speed, lct_pacer **out);

/** Start the clock now (optional: the first wait starts it otherwise). */
void lct_pacer_start(lct_pacer *p);

/**
 * Sleep until the record at @p t_mono is due, then return.  *lateness
 * (may be NULL) gets how late the return is, in seconds: >= 0 always
 * (0 only if the clock read exactly the deadline); large when behind.
 * @return LCT_OK, LCT_ERR_SYS (the clock failed), LCT_ERR_INVALID.
 */
lct_status lct_pacer_wait(lct_pacer *p, double t_mono, double *lateness);

/**
 * When a record at @p t_mono is due, in seconds after the start:
 * t_mono / speed, 0 for a time at or before the start (or NaN), at most
 * 1e9 (a corrupt time).  What lct_pacer_wait sleeps to.
 */
double lct_pacer_offset(const lct_pacer *p, double t_mono);

/** Free the pacer; NULL is fine. */
void lct_pacer_free(lct_pacer *p);

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
    lct_object_key cached[LCT_KEY_ITER_CACHE];
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
 * task spec, its group's layout), 0 when there is no layout or it cannot
 * be sized.
 * @return 1, 0 at the end, or LCT_ERR_TYPE / LCT_ERR_MALFORMED (a key
 *         that is not an ObjectKey).
 */
int lct_key_iter_next(lct_key_iter *it, lct_object_key *key, uint64_t *bytes,
                      lct_error *err);

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

/** The largest finite stack distance of a read, in keys (scaled under
 *  sampling): capacities above it hit what an infinite cache hits. */
uint64_t lct_mrc_max_distance(const lct_mrc *mrc);

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


/* MARK: - One capacity simulated: LMCache's cache simulator */

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
} lct_sim_options;

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
/** The report (a call still open is ended first); free its series with
 *  lct_sim_report_free().  @return LCT_OK, LCT_ERR_NOMEM. */
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
typedef struct lct_backend_config {
    unsigned workers;  /**< threads that call at once; worker numbers are
                            0 .. workers-1, one call per worker at a time */
    bool fsync;        /**< dir: fsync each stored file */
    bool direct;       /**< dir: O_DIRECT (buffers are 4096-aligned) */
    bool keep;         /**< dir, redis: keep what an earlier run stored
                            (else removed at open: dir's .kv files,
                            redis's lct:* keys) */
    unsigned pipeline; /**< redis: commands a connection has outstanding
                            (redis-benchmark's -P) */
    unsigned connections; /**< redis: connections each worker spreads its
                               pipeline over, by key (0: 1), as
                               redis-benchmark's -c spreads its load */
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
    /** Called from the reading thread about every 4096 records. */
    void (*progress)(void *ctx, uint64_t records, uint64_t offset);
    void *progress_ctx;
    /** Above 0: an LRU L1 of this many keys (bytes with l1_in_bytes) in
     *  front of the backend, as the mapping above says. */
    uint64_t l1_capacity;
    bool l1_in_bytes;
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

#ifdef __cplusplus
}
#endif

#endif /* LCT_H */
