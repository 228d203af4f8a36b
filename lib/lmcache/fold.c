/*
 * fold.c - a call's keys handed on chunk after chunk (lct_call_fold), as
 * LMCache folds a lookup: a chunk counts as hit only when every row (kv
 * rank, object group) holds it, whatever order the call lists its keys
 * in (chunk-major flat keys, or a task spec's rows one after another).
 * The keys are held until the call ends, then given to a reference
 * stream or a curve grouped by chunk, each chunk one chunk position.
 */
#include "lmcache/refs_internal.h"
#include "lct_cache.h"

#include <stdlib.h>
#include <string.h>

typedef struct held {
    uint64_t id, bytes;
    double t;
    uint32_t chunk;
    bool read;
} held;

struct lct_call_fold {
    lct_chunk_rows rows;
    held *keys, *sorted;
    size_t n, cap;
    uint32_t *sizes; /* keys a chunk, for the call handed on */
    size_t nsizes, sizecap;
};

lct_status lct_call_fold_new(lct_call_fold **out)
{
    if (!out)
        return LCT_ERR_INVALID;
    *out = calloc(1, sizeof **out);
    if (!*out)
        return LCT_ERR_NOMEM;
    lct_chunk_rows_reset(&(*out)->rows);
    return LCT_OK;
}

void lct_call_fold_free(lct_call_fold *f)
{
    if (!f)
        return;
    free(f->keys), free(f->sorted), free(f->sizes);
    free(f);
}

lct_status lct_call_fold_add_id(lct_call_fold *f, const lct_key_id *key,
                                double t_mono, bool is_read)
{
    if (!f || !key)
        return LCT_ERR_INVALID;
    if (f->n == f->cap) {
        size_t cap = f->cap ? 2 * f->cap : 64;
        held *k = reallocarray(f->keys, cap, sizeof *k);
        if (k)
            f->keys = k;
        held *s = k ? reallocarray(f->sorted, cap, sizeof *s) : NULL;
        if (!s)
            return LCT_ERR_NOMEM;
        f->sorted = s;
        f->cap = cap;
    }
    f->keys[f->n++] =
        (held){key->id, key->bytes, t_mono,
               lct_chunk_of_row(&f->rows, key->kv_rank, key->object_group_id),
               is_read};
    return LCT_OK;
}

lct_status lct_call_fold_add(lct_call_fold *f, const lct_object_key *key,
                             uint64_t bytes, double t_mono, bool is_read)
{
    if (!key)
        return LCT_ERR_INVALID;
    lct_key_id k = {lct_object_key_hash(key), bytes, key->kv_rank,
                    key->object_group_id};
    return lct_call_fold_add_id(f, &k, t_mono, is_read);
}

/* The held keys grouped by chunk (a counting sort: each chunk's keys in
 * the order added) into f->sorted, and each chunk's count into
 * f->sizes.  False when memory ran out. */
static bool group(lct_call_fold *f)
{
    uint32_t chunks = 0;
    for (size_t i = 0; i < f->n; i++)
        if (f->keys[i].chunk + 1 > chunks)
            chunks = f->keys[i].chunk + 1;
    if (chunks > f->sizecap) {
        uint32_t *g = reallocarray(f->sizes, chunks, sizeof *g);
        if (!g)
            return false;
        f->sizes = g;
        f->sizecap = chunks;
    }
    memset(f->sizes, 0, chunks * sizeof *f->sizes);
    for (size_t i = 0; i < f->n; i++)
        f->sizes[f->keys[i].chunk]++;
    /* where each chunk's keys start, then placed in order */
    size_t at = 0;
    for (uint32_t c = 0; c < chunks; c++) {
        size_t count = f->sizes[c];
        f->sizes[c] = (uint32_t)at;
        at += count;
    }
    for (size_t i = 0; i < f->n; i++)
        f->sorted[f->sizes[f->keys[i].chunk]++] = f->keys[i];
    for (uint32_t c = chunks; c-- > 1;) /* starts' ends back to counts */
        f->sizes[c] -= f->sizes[c - 1];
    f->nsizes = chunks;
    return true;
}

static void reset(lct_call_fold *f)
{
    f->n = 0;
    lct_chunk_rows_reset(&f->rows);
}

static lct_status refs_add(void *dst, const held *k)
{
    return lct_refs_add(dst, k->id, k->bytes, k->t, k->read);
}

static lct_status refs_end(void *dst, const uint32_t *sizes, size_t n)
{
    return lct__refs_end_call_sizes(dst, sizes, n);
}

static lct_status stream_add(void *dst, const held *k)
{
    return lct_mrc_stream_add(dst, k->id, k->bytes, k->read);
}

static lct_status stream_end(void *dst, const uint32_t *sizes, size_t n)
{
    return lct__mrc_stream_end_call_sizes(dst, sizes, n);
}

/* The call's keys grouped by chunk, added to dst and ended as one call
 * with a chunk position a chunk; the fold then empty. */
static lct_status hand_on(lct_call_fold *f, void *dst,
                          lct_status (*add)(void *, const held *),
                          lct_status (*end)(void *, const uint32_t *, size_t))
{
    if (!f || !dst)
        return LCT_ERR_INVALID;
    lct_status rc = group(f) ? LCT_OK : LCT_ERR_NOMEM;
    for (size_t i = 0; rc == LCT_OK && i < f->n; i++)
        rc = add(dst, &f->sorted[i]);
    if (rc == LCT_OK && f->n)
        rc = end(dst, f->sizes, f->nsizes);
    reset(f);
    return rc;
}

lct_status lct_call_fold_to_refs(lct_call_fold *f, lct_refs *refs)
{
    return hand_on(f, refs, refs_add, refs_end);
}

lct_status lct_call_fold_to_stream(lct_call_fold *f, lct_mrc_stream *s)
{
    return hand_on(f, s, stream_add, stream_end);
}
