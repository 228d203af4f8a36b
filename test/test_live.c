/*
 * test_live.c - files that change while they are read: truncated by
 * another process under the mapping (with and without the SIGBUS guard,
 * sequentially and in a parallel scan), and appended to while followed.
 */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "files.h"
#include "lct.h"
#include "mpw.h"

/* These tests wait on other processes: a regression that hangs one
 * fails it instead of stalling the run. */
TestSuite(shrink, .timeout = 120);
TestSuite(follow, .timeout = 120);

#define CUT (1u << 20) /* truncate to 1 MiB */

/* An ~8 MB trace on disk; *frames_before_cut counts whole frames <= CUT. */
static char *big_file(mpw *f, size_t *frames_before_cut)
{
    mpw_init(f);
    mpw_simple_trace(f, 150000);
    cr_assert_gt(f->len, 4 * CUT);
    /* Walk the frames to count those that end by the cut. */
    size_t pos = 0, n = 0;
    bool header = true;
    while (pos + 4 <= f->len) {
        size_t len = (size_t)f->buf[pos] << 24 | f->buf[pos + 1] << 16 |
                     f->buf[pos + 2] << 8 | f->buf[pos + 3];
        if (pos + 4 + len > CUT)
            break;
        if (!header)
            n++;
        header = false;
        pos += 4 + len;
    }
    *frames_before_cut = n;
    return tmp_file_with(f->buf, f->len);
}

/* Another process truncates the file, and is gone before we go on. */
static void truncate_elsewhere(const char *path, off_t size)
{
    pid_t pid = fork();
    cr_assert_neq(pid, -1);
    if (pid == 0)
        _exit(truncate(path, size) == 0 ? 0 : 1);
    int ws;
    waitpid(pid, &ws, 0);
    cr_assert(WIFEXITED(ws) && WEXITSTATUS(ws) == 0);
}

typedef struct seen_warning {
    int shrank;
    uint64_t offset;
} seen_warning;

static void on_warning(void *ctx, const lct_reader *r, lct_warning_kind kind,
                       uint64_t offset, const char *message)
{
    (void)r;
    seen_warning *w = ctx;
    if (kind == LCT_WARN_SHRANK) {
        w->shrank++;
        w->offset = offset;
        cr_expect(strstr(message, "file shrank while reading"), "%s", message);
    }
}

Test(shrink, guarded_reading_ends_in_order)
{
    cr_assert_eq(lct_guard_install(NULL), LCT_OK);
    /* More open/close cycles than the guard has slots: none may leak. */
    for (int i = 0; i < 300; i++) {
        char p[4096];
        snprintf(p, sizeof p, "%s/clean.lct", LCT_FIXTURES_DIR);
        lct_reader *r;
        cr_assert_eq(lct_open(p, LCT_QUIET, &r, NULL), LCT_OK);
        lct_close(r);
    }
    mpw f;
    size_t before_cut;
    char *path = big_file(&f, &before_cut);
    lct_reader *r;
    cr_assert_eq(lct_open(path, 0, &r, NULL), LCT_OK);
    seen_warning w = {0, 0};
    lct_reader_set_log(r, on_warning, &w);
    lct_record rec;
    size_t n = 0;
    for (; n < 100; n++)
        cr_assert_eq(lct_next(r, &rec), 1);
    truncate_elsewhere(path, CUT);
    while (lct_next(r, &rec) == 1) {
        /* Every record yielded is the file's own bytes. */
        cr_assert_leq(rec.offset + 4 + rec.length, CUT);
        cr_assert_eq(memcmp(rec.body.ptr, f.buf + rec.offset + 4, rec.length),
                     0);
        cr_assert(lct_record_intact(r, &rec));
        n++;
    }
    lct_stats st;
    lct_reader_stats(r, &st);
    cr_expect(st.shrank);
    cr_expect_eq(st.shrank_offset, CUT);
    cr_expect(!st.truncated);
    cr_expect_eq(n, before_cut, "every whole frame before the cut, no more");
    cr_expect_eq(w.shrank, 1);
    cr_expect_eq(w.offset, CUT);
    cr_expect_eq(lct_next(r, &rec), 0, "the end stays the end");
    lct_close(r);
    unlink(path);
    free(path);
    mpw_free(&f);
}

/* However many readers are open, each is guarded: the last of 600 (the
 * registry had 256 slots once, and the 257th went unguarded) survives a
 * cut under its mapping. */
