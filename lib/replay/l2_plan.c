/*
 * l2_plan.c - an L2-level trace read whole into what its replay submits
 * (l2_internal.h), following the fork's L2TracePlan.from_file: the
 * footer checked, one source adapter, the leading share of its
 * submissions, each completion's outcome on the submission of the same
 * (operation, task_id), the dependencies (a lookup's hits on the latest
 * successful store of each key completed before the lookup was
 * submitted; a load on its request's lookups; an unlock on its request's
 * loads, else its lookups) and the objects to prepare.
 */
#include "replay/l2_internal.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/error_internal.h"
#include "base/u64map_internal.h"
#include "lct_lmcache.h"
#include "lmcache/lru_internal.h"

/* A completion, kept until the submissions are chosen. */
typedef struct comp {
    uint64_t adapter, task, seq;
    uint32_t out0, nout;
    uint8_t op;
    bool store_ok;
} comp;

/* What one pass over the trace gathers. */
typedef struct gather {
    lct__l2plan *p;
    uint64_t *adapter; /* each submission's */
    size_t subcap, objcap, outcap, adaptercap;
    comp *comps;
    size_t ncomps, compcap;
    uint64_t footers, recorder_dropped, bus_dropped;
    uint64_t adapters[2]; /* the first two of store, lookup, load */
    unsigned nadapters;
    bool nomem;
} gather;

static const char *const op_names[LCT_L2_OPS] = {
    "store", "lookup_task", "load_task", "unlock", "delete"};

const char *lct_l2_op_name(lct_l2_op op)
{
    return (unsigned)op < LCT_L2_OPS ? op_names[op] : "";
}

int lct_l2_event(lct_str q, bool *completed)
{
    if (q.len < 4 || memcmp(q.ptr, "l2.", 3) != 0)
        return -1;
    for (int k = 0; k < LCT_L2_OPS; k++) {
        size_t w = strlen(op_names[k]);
        if (q.len <= 4 + w || memcmp(q.ptr + 3, op_names[k], w) != 0 ||
            q.ptr[3 + w] != '.')
            continue;
        lct_str rest = {q.ptr + 4 + w, q.len - 4 - w};
        *completed = lct_str_eq(rest, "completed");
        return *completed || lct_str_eq(rest, "submitted") ? k : -1;
    }
    return -1;
}

static bool uint_arg(lct_value args, const char *name, uint64_t *out)
{
    lct_value v;
    return lct_map_find(args, name, &v) == LCT_OK &&
           lct_value_get_uint64(v, out) == LCT_OK;
}

static bool grow(gather *g, void *array, size_t *cap, size_t need,
                 size_t size)
{
    if (need <= *cap)
        return true;
    size_t want = *cap ? *cap * 2 : 256;
    while (want < need)
        want *= 2;
    if (!lct__grow_zeroed(array, *cap, want, size))
        return !(g->nomem = true);
    *cap = want;
    return true;
}

/* An index array argument into the plan's outs. */
static bool indices_arg(gather *g, lct_value args, const char *name,
                        uint32_t *out0, uint32_t *nout)
{
    lct__l2plan *p = g->p;
    lct_value v, e;
    lct_iter it;
    *out0 = (uint32_t)p->nouts, *nout = 0;
    if (lct_map_find(args, name, &v) != LCT_OK)
        return true;
    if (lct_array_iter_init(v, &it) != LCT_OK)
        return false;
    int rc;
    while ((rc = lct_array_iter_next(&it, &e)) == 1) {
        uint64_t i;
        if (lct_value_get_uint64(e, &i) != LCT_OK || i > UINT32_MAX ||
            !grow(g, &p->outs, &g->outcap, p->nouts + 1, sizeof *p->outs))
            return false;
        p->outs[p->nouts++] = (uint32_t)i;
        (*nout)++;
    }
    return rc == 0;
}

static void note_adapter(gather *g, uint64_t a)
{
    for (unsigned i = 0; i < g->nadapters; i++)
        if (g->adapters[i] == a)
            return;
    if (g->nadapters < 2)
        g->adapters[g->nadapters] = a;
    g->nadapters += g->nadapters < 2;
}

