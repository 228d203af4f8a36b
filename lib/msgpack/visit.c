/*
 * visit.c - lct_value_visit: every value inside a value, once each, in one
 * pass, with open and close events for containers.  Nested lct_iter loops
 * step over each element to find where it ends and so read deep data
 * once per level; this reads it once.
 */
#include "msgpack/msgpack_internal.h"
#include "lct_core.h"

#include <stdbool.h>

typedef struct level {
    const unsigned char *ptr; /* the container's first byte */
    size_t remaining;         /* values still to read in the enclosing one */
    uint32_t count;
    bool is_map;
} level;

/* The walk's state, kept in one place so its steps can be named; the
 * steps are inlined (always_inline), so naming them costs no call. */
typedef struct visitor {
    const unsigned char *p, *end;
    level stack[LCT_MAX_DEPTH + 1];
    unsigned depth;
    size_t rem;   /* values still to read in the innermost container */
    bool in_map;  /* is the innermost open container a map? */
    lct_visit ev;
    lct_visit_fn fn;
    void *ctx;
} visitor;

#define STEP static inline __attribute__((always_inline))

/* Close every container that has no values left; *done at the top. */
STEP int close_finished(visitor *vs, bool *done)
{
    while (vs->rem == 0) {
        if (vs->depth == 0) {
            *done = true;
            return 0;
        }
        level *l = &vs->stack[--vs->depth];
        vs->ev.value.ptr = l->ptr;
        vs->ev.value.len = (size_t)(vs->p - l->ptr);
        vs->ev.type = l->is_map ? LCT_TYPE_MAP : LCT_TYPE_ARRAY;
        vs->ev.depth = vs->depth;
        vs->ev.is_key = false;
        vs->ev.end = true;
        vs->ev.count = l->count;
        vs->rem = l->remaining;
        vs->in_map = vs->depth > 0 && vs->stack[vs->depth - 1].is_map;
        int rc = vs->fn(vs->ctx, &vs->ev);
        if (rc != 0)
            return rc;
    }
    return 0;
}

/* Report a value of `size` bytes that is not a container, and pass it. */
STEP int leaf(visitor *vs, lct_type type, size_t size)
{
    vs->ev.type = type;
    vs->ev.value.len = size;
    int rc = vs->fn(vs->ctx, &vs->ev);
    vs->p += size;
    return rc;
}

/* Report a container opening and enter it. */
STEP int open_container(visitor *vs, bool is_map, size_t items,
                        const unsigned char *payload)
{
    if (items > (size_t)(vs->end - payload))
        return LCT_ERR_MALFORMED;
    vs->ev.type = is_map ? LCT_TYPE_MAP : LCT_TYPE_ARRAY;
    vs->ev.value.len = (size_t)(vs->end - vs->p);
    int rc = vs->fn(vs->ctx, &vs->ev);
    if (rc != 0)
        return rc;
    if (vs->depth == LCT_MAX_DEPTH)
        return LCT_ERR_DEPTH;
    level *l = &vs->stack[vs->depth++];
    l->ptr = vs->p;
    l->remaining = vs->rem;
    l->count = vs->ev.count;
    l->is_map = is_map;
    vs->rem = items;
    vs->in_map = is_map;
    vs->p = payload;
    return 0;
}

/* A value whose size its head gives (not a fix type). */
STEP int sized(visitor *vs)
{
    lct__mp_head h;
    if (lct__mp_head_parse(vs->p, vs->end, &h) != LCT_OK)
        return LCT_ERR_MALFORMED;
    const unsigned char *payload = vs->p + h.head;
    if (h.type == LCT_TYPE_ARRAY || h.type == LCT_TYPE_MAP) {
        bool is_map = h.type == LCT_TYPE_MAP;
        vs->ev.count = h.n;
        return open_container(vs, is_map, is_map ? 2 * (size_t)h.n : h.n,
                              payload);
    }
    size_t size = h.head;
    if (h.type == LCT_TYPE_STR || h.type == LCT_TYPE_BIN ||
        h.type == LCT_TYPE_EXT) {
        if (h.n > (size_t)(vs->end - payload))
            return LCT_ERR_MALFORMED;
        size += h.n;
    }
    return leaf(vs, h.type, size);
}

/* The next value: fix types from their first byte, the rest by size. */
STEP int one_value(visitor *vs)
{
    unsigned b = *vs->p;
    vs->ev.value.ptr = vs->p;
    vs->ev.depth = vs->depth;
    vs->ev.is_key = vs->in_map && (vs->rem & 1);
    vs->ev.end = false;
    vs->ev.count = 0;
    if ((b & 0xe0) == 0xa0) { /* fixstr */
        size_t n = b & 0x1f;
        if (n >= (size_t)(vs->end - vs->p))
            return LCT_ERR_MALFORMED;
        return leaf(vs, LCT_TYPE_STR, n + 1);
    }
    if (b < 0x80 || b >= 0xe0) /* fixint */
        return leaf(vs, LCT_TYPE_INT, 1);
    if (b < 0xa0) { /* fixmap or fixarray */
        bool is_map = b < 0x90;
        vs->ev.count = b & 0x0f;
        return open_container(vs, is_map, (size_t)vs->ev.count << is_map,
                              vs->p + 1);
    }
    return sized(vs);
}

/*
 * Same shape as lct__mp_walk: the innermost container's counter in `rem`,
 * the outer ones on a fixed stack; fix types are decoded from the first
 * byte, the rest through the hint table.
 */
int lct_value_visit(lct_value v, lct_visit_fn fn, void *ctx)
{
    if (!v.ptr || !fn)
        return v.ptr ? LCT_ERR_INVALID : LCT_ERR_MALFORMED;
    visitor vs;
    vs.p = v.ptr;
    vs.end = v.ptr + v.len;
    vs.depth = 0;
    vs.rem = 1;
    vs.in_map = false;
    vs.fn = fn;
    vs.ctx = ctx;
    for (;;) {
        bool done = false;
        int rc = close_finished(&vs, &done);
        if (rc != 0 || done)
            return rc;
        vs.rem--;
        if (vs.p >= vs.end)
            return LCT_ERR_MALFORMED;
        if ((rc = one_value(&vs)) != 0)
            return rc;
    }
}
