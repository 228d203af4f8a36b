/*
 * cmd_mrc.c - `lct mrc`: LRU miss-ratio curves of a trace's key
 * references (lib/mrc.c computes every capacity at once), per key or by
 * the prefix rule (a lookup's hits are its leading run of found keys, in
 * chunk positions and tokens), other policies' beside it (--policy,
 * mrc_policy.c), printed at log-spaced capacities as a table, CSV or
 * JSON, and drawn as SVG.
 */
#include "tool.h"
#include "keys.h"
#include "mrc.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

enum {
    OPT_FIRST = 300,
    OPT_SAMPLE,
    OPT_SVG,
    OPT_REQUESTS,
    OPT_SEED,
    OPT_SAMPLES,
    OPT_PREFIX,
    OPT_LOOKUPS_ONLY,
    OPT_CHUNK_SIZE,
    OPT_L1,
    OPT_POLICY,
    OPT_TARGET,
    OPT_BY,
    OPT_ISOLATED,
    OPT_WATERMARK,
    OPT_EVICTION_RATIO
};

/* Independently salted samples at most (--samples). */
#define MAX_SAMPLES LCT_MRC_CURVE_MAX_SAMPLES

typedef struct mrc_opts {
    tool_keyops ops;
    double sample;
    const char *svg;
    lct_refs *refs;
    bool failed;
    bool every;       /* --requests all */
    uint64_t seed;    /* --seed */
    unsigned samples; /* --samples */
    bool prefix;      /* --prefix */
    uint64_t chunk_size; /* --chunk-size, else the header's, else 0 */
    bool l1;          /* --l1: the curve is L2's behind an L1 of */
    bool l1_bytes;
    uint64_t l1_capacity;
    const char *l1_label; /* --l1 as given */
    tool_mrc_policies policies; /* --policy */
    double target;    /* --target, or 0 */
    tool_mrc_by_options by; /* --by, --isolated */
} mrc_opts;


static void help(void)
{
    printf("usage: lct mrc [-q] [-j N] [--csv | --json] [--svg FILE]\n"
           "               [--requests reads|all] [--sample R [--seed S]\n"
           "               [--samples K]] [--prefix [--lookups-only]\n"
           "               [--chunk-size N] [--l1 CAP]] [--policy LIST\n"
           "               [--watermark W] [--eviction-ratio R]]\n"
           "               [--target R] [--by FIELD [--isolated]]\n"
           "               [--read PAT] [--write PAT]\n"
           "               [--qualname PAT] [--since T] [--until T]\n"
           "               [--range A:B] FILE...\n"
           "\n"
           "LRU miss-ratio curves of the trace's key references (see lct\n"
           "keys): every read or write makes its key the most recent; a read\n"
           "hits at capacity C when its key is among the C most recently used\n"
           "distinct keys.  All capacities at once (stack distances); shown\n"
           "at log-spaced capacities in keys, with bytes (keys x the mean key\n"
           "size) and the hit ratio of an LRU cache of that many bytes.\n"
           "Several FILEs are merged by t_wall into one stream (one thread;\n"
           "--range takes one FILE).\n"
           "\n"
           "  --requests reads|all  which references are requests: reads\n"
           "               (default; writes only warm the cache) or all, as\n"
           "               libCacheSim's cachesim counts every reference\n"
           "  --sample R   SHARDS sampling: keep keys whose salted id falls\n"
           "               under R (0 < R <= 1), scale distances by 1/R\n"
           "  --samples K  K samples salted S, S+1, ... (default 9): the mean\n"
           "               curve and its min/max band (1 to 64)\n"
           "  --seed S     the first salt (default 1; 0 is the id as it is);\n"
           "               the same seed gives the same curve\n"
           "  --prefix     count by the prefix rule, as LMCache's StorageManager\n"
           "               does: a lookup's hits are its leading run of keys\n"
           "               in the cache; adds the token hit ratio (chunk\n"
           "               positions: as many keys as the call has kv ranks),\n"
           "               and when key sizes differ a byte capacity's\n"
           "               (byte_token_hit_ratio)\n"
           "  --lookups-only  only the read calls' keys, as LMCache's cache\n"
           "               simulator models its logs (writes give none)\n"
           "  --chunk-size N  tokens a chunk holds (default: the header's\n"
           "               sm_config_json chunk_size)\n"
           "  --l1 CAP     an LRU L1 of CAP keys or bytes (64G) in front: the\n"
           "               curve is L2's, which sees L1's misses and every\n"
           "               store, with both tiers' hit ratios (implies\n"
           "               --prefix)\n"
           "  --policy LIST  other eviction policies beside LRU, each simulated\n"
           "               at each capacity shown (by the prefix rule with\n"
           "               --prefix: token hit ratios), on -j threads:\n"
           "               fifo, lru, clock, sieve, lfu, arc, s3fifo, belady,\n"
           "               mru (libCacheSim's; belady is the per-key\n"
           "               ceiling, Belady order under --prefix);\n"
           "               lmcache-lru, lmcache-arc, lmcache-s3fifo\n"
           "               (LMCache's L1 policies, evicting by pressure);\n"
           "               comma-separated\n"
           "  --watermark W  LMCache's L1 policies run a cycle at this\n"
           "               fraction of the capacity (default 0.8)\n"
           "  --eviction-ratio R  the fraction of held keys a cycle\n"
           "               evicts (default 0.2)\n"
           "  --target R   print instead the least capacity reaching hit ratio\n"
           "               R (0 < R <= 1; the token hit ratio with --prefix),\n"
           "               in keys and in bytes: LRU's from the exact curve\n"
           "               (with --l1, L2's alone and both tiers'), each\n"
           "               --policy's by bisection over simulations\n"
           "  --by FIELD   a curve per group of keys instead, by model,\n"
           "               cache_salt, kv_rank or object_group: each group's\n"
           "               requests in the one LRU every reference moves\n"
           "               (per key; 64 groups at most)\n"
           "  --isolated   with --by: each group's references alone, in a\n"
           "               cache of its own\n"
           "  --svg FILE   also draw the curve as a self-contained SVG chart\n"
           TOOL_HELP_KEYS
           "  --csv, --json  other formats\n"
           "  -j N         read the trace with N threads (default: one for\n"
           "               an exact curve, which is computed as it is read,\n"
           "               in memory that grows with the keys; more gather\n"
           "               the references first, about 28 bytes each; with\n"
           "               --sample one per usable CPU for files of 64 MiB or\n"
           "               more)\n"
           TOOL_HELP_READING);
}

