/*
 * sqlite_spans.c - the lct_spans table: LMCache's paired calls as rows
 * (lct_spans pairs them: a prefetch and its wait, read and release
 * stages, a write), one per span in the order the closing calls come,
 * read in one streamed pass per file per query; the same spans `lct stat
 * --spans` summarises.
 */
#include "sqlite/sqlite_internal.h"
#include "lct_sqlite.h"
SQLITE_EXTENSION_INIT3

#include <string.h>

enum {
    S_SPAN, S_T_START, S_T_END, S_DURATION, S_START_OFFSET, S_END_OFFSET,
    S_KEYS, S_FILE, S_PATH
};

/* A record closes two spans at most (a release and its prefetch). */
#define PENDING 4

typedef struct spans_cursor {
    sqlite3_vtab_cursor base;
    lct__sqlstream in;
    lct_spans *spans;      /* the open file's pairing */
    lct_span pending[PENDING];
    int npending, at;      /* the row is pending[at] */
    uint64_t rowid;
    bool failed, eof;
} spans_cursor;

static void on_span(void *ctx, const lct_span *sp)
{
    spans_cursor *c = ctx;
    if (c->npending < PENDING)
        c->pending[c->npending++] = *sp;
    else
        c->failed = true; /* cannot happen: a record closes two */
}

static int spans_best_index(sqlite3_vtab *vtab, sqlite3_index_info *info)
{
    lct__sqltab *tab = (lct__sqltab *)vtab;
    int rc = lct__sqltab_path_index(tab, info, S_PATH);
    info->estimatedCost = tab->fixed || info->idxNum ? 1e6 : 1e300;
    return rc;
}

static int spans_open(sqlite3_vtab *vtab, sqlite3_vtab_cursor **out)
{
    (void)vtab;
    return lct__sqlcursor_new(sizeof(spans_cursor), out);
}

static void reset(spans_cursor *c)
{
    lct__sqlstream_close(&c->in);
    lct_spans_free(c->spans);
    c->spans = NULL;
    c->npending = c->at = 0;
}

static int spans_close(sqlite3_vtab_cursor *cur)
{
    reset((spans_cursor *)cur);
    sqlite3_free(cur);
    return SQLITE_OK;
}

/* The query's next file, with a fresh pairing: SQLITE_OK, SQLITE_DONE,
 * SQLITE_ERROR. */
static int open_file(spans_cursor *c)
{
    lct__sqltab *tab = (lct__sqltab *)c->base.pVtab;
    lct_spans_free(c->spans);
    c->spans = NULL;
    int rc = lct__sqlstream_next_file(&c->in, tab);
    lct_error err;
    if (rc == SQLITE_OK && lct_spans_new(&c->spans, &err) != LCT_OK) {
        lct__sqltab_error(tab, "%s", err.message);
        return SQLITE_ERROR;
    }
    return rc;
}

/* Feed records until one closes a span; false at the file's end. */
static int next_spans(spans_cursor *c, bool *more)
{
    lct_record rec;
    c->npending = c->at = 0;
    while (c->npending == 0 &&
           lct__sqlstream_record(&c->in, (lct__sqltab *)c->base.pVtab,
                                 &rec)) {
        lct_error err;
        if (lct_spans_add(c->spans, &rec, on_span, c, &err) != LCT_OK ||
            c->failed) {
            lct__sqltab_error((lct__sqltab *)c->base.pVtab, "lct_spans: %s",
                              c->failed ? "too many spans" : err.message);
            return SQLITE_ERROR;
        }
    }
    *more = c->npending > 0;
    return SQLITE_OK;
}

static int advance(spans_cursor *c)
{
    c->rowid++;
    if (++c->at < c->npending)
        return SQLITE_OK;
    for (;;) {
        bool more = false;
        if (c->in.reader) {
            int rc = next_spans(c, &more);
            if (rc != SQLITE_OK)
                return rc;
        }
        if (more)
            return SQLITE_OK;
        int rc = open_file(c);
        if (rc == SQLITE_DONE) {
            c->eof = true;
            return SQLITE_OK;
        }
        if (rc != SQLITE_OK)
            return rc;
    }
}

static int spans_filter(sqlite3_vtab_cursor *cur, int idx_num,
                        const char *idx_str, int argc, sqlite3_value **argv)
{
    (void)idx_str;
    spans_cursor *c = (spans_cursor *)cur;
    reset(c);
    c->eof = c->failed = false;
    c->rowid = 0;
    int rc = lct__sqlstream_start(&c->in, (lct__sqltab *)cur->pVtab, idx_num,
                                  argc, argv, "lct_spans");
    if (rc != SQLITE_OK)
        return rc;
    c->at = -1;
    return advance(c);
}

static int spans_next(sqlite3_vtab_cursor *cur)
{
    return advance((spans_cursor *)cur);
}

static int spans_eof(sqlite3_vtab_cursor *cur)
{
    return ((spans_cursor *)cur)->eof;
}

static int spans_column(sqlite3_vtab_cursor *cur, sqlite3_context *ctx,
                        int col)
{
    spans_cursor *c = (spans_cursor *)cur;
    const lct_span *sp = &c->pending[c->at];
    switch (col) {
    case S_SPAN:
        sqlite3_result_text(ctx, lct_span_kind_name(sp->kind), -1,
                            SQLITE_STATIC);
        break;
    case S_T_START: sqlite3_result_double(ctx, sp->t_start); break;
    case S_T_END: sqlite3_result_double(ctx, sp->t_end); break;
    case S_DURATION:
        sqlite3_result_double(ctx, sp->t_end - sp->t_start);
        break;
    case S_START_OFFSET:
        sqlite3_result_int64(ctx, (sqlite3_int64)sp->start_offset);
        break;
    case S_END_OFFSET:
        sqlite3_result_int64(ctx, (sqlite3_int64)sp->end_offset);
        break;
    case S_KEYS: sqlite3_result_int64(ctx, sp->keys); break;
    case S_FILE:
    case S_PATH:
        sqlite3_result_text(ctx,
                            lct__sqlstream_file(&c->in,
                                                (lct__sqltab *)cur->pVtab)
                                ->path,
                            -1, SQLITE_TRANSIENT);
        break;
    default: sqlite3_result_null(ctx);
    }
    return SQLITE_OK;
}

static int spans_rowid(sqlite3_vtab_cursor *cur, sqlite3_int64 *rowid)
{
    *rowid = (sqlite3_int64)((spans_cursor *)cur)->rowid;
    return SQLITE_OK;
}

static int spans_connect(sqlite3 *db, void *aux, int argc,
                         const char *const *argv, sqlite3_vtab **out,
                         char **err)
{
    return lct__sqltab_connect(db, aux, argc, argv, out, err,
                               "CREATE TABLE x(span TEXT, t_start REAL, "
                               "t_end REAL, duration REAL, "
                               "start_offset INTEGER, end_offset INTEGER, "
                               "keys INTEGER, file TEXT, path HIDDEN)");
}

const sqlite3_module lct__spans_module = {
    .iVersion = 0,
    .xCreate = spans_connect, /* as connect: also eponymous */
    .xConnect = spans_connect,
    .xBestIndex = spans_best_index,
    .xDisconnect = lct__records_disconnect,
    .xDestroy = lct__records_disconnect,
    .xOpen = spans_open,
    .xClose = spans_close,
    .xFilter = spans_filter,
    .xNext = spans_next,
    .xEof = spans_eof,
    .xColumn = spans_column,
    .xRowid = spans_rowid,
};
