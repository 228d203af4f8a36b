/*
 * sim_text.c - lct sim's text report: LMCache's `cache-simulator`
 * print_statistics (simulator.py) line for line, its labels, em dashes,
 * thousands separators and Python's rounding of percentages, with an
 * L1's section after the aggregate when there is one.
 */
#include "tool.h"
#include "sim.h"

#include <inttypes.h>
#include <stdio.h>

static const char *const SEP =
    "============================================================";

static void heading(const char *title)
{
    printf("\n%s\n%s\n%s\n", SEP, title, SEP);
}

/* 1234567 as 1,234,567, as Python's {:,} */
static void put_count(uint64_t v)
{
    char digits[32];
    int n = snprintf(digits, sizeof digits, "%" PRIu64, v);
    for (int i = 0; i < n; i++) {
        if (i && (n - i) % 3 == 0)
            putchar(',');
        putchar(digits[i]);
    }
}

/* x as Python's {:.Nf%} prints it: the ratio times 100, then rounded */
static void put_pct(int decimals, double ratio)
{
    printf("%.*f%%", decimals, ratio * 100.0);
}

static double ratio(uint64_t part, uint64_t whole)
{
    return whole ? (double)part / (double)whole : 0;
}

/* A distribution's lines: the mean, the max (with_max), the percentiles;
 * labels padded as LMCache's f-strings pad them (`width` columns before
 * the colon). */
static void dist_lines(int width, const char *mean_label,
                       const lct_sim_dist *d, const char *max_label)
{
    printf("  %-*s: %.1f\n", width, mean_label, d->mean);
    if (max_label) {
        printf("  %-*s: ", width, max_label);
        put_count(d->max);
        putchar('\n');
    }
    const uint64_t p[] = {d->p25, d->p50, d->p75, d->p90, d->p99};
    const char *names[] = {"p25", "p50", "p75", "p90", "p99"};
    for (int i = 0; i < 5; i++)
        printf("  %-*s: %" PRIu64 "\n", width, names[i], p[i]);
}

static void print_aggregate(const lct_sim_report *r, bool tokens)
{
    printf("%s\nAggregate\n%s\n", SEP, SEP);
    printf("  Requests processed  : ");
    put_count(r->calls);
    if (tokens) {
        printf("\n  Total tokens        : ");
        put_count(r->tokens);
        printf("\n  Hit tokens          : ");
        put_count(r->hit_tokens);
        printf("\n  Miss tokens         : ");
        put_count(r->tokens - r->hit_tokens);
    } else {
        printf("\n  Total chunks        : ");
        put_count(r->positions);
        printf("  (no chunk size: --chunk-size N gives tokens)\n"
               "  Hit chunks          : ");
        put_count(r->positions_hit);
    }
    printf("\n  Token hit rate      : ");
    put_pct(2, ratio(r->hit_tokens, r->tokens));
    /* LMCache states the capacity in GiB; a capacity in keys is that
     * many keys of the first sized key's bytes */
    double bytes = r->in_bytes ? (double)r->capacity
                               : (double)r->capacity * (double)r->key_bytes;
    printf("\n  Cache capacity      : %.2f GiB  (", bytes / 1073741824.0);
    put_count(r->capacity_keys);
    printf(" chunks \u00d7 ");
    put_count(r->key_bytes);
    printf(" bytes/chunk)\n  Cache occupancy     : ");
    put_count(r->occupancy_keys);
    printf(" / ");
    put_count(r->capacity_keys);
    printf(" chunks\n");
}

double tool_sim_both_rate(const lct_sim_report *r, const lct_l1_stats *l1)
{
    return l1->positions ? (double)(l1->positions_hit + r->positions_hit) /
                               (double)l1->positions : 0;
}

static void print_l1(const lct_sim_report *r, const lct_l1_stats *l1)
{
    heading("L1 in front (the cache above is the L2 behind it)");
    printf("  L1 capacity        : ");
    if (l1->in_bytes)
        printf("%.2f GiB\n", (double)l1->capacity / 1073741824.0);
    else
        printf("%" PRIu64 " keys\n", l1->capacity);
    printf("  L1 served          : %" PRIu64 " of %" PRIu64 " chunks (%.2f%%)\n"
           "  Asked of L2        : %" PRIu64 " keys, %" PRIu64 " stores "
           "written through\n  Both tiers         : %.2f%% token hit rate\n",
           l1->positions_hit, l1->positions,
           l1->positions ? 100.0 * (double)l1->positions_hit /
                               (double)l1->positions : 0,
           l1->keys_to_l2, l1->writes, 100 * tool_sim_both_rate(r, l1));
}

