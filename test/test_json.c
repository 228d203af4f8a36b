/*
 * test_json.c - JSON rendering in msgspec.json's convention: base64 bin,
 * round-trip floats, NaN as null, RFC 8259 escapes, non-str keys as
 * strings, repeated keys once with the last value, timestamps and ext.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "lct.h"
#include "mpw.h"

typedef struct sink {
    char buf[65536];
    size_t len;
    int fail_after; /* calls; 0 = never */
    int calls;
} sink;

static int to_sink(void *ctx, const char *data, size_t len)
{
    sink *s = ctx;
    if (s->fail_after && ++s->calls >= s->fail_after)
        return -1;
    cr_assert_lt(s->len + len, sizeof s->buf);
    memcpy(s->buf + s->len, data, len);
    s->len += len;
    s->buf[s->len] = '\0';
    return 0;
}

static const char *render(const mpw *w)
{
    static sink s;
    memset(&s, 0, sizeof s);
    cr_assert_eq(lct_value_write_json(lct_value_from(w->buf, w->len), to_sink,
                                      &s),
                 LCT_OK);
    return s.buf;
}

Test(json, floats_read_back_and_stay_floats)
{
    static const struct {
        double d;
        const char *text;
    } cases[] = {{0.1, "0.1"},
                 {1.0, "1.0"},
                 {-2.5, "-2.5"},
                 {1e300, "1e+300"},
                 {1.5e-300, "1.5e-300"},
                 {1764600000.0006518, "1764600000.0006518"},
                 {0.0006518600739178462, "0.00065186007391784624"}};
    char buf[LCT_DOUBLE_BUFSIZE];
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        lct_json_format_double(cases[i].d, buf);
        cr_expect(strtod(buf, NULL) == cases[i].d, "%s does not read back",
                  buf);
        cr_expect(strpbrk(buf, ".e"), "%s is not a float", buf);
    }
    lct_json_format_double(0.1, buf);
    cr_expect_str_eq(buf, "0.1");
    lct_json_format_double(1.0, buf);
    cr_expect_str_eq(buf, "1.0");
    lct_json_format_double(NAN, buf);
    cr_expect_str_eq(buf, "null");
    lct_json_format_double(-INFINITY, buf);
    cr_expect_str_eq(buf, "null");

    mpw w;
    mpw_init(&w);
    mpw_array(&w, 3);
    mpw_f32(&w, 0.1f);
    mpw_f64(&w, INFINITY);
    mpw_int(&w, INT64_MIN);
    cr_expect_str_eq(render(&w), "[0.10000000149011612,null,-9223372036854775808]");
    mpw_free(&w);
}

/* The shortest round-trip text, the slow way: what the fast path must
 * reproduce byte for byte. */
static size_t reference_double(double d, char *out)
{
    if (!isfinite(d)) {
        strcpy(out, "null");
        return 4;
    }
    int n = 0;
    for (int prec = 15; prec <= 17; prec++) {
        n = snprintf(out, 40, "%.*g", prec, d);
        if (strtod(out, NULL) == d)
            break;
    }
    if (!strpbrk(out, ".en")) {
        strcpy(out + n, ".0");
        n += 2;
    }
    return (size_t)n;
}

Test(json, doubles_fast_path_matches_the_general_one)
{
    uint64_t x = 88172645463325252u;
    for (int i = 0; i < 1000000; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        double d;
        switch (i % 4) {
        case 0: /* a short decimal: k fraction digits, like trace times */
            d = (double)(x % 100000000000u) / pow(10, (double)(x >> 60));
            break;
        case 1: /* any bit pattern */
            memcpy(&d, &x, sizeof d);
            break;
        case 2: /* around the fixed/exponent borders */
            d = (double)(x % 2000) * pow(10, (double)((int)(x >> 59) - 8));
            break;
        default: /* times since the epoch with microseconds */
            d = 1764600000.0 + (double)(x % 100000000u) / 1e6;
            break;
        }
        if (i % 8 == 5) { /* a running sum, as trace clocks are */
            static double t;
            t += (double)(x % 2000) / 1e6;
            d = t;
        }
        if (i % 16 == 9) { /* powers of two and their neighbours */
            d = ldexp(1.0, (int)(x % 60) - 13);
            if (x & 2)
                d = nextafter(d, 0);
            else if (x & 4)
                d = nextafter(d, 1e300);
        }
        if (x & 1)
            d = -d;
        char got[LCT_DOUBLE_BUFSIZE], want[40];
        size_t n = lct_json_format_double(d, got);
        size_t m = reference_double(d, want);
        cr_assert_eq(n, m, "%.17g: got %s, want %s", d, got, want);
        cr_assert_str_eq(got, want, "%.17g", d);
    }
}

