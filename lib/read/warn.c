/*
 * warn.c - what a reader says while reading: the wording of skipped,
 * truncated and lost frames, sent to a log sink.  Used by lct_next and by
 * parallel scans alike, so both say the same bytes.
 */
#include "read/warn_internal.h"
#include "lct_read.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

static void emit(const lct__logsink *sink, const lct_reader *r,
                 lct_warning_kind kind, uint64_t offset, const char *message)
{
    if (lct__sink_wants(sink, kind))
        sink->fn(sink->ctx, r, kind, offset, message);
}

void lct__say_skip(const lct__logsink *sink, const lct_reader *r,
                   uint64_t offset, const char *why)
{
    if (!lct__sink_wants(sink, LCT_WARN_MALFORMED))
        return;
    char message[LCT_ERROR_MESSAGE_SIZE];
    snprintf(message, sizeof message,
             "skipping malformed record at offset %" PRIu64 ": %s", offset,
             why);
    emit(sink, r, LCT_WARN_MALFORMED, offset, message);
}

void lct__say_shrank(const lct__logsink *sink, const lct_reader *r,
                     uint64_t cut)
{
    char message[LCT_ERROR_MESSAGE_SIZE];
    snprintf(message, sizeof message,
             "file shrank while reading: bytes from offset %" PRIu64
             " are gone",
             cut);
    emit(sink, r, LCT_WARN_SHRANK, cut, message);
}

uint64_t lct__short_text(lct__frame_status fs, const lct__frame *f,
                         int read_errno, char *out, size_t outsz)
{
    uint64_t at = f->offset;
    if (fs == LCT__FRAME_SHORT_PREFIX) {
        snprintf(out, outsz, "truncated frame length prefix at offset %" PRIu64,
                 at);
    } else if (fs == LCT__FRAME_SHORT_BODY) {
        at += LCT__PREFIX_SIZE;
        snprintf(out, outsz,
                 "truncated frame body at offset %" PRIu64 " (got %" PRIu64
                 " of %" PRIu32 ")",
                 at, f->available, f->length);
    } else if (fs == LCT__FRAME_TOO_LONG) {
        snprintf(out, outsz,
                 "frame at offset %" PRIu64 " claims %" PRIu32
                 " bytes, more than a stream may hold (max_stream_frame, "
                 "lct --max-frame); reading stops",
                 at, f->length);
    } else {
        at += f->available;
        snprintf(out, outsz, "read failed at offset %" PRIu64 ": %s", at,
                 strerror(read_errno));
    }
    return at;
}

void lct__say_short(const lct__logsink *sink, const lct_reader *r,
                    lct__frame_status fs, const lct__frame *f,
                    int read_errno)
{
    char message[LCT_ERROR_MESSAGE_SIZE];
    uint64_t at = lct__short_text(fs, f, read_errno, message, sizeof message);
    emit(sink, r, LCT_WARN_TRUNCATED, at, message);
}
