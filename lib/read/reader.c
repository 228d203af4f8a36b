/*
 * reader.c - the lct_reader object: open (source, header frame, header
 * checks in the reference order), iteration over record frames with the
 * skip and truncation rules, counters, and warnings.
 *
 * Long because open, iteration and the skip and truncation rules share
 * the reader's state, and the rules are checked against the reference
 * reader's most easily read in one place.
 */
#include "read/decode_internal.h"
#include "base/error_internal.h"
#include "read/frame_internal.h"
#include "msgpack/msgpack_internal.h"
#include "read/reader_internal.h"
#include "read/source_internal.h"
#include "read/warn_internal.h"
#include "lct_read.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>


/* Record what reading met, keeping the worst (precedence as documented
 * for lct_reader_status). */
static void note_status(lct_reader *r, lct_status st)
{
    static const lct_status order[] = {LCT_OK, LCT_ERR_MALFORMED,
                                       LCT_ERR_TRUNCATED, LCT_ERR_LIMIT,
                                       LCT_ERR_SYS, LCT_ERR_CHANGED};
    size_t have = 0, got = 0;
    for (size_t i = 0; i < sizeof order / sizeof *order; i++) {
        if (order[i] == r->status)
            have = i;
        if (order[i] == st)
            got = i;
    }
    if (got > have)
        r->status = st;
}

void lct_log_stderr(void *ctx, const lct_reader *reader,
                    lct_warning_kind kind, uint64_t offset,
                    const char *message)
{
    (void)ctx;
    (void)kind;
    (void)offset;
    fprintf(stderr, "lct: WARNING: %s: %s\n",
            reader ? reader->shown_name : "?", message);
}

lct_status lct_reader_status(const lct_reader *r)
{
    return r ? r->status : LCT_ERR_INVALID;
}

/* A version field as the file has it, for messages: int64 or uint64. */
static void version_text(const lct_header *h, const char *key, char *out,
                         size_t outsz)
{
    lct_value v;
    int64_t i;
    uint64_t u;
    bool found = lct_map_find(h->body, key, &v) == LCT_OK;
    if (found && lct_value_get_int64(v, &i) == LCT_OK)
        snprintf(out, outsz, "%" PRId64, i);
    else if (found && lct_value_get_uint64(v, &u) == LCT_OK)
        snprintf(out, outsz, "%" PRIu64, u);
    else
        snprintf(out, outsz, "?");
}

/* The frame at the reader's position, from whichever source it has. */
static lct__frame_status frame_here(lct_reader *r, lct__frame *f)
{
    lct__source *s = &r->source;
    if (s->kind == LCT__SOURCE_STREAM) {
        unsigned how = (r->flags & LCT_FOLLOW) ? LCT__STREAM_FOLLOW : 0;
        if (r->pos == 0)
            how |= LCT__STREAM_HEADER;
        lct__frame_status fs = lct__stream_frame(s, r->pos, how, f);
        r->stats.file_size = s->size;
        return fs;
    }
    return lct__frame_at(s->data, s->size, r->pos, f);
}

/* The header's bytes, where its views may point: the frame itself, or a
 * copy when the source will not keep it (a stream reuses its buffer; a
 * followed file is mapped anew). */
static int header_bytes(lct_reader *r, const lct__frame *f,
                        const unsigned char **body, lct_error *err)
{
    *body = f->body;
    if (r->source.kind != LCT__SOURCE_STREAM && !(r->flags & LCT_FOLLOW))
        return LCT_OK;
    r->header_copy = malloc(f->kept ? f->kept : 1);
    if (!r->header_copy)
        return lct__fail(err, LCT_ERR_NOMEM, ENOMEM, 0,
                         "trace file '%s': out of memory copying the header",
                         r->shown_name);
    memcpy(r->header_copy, f->body, f->kept);
    *body = r->header_copy;
    return LCT_OK;
}

