/*
 * policy.c - one cache of one capacity under a named eviction policy, fed
 * a key at a time (lct_policy): FIFO, LRU, CLOCK, SIEVE, LFU and Belady,
 * each as libCacheSim's implementation of that name behaves, tie for tie,
 * so that a hit count can be checked against its cachesim.
 *
 * What libCacheSim does on every request (cache_get_base): a key in the
 * cache is a hit and is updated as its policy says (its size is not
 * changed, whatever the request says); a missed key heavier than the
 * whole cache is not inserted; otherwise the policy evicts until the key
 * fits, then inserts it.  The policies' own rules are at their functions.
 *
 * Memory is what the cache holds: a slot per key held (freed slots are
 * reused), a map from key to slot, and for LFU a bucket per frequency
 * held.  Keys evicted are forgotten.
 */
#include "lct_cache.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/error_internal.h"
#include "base/u64map_internal.h"

#define NIL UINT32_MAX

typedef struct pslot {
    uint64_t key, bytes;
    uint32_t prev, next; /* prev: toward the list's first (newest) end */
    uint32_t bucket;     /* LFU: its frequency's bucket */
    uint32_t heap_at;    /* Belady: its place in the heap (from 1) */
    uint64_t freq;       /* CLOCK, SIEVE: the bit; LFU: the count */
    int64_t next_use;    /* Belady */
} pslot;

typedef struct plist {
    uint32_t first, last;
} plist;

/* LFU: the keys of one frequency, in the order they reached it; the
 * buckets in a list by frequency, the lowest first. */
typedef struct pbucket {
    uint64_t freq;
    uint32_t prev, next;
    plist keys;
} pbucket;

struct lct_policy {
    lct_policy_kind kind;
    uint64_t capacity, used;
    lct__u64map map; /* key -> slot + 1 */
    pslot *slots;
    uint32_t nslots, room, free_slot;
    plist queue;   /* FIFO, LRU, CLOCK, SIEVE: first is the newest */
    uint32_t hand; /* SIEVE: where the next eviction looks first */
    pbucket *buckets;
    uint32_t nbuckets, bucket_room, free_bucket;
    plist by_freq; /* LFU: buckets, the lowest frequency first */
    uint32_t *heap; /* Belady: slots, from heap[1] */
    uint32_t heap_n, heap_room;
    bool broken; /* memory ran out mid-update: every later call fails */
};

static const struct {
    const char *name;
    lct_policy_kind kind;
} policy_names[] = {
    {"fifo", LCT_POLICY_FIFO},   {"lru", LCT_POLICY_LRU},
    {"clock", LCT_POLICY_CLOCK}, {"sieve", LCT_POLICY_SIEVE},
    {"lfu", LCT_POLICY_LFU},     {"belady", LCT_POLICY_BELADY},
};
#define NPOLICIES (sizeof policy_names / sizeof policy_names[0])

const char *lct_policy_name(lct_policy_kind kind)
{
    for (size_t i = 0; i < NPOLICIES; i++)
        if (policy_names[i].kind == kind)
            return policy_names[i].name;
    return NULL;
}

lct_status lct_policy_find(const char *name, lct_policy_kind *kind)
{
    for (size_t i = 0; name && i < NPOLICIES; i++) {
        if (strcasecmp(name, policy_names[i].name) == 0) {
            *kind = policy_names[i].kind;
            return LCT_OK;
        }
    }
    return LCT_ERR_INVALID;
}

const char *lct_policy_names(void)
{
    return "fifo, lru, clock, sieve, lfu, belady";
}

/* MARK: lists of slots (or of buckets), linked by index */

