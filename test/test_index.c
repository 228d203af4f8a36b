/*
 * test_index.c - the frame index, parallel scans (results identical to the
 * sequential reader on every fixture and on a large synthetic trace, for
 * 1 to 4 threads, warnings included), and how many threads by default.
 */
#define _GNU_SOURCE /* cpu_set_t (cpus.h) */
#include <criterion/criterion.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cpus.h"
#include "files.h"
#include "lct.h"
#include "mpw.h"

static const char *fixtures[] = {"clean", "events", "header_only",
                                 "huge_length", "malformed_mixed",
                                 "schema_v1_readable", "trunc_tail_2",
                                 "trunc_tail_74"};

/* What the sequential reader yields: record offsets, skip offsets. */
typedef struct seq {
    uint64_t rec[8192], skip[64];
    size_t nrec, nskip;
    char truncation[160];
    uint64_t truncation_offset;
} seq;

static void seq_log(void *ctx, const lct_reader *r, lct_warning_kind kind,
                    uint64_t offset, const char *message)
{
    (void)r;
    seq *s = ctx;
    if (kind == LCT_WARN_MALFORMED)
        s->skip[s->nskip++] = offset;
    else {
        snprintf(s->truncation, sizeof s->truncation, "%s", message);
        s->truncation_offset = offset;
    }
}

static void sequential(lct_reader *r, seq *s)
{
    memset(s, 0, sizeof *s);
    lct_reader_set_log(r, seq_log, s);
    lct_reader_rewind(r);
    lct_record rec;
    while (lct_next(r, &rec) == 1)
        s->rec[s->nrec++] = rec.offset;
}

/* Per-thread state of a scan: the same two lists, for its range. */
typedef struct part {
    uint64_t *rec, *skip;
    size_t nrec, nskip;
    double sum_t_mono;
} part;

static int part_record(void *state, const lct_record *rec)
{
    part *p = state;
    p->rec[p->nrec++] = rec->offset;
    p->sum_t_mono += rec->t_mono;
    return 0;
}

static void part_skip(void *state, uint64_t offset, const char *reason)
{
    part *p = state;
    cr_expect(reason && *reason);
    p->skip[p->nskip++] = offset;
}

