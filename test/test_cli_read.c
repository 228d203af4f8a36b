/*
 * test_cli_read.c - the lct tool run as a program: how the commands read
 * their input: threads against one thread, the mapping against the stream,
 * a large trace, files that change while read (truncated, followed,
 * shrinking), standard input and FIFOs.
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

/* A new trace of `lct gen -n records --seed seed` (its malloc'd path),
 * and its size. */
static char *generated(int records, const char *seed, off_t *size)
{
    char *path = tmp_file_with("", 0), n[16];
    snprintf(n, sizeof n, "%d", records);
    run g = run_lct(NULL, "gen", "-n", n, "--seed", seed, path, NULL);
    cr_assert_eq(g.status, 0, "%s", g.err);
    run_free(&g);
    struct stat info;
    cr_assert_eq(stat(path, &info), 0);
    *size = info.st_size;
    return path;
}

/* The minor page faults of `lct dump -q --mmap [-j 1] path`, its output
 * dropped: a count of the memory it touched (mapped either way, so that
 * the file's pages count alike). */
static long dump_faults(const char *path, bool one_thread)
{
    pid_t pid = fork();
    cr_assert_neq(pid, -1);
    if (pid == 0) {
        int null = open("/dev/null", O_WRONLY);
        if (null < 0 || dup2(null, 1) < 0 || dup2(null, 2) < 0)
            _exit(126);
        if (one_thread)
            execl(LCT_TOOL, LCT_TOOL, "dump", "-q", "--mmap", "-j", "1",
                  path, (char *)NULL);
        else
            execl(LCT_TOOL, LCT_TOOL, "dump", "-q", "--mmap", path,
                  (char *)NULL);
        _exit(127);
    }
    int status;
    struct rusage use;
    cr_assert_eq(wait4(pid, &status, 0, &use), pid);
    cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "status %d",
              status);
    return use.ru_minflt;
}

/* Start lct with args (NULL-terminated) and its standard descriptors on
 * the given ones (-1 keeps the test's); the child closes every other end
 * listed in `close_in_child` (-1 terminated). */
static pid_t spawn_lct(int in, int out, int err, const int *close_in_child,
                       const char *const *args)
{
    pid_t pid = fork();
    cr_assert_neq(pid, -1);
    if (pid == 0) {
        if (in >= 0)
            dup2(in, 0);
        if (out >= 0)
            dup2(out, 1);
        if (err >= 0)
            dup2(err, 2);
        for (const int *c = close_in_child; *c >= 0; c++)
            close(*c);
        execv(LCT_TOOL, (char *const *)args);
        _exit(127);
    }
    return pid;
}

/* Read lines from fd until `want` newlines arrived or it ends. */
static int read_lines(int fd, char *out, size_t cap, int want)
{
    size_t got = 0;
    int lines = 0;
    while (lines < want && got < cap) {
        ssize_t n = read(fd, out + got, cap - got);
        if (n <= 0)
            break;
        for (ssize_t i = 0; i < n; i++)
            lines += out[got + (size_t)i] == '\n';
        got += (size_t)n;
    }
    return lines;
}

/* MARK: threads, the mapping and the stream */

Test(cli, parallel_output_is_identical_to_sequential)
{
    static const char *names[] = {"clean", "malformed_mixed", "trunc_tail_74",
                                  "huge_length", "header_only"};
    static const char *cmds[][2] = {{"check", NULL},   {"check", "--json"},
                                    {"stat", NULL},    {"stat", "--json"},
                                    {"info", NULL},    {"info", "--json"},
                                    {"dump", NULL},    {"dump", "--csv"},
#ifdef LCT_HAVE_SQLITE
                                    {"sql", "SELECT idx, offset, qualname "
                                            "FROM records WHERE idx > 3"},
#endif
                                   };
    for (size_t f = 0; f < sizeof names / sizeof *names + 1; f++) {
        char *path = f < sizeof names / sizeof *names
                         ? fixture(names[f], ".lct")
                         : strdup(LCT_SAMPLE);
        for (size_t c = 0; c < sizeof cmds / sizeof *cmds; c++) {
            const char *extra = cmds[c][1] ? cmds[c][1] : "-q";
            run one = run_lct(NULL, cmds[c][0], "-j", "1", extra, path, NULL);
            run three = run_lct(NULL, cmds[c][0], "-j", "3", extra, path, NULL);
            cr_expect_eq(one.status, three.status, "%s %s", cmds[c][0], path);
            cr_expect_str_eq(three.out, one.out, "%s %s %s", cmds[c][0], extra,
                             path);
            cr_expect_str_eq(three.err, one.err, "%s %s stderr", cmds[c][0],
                             path);
            run_free(&one);
            run_free(&three);
        }
        /* Warnings too, in the same order. */
        run one = run_lct(NULL, "stat", "-j", "1", path, NULL);
        run three = run_lct(NULL, "stat", "-j", "3", path, NULL);
        cr_expect_str_eq(three.err, one.err, "stat warnings %s", path);
        run_free(&one);
        run_free(&three);
        free(path);
    }
}

