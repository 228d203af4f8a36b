/*
 * lmcache.c - LMCache's codec types as plain structs of views: ObjectKey,
 * MemoryLayoutDesc (and the bytes it describes), AttnWindowDesc,
 * PrefetchRequestSpec, PrefetchHandle, the newer PrefetchTaskSpec and
 * GroupedObjectKeys, enums, torch.dtype and the list wrappers, each
 * accepting the older forms; the stable key hash; and the iterator over
 * the keys a record carries.  Nothing here allocates.
 *
 * Long because it holds one small accessor per codec type, all sharing
 * the wrapper and field helpers here.
 */
#define _GNU_SOURCE /* memmem */
#include "base/bytes_internal.h"
#include "base/digits_internal.h"
#include "base/error_internal.h"
#include "lmcache/keys_internal.h"
#include "msgpack/msgpack_internal.h"
#include "lct_cache.h"

#include <stddef.h>
#include <stdio.h>
#include <string.h>

/* MARK: - shapes */

static int wrong(lct_error *err, const char *what, const char *expected,
                 lct_value found)
{
    return lct__fail(err, LCT_ERR_TYPE, 0, 0, "%s: expected %s, found %s",
                     what, expected, lct_type_name(lct_value_type(found)));
}

/* The payload of a value wrapped with `tag`, or the value itself when it
 * is not wrapped; a value wrapped with another tag is the wrong type. */
static lct_status unwrap(lct_value v, const char *tag, lct_value *payload,
                         lct_error *err)
{
    lct_str found;
    if (!lct_value_codec(v, &found, payload)) {
        *payload = v;
        return LCT_OK;
    }
    if (lct_str_eq(found, tag))
        return LCT_OK;
    return lct__fail(err, LCT_ERR_TYPE, 0, 0, "expected %s, found %.*s", tag,
                     (int)(found.len > 64 ? 64 : found.len), found.ptr);
}

/* Field `key` of map m: LCT_OK, or LCT_ERR_NOT_FOUND with *out zero. */
static lct_status field(lct_value m, const char *key, lct_value *out)
{
    lct_status st = lct_map_find(m, key, out);
    if (st != LCT_OK)
        *out = (lct_value){0};
    return st == LCT_ERR_NOT_FOUND ? LCT_ERR_NOT_FOUND : st;
}

static lct_status int_field(lct_value m, const char *what, const char *key,
                            bool required, int64_t *out, lct_error *err)
{
    lct_value v;
    lct_status st = field(m, key, &v);
    *out = 0;
    if (st == LCT_ERR_NOT_FOUND && !required)
        return LCT_OK;
    if (st == LCT_ERR_NOT_FOUND)
        return lct__fail(err, LCT_ERR_TYPE, 0, 0, "%s: no field `%s`", what,
                         key);
    if (st != LCT_OK || lct_value_get_int64(v, out) != LCT_OK)
        return wrong(err, what, "an int", v);
    return LCT_OK;
}

static lct_status map_payload(lct_value v, const char *tag, lct_value *m,
                              lct_error *err)
{
    lct_status st = unwrap(v, tag, m, err);
    if (st == LCT_OK && lct_value_type(*m) != LCT_TYPE_MAP)
        return wrong(err, tag, "a map", *m);
    return st;
}

/* MARK: - types */

lct_status lct_list_get(lct_value v, lct_value *array, uint32_t *count,
                        lct_error *err)
{
    lct_str tag;
    lct_value inner = v;
    if (lct_value_codec(v, &tag, &inner) && !lct_str_eq(tag, "tuple") &&
        !lct_str_eq(tag, "set") && !lct_str_eq(tag, "torch.Size") &&
        !lct_str_eq(tag, "list"))
        return lct__fail(err, LCT_ERR_TYPE, 0, 0,
                         "expected a list, tuple, set or torch.Size, found "
                         "%.*s", (int)(tag.len > 64 ? 64 : tag.len), tag.ptr);
    lct_iter it;
    if (lct_array_iter_init(inner, &it) != LCT_OK)
        return wrong(err, "list", "an array", inner);
    *array = inner;
    if (count)
        *count = it.count;
    return LCT_OK;
}

/* ObjectKey's fields, found in one pass over its map (the last of a
 * repeated key wins, as in the reference decoder). */
enum { K_HASH, K_MODEL, K_RANK, K_GROUP, K_SALT, K_COUNT };

static int key_field(lct_value name)
{
    /* Called for every field of every key of a trace: by length first. */
    static const struct {
        const char *text;
        size_t len;
    } names[K_COUNT] = {{"chunk_hash", 10}, {"model_name", 10},
                        {"kv_rank", 7},     {"object_group_id", 15},
                        {"cache_salt", 10}};
    lct_str s;
    if (lct_value_get_str(name, &s) != LCT_OK)
        return -1;
    for (int i = 0; i < K_COUNT; i++)
        if (s.len == names[i].len && memcmp(s.ptr, names[i].text, s.len) == 0)
            return i;
    return -1;
}

static lct_status key_values(const lct_value *f, lct_object_key *out,
                             lct_error *err)
{
    if (!f[K_HASH].ptr || !f[K_MODEL].ptr || !f[K_RANK].ptr)
        return lct__fail(err, LCT_ERR_TYPE, 0, 0,
                         "ObjectKey: needs `chunk_hash`, `model_name` and "
                         "`kv_rank`");
    if (lct_value_get_bin(f[K_HASH], &out->chunk_hash) != LCT_OK)
        return wrong(err, "ObjectKey chunk_hash", "bytes", f[K_HASH]);
    if (lct_value_get_str(f[K_MODEL], &out->model_name) != LCT_OK)
        return wrong(err, "ObjectKey model_name", "a str", f[K_MODEL]);
    if (lct_value_get_int64(f[K_RANK], &out->kv_rank) != LCT_OK)
        return wrong(err, "ObjectKey kv_rank", "an int", f[K_RANK]);
    if (f[K_GROUP].ptr &&
        lct_value_get_int64(f[K_GROUP], &out->object_group_id) != LCT_OK)
        return wrong(err, "ObjectKey object_group_id", "an int", f[K_GROUP]);
    if (f[K_SALT].ptr && !lct_value_is_nil(f[K_SALT]) &&
        lct_value_get_str(f[K_SALT], &out->cache_salt) != LCT_OK)
        return wrong(err, "ObjectKey cache_salt", "a str", f[K_SALT]);
    return LCT_OK;
}

lct_status lct_object_key_get(lct_value v, lct_object_key *out,
                              lct_error *err)
{
    lct_value m, name, value, f[K_COUNT] = {{0}};
    memset(out, 0, sizeof *out);
    out->cache_salt = (lct_str){"", 0};
    lct_status st = map_payload(v, "ObjectKey", &m, err);
    lct_iter it;
    if (st == LCT_OK && (st = lct_map_iter_init(m, &it)) != LCT_OK)
        return lct__fail(err, st, 0, 0, "ObjectKey: not a well-formed map");
    int rc = 0, i;
    while (st == LCT_OK && (rc = lct_map_iter_next(&it, &name, &value)) == 1)
        if ((i = key_field(name)) >= 0)
            f[i] = value;
    if (st != LCT_OK)
        return st;
    if (rc < 0)
        return lct__fail(err, rc, 0, 0, "ObjectKey: not a well-formed map");
    return key_values(f, out, err);
}

lct_status lct_dtype_get(lct_value v, lct_str *name, lct_error *err)
{
    lct_value s;
    lct_status st = unwrap(v, "torch.dtype", &s, err);
    if (st == LCT_OK && lct_value_get_str(s, name) != LCT_OK)
        return wrong(err, "torch.dtype", "a str", s);
    return st;
}

