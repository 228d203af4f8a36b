/*
 * mrc_runs_internal.h - the byte distances of a streamed exact curve
 * (mrc_runs.c): sorted distinct values with counts, in memory that does
 * not grow with the references.
 */
#ifndef LCT_MRC_RUNS_INTERNAL_H
#define LCT_MRC_RUNS_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A sorted run of n in the spill file: its values at off, its counts at
 * coff. */
typedef struct lct__mrc_spilled {
    uint64_t off, coff, n;
} lct__mrc_spilled;

/*
 * Zeroed, it is empty.  Distances come into buf; a full buf is sorted
 * and merged into the set (value/count, ascending, distinct); a set past
 * lct__mrc_runs_limits.set is written to a temporary file as a run and
 * emptied first.  When no temporary file can be made, the set grows in
 * memory instead.
 */
typedef struct lct__mrc_runs {
    uint64_t *buf;
    size_t nbuf, bufcap;
    uint64_t *scratch;        /* the sort's second half, then counts */
    uint32_t *digits;         /* the sort's counters */
    uint64_t *value, *count;  /* the set */
    uint64_t n, cap;
    int spill;                /* the spill file's descriptor + 1; 0: none */
    bool in_memory;           /* no spill file could be made */
    lct__mrc_spilled *run;
    size_t nrun, runcap;
    uint64_t end;             /* bytes written to the spill file */
} lct__mrc_runs;

/* The bounds, as variables so that tests can make them tiny: entries a
 * buffer holds, the set's most before it is spilled, and runs merged at
 * once. */
typedef struct lct__mrc_runs_bounds {
    size_t buffer, set, fanin;
} lct__mrc_runs_bounds;
extern lct__mrc_runs_bounds lct__mrc_runs_limits;

/* The curve's byte distances as lct__mrc_runs_take hands them over:
 * cum[i] the distances at most value[i].  map (map_len bytes) is set
 * when both arrays lie in a read-only mapping of the merged runs (to be
 * unmapped, not freed). */
typedef struct lct__mrc_dists {
    uint64_t *value, *cum, n;
    void *map;
    size_t map_len;
} lct__mrc_dists;

/* Add one distance; false: out of memory. */
bool lct__mrc_runs_add(lct__mrc_runs *runs, uint64_t value);
/* Add count of a distance above every one added so far (buf empty). */
bool lct__mrc_runs_append(lct__mrc_runs *runs, uint64_t value,
                          uint64_t count);
/* dst (zeroed) becomes a copy of src, spilled runs included. */
bool lct__mrc_runs_copy(lct__mrc_runs *dst, lct__mrc_runs *src);
/* Every distance, merged, into *out; runs is empty after. */
bool lct__mrc_runs_take(lct__mrc_runs *runs, lct__mrc_dists *out);
void lct__mrc_runs_free(lct__mrc_runs *runs);
/* Free a lct__mrc_dists' arrays (or unmap them). */
void lct__mrc_dists_free(uint64_t *value, uint64_t *cum, void *map,
                         size_t map_len);

#endif
