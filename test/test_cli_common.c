/*
 * test_cli_common.c - the lct tool run as a program: what every command
 * shares: usage errors and --help, escaping a hostile qualname, progress
 * only on a terminal and never in the output, time windows and --range
 * alike everywhere, one name for each fact, CSV from every row printer.
 * What every test_cli_*.c shares (running the tool, the fixtures, JSON
 * equality) is in test/support/cli.c.
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

/* A sparse trace over 256 MiB: header, a ~4 GiB zero-filled (malformed)
 * frame that costs no disk, then a few records. */
static char *big_sparse_trace(void)
{
    mpw file, body;
    mpw_init(&file);
    mpw_init(&body);
    mpw_std_header(&body);
    mpw_frame(&file, &body);
    mpw_be32(&file, 0xfffffff0u);
    char *path = tmp_file_with(file.buf, file.len);
    int fd = open(path, O_WRONLY);
    off_t end = (off_t)file.len + 0xfffffff0;
    cr_assert_eq(ftruncate(fd, end), 0);
    mpw_reset(&file);
    for (int i = 0; i < 3; i++) {
        mpw_reset(&body);
        mpw_record_begin(&body, i, i, "big.op");
        mpw_map(&body, 0);
        mpw_frame(&file, &body);
    }
    cr_assert_eq(pwrite(fd, file.buf, file.len, end), (ssize_t)file.len);
    close(fd);
    mpw_free(&file);
    mpw_free(&body);
    return path;
}

/* Progress goes where it cannot land in the output: with stdout and
 * stderr on one terminal it printed "lct:   0% of 281MB{"idx":0,...".
 * Now: only when stderr is a terminal and stdout is not that terminal,
 * naming the command, in MiB, and never under -q.  Run under script(1),
 * which gives the command a pty; LCT_PROGRESS_BYTES=1 makes the sample
 * large enough to show it. */
/* A shell command run with a pseudo-terminal as its stdin, stdout and
 * stderr (script(1)); what the terminal showed is r.out. */
static run run_on_a_terminal(const char *cmd)
{
    const char *const argv[] = {"/usr/bin/script", "-qec", cmd, "/dev/null",
                                NULL};
    return run_argv(NULL, argv);
}

/* MARK: usage and escaping */

