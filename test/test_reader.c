/*
 * test_reader.c - the reference decoder's rules, one at a time, on traces
 * built in memory: what a record must be to be yielded, what is skipped
 * and warned about, how the end and a cut tail are reported, and how the
 * header is judged.
 */
#include <criterion/criterion.h>
#include <criterion/redirect.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "files.h"
#include "lct.h"
#include "mpw.h"

/* MARK: - helpers */

typedef struct seen {
    int warnings;
    lct_warning_kind kind[8];
    uint64_t offset[8];
    char message[8][256];
} seen;

static void record_warning(void *ctx, const lct_reader *r,
                           lct_warning_kind kind, uint64_t offset,
                           const char *message)
{
    (void)r;
    seen *s = ctx;
    if (s->warnings < 8) {
        s->kind[s->warnings] = kind;
        s->offset[s->warnings] = offset;
        snprintf(s->message[s->warnings], sizeof s->message[0], "%s",
                 message);
    }
    s->warnings++;
}

/* A file: standard header, then the given record bodies as frames. */
static void trace_of(mpw *file, mpw *bodies, int n)
{
    mpw h;
    mpw_init(&h);
    mpw_std_header(&h);
    mpw_frame(file, &h);
    mpw_free(&h);
    for (int i = 0; i < n; i++)
        mpw_frame(file, &bodies[i]);
}

/* Open one record body as a trace; how many records came out. */
static int yields(const mpw *body, unsigned flags, lct_record *out,
                  seen *s)
{
    mpw file;
    mpw_init(&file);
    trace_of(&file, (mpw *)body, 1);
    lct_reader *r;
    lct_error err;
    cr_assert_eq(lct_open_buffer(file.buf, file.len, "mem.lct", flags, &r,
                                 &err),
                 LCT_OK, "%s", err.message);
    seen local = {0};
    lct_reader_set_log(r, record_warning, s ? s : &local);
    lct_record rec;
    int n = 0;
    while (lct_next(r, &rec) == 1) {
        if (out)
            *out = rec; /* views die below; callers read only scalars */
        n++;
    }
    lct_stats st;
    lct_reader_stats(r, &st);
    cr_expect_eq(st.records + st.skipped, 1, "each frame counted once");
    lct_close(r);
    mpw_free(&file);
    return n;
}

static void good_args(mpw *b)
{
    mpw_map(b, 1);
    mpw_str(b, "keys");
    mpw_array(b, 0);
}

/* MARK: - records */

Test(record, recorder_layout_is_yielded)
{
    mpw b;
    mpw_init(&b);
    mpw_record_begin(&b, 1.25, 1764600000.5, "x.op");
    good_args(&b);
    lct_record rec;
    cr_assert_eq(yields(&b, 0, &rec, NULL), 1);
    cr_expect_eq(rec.t_mono, 1.25);
    cr_expect_eq(rec.t_wall, 1764600000.5);
    cr_expect_eq(rec.length, b.len);
    cr_expect_eq(rec.offset > 0, true);
    mpw_free(&b);
}

Test(record, any_order_float32_int_times_unknown_keys_no_type)
{
    mpw b;
    mpw_init(&b);
    mpw_map(&b, 5);
    mpw_str(&b, "args");
    good_args(&b);
    mpw_str(&b, "future");
    mpw_array(&b, 2);
    mpw_strn(&b, "\xff", 1); /* unknown values: structure only */
    mpw_nil(&b);
    mpw_str(&b, "qualname");
    mpw_str(&b, "q");
    mpw_str(&b, "t_wall");
    mpw_int(&b, -3);
    mpw_str(&b, "t_mono");
    mpw_f32(&b, 0.5f);
    lct_record rec;
    cr_assert_eq(yields(&b, 0, &rec, NULL), 1);
    cr_expect_eq(rec.t_mono, 0.5);
    cr_expect_eq(rec.t_wall, -3.0);
    mpw_free(&b);
}

