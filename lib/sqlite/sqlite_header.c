/*
 * sqlite_header.c - the lct_header table: one row per file with every
 * header field (level_meta as JSON).
 */
#include "sqlite/sqlite_internal.h"
#include "lct_sqlite.h"
SQLITE_EXTENSION_INIT3

#include <string.h>

/* MARK: - lct_header */

enum {
    H_FILE, H_MAGIC, H_FORMAT_VERSION, H_LEVEL, H_SCHEMA, H_T_MONO_START,
    H_T_WALL_START, H_SM_CONFIG_JSON, H_SM_CONFIG_DIGEST, H_LEVEL_META,
    H_HEADER_BYTES, H_PATH
};

typedef struct header_cursor {
    sqlite3_vtab_cursor base;
    lct__sqlfile *one; /* the table-valued function's file */
    int row, rows;
    lct__sqltext level_meta; /* JSON of the current row's level_meta */
} header_cursor;

static int header_connect(sqlite3 *db, void *aux, int argc,
                          const char *const *argv, sqlite3_vtab **out,
                          char **err)
{
    return lct__sqltab_connect(db, aux, argc, argv, out, err,
                       "CREATE TABLE x(file TEXT, magic TEXT, "
                       "format_version INTEGER, level TEXT, "
                       "trace_schema_version INTEGER, t_mono_start REAL, "
                       "t_wall_start REAL, sm_config_json TEXT, "
                       "sm_config_digest TEXT, level_meta TEXT, "
                       "header_bytes INTEGER, path HIDDEN)");
}

static int header_best_index(sqlite3_vtab *vtab, sqlite3_index_info *info)
{
    info->estimatedCost = 10;
    return lct__sqltab_path_index((lct__sqltab *)vtab, info, H_PATH);
}

static int header_open(sqlite3_vtab *vtab, sqlite3_vtab_cursor **out)
{
    (void)vtab;
    return lct__sqlcursor_new(sizeof(header_cursor), out);
}

static int header_close(sqlite3_vtab_cursor *cur)
{
    header_cursor *c = (header_cursor *)cur;
    lct__sqltext_free(&c->level_meta);
    sqlite3_free(c);
    return SQLITE_OK;
}

static int header_filter(sqlite3_vtab_cursor *cur, int idx_num,
                         const char *idx_str, int argc, sqlite3_value **argv)
{
    (void)idx_str;
    header_cursor *c = (header_cursor *)cur;
    lct__sqltab *tab = (lct__sqltab *)cur->pVtab;
    c->row = 0;
    c->one = NULL;
    if (tab->fixed) {
        c->rows = tab->nfiles;
        for (int i = 0; i < tab->nfiles; i++)
            if (!lct__sqlfile_map(tab, tab->files[i]))
                return SQLITE_ERROR;
        return SQLITE_OK;
    }
    const char *path = idx_num == 1 && argc == 1
                           ? (const char *)sqlite3_value_text(argv[0])
                           : NULL;
    if (!path) {
        lct__sqltab_error(tab, "lct_header: name a file: "
                          "SELECT * FROM lct_header('run.lct')");
        return SQLITE_ERROR;
    }
    c->one = lct__sqltab_file(tab, path);
    c->rows = 1;
    return c->one ? SQLITE_OK : SQLITE_ERROR;
}

static int header_next(sqlite3_vtab_cursor *cur)
{
    ((header_cursor *)cur)->row++;
    return SQLITE_OK;
}

static int header_eof(sqlite3_vtab_cursor *cur)
{
    header_cursor *c = (header_cursor *)cur;
    return c->row >= c->rows;
}

static int header_level_meta(sqlite3_context *ctx, header_cursor *c,
                             const lct_header *h)
{
    if (!h->level_meta.ptr) {
        sqlite3_result_null(ctx);
        return SQLITE_OK;
    }
    if (lct__sqltext_json(&c->level_meta, h->level_meta) != LCT_OK) {
        sqlite3_result_error_nomem(ctx);
        return SQLITE_NOMEM;
    }
    sqlite3_result_text64(ctx, c->level_meta.ptr ? c->level_meta.ptr : "",
                          c->level_meta.len, SQLITE_TRANSIENT, SQLITE_UTF8);
    return SQLITE_OK;
}

static int header_column(sqlite3_vtab_cursor *cur, sqlite3_context *ctx,
                         int col)
{
    header_cursor *c = (header_cursor *)cur;
    lct__sqltab *tab = (lct__sqltab *)cur->pVtab;
    lct__sqlfile *f = lct__sqltab_query_file(tab, c->one, c->row);
    const lct_header *h = lct_reader_header(f->map);
    switch (col) {
    case H_FILE:
    case H_PATH:
        sqlite3_result_text(ctx, f->path, -1, SQLITE_TRANSIENT);
        break;
    case H_MAGIC:
        sqlite3_result_text64(ctx, (const char *)h->magic.ptr, h->magic.len,
                              SQLITE_TRANSIENT, SQLITE_UTF8);
        break;
    case H_FORMAT_VERSION: sqlite3_result_int64(ctx, h->format_version); break;
    case H_LEVEL: lct__sqlresult_str(ctx, h->level); break;
    case H_SCHEMA: sqlite3_result_int64(ctx, h->trace_schema_version); break;
    case H_T_MONO_START: sqlite3_result_double(ctx, h->t_mono_start); break;
    case H_T_WALL_START: sqlite3_result_double(ctx, h->t_wall_start); break;
    case H_SM_CONFIG_JSON: lct__sqlresult_str(ctx, h->sm_config_json); break;
    case H_SM_CONFIG_DIGEST: lct__sqlresult_str(ctx, h->sm_config_digest); break;
    case H_LEVEL_META: return header_level_meta(ctx, c, h);
    case H_HEADER_BYTES: sqlite3_result_int64(ctx, (sqlite3_int64)h->size); break;
    default: sqlite3_result_null(ctx);
    }
    return SQLITE_OK;
}

static int header_rowid(sqlite3_vtab_cursor *cur, sqlite3_int64 *rowid)
{
    *rowid = ((header_cursor *)cur)->row;
    return SQLITE_OK;
}

const sqlite3_module lct__header_module = {
    .iVersion = 0,
    .xCreate = header_connect, /* the same as connect: also eponymous */
    .xConnect = header_connect,
    .xBestIndex = header_best_index,
    .xDisconnect = lct__sqltab_disconnect,
    .xDestroy = lct__sqltab_disconnect,
    .xOpen = header_open,
    .xClose = header_close,
    .xFilter = header_filter,
    .xNext = header_next,
    .xEof = header_eof,
    .xColumn = header_column,
    .xRowid = header_rowid,
};