static void on_option(void *ctx, int c, const char *arg)
{
    mrc_opts *o = ctx;
    char *end;
    if (tool_keyops_select(&o->ops, "mrc", c, arg))
        return;
    if (c == OPT_PREFIX) {
        o->prefix = o->ops.calls = true;
    } else if (c == OPT_L1) {
        o->l1_label = arg;
        o->l1 = o->prefix = o->ops.calls =
            tool_parse_capacity("mrc", "--l1", arg, &o->l1_bytes,
                                &o->l1_capacity);
    } else if (c == OPT_LOOKUPS_ONLY) {
        o->ops.lookups_only = true;
    } else if (c == OPT_CHUNK_SIZE) {
        long long n = tool_parse_count("mrc", "--chunk-size", arg);
        if (n < 1)
            tool_usage_error("mrc", "--chunk-size is 1 or more, not '%s'",
                             arg);
        o->chunk_size = (uint64_t)n;
    } else if (c == OPT_SVG) {
        o->svg = arg;
    } else if (c == OPT_TARGET) {
        errno = 0;
        o->target = strtod(arg, &end);
        if (errno || *end || !(o->target > 0 && o->target <= 1))
            tool_usage_error("mrc", "--target needs a hit ratio in (0, 1], "
                             "not '%s'", arg);
    } else if (c == OPT_BY) {
        static const char *fields[] = {NULL, "model", "cache_salt",
                                       "kv_rank", "object_group"};
        for (int i = 1; i < 5 && !o->by.by; i++)
            if (strcmp(arg, fields[i]) == 0)
                o->by.by = (tool_mrc_by)i;
        if (!o->by.by)
            tool_usage_error("mrc", "--by is model, cache_salt, kv_rank or "
                             "object_group, not '%s'", arg);
    } else if (c == OPT_ISOLATED) {
        o->by.isolated = true;
    } else if (c == OPT_POLICY) {
        tool_mrc_policies_parse(&o->policies, arg);
    } else if (c == OPT_WATERMARK) {
        o->policies.watermark =
            tool_parse_fraction("mrc", "--watermark", arg);
    } else if (c == OPT_EVICTION_RATIO) {
        o->policies.eviction_ratio =
            tool_parse_fraction("mrc", "--eviction-ratio", arg);
    } else if (c == OPT_REQUESTS) {
        if (strcmp(arg, "reads") != 0 && strcmp(arg, "all") != 0)
            tool_usage_error("mrc", "--requests is reads or all, not '%s'",
                             arg);
        o->every = strcmp(arg, "all") == 0;
    } else if (c == OPT_SEED) {
        o->seed = (uint64_t)tool_parse_count("mrc", "--seed", arg);
    } else if (c == OPT_SAMPLES) {
        long long k = tool_parse_count("mrc", "--samples", arg);
        if (k < 1 || k > MAX_SAMPLES)
            tool_usage_error("mrc", "--samples is 1 to %d, not '%s'",
                             MAX_SAMPLES, arg);
        o->samples = (unsigned)k;
    } else if (c == OPT_SAMPLE) {
        errno = 0;
        o->sample = strtod(arg, &end);
        if (errno || *end || !(o->sample > 0 && o->sample <= 1))
            tool_usage_error("mrc", "--sample needs a rate in (0, 1], not "
                             "'%s'", arg);
    }
}

