/*
 * replay_out.c - printing a replay: the terminal table, LMCache's
 * replay files (trace_replay_ops.csv, trace_replay_summary.json, the
 * shapes lmcache trace replay writes, so scripts that read those read
 * ours) and two runs side by side.
 */
#include "replay.h"
#include "tool.h"

#include <inttypes.h>
#include <string.h>

double replay_reference_hit_ratio(const lct_replay_report *r)
{
    uint64_t refs = r->lookups + r->stores_known;
    if (refs == 0 || (r->stores_known == 0 &&
                      r->latency[LCT_REPLAY_STORE].count > r->fills))
        return -1;
    return (double)(r->hits + r->stores_replaced) / (double)refs;
}

/* Whether the banner names the L1's policy: only when it is not LRU. */
static bool l1_policy_said(lct_policy_kind k)
{
    return k && k != LCT_POLICY_LRU;
}

static double per_s(double n, double seconds)
{
    return seconds > 0 ? n / seconds : 0;
}

static void print_ops(FILE *f, const lct_replay_report *r)
{
    fprintf(f, "%-7s %9s %6s %9s %9s %9s %9s %9s %9s %11s %9s\n", "op",
            "count", "errors", "mean_ms", "p50_ms", "p90_ms", "p99_ms",
            "min_ms", "max_ms", "ops/s", "MB/s");
    for (unsigned k = 0; k < LCT_REPLAY_KINDS; k++) {
        const lct_replay_dist *d = &r->latency[k];
        if (d->count == 0 && r->errors[k] == 0)
            continue;
        fprintf(f,
                "%-7s %9" PRIu64 " %6" PRIu64
                " %9.3f %9.3f %9.3f %9.3f %9.3f %9.3f %11.0f %9.1f\n",
                lct_replay_kind_name((lct_replay_kind)k), d->count,
                r->errors[k], d->mean * 1e3, d->p50 * 1e3, d->p90 * 1e3,
                d->p99 * 1e3, d->min * 1e3, d->max * 1e3,
                per_s((double)d->count, r->duration),
                per_s((double)r->bytes[k] / 1e6, r->duration));
    }
}

static void print_extras(FILE *f, const lct_replay_report *r)
{
    if (r->paced)
        fprintf(f, "schedule lag: p50 %.3f ms, p99 %.3f ms, max %.3f ms\n",
                r->lag.p50 * 1e3, r->lag.p99 * 1e3, r->lag.max * 1e3);
    else
        fprintf(f, "schedule lag: not paced (--speed 0)\n");
    if (r->lookups) {
        fprintf(f, "lookups: %" PRIu64 ", hits %" PRIu64 " (hit ratio %.4f)\n",
                r->lookups, r->hits, (double)r->hits / (double)r->lookups);
        fprintf(f, "loaded by the calls' policies: %" PRIu64 " keys (%.4f of "
                "the lookups); prefix rule: %" PRIu64 " of %" PRIu64
                " chunks hit (token hit ratio %.4f)\n", r->kept,
                (double)r->kept / (double)r->lookups, r->chunks_hit,
                r->chunks,
                r->chunks ? (double)r->chunks_hit / (double)r->chunks : 0);
    }
    if (r->calls_sparse || r->calls_warm || r->calls_skip_l2)
        fprintf(f, "prefetch calls: %" PRIu64 " not PREFIX (every found key "
                "loaded), %" PRIu64 " WARM (every key asked), %" PRIu64
                " skip_l2 (nothing asked)\n", r->calls_sparse, r->calls_warm,
                r->calls_skip_l2);
    if (r->has_l1) {
        const lct_l1_stats *l1 = &r->l1;
        fprintf(f, "L1 of %" PRIu64 " %s: served %" PRIu64 " of %" PRIu64
                " looked-up keys (%.4f) and %" PRIu64 " of %" PRIu64
                " chunk positions; asked the backend %" PRIu64
                " keys; wrote %" PRIu64 " stores through\n",
                l1->capacity, l1->in_bytes ? "bytes" : "keys", l1->keys_hit,
                l1->keys,
                l1->keys ? (double)l1->keys_hit / (double)l1->keys : 0,
                l1->positions_hit, l1->positions, l1->keys_to_l2, l1->writes);
    }
    double ref = replay_reference_hit_ratio(r);
    if (ref >= 0)
        fprintf(f, "every reference (lookups and stores): hit ratio %.4f\n",
                ref);
    if (r->fills)
        fprintf(f, "stores on a miss (--fill-on-miss): %" PRIu64 "\n",
                r->fills);
    fprintf(f, "operations outstanding at most: %" PRIu64 " (%u worker%s)\n",
            r->inflight_max, r->workers, r->workers == 1 ? "" : "s");
    fprintf(f, "causal waits: %" PRIu64 ", %.3f ms in all, max %.3f ms\n",
            r->causal.count, r->causal.total * 1e3, r->causal.max * 1e3);
    if (r->loads_missing || r->corrupt)
        fprintf(f, "loads: %" PRIu64 " found the key gone, %" PRIu64
                " returned other bytes\n", r->loads_missing, r->corrupt);
    for (unsigned i = 0; i < r->nerror_kinds; i++) {
        fprintf(f, "errors: %s %" PRIu64 " (first: ", r->error_kinds[i].kind,
                r->error_kinds[i].count);
        tool_put_message(f, r->error_kinds[i].first);
        fprintf(f, ")\n");
    }
    if (r->errors_other)
        fprintf(f, "errors: %" PRIu64 " of other kinds\n", r->errors_other);
}

