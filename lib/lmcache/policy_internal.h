/*
 * policy_internal.h - what the eviction policies of lct_policy share: the
 * cache's slots (one per key held, or remembered as a ghost), the map
 * from key to slot, lists of slots linked by index, and the steps each
 * policy supplies (lct__policy_ops).  policy.c runs a reference through
 * them as libCacheSim's cache_get_base does; each policy_*.c holds one
 * policy's rules.
 */
#ifndef LCT_POLICY_INTERNAL_H
#define LCT_POLICY_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "base/u64map_internal.h"
#include "lct_cache.h"

#define LCT__POLICY_NIL UINT32_MAX

/* A policy's step, or a helper of one: inlined into the policy's stream
 * (policy_stream_internal.h) whatever the compiler would choose.  Left to
 * GCC, ARC's steps stayed calls, and a run cost 1.5x the instructions. */
#define LCT__STEP static inline __attribute__((always_inline))

typedef struct lct__pslot {
    uint64_t key, bytes;
    uint32_t prev, next; /* prev: toward the list's first (newest) end */
    union {
        uint32_t bucket;  /* LFU, IsolatedLRU: its count's or salt's */
        uint32_t heap_at; /* Belady: its place in the heap (from 1) */
    };
    uint8_t where; /* ARC, S3-FIFO: the list it is in */
    /* CLOCK, SIEVE: the bit; S3-FIFO: a count, kept at 3 at most, as
     * its rules treat every count above 2 alike */
    uint8_t freq;
} lct__pslot;

/* 32 bytes, two to a cache line (Belady's next uses are an array of
 * their own): at 56, `mrc --policy arc,s3fifo,sieve` took 1.07x the CPU. */
_Static_assert(sizeof(lct__pslot) == 32, "a slot is 32 bytes");

typedef struct lct__plist {
    uint32_t first, last;
} lct__plist;

#define LCT__PLIST_EMPTY ((lct__plist){LCT__POLICY_NIL, LCT__POLICY_NIL})

/* LFU: the keys of one count, in the order they reached it; the buckets
 * in a list by count, the lowest first. */
typedef struct lct__pbucket {
    int64_t freq;
    uint32_t prev, next;
    lct__plist keys;
} lct__pbucket;

typedef struct lct__policy_ops lct__policy_ops;
struct lct__pstream;

/* IsolatedLRU: one cache_salt's bucket, its keys in LRU order (the
 * newest first), what they weigh, and its quota (0: none). */
typedef struct lct__psalt {
    uint64_t salt;
    lct__plist order;
    uint32_t n;
    uint64_t used;
    double limit;
} lct__psalt;

struct lct_policy {
    lct_policy_kind kind;
    const lct__policy_ops *ops;
    uint64_t capacity, used; /* used: what the keys held (not ghosts) weigh */
    lct__u64map map;         /* key -> slot + 1, ghosts included */
    uint32_t *dense; /* instead of map, when keys are numbered 0..n-1
                        (lct_policy_run): key -> slot + 1, 0 none */
    lct__pslot *slots;
    uint32_t nslots, room, free_slot;
    lct__plist queue; /* FIFO, LRU, CLOCK, SIEVE: first is the newest */
    uint32_t hand;    /* SIEVE: where the next eviction looks first */
    lct__pbucket *buckets;
    uint32_t nbuckets, bucket_room, free_bucket;
    lct__plist by_freq; /* LFU: buckets, the lowest count first */
    uint32_t *heap;     /* Belady: slots, from heap[1] */
    uint32_t heap_n, heap_room;
    int64_t *next_use; /* Belady: each slot's key's next use */
    uint32_t next_use_room;
    /* ARC: T1, T2, B1, B2; S3-FIFO: small, main, ghost (lists[where])
     * and what each weighs */
    lct__plist lists[4];
    uint64_t list_bytes[4];
    /* this reference was found in a ghost list (reset at each) */
    bool ghost_hit;
    /* ARC: the target size of T1, and which ghost list the last key
     * found in the map was in (libCacheSim keeps these two flags from
     * reference to reference, and its REPLACE reads the second) */
    double arc_p;
    bool arc_in_b1, arc_in_b2;
    /* S3-FIFO: the small queue's, main's and the ghost queue's sizes */
    uint64_t small_size, main_size, ghost_size;
    /* LMCache's L1 policies (policy_mp.c): the call's references not
     * yet applied (key, weight, whether found held), what a list holds
     * in keys, the victims of a cycle, the pressure, ARC's capacity in
     * keys, the keys refused for want of room */
    uint64_t *call_key, *call_bytes;
    bool *call_found;
    uint32_t ncall, call_room;
    uint32_t list_n[4];
    uint32_t *victims;
    uint32_t victim_room;
    double watermark, ratio;
    uint64_t arc_capacity, refused;
    /* IsolatedLRU (policy_isolated.c): the bucket of the reference being
     * given (lct_policy_get_salted), each buffered reference's, and the
     * buckets (a slot's `bucket` is its index there) */
    uint64_t salt;
    uint64_t *call_salt;
    lct__psalt *salts;
    uint32_t nsalts, salt_room;
    lct__u64map salt_at; /* bucket id -> index + 1 */
    uint64_t inserted; /* keys inserted: held now, or evicted since */
    bool broken; /* memory ran out mid-update: every later call fails */
};

