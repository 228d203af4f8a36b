/*
 * sqlite_tables.c - what liblct's three SQLite tables share: the files a
 * table reads (opened once per connection, mapped again when their size,
 * mtime, inode or device change, warnings passed on once), a table's
 * arguments, connecting and disconnecting, cursors, and the JSON text of
 * a value.  The tables are above it (sqlite_records.c, sqlite_keys.c,
 * sqlite_header.c), the row cache beside them (sqlite_rows.c).
 */
#include "sqlite/sqlite_internal.h"
#include "read/guard_internal.h"
#include "lct_sqlite.h"
SQLITE_EXTENSION_INIT3

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* MARK: - files */

void lct__sqltab_error(lct__sqltab *tab, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    sqlite3_free(tab->base.zErrMsg);
    tab->base.zErrMsg = sqlite3_vmprintf(fmt, ap);
    va_end(ap);
}

void lct__sqlfile_log(void *ctx, const lct_reader *r, lct_warning_kind kind,
                      uint64_t offset, const char *message)
{
    lct__sqlfile *f = ctx;
    /* Warnings come in file order; a later pass meets the same ones. */
    if (f->logged_any && offset <= f->logged_to)
        return;
    f->logged_any = true;
    f->logged_to = offset;
    lct_log_fn log = f->options->log ? f->options->log : lct_log_stderr;
    log(f->options->log_ctx, r, kind, offset, message);
}

static void file_close(lct__sqlfile *f)
{
    lct_close(f->map);
    f->map = NULL;
    lct__sqlfile_unindex(f);
}

/* Whether the file at path is still the one f mapped, as far as what
 * costs one stat(2) can tell: same device, inode, size and mtime.  A
 * rewrite that keeps all four (same size, mtime set back) is not seen. */
static bool same_file(const lct__sqlfile *f)
{
    struct stat st;
    if (stat(f->path, &st) != 0 || !S_ISREG(st.st_mode))
        return true; /* gone or odd: keep what was read */
    return (uint64_t)st.st_size == f->id_size &&
           (uint64_t)st.st_ino == f->id_ino &&
           (uint64_t)st.st_dev == f->id_dev &&
           (int64_t)st.st_mtim.tv_sec == f->id_mtime_sec &&
           (int64_t)st.st_mtim.tv_nsec == f->id_mtime_nsec;
}

static void note_identity(lct__sqlfile *f)
{
    struct stat st;
    if (stat(f->path, &st) != 0)
        memset(&st, 0, sizeof st);
    f->id_size = (uint64_t)st.st_size;
    f->id_ino = (uint64_t)st.st_ino;
    f->id_dev = (uint64_t)st.st_dev;
    f->id_mtime_sec = (int64_t)st.st_mtim.tv_sec;
    f->id_mtime_nsec = (int64_t)st.st_mtim.tv_nsec;
}

bool lct__sqlfile_map(lct__sqltab *tab, lct__sqlfile *f)
{
    if (f->map) {
        if (f->users > 0 || (!f->stale && same_file(f)))
            return true;
        /* Grew, shrank, rewritten or replaced: read it as it is now, and
         * say its warnings again. */
        file_close(f);
        f->logged_any = false;
        f->logged_to = 0;
    }
    f->stale = false;
    /* Before the open: a change in between then shows at the next query. */
    note_identity(f);
    lct_error err;
    if (lct_open(f->path, f->options->open_flags, &f->map, &err) != LCT_OK) {
        lct__sqltab_error(tab, "%s", err.message);
        return false;
    }
    if (!lct_reader_data(f->map).ptr) {
        lct__sqltab_error(tab, "trace file '%s': not a regular file (a "
                          "query may need to read it twice)", f->path);
        file_close(f);
        return false;
    }
    lct_reader_set_log(f->map, lct__sqlfile_log, f);
    return true;
}

/* A module argument: an SQL string literal ('a.lct', "a.lct") or a bare
 * word, as sqlite3 hands it over (unparsed). */
