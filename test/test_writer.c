/*
 * test_writer.c - the trace writer (msgspec's bytes, byte for byte; one
 * write per frame, failed frames never written) and the version.
 */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "files.h"
#include "lct.h"

/* These tests wait on other processes: a regression that hangs one
 * fails it instead of stalling the run. */
TestSuite(writer, .timeout = 120);

/* Re-write a fixture through the writer: header, then each record. */
static void rewrite(const char *name)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s.lct", LCT_FIXTURES_DIR, name);
    size_t want_len;
    char *want = read_whole_file(path, &want_len);
    cr_assert_not_null(want);

    lct_reader *r;
    cr_assert_eq(lct_open(path, 0, &r, NULL), LCT_OK);
    char *out = tmp_file_with("", 0);
    lct_writer *w;
    lct_error err;
    cr_assert_eq(lct_writer_open(out, false, &w, &err), LCT_OK, "%s",
                 err.message);
    cr_assert_eq(lct_writer_header(w, lct_reader_header(r), &err), LCT_OK,
                 "%s", err.message);
    lct_record rec;
    while (lct_next(r, &rec) == 1) {
        lct_writer_record_begin(w, rec.t_mono, rec.t_wall, rec.qualname.ptr,
                                rec.qualname.len);
        lct_writer_value(w, rec.args);
        cr_assert_eq(lct_writer_end(w, &err), LCT_OK, "%s", err.message);
    }
    lct_writer_close(w);
    lct_close(r);

    size_t got_len;
    char *got = read_whole_file(out, &got_len);
    cr_expect_eq(got_len, want_len, "%s: %zu bytes, want %zu", name, got_len,
                 want_len);
    size_t first = 0;
    while (first < got_len && first < want_len && got[first] == want[first])
        first++;
    cr_expect_eq(first, want_len, "%s: first difference at byte %zu", name,
                 first);
    unlink(out);
    free(out);
    free(got);
    free(want);
}

Test(writer, reproduces_clean_byte_for_byte) { rewrite("clean"); }
Test(writer, reproduces_header_only_byte_for_byte) { rewrite("header_only"); }
Test(writer, reproduces_schema_v1_byte_for_byte)
{
    rewrite("schema_v1_readable");
}
Test(writer, reproduces_events_byte_for_byte) { rewrite("events"); }

/* The frame body the writer built, via a temporary file (a pipe would
 * block on frames larger than its buffer). */
static size_t frame_of(void (*build)(lct_writer *), unsigned char *out,
                       size_t cap)
{
    char *path = tmp_file_with("", 0);
    int fd = open(path, O_RDWR);
    unlink(path);
    free(path);
    cr_assert_geq(fd, 0);
    lct_writer *w;
    cr_assert_eq(lct_writer_open_fd(fd, &w, NULL), LCT_OK);
    lct_writer_begin(w);
    build(w);
    cr_assert_eq(lct_writer_end(w, NULL), LCT_OK);
    lct_writer_close(w);
    ssize_t n = pread(fd, out, cap, 0);
    close(fd);
    cr_assert_gt(n, 4);
    size_t len = (size_t)out[0] << 24 | out[1] << 16 | out[2] << 8 | out[3];
    cr_assert_eq(len, (size_t)n - 4);
    memmove(out, out + 4, len);
    return len;
}

static void ints(lct_writer *w)
{
    lct_writer_array(w, 10);
    lct_writer_int(w, 127);
    lct_writer_int(w, 128);
    lct_writer_int(w, -32);
    lct_writer_int(w, -33);
    lct_writer_int(w, 65536);
    lct_writer_int(w, INT64_MIN);
    lct_writer_uint(w, UINT64_MAX);
    lct_writer_float64(w, 1.0);
    lct_writer_bool(w, false);
    lct_writer_nil(w);
}

