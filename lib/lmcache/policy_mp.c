/*
 * policy_mp.c - LMCache's multiprocess-server L1 eviction policies
 * (lmcache/v1/distributed/eviction_policy: lru.py, arc.py, s3fifo.py)
 * and the L1 that drives them: a call's found keys touched and its new
 * keys created together at the call's end (refused all or none when
 * they do not fit, as L1Manager.reserve_write refuses an allocation),
 * then a pressure-driven cycle: at or above the watermark, the policy's
 * get_eviction_actions(ratio) and the deletion of what it returns.
 * Each policy's steps follow its Python source branch for branch; the
 * lists keep slot order as the OrderedDicts keep theirs (the newest at
 * a list's first end).
 */
#include "lmcache/policy_internal.h"

#define NIL LCT__POLICY_NIL

/* Python's max() and min() of two floats (no libm: the library links
 * without it) */
static double max2(double a, double b)
{
    return a < b ? b : a;
}

static double min2(double a, double b)
{
    return b < a ? b : a;
}

/* lists[]: LRU's order is list 0; ARC's T1, T2, B1, B2; S3-FIFO's small
 * queue and main queue */
enum { ORDER = 0, T1 = 0, T2 = 1, B1 = 2, B2 = 3, SMALL = 0, MAIN = 1 };

static void leave(lct_policy *p, uint32_t i)
{
    lct__pslot *s = &p->slots[i];
    lct__slot_unlink(p->slots, &p->lists[s->where], i);
    p->list_n[s->where]--;
}

static void enter(lct_policy *p, uint32_t i, int to)
{
    p->slots[i].where = (uint8_t)to;
    lct__slot_push_first(p->slots, &p->lists[to], i);
    p->list_n[to]++;
}

/* OrderedDict.move_to_end, or a key moved from one dict to another */
static void move_to(lct_policy *p, uint32_t i, int to)
{
    leave(p, i);
    enter(p, i, to);
}

static uint32_t resident(const lct_policy *p)
{
    return p->kind == LCT_POLICY_LMCACHE_LRU ? p->list_n[ORDER]
                                             : p->list_n[0] + p->list_n[1];
}

/* A key out of the cache and forgotten (not a ghost). */
static void forget(lct_policy *p, uint32_t i)
{
    if (p->slots[i].where < LCT__PSLOT_GHOSTS)
        p->used -= p->slots[i].bytes;
    leave(p, i);
    lct__policy_slot_drop(p, i);
}

static bool mp_init(lct_policy *p)
{
    for (int l = 0; l < 4; l++)
        p->lists[l] = LCT__PLIST_EMPTY;
    p->watermark = 0.8; /* LMCache's EvictionConfig defaults */
    p->ratio = 0.2;
    return true;
}

int lct__policy_call_get(lct_policy *p, uint64_t key, uint64_t bytes)
{
    if (p->ncall == p->call_room) {
        uint32_t room = p->call_room;
        if (!lct__policy_grow(&p->call_key, &room, sizeof *p->call_key, 64))
            return LCT_ERR_NOMEM;
        room = p->call_room;
        if (!lct__policy_grow(&p->call_bytes, &room, sizeof *p->call_bytes,
                              64))
            return LCT_ERR_NOMEM;
        room = p->call_room;
        if (!lct__policy_grow(&p->call_found, &room, sizeof *p->call_found,
                              64))
            return LCT_ERR_NOMEM;
        room = p->call_room;
        if (!lct__policy_grow(&p->call_salt, &room, sizeof *p->call_salt,
                              64))
            return LCT_ERR_NOMEM;
        p->call_room = room;
    }
    bool held = lct__policy_holds(p, key);
    p->call_key[p->ncall] = key;
    p->call_bytes[p->ncall] = bytes;
    p->call_salt[p->ncall] = p->salt;
    p->call_found[p->ncall++] = held;
    return held;
}

