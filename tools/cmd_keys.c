/*
 * cmd_keys.c - `lct keys`: the key reference stream of a trace, one row
 * per key a read or write call carried, in trace order (JSONL, --csv), or
 * libCacheSim's oracleGeneral binary (--oracle-general OUT), or LMCache's
 * lookup-hash log lines (--lookup-jsonl OUT, lookup_log.c).
 */
#include "tool.h"
#include "keys.h"
#include "lookup.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <string.h>

enum { OPT_ALL = 300, OPT_ORACLE, OPT_LOOKUP_JSONL,
       OPT_CHUNK_SIZE, OPT_TOP, OPT_REUSE_HISTOGRAM };

typedef struct keys_opts {
    tool_keyops ops;
    const char *oracle;  /* --oracle-general OUT */
    const char *lookups; /* --lookup-jsonl OUT */
    uint64_t chunk_size; /* --chunk-size */
    tool_lookup_log log;
    bool csv;
    lct_refs *refs;      /* gathered for --oracle-general */
    bool failed;
    bool quiet;
    size_t top;          /* --top N */
    bool histogram;      /* --reuse-histogram */
} keys_opts;

static void help(void)
{
    printf("usage: lct keys [-q] [--csv] [--read PAT] [--write PAT] [--all]\n"
           "                [--qualname PAT] [--since T] [--until T]\n"
           "                [--range A:B]\n"
           "                [--oracle-general OUT [-j N]]\n"
           "                [--lookup-jsonl OUT [--chunk-size N]]\n"
           "                [--top N | --reuse-histogram] FILE...\n"
           "\n"
           "One row per key reference, in trace order: idx (record number),\n"
           "t_mono, op (read, write), chunk_hash (hex), model_name, kv_rank,\n"
           "object_group_id, cache_salt, obj_id (the key's stable 64-bit id,\n"
           "hex) and bytes (the call's layout bytes: a layout describes one\n"
           "chunk, so each key of a call weighs that much; 0 unknown).\n"
           "Several FILEs are merged by t_wall (one thread; t_mono becomes\n"
           "seconds since the first record's t_wall, idx counts merged\n"
           "records; --range takes one FILE).\n"
           "\n"
           "  --read PAT   calls that are cache reads (default\n"
           "               submit_prefetch_task); repeatable\n"
           "  --write PAT  calls that are cache writes (default\n"
           "               reserve_write); repeatable\n"
           "               PAT is an exact qualname, a suffix after a dot,\n"
           "               or a glob, as dump --qualname\n"
           "  --all        also other calls that carry keys (op: qualname)\n"
           "  --qualname PAT, --since T, --until T, --range A:B   only those\n"
           "               records, as dump takes them (--range reads with\n"
           "               one thread)\n"
           "  --csv        CSV with a header line\n"
           "  --json       JSON lines (the default)\n"
           "  --lookup-jsonl OUT\n"
           "               write LMCache's lookup-hash JSONL to OUT (one\n"
           "               line per read call, as LookupHashLoggingSubscriber\n"
           "               writes them) instead of rows\n"
           "  --chunk-size N  its chunk_size (default: the header's)\n"
           "  --top N      instead, the N most referenced keys (ties: the\n"
           "               first seen first): obj_id, references, reads,\n"
           "               writes, the key's fields, first and last t_mono\n"
           "  --reuse-histogram  instead, how many keys had each count of\n"
           "               references, fewest first, with their share of\n"
           "               the keys and the running share\n"
           "  --oracle-general OUT\n"
           "               write libCacheSim's oracleGeneral binary to OUT\n"
           "               (24 bytes per reference) instead of rows; read\n"
           "               with -j N threads (default: one per usable CPU for\n"
           "               files of 64 MiB or more)\n"
           TOOL_HELP_READING);
}

static void on_option(void *ctx, int c, const char *arg)
{
    keys_opts *o = ctx;
    if (tool_keyops_select(&o->ops, "keys", c, arg))
        return;
    if (c == OPT_ALL)
        o->ops.all = true;
    else if (c == OPT_ORACLE)
        o->oracle = arg;
    else if (c == OPT_LOOKUP_JSONL)
        o->lookups = arg;
    else if (c == OPT_TOP) {
        long long n = tool_parse_count("keys", "--top", arg);
        if (n < 1)
            tool_usage_error("keys", "--top is 1 or more, not '%s'", arg);
        o->top = (size_t)n;
    } else if (c == OPT_REUSE_HISTOGRAM) {
        o->histogram = true;
    } else if (c == OPT_CHUNK_SIZE) {
        long long n = tool_parse_count("keys", "--chunk-size", arg);
        if (n < 1)
            tool_usage_error("keys", "--chunk-size is 1 or more, not '%s'",
                             arg);
        o->chunk_size = (uint64_t)n;
    }
}

