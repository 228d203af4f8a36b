/*
 * value.c - the public msgpack value views: type, typed reads, container
 * iteration, key lookup and the codec-wrapper test.
 *
 * A value view is {ptr, len}: the value starts at ptr and may use at most
 * len bytes.  Everything here is stateless and reads only inside the view.
 */
#include "msgpack/msgpack_internal.h"
#include "lct_core.h"

#include <stdbool.h>
#include <string.h>

lct_value lct_value_from(const void *data, size_t len)
{
    lct_value v = {data, data ? len : 0};
    return v;
}

static const unsigned char *view_end(lct_value v)
{
    return v.ptr + v.len;
}

lct_type lct_value_type(lct_value v)
{
    lct__mp_head h;
    if (!v.ptr || lct__mp_head_parse(v.ptr, view_end(v), &h) != LCT_OK)
        return LCT_TYPE_INVALID;
    return h.type;
}

const char *lct_type_name(lct_type type)
{
    switch (type) {
    case LCT_TYPE_NIL: return "nil";
    case LCT_TYPE_BOOL: return "bool";
    case LCT_TYPE_INT: return "int";
    case LCT_TYPE_FLOAT32: return "float32";
    case LCT_TYPE_FLOAT64: return "float64";
    case LCT_TYPE_STR: return "str";
    case LCT_TYPE_BIN: return "bin";
    case LCT_TYPE_ARRAY: return "array";
    case LCT_TYPE_MAP: return "map";
    case LCT_TYPE_EXT: return "ext";
    case LCT_TYPE_INVALID: break;
    }
    return "invalid";
}

/* Parse the head and require the payload to fit in the view. */
static int head_of(lct_value v, lct__mp_head *h)
{
    if (!v.ptr || lct__mp_head_parse(v.ptr, view_end(v), h) != LCT_OK)
        return LCT_ERR_MALFORMED;
    if ((h->type == LCT_TYPE_STR || h->type == LCT_TYPE_BIN ||
         h->type == LCT_TYPE_EXT) &&
        h->n > v.len - h->head)
        return LCT_ERR_MALFORMED;
    return LCT_OK;
}

/*
 * An integer as sign and magnitude: negative values in *neg_out,
 * non-negative in *pos_out; returns 1 when negative, 0 when not, or a
 * negative status.
 */
static int read_integer(lct_value v, int64_t *neg_out, uint64_t *pos_out)
{
    lct__mp_head h;
    int rc = head_of(v, &h);
    if (rc != LCT_OK)
        return rc;
    if (h.type != LCT_TYPE_INT)
        return LCT_ERR_TYPE;
    const unsigned char *p = v.ptr;
    int64_t s;
    switch (p[0]) {
    case 0xcc: *pos_out = p[1]; return 0;
    case 0xcd: *pos_out = lct__be16(p + 1); return 0;
    case 0xce: *pos_out = lct__be32(p + 1); return 0;
    case 0xcf: *pos_out = lct__be64(p + 1); return 0;
    case 0xd0: s = (int8_t)p[1]; break;
    case 0xd1: s = (int16_t)lct__be16(p + 1); break;
    case 0xd2: s = (int32_t)lct__be32(p + 1); break;
    case 0xd3: s = (int64_t)lct__be64(p + 1); break;
    default: s = (int8_t)p[0]; break; /* fixints: 0x00-0x7f, 0xe0-0xff */
    }
    if (s < 0) {
        *neg_out = s;
        return 1;
    }
    *pos_out = (uint64_t)s;
    return 0;
}

lct_status lct_value_get_int64(lct_value v, int64_t *out)
{
    int64_t neg;
    uint64_t pos;
    int rc = read_integer(v, &neg, &pos);
    if (rc == 0 && pos > INT64_MAX)
        return LCT_ERR_RANGE;
    if (rc >= 0)
        *out = rc == 1 ? neg : (int64_t)pos;
    return rc < 0 ? rc : LCT_OK;
}

lct_status lct_value_get_uint64(lct_value v, uint64_t *out)
{
    int64_t neg;
    uint64_t pos;
    int rc = read_integer(v, &neg, &pos);
    if (rc == 1)
        return LCT_ERR_RANGE; /* negative */
    if (rc == 0)
        *out = pos;
    return rc < 0 ? rc : LCT_OK;
}

