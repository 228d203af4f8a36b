/*
 * test_cli_sql.c - the lct tool run as a program: sql (built with
 * SQLite): aligned CSV and JSON, exit codes and messages, several files,
 * no rows, lct_keys taking lct keys's choices.  What every test_cli_*.c
 * shares (running the tool, the fixtures, JSON equality) is in
 * test/support/cli.c.
 */
#define _GNU_SOURCE /* cpu_set_t, for cpus.h */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "cpus.h"
#include "files.h"
#include "lct.h"
#include "json.h"
#include "mpw.h"
#include "run.h"

/* These tests wait on other processes: a regression that hangs one
 * fails it instead of stalling the run. */
TestSuite(cli, .timeout = 300);

/* MARK: sql */

Test(cli, sql_prints_aligned_csv_and_json)
{
    const char *q = "SELECT qualname, count(*) AS n FROM records "
                    "GROUP BY qualname ORDER BY n DESC, qualname LIMIT 2";
    run t = run_lct(NULL, "sql", q, LCT_SAMPLE, NULL);
    cr_assert_eq(t.status, 0, "%s", t.err);
    char *lines[8];
    size_t n = lines_of(t.out, lines, 8);
    cr_assert_eq(n, 4, "%s", t.out);
    cr_expect(strncmp(lines[0], "qualname ", 9) == 0, "%s", lines[0]);
    cr_expect(strstr(lines[0], "  n"), "%s", lines[0]);
    cr_expect(strspn(lines[1], "- ") == strlen(lines[1]), "%s", lines[1]);
    /* Columns line up: n starts at the same place in every line. */
    size_t at = (size_t)(strstr(lines[0], "  n") - lines[0]) + 2;
    cr_expect(strncmp(lines[2] + at, "610", 3) == 0, "%s", lines[2]);
    run_free(&t);

    t = run_lct(NULL, "sql", "--csv", "SELECT 'a,\"b' AS x, 1.5 AS y, "
                "NULL AS z", LCT_SAMPLE, NULL);
    cr_assert_eq(t.status, 0, "%s", t.err);
    cr_expect_str_eq(t.out, "x,y,z\r\n\"a,\"\"b\",1.5,\r\n");
    run_free(&t);

    t = run_lct(NULL, "sql", "--json", "SELECT idx, qualname, t_mono, args "
                "FROM records WHERE idx = 2", LCT_SAMPLE, NULL);
    cr_assert_eq(t.status, 0, "%s", t.err);
    jv *row = json_parse(t.out, t.outlen);
    cr_assert(row, "%s", t.out);
    cr_expect_eq(json_get(row, "idx")->u, 2);
    cr_expect_eq(json_get(row, "qualname")->t, J_STR);
    cr_expect_eq(json_get(row, "t_mono")->t, J_FLOAT);
    const jv *args = json_get(row, "args");
    cr_assert(args && args->t == J_STR);
    jv *inner = json_parse(args->s, args->slen);
    cr_expect(inner && inner->t == J_OBJ, "%s", args->s);
    json_free(inner);
    json_free(row);
    run_free(&t);
}

Test(cli, sql_exit_codes_and_messages)
{
    run t = run_lct(NULL, "sql", "SELEC 1", LCT_SAMPLE, NULL);
    cr_expect_eq(t.status, 2);
    cr_expect(strstr(t.err, "syntax error"), "%s", t.err);
    run_free(&t);
    t = run_lct(NULL, "sql", "SELECT nope FROM records", LCT_SAMPLE, NULL);
    cr_expect_eq(t.status, 2);
    cr_expect(strstr(t.err, "no such column: nope"), "%s", t.err);
    run_free(&t);
    t = run_lct(NULL, "sql", "SELECT 1", NULL);
    cr_expect_eq(t.status, 2);
    cr_expect(strstr(t.err, "missing FILE"), "%s", t.err);
    run_free(&t);
    t = run_lct(NULL, "sql", "SELECT 1", "-", NULL);
    cr_expect_eq(t.status, 2);
    run_free(&t);
    t = run_lct(NULL, "sql", "SELECT 1", "/nonexistent.lct", NULL);
    cr_expect_eq(t.status, 1);
    cr_expect(strstr(t.err, "/nonexistent.lct"), "%s", t.err);
    run_free(&t);

    char *mixed = fixture("malformed_mixed", ".lct");
    t = run_lct(NULL, "sql", "SELECT count(*) FROM records; "
                "SELECT count(*) FROM records", mixed, NULL);
    cr_expect_eq(t.status, 3);
    cr_expect_str_eq(t.out, "count(*)\n--------\n13\n\ncount(*)\n--------\n13\n");
    /* Five skipped frames, each said once although read twice. */
    size_t warnings = 0;
    for (const char *p = t.err; (p = strstr(p, "skipping malformed")); p++)
        warnings++;
    cr_expect_eq(warnings, 5, "%s", t.err);
    run_free(&t);
    t = run_lct(NULL, "sql", "-q", "SELECT count(*) FROM records", mixed,
                NULL);
    cr_expect_eq(t.status, 3);
    cr_expect_eq(t.errlen, 0, "%s", t.err);
    run_free(&t);
    free(mixed);
}

