/*
 * cmd_import.c - `lct import lookup-logs PATH... OUT.lct`: LMCache's
 * lookup-hash logs made a trace (lookup_log.c reads them), so every lct
 * command serves people who have only those logs; `lct import mooncake
 * FILE OUT` and `bailian` the published KV-cache traces of those formats
 * (trace_import.c).  OUT is written under a temporary name and renamed;
 * it is never one of the inputs.
 */
#include "tool.h"
#include "lookup.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <string.h>

static void help(void)
{
    printf("usage: lct import lookup-logs [-q] PATH... OUT\n"
           "       lct import mooncake|bailian [-q] [--block-size N]\n"
           "                  [--chunk-size N] [--model NAME]\n"
           "                  [--layout L,H,D[,DTYPE]] [--start T] FILE OUT\n"
           "\n"
           "LMCache's lookup-hash logs (the JSONL files its\n"
           "LookupHashLoggingSubscriber writes, lookup_hashes_*.jsonl) as a\n"
           "trace OUT: each logged lookup, in timestamp order, becomes a\n"
           "submit_prefetch_task record whose keys are its chunk hashes\n"
           "(model_name as logged, kv_rank 0) with its layout, request\n"
           "id, seq_len, chunk_size and its chunk's bytes by LMCache's\n"
           "dtype table (lct sim counts by them as LMCache's simulator);\n"
           "the header's sm_config_json holds the first event's\n"
           "chunk_size.  A PATH that is a directory gives its\n"
           "lookup_hashes_*.jsonl; a malformed line is warned about with its\n"
           "file and line and skipped (exit 3).\n"
           "\n"
           "mooncake (Mooncake's FAST'25 traces: timestamp in ms,\n"
           "input_length, hash_ids of 512-token blocks) and bailian (Qwen's\n"
           "Bailian usage traces: chat_id, timestamp in s, input_length,\n"
           "hash_ids of 16-token blocks), or any file of those fields: each\n"
           "request, in timestamp order, becomes a submit_prefetch_task of\n"
           "its whole chunks (seq_len its input_length, request id its\n"
           "chat_id or line), then reserve_write and finish_write of the\n"
           "chunks no request before it stored.  A chunk is known by its\n"
           "prefix of hash ids and where it ends in its block, so blocks\n"
           "fold or split into chunks.\n"
           "\n"
           "  --block-size N  tokens a hash id covers (default 512 mooncake,\n"
           "               16 bailian)\n"
           "  --chunk-size N  tokens an LMCache chunk holds (default 256)\n"
           "  --model NAME the keys' model_name (default\n"
           "               meta-llama/Llama-3.1-8B-Instruct)\n"
           "  --layout L,H,D[,DTYPE]  a chunk's KV layout: L layers, H kv heads\n"
           "               of dimension D, DTYPE (a torch dtype; default\n"
           "               32,8,128,bfloat16: Llama-3.1-8B's, 32 MiB a\n"
           "               256-token chunk)\n"
           "  --start T    t_wall of the trace's time 0 (default 1764600000)\n"
           "  -q           no warnings on stderr\n"
           "  -h, --help   this text\n");
}

enum { OPT_BLOCK = 300, OPT_CHUNK, OPT_MODEL, OPT_START, OPT_LAYOUT };

/* --layout L,H,D[,DTYPE]: whole numbers from 1, a dtype LMCache sizes. */
static void parse_layout(tool_trace_import *o, const char *arg)
{
    static const char *dtypes[] = {"bfloat16", "float16", "float32",
                                   "float8_e4m3fn", "float8_e5m2", "int8",
                                   "uint8"};
    long long v[3];
    char dtype[32] = "bfloat16";
    int used = 0, n = sscanf(arg, "%lld,%lld,%lld%n", &v[0], &v[1], &v[2],
                             &used);
    bool ok = n == 3 && v[0] >= 1 && v[1] >= 1 && v[2] >= 1 &&
              v[0] <= 4096 && v[1] <= 4096 && v[2] <= 65536;
    if (ok && arg[used] == ',') {
        ok = strlen(arg + used + 1) < sizeof dtype;
        if (ok)
            strcpy(dtype, arg + used + 1);
    } else if (ok) {
        ok = arg[used] == '\0';
    }
    bool known = false;
    for (size_t i = 0; ok && i < sizeof dtypes / sizeof *dtypes; i++)
        if (strcmp(dtype, dtypes[i]) == 0) {
            known = true;
            o->dtype = dtypes[i];
        }
    if (!ok || !known)
        tool_usage_error("import", "--layout is LAYERS,KV_HEADS,HEAD_DIM"
                         "[,DTYPE] (32,8,128,bfloat16; dtypes bfloat16, "
                         "float16, float32, float8_e4m3fn, float8_e5m2, "
                         "int8, uint8), not '%s'", arg);
    o->layers = v[0];
    o->kv_heads = v[1];
    o->head_dim = v[2];
}

