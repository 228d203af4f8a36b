/*
 * table.c - whole-file answers for Python, computed with the GIL
 * released: read_table (columns of every selected record, on several
 * threads through lct_scan_file, as flat arrays numpy wraps without a
 * copy), keys (the key reference stream of `lct keys`) and mrc (the
 * curve of `lct mrc`).  Arrays grow by doubling: a handful of
 * allocations per column and thread, none per record.
 *
 * Long because read_table, keys and mrc share the lanes (per-thread
 * growing arrays), their joining and their argument checks: one file
 * keeps the rule of no allocation per record in one place.
 */
#include "lctpy.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* MARK: growable columns */

typedef lctpy_col col;

static int col_write(void *ctx, const char *data, size_t len)
{
    return lctpy_col_push(ctx, data, len) ? 0 : -1;
}

/* MARK: qualnames, interned per thread */

typedef struct names {
    char **text;       /* owned copies, one per distinct name */
    size_t *len;
    signed char *selected; /* -1: not asked yet */
    uint32_t *slots;   /* open addressing: id + 1, 0 empty */
    uint32_t n, cap, nslots;
} names;

/* Every byte counts: a hash that read only some (qualnames share their
 * first 55) would let a hostile trace of names alike there make interning
 * quadratic.  8 bytes a step, a multiply each: a few ns for a qualname. */
static uint32_t hash_of(const char *s, size_t len)
{
    uint64_t h = len * 0x9e3779b97f4a7c15ull, w;
    size_t i = 0;
    for (; i + 8 <= len; i += 8) {
        memcpy(&w, s + i, 8);
        h = (h ^ w) * 0xc2b2ae3d27d4eb4full;
        h ^= h >> 29;
    }
    if (i < len) {
        w = 0;
        memcpy(&w, s + i, len - i);
        h = (h ^ w) * 0xc2b2ae3d27d4eb4full;
    }
    h ^= h >> 32;
    return (uint32_t)h;
}

static void names_free(names *t)
{
    for (uint32_t i = 0; i < t->n; i++)
        free(t->text[i]);
    free(t->text);
    free(t->len);
    free(t->selected);
    free(t->slots);
    memset(t, 0, sizeof *t);
}

static bool names_grow(names *t)
{
    uint32_t cap = t->cap ? t->cap * 2 : 16;
    char **text = realloc(t->text, cap * sizeof *text);
    if (text)
        t->text = text;
    size_t *len = realloc(t->len, cap * sizeof *len);
    if (len)
        t->len = len;
    signed char *sel = realloc(t->selected, cap);
    if (sel)
        t->selected = sel;
    uint32_t *slots = calloc(cap * 2, sizeof *slots);
    if (!text || !len || !sel || !slots) {
        free(slots);
        return false;
    }
    free(t->slots);
    t->slots = slots;
    t->nslots = cap * 2;
    t->cap = cap;
    for (uint32_t id = 0; id < t->n; id++) {
        uint32_t s = hash_of(t->text[id], t->len[id]) % t->nslots;
        while (t->slots[s])
            s = (s + 1) % t->nslots;
        t->slots[s] = id + 1;
    }
    /* lanes intern on their own threads */
    __atomic_add_fetch(&lctpy_table_allocations, 4, __ATOMIC_RELAXED);
    return true;
}

/* The id of a name, added when new; UINT32_MAX if memory ran out. */
static uint32_t intern(names *t, const char *s, size_t len)
{
    if (t->nslots) {
        uint32_t slot = hash_of(s, len) % t->nslots;
        for (; t->slots[slot]; slot = (slot + 1) % t->nslots) {
            uint32_t id = t->slots[slot] - 1;
            if (t->len[id] == len && memcmp(t->text[id], s, len) == 0)
                return id;
        }
    }
    if (t->n == t->cap && !names_grow(t))
        return UINT32_MAX;
    char *copy = malloc(len + 1);
    if (!copy)
        return UINT32_MAX;
    memcpy(copy, s, len);
    copy[len] = '\0';
    uint32_t id = t->n++;
    t->text[id] = copy;
    t->len[id] = len;
    t->selected[id] = -1;
    uint32_t slot = hash_of(s, len) % t->nslots;
    while (t->slots[slot])
        slot = (slot + 1) % t->nslots;
    t->slots[slot] = id + 1;
    return id;
}

static PyObject *names_list(const names *t)
{
    PyObject *out = PyList_New(t->n);
    for (uint32_t i = 0; out && i < t->n; i++) {
        PyObject *s = PyUnicode_DecodeUTF8(t->text[i], (Py_ssize_t)t->len[i],
                                           "surrogateescape");
        if (!s) {
            Py_CLEAR(out);
            break;
        }
        PyList_SET_ITEM(out, i, s);
    }
    return out;
}

/* MARK: which records: qualname patterns and a time window */

typedef struct rowsel {
    char **patterns; /* NULL-terminated, or NULL: every qualname */
    double since, until;           /* t_mono bounds, NaN unset */
    double wall_since, wall_until; /* t_wall bounds, NaN unset */
} rowsel;

static bool in_window(const rowsel *s, const lct_record *rec)
{
    /* NaN times lie outside a bound, as the tool's --since says */
    if (!isnan(s->since) && !(rec->t_mono >= s->since))
        return false;
    if (!isnan(s->until) && !(rec->t_mono <= s->until))
        return false;
    if (!isnan(s->wall_since) && !(rec->t_wall >= s->wall_since))
        return false;
    if (!isnan(s->wall_until) && !(rec->t_wall <= s->wall_until))
        return false;
    return true;
}

static bool patterns_name(char **patterns, lct_str q)
{
    for (size_t i = 0; patterns[i]; i++)
        if (lct_qualname_match(q, patterns[i]))
            return true;
    return false;
}

/* A Python list of str (or None) as a NULL-terminated array of copies. */
static bool patterns_from(PyObject *list, char ***out)
{
    *out = NULL;
    if (!list || list == Py_None)
        return true;
    PyObject *seq = PySequence_Fast(list, "patterns must be a list of str");
    if (!seq)
        return false;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    char **v = calloc((size_t)n + 1, sizeof *v);
    bool ok = v != NULL;
    for (Py_ssize_t i = 0; ok && i < n; i++) {
        const char *s = PyUnicode_AsUTF8(PySequence_Fast_GET_ITEM(seq, i));
        ok = s && (v[i] = strdup(s));
    }
    Py_DECREF(seq);
    if (!ok) {
        for (Py_ssize_t i = 0; v && i < n; i++)
            free(v[i]);
        free(v);
        if (!PyErr_Occurred())
            PyErr_NoMemory();
        return false;
    }
    *out = v;
    return true;
}