/* Key's slot + 1, or 0 when the cache neither holds nor remembers it. */
static inline uint32_t lct__policy_lookup(const lct_policy *p, uint64_t key)
{
    if (p->dense)
        return p->dense[key];
    const lct__u64map_entry *e = lct__u64map_find(&p->map, key);
    return e ? (uint32_t)e->value : 0;
}

/* Slots at lists (where) from this one on are ghosts: remembered, not
 * held (ARC's B1 and B2, S3-FIFO's ghost queue). */
#define LCT__PSLOT_GHOSTS 2

/* Whether the cache holds key (not only remembers it). */
static inline bool lct__policy_holds(const lct_policy *p, uint64_t key)
{
    uint32_t at = lct__policy_lookup(p, key);
    return at && p->slots[at - 1].where < LCT__PSLOT_GHOSTS;
}

/* The buffered call applied as LMCache's tiers apply one, its references
 * taken last to first when backward: each found key still held
 * touched(p, its slot), then each missed one created(p, its place in the
 * call), all of them or, when what they weigh does not fit the capacity,
 * none (counted refused); the buffer emptied.  False when out of
 * memory.  Inline, so that each policy's steps are called directly: as a
 * call through pointers it cost 3% more instructions. */
static inline bool lct__policy_apply_call(lct_policy *p, bool backward,
                            void (*touched)(lct_policy *, uint32_t),
                            bool (*created)(lct_policy *, uint32_t))
{
    uint32_t n = p->ncall;
    uint64_t new_bytes = 0;
    for (uint32_t k = 0; k < n; k++) {
        uint32_t j = backward ? n - 1 - k : k;
        if (p->call_found[j]) {
            uint32_t at = lct__policy_lookup(p, p->call_key[j]);
            if (at && p->slots[at - 1].where < LCT__PSLOT_GHOSTS)
                touched(p, at - 1);
        } else {
            new_bytes += p->call_bytes[j];
        }
    }
    bool ok = true;
    if (new_bytes > p->capacity || p->used + new_bytes > p->capacity) {
        for (uint32_t k = 0; k < n; k++)
            p->refused += !p->call_found[k];
    } else {
        for (uint32_t k = 0; ok && k < n; k++) {
            uint32_t j = backward ? n - 1 - k : k;
            ok = p->call_found[j] || created(p, j);
        }
    }
    p->ncall = 0;
    return ok;
}

/* LMCache's L1 policies under the watermark and ratio asked, each 0
 * for its default; any other policy unchanged. */
static inline void lct__policy_pressure(lct_policy *p, double watermark,
                                        double ratio)
{
    if (lct_policy_by_call(p->kind) && (watermark > 0 || ratio > 0))
        lct_policy_set_pressure(p, watermark > 0 ? watermark : 0.8,
                                ratio > 0 ? ratio : 0.2);
}