lct_status lct_enum_get(lct_value v, const char *tag, lct_str *name,
                        lct_error *err)
{
    lct_value s;
    lct_status st = unwrap(v, tag, &s, err);
    if (st == LCT_OK && lct_value_get_str(s, name) != LCT_OK)
        return wrong(err, tag, "a member name (str)", s);
    return st;
}

lct_status lct_dtype_size(lct_str dtype, unsigned *size)
{
    static const struct {
        const char *name;
        unsigned size;
    } sizes[] = {{"bfloat16", 2}, {"float16", 2}, {"half", 2},
                 {"float32", 4},  {"float", 4},   {"float64", 8},
                 {"double", 8},   {"int8", 1},    {"uint8", 1},
                 {"bool", 1},     {"int16", 2},   {"short", 2},
                 {"int32", 4},    {"int", 4},     {"int64", 8},
                 {"long", 8}};
    if (dtype.len > 6 && memcmp(dtype.ptr, "torch.", 6) == 0)
        dtype.ptr += 6, dtype.len -= 6;
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++)
        if (lct_str_eq(dtype, sizes[i].name)) {
            *size = sizes[i].size;
            return LCT_OK;
        }
    if (dtype.len > 7 && memcmp(dtype.ptr, "float8_", 7) == 0) {
        *size = 1;
        return LCT_OK;
    }
    return LCT_ERR_TYPE;
}

lct_status lct_layout_desc_get(lct_value v, lct_layout_desc *out,
                               lct_error *err)
{
    lct_value m;
    memset(out, 0, sizeof *out);
    lct_status st = map_payload(v, "MemoryLayoutDesc", &m, err);
    if (st != LCT_OK)
        return st;
    lct_value shapes, dtypes;
    uint32_t nshapes, ndtypes;
    if (field(m, "shapes", &shapes) != LCT_OK ||
        field(m, "dtypes", &dtypes) != LCT_OK)
        return lct__fail(err, LCT_ERR_TYPE, 0, 0,
                         "MemoryLayoutDesc: needs `shapes` and `dtypes`");
    if ((st = lct_list_get(shapes, &out->shapes, &nshapes, err)) != LCT_OK ||
        (st = lct_list_get(dtypes, &out->dtypes, &ndtypes, err)) != LCT_OK)
        return st;
    if (nshapes != ndtypes)
        return lct__fail(err, LCT_ERR_TYPE, 0, 0,
                         "MemoryLayoutDesc: %u shapes but %u dtypes",
                         nshapes, ndtypes);
    out->count = nshapes;
    return LCT_OK;
}

/* Elements of one shape (an int list), into *n. */
static lct_status shape_elements(lct_value shape, uint64_t *n, lct_error *err)
{
    lct_value dims, dim;
    lct_status st = lct_list_get(shape, &dims, NULL, err);
    lct_iter it;
    if (st != LCT_OK || (st = lct_array_iter_init(dims, &it)) != LCT_OK)
        return st;
    *n = 1;
    int rc;
    while ((rc = lct_array_iter_next(&it, &dim)) == 1) {
        uint64_t d;
        if (lct_value_get_uint64(dim, &d) != LCT_OK)
            return wrong(err, "MemoryLayoutDesc shape", "a non-negative int",
                         dim);
        if (d && *n > UINT64_MAX / d)
            return lct__fail(err, LCT_ERR_RANGE, 0, 0,
                             "MemoryLayoutDesc: a shape over 2^64 elements");
        *n *= d;
    }
    return rc == 0 ? LCT_OK : (lct_status)rc;
}

lct_status lct_layout_bytes(const lct_layout_desc *layout, uint64_t *bytes,
                            lct_error *err)
{
    lct_iter shapes, dtypes;
    lct_value shape, dtype;
    *bytes = 0;
    lct_status st = lct_array_iter_init(layout->shapes, &shapes);
    if (st == LCT_OK)
        st = lct_array_iter_init(layout->dtypes, &dtypes);
    if (st != LCT_OK)
        return lct__fail(err, st, 0, 0, "MemoryLayoutDesc: not decoded");
    while (lct_array_iter_next(&shapes, &shape) == 1 &&
           lct_array_iter_next(&dtypes, &dtype) == 1) {
        lct_str name;
        unsigned size;
        uint64_t n;
        if ((st = lct_dtype_get(dtype, &name, err)) != LCT_OK ||
            (st = shape_elements(shape, &n, err)) != LCT_OK)
            return st;
        if (lct_dtype_size(name, &size) != LCT_OK)
            return lct__fail(err, LCT_ERR_TYPE, 0, 0,
                             "MemoryLayoutDesc: unknown dtype '%.*s'",
                             (int)(name.len > 64 ? 64 : name.len), name.ptr);
        if (n > (UINT64_MAX - *bytes) / size)
            return lct__fail(err, LCT_ERR_RANGE, 0, 0,
                             "MemoryLayoutDesc: over 2^64 bytes");
        *bytes += n * size;
    }
    return shapes.remaining || dtypes.remaining
               ? lct__fail(err, LCT_ERR_MALFORMED, 0, 0,
                           "MemoryLayoutDesc: a shape or dtype is malformed")
               : LCT_OK;
}

static bool fields_once(lct_value m, const char *const *names, int n,
                        lct_value *f);

lct_status lct_attn_window_get(lct_value v, lct_attn_window *out,
                               lct_error *err)
{
    static const char *const names[] = {"num_chunks_in_sw", "world_size"};
    lct_value p, f[2];
    memset(out, 0, sizeof *out);
    lct_status st = unwrap(v, "AttnWindowDesc", &p, err);
    if (st != LCT_OK)
        return st;
    if (lct_value_type(p) != LCT_TYPE_MAP) /* the older bare list */
        return lct_list_get(p, &out->num_chunks_in_sw, NULL, err);
    if (!fields_once(p, names, 2, f) || !f[0].ptr)
        return lct__fail(err, LCT_ERR_TYPE, 0, 0,
                         "AttnWindowDesc: no field `num_chunks_in_sw`");
    if ((st = lct_list_get(f[0], &out->num_chunks_in_sw, NULL, err)) != LCT_OK)
        return st;
    if (f[1].ptr && lct_value_get_int64(f[1], &out->world_size) != LCT_OK)
        return wrong(err, "AttnWindowDesc world_size", "an int", f[1]);
    return LCT_OK;
}

/* An optional field that may be nil: *out zero when absent or nil. */
static bool present(lct_value m, const char *key, lct_value *out)
{
    return field(m, key, out) == LCT_OK && !lct_value_is_nil(*out);
}

/* A spec's optional int v (a zero view: absent, 0). */
static lct_status spec_int(lct_value v, const char *what, int64_t *out,
                           lct_error *err)
{
    *out = 0;
    if (v.ptr && lct_value_get_int64(v, out) != LCT_OK)
        return wrong(err, what, "an int", v);
    return LCT_OK;
}

enum {
    S_KEYS, S_READERS, S_EXTRA, S_GROUPS, S_LAYOUT, S_POLICY, S_MODE,
    S_ATTN, S_GEN, S_COUNT
};

static bool read_keys_array(lct_iter *a, lct_key_iter *it, lct_value *v);

/* Which of names[0..n) the map key k is, or -1: the encoder writes
 * names as fixstr, so a look at the length and the bytes first, not
 * lct_value_str_eq's general decode. */
