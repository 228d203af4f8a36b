/*
 * test_encodings.c - records written in every msgpack encoding a field
 * may take, judged by the oracle (test/support/oracle.c, the reference
 * decoder's rules written plainly).  msgspec writes the shortest form,
 * but a reader must take any: a str8 or str16 name where a fixstr would
 * do, a map16 of two pairs, an int in 8 bytes, a float32 time, fields in
 * another order, repeated or missing.  A seeded generator builds traces
 * of such records, some of them damaged in the ways the reference
 * refuses (bad UTF-8, a bin or int args key, a reserved byte, a bad
 * timestamp), with codec-wrapped ObjectKeys among the values, one
 * trace in four behind a header written the same way (a str magic, a
 * version this build does not read, level_meta of any value); the
 * library must yield the records the oracle yields, skip the rest, and
 * hand out the keys the general decoder reads (lct_object_key_get on
 * each element of the last `keys` list), whether or not the walk notes
 * them (LCT_KEYS), and one trace in eight the same through the
 * streaming source (LCT_STREAM).
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "files.h"
#include "lct.h"
#include "mpw.h"
#include "oracle.h"

/* MARK: a seeded generator */

static uint64_t rng = 1;

static uint32_t pick(uint32_t n)
{
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return (uint32_t)((rng >> 11) % n);
}

static bool chance(unsigned percent)
{
    return pick(100) < percent;
}

/* n bytes of s as a str: fixstr (when it fits), str8, str16 or str32. */
static void str_any(mpw *w, const void *s, size_t n)
{
    unsigned e = pick(4);
    mpw_head(w,
             e == 0 && n < 32    ? 0xa0
             : e <= 1 && n < 256 ? 0xd9
             : e == 2            ? 0xda
                                 : 0xdb,
             n);
    mpw_raw(w, s, n);
}

/* A name: most often in its shortest form, as msgspec writes it. */
static void name(mpw *w, const char *s)
{
    if (chance(70))
        mpw_str(w, s);
    else
        str_any(w, s, strlen(s));
}

static void bin_any(mpw *w, const void *p, size_t n)
{
    unsigned e = pick(3);
    mpw_head(w, e == 0 && n < 256 ? 0xc4 : e <= 1 ? 0xc5 : 0xc6, n);
    mpw_raw(w, p, n);
}

/* v in one of the encodings that can hold it. */
static void int_any(mpw *w, int64_t v)
{
    for (;;) {
        switch (pick(6)) {
        case 0:
            if (v >= -32 && v < 128) {
                mpw_byte(w, (unsigned)v & 0xff);
                return;
            }
            break;
        case 1:
            if (v >= 0 && v < 256) {
                mpw_byte(w, 0xcc), mpw_be(w, (uint64_t)v, 1);
                return;
            }
            break;
        case 2:
            if (v >= 0 && v < 65536) {
                mpw_byte(w, 0xcd), mpw_be(w, (uint64_t)v, 2);
                return;
            }
            break;
        case 3:
            if (v >= 0) {
                mpw_byte(w, 0xcf), mpw_be(w, (uint64_t)v, 8);
                return;
            }
            break;
        case 4:
            if (v >= -128 && v < 128) {
                mpw_byte(w, 0xd0), mpw_be(w, (uint64_t)v, 1);
                return;
            }
            break;
        default:
            mpw_byte(w, 0xd3), mpw_be(w, (uint64_t)v, 8);
            return;
        }
    }
}

/* A map or array head of n items: fix (when it fits), 16 or 32 bits. */
static void head_any(mpw *w, uint32_t n, unsigned fix, unsigned b16)
{
    unsigned e = pick(3);
    mpw_head(w, e == 0 && n < 16 ? fix : e <= 1 ? b16 : b16 + 1, n);
}

static void map_any(mpw *w, uint32_t n)
{
    head_any(w, n, 0x80, 0xde);
}

static void array_any(mpw *w, uint32_t n)
{
    head_any(w, n, 0x90, 0xdc);
}

static void float_any(mpw *w, double x)
{
    if (chance(50))
        mpw_f64(w, x);
    else
        mpw_f32(w, (float)x);
}

/* Sequences no UTF-8 decoder takes: a stray byte, a cut sequence, a
 * surrogate, an overlong form, a code point past U+10FFFF. */
