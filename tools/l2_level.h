/*
 * l2_level.h - what the tools read from an L2-level trace (level "l2",
 * the L2TraceRecorder of LMCache's l2-tracing fork): each adapter's
 * tasks, a submission paired with its completion by (operation,
 * adapter_index, task_id); the footer (l2.trace.end) and its drop
 * counts.  lct info prints the counts, lct stat the latencies, bytes and
 * ratios, lct check the footer's verdict (l2_level.c reads, l2_print.c
 * prints).
 */
#ifndef LCT_TOOL_L2_LEVEL_H
#define LCT_TOOL_L2_LEVEL_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/tree.h>

#include "lct.h"

/* The level's event kinds: three tasks with completions, two calls
 * without. */
typedef enum tool_l2_kind {
    TOOL_L2_STORE,
    TOOL_L2_LOOKUP,
    TOOL_L2_LOAD,
    TOOL_L2_UNLOCK,
    TOOL_L2_DELETE,
    TOOL_L2_KINDS
} tool_l2_kind;

/* Adapter indices told apart; a larger one is counted as this last. */
#define TOOL_L2_ADAPTERS 64

typedef struct tool_l2_latencies { /* seconds */
    double *v;
    size_t n, cap;
    double sum, min, max;
} tool_l2_latencies;

/* One kind on one adapter. */
typedef struct tool_l2_tasks {
    uint64_t submitted, completed;
    uint64_t unpaired;         /* submitted, never completed */
    uint64_t orphans;          /* completed, never submitted */
    uint64_t keys;             /* keys submitted */
    uint64_t completed_keys;   /* keys of the tasks that completed */
    uint64_t found;            /* lookup: hit_indices; load:
                                  success_indices; store: succeeded */
    uint64_t failed;           /* store: failed_count */
    uint64_t bytes;            /* store: bytes_transferred; load: the
                                  object_sizes of the successes */
    double first, last;        /* first submission, last completion */
    tool_l2_latencies latency;
} tool_l2_tasks;

typedef struct tool_l2_open tool_l2_open; /* a submission not completed */
RB_HEAD(tool_l2_open_tree, tool_l2_open);

typedef struct tool_l2 {
    bool seen[TOOL_L2_ADAPTERS];
    tool_l2_tasks k[TOOL_L2_ADAPTERS][TOOL_L2_KINDS];
    struct tool_l2_open_tree open;
    uint64_t footers, recorder_dropped, event_bus_dropped;
    uint64_t unreadable; /* L2 records whose fields could not be read */
    bool failed;         /* memory ran out */
} tool_l2;

/* The footer's name. */
#define TOOL_L2_FOOTER "l2.trace.end"

void tool_l2_init(tool_l2 *l2);
/* One record, in file order (others than the level's pass by). */
void tool_l2_add(tool_l2 *l2, const lct_record *rec);
/* After the last record: the unpaired counted, percentiles ready. */
void tool_l2_finish(tool_l2 *l2);
void tool_l2_free(tool_l2 *l2);

/* What is wrong with the footer, as a sentence (missing, repeated, or
 * drops), or false when nothing is. */
bool tool_l2_footer_problem(uint64_t footers, uint64_t recorder_dropped,
                            uint64_t event_bus_dropped, char *msg,
                            size_t size);
/* A footer record's drop counts added to *recorder and *bus; false when
 * they cannot be read. */
bool tool_l2_footer_counts(const lct_record *rec, uint64_t *recorder,
                           uint64_t *bus);

/* "store", "lookup", "load", "unlock", "delete". */
const char *tool_l2_kind_name(unsigned kind);

/* lct info's block: adapters, submitted and completed per kind, the
 * footer. */
void tool_l2_print_info(const tool_l2 *l2);
void tool_l2_print_info_json(const tool_l2 *l2);
/* lct stat's table, per adapter and kind. */
void tool_l2_print_stat(const tool_l2 *l2, bool json, bool csv);

#endif
