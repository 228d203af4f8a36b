/*
 * test_merge.c - lct_merge against what LMCache's replay-events does:
 * every file's records in the order given, then a stable sort by t_wall.
 * Equal timestamps across files, a damaged file, streamed readers (whose
 * views live only until the next call), and a file whose t_wall steps
 * back (kept in file order, warned about).
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "files.h"
#include "lct.h"

/* A record as the oracle sees it: where it came from, and its name. */
typedef struct seen {
    double t_wall;
    size_t file, seq;
    uint64_t offset;
    char qualname[32];
} seen;

static void add_record(lct_writer *w, double t_wall, const char *name)
{
    lct_writer_record_begin(w, 0, t_wall, name, strlen(name));
    lct_writer_map(w, 0);
    cr_assert_eq(lct_writer_end(w, NULL), LCT_OK);
}

static void append_raw(const char *path, const void *bytes, size_t n)
{
    FILE *f = fopen(path, "ab");
    cr_assert(f);
    cr_assert_eq(fwrite(bytes, 1, n, f), n);
    fclose(f);
}

/* File `f` of the set: t_wall drawn from a few values, so many are equal
 * within a file and across files, and never stepping back. */
static char *make_file(unsigned f, unsigned nrec, unsigned seed, bool damage)
{
    char *path;
    lct_writer *w = tmp_trace_writer(&path);
    double t = 100;
    for (unsigned i = 0; i < nrec; i++) {
        seed = seed * 1103515245u + 12345u;
        t += (seed >> 16) % 3 == 0 ? 1 : 0; /* mostly equal steps */
        char name[32];
        snprintf(name, sizeof name, "F%u.call_%u", f, i);
        add_record(w, t, name);
        if (damage && i == nrec / 2) {
            lct_writer_close(w);
            /* a malformed frame: prefix 3, body 0xc1 0xc1 0xc1 */
            append_raw(path, "\0\0\0\3\xc1\xc1\xc1", 7);
            cr_assert_eq(lct_writer_open(path, true, &w, NULL), LCT_OK);
        }
    }
    lct_writer_close(w);
    if (damage) /* a partial trailing frame */
        append_raw(path, "\0\0\0\x40\x83\xa4type", 10);
    return path;
}

static int by_time_then_file(const void *pa, const void *pb)
{
    const seen *a = pa, *b = pb;
    if (a->t_wall != b->t_wall)
        return a->t_wall < b->t_wall ? -1 : 1;
    if (a->file != b->file)
        return a->file < b->file ? -1 : 1;
    return a->seq < b->seq ? -1 : a->seq > b->seq;
}

/* Every record of every file as separate readers give them, sorted as a
 * stable sort of the concatenation would. */
static size_t oracle(char **paths, size_t n, seen *out, size_t cap)
{
    size_t k = 0;
    for (size_t f = 0; f < n; f++) {
        lct_reader *r;
        cr_assert_eq(lct_open(paths[f], LCT_QUIET, &r, NULL), LCT_OK);
        lct_record rec;
        for (size_t seq = 0; lct_next(r, &rec) == 1; seq++) {
            cr_assert_lt(k, cap);
            out[k] = (seen){rec.t_wall, f, seq, rec.offset, ""};
            memcpy(out[k].qualname, rec.qualname.ptr,
                   rec.qualname.len < 31 ? rec.qualname.len : 31);
            k++;
        }
        lct_close(r);
    }
    qsort(out, k, sizeof *out, by_time_then_file);
    return k;
}

static unsigned warnings[5];
static void count_warning(void *ctx, const lct_reader *r,
                          lct_warning_kind kind, uint64_t offset,
                          const char *message)
{
    (void)ctx, (void)r, (void)offset, (void)message;
    if (kind < 5)
        warnings[kind]++;
}

static void check_merge(char **paths, size_t n, unsigned flags)
{
    static seen want[4096];
    size_t nwant = oracle(paths, n, want, 4096);
    lct_reader *readers[8];
    for (size_t f = 0; f < n; f++) {
        cr_assert_eq(lct_open(paths[f], flags, &readers[f], NULL), LCT_OK);
        lct_reader_set_log(readers[f], count_warning, NULL);
    }
    memset(warnings, 0, sizeof warnings);
    lct_merge *m;
    cr_assert_eq(lct_merge_new(readers, n, 0, &m, NULL), LCT_OK);
    lct_record rec;
    size_t from, k = 0;
    while (lct_merge_next(m, &rec, &from) == 1) {
        cr_assert_lt(k, nwant);
        cr_assert_eq(from, want[k].file, "record %zu: file %zu, want %zu", k,
                     from, want[k].file);
        cr_assert_eq(rec.offset, want[k].offset, "record %zu", k);
        /* the view is read here, after the other readers moved on */
        cr_assert(lct_str_eq(rec.qualname, want[k].qualname),
                  "record %zu: %.*s, want %s", k, (int)rec.qualname.len,
                  rec.qualname.ptr, want[k].qualname);
        k++;
    }
    cr_expect_eq(k, nwant);
    cr_expect_eq(lct_merge_backsteps(m), 0);
    cr_expect_eq(warnings[LCT_WARN_ORDER], 0);
    lct_merge_free(m);
    for (size_t f = 0; f < n; f++)
        lct_close(readers[f]);
}