static void check_scan_matches(lct_reader *r, const seq *s)
{
    lct_index *idx;
    cr_assert_eq(lct_index_build(r, &idx, NULL), LCT_OK);
    cr_expect_eq(lct_index_count(idx), s->nrec + s->nskip,
                 "every complete frame is indexed");
    uint64_t toff;
    const char *tmsg;
    bool truncated = lct_index_truncation(idx, &toff, &tmsg);
    cr_expect_eq(truncated, s->truncation[0] != '\0');
    if (truncated) {
        cr_expect_str_eq(tmsg, s->truncation);
        cr_expect_eq(toff, s->truncation_offset);
    }

    for (unsigned threads = 1; threads <= 4; threads++) {
        lct_scan scan = {.threads = threads, .on_record = part_record,
            .on_skip = part_skip};
        unsigned n = lct_scan_threads(&scan, idx);
        cr_assert_leq(n, threads);
        part *parts = calloc(n, sizeof *parts);
        void **states = calloc(n, sizeof *states);
        for (unsigned t = 0; t < n; t++) {
            parts[t].rec = calloc(s->nrec + 1, sizeof(uint64_t));
            parts[t].skip = calloc(s->nskip + 1, sizeof(uint64_t));
            states[t] = &parts[t];
        }
        scan.states = states;
        lct_stats st;
        /* The scan gives its warnings through the reader's log, after the
         * threads, in file order and in lct_next's words. */
        static seq given;
        memset(&given, 0, sizeof given);
        lct_reader_set_log(r, seq_log, &given);
        cr_assert_eq(lct_scan_run(idx, &scan, &st, NULL), LCT_OK);
        lct_reader_set_log(r, NULL, NULL);
        cr_expect_eq(given.nskip, s->nskip, "%u threads", threads);
        for (size_t k = 0; k < given.nskip && k < s->nskip; k++)
            cr_expect_eq(given.skip[k], s->skip[k]);
        cr_expect_str_eq(given.truncation, s->truncation);
        cr_expect_eq(given.truncation_offset, s->truncation_offset);
        cr_expect_eq(st.records, s->nrec);
        cr_expect_eq(st.skipped, s->nskip);
        cr_expect_eq(st.truncated, truncated);
        /* Merged in thread order, the lists are the sequential ones. */
        size_t ri = 0, si = 0;
        for (unsigned t = 0; t < n; t++) {
            for (size_t k = 0; k < parts[t].nrec; k++, ri++)
                cr_expect_eq(parts[t].rec[k], s->rec[ri], "%u threads", threads);
            for (size_t k = 0; k < parts[t].nskip; k++, si++)
                cr_expect_eq(parts[t].skip[k], s->skip[si]);
            free(parts[t].rec);
            free(parts[t].skip);
        }
        cr_expect_eq(ri, s->nrec);
        cr_expect_eq(si, s->nskip);
        free(parts);
        free(states);
    }

    /* Taken a range of frames at a time (as lct dump -j does), the scans
     * give the same records and warnings; the cut tail comes only with
     * the range that reaches the end, and a bad range is refused. */
    for (uint64_t batch = 1; batch <= 7; batch += 3) {
        static seq given;
        memset(&given, 0, sizeof given);
        lct_reader_set_log(r, seq_log, &given);
        part one = {calloc(s->nrec + 1, sizeof(uint64_t)),
                    calloc(s->nskip + 1, sizeof(uint64_t)), 0, 0, 0};
        part two = {calloc(s->nrec + 1, sizeof(uint64_t)),
                    calloc(s->nskip + 1, sizeof(uint64_t)), 0, 0, 0};
        void *states[2] = {&one, &two};
        uint64_t count = lct_index_count(idx), records = 0, skipped = 0;
        bool cut = false;
        uint64_t from = 0;
        do {
            lct_scan scan = {.threads = 2, .on_record = part_record,
                             .on_skip = part_skip, .states = states,
                             .frames_from = from,
                             .frames_to = count - from < batch ? count
                                                               : from + batch};
            lct_stats st;
            cr_assert_eq(lct_scan_run(idx, &scan, &st, NULL), LCT_OK);
            records += st.records;
            skipped += st.skipped;
            cr_expect(!st.truncated || scan.frames_to == count);
            cut |= st.truncated;
            /* merge this range's two parts in order, then empty them */
            for (size_t k = 0; k < two.nrec; k++)
                one.rec[one.nrec++] = two.rec[k];
            two.nrec = 0;
            from = scan.frames_to;
        } while (from < count);
        lct_reader_set_log(r, NULL, NULL);
        cr_expect_eq(records, s->nrec, "batches of %llu",
                     (unsigned long long)batch);
        cr_expect_eq(skipped, s->nskip);
        cr_expect_eq(cut, truncated);
        cr_expect_eq(given.nskip, s->nskip);
        cr_expect_str_eq(given.truncation, s->truncation);
        for (size_t k = 0; k < one.nrec && k < s->nrec; k++)
            cr_expect_eq(one.rec[k], s->rec[k]);
        free(one.rec);
        free(one.skip);
        free(two.rec);
        free(two.skip);
    }
    lct_scan bad = {.on_record = part_record, .frames_from = 2,
                    .frames_to = 1};
    cr_expect_eq(lct_scan_run(idx, &bad, NULL, NULL), LCT_ERR_INVALID);
    bad.frames_from = 0;
    bad.frames_to = lct_index_count(idx) + 1;
    cr_expect_eq(lct_scan_run(idx, &bad, NULL, NULL), LCT_ERR_INVALID);

    /* Random access agrees with the sequential reader. */
    size_t ri = 0;
    for (uint64_t i = 0; i < lct_index_count(idx); i++) {
        lct_record rec;
        const char *why = NULL;
        int rc = lct_index_record(idx, i, &rec, &why);
        cr_assert_geq(rc, 0);
        if (rc == 1) {
            cr_expect_eq(rec.offset, s->rec[ri++]);
            cr_expect_eq(rec.offset, lct_index_offset(idx, i));
        } else {
            cr_expect(why && *why);
        }
    }
    cr_expect_eq(lct_index_offset(idx, lct_index_count(idx)), UINT64_MAX);
    lct_record rec;
    cr_expect_eq(lct_index_record(idx, lct_index_count(idx), &rec, NULL),
                 LCT_ERR_INVALID);
    lct_index_free(idx);
}