static const char *const not_utf8[] = {"\xff", "\xc3", "\xed\xa0\x80",
                                       "\xc0\xaf", "\xf4\x90\x80\x80"};

static void some_str(mpw *w)
{
    static const char *const texts[] = {
        "", "a", "keys", "mode", "h\xc3\xa9llo", "policy", "layout_desc",
        "a string value past the 31 bytes of a fixstr"};
    char buf[80];
    size_t n = (size_t)snprintf(buf, sizeof buf, "%s", texts[pick(8)]);
    if (chance(5)) {
        const char *bad = not_utf8[pick(5)];
        memcpy(buf + n, bad, strlen(bad));
        n += strlen(bad);
    }
    str_any(w, buf, n);
}

/* A timestamp ext (type -1) in each of its three sizes, valid or not, or
 * an ext of another type (opaque to the reference). */
static void timestamp_any(mpw *w)
{
    switch (pick(5)) {
    case 0: /* 32-bit seconds */
        mpw_raw(w, "\xd6\xff", 2), mpw_be(w, pick(UINT32_MAX), 4);
        break;
    case 1: { /* 30-bit nanoseconds, 34-bit seconds */
        static const uint64_t ns[] = {0, 999999999, 1000000000};
        mpw_raw(w, "\xd7\xff", 2);
        mpw_be(w, ns[pick(3)] << 34 | pick(1u << 30), 8);
        break;
    }
    case 2: { /* 96 bits: nanoseconds, signed seconds */
        static const int64_t secs[] = {0, -62135596800, -62135596801,
                                       253402300799, 253402300800};
        mpw_raw(w, "\xc7\x0c\xff", 3);
        mpw_be(w, pick(2) ? 999999999 : 1000000000, 4);
        mpw_be(w, (uint64_t)secs[pick(5)], 8);
        break;
    }
    case 3: /* a size the timestamp does not have */
        mpw_raw(w, "\xd5\xff" "ab", 4);
        break;
    default:
        mpw_ext(w, 5, "z", 1);
        break;
    }
}

/* A codec-wrapped ObjectKey, its fields in any encoding, now and then in
 * another order, or under a tag that is not ObjectKey's. */
static void object_key(mpw *w)
{
    static const char *const models[] = {
        "Qwen/Qwen3-8B", "meta-llama/Llama-3.1-8B-Instruct", "m"};
    static const char *const salts[] = {"ten1", "tenant-3", "t\xc3\xa9n"};
    unsigned char hash[32];
    for (size_t i = 0; i < sizeof hash; i++)
        hash[i] = (unsigned char)pick(256);
    bool group = chance(50), salt = chance(30), reorder = chance(5);
    map_any(w, 2);
    name(w, "__t__");
    name(w, chance(90) ? "ObjectKey" : "ObjectKez");
    name(w, "v");
    map_any(w, 3 + group + salt);
    if (reorder) { /* rank first */
        name(w, "kv_rank");
        int_any(w, pick(4));
    }
    name(w, "chunk_hash");
    bin_any(w, hash, chance(80) ? 32 : 16);
    name(w, "model_name");
    name(w, models[pick(3)]);
    if (!reorder) {
        name(w, "kv_rank");
        int_any(w, pick(4));
    }
    if (group) {
        name(w, "object_group_id");
        int_any(w, pick(3));
    }
    if (salt) {
        name(w, "cache_salt");
        name(w, salts[pick(3)]);
    }
}

static void value(mpw *w, int depth);

/* A map key inside args: a str, an int, an array, or (rarely) a value
 * Python cannot hash (a map, an ext other than a timestamp). */
static void inner_key(mpw *w)
{
    switch (pick(8)) {
    case 0: case 1: case 2: some_str(w); break;
    case 3: int_any(w, pick(3)); break;
    case 4: array_any(w, 1), int_any(w, 1); break;
    case 5: float_any(w, 1.0); break;
    case 6: timestamp_any(w); break;
    default: map_any(w, 0); break;
    }
}

