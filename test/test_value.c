/*
 * test_value.c - the msgpack value views: types, typed reads and their
 * range checks, containers, key lookup, codec wrappers, validation, and
 * hostile or cut-short input.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "lct.h"
#include "mpw.h"

static lct_value view(const mpw *w)
{
    return lct_value_from(w->buf, w->len);
}

Test(value, types_of_every_encoding)
{
    static const struct {
        unsigned char bytes[3];
        size_t len;
        lct_type type;
    } cases[] = {
        {{0x00}, 1, LCT_TYPE_INT},      {{0x7f}, 1, LCT_TYPE_INT},
        {{0xe0}, 1, LCT_TYPE_INT},      {{0xff}, 1, LCT_TYPE_INT},
        {{0x80}, 1, LCT_TYPE_MAP},      {{0x90}, 1, LCT_TYPE_ARRAY},
        {{0xa0}, 1, LCT_TYPE_STR},      {{0xc0}, 1, LCT_TYPE_NIL},
        {{0xc2}, 1, LCT_TYPE_BOOL},     {{0xc3}, 1, LCT_TYPE_BOOL},
        {{0xc4, 0}, 2, LCT_TYPE_BIN},   {{0xd9, 0}, 2, LCT_TYPE_STR},
        {{0xdc, 0, 0}, 3, LCT_TYPE_ARRAY}, {{0xde, 0, 0}, 3, LCT_TYPE_MAP},
        {{0xd4, 1, 0}, 3, LCT_TYPE_EXT},
        {{0xc1}, 1, LCT_TYPE_INVALID},  /* reserved */
        {{0xcb, 0}, 2, LCT_TYPE_INVALID}, /* float64 cut short */
        {{0xdc, 0}, 2, LCT_TYPE_INVALID}, /* array16 count cut short */
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
        cr_expect_eq(lct_value_type(lct_value_from(cases[i].bytes,
                                                   cases[i].len)),
                     cases[i].type, "case %zu (0x%02x)", i, cases[i].bytes[0]);
    cr_expect_eq(lct_value_type((lct_value){NULL, 0}), LCT_TYPE_INVALID);
    cr_expect_str_eq(lct_type_name(LCT_TYPE_MAP), "map");
}

Test(value, integers_round_trip_with_range_checks)
{
    static const int64_t signed_cases[] = {
        0, 1, 127, 128, 255, 256, 65535, 65536, INT32_MAX, INT64_MAX,
        -1, -32, -33, -128, -129, -32768, -32769, INT32_MIN, INT64_MIN};
    mpw w;
    mpw_init(&w);
    for (size_t i = 0; i < sizeof signed_cases / sizeof *signed_cases; i++) {
        mpw_reset(&w);
        mpw_int(&w, signed_cases[i]);
        int64_t got = 42;
        cr_expect_eq(lct_value_get_int64(view(&w), &got), LCT_OK);
        cr_expect_eq(got, signed_cases[i]);
        uint64_t u = 7;
        int rc = lct_value_get_uint64(view(&w), &u);
        if (signed_cases[i] < 0) {
            cr_expect_eq(rc, LCT_ERR_RANGE);
            cr_expect_eq(u, 7, "out untouched on failure");
        } else {
            cr_expect_eq(u, (uint64_t)signed_cases[i]);
        }
        double d;
        cr_expect_eq(lct_value_get_double(view(&w), &d), LCT_OK);
        cr_expect_eq(d, (double)signed_cases[i]);
    }
    mpw_reset(&w);
    mpw_uint(&w, UINT64_MAX);
    int64_t i64;
    uint64_t u64;
    cr_expect_eq(lct_value_get_int64(view(&w), &i64), LCT_ERR_RANGE);
    cr_expect_eq(lct_value_get_uint64(view(&w), &u64), LCT_OK);
    cr_expect_eq(u64, UINT64_MAX);
    /* Signed encodings of small non-negative values read as such. */
    const unsigned char int8_five[] = {0xd0, 0x05};
    cr_expect_eq(lct_value_get_uint64(lct_value_from(int8_five, 2), &u64),
                 LCT_OK);
    cr_expect_eq(u64, 5);
    mpw_free(&w);
}

Test(value, doubles_from_floats_and_wrong_types)
{
    mpw w;
    mpw_init(&w);
    double d;
    mpw_f64(&w, 1764600000.0006518);
    cr_expect_eq(lct_value_get_double(view(&w), &d), LCT_OK);
    cr_expect_eq(d, 1764600000.0006518);
    mpw_reset(&w);
    mpw_f32(&w, 0.1f);
    cr_expect_eq(lct_value_type(view(&w)), LCT_TYPE_FLOAT32);
    cr_expect_eq(lct_value_get_double(view(&w), &d), LCT_OK);
    cr_expect_eq(d, (double)0.1f);
    mpw_reset(&w);
    mpw_f64(&w, NAN);
    cr_expect_eq(lct_value_get_double(view(&w), &d), LCT_OK);
    cr_expect(isnan(d));
    mpw_reset(&w);
    mpw_str(&w, "1.5");
    cr_expect_eq(lct_value_get_double(view(&w), &d), LCT_ERR_TYPE);
    mpw_reset(&w);
    mpw_nil(&w);
    cr_expect_eq(lct_value_get_double(view(&w), &d), LCT_ERR_TYPE);
    cr_expect(lct_value_is_nil(view(&w)));
    bool b;
    cr_expect_eq(lct_value_get_bool(view(&w), &b), LCT_ERR_TYPE);
    mpw_reset(&w);
    mpw_bool(&w, true);
    cr_expect_eq(lct_value_get_bool(view(&w), &b), LCT_OK);
    cr_expect(b);
    cr_expect_not(lct_value_is_nil(view(&w)));
    cr_expect_not(lct_value_is_nil(lct_value_from(NULL, 0)));
    mpw_free(&w);
}

