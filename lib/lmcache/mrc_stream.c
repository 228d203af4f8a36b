/*
 * mrc_stream.c - an exact curve computed as references arrive
 * (lct_mrc_stream): the pass of mrc.c without the gathered stream, so
 * memory grows with the distinct keys, not the references.  Keys are
 * numbered as they come (a map from ids to numbers); the trees grow with
 * the live keys; a call's keys wait only until the call ends (the prefix
 * rule's flags need its length).
 *
 * What lct_mrc_compute learns by reading the whole stream first, this
 * learns as it goes:
 * - one key size: the pass starts with the count tree, and moves to the
 *   byte tree at the first reference of another size, its byte distances
 *   so far following from the key distances;
 * - the size bands (a pass over the keys up to each size below the
 *   largest): a band starts when its size is first seen, as a copy of the
 *   pass over the keys up to the next smaller size (the whole pass when
 *   the new size is the largest), since before then no key had a size in
 *   between.
 *
 * The pass runs on a thread of its own, fed blocks of references; an L1
 * in front (lct_mrc_stream_behind_l1) sits between the blocks and the
 * pass.
 *
 * Long because numbering, the move off one size, the bands, the L1 and
 * the handoff all work on the stream's one private state and call each
 * other: split, each file would need the others' internals.
 */
#include "base/error_internal.h"
#include "base/threads_internal.h"
#include "base/u64map_internal.h"
#include "lmcache/mrc_internal.h"
#include "lmcache/tiers_internal.h"
#include "lct_cache.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

typedef lct__mrc_pass pass;

/* A reference on its way to the pass: its flags (LCT__REF_READ, _CALL,
 * _POSITION), and its key's number once the pass has given it one. */
typedef struct pending {
    uint64_t id, bytes;
    uint32_t flags, key;
} pending;

/* References go to the pass in blocks: on a thread of its own when there
 * are CPUs for it (reading and finding keys then overlap the pass), held
 * in a ring of a few blocks, so memory stays bounded. */
#define BLOCK_REFS 8192
#define BLOCKS 4

typedef struct handoff {
    pending *block[BLOCKS];
    size_t n[BLOCKS];
    unsigned prod, cons, filled; /* the block being filled; the next to
                                    process; blocks handed over */
    bool tried, threaded, done, failed; /* tried: to start the thread */
    pthread_t worker;
    pthread_mutex_t mu;
    pthread_cond_t cv;
} handoff;

struct lct_mrc_stream {
    lct_mrc_options o;
    lct__u64map ids;     /* key id -> its number + 1 */
    uint64_t nkeys, keycap;
    pass main;
    bool uniform;        /* main still has the count tree */
    bool started;
    /* Every distinct size references said (0 included), ascending; the
     * bands, band[j] over the keys up to size[j], for all but the
     * largest; none once there are more sizes than bands. */
    uint64_t size[LCT__MRC_BANDS + 1];
    unsigned nsizes;
    bool too_many;
    pass band[LCT__MRC_BANDS];
    uint64_t *known;     /* with bands: each key's latest size */
    handoff pipe;
    /* lct_mrc_stream_behind_l1: an LRU L1 in front, as tiers.c models
     * it; the pass then sees what L2 sees. */
    bool has_l1;
    lct__lru l1;
    lct_l1_stats l1_stats;
    lct__l1_call l1_call;
    bool call_asked;     /* the current call has had a request */
    bool call_hit;       /* ... of a key seen before (uniform only) */
    pending *call;       /* prefix: the current call's references */
    size_t ncall, callcap;
    uint64_t references;
    bool failed;
};

/* *pp reallocated to hold want elements of size bytes (at least one). */
static bool grow(void *pp, size_t want, size_t size)
{
    void **p = pp;
    void *grown = reallocarray(*p, want ? want : 1, size);
    if (grown)
        *p = grown;
    return grown != NULL;
}