/* MARK: on_keys_touched, on_keys_created */

static void touch(lct_policy *p, uint32_t i)
{
    switch (p->kind) {
    case LCT_POLICY_LMCACHE_LRU:
        move_to(p, i, ORDER);
        break;
    case LCT_POLICY_LMCACHE_ARC: /* T1 to T2; T2 to its end */
    case LCT_POLICY_LMCACHE_S3FIFO: /* small to main; main to its end */
        move_to(p, i, 1);
        break;
    default:
        break;
    }
}

/* arc.py's _trim_ghost_lists */
static void arc_trim(lct_policy *p)
{
    uint64_t cap = p->arc_capacity;
    if (cap == 0)
        return;
    while ((uint64_t)p->list_n[T1] + p->list_n[B1] > cap && p->list_n[B1])
        forget(p, p->lists[B1].last);
    while ((uint64_t)p->list_n[T1] + p->list_n[T2] + p->list_n[B1] +
               p->list_n[B2] > 2 * cap) {
        int ghost = p->list_n[B2] ? B2 : B1;
        if (!p->list_n[ghost])
            break;
        forget(p, p->lists[ghost].last);
    }
}

/* arc.py's on_keys_created for one key */
static bool arc_create(lct_policy *p, uint64_t key, uint64_t bytes)
{
    uint32_t at = lct__policy_lookup(p, key);
    uint32_t i = at ? at - 1 : NIL;
    int where = at ? p->slots[i].where : -1;
    if (where == T1 || where == T2) {
        move_to(p, i, T2);
    } else if (where == B1 || where == B2) {
        double hit = p->list_n[where], other = p->list_n[where ^ 1];
        double delta = max2(1.0, other / hit);
        p->arc_p = where == B1 ? min2((double)p->arc_capacity, p->arc_p + delta)
                               : max2(0.0, p->arc_p - delta);
        p->slots[i].bytes = bytes;
        p->used += bytes;
        p->inserted++;
        move_to(p, i, T2);
    } else {
        i = lct__policy_slot_add(p, key, bytes);
        if (i == NIL)
            return false;
        p->used += bytes;
        p->inserted++;
        enter(p, i, T1);
    }
    if (resident(p) > p->arc_capacity)
        p->arc_capacity = resident(p);
    arc_trim(p);
    return true;
}

static bool create(lct_policy *p, uint64_t key, uint64_t bytes)
{
    if (p->kind == LCT_POLICY_LMCACHE_ARC)
        return arc_create(p, key, bytes);
    uint32_t at = lct__policy_lookup(p, key);
    if (at) { /* held: LRU refreshes it, S3-FIFO leaves it */
        if (p->kind == LCT_POLICY_LMCACHE_LRU)
            move_to(p, at - 1, ORDER);
        return true;
    }
    uint32_t i = lct__policy_slot_add(p, key, bytes);
    if (i == NIL)
        return false;
    p->used += bytes;
    p->inserted++;
    enter(p, i, p->kind == LCT_POLICY_LMCACHE_LRU ? ORDER : SMALL);
    return true;
}

/* MARK: get_eviction_actions, then the deletion */

static bool victims_room(lct_policy *p, uint32_t n)
{
    while (p->victim_room < n)
        if (!lct__policy_grow(&p->victims, &p->victim_room,
                              sizeof *p->victims, 64))
            return false;
    return true;
}

/* The next slot from the oldest end of a list, as a Python iterator over
 * a snapshot walks it (nothing moves while victims are chosen). */
static uint32_t next_older(const lct_policy *p, uint32_t *cursor)
{
    uint32_t v = *cursor;
    if (v != NIL)
        *cursor = p->slots[v].prev;
    return v;
}

/* arc.py's victim order: from T1 while it holds at least int(p) of the
 * keys not yet chosen, else from T2, else T1 again. */
