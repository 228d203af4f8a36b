/*
 * sqlite_keys.c - the lct_keys table: the key reference stream of `lct
 * keys` as rows (one per key that a read call, submit_prefetch_task, or a
 * write call, reserve_write, carried), read in one streamed pass per
 * query.  A record whose keys cannot be read gives no rows; the reader's
 * warnings go to the table's log once, as for lct_records.
 */
#include "sqlite/sqlite_internal.h"
SQLITE_EXTENSION_INIT3

#include <stdio.h>
#include <string.h>

enum {
    K_IDX, K_T_MONO, K_OP, K_CHUNK_HASH, K_MODEL_NAME, K_KV_RANK,
    K_OBJECT_GROUP_ID, K_CACHE_SALT, K_OBJ_ID, K_BYTES, K_FILE, K_PATH
};

typedef struct keys_cursor {
    sqlite3_vtab_cursor base;
    lct__sqlfile *one;     /* the table-valued function's file */
    int file;
    lct_reader *stream;
    lct_record rec;
    uint64_t idx;          /* record number of rec */
    bool have_rec;
    const char *op;        /* "read" or "write" */
    lct_key_iter keys;
    lct_object_key key;
    uint64_t bytes;
    bool eof;
} keys_cursor;

static int keys_best_index(sqlite3_vtab *vtab, sqlite3_index_info *info)
{
    lct__sqltab *tab = (lct__sqltab *)vtab;
    int rc = lct__sqltab_path_index(tab, info, K_PATH);
    info->estimatedCost = tab->fixed || info->idxNum ? 1e6 : 1e300;
    return rc;
}

static int keys_open(sqlite3_vtab *vtab, sqlite3_vtab_cursor **out)
{
    (void)vtab;
    return lct__sqlcursor_new(sizeof(keys_cursor), out);
}

static int keys_close(sqlite3_vtab_cursor *cur)
{
    keys_cursor *c = (keys_cursor *)cur;
    lct_close(c->stream);
    sqlite3_free(c);
    return SQLITE_OK;
}

static lct__sqlfile *query_file(keys_cursor *c, int i)
{
    return lct__sqltab_query_file((lct__sqltab *)c->base.pVtab, c->one, i);
}

static const char *op_of(lct_str qualname)
{
    if (lct_str_has_suffix(qualname, "." LCT_KEYS_READ_CALL) ||
        lct_str_eq(qualname, LCT_KEYS_READ_CALL))
        return "read";
    if (lct_str_has_suffix(qualname, "." LCT_KEYS_WRITE_CALL) ||
        lct_str_eq(qualname, LCT_KEYS_WRITE_CALL))
        return "write";
    return NULL;
}

/* The next record of the current file that has keys to give. */
static bool next_record(keys_cursor *c)
{
    while (lct_next(c->stream, &c->rec) == 1) {
        c->idx = c->have_rec ? c->idx + 1 : 0;
        c->have_rec = true;
        if ((c->op = op_of(c->rec.qualname)) &&
            lct_key_iter_init(&c->rec, &c->keys, NULL) == LCT_OK)
            return true;
    }
    return false;
}

static int open_file(keys_cursor *c, lct__sqlfile *f)
{
    lct_error err;
    lct_close(c->stream);
    c->stream = NULL;
    c->have_rec = false;
    if (lct_open(f->path, LCT_STREAM | f->options->open_flags, &c->stream,
                 &err) != LCT_OK) {
        lct__sqltab_error((lct__sqltab *)c->base.pVtab, "%s", err.message);
        return SQLITE_ERROR;
    }
    lct_reader_set_log(c->stream, lct__sqlfile_log, f);
    return SQLITE_OK;
}

static int advance(keys_cursor *c)
{
    for (;;) {
        if (c->have_rec &&
            lct_key_iter_next(&c->keys, &c->key, &c->bytes, NULL) == 1)
            return SQLITE_OK;
        if (c->stream && next_record(c))
            continue;
        lct__sqlfile *f = query_file(c, c->stream ? ++c->file : c->file);
        if (!f) {
            c->eof = true;
            return SQLITE_OK;
        }
        int rc = open_file(c, f);
        if (rc != SQLITE_OK)
            return rc;
    }
}

