/*
 * l2_level.c - an L2-level trace's tasks (l2_level.h): each submission
 * kept open by (operation, adapter_index, task_id) until its completion,
 * as the fork's replay driver keys them; per adapter and kind the counts,
 * keys, latencies (completion's t_mono less the submission's), bytes and
 * the lookups' hits and loads' successes; the footer's count and drops.
 * Printed for lct info, lct stat and lct check (l2_print.c).
 */
#include "l2_level.h"
#include "tool.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

struct tool_l2_open {
    RB_ENTRY(tool_l2_open) link;
    unsigned kind, adapter;
    uint64_t task;
    double t;
    uint64_t keys, bytes; /* bytes: the object_sizes submitted */
    uint64_t *sizes;      /* load: each key's, for its successes */
    uint64_t nsizes;      /* how many (a hostile record may give fewer
                             sizes than keys) */
};

static int open_cmp(tool_l2_open *a, tool_l2_open *b)
{
    if (a->kind != b->kind)
        return a->kind < b->kind ? -1 : 1;
    if (a->adapter != b->adapter)
        return a->adapter < b->adapter ? -1 : 1;
    return a->task < b->task ? -1 : a->task > b->task;
}

RB_PROTOTYPE(tool_l2_open_tree, tool_l2_open, link, open_cmp)
RB_GENERATE(tool_l2_open_tree, tool_l2_open, link, open_cmp)

const char *tool_l2_kind_name(unsigned kind)
{
    static const char *const names[TOOL_L2_KINDS] = {
        "store", "lookup", "load", "unlock", "delete"};
    return kind < TOOL_L2_KINDS ? names[kind] : "";
}
/* the library names the events (lct_l2_event): its operations are these
 * kinds, in this order */
_Static_assert(TOOL_L2_STORE == (int)LCT_L2_STORE &&
                   TOOL_L2_LOOKUP == (int)LCT_L2_LOOKUP &&
                   TOOL_L2_LOAD == (int)LCT_L2_LOAD &&
                   TOOL_L2_UNLOCK == (int)LCT_L2_UNLOCK &&
                   TOOL_L2_DELETE == (int)LCT_L2_DELETE,
               "tool_l2_kind follows lct_l2_op");

void tool_l2_init(tool_l2 *l2)
{
    memset(l2, 0, sizeof *l2);
    RB_INIT(&l2->open);
}

/* MARK: reading a record */

static bool field_uint(lct_value args, const char *name, uint64_t *out)
{
    lct_value v;
    return lct_map_find(args, name, &v) == LCT_OK &&
           lct_value_get_uint64(v, out) == LCT_OK;
}

/* The elements of array field `name` (0 when absent), and with sum the
 * sum of its unsigned elements (each one kept in each[] when given). */
static bool field_array(lct_value args, const char *name, uint64_t *count,
                        uint64_t *sum, uint64_t **each)
{
    lct_value v, e;
    lct_iter it;
    uint64_t room = 0;
    *count = 0;
    if (sum)
        *sum = 0;
    if (lct_map_find(args, name, &v) != LCT_OK)
        return true;
    if (lct_array_iter_init(v, &it) != LCT_OK)
        return false;
    int rc;
    while ((rc = lct_array_iter_next(&it, &e)) == 1) {
        uint64_t x = 0;
        if (sum && lct_value_get_uint64(e, &x) != LCT_OK)
            return false;
        if (each && *count == room) { /* doubled: linear in the array */
            room = room ? 2 * room : 16;
            uint64_t *g = reallocarray(*each, room, sizeof **each);
            if (!g)
                return false;
            *each = g;
        }
        if (each)
            (*each)[*count] = x;
        if (sum)
            *sum += x;
        (*count)++;
    }
    return rc == 0;
}

