/*
 * fields.c - the general decoder for header and record maps: one map, str
 * keys, a "type" tag that must match if present, required fields of the
 * right msgpack type, last value wins, unknown keys ignored, nothing after
 * the map.  These are the reference decoder's rules (FORMAT.md); the
 * record fast path in record.c falls back to this on any surprise.
 */
#include "base/error_internal.h"
#include "msgpack/fields_internal.h"
#include "msgpack/msgpack_internal.h"
#include "lct_core.h"

#include <stdio.h>
#include <string.h>

static bool key_is(const unsigned char *k, size_t klen, const char *name)
{
    size_t n = strlen(name);
    return klen == n && memcmp(k, name, n) == 0;
}

static const char *kind_name(lct__field_kind kind)
{
    switch (kind) {
    case LCT__FIELD_STR: return "str";
    case LCT__FIELD_INT: return "int";
    case LCT__FIELD_FLOAT: return "float";
    case LCT__FIELD_BIN: return "bin";
    case LCT__FIELD_ARGS: return "map";
    case LCT__FIELD_ANY: return "any";
    }
    return "?";
}

/* Whether a value of msgpack type t may fill a field of this kind. */
static bool kind_accepts(lct__field_kind kind, lct_type t)
{
    switch (kind) {
    case LCT__FIELD_STR: return t == LCT_TYPE_STR;
    case LCT__FIELD_INT: return t == LCT_TYPE_INT;
    case LCT__FIELD_FLOAT:
        return t == LCT_TYPE_FLOAT64 || t == LCT_TYPE_FLOAT32 ||
               t == LCT_TYPE_INT;
    case LCT__FIELD_BIN: return t == LCT_TYPE_BIN;
    case LCT__FIELD_ARGS: return t == LCT_TYPE_MAP;
    case LCT__FIELD_ANY: return true;
    }
    return false;
}

/* Step over a value at p with the walker, naming the field on failure. */
static int walk_field(const unsigned char *p, const unsigned char *end,
                      const lct__field_spec *f, unsigned walk,
                      const unsigned char **after, char *why)
{
    const char *walk_why = "malformed value";
    int rc = lct__mp_walk(p, end, walk, after, &walk_why, NULL);
    if (rc != LCT_OK)
        snprintf(why, LCT__WHY_SIZE, "field `%s`: %s", f->name, walk_why);
    return rc;
}

/* A str or bin field's payload: inside the frame, and UTF-8 for a str. */
static int bytes_field(const unsigned char *p, const unsigned char *end,
                       const lct__field_spec *f, const lct__mp_head *h,
                       const unsigned char **after, char *why)
{
    if (h->n > (size_t)(end - p) - h->head) {
        snprintf(why, LCT__WHY_SIZE,
                 "field `%s`: runs past the end of the frame", f->name);
        return LCT_ERR_MALFORMED;
    }
    if (f->kind == LCT__FIELD_STR && !lct__str_valid(p + h->head, h->n, end)) {
        snprintf(why, LCT__WHY_SIZE, "field `%s`: str is not valid UTF-8",
                 f->name);
        return LCT_ERR_MALFORMED;
    }
    *after = p + h->head + h->n;
    return LCT_OK;
}

/*
 * Check one field value of the given kind at p and find where it ends.
 * last_pair: whether nothing but this value should follow in the map.
 */
static int field_value(const unsigned char *p, const unsigned char *end,
                       const lct__field_spec *f, bool lazy_args,
                       bool last_pair, const unsigned char **after,
                       char *why)
{
    lct__mp_head h;
    if (lct__mp_head_parse(p, end, &h) != LCT_OK) {
        snprintf(why, LCT__WHY_SIZE, "field `%s`: data ends inside a value",
                 f->name);
        return LCT_ERR_MALFORMED;
    }
    if (!kind_accepts(f->kind, h.type)) {
        snprintf(why, LCT__WHY_SIZE, "field `%s`: expected %s, got %s",
                 f->name, kind_name(f->kind), lct_type_name(h.type));
        return LCT_ERR_MALFORMED;
    }
    switch (f->kind) {
    case LCT__FIELD_STR:
    case LCT__FIELD_BIN:
        return bytes_field(p, end, f, &h, after, why);
    case LCT__FIELD_INT:
    case LCT__FIELD_FLOAT:
        *after = p + h.head;
        return LCT_OK;
    case LCT__FIELD_ARGS:
        if (!lazy_args)
            return walk_field(p, end, f,
                              LCT__WALK_VALIDATE | LCT__WALK_STR_KEYS, after,
                              why);
        if (last_pair) { /* lazy, and nothing after it to find */
            *after = end;
            return LCT_OK;
        }
        break; /* lazy, but still has to be stepped over */
    case LCT__FIELD_ANY:
        break;
    }
    return walk_field(p, end, f, LCT__WALK_SKIP, after, why);
}

/* The body must be one map whose pair count its bytes could hold. */
static int body_map(const unsigned char *body, size_t len, lct__mp_head *h,
                    char *why)
{
    const unsigned char *end = body + len;
    if (len == 0) {
        snprintf(why, LCT__WHY_SIZE, "empty frame body");
        return LCT_ERR_MALFORMED;
    }
    if (lct__mp_head_parse(body, end, h) != LCT_OK ||
        h->type != LCT_TYPE_MAP) {
        /* Say what the body is, if it even has a readable first value. */
        snprintf(why, LCT__WHY_SIZE, "frame body is not a map (found %s)",
                 lct__mp_head_parse(body, end, h) == LCT_OK
                     ? lct_type_name(h->type)
                     : "a cut or reserved header");
        return LCT_ERR_MALFORMED;
    }
    if (2 * (size_t)h->n > len - h->head) {
        snprintf(why, LCT__WHY_SIZE, "map claims %u pairs in %zu bytes", h->n,
                 len - h->head);
        return LCT_ERR_MALFORMED;
    }
    return LCT_OK;
}

