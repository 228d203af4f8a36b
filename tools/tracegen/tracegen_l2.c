/*
 * tracegen_l2.c - L2-level traces (level "l2") as the L2TraceRecorder of
 * LMCache's l2-tracing fork writes them: a request's lookup of its keys
 * in the adapter (l2.lookup_task.submitted, then .completed with the
 * indices the adapter held), a load of the hits and an unlock of them, a
 * store of what it missed; requests that only store; now and then a
 * delete; the footer.  The adapter's contents are simulated, so a hit is
 * a hit of an earlier store that completed, and tasks overlap as a
 * server's do.
 */
#include "tracegen.h"
#include "tracegen_internal.h"

#include <stdlib.h>
#include <string.h>

/* Requests in flight at most: their tasks overlap. */
#define IN_FLIGHT 4

enum stage {
    LOOKUP_SUBMIT,
    LOOKUP_DONE,
    LOAD_SUBMIT,
    LOAD_DONE,
    UNLOCK,
    STORE_SUBMIT,
    STORE_DONE,
    DELETE,
    DONE
};

typedef struct request {
    uint64_t id, first, task[3]; /* lookup, load, store */
    unsigned n, nkeys;           /* the call's n, and its keys */
    unsigned adapter;
    enum stage stage;
    double t; /* when its next record is written */
    bool skip_load;
    unsigned *hit, nhit;   /* the indices the lookup found */
    unsigned *miss, nmiss; /* the others: what the request stores */
} request;

typedef struct held_set { /* the adapter's keys, by id */
    uint64_t *id;
    size_t n, cap;
} held_set;

typedef struct l2gen {
    lct_writer *w;
    held_set held;
    uint64_t task_id[GEN_L2_ADAPTERS_MAX];
    double start;
} l2gen;

static size_t held_find(const held_set *h, uint64_t id)
{
    for (size_t i = 0; i < h->n; i++)
        if (h->id[i] == id)
            return i;
    return SIZE_MAX;
}

static bool held_add(held_set *h, uint64_t id)
{
    if (held_find(h, id) != SIZE_MAX)
        return true;
    if (h->n == h->cap) {
        size_t cap = h->cap ? 2 * h->cap : 256;
        uint64_t *g = realloc(h->id, cap * sizeof *g);
        if (!g)
            return false;
        h->id = g, h->cap = cap;
    }
    h->id[h->n++] = id;
    return true;
}

static void held_drop(held_set *h, uint64_t id)
{
    size_t i = held_find(h, id);
    if (i != SIZE_MAX)
        h->id[i] = h->id[--h->n];
}

/* MARK: the records' fields */

/* The map of a record's args: nfields of its own after adapter_index and
 * l2_name, which every L2 event has. */
static void fields(lct_writer *w, const request *r, unsigned nfields)
{
    lct_writer_map(w, nfields + 2);
    lct_writer_cstr(w, "adapter_index");
    lct_writer_uint(w, r->adapter);
    lct_writer_cstr(w, "l2_name");
    lct_writer_cstr(w, "mock");
}

static void uint_field(lct_writer *w, const char *name, uint64_t v)
{
    lct_writer_cstr(w, name);
    lct_writer_uint(w, v);
}

/* keys: the call's keys at[0..count) (at NULL: all), object_sizes. */
static void keys_field(lct_writer *w, const request *r, const unsigned *at,
                       unsigned count, bool with_sizes)
{
    lct_writer_cstr(w, "keys");
    gen__object_keys_at(w, r->first, at, count);
    if (!with_sizes)
        return;
    lct_writer_cstr(w, "object_sizes");
    lct_writer_array(w, count);
    for (unsigned i = 0; i < count; i++)
        lct_writer_uint(w, gen__layout_bytes(r->first));
}

static void indices_field(lct_writer *w, const char *name,
                          const unsigned *at, unsigned count)
{
    lct_writer_cstr(w, name);
    lct_writer_array(w, count);
    for (unsigned i = 0; i < count; i++)
        lct_writer_uint(w, at ? at[i] : i);
}

/* MARK: a request's steps */

/* Key i of r as its adapter holds it: each adapter has a store of its
 * own. */
static uint64_t held_id(const request *r, unsigned i)
{
    return gen__key_id(i, r->first) ^
           ((uint64_t)r->adapter * 0x9e3779b97f4a7c15u);
}

/* The lookup's answer: which of its keys the adapter held when it was
 * submitted (so every hit is a store completed before it, as the fork's
 * replay driver explains hits). */