/* The mapping and the stream (the default for one pass) print the same
 * bytes, warnings included, for every command. */
Test(cli, mmap_and_stream_print_the_same)
{
    static const char *cmds[][2] = {{"check", "--json"}, {"stat", "--csv"},
                                    {"info", "--json"},  {"info", "-q"},
                                    {"dump", "-q"},      {"check", "-q"}};
    for (size_t f = 0; f < NFIXTURES + 1; f++) {
        char *path = f < NFIXTURES ? fixture(fixtures[f], ".lct")
                                   : strdup(LCT_SAMPLE);
        for (size_t c = 0; c < sizeof cmds / sizeof *cmds; c++) {
            run m = run_lct(NULL, cmds[c][0], "--mmap", cmds[c][1], path,
                            NULL);
            run s = run_lct(NULL, cmds[c][0], "--stream", cmds[c][1], path,
                            NULL);
            run d = run_lct(NULL, cmds[c][0], cmds[c][1], path, NULL);
            cr_expect_eq(m.status, s.status, "%s %s", cmds[c][0], path);
            cr_expect_str_eq(s.out, m.out, "%s %s %s", cmds[c][0],
                             cmds[c][1], path);
            cr_expect_str_eq(s.err, m.err, "%s %s stderr", cmds[c][0], path);
            cr_expect_str_eq(d.out, s.out, "the default is one of them");
            run_free(&m);
            run_free(&s);
            run_free(&d);
        }
        free(path);
    }
}

/* A process that may use one CPU renders a large trace's records as one
 * thread does: the batches for several threads (a frame index, each
 * lane's output held a batch at a time) were 9,762 page faults on this
 * 73 MB trace against 405, and 2.4x the CPU time. */
Test(cli, dump_on_one_cpu_renders_as_one_thread, .timeout = 120)
{
    off_t size;
    char *path = generated(40000, "5", &size);
    cr_assert_geq(size, 64 << 20, "threads by default from 64 MiB");
    cpu_set_t all;
    pin_to_one_cpu(&all); /* the tool inherits the mask */
    long one = dump_faults(path, true), chosen = dump_faults(path, false);
    unpin(&all);
    cr_expect_leq(chosen, one + one / 4 + 300,
                  "default %ld page faults, -j 1 %ld", chosen, one);
    unlink(path);
    free(path);
}

/* Past 16 MiB the default is whichever way a probe finds cheaper here
 * (LCT_ONE_PASS): every way prints the same, on a trace whose tail is
 * cut.  test_stream forces each way in the library. */
Test(cli, a_large_trace_reads_the_same_every_way, .timeout = 120)
{
    off_t size;
    char *path = generated(10000, "3", &size);
    cr_assert_gt(size, 17 << 20, "the probe's size, and more");
    cr_assert_eq(truncate(path, size - 100), 0);
    static const char *cmds[][4] = {{"check", "--json", "-j", "1"},
                                    {"stat", "--csv", "-j", "2"},
                                    {"keys", "--csv", "-j", "1"},
                                    {"mrc", "--json", "-j", "1"}};
    for (size_t c = 0; c < sizeof cmds / sizeof *cmds; c++) {
        run m = run_lct(NULL, cmds[c][0], "--mmap", cmds[c][1], cmds[c][2],
                        cmds[c][3], path, NULL);
        run s = run_lct(NULL, cmds[c][0], "--stream", cmds[c][1], cmds[c][2],
                        cmds[c][3], path, NULL);
        run d = run_lct(NULL, cmds[c][0], cmds[c][1], cmds[c][2], cmds[c][3],
                        path, NULL);
        cr_expect_eq(m.status, 3, "%s: the cut tail", cmds[c][0]);
        cr_expect(m.outlen > 0, "%s printed", cmds[c][0]);
        cr_expect_eq(s.status, m.status, "%s", cmds[c][0]);
        cr_expect_eq(d.status, m.status, "%s", cmds[c][0]);
        cr_expect_str_eq(s.out, m.out, "%s --stream", cmds[c][0]);
        cr_expect_str_eq(d.out, m.out, "%s by default", cmds[c][0]);
        cr_expect_str_eq(s.err, m.err, "%s --stream stderr", cmds[c][0]);
        cr_expect_str_eq(d.err, m.err, "%s stderr by default", cmds[c][0]);
        run_free(&m);
        run_free(&s);
        run_free(&d);
    }
    unlink(path);
    free(path);
}

