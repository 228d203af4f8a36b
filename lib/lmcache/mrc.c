/*
 * mrc.c - LRU miss-ratio curves from a key reference stream (lct_mrc):
 * Mattson's stack distances for every capacity at once, in O(n log n),
 * with one Fenwick tree over positions holding, at each key's latest
 * position, 1 and the key's size; a map from ids to those positions; and
 * SHARDS spatial sampling.  A read's distance in keys is the number of
 * distinct keys used since its key's last reference (the live positions
 * after it); in bytes, their sizes plus its own.  Under the prefix rule
 * a request's distance is the running maximum of its call's distances up
 * to it (a key counts only when every key before it in its call hits), so
 * the same pass and the same histogram give that curve too, and a second
 * histogram, over the last key of each chunk position, its tokens.
 *
 * Byte capacities below the largest key size are served by one more pass
 * a size (keys heavier than the cache bypass it, so each size range has
 * its own stack).
 *
 * The pass's steps are shared with mrc_stream.c (mrc_internal.h), which
 * drives them as references arrive instead of over a gathered stream.
 *
 * Long because the pass (two tree kinds, compaction, the prefix rule's
 * running maxima, SHARDS, the size bands) and the readers of its curves
 * share the pass's and the curve's private state, and split they would
 * call each other.
 */
#include "base/bigmem_internal.h"
#include "base/error_internal.h"
#include "lmcache/mrc_internal.h"
#include "base/u64map_internal.h"
#include "lct_cache.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef lct__mrc_node node;
typedef lct__mrc_pass pass;

static void tree_add(node *t, uint64_t n, uint64_t pos, uint64_t count,
                     uint64_t bytes)
{
    for (uint64_t i = pos + 1; i <= n; i += i & (~i + 1)) {
        t[i].count += count; /* unsigned: adding 2^64-x subtracts x */
        t[i].bytes += bytes;
    }
}

static node tree_prefix(const node *t, uint64_t pos)
{
    node sum = {0, 0};
    for (uint64_t i = pos + 1; i > 0; i -= i & (~i + 1)) {
        sum.count += t[i].count;
        sum.bytes += t[i].bytes;
    }
    return sum;
}

/* The uniform case's count of live positions: a bit a position, and a
 * Fenwick tree over the words' counts.  The tree of positions it
 * replaces (4 bytes a position, 1 MB on 250 k) was walked three times a
 * reference through the caches; this one is 64 times smaller. */
static inline uint64_t bit_count(uint64_t x)
{
    x -= (x >> 1) & 0x5555555555555555u;
    x = (x & 0x3333333333333333u) + ((x >> 2) & 0x3333333333333333u);
    x = (x + (x >> 4)) & 0x0f0f0f0f0f0f0f0fu;
    return (x * 0x0101010101010101u) >> 56;
}

/* Mark position pos live (on) or not: it must be the other. */
static void live_flip(pass *p, uint64_t pos, bool on)
{
    p->live_bits[pos >> 6] ^= (uint64_t)1 << (pos & 63);
    uint32_t delta = on ? 1 : UINT32_MAX; /* unsigned: adds -1 */
    uint64_t words = lct__mrc_live_words(p->cap);
    for (uint64_t i = (pos >> 6) + 1; i <= words; i += i & (~i + 1))
        p->live_tree[i] += delta;
}

/* Live positions in [0, pos]. */
static uint64_t live_upto(const pass *p, uint64_t pos)
{
    uint64_t word = pos >> 6, sum = 0;
    for (uint64_t i = word; i > 0; i -= i & (~i + 1))
        sum += p->live_tree[i];
    uint64_t mask = ((uint64_t)2 << (pos & 63)) - 1; /* bits 0..pos & 63 */
    return sum + bit_count(p->live_bits[word] & mask);
}

bool lct__mrc_live_reset(pass *p, uint64_t cap)
{
    uint64_t words = lct__mrc_live_words(cap);
    uint64_t *bits = reallocarray(p->live_bits, words ? words : 1,
                                  sizeof *bits);
    if (bits)
        p->live_bits = bits;
    uint32_t *tree = reallocarray(p->live_tree, words + 1, sizeof *tree);
    if (tree)
        p->live_tree = tree;
    if (!bits || !tree)
        return false;
    memset(bits, 0, (words ? words : 1) * sizeof *bits);
    memset(tree, 0, (words + 1) * sizeof *tree);
    return true;
}

/* MARK: - sorting byte distances (LSD radix, 16 bits a pass) */