/* *dst a copy of the n elements of size bytes at src (NULL for NULL). */
static bool dup_array(void *dst, const void *src, size_t n, size_t size)
{
    void **d = dst;
    *d = NULL;
    if (!src)
        return true;
    if (!grow(d, n, size))
        return false;
    if (n)
        memcpy(*d, src, n * size);
    return true;
}

/* Room for one more position in p's trees: compacted, or when the live
 * keys would fill more than half of them, grown to twice the live keys
 * first (the compaction rebuilds the trees at their new size). */
static bool make_room(pass *p)
{
    if (p->pos < p->cap)
        return true;
    if (2 * p->live >= p->cap) {
        uint64_t cap = 2 * p->live + 1024;
        if (cap >= UINT32_MAX)
            return false;
        /* grown, not zeroed: the compaction below rebuilds every tree */
        bool ok = grow(&p->key_at, cap, sizeof *p->key_at);
        if (ok && p->live_bits) {
            uint64_t words = lct__mrc_live_words(cap);
            ok = grow(&p->live_bits, words, sizeof *p->live_bits) &&
                 grow(&p->live_tree, words + 1, sizeof *p->live_tree);
        } else if (ok) {
            ok = grow(&p->tree, cap + 1, sizeof *p->tree) &&
                 grow(&p->size_at, cap, sizeof *p->size_at) &&
                 lct__mrc_peaks_grow(&p->peaks, cap, p->pos);
        }
        if (!ok)
            return false;
        p->cap = cap;
    }
    lct__mrc_compact(p);
    return true;
}

/* p's byte distances start empty (and, under the prefix rule, its
 * positions'). */
static bool runs_start(pass *p)
{
    return (p->runs = calloc(1, sizeof *p->runs)) != NULL &&
           (!p->prefix || (p->pruns = calloc(1, sizeof *p->pruns)) != NULL);
}

static bool pass_start(lct_mrc_stream *s, pass *p)
{
    p->every = s->o.every_reference;
    p->prefix = s->o.prefix;
    if (!(p->m = calloc(1, sizeof *p->m)))
        return false;
    p->m->scale = 1;
    return lct__grow_zeroed(&p->last, 0, s->keycap, sizeof *p->last);
}

/* A deep copy of p into q (q's own memory). */
static bool pass_copy(const lct_mrc_stream *s, const pass *p, pass *q)
{
    *q = *p; /* the counters; every array is q's own or NULL below */
    q->m = NULL, q->tree = NULL, q->last = NULL;
    q->live_bits = NULL, q->live_tree = NULL;
    q->key_at = NULL, q->size_at = NULL, q->hist = NULL, q->phist = NULL;
    q->runs = NULL, q->pruns = NULL, q->peaks.tag = NULL;
    if (!(dup_array(&q->m, p->m, 1, sizeof *p->m) &&
           dup_array(&q->peaks.tag, p->peaks.tag, 2 * p->peaks.leaves,
                     sizeof *p->peaks.tag) &&
           dup_array(&q->last, p->last, s->keycap, sizeof *p->last) &&
           dup_array(&q->key_at, p->key_at, p->cap, sizeof *p->key_at) &&
           dup_array(&q->tree, p->tree, p->cap + 1, sizeof *p->tree) &&
           dup_array(&q->live_bits, p->live_bits,
                     lct__mrc_live_words(p->cap), sizeof *p->live_bits) &&
           dup_array(&q->live_tree, p->live_tree,
                     lct__mrc_live_words(p->cap) + 1,
                     sizeof *p->live_tree) &&
           dup_array(&q->size_at, p->size_at, p->cap, sizeof *p->size_at) &&
           dup_array(&q->hist, p->hist, p->nhist, sizeof *p->hist) &&
           dup_array(&q->phist, p->phist, p->nphist, sizeof *p->phist) &&
           (q->runs = calloc(1, sizeof *q->runs)) != NULL &&
           lct__mrc_runs_copy(q->runs, p->runs) &&
           (!p->pruns ||
            ((q->pruns = calloc(1, sizeof *q->pruns)) != NULL &&
             lct__mrc_runs_copy(q->pruns, p->pruns)))))
        return false;
    return true;
}

