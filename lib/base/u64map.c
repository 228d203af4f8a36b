/*
 * u64map.c - the id map of u64map_internal.h: linear probing over a
 * power-of-two table, doubled at half full.
 */
#include "base/u64map_internal.h"

#include "base/bigmem_internal.h"
#include "lct_core.h"

#include <stdlib.h>
#include <string.h>

static bool grow(lct__u64map *m)
{
    uint64_t n = m->slots ? (m->mask + 1) * 2 : 1024;
    lct__u64map_entry *slots = lct__big_calloc(n, sizeof *slots);
    if (!slots)
        return false;
    for (uint64_t i = 0; m->slots && i <= m->mask; i++) {
        if (!m->slots[i].value)
            continue;
        uint64_t j = lct__u64map_mix(m->slots[i].key) & (n - 1);
        while (slots[j].value)
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
    uint64_t j = lct__u64map_mix(key) & m->mask;
    while (m->slots[j].value) {
        if (m->slots[j].key == key) {
            *added = false;
            return &m->slots[j];
        }
        j = (j + 1) & m->mask;
    }
    m->slots[j] = (lct__u64map_entry){.key = key, .value = 0};
    m->used++;
    *added = true;
    return &m->slots[j];
}

lct__u64map_entry *lct__u64map_find(const lct__u64map *m, uint64_t key)
{
    if (!m->slots)
        return NULL;
    uint64_t j = lct__u64map_mix(key) & m->mask;
    for (; m->slots[j].value; j = (j + 1) & m->mask)
        if (m->slots[j].key == key)
            return &m->slots[j];
    return NULL;
}

void lct__u64map_remove(lct__u64map *m, lct__u64map_entry *e)
{
    uint64_t hole = (uint64_t)(e - m->slots), j = hole;
    for (;;) {
        j = (j + 1) & m->mask;
        if (!m->slots[j].value)
            break;
        /* The entry at j may fill the hole when the hole lies on its
         * probe path: from its home slot to j, cyclically. */
        uint64_t home = lct__u64map_mix(m->slots[j].key) & m->mask;
        if (((j - home) & m->mask) >= ((j - hole) & m->mask)) {
            m->slots[hole] = m->slots[j];
            hole = j;
        }
    }
    m->slots[hole] = (lct__u64map_entry){0};
    m->used--;
}

void lct__u64map_free(lct__u64map *m)
{
    free(m->slots);
    *m = (lct__u64map){0};
}