/* dump -j N renders a batch of frames at a time on N threads: across
 * several batches, with frames skipped in different ones, its lines,
 * warnings and status are one thread's; -n stops at the same line; and
 * output that needs record numbers (--fields idx) is the same too. */
Test(cli, dump_in_parallel_batches_is_dump)
{
    char *path = tmp_file_with("", 0); /* gen replaces it */
    run g = run_lct(NULL, "gen", "-n", "30000", path, NULL);
    cr_assert_eq(g.status, 0, "%s", g.err);
    run_free(&g);
    /* Damage three frames in different batches: a byte no msgpack value
     * starts with, as the first of the body. */
    static const char *at[] = {"5000:5001", "13000:13001", "25000:25001"};
    int fd = open(path, O_RDWR);
    cr_assert_geq(fd, 0);
    for (int i = 0; i < 3; i++) {
        run o = run_lct(NULL, "dump", "--fields", "offset", "--range", at[i],
                        path, NULL);
        long long off = atoll(strchr(o.out, ':') + 1);
        cr_assert_gt(off, 0, "%s", o.out);
        cr_assert_eq(pwrite(fd, "\xc1", 1, off + 4), 1);
        run_free(&o);
    }
    close(fd);
    static const char *variants[][4] = {
        {"-q", NULL},
        {"--csv", NULL},
        {"-n", "17000", NULL},
        {"--qualname", "reserve_write", "--unwrap", NULL},
        {"--fields", "idx,qualname", NULL},
    };
    for (size_t v = 0; v < sizeof variants / sizeof *variants; v++) {
        const char *const *x = variants[v];
        run one = run_lct(NULL, "dump", "-j", "1", x[0], x[1] ? x[1] : path,
                          x[1] && x[2] ? x[2] : (x[1] ? path : NULL),
                          x[1] && x[2] ? path : NULL, NULL);
        run two = run_lct(NULL, "dump", "-j", "2", x[0], x[1] ? x[1] : path,
                          x[1] && x[2] ? x[2] : (x[1] ? path : NULL),
                          x[1] && x[2] ? path : NULL, NULL);
        cr_expect_eq(one.status, 3, "three frames skipped: %s", one.err);
        cr_expect_eq(two.status, one.status, "%s", x[0]);
        cr_expect(one.outlen > 0 && one.outlen == two.outlen &&
                      memcmp(one.out, two.out, one.outlen) == 0,
                  "dump %s: -j 2 printed other lines", x[0]);
        cr_expect_str_eq(two.err, one.err, "dump %s: warnings", x[0]);
        run_free(&one);
        run_free(&two);
    }
    run n = run_lct(NULL, "dump", "-j", "2", "-q", "-n", "17000", path, NULL);
    cr_expect_eq(count_lines(n.out), 17000);
    run_free(&n);
    unlink(path);
    free(path);
}

/* MARK: files that change while read */

Test(cli, file_truncated_during_dump_is_an_error_not_a_crash)
{
    mpw t;
    mpw_init(&t);
    mpw_simple_trace(&t, 200000); /* ~20 MB of JSON: far more than a pipe */
    char *path = tmp_file_with(t.buf, t.len);
    int p[2];
    cr_assert_eq(pipe(p), 0);
    char err_path[] = "/tmp/lct-cli-err-XXXXXX";
    int err_fd = mkstemp(err_path);
    pid_t pid = fork();
    if (pid == 0) {
        close(p[0]);
        dup2(p[1], 1);
        dup2(err_fd, 2);
        execl(LCT_TOOL, LCT_TOOL, "dump", path, (char *)NULL);
        _exit(127);
    }
    close(p[1]);
    /* lct now blocks on the full pipe, early in the file: cut it under it. */
    char buf[65536];
    cr_assert_gt(read(p[0], buf, sizeof buf), 0);
    cr_assert_eq(truncate(path, 1 << 20), 0);
    while (read(p[0], buf, sizeof buf) > 0)
        ;
    close(p[0]);
    int ws;
    waitpid(pid, &ws, 0);
    cr_expect(WIFEXITED(ws), "lct died of signal %d", WTERMSIG(ws));
    cr_expect_eq(WEXITSTATUS(ws), 1);
    size_t errlen;
    char *err = read_whole_file(err_path, &errlen);
    cr_expect(strstr(err, "file shrank while reading: bytes from offset "),
              "stderr: %s", err);
    free(err);
    unlink(err_path);
    unlink(path);
    free(path);
    mpw_free(&t);
}

