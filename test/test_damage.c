/*
 * test_damage.c - damaged input: a trace cut at every byte offset, every
 * bit of a small trace flipped (judged against an independent oracle of
 * the reference rules, test/support/oracle.c), hostile shapes, and inputs
 * the fuzzer found (test/fuzz/regressions/).
 *
 * Every input is copied to an exact-size heap block first, so a read one
 * byte past it is an AddressSanitizer report in the sanitizer build.
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "files.h"
#include "lct.h"
#include "mpw.h"
#include "oracle.h"

/* MARK: a small varied trace */

/* Header, then n records in several layouts (fast path and general). */
static void varied_trace(mpw *f, int n, uint64_t *bounds)
{
    mpw b;
    mpw_init(&b);
    mpw_std_header(&b);
    mpw_frame(f, &b);
    bounds[0] = f->len;
    for (int i = 0; i < n; i++) {
        mpw_reset(&b);
        switch (i % 4) {
        case 0: /* the recorder's layout */
            mpw_record_begin(&b, i * 0.25, 1764600000.0 + i, "q.reserve_write");
            mpw_map(&b, 2);
            mpw_str(&b, "keys");
            mpw_array(&b, 2);
            mpw_bin(&b, "0123456789abcdef0123456789abcdef", 32);
            mpw_str(&b, "h\xc3\xa9llo");
            mpw_str(&b, "n");
            mpw_int(&b, -70000);
            break;
        case 1: /* another order, int times, an unknown key */
            mpw_map(&b, 5);
            mpw_str(&b, "qualname");
            mpw_str(&b, "q.finish_write");
            mpw_str(&b, "extra");
            mpw_array(&b, 1);
            mpw_nil(&b);
            mpw_str(&b, "args");
            mpw_map(&b, 1);
            mpw_str(&b, "t");
            mpw_ext(&b, -1, "\x00\x00\x00\x10", 4);
            mpw_str(&b, "t_wall");
            mpw_int(&b, 17);
            mpw_str(&b, "t_mono");
            mpw_f32(&b, 1.5f);
            break;
        case 2: /* a codec-wrapped value, floats, bools */
            mpw_record_begin(&b, i, i, "q.submit_prefetch_task");
            mpw_map(&b, 3);
            mpw_str(&b, "k");
            mpw_map(&b, 2);
            mpw_str(&b, "__t__");
            mpw_str(&b, "tuple");
            mpw_str(&b, "v");
            mpw_array(&b, 3);
            mpw_f64(&b, 2.5);
            mpw_bool(&b, true);
            mpw_uint(&b, 300);
            mpw_str(&b, "s");
            mpw_str(&b, "a longer string value, past the fixstr size");
            mpw_str(&b, "m");
            mpw_map(&b, 1);
            mpw_uint(&b, 7); /* non-str keys are fine inside */
            mpw_nil(&b);
            break;
        default: /* empty args */
            mpw_record_begin(&b, i, i, "q.x");
            mpw_map(&b, 0);
            break;
        }
        mpw_frame(f, &b);
        bounds[i + 1] = f->len;
    }
    mpw_free(&b);
}

static unsigned char *exact_copy(const unsigned char *p, size_t n)
{
    unsigned char *c = malloc(n ? n : 1);
    memcpy(c, p, n);
    return c;
}

typedef struct warned {
    int count;
    lct_warning_kind kind;
    uint64_t offset;
    char message[256];
} warned;

static void keep_warning(void *ctx, const lct_reader *r, lct_warning_kind kind,
                         uint64_t offset, const char *message)
{
    (void)r;
    warned *w = ctx;
    w->count++;
    w->kind = kind;
    w->offset = offset;
    snprintf(w->message, sizeof w->message, "%s", message);
}

/* MARK: truncation sweep */

