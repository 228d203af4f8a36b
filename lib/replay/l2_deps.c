/*
 * l2_deps.c - what an L2 replay's submissions wait for, and the objects
 * it stores first, from the plan's outcomes (the fork's L2TracePlan
 * rules): a lookup on, per key it hit, the latest successful store of
 * that key completed before the lookup was submitted; a load on its
 * request's lookups; an unlock on its request's loads, else its lookups.
 * Prepared: each object whose first lookup hit while no successful store
 * of it had completed before that lookup did, weighing a store's or
 * load's object_sizes for it, else the lookup's layout.
 */
#include "replay/l2_internal.h"

#include <stdlib.h>

#include "base/u64map_internal.h"
#include "lmcache/lru_internal.h"

typedef struct stored { /* a key of a successful store */
    uint64_t id, complete_seq;
    uint32_t sub;
} stored;

typedef struct edge {
    uint32_t from, to; /* from waits for to */
} edge;

typedef struct by_request {
    uint64_t request;
    uint32_t sub;
    uint8_t op;
} by_request;

typedef struct edges {
    edge *e;
    size_t n, cap;
} edges;

static int stored_cmp(const void *a, const void *b)
{
    const stored *x = a, *y = b;
    if (x->id != y->id)
        return x->id < y->id ? -1 : 1;
    return x->complete_seq < y->complete_seq   ? -1
           : x->complete_seq > y->complete_seq ? 1
                                               : 0;
}

static int edge_cmp(const void *a, const void *b)
{
    const edge *x = a, *y = b;
    if (x->from != y->from)
        return x->from < y->from ? -1 : 1;
    return x->to < y->to ? -1 : x->to > y->to;
}

static int request_cmp(const void *a, const void *b)
{
    const by_request *x = a, *y = b;
    if (x->request != y->request)
        return x->request < y->request ? -1 : 1;
    if (x->op != y->op)
        return x->op < y->op ? -1 : 1;
    return x->sub < y->sub ? -1 : x->sub > y->sub;
}

static bool add_edge(edges *es, uint32_t from, uint32_t to)
{
    if (es->n == es->cap) {
        size_t cap = es->cap ? 2 * es->cap : 256;
        if (!lct__grow_zeroed(&es->e, es->cap, cap, sizeof *es->e))
            return false;
        es->cap = cap;
    }
    es->e[es->n++] = (edge){from, to};
    return true;
}

/* The keys of every successful store, by key then completion. */
static stored *successful_stores(const lct__l2plan *p, size_t *n)
{
    size_t count = 0;
    for (size_t i = 0; i < p->nsubs; i++)
        if (p->subs[i].op == LCT_L2_STORE && p->subs[i].store_ok)
            count += p->subs[i].nobj;
    stored *st = malloc((count ? count : 1) * sizeof *st);
    if (!st)
        return NULL;
    *n = 0;
    for (size_t i = 0; i < p->nsubs; i++) {
        const lct__l2sub *s = &p->subs[i];
        if (s->op != LCT_L2_STORE || !s->store_ok)
            continue;
        for (uint32_t j = 0; j < s->nobj; j++)
            st[(*n)++] = (stored){p->objs[s->obj0 + j].id, s->complete_seq,
                                  (uint32_t)i};
    }
    qsort(st, *n, sizeof *st, stored_cmp);
    return st;
}

/* The last of key id's stores that completed before seq, or NULL. */
static const stored *store_before(const stored *st, size_t n, uint64_t id,
                                  uint64_t seq)
{
    size_t lo = 0, hi = n; /* the first entry not below (id, seq) */
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (st[mid].id < id || (st[mid].id == id && st[mid].complete_seq < seq))
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo > 0 && st[lo - 1].id == id ? &st[lo - 1] : NULL;
}

static bool hit_dependencies(const lct__l2plan *p, const stored *st,
                             size_t nst, edges *es)
{
    for (size_t i = 0; i < p->nsubs; i++) {
        const lct__l2sub *s = &p->subs[i];
        if (s->op != LCT_L2_LOOKUP || !s->completed)
            continue;
        for (uint32_t k = 0; k < s->nout; k++) {
            uint32_t at = p->outs[s->out0 + k];
            const stored *before =
                at < s->nobj ? store_before(st, nst, p->objs[s->obj0 + at].id,
                                            s->seq)
                             : NULL;
            if (before && !add_edge(es, (uint32_t)i, before->sub))
                return false;
        }
    }
    return true;
}