Test(value, str_bin_ext_views_point_into_the_buffer)
{
    mpw w;
    mpw_init(&w);
    char big[300];
    memset(big, 'x', sizeof big);
    mpw_strn(&w, big, sizeof big); /* str16 */
    lct_str s;
    cr_assert_eq(lct_value_get_str(view(&w), &s), LCT_OK);
    cr_expect_eq(s.len, sizeof big);
    cr_expect_eq((const unsigned char *)s.ptr, w.buf + 3);
    lct_bytes b;
    cr_expect_eq(lct_value_get_bin(view(&w), &b), LCT_ERR_TYPE);

    mpw_reset(&w);
    mpw_bin(&w, "\x00\x01\x02", 3);
    cr_assert_eq(lct_value_get_bin(view(&w), &b), LCT_OK);
    cr_expect_eq(b.len, 3);
    cr_expect_eq(b.ptr[2], 2);
    cr_expect_eq(lct_value_get_str(view(&w), &s), LCT_ERR_TYPE);

    mpw_reset(&w);
    mpw_ext(&w, 5, "abcdefgh", 8);
    int8_t type;
    cr_assert_eq(lct_value_get_ext(view(&w), &type, &b), LCT_OK);
    cr_expect_eq(type, 5);
    cr_expect_eq(b.len, 8);
    cr_expect_eq(memcmp(b.ptr, "abcdefgh", 8), 0);

    /* A str whose length runs past the view is refused, not read. */
    const unsigned char cut[] = {0xa5, 'a', 'b'};
    cr_expect_eq(lct_value_get_str(lct_value_from(cut, 3), &s),
                 LCT_ERR_MALFORMED);
    const unsigned char str32_huge[] = {0xdb, 0xff, 0xff, 0xff, 0xff, 'a'};
    cr_expect_eq(lct_value_get_str(lct_value_from(str32_huge, 6), &s),
                 LCT_ERR_MALFORMED);
    cr_expect(lct_value_str_eq(lct_value_from("\xa2hi", 3), "hi"));
    cr_expect(!lct_value_str_eq(lct_value_from("\xa2hi", 3), "h"));
    cr_expect(!lct_value_str_eq(lct_value_from("\xa2h", 2), "h"));
    mpw_free(&w);
}

Test(value, arrays_and_maps_iterate_with_exact_element_views)
{
    mpw w;
    mpw_init(&w);
    mpw_array(&w, 3);
    mpw_uint(&w, 1);
    mpw_array(&w, 2);
    mpw_str(&w, "a");
    mpw_nil(&w);
    mpw_str(&w, "end");
    lct_iter it;
    lct_value e;
    cr_assert_eq(lct_array_iter_init(view(&w), &it), LCT_OK);
    cr_expect_eq(it.count, 3);
    cr_assert_eq(lct_array_iter_next(&it, &e), 1);
    cr_expect_eq(e.len, 1);
    cr_assert_eq(lct_array_iter_next(&it, &e), 1);
    cr_expect_eq(lct_value_type(e), LCT_TYPE_ARRAY);
    cr_expect_eq(e.len, 4, "nested array is exactly its bytes");
    cr_assert_eq(lct_array_iter_next(&it, &e), 1);
    cr_expect(lct_value_str_eq(e, "end"));
    cr_expect_eq(lct_array_iter_next(&it, &e), 0);
    cr_expect_eq(lct_array_iter_next(&it, &e), 0, "stays at the end");
    lct_value k, v;
    cr_expect_eq(lct_map_iter_next(&it, &k, &v), LCT_ERR_TYPE);
    cr_expect_eq(lct_map_iter_init(view(&w), &it), LCT_ERR_TYPE);

    mpw_reset(&w);
    mpw_map(&w, 3);
    mpw_str(&w, "k");
    mpw_uint(&w, 1);
    mpw_uint(&w, 7); /* non-str keys are fine inside values */
    mpw_str(&w, "seven");
    mpw_str(&w, "k");
    mpw_uint(&w, 2);
    cr_assert_eq(lct_map_iter_init(view(&w), &it), LCT_OK);
    int pairs = 0;
    while (lct_map_iter_next(&it, &k, &v) == 1)
        pairs++;
    cr_expect_eq(pairs, 3);
    uint64_t u;
    cr_assert_eq(lct_map_find(view(&w), "k", &v), LCT_OK);
    cr_expect_eq(lct_value_get_uint64(v, &u), LCT_OK);
    cr_expect_eq(u, 2, "the last of a repeated key wins");
    cr_expect_eq(lct_map_find(view(&w), "nope", &v), LCT_ERR_NOT_FOUND);
    cr_expect_eq(lct_map_find(lct_value_from("\x01", 1), "k", &v),
                 LCT_ERR_TYPE);
    mpw_free(&w);
}