Test(index, scans_match_sequential_on_every_fixture)
{
    static seq s;
    for (size_t f = 0; f < sizeof fixtures / sizeof *fixtures; f++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s.lct", LCT_FIXTURES_DIR, fixtures[f]);
        lct_reader *r;
        cr_assert_eq(lct_open(path, 0, &r, NULL), LCT_OK, "%s", path);
        sequential(r, &s);
        check_scan_matches(r, &s);
        lct_close(r);
    }
}

Test(index, scans_match_sequential_on_a_large_trace)
{
    mpw file;
    mpw_init(&file);
    mpw_simple_trace(&file, 6000);
    /* A malformed frame in the middle and a cut tail. */
    mpw bad;
    mpw_init(&bad);
    mpw_array(&bad, 0);
    mpw_frame(&file, &bad);
    mpw more;
    mpw_init(&more);
    mpw_simple_trace(&more, 2000);
    size_t header = 4 + ((size_t)more.buf[2] << 8 | more.buf[3]);
    mpw_raw(&file, more.buf + header, more.len - header);
    mpw_raw(&file, "\x00\x00\x01", 3);
    lct_reader *r;
    cr_assert_eq(lct_open_buffer(file.buf, file.len, "big", 0, &r, NULL),
                 LCT_OK);
    static seq s;
    sequential(r, &s);
    cr_assert_eq(s.nrec, 8000);
    cr_assert_eq(s.nskip, 1);
    check_scan_matches(r, &s);
    lct_close(r);
    mpw_free(&file);
    mpw_free(&bad);
    mpw_free(&more);
}

/* MARK: one-pass file scans (lct_scan_file) */

static void part_reset(void *state)
{
    part *p = state;
    p->nrec = p->nskip = 0;
    p->sum_t_mono = 0;
}

/* lct_scan_file on the file at path, read mapped and streamed, on 1 to 4
 * threads: the records, warnings and stats of the sequential reader. */
static void check_file_scan(const char *path, const seq *s)
{
    for (int streamed = 0; streamed < 2; streamed++) {
        lct_reader *r;
        cr_assert_eq(lct_open(path, streamed ? LCT_STREAM : 0, &r, NULL),
                     LCT_OK);
        for (unsigned threads = 1; threads <= 4; threads++) {
            part parts[4];
            void *states[4];
            for (unsigned t = 0; t < 4; t++) {
                parts[t] = (part){calloc(s->nrec + 1, 8), calloc(s->nskip + 1, 8),
                                  0, 0, 0};
                states[t] = &parts[t];
            }
            lct_scan scan = {.threads = threads, .on_record = part_record,
                .on_skip = part_skip, .states = states, .on_reset = part_reset};
            static seq given;
            memset(&given, 0, sizeof given);
            lct_reader_set_log(r, seq_log, &given);
            lct_stats st;
            cr_assert_eq(lct_scan_file(r, &scan, &st, NULL), LCT_OK);
            size_t ri = 0;
            for (unsigned t = 0; t < 4; t++) {
                for (size_t k = 0; k < parts[t].nrec; k++, ri++)
                    cr_expect_eq(parts[t].rec[k], ri < s->nrec ? s->rec[ri] : 0,
                                 "%s: %u threads, record %zu", path, threads, ri);
                free(parts[t].rec);
                free(parts[t].skip);
            }
            cr_expect_eq(ri, s->nrec, "%s: %u threads", path, threads);
            cr_expect_eq(st.records, s->nrec);
            cr_expect_eq(st.skipped, s->nskip);
            cr_expect_eq(given.nskip, s->nskip);
            for (size_t k = 0; k < given.nskip && k < s->nskip; k++)
                cr_expect_eq(given.skip[k], s->skip[k]);
            cr_expect_str_eq(given.truncation, s->truncation, "%s", path);
            cr_expect_eq(given.truncation_offset, s->truncation_offset);
            cr_expect_eq(st.truncated, s->truncation[0] != '\0');
        }
        lct_close(r);
    }
}

