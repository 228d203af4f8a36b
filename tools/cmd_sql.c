/*
 * cmd_sql.c - `lct sql`: SQL over traces.  An in-memory SQLite database
 * with the tables `records` and `header` over the given files (the
 * modules of lib/sqlite.c), and each statement's rows printed as aligned
 * columns, CSV (RFC 4180) or one JSON object per row.
 * Exit 0; 1 a file refused or the query failed while running (a shrink
 * among them); 2 usage, a query SQLite cannot prepare included; 3 the
 * rows are right but a file was damaged (frames skipped or tail cut).
 */
#include "tool.h"

#include "lct_sqlite.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Aligned output measures this many rows, then keeps their widths. */
#define MEASURED_ROWS 1000

typedef struct sql_run {
    bool quiet;
    bool damaged;
    bool shrank; /* an error, as in every command: exit 1 */
    tool_progress progress;
    const char *progress_path; /* the file progress is shown for */
} sql_run;

/* The library's progress for a file read from its start: a new file
 * (or the same one read again) starts its own line. */
static void on_progress(void *ctx, const char *path, uint64_t done,
                        uint64_t total)
{
    sql_run *run = ctx;
    if (path != run->progress_path || done == 0) {
        tool_progress_end(&run->progress);
        tool_progress_start_size(&run->progress, total, run->quiet);
        run->progress_path = path;
    }
    /* the library calls every few thousand records: show each time */
    run->progress.next_check = 0;
    tool_progress_fraction(&run->progress,
                           total ? (double)done / (double)total : 1);
}

static void on_warning(void *ctx, const lct_reader *r, lct_warning_kind kind,
                       uint64_t offset, const char *message)
{
    sql_run *run = ctx;
    run->damaged = true;
    run->shrank |= kind == LCT_WARN_SHRANK;
    if (run->quiet)
        tool_log_quiet(NULL, r, kind, offset, message);
    else
        tool_log(NULL, r, kind, offset, message);
}

static void help(void)
{
    printf("usage: lct sql [-q] [-j N] [--csv | --json] QUERY FILE...\n"
           "       lct sql [-q] [-j N] [--csv | --json] -f QUERYFILE FILE...\n"
           "\n"
           "Run SQL (SQLite) over traces.  Tables:\n"
           "  records  idx, offset, t_mono, t_wall, qualname, args (JSON),\n"
           "           args_bytes, file, op (the qualname after its last\n"
           "           dot): one row per record of every FILE\n"
           "  header   file, magic, format_version, level,\n"
           "           trace_schema_version, t_mono_start, t_wall_start,\n"
           "           sm_config_json, sm_config_digest, level_meta (JSON),\n"
           "           header_bytes: one row per FILE\n"
           "  keys     idx, t_mono, op, chunk_hash, model_name, kv_rank,\n"
           "           object_group_id, cache_salt, obj_id, bytes, pos,\n"
           "           file: the key references, as lct keys lists them\n"
           "  spans    span, t_start, t_end, duration, start_offset,\n"
           "           end_offset, keys, file: LMCache's paired calls,\n"
           "           paired as lct stat pairs them\n"
           "Functions: percentile(X, P) (P from 0 to 100, interpolated as\n"
           "SQLite's percentile extension), median(X), lct_hex(TEXT).\n"
           "QUERY may hold several statements; each one's rows are printed;\n"
           "one that opens with an SQL comment (--) is a query, not an\n"
           "option.\n"
           "idx bounds jump through a row cache; qualname = and t_mono /\n"
           "t_wall ranges drop rows before args are rendered.\n"
           "\n"
           "  -q       no warnings about damaged files, no progress\n"
           "  -j N     threads of the row cache's pass over a file (default:\n"
           "           one per usable CPU)\n"
           "  --csv    CSV with a header line (RFC 4180)\n"
           "  --json   one JSON object per row\n"
           "  -f QUERYFILE  read the query from QUERYFILE (- for standard\n"
           "           input) instead of the first operand\n"
           "  -h, --help  this text\n"
           "\n"
           "exit status: 0 ok, 1 file refused or query failed, 2 usage or\n"
           "bad query, 3 a file was damaged (rows as the reference reader\n"
           "yields them).\n");
}

