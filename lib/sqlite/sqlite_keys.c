/*
 * sqlite_keys.c - the lct_keys table: the key reference stream of `lct
 * keys` as rows (one per key that a read call, submit_prefetch_task, or a
 * write call, reserve_write, carried; or the calls its read_calls,
 * write_calls and all_calls arguments name, as lct keys's --read, --write
 * and --all), read in one streamed pass per query.  A record whose keys cannot be read gives no rows; the reader's
 * warnings go to the table's log once, as for lct_records.
 */
#include "sqlite/sqlite_internal.h"
#include "lct_sqlite.h"
SQLITE_EXTENSION_INIT3

#include <stdio.h>
#include <string.h>

enum {
    K_IDX, K_T_MONO, K_OP, K_CHUNK_HASH, K_MODEL_NAME, K_KV_RANK,
    K_OBJECT_GROUP_ID, K_CACHE_SALT, K_OBJ_ID, K_BYTES, K_POS, K_FILE, K_PATH,
    K_READ_CALLS, K_WRITE_CALLS, K_ALL_CALLS
};

/* A comma-separated list of call patterns (lct_qualname_match's), split
 * once per query. */
typedef struct call_list {
    char *text; /* the argument, as given (NULL: the default call) */
    char *split; /* its copy, NULs for commas */
    const char **v;
    int n;
} call_list;

typedef struct keys_cursor {
    sqlite3_vtab_cursor base;
    lct__sqlstream in;
    lct_record rec;
    uint64_t idx;          /* record number of rec */
    bool have_rec;
    lct_str op;            /* "read", "write", or (all_calls) the qualname */
    call_list reads, writes;
    bool all;              /* all_calls: other calls that carry keys too */
    lct_key_iter keys;
    lct_object_key key;
    uint64_t bytes;
    int64_t pos;           /* the key's place in its call, from 0 */
    bool eof;
} keys_cursor;

/* idxNum: bit 0 a path; bits 1 to 3 read_calls, write_calls, all_calls,
 * each then the next argument of xFilter, in that order. */
static int keys_best_index(sqlite3_vtab *vtab, sqlite3_index_info *info)
{
    lct__sqltab *tab = (lct__sqltab *)vtab;
    int rc = lct__sqltab_path_index(tab, info, K_PATH);
    info->estimatedCost = tab->fixed || info->idxNum ? 1e6 : 1e300;
    int next = info->idxNum ? 2 : 1;
    for (int col = K_READ_CALLS; col <= K_ALL_CALLS && rc == SQLITE_OK;
         col++)
        for (int i = 0; i < info->nConstraint; i++) {
            const struct sqlite3_index_constraint *c = &info->aConstraint[i];
            if (c->iColumn != col)
                continue;
            if (c->op != SQLITE_INDEX_CONSTRAINT_EQ || !c->usable)
                return SQLITE_CONSTRAINT;
            info->aConstraintUsage[i].argvIndex = next++;
            info->aConstraintUsage[i].omit = 1;
            info->idxNum |= 2 << (col - K_READ_CALLS);
            break; /* SQLite checks any second one itself */
        }
    return rc;
}

static void call_list_free(call_list *l)
{
    sqlite3_free(l->text);
    sqlite3_free(l->split);
    sqlite3_free(l->v);
    memset(l, 0, sizeof *l);
}

/* Take an argument: NULL leaves the default; else its comma-separated
 * patterns.  SQLITE_NOMEM or SQLITE_OK. */
static int call_list_set(call_list *l, sqlite3_value *arg)
{
    call_list_free(l);
    const char *text = (const char *)sqlite3_value_text(arg);
    if (!text)
        return SQLITE_OK;
    size_t len = strlen(text);
    l->text = sqlite3_mprintf("%s", text);
    l->split = sqlite3_mprintf("%s", text);
    l->v = sqlite3_malloc64((len / 2 + 2) * sizeof *l->v);
    if (!l->text || !l->split || !l->v)
        return SQLITE_NOMEM;
    for (char *p = l->split, *end; *p || p == l->split; p = end + 1) {
        end = strchr(p, ',');
        if (end)
            *end = '\0';
        if (*p)
            l->v[l->n++] = p;
        if (!end)
            break;
    }
    return SQLITE_OK;
}

/* Whether the list names the call: its patterns, or else the default. */
static bool call_list_names(const call_list *l, lct_str qualname,
                            const char *default_call, const char *default_l2)
{
    if (!l->text) /* a storage trace's call, or an L2-level trace's */
        return lct_qualname_match(qualname, default_call) ||
               lct_str_eq(qualname, default_l2);
    for (int i = 0; i < l->n; i++)
        if (lct_qualname_match(qualname, l->v[i]))
            return true;
    return false;
}

