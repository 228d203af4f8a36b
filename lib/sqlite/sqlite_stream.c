/*
 * sqlite_stream.c - the streamed pass that lct_keys and lct_spans share:
 * a query's files opened in turn, each read once in order, its records
 * told to the file's progress (lct__sqlstream).
 */
#include "sqlite/sqlite_internal.h"
#include "lct_sqlite.h"
SQLITE_EXTENSION_INIT3

int lct__sqlstream_start(lct__sqlstream *s, lct__sqltab *tab, int idx_num,
                         int argc, sqlite3_value **argv, const char *name)
{
    lct__sqlstream_close(s);
    s->file = 0;
    s->one = NULL;
    if (tab->fixed)
        return SQLITE_OK;
    const char *path = (idx_num & 1) && argc >= 1
                           ? (const char *)sqlite3_value_text(argv[0])
                           : NULL;
    if (!path) {
        lct__sqltab_error(tab, "%s: name a file: SELECT * FROM %s('run.lct')",
                          name, name);
        return SQLITE_ERROR;
    }
    return (s->one = lct__sqltab_file(tab, path)) ? SQLITE_OK : SQLITE_ERROR;
}

bool lct__sqlstream_record(lct__sqlstream *s, lct__sqltab *tab,
                           lct_record *rec)
{
    if (!s->reader || lct_next(s->reader, rec) != 1)
        return false;
    if (++s->records % LCT__SQL_PROGRESS_EVERY == 0) {
        lct_stats st;
        lct_reader_stats(s->reader, &st);
        lct__sqlfile_progress(lct__sqltab_query_file(tab, s->one, s->file),
                              s->reader, st.bytes_read);
    }
    return true;
}

int lct__sqlstream_next_file(lct__sqlstream *s, lct__sqltab *tab)
{
    lct__sqlfile *f =
        lct__sqltab_query_file(tab, s->one, s->reader ? ++s->file : s->file);
    lct__sqlstream_close(s);
    if (!f)
        return SQLITE_DONE;
    lct_error err;
    if (lct_open(f->path, lct__sqlfile_pass_flags(f) | LCT_KEYS, &s->reader,
                 &err) != LCT_OK) {
        lct__sqltab_error(tab, "%s", err.message);
        return SQLITE_ERROR;
    }
    lct_reader_set_log(s->reader, lct__sqlfile_log, f);
    return SQLITE_OK;
}

lct__sqlfile *lct__sqlstream_file(const lct__sqlstream *s,
                                  const lct__sqltab *tab)
{
    return lct__sqltab_query_file(tab, s->one, s->file);
}

void lct__sqlstream_close(lct__sqlstream *s)
{
    lct_close(s->reader);
    s->reader = NULL;
    s->records = 0;
}
