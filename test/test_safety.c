/*
 * test_safety.c - what the tool and the library guarantee about their
 * inputs and outputs on hostile data (issue 18): no output ever replaces
 * or truncates an input, outputs appear whole or not at all, rendering
 * stays linear in the input, and untrusted text is shown escaped.  One
 * test per finding, each failing on the code before its fix.
 */
#define _GNU_SOURCE /* memmem */
#include <criterion/criterion.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "files.h"
#include "lct.h"
#include "mpw.h"
#include "oracle.h"
#include "outfile.h"
#include "run.h"

TestSuite(safety, .timeout = 120);

/* A fresh directory for one test's files (tests run in parallel). */
static char *tmp_dir(void)
{
    char *d = strdup("/tmp/lct-safety-XXXXXX");
    cr_assert_not_null(mkdtemp(d));
    return d;
}

static char *in_dir(const char *dir, const char *name)
{
    char *p = malloc(4096);
    snprintf(p, 4096, "%s/%s", dir, name);
    return p;
}

/* Files in dir, "." and ".." aside. */
static int entries(const char *dir)
{
    DIR *d = opendir(dir);
    cr_assert_not_null(d);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        n += strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
    closedir(d);
    return n;
}

static void remove_dir(char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    while (d && (e = readdir(d))) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        char *p = in_dir(dir, e->d_name);
        unlink(p);
        free(p);
    }
    if (d)
        closedir(d);
    rmdir(dir);
    free(dir);
}

static void copy_file(const char *from, const char *to)
{
    size_t len;
    char *data = read_whole_file(from, &len);
    cr_assert_not_null(data, "%s", from);
    FILE *f = fopen(to, "wb");
    cr_assert(f && fwrite(data, 1, len, f) == len);
    fclose(f);
    free(data);
}

static bool same_bytes(const char *a, const char *b)
{
    size_t la, lb;
    char *da = read_whole_file(a, &la), *db = read_whole_file(b, &lb);
    bool same = da && db && la == lb && memcmp(da, db, la) == 0;
    free(da);
    free(db);
    return same;
}

#define LCT(...) run_argv(NULL, (const char *const[]){LCT_TOOL, __VA_ARGS__, NULL})

/* MARK: 1. no output replaces an input */

/* `lct keys --oracle-general s.lct s.lct` left s.lct at 0 bytes, and
 * `lct mrc --svg s.lct s.lct` replaced it with the SVG; through a
 * symbolic or a hard link too.  Now each is refused before anything is
 * read (exit 2, naming both), and the trace is what it was. */
Test(safety, no_output_option_writes_over_an_input)
{
    char *dir = tmp_dir();
    char *trace = in_dir(dir, "s.lct"), *sym = in_dir(dir, "sym.lct"),
         *hard = in_dir(dir, "hard.lct");
    copy_file(LCT_SAMPLE, trace);
    cr_assert_eq(symlink(trace, sym), 0);
    cr_assert_eq(link(trace, hard), 0);
    const char *outs[] = {trace, sym, hard};
    for (int i = 0; i < 3; i++) {
        run r = LCT("keys", "--oracle-general", outs[i], trace);
        cr_expect_eq(r.status, 2, "keys to %s: %s", outs[i], r.err);
        cr_expect(strstr(r.err, outs[i]) && strstr(r.err, "s.lct") &&
                      strstr(r.err, "same file"),
                  "%s", r.err);
        run_free(&r);
        r = LCT("mrc", "--svg", outs[i], trace);
        cr_expect_eq(r.status, 2, "mrc to %s: %s", outs[i], r.err);
        cr_expect_eq(r.outlen, 0, "refused before anything was printed");
        run_free(&r);
        /* The other way round: the link is the input, the file the output. */
        r = LCT("keys", "--oracle-general", trace, outs[i]);
        cr_expect_eq(r.status, 2, "%s", r.err);
        run_free(&r);
    }
    cr_expect(same_bytes(trace, LCT_SAMPLE), "the trace changed");
    cr_expect_eq(entries(dir), 3, "no file was left behind");
    free(trace);
    free(sym);
    free(hard);
    remove_dir(dir);
}