bool lct__mrc_radix_sort(uint64_t *v, uint64_t n)
{
    if (n == 0) /* v may be NULL: a stream that never began */
        return true;
    uint64_t *tmp = reallocarray(NULL, n ? n : 1, sizeof *tmp);
    size_t *count = calloc(65536, sizeof *count);
    if (!tmp || !count) {
        free(tmp);
        free(count);
        return false;
    }
    for (unsigned shift = 0; shift < 64; shift += 16) {
        memset(count, 0, 65536 * sizeof *count);
        for (uint64_t i = 0; i < n; i++)
            count[(v[i] >> shift) & 0xffff]++;
        size_t at = 0;
        for (size_t d = 0; d < 65536; d++) {
            size_t c = count[d];
            count[d] = at;
            at += c;
        }
        for (uint64_t i = 0; i < n; i++)
            tmp[count[(v[i] >> shift) & 0xffff]++] = v[i];
        memcpy(v, tmp, n * sizeof *v);
    }
    free(tmp);
    free(count);
    return true;
}

/* MARK: - computing */

static bool count_in(uint64_t **hist, uint64_t *nhist, uint64_t d)
{
    if (d >= *nhist) {
        uint64_t n = *nhist ? *nhist : 1024;
        while (n <= d) {
            if (n > UINT64_MAX / 16 / sizeof **hist)
                return false;
            n *= 2;
        }
        uint64_t *grown = reallocarray(*hist, n, sizeof *grown);
        if (!grown)
            return false;
        memset(grown + *nhist, 0, (n - *nhist) * sizeof *grown);
        *hist = grown;
        *nhist = n;
    }
    (*hist)[d]++;
    return true;
}

static bool count_distance(pass *p, uint64_t d)
{
    return count_in(&p->hist, &p->nhist, d);
}

/* The prefix rule before a request is counted: a call starts its running
 * maxima afresh; a key never seen (*d NULL) makes the call's later keys
 * miss at every capacity; a seen one counts at the largest distance of
 * its call so far (keys, and bytes in *bytes when given).  False when
 * this request hits at no capacity. */
bool lct__mrc_run_up(pass *p, const lct__ref *r, uint64_t *d, uint64_t *bytes)
{
    if (r->size & LCT__REF_CALL) {
        p->run_never = false;
        p->run = p->run_bytes = 0;
        p->m->totals.calls++;
    }
    p->run_never |= d == NULL;
    if (d && *d < p->run)
        *d = p->run;
    if (d)
        p->run = *d;
    if (bytes && *bytes < p->run_bytes)
        *bytes = p->run_bytes;
    if (bytes)
        p->run_bytes = *bytes;
    return !p->run_never;
}

/* A position's byte distance (the call's running byte maximum there),
 * for the token hit ratio of a byte capacity. */
static bool keep_position_bytes(pass *p, uint64_t b)
{
    if (p->pruns)
        return lct__mrc_runs_add(p->pruns, b);
    lct__mrc_dists *v = &p->m->pos_bytes;
    if (v->value)
        v->value[v->n++] = b;
    return true;
}

/* A request's place in the prefix rule's tokens: the last key of a
 * chunk position counts the position at the call's running maximum (in
 * keys, and in bytes when b, the request's, is given). */
static bool count_position(pass *p, const lct__ref *r, bool hits,
                           const uint64_t *b)
{
    if (!(r->size & LCT__REF_POSITION))
        return true;
    p->m->totals.positions++;
    return !hits || ((!b || keep_position_bytes(p, *b)) &&
                     count_in(&p->phist, &p->nphist, p->run));
}

/* Renumber the live positions 0..live-1, in order, and rebuild the trees
 * over them (a Fenwick tree is built in O(cap) by pushing each node's
 * sum to its parent). */
