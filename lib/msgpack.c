/*
 * msgpack.c - the byte-level msgpack layer: value headers, stepping over
 * whole values (with optional validation as the reference decoder does it),
 * and strict UTF-8 checking.
 *
 * This is the only place that knows msgpack's first-byte encoding.  It
 * owns no memory and never recurses, so hostile nesting costs a bounded
 * array of counters, not the stack.
 */
#include "msgpack_internal.h"

#include <stdbool.h>

int lct__mp_head_parse(const unsigned char *p, const unsigned char *end,
                       lct__mp_head *h)
{
    if (p >= end)
        return LCT_ERR_MALFORMED;
    size_t left = (size_t)(end - p);
    unsigned b = p[0];
    h->ext_type = 0;
    h->n = 0;

    if (b <= 0x7f || b >= 0xe0) {
        h->type = LCT_TYPE_INT;
        h->head = 1;
        return LCT_OK;
    }
    if (b <= 0x8f) {
        h->type = LCT_TYPE_MAP;
        h->head = 1;
        h->n = b & 0x0f;
        return LCT_OK;
    }
    if (b <= 0x9f) {
        h->type = LCT_TYPE_ARRAY;
        h->head = 1;
        h->n = b & 0x0f;
        return LCT_OK;
    }
    if (b <= 0xbf) {
        h->type = LCT_TYPE_STR;
        h->head = 1;
        h->n = b & 0x1f;
        return LCT_OK;
    }

    /* 0xc0 .. 0xdf: the header size is fixed by the byte; check it once. */
    static const unsigned char head_size[32] = {
        /* c0 nil */ 1, /* c1 reserved */ 0, /* c2 c3 bool */ 1, 1,
        /* c4 c5 c6 bin */ 2, 3, 5,
        /* c7 c8 c9 ext */ 3, 4, 6,
        /* ca cb float */ 5, 9,
        /* cc cd ce cf uint */ 2, 3, 5, 9,
        /* d0 d1 d2 d3 int */ 2, 3, 5, 9,
        /* d4 .. d8 fixext */ 2, 2, 2, 2, 2,
        /* d9 da db str */ 2, 3, 5,
        /* dc dd array */ 3, 5,
        /* de df map */ 3, 5,
    };
    unsigned head = head_size[b - 0xc0];
    if (head == 0 || head > left)
        return LCT_ERR_MALFORMED;
    h->head = head;

    switch (b) {
    case 0xc0: h->type = LCT_TYPE_NIL; break;
    case 0xc2: case 0xc3: h->type = LCT_TYPE_BOOL; break;
    case 0xc4: h->type = LCT_TYPE_BIN; h->n = p[1]; break;
    case 0xc5: h->type = LCT_TYPE_BIN; h->n = lct__be16(p + 1); break;
    case 0xc6: h->type = LCT_TYPE_BIN; h->n = lct__be32(p + 1); break;
    case 0xc7:
        h->type = LCT_TYPE_EXT; h->n = p[1]; h->ext_type = (int8_t)p[2];
        break;
    case 0xc8:
        h->type = LCT_TYPE_EXT; h->n = lct__be16(p + 1);
        h->ext_type = (int8_t)p[3];
        break;
    case 0xc9:
        h->type = LCT_TYPE_EXT; h->n = lct__be32(p + 1);
        h->ext_type = (int8_t)p[5];
        break;
    case 0xca: h->type = LCT_TYPE_FLOAT32; break;
    case 0xcb: h->type = LCT_TYPE_FLOAT64; break;
    case 0xcc: case 0xcd: case 0xce: case 0xcf:
    case 0xd0: case 0xd1: case 0xd2: case 0xd3:
        h->type = LCT_TYPE_INT;
        break;
    case 0xd4: case 0xd5: case 0xd6: case 0xd7: case 0xd8:
        h->type = LCT_TYPE_EXT;
        h->n = 1u << (b - 0xd4);
        h->ext_type = (int8_t)p[1];
        break;
    case 0xd9: h->type = LCT_TYPE_STR; h->n = p[1]; break;
    case 0xda: h->type = LCT_TYPE_STR; h->n = lct__be16(p + 1); break;
    case 0xdb: h->type = LCT_TYPE_STR; h->n = lct__be32(p + 1); break;
    case 0xdc: h->type = LCT_TYPE_ARRAY; h->n = lct__be16(p + 1); break;
    case 0xdd: h->type = LCT_TYPE_ARRAY; h->n = lct__be32(p + 1); break;
    case 0xde: h->type = LCT_TYPE_MAP; h->n = lct__be16(p + 1); break;
    case 0xdf: h->type = LCT_TYPE_MAP; h->n = lct__be32(p + 1); break;
    default: return LCT_ERR_MALFORMED;
    }
    return LCT_OK;
}

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

