/*
 * json_value.c - rendering values as JSON in msgspec.json's convention
 * (see lct_value_write_json in lct.h) into a caller's sink through one
 * 64 KiB buffer: strings and their escapes, bin as base64 or hex, ints,
 * ext and timestamps, maps with their keys merged as Python would, and
 * the codec's ObjectKey from a template.  Records and headers are put
 * together from these in json_record.c.
 *
 * Recursion follows the value's nesting, which lct__mp_walk has already
 * bounded by LCT_MAX_DEPTH for every value this is given.
 *
 * Long because one value renderer covers every msgpack type with
 * msgspec's rule for each (merged keys, ext, timestamps, the ObjectKey
 * template), and its parts recurse into each other: as several files
 * they would call each other.
 */
#include "base/grow_internal.h"
#include "render/json_internal.h"
#include "msgpack/msgpack_internal.h"
#include "render/render_internal.h"
#include "lct_json.h"

#include <errno.h>
#include <pthread.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>


static void flush(jw *w)
{
    if (w->hold) {
        w->overflow = true;
        return;
    }
    if (w->len && !w->failed && w->write(w->ctx, w->buf, w->len) != 0)
        w->failed = 1;
    w->len = 0;
}

static inline void put_raw(jw *w, const char *s, size_t n);

/* n bytes of s, which has `block` (a constant) readable: copied as one
 * block of that size where the buffer has room, so the copy is a few
 * moves rather than a call. */
static inline __attribute__((always_inline)) void
put_block(jw *w, const char *s, size_t block, size_t n)
{
    if (block <= sizeof w->buf - w->len) {
        memcpy(w->buf + w->len, s, block);
        w->len += n;
        return;
    }
    put_raw(w, s, n);
}

static inline void put_raw(jw *w, const char *s, size_t n)
{
    if (n <= sizeof w->buf - w->len) { /* the usual case: it fits */
        memcpy(w->buf + w->len, s, n);
        w->len += n;
        return;
    }
    while (n > 0) {
        if (w->len == sizeof w->buf)
            flush(w);
        if (w->overflow)
            return;
        size_t room = sizeof w->buf - w->len;
        size_t take = n < room ? n : room;
        memcpy(w->buf + w->len, s, take);
        w->len += take;
        s += take;
        n -= take;
    }
}

/* Room for n bytes written straight into buf (n far below its size), or
 * NULL when a held map has filled it. */
static char *reserve(jw *w, size_t n)
{
    if (sizeof w->buf - w->len < n)
        flush(w);
    return sizeof w->buf - w->len < n ? NULL : w->buf + w->len;
}

/* Text that may land inside a non-str key's string: escape its quotes. */
static inline void put(jw *w, const char *s, size_t n)
{
    if (w->key_depth == 0) {
        put_raw(w, s, n);
        return;
    }
    size_t start = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '"' || s[i] == '\\') {
            put_raw(w, s + start, i - start);
            put_raw(w, "\\", 1);
            start = i;
        }
    }
    put_raw(w, s + start, n - start);
}

static void puts_(jw *w, const char *s)
{
    put(w, s, strlen(s));
}

/* put_c's rare case, kept out of line: inlined into render_objectkey,
 * GCC 12.2 with the sanitizer flags warned that put_raw could write past
 * buf (-Wstringop-overflow; a false positive, len never exceeds the
 * buffer) and -Werror stopped the build. */
static __attribute__((noinline)) void put_c_slow(jw *w, char c)
{
    put(w, &c, 1);
}

/* One punctuation byte ({}[],:"), the commonest write of all. */
static inline void put_c(jw *w, char c)
{
    if (w->key_depth == 0 && w->len < sizeof w->buf)
        w->buf[w->len++] = c;
    else
        put_c_slow(w, c);
}

static void put_double(jw *w, double d)
{
    char buf[LCT_DOUBLE_BUFSIZE];
    size_t n = lct_json_format_double(d, buf);
    put(w, buf, n);
}

/* What a string byte needs: 0 nothing, 1 an escape, 2 a UTF-8 check. */
static const unsigned char escape_class[256] = {
    [0x00 ... 0x1f] = 1, ['"'] = 1, ['\\'] = 1, [0x7f] = 1,
    [0x80 ... 0xff] = 2};

static void put_escape(jw *w, unsigned c)
{
    static const char hex[] = "0123456789abcdef";
    char e[6] = {'\\', 0, 0, 0, 0, 0};
    size_t n = 2;
    switch (c) {
    case '"': e[1] = '"'; break;
    case '\\': e[1] = '\\'; break;
    case '\n': e[1] = 'n'; break;
    case '\r': e[1] = 'r'; break;
    case '\t': e[1] = 't'; break;
    case '\b': e[1] = 'b'; break;
    case '\f': e[1] = 'f'; break;
    default: /* other controls and DEL, as jq writes them */
        memcpy(e + 1, "u00", 3);
        e[4] = hex[c >> 4];
        e[5] = hex[c & 15];
        n = 6;
    }
    put(w, e, n);
}

