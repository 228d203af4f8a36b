/*
 * reader.c - the reader and record types under lct.TraceReader: a reader
 * over liblct's (mapped, or streamed for pipes), records that keep their
 * times and qualname and decode args only when asked, and the owner
 * object that keeps a mapping alive while any record still points into
 * it (so a record outlives the loop, and the reader's close()).
 *
 * Long because the reader, the record and the owner are three Python
 * types whose lifetimes hang on each other (a record keeps the owner,
 * close() waits for the reader's users): one file keeps that contract
 * in one place.
 */
#include "lctpy.h"

#include <stddef.h>
#include <string.h>
#include <structmember.h>

PyObject *lctpy_open_error;
PyObject *lctpy_object_key_type;
PyObject *lctpy_layout_type;

void lctpy_raise_open(const lct_error *err)
{
    PyObject *args = Py_BuildValue("(iisK)", (int)err->code, err->sys_errno,
                                   err->message,
                                   (unsigned long long)err->offset);
    if (args) {
        PyErr_SetObject(lctpy_open_error, args);
        Py_DECREF(args);
    }
}

/* A file cut while mapped reads as zeros, not SIGBUS: installed before
 * the first mapping, with the GIL held. */
void lctpy_guard(void)
{
    static bool guarded;
    if (!guarded)
        guarded = lct_guard_install(NULL) == LCT_OK;
}

/* MARK: the owner of a mapping */

/* Holds the lct_reader; the reader object and every record of a mapped
 * reader hold a reference, so the mapping goes when the last one does. */
typedef struct owner {
    PyObject_HEAD
    lct_reader *r;
} owner;

static void owner_dealloc(owner *o)
{
    lct_close(o->r);
    Py_TYPE(o)->tp_free((PyObject *)o);
}

PyTypeObject lctpy_owner_type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "lct._lct.Mapping",
    .tp_basicsize = sizeof(owner),
    .tp_dealloc = (destructor)owner_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Keeps a trace's mapping alive while records point into it.",
};

/* MARK: warnings */

typedef struct reader {
    PyObject_HEAD
    owner *own;
    PyObject *log;     /* callable(kind, offset, message) or None */
    PyObject *path;
    bool streamed;     /* record views die at the next record: copy args */
    bool closed;
    /* Held while the lct_reader is in use (lct_next may run without the
     * GIL, and a log callback may let another thread in), so two threads
     * on one reader take turns, and a close() that comes meanwhile is
     * carried out by the holder when it lets go. */
    PyThread_type_lock lock;
    unsigned long holder;  /* the holding thread's ident, 0 while none */
    bool release_pending;
    /* qualnames repeat: the last few, as str */
    PyObject *names[16];
    const char *name_utf8[16]; /* each name's UTF-8, and its length */
    size_t name_len[16];
    unsigned next_name, last_name; /* last_name: the last one handed out */
} reader;

void lctpy_log(void *ctx, const lct_reader *r, lct_warning_kind kind,
               uint64_t offset, const char *message)
{
    (void)r;
    PyObject *log = ctx;
    PyGILState_STATE g = PyGILState_Ensure();
    PyObject *exc_type, *exc_value, *exc_tb;
    PyErr_Fetch(&exc_type, &exc_value, &exc_tb);
    PyObject *res = PyObject_CallFunction(log, "iKs", (int)kind,
                                          (unsigned long long)offset, message);
    if (!res) /* a failing log must not break reading */
        PyErr_WriteUnraisable(log);
    Py_XDECREF(res);
    PyErr_Restore(exc_type, exc_value, exc_tb);
    PyGILState_Release(g);
}

/* MARK: records */

typedef struct record {
    PyObject_HEAD
    /* t_mono as a float, made with the record: an object member is read
     * by CPython's specialised attribute load; a double member went
     * through the generic descriptor call on every read. */
    PyObject *t_mono;
    double t_wall;
    unsigned long long offset;
    unsigned long length;
    PyObject *qualname;
    owner *own;          /* a mapped record's mapping */
    PyObject *copy;      /* a streamed record's args bytes */
    const unsigned char *args_ptr;
    size_t args_len;
    PyObject *args;      /* decoded, once asked */
} record;

