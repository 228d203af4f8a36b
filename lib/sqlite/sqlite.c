/*
 * sqlite.c - liblct's SQLite modules: registration of the four tables
 * (sqlite_records.c, sqlite_header.c, sqlite_keys.c, sqlite_spans.c),
 * the functions (sqlite_functions.c) and the loadable
 * extension's entry point.
 *
 * Built twice: into the lct tool with SQLITE_CORE defined (sqlite3ext.h
 * is then plain sqlite3.h), and into lct_sqlite.so without it, where
 * every sqlite3_* call goes through the routines SQLite hands the
 * extension at load.  Loading the extension installs liblct's SIGBUS
 * guard, as the Python module does.
 */
#include "sqlite/sqlite_internal.h"
#include "lct_sqlite.h"
SQLITE_EXTENSION_INIT1

static void free_options(void *p)
{
    sqlite3_free(p);
}

static int register_module(sqlite3 *db, const char *name,
                           const sqlite3_module *module,
                           const lct_sqlite_options *options)
{
    lct_sqlite_options *copy = sqlite3_malloc(sizeof *copy);
    if (!copy)
        return SQLITE_NOMEM;
    *copy = options ? *options : (lct_sqlite_options){0};
    return sqlite3_create_module_v2(db, name, module, copy, free_options);
}

int lct_sqlite_register(sqlite3 *db, const lct_sqlite_options *options)
{
    int rc = register_module(db, "lct_records", &lct__records_module, options);
    if (rc == SQLITE_OK)
        rc = register_module(db, "lct_header", &lct__header_module, options);
    if (rc == SQLITE_OK)
        rc = register_module(db, "lct_keys", &lct__keys_module, options);
    if (rc == SQLITE_OK)
        rc = register_module(db, "lct_spans", &lct__spans_module, options);
    if (rc == SQLITE_OK)
        rc = lct__sqlite_functions(db);
    return rc;
}

#ifndef SQLITE_CORE
/* The entry point SQLite derives from the file name lct_sqlite.so. */
__attribute__((visibility("default"))) int
sqlite3_lctsqlite_init(sqlite3 *db, char **err,
                       const sqlite3_api_routines *api);
int sqlite3_lctsqlite_init(sqlite3 *db, char **err,
                           const sqlite3_api_routines *api)
{
    (void)err;
    SQLITE_EXTENSION_INIT2(api);
    /* A host (the sqlite3 shell, Python) knows nothing of liblct's
     * mappings: without the guard a file cut during a query would kill
     * it.  Faults elsewhere still go to the host's own handler. */
    (void)lct_guard_install(NULL);
    return lct_sqlite_register(db, NULL);
}
#endif
