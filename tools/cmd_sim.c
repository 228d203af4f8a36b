/*
 * cmd_sim.c - `lct sim`: LMCache's cache simulator at one capacity over
 * a trace (lct_sim_run), its report as LMCache's `cache-simulator`
 * prints it (sim_text.c), as JSON, its distributions as CSV, and its
 * chart of seven panels (sim_svg.c).
 */
#include "tool.h"
#include "keys.h"
#include "sim.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

enum {
    OPT_FIRST = 300,
    OPT_CAPACITY,
    OPT_LOOKUPS_ONLY,
    OPT_CHUNK_SIZE,
    OPT_SVG,
    OPT_POINTS,
    OPT_L1,
    OPT_POLICY,
    OPT_PER_KEY,
    OPT_L1_POLICY,
    OPT_WINDOW,
    OPT_WATERMARK,
    OPT_EVICTION_RATIO,
    OPT_QUOTA
};

/* --capacity A,B,...: capacities simulated in one pass at most. */
#define MAX_CAPACITIES 64

typedef struct sim_opts {
    tool_keyops ops;
    bool have_capacity;
    lct_sim_options sim;
    /* the capacities, in bytes or keys alike (sim.capacity the first) */
    uint64_t capacity[MAX_CAPACITIES];
    const char *capacity_text[MAX_CAPACITIES];
    size_t ncapacities;
    char *capacity_copy; /* the texts point into it; freed at the end */
    uint64_t chunk_size;
    const char *svg;
    bool l1, l1_bytes;   /* --l1: the cache simulated is an L2 behind */
    uint64_t l1_capacity;
    /* --quota SALT=CAP,...: lmcache-isolated-lru's quotas (their texts
     * point into quota_copy) */
    lct_sim_quota quota[MAX_CAPACITIES];
    bool quota_bytes;
    char *quota_copy;
} sim_opts;

static void help(void)
{
    printf("usage: lct sim --capacity CAP[,CAP...] [-q] [-j N]\n"
           "               [--json | --csv] [--svg FILE] [--window T]\n"
           "               [--lookups-only] [--chunk-size N]\n"
           "               [--l1 CAP [--l1-policy NAME]] [--policy NAME]\n"
           "               [--per-key] [--watermark W] [--eviction-ratio R]\n"
           "               [--quota SALT=CAP[,SALT=CAP...]]\n"
           "               [--points N] [--read PAT] [--write PAT]\n"
           "               [--qualname PAT] [--since T] [--until T]\n"
           "               [--range A:B] FILE...\n"
           "\n"
           "LMCache's cache simulator at one capacity: an LRU cache of CAP\n"
           "chunks (a call's keys of one chunk, its kv ranks and groups,\n"
           "are one entry, known by its hash, as LMCache's logs give it)\n"
           "or bytes (max(1, CAP / the first chunk's bytes) chunks), each\n"
           "lookup (submit_prefetch_task) counted by the prefix rule (its\n"
           "hits are its leading run of chunks the cache holds), every\n"
           "chunk then made the most recent.  Prints LMCache's report, line\n"
           "for line: tokens and the token hit rate, per-request hit rates,\n"
           "leading hits, reuse per chunk, the cumulative hit rate,\n"
           "evictions, spans and LRU positions at hits.\n"
           "\n"
           "  --capacity CAP  chunks (1000, 1000keys) or bytes with B, K, M,\n"
           "               G or T (64G, 1.5TiB; powers of 1024); several,\n"
           "               comma-separated, are simulated in one pass and\n"
           "               printed a row each (all chunks or all bytes)\n"
           "  --window T   the token hit rate per window of T seconds of\n"
           "               t_mono (30, 30s, 5m, 1h; whole seconds): in the\n"
           "               text and JSON, as --csv's table, and a panel of\n"
           "               --svg\n"
           "  --lookups-only  only the read calls' keys, as LMCache's\n"
           "               simulator models its logs (writes give none)\n"
           "  --chunk-size N  tokens a chunk holds (default: the header's\n"
           "               sm_config_json chunk_size)\n"
           "  --policy NAME  the cache's eviction policy (default lru, as\n"
           "               LMCache's simulator): fifo, clock, sieve, lfu,\n"
           "               arc, s3fifo or mru, as libCacheSim has them;\n"
           "               lmcache-lru, lmcache-arc or lmcache-s3fifo, as\n"
           "               LMCache's L1 runs them (evicting by pressure);\n"
           "               lmcache-isolated-lru, as its L2 adapters run it\n"
           "               (per cache_salt, by --quota)\n"
           "  --quota SALT=CAP,...  lmcache-isolated-lru's quota of each\n"
           "               cache_salt (=CAP: keys with none), in the\n"
           "               capacity's unit; a salt without one keeps\n"
           "               nothing past a call, as in LMCache\n"
           "  --per-key    every chunk of a lookup found counts as hit, not\n"
           "               only its leading run (libCacheSim's rule)\n"
           "  --l1 CAP     an LRU L1 of CAP in front: the cache simulated is\n"
           "               the L2 behind it (L1's misses, every store)\n"
           "  --l1-policy NAME  the L1's own eviction policy (default lru)\n"
           "  --watermark W  LMCache's L1 policies run a cycle at this\n"
           "               fraction of the capacity (default 0.8)\n"
           "  --eviction-ratio R  the fraction of held keys a cycle\n"
           "               evicts (default 0.2)\n"
           "  --points N   points of the cumulative series in JSON and the\n"
           "               chart (default 100)\n"
           "  --svg FILE   also draw the seven panels as an SVG chart\n"
           "  --csv        the distributions as a table\n"
           "  --json       everything, the series included\n"
           TOOL_HELP_KEYS
           "  -j N         taken, not used: sim reads in one pass, in order\n"
           TOOL_HELP_READING);
}