static int name_index(lct_value k, const char *const *names, int n)
{
    const unsigned char *p = k.ptr;
    if (k.len == 0 || (p[0] & 0xe0) != 0xa0) { /* not a fixstr */
        for (int i = 0; i < n; i++)
            if (lct_value_str_eq(k, names[i]))
                return i;
        return -1;
    }
    size_t len = p[0] & 0x1fu;
    for (int i = 0; len + 1 == k.len && i < n; i++)
        if (names[i][0] == (char)p[1] && /* most differ there */
            strncmp(names[i], (const char *)p + 1, len) == 0 &&
            names[i][len] == '\0')
            return i;
    return -1;
}

/* Step over a fixstr, a fixint, nil or a bool at p without a call to
 * the walker (most of a map's keys and many of its values); false for
 * anything else, or a fixstr that runs past end, which the walker then
 * reports. */
static inline bool skip_small(const unsigned char *p, const unsigned char *end,
                              const unsigned char **after)
{
    if (p >= end)
        return false;
    unsigned b = *p;
    if ((b & 0xe0) == 0xa0) {
        size_t n = b & 0x1f;
        if (n >= (size_t)(end - p))
            return false;
        *after = p + 1 + n;
        return true;
    }
    if (b < 0x80 || b >= 0xe0 || b == 0xc0 || b == 0xc2 || b == 0xc3) {
        *after = p + 1;
        return true;
    }
    return false;
}

/* The last few layout_descs this thread sized, by their bytes: a
 * trace's calls share a layout or a few (a fleet's models), and decoding
 * one cost more than walking the call's keys. */
enum { LAYOUT_SLOTS = 4 };
typedef struct layout_slot {
    unsigned char bytes[256];
    size_t len; /* 0: none; else exactly one whole value's bytes */
    uint64_t layout_bytes;
} layout_slot;
static _Thread_local struct {
    layout_slot slot[LAYOUT_SLOTS];
    unsigned next; /* the slot the next one replaces */
} last_layouts;

/* Whether v is exactly the len bytes at known (len 0: nothing known). */
static inline bool same_bytes(lct_value v, const unsigned char *known,
                              size_t len)
{
    return len && v.len == len && memcmp(v.ptr, known, len) == 0;
}

/* Keep v's bytes in buf (cap bytes, *len their count) when they fit and
 * are one whole value, so that bytes beginning with them are that value;
 * else keep what was kept.  Whether v was kept. */
static bool keep_whole(lct_value v, unsigned char *buf, size_t cap,
                       size_t *len)
{
    size_t size;
    if (v.len > cap || lct_value_size(v, &size) != LCT_OK || size != v.len)
        return false;
    memcpy(buf, v.ptr, v.len);
    *len = v.len;
    return true;
}

/* The last few values this thread walked to step over them, by their
 * whole bytes (a spec's attn_desc and group_layout_descs repeat from call
 * to call): the next one found at the start of bytes to step over is
 * that value. */
enum { WALKED_SLOTS = 4, WALKED_MIN = 16 };
static _Thread_local struct {
    struct {
        unsigned char bytes[256];
        size_t len; /* 0: empty */
    } slot[WALKED_SLOTS];
    unsigned next;
} walked;

/* Whether bytes p..end begin with known[0..len), a whole value. */
static inline bool starts_with(const unsigned char *p, const unsigned char *end,
                               const unsigned char *known, size_t len)
{
    return len && len <= (size_t)(end - p) && p[0] == known[0] &&
           memcmp(p, known, len) == 0;
}

/* The layout sized lately that bytes p..end begin with, or NULL. */
static inline const layout_slot *known_layout(const unsigned char *p,
                                              const unsigned char *end)
{
    for (unsigned i = 0; i < LAYOUT_SLOTS; i++)
        if (starts_with(p, end, last_layouts.slot[i].bytes,
                        last_layouts.slot[i].len))
            return &last_layouts.slot[i];
    return NULL;
}

/* Step over the value at p without a walk: a small one, an enum member
 * in the encoder's form ({"__t__": fixstr, "v": small}: a call's policy
 * and mode), a layout sized lately or a value walked lately (a msgpack
 * value ends where its own bytes say, so bytes that begin with a whole
 * value's are that value); false for anything else. */
static inline __attribute__((always_inline)) bool
skip_known(const unsigned char *p, const unsigned char *end,
           const unsigned char **after)
{
    if (skip_small(p, end, after))
        return true;
    const layout_slot *known = known_layout(p, end);
    if (known) {
        *after = p + known->len;
        return true;
    }
    if (end - p >= 11 && p[0] == 0x82 && memcmp(p + 1, "\xa5__t__", 6) == 0 &&
        (p[7] & 0xe0) == 0xa0) {
        size_t at = 8 + (p[7] & 0x1fu);
        if (at + 2 < (size_t)(end - p) && p[at] == 0xa1 && p[at + 1] == 'v' &&
            skip_small(p + at + 2, end, after))
            return true;
    }
    for (unsigned i = 0; i < WALKED_SLOTS; i++)
        if (starts_with(p, end, walked.slot[i].bytes, walked.slot[i].len)) {
            *after = p + walked.slot[i].len;
            return true;
        }
    return false;
}

/* Step over the value at p: skip_known, else as the walker steps,
 * remembering it; false when it is malformed. */
static inline bool skip_value(const unsigned char *p, const unsigned char *end,
                              const unsigned char **after)
{
    if (skip_known(p, end, after))
        return true;
    if (lct__mp_walk(p, end, LCT__WALK_SKIP, after, NULL, NULL) != LCT_OK)
        return false;
    size_t len = (size_t)(*after - p);
    if (len >= WALKED_MIN && len <= sizeof walked.slot[0].bytes) {
        unsigned i = walked.next++ % WALKED_SLOTS;
        memcpy(walked.slot[i].bytes, p, len);
        walked.slot[i].len = len;
    }
    return true;
}

/* Whether the value at p is a map: what a codec value is, the spec
 * scan's first test. */
static inline bool is_map(lct_value v)
{
    unsigned b = v.len ? *v.ptr : 0;
    return (b & 0xf0) == 0x80 || b == 0xde || b == 0xdf;
}

/* A call argument that is a spec, as the args scan met it. */
typedef struct spec_seen {
    lct_value v; /* the first PrefetchRequestSpec or PrefetchTaskSpec */
    /* A request spec in the encoder's form is read where it is met: its
     * fields (spec_fields) in f, and whether its first keys were read
     * into the iterator.  Reading its fields is what finds its end, so
     * its bytes are not walked once more to step over it. */
    bool parsed, keys_read;
    lct_value f[S_COUNT];
} spec_seen;

static bool spec_read_at(lct_iter *a, lct_key_iter *it, spec_seen *spec,
                         const unsigned char **after);

/* What the scan read of a `keys` list is not this call's keys after
 * all (another `keys` came, or the value was not one): forgotten. */
static inline void forget_read(lct_key_iter *it)
{
    it->ncached = 0;
    it->run_count = 0;
    it->run_parts = 0; /* no later part either */
}

/* One pass over map m: the value of each key names[i] into f[i] (a
 * repeated name's last value wins).  With it, a names[0] array's first
 * keys are read into it on the way (read_keys_array; *keys_read says
 * so), so the list is walked once; with spec, spec->v is the first other
 * value that is a PrefetchRequestSpec or a PrefetchTaskSpec.  With
 * ended, m may run past the map (an open view) and *ended is where the
 * map ends.  False when m is malformed. */