/* An output is written under a temporary name and renamed when complete:
 * a run that fails leaves what was at OUT as it was, and no other file;
 * one that succeeds leaves OUT whole with the mode a new file gets. */
Test(safety, outputs_appear_whole_or_not_at_all)
{
    char *dir = tmp_dir();
    char *out = in_dir(dir, "out.bin"), *bad = in_dir(dir, "bad.lct");
    FILE *f = fopen(out, "w");
    fputs("what was there", f);
    fclose(f);
    f = fopen(bad, "w");
    fputs("not a trace at all", f);
    fclose(f);
    run r = LCT("keys", "--oracle-general", out, bad);
    cr_expect_eq(r.status, 1, "%s", r.err);
    run_free(&r);
    size_t len;
    char *kept = read_whole_file(out, &len);
    cr_expect_str_eq(kept, "what was there");
    free(kept);
    cr_expect_eq(entries(dir), 2);

    r = LCT("keys", "--oracle-general", out, LCT_SAMPLE);
    cr_expect_eq(r.status, 0, "%s", r.err);
    run_free(&r);
    struct stat st;
    cr_assert_eq(stat(out, &st), 0);
    cr_expect_eq(st.st_size % 24, 0);
    cr_expect_gt(st.st_size, 0);
    cr_expect_eq(entries(dir), 2, "the temporary name is gone");

    char *svg = in_dir(dir, "new.svg");
    mode_t mask = umask(022);
    r = LCT("mrc", "--svg", svg, LCT_SAMPLE);
    umask(mask);
    cr_expect_eq(r.status, 0, "%s", r.err);
    run_free(&r);
    cr_assert_eq(stat(svg, &st), 0);
    cr_expect_eq(st.st_mode & 0777, 0644, "mode %o", st.st_mode & 0777);

    char *trace = in_dir(dir, "g.lct");
    r = LCT("gen", "-n", "100", trace);
    cr_expect_eq(r.status, 0, "%s", r.err);
    run_free(&r);
    cr_expect_eq(entries(dir), 4);
    free(out);
    free(bad);
    free(svg);
    free(trace);
    remove_dir(dir);
}

/* A full disk: the output's error says why, and no file is left. */
Test(safety, a_write_error_says_why)
{
    run r = LCT("keys", "--oracle-general", "/dev/full", LCT_SAMPLE);
    cr_expect_eq(r.status, 1);
    cr_expect(strstr(r.err, "No space left on device"), "%s", r.err);
    run_free(&r);
    r = LCT("mrc", "--svg", "/dev/full", LCT_SAMPLE);
    cr_expect_eq(r.status, 1);
    cr_expect(strstr(r.err, "No space left on device"), "%s", r.err);
    run_free(&r);
    r = LCT("gen", "-n", "10", "/dev/full");
    cr_expect_eq(r.status, 1);
    cr_expect(strstr(r.err, "No space left on device"), "%s", r.err);
    run_free(&r);
}

/* The library's own check, for programs that write files. */
Test(safety, an_output_file_refuses_an_input_and_writes_whole)
{
    char *dir = tmp_dir();
    char *in = in_dir(dir, "in"), *link_to_in = in_dir(dir, "link"),
         *out = in_dir(dir, "out");
    copy_file(LCT_SAMPLE, in);
    cr_assert_eq(symlink("in", link_to_in), 0);
    const char *inputs[] = {"/nonexistent", in};
    outfile *o;
    lct_error err;
    cr_expect_eq(outfile_open(link_to_in, inputs, 2, &o, &err),
                 LCT_ERR_IS_INPUT);
    cr_expect_null(o);
    cr_expect(strstr(err.message, "link") && strstr(err.message, "/in'"),
              "%s", err.message);
    cr_assert_eq(outfile_open(out, inputs, 2, &o, &err), LCT_OK, "%s",
                 err.message);
    cr_expect_eq(write(outfile_fd(o), "abc", 3), 3);
    cr_expect_eq(access(out, F_OK), -1, "not there before the commit");
    cr_expect_eq(outfile_commit(o, &err), LCT_OK);
    size_t len;
    char *got = read_whole_file(out, &len);
    cr_expect_str_eq(got, "abc");
    free(got);
    /* Abort: what was there stays. */
    cr_assert_eq(outfile_open(out, inputs, 2, &o, &err), LCT_OK);
    cr_expect_eq(write(outfile_fd(o), "xyz!", 4), 4);
    outfile_abort(o);
    got = read_whole_file(out, &len);
    cr_expect_str_eq(got, "abc");
    free(got);
    cr_expect_eq(entries(dir), 3);
    free(in);
    free(link_to_in);
    free(out);
    remove_dir(dir);
}

