/*
 * test_cli_dump.c - the lct tool run as a program: the dump command: every
 * fixture, filters, standard input, projections, --range and --at, CSV.
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

/* MARK: dump against every fixture */

Test(cli, dump_matches_every_fixture)
{
    for (size_t f = 0; f < NFIXTURES; f++) {
        jv *want = expectation(fixtures[f]);
        char *path = fixture(fixtures[f], ".lct");
        run r = run_lct(NULL, "dump", path, NULL);
        const jv *open_error = json_get(want, "open_error");
        if (open_error->t == J_STR) {
            cr_expect_eq(r.status, 1, "%s: exit %d", fixtures[f], r.status);
            cr_expect(strstr(r.err, open_error->s), "%s: %s", fixtures[f],
                      r.err);
            cr_expect_eq(r.outlen, 0);
        } else {
            cr_expect_eq(r.status, damaged_status(want), "%s: exit %d",
                         fixtures[f], r.status);
            const jv *records = json_get(want, "records");
            static char *lines[4096];
            size_t n = lines_of(r.out, lines, 4096);
            cr_expect_eq(n, records->n, "%s: %zu lines", fixtures[f], n);
            for (size_t i = 0; i < n && i < records->n; i++) {
                jv *got = json_parse(lines[i], strlen(lines[i]));
                cr_assert_not_null(got, "%s line %zu is not JSON: %s",
                                   fixtures[f], i, lines[i]);
                const jv *e = &records->items[i];
                const jv *offset = json_get(got, "offset");
                cr_expect(offset && offset->t == J_INT && offset->u > 0);
                static const char *fields[] = {"t_mono", "t_wall",
                                               "qualname", "args"};
                for (int k = 0; k < 4; k++) {
                    const jv *g = json_get(got, fields[k]);
                    cr_expect(g && jv_equal(g, json_get(e, fields[k])),
                              "%s record %zu: %s differs", fixtures[f], i,
                              fields[k]);
                }
                cr_expect_eq(got->n, 5, "exactly five keys");
                json_free(got);
            }
        }
        run_free(&r);
        free(path);
        json_free(want);
    }
}

Test(cli, dump_header_line_and_filters)
{
    char *path = fixture("clean", ".lct");
    jv *want = expectation("clean");
    run r = run_lct(NULL, "dump", "--header", "-n", "0", path, NULL);
    cr_assert_eq(r.status, 0);
    jv *h = json_parse(r.out, r.outlen);
    cr_assert_not_null(h);
    cr_expect(jv_equal(h, json_get(want, "header")), "header line: %s", r.out);
    json_free(h);
    run_free(&r);

    /* Globs: count what the expectation says should match. */
    const jv *records = json_get(want, "records");
    size_t want_n = 0;
    for (size_t i = 0; i < records->n; i++) {
        const char *q = json_get(&records->items[i], "qualname")->s;
        want_n += fnmatch("*.finish_write", q, 0) == 0 ||
                  fnmatch("*__enter__", q, 0) == 0;
    }
    r = run_lct(NULL, "dump", "--qualname", "*.finish_write", "--qualname",
                "*__enter__", path, NULL);
    char *lines[64];
    cr_expect_eq(lines_of(r.out, lines, 64), want_n);
    cr_expect_gt(want_n, 0);
    run_free(&r);

    /* Time window and limit. */
    size_t in_window = 0;
    for (size_t i = 0; i < records->n; i++) {
        double t = json_get(&records->items[i], "t_mono")->d;
        in_window += t >= 0.1 && t <= 0.2;
    }
    r = run_lct(NULL, "dump", "--since", "0.1", "--until", "0.2", path, NULL);
    cr_expect_eq(lines_of(r.out, lines, 64), in_window);
    cr_expect_gt(in_window, 0);
    run_free(&r);
    r = run_lct(NULL, "dump", "-n", "3", path, "-q", NULL);
    cr_expect_eq(lines_of(r.out, lines, 64), 3, "options after FILE work");
    run_free(&r);
    free(path);
    json_free(want);
}

Test(cli, stdin_dash_reads_the_same)
{
    char *path = fixture("clean", ".lct");
    run a = run_lct(NULL, "dump", path, NULL);
    run b = run_lct(path, "dump", "-", NULL);
    cr_expect_eq(b.status, 0);
    cr_expect_eq(a.outlen, b.outlen);
    cr_expect(a.outlen == b.outlen && !memcmp(a.out, b.out, a.outlen));
    run_free(&a);
    run_free(&b);
    run c = run_lct(path, "info", "-", NULL);
    cr_expect_eq(c.status, 0);
    cr_expect(strncmp(c.out, "Trace file: -\n", 14) == 0, "%s", c.out);
    run_free(&c);
    free(path);
}