static bool scan_map(lct_value m, const char *const *names, int n,
                     lct_key_iter *it, lct_value *f, bool *keys_read,
                     spec_seen *spec, const unsigned char **ended)
{
    memset(f, 0, (size_t)n * sizeof *f);
    if (spec)
        spec->v = (lct_value){0}, spec->parsed = false;
    if (keys_read)
        *keys_read = false;
    lct_iter a;
    if (lct_map_iter_init(m, &a) != LCT_OK)
        return false;
    while (a.remaining) {
        const unsigned char *after;
        if (!skip_small(a.cur, a.end, &after) &&
            lct__mp_walk(a.cur, a.end, LCT__WALK_SKIP, &after, NULL,
                         NULL) != LCT_OK)
            return false;
        lct_value k = {a.cur, (size_t)(after - a.cur)}, v;
        a.cur = after;
        int which = name_index(k, names, n);
        if (which == 0 && it && read_keys_array(&a, it, &v)) {
            *keys_read = true;
        } else {
            bool read_spec = spec && which < 0 && !spec->v.ptr &&
                             !f[0].ptr && spec_read_at(&a, it, spec, &after);
            /* The last value ends where the map does: no walk to find
             * it (whoever reads it walks it, bounds-checked). */
            if (!read_spec && a.remaining == 1 && a.cur < a.end && !ended)
                after = a.end;
            else if (!read_spec && !skip_value(a.cur, a.end, &after))
                return false;
            v = (lct_value){a.cur, (size_t)(after - a.cur)};
            a.cur = after;
            if (which == 0 && it)
                *keys_read = false, forget_read(it);
            lct_str tag;
            if (read_spec)
                spec->v = v;
            else if (spec && which != 0 && !spec->v.ptr && is_map(v) &&
                     lct_value_codec(v, &tag, NULL) &&
                     ((tag.len == 19 &&
                       lct_str_eq(tag, "PrefetchRequestSpec")) ||
                      (tag.len == 16 && lct_str_eq(tag, "PrefetchTaskSpec"))))
                spec->v = v;
        }
        if (which >= 0)
            f[which] = v;
        a.remaining--;
    }
    if (ended)
        *ended = a.cur;
    return true;
}

/* The fields names[0..n) of map m into f in one pass (a repeated
 * name's last value wins, as in lct_map_find), for a record's small
 * maps, where lct_map_find once a field cost more than the rest of their
 * decoding.  m is a whole value, as every view is, so its last value
 * runs to its end unwalked; whoever reads a field checks it.  False
 * when m is malformed before its last value. */
static bool fields_once(lct_value m, const char *const *names, int n,
                        lct_value *f)
{
    return scan_map(m, names, n, NULL, f, NULL, NULL, NULL);
}

/* The fields of a spec map, in one pass (a field per lct_map_find
 * walked the keys list once a field); with it, the first keys are read
 * into it on the way, as lct_key_iter_init reads flat keys. */
static const char *const spec_names[S_COUNT] = {
    "keys",   "num_kv_readers", "extra_count", "group_layout_descs",
    "layout_desc", "policy",   "mode",        "attn_desc",
    "generation"};

static bool spec_fields(lct_value m, lct_value *f, lct_key_iter *it,
                        bool *keys_read)
{
    return scan_map(m, spec_names, S_COUNT, it, f, keys_read, NULL, NULL);
}

/* A request spec at a->cur ({"__t__": "PrefetchRequestSpec", "v":
 * {...}}): its fields read into spec, *after its end.  False, with
 * nothing read, for any other value (the caller steps over it).  Its
 * view runs to the end of the args, so lct_value_codec's payload does
 * too, and the payload map's last field is measured by the read, not
 * assumed to run to the end. */
static bool spec_read_at(lct_iter *a, lct_key_iter *it, spec_seen *spec,
                         const unsigned char **after)
{
    lct_value rest = {a->cur, (size_t)(a->end - a->cur)}, m;
    lct_str tag;
    if (!lct_value_codec(rest, &tag, &m) ||
        !lct_str_eq(tag, "PrefetchRequestSpec") ||
        lct_value_type(m) != LCT_TYPE_MAP)
        return false;
    if (!scan_map(m, spec_names, S_COUNT, it, spec->f, &spec->keys_read,
                  NULL, after)) {
        /* nothing read: the caller walks it */
        forget_read(it);
        return false;
    }
    spec->parsed = true;
    return true;
}

/* num_kv_readers, or in older traces extra_count + 1. */
static lct_status spec_readers(const lct_value *f, lct_prefetch_spec *out,
                               lct_error *err)
{
    if (f[S_READERS].ptr) {
        if (lct_value_get_int64(f[S_READERS], &out->num_kv_readers) != LCT_OK)
            return wrong(err, "PrefetchRequestSpec num_kv_readers", "an int",
                         f[S_READERS]);
        return LCT_OK;
    }
    int64_t extra;
    lct_status st = spec_int(f[S_EXTRA], "PrefetchRequestSpec extra_count",
                             &extra, err);
    if (st == LCT_OK && extra == INT64_MAX)
        return lct__fail(err, LCT_ERR_RANGE, 0, 0,
                         "PrefetchRequestSpec: extra_count too large");
    out->num_kv_readers = extra + 1;
    return st;
}

static lct_status spec_layouts(const lct_value *f, lct_prefetch_spec *out,
                               lct_error *err)
{
    lct_value v = f[S_GROUPS];
    if (v.ptr && !lct_value_is_nil(v)) {
        if (lct_value_type(v) != LCT_TYPE_MAP)
            return wrong(err, "PrefetchRequestSpec group_layout_descs",
                         "a map", v);
        out->group_layouts = v;
    }
    if (f[S_LAYOUT].ptr && !lct_value_is_nil(f[S_LAYOUT]))
        out->layout = f[S_LAYOUT];
    return LCT_OK;
}

/* The last attn_desc this thread decoded, by its bytes, and what it
 * decoded to (the window's list as a place in them): a trace's specs
 * mostly share one, and decoding it was a tenth of reading a spec call's
 * keys. */
static _Thread_local struct {
    unsigned char bytes[128];
    size_t len; /* 0: none */
    size_t sw_at, sw_len;
    int64_t world_size;
} last_attn;

static lct_status attn_window(lct_value v, lct_attn_window *out,
                              lct_error *err)
{
    if (same_bytes(v, last_attn.bytes, last_attn.len)) {
        out->num_chunks_in_sw =
            (lct_value){v.ptr + last_attn.sw_at, last_attn.sw_len};
        out->world_size = last_attn.world_size;
        return LCT_OK;
    }
    lct_status st = lct_attn_window_get(v, out, err);
    const unsigned char *sw = out->num_chunks_in_sw.ptr;
    if (st == LCT_OK && sw >= v.ptr && sw <= v.ptr + v.len &&
        out->num_chunks_in_sw.len <= v.len - (size_t)(sw - v.ptr) &&
        keep_whole(v, last_attn.bytes, sizeof last_attn.bytes,
                   &last_attn.len)) {
        last_attn.sw_at = (size_t)(sw - v.ptr);
        last_attn.sw_len = out->num_chunks_in_sw.len;
        last_attn.world_size = out->world_size;
    }
    return st;
}

/* A request spec from its fields, as spec_fields read them (whole: the
 * whole map was read). */