Test(shrink, every_reader_is_guarded_however_many_are_open)
{
    cr_assert_eq(lct_guard_install(NULL), LCT_OK);
    enum { OPEN = 600 };
    lct_reader **held = calloc(OPEN, sizeof *held);
    cr_assert(held);
    char p[4096];
    snprintf(p, sizeof p, "%s/clean.lct", LCT_FIXTURES_DIR);
    for (int i = 0; i < OPEN - 1; i++)
        cr_assert_eq(lct_open(p, LCT_QUIET, &held[i], NULL), LCT_OK);
    mpw f;
    size_t before_cut;
    char *path = big_file(&f, &before_cut);
    cr_assert_eq(lct_open(path, LCT_QUIET, &held[OPEN - 1], NULL), LCT_OK);
    lct_reader *r = held[OPEN - 1];
    truncate_elsewhere(path, CUT);
    lct_record rec;
    size_t n = 0;
    while (lct_next(r, &rec) == 1) {
        cr_assert_leq(rec.offset + 4 + rec.length, CUT);
        n++;
    }
    lct_stats st;
    lct_reader_stats(r, &st);
    cr_expect(st.shrank);
    cr_expect_eq(n, before_cut);
    /* The readers in the first slots still read their own files. */
    cr_expect_eq(lct_next(held[0], &rec), 1);
    for (int i = 0; i < OPEN; i++)
        lct_close(held[i]);
    free(held);
    unlink(path);
    free(path);
    mpw_free(&f);
}

/* The contract without the guard: the process dies of SIGBUS. */
Test(shrink, unguarded_reading_dies_of_sigbus, .signal = SIGBUS)
{
    /* The default disposition, as a program that never asked for the
     * guard has it (the sanitizer build would otherwise report it). */
    signal(SIGBUS, SIG_DFL);
    mpw f;
    size_t before_cut;
    char *path = big_file(&f, &before_cut);
    lct_reader *r;
    cr_assert_eq(lct_open(path, LCT_QUIET, &r, NULL), LCT_OK);
    truncate_elsewhere(path, CUT);
    unlink(path);
    lct_record rec;
    while (lct_next(r, &rec) == 1)
        ;
    cr_assert_fail("read past the new end without a fault");
}

typedef struct part {
    uint64_t max_end;
    size_t records;
    const unsigned char *original;
    char pad[40];
} part;

static int check_record(void *state, const lct_record *rec)
{
    part *p = state;
    uint64_t end = rec->offset + 4 + rec->length;
    if (end > p->max_end)
        p->max_end = end;
    p->records++;
    cr_assert_eq(memcmp(rec->body.ptr, p->original + rec->offset + 4,
                        rec->length),
                 0);
    return 0;
}

Test(shrink, guarded_parallel_scan)
{
    cr_assert_eq(lct_guard_install(NULL), LCT_OK);
    mpw f;
    size_t before_cut;
    char *path = big_file(&f, &before_cut);
    lct_reader *r;
    cr_assert_eq(lct_open(path, LCT_QUIET, &r, NULL), LCT_OK);
    lct_index *idx;
    cr_assert_eq(lct_index_build(r, &idx, NULL), LCT_OK);
    truncate_elsewhere(path, CUT);
    part parts[2] = {{0, 0, f.buf, {0}}, {0, 0, f.buf, {0}}};
    void *states[2] = {&parts[0], &parts[1]};
    lct_scan scan = {.threads = 2, .on_record = check_record, .states = states};
    lct_stats st;
    cr_assert_eq(lct_scan_run(idx, &scan, &st, NULL), LCT_OK);
    cr_expect(st.shrank);
    cr_expect_eq(st.shrank_offset, CUT);
    cr_expect_leq(parts[0].max_end, CUT);
    cr_expect_leq(parts[1].max_end, CUT, "the second range lies past the cut");
    cr_expect_eq(parts[0].records + parts[1].records, before_cut);
    lct_index_free(idx);
    lct_close(r);
    unlink(path);
    free(path);
    mpw_free(&f);
}

static void part_reset(void *state)
{
    part *p = state;
    p->max_end = 0;
    p->records = 0;
}

/* lct_scan_file reads a mapped reader's ranges through the mapping: cut
 * under it (1 MiB into 8 MB, so the second thread's range is all gone),
 * every thread count yields only whole records before the cut and says
 * where the file now ends. */