Test(cli, usage_errors_and_help)
{
    struct {
        const char *a[4];
        int status;
        const char *in_err, *in_out;
    } cases[] = {
        {{NULL}, 2, "missing command", NULL},
        {{"frobnicate", NULL}, 2, "unknown command", NULL},
        {{"dump", "--bogus", "x", NULL}, 2, "Try 'lct dump --help'", NULL},
        {{"dump", "-n", "many", NULL}, 2, "--limit", NULL},
        {{"dump", "--since", "soon", NULL}, 2, "--since", NULL},
        {{"info", NULL}, 2, "missing FILE", NULL},
        {{"stat", "--csv", "--json", "x"}, 2, "exclude", NULL},
        {{"info", "a", "b", NULL}, 2, "too many", NULL},
        {{"--help", NULL}, 0, NULL, "usage: lct COMMAND"},
        {{"dump", "--help", NULL}, 0, NULL, "--qualname"},
        {{"--version", NULL}, 0, NULL, "lct " LCT_VERSION_STRING " (liblct)\n"},
        {{"info", "/nonexistent.lct", NULL}, 1, "No such file", NULL},
        /* a missing value is named as such, in every command */
        {{"check", "-j", NULL}, 2, "option '-j' needs a value", NULL},
        {{"info", "-j", NULL}, 2, "option '-j' needs a value", NULL},
        {{"stat", "-j", NULL}, 2, "option '-j' needs a value", NULL},
        {{"dump", "--limit", NULL}, 2, "option '--limit' needs a value",
         NULL},
        /* an unknown short option is named, not the command */
        {{"info", "-dash.lct", NULL}, 2, "unknown option '-d'", NULL},
        {{"stat", "-qz", "x", NULL}, 2, "unknown option '-z'", NULL},
        {{"check", "--frob", "x", NULL}, 2, "unknown option '--frob'", NULL},
        /* what was typed is quoted with its control bytes escaped */
        {{"mrc", "--policy", "arc\033[31m", "x"}, 2,
         "unknown policy 'arc\\033[31m'", NULL},
        {{"dump", "--since", "\007soon", NULL}, 2, "'\\007soon'", NULL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        run r = run_lct(NULL, cases[i].a[0], cases[i].a[1], cases[i].a[2],
                        cases[i].a[3], NULL);
        cr_expect_eq(r.status, cases[i].status, "case %zu: exit %d", i,
                     r.status);
        if (cases[i].in_err)
            cr_expect(strstr(r.err, cases[i].in_err), "case %zu: %s", i, r.err);
        cr_expect(!strchr(r.err, '\033') && !strchr(r.err, '\007'),
                  "case %zu: a raw control byte: %s", i, r.err);
        if (cases[i].in_out)
            cr_expect(strstr(r.out, cases[i].in_out), "case %zu: %s", i, r.out);
        run_free(&r);
    }
}

Test(cli, hostile_qualname_is_escaped)
{
    mpw file, body;
    mpw_init(&file);
    mpw_init(&body);
    mpw_std_header(&body);
    mpw_frame(&file, &body);
    mpw_reset(&body);
    mpw_record_begin(&body, 1, 2, "evil\x1b]0;pwned\x07\x1b[2J.op");
    mpw_map(&body, 0);
    mpw_frame(&file, &body);
    /* Another ".op", so stat prints whole qualnames, not short names. */
    mpw_reset(&body);
    mpw_record_begin(&body, 2, 3, "other.op");
    mpw_map(&body, 0);
    mpw_frame(&file, &body);
    char *path = tmp_file_with(file.buf, file.len);
    const char *cmds[][2] = {{"info", NULL}, {"stat", NULL}};
    for (int i = 0; i < 2; i++) {
        run r = run_lct(NULL, cmds[i][0], path, NULL);
        cr_expect_eq(r.status, 0);
        cr_expect_null(memchr(r.out, 0x1b, r.outlen), "%s printed ESC",
                       cmds[i][0]);
        cr_expect_null(memchr(r.out, 0x07, r.outlen));
        cr_expect(strstr(r.out, "evil\\033]0;pwned\\a\\033[2J.op") ||
                      strstr(r.out, "evil\\033]0;pwned\\007\\033[2J.op"),
                  "%s: %s", cmds[i][0], r.out);
        run_free(&r);
    }
    run r = run_lct(NULL, "dump", path, NULL);
    cr_expect_null(memchr(r.out, 0x1b, r.outlen));
    cr_expect(strstr(r.out, "\"evil\\u001b]0;pwned\\u0007\\u001b[2J.op\""),
              "%s", r.out);
    run_free(&r);
    unlink(path);
    free(path);

    /* Every control byte, DEL, a comma and a quote, in CSV and JSON. */
    mpw_reset(&file);
    mpw_reset(&body);
    mpw_std_header(&body);
    mpw_frame(&file, &body);
    mpw_reset(&body);
    mpw_record_begin(&body, 1, 2, "a\x1b[2J\a\b\r\x7f,\"q\".op");
    mpw_map(&body, 0);
    mpw_frame(&file, &body);
    path = tmp_file_with(file.buf, file.len);
    r = run_lct(NULL, "stat", "--csv", path, NULL);
    cr_expect_eq(r.status, 0);
    for (size_t i = 0; i < r.outlen; i++)
        cr_expect(((unsigned char)r.out[i] >= 0x20 &&
                   (unsigned char)r.out[i] != 0x7f) ||
                      (r.out[i] == '\r' && r.out[i + 1] == '\n') ||
                      (r.out[i] == '\n' && i && r.out[i - 1] == '\r'),
                  "stat --csv printed byte 0x%02x at %zu (only CR LF ends "
                  "a row)", (unsigned char)r.out[i], i);
    cr_expect(strstr(r.out, "\"a\\033[2J\\a\\b\\r\\177,\"\"q\"\".op\","),
              "%s", r.out);
    run_free(&r);
    r = run_lct(NULL, "dump", path, NULL);
    cr_expect(strstr(r.out, "\"a\\u001b[2J\\u0007\\b\\r\\u007f,\\\"q\\\".op\""),
              "%s", r.out);
    cr_expect_null(memchr(r.out, 0x7f, r.outlen));
    run_free(&r);
    unlink(path);
    free(path);
    mpw_free(&file);
    mpw_free(&body);
}

/* One name for each fact across commands and formats: stat's text says
 * what its CSV says; info and check name the file "file", as sql does;
 * keys takes --json (its default) like the other row printers. */
Test(cli, one_name_for_each_fact)
{
    run text = run_lct(NULL, "stat", LCT_SAMPLE, NULL);
    run csv = run_lct(NULL, "stat", "--csv", LCT_SAMPLE, NULL);
    static const char *names[] = {"first_t_mono", "last_t_mono", "gap_mean",
                                  "gap_p50", "gap_p99", "gap_max",
                                  "args_mean_bytes", "op", "count",
                                  "share"};
    char *eol = strchr(text.out, '\n');
    cr_assert_not_null(eol);
    *eol = '\0';
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        cr_expect(strstr(text.out, names[i]), "text lacks %s", names[i]);
        cr_expect(strstr(csv.out, names[i]), "CSV lacks %s", names[i]);
    }
    run_free(&text);
    run_free(&csv);
    const char *cmds[] = {"info", "check"};
    for (int i = 0; i < 2; i++) {
        run j = run_lct(NULL, cmds[i], "--json", LCT_SAMPLE, NULL);
        cr_expect(strncmp(j.out, "{\"file\":", 8) == 0, "%s: %.40s", cmds[i],
                  j.out);
        run_free(&j);
    }
    run a = run_lct(NULL, "keys", "--json", LCT_SAMPLE, NULL);
    run b = run_lct(NULL, "keys", LCT_SAMPLE, NULL);
    cr_expect_eq(a.status, 0, "%s", a.err);
    cr_expect_str_eq(a.out, b.out);
    run_free(&a);
    run_free(&b);
}

