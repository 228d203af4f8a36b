/*
 * chunks.c - a call's chunk numbering (lct_chunk_of), which the prefix
 * rule counts in and LMCache's simulator keys by: a key's chunk is its
 * place among the call's keys of its kv rank and object group, so
 * chunk-major flat keys and a task spec's rows number alike; and the id
 * of a chunk by its hash alone (lct_chunk_hash_id).
 */
#include "lct_cache.h"

#include <string.h>

void lct_chunk_rows_reset(lct_chunk_rows *r)
{
    r->n = r->last = 0;
    r->count[LCT_CHUNK_ROWS] = 0;
}

static bool row_is(const lct_chunk_rows *r, unsigned i, int64_t rank,
                   int64_t group)
{
    return i < r->n && r->rank[i] == rank && r->group[i] == group;
}

uint32_t lct_chunk_of_row(lct_chunk_rows *r, int64_t rank, int64_t group)
{
    /* The next key is most often the next row's (chunk-major keys) or
     * the same row's (a task spec's, row after row). */
    unsigned next = r->last + 1 < r->n ? r->last + 1 : 0;
    unsigned i = row_is(r, next, rank, group)       ? next
                 : row_is(r, r->last, rank, group) ? r->last
                                                   : 0;
    while (i < r->n && !row_is(r, i, rank, group))
        i++;
    if (i == r->n && r->n < LCT_CHUNK_ROWS) {
        r->rank[i] = rank;
        r->group[i] = group;
        r->count[i] = 0;
        r->n++;
    } else if (i == r->n) {
        i = LCT_CHUNK_ROWS;
    }
    r->last = i < LCT_CHUNK_ROWS ? i : 0;
    return r->count[i]++;
}

uint32_t lct_chunk_of(lct_chunk_rows *r, const lct_object_key *key)
{
    return lct_chunk_of_row(r, key->kv_rank, key->object_group_id);
}

uint64_t lct_chunk_hash_id(lct_bytes chunk_hash)
{
    lct_object_key k;
    memset(&k, 0, sizeof k);
    k.chunk_hash = chunk_hash;
    k.model_name = (lct_str){"", 0};
    k.cache_salt = (lct_str){"", 0};
    return lct_object_key_hash(&k);
}