/* Whether none of 8 bytes needs attention (below 0x20, '"', '\\', 0x7f
 * and above): the usual case, tested a word at a time. */
static inline bool plain_word(const unsigned char *p)
{
    const uint64_t ones = 0x0101010101010101u, high = ones * 0x80;
    uint64_t x;
    memcpy(&x, p, sizeof x);
    uint64_t q = x ^ (ones * '"'), b = x ^ (ones * '\\'),
             d = x ^ (ones * 0x7f);
    uint64_t hit = ((x - ones * 0x20) & ~x) | ((q - ones) & ~q) |
                   ((b - ones) & ~b) | ((d - ones) & ~d) | x;
    return (hit & high) == 0;
}

/* Any string: runs of plain bytes copied whole, escapes between them.
 * UTF-8 is checked only when a byte >= 0x80 turns up; invalid text
 * (possible only under LCT_LAZY) has every such byte as U+FFFD. */
static void put_string_general(jw *w, const unsigned char *s, size_t n)
{
    put_c(w, '\"');
    int valid = -1; /* unknown until a high byte asks */
    size_t start = 0;
    bool long_text = n >= 32; /* short keys: the table alone is faster */
    for (size_t i = 0; i < n; i++) {
        while (long_text && i + 8 <= n && plain_word(s + i))
            i += 8;
        if (i >= n)
            break;
        unsigned cls = escape_class[s[i]];
        if (cls == 0)
            continue;
        if (cls == 2) {
            if (valid < 0)
                valid = lct__utf8_valid(s, n);
            if (valid)
                continue;
        }
        put(w, (const char *)s + start, i - start);
        if (cls == 2)
            puts_(w, "\\ufffd");
        else
            put_escape(w, s[i]);
        start = i + 1;
    }
    put(w, (const char *)s + start, n - start);
    put_c(w, '\"');
}

/* A JSON string.  Most are short and plain: copied while checked,
 * straight into the buffer, inline; the rest go the general way. */
static inline void put_string(jw *w, const unsigned char *s, size_t n)
{
    if (w->key_depth == 0 && n < 64 && n + 2 <= sizeof w->buf - w->len) {
        char *o = w->buf + w->len + 1;
        size_t i = 0;
        while (i + 8 <= n && plain_word(s + i)) { /* whole words inside s */
            memcpy(o + i, s + i, 8);
            i += 8;
        }
        while (i < n && !escape_class[s[i]]) {
            o[i] = (char)s[i];
            i++;
        }
        if (i == n) {
            o[-1] = '"';
            o[n] = '"';
            w->len += n + 2;
            return;
        }
    }
    put_string_general(w, s, n);
}

/* LCT_JSON_BIN_HEX: bytes as lowercase hex, as LMCache's logs show
 * hashes. */
static void put_hex(jw *w, const unsigned char *p, size_t n)
{
    static const char hex[] = "0123456789abcdef";
    put_c(w, '"');
    for (size_t i = 0; i < n; i++) {
        char two[2] = {hex[p[i] >> 4], hex[p[i] & 15]};
        put(w, two, 2);
    }
    put_c(w, '"');
}

/* Standard base64 with padding, unquoted, straight into the buffer. */
static void put_base64_text(jw *w, const unsigned char *p, size_t n)
{
    const char *a = lct__base64_alphabet;
    const char (*base64_pairs)[2] = lct__base64_pairs();
    size_t i = 0;
    while (i + 2 < n) {
        /* A block of groups at a time, each block one reservation. */
        size_t groups = (n - i) / 3 < 1024 ? (n - i) / 3 : 1024;
        char *q = reserve(w, groups * 4);
        if (!q)
            return; /* overflow: the held map starts over */
        for (size_t g = 0; g < groups; g++, i += 3, q += 4) {
            uint32_t v =
                (uint32_t)p[i] << 16 | (uint32_t)p[i + 1] << 8 | p[i + 2];
            memcpy(q, base64_pairs[v >> 12], 2);
            memcpy(q + 2, base64_pairs[v & 0xfff], 2);
        }
        w->len += groups * 4;
    }
    if (n - i > 0) {
        uint32_t v = (uint32_t)p[i] << 16;
        if (n - i == 2)
            v |= (uint32_t)p[i + 1] << 8;
        char q[4] = {a[v >> 18], a[(v >> 12) & 63],
                     n - i == 2 ? a[(v >> 6) & 63] : '=', '='};
        put(w, q, 4);
    }
}

static void put_base64(jw *w, const unsigned char *p, size_t n)
{
    if (w->flags & LCT_JSON_BIN_HEX) {
        put_hex(w, p, n);
        return;
    }
    put_c(w, '"');
    put_base64_text(w, p, n);
    put_c(w, '"');
}

