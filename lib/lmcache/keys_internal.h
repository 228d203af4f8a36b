/*
 * keys_internal.h - what the key layer (lmcache.c) tells another pass of
 * its own layer about a call's keys: whether they are the list the
 * record's validating walk noted (LCT_KEYS), every key alike but for
 * chunk_hash, kv_rank and object_group_id, so that a pass that digests
 * each key's fields (spans.c) digests the model and salt once a list and
 * reads the rest of each key where it lies, without an lct_object_key a
 * key; and what key_ids.c takes from the key iterator to hand out a
 * list's ids without an lct_object_key each.
 */
#ifndef LCT_KEYS_INTERNAL_H
#define LCT_KEYS_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lct_lmcache.h"
#include "msgpack/unit_internal.h"

/* A noted list as it lies: count keys from first, stride bytes apart,
 * each with like's model_name and cache_salt (like is the first key);
 * key i's chunk_hash is the 32 bytes at lct__key_run_hash, its kv_rank
 * the byte at rank_at and its object_group_id the byte at group_at (0
 * when has_group is false). */
typedef struct lct__key_run {
    const unsigned char *first;
    size_t stride, count;
    size_t rank_at, group_at;
    bool has_group;
    lct_object_key like;
} lct__key_run;

/* lct_key_iter_init, except that when the call's keys are the walk's
 * noted list they are described in *run (run->count > 0) and the
 * iterator yields none of them; otherwise run->count is 0 and the
 * iterator yields the keys as lct_key_iter_init's would. */
lct_status lct__key_iter_init_run(const lct_record *rec, lct_key_iter *it,
                                  lct__key_run *run, lct_error *err);

/* Key i of the iterator's described list (run_*), as lct_key_iter_next
 * hands it out (every view into that key's own bytes). */
void lct__key_run_key(const lct_key_iter *it, uint32_t i,
                      lct_object_key *key);

/* What the iterator's next key weighs, for a key of object_group_id
 * group, as lct_key_iter_next says (the layout, an L2 event's size, a
 * spec group's layout); counts the key (it->index) and steps over its
 * size. */
uint64_t lct__key_iter_weight(lct_key_iter *it, int64_t group);

static inline const unsigned char *lct__key_run_hash(const lct__key_run *r,
                                                     size_t i)
{
    return r->first + i * r->stride + LCT__MP_UNIT_FREE_AT;
}

static inline int64_t lct__key_run_rank(const lct__key_run *r, size_t i)
{
    return r->first[i * r->stride + r->rank_at];
}

static inline int64_t lct__key_run_group(const lct__key_run *r, size_t i)
{
    return r->has_group ? r->first[i * r->stride + r->group_at] : 0;
}

#endif
