/*
 * test_stream.c - the streaming source: pipes and LCT_STREAM give the
 * records and judgments the mapping gives, records arrive before the
 * input ends, odd inputs (/dev/zero, /proc files, a pipe that claims a
 * huge frame) are answered in bounded memory, what a stream cannot do
 * (index, go back on a pipe) is refused cleanly, and LCT_ONE_PASS reads
 * as the mapping does whichever way it takes.
 */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "files.h"
#include "lct.h"
#include "mpw.h"
#include "read/source_internal.h"
#include "run.h"

/* These tests wait on other processes: a regression that hangs one
 * fails it instead of stalling the run. */
TestSuite(stream, .timeout = 120);

static long max_rss_kib(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_maxrss;
}

static void write_all(int fd, const void *p, size_t n)
{
    const char *c = p;
    while (n > 0) {
        ssize_t w = write(fd, c, n);
        cr_assert_gt(w, 0);
        c += w;
        n -= (size_t)w;
    }
}

/* A child writes `head`, then `fill` bytes of `byte` into the pipe p,
 * then closes.  It keeps only the write end, so a reader that stops
 * early makes its writes fail (and it exits non-zero). */
static pid_t feed_pattern(int p[2], const void *head, size_t headlen,
                          unsigned char byte, size_t fill)
{
    int fd = p[1];
    pid_t pid = fork();
    cr_assert_neq(pid, -1);
    if (pid == 0) {
        signal(SIGPIPE, SIG_DFL);
        close(p[0]);
        static char chunk[1 << 16];
        memset(chunk, byte, sizeof chunk);
        if (write(fd, head, headlen) != (ssize_t)headlen)
            _exit(1);
        while (fill > 0) {
            size_t take = fill < sizeof chunk ? fill : sizeof chunk;
            ssize_t w = write(fd, chunk, take);
            if (w <= 0)
                _exit(1);
            fill -= (size_t)w;
        }
        _exit(0);
    }
    return pid;
}

Test(stream, records_arrive_before_the_input_ends, .timeout = 20)
{
    mpw t;
    mpw_init(&t);
    mpw_simple_trace(&t, 3);
    int p[2];
    cr_assert_eq(pipe(p), 0);
    /* Header and the first record only; the write end stays open. */
    size_t first = 0;
    for (int frames = 0; frames < 2; frames++)
        first += 4 + ((size_t)t.buf[first] << 24 | t.buf[first + 1] << 16 |
                      t.buf[first + 2] << 8 | t.buf[first + 3]);
    write_all(p[1], t.buf, first);
    lct_reader *r;
    lct_error err;
    cr_assert_eq(lct_open_fd(p[0], "<pipe>", 0, &r, &err), LCT_OK, "%s",
                 err.message);
    lct_record rec;
    cr_assert_eq(lct_next(r, &rec), 1, "the first record, before EOF");
    cr_expect_eq(rec.t_mono, 0.0);
    write_all(p[1], t.buf + first, t.len - first);
    close(p[1]);
    cr_expect_eq(lct_next(r, &rec), 1);
    cr_expect_eq(rec.t_mono, 0.5);
    cr_expect_eq(lct_next(r, &rec), 1);
    cr_expect_eq(lct_next(r, &rec), 0);
    lct_stats st;
    lct_reader_stats(r, &st);
    cr_expect_eq(st.records, 3);
    cr_expect_eq(st.file_size, t.len, "bytes read so far");
    lct_index *idx;
    memset(&err, 0xff, sizeof err);
    cr_expect_eq(lct_index_build(r, &idx, &err), LCT_ERR_INVALID);
    cr_expect_eq(err.code, LCT_ERR_INVALID);
    cr_expect_eq(lct_reader_data(r).ptr, NULL);
    lct_reader_rewind(r); /* a pipe cannot go back: nothing changes */
    cr_expect_eq(lct_next(r, &rec), 0);
    lct_close(r);
    close(p[0]);
    mpw_free(&t);
}

Test(stream, dev_zero_is_refused_at_once, .timeout = 20)
{
    lct_reader *r;
    lct_error err;
    memset(&err, 0xff, sizeof err);
    cr_expect_eq(lct_open("/dev/zero", 0, &r, &err), LCT_ERR_MALFORMED);
    cr_expect_eq(err.code, LCT_ERR_MALFORMED);
    cr_expect_eq(err.offset, 0);
    cr_expect(strstr(err.message, "undecodable header at offset 0: empty "
                                  "frame body"),
              "%s", err.message);
    cr_expect_null(r);
}

