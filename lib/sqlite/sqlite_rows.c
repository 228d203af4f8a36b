/*
 * sqlite_rows.c - a file's row cache for the SQLite modules: one parallel
 * validating pass (lct_scan_file) that keeps, for every record the
 * reference reader yields, its offset, times and qualname (interned: a
 * trace has few).  With it, idx bounds jump straight to a record, and
 * queries that do not read args are answered without reading the file
 * again.  32 bytes a record, plus each distinct qualname once; grouped
 * by qualname on demand (8 bytes a record more), so that GROUP BY and
 * ORDER BY qualname need no sort in SQLite.  The rows are fresh memory
 * written once: they grow on 2 MiB pages where those fault in cheaper
 * (bigmem.c), and one thread's rows are the file's without a copy.
 */
#include "base/bigmem_internal.h"
#include "sqlite/sqlite_internal.h"
#include "lct_sqlite.h"

#include <stdlib.h>
#include <string.h>
#include <sys/tree.h>

/* MARK: - interning qualnames */

typedef struct name_node {
    RB_ENTRY(name_node) link;
    lct_str name; /* an owned copy */
    uint32_t id;
} name_node;

static int name_cmp(const name_node *a, const name_node *b)
{
    return lct_str_cmp(a->name, b->name);
}

/* Not static: the tree macros' static form defines functions this file
 * does not use, which the warnings refuse.  The prefix keeps the names
 * the library's own. */
RB_HEAD(lct__sqlnames, name_node);
RB_PROTOTYPE(lct__sqlnames, name_node, link, name_cmp)
RB_GENERATE(lct__sqlnames, name_node, link, name_cmp)

typedef struct names {
    struct lct__sqlnames tree;
    name_node **by_id;
    uint32_t n, cap;
} names;

/* The id of s, added when new; UINT32_MAX when memory ran out. */
static uint32_t intern(names *t, lct_str s)
{
    name_node key = {.name = s};
    name_node *found = RB_FIND(lct__sqlnames, &t->tree, &key);
    if (found)
        return found->id;
    if (t->n == t->cap) {
        uint32_t cap = t->cap ? t->cap * 2 : 16;
        name_node **grown = reallocarray(t->by_id, cap, sizeof *grown);
        if (!grown || cap < t->cap)
            return UINT32_MAX;
        t->by_id = grown;
        t->cap = cap;
    }
    name_node *node = calloc(1, sizeof *node);
    char *copy = malloc(s.len ? s.len : 1);
    if (!node || !copy) {
        free(node);
        free(copy);
        return UINT32_MAX;
    }
    memcpy(copy, s.ptr, s.len);
    node->name = (lct_str){copy, s.len};
    node->id = t->n;
    t->by_id[t->n++] = node;
    RB_INSERT(lct__sqlnames, &t->tree, node);
    return node->id;
}

static void names_free(names *t)
{
    for (uint32_t i = 0; i < t->n; i++) {
        free((char *)t->by_id[i]->name.ptr);
        free(t->by_id[i]);
    }
    free(t->by_id);
    memset(t, 0, sizeof *t);
}

/* MARK: - one thread's rows */

typedef struct lane {
    lct__sqlrow *rows;
    size_t n, cap;
    names names;
    bool failed;
    /* The first thread's only: where progress goes, and its share of the
     * file (its range is the first 1/threads of the bytes). */
    const lct__sqlfile *file;
    const lct_reader *pass;
    unsigned threads;
} lane;

static int lane_record(void *state, const lct_record *rec)
{
    lane *l = state;
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 4096;
        lct__sqlrow *grown = lct__big_grow(l->rows, l->n, cap, sizeof *grown);
        if (!grown) {
            l->failed = true;
            return 1;
        }
        l->rows = grown;
        l->cap = cap;
    }
    uint32_t id = intern(&l->names, rec->qualname);
    if (id == UINT32_MAX) {
        l->failed = true;
        return 1;
    }
    l->rows[l->n++] = (lct__sqlrow){rec->offset, rec->t_mono, rec->t_wall,
                                    id};
    if (l->file && l->n % LCT__SQL_PROGRESS_EVERY == 0)
        lct__sqlfile_progress(l->file, l->pass, rec->offset * l->threads);
    return 0;
}

static void lane_reset(void *state)
{
    lane *l = state;
    free(l->rows);
    names_free(&l->names);
    const lct__sqlfile *file = l->file;
    const lct_reader *pass = l->pass;
    memset(l, 0, sizeof *l);
    /* read again by one thread: the first, which reports the whole file */
    l->file = file;
    l->pass = pass;
    l->threads = 1;
}