Test(json, strings_escape_per_rfc8259)
{
    mpw w;
    mpw_init(&w);
    mpw_str(&w, "a\"b\\c\n\t\x01\x1f/\xc3\xa9\x7f");
    cr_expect_str_eq(render(&w), "\"a\\\"b\\\\c\\n\\t\\u0001\\u001f/\xc3\xa9\\u007f\"");
    mpw_reset(&w);
    mpw_strn(&w, "ok\xff", 3); /* only possible under LCT_LAZY */
    cr_expect_str_eq(render(&w), "\"ok\\ufffd\"");
    mpw_free(&w);
}

Test(json, bin_is_padded_base64)
{
    mpw w;
    mpw_init(&w);
    mpw_array(&w, 4);
    mpw_bin(&w, "", 0);
    mpw_bin(&w, "f", 1);
    mpw_bin(&w, "fo", 2);
    mpw_bin(&w, "foo", 3);
    cr_expect_str_eq(render(&w), "[\"\",\"Zg==\",\"Zm8=\",\"Zm9v\"]");
    mpw_free(&w);
}

Test(json, keys_that_are_not_str_become_strings)
{
    mpw w;
    mpw_init(&w);
    mpw_map(&w, 3);
    mpw_uint(&w, 7);
    mpw_nil(&w);
    mpw_array(&w, 2);
    mpw_int(&w, -1);
    mpw_str(&w, "a");
    mpw_bool(&w, true);
    mpw_nil(&w);
    mpw_nil(&w);
    cr_expect_str_eq(render(&w),
                     "{\"7\":null,\"[-1,\\\"a\\\"]\":true,\"null\":null}");
    mpw_free(&w);
}

Test(json, repeated_keys_once_first_position_last_value)
{
    mpw w;
    mpw_init(&w);
    mpw_map(&w, 3);
    mpw_str(&w, "a");
    mpw_uint(&w, 1);
    mpw_str(&w, "b");
    mpw_uint(&w, 2);
    mpw_str(&w, "a");
    mpw_uint(&w, 3);
    cr_expect_str_eq(render(&w), "{\"a\":3,\"b\":2}");

    /* A large map (sorted-index path): 40 pairs, key k%20, value i. */
    mpw_reset(&w);
    mpw_map(&w, 40);
    for (int i = 0; i < 40; i++) {
        char k[8];
        snprintf(k, sizeof k, "k%d", i % 20);
        mpw_str(&w, k);
        mpw_uint(&w, (uint64_t)i);
    }
    char want[1024] = "{";
    for (int i = 0; i < 20; i++) {
        char part[32];
        snprintf(part, sizeof part, "%s\"k%d\":%d", i ? "," : "", i, i + 20);
        strcat(want, part);
    }
    strcat(want, "}");
    cr_expect_str_eq(render(&w), want);
    mpw_free(&w);
}

/* Keys Python's dict merges (0 as fixint and uint8; 1, 1.0, float32 1.0,
 * True) are one key; so are keys that print as one JSON string (int 2
 * and str "2"; nil and NaN).  First position, last value, and never a
 * repeated key in the object. */