Test(pscan, one_pass_file_scans_match_sequential_on_every_fixture)
{
    static seq s;
    for (size_t f = 0; f < sizeof fixtures / sizeof *fixtures; f++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s.lct", LCT_FIXTURES_DIR, fixtures[f]);
        lct_reader *r;
        cr_assert_eq(lct_open(path, 0, &r, NULL), LCT_OK, "%s", path);
        sequential(r, &s);
        lct_close(r);
        check_file_scan(path, &s);
    }
}

/* A large trace with a skip and a cut tail, and then one whose middle
 * record carries bin bytes that look exactly like record frames: a thread
 * that starts there starts wrong, the seam does not hold, and the scan is
 * done again by one thread, with the same answer. */
Test(pscan, false_starts_and_damage_give_the_sequential_answer)
{
    for (int fake = 0; fake < 2; fake++) {
        mpw file, body;
        mpw_init(&file);
        mpw_init(&body);
        mpw_simple_trace(&file, 3000);
        mpw_record_begin(&body, 1e6, 1e6, "fake.op");
        mpw_map(&body, 1);
        mpw_str(&body, "b");
        static unsigned char lure[60000];
        for (size_t i = 0; i + 17 <= sizeof lure; i += 17) {
            static const unsigned char frame_start[17] = {
                0, 0, 0, 16, 0x85, 0xa4, 't', 'y', 'p', 'e', 0xa6,
                'r', 'e', 'c', 'o', 'r', 'd'};
            memcpy(lure + i, frame_start, fake ? 17 : 0);
        }
        mpw_bin(&body, lure, sizeof lure);
        mpw_frame(&file, &body);
        mpw_reset(&body);
        mpw_array(&body, 0); /* a malformed frame */
        mpw_frame(&file, &body);
        mpw more;
        mpw_init(&more);
        mpw_simple_trace(&more, 3000);
        size_t header = 4 + ((size_t)more.buf[2] << 8 | more.buf[3]);
        mpw_raw(&file, more.buf + header, more.len - header);
        mpw_raw(&file, "\x00\x00\x01", 3); /* a cut tail */
        char *path = tmp_file_with(file.buf, file.len);
        lct_reader *r;
        cr_assert_eq(lct_open(path, 0, &r, NULL), LCT_OK);
        static seq s;
        sequential(r, &s);
        lct_close(r);
        cr_assert_eq(s.nrec, 6001);
        cr_assert_eq(s.nskip, 1);
        check_file_scan(path, &s);
        unlink(path);
        free(path);
        mpw_free(&file);
        mpw_free(&body);
        mpw_free(&more);
    }
}

Test(pscan, pipes_and_buffers_are_refused)
{
    mpw file;
    mpw_init(&file);
    mpw_simple_trace(&file, 3);
    lct_reader *r;
    cr_assert_eq(lct_open_buffer(file.buf, file.len, "b", 0, &r, NULL), LCT_OK);
    lct_scan scan = {.threads = 2, .on_record = part_record};
    lct_error err;
    memset(&err, 0xa5, sizeof err);
    cr_expect_eq(lct_scan_file(r, &scan, NULL, &err), LCT_ERR_INVALID);
    cr_expect_eq(err.code, LCT_ERR_INVALID);
    lct_close(r);
    mpw_free(&file);
}