static void put_hex(const unsigned char *p, size_t n)
{
    static const char digits[] = "0123456789abcdef";
    for (size_t i = 0; i < n; i++) {
        putchar(digits[p[i] >> 4]);
        putchar(digits[p[i] & 15]);
    }
}

static void put_csv_row(const lct_record *rec, uint64_t idx, lct_str op,
                        const lct_object_key *k, uint64_t bytes)
{
    printf("%" PRIu64 ",", idx);
    tool_put_json_double(rec->t_mono);
    putchar(',');
    tool_put_csv(stdout, op.ptr, op.len);
    putchar(',');
    put_hex(k->chunk_hash.ptr, k->chunk_hash.len);
    putchar(',');
    tool_put_csv(stdout, k->model_name.ptr, k->model_name.len);
    printf(",%" PRId64 ",%" PRId64 ",", k->kv_rank, k->object_group_id);
    tool_put_csv(stdout, k->cache_salt.ptr, k->cache_salt.len);
    printf(",%016" PRIx64 ",%" PRIu64 "\r\n", lct_object_key_hash(k), bytes);
}

static void put_json_row(const lct_record *rec, uint64_t idx, lct_str op,
                         const lct_object_key *k, uint64_t bytes)
{
    printf("{\"idx\":%" PRIu64 ",\"t_mono\":", idx);
    tool_put_json_double(rec->t_mono);
    fputs(",\"op\":", stdout);
    tool_put_json_str(op.ptr, op.len);
    fputs(",\"chunk_hash\":\"", stdout);
    put_hex(k->chunk_hash.ptr, k->chunk_hash.len);
    fputs("\",\"model_name\":", stdout);
    tool_put_json_str(k->model_name.ptr, k->model_name.len);
    printf(",\"kv_rank\":%" PRId64 ",\"object_group_id\":%" PRId64
           ",\"cache_salt\":",
           k->kv_rank, k->object_group_id);
    tool_put_json_str(k->cache_salt.ptr, k->cache_salt.len);
    printf(",\"obj_id\":\"%016" PRIx64 "\",\"bytes\":%" PRIu64 "}\n",
           lct_object_key_hash(k), bytes);
}

static int on_key(void *ctx, const lct_record *rec, uint64_t idx,
                  tool_key_op op, const lct_object_key *key, uint64_t bytes)
{
    keys_opts *o = ctx;
    if (o->lookups) {
        if (op == TOOL_KEY_READ)
            tool_lookup_log_key(&o->log, rec, idx, key);
        return o->log.failed;
    }
    lct_str name;
    name.ptr = tool_key_op_name(op, rec->qualname, &name.len);
    if (o->csv)
        put_csv_row(rec, idx, name, key, bytes);
    else
        put_json_row(rec, idx, name, key, bytes);
    return 0;
}

/* Write the gathered stream to out; false after a message. */
static bool write_oracle(keys_opts *o, outfile *out)
{
    FILE *f = tool_output_stream("keys", out);
    if (!f) {
        outfile_abort(out);
        return false;
    }
    lct_error err;
    errno = 0;
    uint64_t unsized = 0;
    lct_status st = lct_refs_write_oracle_general(o->refs, tool_file_write,
                                                  f, &unsized, &err);
    if (st == LCT_OK && !o->quiet) {
        if (unsized)
            fprintf(stderr, "%s keys: %" PRIu64 " of %" PRIu64 " references "
                    "are of keys no call gave a size: written as 1 byte\n",
                    tool_name, unsized, lct_refs_count(o->refs));
    }
    if (st == LCT_OK)
        return tool_output_finish("keys", out, f);
    int e = errno;
    fclose(f);
    outfile_abort(out);
    if (st == LCT_ERR_SYS && e == EPIPE)
        return true; /* the reader went away (| head): not a failure */
    if (st == LCT_ERR_SYS)
        fprintf(stderr, "%s keys: writing the output failed: %s\n",
                tool_name, strerror(e ? e : EIO));
    else
        fprintf(stderr, "%s keys: %s\n", tool_name, err.message);
    return false;
}