#define LIST_OPS(prefix, type)                                             \
    static void prefix##_unlink(type *a, plist *l, uint32_t i)             \
    {                                                                      \
        if (a[i].prev != NIL)                                              \
            a[a[i].prev].next = a[i].next;                                 \
        else                                                               \
            l->first = a[i].next;                                          \
        if (a[i].next != NIL)                                              \
            a[a[i].next].prev = a[i].prev;                                 \
        else                                                               \
            l->last = a[i].prev;                                           \
    }                                                                      \
    static __attribute__((unused)) void prefix##_push_first(type *a, plist *l, uint32_t i)         \
    {                                                                      \
        a[i].prev = NIL;                                                   \
        a[i].next = l->first;                                              \
        if (l->first != NIL)                                               \
            a[l->first].prev = i;                                          \
        l->first = i;                                                      \
        if (l->last == NIL)                                                \
            l->last = i;                                                   \
    }                                                                      \
    static __attribute__((unused)) void prefix##_push_last(type *a, plist *l, uint32_t i)          \
    {                                                                      \
        a[i].next = NIL;                                                   \
        a[i].prev = l->last;                                               \
        if (l->last != NIL)                                                \
            a[l->last].next = i;                                           \
        l->last = i;                                                       \
        if (l->first == NIL)                                               \
            l->first = i;                                                  \
    }                                                                      \
    /* i after `after` (which is in l) */                                  \
    static __attribute__((unused)) void prefix##_insert_after(type *a, plist *l, uint32_t after,   \
                                      uint32_t i)                          \
    {                                                                      \
        a[i].prev = after;                                                 \
        a[i].next = a[after].next;                                         \
        if (a[after].next != NIL)                                          \
            a[a[after].next].prev = i;                                     \
        else                                                               \
            l->last = i;                                                   \
        a[after].next = i;                                                 \
    }

LIST_OPS(slot, pslot)
LIST_OPS(bucket, pbucket)

static const plist empty_list = {NIL, NIL};

/* MARK: slots and the key map */

static uint32_t slot_new(lct_policy *p, uint64_t key, uint64_t bytes)
{
    uint32_t i;
    if (p->free_slot != NIL) {
        i = p->free_slot;
        p->free_slot = p->slots[i].next;
    } else {
        if (p->nslots == p->room) {
            if (p->room > NIL / 2)
                return NIL;
            uint32_t room = p->room ? p->room * 2 : 64;
            pslot *g = reallocarray(p->slots, room, sizeof *g);
            if (!g)
                return NIL;
            p->slots = g, p->room = room;
        }
        i = p->nslots++;
    }
    p->slots[i] = (pslot){.key = key, .bytes = bytes, .prev = NIL,
                          .next = NIL, .bucket = NIL};
    return i;
}

static void slot_forget(lct_policy *p, uint32_t i)
{
    lct__u64map_entry *e = lct__u64map_find(&p->map, p->slots[i].key);
    if (e)
        lct__u64map_remove(&p->map, e);
    p->used -= p->slots[i].bytes;
    p->slots[i].next = p->free_slot;
    p->free_slot = i;
}

/* MARK: LFU's buckets */

static uint32_t bucket_new(lct_policy *p, uint64_t freq)
{
    uint32_t b;
    if (p->free_bucket != NIL) {
        b = p->free_bucket;
        p->free_bucket = p->buckets[b].next;
    } else {
        if (p->nbuckets == p->bucket_room) {
            uint32_t room = p->bucket_room ? p->bucket_room * 2 : 16;
            pbucket *g = reallocarray(p->buckets, room, sizeof *g);
            if (!g)
                return NIL;
            p->buckets = g, p->bucket_room = room;
        }
        b = p->nbuckets++;
    }
    p->buckets[b] = (pbucket){.freq = freq, .prev = NIL, .next = NIL,
                              .keys = empty_list};
    return b;
}

/* Slot i out of its bucket; an emptied bucket goes. */
static void bucket_leave(lct_policy *p, uint32_t i)
{
    uint32_t b = p->slots[i].bucket;
    slot_unlink(p->slots, &p->buckets[b].keys, i);
    if (p->buckets[b].keys.first == NIL) {
        bucket_unlink(p->buckets, &p->by_freq, b);
        p->buckets[b].next = p->free_bucket;
        p->free_bucket = b;
    }
}

/* libCacheSim's LFU: a key enters at count 1; a hit adds 1 and puts it
 * last among the keys of its new count; the first key of the lowest
 * count is evicted (of those, the one that reached it first). */
static bool lfu_enter(lct_policy *p, uint32_t i, uint64_t freq,
                      uint32_t below)
{
    uint32_t b = below == NIL ? p->by_freq.first : p->buckets[below].next;
    if (b == NIL || p->buckets[b].freq != freq) {
        uint32_t nb = bucket_new(p, freq);
        if (nb == NIL)
            return false;
        if (below == NIL)
            bucket_push_first(p->buckets, &p->by_freq, nb);
        else
            bucket_insert_after(p->buckets, &p->by_freq, below, nb);
        b = nb;
    }
    p->slots[i].freq = freq;
    p->slots[i].bucket = b;
    slot_push_last(p->slots, &p->buckets[b].keys, i);
    return true;
}