/* A new capacity: the keys held past it are evicted as the policy
 * evicts; false when out of memory. */
bool lct__policy_set_capacity(lct_policy *p, uint64_t capacity);

/* One policy's rules, as libCacheSim's implementation of it has them. */
struct lct__policy_ops {
    /* Set up what the policy keeps beyond the common fields (again at a
     * new capacity, with resize: only what derives from the capacity). */
    bool (*init)(lct_policy *p);
    void (*resize)(lct_policy *p); /* NULL: nothing derives from it */
    /* Key i found in the map: 1 a hit (the policy updated), 0 a miss
     * after all (a ghost, taken out of the map), <0 an error. */
    int (*found)(lct_policy *p, uint32_t i, int64_t next_use);
    /* Whether a missed key of this weight is inserted at all (NULL: when
     * it weighs no more than the capacity, libCacheSim's default). */
    bool (*can_insert)(const lct_policy *p, uint64_t bytes);
    /* One eviction (libCacheSim's evict); false when out of memory. */
    bool (*evict)(lct_policy *p, uint64_t incoming);
    /* Insert key: 1 inserted, 0 declined, <0 an error. */
    int (*insert)(lct_policy *p, uint64_t key, uint64_t bytes,
                  int64_t next_use);
    /* LMCache's L1 policies, which act on a call at a time: a reference
     * (1 found held, 0 not) and the call's end (LCT_OK, or <0); NULL for
     * the per-reference policies above. */
    int (*get)(lct_policy *p, uint64_t key, uint64_t bytes);
    int (*end_call)(lct_policy *p);
    /* A numbered stream through the cache with the steps above called
     * directly (lct__policy_stream, policy_stream_internal.h); NULL:
     * lct__policy_stream through these pointers. */
    void (*stream)(lct_policy *p, const struct lct__pstream *s,
                   lct_policy_point *pt);
};

extern const lct__policy_ops lct__policy_fifo_ops, lct__policy_lru_ops,
    lct__policy_clock_ops, lct__policy_sieve_ops, lct__policy_mru_ops;
extern const lct__policy_ops lct__policy_lfu_ops;
extern const lct__policy_ops lct__policy_belady_ops;
extern const lct__policy_ops lct__policy_arc_ops;
extern const lct__policy_ops lct__policy_s3fifo_ops;
extern const lct__policy_ops lct__policy_mp_ops; /* LMCACHE_LRU, _ARC,
                                                    _S3FIFO */
extern const lct__policy_ops lct__policy_isolated_ops;

/* A by-call policy's reference buffered until the call's end (its key,
 * weight, bucket, and whether it was found held): 1 held, 0 not,
 * LCT_ERR_NOMEM (policy_mp.c). */
int lct__policy_call_get(lct_policy *p, uint64_t key, uint64_t bytes);


/* The array at *array (of *room elements of size bytes) grown to twice
 * its room, or `first` elements when it has none, as lct__grow_zeroed
 * takes its array; false (unchanged) when memory ran out or the count
 * would pass the slot numbers' range. */
static inline bool lct__policy_grow(void *array, uint32_t *room, size_t size,
                                    uint32_t first)
{
    void **a = array;
    if (*room > LCT__POLICY_NIL / 2)
        return false;
    uint32_t want = *room ? *room * 2 : first;
    void *g = reallocarray(*a, want, size);
    if (!g)
        return false;
    *a = g;
    *room = want;
    return true;
}

/* A slot for key, in the map (LCT__POLICY_NIL when out of memory); its
 * lists are the caller's to set.  Inline with lct__policy_slot_drop: a
 * policy's stream adds and drops a slot a miss. */
