/*
 * policy_run.c - a key reference stream through lct_policy caches, one
 * per policy and capacity asked (lct_policy_run): each a whole pass over
 * the stream, the passes shared out over threads.  What each reference
 * weighs and where its key comes next are worked out once, before, as
 * the oracleGeneral export gives them, so that a run equals libCacheSim's
 * cachesim on that export.
 */
#include "lmcache/policy_internal.h"
#include "lmcache/policy_stream_internal.h"
#include "lmcache/refs_internal.h"
#include "lct_cache.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "base/bigmem_internal.h"
#include "base/error_internal.h"
#include "base/threads_internal.h"

typedef struct run_shared {
    const lct_refs *refs;
    const lct_policy_run_options *opts;
    const uint64_t *capacities;
    size_t ncap, njobs;
    lct__pstream stream;
    size_t nkeys;
    lct_policy_point *out;
    size_t next_job; /* taken under lock */
    size_t done;
    int status;      /* the first failure, or LCT_OK */
    pthread_mutex_t lock;
} run_shared;

typedef struct run_worker {
    run_shared *shared;
    pthread_t thread;
} run_worker;

/* One job: policy j / ncap at capacity j % ncap, over the whole stream,
 * its keys' slots in dense (all 0, and left so). */
static int run_job(run_shared *sh, size_t job, uint32_t *dense)
{
    const lct_policy_run_options *o = sh->opts;
    lct_policy_point *pt = &sh->out[job];
    uint64_t capacity = sh->capacities[job % sh->ncap];
    lct_policy *p;
    int st = lct_policy_new(o->kinds[job / sh->ncap], capacity, &p, NULL);
    if (st != LCT_OK)
        return st;
    lct__policy_pressure(p, o->watermark, o->eviction_ratio);
    /* keys by their numbers: an array of them, not a map */
    p->dense = dense;
    *pt = (lct_policy_point){.capacity = capacity};
    if (p->ops->stream)
        p->ops->stream(p, &sh->stream, pt);
    else
        lct__policy_stream(p, LCT__PSTEPS_OF(p->ops), &sh->stream, pt);
    /* the next job starts from a clear array: clear what this one set
     * (a freed slot's key may be another slot's now) */
    for (uint32_t i = 0; i < p->nslots; i++)
        if (dense[p->slots[i].key] == i + 1)
            dense[p->slots[i].key] = 0;
    int broken = p->broken ? LCT_ERR_NOMEM : LCT_OK;
    lct_policy_free(p);
    return broken;
}

static void *run_worker_main(void *arg)
{
    run_shared *sh = ((run_worker *)arg)->shared;
    /* zeroed once: each job leaves it as it found it */
    uint32_t *dense = calloc(sh->nkeys ? sh->nkeys : 1, sizeof *dense);
    for (;;) {
        pthread_mutex_lock(&sh->lock);
        size_t job = sh->status == LCT_OK ? sh->next_job++ : sh->njobs;
        pthread_mutex_unlock(&sh->lock);
        if (job >= sh->njobs) {
            free(dense);
            return NULL;
        }
        int st = dense ? run_job(sh, job, dense) : LCT_ERR_NOMEM;
        pthread_mutex_lock(&sh->lock);
        if (st != LCT_OK && sh->status == LCT_OK)
            sh->status = st;
        sh->done++;
        if (sh->opts->progress)
            sh->opts->progress(sh->opts->progress_ctx, sh->done, sh->njobs);
        pthread_mutex_unlock(&sh->lock);
    }
}

/* What lct_policy_run refuses, with why in err. */
static lct_status check_run(const lct_refs *refs,
                            const lct_policy_run_options *opts,
                            const uint64_t *capacities, size_t ncap,
                            const lct_policy_point *out, lct_error *err)
{
    if (!refs || !opts || !opts->kinds || !opts->nkinds ||
        (ncap && (!capacities || !out)) || refs->threshold)
        return lct__fail(err, LCT_ERR_INVALID, EINVAL, 0,
                         "lct_policy_run: invalid argument");
    for (size_t k = 0; k < opts->nkinds; k++)
        if (!lct_policy_name(opts->kinds[k]) ||
            opts->kinds[k] == LCT_POLICY_LMCACHE_ISOLATED_LRU)
            return lct__fail(err, LCT_ERR_INVALID, EINVAL, 0,
                             "lct_policy_run: %s",
                             lct_policy_name(opts->kinds[k])
                                 ? "lmcache-isolated-lru evicts by its "
                                   "salts' quotas, not by a capacity: "
                                   "lct_sim with quotas"
                                 : "unknown policy");
    if (opts->watermark < 0 || opts->watermark > 1 ||
        opts->eviction_ratio < 0 || opts->eviction_ratio > 1)
        return lct__fail(err, LCT_ERR_INVALID, EINVAL, 0,
                         "lct_policy_run: a watermark or eviction ratio "
                         "outside (0, 1]");
    for (size_t i = 0; i < ncap; i++)
        if (capacities[i] == 0 || capacities[i] > UINT64_C(1) << 62)
            return lct__fail(err, LCT_ERR_INVALID, EINVAL, 0,
                             "lct_policy_run: a capacity of 0 or above "
                             "2^62");
    /* a stream whose calls were ended flags its first reference */
    bool calls = refs->nparts && refs->parts[0].n &&
                 (lct__part_at(&refs->parts[0], 0)->size & LCT__REF_CALL);
    for (size_t k = 0; k < opts->nkinds; k++)
        if (lct_policy_by_call(opts->kinds[k]) && refs->n && !calls)
            return lct__fail(err, LCT_ERR_INVALID, EINVAL, 0,
                             "lct_policy_run: %s acts on calls, and the "
                             "stream's calls were not ended "
                             "(lct_refs_end_call)",
                             lct_policy_name(opts->kinds[k]));
    return LCT_OK;
}

