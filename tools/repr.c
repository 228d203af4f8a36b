/*
 * repr.c - printing a msgpack value as Python prints what msgspec decodes
 * it to: str() at the top (a str as is), repr() inside containers, so
 * `lct info` shows level_meta as `lmcache trace info` does.
 *
 * A str's repr escapes what Python's str.isprintable() calls not
 * printable, from the table unprintable.h (Unicode 14.0, Python 3.11's; a
 * code point assigned in a later Unicode prints escaped here and as is
 * under a later Python).  An ext other than a timestamp prints as
 * msgspec.msgpack.Ext(TYPE, b'...').
 */
#include "tool.h"

#include <inttypes.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "unprintable.h"

static void repr(FILE *f, lct_value v, unsigned depth);

/* Python's quote choice: ' unless the text has ' and no ". */
static char quote_for(const unsigned char *p, size_t n)
{
    bool single = memchr(p, '\'', n) != NULL, dbl = memchr(p, '"', n) != NULL;
    return single && !dbl ? '"' : '\'';
}

/* Whether Python's repr escapes code point c. */
static bool unprintable_at(uint32_t c)
{
    size_t lo = 0, hi = sizeof unprintable / sizeof *unprintable;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (c < unprintable[mid][0])
            hi = mid;
        else if (c > unprintable[mid][1])
            lo = mid + 1;
        else
            return true;
    }
    return false;
}

/* The code point of the UTF-8 sequence at p (n bytes left) and its
 * length, or 0 when it is not one (a str's bytes were checked as UTF-8
 * when read: left as bytes, defensively). */
static size_t utf8_at(const unsigned char *p, size_t n, uint32_t *c)
{
    size_t len = p[0] >= 0xf0 ? 4 : p[0] >= 0xe0 ? 3 : p[0] >= 0xc0 ? 2 : 0;
    if (len == 0 || len > n || p[0] > 0xf4)
        return 0;
    uint32_t v = p[0] & (0x7f >> len);
    for (size_t k = 1; k < len; k++) {
        if ((p[k] & 0xc0) != 0x80)
            return 0;
        v = v << 6 | (p[k] & 0x3f);
    }
    *c = v;
    return len;
}

static void repr_text(FILE *f, const unsigned char *p, size_t n, bool bytes)
{
    char q = quote_for(p, n);
    if (bytes)
        fputc('b', f);
    fputc(q, f);
    for (size_t i = 0; i < n; i++) {
        unsigned c = p[i];
        uint32_t cp;
        size_t len = 0;
        if (!bytes && c >= 0x80 && (len = utf8_at(p + i, n - i, &cp))) {
            if (!unprintable_at(cp))
                fwrite(p + i, 1, len, f);
            else if (cp <= 0xff)
                fprintf(f, "\\x%02" PRIx32, cp);
            else
                fprintf(f, cp <= 0xffff ? "\\u%04" PRIx32 : "\\U%08" PRIx32,
                        cp);
            i += len - 1;
        } else if (c == '\\' || c == (unsigned char)q)
            fprintf(f, "\\%c", c);
        else if (c == '\n')
            fputs("\\n", f);
        else if (c == '\r')
            fputs("\\r", f);
        else if (c == '\t')
            fputs("\\t", f);
        else if (c < 0x20 || c == 0x7f || (bytes && c >= 0x80))
            fprintf(f, "\\x%02x", c);
        else
            fputc((int)c, f);
    }
    fputc(q, f);
}

/* repr(float): the shortest digits that read back, fixed notation for
 * exponents -4..15, else d.ddde+XX. */
static void repr_float(FILE *f, double d)
{
    if (d != d) {
        fputs("nan", f);
        return;
    }
    if (d == 1.0 / 0.0 || d == -1.0 / 0.0) {
        fputs(d < 0 ? "-inf" : "inf", f);
        return;
    }
    char buf[40];
    int prec;
    for (prec = 1; prec < 17; prec++) {
        snprintf(buf, sizeof buf, "%.*e", prec - 1, d);
        if (strtod(buf, NULL) == d)
            break;
    }
    snprintf(buf, sizeof buf, "%.*e", prec - 1, d);
    char *e = strchr(buf, 'e');
    int exp = atoi(e + 1);
    *e = '\0';
    char digits[24];
    size_t nd = 0;
    bool neg = buf[0] == '-';
    for (const char *s = buf + neg; *s; s++)
        if (*s != '.')
            digits[nd++] = *s;
    if (neg)
        fputc('-', f);
    if (exp < -4 || exp >= 16) {
        fputc(digits[0], f);
        if (nd > 1)
            fprintf(f, ".%.*s", (int)nd - 1, digits + 1);
        fprintf(f, "e%c%02d", exp < 0 ? '-' : '+', exp < 0 ? -exp : exp);
    } else if (exp < 0) {
        fputs("0.", f);
        for (int i = 1; i < -exp; i++)
            fputc('0', f);
        fprintf(f, "%.*s", (int)nd, digits);
    } else {
        for (int i = 0; i <= exp; i++)
            fputc((size_t)i < nd ? digits[i] : '0', f);
        fputc('.', f);
        if ((size_t)exp + 1 < nd)
            fprintf(f, "%.*s", (int)(nd - (size_t)exp - 1), digits + exp + 1);
        else
            fputc('0', f);
    }
}