static lct_status spec_from_fields(const lct_value *f, bool whole,
                                   lct_prefetch_spec *out, lct_error *err)
{
    lct_status st;
    if (!whole || !f[S_KEYS].ptr)
        return lct__fail(err, LCT_ERR_TYPE, 0, 0,
                         "PrefetchRequestSpec: no field `keys`");
    if ((st = lct_list_get(f[S_KEYS], &out->keys, NULL, err)) != LCT_OK ||
        (st = spec_readers(f, out, err)) != LCT_OK ||
        (st = spec_layouts(f, out, err)) != LCT_OK)
        return st;
    lct_value p = f[S_POLICY], mode = f[S_MODE], attn = f[S_ATTN];
    if (p.ptr && !lct_value_is_nil(p) &&
        (st = lct_enum_get(p, "TrimPolicy", &out->policy, err)) != LCT_OK)
        return st;
    if (mode.ptr && !lct_value_is_nil(mode) &&
        (st = lct_enum_get(mode, "PrefetchMode", &out->mode, err)) != LCT_OK)
        return st;
    if (attn.ptr && !lct_value_is_nil(attn)) {
        out->has_attn = true;
        if ((st = attn_window(attn, &out->attn, err)) != LCT_OK)
            return st;
    }
    return spec_int(f[S_GEN], "PrefetchRequestSpec generation",
                    &out->generation, err);
}

/* lct_prefetch_spec_get, reading the first keys into it (may be NULL)
 * on the way: *keys_read says so. */
static lct_status spec_get(lct_value v, lct_prefetch_spec *out,
                           lct_key_iter *it, bool *keys_read, lct_error *err)
{
    lct_value m, f[S_COUNT];
    bool read = false;
    memset(out, 0, sizeof *out);
    if (keys_read)
        *keys_read = false;
    lct_status st = map_payload(v, "PrefetchRequestSpec", &m, err);
    if (st != LCT_OK)
        return st;
    bool whole = spec_fields(m, f, it, &read);
    if (keys_read)
        *keys_read = whole && read;
    return spec_from_fields(f, whole, out, err);
}

lct_status lct_prefetch_spec_get(lct_value v, lct_prefetch_spec *out,
                                 lct_error *err)
{
    return spec_get(v, out, NULL, NULL, err);
}

/* The layout value of a spec's key group: group_layout_descs' entry
 * str(group_id), else the older single layout; a zero view when none. */
static lct_value spec_layout_value(const lct_prefetch_spec *spec,
                                   int64_t group_id)
{
    if (spec->group_layouts.ptr) {
        /* str(group_id), without snprintf: it was most of the cost */
        char key[24];
        key[sizeof key - 1] = '\0';
        char *at = lct__u64_digits(group_id < 0 ? 0 - (uint64_t)group_id
                                                : (uint64_t)group_id,
                                   key + sizeof key - 1);
        if (group_id < 0)
            *--at = '-';
        const char *const names[] = {at};
        lct_value v;
        if (fields_once(spec->group_layouts, names, 1, &v) && v.ptr)
            return v;
    }
    return spec->layout;
}

lct_status lct_prefetch_spec_layout(const lct_prefetch_spec *spec,
                                    int64_t group_id, lct_layout_desc *out,
                                    lct_error *err)
{
    lct_value v = spec_layout_value(spec, group_id);
    if (v.ptr)
        return lct_layout_desc_get(v, out, err);
    memset(out, 0, sizeof *out);
    return lct__fail(err, LCT_ERR_NOT_FOUND, 0, 0,
                     "PrefetchRequestSpec: no layout for group %lld",
                     (long long)group_id);
}

lct_status lct_prefetch_handle_get(lct_value v, lct_prefetch_handle *out,
                                   lct_error *err)
{
    lct_value m, t;
    memset(out, 0, sizeof *out);
    lct_status st = map_payload(v, "PrefetchHandle", &m, err);
    if (st != LCT_OK)
        return st;
    field(m, "prefetch_request_id", &out->prefetch_request_id);
    field(m, "external_request_id", &out->external_request_id);
    field(m, "l1_found_indices", &out->l1_found_indices);
    field(m, "l1_hit_chunks", &out->l1_hit_chunks);
    field(m, "l2_orig_indices", &out->l2_orig_indices);
    if (present(m, "submit_time", &t) &&
        lct_value_get_double(t, &out->submit_time) != LCT_OK)
        return wrong(err, "PrefetchHandle submit_time", "a float", t);
    if ((st = int_field(m, "PrefetchHandle l1_prefix_hit_count",
                        "l1_prefix_hit_count", false,
                        &out->l1_prefix_hit_count, err)) != LCT_OK ||
        (st = int_field(m, "PrefetchHandle total_requested_keys",
                        "total_requested_keys", false,
                        &out->total_requested_keys, err)) != LCT_OK)
        return st;
    return int_field(m, "PrefetchHandle generation", "generation", false,
                     &out->generation, err);
}

/* MARK: - the keys of a record */

/* MARK: - newer prefetch types (PrefetchTaskSpec, GroupedObjectKeys) */

/* An enum whose tag this version does not know: its member name when it
 * is a wrapped or a bare str, else an empty name (the view says what). */
static void enum_name(lct_value v, lct_str *name)
{
    lct_value payload;
    *name = (lct_str){0};
    if (!lct_value_codec(v, NULL, &payload))
        payload = v;
    if (lct_value_get_str(payload, name) != LCT_OK)
        *name = (lct_str){0};
}

lct_status lct_key_group_get(lct_value v, lct_key_group *out, lct_error *err)
{
    lct_value m, f;
    memset(out, 0, sizeof *out);
    lct_status st = map_payload(v, "GroupedObjectKeys", &m, err);
    if (st != LCT_OK)
        return st;
    if (field(m, "keys", &f) != LCT_OK)
        return lct__fail(err, LCT_ERR_TYPE, 0, 0,
                         "GroupedObjectKeys: no field `keys`");
    if ((st = lct_list_get(f, &out->keys, &out->count, err)) != LCT_OK)
        return st;
    if (present(m, "layout_desc", &f))
        out->layout = f;
    if ((st = int_field(m, "GroupedObjectKeys object_group_id",
                        "object_group_id", false, &out->object_group_id,
                        err)) != LCT_OK)
        return st;
    if (present(m, "sliding_window_size", &f) &&
        lct_value_get_int64(f, &out->sliding_window_size) != LCT_OK)
        return wrong(err, "GroupedObjectKeys sliding_window_size", "an int",
                     f);
    return LCT_OK;
}

lct_status lct_key_group_bytes(const lct_key_group *group, uint64_t *bytes,
                               lct_error *err)
{
    lct_layout_desc layout;
    *bytes = 0;
    if (!group->layout.ptr)
        return lct__fail(err, LCT_ERR_NOT_FOUND, 0, 0,
                         "GroupedObjectKeys: no layout_desc");
    lct_status st = lct_layout_desc_get(group->layout, &layout, err);
    return st != LCT_OK ? st : lct_layout_bytes(&layout, bytes, err);
}

lct_status lct_prefetch_task_get(lct_value v, lct_prefetch_task *out,
                                 lct_error *err)
{
    lct_value m, f;
    memset(out, 0, sizeof *out);
    lct_status st = map_payload(v, "PrefetchTaskSpec", &m, err);
    if (st != LCT_OK)
        return st;
    if (field(m, "key_groups", &f) != LCT_OK)
        return lct__fail(err, LCT_ERR_TYPE, 0, 0,
                         "PrefetchTaskSpec: no field `key_groups`");
    if ((st = lct_list_get(f, &out->key_groups, &out->ngroups, err)) !=
        LCT_OK)
        return st;
    if ((st = int_field(m, "PrefetchTaskSpec num_kv_readers",
                        "num_kv_readers", false, &out->num_kv_readers,
                        err)) != LCT_OK)
        return st;
    if (field(m, "num_kv_readers", &f) != LCT_OK)
        out->num_kv_readers = 1;
    if (present(m, "fetching_policy", &f)) {
        out->fetching_policy = f;
        enum_name(f, &out->fetching_policy_name);
    }
    if (present(m, "lock_mode", &f)) {
        out->lock_mode = f;
        enum_name(f, &out->lock_mode_name);
    }
    return LCT_OK;
}

