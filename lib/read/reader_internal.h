/*
 * reader_internal.h - the lct_reader object, shared by reader.c (open,
 * iterate) and index.c (index and scans over the same data).
 */
#ifndef LCT_READER_INTERNAL_H
#define LCT_READER_INTERNAL_H

#include "lct_read.h"
#include "read/guard_internal.h"
#include "read/frame_internal.h"
#include "read/source_internal.h"
#include "read/warn_internal.h"
#include "read/yield_internal.h"

struct lct_reader {
    lct__source source;
    lct_header header;
    unsigned flags;
    uint64_t pos;   /* next frame's offset */
    bool done;      /* end reached: every further lct_next returns 0 */
    lct_stats stats;
    lct_status status; /* sticky: the worst met (lct_reader_status) */
    lct__logsink sink; /* where warnings go (fn NULL: silenced) */
    char *name;
    char shown_name[256]; /* name with unprintable bytes escaped */
    int guard_slot;       /* in the SIGBUS guard's registry, or -1 */
    /* The header frame's body, copied when the source cannot keep it
     * (a stream reuses its buffer; a followed file is mapped anew). */
    unsigned char *header_copy;
};

/* The yield path (yield.c) and the warnings (warn.c), for a reader:
 * they are written against a source, a guard slot and a log sink, and
 * these pass the reader's own. */
static inline bool lct__shrank_before(const lct_reader *r, uint64_t end,
                                      bool suspect, uint64_t *cut)
{
    return lct__yield_shrank_before(&r->source, r->guard_slot, end, suspect,
                                    cut);
}

static inline lct__outcome lct__frame_record(const lct_reader *r,
                                             const lct__frame *f,
                                             lct_record *rec, char *why,
                                             uint64_t *cut)
{
    return lct__yield_record(r->flags, &r->source, r->guard_slot, f, rec,
                             why, cut);
}

static inline void lct__warn_skip(const lct_reader *r, uint64_t offset,
                                  const char *why)
{
    lct__say_skip(&r->sink, r, offset, why);
}

static inline void lct__warn_shrank(const lct_reader *r, uint64_t cut)
{
    lct__say_shrank(&r->sink, r, cut);
}

/* The first offset in [from, limit) where a record frame could begin (a
 * plausible length, then the bytes every record begins with), read with
 * pread; UINT64_MAX when none (pscan.c). */
uint64_t lct__find_start(const lct_reader *r, uint64_t from, uint64_t limit);

/* Whether r reads a regular file it can go back and forth in (a mapping,
 * or a stream with pread). */
static inline bool lct__reader_can_seek(const lct_reader *r)
{
    return r->source.fd >= 0 &&
           (r->source.kind == LCT__SOURCE_MMAP ||
            (r->source.kind == LCT__SOURCE_STREAM && r->source.seekable));
}

/* Put r at frame offset pos with these counters, as if it had read so
 * far (reader.c); false when a stream cannot go there. */
bool lct__reader_place(lct_reader *r, uint64_t pos, uint64_t records,
                       uint64_t skipped);

static inline void lct__warn_short(const lct_reader *r,
                                   lct__frame_status fs, const lct__frame *f,
                                   int read_errno)
{
    lct__say_short(&r->sink, r, fs, f, read_errno);
}

#endif
