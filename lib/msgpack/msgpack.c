/*
 * msgpack.c - the byte-level msgpack layer: value headers, stepping over
 * whole values (with optional validation as the reference decoder does it),
 * and strict UTF-8 checking.
 *
 * Value heads are decoded here (the hint table); the record fast path,
 * the visitor and the writer also look at first bytes, for speed.  It
 * owns no memory and never recurses, so hostile nesting costs a bounded
 * array of counters, not the stack.
 */
#include "msgpack/msgpack_internal.h"
#include "msgpack/key_templates_internal.h"
#include "lct_core.h"

#include <stdbool.h>

#define H(type, head, len_bytes, n) {LCT_TYPE_##type, head, len_bytes, n}
#define FIX16(type, base) \
    [base + 0x0] = H(type, 1, 0, 0x0), [base + 0x1] = H(type, 1, 0, 0x1), \
    [base + 0x2] = H(type, 1, 0, 0x2), [base + 0x3] = H(type, 1, 0, 0x3), \
    [base + 0x4] = H(type, 1, 0, 0x4), [base + 0x5] = H(type, 1, 0, 0x5), \
    [base + 0x6] = H(type, 1, 0, 0x6), [base + 0x7] = H(type, 1, 0, 0x7), \
    [base + 0x8] = H(type, 1, 0, 0x8), [base + 0x9] = H(type, 1, 0, 0x9), \
    [base + 0xa] = H(type, 1, 0, 0xa), [base + 0xb] = H(type, 1, 0, 0xb), \
    [base + 0xc] = H(type, 1, 0, 0xc), [base + 0xd] = H(type, 1, 0, 0xd), \
    [base + 0xe] = H(type, 1, 0, 0xe), [base + 0xf] = H(type, 1, 0, 0xf)
#define FIXSTR16(base) \
    [base + 0x0] = H(STR, 1, 0, (base - 0xa0) + 0x0), \
    [base + 0x1] = H(STR, 1, 0, (base - 0xa0) + 0x1), \
    [base + 0x2] = H(STR, 1, 0, (base - 0xa0) + 0x2), \
    [base + 0x3] = H(STR, 1, 0, (base - 0xa0) + 0x3), \
    [base + 0x4] = H(STR, 1, 0, (base - 0xa0) + 0x4), \
    [base + 0x5] = H(STR, 1, 0, (base - 0xa0) + 0x5), \
    [base + 0x6] = H(STR, 1, 0, (base - 0xa0) + 0x6), \
    [base + 0x7] = H(STR, 1, 0, (base - 0xa0) + 0x7), \
    [base + 0x8] = H(STR, 1, 0, (base - 0xa0) + 0x8), \
    [base + 0x9] = H(STR, 1, 0, (base - 0xa0) + 0x9), \
    [base + 0xa] = H(STR, 1, 0, (base - 0xa0) + 0xa), \
    [base + 0xb] = H(STR, 1, 0, (base - 0xa0) + 0xb), \
    [base + 0xc] = H(STR, 1, 0, (base - 0xa0) + 0xc), \
    [base + 0xd] = H(STR, 1, 0, (base - 0xa0) + 0xd), \
    [base + 0xe] = H(STR, 1, 0, (base - 0xa0) + 0xe), \
    [base + 0xf] = H(STR, 1, 0, (base - 0xa0) + 0xf)

/* One entry per first byte; the fixint ranges (0x00-0x7f, 0xe0-0xff) are
 * the two range initialisers, every other byte is named.  test_value's
 * types_of_every_encoding checks entries against independent encodings. */
