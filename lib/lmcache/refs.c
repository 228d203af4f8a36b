/*
 * refs.c - key reference streams (lct_refs): appending, sampling, joining
 * the threads' streams, and numbering their keys (lct__refs_number) for
 * the passes that index arrays by key.
 */
#include "base/bigmem_internal.h"
#include "base/threads_internal.h"
#include "base/u64map_internal.h"
#include "lmcache/refs_internal.h"
#include "lct_cache.h"

#include <stddef.h>
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

static void part_free(lct__refs_part *p)
{
    for (size_t b = 0; b < p->nblocks; b++)
        free(p->blocks[b]);
    free(p->blocks);
    lct__u64map_free(&p->big);
}

void lct_refs_free(lct_refs *refs)
{
    if (!refs)
        return;
    for (size_t k = 0; k < refs->nparts; k++)
        part_free(&refs->parts[k]);
    free(refs->parts);
    free(refs->salts);
    free(refs);
}

static bool add_block(lct__refs_part *p, size_t size)
{
    lct__ref **grown = reallocarray(p->blocks, p->nblocks + 1, sizeof *grown);
    if (!grown)
        return false;
    p->blocks = grown;
    if (!(grown[p->nblocks] = lct__big_alloc(size * sizeof(lct__ref))))
        return false;
    p->nblocks++;
    return true;
}

/* Room for one more reference in the last part: block 0 doubles from
 * 4096 references (most streams are short) to 65536, then becomes a
 * whole block at once (each doubling copied the block into fresh pages:
 * a third of `lct keys`' page faults); then whole blocks are added.  A
 * block's pages are touched only as references fill it.  From 256 KiB
 * its doublings go onto 2 MiB pages where those pay (lct__big_grow):
 * 4 KiB ones were still 270 of `lct mrc --sample`'s 1,050 faults. */
static bool reserve_one(lct_refs *refs)
{
    if (refs->nparts == 0) {
        if (!(refs->parts = calloc(1, sizeof *refs->parts)))
            return false;
        refs->nparts = 1;
    }
    lct__refs_part *p = &refs->parts[refs->nparts - 1];
    if (p->nblocks == 0) {
        p->first_cap = 4096;
        return add_block(p, p->first_cap);
    }
    if (p->nblocks == 1 && p->n == p->first_cap &&
        p->first_cap < LCT__REFS_BLOCK) {
        size_t cap = p->first_cap < 65536 ? p->first_cap * 2 : LCT__REFS_BLOCK;
        lct__ref *grown = lct__big_grow(p->blocks[0], p->n, cap, sizeof *grown);
        if (!grown)
            return false;
        p->blocks[0] = grown;
        p->first_cap = cap;
        return true;
    }
    if (p->n < p->first_cap + (p->nblocks - 1) * LCT__REFS_BLOCK)
        return true;
    return add_block(p, LCT__REFS_BLOCK);
}

lct_status lct_refs_sample(lct_refs *refs, double rate, uint64_t seed,
                           unsigned samples)
{
    if (!refs || !(rate > 0 && rate <= 1) || samples == 0 || refs->n ||
        refs->dropped_reads || refs->dropped_writes)
        return LCT_ERR_INVALID;
    uint64_t *salts = reallocarray(NULL, samples, sizeof *salts);
    if (!salts)
        return LCT_ERR_NOMEM;
    free(refs->salts);
    refs->salts = salts;
    refs->nsalts = 0;
    refs->raw_sample = false;
    for (unsigned s = 0; s < samples; s++) {
        if (seed + s == 0)
            refs->raw_sample = true;
        else
            salts[refs->nsalts++] = lct__sample_salt(seed + s);
    }
    refs->threshold = rate >= 1 ? 0 : (uint64_t)ldexp(rate, 64);
    refs->seed = seed;
    refs->samples = samples;
    return LCT_OK;
}

/* Whether a sampled gathering keeps the key: one of its samples does
 * (lct__sampled for each seed, the id's share of the first step worked
 * out once). */
static bool wanted(const lct_refs *refs, uint64_t id)
{
    uint64_t threshold = refs->threshold;
    if (!threshold || (refs->raw_sample && id < threshold))
        return true;
    uint64_t y = id ^ (id >> 30);
    for (unsigned s = 0; s < refs->nsalts; s++)
        if (lct__sample_rest(y ^ refs->salts[s], threshold))
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
    refs->sizeless += bytes == 0;
    uint32_t seconds = !(t_mono > 0)           ? 0
                       : t_mono >= 4294967295.0 ? UINT32_MAX
                                                : (uint32_t)t_mono;
    lct__refs_part *p = &refs->parts[refs->nparts - 1];
    uint32_t size = bytes < LCT__REF_BIG ? (uint32_t)bytes : LCT__REF_BIG;
    if (size == LCT__REF_BIG) {
        bool added;
        lct__u64map_entry *e = lct__u64map_get(&p->big, p->n, &added);
        if (!e)
            return LCT_ERR_NOMEM;
        e->value = bytes; /* nonzero: bytes >= LCT__REF_BIG */
    }
    *lct__part_at(p, p->n++) = (lct__ref){
        obj_id, seconds, size | (is_read ? LCT__REF_READ : 0)};
    refs->n++;
    return LCT_OK;
}

