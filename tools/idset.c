/*
 * idset.c - a set of 64-bit ids (obj_ids, chunk digests) for the
 * commands that ask "seen before?" or "in both?", and a map from such an
 * id to a number for those that count per id: open addressing, grown at
 * half full, 0 kept beside the table (it marks a free slot).
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

/* Room for one more id: the table (and its values, when a map's)
 * doubled at half full; false out of memory, the table as it was. */
static bool room_for_one(uint64_t **slot, uint64_t **value, size_t *mask,
                         size_t held)
{
    if (*slot && 2 * (held + 1) <= *mask + 1)
        return true;
    size_t cap = *slot ? 2 * (*mask + 1) : 4096;
    uint64_t *g = calloc(cap, sizeof *g);
    uint64_t *v = value ? calloc(cap, sizeof *v) : NULL;
    if (!g || (value && !v)) {
        free(g);
        free(v);
        return false;
    }
    for (size_t i = 0; *slot && i <= *mask; i++) {
        if (!(*slot)[i])
            continue;
        size_t at = place(g, cap - 1, (*slot)[i]);
        g[at] = (*slot)[i];
        if (value)
            v[at] = (*value)[i];
    }
    free(*slot);
    *slot = g;
    if (value) {
        free(*value);
        *value = v;
    }
    *mask = cap - 1;
    return true;
}

int tool_idset_add(tool_idset *s, uint64_t id)
{
    if (!id) {
        bool had = s->zero;
        s->zero = true;
        s->n += !had;
        return !had;
    }
    if (!room_for_one(&s->slot, NULL, &s->mask, s->held))
        return -1;
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

uint64_t *tool_idmap_get(tool_idmap *m, uint64_t id)
{
    if (!id)
        return &m->zero_value;
    if (!room_for_one(&m->slot, &m->value, &m->mask, m->held))
        return NULL;
    size_t i = place(m->slot, m->mask, id);
    if (!m->slot[i]) {
        m->slot[i] = id;
        m->held++;
    }
    return &m->value[i];
}

void tool_idmap_free(tool_idmap *m)
{
    free(m->slot);
    free(m->value);
    *m = (tool_idmap){0};
}
