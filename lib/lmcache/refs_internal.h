/*
 * refs_internal.h - the layout of a key reference stream, shared by
 * refs.c (building and writing it) and mrc.c (reading it).
 */
#ifndef LCT_REFS_INTERNAL_H
#define LCT_REFS_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lct.h"

typedef struct lct__ref {
    uint64_t obj_id;
    uint64_t bytes;
    uint32_t seconds; /* whole seconds of t_mono, clamped */
    bool is_read;
} lct__ref;

/* Blocks of 2^20 references (24 MiB), so growing never copies what is
 * there (a realloc of one large array copied it, 10% of `lct keys`). */
#define LCT__REFS_BLOCK_SHIFT 20
#define LCT__REFS_BLOCK ((size_t)1 << LCT__REFS_BLOCK_SHIFT)

struct lct_refs {
    lct__ref **blocks;
    size_t nblocks, n;
    size_t first_cap; /* block 0 starts small and doubles to a block */
    /* lct_refs_sample: keep a reference only when one of `samples` SHARDS
     * samples keeps its key; count the others (threshold 0: keep all). */
    uint64_t threshold, seed;
    unsigned samples;
    uint64_t dropped_reads, dropped_writes;
};

/* Whether SHARDS keeps the key: its id, salted by the seed and mixed
 * again (splitmix64's finalizer) so that each seed draws an independent
 * sample, falls under the threshold.  Seed 0 takes the id as it is. */
static inline bool lct__sampled(uint64_t id, uint64_t seed,
                                uint64_t threshold)
{
    if (seed) {
        id ^= seed * 0x9e3779b97f4a7c15ull;
        id = (id ^ (id >> 30)) * 0xbf58476d1ce4e5b9ull;
        id = (id ^ (id >> 27)) * 0x94d049bb133111ebull;
        id ^= id >> 31;
    }
    return id < threshold;
}

static inline lct__ref *lct__ref_at(const struct lct_refs *r, size_t i)
{
    return &r->blocks[i >> LCT__REFS_BLOCK_SHIFT][i & (LCT__REFS_BLOCK - 1)];
}

#endif