static char *dequote(const char *arg)
{
    while (*arg == ' ')
        arg++;
    size_t len = strlen(arg);
    while (len && arg[len - 1] == ' ')
        len--;
    char q = len >= 2 ? arg[0] : 0;
    if ((q != '\'' && q != '"') || arg[len - 1] != q)
        return sqlite3_mprintf("%.*s", (int)len, arg);
    char *out = sqlite3_malloc64(len);
    if (!out)
        return NULL;
    size_t n = 0;
    for (size_t i = 1; i + 1 < len; i++) {
        out[n++] = arg[i];
        if (arg[i] == q && arg[i + 1] == q)
            i++;
    }
    out[n] = 0;
    return out;
}

/* A new file of the table, or NULL (out of memory). */
static lct__sqlfile *add_file(lct__sqltab *tab, char *path)
{
    lct__sqlfile **grown = sqlite3_realloc64(
        tab->files, (uint64_t)(tab->nfiles + 1) * sizeof *grown);
    lct__sqlfile *f = sqlite3_malloc(sizeof *f);
    if (grown)
        tab->files = grown;
    if (!grown || !f || !path) {
        sqlite3_free(f);
        sqlite3_free(path);
        return NULL;
    }
    *f = (lct__sqlfile){
        .path = path,
        .options = &tab->options,
        .rowid_base = (uint64_t)tab->nfiles << LCT__ROWID_FILE_SHIFT};
    tab->files[tab->nfiles++] = f;
    return f;
}

int lct__sqltab_init(lct__sqltab *tab, const lct_sqlite_options *options,
                     int argc, const char *const *argv, char **err)
{
    tab->options = *options;
    tab->fixed = argc > 3; /* argv: module, database, table, arguments */
    for (int i = 3; i < argc; i++) {
        lct__sqlfile *f = add_file(tab, dequote(argv[i]));
        if (!f)
            return SQLITE_NOMEM;
        if (!lct__sqlfile_map(tab, f)) { /* refuse a bad file up front */
            *err = tab->base.zErrMsg;
            tab->base.zErrMsg = NULL;
            return SQLITE_ERROR;
        }
    }
    return SQLITE_OK;
}

lct__sqlfile *lct__sqltab_file(lct__sqltab *tab, const char *path)
{
    for (int i = 0; i < tab->nfiles; i++)
        if (strcmp(tab->files[i]->path, path) == 0)
            return lct__sqlfile_map(tab, tab->files[i]) ? tab->files[i]
                                                        : NULL;
    lct__sqlfile *f = add_file(tab, sqlite3_mprintf("%s", path));
    if (!f) {
        lct__sqltab_error(tab, "out of memory");
        return NULL;
    }
    f->rowid_base = 0; /* one file per call */
    return lct__sqlfile_map(tab, f) ? f : NULL;
}

void lct__sqltab_free(lct__sqltab *tab)
{
    for (int i = 0; i < tab->nfiles; i++) {
        file_close(tab->files[i]);
        sqlite3_free(tab->files[i]->path);
        sqlite3_free(tab->files[i]);
    }
    sqlite3_free(tab->files);
    sqlite3_free(tab->base.zErrMsg);
    sqlite3_free(tab);
}

lct__sqlfile *lct__sqltab_query_file(const lct__sqltab *tab,
                                     lct__sqlfile *one, int i)
{
    if (one)
        return i == 0 ? one : NULL;
    return i < tab->nfiles ? tab->files[i] : NULL;
}

int lct__sqltab_path_index(const lct__sqltab *tab, sqlite3_index_info *info,
                           int path_col)
{
    for (int i = 0; i < info->nConstraint && !tab->fixed; i++) {
        const struct sqlite3_index_constraint *c = &info->aConstraint[i];
        if (c->iColumn != path_col)
            continue;
        if (c->op != SQLITE_INDEX_CONSTRAINT_EQ || !c->usable)
            return SQLITE_CONSTRAINT;
        info->aConstraintUsage[i].argvIndex = 1;
        info->aConstraintUsage[i].omit = 1;
        info->idxNum = 1;
    }
    return SQLITE_OK;
}

unsigned lct__sqlfile_pass_flags(const lct__sqlfile *f)
{
    return f->options->open_flags |
           (lct__guard_installed() ? LCT_ONE_PASS : LCT_STREAM);
}