/* --capacity A,B,...: each as one capacity; all in chunks or all in
 * bytes, since one row compares with the next. */
static void parse_capacities(sim_opts *o, const char *arg)
{
    free(o->capacity_copy); /* an earlier --capacity's */
    char *copy = o->capacity_copy = strdup(arg), *save = NULL;
    if (!copy)
        tool_usage_error("sim", "out of memory");
    o->ncapacities = 0;
    for (char *one = strtok_r(copy, ",", &save); one;
         one = strtok_r(NULL, ",", &save)) {
        if (o->ncapacities == MAX_CAPACITIES)
            tool_usage_error("sim", "--capacity takes %d capacities at most",
                             MAX_CAPACITIES);
        bool bytes;
        tool_parse_capacity("sim", "--capacity", one, &bytes,
                            &o->capacity[o->ncapacities]);
        if (o->ncapacities && bytes != o->sim.in_bytes)
            tool_usage_error("sim", "--capacity '%s': give every capacity "
                             "in chunks or every one in bytes", arg);
        o->sim.in_bytes = bytes;
        o->capacity_text[o->ncapacities++] = one; /* copy lives on */
    }
    if (!o->ncapacities)
        tool_usage_error("sim", "--capacity needs a capacity, not '%s'", arg);
    o->sim.capacity = o->capacity[0];
    o->have_capacity = true;
}

/* --quota SALT=CAP,...: the salt is all before the last '=' (empty: the
 * keys without one); every CAP in one unit. */
static void parse_quotas(sim_opts *o, const char *arg)
{
    free(o->quota_copy); /* an earlier --quota's */
    char *copy = o->quota_copy = strdup(arg), *save = NULL;
    if (!copy)
        tool_usage_error("sim", "out of memory");
    o->sim.nquotas = 0;
    for (char *one = strtok_r(copy, ",", &save); one;
         one = strtok_r(NULL, ",", &save)) {
        char *eq = strrchr(one, '=');
        if (!eq)
            tool_usage_error("sim", "--quota '%s' is SALT=CAP", one);
        if (o->sim.nquotas == MAX_CAPACITIES)
            tool_usage_error("sim", "--quota takes %d salts at most",
                             MAX_CAPACITIES);
        *eq = '\0';
        bool bytes;
        lct_sim_quota *q = &o->quota[o->sim.nquotas];
        tool_parse_capacity("sim", "--quota", eq + 1, &bytes, &q->limit);
        if (o->sim.nquotas && bytes != o->quota_bytes)
            tool_usage_error("sim", "--quota: give every quota in bytes or "
                             "every one in keys");
        o->quota_bytes = bytes;
        q->cache_salt = (lct_str){one, strlen(one)};
        o->sim.nquotas++;
    }
    if (!o->sim.nquotas)
        tool_usage_error("sim", "--quota needs SALT=CAP, not '%s'", arg);
    o->sim.quotas = o->quota;
}