void lct__mrc_compact(pass *p)
{
    uint64_t live = 0;
    bool peaks = p->peaks.tag != NULL;
    if (peaks)
        lct__mrc_peaks_settle(&p->peaks);
    for (uint64_t pos = 0; pos < p->pos; pos++) {
        uint32_t k = p->key_at[pos];
        if (p->last[k] != pos + 1)
            continue; /* the key has been referenced since, or left */
        p->key_at[live] = k;
        if (p->size_at)
            p->size_at[live] = p->size_at[pos];
        if (peaks)
            lct__mrc_peaks_move(&p->peaks, pos, live);
        p->last[k] = (uint32_t)++live;
    }
    if (peaks)
        lct__mrc_peaks_clear_from(&p->peaks, live);
    p->pos = live;
    uint64_t n = p->cap;
    if (p->live_bits) {
        uint64_t words = lct__mrc_live_words(n), full = live / 64;
        memset(p->live_bits, 0, (words ? words : 1) * sizeof *p->live_bits);
        for (uint64_t w = 0; w < full; w++)
            p->live_bits[w] = ~(uint64_t)0;
        if (live % 64)
            p->live_bits[full] = ((uint64_t)1 << (live % 64)) - 1;
        memset(p->live_tree, 0, (words + 1) * sizeof *p->live_tree);
        for (uint64_t i = 1; i <= words; i++) {
            p->live_tree[i] += (uint32_t)(i <= full ? 64
                                          : i == full + 1 ? live % 64 : 0);
            uint64_t up = i + (i & (~i + 1));
            if (up <= words)
                p->live_tree[up] += p->live_tree[i];
        }
        return;
    }
    memset(p->tree, 0, (n + 1) * sizeof *p->tree);
    for (uint64_t i = 1; i <= n; i++) {
        if (i <= live) {
            p->tree[i].count += 1;
            p->tree[i].bytes += p->size_at[i - 1];
        }
        uint64_t up = i + (i & (~i + 1));
        if (up <= n) {
            p->tree[up].count += p->tree[i].count;
            p->tree[up].bytes += p->tree[i].bytes;
        }
    }
}

/* A request whose key was seen, at key distance d (and byte distance
 * *b, kept for the byte curve, when given), counted per key or by the
 * prefix rule. */
static bool count_request(pass *p, const lct__ref *r, uint64_t d,
                          uint64_t *b)
{
    bool hits = !p->prefix || lct__mrc_run_up(p, r, &d, b);
    if (hits && b && p->runs && !lct__mrc_runs_add(p->runs, *b))
        return false;
    if (hits && b && !p->runs)
        p->m->bytes[p->m->nbytes++] = *b;
    p->m->never += !hits;
    return (!hits || count_distance(p, d)) &&
           (!p->prefix || count_position(p, r, hits, b));
}

/* A key's first reference: a compulsory miss when a request, and under
 * the prefix rule the end of its call's hits. */
static bool first_reference(pass *p, const lct__ref *r, bool request)
{
    p->live++;
    p->m->totals.compulsory_misses += request;
    p->m->never += request;
    if (!request || !p->prefix)
        return true;
    lct__mrc_run_up(p, r, NULL, NULL);
    return count_position(p, r, false, NULL);
}

/* The byte sums after the live positions as key k, last at `last` at
 * `old` bytes (added: new), comes to the next position weighing `size`
 * (0: it leaves instead): they change by size - old before `last`, by
 * size from there on.  Only once some sum falls are peaks kept. */
static inline bool follow_peaks(pass *p, bool added, uint64_t last,
                                uint64_t old, uint64_t size)
{
    if (!p->peaks.tag) {
        if (added || size >= old)
            return true; /* no sum fell: every excess stays 0 */
        if (!lct__mrc_peaks_start(&p->peaks, p->cap))
            return false;
    }
    int64_t before = lct__mrc_signed(size) - lct__mrc_signed(old);
    if (!added && before)
        lct__mrc_peaks_rise(&p->peaks, 0, last, before);
    if (size) /* from last on: positions not yet live stay at 0 */
        lct__mrc_peaks_rise_from(&p->peaks, added ? 0 : last, size);
    return true;
}

/* A request for key k, live at `last` and held at `old` bytes (0: as
 * `size`): its distances, counted; then k leaves its position. */
static inline bool reread(pass *p, const lct__ref *r, bool request,
                          uint64_t last, uint64_t old, uint64_t size)
{
    node before = tree_prefix(p->tree, last);
    uint64_t d = p->live - before.count;
    /* the most the keys used since k ever weighed, not what they weigh
     * now: one that shrank may have pushed k out before */
    uint64_t others = p->live_bytes - before.bytes;
    uint64_t peak = others + lct__mrc_peaks_at(&p->peaks, last);
    tree_add(p->tree, p->cap, last, UINT64_MAX, ~old + 1);
    p->live_bytes -= old;
    if (!request)
        return true;
    /* A lookup finds the key as it was held, at its size then; the
     * reference then makes it weigh its new one. */
    double held = (double)(old ? old : size);
    double scaled = (peak < others ? 1.8e19 : (double)peak * p->m->scale) +
                    held;
    uint64_t b = scaled >= 1.8e19 ? UINT64_MAX : (uint64_t)scaled;
    return count_request(p, r, d, &b);
}