Test(record, repeated_key_last_value_wins)
{
    mpw b;
    mpw_init(&b);
    mpw_map(&b, 5);
    mpw_str(&b, "t_mono");
    mpw_f64(&b, 1.0);
    mpw_str(&b, "t_wall");
    mpw_f64(&b, 2.0);
    mpw_str(&b, "qualname");
    mpw_str(&b, "q");
    mpw_str(&b, "args");
    good_args(&b);
    mpw_str(&b, "t_mono");
    mpw_f64(&b, 9.0);
    lct_record rec;
    cr_assert_eq(yields(&b, 0, &rec, NULL), 1);
    cr_expect_eq(rec.t_mono, 9.0);
    mpw_free(&b);
}

/* Each of these bodies must be skipped with one MALFORMED warning. */
static void expect_skipped(const mpw *b, const char *what)
{
    seen s = {0};
    cr_expect_eq(yields(b, 0, NULL, &s), 0, "%s was yielded", what);
    cr_expect_eq(s.warnings, 1, "%s: %d warnings", what, s.warnings);
    cr_expect_eq(s.kind[0], LCT_WARN_MALFORMED, "%s", what);
    cr_expect(strstr(s.message[0], "skipping malformed record at offset") !=
                  NULL,
              "%s: \"%s\"", what, s.message[0]);
}

/* A record with one field replaced (or dropped, when value is NULL). */
typedef void (*put_fn)(mpw *);
static void record_with(mpw *b, const char *field, put_fn put)
{
    mpw_reset(b);
    mpw_map(b, put ? 5 : 4);
    static const char *names[] = {"type", "t_mono", "t_wall", "qualname",
                                  "args"};
    for (int i = 0; i < 5; i++) {
        bool replace = strcmp(names[i], field) == 0;
        if (replace && !put)
            continue;
        mpw_str(b, names[i]);
        if (replace)
            put(b);
        else if (i == 0)
            mpw_str(b, "record");
        else if (i == 1 || i == 2)
            mpw_f64(b, 1.0);
        else if (i == 3)
            mpw_str(b, "q");
        else
            good_args(b);
    }
}

static void put_str(mpw *b) { mpw_str(b, "1.0"); }
static void put_nil(mpw *b) { mpw_nil(b); }
static void put_true(mpw *b) { mpw_bool(b, true); }
static void put_bin(mpw *b) { mpw_bin(b, "q", 1); }
static void put_array(mpw *b) { mpw_array(b, 0); }
static void put_header_tag(mpw *b) { mpw_str(b, "header"); }
static void put_int_tag(mpw *b) { mpw_uint(b, 1); }
static void put_bad_utf8(mpw *b) { mpw_strn(b, "\xc3\x28", 2); }
static void put_args_int_key(mpw *b)
{
    mpw_map(b, 1);
    mpw_uint(b, 1);
    mpw_nil(b);
}
static void put_args_bad_inner_utf8(mpw *b)
{
    mpw_map(b, 1);
    mpw_str(b, "k");
    mpw_array(b, 2);
    mpw_uint(b, 1);
    mpw_map(b, 1);
    mpw_nil(b);
    mpw_strn(b, "\xed\xa0\x80", 3);
}
static void put_args_bad_key_utf8(mpw *b)
{
    mpw_map(b, 1);
    mpw_strn(b, "\xff", 1);
    mpw_nil(b);
}
static void put_args_bad_timestamp(mpw *b)
{
    mpw_map(b, 1);
    mpw_str(b, "when");
    mpw_ext(b, -1, "\x00\x01", 2);
}
static void put_args_too_deep(mpw *b)
{
    mpw_map(b, 1);
    mpw_str(b, "deep");
    for (int i = 0; i < 100000; i++)
        mpw_array(b, 1);
    mpw_nil(b);
}
static void put_args_reserved_byte(mpw *b)
{
    mpw_map(b, 1);
    mpw_str(b, "k");
    mpw_byte(b, 0xc1);
}