static void print_calls(FILE *f, const lct_replay_report *r)
{
    if (r->keys_unreadable)
        fprintf(f, "records whose keys could not be read: %" PRIu64 "\n",
                r->keys_unreadable);
    if (r->finish_unreserved || r->reserved_unfinished)
        fprintf(f, "keys finished but never reserved: %" PRIu64
                "; reserved but never finished: %" PRIu64 "\n",
                r->finish_unreserved, r->reserved_unfinished);
    if (r->unsized)
        fprintf(f, "keys of no known size (stored as 0 bytes): %" PRIu64
                "\n", r->unsized);
    if (r->clamped)
        fprintf(f, "keys over 1 GiB (stored as 1 GiB): %" PRIu64 "\n",
                r->clamped);
    for (unsigned i = 0; i < r->ncalls; i++) {
        fprintf(f, "counted, not issued: %9" PRIu64 "  ", r->calls[i].count);
        tool_put_vis(f, r->calls[i].qualname, strlen(r->calls[i].qualname));
        fputc('\n', f);
    }
    if (r->calls_other)
        fprintf(f, "counted, not issued: %9" PRIu64 "  (other calls)\n",
                r->calls_other);
}

void replay_print_table(FILE *f, const replay_run *run)
{
    const lct_replay_report *r = &run->report;
    const char *file = tool_input_name(run->file); /* "-": <stdin> */
    fprintf(f, "replay of ");
    tool_put_vis(f, file, strlen(file));
    fprintf(f, " against ");
    tool_put_vis(f, run->backend, strlen(run->backend));
    if (run->opts.speed > 0)
        fprintf(f, " at speed %g", run->opts.speed);
    else
        fprintf(f, " as fast as it goes");
    /* Operations are what the engine hands the backend; commands are
     * what a pipelining backend has sent and not yet had answered. */
    fprintf(f, ", operations outstanding %u, %u worker%s",
            run->opts.inflight ? run->opts.inflight : 1, run->report.workers,
            run->report.workers == 1 ? "" : "s");
    if (run->wire_pipeline)
        fprintf(f, "; commands on the wire at most %u a connection, %u "
                "connection%s a worker",
                run->wire_pipeline, run->wire_connections,
                run->wire_connections == 1 ? "" : "s");
    fputc('\n', f);
    if (run->opts.l1_capacity)
        fprintf(f, "an L1 of %" PRIu64 " %s%s%s in front: lookups from its "
                "first miss on reach the backend; stores are written "
                "through\n",
                run->opts.l1_capacity, run->opts.l1_in_bytes ? "bytes" : "keys",
                l1_policy_said(run->opts.l1_policy) ? ", evicting by " : "",
                l1_policy_said(run->opts.l1_policy)
                    ? lct_policy_name(run->opts.l1_policy)
                    : "");
    else
        fprintf(f, "no L1: every lookup reaches the backend; loads follow "
                "each call's policy (PREFIX: the leading chunks found)\n");
    fprintf(f, "records: %" PRIu64 " read, %" PRIu64
            " gave operations; %.3f s, %.3f s of it reading and planning\n",
            r->records, r->records_issued, r->duration, r->planning);
    print_ops(f, r);
    print_extras(f, r);
    print_calls(f, r);
    fprintf(f, "percentiles: nearest rank over log-bucketed histograms, "
               "each within %.2f%% of the true value\n",
            LCT_REPLAY_HIST_ERROR * 100);
    if (r->partial)
        fprintf(f, "PARTIAL: %s\n",
                r->stalled ? "the backend answered nothing for --stall "
                             "seconds: operations not yet sent were dropped"
                : r->too_many_errors
                    ? "stopped after --max-errors errors; what was in "
                      "flight was drained"
                    : "interrupted: operations not yet sent were dropped");
}