/* A real for the aligned table: rounded to 6 decimals (microseconds,
 * for times), trailing zeros dropped; the very small and very large as
 * JSON writes them (every digit), so no value prints as 0 or loses its
 * exponent. */
static size_t rounded_double(double d, char *buf)
{
    double a = fabs(d);
    if (!isfinite(d) || (a > 0 && a < 1e-6) || a >= 1e15)
        return lct_json_format_double(d, buf);
    int n = snprintf(buf, LCT_DOUBLE_BUFSIZE, "%.6f", d);
    while (n > 2 && buf[n - 1] == '0' && buf[n - 2] != '.')
        n--;
    buf[n] = '\0';
    if (strcmp(buf, "-0.0") == 0) /* a tiny negative, rounded */
        memmove(buf, buf + 1, (size_t)n--);
    return (size_t)n;
}

/* One cell as text: NULL empty, numbers as JSON writes them (reals
 * rounded by rounded_double for the table), blobs hex. */
static char *cell_text(sqlite3_stmt *st, int col, size_t *len, bool table)
{
    char buf[LCT_DOUBLE_BUFSIZE];
    const unsigned char *p;
    size_t n;
    char *out;
    switch (sqlite3_column_type(st, col)) {
    case SQLITE_NULL:
        *len = 0;
        return strdup("");
    case SQLITE_FLOAT:
        *len = table ? rounded_double(sqlite3_column_double(st, col), buf)
                     : lct_json_format_double(sqlite3_column_double(st, col),
                                              buf);
        return strndup(buf, *len);
    case SQLITE_BLOB:
        p = sqlite3_column_blob(st, col);
        n = (size_t)sqlite3_column_bytes(st, col);
        if (!(out = malloc(2 * n + 1)))
            return NULL;
        for (size_t i = 0; i < n; i++)
            snprintf(out + 2 * i, 3, "%02x", p[i]);
        out[2 * n] = 0;
        *len = 2 * n;
        return out;
    default: /* integers and text, as SQLite renders them */
        p = sqlite3_column_text(st, col);
        *len = (size_t)sqlite3_column_bytes(st, col);
        if (!(out = malloc(*len + 1)))
            return NULL;
        memcpy(out, p ? (const char *)p : "", *len);
        out[*len] = 0;
        return out;
    }
}

static void put_json_cell(sqlite3_stmt *st, int col)
{
    switch (sqlite3_column_type(st, col)) {
    case SQLITE_NULL: fputs("null", stdout); break;
    case SQLITE_INTEGER:
        printf("%lld", (long long)sqlite3_column_int64(st, col));
        break;
    case SQLITE_FLOAT: tool_put_json_double(sqlite3_column_double(st, col));
        break;
    default: {
        size_t len;
        char *text = cell_text(st, col, &len, false);
        if (!text)
            tool_usage_error("sql", "out of memory");
        tool_put_json_str(text, len);
        free(text);
    }
    }
}

static void put_json_row(sqlite3_stmt *st)
{
    int n = sqlite3_column_count(st);
    fputc('{', stdout);
    for (int i = 0; i < n; i++) {
        const char *name = sqlite3_column_name(st, i);
        if (i)
            fputc(',', stdout);
        tool_put_json_str(name, strlen(name));
        fputc(':', stdout);
        put_json_cell(st, i);
    }
    fputs("}\n", stdout);
}

static void put_csv_row(sqlite3_stmt *st, bool names)
{
    int n = sqlite3_column_count(st);
    for (int i = 0; i < n; i++) {
        size_t len;
        char *text = names ? strdup(sqlite3_column_name(st, i))
                           : cell_text(st, i, &len, false);
        if (!text)
            tool_usage_error("sql", "out of memory");
        if (names)
            len = strlen(text);
        if (i)
            fputc(',', stdout);
        tool_put_csv(stdout, text, len);
        free(text);
    }
    fputs("\r\n", stdout);
}

static int points(const char *s)
{
    int n = 0;
    for (; *s; s++)
        n += ((unsigned char)*s & 0xc0) != 0x80;
    return n;
}

/* Aligned columns: the widths of the header and the first rows. */
typedef struct table_out {
    int ncols;
    int *width;
    char **cells; /* MEASURED_ROWS rows held back while measuring */
    int held;
    bool printed_head;
} table_out;

/* Cells are held as shown: escaped (a NUL in a text as \000, not the
 * end of it), so widths are those of what is printed. */
