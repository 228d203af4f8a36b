/*
 * policy_stream_internal.h - one reference through an lct_policy given its
 * policy's steps (lct__policy_get_with, which lct_policy_get is), and a
 * whole numbered reference stream through one cache, counted as
 * lct_policy_run counts it (lct__policy_stream).  Both are inline and take
 * the steps as arguments so that a policy's file can hand its own steps
 * in as constants: its stream then calls them directly, most of them
 * inlined, where a reference through the steps' pointers cost about twice
 * the instructions.
 */
#ifndef LCT_POLICY_STREAM_INTERNAL_H
#define LCT_POLICY_STREAM_INTERNAL_H

#include "lmcache/policy_internal.h"
#include "lmcache/refs_internal.h"

/* What a run reads of each reference, worked out once for every run:
 * its key's number (keys numbered from 0, the cache's dense array; and
 * LCT__PSTREAM_AHEAD more, 0, so that prefetching needs no test), its
 * flags (LCT__PSTREAM_*), its weight (NULL: 1) and its key's next use
 * (NULL: no policy asked reads it); and what every run counts alike, the
 * requests, what they weigh and the chunk positions. */
typedef struct lct__pstream {
    const uint32_t *key;
    const uint8_t *flags;
    const uint64_t *sizes;
    const uint32_t *next;
    size_t n;
    bool prefix;
    uint64_t requests, request_bytes, positions;
} lct__pstream;

/* A reference's flags: the first of its call; a request (a read, or any
 * reference with every_reference); under the prefix rule, a request that
 * ends a chunk position. */
#define LCT__PSTREAM_CALL 1u
#define LCT__PSTREAM_REQUEST 2u
#define LCT__PSTREAM_POSITION 4u
#define LCT__PSTREAM_AHEAD 16

typedef int (*lct__pfound_fn)(lct_policy *, uint32_t, int64_t);
typedef bool (*lct__pcan_insert_fn)(const lct_policy *, uint64_t);
typedef bool (*lct__pevict_fn)(lct_policy *, uint64_t);
typedef int (*lct__pinsert_fn)(lct_policy *, uint64_t, uint64_t, int64_t);
typedef int (*lct__pget_fn)(lct_policy *, uint64_t, uint64_t);
typedef int (*lct__pend_call_fn)(lct_policy *);

/* A policy's steps as lct__policy_ops holds them. */
typedef struct lct__psteps {
    lct__pfound_fn found;
    lct__pcan_insert_fn can_insert;
    lct__pevict_fn evict;
    lct__pinsert_fn insert;
    lct__pget_fn get;
    lct__pend_call_fn end_call;
} lct__psteps;

#define LCT__PSTEPS_OF(ops)                                                \
    ((lct__psteps){(ops)->found, (ops)->can_insert, (ops)->evict,          \
                   (ops)->insert, (ops)->get, (ops)->end_call})

/* lct_policy_get past its argument checks: a reference run as
 * libCacheSim's cache_get_base runs it (policy.c says how). */
LCT__STEP int lct__policy_get_with(lct_policy *p, lct__psteps steps,
                                   uint64_t key, uint64_t bytes,
                                   int64_t next_use)
{
    if (steps.get) {
        int held = steps.get(p, key, bytes);
        p->broken = held < 0;
        return held;
    }
    p->ghost_hit = false;
    uint32_t at = lct__policy_lookup(p, key);
    if (at) {
        int found = steps.found(p, at - 1, next_use);
        if (found != 0) {
            if (found < 0)
                p->broken = true;
            return found;
        }
    }
    if (steps.can_insert ? !steps.can_insert(p, bytes) : bytes > p->capacity)
        return 0; /* never fits: not inserted */
    while (p->used + bytes > p->capacity) {
        if (!steps.evict(p, bytes)) {
            p->broken = true;
            return LCT_ERR_NOMEM;
        }
    }
    int in = steps.insert(p, key, bytes, next_use);
    if (in < 0) {
        p->broken = true;
        return in;
    }
    p->inserted += (uint64_t)in;
    return 0;
}

/* lct_policy_end_call past its argument checks. */
LCT__STEP int lct__policy_end_call_with(lct_policy *p, lct__psteps steps)
{
    if (!steps.end_call)
        return LCT_OK;
    int st = steps.end_call(p);
    p->broken = st < 0;
    return st;
}

/* lct__policy_stream with the prefix rule and weights constants. */
LCT__STEP void lct__policy_stream_as(lct_policy *p, lct__psteps steps,
                                     const lct__pstream *s,
                                     lct_policy_point *pt, bool prefix,
                                     bool sized)
{
    const uint32_t *key = s->key, *next = s->next, *dense = p->dense;
    const uint8_t *flags = s->flags;
    const uint64_t *sizes = s->sizes;
    const size_t n = s->n;
    uint64_t hits = 0, hit_bytes = 0, positions_hit = 0;
    bool leading = true; /* the prefix rule: the call's requests so far */
    for (size_t i = 0; i < n; i++) {
        /* the key's slot some references ahead: a run is bound by its
         * misses in memory as much as by its work */
        __builtin_prefetch(&dense[key[i + LCT__PSTREAM_AHEAD]]);
        uint32_t f = flags[i];
        uint64_t bytes = sized ? sizes[i] : 1;
        int64_t next_use = next && next[i] ? (int64_t)next[i] : INT64_MAX;
        if ((f & LCT__PSTREAM_CALL) && lct__policy_end_call_with(p, steps) < 0)
            break;
        int got = lct__policy_get_with(p, steps, key[i], bytes, next_use);
        if (got < 0)
            break;
        bool hit = got && (f & LCT__PSTREAM_REQUEST);
        if (prefix) {
            leading = leading || (f & LCT__PSTREAM_CALL);
            if (f & LCT__PSTREAM_REQUEST)
                hit = leading = leading && got;
            positions_hit += leading && (f & LCT__PSTREAM_POSITION);
        }
        hits += hit;
        if (sized)
            hit_bytes += hit ? bytes : 0;
    }
    pt->requests += s->requests;
    pt->request_bytes += s->request_bytes;
    pt->positions += s->positions;
    pt->hits += hits;
    pt->hit_bytes += hit_bytes;
    pt->positions_hit += positions_hit;
}

/* The whole stream through p (keys by number: p->dense set), its
 * requests, hits and positions added to *pt; it stops at the first
 * failure, which leaves p broken (and *pt not to be read).  The prefix
 * rule and the weights are made constants of a loop each: tested a
 * reference, they cost ... */
LCT__STEP void lct__policy_stream(lct_policy *p, lct__psteps steps,
                                  const lct__pstream *s,
                                  lct_policy_point *pt)
{
    if (s->prefix && s->sizes)
        lct__policy_stream_as(p, steps, s, pt, true, true);
    else if (s->prefix)
        lct__policy_stream_as(p, steps, s, pt, true, false);
    else if (s->sizes)
        lct__policy_stream_as(p, steps, s, pt, false, true);
    else
        lct__policy_stream_as(p, steps, s, pt, false, false);
}

#endif
