/*
 * cmd_sim.c - `lct sim`: LMCache's cache simulator at one capacity over
 * a trace (lct_sim_run), its report as LMCache's `cache-simulator`
 * prints it (sim_text.c), as JSON, its distributions as CSV, and its
 * chart of seven panels (sim_svg.c).
 */
#include "tool.h"
#include "keys.h"
#include "sim.h"

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
    OPT_L1_POLICY
};

typedef struct sim_opts {
    tool_keyops ops;
    bool have_capacity;
    lct_sim_options sim;
    uint64_t chunk_size;
    const char *svg;
    bool l1, l1_bytes;   /* --l1: the cache simulated is an L2 behind */
    uint64_t l1_capacity;
} sim_opts;

static void help(void)
{
    printf("usage: lct sim --capacity CAP [-q] [-j N] [--json | --csv]\n"
           "               [--svg FILE] [--lookups-only] [--chunk-size N]\n"
           "               [--l1 CAP [--l1-policy NAME]] [--policy NAME]\n"
           "               [--per-key]\n"
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
           "               G or T (64G, 1.5TiB; powers of 1024)\n"
           "  --lookups-only  only the read calls' keys, as LMCache's\n"
           "               simulator models its logs (writes give none)\n"
           "  --chunk-size N  tokens a chunk holds (default: the header's\n"
           "               sm_config_json chunk_size)\n"
           "  --policy NAME  the cache's eviction policy (default lru, as\n"
           "               LMCache's simulator): fifo, clock, sieve, lfu,\n"
           "               arc or s3fifo, as libCacheSim has them\n"
           "  --per-key    every chunk of a lookup found counts as hit, not\n"
           "               only its leading run (libCacheSim's rule)\n"
           "  --l1 CAP     an LRU L1 of CAP in front: the cache simulated is\n"
           "               the L2 behind it (L1's misses, every store)\n"
           "  --l1-policy NAME  the L1's own eviction policy (default lru)\n"
           "  --points N   points of the cumulative series in JSON and the\n"
           "               chart (default 100)\n"
           "  --svg FILE   also draw the seven panels as an SVG chart\n"
           "  --csv        the distributions as a table\n"
           "  --json       everything, the series included\n"
           TOOL_HELP_KEYS
           "  -j N         taken, not used: sim reads in one pass, in order\n"
           TOOL_HELP_READING);
}

static void on_option(void *ctx, int c, const char *arg)
{
    sim_opts *o = ctx;
    if (tool_keyops_select(&o->ops, "sim", c, arg))
        return;
    if (c == OPT_CAPACITY) {
        o->have_capacity = tool_parse_capacity("sim", "--capacity", arg,
                                               &o->sim.in_bytes,
                                               &o->sim.capacity);
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
    }
}

/* MARK: JSON and CSV */

static void json_dist(const char *name, const lct_sim_dist *d)
{
    printf(",\"%s\":{\"count\":%" PRIu64 ",\"mean\":", name, d->count);
    tool_put_json_double(d->mean);
    printf(",\"max\":%" PRIu64 ",\"p25\":%" PRIu64 ",\"p50\":%" PRIu64
           ",\"p75\":%" PRIu64 ",\"p90\":%" PRIu64 ",\"p99\":%" PRIu64
           ",\"log2_bins\":[",
           d->max, d->p25, d->p50, d->p75, d->p90, d->p99);
    int last = 64;
    while (last > 0 && !d->bins[last])
        last--;
    for (int i = 0; i <= last; i++)
        printf("%s%" PRIu64, i ? "," : "", d->bins[i]);
    fputs("]}", stdout);
}

/* The policy and the rule when they are not LMCache's simulator's. */
static bool own_policy(const lct_sim_options *o)
{
    return (o->policy && o->policy != LCT_POLICY_LRU) || o->per_key ||
           (o->l1_policy && o->l1_policy != LCT_POLICY_LRU);
}

static const char *policy_of(lct_policy_kind k)
{
    return lct_policy_name(k ? k : LCT_POLICY_LRU);
}

/* The L1's figures open the object when the simulation has one. */
static void print_json_l1(const lct_sim_report *r, const lct_l1_stats *l1)
{
    if (l1) {
        printf("{\"l1\":{\"capacity\":%" PRIu64 ",\"capacity_unit\":"
               "\"%s\",\"keys\":%" PRIu64 ",\"keys_hit\":%" PRIu64
               ",\"chunks\":%" PRIu64 ",\"hit_chunks\":%" PRIu64
               ",\"keys_to_l2\":%" PRIu64 ",\"writes_through\":%" PRIu64
               ",\"evictions\":%" PRIu64 "},\"both_token_hit_rate\":",
               l1->capacity, l1->in_bytes ? "bytes" : "keys", l1->keys,
               l1->keys_hit, l1->positions, l1->positions_hit,
               l1->keys_to_l2, l1->writes, l1->evictions);
        tool_put_json_double(tool_sim_both_rate(r, l1));
        putchar(',');
    } else {
        putchar('{');
    }
}

