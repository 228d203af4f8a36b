/*
 * cmd_index.c - `lct index`: write each trace's sidecar index (the
 * library's lct_sidecar), or bring it up to date: extended when the trace
 * only grew, built again when it is stale, damaged or for another file.
 */
#include "tool.h"

#include <limits.h>
#include <string.h>

static void help(void)
{
    printf("usage: lct index [-q] [--mmap | --stream] [--max-frame SIZE]\n"
           "                 FILE...\n"
           "\n"
           "Write each FILE's sidecar index, FILE.lcti (or, when FILE's\n"
           "directory cannot be written, one in $XDG_CACHE_HOME/lct, else\n"
           "~/.cache/lct): the offset, t_mono, t_wall and qualname of every\n"
           "record, the frames skipped, where reading ended.  dump, given\n"
           "a range of records or an offset, and sql then reach record N\n"
           "at once, and print what they print without it.  A sidecar for\n"
           "a trace that only grew is extended; a stale, damaged or\n"
           "another file's one is replaced.  Prints where each went.\n"
           "\n"
           "  -q                no warnings on stderr\n"
           "  --mmap, --stream  how to read a file (default: the faster here)\n"
           "  --max-frame SIZE  the longest frame a pipe may hold (256M)\n"
           "  -h, --help        this text\n");
}

static int index_one(const char *path, const tool_args *a)
{
    lct_reader *r = tool_open(path, tool_source_flags(a), a->quiet);
    if (!r)
        return EXIT_REFUSED;
    lct_sidecar *old = NULL, *s = NULL;
    lct_error err;
    lct_status st = lct_sidecar_load(r, &old, &err);
    const char *name = tool_input_name(path);
    if (st == LCT_OK && lct_sidecar_whole(old)) {
        tool_put_vis(stdout, name, strlen(name));
        printf(": %llu records, sidecar up to date\n",
               (unsigned long long)lct_sidecar_count(old));
        lct_sidecar_free(old);
        lct_close(r);
        return EXIT_OK;
    }
    if (st != LCT_OK && st != LCT_ERR_NOT_FOUND && st != LCT_ERR_INVALID &&
        !a->quiet) {
        fprintf(stderr, "%s: ", tool_name);
        tool_put_message(stderr, err.message);
        fputs("; writing a new one\n", stderr);
    }
    uint64_t had = old ? lct_sidecar_count(old) : 0;
    char where[PATH_MAX];
    st = lct_sidecar_build(r, old, &s, &err);
    if (st == LCT_OK)
        st = lct_sidecar_save(s, r, where, sizeof where, &err);
    int rc = EXIT_REFUSED;
    if (st == LCT_OK) {
        tool_put_vis(stdout, name, strlen(name));
        printf(": %llu records", (unsigned long long)lct_sidecar_count(s));
        if (old)
            printf(" (%llu new)", (unsigned long long)(lct_sidecar_count(s) -
                                                       had));
        fputs(", sidecar ", stdout);
        tool_put_vis(stdout, where, strlen(where));
        fputc('\n', stdout);
        lct_stats stats;
        lct_reader_stats(r, &stats);
        rc = tool_exit_for(&stats);
    } else {
        fprintf(stderr, "%s: ", tool_name);
        tool_put_message(stderr, err.message);
        fputc('\n', stderr);
    }
    lct_sidecar_free(old);
    lct_sidecar_free(s);
    lct_close(r);
    return rc;
}

int cmd_index(int argc, char **argv)
{
    static const tool_cmd cmd = {.name = "index",
                                 .shared = TOOL_Q | TOOL_SRC,
                                 .help = help, .min_operands = 1};
    tool_args a;
    tool_parse_args(&cmd, argc, argv, &a);
    int worst = EXIT_OK;
    for (int i = 0; i < a.noperands; i++) {
        int rc = index_one(a.operands[i], &a);
        if (rc == EXIT_REFUSED || (rc == EXIT_DAMAGED && worst == EXIT_OK))
            worst = rc;
    }
    tool_finish_stdout();
    return worst;
}