static void patterns_free(char **v)
{
    for (size_t i = 0; v && v[i]; i++)
        free(v[i]);
    free(v);
}

/* MARK: read_table */

enum {
    COL_IDX = 1, COL_OFFSET = 2, COL_T_MONO = 4, COL_T_WALL = 8,
    COL_QUALNAME = 16, COL_ARGS_BYTES = 32, COL_ARGS = 64
};

/* Bytes read so far, for a caller's progress: threads add to a shared
 * 8-byte cell (a Python bytearray the caller polls from another thread)
 * once a MiB, relaxed: a count to show, not to synchronise on. */
typedef struct progress_cell {
    uint64_t *done;  /* NULL: nobody asked */
    uint64_t pending;
} progress_cell;

static void progress_add(progress_cell *p, const lct_record *rec)
{
    if (!p->done)
        return;
    p->pending += 4 + (uint64_t)rec->length;
    if (p->pending >= (1u << 20)) {
        __atomic_fetch_add(p->done, p->pending, __ATOMIC_RELAXED);
        p->pending = 0;
    }
}

/* The caller's cell, from a writable buffer of at least 8 aligned bytes
 * (None: none); *view is released with PyBuffer_Release when it held
 * one. */
static bool progress_cell_of(PyObject *obj, Py_buffer *view, uint64_t **done)
{
    *done = NULL;
    view->obj = NULL;
    if (!obj || obj == Py_None)
        return true;
    if (PyObject_GetBuffer(obj, view, PyBUF_WRITABLE) != 0)
        return false;
    if (view->len < 8 || ((uintptr_t)view->buf & 7)) {
        PyBuffer_Release(view);
        view->obj = NULL;
        PyErr_SetString(PyExc_ValueError,
                        "progress: a writable, aligned buffer of 8 bytes");
        return false;
    }
    *done = view->buf;
    return true;
}

typedef struct lane {
    const rowsel *sel;
    unsigned want;
    uint64_t seen;    /* records seen: the next one's number in the lane */
    uint64_t rows;
    col idx, offset, t_mono, t_wall, qual, args_bytes, json, json_end;
    names names;
    bool failed;
    progress_cell progress;
} lane;

static int lane_record(void *state, const lct_record *rec)
{
    lane *l = state;
    progress_add(&l->progress, rec);
    uint64_t local = l->seen++;
    if (!in_window(l->sel, rec))
        return 0;
    uint32_t id = intern(&l->names, rec->qualname.ptr, rec->qualname.len);
    if (id == UINT32_MAX)
        goto fail;
    if (l->names.selected[id] < 0)
        l->names.selected[id] = !l->sel->patterns ||
                                patterns_name(l->sel->patterns, rec->qualname);
    if (!l->names.selected[id])
        return 0;
    unsigned w = l->want;
    int64_t args_bytes = (int64_t)rec->args.len; /* as numpy gets it */
    if (((w & COL_IDX) && !lctpy_col_push(&l->idx, &local, 8)) ||
        ((w & COL_OFFSET) && !lctpy_col_push(&l->offset, &rec->offset, 8)) ||
        ((w & COL_T_MONO) && !lctpy_col_push(&l->t_mono, &rec->t_mono, 8)) ||
        ((w & COL_T_WALL) && !lctpy_col_push(&l->t_wall, &rec->t_wall, 8)) ||
        ((w & COL_QUALNAME) && !lctpy_col_push(&l->qual, &id, 4)) ||
        ((w & COL_ARGS_BYTES) &&
         !lctpy_col_push(&l->args_bytes, &args_bytes, 8)))
        goto fail;
    if (w & COL_ARGS) {
        if (lct_value_write_json(rec->args, col_write, &l->json) != LCT_OK)
            goto fail;
        uint64_t end = l->json.len;
        if (!lctpy_col_push(&l->json_end, &end, 8))
            goto fail;
    }
    l->rows++;
    return 0;
fail:
    l->failed = true;
    return 1;
}

static void lane_reset(void *state)
{
    lane *l = state;
    col *cols[] = {&l->idx, &l->offset, &l->t_mono, &l->t_wall, &l->qual,
                   &l->args_bytes, &l->json, &l->json_end};
    for (size_t i = 0; i < sizeof cols / sizeof *cols; i++)
        lctpy_col_free(cols[i]);
    names_free(&l->names);
    const rowsel *sel = l->sel;
    unsigned want = l->want;
    uint64_t *done = l->progress.done;
    memset(l, 0, sizeof *l);
    l->sel = sel;
    l->want = want;
    l->progress.done = done;
}

/* One output column: the lanes' pieces end to end, in the first lane's
 * column grown to hold them all, handed to numpy as it is. */
static PyObject *join_col(lane *lanes, unsigned n, size_t field)
{
    col none = {0};
    if (n == 0)
        return lctpy_col_give(&none);
    col *first = (col *)((char *)&lanes[0] + field);
    size_t total = 0;
    for (unsigned t = 0; t < n; t++)
        total += ((col *)((char *)&lanes[t] + field))->len;
    if (total > first->cap && !lctpy_col_grow(first, total - first->len))
        return PyErr_NoMemory();
    for (unsigned t = 1; t < n; t++) {
        col *c = (col *)((char *)&lanes[t] + field);
        if (c->len)
            memcpy(first->buf + first->len, c->buf, c->len);
        first->len += c->len;
    }
    return lctpy_col_give(first);
}

/* Each lane numbers its records from 0: shift them to the file's. */
static void lanes_number_records(lane *lanes, unsigned n)
{
    uint64_t base = 0;
    for (unsigned t = 0; t < n; t++) {
        uint64_t *v = (uint64_t *)lanes[t].idx.buf;
        for (size_t i = 0; v && i < lanes[t].idx.len / 8; i++)
            v[i] += base;
        base += lanes[t].seen;
    }
}

/* Each lane's qualname ids to the file's, in order of first sight;
 * false when memory ran out. */
static bool lanes_merge_names(lane *lanes, unsigned n, names *all)
{
    for (unsigned t = 0; t < n; t++) {
        names *ln = &lanes[t].names;
        uint32_t *map = ln->n ? malloc(ln->n * sizeof *map) : NULL;
        if (ln->n && !map)
            return false;
        for (uint32_t i = 0; i < ln->n; i++)
            if ((map[i] = intern(all, ln->text[i], ln->len[i])) == UINT32_MAX) {
                free(map);
                return false;
            }
        uint32_t *ids = (uint32_t *)lanes[t].qual.buf;
        for (size_t i = 0; ids && i < lanes[t].qual.len / 4; i++)
            ids[i] = map[ids[i]];
        free(map);
    }
    return true;
}