lct_status lct_value_get_double(lct_value v, double *out)
{
    lct__mp_head h;
    int rc = head_of(v, &h);
    if (rc != LCT_OK)
        return rc;
    if (h.type == LCT_TYPE_FLOAT64) {
        *out = lct__bedouble(v.ptr + 1);
        return LCT_OK;
    }
    if (h.type == LCT_TYPE_FLOAT32) {
        uint32_t bits = lct__be32(v.ptr + 1);
        float f;
        memcpy(&f, &bits, 4);
        *out = f;
        return LCT_OK;
    }
    int64_t neg;
    uint64_t pos;
    rc = read_integer(v, &neg, &pos);
    if (rc < 0)
        return rc;
    *out = rc == 1 ? (double)neg : (double)pos;
    return LCT_OK;
}

lct_status lct_value_get_bool(lct_value v, bool *out)
{
    lct_type t = lct_value_type(v);
    if (t == LCT_TYPE_INVALID)
        return LCT_ERR_MALFORMED;
    if (t != LCT_TYPE_BOOL)
        return LCT_ERR_TYPE;
    *out = v.ptr[0] == 0xc3;
    return LCT_OK;
}

bool lct_value_is_nil(lct_value v)
{
    return lct_value_type(v) == LCT_TYPE_NIL;
}

bool lct_str_eq(lct_str s, const char *text)
{
    size_t n = text ? strlen(text) : 0;
    return s.len == n && (n == 0 || memcmp(s.ptr, text, n) == 0);
}

int lct_str_cmp(lct_str a, lct_str b)
{
    size_t n = a.len < b.len ? a.len : b.len;
    int c = n ? memcmp(a.ptr, b.ptr, n) : 0;
    if (c)
        return c;
    return (a.len > b.len) - (a.len < b.len);
}

lct_str lct_str_after_last(lct_str s, char c)
{
    if (!s.ptr)
        return s; /* an empty view may have no buffer: no NULL + 0 */
    size_t i = s.len;
    while (i > 0 && s.ptr[i - 1] != c)
        i--;
    return (lct_str){s.ptr + i, s.len - i};
}

bool lct_str_has_suffix(lct_str s, const char *suffix)
{
    return lct__str_ends_with(s, suffix, suffix ? strlen(suffix) : 0);
}

/* The payload of a str, bin or ext of the wanted type, as a byte view;
 * *out untouched on failure.  ext_type (may be NULL) gets an ext's type. */
static lct_status payload_of(lct_value v, lct_type want, lct_bytes *out,
                             int8_t *ext_type)
{
    lct__mp_head h;
    int rc = head_of(v, &h);
    if (rc != LCT_OK)
        return rc;
    if (h.type != want)
        return LCT_ERR_TYPE;
    out->ptr = v.ptr + h.head;
    out->len = h.n;
    if (ext_type)
        *ext_type = h.ext_type;
    return LCT_OK;
}

lct_status lct_value_get_str(lct_value v, lct_str *out)
{
    lct_bytes b;
    lct_status rc = payload_of(v, LCT_TYPE_STR, &b, NULL);
    if (rc == LCT_OK)
        *out = (lct_str){(const char *)b.ptr, b.len};
    return rc;
}

lct_status lct_value_get_bin(lct_value v, lct_bytes *out)
{
    return payload_of(v, LCT_TYPE_BIN, out, NULL);
}

lct_status lct_value_get_ext(lct_value v, int8_t *type, lct_bytes *data)
{
    return payload_of(v, LCT_TYPE_EXT, data, type);
}

bool lct_value_str_eq(lct_value v, const char *s)
{
    lct_str str;
    size_t n = strlen(s);
    return lct_value_get_str(v, &str) == LCT_OK && str.len == n &&
           memcmp(str.ptr, s, n) == 0;
}

static int walk_size(lct_value v, unsigned mode, size_t *size)
{
    if (!v.ptr)
        return LCT_ERR_MALFORMED;
    const unsigned char *after;
    int rc = lct__mp_walk(v.ptr, view_end(v), mode, &after, NULL, NULL);
    if (rc == LCT_OK && size)
        *size = (size_t)(after - v.ptr);
    return rc;
}

lct_status lct_value_size(lct_value v, size_t *size)
{
    return walk_size(v, LCT__WALK_SKIP, size);
}

lct_status lct_value_validate(lct_value v, size_t *size)
{
    return walk_size(v, LCT__WALK_VALIDATE, size);
}