Test(record, wrong_types_missing_fields_and_bad_tags_are_skipped)
{
    mpw b;
    mpw_init(&b);
    static const struct {
        const char *field;
        put_fn put;
    } cases[] = {
        {"t_mono", put_str},     {"t_mono", put_nil},
        {"t_wall", put_true},    {"t_mono", NULL},
        {"t_wall", NULL},        {"qualname", NULL},
        {"args", NULL},          {"qualname", put_bin},
        {"qualname", put_bad_utf8}, {"qualname", put_nil},
        {"args", put_array},     {"args", put_nil},
        {"args", put_args_int_key}, {"args", put_args_bad_inner_utf8},
        {"args", put_args_bad_key_utf8}, {"args", put_args_bad_timestamp},
        {"args", put_args_too_deep}, {"args", put_args_reserved_byte},
        {"type", put_header_tag}, {"type", put_int_tag},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char what[64];
        snprintf(what, sizeof what, "case %zu (%s)", i, cases[i].field);
        record_with(&b, cases[i].field, cases[i].put);
        expect_skipped(&b, what);
    }
    /* A missing "type" alone is fine. */
    record_with(&b, "type", NULL);
    cr_expect_eq(yields(&b, 0, NULL, NULL), 1);
    mpw_free(&b);
}

Test(record, lazy_skips_args_validation_only)
{
    mpw b;
    mpw_init(&b);
    record_with(&b, "args", put_args_bad_inner_utf8);
    cr_expect_eq(yields(&b, LCT_LAZY, NULL, NULL), 1,
                 "lazy yields what validation would skip");
    record_with(&b, "args", put_args_int_key);
    cr_expect_eq(yields(&b, LCT_LAZY, NULL, NULL), 1);
    /* The fields it does read are still checked. */
    record_with(&b, "qualname", put_bad_utf8);
    cr_expect_eq(yields(&b, LCT_LAZY, NULL, NULL), 0);
    record_with(&b, "args", put_array);
    cr_expect_eq(yields(&b, LCT_LAZY, NULL, NULL), 0);
    record_with(&b, "t_mono", put_str);
    cr_expect_eq(yields(&b, LCT_LAZY, NULL, NULL), 0);
    mpw_free(&b);
}

Test(record, not_one_map_is_skipped)
{
    mpw b;
    mpw_init(&b);
    expect_skipped(&b, "empty body");
    mpw_array(&b, 0);
    expect_skipped(&b, "an array");
    mpw_reset(&b);
    mpw_record_begin(&b, 1, 2, "q");
    good_args(&b);
    mpw_nil(&b);
    expect_skipped(&b, "trailing nil after the recorder layout");
    mpw_reset(&b);
    record_with(&b, "type", NULL);
    mpw_uint(&b, 0);
    expect_skipped(&b, "trailing byte after another layout");
    /* Map says five pairs but the body ends after four. */
    mpw_reset(&b);
    record_with(&b, "type", NULL);
    b.buf[0] = 0x85;
    expect_skipped(&b, "map cut short");
    /* A non-str key at the top. */
    mpw_reset(&b);
    mpw_map(&b, 1);
    mpw_uint(&b, 1);
    mpw_nil(&b);
    expect_skipped(&b, "int key");
    mpw_free(&b);
}

Test(record, skipping_goes_on_to_the_next_frame)
{
    mpw bodies[3], file;
    mpw_init(&file);
    for (int i = 0; i < 3; i++)
        mpw_init(&bodies[i]);
    mpw_record_begin(&bodies[0], 1, 1, "first");
    good_args(&bodies[0]);
    mpw_array(&bodies[1], 0); /* malformed */
    mpw_record_begin(&bodies[2], 3, 3, "third");
    good_args(&bodies[2]);
    trace_of(&file, bodies, 3);
    uint64_t bad_offset = file.len - (4 + bodies[2].len) - (4 + bodies[1].len);

    lct_reader *r;
    cr_assert_eq(lct_open_buffer(file.buf, file.len, "mem", 0, &r, NULL),
                 LCT_OK);
    seen s = {0};
    lct_reader_set_log(r, record_warning, &s);
    lct_record rec;
    cr_assert_eq(lct_next(r, &rec), 1);
    cr_expect_eq(rec.t_mono, 1);
    cr_expect_eq(lct_reader_status(r), LCT_OK, "nothing wrong yet");
    cr_assert_eq(lct_next(r, &rec), 1);
    cr_expect_eq(rec.t_mono, 3);
    cr_expect_eq(lct_reader_status(r), LCT_ERR_MALFORMED, "a skip is sticky");
    cr_expect(rec.qualname.len == 5 && !memcmp(rec.qualname.ptr, "third", 5));
    cr_expect_eq(lct_next(r, &rec), 0);
    cr_expect_eq(lct_next(r, &rec), 0, "the end stays the end");
    cr_expect_eq(s.warnings, 1);
    cr_expect_eq(s.offset[0], bad_offset);
    char want[128];
    snprintf(want, sizeof want, "skipping malformed record at offset %llu:",
             (unsigned long long)bad_offset);
    cr_expect(strncmp(s.message[0], want, strlen(want)) == 0, "%s",
              s.message[0]);

    lct_stats st;
    lct_reader_stats(r, &st);
    cr_expect_eq(st.records, 2);
    cr_expect_eq(st.skipped, 1);
    cr_expect(!st.truncated);
    cr_expect_eq(st.bytes_read, file.len);
    cr_expect_eq(st.file_size, file.len);

    /* Rewind starts over, counters and status included. */
    lct_reader_rewind(r);
    cr_expect_eq(lct_reader_status(r), LCT_OK);
    lct_reader_set_log(r, NULL, NULL);
    int n = 0;
    while (lct_next(r, &rec) == 1)
        n++;
    cr_expect_eq(n, 2);
    lct_reader_stats(r, &st);
    cr_expect_eq(st.records, 2);
    cr_expect_eq(st.skipped, 1, "silenced warnings are still counted");
    lct_close(r);
    for (int i = 0; i < 3; i++)
        mpw_free(&bodies[i]);
    mpw_free(&file);
}

