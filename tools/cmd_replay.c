/*
 * cmd_replay.c - `lct replay`: drive a storage backend with the trace's
 * calls (the library's replay engine) and report latency, schedule lag,
 * throughput and hit ratio, in LMCache's replay files as well; or two
 * backends side by side (--compare); an L2-level trace goes to its own
 * replay (replay_l2.c).
 *
 * Long because the options, their usage checks, the one-backend run and
 * the --compare run (its output directories, the URIs as reports show
 * them) share replay_opts and run_backend; split, each piece would call
 * back into this file.
 */
#include "replay.h"
#include "tool.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>


#ifndef BATCH_WINDOWS
#define BATCH_WINDOWS 32u
#endif

enum {
    OPT_BACKEND = 300, OPT_SPEED, OPT_WORKERS, OPT_PIPELINE, OPT_VALUE_BYTES,
    OPT_SCALE, OPT_FSYNC, OPT_DIRECT, OPT_KEEP, OPT_TIMEOUT, OPT_FILL,
    OPT_STORE_AT, OPT_MAX_ERRORS, OPT_STALL, OPT_OUTPUT_DIR, OPT_JSONL_OUT,
    OPT_COMPARE,
    OPT_CONNECTIONS, OPT_L1, OPT_L1_POLICY, OPT_PREPARE, OPT_PREPARE_ONLY,
    OPT_TRACE_PERCENT, OPT_ADAPTER
};

typedef struct replay_opts {
    const char *backend, *compare;
    const char *output_dir, *jsonl_out;
    char *trace; /* the report's name of the trace(s): "A + B" merged */
    lct_replay_options run;
    lct_backend_config cfg;
    lct_l2_replay_options l2; /* an L2-level trace's own options */
    bool l2_given, c_given;
} replay_opts;

/* The options and the exit status (help's second half). */
static void help_options(void)
{
    printf(
        "URI: null (no I/O), mem:CAPACITY (an LRU in memory: keys, or bytes\n"
        "with B/K/M/G/T), dir:PATH (a file per key),\n"
        "redis://[[USER]:PASSWORD@]HOST[:PORT][/DB] (reports show the\n"
        "password as ***)\n"
        "\n"
        "  --backend URI        the store to drive\n"
        "  --compare A B        run A then B on the same trace, side by side\n"
        "  --speed S            1 as recorded (default), 2 twice as fast,\n"
        "                       0 as fast as the backend allows (0, or\n"
        "                       0.001 to 1000000)\n"
        "  -c N                 operations outstanding at most (default 1, or\n"
        "                       what --pipeline and --connections keep busy)\n"
        "  --workers N          threads (default: N, or 1 with --pipeline)\n"
        "  --pipeline P         redis: commands a connection has outstanding\n"
        "                       (as redis-benchmark pipelines; default 1)\n"
        "  --connections K      redis: connections a worker spreads its\n"
        "                       commands over, by key (default 1)\n"
        "  --value-bytes N      every key weighs N bytes (K, M, G)\n"
        "  --scale F            a key weighs its layout bytes times F (at\n"
        "                       most 1 GiB: heavier keys are stored as 1 GiB)\n"
        "  --store-at reserve   store at reserve_write (default: finish)\n"
        "  --fill-on-miss       a lookup that misses stores the key\n"
        "  --l1 CAP             an LRU L1 of CAP keys, or bytes (64G), in\n"
        "                       front of the backend (lct mrc --l1's model)\n"
        "  --l1-policy NAME     the L1's eviction policy (default lru; fifo,\n"
        "                       clock, sieve, lfu, arc, s3fifo, mru,\n"
        "                       lmcache-lru, lmcache-arc, lmcache-s3fifo)\n"
        "  --fsync, --direct    dir: fsync each file; O_DIRECT\n"
        "  --keep               dir and redis: keep what an earlier run\n"
        "                       stored (the .kv files, the lct:* keys)\n"
        "  --timeout SECONDS    connect / answer timeout (redis; default 2)\n"
        "  --max-errors N       stop issuing after N errors (default 1000;\n"
        "                       0 never)\n"
        "  --stall SECONDS      end the run when operations are out and none\n"
        "                       is answered for this long (default 10; 0\n"
        "                       never)\n"
        "  --output-dir DIR     write DIR/trace_replay_ops.csv and\n"
        "                       DIR/trace_replay_summary.json (--compare:\n"
        "                       in DIR/A-<uri>/ and DIR/B-<uri>/, the URI's\n"
        "                       other than [A-Za-z0-9._-] made _)\n"
        "  --jsonl-out PATH     one JSON line per operation (not --compare)\n"
        "  --adapter N          L2: the source adapter to replay (needed\n"
        "                       when the trace has several)\n"
        "  --trace-percent P    L2: the first P%% of its submissions\n"
        "  --prepare            L2: first store the objects the source's\n"
        "                       lookups hit that no store in it explains\n"
        "  --prepare-only       L2: only that\n"
        "  --json               print the summary JSON instead of the table\n"
        "                       (--compare: an array of the two)\n"
        "  --csv                print the ops CSV instead (--compare: with a\n"
        "                       backend column first)\n"
        "  -q                   no progress or warnings on stderr\n"
        "  --mmap, --stream     how to read a file (default: the faster here)\n"
        "  --max-frame SIZE     the longest frame a pipe may hold (256M)\n"
        "  -h, --help           this text\n"
        "\n"
        "exit status: 0 every operation succeeded; 1 a backend error, an\n"
        "interrupt or a refused file; 3 the trace was damaged (the rest was\n"
        "replayed); 2 usage error. Ctrl-C stops issuing, drains what is in\n"
        "flight and still writes the reports (marked partial).\n");
}

