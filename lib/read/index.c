/*
 * index.c - the frame index (offsets of every complete record frame) and
 * parallel scans over it with POSIX threads.
 *
 * Threads share only read-only data (the mapping and the index); each
 * decodes its own contiguous range of frames into its own lct_record,
 * through the same path as lct_next (yield.c).  Warnings are given after
 * the threads are done, in file order, in lct_next's words (warn.c).
 */
#include "read/decode_internal.h"
#include "base/error_internal.h"
#include "read/frame_internal.h"
#include "msgpack/msgpack_internal.h"
#include "read/reader_internal.h"
#include "base/threads_internal.h"
#include "read/warn_internal.h"
#include "lct_read.h"

#include <errno.h>
#include <stddef.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct lct_index {
    const lct_reader *reader;
    uint64_t *offsets;
    uint64_t count, cap;
    uint64_t end;   /* offset just past the last indexed frame */
    bool truncated;
    uint64_t truncated_offset; /* where the partial frame starts */
    lct__frame partial;        /* the partial frame, for its warning */
    lct__frame_status partial_status;
    uint64_t warning_offset;   /* what the warning names */
    char truncation[LCT_ERROR_MESSAGE_SIZE];
};

lct_status lct_index_build(const lct_reader *r, lct_index **out, lct_error *err)
{
    if (out)
        *out = NULL;
    if (!r || !out)
        return lct__fail(err, LCT_ERR_INVALID, EINVAL, 0,
                         "lct_index_build: invalid argument");
    if (r->source.kind == LCT__SOURCE_STREAM)
        return lct__fail(err, LCT_ERR_INVALID, EINVAL, 0,
                         "trace file '%s': a streamed reader has no random "
                         "access to index",
                         r->shown_name);
    lct_index *idx = calloc(1, sizeof *idx);
    if (!idx)
        goto nomem;
    idx->reader = r;
    const unsigned char *data = r->source.data;
    uint64_t size = r->source.size, pos = r->header.size;
    for (;;) {
        lct__frame f;
        lct__frame_status st = lct__frame_at(data, size, pos, &f);
        if (st == LCT__FRAME_END)
            break;
        if (st != LCT__FRAME_OK) {
            idx->truncated = true;
            idx->partial = f;
            idx->partial_status = st;
            idx->warning_offset = lct__short_text(
                st, &f, 0, idx->truncation, sizeof idx->truncation);
            break;
        }
        if (idx->count == idx->cap) {
            uint64_t cap = idx->cap ? idx->cap * 2 : 4096;
            uint64_t *grown = reallocarray(idx->offsets, cap, sizeof *grown);
            if (!grown)
                goto nomem;
            idx->offsets = grown;
            idx->cap = cap;
        }
        idx->offsets[idx->count++] = pos;
        pos += LCT__PREFIX_SIZE + (uint64_t)f.length;
    }
    idx->end = pos;
    idx->truncated_offset = idx->truncated ? pos : 0;
    *out = idx;
    return LCT_OK;
nomem:
    lct_index_free(idx);
    return lct__fail(err, LCT_ERR_NOMEM, ENOMEM, 0,
                     "trace file '%s': out of memory building the index",
                     r->shown_name);
}

uint64_t lct_index_count(const lct_index *idx)
{
    return idx ? idx->count : 0;
}

uint64_t lct_index_offset(const lct_index *idx, uint64_t i)
{
    return idx && i < idx->count ? idx->offsets[i] : UINT64_MAX;
}

bool lct_index_truncation(const lct_index *idx, uint64_t *offset,
                          const char **message)
{
    if (!idx || !idx->truncated)
        return false;
    if (offset)
        *offset = idx->warning_offset;
    if (message)
        *message = idx->truncation;
    return true;
}

void lct_index_free(lct_index *idx)
{
    if (!idx)
        return;
    free(idx->offsets);
    free(idx);
}

/* Frame i as the framing sees it (the index holds only whole frames). */
static void frame_of(const lct_index *idx, uint64_t i, lct__frame *f)
{
    const lct__source *src = &idx->reader->source;
    (void)lct__frame_at(src->data, src->size, idx->offsets[i], f);
}

int lct_index_record(const lct_index *idx, uint64_t i, lct_record *rec,
                     const char **why)
{
    if (!idx || !rec || i >= idx->count)
        return LCT_ERR_INVALID;
    return lct_record_at(idx->reader, idx->offsets[i], rec, why);
}

/* MARK: parallel scans */

typedef struct worker {
    const lct_index *idx;
    const lct_scan *scan;
    void *state;
    uint64_t first, last; /* frames [first, last) */
    uint64_t records, skipped;
    bool shrank, failed;
    uint64_t lost;
    /* Frames skipped, by index, for the warnings given after the run
     * (8 bytes per damaged frame, nothing for a clean trace). */
    lct__u64s skips;
    pthread_t thread;
    char pad[64]; /* workers are written by different threads */
} worker;

static void *work(void *arg)
{
    worker *w = arg;
    lct_record rec;
    char why[LCT__WHY_SIZE];
    for (uint64_t i = w->first; i < w->last && !w->failed; i++) {
        lct__frame f;
        frame_of(w->idx, i, &f);
        lct__outcome got = lct__frame_record(w->idx->reader, &f, &rec, why,
                                             &w->lost);
        if (got == LCT__LOST) { /* nothing from here on is data */
            w->shrank = true;
            break;
        }
        if (got == LCT__RECORD) {
            w->records++;
            if (w->scan->on_record(w->state, &rec) != 0)
                break;
            continue;
        }
        w->skipped++;
        if (!lct__u64s_push(&w->skips, i))
            w->failed = true;
        if (w->scan->on_skip)
            w->scan->on_skip(w->state, f.offset, why);
    }
    return NULL;
}