static bool add_latency(tool_l2_latencies *l, double t)
{
    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 256;
        double *g = reallocarray(l->v, cap, sizeof *g);
        if (!g)
            return false;
        l->v = g, l->cap = cap;
    }
    l->v[l->n++] = t;
    l->sum += t;
    l->min = l->n == 1 || t < l->min ? t : l->min;
    l->max = l->n == 1 || t > l->max ? t : l->max;
    return true;
}

static void submitted(tool_l2 *l2, tool_l2_tasks *k, unsigned kind,
                      unsigned adapter, const lct_record *rec)
{
    uint64_t keys, bytes, task;
    uint64_t *sizes = NULL;
    bool ok = field_array(rec->args, "keys", &keys, NULL, NULL);
    uint64_t nsizes = 0;
    ok = ok && field_array(rec->args, "object_sizes", &nsizes, &bytes,
                           kind == TOOL_L2_LOAD ? &sizes : NULL);
    if (!ok) {
        l2->unreadable++;
        free(sizes);
        return;
    }
    if (!k->submitted || rec->t_mono < k->first)
        k->first = rec->t_mono;
    k->submitted++;
    k->keys += keys;
    if (kind > TOOL_L2_LOAD) /* unlock, delete: nothing completes */
        return;
    if (!field_uint(rec->args, "task_id", &task)) {
        l2->unreadable++;
        free(sizes);
        return;
    }
    tool_l2_open *o = calloc(1, sizeof *o);
    if (!o) {
        l2->failed = true;
        free(sizes);
        return;
    }
    *o = (tool_l2_open){.kind = kind, .adapter = adapter, .task = task,
                        .t = rec->t_mono, .keys = keys, .bytes = bytes,
                        .sizes = sizes, .nsizes = nsizes};
    tool_l2_open *had = RB_INSERT(tool_l2_open_tree, &l2->open, o);
    if (had) { /* a task id again before its completion: the newer wins */
        k->unpaired++;
        RB_REMOVE(tool_l2_open_tree, &l2->open, had);
        free(had->sizes);
        free(had);
        RB_INSERT(tool_l2_open_tree, &l2->open, o);
    }
}

/* A load's bytes: the object_sizes of the keys at success_indices. */
static bool load_bytes(const lct_record *rec, const tool_l2_open *o,
                       uint64_t *found, uint64_t *bytes)
{
    uint64_t *at = NULL;
    uint64_t sum;
    bool ok = field_array(rec->args, "success_indices", found, &sum, &at);
    *bytes = 0;
    for (uint64_t i = 0; ok && i < *found; i++)
        *bytes += o->sizes && at[i] < o->nsizes ? o->sizes[at[i]] : 0;
    free(at);
    return ok;
}

static void completed(tool_l2 *l2, tool_l2_tasks *k, unsigned kind,
                      unsigned adapter, const lct_record *rec)
{
    tool_l2_open key = {.kind = kind, .adapter = adapter};
    if (!field_uint(rec->args, "task_id", &key.task)) {
        l2->unreadable++;
        return;
    }
    tool_l2_open *o = RB_FIND(tool_l2_open_tree, &l2->open, &key);
    if (!o) {
        k->orphans++;
        return;
    }
    uint64_t found = 0, failed = 0, bytes = 0, sum;
    bool ok = true;
    if (kind == TOOL_L2_STORE)
        ok = field_uint(rec->args, "succeeded_count", &found) &&
             field_uint(rec->args, "failed_count", &failed) &&
             field_uint(rec->args, "bytes_transferred", &bytes);
    else if (kind == TOOL_L2_LOOKUP)
        ok = field_array(rec->args, "hit_indices", &found, &sum, NULL);
    else
        ok = load_bytes(rec, o, &found, &bytes);
    if (!ok) {
        l2->unreadable++;
    } else {
        k->completed++;
        k->completed_keys += o->keys;
        k->found += found;
        k->failed += failed;
        k->bytes += bytes;
        if (k->completed == 1 || rec->t_mono > k->last)
            k->last = rec->t_mono;
        l2->failed |= !add_latency(&k->latency, rec->t_mono - o->t);
    }
    RB_REMOVE(tool_l2_open_tree, &l2->open, o);
    free(o->sizes);
    free(o);
}

