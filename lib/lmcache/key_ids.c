/*
 * key_ids.c - a call's key ids a batch at a time (lct_key_iter_next_ids).
 * The keys of a list the validating walk noted share their model name
 * and salt, so the words lct_object_key_hash builds after a key's 40-byte
 * head (the name, kv_rank and object_group_id as 8 bytes each, the
 * salt's length and bytes) are the same for every key but for the two
 * numbers' low bytes: laid out once a call, they leave a key its head,
 * two bytes and the multiplies, and no lct_object_key is filled.
 */
#include "base/bytes_internal.h"
#include "lmcache/key_hash_internal.h"
#include "lmcache/keys_internal.h"

#include <stdbool.h>
#include <string.h>

/* The words after the head of one list's keys, with kv_rank and
 * object_group_id 0: rank's low byte goes into words[rank_word] at
 * shift, group's into the next word at the same shift (they are 8 bytes
 * apart).  256 bytes hold the name and salt of any key a template holds. */
typedef struct id_plan {
    uint64_t words[32];
    unsigned nwords, rank_word, shift;
    uint32_t model_len;
    uint64_t total; /* the hashed length, head included */
} id_plan;

/* The plan for keys like like; false when its fields do not fit one. */
static bool plan_ids(const lct_object_key *like, id_plan *pl)
{
    size_t name = like->model_name.len, salt = like->cache_salt.len;
    size_t len = name + 8 + 8 + 4 + salt;
    unsigned char b[sizeof pl->words] = {0};
    pl->nwords = pl->rank_word = pl->shift = pl->model_len = 0;
    pl->total = 0;
    if (like->chunk_hash.len != 32 || len > sizeof b)
        return false;
    if (name)
        memcpy(b, like->model_name.ptr, name);
    b[name + 16] = (unsigned char)salt; /* salt < 256: one byte of four */
    if (salt)
        memcpy(b + name + 20, like->cache_salt.ptr, salt);
    pl->nwords = (unsigned)((len + 7) / 8);
    for (unsigned j = 0; j < pl->nwords; j++)
        pl->words[j] = lct__le64(b + 8 * j);
    pl->rank_word = (unsigned)(name / 8);
    pl->shift = (unsigned)(8 * (name % 8));
    pl->model_len = (uint32_t)name;
    pl->total = 40 + len;
    return true;
}

/* lct_object_key_hash of a key of the plan's list. */
static inline uint64_t plan_id(const id_plan *pl, const unsigned char *hash,
                               uint64_t rank, uint64_t group)
{
    lct__key_hasher k = {LCT__KEY_HASH_SEED, 0, 0, 0};
    lct__hash_head32(&k, hash, pl->model_len);
    unsigned j = 0;
    for (; j < pl->rank_word; j++)
        lct__hash_word(&k, pl->words[j]);
    lct__hash_word(&k, pl->words[j] | rank << pl->shift);
    lct__hash_word(&k, pl->words[j + 1] | group << pl->shift);
    for (j += 2; j < pl->nwords; j++)
        lct__hash_word(&k, pl->words[j]);
    return lct__hash_finish(k.h ^ pl->total);
}

/* Up to max of the described list's keys (run_*), hashed where they
 * lie. */
static long run_ids(lct_key_iter *it, lct_key_id *out, size_t max)
{
    size_t n = it->run_count - it->run_next, stride = it->run_stride;
    n = n < max ? n : max;
    const unsigned char *p = lct__key_run_at(it, it->run_next);
    id_plan pl;
    bool planned = plan_ids(&it->run_like, &pl);
    /* a flat list's keys each weigh the call's layout */
    bool flat = !it->from_sizes && !it->from_spec;
    for (size_t i = 0; i < n; i++, p += stride) {
        uint64_t rank = (uint64_t)lct__key_run_rank(it, p);
        uint64_t group = (uint64_t)lct__key_run_group(it, p);
        lct_key_id *k = &out[i];
        k->kv_rank = (int64_t)rank;
        k->object_group_id = (int64_t)group;
        if (planned) {
            k->id = plan_id(&pl, p + LCT__MP_UNIT_FREE_AT, rank, group);
        } else {
            lct_object_key key;
            lct__key_run_key(it, it->run_next + (uint32_t)i, &key);
            k->id = lct_object_key_hash(&key);
        }
        k->bytes = flat ? it->layout_bytes
                        : lct__key_iter_weight(it, (int64_t)group);
    }
    if (flat)
        it->index += (uint32_t)n;
    it->run_next += (uint32_t)n;
    return (long)n;
}

static void key_id_of(const lct_object_key *key, uint64_t bytes,
                      lct_key_id *out)
{
    *out = (lct_key_id){lct_object_key_hash(key), bytes, key->kv_rank,
                        key->object_group_id};
}

long lct_key_iter_next_ids(lct_key_iter *it, lct_key_id *out, size_t max,
                           lct_error *err)
{
    if (max == 0)
        return 0;
    if (it->run_next < it->run_count || lct__key_run_next_part(it))
        return run_ids(it, out, max);
    size_t n = 0;
    /* keys read whole while the arguments were scanned: no failure left
     * among them */
    for (; n < max && it->next_cached < it->ncached; n++) {
        const lct_object_key *key = &it->cached[it->next_cached++];
        key_id_of(key, lct__key_iter_weight(it, key->object_group_id),
                  &out[n]);
    }
    if (n)
        return (long)n;
    lct_object_key key;
    uint64_t bytes;
    int rc = lct_key_iter_next(it, &key, &bytes, err);
    if (rc <= 0)
        return rc;
    key_id_of(&key, bytes, &out[0]);
    return 1;
}
