/*
 * cmd_check.c - `lct check`: read the whole file with full validation and
 * report every problem with its offset, then one summary line.
 * Exit 0 clean, 1 refused, 3 damaged (frames skipped or tail cut).
 */
#include "l2_level.h"
#include "tool.h"

#include <inttypes.h>
#include <string.h>

typedef struct report {
    bool json, csv;
    bool quiet;
    const char *path;
    uint64_t problems;
    bool footer; /* the problem reported is an L2 trace's footer */
} report;

/* Each warning is a problem to report, on stdout (it is the data here). */
static void on_problem(void *ctx, const lct_reader *r, lct_warning_kind kind,
                       uint64_t offset, const char *message)
{
    report *rep = ctx;
    if (kind == LCT_WARN_SHRANK) /* an error too: exit 1 */
        tool_report_shrink(r, message);
    const char *what = rep->footer                ? "footer"
                       : kind == LCT_WARN_MALFORMED ? "malformed"
                       : kind == LCT_WARN_SHRANK  ? "shrank"
                                                  : "truncated";
    if (rep->csv) { /* the rows are files: problems are warnings */
        if (!rep->quiet)
            tool_log(NULL, r, kind, offset, message);
    } else if (rep->json) {
        printf("%s{\"offset\":%" PRIu64 ",\"kind\":\"%s\",\"message\":",
               rep->problems ? "," : "", offset, what);
        tool_put_json_str(message, strlen(message));
        fputc('}', stdout);
    } else {
        /* The message names the offset already. */
        tool_put_vis(stdout, rep->path, strlen(rep->path));
        fputs(": ", stdout);
        tool_put_message(stdout, message);
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

static void nothing_to_reset(void *state)
{
    (void)state;
}

/* An L2-level trace's footers, counted by each thread (order does not
 * matter: the verdict is on their number and their drops). */
typedef struct footers {
    uint64_t n, recorder, bus, unreadable, last_offset;
} footers;

static int count_footer(void *state, const lct_record *rec)
{
    footers *f = state;
    if (!lct_str_eq(rec->qualname, TOOL_L2_FOOTER))
        return 0;
    f->n++;
    f->unreadable += !tool_l2_footer_counts(rec, &f->recorder, &f->bus);
    f->last_offset = rec->offset > f->last_offset ? rec->offset
                                                  : f->last_offset;
    return 0;
}

static void reset_footers(void *state)
{
    memset(state, 0, sizeof(footers));
}

static footers sum_footers(const tool_run *run)
{
    footers all = {0};
    for (unsigned i = 0; i < run->nstates; i++) {
        const footers *f = (const footers *)(const void *)(run->states +
                                                           i * run->state_size);
        all.n += f->n, all.recorder += f->recorder, all.bus += f->bus;
        all.unreadable += f->unreadable;
        all.last_offset = f->last_offset > all.last_offset ? f->last_offset
                                                           : all.last_offset;
    }
    return all;
}

/* The footer's verdict as a problem (the offset: the last footer's, or
 * the file's end when there is none); false when there is none. */
static bool footer_problem(report *rep, lct_reader *r, const footers *f,
                           uint64_t file_size)
{
    char msg[200];
    if (f->unreadable)
        snprintf(msg, sizeof msg, "the L2 trace's footer (" TOOL_L2_FOOTER
                                  ") has drop counts that are not counts");
    else if (!tool_l2_footer_problem(f->n, f->recorder, f->bus, msg,
                                     sizeof msg))
        return false;
    uint64_t at = f->n ? f->last_offset : file_size;
    char full[260];
    snprintf(full, sizeof full, "%s (at offset %" PRIu64 ")", msg, at);
    rep->footer = true;
    on_problem(rep, r, LCT_WARN_MALFORMED, at, full);
    return true;
}

static void help(void)
{
    printf("usage: lct check [--json | --csv] [-q] [-j N] FILE...\n"
           "\n"
           "Validate the whole trace as the reference reader would read it:\n"
           "every skipped frame (with its offset and reason) and a cut tail\n"
           "are reported, then one summary line, for each FILE in turn (--json:\n"
           "one object per file, one per line).  FILE may be -.  The status\n"
           "is the worst of the files'.\n"
           "\n"
           "exit status: 0 clean, 1 cannot open or header refused,\n"
           "3 frames skipped or tail truncated.\n"
           "\n"
           "  --json     a machine-readable report\n"
           "  --csv      one row per file: file, ok, records, skipped,\n"
           "             truncated, truncated_offset, bytes, problems,\n"
           "             error (problems are then warnings on stderr)\n"
           "  -q         nothing on stderr (the report is on stdout)\n"
           "  --mmap, --stream how to read a file (default: the faster here)\n"
           "  --max-frame SIZE the longest frame a pipe may hold (256M)\n"
           "  -j N       threads (default: one per usable CPU for files over 64 MiB)\n"
           "  -h, --help this text\n");
}

/* The open was refused: say so in the report's form. */
static int refused(const char *path, const lct_error *err, bool json,
                   bool csv, bool quiet)
{
    if (csv) {
        tool_put_csv(stdout, path, strlen(path));
        fputs(",false,,,,,,,", stdout);
        tool_put_csv(stdout, err->message, strlen(err->message));
        fputs("\r\n", stdout);
    } else if (json) {
        fputs("{\"file\":", stdout);
        tool_put_json_str(path, strlen(path));
        fputs(",\"ok\":false,\"refused\":true,\"error\":", stdout);
        tool_put_json_str(err->message, strlen(err->message));
        printf(",\"offset\":%" PRIu64 "}\n", err->offset);
    } else {
        tool_put_vis(stdout, path, strlen(path));
        fputs(": refused: ", stdout);
        tool_put_message(stdout, err->message);
        fputc('\n', stdout);
    }
    if (!quiet)
        fprintf(stderr, "%s: %s\n", tool_name, err->message);
    return EXIT_REFUSED;
}

static void summary(const char *path, const lct_stats *st, bool clean,
                    const report *rep)
{
    if (rep->csv) {
        tool_put_csv(stdout, path, strlen(path));
        printf(",%s,%" PRIu64 ",%" PRIu64 ",%s,", clean ? "true" : "false",
               st->records, st->skipped, st->truncated ? "true" : "false");
        if (st->truncated)
            printf("%" PRIu64, st->truncated_offset);
        printf(",%" PRIu64 ",%" PRIu64 ",\r\n", st->file_size, rep->problems);
        return;
    }
    if (rep->json) {
        printf("],\"ok\":%s,\"records\":%" PRIu64 ",\"skipped\":%" PRIu64
               ",\"truncated\":%s,\"truncated_offset\":",
               clean ? "true" : "false", st->records, st->skipped,
               st->truncated ? "true" : "false");
        if (st->truncated)
            printf("%" PRIu64, st->truncated_offset);
        else
            fputs("null", stdout);
        printf(",\"bytes\":%" PRIu64 "}\n", st->file_size);
        return;
    }
    tool_put_vis(stdout, path, strlen(path));
    printf(": %s: %" PRIu64 " records, %" PRIu64 " skipped, ",
           clean ? "ok" : "DAMAGED", st->records, st->skipped);
    if (st->truncated)
        printf("truncated at offset %" PRIu64 "\n", st->truncated_offset);
    else
        fputs("not truncated\n", stdout);
}

/* Check one file: its report, and its exit status. */
static int check_one(const char *file, const tool_args *a)
{
    const char *path = tool_input_name(file);
    lct_reader *r = NULL;
    lct_error err;
    unsigned flags = LCT_QUIET | tool_source_flags(a);
    if (tool_open_raw(file, flags, &r, &err) != LCT_OK)
        return refused(path, &err, a->json, a->csv, a->quiet);

    report rep = {a->json, a->csv, a->quiet, path, 0, false};
    if (a->json) {
        fputs("{\"file\":", stdout);
        tool_put_json_str(path, strlen(path));
        fputs(",\"problems\":[", stdout);
    }
    /* --csv -q only counts the problems: each skipped frame is one, so
     * they need not be formatted, and a run of empty frames is stepped
     * over in bulk. */
    bool count_skips = a->csv && a->quiet;
    if (count_skips)
        lct_reader_set_log_kinds(r, ~LCT_WARN_MASK(LCT_WARN_MALFORMED));
    /* an L2-level trace is whole only with its footer */
    bool l2 = lct_str_eq(lct_reader_header(r)->level, "l2");
    tool_run run;
    bool ran = tool_records(r, a->jobs, a->quiet, l2 ? sizeof(footers) : 1,
                            l2 ? count_footer : no_op,
                            l2 ? reset_footers : nothing_to_reset, on_problem,
                            &rep, &run);
    lct_stats st = run.stats;
    footers f = l2 && ran ? sum_footers(&run) : (footers){0};
    tool_run_free(&run);
    if (count_skips)
        rep.problems += st.skipped;
    bool footer_bad = l2 && ran && footer_problem(&rep, r, &f, st.file_size);
    bool clean = st.skipped == 0 && !st.truncated && !footer_bad;
    if (ran)
        summary(path, &st, clean, &rep);
    lct_close(r);
    if (!ran)
        return EXIT_REFUSED;
    return clean ? EXIT_OK : EXIT_DAMAGED;
}

int cmd_check(int argc, char **argv)
{
    static const tool_cmd cmd = {.name = "check",
                                 .shared = TOOL_Q | TOOL_J | TOOL_JSON |
                                           TOOL_CSV | TOOL_SRC,
                                 .help = help, .min_operands = 1};
    tool_args a;
    tool_parse_args(&cmd, argc, argv, &a);
    if (a.csv)
        fputs("file,ok,records,skipped,truncated,truncated_offset,bytes,"
              "problems,error\r\n", stdout);
    /* Every file, each reported whole; the status is the worst: a file
     * refused (1) over a damaged one (3) over clean ones (0). */
    int worst = EXIT_OK;
    for (int i = 0; i < a.noperands; i++) {
        int rc = check_one(a.operands[i], &a);
        if (rc == EXIT_REFUSED || (rc == EXIT_DAMAGED && worst == EXIT_OK))
            worst = rc;
    }
    return worst;
}