static void table_put_row(table_out *t, char *const *cells)
{
    for (int i = 0; i < t->ncols; i++) {
        if (i)
            fputs("  ", stdout);
        fputs(cells[i], stdout);
        for (int w = points(cells[i]); i + 1 < t->ncols && w < t->width[i];
             w++)
            fputc(' ', stdout);
    }
    fputc('\n', stdout);
}

/* s[0..len) as tool_put_vis prints it, NUL-terminated; NULL if out of
 * memory. */
static char *shown(const char *s, size_t len)
{
    char *text = NULL;
    size_t size;
    FILE *m = open_memstream(&text, &size);
    if (!m)
        return NULL;
    tool_put_vis(m, s, len);
    if (fclose(m) != 0) {
        free(text);
        return NULL;
    }
    return text;
}

static void table_flush(table_out *t, sqlite3_stmt *st)
{
    if (!t->printed_head) {
        char **names = calloc((size_t)t->ncols, sizeof *names);
        if (!names)
            tool_usage_error("sql", "out of memory");
        for (int i = 0; i < t->ncols; i++) {
            const char *name = sqlite3_column_name(st, i);
            if (!(names[i] = shown(name, strlen(name))))
                tool_usage_error("sql", "out of memory");
        }
        table_put_row(t, names);
        for (int i = 0; i < t->ncols; i++)
            free(names[i]);
        for (int i = 0; i < t->ncols; i++) {
            for (int w = 0; w < t->width[i]; w++)
                fputc('-', stdout);
            fputs(i + 1 < t->ncols ? "  " : "\n", stdout);
        }
        free(names);
        t->printed_head = true;
    }
    for (int r = 0; r < t->held; r++) {
        table_put_row(t, t->cells + (size_t)r * (size_t)t->ncols);
        for (int i = 0; i < t->ncols; i++)
            free(t->cells[(size_t)r * (size_t)t->ncols + (size_t)i]);
    }
    t->held = 0;
}

/* The columns and the widths of their names. */
static void table_init(table_out *t, sqlite3_stmt *st)
{
    if (!t->width) {
        t->ncols = sqlite3_column_count(st);
        t->width = calloc((size_t)t->ncols, sizeof *t->width);
        t->cells = calloc((size_t)t->ncols * MEASURED_ROWS, sizeof *t->cells);
        if (!t->width || !t->cells)
            tool_usage_error("sql", "out of memory");
        for (int i = 0; i < t->ncols; i++) {
            const char *name = sqlite3_column_name(st, i);
            char *text = shown(name, strlen(name));
            if (!text)
                tool_usage_error("sql", "out of memory");
            t->width[i] = points(text);
            free(text);
        }
    }
}

static void table_row(table_out *t, sqlite3_stmt *st)
{
    table_init(t, st);
    char **row = t->cells + (size_t)t->held * (size_t)t->ncols;
    for (int i = 0; i < t->ncols; i++) {
        size_t len;
        char *text = cell_text(st, i, &len, true);
        if (!text || !(row[i] = shown(text, len)))
            tool_usage_error("sql", "out of memory");
        free(text);
        if (!t->printed_head && points(row[i]) > t->width[i])
            t->width[i] = points(row[i]);
    }
    if (++t->held == MEASURED_ROWS || t->printed_head)
        table_flush(t, st);
}

/* Step one prepared statement to its end, printing its rows. */
static bool run_statement(sqlite3 *db, sqlite3_stmt *st, const tool_args *a)
{
    table_out table = {0};
    bool first = true;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        if (a->json)
            put_json_row(st);
        else if (a->csv) {
            if (first)
                put_csv_row(st, true);
            put_csv_row(st, false);
        } else
            table_row(&table, st);
        first = false;
    }
    /* No rows: the columns are still said, as a table with no rows. */
    if (rc == SQLITE_DONE && first && sqlite3_column_count(st) > 0) {
        if (a->csv)
            put_csv_row(st, true);
        else if (!a->json)
            table_init(&table, st);
    }
    if (table.width && (table.held || !table.printed_head))
        table_flush(&table, st);
    free(table.width);
    free(table.cells);
    if (rc != SQLITE_DONE)
        fprintf(stderr, "%s: sql: %s\n", tool_name, sqlite3_errmsg(db));
    return rc == SQLITE_DONE;
}