/* The kinds by name, as LMCache sorts its rows and json.dump its keys:
 * delete, load, lookup, store. */
static const lct_replay_kind sorted_kinds[] = {
    LCT_REPLAY_DELETE, LCT_REPLAY_LOAD, LCT_REPLAY_LOOKUP, LCT_REPLAY_STORE};

static void ops_csv_rows(FILE *f, const replay_run *run, bool named)
{
    const lct_replay_report *r = &run->report;
    const lct_replay_kind *order = sorted_kinds;
    for (size_t i = 0; i < 4; i++) {
        const lct_replay_dist *d = &r->latency[order[i]];
        if (d->count == 0 && r->errors[order[i]] == 0)
            continue;
        if (named) {
            tool_put_csv(f, run->backend, strlen(run->backend));
            fputc(',', f);
        }
        fprintf(f, "%s,%" PRIu64 ",%" PRIu64
                   ",%.6f,%.6f,%.6f,%.6f,%.6f,%.6f\r\n",
                lct_replay_kind_name(order[i]), d->count, r->errors[order[i]],
                d->mean * 1e3, d->p50 * 1e3, d->p90 * 1e3, d->p99 * 1e3,
                d->min * 1e3, d->max * 1e3);
    }
}

void replay_write_ops_csv(FILE *f, const replay_run *run)
{
    fprintf(f, "qualname,count,errors,mean_ms,p50_ms,p90_ms,p99_ms,min_ms,"
               "max_ms\r\n");
    ops_csv_rows(f, run, false);
}

void replay_write_compare_csv(FILE *f, const replay_run *a,
                              const replay_run *b)
{
    fprintf(f, "backend,qualname,count,errors,mean_ms,p50_ms,p90_ms,p99_ms,"
               "min_ms,max_ms\r\n");
    ops_csv_rows(f, a, true);
    ops_csv_rows(f, b, true);
}

/* JSON as Python's json.dump(indent=2, sort_keys=True) lays it out: the
 * callers give keys in sorted order. */
typedef struct jw {
    FILE *f;
    int depth;
    bool first[8];
} jw;

static void jkey(jw *w, const char *key)
{
    fputs(w->first[w->depth] ? "\n" : ",\n", w->f);
    w->first[w->depth] = false;
    fprintf(w->f, "%*s", 2 * w->depth, "");
    lct_json_write_string(key, strlen(key), tool_file_write, w->f);
    fputs(": ", w->f);
}

static void jbegin(jw *w)
{
    fputc('{', w->f);
    w->first[++w->depth] = true;
}

static void jend(jw *w)
{
    if (!w->first[w->depth--])
        fprintf(w->f, "\n%*s", 2 * w->depth, "");
    fputc('}', w->f);
}

/* A float as Python's repr: shortest round trip, and "1.0" not "1". */
static void jdouble(jw *w, const char *key, double d)
{
    jkey(w, key);
    char buf[LCT_DOUBLE_BUFSIZE];
    size_t n = lct_json_format_double(d, buf);
    fwrite(buf, 1, n, w->f);
    if (n && !memchr(buf, '.', n) && !memchr(buf, 'e', n) &&
        strcmp(buf, "null") != 0)
        fputs(".0", w->f);
}

static void juint(jw *w, const char *key, uint64_t v)
{
    jkey(w, key);
    fprintf(w->f, "%" PRIu64, v);
}

static void jstr(jw *w, const char *key, const char *s)
{
    jkey(w, key);
    lct_json_write_string(s, strlen(s), tool_file_write, w->f);
}

static void jratio(jw *w, const char *key, double num, double den)
{
    if (den > 0) {
        jdouble(w, key, num / den);
    } else {
        jkey(w, key);
        fputs("null", w->f);
    }
}

