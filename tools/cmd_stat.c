/*
 * cmd_stat.c - `lct stat`: per qualname, count, share, first and last
 * t_mono, inter-arrival gap mean/p50/p99 and mean args size; overall
 * records, duration and rate.  Text table, --csv or --json.
 *
 * Percentiles are nearest-rank as `lmcache trace replay` computes them:
 * the sorted samples' index ceil(p*n/100) - 1 in integer arithmetic
 * (found by selection, without sorting: select.c).
 */
#include "l2_level.h"
#include "tool.h"

#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/*
 * Every qualname's gap mean and percentiles.  The mean is summed in file
 * order, which is the gathered order on any number of threads (each
 * thread's gaps, the seam's between them), so it is the same to the bit
 * whatever -j.  The gaps become their keys in place: they are not read
 * again.
 */
static void summarise_gaps(struct qtable *ops)
{
    qentry *e;
    RB_FOREACH(e, qtable, ops) {
        if (!e->ngaps)
            continue;
        double sum = 0;
        uint64_t *keys = (uint64_t *)(void *)e->gaps;
        uint64_t first = tool_order_key(e->gaps[0]), differ = 0;
        for (size_t i = 0; i < e->ngaps; i++) {
            double gap = e->gaps[i];
            uint64_t key = tool_order_key(gap);
            sum += gap;
            differ |= key ^ first;
            memcpy(&keys[i], &key, sizeof key); /* a double's storage */
        }
        e->gap_mean = sum / (double)e->ngaps;
        uint64_t p50, p99;
        tool_select_two(keys, e->ngaps, tool_first_differing_byte(differ),
                   tool_nearest_rank(e->ngaps, 50), tool_nearest_rank(e->ngaps, 99),
                   &p50, &p99);
        e->gap_p50 = tool_of_order_key(p50);
        e->gap_p99 = tool_of_order_key(p99);
    }
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
    if (e->ngaps) { /* summarise_gaps ran */
        r.gap_mean = e->gap_mean;
        r.p50 = e->gap_p50;
        r.p99 = e->gap_p99;
        r.have_gaps = true;
    }
    return r;
}

static void help(void)
{
    printf("usage: lct stat [--csv | --json] [-q] [-j N] [--qualname NAME]\n"
           "                [--since T] [--until T] [--range A:B]\n"
           "                [--spans | --sort count|name|gap] FILE...\n"
           "\n"
           "Per qualname: count, share of records, first and last t_mono,\n"
           "inter-arrival gap mean/p50/p99 (seconds, nearest-rank), the\n"
           "largest gap and the offset of the record that ends it, mean args\n"
           "size in bytes; then overall records, duration (largest t_mono),\n"
           "rate, frames skipped and a cut tail.  Records whose t_mono goes\n"
           "back are counted (their gaps are negative).  FILE may be -.\n"
           "Several FILEs are merged by t_wall, read by one thread, and\n"
           "t_mono becomes the seconds since the first record's t_wall (a\n"
           "file's own t_mono is its process's clock); --range takes one.\n"
           "\n"
           "  --qualname NAME  only this qualname: exact, a suffix after a dot,\n"
           "                   or a glob (repeatable: any match)\n"
           "  --since T        only records with t_mono >= T seconds, or\n"
           "                   t_wall >= T for a UTC time (2026-12-01T10:00:00Z)\n"
           "  --until T        only records with t_mono (t_wall) <= T\n"
           "  --range A:B      records A to before B by number, from 0, as\n"
           "                   dump takes it (read with one thread)\n"
           "  --sort KEY       rows by name (default), count (most first) or\n"
           "                   gap (largest mean gap first)\n"
           "  --spans          instead, how long paired calls took: a prefetch\n"
           "                   from submit_prefetch_task through the read's\n"
           "                   __enter__ and __exit__ to finish_read_prefetched\n"
           "                   (and each stage), a write from reserve_write to\n"
           "                   finish_write; paired by their keys, first in\n"
           "                   first out per key tuple, as LMCache's replay\n"
           "                   pairs its read contexts (read with one thread);\n"
           "                   count, mean, p50, p90, p99, max, and the calls\n"
           "                   that paired with nothing\n"
           "  --csv            comma-separated values with a header row\n"
           "  --json           one JSON object\n"
           "  -q               no warnings on stderr\n"
           "  -j N             threads (default: one per usable CPU for files over 64 MiB)\n"
           "  --mmap, --stream how to read a file (default: the faster here)\n"
           "  --max-frame SIZE the longest frame a pipe may hold (256M)\n"
           "  -h, --help       this text\n");
}