Test(stream, a_proc_file_is_read_not_called_empty, .timeout = 20)
{
    /* st_size is 0, yet it has bytes: "proc..." claims ~1.9 GB, and the
     * file ends long before, so the header body is cut short. */
    lct_reader *r;
    lct_error err;
    int rc = lct_open("/proc/cpuinfo", 0, &r, &err);
    cr_expect_eq(rc, LCT_ERR_TRUNCATED, "%s", err.message);
    cr_expect(strstr(err.message, "truncated frame body at offset 4"), "%s",
              err.message);
}

/* What the reference reader decides for a header frame claiming `claim`
 * bytes of 'y' when `sent` arrive: the same through a pipe (bounded
 * memory) as from a mapped file holding those bytes. */
/* A header frame claiming `claim` bytes of which `sent` arrive, all 'y'
 * (a positive fixint, never a map).  Read from a file, the answer is the
 * reference's (`want`: malformed, or truncated when the input ends
 * first).  From a pipe, whose rest could take 4 GiB of reading (`lct
 * check /dev/urandom` took 6 to 14 s), the first bytes refuse it at once:
 * malformed, and the writer is left with bytes nobody read. */
static void huge_non_map_frame(uint32_t claim, size_t sent, int want)
{
    unsigned char head[4] = {claim >> 24, claim >> 16, claim >> 8, claim};
    int p[2];
    cr_assert_eq(pipe(p), 0);
    long before = max_rss_kib();
    pid_t pid = feed_pattern(p, head, 4, 'y', sent);
    close(p[1]);
    lct_reader *r;
    lct_error piped, mapped;
    cr_expect_eq(lct_open_fd(p[0], "t", 0, &r, &piped), LCT_ERR_MALFORMED,
                 "%s", piped.message);
    long growth = max_rss_kib() - before;
    cr_expect_lt(growth, 32 * 1024, "kept %ld KiB of a %zu-byte frame",
                 growth, sent);
    close(p[0]);
    int ws;
    waitpid(pid, &ws, 0);
    cr_expect(!WIFEXITED(ws) || WEXITSTATUS(ws) != 0,
              "the writer got to write all %zu bytes", sent);

    /* The same bytes in a file, read as a stream and through the map. */
    char *buf = malloc(4 + sent);
    memcpy(buf, head, 4);
    memset(buf + 4, 'y', sent);
    char *path = tmp_file_with(buf, 4 + sent);
    lct_error streamed;
    cr_expect_eq(lct_open(path, LCT_STREAM, &r, &streamed), want);
    cr_expect_eq(lct_open(path, 0, &r, &mapped), want);
    cr_expect_eq(streamed.offset, mapped.offset);
    cr_expect_str_eq(streamed.message, mapped.message);
    if (want == LCT_ERR_MALFORMED) {
        const char *a = strchr(piped.message, ':');
        const char *b = strchr(mapped.message, ':');
        cr_expect_str_eq(a, b, "same judgment after the name");
    }
    unlink(path);
    free(path);
    free(buf);
}

Test(stream, a_huge_frame_that_can_never_decode_is_counted_not_kept,
     .timeout = 60)
{
    /* Like `yes | lct info -`: 'y' is a positive fixint, not a map. */
    huge_non_map_frame(200u << 20, 200u << 20, LCT_ERR_MALFORMED);
    huge_non_map_frame(200u << 20, 3u << 20, LCT_ERR_TRUNCATED);
}

static void count_kinds(void *ctx, const lct_reader *r, lct_warning_kind kind,
                        uint64_t offset, const char *message)
{
    (void)r, (void)offset, (void)message;
    ((int *)ctx)[kind]++;
}

/* Records, then a frame whose body starts as a map would but whose first
 * key is an int, then 64 MiB of zeros: nine hostile bytes and zeros took
 * `lct check -` to 1.05 GB.  Such a frame cannot be a record, so a pipe
 * holds none of it, and the answer is the file's. */