Test(cli, closed_pipe_ends_quietly)
{
    int p[2];
    cr_assert_eq(pipe(p), 0);
    char err_path[] = "/tmp/lct-cli-err-XXXXXX";
    int err_fd = mkstemp(err_path);
    pid_t pid = fork();
    if (pid == 0) {
        close(p[0]);
        dup2(p[1], 1);
        dup2(err_fd, 2);
        execl(LCT_TOOL, LCT_TOOL, "dump", LCT_SAMPLE, (char *)NULL);
        _exit(127);
    }
    close(p[1]);
    char buf[100];
    cr_assert_gt(read(p[0], buf, sizeof buf), 0);
    close(p[0]); /* like `| head -c 100` */
    int ws;
    waitpid(pid, &ws, 0);
    cr_expect(WIFEXITED(ws), "killed by signal %d", WTERMSIG(ws));
    cr_expect_eq(WEXITSTATUS(ws), 0);
    size_t errlen;
    char *err = read_whole_file(err_path, &errlen);
    cr_expect_eq(errlen, 0, "stderr: %s", err);
    free(err);
    unlink(err_path);
}

/* Under --lazy, args that cannot be rendered still leave one whole JSON
 * object on the line, saying so, and the reason on stderr. */
Test(cli, dump_lazy_prints_whole_lines_when_args_cannot_render)
{
    mpw file, body;
    mpw_init(&file);
    mpw_init(&body);
    mpw_std_header(&body);
    mpw_frame(&file, &body);
    mpw_reset(&body);
    mpw_record_begin(&body, 1, 2, "bad.op");
    mpw_map(&body, 1);
    mpw_str(&body, "k");
    mpw_raw(&body, "\xc1", 1); /* reserved byte: no value */
    mpw_frame(&file, &body);
    mpw_reset(&body);
    mpw_record_begin(&body, 3, 4, "good.op");
    mpw_map(&body, 0);
    mpw_frame(&file, &body);
    char *path = tmp_file_with(file.buf, file.len);
    run r = run_lct(NULL, "dump", "--lazy", path, NULL);
    cr_expect_eq(r.status, 3);
    char *nl = memchr(r.out, '\n', r.outlen);
    cr_assert_not_null(nl, "%s", r.out);
    jv *first = json_parse(r.out, (size_t)(nl - r.out));
    cr_assert_not_null(first, "not one JSON object: %.*s",
                       (int)(nl - r.out), r.out);
    cr_expect_eq(json_get(first, "args")->t, J_NULL);
    cr_expect_str_eq(json_get(first, "qualname")->s, "bad.op");
    cr_expect_eq(json_get(first, "args_error")->t, J_STR);
    jv *second = json_parse(nl + 1, r.outlen - (size_t)(nl + 1 - r.out));
    cr_expect_not_null(second, "%s", nl + 1);
    cr_expect(strstr(r.err, "args cannot be rendered"), "%s", r.err);
    /* on two threads (and as CSV) the same lines and status */
    run two = run_lct(NULL, "dump", "--lazy", "-j", "2", path, NULL);
    cr_expect_eq(two.status, 3);
    cr_expect_str_eq(two.out, r.out);
    run_free(&two);
    run c1 = run_lct(NULL, "dump", "--lazy", "--csv", "-j", "1", path, NULL);
    run c2 = run_lct(NULL, "dump", "--lazy", "--csv", "-j", "2", path, NULL);
    cr_expect_eq(c1.status, 3);
    cr_expect_eq(c2.status, 3);
    cr_expect_str_eq(c2.out, c1.out);
    cr_expect(strstr(c1.out, "bad.op,\r\n"), "args empty: %s", c1.out);
    run_free(&c1);
    run_free(&c2);
    json_free(first);
    json_free(second);
    run_free(&r);
    unlink(path);
    free(path);
    mpw_free(&file);
    mpw_free(&body);
}

/* MARK: --fields, --qualname, --unwrap, --hex */

/* dump --fields: only what was asked, in that order; idx counts records
 * as the reader yields them, filtered or not. */