static void pass_drop(pass *p)
{
    lct__mrc_pass_free(p);
    lct_mrc_free(p->m);
    memset(p, 0, sizeof *p);
}

/* A uniform pass becomes a byte one: the byte tree from the live
 * positions, every key at the one size; the byte distances so far from
 * the key distances (as lct_mrc_byte_hit_ratio derives them); the
 * running byte maximum of the call under way from its key one. */
static bool leave_uniform(lct_mrc_stream *s)
{
    pass *p = &s->main;
    uint64_t size = p->m->uniform_size;
    bool runs = runs_start(p);
    p->tree = calloc(p->cap + 1, sizeof *p->tree);
    p->size_at = reallocarray(NULL, p->cap ? p->cap : 1, sizeof *p->size_at);
    if (!runs || !p->tree || !p->size_at)
        return false;
    for (uint64_t i = 0; i < p->cap; i++)
        p->size_at[i] = size;
    free(p->live_bits);
    free(p->live_tree);
    p->live_bits = NULL;
    p->live_tree = NULL;
    /* d keys of this size since, then its own: ascending in d */
    for (uint64_t d = 0; d < p->nhist; d++)
        if (p->hist[d] &&
            !lct__mrc_runs_append(p->runs, (d + 1) * size, p->hist[d]))
            return false;
    for (uint64_t d = 0; p->pruns && d < p->nphist; d++)
        if (p->phist[d] &&
            !lct__mrc_runs_append(p->pruns, (d + 1) * size, p->phist[d]))
            return false;
    if (s->call_hit)
        p->run_bytes = (p->run + 1) * size;
    p->live_bytes = p->live * size;
    p->m->totals.min_key_bytes = p->m->totals.max_key_bytes = size;
    p->m->uniform_size = 0;
    s->uniform = false;
    lct__mrc_compact(p); /* builds the byte tree */
    s->size[0] = size;
    s->nsizes = 1;
    if (!lct__grow_zeroed(&s->known, 0, s->keycap, sizeof *s->known))
        return false;
    for (uint64_t k = 0; k < s->nkeys; k++)
        s->known[k] = p->last[k] ? size : 0;
    return true;
}

/* A size no reference said before: its band, when it is not the
 * largest, and the band of the size below it when it is. */
static bool new_size(lct_mrc_stream *s, uint64_t size)
{
    if (s->too_many)
        return true;
    if (s->nsizes == 0) {
        s->size[s->nsizes++] = size;
        return true;
    }
    if (s->nsizes == LCT__MRC_BANDS + 1) { /* as many as lct_mrc_compute */
        for (unsigned j = 0; j + 1 < s->nsizes; j++)
            pass_drop(&s->band[j]);
        s->too_many = true;
        return true;
    }
    unsigned at = 0;
    while (at < s->nsizes && s->size[at] < size)
        at++;
    pass fresh;
    bool ok;
    if (at == s->nsizes) { /* the largest: the old largest's band is all */
        ok = pass_copy(s, &s->main, &fresh);
    } else if (at > 0) {   /* keys up to it were keys up to the one below */
        ok = pass_copy(s, &s->band[at - 1], &fresh);
    } else {               /* the least: every key so far bypassed it */
        memset(&fresh, 0, sizeof fresh);
        ok = pass_start(s, &fresh) && runs_start(&fresh);
        fresh.run_never = s->o.prefix && s->call_asked;
    }
    if (!ok) {
        pass_drop(&fresh);
        return false;
    }
    /* size[j] keeps band[j] for j below the largest */
    memmove(s->size + at + 1, s->size + at,
            (s->nsizes - at) * sizeof *s->size);
    s->size[at] = size;
    unsigned bands = s->nsizes - 1; /* before this size */
    unsigned slot = at == s->nsizes ? bands : at;
    memmove(s->band + slot + 1, s->band + slot,
            (bands - slot) * sizeof *s->band);
    s->band[slot] = fresh;
    s->nsizes++;
    return true;
}