void lct_kv_ranks_add(lct_kv_ranks *ranks, int64_t kv_rank)
{
    for (unsigned i = 0; i < ranks->n; i++)
        if (ranks->rank[i] == kv_rank)
            return;
    if (ranks->n < LCT_KV_RANKS_MAX)
        ranks->rank[ranks->n++] = kv_rank;
}

unsigned lct_kv_ranks_count(const lct_kv_ranks *ranks)
{
    return ranks->n ? ranks->n : 1;
}

/* The call under way ended: its chunk positions sizes[j] keys each, past
 * them per keys each (the last one what is left). */
static void end_call(lct_refs *refs, unsigned per, const uint32_t *sizes,
                     size_t nsizes)
{
    if (!refs->nparts)
        return;
    lct__refs_part *p = &refs->parts[refs->nparts - 1];
    if (p->call < p->n) {
        lct__part_at(p, p->call)->size |= LCT__REF_CALL;
        size_t j = 0;
        for (size_t i = p->call; i < p->n;) {
            uint64_t size = j < nsizes ? sizes[j++] : per;
            size += size == 0;
            size_t last = p->n - i > size ? i + size - 1 : p->n - 1;
            lct__part_at(p, last)->size |= LCT__REF_POSITION;
            i = last + 1;
        }
    }
    p->call = p->n;
}

lct_status lct_refs_end_call(lct_refs *refs, unsigned keys_per_position)
{
    if (!refs || keys_per_position == 0)
        return LCT_ERR_INVALID;
    end_call(refs, keys_per_position, NULL, 0);
    return LCT_OK;
}

lct_status lct__refs_end_call_sizes(lct_refs *refs, const uint32_t *sizes,
                                    size_t nsizes)
{
    if (!refs)
        return LCT_ERR_INVALID;
    end_call(refs, 1, sizes, nsizes);
    return LCT_OK;
}

lct_status lct_refs_append(lct_refs *dst, lct_refs *src)
{
    if (!dst || !src)
        return LCT_ERR_INVALID;
    if (dst->threshold != src->threshold || dst->seed != src->seed ||
        dst->samples != src->samples)
        return LCT_ERR_INVALID; /* gathered with different samples */
    size_t moved = 0;
    for (size_t k = 0; k < src->nparts; k++)
        moved += src->parts[k].n != 0;
    if (moved) {
        lct__refs_part *grown = reallocarray(
            dst->parts, dst->nparts + moved, sizeof *grown);
        if (!grown)
            return LCT_ERR_NOMEM;
        dst->parts = grown;
    }
    for (size_t k = 0; k < src->nparts; k++)
        if (src->parts[k].n)
            dst->parts[dst->nparts++] = src->parts[k];
        else
            part_free(&src->parts[k]);
    free(src->parts);
    src->parts = NULL;
    src->nparts = 0;
    dst->n += src->n;
    src->n = 0;
    dst->dropped_reads += src->dropped_reads;
    dst->dropped_writes += src->dropped_writes;
    src->dropped_reads = src->dropped_writes = 0;
    dst->sizeless += src->sizeless;
    src->sizeless = 0;
    return LCT_OK;
}

uint64_t lct_refs_count(const lct_refs *refs)
{
    return refs ? refs->n : 0;
}


/*
 * Each key numbered once, so the other passes index plain arrays: the
 * hash lookup a reference (on one thread, the export's largest part) is
 * shared out.  The stream is
 * cut into up to NUMBER_THREADS segments; each numbers its own keys in
 * its own map, on a thread of its own; then one pass over each
 * segment's map gives its numbers stream-wide ones (a lookup a key, not
 * a reference), and the segments rewrite their references' numbers.
 */
#define NUMBER_THREADS 8
#define NUMBER_MIN_SEGMENT ((size_t)1 << 18) /* less: not worth a thread */

typedef struct number_job {
    pthread_t thread;
    const lct_refs *refs;
    const uint64_t *kept; /* NULL: every reference */
    size_t from, to;      /* positions in the stream */
    uint32_t *key;   /* the stream's numbers, this job's [from, to) */
    lct__u64map ids; /* obj_id -> its number in the segment + 1 */
    uint32_t *global; /* the segment's numbers -> the stream's */
    bool remap, ok;
} number_job;

