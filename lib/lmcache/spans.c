/*
 * spans.c - how long LMCache's paired calls took: a prefetch from
 * submit_prefetch_task through read_prefetched_results' __enter__ and
 * __exit__ to finish_read_prefetched, and a write from reserve_write to
 * finish_write.  Calls pair by their keys, first in first out per key
 * tuple, as LMCache's trace replay pairs its read contexts; a read pairs
 * with the oldest open submit whose keys begin with its own (the leading
 * run a partial hit reads).  Each open call waits in a queue per key
 * tuple (a map from the tuple's id to its oldest entry, entries linked
 * oldest first, in one pool with a free list).
 */
#include "base/error_internal.h"
#include "base/u64map_internal.h"
#include "lmcache/key_digest_internal.h"
#include "lmcache/keys_internal.h"
#include "msgpack/msgpack_internal.h"
#include "lct_cache.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The queues: open submits by their first key, then open read contexts,
 * exited ones awaiting finish_read_prefetched, and open reserves, each
 * by its whole key tuple. */
enum { Q_SUBMIT, Q_READ, Q_EXITED, Q_WRITE, NQUEUES };

typedef struct entry {
    uint32_t next;      /* index + 1 of the next newer entry, 0: none */
    uint32_t tail;      /* the queue's newest (kept in its oldest entry) */
    double t_submit;    /* NAN when no submit paired */
    double t_open;      /* enter, or reserve */
    double t_exit;
    uint64_t off_submit, off_open, off_exit;
    uint32_t nkeys;
    uint64_t *prefix;   /* a submit's prefix ids, nkeys of them */
} entry;

struct lct_spans {
    lct__u64map q[NQUEUES];
    entry *pool;
    size_t cap;
    uint32_t npool, free_head; /* free_head: index + 1, 0: none */
    uint64_t *ids;      /* the record's key ids */
    size_t nids, ids_cap;
    lct_spans_unpaired unpaired;
};

/* Room for n items of size in *p (cap of them): doubled as needed. */
static bool grow(void **p, size_t *cap, size_t n, size_t size)
{
    if (n <= *cap)
        return true;
    size_t want = *cap ? *cap * 2 : 64;
    while (want < n)
        want *= 2;
    void *grown = reallocarray(*p, want, size);
    if (!grown)
        return false;
    *p = grown;
    *cap = want;
    return true;
}

/* The id of a key tuple as it grows one key at a time. */
static uint64_t tuple_step(uint64_t h, uint64_t id)
{
    return lct__u64map_mix(h ^ (id + 0x9e3779b97f4a7c15u)) + 1;
}

lct_status lct_spans_new(lct_spans **out, lct_error *err)
{
    *out = calloc(1, sizeof **out);
    return *out ? LCT_OK
                : lct__fail(err, LCT_ERR_NOMEM, 0, 0, "out of memory");
}

static uint32_t entry_new(lct_spans *s)
{
    if (s->free_head) {
        uint32_t i = s->free_head;
        s->free_head = s->pool[i - 1].next;
        memset(&s->pool[i - 1], 0, sizeof *s->pool);
        return i;
    }
    if (s->npool == UINT32_MAX - 1 ||
        !grow((void **)&s->pool, &s->cap, (size_t)s->npool + 1,
              sizeof *s->pool))
        return 0;
    memset(&s->pool[s->npool], 0, sizeof *s->pool);
    return ++s->npool;
}

static void entry_free(lct_spans *s, uint32_t i)
{
    free(s->pool[i - 1].prefix);
    s->pool[i - 1].prefix = NULL;
    s->pool[i - 1].next = s->free_head;
    s->free_head = i;
}

/* Append entry i to queue q's list for key. */
static bool enqueue(lct_spans *s, int q, uint64_t key, uint32_t i)
{
    bool added;
    lct__u64map_entry *m = lct__u64map_get(&s->q[q], key, &added);
    if (!m)
        return false;
    if (added) {
        m->value = i;
    } else {
        entry *head = &s->pool[m->value - 1];
        s->pool[head->tail - 1].next = i;
    }
    s->pool[m->value - 1].tail = i;
    return true;
}

/* Take entry i (after prev, 0: the oldest) out of the list m holds. */
static void unlink_entry(lct_spans *s, int q, lct__u64map_entry *m,
                         uint32_t prev, uint32_t i)
{
    entry *e = &s->pool[i - 1];
    uint32_t tail = s->pool[m->value - 1].tail;
    if (prev) {
        s->pool[prev - 1].next = e->next;
        if (tail == i)
            s->pool[m->value - 1].tail = prev;
    } else if (e->next) {
        m->value = e->next;
        s->pool[e->next - 1].tail = tail;
    } else {
        lct__u64map_remove(&s->q[q], m);
    }
}