static void help(void)
{
    printf(
        "usage: lct replay [OPTIONS] --backend URI FILE...\n"
        "       lct replay [OPTIONS] --compare URI_A URI_B FILE...\n"
        "\n"
        "Replay the trace's storage calls against a backend: a finish_write\n"
        "stores its keys (with the bytes their reserve_write's layout gives),\n"
        "a submit_prefetch_task looks its keys up and then loads those its\n"
        "policy keeps, as LMCache does (PREFIX, the default: the chunks before\n"
        "the first chunk with a key not found; SPARSE: every found key;\n"
        "skip_l2: nothing); other calls are counted, not issued. With --l1\n"
        "the backend is an L2: an L1 serves each lookup's leading run of its\n"
        "keys and stores are written through. Prints per-operation latency\n"
        "(count, errors, mean, p50, p90, p99, min, max in ms), throughput,\n"
        "schedule lag, hit ratio, in-flight high-water mark, causal waits and\n"
        "errors by kind.  Several FILEs (one per server) are merged by\n"
        "t_wall and paced by t_wall from the first record.\n"
        "\n"
        "An L2-level trace (LMCache's l2-tracing fork) replays one source\n"
        "adapter's tasks as the fork's driver does: each due at its t_mono\n"
        "scaled by --speed, or when its dependencies complete (a lookup's\n"
        "hits on the stores completed before it, a load on its request's\n"
        "lookups, an unlock on its loads, else lookups); -c tasks in flight\n"
        "(default 4); its report is l2_replay_stats.json's.\n"
        "\n");
    help_options();
}

static double parse_positive(const char *opt, const char *arg)
{
    double d = tool_parse_seconds("replay", opt, arg);
    if (!(d > 0))
        tool_usage_error("replay", "%s '%s' must be above 0", opt, arg);
    return d;
}

/* --l1-policy NAME: one the L1 can run. */
static lct_policy_kind parse_l1_policy(const char *arg)
{
    lct_policy_kind k;
    if (lct_policy_find(arg, &k) != LCT_OK || k == LCT_POLICY_BELADY ||
        k == LCT_POLICY_LMCACHE_ISOLATED_LRU)
        tool_usage_error("replay", "--l1-policy '%s' is not one the L1 "
                         "can run (known: %s; belady needs the trace's "
                         "future; lmcache-isolated-lru is an L2 "
                         "adapter's, by quotas: lct sim --quota)", arg,
                         lct_policy_names());
    return k;
}

