/*
 * sqlite_internal.h - what the SQLite tables share (sqlite_tables.c): a
 * table's files, each opened once per connection, with its warnings
 * logged once and its row cache (sqlite_rows.c) built on demand; and the
 * three modules, which sqlite.c registers.
 */
#ifndef LCT_SQLITE_INTERNAL_H
#define LCT_SQLITE_INTERNAL_H

#include <sqlite3ext.h>
#include <stdbool.h>
#include <stdint.h>

#include "base/grow_internal.h"
#include "lct_cache.h" /* lct_keys: the key iterator, the key hash */
#include "lct_json.h" /* args as JSON */
#include "lct_sqlite.h"

/* One record in a file's row cache (sqlite_rows.c). */
typedef struct lct__sqlrow {
    uint64_t offset;
    double t_mono, t_wall;
    uint32_t qualname; /* into the file's qualnames */
} lct__sqlrow;

/* One trace file of a table. */
typedef struct lct__sqlfile {
    char *path;
    const lct_sqlite_options *options;
    lct_reader *map;       /* mapped reader: header, random access */
    lct__sqlrow *rows;     /* every record, when indexed */
    uint64_t nrows;
    lct_str *qualnames;    /* the distinct qualnames, owned */
    uint32_t nqualnames;
    bool indexed;
    /* The rows grouped by qualname, for GROUP BY and ORDER BY qualname
     * (lct__sqlfile_order): row numbers, the groups in the order of
     * their names (BINARY), each group in record order; group g is
     * by_qualname[group_start[g] .. group_start[g + 1]). */
    uint64_t *by_qualname, *group_start;
    /* What the mapping was made of: a file whose size, mtime, inode or
     * device differ at the next query is mapped and indexed again. */
    uint64_t id_size, id_ino, id_dev;
    int64_t id_mtime_sec, id_mtime_nsec;
    bool stale;            /* a cached row failed: map again when free */
    uint64_t bounded_queries; /* queries that bounded idx, cache or not */
    int users;             /* cursors reading map: no reopen meanwhile */
    bool logged_any;       /* a warning was passed on already */
    uint64_t logged_to;    /* the offset of the last one */
    uint64_t rowid_base;   /* (file number << 40) */
} lct__sqlfile;

/* A table: a fixed list of files (CREATE VIRTUAL TABLE ... USING m(f,..)),
 * or none for the table-valued function, whose files are opened as
 * queries name them and kept for the connection. */
typedef struct lct__sqltab {
    sqlite3_vtab base;
    lct_sqlite_options options;
    bool fixed;
    lct__sqlfile **files; /* each allocated once: readers log to it */
    int nfiles;
} lct__sqltab;

#define LCT__ROWID_FILE_SHIFT 40

/* Every this many records a scan tells options->progress how far it is. */
#define LCT__SQL_PROGRESS_EVERY 4096
/* Tell f's options->progress (if any) that done bytes of r are read. */
void lct__sqlfile_progress(const lct__sqlfile *f, const lct_reader *r,
                           uint64_t done);

/* The module's arguments (SQL string literals) as files; the error in
 * *err (sqlite3_mprintf'd) on failure. */
int lct__sqltab_init(lct__sqltab *tab, const lct_sqlite_options *options,
                     int argc, const char *const *argv, char **err);
void lct__sqltab_free(lct__sqltab *tab);
/* The file at path for the table-valued function (opened once), or NULL
 * with tab->base.zErrMsg set. */
lct__sqlfile *lct__sqltab_file(lct__sqltab *tab, const char *path);
/* Open f->map if it is not open (or again if the file's size, mtime,
 * inode or device changed, or a cached row failed); false with the
 * message in tab->base.zErrMsg. */
bool lct__sqlfile_map(lct__sqltab *tab, lct__sqlfile *f);
/* Build the row cache of f, mapped first (sqlite_rows.c); false with
 * the message set. */
bool lct__sqlfile_index(lct__sqltab *tab, lct__sqlfile *f);
/* Group f's row cache by qualname (f->by_qualname), indexed first;
 * false with the message set. */
bool lct__sqlfile_order(lct__sqltab *tab, lct__sqlfile *f);
/* Forget f's row cache (sqlite_tables.c). */
void lct__sqlfile_unindex(lct__sqlfile *f);
/* The log every reader of f gets: passes each warning on once. */
void lct__sqlfile_log(void *ctx, const lct_reader *r, lct_warning_kind kind,
                      uint64_t offset, const char *message);
/* The file number i of a query: the table's, or the table-valued
 * function's one file (`one`); NULL past the last. */