/* The oldest entry of queue q for key, taken out (0: none). */
static uint32_t dequeue(lct_spans *s, int q, uint64_t key)
{
    lct__u64map_entry *m = lct__u64map_find(&s->q[q], key);
    if (!m)
        return 0;
    uint32_t i = (uint32_t)m->value;
    unlink_entry(s, q, m, 0, i);
    return i;
}

/* The oldest open submit whose keys begin with the n keys of tuple id
 * `whole` (first key first), taken out (0: none). */
static uint32_t submit_for(lct_spans *s, uint64_t first, uint64_t whole,
                           uint32_t n)
{
    lct__u64map_entry *m = lct__u64map_find(&s->q[Q_SUBMIT], first);
    for (uint32_t prev = 0, i = m ? (uint32_t)m->value : 0; i;
         prev = i, i = s->pool[i - 1].next) {
        const entry *e = &s->pool[i - 1];
        if (e->nkeys >= n && e->prefix[n - 1] == whole) {
            unlink_entry(s, Q_SUBMIT, m, prev, i);
            return i;
        }
    }
    return 0;
}

/* A key's identity for pairing: every field, as lct_object_key_hash
 * takes them, each field's digest independent of the others' so they
 * overlap (a pass over a llama trace spent a quarter of its time in the
 * serial hash).  name_salt is name_salt_part(k), which the keys of one
 * list nearly always share. */
static inline uint64_t id_of(const unsigned char *hash, size_t hash_len,
                             int64_t rank, int64_t group, uint64_t name_salt)
{
    uint64_t c = lct__digest(0x2d358dccaa6c78a5u, hash, hash_len);
    uint64_t n = lct__mum((uint64_t)rank ^ 0xd6e8feb86659fd93u,
                          (uint64_t)group ^ 0xa5a5a5a5a5a5a5a5u);
    return lct__mum(c ^ n, name_salt);
}

static inline uint64_t key_id(const lct_object_key *k, uint64_t name_salt)
{
    return id_of(k->chunk_hash.ptr, k->chunk_hash.len, k->kv_rank,
                 k->object_group_id, name_salt);
}

static uint64_t name_salt_part(const lct_object_key *k)
{
    uint64_t m = lct__digest(0x589965cc75374cc3u,
                             (const unsigned char *)k->model_name.ptr,
                             k->model_name.len);
    uint64_t salt = k->cache_salt.len
                        ? lct__digest(0x1d8e4e27c47d124fu,
                                      (const unsigned char *)k->cache_salt.ptr,
                                      k->cache_salt.len)
                        : 0x1d8e4e27c47d124fu;
    return m ^ (salt * 0xff51afd7ed558ccdu);
}

/* Room for one more id in s->ids. */
static bool id_room(lct_spans *s)
{
    return s->nids < s->ids_cap ||
           grow((void **)&s->ids, &s->ids_cap, s->nids + 1, sizeof *s->ids);
}

/* The record's key ids into s->ids; false after an error.  A list the
 * validating walk noted, which the iterator describes a part at a time
 * (run_*), has one model and salt a part: their digest is taken once a
 * part, and each key's hash, rank and group read where they lie; the
 * iterator then goes on after the list. */
static lct_status read_ids(lct_spans *s, const lct_record *rec,
                           lct_error *err)
{
    lct_key_iter it;
    lct_object_key k;
    s->nids = 0;
    lct_status st = lct__key_iter_init_keys(rec, &it, err);
    if (st != LCT_OK)
        return st;
    while (it.run_next < it.run_count || lct__key_run_next_part(&it)) {
        uint64_t part = name_salt_part(&it.run_like);
        size_t room = s->nids + (it.run_count - it.run_next);
        if (room > s->ids_cap &&
            !grow((void **)&s->ids, &s->ids_cap, room, sizeof *s->ids))
            return lct__fail(err, LCT_ERR_NOMEM, 0, 0, "out of memory");
        for (size_t i = it.run_next; i < it.run_count; i++) {
            const unsigned char *key = lct__key_run_at(&it, i);
            s->ids[s->nids++] = id_of(key + LCT__MP_UNIT_FREE_AT, 32,
                                      lct__key_run_rank(&it, key),
                                      lct__key_run_group(&it, key), part);
        }
        it.run_next = it.run_count;
    }
    int more;
    while ((more = lct_key_iter_next(&it, &k, NULL, err))) {
        if (more < 0)
            return (lct_status)more;
        if (!id_room(s))
            return lct__fail(err, LCT_ERR_NOMEM, 0, 0, "out of memory");
        s->ids[s->nids++] = key_id(&k, name_salt_part(&k));
    }
    return LCT_OK;
}