static void record_dealloc(record *rec)
{
    Py_XDECREF(rec->qualname);
    Py_XDECREF(rec->t_mono);
    Py_XDECREF((PyObject *)rec->own);
    Py_XDECREF(rec->copy);
    Py_XDECREF(rec->args);
    Py_TYPE(rec)->tp_free((PyObject *)rec);
}

/* The args view, or NULL with an exception if the file shrank under a
 * mapped record (its bytes now read as zeros). */
static bool args_view(record *rec, lct_value *v)
{
    v->ptr = rec->args_ptr;
    v->len = rec->args_len;
    if (rec->own) {
        lct_record lr = {.offset = rec->offset, .length = (uint32_t)rec->length};
        if (!lct_record_intact(rec->own->r, &lr)) {
            PyErr_Format(PyExc_ValueError,
                         "record at offset %llu: the trace file shrank and "
                         "its bytes are gone", rec->offset);
            return false;
        }
    }
    return true;
}

/* After reading the args' bytes: NULL with the shrink's exception in
 * place of whatever the read gave (out, or its exception) if the file
 * shrank meanwhile (zeros were read, and a refusal of them is no answer),
 * else out as it is. */
static PyObject *checked_after(record *rec, PyObject *out)
{
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    lct_value v;
    if (!args_view(rec, &v)) {
        Py_XDECREF(out);
        Py_XDECREF(type);
        Py_XDECREF(value);
        Py_XDECREF(tb);
        return NULL;
    }
    PyErr_Restore(type, value, tb);
    return out;
}

static PyObject *record_args(record *rec, void *closure)
{
    (void)closure;
    if (!rec->args) {
        lct_value v;
        if (!args_view(rec, &v))
            return NULL;
        /* checked after too, failed or not: a shrink during the decode
         * read zeros */
        PyObject *args = checked_after(rec, lctpy_decode(v.ptr, v.len));
        if (!args)
            return NULL;
        rec->args = args;
    }
    Py_INCREF(rec->args);
    return rec->args;
}

static PyObject *record_type(record *rec, void *closure)
{
    (void)rec;
    (void)closure;
    return PyUnicode_FromString("record");
}

static PyObject *record_op(record *rec, void *closure)
{
    (void)closure;
    Py_ssize_t len;
    const char *s = PyUnicode_AsUTF8AndSize(rec->qualname, &len);
    if (!s)
        return NULL;
    lct_str q = {s, (size_t)len};
    lct_str op = lct_str_after_last(q, '.');
    return PyUnicode_FromStringAndSize(op.ptr, (Py_ssize_t)op.len);
}

/* The ObjectKeys the record carries, through liblct's typed accessors,
 * as lct.ObjectKey tuples: (chunk_hash, model_name, kv_rank,
 * object_group_id, cache_salt, obj_id, bytes). */
static PyObject *record_object_keys(record *rec, PyObject *unused)
{
    (void)unused;
    lct_value v;
    if (!args_view(rec, &v))
        return NULL;
    lct_record lr = {.offset = rec->offset, .length = (uint32_t)rec->length,
                     .t_mono = PyFloat_AS_DOUBLE(rec->t_mono),
                     .t_wall = rec->t_wall,
                     .args = v};
    Py_ssize_t qlen;
    const char *q = PyUnicode_AsUTF8AndSize(rec->qualname, &qlen);
    if (!q)
        return NULL;
    lr.qualname = (lct_str){q, (size_t)qlen};
    lct_key_iter it;
    lct_error err;
    if (lct_key_iter_init(&lr, &it, &err) != LCT_OK) {
        PyErr_SetString(PyExc_ValueError, err.message);
        return checked_after(rec, NULL);
    }
    PyObject *out = PyList_New(0);
    lct_object_key key;
    uint64_t bytes;
    int rc;
    while (out && (rc = lct_key_iter_next(&it, &key, &bytes, &err)) == 1) {
        PyObject *k = PyObject_CallFunction(
            lctpy_object_key_type, "y#s#LLs#KK",
            (const char *)key.chunk_hash.ptr, (Py_ssize_t)key.chunk_hash.len,
            key.model_name.ptr, (Py_ssize_t)key.model_name.len,
            (long long)key.kv_rank, (long long)key.object_group_id,
            key.cache_salt.ptr ? key.cache_salt.ptr : "",
            (Py_ssize_t)key.cache_salt.len,
            (unsigned long long)lct_object_key_hash(&key),
            (unsigned long long)bytes);
        if (!k || PyList_Append(out, k) != 0)
            Py_CLEAR(out);
        Py_XDECREF(k);
    }
    if (out && rc < 0) {
        Py_DECREF(out);
        PyErr_SetString(PyExc_ValueError, err.message);
        out = NULL;
    }
    return checked_after(rec, out);
}