/* 0, or a factor whose due times stay in range: a speed of 1e-300 put
 * every record some 31 years ahead (the pacer's bound on a time). */
#define MIN_SPEED 1e-3
#define MAX_SPEED 1e6

static double parse_speed(const char *arg)
{
    double d = tool_parse_seconds("replay", "--speed", arg);
    if (d != 0 && !(d >= MIN_SPEED && d <= MAX_SPEED))
        tool_usage_error("replay", "--speed '%s' must be 0 (as fast as the "
                         "backend allows) or %g to %g", arg, MIN_SPEED,
                         MAX_SPEED);
    return d;
}

static unsigned parse_small(const char *opt, const char *arg, unsigned max)
{
    long long n = tool_parse_count("replay", opt, arg);
    if (n < 1 || n > max)
        tool_usage_error("replay", "%s '%s' must be 1 to %u", opt, arg, max);
    return (unsigned)n;
}

static void on_option(void *ctx, int c, const char *arg)
{
    replay_opts *o = ctx;
    lct_replay_options *r = &o->run;
    switch (c) {
    case OPT_BACKEND: o->backend = arg; break;
    case OPT_COMPARE: o->compare = arg; break;
    case OPT_SPEED: r->speed = parse_speed(arg); break;
    case 'c':
        r->inflight = parse_small("-c", arg, 65536);
        o->c_given = true;
        break;
    case OPT_WORKERS:
        r->workers = parse_small("--workers", arg, LCT_REPLAY_MAX_WORKERS);
        break;
    case OPT_PIPELINE:
        o->cfg.redis.pipeline = parse_small("--pipeline", arg, 4096);
        break;
    case OPT_VALUE_BYTES:
        r->value_bytes = tool_parse_size("replay", "--value-bytes", arg);
        break;
    case OPT_SCALE: r->scale = parse_positive("--scale", arg); break;
    case OPT_CONNECTIONS:
        o->cfg.redis.connections = parse_small("--connections", arg,
                                         LCT_REDIS_MAX_CONNECTIONS);
        break;
    case OPT_FSYNC: o->cfg.dir.fsync = true; break;
    case OPT_DIRECT: o->cfg.dir.direct = true; break;
    case OPT_KEEP: o->cfg.keep = true; break;
    case OPT_TIMEOUT:
        o->cfg.timeout = parse_positive("--timeout", arg);
        break;
    case OPT_FILL: r->fill_on_miss = true; break;
    case OPT_L1:
        tool_parse_capacity("replay", "--l1", arg, &r->l1_in_bytes,
                            &r->l1_capacity);
        if (r->l1_capacity == 0)
            tool_usage_error("replay", "--l1 '%s' must be above 0", arg);
        break;
    case OPT_L1_POLICY:
        r->l1_policy = parse_l1_policy(arg);
        break;
    case OPT_STORE_AT:
        if (strcmp(arg, "reserve") != 0 && strcmp(arg, "finish") != 0)
            tool_usage_error("replay", "--store-at '%s' is not reserve or "
                             "finish", arg);
        r->store_at_reserve = strcmp(arg, "reserve") == 0;
        break;
    case OPT_MAX_ERRORS:
        r->max_errors = (uint64_t)tool_parse_count("replay", "--max-errors",
                                                   arg);
        break;
    case OPT_STALL:
        r->stall = tool_parse_seconds("replay", "--stall", arg);
        if (!(r->stall >= 0))
            tool_usage_error("replay", "--stall '%s' must be 0 or more", arg);
        break;
    case OPT_OUTPUT_DIR: o->output_dir = arg; break;
    case OPT_JSONL_OUT: o->jsonl_out = arg; break;
    case OPT_PREPARE: o->l2.prepare = o->l2_given = true; break;
    case OPT_PREPARE_ONLY: o->l2.prepare_only = o->l2_given = true; break;
    case OPT_TRACE_PERCENT:
        o->l2.trace_percent = parse_positive("--trace-percent", arg);
        if (o->l2.trace_percent > 100)
            tool_usage_error("replay", "--trace-percent '%s' is above 100",
                             arg);
        o->l2_given = true;
        break;
    case OPT_ADAPTER:
        o->l2.adapter = tool_parse_count("replay", "--adapter", arg);
        o->l2_given = true;
        break;
    }
}