Test(cli, dump_fields_projects_each_record)
{
    char *path = fixture("malformed_mixed", ".lct");
    run all = run_lct(NULL, "dump", "-q", path, NULL);
    run some = run_lct(NULL, "dump", "-q", "--fields", "qualname,idx,t_mono",
                       path, NULL);
    cr_assert_eq(some.status, all.status);
    const char *a = all.out, *b = some.out;
    uint64_t idx = 0;
    for (; *a && *b; idx++) {
        const char *na = strchr(a, '\n'), *nb = strchr(b, '\n');
        cr_assert(na && nb);
        jv *full = json_parse(a, (size_t)(na - a));
        jv *proj = json_parse(b, (size_t)(nb - b));
        cr_assert(full && proj, "%.*s", (int)(nb - b), b);
        cr_expect_eq(proj->n, 3, "three members");
        cr_expect(jv_equal(json_get(proj, "qualname"), json_get(full, "qualname")));
        cr_expect(jv_equal(json_get(proj, "t_mono"), json_get(full, "t_mono")));
        cr_expect_eq(json_get(proj, "idx")->u, idx);
        cr_expect(strncmp(b, "{\"qualname\":", 12) == 0, "in the order asked");
        json_free(full);
        json_free(proj);
        a = na + 1;
        b = nb + 1;
    }
    cr_expect(!*a && !*b, "as many lines");
    run bad = run_lct(NULL, "dump", "--fields", "t_mono,nope", path, NULL);
    cr_expect_eq(bad.status, 2);
    cr_expect(strstr(bad.err, "--fields"), "%s", bad.err);
    run_free(&all);
    run_free(&some);
    run_free(&bad);
    free(path);
}

/* --qualname: exact name, suffix after a dot, or glob; a pattern that
 * selects nothing is said on stderr.  --unwrap and --bin hex. */
Test(cli, dump_qualname_unwrap_and_hex)
{
    const char *sample = LCT_SAMPLE;
    struct {
        const char *pattern;
        size_t lines;
    } cases[] = {
        {"lmcache.v1.distributed.storage_manager.StorageManager.finish_write",
         280},
        {"finish_write", 280},
        {"StorageManager.finish_write", 280},
        {"inish_write", 0}, /* a suffix only after a dot */
        {"*_write", 560},
        {"__exit__", 610},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        run r = run_lct(NULL, "dump", "--qualname", cases[i].pattern, sample,
                        NULL);
        cr_expect_eq(count_lines(r.out), cases[i].lines, "%s",
                     cases[i].pattern);
        cr_expect_eq(strstr(r.err, "matched no record") != NULL,
                     cases[i].lines == 0, "%s: %s", cases[i].pattern, r.err);
        run_free(&r);
    }
    run plain = run_lct(NULL, "dump", "-n", "1", sample, NULL);
    run flat = run_lct(NULL, "dump", "-n", "1", "--unwrap", "--bin", "hex",
                       sample, NULL);
    cr_expect(strstr(plain.out, "\"__t__\""), "%s", plain.out);
    cr_expect_null(strstr(flat.out, "__t__"), "%s", flat.out);
    jv *a = json_parse(plain.out, plain.outlen);
    jv *b = json_parse(flat.out, flat.outlen);
    cr_assert(a && b);
    const jv *key0 = &json_get(json_get(a, "args"), "keys")->items[0];
    const jv *flat0 = &json_get(json_get(b, "args"), "keys")->items[0];
    const jv *b64 = json_get(json_get(key0, "v"), "chunk_hash");
    const jv *hex = json_get(flat0, "chunk_hash");
    cr_assert(b64 && hex);
    cr_expect_eq(hex->slen, 64, "32 bytes as hex: %s", hex->s);
    cr_expect_eq(b64->slen, 44);
    json_free(a);
    json_free(b);
    run_free(&plain);
    run_free(&flat);
    run bad = run_lct(NULL, "dump", "--bin", "octal", sample, NULL);
    cr_expect_eq(bad.status, 2);
    run_free(&bad);
}

/* MARK: --range and --at */

/* --range by record number with Python's slice rules; --at by offset,
 * a skipped frame shown with why. */