static uint64_t tuple_of(const lct_spans *s)
{
    uint64_t h = 0;
    for (size_t i = 0; i < s->nids; i++)
        h = tuple_step(h, s->ids[i]);
    return h;
}

static void emit(lct_span_fn *fn, void *ctx, lct_span_kind kind,
                 double t0, double t1, uint64_t off0, uint64_t off1,
                 uint32_t nkeys)
{
    lct_span sp = {.kind = kind, .t_start = t0, .t_end = t1,
                   .start_offset = off0, .end_offset = off1,
                   .keys = nkeys};
    fn(ctx, &sp);
}

static lct_status on_submit(lct_spans *s, const lct_record *rec)
{
    uint32_t i = entry_new(s);
    if (!i)
        return LCT_ERR_NOMEM;
    entry *e = &s->pool[i - 1];
    e->t_submit = rec->t_mono;
    e->off_submit = rec->offset;
    e->nkeys = (uint32_t)s->nids;
    e->prefix = malloc(s->nids * sizeof *e->prefix);
    if (!e->prefix) {
        entry_free(s, i);
        return LCT_ERR_NOMEM;
    }
    uint64_t h = 0;
    for (size_t k = 0; k < s->nids; k++)
        e->prefix[k] = h = tuple_step(h, s->ids[k]);
    return enqueue(s, Q_SUBMIT, s->ids[0], i) ? LCT_OK : LCT_ERR_NOMEM;
}

static lct_status on_read_enter(lct_spans *s, const lct_record *rec,
                           uint64_t tuple, lct_span_fn *fn, void *ctx)
{
    uint32_t sub = submit_for(s, s->ids[0], tuple, (uint32_t)s->nids);
    uint32_t i = entry_new(s);
    if (!i)
        return LCT_ERR_NOMEM;
    entry *e = &s->pool[i - 1];
    e->t_submit = NAN;
    if (sub) {
        const entry *from = &s->pool[sub - 1];
        e->t_submit = from->t_submit;
        e->off_submit = from->off_submit;
        emit(fn, ctx, LCT_SPAN_PREFETCH_WAIT, from->t_submit, rec->t_mono,
             from->off_submit, rec->offset, (uint32_t)s->nids);
        entry_free(s, sub);
    } else {
        s->unpaired.enter_without_submit++;
    }
    e->t_open = rec->t_mono;
    e->off_open = rec->offset;
    e->nkeys = (uint32_t)s->nids;
    return enqueue(s, Q_READ, tuple, i) ? LCT_OK : LCT_ERR_NOMEM;
}

static lct_status on_read_exit(lct_spans *s, const lct_record *rec,
                          uint64_t tuple, lct_span_fn *fn, void *ctx)
{
    uint32_t i = dequeue(s, Q_READ, tuple);
    if (!i) {
        s->unpaired.exit_without_enter++;
        return LCT_OK;
    }
    entry *e = &s->pool[i - 1];
    emit(fn, ctx, LCT_SPAN_PREFETCH_READ, e->t_open, rec->t_mono,
         e->off_open, rec->offset, e->nkeys);
    e->t_exit = rec->t_mono;
    e->off_exit = rec->offset;
    e->next = e->tail = 0;
    return enqueue(s, Q_EXITED, tuple, i) ? LCT_OK : LCT_ERR_NOMEM;
}

static void on_finish_read(lct_spans *s, const lct_record *rec,
                           uint64_t tuple, lct_span_fn *fn, void *ctx)
{
    uint32_t i = dequeue(s, Q_EXITED, tuple);
    if (!i) {
        s->unpaired.finish_read_without_exit++;
        return;
    }
    const entry *e = &s->pool[i - 1];
    emit(fn, ctx, LCT_SPAN_PREFETCH_RELEASE, e->t_exit, rec->t_mono,
         e->off_exit, rec->offset, e->nkeys);
    if (!isnan(e->t_submit))
        emit(fn, ctx, LCT_SPAN_PREFETCH, e->t_submit, rec->t_mono,
             e->off_submit, rec->offset, e->nkeys);
    entry_free(s, i);
}

static void on_finish_write(lct_spans *s, const lct_record *rec,
                            uint64_t tuple, lct_span_fn *fn, void *ctx)
{
    uint32_t i = dequeue(s, Q_WRITE, tuple);
    if (!i) {
        s->unpaired.finish_write_without_reserve++;
        return;
    }
    const entry *e = &s->pool[i - 1];
    emit(fn, ctx, LCT_SPAN_WRITE, e->t_open, rec->t_mono, e->off_open,
         rec->offset, e->nkeys);
    entry_free(s, i);
}

