/*
 * lru_internal.h - an LRU cache of numbered keys, in keys or bytes, as a
 * doubly linked list by key number (most recent first): what sim.c
 * simulates at one capacity and tiers.c puts in front as an L1.  A key
 * heavier than the whole cache is not inserted (it bypasses it).
 */
#ifndef LCT_LRU_INTERNAL_H
#define LCT_LRU_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define LCT__LRU_NIL UINT32_MAX

/* An LRU cache of keys numbered 0..n-1, most recent first, in keys or
 * bytes; a key heavier than the whole cache is not inserted. */
typedef struct lct__lru {
    uint32_t *prev, *next, head, tail;
    bool *in;
    uint64_t *size, used, capacity; /* used: keys or bytes held */
    bool in_bytes;
    uint64_t evictions, bypassed;
} lct__lru;

static inline bool lct__lru_alloc(lct__lru *c, size_t nkeys, uint64_t capacity, bool in_bytes)
{
    size_t m = nkeys ? nkeys : 1;
    *c = (lct__lru){.head = LCT__LRU_NIL, .tail = LCT__LRU_NIL, .capacity = capacity,
               .in_bytes = in_bytes};
    c->prev = reallocarray(NULL, m, sizeof *c->prev);
    c->next = reallocarray(NULL, m, sizeof *c->next);
    c->in = calloc(m, sizeof *c->in);
    c->size = calloc(m, sizeof *c->size);
    return c->prev && c->next && c->in && c->size;
}

/* Grow the array *pp of `had` elements of `size` bytes to `cap` (at
 * least one, so an empty array is not NULL), the new ones zeroed; false
 * (the array unchanged) when memory ran out. */
static inline bool lct__grow_zeroed(void *pp, size_t had, size_t cap,
                                    size_t size)
{
    void **p = pp;
    void *g = reallocarray(*p, cap ? cap : 1, size);
    if (!g)
        return false;
    memset((char *)g + had * size, 0, (cap - had) * size);
    *p = g;
    return true;
}

/* Room for keys 0..nkeys-1 (from `had`), new keys out of the cache. */
static inline bool lct__lru_grow(lct__lru *c, size_t had, size_t nkeys)
{
    return lct__grow_zeroed(&c->prev, had, nkeys, sizeof *c->prev) &&
           lct__grow_zeroed(&c->next, had, nkeys, sizeof *c->next) &&
           lct__grow_zeroed(&c->in, had, nkeys, sizeof *c->in) &&
           lct__grow_zeroed(&c->size, had, nkeys, sizeof *c->size);
}

static inline void lct__lru_free(lct__lru *c)
{
    free(c->prev), free(c->next), free(c->in), free(c->size);
}

static inline void lct__lru_unlink(lct__lru *c, uint32_t k)
{
    if (c->prev[k] != LCT__LRU_NIL)
        c->next[c->prev[k]] = c->next[k];
    else
        c->head = c->next[k];
    if (c->next[k] != LCT__LRU_NIL)
        c->prev[c->next[k]] = c->prev[k];
    else
        c->tail = c->prev[k];
    c->in[k] = false;
    c->used -= c->in_bytes ? c->size[k] : 1;
}

static inline void lct__lru_push(lct__lru *c, uint32_t k)
{
    c->prev[k] = LCT__LRU_NIL;
    c->next[k] = c->head;
    if (c->head != LCT__LRU_NIL)
        c->prev[c->head] = k;
    c->head = k;
    if (c->tail == LCT__LRU_NIL)
        c->tail = k;
    c->in[k] = true;
    c->used += c->in_bytes ? c->size[k] : 1;
}

/* k becomes the most recent: moved, or inserted and the least recent
 * evicted until it fits; a key larger than the whole cache bypasses it. */
static inline void lct__lru_touch(lct__lru *c, uint32_t k, uint64_t bytes)
{
    if (c->in[k])
        lct__lru_unlink(c, k);
    if (bytes)
        c->size[k] = bytes;
    uint64_t weight = c->in_bytes ? c->size[k] : 1;
    if (weight > c->capacity) {
        c->bypassed++;
        return;
    }
    while (c->used + weight > c->capacity && c->tail != LCT__LRU_NIL) {
        lct__lru_unlink(c, c->tail);
        c->evictions++;
    }
    lct__lru_push(c, k);
}

#endif