/* The scan's frames [*from, *to): its range, or the whole index; false
 * for a range that is not one. */
static bool scan_range(const lct_scan *scan, const lct_index *idx,
                       uint64_t *from, uint64_t *to)
{
    *from = scan ? scan->frames_from : 0;
    *to = scan && (scan->frames_from || scan->frames_to) ? scan->frames_to
                                                         : idx->count;
    return *from <= *to && *to <= idx->count;
}

/* After the threads: every warning lct_next would have given, in file
 * order and in its words, up to the first loss if the file shrank. */
static void give_warnings(const lct_index *idx, const worker *workers,
                          unsigned n, const lct_stats *st)
{
    const lct_reader *r = idx->reader;
    char why[LCT__WHY_SIZE];
    lct_record rec;
    for (unsigned t = 0; t < n; t++) {
        for (size_t k = 0; k < workers[t].skips.n; k++) {
            lct__frame f;
            uint64_t cut;
            frame_of(idx, workers[t].skips.v[k], &f);
            if (lct__frame_record(r, &f, &rec, why, &cut) == LCT__SKIPPED)
                lct__warn_skip(r, f.offset, why);
        }
        if (workers[t].shrank)
            break;
    }
    if (st->shrank)
        lct__warn_shrank(r, st->shrank_offset);
    else if (st->truncated)
        lct__warn_short(r, idx->partial_status, &idx->partial, 0);
}

unsigned lct_scan_threads(const lct_scan *scan, const lct_index *idx)
{
    uint64_t n = scan && scan->threads ? scan->threads : lct__usable_cpus();
    if (n > 1024)
        n = 1024;
    uint64_t from, to;
    if (idx && scan_range(scan, idx, &from, &to) && n > to - from)
        n = to - from;
    return n ? (unsigned)n : 1;
}

/* First frame at or after byte offset target, among frames [lo, hi). */
static uint64_t frame_at_or_after(const lct_index *idx, uint64_t target,
                                  uint64_t lo, uint64_t hi)
{
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo) / 2;
        if (idx->offsets[mid] < target)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Thread t's contiguous range of frames, split by bytes, so a range of
 * large frames is not one thread's burden. */
static void split(const lct_index *idx, const lct_scan *scan,
                  worker *workers, unsigned n, uint64_t from, uint64_t to)
{
    uint64_t start = from < idx->count ? idx->offsets[from] : idx->end;
    uint64_t end = to < idx->count ? idx->offsets[to] : idx->end;
    uint64_t span = end - start;
    for (unsigned t = 0; t < n; t++) {
        workers[t].idx = idx;
        workers[t].scan = scan;
        workers[t].state = scan->states ? scan->states[t] : NULL;
        workers[t].first =
            t == 0 ? from
                   : frame_at_or_after(idx, start + span / n * t, from, to);
        workers[t].last =
            t + 1 == n
                ? to
                : frame_at_or_after(idx, start + span / n * (t + 1), from, to);
    }
}

/* What the threads saw, as one lct_stats. */
static void sum_stats(const lct_index *idx, const worker *workers,
                      unsigned n, uint64_t to, lct_stats *out)
{
    bool to_end = to == idx->count;
    memset(out, 0, sizeof *out);
    for (unsigned t = 0; t < n; t++) {
        out->records += workers[t].records;
        out->skipped += workers[t].skipped;
    }
    out->truncated = to_end && idx->truncated;
    out->truncated_offset = out->truncated ? idx->truncated_offset : 0;
    /* The earliest loss any thread found, or one that made the index end
     * early (its partial last frame was zeros, not a cut). */
    uint64_t lost = LCT__NOTHING_LOST, cut;
    for (unsigned t = 0; t < n; t++)
        if (workers[t].shrank && workers[t].lost < lost)
            lost = workers[t].lost;
    if (lost == LCT__NOTHING_LOST && out->truncated &&
        lct__shrank_before(idx->reader, idx->reader->source.size, true, &cut))
        lost = cut;
    if (lost != LCT__NOTHING_LOST) {
        out->shrank = true;
        out->shrank_offset = lost;
        out->truncated = false; /* what looked cut was the shrink */
    }
    out->bytes_read = to_end ? idx->end : idx->offsets[to];
    out->file_size = idx->reader->source.size;
}

lct_status lct_scan_run(const lct_index *idx, const lct_scan *scan,
                        lct_stats *out, lct_error *err)
{
    uint64_t from, to;
    if (!idx || !scan || !scan->on_record || !scan_range(scan, idx, &from, &to))
        return lct__fail(err, LCT_ERR_INVALID, EINVAL, 0,
                         "lct_scan_run: invalid argument");
    unsigned n = lct_scan_threads(scan, idx);
    worker *workers = calloc(n, sizeof *workers);
    if (!workers)
        return lct__fail(err, LCT_ERR_NOMEM, ENOMEM, 0,
                         "lct_scan_run: out of memory");
    split(idx, scan, workers, n, from, to);
    lct_status rc = lct__run_threads(workers, sizeof *workers,
                                     offsetof(worker, thread), n, work,
                                     "lct_scan_run", err);
    for (unsigned t = 0; t < n && rc == LCT_OK; t++)
        if (workers[t].failed)
            rc = lct__fail(err, LCT_ERR_NOMEM, ENOMEM, 0,
                           "lct_scan_run: out of memory noting skips");
    lct_stats st;
    sum_stats(idx, workers, n, to, &st);
    if (rc == LCT_OK)
        give_warnings(idx, workers, n, &st);
    if (out && rc == LCT_OK)
        *out = st;
    for (unsigned t = 0; t < n; t++)
        free(workers[t].skips.v);
    free(workers);
    return rc;
}