/* CREATE VIRTUAL TABLE name USING module('f1', 'f2', ...). */
static void create_table(sqlite3 *db, const char *name, const char *module,
                         char **files, int nfiles)
{
    char *sql = sqlite3_mprintf("CREATE VIRTUAL TABLE %s USING %s(", name,
                                module);
    for (int i = 0; sql && i < nfiles; i++)
        sql = sqlite3_mprintf("%z%s%Q", sql, i ? ", " : "", files[i]);
    sql = sql ? sqlite3_mprintf("%z)", sql) : NULL;
    if (!sql)
        tool_usage_error("sql", "out of memory");
    char *msg = NULL;
    if (sqlite3_exec(db, sql, NULL, NULL, &msg) != SQLITE_OK) {
        /* The module's message names the file and what is wrong. */
        fprintf(stderr, "%s: %s\n", tool_name, msg ? msg : sqlite3_errmsg(db));
        sqlite3_free(msg);
        sqlite3_free(sql);
        sqlite3_close(db);
        exit(EXIT_REFUSED);
    }
    sqlite3_free(sql);
}

static sqlite3 *open_database(char **files, int nfiles, unsigned jobs,
                              sql_run *run)
{
    for (int i = 0; i < nfiles; i++)
        if (strcmp(files[i], "-") == 0)
            tool_usage_error("sql", "'-' cannot be queried: a query may "
                             "read a file more than once; save it first");
    sqlite3 *db;
    if (sqlite3_open(":memory:", &db) != SQLITE_OK)
        tool_usage_error("sql", "cannot open an in-memory database");
    lct_sqlite_options opts = {.log = on_warning, .log_ctx = run,
                               .threads = jobs, .progress = on_progress,
                               .progress_ctx = run};
    if (lct_sqlite_register(db, &opts) != SQLITE_OK)
        tool_usage_error("sql", "%s", sqlite3_errmsg(db));
    create_table(db, "records", "lct_records", files, nfiles);
    create_table(db, "header", "lct_header", files, nfiles);
    create_table(db, "keys", "lct_keys", files, nfiles);
    create_table(db, "spans", "lct_spans", files, nfiles);
    return db;
}

/* -f PATH: the query's file ("-": standard input). */
static const char *query_path;

static void sql_option(void *ctx, int c, const char *arg)
{
    (void)ctx;
    if (c == 'f')
        query_path = arg;
}

int cmd_sql(int argc, char **argv)
{
    static const tool_cmd cmd = {.name = "sql",
                                 .shared = TOOL_Q | TOOL_J | TOOL_JSON |
                                           TOOL_CSV,
                                 .own_short = "f:",
                                 .on_option = sql_option,
                                 .help = help,
                                 .operand = "QUERY",
                                 .min_operands = 1};
    tool_sql_protect_comments(argc, argv);
    tool_args a;
    tool_parse_args(&cmd, argc, argv, &a);
    char *query_text = query_path ? tool_sql_read_query(query_path) : NULL;
    int first_file = query_path ? 0 : 1;
    if (a.noperands - first_file < 1)
        tool_usage_error("sql", "missing FILE");
    sql_run run = {.quiet = a.quiet};
    sqlite3 *db = open_database(a.operands + first_file,
                                a.noperands - first_file, a.jobs, &run);
    const char *sql = query_text ? query_text : a.operands[0];
    bool ok = true, printed = false;
    while (ok && *sql) {
        sqlite3_stmt *st = NULL;
        const char *rest;
        if (sqlite3_prepare_v2(db, sql, -1, &st, &rest) != SQLITE_OK)
            tool_usage_error("sql", "%s", sqlite3_errmsg(db));
        sql = rest;
        if (!st)
            continue; /* a comment or blank tail */
        if (printed && !a.json && !a.csv && sqlite3_column_count(st))
            fputc('\n', stdout);
        printed |= sqlite3_column_count(st) > 0;
        ok = run_statement(db, st, &a);
        tool_progress_end(&run.progress);
        run.progress_path = NULL;
        sqlite3_finalize(st);
    }
    sqlite3_close(db);
    free(query_text);
    tool_finish_stdout();
    return !ok || run.shrank ? EXIT_REFUSED : run.damaged ? EXIT_DAMAGED : EXIT_OK;
}
