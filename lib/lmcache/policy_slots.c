/*
 * policy_slots.c - the slots of lct_policy's caches: one per key held or
 * remembered as a ghost, reused once freed, and the map from key to
 * slot, which every policy (policy*.c) adds to and drops from.
 */
#include "lmcache/policy_internal.h"

#include <stdlib.h>

#define NIL LCT__POLICY_NIL

uint32_t lct__policy_slot_add(lct_policy *p, uint64_t key, uint64_t bytes)
{
    uint32_t i;
    if (p->free_slot != NIL) {
        i = p->free_slot;
        p->free_slot = p->slots[i].next;
    } else {
        if (p->nslots == p->room &&
            !lct__policy_grow(&p->slots, &p->room, sizeof *p->slots, 64))
            return NIL;
        i = p->nslots++;
    }
    if (p->dense) {
        p->dense[key] = i + 1;
    } else {
        bool added;
        lct__u64map_entry *e = lct__u64map_get(&p->map, key, &added);
        if (!e) {
            p->slots[i].next = p->free_slot;
            p->free_slot = i;
            return NIL;
        }
        e->value = (uint64_t)i + 1;
    }
    p->slots[i] = (lct__pslot){.key = key, .bytes = bytes, .prev = NIL,
                               .next = NIL, .bucket = NIL};
    return i;
}

void lct__policy_slot_drop(lct_policy *p, uint32_t i)
{
    if (p->dense) {
        p->dense[p->slots[i].key] = 0;
    } else {
        lct__u64map_entry *e = lct__u64map_find(&p->map, p->slots[i].key);
        if (e)
            lct__u64map_remove(&p->map, e);
    }
    p->slots[i].next = p->free_slot;
    p->free_slot = i;
}