/* The stream to gather into; with --sample, only what the samples will
 * use is kept (lct_refs_sample), the rest counted. */
static void new_refs(mrc_opts *o)
{
    if (lct_refs_new(&o->refs) != LCT_OK)
        tool_usage_error("mrc", "out of memory");
    if (o->sample < 1) {
        o->ops.sample_rate = o->sample;
        o->ops.sample_seed = o->seed;
        o->ops.samples = o->samples;
        lct_status st =
            lct_refs_sample(o->refs, o->sample, o->seed, o->samples);
        if (st != LCT_OK)
            tool_usage_error("mrc", "%s", st == LCT_ERR_NOMEM
                                              ? "out of memory"
                                              : "--sample: no samples");
    }
}

/* An exact curve is computed as the trace is read, in memory that grows
 * with its keys, unless -j asks for threads: then the references are
 * gathered (about 28 bytes each) and the curve computed after. */
static bool start_stream(mrc_opts *o, const tool_args *a)
{
    if (o->sample < 1 || a->jobs > 1 || o->policies.n)
        return true; /* gathered: the policies run over the references */
    lct_mrc_options mo = {.every_reference = o->every, .prefix = o->prefix};
    lct_error err;
    if (lct_mrc_stream_new(&mo, &o->ops.stream, &err) == LCT_OK &&
        (!o->l1 || lct_mrc_stream_behind_l1(o->ops.stream, o->l1_capacity,
                                            o->l1_bytes, &err) == LCT_OK))
        return true;
    fprintf(stderr, "%s mrc: %s\n", tool_name, err.message);
    return false;
}

/* The curves of every sample (and a streamed L1's figures into *l1);
 * false after a message. */
static bool compute(mrc_opts *o, lct_mrc **ms, unsigned k, lct_l1_stats *l1)
{
    if (o->ops.stream) {
        lct_error err;
        lct_status st = lct_mrc_stream_finish(o->ops.stream, &ms[0], &err);
        if (st == LCT_OK && o->l1)
            lct_mrc_stream_l1_stats(o->ops.stream, l1);
        lct_mrc_stream_free(o->ops.stream);
        o->ops.stream = NULL;
        if (st == LCT_OK)
            return true;
        fprintf(stderr, "%s mrc: %s\n", tool_name, err.message);
        return false;
    }
    for (unsigned s = 0; s < k; s++) {
        lct_mrc_options mo = {.sample_rate = o->sample,
                              .every_reference = o->every,
                              .seed = o->seed + s, .prefix = o->prefix};
        lct_error err;
        if (lct_mrc_compute_with(o->refs, &mo, &ms[s], &err) != LCT_OK) {
            fprintf(stderr, "%s mrc: %s\n", tool_name, err.message);
            return false;
        }
    }
    return true;
}

/* The token hit ratio at each of the curve's capacities (NULL: out of
 * memory, or no points). */
static double *token_hits(const lct_mrc *m, const tool_curve *c)
{
    double *v = c->n ? calloc(c->n, sizeof *v) : NULL;
    for (size_t i = 0; v && i < c->n; i++)
        v[i] = lct_mrc_position_hit_ratio(m, c->keys[i]);
    return v;
}