bool tool_l2_footer_counts(const lct_record *rec, uint64_t *recorder,
                           uint64_t *bus)
{
    uint64_t r = 0, b = 0;
    lct_value v;
    if (lct_map_find(rec->args, "recorder_dropped_count", &v) == LCT_OK &&
        lct_value_get_uint64(v, &r) != LCT_OK)
        return false;
    if (lct_map_find(rec->args, "event_bus_dropped_count", &v) == LCT_OK &&
        lct_value_get_uint64(v, &b) != LCT_OK)
        return false;
    *recorder += r;
    *bus += b;
    return true;
}

void tool_l2_add(tool_l2 *l2, const lct_record *rec)
{
    bool done;
    uint64_t adapter;
    if (lct_str_eq(rec->qualname, TOOL_L2_FOOTER)) {
        l2->footers++;
        l2->unreadable += !tool_l2_footer_counts(rec, &l2->recorder_dropped,
                                                 &l2->event_bus_dropped);
        return;
    }
    int event = lct_l2_event(rec->qualname, &done);
    if (event < 0)
        return;
    unsigned kind = (unsigned)event;
    if (!field_uint(rec->args, "adapter_index", &adapter)) {
        l2->unreadable++;
        return;
    }
    unsigned a = adapter < TOOL_L2_ADAPTERS ? (unsigned)adapter
                                            : TOOL_L2_ADAPTERS - 1;
    l2->seen[a] = true;
    if (done)
        completed(l2, &l2->k[a][kind], kind, a, rec);
    else
        submitted(l2, &l2->k[a][kind], kind, a, rec);
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

void tool_l2_finish(tool_l2 *l2)
{
    tool_l2_open *o, *next;
    RB_FOREACH_SAFE(o, tool_l2_open_tree, &l2->open, next) {
        l2->k[o->adapter][o->kind].unpaired++;
        RB_REMOVE(tool_l2_open_tree, &l2->open, o);
        free(o->sizes);
        free(o);
    }
    for (unsigned a = 0; a < TOOL_L2_ADAPTERS; a++)
        for (unsigned k = 0; k < TOOL_L2_KINDS; k++) {
            tool_l2_latencies *l = &l2->k[a][k].latency;
            if (l->n)
                qsort(l->v, l->n, sizeof *l->v, by_value);
        }
}

void tool_l2_free(tool_l2 *l2)
{
    tool_l2_open *o, *next;
    RB_FOREACH_SAFE(o, tool_l2_open_tree, &l2->open, next) {
        RB_REMOVE(tool_l2_open_tree, &l2->open, o);
        free(o->sizes);
        free(o);
    }
    for (unsigned a = 0; a < TOOL_L2_ADAPTERS; a++)
        for (unsigned k = 0; k < TOOL_L2_KINDS; k++)
            free(l2->k[a][k].latency.v);
}

bool tool_l2_footer_problem(uint64_t footers, uint64_t recorder_dropped,
                            uint64_t event_bus_dropped, char *msg,
                            size_t size)
{
    if (footers == 0)
        snprintf(msg, size, "the L2 trace has no footer (" TOOL_L2_FOOTER
                            "): the recording did not end cleanly");
    else if (footers > 1)
        snprintf(msg, size,
                 "the L2 trace's footer (" TOOL_L2_FOOTER ") appears %" PRIu64
                 " times",
                 footers);
    else if (recorder_dropped || event_bus_dropped)
        snprintf(msg, size,
                 "the L2 trace is incomplete: its footer says the recorder "
                 "dropped %" PRIu64 " events and the event bus %" PRIu64,
                 recorder_dropped, event_bus_dropped);
    else
        return false;
    return true;
}
