/*
 * test_open.c - opening from the filesystem: errors that carry errno,
 * the empty file, inputs that cannot be mapped (pipe, FIFO, /dev/stdin,
 * character devices), the no-mmap flag, and descriptor hygiene.
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "files.h"
#include "lct.h"
#include "mpw.h"
#include "base/error_internal.h"

/* These tests wait on other processes: a regression that hangs one
 * fails it instead of stalling the run. */
TestSuite(open, .timeout = 120);

static int open_fd_count(void)
{
    DIR *d = opendir("/proc/self/fd");
    cr_assert_not_null(d);
    int n = 0;
    while (readdir(d))
        n++;
    closedir(d);
    return n;
}

static int count_records(lct_reader *r)
{
    lct_record rec;
    int n = 0;
    while (lct_next(r, &rec) == 1)
        n++;
    return n;
}

static void expect_sys_error(const char *path, int want_errno)
{
    lct_reader *r = (lct_reader *)1;
    lct_error err;
    memset(&err, -1, sizeof err);
    cr_expect_eq(lct_open(path, 0, &r, &err), LCT_ERR_SYS, "%s", path);
    cr_expect_null(r);
    cr_expect_eq(err.code, LCT_ERR_SYS);
    cr_expect_eq(err.sys_errno, want_errno, "%s: errno %d, want %d", path,
                 err.sys_errno, want_errno);
    cr_expect_eq(err.offset, 0);
    cr_expect(strstr(err.message, path) != NULL, "%s", err.message);
    cr_expect(strstr(err.message, strerror(want_errno)) != NULL, "%s",
              err.message);
}

Test(open, missing_file_directory_and_not_a_directory)
{
    expect_sys_error("/nonexistent/trace.lct", ENOENT);
    expect_sys_error("/tmp", EISDIR);
    char *file = tmp_file_with("x", 1);
    char under[4200];
    snprintf(under, sizeof under, "%s/child.lct", file);
    expect_sys_error(under, ENOTDIR);
    unlink(file);
    free(file);
}

Test(open, no_permission_carries_eacces)
{
    mpw t;
    mpw_init(&t);
    mpw_simple_trace(&t, 1);
    char *path = tmp_file_with(t.buf, t.len);
    cr_assert_eq(chmod(path, 0), 0);
    /* Root reads anything: act as nobody while opening, then as root
     * again to remove the file (nobody may not, in a sticky /tmp). */
    bool root = geteuid() == 0;
    if (root) {
        cr_assert_eq(setegid(65534), 0);
        cr_assert_eq(seteuid(65534), 0);
    }
    expect_sys_error(path, EACCES);
    if (root) {
        cr_assert_eq(seteuid(0), 0);
        cr_assert_eq(setegid(0), 0);
    }
    cr_expect_eq(unlink(path), 0, "%s: %s", path, strerror(errno));
    mpw_free(&t);
    free(path);
}

Test(open, empty_file_is_the_empty_error)
{
    char *path = tmp_file_with("", 0);
    lct_reader *r;
    lct_error err;
    memset(&err, 0xa5, sizeof err);
    cr_expect_eq(lct_open(path, 0, &r, &err), LCT_ERR_EMPTY);
    cr_expect_eq(err.code, LCT_ERR_EMPTY);
    cr_expect_eq(err.offset, 0);
    cr_expect(strstr(err.message, "is empty") != NULL, "%s", err.message);
    cr_expect(strstr(err.message, "unexpected EOF reading frame length"));
    cr_expect_eq(err.sys_errno, 0);
    cr_expect_eq(lct_open("/dev/null", 0, &r, &err), LCT_ERR_EMPTY,
                 "a character device is read, and it is empty");
    unlink(path);
    free(path);
}

/* Write data to fd from a child process, then close it. */
static pid_t feed(int fd, const mpw *data)
{
    pid_t pid = fork();
    cr_assert_neq(pid, -1);
    if (pid == 0) {
        size_t off = 0;
        while (off < data->len) {
            ssize_t w = write(fd, data->buf + off, data->len - off);
            if (w <= 0)
                _exit(1);
            off += (size_t)w;
        }
        _exit(0);
    }
    return pid;
}

Test(open, pipe_is_streamed)
{
    mpw t;
    mpw_init(&t);
    mpw_simple_trace(&t, 5000); /* several times a pipe's buffer */
    cr_assert_gt(t.len, 200000);
    int p[2];
    cr_assert_eq(pipe(p), 0);
    pid_t pid = feed(p[1], &t);
    close(p[1]);
    lct_reader *r;
    lct_error err;
    cr_assert_eq(lct_open_fd(p[0], "<stdin>", 0, &r, &err), LCT_OK, "%s",
                 err.message);
    cr_expect_eq(count_records(r), 5000);
    lct_stats st;
    lct_reader_stats(r, &st);
    cr_expect_eq(st.file_size, t.len);
    cr_expect_str_eq(lct_reader_path(r), "<stdin>");
    lct_close(r);
    cr_expect_neq(fcntl(p[0], F_GETFD), -1, "the caller's fd stays open");
    close(p[0]);
    waitpid(pid, NULL, 0);
    mpw_free(&t);
}