static void json_ops(jw *w, const lct_replay_report *r)
{
    jkey(w, "ops");
    jbegin(w);
    for (size_t i = 0; i < 4; i++) {
        lct_replay_kind k = sorted_kinds[i];
        const lct_replay_dist *d = &r->latency[k];
        if (d->count == 0 && r->errors[k] == 0)
            continue;
        jkey(w, lct_replay_kind_name(k));
        jbegin(w);
        juint(w, "count", d->count);
        juint(w, "errors", r->errors[k]);
        jdouble(w, "max_ms", d->max * 1e3);
        jdouble(w, "mean_ms", d->mean * 1e3);
        jdouble(w, "min_ms", d->min * 1e3);
        jdouble(w, "p50_ms", d->p50 * 1e3);
        jdouble(w, "p90_ms", d->p90 * 1e3);
        jdouble(w, "p99_ms", d->p99 * 1e3);
        jend(w);
    }
    jend(w);
}

static void json_throughput(jw *w, const lct_replay_report *r)
{
    jkey(w, "throughput");
    jbegin(w);
    for (size_t i = 0; i < 4; i++) {
        lct_replay_kind k = sorted_kinds[i];
        if (r->latency[k].count == 0)
            continue;
        jkey(w, lct_replay_kind_name(k));
        jbegin(w);
        jdouble(w, "mb_per_s", per_s((double)r->bytes[k] / 1e6, r->duration));
        jdouble(w, "ops_per_s", per_s((double)r->latency[k].count,
                                      r->duration));
        jend(w);
    }
    jend(w);
}

static void json_head(jw *w, const replay_run *run)
{
    const lct_replay_report *r = &run->report;
    jstr(w, "backend", run->backend);
    jkey(w, "causal_wait");
    jbegin(w);
    juint(w, "count", r->causal.count);
    jdouble(w, "max_ms", r->causal.max * 1e3);
    jdouble(w, "total_ms", r->causal.total * 1e3);
    jend(w);
    juint(w, "chunks", r->chunks);
    juint(w, "chunks_hit", r->chunks_hit);
    jdouble(w, "duration_s", r->duration);
    jkey(w, "errors_by_kind");
    jbegin(w);
    for (unsigned i = 0; i < r->nerror_kinds; i++) {
        jkey(w, r->error_kinds[i].kind);
        jbegin(w);
        juint(w, "count", r->error_kinds[i].count);
        jstr(w, "first", r->error_kinds[i].first);
        jend(w);
    }
    jend(w);
    jratio(w, "hit_ratio", (double)r->hits, (double)r->lookups);
    juint(w, "hits", r->hits);
    juint(w, "inflight_max", r->inflight_max);
    juint(w, "keys_loaded", r->kept);
    if (r->has_l1) {
        jkey(w, "l1");
        jbegin(w);
        juint(w, "capacity", r->l1.capacity);
        jstr(w, "capacity_unit", r->l1.in_bytes ? "bytes" : "keys");
        juint(w, "keys", r->l1.keys);
        juint(w, "keys_hit", r->l1.keys_hit);
        juint(w, "keys_to_backend", r->l1.keys_to_l2);
        if (l1_policy_said(run->opts.l1_policy))
            jstr(w, "policy", lct_policy_name(run->opts.l1_policy));
        juint(w, "positions", r->l1.positions);
        juint(w, "positions_hit", r->l1.positions_hit);
        juint(w, "writes", r->l1.writes);
        jend(w);
    }
    jkey(w, "lag");
    if (r->paced) {
        jbegin(w);
        jdouble(w, "max_ms", r->lag.max * 1e3);
        jdouble(w, "p50_ms", r->lag.p50 * 1e3);
        jdouble(w, "p99_ms", r->lag.p99 * 1e3);
        jend(w);
    } else {
        fputs("null", w->f);
    }
    juint(w, "lookups", r->lookups);
}