Test(damage, cut_at_every_offset)
{
    mpw f;
    mpw_init(&f);
    uint64_t bounds[41];
    varied_trace(&f, 40, bounds);
    uint64_t header = bounds[0];
    for (size_t cut = 0; cut <= f.len; cut++) {
        unsigned char *data = exact_copy(f.buf, cut);
        lct_reader *r;
        lct_error err;
        int rc = lct_open_buffer(data, cut, "cut", 0, &r, &err);
        if (cut < header) {
            /* Refused exactly when the cut falls inside the header frame. */
            cr_assert_neq(rc, LCT_OK, "cut %zu opened", cut);
            char want[128];
            if (cut == 0)
                snprintf(want, sizeof want, "unexpected EOF reading frame length");
            else if (cut < 4)
                snprintf(want, sizeof want,
                         "truncated frame length prefix at offset 0");
            else
                snprintf(want, sizeof want,
                         "truncated frame body at offset 4 (got %zu of %llu)",
                         cut - 4, (unsigned long long)(header - 4));
            cr_expect(strstr(err.message, want), "cut %zu: %s", cut,
                      err.message);
            free(data);
            continue;
        }
        cr_assert_eq(rc, LCT_OK, "cut %zu: %s", cut, err.message);
        warned w = {0};
        lct_reader_set_log(r, keep_warning, &w);
        lct_record rec;
        size_t n = 0;
        while (lct_next(r, &rec) == 1) {
            cr_assert_eq(rec.offset, bounds[n], "cut %zu record %zu", cut, n);
            n++;
        }
        size_t whole = 0;
        while (whole < 40 && bounds[whole + 1] <= cut)
            whole++;
        cr_expect_eq(n, whole, "cut %zu: %zu records, want %zu", cut, n, whole);
        lct_stats st;
        lct_reader_stats(r, &st);
        cr_expect_eq(st.skipped, 0);
        bool on_boundary = bounds[whole] == cut;
        cr_expect_eq(st.truncated, !on_boundary, "cut %zu", cut);
        if (!on_boundary) {
            uint64_t frame = bounds[whole];
            cr_expect_eq(st.truncated_offset, frame);
            cr_expect_eq(w.count, 1);
            cr_expect_eq(w.kind, LCT_WARN_TRUNCATED);
            char want[128];
            if (cut - frame < 4) {
                snprintf(want, sizeof want,
                         "truncated frame length prefix at offset %llu",
                         (unsigned long long)frame);
                cr_expect_eq(w.offset, frame);
            } else {
                snprintf(want, sizeof want,
                         "truncated frame body at offset %llu (got %llu of "
                         "%llu)",
                         (unsigned long long)(frame + 4),
                         (unsigned long long)(cut - frame - 4),
                         (unsigned long long)(bounds[whole + 1] - frame - 4));
                cr_expect_eq(w.offset, frame + 4);
            }
            cr_expect_str_eq(w.message, want, "cut %zu", cut);
        } else {
            cr_expect_eq(w.count, 0);
        }
        lct_close(r);
        free(data);
    }
    mpw_free(&f);
}

/* MARK: corruption sweep */

/* liblct's reading of bytes against the oracle's (oracle_trace). */
static void check_against_oracle(const unsigned char *d, size_t n,
                                 const char *what)
{
    static uint64_t want[4096];
    oracle_reading o;
    oracle_trace(d, n, want, &o);
    size_t nrec = o.records, nskip = o.skipped;
    bool truncated = o.truncated;
    int open_rc = o.open_rc;
    unsigned char *data = exact_copy(d, n);
    lct_reader *r;
    lct_error err;
    int rc = lct_open_buffer(data, n, "flip", LCT_QUIET, &r, &err);
    cr_assert_eq(rc, open_rc, "%s: open %d, oracle %d (%s)", what, rc, open_rc,
                 err.message);
    if (rc == LCT_OK) {
        lct_record rec;
        size_t got = 0;
        while (lct_next(r, &rec) == 1) {
            cr_assert_lt(got, nrec, "%s: a record the oracle rejects at %llu",
                         what, (unsigned long long)rec.offset);
            cr_assert_eq(rec.offset, want[got], "%s: record %zu", what, got);
            got++;
        }
        lct_stats st;
        lct_reader_stats(r, &st);
        cr_assert_eq(got, nrec, "%s: %zu records, oracle %zu", what, got, nrec);
        cr_assert_eq(st.skipped, nskip, "%s: skipped", what);
        cr_assert_eq(st.truncated, truncated, "%s: truncated", what);
        lct_close(r);
    }
    free(data);
}

