/*
 * cmd_import.c - `lct import lookup-logs PATH... OUT.lct`: LMCache's
 * lookup-hash logs made a trace (lookup_log.c reads them), so every lct
 * command serves people who have only those logs.  OUT is written under
 * a temporary name and renamed; it is never one of the logs.
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
           "  -q           no warnings on stderr\n"
           "  -h, --help   this text\n");
}

int cmd_import(int argc, char **argv)
{
    static const struct option own[] = {{NULL, 0, NULL, 0}};
    tool_cmd cmd = {.name = "import", .shared = TOOL_Q, .own = own,
                    .help = help, .min_operands = 3};
    tool_args a;
    tool_parse_args(&cmd, argc, argv, &a);
    if (strcmp(a.operands[0], "lookup-logs") != 0)
        tool_usage_error("import", "what to import: lookup-logs, not '%s'",
                         a.operands[0]);
    char **paths = a.operands + 1;
    int npaths = a.noperands - 2;
    const char *target = a.operands[a.noperands - 1];
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
    bool ok = tool_lookup_logs_import(&files, outfile_fd(out), a.quiet,
                                      &events, &bad);
    globfree(&files);
    if (!ok) {
        outfile_abort(out);
        return EXIT_REFUSED;
    }
    if (!tool_output_finish("import", out, NULL))
        return EXIT_REFUSED;
    if (!a.quiet) {
        fprintf(stderr, "%s import: %" PRIu64 " lookups written to ",
                tool_name, events);
        tool_put_vis(stderr, target, strlen(target));
        fprintf(stderr, "; %" PRIu64 " malformed lines skipped\n", bad);
    }
    return bad ? EXIT_DAMAGED : EXIT_OK;
}
