/*
 * policy_belady.c - Belady as libCacheSim's Belady.c has it: the key
 * whose next use is farthest goes, from a binary heap on the next use
 * that moves as libCacheSim's pqueue moves (its compare a strict <), so
 * that among keys never used again the same one goes.  In bytes which of
 * those goes changes what is held, never a hit: all of them go before
 * any key used again.
 */
#include "lmcache/policy_internal.h"
#include "lmcache/policy_stream_internal.h"

#include <stdlib.h>

#define NIL LCT__POLICY_NIL

LCT__STEP bool before(const lct_policy *p, uint32_t a, uint32_t b)
{
    return p->next_use[a] < p->next_use[b];
}

LCT__STEP void put(lct_policy *p, uint32_t at, uint32_t slot)
{
    p->heap[at] = slot;
    p->slots[slot].heap_at = at;
}

LCT__STEP void bubble_up(lct_policy *p, uint32_t at)
{
    uint32_t moving = p->heap[at];
    while (at > 1 && before(p, p->heap[at >> 1], moving)) {
        put(p, at, p->heap[at >> 1]);
        at >>= 1;
    }
    put(p, at, moving);
}

LCT__STEP uint32_t max_child(const lct_policy *p, uint32_t at)
{
    uint32_t child = at << 1;
    if (child > p->heap_n)
        return 0;
    if (child + 1 <= p->heap_n && before(p, p->heap[child], p->heap[child + 1]))
        child++;
    return child;
}

LCT__STEP void percolate_down(lct_policy *p, uint32_t at)
{
    uint32_t moving = p->heap[at], child;
    while ((child = max_child(p, at)) && before(p, moving, p->heap[child])) {
        put(p, at, p->heap[child]);
        at = child;
    }
    put(p, at, moving);
}

static bool belady_init(lct_policy *p)
{
    (void)p;
    return true;
}

/* pqueue_change_priority: a hit's next use is always later */
LCT__STEP int belady_found(lct_policy *p, uint32_t i, int64_t next_use)
{
    int64_t old = p->next_use[i];
    p->next_use[i] = next_use;
    if (old < next_use)
        bubble_up(p, p->slots[i].heap_at);
    else
        percolate_down(p, p->slots[i].heap_at);
    return 1;
}

/* pqueue_pop */
LCT__STEP bool belady_evict(lct_policy *p, uint64_t incoming)
{
    (void)incoming;
    uint32_t top = p->heap[1];
    p->heap[1] = p->heap[p->heap_n--];
    if (p->heap_n >= 1) {
        p->slots[p->heap[1]].heap_at = 1;
        percolate_down(p, 1);
    }
    p->used -= p->slots[top].bytes;
    lct__policy_slot_drop(p, top);
    return true;
}

/* pqueue_insert */
LCT__STEP int belady_insert(lct_policy *p, uint64_t key, uint64_t bytes,
                            int64_t next_use)
{
    if (p->heap_n + 2 > p->heap_room &&
        !lct__policy_grow(&p->heap, &p->heap_room, sizeof *p->heap, 64))
        return LCT_ERR_NOMEM;
    /* the slot is a free one or the next one */
    if (p->nslots + 1 > p->next_use_room &&
        !lct__policy_grow(&p->next_use, &p->next_use_room,
                          sizeof *p->next_use, 64))
        return LCT_ERR_NOMEM;
    uint32_t i = lct__policy_slot_add(p, key, bytes);
    if (i == NIL)
        return LCT_ERR_NOMEM;
    p->next_use[i] = next_use;
    put(p, ++p->heap_n, i);
    bubble_up(p, p->heap_n);
    p->used += bytes;
    return 1;
}

static void belady_stream(lct_policy *p, const lct__pstream *s,
                          lct_policy_point *pt)
{
    lct__policy_stream(p,
                       (lct__psteps){.found = belady_found,
                                     .evict = belady_evict,
                                     .insert = belady_insert},
                       s, pt);
}

const lct__policy_ops lct__policy_belady_ops = {
    .init = belady_init,
    .found = belady_found,
    .evict = belady_evict,
    .insert = belady_insert,
    .stream = belady_stream,
};