static void value(mpw *w, int depth)
{
    static const int64_t ints[] = {0,   1,     -1,     127,
                                   128, -33,   70000,  -70000,
                                   (int64_t)1 << 40};
    switch (pick(depth < 4 ? 13 : 8)) {
    case 0: int_any(w, ints[pick(9)]); break;
    case 1: float_any(w, 0.5); break;
    case 2: some_str(w); break;
    case 3: bin_any(w, "abc", 3); break;
    case 4: mpw_byte(w, (unsigned[]){0xc0, 0xc2, 0xc3}[pick(3)]); break;
    case 5: timestamp_any(w); break;
    case 6: object_key(w); break;
    case 7: /* now and then a byte msgpack reserves, or a cut str8 */
        if (chance(3))
            mpw_byte(w, chance(50) ? 0xc1 : 0xd9);
        else
            int_any(w, 3);
        break;
    case 8: case 9: {
        uint32_t n = pick(4);
        array_any(w, n);
        for (uint32_t i = 0; i < n; i++)
            value(w, depth + 1);
        break;
    }
    case 10: {
        uint32_t n = pick(6);
        array_any(w, n);
        for (uint32_t i = 0; i < n; i++)
            object_key(w);
        break;
    }
    default: {
        uint32_t n = pick(4);
        map_any(w, n);
        for (uint32_t i = 0; i < n; i++) {
            inner_key(w);
            value(w, depth + 1);
        }
        break;
    }
    }
}

static void args(mpw *w)
{
    static const char *const names[] = {
        "keys", "layout_desc", "mode", "x",
        "an_argument_name_longer_than_31_bytes"};
    uint32_t n = pick(5);
    map_any(w, n);
    for (uint32_t i = 0; i < n; i++) {
        if (chance(95))
            name(w, names[pick(5)]);
        else if (chance(50))
            bin_any(w, "keys", 4); /* not a str */
        else
            int_any(w, 1);
        if (chance(40)) {
            array_any(w, 3);
            for (int k = 0; k < 3; k++)
                object_key(w);
        } else {
            value(w, 0);
        }
    }
}

/* A map of the n fields written into fields[], now and then in another
 * order, or with a field missing. */
static void fields_map(mpw *w, mpw *fields, int n)
{
    if (chance(10)) /* another order */
        for (int i = n - 1; i > 0; i--) {
            int j = (int)pick((uint32_t)i + 1);
            mpw t = fields[i];
            fields[i] = fields[j], fields[j] = t;
        }
    if (chance(3))
        n--; /* a field missing */
    map_any(w, (uint32_t)n);
    for (int i = 0; i < n; i++)
        mpw_raw(w, fields[i].buf, fields[i].len);
}

/* One record body: its fields in any encoding and now and then in
 * another order, repeated, unknown, missing or of the wrong type. */
static void record(mpw *w)
{
    mpw fields[8];
    int n = 0;
    for (int i = 0; i < 8; i++)
        mpw_init(&fields[i]);
    if (chance(90)) {
        name(&fields[n], "type");
        name(&fields[n++], chance(95) ? "record" : "header");
    }
    name(&fields[n], "t_mono");
    if (chance(80))
        mpw_f64(&fields[n++], 0.25);
    else if (chance(70))
        float_any(&fields[n++], 0.25);
    else if (chance(50))
        int_any(&fields[n++], 3);
    else
        mpw_nil(&fields[n++]);
    name(&fields[n], "t_wall");
    if (chance(90))
        mpw_f64(&fields[n++], 1764600000.25);
    else
        int_any(&fields[n++], 17);
    name(&fields[n], "qualname");
    char q[96];
    size_t qn = (size_t)snprintf(q, sizeof q, "%s",
                                 "lmcache.v1.distributed.storage_manager."
                                 "StorageManager.reserve_write");
    if (chance(3)) {
        const char *bad = not_utf8[pick(5)];
        memcpy(q + qn, bad, strlen(bad));
        qn += strlen(bad);
    }
    if (chance(97))
        str_any(&fields[n++], q, qn);
    else
        bin_any(&fields[n++], "q", 1);
    name(&fields[n], "args");
    if (chance(97))
        args(&fields[n++]);
    else
        array_any(&fields[n++], 0);
    if (chance(10)) {
        name(&fields[n], "extra");
        value(&fields[n++], 0);
    }
    if (chance(5)) { /* a field again: the last one counts */
        name(&fields[n], "args");
        args(&fields[n++]);
    }
    fields_map(w, fields, n);
    if (chance(2))
        mpw_byte(w, 0); /* a byte after the map */
    for (int i = 0; i < 8; i++)
        mpw_free(&fields[i]);
}