static bool lookup_done(l2gen *g, request *r)
{
    r->hit = malloc((r->nkeys ? r->nkeys : 1) * sizeof *r->hit);
    r->miss = malloc((r->nkeys ? r->nkeys : 1) * sizeof *r->miss);
    if (!r->hit || !r->miss)
        return false;
    for (unsigned i = 0; i < r->nkeys; i++) {
        uint64_t id = held_id(r, i);
        if (held_find(&g->held, id) != SIZE_MAX)
            r->hit[r->nhit++] = i;
        else
            r->miss[r->nmiss++] = i;
    }
    return true;
}

/* The args of r's current stage; false when memory ran out. */
static bool stage_args(l2gen *g, request *r)
{
    lct_writer *w = g->w;
    switch (r->stage) {
    case LOOKUP_SUBMIT:
        if (!lookup_done(g, r))
            return false;
        r->task[0] = g->task_id[r->adapter]++;
        fields(w, r, 4);
        uint_field(w, "request_id", r->id);
        uint_field(w, "task_id", r->task[0]);
        keys_field(w, r, NULL, r->nkeys, false);
        lct_writer_cstr(w, "layout_desc");
        gen__layout_desc(w, r->first);
        return true;
    case LOOKUP_DONE:
        fields(w, r, 3);
        uint_field(w, "request_id", r->id);
        uint_field(w, "task_id", r->task[0]);
        indices_field(w, "hit_indices", r->hit, r->nhit);
        return true;
    case LOAD_SUBMIT:
        r->task[1] = g->task_id[r->adapter]++;
        fields(w, r, 4);
        uint_field(w, "request_id", r->id);
        uint_field(w, "task_id", r->task[1]);
        keys_field(w, r, r->hit, r->nhit, true);
        return true;
    case LOAD_DONE:
        fields(w, r, 3);
        uint_field(w, "request_id", r->id);
        uint_field(w, "task_id", r->task[1]);
        indices_field(w, "success_indices", NULL, r->nhit);
        return true;
    case UNLOCK:
        fields(w, r, 2);
        uint_field(w, "request_id", r->id);
        keys_field(w, r, r->hit, r->nhit, false);
        return true;
    case STORE_SUBMIT:
        r->task[2] = g->task_id[r->adapter]++;
        fields(w, r, 4);
        uint_field(w, "task_id", r->task[2]);
        keys_field(w, r, r->miss, r->nmiss, true);
        lct_writer_cstr(w, "key_count_per_salt");
        lct_writer_map(w, 1);
        lct_writer_cstr(w, "");
        lct_writer_uint(w, r->nmiss);
        return true;
    case STORE_DONE:
        fields(w, r, 4);
        uint_field(w, "task_id", r->task[2]);
        uint_field(w, "succeeded_count", r->nmiss);
        uint_field(w, "failed_count", 0);
        uint_field(w, "bytes_transferred",
                   gen__layout_bytes(r->first) * r->nmiss);
        for (unsigned i = 0; i < r->nmiss; i++)
            if (!held_add(&g->held, held_id(r, r->miss[i])))
                return false;
        return true;
    case DELETE:
        fields(w, r, 1);
        keys_field(w, r, NULL, r->nkeys, false);
        for (unsigned i = 0; i < r->nkeys; i++)
            held_drop(&g->held, held_id(r, i));
        return true;
    default:
        return true;
    }
}

/* What follows r's current stage, and after how long. */
static enum stage next_stage(request *r, double *after)
{
    *after = (double)(gen__rng() % 1000) / 1e6; /* up to 1 ms */
    switch (r->stage) {
    case LOOKUP_SUBMIT:
        *after += 0.0002;
        return LOOKUP_DONE;
    case LOOKUP_DONE:
        return !r->nhit ? STORE_SUBMIT : r->skip_load ? UNLOCK : LOAD_SUBMIT;
    case LOAD_SUBMIT:
        *after += 0.001;
        return LOAD_DONE;
    case LOAD_DONE:
        return UNLOCK;
    case UNLOCK:
        return r->nmiss ? STORE_SUBMIT : DONE;
    case STORE_SUBMIT:
        *after += 0.002;
        return STORE_DONE;
    default:
        return DONE;
    }
}

static const char *const stage_names[] = {
    "l2.lookup_task.submitted", "l2.lookup_task.completed",
    "l2.load_task.submitted",   "l2.load_task.completed",
    "l2.unlock.submitted",      "l2.store.submitted",
    "l2.store.completed",       "l2.delete.submitted"};

static int step(l2gen *g, request *r)
{
    const char *q = stage_names[r->stage];
    lct_writer_record_begin(g->w, r->t, g->start + r->t, q, strlen(q));
    if (!stage_args(g, r))
        return -1;
    double after;
    r->stage = next_stage(r, &after);
    r->t += after;
    return lct_writer_end(g->w, NULL) == LCT_OK ? 0 : -1;
}

