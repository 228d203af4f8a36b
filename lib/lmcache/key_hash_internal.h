/*
 * key_hash_internal.h - the steps of the stable key hash
 * (lct_object_key_hash, key_hash.c) that another pass builds the same
 * hash from (key_ids.c hashes a noted list's keys where they lie): the
 * state, one word's mix, the 40-byte head of a key whose chunk_hash is
 * 32 bytes, and the finaliser.
 */
#ifndef LCT_KEY_HASH_INTERNAL_H
#define LCT_KEY_HASH_INTERNAL_H

#include <stdint.h>

#include "base/bytes_internal.h"

/* The state a hash starts from. */
#define LCT__KEY_HASH_SEED 0x9e3779b97f4a7c15u

/* The key hash: the fields laid out as lct.h says, consumed as 64-bit
 * little-endian words (the last one padded with zeros), each mixed in
 * with one multiply, then the length and splitmix64's finaliser.
 *
 * The words are put together in a register from loads of the trace's
 * own bytes.  Laying the fields out in a buffer first and loading the
 * words back made most loads straddle two stores, which a CPU cannot
 * forward (the likely cause, not confirmed by a counter), which cost
 * more than the multiplies. */
typedef struct lct__key_hasher {
    uint64_t h, word, total;
    unsigned fill; /* bytes in word, 0..7 */
} lct__key_hasher;

static inline void lct__hash_word(lct__key_hasher *k, uint64_t w)
{
    k->h = (k->h ^ w) * 0xff51afd7ed558ccdu;
    k->h ^= k->h >> 32;
}

static inline uint64_t lct__hash_finish(uint64_t h)
{
    h = (h ^ (h >> 30)) * 0xbf58476d1ce4e5b9u; /* splitmix64's finaliser */
    h = (h ^ (h >> 27)) * 0x94d049bb133111ebu;
    return h ^ (h >> 31);
}

/* The layout's first 40 bytes when chunk_hash is 32 bytes long, as
 * LMCache's are: five words at fixed places (its length, the hash's
 * bytes, the model name's length), so no word is put together a field at
 * a time, as the generic pushes would. */
static inline void lct__hash_head32(lct__key_hasher *k,
                                    const unsigned char *c,
                                    uint32_t model_len)
{
    uint64_t lo = lct__le64(c), hi = lct__le64(c + 24);
    lct__hash_word(k, 32 | lo << 32);
    lct__hash_word(k, lct__le64(c + 4));
    lct__hash_word(k, lct__le64(c + 12));
    lct__hash_word(k, lct__le64(c + 20));
    lct__hash_word(k, hi >> 32 | (uint64_t)model_len << 32);
    k->total = 40;
}

#endif
