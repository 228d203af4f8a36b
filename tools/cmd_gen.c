/*
 * cmd_gen.c - `lct gen`: synthesise a realistic storage-level trace, or
 * an L2-level one, with the library's writer (the generator the sample
 * and the benchmark use).
 */
#include "tracegen.h"
#include "tool.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void help(void)
{
    printf("usage: lct gen -n N [--seed S] [--max-keys K] [--docs D]\n"
           "               [--shape qwen|llama] [--model NAME]\n"
           "               [--cache-salt S] [--kv-ranks N] [--groups N]\n"
           "               [--sizes N] [--spec] [--mix] [--start T]\n"
           "               [--per-rank-hashes]\n"
           "               [--level l2 [--l2-adapters N]]\n"
           "               OUT\n"
           "\n"
           "Write a realistic storage-level trace of N records to OUT (or -\n"
           "for standard output): prefetches and writes of 1 to K (default\n"
           "32) codec-wrapped ObjectKeys, rounded up to whole chunks: each\n"
           "chunk a key per kv rank sharing its 32-byte hash, as LMCache's\n"
           "keys are, up to 2 ms apart.  A request's keys are the first chunks of one of D\n"
           "documents (default 1000) drawn by Zipf's law, so requests share\n"
           "prefixes and keys are reused; --docs 0 gives every request keys\n"
           "of its own.  The same seed gives the same bytes.\n"
           "\n"
           "With --level l2, an L2-level trace as LMCache's l2-tracing\n"
           "recorder writes one: each request's lookup in an L2 adapter, a\n"
           "load of its hits and an unlock, a store of its misses (or a\n"
           "store alone, or a delete), the hits those of earlier stores;\n"
           "at most N records, every task completed, then the footer.\n"
           "\n"
           "  -n, --records N  records to write\n"
           "  --seed S         generator seed (default 1)\n"
           "  --max-keys K     keys per call, at most (1 to 1024)\n"
           "  --docs D         documents keys are drawn from (0 to 1000000)\n"
           "  --shape S        the keys' shape: qwen (default: Qwen/Qwen3-8B,\n"
           "                   kv ranks 0-1) or llama (the 32-byte\n"
           "                   meta-llama/Llama-3.1-8B-Instruct, kv ranks 0-7,\n"
           "                   object groups 0-2, a cache_salt)\n"
           "  --model NAME     the keys' model_name (after --shape's)\n"
           "  --cache-salt S   a cache_salt in every key\n"
           "  --kv-ranks N     a key per kv rank 0 to N-1 of each chunk\n"
           "                   (1-1024)\n"
           "  --groups N       object_group_id chunk mod N (1-1024); with\n"
           "                   0 the field is left out\n"
           "  --sizes N        key sizes that vary: a document's keys weigh\n"
           "                   256 x (1 to N) tokens of layout (1-64;\n"
           "                   default 1: every key the same)\n"
           "  --spec           prefetches in newer LMCache's form: a\n"
           "                   PrefetchRequestSpec with attn_desc (world_size\n"
           "                   the kv ranks) and a layout per object group\n"
           "  --mix            a fleet's keys, request by request: three\n"
           "                   models (13, 32 and 34 bytes; 2, 8 and 4 kv\n"
           "                   ranks; object groups for one), two layouts,\n"
           "                   a cache_salt (one of 8 tenants) on one key in\n"
           "                   five (instead of the keys' options)\n"
           "  --level L        storage (default) or l2\n"
           "  --l2-adapters N  l2: requests spread over adapters 0 to N-1\n"
           "                   (1-16, default 1)\n"
           "  --start T        t_wall at the first record's t_mono 0\n"
           "                   (default 1764600000): seeds with their own\n"
           "                   starts make a fleet spread in time\n"
           "  --per-rank-hashes  the older generator's keys: each key its\n"
           "                   own chunk of one kv rank (key i: rank i mod\n"
           "                   N), its hash 8 bytes repeated\n"
           "  -h, --help       this text\n");
}