/* MARK: progress */

Test(cli, progress_only_on_a_terminal)
{
    char *path = big_sparse_trace();
    /* Not a terminal: nothing but the report. */
    run r = run_lct(NULL, "check", path, NULL);
    cr_expect_eq(r.status, 3, "the zero frame is skipped");
    cr_expect_null(memchr(r.err, '\r', r.errlen), "stderr: %s", r.err);
    run_free(&r);

    /* stderr on a terminal (script(1) gives it a pty), the report
     * elsewhere: progress, then erased. */
    char cmd[8192];
    snprintf(cmd, sizeof cmd, "%s check %s > /dev/null", LCT_TOOL, path);
    char out_path[] = "/tmp/lct-cli-tty-XXXXXX";
    int out_fd = mkstemp(out_path);
    pid_t pid = fork();
    if (pid == 0) {
        dup2(out_fd, 1);
        int devnull = open("/dev/null", O_RDWR);
        dup2(devnull, 0);
        execlp("script", "script", "-qec", cmd, "/dev/null", (char *)NULL);
        _exit(127);
    }
    int ws;
    waitpid(pid, &ws, 0);
    close(out_fd);
    if (WIFEXITED(ws) && WEXITSTATUS(ws) == 127)
        cr_skip_test("script(1) is not available");
    size_t len;
    char *out = read_whole_file(out_path, &len);
    cr_expect(strstr(out, "\rlct check: ") != NULL, "no progress line: %s",
              out);
    cr_expect(strstr(out, "% ") != NULL);
    cr_expect(strstr(out, "\r\033[K") != NULL, "progress not erased");
    free(out);
    unlink(out_path);
    unlink(path);
    free(path);
}

