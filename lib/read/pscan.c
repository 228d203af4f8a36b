/*
 * pscan.c - parallel scans in one pass over a file: no index first.
 *
 * The file is split by bytes.  Thread 0 starts after the header; thread
 * t > 0 starts at the first offset at or after its split point where a
 * frame the recorder wrote could begin (a plausible length, then the
 * bytes every record begins with: {"type": "record", ...}).  Each thread
 * reads its range through the reader's mapping, or with pread(2) into its
 * own buffer when the reader streams (so the cost of reading splits too),
 * and decodes the frames that start before the next thread's start.  A seam holds when the earlier thread's chain of frames
 * lands exactly on the later thread's start: then the later start is a
 * real frame boundary and every answer is the one lct_next gives.  If any
 * seam does not hold (damaged data, or the record bytes inside a string),
 * the states are reset and the whole file is read again by one thread:
 * the answer equals the sequential reader's on every input.
 */
#include "read/decode_internal.h"
#include "base/error_internal.h"
#include "read/reader_internal.h"
#include "base/threads_internal.h"
#include "read/warn_internal.h"
#include "lct_read.h"

#include <errno.h>
#include <stddef.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The first bytes of every record body the recorder writes. */
static const unsigned char record_start[] = {0x85, 0xa4, 't', 'y', 'p', 'e',
                                             0xa6, 'r',  'e', 'c', 'o', 'r',
                                             'd'};

typedef struct pworker {
    const lct_reader *reader;
    const lct_scan *scan;
    void *state;
    uint64_t start, stop; /* frames starting in [start, stop) are ours */
    uint64_t records, skipped;
    uint64_t end;         /* where the chain stopped */
    lct__frame_status how; /* why: LCT__FRAME_OK (reached stop) or not */
    lct__frame tail;      /* the frame it stopped at, when not OK */
    int read_errno;
    bool failed, stopped;
    lct__u64s skips; /* offsets of skipped frames, for the warnings */
    pthread_t thread;
    char pad[64];
} pworker;

/* A private stream over the reader's descriptor, from offset `at`. */
static void stream_at(const lct_reader *r, uint64_t at, lct__source *s)
{
    memset(s, 0, sizeof *s);
    s->kind = LCT__SOURCE_STREAM;
    s->fd = r->source.fd;
    s->seekable = true;
    s->size = r->source.size;
    s->base = s->consumed = at;
}

/* A skip's offset with this bit set starts a run of empty frames, and
 * the entry after it is how many: their reason is known without reading
 * them again (offsets stay far below 2^63). */
#define EMPTY_RUN (UINT64_C(1) << 63)

/* One frame's outcome, counted and handed to the scan's callbacks. */
static void take(pworker *w, lct__outcome got, const lct__frame *f,
                 const lct_record *rec, const char *why)
{
    if (got == LCT__RECORD) {
        w->records++;
        w->stopped = w->scan->on_record(w->state, rec) != 0;
        return;
    }
    w->skipped++;
    if (!lct__u64s_push(&w->skips, f->offset))
        w->failed = true;
    if (w->scan->on_skip)
        w->scan->on_skip(w->state, f->offset, why);
}

/* At an empty frame at pos, whose bytes p[0..n) follow in source s: a
 * run of them (lct__zero_run, one check of the file for the run, as
 * lct_next does) taken as the skips they are, up to this thread's stop;
 * how many bytes it held, or 0 for the usual path. */
static size_t take_zero_run(pworker *w, const lct__source *s, uint64_t pos,
                            const unsigned char *p, uint64_t n)
{
    const lct_reader *r = w->reader;
    if (r->flags & LCT_FOLLOW)
        return 0;
    if (w->stop - pos < n)
        n = w->stop - pos;
    char why[LCT__WHY_SIZE];
    size_t zeros = lct__zero_run(r->flags, s, r->guard_slot, pos, p,
                                 (size_t)n, why);
    if (!zeros)
        return 0;
    uint64_t frames = zeros / 4;
    w->skipped += frames;
    if (!lct__u64s_push(&w->skips, pos | EMPTY_RUN) ||
        !lct__u64s_push(&w->skips, frames))
        w->failed = true;
    if (w->scan->on_empty_run)
        w->scan->on_empty_run(w->state, pos, frames);
    else if (w->scan->on_skip)
        for (uint64_t k = 0; k < frames; k++)
            w->scan->on_skip(w->state, pos + 4 * k, why);
    return zeros;
}

/* A mapped reader's range, read through the mapping: no copy, the page
 * tables and cache lines filled ahead of this thread as lct_next fills
 * them (a private copy of the source keeps how far).  A frame the file
 * lost under the mapping ends the chain early, as a cut would: the seams
 * then fail, and finish() names the shrink. */