static void on_op_jsonl(void *ctx, const lct_backend_op *op, double t_sched,
                        double lag_s, double latency_s)
{
    FILE *f = ctx;
    char num[3][LCT_DOUBLE_BUFSIZE];
    lct_json_format_double(latency_s * 1e3, num[0]);
    lct_json_format_double(t_sched, num[1]);
    lct_json_format_double(lag_s * 1e3, num[2]);
    /* LMCache's three keys first, as json.dumps spaces them. */
    fprintf(f, "{\"qualname\": \"%s\", \"latency_ms\": %s, \"failed\": %s, "
               "\"key\": \"%s\", \"bytes\": %zu, \"t_sched\": %s, "
               "\"lag_ms\": %s",
            lct_replay_kind_name(op->kind), num[0],
            op->status == LCT_OK ? "false" : "true", op->key.name,
            op->kind == LCT_REPLAY_LOOKUP ? 0 : op->len, num[1], num[2]);
    if (op->kind == LCT_REPLAY_LOOKUP || op->kind == LCT_REPLAY_LOAD)
        fprintf(f, ", \"present\": %s", op->present ? "true" : "false");
    if (op->status != LCT_OK) {
        fputs(", \"error\": ", f);
        lct_json_write_string(op->err.message, strlen(op->err.message),
                              tool_file_write, f);
    }
    fputs("}\n", f);
}

/* The progress line of one run, handed to the engine as its ctx. */
typedef struct replay_progress {
    tool_progress line;
    tool_inputs *in;
} replay_progress;

static void on_progress(void *ctx, uint64_t records, uint64_t offset)
{
    (void)records, (void)offset;
    replay_progress *p = ctx;
    tool_inputs_progress(&p->line, p->in);
}

/* A backend's or the engine's message, escaped: it may quote a URI or a
 * server's error reply. */
static void say_failure(const lct_error *err)
{
    fputs("lct replay: ", stderr);
    tool_put_message(stderr, err->message);
    fputc('\n', stderr);
}

/* The URI as reports show it: a password (redis://USER:PASSWORD@...)
 * as "***", so a report or a banner can be shared.  Kept until exit;
 * asked once for each backend, at most two. */
static char *shown_kept[2]; /* reachable, so not a leak */
static unsigned shown_nkept;

static const char *shown_uri(const char *uri)
{
    const char *start = strstr(uri, "://");
    const char *at = start ? strrchr(start, '@') : NULL;
    if (!at)
        return uri;
    start += 3;
    const char *colon = memchr(start, ':', (size_t)(at - start));
    const char *secret = colon ? colon + 1 : start;
    size_t head = (size_t)(secret - uri);
    char *s = malloc(head + 3 + strlen(at) + 1);
    if (!s)
        tool_usage_error("replay", "out of memory");
    memcpy(s, uri, head);
    strcpy(s + head, "***");
    strcpy(s + head + 3, at);
    if (shown_nkept < 2)
        shown_kept[shown_nkept++] = s;
    return s;
}

/* A run of backend uri not yet made: what its reports say if it never
 * is (an interrupted --compare's B), and what run_backend starts from. */
static void run_init(replay_run *run, const replay_opts *o, const char *uri)
{
    *run = (replay_run){.backend = shown_uri(uri), .file = o->trace,
                        .opts = o->run};
    run->report.partial = true; /* until the run fills the report */
}