Test(open, fifo_by_path)
{
    char dir[] = "/tmp/lct-fifo-XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    char path[64];
    snprintf(path, sizeof path, "%s/trace.lct", dir);
    cr_assert_eq(mkfifo(path, 0600), 0);
    mpw t;
    mpw_init(&t);
    mpw_simple_trace(&t, 10);
    pid_t pid = fork();
    if (pid == 0) {
        int fd = open(path, O_WRONLY);
        if (fd < 0)
            _exit(1);
        pid_t inner = feed(fd, &t);
        waitpid(inner, NULL, 0);
        _exit(0);
    }
    lct_reader *r;
    lct_error err;
    cr_assert_eq(lct_open(path, 0, &r, &err), LCT_OK, "%s", err.message);
    cr_expect_eq(count_records(r), 10);
    lct_close(r);
    waitpid(pid, NULL, 0);
    unlink(path);
    rmdir(dir);
    mpw_free(&t);
}

Test(open, dev_stdin)
{
    mpw t;
    mpw_init(&t);
    mpw_simple_trace(&t, 3);
    int p[2];
    cr_assert_eq(pipe(p), 0);
    pid_t pid = feed(p[1], &t);
    close(p[1]);
    cr_assert_neq(dup2(p[0], 0), -1);
    close(p[0]);
    lct_reader *r;
    lct_error err;
    cr_assert_eq(lct_open("/dev/stdin", 0, &r, &err), LCT_OK, "%s",
                 err.message);
    cr_expect_eq(count_records(r), 3);
    lct_close(r);
    waitpid(pid, NULL, 0);
    mpw_free(&t);
}

Test(open, no_mmap_flag_reads_the_same)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/clean.lct", LCT_FIXTURES_DIR);
    lct_reader *a, *b;
    cr_assert_eq(lct_open(path, 0, &a, NULL), LCT_OK);
    cr_assert_eq(lct_open(path, LCT_NO_MMAP, &b, NULL), LCT_OK);
    lct_record ra, rb;
    int n = 0;
    while (lct_next(a, &ra) == 1) {
        cr_assert_eq(lct_next(b, &rb), 1);
        cr_expect_eq(ra.offset, rb.offset);
        cr_expect_eq(ra.length, rb.length);
        cr_expect_eq(memcmp(ra.body.ptr, rb.body.ptr, ra.body.len), 0);
        n++;
    }
    cr_expect_eq(lct_next(b, &rb), 0);
    cr_expect_eq(n, 40);
    lct_close(a);
    lct_close(b);
}

/* Mappings of trace files (the allocator's own, which a sanitizer build
 * adds as it goes, are not counted). */
static int mapping_count(void)
{
    FILE *f = fopen("/proc/self/maps", "r");
    cr_assert_not_null(f);
    char line[8192];
    int n = 0;
    while (fgets(line, sizeof line, f))
        n += strstr(line, ".lct") != NULL;
    fclose(f);
    return n;
}

Test(open, no_descriptor_or_mapping_leaks_on_success_or_failure)
{
    int before = open_fd_count();
    int maps_before = mapping_count();
    static const char *names[] = {"clean", "bad_magic", "empty",
                                  "trunc_header_body", "schema_v3"};
    for (int round = 0; round < 1000; round++) {
        for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
            char path[4096];
            snprintf(path, sizeof path, "%s/%s.lct", LCT_FIXTURES_DIR,
                     names[i]);
            lct_reader *r;
            if (lct_open(path, LCT_QUIET, &r, NULL) == LCT_OK)
                lct_close(r);
        }
        lct_reader *r;
        lct_open("/tmp", 0, &r, NULL);
        char path[4096];
        snprintf(path, sizeof path, "%s/clean.lct", LCT_FIXTURES_DIR);
        if (lct_open(path, LCT_FOLLOW | LCT_QUIET, &r, NULL) == LCT_OK) {
            lct_reader_refresh(r, NULL);
            lct_close(r);
        }
    }
    /* Opened but not closed yet: a mapping is counted, so the count works. */
    char path[4096];
    snprintf(path, sizeof path, "%s/clean.lct", LCT_FIXTURES_DIR);
    lct_reader *held;
    cr_assert_eq(lct_open(path, 0, &held, NULL), LCT_OK);
    cr_expect_eq(mapping_count(), maps_before + 1);
    lct_close(held);
    cr_expect_eq(open_fd_count(), before, "descriptors leaked");
    cr_expect_eq(mapping_count(), maps_before, "mappings leaked");
}

/* A message is printable as it is (lct.h): a name escaped once, C style,
 * and a control byte from elsewhere (a server's reply) escaped too, so a
 * tool never needs to escape it again. */
Test(open, messages_are_escaped_once_whatever_they_hold)
{
    lct_error err;
    cr_assert_eq(lct_open("x\033y.lct", 0, &(lct_reader *){NULL}, &err),
                 LCT_ERR_SYS);
    cr_expect(strstr(err.message, "'x\\033y.lct'"), "%s", err.message);
    lct__fail(&err, LCT_ERR_BACKEND, 0, 0, "server said: %s",
              "ERR \033[31mred\r\n");
    cr_expect_str_eq(err.message, "server said: ERR \\033[31mred\\015\\012");
    for (const char *p = err.message; *p; p++)
        cr_expect((unsigned char)*p >= 0x20 && *p != 0x7f);
}