Test(stream, a_map_frame_with_an_int_key_is_not_held, .timeout = 60)
{
    mpw t;
    mpw_init(&t);
    mpw_simple_trace(&t, 3);
    mpw_raw(&t, "\xff\xff\xff\xff\x8f\x00", 6);
    size_t zeros = 64u << 20;
    int p[2];
    cr_assert_eq(pipe(p), 0);
    long before = max_rss_kib();
    pid_t pid = feed_pattern(p, t.buf, t.len, 0, zeros);
    close(p[1]);
    lct_reader *r;
    cr_assert_eq(lct_open_fd(p[0], "t", LCT_QUIET, &r, NULL), LCT_OK);
    int kinds[8] = {0};
    lct_reader_set_log(r, count_kinds, kinds);
    lct_record rec;
    int n = 0;
    while (lct_next(r, &rec) == 1)
        n++;
    cr_expect_eq(n, 3);
    cr_expect_lt(max_rss_kib() - before, 16 * 1024, "the frame was held");
    lct_stats piped;
    lct_reader_stats(r, &piped);
    lct_close(r);
    close(p[0]);
    waitpid(pid, NULL, 0);

    char *buf = malloc(t.len + zeros);
    memcpy(buf, t.buf, t.len);
    memset(buf + t.len, 0, zeros);
    char *path = tmp_file_with(buf, t.len + zeros);
    cr_assert_eq(lct_open(path, LCT_QUIET, &r, NULL), LCT_OK);
    while (lct_next(r, &rec) == 1)
        ;
    lct_stats mapped;
    lct_reader_stats(r, &mapped);
    cr_expect_eq(piped.truncated, mapped.truncated);
    cr_expect_eq(piped.truncated_offset, mapped.truncated_offset);
    cr_expect_eq(piped.skipped, mapped.skipped);
    cr_expect_eq(kinds[LCT_WARN_TRUNCATED], 1);
    lct_close(r);
    unlink(path);
    free(path);
    free(buf);
    mpw_free(&t);
}

/* A frame a record could begin as (a map, a str key) that claims more
 * than the stream limit ends a pipe's reading with a warning naming its
 * offset and LCT_ERR_LIMIT; raised, the same input reads on. */
Test(stream, a_pipe_frame_over_the_limit_ends_the_reading, .timeout = 60)
{
    mpw t;
    mpw_init(&t);
    mpw_simple_trace(&t, 3);
    uint64_t frame_at = t.len;
    mpw_raw(&t, "\x00\x10\x00\x00\x81\xa1" "a", 7); /* 1 MiB claimed */
    for (uint64_t limit = 64 * 1024; limit <= 2u << 20; limit *= 32) {
        int p[2];
        cr_assert_eq(pipe(p), 0);
        pid_t pid = feed_pattern(p, t.buf, t.len, 0, 1u << 20);
        close(p[1]);
        lct_open_options o = {.flags = LCT_QUIET, .max_stream_frame = limit};
        lct_reader *r;
        cr_assert_eq(lct_open_fd_with(p[0], "t", &o, &r, NULL), LCT_OK);
        int kinds[8] = {0};
        lct_reader_set_log(r, count_kinds, kinds);
        lct_record rec;
        int n = 0;
        while (lct_next(r, &rec) == 1)
            n++;
        lct_stats st;
        lct_reader_stats(r, &st);
        cr_expect_eq(n, 3);
        if (limit < (1u << 20)) {
            cr_expect_eq(lct_reader_status(r), LCT_ERR_LIMIT);
            cr_expect(st.truncated);
            cr_expect_eq(st.truncated_offset, frame_at);
            cr_expect_eq(kinds[LCT_WARN_TRUNCATED], 1);
        } else { /* read whole: the str key's value is cut, so malformed */
            cr_expect_neq(lct_reader_status(r), LCT_ERR_LIMIT);
        }
        lct_close(r);
        close(p[0]);
        waitpid(pid, NULL, 0);
    }
    /* A header over the limit refuses the open, naming the limit. */
    int p[2];
    cr_assert_eq(pipe(p), 0);
    pid_t pid = feed_pattern(p, "\x00\x10\x00\x00\x81\xa1" "a", 7, 0,
                             1u << 20);
    close(p[1]);
    lct_open_options o = {.max_stream_frame = 4096};
    lct_reader *r;
    lct_error err;
    cr_expect_eq(lct_open_fd_with(p[0], "t", &o, &r, &err), LCT_ERR_LIMIT);
    cr_expect(strstr(err.message, "4096"), "%s", err.message);
    close(p[0]);
    waitpid(pid, NULL, 0);
    mpw_free(&t);
}

/* A length that claims 4 GB (and a map, so the frame could decode) is
 * never allocated up front: the buffer grows only with what arrives. */