/* MARK: 2. rendering linear in the input */

/* A record whose args hold a map whose key is a map whose key is ...,
 * `levels` deep. */
static char *keys_in_keys_trace(unsigned levels)
{
    mpw file, body;
    mpw_trace_begin(&file, &body);
    mpw_record_begin(&body, 1.0, 2.0, "x.op");
    mpw_map(&body, 1);
    mpw_str(&body, "a");
    for (unsigned i = 0; i < levels; i++)
        mpw_map(&body, 1);
    mpw_str(&body, "k");
    for (unsigned i = 0; i < levels; i++)
        mpw_uint(&body, 1);
    mpw_frame(&file, &body);
    return mpw_trace_finish(&file, &body);
}

/* 26 levels printed 268 MB from 349 bytes; 40 never ended.  A map is no
 * key Python can hash, so the reference skips such a record, and so does
 * every command, at every depth up to the limit, saying why, in output
 * within a constant factor of the file.  (lct_value_write_json prints
 * such values linearly where they are still met, read with LCT_LAZY:
 * test_json.) */
Test(safety, keys_nested_in_keys_render_linear_in_the_input)
{
    unsigned depths[] = {26, 40, LCT_MAX_DEPTH - 4};
    for (size_t d = 0; d < sizeof depths / sizeof *depths; d++) {
        char *path = keys_in_keys_trace(depths[d]);
        struct stat st;
        cr_assert_eq(stat(path, &st), 0);
        size_t bound = 100 * (size_t)st.st_size + 4096;
        run r = LCT("check", "-q", path);
        cr_expect_eq(r.status, 3, "skipped: %s", r.out);
        cr_expect(strstr(r.out, "Python cannot hash"), "%s", r.out);
        run_free(&r);
        r = LCT("dump", path);
        cr_expect_eq(r.status, 3, "%s", r.err);
        cr_expect_leq(r.outlen + r.errlen, bound, "%u levels: %zu bytes",
                      depths[d], r.outlen + r.errlen);
        run_free(&r);
#ifdef LCT_HAVE_SQLITE
        r = LCT("sql", "--json", "SELECT args FROM records", path);
        cr_expect_leq(r.outlen + r.errlen, bound);
        run_free(&r);
#endif
        unlink(path);
        free(path);
    }
}

/* MARK: 6b. refusals */

/*
 * Every command that reads a trace refuses one whose header is refused
 * (and a file that does not exist) with status 1, saying why, and frees what it
 * took on the way: in the sanitizer builds LeakSanitizer runs at exit
 * and turns a leak into another status and a report on stderr.
 */