Test(shrink, guarded_one_pass_scan_over_the_mapping)
{
    cr_assert_eq(lct_guard_install(NULL), LCT_OK);
    mpw f;
    size_t before_cut;
    char *path = big_file(&f, &before_cut);
    for (unsigned threads = 1; threads <= 3; threads++) {
        cr_assert_eq(truncate(path, (off_t)f.len), 0); /* whole again */
        int fd = open(path, O_WRONLY);
        cr_assert(fd >= 0);
        cr_assert_eq(pwrite(fd, f.buf, f.len, 0), (ssize_t)f.len);
        close(fd);
        lct_reader *r;
        cr_assert_eq(lct_open(path, LCT_QUIET, &r, NULL), LCT_OK);
        truncate_elsewhere(path, CUT);
        part parts[3] = {{0, 0, f.buf, {0}}, {0, 0, f.buf, {0}},
                         {0, 0, f.buf, {0}}};
        void *states[3] = {&parts[0], &parts[1], &parts[2]};
        lct_scan scan = {.threads = threads, .on_record = check_record,
                         .on_reset = part_reset, .states = states};
        lct_stats st;
        cr_assert_eq(lct_scan_file(r, &scan, &st, NULL), LCT_OK);
        cr_expect(st.shrank, "%u threads", threads);
        cr_expect_eq(st.shrank_offset, CUT, "%u threads", threads);
        cr_expect_eq(st.skipped, 0, "%u threads: the zeros past the cut "
                     "are no frames", threads);
        size_t records = 0;
        for (unsigned t = 0; t < 3; t++) {
            cr_expect_leq(parts[t].max_end, CUT, "%u threads", threads);
            records += parts[t].records;
        }
        cr_expect_eq(records, before_cut, "%u threads", threads);
        cr_expect_eq(st.records, before_cut, "%u threads", threads);
        lct_close(r);
    }
    unlink(path);
    free(path);
    mpw_free(&f);
}

/* End offsets of every record frame of a trace in memory. */
static size_t record_ends(const mpw *f, uint64_t *ends, size_t max)
{
    size_t pos = 0, n = 0;
    bool header = true;
    while (pos + 4 <= f->len && n < max) {
        size_t len = (size_t)f->buf[pos] << 24 | f->buf[pos + 1] << 16 |
                     f->buf[pos + 2] << 8 | f->buf[pos + 3];
        pos += 4 + len;
        if (!header)
            ends[n++] = pos;
        header = false;
    }
    return n;
}

/* A record (index >= 100) that ends well inside a page, so cutting it 3
 * bytes short leaves its tail, and the next prefix, reading as zeros
 * (the kernel zero-fills the page past the new end; no SIGBUS). */
static size_t record_ending_mid_page(const uint64_t *ends, size_t n)
{
    for (size_t k = 100; k < n; k++)
        if (ends[k] % 4096 >= 64 && ends[k] % 4096 <= 4000)
            return k;
    cr_assert_fail("no record ends mid-page");
    return 0;
}

typedef struct count_warnings {
    int shrank, malformed, truncated;
    uint64_t shrank_offset;
} count_warnings;

static void count_kinds(void *ctx, const lct_reader *r, lct_warning_kind kind,
                        uint64_t offset, const char *message)
{
    (void)r;
    (void)message;
    count_warnings *c = ctx;
    if (kind == LCT_WARN_SHRANK) {
        c->shrank++;
        c->shrank_offset = offset;
    }
    c->malformed += kind == LCT_WARN_MALFORMED;
    c->truncated += kind == LCT_WARN_TRUNCATED;
}

/* No guard: the cut page reads as zeros, never faults, and the record it
 * cut must still not be yielded, nor anything after it. */
