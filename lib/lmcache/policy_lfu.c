/*
 * policy_lfu.c - LFU as libCacheSim's LFU.c has it: a key enters at count
 * 1; a hit adds 1 and puts it last among the keys of its new count; the
 * first key of the lowest count goes (of those, the one that reached the
 * count first).  The counts held are buckets in a list, the lowest
 * first, so each step is a few links.
 */
#include "lmcache/policy_internal.h"
#include "lmcache/policy_stream_internal.h"

#include <stdlib.h>

#define NIL LCT__POLICY_NIL

LCT__STEP uint32_t bucket_new(lct_policy *p, int64_t freq)
{
    uint32_t b;
    if (p->free_bucket != NIL) {
        b = p->free_bucket;
        p->free_bucket = p->buckets[b].next;
    } else {
        if (p->nbuckets == p->bucket_room &&
            !lct__policy_grow(&p->buckets, &p->bucket_room,
                              sizeof *p->buckets, 16))
            return NIL;
        b = p->nbuckets++;
    }
    p->buckets[b] = (lct__pbucket){.freq = freq, .prev = NIL, .next = NIL,
                                   .keys = LCT__PLIST_EMPTY};
    return b;
}

/* Slot i out of its bucket; an emptied bucket goes. */
LCT__STEP void bucket_leave(lct_policy *p, uint32_t i)
{
    uint32_t b = p->slots[i].bucket;
    lct__slot_unlink(p->slots, &p->buckets[b].keys, i);
    if (p->buckets[b].keys.first == NIL) {
        lct__bucket_unlink(p->buckets, &p->by_freq, b);
        p->buckets[b].next = p->free_bucket;
        p->free_bucket = b;
    }
}

/* Slot i last in the bucket of count freq, which comes right after the
 * bucket `below` (NIL: first), made when missing. */
LCT__STEP bool bucket_enter(lct_policy *p, uint32_t i, int64_t freq,
                            uint32_t below)
{
    uint32_t b = below == NIL ? p->by_freq.first : p->buckets[below].next;
    if (b == NIL || p->buckets[b].freq != freq) {
        uint32_t nb = bucket_new(p, freq);
        if (nb == NIL)
            return false;
        if (below == NIL)
            lct__bucket_push_first(p->buckets, &p->by_freq, nb);
        else
            lct__bucket_insert_after(p->buckets, &p->by_freq, below, nb);
        b = nb;
    }
    p->slots[i].bucket = b;
    lct__slot_push_last(p->slots, &p->buckets[b].keys, i);
    return true;
}

static bool lfu_init(lct_policy *p)
{
    p->by_freq = LCT__PLIST_EMPTY;
    p->free_bucket = NIL;
    return true;
}

LCT__STEP int lfu_found(lct_policy *p, uint32_t i, int64_t next_use)
{
    (void)next_use;
    uint32_t b = p->slots[i].bucket;
    /* the bucket below the new count: b itself, unless it empties */
    uint32_t below = p->buckets[b].keys.first == i &&
                             p->buckets[b].keys.last == i
                         ? p->buckets[b].prev
                         : b;
    int64_t freq = p->buckets[b].freq + 1;
    bucket_leave(p, i);
    return bucket_enter(p, i, freq, below) ? 1 : LCT_ERR_NOMEM;
}

LCT__STEP bool lfu_evict(lct_policy *p, uint64_t incoming)
{
    (void)incoming;
    uint32_t v = p->buckets[p->by_freq.first].keys.first;
    bucket_leave(p, v);
    p->used -= p->slots[v].bytes;
    lct__policy_slot_drop(p, v);
    return true;
}

LCT__STEP int lfu_insert(lct_policy *p, uint64_t key, uint64_t bytes,
                         int64_t next_use)
{
    (void)next_use;
    uint32_t i = lct__policy_slot_add(p, key, bytes);
    if (i == NIL || !bucket_enter(p, i, 1, NIL))
        return LCT_ERR_NOMEM;
    p->used += bytes;
    return 1;
}

static void lfu_stream(lct_policy *p, const lct__pstream *s,
                       lct_policy_point *pt)
{
    lct__policy_stream(p,
                       (lct__psteps){.found = lfu_found,
                                     .evict = lfu_evict,
                                     .insert = lfu_insert},
                       s, pt);
}

const lct__policy_ops lct__policy_lfu_ops = {
    .init = lfu_init,
    .found = lfu_found,
    .evict = lfu_evict,
    .insert = lfu_insert,
    .stream = lfu_stream,
};