static int container_begin(lct_value v, lct_type want, lct_iter *it)
{
    if (!it)
        return LCT_ERR_INVALID;
    /* On failure the iterator is an empty one of the kind asked for, so a
     * caller that ignores the status loops zero times, never on garbage. */
    it->cur = it->end = NULL;
    it->count = it->remaining = 0;
    it->is_map = want == LCT_TYPE_MAP;
    lct__mp_head h;
    if (!v.ptr || lct__mp_head_parse(v.ptr, view_end(v), &h) != LCT_OK)
        return LCT_ERR_MALFORMED;
    if (h.type != want)
        return LCT_ERR_TYPE;
    size_t left = v.len - h.head;
    size_t items = want == LCT_TYPE_MAP ? 2 * (size_t)h.n : h.n;
    /* Every value takes at least one byte. */
    if (items > left)
        return LCT_ERR_MALFORMED;
    it->cur = v.ptr + h.head;
    it->end = view_end(v);
    it->count = h.n;
    it->remaining = h.n;
    return LCT_OK;
}

lct_status lct_array_iter_init(lct_value v, lct_iter *it)
{
    return container_begin(v, LCT_TYPE_ARRAY, it);
}

lct_status lct_map_iter_init(lct_value v, lct_iter *it)
{
    return container_begin(v, LCT_TYPE_MAP, it);
}

/* Hand out the value at it->cur with its exact size, and step past it. */
static int take_one(lct_iter *it, lct_value *out)
{
    const unsigned char *after;
    int rc = lct__mp_walk(it->cur, it->end, LCT__WALK_SKIP, &after, NULL,
                          NULL);
    if (rc != LCT_OK)
        return rc;
    out->ptr = it->cur;
    out->len = (size_t)(after - it->cur);
    it->cur = after;
    return LCT_OK;
}

int lct_array_iter_next(lct_iter *it, lct_value *elem)
{
    if (!it || !elem)
        return LCT_ERR_INVALID;
    if (it->is_map)
        return LCT_ERR_TYPE;
    if (it->remaining == 0)
        return 0;
    int rc = take_one(it, elem);
    if (rc != LCT_OK)
        return rc;
    it->remaining--;
    return 1;
}

int lct_map_iter_next(lct_iter *it, lct_value *key, lct_value *val)
{
    if (!it || !key || !val)
        return LCT_ERR_INVALID;
    if (!it->is_map)
        return LCT_ERR_TYPE;
    if (it->remaining == 0)
        return 0;
    int rc = take_one(it, key);
    if (rc == LCT_OK)
        rc = take_one(it, val);
    if (rc != LCT_OK)
        return rc;
    it->remaining--;
    return 1;
}

lct_status lct_map_find(lct_value map, const char *key, lct_value *out)
{
    lct_iter it;
    int rc = lct_map_iter_init(map, &it);
    if (rc != LCT_OK)
        return rc;
    lct_value k, v;
    bool found = false;
    /* Walk every pair: a repeated key's last value wins. */
    while ((rc = lct_map_iter_next(&it, &k, &v)) == 1) {
        if (lct_value_str_eq(k, key)) {
            *out = v;
            found = true;
        }
    }
    if (rc < 0)
        return rc;
    return found ? LCT_OK : LCT_ERR_NOT_FOUND;
}

bool lct_value_codec(lct_value v, lct_str *tag, lct_value *payload)
{
    /* The encoder's form, {"__t__": fixstr, "v": payload}: the payload is
     * the rest of the view, found without stepping over it (it may be a
     * call's whole request).  A view is a whole value, so the rest is
     * exactly the payload. */
    const unsigned char *p = v.ptr;
    if (v.len >= 11 && p[0] == 0x82 && memcmp(p + 1, "\xa5__t__", 6) == 0 &&
        (p[7] & 0xe0) == 0xa0) {
        size_t at = 8 + (p[7] & 0x1fu);
        if (at + 3 <= v.len && p[at] == 0xa1 && p[at + 1] == 'v') {
            if (tag)
                *tag = (lct_str){(const char *)p + 8, p[7] & 0x1fu};
            if (payload)
                *payload = (lct_value){p + at + 2, v.len - at - 2};
            return true;
        }
    }
    lct_iter it;
    if (lct_map_iter_init(v, &it) != LCT_OK || it.count != 2)
        return false;
    lct_value k, val, tag_val = {0}, payload_val = {0};
    while (lct_map_iter_next(&it, &k, &val) == 1) {
        if (lct_value_str_eq(k, "__t__") && !tag_val.ptr)
            tag_val = val;
        else if (lct_value_str_eq(k, "v") && !payload_val.ptr)
            payload_val = val;
        else
            return false;
    }
    lct_str t;
    if (!payload_val.ptr || lct_value_get_str(tag_val, &t) != LCT_OK)
        return false;
    if (tag)
        *tag = t;
    if (payload)
        *payload = payload_val;
    return true;
}