Test(damage, every_bit_flipped_agrees_with_the_oracle, .timeout = 120)
{
    mpw f;
    mpw_init(&f);
    uint64_t bounds[9];
    varied_trace(&f, 8, bounds);
    check_against_oracle(f.buf, f.len, "unflipped");
    unsigned char *d = malloc(f.len);
    for (size_t bit = 0; bit < f.len * 8; bit++) {
        memcpy(d, f.buf, f.len);
        d[bit / 8] ^= (unsigned char)(1u << (bit % 8));
        char what[64];
        snprintf(what, sizeof what, "bit %zu", bit);
        check_against_oracle(d, f.len, what);
    }
    free(d);
    mpw_free(&f);
}

Test(damage, fixtures_agree_with_the_oracle)
{
    static const char *names[] = {"clean", "events", "malformed_mixed",
                                  "huge_length", "trunc_tail_2", "bad_magic",
                                  "format_v2", "schema_v3",
                                  "schema_v1_readable"};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s.lct", LCT_FIXTURES_DIR, names[i]);
        size_t n;
        char *d = read_whole_file(path, &n);
        cr_assert_not_null(d);
        check_against_oracle((unsigned char *)d, n, names[i]);
        free(d);
    }
}

/* MARK: hostile shapes */

/* A trace of the standard header and one record body. */
static void one_record(mpw *f, const mpw *body)
{
    mpw h;
    mpw_init(&h);
    mpw_std_header(&h);
    mpw_frame(f, &h);
    mpw_frame(f, body);
    mpw_free(&h);
}

static lct_stats read_all(const mpw *f, unsigned flags)
{
    unsigned char *d = exact_copy(f->buf, f->len);
    lct_reader *r;
    lct_error err;
    cr_assert_eq(lct_open_buffer(d, f->len, "hostile", flags | LCT_QUIET, &r,
                                 &err),
                 LCT_OK, "%s", err.message);
    lct_record rec;
    while (lct_next(r, &rec) == 1)
        lct_value_visit(rec.args, NULL, NULL);
    lct_stats st;
    lct_reader_stats(r, &st);
    lct_close(r);
    free(d);
    return st;
}

Test(hostile, huge_lengths_and_zero_lengths, .timeout = 10)
{
    mpw f, b;
    mpw_init(&f);
    mpw_init(&b);
    mpw_std_header(&b);
    mpw_frame(&f, &b);
    mpw_be32(&f, 0); /* zero-length frames: skipped */
    mpw_be32(&f, 0);
    mpw_be32(&f, 0xffffffffu); /* a length past the end: truncated */
    mpw_raw(&f, "abc", 3);
    lct_stats st = read_all(&f, 0);
    cr_expect_eq(st.skipped, 2);
    cr_expect(st.truncated);
    cr_expect_eq(st.truncated_offset, f.len - 7);
    /* And as the header's length: refused, not allocated. */
    unsigned char huge[] = {0xff, 0xff, 0xff, 0xff, 0x80};
    lct_reader *r;
    lct_error err;
    cr_expect_eq(lct_open_buffer(huge, 5, "h", 0, &r, &err), LCT_ERR_TRUNCATED);
    cr_expect(strstr(err.message, "(got 1 of 4294967295)"), "%s", err.message);
    mpw_free(&f);
    mpw_free(&b);
}