/* Thread t's rows after the rows before it, with its name ids made the
 * file's. */
static bool join(lct__sqlfile *f, names *all, lane *l, size_t at)
{
    uint32_t *id = reallocarray(NULL, l->names.n ? l->names.n : 1,
                                sizeof *id);
    bool ok = id != NULL;
    for (uint32_t j = 0; ok && j < l->names.n; j++)
        ok = (id[j] = intern(all, l->names.by_id[j]->name)) != UINT32_MAX;
    for (size_t i = 0; ok && i < l->n; i++) {
        f->rows[at + i] = l->rows[i];
        f->rows[at + i].qualname = id[l->rows[i].qualname];
    }
    free(id);
    return ok;
}

/* Keep the file's names: the strings move to f, the tree goes. */
static bool keep_names(lct__sqlfile *f, names *all)
{
    f->qualnames = reallocarray(NULL, all->n ? all->n : 1, sizeof(lct_str));
    if (!f->qualnames)
        return false;
    for (uint32_t i = 0; i < all->n; i++) {
        f->qualnames[i] = all->by_id[i]->name;
        all->by_id[i]->name.ptr = NULL; /* names_free frees NULL */
    }
    f->nqualnames = all->n;
    return true;
}

static bool join_all(lct__sqlfile *f, lane *lanes, unsigned n, uint64_t total)
{
    names all = {0};
    RB_INIT(&all.tree);
    bool ok;
    if (n == 1) { /* its rows as they are: its ids are the file's */
        f->rows = lanes[0].rows;
        lanes[0].rows = NULL;
        ok = keep_names(f, &lanes[0].names);
    } else {
        ok = (f->rows = lct__big_grow(NULL, 0, total,
                                      sizeof *f->rows)) != NULL;
        size_t at = 0;
        for (unsigned t = 0; ok && t < n; t++) {
            ok = join(f, &all, &lanes[t], at);
            at += lanes[t].n;
        }
        ok = ok && keep_names(f, &all);
    }
    names_free(&all);
    if (!ok) {
        free(f->rows);
        f->rows = NULL;
        return false;
    }
    f->nrows = total;
    return true;
}

/* The rows from the trace's sidecar index (lct index), when it holds the
 * file as it is: no pass over the file.  Its warnings are given as the
 * pass would give them (seeking to the end says the skips, one read
 * there the cut tail). */
static bool rows_from_sidecar(lct__sqlfile *f)
{
    lct_sidecar *s;
    if (lct_sidecar_load(f->map, &s, NULL) != LCT_OK)
        return false;
    uint64_t n = lct_sidecar_count(s);
    uint32_t nnames = 0;
    bool ok = lct_sidecar_whole(s) &&
              (f->rows = reallocarray(NULL, n ? n : 1, sizeof *f->rows));
    for (uint64_t i = 0; ok && i < n; i++) {
        lct_sidecar_row row;
        lct_sidecar_get(s, i, &row);
        f->rows[i] = (lct__sqlrow){row.offset, row.t_mono, row.t_wall,
                                   row.qualname};
        if (row.qualname >= nnames)
            nnames = row.qualname + 1;
    }
    ok = ok && (f->qualnames = calloc(nnames ? nnames : 1,
                                      sizeof(lct_str))) != NULL;
    for (uint32_t i = 0; ok && i < nnames; i++) {
        lct_str q = lct_sidecar_qualname(s, i);
        char *copy = malloc(q.len ? q.len : 1);
        if (!(ok = copy != NULL))
            break;
        memcpy(copy, q.ptr, q.len);
        f->qualnames[i] = (lct_str){copy, q.len};
        f->nqualnames = i + 1;
    }
    lct_record rec;
    if (ok && lct_reader_seek(f->map, s, n, NULL) == LCT_OK)
        (void)lct_next(f->map, &rec);
    lct_reader_rewind(f->map);
    lct_sidecar_free(s);
    if (!ok) {
        for (uint32_t i = 0; f->qualnames && i < f->nqualnames; i++)
            free((char *)f->qualnames[i].ptr);
        free(f->qualnames);
        free(f->rows);
        f->qualnames = NULL;
        f->rows = NULL;
        f->nqualnames = 0;
        return false;
    }
    f->nrows = n;
    return f->indexed = true;
}