Test(safety, every_command_refuses_a_file_and_leaks_nothing, .timeout = 120)
{
    char bad[4096], tmp[] = "/tmp/lct-refuse-XXXXXX";
    snprintf(bad, sizeof bad, "%s/bad_magic.lct", LCT_FIXTURES_DIR);
    cr_assert_not_null(mkdtemp(tmp));
    char out[4200];
    snprintf(out, sizeof out, "%s/out", tmp);
    const char *missing = "/nonexistent/trace.lct";
    const char *inputs[] = {bad, missing};
    for (int i = 0; i < 2; i++) {
        const char *in = inputs[i];
        const char *const cmds[][8] = {
            {"info", in},
            {"dump", in},
            {"check", in},
            {"stat", in},
            {"keys", in},
            {"keys", "--oracle-general", out, in},
            {"keys", "--lookup-jsonl", out, in},
            {"mrc", in},
            {"mrc", "--prefix", in},
            {"sim", "--capacity", "10", in},
            {"replay", "--backend", "null", "--speed", "0", in},
            {"replay", "--compare", "null", "mem:100", "--speed", "0", in},
            {"index", in},
#ifdef LCT_HAVE_SQLITE
            {"sql", "SELECT count(*) FROM records", in},
#endif
        };
        for (size_t c = 0; c < sizeof cmds / sizeof cmds[0]; c++) {
            const char *argv[10] = {LCT_TOOL};
            for (size_t k = 0; cmds[c][k]; k++)
                argv[k + 1] = cmds[c][k];
            run r = run_argv(NULL, argv);
            /* 2: --compare refuses what is not a regular file before
             * it opens it, as a usage error */
            cr_expect(r.status == 1 || (r.status == 2 && i == 1),
                      "%s on %s: status %d\n%s", cmds[c][0], in, r.status,
                      r.err);
            cr_expect_gt(r.errlen, 0, "%s on %s: no reason given", cmds[c][0],
                         in);
            cr_expect(!strstr(r.err, "LeakSanitizer"), "%s on %s leaks:\n%s",
                      cmds[c][0], in, r.err);
            run_free(&r);
        }
    }
    unlink(out);
    rmdir(tmp);
}

/* MARK: 7. the small ones */

/* A trace whose qualnames and model name hold U+202E (RIGHT-TO-LEFT
 * OVERRIDE) and U+202C, which reorder what a terminal shows. */
static char *bidi_trace(void)
{
    mpw file, body;
    mpw_trace_begin(&file, &body);
    mpw_record_begin(&body, 1.0, 2.0, "x.reserve_write");
    mpw_map(&body, 1);
    mpw_str(&body, "keys");
    mpw_array(&body, 1);
    mpw_objectkey_shape k = {.tag = "ObjectKey", .pairs = 4, .hash_len = 32,
                             .model = "m\xe2\x80\xae" "evil\xe2\x80\xac",
                             .rank = 0, .group = 0};
    mpw_objectkey(&body, &k);
    mpw_frame(&file, &body);
    mpw_reset(&body);
    mpw_record_begin(&body, 2.0, 3.0, "x.a\xe2\x80\xae" "b");
    mpw_map(&body, 0);
    mpw_frame(&file, &body);
    return mpw_trace_finish(&file, &body);
}

Test(safety, bidi_controls_are_shown_escaped)
{
    char *path = bidi_trace();
    run runs[] = {LCT("info", path), LCT("stat", path),
#ifdef LCT_HAVE_SQLITE
                  LCT("sql", "SELECT qualname FROM records", path),
#endif
                  LCT("keys", "--csv", path)};
    for (size_t i = 0; i < sizeof runs / sizeof *runs; i++) {
        cr_expect_eq(runs[i].status, 0, "run %zu: %s", i, runs[i].err);
        cr_expect_null(memmem(runs[i].out, runs[i].outlen, "\xe2\x80\xae", 3),
                       "run %zu printed U+202E raw:\n%s", i, runs[i].out);
        cr_expect(strstr(runs[i].out, "\\342\\200\\256"), "run %zu:\n%s", i,
                  runs[i].out);
        run_free(&runs[i]);
    }
    unlink(path);
    free(path);
}

/* The chart's title names the trace: a file name that is not UTF-8 made
 * the SVG ill-formed XML. */
