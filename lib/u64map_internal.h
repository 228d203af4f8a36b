/*
 * u64map_internal.h - an open-addressing map from 64-bit ids to two
 * 64-bit values, for the key reference streams (refs.c, mrc.c): the last
 * position of each key and what it weighs.  Grows at half full; no
 * per-entry allocation.
 */
#ifndef LCT_U64MAP_INTERNAL_H
#define LCT_U64MAP_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

typedef struct lct__u64map_entry {
    uint64_t key;
    uint64_t a, b; /* the caller's values */
    bool used;
} lct__u64map_entry;

typedef struct lct__u64map {
    lct__u64map_entry *slots;
    uint64_t mask; /* slots - 1 (a power of two) */
    uint64_t used;
} lct__u64map;

/* The entry for key, added (zeroed, *added true) when absent; NULL when
 * memory ran out. */
lct__u64map_entry *lct__u64map_get(lct__u64map *m, uint64_t key, bool *added);
void lct__u64map_free(lct__u64map *m);

#endif
