/*
 * replay_l2.c - `lct replay` of an L2-level trace (lct_l2_replay_run):
 * one backend or two (--compare), the report as a table, as the JSON of
 * the fork's l2_replay_stats.json (--json, and the file itself under
 * --output-dir), with its keys and figures.
 */
#include "replay.h"
#include "tool.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

typedef struct l2_result {
    const char *backend;
    lct_l2_replay_report report;
    bool ran;
} l2_result;

/* MARK: printing */

static void side_row(FILE *f, const char *name,
                     const lct_l2_replay_side *s)
{
    fprintf(f, "%-14s %9" PRIu64 " %9" PRIu64, name, s->submitted,
            s->completed);
    const double v[] = {s->mean_us, s->p50_us, s->p90_us,
                        s->p99_us,  s->min_us, s->max_us};
    for (int i = 0; i < 6; i++)
        fprintf(f, " %10.1f", v[i]);
    fprintf(f, " %14" PRIu64 " %8.3f\n", s->total_bytes, s->throughput_gbps);
}

static void print_table(FILE *f, const char *file, const l2_result *x,
                        double speed)
{
    const lct_l2_replay_report *r = &x->report;
    fputs("L2 replay of ", f);
    tool_put_vis(f, file, strlen(file));
    fprintf(f, " against %s: %" PRIu64 " of %" PRIu64
               " submissions, speed %g%s\n",
            x->backend, r->operations_selected, r->source_operations_total,
            speed, speed > 0 ? "" : " (as fast as it goes)");
    if (r->prepared)
        fprintf(f, "prepared %" PRIu64 " objects (%" PRIu64
                   " bytes) in %.3f s\n",
                r->prepared_objects, r->prepared_bytes, r->prepare_seconds);
    fprintf(f, "%-14s %9s %9s %10s %10s %10s %10s %10s %10s %14s %8s\n",
            "side", "submitted", "completed", "mean_us", "p50_us", "p90_us",
            "p99_us", "min_us", "max_us", "bytes", "GB/s");
    side_row(f, "read (load)", &r->read);
    side_row(f, "write (store)", &r->write);
    fprintf(f, "submitted: %" PRIu64 " stores, %" PRIu64 " lookups, %" PRIu64
               " loads, %" PRIu64 " unlocks, %" PRIu64 " deletes\n",
            r->submitted[LCT_L2_STORE], r->submitted[LCT_L2_LOOKUP],
            r->submitted[LCT_L2_LOAD], r->submitted[LCT_L2_UNLOCK],
            r->submitted[LCT_L2_DELETE]);
    fprintf(f, "schedule lag: mean %.6f s, max %.6f s; dependency wait: "
               "total %.6f s, max %.6f s\n",
            r->lag_mean, r->lag_max, r->dependency_wait_total,
            r->dependency_wait_max);
    fprintf(f, "replay %.6f s (submissions over %.6f s, the source's "
               "%.6f s; drain %.6f s): %.1f MB/s\n",
            r->total_seconds, r->actual_window, r->source_window,
            r->drain_seconds, r->throughput / 1e6);
    uint64_t compared = r->compared[0] + r->compared[1] + r->compared[2];
    fprintf(f, "outcomes: %" PRIu64 " compared with the source (%" PRIu64
               " stores, %" PRIu64 " lookups, %" PRIu64 " loads): %" PRIu64
               " differ\n",
            compared, r->compared[0], r->compared[1], r->compared[2],
            r->mismatches);
    for (unsigned i = 0; i < r->nsamples; i++)
        fprintf(f, "  differs: %s\n", r->samples[i]);
    if (r->backend_errors)
        fprintf(f, "backend errors: %" PRIu64 " (the first: %s)\n",
                r->backend_errors, r->first_error);
    if (r->partial)
        fprintf(f, "PARTIAL: %s\n",
                r->stalled ? "the backend answered nothing for --stall "
                             "seconds: submissions not yet dispatched were "
                             "dropped"
                : r->too_many_errors
                    ? "stopped after --max-errors errors: submissions not "
                      "yet dispatched were dropped"
                : tool_interrupted
                    ? "interrupted: submissions not yet dispatched were "
                      "dropped"
                    : "no submission completed for the drain timeout: "
                      "the rest were dropped");
}