/* MARK: the trace */

/* Request `id`, arriving at t: a lookup (two in three) or a store of its
 * keys, or (one in forty) a delete of a document's keys. */
static request new_request(const gen__docs *d, unsigned max_keys,
                           unsigned adapters, uint64_t id, double t)
{
    uint64_t pick = gen__rng(), flags = gen__rng();
    request r = {.id = id, .t = t, .n = 1 + (unsigned)(pick % max_keys),
                 .first = gen__first_chunk(d, pick),
                 .adapter = (unsigned)(flags % adapters)};
    r.nkeys = gen__call_keys(r.n);
    r.skip_load = (flags >> 8) % 8 == 0; /* L1 had them after all */
    if ((flags >> 24) % 40 == 0) {
        r.stage = DELETE;
    } else if ((pick >> 8) % 3 == 0) { /* a store of what was computed */
        r.stage = STORE_SUBMIT;
        r.miss = malloc(r.nkeys * sizeof *r.miss);
        for (unsigned i = 0; r.miss && i < r.nkeys; i++)
            r.miss[r.nmiss++] = i;
    } else {
        r.stage = LOOKUP_SUBMIT;
    }
    return r;
}

/* A request on a document whose store is in flight on its adapter
 * starts once that store completed: its lookup then sees it, as a
 * replay at any speed does (a store's keys are its document's first
 * chunks, so the same first chunk is the same keys). */
static void after_stores(const request *live, unsigned nlive, request *r)
{
    for (unsigned i = 0; i < nlive; i++)
        if (live[i].stage == STORE_DONE && live[i].first == r->first &&
            live[i].adapter == r->adapter && live[i].t >= r->t)
            r->t = live[i].t + 1e-6;
}

static int footer(l2gen *g, double t)
{
    static const char q[] = "l2.trace.end";
    lct_writer_record_begin(g->w, t, g->start + t, q, sizeof q - 1);
    lct_writer_map(g->w, 2);
    uint_field(g->w, "recorder_dropped_count", 0);
    uint_field(g->w, "event_bus_dropped_count", 0);
    return lct_writer_end(g->w, NULL) == LCT_OK ? 0 : -1;
}

/* Steps each request still takes, at most: it is not started unless the
 * budget holds them all. */
#define MAX_STEPS 7

int gen_trace_l2(int fd, uint64_t records, unsigned max_keys, unsigned ndocs,
                 uint64_t seed, unsigned adapters)
{
    if (adapters == 0 || adapters > GEN_L2_ADAPTERS_MAX || records == 0)
        return -1;
    gen__seed(seed);
    gen__docs d;
    l2gen g = {.start = gen__start()};
    if (gen__docs_init(&d, ndocs) != 0)
        return -1;
    if (lct_writer_open_fd(fd, &g.w, NULL) != LCT_OK) {
        free(d.cdf);
        return -1;
    }
    int rc = gen__write_header(g.w, "l2");
    request live[IN_FLIGHT];
    unsigned nlive = 0;
    uint64_t written = 0, id = 0;
    double arrival = 0, t = 0;
    while (rc == 0) {
        /* start a request when one is due and the budget holds it */
        double soonest = arrival;
        for (unsigned i = 0; i < nlive; i++)
            soonest = live[i].t < soonest ? live[i].t : soonest;
        if (nlive < IN_FLIGHT &&
            written + (nlive + 1) * MAX_STEPS + 1 <= records &&
            arrival <= soonest) {
            request r = new_request(&d, max_keys, adapters, ++id, arrival);
            after_stores(live, nlive, &r);
            live[nlive++] = r;
            arrival += (double)(gen__rng() % 2000) / 1e6;
        }
        if (nlive == 0)
            break;
        unsigned next = 0; /* the request whose record comes first */
        for (unsigned i = 1; i < nlive; i++)
            if (live[i].t < live[next].t)
                next = i;
        request *r = &live[next];
        t = r->t > t ? r->t : t;
        r->t = t; /* records go out in time order */
        rc = step(&g, r);
        written++;
        if (r->stage == DONE) {
            free(r->hit), free(r->miss);
            *r = live[--nlive];
        }
    }
    for (unsigned i = 0; i < nlive; i++)
        free(live[i].hit), free(live[i].miss);
    if (rc == 0)
        rc = footer(&g, t);
    lct_writer_close(g.w);
    free(g.held.id);
    free(d.cdf);
    return rc;
}