/* The args column, asked for: one str per row, in file order. */
static PyObject *lanes_args(lane *lanes, unsigned n)
{
    uint64_t rows = 0;
    for (unsigned t = 0; t < n; t++)
        rows += lanes[t].rows;
    PyObject *list = PyList_New((Py_ssize_t)rows);
    Py_ssize_t at = 0;
    for (unsigned t = 0; list && t < n; t++) {
        const uint64_t *ends = (const uint64_t *)lanes[t].json_end.buf;
        uint64_t start = 0;
        for (uint64_t i = 0; list && i < lanes[t].rows; i++) {
            PyObject *s = PyUnicode_DecodeUTF8(lanes[t].json.buf + start,
                                               (Py_ssize_t)(ends[i] - start),
                                               "surrogateescape");
            if (!s)
                Py_CLEAR(list);
            else
                PyList_SET_ITEM(list, at++, s);
            start = ends[i];
        }
    }
    return list;
}

/* d[name] = v, taking v's reference; false (with v released) on failure. */
static bool dict_take(PyObject *d, const char *name, PyObject *v)
{
    bool ok = v && PyDict_SetItemString(d, name, v) == 0;
    Py_XDECREF(v);
    return ok;
}

/* The numeric columns asked for, each joined over the lanes. */
static bool put_columns(PyObject *d, lane *lanes, unsigned n, unsigned want)
{
    static const struct {
        unsigned bit;
        const char *name;
        size_t field;
    } cols[] = {
        {COL_IDX, "idx", offsetof(lane, idx)},
        {COL_OFFSET, "offset", offsetof(lane, offset)},
        {COL_T_MONO, "t_mono", offsetof(lane, t_mono)},
        {COL_T_WALL, "t_wall", offsetof(lane, t_wall)},
        {COL_QUALNAME, "qualname_codes", offsetof(lane, qual)},
        {COL_ARGS_BYTES, "args_bytes", offsetof(lane, args_bytes)},
    };
    for (size_t i = 0; i < sizeof cols / sizeof *cols; i++)
        if ((want & cols[i].bit) &&
            !dict_take(d, cols[i].name, join_col(lanes, n, cols[i].field)))
            return false;
    return true;
}

/* Everything the threads gathered, as the dict read_table returns. */
static PyObject *table_result(lane *lanes, unsigned n, unsigned want,
                              const lct_stats *st)
{
    lanes_number_records(lanes, n);
    names all = {0};
    if (!lanes_merge_names(lanes, n, &all)) {
        names_free(&all);
        return PyErr_NoMemory();
    }
    PyObject *d = PyDict_New();
    bool ok = d && put_columns(d, lanes, n, want) &&
              dict_take(d, "qualname_categories", names_list(&all)) &&
              (!(want & COL_ARGS) || dict_take(d, "args", lanes_args(lanes, n)));
    names_free(&all);
    if (ok)
        ok = dict_take(d, "stats", Py_BuildValue(
            "{sKsKsOsO}", "records", (unsigned long long)st->records,
            "skipped", (unsigned long long)st->skipped, "truncated",
            st->truncated ? Py_True : Py_False, "shrank",
            st->shrank ? Py_True : Py_False));
    if (!ok) {
        Py_XDECREF(d);
        return NULL;
    }
    return d;
}

static double bound(PyObject *o)
{
    return !o || o == Py_None ? NAN : PyFloat_AsDouble(o);
}

/* Open path for a pass, its warnings to log.  A whole file is read once,
 * front to back, each row copied out: the library takes the mapping or
 * the stream, whichever costs less here (LCT_ONE_PASS).  A byte range
 * (lct.dask) is mapped: it finds its first frame by a resync scan. */
static lct_reader *open_pass(const char *path, PyObject *log, bool whole)
{
    lct_reader *r = NULL;
    lct_error err;
    lctpy_guard();
    lct_open_options opts = {.flags = whole ? LCT_ONE_PASS : 0};
    lct_status st;
    Py_BEGIN_ALLOW_THREADS
    st = lct_open_with(path, &opts, &r, &err);
    Py_END_ALLOW_THREADS
    if (st != LCT_OK) {
        lctpy_raise_open(&err);
        return NULL;
    }
    if (log && log != Py_None)
        lct_reader_set_log(r, lctpy_log, log);
    return r;
}

/* read_table over one byte range (lct.dask's partitions): one thread,
 * record numbers from 0 in the range, and "range" saying where it began,
 * where the next range begins and where the chain of frames stood. */
static PyObject *table_range(lct_reader *r, rowsel *sel, unsigned want,
                             uint64_t start, uint64_t stop, PyObject *log)
{
    lane l = {.sel = sel, .want = want};
    lctpy_range p;
    PyObject *out = NULL;
    if (lctpy_range_open(&p, r, start, stop, log)) {
        lct_record rec;
        bool failed = false;
        Py_BEGIN_ALLOW_THREADS
        while (!failed && lctpy_range_next(&p, &rec) == 1)
            failed = lane_record(&l, &rec) != 0;
        Py_END_ALLOW_THREADS
        lct_stats st = {.records = p.records, .skipped = p.skipped,
                        .truncated = p.truncated};
        PyObject *info = failed ? NULL : lctpy_range_info(&p);
        out = info ? table_result(&l, 1, want, &st) : NULL;
        if (out && PyDict_SetItemString(out, "range", info) != 0)
            Py_CLEAR(out);
        Py_XDECREF(info);
        if (failed)
            PyErr_NoMemory();
    }
    lane_reset(&l);
    lct_close(r);
    patterns_free(sel->patterns);
    return out;
}

static PyObject *table_whole(const char *path, rowsel *sel, unsigned want,
                             unsigned threads, PyObject *log,
                             uint64_t start, uint64_t stop, uint64_t *done);

