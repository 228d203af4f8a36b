/*
 * test_sql.c - the SQLite modules through SQLite's C API: every fixture's
 * rows and header against its expectation, refusals, push-down that never
 * changes an answer (each pushed query against the same query written so
 * SQLite cannot push it down), the record index against a scan on a
 * damaged trace, warnings once per file, several files, a growing file,
 * and the same answers whichever way a pass reads a large file.
 */
#define _GNU_SOURCE /* memmem */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <time.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "compare.h"
#include "files.h"
#include "json.h"
#include "lct_sqlite.h"
#include "base/bigmem_internal.h"
#include "read/source_internal.h"

TestSuite(sql, .timeout = 120);

static void count_warning(void *ctx, const lct_reader *r,
                          lct_warning_kind kind, uint64_t offset,
                          const char *message)
{
    (void)r, (void)kind, (void)offset, (void)message;
    (*(int *)ctx)++;
}

static sqlite3 *new_db(int *warnings)
{
    sqlite3 *db;
    cr_assert_eq(sqlite3_open(":memory:", &db), SQLITE_OK);
    lct_sqlite_options o = {.log = count_warning, .log_ctx = warnings};
    cr_assert_eq(lct_sqlite_register(db, &o), SQLITE_OK);
    return db;
}

/* Every row of sql as "a|b|c\n" lines; NULL (with *err) on an error. */
static char *rows(sqlite3 *db, const char *sql, char **err)
{
    sqlite3_stmt *st;
    char *out = sqlite3_mprintf("%s", "");
    if (err)
        *err = NULL;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
        if (err)
            *err = sqlite3_mprintf("%s", sqlite3_errmsg(db));
        sqlite3_free(out);
        return NULL;
    }
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        for (int i = 0; i < sqlite3_column_count(st); i++)
            out = sqlite3_mprintf("%z%s%s", out, i ? "|" : "",
                                  (const char *)sqlite3_column_text(st, i));
        out = sqlite3_mprintf("%z\n", out);
    }
    if (rc != SQLITE_DONE) {
        if (err)
            *err = sqlite3_mprintf("%s", sqlite3_errmsg(db));
        sqlite3_free(out);
        out = NULL;
    }
    sqlite3_finalize(st);
    return out;
}

static char *rowsf(sqlite3 *db, const char *fmt, const char *path)
{
    char *sql = sqlite3_mprintf(fmt, path);
    char *err;
    char *out = rows(db, sql, &err);
    cr_assert(out, "%s: %s", sql, err);
    sqlite3_free(sql);
    return out;
}

static bool jv_equal(const jv *a, const jv *b)
{
    if (a->t != b->t)
        return (a->t == J_INT || a->t == J_FLOAT) &&
               (b->t == J_INT || b->t == J_FLOAT) &&
               (a->t == J_FLOAT ? a->d : a->neg ? (double)a->i : (double)a->u) ==
                   (b->t == J_FLOAT ? b->d : b->neg ? (double)b->i : (double)b->u);
    switch (a->t) {
    case J_NULL: return true;
    case J_BOOL: return a->b == b->b;
    case J_INT: return a->neg == b->neg && a->i == b->i && a->u == b->u;
    case J_FLOAT: return a->d == b->d;
    case J_STR: return a->slen == b->slen && !memcmp(a->s, b->s, a->slen);
    default: break;
    }
    if (a->n != b->n)
        return false;
    for (size_t i = 0; i < a->n; i++) {
        if (a->t == J_OBJ && (a->keylens[i] != b->keylens[i] ||
                              memcmp(a->keys[i], b->keys[i], a->keylens[i])))
            return false;
        if (!jv_equal(&a->items[i], &b->items[i]))
            return false;
    }
    return true;
}

static char *fixture(const char *name, const char *ext)
{
    return sqlite3_mprintf("%s/%s.%s", LCT_FIXTURES_DIR, name, ext);
}

static const char *fixtures[] = {
    "bad_magic", "clean", "empty", "events", "format_v2", "header_only",
    "huge_length", "malformed_mixed", "schema_v1_readable", "schema_v3",
    "trunc_header_body", "trunc_header_prefix", "trunc_tail_2",
    "trunc_tail_74"};

