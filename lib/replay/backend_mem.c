/*
 * backend_mem.c - "mem:CAPACITY": an LRU store in memory that holds each
 * key's bytes, bounded by a key count or by bytes.  A store or a lookup
 * that finds its key makes it the most recent; room is made by dropping
 * the least recent.  Under one mutex: it stands for a cache, not for a
 * scalable store.  With a key count it is the cache `lct mrc
 * --every-reference` models (test_replay holds them equal).
 *
 * It never holds more than a budget, 4/5 of the memory available at
 * open: a key count says nothing of bytes, and 1000 keys of 32 MiB once
 * grew past the machine's memory until the kernel killed the replay with
 * no report.  Over the budget a store fails with the arithmetic, so the
 * run stops on --max-errors and still writes its reports.
 *
 * A store copies into a buffer the store already owns when it can: an
 * evicted or replaced key's buffer waits among a few spares for the next
 * store of a similar size, so a full store's stores run at memcpy speed
 * rather than page-faulting a fresh allocation each (bench/replay part 4).
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "base/error_internal.h"
#include "lct_replay.h"

typedef struct mem_node {
    struct mem_node *hnext;       /* the hash chain */
    struct mem_node *prev, *next; /* recency: head is the most recent */
    uint64_t id;
    size_t len, cap; /* bytes held; bytes the buffer has room for */
    unsigned char data[];
} mem_node;

/* Buffers of dropped keys kept for reuse, at most: one per worker that
 * may store at once would do; a few more ride out mixed sizes. */
#define MEM_SPARES 8

typedef struct mem_store {
    pthread_mutex_t lock;
    bool by_bytes;
    uint64_t capacity; /* keys, or bytes */
    uint64_t budget;   /* bytes it may hold, whatever the capacity */
    uint64_t available; /* the memory the budget was taken from */
    uint64_t keys, bytes;
    mem_node **buckets;
    size_t nbuckets; /* a power of two */
    mem_node *head, *tail;
    mem_node *spare[MEM_SPARES];
    unsigned nspare;
} mem_store;

static size_t slot(const mem_store *m, uint64_t id)
{
    id ^= id >> 33;
    id *= 0xff51afd7ed558ccdu;
    return (size_t)(id ^ (id >> 33)) & (m->nbuckets - 1);
}

static mem_node **find(mem_store *m, uint64_t id)
{
    mem_node **p = &m->buckets[slot(m, id)];
    while (*p && (*p)->id != id)
        p = &(*p)->hnext;
    return p;
}

static void unlink_lru(mem_store *m, mem_node *n)
{
    if (n->prev)
        n->prev->next = n->next;
    else
        m->head = n->next;
    if (n->next)
        n->next->prev = n->prev;
    else
        m->tail = n->prev;
    n->prev = n->next = NULL;
}

static void push_front(mem_store *m, mem_node *n)
{
    n->prev = NULL;
    n->next = m->head;
    if (m->head)
        m->head->prev = n;
    m->head = n;
    if (!m->tail)
        m->tail = n;
}

/* Take n out of the store; its buffer becomes a spare, or joins
 * *to_free (freed after the lock is let go). */
static void drop(mem_store *m, mem_node *n, mem_node **to_free)
{
    mem_node **p = find(m, n->id);
    *p = n->hnext;
    unlink_lru(m, n);
    m->keys--;
    m->bytes -= n->len;
    if (m->nspare < MEM_SPARES) {
        m->spare[m->nspare++] = n;
    } else {
        n->hnext = *to_free;
        *to_free = n;
    }
}

/* A spare with room for len bytes and not over twice that (a small value
 * should not pin a large buffer); NULL if none. */
static mem_node *take_spare(mem_store *m, size_t len)
{
    for (unsigned i = 0; i < m->nspare; i++) {
        mem_node *n = m->spare[i];
        if (n->cap >= len && n->cap / 2 <= len) {
            m->spare[i] = m->spare[--m->nspare];
            return n;
        }
    }
    return NULL;
}

static void free_list(mem_node *n)
{
    for (mem_node *next; n; n = next) {
        next = n->hnext;
        free(n);
    }
}

static bool grow(mem_store *m)
{
    size_t n = m->nbuckets * 2;
    mem_node **b = calloc(n, sizeof *b);
    if (!b)
        return false;
    for (size_t i = 0; i < m->nbuckets; i++)
        for (mem_node *e = m->buckets[i], *next; e; e = next) {
            next = e->hnext;
            size_t s = slot(&(mem_store){.nbuckets = n}, e->id);
            e->hnext = b[s];
            b[s] = e;
        }
    free(m->buckets);
    m->buckets = b;
    m->nbuckets = n;
    return true;
}