/* One run's summary object, at w's depth. */
static void summary_object(jw *w, const replay_run *run)
{
    const lct_replay_report *r = &run->report;
    jbegin(w);
    json_head(w, run);
    json_ops(w, r);
    jkey(w, "partial");
    fputs(r->partial ? "true" : "false", w->f);
    jdouble(w, "percentile_error", LCT_REPLAY_HIST_ERROR);
    jdouble(w, "planning_s", r->planning);
    jkey(w, "prefetch_calls");
    jbegin(w);
    juint(w, "not_prefix", r->calls_sparse);
    juint(w, "skip_l2", r->calls_skip_l2);
    juint(w, "warm", r->calls_warm);
    jend(w);
    juint(w, "records", r->records);
    double ref = replay_reference_hit_ratio(r);
    jratio(w, "reference_hit_ratio", ref, ref >= 0 ? 1 : 0);
    jkey(w, "stalled");
    fputs(r->stalled ? "true" : "false", w->f);
    json_throughput(w, r);
    jratio(w, "token_hit_ratio", (double)r->chunks_hit, (double)r->chunks);
    jstr(w, "trace", run->file);
    jend(w);
}

void replay_write_summary_json(FILE *f, const replay_run *run)
{
    jw w = {.f = f};
    summary_object(&w, run);
    fputc('\n', f);
}

/* --compare --json: one document, the two summaries in an array, A
 * first, so a JSON reader takes the output whole. */
void replay_write_compare_json(FILE *f, const replay_run *a,
                               const replay_run *b)
{
    jw w = {.f = f, .depth = 1};
    fputs("[\n  ", f);
    summary_object(&w, a);
    fputs(",\n  ", f);
    summary_object(&w, b);
    fputs("\n]\n", f);
}

/* A row of --compare's table: both columns as wide as the longer
 * backend name, so neither is cut. */
static void compare_row(FILE *f, const char *what, double a, double b,
                        int width, int prec)
{
    fprintf(f, "%-28s %*.*f %*.*f", what, width, prec, a, width, prec, b);
    if (a > 0 && b >= 0)
        fprintf(f, "  %8.2fx", b / a);
    fputc('\n', f);
}

void replay_print_compare(FILE *f, const replay_run *a, const replay_run *b)
{
    const lct_replay_report *x = &a->report, *y = &b->report;
    size_t la = strlen(a->backend), lb = strlen(b->backend);
    int w = (int)(la > lb ? la : lb);
    w = w < 14 ? 14 : w > 200 ? 200 : w;
    fprintf(f, "%-28s %*s", "", w - (int)la, "");
    tool_put_vis(f, a->backend, la);
    fprintf(f, " %*s", w - (int)lb, "");
    tool_put_vis(f, b->backend, lb);
    fprintf(f, "  %9s\n", "B/A");
    compare_row(f, "duration (s)", x->duration, y->duration, w, 3);
    compare_row(f, "reading and planning (s)", x->planning, y->planning, w, 3);
    for (unsigned k = 0; k < LCT_REPLAY_KINDS; k++) {
        if (x->latency[k].count + y->latency[k].count == 0)
            continue;
        char what[64];
        const char *name = lct_replay_kind_name((lct_replay_kind)k);
        snprintf(what, sizeof what, "%s count", name);
        compare_row(f, what, (double)x->latency[k].count,
                    (double)y->latency[k].count, w, 0);
        snprintf(what, sizeof what, "%s p50 (ms)", name);
        compare_row(f, what, x->latency[k].p50 * 1e3,
                    y->latency[k].p50 * 1e3, w, 3);
        snprintf(what, sizeof what, "%s p99 (ms)", name);
        compare_row(f, what, x->latency[k].p99 * 1e3,
                    y->latency[k].p99 * 1e3, w, 3);
        snprintf(what, sizeof what, "%s ops/s", name);
        compare_row(f, what, per_s((double)x->latency[k].count, x->duration),
                    per_s((double)y->latency[k].count, y->duration),
                    w, 0);
        snprintf(what, sizeof what, "%s errors", name);
        compare_row(f, what, (double)x->errors[k], (double)y->errors[k],
                    w, 0);
    }
    compare_row(f, "lookup hit ratio",
                x->lookups ? (double)x->hits / (double)x->lookups : 0,
                y->lookups ? (double)y->hits / (double)y->lookups : 0,
                w, 4);
    compare_row(f, "token hit ratio",
                x->chunks ? (double)x->chunks_hit / (double)x->chunks : 0,
                y->chunks ? (double)y->chunks_hit / (double)y->chunks : 0,
                w, 4);
    if (x->paced)
        compare_row(f, "schedule lag p99 (ms)", x->lag.p99 * 1e3,
                    y->lag.p99 * 1e3, w, 3);
}