const lct__mp_hint lct__mp_hints[256] = {
    [0x00 ... 0x7f] = H(INT, 1, 0, 0),
    FIX16(MAP, 0x80),
    FIX16(ARRAY, 0x90),
    FIXSTR16(0xa0),
    FIXSTR16(0xb0),
    [0xc0] = H(NIL, 1, 0, 0),
    [0xc1] = H(INVALID, 1, 0, 0),
    [0xc2] = H(BOOL, 1, 0, 0),
    [0xc3] = H(BOOL, 1, 0, 0),
    [0xc4] = H(BIN, 2, 1, 0),
    [0xc5] = H(BIN, 3, 2, 0),
    [0xc6] = H(BIN, 5, 4, 0),
    [0xc7] = H(EXT, 3, 1, 0),
    [0xc8] = H(EXT, 4, 2, 0),
    [0xc9] = H(EXT, 6, 4, 0),
    [0xca] = H(FLOAT32, 5, 0, 0),
    [0xcb] = H(FLOAT64, 9, 0, 0),
    [0xcc] = H(INT, 2, 0, 0),
    [0xcd] = H(INT, 3, 0, 0),
    [0xce] = H(INT, 5, 0, 0),
    [0xcf] = H(INT, 9, 0, 0),
    [0xd0] = H(INT, 2, 0, 0),
    [0xd1] = H(INT, 3, 0, 0),
    [0xd2] = H(INT, 5, 0, 0),
    [0xd3] = H(INT, 9, 0, 0),
    [0xd4] = H(EXT, 2, 0, 1),
    [0xd5] = H(EXT, 2, 0, 2),
    [0xd6] = H(EXT, 2, 0, 4),
    [0xd7] = H(EXT, 2, 0, 8),
    [0xd8] = H(EXT, 2, 0, 16),
    [0xd9] = H(STR, 2, 1, 0),
    [0xda] = H(STR, 3, 2, 0),
    [0xdb] = H(STR, 5, 4, 0),
    [0xdc] = H(ARRAY, 3, 2, 0),
    [0xdd] = H(ARRAY, 5, 4, 0),
    [0xde] = H(MAP, 3, 2, 0),
    [0xdf] = H(MAP, 5, 4, 0),
    [0xe0 ... 0xff] = H(INT, 1, 0, 0),
};

int lct__utf8_valid(const unsigned char *s, size_t n)
{
    size_t i = 0;
    while (i < n) {
        /* Trace strings are nearly all ASCII: test 8 bytes per step. */
        if (n - i >= 8) {
            uint64_t w;
            memcpy(&w, s + i, 8);
            if ((w & UINT64_C(0x8080808080808080)) == 0) {
                i += 8;
                continue;
            }
        }
        unsigned c = s[i];
        if (c < 0x80) {
            i++;
            continue;
        }
        /* Python's strict decoder: no overlongs, no surrogates,
         * nothing past U+10FFFF. */
        if (c < 0xc2)
            return 0;
        if (c < 0xe0) {
            if (n - i < 2 || (s[i + 1] & 0xc0) != 0x80)
                return 0;
            i += 2;
            continue;
        }
        if (c < 0xf0) {
            if (n - i < 3)
                return 0;
            unsigned c1 = s[i + 1];
            if ((c == 0xe0 && c1 < 0xa0) || (c == 0xed && c1 >= 0xa0))
                return 0;
            if ((c1 & 0xc0) != 0x80 || (s[i + 2] & 0xc0) != 0x80)
                return 0;
            i += 3;
            continue;
        }
        if (c < 0xf5) {
            if (n - i < 4)
                return 0;
            unsigned c1 = s[i + 1];
            if ((c == 0xf0 && c1 < 0x90) || (c == 0xf4 && c1 >= 0x90))
                return 0;
            if ((c1 & 0xc0) != 0x80 || (s[i + 2] & 0xc0) != 0x80 ||
                (s[i + 3] & 0xc0) != 0x80)
                return 0;
            i += 4;
            continue;
        }
        return 0;
    }
    return 1;
}

/*
 * The reference decoder turns ext -1 into a Python datetime: only the three
 * timestamp layouts, nanoseconds below one second, and seconds within
 * datetime's years 1 .. 9999 decode.
 */
static bool timestamp_valid(const unsigned char *p, uint32_t n)
{
    if (n == 4)
        return true;
    if (n == 8)
        return (lct__be64(p) >> 34) <= 999999999u;
    if (n == 12) {
        int64_t sec = (int64_t)lct__be64(p + 4);
        return lct__be32(p) <= 999999999u && sec >= INT64_C(-62135596800) &&
               sec <= INT64_C(253402300799);
    }
    return false;
}

#define WALK_FAIL(code, text)                                                  \
    do {                                                                       \
        if (why)                                                               \
            *why = (text);                                                     \
        if (at)                                                                \
            *at = p;                                                           \
        return (code);                                                         \
    } while (0)

/*
 * One value that is not a fix type, at *pp: step over it (*pp moves), or
 * for a container report how many values it holds (returns 1, *pp at the
 * first).  0 for a scalar, or a negative status with *why.  Inlined into
 * the walker, its cold half, split only to be read (always_inline, so
 * the split costs no call).
 */