Test(hostile, deep_nesting_and_lying_counts, .timeout = 10)
{
    static const unsigned char lies[][6] = {
        {0xdf, 0xff, 0xff, 0xff, 0xff, 0x00}, /* map32 of 2^32-1 pairs */
        {0xdd, 0xff, 0xff, 0xff, 0xff, 0x00}, /* array32 likewise */
        {0xdb, 0xff, 0xff, 0xff, 0xf0, 0x61}, /* str32 past the end */
        {0xc6, 0x7f, 0xff, 0xff, 0xff, 0x00}, /* bin32 past the end */
        {0xc9, 0x00, 0x10, 0x00, 0x00, 0x01}, /* ext32 past the end */
    };
    for (size_t i = 0; i < sizeof lies / sizeof *lies; i++) {
        for (unsigned flags = 0; flags <= LCT_LAZY; flags += LCT_LAZY) {
            mpw f, b;
            mpw_init(&f);
            mpw_init(&b);
            mpw_record_begin(&b, 1, 2, "q");
            mpw_map(&b, 1);
            mpw_str(&b, "x");
            mpw_raw(&b, lies[i], 6);
            one_record(&f, &b);
            lct_stats st = read_all(&f, flags);
            if (flags == 0)
                cr_expect_eq(st.skipped, 1, "lie %zu", i);
            cr_expect_eq(st.records + st.skipped, 1);
            mpw_free(&f);
            mpw_free(&b);
        }
    }
    /* 100,000 nested arrays inside args. */
    mpw f, b;
    mpw_init(&f);
    mpw_init(&b);
    mpw_record_begin(&b, 1, 2, "q");
    mpw_map(&b, 1);
    mpw_str(&b, "deep");
    for (int i = 0; i < 100000; i++)
        mpw_array(&b, 1);
    mpw_nil(&b);
    one_record(&f, &b);
    lct_stats st = read_all(&f, 0);
    cr_expect_eq(st.skipped, 1);
    st = read_all(&f, LCT_LAZY);
    cr_expect_eq(st.records, 1, "lazy does not walk args");
    mpw_free(&f);
    mpw_free(&b);
}

Test(hostile, invalid_utf8_in_every_string_position)
{
    const char *bad = "\xed\xa0\x80"; /* a surrogate */
    /* Record positions: qualname, args key, args value, nested value. */
    for (int where = 0; where < 4; where++) {
        mpw f, b;
        mpw_init(&f);
        mpw_init(&b);
        mpw_map(&b, 5);
        mpw_str(&b, "type");
        mpw_str(&b, "record");
        mpw_str(&b, "t_mono");
        mpw_f64(&b, 1);
        mpw_str(&b, "t_wall");
        mpw_f64(&b, 1);
        mpw_str(&b, "qualname");
        if (where == 0)
            mpw_strn(&b, bad, 3);
        else
            mpw_str(&b, "q");
        mpw_str(&b, "args");
        mpw_map(&b, 1);
        if (where == 1)
            mpw_strn(&b, bad, 3);
        else
            mpw_str(&b, "k");
        if (where == 2) {
            mpw_strn(&b, bad, 3);
        } else {
            mpw_array(&b, 1);
            if (where == 3)
                mpw_strn(&b, bad, 3);
            else
                mpw_str(&b, "fine");
        }
        one_record(&f, &b);
        lct_stats st = read_all(&f, 0);
        cr_expect_eq(st.skipped, where == 4 ? 0 : 1, "position %d", where);
        mpw_free(&f);
        mpw_free(&b);
    }
    /* Header positions: level, sm_config_json, sm_config_digest. */
    static const char *fields[] = {"level", "sm_config_json",
                                   "sm_config_digest"};
    for (int i = 0; i < 3; i++) {
        mpw h, f;
        mpw_init(&h);
        mpw_init(&f);
        mpw_map(&h, 8);
        mpw_str(&h, "magic");
        mpw_bin(&h, "LMCT", 4);
        mpw_str(&h, "format_version");
        mpw_uint(&h, 1);
        mpw_str(&h, "trace_schema_version");
        mpw_uint(&h, 2);
        mpw_str(&h, "t_mono_start");
        mpw_f64(&h, 0);
        mpw_str(&h, "t_wall_start");
        mpw_f64(&h, 0);
        for (int j = 0; j < 3; j++) {
            mpw_str(&h, fields[j]);
            if (i == j)
                mpw_strn(&h, bad, 3);
            else
                mpw_str(&h, "ok");
        }
        mpw_frame(&f, &h);
        lct_reader *r;
        lct_error err;
        cr_expect_eq(lct_open_buffer(f.buf, f.len, "h", 0, &r, &err),
                     LCT_ERR_MALFORMED, "%s", fields[i]);
        cr_expect(strstr(err.message, fields[i]), "%s", err.message);
        mpw_free(&h);
        mpw_free(&f);
    }
}