/* Days since 1970-01-01 to a civil date (proleptic Gregorian). */
static void civil_from_days(int64_t z, int64_t *y, unsigned *m, unsigned *d)
{
    z += 719468;
    int64_t era = (z >= 0 ? z : z - 146096) / 146097;
    unsigned doe = (unsigned)(z - era * 146097);
    unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    unsigned mp = (5 * doy + 2) / 153;
    *d = doy - (153 * mp + 2) / 5 + 1;
    *m = mp < 10 ? mp + 3 : mp - 9;
    *y = (int64_t)yoe + era * 400 + (*m <= 2);
}

/* A timestamp ext payload as RFC 3339; false if it is not one. */
static bool put_timestamp(jw *w, const unsigned char *p, uint32_t n)
{
    int64_t sec;
    uint32_t nsec;
    if (n == 4) {
        sec = lct__be32(p);
        nsec = 0;
    } else if (n == 8) {
        uint64_t v = lct__be64(p);
        nsec = (uint32_t)(v >> 34);
        sec = (int64_t)(v & ((UINT64_C(1) << 34) - 1));
    } else if (n == 12) {
        nsec = lct__be32(p);
        sec = (int64_t)lct__be64(p + 4);
    } else {
        return false;
    }
    if (nsec > 999999999u || sec < INT64_C(-62135596800) ||
        sec > INT64_C(253402300799))
        return false;
    int64_t days = sec >= 0 ? sec / 86400 : -((-sec + 86399) / 86400);
    int64_t rem = sec - days * 86400;
    int64_t y;
    unsigned mo, d;
    civil_from_days(days, &y, &mo, &d);
    char buf[64];
    int len = snprintf(buf, sizeof buf, "\"%04" PRId64 "-%02u-%02uT%02u:%02u:%02u",
                       y, mo, d, (unsigned)(rem / 3600),
                       (unsigned)(rem / 60 % 60), (unsigned)(rem % 60));
    if (nsec / 1000)
        len += snprintf(buf + len, sizeof buf - (size_t)len, ".%06u",
                        nsec / 1000);
    len += snprintf(buf + len, sizeof buf - (size_t)len, "Z\"");
    put(w, buf, (size_t)len);
    return true;
}

/* Render the value at v; *after (may be NULL) gets where it ends. */
static int render(jw *w, lct_value v, unsigned depth,
                  const unsigned char **after);
/* render_map_fast's answer when its output did not fit the buffer. */
#define RETRY 1

/*
 * A map key as Python's dict sees it once msgspec has decoded it: equal
 * keys merge, so 0 as fixint and as uint8 are one key, and so are 1, 1.0,
 * float32 1.0 and True.  Containers and ext keys compare by their bytes
 * (Python would compare the decoded tuples and datetimes).
 */
typedef enum key_class {
    KEY_STR,    /* bytes: the str payload */
    KEY_INT,    /* neg, mag: any integral number, bools included */
    KEY_FLOAT,  /* bits: a non-integral double (-0.0 is KEY_INT 0) */
    KEY_NIL,
    KEY_BIN,    /* bytes: the bin payload */
    KEY_OTHER,  /* bytes: the whole encoding */
    KEY_UNIQUE  /* NaN: equal to nothing, itself included */
} key_class;

typedef struct key_form {
    key_class cls;
    bool neg;
    uint64_t mag;
    const unsigned char *p;
    size_t n;
} key_form;

static void number_form(double d, key_form *f)
{
    if (d != d) {
        f->cls = KEY_UNIQUE;
        return;
    }
    double m = d < 0 ? -d : d;
    if (m < 0x1p64 && (double)(uint64_t)m == m) {
        f->cls = KEY_INT;
        f->mag = (uint64_t)m;
        f->neg = d < 0 && f->mag != 0;
        return;
    }
    f->cls = KEY_FLOAT;
    memcpy(&f->mag, &d, sizeof d);
}

static key_form key_form_of(lct_value k)
{
    key_form f = {KEY_OTHER, false, 0, k.ptr, k.len};
    lct_str s;
    lct_bytes b;
    int64_t i;
    uint64_t u;
    double d;
    bool flag;
    switch (lct_value_type(k)) {
    case LCT_TYPE_STR:
        if (lct_value_get_str(k, &s) == LCT_OK) {
            f.cls = KEY_STR;
            f.p = (const unsigned char *)s.ptr;
            f.n = s.len;
        }
        break;
    case LCT_TYPE_BIN:
        if (lct_value_get_bin(k, &b) == LCT_OK) {
            f.cls = KEY_BIN;
            f.p = b.ptr;
            f.n = b.len;
        }
        break;
    case LCT_TYPE_NIL:
        f.cls = KEY_NIL;
        break;
    case LCT_TYPE_BOOL:
        if (lct_value_get_bool(k, &flag) == LCT_OK) {
            f.cls = KEY_INT;
            f.mag = flag;
        }
        break;
    case LCT_TYPE_INT:
        if (lct_value_get_int64(k, &i) == LCT_OK) {
            f.cls = KEY_INT;
            f.neg = i < 0;
            f.mag = i < 0 ? (uint64_t)0 - (uint64_t)i : (uint64_t)i;
        } else if (lct_value_get_uint64(k, &u) == LCT_OK) {
            f.cls = KEY_INT;
            f.mag = u;
        }
        break;
    case LCT_TYPE_FLOAT32:
    case LCT_TYPE_FLOAT64:
        if (lct_value_get_double(k, &d) == LCT_OK)
            number_form(d, &f);
        break;
    default:
        break;
    }
    return f;
}