typedef struct gen_opts {
    long long records, seed, max_keys, docs, sizes;
    gen_shape shape;
    bool spec, mix, per_rank, l2;
    long long adapters;
    double start;
    gen_keys fields; /* what --model, --cache-salt, ... said */
    bool set[4];     /* which of them were given */
} gen_opts;

enum {
    OPT_SEED = 300,
    OPT_MAX_KEYS,
    OPT_DOCS,
    OPT_SHAPE,
    OPT_MODEL,
    OPT_SALT,
    OPT_KV_RANKS,
    OPT_GROUPS,
    OPT_SIZES,
    OPT_SPEC,
    OPT_MIX,
    OPT_START,
    OPT_PER_RANK,
    OPT_LEVEL,
    OPT_ADAPTERS
};

/* The options that set one field of the keys. */
static bool key_option(gen_keys *k, int c, const char *arg)
{
    long long n;
    switch (c) {
    case OPT_MODEL:
        k->model = arg;
        return true;
    case OPT_SALT:
        k->salt = arg;
        return true;
    case OPT_KV_RANKS:
    case OPT_GROUPS:
        n = tool_parse_count("gen", c == OPT_GROUPS ? "--groups"
                                                    : "--kv-ranks", arg);
        if (n > 1024 || (n == 0 && c == OPT_KV_RANKS))
            tool_usage_error("gen", "%s is %s to 1024",
                             c == OPT_GROUPS ? "--groups" : "--kv-ranks",
                             c == OPT_GROUPS ? "0" : "1");
        *(c == OPT_GROUPS ? &k->groups : &k->kv_ranks) = (unsigned)n;
        return true;
    default:
        return false;
    }
}

static void gen_option(void *ctx, int c, const char *arg)
{
    gen_opts *o = ctx;
    if (c == 'n') {
        o->records = tool_parse_count("gen", "-n", arg);
    } else if (c == OPT_SEED) {
        o->seed = tool_parse_count("gen", "--seed", arg);
    } else if (c == OPT_MAX_KEYS) {
        o->max_keys = tool_parse_count("gen", "--max-keys", arg);
        if (o->max_keys < 1 || o->max_keys > 1024)
            tool_usage_error("gen", "--max-keys is 1 to 1024");
    } else if (c == OPT_SHAPE) {
        if (strcmp(arg, "qwen") != 0 && strcmp(arg, "llama") != 0)
            tool_usage_error("gen", "--shape is qwen or llama, not '%s'", arg);
        o->shape = strcmp(arg, "llama") == 0 ? GEN_SHAPE_LLAMA
                                             : GEN_SHAPE_QWEN;
    } else if (key_option(&o->fields, c, arg)) {
        o->set[c - OPT_MODEL] = true;
    } else if (c == OPT_SIZES) {
        o->sizes = tool_parse_count("gen", "--sizes", arg);
        if (o->sizes < 1 || o->sizes > 64)
            tool_usage_error("gen", "--sizes is 1 to 64");
    } else if (c == OPT_SPEC) {
        o->spec = true;
    } else if (c == OPT_MIX) {
        o->mix = true;
    } else if (c == OPT_PER_RANK) {
        o->per_rank = true;
    } else if (c == OPT_LEVEL) {
        if (strcmp(arg, "storage") != 0 && strcmp(arg, "l2") != 0)
            tool_usage_error("gen", "--level is storage or l2, not '%s'",
                             arg);
        o->l2 = strcmp(arg, "l2") == 0;
    } else if (c == OPT_ADAPTERS) {
        o->adapters = tool_parse_count("gen", "--l2-adapters", arg);
        if (o->adapters < 1 || o->adapters > GEN_L2_ADAPTERS_MAX)
            tool_usage_error("gen", "--l2-adapters is 1 to %d",
                             GEN_L2_ADAPTERS_MAX);
    } else if (c == OPT_START) {
        char *end;
        errno = 0;
        o->start = strtod(arg, &end);
        if (errno || end == arg || *end || !(o->start >= 0) ||
            o->start > 1e11)
            tool_usage_error("gen", "--start is seconds since 1970, not '%s'",
                             arg);
    } else if (c == OPT_DOCS) {
        o->docs = tool_parse_count("gen", "--docs", arg);
        if (o->docs > 1000000)
            tool_usage_error("gen", "--docs is 0 to 1000000");
    }
}

