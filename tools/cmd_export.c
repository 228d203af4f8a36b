/*
 * cmd_export.c - `lct export --perfetto OUT.json FILE...`: a timeline in
 * Chrome's Trace Event Format, which ui.perfetto.dev and chrome://tracing
 * open.  A process per trace file; each call a slice on the track of its
 * request (its external_request_id) or, without one, of its keys (the
 * first key's chunk hash); each paired span (lct_spans: a prefetch and
 * its stages, a write) an async slice; a counter of calls per second,
 * and with --hit-rate CAP the token hit rate of an LRU of CAP per
 * window of time (lct_sim).  Written as the records come: memory grows
 * with the calls open at once (and the simulation's keys), not with the
 * records.  Times are microseconds of t_wall from the earliest file's
 * start, so several files share one timeline.
 */
#include "sim.h"
#include "tool.h"
#include "keys.h" /* tool_chunk_size */

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { OPT_PERFETTO = 300, OPT_QUALNAME, OPT_SINCE, OPT_UNTIL,
       OPT_HIT_RATE, OPT_WINDOW };

typedef struct export_run {
    FILE *f;
    bool failed;
    int pid;            /* the file's process, from 1 */
    double t0;          /* t_wall of time 0 */
    double file_at;     /* this file's start on the timeline, seconds */
    lct_spans *spans;
    uint64_t span_id;
    int64_t second;     /* the calls-per-second counter's current second */
    uint64_t in_second;
    lct_sim *sim;       /* --hit-rate */
    uint64_t records;
    /* options */
    const char *out;
    tool_patterns qualnames;
    tool_window window;
    bool hit_rate, hit_bytes;
    uint64_t hit_capacity;
    uint32_t hit_window;
} export_run;

static void help(void)
{
    printf("usage: lct export --perfetto OUT [-q] [--qualname PAT]\n"
           "                  [--since T] [--until T]\n"
           "                  [--hit-rate CAP [--window T]] FILE...\n"
           "\n"
           "A timeline of the traces in Chrome's Trace Event Format (JSON),\n"
           "for ui.perfetto.dev and chrome://tracing: a process per FILE;\n"
           "each call a slice on its request's track (its\n"
           "external_request_id; without one, its first key's chunk hash);\n"
           "each paired span an async slice (a prefetch from submit to\n"
           "finish_read_prefetched, its wait, read and release, a write from\n"
           "reserve_write to finish_write, paired as lct stat pairs its\n"
           "spans); a counter of calls per second.  Times are microseconds of\n"
           "t_wall from the earliest file's start.  Written as it reads:\n"
           "memory does not grow with the records.\n"
           "\n"
           "  --perfetto OUT  write the JSON to OUT (- for standard output)\n"
           "  --qualname PAT, --since T, --until T   only those records, as\n"
           "               dump takes them (spans pair the calls kept)\n"
           "  --hit-rate CAP  add a counter of the token hit rate of\n"
           "               LMCache's simulator with an LRU of CAP chunks or\n"
           "               bytes (64G), per --window (default 10s)\n"
           TOOL_HELP_READING);
}

static void on_option(void *ctx, int c, const char *arg)
{
    export_run *x = ctx;
    if (c == OPT_PERFETTO) {
        x->out = arg;
    } else if (c == OPT_QUALNAME) {
        x->qualnames.text[x->qualnames.n++] = arg;
    } else if (c == OPT_SINCE || c == OPT_UNTIL) {
        tool_window_set(&x->window, "export", c == OPT_UNTIL, arg);
    } else if (c == OPT_HIT_RATE) {
        x->hit_rate = tool_parse_capacity("export", "--hit-rate", arg,
                                          &x->hit_bytes, &x->hit_capacity);
    } else if (c == OPT_WINDOW) {
        char *end;
        errno = 0;
        unsigned long long n = strtoull(arg, &end, 10);
        unsigned unit = !*end || strcmp(end, "s") == 0 ? 1
                        : strcmp(end, "m") == 0       ? 60
                                                      : 0;
        if (end == arg || arg[0] == '-' || errno || !unit || !n ||
            n > 86400)
            tool_usage_error("export", "--window is 1 to 86400 whole "
                             "seconds (10, 10s, 1m), not '%s'", arg);
        x->hit_window = (uint32_t)(n * unit);
    }
}