/* A header body: its fields in any encoding, now and then in another
 * order, with level_meta or an unknown field, a version this build does
 * not read, a str magic, a field missing or mistyped. */
static void header(mpw *w)
{
    mpw fields[11];
    int n = 0;
    for (int i = 0; i < 11; i++)
        mpw_init(&fields[i]);
    if (chance(50)) {
        name(&fields[n], "type");
        name(&fields[n++], chance(95) ? "header" : "record");
    }
    name(&fields[n], "magic");
    if (chance(97))
        bin_any(&fields[n++], "LMCT", 4);
    else
        str_any(&fields[n++], "LMCT", 4);
    name(&fields[n], "format_version");
    int_any(&fields[n++], chance(97) ? 1 : 2);
    name(&fields[n], "level");
    name(&fields[n++], chance(90) ? "storage" : "l2");
    name(&fields[n], "trace_schema_version");
    int_any(&fields[n++], chance(95) ? 1 + pick(2) : 3);
    name(&fields[n], "t_mono_start");
    if (chance(90))
        float_any(&fields[n++], 12.5);
    else
        int_any(&fields[n++], 12);
    name(&fields[n], "t_wall_start");
    float_any(&fields[n++], 1764600000.5);
    name(&fields[n], "sm_config_json");
    some_str(&fields[n++]);
    name(&fields[n], "sm_config_digest");
    some_str(&fields[n++]);
    if (chance(30)) {
        name(&fields[n], chance(80) ? "level_meta" : "extra");
        value(&fields[n++], 0);
    }
    fields_map(w, fields, n);
    for (int i = 0; i < 11; i++)
        mpw_free(&fields[i]);
}

/* MARK: what the library makes of it */

/* The records' offsets and every yielded record's key hashes (each
 * record's list ended by 0, or by 1 where the iterator failed), read
 * with flags. */
typedef struct reading {
    int open_rc;
    uint64_t offsets[64], hashes[4096], decoded[4096];
    size_t records, nhashes, ndecoded;
    lct_stats st;
} reading;

/* The record's keys as the general decoder reads them, in read_with's
 * form: the last `keys` argument's list, each element by
 * lct_object_key_get (a failure ends the list); none without one (the
 * generator writes no spec). */
static void decode_keys(const lct_record *rec, reading *out)
{
    lct_value v, array, elem;
    lct_iter it;
    if (lct_map_find(rec->args, "keys", &v) != LCT_OK || lct_value_is_nil(v)) {
        out->decoded[out->ndecoded++] = 0;
        return;
    }
    if (lct_list_get(v, &array, NULL, NULL) != LCT_OK ||
        lct_array_iter_init(array, &it) != LCT_OK) {
        out->decoded[out->ndecoded++] = 1;
        return;
    }
    int rc;
    lct_object_key k;
    while ((rc = lct_array_iter_next(&it, &elem)) == 1) {
        if (lct_object_key_get(elem, &k, NULL) != LCT_OK)
            break;
        cr_assert_lt(out->ndecoded, 4095);
        out->decoded[out->ndecoded++] = lct_object_key_hash(&k) | 2;
    }
    out->decoded[out->ndecoded++] = rc == 0 ? 0 : 1;
}

static void read_with(const mpw *f, const char *path, unsigned flags,
                      reading *out)
{
    memset(out, 0, sizeof *out);
    unsigned char *d = malloc(f->len);
    memcpy(d, f->buf, f->len);
    lct_reader *r;
    out->open_rc =
        path ? lct_open(path, flags | LCT_QUIET, &r, NULL)
             : lct_open_buffer(d, f->len, "encodings", flags | LCT_QUIET, &r,
                               NULL);
    if (out->open_rc == LCT_OK) {
        lct_record rec;
        while (lct_next(r, &rec) == 1) {
            cr_assert_lt(out->records, 64);
            out->offsets[out->records++] = rec.offset;
            lct_key_iter it;
            lct_object_key k;
            int rc = lct_key_iter_init(&rec, &it, NULL);
            if (rc == LCT_OK)
                while ((rc = lct_key_iter_next(&it, &k, NULL, NULL)) == 1) {
                    cr_assert_lt(out->nhashes, 4095);
                    out->hashes[out->nhashes++] =
                        lct_object_key_hash(&k) | 2;
                }
            out->hashes[out->nhashes++] = rc == 0 ? 0 : 1;
            decode_keys(&rec, out);
        }
        lct_reader_stats(r, &out->st);
        lct_close(r);
    }
    free(d);
}