static void note_size(lct_mrc *m, uint64_t bytes)
{
    m->totals.bytes_unknown += bytes == 0;
    if (bytes && (!m->totals.min_key_bytes ||
                  bytes < m->totals.min_key_bytes))
        m->totals.min_key_bytes = bytes;
    if (bytes > m->totals.max_key_bytes)
        m->totals.max_key_bytes = bytes;
}

/* One kept reference, of key k: its distances, then it becomes the most
 * recent. */
bool lct__mrc_step(pass *p, const lct__ref *r, uint64_t bytes, uint32_t k)
{
    lct_mrc *m = p->m;
    bool request = p->every || lct__ref_is_read(r);
    if (p->pos == p->cap)
        lct__mrc_compact(p);
    bool added = p->last[k] == 0;
    uint64_t last = added ? 0 : p->last[k] - 1;
    uint64_t old = added ? 0 : p->size_at[last];
    /* A reference that does not say its size keeps the known one. */
    uint64_t size = bytes ? bytes : old;
    note_size(m, bytes);
    if (!added ? !reread(p, r, request, last, old, size)
               : !first_reference(p, r, request))
        return false;
    if (!follow_peaks(p, added, last, old, size))
        return false;
    tree_add(p->tree, p->cap, p->pos, 1, size);
    p->live_bytes += size;
    p->size_at[p->pos] = size;
    p->key_at[p->pos] = k;
    p->last[k] = (uint32_t)++p->pos;
    m->totals.reads += request;
    m->totals.writes += !request;
    return true;
}

/* lct__mrc_step_out() of a key the pass holds. */
bool lct__mrc_leave(pass *p, const lct__ref *r, uint32_t k)
{
    bool request = p->every || lct__ref_is_read(r);
    uint64_t last = p->last[k] - 1, old = p->size_at[last];
    if (!reread(p, r, request, last, old, old) ||
        !follow_peaks(p, false, last, old, 0))
        return false;
    p->live--;
    p->last[k] = 0;
    return true;
}

/* step() when every reference weighs m->uniform_size. */
bool lct__mrc_step_uniform(pass *p, const lct__ref *r, uint32_t k)
{
    lct_mrc *m = p->m;
    bool request = p->every || lct__ref_is_read(r);
    if (p->pos == p->cap)
        lct__mrc_compact(p);
    if (p->last[k]) {
        uint64_t last = p->last[k] - 1;
        uint64_t d = p->live - live_upto(p, last);
        live_flip(p, last, false);
        if (request && !count_request(p, r, d, NULL))
            return false;
    } else if (!first_reference(p, r, request)) {
        return false;
    }
    live_flip(p, p->pos, true);
    p->key_at[p->pos] = k;
    p->last[k] = (uint32_t)++p->pos;
    m->totals.reads += request;
    m->totals.writes += !request;
    return true;
}

bool lct__mrc_finish(pass *p)
{
    lct_mrc *m = p->m;
    uint64_t n = p->nhist;
    while (n > 0 && p->hist[n - 1] == 0)
        n--;
    m->ncum = n;
    for (uint64_t d = 1; d < n; d++)
        p->hist[d] += p->hist[d - 1];
    m->cum = p->hist; /* now cumulative */
    p->hist = NULL;
    m->totals.distinct_keys = p->live;
    if (m->uniform_size) { /* what step() would have summed */
        p->live_bytes = p->live * m->uniform_size;
        m->totals.min_key_bytes = m->totals.max_key_bytes = m->uniform_size;
    }
    m->totals.mean_key_bytes =
        p->live ? (double)p->live_bytes / (double)p->live : 0;
    uint64_t pn = p->nphist;
    while (pn > 0 && p->phist[pn - 1] == 0)
        pn--;
    for (uint64_t d = 1; d < pn; d++)
        p->phist[d] += p->phist[d - 1];
    m->pcum = p->phist;
    m->npcum = pn;
    p->phist = NULL;
    uint64_t rereads = m->totals.reads - m->never;
    m->totals.infinite_hit_ratio =
        m->totals.reads ? (double)rereads / (double)m->totals.reads : 0;
    if (m->uniform_size)
        return true;
    if (!p->runs)
        return lct__mrc_radix_sort(m->bytes, m->nbytes) &&
               (!m->pos_bytes.value ||
                lct__mrc_radix_sort(m->pos_bytes.value, m->pos_bytes.n));
    lct__mrc_dists d;
    if (p->pruns) {
        lct__mrc_dists_free(m->pos_bytes.value, m->pos_bytes.cum,
                            m->pos_bytes.map, m->pos_bytes.map_len);
        if (!lct__mrc_runs_take(p->pruns, &m->pos_bytes))
            return false;
    }
    if (!lct__mrc_runs_take(p->runs, &d))
        return false;
    free(m->bytes);
    free(m->bytes_cum);
    m->bytes = d.value;
    m->bytes_cum = d.cum;
    m->nbytes = d.n;
    m->bytes_map = d.map;
    m->bytes_map_len = d.map_len;
    return true;
}