/* Order keys by form; 0 means Python would merge them. */
static int key_form_cmp(const key_form *a, const key_form *b)
{
    if (a->cls != b->cls)
        return a->cls < b->cls ? -1 : 1;
    switch (a->cls) {
    case KEY_INT:
        if (a->neg != b->neg)
            return a->neg ? -1 : 1;
        if (a->mag != b->mag)
            return (a->mag < b->mag) != a->neg ? -1 : 1;
        return 0;
    case KEY_FLOAT:
        return (a->mag > b->mag) - (a->mag < b->mag);
    case KEY_NIL:
        return 0;
    case KEY_UNIQUE:
        return 1;
    default: {
        int c = memcmp(a->p, b->p, a->n < b->n ? a->n : b->n);
        if (c)
            return c;
        return (a->n > b->n) - (a->n < b->n);
    }
    }
}

static bool same_key(lct_value a, lct_value b)
{
    key_form fa = key_form_of(a), fb = key_form_of(b);
    return key_form_cmp(&fa, &fb) == 0;
}

typedef struct pair {
    lct_value key, val;
    lct_str text;  /* the key's payload, when every key is a str */
    uint32_t pos;  /* original position in the map */
    uint32_t last; /* large maps: position whose value to print, or none */
} pair;

static int pair_cmp(const void *x, const void *y)
{
    const pair *a = x, *b = y;
    key_form fa = key_form_of(a->key), fb = key_form_of(b->key);
    int c = fa.cls == KEY_UNIQUE && fb.cls == KEY_UNIQUE
                ? 0
                : key_form_cmp(&fa, &fb);
    if (c)
        return c;
    return (a->pos > b->pos) - (a->pos < b->pos);
}

static int render_key(jw *w, lct_value k, unsigned depth)
{
    lct_str s;
    if (lct_value_get_str(k, &s) == LCT_OK) {
        put_string(w, (const unsigned char *)s.ptr, s.len);
        return LCT_OK;
    }
    /* Not a str: its JSON text, as a string. */
    put_c(w, '\"');
    w->key_depth++;
    int rc = render(w, k, depth + 1, NULL);
    w->key_depth--;
    put_c(w, '\"');
    return rc;
}

/*
 * Which value each printed key takes: keep[i] is the position whose value
 * key i prints with, or UINT32_MAX when an earlier pair has the same key.
 * Small maps compare pairs directly; large ones sort a copy, so a hostile
 * map of a million keys costs n log n, not n^2.
 */
#define SMALL_MAP 16

static int dedupe(pair *pairs, uint32_t n)
{
    if (n <= SMALL_MAP) { /* str keys: equal exactly when their text is */
        for (uint32_t i = 0; i < n; i++) {
            pairs[i].last = i;
            for (uint32_t j = 0; j < i; j++)
                if (pairs[j].last != UINT32_MAX &&
                    pairs[j].text.len == pairs[i].text.len &&
                    memcmp(pairs[j].text.ptr, pairs[i].text.ptr,
                           pairs[i].text.len) == 0) {
                    pairs[j].last = i;
                    pairs[i].last = UINT32_MAX;
                    break;
                }
        }
        return LCT_OK;
    }
    pair *sorted = reallocarray(NULL, n, sizeof *sorted);
    if (!sorted)
        return LCT_ERR_NOMEM;
    memcpy(sorted, pairs, (size_t)n * sizeof *pairs);
    qsort(sorted, n, sizeof *sorted, pair_cmp);
    for (uint32_t i = 0; i < n; i++)
        pairs[i].last = UINT32_MAX;
    for (uint32_t run = 0; run < n;) {
        uint32_t end = run + 1;
        while (end < n && same_key(sorted[run].key, sorted[end].key))
            end++;
        pairs[sorted[run].pos].last = sorted[end - 1].pos;
        run = end;
    }
    free(sorted);
    return LCT_OK;
}

/*
 * Maps with a key that is not a str.  Two keys are one JSON key when
 * Python would merge them (1, 1.0, True) or when they print as the same
 * JSON string (int 1 and str "1"; nil and NaN both "null"), and that is
 * transitive: classes are found with union-find over two sorted orders,
 * n log n however hostile the map.  Each class prints once, at its first
 * position, with its last value.
 */
typedef struct key_text {
    uint32_t pos;
    const unsigned char *p;
    size_t n;
} key_text;

static int text_cmp(const void *x, const void *y)
{
    const key_text *a = x, *b = y;
    int c = memcmp(a->p, b->p, a->n < b->n ? a->n : b->n);
    if (c)
        return c;
    return (a->n > b->n) - (a->n < b->n);
}

static uint32_t uf_find(uint32_t *parent, uint32_t i)
{
    while (parent[i] != i) {
        parent[i] = parent[parent[i]];
        i = parent[i];
    }
    return i;
}