/* --lookup-jsonl OUT: a line per read call, written whole or not at all. */
static int lookup_jsonl(keys_opts *o, const tool_args *a)
{
    outfile *out;
    tool_inputs in;
    if (!tool_keys_start("keys", "--lookup-jsonl", o->lookups, a, &o->ops,
                         &out, &in))
        return EXIT_REFUSED;
    o->log.f = tool_output_stream("keys", out);
    o->log.chunk_size = o->chunk_size ? o->chunk_size
                                      : tool_chunk_size(in.r);
    bool whole = true, ok = o->log.f != NULL;
    if (ok) {
        whole = tool_keys_walk(&in, &o->ops, "keys", on_key, o);
        tool_lookup_log_flush(&o->log);
        ok = !o->log.failed;
    }
    if (ok)
        ok = tool_output_finish("keys", out, o->log.f);
    else {
        if (o->log.f)
            fclose(o->log.f);
        outfile_abort(out);
        fprintf(stderr, "%s keys: out of memory writing the lookup log\n",
                tool_name);
    }
    if (ok && !a->quiet)
        fprintf(stderr, "%s keys: %" PRIu64 " lookups written\n", tool_name,
                o->log.lines);
    tool_lookup_log_free(&o->log);
    return tool_keys_finish(&in, &o->ops, "keys", a->quiet, ok, whole);
}

/* --top N, --reuse-histogram. */
static int reuse_summary(keys_opts *o, const tool_args *a)
{
    tool_inputs in;
    outfile *none;
    if (!tool_keys_start("keys", NULL, NULL, a, &o->ops, &none, &in))
        return EXIT_REFUSED;
    bool whole = true;
    bool ok = tool_keys_reuse(&in, &o->ops, a, o->top, o->histogram,
                              &whole);
    return tool_keys_finish(&in, &o->ops, "keys", a->quiet, ok, whole);
}

int cmd_keys(int argc, char **argv)
{
    static const struct option own[] = {
        TOOL_KEYS_OPTIONS,
        {"all", no_argument, NULL, OPT_ALL},
        {"oracle-general", required_argument, NULL, OPT_ORACLE},
        {"lookup-jsonl", required_argument, NULL, OPT_LOOKUP_JSONL},
        {"chunk-size", required_argument, NULL, OPT_CHUNK_SIZE},
        {"top", required_argument, NULL, OPT_TOP},
        {"reuse-histogram", no_argument, NULL, OPT_REUSE_HISTOGRAM},
        {NULL, 0, NULL, 0}};
    keys_opts o = {0};
    tool_args a;
    tool_keys_parse("keys", own, on_option, &o, help, &o.ops, argc, argv,
                    &a);
    if (o.oracle && o.lookups)
        tool_usage_error("keys", "--oracle-general and --lookup-jsonl: one "
                         "output at a time");
    if (o.chunk_size && !o.lookups)
        tool_usage_error("keys", "--chunk-size goes with --lookup-jsonl");
    if ((o.top || o.histogram) + !!o.oracle + !!o.lookups > 1 ||
        (o.top && o.histogram))
        tool_usage_error("keys", "--top, --reuse-histogram, --oracle-general "
                         "and --lookup-jsonl: one output at a time");
    if (o.lookups)
        return lookup_jsonl(&o, &a);
    if (o.top || o.histogram)
        return reuse_summary(&o, &a);
    outfile *out;
    tool_inputs in;
    if (!tool_keys_start("keys", "--oracle-general", o.oracle, &a, &o.ops,
                         &out, &in))
        return EXIT_REFUSED;
    o.csv = a.csv;
    o.quiet = a.quiet;
    if (o.oracle && lct_refs_new(&o.refs) != LCT_OK)
        tool_usage_error("keys", "out of memory");
    if (o.csv && !o.oracle)
        fputs("idx,t_mono,op,chunk_hash,model_name,kv_rank,object_group_id,"
              "cache_salt,obj_id,bytes\r\n", stdout);
    bool whole;
    if (o.oracle) /* no rows to print in order: on several threads */
        o.failed = !tool_keys_collect(&in, &o.ops, "keys", &a, o.refs, &whole);
    else
        whole = tool_keys_walk(&in, &o.ops, "keys", on_key, &o);
    bool ok = !o.failed && (!out || write_oracle(&o, out));
    if (out && o.failed)
        outfile_abort(out);
    lct_refs_free(o.refs);
    return tool_keys_finish(&in, &o.ops, "keys", a.quiet, ok, whole);
}