static void *pwork_mapped(pworker *w)
{
    const lct_reader *r = w->reader;
    lct__source ahead = r->source;
    ahead.populated = ahead.prefetched = ahead.dropped = w->start;
    lct_record rec;
    char why[LCT__WHY_SIZE];
    uint64_t pos = w->start, cut;
    w->how = LCT__FRAME_OK;
    while (pos < w->stop && !w->failed && !w->stopped) {
        lct__source_ahead(&ahead, pos);
        lct__frame f;
        lct__frame_status fs = lct__frame_at(r->source.data, r->source.size,
                                             pos, &f);
        if (fs != LCT__FRAME_OK) {
            w->how = fs;
            w->tail = f;
            break;
        }
        size_t zeros = f.length == 0
                           ? take_zero_run(w, &r->source, pos,
                                           r->source.data + pos,
                                           r->source.size - pos)
                           : 0;
        if (zeros) {
            pos += zeros;
            continue;
        }
        lct__outcome got = lct__frame_record(r, &f, &rec, why, &cut);
        if (got == LCT__LOST) {
            w->how = LCT__FRAME_END;
            break;
        }
        take(w, got, &f, &rec, why);
        pos = f.offset + LCT__PREFIX_SIZE + (uint64_t)f.length;
    }
    w->end = pos;
    return NULL;
}

static void *pwork(void *arg)
{
    pworker *w = arg;
    if (w->reader->source.kind == LCT__SOURCE_MMAP)
        return pwork_mapped(w);
    lct__source src;
    stream_at(w->reader, w->start, &src);
    lct_record rec;
    char why[LCT__WHY_SIZE];
    uint64_t pos = w->start;
    w->how = LCT__FRAME_OK;
    while (pos < w->stop && !w->failed && !w->stopped) {
        lct__frame f;
        lct__frame_status fs = lct__stream_frame(&src, pos, 0, &f);
        if (fs != LCT__FRAME_OK) {
            w->how = fs;
            w->tail = f;
            w->read_errno = src.read_errno;
            break;
        }
        if (f.length == 0) {
            const unsigned char *p;
            size_t n = lct__stream_peek(&src, &p);
            size_t zeros = take_zero_run(w, &src, pos, p, n);
            if (zeros) {
                pos += zeros;
                continue;
            }
        }
        take(w, lct__frame_decode(w->reader->flags, &f, &rec, why), &f, &rec,
             why);
        pos = f.offset + LCT__PREFIX_SIZE + (uint64_t)f.length;
    }
    w->end = pos;
    free(src.buf);
    return NULL;
}

/* Where a record frame may begin, at or after `from` and before `limit`;
 * UINT64_MAX if nowhere. */
uint64_t lct__find_start(const lct_reader *r, uint64_t from, uint64_t limit)
{
    enum { WINDOW = 64 * 1024, NEED = 4 + sizeof record_start };
    unsigned char buf[WINDOW];
    uint64_t size = r->source.size;
    for (uint64_t at = from; at < limit; at += WINDOW - NEED) {
        ssize_t got = pread(r->source.fd, buf, WINDOW, (off_t)at);
        if (got < (ssize_t)NEED)
            return UINT64_MAX;
        /* memchr to each candidate's first byte: a run of zeros (or
         * of anything without it) goes by at memchr's speed */
        size_t last = (size_t)got - NEED; /* the last i with NEED bytes */
        for (size_t i = 0; i <= last && at + i < limit; i++) {
            const unsigned char *hit =
                memchr(buf + i + 4, record_start[0], last - i + 1);
            if (!hit)
                break;
            i = (size_t)(hit - buf) - 4;
            if (at + i >= limit)
                break;
            if (memcmp(buf + i + 4, record_start, sizeof record_start) != 0)
                continue;
            uint64_t len = lct__be32(buf + i);
            if (len >= sizeof record_start && at + i + 4 + len <= size)
                return at + i;
        }
    }
    return UINT64_MAX;
}

/* Split [first, size) among up to n threads; returns how many got a
 * start (a range with no possible start joins the one before). */
static unsigned split(const lct_reader *r, const lct_scan *scan,
                      pworker *w, unsigned n)
{
    uint64_t first = r->header.size, size = r->source.size;
    unsigned used = 0;
    for (unsigned t = 0; t < n; t++) {
        uint64_t from = first + (size - first) / n * t;
        uint64_t start = t == 0 ? first : lct__find_start(r, from, size);
        if (start == UINT64_MAX || (used && start <= w[used - 1].start))
            continue;
        w[used].reader = r;
        w[used].scan = scan;
        w[used].start = start;
        used++;
    }
    for (unsigned t = 0; t < used; t++) {
        w[t].stop = t + 1 < used ? w[t + 1].start : UINT64_MAX;
        w[t].state = scan->states ? scan->states[t] : NULL;
    }
    return used;
}

/* Every chain reached the next start exactly (and none ended early). */
static bool seams_hold(const pworker *w, unsigned n)
{
    for (unsigned t = 0; t + 1 < n; t++)
        if (w[t].how != LCT__FRAME_OK || w[t].end != w[t + 1].start ||
            w[t].stopped)
            return false;
    return true;
}

/* The reason a skipped frame was skipped, read again through one source
 * for all of them: skips come in file order, so the reads go forward and
 * a run of zeros (a skip every 4 bytes) costs what reading it costs. */