Test(safety, the_svg_is_utf8_whatever_the_file_name)
{
    char *dir = tmp_dir();
    char *trace = in_dir(dir, "bad\xff\xfe<&\x01.lct"), *svg = in_dir(dir, "c.svg");
    copy_file(LCT_SAMPLE, trace);
    run r = LCT("mrc", "-q", "--svg", svg, trace);
    cr_expect_eq(r.status, 0, "%s", r.err);
    run_free(&r);
    size_t len;
    char *text = read_whole_file(svg, &len);
    cr_assert_not_null(text);
    cr_expect(oracle_utf8((const unsigned char *)text, len), "not UTF-8");
    for (size_t i = 0; i < len; i++)
        cr_expect((unsigned char)text[i] >= 0x20 || text[i] == '\n' ||
                      text[i] == '\t',
                  "control byte %#x at %zu", (unsigned char)text[i], i);
    cr_expect(strstr(text, "bad\\377\\376&lt;&amp;\\001.lct"), "%s", text);
    free(text);
    free(trace);
    free(svg);
    remove_dir(dir);
}

/* Aligned SQL output cut a text at its first NUL; CSV and JSON showed it
 * whole. */
#ifdef LCT_HAVE_SQLITE
Test(safety, sql_shows_a_nul_inside_a_text)
{
    run r = LCT("sql", "SELECT 'a' || char(0) || 'b' AS t", LCT_SAMPLE);
    cr_expect_eq(r.status, 0, "%s", r.err);
    cr_expect(strstr(r.out, "a\\0b"), "%s", r.out);
    run_free(&r);
}
#endif

/* keys and mrc refusing an input or an output freed nothing (the
 * sanitizer build's LeakSanitizer said so and failed the run). */
Test(safety, refusals_leak_nothing)
{
    run r = LCT("keys", "/nonexistent.lct");
    cr_expect_eq(r.status, 1);
    cr_expect_null(strstr(r.err, "LeakSanitizer"), "%s", r.err);
    run_free(&r);
    r = LCT("mrc", "--svg", "/nonexistent/dir/c.svg", LCT_SAMPLE);
    cr_expect_eq(r.status, 1, "%s", r.err);
    cr_expect_null(strstr(r.err, "LeakSanitizer"), "%s", r.err);
    run_free(&r);
}

/* A pipe was `-` to check and `<stdin>` to everything else. */
Test(safety, a_pipe_has_one_name)
{
    const char *const check[] = {LCT_TOOL, "check", "-", NULL};
    run r = run_argv(LCT_SAMPLE, check);
    cr_expect_eq(r.status, 0);
    cr_expect(strncmp(r.out, "<stdin>: ok", 11) == 0, "%s", r.out);
    run_free(&r);
}

/* `--since inf` was taken and `--since 1e999` refused: both are refused
 * now, as not finite. */
Test(safety, infinite_times_are_refused_alike)
{
    const char *words[] = {"inf", "1e999", "-inf", "nan"};
    for (size_t i = 0; i < sizeof words / sizeof *words; i++) {
        run r = LCT("dump", "--since", words[i], LCT_SAMPLE);
        cr_expect_eq(r.status, 2, "--since %s", words[i]);
        cr_expect(strstr(r.err, "finite"), "%s", r.err);
        run_free(&r);
    }
    run r = LCT("dump", "-n", "1", "--since", "1e-999", LCT_SAMPLE);
    cr_expect_eq(r.status, 0, "a tiny number is a number");
    run_free(&r);
}

/* `lct check /dev/urandom` read up to 4 GiB of a header its first bytes
 * had refused. */
Test(safety, random_bytes_are_refused_at_once)
{
    run r = LCT("check", "-q", "/dev/urandom");
    cr_expect_eq(r.status, 1, "%s", r.out);
    cr_expect(strstr(r.out, "/dev/urandom: refused"), "%s", r.out);
    run_free(&r);
}

/* Opening an empty file read whole (LCT_NO_MMAP) added 0 to a NULL
 * pointer (clang's UBSan reports it). */
Test(safety, an_empty_file_read_whole_is_empty)
{
    char *path = tmp_file_with("", 0);
    unsigned flags[] = {0, LCT_NO_MMAP, LCT_STREAM};
    for (size_t i = 0; i < sizeof flags / sizeof *flags; i++) {
        lct_reader *r;
        lct_error err;
        cr_expect_eq(lct_open(path, flags[i], &r, &err), LCT_ERR_EMPTY);
    }
    unlink(path);
    free(path);
}