/* Read and judge the header frame, in the order the reference does. */
static int open_header(lct_reader *r, lct_error *err)
{
    const char *name = r->shown_name;
    lct__frame f;
    r->pos = 0;
    switch (frame_here(r, &f)) {
    case LCT__FRAME_READ_ERROR:
        return lct__fail(err, LCT_ERR_SYS, r->source.read_errno, f.available,
                         "trace file '%s': read failed at offset %" PRIu64
                         ": %s",
                         name, f.available, strerror(r->source.read_errno));
    case LCT__FRAME_END:
        return lct__fail(err, LCT_ERR_EMPTY, 0, 0,
                         "trace file '%s' is empty: unexpected EOF reading "
                         "frame length",
                         name);
    case LCT__FRAME_SHORT_PREFIX:
        return lct__fail(err, LCT_ERR_TRUNCATED, 0, 0,
                         "trace file '%s': truncated frame length prefix at "
                         "offset 0",
                         name);
    case LCT__FRAME_SHORT_BODY:
        return lct__fail(err, LCT_ERR_TRUNCATED, 0, LCT__PREFIX_SIZE,
                         "trace file '%s': truncated frame body at offset %d "
                         "(got %" PRIu64 " of %" PRIu32 ")",
                         name, LCT__PREFIX_SIZE, f.available, f.length);
    case LCT__FRAME_TOO_LONG:
        return lct__fail(err, LCT_ERR_LIMIT, 0, 0,
                         "trace file '%s': header frame at offset 0 claims "
                         "%" PRIu32 " bytes, more than a stream may hold (%"
                         PRIu64 ": max_stream_frame, lct --max-frame)",
                         name, f.length, r->source.max_frame);
    case LCT__FRAME_OK:
        break;
    }

    char why[LCT__WHY_SIZE];
    lct_header *h = &r->header;
    const unsigned char *body;
    int rc = header_bytes(r, &f, &body, err);
    if (rc != LCT_OK)
        return rc;
    if (f.kept < f.length) /* its first bytes refused it: not read on */
        lct__fields_doomed_why(body, (size_t)f.kept, f.length, why);
    if (f.kept < f.length || lct__header_decode(body, f.kept, h, why) != LCT_OK)
        return lct__fail(err, LCT_ERR_MALFORMED, 0, 0,
                         "trace file '%s': undecodable header at offset 0: %s",
                         name, why);
    h->size = LCT__PREFIX_SIZE + (uint64_t)f.length;

    if (h->magic.len != 4 || memcmp(h->magic.ptr, "LMCT", 4) != 0) {
        char got[64];
        lct__repr_bytes(got, sizeof got, h->magic.ptr,
                        h->magic.len > 16 ? 16 : h->magic.len);
        return lct__fail(err, LCT_ERR_MAGIC, 0, 0,
                         "trace file '%s': bad magic (got %s%s, expected "
                         "b'LMCT')",
                         name, got, h->magic.len > 16 ? "..." : "");
    }
    char version[32];
    if (h->format_version != LCT_FORMAT_VERSION) {
        version_text(h, "format_version", version, sizeof version);
        return lct__fail(err, LCT_ERR_VERSION, 0, 0,
                         "trace file '%s': unsupported format_version %s "
                         "(this build expects %d)",
                         name, version, LCT_FORMAT_VERSION);
    }
    if (h->trace_schema_version < LCT_SCHEMA_MIN ||
        h->trace_schema_version > LCT_SCHEMA_MAX) {
        version_text(h, "trace_schema_version", version, sizeof version);
        return lct__fail(err, LCT_ERR_SCHEMA, 0, 0,
                         "trace file '%s': unsupported trace_schema_version "
                         "%s (this build reads 1, 2)",
                         name, version);
    }
    return LCT_OK;
}

static int reader_new(const char *name, unsigned flags, lct_reader **out,
                      lct_error *err)
{
    lct_reader *r = calloc(1, sizeof *r);
    char *copy = strdup(name);
    if (!r || !copy) {
        free(r);
        free(copy);
        return lct__fail(err, LCT_ERR_NOMEM, ENOMEM, 0,
                         "trace file: out of memory opening a reader");
    }
    r->name = copy;
    r->flags = flags;
    r->guard_slot = -1;
    r->source.fd = -1;
    lct__vis_name(r->shown_name, sizeof r->shown_name, name);
    r->sink.fn = (flags & LCT_QUIET) ? NULL : lct_log_stderr;
    r->sink.kinds = ~0u;
    *out = r;
    return LCT_OK;
}