Test(json, keys_equal_for_python_or_as_text_print_once)
{
    mpw w;
    mpw_init(&w);
    mpw_map(&w, 11);
    mpw_int(&w, 0);          mpw_str(&w, "a");
    mpw_raw(&w, "\xcc\x00", 2); mpw_str(&w, "b");    /* uint8 0 */
    mpw_int(&w, 1);          mpw_str(&w, "c");
    mpw_f64(&w, 1.0);        mpw_str(&w, "d");
    mpw_str(&w, "x");        mpw_str(&w, "keep");
    mpw_f32(&w, 1.0f);       mpw_str(&w, "e");
    mpw_bool(&w, true);      mpw_str(&w, "f");
    mpw_int(&w, 2);          mpw_str(&w, "g");
    mpw_str(&w, "2");        mpw_str(&w, "h");
    mpw_nil(&w);             mpw_str(&w, "i");
    mpw_f64(&w, NAN);        mpw_str(&w, "j");
    cr_expect_str_eq(render(&w), "{\"0\":\"b\",\"1\":\"f\",\"x\":\"keep\","
                                 "\"2\":\"h\",\"null\":\"j\"}");

    /* The same through the large-map path: 20 more distinct str keys. */
    mpw_reset(&w);
    mpw_map(&w, 24);
    mpw_f64(&w, 1.5);  mpw_uint(&w, 1);
    for (int i = 0; i < 20; i++) {
        char k[16];
        snprintf(k, sizeof k, "k%d", i);
        mpw_str(&w, k);
        mpw_uint(&w, (uint64_t)i);
    }
    mpw_f32(&w, 1.5f); mpw_uint(&w, 2);
    mpw_str(&w, "1.5"); mpw_uint(&w, 3);
    mpw_int(&w, -0);   mpw_uint(&w, 4);
    const char *got = render(&w);
    cr_expect(strncmp(got, "{\"1.5\":3,\"k0\":0,", 16) == 0, "%s", got);
    cr_expect(strstr(got, ",\"k19\":19,\"0\":4}") != NULL, "%s", got);
    mpw_free(&w);
}

typedef struct grow {
    char *buf;
    size_t len, cap;
    int calls;
} grow;

static int to_grow(void *ctx, const char *data, size_t len)
{
    grow *g = ctx;
    if (g->len + len + 1 > g->cap) {
        g->cap = (g->len + len + 1) * 2;
        g->buf = realloc(g->buf, g->cap);
    }
    memcpy(g->buf + g->len, data, len);
    g->len += len;
    g->buf[g->len] = '\0';
    g->calls++;
    return 0;
}

static char *render_big(const mpw *w)
{
    grow g = {NULL, 0, 0, 0};
    cr_assert_eq(lct_value_write_json(lct_value_from(w->buf, w->len), to_grow,
                                      &g),
                 LCT_OK);
    return g.buf;
}

/* Maps are printed in one pass and started over when a key repeats, or
 * when what they print outgrows the writer's buffer: nested, at the end,
 * and past 64 KiB, the output is what the two-pass path prints. */
Test(json, maps_started_over_print_the_same)
{
    mpw w;
    mpw_init(&w);
    /* {"a": {"k": 1, "k": 2}, "b": [{"x": 1, "x": 2}], "c": 3} */
    mpw_map(&w, 3);
    mpw_str(&w, "a");
    mpw_map(&w, 2); mpw_str(&w, "k"); mpw_int(&w, 1);
    mpw_str(&w, "k"); mpw_int(&w, 2);
    mpw_str(&w, "b");
    mpw_array(&w, 1);
    mpw_map(&w, 2); mpw_str(&w, "x"); mpw_int(&w, 1);
    mpw_str(&w, "x"); mpw_int(&w, 2);
    mpw_str(&w, "c"); mpw_int(&w, 3);
    cr_expect_str_eq(render(&w), "{\"a\":{\"k\":2},\"b\":[{\"x\":2}],\"c\":3}");

    /* 200,000 bytes of text in a map, then a repeated key after it. */
    static char big[200001];
    memset(big, 'x', 200000);
    mpw_reset(&w);
    mpw_map(&w, 3);
    mpw_str(&w, "s"); mpw_str(&w, big);
    mpw_str(&w, "t"); mpw_map(&w, 2);
    mpw_str(&w, "q"); mpw_int(&w, 1); mpw_str(&w, "q"); mpw_int(&w, 2);
    mpw_str(&w, "s"); mpw_str(&w, "y");
    char *got = render_big(&w);
    cr_expect_str_eq(got, "{\"s\":\"y\",\"t\":{\"q\":2}}");
    free(got);

    /* The same size without a repeat, nested two deep. */
    mpw_reset(&w);
    mpw_map(&w, 1);
    mpw_str(&w, "o");
    mpw_map(&w, 2);
    mpw_str(&w, "s"); mpw_str(&w, big);
    mpw_str(&w, "n"); mpw_int(&w, 7);
    got = render_big(&w);
    size_t len = strlen(got);
    cr_expect_eq(len, 200000 + strlen("{\"o\":{\"s\":\"\",\"n\":7}}"));
    cr_expect(strncmp(got, "{\"o\":{\"s\":\"xxx", 12) == 0, "%.20s", got);
    cr_expect_str_eq(got + len - 11, "xx\",\"n\":7}}");
    free(got);
    mpw_free(&w);
}

