/*
 * repr.c - printing a msgpack value as Python prints what msgspec decodes
 * it to: str() at the top (a str as is), repr() inside containers, so
 * `lct info` shows level_meta as `lmcache trace info` does.
 *
 * A str's repr escapes what Python's str.isprintable() calls not
 * printable, from the table unprintable.h (Unicode 14.0, Python 3.11's; a
 * code point assigned in a later Unicode prints escaped here and as is
 * under a later Python).  An ext other than a timestamp prints as
 * msgspec.msgpack.Ext(TYPE, b'...'): msgspec's Ext has no repr of its own
 * (no tp_repr in its _core.c), so Python prints <msgspec.msgpack.Ext
 * object at 0x...>, an address no other run repeats.
 */
#include "tool.h"

#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "unprintable.h"

static void repr(FILE *f, lct_value v, bool key, unsigned depth);

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
 * length, or 0 when it is not one (the header's level_meta is stepped
 * over, not checked, when read: such a byte prints escaped, as bytes do,
 * so that a lone 0x9b cannot reach a terminal as its 8-bit CSI). */
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
        else if (c < 0x20 || c == 0x7f || c >= 0x80) /* not UTF-8 here */
            fprintf(f, "\\x%02x", c);
        else
            fputc((int)c, f);
    }
    fputc(q, f);
}

/* Decimal m x 10^(exp - prec + 1), m of prec digits, as text strtod
 * reads: whether it reads back to a (> 0). */
static bool reads_back(uint64_t m, int prec, int exp, double a)
{
    char buf[48];
    snprintf(buf, sizeof buf, "%" PRIu64 "e%d", m, exp - prec + 1);
    return strtod(buf, NULL) == a;
}

/* The prec-digit decimal next to m x 10^(*x - prec + 1), up or down. */
static void next_decimal(uint64_t *m, int *x, int prec, bool up)
{
    uint64_t low = 1; /* 10^(prec - 1), the least m of prec digits */
    for (int k = 1; k < prec; k++)
        low *= 10;
    if (up && *m + 1 == low * 10) { /* 9.99 up: 1.00 a power higher */
        *m = low;
        ++*x;
    } else if (!up && *m == low) { /* 1.00 down: 9.99 a power lower */
        *m = low * 10 - 1;
        --*x;
    } else {
        *m = up ? *m + 1 : *m - 1;
    }
}

/* The shortest digits that read back to a (> 0), the nearest to it among
 * those, as Python's repr finds them (digits[0..*nd), the first digit's
 * power of ten in *exp).  For each count of digits, the decimal nearest
 * a, else the one on a's other side: below a power of two the gap to the
 * next double down is half the gap up, so the nearest decimal may fall
 * outside while the next one up reads back (2^-1017 is
 * 7.120236347223045e-307, not 7.1202363472230444e-307). */
static void shortest_digits(double a, char *digits, size_t *nd, int *exp)
{
    for (int prec = 1; prec <= 17; prec++) {
        char buf[40];
        snprintf(buf, sizeof buf, "%.*e", prec - 1, a);
        char *e = strchr(buf, 'e');
        int x = atoi(e + 1);
        uint64_t m = 0;
        for (const char *c = buf; c < e; c++)
            if (*c != '.')
                m = m * 10 + (uint64_t)(*c - '0');
        double back = strtod(buf, NULL);
        bool ok = back == a;
        if (!ok && prec < 17) {
            uint64_t other = m;
            int ox = x;
            next_decimal(&other, &ox, prec, back < a);
            if (reads_back(other, prec, ox, a)) {
                m = other;
                x = ox;
                ok = true;
            }
        }
        if (ok || prec == 17) {
            char text[24];
            int n = snprintf(text, sizeof text, "%" PRIu64, m);
            while (n > 1 && text[n - 1] == '0')
                n--;
            memcpy(digits, text, (size_t)n);
            *nd = (size_t)n;
            *exp = x;
            return;
        }
    }
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
    bool neg = signbit(d);
    char digits[24] = "0";
    size_t nd = 1;
    int exp = 0;
    if (d != 0)
        shortest_digits(neg ? -d : d, digits, &nd, &exp);
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

/* A timestamp ext as datetime's repr. */
static bool repr_timestamp(FILE *f, lct_value v)
{
    int t[6];
    unsigned us;
    if (!tool_timestamp_fields(v, t, &us))
        return false;
    fprintf(f, "datetime.datetime(%d, %d, %d, %d, %d", t[0], t[1], t[2],
            t[3], t[4]);
    if (t[5] || us)
        fprintf(f, ", %d", t[5]);
    if (us)
        fprintf(f, ", %u", us);
    fputs(", tzinfo=datetime.timezone.utc)", f);
    return true;
}

/* A timestamp ext as datetime's str(): isoformat with a space. */
static bool str_timestamp(FILE *f, lct_value v)
{
    int t[6];
    unsigned us;
    if (!tool_timestamp_fields(v, t, &us))
        return false;
    fprintf(f, "%04d-%02d-%02d %02d:%02d:%02d", t[0], t[1], t[2], t[3], t[4],
            t[5]);
    if (us)
        fprintf(f, ".%06u", us);
    fputs("+00:00", f);
    return true;
}

/* A map as Python's repr of the dict msgspec makes of it: a key equal to
 * an earlier one as Python values is that entry (tool_py_dict). */
static void repr_map(FILE *f, lct_value v, unsigned depth)
{
    lct_iter it;
    if (lct_map_iter_init(v, &it) != LCT_OK)
        return;
    uint32_t n = it.count;
    lct_value *kv = reallocarray(NULL, n ? 2 * (size_t)n : 1, sizeof *kv);
    uint32_t *keep = reallocarray(NULL, n ? n : 1, sizeof *keep);
    uint32_t got = 0;
    while (kv && got < n &&
           lct_map_iter_next(&it, &kv[got], &kv[n + got]) == 1)
        got++;
    bool merged = kv && keep && tool_py_dict(kv, got, keep);
    fputc('{', f);
    for (uint32_t i = 0, printed = 0; kv && i < got; i++) {
        if (merged && keep[i] == UINT32_MAX)
            continue;
        if (printed++)
            fputs(", ", f);
        repr(f, kv[i], true, depth + 1);
        fputs(": ", f);
        repr(f, kv[n + (merged ? keep[i] : i)], false, depth + 1);
    }
    fputc('}', f);
    free(kv);
    free(keep);
}

/* An array as Python's repr of the list msgspec makes of it, or of the
 * tuple when it is a map's key (or inside one): (), (x,), (x, y). */
static void repr_array(FILE *f, lct_value v, bool key, unsigned depth)
{
    lct_iter it;
    lct_value a;
    if (lct_array_iter_init(v, &it) != LCT_OK)
        return;
    fputc(key ? '(' : '[', f);
    for (uint32_t i = 0; i < it.count; i++) {
        if (lct_array_iter_next(&it, &a) != 1)
            break;
        if (i)
            fputs(", ", f);
        repr(f, a, key, depth + 1);
    }
    if (key && it.count == 1)
        fputc(',', f);
    fputc(key ? ')' : ']', f);
}

/* repr() of what msgspec decodes v to; key: v is (inside) a map key. */
static void repr(FILE *f, lct_value v, bool key, unsigned depth)
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
    case LCT_TYPE_ARRAY: repr_array(f, v, key, depth); return;
    case LCT_TYPE_MAP: repr_map(f, v, depth); return;
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
    if (str_timestamp(f, v)) /* str() of a datetime */
        return;
    /* A repr has already escaped every control character. */
    repr(f, v, false, 0);
}