Test(stream, a_huge_claimed_length_is_not_allocated)
{
    mpw t;
    mpw_init(&t);
    mpw_simple_trace(&t, 3);
    mpw_raw(&t, "\xf0\x00\x00\x00\x85\xa4type", 10);
    char *path = tmp_file_with(t.buf, t.len);
    long before = max_rss_kib();
    lct_reader *r;
    cr_assert_eq(lct_open(path, LCT_STREAM | LCT_QUIET, &r, NULL), LCT_OK);
    lct_record rec;
    int n = 0;
    while (lct_next(r, &rec) == 1)
        n++;
    cr_expect_eq(n, 3);
    lct_stats st;
    lct_reader_stats(r, &st);
    cr_expect(st.truncated);
    cr_expect_eq(lct_reader_status(r), LCT_ERR_TRUNCATED, "not a failed read");
    cr_expect_lt(max_rss_kib() - before, 16 * 1024, "allocated by the claim");
    lct_close(r);
    unlink(path);
    free(path);
    mpw_free(&t);
}

/* LCT_STREAM is the choice of bounded memory (views live until the next
 * record): a long pipe costs the one buffer. */
Test(stream, a_long_pipe_is_read_in_bounded_memory, .timeout = 60)
{
    mpw t;
    mpw_init(&t);
    mpw_simple_trace(&t, 300000);
    cr_assert_gt(t.len, 16u << 20);
    int p[2];
    cr_assert_eq(pipe(p), 0);
    long before = max_rss_kib();
    pid_t pid = feed_pattern(p, t.buf, t.len, 0, 0);
    close(p[1]);
    lct_reader *r;
    cr_assert_eq(lct_open_fd(p[0], "t", LCT_STREAM, &r, NULL), LCT_OK);
    lct_record rec;
    size_t n = 0;
    while (lct_next(r, &rec) == 1)
        n++;
    cr_expect_eq(n, 300000);
    cr_expect_lt(max_rss_kib() - before, 8 * 1024,
                 "a %zu-byte stream kept in memory", t.len);
    lct_close(r);
    close(p[0]);
    waitpid(pid, NULL, 0);
    mpw_free(&t);
}

/* MARK: LCT_STREAM gives what the mapping gives, on every fixture */

typedef struct log_text {
    char text[8192];
    size_t len;
} log_text;

static void keep_log(void *ctx, const lct_reader *r, lct_warning_kind kind,
                     uint64_t offset, const char *message)
{
    (void)r;
    log_text *l = ctx;
    int n = snprintf(l->text + l->len, sizeof l->text - l->len,
                     "%d %llu %s\n", kind, (unsigned long long)offset,
                     message);
    if (n > 0 && l->len + (size_t)n < sizeof l->text)
        l->len += (size_t)n;
}

static const char *fixtures[] = {
    "bad_magic",   "clean",           "empty",
    "events",      "format_v2",       "header_only",
    "huge_length", "malformed_mixed", "schema_v1_readable",
    "schema_v3",   "trunc_header_body", "trunc_header_prefix",
    "trunc_tail_2", "trunc_tail_74"};

/* Open, read everything; a digest of what was seen. */
static void read_all(const char *path, unsigned flags, int *rc,
                     log_text *log, lct_stats *st, uint64_t *sum)
{
    lct_reader *r;
    lct_error err;
    memset(log, 0, sizeof *log);
    memset(st, 0, sizeof *st);
    *sum = 0;
    *rc = lct_open(path, flags | LCT_QUIET, &r, &err);
    if (*rc != LCT_OK) {
        snprintf(log->text, sizeof log->text, "%llu %s",
                 (unsigned long long)err.offset, err.message);
        return;
    }
    lct_reader_set_log(r, keep_log, log);
    lct_record rec;
    while (lct_next(r, &rec) == 1) {
        *sum = *sum * 31 + rec.offset;
        for (size_t i = 0; i < rec.body.len; i++)
            *sum = *sum * 131 + rec.body.ptr[i];
    }
    lct_reader_stats(r, st);
    lct_close(r);
}