static const char *render_opts(const mpw *w, unsigned flags)
{
    static sink s;
    memset(&s, 0, sizeof s);
    cr_assert_eq(lct_value_write_json_opts(lct_value_from(w->buf, w->len),
                                           flags, to_sink, &s),
                 LCT_OK);
    return s.buf;
}

/* Codec wrappers printed as their payload at every depth, wrappers in
 * either key order; bin as hex. */
Test(json, options_unwrap_and_hex)
{
    mpw w;
    mpw_init(&w);
    /* {"keys": {"__t__":"tuple","v":[{"v":{"h":bin 0a ff},"__t__":"K"}]},
     *  "plain": {"a": 1}} */
    mpw_map(&w, 2);
    mpw_str(&w, "keys");
    mpw_map(&w, 2);
    mpw_str(&w, "__t__"); mpw_str(&w, "tuple");
    mpw_str(&w, "v");
    mpw_array(&w, 1);
    mpw_map(&w, 2);
    mpw_str(&w, "v");
    mpw_map(&w, 1); mpw_str(&w, "h"); mpw_bin(&w, "\x0a\xff", 2);
    mpw_str(&w, "__t__"); mpw_str(&w, "K");
    mpw_str(&w, "plain");
    mpw_map(&w, 1); mpw_str(&w, "a"); mpw_int(&w, 1);
    cr_expect_str_eq(render_opts(&w, LCT_JSON_UNWRAP),
                     "{\"keys\":[{\"h\":\"Cv8=\"}],\"plain\":{\"a\":1}}");
    cr_expect_str_eq(render_opts(&w, LCT_JSON_UNWRAP | LCT_JSON_BIN_HEX),
                     "{\"keys\":[{\"h\":\"0aff\"}],\"plain\":{\"a\":1}}");
    cr_expect_str_eq(render_opts(&w, 0), render(&w), "no flags: as before");
    mpw_free(&w);
}

Test(json, timestamps_and_other_ext)
{
    mpw w;
    mpw_init(&w);
    mpw_array(&w, 4);
    mpw_ext(&w, -1, "\x00\x00\x00\x00", 4);
    /* 12 bytes: 123456789 ns, -1 s: just before the epoch. */
    mpw_ext(&w, -1, "\x07\x5b\xcd\x15\xff\xff\xff\xff\xff\xff\xff\xff", 12);
    mpw_ext(&w, -1, "\x00\x00\x00\x00\x65\x00\x00\x00", 8); /* 2023-09-12 */
    mpw_ext(&w, 5, "ab", 2);
    cr_expect_str_eq(render(&w),
                     "[\"1970-01-01T00:00:00Z\","
                     "\"1969-12-31T23:59:59.123456Z\","
                     "\"2023-09-12T06:06:56Z\","
                     "{\"ext\":5,\"data\":\"YWI=\"}]");
    mpw_free(&w);
}

Test(json, records_headers_and_a_failing_sink)
{
    lct_reader *r;
    char path[4096];
    snprintf(path, sizeof path, "%s/events.lct", LCT_FIXTURES_DIR);
    cr_assert_eq(lct_open(path, 0, &r, NULL), LCT_OK);
    static sink s;
    memset(&s, 0, sizeof s);
    cr_assert_eq(lct_header_write_json(lct_reader_header(r), to_sink, &s),
                 LCT_OK);
    cr_expect(strstr(s.buf, "\"level_meta\":{\"instance_id\":\"srv-a\""), "%s",
              s.buf);
    lct_record rec;
    cr_assert_eq(lct_next(r, &rec), 1);
    memset(&s, 0, sizeof s);
    cr_assert_eq(lct_record_write_json(&rec, to_sink, &s), LCT_OK);
    cr_expect(strncmp(s.buf, "{\"offset\":238,\"t_mono\":", 23) == 0, "%s",
              s.buf);
    memset(&s, 0, sizeof s);
    s.fail_after = 1;
    cr_expect_eq(lct_record_write_json(&rec, to_sink, &s), LCT_ERR_SYS);
    cr_expect_eq(lct_value_write_json(lct_value_from("\xc1", 1), to_sink, &s),
                 LCT_ERR_MALFORMED);
    lct_close(r);
}

