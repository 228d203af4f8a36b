/*
 * key_hash.c - the stable key hash, lct_object_key_hash: the fields laid
 * out as lct_lmcache.h says, as 64-bit words (key_hash_internal.h has
 * the steps key_ids.c shares).
 */
#include "lmcache/key_hash_internal.h"
#include "lct_lmcache.h"

#include <stddef.h>

/* Append n (1..8) bytes: the low n bytes of v, whose other bytes are 0. */
static inline void hash_push(lct__key_hasher *k, uint64_t v, unsigned n)
{
    unsigned f = k->fill;
    k->word |= v << (8 * f);
    if (f + n < 8) {
        k->fill = f + n;
        return;
    }
    lct__hash_word(k, k->word);
    k->word = f ? v >> (8 * (8 - f)) : 0;
    k->fill = f + n - 8;
}

/* The n & 7 (1..7) bytes of p[0..n) after its whole words, as the low
 * bytes of a word. */
static inline uint64_t tail_word(const unsigned char *p, size_t n)
{
    size_t tail = n & 7;
    if (n >= 8) /* the last 8 bytes, shifted down to the tail's */
        return lct__le64(p + n - 8) >> (8 * (8 - tail));
    uint64_t v = 0;
    for (size_t i = 0; i < tail; i++)
        v |= (uint64_t)p[i] << (8 * i);
    return v;
}

static inline void hash_bytes(lct__key_hasher *k, const unsigned char *p,
                              size_t n)
{
    k->total += n;
    size_t whole = n & ~(size_t)7, tail = n & 7;
    for (size_t at = 0; at < whole; at += 8)
        hash_push(k, lct__le64(p + at), 8);
    if (tail)
        hash_push(k, tail_word(p, n), (unsigned)tail);
}

static inline void hash_le(lct__key_hasher *k, uint64_t x, unsigned bytes)
{
    k->total += bytes;
    hash_push(k, bytes == 8 ? x : x & (((uint64_t)1 << (8 * bytes)) - 1),
              bytes);
}

/* After lct__hash_head32 (a word boundary): the model name and the two
 * 8-byte numbers.  The name's length fixes where in a word each number
 * starts, so their words take one pair of shifts worked out once, not a
 * push a field (which chooses its shifts and tests for a full word at
 * every field). */
static void hash_name_numbers(lct__key_hasher *k, const lct_object_key *key)
{
    const unsigned char *name = (const unsigned char *)key->model_name.ptr;
    size_t len = key->model_name.len, whole = len & ~(size_t)7;
    unsigned r = (unsigned)(len & 7); /* the name's bytes in its last word */
    for (size_t at = 0; at < whole; at += 8)
        lct__hash_word(k, lct__le64(name + at));
    uint64_t rank = (uint64_t)key->kv_rank;
    uint64_t group = (uint64_t)key->object_group_id;
    k->total += len + 16;
    if (!r) {
        lct__hash_word(k, rank);
        lct__hash_word(k, group);
        return; /* k->word stays empty */
    }
    uint64_t t = tail_word(name, len);
    unsigned up = 8 * r, down = 64 - up;
    lct__hash_word(k, t | rank << up);
    lct__hash_word(k, rank >> down | group << up);
    k->word = group >> down;
    k->fill = r;
}

uint64_t lct_object_key_hash(const lct_object_key *key)
{
    lct__key_hasher k = {LCT__KEY_HASH_SEED, 0, 0, 0};
    if (key->chunk_hash.len == 32) {
        lct__hash_head32(&k, key->chunk_hash.ptr,
                         (uint32_t)key->model_name.len);
        hash_name_numbers(&k, key);
    } else {
        hash_le(&k, key->chunk_hash.len, 4);
        hash_bytes(&k, key->chunk_hash.ptr, key->chunk_hash.len);
        hash_le(&k, key->model_name.len, 4);
        hash_bytes(&k, (const unsigned char *)key->model_name.ptr,
                   key->model_name.len);
        hash_le(&k, (uint64_t)key->kv_rank, 8);
        hash_le(&k, (uint64_t)key->object_group_id, 8);
    }
    if (key->cache_salt.len) {
        hash_le(&k, key->cache_salt.len, 4);
        hash_bytes(&k, (const unsigned char *)key->cache_salt.ptr,
                   key->cache_salt.len);
    } else {
        hash_le(&k, 0, 4); /* most keys: a constant length, nothing more */
    }
    if (k.fill)
        lct__hash_word(&k, k.word);
    return lct__hash_finish(k.h ^ k.total);
}