/* A new key: its number, every pass's arrays grown to hold it. */
static bool number(lct_mrc_stream *s, uint64_t id, uint32_t *k)
{
    bool added;
    lct__u64map_entry *e = lct__u64map_get(&s->ids, id, &added);
    if (!e)
        return false;
    if (!added) {
        *k = (uint32_t)(e->value - 1);
        return true;
    }
    if (s->nkeys >= (uint64_t)INT32_MAX)
        return false;
    if (s->nkeys == s->keycap) {
        uint64_t cap = s->keycap ? 2 * s->keycap : 1024;
        bool ok = lct__grow_zeroed(&s->main.last, s->keycap, cap,
                                   sizeof *s->main.last) &&
                  (!s->known || lct__grow_zeroed(&s->known, s->keycap, cap,
                                                 sizeof *s->known));
        for (unsigned j = 0; ok && !s->too_many && j + 1 < s->nsizes; j++)
            ok = lct__grow_zeroed(&s->band[j].last, s->keycap, cap,
                                  sizeof *s->band[j].last);
        ok = ok && (!s->has_l1 || lct__lru_grow(&s->l1, s->keycap, cap));
        if (!ok)
            return false;
        s->keycap = cap;
    }
    *k = (uint32_t)s->nkeys;
    e->value = ++s->nkeys;
    return true;
}

/* The first reference: with a size, the count tree until another size
 * comes; without, the byte tree. */
static bool start(lct_mrc_stream *s, uint64_t bytes)
{
    pass *p = &s->main;
    s->started = true;
    s->uniform = bytes != 0;
    p->m->uniform_size = bytes;
    if (s->uniform)
        return lct__mrc_live_reset(p, 0);
    return runs_start(p) && (p->tree = calloc(1, sizeof *p->tree)) &&
           lct__grow_zeroed(&s->known, 0, s->keycap, sizeof *s->known) &&
           new_size(s, 0);
}

/* One numbered reference, through the pass and the bands. */
static bool feed(lct_mrc_stream *s, const pending *c)
{
    uint32_t k = c->key, flags = c->flags;
    uint64_t bytes = c->bytes;
    bool read = (flags & LCT__REF_READ) != 0;
    lct__ref r = {c->id, 0, flags};
    s->references++;
    if (!s->started && !start(s, bytes))
        return false;
    if (s->uniform && bytes != s->main.m->uniform_size && !leave_uniform(s))
        return false;
    if (flags & LCT__REF_CALL)
        s->call_asked = s->call_hit = false;
    bool request = s->o.every_reference || read;
    if (s->uniform) {
        s->call_asked |= request;
        s->call_hit |= request && s->main.last[k] != 0;
        return make_room(&s->main) &&
               lct__mrc_step_uniform(&s->main, &r, k);
    }
    bool seen = s->too_many;
    for (unsigned j = 0; !seen && j < s->nsizes; j++)
        seen = s->size[j] == bytes;
    if (!seen && !new_size(s, bytes))
        return false;
    if (bytes)
        s->known[k] = bytes;
    for (unsigned j = 0; !s->too_many && j + 1 < s->nsizes; j++) {
        pass *b = &s->band[j];
        if (s->known[k] <= s->size[j] ? !make_room(b) ||
                                            !lct__mrc_step(b, &r, bytes, k)
                                      : !lct__mrc_step_out(b, &r, k))
            return false;
    }
    s->call_asked |= request;
    return make_room(&s->main) && lct__mrc_step(&s->main, &r, bytes, k);
}

/* One reference through the L1 (tiers.c's routing), on to the pass when
 * L2 sees it. */
static bool through_l1(lct_mrc_stream *s, const pending *c)
{
    pending out = *c;
    return !lct__l1_route(&s->l1, &s->l1_call, &s->l1_stats, c->flags,
                          c->key, c->bytes, &out.flags) ||
           feed(s, &out);
}

/* A block: its keys numbered first (the map's slots asked for ahead),
 * then each reference through the pass (its key's last position asked
 * for ahead). */