Test(cli, dump_range_and_at)
{
    char *path = fixture("malformed_mixed", ".lct");
    run all = run_lct(NULL, "dump", "-q", path, NULL);
    char *lines[64];
    size_t n = lines_of(all.out, lines, 64);
    cr_assert_geq(n, 5);
    struct {
        const char *range;
        size_t from, to;
    } cases[] = {{"1:3", 1, 3}, {":2", 0, 2}, {"-2:", n - 2, n},
                 {"-3:-1", n - 3, n - 1}, {"5:2", 0, 0}, {":", 0, n},
                 {"100:", 0, 0}};
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        run r = run_lct(NULL, "dump", "-q", "--range", cases[c].range, path,
                        NULL);
        char *got[64];
        size_t m = lines_of(r.out, got, 64);
        size_t want = cases[c].to > cases[c].from ? cases[c].to - cases[c].from
                                                  : 0;
        cr_expect_eq(m, want, "--range %s", cases[c].range);
        for (size_t i = 0; i < m && i < want; i++)
            cr_expect_str_eq(got[i], lines[cases[c].from + i], "--range %s",
                             cases[c].range);
        run_free(&r);
    }
    /* --at: a record's own offset gives its line; a skipped frame's gives
     * why, and its body. */
    jv *first = json_parse(lines[0], strlen(lines[0]));
    char off[32];
    snprintf(off, sizeof off, "%llu",
             (unsigned long long)json_get(first, "offset")->u);
    run at = run_lct(NULL, "dump", "--at", off, path, NULL);
    cr_expect_eq(at.status, 0);
    cr_expect(strncmp(at.out, lines[0], strlen(lines[0])) == 0, "%s", at.out);
    run_free(&at);
    at = run_lct(NULL, "dump", "--at", "1102", path, NULL);
    cr_expect_eq(at.status, 3);
    jv *bad = json_parse(at.out, at.outlen);
    cr_assert_not_null(bad, "%s", at.out);
    cr_expect(strstr(json_get(bad, "error")->s, "missing required field"));
    cr_expect_eq(json_get(bad, "body")->t, J_OBJ);
    run_free(&at);
    at = run_lct(NULL, "dump", "--at", "3", path, NULL);
    cr_expect_eq(at.status, 1, "inside the header");
    run_free(&at);
    json_free(first);
    json_free(bad);
    run_free(&all);
    free(path);
}

/* dump --at: options that choose among records are refused, not ignored;
 * --fields is honoured (idx as a plain dump numbers it); an offset that
 * holds no record frame is said for what it is. */
Test(cli, dump_at_refuses_honours_and_says_what_is_there)
{
    static const char *const refused[][3] = {
        {"-n", "3", "-n"},         {"--range", "1:2", "--range"},
        {"--since", "1", "--since"}, {"--until", "1", "--until"},
        {"--qualname", "x", "--qualname"}, {"-f", NULL, "--follow"}};
    for (size_t i = 0; i < sizeof refused / sizeof *refused; i++) {
        run t = refused[i][1]
                    ? run_lct(NULL, "dump", "--at", "1679", refused[i][0],
                              refused[i][1], LCT_SAMPLE, NULL)
                    : run_lct(NULL, "dump", "--at", "1679", refused[i][0],
                              LCT_SAMPLE, NULL);
        cr_expect_eq(t.status, 2, "%s", refused[i][0]);
        char want[64];
        snprintf(want, sizeof want, "--at and %s", refused[i][2]);
        cr_expect(strstr(t.err, want), "%s", t.err);
        cr_expect_eq(t.outlen, 0);
        run_free(&t);
    }
    run t = run_lct(NULL, "dump", "--at", "1679", "--fields",
                    "idx,offset,t_mono", LCT_SAMPLE, NULL);
    cr_expect_eq(t.status, 0, "%s", t.err);
    cr_expect_str_eq(t.out, "{\"idx\":2,\"offset\":1679,\"t_mono\":0.00287}\n");
    run_free(&t);
    t = run_lct(NULL, "dump", "--at", "0", LCT_SAMPLE, NULL);
    cr_expect_eq(t.status, 1);
    cr_expect(strstr(t.err, "offset 0 is the header frame"), "%s", t.err);
    run_free(&t);
    t = run_lct(NULL, "dump", "--at", "7", LCT_SAMPLE, NULL);
    cr_expect(strstr(t.err, "offset 7 is inside the header frame"), "%s",
              t.err);
    run_free(&t);
    t = run_lct(NULL, "dump", "--at", "99999999", LCT_SAMPLE, NULL);
    cr_expect(strstr(t.err, "offset 99999999 is past the end of the file "
                            "(1963217 bytes)"),
              "%s", t.err);
    run_free(&t);
}

/* MARK: CSV */

/* dump --csv's bytes, pinned: on every fixture and the sample they hash
 * as test/golden/dump-csv.sha256 says (written before the CSV fast
 * path), and on strings with quotes, commas, a backslash, UTF-8, a
 * control byte and a bidi control they are test/golden's file. */
