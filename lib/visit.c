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
    size_t remaining;         /* values still to read inside it */
    uint32_t count;
    lct_type type;
} level;

int lct_value_visit(lct_value v, lct_visit_fn fn, void *ctx)
{
    if (!v.ptr || !fn)
        return v.ptr ? LCT_ERR_INVALID : LCT_ERR_MALFORMED;
    const unsigned char *p = v.ptr, *end = v.ptr + v.len;
    level stack[LCT_MAX_DEPTH + 1];
    unsigned depth = 0;
    stack[0].remaining = 1;
    stack[0].type = LCT_TYPE_INVALID;
    lct_visit ev;
    int rc;

    for (;;) {
        while (stack[depth].remaining == 0) {
            if (depth == 0)
                return LCT_OK;
            /* Close the container at this depth. */
            level *l = &stack[depth];
            ev.value.ptr = l->ptr;
            ev.value.len = (size_t)(p - l->ptr);
            ev.type = l->type;
            ev.depth = depth - 1;
            ev.is_key = false;
            ev.end = true;
            ev.count = l->count;
            depth--;
            if ((rc = fn(ctx, &ev)) != 0)
                return rc;
        }
        level *parent = &stack[depth];
        parent->remaining--;

        lct__mp_head h;
        if (lct__mp_head_parse(p, end, &h) != LCT_OK)
            return LCT_ERR_MALFORMED;
        const unsigned char *payload = p + h.head;
        size_t left = (size_t)(end - payload);
        ev.is_key = parent->type == LCT_TYPE_MAP && (parent->remaining & 1);
        ev.type = h.type;
        ev.depth = depth;
        ev.end = false;
        ev.count = 0;
        ev.value.ptr = p;

        if (h.type == LCT_TYPE_ARRAY || h.type == LCT_TYPE_MAP) {
            size_t items = h.type == LCT_TYPE_MAP ? 2 * (size_t)h.n : h.n;
            if (items > left)
                return LCT_ERR_MALFORMED;
            ev.value.len = (size_t)(end - p);
            ev.count = h.n;
            if ((rc = fn(ctx, &ev)) != 0)
                return rc;
            if (depth == LCT_MAX_DEPTH)
                return LCT_ERR_DEPTH;
            level *l = &stack[++depth];
            l->ptr = p;
            l->remaining = items;
            l->count = h.n;
            l->type = h.type;
            p = payload;
            continue;
        }
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
    }
}