lct__sqlfile *lct__sqltab_query_file(const lct__sqltab *tab,
                                     lct__sqlfile *one, int i);

/* A table read in one streamed pass per file per query (lct_keys,
 * lct_spans): the query's files in turn, each opened when the one before
 * is done, its records told to the file's progress. */
typedef struct lct__sqlstream {
    lct__sqlfile *one;  /* the table-valued function's file, or NULL */
    int file;           /* the query's file number being read */
    lct_reader *reader; /* NULL: none open */
    uint64_t records;   /* read from it */
} lct__sqlstream;

/* A query's start: nothing open; its one file from the first argument
 * when the table is a function of one (`name` says whose in the message
 * when none is given).  SQLITE_OK or SQLITE_ERROR. */
int lct__sqlstream_start(lct__sqlstream *s, lct__sqltab *tab, int idx_num,
                         int argc, sqlite3_value **argv, const char *name);
/* The open file's next record: true, or false at its end. */
bool lct__sqlstream_record(lct__sqlstream *s, lct__sqltab *tab,
                           lct_record *rec);
/* The query's next file opened (its first when none was): SQLITE_OK,
 * SQLITE_DONE past the last, SQLITE_ERROR. */
int lct__sqlstream_next_file(lct__sqlstream *s, lct__sqltab *tab);
void lct__sqlstream_close(lct__sqlstream *s);
/* The file being read. */
lct__sqlfile *lct__sqlstream_file(const lct__sqlstream *s,
                                  const lct__sqltab *tab);

/* xBestIndex's part for the hidden `path` column (column path_col) of a
 * table-valued function: an equality becomes argument 1 and idxNum 1;
 * one SQLite cannot use yet is SQLITE_CONSTRAINT, so it plans another
 * order.  A table over fixed files ignores it. */
int lct__sqltab_path_index(const lct__sqltab *tab, sqlite3_index_info *info,
                           int path_col);

/* A str view as an SQL text result (copied). */
/* How a pass over a file opens it.  A pass uses a record's views only
 * until its next record, so with the SIGBUS guard installed the library
 * may take the mapping or the stream, whichever costs less on this
 * machine (LCT_ONE_PASS); without it, streamed, so that a file cut during
 * a query in a program that never installed the guard (the sqlite3
 * shell) is not a crash. */
unsigned lct__sqlfile_pass_flags(const lct__sqlfile *f);
void lct__sqlresult_str(sqlite3_context *ctx, lct_str s);
/* Bytes as lowercase hex text. */
void lct__sqlresult_hex(sqlite3_context *ctx, const unsigned char *p,
                        size_t n);

/* Every table's xOpen: a zeroed cursor of `size` bytes whose first
 * member is its sqlite3_vtab_cursor. */
int lct__sqlcursor_new(size_t size, sqlite3_vtab_cursor **out);

/* A text buffer reused from row to row for rendered JSON. */
typedef lct__grow lct__sqltext;

/* Render v as JSON into t (emptied first): lct_value_write_json's status. */
lct_status lct__sqltext_json(lct__sqltext *t, lct_value v);
void lct__sqltext_free(lct__sqltext *t);

/* Replace the table's error message. */
void lct__sqltab_error(lct__sqltab *tab, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Declare the table's schema and make its files (the module's
 * arguments); the xConnect/xCreate of every table. */
int lct__sqltab_connect(sqlite3 *db, void *aux, int argc,
                        const char *const *argv, sqlite3_vtab **out,
                        char **err, const char *schema);
int lct__sqltab_disconnect(sqlite3_vtab *vtab);

/* Register lct_hex(), percentile() and median() (sqlite_functions.c). */
int lct__sqlite_functions(sqlite3 *db);
/* percentile(Y, P) and median(Y) (sqlite_percentile.c), registered by
 * lct__sqlite_functions. */
int lct__sqlite_percentile(sqlite3 *db);

extern const sqlite3_module lct__header_module;
extern const sqlite3_module lct__records_module;
/* lct_records' connect and disconnect (in sqlite.c, beside lct_header's,
 * which they share). */
int lct__records_connect(sqlite3 *db, void *aux, int argc,
                         const char *const *argv, sqlite3_vtab **out,
                         char **err);
int lct__records_disconnect(sqlite3_vtab *vtab);

extern const sqlite3_module lct__spans_module;
extern const sqlite3_module lct__keys_module;
int lct__keys_connect(sqlite3 *db, void *aux, int argc,
                      const char *const *argv, sqlite3_vtab **out, char **err);

#endif