/* MARK: - the keys of a record */

/* The carriers the key iterator reads (besides a `keys` argument). */
static bool known_carrier(lct_str tag)
{
    return lct_str_eq(tag, "PrefetchRequestSpec") ||
           lct_str_eq(tag, "PrefetchTaskSpec") ||
           lct_str_eq(tag, "GroupedObjectKeys") ||
           lct_str_eq(tag, "ObjectKey");
}

bool lct_record_unread_keys(const lct_record *rec, lct_str *tag)
{
    static const char opening[] = "\xa5__t__\xa9ObjectKey";
    lct_iter args;
    lct_value k, v;
    lct_str t;
    if (lct_map_iter_init(rec->args, &args) != LCT_OK)
        return false;
    while (lct_map_iter_next(&args, &k, &v) == 1) {
        if (lct_value_str_eq(k, "keys") || !lct_value_codec(v, &t, NULL) ||
            known_carrier(t))
            continue;
        if (memmem(v.ptr, v.len, opening, sizeof opening - 1)) {
            if (tag)
                *tag = t;
            return true;
        }
    }
    return false;
}

/* The next group of a PrefetchTaskSpec: its keys to walk, and what each
 * weighs.  1, 0 when no group is left, or a failure. */
static int next_group(lct_key_iter *it, lct_error *err)
{
    lct_value g;
    int rc = lct_array_iter_next(&it->groups, &g);
    if (rc <= 0)
        return rc < 0 ? lct__fail(err, rc, 0, 0,
                                  "PrefetchTaskSpec: key_groups is malformed")
                      : 0;
    lct_key_group group;
    lct_status st = lct_key_group_get(g, &group, err);
    if (st != LCT_OK)
        return st;
    if (lct_key_group_bytes(&group, &it->layout_bytes, NULL) != LCT_OK)
        it->layout_bytes = 0;
    st = lct_array_iter_init(group.keys, &it->keys);
    return st == LCT_OK ? 1 : st;
}

/* The usual pairs in the order objectkey.c lists them, and the last. */
enum { MODEL_NAME, KV_RANK, OBJECT_GROUP_ID, CACHE_SALT };
_Static_assert(CACHE_SALT == LCT__MP_UNIT_USUAL, "the last pair follows");

/*
 * The key at it->cur when it has the encoder's usual shape (a whole
 * lct__mp_objectkey unit: the opening, then model_name, kv_rank, at most
 * object_group_id and a cache_salt) and nothing else: *key filled and the
 * iterator past it.  Anything else returns false and changes nothing; the
 * general path reads it.  Five distinct names, so no field repeats and
 * "the last one wins" has nothing to decide.
 */
static bool usual_key(lct_iter *it, lct_object_key *key)
{
    const unsigned char *p = it->cur, *end = it->end;
    if (it->remaining == 0 || (size_t)(end - p) < LCT__MP_UNIT_OPENING)
        return false;
    lct__mp_unit_values v = {.pairs = 0}; /* whole() sets what it says */
    const unsigned char *salt, *q;
    size_t salt_len;
    if (!(q = lct__mp_unit_whole(&lct__mp_objectkey, p, end, &v, &salt,
                                 &salt_len)))
        return false;
    *key = (lct_object_key){
        .chunk_hash = {p + LCT__MP_UNIT_FREE_AT, 32},
        .model_name = {(const char *)v.at[MODEL_NAME], v.len[MODEL_NAME]},
        .kv_rank = *v.at[KV_RANK],
        .object_group_id =
            v.pairs > OBJECT_GROUP_ID ? *v.at[OBJECT_GROUP_ID] : 0,
        .cache_salt = salt_len ? (lct_str){(const char *)salt, salt_len}
                               : (lct_str){"", 0}};
    it->cur = q;
    it->remaining--;
    return true;
}

/* The bytes a layout_desc value describes (false: it is not one; 0: it
 * cannot be sized), remembered by its bytes for the next call. */
static bool layout_value_bytes(lct_value v, uint64_t *bytes)
{
    const layout_slot *known = known_layout(v.ptr, v.ptr + v.len);
    if (known && known->len == v.len) {
        *bytes = known->layout_bytes;
        return true;
    }
    lct_layout_desc layout;
    if (lct_layout_desc_get(v, &layout, NULL) != LCT_OK)
        return false;
    if (lct_layout_bytes(&layout, bytes, NULL) != LCT_OK)
        *bytes = 0; /* present but not sizable: unknown */
    unsigned i = last_layouts.next;
    if (keep_whole(v, last_layouts.slot[i].bytes,
                   sizeof last_layouts.slot[i].bytes,
                   &last_layouts.slot[i].len)) {
        last_layouts.slot[i].layout_bytes = *bytes;
        last_layouts.next = (i + 1) % LAYOUT_SLOTS;
    }
    return true;
}

static void call_layout(lct_value v, lct_key_iter *it)
{
    if (v.ptr && !lct_value_is_nil(v) &&
        layout_value_bytes(v, &it->layout_bytes))
        it->has_layout = true;
}

/* A spec's layout for a key group, sized as layout_value_bytes sizes. */
static uint64_t spec_group_bytes(const lct_prefetch_spec *spec,
                                 int64_t group_id)
{
    lct_value v = spec_layout_value(spec, group_id);
    uint64_t bytes;
    return v.ptr && layout_value_bytes(v, &bytes) ? bytes : 0;
}

/* The key at p whose fields are where part says, as usual_key reads
 * it. */
static inline void noted_key(const unsigned char *p,
                             const lct_key_run_part *part,
                             lct_object_key *key)
{
    *key = (lct_object_key){
        .chunk_hash = {p + LCT__MP_UNIT_FREE_AT, 32},
        .model_name = {(const char *)p + part->at[MODEL_NAME],
                       part->len[MODEL_NAME]},
        .kv_rank = p[part->at[KV_RANK]],
        .object_group_id =
            part->len[OBJECT_GROUP_ID] ? p[part->at[OBJECT_GROUP_ID]] : 0,
        .cache_salt = part->len[CACHE_SALT]
                          ? (lct_str){(const char *)p + part->at[CACHE_SALT],
                                      part->len[CACHE_SALT]}
                          : (lct_str){"", 0}};
}

_Static_assert(sizeof ((lct_key_run_part *)0)->at ==
                   sizeof ((lct__key_fields *)0)->at,
               "a part's fields are the walk's");
_Static_assert(LCT_KEY_RUN_PARTS >= LCT__KEY_NOTE_PARTS,
               "the iterator holds the walk's parts");
_Static_assert(sizeof ((lct_key_iter *)0)->parts <=
                   sizeof ((lct_key_iter *)0)->cached,
               "the parts take cached[]'s room, not more");

/* Describe part i of the noted list (run_*). */
static inline void describe_part(lct_key_iter *it, uint32_t i)
{
    const lct_key_run_part *part = &it->parts[i];
    it->run_part = i;
    it->run_first = part->first;
    it->run_stride = part->stride;
    it->run_count = part->count;
    it->run_next = 0;
    it->run_rank_at = part->at[KV_RANK];
    it->run_group_at =
        part->len[OBJECT_GROUP_ID] ? part->at[OBJECT_GROUP_ID] : 0;
    noted_key(part->first, part, &it->run_like);
}

void lct__key_run_describe_next(lct_key_iter *it)
{
    describe_part(it, it->run_part + 1);
}