Test(shrink, a_cut_inside_the_last_mapped_page_yields_no_zeros)
{
    mpw f;
    mpw_init(&f);
    mpw_simple_trace(&f, 3000);
    static uint64_t ends[4000];
    size_t n = record_ends(&f, ends, 4000);
    size_t k = record_ending_mid_page(ends, n);
    uint64_t cut = ends[k] - 3;
    char *path = tmp_file_with(f.buf, f.len);
    lct_reader *r;
    cr_assert_eq(lct_open(path, 0, &r, NULL), LCT_OK);
    count_warnings seen = {0};
    lct_reader_set_log(r, count_kinds, &seen);
    lct_record rec, last = {0};
    for (size_t i = 0; i < k; i++) {
        cr_assert_eq(lct_next(r, &rec), 1);
        last = rec;
    }
    truncate_elsewhere(path, (off_t)cut);
    cr_expect(lct_record_intact(r, &last), "record %zu is whole", k - 1);
    cr_expect_eq(lct_next(r, &rec), 0, "record %zu lost its tail", k);
    cr_expect_eq(lct_next(r, &rec), 0);
    lct_stats st;
    lct_reader_stats(r, &st);
    cr_expect_eq(st.records, k);
    cr_expect(st.shrank);
    cr_expect_eq(st.shrank_offset, cut, "the real cut, not a page boundary");
    cr_expect_not(st.truncated);
    cr_expect_eq(seen.shrank, 1);
    cr_expect_eq(seen.shrank_offset, cut);
    cr_expect_eq(seen.malformed, 0, "no bogus warnings after the shrink");
    cr_expect_eq(lct_reader_status(r), LCT_ERR_CHANGED);
    cr_expect_eq(seen.truncated, 0);
    /* A record already yielded, whose bytes are now gone. */
    truncate_elsewhere(path, (off_t)(ends[k - 2] - 1));
    cr_expect_not(lct_record_intact(r, &last));
    lct_close(r);
    unlink(path);
    free(path);
    mpw_free(&f);
}

/* The same cut under a parallel scan whose index was built before it. */
Test(shrink, a_mid_page_cut_under_a_parallel_scan)
{
    cr_assert_eq(lct_guard_install(NULL), LCT_OK);
    mpw f;
    mpw_init(&f);
    mpw_simple_trace(&f, 3000);
    static uint64_t ends[4000];
    size_t n = record_ends(&f, ends, 4000);
    size_t k = record_ending_mid_page(ends, n);
    uint64_t cut = ends[k] - 3;
    char *path = tmp_file_with(f.buf, f.len);
    lct_reader *r;
    cr_assert_eq(lct_open(path, LCT_QUIET, &r, NULL), LCT_OK);
    lct_index *idx;
    cr_assert_eq(lct_index_build(r, &idx, NULL), LCT_OK);
    truncate_elsewhere(path, (off_t)cut);
    part parts[2] = {{0, 0, f.buf, {0}}, {0, 0, f.buf, {0}}};
    void *states[2] = {&parts[0], &parts[1]};
    lct_scan scan = {.threads = 2, .on_record = check_record, .states = states};
    lct_stats st;
    cr_assert_eq(lct_scan_run(idx, &scan, &st, NULL), LCT_OK);
    cr_expect(st.shrank);
    cr_expect_eq(st.shrank_offset, cut);
    cr_expect_leq(parts[0].max_end, cut);
    cr_expect_leq(parts[1].max_end, cut);
    cr_expect_eq(parts[0].records + parts[1].records, k);
    lct_record rec;
    cr_expect_eq(lct_index_record(idx, k, &rec, NULL), LCT_ERR_CHANGED);
    cr_expect_eq(lct_index_record(idx, k - 1, &rec, NULL), 1);
    lct_index_free(idx);
    lct_close(r);
    unlink(path);
    free(path);
    mpw_free(&f);
}

/* lct_reader_refresh on a followed file that shrank: reported as a change, the
 * header still readable, iteration over. */
Test(shrink, refresh_after_a_shrink_reports_it_and_stays_safe)
{
    mpw f;
    mpw_init(&f);
    mpw_simple_trace(&f, 200);
    static uint64_t ends[256];
    record_ends(&f, ends, 256);
    char *path = tmp_file_with(f.buf, f.len);
    lct_reader *r;
    cr_assert_eq(lct_open(path, LCT_FOLLOW | LCT_QUIET, &r, NULL), LCT_OK);
    lct_record rec;
    for (int i = 0; i < 50; i++)
        cr_assert_eq(lct_next(r, &rec), 1);
    uint64_t cut = ends[30] - 5; /* inside a record already read */
    truncate_elsewhere(path, (off_t)cut);
    lct_error err;
    memset(&err, 0xff, sizeof err);
    cr_expect_eq(lct_reader_refresh(r, &err), LCT_ERR_CHANGED);
    cr_expect_eq(err.code, LCT_ERR_CHANGED);
    cr_expect_eq(err.offset, cut);
    cr_expect(strstr(err.message, "shrank"), "%s", err.message);
    const lct_header *h = lct_reader_header(r);
    cr_expect_eq(h->level.len, 7);
    cr_expect_eq(memcmp(h->level.ptr, "storage", 7), 0);
    cr_expect_eq(lct_next(r, &rec), 0);
    lct_stats st;
    lct_reader_stats(r, &st);
    cr_expect(st.shrank);
    cr_expect_eq(st.shrank_offset, cut);
    cr_expect_eq(lct_reader_refresh(r, NULL), LCT_ERR_CHANGED);
    /* Even below the header: the header was kept aside. */
    truncate_elsewhere(path, 2);
    cr_expect_eq(lct_reader_refresh(r, NULL), LCT_ERR_CHANGED);
    cr_expect_eq(memcmp(lct_reader_header(r)->level.ptr, "storage", 7), 0);
    cr_expect_eq(lct_next(r, &rec), 0);
    lct_close(r);

    /* A fresh follower of a file that shrinks below the header. */
    cr_assert_eq(truncate(path, 0), 0);
    cr_assert_eq(lct_open(path, LCT_FOLLOW, &r, NULL), LCT_ERR_EMPTY);
    unlink(path);
    free(path);
    mpw_free(&f);
}

