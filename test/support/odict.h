/*
 * odict.h - Python's OrderedDict of keys, plainly (odict.c): an array,
 * the oldest first, for the tests that rewrite LMCache's eviction
 * policies step for step.
 */
#ifndef LCT_TEST_ODICT_H
#define LCT_TEST_ODICT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define ODICT_ROOM 256

typedef struct odict {
    uint64_t k[ODICT_ROOM];
    size_t n;
} odict;

/* The key's place, or SIZE_MAX. */
size_t od_find(const odict *d, uint64_t key);
bool od_has(const odict *d, uint64_t key);
/* pop(key, None): whether it was there. */
bool od_pop(odict *d, uint64_t key);
/* d[key] = None for a key not there (the test fails past ODICT_ROOM). */
void od_append(odict *d, uint64_t key);
void od_move_to_end(odict *d, uint64_t key);

#endif