bool lct__sqlfile_index(lct__sqltab *tab, lct__sqlfile *f)
{
    if (f->indexed || rows_from_sidecar(f))
        return true;
    lct_scan scan = {.threads = f->options->threads,
                     .on_record = lane_record, .on_reset = lane_reset};
    unsigned n = lct_scan_threads(&scan, NULL);
    lane *lanes = calloc(n, sizeof *lanes);
    void **states = calloc(n, sizeof *states);
    bool ok = lanes && states;
    for (unsigned t = 0; ok && t < n; t++) {
        RB_INIT(&lanes[t].names.tree);
        states[t] = &lanes[t];
    }
    scan.states = states;
    lct_error err = {0};
    lct_stats st;
    /* Its own reader for the pass: the shared one keeps its position. */
    lct_reader *pass = NULL;
    ok = ok && lct_open(f->path, lct__sqlfile_pass_flags(f), &pass, &err) ==
                   LCT_OK;
    if (ok) {
        lct_reader_set_log(pass, lct__sqlfile_log, f);
        lanes[0].file = f;
        lanes[0].pass = pass;
        lanes[0].threads = n;
    }
    ok = ok && lct_scan_file(pass, &scan, &st, &err) == LCT_OK;
    lct_close(pass);
    uint64_t total = 0;
    for (unsigned t = 0; ok && t < n; t++) {
        ok = !lanes[t].failed;
        total += lanes[t].n;
    }
    f->indexed = ok && total == st.records && join_all(f, lanes, n, total);
    /* Records appended since the mapping was made are not in it. */
    uint64_t mapped = lct_reader_data(f->map).len;
    while (f->indexed && f->nrows > 0 &&
           f->rows[f->nrows - 1].offset >= mapped)
        f->nrows--;
    if (!f->indexed)
        lct__sqltab_error(tab, "%s", err.code ? err.message
                                              : "out of memory indexing");
    for (unsigned t = 0; lanes && t < n; t++)
        lane_reset(&lanes[t]);
    free(lanes);
    free(states);
    return f->indexed;
}

/* MARK: - rows grouped by qualname */

typedef struct named {
    lct_str name;
    uint32_t id;
} named;

static int named_cmp(const void *a, const void *b)
{
    return lct_str_cmp(((const named *)a)->name, ((const named *)b)->name);
}

/* A counting sort: the names (few) are sorted, the rows only counted
 * and placed, so grouping is linear in the records. */
bool lct__sqlfile_order(lct__sqltab *tab, lct__sqlfile *f)
{
    if (f->by_qualname)
        return true;
    if (!lct__sqlfile_index(tab, f))
        return false;
    uint32_t n = f->nqualnames;
    named *sorted = reallocarray(NULL, n ? n : 1, sizeof *sorted);
    uint32_t *rank = reallocarray(NULL, n ? n : 1, sizeof *rank);
    uint64_t *start = calloc((size_t)n + 1, sizeof *start);
    uint64_t *fill = reallocarray(NULL, n ? n : 1, sizeof *fill);
    uint64_t *order = lct__big_grow(NULL, 0, f->nrows, sizeof *order);
    bool ok = sorted && rank && start && fill && order;
    if (ok) {
        for (uint32_t i = 0; i < n; i++)
            sorted[i] = (named){f->qualnames[i], i};
        qsort(sorted, n, sizeof *sorted, named_cmp);
        for (uint32_t r = 0; r < n; r++)
            rank[sorted[r].id] = r;
        for (uint64_t row = 0; row < f->nrows; row++)
            start[rank[f->rows[row].qualname] + 1]++;
        for (uint32_t r = 0; r < n; r++)
            start[r + 1] += start[r];
        memcpy(fill, start, (n ? n : 1) * sizeof *fill);
        for (uint64_t row = 0; row < f->nrows; row++)
            order[fill[rank[f->rows[row].qualname]]++] = row;
        f->by_qualname = order;
        f->group_start = start;
    } else {
        free(order);
        free(start);
        lct__sqltab_error(tab, "out of memory grouping rows by qualname");
    }
    free(sorted);
    free(rank);
    free(fill);
    return ok;
}

void lct__sqlfile_progress(const lct__sqlfile *f, const lct_reader *r,
                           uint64_t done)
{
    if (!f->options->progress || !r)
        return;
    lct_stats st;
    lct_reader_stats(r, &st);
    f->options->progress(f->options->progress_ctx, f->path,
                         done < st.file_size ? done : st.file_size,
                         st.file_size);
}