Test(value, hostile_counts_fail_before_looping)
{
    /* A map32 claiming 2^32-1 pairs in a handful of bytes. */
    const unsigned char map[] = {0xdf, 0xff, 0xff, 0xff, 0xff, 0x01, 0x02};
    lct_iter it;
    cr_expect_eq(lct_map_iter_init(lct_value_from(map, sizeof map), &it),
                 LCT_ERR_MALFORMED);
    size_t size;
    cr_expect_eq(lct_value_size(lct_value_from(map, sizeof map), &size),
                 LCT_ERR_MALFORMED);
    const unsigned char arr[] = {0xdd, 0xff, 0xff, 0xff, 0xff, 0x01};
    cr_expect_eq(lct_array_iter_init(lct_value_from(arr, sizeof arr), &it),
                 LCT_ERR_MALFORMED);
    /* Count fits, but an element is cut short: the step fails. */
    const unsigned char arr2[] = {0x92, 0x01, 0xcd, 0x01};
    lct_value e;
    cr_assert_eq(lct_array_iter_init(lct_value_from(arr2, sizeof arr2), &it),
                 LCT_OK);
    cr_expect_eq(lct_array_iter_next(&it, &e), 1);
    cr_expect_eq(lct_array_iter_next(&it, &e), LCT_ERR_MALFORMED);
}

Test(value, string_helpers)
{
    lct_str q = {"lmcache.StorageManager.submit_prefetch_task", 43};
    cr_expect(lct_str_eq(q, "lmcache.StorageManager.submit_prefetch_task"));
    cr_expect_not(lct_str_eq(q, "lmcache.StorageManager.submit_prefetch_tas"));
    cr_expect_not(lct_str_eq(q, "lmcache.StorageManager.submit_prefetch_taskx"));
    cr_expect(lct_str_has_suffix(q, ".submit_prefetch_task"));
    cr_expect(lct_str_has_suffix(q, ""));
    cr_expect_not(lct_str_has_suffix(q, "submit"));
    lct_str shorter = {"task", 4};
    cr_expect_not(lct_str_has_suffix(shorter, "_task"));
    lct_str empty = {NULL, 0};
    cr_expect(lct_str_eq(empty, ""));
    cr_expect(lct_str_has_suffix(empty, ""));
    cr_expect_not(lct_str_eq(empty, "a"));
    lct_str a = {"ab", 2}, ab = {"abc", 3}, b = {"b", 1};
    cr_expect_lt(lct_str_cmp(a, ab), 0, "a prefix sorts first");
    cr_expect_gt(lct_str_cmp(b, ab), 0);
    cr_expect_eq(lct_str_cmp(ab, ab), 0);
    cr_expect_eq(lct_str_cmp(empty, empty), 0);
    cr_expect_lt(lct_str_cmp(empty, a), 0);
    lct_str with_nul = {"a\0b", 3};
    cr_expect_not(lct_str_eq(with_nul, "a"), "the length counts, not a NUL");
}

/* A caller that ignores a failed *_begin must still hold a valid, empty
 * iterator: its loop runs zero times instead of reading garbage. */
Test(value, a_failed_begin_leaves_an_empty_iterator)
{
    const unsigned char map[] = {0xdf, 0xff, 0xff, 0xff, 0xff, 0x01, 0x02};
    const unsigned char one[] = {0x01};
    lct_iter it;
    lct_value k, v;
    memset(&it, 0x5a, sizeof it);
    cr_expect_eq(lct_map_iter_init(lct_value_from(map, sizeof map), &it),
                 LCT_ERR_MALFORMED);
    cr_expect_eq(it.count, 0);
    cr_expect_eq(lct_map_iter_next(&it, &k, &v), 0);
    memset(&it, 0x5a, sizeof it);
    cr_expect_eq(lct_array_iter_init(lct_value_from(one, 1), &it),
                 LCT_ERR_TYPE);
    cr_expect_eq(lct_array_iter_next(&it, &k), 0);
    memset(&it, 0x5a, sizeof it);
    cr_expect_eq(lct_map_iter_init(lct_value_from(NULL, 0), &it),
                 LCT_ERR_MALFORMED);
    cr_expect_eq(lct_map_iter_next(&it, &k, &v), 0);
    cr_expect_eq(lct_map_iter_init(lct_value_from(one, 1), NULL),
                 LCT_ERR_INVALID);
}

Test(value, nesting_is_bounded)
{
    mpw w;
    mpw_init(&w);
    for (int i = 0; i < LCT_MAX_DEPTH; i++)
        mpw_array(&w, 1);
    mpw_nil(&w);
    size_t size;
    cr_expect_eq(lct_value_size(view(&w), &size), LCT_OK);
    cr_expect_eq(size, w.len);
    mpw_reset(&w);
    for (int i = 0; i < 100000; i++)
        mpw_array(&w, 1);
    mpw_nil(&w);
    cr_expect_eq(lct_value_size(view(&w), &size), LCT_ERR_DEPTH);
    cr_expect_eq(lct_value_validate(view(&w), &size), LCT_ERR_DEPTH);
    mpw_free(&w);
}