void lct__mrc_pass_free(pass *p)
{
    free(p->tree);
    lct__mrc_peaks_free(&p->peaks);
    free(p->live_bits);
    free(p->live_tree);
    free(p->size_at);
    free(p->hist);
    free(p->phist);
    free(p->last);
    free(p->key_at);
    if (p->runs)
        lct__mrc_runs_free(p->runs);
    free(p->runs);
    if (p->pruns)
        lct__mrc_runs_free(p->pruns);
    free(p->pruns);
    p->pruns = NULL;
    p->tree = NULL, p->live_bits = NULL, p->live_tree = NULL;
    p->size_at = NULL, p->hist = NULL;
    p->phist = NULL, p->last = NULL, p->key_at = NULL, p->runs = NULL;
}

/* The pass's trees and arrays for nkeys keys over n kept references. */
static bool pass_alloc(pass *p, size_t nkeys, uint64_t n,
                       uint64_t kept_requests, uint64_t uniform)
{
    /* Twice the keys, so a compaction frees at least as many positions
     * as there are keys; never more than the references need. */
    p->cap = 2 * (uint64_t)nkeys > n ? n : 2 * (uint64_t)nkeys;
    if (!(p->last = calloc(nkeys ? nkeys : 1, sizeof *p->last)) ||
        !(p->key_at = reallocarray(NULL, p->cap ? p->cap : 1,
                                   sizeof *p->key_at)))
        return false;
    if (uniform) {
        p->m->uniform_size = uniform;
        return lct__mrc_live_reset(p, p->cap);
    }
    p->tree = lct__big_calloc(p->cap + 1, sizeof *p->tree);
    p->size_at = reallocarray(NULL, p->cap ? p->cap : 1, sizeof *p->size_at);
    /* Written only as re-reads come: not zeroed.  A chunk position is
     * counted at a request, so there are no more of them. */
    size_t most = kept_requests > SIZE_MAX / sizeof(uint64_t)
                      ? 0
                      : (kept_requests ? kept_requests : 1) *
                            sizeof(uint64_t);
    p->m->bytes = most ? lct__big_alloc(most) : NULL;
    if (p->prefix)
        p->m->pos_bytes.value = most ? lct__big_alloc(most) : NULL;
    return p->tree && p->size_at && p->m->bytes &&
           (!p->prefix || p->m->pos_bytes.value);
}

/* The kept references, every request, and the size all kept references
 * say when they all say the same one (else 0).  Sampled, each kept
 * reference's bit is set in `bits`, which the passes after read instead
 * of hashing each key again. */
static uint64_t kept_count(const lct_refs *refs, const lct_mrc_options *o,
                           uint64_t threshold, uint64_t *bits,
                           uint64_t *requests, uint64_t *kept_requests,
                           uint64_t *uniform)
{
    uint64_t n = 0, size = 0;
    bool same = true;
    *requests = *kept_requests = 0;
    for (LCT__EACH_REF(refs, c)) {
        const lct__ref *r = c.ref;
        bool kept = !bits || lct__sampled(r->obj_id, o->seed, threshold);
        if (bits && kept)
            bits[c.i >> 6] |= (uint64_t)1 << (c.i & 63);
        bool request = o->every_reference || lct__ref_is_read(r);
        uint64_t bytes = lct__cursor_bytes(&c);
        n += kept;
        *requests += request;
        *kept_requests += kept && request;
        if (kept && same) {
            size = n == 1 ? bytes : size;
            same = bytes && bytes == size;
        }
    }
    /* references a sampled gathering dropped: no sample keeps them */
    *requests += refs->dropped_reads +
                 (o->every_reference ? refs->dropped_writes : 0);
    *uniform = same && n < UINT32_MAX ? size : 0;
    return n;
}