/* The sticky status: the worst met, in the documented precedence. */
Test(end, reader_status_keeps_the_worst)
{
    static const struct {
        const char *fixture;
        lct_status want;
    } cases[] = {{"clean", LCT_OK},
                 {"header_only", LCT_OK},
                 {"malformed_mixed", LCT_ERR_MALFORMED},
                 {"trunc_tail_2", LCT_ERR_TRUNCATED},
                 {"trunc_tail_74", LCT_ERR_TRUNCATED}};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s.lct", LCT_FIXTURES_DIR,
                 cases[i].fixture);
        lct_reader *r;
        cr_assert_eq(lct_open(path, LCT_QUIET, &r, NULL), LCT_OK);
        lct_record rec;
        while (lct_next(r, &rec) == 1)
            ;
        cr_expect_eq(lct_reader_status(r), cases[i].want, "%s: %s",
                     cases[i].fixture, lct_strerror(lct_reader_status(r)));
        lct_close(r);
    }
    cr_expect_eq(lct_reader_status(NULL), LCT_ERR_INVALID);
}

/* lct_record_at: any frame by its offset, the reader's position and
 * counters untouched; a skipped frame still shows its bytes and why. */
Test(end, record_at_an_offset)
{
    mpw bodies[3], file;
    mpw_init(&file);
    for (int i = 0; i < 3; i++)
        mpw_init(&bodies[i]);
    mpw_record_begin(&bodies[0], 1, 1, "first");
    good_args(&bodies[0]);
    mpw_array(&bodies[1], 0); /* malformed */
    mpw_record_begin(&bodies[2], 3, 3, "third");
    good_args(&bodies[2]);
    trace_of(&file, bodies, 3);
    uint64_t third = file.len - (4 + bodies[2].len);
    uint64_t bad = third - (4 + bodies[1].len);
    uint64_t first = bad - (4 + bodies[0].len);
    lct_reader *r;
    cr_assert_eq(lct_open_buffer(file.buf, file.len, "mem", LCT_QUIET, &r,
                                 NULL),
                 LCT_OK);
    lct_record rec;
    const char *why = NULL;
    cr_expect_eq(lct_record_at(r, third, &rec, &why), 1);
    cr_expect_eq(rec.t_mono, 3);
    cr_expect_eq(rec.offset, third);
    cr_expect_eq(lct_record_at(r, bad, &rec, &why), 0);
    cr_expect(why && strstr(why, "not a map"), "%s", why ? why : "");
    cr_expect_eq(rec.offset, bad);
    cr_expect_eq(rec.body.len, bodies[1].len);
    cr_expect_eq(lct_record_at(r, first + 1, &rec, NULL), LCT_ERR_TRUNCATED,
                 "inside a frame: its bytes do not make a whole frame");
    cr_expect_eq(lct_record_at(r, 0, &rec, NULL), LCT_ERR_INVALID, "header");
    cr_expect_eq(lct_record_at(r, file.len + 1, &rec, NULL), LCT_ERR_INVALID);
    cr_expect_eq(lct_record_at(NULL, third, &rec, NULL), LCT_ERR_INVALID);
    /* The reader did not move. */
    cr_expect_eq(lct_next(r, &rec), 1);
    cr_expect_eq(rec.t_mono, 1);
    lct_close(r);
    for (int i = 0; i < 3; i++)
        mpw_free(&bodies[i]);
    mpw_free(&file);
}