/*
 * The writer prints the codec's ObjectKey in its usual shape from what it
 * knows of it.  Each value here is printed beside a twin tagged
 * "ObjectKez", which takes the general path: once the tag is put back,
 * the bytes must be the same, with every option, in every context (an
 * array, a map that repeats a key, a map key, past the 64 KiB buffer),
 * and for every cut-short prefix.
 */
typedef struct twin_out {
    int rc;
    char *text;
} twin_out;

static twin_out render_twin(const unsigned char *p, size_t n, unsigned flags)
{
    grow g = {NULL, 0, 0, 0};
    twin_out o;
    o.rc = lct_value_write_json_opts(lct_value_from(p, n), flags, to_grow, &g);
    o.text = g.buf ? g.buf : strdup("");
    for (char *k = o.text; (k = strstr(k, "ObjectKez")) != NULL; k += 9)
        k[8] = 'y';
    return o;
}

static void print_like_the_twin(const mpw *w, const mpw *twin, bool prefixes)
{
    static const unsigned options[] = {0, LCT_JSON_UNWRAP, LCT_JSON_BIN_HEX,
                                       LCT_JSON_UNWRAP | LCT_JSON_BIN_HEX};
    cr_assert_eq(w->len, twin->len);
    for (size_t o = 0; o < sizeof options / sizeof options[0]; o++) {
        for (size_t n = prefixes ? 0 : w->len; n <= w->len; n++) {
            unsigned char *a = malloc(n ? n : 1), *b = malloc(n ? n : 1);
            memcpy(a, w->buf, n);
            memcpy(b, twin->buf, n);
            twin_out x = render_twin(a, n, options[o]);
            twin_out y = render_twin(b, n, options[o]);
            cr_expect_eq(x.rc, y.rc, "options %u, %zu of %zu bytes", options[o],
                         n, w->len);
            cr_expect_str_eq(x.text, y.text, "options %u, %zu of %zu bytes",
                             options[o], n, w->len);
            free(x.text);
            free(y.text);
            free(a);
            free(b);
        }
    }
}

Test(json, objectkey_fast_path_prints_as_the_general_path)
{
    static const mpw_objectkey_shape shapes[] = {
        {"", 4, 32, "Qwen/Qwen3-8B", 3, 0, false},
        {"", 1, 32, "", 0, 0, false},
        {"", 2, 32, "m", 0, 0, false},
        {"", 3, 32, "Qwen/Qwen3-8B", 127, 0, false},
        {"", 5, 32, "with salt", 1, 2, false},
        {"", 4, 32, "quote \" back\\slash \x01 \xc3\xa9", 1, 2, false},
        {"", 4, 32, "a model name of 31 bytes ......", 1, 2, false},
        {"", 4, 32, "a model name of 32 bytes .......", 1, 2, false},
        {"", 5, 32, "meta-llama/Llama-3.1-8B-Instruct", 7, 2, false},
        {"", 4, 32, "a str8 name with \" and \xc3\xa9 and \x02 in it", 1, 2,
         false},
        {"", 4, 31, "short hash", 1, 2, false},
        {"", 4, 33, "long hash", 1, 2, false},
        {"", 4, 32, "wide rank", 128, 2, false},
        {"", 4, 32, "negative rank", -1, 2, false},
        {"", 4, 32, "wide group", 1, 300, false},
        {"", 4, 32, "negative group", 1, -5, false},
        {"", 2, 32, "array payload", 1, 2, true},
    };
    mpw w, twin;
    mpw_init(&w);
    mpw_init(&twin);
    mpw *both[2] = {&w, &twin};
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        mpw_objectkey_shape shape = shapes[s];
        for (int context = 0; context < 7; context++) {
            for (int i = 0; i < 2; i++) {
                shape.tag = i ? "ObjectKez" : "ObjectKey";
                mpw_reset(both[i]);
                /* contexts 4-6: nested around the nesting limit */
                for (int d = 0; context >= 4 && d < LCT_MAX_DEPTH - 7 + context; d++)
                    mpw_array(both[i], 1);
                if (context == 1) { /* in an array, after a str */
                    mpw_array(both[i], 3);
                    mpw_str(both[i], "x");
                } else if (context == 2) { /* a map repeating its key */
                    mpw_map(both[i], 2);
                    mpw_str(both[i], "k");
                    mpw_objectkey(both[i], &shape);
                    mpw_str(both[i], "k");
                } else if (context == 3) { /* a map key */
                    mpw_map(both[i], 1);
                }
                mpw_objectkey(both[i], &shape);
                if (context == 1)
                    mpw_objectkey(both[i], &shape);
                if (context == 3)
                    mpw_int(both[i], 1);
            }
            print_like_the_twin(&w, &twin, context < 2);
        }
    }
    /* Past the writer's 64 KiB buffer, inside a held map. */
    for (int i = 0; i < 2; i++) {
        mpw_reset(both[i]);
        mpw_map(both[i], 1);
        mpw_str(both[i], "keys");
        mpw_array(both[i], 2000);
        for (unsigned k = 0; k < 2000; k++)
            mpw_objectkey(both[i], &(mpw_objectkey_shape){
                                       i ? "ObjectKez" : "ObjectKey",
                                       1 + k % 5, 32, "Qwen/Qwen3-8B",
                                       k % 200, k % 3, false});
    }
    print_like_the_twin(&w, &twin, false);
    mpw_free(&w);
    mpw_free(&twin);
}