static int keys_filter(sqlite3_vtab_cursor *cur, int idx_num,
                       const char *idx_str, int argc, sqlite3_value **argv)
{
    (void)idx_str;
    keys_cursor *c = (keys_cursor *)cur;
    lct__sqltab *tab = (lct__sqltab *)cur->pVtab;
    lct_close(c->stream);
    c->stream = NULL;
    c->have_rec = false;
    c->eof = false;
    c->file = 0;
    c->one = NULL;
    if (!tab->fixed) {
        const char *path = idx_num == 1 && argc == 1
                               ? (const char *)sqlite3_value_text(argv[0])
                               : NULL;
        if (!path) {
            lct__sqltab_error(tab, "lct_keys: name a file: "
                              "SELECT * FROM lct_keys('run.lct')");
            return SQLITE_ERROR;
        }
        if (!(c->one = lct__sqltab_file(tab, path)))
            return SQLITE_ERROR;
    }
    return advance(c);
}

static int keys_next(sqlite3_vtab_cursor *cur)
{
    return advance((keys_cursor *)cur);
}

static int keys_eof(sqlite3_vtab_cursor *cur)
{
    return ((keys_cursor *)cur)->eof;
}

static int keys_column(sqlite3_vtab_cursor *cur, sqlite3_context *ctx,
                       int col)
{
    keys_cursor *c = (keys_cursor *)cur;
    const lct_object_key *k = &c->key;
    char id[17];
    switch (col) {
    case K_IDX: sqlite3_result_int64(ctx, (sqlite3_int64)c->idx); break;
    case K_T_MONO: sqlite3_result_double(ctx, c->rec.t_mono); break;
    case K_OP: sqlite3_result_text(ctx, c->op, -1, SQLITE_STATIC); break;
    case K_CHUNK_HASH:
        lct__sqlresult_hex(ctx, k->chunk_hash.ptr, k->chunk_hash.len);
        break;
    case K_MODEL_NAME: lct__sqlresult_str(ctx, k->model_name); break;
    case K_KV_RANK: sqlite3_result_int64(ctx, k->kv_rank); break;
    case K_OBJECT_GROUP_ID: sqlite3_result_int64(ctx, k->object_group_id);
        break;
    case K_CACHE_SALT: lct__sqlresult_str(ctx, k->cache_salt); break;
    case K_OBJ_ID:
        snprintf(id, sizeof id, "%016llx",
                 (unsigned long long)lct_object_key_hash(k));
        sqlite3_result_text(ctx, id, 16, SQLITE_TRANSIENT);
        break;
    case K_BYTES: sqlite3_result_int64(ctx, (sqlite3_int64)c->bytes); break;
    case K_FILE:
    case K_PATH:
        sqlite3_result_text(ctx, query_file(c, c->file)->path, -1,
                            SQLITE_TRANSIENT);
        break;
    default: sqlite3_result_null(ctx);
    }
    return SQLITE_OK;
}

static int keys_rowid(sqlite3_vtab_cursor *cur, sqlite3_int64 *rowid)
{
    /* Unique per row: the record, and the key's place in its list. */
    keys_cursor *c = (keys_cursor *)cur;
    *rowid = (sqlite3_int64)((query_file(c, c->file)->rowid_base |
                              c->idx) * 4096 + c->keys.index);
    return SQLITE_OK;
}

const sqlite3_module lct__keys_module = {
    .iVersion = 0,
    .xCreate = lct__keys_connect, /* as connect: also eponymous */
    .xConnect = lct__keys_connect,
    .xBestIndex = keys_best_index,
    .xDisconnect = lct__records_disconnect,
    .xDestroy = lct__records_disconnect,
    .xOpen = keys_open,
    .xClose = keys_close,
    .xFilter = keys_filter,
    .xNext = keys_next,
    .xEof = keys_eof,
    .xColumn = keys_column,
    .xRowid = keys_rowid,
};
