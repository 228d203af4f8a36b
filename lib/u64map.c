/*
 * u64map.c - the id map of u64map_internal.h: linear probing over a
 * power-of-two table, doubled at half full.
 */
#include "u64map_internal.h"

#include <stdlib.h>

/* Ids may be anything a caller hands in: mix before using low bits. */
static uint64_t mix(uint64_t x)
{
    x = (x ^ (x >> 33)) * 0xff51afd7ed558ccdu;
    return x ^ (x >> 33);
}

static bool grow(lct__u64map *m)
{
    uint64_t n = m->slots ? (m->mask + 1) * 2 : 1024;
    lct__u64map_entry *slots = calloc(n, sizeof *slots);
    if (!slots)
        return false;
    for (uint64_t i = 0; m->slots && i <= m->mask; i++) {
        if (!m->slots[i].used)
            continue;
        uint64_t j = mix(m->slots[i].key) & (n - 1);
        while (slots[j].used)
            j = (j + 1) & (n - 1);
        slots[j] = m->slots[i];
    }
    free(m->slots);
    m->slots = slots;
    m->mask = n - 1;
    return true;
}

lct__u64map_entry *lct__u64map_get(lct__u64map *m, uint64_t key, bool *added)
{
    if ((!m->slots || 2 * (m->used + 1) > m->mask + 1) && !grow(m))
        return NULL;
    uint64_t j = mix(key) & m->mask;
    while (m->slots[j].used) {
        if (m->slots[j].key == key) {
            *added = false;
            return &m->slots[j];
        }
        j = (j + 1) & m->mask;
    }
    m->slots[j] = (lct__u64map_entry){.key = key, .used = true};
    m->used++;
    *added = true;
    return &m->slots[j];
}

void lct__u64map_free(lct__u64map *m)
{
    free(m->slots);
    *m = (lct__u64map){0};
}