/* The source is in place: check the header and finish, or undo all. */
static int reader_finish(lct_reader *r, lct_reader **out, lct_error *err)
{
    int rc = open_header(r, err);
    if (rc != LCT_OK) {
        lct_close(r);
        return rc;
    }
    r->pos = r->header.size;
    r->stats.bytes_read = r->pos;
    r->stats.file_size = r->source.size;
    if (r->source.kind == LCT__SOURCE_MMAP) {
        r->guard_slot = lct__guard_register(r->source.data,
                                            (size_t)r->source.size);
        if (r->guard_slot < 0) { /* unguarded, a cut file would kill us */
            lct__fail(err, LCT_ERR_NOMEM, ENOMEM, 0,
                      "trace file '%s': out of memory registering its "
                      "mapping with the SIGBUS guard", r->shown_name);
            lct_close(r);
            return LCT_ERR_NOMEM;
        }
    }
    *out = r;
    return LCT_OK;
}

lct_status lct_open_fd_with(int fd, const char *name,
                            const lct_open_options *opts, lct_reader **out,
                            lct_error *err)
{
    if (out)
        *out = NULL;
    if (!out || !name || fd < 0 || !opts)
        return lct__fail(err, LCT_ERR_INVALID, EINVAL, 0,
                         "lct_open_fd: invalid argument");
    lct_reader *r;
    int rc = reader_new(name, opts->flags, &r, err);
    if (rc != LCT_OK)
        return rc;
    rc = lct__source_from_fd(fd, r->shown_name, opts->flags, &r->source, err);
    if (rc != LCT_OK) {
        lct_close(r);
        return rc;
    }
    r->source.max_frame = opts->max_stream_frame
                              ? opts->max_stream_frame
                              : LCT_MAX_STREAM_FRAME_DEFAULT;
    return reader_finish(r, out, err);
}

lct_status lct_open_fd(int fd, const char *name, unsigned flags,
                       lct_reader **out, lct_error *err)
{
    lct_open_options opts = {.flags = flags};
    return lct_open_fd_with(fd, name, &opts, out, err);
}

lct_status lct_open(const char *path, unsigned flags, lct_reader **out,
                    lct_error *err)
{
    lct_open_options opts = {.flags = flags};
    return lct_open_with(path, &opts, out, err);
}

lct_status lct_open_with(const char *path, const lct_open_options *opts,
                         lct_reader **out, lct_error *err)
{
    if (out)
        *out = NULL;
    if (!path || !out || !opts)
        return lct__fail(err, LCT_ERR_INVALID, EINVAL, 0,
                         "lct_open: invalid argument");
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return lct__fail_open(err, errno, path, "cannot open");
    /* The mapping outlives the descriptor, so close it either way. */
    int rc = lct_open_fd_with(fd, path, opts, out, err);
    close(fd);
    return rc;
}

lct_status lct_open_buffer(const void *data, size_t size, const char *name,
                    unsigned flags, lct_reader **out, lct_error *err)
{
    if (out)
        *out = NULL;
    if (!out || !name || (!data && size))
        return lct__fail(err, LCT_ERR_INVALID, EINVAL, 0,
                         "lct_open_buffer: invalid argument");
    lct_reader *r;
    int rc = reader_new(name, flags, &r, err);
    if (rc != LCT_OK)
        return rc;
    r->source.data = data;
    r->source.size = size;
    r->source.kind = LCT__SOURCE_BORROWED;
    r->source.fd = -1;
    return reader_finish(r, out, err);
}

void lct_close(lct_reader *r)
{
    if (!r)
        return;
    lct__guard_unregister(r->guard_slot);
    lct__source_release(&r->source);
    free(r->header_copy);
    free(r->name);
    free(r);
}

const lct_header *lct_reader_header(const lct_reader *r)
{
    return r ? &r->header : NULL;
}

const char *lct_reader_path(const lct_reader *r)
{
    return r ? r->name : NULL;
}

lct_bytes lct_reader_data(const lct_reader *r)
{
    lct_bytes b = {NULL, 0};
    if (r && r->source.kind != LCT__SOURCE_STREAM) {
        b.ptr = r->source.data;
        b.len = (size_t)r->source.size;
    }
    return b;
}

void lct_reader_set_log(lct_reader *r, lct_log_fn fn, void *ctx)
{
    if (!r)
        return;
    r->sink.fn = fn;
    r->sink.ctx = ctx;
}

void lct_reader_set_log_kinds(lct_reader *r, unsigned kinds)
{
    if (r)
        r->sink.kinds = kinds;
}

void lct_reader_stats(const lct_reader *r, lct_stats *out)
{
    if (!out)
        return;
    if (!r) {
        memset(out, 0, sizeof *out);
        return;
    }
    *out = r->stats;
}