/* Open the backend a URI names, replay the inputs on it into out (made
 * by run_init), close it.  False (after a message) when the backend
 * could not be opened or the run failed. */
/*
 * What the trace's first key with a layout weighs in the run
 * (lct_replay_key_bytes), read through a reader of its own in the first
 * 100,000 records of the first file; 0 for a pipe, which cannot be read
 * twice, or when none has a layout.  A key capacity is checked against
 * memory with it before the run: 3232 keys of 32 MiB once crawled for
 * minutes in 17.8 GiB, every store failing.
 */
static uint64_t first_key_bytes(lct_reader *first,
                                const lct_replay_options *run)
{
    struct stat sb;
    const char *path = lct_reader_path(first);
    lct_reader *r;
    lct_error err;
    if (strcmp(path, "<stdin>") == 0 || stat(path, &sb) != 0 ||
        !S_ISREG(sb.st_mode) || lct_open(path, LCT_QUIET, &r, &err) != LCT_OK)
        return 0;
    uint64_t bytes = 0;
    lct_record rec;
    for (unsigned n = 0; !bytes && n < 100000 && lct_next(r, &rec) == 1; n++) {
        lct_key_iter it;
        lct_object_key key;
        if (lct_key_iter_init(&rec, &it, &err) != LCT_OK)
            continue;
        while (!bytes && lct_key_iter_next(&it, &key, &bytes, &err) == 1)
            ;
    }
    lct_close(r);
    return lct_replay_key_bytes(run, bytes, NULL);
}


static bool run_backend(replay_opts *o, const char *uri, tool_inputs *in,
                        bool quiet, replay_run *out)
{
    const lct_backend_ops *ops;
    const char *arg;
    lct_error err;
    replay_find_backend(uri, &ops, &arg);
    if (strcmp(ops->name, "redis") == 0) {
        out->wire_pipeline = o->cfg.redis.pipeline ? o->cfg.redis.pipeline : 1;
        out->wire_connections = o->cfg.redis.connections ? o->cfg.redis.connections : 1;
    }
    lct_backend_config cfg = o->cfg;
    cfg.workers = lct_replay_workers(&o->run);
    cfg.value_bytes = o->run.value_bytes;
    if (!cfg.value_bytes)
        cfg.first_value_bytes = first_key_bytes(in->r, &o->run);
    void *state = NULL;
    lct_status opened = ops->open(arg, &cfg, &state, &err);
    if (opened == LCT_ERR_INVALID) /* the URI's argument is malformed */
        tool_usage_error("replay", "%s", err.message);
    if (opened != LCT_OK) {
        say_failure(&err);
        return false;
    }
    replay_progress progress = {.in = in};
    out->opts.progress_ctx = &progress;
    tool_inputs_progress_start(&progress.line, in, quiet);
    if (out->opts.speed > 0) /* paced: long whatever the size */
        tool_progress_paced(&progress.line, quiet);
    lct_status st =
        in->merge ? lct_replay_run_merge(in->merge, ops, state, &out->opts,
                                         &out->report, &err)
                  : lct_replay_run(in->r, ops, state, &out->opts,
                                   &out->report, &err);
    tool_progress_end(&progress.line);
    out->opts.progress_ctx = NULL; /* it lived on this stack */
    ops->close(state);
    if (st != LCT_OK) {
        say_failure(&err);
        return false;
    }
    return true;
}


static bool write_reports(const char *dir, const replay_run *run,
                          const tool_args *a)
{
    static const char *const names[] = {"trace_replay_ops.csv",
                                        "trace_replay_summary.json"};
    for (int i = 0; i < 2; i++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        outfile *out = tool_output_open("replay", "--output-dir", path, a);
        FILE *f = out ? tool_output_stream("replay", out) : NULL;
        if (!f)
            return false;
        if (i == 0)
            replay_write_ops_csv(f, run);
        else
            replay_write_summary_json(f, run);
        if (!tool_output_finish("replay", out, f))
            return false;
    }
    return true;
}