/* A map whose one key is a map whose one key is ... `levels` deep, each
 * map's value 1, the innermost key the str "k". */
static void keys_in_keys(mpw *w, unsigned levels)
{
    for (unsigned i = 0; i < levels; i++)
        mpw_map(w, 1);
    mpw_str(w, "k");
    for (unsigned i = 0; i < levels; i++)
        mpw_uint(w, 1);
}

typedef struct counter {
    size_t bytes;
} counter;

static int count_bytes(void *ctx, const char *data, size_t len)
{
    (void)data;
    ((counter *)ctx)->bytes += len;
    return 0;
}

/* Each key inside a key escaped the quotes of the one within it again:
 * 26 levels printed 268 MB from 349 bytes.  Up to the depth limit, output
 * now stays within a constant factor of the input.  (A validated record
 * holds no map as a key, which Python cannot hash; the renderer still
 * meets such values unvalidated, under LCT_LAZY.) */
Test(json, keys_nested_in_keys_print_linear_in_the_input)
{
    for (unsigned levels = 1; levels < LCT_MAX_DEPTH; levels += 17) {
        mpw w;
        mpw_init(&w);
        keys_in_keys(&w, levels);
        lct_value v = lct_value_from(w.buf, w.len);
        size_t size;
        cr_assert_eq(lct_value_validate(v, &size),
                     levels == 1 ? LCT_OK : LCT_ERR_MALFORMED, "levels %u",
                     levels);
        counter c = {0};
        cr_assert_eq(lct_value_write_json(v, count_bytes, &c), LCT_OK);
        cr_expect_leq(c.bytes, 100 * w.len + 100, "%u levels: %zu bytes from %zu",
                      levels, c.bytes, w.len);
        mpw_free(&w);
    }
}

/* Up to LCT_JSON_MAX_KEY_NESTING keys deep a key is its JSON text; the
 * next one in is its msgpack bytes in base64, with nothing to escape. */
Test(json, keys_nested_past_the_limit_print_their_bytes)
{
    cr_assert_eq(LCT_JSON_MAX_KEY_NESTING, 3);
    mpw w;
    mpw_init(&w);
    keys_in_keys(&w, 3);
    cr_expect_str_eq(render(&w),
                     "{\"{\\\"{\\\\\\\"k\\\\\\\":1}\\\":1}\":1}");
    mpw_reset(&w);
    keys_in_keys(&w, 4);
    cr_expect_str_eq(render(&w),
                     "{\"{\\\"{\\\\\\\"{\\\\\\\\\\\\\\\"k\\\\\\\\\\\\\\\":1}"
                     "\\\\\\\":1}\\\":1}\":1}");
    mpw_reset(&w);
    keys_in_keys(&w, 5);
    /* The fourth key in is {"k": 1}: 81 a1 6b 01, "gaFrAQ==". */
    cr_expect_str_eq(render(&w),
                     "{\"{\\\"{\\\\\\\"{\\\\\\\\\\\\\\\"\\\\\\\\\\\\\\\\\\\\\\\\\\"
                     "\\\\\"msgpack:gaFrAQ==\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\"\\\\\\\\\\\\\\\":1}\\\\\\\":1}\\\":1}\":1}");
    mpw_free(&w);
}