Test(value, validate_checks_utf8_everywhere)
{
    static const char *bad[] = {
        "\xff", "\xc0\x80", /* overlong NUL */
        "\xed\xa0\x80",     /* surrogate */
        "\xf4\x90\x80\x80", /* past U+10FFFF */
        "abcdefgh\xe2\x82", /* cut sequence after an ASCII run */
        "\xe0\x9f\xbf",     /* overlong 3-byte */
        "\xf0\x8f\xbf\xbf", /* overlong 4-byte */
    };
    static const char *good[] = {"", "plain ascii text, long enough",
                                 "h\xc3\xa9llo", "\xe3\x82\xad",
                                 "\xf0\x9f\x98\x80", "\xef\xbf\xbf"};
    mpw w;
    mpw_init(&w);
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        /* Inside a map value, as a map key, inside an array. */
        for (int shape = 0; shape < 3; shape++) {
            mpw_reset(&w);
            mpw_map(&w, 1);
            if (shape == 1) {
                mpw_strn(&w, bad[i], strlen(bad[i]));
                mpw_nil(&w);
            } else {
                mpw_str(&w, "k");
                if (shape == 2)
                    mpw_array(&w, 1);
                mpw_strn(&w, bad[i], strlen(bad[i]));
            }
            cr_expect_eq(lct_value_validate(view(&w), NULL),
                         LCT_ERR_MALFORMED, "bad %zu shape %d", i, shape);
            cr_expect_eq(lct_value_size(view(&w), NULL), LCT_OK,
                         "structure alone is fine");
        }
    }
    for (size_t i = 0; i < sizeof good / sizeof *good; i++) {
        mpw_reset(&w);
        mpw_strn(&w, good[i], strlen(good[i]));
        size_t size = 0;
        cr_expect_eq(lct_value_validate(view(&w), &size), LCT_OK, "good %zu",
                     i);
        cr_expect_eq(size, w.len);
    }
    mpw_free(&w);
}

Test(value, validate_checks_timestamps_like_the_reference)
{
    mpw w;
    mpw_init(&w);
    /* 4-byte seconds: always fine. */
    mpw_ext(&w, -1, "\x00\x00\x00\x01", 4);
    cr_expect_eq(lct_value_validate(view(&w), NULL), LCT_OK);
    /* 8-byte: nanoseconds (top 30 bits) must be below 10^9. */
    mpw_reset(&w);
    mpw_ext(&w, -1, "\xff\xff\xff\xfc\x00\x00\x00\x00", 8);
    cr_expect_eq(lct_value_validate(view(&w), NULL), LCT_ERR_MALFORMED);
    mpw_reset(&w);
    mpw_ext(&w, -1, "\x00\x00\x00\x04\x00\x00\x00\x01", 8);
    cr_expect_eq(lct_value_validate(view(&w), NULL), LCT_OK);
    /* 12-byte: seconds past year 9999 do not make a datetime. */
    mpw_reset(&w);
    mpw_ext(&w, -1, "\x00\x00\x00\x00\x7f\x00\x00\x00\x00\x00\x00\x00", 12);
    cr_expect_eq(lct_value_validate(view(&w), NULL), LCT_ERR_MALFORMED);
    /* Any other length is not a timestamp. */
    mpw_reset(&w);
    mpw_ext(&w, -1, "\x00\x00", 2);
    cr_expect_eq(lct_value_validate(view(&w), NULL), LCT_ERR_MALFORMED);
    /* Other ext types stay opaque. */
    mpw_reset(&w);
    mpw_ext(&w, 3, "\x00\x00", 2);
    cr_expect_eq(lct_value_validate(view(&w), NULL), LCT_OK);
    mpw_free(&w);
}

Test(value, codec_wrappers_are_recognised)
{
    mpw w;
    mpw_init(&w);
    mpw_map(&w, 2);
    mpw_str(&w, "__t__");
    mpw_str(&w, "ObjectKey");
    mpw_str(&w, "v");
    mpw_map(&w, 1);
    mpw_str(&w, "kv_rank");
    mpw_uint(&w, 3);
    lct_str tag;
    lct_value payload, rank;
    cr_assert(lct_value_codec(view(&w), &tag, &payload));
    cr_expect(tag.len == 9 && memcmp(tag.ptr, "ObjectKey", 9) == 0);
    cr_assert_eq(lct_map_find(payload, "kv_rank", &rank), LCT_OK);
    uint64_t u;
    cr_expect_eq(lct_value_get_uint64(rank, &u), LCT_OK);
    cr_expect_eq(u, 3);

    /* Keys in the other order are the same wrapper. */
    mpw_reset(&w);
    mpw_map(&w, 2);
    mpw_str(&w, "v");
    mpw_array(&w, 0);
    mpw_str(&w, "__t__");
    mpw_str(&w, "tuple");
    cr_expect(lct_value_codec(view(&w), &tag, NULL));

    /* Not wrappers: a third key, a non-str tag, a repeated key. */
    mpw_reset(&w);
    mpw_map(&w, 3);
    mpw_str(&w, "__t__");
    mpw_str(&w, "tuple");
    mpw_str(&w, "v");
    mpw_nil(&w);
    mpw_str(&w, "x");
    mpw_nil(&w);
    cr_expect(!lct_value_codec(view(&w), &tag, &payload));
    mpw_reset(&w);
    mpw_map(&w, 2);
    mpw_str(&w, "__t__");
    mpw_uint(&w, 1);
    mpw_str(&w, "v");
    mpw_nil(&w);
    cr_expect(!lct_value_codec(view(&w), &tag, &payload));
    mpw_reset(&w);
    mpw_map(&w, 2);
    mpw_str(&w, "v");
    mpw_nil(&w);
    mpw_str(&w, "v");
    mpw_nil(&w);
    cr_expect(!lct_value_codec(view(&w), &tag, &payload));
    cr_expect(!lct_value_codec(lct_value_from("\xc0", 1), &tag, &payload));
    mpw_free(&w);
}