Test(stream, every_fixture_streamed_as_mapped)
{
    for (size_t i = 0; i < sizeof fixtures / sizeof *fixtures; i++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s.lct", LCT_FIXTURES_DIR,
                 fixtures[i]);
        int rc_m, rc_s;
        static log_text log_m, log_s;
        lct_stats st_m, st_s;
        uint64_t sum_m, sum_s;
        read_all(path, 0, &rc_m, &log_m, &st_m, &sum_m);
        read_all(path, LCT_STREAM, &rc_s, &log_s, &st_s, &sum_s);
        cr_expect_eq(rc_s, rc_m, "%s", fixtures[i]);
        cr_expect_str_eq(log_s.text, log_m.text, "%s", fixtures[i]);
        cr_expect_eq(sum_s, sum_m, "%s: records differ", fixtures[i]);
        cr_expect_eq(st_s.records, st_m.records, "%s", fixtures[i]);
        cr_expect_eq(st_s.skipped, st_m.skipped, "%s", fixtures[i]);
        cr_expect_eq(st_s.truncated, st_m.truncated, "%s", fixtures[i]);
        cr_expect_eq(st_s.truncated_offset, st_m.truncated_offset, "%s",
                     fixtures[i]);
        cr_expect_eq(st_s.bytes_read, st_m.bytes_read, "%s", fixtures[i]);
    }
}

/* A trace of 17 MiB or more (LCT_ONE_PASS decides only from 16 MiB): a
 * record with a 4 KiB value every 100, a malformed frame in the middle
 * and a cut tail, so that skips and the cut are compared too. */
static char *one_pass_trace(void)
{
    mpw t, body;
    mpw_init(&t);
    mpw_init(&body);
    mpw_std_header(&body);
    mpw_frame(&t, &body);
    static unsigned char blob[4096];
    for (unsigned i = 0; t.len < (17u << 20); i++) {
        if (i == 2000) { /* a frame whose body is not a record */
            mpw_reset(&body);
            mpw_uint(&body, 7);
            mpw_frame(&t, &body);
        }
        mpw_reset(&body);
        mpw_record_begin(&body, i * 0.5, 1764600000.0 + i * 0.5, "x.op");
        mpw_map(&body, 1);
        mpw_str(&body, "v");
        blob[i % sizeof blob] = (unsigned char)i;
        mpw_bin(&body, blob, i % 100 ? 16 : sizeof blob);
        mpw_frame(&t, &body);
    }
    mpw_be32(&t, 100); /* a frame cut after 3 of its 100 bytes */
    mpw_raw(&t, "abc", 3);
    char *path = tmp_file_with(t.buf, t.len);
    mpw_free(&t);
    mpw_free(&body);
    return path;
}

static bool streams(const char *path, unsigned flags)
{
    lct_reader *r;
    cr_assert_eq(lct_open(path, flags, &r, NULL), LCT_OK);
    bool streamed = lct_reader_data(r).ptr == NULL;
    lct_close(r);
    return streamed;
}

Test(stream, one_pass_reads_as_the_mapping_whichever_way_it_takes)
{
    char *path = one_pass_trace();
    int rc_m, rc_o;
    static log_text log_m, log_o;
    lct_stats st_m, st_o;
    uint64_t sum_m, sum_o;
    read_all(path, 0, &rc_m, &log_m, &st_m, &sum_m);
    cr_assert_eq(rc_m, LCT_OK);
    cr_expect(st_m.skipped == 1 && st_m.truncated, "the trace is damaged");
    /* -1: the probe decides; 0: the mapping; 1: the stream */
    for (int decide = -1; decide <= 1; decide++) {
        lct__one_pass_decide(decide);
        bool streamed = streams(path, LCT_ONE_PASS);
        if (decide >= 0)
            cr_expect_eq(streamed, decide == 1, "decided %d", decide);
        read_all(path, LCT_ONE_PASS, &rc_o, &log_o, &st_o, &sum_o);
        cr_expect_eq(rc_o, rc_m, "decided %d", decide);
        cr_expect_str_eq(log_o.text, log_m.text, "decided %d", decide);
        cr_expect_eq(sum_o, sum_m, "decided %d: records differ", decide);
        cr_expect_eq(st_o.records, st_m.records);
        cr_expect_eq(st_o.skipped, st_m.skipped);
        cr_expect_eq(st_o.truncated_offset, st_m.truncated_offset);
        cr_expect_eq(st_o.bytes_read, st_m.bytes_read);
        /* what goes first */
        cr_expect(streams(path, LCT_ONE_PASS | LCT_STREAM));
        cr_expect_not(streams(path, LCT_ONE_PASS | LCT_FOLLOW));
    }
    /* a small file is mapped, whatever was decided */
    char small[4096];
    snprintf(small, sizeof small, "%s/clean.lct", LCT_FIXTURES_DIR);
    cr_expect_not(streams(small, LCT_ONE_PASS));
    lct__one_pass_decide(-1);
    unlink(path);
    free(path);
}