int cmd_gen(int argc, char **argv)
{
    static const struct option own[] = {
        {"records", required_argument, NULL, 'n'},
        {"seed", required_argument, NULL, OPT_SEED},
        {"max-keys", required_argument, NULL, OPT_MAX_KEYS},
        {"docs", required_argument, NULL, OPT_DOCS},
        {"shape", required_argument, NULL, OPT_SHAPE},
        {"model", required_argument, NULL, OPT_MODEL},
        {"cache-salt", required_argument, NULL, OPT_SALT},
        {"kv-ranks", required_argument, NULL, OPT_KV_RANKS},
        {"groups", required_argument, NULL, OPT_GROUPS},
        {"sizes", required_argument, NULL, OPT_SIZES},
        {"spec", no_argument, NULL, OPT_SPEC},
        {"mix", no_argument, NULL, OPT_MIX},
        {"start", required_argument, NULL, OPT_START},
        {"per-rank-hashes", no_argument, NULL, OPT_PER_RANK},
        {"level", required_argument, NULL, OPT_LEVEL},
        {"l2-adapters", required_argument, NULL, OPT_ADAPTERS},
        {NULL, 0, NULL, 0}};
    gen_opts o = {.records = -1, .seed = 1, .max_keys = 32, .docs = 1000,
                  .start = 1764600000.0, .adapters = 1};
    tool_cmd cmd = {.name = "gen", .own = own, .own_short = "n:",
                    .on_option = gen_option, .ctx = &o, .help = help,
                    .operand = "OUT"};
    tool_args a;
    tool_parse_args(&cmd, argc, argv, &a);
    if (o.records < 0)
        tool_usage_error("gen", "-n N is required");
    if (o.l2 && (o.spec || o.mix))
        tool_usage_error("gen", "--level l2 writes the L2's own events: it "
                                "takes no --spec or --mix");
    if (!o.l2 && o.adapters != 1)
        tool_usage_error("gen", "--l2-adapters goes with --level l2");
    long long records = o.records, seed = o.seed, max_keys = o.max_keys;
    /* the shape's fields, then each one given on its own */
    gen_keys k = gen_shape_keys(o.shape);
    if (o.set[OPT_MODEL - OPT_MODEL])
        k.model = o.fields.model;
    if (o.set[OPT_SALT - OPT_MODEL])
        k.salt = o.fields.salt;
    if (o.set[OPT_KV_RANKS - OPT_MODEL])
        k.kv_ranks = o.fields.kv_ranks;
    if (o.set[OPT_GROUPS - OPT_MODEL])
        k.groups = o.fields.groups;
    gen_set_keys(&k);
    gen_set_sizes((unsigned)o.sizes);
    gen_set_spec(o.spec);
    gen_set_mix(o.mix);
    gen_set_per_rank_hashes(o.per_rank);
    gen_set_start(o.start);
    /* Written whole under a temporary name, then renamed: an interrupted
     * run leaves no half trace, and what was at OUT stays until then. */
    tool_args none = {0};
    outfile *out = tool_output_open("gen", "OUT", a.file, &none);
    if (!out)
        return EXIT_REFUSED;
    int rc = o.l2 ? gen_trace_l2(outfile_fd(out), (uint64_t)records,
                                 (unsigned)max_keys, (unsigned)o.docs,
                                 (uint64_t)seed, (unsigned)o.adapters)
                  : gen_trace(outfile_fd(out), (uint64_t)records,
                              (unsigned)max_keys, (unsigned)o.docs,
                              (uint64_t)seed);
    if (rc != 0) {
        int e = errno;
        outfile_abort(out);
        if (e == EPIPE)
            return EXIT_OK;
        fprintf(stderr, "%s gen: writing the output failed: %s\n", tool_name,
                strerror(e));
        return EXIT_REFUSED;
    }
    return tool_output_finish("gen", out, NULL) ? EXIT_OK : EXIT_REFUSED;
}