static inline __attribute__((always_inline)) int walk_sized(const unsigned char **pp, const unsigned char *end,
                             bool utf8, bool timestamps, bool in_key,
                             size_t *items, const char **why)
{
    const unsigned char *p = *pp;
    lct__mp_head h;
    if (lct__mp_head_parse(p, end, &h) != LCT_OK) {
        *why = *p == 0xc1 ? "reserved byte 0xc1"
                          : "data ends inside a value header";
        return LCT_ERR_MALFORMED;
    }
    const unsigned char *payload = p + h.head;
    size_t left = (size_t)(end - payload);
    switch (h.type) {
    case LCT_TYPE_STR:
        if (h.n > left) {
            *why = "str runs past the end of data";
            return LCT_ERR_MALFORMED;
        }
        if (utf8 && !lct__str_valid(payload, h.n, end)) {
            *why = "str is not valid UTF-8";
            return LCT_ERR_MALFORMED;
        }
        *pp = payload + h.n;
        return 0;
    case LCT_TYPE_BIN:
        if (h.n > left) {
            *why = "bin runs past the end of data";
            return LCT_ERR_MALFORMED;
        }
        *pp = payload + h.n;
        return 0;
    case LCT_TYPE_EXT:
        if (h.n > left) {
            *why = "ext runs past the end of data";
            return LCT_ERR_MALFORMED;
        }
        if (timestamps && h.ext_type == LCT_EXT_TIMESTAMP &&
            !timestamp_valid(payload, h.n)) {
            *why = "invalid timestamp ext";
            return LCT_ERR_MALFORMED;
        }
        if (in_key && h.ext_type != LCT_EXT_TIMESTAMP) {
            *why = "map key holds an ext, which Python cannot hash";
            return LCT_ERR_MALFORMED;
        }
        *pp = payload + h.n;
        return 0;
    case LCT_TYPE_ARRAY:
    case LCT_TYPE_MAP:
        *items = h.type == LCT_TYPE_MAP ? 2 * (size_t)h.n : h.n;
        *pp = payload;
        return 1;
    default: /* scalars: the header is the whole value */
        *pp = payload;
        return 0;
    }
}

/* One set per walk mode that can judge a key's bytes otherwise: by
 * UTF-8, timestamps and hashable map keys.  LCT__WALK_STR_KEYS only
 * judges the top map's keys, at depth 1, and a key a template holds sits
 * at depth 1 or below with its bytes deeper. */
static _Thread_local key_templates last_keys[8];

static inline key_templates *templates_for(unsigned mode)
{
    return &last_keys[(mode & (LCT__WALK_UTF8 | LCT__WALK_TIMESTAMP)) |
                      (mode & LCT__WALK_HASHABLE_KEYS ? 4u : 0u)];
}

/* A fixstr at *pp, whose first byte is b: stepped over (NULL), or the
 * phrase for why not, *pp then past its head. */
static inline __attribute__((always_inline)) const char *
fixstr_step(const unsigned char **pp, const unsigned char *end, unsigned b,
            bool utf8)
{
    size_t n = b & 0x1f;
    const unsigned char *p = ++*pp;
    if (n > (size_t)(end - p))
        return "str runs past the end of data";
    if (utf8 && !lct__str_valid(p, n, end))
        return "str is not valid UTF-8";
    *pp = p + n;
    return NULL;
}

/* Close the containers whose values are all read (rem 0), restoring
 * each outer one's count and flags, and make a key walked whole the
 * template; false when the top value itself is read. */
static inline __attribute__((always_inline)) bool
close_read(size_t *stack, unsigned *depth, size_t *rem, unsigned *flags,
           key_state *keys, const unsigned char *p)
{
    while (*rem == 0) {
        if (*depth == 0)
            return false;
        size_t top = stack[--*depth];
        *rem = top >> WALK_FLAG_BITS;
        *flags = top & WALK_FLAG_MASK;
        if (*depth == keys->cand.depth && keys->cand.key) {
            key_templates_add(keys->tpls, &keys->cand, p);
            keys->cand.key = NULL;
        }
    }
    return true;
}

/* Open a container of `items` values with these flags (WALK_IS_MAP,
 * WALK_IN_KEY), `left` bytes from its first value to the end: 0, or a
 * failure status with *why.  A map inside a map key is refused here:
 * Python cannot hash it. */
static inline __attribute__((always_inline)) int
open_container(size_t *stack, unsigned *depth, size_t *rem, unsigned *flags,
               size_t items, unsigned child, size_t left, const char **why)
{
    if ((child & (WALK_IS_MAP | WALK_IN_KEY)) == (WALK_IS_MAP | WALK_IN_KEY)) {
        *why = "map key holds a map, which Python cannot hash";
        return LCT_ERR_MALFORMED;
    }
    if (items == 0)
        return LCT_OK;
    if (items > left) { /* every value takes at least one byte */
        *why = "container count exceeds the data left";
        return LCT_ERR_MALFORMED;
    }
    if (*depth == LCT_MAX_DEPTH) {
        *why = "nesting deeper than LCT_MAX_DEPTH";
        return LCT_ERR_DEPTH;
    }
    stack[(*depth)++] = *rem << WALK_FLAG_BITS | *flags;
    *rem = items;
    *flags = child;
    return LCT_OK;
}

