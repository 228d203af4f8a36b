/*
 * opts.c - the command line: the option parser the commands share (-q,
 * -j N, --json, --csv, -h), what a bad option is told, and parsing
 * numbers.
 */
#include "tool.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

void tool_bad_option(const char *cmd, int c, char **argv)
{
    /* Inside a cluster (-qj) getopt has not moved optind yet, so only a
     * long option can be named by its word; a short one by optopt. */
    const char *word = argv[optind - 1];
    bool is_long = strncmp(word, "--", 2) == 0 && (c == ':' || !optopt);
    char shown[3] = {'-', (char)optopt, '\0'};
    if (c == ':')
        tool_usage_error(cmd, "option '%s' needs a value",
                         is_long ? word : shown);
    if (is_long)
        tool_usage_error(cmd, "unknown option '%s'", word);
    tool_usage_error(cmd,
                     "unknown option '%s' (to name a FILE that starts "
                     "with '-', write ./ before it)",
                     shown);
}

long long tool_parse_count(const char *cmd, const char *opt, const char *arg)
{
    const char *errstr;
    long long n = strtonum(arg, 0, LLONG_MAX, &errstr);
    if (errstr)
        tool_usage_error(cmd, "%s '%s' is %s", opt, arg, errstr);
    return n;
}

double tool_parse_seconds(const char *cmd, const char *opt, const char *arg)
{
    char *end;
    errno = 0;
    double d = strtod(arg, &end);
    /* "inf" and "1e999" alike are refused; an underflow is just small. */
    if (end == arg || *end != '\0' || !isfinite(d))
        tool_usage_error(cmd, "%s '%s' is not a finite number of seconds",
                         opt, arg);
    return d;
}

double tool_parse_fraction(const char *cmd, const char *opt,
                           const char *arg)
{
    char *end;
    double d = strtod(arg, &end);
    if (end == arg || *end != '\0' || !(d > 0 && d <= 1))
        tool_usage_error(cmd, "%s '%s' is not a fraction in (0, 1]", opt,
                         arg);
    return d;
}

uint64_t tool_parse_size(const char *cmd, const char *opt, const char *arg)
{
    char *end;
    errno = 0;
    unsigned long long n = strtoull(arg, &end, 10);
    unsigned shift = 0;
    if (end != arg && *end && !end[1])
        shift = *end == 'K' ? 10 : *end == 'M' ? 20 : *end == 'G' ? 30 : 99;
    if (end == arg || arg[0] == '-' || errno || shift == 99 ||
        (*end && !shift) || n == 0 || n > (UINT32_MAX >> shift))
        tool_usage_error(cmd, "%s '%s' is not a size below 4G "
                         "(bytes, or a number with K, M or G)", opt, arg);
    return (uint64_t)n << shift;
}

bool tool_parse_capacity(const char *cmd, const char *opt, const char *arg,
                         bool *in_bytes, uint64_t *value)
{
    char *end;
    errno = 0;
    double v = strtod(arg, &end);
    static const char units[] = "BKMGT";
    const char *u = *end ? strchr(units, *end) : NULL;
    bool keys = *end == '\0' || strcmp(end, "keys") == 0;
    bool bytes = u && (!end[1] || strcmp(end + 1, "iB") == 0 ||
                       (strcmp(end + 1, "B") == 0 && *end != 'B'));
    double scaled = bytes ? ldexp(v, 10 * (int)(u - units)) : v;
    if (end == arg || errno || !(v > 0) || !(keys || bytes) ||
        !(scaled < 1.8e19) || (keys && v != floor(v)) || scaled < 1)
        tool_usage_error(cmd, "%s '%s' is not a capacity: keys (1000, "
                         "1000keys) or bytes with B, K, M, G or T (64G, "
                         "1.5TiB)", opt, arg);
    *in_bytes = bytes;
    *value = (uint64_t)scaled;
    return true;
}

unsigned tool_parse_jobs(const char *cmd, const char *arg)
{
    const char *errstr;
    long long n = strtonum(arg, 1, 1024, &errstr);
    if (errstr)
        tool_usage_error(cmd, "-j '%s' is %s (1 to 1024)", arg, errstr);
    return (unsigned)n;
}


/* MARK: the shared option parser */

/* The long options a command takes: the shared ones it asked for, then
 * its own, then --help; `into` has room for all. */