Test(cli, dump_csv_bytes_stay_as_they_were)
{
    char cmd[1024];
    snprintf(cmd, sizeof cmd,
             "cd '%s/..' && while read -r sum file; do "
             "got=$('%s' dump --csv \"$file\" 2>/dev/null | "
             "sha256sum | cut -d' ' -f1); [ \"$got\" = \"$sum\" ] || "
             "{ echo \"differs: $file\"; exit 1; }; done "
             "< test/golden/dump-csv.sha256",
             LCT_FIXTURES_DIR "/..", LCT_TOOL);
    cr_expect_eq(system(cmd), 0, "a file's CSV differs from before");
    char *path;
    lct_writer *w = tmp_trace_writer(&path);
    const char *qs[] = {"S.plain", "S.with,comma", "S.\"quoted\"",
                        "S.tab\there"};
    const char *vals[] = {"a \"quote\", a comma", "back\\slash \"q\"",
                          "caf\xc3\xa9 \"x\"", "ctl\x01 \"y\"",
                          "bidi\xe2\x80\xae \"z\""};
    for (int i = 0; i < 5; i++) {
        const char *q = qs[i % 4];
        lct_writer_record_begin(w, i, i, q, strlen(q));
        lct_writer_map(w, 1);
        lct_writer_cstr(w, "s");
        lct_writer_str(w, vals[i], strlen(vals[i]));
        cr_assert_eq(lct_writer_end(w, NULL), LCT_OK);
    }
    lct_writer_close(w);
    run r = run_lct(NULL, "dump", "--csv", path, NULL);
    cr_expect_eq(r.status, 0, "%s", r.err);
    size_t len;
    char *want = read_whole_file(LCT_FIXTURES_DIR
                                 "/../golden/dump-csv-hostile.csv", &len);
    cr_assert(want);
    cr_expect_str_eq(r.out, want);
    free(want);
    run_free(&r);
    unlink(path);
    free(path);
    /* A field longer than the buffer the fast path fills at a time. */
    w = tmp_trace_writer(&path);
    static char longer[10001];
    memset(longer, 'x', 10000);
    lct_writer_record_begin(w, 0, 0, "S.long", 6);
    lct_writer_map(w, 1);
    lct_writer_cstr(w, "s");
    lct_writer_cstr(w, longer);
    cr_assert_eq(lct_writer_end(w, NULL), LCT_OK);
    lct_writer_close(w);
    r = run_lct(NULL, "dump", "--csv", "--fields", "args", path, NULL);
    static char expect[10100];
    snprintf(expect, sizeof expect, "args\r\n\"{\"\"s\"\":\"\"%s\"\"}\"\r\n",
             longer);
    cr_expect_str_eq(r.out, expect);
    run_free(&r);
    unlink(path);
    free(path);
}

/* The CSV fast path doubles quotes sixteen bytes at a time: args whose
 * JSON is 8 to 9,000 bytes, with quotes at every place in a block
 * (strings of 0 to 6 bytes), and one with a backslash (which vis
 * escapes) after 4,096 bytes, each against the JSON line's args with
 * quotes (and backslashes) doubled by hand. */
Test(cli, dump_csv_doubles_quotes_at_every_place)
{
    enum { N = 130 };
    char *path;
    lct_writer *w = tmp_trace_writer(&path);
    for (int i = 0; i < N; i++) {
        unsigned n = i < 100 ? (unsigned)i : 900 + (unsigned)i * 3;
        lct_writer_record_begin(w, i, i, "S.q", 3);
        lct_writer_map(w, 1);
        lct_writer_cstr(w, "s");
        lct_writer_array(w, n + 1);
        for (unsigned j = 0; j < n; j++)
            lct_writer_str(w, "abcdef", (j + (unsigned)i) % 7);
        lct_writer_cstr(w, i == N - 1 ? "back\\slash" : "end");
        cr_assert_eq(lct_writer_end(w, NULL), LCT_OK);
    }
    lct_writer_close(w);
    run c = run_lct(NULL, "dump", "--csv", "--fields", "args", path, NULL);
    run j = run_lct(NULL, "dump", "--fields", "args", path, NULL);
    cr_assert_eq(c.status, 0, "%s", c.err);
    cr_assert_eq(j.status, 0, "%s", j.err);
    size_t cap = 2 * strlen(j.out) + 64, at = 0;
    char *want = malloc(cap);
    at += (size_t)snprintf(want, cap, "args\r\n");
    for (const char *line = j.out; *line; line = strchr(line, '\n') + 1) {
        const char *args = line + strlen("{\"args\":");
        const char *end = strchr(line, '\n') - 1; /* the line's '}' */
        want[at++] = '"';
        for (const char *p = args; p < end; p++) {
            want[at++] = *p;
            if (*p == '"' || *p == '\\')
                want[at++] = *p;
        }
        at += (size_t)snprintf(want + at, cap - at, "\"\r\n");
    }
    cr_expect(strstr(j.out, "back\\\\slash") != NULL, "%.200s", j.out);
    cr_expect_str_eq(c.out, want);
    free(want);
    run_free(&c);
    run_free(&j);
    unlink(path);
    free(path);
}