static void uf_join(uint32_t *parent, uint32_t a, uint32_t b)
{
    a = uf_find(parent, a);
    b = uf_find(parent, b);
    if (a != b) /* the smaller position stays the root: the first one */
        parent[a > b ? a : b] = a < b ? a : b;
}

static int finish(jw *w, int rc);
static void jw_init(jw *w, lct_write_fn write, void *ctx);

/* A non-str key too deep in other keys for its JSON text: the JSON
 * string "msgpack:BASE64" of its bytes, whose escaping cannot grow. */
static void put_key_bytes(jw *w, lct_value key)
{
    put_raw(w, "\"msgpack:", 9);
    put_base64_text(w, key.ptr, key.len);
    put_c(w, '"');
}

/* What each non-str key prints as, in one buffer (offsets, then views).
 * One writer (on the heap: it is 64 KiB, and keys nest) renders them all,
 * one key level deeper than the map's own. */
static int key_texts(const jw *parent, const pair *pairs, uint32_t n,
                     key_text *texts, lct__grow *buf)
{
    size_t *at = reallocarray(NULL, n, sizeof *at);
    jw *kw = malloc(sizeof *kw);
    if (!at || !kw) {
        free(at);
        free(kw);
        return LCT_ERR_NOMEM;
    }
    jw_init(kw, lct__grow_write, buf);
    kw->key_nest = parent->key_nest + 1;
    int rc = LCT_OK;
    for (uint32_t i = 0; i < n && rc == LCT_OK; i++) {
        lct_str s;
        at[i] = buf->len;
        texts[i].pos = i;
        if (lct_value_get_str(pairs[i].key, &s) == LCT_OK) {
            texts[i].p = (const unsigned char *)s.ptr;
            texts[i].n = s.len;
            at[i] = SIZE_MAX;
            continue;
        }
        if (kw->key_nest > LCT_JSON_MAX_KEY_NESTING)
            put_key_bytes(kw, pairs[i].key);
        else
            rc = render(kw, pairs[i].key, 0, NULL);
        rc = finish(kw, rc);
        texts[i].n = buf->len - at[i];
    }
    for (uint32_t i = 0; i < n && rc == LCT_OK; i++)
        if (at[i] != SIZE_MAX)
            texts[i].p = (const unsigned char *)buf->ptr + at[i];
    free(at);
    free(kw);
    return rc == LCT_ERR_SYS ? LCT_ERR_NOMEM : rc;
}

/* by_pos receives each key's text in map order (views into buf, or into
 * the map for str keys), so the keys print from it: rendering a key
 * twice would double the work at every level of keys nested in keys. */
static int dedupe_mixed(const jw *w, pair *pairs, uint32_t n,
                        key_text *by_pos, lct__grow *buf)
{
    uint32_t *parent = reallocarray(NULL, n, sizeof *parent);
    pair *sorted = reallocarray(NULL, n, sizeof *sorted);
    key_text *texts = reallocarray(NULL, n, sizeof *texts);
    int rc = parent && sorted && texts ? LCT_OK : LCT_ERR_NOMEM;
    if (rc == LCT_OK)
        rc = key_texts(w, pairs, n, by_pos, buf);
    if (rc == LCT_OK) {
        memcpy(texts, by_pos, (size_t)n * sizeof *texts);
        for (uint32_t i = 0; i < n; i++)
            parent[i] = i;
        memcpy(sorted, pairs, (size_t)n * sizeof *pairs);
        qsort(sorted, n, sizeof *sorted, pair_cmp);
        for (uint32_t i = 1; i < n; i++)
            if (same_key(sorted[i - 1].key, sorted[i].key))
                uf_join(parent, sorted[i - 1].pos, sorted[i].pos);
        qsort(texts, n, sizeof *texts, text_cmp);
        for (uint32_t i = 1; i < n; i++)
            if (text_cmp(&texts[i - 1], &texts[i]) == 0)
                uf_join(parent, texts[i - 1].pos, texts[i].pos);
        for (uint32_t i = 0; i < n; i++)
            pairs[i].last = UINT32_MAX;
        for (uint32_t i = 0; i < n; i++) /* later positions overwrite */
            pairs[uf_find(parent, i)].last = i;
    }
    free(parent);
    free(sorted);
    free(texts);
    return rc;
}

/* A key whose JSON text is known: as a string, inner quotes escaped. */
static void put_key_text(jw *w, const key_text *t)
{
    put_c(w, '\"');
    w->key_depth++;
    put(w, (const char *)t->p, t->n);
    w->key_depth--;
    put_c(w, '\"');
}

/* The general case: every pair found first (stepping over values), keys
 * deduplicated, then printed.  *after gets the map's end. */
