/*
 * mrc_peaks_internal.h - what a byte curve needs once keys can shrink or
 * leave: for each live position, how far the bytes used after it have
 * ever stood above what they weigh now.
 *
 * In a byte LRU a key stays while its own size and the sizes of the keys
 * used after it fit, at every moment since its reference: when a key used
 * later shrinks (or leaves), the sum now understates what pushed the key
 * out.  A re-read's byte distance is therefore the highest that sum has
 * been, which is the sum now plus this "excess".  While no key has shrunk
 * the excess is 0 everywhere and nothing is kept (peaks.tag NULL).
 */
#ifndef LCT_MRC_PEAKS_INTERNAL_H
#define LCT_MRC_PEAKS_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

/* x -> max(x + add, floor), the change a node's range has yet to pass
 * to its children (floor >= 0, so (0, 0) changes nothing). */
typedef struct lct__mrc_peak_tag {
    int64_t add, floor;
} lct__mrc_peak_tag;

/* A segment tree over positions 0..leaves-1 of such changes: each
 * node's change is newer than its descendants', so a position's excess
 * is its leaf's change applied to 0, then each ancestor's in turn. */
typedef struct lct__mrc_peaks {
    lct__mrc_peak_tag *tag; /* 2 x leaves, [1] the root; NULL: all 0 */
    uint64_t leaves;        /* a power of two */
} lct__mrc_peaks;

/* Start keeping excesses (all 0) over positions 0..cap-1, if not yet
 * kept; false: out of memory. */
bool lct__mrc_peaks_start(lct__mrc_peaks *pk, uint64_t cap);
/* The bytes after every position in [lo, hi) changed by `rise` (signed):
 * excess := max(excess - rise, 0) there. */
void lct__mrc_peaks_rise(lct__mrc_peaks *pk, uint64_t lo, uint64_t hi,
                         int64_t rise);
/* The bytes after every position from lo on, live or not yet, grown by
 * `growth`: a position not yet live has excess 0, which a growth keeps
 * 0, and so do the changes composed where it is (each max(x - s, 0): a
 * falling change only ever covers positions before a live one), so the
 * range may end with the tree, whose right edge then pushes nothing. */
void lct__mrc_peaks_rise_from(lct__mrc_peaks *pk, uint64_t lo,
                              uint64_t growth);
/* The excess at pos (0 when none is kept: the common case, inline). */
uint64_t lct__mrc_peaks_walk(const lct__mrc_peaks *pk, uint64_t pos);
static inline uint64_t lct__mrc_peaks_at(const lct__mrc_peaks *pk,
                                         uint64_t pos)
{
    return pk->tag ? lct__mrc_peaks_walk(pk, pos) : 0;
}
/* Compaction: settle() before positions move, move() each kept one to
 * its new place (to <= from, in increasing order), clear_from() the
 * positions past the last kept. */
void lct__mrc_peaks_settle(lct__mrc_peaks *pk);
void lct__mrc_peaks_move(lct__mrc_peaks *pk, uint64_t from, uint64_t to);
void lct__mrc_peaks_clear_from(lct__mrc_peaks *pk, uint64_t pos);
/* Room for cap positions, the first n keeping their excesses; false:
 * out of memory (the old tree kept). */
bool lct__mrc_peaks_grow(lct__mrc_peaks *pk, uint64_t cap, uint64_t n);
void lct__mrc_peaks_free(lct__mrc_peaks *pk);

/* What a size, unsigned, is as a signed change (saturated). */
static inline int64_t lct__mrc_signed(uint64_t v)
{
    return v > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)v;
}

#endif