Test(writer, smallest_encodings_like_msgspec)
{
    unsigned char buf[256];
    size_t n = frame_of(ints, buf, sizeof buf);
    static const unsigned char want[] = {
        0x9a, 0x7f, 0xcc, 0x80, 0xe0, 0xd0, 0xdf, 0xce, 0x00, 0x01, 0x00,
        0x00, 0xd3, 0x80, 0, 0, 0, 0, 0, 0, 0, 0xcf, 0xff, 0xff, 0xff,
        0xff, 0xff, 0xff, 0xff, 0xff, 0xcb, 0x3f, 0xf0, 0, 0, 0, 0, 0, 0,
        0xc2, 0xc0};
    cr_assert_eq(n, sizeof want);
    cr_expect_eq(memcmp(buf, want, n), 0);
}

static char big[70000];
static void strings(lct_writer *w)
{
    lct_writer_array(w, 16);
    static const size_t sizes[] = {31, 32, 255, 256, 65535, 65536};
    for (int i = 0; i < 6; i++)
        lct_writer_str(w, big, sizes[i]);
    lct_writer_bin(w, big, 255);
    lct_writer_bin(w, big, 256);
    lct_writer_ext(w, 5, big, 4);
    lct_writer_ext(w, 5, big, 3);
    lct_writer_codec(w, "tuple");
    lct_writer_array(w, 0);
    lct_writer_map(w, 16);
    for (int i = 0; i < 16; i++) {
        lct_writer_uint(w, (uint64_t)i);
        lct_writer_nil(w);
    }
    lct_writer_array(w, 0);
    lct_writer_cstr(w, "x");
    lct_writer_str(w, "", 0);
    lct_writer_bin(w, "", 0);
}

Test(writer, sizes_at_every_boundary_read_back)
{
    memset(big, 'a', sizeof big);
    static unsigned char buf[300000];
    size_t n = frame_of(strings, buf, sizeof buf);
    lct_value v = lct_value_from(buf, n);
    size_t size;
    cr_assert_eq(lct_value_validate(v, &size), LCT_OK);
    cr_expect_eq(size, n);
    lct_iter it;
    lct_value e;
    cr_assert_eq(lct_array_iter_init(v, &it), LCT_OK);
    static const unsigned char heads[] = {0xbf, 0xd9, 0xd9, 0xda, 0xda,
                                          0xdb, 0xc4, 0xc5, 0xd6, 0xc7};
    for (int i = 0; i < 10; i++) {
        cr_assert_eq(lct_array_iter_next(&it, &e), 1);
        cr_expect_eq(e.ptr[0], heads[i], "value %d: 0x%02x", i, e.ptr[0]);
    }
    cr_assert_eq(lct_array_iter_next(&it, &e), 1);
    cr_expect(lct_value_codec(e, NULL, NULL));
    cr_assert_eq(lct_array_iter_next(&it, &e), 1);
    cr_expect_eq(e.ptr[0], 0xde, "16 pairs need map16");
}

/* Several processes append frames to one file at once: with one write
 * per frame (each under PIPE_BUF) none is torn. */
Test(writer, concurrent_appends_do_not_tear_frames)
{
    char *path = tmp_file_with("", 0);
    lct_writer *w;
    cr_assert_eq(lct_writer_open(path, true, &w, NULL), LCT_OK);
    lct_header h;
    memset(&h, 0, sizeof h);
    h.level = (lct_str){"storage", 7};
    h.trace_schema_version = 2;
    h.sm_config_json = (lct_str){"", 0};
    h.sm_config_digest = (lct_str){"", 0};
    cr_assert_eq(lct_writer_header(w, &h, NULL), LCT_OK);
    lct_writer_close(w);
    enum { WRITERS = 4, EACH = 2000 };
    pid_t pids[WRITERS];
    for (int k = 0; k < WRITERS; k++) {
        pids[k] = fork();
        if (pids[k] == 0) {
            lct_writer *cw;
            if (lct_writer_open(path, true, &cw, NULL) != LCT_OK)
                _exit(1);
            for (int i = 0; i < EACH; i++) {
                char q[32];
                int qn = snprintf(q, sizeof q, "writer%d.op", k);
                lct_writer_record_begin(cw, i, i, q, (size_t)qn);
                lct_writer_map(cw, 1);
                lct_writer_cstr(cw, "pad");
                lct_writer_str(cw, big, 200 + (size_t)(i % 50));
                if (lct_writer_end(cw, NULL) != LCT_OK)
                    _exit(1);
            }
            lct_writer_close(cw);
            _exit(0);
        }
    }
    for (int k = 0; k < WRITERS; k++) {
        int ws;
        waitpid(pids[k], &ws, 0);
        cr_assert(WIFEXITED(ws) && WEXITSTATUS(ws) == 0);
    }
    lct_reader *r;
    cr_assert_eq(lct_open(path, 0, &r, NULL), LCT_OK);
    lct_record rec;
    int n = 0;
    while (lct_next(r, &rec) == 1)
        n++;
    lct_stats st;
    lct_reader_stats(r, &st);
    cr_expect_eq(n, WRITERS * EACH);
    cr_expect_eq(st.skipped, 0);
    cr_expect(!st.truncated);
    lct_close(r);
    unlink(path);
    free(path);
}

