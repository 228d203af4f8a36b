/*
 * visit.c - lct_value_visit: every value inside a value, once each, in one
 * pass, with open and close events for containers.  Nested lct_iter loops
 * step over each element to find where it ends and so read deep data
 * once per level; this reads it once.
 */
#include "msgpack_internal.h"

#include <stdbool.h>

typedef struct level {
    const unsigned char *ptr; /* the container's first byte */
    size_t remaining;         /* values still to read in the enclosing one */
    uint32_t count;
    bool is_map;
} level;

/*
 * Same shape as lct__mp_walk: the innermost container's counter in `rem`,
 * the outer ones on a fixed stack; fix types are decoded from the first
 * byte, the rest through the hint table.
 */
int lct_value_visit(lct_value v, lct_visit_fn fn, void *ctx)
{
    if (!v.ptr || !fn)
        return v.ptr ? LCT_ERR_INVALID : LCT_ERR_MALFORMED;
    const unsigned char *p = v.ptr, *end = v.ptr + v.len;
    level stack[LCT_MAX_DEPTH + 1];
    unsigned depth = 0;
    size_t rem = 1;
    bool in_map = false; /* is the innermost open container a map? */
    lct_visit ev;
    int rc;

    for (;;) {
        while (rem == 0) {
            if (depth == 0)
                return LCT_OK;
            /* Close the innermost container. */
            level *l = &stack[--depth];
            ev.value.ptr = l->ptr;
            ev.value.len = (size_t)(p - l->ptr);
            ev.type = l->is_map ? LCT_TYPE_MAP : LCT_TYPE_ARRAY;
            ev.depth = depth;
            ev.is_key = false;
            ev.end = true;
            ev.count = l->count;
            rem = l->remaining;
            in_map = depth > 0 && stack[depth - 1].is_map;
            if ((rc = fn(ctx, &ev)) != 0)
                return rc;
        }
        rem--;
        if (p >= end)
            return LCT_ERR_MALFORMED;
        unsigned b = *p;
        ev.value.ptr = p;
        ev.depth = depth;
        ev.is_key = in_map && (rem & 1);
        ev.end = false;
        ev.count = 0;

        size_t items;
        bool is_map;
        const unsigned char *payload;
        if ((b & 0xe0) == 0xa0) { /* fixstr */
            size_t n = b & 0x1f;
            if (n >= (size_t)(end - p))
                return LCT_ERR_MALFORMED;
            ev.type = LCT_TYPE_STR;
            ev.value.len = n + 1;
            if ((rc = fn(ctx, &ev)) != 0)
                return rc;
            p += n + 1;
            continue;
        }
        if (b < 0x80 || b >= 0xe0) { /* fixint */
            ev.type = LCT_TYPE_INT;
            ev.value.len = 1;
            if ((rc = fn(ctx, &ev)) != 0)
                return rc;
            p++;
            continue;
        }
        if (b < 0xa0) { /* fixmap or fixarray */
            is_map = b < 0x90;
            ev.count = b & 0x0f;
            items = (size_t)ev.count << is_map;
            payload = p + 1;
        } else {
            lct__mp_head h;
            if (lct__mp_head_parse(p, end, &h) != LCT_OK)
                return LCT_ERR_MALFORMED;
            payload = p + h.head;
            size_t left = (size_t)(end - payload);
            ev.type = h.type;
            if (h.type != LCT_TYPE_ARRAY && h.type != LCT_TYPE_MAP) {
                size_t size = h.head;
                if (h.type == LCT_TYPE_STR || h.type == LCT_TYPE_BIN ||
                    h.type == LCT_TYPE_EXT) {
                    if (h.n > left)
                        return LCT_ERR_MALFORMED;
                    size += h.n;
                }
                ev.value.len = size;
                if ((rc = fn(ctx, &ev)) != 0)
                    return rc;
                p += size;
                continue;
            }
            is_map = h.type == LCT_TYPE_MAP;
            ev.count = h.n;
            items = is_map ? 2 * (size_t)h.n : h.n;
        }
        /* A container opens. */
        if (items > (size_t)(end - payload))
            return LCT_ERR_MALFORMED;
        ev.type = is_map ? LCT_TYPE_MAP : LCT_TYPE_ARRAY;
        ev.value.len = (size_t)(end - p);
        if ((rc = fn(ctx, &ev)) != 0)
            return rc;
        if (depth == LCT_MAX_DEPTH)
            return LCT_ERR_DEPTH;
        level *l = &stack[depth++];
        l->ptr = p;
        l->remaining = rem;
        l->count = ev.count;
        l->is_map = is_map;
        rem = items;
        in_map = is_map;
        p = payload;
    }
}