/* From the mean request hit rate on: the per-request distributions,
 * the cumulative rates and the series over time. */
static void json_request_tail(const lct_sim_report *r)
{
    tool_put_json_double(r->call_hit_mean);
    const char *names[] = {"p25", "p50", "p75", "p90", "p99"};
    for (int i = 0; i < 5; i++) {
        printf(",\"%s\":", names[i]);
        tool_put_json_double(r->call_hit_p[i]);
    }
    fputs(",\"bins_5pct\":[", stdout);
    for (int i = 0; i < 21; i++)
        printf("%s%" PRIu64, i ? "," : "", r->call_hit_bins[i]);
    fputs("]}", stdout);
    json_dist("hit_prefix_chunks", &r->leading);
    json_dist("request_chunks", &r->call_positions);
    json_dist("chunk_reuse", &r->reuse);
    json_dist("span", &r->span);
    json_dist("lru_position", &r->lru_position);
    fputs(",\"cumulative\":[", stdout);
    for (int i = 0; i < 5; i++) {
        printf("%s{\"after_requests\":%" PRIu64 ",\"token_hit_rate\":",
               i ? "," : "", r->cumulative_calls[i]);
        tool_put_json_double(r->cumulative[i]);
        putchar('}');
    }
    fputs("],\"series\":[", stdout);
    for (size_t i = 0; i < r->nseries; i++) {
        printf("%s{\"requests\":%" PRIu64 ",\"t_mono\":", i ? "," : "",
               r->series[i].calls);
        tool_put_json_double(r->series[i].seconds);
        fputs(",\"token_hit_rate\":", stdout);
        tool_put_json_double(r->series[i].hit_ratio);
        putchar('}');
    }
}

static void print_json(const lct_sim_report *r, uint64_t chunk,
                       bool tokens, const lct_l1_stats *l1,
                       const lct_sim_options *o)
{
    print_json_l1(r, l1);
    if (own_policy(o))
        printf("\"policy\":\"%s\",\"per_key\":%s,\"l1_policy\":\"%s\",",
               policy_of(o->policy), o->per_key ? "true" : "false",
               policy_of(o->l1_policy));
    printf("\"capacity\":%" PRIu64 ",\"capacity_unit\":\"%s\","
           "\"requests\":%" PRIu64 ",\"chunk_size\":",
           r->capacity, r->in_bytes ? "bytes" : "keys", r->calls);
    chunk ? (void)printf("%" PRIu64, chunk) : (void)fputs("null", stdout);
    if (tokens)
        printf(",\"total_tokens\":%" PRIu64 ",\"hit_tokens\":%" PRIu64
               ",\"miss_tokens\":%" PRIu64,
               r->tokens, r->hit_tokens, r->tokens - r->hit_tokens);
    else
        fputs(",\"total_tokens\":null,\"hit_tokens\":null,"
              "\"miss_tokens\":null", stdout);
    printf(",\"chunks\":%" PRIu64 ",\"hit_chunks\":%" PRIu64
           ",\"token_hit_rate\":", r->positions, r->positions_hit);
    tool_put_json_double(r->tokens ? (double)r->hit_tokens /
                                         (double)r->tokens : 0);
    printf(",\"keys\":%" PRIu64 ",\"keys_hit\":%" PRIu64
           ",\"references\":%" PRIu64 ",\"distinct_keys\":%" PRIu64
           ",\"capacity_keys\":%" PRIu64 ",\"key_bytes\":%" PRIu64
           ",\"mean_key_bytes\":",
           r->keys, r->keys_hit, r->references, r->distinct_keys,
           r->capacity_keys, r->key_bytes);
    tool_put_json_double(r->mean_key_bytes);
    printf(",\"occupancy_keys\":%" PRIu64 ",\"occupancy_bytes\":%" PRIu64
           ",\"evictions\":%" PRIu64 ",\"bypassed\":%" PRIu64
           ",\"requests_no_hit\":%" PRIu64 ",\"requests_all_hit\":%" PRIu64
           ",\"request_hit_rate\":{\"mean\":",
           r->occupancy_keys, r->occupancy_bytes, r->evictions, r->bypassed,
           r->calls_no_hit, r->calls_all_hit);
    json_request_tail(r);
    fputs("]}\n", stdout);
}

static void csv_dist(const char *name, const lct_sim_dist *d)
{
    printf("%s,%" PRIu64 ",", name, d->count);
    tool_put_json_double(d->mean);
    printf(",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64
           ",%" PRIu64 "\r\n",
           d->max, d->p25, d->p50, d->p75, d->p90, d->p99);
}

static void print_csv(const lct_sim_report *r)
{
    fputs("distribution,count,mean,max,p25,p50,p75,p90,p99\r\n", stdout);
    csv_dist("hit_prefix_chunks", &r->leading);
    csv_dist("request_chunks", &r->call_positions);
    csv_dist("chunk_reuse", &r->reuse);
    csv_dist("span", &r->span);
    csv_dist("lru_position", &r->lru_position);
}

/* MARK: the command */

