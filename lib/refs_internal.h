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

struct lct_refs {
    lct__ref *v;
    size_t n, cap;
};

#endif