static void json_num(FILE *f, const char *name, double v, bool *first)
{
    fprintf(f, "%s\"%s\":", *first ? "" : ",", name);
    tool_put_json_double_to(f, v);
    *first = false;
}

static void json_side(FILE *f, const char *backend,
                      const lct_l2_replay_side *s)
{
    fputc('{', f);
    tool_put_json_str_to(f, backend, strlen(backend));
    fprintf(f, ":{\"submitted\":%" PRIu64 ",\"completed\":%" PRIu64
               ",\"unmatched_completed\":0,\"samples\":%" PRIu64
               ",\"total_bytes\":%" PRIu64,
            s->submitted, s->completed, s->completed, s->total_bytes);
    if (!s->completed) {
        fputs(",\"average_latency_us\":null,\"p50_latency_us\":null,"
              "\"p90_latency_us\":null,\"p99_latency_us\":null,"
              "\"min_latency_us\":null,\"max_latency_us\":null,"
              "\"aggregate_throughput_gbps\":null}}",
              f);
        return;
    }
    const char *names[] = {"average_latency_us", "p50_latency_us",
                           "p90_latency_us",     "p99_latency_us",
                           "min_latency_us",     "max_latency_us",
                           "aggregate_throughput_gbps"};
    const double v[] = {s->mean_us, s->p50_us, s->p90_us, s->p99_us,
                        s->min_us,  s->max_us, s->throughput_gbps};
    for (int i = 0; i < 7; i++) {
        fprintf(f, ",\"%s\":", names[i]);
        tool_put_json_double_to(f, v[i]);
    }
    fputs("}}", f);
}

static void json_counts(FILE *f, const char *name, const uint64_t *v,
                        bool all)
{
    fprintf(f, ",\"%s\":{", name);
    bool first = true;
    for (int k = 0; k < LCT_L2_OPS; k++) {
        if (!v[k] && !all)
            continue;
        fprintf(f, "%s\"%s\":%" PRIu64, first ? "" : ",",
                lct_l2_op_name((lct_l2_op)k), v[k]);
        first = false;
    }
    fputc('}', f);
}

/* The fork's l2_replay_stats.json: its latency snapshot's keys, then its
 * driver's. */
