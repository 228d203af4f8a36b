/*
 * range.c - reading one byte range of a trace on its own (lct.dask's
 * partitions, each in a process of its own): the range's first frame is
 * where the library's resync scan finds one (lct_reader_resync), and it
 * ends where the next range's first frame is found, by the same rule.
 * Records are read while they start before that point; where the chain
 * of frames then stands ("cross") is reported, so the caller can check
 * that it is the next range's start (else that start was frame-like bytes
 * inside a value, and the file must be read in one piece).
 */
#include "lctpy.h"

#include <stdint.h>

static void range_log(void *ctx, const lct_reader *r, lct_warning_kind kind,
                      uint64_t offset, const char *message)
{
    lctpy_range *p = ctx;
    if (offset >= p->next) { /* the next range's to say */
        if (kind == LCT_WARN_MALFORMED && offset < p->skip_past)
            p->skip_past = offset;
        return;
    }
    if (kind == LCT_WARN_MALFORMED)
        p->skipped++;
    if (kind == LCT_WARN_TRUNCATED)
        p->truncated = true;
    if (p->log && p->log != Py_None)
        lctpy_log(p->log, r, kind, offset, message);
}

bool lctpy_range_open(lctpy_range *p, lct_reader *r, uint64_t from,
                      uint64_t to, PyObject *log)
{
    lct_error err;
    *p = (lctpy_range){.r = r, .log = log, .next = UINT64_MAX,
                       .cross = UINT64_MAX, .skip_past = UINT64_MAX};
    lct_reader_set_log(r, range_log, p);
    lct_status st = lct_reader_resync(r, from, &p->start);
    if (st == LCT_ERR_NOT_FOUND) { /* no frame starts here: nothing */
        p->empty = true;
        p->start = UINT64_MAX;
        return true;
    }
    if (st == LCT_OK && to && lct_reader_resync(r, to, &p->next) != LCT_OK)
        p->next = UINT64_MAX; /* none after: read to the end */
    if (st == LCT_OK && p->next <= p->start)
        p->empty = true, p->cross = p->next;
    else if (st == LCT_OK)
        st = lct_reader_seek_offset(r, p->start, &err);
    if (st != LCT_OK) {
        PyErr_SetString(PyExc_ValueError,
                        "lct: a byte range needs a regular file");
        return false;
    }
    return true;
}

int lctpy_range_next(lctpy_range *p, lct_record *rec)
{
    if (p->empty || p->done)
        return 0;
    lct_stats st;
    lct_reader_stats(p->r, &st);
    if (st.bytes_read >= p->next) { /* the last frame ended at or past it */
        p->cross = st.bytes_read;
        p->done = true;
        return 0;
    }
    if (lct_next(p->r, rec) != 1) { /* the chain ends: EOF or a cut tail */
        lct_reader_stats(p->r, &st);
        uint64_t cut = st.truncated && st.truncated_offset >= p->next
                           ? st.truncated_offset
                           : UINT64_MAX;
        p->cross = cut < p->skip_past ? cut : p->skip_past;
        p->done = true;
        return 0;
    }
    if (rec->offset >= p->next) { /* skips, then a record past it */
        p->cross = rec->offset < p->skip_past ? rec->offset : p->skip_past;
        p->done = true;
        return 0;
    }
    p->records++;
    return 1;
}

PyObject *lctpy_range_info(const lctpy_range *p)
{
    /* None for "no frame" and "to the end" */
    PyObject *start = p->start == UINT64_MAX
                          ? Py_NewRef(Py_None)
                          : PyLong_FromUnsignedLongLong(p->start);
    PyObject *next = p->next == UINT64_MAX
                         ? Py_NewRef(Py_None)
                         : PyLong_FromUnsignedLongLong(p->next);
    PyObject *cross = p->cross == UINT64_MAX
                          ? Py_NewRef(Py_None)
                          : PyLong_FromUnsignedLongLong(p->cross);
    if (!start || !next || !cross) {
        Py_XDECREF(start);
        Py_XDECREF(next);
        Py_XDECREF(cross);
        return NULL;
    }
    return Py_BuildValue("{sNsNsNsKsKsO}", "start", start, "next", next,
                         "cross", cross, "records",
                         (unsigned long long)p->records, "skipped",
                         (unsigned long long)p->skipped, "truncated",
                         p->truncated ? Py_True : Py_False);
}
