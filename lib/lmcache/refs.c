/*
 * refs.c - key reference streams (lct_refs): appending, and writing them
 * as libCacheSim's oracleGeneral records, whose next-access positions
 * take one backward pass over the stream.
 */
#include "base/error_internal.h"
#include "lmcache/refs_internal.h"
#include "base/u64map_internal.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

lct_status lct_refs_new(lct_refs **out)
{
    if (!out)
        return LCT_ERR_INVALID;
    *out = calloc(1, sizeof **out);
    return *out ? LCT_OK : LCT_ERR_NOMEM;
}

void lct_refs_free(lct_refs *refs)
{
    if (!refs)
        return;
    for (size_t b = 0; b < refs->nblocks; b++)
        free(refs->blocks[b]);
    free(refs->blocks);
    free(refs);
}

static bool add_block(lct_refs *refs, size_t size)
{
    lct__ref **grown = reallocarray(refs->blocks, refs->nblocks + 1,
                                    sizeof *grown);
    if (!grown)
        return false;
    refs->blocks = grown;
    if (!(grown[refs->nblocks] = reallocarray(NULL, size, sizeof(lct__ref))))
        return false;
    lct__advise_huge(grown[refs->nblocks], size * sizeof(lct__ref));
    refs->nblocks++;
    return true;
}

/* Room for one more reference: block 0 doubles from 4096 references
 * (most streams are short) up to a block; then whole blocks are added. */
static bool reserve_one(lct_refs *refs)
{
    if (refs->nblocks == 0) {
        refs->first_cap = 4096;
        return add_block(refs, refs->first_cap);
    }
    if (refs->nblocks == 1 && refs->n == refs->first_cap &&
        refs->first_cap < LCT__REFS_BLOCK) {
        size_t cap = refs->first_cap * 2;
        lct__ref *grown = reallocarray(refs->blocks[0], cap, sizeof *grown);
        if (!grown)
            return false;
        refs->blocks[0] = grown;
        refs->first_cap = cap;
        lct__advise_huge(grown, cap * sizeof *grown);
        return true;
    }
    if (refs->n < refs->first_cap + (refs->nblocks - 1) * LCT__REFS_BLOCK)
        return true;
    return add_block(refs, LCT__REFS_BLOCK);
}

lct_status lct_refs_sample(lct_refs *refs, double rate, uint64_t seed,
                           unsigned samples)
{
    if (!refs || !(rate > 0 && rate <= 1) || samples == 0 || refs->n ||
        refs->dropped_reads || refs->dropped_writes)
        return LCT_ERR_INVALID;
    refs->threshold = rate >= 1 ? 0 : (uint64_t)ldexp(rate, 64);
    refs->seed = seed;
    refs->samples = samples;
    return LCT_OK;
}

/* Whether a sampled gathering keeps the key: one of its samples does. */
static bool wanted(const lct_refs *refs, uint64_t id)
{
    if (!refs->threshold)
        return true;
    for (unsigned s = 0; s < refs->samples; s++)
        if (lct__sampled(id, refs->seed + s, refs->threshold))
            return true;
    return false;
}

lct_status lct_refs_add(lct_refs *refs, uint64_t obj_id, uint64_t bytes,
                        double t_mono, bool is_read)
{
    if (!refs)
        return LCT_ERR_INVALID;
    if (!wanted(refs, obj_id)) {
        refs->dropped_reads += is_read;
        refs->dropped_writes += !is_read;
        return LCT_OK;
    }
    if (!reserve_one(refs))
        return LCT_ERR_NOMEM;
    uint32_t seconds = !(t_mono > 0)           ? 0
                       : t_mono >= 4294967295.0 ? UINT32_MAX
                                                : (uint32_t)t_mono;
    *lct__ref_at(refs, refs->n++) = (lct__ref){obj_id, bytes, seconds,
                                               is_read};
    return LCT_OK;
}

lct_status lct_refs_append(lct_refs *dst, lct_refs *src)
{
    if (!dst || !src)
        return LCT_ERR_INVALID;
    if (dst->threshold != src->threshold || dst->seed != src->seed ||
        dst->samples != src->samples)
        return LCT_ERR_INVALID; /* gathered with different samples */
    uint64_t dr = dst->dropped_reads + src->dropped_reads,
             dw = dst->dropped_writes + src->dropped_writes;
    if (dst->n == 0) { /* take src's blocks as they are */
        lct_refs empty = *dst;
        *dst = *src;
        *src = empty;
        dst->dropped_reads = dr;
        dst->dropped_writes = dw;
        src->dropped_reads = src->dropped_writes = 0;
        return LCT_OK;
    }
    for (size_t i = 0; i < src->n; i++) {
        if (!reserve_one(dst))
            return LCT_ERR_NOMEM; /* dst holds a prefix of src's */
        *lct__ref_at(dst, dst->n++) = *lct__ref_at(src, i);
    }
    src->n = 0;
    dst->dropped_reads = dr;
    dst->dropped_writes = dw;
    src->dropped_reads = src->dropped_writes = 0;
    return LCT_OK;
}

uint64_t lct_refs_count(const lct_refs *refs)
{
    return refs ? refs->n : 0;
}

static void put_le(unsigned char *p, uint64_t x, unsigned bytes)
{
    for (unsigned i = 0; i < bytes; i++)
        p[i] = (unsigned char)(x >> (8 * i));
}