static void print_json(FILE *f, const l2_result *x, const lct_l2_replay_options *o)
{
    const lct_l2_replay_report *r = &x->report;
    fputs("{\"schema_version\":1,\"latency_unit\":\"microseconds\","
          "\"sample_encoding\":\"uint32\",\"operations\":{\"read\":",
          f);
    json_side(f, x->backend, &r->read);
    fputs(",\"write\":", f);
    json_side(f, x->backend, &r->write);
    fprintf(f, "},\"pending\":{\"read\":%" PRIu64 ",\"write\":%" PRIu64 "},",
            r->read.submitted - r->read.completed,
            r->write.submitted - r->write.completed);
    bool first = true;
    json_num(f, "speedup", o->speed, &first);
    json_num(f, "trace_percent",
             o->trace_percent > 0 ? o->trace_percent : 100, &first);
    fprintf(f, ",\"source_operations_total\":%" PRIu64
               ",\"operations_selected\":%" PRIu64,
            r->source_operations_total, r->operations_selected);
    json_num(f, "source_submission_window_seconds", r->source_window, &first);
    json_num(f, "actual_submission_window_seconds", r->actual_window, &first);
    json_num(f, "total_replay_seconds", r->total_seconds, &first);
    json_num(f, "drain_seconds", r->drain_seconds, &first);
    json_num(f, "max_schedule_lag_seconds", r->lag_max, &first);
    json_num(f, "mean_schedule_lag_seconds", r->lag_mean, &first);
    json_num(f, "max_dependency_wait_seconds", r->dependency_wait_max, &first);
    json_num(f, "total_dependency_wait_seconds", r->dependency_wait_total,
             &first);
    json_counts(f, "operations_submitted", r->submitted, false);
    uint64_t bytes[LCT_L2_OPS] = {r->bytes_submitted[LCT_L2_STORE], 0,
                                  r->bytes_submitted[LCT_L2_LOAD], 0, 0};
    json_counts(f, "bytes_submitted", bytes, false);
    fprintf(f, ",\"total_bytes_submitted\":%" PRIu64, r->total_bytes_submitted);
    json_num(f, "throughput_bytes_per_second", r->throughput, &first);
    fprintf(f, ",\"outcome_matches_source\":%s",
            r->mismatches ? "false" : "true");
    json_counts(f, "outcome_comparisons", r->compared, false);
    fprintf(f, ",\"outcome_mismatch_count\":%" PRIu64, r->mismatches);
    json_counts(f, "outcome_mismatch_counts", r->mismatched, false);
    uint64_t compared = r->compared[0] + r->compared[1] + r->compared[2];
    json_num(f, "outcome_mismatch_rate",
             compared ? (double)r->mismatches / (double)compared : 0, &first);
    fputs(",\"outcome_mismatch_samples\":[", f);
    for (unsigned i = 0; i < r->nsamples; i++) {
        fputs(i ? "," : "", f);
        tool_put_json_str_to(f, r->samples[i], strlen(r->samples[i]));
    }
    fprintf(f, "],\"operations_without_outcome_comparison\":{\"unlock\":%"
               PRIu64 ",\"delete\":%" PRIu64 "}",
            r->submitted[LCT_L2_UNLOCK], r->submitted[LCT_L2_DELETE]);
    if (r->prepared)
        fprintf(f, ",\"prepare\":{\"prepared_objects\":%" PRIu64
                   ",\"prepared_bytes\":%" PRIu64 ",\"elapsed_seconds\":",
                r->prepared_objects, r->prepared_bytes);
    if (r->prepared) {
        tool_put_json_double_to(f, r->prepare_seconds);
        fputc('}', f);
    }
    fprintf(f, ",\"backend_errors\":%" PRIu64 ",\"partial\":%s"
               ",\"stalled\":%s,\"too_many_errors\":%s}",
            r->backend_errors, r->partial ? "true" : "false",
            r->stalled ? "true" : "false",
            r->too_many_errors ? "true" : "false");
}