/* The run, as the printers need it. */
typedef struct stat_view {
    struct qtable *ops;
    qentry **order; /* the rows in --sort's order */
    size_t nrows;
    uint64_t total, backwards;
    double duration, rate;
    lct_stats st;
} stat_view;

static void print_csv(const stat_view *v)
{
    fputs("qualname,op,count,share,first_t_mono,last_t_mono,gap_mean,gap_p50,"
          "gap_p99,gap_max,gap_max_offset,backwards,args_mean_bytes,skipped,"
          "truncated\r\n",
          stdout);
    for (size_t i = 0; i < v->nrows; i++) {
        qentry *e = v->order[i];
        row w = row_of(e, v->total);
        tool_put_csv(stdout, e->qualname.ptr, e->qualname.len);
        lct_str op = lct_str_after_last(e->qualname, '.');
        fputc(',', stdout);
        tool_put_csv(stdout, op.ptr, op.len);
        printf(",%" PRIu64 ",%.6f,%.9g,%.9g,", e->count, w.share / 100.0,
               e->first, e->last);
        if (w.have_gaps)
            printf("%.9g,%.9g,%.9g,%.9g,%" PRIu64, w.gap_mean, w.p50, w.p99,
                   e->gap_max, e->gap_max_offset);
        else
            fputs(",,,,", stdout);
        printf(",%" PRIu64 ",%.1f,%" PRIu64 ",%s\r\n", e->backwards,
               w.args_mean, v->st.skipped, v->st.truncated ? "true" : "false");
    }
}

static void json_field(const char *name, double d)
{
    printf(",\"%s\":", name);
    tool_put_json_double(d);
}

static void print_json_op(qentry *e, uint64_t total, bool first)
{
    row w = row_of(e, total);
    fputs(first ? "{\"qualname\":" : ",{\"qualname\":", stdout);
    tool_put_json_str(e->qualname.ptr, e->qualname.len);
    lct_str op = lct_str_after_last(e->qualname, '.');
    fputs(",\"op\":", stdout);
    tool_put_json_str(op.ptr, op.len);
    printf(",\"count\":%" PRIu64, e->count);
    json_field("share", w.share / 100.0);
    json_field("first_t_mono", e->first);
    json_field("last_t_mono", e->last);
    if (w.have_gaps) {
        json_field("gap_mean", w.gap_mean);
        json_field("gap_p50", w.p50);
        json_field("gap_p99", w.p99);
        json_field("gap_max", e->gap_max);
        printf(",\"gap_max_offset\":%" PRIu64, e->gap_max_offset);
    } else {
        fputs(",\"gap_mean\":null,\"gap_p50\":null,\"gap_p99\":null,"
              "\"gap_max\":null,\"gap_max_offset\":null",
              stdout);
    }
    printf(",\"backwards\":%" PRIu64, e->backwards);
    json_field("args_mean_bytes", w.args_mean);
    fputc('}', stdout);
}