/* --window T: whole seconds, with s, m or h. */
static uint32_t parse_window(const char *arg)
{
    char *end;
    errno = 0;
    unsigned long long n = strtoull(arg, &end, 10);
    unsigned long long unit = !*end || strcmp(end, "s") == 0 ? 1
                              : strcmp(end, "m") == 0       ? 60
                              : strcmp(end, "h") == 0       ? 3600
                                                            : 0;
    if (end == arg || arg[0] == '-' || errno || !unit || n == 0 ||
        n > UINT32_MAX / unit)
        tool_usage_error("sim", "--window is a whole number of seconds "
                         "(30, 30s, 5m, 1h), not '%s'", arg);
    return (uint32_t)(n * unit);
}

static void on_option(void *ctx, int c, const char *arg)
{
    sim_opts *o = ctx;
    if (tool_keyops_select(&o->ops, "sim", c, arg))
        return;
    if (c == OPT_CAPACITY) {
        parse_capacities(o, arg);
    } else if (c == OPT_WINDOW) {
        o->sim.window_seconds = parse_window(arg);
    } else if (c == OPT_L1) {
        o->l1 = tool_parse_capacity("sim", "--l1", arg, &o->l1_bytes,
                                    &o->l1_capacity);
    } else if (c == OPT_LOOKUPS_ONLY) {
        o->ops.lookups_only = true;
    } else if (c == OPT_CHUNK_SIZE || c == OPT_POINTS) {
        long long n = tool_parse_count("sim", c == OPT_POINTS ? "--points"
                                                   : "--chunk-size", arg);
        if (n < 1 || (c == OPT_POINTS && n > 100000))
            tool_usage_error("sim", "%s is 1 or more%s, not '%s'",
                             c == OPT_POINTS ? "--points" : "--chunk-size",
                             c == OPT_POINTS ? " (at most 100000)" : "", arg);
        if (c == OPT_POINTS)
            o->sim.series_points = (unsigned)n;
        else
            o->chunk_size = (uint64_t)n;
    } else if (c == OPT_SVG) {
        o->svg = arg;
    } else if (c == OPT_POLICY || c == OPT_L1_POLICY) {
        lct_policy_kind k;
        if (lct_policy_find(arg, &k) != LCT_OK)
            tool_usage_error("sim", "unknown policy '%s' (known: %s)", arg,
                             lct_policy_names());
        if (k == LCT_POLICY_BELADY)
            tool_usage_error("sim", "belady needs the trace's future, which "
                             "sim reads once in order: lct mrc --policy "
                             "belady");
        if (c == OPT_POLICY)
            o->sim.policy = k;
        else
            o->sim.l1_policy = k;
    } else if (c == OPT_PER_KEY) {
        o->sim.per_key = true;
    } else if (c == OPT_WATERMARK) {
        o->sim.watermark = tool_parse_fraction("sim", "--watermark", arg);
    } else if (c == OPT_EVICTION_RATIO) {
        o->sim.eviction_ratio =
            tool_parse_fraction("sim", "--eviction-ratio", arg);
    } else if (c == OPT_QUOTA) {
        parse_quotas(o, arg);
    }
}

/* MARK: the command */

/* The trace's keys fed to the simulation a record at a time: a record's
 * keys are one call, each of its chunks one entry (lct_sim_add_key); a
 * lookup imported from LMCache's logs counts the tokens it logged. */
typedef struct feed {
    lct_sim *sim[MAX_CAPACITIES]; /* one a capacity, fed alike */
    size_t nsims;
    uint64_t idx;
    bool open, failed;
    tool_sim_call call; /* the record under way */
    bool any_logged; /* some call's record stated its tokens (an
                        imported log's) */
    bool in_bytes, first_done;
    uint64_t unsized_at; /* +1: the first lookup's record sized 0 */
} feed;

static void feed_end(feed *f)
{
    for (size_t i = 0; f->open && i < f->nsims; i++)
        if (tool_sim_call_end(&f->call, f->sim[i]) != LCT_OK)
            f->failed = true;
    f->open = false;
}