static int render_map(jw *w, lct_iter it, unsigned depth,
                      const unsigned char **after)
{
    uint32_t n = it.count;
    pair small[SMALL_MAP];
    pair *pairs = small;
    if (n > SMALL_MAP) {
        pairs = reallocarray(NULL, n, sizeof *pairs);
        if (!pairs)
            return LCT_ERR_NOMEM;
    }
    int rc = LCT_OK;
    for (uint32_t i = 0; i < n && rc == LCT_OK; i++) {
        pairs[i].pos = i;
        int step = lct_map_iter_next(&it, &pairs[i].key, &pairs[i].val);
        rc = step == 1 ? LCT_OK : (step < 0 ? step : LCT_ERR_MALFORMED);
    }
    *after = it.cur;
    bool all_str = true;
    for (uint32_t i = 0; i < n && rc == LCT_OK && all_str; i++)
        all_str = lct_value_get_str(pairs[i].key, &pairs[i].text) == LCT_OK;
    key_text *texts = NULL;
    lct__grow buf = {NULL, 0, 0};
    if (rc == LCT_OK && all_str) {
        rc = dedupe(pairs, n);
    } else if (rc == LCT_OK) {
        texts = reallocarray(NULL, n, sizeof *texts);
        rc = texts ? dedupe_mixed(w, pairs, n, texts, &buf) : LCT_ERR_NOMEM;
    }
    if (rc == LCT_OK) {
        put_c(w, '{');
        bool first = true;
        for (uint32_t i = 0; i < n && rc == LCT_OK; i++) {
            if (pairs[i].last == UINT32_MAX)
                continue;
            if (!first)
                put_c(w, ',');
            first = false;
            if (all_str)
                put_string(w, (const unsigned char *)pairs[i].text.ptr,
                           pairs[i].text.len);
            else if (lct_value_type(pairs[i].key) != LCT_TYPE_STR)
                put_key_text(w, &texts[i]);
            else
                rc = render_key(w, pairs[i].key, depth);
            put_c(w, ':');
            if (rc == LCT_OK)
                rc = render(w, pairs[pairs[i].last].val, depth + 1, NULL);
        }
        put_c(w, '}');
    }
    free(texts);
    free(buf.ptr);
    if (pairs != small)
        free(pairs);
    return rc;
}

static int render_int(jw *w, lct_value v)
{
    char buf[24], *end = buf + sizeof buf;
    int64_t i;
    uint64_t u;
    char *p;
    if (lct_value_get_int64(v, &i) == LCT_OK && i < 0) {
        p = lct__u64_digits((uint64_t)0 - (uint64_t)i, end);
        *--p = '-';
    } else if (lct_value_get_uint64(v, &u) == LCT_OK) {
        p = lct__u64_digits(u, end);
    } else {
        return LCT_ERR_MALFORMED;
    }
    put(w, p, (size_t)(end - p));
    return LCT_OK;
}

/* A timestamp as RFC 3339; any other ext as {"ext": TYPE, "data": B64}. */
static void render_ext(jw *w, const lct__mp_head *h,
                       const unsigned char *payload)
{
    if (h->ext_type == LCT_EXT_TIMESTAMP && put_timestamp(w, payload, h->n))
        return;
    char buf[32];
    int n = snprintf(buf, sizeof buf, "{\"ext\":%d,\"data\":", h->ext_type);
    put(w, buf, (size_t)n);
    put_base64(w, payload, h->n);
    put_c(w, '}');
}

/* Elements one after the other, each starting where the last one ended
 * (no separate pass to find the ends). */
static int render_array(jw *w, const lct__mp_head *h, lct_value v,
                        unsigned depth, const unsigned char **after)
{
    const unsigned char *p = v.ptr + h->head, *end = v.ptr + v.len;
    if (h->n > (size_t)(end - p)) /* every value takes a byte at least */
        return LCT_ERR_MALFORMED;
    put_c(w, '[');
    for (uint32_t i = 0; i < h->n; i++) {
        if (i)
            put_c(w, ',');
        int rc = render(w, (lct_value){p, (size_t)(end - p)}, depth + 1, &p);
        if (rc != LCT_OK)
            return rc;
    }
    put_c(w, ']');
    *after = p;
    return LCT_OK;
}

/*
 * The common case in one pass: a map of at most SMALL_MAP str keys,
 * printed as it is read, keys remembered.  A repeated key (or any other
 * key) means starting over with render_map, so the output since the
 * map's start stays in the buffer until then (hold).  RETRY: it did not
 * fit, and an enclosing held map must start over.
 */