static void print_json(const stat_view *v)
{
    printf("{\"records\":%" PRIu64, v->total);
    json_field("duration", v->duration);
    json_field("rate", v->rate);
    printf(",\"skipped\":%" PRIu64 ",\"truncated\":%s", v->st.skipped,
           v->st.truncated ? "true" : "false");
    if (v->st.truncated)
        printf(",\"truncated_offset\":%" PRIu64, v->st.truncated_offset);
    printf(",\"backwards\":%" PRIu64 ",\"ops\":[", v->backwards);
    for (size_t i = 0; i < v->nrows; i++)
        print_json_op(v->order[i], v->total, i == 0);
    fputs("]}\n", stdout);
}

/* Whether every qualname's short name is its own in this table: then
 * the text shows those (LMCache's qualnames are 70+ characters). */
static bool ops_unambiguous(const stat_view *v)
{
    qentry *a, *b;
    RB_FOREACH(a, qtable, v->ops)
    RB_FOREACH(b, qtable, v->ops)
    if (a != b && lct_str_cmp(lct_str_after_last(a->qualname, '.'),
                              lct_str_after_last(b->qualname, '.')) == 0)
        return false;
    return true;
}

static void print_text(const stat_view *v)
{
    bool short_names = ops_unambiguous(v);
    /* The names of the CSV and JSON columns, one name for each fact. */
    printf("%10s %7s %12s %12s %11s %11s %11s %11s %15s  %s\n", "count",
           "share", "first_t_mono", "last_t_mono", "gap_mean", "gap_p50",
           "gap_p99", "gap_max", "args_mean_bytes",
           short_names ? "op" : "qualname");
    for (size_t i = 0; i < v->nrows; i++) {
        qentry *e = v->order[i];
        row w = row_of(e, v->total);
        printf("%10" PRIu64 " %6.2f%% %12.6f %12.6f ", e->count, w.share,
               e->first, e->last);
        if (w.have_gaps)
            printf("%11.6f %11.6f %11.6f %11.6f", w.gap_mean, w.p50, w.p99,
                   e->gap_max);
        else
            printf("%11s %11s %11s %11s", "-", "-", "-", "-");
        printf(" %15.1f  ", w.args_mean);
        lct_str name = short_names ? lct_str_after_last(e->qualname, '.')
                                   : e->qualname;
        tool_put_vis(stdout, name.ptr, name.len);
        fputc('\n', stdout);
    }
    printf("total: %" PRIu64 " records, duration %.3fs, %.1f records/s\n",
           v->total, v->duration, v->rate);
    if (v->st.skipped || v->st.truncated)
        printf("damaged: %" PRIu64 " frames skipped, %s\n", v->st.skipped,
               v->st.truncated ? "tail cut short" : "tail whole");
    if (v->backwards)
        printf("note: %" PRIu64 " records have a t_mono below their "
               "qualname's previous one; their gaps are negative and count "
               "in the percentiles\n",
               v->backwards);
}

/* --qualname, --since, --until: read by every thread, never written. */
typedef struct stat_filter {
    tool_patterns qualnames;
    tool_window window;
    tool_range range;
    uint64_t idx; /* with --range (one thread): the record's number */
} stat_filter;

static stat_filter filter;

enum { OPT_QUALNAME = 300, OPT_SINCE, OPT_UNTIL, OPT_RANGE, OPT_SPANS,
       OPT_SORT };

/* --spans and --sort: how the run reports. */
static struct {
    bool spans, sorted;
    enum { SORT_NAME, SORT_COUNT, SORT_GAP } sort;
} report;

static void stat_option(void *ctx, int c, const char *arg)
{
    stat_filter *f = ctx;
    if (c == OPT_QUALNAME) {
        f->qualnames.text[f->qualnames.n++] = arg;
    } else if (c == OPT_SINCE || c == OPT_UNTIL) {
        tool_window_set(&f->window, "stat", c == OPT_UNTIL, arg);
    } else if (c == OPT_RANGE) {
        tool_range_set(&f->range, "stat", arg);
    } else if (c == OPT_SPANS) {
        report.spans = true;
    } else if (c == OPT_SORT) {
        report.sorted = true;
        if (strcmp(arg, "name") == 0)
            report.sort = SORT_NAME;
        else if (strcmp(arg, "count") == 0)
            report.sort = SORT_COUNT;
        else if (strcmp(arg, "gap") == 0)
            report.sort = SORT_GAP;
        else
            tool_usage_error("stat", "--sort is count, name or gap, not "
                             "'%s'", arg);
    }
}