Test(cli, dump_follow_waits_for_an_empty_file_and_prints_appends)
{
    char *path = tmp_file_with("", 0);
    mpw t;
    mpw_init(&t);
    mpw_simple_trace(&t, 5);
    int p[2];
    cr_assert_eq(pipe(p), 0);
    pid_t pid = fork();
    if (pid == 0) {
        close(p[0]);
        dup2(p[1], 1);
        execl(LCT_TOOL, LCT_TOOL, "dump", "--follow", "-q", path, (char *)NULL);
        _exit(127);
    }
    close(p[1]);
    /* The recorder writes the header late, and a record in two halves. */
    int fd = open(path, O_WRONLY | O_APPEND);
    struct timespec pause = {0, 300 * 1000 * 1000};
    nanosleep(&pause, NULL);
    size_t hlen = 4 + ((size_t)t.buf[2] << 8 | t.buf[3]);
    cr_assert_eq(write(fd, t.buf, hlen / 2), (ssize_t)(hlen / 2));
    nanosleep(&pause, NULL);
    size_t rest = t.len - hlen / 2 - 10;
    cr_assert_eq(write(fd, t.buf + hlen / 2, rest), (ssize_t)rest);
    nanosleep(&pause, NULL);
    cr_assert_eq(write(fd, t.buf + t.len - 10, 10), 10);
    close(fd);
    /* Read the five lines, then interrupt it like Ctrl-C. */
    char out[8192];
    size_t got = 0;
    int lines = 0;
    while (lines < 5 && got < sizeof out) {
        ssize_t n = read(p[0], out + got, sizeof out - got);
        if (n <= 0)
            break;
        for (ssize_t i = 0; i < n; i++)
            lines += out[got + (size_t)i] == '\n';
        got += (size_t)n;
    }
    cr_expect_eq(lines, 5, "%.*s", (int)got, out);
    kill(pid, SIGINT);
    int ws;
    waitpid(pid, &ws, 0);
    cr_expect(WIFEXITED(ws) && WEXITSTATUS(ws) == 0, "status %d", ws);
    close(p[0]);
    unlink(path);
    free(path);
    mpw_free(&t);
}

/* Like tail -F: a file that is not there yet is waited for; --from-end
 * prints only what is appended after the start. */
Test(cli, dump_follow_waits_for_a_missing_file_and_from_end, .timeout = 60)
{
    char dir[] = "/tmp/lct-cli-follow-XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    char path[64];
    snprintf(path, sizeof path, "%s/t.lct", dir);
    mpw t;
    mpw_init(&t);
    mpw_simple_trace(&t, 5);
    struct timespec pause = {0, 400 * 1000 * 1000};
    for (int from_end = 0; from_end < 2; from_end++) {
        unlink(path);
        if (from_end) { /* five records there before it starts */
            int fd = open(path, O_WRONLY | O_CREAT, 0644);
            cr_assert_eq(write(fd, t.buf, t.len), (ssize_t)t.len);
            close(fd);
        }
        int out[2];
        cr_assert_eq(pipe(out), 0);
        const char *args[] = {LCT_TOOL, "dump", "-f", "-q",
                              from_end ? "--from-end" : "--header",
                              "--fields", "idx", path, NULL};
        pid_t pid = spawn_lct(-1, out[1], -1, (const int[]){out[0], -1},
                              args);
        close(out[1]);
        nanosleep(&pause, NULL);
        /* Not there yet (first round), or appended to (second). */
        int fd = open(path, O_WRONLY | O_CREAT | O_APPEND, 0644);
        size_t header = 4 + ((size_t)t.buf[2] << 8 | t.buf[3]);
        if (from_end) /* five more records */
            cr_assert_eq(write(fd, t.buf + header, t.len - header),
                         (ssize_t)(t.len - header));
        else
            cr_assert_eq(write(fd, t.buf, t.len), (ssize_t)t.len);
        close(fd);
        char text[8192];
        int want = from_end ? 5 : 6; /* 5 appended; or header + 5 */
        cr_expect_eq(read_lines(out[0], text, sizeof text, want), want,
                     "round %d", from_end);
        /* Numbered as a plain dump numbers them: 5 to 9 after the five
         * that were there (it printed 0 to 4). */
        if (from_end)
            cr_expect(strncmp(text, "{\"idx\":5}\n", 10) == 0 &&
                          strstr(text, "{\"idx\":9}\n"),
                      "%s", text);
        kill(pid, SIGINT);
        int ws;
        waitpid(pid, &ws, 0);
        cr_expect(WIFEXITED(ws) && WEXITSTATUS(ws) == 0, "status %d", ws);
        /* Nothing more was printed: --from-end skipped the first five. */
        ssize_t more = read(out[0], text, sizeof text);
        cr_expect_leq(more, 0, "round %d: %.*s", from_end,
                      (int)(more > 0 ? more : 0), text);
        close(out[0]);
    }
    unlink(path);
    rmdir(dir);
    mpw_free(&t);
}