static int render_map_fast(jw *w, const lct__mp_head *h, lct_value v,
                           unsigned depth, const unsigned char **after)
{
    const unsigned char *p = v.ptr + h->head, *end = v.ptr + v.len;
    if (h->n > SMALL_MAP || 2 * (size_t)h->n > (size_t)(end - p))
        return RETRY;
    if (!w->hold && w->len > sizeof w->buf / 2)
        flush(w); /* room for the attempt */
    size_t mark = w->len;
    lct_str keys[SMALL_MAP];
    int rc = LCT_OK;
    w->hold++;
    put_c(w, '{');
    for (uint32_t i = 0; i < h->n && rc == LCT_OK; i++) {
        if (p < end && (*p & 0xe0) == 0xa0 &&
            (size_t)(*p & 0x1f) < (size_t)(end - p)) { /* a fixstr key */
            keys[i] = (lct_str){(const char *)p + 1, *p & 0x1fu};
        } else if (lct_value_get_str((lct_value){p, (size_t)(end - p)},
                                     &keys[i]) != LCT_OK) {
            rc = RETRY; /* not a str, or cut: the general path says */
            break;
        }
        for (uint32_t j = 0; j < i && rc == LCT_OK; j++)
            if (keys[j].len == keys[i].len &&
                memcmp(keys[j].ptr, keys[i].ptr, keys[i].len) == 0)
                rc = RETRY;
        if (rc != LCT_OK)
            break;
        if (i)
            put_c(w, ',');
        put_string(w, (const unsigned char *)keys[i].ptr, keys[i].len);
        put_c(w, ':');
        p = (const unsigned char *)keys[i].ptr + keys[i].len;
        rc = render(w, (lct_value){p, (size_t)(end - p)}, depth + 1, &p);
    }
    put_c(w, '}');
    w->hold--;
    if (rc == LCT_OK && !w->overflow) {
        *after = p;
        return LCT_OK;
    }
    if (rc != LCT_OK && rc != RETRY)
        return rc;
    if (w->overflow && w->hold)
        return RETRY; /* only the outermost held map can start over */
    w->len = mark;
    w->overflow = false;
    return RETRY;
}

/*
 * The codec's ObjectKey (lct__mp_objectkey) in its usual shape: the
 * opening, then only its usual pairs (a str value in a fixstr or str8, a
 * small uint), as many as the payload holds, printed from what is known
 * of them.  ObjectKeys are most of a dump's bytes, and their keys are
 * distinct by construction, so nothing is held for a repeated key.  RETRY
 * for any other shape, before writing anything: the general path prints
 * it, to the same bytes (test_json).
 */
static int render_objectkey(jw *w, lct_value v, unsigned depth,
                            const unsigned char **after)
{
    const lct__mp_unit *unit = &lct__mp_objectkey;
    const unsigned char *p = v.ptr, *end = v.ptr + v.len;
    if (w->key_depth || depth + 2 > LCT_MAX_DEPTH ||
        v.len < LCT__MP_UNIT_OPENING || p[0] != 0x82)
        return RETRY;
    unsigned pairs = lct__mp_unit_pairs(unit, p);
    if (pairs < unit->opening_pairs ||
        pairs - unit->opening_pairs > LCT__MP_UNIT_USUAL)
        return RETRY;
    lct__mp_unit_values u;
    lct__mp_unit_usual_read(unit, p + LCT__MP_UNIT_OPENING, end,
                            pairs - unit->opening_pairs, &u);
    if (u.pairs != pairs - unit->opening_pairs)
        return RETRY; /* a pair in another form, or another pair */
    bool unwrap = (w->flags & LCT_JSON_UNWRAP) != 0;
    if (unwrap)
        put_block(w, unit->json_open_unwrapped, LCT__MP_UNIT_JSON_OPEN_MAX,
                  unit->json_open_unwrapped_len);
    else
        put_block(w, unit->json_open, LCT__MP_UNIT_JSON_OPEN_MAX,
                  unit->json_open_len);
    put_base64(w, p + LCT__MP_UNIT_FREE_AT,
               LCT__MP_UNIT_OPENING - LCT__MP_UNIT_FREE_AT);
    char digits[4], *e = digits + sizeof digits, *d;
    for (unsigned i = 0; i < u.pairs; i++) {
        const lct__mp_unit_pair *k = &unit->usual[i];
        put_block(w, k->json_key, LCT__MP_UNIT_JSON_KEY_MAX,
                  k->json_key_len);
        if (k->kind == LCT__MP_UNIT_SMALL_UINT) {
            d = lct__u64_digits(*u.at[i], e);
            put_raw(w, d, (size_t)(e - d));
        } else {
            put_string(w, u.at[i], u.len[i]);
        }
    }
    put_raw(w, "}}", unwrap ? 1 : 2);
    *after = u.after;
    return LCT_OK;
}

/* LCT_JSON_UNWRAP: a codec wrapper {"__t__": T, "v": V} is printed as V;
 * other maps as usual (the two-pass path, so the map's end is known). */
static int render_unwrapped(jw *w, lct_value v, unsigned depth,
                            const unsigned char **after)
{
    lct_value payload;
    size_t size;
    lct_status rc = lct_value_size(v, &size);
    if (rc != LCT_OK)
        return rc;
    *after = v.ptr + size;
    if (lct_value_codec(v, NULL, &payload))
        return render(w, payload, depth + 1, NULL);
    lct_iter it;
    rc = lct_map_iter_init(v, &it);
    const unsigned char *ignored;
    return rc != LCT_OK ? rc : render_map(w, it, depth, &ignored);
}