static size_t long_options(const tool_cmd *cmd, struct option *into)
{
    static const struct option shared[] = {
        {"quiet", no_argument, NULL, 'q'},
        {"jobs", required_argument, NULL, 'j'},
        {"json", no_argument, NULL, TOOL_OPT_JSON_VAL},
        {"csv", no_argument, NULL, TOOL_OPT_CSV_VAL},
        {"mmap", no_argument, NULL, TOOL_OPT_MMAP_VAL},
        {"stream", no_argument, NULL, TOOL_OPT_STREAM_VAL},
        {"max-frame", required_argument, NULL, TOOL_OPT_MAX_FRAME_VAL}};
    static const unsigned bits[] = {TOOL_Q,   TOOL_J,   TOOL_JSON,
                                    TOOL_CSV, TOOL_SRC, TOOL_SRC, TOOL_SRC};
    size_t n = 0;
    for (size_t i = 0; i < sizeof bits / sizeof *bits; i++)
        if (cmd->shared & bits[i])
            into[n++] = shared[i];
    for (const struct option *o = cmd->own; o && o->name; o++)
        into[n++] = *o;
    into[n++] = (struct option){"help", no_argument, NULL, 'h'};
    into[n] = (struct option){NULL, 0, NULL, 0};
    return n;
}

static bool take_shared(const tool_cmd *cmd, int c, tool_args *out)
{
    if (c == 'q' && (cmd->shared & TOOL_Q))
        out->quiet = tool_quiet = true;
    else if (c == 'j' && (cmd->shared & TOOL_J))
        out->jobs = tool_parse_jobs(cmd->name, optarg);
    else if (c == TOOL_OPT_JSON_VAL)
        out->json = true;
    else if (c == TOOL_OPT_CSV_VAL)
        out->csv = true;
    else if (c == TOOL_OPT_MMAP_VAL || c == TOOL_OPT_STREAM_VAL) {
        tool_source want = c == TOOL_OPT_MMAP_VAL ? TOOL_SOURCE_MMAP
                                                  : TOOL_SOURCE_STREAM;
        if (out->source != TOOL_SOURCE_DEFAULT && out->source != want)
            tool_usage_error(cmd->name, "--mmap and --stream exclude each "
                             "other");
        out->source = want;
    }
    else if (c == TOOL_OPT_MAX_FRAME_VAL)
        tool_max_stream_frame = tool_parse_size(cmd->name, "--max-frame",
                                                optarg);
    else
        return false;
    return true;
}

void tool_parse_args(const tool_cmd *cmd, int argc, char **argv,
                     tool_args *out)
{
    memset(out, 0, sizeof *out);
    tool_cmd_name = cmd->name;
    size_t own = 0;
    for (const struct option *o = cmd->own; o && o->name; o++)
        own++;
    struct option *opts = reallocarray(NULL, own + 16, sizeof *opts);
    char shorts[64];
    if (!opts)
        tool_usage_error(cmd->name, "out of memory");
    long_options(cmd, opts);
    snprintf(shorts, sizeof shorts, ":h%s%s%s",
             cmd->shared & TOOL_Q ? "q" : "", cmd->shared & TOOL_J ? "j:" : "",
             cmd->own_short ? cmd->own_short : "");
    int c;
    opterr = 0;
    while ((c = getopt_long(argc, argv, shorts, opts, NULL)) != -1) {
        if (c == 'h') {
            cmd->help();
            tool_finish_stdout();
            exit(EXIT_OK);
        }
        if (take_shared(cmd, c, out))
            continue;
        if (c == '?' || c == ':' || !cmd->on_option)
            tool_bad_option(cmd->name, c, argv);
        cmd->on_option(cmd->ctx, c, optarg);
    }
    free(opts);
    if (out->csv && out->json)
        tool_usage_error(cmd->name, "--csv and --json exclude each other");
    const char *operand = cmd->operand ? cmd->operand : "FILE";
    int given = argc - optind;
    int least = cmd->min_operands ? cmd->min_operands : 1;
    if (given < least)
        tool_usage_error(cmd->name, "missing %s", operand);
    if (!cmd->min_operands && given > 1)
        tool_usage_error(cmd->name, "too many arguments");
    out->file = argv[optind];
    out->operands = argv + optind;
    out->noperands = given;
}
