/*
 * pydict.c - what msgspec decodes a msgpack value to, where repr.c
 * prints it as Python does: a timestamp's datetime fields
 * (tool_timestamp_fields), and which pairs of a map are one entry of the
 * Python dict (tool_py_dict): keys equal as
 * Python values are one key (1, 1.0 and True; 0 and -0.0; two encodings
 * of one str; tuples of equal items; two timestamps of one microsecond),
 * the first keeping its place and the last giving the value.
 *
 * Each key is written as a canonical form, equal exactly when Python
 * would call the keys equal, and the forms are sorted: n log n however
 * many keys a hostile map has.
 */
#define _GNU_SOURCE /* qsort_r */
#include "tool.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

bool tool_timestamp_fields(lct_value v, int t[6], unsigned *us)
{
    char text[64];
    FILE *m = fmemopen(text, sizeof text, "w");
    if (!m)
        return false;
    lct_value_write_json(v, tool_file_write, m);
    fputc('\0', m);
    fclose(m);
    *us = 0;
    return sscanf(text, "\"%d-%d-%dT%d:%d:%d.%6uZ", &t[0], &t[1], &t[2],
                  &t[3], &t[4], &t[5], us) >= 6;
}

/* The canonical forms, one after another; failed once memory ran out. */
typedef struct canon {
    tool_buf b;
    bool failed;
} canon;

static void put(canon *c, const void *p, size_t n)
{
    if (!c->failed && tool_buf_write(&c->b, p, n) != 0)
        c->failed = true;
}

static void put_u64(canon *c, char tag, uint64_t u)
{
    unsigned char b[9] = {(unsigned char)tag};
    for (int i = 0; i < 8; i++)
        b[1 + i] = (unsigned char)(u >> (56 - 8 * i));
    put(c, b, sizeof b);
}

/* An integer by its sign and magnitude: '-' or '+' then the magnitude. */
static void put_int(canon *c, bool neg, uint64_t mag)
{
    put_u64(c, neg && mag ? '-' : '+', mag);
}

static void put_bytes(canon *c, char tag, const void *p, size_t n)
{
    put_u64(c, tag, n);
    put(c, p, n);
}

/* A float: as the integer it equals when it is one (1.0 is 1, -0.0 is
 * 0), else by its bits; a NaN equals nothing, not even itself (each is
 * its own object in the dict), so it takes its key's position. */
static void put_float(canon *c, double d, uint32_t pos)
{
    if (d != d) {
        put_u64(c, 'N', pos);
    } else if (d == trunc(d) && fabs(d) < 18446744073709551616.0) {
        put_int(c, d < 0, (uint64_t)fabs(d));
    } else {
        uint64_t bits;
        memcpy(&bits, &d, sizeof bits);
        put_u64(c, 'F', bits);
    }
}

static void put_key(canon *c, lct_value k, uint32_t pos, unsigned depth);

static void put_tuple(canon *c, lct_value k, uint32_t pos, unsigned depth)
{
    lct_iter it;
    lct_value item;
    if (lct_array_iter_init(k, &it) != LCT_OK) {
        put_u64(c, 'U', pos);
        return;
    }
    put_u64(c, 'T', it.count);
    while (lct_array_iter_next(&it, &item) == 1)
        put_key(c, item, pos, depth + 1);
}

static void put_key(canon *c, lct_value k, uint32_t pos, unsigned depth)
{
    lct_str s;
    lct_bytes b;
    int64_t i;
    uint64_t u;
    double d;
    bool flag;
    int t[6];
    unsigned us;
    switch (depth > LCT_MAX_DEPTH ? LCT_TYPE_INVALID : lct_value_type(k)) {
    case LCT_TYPE_NIL: put_u64(c, 'Z', 0); return;
    case LCT_TYPE_BOOL:
        if (lct_value_get_bool(k, &flag) != LCT_OK)
            break;
        put_int(c, false, flag);
        return;
    case LCT_TYPE_INT:
        if (lct_value_get_int64(k, &i) == LCT_OK)
            put_int(c, i < 0, i < 0 ? (uint64_t)0 - (uint64_t)i : (uint64_t)i);
        else if (lct_value_get_uint64(k, &u) == LCT_OK)
            put_int(c, false, u);
        else
            break;
        return;
    case LCT_TYPE_FLOAT32:
    case LCT_TYPE_FLOAT64:
        if (lct_value_get_double(k, &d) != LCT_OK)
            break;
        put_float(c, d, pos);
        return;
    case LCT_TYPE_STR:
        if (lct_value_get_str(k, &s) != LCT_OK)
            break;
        put_bytes(c, 'S', s.ptr, s.len);
        return;
    case LCT_TYPE_BIN:
        if (lct_value_get_bin(k, &b) != LCT_OK)
            break;
        put_bytes(c, 'B', b.ptr, b.len);
        return;
    case LCT_TYPE_ARRAY:
        put_tuple(c, k, pos, depth);
        return;
    case LCT_TYPE_EXT:
        if (!tool_timestamp_fields(k, t, &us))
            break;
        put(c, "D", 1); /* one datetime: the same fields */
        for (int f = 0; f < 6; f++)
            put_int(c, t[f] < 0, t[f] < 0 ? (uint64_t)-(int64_t)t[f]
                                          : (uint64_t)t[f]);
        put_int(c, false, us);
        return;
    default:
        break;
    }
    put_u64(c, 'U', pos); /* unhashable or unreadable: equal to nothing */
}

typedef struct form {
    size_t at, len; /* in the canon buffer */
    uint32_t pos;
} form;

/* The order of two keys' forms in base; 0: Python calls them equal. */
static int form_cmp(const form *a, const form *b, const char *base)
{
    size_t n = a->len < b->len ? a->len : b->len;
    int c = memcmp(base + a->at, base + b->at, n);
    return c ? c : (a->len > b->len) - (a->len < b->len);
}

/* qsort_r's order: by form, equal forms by position. */
static int by_form(const void *x, const void *y, void *base)
{
    const form *a = x, *b = y;
    int c = form_cmp(a, b, base);
    return c ? c : (a->pos > b->pos) - (a->pos < b->pos);
}

bool tool_py_dict(const lct_value *keys, uint32_t n, uint32_t *keep)
{
    canon c = {0};
    form *forms = reallocarray(NULL, n ? n : 1, sizeof *forms);
    bool ok = forms != NULL;
    for (uint32_t i = 0; ok && i < n; i++) {
        forms[i].at = c.b.len;
        forms[i].pos = i;
        put_key(&c, keys[i], i, 0);
        forms[i].len = c.b.len - forms[i].at;
        ok = !c.failed;
    }
    if (ok) {
        qsort_r(forms, n, sizeof *forms, by_form, c.b.buf);
        for (uint32_t i = 0; i < n; i++)
            keep[i] = UINT32_MAX;
        for (uint32_t run = 0; run < n;) {
            uint32_t end = run + 1;
            while (end < n && form_cmp(&forms[run], &forms[end], c.b.buf) == 0)
                end++;
            keep[forms[run].pos] = forms[end - 1].pos;
            run = end;
        }
    }
    free(forms);
    free(c.b.buf);
    return ok;
}