/* --compare: each figure of A and B in a row. */
static void print_compare(FILE *f, const char *file, const l2_result *x)
{
    const lct_l2_replay_report *a = &x[0].report, *b = &x[1].report;
    fputs("L2 replay of ", f);
    tool_put_vis(f, file, strlen(file));
    fprintf(f, ": A = %s, B = %s\n%-34s %16s %16s\n", x[0].backend,
            x[1].backend, "figure", "A", "B");
    struct {
        const char *name;
        double a, b;
    } rows[] = {
        {"read (load) completed", (double)a->read.completed,
         (double)b->read.completed},
        {"read mean_us", a->read.mean_us, b->read.mean_us},
        {"read p50_us", a->read.p50_us, b->read.p50_us},
        {"read p90_us", a->read.p90_us, b->read.p90_us},
        {"read p99_us", a->read.p99_us, b->read.p99_us},
        {"read max_us", a->read.max_us, b->read.max_us},
        {"read GB/s", a->read.throughput_gbps, b->read.throughput_gbps},
        {"write (store) completed", (double)a->write.completed,
         (double)b->write.completed},
        {"write mean_us", a->write.mean_us, b->write.mean_us},
        {"write p50_us", a->write.p50_us, b->write.p50_us},
        {"write p90_us", a->write.p90_us, b->write.p90_us},
        {"write p99_us", a->write.p99_us, b->write.p99_us},
        {"write max_us", a->write.max_us, b->write.max_us},
        {"write GB/s", a->write.throughput_gbps, b->write.throughput_gbps},
        {"schedule lag mean s", a->lag_mean, b->lag_mean},
        {"schedule lag max s", a->lag_max, b->lag_max},
        {"dependency wait total s", a->dependency_wait_total,
         b->dependency_wait_total},
        {"replay s", a->total_seconds, b->total_seconds},
        {"drain s", a->drain_seconds, b->drain_seconds},
        {"MB/s", a->throughput / 1e6, b->throughput / 1e6},
        {"outcomes that differ", (double)a->mismatches,
         (double)b->mismatches},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
        fprintf(f, "%-34s %16.6g %16.6g\n", rows[i].name, rows[i].a,
                rows[i].b);
}

/* MARK: running */

static bool run_one(const replay_l2_opts *o, lct_reader *r, const char *uri,
                    bool quiet, l2_result *out)
{
    const lct_backend_ops *ops;
    const char *arg;
    replay_find_backend(uri, &ops, &arg);
    lct_backend_config cfg = o->cfg;
    cfg.workers = o->run.workers ? o->run.workers : 4;
    cfg.value_bytes = o->run.value_bytes;
    void *state = NULL;
    lct_error err;
    lct_status opened = ops->open(arg, &cfg, &state, &err);
    if (opened == LCT_ERR_INVALID)
        tool_usage_error("replay", "%s", err.message);
    if (opened != LCT_OK) {
        fprintf(stderr, "%s replay: %s\n", tool_name, err.message);
        return false;
    }
    (void)quiet;
    *out = (l2_result){.backend = uri};
    lct_status st = lct_l2_replay_run(r, ops, state, &o->run, &out->report,
                                      &err);
    ops->close(state);
    if (st != LCT_OK) {
        fprintf(stderr, "%s replay: ", tool_name);
        tool_put_vis(stderr, lct_reader_path(r), strlen(lct_reader_path(r)));
        fprintf(stderr, ": %s\n", err.message);
        return false;
    }
    out->ran = true;
    return true;
}

static bool write_stats(const char *dir, const l2_result *x,
                        const replay_l2_opts *o, const tool_args *a)
{
    char path[4200];
    snprintf(path, sizeof path, "%.4096s/l2_replay_stats.json", dir);
    outfile *out = tool_output_open("replay", "--output-dir", path, a);
    FILE *f = out ? tool_output_stream("replay", out) : NULL;
    if (!f)
        return false;
    print_json(f, x, &o->run);
    fputc('\n', f);
    return tool_output_finish("replay", out, f);
}

static int exit_for(const l2_result *x)
{
    return x->report.partial || x->report.backend_errors ? EXIT_REFUSED
                                                         : EXIT_OK;
}

int replay_l2(const replay_l2_opts *o, lct_reader *r, const char *a_uri,
              const char *b_uri, const tool_args *a)
{
    l2_result x[2];
    int n = b_uri ? 2 : 1;
    const char *uris[2] = {a_uri, b_uri};
    for (int i = 0; i < n; i++) {
        if (i)
            lct_reader_rewind(r);
        if (!run_one(o, r, uris[i], a->quiet, &x[i]))
            return EXIT_REFUSED;
    }
    if (a->json && n == 2) {
        fputs("{\"a\":", stdout);
        print_json(stdout, &x[0], &o->run);
        fputs(",\"b\":", stdout);
        print_json(stdout, &x[1], &o->run);
        fputs("}\n", stdout);
    } else if (a->json) {
        print_json(stdout, &x[0], &o->run);
        fputc('\n', stdout);
    } else if (n == 2) {
        print_compare(stdout, o->trace, x);
    } else {
        print_table(stdout, o->trace, &x[0], o->run.speed);
    }
    for (int i = 0; i < n; i++) {
        if (o->output_dir) {
            char dir[4096];
            if (n == 2)
                replay_compare_dir(dir, sizeof dir, o->output_dir, i, uris[i]);
            else
                snprintf(dir, sizeof dir, "%s", o->output_dir);
            if (!replay_prepare_output_dir(dir) || !write_stats(dir, &x[i], o, a))
                return EXIT_REFUSED;
        }
    }
    for (int i = 0; i < n && !a->quiet; i++)
        if (x[i].report.mismatches)
            fprintf(stderr, "%s replay: WARNING: %s: %" PRIu64
                            " outcomes differ from the source's (the report "
                            "samples them)\n",
                    tool_name, x[i].backend, x[i].report.mismatches);
    int rc = exit_for(&x[0]);
    return n == 2 && rc == EXIT_OK ? exit_for(&x[1]) : rc;
}