static int on_key(void *ctx, const lct_record *rec, uint64_t idx,
                  tool_key_op op, const lct_object_key *key, uint64_t bytes)
{
    feed *f = ctx;
    if (op != TOOL_KEY_READ && op != TOOL_KEY_WRITE)
        return 0;
    if (f->open && idx != f->idx)
        feed_end(f);
    if (!f->open) {
        tool_sim_call_begin(&f->call, rec, op == TOOL_KEY_READ);
        f->any_logged |= f->call.logged;
        f->open = true;
        f->idx = idx;
        /* LMCache's simulator sizes chunks by the first lookup's layout
         * and refuses a byte capacity when that gives 0 */
        if (!f->first_done && f->in_bytes && f->call.sized &&
            !f->call.chunk_bytes)
            f->unsized_at = rec->offset + 1;
        f->first_done = true;
    }
    for (size_t i = 0; key && i < f->nsims; i++)
        if (tool_sim_call_key(&f->call, f->sim[i], key, bytes,
                              rec->t_mono) != LCT_OK)
            f->failed = true;
    return f->failed || f->unsized_at;
}

static void feed_free(feed *f)
{
    for (size_t i = 0; i < f->nsims; i++)
        lct_sim_free(f->sim[i]);
    f->nsims = 0;
}

/* One simulation a capacity, fed in one pass in trace order (memory
 * grows with the keys, not the references); their reports into r.
 * False after a message. */
static bool simulate(sim_opts *o, tool_inputs *in, const tool_args *a,
                     lct_sim_report *r, bool *whole, bool *tokens)
{
    lct_error err;
    feed f = {.in_bytes = o->sim.in_bytes};
    for (size_t i = 0; i < o->ncapacities; i++) {
        lct_sim_options so = o->sim;
        so.capacity = o->capacity[i];
        if (lct_sim_new(&so, &f.sim[i], &err) != LCT_OK)
            tool_usage_error("sim", "%s", err.message);
        f.nsims++;
    }
    *whole = tool_keys_walk(in, &o->ops, "sim", on_key, &f);
    feed_end(&f);
    if (f.unsized_at) {
        fprintf(stderr, "%s sim: %s: the first lookup (record at offset %"
                PRIu64 ") logged a layout that weighs 0 bytes a chunk by "
                "LMCache's dtype table (its simulator refuses it too): give "
                "the capacity in chunks\n", tool_name,
                tool_input_name(a->file), f.unsized_at - 1);
        feed_free(&f);
        *whole = false;
        return false;
    }
    bool ok = !f.failed;
    for (size_t i = 0; i < f.nsims; i++)
        ok = ok && lct_sim_finish(f.sim[i], &r[i], &err) == LCT_OK;
    feed_free(&f);
    if (!ok) {
        fprintf(stderr, "%s sim: out of memory\n", tool_name);
        return false;
    }
    /* an imported log's lookups state their tokens, a chunk size or not */
    *tokens = o->sim.chunk_tokens || f.any_logged;
    return true;
}

static void print_one(const sim_opts *o, const tool_args *a,
                      const lct_sim_report *r, bool tokens)
{
    const lct_l1_stats *front = r->has_l1 ? &r->l1 : NULL;
    uint64_t chunk = o->sim.chunk_tokens;
    if (a->json) {
        tool_sim_json(r, chunk, tokens, front, &o->sim);
    } else if (a->csv) {
        if (o->sim.window_seconds)
            tool_sim_windows_csv(r, o->sim.window_seconds);
        else
            tool_sim_csv(r);
    } else {
        if (tool_sim_own_policy(&o->sim))
            printf("Eviction policy: %s%s%s%s; the report is otherwise "
                   "LMCache's simulator's\n",
                   tool_sim_policy_name(o->sim.policy),
                   o->sim.per_key ? ", every chunk found a hit (per key)"
                                  : "",
                   o->l1 ? ", the L1's " : "",
                   o->l1 ? tool_sim_policy_name(o->sim.l1_policy) : "");
        for (size_t i = 0; i < o->sim.nquotas; i++) {
            const lct_sim_quota *q = &o->sim.quotas[i];
            fputs(i ? ", " : "Quotas: ", stdout);
            if (q->cache_salt.len)
                tool_put_vis(stdout, q->cache_salt.ptr, q->cache_salt.len);
            else
                fputs("(no salt)", stdout);
            printf(" %" PRIu64 "%s", q->limit, o->quota_bytes ? " B" : "");
        }
        if (o->sim.nquotas)
            puts("; any other salt keeps nothing past a call");
        tool_sim_text(r, tokens, front);
        if (o->sim.window_seconds)
            tool_sim_windows_text(r, o->sim.window_seconds);
    }
}