static int field_key(const unsigned char **p, const unsigned char *end,
                     const unsigned char **key, size_t *klen, char *why);

/* body_map's count check, for a body of which only the first bytes are
 * here: the count against the whole length. */
void lct__fields_doomed_why(const unsigned char *body, size_t kept,
                            uint64_t length, char *why)
{
    lct__mp_head h;
    if (lct__mp_head_parse(body, body + kept, &h) != LCT_OK ||
        h.type != LCT_TYPE_MAP) {
        (void)body_map(body, kept, &h, why); /* "not a map (found ...)" */
        return;
    }
    if (2 * (uint64_t)h.n > length - h.head) {
        snprintf(why, LCT__WHY_SIZE, "map claims %u pairs in %llu bytes",
                 h.n, (unsigned long long)(length - h.head));
        return;
    }
    const unsigned char *p = body + h.head, *key;
    size_t klen;
    if (field_key(&p, body + kept, &key, &klen, why) == LCT_OK)
        snprintf(why, LCT__WHY_SIZE, "malformed frame body");
}

/* A map key at *p: a str inside the frame; *p moves past it. */
static int field_key(const unsigned char **p, const unsigned char *end,
                     const unsigned char **key, size_t *klen, char *why)
{
    lct__mp_head kh;
    if (lct__mp_head_parse(*p, end, &kh) != LCT_OK) {
        snprintf(why, LCT__WHY_SIZE, "frame ends inside a map key");
        return LCT_ERR_MALFORMED;
    }
    if (kh.type != LCT_TYPE_STR) {
        snprintf(why, LCT__WHY_SIZE, "map key is %s, expected str",
                 lct_type_name(kh.type));
        return LCT_ERR_MALFORMED;
    }
    if (kh.n > (size_t)(end - *p) - kh.head) {
        snprintf(why, LCT__WHY_SIZE, "map key runs past the frame");
        return LCT_ERR_MALFORMED;
    }
    *key = *p + kh.head;
    *klen = kh.n;
    *p = *key + kh.n;
    return LCT_OK;
}

/* The "type" field's value must be the str `tag`. */
static int type_tag(const unsigned char *p, const unsigned char *end,
                    const char *tag, const unsigned char **after, char *why)
{
    lct__mp_head th;
    if (lct__mp_head_parse(p, end, &th) != LCT_OK ||
        th.type != LCT_TYPE_STR || th.n > (size_t)(end - p) - th.head ||
        !key_is(p + th.head, th.n, tag)) {
        snprintf(why, LCT__WHY_SIZE, "`type` is not \"%s\"", tag);
        return LCT_ERR_MALFORMED;
    }
    *after = p + th.head + th.n;
    return LCT_OK;
}

/* A key no field is named: ignored, but it must still be well-formed. */
static int unknown_field(const unsigned char *p, const unsigned char *end,
                         const unsigned char *key, size_t klen,
                         const unsigned char **after, char *why)
{
    const char *walk_why = "malformed value";
    int rc = lct__mp_walk(p, end, LCT__WALK_SKIP, after, &walk_why, NULL);
    if (rc != LCT_OK) {
        char shown[64];
        lct__repr_bytes(shown, sizeof shown, key, klen > 32 ? 32 : klen);
        snprintf(why, LCT__WHY_SIZE, "unknown field %s: %s", shown, walk_why);
    }
    return rc;
}

/* After the pairs: nothing left over, and every required field seen. */
static int fields_complete(const unsigned char *p, const unsigned char *end,
                           const lct__field_spec *spec, size_t nspec,
                           const lct_value *values, char *why)
{
    if (p != end) {
        snprintf(why, LCT__WHY_SIZE, "%zu trailing bytes after the map",
                 (size_t)(end - p));
        return LCT_ERR_MALFORMED;
    }
    for (size_t i = 0; i < nspec; i++) {
        if (spec[i].required && !values[i].ptr) {
            snprintf(why, LCT__WHY_SIZE, "missing required field `%s`",
                     spec[i].name);
            return LCT_ERR_MALFORMED;
        }
    }
    return LCT_OK;
}

int lct__fields_decode(const unsigned char *body, size_t len, const char *tag,
                       const lct__field_spec *spec, size_t nspec,
                       bool lazy_args, lct_value *values, char *why)
{
    const unsigned char *p = body, *end = body + len;
    for (size_t i = 0; i < nspec; i++)
        values[i] = (lct_value){NULL, 0};
    lct__mp_head h;
    int rc = body_map(body, len, &h, why);
    if (rc != LCT_OK)
        return rc;
    p += h.head;
    for (uint32_t pair = 0; pair < h.n; pair++) {
        const unsigned char *key, *after;
        size_t klen, i;
        if ((rc = field_key(&p, end, &key, &klen, why)) != LCT_OK)
            return rc;
        for (i = 0; i < nspec && !key_is(key, klen, spec[i].name); i++)
            ;
        if (key_is(key, klen, "type"))
            rc = type_tag(p, end, tag, &after, why);
        else if (i < nspec)
            rc = field_value(p, end, &spec[i], lazy_args, pair + 1 == h.n, &after,
                             why);
        else
            rc = unknown_field(p, end, key, klen, &after, why);
        if (rc != LCT_OK)
            return rc;
        if (i < nspec && !key_is(key, klen, "type"))
            values[i] = (lct_value){p, (size_t)(after - p)};
        p = after;
    }
    return fields_complete(p, end, spec, nspec, values, why);
}