Test(cli, sql_over_several_files)
{
    char *clean = fixture("clean", ".lct"), *events = fixture("events", ".lct");
    run t = run_lct(NULL, "sql", "--csv",
                    "SELECT h.level, count(*) FROM records r JOIN header h "
                    "USING (file) GROUP BY file ORDER BY h.level",
                    clean, events, NULL);
    cr_assert_eq(t.status, 0, "%s", t.err);
    cr_expect_str_eq(t.out, "level,count(*)\r\nevents,8\r\nstorage,40\r\n");
    run_free(&t);
    free(clean);
    free(events);
}

/* A query that selects no rows still says its columns (it printed
 * nothing); --mmap with --stream is a usage error. */
Test(cli, sql_without_rows_prints_the_header_and_sources_exclude)
{
    run t = run_lct(NULL, "sql", "SELECT idx, qualname FROM records WHERE 0",
                    LCT_SAMPLE, NULL);
    cr_expect_eq(t.status, 0, "%s", t.err);
    cr_expect_str_eq(t.out, "idx  qualname\n---  --------\n");
    run_free(&t);
    t = run_lct(NULL, "sql", "--csv", "SELECT idx, qualname FROM records "
                "WHERE 0", LCT_SAMPLE, NULL);
    cr_expect_str_eq(t.out, "idx,qualname\r\n");
    run_free(&t);
    t = run_lct(NULL, "dump", "--mmap", "--stream", LCT_SAMPLE, NULL);
    cr_expect_eq(t.status, 2);
    cr_expect(strstr(t.err, "--mmap and --stream exclude each other"), "%s",
              t.err);
    run_free(&t);
}

/* lct_keys() in SQL takes lct keys's choices: read_calls and
 * write_calls (comma-separated patterns, as --read and --write), and
 * all_calls (--all): the same rows as the tool's, choice for choice. */
Test(cli, sql_lct_keys_takes_the_choices_of_lct_keys)
{
    static const char *cases[][4] = {
        /* SQL arguments after the path, then lct keys's options */
        {"", "--csv", NULL, NULL},
        {", 'finish_write,submit_prefetch_task'", "--read", "finish_write",
         "--read"},
        {", NULL, 'finish_write'", "--write", "finish_write", NULL},
        {", NULL, NULL, 'all'", "--all", NULL, NULL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char sql[4096];
        snprintf(sql, sizeof sql,
                 "SELECT idx, op, obj_id FROM lct_keys('%s'%s)", LCT_SAMPLE,
                 cases[i][0]);
        run s = run_lct(NULL, "sql", "--csv", sql, LCT_SAMPLE, NULL);
        run k = i == 1 ? run_lct(NULL, "keys", "--csv", "--read",
                                 "finish_write", "--read",
                                 "submit_prefetch_task", LCT_SAMPLE, NULL)
                : cases[i][2]
                    ? run_lct(NULL, "keys", "--csv", cases[i][1], cases[i][2],
                              LCT_SAMPLE, NULL)
                    : run_lct(NULL, "keys", "--csv", cases[i][1], LCT_SAMPLE,
                              NULL);
        cr_assert_eq(s.status, 0, "%s: %s", sql, s.err);
        cr_assert_eq(k.status, 0, "%s", k.err);
        /* keys's columns idx (1st), op (3rd), obj_id (9th) */
        size_t cap = strlen(k.out) + 1;
        char *want = calloc(1, cap), *w = want;
        w += sprintf(w, "idx,op,obj_id\r\n");
        bool head = true;
        for (char *line = k.out, *eol; (eol = strstr(line, "\r\n"));
             line = eol + 2) {
            if (head) {
                head = false;
                continue;
            }
            char *f[10];
            int nf = 0;
            *eol = '\0';
            for (char *p = line; p && nf < 10; nf++) {
                f[nf] = p;
                if ((p = strchr(p, ',')))
                    *p++ = '\0';
            }
            cr_assert_geq(nf, 9);
            w += sprintf(w, "%s,%s,%s\r\n", f[0], f[2], f[8]);
        }
        cr_expect(strlen(want) > 20, "case %zu selected nothing", i);
        cr_expect_str_eq(s.out, want, "%s", sql);
        free(want);
        run_free(&s);
        run_free(&k);
    }
}