Test(value, every_prefix_of_a_value_is_refused_not_overread)
{
    mpw w;
    mpw_init(&w);
    mpw_map(&w, 2);
    mpw_str(&w, "a");
    mpw_array(&w, 3);
    mpw_f64(&w, 1.5);
    mpw_bin(&w, "xyz", 3);
    mpw_ext(&w, 1, "abcd", 4);
    mpw_str(&w, "b");
    mpw_int(&w, -100000);
    size_t size;
    cr_assert_eq(lct_value_validate(view(&w), &size), LCT_OK);
    cr_assert_eq(size, w.len);
    /* Each prefix is copied to its own exact-size heap block, so ASan
     * would catch a read one byte past it. */
    for (size_t n = 0; n < w.len; n++) {
        unsigned char *copy = malloc(n ? n : 1);
        memcpy(copy, w.buf, n);
        lct_value v = lct_value_from(copy, n);
        cr_expect_neq(lct_value_validate(v, &size), LCT_OK, "prefix %zu", n);
        cr_expect_neq(lct_value_size(v, &size), LCT_OK, "prefix %zu", n);
        lct_value found;
        cr_expect_neq(lct_map_find(v, "b", &found), LCT_OK, "prefix %zu", n);
        free(copy);
    }
    mpw_free(&w);
}

/*
 * The walker steps over the codec's ObjectKey opening (65 bytes) as one
 * unit.  Each value here is walked beside a twin that differs in one
 * ASCII byte of the tag ("ObjectKez"), which the fast path does not take:
 * both must give the same status and size for every prefix, at every
 * depth near the limit, and when the bytes only nearly match.
 */
/* The pair an ObjectKey of `pairs` pairs would hold next. */
static void sibling_pair(mpw *w, unsigned pairs, const unsigned char *hash)
{
    static const char *keys[] = {"chunk_hash", "model_name", "kv_rank",
                                 "object_group_id"};
    mpw_str(w, keys[pairs]);
    if (pairs == 0)
        mpw_bin(w, hash, 32);
    else if (pairs == 1)
        mpw_str(w, "m");
    else
        mpw_int(w, 0);
    /* enough bytes after it that the fast path would look */
    mpw_str(w, "padding padding padding padding padding padding");
}

static void walk_prefixes_like_the_twin(const mpw *w, const mpw *twin)
{
    cr_assert_eq(w->len, twin->len);
    for (size_t n = 0; n <= w->len; n++) {
        unsigned char *a = malloc(n ? n : 1), *b = malloc(n ? n : 1);
        memcpy(a, w->buf, n);
        memcpy(b, twin->buf, n);
        size_t size_a = 0, size_b = 0;
        int rc_a = lct_value_validate(lct_value_from(a, n), &size_a);
        int rc_b = lct_value_validate(lct_value_from(b, n), &size_b);
        cr_expect_eq(rc_a, rc_b, "prefix %zu of %zu: %d, twin %d", n,
                     w->len, rc_a, rc_b);
        if (rc_a == LCT_OK && rc_b == LCT_OK)
            cr_expect_eq(size_a, size_b, "prefix %zu", n);
        rc_a = lct_value_size(lct_value_from(a, n), &size_a);
        rc_b = lct_value_size(lct_value_from(b, n), &size_b);
        cr_expect_eq(rc_a, rc_b, "size, prefix %zu", n);
        free(a);
        free(b);
    }
}

Test(value, objectkey_fast_path_walks_as_the_general_path)
{
    static const struct {
        unsigned pairs, arrays;
        size_t hash_len;
        const char *model;
        bool sibling; /* the pair the map lacks follows it, in an array */
        bool as_array; /* the payload is an array holding the same */
        int whole;     /* what validating the whole value gives */
        int64_t rank;  /* kv_rank: fixint, or wider, or negative */
        int64_t group; /* object_group_id, the same */
    } cases[] = {
        {4, 0, 32, "Qwen/Qwen3-8B", false, false, LCT_OK, 3, 0},
        {3, 0, 32, "Qwen/Qwen3-8B", false, false, LCT_OK, 3, 0},
        {5, 0, 32, "a model name of 31 bytes ......", false, false, LCT_OK, 3, 0},
        {4, 0, 32, "a model name of 32 bytes .......", false, false, LCT_OK, 3, 0},
        {1, 0, 32, "", false, false, LCT_OK, 3, 0},
        {2, 0, 32, "m", false, false, LCT_OK, 3, 0},
        {15, 0, 32, "m", false, false, LCT_OK, 3, 0},
        {4, 0, 32, "bad \xff utf-8", false, false, LCT_ERR_MALFORMED, 3, 0},
        {4, 0, 32, "bad \xff utf-8 in a str8 name ....", false, false,
         LCT_ERR_MALFORMED, 3, 0},
        {4, 0, 32, "meta-llama/Llama-3.1-8B-Instruct", false, false, LCT_OK,
         7, 2},
        {4, 0, 32, "a long str8 name, 242 bytes: ..........................."
                   "................................................................"
                   "................................................................"
                   "..............................................................",
         false, false, LCT_OK, 3, 0},
        {4, 0, 31, "short hash", false, false, LCT_OK, 3, 0},
        {4, 0, 33, "long hash", false, false, LCT_OK, 3, 0},
        /* the bytes after a short payload belong to the array */
        {0, 0, 32, "", true, false, LCT_OK, 3, 0},
        {1, 0, 32, "", true, false, LCT_OK, 3, 0},
        {2, 0, 32, "m", true, false, LCT_OK, 3, 0},
        {3, 0, 32, "m", true, false, LCT_OK, 3, 0},
        {4, LCT_MAX_DEPTH - 3, 32, "deep", false, false, LCT_OK, 3, 0},
        {4, LCT_MAX_DEPTH - 2, 32, "at the limit", false, false, LCT_OK, 3, 0},
        {4, LCT_MAX_DEPTH - 1, 32, "past it", false, false, LCT_ERR_DEPTH, 3, 0},
        {4, LCT_MAX_DEPTH, 32, "far past it", false, false, LCT_ERR_DEPTH, 3, 0},
        {2, 0, 32, "array", false, true, LCT_OK, 3, 0},
        {4, 0, 32, "wide rank", false, false, LCT_OK, 200, 0},
        {4, 0, 32, "negative rank", false, false, LCT_OK, -1, 0},
        {4, 0, 32, "big rank", false, false, LCT_OK, INT64_C(1) << 40, 0},
        {4, 0, 32, "wide group", false, false, LCT_OK, 3, 200},
        {4, 0, 32, "negative group", false, false, LCT_OK, 3, -1},
    };
    static const unsigned char hash[32] = {0};
    mpw w, twin;
    mpw_init(&w);
    mpw_init(&twin);
    mpw *both[2] = {&w, &twin};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        for (int i = 0; i < 2; i++) {
            mpw_reset(both[i]);
            for (unsigned d = 0; d < cases[c].arrays; d++)
                mpw_array(both[i], 1);
            if (cases[c].sibling)
                mpw_array(both[i], 4);
            mpw_objectkey(both[i],
                          &(mpw_objectkey_shape){
                              i ? "ObjectKez" : "ObjectKey", cases[c].pairs,
                              cases[c].hash_len, cases[c].model,
                              cases[c].rank, cases[c].group,
                              cases[c].as_array});
            if (cases[c].sibling)
                sibling_pair(both[i], cases[c].pairs, hash);
        }
        size_t size;
        cr_expect_eq(lct_value_validate(view(&w), &size), cases[c].whole,
                     "case %zu", c);
        walk_prefixes_like_the_twin(&w, &twin);
    }
    /* A list of keys, as a real trace holds them. */
    for (int i = 0; i < 2; i++) {
        mpw_reset(both[i]);
        mpw_array(both[i], 20);
        for (unsigned k = 0; k < 20; k++)
            mpw_objectkey(both[i], &(mpw_objectkey_shape){
                                       i ? "ObjectKez" : "ObjectKey",
                                       2 + k % 4, 32, "Qwen/Qwen3-8B", k,
                                       k / 2, false});
    }
    size_t size;
    cr_expect_eq(lct_value_validate(view(&w), &size), LCT_OK);
    cr_expect_eq(size, w.len);
    walk_prefixes_like_the_twin(&w, &twin);
    mpw_free(&w);
    mpw_free(&twin);
}