static lct_status on_reserve(lct_spans *s, const lct_record *rec,
                             uint64_t tuple)
{
    uint32_t i = entry_new(s);
    if (!i)
        return LCT_ERR_NOMEM;
    entry *e = &s->pool[i - 1];
    e->t_open = rec->t_mono;
    e->off_open = rec->offset;
    e->nkeys = (uint32_t)s->nids;
    return enqueue(s, Q_WRITE, tuple, i) ? LCT_OK : LCT_ERR_NOMEM;
}

lct_call lct_call_of(lct_str qualname)
{
#define CALL(suffix, call) {suffix, sizeof suffix - 1, call}
    static const struct {
        const char *suffix;
        size_t len;
        lct_call call;
    } calls[] = {
        CALL(".submit_prefetch_task", LCT_CALL_SUBMIT_PREFETCH),
        CALL(".read_prefetched_results.__enter__", LCT_CALL_READ_ENTER),
        CALL(".read_prefetched_results.__exit__", LCT_CALL_READ_EXIT),
        CALL(".finish_read_prefetched", LCT_CALL_FINISH_READ),
        CALL(".reserve_write", LCT_CALL_RESERVE_WRITE),
        CALL(".finish_write", LCT_CALL_FINISH_WRITE),
    };
#undef CALL
    /* asked a record: the lengths known, no strlen */
    for (size_t i = 0; i < sizeof calls / sizeof *calls; i++)
        if (lct__str_ends_with(qualname, calls[i].suffix, calls[i].len))
            return calls[i].call;
    return LCT_CALL_OTHER;
}

lct_status lct_spans_add(lct_spans *s, const lct_record *rec,
                         lct_span_fn *fn, void *ctx, lct_error *err)
{
    lct_call call = lct_call_of(rec->qualname);
    if (call == LCT_CALL_OTHER)
        return LCT_OK;
    lct_status st = read_ids(s, rec, err);
    if (st != LCT_OK && st != LCT_ERR_NOMEM) {
        s->unpaired.unreadable_keys++; /* said by the key iterator */
        return LCT_OK;
    }
    if (st == LCT_OK && s->nids == 0) {
        s->unpaired.without_keys++;
        return LCT_OK;
    }
    uint64_t tuple = st == LCT_OK ? tuple_of(s) : 0;
    if (st == LCT_OK) {
        switch (call) {
        case LCT_CALL_SUBMIT_PREFETCH:
            st = on_submit(s, rec);
            break;
        case LCT_CALL_READ_ENTER:
            st = on_read_enter(s, rec, tuple, fn, ctx);
            break;
        case LCT_CALL_READ_EXIT:
            st = on_read_exit(s, rec, tuple, fn, ctx);
            break;
        case LCT_CALL_FINISH_READ:
            on_finish_read(s, rec, tuple, fn, ctx);
            break;
        case LCT_CALL_RESERVE_WRITE:
            st = on_reserve(s, rec, tuple);
            break;
        default:
            on_finish_write(s, rec, tuple, fn, ctx);
            break;
        }
    }
    return st == LCT_OK ? LCT_OK
                        : lct__fail(err, LCT_ERR_NOMEM, 0, rec->offset,
                                    "out of memory");
}

/* Entries still open in queue q, counted into *n. */
static void count_open(const lct_spans *s, int q, uint64_t *n)
{
    const lct__u64map *m = &s->q[q];
    for (uint64_t k = 0; m->slots && k <= m->mask; k++)
        for (uint64_t i = m->slots[k].value; i; i = s->pool[i - 1].next)
            (*n)++;
}

void lct_spans_unpaired_get(const lct_spans *s, lct_spans_unpaired *out)
{
    *out = s->unpaired;
    count_open(s, Q_SUBMIT, &out->submit_never_read);
    count_open(s, Q_READ, &out->enter_never_exited);
    count_open(s, Q_EXITED, &out->exit_never_finished);
    count_open(s, Q_WRITE, &out->reserve_never_finished);
}

void lct_spans_free(lct_spans *s)
{
    if (!s)
        return;
    for (uint32_t i = 0; i < s->npool; i++)
        free(s->pool[i].prefix);
    for (int q = 0; q < NQUEUES; q++)
        lct__u64map_free(&s->q[q]);
    free(s->pool);
    free(s->ids);
    free(s);
}

const char *lct_span_kind_name(lct_span_kind kind)
{
    static const char *names[] = {NULL, "prefetch", "prefetch.wait",
                                  "prefetch.read", "prefetch.release",
                                  "write"};
    return kind >= 1 && kind <= LCT_SPAN_WRITE ? names[kind] : NULL;
}
