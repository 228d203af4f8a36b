/*
 * lct_read.h - reading a trace: opening it (mapped, read whole or
 * streamed), iterating its records, the sidecar index kept between
 * processes, several traces merged on one timeline, warnings, files that
 * shrink while mapped, the frame index and parallel scans.  The layer
 * lib/read (docs/architecture.md).  A .lct trace is a sequence of frames,
 * each a 4-byte big-endian length then a msgpack body; the first is the
 * header, every later one a record (docs/format.md).  liblct accepts,
 * skips and refuses exactly what LMCache's reader.py does.
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
 * Lifetimes
 *
 * A reader's views (its header, its records and every value taken from
 * them) live until lct_close(), except under LCT_STREAM and LCT_ONE_PASS,
 * where a record's views live until the next lct_next() (lct_core.h,
 * "Lifetimes").  An index, a merge and a sidecar are freed by their own
 * _free and borrow the readers they were made from.
 *
 * Caveats of a mapping, and what is guaranteed
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
 * Threads
 *
 * - A reader (lct_reader) or a merge is used by one thread at a time:
 *   share one only under your own lock.  lct_close() must not race any
 *   call on the same reader, and a call blocked in a pipe's read() is a
 *   call: close after it returns.
 * - Different readers may be used from different threads at once, over
 *   the same file or not (each maps or reads on its own).
 * - Validating a record (lct_next, the scans) keeps, per thread, copies
 *   of the ObjectKeys last walked whole, so a key like one of them is
 *   checked by comparing bytes; each is confirmed against the record's
 *   own bytes, so what was read before never changes an answer.
 * - lct_scan_file / lct_scan_run start their own threads: the callback
 *   runs on them, one range of frames each.
 * - The SIGBUS guard (lct_guard_install) covers every mapped reader of
 *   every thread, however many are open.
 * - The Python module builds its sharing on these rules: its TraceReader
 *   holds a lock around each call into its reader (docs/python.md,
 *   "Threads").
 */
#ifndef LCT_READ_H
#define LCT_READ_H

#include "lct_core.h"

#ifdef __cplusplus
extern "C" {
#endif

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
     * encoder's usual form in at most 32 runs of alike keys (a list that
     * mixes salted and unsalted keys is several runs), so the key
     * iterator does not walk it again.  Only the last record a thread decoded is
     * handed over; any other record's keys are found by the iterator's
     * own walk.  The keys are the same with or without the flag.
     */
    LCT_KEYS = 1u << 7
};

/* LCT_SCHEMA_MIN/MAX, LCT_FORMAT_VERSION and LCT_MAX_DEPTH are in
 * lct_core.h: the writer and the value walker obey them too. */

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


/** The header of an open reader; NULL for NULL.  Lives as the reader. */
const lct_header *lct_reader_header(const lct_reader *reader);


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
 * Validating keeps per thread the ObjectKeys last walked whole (see
 * Threads above); each is confirmed against the record's bytes.
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

#ifdef __cplusplus
}
#endif

#endif /* LCT_READ_H */
