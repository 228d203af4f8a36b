/*
 * compare.c - value-to-JSON comparison for the fixture tests (compare.h).
 */
#include "compare.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void base64_encode(const unsigned char *p, size_t n, char *out)
{
    static const char a[] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    size_t o = 0, i = 0;
    for (; i + 2 < n; i += 3) {
        unsigned v = (unsigned)p[i] << 16 | (unsigned)p[i + 1] << 8 | p[i + 2];
        out[o++] = a[v >> 18];
        out[o++] = a[(v >> 12) & 63];
        out[o++] = a[(v >> 6) & 63];
        out[o++] = a[v & 63];
    }
    if (n - i == 1) {
        unsigned v = (unsigned)p[i] << 16;
        out[o++] = a[v >> 18];
        out[o++] = a[(v >> 12) & 63];
        out[o++] = '=';
        out[o++] = '=';
    } else if (n - i == 2) {
        unsigned v = (unsigned)p[i] << 16 | (unsigned)p[i + 1] << 8;
        out[o++] = a[v >> 18];
        out[o++] = a[(v >> 12) & 63];
        out[o++] = a[(v >> 6) & 63];
        out[o++] = '=';
    }
    out[o] = '\0';
}

#define FAIL(...)                                                              \
    do {                                                                       \
        snprintf(why, whysz, __VA_ARGS__);                                     \
        return false;                                                          \
    } while (0)

/* A map key as msgspec.json prints it: str as is, int in decimal. */
static bool key_text(lct_value k, char *buf, size_t bufsz, const char **s,
                     size_t *n)
{
    lct_str str;
    int64_t i;
    uint64_t u;
    if (lct_value_get_str(k, &str) == LCT_OK) {
        *s = str.ptr;
        *n = str.len;
        return true;
    }
    if (lct_value_get_int64(k, &i) == LCT_OK)
        snprintf(buf, bufsz, "%" PRId64, i);
    else if (lct_value_get_uint64(k, &u) == LCT_OK)
        snprintf(buf, bufsz, "%" PRIu64, u);
    else
        return false;
    *s = buf;
    *n = strlen(buf);
    return true;
}

bool value_matches_json(lct_value v, const jv *e, char *why, size_t whysz)
{
    lct_type t = lct_value_type(v);
    double d;
    switch (e->t) {
    case J_NULL:
        if (t == LCT_TYPE_NIL)
            return true;
        if ((t == LCT_TYPE_FLOAT64 || t == LCT_TYPE_FLOAT32) &&
            lct_value_get_double(v, &d) == LCT_OK && !isfinite(d))
            return true;
        FAIL("expected null, got %s", lct_type_name(t));
    case J_BOOL: {
        bool b;
        if (lct_value_get_bool(v, &b) != LCT_OK || b != e->b)
            FAIL("expected %s, got %s", e->b ? "true" : "false",
                 lct_type_name(t));
        return true;
    }
    case J_INT: {
        int64_t i;
        uint64_t u;
        if (t != LCT_TYPE_INT)
            FAIL("expected an int, got %s", lct_type_name(t));
        if (e->neg) {
            if (lct_value_get_int64(v, &i) != LCT_OK || i != e->i)
                FAIL("expected %" PRId64, e->i);
        } else if (lct_value_get_uint64(v, &u) != LCT_OK || u != e->u) {
            FAIL("expected %" PRIu64, e->u);
        }
        return true;
    }
    case J_FLOAT:
        if (t != LCT_TYPE_FLOAT64 && t != LCT_TYPE_FLOAT32)
            FAIL("expected a float, got %s", lct_type_name(t));
        lct_value_get_double(v, &d);
        if (d != e->d)
            FAIL("expected %.17g, got %.17g", e->d, d);
        return true;
    case J_STR: {
        lct_str s;
        lct_bytes b;
        if (lct_value_get_str(v, &s) == LCT_OK) {
            if (s.len != e->slen || memcmp(s.ptr, e->s, s.len) != 0)
                FAIL("expected str \"%s\", got \"%.*s\"", e->s, (int)s.len,
                     s.ptr);
            return true;
        }
        if (lct_value_get_bin(v, &b) == LCT_OK) {
            char *b64 = malloc(4 * (b.len / 3 + 1) + 1);
            base64_encode(b.ptr, b.len, b64);
            bool same = strcmp(b64, e->s) == 0;
            free(b64);
            if (!same)
                FAIL("bin does not encode to \"%s\"", e->s);
            return true;
        }
        FAIL("expected str or bin, got %s", lct_type_name(t));
    }
    case J_ARR: {
        lct_iter it;
        lct_value elem;
        if (lct_array_iter_init(v, &it) != LCT_OK)
            FAIL("expected an array, got %s", lct_type_name(t));
        if (it.count != e->n)
            FAIL("expected %zu elements, got %u", e->n, it.count);
        for (size_t i = 0; i < e->n; i++) {
            if (lct_array_iter_next(&it, &elem) != 1)
                FAIL("[%zu]: cannot step", i);
            char inner[400];
            if (!value_matches_json(elem, &e->items[i], inner, sizeof inner))
                FAIL("[%zu]: %s", i, inner);
        }
        return true;
    }
    case J_OBJ: {
        lct_iter it;
        lct_value k, val;
        if (lct_map_iter_init(v, &it) != LCT_OK)
            FAIL("expected a map, got %s", lct_type_name(t));
        /* Distinct keys must match one to one; the last value wins. */
        size_t distinct = 0;
        for (size_t i = 0; i < e->n; i++) {
            lct_value found = {0};
            lct_iter scan = it;
            while (lct_map_iter_next(&scan, &k, &val) == 1) {
                char buf[32];
                const char *ks;
                size_t kn;
                if (key_text(k, buf, sizeof buf, &ks, &kn) &&
                    kn == e->keylens[i] && memcmp(ks, e->keys[i], kn) == 0)
                    found = val;
            }
            if (!found.ptr)
                FAIL("missing key \"%s\"", e->keys[i]);
            char inner[400];
            if (!value_matches_json(found, &e->items[i], inner, sizeof inner))
                FAIL(".%s: %s", e->keys[i], inner);
            distinct++;
        }
        /* Count our distinct keys the slow way: fine for test data. */
        size_t ours = 0;
        lct_iter a = it;
        lct_value ka, va;
        for (uint32_t ia = 0; lct_map_iter_next(&a, &ka, &va) == 1; ia++) {
            lct_iter b = it;
            lct_value kb, vb;
            bool seen = false;
            for (uint32_t ib = 0; ib < ia && lct_map_iter_next(&b, &kb, &vb) == 1;
                 ib++)
                if (kb.len == ka.len && memcmp(kb.ptr, ka.ptr, ka.len) == 0)
                    seen = true;
            ours += !seen;
        }
        if (ours != distinct)
            FAIL("expected %zu keys, got %zu", distinct, ours);
        return true;
    }
    }
    FAIL("unknown JSON type");
}
