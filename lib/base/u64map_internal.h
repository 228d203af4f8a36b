/*
 * u64map_internal.h - an open-addressing map from 64-bit ids to two
 * 64-bit values, for the key reference streams (refs.c, mrc.c): the last
 * position of each key and what it weighs.  Grows at half full; no
 * per-entry allocation.
 */
#ifndef LCT_U64MAP_INTERNAL_H
#define LCT_U64MAP_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* 16 bytes, so a probe touches one cache line: a slot is free while its
 * value is 0, so callers store values that are never 0 (a position + 1). */
typedef struct lct__u64map_entry {
    uint64_t key;
    uint64_t value;
} lct__u64map_entry;

typedef struct lct__u64map {
    lct__u64map_entry *slots;
    uint64_t mask; /* slots - 1 (a power of two) */
    uint64_t used;
} lct__u64map;

/* The entry for key, added (value 0, *added true) when absent: store a
 * non-zero value in it before the next call.  NULL when memory ran out. */
lct__u64map_entry *lct__u64map_get(lct__u64map *m, uint64_t key, bool *added);
/* The entry for key, or NULL when absent (nothing is added). */
lct__u64map_entry *lct__u64map_find(const lct__u64map *m, uint64_t key);
/* Take out an entry lct__u64map_get or _find returned; the others stay
 * findable (the probe chain is closed up, no tombstone is left). */
void lct__u64map_remove(lct__u64map *m, lct__u64map_entry *e);
void lct__u64map_free(lct__u64map *m);

/* Ids may be anything a caller hands in: mixed before using low bits. */
static inline uint64_t lct__u64map_mix(uint64_t x)
{
    x = (x ^ (x >> 33)) * 0xff51afd7ed558ccdu;
    return x ^ (x >> 33);
}

/* Ask the cache for key's slot ahead of a lookup (a stream of lookups is
 * bound by memory latency, not by work). */
static inline void lct__u64map_prefetch(const lct__u64map *m, uint64_t key)
{
    if (m->slots)
        __builtin_prefetch(&m->slots[lct__u64map_mix(key) & m->mask]);
}

#endif
