/*
 * lct_core.h - what every other header of liblct builds on: the version,
 * status codes and lct_error, the views (lct_str, lct_bytes, lct_value)
 * and reading msgpack values through them, visiting every value, large
 * arrays, and the two views reading produces (lct_header, lct_record).
 * The layers lib/base and lib/msgpack (docs/architecture.md).  Include
 * lct.h for the whole library, or this header and the ones you use.
 *
 * Names
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
 * Lifetimes
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
 * Threads
 *
 * Views are plain read-only memory and may be read from any thread while
 * their reader lives.  The value and visit functions keep no state
 * between calls and are safe from any thread.
 */
#ifndef LCT_CORE_H
#define LCT_CORE_H

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

/** A UTF-8 string view into the reader's bytes; not NUL-terminated.
 *  Valid until lct_close() of the reader it came from (a streamed
 *  record's: until the next lct_next()); never modify or free it. */
typedef struct lct_str {
    const char *ptr;
    size_t len;
} lct_str;

/** A byte-string view (msgpack bin, ext data, header magic), into the
 *  reader's bytes: valid as an lct_str is. */
typedef struct lct_bytes {
    const unsigned char *ptr;
    size_t len;
} lct_bytes;

/**
 * A view of one msgpack value: it starts at ptr, and len is how many bytes
 * are available to it (the rest of its frame, or exactly its size; the
 * value may be shorter than len).  Every accessor bounds-checks against
 * len and reports LCT_ERR_MALFORMED rather than read past it.
 * A zero view ({NULL, 0}) stands for "absent".  Valid as an lct_str is
 * (or, made with lct_value_from(), as long as your buffer).
 */
typedef struct lct_value {
    const unsigned char *ptr;
    size_t len;
} lct_value;

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

/* MARK: - The format's limits */

/** The trace schema versions this library reads. */
#define LCT_SCHEMA_MIN 1
#define LCT_SCHEMA_MAX 2
/** The framing layout version this library reads and writes. */
#define LCT_FORMAT_VERSION 1
/** Containers may nest this deep inside one value before it is refused. */
#define LCT_MAX_DEPTH 512

/* MARK: - Sinks */

/**
 * Where written text or bytes go (JSON rendering, a curve's export):
 * called with consecutive pieces of output.  Return 0 to go on; anything
 * else stops the writing call, which then returns LCT_ERR_SYS with errno
 * as the sink left it.
 */
typedef int (*lct_write_fn)(void *ctx, const char *data, size_t len);

/* MARK: - What reading produces */

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

#ifdef __cplusplus
}
#endif

#endif /* LCT_CORE_H */