/*
 * A key whose bytes repeat an earlier key's outside the hash, kv_rank and
 * object_group_id is stepped over by comparing it with that one.  Every
 * byte of the second and later keys is set to each of a set of values, in lists of several key layouts and at several depths, and the
 * list must walk as its twin (every tag "ObjectKez", which no fast path
 * takes) does.
 */
enum { KEY_SHAPES = 8 };

static void append_key(mpw *w, const char *tag, unsigned shape, int64_t rank)
{
    static const char llama[] = "meta-llama/Llama-3.1-8B-Instruct";
    static const mpw_objectkey_shape shapes[] = {
        {NULL, 3, 32, "Qwen/Qwen3-8B", 0, 0, false},
        {NULL, 4, 32, llama, 0, 0, false},
        {NULL, 5, 32, llama, 0, 0, false}, /* with a cache_salt */
        {NULL, 6, 32, llama, 0, 0, false},
        {NULL, 1, 32, "", 0, 0, false},    /* the hash alone */
        {NULL, 3, 32, "m", 0, 0, false},   /* a tail of 10 bytes */
        {NULL, 4, 32, "a long str8 name, 140 bytes: ................"
                      "................................................"
                      "..............................................",
         0, 0, false}, /* past the templates' room */
    };
    if (shape < sizeof shapes / sizeof shapes[0]) {
        mpw_objectkey_shape s = shapes[shape];
        s.tag = tag;
        s.rank = rank;
        s.group = rank / 3;
        mpw_objectkey(w, &s);
        return;
    }
    /* a cache_salt nested two arrays deep */
    static const unsigned char hash[32] = {1, 2, 3};
    mpw_map(w, 2);
    mpw_str(w, "__t__");
    mpw_str(w, tag);
    mpw_str(w, "v");
    mpw_map(w, 5);
    mpw_str(w, "chunk_hash");
    mpw_bin(w, hash, sizeof hash);
    mpw_str(w, "model_name");
    mpw_str(w, "Qwen/Qwen3-8B");
    mpw_str(w, "kv_rank");
    mpw_int(w, rank);
    mpw_str(w, "object_group_id");
    mpw_int(w, 0);
    mpw_str(w, "cache_salt");
    mpw_array(w, 1);
    mpw_array(w, 1);
    mpw_str(w, "salt");
}

/* Three keys nested `arrays` deep, with `deeper` the last two one array
 * further in, and a fourth key after the list.  Returns where the second
 * key starts. */
static size_t key_list(mpw *w, const char *tag, unsigned shape,
                       unsigned arrays, bool deeper)
{
    for (unsigned d = 0; d < arrays; d++)
        mpw_array(w, 1);
    mpw_array(w, 2);
    mpw_array(w, deeper ? 2 : 3);
    append_key(w, tag, shape, 1);
    if (deeper)
        mpw_array(w, 2);
    size_t second = w->len;
    append_key(w, tag, shape, 2);
    append_key(w, tag, shape, 5);
    append_key(w, tag, shape, 7);
    return second;
}

