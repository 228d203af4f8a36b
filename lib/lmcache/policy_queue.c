/*
 * policy_queue.c - the policies that are one queue, the newest first, as
 * libCacheSim has them: FIFO, LRU, CLOCK, SIEVE and MRU.  They share the
 * queue and differ in what a hit does and which key goes; each gets steps
 * of its own (QUEUE_POLICY) so that its stream runs them with its kind a
 * constant.
 */
#include "lmcache/policy_internal.h"
#include "lmcache/policy_stream_internal.h"

#define NIL LCT__POLICY_NIL

static bool queue_init(lct_policy *p)
{
    p->queue = LCT__PLIST_EMPTY;
    p->hand = NIL;
    return true;
}

LCT__STEP int queue_found(lct_policy *p, uint32_t i,
                          lct_policy_kind kind)
{
    switch (kind) {
    case LCT_POLICY_LRU: /* to the newest end */
    case LCT_POLICY_MRU:
        lct__slot_unlink(p->slots, &p->queue, i);
        lct__slot_push_first(p->slots, &p->queue, i);
        break;
    case LCT_POLICY_CLOCK: /* its bit set (a 1-bit counter) */
    case LCT_POLICY_SIEVE:
        p->slots[i].freq = 1;
        break;
    default: /* FIFO: nothing */
        break;
    }
    return 1;
}

/* The slot the policy evicts: CLOCK and SIEVE clear bits as they look. */
LCT__STEP uint32_t queue_victim(lct_policy *p, lct_policy_kind kind)
{
    lct__pslot *s = p->slots;
    uint32_t v;
    if (kind == LCT_POLICY_CLOCK) {
        /* the oldest with its bit set goes back to the newest end, its
         * bit cleared, until the oldest has none */
        while (s[v = p->queue.last].freq >= 1) {
            s[v].freq--;
            lct__slot_unlink(s, &p->queue, v);
            lct__slot_push_first(s, &p->queue, v);
        }
        return v;
    }
    if (kind == LCT_POLICY_SIEVE) {
        /* the hand walks from where it stopped (the oldest at first)
         * toward the newest, clearing bits, round to the oldest again;
         * the first key without one goes, and the hand waits at the key
         * newer than it (none: the oldest, next time) */
        v = p->hand == NIL ? p->queue.last : p->hand;
        while (s[v].freq > 0) {
            s[v].freq--;
            v = s[v].prev == NIL ? p->queue.last : s[v].prev;
        }
        p->hand = s[v].prev;
        return v;
    }
    if (kind == LCT_POLICY_MRU)
        return p->queue.first; /* the newest */
    return p->queue.last; /* FIFO, LRU: the oldest */
}

LCT__STEP bool queue_evict(lct_policy *p, lct_policy_kind kind)
{
    uint32_t v = queue_victim(p, kind);
    lct__slot_unlink(p->slots, &p->queue, v);
    p->used -= p->slots[v].bytes;
    lct__policy_slot_drop(p, v);
    return true;
}

LCT__STEP int queue_insert(lct_policy *p, uint64_t key, uint64_t bytes,
                           int64_t next_use)
{
    (void)next_use;
    uint32_t i = lct__policy_slot_add(p, key, bytes);
    if (i == NIL)
        return LCT_ERR_NOMEM;
    lct__slot_push_first(p->slots, &p->queue, i); /* its bit clear */
    p->used += bytes;
    return 1;
}

#define QUEUE_POLICY(name, kind)                                           \
    LCT__STEP int name##_found(lct_policy *p, uint32_t i, int64_t next_use)\
    {                                                                      \
        (void)next_use;                                                    \
        return queue_found(p, i, kind);                                    \
    }                                                                      \
    LCT__STEP bool name##_evict(lct_policy *p, uint64_t incoming)          \
    {                                                                      \
        (void)incoming;                                                    \
        return queue_evict(p, kind);                                       \
    }                                                                      \
    static void name##_stream(lct_policy *p, const lct__pstream *s,        \
                              lct_policy_point *pt)                        \
    {                                                                      \
        lct__policy_stream(p,                                              \
                           (lct__psteps){.found = name##_found,            \
                                         .evict = name##_evict,            \
                                         .insert = queue_insert},          \
                           s, pt);                                         \
    }                                                                      \
    const lct__policy_ops lct__policy_##name##_ops = {                     \
        .init = queue_init,                                                \
        .found = name##_found,                                             \
        .evict = name##_evict,                                             \
        .insert = queue_insert,                                            \
        .stream = name##_stream,                                           \
    };

QUEUE_POLICY(fifo, LCT_POLICY_FIFO)
QUEUE_POLICY(lru, LCT_POLICY_LRU)
QUEUE_POLICY(clock, LCT_POLICY_CLOCK)
QUEUE_POLICY(sieve, LCT_POLICY_SIEVE)
QUEUE_POLICY(mru, LCT_POLICY_MRU)