Test(merge, equals_a_stable_sort_with_ties_across_files_and_damage)
{
    char *paths[4];
    for (unsigned f = 0; f < 4; f++)
        paths[f] = make_file(f, 200 + 37 * f, 7 + f, f == 2);
    check_merge(paths, 4, 0);
    check_merge(paths, 4, LCT_STREAM); /* views die at the next call */
    /* the damaged file still says what it skipped, once per read */
    lct_reader *r;
    cr_assert_eq(lct_open(paths[2], LCT_QUIET, &r, NULL), LCT_OK);
    lct_merge *m;
    cr_assert_eq(lct_merge_new(&r, 1, 0, &m, NULL), LCT_OK);
    lct_record rec;
    while (lct_merge_next(m, &rec, NULL) == 1)
        ;
    lct_stats st;
    lct_reader_stats(r, &st);
    cr_expect_eq(st.skipped, 1);
    cr_expect(st.truncated);
    cr_expect_eq(st.records, 200 + 37 * 2);
    lct_merge_free(m);
    lct_close(r);
    for (unsigned f = 0; f < 4; f++) {
        unlink(paths[f]);
        free(paths[f]);
    }
}

static char last_order_message[LCT_ERROR_MESSAGE_SIZE];
static uint64_t last_order_offset;
static void keep_order_warning(void *ctx, const lct_reader *r,
                               lct_warning_kind kind, uint64_t offset,
                               const char *message)
{
    (void)ctx, (void)r;
    if (kind != LCT_WARN_ORDER)
        return;
    warnings[kind]++;
    last_order_offset = offset;
    snprintf(last_order_message, sizeof last_order_message, "%s", message);
}

/* A NaN t_wall is named as NaN, at its own record; the record after it
 * is not blamed ("steps back inf s" was said of the record it came to). */
Test(merge, a_nan_t_wall_is_named_at_its_own_record)
{
    char *a;
    lct_writer *w = tmp_trace_writer(&a);
    add_record(w, 1, "A.one");
    add_record(w, 2, "A.two");
    add_record(w, NAN, "A.nan");
    add_record(w, 3, "A.three");
    lct_writer_close(w);
    lct_reader *r;
    cr_assert_eq(lct_open(a, 0, &r, NULL), LCT_OK);
    lct_reader_set_log(r, keep_order_warning, NULL);
    memset(warnings, 0, sizeof warnings);
    lct_merge *m;
    cr_assert_eq(lct_merge_new(&r, 1, 0, &m, NULL), LCT_OK);
    lct_record rec;
    uint64_t nan_offset = 0;
    size_t k = 0;
    while (lct_merge_next(m, &rec, NULL) == 1) {
        if (lct_str_eq(rec.qualname, "A.nan"))
            nan_offset = rec.offset;
        k++;
    }
    cr_expect_eq(k, 4);
    cr_expect_eq(warnings[LCT_WARN_ORDER], 1);
    cr_expect_eq(last_order_offset, nan_offset);
    cr_expect(strstr(last_order_message, "t_wall is NaN at offset"), "%s",
              last_order_message);
    cr_expect(!strstr(last_order_message, "inf"), "%s", last_order_message);
    lct_merge_free(m);
    lct_close(r);
    unlink(a);
    free(a);
}

Test(merge, a_step_back_keeps_file_order_and_is_warned)
{
    char *a, *b;
    lct_writer *w = tmp_trace_writer(&a);
    add_record(w, 1, "A.one");
    add_record(w, 5, "A.five");
    add_record(w, 3, "A.three"); /* steps back 2 s */
    add_record(w, 6, "A.six");
    lct_writer_close(w);
    w = tmp_trace_writer(&b);
    add_record(w, 4, "B.four");
    add_record(w, 5, "B.five");
    lct_writer_close(w);
    lct_reader *rs[2];
    cr_assert_eq(lct_open(a, 0, &rs[0], NULL), LCT_OK);
    cr_assert_eq(lct_open(b, 0, &rs[1], NULL), LCT_OK);
    lct_reader_set_log(rs[0], count_warning, NULL);
    memset(warnings, 0, sizeof warnings);
    lct_merge *m;
    cr_assert_eq(lct_merge_new(rs, 2, LCT_MERGE_TIMELINE, &m, NULL), LCT_OK);
    /* A.three comes after A.five, as its file has it (a full sort would
     * put it before B.four) */
    const char *want[] = {"A.one", "B.four", "A.five", "A.three", "B.five",
                          "A.six"};
    lct_record rec;
    size_t k = 0;
    while (lct_merge_next(m, &rec, NULL) == 1) {
        cr_assert_lt(k, 6);
        cr_expect(lct_str_eq(rec.qualname, want[k]), "%zu: %.*s", k,
                  (int)rec.qualname.len, rec.qualname.ptr);
        /* LCT_MERGE_TIMELINE: seconds since the first record's t_wall */
        cr_expect_eq(rec.t_mono, rec.t_wall - 1, "%zu: t_mono %g", k,
                     rec.t_mono);
        k++;
    }
    cr_expect_eq(k, 6);
    cr_expect_eq(lct_merge_backsteps(m), 1);
    cr_expect_eq(warnings[LCT_WARN_ORDER], 1);
    /* again from the start: the same records */
    lct_merge_rewind(m);
    for (k = 0; lct_merge_next(m, &rec, NULL) == 1; k++)
        ;
    cr_expect_eq(k, 6);
    lct_merge_free(m);
    lct_close(rs[0]);
    lct_close(rs[1]);
    unlink(a);
    unlink(b);
    free(a);
    free(b);
}

Test(merge, refuses_no_readers)
{
    lct_merge *m = (lct_merge *)1;
    lct_error err;
    cr_expect_eq(lct_merge_new(NULL, 0, 0, &m, &err), LCT_ERR_INVALID);
    cr_expect_null(m);
    lct_reader *none = NULL;
    cr_expect_eq(lct_merge_new(&none, 1, 0, &m, &err), LCT_ERR_INVALID);
    cr_expect_eq(lct_merge_next(NULL, NULL, NULL), LCT_ERR_INVALID);
}