PyObject *lctpy_read_table(PyObject *self, PyObject *args, PyObject *kw)
{
    (void)self;
    static char *kwnames[] = {"path", "want", "qualname", "since", "until",
                              "wall_since", "wall_until", "threads", "log",
                              "start", "stop", "progress", NULL};
    PyObject *path_obj, *quals = Py_None, *since = Py_None, *until = Py_None,
             *wsince = Py_None, *wuntil = Py_None, *log = Py_None,
             *progress = Py_None;
    unsigned want = 0, threads = 0;
    unsigned long long start = 0, stop = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O&I|OOOOOIOKKO", kwnames,
                                     PyUnicode_FSConverter, &path_obj, &want,
                                     &quals, &since, &until, &wsince, &wuntil,
                                     &threads, &log, &start, &stop, &progress))
        return NULL;
    rowsel sel = {NULL, bound(since), bound(until), bound(wsince),
                  bound(wuntil)};
    Py_buffer cell = {0};
    uint64_t *done = NULL;
    if (PyErr_Occurred() || !progress_cell_of(progress, &cell, &done) ||
        !patterns_from(quals, &sel.patterns)) {
        if (cell.obj)
            PyBuffer_Release(&cell);
        Py_DECREF(path_obj);
        return NULL;
    }
    PyObject *out = table_whole(PyBytes_AS_STRING(path_obj), &sel, want,
                                threads, log, start, stop, done);
    if (cell.obj)
        PyBuffer_Release(&cell);
    Py_DECREF(path_obj);
    return out;
}

/* read_table of a whole file (on threads), or of a byte range. */
static PyObject *table_whole(const char *path, rowsel *sel, unsigned want,
                             unsigned threads, PyObject *log,
                             uint64_t start, uint64_t stop, uint64_t *done)
{
    lct_reader *r = open_pass(path, log, !start && !stop);
    if (!r) {
        patterns_free(sel->patterns);
        return NULL;
    }
    if (start || stop)
        return table_range(r, sel, want, start, stop, log);
    lct_scan scan = {.threads = threads, .on_record = lane_record,
                     .on_reset = lane_reset};
    unsigned n = lct_scan_threads(&scan, NULL);
    lane *lanes = calloc(n, sizeof *lanes);
    void **states = calloc(n, sizeof *states);
    PyObject *out = NULL;
    if (!lanes || !states) {
        PyErr_NoMemory();
        goto done;
    }
    for (unsigned t = 0; t < n; t++) {
        lanes[t].sel = sel;
        lanes[t].want = want;
        lanes[t].progress.done = done;
        states[t] = &lanes[t];
    }
    scan.states = states;
    lct_stats st;
    lct_error err = {0};
    lct_status rc;
    bool failed = false;
    Py_BEGIN_ALLOW_THREADS
    rc = lct_scan_file(r, &scan, &st, &err);
    if (rc == LCT_ERR_INVALID) { /* a pipe: one pass, one thread */
        lct_record rec;
        for (unsigned t = 1; t < n; t++)
            lane_reset(&lanes[t]);
        n = 1;
        while (lct_next(r, &rec) == 1 && lane_record(&lanes[0], &rec) == 0)
            ;
        lct_reader_stats(r, &st);
        rc = LCT_OK;
    }
    for (unsigned t = 0; t < n; t++)
        failed |= lanes[t].failed;
    Py_END_ALLOW_THREADS
    if (rc != LCT_OK)
        PyErr_SetString(PyExc_OSError, err.message);
    else if (failed)
        PyErr_NoMemory();
    else
        out = table_result(lanes, n, want, &st);
done:
    for (unsigned t = 0; lanes && t < n; t++)
        lane_reset(&lanes[t]);
    free(lanes);
    free(states);
    lct_close(r);
    patterns_free(sel->patterns);
    return out;
}

/* MARK: keys */

/* lct.keys's columns, each grown on its own and handed to numpy as it
 * is (lctpy_col_give): numbers of 8 bytes (t_mono a double, obj_id
 * its bits), then codes of 4 into the names tables. */
enum {
    KC_IDX, KC_T_MONO, KC_KV_RANK, KC_GROUP, KC_OBJ_ID, KC_BYTES,
    KC_OP, KC_MODEL, KC_SALT, KC_HASH, KC_COUNT
};
#define KC_NUMBERS KC_OP /* the columns before it hold 8 bytes a row */

typedef struct keywalk {
    rowsel sel;
    char **reads, **writes; /* NULL: the default call */
    bool all;
    col cols[KC_COUNT];
    /* ops: "read", "write", then qualnames; hashes: distinct chunk
     * hashes, so a row holds a code, never an object of its own */
    names ops, models, salts, hashes;
    uint64_t records, references;
    lct_stats stats;        /* of a whole file's reading */
    progress_cell progress;
    bool calls;             /* mrc's prefix rule: each record ends a call */
    bool lookups_only;      /* mrc: write calls give no references */
    lct_call_fold *fold;    /* prefix rule: the record's keys, by chunk */
    lct_refs *refs;         /* for mrc: the references instead of rows */
    lct_mrc_stream *stream; /* for an exact mrc: fed instead of refs */
    lct_sim *sim;           /* for sim: fed instead, a record a call */
    bool sim_in_bytes;      /* its capacity is in bytes */
    bool sim_sized;         /* its first lookup has been seen */
    uint64_t unsized_at;    /* that lookup's offset + 1 when it logged a
                               layout of 0 bytes a chunk */
    bool failed;
    char error[LCT_ERROR_MESSAGE_SIZE + 64];
} keywalk;

/* The op of a call (0 read, 1 write, else its qualname's id), or -1. */
static long op_of(keywalk *w, const lct_record *rec)
{
    lct_str q = rec->qualname;
    /* by default a storage trace's calls, or an L2-level trace's */
    if (w->reads ? patterns_name(w->reads, q)
                 : lct_qualname_match(q, LCT_KEYS_READ_CALL) ||
                       lct_str_eq(q, LCT_KEYS_L2_READ_CALL))
        return 0;
    if (w->writes ? patterns_name(w->writes, q)
                  : lct_qualname_match(q, LCT_KEYS_WRITE_CALL) ||
                        lct_str_eq(q, LCT_KEYS_L2_WRITE_CALL))
        return 1;
    if (!w->all)
        return -1;
    uint32_t id = intern(&w->ops, q.ptr, q.len);
    return id == UINT32_MAX ? -2 : (long)id;
}

/* One key of a read (or write) call to what the walk feeds: lct.sim,
 * the prefix rule's fold, an exact curve or the references; false: out
 * of memory, or a byte capacity LMCache's simulator would refuse. */