static bool process(lct_mrc_stream *s, pending *v, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (i + 8 < n)
            lct__u64map_prefetch(&s->ids, v[i + 8].id);
        if (!number(s, v[i].id, &v[i].key))
            return false;
    }
    for (size_t i = 0; i < n; i++) {
        if (i + 16 < n)
            __builtin_prefetch(&s->main.last[v[i + 16].key]);
        if (!(s->has_l1 ? through_l1(s, &v[i]) : feed(s, &v[i])))
            return false;
    }
    return true;
}

static void *worker(void *arg)
{
    lct_mrc_stream *s = arg;
    handoff *p = &s->pipe;
    bool ok = true;
    for (;;) {
        pthread_mutex_lock(&p->mu);
        while (p->filled == 0 && !p->done)
            pthread_cond_wait(&p->cv, &p->mu);
        if (p->filled == 0) {
            pthread_mutex_unlock(&p->mu);
            return NULL;
        }
        unsigned b = p->cons;
        pthread_mutex_unlock(&p->mu);
        ok = ok && process(s, p->block[b], p->n[b]);
        pthread_mutex_lock(&p->mu);
        p->failed |= !ok;
        p->cons = (p->cons + 1) % BLOCKS;
        p->filled--;
        pthread_cond_broadcast(&p->cv);
        pthread_mutex_unlock(&p->mu);
    }
}

/* Hand the block being filled to the pass: to its thread (started with
 * the first block, when there is a second CPU), waiting while every
 * block is taken; or through the pass here. */
static bool submit(lct_mrc_stream *s)
{
    handoff *p = &s->pipe;
    if (p->n[p->prod] == 0 && p->threaded) {
        pthread_mutex_lock(&p->mu);
        bool failed = p->failed;
        pthread_mutex_unlock(&p->mu);
        return !failed;
    }
    if (p->n[p->prod] == 0)
        return !p->failed;
    if (!p->tried && !p->done && (p->tried = true) &&
        lct__usable_cpus() > 1 &&
        pthread_mutex_init(&p->mu, NULL) == 0) {
        bool cv = pthread_cond_init(&p->cv, NULL) == 0;
        p->threaded = cv && pthread_create(&p->worker, NULL, worker, s) == 0;
        if (cv && !p->threaded)
            pthread_cond_destroy(&p->cv);
        if (!p->threaded)
            pthread_mutex_destroy(&p->mu);
    }
    if (!p->threaded) {
        p->failed = p->failed || !process(s, p->block[0], p->n[0]);
        p->n[0] = 0;
        return !p->failed;
    }
    pthread_mutex_lock(&p->mu);
    p->filled++;
    p->prod = (p->prod + 1) % BLOCKS;
    pthread_cond_broadcast(&p->cv);
    while (p->filled == BLOCKS)
        pthread_cond_wait(&p->cv, &p->mu);
    bool failed = p->failed;
    pthread_mutex_unlock(&p->mu);
    p->n[p->prod] = 0;
    return !failed;
}

/* Wait for the pass to take every block handed over, and its thread to
 * end. */
static bool drain(lct_mrc_stream *s)
{
    handoff *p = &s->pipe;
    bool ok = submit(s);
    if (!p->threaded) {
        p->done = true;
        return ok;
    }
    pthread_mutex_lock(&p->mu);
    p->done = true;
    pthread_cond_broadcast(&p->cv);
    pthread_mutex_unlock(&p->mu);
    pthread_join(p->worker, NULL);
    pthread_cond_destroy(&p->cv);
    pthread_mutex_destroy(&p->mu);
    p->threaded = false;
    return ok && !p->failed;
}

/* One reference into the block being filled. */
static bool enqueue(lct_mrc_stream *s, uint64_t id, uint64_t bytes,
                    uint32_t flags)
{
    handoff *p = &s->pipe;
    pending **b = &p->block[p->prod];
    if (!*b && !(*b = reallocarray(NULL, BLOCK_REFS, sizeof **b)))
        return false;
    (*b)[p->n[p->prod]++] = (pending){id, bytes, flags, 0};
    return p->n[p->prod] < BLOCK_REFS || submit(s);
}

