/*
 * policy_arc.c - ARC as libCacheSim's ARC.c has it, with sizes: T1
 * (seen once) and T2 (seen again) hold keys, B1 and B2 remember the keys
 * evicted from each (ghosts, weighing nothing held), and the target p
 * for T1 moves toward the list whose ghost was found.  Its choices, the
 * paper's where they agree:
 * - a key found in B1 raises p by max(|B2| / |B1|, 1) (at most the
 *   capacity), in B2 lowers it by max(|B1| / |B2|, 1) (at least 0),
 *   sizes in bytes, the ghost's own counted; the ghost is forgotten and
 *   the key misses, then enters T2;
 * - REPLACE evicts T1's oldest to B1 when T1 is not empty and weighs
 *   more than p, or exactly p while the last key found was in B2, or
 *   when T2 is empty; else T2's oldest to B2;
 * - a miss in every list, when T1 and B1 and the key would pass the
 *   capacity, forgets B1's oldest and replaces, or with B1 empty evicts
 *   T1's oldest outright; otherwise, when all four lists weigh twice the
 *   capacity, it forgets B2's oldest, then replaces;
 * - a key found in T1 moves to T2's newest end, in T2 to its newest end.
 */
#include "lmcache/policy_internal.h"
#include "lmcache/policy_stream_internal.h"

#define NIL LCT__POLICY_NIL

enum { T1, T2, B1, B2 };

LCT__STEP void move_to(lct_policy *p, uint32_t i, int to)
{
    lct__policy_list_leave(p, i);
    lct__policy_list_enter(p, i, to);
}

/* The oldest of list `from` forgotten (a ghost), or evicted outright. */
LCT__STEP void drop_oldest(lct_policy *p, int from)
{
    uint32_t v = p->lists[from].last;
    lct__policy_list_leave(p, v);
    if (from == T1 || from == T2)
        p->used -= p->slots[v].bytes;
    lct__policy_slot_drop(p, v);
}

/* The oldest of a data list to its ghost list. */
LCT__STEP void to_ghost(lct_policy *p, int from)
{
    uint32_t v = p->lists[from].last;
    p->used -= p->slots[v].bytes;
    move_to(p, v, from == T1 ? B1 : B2);
}

LCT__STEP void replace(lct_policy *p)
{
    double t1 = (double)p->list_bytes[T1];
    bool cond1 = p->list_bytes[T1] > 0;
    bool cond2 = t1 > p->arc_p;
    bool cond3 = t1 == p->arc_p && p->arc_in_b2;
    bool cond4 = p->list_bytes[T2] == 0;
    to_ghost(p, (cond1 && (cond2 || cond3)) || cond4 ? T1 : T2);
}

/* The target stays within the capacity. */
static void arc_resize(lct_policy *p)
{
    if (p->arc_p > (double)p->capacity)
        p->arc_p = (double)p->capacity;
}

static bool arc_init(lct_policy *p)
{
    for (int l = 0; l < 4; l++)
        p->lists[l] = LCT__PLIST_EMPTY;
    return true;
}

LCT__STEP int arc_found(lct_policy *p, uint32_t i, int64_t next_use)
{
    (void)next_use;
    lct__pslot *s = &p->slots[i];
    p->arc_in_b1 = p->arc_in_b2 = false;
    if (s->where == T1 || s->where == T2) {
        move_to(p, i, T2);
        return 1;
    }
    double b1 = (double)p->list_bytes[B1], b2 = (double)p->list_bytes[B2];
    double cap = (double)p->capacity;
    if (s->where == B1) {
        p->arc_in_b1 = true;
        double delta = b2 / b1 > 1 ? b2 / b1 : 1;
        p->arc_p = p->arc_p + delta < cap ? p->arc_p + delta : cap;
    } else {
        p->arc_in_b2 = true;
        double delta = b1 / b2 > 1 ? b1 / b2 : 1;
        p->arc_p = p->arc_p - delta > 0 ? p->arc_p - delta : 0;
    }
    p->ghost_hit = true;
    lct__policy_list_leave(p, i);
    lct__policy_slot_drop(p, i);
    return 0;
}

LCT__STEP bool arc_evict(lct_policy *p, uint64_t incoming)
{
    if (p->ghost_hit) {
        replace(p);
        return true;
    }
    uint64_t *w = p->list_bytes;
    if (w[T1] + w[B1] + incoming > p->capacity) {
        if (w[B1] > 0) {
            drop_oldest(p, B1);
            replace(p);
        } else {
            drop_oldest(p, T1);
        }
        return true;
    }
    uint64_t all = w[T1] + w[B1] + w[T2] + w[B2];
    if (all >= p->capacity && all - p->capacity >= p->capacity && w[B2] > 0)
        drop_oldest(p, B2);
    replace(p);
    return true;
}

LCT__STEP int arc_insert(lct_policy *p, uint64_t key, uint64_t bytes,
                         int64_t next_use)
{
    (void)next_use;
    uint32_t i = lct__policy_slot_add(p, key, bytes);
    if (i == NIL)
        return LCT_ERR_NOMEM;
    int to = T1;
    if (p->ghost_hit) {
        to = T2;
        p->arc_in_b1 = p->arc_in_b2 = false;
    }
    lct__policy_list_enter(p, i, to);
    p->used += bytes;
    return 1;
}

static void arc_stream(lct_policy *p, const lct__pstream *s,
                       lct_policy_point *pt)
{
    lct__policy_stream(p,
                       (lct__psteps){.found = arc_found,
                                     .evict = arc_evict,
                                     .insert = arc_insert},
                       s, pt);
}

const lct__policy_ops lct__policy_arc_ops = {
    .init = arc_init,
    .resize = arc_resize,
    .found = arc_found,
    .evict = arc_evict,
    .insert = arc_insert,
    .stream = arc_stream,
};