static bool feed_key(keywalk *w, const lct_record *rec, bool read,
                     const lct_object_key *key, uint64_t bytes, uint64_t id)
{
    if (w->calls && !w->fold && lct_call_fold_new(&w->fold) != LCT_OK)
        return false;
    uint64_t logged;
    bool sized = w->sim && lct_lookup_chunk_bytes(rec, &logged);
    if (sized)
        bytes = logged; /* sized by LMCache's dtype table */
    /* LMCache's simulator sizes chunks by the first lookup's layout and
     * refuses a byte capacity when that gives 0 */
    if (w->sim && !w->sim_sized && read) {
        w->sim_sized = true;
        if (w->sim_in_bytes && sized && !logged) {
            w->unsized_at = rec->offset + 1;
            return false;
        }
    }
    lct_status st =
        w->sim      ? lct_sim_add_key(w->sim, key, bytes, rec->t_mono, read)
        : w->calls  ? lct_call_fold_add(w->fold, key, bytes, rec->t_mono, read)
        : w->stream ? lct_mrc_stream_add(w->stream, id, bytes, read)
                    : lct_refs_add(w->refs, id, bytes, rec->t_mono, read);
    return st == LCT_OK;
}

static bool walk_record(keywalk *w, const lct_record *rec, uint64_t idx)
{
    progress_add(&w->progress, rec);
    if (!in_window(&w->sel, rec) ||
        (w->sel.patterns && !patterns_name(w->sel.patterns, rec->qualname)))
        return true;
    long op = op_of(w, rec);
    if (op == -1 || (op == 1 && w->lookups_only))
        return true;
    if (op < -1)
        return false;
    lct_key_iter it;
    lct_error err;
    lct_object_key key;
    uint64_t bytes;
    if (lct_key_iter_init(rec, &it, &err) != LCT_OK)
        return true; /* no keys to read: as lct keys, no rows */
    int rc;
    while ((rc = lct_key_iter_next(&it, &key, &bytes, &err)) == 1) {
        w->references++;
        uint64_t id = lct_object_key_hash(&key);
        if (w->sim || w->refs || w->stream) { /* reads and writes only */
            if (op <= 1 && !feed_key(w, rec, op == 0, &key, bytes, id))
                return false;
            continue;
        }
        uint32_t model = intern(&w->models, key.model_name.ptr,
                                key.model_name.len);
        uint32_t salt = intern(&w->salts,
                               key.cache_salt.ptr ? key.cache_salt.ptr : "",
                               key.cache_salt.len);
        uint32_t hash = intern(&w->hashes, (const char *)key.chunk_hash.ptr,
                               key.chunk_hash.len);
        if (model == UINT32_MAX || salt == UINT32_MAX || hash == UINT32_MAX)
            return false;
        int64_t num[KC_NUMBERS] = {(int64_t)idx, 0, key.kv_rank,
                                   key.object_group_id, (int64_t)id,
                                   (int64_t)bytes};
        memcpy(&num[KC_T_MONO], &rec->t_mono, 8);
        uint32_t code[KC_COUNT - KC_NUMBERS] = {(uint32_t)op, model, salt,
                                                hash};
        for (int c = 0; c < KC_NUMBERS; c++)
            if (!lctpy_col_push(&w->cols[c], &num[c], 8))
                return false;
        for (int c = KC_NUMBERS; c < KC_COUNT; c++)
            if (!lctpy_col_push(&w->cols[c], &code[c - KC_NUMBERS], 4))
                return false;
    }
    /* The record's keys are one call: for lct.sim, an entry a chunk (and
     * the tokens an imported log states); for the prefix curve, a chunk
     * position a chunk. */
    uint64_t seq_len, chunk_tokens;
    if (w->sim && op == 0 && lct_lookup_tokens(rec, &seq_len, &chunk_tokens))
        return lct_sim_end_call_tokens(w->sim, 1, chunk_tokens, seq_len) ==
               LCT_OK;
    if (w->sim && op <= 1)
        return lct_sim_end_call(w->sim, 1) == LCT_OK;
    if (!w->fold || !w->calls || op > 1)
        return true;
    return (w->stream ? lct_call_fold_to_stream(w->fold, w->stream)
                      : lct_call_fold_to_refs(w->fold, w->refs)) == LCT_OK;
}

/* The key references of one byte range (lct.dask), record numbers from
 * 0 in it; *range says where it began and ended (range.c). */
static bool walk_range(lct_reader *r, PyObject *log, keywalk *w,
                       uint64_t start, uint64_t stop, PyObject **range)
{
    lctpy_range p;
    if (!lctpy_range_open(&p, r, start, stop, log))
        return false;
    if (intern(&w->ops, "read", 4) == UINT32_MAX ||
        intern(&w->ops, "write", 5) == UINT32_MAX) {
        PyErr_NoMemory();
        return false;
    }
    bool ok = true;
    Py_BEGIN_ALLOW_THREADS
    lct_record rec;
    for (uint64_t idx = 0; ok && lctpy_range_next(&p, &rec) == 1; idx++)
        ok = walk_record(w, &rec, idx);
    w->records = p.records;
    Py_END_ALLOW_THREADS
    if (!ok)
        PyErr_NoMemory();
    return ok && (*range = lctpy_range_info(&p)) != NULL;
}

/* Every key reference of path's selected records, into w. */
static bool walk(const char *path, PyObject *log, keywalk *w,
                 uint64_t start, uint64_t stop, PyObject **range)
{
    lct_reader *r = open_pass(path, log, !start && !stop);
    if (!r)
        return false;
    if (start || stop) {
        bool ok = walk_range(r, log, w, start, stop, range);
        lct_close(r);
        return ok;
    }
    if (intern(&w->ops, "read", 4) == UINT32_MAX ||
        intern(&w->ops, "write", 5) == UINT32_MAX) {
        lct_close(r);
        PyErr_NoMemory();
        return false;
    }
    bool ok = true;
    Py_BEGIN_ALLOW_THREADS
    lct_record rec;
    for (uint64_t idx = 0; ok && lct_next(r, &rec) == 1; idx++)
        ok = walk_record(w, &rec, idx);
    lct_reader_stats(r, &w->stats);
    w->records = w->stats.records;
    Py_END_ALLOW_THREADS
    lct_close(r);
    if (!ok && w->unsized_at)
        PyErr_Format(PyExc_ValueError,
                     "%s: the first lookup (record at offset %llu) logged a "
                     "layout that weighs 0 bytes a chunk by LMCache's dtype "
                     "table (its simulator refuses it too): give the "
                     "capacity in chunks", path,
                     (unsigned long long)(w->unsized_at - 1));
    else if (!ok)
        PyErr_NoMemory();
    return ok;
}

static void keywalk_free(keywalk *w)
{
    for (int c = 0; c < KC_COUNT; c++)
        lctpy_col_free(&w->cols[c]);
    names_free(&w->hashes);
    names_free(&w->ops);
    names_free(&w->models);
    names_free(&w->salts);
    patterns_free(w->sel.patterns);
    patterns_free(w->reads);
    patterns_free(w->writes);
    lct_refs_free(w->refs);
    lct_call_fold_free(w->fold);
    lct_mrc_stream_free(w->stream);
}

