/*
 * cmd_gen.c - `lct gen`: synthesise a realistic storage-level trace with
 * the library's writer (the generator the sample and the benchmark use).
 */
#include "gen.h"
#include "tool.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <string.h>
#include <unistd.h>

static void help(void)
{
    printf("usage: lct gen -n N [--seed S] [--max-keys K] OUT\n"
           "\n"
           "Write a realistic storage-level trace of N records to OUT (or -\n"
           "for standard output): prefetches and writes of 1 to K (default\n"
           "32) codec-wrapped ObjectKeys with 32-byte chunk hashes, up to\n"
           "2 ms apart.  The same seed gives the same bytes.\n"
           "\n"
           "  -n, --records N  records to write\n"
           "  --seed S         generator seed (default 1)\n"
           "  --max-keys K     keys per call, at most (1 to 1024)\n"
           "  -h, --help       this text\n");
}

int cmd_gen(int argc, char **argv)
{
    enum { OPT_SEED = 256, OPT_MAX_KEYS };
    static const struct option opts[] = {
        {"records", required_argument, NULL, 'n'},
        {"seed", required_argument, NULL, OPT_SEED},
        {"max-keys", required_argument, NULL, OPT_MAX_KEYS},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0}};
    long long records = -1, seed = 1, max_keys = 32;
    int c;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":n:h", opts, NULL)) != -1) {
        switch (c) {
        case 'n': records = tool_parse_count("gen", "-n", optarg); break;
        case OPT_SEED: seed = tool_parse_count("gen", "--seed", optarg); break;
        case OPT_MAX_KEYS:
            max_keys = tool_parse_count("gen", "--max-keys", optarg);
            if (max_keys < 1 || max_keys > 1024)
                tool_usage_error("gen", "--max-keys is 1 to 1024");
            break;
        case 'h': help(); return EXIT_OK;
        default:
            tool_bad_option("gen", c, argv);
        }
    }
    if (records < 0)
        tool_usage_error("gen", "-n N is required");
    if (optind != argc - 1)
        tool_usage_error("gen", argc - optind < 1 ? "missing OUT"
                                                  : "too many arguments");
    const char *out = argv[optind];
    int fd = strcmp(out, "-") == 0
                 ? STDOUT_FILENO
                 : open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
        fprintf(stderr, "%s: cannot write ", tool_name);
        tool_put_vis(stderr, out, strlen(out));
        fprintf(stderr, ": %s\n", strerror(errno));
        return EXIT_REFUSED;
    }
    int rc = gen_trace(fd, (uint64_t)records, (unsigned)max_keys,
                       (uint64_t)seed);
    if (fd != STDOUT_FILENO && close(fd) != 0)
        rc = -1;
    if (rc != 0) {
        if (errno == EPIPE)
            return EXIT_OK;
        fprintf(stderr, "%s: gen: write failed: %s\n", tool_name,
                strerror(errno));
        return EXIT_REFUSED;
    }
    return EXIT_OK;
}