static int render(jw *w, lct_value v, unsigned depth,
                  const unsigned char **after)
{
    const unsigned char *ignored;
    if (!after)
        after = &ignored;
    if (depth > LCT_MAX_DEPTH)
        return LCT_ERR_DEPTH;
    /* The commonest values, decoded from their first byte. */
    if (v.ptr && v.len) {
        unsigned b = v.ptr[0];
        if ((b & 0xe0) == 0xa0 && (size_t)(b & 0x1f) < v.len) { /* fixstr */
            put_string(w, v.ptr + 1, b & 0x1f);
            *after = v.ptr + 1 + (b & 0x1f);
            return LCT_OK;
        }
        if (b < 0x80) { /* positive fixint */
            char digits[4], *e = digits + sizeof digits;
            char *d = lct__u64_digits(b, e);
            put(w, d, (size_t)(e - d));
            *after = v.ptr + 1;
            return LCT_OK;
        }
    }
    lct__mp_head h;
    if (!v.ptr || lct__mp_head_parse(v.ptr, v.ptr + v.len, &h) != LCT_OK)
        return LCT_ERR_MALFORMED;
    const unsigned char *payload = v.ptr + h.head;
    if ((h.type == LCT_TYPE_STR || h.type == LCT_TYPE_BIN ||
         h.type == LCT_TYPE_EXT) &&
        h.n > v.len - h.head)
        return LCT_ERR_MALFORMED;
    lct_iter it;
    double d;
    int rc;
    /* Scalars end where their payload does; containers say. */
    *after = payload + (h.type == LCT_TYPE_STR || h.type == LCT_TYPE_BIN ||
                                h.type == LCT_TYPE_EXT
                            ? h.n
                            : 0);
    switch (h.type) {
    case LCT_TYPE_NIL: puts_(w, "null"); return LCT_OK;
    case LCT_TYPE_BOOL:
        puts_(w, v.ptr[0] == 0xc3 ? "true" : "false");
        return LCT_OK;
    case LCT_TYPE_INT: return render_int(w, v);
    case LCT_TYPE_FLOAT32:
    case LCT_TYPE_FLOAT64:
        lct_value_get_double(v, &d);
        put_double(w, d);
        return LCT_OK;
    case LCT_TYPE_STR: put_string(w, payload, h.n); return LCT_OK;
    case LCT_TYPE_BIN: put_base64(w, payload, h.n); return LCT_OK;
    case LCT_TYPE_EXT: render_ext(w, &h, payload); return LCT_OK;
    case LCT_TYPE_ARRAY: return render_array(w, &h, v, depth, after);
    case LCT_TYPE_MAP:
        if (h.n == 2 && render_objectkey(w, v, depth, after) == LCT_OK)
            return LCT_OK;
        if (w->flags & LCT_JSON_UNWRAP)
            return render_unwrapped(w, v, depth, after);
        rc = render_map_fast(w, &h, v, depth, after);
        if (rc != RETRY || w->overflow)
            return rc;
        rc = lct_map_iter_init(v, &it);
        return rc != LCT_OK ? rc : render_map(w, it, depth, after);
    case LCT_TYPE_INVALID: break;
    }
    return LCT_ERR_MALFORMED;
}

static int finish(jw *w, int rc)
{
    flush(w);
    if (w->failed)
        return LCT_ERR_SYS;
    return rc;
}

static void jw_init(jw *w, lct_write_fn write, void *ctx)
{
    w->flags = 0;
    w->write = write;
    w->ctx = ctx;
    w->failed = 0;
    w->key_depth = 0;
    w->key_nest = 0;
    w->hold = 0;
    w->overflow = false;
    w->len = 0;
}

lct_status lct_value_write_json_opts(lct_value v, unsigned flags,
                                     lct_write_fn write, void *ctx)
{
    if (!write)
        return LCT_ERR_INVALID;
    jw w;
    jw_init(&w, write, ctx);
    w.flags = flags;
    return finish(&w, render(&w, v, 0, NULL));
}

lct_status lct_value_write_json(lct_value v, lct_write_fn write, void *ctx)
{
    return lct_value_write_json_opts(v, 0, write, ctx);
}

lct_status lct_json_write_string(const char *s, size_t len, lct_write_fn write,
                          void *ctx)
{
    if (!write || (!s && len))
        return LCT_ERR_INVALID;
    jw w;
    jw_init(&w, write, ctx);
    put_string(&w, (const unsigned char *)s, len);
    return finish(&w, LCT_OK);
}

/* MARK: - for json_record.c */

void lct__jw_begin(jw *w, lct_write_fn write, void *ctx, unsigned flags)
{
    jw_init(w, write, ctx);
    w->flags = flags;
}

void lct__jw_raw(jw *w, const char *s, size_t n)
{
    put(w, s, n);
}

void lct__jw_string(jw *w, lct_str s)
{
    put_string(w, (const unsigned char *)s.ptr, s.len);
}

void lct__jw_double(jw *w, double d)
{
    put_double(w, d);
}

int lct__jw_value(jw *w, lct_value v)
{
    return render(w, v, 0, NULL);
}

lct_status lct__jw_end(jw *w, int rc)
{
    return finish(w, rc);
}