Test(stream, a_streamed_file_rewinds_and_keeps_its_header)
{
    mpw t;
    mpw_init(&t);
    mpw_simple_trace(&t, 100);
    char *path = tmp_file_with(t.buf, t.len);
    lct_reader *r;
    cr_assert_eq(lct_open(path, LCT_STREAM, &r, NULL), LCT_OK);
    const lct_header *h = lct_reader_header(r);
    lct_record rec;
    size_t n = 0;
    while (lct_next(r, &rec) == 1)
        n++;
    cr_expect_eq(n, 100);
    /* The header outlives the buffer that held it. */
    cr_expect_eq(memcmp(h->level.ptr, "storage", 7), 0);
    cr_expect_eq(memcmp(h->magic.ptr, "LMCT", 4), 0);
    lct_reader_rewind(r);
    n = 0;
    while (lct_next(r, &rec) == 1)
        n++;
    cr_expect_eq(n, 100);
    lct_close(r);
    unlink(path);
    free(path);
    mpw_free(&t);
}

/* A trace of small records around one of 1 MiB (a bin in its args). */
static void trace_with_a_big_frame(mpw *t)
{
    mpw body;
    mpw_init(t);
    mpw_init(&body);
    mpw_simple_trace(t, 2000);
    mpw_record_begin(&body, 9.0, 9.0, "big.op");
    mpw_map(&body, 1);
    mpw_str(&body, "blob");
    unsigned char *blob = malloc(1u << 20);
    for (size_t i = 0; i < (1u << 20); i++)
        blob[i] = (unsigned char)(i * 7);
    mpw_bin(&body, blob, 1u << 20);
    free(blob);
    mpw_frame(t, &body);
    for (int i = 0; i < 2000; i++) {
        mpw_reset(&body);
        mpw_record_begin(&body, 10.0 + i, 10.0 + i, "after.op");
        mpw_map(&body, 0);
        mpw_frame(t, &body);
    }
    mpw_free(&body);
}

static uint64_t sum_bytes(const unsigned char *p, size_t n)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ p[i]) * 1099511628211ull;
    return h;
}

/* lct.h promises views until lct_close(): a pipe opened without
 * LCT_STREAM reused its buffer, and views read after later records were
 * another record's bytes (heap-use-after-free around a 1 MiB frame).
 * Now every record's bytes are where they were, and say the same. */
Test(stream, views_of_a_pipe_live_until_close, .timeout = 60)
{
    mpw t;
    trace_with_a_big_frame(&t);
    int p[2];
    cr_assert_eq(pipe(p), 0);
    pid_t pid = feed_pattern(p, t.buf, t.len, 0, 0);
    close(p[1]);
    lct_reader *r;
    cr_assert_eq(lct_open_fd(p[0], "t", 0, &r, NULL), LCT_OK);
    enum { N = 4001 };
    static lct_value bodies[N];
    static uint64_t sums[N];
    lct_record rec;
    size_t n = 0;
    while (n < N && lct_next(r, &rec) == 1) {
        bodies[n] = rec.body;
        sums[n++] = sum_bytes(rec.body.ptr, rec.body.len);
    }
    cr_assert_eq(n, N);
    cr_expect_gt(bodies[2000].len, 1u << 20);
    for (size_t i = 0; i < n; i++)
        cr_assert_eq(sum_bytes(bodies[i].ptr, bodies[i].len), sums[i],
                     "record %zu changed under its view", i);
    lct_close(r);
    close(p[0]);
    waitpid(pid, NULL, 0);
    mpw_free(&t);
}

/* The examples, written to the documented contract (count keeps its
 * qualname views in a tree until the end), on a pipe with a 1 MiB frame:
 * the same answer as from the file, and (in the sanitizer builds) no
 * AddressSanitizer report. */