static int exit_for(const replay_run *run)
{
    const lct_replay_report *r = &run->report;
    uint64_t errors = 0;
    for (unsigned k = 0; k < LCT_REPLAY_KINDS; k++)
        errors += r->errors[k];
    if (errors || r->partial || r->corrupt)
        return EXIT_REFUSED;
    return tool_exit_for(&r->read);
}

static void check_usage(const replay_opts *o, const tool_args *a)
{
    if (!o->backend == !o->compare)
        tool_usage_error("replay", "give --backend URI, or --compare A B");
    if (o->compare && a->noperands < 2)
        tool_usage_error("replay", "--compare A B FILE...: two backends, "
                         "then the trace");
    struct stat sb;
    for (int i = o->compare ? 1 : a->noperands; i < a->noperands; i++) {
        const char *file = a->operands[i];
        if (strcmp(file, "-") == 0 || stat(file, &sb) != 0 ||
            !S_ISREG(sb.st_mode))
            tool_usage_error("replay", "--compare reads FILE twice: it must "
                             "be a regular file, not standard input or a "
                             "pipe");
    }
    if (o->compare && o->jsonl_out)
        tool_usage_error("replay", "--jsonl-out follows one backend, not "
                         "--compare (its --output-dir has each backend's "
                         "reports)");
    if (o->run.value_bytes && o->run.scale > 0)
        tool_usage_error("replay", "--value-bytes and --scale both say what "
                         "a key weighs: give one");
}

/* One backend: run, print, write the files; the exit status. */
static int replay_one(replay_opts *o, tool_inputs *in, const tool_args *a)
{
    outfile *jout = NULL;
    FILE *jf = NULL;
    if (o->output_dir && !replay_prepare_output_dir(o->output_dir))
        return EXIT_REFUSED;
    if (o->jsonl_out) {
        jout = tool_output_open("replay", "--jsonl-out", o->jsonl_out, a);
        if (!jout || !(jf = tool_output_stream("replay", jout)))
            return EXIT_REFUSED;
        o->run.on_op = on_op_jsonl;
        o->run.on_op_ctx = jf;
    }
    replay_run run;
    run_init(&run, o, o->backend);
    bool ok = run_backend(o, o->backend, in, a->quiet, &run);
    if (jout && !tool_output_finish("replay", jout, jf))
        ok = false;
    if (!ok)
        return EXIT_REFUSED;
    if (run.report.clamped && !a->quiet)
        fprintf(stderr, "lct replay: %" PRIu64 " keys weighed over 1 GiB "
                "(layout bytes%s): each was stored as 1 GiB\n",
                run.report.clamped, o->run.scale > 0 ? " x --scale" : "");
    if (a->json)
        replay_write_summary_json(stdout, &run);
    else if (a->csv)
        replay_write_ops_csv(stdout, &run);
    else
        replay_print_table(stdout, &run);
    if (o->output_dir && !write_reports(o->output_dir, &run, a))
        return EXIT_REFUSED;
    return exit_for(&run);
}


static int replay_compare(replay_opts *o, tool_inputs *in, const char *b,
                          const tool_args *a)
{
    replay_run runs[2];
    const char *uris[2] = {o->compare, b};
    char dirs[2][4096];
    if (o->output_dir) {
        if (!replay_prepare_output_dir(o->output_dir))
            return EXIT_REFUSED;
        for (int i = 0; i < 2; i++) {
            replay_compare_dir(dirs[i], sizeof dirs[i], o->output_dir, i,
                               uris[i]);
            if (!replay_prepare_output_dir(dirs[i]))
                return EXIT_REFUSED;
        }
    }
    /* Ctrl-C during A leaves B unrun: reported, empty and partial. */
    for (int i = 0; i < 2; i++)
        run_init(&runs[i], o, uris[i]);
    for (int i = 0; i < 2; i++) {
        if (i && in->merge)
            lct_merge_rewind(in->merge);
        else if (i)
            lct_reader_rewind(in->r);
        if (!run_backend(o, uris[i], in, a->quiet, &runs[i]))
            return EXIT_REFUSED;
        if (tool_interrupted)
            break;
    }
    if (a->json) {
        replay_write_compare_json(stdout, &runs[0], &runs[1]);
    } else if (a->csv) {
        replay_write_compare_csv(stdout, &runs[0], &runs[1]);
    } else {
        replay_print_compare(stdout, &runs[0], &runs[1]);
    }
    for (int i = 0; i < 2 && o->output_dir; i++)
        if (!write_reports(dirs[i], &runs[i], a))
            return EXIT_REFUSED;
    int rc0 = exit_for(&runs[0]), rc1 = exit_for(&runs[1]);
    return rc0 == EXIT_REFUSED || rc1 == EXIT_REFUSED ? EXIT_REFUSED
                                                      : rc0 ? rc0 : rc1;
}