lct_status lct_policy_run(const lct_refs *refs,
                          const lct_policy_run_options *opts,
                          const uint64_t *capacities, size_t ncap,
                          lct_policy_point *out, lct_error *err)
{
    lct_status st = check_run(refs, opts, capacities, ncap, out, err);
    if (st != LCT_OK || ncap == 0)
        return st;
    run_shared sh = {.refs = refs, .opts = opts, .capacities = capacities,
                     .ncap = ncap, .njobs = ncap * opts->nkinds, .out = out,
                     .status = LCT_OK};
    /* keys numbered once: the runs' slot arrays, and the next uses and
     * sizes worked out from them */
    uint32_t *next = NULL;
    uint32_t *key = lct__big_alloc((refs->n + LCT__PSTREAM_AHEAD) *
                                   sizeof *key);
    uint64_t *sizes = NULL;
    if (key) /* what a run prefetches past the end: key 0's slot */
        memset(key + refs->n, 0, LCT__PSTREAM_AHEAD * sizeof *key);
    if (!key || !lct__refs_number(refs, NULL, key, &sh.nkeys) ||
        !lct__refs_next_sizes(refs, key, sh.nkeys, &next,
                              opts->in_bytes ? &sizes : NULL)) {
        free(key);
        return lct__fail(err, LCT_ERR_NOMEM, ENOMEM, 0,
                         "out of memory for the stream's keys and next "
                         "uses");
    }
    /* a run reads a byte of flags a reference, not the reference's 16
     * bytes, and next uses only for Belady; what it counts alike for
     * every policy and capacity (requests, positions) is counted here */
    uint8_t *flags = lct__big_alloc(refs->n ? refs->n : 1);
    if (!flags) {
        free(key);
        free(next);
        free(sizes);
        return lct__fail(err, LCT_ERR_NOMEM, ENOMEM, 0,
                         "out of memory for the stream's flags");
    }
    lct__pstream *ps = &sh.stream;
    *ps = (lct__pstream){.key = key, .flags = flags, .sizes = sizes,
                         .n = refs->n, .prefix = opts->prefix};
    for (LCT__EACH_REF(refs, c)) {
        uint32_t f = c.ref->size;
        bool request = opts->every_reference || (f & LCT__REF_READ);
        bool position = opts->prefix && request && (f & LCT__REF_POSITION);
        flags[c.i] = (uint8_t)((f & LCT__REF_CALL ? LCT__PSTREAM_CALL : 0) |
                               (request ? LCT__PSTREAM_REQUEST : 0) |
                               (position ? LCT__PSTREAM_POSITION : 0));
        ps->requests += request;
        ps->request_bytes += request && sizes ? sizes[c.i] : 0;
        ps->positions += position;
    }
    for (size_t k = 0; k < opts->nkinds; k++)
        if (opts->kinds[k] == LCT_POLICY_BELADY)
            ps->next = next;
    unsigned n = opts->threads ? opts->threads : lct__usable_cpus();
    if (n > sh.njobs)
        n = (unsigned)sh.njobs;
    run_worker *w = calloc(n, sizeof *w);
    st = w ? LCT_OK : LCT_ERR_NOMEM;
    if (w) {
        pthread_mutex_init(&sh.lock, NULL);
        for (unsigned i = 0; i < n; i++)
            w[i].shared = &sh;
        st = lct__run_threads(w, sizeof *w, offsetof(run_worker, thread), n,
                              run_worker_main, "lct_policy_run", err);
        pthread_mutex_destroy(&sh.lock);
    }
    free(w);
    free(key);
    free(flags);
    free(next);
    free(sizes);
    if (st == LCT_OK && sh.status != LCT_OK)
        st = sh.status;
    if (st == LCT_ERR_NOMEM)
        return lct__fail(err, st, ENOMEM, 0,
                         "out of memory simulating the policies");
    return st;
}