/* MARK: - the end of the records */

static void cut_trace(mpw *file, uint64_t *frame2)
{
    mpw bodies[2];
    for (int i = 0; i < 2; i++) {
        mpw_init(&bodies[i]);
        mpw_record_begin(&bodies[i], i, i, "q");
        good_args(&bodies[i]);
    }
    trace_of(file, bodies, 2);
    *frame2 = file->len - 4 - bodies[1].len;
    for (int i = 0; i < 2; i++)
        mpw_free(&bodies[i]);
}

Test(end, cut_length_prefix_warns_with_its_offset)
{
    mpw file;
    mpw_init(&file);
    uint64_t frame2;
    cut_trace(&file, &frame2);
    lct_reader *r;
    cr_assert_eq(lct_open_buffer(file.buf, frame2 + 2, "mem", 0, &r, NULL),
                 LCT_OK);
    seen s = {0};
    lct_reader_set_log(r, record_warning, &s);
    lct_record rec;
    cr_expect_eq(lct_next(r, &rec), 1);
    cr_expect_eq(lct_next(r, &rec), 0);
    lct_stats st;
    lct_reader_stats(r, &st);
    cr_expect(st.truncated);
    cr_expect_eq(st.truncated_offset, frame2);
    cr_expect_eq(st.skipped, 0);
    cr_assert_eq(s.warnings, 1);
    cr_expect_eq(s.kind[0], LCT_WARN_TRUNCATED);
    cr_expect_eq(s.offset[0], frame2);
    char want[128];
    snprintf(want, sizeof want, "truncated frame length prefix at offset %llu",
             (unsigned long long)frame2);
    cr_expect_str_eq(s.message[0], want);
    lct_close(r);
    mpw_free(&file);
}

Test(end, cut_body_warns_with_body_offset_and_counts)
{
    mpw file;
    mpw_init(&file);
    uint64_t frame2;
    cut_trace(&file, &frame2);
    uint32_t length = (uint32_t)(file.len - frame2 - 4);
    lct_reader *r;
    cr_assert_eq(lct_open_buffer(file.buf, file.len - 1, "mem", 0, &r, NULL),
                 LCT_OK);
    seen s = {0};
    lct_reader_set_log(r, record_warning, &s);
    lct_record rec;
    cr_expect_eq(lct_next(r, &rec), 1);
    cr_expect_eq(lct_next(r, &rec), 0);
    lct_stats st;
    lct_reader_stats(r, &st);
    cr_expect(st.truncated);
    cr_expect_eq(st.truncated_offset, frame2);
    cr_expect_eq(s.offset[0], frame2 + 4, "the reference names the body");
    char want[128];
    snprintf(want, sizeof want,
             "truncated frame body at offset %llu (got %u of %u)",
             (unsigned long long)(frame2 + 4), length - 1, length);
    cr_expect_str_eq(s.message[0], want);
    lct_close(r);
    mpw_free(&file);
}

Test(end, default_log_prints_one_line_to_stderr, .init = cr_redirect_stderr)
{
    mpw file;
    mpw_init(&file);
    uint64_t frame2;
    cut_trace(&file, &frame2);
    lct_reader *r;
    cr_assert_eq(lct_open_buffer(file.buf, frame2 + 1, "cut.lct", 0, &r, NULL),
                 LCT_OK);
    lct_record rec;
    while (lct_next(r, &rec) == 1)
        ;
    lct_close(r);
    fflush(stderr);
    char want[160];
    snprintf(want, sizeof want,
             "lct: WARNING: cut.lct: truncated frame length prefix at offset "
             "%llu\n",
             (unsigned long long)frame2);
    cr_expect_stderr_eq_str(want);
    mpw_free(&file);
}