/* An L2-level trace: its own replay (replay_l2.c), with the options
 * that mean something there. */
static int replay_level_l2(replay_opts *o, tool_inputs *in, const char *b,
                           const tool_args *a)
{
    if (in->merge)
        tool_usage_error("replay", "an L2-level trace is replayed alone, "
                         "not merged with others");
    if (o->run.l1_capacity || o->run.fill_on_miss ||
        o->run.store_at_reserve || o->jsonl_out || o->run.scale > 0 ||
        a->csv)
        tool_usage_error("replay", "an L2-level trace replays the adapter's "
                         "tasks: --l1, --fill-on-miss, --store-at, --scale, "
                         "--jsonl-out and --csv are for storage traces");
    replay_l2_opts lo = {.run = o->l2, .cfg = o->cfg,
                         .output_dir = o->output_dir, .trace = o->trace};
    lo.run.speed = o->run.speed;
    /* tasks in flight: -c, else --workers (each a thread) */
    unsigned tasks = o->c_given ? o->run.inflight : o->run.workers;
    lo.run.workers = tasks > LCT_REPLAY_MAX_WORKERS ? LCT_REPLAY_MAX_WORKERS
                                                    : tasks;
    lo.run.value_bytes = o->run.value_bytes;
    lo.run.stop = o->run.stop;
    lo.run.max_errors = o->run.max_errors;
    lo.run.stall = o->run.stall;
    lo.run.on_errors = o->run.on_errors;
    return replay_l2(&lo, in->r, o->compare ? o->compare : o->backend, b, a);
}

/* The traces as the reports name them: the one, or "A + B + C". */
/* A run that keeps failing says so every 10 s, terminal or not. */
static void on_errors(void *ctx, uint64_t errors)
{
    (void)ctx;
    fprintf(stderr, "lct replay: %" PRIu64 " operations failed so far\n",
            errors);
}

static char *join_names(const tool_args *a)
{
    size_t len = 1;
    for (int i = 0; i < a->noperands; i++)
        len += strlen(a->operands[i]) + 3;
    char *s = malloc(len);
    if (!s)
        tool_usage_error("replay", "out of memory");
    s[0] = '\0';
    for (int i = 0; i < a->noperands; i++) {
        if (i)
            strcat(s, " + ");
        strcat(s, a->operands[i]);
    }
    return s;
}

