/*
 * lct_write.h - writing: traces (headers and records, byte for byte what
 * LMCache's msgspec encoder writes) and the pacer a replay keeps time
 * with.  The layer lib/write
 * (docs/architecture.md).
 *
 * Lifetimes: a writer and a pacer own what they hold until their close or
 * free; strings and views given to them are
 * copied or written before the call returns.
 *
 * Threads: each writer or pacer is used by one thread at a time;
 * different ones may be used from different threads at once.
 */
#ifndef LCT_WRITE_H
#define LCT_WRITE_H

#include "lct_core.h"

#ifdef __cplusplus
extern "C" {
#endif

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

#ifdef __cplusplus
}
#endif

#endif /* LCT_WRITE_H */