Test(end, quiet_flag_prints_nothing, .init = cr_redirect_stderr)
{
    mpw file;
    mpw_init(&file);
    uint64_t frame2;
    cut_trace(&file, &frame2);
    lct_reader *r;
    cr_assert_eq(lct_open_buffer(file.buf, frame2 + 1, "cut.lct", LCT_QUIET,
                                 &r, NULL),
                 LCT_OK);
    lct_record rec;
    while (lct_next(r, &rec) == 1)
        ;
    lct_stats st;
    lct_reader_stats(r, &st);
    cr_expect(st.truncated);
    lct_close(r);
    fflush(stderr);
    cr_expect_stderr_eq_str("");
    mpw_free(&file);
}

Test(end, misuse_is_refused_not_crashed)
{
    lct_record rec;
    cr_expect_lt(lct_next(NULL, &rec), 0);
    lct_close(NULL);
    cr_expect_null(lct_reader_header(NULL));
    lct_stats st;
    memset(&st, -1, sizeof st);
    lct_reader_stats(NULL, &st);
    cr_expect_eq(st.records, 0);
    lct_reader *r = (lct_reader *)1;
    cr_expect_eq(lct_open(NULL, 0, &r, NULL), LCT_ERR_INVALID);
    cr_expect_null(r);
    cr_expect_eq(lct_open_buffer(NULL, 5, "x", 0, &r, NULL), LCT_ERR_INVALID);
    cr_expect_str_eq(lct_strerror(LCT_ERR_MAGIC), "bad magic");
    cr_expect_str_eq(lct_strerror(12345), "unknown status");
}

/* MARK: - the header */

static int open_header(const mpw *header_body, lct_error *err,
                       lct_reader **out)
{
    mpw file;
    mpw_init(&file);
    mpw_frame(&file, header_body);
    memset(err, -1, sizeof *err);
    static unsigned char keep[4096]; /* outlives the reader in the test */
    cr_assert_lt(file.len, sizeof keep);
    memcpy(keep, file.buf, file.len);
    int rc = lct_open_buffer(keep, file.len, "hdr.lct", 0, out, err);
    mpw_free(&file);
    return rc;
}

Test(header, recorder_header_is_read)
{
    mpw h;
    mpw_init(&h);
    mpw_std_header(&h);
    lct_error err;
    lct_reader *r;
    cr_assert_eq(open_header(&h, &err, &r), LCT_OK);
    const lct_header *hd = lct_reader_header(r);
    cr_expect_eq(hd->format_version, 1);
    cr_expect_eq(hd->trace_schema_version, 2);
    cr_expect_eq(hd->t_mono_start, 1000.5);
    cr_expect(hd->level.len == 7 && !memcmp(hd->level.ptr, "storage", 7));
    cr_expect_eq(hd->sm_config_digest.len, 0);
    cr_expect_null(hd->level_meta.ptr);
    cr_expect_eq(hd->size, 4 + h.len);
    cr_expect_str_eq(lct_reader_path(r), "hdr.lct");
    lct_record rec;
    cr_expect_eq(lct_next(r, &rec), 0);
    lct_close(r);
    mpw_free(&h);
}

Test(header, versions_and_magic_are_judged_in_order)
{
    static const struct {
        const char *magic;
        int64_t fv, sv;
        int code;
        const char *text;
    } cases[] = {
        {"LMCT", 1, 1, LCT_OK, NULL},
        {"LMCT", 1, 2, LCT_OK, NULL},
        {"XXXX", 2, 3, LCT_ERR_MAGIC,
         "bad magic (got b'XXXX', expected b'LMCT')"},
        {"LM\x00\xff", 1, 2, LCT_ERR_MAGIC, "got b'LM\\x00\\xff'"},
        {"LMCT", 2, 3, LCT_ERR_VERSION,
         "unsupported format_version 2 (this build expects 1)"},
        {"LMCT", -1, 2, LCT_ERR_VERSION, "unsupported format_version -1"},
        {"LMCT", 1, 3, LCT_ERR_SCHEMA,
         "unsupported trace_schema_version 3 (this build reads 1, 2)"},
        {"LMCT", 1, 0, LCT_ERR_SCHEMA, "unsupported trace_schema_version 0"},
    };
    mpw h;
    mpw_init(&h);
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        mpw_reset(&h);
        mpw_header_with(&h, cases[i].magic, cases[i].fv, cases[i].sv);
        lct_error err;
        lct_reader *r;
        int rc = open_header(&h, &err, &r);
        cr_expect_eq(rc, cases[i].code, "case %zu: %d", i, rc);
        if (rc == LCT_OK) {
            lct_close(r);
            continue;
        }
        cr_expect_null(r);
        cr_expect_eq(err.code, rc);
        cr_expect_eq(err.offset, 0, "case %zu: a header refusal is at 0", i);
        cr_expect_eq(err.sys_errno, 0);
        cr_expect(strstr(err.message, cases[i].text) != NULL,
                  "case %zu: \"%s\"", i, err.message);
        cr_expect(strstr(err.message, "'hdr.lct'") != NULL);
    }
    mpw_free(&h);
}