Test(cli, progress_never_lands_in_the_output)
{
    char out[] = "/tmp/lct-progress-XXXXXX";
    int fd = mkstemp(out);
    cr_assert(fd >= 0);
    close(fd);
    char cmd[4096];
    /* Both on the terminal: no progress at all. */
    snprintf(cmd, sizeof cmd,
             "LCT_PROGRESS_BYTES=1 %s dump --fields idx %s", LCT_TOOL,
             LCT_SAMPLE);
    run r = run_on_a_terminal(cmd);
    cr_expect_eq(r.status, 0, "%s", r.err);
    cr_expect(strstr(r.out, "{\"idx\":2999}"), "the output is there");
    cr_expect_null(strstr(r.out, "% of"), "progress in the output");
    run_free(&r);
    /* stdout to a file, stderr the terminal: progress, named, in MiB. */
    const char *cmds[] = {"dump --fields idx", "keys", "keys -q", "info -q"};
    for (size_t i = 0; i < sizeof cmds / sizeof *cmds; i++) {
        snprintf(cmd, sizeof cmd, "LCT_PROGRESS_BYTES=1 %s %s %s > %s",
                 LCT_TOOL, cmds[i], LCT_SAMPLE, out);
        r = run_on_a_terminal(cmd);
        cr_expect_eq(r.status, 0, "%s: %s", cmds[i], r.err);
        bool quiet = strstr(cmds[i], "-q") != NULL;
        char name[64];
        snprintf(name, sizeof name, "lct %.*s: ",
                 (int)strcspn(cmds[i], " "), cmds[i]);
        if (quiet)
            cr_expect_null(strstr(r.out, "% of"), "%s showed progress",
                           cmds[i]);
        else
            cr_expect(strstr(r.out, name) && strstr(r.out, "% of 1.9 MiB"),
                      "%s: %s", cmds[i], r.out);
        size_t len;
        char *text = read_whole_file(out, &len);
        cr_expect_null(strstr(text, "% of"), "%s: progress in the file",
                       cmds[i]);
        free(text);
        run_free(&r);
    }
    /* a paced replay is long whatever the trace's size: its progress
     * shows however small the file, with the time gone and to go */
    snprintf(cmd, sizeof cmd, "%s replay --backend null --speed 2 %s > %s",
             LCT_TOOL, LCT_SAMPLE, out);
    r = run_on_a_terminal(cmd);
    cr_expect_eq(r.status, 0, "%s", r.err);
    cr_expect(strstr(r.out, "lct replay: ") && strstr(r.out, " elapsed, ETA "),
              "%s", r.out);
    run_free(&r);
#ifdef LCT_HAVE_SQLITE
    /* lct sql shows progress as the library reads a file from its start
     * (the row cache's pass on two threads, a keys scan): a larger file,
     * since it is told every 4096 records. */
    char *big = tmp_file_with("", 0);
    run g = run_lct(NULL, "gen", "-n", "20000", big, NULL);
    cr_assert_eq(g.status, 0, "%s", g.err);
    run_free(&g);
    const char *queries[] = {
        "-j 2 'SELECT count(*) FROM records WHERE idx > 5'",
        "'SELECT count(*) FROM keys'",
        "-q 'SELECT count(*) FROM keys'"};
    for (size_t i = 0; i < sizeof queries / sizeof *queries; i++) {
        snprintf(cmd, sizeof cmd, "LCT_PROGRESS_BYTES=1 %s sql %s %s > %s",
                 LCT_TOOL, queries[i], big, out);
        r = run_on_a_terminal(cmd);
        cr_expect_eq(r.status, 0, "%s: %s", queries[i], r.out);
        if (strncmp(queries[i], "-q", 2) == 0)
            cr_expect_null(strstr(r.out, "% of"), "%s", r.out);
        else
            cr_expect(strstr(r.out, "lct sql: ") && strstr(r.out, "% of "),
                      "%s: %s", queries[i], r.out);
        size_t len;
        char *text = read_whole_file(out, &len);
        cr_expect_null(strstr(text, "% of"), "progress in the rows");
        cr_expect(strstr(text, "count(*)"), "%s", text);
        free(text);
        run_free(&r);
    }
    unlink(big);
    free(big);
#endif
    unlink(out);
}

/* MARK: selecting records */