/* The event's opening: name (escaped), ph, ts in microseconds of the
 * timeline for t_mono seconds of the file (its start added apart, so a
 * file's own times keep their digits). */
static void event_start(export_run *x, const char *name, size_t len,
                        const char *ph, double t_mono)
{
    fputs(x->records++ ? ",\n{\"name\":" : "\n{\"name\":", x->f);
    tool_put_json_str_to(x->f, name, len);
    double us = x->file_at * 1e6 + t_mono * 1e6;
    fprintf(x->f, ",\"ph\":\"%s\",\"ts\":%.3f,\"pid\":%d", ph,
            isfinite(us) ? us : 0, x->pid);
}

/* A track's number from its name (FNV-1a, kept positive). */
static int64_t track_of(const void *p, size_t n)
{
    uint64_t h = 0xcbf29ce484222325u;
    for (size_t i = 0; i < n; i++)
        h = (h ^ ((const unsigned char *)p)[i]) * 0x100000001b3u;
    return (int64_t)(h & 0x7fffffff) + 1;
}

/* The call's track: its request, else its first key. */
static int64_t call_track(const lct_record *rec, lct_str *request)
{
    lct_value v;
    *request = (lct_str){NULL, 0};
    if (lct_map_find(rec->args, "external_request_id", &v) == LCT_OK &&
        lct_value_get_str(v, request) == LCT_OK && request->len)
        return track_of(request->ptr, request->len);
    lct_key_iter it;
    lct_object_key k;
    uint64_t bytes;
    if (lct_key_iter_init(rec, &it, NULL) == LCT_OK &&
        lct_key_iter_next(&it, &k, &bytes, NULL) == 1)
        return track_of(k.chunk_hash.ptr, k.chunk_hash.len);
    return 0; /* neither: the process's first track */
}

static void call_slice(export_run *x, const lct_record *rec)
{
    lct_str op = lct_str_after_last(rec->qualname, '.');
    lct_str request;
    int64_t tid = call_track(rec, &request);
    event_start(x, op.ptr, op.len, "X", rec->t_mono);
    fprintf(x->f, ",\"dur\":0,\"tid\":%" PRId64 ",\"cat\":\"call\","
                  "\"args\":{\"offset\":%" PRIu64 ",\"qualname\":",
            tid, rec->offset);
    tool_put_json_str_to(x->f, rec->qualname.ptr, rec->qualname.len);
    if (request.len) {
        fputs(",\"request\":", x->f);
        tool_put_json_str_to(x->f, request.ptr, request.len);
    }
    fputs("}}", x->f);
}

/* A span as an async slice: its begin and end, one id. */
static void on_span(void *ctx, const lct_span *sp)
{
    export_run *x = ctx;
    const char *name = lct_span_kind_name(sp->kind);
    uint64_t id = ++x->span_id;
    const char *ph[] = {"b", "e"};
    for (int i = 0; i < 2; i++) {
        event_start(x, name, strlen(name), ph[i],
                    i ? sp->t_end : sp->t_start);
        fprintf(x->f, ",\"tid\":0,\"cat\":\"span\",\"id\":%" PRIu64, id);
        if (i)
            fprintf(x->f, ",\"args\":{\"keys\":%" PRIu32 ",\"start_offset\":"
                          "%" PRIu64 ",\"end_offset\":%" PRIu64 "}",
                    sp->keys, sp->start_offset, sp->end_offset);
        fputc('}', x->f);
    }
}

/* The calls-per-second counter: a count is written when its second
 * ends (a record back in time starts its second's count again). */
static void count_flush(export_run *x)
{
    if (!x->in_second)
        return;
    event_start(x, "calls per second", 16, "C",
                (double)x->second);
    fprintf(x->f, ",\"tid\":0,\"args\":{\"calls\":%" PRIu64 "}}",
            x->in_second);
    x->in_second = 0;
}