static bool stat_selects(void *ctx, const lct_record *rec)
{
    (void)ctx;
    if (filter.range.set && !tool_range_holds(&filter.range, filter.idx++))
        return false;
    return tool_window_holds(&filter.window, rec) &&
           tool_qualname_selects(&filter.qualnames, rec->qualname);
}

static int stat_record(void *state, const lct_record *rec)
{
    return stat_selects(NULL, rec) ? tool_tally_gaps(state, rec) : 0;
}

/* Which patterns selected a record, from the table (not counted by the
 * threads, which share the patterns). */
static void report_unmatched(struct qtable *ops)
{
    qentry *e;
    RB_FOREACH(e, qtable, ops)
        (void)tool_qualname_wanted(&filter.qualnames, e->qualname);
    tool_patterns_report(&filter.qualnames, "stat", "--qualname");
}

/* Most first; ties by name (the table's own order, kept by a stable
 * comparison on it). */
static int by_count(const void *a, const void *b)
{
    const qentry *x = *(qentry *const *)a, *y = *(qentry *const *)b;
    if (x->count != y->count)
        return x->count < y->count ? 1 : -1;
    return lct_str_cmp(x->qualname, y->qualname);
}

/* Largest mean gap first; qualnames seen once (no gap) last. */
static int by_gap(const void *a, const void *b)
{
    const qentry *x = *(qentry *const *)a, *y = *(qentry *const *)b;
    if ((x->ngaps > 0) != (y->ngaps > 0))
        return x->ngaps ? -1 : 1;
    if (x->ngaps && x->gap_mean != y->gap_mean)
        return x->gap_mean < y->gap_mean ? 1 : -1;
    return lct_str_cmp(x->qualname, y->qualname);
}

/* The rows in --sort's order (by name: the table's). */
static bool sort_rows(stat_view *v)
{
    qentry *e;
    RB_FOREACH(e, qtable, v->ops)
        v->nrows++;
    v->order = reallocarray(NULL, v->nrows ? v->nrows : 1,
                            sizeof *v->order);
    if (!v->order) {
        fprintf(stderr, "%s stat: out of memory\n", tool_name);
        return false;
    }
    size_t i = 0;
    RB_FOREACH(e, qtable, v->ops)
        v->order[i++] = e;
    if (report.sort != SORT_NAME)
        qsort(v->order, v->nrows, sizeof *v->order,
              report.sort == SORT_COUNT ? by_count : by_gap);
    return true;
}

/* An L2-level trace: its tasks per adapter and kind, read in order by
 * one thread into this. */
static tool_l2 l2_tasks;

static int l2_record(void *state, const lct_record *rec)
{
    if (!stat_selects(NULL, rec))
        return 0;
    if (tool_tally_counts(state, rec) != 0)
        return 1;
    tool_l2_add(&l2_tasks, rec);
    return l2_tasks.failed ? 1 : 0;
}

static int run_l2(tool_inputs *in, tool_args *a)
{
    tool_tally t;
    lct_stats st;
    a->jobs = 1; /* a completion pairs with the submission before it */
    tool_l2_init(&l2_tasks);
    bool ok = tool_tally_run(in, a, sizeof t, l2_record, false, &t, &st);
    if (ok) {
        tool_l2_finish(&l2_tasks);
        tool_l2_print_stat(&l2_tasks, a->json, a->csv);
    }
    tool_finish_stdout();
    tool_l2_free(&l2_tasks);
    tool_tally_free(&t);
    tool_inputs_close(in);
    free(filter.qualnames.text);
    free(filter.qualnames.hits);
    return ok ? tool_exit_for(&st) : EXIT_REFUSED;
}

