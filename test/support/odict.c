/*
 * odict.c - Python's OrderedDict of keys as an array (odict.h).
 */
#include <criterion/criterion.h>
#include <string.h>

#include "odict.h"

size_t od_find(const odict *d, uint64_t key)
{
    for (size_t i = 0; i < d->n; i++)
        if (d->k[i] == key)
            return i;
    return SIZE_MAX;
}

bool od_has(const odict *d, uint64_t key)
{
    return od_find(d, key) != SIZE_MAX;
}

bool od_pop(odict *d, uint64_t key)
{
    size_t i = od_find(d, key);
    if (i == SIZE_MAX)
        return false;
    memmove(&d->k[i], &d->k[i + 1], (d->n - i - 1) * sizeof d->k[0]);
    d->n--;
    return true;
}

void od_append(odict *d, uint64_t key)
{
    cr_assert_lt(d->n, ODICT_ROOM);
    d->k[d->n++] = key;
}

void od_move_to_end(odict *d, uint64_t key)
{
    od_pop(d, key);
    od_append(d, key);
}