void lct_reader_rewind(lct_reader *r)
{
    if (!r)
        return;
    if (r->source.kind == LCT__SOURCE_STREAM &&
        !lct__stream_seek(&r->source, r->header.size))
        return; /* a pipe cannot go back */
    r->pos = r->header.size;
    r->done = false;
    r->status = LCT_OK;
    memset(&r->stats, 0, sizeof r->stats);
    r->stats.bytes_read = r->pos;
    r->stats.file_size = r->source.size;
}

bool lct__reader_place(lct_reader *r, uint64_t pos, uint64_t records,
                       uint64_t skipped)
{
    if (r->source.kind == LCT__SOURCE_STREAM &&
        !lct__stream_seek(&r->source, pos))
        return false;
    r->pos = pos;
    r->done = false;
    memset(&r->stats, 0, sizeof r->stats);
    r->stats.records = records;
    r->stats.skipped = skipped;
    r->stats.bytes_read = pos;
    r->stats.file_size = r->source.size;
    r->status = skipped ? LCT_ERR_MALFORMED : LCT_OK;
    return true;
}

lct_status lct_reader_seek_offset(lct_reader *r, uint64_t offset,
                                  lct_error *err)
{
    if (!r || !lct__reader_can_seek(r) || offset < r->header.size ||
        offset > r->source.size || !lct__reader_place(r, offset, 0, 0))
        return lct__fail(err, LCT_ERR_INVALID, EINVAL, offset,
                         "%s: cannot read on from offset %" PRIu64,
                         r ? r->shown_name : "(null)", offset);
    return LCT_OK;
}

/* The file lost bytes from `cut` on: end here, once, with a warning, and
 * make the lost pages zero pages so old views cannot fault. */
static int end_shrank(lct_reader *r, uint64_t cut)
{
    r->done = true;
    r->stats.shrank = true;
    r->stats.shrank_offset = cut;
    r->stats.truncated = false; /* what looked cut was the shrink */
    note_status(r, LCT_ERR_CHANGED);
    lct__source_forget_after(&r->source, cut);
    lct__warn_shrank(r, cut);
    return 0;
}

/* A partial frame, a read error: the end of the records, with a warning. */
static int end_short(lct_reader *r, lct__frame_status fs, const lct__frame *f)
{
    r->done = true;
    r->stats.truncated = true;
    r->stats.truncated_offset = f->offset;
    note_status(r, fs == LCT__FRAME_READ_ERROR ? LCT_ERR_SYS
                   : fs == LCT__FRAME_TOO_LONG ? LCT_ERR_LIMIT
                                               : LCT_ERR_TRUNCATED);
    lct__warn_short(r, fs, f, r->source.read_errno);
    return 0;
}

/* No whole frame at the position: the end, a cut, a shrink, or (when
 * following) a frame not yet written. */
static int no_frame(lct_reader *r, lct__frame_status fs, const lct__frame *f)
{
    uint64_t cut;
    if (fs != LCT__FRAME_END &&
        lct__shrank_before(r, r->source.size, true, &cut))
        return end_shrank(r, cut);
    if (lct__stream_shrank(&r->source, &cut))
        return end_shrank(r, cut);
    /* A trace being written: its last frame may simply be unfinished. */
    if ((r->flags & LCT_FOLLOW) && fs != LCT__FRAME_READ_ERROR &&
        fs != LCT__FRAME_TOO_LONG)
        return 0;
    if (fs == LCT__FRAME_END) {
        r->done = true;
        return 0;
    }
    return end_short(r, fs, f);
}

/* A run of empty frames (zero bytes where frames should be), stepped
 * over in bulk: counted and warned about as the skips they are, one by
 * one, with one check of the file for the run (lct__zero_run).  (One at
 * a time, each cost a frame's full handling and, on a mapping, an fstat:
 * 4 MiB of zeros took half a second, and two with -j 2.)  A stream steps
 * over as many as it has read.  Not on a followed file. */