/* Hits over reads.  Sampled, with SHARDS-adj: the kept reads differ from
 * rate x all reads when hot keys happen to be in (or out of) the sample,
 * and the difference is counted as hits (or taken off) at distance 0.
 * Clamped to [0, 1]. */
static double adjusted(const lct_mrc *m, double hits)
{
    double reads = (double)m->totals.reads + m->adjust;
    double ratio = reads > 0 ? (hits + m->adjust) / reads : 0;
    return ratio < 0 ? 0 : ratio > 1 ? 1 : ratio;
}

/* The distinct sizes kept references weigh (0: unknown included),
 * ascending, up to LCT__MRC_BANDS + 1; false when there are more. */
static bool distinct_sizes(const lct_refs *refs, const uint64_t *kept,
                           uint64_t *v, unsigned *nv)
{
    *nv = 0;
    for (LCT__EACH_REF(refs, c)) {
        if (!lct__kept_at(kept, c.i))
            continue;
        uint64_t b = lct__cursor_bytes(&c);
        unsigned i = 0;
        while (i < *nv && v[i] < b)
            i++;
        if (i < *nv && v[i] == b)
            continue;
        if (*nv == LCT__MRC_BANDS + 1)
            return false;
        memmove(v + i + 1, v + i, (*nv - i) * sizeof *v);
        v[i] = b;
        ++*nv;
    }
    return true;
}

/* One band: the pass over the keys that weigh at most b->lo (a reference
 * of a key heavier than that bypasses the cache, and ends its call's
 * leading run), keeping the byte distances below b->hi, sorted. */
static bool band_pass(const lct_refs *refs, const uint32_t *key,
                      size_t nkeys, const pass *main, const uint64_t *kept,
                      struct lct__mrc_band *b)
{
    pass q = {.every = main->every, .prefix = main->prefix};
    uint64_t *known = calloc(nkeys ? nkeys : 1, sizeof *known);
    bool ok = known && (q.m = calloc(1, sizeof *q.m)) &&
              pass_alloc(&q, nkeys, main->m->totals.kept_references,
                         main->m->totals.reads, 0);
    if (ok)
        q.m->scale = main->m->scale;
    for (LCT__EACH_REF(refs, c)) {
        const lct__ref *r = c.ref;
        if (!ok || !lct__kept_at(kept, c.i))
            continue;
        uint64_t bytes = lct__cursor_bytes(&c);
        uint32_t k = key[c.i];
        known[k] = bytes ? bytes : known[k];
        ok = known[k] <= b->lo ? lct__mrc_step(&q, r, bytes, k)
                               : lct__mrc_step_out(&q, r, k);
    }
    ok = ok && lct__mrc_finish(&q);
    if (ok) {
        b->d = q.m->bytes;
        b->n = lct__mrc_first_above(q.m->bytes, q.m->nbytes, b->hi - 1);
        q.m->bytes = NULL;
        lct__mrc_band_take_positions(b, q.m);
    }
    lct__mrc_pass_free(&q);
    free(known);
    lct_mrc_free(q.m);
    return ok;
}

/* The bands below the largest key size, when key sizes differ and are
 * few enough; none otherwise. */
static bool bands(const lct_refs *refs, const uint32_t *key, size_t nkeys,
                  pass *p, const uint64_t *kept)
{
    uint64_t v[LCT__MRC_BANDS + 1];
    unsigned nv;
    if (p->m->uniform_size || !distinct_sizes(refs, kept, v, &nv) || nv < 2)
        return true;
    for (unsigned j = 0; j + 1 < nv; j++) {
        struct lct__mrc_band *b = &p->m->band[j];
        *b = (struct lct__mrc_band){.lo = v[j], .hi = v[j + 1]};
        if (!band_pass(refs, key, nkeys, p, kept, b))
            return false;
        p->m->nbands = j + 1;
    }
    return true;
}

lct_status lct_mrc_compute(const lct_refs *refs, double rate, lct_mrc **out,
                           lct_error *err)
{
    lct_mrc_options o = {.sample_rate = rate};
    if (!(rate > 0)) /* 0 is "exact" for the options, not here */
        o.sample_rate = -1;
    return lct_mrc_compute_with(refs, &o, out, err);
}