/* The call's layout_desc argument through liblct's typed accessor, as
 * lct.LayoutDesc(shapes, dtypes, bytes); None when the call has none. */
static PyObject *record_layout(record *rec, PyObject *unused)
{
    (void)unused;
    lct_value args, v;
    if (!args_view(rec, &args))
        return NULL;
    if (lct_map_find(args, "layout_desc", &v) != LCT_OK)
        Py_RETURN_NONE;
    lct_layout_desc layout;
    lct_error err;
    uint64_t bytes = 0;
    if (lct_layout_desc_get(v, &layout, &err) != LCT_OK) {
        PyErr_SetString(PyExc_ValueError, err.message);
        return checked_after(rec, NULL);
    }
    if (lct_layout_bytes(&layout, &bytes, &err) != LCT_OK)
        bytes = 0; /* an unknown dtype: the size is not guessed */
    PyObject *shapes = lctpy_decode(layout.shapes.ptr, layout.shapes.len);
    PyObject *dtypes = shapes ? lctpy_decode(layout.dtypes.ptr,
                                             layout.dtypes.len)
                              : NULL;
    PyObject *out = dtypes ? PyObject_CallFunction(lctpy_layout_type, "OOK",
                                                   shapes, dtypes,
                                                   (unsigned long long)bytes)
                           : NULL;
    Py_XDECREF(shapes);
    Py_XDECREF(dtypes);
    return checked_after(rec, out);
}

static PyObject *record_repr(record *rec)
{
    PyObject *args = record_args(rec, NULL);
    if (!args)
        return NULL;
    PyObject *t_wall = PyFloat_FromDouble(rec->t_wall);
    PyObject *out = t_wall ? PyUnicode_FromFormat(
                                 "Record(t_mono=%R, t_wall=%R, qualname=%R, "
                                 "args=%R)",
                                 rec->t_mono, t_wall, rec->qualname, args)
                           : NULL;
    Py_XDECREF(t_wall);
    Py_DECREF(args);
    return out;
}

static PyObject *record_richcompare(PyObject *a, PyObject *b, int op)
{
    if ((op != Py_EQ && op != Py_NE) || !PyObject_TypeCheck(b, &lctpy_record_type))
        Py_RETURN_NOTIMPLEMENTED;
    record *x = (record *)a, *y = (record *)b;
    int same = PyFloat_AS_DOUBLE(x->t_mono) == PyFloat_AS_DOUBLE(y->t_mono) &&
               x->t_wall == y->t_wall;
    if (same) {
        same = PyObject_RichCompareBool(x->qualname, y->qualname, Py_EQ);
        if (same < 0)
            return NULL;
    }
    if (same) {
        PyObject *ax = record_args(x, NULL), *ay = ax ? record_args(y, NULL)
                                                      : NULL;
        same = ay ? PyObject_RichCompareBool(ax, ay, Py_EQ) : -1;
        Py_XDECREF(ax);
        Py_XDECREF(ay);
        if (same < 0)
            return NULL;
    }
    return PyBool_FromLong(op == Py_EQ ? same : !same);
}

static PyGetSetDef record_getset[] = {
    {"type", (getter)record_type, NULL, "always 'record'", NULL},
    {"args", (getter)record_args, NULL,
     "the call's arguments as msgspec decodes them (codec wrappers as "
     "plain dicts); decoded on first access, then kept", NULL},
    {"op", (getter)record_op, NULL,
     "the qualname after its last dot (liblct's addition)", NULL},
    {NULL, NULL, NULL, NULL, NULL}};