Test(value, a_key_like_the_one_before_walks_as_the_general_path)
{
    static const unsigned char values[] = {
        0x00, 0x01, 0x05, 0x7f, 0x80, 0x81, 0x8f, 0x90, 0x9f, 0xa0,
        0xa1, 0xbf, 0xc0, 0xc1, 0xc2, 0xc4, 0xcc, 0xd0, 0xd9, 0xdc,
        0xde, 0xe0, 0xff};
    static const struct {
        unsigned arrays;
        bool deeper;
    } places[] = {{0, false},
                  {LCT_MAX_DEPTH - 6, false},
                  {LCT_MAX_DEPTH - 5, false},
                  {LCT_MAX_DEPTH - 4, false},
                  {LCT_MAX_DEPTH - 6, true},
                  {LCT_MAX_DEPTH - 5, true}};
    mpw w, twin;
    mpw_init(&w);
    mpw_init(&twin);
    size_t checked = 0, valid = 0;
    for (unsigned shape = 0; shape < KEY_SHAPES; shape++) {
        for (size_t at = 0; at < sizeof places / sizeof places[0]; at++) {
            mpw_reset(&w);
            mpw_reset(&twin);
            size_t from = key_list(&w, "ObjectKey", shape, places[at].arrays,
                                   places[at].deeper);
            key_list(&twin, "ObjectKez", shape, places[at].arrays,
                     places[at].deeper);
            cr_assert_eq(w.len, twin.len);
            for (size_t i = from; i < w.len; i++) {
                for (size_t v = 0; v <= sizeof values; v++) {
                    unsigned char was = w.buf[i], twin_was = twin.buf[i];
                    /* the last round: the byte with its low bit flipped */
                    unsigned char b = v < sizeof values ? values[v] : was ^ 1;
                    w.buf[i] = b;
                    twin.buf[i] = b == was ? twin_was : b;
                    size_t size = 0, twin_size = 0;
                    int rc = lct_value_validate(view(&w), &size);
                    int twin_rc = lct_value_validate(view(&twin), &twin_size);
                    cr_expect_eq(rc, twin_rc,
                                 "shape %u, place %zu, byte %zu set to %#x: "
                                 "%d, twin %d", shape, at, i - from, b, rc,
                                 twin_rc);
                    if (rc == LCT_OK && twin_rc == LCT_OK) {
                        cr_expect_eq(size, twin_size, "shape %u byte %zu",
                                     shape, i - from);
                        valid++;
                    }
                    w.buf[i] = was;
                    twin.buf[i] = twin_was;
                    checked++;
                }
            }
        }
    }
    /* the changes left many lists valid, so both answers were seen */
    cr_expect_gt(valid, checked / 10, "%zu of %zu valid", valid, checked);
    mpw_free(&w);
    mpw_free(&twin);
}

/*
 * The template outlives the walk that learnt it (a copy, per thread): a
 * later walk of the same key shape is decided by it after the first
 * buffer is overwritten and freed, and still refuses what the general
 * path refuses.
 */
Test(value, a_key_learnt_in_an_earlier_walk_is_held_as_a_copy)
{
    mpw first, later;
    mpw_init(&first);
    mpw_init(&later);
    mpw_objectkey_shape k = {"ObjectKey", 4, 32,
                             "meta-llama/Llama-3.1-8B-Instruct", 3, 1, false};
    mpw_array(&first, 2);
    mpw_objectkey(&first, &k);
    mpw_objectkey(&first, &k);
    size_t size;
    cr_assert_eq(lct_value_validate(view(&first), &size), LCT_OK);
    mpw_array(&later, 1);
    size_t key_at = later.len;
    k.rank = 5;
    mpw_objectkey(&later, &k);
    memset(first.buf, 0xc1, first.len); /* what a reused buffer might hold */
    mpw_free(&first);
    cr_expect_eq(lct_value_validate(view(&later), &size), LCT_OK);
    cr_expect_eq(size, later.len);
    /* the rank: the byte before the group's pair (16 + 1 bytes), last */
    size_t rank_at = later.len - 17 - 1;
    cr_assert_eq(later.buf[rank_at], 5);
    later.buf[rank_at] = 0xc1;
    cr_expect_eq(lct_value_validate(view(&later), &size), LCT_ERR_MALFORMED);
    later.buf[rank_at] = 0x7f;
    cr_expect_eq(lct_value_validate(view(&later), &size), LCT_OK);
    /* a name byte made invalid UTF-8: the template does not hold it (the
     * codec's opening is 65 bytes, the name's str8 head 13 after it) */
    later.buf[rank_at] = 5;
    later.buf[key_at + 65 + 13 + 5] = 0xff;
    cr_expect_eq(lct_value_validate(view(&later), &size), LCT_ERR_MALFORMED);
    mpw_free(&later);
}

Test(value, str_after_last)
{
    lct_str q = {"a.b.reserve_write", 17};
    lct_str op = lct_str_after_last(q, '.');
    cr_expect(lct_str_eq(op, "reserve_write"));
    cr_expect(lct_str_eq(lct_str_after_last((lct_str){"plain", 5}, '.'),
                         "plain"), "no dot: the whole view");
    cr_expect_eq(lct_str_after_last((lct_str){"ends.", 5}, '.').len, 0);
    cr_expect_eq(lct_str_after_last((lct_str){NULL, 0}, '.').len, 0);
}

