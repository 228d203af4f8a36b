/*
 * oracle.c - the reference decoder's acceptance rules, written plainly
 * and recursively for tests (see oracle.h).  Nesting is limited the way
 * liblct documents it: at most LCT_MAX_DEPTH non-empty containers open at
 * once inside one field value.
 */
#include "oracle.h"

#include <stdint.h>
#include <string.h>

#include "lct.h"

typedef struct cur {
    const unsigned char *p;
    size_t len, pos;
} cur;

static bool take(cur *c, size_t n, const unsigned char **out)
{
    if (n > c->len - c->pos)
        return false;
    if (out)
        *out = c->p + c->pos;
    c->pos += n;
    return true;
}

static bool uint_be(cur *c, int bytes, uint64_t *v)
{
    const unsigned char *b;
    if (!take(c, (size_t)bytes, &b))
        return false;
    *v = 0;
    for (int i = 0; i < bytes; i++)
        *v = *v << 8 | b[i];
    return true;
}

bool oracle_utf8(const unsigned char *s, size_t n)
{
    size_t i = 0;
    while (i < n) {
        uint32_t cp;
        int extra;
        unsigned c = s[i];
        if (c < 0x80) {
            i++;
            continue;
        } else if ((c & 0xe0) == 0xc0) {
            cp = c & 0x1f;
            extra = 1;
        } else if ((c & 0xf0) == 0xe0) {
            cp = c & 0x0f;
            extra = 2;
        } else if ((c & 0xf8) == 0xf0) {
            cp = c & 0x07;
            extra = 3;
        } else {
            return false;
        }
        if (n - i - 1 < (size_t)extra)
            return false;
        for (int k = 1; k <= extra; k++) {
            if ((s[i + k] & 0xc0) != 0x80)
                return false;
            cp = cp << 6 | (s[i + k] & 0x3f);
        }
        static const uint32_t min[4] = {0, 0x80, 0x800, 0x10000};
        if (cp < min[extra] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
            return false;
        i += (size_t)extra + 1;
    }
    return true;
}

/* What kind of value starts here, and its length or count. */
typedef enum kind { K_BAD, K_NIL, K_BOOL, K_INT, K_FLOAT, K_STR, K_BIN,
                    K_EXT, K_ARRAY, K_MAP } kind;

static kind head(cur *c, uint64_t *n, int *ext_type)
{
    const unsigned char *b;
    if (!take(c, 1, &b))
        return K_BAD;
    unsigned x = *b;
    uint64_t v;
    *n = 0;
    if (x <= 0x7f || x >= 0xe0)
        return K_INT;
    if (x <= 0x8f) { *n = x & 15; return K_MAP; }
    if (x <= 0x9f) { *n = x & 15; return K_ARRAY; }
    if (x <= 0xbf) { *n = x & 31; return K_STR; }
    switch (x) {
    case 0xc0: return K_NIL;
    case 0xc2: case 0xc3: return K_BOOL;
    case 0xc4: return uint_be(c, 1, n) ? K_BIN : K_BAD;
    case 0xc5: return uint_be(c, 2, n) ? K_BIN : K_BAD;
    case 0xc6: return uint_be(c, 4, n) ? K_BIN : K_BAD;
    case 0xc7: case 0xc8: case 0xc9:
        if (!uint_be(c, x == 0xc7 ? 1 : x == 0xc8 ? 2 : 4, n) ||
            !uint_be(c, 1, &v))
            return K_BAD;
        *ext_type = (int8_t)v;
        return K_EXT;
    case 0xca: return take(c, 4, NULL) ? K_FLOAT : K_BAD;
    case 0xcb: return take(c, 8, NULL) ? K_FLOAT : K_BAD;
    case 0xcc: case 0xd0: return take(c, 1, NULL) ? K_INT : K_BAD;
    case 0xcd: case 0xd1: return take(c, 2, NULL) ? K_INT : K_BAD;
    case 0xce: case 0xd2: return take(c, 4, NULL) ? K_INT : K_BAD;
    case 0xcf: case 0xd3: return take(c, 8, NULL) ? K_INT : K_BAD;
    case 0xd4: case 0xd5: case 0xd6: case 0xd7: case 0xd8:
        *n = 1u << (x - 0xd4);
        if (!uint_be(c, 1, &v))
            return K_BAD;
        *ext_type = (int8_t)v;
        return K_EXT;
    case 0xd9: return uint_be(c, 1, n) ? K_STR : K_BAD;
    case 0xda: return uint_be(c, 2, n) ? K_STR : K_BAD;
    case 0xdb: return uint_be(c, 4, n) ? K_STR : K_BAD;
    case 0xdc: return uint_be(c, 2, n) ? K_ARRAY : K_BAD;
    case 0xdd: return uint_be(c, 4, n) ? K_ARRAY : K_BAD;
    case 0xde: return uint_be(c, 2, n) ? K_MAP : K_BAD;
    case 0xdf: return uint_be(c, 4, n) ? K_MAP : K_BAD;
    }
    return K_BAD; /* 0xc1 */
}

static bool timestamp_ok(const unsigned char *p, uint64_t n)
{
    if (n == 4)
        return true;
    if (n == 8) {
        uint64_t v = 0;
        for (int i = 0; i < 8; i++)
            v = v << 8 | p[i];
        return (v >> 34) < 1000000000u;
    }
    if (n == 12) {
        uint64_t ns = 0, s = 0;
        for (int i = 0; i < 4; i++)
            ns = ns << 8 | p[i];
        for (int i = 4; i < 12; i++)
            s = s << 8 | p[i];
        int64_t sec = (int64_t)s;
        return ns < 1000000000u && sec >= -62135596800LL &&
               sec <= 253402300799LL;
    }
    return false;
}

/*
 * One value.  check: validate UTF-8 and timestamps, and build it as
 * Python would (a dict's key must hash: in_key, the value is a map key
 * or inside one, where a map, or an ext Python keeps opaque, is refused;
 * msgspec's Ext defines no hash).  str_keys: this value must be a map
 * with str keys (args).  open: non-empty containers already open around
 * it.
 */
static bool value(cur *c, bool check, bool str_keys, int open, bool in_key)
{
    uint64_t n;
    int ext_type = 0;
    kind k = head(c, &n, &ext_type);
    const unsigned char *b;
    if (str_keys && k != K_MAP)
        return false; /* args must be a map */
    if (check && in_key && (k == K_MAP || (k == K_EXT && ext_type != -1)))
        return false; /* unhashable */
    switch (k) {
    case K_BAD: return false;
    case K_STR:
        return take(c, n, &b) && (!check || oracle_utf8(b, n));
    case K_BIN: return take(c, n, NULL);
    case K_EXT:
        return take(c, n, &b) &&
               (!check || ext_type != -1 || timestamp_ok(b, n));
    case K_ARRAY:
    case K_MAP:
        if (n == 0)
            return true;
        if (open == LCT_MAX_DEPTH)
            return false;
        for (uint64_t i = 0; i < n; i++) {
            if (k == K_MAP) {
                size_t at = c->pos;
                if (str_keys) {
                    uint64_t kn;
                    int et;
                    if (head(c, &kn, &et) != K_STR)
                        return false;
                    c->pos = at;
                }
                if (!value(c, check, false, open + 1, true))
                    return false;
            }
            if (!value(c, check, false, open + 1, in_key))
                return false;
        }
        return true;
    default:
        return true;
    }
}

typedef enum ftype { F_FLOAT, F_INT, F_STR, F_BIN, F_ARGS, F_ANY } ftype;
typedef struct field {
    const char *name;
    ftype type;
    bool required;
    bool seen;
    size_t at; /* last value's position */
} field;

static bool field_value(cur *c, ftype t)
{
    size_t at = c->pos;
    uint64_t n;
    int et = 0;
    kind k = head(c, &n, &et);
    const unsigned char *b;
    switch (t) {
    case F_FLOAT: return k == K_FLOAT || k == K_INT;
    case F_INT: return k == K_INT;
    case F_STR: return k == K_STR && take(c, n, &b) && oracle_utf8(b, n);
    case F_BIN: return k == K_BIN && take(c, n, NULL);
    case F_ARGS: c->pos = at; return value(c, true, true, 0, false);
    case F_ANY: c->pos = at; return value(c, false, false, 0, false);
    }
    return false;
}

/* The struct decoder: one map, str keys, tag, fields, nothing after. */
static bool decode(const unsigned char *body, size_t len, const char *tag,
                   field *fields, size_t nfields)
{
    cur c = {body, len, 0};
    uint64_t pairs;
    int et;
    if (head(&c, &pairs, &et) != K_MAP)
        return false;
    for (uint64_t i = 0; i < pairs; i++) {
        uint64_t kn;
        const unsigned char *key;
        if (head(&c, &kn, &et) != K_STR || !take(&c, kn, &key))
            return false;
        if (kn == 4 && !memcmp(key, "type", 4)) {
            uint64_t tn;
            const unsigned char *tv;
            if (head(&c, &tn, &et) != K_STR || !take(&c, tn, &tv) ||
                tn != strlen(tag) || memcmp(tv, tag, tn))
                return false;
            continue;
        }
        size_t f;
        for (f = 0; f < nfields; f++)
            if (strlen(fields[f].name) == kn && !memcmp(fields[f].name, key, kn))
                break;
        if (f < nfields) {
            fields[f].seen = true;
            fields[f].at = c.pos;
            if (!field_value(&c, fields[f].type))
                return false;
        } else if (!value(&c, false, false, 0, false)) {
            return false;
        }
    }
    if (c.pos != len)
        return false;
    for (size_t f = 0; f < nfields; f++)
        if (fields[f].required && !fields[f].seen)
            return false;
    return true;
}

bool oracle_record_ok(const unsigned char *body, size_t len)
{
    field fields[] = {{"t_mono", F_FLOAT, true, false, 0},
                      {"t_wall", F_FLOAT, true, false, 0},
                      {"qualname", F_STR, true, false, 0},
                      {"args", F_ARGS, true, false, 0}};
    return decode(body, len, "record", fields, 4);
}

static bool int_is(const unsigned char *body, size_t at, long long want)
{
    cur c = {body, SIZE_MAX, at}; /* the value was already checked whole */
    unsigned x = body[at];
    int64_t v;
    uint64_t u = 0;
    if (x <= 0x7f)
        return (long long)x == want;
    if (x >= 0xe0)
        return (long long)(int8_t)x == want;
    c.pos++;
    switch (x) {
    case 0xcc: uint_be(&c, 1, &u); return (long long)u == want;
    case 0xcd: uint_be(&c, 2, &u); return (long long)u == want;
    case 0xce: uint_be(&c, 4, &u); return (long long)u == want;
    case 0xcf: uint_be(&c, 8, &u); return u == (uint64_t)want && want >= 0;
    case 0xd0: uint_be(&c, 1, &u); v = (int8_t)u; return v == want;
    case 0xd1: uint_be(&c, 2, &u); v = (int16_t)u; return v == want;
    case 0xd2: uint_be(&c, 4, &u); v = (int32_t)u; return v == want;
    default: uint_be(&c, 8, &u); v = (int64_t)u; return v == want;
    }
}

int oracle_header(const unsigned char *body, size_t len)
{
    field fields[] = {{"magic", F_BIN, true, false, 0},
                      {"format_version", F_INT, true, false, 0},
                      {"level", F_STR, true, false, 0},
                      {"trace_schema_version", F_INT, true, false, 0},
                      {"t_mono_start", F_FLOAT, true, false, 0},
                      {"t_wall_start", F_FLOAT, true, false, 0},
                      {"sm_config_json", F_STR, true, false, 0},
                      {"sm_config_digest", F_STR, true, false, 0},
                      {"level_meta", F_ANY, false, false, 0}};
    if (!decode(body, len, "header", fields, 9))
        return LCT_ERR_MALFORMED;
    /* magic: a bin of exactly "LMCT" */
    cur c = {body, len, fields[0].at};
    uint64_t n;
    int et;
    const unsigned char *m = NULL;
    head(&c, &n, &et);
    take(&c, n, &m);
    if (n != 4 || !m || memcmp(m, "LMCT", 4))
        return LCT_ERR_MAGIC;
    if (!int_is(body, fields[1].at, 1))
        return LCT_ERR_VERSION;
    if (!int_is(body, fields[3].at, 1) && !int_is(body, fields[3].at, 2))
        return LCT_ERR_SCHEMA;
    return LCT_OK;
}

void oracle_trace(const unsigned char *d, size_t n, uint64_t *recs,
                  oracle_reading *out)
{
    *out = (oracle_reading){0};
    if (n == 0) {
        out->open_rc = LCT_ERR_EMPTY;
        return;
    }
    if (n < 4) {
        out->open_rc = LCT_ERR_TRUNCATED;
        return;
    }
    uint64_t hlen = (uint64_t)d[0] << 24 | d[1] << 16 | d[2] << 8 | d[3];
    if (hlen > n - 4) {
        out->open_rc = LCT_ERR_TRUNCATED;
        return;
    }
    out->open_rc = oracle_header(d + 4, hlen);
    if (out->open_rc != LCT_OK)
        return;
    uint64_t pos = 4 + hlen;
    while (pos < n) {
        if (n - pos < 4) {
            out->truncated = true;
            return;
        }
        uint64_t len = (uint64_t)d[pos] << 24 | d[pos + 1] << 16 |
                       d[pos + 2] << 8 | d[pos + 3];
        if (len > n - pos - 4) {
            out->truncated = true;
            return;
        }
        if (oracle_record_ok(d + pos + 4, len))
            recs[out->records++] = pos;
        else
            out->skipped++;
        pos += 4 + len;
    }
}
