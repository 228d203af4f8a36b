/*
 * qtable.c - the per-qualname table (a libbsd red-black tree keyed by
 * copied qualnames) and the tally info and stat keep per thread.
 */
#include "tool.h"

#include <stdlib.h>
#include <string.h>

/* MARK: per-qualname table */

int qentry_cmp(qentry *a, qentry *b)
{
    return lct_str_cmp(a->qualname, b->qualname);
}

RB_GENERATE(qtable, qentry, link, qentry_cmp)

qentry *qtable_get(struct qtable *t, lct_str qualname)
{
    qentry key = {.qualname = qualname};
    qentry *e = RB_FIND(qtable, t, &key);
    if (e)
        return e;
    /* The key is copied: a streamed reader's views die at the next record. */
    e = calloc(1, sizeof *e + qualname.len);
    if (!e) {
        fprintf(stderr, "%s: out of memory\n", tool_name);
        return NULL;
    }
    char *copy = (char *)(e + 1);
    if (qualname.len)
        memcpy(copy, qualname.ptr, qualname.len);
    e->qualname = (lct_str){copy, qualname.len};
    RB_INSERT(qtable, t, e);
    return e;
}

/* A gap of e's ends at `offset`: the largest so far?  Going back? */
static void note_gap(qentry *e, double gap, uint64_t offset, bool first_gap)
{
    if (first_gap || gap > e->gap_max) {
        e->gap_max = gap;
        e->gap_max_offset = offset;
    }
    e->backwards += gap < 0;
}

/* The cache slot of a qualname: its length and its last 8 bytes (fewer
 * when it is shorter), mixed. */
static unsigned qcache_slot(lct_str q)
{
    uint64_t tail = 0;
    if (q.len >= sizeof tail)
        memcpy(&tail, q.ptr + q.len - sizeof tail, sizeof tail);
    else if (q.len)
        memcpy(&tail, q.ptr, q.len);
    tail = (tail ^ q.len) * UINT64_C(0x9e3779b97f4a7c15);
    return (unsigned)(tail >> 60) % QCACHE_SLOTS;
}

/* Twice the room: realloc moves a large column by remapping its pages,
 * not by copying them. */
static size_t gaps_room(size_t cap)
{
    return cap ? cap * 2 : 64;
}

bool qtable_add(struct qtable *t, qcache *recent, const lct_record *rec,
                bool keep_gaps)
{
    qentry **slot = &recent->slot[qcache_slot(rec->qualname)];
    qentry *e = *slot;
    if (!e || lct_str_cmp(e->qualname, rec->qualname) != 0) {
        if (!(e = qtable_get(t, rec->qualname)))
            return false;
        *slot = e;
    }
    if (e->count == 0) {
        e->first = rec->t_mono;
        e->first_offset = rec->offset;
    } else {
        note_gap(e, rec->t_mono - e->last, rec->offset, e->count == 1);
    }
    if (e->count > 0 && keep_gaps) {
        if (e->ngaps == e->capgaps) {
            size_t cap = gaps_room(e->capgaps);
            double *g = reallocarray(e->gaps, cap, sizeof *g);
            if (!g) {
                fprintf(stderr, "%s: out of memory\n", tool_name);
                return false;
            }
            e->gaps = g;
            e->capgaps = cap;
        }
        e->gaps[e->ngaps++] = rec->t_mono - e->last;
    }
    e->last = rec->t_mono;
    e->count++;
    e->args_bytes += rec->args.len;
    return true;
}

bool qtable_merge(struct qtable *into, struct qtable *later, bool keep_gaps)
{
    qentry *e, *next;
    RB_FOREACH_SAFE(e, qtable, later, next) {
        RB_REMOVE(qtable, later, e);
        qentry *mine = RB_FIND(qtable, into, e);
        if (!mine) {
            RB_INSERT(qtable, into, e);
            continue;
        }
        if (keep_gaps) {
            size_t need = mine->ngaps + e->ngaps + 1;
            if (need > mine->capgaps) {
                double *g = reallocarray(mine->gaps, need, sizeof *g);
                if (!g) {
                    fprintf(stderr, "%s: out of memory\n", tool_name);
                    free(e->gaps);
                    free(e);
                    return false;
                }
                mine->gaps = g;
                mine->capgaps = need;
            }
            /* the gap across the seam between the two ranges */
            mine->gaps[mine->ngaps++] = e->first - mine->last;
            if (e->ngaps)
                memcpy(mine->gaps + mine->ngaps, e->gaps,
                       e->ngaps * sizeof *e->gaps);
            mine->ngaps += e->ngaps;
        }
        /* The gap across the seam, then the later part's own. */
        note_gap(mine, e->first - mine->last, e->first_offset,
                 mine->count == 1);
        if (e->count > 1) {
            bool larger = e->gap_max > mine->gap_max;
            mine->backwards += e->backwards;
            if (larger) {
                mine->gap_max = e->gap_max;
                mine->gap_max_offset = e->gap_max_offset;
            }
        }
        mine->count += e->count;
        mine->last = e->last;
        mine->args_bytes += e->args_bytes;
        free(e->gaps);
        free(e);
    }
    return true;
}

void qtable_free(struct qtable *t)
{
    qentry *e, *next;
    RB_FOREACH_SAFE(e, qtable, t, next) {
        RB_REMOVE(qtable, t, e);
        free(e->gaps);
        free(e);
    }
}

/* MARK: a run's tally */

static int tally(tool_tally *t, const lct_record *rec, bool keep_gaps)
{
    if (!qtable_add(&t->ops, &t->recent, rec, keep_gaps))
        return 1;
    /* duration: the largest t_mono, even a negative one */
    if (t->total == 0 || rec->t_mono > t->duration)
        t->duration = rec->t_mono;
    t->total++;
    return 0;
}

int tool_tally_counts(void *state, const lct_record *rec)
{
    return tally(state, rec, false);
}

int tool_tally_gaps(void *state, const lct_record *rec)
{
    return tally(state, rec, true);
}

static void tally_reset(void *state)
{
    tool_tally_free(state);
}

bool tool_tally_run(tool_inputs *in, const tool_args *a, size_t state_size,
                    tool_record_fn on_record, bool keep_gaps, tool_tally *out,
                    lct_stats *st)
{
    tool_run run;
    bool ok = tool_records_in(in, a->jobs, a->quiet, state_size, on_record,
                           tally_reset,
                           a->quiet ? tool_log_quiet : tool_log, NULL, &run);
    *st = run.stats;
    /* Merge the threads' tallies, in file order, into the first. */
    tool_tally *all = tool_run_state(&run, 0);
    *out = *all;
    /* later tallies' entries are freed or moved into out's */
    memset(&out->recent, 0, sizeof out->recent);
    for (unsigned t = 1; t < run.nstates; t++) {
        tool_tally *p = tool_run_state(&run, t);
        if (ok && !qtable_merge(&out->ops, &p->ops, keep_gaps))
            ok = false;
        qtable_free(&p->ops);
        if (p->total && (p->duration > out->duration || out->total == 0))
            out->duration = p->duration;
        out->total += p->total;
    }
    tool_run_free(&run);
    return ok;
}

void tool_tally_free(tool_tally *t)
{
    qtable_free(&t->ops);
}
