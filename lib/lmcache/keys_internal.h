/*
 * keys_internal.h - what the key layer (lmcache.c) tells another pass of
 * its own layer about a key iterator: whether its keys are the list the
 * record's validating walk noted (LCT_KEYS), every key alike but for
 * chunk_hash, kv_rank and object_group_id, so that a pass that digests
 * each key's fields (spans.c) digests the model and salt once a list.
 */
#ifndef LCT_KEYS_INTERNAL_H
#define LCT_KEYS_INTERNAL_H

#include <stdbool.h>

#include "lct_lmcache.h"

/* After lct_key_iter_init: every key it yields has the first one's
 * model_name and cache_salt bytes (the walk's template compare proved
 * it).  False says nothing. */
static inline bool lct__key_iter_alike(const lct_key_iter *it)
{
    return it->alike && it->ncached > 0;
}

#endif