/* Plain fields as members, not getters: CPython specializes an
 * attribute read of an object member (qualname) in the loop that reads
 * it, and a loop over records reads little else. */
static PyMemberDef record_members[] = {
    {"t_mono", T_OBJECT_EX, offsetof(record, t_mono), READONLY,
     "seconds since the header's t_mono_start"},
    {"t_wall", T_DOUBLE, offsetof(record, t_wall), READONLY,
     "Unix seconds when the call was published"},
    {"qualname", T_OBJECT_EX, offsetof(record, qualname), READONLY,
     "the call site"},
    {"offset", T_ULONGLONG, offsetof(record, offset), READONLY,
     "file offset of the record's frame (liblct's addition)"},
    {NULL, 0, 0, 0, NULL}};

static PyMethodDef record_methods[] = {
    {"object_keys", (PyCFunction)record_object_keys, METH_NOARGS,
     "object_keys() -> list[ObjectKey]\n\nThe ObjectKeys the call carries "
     "(its keys argument, or a prefetch spec's), read by liblct's typed "
     "accessors, each with obj_id (its stable 64-bit id) and bytes (the "
     "call's layout bytes, 0 unknown)."},
    {"layout", (PyCFunction)record_layout, METH_NOARGS,
     "layout() -> LayoutDesc | None\n\nThe call's layout_desc argument "
     "(a MemoryLayoutDesc) through liblct's typed accessor: shapes and "
     "dtypes as the trace holds them (codec wrappers included), and the "
     "bytes they describe (0 for a dtype it does not know)."},
    {NULL, NULL, 0, NULL}};

PyTypeObject lctpy_record_type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "lct.Record",
    .tp_basicsize = sizeof(record),
    .tp_dealloc = (destructor)record_dealloc,
    .tp_repr = (reprfunc)record_repr,
    .tp_richcompare = record_richcompare,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "One captured call: type, t_mono, t_wall, qualname, args "
              "(as LMCache's Record), plus offset and op.",
    .tp_getset = record_getset,
    .tp_members = record_members,
    .tp_methods = record_methods,
};

/* MARK: the reader */

static void reader_release(reader *self)
{
    if (self->own) {
        lct_reader_set_log(self->own->r, NULL, NULL);
        Py_CLEAR(self->own);
    }
    for (unsigned i = 0; i < 16; i++)
        Py_CLEAR(self->names[i]);
    self->closed = true;
}

/* Take the reader for this thread (waiting, without the GIL, while
 * another has it); -1 with an exception when it is closed, or when this
 * thread already has it (a log callback that reads its own reader). */
static int reader_enter(reader *self)
{
    if (!self->lock || self->closed) {
        PyErr_SetString(PyExc_RuntimeError, "TraceReader is closed");
        return -1;
    }
    unsigned long me = PyThread_get_thread_ident();
    if (self->holder == me) {
        PyErr_SetString(PyExc_ValueError,
                        "TraceReader is already executing in this thread");
        return -1;
    }
    if (!PyThread_acquire_lock(self->lock, NOWAIT_LOCK)) {
        PyLockStatus got;
        do {
            Py_BEGIN_ALLOW_THREADS
            got = PyThread_acquire_lock_timed(self->lock, -1, 1);
            Py_END_ALLOW_THREADS
            if (got == PY_LOCK_INTR && PyErr_CheckSignals() < 0)
                return -1;
        } while (got != PY_LOCK_ACQUIRED);
    }
    self->holder = me;
    if (self->closed || !self->own) { /* closed while we waited */
        self->holder = 0;
        PyThread_release_lock(self->lock);
        PyErr_SetString(PyExc_RuntimeError, "TraceReader is closed");
        return -1;
    }
    return 0;
}

static void reader_leave(reader *self)
{
    self->holder = 0;
    if (self->release_pending) {
        self->release_pending = false;
        reader_release(self);
    }
    PyThread_release_lock(self->lock);
}

