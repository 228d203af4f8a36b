/*
 * policy_isolated.c - LMCache's IsolatedLRU (eviction_policy/
 * isolated_lru.py) as its L2 eviction controller drives it
 * (storage_controllers/eviction_controller.py,
 * _check_and_evict_by_cache_salt): one LRU order per cache_salt bucket;
 * a call's found keys touched and its new keys created, each in its own
 * bucket, last key first (so a call's later keys go first); then a cycle
 * that looks at every bucket holding anything against its quota: at or
 * above watermark x quota it evicts int(keys x ratio) of the bucket's
 * oldest (at least one), and a bucket without a quota is over at once
 * and loses every key (ratio 1: only salts with a quota keep data).
 * Buckets never evict for one another.
 */
#include "lmcache/policy_internal.h"

#define NIL LCT__POLICY_NIL

/* The bucket of id salt, made when new (no quota); NIL when out of
 * memory. */
static uint32_t bucket_of(lct_policy *p, uint64_t salt)
{
    bool added;
    lct__u64map_entry *e = lct__u64map_get(&p->salt_at, salt, &added);
    if (!e)
        return NIL;
    if (!added)
        return (uint32_t)(e->value - 1);
    if (p->nsalts == p->salt_room &&
        !lct__policy_grow(&p->salts, &p->salt_room, sizeof *p->salts, 8)) {
        lct__u64map_remove(&p->salt_at, e);
        return NIL;
    }
    uint32_t b = p->nsalts++;
    p->salts[b] = (lct__psalt){.salt = salt, .order = LCT__PLIST_EMPTY};
    e->value = (uint64_t)b + 1;
    return b;
}

lct_status lct_policy_set_quota(lct_policy *p, uint64_t salt, double limit)
{
    if (!p || p->kind != LCT_POLICY_LMCACHE_ISOLATED_LRU ||
        !(limit >= 0 && limit <= 0x1p62))
        return LCT_ERR_INVALID;
    uint32_t b = bucket_of(p, salt);
    if (b == NIL)
        return LCT_ERR_NOMEM;
    p->salts[b].limit = limit;
    return LCT_OK;
}

static void to_newest(lct_policy *p, uint32_t i)
{
    lct__psalt *b = &p->salts[p->slots[i].bucket];
    lct__slot_unlink(p->slots, &b->order, i);
    lct__slot_push_first(p->slots, &b->order, i);
}

/* on_keys_created for one key: move_to_end when held, else appended to
 * its bucket (made when new). */
static bool create(lct_policy *p, uint64_t key, uint64_t bytes,
                   uint64_t salt)
{
    uint32_t at = lct__policy_lookup(p, key);
    if (at) {
        to_newest(p, at - 1);
        return true;
    }
    uint32_t b = bucket_of(p, salt);
    uint32_t i = b == NIL ? NIL : lct__policy_slot_add(p, key, bytes);
    if (i == NIL)
        return false;
    p->slots[i].bucket = b;
    lct__slot_push_first(p->slots, &p->salts[b].order, i);
    p->salts[b].n++;
    p->salts[b].used += bytes;
    p->used += bytes;
    p->inserted++;
    return true;
}

static void forget(lct_policy *p, uint32_t i)
{
    lct__psalt *b = &p->salts[p->slots[i].bucket];
    lct__slot_unlink(p->slots, &b->order, i);
    b->n--;
    b->used -= p->slots[i].bytes;
    p->used -= p->slots[i].bytes;
    lct__policy_slot_drop(p, i);
}

/* get_eviction_actions(ratio, cache_salt=the bucket's), then the
 * deletion: the bucket's oldest int(n x ratio) keys, at least one. */
static void evict_from(lct_policy *p, uint32_t b, double ratio)
{
    ratio = ratio < 0 ? 0 : ratio > 1 ? 1 : ratio;
    uint32_t target = (uint32_t)((double)p->salts[b].n * ratio);
    if (ratio > 0 && target == 0)
        target = 1;
    while (target-- && p->salts[b].n)
        forget(p, p->salts[b].order.last);
}

/* The controller's cycle over every bucket that holds something. */
static void cycle(lct_policy *p)
{
    for (uint32_t b = 0; b < p->nsalts; b++) {
        const lct__psalt *s = &p->salts[b];
        if (s->used == 0 || (double)s->used < p->watermark * s->limit)
            continue;
        evict_from(p, b, s->limit == 0 ? 1.0 : p->ratio);
    }
}

static bool isolated_init(lct_policy *p)
{
    p->watermark = 0.8; /* LMCache's EvictionConfig defaults */
    p->ratio = 0.2;
    return true;
}

/* A smaller capacity (lct_sim's, once it knows a key's bytes): no bucket
 * evicts for another in LMCache, so the fullest bucket's oldest key goes
 * until what is held fits. */
static bool isolated_evict(lct_policy *p, uint64_t incoming)
{
    (void)incoming;
    uint32_t most = NIL;
    for (uint32_t b = 0; b < p->nsalts; b++)
        if (p->salts[b].n && (most == NIL || p->salts[b].n > p->salts[most].n))
            most = b;
    if (most != NIL)
        forget(p, p->salts[most].order.last);
    return true;
}

/* The call's reference j created in its bucket. */
static bool create_ref(lct_policy *p, uint32_t j)
{
    return create(p, p->call_key[j], p->call_bytes[j], p->call_salt[j]);
}

static int isolated_end_call(lct_policy *p)
{
    /* last key first; the capacity is the adapter's room */
    if (!lct__policy_apply_call(p, true, to_newest, create_ref))
        return LCT_ERR_NOMEM;
    cycle(p);
    return LCT_OK;
}

const lct__policy_ops lct__policy_isolated_ops = {
    .init = isolated_init,
    .evict = isolated_evict,
    .get = lct__policy_call_get,
    .end_call = isolated_end_call,
};
