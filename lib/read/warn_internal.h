/*
 * warn_internal.h - the wording of every reading warning, in one place,
 * so lct_next and parallel scans say exactly the same things.
 */
#ifndef LCT_WARN_INTERNAL_H
#define LCT_WARN_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "read/frame_internal.h"
#include <stdbool.h>

#include "lct_read.h"

/* Where a reader's warnings go: fn(ctx, reader, ...); fn NULL is
 * silence. */
typedef struct lct__logsink {
    lct_log_fn fn;
    void *ctx;
    unsigned kinds; /* ~kinds: not even formatted (LCT_WARN_MASK bits) */
} lct__logsink;

/* Whether a warning of this kind reaches the sink's function. */
static inline bool lct__sink_wants(const lct__logsink *sink,
                                   lct_warning_kind kind)
{
    return sink->fn && (sink->kinds & LCT_WARN_MASK(kind));
}

/* Send one warning, about reader r, to the sink. */
void lct__say_skip(const lct__logsink *sink, const lct_reader *r,
                   uint64_t offset, const char *why);
void lct__say_shrank(const lct__logsink *sink, const lct_reader *r,
                     uint64_t cut);
/* A partial frame or a read error (fs) ending the records. */
void lct__say_short(const lct__logsink *sink, const lct_reader *r,
                    lct__frame_status fs, const lct__frame *f,
                    int read_errno);

/* The text of lct__warn_short into out; returns the offset it names (the
 * frame's, or for a cut body the body's, as the reference says). */
uint64_t lct__short_text(lct__frame_status fs, const lct__frame *f,
                         int read_errno, char *out, size_t outsz);

#endif
