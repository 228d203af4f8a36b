/*
 * replay.h - what `lct replay`'s two files share: a finished run (its
 * backend's name and the library's report) and the ways it is printed
 * (replay_out.c): the terminal table, LMCache's ops CSV and summary JSON,
 * and the side-by-side comparison.
 */
#ifndef LCT_TOOL_REPLAY_H
#define LCT_TOOL_REPLAY_H

#include <stdio.h>

#include "lct.h"
#include "tool.h"

typedef struct replay_run {
    const char *backend; /* the URI */
    const char *file;
    lct_replay_options opts;
    lct_replay_report report;
    bool interrupted;
    /* redis: commands a connection keeps outstanding, connections a
     * worker has (0: not a pipelining backend) */
    unsigned wire_pipeline, wire_connections;
} replay_run;

/* Hit ratio over every reference whose outcome is known (lookups, and
 * stores that said whether their key was there); -1 when none said. */
double replay_reference_hit_ratio(const lct_replay_report *r);
void replay_print_table(FILE *f, const replay_run *run);
/* LMCache's trace_replay_ops.csv: qualname (here the operation), count,
 * errors, mean_ms ... max_ms; "%.6f"; CR LF, as Python's csv writes. */
void replay_write_ops_csv(FILE *f, const replay_run *run);
/* LMCache's trace_replay_summary.json (duration_s, ops), indent 2 and
 * keys sorted as json.dump writes it, with what LMCache's lacks beside. */
void replay_write_summary_json(FILE *f, const replay_run *run);
void replay_write_compare_json(FILE *f, const replay_run *a,
                               const replay_run *b);
void replay_print_compare(FILE *f, const replay_run *a, const replay_run *b);
/* The ops CSV of both, a backend column first. */
void replay_write_compare_csv(FILE *f, const replay_run *a,
                              const replay_run *b);

/* MARK: what cmd_replay.c lends replay_l2.c */

/* The backend a URI names (redis when built), or a usage error. */
void replay_find_backend(const char *uri, const lct_backend_ops **ops,
                         const char **arg);
/* --output-dir made when missing; false after a message. */
bool replay_prepare_output_dir(const char *dir);
/* --compare's directory for backend `which` (0: A) under dir. */
void replay_compare_dir(char *out, size_t size, const char *dir, int which,
                        const char *uri);

/* MARK: an L2-level trace (replay_l2.c) */

typedef struct replay_l2_opts {
    lct_l2_replay_options run;
    lct_backend_config cfg;
    const char *output_dir;
    const char *trace; /* the trace as reports name it */
} replay_l2_opts;

/* Replay r against a_uri (and b_uri: --compare), print, write
 * l2_replay_stats.json under output_dir; the exit status. */
int replay_l2(const replay_l2_opts *o, lct_reader *r, const char *a_uri,
              const char *b_uri, const tool_args *a);

#endif
