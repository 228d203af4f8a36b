/*
 * mrc_internal.h - the stack pass behind an exact curve, shared by mrc.c
 * (over a gathered lct_refs) and mrc_stream.c (over references as they
 * arrive, in memory that grows with keys): the curve's private state,
 * one pass's trees and histograms, and the steps both drive.
 */
#ifndef LCT_MRC_INTERNAL_H
#define LCT_MRC_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lct_cache.h"
#include "lmcache/mrc_peaks_internal.h"
#include "lmcache/mrc_runs_internal.h"
#include "lmcache/refs_internal.h"

/* Key sizes a byte curve handles exactly at every capacity (one more pass
 * a size below the largest); with more, capacities below the largest key
 * size are counted as if heavier keys filled the cache. */
#define LCT__MRC_BANDS 15

struct lct_mrc {
    lct_mrc_totals totals;
    uint64_t *cum;       /* cum[d]: kept reads at key distance <= d */
    uint64_t ncum;
    /* Byte distances of re-reads (scaled), sorted: one a re-read
     * (bytes_cum NULL), or distinct with bytes_cum[i] re-reads at most
     * bytes[i] (a streaming pass). */
    uint64_t *bytes, *bytes_cum;
    uint64_t nbytes;
    void *bytes_map;     /* both lie in this mapping (lct__mrc_dists) */
    size_t bytes_map_len;
    double scale;        /* 1 / sample rate */
    double adjust;       /* SHARDS-adj: expected kept reads - kept reads */
    /* Every kept reference said the same size: byte distances follow
     * from key distances (d keys of this size, then its own), so none is
     * kept (bytes is NULL). */
    uint64_t uniform_size;
    uint64_t *pcum;      /* prefix: pcum[d] positions hit at distance <= d */
    uint64_t npcum;
    /* Prefix, and bytes kept: each chunk position hit, at its call's
     * running byte maximum there, as bytes above (value one a position,
     * or distinct with cum). */
    lct__mrc_dists pos_bytes;
    uint64_t never;      /* requests no capacity serves */
    /* Byte capacities below the largest key size, where keys heavier
     * than the cache bypass it: band[j] holds the byte distances below
     * band[j].hi of a pass over the keys of size <= band[j].lo, which is
     * exact for capacities in [lo, hi); below band[0].lo nothing fits.
     * cum as bytes_cum. */
    struct lct__mrc_band {
        uint64_t lo, hi, *d, *cum, n;
        void *map;       /* d and cum lie in it (lct__mrc_dists) */
        size_t map_len;
        lct__mrc_dists pos; /* as pos_bytes, below hi */
    } band[LCT__MRC_BANDS];
    unsigned nbands;
};

/* Fenwick tree over positions 1..n: a count and a byte sum per node, in
 * one struct so a step touches one cache line. */
typedef struct lct__mrc_node {
    uint64_t count, bytes;
} lct__mrc_node;

/*
 * Positions are compacted: when every one of the trees' `cap` positions
 * has been used, the live ones (each key's latest) are renumbered
 * 0..live-1 in order and the trees rebuilt, so the trees hold twice the
 * keys, not one node a reference (a walk touches a tree the size of the
 * keys, and no memory grows with the stream).
 * Each compaction costs O(cap) and comes after at least cap - live new
 * positions, so O(1) a reference.  Over a gathered stream keys are
 * numbered first (lct__refs_number, on every CPU), so what a key last was
 * is an array read, not a hash lookup; a streaming pass numbers them as
 * they come and grows cap with them.
 */