Test(stream, the_examples_are_right_on_a_pipe, .timeout = 120)
{
    mpw t;
    trace_with_a_big_frame(&t);
    char *path = tmp_file_with(t.buf, t.len);
    const char *progs[] = {"count", "replay"};
    for (int i = 0; i < 2; i++) {
        char cmd[8192];
        snprintf(cmd, sizeof cmd, "cat %s | %s/%s /dev/stdin%s", path,
                 LCT_EXAMPLES, progs[i], i ? " 1000000" : "");
        const char *const piped[] = {"/bin/sh", "-c", cmd, NULL};
        snprintf(cmd + 4096, 4096, "%s/%s", LCT_EXAMPLES, progs[i]);
        const char *const direct[] = {cmd + 4096, path, i ? "1000000" : NULL,
                                      NULL};
        run a = run_argv(NULL, piped);
        run b = run_argv(NULL, direct);
        cr_expect_eq(a.status, 0, "%s on a pipe: %s", progs[i], a.err);
        cr_expect_null(strstr(a.err, "AddressSanitizer"), "%s", a.err);
        cr_expect_eq(b.status, 0, "%s", b.err);
        if (i == 0) /* count: records per qualname */
            cr_expect_str_eq(a.out, b.out);
        else /* replay: as many lines */
            cr_expect_eq(a.outlen > 0, b.outlen > 0);
        run_free(&a);
        run_free(&b);
    }
    unlink(path);
    free(path);
    mpw_free(&t);
}

/* Runs of empty frames nobody is told about are stepped over in bulk;
 * the records, the skips and the cut tail must be what one frame at a
 * time gives (a counting sink sees every skip, so it takes that path). */
static void count_skips(void *ctx, const lct_reader *r, lct_warning_kind kind,
                        uint64_t offset, const char *message)
{
    (void)r, (void)offset, (void)message;
    if (kind == LCT_WARN_MALFORMED)
        ++*(uint64_t *)ctx;
}

/* Stepped over in bulk when no one is told of each skip, from a stream
 * and from a mapping alike: the same records, skips and end as one frame
 * at a time. */
static void expect_zero_runs_as_one_at_a_time(unsigned open_flags)
{
    size_t len;
    char *sample = read_whole_file(LCT_SAMPLE, &len);
    cr_assert(sample);
    /* after the header and ten records: a frame boundary */
    size_t at = 0;
    for (int i = 0; i < 11; i++)
        at += 4 + ((size_t)(unsigned char)sample[at] << 24 |
                   (size_t)(unsigned char)sample[at + 1] << 16 |
                   (size_t)(unsigned char)sample[at + 2] << 8 |
                   (unsigned char)sample[at + 3]);
    size_t runs[] = {1, 2, 3, 17, 1000, 300000}, tails[] = {0, 1, 3, 6};
    for (size_t i = 0; i < 6; i++)
        for (size_t t = 0; t < 4; t++) {
            size_t zeros = runs[i] * 4, n = len + zeros + tails[t];
            char *buf = calloc(1, n);
            memcpy(buf, sample, at);
            memcpy(buf + at + zeros, sample + at, len - at);
            char *path = tmp_file_with(buf, n);
            lct_stats st[2];
            uint64_t records[2] = {0, 0}, told = 0, sum[2] = {0, 0};
            for (int bulk = 0; bulk < 2; bulk++) {
                lct_reader *r;
                cr_assert_eq(lct_open(path, open_flags, &r, NULL), LCT_OK);
                lct_reader_set_log(r, count_skips, &told);
                if (bulk)
                    lct_reader_set_log_kinds(r, LCT_WARN_MASK(LCT_WARN_SHRANK));
                lct_record rec;
                while (lct_next(r, &rec) == 1) {
                    records[bulk]++;
                    sum[bulk] += rec.offset;
                }
                lct_reader_stats(r, &st[bulk]);
                lct_close(r);
            }
            cr_expect_eq(told, runs[i] + (tails[t] >= 4), "run %zu tail %zu",
                         runs[i], tails[t]);
            cr_expect_eq(records[1], records[0]);
            cr_expect_eq(sum[1], sum[0], "the same records");
            cr_expect_eq(st[1].skipped, st[0].skipped, "run %zu tail %zu",
                         runs[i], tails[t]);
            cr_expect_eq(st[1].truncated, st[0].truncated);
            cr_expect_eq(st[1].bytes_read, st[0].bytes_read);
            unlink(path);
            free(path);
            free(buf);
        }
    free(sample);
}

Test(stream, runs_of_empty_frames_read_as_one_at_a_time)
{
    expect_zero_runs_as_one_at_a_time(LCT_STREAM);
    expect_zero_runs_as_one_at_a_time(0); /* mapped */
}