static void check_records(sqlite3 *db, const char *path, const jv *want)
{
    sqlite3_stmt *st;
    char *sql = sqlite3_mprintf("SELECT idx, t_mono, t_wall, qualname, args "
                                "FROM lct_records(%Q)", path);
    cr_assert_eq(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
    const jv *recs = json_get(want, "records");
    size_t n = 0;
    while (sqlite3_step(st) == SQLITE_ROW) {
        cr_assert_lt(n, recs->n, "%s: more rows than records", path);
        const jv *e = &recs->items[n];
        cr_expect_eq(sqlite3_column_int64(st, 0), (sqlite3_int64)n);
        cr_expect_eq(sqlite3_column_double(st, 1), json_get(e, "t_mono")->d);
        cr_expect_eq(sqlite3_column_double(st, 2), json_get(e, "t_wall")->d);
        cr_expect_str_eq((const char *)sqlite3_column_text(st, 3),
                         json_get(e, "qualname")->s);
        const char *args = (const char *)sqlite3_column_text(st, 4);
        jv *got = json_parse(args, strlen(args));
        cr_assert(got, "%s row %zu: args are not JSON: %s", path, n, args);
        cr_expect(jv_equal(got, json_get(e, "args")), "%s row %zu args: %s",
                  path, n, args);
        json_free(got);
        n++;
    }
    cr_expect_eq(n, recs->n, "%s: %zu rows, %zu records", path, n, recs->n);
    sqlite3_finalize(st);
    sqlite3_free(sql);
}

static void check_header(sqlite3 *db, const char *path, const jv *want)
{
    const jv *h = json_get(want, "header");
    char *expect = sqlite3_mprintf(
        "%s|%lld|%!.17g|%!.17g|%s|LMCT|%s\n", json_get(h, "level")->s,
        (long long)json_get(h, "trace_schema_version")->u,
        json_number(json_get(h, "t_mono_start")), json_number(json_get(h, "t_wall_start")),
        json_get(h, "sm_config_digest")->s, path);
    /* SQLite prints reals its own way: compare through the same printf. */
    char *got = rowsf(db, "SELECT level, trace_schema_version, "
                          "printf('%%!.17g', t_mono_start), "
                          "printf('%%!.17g', t_wall_start), "
                          "sm_config_digest, magic, file FROM lct_header(%Q)",
                      path);
    cr_expect_str_eq(got, expect, "%s header", path);
    sqlite3_free(got);
    sqlite3_free(expect);
}

Test(sql, every_fixture_as_the_reference_reads_it)
{
    int warnings = 0;
    sqlite3 *db = new_db(&warnings);
    for (size_t i = 0; i < sizeof fixtures / sizeof *fixtures; i++) {
        char *path = fixture(fixtures[i], "lct");
        char *epath = fixture(fixtures[i], "expect.json");
        size_t len;
        char *text = read_whole_file(epath, &len);
        jv *want = json_parse(text, len);
        cr_assert(want);
        const jv *open_error = json_get(want, "open_error");
        if (open_error->t == J_STR) {
            char *sql = sqlite3_mprintf("SELECT * FROM lct_records(%Q)", path);
            char *err;
            cr_expect_null(rows(db, sql, &err), "%s opened", path);
            cr_expect(err && strstr(err, path), "%s: %s", path, err);
            sqlite3_free(err);
            sqlite3_free(sql);
        } else {
            check_records(db, path, want);
            check_header(db, path, want);
        }
        json_free(want);
        free(text);
        sqlite3_free(path);
        sqlite3_free(epath);
    }
    sqlite3_close(db);
}

/* MARK: push-down never changes an answer */

/* A trace of n records (qualnames a.op, b.op, A.OP in turn; t_mono = i),
 * every `every`-th made malformed (invalid UTF-8 in its args), so record
 * numbers and frame numbers part ways.  The path is malloc'd. */
static char *damaged_trace(int n, int every)
{
    char *path;
    lct_writer *w = tmp_trace_writer(&path);
    static const char *names[] = {"a.op", "b.op", "A.OP"};
    for (int i = 0; i < n; i++) {
        lct_writer_record_begin(w, i, 1.7e9 + i, names[i % 3], 4);
        lct_writer_map(w, 2);
        lct_writer_cstr(w, "i");
        lct_writer_int(w, i);
        lct_writer_cstr(w, "s");
        lct_writer_cstr(w, every && i % every == every - 1 ? "#DAMAGE#"
                                                           : "intact!!");
        cr_assert_eq(lct_writer_end(w, NULL), LCT_OK);
    }
    lct_writer_close(w);
    size_t len;
    char *data = read_whole_file(path, &len);
    for (char *p = data; (p = memmem(p, len - (size_t)(p - data), "#DAMAGE#", 8));)
        *p = (char)0xff;
    FILE *f = fopen(path, "wb");
    cr_assert(f && fwrite(data, 1, len, f) == len);
    fclose(f);
    free(data);
    return path;
}

static void same_rows(sqlite3 *db, const char *path, const char *pushed,
                      const char *plain)
{
    char *a = rowsf(db, pushed, path);
    char *b = rowsf(db, plain, path);
    cr_expect_str_eq(a, b, "%s\nand\n%s\ndiffer", pushed, plain);
    sqlite3_free(a);
    sqlite3_free(b);
}

#define FROM " FROM lct_records(%Q) "

/* With the guard, a pass over a file of 16 MiB or more is mapped or
 * streamed as the library's probe decides (LCT_ONE_PASS): forced each
 * way, the row cache, a scan of args and the keys table answer alike. */
Test(sql, a_large_file_answers_alike_mapped_or_streamed)
{
    cr_assert_eq(lct_guard_install(NULL), LCT_OK);
    char *path = damaged_trace(420000, 99991);
    struct stat info;
    cr_assert_eq(stat(path, &info), 0);
    cr_assert_gt(info.st_size, 16 << 20, "%lld bytes", (long long)info.st_size);
    static const char *queries[] = {
        "SELECT qualname, count(*), max(t_mono)" FROM "GROUP BY qualname",
        "SELECT count(*), sum(length(args)), max(idx)" FROM,
        "SELECT idx, offset, args" FROM "WHERE idx = 400000",
        "SELECT count(*)" FROM "WHERE args LIKE '%%intact%%'"};
    char *got[2][4];
    int warnings[2] = {0, 0};
    for (int way = 0; way < 2; way++) {
        lct__one_pass_decide(way);
        sqlite3 *db = new_db(&warnings[way]);
        for (int q = 0; q < 4; q++)
            got[way][q] = rowsf(db, queries[q], path);
        sqlite3_close(db);
    }
    lct__one_pass_decide(-1);
    cr_expect_str_eq(got[0][0], "A.OP|139999|419999.0\n"
                                "a.op|139998|419997.0\n"
                                "b.op|139999|419998.0\n");
    for (int q = 0; q < 4; q++)
        cr_expect_str_eq(got[1][q], got[0][q], "%s", queries[q]);
    cr_expect_eq(warnings[0], 4, "the damaged frames");
    cr_expect_eq(warnings[1], warnings[0]);
    for (int way = 0; way < 2; way++)
        for (int q = 0; q < 4; q++)
            sqlite3_free(got[way][q]);
    unlink(path);
    free(path);
}

/* The row cache keeps every record's qualname and number right on one
 * thread or two (one thread's rows are kept as they are, two threads'
 * are joined, their names renumbered), in 4 KiB or 2 MiB pages (the rows
 * grow past 2 MiB). */
Test(sql, row_cache_names_every_record_right_however_it_was_built)
{
    enum { NAMES = 150, EACH = 600 };
    char *path;
    lct_writer *w = tmp_trace_writer(&path);
    char name[96];
    for (int i = 0; i < NAMES * EACH; i++) {
        snprintf(name, sizeof name,
                 "lmcache.v1.distributed.storage_manager.StorageManager.op%03d",
                 i % NAMES);
        lct_writer_record_begin(w, i, 1.7e9 + i, name, strlen(name));
        lct_writer_map(w, 0);
        cr_assert_eq(lct_writer_end(w, NULL), LCT_OK);
    }
    lct_writer_close(w);
    char *want = sqlite3_mprintf("%s", "");
    for (int k = 0; k < NAMES; k++)
        want = sqlite3_mprintf("%z...op%03d|%d|%d|%d\n", want, k, EACH, k,
                               k + NAMES * (EACH - 1));
    for (int huge = 0; huge < 2; huge++)
        for (unsigned threads = 1; threads <= 2; threads++) {
            lct__huge_pages_decide(huge);
            sqlite3 *db;
            cr_assert_eq(sqlite3_open(":memory:", &db), SQLITE_OK);
            lct_sqlite_options o = {.threads = threads};
            cr_assert_eq(lct_sqlite_register(db, &o), SQLITE_OK);
            char *got = rowsf(db, "SELECT '...' || substr(qualname, 55), "
                                  "count(*), min(idx), max(idx)" FROM
                                  "GROUP BY qualname", path);
            cr_expect_str_eq(got, want, "%u thread(s), huge %d", threads,
                             huge);
            sqlite3_free(got);
            sqlite3_close(db);
        }
    lct__huge_pages_decide(-1);
    sqlite3_free(want);
    unlink(path);
    free(path);
}

Test(sql, record_index_equals_a_scan_on_a_damaged_trace)
{
    int warnings = 0;
    sqlite3 *db = new_db(&warnings);
    char *path = damaged_trace(6000, 997);
    char *count = rowsf(db, "SELECT count(*)" FROM, path);
    cr_expect_str_eq(count, "5994\n"); /* 6 frames skipped */
    cr_expect_eq(warnings, 6);
    sqlite3_free(count);
    /* idx >= 4500 is far in: the record index is built here. */
    same_rows(db, path, "SELECT idx, offset, t_mono, args" FROM "WHERE idx >= 4500",
              "SELECT idx, offset, t_mono, args" FROM "WHERE idx + 0 >= 4500");
    same_rows(db, path, "SELECT idx, offset, args" FROM "WHERE idx = 5000",
              "SELECT idx, offset, args" FROM "WHERE idx + 0 = 5000");
    same_rows(db, path, "SELECT idx, offset" FROM "WHERE rowid = 5001",
              "SELECT idx, offset" FROM "WHERE rowid + 0 = 5001");
    same_rows(db, path, "SELECT idx" FROM "WHERE idx > 4999.5 AND idx < 5003.2",
              "SELECT idx" FROM "WHERE idx + 0 > 4999.5 AND idx + 0 < 5003.2");
    same_rows(db, path, "SELECT idx, offset" FROM "WHERE idx BETWEEN 990 AND 1000",
              "SELECT idx, offset" FROM "WHERE idx + 0 BETWEEN 990 AND 1000");
    same_rows(db, path, "SELECT idx" FROM "WHERE idx < 3 OR idx = 5993",
              "SELECT idx" FROM "WHERE idx + 0 < 3 OR idx + 0 = 5993");
    char *none = rowsf(db, "SELECT idx" FROM "WHERE idx = -1 OR idx >= 1e30 "
                           "OR idx = 5994", path);
    cr_expect_str_eq(none, "");
    sqlite3_free(none);
    /* The record at idx 996 is the frame after the first skipped one. */
    char *after = rowsf(db, "SELECT json_extract(args, '$.i')" FROM
                            "WHERE idx = 996", path);
    cr_expect_str_eq(after, "997\n");
    sqlite3_free(after);
    /* Rows from the row cache (no args read) and from the file agree,
     * filters included. */
    same_rows(db, path,
              "SELECT idx, offset, t_mono, qualname" FROM
              "WHERE qualname = 'b.op' AND t_mono > 10",
              "SELECT idx, offset, t_mono, qualname" FROM
              "WHERE qualname = 'b.op' AND t_mono > 10 AND length(args) > 0");
    char *plan = rowsf(db, "EXPLAIN QUERY PLAN SELECT qualname, count(*)"
                           FROM "GROUP BY 1", path);
    cr_expect(strstr(plan, "row cache"), "%s", plan);
    sqlite3_free(plan);
    cr_expect_eq(warnings, 6, "a second pass repeated warnings");
    sqlite3_close(db);
    unlink(path);
    free(path);
}

/* GROUP BY, ORDER BY and DISTINCT on qualname take rows grouped from the
 * row cache, and SQLite sorts nothing: every answer, row order included,
 * is the one SQLite's own sort gives (the same query on +qualname, which
 * SQLite cannot hand to the table). */
static void grouped_as_sorted(sqlite3 *db, const char *path)
{
    static const char *const queries[][2] = {
        {"SELECT qualname, count(*), max(t_mono), min(idx)" FROM
         "GROUP BY qualname",
         "SELECT qualname, count(*), max(t_mono), min(idx)" FROM
         "GROUP BY +qualname"},
        {"SELECT idx, qualname, offset" FROM "ORDER BY qualname",
         "SELECT idx, qualname, offset" FROM "ORDER BY +qualname"},
        {"SELECT idx, qualname" FROM "ORDER BY qualname DESC",
         "SELECT idx, qualname" FROM "ORDER BY +qualname DESC"},
        {"SELECT DISTINCT qualname" FROM, "SELECT DISTINCT +qualname" FROM},
        {"SELECT DISTINCT qualname" FROM "ORDER BY qualname DESC",
         "SELECT DISTINCT +qualname" FROM "ORDER BY 1 DESC"},
        {"SELECT idx, qualname" FROM "WHERE idx BETWEEN 2990 AND 3010 "
         "ORDER BY qualname",
         "SELECT idx, qualname" FROM "WHERE idx + 0 BETWEEN 2990 AND 3010 "
         "ORDER BY +qualname"},
        {"SELECT qualname, count(*)" FROM "WHERE qualname = 'b.op' "
         "AND t_mono > 100 GROUP BY qualname",
         "SELECT qualname, count(*)" FROM "WHERE qualname || '' = 'b.op' "
         "AND t_mono > 100 GROUP BY +qualname"},
        {"SELECT qualname, sum(json_extract(args, '$.i'))" FROM
         "GROUP BY qualname ORDER BY qualname DESC",
         "SELECT qualname, sum(json_extract(args, '$.i'))" FROM
         "GROUP BY +qualname ORDER BY +qualname DESC"},
    };
    for (size_t i = 0; i < sizeof queries / sizeof *queries; i++)
        same_rows(db, path, queries[i][0], queries[i][1]);
}

Test(sql, qualname_groups_come_from_the_row_cache_in_sqlites_order)
{
    int warnings = 0;
    sqlite3 *db = new_db(&warnings);
    char *path = damaged_trace(6000, 997);
    char *plan = rowsf(db, "EXPLAIN QUERY PLAN SELECT qualname, count(*)"
                           FROM "GROUP BY qualname", path);
    cr_expect(strstr(plan, "grouped by qualname"), "%s", plan);
    cr_expect(!strstr(plan, "TEMP B-TREE"), "%s", plan);
    sqlite3_free(plan);
    grouped_as_sorted(db, path);
    cr_expect_eq(warnings, 6, "each skipped frame once");
    /* Without the SIGBUS guard, rows with args come streamed: a grouped
     * read of them would reach the mapping out of order. */
    plan = rowsf(db, "EXPLAIN QUERY PLAN SELECT args" FROM
                     "ORDER BY qualname", path);
    cr_expect(!strstr(plan, "grouped by qualname"), "%s", plan);
    cr_expect(strstr(plan, "TEMP B-TREE"), "%s", plan);
    sqlite3_free(plan);
    cr_assert_eq(lct_guard_install(NULL), LCT_OK);
    plan = rowsf(db, "EXPLAIN QUERY PLAN SELECT args" FROM
                     "ORDER BY qualname DESC", path);
    cr_expect(strstr(plan, "grouped by qualname descending"), "%s", plan);
    sqlite3_free(plan);
    grouped_as_sorted(db, path);
    sqlite3_close(db);
    unlink(path);
    free(path);
}

Test(sql, qualname_and_time_bounds_keep_sqlite_semantics)
{
    int warnings = 0;
    sqlite3 *db = new_db(&warnings);
    char *path = damaged_trace(300, 0);
    same_rows(db, path, "SELECT idx" FROM "WHERE qualname = 'a.op'",
              "SELECT idx" FROM "WHERE qualname || '' = 'a.op'");
    same_rows(db, path,
              "SELECT idx" FROM "WHERE qualname = 'a.op' COLLATE NOCASE",
              "SELECT idx" FROM "WHERE lower(qualname) = 'a.op'");
    same_rows(db, path, "SELECT idx" FROM "WHERE t_mono > 100 AND t_mono <= 150",
              "SELECT idx" FROM "WHERE t_mono + 0 > 100 AND t_mono + 0 <= 150");
    same_rows(db, path, "SELECT idx" FROM "WHERE t_mono = 42",
              "SELECT idx" FROM "WHERE t_mono + 0 = 42");
    same_rows(db, path,
              "SELECT idx" FROM "WHERE t_wall >= 1700000010.5 AND "
              "t_wall < 1700000020 AND qualname = 'b.op'",
              "SELECT idx" FROM "WHERE t_wall + 0 >= 1700000010.5 AND "
              "t_wall + 0 < 1700000020 AND qualname || '' = 'b.op'");
    /* A text operand: the column's REAL affinity makes '1' a number. */
    char *all = rowsf(db, "SELECT count(*)" FROM "WHERE t_wall > '1'", path);
    cr_expect_str_eq(all, "300\n");
    sqlite3_free(all);
    char *none = rowsf(db, "SELECT count(*)" FROM "WHERE qualname = 7", path);
    cr_expect_str_eq(none, "0\n");
    sqlite3_free(none);
    sqlite3_close(db);
    unlink(path);
    free(path);
}

Test(sql, explain_query_plan_shows_what_is_pushed_down)
{
    int warnings = 0;
    sqlite3 *db = new_db(&warnings);
    char *path = fixture("clean", "lct");
    char *plan = rowsf(db, "EXPLAIN QUERY PLAN SELECT args" FROM
                           "WHERE idx = 3 AND qualname = 'x' AND t_mono > 1",
                       path);
    cr_expect(strstr(plan, "idx="), "%s", plan);
    cr_expect(strstr(plan, "qualname="), "%s", plan);
    cr_expect(strstr(plan, "t_mono>"), "%s", plan);
    sqlite3_free(plan);
    plan = rowsf(db, "EXPLAIN QUERY PLAN SELECT args" FROM
                     "WHERE qualname LIKE 'x%%'", path);
    cr_expect(!strstr(plan, "qualname="), "%s", plan);
    sqlite3_free(plan);
    sqlite3_free(path);
    sqlite3_close(db);
}

/* MARK: files */

Test(sql, warnings_once_per_file_and_connection)
{
    int warnings = 0;
    sqlite3 *db = new_db(&warnings);
    char *mixed = fixture("malformed_mixed", "lct");
    char *cut = fixture("trunc_tail_2", "lct");
    for (int pass = 0; pass < 3; pass++) {
        sqlite3_free(rowsf(db, "SELECT count(args)" FROM, mixed));
        sqlite3_free(rowsf(db, "SELECT count(*)" FROM, cut));
    }
    cr_expect_eq(warnings, 5 + 1);
    sqlite3_free(mixed);
    sqlite3_free(cut);
    sqlite3_close(db);
}

Test(sql, several_files_in_one_table)
{
    int warnings = 0;
    sqlite3 *db = new_db(&warnings);
    char *a = fixture("clean", "lct"), *b = fixture("events", "lct");
    char *sql = sqlite3_mprintf(
        "CREATE VIRTUAL TABLE r USING lct_records(%Q, %Q);"
        "CREATE VIRTUAL TABLE h USING lct_header(%Q, \"%w\")", a, b, a, b);
    cr_assert_eq(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK, "%s",
                 sqlite3_errmsg(db));
    char *got = rows(db, "SELECT count(*), count(DISTINCT rowid), "
                         "sum(file = (SELECT file FROM h WHERE level = 'events'))"
                         " FROM r", NULL);
    cr_expect_str_eq(got, "48|48|8\n");
    sqlite3_free(got);
    got = rows(db, "SELECT idx, file = (SELECT min(file) FROM h WHERE "
                   "level = 'events') FROM r WHERE idx = 7", NULL);
    cr_expect_str_eq(got, "7|0\n7|1\n");
    sqlite3_free(got);
    got = rows(db, "SELECT count(*) FROM h", NULL);
    cr_expect_str_eq(got, "2\n");
    sqlite3_free(got);
    sqlite3_free(sql);
    sqlite3_free(a);
    sqlite3_free(b);
    sqlite3_close(db);
}

Test(sql, refusals_name_the_file_or_the_missing_argument)
{
    int warnings = 0;
    sqlite3 *db = new_db(&warnings);
    char *err;
    cr_expect_null(rows(db, "SELECT * FROM lct_records", &err));
    cr_expect(err && strstr(err, "name a file"), "%s", err);
    sqlite3_free(err);
    cr_expect_null(rows(db, "SELECT * FROM lct_header('/nonexistent.lct')",
                        &err));
    cr_expect(err && strstr(err, "/nonexistent.lct"), "%s", err);
    sqlite3_free(err);
    cr_expect_null(rows(db, "SELECT * FROM lct_records('/dev/null')", &err));
    cr_expect(err != NULL);
    sqlite3_free(err);
    cr_expect_neq(sqlite3_exec(db, "CREATE VIRTUAL TABLE t USING "
                                   "lct_records('/nonexistent.lct')",
                               NULL, NULL, NULL),
                  SQLITE_OK);
    cr_expect(strstr(sqlite3_errmsg(db), "/nonexistent.lct"), "%s",
              sqlite3_errmsg(db));
    sqlite3_close(db);
}

Test(sql, record_index_of_every_fixture_equals_a_scan)
{
    int warnings = 0;
    sqlite3 *db = new_db(&warnings);
    for (size_t i = 0; i < sizeof fixtures / sizeof *fixtures; i++) {
        char *path = fixture(fixtures[i], "lct");
        char *sql = sqlite3_mprintf("SELECT * FROM lct_header(%Q)", path);
        char *err;
        char *ok = rows(db, sql, &err);
        if (ok) { /* opens: build the index, then read through it */
            sqlite3_free(rowsf(db, "SELECT count(*)" FROM "WHERE idx >= 5000",
                               path));
            same_rows(db, path,
                      "SELECT idx, offset, args" FROM "WHERE idx >= 0 AND "
                      "idx < 1000000",
                      "SELECT idx, offset, args" FROM "WHERE idx + 0 >= 0");
            /* The row cache (no args read) against a streamed scan. */
            same_rows(db, path,
                      "SELECT idx, offset, t_mono, t_wall, qualname, file,"
                      " rowid" FROM,
                      "SELECT idx, offset, t_mono, t_wall, qualname, file,"
                      " rowid" FROM "WHERE args_bytes >= 0");
        }
        sqlite3_free(ok);
        sqlite3_free(err);
        sqlite3_free(sql);
        sqlite3_free(path);
    }
    sqlite3_close(db);
}

Test(sql, args_bytes_is_the_msgpack_size)
{
    int warnings = 0;
    sqlite3 *db = new_db(&warnings);
    char *path = fixture("clean", "lct");
    lct_reader *r;
    cr_assert_eq(lct_open(path, 0, &r, NULL), LCT_OK);
    lct_record rec;
    char *want = sqlite3_mprintf("%s", "");
    while (lct_next(r, &rec) == 1) {
        size_t size;
        cr_assert_eq(lct_value_size(rec.args, &size), LCT_OK);
        want = sqlite3_mprintf("%z%llu|%llu\n", want, /* %z frees */
                               (unsigned long long)rec.offset,
                               (unsigned long long)size);
    }
    lct_close(r);
    char *got = rowsf(db, "SELECT offset, args_bytes" FROM, path);
    cr_expect_str_eq(got, want);
    sqlite3_free(got);
    sqlite3_free(want);
    sqlite3_free(path);
    sqlite3_close(db);
}

Test(sql, a_grown_file_is_indexed_again)
{
    int warnings = 0;
    sqlite3 *db = new_db(&warnings);
    char *path = damaged_trace(5000, 0);
    char *got = rowsf(db, "SELECT count(*)" FROM "WHERE idx >= 4096", path);
    cr_expect_str_eq(got, "904\n");
    sqlite3_free(got);
    lct_writer *w;
    cr_assert_eq(lct_writer_open(path, true, &w, NULL), LCT_OK);
    for (int i = 0; i < 100; i++) {
        lct_writer_record_begin(w, 5000 + i, 0, "c.op", 4);
        lct_writer_map(w, 0);
        cr_assert_eq(lct_writer_end(w, NULL), LCT_OK);
    }
    lct_writer_close(w);
    got = rowsf(db, "SELECT count(*), max(idx)" FROM "WHERE idx >= 4096", path);
    cr_expect_str_eq(got, "1004|5099\n");
    sqlite3_free(got);
    sqlite3_close(db);
    unlink(path);
    free(path);
}

Test(sql, keys_table_is_the_key_reference_stream)
{
    int warnings = 0;
    sqlite3 *db = new_db(&warnings);
    lct_reader *r;
    cr_assert_eq(lct_open(LCT_SAMPLE, 0, &r, NULL), LCT_OK);
    char *want = sqlite3_mprintf("%s", "");
    lct_record rec;
    for (uint64_t idx = 0; lct_next(r, &rec) == 1; idx++) {
        bool read = lct_str_has_suffix(rec.qualname, "." LCT_KEYS_READ_CALL);
        if (!read && !lct_str_has_suffix(rec.qualname, "." LCT_KEYS_WRITE_CALL))
            continue;
        lct_key_iter it;
        lct_object_key k;
        uint64_t bytes;
        cr_assert_eq(lct_key_iter_init(&rec, &it, NULL), LCT_OK);
        while (lct_key_iter_next(&it, &k, &bytes, NULL) == 1)
            want = sqlite3_mprintf("%z%llu|%s|%016llx|%llu|%lld\n", want,
                                   (unsigned long long)idx,
                                   read ? "read" : "write",
                                   (unsigned long long)lct_object_key_hash(&k),
                                   (unsigned long long)bytes,
                                   (long long)k.kv_rank);
    }
    lct_close(r);
    char *got = rowsf(db, "SELECT idx, op, obj_id, bytes, kv_rank "
                          "FROM lct_keys(%Q)", LCT_SAMPLE);
    cr_expect_str_eq(got, want);
    sqlite3_free(got);
    got = rowsf(db, "SELECT count(DISTINCT rowid) = count(*) "
                    "FROM lct_keys(%Q)", LCT_SAMPLE);
    cr_expect_str_eq(got, "1\n");
    sqlite3_free(got);
    sqlite3_free(want);
    sqlite3_close(db);
}

/* The byte offset of the k-th (from 0) "intact!!" in the file at path. */
static long nth_marker(const char *path, int k)
{
    size_t len;
    char *data = read_whole_file(path, &len);
    char *p = data;
    for (int i = 0; p && i <= k; i++) {
        if (i)
            p += 8;
        p = memmem(p, len - (size_t)(p - data), "intact!!", 8);
    }
    cr_assert_not_null(p);
    long at = (long)(p - data);
    free(data);
    return at;
}

/* Write bytes at offset, then set the file's times back as they were:
 * the change the cache cannot see from size, mtime and inode. */
static void overwrite_keeping_mtime(const char *path, long offset,
                                    const char *bytes, size_t n)
{
    struct stat before;
    cr_assert_eq(stat(path, &before), 0);
    int fd = open(path, O_WRONLY);
    cr_assert(fd >= 0);
    cr_assert_eq(pwrite(fd, bytes, n, offset), (ssize_t)n);
    close(fd);
    struct timespec times[2] = {before.st_atim, before.st_mtim};
    cr_assert_eq(utimensat(AT_FDCWD, path, times, 0), 0);
}

/* A cached row whose record no longer decodes was read as "a row" and
 * repeated the previous one without end.  Now the reader's warning ends
 * the file's rows, and the next query reads the file afresh. */
Test(sql, a_cached_row_that_no_longer_decodes_ends_with_the_warning)
{
    int warnings = 0;
    sqlite3 *db = new_db(&warnings);
    char *path = damaged_trace(6000, 0);
    char *got = rowsf(db, "SELECT count(*)" FROM "WHERE idx >= 4096", path);
    cr_expect_str_eq(got, "1904\n");
    sqlite3_free(got);
    cr_assert_eq(warnings, 0);
    overwrite_keeping_mtime(path, nth_marker(path, 5000), "\xff\xff", 2);
    got = rowsf(db, "SELECT idx, args_bytes" FROM
                "WHERE idx BETWEEN 4998 AND 5001", path);
    cr_expect_str_eq(got, "4998|17\n4999|17\n");
    sqlite3_free(got);
    cr_expect_eq(warnings, 1);
    /* Read again: record 5000 is skipped, so 5001 is now number 5000. */
    got = rowsf(db, "SELECT idx, args_bytes" FROM
                "WHERE idx BETWEEN 4998 AND 5001", path);
    cr_expect_str_eq(got, "4998|17\n4999|17\n5000|17\n5001|17\n");
    sqlite3_free(got);
    got = rowsf(db, "SELECT count(*)" FROM "", path);
    cr_expect_str_eq(got, "5999\n");
    sqlite3_free(got);
    sqlite3_close(db);
    unlink(path);
    free(path);
}

/* The cache was built again only when the size changed: a same-size
 * rewrite answered from the old rows for the rest of the session. */
Test(sql, a_same_size_rewrite_is_read_again)
{
    int warnings = 0;
    sqlite3 *db = new_db(&warnings);
    char *path = damaged_trace(5000, 0);
    char *got = rowsf(db, "SELECT count(*)" FROM "WHERE idx >= 4096", path);
    cr_expect_str_eq(got, "904\n");
    sqlite3_free(got);
    got = rowsf(db, "SELECT count(*)" FROM "WHERE qualname = 'z.op'", path);
    cr_expect_str_eq(got, "0\n");
    sqlite3_free(got);
    /* a.op -> z.op in place, same size; a later mtime. */
    size_t len;
    char *data = read_whole_file(path, &len);
    for (char *p = data; (p = memmem(p, len - (size_t)(p - data), "a.op", 4));)
        *p = 'z';
    FILE *f = fopen(path, "r+b");
    cr_assert(f && fwrite(data, 1, len, f) == len);
    fclose(f);
    free(data);
    struct timespec later[2] = {{0, UTIME_NOW}, {time(NULL) + 5, 0}};
    cr_assert_eq(utimensat(AT_FDCWD, path, later, 0), 0);
    got = rowsf(db, "SELECT count(*)" FROM "WHERE qualname = 'z.op'", path);
    cr_expect_str_eq(got, "1667\n");
    sqlite3_free(got);
    sqlite3_close(db);
    unlink(path);
    free(path);
}

/* A join looks records up by idx once per row of the other side; each
 * lookup below 4096 streamed from the start of the file (26.6 s for a
 * join with keys on 20,000 records).  The second bounded query builds
 * the row cache, so the join reads the file a bounded number of times:
 * counted in bytes read, not seconds. */
Test(sql, a_join_on_idx_reads_the_file_a_few_times_not_once_a_row)
{
    int warnings = 0;
    sqlite3 *db = new_db(&warnings);
    char *path = damaged_trace(4000, 0);
    struct stat st;
    cr_assert_eq(stat(path, &st), 0);
    unsigned long long before = process_bytes_read();
    char *got = rowsf(db,
                      "WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 "
                      "FROM n WHERE i < 3999) SELECT count(*), sum(r.idx) "
                      "FROM n JOIN lct_records(%Q) r ON r.idx = n.i",
                      path);
    unsigned long long read = process_bytes_read() - before;
    cr_expect_str_eq(got, "4000|7998000\n");
    sqlite3_free(got);
    cr_expect_leq(read, 8ull * (unsigned long long)st.st_size,
                  "read %llu bytes of a %lld-byte file", read,
                  (long long)st.st_size);
    sqlite3_close(db);
    unlink(path);
    free(path);
}

/* records.args shows a hash as base64 (msgspec's JSON), keys.chunk_hash
 * as hex: lct_hex() joins the two. */
Test(sql, lct_hex_joins_args_hashes_and_key_hashes)
{
    int warnings = 0;
    sqlite3 *db = new_db(&warnings);
    char *err;
    char *got = rows(db, "SELECT lct_hex(x'0aff'), lct_hex('Cv8='), "
                         "lct_hex('Cg=='), lct_hex('not base64!'), "
                         "lct_hex(NULL)", &err);
    cr_assert(got, "%s", err);
    cr_expect_str_eq(got, "0aff|0aff|0a||\n", "NULL for what is not base64");
    sqlite3_free(got);
    char *sql = sqlite3_mprintf(
        "SELECT count(*) > 0, count(*) = (SELECT count(*) FROM "
        "lct_records(%Q) WHERE json_extract(args, '$.keys[0]') IS NOT NULL "
        "AND qualname LIKE '%%reserve_write') FROM lct_keys(%Q) k JOIN "
        "lct_records(%Q) r ON r.idx = k.idx WHERE k.op = 'write' AND "
        "k.chunk_hash = lct_hex(json_extract(r.args, "
        "'$.keys[0].v.chunk_hash'))",
        LCT_SAMPLE, LCT_SAMPLE, LCT_SAMPLE);
    got = rows(db, sql, &err);
    cr_assert(got, "%s", err);
    cr_expect_str_eq(got, "1|1\n", "every write's first key joins");
    sqlite3_free(got);
    sqlite3_free(sql);
    sqlite3_close(db);
}

/* op: the qualname after its last dot (LMCache's are 70+ characters). */
Test(sql, records_have_the_short_op_name)
{
    int warnings = 0;
    sqlite3 *db = new_db(&warnings);
    char *got = rowsf(db, "SELECT DISTINCT op FROM lct_records(%Q) WHERE "
                          "qualname LIKE '%%.reserve_write'", LCT_SAMPLE);
    cr_expect_str_eq(got, "reserve_write\n");
    sqlite3_free(got);
    got = rowsf(db, "SELECT count(*) FROM lct_records(%Q) WHERE qualname "
                    "NOT LIKE '%%.' || op", LCT_SAMPLE);
    cr_expect_str_eq(got, "0\n");
    sqlite3_free(got);
    sqlite3_close(db);
}