static void reader_dealloc(reader *self)
{
    reader_release(self); /* nobody holds it: a holder holds a reference */
    if (self->lock)
        PyThread_free_lock(self->lock);
    Py_XDECREF(self->log);
    Py_XDECREF(self->path);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static int reader_init(reader *self, PyObject *args, PyObject *kw)
{
    static char *names[] = {"path", "log", "max_frame", NULL};
    PyObject *path_obj, *log = Py_None;
    unsigned long long max_frame = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O&|OK", names,
                                     PyUnicode_FSConverter, &path_obj, &log,
                                     &max_frame))
        return -1;
    if (!self->lock && !(self->lock = PyThread_allocate_lock())) {
        Py_DECREF(path_obj);
        PyErr_NoMemory();
        return -1;
    }
    const char *path = PyBytes_AS_STRING(path_obj);
    lct_error err;
    lct_reader *r = NULL;
    lctpy_guard();
    lct_open_options opts = {.flags = 0, .max_stream_frame = max_frame};
    lct_status st;
    Py_BEGIN_ALLOW_THREADS
    st = lct_open_with(path, &opts, &r, &err);
    Py_END_ALLOW_THREADS
    Py_DECREF(path_obj);
    if (st != LCT_OK) {
        lctpy_raise_open(&err);
        return -1;
    }
    owner *own = PyObject_New(owner, &lctpy_owner_type);
    if (!own) {
        lct_close(r);
        return -1;
    }
    own->r = r;
    if (!PyThread_acquire_lock(self->lock, NOWAIT_LOCK)) {
        Py_DECREF(own);
        PyErr_SetString(PyExc_RuntimeError,
                        "TraceReader is in use by another thread: it "
                        "cannot be opened again now");
        return -1;
    }
    reader_release(self);
    self->own = own;
    self->closed = false;
    self->release_pending = false;
    PyThread_release_lock(self->lock);
    self->streamed = lct_reader_data(r).ptr == NULL;
    Py_INCREF(log);
    Py_XSETREF(self->log, log);
    if (log != Py_None)
        lct_reader_set_log(r, lctpy_log, log);
    return 0;
}

/* The qualname as str, from the last few seen when it is one of them. */
static PyObject *qualname_str(reader *self, lct_str q)
{
    /* The last name first: records of one call often come in runs. */
    for (unsigned k = 0; k < 16; k++) {
        unsigned i = (self->last_name + k) % 16;
        if (self->names[i] && self->name_len[i] == q.len &&
            memcmp(self->name_utf8[i], q.ptr, q.len) == 0) {
            self->last_name = i;
            Py_INCREF(self->names[i]);
            return self->names[i];
        }
    }
    PyObject *s = PyUnicode_DecodeUTF8(q.ptr, (Py_ssize_t)q.len, NULL);
    if (!s)
        return NULL;
    Py_ssize_t len;
    const char *u = PyUnicode_AsUTF8AndSize(s, &len); /* kept by s */
    if (!u) {
        Py_DECREF(s);
        return NULL;
    }
    unsigned slot = self->next_name++ % 16;
    Py_INCREF(s);
    Py_XSETREF(self->names[slot], s);
    self->name_utf8[slot] = u;
    self->name_len[slot] = (size_t)len;
    self->last_name = slot;
    return s;
}

static PyObject *next_record(reader *self);

static PyObject *reader_iternext(reader *self)
{
    if (reader_enter(self) < 0)
        return NULL;
    PyObject *out = next_record(self);
    reader_leave(self);
    return out;
}