static void warn_skip_at(const lct_reader *r, lct__source *src,
                         uint64_t offset)
{
    if (offset < src->base + src->start ||
        offset - (src->base + src->start) >= src->fill - src->start)
        lct__stream_seek(src, offset); /* not in the buffer: jump there */
    lct__frame f;
    lct_record rec;
    char why[LCT__WHY_SIZE] = "malformed record";
    if (lct__stream_frame(src, offset, 0, &f) == LCT__FRAME_OK)
        (void)lct__frame_decode(r->flags, &f, &rec, why);
    lct__warn_skip(r, offset, why);
}

/* Totals, and the warnings lct_next would give, in file order. */
static void finish(const lct_reader *r, const pworker *w, unsigned n,
                   lct_stats *st)
{
    memset(st, 0, sizeof *st);
    lct__source src;
    stream_at(r, r->header.size, &src);
    char empty_why[LCT__WHY_SIZE] = "";
    /* a skip's reason is read again only for a log that wants it */
    bool say = lct__sink_wants(&r->sink, LCT_WARN_MALFORMED);
    for (unsigned t = 0; t < n; t++) {
        st->records += w[t].records;
        st->skipped += w[t].skipped;
        for (size_t k = 0; say && k < w[t].skips.n; k++) {
            uint64_t at = w[t].skips.v[k];
            if (!(at & EMPTY_RUN)) {
                warn_skip_at(r, &src, at);
                continue;
            }
            if (!empty_why[0])
                lct__empty_frame_why(r->flags, empty_why);
            uint64_t frames = w[t].skips.v[++k];
            for (uint64_t i = 0; i < frames; i++)
                lct__warn_skip(r, (at & ~EMPTY_RUN) + 4 * i, empty_why);
        }
    }
    free(src.buf);
    const pworker *last = &w[n - 1];
    st->bytes_read = last->end;
    st->file_size = r->source.size;
    uint64_t real;
    bool lost = lct__source_real_size(&r->source, &real) == LCT_OK &&
                real < r->source.size;
    if (last->how == LCT__FRAME_END || last->how == LCT__FRAME_OK) {
        if (!lost)
            return;
    } else if (!lost) {
        st->truncated = true;
        st->truncated_offset = last->tail.offset;
        lct__warn_short(r, last->how, &last->tail, last->read_errno);
        return;
    }
    st->shrank = true; /* read as a copy: a loss shows as an early end */
    st->shrank_offset = real;
    lct__warn_shrank(r, real);
}

lct_status lct_scan_file(const lct_reader *r, const lct_scan *scan,
                         lct_stats *out, lct_error *err)
{
    if (!r || !scan || !scan->on_record || r->source.fd < 0 ||
        (r->source.kind == LCT__SOURCE_STREAM && !r->source.seekable))
        return lct__fail(err, LCT_ERR_INVALID, EINVAL, 0,
                         "lct_scan_file: needs a reader of a regular file");
    unsigned n = lct_scan_threads(scan, NULL);
    if (!scan->on_reset)
        n = 1; /* nothing to start over with: one thread, exact */
    pworker *w = calloc(n, sizeof *w);
    if (!w)
        return lct__fail(err, LCT_ERR_NOMEM, ENOMEM, 0,
                         "lct_scan_file: out of memory");
    n = split(r, scan, w, n);
    lct_status rc = lct__run_threads(w, sizeof *w, offsetof(pworker, thread),
                                     n, pwork, "lct_scan_file", err);
    if (rc == LCT_OK && n > 1 && !seams_hold(w, n)) {
        /* A false start, or damage across a seam: read it all again. */
        for (unsigned t = 0; t < n; t++) {
            scan->on_reset(w[t].state);
            free(w[t].skips.v);
        }
        memset(&w[1], 0, sizeof *w * (n - 1));
        pworker again = {.reader = r, .scan = scan, .state = w[0].state,
                         .start = r->header.size, .stop = UINT64_MAX};
        w[0] = again;
        n = 1;
        pwork(&w[0]);
    }
    for (unsigned t = 0; t < n && rc == LCT_OK; t++)
        if (w[t].failed)
            rc = lct__fail(err, LCT_ERR_NOMEM, ENOMEM, 0,
                           "lct_scan_file: out of memory noting skips");
    lct_stats st;
    if (rc == LCT_OK) {
        finish(r, w, n, &st);
        if (out)
            *out = st;
    }
    for (unsigned t = 0; t < n; t++)
        free(w[t].skips.v);
    free(w);
    return rc;
}

lct_status lct_reader_resync(const lct_reader *r, uint64_t from,
                             uint64_t *at)
{
    if (!r || !at || !lct__reader_can_seek(r))
        return LCT_ERR_INVALID;
    if (from <= r->header.size) {
        *at = r->header.size;
        return LCT_OK;
    }
    *at = lct__find_start(r, from, r->source.size);
    return *at == UINT64_MAX ? LCT_ERR_NOT_FOUND : LCT_OK;
}
