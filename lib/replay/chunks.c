/*
 * chunks.c - a prefetch call's chunk numbering, which the prefix rule
 * counts in: a key's chunk is its place among the call's keys of its
 * kv rank and object group, so chunk-major flat keys and a task spec's
 * rows number alike.
 */
#include "replay/replay_internal.h"

static bool row_is(const lct__chunk_rows *r, unsigned i,
                   const lct_object_key *key)
{
    return i < r->n && r->rank[i] == key->kv_rank &&
           r->group[i] == key->object_group_id;
}

uint32_t lct__chunk_of(lct__chunk_rows *r, const lct_object_key *key)
{
    /* The next key is most often the next row's (chunk-major keys) or
     * the same row's (a task spec's, row after row). */
    unsigned next = r->last + 1 < r->n ? r->last + 1 : 0;
    unsigned i = row_is(r, next, key)       ? next
                 : row_is(r, r->last, key) ? r->last
                                           : 0;
    while (i < r->n && !row_is(r, i, key))
        i++;
    if (i == r->n && r->n < LCT__ROWS) {
        r->rank[i] = key->kv_rank;
        r->group[i] = key->object_group_id;
        r->count[i] = 0;
        r->n++;
    } else if (i == r->n) {
        i = LCT__ROWS;
    }
    r->last = i < LCT__ROWS ? i : 0;
    return r->count[i]++;
}
