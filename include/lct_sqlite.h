/*
 * lct_sqlite.h - liblct as SQLite virtual tables.
 *
 * Three modules over trace files, read through liblct without copying the
 * file into SQLite:
 *
 *   lct_records  one row per record the reader yields, in file order:
 *     idx INTEGER        record number from 0 in its file (the rowid of a
 *                        one-file table; with several files the rowid is
 *                        (file number << 40) | idx, so rows stay distinct)
 *     offset INTEGER     file offset of the record's frame
 *     t_mono REAL, t_wall REAL, qualname TEXT
 *     args TEXT          the args map as JSON (lct_value_write_json),
 *                        rendered only when a query reads the column
 *     args_bytes INTEGER size of the msgpack args
 *     file TEXT          the file the row comes from, as given
 *   lct_header   one row per file: file, magic, format_version, level,
 *     trace_schema_version, t_mono_start, t_wall_start, sm_config_json,
 *     sm_config_digest, level_meta (JSON, NULL when absent), header_bytes.
 *   lct_keys     the key reference stream of `lct keys`: one row per key
 *     that a read call (submit_prefetch_task) or a write call
 *     (reserve_write) carried, in trace order: idx, t_mono, op ("read",
 *     "write"), chunk_hash (hex), model_name, kv_rank, object_group_id,
 *     cache_salt, obj_id (lct_object_key_hash in hex), bytes, file.
 *     Its hidden columns read_calls, write_calls and all_calls choose the
 *     calls as `lct keys --read, --write, --all` do: comma-separated
 *     patterns (lct_qualname_match) for reads and for writes, NULL for
 *     the default call, and 1 or 'all' for every other call that carries
 *     keys (op is then its qualname):
 *     lct_keys('run.lct', 'submit_prefetch_task,finish_read_prefetched',
 *              NULL, 'all'), or WHERE read_calls = '...' on a table.
 *
 * Use them as table-valued functions, one file each:
 *     SELECT * FROM lct_records('run.lct');
 *     SELECT * FROM lct_header('run.lct');
 *     SELECT op, count(DISTINCT obj_id) FROM lct_keys('run.lct') GROUP BY 1;
 * or create tables over several files:
 *     CREATE VIRTUAL TABLE records USING lct_records('a.lct', 'b.lct');
 *
 * What the planner is told (EXPLAIN QUERY PLAN shows it as the index
 * string): `idx` equality and ranges (and the rowid of a one-file table)
 * jump to the record through a row cache, built by one parallel
 * validating pass once per file and connection, instead of rendering what
 * comes before; `qualname = ?` (BINARY collation) and ranges on `t_mono`
 * and `t_wall` drop other records before any column is produced.  The row
 * cache keeps each record's offset, times and qualname (32 bytes a
 * record), so once it is built, queries that read neither args nor
 * args_bytes are answered from memory; a first scan streams the file,
 * which costs less than building the cache.  GROUP BY qualname, ORDER BY
 * qualname and DISTINCT qualname ... ORDER BY qualname over one file take
 * the cache's rows grouped by qualname, so SQLite sorts nothing (rows that
 * need args only once lct_guard_install has run).  SQLite checks every
 * constraint again, so push-down never changes an answer.
 *
 * A damaged trace gives exactly the rows the reference reader yields;
 * each warning goes to the log given at registration once per file and
 * connection (a second pass does not repeat it).  Files are read as they
 * are when a query runs; the row cache is rebuilt when a file's size
 * has changed.  Pipes cannot be queried (a query may read a file twice).
 * Scans, and the pass that builds the row cache, open a file with
 * LCT_ONE_PASS once lct_guard_install has run (as in `lct sql`: the
 * mapping or the stream, whichever costs less on this machine), else
 * with read(2), so that a file cut during a query cannot raise SIGBUS in
 * a program that never asked for the guard.  Reading a row's args by its
 * idx maps the file either way: a program that registers the modules
 * itself should install the guard.
 *
 * The loadable extension (lct_sqlite.so, built and installed by make)
 * installs the guard when loaded (a fault outside liblct's mappings still
 * goes to the host's own handler) and registers the three modules with
 * the default options:
 *     sqlite3> .load /usr/local/lib/liblct/lct_sqlite
 */
#ifndef LCT_SQLITE_H
#define LCT_SQLITE_H

#include <sqlite3.h>

#include "lct_read.h"

#ifdef __cplusplus
extern "C" {
#endif

/** How the modules read traces.  A zero struct is the default. */
typedef struct lct_sqlite_options {
    /** lct_open flags added to every open: LCT_LAZY (no deep validation,
     *  may yield records the reference reader skips) is the one that
     *  makes sense; 0 is the reference's behaviour. */
    unsigned open_flags;
    /** Receives each reader warning once; NULL: lct_log_stderr. */
    lct_log_fn log;
    void *log_ctx;
    /** Threads of the row cache's pass over a file (0: one per CPU the
     *  process may run on; 1: one). */
    unsigned threads;
    /** Called now and then (about every 4096 records) while a file is
     *  read from its start: the row cache's pass, or a scan of records
     *  or keys without it; with the bytes read so far (an estimate
     *  during the parallel pass) and the file's size.  From the thread
     *  running the statement, or during the pass from its first thread
     *  only, so never from two threads at once.  NULL: none. */
    void (*progress)(void *ctx, const char *path, uint64_t done,
                     uint64_t total);
    void *progress_ctx;
} lct_sqlite_options;

/**
 * Register lct_records, lct_header and lct_keys on @p db, and the SQL
 * function lct_hex(x): a blob, or base64 text (how records.args shows a
 * hash, as msgspec's JSON writes bin), as the lowercase hex that
 * keys.chunk_hash holds (NULL for text that is not base64), so the two
 * tables join on a hash; and the aggregates percentile(Y, P) and
 * median(Y), also window functions, to the digit as SQLite's percentile
 * extension (ext/misc/percentile.c) defines them.  @p options is copied;
 * NULL means defaults.
 * @return SQLITE_OK or SQLite's error code.
 */
int lct_sqlite_register(sqlite3 *db, const lct_sqlite_options *options);

#ifdef __cplusplus
}
#endif

#endif
