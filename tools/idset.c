/*
 * idset.c - a set of 64-bit ids (obj_ids, chunk digests) for the
 * commands that ask "seen before?" or "in both?": open addressing, grown
 * at half full, 0 kept beside the table (it marks a free slot).
 */
#include "tool.h"

#include <stdlib.h>

static size_t place(const uint64_t *slot, size_t mask, uint64_t id)
{
    size_t i = (size_t)(id >> 17) & mask; /* ids are digests: spread */
    while (slot[i] && slot[i] != id)
        i = (i + 1) & mask;
    return i;
}

int tool_idset_add(tool_idset *s, uint64_t id)
{
    if (!id) {
        bool had = s->zero;
        s->zero = true;
        s->n += !had;
        return !had;
    }
    if (!s->slot || 2 * (s->held + 1) > s->mask + 1) {
        size_t cap = s->slot ? 2 * (s->mask + 1) : 4096;
        uint64_t *g = calloc(cap, sizeof *g);
        if (!g)
            return -1;
        for (size_t i = 0; s->slot && i <= s->mask; i++)
            if (s->slot[i])
                g[place(g, cap - 1, s->slot[i])] = s->slot[i];
        free(s->slot);
        s->slot = g;
        s->mask = cap - 1;
    }
    size_t i = place(s->slot, s->mask, id);
    if (s->slot[i])
        return 0;
    s->slot[i] = id;
    s->held++;
    s->n++;
    return 1;
}

bool tool_idset_has(const tool_idset *s, uint64_t id)
{
    if (!id)
        return s->zero;
    return s->slot && s->slot[place(s->slot, s->mask, id)] == id;
}

uint64_t tool_idset_common(const tool_idset *a, const tool_idset *b)
{
    uint64_t both = a->zero && b->zero;
    for (size_t i = 0; a->slot && i <= a->mask; i++)
        both += a->slot[i] && tool_idset_has(b, a->slot[i]);
    return both;
}

void tool_idset_free(tool_idset *s)
{
    free(s->slot);
    *s = (tool_idset){0};
}