static void count_call(export_run *x, const lct_record *rec)
{
    int64_t s = isfinite(rec->t_mono) && fabs(rec->t_mono) < 9e15
                    ? (int64_t)floor(rec->t_mono) : 0;
    if (s != x->second)
        count_flush(x);
    x->second = s;
    x->in_second++;
}

/* --hit-rate: a lookup's or a store's keys into the simulation, a chunk
 * an entry as LMCache's simulator keys them, the record one call as lct
 * sim feeds it (an imported lookup's logged tokens and chunk bytes). */
static void simulate(export_run *x, const lct_record *rec)
{
    lct_call call = lct_call_of(rec->qualname);
    if (call != LCT_CALL_SUBMIT_PREFETCH && call != LCT_CALL_RESERVE_WRITE)
        return;
    lct_key_iter it;
    lct_object_key k;
    uint64_t bytes;
    if (lct_key_iter_init(rec, &it, NULL) != LCT_OK)
        return;
    tool_sim_call c;
    tool_sim_call_begin(&c, rec, call == LCT_CALL_SUBMIT_PREFETCH);
    while (lct_key_iter_next(&it, &k, &bytes, NULL) == 1)
        x->failed |= tool_sim_call_key(&c, x->sim, &k, bytes, rec->t_mono) !=
                     LCT_OK;
    x->failed |= tool_sim_call_end(&c, x->sim) != LCT_OK;
}

static int on_record(void *state, const lct_record *rec)
{
    export_run *x = state;
    if (!tool_window_holds(&x->window, rec) ||
        !tool_qualname_wanted(&x->qualnames, rec->qualname))
        return 0;
    call_slice(x, rec);
    count_call(x, rec);
    lct_error err;
    if (lct_spans_add(x->spans, rec, on_span, x, &err) != LCT_OK) {
        fprintf(stderr, "%s export: %s\n", tool_name, err.message);
        return -1;
    }
    if (x->sim)
        simulate(x, rec);
    return x->failed ? -1 : 0;
}

/* The simulation's windows as a counter of the token hit rate. */
static bool hit_rate_counter(export_run *x)
{
    lct_sim_report r;
    lct_error err;
    if (lct_sim_finish(x->sim, &r, &err) != LCT_OK) {
        fprintf(stderr, "%s export: %s\n", tool_name, err.message);
        return false;
    }
    for (size_t i = 0; i < r.nwindows; i++) {
        const lct_sim_window *w = &r.windows[i];
        event_start(x, "token hit rate", 14, "C",
                    (double)w->t_start);
        fputs(",\"tid\":0,\"args\":{\"rate\":", x->f);
        tool_put_json_double_to(x->f, w->tokens ? (double)w->hit_tokens /
                                                      (double)w->tokens
                                                : 0);
        fputs("}}", x->f);
    }
    lct_sim_report_free(&r);
    return true;
}

/* One file: its process, its records in order. */
static bool export_file(export_run *x, const tool_args *a, const char *path,
                        lct_stats *st)
{
    lct_reader *r;
    lct_error err;
    if (lct_open(path, tool_source_flags(a) | LCT_KEYS, &r, &err) != LCT_OK) {
        fprintf(stderr, "%s: %s\n", tool_name, err.message);
        return false;
    }
    lct_reader_set_log(r, a->quiet ? tool_log_quiet : tool_log, NULL);
    const lct_header *h = lct_reader_header(r);
    x->file_at = h->t_wall_start - x->t0;
    event_start(x, "process_name", 12, "M", 0);
    fputs(",\"tid\":0,\"args\":{\"name\":", x->f);
    tool_put_json_str_to(x->f, path, strlen(path));
    fputs("}}", x->f);
    x->second = INT64_MIN;
    x->in_second = 0;
    bool ok = lct_spans_new(&x->spans, &err) == LCT_OK;
    if (ok && x->hit_rate) {
        lct_sim_options so = {.capacity = x->hit_capacity,
                              .in_bytes = x->hit_bytes,
                              .chunk_tokens = tool_chunk_size(r),
                              .window_seconds = x->hit_window};
        ok = lct_sim_new(&so, &x->sim, &err) == LCT_OK;
    }
    lct_record rec;
    int rc = 0;
    while (ok && (rc = lct_next(r, &rec)) == 1)
        ok = on_record(x, &rec) == 0;
    ok = ok && rc == 0;
    if (ok) {
        count_flush(x);
        ok = !x->sim || hit_rate_counter(x);
    }
    lct_reader_stats(r, st);
    lct_spans_free(x->spans);
    lct_sim_free(x->sim);
    x->spans = NULL;
    x->sim = NULL;
    lct_close(r);
    return ok && !ferror(x->f);
}