/* Loads on their request's lookups; unlocks on its loads, else lookups. */
static bool request_dependencies(const lct__l2plan *p, edges *es)
{
    by_request *r = malloc((p->nsubs ? p->nsubs : 1) * sizeof *r);
    size_t n = 0;
    if (!r)
        return false;
    for (size_t i = 0; i < p->nsubs; i++) {
        const lct__l2sub *s = &p->subs[i];
        if (s->has_request &&
            (s->op == LCT_L2_LOOKUP || s->op == LCT_L2_LOAD))
            r[n++] = (by_request){s->request, (uint32_t)i, s->op};
    }
    qsort(r, n, sizeof *r, request_cmp);
    bool ok = true;
    for (size_t i = 0; ok && i < p->nsubs; i++) {
        const lct__l2sub *s = &p->subs[i];
        if (!s->has_request || (s->op != LCT_L2_LOAD && s->op != LCT_L2_UNLOCK))
            continue;
        size_t lo = 0, hi = n; /* the request's first entry */
        while (lo < hi) {
            size_t mid = (lo + hi) / 2;
            if (r[mid].request < s->request)
                lo = mid + 1;
            else
                hi = mid;
        }
        bool loads = false;
        for (size_t j = lo; j < n && r[j].request == s->request; j++)
            loads |= r[j].op == LCT_L2_LOAD;
        uint8_t want = s->op == LCT_L2_UNLOCK && loads ? LCT_L2_LOAD
                                                        : LCT_L2_LOOKUP;
        for (size_t j = lo; ok && j < n && r[j].request == s->request; j++)
            if (r[j].op == want)
                ok = add_edge(es, (uint32_t)i, r[j].sub);
    }
    free(r);
    return ok;
}

/* The edges sorted, without repeats, into each submission's deps. */
static bool assign(lct__l2plan *p, edges *es)
{
    if (es->n)
        qsort(es->e, es->n, sizeof *es->e, edge_cmp);
    p->deps = malloc((es->n ? es->n : 1) * sizeof *p->deps);
    if (!p->deps)
        return false;
    for (size_t k = 0; k < es->n; k++) {
        if (k && es->e[k].from == es->e[k - 1].from &&
            es->e[k].to == es->e[k - 1].to)
            continue;
        lct__l2sub *s = &p->subs[es->e[k].from];
        if (!s->ndeps)
            s->dep0 = (uint32_t)p->ndeps;
        s->ndeps++;
        p->deps[p->ndeps++] = es->e[k].to;
    }
    return true;
}

static bool hit_at(const lct__l2plan *p, const lct__l2sub *s, uint32_t j)
{
    for (uint32_t k = 0; k < s->nout; k++)
        if (p->outs[s->out0 + k] == j)
            return true;
    return false;
}

/* What each key weighs by the stores' and loads' object_sizes. */
static bool sizes_by_key(const lct__l2plan *p, lct__u64map *m)
{
    bool added;
    for (size_t i = 0; i < p->nsubs; i++) {
        const lct__l2sub *s = &p->subs[i];
        if (s->op != LCT_L2_STORE && s->op != LCT_L2_LOAD)
            continue;
        for (uint32_t j = 0; j < s->nobj; j++) {
            const lct__l2obj *o = &p->objs[s->obj0 + j];
            lct__u64map_entry *e = o->bytes ? lct__u64map_get(m, o->id, &added)
                                            : NULL;
            if (o->bytes && !e)
                return false;
            if (e)
                e->value = o->bytes;
        }
    }
    return true;
}

static bool prepare(lct__l2plan *p, const stored *st, size_t nst)
{
    lct__u64map first = {0}, sizes = {0};
    bool added, ok = sizes_by_key(p, &sizes);
    p->prepare = malloc((p->nobjs ? p->nobjs : 1) * sizeof *p->prepare);
    ok = ok && p->prepare;
    for (size_t i = 0; ok && i < p->nsubs; i++) {
        const lct__l2sub *s = &p->subs[i];
        if (s->op != LCT_L2_LOOKUP)
            continue;
        for (uint32_t j = 0; ok && j < s->nobj; j++) {
            const lct__l2obj *o = &p->objs[s->obj0 + j];
            lct__u64map_entry *e = lct__u64map_get(&first, o->id, &added);
            if (!(ok = e != NULL) || !added)
                continue; /* not this key's first lookup */
            e->value = 1;
            /* its first lookup must have hit it, and no store explains
             * the hit */
            if (!s->completed || !hit_at(p, s, j) ||
                store_before(st, nst, o->id, s->complete_seq))
                continue;
            const lct__u64map_entry *size = lct__u64map_find(&sizes, o->id);
            p->prepare[p->nprepare++] =
                (lct__l2obj){o->id, size ? size->value : o->bytes};
        }
    }
    lct__u64map_free(&first);
    lct__u64map_free(&sizes);
    return ok;
}

lct_status lct__l2_dependencies(lct__l2plan *p)
{
    size_t nst = 0;
    stored *st = successful_stores(p, &nst);
    edges es = {0};
    bool ok = st && hit_dependencies(p, st, nst, &es) &&
              request_dependencies(p, &es) && assign(p, &es) &&
              prepare(p, st, nst);
    free(es.e);
    free(st);
    return ok ? LCT_OK : LCT_ERR_NOMEM;
}
