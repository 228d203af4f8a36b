/*
 * lct.c - the lct command: dispatch to a subcommand, global --help and
 * --version.  Each subcommand lives in its own cmd_*.c.
 */
#include "tool.h"

#include <locale.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

static void usage(FILE *f)
{
    fprintf(f,
            "usage: lct COMMAND [OPTIONS] FILE\n"
            "       lct sql [OPTIONS] QUERY FILE...\n"
            "\n"
            "Read LMCache trace files (.lct). FILE may be - for standard input.\n"
            "\n"
            "commands:\n"
            "  info   summary, as 'lmcache trace info' prints it (--json, --csv)\n"
            "  dump   one JSON object per record (JSONL, --csv)\n"
            "  check  validate whole files; exit 3 if damaged (--json, --csv)\n"
            "  stat   per-qualname counts, timing and sizes (--csv, --json)\n"
            "  sql    SQL (SQLite) over one or more traces (--csv, --json)\n"
            "  keys   the key reference stream (JSONL, --csv, --oracle-general)\n"
            "  mrc    LRU miss-ratio curves from the keys (--csv, --json, --svg)\n"
            "  sim    LMCache's cache simulator at one capacity (--json, --svg)\n"
            "  replay drive a storage backend with the trace's calls (--json, --csv)\n"
            "  index  write a trace's sidecar index, for record N at once\n"
            "  gen    write a realistic synthetic storage-level trace\n"
            "  import LMCache's lookup-hash logs and published traces as a\n"
            "         trace (lookup-logs, mooncake, bailian)\n"
            "  export a timeline for Perfetto (--perfetto)\n"
            "  diff   where two runs differ (--json; exit 1 when they do)\n"
            "\n"
            "Every command that reads a trace takes -q and -j N (index, export\n"
            "and diff no -j), and all but sql --mmap or --stream; dump, stat,\n"
            "keys and mrc select records with --qualname, --since, --until and\n"
            "--range; dump, stat, keys, mrc and replay merge several FILEs by\n"
            "t_wall.\n"
            "Run 'lct COMMAND --help' for a command's options; see lct(1).\n"
            "exit status, for every command that reads a trace: the answer is\n"
            "printed, and the status says whether the file was whole: 0 ok,\n"
            "3 frames skipped or the tail cut (the rest was read), 1 unreadable,\n"
            "refused, or shrank while read; 2 usage error.  diff is diff(1)'s:\n"
            "0 the same, 1 different, 2 trouble, 3 a trace damaged (compared as\n"
            "far as it could be read).\n");
}

int main(int argc, char **argv)
{
    /* A closed pipe shows up as EPIPE on write, which ends us quietly. */
    signal(SIGPIPE, SIG_IGN);
    /* strvis then escapes control bytes but keeps UTF-8 text readable;
     * only character classes change, never number formatting. */
    if (!setlocale(LC_CTYPE, "C.UTF-8"))
        setlocale(LC_CTYPE, "C.utf8");
    /* A trace truncated while we read it must end in an error message,
     * not a SIGBUS death. */
    lct_guard_install(NULL);

    if (argc < 2)
        tool_usage_error(NULL, "missing command");
    const char *cmd = argv[1];
    if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0 ||
        strcmp(cmd, "help") == 0) {
        usage(stdout);
        return EXIT_OK;
    }
    if (strcmp(cmd, "--version") == 0 || strcmp(cmd, "-V") == 0) {
        printf("lct %s (liblct)\n", PACKAGE_VERSION);
        return EXIT_OK;
    }
    /* A command whose library configure did not find is named, with what
     * it needs (run NULL), rather than unknown. */
    static const struct {
        const char *name;
        int (*run)(int, char **);
        const char *needs;
    } commands[] = {{"info", cmd_info, NULL},
                    {"dump", cmd_dump, NULL},
                    {"check", cmd_check, NULL},
                    {"stat", cmd_stat, NULL},
                    {"gen", cmd_gen, NULL},
#ifdef LCT_HAVE_SQLITE
                    {"sql", cmd_sql, NULL},
#else
                    {"sql", NULL, "SQLite (libsqlite3-dev)"},
#endif
                    {"keys", cmd_keys, NULL},
                    {"mrc", cmd_mrc, NULL},
                    {"sim", cmd_sim, NULL},
#ifdef LCT_HAVE_JANSSON
                    {"import", cmd_import, NULL},
#else
                    {"import", NULL, "jansson (libjansson-dev)"},
#endif
                    {"replay", cmd_replay, NULL},
                    {"index", cmd_index, NULL},
                    {"export", cmd_export, NULL},
                    {"diff", cmd_diff, NULL}};
    for (size_t i = 0; i < sizeof commands / sizeof *commands; i++)
        if (strcmp(cmd, commands[i].name) == 0) {
            if (!commands[i].run) {
                fprintf(stderr, "%s %s: not built: configure did not find "
                        "%s; install it and configure again\n", tool_name,
                        cmd, commands[i].needs);
                return EXIT_REFUSED;
            }
            int rc = commands[i].run(argc - 1, argv + 1);
            tool_finish_stdout();
            return rc;
        }
    tool_usage_error(NULL, "unknown command '%s'", cmd);
}