/* Whether the walk's notes are of a list at p that ends by end (the
 * notes hold only for the record this thread decoded last, so a list
 * is known by its address). */
static inline bool notes_usable(const lct__key_notes *kn,
                                const unsigned char *p,
                                const unsigned char *end)
{
    return kn->list == p && kn->end <= end && kn->count <= UINT32_MAX &&
           kn->nparts != 0 && kn->nparts <= LCT_KEY_RUN_PARTS;
}

/* The noted list (notes_usable) described in it, it->keys after it. */
static void take_notes(const lct__key_notes *kn, lct_key_iter *it,
                       const unsigned char *end)
{
    for (unsigned i = 0; i < kn->nparts; i++) {
        const lct__key_part *from = &kn->part[i];
        lct_key_run_part *to = &it->parts[i];
        to->first = from->first;
        to->count = from->count;
        to->stride = from->len;
        memcpy(to->at, from->fields.at, sizeof to->at);
        memcpy(to->len, from->fields.len, sizeof to->len);
    }
    it->run_parts = kn->nparts;
    describe_part(it, 0);
    it->ncached = 0;
    it->keys = (lct_iter){.cur = kn->end, .end = end, .remaining = 0,
                          .count = (uint32_t)kn->count};
}

/* read_keys_array from the keys the record's validating walk found, when
 * this is the list it noted (lct__key_notes, LCT_KEYS): the list is
 * described in the iterator where it lies (parts[], run_*), not walked or
 * read.  The notes are copied: they are the thread's last record's, and
 * the iterator may be read after another. */
static bool noted_keys_array(lct_iter *a, lct_key_iter *it, lct_value *v)
{
    const lct__key_notes *kn = lct__key_notes_here();
    const unsigned char *p = a->cur;
    if (!notes_usable(kn, p, a->end))
        return false;
    take_notes(kn, it, a->end);
    *v = (lct_value){p, (size_t)(kn->end - p)};
    a->cur = kn->end;
    return true;
}

/* The flat arguments a key iterator reads, each into f[its index]:
 * scan_args finds them by flat_names, noted_args by flat_arg. */
enum { FLAT_KEYS, FLAT_LAYOUT, FLAT_POLICY, FLAT_MODE, FLAT_SKIP_L2,
       FLAT_ARGS };
static const char *const flat_names[FLAT_ARGS] = {
    [FLAT_KEYS] = "keys", [FLAT_LAYOUT] = "layout_desc",
    [FLAT_POLICY] = "policy", [FLAT_MODE] = "mode",
    [FLAT_SKIP_L2] = "skip_l2"};

/* Which of flat_names the n bytes of a fixstr name spell, or -1: by
 * length, then the bytes at a length known to the compiler (name_index's
 * strncmp a name cost stat --spans 5% more instructions on qwen). */
static inline int flat_arg(const unsigned char *name, size_t n)
{
    switch (n) {
    case 4:
        return memcmp(name, "keys", 4) == 0   ? FLAT_KEYS
               : memcmp(name, "mode", 4) == 0 ? FLAT_MODE
                                              : -1;
    case 6: return memcmp(name, "policy", 6) == 0 ? FLAT_POLICY : -1;
    case 7: return memcmp(name, "skip_l2", 7) == 0 ? FLAT_SKIP_L2 : -1;
    case 11: return memcmp(name, "layout_desc", 11) == 0 ? FLAT_LAYOUT : -1;
    default: return -1;
    }
}

/* scan_args when the record's last `keys` argument is the list its
 * validating walk noted: that list is the call's keys whatever else the
 * arguments hold (a spec is read only when there is no `keys`), so only
 * the arguments' names are looked at and their values stepped over by
 * what is known without a walk, the flat arguments' values kept in f
 * as scan_args keeps them, and the list taken from the notes.
 * False, the iterator untouched, for anything else (a name not a fixstr,
 * which may spell `keys` too; a later `keys` that is not the list; a
 * value to walk; no notes): scan_args then decides. */
static bool noted_args(const lct_record *rec, lct_key_iter *it, lct_value *f)
{
    const lct__key_notes *kn = lct__key_notes_here();
    lct_iter a;
    if (!kn->list || lct_map_iter_init(rec->args, &a) != LCT_OK)
        return false;
    memset(f, 0, FLAT_ARGS * sizeof *f);
    bool noted = false; /* the last `keys` so far is the noted list */
    while (a.remaining) {
        const unsigned char *name = a.cur, *after;
        if (a.cur >= a.end || (*a.cur & 0xe0) != 0xa0 ||
            !skip_small(a.cur, a.end, &after))
            return false;
        int which = flat_arg(name + 1, (size_t)(after - name - 1));
        a.cur = after;
        if (which == FLAT_KEYS && notes_usable(kn, a.cur, a.end))
            after = kn->end, noted = true;
        else if (a.remaining == 1 && a.cur < a.end) /* nothing after it */
            after = a.end, noted = noted && which != FLAT_KEYS;
        else if (skip_known(a.cur, a.end, &after))
            noted = noted && which != FLAT_KEYS;
        else /* a value to walk (a spec, say): scan_args walks it */
            return false;
        if (which >= 0)
            f[which] = (lct_value){a.cur, (size_t)(after - a.cur)};
        a.cur = after;
        a.remaining--;
    }
    if (noted)
        take_notes(kn, it, a.end);
    return noted;
}

/* A `keys` value at a->cur that is an array: its keys read into
 * it->cached while the encoder's usual shape lasts (at most
 * LCT_KEY_ITER_CACHE), it->keys left at the first key not read, and *v
 * the whole value (stepped over only past what was read).  False
 * (nothing changed) when the value is not a plain array. */
static bool read_keys_array(lct_iter *a, lct_key_iter *it, lct_value *v)
{
    const unsigned char *p = a->cur, *end = a->end;
    if (p >= end)
        return false;
    if (noted_keys_array(a, it, v))
        return true;
    uint32_t count;
    size_t head;
    if ((*p & 0xf0) == 0x90)
        count = *p & 0x0fu, head = 1;
    else if (*p == 0xdc && end - p >= 3)
        count = be16dec(p + 1), head = 3;
    else if (*p == 0xdd && end - p >= 5)
        count = be32dec(p + 1), head = 5;
    else
        return false;
    lct_iter keys = {.cur = p + head, .end = end, .remaining = count,
                     .count = count};
    /* a `keys` argument given again after a noted list: this one's keys
     * are the call's, and none of that list's (its parts shared cached[]) */
    it->run_count = it->run_parts = 0;
    uint32_t n = 0;
    while (n < LCT_KEY_ITER_CACHE && usual_key(&keys, &it->cached[n]))
        n++;
    const unsigned char *after = keys.cur;
    if (keys.remaining &&
        lct__mp_walk(p, end, LCT__WALK_SKIP, &after, NULL, NULL) != LCT_OK)
        return false;
    it->ncached = n;
    it->keys = keys;
    *v = (lct_value){p, (size_t)(after - p)};
    a->cur = after;
    return true;
}

/* The flat arguments a key iterator reads (flat_names, into f), and in
 * spec the first argument that is a PrefetchRequestSpec or a
 * PrefetchTaskSpec, in one pass (scan_map); a malformed map gives none. */
static void scan_args(lct_value args, lct_key_iter *it, lct_value *f,
                      bool *keys_read, spec_seen *spec)
{
    if (scan_map(args, flat_names, FLAT_ARGS, it, f, keys_read, spec, NULL))
        return;
    memset(f, 0, FLAT_ARGS * sizeof *f);
    spec->v = (lct_value){0};
    spec->parsed = false;
    *keys_read = false;
    forget_read(it);
}