lct_status lct_mrc_compute_with(const lct_refs *refs,
                                const lct_mrc_options *o, lct_mrc **out,
                                lct_error *err)
{
    if (out)
        *out = NULL;
    double rate = o && o->sample_rate == 0 ? 1 : o ? o->sample_rate : 0;
    if (!refs || !out || !o || !(rate > 0 && rate <= 1))
        return lct__fail(err, LCT_ERR_INVALID, EINVAL, 0,
                         "lct_mrc_compute: the sample rate must be in (0, 1]");
    bool all = rate >= 1;
    if (o->prefix && !all)
        return lct__fail(err, LCT_ERR_INVALID, EINVAL, 0,
                         "lct_mrc_compute: the prefix rule needs every key "
                         "of a call: no sampling");
    uint64_t threshold = all ? UINT64_MAX : (uint64_t)ldexp(rate, 64);
    uint64_t *kept = all ? NULL : calloc(refs->n / 64 + 1, sizeof *kept);
    uint64_t all_requests = 0, kept_requests = 0, uniform = 0, n = 0;
    if (all || kept)
        n = kept_count(refs, o, threshold, kept, &all_requests,
                       &kept_requests, &uniform);
    pass p = {.every = o->every_reference, .prefix = o->prefix};
    uint32_t *key = lct__big_alloc((refs->n ? refs->n : 1) * sizeof *key);
    size_t nkeys = 0;
    p.m = calloc(1, sizeof *p.m);
    bool ok = (all || kept) && p.m && key &&
              lct__refs_number(refs, kept, key, &nkeys) &&
              pass_alloc(&p, nkeys, n, kept_requests, uniform);
    if (ok) {
        p.m->scale = 1 / rate;
        p.m->totals.sample_rate = rate;
        p.m->totals.every_reference = o->every_reference;
        p.m->totals.prefix = o->prefix;
        p.m->totals.seed = o->seed;
        p.m->totals.references =
            refs->n + refs->dropped_reads + refs->dropped_writes;
        p.m->totals.kept_references = n;
    }
    for (LCT__EACH_REF(refs, c)) {
        if (!ok)
            break;
        if (c.i + 16 < refs->n)
            __builtin_prefetch(&p.last[key[c.i + 16]]);
        const lct__ref *r = c.ref;
        if (lct__kept_at(kept, c.i) &&
            !(ok = uniform ? lct__mrc_step_uniform(&p, r, key[c.i])
                           : lct__mrc_step(&p, r, lct__cursor_bytes(&c), key[c.i])))
            break;
    }
    ok = ok && lct__mrc_finish(&p) && bands(refs, key, nkeys, &p, kept);
    if (ok && !all) { /* SHARDS-adj (Waldspurger et al., FAST '15) */
        p.m->adjust = (double)all_requests * rate - (double)p.m->totals.reads;
        p.m->totals.adjustment = p.m->adjust;
        p.m->totals.infinite_hit_ratio =
            adjusted(p.m, p.m->ncum ? (double)p.m->cum[p.m->ncum - 1] : 0);
    }
    lct__mrc_pass_free(&p);
    free(key);
    free(kept);
    if (!ok) {
        lct_mrc_free(p.m);
        return lct__fail(err, LCT_ERR_NOMEM, ENOMEM, 0,
                         "out of memory computing the miss-ratio curve");
    }
    *out = p.m;
    return LCT_OK;
}

/* MARK: - reading the curves */

void lct_mrc_totals_get(const lct_mrc *m, lct_mrc_totals *out)
{
    if (m)
        *out = m->totals;
    else
        memset(out, 0, sizeof *out);
}

double lct_mrc_hit_ratio(const lct_mrc *m, uint64_t keys)
{
    if (!m || !m->totals.reads || !keys || !m->ncum)
        return 0;
    /* A read at distance d hits when d * scale < keys. */
    double limit = ceil((double)keys / m->scale) - 1;
    if (limit < 0)
        return 0;
    uint64_t d = limit >= (double)(m->ncum - 1) ? m->ncum - 1
                                                : (uint64_t)limit;
    return adjusted(m, (double)m->cum[d]);
}

double lct_mrc_position_hit_ratio(const lct_mrc *m, uint64_t keys)
{
    if (!m || !m->totals.positions || !keys || !m->npcum)
        return 0;
    uint64_t d = keys - 1 >= m->npcum - 1 ? m->npcum - 1 : keys - 1;
    return (double)m->pcum[d] / (double)m->totals.positions;
}

/* A re-read's byte distance at key distance d when every key weighs
 * size: the d keys since, scaled, and its own; as step() rounds it. */
