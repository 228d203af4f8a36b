/*
 * policy_s3fifo.c - S3-FIFO as libCacheSim's S3FIFO.c has it, with its
 * default parameters (fifo-size-ratio 0.10, ghost-size-ratio 0.90,
 * move-to-main-threshold 2): a small FIFO of a tenth of the capacity
 * (rounded down), a main FIFO of the rest, and a ghost FIFO of the keys
 * evicted from the small one (nine tenths of the capacity, by their
 * sizes).  Its rules:
 * - a hit adds 1 to the key's count, in either queue (the count kept
 *   at 3 at most, which no rule below tells from more);
 * - a missed key found in the ghost queue leaves it and enters main;
 *   any other enters the small queue, unless it weighs as much as the
 *   small queue or more (libCacheSim then evicts for it and leaves it
 *   out; a key heavier than the small queue is not even evicted for);
 * - an eviction takes from main while main weighs more than its share
 *   or the small queue is empty: main's oldest goes back to the newest
 *   end with its count min(count, 3) - 1 while its count is at least 1,
 *   else it goes; otherwise from the small queue: its oldest moves to
 *   main (count 0) while its count is at least 2, else it goes, into
 *   the ghost queue.
 */
#include "lmcache/policy_internal.h"
#include "lmcache/policy_stream_internal.h"

#define NIL LCT__POLICY_NIL

enum { SMALL, MAIN, GHOST };

/* The three queues' sizes, from the capacity as libCacheSim works them
 * out (a double, truncated). */
static void s3fifo_resize(lct_policy *p)
{
    double c = (double)p->capacity;
    p->small_size = (uint64_t)(c * 0.10);
    p->main_size = p->capacity - p->small_size;
    p->ghost_size = (uint64_t)(c * 0.90);
    while (p->list_bytes[GHOST] > p->ghost_size) {
        uint32_t old = p->lists[GHOST].last;
        lct__policy_list_leave(p, old);
        lct__policy_slot_drop(p, old);
    }
}

static bool s3fifo_init(lct_policy *p)
{
    for (int l = 0; l < 3; l++)
        p->lists[l] = LCT__PLIST_EMPTY;
    s3fifo_resize(p);
    return true;
}

LCT__STEP int s3fifo_found(lct_policy *p, uint32_t i, int64_t next_use)
{
    (void)next_use;
    lct__pslot *s = &p->slots[i];
    if (s->where != GHOST) {
        if (s->freq < 3) /* no rule tells 3 from more */
            s->freq++;
        return 1;
    }
    lct__policy_list_leave(p, i);
    lct__policy_slot_drop(p, i);
    p->ghost_hit = true;
    return 0;
}

LCT__STEP bool s3fifo_can_insert(const lct_policy *p, uint64_t bytes)
{
    return bytes <= p->small_size;
}

/* Slot i, just out of the small queue, into the ghost queue (FIFO of
 * ghost_size: its oldest forgotten until i fits), or forgotten. */
LCT__STEP void to_ghost(lct_policy *p, uint32_t i)
{
    uint64_t bytes = p->slots[i].bytes;
    if (p->ghost_size == 0 || bytes > p->ghost_size) {
        lct__policy_slot_drop(p, i);
        return;
    }
    while (p->list_bytes[GHOST] + bytes > p->ghost_size) {
        uint32_t old = p->lists[GHOST].last;
        lct__policy_list_leave(p, old);
        lct__policy_slot_drop(p, old);
    }
    p->slots[i].freq = 0;
    lct__policy_list_enter(p, i, GHOST);
}

LCT__STEP void evict_small(lct_policy *p)
{
    while (p->list_bytes[SMALL] > 0) {
        uint32_t v = p->lists[SMALL].last;
        lct__policy_list_leave(p, v);
        if (p->slots[v].freq >= 2) {
            p->slots[v].freq = 0;
            lct__policy_list_enter(p, v, MAIN);
            continue;
        }
        p->used -= p->slots[v].bytes;
        to_ghost(p, v);
        return;
    }
}

LCT__STEP void evict_main(lct_policy *p)
{
    while (p->list_bytes[MAIN] > 0) {
        uint32_t v = p->lists[MAIN].last;
        lct__policy_list_leave(p, v);
        int freq = p->slots[v].freq;
        if (freq >= 1) {
            p->slots[v].freq = (uint8_t)((freq < 3 ? freq : 3) - 1);
            lct__policy_list_enter(p, v, MAIN);
            continue;
        }
        p->used -= p->slots[v].bytes;
        lct__policy_slot_drop(p, v);
        return;
    }
}

LCT__STEP bool s3fifo_evict(lct_policy *p, uint64_t incoming)
{
    (void)incoming;
    if (p->list_bytes[MAIN] > p->main_size || p->list_bytes[SMALL] == 0)
        evict_main(p);
    else
        evict_small(p);
    return true;
}

LCT__STEP int s3fifo_insert(lct_policy *p, uint64_t key, uint64_t bytes,
                            int64_t next_use)
{
    (void)next_use;
    int to = MAIN;
    if (!p->ghost_hit) {
        if (bytes >= p->small_size)
            return 0;
        to = SMALL;
    }
    uint32_t i = lct__policy_slot_add(p, key, bytes);
    if (i == NIL)
        return LCT_ERR_NOMEM;
    lct__policy_list_enter(p, i, to);
    p->used += bytes;
    return 1;
}

static void s3fifo_stream(lct_policy *p, const lct__pstream *s,
                          lct_policy_point *pt)
{
    lct__policy_stream(p,
                       (lct__psteps){.found = s3fifo_found,
                                     .can_insert = s3fifo_can_insert,
                                     .evict = s3fifo_evict,
                                     .insert = s3fifo_insert},
                       s, pt);
}

const lct__policy_ops lct__policy_s3fifo_ops = {
    .init = s3fifo_init,
    .resize = s3fifo_resize,
    .found = s3fifo_found,
    .can_insert = s3fifo_can_insert,
    .evict = s3fifo_evict,
    .insert = s3fifo_insert,
    .stream = s3fifo_stream,
};