/* --since/--until: seconds bound t_mono, a UTC time bounds t_wall. */
Test(cli, time_windows_on_t_mono_and_t_wall)
{
    run all = run_lct(NULL, "dump", "-q", "--fields", "t_mono,t_wall",
                      LCT_SAMPLE, NULL);
    size_t by_mono = 0, by_wall = 0;
    for (char *line = all.out; line && *line;) {
        char *nl = strchr(line, '\n');
        jv *v = json_parse(line, (size_t)(nl - line));
        double m = json_get(v, "t_mono")->d, w = json_get(v, "t_wall")->d;
        by_mono += m >= 1.0 && m <= 1.5;
        by_wall += w >= 1764600002.0 && w <= 1764600002.5; /* 14:40:02Z */
        json_free(v);
        line = nl + 1;
    }
    cr_assert_gt(by_mono, 0);
    cr_assert_gt(by_wall, 0);
    run m = run_lct(NULL, "dump", "--since", "1", "--until", "1.5", LCT_SAMPLE,
                    NULL);
    run w = run_lct(NULL, "dump", "--since", "2025-12-01T14:40:02Z", "--until",
                    "2025-12-01T14:40:02.5Z", LCT_SAMPLE, NULL);
    run s = run_lct(NULL, "stat", "--json", "--since", "2025-12-01T14:40:02Z",
                    "--until", "2025-12-01T14:40:02.5Z", LCT_SAMPLE, NULL);
    cr_expect_eq(count_lines(m.out), by_mono);
    cr_expect_eq(count_lines(w.out), by_wall);
    jv *st = json_parse(s.out, s.outlen);
    cr_assert_not_null(st, "%s", s.out);
    cr_expect_eq(json_get(st, "records")->u, by_wall);
    json_free(st);
    run_free(&all);
    run_free(&m);
    run_free(&w);
    run_free(&s);
}

/* --range means on stat, keys and mrc what it means on dump: records by
 * number; a negative side counts from the end. */
Test(cli, range_selects_the_same_records_everywhere)
{
    run all = run_lct(NULL, "keys", "--csv", LCT_SAMPLE, NULL);
    run some = run_lct(NULL, "keys", "--csv", "--range", "20:40", LCT_SAMPLE,
                       NULL);
    cr_expect_eq(some.status, 0, "%s", some.err);
    /* the expected rows: every row of the whole listing with idx 20..39 */
    size_t cap = strlen(all.out) + 1;
    char *want = calloc(1, cap), *w = want;
    size_t rows = 0;
    for (char *line = all.out, *eol; (eol = strchr(line, '\n'));
         line = eol + 1) {
        long idx = atol(line);
        if (line == all.out || (idx >= 20 && idx < 40)) {
            memcpy(w, line, (size_t)(eol - line) + 1);
            w += eol - line + 1;
            rows++;
        }
    }
    cr_expect(rows > 1 && strlen(want) < strlen(all.out), "%zu rows", rows);
    cr_expect_str_eq(some.out, want);
    free(want);
    run_free(&all);
    run_free(&some);

    run st = run_lct(NULL, "stat", "--json", "--range", "-10:", LCT_SAMPLE,
                     NULL);
    cr_expect_eq(st.status, 0, "%s", st.err);
    cr_expect(strstr(st.out, "\"records\":10"), "%s", st.out);
    run_free(&st);
    run d = run_lct(NULL, "dump", "--fields", "idx", "--range", "-10:",
                    LCT_SAMPLE, NULL);
    cr_expect_eq(count_lines(d.out), 10);
    run_free(&d);
    run m = run_lct(NULL, "mrc", "--json", "--range", "0:0", LCT_SAMPLE, NULL);
    cr_expect(strstr(m.err, "no key references"), "%s", m.err);
    run_free(&m);
    run bad = run_lct(NULL, "mrc", "--range", "1-2", LCT_SAMPLE, NULL);
    cr_expect_eq(bad.status, 2);
    cr_expect(strstr(bad.err, "lct mrc: --range '1-2' is not A:B"), "%s",
              bad.err);
    run_free(&bad);
    /* Standard input that is a regular file is mapped and counted; read
     * as a stream (as a pipe is) it cannot be counted ahead. */
    run mapped = run_lct(LCT_SAMPLE, "stat", "--json", "--range", "-3:", "-",
                         NULL);
    cr_expect_eq(mapped.status, 0, "%s", mapped.err);
    cr_expect(strstr(mapped.out, "\"records\":3"), "%s", mapped.out);
    run_free(&mapped);
    run pipe = run_lct(LCT_SAMPLE, "stat", "--stream", "--range", "-3:", "-",
                       NULL);
    cr_expect_eq(pipe.status, 2);
    cr_expect(strstr(pipe.err, "needs a file, not standard input"), "%s",
              pipe.err);
    run_free(&pipe);
}