static bool lfu_hit(lct_policy *p, uint32_t i)
{
    uint32_t b = p->slots[i].bucket;
    uint64_t freq = p->slots[i].freq + 1;
    /* the bucket below the new count: b itself, unless it empties */
    uint32_t below = p->buckets[b].keys.first == i &&
                             p->buckets[b].keys.last == i
                         ? p->buckets[b].prev
                         : b;
    bucket_leave(p, i);
    return lfu_enter(p, i, freq, below);
}

/* MARK: Belady's heap, libCacheSim's pqueue step for step */

/* The farthest next use on top; a tie is left where the heap's moves
 * leave it, as pqueue's (its compare is a strict <), which decides which
 * of two never-used-again keys goes first. */
static bool heap_before(const lct_policy *p, uint32_t a, uint32_t b)
{
    return p->slots[a].next_use < p->slots[b].next_use;
}

static void heap_put(lct_policy *p, uint32_t at, uint32_t slot)
{
    p->heap[at] = slot;
    p->slots[slot].heap_at = at;
}

static void heap_bubble_up(lct_policy *p, uint32_t at)
{
    uint32_t moving = p->heap[at];
    while (at > 1 && heap_before(p, p->heap[at >> 1], moving)) {
        heap_put(p, at, p->heap[at >> 1]);
        at >>= 1;
    }
    heap_put(p, at, moving);
}

static uint32_t heap_max_child(const lct_policy *p, uint32_t at)
{
    uint32_t child = at << 1;
    if (child > p->heap_n)
        return 0;
    if (child + 1 <= p->heap_n &&
        heap_before(p, p->heap[child], p->heap[child + 1]))
        child++;
    return child;
}

static void heap_percolate_down(lct_policy *p, uint32_t at)
{
    uint32_t moving = p->heap[at], child;
    while ((child = heap_max_child(p, at)) &&
           heap_before(p, moving, p->heap[child])) {
        heap_put(p, at, p->heap[child]);
        at = child;
    }
    heap_put(p, at, moving);
}

static bool heap_insert(lct_policy *p, uint32_t slot)
{
    if (p->heap_n + 2 > p->heap_room) {
        uint32_t room = p->heap_room ? p->heap_room * 2 : 64;
        uint32_t *g = reallocarray(p->heap, room, sizeof *g);
        if (!g)
            return false;
        p->heap = g, p->heap_room = room;
    }
    heap_put(p, ++p->heap_n, slot);
    heap_bubble_up(p, p->heap_n);
    return true;
}

/* pqueue_change_priority */
static void heap_change(lct_policy *p, uint32_t slot, int64_t next_use)
{
    int64_t old = p->slots[slot].next_use;
    p->slots[slot].next_use = next_use;
    if (old < next_use)
        heap_bubble_up(p, p->slots[slot].heap_at);
    else
        heap_percolate_down(p, p->slots[slot].heap_at);
}

static uint32_t heap_pop(lct_policy *p)
{
    uint32_t top = p->heap[1];
    p->heap[1] = p->heap[p->heap_n--];
    if (p->heap_n >= 1) {
        p->slots[p->heap[1]].heap_at = 1;
        heap_percolate_down(p, 1);
    }
    return top;
}

/* MARK: the policies' rules */

/* On a hit. */
static bool policy_hit(lct_policy *p, uint32_t i, int64_t next_use)
{
    pslot *s = &p->slots[i];
    switch (p->kind) {
    case LCT_POLICY_LRU: /* to the newest end */
        slot_unlink(p->slots, &p->queue, i);
        slot_push_first(p->slots, &p->queue, i);
        return true;
    case LCT_POLICY_CLOCK: /* its bit set (a 1-bit counter) */
    case LCT_POLICY_SIEVE:
        s->freq = 1;
        return true;
    case LCT_POLICY_LFU:
        return lfu_hit(p, i);
    case LCT_POLICY_BELADY:
        heap_change(p, i, next_use);
        return true;
    case LCT_POLICY_FIFO:
    default:
        return true;
    }
}