/* The options of lct replay, beside the shared ones. */
static const struct option replay_own[] = {
    {"backend", required_argument, NULL, OPT_BACKEND},
    {"compare", required_argument, NULL, OPT_COMPARE},
    {"speed", required_argument, NULL, OPT_SPEED},
    {"workers", required_argument, NULL, OPT_WORKERS},
    {"pipeline", required_argument, NULL, OPT_PIPELINE},
    {"connections", required_argument, NULL, OPT_CONNECTIONS},
    {"value-bytes", required_argument, NULL, OPT_VALUE_BYTES},
    {"scale", required_argument, NULL, OPT_SCALE},
    {"fsync", no_argument, NULL, OPT_FSYNC},
    {"direct", no_argument, NULL, OPT_DIRECT},
    {"keep", no_argument, NULL, OPT_KEEP},
    {"timeout", required_argument, NULL, OPT_TIMEOUT},
    {"fill-on-miss", no_argument, NULL, OPT_FILL},
    {"l1", required_argument, NULL, OPT_L1},
    {"l1-policy", required_argument, NULL, OPT_L1_POLICY},
    {"store-at", required_argument, NULL, OPT_STORE_AT},
    {"max-errors", required_argument, NULL, OPT_MAX_ERRORS},
    {"stall", required_argument, NULL, OPT_STALL},
    {"output-dir", required_argument, NULL, OPT_OUTPUT_DIR},
    {"jsonl-out", required_argument, NULL, OPT_JSONL_OUT},
    {"prepare", no_argument, NULL, OPT_PREPARE},
    {"prepare-only", no_argument, NULL, OPT_PREPARE_ONLY},
    {"trace-percent", required_argument, NULL, OPT_TRACE_PERCENT},
    {"adapter", required_argument, NULL, OPT_ADAPTER},
    {NULL, 0, NULL, 0}};

int cmd_replay(int argc, char **argv)
{
    replay_opts o = {0};
    o.l2.adapter = -1;
    o.run.speed = 1;
    o.run.max_errors = 1000;
    o.run.stall = 10;
    tool_cmd cmd = {.name = "replay",
                    .shared = TOOL_Q | TOOL_JSON | TOOL_CSV | TOOL_SRC,
                    .own = replay_own, .own_short = "c:",
                    .on_option = on_option,
                    .ctx = &o, .help = help, .min_operands = 1};
    tool_args a;
    tool_parse_args(&cmd, argc, argv, &a);
    check_usage(&o, &a);
    /* --compare A B FILE...: B is the first operand, the traces follow */
    const char *b = o.compare ? a.operands[0] : NULL;
    if (o.compare) {
        a.operands++;
        a.noperands--;
    }
    a.file = a.operands[0];
    o.trace = join_names(&a);
    /* A worker hands its backend 32 windows at a time (--pipeline per
     * connection): the connections drain at the end of each batch, and
     * with 8 windows that cost redis a tenth of its rate (bench/replay,
     * 4 x 16: 8 windows 255-330 k/s, 32: 300-337 k, 64: 308-377 k, five
     * runs each).  The engine splits a batch whose values pass 64 MiB. */
    unsigned window = o.cfg.redis.pipeline ? o.cfg.redis.pipeline : 1;
    unsigned conns = o.cfg.redis.connections ? o.cfg.redis.connections : 1;
    if (window > 1 || conns > 1) {
        unsigned batch = window * conns * BATCH_WINDOWS;
        o.run.pipeline = batch > 4096 ? 4096 : batch;
        /* Two batches a worker: one out while the next is planned. */
        if (!o.run.inflight)
            o.run.inflight = 2 * o.run.pipeline *
                             (o.run.workers ? o.run.workers : 1);
        if (!o.run.workers)
            o.run.workers = 1;
    }
    tool_inputs in;
    if (!tool_inputs_open(&in, &a, tool_source_flags(&a) | LCT_KEYS,
                          true)) {
        free(o.trace);
        return EXIT_REFUSED;
    }
    tool_catch_interrupts();
    o.run.stop = (const volatile int *)&tool_interrupted;
    o.cfg.stop = o.run.stop; /* a backend's clean-up at open, too */
    if (!a.quiet) {
        o.run.progress = on_progress;
        o.run.on_errors = on_errors;
    }
    bool l2 = lct_str_eq(lct_reader_header(in.r)->level, "l2");
    if (!l2 && o.l2_given)
        tool_usage_error("replay", "--prepare, --prepare-only, "
                         "--trace-percent and --adapter are for L2-level "
                         "traces");
    int rc = l2 ? replay_level_l2(&o, &in, b, &a)
             : o.compare ? replay_compare(&o, &in, b, &a)
                         : replay_one(&o, &in, &a);
    tool_inputs_close(&in);
    free(o.trace);
    return rc;
}
