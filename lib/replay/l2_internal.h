/*
 * l2_internal.h - what an L2-level replay's two parts share: the plan
 * (l2_plan.c: the trace read whole into submissions, their keys, the
 * source's outcomes, the dependencies and the objects to prepare, as the
 * fork's L2TracePlan derives them) and the run (l2_run.c: the
 * submissions due and ready handed to workers, timed and compared).
 */
#ifndef LCT_L2_INTERNAL_H
#define LCT_L2_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "lct_replay.h"

/* An object: its key's id (lct_object_key_hash) and what it weighs. */
typedef struct lct__l2obj {
    uint64_t id, bytes;
} lct__l2obj;

/* One submission of the source adapter. */
typedef struct lct__l2sub {
    uint64_t seq;          /* the record's place in the trace */
    double t_mono;
    uint64_t task;         /* store, lookup, load: task_id */
    uint64_t request;      /* request_id, when has_request */
    uint32_t obj0, nobj;   /* its objects: plan.objs[obj0 ..] */
    uint32_t dep0, ndeps;  /* the submissions it waits for */
    uint32_t out0, nout;   /* the source's hit or success indices */
    uint64_t complete_seq; /* its completion's place (0: none seen) */
    uint8_t op;            /* lct_l2_op */
    bool has_request, completed, store_ok;
} lct__l2sub;

typedef struct lct__l2plan {
    lct__l2sub *subs;
    size_t nsubs;
    lct__l2obj *objs;
    size_t nobjs;
    uint32_t *deps, *outs;
    size_t ndeps, nouts;
    lct__l2obj *prepare; /* objects to store first */
    size_t nprepare;
    uint64_t source_total; /* the adapter's submissions in the trace */
    uint64_t adapter;      /* the source adapter */
} lct__l2plan;

/* Read the trace into a plan of opts' adapter and share.  LCT_OK, or a
 * failure err explains (the plan is then empty). */
lct_status lct__l2_plan(lct_reader *reader, const lct_l2_replay_options *o,
                        lct__l2plan *plan, lct_error *err);
void lct__l2_plan_free(lct__l2plan *plan);
/* The plan's dependencies and objects to prepare (l2_deps.c), once its
 * outcomes are matched: LCT_OK or LCT_ERR_NOMEM. */
lct_status lct__l2_dependencies(lct__l2plan *plan);

#endif