/* The choices keys and mrc share, from their keyword arguments. */
static bool keywalk_args(keywalk *w, PyObject *quals, PyObject *since,
                         PyObject *until, PyObject *wsince, PyObject *wuntil,
                         PyObject *reads, PyObject *writes)
{
    w->sel.since = bound(since);
    w->sel.until = bound(until);
    w->sel.wall_since = bound(wsince);
    w->sel.wall_until = bound(wuntil);
    return !PyErr_Occurred() && patterns_from(quals, &w->sel.patterns) &&
           patterns_from(reads, &w->reads) && patterns_from(writes, &w->writes);
}

/* The chunk hashes' categories: each distinct hash as lowercase hex, as
 * `lct keys` prints it. */
static PyObject *hex_list(const names *t)
{
    static const char digits[] = "0123456789abcdef";
    PyObject *out = PyList_New(t->n);
    for (uint32_t i = 0; out && i < t->n; i++) {
        PyObject *s = PyUnicode_New((Py_ssize_t)(2 * t->len[i]), 127);
        if (!s) {
            Py_CLEAR(out);
            break;
        }
        Py_UCS1 *d = PyUnicode_1BYTE_DATA(s);
        for (size_t k = 0; k < t->len[i]; k++) {
            d[2 * k] = (Py_UCS1)digits[(unsigned char)t->text[i][k] >> 4];
            d[2 * k + 1] = (Py_UCS1)digits[(unsigned char)t->text[i][k] & 15];
        }
        PyList_SET_ITEM(out, i, s);
    }
    return out;
}

/* What lct.keys builds its frame from: its columns as blocks numpy
 * wraps (8-byte numbers, obj_id's bits as they are; names and hashes as
 * 4-byte codes with their categories), so no row costs an object and no
 * column is copied.  The blocks are taken from w. */
static PyObject *keys_result(keywalk *w)
{
    PyObject *cols = PyTuple_New(KC_COUNT);
    for (int c = 0; cols && c < KC_COUNT; c++) {
        PyObject *b = lctpy_col_give(&w->cols[c]);
        if (!b)
            Py_CLEAR(cols);
        else
            PyTuple_SET_ITEM(cols, c, b);
    }
    PyObject *ops = names_list(&w->ops), *models = names_list(&w->models),
             *salts = names_list(&w->salts), *hashes = hex_list(&w->hashes);
    PyObject *out = NULL;
    if (cols && ops && models && salts && hashes)
        out = Py_BuildValue(
            "{sOsOsOsOsOsKs{sKsKsOsO}}", "columns", cols,
            "ops", ops, "models", models, "salts", salts, "hashes", hashes,
            "records", (unsigned long long)w->records,
            "stats", "records", (unsigned long long)w->stats.records,
            "skipped", (unsigned long long)w->stats.skipped, "truncated",
            w->stats.truncated ? Py_True : Py_False, "shrank",
            w->stats.shrank ? Py_True : Py_False);
    Py_XDECREF(cols);
    Py_XDECREF(ops);
    Py_XDECREF(models);
    Py_XDECREF(salts);
    Py_XDECREF(hashes);
    return out;
}

PyObject *lctpy_keys(PyObject *self, PyObject *args, PyObject *kw)
{
    (void)self;
    static char *kwnames[] = {"path", "read", "write", "all", "qualname",
                              "since", "until", "wall_since", "wall_until",
                              "log", "start", "stop", "progress", NULL};
    PyObject *path_obj, *reads = Py_None, *writes = Py_None, *quals = Py_None,
             *since = Py_None, *until = Py_None, *wsince = Py_None,
             *wuntil = Py_None, *log = Py_None, *range = NULL,
             *progress = Py_None;
    int all = 0;
    unsigned long long start = 0, stop = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O&|OOpOOOOOOKKO", kwnames,
                                     PyUnicode_FSConverter, &path_obj, &reads,
                                     &writes, &all, &quals, &since, &until,
                                     &wsince, &wuntil, &log, &start, &stop,
                                     &progress))
        return NULL;
    keywalk w = {0};
    w.all = all;
    PyObject *out = NULL;
    Py_buffer cell = {0};
    if (!progress_cell_of(progress, &cell, &w.progress.done) ||
        !keywalk_args(&w, quals, since, until, wsince, wuntil, reads, writes) ||
        !walk(PyBytes_AS_STRING(path_obj), log, &w, start, stop, &range))
        goto done;
    out = keys_result(&w);
    if (out && range && PyDict_SetItemString(out, "range", range) != 0)
        Py_CLEAR(out);
done:
    if (cell.obj)
        PyBuffer_Release(&cell);
    Py_XDECREF(range);
    Py_DECREF(path_obj);
    keywalk_free(&w);
    return out;
}

/* MARK: mrc */


static PyObject *totals_dict(const lct_mrc_totals *t)
{
    return Py_BuildValue(
        "{sKsKsKsKsdsdsKsKsKsdsOsKsKsKsdsOsKsK}", "reads",
        (unsigned long long)t->reads, "writes", (unsigned long long)t->writes,
        "distinct_keys", (unsigned long long)t->distinct_keys,
        "compulsory_misses", (unsigned long long)t->compulsory_misses,
        "infinite_hit_ratio", t->infinite_hit_ratio, "sample_rate",
        t->sample_rate, "bytes_unknown", (unsigned long long)t->bytes_unknown,
        "min_key_bytes", (unsigned long long)t->min_key_bytes,
        "max_key_bytes", (unsigned long long)t->max_key_bytes,
        "mean_key_bytes", t->mean_key_bytes, "every_reference",
        t->every_reference ? Py_True : Py_False, "seed",
        (unsigned long long)t->seed, "references",
        (unsigned long long)t->references, "kept_references",
        (unsigned long long)t->kept_references, "adjustment", t->adjustment,
        "prefix", t->prefix ? Py_True : Py_False, "calls",
        (unsigned long long)t->calls, "positions",
        (unsigned long long)t->positions);
}

/* A list of n doubles, or None for NULL. */
static PyObject *float_list(const double *v, size_t n)
{
    if (!v)
        Py_RETURN_NONE;
    PyObject *out = PyList_New((Py_ssize_t)n);
    for (size_t i = 0; out && i < n; i++) {
        PyObject *f = PyFloat_FromDouble(v[i]);
        if (!f)
            Py_CLEAR(out);
        else
            PyList_SET_ITEM(out, (Py_ssize_t)i, f);
    }
    return out;
}

