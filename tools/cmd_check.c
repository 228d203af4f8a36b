/*
 * cmd_check.c - `lct check`: read the whole file with full validation and
 * report every problem with its offset, then one summary line.
 * Exit 0 clean, 1 refused, 3 damaged (frames skipped or tail cut).
 */
#include "tool.h"

#include <getopt.h>
#include <inttypes.h>
#include <string.h>

typedef struct report {
    bool json;
    const char *path;
    uint64_t problems;
} report;

/* Each warning is a problem to report, on stdout (it is the data here). */
static void on_problem(void *ctx, const lct_reader *r, lct_warning_kind kind,
                       uint64_t offset, const char *message)
{
    (void)r;
    report *rep = ctx;
    const char *what = kind == LCT_WARN_MALFORMED ? "malformed" : "truncated";
    if (rep->json) {
        printf("%s{\"offset\":%" PRIu64 ",\"kind\":\"%s\",\"message\":",
               rep->problems ? "," : "", offset, what);
        tool_put_json_str(message, strlen(message));
        fputc('}', stdout);
    } else {
        /* The message names the offset already. */
        tool_put_vis(stdout, rep->path, strlen(rep->path));
        fputs(": ", stdout);
        tool_put_vis(stdout, message, strlen(message));
        fputc('\n', stdout);
    }
    rep->problems++;
}

static int no_op(void *state, const lct_record *rec)
{
    (void)state;
    (void)rec;
    return 0;
}

static void help(void)
{
    printf("usage: lct check [--json] [-q] [-j N] FILE\n"
           "\n"
           "Validate the whole trace as the reference reader would read it:\n"
           "every skipped frame (with its offset and reason) and a cut tail\n"
           "are reported, then one summary line.  FILE may be -.\n"
           "\n"
           "exit status: 0 clean, 1 cannot open or header refused,\n"
           "3 frames skipped or tail truncated.\n"
           "\n"
           "  --json     a machine-readable report\n"
           "  -q         nothing on stderr (the report is on stdout)\n"
           "  -j N       threads (default: all CPUs for files over 64 MiB)\n"
           "  -h, --help this text\n");
}

int cmd_check(int argc, char **argv)
{
    static const struct option opts[] = {{"json", no_argument, NULL, 'J'},
                                         {"jobs", required_argument, NULL, 'j'},
                                         {"quiet", no_argument, NULL, 'q'},
                                         {"help", no_argument, NULL, 'h'},
                                         {NULL, 0, NULL, 0}};
    bool json = false, quiet = false;
    unsigned jobs = 0;
    int c;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":qhj:", opts, NULL)) != -1) {
        switch (c) {
        case 'J': json = true; break;
        case 'j': jobs = tool_parse_jobs("check", optarg); break;
        case 'q': quiet = true; break;
        case 'h': help(); return EXIT_OK;
        default:
            tool_bad_option("check", c, argv);
        }
    }
    if (optind != argc - 1)
        tool_usage_error("check", argc - optind < 1 ? "missing FILE"
                                                    : "too many arguments");
    const char *path = argv[optind];

    lct_reader *r = NULL;
    lct_error err;
    int orc = strcmp(path, "-") == 0
                  ? lct_open_fd(0, "<stdin>", LCT_QUIET, &r, &err)
                  : lct_open(path, LCT_QUIET, &r, &err);
    if (orc != LCT_OK) {
        if (json) {
            fputs("{\"path\":", stdout);
            tool_put_json_str(path, strlen(path));
            fputs(",\"ok\":false,\"refused\":true,\"error\":", stdout);
            tool_put_json_str(err.message, strlen(err.message));
            printf(",\"offset\":%" PRIu64 "}\n", err.offset);
        } else {
            tool_put_vis(stdout, path, strlen(path));
            fputs(": refused: ", stdout);
            tool_put_vis(stdout, err.message, strlen(err.message));
            fputc('\n', stdout);
        }
        if (!quiet)
            fprintf(stderr, "%s: %s\n", tool_name, err.message);
        return EXIT_REFUSED;
    }

    report rep = {json, path, 0};
    if (json) {
        fputs("{\"path\":", stdout);
        tool_put_json_str(path, strlen(path));
        fputs(",\"problems\":[", stdout);
    }
    tool_run run;
    bool ran = tool_records(r, jobs, quiet, 1, no_op, on_problem, &rep, &run);
    lct_stats st = run.stats;
    tool_run_free(&run);
    if (!ran) {
        lct_close(r);
        return EXIT_REFUSED;
    }
    bool clean = st.skipped == 0 && !st.truncated;
    if (json) {
        printf("],\"ok\":%s,\"records\":%" PRIu64 ",\"skipped\":%" PRIu64
               ",\"truncated\":%s,\"truncated_offset\":",
               clean ? "true" : "false", st.records, st.skipped,
               st.truncated ? "true" : "false");
        if (st.truncated)
            printf("%" PRIu64, st.truncated_offset);
        else
            fputs("null", stdout);
        printf(",\"bytes\":%" PRIu64 "}\n", st.file_size);
    } else {
        tool_put_vis(stdout, path, strlen(path));
        printf(": %s: %" PRIu64 " records, %" PRIu64 " skipped, ",
               clean ? "ok" : "DAMAGED", st.records, st.skipped);
        if (st.truncated)
            printf("truncated at offset %" PRIu64 "\n", st.truncated_offset);
        else
            fputs("not truncated\n", stdout);
    }
    lct_close(r);
    return clean ? EXIT_OK : EXIT_DAMAGED;
}