int lct__mp_walk(const unsigned char *p, const unsigned char *end,
                 unsigned mode, const unsigned char **out, const char **why,
                 const unsigned char **at)
{
    /* remaining[d]: values still to read inside the container open at
     * depth d; depth 0 holds the one top value. */
    size_t remaining[LCT_MAX_DEPTH + 1];
    unsigned depth = 0;
    remaining[0] = 1;
    bool str_keys = (mode & LCT__WALK_STR_KEYS) != 0;
    bool top = true;

    for (;;) {
        while (remaining[depth] == 0) {
            if (depth == 0) {
                *out = p;
                return LCT_OK;
            }
            depth--;
        }
        remaining[depth]--;

        lct__mp_head h;
        if (p >= end)
            WALK_FAIL(LCT_ERR_MALFORMED, "data ends inside a value");
        if (lct__mp_head_parse(p, end, &h) != LCT_OK)
            WALK_FAIL(LCT_ERR_MALFORMED,
                      *p == 0xc1 ? "reserved byte 0xc1"
                                 : "data ends inside a value header");
        if (str_keys) {
            if (top && h.type != LCT_TYPE_MAP)
                WALK_FAIL(LCT_ERR_MALFORMED, "args is not a map");
            /* In the top map, keys sit where an odd count remains. */
            if (!top && depth == 1 && (remaining[1] & 1) &&
                h.type != LCT_TYPE_STR)
                WALK_FAIL(LCT_ERR_MALFORMED, "args key is not a str");
        }
        top = false;

        const unsigned char *payload = p + h.head;
        size_t left = (size_t)(end - payload);
        switch (h.type) {
        case LCT_TYPE_STR:
            if (h.n > left)
                WALK_FAIL(LCT_ERR_MALFORMED, "str runs past the end of data");
            if ((mode & LCT__WALK_UTF8) && !lct__utf8_valid(payload, h.n))
                WALK_FAIL(LCT_ERR_MALFORMED, "str is not valid UTF-8");
            p = payload + h.n;
            break;
        case LCT_TYPE_BIN:
            if (h.n > left)
                WALK_FAIL(LCT_ERR_MALFORMED, "bin runs past the end of data");
            p = payload + h.n;
            break;
        case LCT_TYPE_EXT:
            if (h.n > left)
                WALK_FAIL(LCT_ERR_MALFORMED, "ext runs past the end of data");
            if ((mode & LCT__WALK_TIMESTAMP) &&
                h.ext_type == LCT_EXT_TIMESTAMP &&
                !timestamp_valid(payload, h.n))
                WALK_FAIL(LCT_ERR_MALFORMED, "invalid timestamp ext");
            p = payload + h.n;
            break;
        case LCT_TYPE_ARRAY:
        case LCT_TYPE_MAP: {
            size_t items = h.type == LCT_TYPE_MAP ? 2 * (size_t)h.n : h.n;
            p = payload;
            if (items == 0)
                break;
            /* Every value takes at least one byte. */
            if (items > left)
                WALK_FAIL(LCT_ERR_MALFORMED,
                          "container count exceeds the data left");
            if (depth == LCT_MAX_DEPTH)
                WALK_FAIL(LCT_ERR_DEPTH, "nesting deeper than LCT_MAX_DEPTH");
            remaining[++depth] = items;
            break;
        }
        default: /* scalars: the header is the whole value */
            p = payload;
            break;
        }
    }
}