static int keys_open(sqlite3_vtab *vtab, sqlite3_vtab_cursor **out)
{
    (void)vtab;
    return lct__sqlcursor_new(sizeof(keys_cursor), out);
}

static int keys_close(sqlite3_vtab_cursor *cur)
{
    keys_cursor *c = (keys_cursor *)cur;
    lct__sqlstream_close(&c->in);
    call_list_free(&c->reads);
    call_list_free(&c->writes);
    sqlite3_free(c);
    return SQLITE_OK;
}

static lct__sqlfile *query_file(const keys_cursor *c)
{
    return lct__sqlstream_file(&c->in, (lct__sqltab *)c->base.pVtab);
}

/* What a call is in this query's key stream: read first, as lct keys
 * takes its patterns; false when it gives no rows. */
static bool op_of(keys_cursor *c, lct_str qualname)
{
    static const char read[] = "read", write[] = "write";
    const char *l2 = lct_l2_key_op(qualname);
    if (call_list_names(&c->reads, qualname, LCT_KEYS_READ_CALL,
                        LCT_KEYS_L2_READ_CALL))
        c->op = (lct_str){read, sizeof read - 1};
    else if (call_list_names(&c->writes, qualname, LCT_KEYS_WRITE_CALL,
                             LCT_KEYS_L2_WRITE_CALL))
        c->op = (lct_str){write, sizeof write - 1};
    else if (c->all)
        c->op = qualname;
    else
        return false;
    if (l2) /* an L2 event's keys are its operation's */
        c->op = (lct_str){l2, strlen(l2)};
    return true;
}

/* The next record of the current file that has keys to give. */
static bool next_record(keys_cursor *c)
{
    while (lct__sqlstream_record(&c->in, (lct__sqltab *)c->base.pVtab,
                                 &c->rec)) {
        c->idx = c->have_rec ? c->idx + 1 : 0;
        c->have_rec = true;
        if (op_of(c, c->rec.qualname) &&
            lct_key_iter_init(&c->rec, &c->keys, NULL) == LCT_OK) {
            c->pos = -1;
            return true;
        }
    }
    return false;
}

static int advance(keys_cursor *c)
{
    for (;;) {
        if (c->have_rec &&
            lct_key_iter_next(&c->keys, &c->key, &c->bytes, NULL) == 1) {
            c->pos++;
            return SQLITE_OK;
        }
        if (next_record(c))
            continue;
        c->have_rec = false;
        int rc = lct__sqlstream_next_file(&c->in, (lct__sqltab *)c->base.pVtab);
        if (rc == SQLITE_DONE) {
            c->eof = true;
            return SQLITE_OK;
        }
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
    c->have_rec = false;
    c->eof = false;
    int arg = idx_num & 1;
    int rc = SQLITE_OK;
    call_list_free(&c->reads);
    call_list_free(&c->writes);
    c->all = false;
    if ((idx_num & 2) && arg < argc)
        rc = call_list_set(&c->reads, argv[arg++]);
    if ((idx_num & 4) && arg < argc && rc == SQLITE_OK)
        rc = call_list_set(&c->writes, argv[arg++]);
    if ((idx_num & 8) && arg < argc) {
        const char *all = (const char *)sqlite3_value_text(argv[arg]);
        /* 1, or the word lct keys uses */
        c->all = sqlite3_value_int(argv[arg]) != 0 ||
                 (all && sqlite3_stricmp(all, "all") == 0);
    }
    if (rc == SQLITE_OK)
        rc = lct__sqlstream_start(&c->in, tab, idx_num, argc, argv,
                                  "lct_keys");
    return rc == SQLITE_OK ? advance(c) : rc;
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
    case K_OP: lct__sqlresult_str(ctx, c->op); break;
    case K_READ_CALLS:
    case K_WRITE_CALLS: {
        const call_list *l = col == K_READ_CALLS ? &c->reads : &c->writes;
        if (l->text)
            sqlite3_result_text(ctx, l->text, -1, SQLITE_TRANSIENT);
        else
            sqlite3_result_null(ctx);
        break;
    }
    case K_ALL_CALLS: sqlite3_result_int(ctx, c->all); break;
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
    case K_POS: sqlite3_result_int64(ctx, c->pos); break;
    case K_FILE:
    case K_PATH:
        sqlite3_result_text(ctx, query_file(c)->path, -1,
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
    *rowid = (sqlite3_int64)((query_file(c)->rowid_base |
                              c->idx) * 4096 + (uint64_t)c->pos);
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