Test(encodings, every_encoding_of_every_field_reads_as_the_oracle_says,
     .timeout = 120)
{
    static reading plain, noted;
    size_t yielded = 0, skipped = 0, keyed = 0;
    for (unsigned trace = 0; trace < 20000; trace++) {
        rng = 0x9e3779b97f4a7c15u * (trace + 1);
        mpw f, b;
        mpw_init(&f);
        mpw_init(&b);
        if (trace % 4)
            mpw_std_header(&b);
        else
            header(&b);
        mpw_frame(&f, &b);
        unsigned n = 1 + pick(12);
        for (unsigned i = 0; i < n; i++) {
            mpw_reset(&b);
            record(&b);
            mpw_frame(&f, &b);
        }
        uint64_t want[64];
        oracle_reading o;
        oracle_trace(f.buf, f.len, want, &o);
        read_with(&f, NULL, 0, &plain);
        read_with(&f, NULL, LCT_KEYS, &noted);
        cr_assert_eq(plain.open_rc, o.open_rc, "trace %u", trace);
        cr_assert_eq(plain.records, o.records, "trace %u: %zu records, oracle %zu",
                     trace, plain.records, o.records);
        for (size_t i = 0; i < o.records; i++)
            cr_assert_eq(plain.offsets[i], want[i], "trace %u, record %zu",
                         trace, i);
        cr_assert_eq(plain.st.skipped, o.skipped, "trace %u", trace);
        cr_assert_eq(plain.st.truncated, o.truncated, "trace %u", trace);
        cr_assert_eq(noted.records, plain.records, "trace %u, LCT_KEYS", trace);
        cr_assert_eq(noted.nhashes, plain.nhashes, "trace %u, LCT_KEYS", trace);
        cr_assert_arr_eq(noted.hashes, plain.hashes,
                         plain.nhashes * sizeof plain.hashes[0],
                         "trace %u: the keys with LCT_KEYS", trace);
        cr_assert_eq(plain.ndecoded, plain.nhashes, "trace %u", trace);
        cr_assert_arr_eq(plain.decoded, plain.hashes,
                         plain.nhashes * sizeof plain.hashes[0],
                         "trace %u: the keys as the decoder reads them",
                         trace);
        keyed += plain.nhashes - plain.records;
        if (trace % 8 == 0) { /* and as a stream of the file */
            char *path = tmp_file_with(f.buf, f.len);
            read_with(&f, path, LCT_STREAM | LCT_KEYS, &noted);
            unlink(path);
            free(path);
            cr_assert_eq(noted.open_rc, plain.open_rc, "trace %u, stream",
                         trace);
            cr_assert_eq(noted.records, plain.records, "trace %u, stream",
                         trace);
            cr_assert_arr_eq(noted.offsets, plain.offsets,
                             plain.records * sizeof plain.offsets[0],
                             "trace %u, stream", trace);
            cr_assert(noted.st.skipped == plain.st.skipped &&
                          noted.st.truncated == plain.st.truncated,
                      "trace %u, stream", trace);
            cr_assert_eq(noted.nhashes, plain.nhashes, "trace %u, stream",
                         trace);
            cr_assert_arr_eq(noted.hashes, plain.hashes,
                             plain.nhashes * sizeof plain.hashes[0],
                             "trace %u: the keys in a stream", trace);
        }
        yielded += o.records, skipped += o.skipped;
        mpw_free(&f);
        mpw_free(&b);
    }
    /* the generator makes both kinds, so the comparison can fail */
    cr_expect_gt(yielded, 30000, "%zu yielded", yielded);
    cr_expect_gt(skipped, 30000, "%zu skipped", skipped);
    cr_expect_gt(keyed, 20000, "%zu keys read", keyed);
}