/* An args key named in an encoding of str: fixstr, str8, str16, str32
 * (0..3), and the non-str heads 4 (bin 8) and 5 (a fixint). */
static void name_as(mpw *w, const char *name, int encoding)
{
    static const unsigned heads[] = {0, 0xd9, 0xda, 0xdb, 0xc4};
    size_t n = strlen(name);
    if (encoding == 0) {
        mpw_strn(w, name, n);
        return;
    }
    if (encoding == 5) {
        mpw_int(w, 7);
        return;
    }
    mpw_head(w, heads[encoding], n);
    mpw_raw(w, name, n);
}

/* The kv_ranks of the one record of f, read with flags; -1 when it is
 * skipped. */
static int ranks_of(const mpw *f, unsigned flags, int64_t *ranks, int max)
{
    unsigned char *d = exact_copy(f->buf, f->len);
    lct_reader *r;
    cr_assert_eq(lct_open_buffer(d, f->len, "names", flags | LCT_QUIET, &r,
                                 NULL),
                 LCT_OK);
    lct_record rec;
    int n = -1;
    if (lct_next(r, &rec) == 1) {
        lct_key_iter it;
        lct_object_key k;
        cr_assert_eq(lct_key_iter_init(&rec, &it, NULL), LCT_OK);
        n = 0;
        while (n < max && lct_key_iter_next(&it, &k, NULL, NULL) == 1)
            ranks[n++] = k.kv_rank;
    }
    lct_close(r);
    free(d);
    return n;
}

/* The reference decodes args into a dict[str, ...]: a key written as
 * str8, str16 or str32 is a str like a fixstr (msgspec writes those past
 * 31 bytes, and any writer may), and names the argument it spells; a bin
 * or int key is not a str, nor a str8 of no UTF-8. */
Test(hostile, args_keys_are_str_in_every_str_encoding)
{
    static const mpw_objectkey_shape shape = {"ObjectKey", 3, 32, "Qwen/Qwen3-8B",
                                              0, 0, false};
    static const unsigned flag_sets[] = {0, LCT_KEYS, LCT_KEYS | LCT_STREAM};
    for (int enc = 0; enc < 6; enc++) {
        for (int twice = 0; twice < 2; twice++) {
            mpw f, b;
            mpw_init(&f);
            mpw_init(&b);
            mpw_record_begin(&b, 1, 2, "S.reserve_write");
            mpw_map(&b, twice ? 3 : 2);
            if (twice) { /* a list of two keys, then `keys` in enc */
                mpw_str(&b, "keys");
                mpw_array(&b, 2);
                for (int64_t i = 0; i < 2; i++) {
                    mpw_objectkey_shape s = shape;
                    s.rank = i;
                    mpw_objectkey(&b, &s);
                }
            }
            name_as(&b, "keys", enc);
            mpw_array(&b, 1);
            mpw_objectkey_shape s = shape;
            s.rank = 9;
            mpw_objectkey(&b, &s);
            name_as(&b, "an_argument_name_longer_than_31_bytes", enc < 4 ? enc : 1);
            mpw_int(&b, 1);
            one_record(&f, &b);
            bool str = enc < 4;
            cr_expect_eq(oracle_record_ok(b.buf, b.len), str, "encoding %d", enc);
            for (size_t i = 0; i < sizeof flag_sets / sizeof *flag_sets; i++) {
                int64_t ranks[4];
                int n = ranks_of(&f, flag_sets[i], ranks, 4);
                cr_expect_eq(n, str ? 1 : -1, "encoding %d, twice %d, flags %u: %d",
                             enc, twice, flag_sets[i], n);
                if (n == 1)
                    cr_expect_eq(ranks[0], 9, "the last `keys` is the call's");
            }
            mpw_free(&f);
            mpw_free(&b);
        }
    }
    /* a str8 name of no UTF-8 */
    mpw f, b;
    mpw_init(&f);
    mpw_init(&b);
    mpw_record_begin(&b, 1, 2, "q");
    mpw_map(&b, 1);
    name_as(&b, "k\xffy", 1);
    mpw_nil(&b);
    one_record(&f, &b);
    cr_expect_not(oracle_record_ok(b.buf, b.len));
    int64_t ranks[1];
    cr_expect_eq(ranks_of(&f, 0, ranks, 1), -1);
    mpw_free(&f);
    mpw_free(&b);
}

