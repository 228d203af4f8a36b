/*
 * index.c - the frame index (offsets of every complete record frame) and
 * parallel scans over it with POSIX threads.
 *
 * Threads share only read-only data (the mapping and the index); each
 * decodes its own contiguous range of frames into its own lct_record.
 */
#include "decode_internal.h"
#include "error_internal.h"
#include "frame_internal.h"
#include "msgpack_internal.h"
#include "reader_internal.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct lct_index {
    const lct_reader *reader;
    uint64_t *offsets;
    uint64_t count, cap;
    uint64_t end;   /* offset just past the last indexed frame */
    bool truncated;
    uint64_t truncated_offset; /* where the partial frame starts */
    uint64_t warning_offset;   /* what the warning names */
    char truncation[128];
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
        if (st == LCT__FRAME_SHORT_PREFIX) {
            idx->truncated = true;
            idx->warning_offset = pos;
            snprintf(idx->truncation, sizeof idx->truncation,
                     "truncated frame length prefix at offset %" PRIu64, pos);
            break;
        }
        if (st == LCT__FRAME_SHORT_BODY) {
            idx->truncated = true;
            idx->warning_offset = pos + LCT__PREFIX_SIZE;
            snprintf(idx->truncation, sizeof idx->truncation,
                     "truncated frame body at offset %" PRIu64 " (got %" PRIu64
                     " of %" PRIu32 ")",
                     pos + LCT__PREFIX_SIZE, f.available, f.length);
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

static _Thread_local char index_why[LCT__WHY_SIZE];

/* Decode frame i; 1 record, 0 malformed (reason in why). */
static int decode_frame(const lct_index *idx, uint64_t i, lct_record *rec,
                        char *why)
{
    const lct_reader *r = idx->reader;
    uint64_t off = idx->offsets[i];
    const unsigned char *p = r->source.data + off;
    uint32_t len = lct__be32(p);
    if (lct__record_decode(p + LCT__PREFIX_SIZE, len, r->flags, rec, why) != LCT_OK)
        return 0;
    rec->offset = off;
    rec->length = len;
    return 1;
}

int lct_index_record(const lct_index *idx, uint64_t i, lct_record *rec,
                     const char **why)
{
    if (!idx || !rec || i >= idx->count)
        return LCT_ERR_INVALID;
    int rc = decode_frame(idx, i, rec, index_why);
    uint64_t off = idx->offsets[i], cut;
    uint64_t end = off + LCT__PREFIX_SIZE + (uint64_t)lct__be32(idx->reader->source.data + off);
    if (lct__shrank_before(idx->reader, end, rc != 1, &cut))
        return LCT_ERR_CHANGED;
    if (rc == 0 && why)
        *why = index_why;
    return rc;
}

/* MARK: parallel scans */

typedef struct worker {
    const lct_index *idx;
    const lct_scan *scan;
    void *state;
    uint64_t first, last; /* frames [first, last) */
    uint64_t records, skipped;
    bool shrank;
    uint64_t lost;
    pthread_t thread;
} worker;

static void *work(void *arg)
{
    worker *w = arg;
    lct_record rec;
    char why[LCT__WHY_SIZE];
    const lct_reader *r = w->idx->reader;
    for (uint64_t i = w->first; i < w->last; i++) {
        int ok = decode_frame(w->idx, i, &rec, why);
        uint64_t off = w->idx->offsets[i];
        uint64_t end = off + LCT__PREFIX_SIZE + (uint64_t)lct__be32(r->source.data + off);
        /* The file shrank under us: nothing from here on is data. */
        if (lct__shrank_before(r, end, !ok, &w->lost)) {
            w->shrank = true;
            break;
        }
        if (ok) {
            w->records++;
            if (w->scan->on_record(w->state, &rec) != 0)
                break;
        } else {
            w->skipped++;
            if (w->scan->on_skip)
                w->scan->on_skip(w->state, w->idx->offsets[i], why);
        }
    }
    return NULL;
}

unsigned lct_scan_threads(const lct_scan *scan, const lct_index *idx)
{
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    uint64_t n = scan && scan->threads ? scan->threads
                                       : (online > 0 ? (uint64_t)online : 1);
    if (n > 1024)
        n = 1024;
    if (idx && n > idx->count)
        n = idx->count;
    return n ? (unsigned)n : 1;
}

/* First frame at or after byte offset target. */
static uint64_t frame_at_or_after(const lct_index *idx, uint64_t target)
{
    uint64_t lo = 0, hi = idx->count;
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo) / 2;
        if (idx->offsets[mid] < target)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

lct_status lct_scan_run(const lct_index *idx, const lct_scan *scan, lct_stats *out,
                 lct_error *err)
{
    if (!idx || !scan || !scan->on_record)
        return lct__fail(err, LCT_ERR_INVALID, EINVAL, 0,
                         "lct_scan_run: invalid argument");
    unsigned n = lct_scan_threads(scan, idx);
    worker *workers = calloc(n, sizeof *workers);
    if (!workers)
        return lct__fail(err, LCT_ERR_NOMEM, ENOMEM, 0,
                         "lct_scan_run: out of memory");
    /* Split by bytes, so a range of large frames is not one thread's
     * burden. */
    uint64_t start = idx->count ? idx->offsets[0] : 0;
    uint64_t span = idx->end - start;
    for (unsigned t = 0; t < n; t++) {
        workers[t].idx = idx;
        workers[t].scan = scan;
        workers[t].state = scan->states ? scan->states[t] : NULL;
        workers[t].first =
            t == 0 ? 0 : frame_at_or_after(idx, start + span / n * t);
        workers[t].last =
            t + 1 == n ? idx->count
                       : frame_at_or_after(idx, start + span / n * (t + 1));
    }
    int rc = LCT_OK;
    unsigned started = 1;
    for (unsigned t = 1; t < n; t++, started++) {
        int e = pthread_create(&workers[t].thread, NULL, work, &workers[t]);
        if (e != 0) {
            rc = lct__fail(err, LCT_ERR_SYS, e, 0,
                           "lct_scan_run: cannot start a thread: %s",
                           strerror(e));
            break;
        }
    }
    if (rc == LCT_OK)
        work(&workers[0]);
    for (unsigned t = 1; t < started; t++)
        pthread_join(workers[t].thread, NULL);
    if (out && rc == LCT_OK) {
        memset(out, 0, sizeof *out);
        for (unsigned t = 0; t < n; t++) {
            out->records += workers[t].records;
            out->skipped += workers[t].skipped;
        }
        out->truncated = idx->truncated;
        out->truncated_offset = idx->truncated_offset;
        /* The earliest loss any thread found, or one that made the index
         * end early (its partial last frame was zeros, not a cut). */
        uint64_t lost = LCT__NOTHING_LOST, cut;
        for (unsigned t = 0; t < n; t++)
            if (workers[t].shrank && workers[t].lost < lost)
                lost = workers[t].lost;
        if (lost == LCT__NOTHING_LOST && idx->truncated &&
            lct__shrank_before(idx->reader, idx->reader->source.size, true,
                               &cut))
            lost = cut;
        if (lost != LCT__NOTHING_LOST) {
            out->shrank = true;
            out->shrank_offset = lost;
            out->truncated = false; /* what looked cut was the shrink */
        }
        out->bytes_read = idx->end;
        out->file_size = idx->reader->source.size;
    }
    free(workers);
    return rc;
}