/* The next record, with the reader held by this thread. */
static PyObject *next_record(reader *self)
{
    lct_record rec;
    int got;
    if (self->streamed) {
        /* a pipe's read may wait for its writer, who may need the GIL */
        Py_BEGIN_ALLOW_THREADS
        got = lct_next(self->own->r, &rec);
        Py_END_ALLOW_THREADS
    } else {
        got = lct_next(self->own->r, &rec);
    }
    if (got != 1)
        return NULL; /* the end; warnings went to the log */
    if (PyErr_Occurred())
        return NULL;
    record *out = PyObject_New(record, &lctpy_record_type);
    if (!out)
        return NULL;
    out->t_mono = NULL;
    out->t_wall = rec.t_wall;
    out->offset = rec.offset;
    out->length = rec.length;
    out->args = NULL;
    out->own = NULL;
    out->copy = NULL;
    out->qualname = qualname_str(self, rec.qualname);
    out->t_mono = PyFloat_FromDouble(rec.t_mono);
    if (!out->qualname || !out->t_mono) {
        out->args_ptr = NULL;
        Py_DECREF(out);
        return NULL;
    }
    if (self->streamed) { /* the view dies at the next record: copy */
        out->copy = PyBytes_FromStringAndSize((const char *)rec.args.ptr,
                                              (Py_ssize_t)rec.args.len);
        if (!out->copy) {
            Py_DECREF(out);
            return NULL;
        }
        out->args_ptr = (const unsigned char *)PyBytes_AS_STRING(out->copy);
    } else {
        Py_INCREF(self->own);
        out->own = self->own;
        out->args_ptr = rec.args.ptr;
    }
    out->args_len = rec.args.len;
    return (PyObject *)out;
}

static PyObject *reader_iter(reader *self)
{
    Py_INCREF(self);
    return (PyObject *)self;
}

/* Closed now when no thread is reading; else marked, and the reading
 * thread lets go of the file when its current step returns (a record it
 * was reading is still handed out; the next step says closed). */
static PyObject *reader_close(reader *self, PyObject *unused)
{
    (void)unused;
    self->closed = true;
    if (!self->lock)
        Py_RETURN_NONE;
    if (PyThread_acquire_lock(self->lock, NOWAIT_LOCK)) {
        reader_release(self);
        PyThread_release_lock(self->lock);
    } else {
        self->release_pending = true;
    }
    Py_RETURN_NONE;
}

/* The header map as a dict (every key, level_meta included). */
static PyObject *reader_header(reader *self, PyObject *unused)
{
    (void)unused;
    if (reader_enter(self) < 0)
        return NULL;
    const lct_header *h = lct_reader_header(self->own->r);
    PyObject *out = lctpy_decode(h->body.ptr, h->body.len);
    reader_leave(self);
    return out;
}

static PyObject *reader_stats(reader *self, PyObject *unused)
{
    (void)unused;
    if (reader_enter(self) < 0)
        return NULL;
    lct_stats st;
    lct_reader_stats(self->own->r, &st);
    reader_leave(self);
    return Py_BuildValue("{sKsKsOsKsOsKsK}", "records",
                         (unsigned long long)st.records, "skipped",
                         (unsigned long long)st.skipped, "truncated",
                         st.truncated ? Py_True : Py_False,
                         "truncated_offset",
                         (unsigned long long)st.truncated_offset, "shrank",
                         st.shrank ? Py_True : Py_False, "bytes_read",
                         (unsigned long long)st.bytes_read, "file_size",
                         (unsigned long long)st.file_size);
}

static PyMethodDef reader_methods[] = {
    {"close", (PyCFunction)reader_close, METH_NOARGS,
     "Close; records already read stay valid."},
    {"header", (PyCFunction)reader_header, METH_NOARGS,
     "The header map as a dict."},
    {"stats", (PyCFunction)reader_stats, METH_NOARGS,
     "Records, skipped frames, the cut tail, bytes read so far."},
    {NULL, NULL, 0, NULL}};

static PyMemberDef reader_members[] = {
    {"streamed", T_BOOL, offsetof(reader, streamed), READONLY,
     "whether the input is read as a stream (a pipe)"},
    {NULL, 0, 0, 0, NULL}};

PyTypeObject lctpy_reader_type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "lct._lct.Reader",
    .tp_basicsize = sizeof(reader),
    .tp_dealloc = (destructor)reader_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Reader(path, log=None, max_frame=0): liblct's reader; "
              "iterate it for records.",
    .tp_iter = (getiterfunc)reader_iter,
    .tp_iternext = (iternextfunc)reader_iternext,
    .tp_methods = reader_methods,
    .tp_members = reader_members,
    .tp_init = (initproc)reader_init,
    .tp_new = PyType_GenericNew,
};
