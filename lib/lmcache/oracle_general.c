/*
 * oracle_general.c - a key reference stream written as libCacheSim's
 * oracleGeneral records (lct_refs_write_oracle_general), whose
 * next-access positions take one backward pass over the stream, and the
 * count of references the export has no size for.
 */
#include "base/bigmem_internal.h"
#include "base/bytes_internal.h"
#include "base/error_internal.h"
#include "base/u64map_internal.h"
#include "lmcache/refs_internal.h"
#include "lct_cache.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/*
 * What the export needs besides each reference's own fields, in 8 bytes a
 * reference and 20 a key (it was 20 a reference: the pages the kernel
 * zeroes for it were a sixth of `lct keys --oracle-general`), or 4 bytes
 * a reference and a map of the keys when every reference has a size
 * (plan_sized).
 *
 * next: libCacheSim counts requests from 1 (its traceConv: "reference
 * count starts with 1"), so a reference's next access is the 1-based
 * position of the next reference to its id (0 here: none).  size: a
 * reference that carries none takes its key's latest size before it,
 * else the first one after it (the size lct_mrc_compute uses from there
 * on), so the same key does not weigh 1 byte in one place and 32 MiB in
 * another; when no earlier reference has one, the first after it is the
 * key's first, so one size a key is all the backward view needs.
 */
typedef struct export_plan {
    bool sized;           /* every reference has its own size: no key's
                             size to look up, and no key numbers */
    uint32_t *key;        /* each reference's key, numbered from 0 */
    uint32_t *next;       /* 1-based position of the next one, 0: none */
    uint64_t *first_size; /* per key: its first reference's size, 0: none */
    uint64_t *latest;     /* per key, while writing: latest size so far */
} export_plan;

static void plan_free(export_plan *x)
{
    free(x->key);
    free(x->next);
    free(x->first_size);
    free(x->latest);
}

/*
 * The next positions when every reference has a size: backward through
 * one map from ids to the position after, with no key numbers in
 * between.  The numbering's lookup a reference is the same; what goes is
 * its array of numbers (4 bytes a reference of fresh memory, written and
 * read once more) and the passes that fill it, so this one thread takes
 * no longer than numbering on two, and less CPU.
 */
static bool plan_sized(const lct_refs *refs, export_plan *x)
{
    lct__u64map after = {0}; /* obj_id -> 1-based position of the next */
    size_t i = refs->n;
    bool ok = refs->n < UINT32_MAX;
    for (size_t part = refs->nparts; ok && part-- > 0;) {
        const lct__refs_part *p = &refs->parts[part];
        for (size_t j = p->n; ok && j-- > 0;) {
            if (j >= 16)
                lct__u64map_prefetch(&after, lct__part_at(p, j - 16)->obj_id);
            bool added;
            lct__u64map_entry *e =
                lct__u64map_get(&after, lct__part_at(p, j)->obj_id, &added);
            if (!(ok = e != NULL))
                break;
            x->next[--i] = added ? 0 : (uint32_t)e->value;
            e->value = i + 1;
        }
    }
    lct__u64map_free(&after);
    return ok;
}

static bool plan_keyed(const lct_refs *refs, export_plan *x, size_t nkeys);

static bool plan_export(const lct_refs *refs, export_plan *x)
{
    memset(x, 0, sizeof *x);
    size_t n = refs->n ? refs->n : 1, nkeys;
    if (!(x->next = lct__big_alloc(n * sizeof *x->next)))
        return false;
    if (!refs->sizeless) {
        x->sized = true;
        return plan_sized(refs, x);
    }
    x->key = lct__big_alloc(n * sizeof *x->key);
    if (!x->key || !lct__refs_number(refs, NULL, x->key, &nkeys))
        return false;
    return plan_keyed(refs, x, nkeys);
}

/* The plan of a stream whose references' keys are numbered in x->key
 * (nkeys of them), x->next allocated: next positions and first sizes in
 * one backward pass. */
static bool plan_keyed(const lct_refs *refs, export_plan *x, size_t nkeys)
{
    uint32_t *later = calloc(nkeys ? nkeys : 1, sizeof *later);
    x->first_size = calloc(nkeys ? nkeys : 1, sizeof *x->first_size);
    x->latest = calloc(nkeys ? nkeys : 1, sizeof *x->latest);
    bool ok = later && x->first_size && x->latest;
    size_t i = refs->n; /* backward: what follows */
    for (size_t part = refs->nparts; ok && part-- > 0;) {
        const lct__refs_part *p = &refs->parts[part];
        for (size_t j = p->n; j-- > 0;) {
            uint32_t k = x->key[--i];
            x->next[i] = later[k];
            later[k] = (uint32_t)(i + 1);
            uint64_t bytes = lct__ref_bytes(p, j, lct__part_at(p, j));
            if (bytes)
                x->first_size[k] = bytes;
        }
    }
    free(later);
    return ok;
}

/* Reference i's size as the export gives it (0: its key never has one);
 * called in stream order, it keeps each key's latest size. */
static uint64_t export_size(export_plan *x, uint64_t bytes, size_t i)
{
    if (x->sized)
        return bytes;
    uint32_t k = x->key[i];
    if (bytes)
        x->latest[k] = bytes;
    return x->latest[k] ? x->latest[k] : x->first_size[k];
}

bool lct__refs_next_sizes(const lct_refs *refs, const uint32_t *key,
                          size_t nkeys, uint32_t **next, uint64_t **sizes)
{
    export_plan x = {.key = (uint32_t *)key}; /* borrowed: not freed */
    size_t n = refs->n ? refs->n : 1;
    *next = NULL;
    if (sizes)
        *sizes = NULL;
    bool ok = (x.next = lct__big_alloc(n * sizeof *x.next)) != NULL &&
              plan_keyed(refs, &x, nkeys);
    uint64_t *s = NULL;
    if (ok && sizes && (ok = (s = lct__big_alloc(n * sizeof *s)) != NULL)) {
        for (LCT__EACH_REF(refs, c)) {
            uint64_t bytes = export_size(&x, lct__cursor_bytes(&c), c.i);
            s[c.i] = bytes ? bytes : 1;
        }
    }
    if (ok) {
        *next = x.next;
        x.next = NULL;
        if (sizes)
            *sizes = s;
    }
    x.key = NULL;
    plan_free(&x);
    return ok;
}

uint64_t lct_refs_count_unsized(const lct_refs *refs)
{
    if (!refs || !refs->sizeless) /* a size of its own: never 0 */
        return 0;
    export_plan x;
    uint64_t n = 0;
    if (!plan_export(refs, &x)) {
        plan_free(&x);
        return UINT64_MAX;
    }
    for (LCT__EACH_REF(refs, c))
        n += export_size(&x, lct__cursor_bytes(&c), c.i) == 0;
    plan_free(&x);
    return n;
}

lct_status lct_refs_write_oracle_general(const lct_refs *refs,
                                         lct_write_fn write, void *ctx,
                                         uint64_t *unsized, lct_error *err)
{
    if (!refs || !write)
        return lct__fail(err, LCT_ERR_INVALID, EINVAL, 0,
                         "lct_refs_write_oracle_general: invalid argument");
    export_plan x;
    if (!plan_export(refs, &x)) {
        plan_free(&x);
        return lct__fail(err, LCT_ERR_NOMEM, ENOMEM, 0,
                         "out of memory for next-access positions");
    }
    enum { RECORD = 24, BATCH = 2730 }; /* 64 KiB of records at a time */
    unsigned char buf[RECORD * BATCH];
    size_t fill = 0;
    uint64_t none = 0;
    lct_status st = LCT_OK;
    for (LCT__EACH_REF(refs, c)) {
        const lct__ref *r = c.ref;
        size_t i = c.i;
        unsigned char *p = buf + fill;
        uint64_t size = export_size(&x, lct__cursor_bytes(&c), i);
        none += size == 0;
        lct__put_le32(p, r->seconds);
        lct__put_le64(p + 4, r->obj_id);
        lct__put_le32(p + 12, size == 0            ? 1
                              : size > UINT32_MAX ? UINT32_MAX
                                                  : (uint32_t)size);
        lct__put_le64(p + 16,
                      x.next[i] ? (uint64_t)x.next[i] : UINT64_MAX);
        fill += RECORD;
        if ((fill == sizeof buf || i + 1 == refs->n) &&
            write(ctx, (const char *)buf, fill) != 0)
            st = lct__fail(err, LCT_ERR_SYS, errno, 0,
                           "writing oracleGeneral records failed");
        if (fill == sizeof buf)
            fill = 0;
        if (st != LCT_OK)
            break;
    }
    plan_free(&x);
    if (unsized && st == LCT_OK)
        *unsized = none;
    return st;
}