/* The slot to evict, out of the policy's structures. */
static uint32_t policy_victim(lct_policy *p)
{
    uint32_t v;
    switch (p->kind) {
    case LCT_POLICY_CLOCK:
        /* the oldest with its bit set goes back to the newest end, its
         * bit cleared, until the oldest has none */
        while (p->slots[v = p->queue.last].freq >= 1) {
            p->slots[v].freq--;
            slot_unlink(p->slots, &p->queue, v);
            slot_push_first(p->slots, &p->queue, v);
        }
        break;
    case LCT_POLICY_SIEVE:
        /* the hand walks from where it stopped (the oldest at first)
         * toward the newest, clearing bits, round to the oldest again;
         * it stops at the first key without one, which goes, and waits
         * at the key newer than it */
        v = p->hand == NIL ? p->queue.last : p->hand;
        while (p->slots[v].freq > 0) {
            p->slots[v].freq--;
            v = p->slots[v].prev == NIL ? p->queue.last : p->slots[v].prev;
        }
        p->hand = p->slots[v].prev;
        break;
    case LCT_POLICY_LFU:
        v = p->buckets[p->by_freq.first].keys.first;
        bucket_leave(p, v);
        return v;
    case LCT_POLICY_BELADY:
        return heap_pop(p);
    case LCT_POLICY_FIFO:
    case LCT_POLICY_LRU:
    default:
        v = p->queue.last;
        break;
    }
    slot_unlink(p->slots, &p->queue, v);
    return v;
}

/* A new key in. */
static bool policy_insert(lct_policy *p, uint32_t i, int64_t next_use)
{
    switch (p->kind) {
    case LCT_POLICY_LFU:
        return lfu_enter(p, i, 1, NIL);
    case LCT_POLICY_BELADY:
        p->slots[i].next_use = next_use;
        return heap_insert(p, i);
    default: /* the newest end, its bit clear */
        slot_push_first(p->slots, &p->queue, i);
        return true;
    }
}

/* MARK: the cache */

lct_status lct_policy_new(lct_policy_kind kind, uint64_t capacity,
                          lct_policy **out, lct_error *err)
{
    if (out)
        *out = NULL;
    if (!out || !lct_policy_name(kind) || capacity == 0)
        return lct__fail(err, LCT_ERR_INVALID, EINVAL, 0,
                         "lct_policy_new: invalid argument");
    lct_policy *p = calloc(1, sizeof *p);
    if (!p)
        return lct__fail(err, LCT_ERR_NOMEM, ENOMEM, 0,
                         "lct_policy_new: out of memory");
    p->kind = kind;
    p->capacity = capacity;
    p->free_slot = p->free_bucket = p->hand = NIL;
    p->queue = p->by_freq = empty_list;
    *out = p;
    return LCT_OK;
}

int lct_policy_get(lct_policy *p, uint64_t key, uint64_t bytes,
                   int64_t next_use)
{
    if (!p)
        return LCT_ERR_INVALID;
    if (p->broken)
        return LCT_ERR_NOMEM;
    lct__u64map_entry *e = lct__u64map_find(&p->map, key);
    if (e) { /* a hit */
        if (policy_hit(p, (uint32_t)(e->value - 1), next_use))
            return 1;
        p->broken = true;
        return LCT_ERR_NOMEM;
    }
    if (bytes > p->capacity) /* never fits: not inserted */
        return 0;
    while (p->used + bytes > p->capacity)
        slot_forget(p, policy_victim(p));
    /* added only now: the map takes a value of 0 for a free place, and
     * forgetting a key closes its probe chain up */
    bool added;
    uint32_t i = slot_new(p, key, bytes);
    if (i == NIL || !(e = lct__u64map_get(&p->map, key, &added)) ||
        !policy_insert(p, i, next_use)) {
        p->broken = true;
        return LCT_ERR_NOMEM;
    }
    e->value = (uint64_t)i + 1;
    p->used += bytes;
    return 0;
}

uint64_t lct_policy_used(const lct_policy *p)
{
    return p ? p->used : 0;
}

void lct_policy_free(lct_policy *p)
{
    if (!p)
        return;
    lct__u64map_free(&p->map);
    free(p->slots);
    free(p->buckets);
    free(p->heap);
    free(p);
}