/* MARK: CSV */

/* Every row printer takes --csv: dump (its --fields as columns, args as
 * JSON text in one cell), info (one row of the facts every trace has) and
 * check (one row per file, a refused one with its error); the header line
 * names what the JSON names. */
Test(cli, csv_on_every_row_printer)
{
    char *bad = fixture("malformed_mixed", ".lct");
    run d = run_lct(NULL, "dump", "-q", "--csv", bad, NULL);
    static char *lines[64];
    cr_expect_eq(d.status, 3, "damage is said by the status");
    size_t n = lines_of(d.out, lines, 64);
    cr_assert_eq(n, 14, "a header and 13 records: %s", d.out);
    cr_expect_str_eq(lines[0], "offset,t_mono,t_wall,qualname,args");
    cr_expect(strncmp(lines[1], "289,", 4) == 0, "%s", lines[1]);
    cr_expect(strstr(lines[1], ",\"{\"\"a0\"\":9223372036854775807,"),
              "args are JSON text, quoted per RFC 4180: %s", lines[1]);
    run_free(&d);
    d = run_lct(NULL, "dump", "-q", "--csv", "--fields", "idx,qualname",
                "--range", "-1:", bad, NULL);
    cr_expect_str_eq(d.out, "idx,qualname\r\n12,lmcache.v1.distributed."
                     "storage_manager.StorageManager.reserve_write\r\n");
    run_free(&d);
    d = run_lct(NULL, "dump", "--csv", "--header", bad, NULL);
    cr_expect_eq(d.status, 2);
    cr_expect(strstr(d.err, "--header and --csv"), "%s", d.err);
    run_free(&d);

    run i = run_lct(NULL, "info", "-q", "--csv", bad, NULL);
    cr_expect_eq(i.status, 3);
    n = lines_of(i.out, lines, 64);
    cr_assert_eq(n, 2, "%s", i.out);
    cr_expect_str_eq(lines[0], "file,level,format_version,"
                     "trace_schema_version,duration,sm_config_digest,"
                     "total_records,skipped,truncated,truncated_offset");
    cr_expect(strstr(lines[1], ",storage,1,2,3.0,6e4e4966") &&
                  strstr(lines[1], ",13,5,false,"), "%s", lines[1]);
    run_free(&i);

    char *cut = fixture("trunc_tail_2", ".lct");
    run c = run_lct(NULL, "check", "--csv", bad, cut, "/nonexistent.lct",
                    NULL);
    cr_expect_eq(c.status, 1, "the worst of the files");
    n = lines_of(c.out, lines, 64);
    cr_assert_eq(n, 4, "%s", c.out);
    cr_expect_str_eq(lines[0], "file,ok,records,skipped,truncated,"
                     "truncated_offset,bytes,problems,error");
    cr_expect(strstr(lines[1], ",false,13,5,false,,3557,5,"), "%s", lines[1]);
    cr_expect(strstr(lines[2], ",false,39,0,true,12312,12314,1,"), "%s",
              lines[2]);
    cr_expect(strstr(lines[3], "/nonexistent.lct,false,,,,,,,") &&
                  strstr(lines[3], "No such file"), "%s", lines[3]);
    cr_expect(strstr(c.err, "skipping malformed record at offset 1102"),
              "problems are warnings on stderr: %s", c.err);
    run_free(&c);
    free(bad);
    free(cut);
}
