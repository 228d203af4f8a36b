/*
 * tiers_internal.h - one reference through an L1 in front of an L2, as
 * StorageManager tiers a call (tiers.c): what lct_refs_behind_l1 and the
 * streamed curve's L1 (mrc_stream.c) both route by, so the two cannot
 * drift apart.
 */
#ifndef LCT_TIERS_INTERNAL_H
#define LCT_TIERS_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "lct_cache.h"
#include "lmcache/lru_internal.h"

/* The call under way, as the L1 sees it. */
typedef struct lct__l1_call {
    bool read_call; /* its first reference was a read */
    bool leading;   /* every lookup of it so far was in L1 */
    bool first;     /* no lookup of it has gone to L2 yet */
} lct__l1_call;

/* Reference of key k (flags LCT__REF_*, bytes as it says) through L1:
 * counted in st, and k made L1's most recent.  True when L2 sees it, with
 * the flags L2 sees it with in *l2_flags (its read flag kept): a lookup
 * from its call's first miss on, the first such one starting L2's call;
 * a store always (written through). */
bool lct__l1_route(lct__lru *l1, lct__l1_call *call, lct_l1_stats *st,
                   uint32_t flags, uint32_t k, uint64_t bytes,
                   uint32_t *l2_flags);

#endif
