/*
 * merge.c - several readers on one timeline (lct_merge): a k-way merge by
 * t_wall over each reader's own record order, holding one record per
 * reader in a binary heap, so memory grows with the number of files and
 * never with their length.  Ties go to the reader given first, then to
 * record order: LMCache's replay-events order (every file's records in
 * the order given, then a stable sort by t_wall), exactly so while each
 * file's t_wall never steps back; a step back is warned about.
 */
#include "read/reader_internal.h"
#include "base/error_internal.h"
#include "lct_read.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct lct_merge {
    lct_reader **readers;
    lct_record *heads;  /* each reader's next record, while it has one */
    double *last;       /* each reader's latest t_wall handed out */
    size_t *heap;       /* reader numbers, the earliest head on top */
    size_t nheap, n;
    size_t pending;     /* reader whose head was handed out: advance it */
    unsigned flags;
    double t0;          /* LCT_MERGE_TIMELINE: the first record's t_wall */
    bool started, timeline_started;
    uint64_t backsteps;
};

/* A NaN t_wall (a float the recorder never writes, but a file may hold)
 * sorts first, so the order stays total. */
static double when(const lct_record *rec)
{
    return isnan(rec->t_wall) ? -INFINITY : rec->t_wall;
}

static bool before(const lct_merge *m, size_t a, size_t b)
{
    double ta = when(&m->heads[a]), tb = when(&m->heads[b]);
    return ta < tb || (ta == tb && a < b);
}

static void sift_down(lct_merge *m, size_t i)
{
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, least = i;
        if (l < m->nheap && before(m, m->heap[l], m->heap[least]))
            least = l;
        if (r < m->nheap && before(m, m->heap[r], m->heap[least]))
            least = r;
        if (least == i)
            return;
        size_t t = m->heap[i];
        m->heap[i] = m->heap[least];
        m->heap[least] = t;
        i = least;
    }
}

lct_status lct_merge_new(lct_reader *const *readers, size_t n,
                         unsigned flags, lct_merge **out, lct_error *err)
{
    if (out)
        *out = NULL;
    if (!readers || !out || n == 0)
        return lct__fail(err, LCT_ERR_INVALID, EINVAL, 0,
                         "lct_merge_new: no readers");
    for (size_t i = 0; i < n; i++)
        if (!readers[i])
            return lct__fail(err, LCT_ERR_INVALID, EINVAL, 0,
                             "lct_merge_new: reader %zu is NULL", i);
    lct_merge *m = calloc(1, sizeof *m);
    if (m) {
        m->readers = reallocarray(NULL, n, sizeof *m->readers);
        m->heads = reallocarray(NULL, n, sizeof *m->heads);
        m->last = reallocarray(NULL, n, sizeof *m->last);
        m->heap = reallocarray(NULL, n, sizeof *m->heap);
    }
    if (!m || !m->readers || !m->heads || !m->last || !m->heap) {
        lct_merge_free(m);
        return lct__fail(err, LCT_ERR_NOMEM, ENOMEM, 0, "out of memory");
    }
    for (size_t i = 0; i < n; i++)
        m->readers[i] = readers[i];
    m->n = n;
    m->flags = flags;
    *out = m;
    return LCT_OK;
}

void lct_merge_free(lct_merge *m)
{
    if (!m)
        return;
    free(m->readers);
    free(m->heads);
    free(m->last);
    free(m->heap);
    free(m);
}

static void warn_order(lct_merge *m, size_t i, const char *message)
{
    lct_reader *r = m->readers[i];
    m->backsteps++;
    if (r->sink.fn)
        r->sink.fn(r->sink.ctx, r, LCT_WARN_ORDER, m->heads[i].offset,
                   message);
}

/* Reader i's next record into its head; false at its end. */
static bool advance(lct_merge *m, size_t i)
{
    if (lct_next(m->readers[i], &m->heads[i]) != 1)
        return false;
    double t = when(&m->heads[i]);
    char message[LCT_ERROR_MESSAGE_SIZE];
    if (isnan(m->heads[i].t_wall)) {
        /* Named as what it is: a step back of "inf" s pointed at it
         * without saying why. */
        snprintf(message, sizeof message,
                 "t_wall is NaN at offset %" PRIu64 ": merged as the "
                 "earliest time, ahead of where a sort by t_wall would put "
                 "the records around it", m->heads[i].offset);
        warn_order(m, i, message);
    } else if (t < m->last[i]) {
        snprintf(message, sizeof message,
                 "t_wall steps back %.6f s at offset %" PRIu64
                 ": merged, this record comes later than a full sort by "
                 "t_wall would put it",
                 m->last[i] - t, m->heads[i].offset);
        warn_order(m, i, message);
    }
    m->last[i] = t > m->last[i] ? t : m->last[i];
    return true;
}

static void start(lct_merge *m)
{
    m->started = true;
    m->nheap = 0;
    for (size_t i = 0; i < m->n; i++) {
        m->last[i] = -INFINITY;
        if (advance(m, i))
            m->heap[m->nheap++] = i;
    }
    for (size_t i = m->nheap / 2; i-- > 0;)
        sift_down(m, i);
    m->pending = SIZE_MAX;
}

int lct_merge_next(lct_merge *m, lct_record *rec, size_t *reader)
{
    if (!m || !rec)
        return LCT_ERR_INVALID;
    if (!m->started)
        start(m);
    /* Advanced only now: a streamed reader's views of the record handed
     * out last lived until this call. */
    if (m->pending != SIZE_MAX) {
        if (!advance(m, m->pending))
            m->heap[0] = m->heap[--m->nheap];
        sift_down(m, 0);
        m->pending = SIZE_MAX;
    }
    if (m->nheap == 0)
        return 0;
    size_t top = m->heap[0];
    *rec = m->heads[top];
    if (m->flags & LCT_MERGE_TIMELINE) {
        if (!m->timeline_started) {
            m->t0 = rec->t_wall;
            m->timeline_started = true;
        }
        rec->t_mono = rec->t_wall - m->t0;
    }
    if (reader)
        *reader = top;
    m->pending = top;
    return 1;
}

void lct_merge_rewind(lct_merge *m)
{
    if (!m)
        return;
    for (size_t i = 0; i < m->n; i++)
        lct_reader_rewind(m->readers[i]);
    m->started = false;
    m->timeline_started = false;
    m->backsteps = 0;
}

uint64_t lct_merge_backsteps(const lct_merge *m)
{
    return m ? m->backsteps : 0;
}

void lct_merge_stats(const lct_merge *m, lct_stats *sum)
{
    memset(sum, 0, sizeof *sum);
    for (size_t i = 0; m && i < m->n; i++) {
        lct_stats st;
        lct_reader_stats(m->readers[i], &st);
        sum->records += st.records;
        sum->skipped += st.skipped;
        sum->bytes_read += st.bytes_read;
        sum->file_size += st.file_size;
        if (st.truncated && !sum->truncated) {
            sum->truncated = true;
            sum->truncated_offset = st.truncated_offset;
        }
        if (st.shrank && !sum->shrank) {
            sum->shrank = true;
            sum->shrank_offset = st.shrank_offset;
        }
    }
}