static inline uint32_t lct__policy_slot_add(lct_policy *p, uint64_t key,
                                            uint64_t bytes)
{
    uint32_t i;
    if (p->free_slot != LCT__POLICY_NIL) {
        i = p->free_slot;
        p->free_slot = p->slots[i].next;
    } else {
        if (p->nslots == p->room &&
            !lct__policy_grow(&p->slots, &p->room, sizeof *p->slots, 64))
            return LCT__POLICY_NIL;
        i = p->nslots++;
    }
    if (p->dense) {
        p->dense[key] = i + 1;
    } else {
        bool added;
        lct__u64map_entry *e = lct__u64map_get(&p->map, key, &added);
        if (!e) {
            p->slots[i].next = p->free_slot;
            p->free_slot = i;
            return LCT__POLICY_NIL;
        }
        e->value = (uint64_t)i + 1;
    }
    p->slots[i] = (lct__pslot){.key = key, .bytes = bytes,
                               .prev = LCT__POLICY_NIL,
                               .next = LCT__POLICY_NIL,
                               .bucket = LCT__POLICY_NIL};
    return i;
}

/* Slot i out of the map and freed (its lists are the caller's to leave
 * first); what is held does not change. */
static inline void lct__policy_slot_drop(lct_policy *p, uint32_t i)
{
    if (p->dense) {
        p->dense[p->slots[i].key] = 0;
    } else {
        lct__u64map_entry *e = lct__u64map_find(&p->map, p->slots[i].key);
        if (e)
            lct__u64map_remove(&p->map, e);
    }
    p->slots[i].next = p->free_slot;
    p->free_slot = i;
}

/* MARK: lists of slots (or buckets), linked by index */

#define LCT__LIST_OPS(prefix, type)                                        \
    static inline void prefix##_unlink(type *a, lct__plist *l, uint32_t i) \
    {                                                                      \
        if (a[i].prev != LCT__POLICY_NIL)                                  \
            a[a[i].prev].next = a[i].next;                                 \
        else                                                               \
            l->first = a[i].next;                                          \
        if (a[i].next != LCT__POLICY_NIL)                                  \
            a[a[i].next].prev = a[i].prev;                                 \
        else                                                               \
            l->last = a[i].prev;                                           \
    }                                                                      \
    static inline void prefix##_push_first(type *a, lct__plist *l,         \
                                           uint32_t i)                     \
    {                                                                      \
        a[i].prev = LCT__POLICY_NIL;                                       \
        a[i].next = l->first;                                              \
        if (l->first != LCT__POLICY_NIL)                                   \
            a[l->first].prev = i;                                          \
        l->first = i;                                                      \
        if (l->last == LCT__POLICY_NIL)                                    \
            l->last = i;                                                   \
    }                                                                      \
    static inline void prefix##_push_last(type *a, lct__plist *l,          \
                                          uint32_t i)                      \
    {                                                                      \
        a[i].next = LCT__POLICY_NIL;                                       \
        a[i].prev = l->last;                                               \
        if (l->last != LCT__POLICY_NIL)                                    \
            a[l->last].next = i;                                           \
        l->last = i;                                                       \
        if (l->first == LCT__POLICY_NIL)                                   \
            l->first = i;                                                  \
    }                                                                      \
    /* i after `after`, which is in l */                                   \
    static inline void prefix##_insert_after(type *a, lct__plist *l,       \
                                             uint32_t after, uint32_t i)   \
    {                                                                      \
        a[i].prev = after;                                                 \
        a[i].next = a[after].next;                                         \
        if (a[after].next != LCT__POLICY_NIL)                              \
            a[a[after].next].prev = i;                                     \
        else                                                               \
            l->last = i;                                                   \
        a[after].next = i;                                                 \
    }

LCT__LIST_OPS(lct__slot, lct__pslot)
LCT__LIST_OPS(lct__bucket, lct__pbucket)

/* ARC's and S3-FIFO's lists (lists[where]), each with what it weighs:
 * slot i out of its list, and into list `to` at its newest end. */
static inline void lct__policy_list_leave(lct_policy *p, uint32_t i)
{
    lct__pslot *s = &p->slots[i];
    lct__slot_unlink(p->slots, &p->lists[s->where], i);
    p->list_bytes[s->where] -= s->bytes;
}

static inline void lct__policy_list_enter(lct_policy *p, uint32_t i, int to)
{
    lct__pslot *s = &p->slots[i];
    s->where = (uint8_t)to;
    lct__slot_push_first(p->slots, &p->lists[to], i);
    p->list_bytes[to] += s->bytes;
}

#endif
