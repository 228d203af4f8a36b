/*
 * stat_spans.c - `lct stat --spans`: how long LMCache's paired calls
 * took (lct_spans pairs them, reading the records in order on one
 * thread): per span and stage the count, mean, nearest-rank p50, p90,
 * p99 and the largest, and the calls that paired with nothing.  Text,
 * --csv (the unpaired as rows unpaired.WHAT with their count) or --json.
 */
#include "tool.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define NKINDS LCT_SPAN_WRITE

typedef struct durations {
    double *v;
    size_t n, cap;
    double sum, max;
    double p[3]; /* p50, p90, p99 once percentiles() ran */
} durations;

typedef struct spans_run {
    lct_spans *spans;
    durations d[NKINDS + 1]; /* by kind */
    bool failed;
    tool_stat_select select;
    void *select_ctx;
} spans_run;

static spans_run run_ctx;

static void on_span(void *ctx, const lct_span *sp)
{
    spans_run *r = ctx;
    durations *d = &r->d[sp->kind];
    if (d->n == d->cap) {
        size_t cap = d->cap ? d->cap * 2 : 1024;
        double *grown = reallocarray(d->v, cap, sizeof *grown);
        if (!grown) {
            r->failed = true;
            return;
        }
        d->v = grown;
        d->cap = cap;
    }
    double t = sp->t_end - sp->t_start;
    d->v[d->n++] = t;
    d->sum += t;
    if (d->n == 1 || t > d->max)
        d->max = t;
}

static int spans_record(void *state, const lct_record *rec)
{
    (void)state;
    if (run_ctx.select && !run_ctx.select(run_ctx.select_ctx, rec))
        return 0;
    lct_error err;
    if (lct_spans_add(run_ctx.spans, rec, on_span, &run_ctx, &err) !=
        LCT_OK) {
        fprintf(stderr, "%s stat: %s\n", tool_name, err.message);
        return -1;
    }
    return run_ctx.failed ? -1 : 0;
}

static const unsigned pcts[] = {50, 90, 99};

/* The nearest-rank p50, p90 and p99 (as stat's gaps), by selection; the
 * durations become their order keys. */
static void percentiles(durations *d)
{
    uint64_t *k = (uint64_t *)(void *)d->v;
    uint64_t first = tool_order_key(d->v[0]), differ = 0;
    for (size_t i = 0; i < d->n; i++) {
        uint64_t key = tool_order_key(d->v[i]);
        differ |= key ^ first;
        memcpy(&k[i], &key, sizeof key);
    }
    int shift = tool_first_differing_byte(differ);
    uint64_t at[3];
    tool_select_two(k, d->n, shift, tool_nearest_rank(d->n, 90),
                    tool_nearest_rank(d->n, 99), &at[1], &at[2]);
    at[0] = tool_select_key(k, d->n, tool_nearest_rank(d->n, 50), shift);
    for (int i = 0; i < 3; i++)
        d->p[i] = tool_of_order_key(at[i]);
}

static double at_rank(const durations *d, unsigned p)
{
    return d->p[p == 50 ? 0 : p == 90 ? 1 : 2];
}

static void print_text(const spans_run *r, const lct_spans_unpaired *u)
{
    printf("%-17s %9s %11s %11s %11s %11s %11s\n", "span", "count", "mean",
           "p50", "p90", "p99", "max");
    for (int k = 1; k <= NKINDS; k++) {
        const durations *d = &r->d[k];
        printf("%-17s %9zu", lct_span_kind_name((lct_span_kind)k), d->n);
        if (!d->n) {
            printf(" %11s %11s %11s %11s %11s\n", "-", "-", "-", "-", "-");
            continue;
        }
        printf(" %11.6f", d->sum / (double)d->n);
        for (size_t i = 0; i < 3; i++)
            printf(" %11.6f", at_rank(d, pcts[i]));
        printf(" %11.6f\n", d->max);
    }
    printf("seconds; prefetch: submit to finish_read_prefetched, in stages "
           "wait (to the read's __enter__), read (to __exit__) and release "
           "(to finish_read_prefetched); write: reserve_write to "
           "finish_write\n");
    printf("unpaired: %" PRIu64 " submits never read, %" PRIu64
           " reads without a submit, %" PRIu64 " never exited, %" PRIu64
           " exits without a read, %" PRIu64 " never finished, %" PRIu64
           " finish_read_prefetched without an exit; %" PRIu64
           " reserve_write never finished, %" PRIu64
           " finish_write without a reserve\n",
           u->submit_never_read, u->enter_without_submit,
           u->enter_never_exited, u->exit_without_enter,
           u->exit_never_finished, u->finish_read_without_exit,
           u->reserve_never_finished, u->finish_write_without_reserve);
    if (u->without_keys || u->unreadable_keys)
        printf("passed over: %" PRIu64 " calls naming no key, %" PRIu64
               " whose keys could not be read\n",
               u->without_keys, u->unreadable_keys);
}