/* The earliest file's start: time 0 of the timeline. */
static double earliest_start(const tool_args *a)
{
    double t0 = INFINITY;
    for (int i = 0; i < a->noperands; i++) {
        lct_reader *r;
        if (lct_open(a->operands[i], LCT_LAZY, &r, NULL) != LCT_OK)
            continue;
        double t = lct_reader_header(r)->t_wall_start;
        t0 = t < t0 ? t : t0;
        lct_close(r);
    }
    return isfinite(t0) ? t0 : 0;
}

int cmd_export(int argc, char **argv)
{
    static const struct option own[] = {
        {"perfetto", required_argument, NULL, OPT_PERFETTO},
        {"qualname", required_argument, NULL, OPT_QUALNAME},
        {"since", required_argument, NULL, OPT_SINCE},
        {"until", required_argument, NULL, OPT_UNTIL},
        {"hit-rate", required_argument, NULL, OPT_HIT_RATE},
        {"window", required_argument, NULL, OPT_WINDOW},
        {NULL, 0, NULL, 0}};
    export_run x = {.hit_window = 10};
    x.qualnames.text = reallocarray(NULL, (size_t)argc, sizeof(char *));
    x.qualnames.hits = calloc((size_t)argc, sizeof(uint64_t));
    if (!x.qualnames.text || !x.qualnames.hits)
        return EXIT_REFUSED;
    tool_cmd cmd = {.name = "export", .shared = TOOL_Q | TOOL_SRC,
                    .own = own, .on_option = on_option, .ctx = &x,
                    .help = help, .min_operands = 1};
    tool_args a;
    tool_parse_args(&cmd, argc, argv, &a);
    if (!x.out)
        tool_usage_error("export", "--perfetto OUT is needed (the only "
                         "format so far)");
    for (int i = 0; i < a.noperands; i++)
        if (strcmp(a.operands[i], "-") == 0)
            tool_usage_error("export", "'-' cannot be exported: each FILE "
                             "is read for its start first; save it first");
    outfile *out = tool_output_open("export", "--perfetto", x.out, &a);
    if (!out)
        return EXIT_REFUSED;
    x.f = tool_output_stream("export", out);
    if (!x.f) {
        outfile_abort(out);
        return EXIT_REFUSED;
    }
    x.t0 = earliest_start(&a);
    fputs("{\"displayTimeUnit\":\"ms\",\"traceEvents\":[", x.f);
    bool ok = true, damaged = false;
    for (int i = 0; ok && i < a.noperands; i++) {
        lct_stats st = {0};
        x.pid = i + 1;
        ok = export_file(&x, &a, a.operands[i], &st);
        damaged |= st.skipped || st.truncated;
    }
    fputs("\n]}\n", x.f);
    if (ok) {
        ok = tool_output_finish("export", out, x.f);
    } else {
        fclose(x.f);
        outfile_abort(out);
    }
    if (ok && !a.quiet)
        tool_patterns_report(&x.qualnames, "export", "--qualname");
    free(x.qualnames.text);
    free(x.qualnames.hits);
    return !ok ? EXIT_REFUSED : damaged ? EXIT_DAMAGED : EXIT_OK;
}
