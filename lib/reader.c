/*
 * reader.c - the lct_reader object: open (source, header frame, header
 * checks in the reference order), iteration over record frames with the
 * skip and truncation rules, counters, and warnings.
 */
#include "decode_internal.h"
#include "error_internal.h"
#include "frame_internal.h"
#include "reader_internal.h"
#include "source_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>


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

static void warn(lct_reader *r, lct_warning_kind kind, uint64_t offset,
                 const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static void warn(lct_reader *r, lct_warning_kind kind, uint64_t offset,
                 const char *fmt, ...)
{
    if (!r->log)
        return;
    char message[LCT_ERROR_MESSAGE_SIZE];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(message, sizeof message, fmt, ap);
    va_end(ap);
    r->log(r->log_ctx, r, kind, offset, message);
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

/* Read and judge the header frame, in the order the reference does. */
static int open_header(lct_reader *r, lct_error *err)
{
    const char *name = r->shown_name;
    const lct__source *s = &r->source;
    lct__frame f;
    switch (lct__frame_at(s->data, s->size, 0, &f)) {
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
        return lct__fail(err, LCT_ERR_TRUNCATED, 0, 4,
                         "trace file '%s': truncated frame body at offset 4 "
                         "(got %" PRIu64 " of %" PRIu32 ")",
                         name, f.available, f.length);
    case LCT__FRAME_OK:
        break;
    }

    char why[LCT__WHY_SIZE];
    lct_header *h = &r->header;
    if (lct__header_decode(f.body, f.length, h, why) != LCT_OK)
        return lct__fail(err, LCT_ERR_MALFORMED, 0, 0,
                         "trace file '%s': undecodable header at offset 0: %s",
                         name, why);
    h->size = 4 + (uint64_t)f.length;

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
    r->log = (flags & LCT_QUIET) ? NULL : lct_log_stderr;
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
    if (r->source.kind == LCT__SOURCE_MMAP)
        r->guard_slot = lct__guard_register(r->source.data,
                                            (size_t)r->source.size);
    *out = r;
    return LCT_OK;
}

int lct_open_fd(int fd, const char *name, unsigned flags, lct_reader **out,
                lct_error *err)
{
    if (out)
        *out = NULL;
    if (!out || !name || fd < 0)
        return lct__fail(err, LCT_ERR_INVALID, EINVAL, 0,
                         "lct_open_fd: invalid argument");
    lct_reader *r;
    int rc = reader_new(name, flags, &r, err);
    if (rc != LCT_OK)
        return rc;
    rc = lct__source_from_fd(fd, r->shown_name, flags, &r->source, err);
    if (rc != LCT_OK) {
        lct_close(r);
        return rc;
    }
    return reader_finish(r, out, err);
}

int lct_open(const char *path, unsigned flags, lct_reader **out,
             lct_error *err)
{
    if (out)
        *out = NULL;
    if (!path || !out)
        return lct__fail(err, LCT_ERR_INVALID, EINVAL, 0,
                         "lct_open: invalid argument");
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        int e = errno;
        char shown[256];
        lct__vis_name(shown, sizeof shown, path);
        return lct__fail(err, LCT_ERR_SYS, e, 0,
                         "trace file '%s': cannot open: %s", shown,
                         strerror(e));
    }
    /* The mapping outlives the descriptor, so close it either way. */
    int rc = lct_open_fd(fd, path, flags, out, err);
    close(fd);
    return rc;
}

int lct_open_buffer(const void *data, size_t size, const char *name,
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
    if (r) {
        b.ptr = r->source.data;
        b.len = (size_t)r->source.size;
    }
    return b;
}

void lct_reader_set_log(lct_reader *r, lct_log_fn fn, void *ctx)
{
    if (!r)
        return;
    r->log = fn;
    r->log_ctx = ctx;
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

void lct_rewind(lct_reader *r)
{
    if (!r)
        return;
    r->pos = r->header.size;
    r->done = false;
    memset(&r->stats, 0, sizeof r->stats);
    r->stats.bytes_read = r->pos;
    r->stats.file_size = r->source.size;
}

/* The file lost bytes from `lost` on: end here, once, with a warning. */
static int end_shrank(lct_reader *r, uint64_t lost)
{
    r->done = true;
    r->stats.shrank = true;
    r->stats.shrank_offset = lost;
    warn(r, LCT_WARN_SHRANK, lost,
         "file shrank while reading: bytes from offset %" PRIu64 " are gone",
         lost);
    return 0;
}

int lct_next(lct_reader *r, lct_record *rec)
{
    if (!r || !rec)
        return LCT_ERR_INVALID;
    char why[LCT__WHY_SIZE];
    uint64_t lost;
    while (!r->done) {
        lct__frame f;
        lct__frame_status fs =
            lct__frame_at(r->source.data, r->source.size, r->pos, &f);
        if (fs != LCT__FRAME_OK && lct__lost_before(r, r->source.size, &lost))
            return end_shrank(r, lost);
        /* A trace being written: its last frame may simply be unfinished. */
        if ((r->flags & LCT_FOLLOW) && fs != LCT__FRAME_OK)
            return 0;
        switch (fs) {
        case LCT__FRAME_END:
            r->done = true;
            return 0;
        case LCT__FRAME_SHORT_PREFIX:
            r->done = true;
            r->stats.truncated = true;
            r->stats.truncated_offset = f.offset;
            warn(r, LCT_WARN_TRUNCATED, f.offset,
                 "truncated frame length prefix at offset %" PRIu64,
                 f.offset);
            return 0;
        case LCT__FRAME_SHORT_BODY:
            r->done = true;
            r->stats.truncated = true;
            r->stats.truncated_offset = f.offset;
            warn(r, LCT_WARN_TRUNCATED, f.offset + 4,
                 "truncated frame body at offset %" PRIu64 " (got %" PRIu64
                 " of %" PRIu32 ")",
                 f.offset + 4, f.available, f.length);
            return 0;
        case LCT__FRAME_OK:
            break;
        }
        uint64_t end = f.offset + 4 + (uint64_t)f.length;
        int rc = lct__record_decode(f.body, f.length, r->flags, rec, why);
        /* Decoding may have read lost (zeroed) pages: check before use. */
        if (lct__lost_before(r, end, &lost))
            return end_shrank(r, lost);
        r->pos = end;
        r->stats.bytes_read = r->pos;
        if (rc == LCT_OK) {
            rec->offset = f.offset;
            rec->length = f.length;
            r->stats.records++;
            return 1;
        }
        r->stats.skipped++;
        warn(r, LCT_WARN_MALFORMED, f.offset,
             "skipping malformed record at offset %" PRIu64 ": %s", f.offset,
             why);
    }
    return 0;
}

bool lct_record_intact(const lct_reader *r, const lct_record *rec)
{
    uint64_t lost;
    return r && rec &&
           !lct__lost_before(r, rec->offset + 4 + (uint64_t)rec->length,
                             &lost);
}

int lct_refresh(lct_reader *r, lct_error *err)
{
    if (!r || !(r->flags & LCT_FOLLOW))
        return lct__fail(err, LCT_ERR_INVALID, EINVAL, 0,
                         "lct_refresh: the reader was not opened with "
                         "LCT_FOLLOW");
    bool changed;
    int rc = lct__source_remap(&r->source, r->shown_name, &changed, err);
    if (rc != LCT_OK)
        return rc;
    if (!changed)
        return LCT_OK;
    lct__guard_update(r->guard_slot, r->source.data, (size_t)r->source.size);
    r->stats.file_size = r->source.size;
    if (r->source.size < r->pos)
        return lct__fail(err, LCT_ERR_TRUNCATED, 0, r->source.size,
                         "trace file '%s': shrank to %" PRIu64
                         " bytes, below the %" PRIu64 " already read",
                         r->shown_name, r->source.size, r->pos);
    /* The header's views pointed into the old mapping. */
    char why[LCT__WHY_SIZE];
    uint64_t size = r->header.size;
    if (lct__header_decode(r->source.data + 4, (size_t)(size - 4),
                           &r->header, why) != LCT_OK)
        return lct__fail(err, LCT_ERR_MALFORMED, 0, 0,
                         "trace file '%s': the header changed: %s",
                         r->shown_name, why);
    r->header.size = size;
    return LCT_OK;
}