lct_status lct_mrc_stream_new(const lct_mrc_options *o, lct_mrc_stream **out,
                              lct_error *err)
{
    if (out)
        *out = NULL;
    if (!out || !o || !(o->sample_rate == 0 || o->sample_rate == 1))
        return lct__fail(err, LCT_ERR_INVALID, EINVAL, 0,
                         "lct_mrc_stream_new: exact curves only (sample "
                         "rate 0 or 1)");
    lct_mrc_stream *s = calloc(1, sizeof *s);
    if (!s || (s->o = *o, !pass_start(s, &s->main))) {
        lct_mrc_stream_free(s);
        return lct__fail(err, LCT_ERR_NOMEM, ENOMEM, 0,
                         "out of memory starting a curve");
    }
    *out = s;
    return LCT_OK;
}

lct_status lct_mrc_stream_behind_l1(lct_mrc_stream *s, uint64_t capacity,
                                    bool in_bytes, lct_error *err)
{
    if (!s || !capacity || !s->o.prefix || s->has_l1 || s->ncall ||
        s->pipe.tried || s->pipe.n[0] || s->failed)
        return lct__fail(err, LCT_ERR_INVALID, EINVAL, 0,
                         "lct_mrc_stream_behind_l1: a prefix-rule stream "
                         "before its first reference, once, and a "
                         "capacity above 0");
    if (!lct__lru_alloc(&s->l1, s->keycap, capacity, in_bytes)) {
        lct__lru_free(&s->l1);
        return lct__fail(err, LCT_ERR_NOMEM, ENOMEM, 0,
                         "out of memory starting an L1");
    }
    s->has_l1 = true;
    s->l1_stats.capacity = capacity;
    s->l1_stats.in_bytes = in_bytes;
    return LCT_OK;
}

lct_status lct_mrc_stream_l1_stats(const lct_mrc_stream *s,
                                   lct_l1_stats *out)
{
    if (!s || !out || !s->has_l1 || s->pipe.threaded)
        return LCT_ERR_INVALID;
    *out = s->l1_stats;
    out->evictions = s->l1.evictions;
    out->bypassed = s->l1.bypassed;
    return LCT_OK;
}

lct_status lct_mrc_stream_add(lct_mrc_stream *s, uint64_t obj_id,
                              uint64_t bytes, bool is_read)
{
    if (!s)
        return LCT_ERR_INVALID;
    if (s->failed)
        return LCT_ERR_NOMEM;
    if (!s->o.prefix) { /* no call flags: the pass takes it now */
        s->failed = !enqueue(s, obj_id, bytes, is_read ? LCT__REF_READ : 0);
        return s->failed ? LCT_ERR_NOMEM : LCT_OK;
    }
    if (s->ncall == s->callcap) {
        size_t cap = s->callcap ? 2 * s->callcap : 64;
        if (!grow(&s->call, cap, sizeof *s->call)) {
            s->failed = true;
            return LCT_ERR_NOMEM;
        }
        s->callcap = cap;
    }
    s->call[s->ncall++] =
        (pending){obj_id, bytes, is_read ? LCT__REF_READ : 0, 0};
    return LCT_OK;
}

/* The call's references, flagged as lct_refs_end_call flags them
 * (per = 0: not ended, no flags): its chunk positions sizes[j] keys each
 * (lct__mrc_stream_end_call_sizes), past them per keys each. */
static bool feed_call(lct_mrc_stream *s, unsigned per, const uint32_t *sizes,
                      size_t nsizes)
{
    size_t n = s->ncall, j = 0;
    s->ncall = 0;
    /* keys left in the chunk position: a count, not a division a key */
    uint64_t left = nsizes && sizes[0] ? sizes[0] : nsizes ? 1 : per;
    for (size_t i = 0; i < n; i++) {
        const pending *c = &s->call[i];
        uint32_t flags = c->flags;
        if (per && i == 0)
            flags |= LCT__REF_CALL;
        if (per && (--left == 0 || i + 1 == n)) {
            flags |= LCT__REF_POSITION;
            left = ++j < nsizes ? sizes[j] : per;
            left += left == 0;
        }
        if (!enqueue(s, c->id, c->bytes, flags))
            return false;
    }
    return true;
}

