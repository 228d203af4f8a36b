/*
 * test_zeros.c - a zero-filled block inside a trace (a crash can leave
 * one: delayed allocation) costs what reading it costs.  Each 4 zero
 * bytes are an empty frame, skipped with a warning, as the reference
 * reader skips them; a run of them is checked against the file once, not
 * with a system call a frame.  This program is linked with
 * -Wl,--wrap=fstat so every fstat the library makes is counted.
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "files.h"
#include "lct.h"
#include "mpw.h"

static unsigned long fstats;

int __real_fstat(int fd, struct stat *st);
int __wrap_fstat(int fd, struct stat *st)
{
    fstats++;
    return __real_fstat(fd, st);
}

enum { RECORDS = 2000, ZEROS = 256 * 1024 };

/* A trace of RECORDS records with ZEROS zero bytes put in after the
 * record at the middle; its path. */
static char *trace_with_zeros(void)
{
    mpw file;
    mpw_init(&file);
    mpw_simple_trace(&file, RECORDS);
    /* the middle record's end: walk the frames */
    size_t pos = 0;
    for (unsigned i = 0; i <= RECORDS / 2; i++)
        pos += 4 + ((size_t)file.buf[pos] << 24 | (size_t)file.buf[pos + 1] << 16 |
                    (size_t)file.buf[pos + 2] << 8 | file.buf[pos + 3]);
    mpw out;
    mpw_init(&out);
    mpw_raw(&out, file.buf, pos);
    unsigned char *zeros = calloc(1, ZEROS);
    mpw_raw(&out, zeros, ZEROS);
    mpw_raw(&out, file.buf + pos, file.len - pos);
    free(zeros);
    char *path = tmp_file_with(out.buf, out.len);
    mpw_free(&file);
    mpw_free(&out);
    return path;
}

/* Every warning, as text, one a line. */
typedef struct said {
    char *buf;
    size_t len, cap;
    unsigned long count;
} said;

static void keep(void *ctx, const lct_reader *r, lct_warning_kind kind,
                 uint64_t offset, const char *message)
{
    (void)r, (void)kind, (void)offset;
    said *s = ctx;
    size_t n = strlen(message);
    if (s->len + n + 2 > s->cap) {
        s->cap = 2 * (s->len + n + 2);
        s->buf = realloc(s->buf, s->cap);
        cr_assert_not_null(s->buf);
    }
    memcpy(s->buf + s->len, message, n);
    s->len += n;
    s->buf[s->len++] = '\n';
    s->buf[s->len] = '\0';
    s->count++;
}

static int count_record(void *state, const lct_record *rec)
{
    (void)rec;
    (*(unsigned long *)state)++;
    return 0;
}

static void reset_count(void *state)
{
    *(unsigned long *)state = 0;
}

typedef struct outcome {
    lct_stats stats;
    unsigned long records;
    said warnings;
    unsigned long fstats;
} outcome;

/* Read path with flags, by lct_next (threads 0) or lct_scan_file; the
 * warnings kept unless malformed ones are left out. */
static outcome read_it(const char *path, unsigned flags, unsigned threads,
                       bool malformed)
{
    outcome o = {0};
    lct_reader *r;
    lct_error err;
    cr_assert_eq(lct_open(path, flags, &r, &err), LCT_OK, "%s", err.message);
    lct_reader_set_log(r, keep, &o.warnings);
    if (!malformed)
        lct_reader_set_log_kinds(r, ~LCT_WARN_MASK(LCT_WARN_MALFORMED));
    unsigned long before = fstats;
    if (threads == 0) {
        lct_record rec;
        while (lct_next(r, &rec) == 1)
            o.records++;
        lct_reader_stats(r, &o.stats);
    } else {
        unsigned long counts[8] = {0};
        void *states[8];
        for (unsigned t = 0; t < 8; t++)
            states[t] = &counts[t];
        lct_scan scan = {.threads = threads, .on_record = count_record,
                         .states = states, .on_reset = reset_count};
        cr_assert_eq(lct_scan_file(r, &scan, &o.stats, &err), LCT_OK, "%s",
                     err.message);
        for (unsigned t = 0; t < 8; t++)
            o.records += counts[t];
    }
    o.fstats = fstats - before;
    lct_close(r);
    return o;
}

Test(zeros, a_zero_block_is_skipped_frame_by_frame_with_few_system_calls)
{
    char *path = trace_with_zeros();
    outcome cold = read_it(path, 0, 0, true);
    /* every 4 zero bytes an empty frame, each a skip and a warning */
    cr_expect_eq(cold.records, RECORDS);
    cr_expect_eq(cold.stats.skipped, ZEROS / 4);
    cr_expect_eq(cold.warnings.count, ZEROS / 4);
    cr_expect(strstr(cold.warnings.buf, "empty frame body"), "%.200s",
              cold.warnings.buf);
    static const struct {
        unsigned flags, threads;
        bool malformed;
    } ways[] = {
        {0, 0, true},           {LCT_STREAM, 0, true}, {0, 0, false},
        {LCT_STREAM, 0, false}, {0, 2, true},          {LCT_STREAM, 2, true},
        {0, 3, true},           {0, 2, false},         {LCT_STREAM, 2, false},
    };
    for (size_t w = 0; w < sizeof ways / sizeof ways[0]; w++) {
        outcome o = read_it(path, ways[w].flags, ways[w].threads,
                            ways[w].malformed);
        cr_expect_eq(o.records, cold.records, "way %zu", w);
        cr_expect_eq(o.stats.skipped, cold.stats.skipped, "way %zu", w);
        cr_expect_eq(o.stats.truncated, false, "way %zu", w);
        if (ways[w].malformed)
            cr_expect(o.warnings.buf &&
                          strcmp(o.warnings.buf, cold.warnings.buf) == 0,
                      "way %zu: the warnings differ", w);
        else
            cr_expect_eq(o.warnings.count, 0, "way %zu", w);
        /* a few for the run and the end, never one a frame */
        cr_expect_lt(o.fstats, 64, "way %zu: %lu fstat calls", w, o.fstats);
        free(o.warnings.buf);
    }
    free(cold.warnings.buf);
    unlink(path);
    free(path);
}
