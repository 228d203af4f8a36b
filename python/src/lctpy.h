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

/* The exception an open that the library refused raises: args are
 * (code, errno, message, offset); the Python layer words it as the
 * reference reader does. */
extern PyObject *lctpy_open_error;
/* Raise lctpy_open_error for err. */
void lctpy_raise_open(const lct_error *err);

/* A reader's warnings go to a Python callable (kind, offset, message);
 * called with or without the GIL held. */
void lctpy_log(void *ctx, const lct_reader *r, lct_warning_kind kind,
               uint64_t offset, const char *message);

#endif
