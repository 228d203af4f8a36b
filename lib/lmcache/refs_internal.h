/*
 * refs_internal.h - the layout of a key reference stream, shared by
 * refs.c (building and writing it) and mrc.c (reading it).
 */
#ifndef LCT_REFS_INTERNAL_H
#define LCT_REFS_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lct_cache.h"
#include "base/u64map_internal.h"

/* A reference in 16 bytes (the stream is most of what `lct keys
 * --oracle-general` and `lct mrc` hold, and every byte of it is a byte
 * the kernel zeroes): `size`'s top three bits say whether it is a read,
 * whether it is the first key of its call, and whether it is the last
 * key of a chunk position of its call (lct_refs_end_call, for the prefix
 * rule's tokens); a size of LCT__REF_BIG or more (512 MiB) is kept in its
 * part's `big` map instead. */
typedef struct lct__ref {
    uint64_t obj_id;
    uint32_t seconds; /* whole seconds of t_mono, clamped */
    uint32_t size;    /* flags | bytes, or flags | LCT__REF_BIG */
} lct__ref;

#define LCT__REF_READ 0x80000000u
#define LCT__REF_CALL 0x40000000u     /* the first key of its call */
#define LCT__REF_POSITION 0x20000000u /* the last key of a chunk position */
#define LCT__REF_FLAGS 0xe0000000u
#define LCT__REF_BIG 0x1fffffffu

static inline bool lct__ref_is_read(const lct__ref *r)
{
    return (r->size & LCT__REF_READ) != 0;
}

/* Blocks of 2^20 references (24 MiB), so growing never copies what is
 * there (a realloc of one large array copied it, 10% of `lct keys`). */
#define LCT__REFS_BLOCK_SHIFT 20
#define LCT__REFS_BLOCK ((size_t)1 << LCT__REFS_BLOCK_SHIFT)

/* A run of references in blocks: what one thread gathered. */
typedef struct lct__refs_part {
    lct__ref **blocks;
    size_t nblocks, n;
    size_t first_cap; /* block 0 starts small and doubles to a block */
    size_t call;      /* where the call lct_refs_end_call ends began */
    lct__u64map big;  /* index in the part -> bytes, for LCT__REF_BIG */
} lct__refs_part;

/* The stream is its parts in order: lct_refs_append moves another
 * stream's parts over whole (copying them was a tenth of `lct keys
 * --oracle-general -j 2`), and adding goes to the last part. */
struct lct_refs {
    lct__refs_part *parts;
    size_t nparts, n; /* n: references over all parts */
    /* lct_refs_sample: keep a reference only when one of `samples` SHARDS
     * samples keeps its key; count the others (threshold 0: keep all). */
    uint64_t threshold, seed;
    unsigned samples;
    /* The samples' salts (lct__sample_salt) but a seed 0's, which takes
     * the id as it is (raw_sample) */
    uint64_t *salts;
    unsigned nsalts;
    bool raw_sample;
    uint64_t dropped_reads, dropped_writes;
    uint64_t sizeless; /* references added with 0 bytes */
};

/* Whether SHARDS keeps the key: its id, salted by the seed and mixed
 * again (splitmix64's finalizer) so that each seed draws an independent
 * sample, falls under the threshold.  Seed 0 takes the id as it is.
 *
 * The finalizer's first step, x ^ x >> 30 of x = id ^ seed * golden,
 * is (id ^ id >> 30) ^ salt, salt = k ^ k >> 30 of k = seed * golden (a
 * shift distributes over xor): a gathering that tests each id against
 * several seeds works the id's share out once and the salts once. */
/* lct_refs_end_call and lct_mrc_stream_end_call with chunk positions of
 * sizes[j] keys each (a size 0 is taken as 1), as lct_call_fold hands
 * a call on. */
lct_status lct__refs_end_call_sizes(lct_refs *refs, const uint32_t *sizes,
                                    size_t nsizes);
lct_status lct__mrc_stream_end_call_sizes(lct_mrc_stream *s,
                                          const uint32_t *sizes,
                                          size_t nsizes);