/* The options that go together, and the samples' default. */
static void check_options(mrc_opts *o)
{
    if (o->samples > 1 && !(o->sample < 1))
        tool_usage_error("mrc", "--samples needs --sample R below 1: an "
                         "exact curve has no spread");
    if (o->prefix && o->sample < 1)
        tool_usage_error("mrc", "--prefix and --l1 need every key of a "
                         "call: they take no --sample");
    if (o->policies.n && (o->l1 || o->sample < 1))
        tool_usage_error("mrc", "--policy simulates every key: it takes no "
                         "--l1 or --sample");
    /* LMCache's L1 policies act on a record's keys together */
    for (size_t i = 0; i < o->policies.n; i++)
        o->ops.calls |= lct_policy_by_call(o->policies.kind[i]);
    if (o->by.isolated && !o->by.by)
        tool_usage_error("mrc", "--isolated goes with --by FIELD");
    if (o->by.by && (o->prefix || o->sample < 1 || o->policies.n ||
                     o->target > 0))
        tool_usage_error("mrc", "--by draws per-key LRU curves: it takes no "
                         "--prefix, --l1, --sample, --policy or --target");
    if (o->target > 0 && o->sample < 1)
        tool_usage_error("mrc", "--target answers from the exact curve: it "
                         "takes no --sample");
    if ((o->ops.lookups_only || o->chunk_size) && !o->prefix)
        tool_usage_error("mrc", "--lookups-only and --chunk-size go with "
                         "--prefix");
    /* One salted sample is often unlucky on skewed traces (0.030 mean
     * absolute error at rate 0.1, 0.054 at 0.01); the mean of 9 is 0.011
     * and 0.017 (bench/shards-error). */
    if (!o->samples)
        o->samples = o->sample < 1 ? 9 : 1;
}

/* Replace the gathered stream by what an L2 behind o's L1 sees. */
static bool behind_l1(mrc_opts *o, lct_l1_stats *st)
{
    lct_refs *l2;
    lct_error err;
    if (lct_refs_new(&l2) != LCT_OK ||
        lct_refs_behind_l1(o->refs, o->l1_capacity, o->l1_bytes, l2, st,
                           &err) != LCT_OK) {
        fprintf(stderr, "%s mrc: out of memory\n", tool_name);
        lct_refs_free(l2);
        return false;
    }
    lct_refs_free(o->refs);
    o->refs = l2;
    return true;
}

/* Both tiers' hit ratios at each L2 capacity, keys then positions (2n
 * values; NULL: out of memory or no points): L1's leading runs plus
 * L2's, over all the lookups' keys and positions. */
static double *both_tiers(const lct_l1_stats *l1, const tool_curve *c,
                          const double *tokens)
{
    double *v = c->n ? calloc(2 * c->n, sizeof *v) : NULL;
    for (size_t i = 0; v && i < c->n; i++) {
        v[i] = tool_mrc_both_ratio(l1, c->hit[i], false);
        v[c->n + i] = tool_mrc_both_ratio(l1, tokens ? tokens[i] : 0, true);
    }
    return v;
}

/* The table, or with --target the least capacities instead (then the
 * policies were not run at the table's points: the chart draws none). */
static bool print_or_answer(mrc_opts *o, const tool_args *a,
                            tool_mrc_view *view, const lct_mrc *m,
                            tool_svg_target *answer)
{
    if (o->target == 0) {
        tool_mrc_print(a, view);
        return true;
    }
    tool_mrc_target_in ti = {.target = o->target, .m = m, .l1 = view->l1,
                             .policies = view->policies, .refs = o->refs,
                             .mean_bytes = view->c->mean_bytes};
    view->policies = NULL;
    return tool_mrc_target(a, &ti, answer);
}

/* Nothing to draw: say why, once. */
static void say_empty(const lct_mrc_totals *t)
{
    if (t->references == 0)
        fprintf(stderr, "%s mrc: no key references: the trace (or the "
                "--read/--write patterns) selected none\n", tool_name);
    else if (t->reads == 0)
        fprintf(stderr, "%s mrc: no requests among %" PRIu64 " key "
                "references (writes only warm the cache; --requests all "
                "counts them)\n", tool_name, t->references);
}

/* --by: a curve a group, in one thread over the walked keys. */
static int run_by(mrc_opts *o, const tool_args *a, tool_inputs *in,
                  outfile *svg)
{
    o->by.every = o->every;
    bool whole = true;
    bool ok = tool_mrc_by_run(in, &o->ops, a, &o->by, svg, &whole);
    return tool_keys_finish(in, &o->ops, "mrc", a->quiet, ok, whole);
}