Test(index, stopping_a_thread_early)
{
    mpw file;
    mpw_init(&file);
    mpw_simple_trace(&file, 100);
    lct_reader *r;
    cr_assert_eq(lct_open_buffer(file.buf, file.len, "x", 0, &r, NULL), LCT_OK);
    lct_index *idx;
    cr_assert_eq(lct_index_build(r, &idx, NULL), LCT_OK);
    int stop_after_one(void *state, const lct_record *rec);
    lct_scan scan = {.threads = 1, .on_record = stop_after_one};
    lct_stats st;
    cr_assert_eq(lct_scan_run(idx, &scan, &st, NULL), LCT_OK);
    cr_expect_eq(st.records, 1);
    cr_expect_eq(lct_scan_run(NULL, &scan, &st, NULL), LCT_ERR_INVALID);
    lct_index_free(idx);
    lct_close(r);
    mpw_free(&file);
}

int stop_after_one(void *state, const lct_record *rec)
{
    (void)state;
    (void)rec;
    return 1;
}

static int part_record_count(void *state, const lct_record *rec)
{
    (void)state, (void)rec;
    return 0;
}

static void nothing_to_reset(void *state)
{
    (void)state;
}

static void count_warning(void *ctx, const lct_reader *r,
                          lct_warning_kind kind, uint64_t offset,
                          const char *message)
{
    (void)r, (void)offset, (void)message;
    if (kind == LCT_WARN_MALFORMED)
        ++*(uint64_t *)ctx;
}

/* A run of zeros is a skip every 4 bytes; each skip's reason was read
 * again through a fresh 256 KiB buffer (4 MiB of zeros: -j 2 took 24 s
 * against 0.35 s).  Now the warnings cost what reading the bytes costs:
 * counted in bytes read, not seconds, so the test cannot be flaky. */
Test(pscan, a_run_of_zeros_is_read_about_once_on_two_threads)
{
    mpw file;
    mpw_init(&file);
    mpw_simple_trace(&file, 20000);
    size_t half = file.len / 2, zeros = 256 * 1024;
    unsigned char *data = malloc(file.len + zeros);
    cr_assert_not_null(data);
    memcpy(data, file.buf, half);
    memset(data + half, 0, zeros);
    memcpy(data + half + zeros, file.buf + half, file.len - half);
    size_t size = file.len + zeros;
    char *path = tmp_file_with(data, size);
    uint64_t skips_seq = 0, skips_par = 0;
    lct_reader *r;
    cr_assert_eq(lct_open(path, LCT_STREAM, &r, NULL), LCT_OK);
    lct_reader_set_log(r, count_warning, &skips_seq);
    lct_record rec;
    while (lct_next(r, &rec) == 1)
        ;
    lct_close(r);
    cr_assert_geq(skips_seq, zeros / 4 - 64, "%" PRIu64 " skips", skips_seq);

    cr_assert_eq(lct_open(path, LCT_STREAM, &r, NULL), LCT_OK);
    lct_reader_set_log(r, count_warning, &skips_par);
    lct_scan scan = {.threads = 2, .on_record = part_record_count,
        .on_reset = nothing_to_reset};
    unsigned long long before = process_bytes_read();
    lct_stats st;
    cr_assert_eq(lct_scan_file(r, &scan, &st, NULL), LCT_OK);
    unsigned long long read = process_bytes_read() - before;
    lct_close(r);
    cr_expect_eq(skips_par, skips_seq);
    cr_expect_eq(st.skipped, skips_seq, "%" PRIu64 " skipped, %" PRIu64 " warned", st.skipped, skips_par);
    cr_expect_leq(read, 3ull * size, "read %llu bytes of a %zu-byte file",
                  read, size);
    unlink(path);
    free(path);
    free(data);
    mpw_free(&file);
}

/* By default a scan takes a thread per CPU the process may run on, as
 * nproc(1) counts them, not per online CPU: pinned to one, one thread. */
Test(index, default_threads_are_the_cpus_the_process_may_use)
{
    cpu_set_t all;
    lct_scan scan = {.on_record = part_record_count};
    pin_to_one_cpu(&all);
    unsigned pinned = lct_scan_threads(&scan, NULL);
    unpin(&all);
    cr_expect_eq(pinned, 1);
    cr_expect_eq(lct_scan_threads(&scan, NULL), (unsigned)CPU_COUNT(&all));
    scan.threads = 3;
    cr_expect_eq(lct_scan_threads(&scan, NULL), 3, "asked for, not capped");
}