static void on_option(void *ctx, int c, const char *arg)
{
    tool_trace_import *o = ctx;
    if (c == OPT_BLOCK || c == OPT_CHUNK) {
        long long n = tool_parse_count("import", c == OPT_BLOCK ?
                                       "--block-size" : "--chunk-size", arg);
        if (n < 1 || n > (1 << 24))
            tool_usage_error("import", "%s is 1 to 16777216 tokens, not "
                             "'%s'", c == OPT_BLOCK ? "--block-size"
                                                    : "--chunk-size", arg);
        *(c == OPT_BLOCK ? &o->block_size : &o->chunk_size) = (uint64_t)n;
    } else if (c == OPT_MODEL) {
        o->model = arg;
    } else if (c == OPT_START) {
        o->start = tool_parse_seconds("import", "--start", arg);
    } else if (c == OPT_LAYOUT) {
        parse_layout(o, arg);
    }
}

static int lookup_logs(const tool_args *a)
{
    char **paths = a->operands + 1;
    int npaths = a->noperands - 2;
    const char *target = a->operands[a->noperands - 1];
    glob_t files;
    if (!tool_lookup_logs_files(paths, npaths, &files))
        tool_usage_error("import", "out of memory");
    /* OUT may be none of the logs, named or found in a directory. */
    tool_args inputs = {.operands = files.gl_pathv,
                        .noperands = (int)files.gl_pathc};
    outfile *out = tool_output_open("import", "OUT", target, &inputs);
    if (!out) {
        globfree(&files);
        return EXIT_REFUSED;
    }
    uint64_t events = 0, bad = 0;
    bool ok = tool_lookup_logs_import(&files, outfile_fd(out), a->quiet,
                                      &events, &bad);
    globfree(&files);
    if (!ok) {
        outfile_abort(out);
        return EXIT_REFUSED;
    }
    if (!tool_output_finish("import", out, NULL))
        return EXIT_REFUSED;
    if (!a->quiet) {
        fprintf(stderr, "%s import: %" PRIu64 " lookups written to ",
                tool_name, events);
        tool_put_vis(stderr, target, strlen(target));
        fprintf(stderr, "; %" PRIu64 " malformed lines skipped\n", bad);
    }
    return bad ? EXIT_DAMAGED : EXIT_OK;
}

/* OUT written whole from what run writes to its descriptor. */
static int published(tool_trace_import *o, const tool_args *a)
{
    if (a->noperands != 3)
        tool_usage_error("import", "%s takes one FILE and OUT", o->format);
    o->path = a->operands[1];
    o->quiet = a->quiet;
    tool_args inputs = {.operands = a->operands + 1, .noperands = 1};
    const char *target = a->operands[2];
    outfile *out = tool_output_open("import", "OUT", target, &inputs);
    if (!out)
        return EXIT_REFUSED;
    uint64_t requests = 0, bad = 0;
    if (!tool_trace_import_run(o, outfile_fd(out), &requests, &bad)) {
        outfile_abort(out);
        return EXIT_REFUSED;
    }
    if (!tool_output_finish("import", out, NULL))
        return EXIT_REFUSED;
    if (!a->quiet) {
        fprintf(stderr, "%s import: %" PRIu64 " requests written to ",
                tool_name, requests);
        tool_put_vis(stderr, target, strlen(target));
        fprintf(stderr, "; %" PRIu64 " malformed lines skipped\n", bad);
    }
    return bad ? EXIT_DAMAGED : EXIT_OK;
}

int cmd_import(int argc, char **argv)
{
    static const struct option own[] = {
        {"block-size", required_argument, NULL, OPT_BLOCK},
        {"chunk-size", required_argument, NULL, OPT_CHUNK},
        {"model", required_argument, NULL, OPT_MODEL},
        {"start", required_argument, NULL, OPT_START},
        {"layout", required_argument, NULL, OPT_LAYOUT},
        {NULL, 0, NULL, 0}};
    tool_trace_import o = {.chunk_size = 256,
                           .model = "meta-llama/Llama-3.1-8B-Instruct",
                           .start = 1764600000, .layers = 32, .kv_heads = 8,
                           .head_dim = 128, .dtype = "bfloat16"};
    tool_cmd cmd = {.name = "import", .shared = TOOL_Q, .own = own,
                    .on_option = on_option, .ctx = &o, .help = help,
                    .min_operands = 3};
    tool_args a;
    tool_parse_args(&cmd, argc, argv, &a);
    const char *what = a.operands[0];
    if (strcmp(what, "mooncake") == 0 || strcmp(what, "bailian") == 0) {
        bool moon = what[0] == 'm';
        o.format = what;
        o.millis = moon;
        if (!o.block_size)
            o.block_size = moon ? 512 : 16;
        return published(&o, &a);
    }
    if (strcmp(what, "lookup-logs") != 0)
        tool_usage_error("import", "what to import: lookup-logs, mooncake "
                         "or bailian, not '%s'", what);
    if (o.block_size || o.chunk_size != 256 || o.start != 1764600000 ||
        strcmp(o.model, "meta-llama/Llama-3.1-8B-Instruct") != 0 ||
        o.layers != 32 || o.kv_heads != 8 || o.head_dim != 128 ||
        strcmp(o.dtype, "bfloat16") != 0)
        tool_usage_error("import", "lookup-logs takes no --block-size, "
                         "--chunk-size, --model, --layout or --start: the "
                         "logs say");
    return lookup_logs(&a);
}