Test(header, huge_unsigned_version_is_shown_as_is)
{
    mpw h;
    mpw_init(&h);
    mpw_header_with(&h, "LMCT", 1, 2);
    /* Re-encode format_version as uint64 max: patch in a new header. */
    mpw_reset(&h);
    mpw_map(&h, 8);
    mpw_str(&h, "magic");
    mpw_bin(&h, "LMCT", 4);
    mpw_str(&h, "format_version");
    mpw_uint(&h, UINT64_MAX);
    mpw_str(&h, "level");
    mpw_str(&h, "storage");
    mpw_str(&h, "trace_schema_version");
    mpw_uint(&h, 2);
    mpw_str(&h, "t_mono_start");
    mpw_uint(&h, 5); /* ints are fine for float fields */
    mpw_str(&h, "t_wall_start");
    mpw_f32(&h, 2.5f);
    mpw_str(&h, "sm_config_json");
    mpw_str(&h, "");
    mpw_str(&h, "sm_config_digest");
    mpw_str(&h, "");
    lct_error err;
    lct_reader *r;
    cr_assert_eq(open_header(&h, &err, &r), LCT_ERR_VERSION);
    cr_expect_eq(err.offset, 0);
    cr_expect_eq(err.code, LCT_ERR_VERSION);
    cr_expect(strstr(err.message, "format_version 18446744073709551615") !=
                  NULL,
              "%s", err.message);
    mpw_free(&h);
}

Test(header, undecodable_headers_are_refused)
{
    mpw h;
    mpw_init(&h);
    lct_error err;
    lct_reader *r;

    /* magic as a str is not bin */
    mpw_map(&h, 1);
    mpw_str(&h, "magic");
    mpw_str(&h, "LMCT");
    cr_expect_eq(open_header(&h, &err, &r), LCT_ERR_MALFORMED);
    cr_expect_eq(err.offset, 0);
    cr_expect_eq(err.code, LCT_ERR_MALFORMED);
    cr_expect(strstr(err.message, "undecodable header") != NULL, "%s",
              err.message);

    /* missing fields */
    mpw_reset(&h);
    mpw_map(&h, 1);
    mpw_str(&h, "magic");
    mpw_bin(&h, "LMCT", 4);
    cr_expect_eq(open_header(&h, &err, &r), LCT_ERR_MALFORMED);
    cr_expect_eq(err.offset, 0);
    cr_expect_eq(err.code, LCT_ERR_MALFORMED);
    cr_expect(strstr(err.message, "missing required field") != NULL, "%s",
              err.message);

    /* a header that says it is a record */
    mpw_reset(&h);
    mpw_std_header(&h);
    h.buf[7] = 'X'; /* "header" -> "Xeader" */
    cr_expect_eq(open_header(&h, &err, &r), LCT_ERR_MALFORMED);
    cr_expect_eq(err.offset, 0);
    cr_expect_eq(err.code, LCT_ERR_MALFORMED);

    /* not a map */
    mpw_reset(&h);
    mpw_array(&h, 0);
    cr_expect_eq(open_header(&h, &err, &r), LCT_ERR_MALFORMED);
    cr_expect_eq(err.offset, 0);
    cr_expect_eq(err.code, LCT_ERR_MALFORMED);

    /* trailing bytes */
    mpw_reset(&h);
    mpw_std_header(&h);
    mpw_nil(&h);
    cr_expect_eq(open_header(&h, &err, &r), LCT_ERR_MALFORMED);
    cr_expect_eq(err.offset, 0);
    cr_expect_eq(err.code, LCT_ERR_MALFORMED);
    cr_expect(strstr(err.message, "trailing") != NULL, "%s", err.message);

    /* level that is not UTF-8 */
    mpw_reset(&h);
    mpw_map(&h, 1);
    mpw_str(&h, "level");
    mpw_strn(&h, "\xff", 1);
    cr_expect_eq(open_header(&h, &err, &r), LCT_ERR_MALFORMED);
    cr_expect_eq(err.offset, 0);
    cr_expect_eq(err.code, LCT_ERR_MALFORMED);
    mpw_free(&h);
}

