/*
 * cmd_stat.c - `lct stat`: per qualname, count, share, first and last
 * t_mono, inter-arrival gap mean/p50/p99 and mean args size; overall
 * records, duration and rate.  Text table, --csv or --json.
 *
 * Percentiles are nearest-rank as `lmcache trace replay` computes them:
 * sorted samples, index ceil(p*n/100) - 1 in integer arithmetic.
 */
#include "tool.h"

#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Nearest rank; sorted must hold n > 0 samples. */
static double percentile(const double *sorted, size_t n, unsigned p)
{
    size_t rank = ((size_t)p * n + 99) / 100; /* ceil(p*n/100) */
    return sorted[rank > 0 ? rank - 1 : 0];
}

typedef struct row {
    double share, gap_mean, p50, p99, args_mean;
    bool have_gaps;
} row;

static row row_of(qentry *e, uint64_t total)
{
    row r = {0};
    r.share = total ? 100.0 * (double)e->count / (double)total : 0;
    r.args_mean = e->count ? (double)e->args_bytes / (double)e->count : 0;
    if (e->ngaps) {
        /* Sum after sorting: the same order however the gaps were
         * gathered (one thread or several), so the same mean to the bit. */
        qsort(e->gaps, e->ngaps, sizeof *e->gaps, cmp_double);
        double sum = 0;
        for (size_t i = 0; i < e->ngaps; i++)
            sum += e->gaps[i];
        r.gap_mean = sum / (double)e->ngaps;
        r.p50 = percentile(e->gaps, e->ngaps, 50);
        r.p99 = percentile(e->gaps, e->ngaps, 99);
        r.have_gaps = true;
    }
    return r;
}

typedef struct part {
    struct qtable ops;
    double duration;
    uint64_t total;
} part;

static int count_record(void *state, const lct_record *rec)
{
    part *p = state;
    if (!qtable_add(&p->ops, rec, true))
        return 1;
    if (rec->t_mono > p->duration || p->total == 0)
        p->duration = rec->t_mono;
    p->total++;
    return 0;
}

static void help(void)
{
    printf("usage: lct stat [--csv | --json] [-q] [-j N] FILE\n"
           "\n"
           "Per qualname: count, share of records, first and last t_mono,\n"
           "inter-arrival gap mean/p50/p99 (seconds, nearest-rank), mean args\n"
           "size in bytes; then overall records, duration (largest t_mono)\n"
           "and rate.  FILE may be -.\n"
           "\n"
           "  --csv      comma-separated values with a header row\n"
           "  --json     one JSON object\n"
           "  -q         no warnings on stderr\n"
           "  -j N       threads (default: all CPUs for files over 64 MiB)\n"
           "  -h, --help this text\n");
}