void lct__sqlresult_str(sqlite3_context *ctx, lct_str s)
{
    sqlite3_result_text64(ctx, s.ptr ? s.ptr : "", s.len, SQLITE_TRANSIENT,
                          SQLITE_UTF8);
}

void lct__sqlresult_hex(sqlite3_context *ctx, const unsigned char *p,
                        size_t n)
{
    static const char digits[] = "0123456789abcdef";
    char *text = sqlite3_malloc64(2 * (uint64_t)n + 1);
    if (!text) {
        sqlite3_result_error_nomem(ctx);
        return;
    }
    for (size_t i = 0; i < n; i++) {
        text[2 * i] = digits[p[i] >> 4];
        text[2 * i + 1] = digits[p[i] & 15];
    }
    sqlite3_result_text64(ctx, text, 2 * (uint64_t)n, sqlite3_free,
                          SQLITE_UTF8);
}

int lct__sqlcursor_new(size_t size, sqlite3_vtab_cursor **out)
{
    void *c = sqlite3_malloc64(size);
    if (!c)
        return SQLITE_NOMEM;
    memset(c, 0, size);
    *out = c;
    return SQLITE_OK;
}

lct_status lct__sqltext_json(lct__sqltext *t, lct_value v)
{
    t->len = 0;
    return lct_value_write_json(v, lct__grow_write, t);
}

void lct__sqltext_free(lct__sqltext *t)
{
    free(t->ptr);
    *t = (lct__sqltext){0};
}

void lct__sqlfile_unindex(lct__sqlfile *f)
{
    free(f->rows);
    for (uint32_t i = 0; i < f->nqualnames; i++)
        free((char *)f->qualnames[i].ptr);
    free(f->qualnames);
    free(f->by_qualname);
    free(f->group_start);
    f->rows = NULL;
    f->qualnames = NULL;
    f->by_qualname = f->group_start = NULL;
    f->nrows = 0;
    f->nqualnames = 0;
    f->indexed = false;
}

/* MARK: - connecting */

int lct__sqltab_connect(sqlite3 *db, void *aux, int argc,
                       const char *const *argv, sqlite3_vtab **out,
                       char **err, const char *schema)
{
    int rc = sqlite3_declare_vtab(db, schema);
    if (rc != SQLITE_OK)
        return rc;
    lct__sqltab *tab = sqlite3_malloc(sizeof *tab);
    if (!tab)
        return SQLITE_NOMEM;
    memset(tab, 0, sizeof *tab);
    rc = lct__sqltab_init(tab, aux, argc, argv, err);
    if (rc != SQLITE_OK) {
        lct__sqltab_free(tab);
        return rc;
    }
    *out = &tab->base;
    return SQLITE_OK;
}

int lct__sqltab_disconnect(sqlite3_vtab *vtab)
{
    lct__sqltab_free((lct__sqltab *)vtab);
    return SQLITE_OK;
}

int lct__records_connect(sqlite3 *db, void *aux, int argc,
                         const char *const *argv, sqlite3_vtab **out,
                         char **err)
{
    return lct__sqltab_connect(db, aux, argc, argv, out, err,
                       "CREATE TABLE x(idx INTEGER, offset INTEGER, "
                       "t_mono REAL, t_wall REAL, qualname TEXT, args TEXT, "
                       "args_bytes INTEGER, file TEXT, op TEXT, path HIDDEN)");
}

int lct__records_disconnect(sqlite3_vtab *vtab)
{
    return lct__sqltab_disconnect(vtab);
}

int lct__keys_connect(sqlite3 *db, void *aux, int argc,
                      const char *const *argv, sqlite3_vtab **out, char **err)
{
    return lct__sqltab_connect(db, aux, argc, argv, out, err,
                       "CREATE TABLE x(idx INTEGER, t_mono REAL, op TEXT, "
                       "chunk_hash TEXT, model_name TEXT, kv_rank INTEGER, "
                       "object_group_id INTEGER, cache_salt TEXT, "
                       "obj_id TEXT, bytes INTEGER, pos INTEGER, file TEXT, "
                       "path HIDDEN, "
                       "read_calls HIDDEN, write_calls HIDDEN, "
                       "all_calls HIDDEN)");
}