/* What the export writes of each reference besides its own fields. */
typedef struct export_ref {
    int64_t next;  /* 1-based position of the next reference, or -1 */
    uint64_t size; /* the key's size as the trace knows it, 0 if never */
} export_ref;

/*
 * next: libCacheSim counts requests from 1 (its traceConv: "reference
 * count starts with 1"), so a reference's next access is the 1-based
 * position of the next reference to its id.  size: a reference that
 * carries none takes its key's latest size before it, else the first
 * one after it (the size lct_mrc_compute uses from there on), so the
 * same key does not weigh 1 byte in one place and 32 MiB in another.
 */
static export_ref *export_refs(const lct_refs *refs)
{
    /* Each key numbered by its first reference, once (the one hash
     * lookup a reference), so both passes index plain arrays. */
    size_t n = refs->n ? refs->n : 1;
    export_ref *x = reallocarray(NULL, n, sizeof *x);
    uint32_t *key = reallocarray(NULL, n, sizeof *key);
    lct__u64map ids = {0};
    uint64_t nkeys = 0;
    bool ok = x && key && refs->n < UINT32_MAX;
    for (size_t i = 0; ok && i < refs->n; i++) {
        if (i + 16 < refs->n)
            lct__u64map_prefetch(&ids, lct__ref_at(refs, i + 16)->obj_id);
        bool added;
        lct__u64map_entry *e =
            lct__u64map_get(&ids, lct__ref_at(refs, i)->obj_id, &added);
        if (!e) {
            ok = false;
            break;
        }
        if (added)
            e->value = ++nkeys;
        key[i] = (uint32_t)(e->value - 1);
    }
    lct__u64map_free(&ids);
    /* per key: the next reference's position + 1, and its size + 1 (the
     * first at or after, then the latest before); 0 when none yet */
    uint64_t *later = ok ? calloc(nkeys ? nkeys : 1, sizeof *later) : NULL;
    uint64_t *known = ok ? calloc(nkeys ? nkeys : 1, sizeof *known) : NULL;
    ok = ok && later && known;
    for (size_t i = refs->n; ok && i-- > 0;) { /* backward: what follows */
        const lct__ref *r = lct__ref_at(refs, i);
        uint32_t k = key[i];
        x[i].next = later[k] ? (int64_t)later[k] : -1;
        later[k] = i + 1;
        /* Sizes are kept as size + 1: 0 means none yet. */
        if (r->bytes)
            known[k] = (r->bytes < UINT64_MAX ? r->bytes : r->bytes - 1) + 1;
        else if (!known[k])
            known[k] = 1;
        x[i].size = known[k] - 1; /* the first size at or after i */
    }
    if (ok) /* forward: what preceded, in the same array */
        memset(known, 0, (nkeys ? nkeys : 1) * sizeof *known);
    for (size_t i = 0; ok && i < refs->n; i++) {
        const lct__ref *r = lct__ref_at(refs, i);
        uint32_t k = key[i];
        if (r->bytes)
            known[k] = (r->bytes < UINT64_MAX ? r->bytes : r->bytes - 1) + 1;
        else if (!known[k])
            known[k] = 1;
        if (known[k] > 1)
            x[i].size = known[k] - 1;
    }
    free(later);
    free(known);
    free(key);
    if (!ok) {
        free(x);
        return NULL;
    }
    return x;
}

uint64_t lct_refs_count_unsized(const lct_refs *refs)
{
    if (!refs)
        return 0;
    export_ref *x = export_refs(refs);
    if (!x)
        return UINT64_MAX;
    uint64_t n = 0;
    for (size_t i = 0; i < refs->n; i++)
        n += x[i].size == 0;
    free(x);
    return n;
}

lct_status lct_refs_write_oracle_general(const lct_refs *refs,
                                         lct_write_fn write, void *ctx,
                                         lct_error *err)
{
    if (!refs || !write)
        return lct__fail(err, LCT_ERR_INVALID, EINVAL, 0,
                         "lct_refs_write_oracle_general: invalid argument");
    export_ref *x = export_refs(refs);
    if (!x)
        return lct__fail(err, LCT_ERR_NOMEM, ENOMEM, 0,
                         "out of memory for next-access positions");
    enum { RECORD = 24, BATCH = 2730 }; /* 64 KiB of records at a time */
    unsigned char buf[RECORD * BATCH];
    size_t fill = 0;
    lct_status st = LCT_OK;
    for (size_t i = 0; i < refs->n && st == LCT_OK; i++) {
        const lct__ref *r = lct__ref_at(refs, i);
        unsigned char *p = buf + fill;
        uint64_t size = x[i].size == 0 ? 1 : x[i].size;
        put_le(p, r->seconds, 4);
        put_le(p + 4, r->obj_id, 8);
        put_le(p + 12, size > UINT32_MAX ? UINT32_MAX : size, 4);
        put_le(p + 16, (uint64_t)x[i].next, 8);
        fill += RECORD;
        if ((fill == sizeof buf || i + 1 == refs->n) &&
            write(ctx, (const char *)buf, fill) != 0)
            st = lct__fail(err, LCT_ERR_SYS, errno, 0,
                           "writing oracleGeneral records failed");
        if (fill == sizeof buf)
            fill = 0;
    }
    free(x);
    return st;
}