/* The curve `lct mrc` prints (lct_mrc_curve_make), as lists; the band of
 * a single sample is its own curve. */
static PyObject *curve(lct_mrc *const *ms, unsigned k, bool prefix)
{
    lct_mrc_curve c;
    if (lct_mrc_curve_make(ms, k, &c, NULL) != LCT_OK)
        return PyErr_NoMemory();
    double *tokens = prefix && c.n ? calloc(c.n, sizeof *tokens) : NULL;
    for (size_t i = 0; tokens && i < c.n; i++)
        tokens[i] = lct_mrc_position_hit_ratio(ms[0], c.keys[i]);
    PyObject *keys = PyList_New((Py_ssize_t)c.n);
    for (size_t i = 0; keys && i < c.n; i++) {
        PyObject *v = PyLong_FromUnsignedLongLong(c.keys[i]);
        if (!v)
            Py_CLEAR(keys);
        else
            PyList_SET_ITEM(keys, (Py_ssize_t)i, v);
    }
    PyObject *hit = float_list(c.hit, c.n);
    PyObject *lo = float_list(c.hit_min ? c.hit_min : c.hit, c.n);
    PyObject *hi = float_list(c.hit_max ? c.hit_max : c.hit, c.n);
    PyObject *byte_hit = float_list(c.byte_hit, c.n);
    PyObject *token_hit = float_list(tokens, c.n);
    PyObject *token_byte_hit = float_list(c.token_byte_hit, c.n);
    free(tokens);
    PyObject *out =
        keys && hit && lo && hi && byte_hit && token_hit && token_byte_hit
            ? Py_BuildValue("{sOsOsOsOsOsOsOsd}", "keys", keys, "hit_ratio",
                            hit, "hit_ratio_min", lo, "hit_ratio_max", hi,
                            "byte_hit_ratio", byte_hit, "token_hit_ratio",
                            token_hit, "byte_token_hit_ratio",
                            token_byte_hit, "mean_key_bytes", c.mean_bytes)
            : NULL;
    Py_XDECREF(token_hit);
    Py_XDECREF(token_byte_hit);
    Py_XDECREF(keys);
    Py_XDECREF(hit);
    Py_XDECREF(lo);
    Py_XDECREF(hi);
    Py_XDECREF(byte_hit);
    lct_mrc_curve_free(&c);
    return out;
}

/* The curve's dict, with "totals": a dict per sample. */
static PyObject *curve_with_totals(lct_mrc *const *ms, unsigned samples,
                                   bool prefix)
{
    PyObject *c = curve(ms, samples, prefix), *out = NULL;
    PyObject *totals = PyList_New(samples);
    for (unsigned s = 0; totals && s < samples; s++) {
        lct_mrc_totals t;
        lct_mrc_totals_get(ms[s], &t);
        PyObject *d = totals_dict(&t);
        if (!d)
            Py_CLEAR(totals);
        else
            PyList_SET_ITEM(totals, s, d);
    }
    if (c && totals && PyDict_SetItemString(c, "totals", totals) == 0) {
        out = c;
        c = NULL;
    }
    Py_XDECREF(c);
    Py_XDECREF(totals);
    return out;
}

bool lctpy_feed_sim(const char *path, PyObject *log, PyObject *quals,
                    PyObject *since, PyObject *until, PyObject *wsince,
                    PyObject *wuntil, PyObject *reads, PyObject *writes,
                    bool lookups_only, bool in_bytes, lct_sim *sim)
{
    keywalk w = {.calls = true, .lookups_only = lookups_only, .sim = sim,
                 .sim_in_bytes = in_bytes};
    bool ok = keywalk_args(&w, quals, since, until, wsince, wuntil, reads,
                           writes) &&
              walk(path, log, &w, 0, 0, NULL);
    keywalk_free(&w);
    return ok;
}

/* The policies named in seq (str items) into kinds (at most max, each
 * once); false with ValueError or TypeError set. */
static bool policy_kinds(PyObject *seq, lct_policy_kind *kinds, size_t max,
                         size_t *n)
{
    *n = 0;
    if (seq == Py_None)
        return true;
    PyObject *fast = PySequence_Fast(seq, "policies is a list of names");
    if (!fast)
        return false;
    bool ok = true;
    for (Py_ssize_t i = 0; ok && i < PySequence_Fast_GET_SIZE(fast); i++) {
        PyObject *item = PySequence_Fast_GET_ITEM(fast, i);
        const char *name = PyUnicode_Check(item) ? PyUnicode_AsUTF8(item)
                                                 : NULL;
        lct_policy_kind k;
        if (!name) {
            if (!PyErr_Occurred())
                PyErr_SetString(PyExc_TypeError,
                                "policies is a list of names");
            ok = false;
        } else if (lct_policy_find(name, &k) != LCT_OK) {
            PyErr_Format(PyExc_ValueError, "unknown policy '%s' (known: %s)",
                         name, lct_policy_names());
            ok = false;
        } else if (k == LCT_POLICY_LMCACHE_ISOLATED_LRU) {
            PyErr_SetString(PyExc_ValueError,
                            "lmcache-isolated-lru evicts by its salts' "
                            "quotas, not by a capacity: lct.sim(..., "
                            "policy=\"lmcache-isolated-lru\", quotas=...)");
            ok = false;
        } else {
            bool seen = false;
            for (size_t j = 0; j < *n; j++)
                seen |= kinds[j] == k;
            if (!seen && *n < max)
                kinds[(*n)++] = k;
        }
    }
    Py_DECREF(fast);
    return ok;
}

/* Each policy's hit ratio at each capacity of ms' curve, simulated on
 * refs ({name: [ratio, ...]}); LRU's is the exact curve's.  By the
 * prefix rule the chunk positions' ratios, name + "_token", come too. */