static long max_rss_kib(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_maxrss;
}

Test(hostile, header_alone_of_100_mb, .timeout = 60)
{
    /* A valid header whose sm_config_json is 100 MB, in a file. */
    size_t big = 100u << 20;
    mpw h;
    mpw_init(&h);
    mpw_map(&h, 8);
    mpw_str(&h, "magic");
    mpw_bin(&h, "LMCT", 4);
    mpw_str(&h, "format_version");
    mpw_uint(&h, 1);
    mpw_str(&h, "level");
    mpw_str(&h, "storage");
    mpw_str(&h, "trace_schema_version");
    mpw_uint(&h, 2);
    mpw_str(&h, "t_mono_start");
    mpw_f64(&h, 0);
    mpw_str(&h, "t_wall_start");
    mpw_f64(&h, 0);
    mpw_str(&h, "sm_config_digest");
    mpw_str(&h, "");
    mpw_str(&h, "sm_config_json");
    char *json = malloc(big);
    memset(json, ' ', big);
    mpw_strn(&h, json, big);
    free(json);
    mpw f;
    mpw_init(&f);
    mpw_frame(&f, &h);
    mpw_free(&h);
    char *path = tmp_file_with(f.buf, f.len);
    size_t file_len = f.len;
    mpw_free(&f);

    long before = max_rss_kib();
    lct_reader *r;
    lct_error err;
    cr_assert_eq(lct_open(path, 0, &r, &err), LCT_OK, "%s", err.message);
    cr_expect_eq(lct_reader_header(r)->sm_config_json.len, big);
    lct_record rec;
    cr_expect_eq(lct_next(r, &rec), 0);
    lct_close(r);
    /* No copy: what grows is at most the mapped file itself. */
    long grown = max_rss_kib() - before;
    cr_expect_lt(grown, (long)(file_len / 1024) + 8192, "grew %ld KiB", grown);

    /* The same header cut short: refused, no allocation of its size. */
    cr_assert_eq(truncate(path, (off_t)(file_len / 2)), 0);
    cr_expect_eq(lct_open(path, 0, &r, &err), LCT_ERR_TRUNCATED);
    unlink(path);
    free(path);
}

/* MARK: what the fuzzer found */

Test(fuzz, regressions_do_not_crash)
{
    DIR *d = opendir(LCT_FUZZ_REGRESSIONS);
    cr_assert_not_null(d);
    struct dirent *de;
    int n = 0;
    while ((de = readdir(d))) {
        if (de->d_name[0] == '.')
            continue;
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", LCT_FUZZ_REGRESSIONS, de->d_name);
        size_t len;
        char *data = read_whole_file(path, &len);
        cr_assert_not_null(data);
        check_against_oracle((unsigned char *)data, len, de->d_name);
        free(data);
        n++;
    }
    closedir(d);
    cr_expect_geq(n, 1, "the regression folder holds inputs");
}