static inline uint64_t lct__sample_salt(uint64_t seed)
{
    uint64_t k = seed * 0x9e3779b97f4a7c15ull;
    return k ^ (k >> 30);
}

/* The test from the first step's result on: y = (id ^ id >> 30) ^ salt. */
static inline bool lct__sample_rest(uint64_t y, uint64_t threshold)
{
    uint64_t z = y * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    /* The last step keeps the top 33 bits, so a key whose top 33 bits
     * pass the threshold's is out whatever the rest: one comparison for
     * almost every key (past is 0 when no key's top bits can pass). */
    uint64_t past = (threshold | 0x7fffffffu) + 1;
    if (past && z >= past)
        return false;
    return (z ^ (z >> 31)) < threshold;
}

static inline bool lct__sampled(uint64_t id, uint64_t seed,
                                uint64_t threshold)
{
    if (!seed)
        return id < threshold;
    return lct__sample_rest((id ^ (id >> 30)) ^ lct__sample_salt(seed),
                            threshold);
}

static inline lct__ref *lct__part_at(const lct__refs_part *p, size_t i)
{
    return &p->blocks[i >> LCT__REFS_BLOCK_SHIFT][i & (LCT__REFS_BLOCK - 1)];
}

/* The bytes of reference r, at index i of part p. */
static inline uint64_t lct__ref_bytes(const lct__refs_part *p, size_t i,
                                      const lct__ref *r)
{
    uint32_t b = r->size & ~LCT__REF_FLAGS;
    if (b != LCT__REF_BIG)
        return b;
    const lct__u64map_entry *e = lct__u64map_find(&p->big, i);
    return e ? e->value : b;
}

/* Every reference in order: for (LCT__EACH_REF(refs, c)) { c.ref ... };
 * c.i counts from 0 over the whole stream, c.part and c.j say where the
 * reference is kept. */
typedef struct lct__ref_cursor {
    const struct lct_refs *refs;
    size_t part, j, i;
    const lct__ref *ref;
} lct__ref_cursor;

static inline bool lct__ref_cursor_valid(lct__ref_cursor *c)
{
    while (c->part < c->refs->nparts &&
           c->j == c->refs->parts[c->part].n) {
        c->part++;
        c->j = 0;
    }
    if (c->part == c->refs->nparts)
        return false;
    c->ref = lct__part_at(&c->refs->parts[c->part], c->j);
    return true;
}

/* Each reference's next access as the oracleGeneral export numbers it
 * (*next[i]: the 1-based position of the next reference to its id, 0
 * none) and, with sizes, its size as the export gives it (a reference
 * without one takes its key's, 1 when no reference of the key has one;
 * not saturated at 4 GiB as the export's field is), from the stream's
 * keys numbered by lct__refs_number (key, nkeys); free() both.  false:
 * out of memory. */
bool lct__refs_next_sizes(const lct_refs *refs, const uint32_t *key,
                          size_t nkeys, uint32_t **next, uint64_t **sizes);

/* Number each reference's key (key[i] for position i, keys numbered from
 * 0 in no promised order; *nkeys of them), on every CPU for a long
 * stream: the one hash lookup a reference the export and the curves
 * need, after which they index plain arrays.  With `kept` (a bit a
 * position), only the references whose bit is set: a SHARDS sample's
 * pass numbers its own keys, not every sample's (the others' key[i] is
 * UINT32_MAX).  false: out of memory, or 2^32 - 1 references or more. */
bool lct__refs_number(const lct_refs *refs, const uint64_t *kept,
                      uint32_t *key, size_t *nkeys);

/* Whether position i's bit is set in `kept` (NULL: every position's). */
static inline bool lct__kept_at(const uint64_t *kept, size_t i)
{
    return !kept || (kept[i >> 6] >> (i & 63) & 1);
}

/* The bytes of the cursor's reference. */
static inline uint64_t lct__cursor_bytes(const lct__ref_cursor *c)
{
    return lct__ref_bytes(&c->refs->parts[c->part], c->j, c->ref);
}

#define LCT__EACH_REF(stream, c)                                         \
    lct__ref_cursor c = {(stream), 0, 0, 0, NULL};                      \
    lct__ref_cursor_valid(&c); c.j++, c.i++

#endif