static uint32_t arc_choose(lct_policy *p, uint32_t target)
{
    if (resident(p) > p->arc_capacity)
        p->arc_capacity = resident(p);
    p->arc_p = min2(p->arc_p, (double)p->arc_capacity);
    arc_trim(p);
    uint32_t n = 0, t1 = p->lists[T1].last, t2 = p->lists[T2].last;
    uint64_t virtual_t1 = p->list_n[T1];
    while (n < target) {
        uint32_t v = NIL;
        if (virtual_t1 >= (uint64_t)p->arc_p /* int(): p >= 0 */) {
            v = next_older(p, &t1);
            virtual_t1 -= v != NIL;
        }
        if (v == NIL)
            v = next_older(p, &t2);
        if (v == NIL) {
            v = next_older(p, &t1);
            virtual_t1 -= v != NIL;
        }
        if (v == NIL)
            break;
        p->victims[n++] = v;
    }
    return n;
}

/* One eviction cycle: the policy's victims, deleted.  ARC retires its
 * victims to the ghost list of the list each was in (on_keys_removed of
 * a pending eviction); S3-FIFO's ghost set gains them and loses them
 * again in the same cycle (its on_keys_removed discards them), so only
 * the deletion is left of it. */
static bool cycle(lct_policy *p)
{
    uint32_t held = resident(p);
    if (held == 0)
        return true;
    double ratio = max2(0.0, min2(1.0, p->ratio));
    uint32_t target = (uint32_t)((double)held * ratio);
    if (ratio > 0 && target == 0)
        target = 1;
    if (target == 0 || !victims_room(p, target))
        return target == 0;
    uint32_t n = 0;
    if (p->kind == LCT_POLICY_LMCACHE_ARC) {
        n = arc_choose(p, target);
    } else {
        int from = p->kind == LCT_POLICY_LMCACHE_LRU ? ORDER : SMALL;
        for (uint32_t c = p->lists[from].last; n < target && c != NIL;
             c = p->slots[c].prev)
            p->victims[n++] = c;
        for (uint32_t c = from == SMALL ? p->lists[MAIN].last : NIL;
             n < target && c != NIL; c = p->slots[c].prev)
            p->victims[n++] = c;
    }
    for (uint32_t k = 0; k < n; k++) {
        uint32_t v = p->victims[k];
        if (p->kind != LCT_POLICY_LMCACHE_ARC) {
            forget(p, v);
            continue;
        }
        p->used -= p->slots[v].bytes;
        move_to(p, v, p->slots[v].where == T1 ? B1 : B2);
    }
    if (p->kind == LCT_POLICY_LMCACHE_ARC)
        arc_trim(p);
    return true;
}

/* MARK: a call's end */

/* The call's reference j created (on_keys_created). */
static bool create_ref(lct_policy *p, uint32_t j)
{
    return create(p, p->call_key[j], p->call_bytes[j]);
}

static int mp_end_call(lct_policy *p)
{
    /* LRU and ARC take a call's keys last to first, so that its later
     * keys (which a prefix lookup cannot reach without the earlier
     * ones) are evicted first; S3-FIFO takes them in order */
    if (!lct__policy_apply_call(p, p->kind != LCT_POLICY_LMCACHE_S3FIFO,
                                touch, create_ref))
        return LCT_ERR_NOMEM;
    /* the controller's check: below the watermark nothing happens */
    if ((double)p->used / (double)p->capacity < p->watermark)
        return LCT_OK;
    return cycle(p) ? LCT_OK : LCT_ERR_NOMEM;
}

/* A smaller capacity (lct_sim's, once it knows a key's bytes): cycles
 * until what is held fits. */
static bool mp_evict(lct_policy *p, uint64_t incoming)
{
    (void)incoming;
    return cycle(p);
}

const lct__policy_ops lct__policy_mp_ops = {
    .init = mp_init,
    .evict = mp_evict,
    .get = lct__policy_call_get,
    .end_call = mp_end_call,
};