static PyObject *policy_columns(const lct_refs *refs, lct_mrc *const *ms,
                                const lct_policy_kind *kinds, size_t n,
                                bool every, bool prefix)
{
    lct_mrc_curve c;
    if (lct_mrc_curve_make(ms, 1, &c, NULL) != LCT_OK)
        return PyErr_NoMemory();
    size_t np = c.n ? c.n : 1;
    lct_policy_point *pts = calloc(n * np, sizeof *pts);
    double *ratio = calloc(np, sizeof *ratio);
    PyObject *out = pts && ratio ? PyDict_New() : PyErr_NoMemory();
    lct_status rc = LCT_OK;
    lct_error err = {0};
    if (out && c.n) {
        lct_policy_run_options o = {.kinds = kinds, .nkinds = n,
                                    .every_reference = every,
                                    .prefix = prefix};
        Py_BEGIN_ALLOW_THREADS
        rc = lct_policy_run(refs, &o, c.keys, c.n, pts, &err);
        Py_END_ALLOW_THREADS
    }
    if (out && rc != LCT_OK) {
        PyErr_SetString(rc == LCT_ERR_NOMEM ? PyExc_MemoryError
                                            : PyExc_ValueError,
                        err.message);
        Py_CLEAR(out);
    }
    for (size_t k = 0; out && k < n; k++) {
        for (size_t i = 0; i < c.n; i++) {
            const lct_policy_point *pt = &pts[k * c.n + i];
            ratio[i] = kinds[k] == LCT_POLICY_LRU ? c.hit[i]
                       : pt->requests
                           ? (double)pt->hits / (double)pt->requests
                           : 0;
        }
        PyObject *list = float_list(ratio, c.n);
        if (!list ||
            PyDict_SetItemString(out, lct_policy_name(kinds[k]), list) != 0)
            Py_CLEAR(out);
        Py_XDECREF(list);
        if (!out || !prefix)
            continue;
        for (size_t i = 0; i < c.n; i++) {
            const lct_policy_point *pt = &pts[k * c.n + i];
            ratio[i] = kinds[k] == LCT_POLICY_LRU
                           ? lct_mrc_position_hit_ratio(ms[0], c.keys[i])
                       : pt->positions ? (double)pt->positions_hit /
                                             (double)pt->positions
                                       : 0;
        }
        char name[64];
        snprintf(name, sizeof name, "%s_token", lct_policy_name(kinds[k]));
        list = float_list(ratio, c.n);
        if (!list || PyDict_SetItemString(out, name, list) != 0)
            Py_CLEAR(out);
        Py_XDECREF(list);
    }
    free(pts);
    free(ratio);
    lct_mrc_curve_free(&c);
    return out;
}

/* The sampling options mrc() accepts together, as lct mrc does; fills
 * in the default count of samples (9 when sampling, else 1). */
static bool mrc_sampling_ok(double sample, int prefix, size_t nkinds,
                            unsigned *samples)
{
    const char *why = NULL;
    if (nkinds && sample < 1)
        why = "policies are simulated on every key: no sample";
    else if (prefix && sample < 1)
        why = "prefix=True needs every key of a call: no sample";
    else if (!(sample > 0 && sample <= 1))
        why = "sample must be in (0, 1]";
    else if (*samples > LCT_MRC_CURVE_MAX_SAMPLES)
        why = "samples is 1 to 64";
    if (why) {
        PyErr_SetString(PyExc_ValueError, why);
        return false;
    }
    if (*samples == 0)
        *samples = sample < 1 ? 9 : 1;
    return true;
}

PyObject *lctpy_mrc(PyObject *self, PyObject *args, PyObject *kw)
{
    (void)self;
    static char *kwnames[] = {"path", "read", "write", "qualname", "since",
                              "until", "wall_since", "wall_until",
                              "every_reference", "sample", "seed", "samples",
                              "log", "prefix", "lookups_only", "policies",
                              NULL};
    PyObject *path_obj, *reads = Py_None, *writes = Py_None, *quals = Py_None,
             *since = Py_None, *until = Py_None, *wsince = Py_None,
             *wuntil = Py_None, *log = Py_None, *policies = Py_None;
    int every = 0, prefix = 0, lookups_only = 0;
    double sample = 1;
    unsigned long long seed = 1;
    unsigned samples = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O&|OOOOOOOpdKIOppO", kwnames,
                                     PyUnicode_FSConverter, &path_obj, &reads,
                                     &writes, &quals, &since, &until, &wsince,
                                     &wuntil, &every, &sample, &seed,
                                     &samples, &log, &prefix, &lookups_only,
                                     &policies))
        return NULL;
    lct_policy_kind kinds[16];
    size_t nkinds;
    if (!policy_kinds(policies, kinds, 16, &nkinds) ||
        !mrc_sampling_ok(sample, prefix, nkinds, &samples)) {
        Py_DECREF(path_obj);
        return NULL;
    }
    keywalk w = {.calls = prefix, .lookups_only = lookups_only};
    for (size_t k = 0; k < nkinds; k++) /* LMCache's L1 policies */
        w.calls |= lct_policy_by_call(kinds[k]);
    PyObject *out = NULL;
    lct_mrc *ms[LCT_MRC_CURVE_MAX_SAMPLES] = {NULL};
    /* exact: computed as the trace is read, in memory by keys */
    lct_mrc_options exact = {.every_reference = every, .prefix = prefix};
    /* the policies run over the references gathered */
    if (sample < 1 || nkinds ? lct_refs_new(&w.refs) != LCT_OK
                   : lct_mrc_stream_new(&exact, &w.stream, NULL) != LCT_OK) {
        PyErr_NoMemory();
        goto done;
    }
    if (!keywalk_args(&w, quals, since, until, wsince, wuntil, reads, writes) ||
        !walk(PyBytes_AS_STRING(path_obj), log, &w, 0, 0, NULL))
        goto done;
    lct_status rc = LCT_OK;
    lct_error err = {0};
    Py_BEGIN_ALLOW_THREADS
    if (w.stream)
        rc = lct_mrc_stream_finish(w.stream, &ms[0], &err);
    for (unsigned s = 0; !w.stream && s < samples && rc == LCT_OK; s++) {
        lct_mrc_options o = {.sample_rate = sample,
                             .every_reference = every,
                             .seed = sample < 1 ? seed + s : seed,
                             .prefix = prefix};
        rc = lct_mrc_compute_with(w.refs, &o, &ms[s], &err);
    }
    Py_END_ALLOW_THREADS
    if (rc != LCT_OK) {
        PyErr_SetString(PyExc_MemoryError, err.message);
        goto done;
    }
    out = curve_with_totals(ms, samples, prefix);
    if (out && nkinds) {
        PyObject *cols =
            policy_columns(w.refs, ms, kinds, nkinds, every, prefix);
        if (!cols || PyDict_SetItemString(out, "policies", cols) != 0)
            Py_CLEAR(out);
        Py_XDECREF(cols);
    }
done:
    for (unsigned s = 0; s < LCT_MRC_CURVE_MAX_SAMPLES; s++)
        lct_mrc_free(ms[s]);
    Py_DECREF(path_obj);
    keywalk_free(&w);
    return out;
}