/*
 * The reference decoder builds a map as a Python dict, so a map key must
 * hash (msgspec's mpack_decode_dict: PyDict_SetItem): a map there, or an
 * ext other than a timestamp (msgspec's Ext defines no hash), anywhere in
 * the key, refuses the value; an array is a tuple, and hashes when what
 * it holds does.  Each case is {"a": {KEY: 1}} unless said.
 */
Test(value, map_keys_must_be_values_python_can_hash)
{
    static const unsigned char ts[4] = {0, 0, 0, 1};
    static const mpw_objectkey_shape k = {"ObjectKey", 3, 32, "Qwen/Qwen3-8B",
                                          1, 0, false};
    enum { EMPTY_MAP, MAP, ARRAY_OF_MAP, ARRAY_OF_ARRAY, EXT, TIMESTAMP,
           OBJECT_KEY, ARRAY_OF_KEY, NCASES };
    static const int want[NCASES] = {
        [EMPTY_MAP] = LCT_ERR_MALFORMED, [MAP] = LCT_ERR_MALFORMED,
        [ARRAY_OF_MAP] = LCT_ERR_MALFORMED, [ARRAY_OF_ARRAY] = LCT_OK,
        [EXT] = LCT_ERR_MALFORMED, [TIMESTAMP] = LCT_OK,
        [OBJECT_KEY] = LCT_ERR_MALFORMED, [ARRAY_OF_KEY] = LCT_ERR_MALFORMED};
    mpw w;
    mpw_init(&w);
    /* twice: the second time the walker's key template is warm */
    for (int round = 0; round < 2; round++)
        for (int c = 0; c < NCASES; c++) {
            mpw_reset(&w);
            mpw_map(&w, 2);
            mpw_str(&w, "k");
            mpw_objectkey(&w, &k); /* teaches the template */
            mpw_str(&w, "a");
            mpw_map(&w, 1);
            switch (c) {
            case EMPTY_MAP: mpw_map(&w, 0); break;
            case MAP: mpw_map(&w, 1); mpw_int(&w, 1); mpw_int(&w, 2); break;
            case ARRAY_OF_MAP:
                mpw_array(&w, 2); mpw_int(&w, 1); mpw_map(&w, 0); break;
            case ARRAY_OF_ARRAY:
                mpw_array(&w, 2); mpw_int(&w, 1); mpw_array(&w, 1);
                mpw_str(&w, "x"); break;
            case EXT: mpw_ext(&w, 5, ts, sizeof ts); break;
            case TIMESTAMP: mpw_ext(&w, -1, ts, sizeof ts); break;
            case OBJECT_KEY: mpw_objectkey(&w, &k); break;
            case ARRAY_OF_KEY: mpw_array(&w, 1); mpw_objectkey(&w, &k); break;
            }
            mpw_int(&w, 1);
            size_t size;
            cr_expect_eq(lct_value_validate(view(&w), &size), want[c],
                         "round %d, case %d", round, c);
        }
    /* a map as a value after a key that held an array: not in a key */
    mpw_reset(&w);
    mpw_map(&w, 2);
    mpw_array(&w, 1);
    mpw_array(&w, 1);
    mpw_int(&w, 1);
    mpw_map(&w, 1);
    mpw_str(&w, "x");
    mpw_map(&w, 0);
    mpw_int(&w, 2);
    mpw_map(&w, 0);
    size_t size;
    cr_expect_eq(lct_value_validate(view(&w), &size), LCT_OK);
    cr_expect_eq(size, w.len);
    mpw_free(&w);
}

/*
 * Keys of several shapes mixed in one list (salted and unsalted, three
 * model names), as a fleet's traces hold them: each shape is stepped over
 * by a template of its own, and every byte of the later keys, changed,
 * walks as the twin (no fast path) walks.
 */
Test(value, mixed_key_shapes_walk_as_the_general_path)
{
    static const unsigned order[] = {0, 2, 0, 1, 2, 2, 0, 1, 3, 0};
    static const unsigned char values[] = {0x00, 0x05, 0x7f, 0x80, 0xa0,
                                           0xc1, 0xcc, 0xd9, 0xff};
    mpw w, twin;
    mpw_init(&w);
    mpw_init(&twin);
    size_t from = 0, checked = 0, valid = 0;
    for (int i = 0; i < 2; i++) {
        mpw *m = i ? &twin : &w;
        mpw_array(m, sizeof order / sizeof order[0]);
        for (size_t k = 0; k < sizeof order / sizeof order[0]; k++) {
            if (k == 4)
                from = m->len;
            append_key(m, i ? "ObjectKez" : "ObjectKey", order[k],
                       (int64_t)k);
        }
    }
    cr_assert_eq(w.len, twin.len);
    size_t size;
    cr_expect_eq(lct_value_validate(view(&w), &size), LCT_OK);
    for (size_t at = from; at < w.len; at++)
        for (size_t v = 0; v < sizeof values; v++) {
            unsigned char was = w.buf[at], twin_was = twin.buf[at];
            w.buf[at] = values[v];
            twin.buf[at] = values[v] == was ? twin_was : values[v];
            size_t a = 0, b = 0;
            int rc = lct_value_validate(view(&w), &a);
            int twin_rc = lct_value_validate(view(&twin), &b);
            cr_expect_eq(rc, twin_rc, "byte %zu set to %#x", at - from,
                         values[v]);
            valid += rc == LCT_OK && twin_rc == LCT_OK && a == b;
            w.buf[at] = was;
            twin.buf[at] = twin_was;
            checked++;
        }
    cr_expect_gt(valid, checked / 10, "%zu of %zu valid", valid, checked);
    mpw_free(&w);
    mpw_free(&twin);
}