static void print_requests(const lct_sim_report *r)
{
    heading("Stat 1 \u2014 Per-request token hit rate distribution");
    printf("  Requests with 0%% hit rate   : ");
    put_count(r->calls_no_hit);
    printf(" (");
    put_pct(1, ratio(r->calls_no_hit, r->calls));
    printf(")\n  Requests with 100%% hit rate : ");
    put_count(r->calls_all_hit);
    printf(" (");
    put_pct(1, ratio(r->calls_all_hit, r->calls));
    printf(")\n  Mean                        : ");
    put_pct(2, r->call_hit_mean);
    const char *names[] = {"p25", "p50", "p75", "p90", "p99"};
    for (int i = 0; i < 5; i++) {
        printf("\n  %-4s                        : ", names[i]);
        put_pct(2, r->call_hit_p[i]);
    }
    putchar('\n');
    heading("Stat 2 \u2014 Hit prefix length per request (chunks)");
    dist_lines(19, "Mean", &r->leading, NULL);
}

/* LMCache's print_statistics, line for line (its labels, em dashes and
 * thousands separators), the L1's section added after the aggregate. */
void tool_sim_text(const lct_sim_report *r, bool tokens,
                   const lct_l1_stats *l1)
{
    print_aggregate(r, tokens);
    if (l1)
        print_l1(r, l1);
    if (r->calls)
        print_requests(r);
    if (r->reuse.count) {
        heading("Stat 3 \u2014 Chunk reuse count distribution");
        printf("  Unique chunks hit at least once : ");
        put_count(r->reuse.count);
        putchar('\n');
        dist_lines(32, "Mean reuse count", &r->reuse, "Max reuse count");
    }
    if (r->calls) {
        heading("Stat 4 \u2014 Rolling (cumulative) token hit rate over "
                "time");
        for (int i = 0; i < 5; i++) {
            char n[32];
            int len = 0;
            for (uint64_t v = r->cumulative_calls[i], d = 0; v || !len;
                 v /= 10, d++) {
                if (d && d % 3 == 0)
                    n[len++] = ',';
                n[len++] = (char)('0' + v % 10);
            }
            printf("  After request %*s", len < 6 ? 6 - len : 0, "");
            while (len)
                putchar(n[--len]);
            printf(" : ");
            put_pct(2, r->cumulative[i]);
            putchar('\n');
        }
    }
    heading("Stat 5 \u2014 Evictions");
    printf("  Total evictions    : ");
    put_count(r->evictions);
    putchar('\n');
    if (r->refused) { /* LMCache's L1 policies: a call that did not fit */
        printf("  Keys refused       : ");
        put_count(r->refused);
        printf(" (a call's new keys did not fit)\n");
    }
    if (r->span.count) {
        heading("Stat 6 \u2014 Global span distribution (chunks between "
                "last store and hit)");
        printf("  Total hit chunks   : ");
        put_count(r->span.count);
        putchar('\n');
        dist_lines(19, "Mean span", &r->span, "Max span");
    }
    if (r->lru_position.count) {
        heading("Stat 7 \u2014 Cache position at hit (0 = MRU, max = LRU)");
        dist_lines(19, "Mean position", &r->lru_position, "Max position");
    }
    printf("%s\n", SEP);
}


/* MARK: --window and several capacities */

static double token_rate(uint64_t hit, uint64_t tokens)
{
    return tokens ? (double)hit / (double)tokens : 0;
}

void tool_sim_windows_text(const lct_sim_report *r, uint32_t window)
{
    printf("\nToken hit rate per %" PRIu32 " s of t_mono (windows with "
           "lookups):\n%10s %10s %10s %14s %14s %9s\n", window, "start_s",
           "end_s", "requests", "tokens", "hit_tokens", "hit_rate");
    for (size_t i = 0; i < r->nwindows; i++) {
        const lct_sim_window *w = &r->windows[i];
        printf("%10" PRIu64 " %10" PRIu64 " %10" PRIu64 " %14" PRIu64
               " %14" PRIu64 " %8.2f%%\n",
               w->t_start, w->t_start + window, w->calls, w->tokens,
               w->hit_tokens, 100 * token_rate(w->hit_tokens, w->tokens));
    }
}

void tool_sim_windows_csv(const lct_sim_report *r, uint32_t window)
{
    fputs("start_s,end_s,requests,tokens,hit_tokens,token_hit_rate\r\n",
          stdout);
    for (size_t i = 0; i < r->nwindows; i++) {
        const lct_sim_window *w = &r->windows[i];
        printf("%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64
               ",", w->t_start, w->t_start + window, w->calls, w->tokens,
               w->hit_tokens);
        tool_put_json_double(token_rate(w->hit_tokens, w->tokens));
        fputs("\r\n", stdout);
    }
}