/* A followed file that shrinks ends `dump -f` with status 1, as lct(1)
 * says, and the message names the new size. */
Test(cli, dump_follow_exits_1_when_the_file_shrinks, .timeout = 30)
{
    mpw t;
    mpw_init(&t);
    mpw_simple_trace(&t, 5);
    char *path = tmp_file_with(t.buf, t.len);
    int out[2], err[2];
    cr_assert_eq(pipe(out), 0);
    cr_assert_eq(pipe(err), 0);
    const char *args[] = {LCT_TOOL, "dump", "-f", path, NULL};
    pid_t pid = spawn_lct(-1, out[1], err[1],
                          (const int[]){out[0], err[0], -1}, args);
    close(out[1]);
    close(err[1]);
    char text[4096];
    cr_expect_eq(read_lines(out[0], text, sizeof text, 5), 5);
    cr_assert_eq(truncate(path, 40), 0);
    int ws;
    waitpid(pid, &ws, 0);
    cr_expect(WIFEXITED(ws) && WEXITSTATUS(ws) == 1, "status %d", ws);
    ssize_t n = read(err[0], text, sizeof text - 1);
    text[n > 0 ? n : 0] = '\0';
    cr_expect(strstr(text, "bytes from offset 40 are gone"), "%s", text);
    close(out[0]);
    close(err[0]);
    unlink(path);
    free(path);
    mpw_free(&t);
}

/* MARK: standard input and FIFOs */

/* `(cat t.lct; sleep) | lct dump -n 1 -`: the record prints as soon as it
 * has arrived, not when the input ends; `-f -` is the same streaming. */
Test(cli, stdin_is_streamed_record_by_record, .timeout = 30)
{
    mpw t;
    mpw_init(&t);
    mpw_simple_trace(&t, 5);
    const char *modes[][2] = {{"-n", "1"}, {"-f", "-q"}};
    for (int m = 0; m < 2; m++) {
        int in[2], out[2];
        cr_assert_eq(pipe(in), 0);
        cr_assert_eq(pipe(out), 0);
        const char *args[] = {LCT_TOOL, "dump", modes[m][0], modes[m][1],
                              "-", NULL};
        pid_t pid = spawn_lct(in[0], out[1], -1,
                              (const int[]){in[1], out[0], -1}, args);
        close(in[0]);
        close(out[1]);
        cr_assert_eq(write(in[1], t.buf, t.len), (ssize_t)t.len);
        /* The input stays open: the lines must come anyway. */
        char text[4096];
        int want = m == 0 ? 1 : 5;
        cr_expect_eq(read_lines(out[0], text, sizeof text, want), want,
                     "mode %d", m);
        close(in[1]);
        int ws;
        waitpid(pid, &ws, 0);
        cr_expect(WIFEXITED(ws) && WEXITSTATUS(ws) == 0, "status %d", ws);
        close(out[0]);
    }
    mpw_free(&t);
}

/* -j 2 on a FIFO (no size, no seeking): read by one thread, not refused. */
Test(cli, threads_on_a_fifo_fall_back_to_one, .timeout = 30)
{
    char dir[] = "/tmp/lct-cli-fifo-XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    char path[64];
    snprintf(path, sizeof path, "%s/t.lct", dir);
    cr_assert_eq(mkfifo(path, 0600), 0);
    mpw t;
    mpw_init(&t);
    mpw_simple_trace(&t, 50);
    pid_t writer = fork();
    if (writer == 0) {
        int fd = open(path, O_WRONLY);
        _exit(fd >= 0 && write(fd, t.buf, t.len) == (ssize_t)t.len ? 0 : 1);
    }
    run r = run_lct(NULL, "check", "-j", "2", path, NULL);
    cr_expect_eq(r.status, 0, "%s", r.err);
    cr_expect(strstr(r.out, ": ok: 50 records"), "%s", r.out);
    waitpid(writer, NULL, 0);
    run_free(&r);
    unlink(path);
    rmdir(dir);
    mpw_free(&t);
}