/* The trace's keys fed to the simulation a record at a time: a record's
 * keys are one call, each of its chunks one entry (lct_sim_add_key); a
 * lookup imported from LMCache's logs counts the tokens it logged. */
typedef struct feed {
    lct_sim *sim;
    uint64_t idx;
    bool open, failed;
    bool logged; /* the call's record states its tokens: */
    bool any_logged; /* some call's did (an imported log's) */
    uint64_t seq_len, chunk_tokens;
    bool sized;  /* and its chunk bytes by LMCache's dtype table: */
    uint64_t chunk_bytes;
    bool in_bytes, first_done;
    uint64_t unsized_at; /* +1: the first lookup's record sized 0 */
} feed;

static void feed_end(feed *f)
{
    if (f->open &&
        (f->logged ? lct_sim_end_call_tokens(f->sim, 1, f->chunk_tokens,
                                             f->seq_len)
                   : lct_sim_end_call(f->sim, 1)) != LCT_OK)
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
        f->logged = op == TOOL_KEY_READ &&
                    lct_lookup_tokens(rec, &f->seq_len, &f->chunk_tokens);
        f->any_logged |= f->logged;
        f->sized = lct_lookup_chunk_bytes(rec, &f->chunk_bytes);
        f->open = true;
        f->idx = idx;
        /* LMCache's simulator sizes chunks by the first lookup's layout
         * and refuses a byte capacity when that gives 0 */
        if (!f->first_done && f->in_bytes && f->sized && !f->chunk_bytes)
            f->unsized_at = rec->offset + 1;
        f->first_done = true;
    }
    if (key && lct_sim_add_key(f->sim, key, f->sized ? f->chunk_bytes : bytes,
                               rec->t_mono, op == TOOL_KEY_READ) != LCT_OK)
        f->failed = true;
    return f->failed || f->unsized_at;
}

static bool run_sim(sim_opts *o, tool_inputs *in, const tool_args *a,
                    outfile *svg, bool *whole)
{
    lct_sim_report r;
    lct_error err;
    o->sim.l1_capacity = o->l1 ? o->l1_capacity : 0;
    o->sim.l1_in_bytes = o->l1_bytes;
    uint64_t chunk = o->chunk_size ? o->chunk_size : tool_chunk_size(in->r);
    o->sim.chunk_tokens = chunk;
    o->ops.keyless = true;
    feed f = {.in_bytes = o->sim.in_bytes};
    if (lct_sim_new(&o->sim, &f.sim, &err) != LCT_OK)
        tool_usage_error("sim", "%s", err.message);
    /* one pass, in trace order: memory grows with the keys, not the
     * references */
    *whole = tool_keys_walk(in, &o->ops, "sim", on_key, &f);
    feed_end(&f);
    if (f.unsized_at) {
        fprintf(stderr, "%s sim: %s: the first lookup (record at offset %"
                PRIu64 ") logged a layout that weighs 0 bytes a chunk by "
                "LMCache's dtype table (its simulator refuses it too): give "
                "the capacity in chunks\n", tool_name,
                tool_input_name(a->file), f.unsized_at - 1);
        lct_sim_free(f.sim);
        outfile_abort(svg);
        *whole = false;
        return false;
    }
    bool ok = !f.failed && lct_sim_finish(f.sim, &r, &err) == LCT_OK;
    lct_sim_free(f.sim);
    if (!ok) {
        fprintf(stderr, "%s sim: out of memory\n", tool_name);
        outfile_abort(svg);
        return false;
    }
    if (!r.calls && !a->quiet)
        fprintf(stderr, "%s sim: no lookups: the trace (or --read) "
                "selected none\n", tool_name);
    const lct_l1_stats *front = r.has_l1 ? &r.l1 : NULL;
    /* an imported log's lookups state their tokens, a chunk size or not */
    bool tokens = chunk || f.any_logged;
    if (a->json)
        print_json(&r, chunk, tokens, front, &o->sim);
    else if (a->csv)
        print_csv(&r);
    else
    {
        if (own_policy(&o->sim))
            printf("Eviction policy: %s%s%s%s; the report is otherwise "
                   "LMCache's simulator's\n",
                   policy_of(o->sim.policy),
                   o->sim.per_key ? ", every chunk found a hit (per key)"
                                  : "",
                   o->l1 ? ", the L1's " : "",
                   o->l1 ? policy_of(o->sim.l1_policy) : "");
        tool_sim_text(&r, tokens, front);
    }
    if (svg)
        ok = tool_sim_svg(svg, a->noperands > 1 ? "merged traces"
                                                : tool_input_name(a->file),
                          &r, chunk);
    lct_sim_report_free(&r);
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
        {"l1-policy", required_argument, NULL, OPT_L1_POLICY},
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
    outfile *svg;
    tool_inputs in;
    if (!tool_keys_start("sim", "--svg", o.svg, &a, &o.ops, &svg, &in))
        return EXIT_REFUSED;
    bool whole = true;
    bool ok = run_sim(&o, &in, &a, svg, &whole);
    return tool_keys_finish(&in, &o.ops, "sim", a.quiet, ok, whole);
}