static void put_stat(const durations *d, double v)
{
    d->n ? tool_put_json_double(v) : (void)fputs("null", stdout);
}

static void print_json(const spans_run *r, const lct_spans_unpaired *u)
{
    fputs("{\"spans\":[", stdout);
    for (int k = 1; k <= NKINDS; k++) {
        const durations *d = &r->d[k];
        printf("%s{\"span\":\"%s\",\"count\":%zu,\"mean\":", k > 1 ? "," : "",
               lct_span_kind_name((lct_span_kind)k), d->n);
        put_stat(d, d->n ? d->sum / (double)d->n : 0);
        for (size_t i = 0; i < 3; i++) {
            printf(",\"p%u\":", pcts[i]);
            put_stat(d, d->n ? at_rank(d, pcts[i]) : 0);
        }
        fputs(",\"max\":", stdout);
        put_stat(d, d->max);
        putchar('}');
    }
    printf("],\"unpaired\":{\"submit_never_read\":%" PRIu64
           ",\"enter_without_submit\":%" PRIu64
           ",\"enter_never_exited\":%" PRIu64
           ",\"exit_without_enter\":%" PRIu64
           ",\"exit_never_finished\":%" PRIu64
           ",\"finish_read_without_exit\":%" PRIu64
           ",\"reserve_never_finished\":%" PRIu64
           ",\"finish_write_without_reserve\":%" PRIu64
           ",\"without_keys\":%" PRIu64 ",\"unreadable_keys\":%" PRIu64
           "}}\n",
           u->submit_never_read, u->enter_without_submit,
           u->enter_never_exited, u->exit_without_enter,
           u->exit_never_finished, u->finish_read_without_exit,
           u->reserve_never_finished, u->finish_write_without_reserve,
           u->without_keys, u->unreadable_keys);
}

static void print_csv(const spans_run *r, const lct_spans_unpaired *u)
{
    fputs("span,count,mean,p50,p90,p99,max\r\n", stdout);
    for (int k = 1; k <= NKINDS; k++) {
        const durations *d = &r->d[k];
        printf("%s,%zu", lct_span_kind_name((lct_span_kind)k), d->n);
        if (d->n) {
            putchar(',');
            tool_put_json_double(d->sum / (double)d->n);
            for (size_t i = 0; i < 3; i++) {
                putchar(',');
                tool_put_json_double(at_rank(d, pcts[i]));
            }
            putchar(',');
            tool_put_json_double(d->max);
        } else {
            fputs(",,,,,", stdout);
        }
        fputs("\r\n", stdout);
    }
    const struct {
        const char *name;
        uint64_t n;
    } left[] = {{"submit_never_read", u->submit_never_read},
                {"enter_without_submit", u->enter_without_submit},
                {"enter_never_exited", u->enter_never_exited},
                {"exit_without_enter", u->exit_without_enter},
                {"exit_never_finished", u->exit_never_finished},
                {"finish_read_without_exit", u->finish_read_without_exit},
                {"reserve_never_finished", u->reserve_never_finished},
                {"finish_write_without_reserve",
                 u->finish_write_without_reserve},
                {"without_keys", u->without_keys},
                {"unreadable_keys", u->unreadable_keys}};
    for (size_t i = 0; i < sizeof left / sizeof *left; i++)
        printf("unpaired.%s,%" PRIu64 ",,,,,\r\n", left[i].name, left[i].n);
}

bool tool_stat_spans(tool_inputs *in, const tool_args *a,
                     tool_stat_select select, void *select_ctx,
                     lct_stats *st)
{
    run_ctx = (spans_run){.select = select, .select_ctx = select_ctx};
    if (lct_spans_new(&run_ctx.spans, NULL) != LCT_OK) {
        fprintf(stderr, "%s stat: out of memory\n", tool_name);
        return false;
    }
    tool_run run;
    /* pairs form in the order of the calls: one thread */
    bool ok = tool_records_in(in, 1, a->quiet, sizeof(int), spans_record,
                              NULL, a->quiet ? tool_log_quiet : tool_log,
                              NULL, &run);
    *st = run.stats;
    tool_run_free(&run);
    lct_spans_unpaired u;
    lct_spans_unpaired_get(run_ctx.spans, &u);
    for (int k = 1; ok && k <= NKINDS; k++)
        if (run_ctx.d[k].n)
            percentiles(&run_ctx.d[k]);
    if (ok && a->json)
        print_json(&run_ctx, &u);
    else if (ok && a->csv)
        print_csv(&run_ctx, &u);
    else if (ok)
        print_text(&run_ctx, &u);
    for (int k = 0; k <= NKINDS; k++)
        free(run_ctx.d[k].v);
    lct_spans_free(run_ctx.spans);
    return ok;
}