int cmd_stat(int argc, char **argv)
{
    enum { OPT_CSV = 256, OPT_JSON };
    static const struct option opts[] = {{"csv", no_argument, NULL, OPT_CSV},
                                         {"json", no_argument, NULL, OPT_JSON},
                                         {"quiet", no_argument, NULL, 'q'},
                                         {"jobs", required_argument, NULL, 'j'},
                                         {"help", no_argument, NULL, 'h'},
                                         {NULL, 0, NULL, 0}};
    bool csv = false, json = false, quiet = false;
    unsigned jobs = 0;
    int c;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":qhj:", opts, NULL)) != -1) {
        switch (c) {
        case 'j': jobs = tool_parse_jobs("stat", optarg); break;
        case OPT_CSV: csv = true; break;
        case OPT_JSON: json = true; break;
        case 'q': quiet = true; break;
        case 'h': help(); return EXIT_OK;
        default:
            tool_bad_option("stat", c, argv);
        }
    }
    if (csv && json)
        tool_usage_error("stat", "--csv and --json exclude each other");
    if (optind != argc - 1)
        tool_usage_error("stat", argc - optind < 1 ? "missing FILE"
                                                   : "too many arguments");
    lct_reader *r = tool_open(argv[optind], 0, quiet);
    if (!r)
        return EXIT_REFUSED;

    tool_run run;
    int rc = tool_records(r, jobs, quiet, sizeof(part), count_record,
                          quiet ? NULL : tool_log, NULL, &run)
                 ? EXIT_OK
                 : EXIT_REFUSED;
    /* Merge the parts in file order into the first. */
    part *all = tool_run_state(&run, 0);
    struct qtable ops = all->ops;
    double duration = all->duration;
    uint64_t total = all->total;
    for (unsigned t = 1; t < run.nstates; t++) {
        part *p = tool_run_state(&run, t);
        if (rc == EXIT_OK && !qtable_merge(&ops, &p->ops, true))
            rc = EXIT_REFUSED;
        qtable_free(&p->ops);
        if (p->total && (p->duration > duration || total == 0))
            duration = p->duration;
        total += p->total;
    }
    double rate = duration > 0 ? (double)total / duration : 0;

    qentry *e;
    if (rc != EXIT_OK) {
        /* nothing printed */
    } else if (csv) {
        fputs("qualname,count,share_pct,first_t_mono,last_t_mono,gap_mean,"
              "gap_p50,gap_p99,args_mean_bytes\n",
              stdout);
        RB_FOREACH(e, qtable, &ops) {
            row w = row_of(e, total);
            tool_put_csv(stdout, e->qualname.ptr, e->qualname.len);
            printf(",%" PRIu64 ",%.4f,%.9g,%.9g,", e->count, w.share, e->first,
                   e->last);
            if (w.have_gaps)
                printf("%.9g,%.9g,%.9g", w.gap_mean, w.p50, w.p99);
            else
                fputs(",,", stdout);
            printf(",%.1f\n", w.args_mean);
        }
    } else if (json) {
        printf("{\"records\":%" PRIu64 ",\"duration\":", total);
        tool_put_json_double(duration);
        fputs(",\"rate\":", stdout);
        tool_put_json_double(rate);
        fputs(",\"ops\":[", stdout);
        bool first = true;
        RB_FOREACH(e, qtable, &ops) {
            row w = row_of(e, total);
            fputs(first ? "{\"qualname\":" : ",{\"qualname\":", stdout);
            first = false;
            tool_put_json_str(e->qualname.ptr, e->qualname.len);
            printf(",\"count\":%" PRIu64 ",\"share\":", e->count);
            tool_put_json_double(w.share / 100.0);
            fputs(",\"first_t_mono\":", stdout);
            tool_put_json_double(e->first);
            fputs(",\"last_t_mono\":", stdout);
            tool_put_json_double(e->last);
            if (w.have_gaps) {
                fputs(",\"gap_mean\":", stdout);
                tool_put_json_double(w.gap_mean);
                fputs(",\"gap_p50\":", stdout);
                tool_put_json_double(w.p50);
                fputs(",\"gap_p99\":", stdout);
                tool_put_json_double(w.p99);
            } else {
                fputs(",\"gap_mean\":null,\"gap_p50\":null,\"gap_p99\":null",
                      stdout);
            }
            fputs(",\"args_mean_bytes\":", stdout);
            tool_put_json_double(w.args_mean);
            fputc('}', stdout);
        }
        fputs("]}\n", stdout);
    } else {
        printf("%10s %7s %12s %12s %11s %11s %11s %9s  %s\n", "count", "share",
               "first", "last", "gap_mean", "gap_p50", "gap_p99", "args_B",
               "qualname");
        RB_FOREACH(e, qtable, &ops) {
            row w = row_of(e, total);
            printf("%10" PRIu64 " %6.2f%% %12.6f %12.6f ", e->count, w.share,
                   e->first, e->last);
            if (w.have_gaps)
                printf("%11.6f %11.6f %11.6f", w.gap_mean, w.p50, w.p99);
            else
                printf("%11s %11s %11s", "-", "-", "-");
            printf(" %9.1f  ", w.args_mean);
            tool_put_vis(stdout, e->qualname.ptr, e->qualname.len);
            fputc('\n', stdout);
        }
        printf("total: %" PRIu64 " records, duration %.3fs, %.1f records/s\n",
               total, duration, rate);
    }
    tool_finish_stdout();
    qtable_free(&ops);
    tool_run_free(&run);
    lct_close(r);
    return rc;
}