Test(writer, errors_are_reported)
{
    lct_writer *w;
    lct_error err;
    cr_expect_eq(lct_writer_open("/nonexistent/x.lct", false, &w, &err),
                 LCT_ERR_SYS);
    cr_expect_null(w);
    cr_expect(strstr(err.message, "No such file"), "%s", err.message);
    int p[2];
    cr_assert_eq(pipe(p), 0);
    cr_assert_eq(lct_writer_open_fd(p[1], &w, NULL), LCT_OK);
    cr_expect_eq(lct_writer_end(w, NULL), LCT_ERR_INVALID, "nothing begun");
    lct_writer_begin(w);
    lct_writer_value(w, lct_value_from("\xc1", 1));
    cr_expect_eq(lct_writer_end(w, NULL), LCT_ERR_MALFORMED);
    close(p[0]); /* the reader is gone: EPIPE (SIGPIPE ignored here) */
    signal(SIGPIPE, SIG_IGN);
    lct_writer_begin(w);
    lct_writer_nil(w);
    cr_expect_eq(lct_writer_end(w, &err), LCT_ERR_SYS);
    lct_writer_close(w);
    close(p[1]);
    lct_writer_close(NULL);
}

/* A container whose header promises more than its bytes hold must fail the
 * frame, at the top and nested, not be written as a shorter value. */
Test(writer, a_value_that_cannot_be_walked_fails_the_frame)
{
    static const struct {
        const char *bytes;
        size_t len;
    } cases[] = {
        {"\x92\x92\x01\x01", 4}, /* [[1, 1], <missing>] */
        {"\x92\x01", 2},           /* [1, <missing>] */
        {"\x82\xa1k\x01", 4},      /* {"k": 1, <missing pair>} */
        {"\x81\xa1k\x92\x01", 5}, /* {"k": [1, <missing>]} */
    };
    int p[2];
    cr_assert_eq(pipe(p), 0);
    lct_writer *w;
    cr_assert_eq(lct_writer_open_fd(p[1], &w, NULL), LCT_OK);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        lct_writer_begin(w);
        lct_writer_value(w, lct_value_from(cases[i].bytes, cases[i].len));
        lct_error err;
        memset(&err, 0xff, sizeof err);
        cr_expect_eq(lct_writer_end(w, &err), LCT_ERR_MALFORMED, "case %zu",
                     i);
        cr_expect_eq(err.code, LCT_ERR_MALFORMED, "case %zu", i);
    }
    /* Nothing reached the pipe: a failed frame is not written. */
    close(p[1]);
    char c;
    cr_expect_eq(read(p[0], &c, 1), 0);
    close(p[0]);
    lct_writer_close(w);
}

Test(version, header_and_library_agree)
{
    cr_expect_str_eq(lct_version(), LCT_VERSION_STRING);
    char built[32];
    snprintf(built, sizeof built, "%d.%d.%d", LCT_VERSION_MAJOR,
             LCT_VERSION_MINOR, LCT_VERSION_PATCH);
    cr_expect_str_eq(built, LCT_VERSION_STRING);
    cr_expect_str_eq(LCT_VERSION_STRING, PACKAGE_VERSION,
                     "lct.h and configure.ac must agree");
}