lct_status lct__mrc_stream_end_call_sizes(lct_mrc_stream *s,
                                          const uint32_t *sizes,
                                          size_t nsizes)
{
    if (!s)
        return LCT_ERR_INVALID;
    if (s->failed || !s->o.prefix)
        return s->failed ? LCT_ERR_NOMEM : LCT_OK;
    s->failed = !feed_call(s, 1, sizes, nsizes);
    return s->failed ? LCT_ERR_NOMEM : LCT_OK;
}

lct_status lct_mrc_stream_end_call(lct_mrc_stream *s,
                                   unsigned keys_per_position)
{
    if (!s || keys_per_position == 0)
        return LCT_ERR_INVALID;
    if (s->failed || !s->o.prefix)
        return s->failed ? LCT_ERR_NOMEM : LCT_OK;
    s->failed = !feed_call(s, keys_per_position, NULL, 0);
    return s->failed ? LCT_ERR_NOMEM : LCT_OK;
}

/* The bands' byte distances below the next size, into the curve. */
static bool take_bands(lct_mrc_stream *s)
{
    lct_mrc *m = s->main.m;
    for (unsigned j = 0; !s->too_many && j + 1 < s->nsizes; j++) {
        pass *b = &s->band[j];
        if (!lct__mrc_finish(b))
            return false;
        struct lct__mrc_band *mb = &m->band[j];
        *mb = (struct lct__mrc_band){.lo = s->size[j], .hi = s->size[j + 1]};
        mb->d = b->m->bytes;
        mb->cum = b->m->bytes_cum;
        /* the distances below hi (hi, a size above lo, is at least 1) */
        mb->n = lct__mrc_first_above(b->m->bytes, b->m->nbytes, mb->hi - 1);
        mb->map = b->m->bytes_map;
        mb->map_len = b->m->bytes_map_len;
        b->m->bytes = b->m->bytes_cum = NULL;
        b->m->bytes_map = NULL;
        lct__mrc_band_take_positions(mb, b->m);
        m->nbands = j + 1;
    }
    return true;
}

lct_status lct_mrc_stream_finish(lct_mrc_stream *s, lct_mrc **out,
                                 lct_error *err)
{
    if (out)
        *out = NULL;
    if (!s || !out)
        return lct__fail(err, LCT_ERR_INVALID, EINVAL, 0,
                         "lct_mrc_stream_finish: no stream");
    lct_mrc *m = s->main.m;
    bool ok = !s->failed && feed_call(s, 0, NULL, 0);
    ok = drain(s) && ok;
    if (ok) {
        m->totals.sample_rate = 1;
        m->totals.every_reference = s->o.every_reference;
        m->totals.prefix = s->o.prefix;
        m->totals.seed = s->o.seed;
        m->totals.references = m->totals.kept_references = s->references;
    }
    ok = ok && lct__mrc_finish(&s->main) &&
         (s->uniform || s->nsizes < 2 || take_bands(s));
    s->failed = true; /* finished: nothing more is taken */
    if (!ok)
        return lct__fail(err, LCT_ERR_NOMEM, ENOMEM, 0,
                         "out of memory computing the miss-ratio curve");
    *out = m;
    s->main.m = NULL;
    return LCT_OK;
}

void lct_mrc_stream_free(lct_mrc_stream *s)
{
    if (!s)
        return;
    if (s->pipe.threaded) /* not finished: the pass's thread ends first */
        drain(s);
    for (unsigned b = 0; b < BLOCKS; b++)
        free(s->pipe.block[b]);
    pass_drop(&s->main);
    for (unsigned j = 0; !s->too_many && j + 1 < s->nsizes; j++)
        pass_drop(&s->band[j]);
    lct__u64map_free(&s->ids);
    if (s->has_l1)
        lct__lru_free(&s->l1);
    free(s->known);
    free(s->call);
    free(s);
}
