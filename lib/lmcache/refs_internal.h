/*
 * refs_internal.h - the layout of a key reference stream, shared by
 * refs.c (building and writing it) and mrc.c (reading it).
 */
#ifndef LCT_REFS_INTERNAL_H
#define LCT_REFS_INTERNAL_H

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
};

static inline lct__ref *lct__ref_at(const struct lct_refs *r, size_t i)
{
    return &r->blocks[i >> LCT__REFS_BLOCK_SHIFT][i & (LCT__REFS_BLOCK - 1)];
}

#endif
