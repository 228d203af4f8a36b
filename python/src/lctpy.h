/*
 * lctpy.h - what the parts of the lct Python extension share: the
 * msgpack-to-Python decoder, the reader and record types, the table
 * builders, and the objects the module keeps (timezone, Ext, types the
 * Python layer hands in).
 */
#ifndef LCTPY_H
#define LCTPY_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "lct.h"

#include <stdbool.h>
#include <string.h>

/* Set by the Python layer (lct/__init__.py) at import: the named tuple
 * for an ObjectKey, and the Ext type for opaque ext values. */
extern PyObject *lctpy_object_key_type;
extern PyObject *lctpy_layout_type;
extern PyObject *lctpy_ext_type;

/* The Python value msgspec gives for the msgpack value at p (len bytes
 * holding exactly one value): dict, list, str, bytes, int, float, bool,
 * None, datetime (timestamp ext), Ext.  NULL with an exception set on
 * malformed bytes. */
PyObject *lctpy_decode(const unsigned char *p, size_t len);

/* block.c: a column of bytes a result is built in.  It grows by
 * doubling, and once large lives in its own mapping that grows without
 * copying or touching what it holds; it is handed to Python as a Block,
 * which numpy wraps without a copy. */
typedef struct lctpy_col {
    char *buf;
    size_t len, cap;
    bool mapped; /* buf is a mapping of cap bytes, not malloc's */
} lctpy_col;
/* Room for `more` bytes past len; false when memory ran out (c as it
 * was). */
bool lctpy_col_grow(lctpy_col *c, size_t more);
static inline bool lctpy_col_push(lctpy_col *c, const void *p, size_t n)
{
    if (c->cap - c->len < n && !lctpy_col_grow(c, n))
        return false;
    memcpy(c->buf + c->len, p, n);
    c->len += n;
    return true;
}
void lctpy_col_free(lctpy_col *c);
/* c's bytes as a Block, c emptied (freed when the Block cannot be made:
 * NULL with an exception). */
PyObject *lctpy_col_give(lctpy_col *c);
extern PyTypeObject lctpy_block_type;

/* How many times the table builders grew an array (read_table's
 * allocations: a few per column and thread, never one per record). */
extern unsigned long long lctpy_table_allocations;

/* The types of reader.c, and the module functions of table.c. */
extern PyTypeObject lctpy_reader_type;
extern PyTypeObject lctpy_record_type;
extern PyTypeObject lctpy_owner_type;
PyObject *lctpy_read_table(PyObject *self, PyObject *args, PyObject *kw);
PyObject *lctpy_keys(PyObject *self, PyObject *args, PyObject *kw);
PyObject *lctpy_mrc(PyObject *self, PyObject *args, PyObject *kw);
/* Every key of path's selected records fed to sim, each record's keys a
 * call (its chunk positions as many keys as it has kv ranks); false
 * with an exception. */
bool lctpy_feed_sim(const char *path, PyObject *log, PyObject *quals,
                    PyObject *since, PyObject *until, PyObject *wsince,
                    PyObject *wuntil, PyObject *reads, PyObject *writes,
                    bool lookups_only, bool in_bytes, lct_sim *sim);
PyObject *lctpy_sim(PyObject *self, PyObject *args, PyObject *kw);

/* The exception an open that the library refused raises: args are
 * (code, errno, message, offset); the Python layer words it as the
 * reference reader does. */
extern PyObject *lctpy_open_error;
/* Install liblct's SIGBUS guard once, before the module maps a file. */
void lctpy_guard(void);
/* Raise lctpy_open_error for err. */
void lctpy_raise_open(const lct_error *err);

/* A reader's warnings go to a Python callable (kind, offset, message);
 * called with or without the GIL held. */
void lctpy_log(void *ctx, const lct_reader *r, lct_warning_kind kind,
               uint64_t offset, const char *message);

/* One byte range of a trace read on its own (range.c). */
typedef struct lctpy_range {
    lct_reader *r;
    PyObject *log;
    uint64_t start;     /* its first frame (UINT64_MAX: none) */
    uint64_t next;      /* the next range's first frame (UINT64_MAX: end) */
    uint64_t cross;     /* where the chain stood at the end (UINT64_MAX:
                           it ended: the end of the file, or a cut tail) */
    uint64_t skip_past; /* the first skip seen at or past next */
    uint64_t records, skipped;
    bool truncated, empty, done;
} lctpy_range;

/* Find the range [from, to) of r's file (to 0: to the end) and put r at
 * its first frame; its warnings go to log (a callable or None), those at
 * or past the next range's start excepted.  false with an exception. */
bool lctpy_range_open(lctpy_range *p, lct_reader *r, uint64_t from,
                      uint64_t to, PyObject *log);
/* The range's next record: 1, or 0 at its end (cross then set). */
int lctpy_range_next(lctpy_range *p, lct_record *rec);
/* {"start", "next", "cross", "records", "skipped", "truncated"}. */
PyObject *lctpy_range_info(const lctpy_range *p);

#endif