Test(header, unknown_keys_and_level_meta)
{
    mpw h;
    mpw_init(&h);
    mpw_map(&h, 11);
    mpw_str(&h, "lmcache_version");
    mpw_str(&h, "0.3");
    mpw_str(&h, "level_meta");
    mpw_map(&h, 1);
    mpw_str(&h, "instance_id");
    mpw_str(&h, "srv-a");
    mpw_str(&h, "magic");
    mpw_bin(&h, "LMCT", 4);
    mpw_str(&h, "format_version");
    mpw_uint(&h, 1);
    mpw_str(&h, "level");
    mpw_str(&h, "events");
    mpw_str(&h, "trace_schema_version");
    mpw_uint(&h, 2);
    mpw_str(&h, "t_mono_start");
    mpw_f64(&h, 1);
    mpw_str(&h, "t_wall_start");
    mpw_f64(&h, 2);
    mpw_str(&h, "sm_config_json");
    mpw_str(&h, "");
    mpw_str(&h, "sm_config_digest");
    mpw_str(&h, "abc");
    mpw_str(&h, "type");
    mpw_str(&h, "header");
    lct_error err;
    lct_reader *r;
    cr_assert_eq(open_header(&h, &err, &r), LCT_OK, "%s", err.message);
    const lct_header *hd = lct_reader_header(r);
    lct_value id;
    cr_assert_eq(lct_map_find(hd->level_meta, "instance_id", &id), LCT_OK);
    cr_expect(lct_value_str_eq(id, "srv-a"));
    cr_expect(hd->level.len == 6 && !memcmp(hd->level.ptr, "events", 6));
    lct_close(r);
    mpw_free(&h);
}

/* This process's resident file-backed memory, in KiB (RssFile). */
static long rss_file_kib(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    cr_assert_not_null(f);
    char line[256];
    long kib = -1;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "RssFile: %ld kB", &kib) == 1)
            break;
    fclose(f);
    return kib;
}

/* A pass over a mapping lets go of what lies far behind it: a 64 MB
 * trace read front to back leaves a few tens of MiB resident, not all of
 * it, and a view of the first record still reads its bytes (its page is
 * read back from the file). */
Test(reader, a_pass_over_a_mapping_keeps_little_of_it_resident)
{
    mpw f;
    mpw_init(&f);
    mpw_simple_trace(&f, 1200000);
    cr_assert_gt(f.len, 60u << 20);
    char *path = tmp_file_with(f.buf, f.len);
    lct_reader *r;
    cr_assert_eq(lct_open(path, 0, &r, NULL), LCT_OK);
    lct_record first, rec;
    cr_assert_eq(lct_next(r, &first), 1);
    unsigned char *copy = malloc(first.args.len);
    cr_assert_not_null(copy);
    memcpy(copy, first.args.ptr, first.args.len);
    uint64_t n = 1;
    while (lct_next(r, &rec) == 1)
        n++;
    cr_expect_eq(n, 1200000);
    long kib = rss_file_kib();
    cr_expect(kib >= 0 && kib < 24 * 1024, "%ld KiB of a %zu-byte file "
              "resident", kib, f.len);
    cr_expect_eq(memcmp(copy, first.args.ptr, first.args.len), 0);
    lct_close(r);
    free(copy);
    unlink(path);
    free(path);
    mpw_free(&f);
}