static bool add_submission(gather *g, const lct_record *rec, uint64_t seq,
                           int op, uint64_t adapter, lct_error *err)
{
    lct__l2plan *p = g->p;
    if (!grow(g, &p->subs, &g->subcap, p->nsubs + 1, sizeof *p->subs) ||
        !grow(g, &g->adapter, &g->adaptercap, p->nsubs + 1,
              sizeof *g->adapter))
        return false;
    lct__l2sub *s = &p->subs[p->nsubs];
    *s = (lct__l2sub){.seq = seq, .t_mono = rec->t_mono, .op = (uint8_t)op,
                      .obj0 = (uint32_t)p->nobjs};
    if (op <= LCT_L2_LOAD && !uint_arg(rec->args, "task_id", &s->task))
        return lct__fail(err, LCT_ERR_MALFORMED, 0, rec->offset,
                         "%s at offset %llu: no task_id", op_names[op],
                         (unsigned long long)rec->offset) == LCT_OK;
    s->has_request = uint_arg(rec->args, "request_id", &s->request);
    lct_key_iter it;
    lct_object_key key;
    uint64_t bytes;
    int rc;
    if (lct_key_iter_init(rec, &it, err) != LCT_OK)
        return false;
    while ((rc = lct_key_iter_next(&it, &key, &bytes, err)) == 1) {
        if (!grow(g, &p->objs, &g->objcap, p->nobjs + 1, sizeof *p->objs))
            return false;
        p->objs[p->nobjs++] = (lct__l2obj){lct_object_key_hash(&key), bytes};
        s->nobj++;
    }
    if (rc < 0)
        return false;
    g->adapter[p->nsubs++] = adapter;
    if (op <= LCT_L2_LOAD)
        note_adapter(g, adapter);
    return true;
}

static bool add_completion(gather *g, const lct_record *rec, uint64_t seq,
                           int op, uint64_t adapter, lct_error *err)
{
    if (!grow(g, &g->comps, &g->compcap, g->ncomps + 1, sizeof *g->comps))
        return false;
    comp *c = &g->comps[g->ncomps];
    *c = (comp){.adapter = adapter, .seq = seq, .op = (uint8_t)op};
    uint64_t ok = 0;
    bool read = uint_arg(rec->args, "task_id", &c->task);
    if (read && op == LCT_L2_STORE)
        c->store_ok = uint_arg(rec->args, "succeeded_count", &ok) && ok > 0;
    else if (read)
        read = indices_arg(g, rec->args,
                           op == LCT_L2_LOOKUP ? "hit_indices"
                                               : "success_indices",
                           &c->out0, &c->nout);
    if (!read && !g->nomem)
        lct__fail(err, LCT_ERR_MALFORMED, 0, rec->offset,
                  "%s completion at offset %llu: its task_id or indices "
                  "cannot be read", op_names[op],
                  (unsigned long long)rec->offset);
    g->ncomps += read;
    return read;
}

static bool footer(gather *g, const lct_record *rec, lct_error *err)
{
    uint64_t r = 0, b = 0;
    lct_value v;
    g->footers++;
    if ((lct_map_find(rec->args, "recorder_dropped_count", &v) == LCT_OK &&
         lct_value_get_uint64(v, &r) != LCT_OK) ||
        (lct_map_find(rec->args, "event_bus_dropped_count", &v) == LCT_OK &&
         lct_value_get_uint64(v, &b) != LCT_OK))
        return lct__fail(err, LCT_ERR_MALFORMED, 0, rec->offset,
                         "the footer at offset %llu has drop counts that "
                         "are not counts",
                         (unsigned long long)rec->offset) == LCT_OK;
    g->recorder_dropped += r;
    g->bus_dropped += b;
    return true;
}

static lct_status read_trace(lct_reader *reader, gather *g, lct_error *err)
{
    lct_record rec;
    int rc;
    uint64_t seq = 0;
    while ((rc = lct_next(reader, &rec)) == 1) {
        bool completed, ok = true;
        uint64_t adapter;
        int op = lct_l2_event(rec.qualname, &completed);
        if (lct_str_eq(rec.qualname, "l2.trace.end"))
            ok = footer(g, &rec, err);
        else if (op >= 0 && !uint_arg(rec.args, "adapter_index", &adapter))
            ok = lct__fail(err, LCT_ERR_MALFORMED, 0, rec.offset,
                           "%.*s at offset %llu: no adapter_index",
                           (int)rec.qualname.len, rec.qualname.ptr,
                           (unsigned long long)rec.offset) == LCT_OK;
        else if (op >= 0 && completed)
            ok = add_completion(g, &rec, seq, op, adapter, err);
        else if (op >= 0)
            ok = add_submission(g, &rec, seq, op, adapter, err);
        if (g->nomem)
            return lct__fail(err, LCT_ERR_NOMEM, ENOMEM, 0,
                             "out of memory reading the L2 trace");
        if (!ok)
            return err ? err->code : LCT_ERR_MALFORMED;
        seq++;
    }
    if (rc < 0)
        return lct__fail(err, rc, 0, 0, "the trace cannot be read");
    return LCT_OK;
}