void tool_sim_windows_json(const lct_sim_report *r, uint32_t window)
{
    for (size_t i = 0; i < r->nwindows; i++) {
        const lct_sim_window *w = &r->windows[i];
        printf("%s{\"start_s\":%" PRIu64 ",\"end_s\":%" PRIu64
               ",\"requests\":%" PRIu64 ",\"tokens\":%" PRIu64
               ",\"hit_tokens\":%" PRIu64 ",\"token_hit_rate\":",
               i ? "," : "", w->t_start, w->t_start + window, w->calls,
               w->tokens, w->hit_tokens);
        tool_put_json_double(token_rate(w->hit_tokens, w->tokens));
        putchar('}');
    }
}

/* One capacity's row: what the report's summary says. */
static void capacity_json(const lct_sim_report *r, const char *name,
                          bool tokens, bool first)
{
    printf("%s{\"capacity\":\"%s\",\"capacity_unit\":\"%s\","
           "\"capacity_value\":%" PRIu64 ",\"capacity_keys\":%" PRIu64
           ",\"requests\":%" PRIu64, first ? "" : ",", name,
           r->in_bytes ? "bytes" : "keys", r->capacity, r->capacity_keys,
           r->calls);
    if (tokens)
        printf(",\"tokens\":%" PRIu64 ",\"hit_tokens\":%" PRIu64,
               r->tokens, r->hit_tokens);
    printf(",\"chunks\":%" PRIu64 ",\"hit_chunks\":%" PRIu64
           ",\"token_hit_rate\":", r->positions, r->positions_hit);
    tool_put_json_double(token_rate(r->hit_tokens, r->tokens));
    if (r->has_l1) {
        fputs(",\"both_token_hit_rate\":", stdout);
        tool_put_json_double(tool_sim_both_rate(r, &r->l1));
    }
    printf(",\"evictions\":%" PRIu64 ",\"occupancy_keys\":%" PRIu64 "}",
           r->evictions, r->occupancy_keys);
}

void tool_sim_capacities(const tool_args *a, const lct_sim_report *r,
                         const char *const *names, size_t n, bool tokens)
{
    bool l1 = r[0].has_l1;
    if (a->json) {
        fputs("{\"capacities\":[", stdout);
        for (size_t i = 0; i < n; i++)
            capacity_json(&r[i], names[i], tokens, i == 0);
        fputs("]}\n", stdout);
        return;
    }
    if (a->csv)
        printf("capacity,capacity_keys,requests,tokens,hit_tokens,chunks,"
               "hit_chunks,token_hit_rate%s,evictions,occupancy_keys\r\n",
               l1 ? ",both_token_hit_rate" : "");
    else
        printf("%12s %13s %10s %14s %14s %9s%s %11s\n", "capacity",
               "capacity_keys", "requests", tokens ? "tokens" : "chunks",
               tokens ? "hit_tokens" : "hit_chunks", "hit_rate",
               l1 ? "  both_tiers" : "", "evictions");
    for (size_t i = 0; i < n; i++) {
        const lct_sim_report *x = &r[i];
        double rate = token_rate(x->hit_tokens, x->tokens);
        if (a->csv) {
            printf("%s,%" PRIu64 ",%" PRIu64 ",", names[i], x->capacity_keys,
                   x->calls);
            if (tokens)
                printf("%" PRIu64 ",%" PRIu64, x->tokens, x->hit_tokens);
            else
                putchar(',');
            printf(",%" PRIu64 ",%" PRIu64 ",", x->positions,
                   x->positions_hit);
            tool_put_json_double(rate);
            if (l1) {
                putchar(',');
                tool_put_json_double(tool_sim_both_rate(x, &x->l1));
            }
            printf(",%" PRIu64 ",%" PRIu64 "\r\n", x->evictions,
                   x->occupancy_keys);
            continue;
        }
        printf("%12s %13" PRIu64 " %10" PRIu64 " %14" PRIu64 " %14" PRIu64
               " %8.2f%%", names[i], x->capacity_keys, x->calls,
               tokens ? x->tokens : x->positions,
               tokens ? x->hit_tokens : x->positions_hit, 100 * rate);
        if (l1)
            printf("      %5.2f%%", 100 * tool_sim_both_rate(x, &x->l1));
        printf(" %11" PRIu64 "\n", x->evictions);
    }
}