static uint64_t uniform_distance(const lct_mrc *m, uint64_t d)
{
    double scaled = (double)(d * m->uniform_size) * m->scale +
                    (double)m->uniform_size;
    return scaled >= 1.8e19 ? UINT64_MAX : (uint64_t)scaled;
}

/* How many byte distances are at most x: v sorted, one a re-read, or
 * distinct with cumulative counts cum. */
static uint64_t at_most(const uint64_t *v, const uint64_t *cum, uint64_t n,
                        uint64_t x)
{
    uint64_t i = lct__mrc_first_above(v, n, x);
    return !cum ? i : i ? cum[i - 1] : 0;
}

/* The first n key distances whose bytes fit in `bytes` when every key
 * weighs m->uniform_size: how many (their bytes grow with the distance,
 * so a search). */
static uint64_t uniform_fitting(const lct_mrc *m, uint64_t n, uint64_t bytes)
{
    uint64_t lo = 0, hi = n; /* the first d whose bytes exceed */
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo) / 2;
        if (uniform_distance(m, mid) <= bytes)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* The band whose capacities hold `bytes` (NULL: from the largest key
 * size up, where the whole pass counts); *none when no key fits. */
static const struct lct__mrc_band *band_at(const lct_mrc *m, uint64_t bytes,
                                           bool *none)
{
    *none = false;
    if (!m->nbands || bytes >= m->band[m->nbands - 1].hi)
        return NULL;
    if (bytes < m->band[0].lo) {
        *none = true;
        return NULL;
    }
    const struct lct__mrc_band *b = &m->band[0];
    while (bytes >= b->hi)
        b++;
    return b;
}

double lct_mrc_byte_hit_ratio(const lct_mrc *m, uint64_t bytes)
{
    if (!m || !m->totals.reads)
        return 0;
    bool none;
    const struct lct__mrc_band *b = band_at(m, bytes, &none);
    if (none)
        return adjusted(m, 0);
    if (b)
        return adjusted(m, (double)at_most(b->d, b->cum, b->n, bytes));
    if (m->uniform_size) { /* the reads at key distances whose bytes fit */
        uint64_t n = uniform_fitting(m, m->ncum, bytes);
        return adjusted(m, n ? (double)m->cum[n - 1] : 0);
    }
    return adjusted(m, (double)at_most(m->bytes, m->bytes_cum, m->nbytes,
                                       bytes));
}

void lct__mrc_band_take_positions(struct lct__mrc_band *b, lct_mrc *src)
{
    b->pos = src->pos_bytes;
    b->pos.n = lct__mrc_first_above(b->pos.value, b->pos.n, b->hi - 1);
    src->pos_bytes = (lct__mrc_dists){0};
}

double lct_mrc_position_byte_hit_ratio(const lct_mrc *m, uint64_t bytes)
{
    if (!m || !m->totals.positions || !m->totals.prefix)
        return 0;
    double positions = (double)m->totals.positions;
    bool none;
    const struct lct__mrc_band *b = band_at(m, bytes, &none);
    const lct__mrc_dists *d = b ? &b->pos : &m->pos_bytes;
    if (none)
        return 0;
    if (!b && m->uniform_size) { /* the positions at distances that fit */
        uint64_t n = uniform_fitting(m, m->npcum, bytes);
        return n ? (double)m->pcum[n - 1] / positions : 0;
    }
    return (double)at_most(d->value, d->cum, d->n, bytes) / positions;
}

uint64_t lct_mrc_max_distance(const lct_mrc *m)
{
    if (!m || !m->ncum)
        return 0;
    return (uint64_t)ceil((double)(m->ncum - 1) * m->scale);
}

void lct_mrc_free(lct_mrc *m)
{
    if (!m)
        return;
    free(m->cum);
    free(m->pcum);
    lct__mrc_dists_free(m->bytes, m->bytes_cum, m->bytes_map,
                        m->bytes_map_len);
    lct__mrc_dists_free(m->pos_bytes.value, m->pos_bytes.cum,
                        m->pos_bytes.map, m->pos_bytes.map_len);
    for (unsigned j = 0; j < m->nbands; j++) {
        const struct lct__mrc_band *b = &m->band[j];
        lct__mrc_dists_free(b->d, b->cum, b->map, b->map_len);
        lct__mrc_dists_free(b->pos.value, b->pos.cum, b->pos.map,
                            b->pos.map_len);
    }
    free(m);
}