/* The part holding position `at`, and where in it. */
static const lct__refs_part *part_of(const lct_refs *refs, size_t at,
                                     size_t *j)
{
    size_t k = 0;
    while (at >= refs->parts[k].n)
        at -= refs->parts[k++].n;
    *j = at;
    return &refs->parts[k];
}

static void *number_segment(void *arg)
{
    number_job *w = arg;
    if (w->remap) {
        for (size_t i = w->from; i < w->to; i++)
            if (w->key[i] != UINT32_MAX)
                w->key[i] = w->global[w->key[i]];
        return NULL;
    }
    size_t j;
    const lct__refs_part *p = part_of(w->refs, w->from, &j);
    uint64_t n = 0;
    w->ok = true;
    for (size_t i = w->from; i < w->to; i++, j++) {
        if (j == p->n) {
            p++;
            j = 0;
        }
        if (!lct__kept_at(w->kept, i)) {
            w->key[i] = UINT32_MAX;
            continue;
        }
        if (j + 16 < p->n)
            lct__u64map_prefetch(&w->ids, lct__part_at(p, j + 16)->obj_id);
        bool added;
        lct__u64map_entry *e =
            lct__u64map_get(&w->ids, lct__part_at(p, j)->obj_id, &added);
        if (!e) {
            w->ok = false;
            break;
        }
        if (added)
            e->value = ++n; /* 0 marks an empty slot */
        w->key[i] = (uint32_t)(e->value - 1);
    }
    return NULL;
}

/* Segment numbers to stream-wide ones, segment by segment in order. */
static bool number_globally(number_job *jobs, unsigned n, size_t *nkeys)
{
    lct__u64map all = {0};
    uint64_t count = 0;
    bool ok = true;
    for (unsigned t = 0; ok && t < n; t++) {
        lct__u64map *m = &jobs[t].ids;
        ok = (jobs[t].global = reallocarray(NULL, m->used ? m->used : 1,
                                            sizeof *jobs[t].global)) != NULL;
        for (uint64_t s = 0; ok && m->slots && s <= m->mask; s++) {
            if (!m->slots[s].value)
                continue;
            bool added;
            lct__u64map_entry *e = lct__u64map_get(&all, m->slots[s].key,
                                                   &added);
            if (!(ok = e != NULL))
                break;
            if (added)
                e->value = ++count;
            jobs[t].global[m->slots[s].value - 1] = (uint32_t)(e->value - 1);
        }
        lct__u64map_free(m);
    }
    lct__u64map_free(&all);
    *nkeys = (size_t)count;
    return ok;
}

bool lct__refs_number(const lct_refs *refs, const uint64_t *kept,
                      uint32_t *key, size_t *nkeys)
{
    if (refs->n >= UINT32_MAX)
        return false;
    *nkeys = 0;
    if (refs->n == 0)
        return true;
    number_job jobs[NUMBER_THREADS];
    unsigned n = lct__usable_cpus();
    if (n > NUMBER_THREADS)
        n = NUMBER_THREADS;
    if (refs->n / n < NUMBER_MIN_SEGMENT) /* fewer, each long enough */
        n = (unsigned)(refs->n / NUMBER_MIN_SEGMENT) + 1;
    for (unsigned t = 0; t < n; t++)
        jobs[t] = (number_job){.refs = refs, .kept = kept, .key = key,
                               .from = refs->n / n * t,
                               .to = t + 1 < n ? refs->n / n * (t + 1)
                                               : refs->n};
    bool ok = lct__run_threads(jobs, sizeof *jobs,
                               offsetof(number_job, thread), n,
                               number_segment, "numbering keys",
                               NULL) == LCT_OK;
    for (unsigned t = 0; t < n; t++)
        ok = ok && jobs[t].ok;
    if (ok && n == 1) { /* the segment's numbers are the stream's */
        *nkeys = (size_t)jobs[0].ids.used;
        lct__u64map_free(&jobs[0].ids);
        return true;
    }
    ok = ok && number_globally(jobs, n, nkeys);
    for (unsigned t = 0; t < n; t++) {
        lct__u64map_free(&jobs[t].ids);
        jobs[t].remap = true;
    }
    ok = ok && lct__run_threads(jobs, sizeof *jobs,
                                offsetof(number_job, thread), n,
                                number_segment, "numbering keys",
                                NULL) == LCT_OK;
    for (unsigned t = 0; t < n; t++)
        free(jobs[t].global);
    return ok;
}