/* The footer as the fork's driver wants it: one, nothing dropped. */
static lct_status check_footer(const gather *g, lct_error *err)
{
    if (g->footers == 0)
        return lct__fail(err, LCT_ERR_INVALID, 0, 0,
                         "incomplete L2 trace: missing end marker "
                         "(l2.trace.end)");
    if (g->footers > 1)
        return lct__fail(err, LCT_ERR_INVALID, 0, 0,
                         "invalid L2 trace: the end marker (l2.trace.end) "
                         "appears %llu times",
                         (unsigned long long)g->footers);
    if (g->recorder_dropped || g->bus_dropped)
        return lct__fail(err, LCT_ERR_INVALID, 0, 0,
                         "incomplete L2 trace: recorder_dropped=%llu, "
                         "event_bus_dropped=%llu",
                         (unsigned long long)g->recorder_dropped,
                         (unsigned long long)g->bus_dropped);
    return LCT_OK;
}

/* MARK: choosing, then matching */

/* Keep the submissions of one adapter, the first share of them. */
static lct_status choose(gather *g, const lct_l2_replay_options *o,
                         uint64_t *chosen, lct_error *err)
{
    lct__l2plan *p = g->p;
    if (o->adapter >= 0) {
        *chosen = (uint64_t)o->adapter;
    } else if (g->nadapters > 1) {
        return lct__fail(err, LCT_ERR_INVALID, 0, 0,
                         "the trace has several source adapters (%llu, "
                         "%llu, ...): choose one to replay (--adapter)",
                         (unsigned long long)g->adapters[0],
                         (unsigned long long)g->adapters[1]);
    } else {
        *chosen = g->nadapters ? g->adapters[0]
                  : p->nsubs   ? g->adapter[0]
                               : 0;
    }
    size_t n = 0;
    for (size_t i = 0; i < p->nsubs; i++)
        if (g->adapter[i] == *chosen)
            p->subs[n++] = p->subs[i];
    p->source_total = n;
    double percent = o->trace_percent > 0 ? o->trace_percent : 100;
    size_t selected = (size_t)ceil((double)n * percent / 100.0);
    p->nsubs = selected < n ? selected : n;
    return LCT_OK;
}

/* Each completion's outcome on the submission of its (op, task_id): a
 * map of task ids for each of the three operations that complete. */
static bool match(gather *g, uint64_t chosen)
{
    lct__l2plan *p = g->p;
    lct__u64map tasks[LCT_L2_LOAD + 1] = {{0}};
    bool added, ok = true;
    for (size_t i = 0; ok && i < p->nsubs; i++) {
        const lct__l2sub *s = &p->subs[i];
        if (s->op > LCT_L2_LOAD)
            continue;
        lct__u64map_entry *e = lct__u64map_get(&tasks[s->op], s->task,
                                               &added);
        if (e)
            e->value = i + 1; /* a task id again: the later one */
        ok = e != NULL;
    }
    for (size_t c = 0; ok && c < g->ncomps; c++) {
        const comp *k = &g->comps[c];
        lct__u64map_entry *e =
            k->adapter == chosen ? lct__u64map_find(&tasks[k->op], k->task)
                                 : NULL;
        if (!e)
            continue;
        lct__l2sub *s = &p->subs[e->value - 1];
        s->completed = true;
        s->complete_seq = k->seq;
        s->store_ok = k->store_ok;
        s->out0 = k->out0, s->nout = k->nout;
    }
    for (int op = 0; op <= LCT_L2_LOAD; op++)
        lct__u64map_free(&tasks[op]);
    return ok;
}

void lct__l2_plan_free(lct__l2plan *p)
{
    free(p->subs);
    free(p->objs);
    free(p->deps);
    free(p->outs);
    free(p->prepare);
    memset(p, 0, sizeof *p);
}

lct_status lct__l2_plan(lct_reader *reader, const lct_l2_replay_options *o,
                        lct__l2plan *p, lct_error *err)
{
    memset(p, 0, sizeof *p);
    const lct_header *h = lct_reader_header(reader);
    if (!lct_str_eq(h->level, "l2"))
        return lct__fail(err, LCT_ERR_INVALID, 0, 0,
                         "L2 replay requires header.level 'l2', got '%.*s'",
                         (int)h->level.len, h->level.ptr);
    if (o->trace_percent < 0 || o->trace_percent > 100 ||
        isnan(o->trace_percent))
        return lct__fail(err, LCT_ERR_INVALID, 0, 0,
                         "trace_percent must be finite and in (0, 100]");
    gather g = {.p = p};
    uint64_t chosen = 0;
    lct_status st = read_trace(reader, &g, err);
    if (st == LCT_OK)
        st = check_footer(&g, err);
    if (st == LCT_OK)
        st = choose(&g, o, &chosen, err);
    p->adapter = chosen;
    if (st == LCT_OK && !match(&g, chosen))
        st = lct__fail(err, LCT_ERR_NOMEM, ENOMEM, 0, "out of memory");
    if (st == LCT_OK && (st = lct__l2_dependencies(p)) != LCT_OK)
        lct__fail(err, st, ENOMEM, 0, "out of memory");
    free(g.adapter);
    free(g.comps);
    if (st != LCT_OK)
        lct__l2_plan_free(p);
    return st;
}