static bool zero_run(lct_reader *r)
{
    if (r->flags & LCT_FOLLOW)
        return false;
    const unsigned char *p;
    size_t n;
    if (r->source.kind == LCT__SOURCE_STREAM)
        n = lct__stream_peek(&r->source, &p);
    else {
        p = r->source.data + r->pos;
        n = (size_t)(r->source.size - r->pos);
    }
    char why[LCT__WHY_SIZE];
    size_t at = lct__zero_run(r->flags, &r->source, r->guard_slot, r->pos, p,
                              n, why);
    if (at == 0)
        return false;
    note_status(r, LCT_ERR_MALFORMED);
    for (size_t k = 0; k < at; k += 4) {
        r->stats.skipped++;
        lct__warn_skip(r, r->pos + k, why);
    }
    r->pos += at;
    r->stats.bytes_read = r->pos;
    lct__source_ahead(&r->source, r->pos);
    return true;
}

int lct_next(lct_reader *r, lct_record *rec)
{
    if (!r || !rec)
        return LCT_ERR_INVALID;
    char why[LCT__WHY_SIZE];
    while (!r->done) {
        lct__frame f;
        lct__frame_status fs = frame_here(r, &f);
        if (fs != LCT__FRAME_OK)
            return no_frame(r, fs, &f);
        if (f.length == 0 && r->pos > 0 && zero_run(r))
            continue;
        uint64_t cut;
        lct__outcome got = lct__frame_record(r, &f, rec, why, &cut);
        if (got == LCT__LOST)
            return end_shrank(r, cut);
        r->pos = f.offset + LCT__PREFIX_SIZE + (uint64_t)f.length;
        r->stats.bytes_read = r->pos;
        lct__source_ahead(&r->source, r->pos);
        if (got == LCT__RECORD) {
            r->stats.records++;
            return 1;
        }
        r->stats.skipped++;
        note_status(r, LCT_ERR_MALFORMED);
        lct__warn_skip(r, f.offset, why);
    }
    return 0;
}

int lct_record_at(const lct_reader *r, uint64_t offset, lct_record *rec,
                  const char **why)
{
    static _Thread_local char reason[LCT__WHY_SIZE];
    if (!r || !rec || r->source.kind == LCT__SOURCE_STREAM ||
        offset < r->header.size || offset > r->source.size)
        return LCT_ERR_INVALID;
    lct__frame f;
    if (lct__frame_at(r->source.data, r->source.size, offset, &f) !=
        LCT__FRAME_OK)
        return LCT_ERR_TRUNCATED;
    uint64_t cut;
    switch (lct__frame_record(r, &f, rec, reason, &cut)) {
    case LCT__LOST: return LCT_ERR_CHANGED;
    case LCT__RECORD: return 1;
    case LCT__SKIPPED: break;
    }
    rec->offset = offset;
    rec->length = f.length;
    rec->body = (lct_value){f.body, f.length};
    if (why)
        *why = reason;
    return 0;
}

bool lct_record_intact(const lct_reader *r, const lct_record *rec)
{
    if (!r || !rec)
        return false;
    if (r->source.kind != LCT__SOURCE_MMAP)
        return true; /* copies, or the caller's own buffer */
    uint64_t end = rec->offset + LCT__PREFIX_SIZE + (uint64_t)rec->length;
    if (r->stats.shrank && r->stats.shrank_offset < end)
        return false;
    /* Bytes the caller read from the record before this call were lost
     * only if the bytes after it are lost too: they read as zeros. */
    uint64_t cut;
    return !lct__shrank_before(r, end, false, &cut);
}

lct_status lct_reader_refresh(lct_reader *r, lct_error *err)
{
    if (!r || !(r->flags & LCT_FOLLOW))
        return lct__fail(err, LCT_ERR_INVALID, EINVAL, 0,
                         "lct_reader_refresh: the reader was not opened with "
                         "LCT_FOLLOW");
    if (r->source.kind == LCT__SOURCE_STREAM)
        return LCT_OK; /* lct_next reads what arrived */
    if (r->stats.shrank)
        return lct__fail(err, LCT_ERR_CHANGED, 0, r->stats.shrank_offset,
                         "trace file '%s': shrank while followed: bytes "
                         "from offset %" PRIu64 " are gone",
                         r->shown_name, r->stats.shrank_offset);
    bool changed;
    uint64_t now = r->source.size;
    int rc = lct__source_remap(&r->source, r->shown_name, &changed, &now,
                               err);
    if (rc == LCT_ERR_CHANGED) {
        end_shrank(r, now);
        return rc;
    }
    if (rc != LCT_OK || !changed)
        return rc;
    lct__guard_update(r->guard_slot, r->source.data, (size_t)r->source.size);
    r->stats.file_size = r->source.size;
    return LCT_OK;
}