static bool run_sim(sim_opts *o, tool_inputs *in, const tool_args *a,
                    outfile *svg, bool *whole)
{
    lct_sim_report r[MAX_CAPACITIES];
    o->sim.l1_capacity = o->l1 ? o->l1_capacity : 0;
    o->sim.l1_in_bytes = o->l1_bytes;
    o->sim.chunk_tokens = o->chunk_size ? o->chunk_size
                                        : tool_chunk_size(in->r);
    o->ops.keyless = true;
    bool tokens;
    if (!simulate(o, in, a, r, whole, &tokens)) {
        outfile_abort(svg);
        return false;
    }
    if (!r[0].calls && !a->quiet)
        fprintf(stderr, "%s sim: no lookups: the trace (or --read) "
                "selected none\n", tool_name);
    if (o->ncapacities > 1)
        tool_sim_capacities(a, r, o->capacity_text, o->ncapacities,
                            tokens);
    else
        print_one(o, a, &r[0], tokens);
    bool ok = true;
    if (svg)
        ok = tool_sim_svg(svg, a->noperands > 1 ? "merged traces"
                                                : tool_input_name(a->file),
                          &r[0], o->sim.chunk_tokens,
                          o->sim.window_seconds);
    for (size_t i = 0; i < o->ncapacities; i++)
        lct_sim_report_free(&r[i]);
    return ok;
}

int cmd_sim(int argc, char **argv)
{
    static const struct option own[] = {
        TOOL_KEYS_OPTIONS,
        {"capacity", required_argument, NULL, OPT_CAPACITY},
        {"lookups-only", no_argument, NULL, OPT_LOOKUPS_ONLY},
        {"chunk-size", required_argument, NULL, OPT_CHUNK_SIZE},
        {"points", required_argument, NULL, OPT_POINTS},
        {"svg", required_argument, NULL, OPT_SVG},
        {"l1", required_argument, NULL, OPT_L1},
        {"policy", required_argument, NULL, OPT_POLICY},
        {"per-key", no_argument, NULL, OPT_PER_KEY},
        {"watermark", required_argument, NULL, OPT_WATERMARK},
        {"eviction-ratio", required_argument, NULL, OPT_EVICTION_RATIO},
        {"l1-policy", required_argument, NULL, OPT_L1_POLICY},
        {"window", required_argument, NULL, OPT_WINDOW},
        {"quota", required_argument, NULL, OPT_QUOTA},
        {NULL, 0, NULL, 0}};
    sim_opts o = {0};
    tool_args a;
    tool_keys_parse("sim", own, on_option, &o, help, &o.ops, argc, argv,
                    &a);
    o.ops.calls = true;
    if (!o.have_capacity)
        tool_usage_error("sim", "--capacity CAP is needed (keys, or bytes "
                         "such as 64G)");
    if (o.sim.l1_policy && !o.l1)
        tool_usage_error("sim", "--l1-policy goes with --l1 CAP");
    if (o.sim.l1_policy == LCT_POLICY_LMCACHE_ISOLATED_LRU)
        tool_usage_error("sim", "lmcache-isolated-lru is an L2 adapter's "
                         "policy (LMCache's L1 cannot run it): give it "
                         "with --policy");
    if (o.sim.nquotas && o.sim.policy != LCT_POLICY_LMCACHE_ISOLATED_LRU)
        tool_usage_error("sim", "--quota goes with --policy "
                         "lmcache-isolated-lru");
    if (o.sim.nquotas && o.quota_bytes != o.sim.in_bytes)
        tool_usage_error("sim", "--quota in %s, as --capacity is",
                         o.sim.in_bytes ? "bytes" : "keys");
    if (o.ncapacities > 1 && (o.svg || o.sim.window_seconds))
        tool_usage_error("sim", "--svg and --window take one capacity: "
                         "several print a row each");
    outfile *svg;
    tool_inputs in;
    if (!tool_keys_start("sim", "--svg", o.svg, &a, &o.ops, &svg, &in)) {
        free(o.capacity_copy);
        free(o.quota_copy);
        return EXIT_REFUSED;
    }
    bool whole = true;
    bool ok = run_sim(&o, &in, &a, svg, &whole);
    free(o.capacity_copy);
    free(o.quota_copy);
    return tool_keys_finish(&in, &o.ops, "sim", a.quiet, ok, whole);
}