/* "1000" or "1000keys": keys; "64M": bytes (B, K, M, G, T: powers of 1024). */
static bool parse_capacity(const char *arg, mem_store *m)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(arg, &end, 10);
    if (end == arg || errno || *arg == '-')
        return false;
    static const char units[] = "BKMGT";
    const char *u = *end ? strchr(units, *end) : NULL;
    if (*end == '\0' || strcmp(end, "keys") == 0) {
        m->by_bytes = false;
    } else if (u && end[1] == '\0') {
        unsigned shift = 10u * (unsigned)(u - units);
        if (shift && v > (UINT64_MAX >> shift))
            return false;
        v <<= shift;
        m->by_bytes = true;
    } else {
        return false;
    }
    m->capacity = v;
    return v > 0;
}

/* Bytes this process could still allocate: the kernel's MemAvailable
 * (free memory plus what it can reclaim), or the address-space limit if
 * one is set and lower. */
static uint64_t memory_available(void)
{
    uint64_t avail = 0;
    FILE *f = fopen("/proc/meminfo", "re");
    if (f) {
        char line[128];
        unsigned long long kb;
        while (fgets(line, sizeof line, f))
            if (sscanf(line, "MemAvailable: %llu kB", &kb) == 1) {
                avail = (uint64_t)kb * 1024u;
                break;
            }
        fclose(f);
    }
    if (!avail) {
        long pages = sysconf(_SC_AVPHYS_PAGES), size = sysconf(_SC_PAGESIZE);
        avail = pages > 0 && size > 0 ? (uint64_t)pages * (uint64_t)size
                                      : UINT64_MAX;
    }
    struct rlimit rl;
    if (getrlimit(RLIMIT_AS, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
        (uint64_t)rl.rlim_cur < avail)
        avail = (uint64_t)rl.rlim_cur;
    return avail;
}

static double gib(uint64_t bytes)
{
    return (double)bytes / (1024.0 * 1024.0 * 1024.0);
}

static lct_status mem_open(const char *arg, const lct_backend_config *cfg,
                           void **state, lct_error *err)
{
    (void)cfg;
    mem_store *m = calloc(1, sizeof *m);
    if (!m)
        return lct__fail(err, LCT_ERR_NOMEM, ENOMEM, 0, "out of memory");
    if (!arg || !parse_capacity(arg, m)) {
        free(m);
        return lct__fail(err, LCT_ERR_INVALID, 0, 0,
                         "mem:CAPACITY wants a key count (1000, 1000keys) "
                         "or bytes (64M, 2G), got '%s'", arg ? arg : "");
    }
    m->available = memory_available();
    m->budget = m->available / 5 * 4;
    /* What the capacity holds at most, when that is known at open: every
     * value's weight, or else the trace's first key's */
    uint64_t each = !cfg                ? 0
                    : cfg->value_bytes ? cfg->value_bytes
                                       : cfg->first_value_bytes;
    const char *whose = cfg && !cfg->value_bytes ? " (the trace's first key)"
                                                 : "";
    uint64_t need = m->capacity;
    if (!m->by_bytes)
        need = each == 0                        ? 0
               : m->capacity > UINT64_MAX / each ? UINT64_MAX
                                                 : m->capacity * each;
    if (need > m->budget) {
        char what[96];
        if (m->by_bytes)
            snprintf(what, sizeof what, "%.1f GiB", gib(need));
        else
            snprintf(what, sizeof what,
                     "%" PRIu64 " keys x %" PRIu64 " bytes%s = %.1f GiB",
                     m->capacity, each, whose, gib(need));
        char keys[48] = "";
        if (!m->by_bytes)
            snprintf(keys, sizeof keys, "mem:%" PRIu64 " (keys), ",
                     m->budget / each);
        lct__fail(err, LCT_ERR_RANGE, 0, 0,
                  "mem:%s would hold %s, more than the %.1f GiB it may "
                  "(4/5 of the %.1f GiB available): give at most %smem:%" PRIu64
                  "M%s",
                  arg, what, gib(m->budget), gib(m->available), keys,
                  m->budget >> 20, m->by_bytes ? "" : " or a smaller "
                                                     "--value-bytes");
        free(m);
        return LCT_ERR_RANGE;
    }
    m->nbuckets = 1024;
    m->buckets = calloc(m->nbuckets, sizeof *m->buckets);
    if (!m->buckets) {
        free(m);
        return lct__fail(err, LCT_ERR_NOMEM, ENOMEM, 0, "out of memory");
    }
    pthread_mutex_init(&m->lock, NULL);
    *state = m;
    return LCT_OK;
}

static void mem_close(void *state)
{
    mem_store *m = state;
    if (!m)
        return;
    for (mem_node *n = m->head, *next; n; n = next) {
        next = n->next;
        free(n);
    }
    for (unsigned i = 0; i < m->nspare; i++)
        free(m->spare[i]);
    free(m->buckets);
    pthread_mutex_destroy(&m->lock);
    free(m);
}

static bool fits(const mem_store *m, size_t len)
{
    return m->by_bytes ? m->bytes + len <= m->capacity
                       : m->keys + 1 <= m->capacity;
}

static lct_status mem_store_key(void *state, unsigned worker,
                                const lct_backend_key *key, const void *data,
                                size_t len, int *replaced, lct_error *err)
{
    (void)worker;
    mem_store *m = state;
    pthread_mutex_lock(&m->lock);
    mem_node *n = take_spare(m, len);
    pthread_mutex_unlock(&m->lock);
    if (!n) {
        n = malloc(sizeof *n + len);
        if (!n)
            return lct__fail(err, LCT_ERR_SYS, ENOMEM, 0,
                             "mem: no memory for %zu bytes of key %s", len,
                             key->name);
        n->cap = len;
    }
    n->id = key->id;
    n->len = len;
    if (len)
        memcpy(n->data, data, len);
    mem_node *to_free = NULL;
    pthread_mutex_lock(&m->lock);
    mem_node *old = *find(m, key->id);
    *replaced = old != NULL;
    if (old)
        drop(m, old, &to_free);
    /* Larger than the whole store: not kept (nor is anything evicted). */
    if (m->by_bytes && len > m->capacity) {
        pthread_mutex_unlock(&m->lock);
        free(n);
        free_list(to_free);
        return LCT_OK;
    }
    while (!fits(m, len) && m->tail)
        drop(m, m->tail, &to_free);
    if (m->bytes + len > m->budget) {
        uint64_t keys = m->keys, held = m->bytes;
        pthread_mutex_unlock(&m->lock);
        free(n);
        free_list(to_free);
        return lct__fail(err, LCT_ERR_SYS, ENOMEM, 0,
                         "mem: %" PRIu64 " keys hold %.1f GiB of %.1f "
                         "available; %zu bytes more pass 4/5 of it: give "
                         "at most mem:%" PRIu64 "M or --value-bytes",
                         keys, gib(held), gib(m->available), len,
                         m->budget >> 20);
    }
    if (m->keys >= m->nbuckets)
        grow(m); /* a failed grow only lengthens chains */
    mem_node **p = find(m, key->id);
    n->hnext = *p;
    *p = n;
    push_front(m, n);
    m->keys++;
    m->bytes += len;
    pthread_mutex_unlock(&m->lock);
    free_list(to_free);
    return LCT_OK;
}

static lct_status mem_lookup(void *state, unsigned worker,
                             const lct_backend_key *key, bool *present,
                             lct_error *err)
{
    (void)worker, (void)err;
    mem_store *m = state;
    pthread_mutex_lock(&m->lock);
    mem_node *n = *find(m, key->id);
    if (n) {
        unlink_lru(m, n);
        push_front(m, n);
    }
    *present = n != NULL;
    pthread_mutex_unlock(&m->lock);
    return LCT_OK;
}

static lct_status mem_load(void *state, unsigned worker,
                           const lct_backend_key *key, void *buf, size_t cap,
                           size_t *len, bool *present, lct_error *err)
{
    (void)worker, (void)err;
    mem_store *m = state;
    pthread_mutex_lock(&m->lock);
    mem_node *n = *find(m, key->id);
    *present = n != NULL;
    *len = 0;
    if (n) {
        *len = n->len < cap ? n->len : cap;
        if (*len)
            memcpy(buf, n->data, *len);
    }
    pthread_mutex_unlock(&m->lock);
    return LCT_OK;
}

static lct_status mem_remove(void *state, unsigned worker,
                             const lct_backend_key *key, lct_error *err)
{
    (void)worker, (void)err;
    mem_store *m = state;
    mem_node *to_free = NULL;
    pthread_mutex_lock(&m->lock);
    mem_node *n = *find(m, key->id);
    if (n)
        drop(m, n, &to_free);
    pthread_mutex_unlock(&m->lock);
    free_list(to_free);
    return LCT_OK;
}

const lct_backend_ops *lct_backend_mem(void)
{
    static const lct_backend_ops ops = {
        "mem", mem_open, mem_close, mem_store_key,
        mem_lookup, mem_load, mem_remove, NULL};
    return &ops;
}