/*
 * The walker.  Nesting is a stack of "values still to read" counters: the
 * counter of the innermost open container lives in `rem`, the outer ones
 * in stack[], each shifted left over its container's flags (`flags` for
 * the innermost).  In a map a key sits where an odd count remains, so
 * flags & (rem | WALK_IN_KEY) says whether the next value is in a key.
 * fixint, fixstr, fixmap and fixarray, nearly every byte of a real
 * trace, are decoded from the byte itself; the rest go to walk_sized.
 * The codec's ObjectKey opening is stepped over as one unit
 * (lct__mp_unit_pairs), and a key like the last one read whole as
 * another (key_template); neither is taken inside a map key, where no
 * map may be.
 */
int lct__mp_walk(const unsigned char *p, const unsigned char *end,
                 unsigned mode, const unsigned char **out, const char **why,
                 const unsigned char **at)
{
    size_t stack[LCT_MAX_DEPTH];
    unsigned depth = 0;
    size_t rem = 1;
    unsigned flags = 0;
    const bool utf8 = (mode & LCT__WALK_UTF8) != 0;
    const bool timestamps = (mode & LCT__WALK_TIMESTAMP) != 0;
    const bool str_keys = (mode & LCT__WALK_STR_KEYS) != 0;
    const unsigned map_flag =
        (mode & LCT__WALK_HASHABLE_KEYS) ? WALK_IS_MAP : 0;
    const char *fault = "malformed value";
    key_state keys = {.tpls = templates_for(mode), .cand = {.key = NULL},
                      .note = (mode & LCT__WALK_NOTE_KEYS) != 0};
    if (str_keys && (p >= end || lct__mp_hints[*p].type != LCT_TYPE_MAP))
        WALK_FAIL(LCT_ERR_MALFORMED, "args is not a map");

    for (;;) {
        if (rem == 0 && !close_read(stack, &depth, &rem, &flags, &keys, p)) {
            *out = p;
            return LCT_OK;
        }
        rem--;
        if (p >= end)
            WALK_FAIL(LCT_ERR_MALFORMED, "data ends inside a value");
        unsigned b = *p;

        if ((b & 0xe0) == 0xa0) { /* fixstr: keys and most strings */
            const char *bad = fixstr_step(&p, end, b, utf8);
            if (bad)
                WALK_FAIL(LCT_ERR_MALFORMED, bad);
            continue;
        }
        /* Not a fixstr: at the top of args only a value (an even count
         * remains) or a key written as str8, str16 or str32 may be. */
        const bool in_args = str_keys && depth == 1;
        if (in_args && (rem & 1) && (b < 0xd9 || b > 0xdb))
            WALK_FAIL(LCT_ERR_MALFORMED, "args key is not a str");
        if (b < 0x80 || b >= 0xe0) { /* fixint */
            p++;
            continue;
        }
        /* Whether this value is in a map key: a map's key, or inside
         * one (only ever under LCT__WALK_HASHABLE_KEYS). */
        const size_t in_key = flags & (rem | WALK_IN_KEY);
        /* A run of keys stays in an array: in a map it would cross the
         * map's keys, which must be str (args) or hashable. */
        const bool run = !in_args && !(flags & WALK_IS_MAP);
        if (b == 0x82 && depth + 2 <= LCT_MAX_DEPTH && !in_key &&
            key_step(&keys, &p, end, utf8, run, stack, &depth, &rem,
                     &flags, map_flag))
            continue;
        const unsigned char *head = p;
        size_t items;
        unsigned is_map;
        if (b < 0xa0) { /* fixmap (pairs count twice) or fixarray */
            is_map = b < 0x90;
            items = (size_t)(b & 0x0f) << is_map;
            p++;
        } else {
            is_map = b == 0xde || b == 0xdf;
            int rc = walk_sized(&p, end, utf8, timestamps, in_key != 0,
                                &items, &fault);
            if (rc < 0)
                WALK_FAIL(rc, fault);
            if (rc == 0)
                continue;
        }
        /* A container: p is its first element; items values follow */
        int rc = open_container(stack, &depth, &rem, &flags, items,
                                (is_map & map_flag) | (in_key ? WALK_IN_KEY : 0u),
                                (size_t)(end - p), &fault);
        if (rc < 0)
            WALK_FAIL(rc, fault);
        if (keys.note && !is_map) /* a list of keys, maybe */
            keys.list = head, keys.list_first = p, keys.list_count = items;
    }
}