/* A timestamp ext as datetime's repr, through the library's RFC 3339. */
static bool repr_timestamp(FILE *f, lct_value v)
{
    char text[64];
    FILE *m = fmemopen(text, sizeof text, "w");
    if (!m)
        return false;
    lct_value_write_json(v, tool_file_write, m);
    fputc('\0', m);
    fclose(m);
    int y, mo, d, h, mi, s;
    unsigned us = 0;
    if (sscanf(text, "\"%d-%d-%dT%d:%d:%d.%6uZ", &y, &mo, &d, &h, &mi, &s,
               &us) < 6)
        return false;
    fprintf(f, "datetime.datetime(%d, %d, %d, %d, %d", y, mo, d, h, mi);
    if (s || us)
        fprintf(f, ", %d", s);
    if (us)
        fprintf(f, ", %u", us);
    fputs(", tzinfo=datetime.timezone.utc)", f);
    return true;
}

static void repr_container(FILE *f, lct_value v, bool map, unsigned depth)
{
    lct_iter it;
    lct_value a, b;
    if ((map ? lct_map_iter_init(v, &it) : lct_array_iter_init(v, &it)) !=
        LCT_OK)
        return;
    fputc(map ? '{' : '[', f);
    for (uint32_t i = 0; i < it.count; i++) {
        if ((map ? lct_map_iter_next(&it, &a, &b) : lct_array_iter_next(&it, &a)) != 1)
            break;
        if (i)
            fputs(", ", f);
        repr(f, a, depth + 1);
        if (map) {
            fputs(": ", f);
            repr(f, b, depth + 1);
        }
    }
    fputc(map ? '}' : ']', f);
}

static void repr(FILE *f, lct_value v, unsigned depth)
{
    lct_str s;
    lct_bytes bin;
    int64_t i;
    uint64_t u;
    double d;
    bool flag;
    int8_t type;
    if (depth > LCT_MAX_DEPTH)
        return;
    switch (lct_value_type(v)) {
    case LCT_TYPE_NIL: fputs("None", f); return;
    case LCT_TYPE_BOOL:
        lct_value_get_bool(v, &flag);
        fputs(flag ? "True" : "False", f);
        return;
    case LCT_TYPE_INT:
        if (lct_value_get_int64(v, &i) == LCT_OK)
            fprintf(f, "%" PRId64, i);
        else if (lct_value_get_uint64(v, &u) == LCT_OK)
            fprintf(f, "%" PRIu64, u);
        return;
    case LCT_TYPE_FLOAT32:
    case LCT_TYPE_FLOAT64:
        if (lct_value_get_double(v, &d) == LCT_OK)
            repr_float(f, d);
        return;
    case LCT_TYPE_STR:
        if (lct_value_get_str(v, &s) == LCT_OK)
            repr_text(f, (const unsigned char *)s.ptr, s.len, false);
        return;
    case LCT_TYPE_BIN:
        if (lct_value_get_bin(v, &bin) == LCT_OK)
            repr_text(f, bin.ptr, bin.len, true);
        return;
    case LCT_TYPE_ARRAY: repr_container(f, v, false, depth); return;
    case LCT_TYPE_MAP: repr_container(f, v, true, depth); return;
    case LCT_TYPE_EXT:
        if (repr_timestamp(f, v))
            return;
        if (lct_value_get_ext(v, &type, &bin) == LCT_OK) {
            fprintf(f, "msgspec.msgpack.Ext(%d, ", type);
            repr_text(f, bin.ptr, bin.len, true);
            fputc(')', f);
        }
        return;
    case LCT_TYPE_INVALID: return;
    }
}

void tool_put_py_str(FILE *f, lct_value v)
{
    lct_str s;
    if (lct_value_get_str(v, &s) == LCT_OK) {
        tool_put_vis(f, s.ptr, s.len); /* str() of a str: as is */
        return;
    }
    /* A repr has already escaped every control character. */
    repr(f, v, 0);
}
