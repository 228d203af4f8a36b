/*
 * keys_internal.h - what the key layer (lmcache.c) tells another pass of
 * its own layer about a call's keys: whether they are the list the
 * record's validating walk noted (LCT_KEYS), in parts whose keys are
 * alike but for chunk_hash, kv_rank and object_group_id, so that a pass
 * that digests each key's fields (spans.c) digests the model and salt
 * once a part and reads the rest of each key where it lies, without an
 * lct_object_key a key (the iterator's description of a part, run_*,
 * read through the helpers below); and what key_ids.c takes from the
 * key iterator to hand out a list's ids without an lct_object_key each.
 * It also starts an iterator for a pass that asks for the keys alone.
 */
#ifndef LCT_KEYS_INTERNAL_H
#define LCT_KEYS_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lct_lmcache.h"
#include "msgpack/unit_internal.h"

/* Key i of the iterator's described part (run_*: of a list the walk
 * noted, keys alike but for chunk_hash, kv_rank and object_group_id, each
 * with run_like's model_name and cache_salt): its first byte; its
 * chunk_hash is the 32 bytes LCT__MP_UNIT_FREE_AT on. */
static inline const unsigned char *lct__key_run_at(const lct_key_iter *it,
                                                   size_t i)
{
    return it->run_first + i * it->run_stride;
}

/* The kv_rank and object_group_id of the described list's key at key. */
static inline int64_t lct__key_run_rank(const lct_key_iter *it,
                                        const unsigned char *key)
{
    return key[it->run_rank_at];
}

static inline int64_t lct__key_run_group(const lct_key_iter *it,
                                         const unsigned char *key)
{
    return it->run_group_at ? key[it->run_group_at] : 0;
}

/* lct_key_iter_init for a pass that asks for the keys alone: the same
 * keys in the same order and the same failures, without the call's
 * policy, mode, skip_l2, layout_desc or an L2 event's sizes (none of
 * which can fail a call), so a flat list's keys weigh 0. */
lct_status lct__key_iter_init_keys(const lct_record *rec, lct_key_iter *it,
                                   lct_error *err);

/* Describe the list's next part (there is one). */
void lct__key_run_describe_next(lct_key_iter *it);

/* When the described part is done: describe the list's next part, if
 * there is one (run_next 0). */
static inline bool lct__key_run_next_part(lct_key_iter *it)
{
    if (it->run_part + 1 >= it->run_parts)
        return false;
    lct__key_run_describe_next(it);
    return true;
}

/* Key i of the iterator's described part, as lct_key_iter_next hands it
 * out (every view into that key's own bytes). */
void lct__key_run_key(const lct_key_iter *it, uint32_t i,
                      lct_object_key *key);

/* What the iterator's next key weighs, for a key of object_group_id
 * group, as lct_key_iter_next says (the layout, an L2 event's size, a
 * spec group's layout); counts the key (it->index) and steps over its
 * size. */
uint64_t lct__key_iter_weight(lct_key_iter *it, int64_t group);

#endif
