/*
 * tiers.c - two tiers (lct_refs_behind_l1): the reference stream an L2
 * sees behind an LRU L1, as LMCache's StorageManager tiers lookups
 * (L1's leading run, then the rest asked of L2) and stores (written
 * through), so L2's prefix curve over every capacity is one more pass.
 */
#include "base/error_internal.h"
#include "lmcache/lru_internal.h"
#include "lmcache/refs_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Append ref to out as it was, with flags (the call's first key, a chunk
 * position's last) of its own. */
static lct_status add_flagged(lct_refs *out, const lct__ref *ref,
                              uint64_t bytes, uint32_t flags)
{
    lct_status rc = lct_refs_add(out, ref->obj_id, bytes, ref->seconds,
                                 lct__ref_is_read(ref));
    if (rc == LCT_OK && out->nparts) {
        lct__refs_part *p = &out->parts[out->nparts - 1];
        lct__part_at(p, p->n - 1)->size |= flags;
        p->call = p->n; /* calls are marked here, not by end_call */
    }
    return rc;
}

/* One reference through L1: counted, sent on to L2 when L2 sees it. */
static lct_status l1_step(lct__lru *l1, const lct__ref *ref, uint32_t k,
                          uint64_t bytes, lct_refs *l2, lct_l1_stats *st,
                          bool *read_call, bool *leading, bool *first)
{
    if (ref->size & LCT__REF_CALL) {
        *read_call = lct__ref_is_read(ref);
        *leading = *first = true;
    }
    bool lookup = *read_call && lct__ref_is_read(ref);
    bool position = (ref->size & LCT__REF_POSITION) != 0;
    lct_status rc = LCT_OK;
    if (lookup) {
        st->keys++;
        st->positions += position;
        *leading = *leading && l1->in[k];
        if (*leading) {
            st->keys_hit++;
            st->positions_hit += position;
        } else { /* from the first miss on, the call asks L2 */
            st->keys_to_l2++;
            rc = add_flagged(l2, ref, bytes,
                             (*first ? LCT__REF_CALL : 0) |
                                 (position ? LCT__REF_POSITION : 0));
            *first = false;
        }
    } else if (!lct__ref_is_read(ref)) { /* stores are written through */
        st->writes++;
        rc = add_flagged(l2, ref, bytes, ref->size & LCT__REF_CALL);
    }
    lct__lru_touch(l1, k, bytes);
    return rc;
}

lct_status lct_refs_behind_l1(const lct_refs *refs, uint64_t capacity,
                              bool in_bytes, lct_refs *l2, lct_l1_stats *st,
                              lct_error *err)
{
    if (st)
        memset(st, 0, sizeof *st);
    if (!refs || !l2 || !st || !capacity || refs->threshold ||
        l2->n || l2->threshold)
        return lct__fail(err, LCT_ERR_INVALID, EINVAL, 0,
                         "lct_refs_behind_l1: an exact stream, an empty "
                         "one for L2, stats, and a capacity above 0");
    st->capacity = capacity;
    st->in_bytes = in_bytes;
    uint32_t *key = reallocarray(NULL, refs->n ? refs->n : 1, sizeof *key);
    size_t nkeys = 0;
    lct__lru l1 = {0};
    bool ok = key && lct__refs_number(refs, key, &nkeys) &&
              lct__lru_alloc(&l1, nkeys, capacity, in_bytes);
    bool read_call = false, leading = false, first = false;
    for (LCT__EACH_REF(refs, c)) {
        if (!ok)
            break;
        ok = l1_step(&l1, c.ref, key[c.i], lct__cursor_bytes(&c), l2, st,
                     &read_call, &leading, &first) == LCT_OK;
    }
    st->evictions = l1.evictions;
    st->bypassed = l1.bypassed;
    lct__lru_free(&l1);
    free(key);
    return ok ? LCT_OK
              : lct__fail(err, LCT_ERR_NOMEM, ENOMEM, 0,
                          "out of memory simulating an L1");
}