/* An L2-level event's keys (LMCache's l2-tracing fork: a store's or a
 * load's) weigh what its object_sizes says, one size a key; only looked
 * for when there is no layout and the qualname is the level's, so a
 * storage call pays nothing. */
static void l2_sizes(const lct_record *rec, lct_key_iter *it)
{
    lct_value sizes;
    if (it->has_layout || rec->qualname.len < 3 ||
        memcmp(rec->qualname.ptr, "l2.", 3) != 0)
        return;
    it->from_sizes =
        lct_map_find(rec->args, "object_sizes", &sizes) == LCT_OK &&
        lct_array_iter_init(sizes, &it->sizes) == LCT_OK;
}

/* lct_key_iter_init; with `whole` false the keys alone
 * (lct__key_iter_init_keys). */
static lct_status key_iter_init(const lct_record *rec, lct_key_iter *it,
                                bool whole, lct_error *err)
{
    memset(it, 0, offsetof(lct_key_iter, cached));
    lct_value f[FLAT_ARGS], v, array;
    spec_seen spec = {.parsed = false};
    lct_status st;
    bool keys_read = noted_args(rec, it, f);
    if (keys_read && !whole)
        return LCT_OK; /* the noted list, nothing beside it asked for */
    if (!keys_read)
        scan_args(rec->args, it, f, &keys_read, &spec);
    bool flat = f[FLAT_KEYS].ptr && !lct_value_is_nil(f[FLAT_KEYS]);
    if (whole) { /* what the call says beside its keys, and their weight */
        if (f[FLAT_POLICY].ptr)
            enum_name(f[FLAT_POLICY], &it->policy);
        if (f[FLAT_MODE].ptr)
            enum_name(f[FLAT_MODE], &it->mode);
        if (f[FLAT_SKIP_L2].ptr &&
            lct_value_get_bool(f[FLAT_SKIP_L2], &it->skip_l2) != LCT_OK)
            it->skip_l2 = false;
        if (flat) {
            call_layout(f[FLAT_LAYOUT], it);
            l2_sizes(rec, it);
        }
    }
    if (flat) {
        if (keys_read)
            return LCT_OK;
        forget_read(it);
        it->keys = (lct_iter){0};
        if ((st = lct_list_get(f[FLAT_KEYS], &array, NULL, err)) != LCT_OK)
            return st;
        return lct_array_iter_init(array, &it->keys);
    }
    /* A spec the scan read where it met it, unless a `keys` argument
     * (nil, or not an array) came after it and reset the keys read. */
    bool spec_read = spec.parsed && !f[FLAT_KEYS].ptr;
    if (!spec_read) { /* what the scan read is not this call's keys */
        forget_read(it);
        it->keys = (lct_iter){0};
    }
    if ((v = spec.v).ptr) {
        lct_str tag;
        lct_value_codec(v, &tag, NULL);
        if (lct_str_eq(tag, "PrefetchTaskSpec")) {
            lct_prefetch_task task;
            if ((st = lct_prefetch_task_get(v, &task, err)) != LCT_OK)
                return st;
            it->from_task = true;
            if (task.fetching_policy_name.len)
                it->policy = task.fetching_policy_name;
            it->keys = (lct_iter){0}; /* empty: next() opens the first group */
            return lct_array_iter_init(task.key_groups, &it->groups);
        }
        bool read;
        if (spec_read) {
            memset(&it->spec, 0, sizeof it->spec);
            read = spec.keys_read;
            st = spec_from_fields(spec.f, true, &it->spec, err);
        } else {
            st = spec_get(v, &it->spec, it, &read, err);
        }
        if (st != LCT_OK) {
            forget_read(it);
            return st;
        }
        it->from_spec = true;
        if (it->spec.policy.len)
            it->policy = it->spec.policy;
        if (it->spec.mode.len)
            it->mode = it->spec.mode;
        if (read)
            return LCT_OK;
        forget_read(it);
        return lct_array_iter_init(it->spec.keys, &it->keys);
    }
    return LCT_OK;
}

lct_status lct_key_iter_init(const lct_record *rec, lct_key_iter *it,
                             lct_error *err)
{
    return key_iter_init(rec, it, true, err);
}

lct_status lct__key_iter_init_keys(const lct_record *rec, lct_key_iter *it,
                                   lct_error *err)
{
    return key_iter_init(rec, it, false, err);
}

/* The next key of one list: 1, 0 at its end, or a failure. */
static int next_key(lct_iter *keys, lct_object_key *key, lct_error *err)
{
    if (usual_key(keys, key))
        return 1;
    lct_value v;
    int rc = lct_array_iter_next(keys, &v);
    if (rc < 0)
        return lct__fail(err, rc, 0, 0, "keys: the list is malformed");
    if (rc == 0)
        return 0;
    lct_status st = lct_object_key_get(v, key, err);
    return st == LCT_OK ? 1 : st;
}

void lct__key_run_key(const lct_key_iter *it, uint32_t i,
                      lct_object_key *key)
{
    const unsigned char *p = lct__key_run_at(it, i);
    const lct_object_key *like = &it->run_like;
    *key = *like;
    key->chunk_hash.ptr = p + LCT__MP_UNIT_FREE_AT;
    /* the key's own bytes, equal to the first key's */
    key->model_name.ptr =
        (const char *)p +
        ((const unsigned char *)like->model_name.ptr - it->run_first);
    if (like->cache_salt.len)
        key->cache_salt.ptr =
            (const char *)p +
            ((const unsigned char *)like->cache_salt.ptr - it->run_first);
    key->kv_rank = lct__key_run_rank(it, p);
    key->object_group_id = lct__key_run_group(it, p);
}

uint64_t lct__key_iter_weight(lct_key_iter *it, int64_t group)
{
    it->index++;
    uint64_t weight = it->layout_bytes;
    lct_value size;
    if (it->from_sizes && (lct_array_iter_next(&it->sizes, &size) != 1 ||
                           lct_value_get_uint64(size, &weight) != LCT_OK))
        weight = 0, it->from_sizes = false; /* no more sizes than keys */
    /* A spec's keys come group by group or round the groups: the last
     * group's size is kept, not the layout decoded per key. */
    if (it->from_spec && it->spec_group_known && it->spec_group == group) {
        weight = it->spec_group_bytes;
    } else if (it->from_spec) {
        weight = spec_group_bytes(&it->spec, group);
        it->spec_group_known = true;
        it->spec_group = group;
        it->spec_group_bytes = weight;
    }
    return weight;
}

int lct_key_iter_next(lct_key_iter *it, lct_object_key *key, uint64_t *bytes,
                      lct_error *err)
{
    int rc;
    if (it->run_next < it->run_count || lct__key_run_next_part(it)) {
        lct__key_run_key(it, it->run_next++, key);
        rc = 1;
    } else if (it->next_cached < it->ncached) {
        *key = it->cached[it->next_cached++];
        rc = 1;
    } else if (it->keys.end && (it->keys.remaining || it->keys.is_map)) {
        rc = next_key(&it->keys, key, err);
    } else { /* what next_key says of a list read to its end */
        rc = 0;
    }
    while (rc == 0 && it->from_task) { /* the next group's keys */
        int g = next_group(it, err);
        if (g <= 0)
            return g;
        it->index = 0;
        rc = next_key(&it->keys, key, err);
    }
    if (rc <= 0)
        return rc;
    uint64_t weight = lct__key_iter_weight(it, key->object_group_id);
    if (bytes)
        *bytes = weight;
    return 1;
}
