/*
 * json.c - the test-side JSON parser (see json.h).  Recursive; fine for
 * the trusted, shallow files it reads.
 */
#include "json.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

typedef struct jp {
    const char *p, *end;
} jp;

static void ws(jp *j)
{
    while (j->p < j->end &&
           (*j->p == ' ' || *j->p == '\n' || *j->p == '\r' || *j->p == '\t'))
        j->p++;
}

static bool lit(jp *j, const char *s)
{
    size_t n = strlen(s);
    if ((size_t)(j->end - j->p) < n || memcmp(j->p, s, n) != 0)
        return false;
    j->p += n;
    return true;
}

static int hex4(const char *p, unsigned *out)
{
    unsigned v = 0;
    for (int i = 0; i < 4; i++) {
        char c = p[i];
        v <<= 4;
        if (c >= '0' && c <= '9')
            v |= (unsigned)(c - '0');
        else if (c >= 'a' && c <= 'f')
            v |= (unsigned)(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F')
            v |= (unsigned)(c - 'A' + 10);
        else
            return -1;
    }
    *out = v;
    return 0;
}

static void put_utf8(char *out, size_t *o, unsigned cp)
{
    if (cp < 0x80) {
        out[(*o)++] = (char)cp;
    } else if (cp < 0x800) {
        out[(*o)++] = (char)(0xc0 | cp >> 6);
        out[(*o)++] = (char)(0x80 | (cp & 0x3f));
    } else if (cp < 0x10000) {
        out[(*o)++] = (char)(0xe0 | cp >> 12);
        out[(*o)++] = (char)(0x80 | ((cp >> 6) & 0x3f));
        out[(*o)++] = (char)(0x80 | (cp & 0x3f));
    } else {
        out[(*o)++] = (char)(0xf0 | cp >> 18);
        out[(*o)++] = (char)(0x80 | ((cp >> 12) & 0x3f));
        out[(*o)++] = (char)(0x80 | ((cp >> 6) & 0x3f));
        out[(*o)++] = (char)(0x80 | (cp & 0x3f));
    }
}

static char *str(jp *j, size_t *len)
{
    if (j->p >= j->end || *j->p != '"')
        return NULL;
    j->p++;
    const char *start = j->p;
    size_t cap = 1;
    while (j->p < j->end && *j->p != '"') {
        if (*j->p == '\\')
            j->p++;
        j->p++;
        cap++;
    }
    if (j->p >= j->end)
        return NULL;
    char *out = malloc(cap * 4 + 1);
    size_t o = 0;
    const char *p = start;
    while (p < j->p) {
        if (*p != '\\') {
            out[o++] = *p++;
            continue;
        }
        p++;
        char c = *p++;
        switch (c) {
        case '"': out[o++] = '"'; break;
        case '\\': out[o++] = '\\'; break;
        case '/': out[o++] = '/'; break;
        case 'b': out[o++] = '\b'; break;
        case 'f': out[o++] = '\f'; break;
        case 'n': out[o++] = '\n'; break;
        case 'r': out[o++] = '\r'; break;
        case 't': out[o++] = '\t'; break;
        case 'u': {
            unsigned cp, lo;
            if (j->p - p < 4 || hex4(p, &cp) != 0)
                goto bad;
            p += 4;
            if (cp >= 0xd800 && cp < 0xdc00 && j->p - p >= 6 && p[0] == '\\' &&
                p[1] == 'u' && hex4(p + 2, &lo) == 0 && lo >= 0xdc00 &&
                lo < 0xe000) {
                cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
                p += 6;
            }
            put_utf8(out, &o, cp);
            break;
        }
        default:
            goto bad;
        }
    }
    j->p++; /* closing quote */
    out[o] = '\0';
    *len = o;
    return out;
bad:
    free(out);
    return NULL;
}

static bool value(jp *j, jv *v);
static void free_inner(jv *v);

static bool number(jp *j, jv *v)
{
    const char *start = j->p;
    bool is_float = false;
    while (j->p < j->end && strchr("+-0123456789.eE", *j->p)) {
        if (*j->p == '.' || *j->p == 'e' || *j->p == 'E')
            is_float = true;
        j->p++;
    }
    size_t n = (size_t)(j->p - start);
    if (n == 0 || n > 63)
        return false;
    char buf[64];
    memcpy(buf, start, n);
    buf[n] = '\0';
    char *endp;
    errno = 0;
    if (is_float) {
        v->t = J_FLOAT;
        v->d = strtod(buf, &endp);
    } else if (buf[0] == '-') {
        v->t = J_INT;
        v->i = strtoll(buf, &endp, 10);
        v->neg = v->i < 0;
        if (!v->neg)
            v->u = 0;
    } else {
        v->t = J_INT;
        v->u = strtoull(buf, &endp, 10);
    }
    return *endp == '\0' && errno == 0;
}

static bool value(jp *j, jv *v)
{
    memset(v, 0, sizeof *v);
    ws(j);
    if (j->p >= j->end)
        return false;
    char c = *j->p;
    if (c == 'n')
        return v->t = J_NULL, lit(j, "null");
    if (c == 't')
        return v->t = J_BOOL, v->b = true, lit(j, "true");
    if (c == 'f')
        return v->t = J_BOOL, v->b = false, lit(j, "false");
    if (c == '"') {
        v->t = J_STR;
        v->s = str(j, &v->slen);
        return v->s != NULL;
    }
    if (c == '[' || c == '{') {
        bool obj = c == '{';
        v->t = obj ? J_OBJ : J_ARR;
        j->p++;
        size_t cap = 0;
        ws(j);
        if (j->p < j->end && *j->p == (obj ? '}' : ']')) {
            j->p++;
            return true;
        }
        for (;;) {
            if (v->n == cap) {
                cap = cap ? cap * 2 : 8;
                v->items = realloc(v->items, cap * sizeof *v->items);
                if (obj) {
                    v->keys = realloc(v->keys, cap * sizeof *v->keys);
                    v->keylens = realloc(v->keylens, cap * sizeof *v->keylens);
                }
            }
            if (obj) {
                ws(j);
                v->keys[v->n] = str(j, &v->keylens[v->n]);
                if (!v->keys[v->n])
                    return false;
                ws(j);
                if (!lit(j, ":")) {
                    free(v->keys[v->n]);
                    return false;
                }
            }
            if (!value(j, &v->items[v->n])) {
                if (obj)
                    free(v->keys[v->n]);
                free_inner(&v->items[v->n]);
                return false;
            }
            v->n++;
            ws(j);
            if (lit(j, ","))
                continue;
            return lit(j, obj ? "}" : "]");
        }
    }
    return number(j, v);
}

static void free_inner(jv *v)
{
    for (size_t i = 0; i < v->n; i++) {
        free_inner(&v->items[i]);
        if (v->keys)
            free(v->keys[i]);
    }
    free(v->items);
    free(v->keys);
    free(v->keylens);
    free(v->s);
}

jv *json_parse(const char *text, size_t len)
{
    jp j = {text, text + len};
    jv *v = calloc(1, sizeof *v);
    if (!value(&j, v)) {
        json_free(v);
        return NULL;
    }
    ws(&j);
    if (j.p != j.end) {
        json_free(v);
        return NULL;
    }
    return v;
}

void json_free(jv *v)
{
    if (!v)
        return;
    free_inner(v);
    free(v);
}

const jv *json_get(const jv *obj, const char *key)
{
    if (!obj || obj->t != J_OBJ)
        return NULL;
    size_t n = strlen(key);
    for (size_t i = 0; i < obj->n; i++)
        if (obj->keylens[i] == n && memcmp(obj->keys[i], key, n) == 0)
            return &obj->items[i];
    return NULL;
}

double json_number(const jv *v)
{
    return v->t == J_FLOAT ? v->d : v->neg ? (double)v->i : (double)v->u;
}