typedef struct lct__mrc_pass {
    lct_mrc *m;
    lct__mrc_node *tree;
    /* The uniform case's live positions instead of the tree: a bit each,
     * and a Fenwick tree of the 64-bit words' counts (4 bytes a word, not
     * 4 bytes a position, so a step's walks stay in the L1 cache). */
    uint64_t *live_bits;
    uint32_t *live_tree;
    uint64_t cap;          /* positions the trees hold */
    uint64_t pos;          /* the next position */
    uint32_t *last;        /* per key: its latest position + 1, 0: none */
    uint32_t *key_at;      /* per position: whose reference it was */
    uint64_t *size_at;     /* size_at[pos]: what the key there weighs */
    lct__mrc_peaks peaks;  /* once keys shrink: how far the bytes after
                              each position once stood above now */
    uint64_t live, live_bytes;
    uint64_t *hist;        /* hist[d]: re-reads at key distance d */
    uint64_t nhist;
    uint64_t *phist;       /* prefix: chunk positions at distance d */
    uint64_t nphist;
    lct__mrc_runs *runs;   /* streaming: byte distances go here */
    lct__mrc_runs *pruns;  /* ... and, under the prefix rule, positions' */
    bool every;            /* every reference is a request, writes too */
    bool prefix;           /* the prefix rule: distances run up a call */
    bool run_never;        /* a key of this call so far was never seen */
    uint64_t run, run_bytes; /* the call's running maxima so far */
} lct__mrc_pass;

/* One kept reference of key k (bytes: what it says it weighs), with the
 * node tree; the uniform case's, every reference weighing
 * m->uniform_size, with the count tree.  The trees must have room (pos <
 * cap, or compaction frees some).  false: out of memory. */
bool lct__mrc_step(lct__mrc_pass *p, const lct__ref *r, uint64_t bytes,
                   uint32_t k);
bool lct__mrc_step_uniform(lct__mrc_pass *p, const lct__ref *r, uint32_t k);
/* The prefix rule's running maxima before a request (d NULL: its key was
 * never seen, or it bypasses the cache); false when it hits nowhere. */
bool lct__mrc_run_up(lct__mrc_pass *p, const lct__ref *r, uint64_t *d,
                     uint64_t *bytes);
bool lct__mrc_leave(lct__mrc_pass *p, const lct__ref *r, uint32_t k);
/* A reference of key k heavier than the whole cache (a band's pass): it
 * is found as it was held, if it was, and leaves instead of coming back
 * (inline: most such keys were never held, and cost a test).  false:
 * out of memory. */
static inline bool lct__mrc_step_out(lct__mrc_pass *p, const lct__ref *r,
                                     uint32_t k)
{
    if (p->last[k])
        return lct__mrc_leave(p, r, k);
    if (p->prefix && (p->every || lct__ref_is_read(r)))
        lct__mrc_run_up(p, r, NULL, NULL); /* a miss: the run ends */
    return true;
}
/* Words of live bits that cap positions take. */
static inline uint64_t lct__mrc_live_words(uint64_t cap)
{
    return (cap + 63) / 64;
}
/* The uniform case's counts with room for cap positions, all empty;
 * false: out of memory. */
bool lct__mrc_live_reset(lct__mrc_pass *p, uint64_t cap);
/* Renumber the live positions 0..live-1 and rebuild the trees over cap. */
void lct__mrc_compact(lct__mrc_pass *p);
/* Turn the pass's histograms into the curve's cumulative counts, and
 * sort (or gather, from p->runs) its byte distances. */
bool lct__mrc_finish(lct__mrc_pass *p);
/* Hand a finished curve's position byte distances below hi to a band
 * (taken from src, which is left without them). */
void lct__mrc_band_take_positions(struct lct__mrc_band *b, lct_mrc *src);
/* Free the pass's own arrays (not p->m). */
void lct__mrc_pass_free(lct__mrc_pass *p);

/* The first of n sorted values above x (n if none): how many are at
 * most x.  A search, so a mapped array is touched in a few pages. */
static inline uint64_t lct__mrc_first_above(const uint64_t *v, uint64_t n,
                                            uint64_t x)
{
    uint64_t lo = 0, hi = n;
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo) / 2;
        if (v[mid] <= x)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Sort v ascending; false: out of memory. */
bool lct__mrc_radix_sort(uint64_t *v, uint64_t n);

#endif