/* MARK: growing files */

static void append(const char *path, const void *p, size_t n)
{
    int fd = open(path, O_WRONLY | O_APPEND);
    cr_assert_geq(fd, 0);
    cr_assert_eq(write(fd, p, n), (ssize_t)n);
    close(fd);
}

typedef struct any_warning {
    int count;
} any_warning;

static void count_any(void *ctx, const lct_reader *r, lct_warning_kind kind,
                      uint64_t offset, const char *message)
{
    (void)r;
    (void)kind;
    (void)offset;
    (void)message;
    ((any_warning *)ctx)->count++;
}

Test(follow, appended_records_including_a_frame_in_two_halves)
{
    mpw t;
    mpw_init(&t);
    mpw_simple_trace(&t, 3);
    /* Frame boundaries: header, then three records. */
    size_t bounds[5], pos = 0;
    for (int i = 0; i < 5; i++) {
        bounds[i] = pos;
        if (pos < t.len)
            pos += 4 + ((size_t)t.buf[pos + 2] << 8 | t.buf[pos + 3]);
    }
    char *path = tmp_file_with(t.buf, bounds[1]); /* the header alone */
    lct_reader *r;
    cr_assert_eq(lct_open(path, LCT_FOLLOW, &r, NULL), LCT_OK);
    any_warning w = {0};
    lct_reader_set_log(r, count_any, &w);
    lct_record rec;
    cr_expect_eq(lct_next(r, &rec), 0);

    append(path, t.buf + bounds[1], bounds[2] - bounds[1]);
    cr_assert_eq(lct_reader_refresh(r, NULL), LCT_OK);
    cr_assert_eq(lct_next(r, &rec), 1);
    cr_expect_eq(rec.offset, bounds[1]);
    cr_expect_eq(lct_next(r, &rec), 0);

    /* The second record in two halves, a pause between. */
    size_t half = (bounds[2] + bounds[3]) / 2;
    append(path, t.buf + bounds[2], half - bounds[2]);
    cr_assert_eq(lct_reader_refresh(r, NULL), LCT_OK);
    cr_expect_eq(lct_next(r, &rec), 0, "half a frame is not yet a record");
    append(path, t.buf + half, 2); /* a little more, still not whole */
    cr_assert_eq(lct_reader_refresh(r, NULL), LCT_OK);
    cr_expect_eq(lct_next(r, &rec), 0);
    append(path, t.buf + half + 2, bounds[4] - half - 2);
    cr_assert_eq(lct_reader_refresh(r, NULL), LCT_OK);
    cr_assert_eq(lct_next(r, &rec), 1);
    cr_expect_eq(rec.offset, bounds[2]);
    cr_assert_eq(lct_next(r, &rec), 1);
    cr_expect_eq(rec.offset, bounds[3]);
    cr_expect_eq(lct_next(r, &rec), 0);

    lct_stats st;
    lct_reader_stats(r, &st);
    cr_expect_eq(st.records, 3);
    cr_expect(!st.truncated, "following never calls a pause truncation");
    cr_expect_eq(w.count, 0);
    /* The header views were re-pointed into the new mapping. */
    const lct_header *h = lct_reader_header(r);
    cr_expect(h->level.len == 7 && !memcmp(h->level.ptr, "storage", 7));
    lct_close(r);

    /* Refresh needs LCT_FOLLOW. */
    cr_assert_eq(lct_open(path, 0, &r, NULL), LCT_OK);
    cr_expect_eq(lct_reader_refresh(r, NULL), LCT_ERR_INVALID);
    lct_close(r);
    unlink(path);
    free(path);
    mpw_free(&t);
}