/* mrc's own options, beside the key commands' shared ones. */
static const struct option mrc_options[] = {
    TOOL_KEYS_OPTIONS,
    {"sample", required_argument, NULL, OPT_SAMPLE},
    {"svg", required_argument, NULL, OPT_SVG},
    {"requests", required_argument, NULL, OPT_REQUESTS},
    {"seed", required_argument, NULL, OPT_SEED},
    {"samples", required_argument, NULL, OPT_SAMPLES},
    {"prefix", no_argument, NULL, OPT_PREFIX},
    {"lookups-only", no_argument, NULL, OPT_LOOKUPS_ONLY},
    {"chunk-size", required_argument, NULL, OPT_CHUNK_SIZE},
    {"l1", required_argument, NULL, OPT_L1},
    {"policy", required_argument, NULL, OPT_POLICY},
    {"watermark", required_argument, NULL, OPT_WATERMARK},
    {"eviction-ratio", required_argument, NULL, OPT_EVICTION_RATIO},
    {"target", required_argument, NULL, OPT_TARGET},
    {"by", required_argument, NULL, OPT_BY},
    {"isolated", no_argument, NULL, OPT_ISOLATED},
    {NULL, 0, NULL, 0}};

int cmd_mrc(int argc, char **argv)
{
    mrc_opts o = {.sample = 1, .seed = 1};
    tool_args a;
    tool_keys_parse("mrc", mrc_options, on_option, &o, help, &o.ops, argc,
                    argv, &a);
    check_options(&o);
    outfile *svg;
    tool_inputs in;
    if (!tool_keys_start("mrc", "--svg", o.svg, &a, &o.ops, &svg, &in))
        return EXIT_REFUSED;
    if (o.by.by)
        return run_by(&o, &a, &in, svg);
    new_refs(&o);
    bool whole = false;
    lct_l1_stats l1 = {0};
    o.failed = !start_stream(&o, &a) ||
               !tool_keys_collect(&in, &o.ops, "mrc", &a, o.refs, &whole) ||
               (o.l1 && !o.ops.stream && !behind_l1(&o, &l1));
    if (o.failed) { /* nothing takes the stream's curve */
        lct_mrc_stream_free(o.ops.stream);
        o.ops.stream = NULL;
    }
    lct_mrc *ms[MAX_SAMPLES] = {NULL};
    lct_mrc_totals t[MAX_SAMPLES];
    tool_curve c = {0};
    bool ok = !o.failed && compute(&o, ms, o.samples, &l1);
    for (unsigned s = 0; ok && s < o.samples; s++)
        lct_mrc_totals_get(ms[s], &t[s]);
    if (ok && lct_mrc_curve_make(ms, o.samples, &c, NULL) != LCT_OK) {
        fprintf(stderr, "%s mrc: out of memory\n", tool_name);
        ok = false;
    }
    if (ok && c.n == 0)
        say_empty(t);
    double *tokens = ok && o.prefix ? token_hits(ms[0], &c) : NULL;
    if (ok && o.policies.n && o.target == 0)
        ok = tool_mrc_policies_run(&o.policies, o.refs, &c, o.every,
                                   tokens, a.jobs, a.quiet);
    double *both = ok && o.l1 ? both_tiers(&l1, &c, tokens) : NULL;
    tool_mrc_view view = {
        .t = t, .k = o.samples, .c = &c, .token_hit = tokens,
        .l1 = o.l1 ? &l1 : NULL, .l1_label = o.l1_label,
        .combined_hit = both,
        .combined_token_hit = both ? both + c.n : NULL,
        .chunk_size = o.chunk_size ? o.chunk_size
                      : o.prefix ? tool_chunk_size(in.r) : 0,
        .policies = o.policies.n ? &o.policies : NULL};
    tool_svg_target answer = {0};
    ok = ok && print_or_answer(&o, &a, &view, ms[0], &answer);
    if (svg && ok)
        ok = tool_mrc_write_svg(svg,
                       a.noperands > 1 ? "merged traces"
                                       : tool_input_name(a.file),
                       &view, o.l1_label, o.target > 0 ? &answer : NULL);
    else
        outfile_abort(svg);
    free(o.policies.hit);
    free(o.policies.token_hit);
    free(tokens);
    free(both);
    lct_mrc_curve_free(&c);
    for (unsigned s = 0; s < o.samples; s++)
        lct_mrc_free(ms[s]);
    lct_refs_free(o.refs);
    return tool_keys_finish(&in, &o.ops, "mrc", a.quiet, ok, whole);
}
