/*
 * policy.c - one cache of one capacity under a named eviction policy, fed
 * a key at a time (lct_policy).  Each policy behaves as libCacheSim's
 * implementation of that name does, tie for tie, so that a hit count can
 * be checked against its cachesim; each has its rules in a policy_*.c
 * (the queue policies, FIFO, LRU, CLOCK, SIEVE and MRU, in
 * policy_queue.c).
 *
 * A reference runs as libCacheSim's cache_get_base runs it: a key found
 * is a hit, updated as its policy says (its size is not changed, whatever
 * the reference says), unless the policy found only a ghost of it; a
 * missed key the policy cannot insert (heavier than the cache) is left
 * out; otherwise the policy evicts until the key fits, then inserts it.
 *
 * Memory is what the cache holds and remembers: a slot per key (freed
 * slots are reused) and a map from key to slot.
 */
#include "lmcache/policy_internal.h"
#include "lmcache/policy_stream_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/error_internal.h"

#define NIL LCT__POLICY_NIL

static const struct {
    const char *name;
    lct_policy_kind kind;
    const lct__policy_ops *ops;
} policies[] = {
    {"fifo", LCT_POLICY_FIFO, &lct__policy_fifo_ops},
    {"lru", LCT_POLICY_LRU, &lct__policy_lru_ops},
    {"clock", LCT_POLICY_CLOCK, &lct__policy_clock_ops},
    {"sieve", LCT_POLICY_SIEVE, &lct__policy_sieve_ops},
    {"lfu", LCT_POLICY_LFU, &lct__policy_lfu_ops},
    {"arc", LCT_POLICY_ARC, &lct__policy_arc_ops},
    {"s3fifo", LCT_POLICY_S3FIFO, &lct__policy_s3fifo_ops},
    {"belady", LCT_POLICY_BELADY, &lct__policy_belady_ops},
    {"mru", LCT_POLICY_MRU, &lct__policy_mru_ops},
    {"lmcache-lru", LCT_POLICY_LMCACHE_LRU, &lct__policy_mp_ops},
    {"lmcache-arc", LCT_POLICY_LMCACHE_ARC, &lct__policy_mp_ops},
    {"lmcache-s3fifo", LCT_POLICY_LMCACHE_S3FIFO, &lct__policy_mp_ops},
    {"lmcache-isolated-lru", LCT_POLICY_LMCACHE_ISOLATED_LRU,
     &lct__policy_isolated_ops},
};
#define NPOLICIES (sizeof policies / sizeof policies[0])

const char *lct_policy_name(lct_policy_kind kind)
{
    for (size_t i = 0; i < NPOLICIES; i++)
        if (policies[i].kind == kind)
            return policies[i].name;
    return NULL;
}

lct_status lct_policy_find(const char *name, lct_policy_kind *kind)
{
    for (size_t i = 0; name && i < NPOLICIES; i++) {
        if (strcasecmp(name, policies[i].name) == 0) {
            *kind = policies[i].kind;
            return LCT_OK;
        }
    }
    return LCT_ERR_INVALID;
}

bool lct_policy_by_call(lct_policy_kind kind)
{
    return kind == LCT_POLICY_LMCACHE_LRU || kind == LCT_POLICY_LMCACHE_ARC ||
           kind == LCT_POLICY_LMCACHE_S3FIFO ||
           kind == LCT_POLICY_LMCACHE_ISOLATED_LRU;
}

const char *lct_policy_names(void)
{
    return "fifo, lru, clock, sieve, lfu, arc, s3fifo, belady, mru, "
           "lmcache-lru, lmcache-arc, lmcache-s3fifo, lmcache-isolated-lru";
}

/* MARK: the cache */

lct_status lct_policy_new(lct_policy_kind kind, uint64_t capacity,
                          lct_policy **out, lct_error *err)
{
    if (out)
        *out = NULL;
    const lct__policy_ops *ops = NULL;
    for (size_t i = 0; i < NPOLICIES; i++)
        if (policies[i].kind == kind)
            ops = policies[i].ops;
    if (!out || !ops || capacity == 0 || capacity > UINT64_C(1) << 62)
        return lct__fail(err, LCT_ERR_INVALID, EINVAL, 0,
                         "lct_policy_new: invalid argument");
    lct_policy *p = calloc(1, sizeof *p);
    if (!p)
        return lct__fail(err, LCT_ERR_NOMEM, ENOMEM, 0,
                         "lct_policy_new: out of memory");
    p->kind = kind;
    p->ops = ops;
    p->capacity = capacity;
    p->free_slot = NIL;
    if (!ops->init(p)) {
        lct_policy_free(p);
        return lct__fail(err, LCT_ERR_NOMEM, ENOMEM, 0,
                         "lct_policy_new: out of memory");
    }
    *out = p;
    return LCT_OK;
}

int lct_policy_get_salted(lct_policy *p, uint64_t key, uint64_t bytes,
                          int64_t next_use, uint64_t salt)
{
    if (p)
        p->salt = salt;
    int rc = lct_policy_get(p, key, bytes, next_use);
    if (p)
        p->salt = 0;
    return rc;
}

int lct_policy_get(lct_policy *p, uint64_t key, uint64_t bytes,
                   int64_t next_use)
{
    if (!p)
        return LCT_ERR_INVALID;
    if (p->broken)
        return LCT_ERR_NOMEM;
    return lct__policy_get_with(p, LCT__PSTEPS_OF(p->ops), key, bytes,
                                next_use);
}

bool lct__policy_set_capacity(lct_policy *p, uint64_t capacity)
{
    p->capacity = capacity;
    if (p->ops->resize)
        p->ops->resize(p);
    while (p->used > p->capacity)
        if (!p->ops->evict(p, 0))
            return !(p->broken = true);
    return true;
}

int lct_policy_end_call(lct_policy *p)
{
    if (!p)
        return LCT_ERR_INVALID;
    if (p->broken)
        return LCT_ERR_NOMEM;
    return lct__policy_end_call_with(p, LCT__PSTEPS_OF(p->ops));
}

lct_status lct_policy_set_pressure(lct_policy *p, double watermark,
                                   double ratio)
{
    if (!p || !p->ops->end_call || !(watermark > 0 && watermark <= 1) ||
        !(ratio > 0 && ratio <= 1))
        return LCT_ERR_INVALID;
    p->watermark = watermark;
    p->ratio = ratio;
    return LCT_OK;
}

uint64_t lct_policy_refused(const lct_policy *p)
{
    return p ? p->refused : 0;
}

uint64_t lct_policy_used(const lct_policy *p)
{
    return p ? p->used : 0;
}

bool lct_policy_holds(const lct_policy *p, uint64_t key)
{
    return p && lct__policy_holds(p, key);
}

uint64_t lct_policy_evictions(const lct_policy *p)
{
    if (!p)
        return 0;
    uint64_t held = 0; /* a slot is live when its key's lookup finds it */
    for (uint32_t i = 0; i < p->nslots; i++)
        held += lct__policy_lookup(p, p->slots[i].key) == i + 1 &&
                p->slots[i].where < LCT__PSLOT_GHOSTS;
    return p->inserted - held;
}

void lct_policy_free(lct_policy *p)
{
    if (!p)
        return;
    lct__u64map_free(&p->map);
    free(p->slots);
    free(p->buckets);
    free(p->heap);
    free(p->next_use);
    free(p->call_key);
    free(p->call_bytes);
    free(p->call_found);
    free(p->call_salt);
    free(p->salts);
    lct__u64map_free(&p->salt_at);
    free(p->victims);
    free(p);
}