/* --spans: the paired calls' durations instead of the table. */
static int run_spans(tool_inputs *in, const tool_args *a)
{
    lct_stats st = {0};
    bool ok = tool_stat_spans(in, a, stat_selects, NULL, &st);
    tool_finish_stdout();
    tool_inputs_close(in);
    free(filter.qualnames.text);
    free(filter.qualnames.hits);
    return ok ? tool_exit_for(&st) : EXIT_REFUSED;
}

int cmd_stat(int argc, char **argv)
{
    static const struct option own[] = {
        {"qualname", required_argument, NULL, OPT_QUALNAME},
        {"since", required_argument, NULL, OPT_SINCE},
        {"until", required_argument, NULL, OPT_UNTIL},
        {"range", required_argument, NULL, OPT_RANGE},
        {"spans", no_argument, NULL, OPT_SPANS},
        {"sort", required_argument, NULL, OPT_SORT},
        {NULL, 0, NULL, 0}};
    filter.qualnames.text = reallocarray(NULL, (size_t)argc, sizeof(char *));
    filter.qualnames.hits = calloc((size_t)argc, sizeof(uint64_t));
    if (!filter.qualnames.text || !filter.qualnames.hits)
        return EXIT_REFUSED;
    tool_cmd cmd = {.name = "stat",
                    .shared = TOOL_Q | TOOL_J | TOOL_JSON | TOOL_CSV |
                              TOOL_SRC,
                    .own = own, .on_option = stat_option, .ctx = &filter,
                    .help = help, .min_operands = 1};
    tool_args a;
    tool_parse_args(&cmd, argc, argv, &a);
    tool_inputs in;
    /* --spans reads every paired call's keys: the validating walk hands
     * them over */
    if (!tool_inputs_open(&in, &a,
                          tool_source_flags(&a) |
                              (report.spans ? LCT_KEYS : 0),
                          true))
        return EXIT_REFUSED;
    tool_inputs_one_file(&in, "stat", "--range", filter.range.set);
    tool_range_start(&filter.range, in.r, "stat", a.quiet, false);
    if (filter.range.set) /* numbers are known only in order: one thread */
        a.jobs = 1;
    if (report.spans && report.sorted)
        tool_usage_error("stat", "--sort orders the table; --spans prints "
                         "spans instead");
    bool l2 = lct_str_eq(lct_reader_header(in.r)->level, "l2");
    if (l2 && (report.spans || report.sorted))
        tool_usage_error("stat", "an L2-level trace's table is its tasks "
                         "per adapter: --spans and --sort are for storage "
                         "traces");
    if (l2)
        return run_l2(&in, &a);
    if (report.spans)
        return run_spans(&in, &a);
    tool_tally t;
    stat_view v = {.ops = &t.ops};
    bool ok = tool_tally_run(&in, &a, sizeof t, stat_record, true, &t, &v.st);
    v.total = t.total;
    v.duration = t.duration;
    v.rate = t.duration > 0 ? (double)t.total / t.duration : 0;
    qentry *e;
    RB_FOREACH(e, qtable, &t.ops)
        v.backwards += e->backwards;
    if (ok)
        summarise_gaps(&t.ops);
    ok = ok && sort_rows(&v);
    if (ok && a.csv)
        print_csv(&v);
    else if (ok && a.json)
        print_json(&v);
    else if (ok)
        print_text(&v);
    if (ok && !a.quiet)
        report_unmatched(&t.ops);
    tool_finish_stdout();
    free(v.order);
    tool_tally_free(&t);
    tool_inputs_close(&in);
    free(filter.qualnames.text);
    free(filter.qualnames.hits);
    return ok ? tool_exit_for(&v.st) : EXIT_REFUSED;
}
