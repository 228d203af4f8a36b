/*
 * tiers.c - two tiers (lct_refs_behind_l1): the reference stream an L2
 * sees behind an LRU L1, as LMCache's StorageManager tiers lookups
 * (L1's leading run, then the rest asked of L2) and stores (written
 * through), so L2's prefix curve over every capacity is one more pass.
 */
#include "base/error_internal.h"
#include "lmcache/refs_internal.h"
#include "lmcache/tiers_internal.h"
#include "lct_cache.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Append ref to out as it was, with flags (the call's first key, a chunk
 * position's last) of its own. */
static lct_status add_flagged(lct_refs *out, const lct__ref *ref,
                              uint64_t bytes, uint32_t flags)
{
    flags &= LCT__REF_CALL | LCT__REF_POSITION; /* read: the ref's own */
    lct_status rc = lct_refs_add(out, ref->obj_id, bytes, ref->seconds,
                                 lct__ref_is_read(ref));
    if (rc == LCT_OK && out->nparts) {
        lct__refs_part *p = &out->parts[out->nparts - 1];
        lct__part_at(p, p->n - 1)->size |= flags;
        p->call = p->n; /* calls are marked here, not by end_call */
    }
    return rc;
}

bool lct__l1_route(lct__lru *l1, lct__l1_call *call, lct_l1_stats *st,
                   uint32_t flags, uint32_t k, uint64_t bytes,
                   uint32_t *l2_flags)
{
    bool read = (flags & LCT__REF_READ) != 0;
    bool position = (flags & LCT__REF_POSITION) != 0;
    if (flags & LCT__REF_CALL) {
        call->read_call = read;
        call->leading = call->first = true;
    }
    bool forward = false;
    if (call->read_call && read) {
        st->keys++;
        st->positions += position;
        call->leading = call->leading && l1->in[k];
        if (call->leading) {
            st->keys_hit++;
            st->positions_hit += position;
        } else { /* from the first miss on, the call asks L2 */
            st->keys_to_l2++;
            *l2_flags = LCT__REF_READ | (call->first ? LCT__REF_CALL : 0) |
                        (position ? LCT__REF_POSITION : 0);
            call->first = false;
            forward = true;
        }
    } else if (!read) { /* stores are written through */
        st->writes++;
        *l2_flags = flags & LCT__REF_CALL;
        forward = true;
    }
    lct__lru_touch(l1, k, bytes);
    return forward;
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
    bool ok = key && lct__refs_number(refs, NULL, key, &nkeys) &&
              lct__lru_alloc(&l1, nkeys, capacity, in_bytes);
    lct__l1_call call = {false, false, false};
    for (LCT__EACH_REF(refs, c)) {
        if (!ok)
            break;
        uint64_t bytes = lct__cursor_bytes(&c);
        uint32_t flags;
        if (lct__l1_route(&l1, &call, st, c.ref->size & LCT__REF_FLAGS,
                          key[c.i], bytes, &flags))
            ok = add_flagged(l2, c.ref, bytes, flags) == LCT_OK;
    }
    st->evictions = l1.evictions;
    st->bypassed = l1.bypassed;
    lct__lru_free(&l1);
    free(key);
    return ok ? LCT_OK
              : lct__fail(err, LCT_ERR_NOMEM, ENOMEM, 0,
                          "out of memory simulating an L1");
}
