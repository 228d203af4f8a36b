/*
 * l1.c - the replay's L1: an LRU of keys or bytes in front of the
 * backend, the list lct_refs_behind_l1 keeps (lib/lmcache/lru_internal.h),
 * so a replay's backend sees the stream whose curve `lct mrc --l1` draws;
 * keys are numbered as they first come, since a replay streams and cannot
 * number them beforehand.  Or, when asked, another policy's cache
 * (lct_policy), which keeps keys by their ids.
 */
#include <stdlib.h>

#include "replay/replay_internal.h"
#include "lct_cache.h"
#include "lct_replay.h"

/* The key's number, given one when new; false when memory ran out. */
static bool number(lct__l1 *l1, uint64_t id, uint32_t *k)
{
    bool added;
    lct__u64map_entry *e = lct__u64map_get(&l1->ids, id, &added);
    if (!e)
        return false;
    if (!added) {
        *k = (uint32_t)(e->value - 1);
        return true;
    }
    if (l1->n == UINT32_MAX - 1)
        return false;
    if (l1->n == l1->cap) {
        size_t cap = l1->cap * 2 < UINT32_MAX ? (size_t)l1->cap * 2
                                              : UINT32_MAX;
        if (!lct__lru_grow(&l1->lru, l1->cap, cap))
            return false;
        l1->cap = (uint32_t)cap;
    }
    *k = l1->n++;
    e->value = (uint64_t)*k + 1;
    return true;
}

bool lct__l1_init(lct__l1 *l1, uint64_t capacity, bool in_bytes,
                  lct_policy_kind policy)
{
    *l1 = (lct__l1){.in_bytes = in_bytes, .capacity = capacity};
    /* another policy keeps its keys by id in a map of its own */
    if (policy && policy != LCT_POLICY_LRU)
        return lct_policy_new(policy, capacity, &l1->policy, NULL) == LCT_OK;
    l1->cap = 1024;
    return lct__lru_alloc(&l1->lru, l1->cap, capacity, in_bytes);
}

bool lct__l1_touch(lct__l1 *l1, uint64_t id, uint64_t bytes, bool *held)
{
    if (l1->policy) {
        *held = lct_policy_holds(l1->policy, id);
        uint64_t weight = l1->in_bytes && bytes ? bytes : 1;
        l1->bypassed += weight > l1->capacity;
        return lct_policy_get(l1->policy, id, weight, INT64_MAX) >= 0;
    }
    uint32_t k;
    if (!number(l1, id, &k))
        return false;
    *held = l1->lru.in[k];
    lct__lru_touch(&l1->lru, k, bytes);
    return true;
}

bool lct__l1_end_call(lct__l1 *l1)
{
    return !l1->policy || lct_policy_end_call(l1->policy) >= 0;
}

uint64_t lct__l1_evictions(const lct__l1 *l1)
{
    return l1->policy ? lct_policy_evictions(l1->policy) : l1->lru.evictions;
}

uint64_t lct__l1_bypassed(const lct__l1 *l1)
{
    return l1->policy ? l1->bypassed : l1->lru.bypassed;
}

void lct__l1_free(lct__l1 *l1)
{
    lct_policy_free(l1->policy);
    lct__lru_free(&l1->lru);
    lct__u64map_free(&l1->ids);
}
